#!/usr/bin/env python3
"""Benchmark: latency of the spart_controller node, joint_states in -> effort command out.

Starts the INSTALLED controller_node (mode floating_base on the 7-DoF arm on a floating base,
test/data/urdf/arm7_floating.urdf by default) as its own process, publishes sensor_msgs/JointState
at 1 kHz and stamped odometry at 100 Hz from another process (bench_node_latency's publisher: each
joint state stamped with the wall clock at publication), and receives the commands.  The effort
command itself (std_msgs/Float64MultiArray on commands_topic) carries no stamp, so the node also
publishes the same efforts as sensor_msgs/JointState on ``joint_command_topic``, stamped with the
joint state it answers, AFTER the Float64MultiArray: its latency is an upper bound of the
command's.  A joint state without an answer is counted as dropped: the controller keeps only the
newest joint state (input_queue_depth 1), so on a busy machine it skips a state when a newer one
is already waiting (by design: it acts on the newest state); on an idle machine none should be.

Before that, in this process: the control law per call (FloatingBase.compute, microseconds) and a
bare FastDynamics.floating_inverse_dynamics call on the same state, measured in the same run.

    source scripts/env.sh
    python benchmarks/bench_controller_latency.py [--seconds 5] [--load N] [--rt-priority P]

Target (issue 10): p99 <= 1 ms on an idle machine, none dropped.  Exits 1 when missed.
"""
import os
import sys
import timeit

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'benchmarks'))

from bench_node_latency import measure, parse_args  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

READY = r'spart_controller\]: mode floating_base'


def law_cost(robot):
    """(us per FloatingBase.compute, us per bare floating_inverse_dynamics) on one state."""
    from types import SimpleNamespace
    from spart_ros.control.effort_laws import FloatingBase, Gains
    from spart_ros.control.trajectory import Reference
    from spart_ros.core.base_state import base_from_link_frame
    from spart_ros.core.fast import FastDynamics
    rng = np.random.default_rng(0)
    n = robot.n_q
    fd = FastDynamics(robot)
    law = FloatingBase(fd, Gains(n, 100.0, 20.0))
    base = SimpleNamespace(R_b=np.eye(3), p_b=rng.standard_normal(3), v_b=rng.standard_normal(3),
                           w_b=rng.standard_normal(3))
    q, qd = rng.uniform(-1, 1, n), rng.standard_normal(n)
    ref = Reference(rng.uniform(-1, 1, n), rng.standard_normal(n), rng.standard_normal(n))
    R0, r0, u0 = base_from_link_frame(robot, base.R_b, base.p_b, base.v_b, base.w_b)
    qdd = rng.standard_normal(n)

    def best(stmt, number=2000):
        stmt()
        return min(timeit.repeat(stmt, number=number, repeat=7)) / number * 1e6
    return (best(lambda: law.compute(base, q, qd, ref, 0.001)),
            best(lambda: fd.floating_inverse_dynamics(R0, r0, q, u0, qd, qdd)))


def main():
    ap = parse_args(__doc__, 'the effort command')
    ap.set_defaults(target_ms=1.0)
    args = ap.parse_args()
    from spart_ros.core.urdf import robot_from_urdf
    robot, _ = robot_from_urdf(args.urdf)
    law_us, fid_us = law_cost(robot)
    print(f'[bench] control law FloatingBase.compute: {law_us:.1f} us per call; bare '
          f'FastDynamics.floating_inverse_dynamics: {fid_us:.1f} us (ratio {law_us / fid_us:.1f})')
    params = dict(urdf_path=os.path.abspath(args.urdf), base='floating', mode='floating_base',
                  robot_description_topic='', commands_topic='commands', joint_command_topic='joint_command',
                  executor=args.node_executor, status_rate=1.0, state_timeout=0.5)
    label = (f'controller_node (mode floating_base, executor {args.node_executor}), {robot.name} '
             f'({robot.n_q} joints, floating base); latency measured on the stamped JointState copy of the command')
    return measure(args, robot, 'controller_node', params, READY, 'joint_command', JointState, label)


if __name__ == '__main__':
    sys.exit(main())
