#!/usr/bin/env python3
"""
Benchmark: latency of the spart_dynamics node, joint_states in -> ~/jacobians out.

Starts the INSTALLED dynamics_node (7-DoF arm on a floating base, test/data/urdf/
arm7_floating.urdf by default; every output topic on) as its own process, gives it
odometry at 100 Hz, and publishes sensor_msgs/JointState at 1 kHz for a few seconds, each with a
unique stamp = the wall-clock time of its publication (time.time_ns, the same clock in
both processes), and receives ~/jacobians.  Latency of one message = receipt time - its
stamp (so it includes the publisher's serialization, DDS both ways, the node's
callback and the receiver's deserialization).  Messages are matched by stamp: a joint
state whose Jacobians never arrive is a drop.

    source scripts/env.sh
    python benchmarks/bench_node_latency.py [--rate 1000] [--seconds 5] [--urdf PATH]
        [--executor events|single] [--load N] [--rt-priority P]

Target (issue 5): p99 <= 2 ms, none dropped.  Prints the numbers; exits 1 when the
target is missed (0 otherwise).  Not part of the test suite.
"""

import argparse
import gc
import multiprocessing
import os
import struct
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'test'))

from builtin_interfaces.msg import Time  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from node_helpers import start_node  # noqa: E402  (test/node_helpers.py: node processes)
import numpy as np  # noqa: E402
import rclpy  # noqa: E402
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from spart_interfaces.msg import Jacobians  # noqa: E402

STAMP = struct.Struct('<iI')
DEFAULT_URDF = os.path.join(ROOT, 'test', 'data', 'urdf', 'arm7_floating.urdf')
READY = r'spart_dynamics\]: base floating, world frame'


def qos(reliability, depth):
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=depth,
        reliability=reliability,
        durability=DurabilityPolicy.VOLATILE,
    )


def stamp_of(ns):
    return Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def cpu_snapshot(pids):
    """
    Return the wall time and the CPU times of the machine and of the benchmark's processes.

    (wall s, CPU s of the machine's processes, of its interrupt handling (irq + softirq: the
    loopback network under DDS), stolen by the hypervisor, of the node, of the publisher, of this
    process).
    """
    tick = os.sysconf('SC_CLK_TCK')
    with open('/proc/stat') as f:
        user, nice, system, _idle, _iowait, irq, softirq, steal = (
            int(x) for x in f.readline().split()[1:9]
        )

    def proc_cpu(pid):
        try:
            with open(f'/proc/{pid}/stat') as f:
                parts = f.read().rsplit(')', 1)[1].split()
            return (int(parts[11]) + int(parts[12])) / tick
        except (OSError, IndexError, ValueError):
            return float('nan')

    own = os.times()
    return (
        time.monotonic(),
        (user + nice + system) / tick,
        (irq + softirq) / tick,
        steal / tick,
        *[proc_cpu(p) for p in pids],
        own.user + own.system,
    )


def set_realtime(pid, priority):
    """
    Set SCHED_FIFO ``priority`` for every thread of process ``pid``.

    Threads it starts later inherit it. Return False if not permitted.
    """
    try:
        for tid in os.listdir(f'/proc/{pid}/task'):
            os.sched_setscheduler(int(tid), os.SCHED_FIFO, os.sched_param(priority))
        return True
    except (PermissionError, ProcessLookupError, FileNotFoundError):
        return False


