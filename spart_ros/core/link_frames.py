"""
URDF link frames: the transforms robot_state_publisher publishes, and frames fixed to the base.

Frames: the URDF frame of a link (its joint's frame, REP 103), not SPART's link CoM frame.
A joint moves its child link's URDF frame relative to its parent link's URDF frame by
``origin @ motion(q)``: the joint's ``<origin>``, then a rotation about (revolute) or a
translation along (prismatic) its unit axis, expressed in the joint frame.  Every transform is
a (4, 4) homogeneous matrix mapping child coordinates to parent coordinates.

Joint variables are SPART's full ones (``robot.q_names``, mimic followers included).
"""

import math

import numpy as np

from .errors import InputError, ModelError
from .model import FIXED, PRISMATIC, REVOLUTE

__all__ = [
    'link_com_frame',
    'joint_origin',
    'joint_motion',
    'joint_transforms',
    'link_poses',
    'fixed_frame_in_base',
]


def link_com_frame(robot, link_id):
    """Return (4, 4) pose of link ``link_id``'s CoM frame in its URDF link frame (base: id 0)."""
    T = robot.base_link.T if link_id == 0 else robot.links[link_id - 1].T
    return np.asarray(T, dtype=float)


def joint_origin(robot, joint):
    """
    Return (4, 4) ``<origin>`` of ``joint``.

    Its child's URDF frame at q = 0 in its parent link's URDF frame.
    """
    return link_com_frame(robot, joint.parent_link) @ np.asarray(joint.T, dtype=float)


def joint_motion(joint, q):
    """
    Return (4, 4) motion of ``joint`` at position ``q`` (rad or m) in the joint frame.

    Identity if fixed.
    """
    T = np.eye(4)
    if joint.type == REVOLUTE:
        # Rodrigues' formula: written out here so that the transforms check the core's
        # kinematics independently (tests compare them)
        x, y, z = (float(a) for a in joint.axis)
        c, s = math.cos(q), math.sin(q)
        C = 1.0 - c
        T[:3, :3] = [
            [c + x * x * C, x * y * C - z * s, x * z * C + y * s],
            [y * x * C + z * s, c + y * y * C, y * z * C - x * s],
            [z * x * C - y * s, z * y * C + x * s, c + z * z * C],
        ]
    elif joint.type == PRISMATIC:
        T[:3, 3] = np.asarray(joint.axis, dtype=float) * q
    return T


def _full_positions(robot, q):
    q = np.asarray(q, dtype=float)
    if q.shape != (robot.n_q,):
        raise InputError(
            f'q: expected {robot.n_q} joint positions (robot.q_names order), got shape {q.shape}'
        )
    if not np.all(np.isfinite(q)):
        raise InputError(f'q: NaN or infinity in {q.tolist()}')
    return q


def joint_transforms(robot, q, moving=True, fixed=True):
    """
    Return [(joint, (4, 4) child URDF frame in parent URDF frame)] for every joint, in SPART order.

    At joint positions ``q`` (n_q,); ``moving`` / ``fixed`` select the joints
    (robot_state_publisher publishes the moving ones on /tf, the fixed ones once on /tf_static).
    """
    q = _full_positions(robot, q)
    out = []
    for joint in robot.joints:
        if (joint.type == FIXED and fixed) or (joint.type != FIXED and moving):
            T = joint_origin(robot, joint)
            if joint.type != FIXED:
                T = T @ joint_motion(joint, q[joint.q_id - 1])
            out.append((joint, T))
    return out


def link_poses(robot, q, base_pose=None):
    """
    Return {link name: (4, 4) pose of its URDF frame}, in the frame of ``base_pose``.

    At joint positions ``q`` (n_q,); ``base_pose``: (4, 4) pose of the base link's URDF frame;
    default identity: poses in the base link frame.
    """
    T_base = np.eye(4) if base_pose is None else np.asarray(base_pose, dtype=float)
    by_id = {0: T_base}
    for joint, T in joint_transforms(robot, q):  # SPART order: a parent comes before its children
        by_id[joint.child_link] = by_id[joint.parent_link] @ T
    names = [robot.base_link.name] + [link.name for link in robot.links]
    return {names[k]: T for k, T in sorted(by_id.items())}


def fixed_frame_in_base(robot, link_name, what='frame'):
    """
    Return (4, 4) pose of the URDF frame of ``link_name`` in the base link's URDF frame.

    For a link rigidly attached to the base (every joint between them fixed).

    ModelError naming the link when it is not a link of the robot, or the first moving joint
    between it and the base; ``what`` says whose frame it is in the message (e.g. 'IMU frame').
    """
    if link_name not in robot.keys.link_id:
        raise ModelError(
            f'{what} {link_name!r} is not a link of robot {robot.name!r} (links: '
            f'{robot.link_names})'
        )
    k = robot.keys.link_id[link_name]
    T = np.eye(4)
    while k != 0:
        joint = robot.joints[k - 1]
        if joint.type != FIXED:
            raise ModelError(
                f'{what} {link_name!r} is not rigidly attached to the base link '
                f'{robot.base_link.name!r}: joint {joint.name!r} between them is not fixed'
            )
        T = joint_origin(robot, joint) @ T
        k = joint.parent_link
    return T
