#!/usr/bin/env python3
"""
Benchmark: the embedded MuJoCo plant (spart_ros.sim.MujocoPlant) and the spart_sim node.

Part 1, the plant alone (no ROS), for SPART's SC_3DoF (free-floating, zero gravity) and the
KUKA iiwa (fixed base, gravity), dt = 1 ms, RK4, median steps per second of

    bare     mujoco.mj_step(m, d) on the plant's own model/data, efforts written straight
             into d.qfrc_applied (MuJoCo's cost: the baseline)
    plant    plant.set_efforts(tau); plant.step()          (one control period of 1 step)
    publish  plant + joint_state(), odometry(), imu()     (what the node computes per state)

timed in alternating blocks (~20 ms each, order flipped every round) so that every side sees
the same machine load; ``ratio`` = bare rate / that row's rate (the wrapper's overhead),
``max RTF`` = steps per second x dt: the real-time factor this row could sustain on one core.

Part 2 (``--node``), the installed node: spart_sim in real-time mode (publish_rate 1000 Hz:
a state per step) for ``--seconds`` wall seconds: achieved real-time factor = simulated
time advanced (/clock) / wall time, and the node's CPU share; then in lockstep mode with a
minimal responder in this process answering each new joint_states stamp with one command:
simulated seconds per wall second (lockstep round trips x dt).

    source scripts/env.sh
    python benchmarks/bench_sim.py                 # plant only, ~10 s
    python benchmarks/bench_sim.py --node          # + the node, ~30 s
Not a test: nothing here fails the build; the exit code is 0.
"""

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for p in (ROOT, os.path.join(ROOT, 'test')):
    if p not in sys.path:
        sys.path.insert(0, p)

import mujoco  # noqa: E402
import numpy as np  # noqa: E402
from spart_ros.sim import MujocoPlant  # noqa: E402

ROBOTS = (('SC_3DoF', 'floating', (0.0, 0.0, 0.0)), ('kuka_iiwa', 'fixed', (0.0, 0.0, -9.81)))
DT = 1e-3


def urdf(name):
    return os.path.join(ROOT, 'urdf', name + '.urdf')


def plant_rows(name, base, gravity, rounds, block_s):
    plant = MujocoPlant.from_urdf(urdf(name), base=base, gravity=gravity, dt=DT, integrator='RK4')
    m, d = plant.model, plant.data
    n = plant.n_joints
    tau = 0.01 * np.ones(n)
    vadr = np.array(
        [m.joint(j).dofadr[0] for j in plant.joint_names]
    )  # the same slots as the plant

    def bare(k):
        for _ in range(k):
            d.qfrc_applied[vadr] = tau
            mujoco.mj_step(m, d)

    def wrapped(k):
        for _ in range(k):
            plant.set_efforts(tau)
            plant.step()

    def publish(k):
        for _ in range(k):
            plant.set_efforts(tau)
            plant.step()
            plant.joint_state()
            plant.odometry()
            plant.imu()

    sides = {'bare': bare, 'plant': wrapped, 'publish': publish}
    # calibrate a block length per side (~block_s seconds)
    counts = {}
    for key, fn in sides.items():
        k = 10
        while True:
            t = time.perf_counter()
            fn(k)
            if time.perf_counter() - t > block_s / 4:
                break
            k *= 2
        counts[key] = max(10, int(k * block_s / max(time.perf_counter() - t, 1e-9)))
    rates = {key: [] for key in sides}
    order = list(sides)
    for r in range(rounds):
        for key in order if r % 2 == 0 else order[::-1]:
            k = counts[key]
            t = time.perf_counter()
            sides[key](k)
            rates[key].append(k / (time.perf_counter() - t))
        plant.reset()
    return {key: float(np.median(v)) for key, v in rates.items()}


