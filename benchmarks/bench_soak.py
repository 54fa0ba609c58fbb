#!/usr/bin/env python3
"""
Soak benchmark of the spart_dynamics node: memory and message loss over a long run.

Starts the INSTALLED dynamics_node (7-DoF arm on a floating base,
test/data/urdf/arm7_floating.urdf)
as its own process with its default QoS, then for ``--seconds`` (default 600):
joint_states at 1 kHz and odometry at 100 Hz from another process (bench_node_latency's
publisher: each message stamped with the wall clock at publication), and forward/inverse dynamics
service calls (``use_current_state``) at 10 Hz from this process, which also receives
``~/jacobians``.  It samples the node's resident memory (VmRSS) every second.

    source scripts/env.sh
    python benchmarks/bench_soak.py [--seconds 600] [--warmup 30] [--load N]

Reports: joint_states published vs Jacobians received (a joint state with no answer is lost:
in DDS before the callback, or dropped by the node), service calls answered, the node's RSS
after warm-up and at the end (growth), and its peak.  Targets (hardening issue): RSS growth
< 1 MB after warm-up and no joint_states lost on an idle machine; with ``--load N`` (N busy
processes) the loss is printed.  Exits 1 when a target is missed on an idle run.
"""

import argparse
import gc
import multiprocessing
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'test'))
sys.path.insert(0, os.path.join(ROOT, 'benchmarks'))

from bench_node_latency import (  # noqa: E402,E501
    burn,
    DEFAULT_URDF,
    publisher,
    qos,
    READY,
    shut_down,
    spin_for,
    STAMP,
)
from node_helpers import start_node  # noqa: E402
import numpy as np  # noqa: E402
import rclpy  # noqa: E402
from rclpy.qos import ReliabilityPolicy  # noqa: E402
from spart_interfaces.msg import Jacobians  # noqa: E402
from spart_interfaces.srv import ForwardDynamics, InverseDynamics  # noqa: E402


def rss_kib(pid):
    """Resident memory of process ``pid`` in KiB (VmRSS), NaN if gone."""
    try:
        with open(f'/proc/{pid}/status') as f:
            for line in f:
                if line.startswith('VmRSS:'):
                    return float(line.split()[1])
    except OSError:
        pass
    return float('nan')


