"""Forward kinematics of the tree (SPART: Kinematics)."""

from collections import namedtuple

import numpy as np

from . import _backend as bk
from . import _checks as chk
from . import _compiled
from .attitude import _axis_rotation
from .model import homogeneous, PRISMATIC, REVOLUTE

KinematicsResult = namedtuple('KinematicsResult', 'RJ RL rJ rL e g')


@chk.checked(results=False)  # the compiled code checks its results
def kinematics(R0, r0, qm, robot):
    """
    Positions and orientations of every joint and link.

    (SPART: Kinematics)

    Inputs: ``R0`` (3, 3) base CoM frame -> inertial rotation; ``r0`` (3,) base
    CoM position (inertial); ``qm`` (n_q,) joint variables (rad or m).
    Returns (RJ, RL, rJ, rL, e, g), all in the inertial frame: ``RJ``/``RL``
    (3, 3, n) joint / link CoM frame rotations, ``rJ``/``rL`` (3, n) joint
    origins / link CoM positions, ``e`` (3, n) joint axes, ``g`` (3, n) from
    joint i's origin to link i's CoM.
    """
    n = robot.n_links_joints
    if not bk.is_symbolic(R0, r0, qm, robot):
        return _kinematics_numeric(R0, r0, qm, robot)
    TJ = bk.zeros((4, 4, n), R0, r0, qm, robot)
    TL = bk.zeros((4, 4, n), R0, r0, qm, robot)
    T0 = homogeneous(R0, r0)
    for i in range(1, n + 1):
        joint = robot.joints[i - 1]
        T_parent = T0 if joint.parent_link == 0 else TL[:, :, joint.parent_link - 1]
        TJ[:, :, i - 1] = T_parent @ joint.T
        if joint.type == REVOLUTE:
            T_q = homogeneous(_axis_rotation(joint.axis, qm[joint.q_id - 1]), None)
        elif joint.type == PRISMATIC:
            T_q = homogeneous(None, joint.axis * qm[joint.q_id - 1])
        else:
            T_q = bk.eye(4, robot)
        TL[:, :, i - 1] = TJ[:, :, i - 1] @ T_q @ robot.links[i - 1].T
    RJ = TJ[:3, :3, :].copy()
    RL = TL[:3, :3, :].copy()
    rJ = TJ[:3, 3, :].copy()
    rL = TL[:3, 3, :].copy()
    e = bk.zeros((3, n), RJ)
    for i, joint in enumerate(robot.joints):
        e[:, i] = RJ[:, :, i] @ joint.axis
    g = rL - rJ
    return KinematicsResult(RJ, RL, rJ, rL, e, g)


def _kinematics_numeric(R0, r0, qm, robot):
    n = robot.n_links_joints
    out = KinematicsResult(
        np.empty((3, 3, n)),
        np.empty((3, 3, n)),
        np.empty((3, n)),
        np.empty((3, n)),
        np.empty((3, n)),
        np.empty((3, n)),
    )
    if _compiled.kinematics(*_compiled.packed(robot), R0, r0, qm, *out):
        raise chk.ResultNotFinite('Kinematics')
    return out