def burn(seconds):
    """
    Child process: one core busy for ``seconds`` (other load on the machine).

    At normal priority even when started by a real-time receiver.
    """
    os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def publisher(ns, names, base_link, rate, n_total, go, out, odom_rate=100.0):
    """
    Child process: ``n_total`` joint states at ``rate`` Hz.

    Each stamped with time.time_ns() at publication, and odometry at ``odom_rate`` Hz stamped
    likewise (the node uses odometry no older than its odom_max_age); sends the list of stamps back
    on ``out``. Until ``go`` is set (the parent received a first answer), it keeps priming the node
    at 20 Hz.
    """
    rclpy.init()
    node = rclpy.create_node('bench_publisher', namespace=ns)
    pub_js = node.create_publisher(
        JointState, f'{ns}/joint_states', qos(ReliabilityPolicy.RELIABLE, 100)
    )
    pub_odom = node.create_publisher(Odometry, f'{ns}/odom', qos(ReliabilityPolicy.RELIABLE, 10))
    rng = np.random.default_rng(0)
    js = JointState()
    js.name = list(names)
    odom = Odometry()
    odom.header.frame_id, odom.child_frame_id = 'world', base_link
    odom.pose.pose.orientation.w = 1.0
    odom.twist.twist.angular.z = 0.1
    gc.collect()
    gc.freeze()  # no long GC pauses while publishing
    deadline = time.monotonic() + 60
    while not go.is_set() and time.monotonic() < deadline:
        js.header.stamp = odom.header.stamp = stamp_of(time.time_ns())
        pub_odom.publish(odom)
        js.position = rng.uniform(-1, 1, len(names)).tolist()
        js.velocity = rng.standard_normal(len(names)).tolist()
        pub_js.publish(js)
        time.sleep(0.05)
    positions = rng.uniform(-1, 1, (n_total, len(names))).tolist()
    velocities = rng.standard_normal((n_total, len(names))).tolist()
    sent = []
    period = 1.0 / rate
    odom_every = max(1, round(rate / odom_rate))
    t0 = time.perf_counter()
    for k in range(n_total):
        # absolute deadlines, plain sleep (no busy-wait: it would steal CPU from the node on a
        # small machine); latency is measured from the actual publication time anyway
        remaining = t0 + k * period - time.perf_counter()
        if remaining > 0:
            time.sleep(remaining)
        js.position = positions[k]
        js.velocity = velocities[k]
        t = time.time_ns()
        if sent and t <= sent[-1]:
            t = sent[-1] + 1
        js.header.stamp = stamp_of(t)
        if k % odom_every == 0:
            odom.header.stamp = js.header.stamp
            pub_odom.publish(odom)
        pub_js.publish(js)
        sent.append(t)
    achieved = (n_total - 1) / (time.perf_counter() - t0)
    out.send((sent, achieved))
    node.destroy_node()
    rclpy.try_shutdown()


def spin_for(executor, seconds):
    """Spin ``executor`` for ``seconds``."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.01)


def shut_down(executor, node, proc, pub_proc, burners):
    """Stop the receiver, the node process, the publisher and the load; (node log, exit code)."""
    executor.shutdown(timeout_sec=1.0)
    node.destroy_node()
    rclpy.try_shutdown()
    node_log = proc.output()
    code = proc.stop()
    proc.cleanup()
    pub_proc.join(5)
    for b in burners:
        b.terminate()
    return node_log, code


def parse_args(description, out_name):
    """Return the benchmark's command line (shared with bench_controller_latency.py)."""
    ap = argparse.ArgumentParser(
        description=description, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        '--rate', type=float, default=1000.0, help='joint_states per second (default 1000)'
    )
    ap.add_argument('--seconds', type=float, default=5.0, help='publishing time (default 5)')
    ap.add_argument('--urdf', default=DEFAULT_URDF)
    ap.add_argument(
        '--node-executor',
        choices=('events', 'single_threaded'),
        default='events',
        help="the node's executor parameter (default events)",
    )
    ap.add_argument(
        '--executor',
        choices=('events', 'single'),
        default='events',
        help="this receiver's executor: rclpy's EventsExecutor or SingleThreadedExecutor",
    )
    ap.add_argument(
        '--receiver-qos',
        choices=('reliable', 'best_effort'),
        default='reliable',
        help=f'reliability of the {out_name} subscription (the node publishes RELIABLE)',
    )
    ap.add_argument('--save', metavar='NPZ', help='save stamps and latencies to this .npz file')
    ap.add_argument(
        '--warmup', type=float, default=1.0, help='seconds of publishing before measuring'
    )
    ap.add_argument(
        '--load',
        type=int,
        default=0,
        metavar='N',
        help='N extra processes each keeping a core busy while publishing (default 0)',
    )
    ap.add_argument(
        '--rt-priority',
        type=int,
        default=0,
        metavar='P',
        help='run the node, the publisher and the receiver SCHED_FIFO at priority P, as a '
        "loaded controller would (like 'chrt -f P'; needs permission; default 0 = off)",
    )
    ap.add_argument('--target-ms', type=float, default=2.0, help='p99 target [ms] (default 2)')
    return ap


