#!/usr/bin/env python3
"""
Benchmark: the spart_controller's per-tick cost.

Its latency joint_states in -> effort command out.

1. In this process, on one state of the 7-DoF arm on a floating base (test/data/urdf/
   arm7_floating.urdf by default), microseconds per call, best of 7 repeats:
   - bare ``FastDynamics.floating_inverse_dynamics`` (the baseline: the dynamics a tick needs);
   - the law as the controller calls it: ``FloatingBase.command`` (the Law interface);
   - ``FloatingBase.compute`` (the older entry: copies and the base acceleration too);
   - a whole ``Controller.update`` tick (gate, reference schedule, law, clamping, checks).
2. Node latency: the INSTALLED controller_node (mode floating_base) as its own process,
   sensor_msgs/JointState at 1 kHz and odometry at 100 Hz from another process
   (bench_node_latency's publisher: each joint state stamped with the wall clock at publication).
   The command (std_msgs/Float64MultiArray) carries no stamp, so the node also publishes the same
   efforts as sensor_msgs/JointState on ``joint_command_topic``, stamped with the joint state it
   answers, AFTER the Float64MultiArray: its latency is an upper bound of the command's.  A joint
   state without an answer counts as dropped (the controller answers every state it gets, in
   order, from a queue of ``input_queue_depth`` (10): one is dropped when more arrive while it
   is busy; with a queue of one, ``--set input_queue_depth=1``, two arriving before the executor
   took the first were enough, 0.05-0.2 % of the states).  The dynamics node
   (bench_node_latency.py, same robot, same publisher) is measured in the same run, alternating
   with the controller (``--rounds``), as the baseline: the machine's load changes over minutes.

    source scripts/env.sh
    python benchmarks/bench_controller_latency.py [--seconds 10] [--rounds 2] [--load N]
    [--rt-priority P] [--set NAME=VALUE]

Targets (issue 17): the law under 15 us per call; the controller's p99 within 0.3 ms of the
dynamics node's, none dropped on an idle machine.  Exits 1 when a target is missed.
"""

import os
import sys
import timeit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'benchmarks'))

from bench_node_latency import measure, measure_dynamics_node, parse_args  # noqa: E402
import numpy as np  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

READY = r'spart_controller\]: mode floating_base'


def best(stmt, number=2000):
    stmt()
    return min(timeit.repeat(stmt, number=number, repeat=7)) / number * 1e6


def law_costs(robot):
    """{name: us per call} (module docstring, part 1)."""
    from types import SimpleNamespace

    from spart_ros.control.controller import ControlInputs, Controller
    from spart_ros.control.effort_laws import FloatingBase, Gains
    from spart_ros.control.settings import ControllerSettings
    from spart_ros.control.trajectory import Reference
    from spart_ros.core.base_state import base_from_link_frame
    from spart_ros.core.fast import FastDynamics

    rng = np.random.default_rng(0)
    n = robot.n_q
    fd = FastDynamics(robot)
    law = FloatingBase(fd, Gains(n, 100.0, 20.0))
    base = SimpleNamespace(
        R_b=np.eye(3),
        p_b=rng.standard_normal(3),
        v_b=rng.standard_normal(3),
        w_b=rng.standard_normal(3),
    )
    q, qd = rng.uniform(-1, 1, n), rng.standard_normal(n)
    state = SimpleNamespace(base=base, q=q, qd=qd)
    ref = Reference(rng.uniform(-1, 1, n), rng.standard_normal(n), rng.standard_normal(n))
    R0, r0, u0 = base_from_link_frame(robot, base.R_b, base.p_b, base.v_b, base.w_b)
    qdd = rng.standard_normal(n)
    controller = Controller(notify=lambda *a: None)
    controller.configure(
        ControllerSettings(
            mode='floating_base', floating=True, event_driven=False, max_tracking_error=0.0
        ),
        robot,
        FastDynamics(robot),
    )
    controller.activate()
    clock = [10.0]

    def tick():
        clock[0] += 0.001
        controller.update(
            ControlInputs(state, None, np.full(n, clock[0]), clock[0], None, clock[0]), clock[0]
        )

    tick()
    return {
        'bare FastDynamics.floating_inverse_dynamics': best(
            lambda: fd.floating_inverse_dynamics(R0, r0, q, u0, qd, qdd)
        ),
        "law FloatingBase.command (the controller's)": best(
            lambda: law.command(state, ref, 0.0, 0.001)
        ),
        'FloatingBase.compute (copies + base acceleration)': best(
            lambda: law.compute(base, q, qd, ref, 0.001)
        ),
        'Controller.update (a whole tick)': best(tick),
    }


