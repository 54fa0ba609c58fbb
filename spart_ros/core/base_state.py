"""
Base state in ROS conventions <-> SPART's CoM-based base state.

ROS (REP 105, nav_msgs/Odometry) describes the base by the URDF base LINK
frame b: its pose (R_b, p_b) in the world and its twist expressed in b
(linear velocity of b's origin, angular velocity).  SPART uses the base CoM
frame c (the base ``<inertial>`` frame, at rotation R_bc and offset p_bc in b):
R0 = R_b R_bc, r0 = CoM position, u0 = [omega in c; CoM velocity in the world].

Accelerations follow the same pattern: ROS side = angular acceleration and
classical acceleration of b's origin, both expressed in b; SPART side =
u0dot = [angular acceleration in c; CoM acceleration in the world].
All functions are exact (no small-angle approximations); shapes (3, 3), (3,), (6,).
Arguments are checked at the entry (spart_ros.core._checks: rotations orthonormal,
vectors finite and of the right length, ``robot`` a Robot) and results are finite
(an overflow is an InputError naming the largest inputs, without numpy's warning).
"""

from collections import namedtuple

import numpy as np

from . import _checks as chk
from .attitude import _cross as cross

SpartBase = namedtuple('SpartBase', 'R0 r0 u0')
LinkBase = namedtuple('LinkBase', 'R_b p_b v_b w_b')


def _bc(robot):
    T = np.asarray(chk.robot(robot).base_link.T, dtype=float)
    return T[:3, :3], T[:3, 3]


@chk.quietly
def base_from_link_frame(robot, R_b, p_b, v_b=None, w_b=None):
    """
    Return SPART (R0, r0, u0) from the base link pose in the world and its twist in b.

    ``R_b`` (3, 3), ``p_b`` (3,): the base link frame b in the world (rotation, origin);
    ``v_b`` (3,): velocity of b's origin expressed in b; ``w_b`` (3,): angular
    velocity expressed in b (nav_msgs/Odometry twist).  Missing twists are zero.
    """
    R_bc, p_bc = _bc(robot)
    R_b = chk.rotation('base orientation', R_b)
    p_b = chk.vector('base position', p_b, 3)
    v_b = np.zeros(3) if v_b is None else chk.vector('base linear velocity', v_b, 3)
    w_b = np.zeros(3) if w_b is None else chk.vector('base angular velocity', w_b, 3)
    R0 = R_b @ R_bc
    rho = R_b @ p_bc  # b origin -> base CoM, world
    r0 = p_b + rho
    w_world = R_b @ w_b
    u0 = np.concatenate([R_bc.T @ w_b, R_b @ v_b + cross(w_world, rho)])
    return chk.results(
        'base_from_link_frame',
        SpartBase(R0, r0, u0),
        [('base position', p_b), ('base linear velocity', v_b), ('base angular velocity', w_b)],
    )


@chk.quietly
def link_frame_from_base(robot, R0, r0, u0=None):
    """Return the inverse of :func:`base_from_link_frame`: (R_b, p_b, v_b, w_b)."""
    R_bc, p_bc = _bc(robot)
    R0 = chk.rotation('R0', R0)
    r0 = chk.vector('r0', r0, 3)
    u0 = np.zeros(6) if u0 is None else chk.vector('u0', u0, 6)
    R_b = R0 @ R_bc.T
    rho = R_b @ p_bc
    w_b = R_bc @ u0[0:3]
    w_world = R_b @ w_b
    v_b = R_b.T @ (u0[3:6] - cross(w_world, rho))
    return chk.results(
        'link_frame_from_base', LinkBase(R_b, r0 - rho, v_b, w_b), [('r0', r0), ('u0', u0)]
    )