def main():
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument('--seconds', type=float, default=600.0, help='measured duration (default 600)')
    ap.add_argument(
        '--warmup',
        type=float,
        default=30.0,
        help='seconds before the memory baseline (default 30)',
    )
    ap.add_argument(
        '--rate', type=float, default=1000.0, help='joint_states per second (default 1000)'
    )
    ap.add_argument(
        '--service-rate', type=float, default=10.0, help='service calls per second (default 10)'
    )
    ap.add_argument(
        '--load', type=int, default=0, metavar='N', help='N processes keeping a core busy'
    )
    ap.add_argument('--urdf', default=DEFAULT_URDF)
    args = ap.parse_args()

    from spart_ros.core.urdf import robot_from_urdf

    robot, _ = robot_from_urdf(args.urdf)
    names = list(robot.q_names)
    # the node's defaults for everything that matters here (QoS depth, reliability, executor)
    params = {
        'urdf_path': os.path.abspath(args.urdf),
        'base': 'floating',
        'robot_description_topic': '',
        'jacobian_links': [robot.link_names[-1]],
    }
    ns = f'/soak_{os.getpid()}'
    total = args.warmup + args.seconds
    n_total = int(total * args.rate)

    ctx = multiprocessing.get_context('spawn')
    go = ctx.Event()
    recv_end, send_end = ctx.Pipe(duplex=False)
    pub_proc = ctx.Process(
        target=publisher,
        args=(ns, names, robot.base_link.name, args.rate, n_total, go, send_end),
        daemon=True,
    )
    proc = start_node(
        'spart_ros',
        'dynamics_node',
        namespace=ns,
        parameters=params,
        wait_for=READY,
        wait_timeout=120.0,
    )
    rclpy.init()
    node = rclpy.create_node('soak_receiver', namespace=ns)
    received = {}

    def on_jacobians(data):
        sec, nanosec = STAMP.unpack_from(data, 4)
        received[sec * 1_000_000_000 + nanosec] = True

    node.create_subscription(
        Jacobians,
        f'{ns}/spart_dynamics/jacobians',
        on_jacobians,
        qos(ReliabilityPolicy.RELIABLE, 1000),
        raw=True,
    )
    fd = node.create_client(ForwardDynamics, f'{ns}/spart_dynamics/forward_dynamics')
    idyn = node.create_client(InverseDynamics, f'{ns}/spart_dynamics/inverse_dynamics')
    from rclpy.experimental import EventsExecutor

    executor = EventsExecutor()
    executor.add_node(node)
    calls = {'sent': 0, 'ok': 0, 'failed': 0, 'messages': set()}
    futures = []
    rss = []  # (t since go, KiB)
    burners, sent = [], None
    gc.collect()
    gc.freeze()
    try:
        pub_proc.start()
        deadline = time.monotonic() + 60
        while not received:
            if time.monotonic() > deadline or not proc.is_running():
                raise SystemExit('the node produced no Jacobians\n' + proc.describe())
            executor.spin_once(timeout_sec=0.05)
        fd.wait_for_service(timeout_sec=10.0)
        idyn.wait_for_service(timeout_sec=10.0)
        go.set()
        burners = [
            ctx.Process(target=burn, args=(total + 5,), daemon=True) for _ in range(args.load)
        ]
        for b in burners:
            b.start()
        t0 = time.monotonic()
        next_call, next_rss, next_report = t0, t0, t0 + 60
        while sent is None and time.monotonic() < t0 + total + 60:
            executor.spin_once(timeout_sec=0.002)
            now = time.monotonic()
            if now >= next_call and now - t0 < total:
                k = calls['sent']
                req = (
                    ForwardDynamics.Request(use_current_state=True)
                    if k % 2
                    else InverseDynamics.Request(use_current_state=True, floating_base=True)
                )
                futures.append((fd if k % 2 else idyn).call_async(req))
                calls['sent'] += 1
                next_call += 1.0 / args.service_rate
            if now >= next_rss:
                rss.append((now - t0, rss_kib(proc.pid)))
                next_rss += 1.0
            if now >= next_report:
                print(
                    f'[soak] {now - t0:5.0f} s: node RSS {rss[-1][1] / 1024:.1f} MiB, '
                    f'{len(received)} answers, {calls["sent"]} service calls',
                    flush=True,
                )
                next_report += 60
            for f in [f for f in futures if f.done()]:
                futures.remove(f)
                res = f.result()
                calls['ok' if res.success else 'failed'] += 1
                if not res.success:
                    calls['messages'].add(res.message)
            if recv_end.poll():
                sent, achieved = recv_end.recv()
        spin_for(executor, 1.0)
    finally:
        node_log, code = shut_down(executor, node, proc, pub_proc, burners)
    if sent is None:
        raise SystemExit('the publisher process did not finish')

    n_warm = int(args.warmup * args.rate)
    measured = sent[n_warm:]
    lost = sum(1 for s in measured if s not in received)
    t = np.array([x for x, _ in rss])
    kib = np.array([m for _, m in rss])
    base = kib[t >= args.warmup][0] if np.any(t >= args.warmup) else kib[0]
    growth = (kib[-1] - base) / 1024
    print(
        f'[soak] {robot.name}, floating base, node defaults (joint_states BEST_EFFORT depth 100, '
        f'events executor); load: {args.load} busy process(es)'
    )
    print(
        f'[soak] joint_states: {len(measured)} published at {achieved:.0f} Hz over '
        f'{args.seconds:g} s after {args.warmup:g} s warm-up; answered {len(measured) - lost}, '
        f'lost {lost} ({lost / len(measured):.4%})'
    )
    print(
        f'[soak] services at {args.service_rate:g} Hz: {calls["sent"]} sent, {calls["ok"]} ok, '
        f'{calls["failed"]} failed {sorted(calls["messages"])[:3]}'
    )
    print(
        f'[soak] node RSS: {base / 1024:.1f} MiB after warm-up, {kib[-1] / 1024:.1f} MiB at the '
        f'end (growth {growth:+.2f} MiB), peak {np.nanmax(kib) / 1024:.1f} MiB'
    )
    ok_mem = growth < 1.0
    ok_loss = lost == 0
    print(
        f'[soak] target RSS growth < 1 MB: {"MET" if ok_mem else "MISSED"}; no joint_states lost: '
        f'{"MET" if ok_loss else ("MISSED" if not args.load else "n/a under load")} (node exit '
        f'code {code})'
    )
    errors = [line for line in node_log.splitlines() if 'ERROR' in line]
    if errors:
        print('[soak] node errors:\n  ' + '\n  '.join(errors[:10]))
    return 0 if ok_mem and (ok_loss or args.load) and code == 0 else 1


if __name__ == '__main__':
    sys.exit(main())