def main():
    ap = parse_args(__doc__, 'the effort command')
    ap.set_defaults(target_ms=1.0, seconds=10.0)
    ap.add_argument(
        '--rounds',
        type=int,
        default=1,
        help='dynamics node / controller measurements alternated (default 1 each)',
    )
    ap.add_argument('--law-target-us', type=float, default=15.0)
    ap.add_argument(
        '--set',
        action='append',
        default=[],
        metavar='NAME=VALUE',
        help='a parameter of the controller node, e.g. input_queue_depth=1 (a YAML value; '
        'repeatable)',
    )
    ap.add_argument(
        '--margin-ms',
        type=float,
        default=0.3,
        help="the controller's p99 within this of the dynamics node's (default 0.3)",
    )
    args = ap.parse_args()
    from spart_ros.core.urdf import robot_from_urdf

    robot, _ = robot_from_urdf(args.urdf)
    costs = law_costs(robot)
    bare = costs['bare FastDynamics.floating_inverse_dynamics']
    for name, us in costs.items():
        print(f'[bench] {name}: {us:.1f} us per call ({us / bare:.1f} x the bare dynamics)')
    law_us = costs["law FloatingBase.command (the controller's)"]
    params = {
        'urdf_path': os.path.abspath(args.urdf),
        'base': 'floating',
        'mode': 'floating_base',
        'robot_description_topic': '',
        'commands_topic': 'commands',
        'joint_command_topic': 'joint_command',
        'executor': args.node_executor,
        'status_rate': 1.0,
        'state_timeout': 0.5,
        'max_tracking_error': 0.0,
        'jump_tolerance': 100.0,
    }  # the benchmark's states are random: no fault, no jump
    import yaml

    for item in args.set:
        name, _, value = item.partition('=')
        params[name.strip()] = yaml.safe_load(value)
    label = (
        f'controller_node (mode floating_base, executor {args.node_executor}), {robot.name} '
        f'({robot.n_q} joints, floating base); latency measured on the stamped JointState copy of '
        'the command'
    )
    runs = {'dynamics': [], 'controller': []}
    for _ in range(args.rounds):
        stats = {}
        measure_dynamics_node(args, robot, stats)
        runs['dynamics'].append(stats)
        stats = {}
        measure(
            args,
            robot,
            'controller_node',
            params,
            READY,
            'joint_command',
            JointState,
            label,
            stats,
        )
        runs['controller'].append(stats)
    p99 = {k: float(np.median([s['p99'] for s in v])) for k, v in runs.items()}
    dropped = {k: sum(s['dropped'] for s in v) for k, v in runs.items()}
    print(
        '[bench] p99 of each round [ms]: dynamics node '
        f'{[round(s["p99"], 3) for s in runs["dynamics"]]}, controller '
        f'{[round(s["p99"], 3) for s in runs["controller"]]}; dropped: {dropped}'
    )
    gap = p99['controller'] - p99['dynamics']
    ok_law = law_us < args.law_target_us
    ok_node = gap <= args.margin_ms and dropped['controller'] == 0
    print(
        f'[bench] law {law_us:.1f} us (target < {args.law_target_us:g} us): '
        f'{"MET" if ok_law else "MISSED"}; controller p99 - dynamics node p99 = {gap:+.3f} ms '
        f'(target <= {args.margin_ms:g} ms, none dropped): {"MET" if ok_node else "MISSED"}'
    )
    return 0 if ok_law and ok_node else 1


if __name__ == '__main__':
    sys.exit(main())