def measure(args, robot, executable, params, ready, out_topic, out_type, label, stats=None):
    """
    Start ``executable`` (namespace /bench_<pid>, ``params``).

    Publish joint_states at ``args.rate`` (+ odometry at 100 Hz) from another process, receive
    ``out_topic`` (relative to the namespace; a message type whose header stamp is the answered
    joint state's) and print latency, drops and CPU; returns the exit code (0 = target met).
    ``stats``: a dict filled with p50, p90, p99, max (ms), dropped, received, node_cpu.
    """
    names = list(robot.q_names)
    ns = f'/bench_{os.getpid()}'
    n_warm = int(args.warmup * args.rate)
    n_total = n_warm + int(args.seconds * args.rate)

    # the publisher is its own process (started before rclpy.init here): no GIL shared with
    # the receiver, like a real joint_state_broadcaster
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
        executable,
        namespace=ns,
        parameters=params,
        wait_for=ready,
        wait_timeout=120.0,
    )
    rclpy.init()
    node = rclpy.create_node('bench_receiver', namespace=ns)
    received = {}  # stamp (ns) -> receipt time (ns)

    def on_output(data):
        # raw: only the header stamp is read (bytes 4..12 after the CDR encapsulation), so the
        # receiver costs little CPU on a small machine
        t = time.time_ns()
        sec, nanosec = STAMP.unpack_from(data, 4)
        received[sec * 1_000_000_000 + nanosec] = t

    node.create_subscription(
        out_type,
        f'{ns}/{out_topic}',
        on_output,
        qos(
            ReliabilityPolicy.RELIABLE
            if args.receiver_qos == 'reliable'
            else ReliabilityPolicy.BEST_EFFORT,
            1000,
        ),
        raw=True,
    )
    if args.executor == 'events':
        from rclpy.experimental import EventsExecutor

        executor = EventsExecutor()
    else:
        from rclpy.executors import SingleThreadedExecutor

        executor = SingleThreadedExecutor()
    executor.add_node(node)
    sent = None
    cpu0 = cpu1 = None
    burners = []
    gc.collect()
    gc.freeze()  # no long GC pauses while receiving
    try:
        pub_proc.start()
        if args.rt_priority:
            # every process gets its priority, even after one failed
            pids = (proc.pid, pub_proc.pid, os.getpid())
            each = [set_realtime(pid, args.rt_priority) for pid in pids]
            ok = all(each)
            print(
                f'[bench] SCHED_FIFO priority {args.rt_priority} for node, publisher and '
                'receiver: '
                + ('set' if ok else 'NOT permitted here (running with normal priority)')
            )
        burners += [
            ctx.Process(target=burn, args=(args.warmup + args.seconds + 2,), daemon=True)
            for _ in range(args.load)
        ]
        for b in burners:
            b.start()
        deadline = time.monotonic() + 60
        while not received:  # the node answers: start measuring
            if time.monotonic() > deadline or not proc.is_running():
                raise SystemExit(f'the node published nothing on {out_topic}\n' + proc.describe())
            executor.spin_once(timeout_sec=0.05)
        go.set()
        cpu0 = cpu_snapshot([proc.pid, pub_proc.pid])
        deadline = time.monotonic() + args.warmup + args.seconds + 30
        while sent is None and time.monotonic() < deadline:
            executor.spin_once(timeout_sec=0.01)
            if recv_end.poll():
                sent, achieved = recv_end.recv()
        cpu1 = cpu_snapshot([proc.pid, pub_proc.pid])
        spin_for(executor, 1.0)  # let the last answers arrive
    finally:
        node_log, code = shut_down(executor, node, proc, pub_proc, burners)
    if sent is None:
        raise SystemExit('the publisher process did not finish')

    measured = sent[n_warm:]
    lat = np.array([received[s] - s for s in measured if s in received]) / 1e6  # ms
    dropped = sum(1 for s in measured if s not in received)
    if args.save:
        np.savez(
            args.save,
            sent=np.array(measured),
            received=np.array([received.get(s, -1) for s in measured]),
        )
    dropped_warm = sum(1 for s in sent[:n_warm] if s not in received)
    p50, p90, p99, pmax = (
        (np.percentile(lat, 50), np.percentile(lat, 90), np.percentile(lat, 99), lat.max())
        if len(lat)
        else (np.nan,) * 4
    )
    print(f'[bench] node: {label}')
    print(
        f'[bench] published {len(measured)} joint_states at {achieved:.0f} Hz (target '
        f'{args.rate:.0f}) for {args.seconds:g} s after {args.warmup:g} s of warm-up; receiver: '
        f'{args.executor} executor, {args.receiver_qos} subscription; load: {args.load} busy '
        'process(es)'
        + (f', SCHED_FIFO {args.rt_priority}' if args.rt_priority else '')
    )
    print(
        f'[bench] received {len(lat)}/{len(measured)} {out_topic}, dropped {dropped}'
        f' (warm-up: dropped {dropped_warm}/{n_warm})'
    )
    print(
        f'[bench] latency joint_states -> {out_topic} [ms]: p50 {p50:.3f}  p90 {p90:.3f}  p99 '
        f'{p99:.3f}  max {pmax:.3f}'
    )
    if cpu0 and cpu1:
        wall = cpu1[0] - cpu0[0]
        processes, interrupts, stolen, node_cpu, pub_cpu, own_cpu = (
            (b - a) / wall for a, b in zip(cpu0[1:], cpu1[1:])
        )
        others = processes - node_cpu - pub_cpu - own_cpu
        busy = others > 0.15 or stolen > 0.15
        print(
            f'[bench] CPU while publishing (of {os.cpu_count()} cores): node {node_cpu:.0%}, '
            f'publisher {pub_cpu:.0%}, receiver {own_cpu:.0%}, interrupts (loopback network) '
            f'{interrupts:.0%}, stolen by the hypervisor {stolen:.0%}, other processes '
            f'{max(others, 0):.0%}'
            + ('  <- other load: latencies are not representative' if busy else '')
        )
    if stats is not None:
        stats.update(
            p50=p50,
            p90=p90,
            p99=p99,
            max=pmax,
            dropped=dropped,
            received=len(lat),
            node_cpu=node_cpu if cpu0 and cpu1 else float('nan'),
        )
    ok = len(lat) > 0 and p99 <= args.target_ms and dropped == 0
    print(
        f'[bench] target p99 <= {args.target_ms:g} ms and none dropped: '
        f'{"MET" if ok else "MISSED"} (node exit code {code})'
    )
    timing = [
        line.split(']: ', 1)[-1] for line in node_log.splitlines() if 'callback over' in line
    ]
    if timing:
        print(f'[bench] node, {timing[-1]}')
    errors = [line for line in node_log.splitlines() if 'ERROR' in line]
    if errors:
        print('[bench] node errors:\n  ' + '\n  '.join(errors[:10]))
    return 0 if ok else 1