@chk.quietly
def base_acceleration_from_link_frame(robot, R_b, w_b, a_b, alpha_b):
    """
    Return SPART u0dot (6,) from the base link's angular velocity ``w_b``.

    Classical acceleration of its origin ``a_b`` and angular acceleration ``alpha_b``, all
    expressed in b; ``R_b`` (3, 3): the rotation of b in the world.
    """
    R_bc, p_bc = _bc(robot)
    R_b = chk.rotation('base orientation', R_b)
    inputs = [
        (n, chk.vector(n, x, 3))
        for n, x in (
            ('base angular velocity', w_b),
            ('base linear acceleration', a_b),
            ('base angular acceleration', alpha_b),
        )
    ]
    w_b, a_b, alpha_b = (x for _, x in inputs)
    # CoM acceleration: a_b + alpha x rho + w x (w x rho), in b, then to the world
    acc_b = a_b + cross(alpha_b, p_bc) + cross(w_b, cross(w_b, p_bc))
    return chk.results(
        'base_acceleration_from_link_frame',
        np.concatenate([R_bc.T @ alpha_b, R_b @ acc_b]),
        inputs,
    )


@chk.quietly
def link_frame_acceleration_from_base(robot, R0, u0, u0dot):
    """Return the inverse of :func:`base_acceleration_from_link_frame`: (a_b, alpha_b), in b."""
    R_bc, p_bc = _bc(robot)
    R0 = chk.rotation('R0', R0)
    u0 = chk.vector('u0', u0, 6)
    u0dot = chk.vector('u0dot', u0dot, 6)
    R_b = R0 @ R_bc.T
    w_b = R_bc @ u0[0:3]
    alpha_b = R_bc @ u0dot[0:3]
    acc_b = R_b.T @ u0dot[3:6] - cross(alpha_b, p_bc) - cross(w_b, cross(w_b, p_bc))
    return chk.results(
        'link_frame_acceleration_from_base', (acc_b, alpha_b), [('u0', u0), ('u0dot', u0dot)]
    )


@chk.quietly
def base_generalized_force_to_link_frame(robot, R0, tau0):
    """
    Return SPART's base wrench tau0 as the same wrench at b's origin, expressed in b.

    SPART tau0 = [torque in c; force in the world] at the base CoM -> the same wrench as (torque,
    force) at b's origin, both expressed in b.
    """
    R_bc, p_bc = _bc(robot)
    R_b = chk.rotation('R0', R0) @ R_bc.T
    tau0 = chk.vector('tau0', tau0, 6)
    force_b = R_b.T @ tau0[3:6]
    torque_b = R_bc @ tau0[0:3] + cross(p_bc, force_b)
    return chk.results(
        'base_generalized_force_to_link_frame', (torque_b, force_b), [('tau0', tau0)]
    )


@chk.quietly
def link_frame_wrench_to_base_generalized_force(robot, R0, torque_b, force_b):
    """
    Return tau0 (6,) of the wrench ``torque_b``, ``force_b`` (3,) at b's origin, expressed in b.

    The inverse of :func:`base_generalized_force_to_link_frame`.
    """
    R_bc, p_bc = _bc(robot)
    R_b = chk.rotation('R0', R0) @ R_bc.T
    torque_b = chk.vector('base torque', torque_b, 3)
    force_b = chk.vector('base force', force_b, 3)
    return chk.results(
        'link_frame_wrench_to_base_generalized_force',
        np.concatenate([R_bc.T @ (torque_b - cross(p_bc, force_b)), R_b @ force_b]),
        [('base torque', torque_b), ('base force', force_b)],
    )


@chk.quietly
def link_frame_pose(robot, link, R0, r0, RL, rL):
    """
    Return the pose (R, p) of a link's URDF frame (not its CoM frame) in the world.

    ``link``: SPART id or name; RL (3, 3, n) and rL (3, n) from kinematics.
    """
    robot = chk.robot(robot)
    i = chk.link_id('link', link, robot)
    n = robot.n_links_joints
    R0, r0 = chk.rotation('R0', R0), chk.vector('r0', r0, 3)
    RL, rL = chk.rotations('RL', RL, n), chk.array('rL', rL, (3, n))
    T_com = np.asarray(robot.link(i).T, dtype=float)  # the CoM frame in the link frame
    R_c, p_c = (R0, r0) if i == 0 else (RL[:, :, i - 1], rL[:, i - 1])
    R = R_c @ T_com[:3, :3].T
    return chk.results('link_frame_pose', (R, p_c - R @ T_com[:3, 3]), [('r0', r0), ('rL', rL)])