def bench_plant(args):
    print(
        f'plant alone: dt {DT * 1e3:g} ms, RK4; median steps/s over {args.rounds} alternating '
        f'rounds of ~{args.block_ms:g} ms blocks'
    )
    print(f'{"robot":<12} {"row":<8} {"steps/s":>10} {"us/step":>8} {"ratio":>6} {"max RTF":>8}')
    for name, base, gravity in ROBOTS:
        rates = plant_rows(name, base, gravity, args.rounds, args.block_ms * 1e-3)
        for key in ('bare', 'plant', 'publish'):
            r = rates[key]
            print(
                f'{name:<12} {key:<8} {r:>10.0f} {1e6 / r:>8.1f} {rates["bare"] / r:>6.2f} '
                f'{r * DT:>8.1f}'
            )


def proc_cpu_seconds(pid):
    tick = os.sysconf('SC_CLK_TCK')
    with open(f'/proc/{pid}/stat') as f:
        parts = f.read().rsplit(')', 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / tick


def bench_node(args):
    from node_helpers import RELIABLE_QOS, RosTestNode, start_node
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray

    print(
        f'\nnode (installed sim_node), dt {DT * 1e3:g} ms, RK4, {args.seconds:g} s per run, '
        f'ROS_DOMAIN_ID={os.environ.get("ROS_DOMAIN_ID")}'
    )
    print(f'{"robot":<12} {"mode":<28} {"sim s":>7} {"wall s":>7} {"RTF":>6} {"node CPU":>9}')
    for name, base, gravity in ROBOTS:
        for lockstep in (False, True):
            params = {
                'urdf_path': urdf(name),
                'base': base,
                'gravity': list(gravity),
                'dt': DT,
                'lockstep': lockstep,
                'publish_rate': 1000.0,
                'lockstep_republish_period': 0.5,
            }
            with (
                start_node(
                    'spart_ros',
                    'sim_node',
                    namespace='/bench_sim',
                    parameters=params,
                    remappings={'/clock': '/bench_sim/clock'},
                    wait_for=r'spart_sim\]: robot',
                    wait_timeout=60.0,
                ) as proc,
                RosTestNode('bench_sim_driver') as ros,
            ):
                n = 3 if name == 'SC_3DoF' else 7
                cmd = ros.publisher(
                    Float64MultiArray, '/bench_sim/effort_controller/commands', RELIABLE_QOS
                )
                seen = set()
                latest = {'t': None}

                def on_state(msg):
                    t = msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec
                    latest['t'] = t
                    if lockstep and t not in seen:  # answer each new stamp once
                        seen.add(t)
                        cmd.publish(Float64MultiArray(data=[0.01] * n))

                ros.node.create_subscription(
                    JointState, '/bench_sim/joint_states', on_state, RELIABLE_QOS
                )
                clock = ros.subscribe(Clock, '/bench_sim/clock')
                ros.wait_for(
                    lambda: latest['t'] is not None and clock.messages,
                    30.0,
                    'the first state',
                    process=proc,
                )
                ros.spin_for(0.5)  # past start-up transients
                c0, w0, s0 = proc_cpu_seconds(proc.pid), time.monotonic(), latest['t']
                ros.spin_for(args.seconds)
                c1, w1, s1 = proc_cpu_seconds(proc.pid), time.monotonic(), latest['t']
                sim, wall = (s1 - s0) * 1e-9, w1 - w0
                mode = 'lockstep (1 step/command)' if lockstep else 'real time x1, 1000 Hz states'
                print(
                    f'{name:<12} {mode:<28} {sim:>7.2f} {wall:>7.2f} {sim / wall:>6.2f} '
                    f'{100 * (c1 - c0) / wall:>8.0f}%'
                )
    with open('/proc/loadavg') as f:
        print(
            f'load average (1, 5, 15 min): {" ".join(f.read().split()[:3])} on {os.cpu_count()} '
            'CPUs'
        )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--rounds', type=int, default=40)
    ap.add_argument('--block-ms', type=float, default=20.0)
    ap.add_argument(
        '--node', action='store_true', help='also run the installed node (real time and lockstep)'
    )
    ap.add_argument('--seconds', type=float, default=5.0)
    args = ap.parse_args()
    bench_plant(args)
    if args.node:
        bench_node(args)
    return 0


if __name__ == '__main__':
    sys.exit(main())