def dynamics_node_setup(args, robot):
    """
    (params, label) of the dynamics node measured here.

    Also the baseline of bench_controller_latency.py.
    """
    params = {
        'urdf_path': os.path.abspath(args.urdf),
        'base': 'floating',
        'robot_description_topic': '',
        'jacobian_links': [robot.link_names[-1]],
        'jacobian_offsets': [0.0, 0.0, 0.05],
        'input_queue_depth': 100,
        'output_queue_depth': 100,
        'executor': args.node_executor,
        'timing_log_period': float(args.seconds + args.warmup),
    }
    label = (
        f'dynamics_node (executor {args.node_executor}), {robot.name} ({len(robot.link_names)} '
        f'links, {robot.n_q} joints, floating base), outputs: link_twists + jacobians '
        f'({robot.link_names[-1]}) + center_of_mass'
    )
    return params, label


def measure_dynamics_node(args, robot, stats=None):
    params, label = dynamics_node_setup(args, robot)
    return measure(
        args,
        robot,
        'dynamics_node',
        params,
        READY,
        'spart_dynamics/jacobians',
        Jacobians,
        label,
        stats,
    )


def main():
    args = parse_args(__doc__, '~/jacobians').parse_args()
    from spart_ros.core.urdf import robot_from_urdf

    robot, _ = robot_from_urdf(args.urdf)
    return measure_dynamics_node(args, robot)


if __name__ == '__main__':
    sys.exit(main())
