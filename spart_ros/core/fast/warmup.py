"""Compile (or load from the on-disk cache) every fast-path kernel once.

``python -m spart_ros.core.fast.warmup`` is run by scripts/setup.sh after a
build, so that nodes and tests start in about a second instead of compiling
for tens of seconds on their first call.  It exercises every kernel with the
argument types the library uses (loads given or not, accelerations given or
not, fixed and floating base), on a small model with every joint type.
"""
import time

import numpy as np

from .. import spart_chain_warm_up
from ..model import RobotBuilder, homogeneous
from . import FastDynamics


def _tiny_robot():
    b = RobotBuilder('warmup')
    for name in ('base', 'a', 'b', 'c'):
        b.add_link(name, mass=1.0, inertia=np.eye(3) * 0.1, com=homogeneous(p=[0.1, 0.0, 0.0]))
    b.add_joint('ja', 'revolute', 'base', 'a', axis=[0, 0, 1])
    b.add_joint('jb', 'prismatic', 'a', 'b', origin=homogeneous(p=[0.2, 0, 0]), axis=[1, 0, 0])
    b.add_joint('jc', 'fixed', 'b', 'c', origin=homogeneous(p=[0.2, 0, 0]))
    return b.build()


def warm_up():
    """Run every kernel once; returns the seconds it took."""
    start = time.perf_counter()
    robot = _tiny_robot()
    fd = FastDynamics(robot)
    R0, r0, q, z6, nq = np.eye(3), np.zeros(3), np.zeros(robot.n_q), np.zeros(6), robot.n_q
    wrenches = dict(wF0=np.zeros(6), wFm=np.zeros((6, robot.n_links_joints)))
    gravity = np.array([0.0, 0.0, -9.81])
    # each combination of given / None loads is its own compiled version
    variants = [{}, dict(gravity=gravity), wrenches, dict(wrenches, gravity=gravity)]
    for floating in (True, False):
        for loads in variants:
            fd.inverse_dynamics(R0, r0, q, z6, q, z6, q, floating=floating, **loads)
            fd.bias_forces(R0, r0, q, z6, q, floating=floating, **loads)
            fd.forward_dynamics(R0, r0, q, z6, q, z6, np.zeros(nq), floating=floating, **loads)
        fd.jacobian(robot.n_links_joints, R0, r0, q, z6, q, floating=floating)
        fd.twists(R0, r0, q, z6, q, floating=floating)
    fd.jacobian(robot.n_links_joints, R0, r0, q, bias=False)
    fd.gravity_forces(R0, r0, q)
    fd.gravity_forces(R0, r0, q, gravity)
    for loads in variants:
        fd.floating_inverse_dynamics(R0, r0, q, z6, q, q, **loads)
    fd.mass_matrix(R0, r0, q)
    spart_chain_warm_up(robot)
    return time.perf_counter() - start


if __name__ == '__main__':
    import spart_ros
    print(f'[warmup] fast-path kernels ready in {warm_up():.1f} s ({spart_ros.__file__})')
