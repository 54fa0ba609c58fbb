"""Twist-propagation matrices (SPART: DiffKinematics)."""

from collections import namedtuple

import numpy as np

from . import _backend as bk
from . import _checks as chk
from . import _compiled
from .attitude import _cross as cross
from .attitude import _skew as skew_symmetric
from .model import PRISMATIC, REVOLUTE

DiffKinematicsResult = namedtuple('DiffKinematicsResult', 'Bij Bi0 P0 pm')


def twist_propagation(r_from, r_to, *like):
    """
    Return B = [I 0; [r_from - r_to]x I], (6, 6).

    The twist at ``r_to`` of a rigid body whose twist at ``r_from`` is t is B t (angular part
    first).  ``like``: arrays whose kind (numeric or symbolic) the result takes.
    """
    B = bk.eye(6, r_from, r_to, *like)
    B[3:6, 0:3] = skew_symmetric(r_from - r_to)
    return B


def base_twist_map(R0):
    """Return P0 = blkdiag(R0, I3), (6, 6): t0 = P0 u0."""
    P0 = bk.eye(6, R0)
    P0[0:3, 0:3] = R0
    return P0


def joint_twist_vector(joint_type, e, g):
    """
    Return a ``pm`` column (6,) for a joint of type ``joint_type``.

    [e; e x g] revolute, [0; e] prismatic, 0 fixed.
    """
    p = bk.zeros(6, e, g)
    if joint_type == REVOLUTE:
        p[0:3] = e
        p[3:6] = cross(e, g)
    elif joint_type == PRISMATIC:
        p[3:6] = e
    return p


@chk.checked(results=False)  # the compiled code checks its results
def differential_kinematics(R0, r0, rL, e, g, robot):
    """
    Twist-propagation matrices and joint twist vectors.

    (SPART: DiffKinematics)

    Inputs from :func:`kinematics` (inertial frame): ``R0`` (3, 3), ``r0`` (3,),
    ``rL``, ``e``, ``g`` (3, n).  Returns (Bij, Bi0, P0, pm): ``Bij`` (6, 6, n, n),
    Bij[:, :, i-1, j-1] maps link j's twist to link i's (zero unless j is on i's
    path to the base); ``Bi0`` (6, 6, n) from the base to each link; ``P0`` (6, 6)
    = blkdiag(R0, I3); ``pm`` (6, n) each joint's twist-propagation vector.
    """
    n = robot.n_links_joints
    if not bk.is_symbolic(R0, r0, rL, e, g):
        return _differential_kinematics_numeric(R0, r0, rL, e, g, robot)
    Bij = bk.zeros((6, 6, n, n), R0, r0, rL, e, g)
    for i in range(n):
        for j in range(n):
            if robot.con.branch[i, j]:
                Bij[:, :, i, j] = twist_propagation(rL[:, j], rL[:, i], Bij)
    Bi0 = bk.zeros((6, 6, n), R0, r0, rL)
    for i in range(n):
        Bi0[:, :, i] = twist_propagation(r0, rL[:, i], Bi0)
    P0 = base_twist_map(R0)
    pm = bk.zeros((6, n), e, g)
    for i, joint in enumerate(robot.joints):
        pm[:, i] = joint_twist_vector(joint.type, e[:, i], g[:, i])
    return DiffKinematicsResult(Bij, Bi0, P0, pm)


def _differential_kinematics_numeric(R0, r0, rL, e, g, robot):
    n = robot.n_links_joints
    out = DiffKinematicsResult(
        np.empty((6, 6, n, n)), np.empty((6, 6, n)), np.empty((6, 6)), np.empty((6, n))
    )
    if _compiled.differential_kinematics(
        _compiled.packed(robot)[0], robot.con.branch, R0, r0, rL, e, g, *out
    ):
        raise chk.ResultNotFinite('DiffKinematics')
    return out
