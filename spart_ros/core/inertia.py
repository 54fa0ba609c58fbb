"""Link inertias in the inertial frame and composite-body inertias (SPART: I_I, MCB)."""

from collections import namedtuple

import numpy as np

from . import _backend as bk
from . import _checks as chk
from . import _compiled

InertiaResult = namedtuple('InertiaResult', 'I0 Im')
CompositeInertiaResult = namedtuple('CompositeInertiaResult', 'M0_tilde Mm_tilde')


@chk.checked(results=False)  # the compiled code checks its results
def inertia_in_inertial_frame(R0, RL, robot):
    """
    Inertia tensors about each CoM, projected in the inertial frame.

    (SPART: I_I)

    Returns ``I0`` (3, 3) = R0 I0_body R0' and ``Im`` (3, 3, n).
    """
    n = robot.n_links_joints
    if not bk.is_symbolic(R0, RL, robot):
        I0, Im = np.empty((3, 3)), np.empty((3, 3, n))
        if _compiled.inertia_in_inertial_frame(*_compiled.packed(robot), R0, RL, I0, Im):
            raise chk.ResultNotFinite('I_I')
        return InertiaResult(I0, Im)
    I0 = R0 @ robot.base_link.inertia @ R0.T
    Im = bk.zeros((3, 3, n), R0, RL, robot)
    for i, link in enumerate(robot.links):
        Im[:, :, i] = RL[:, :, i] @ link.inertia @ RL[:, :, i].T
    return InertiaResult(I0, Im)


def spatial_inertia(inertia, m, *like):
    """
    Return M = blkdiag(inertia, m I3), (6, 6): the spatial inertia about the CoM.

    ``like``: arrays whose kind (numeric or symbolic) the result takes.
    """
    M = bk.zeros((6, 6), inertia, m, *like)
    M[0:3, 0:3] = inertia
    for k in range(3, 6):
        M[k, k] = m
    return M


@chk.checked
def composite_body_inertia(I0, Im, Bij, Bi0, robot):
    """
    Mass-composite (subtree) spatial inertias, leaves to base.

    (SPART: MCB)

    M~_i = M_i + sum over children k of B_ki' M~_k B_ki, each about its own CoM,
    inertial frame.  Returns ``M0_tilde`` (6, 6) and ``Mm_tilde`` (6, 6, n).
    """
    n = robot.n_links_joints
    Mm = bk.zeros((6, 6, n), I0, Im, Bij, Bi0, robot)
    for i in range(n - 1, -1, -1):
        Mm[:, :, i] = Mm[:, :, i] + spatial_inertia(Im[:, :, i], robot.links[i].mass, Mm)
        p = robot.parent[i]
        if p > 0:  # children have higher ids: M~_i is complete here
            B = Bij[:, :, i, p - 1]
            Mm[:, :, p - 1] = Mm[:, :, p - 1] + B.T @ Mm[:, :, i] @ B
    M0 = spatial_inertia(I0, robot.base_link.mass, Mm)
    for i in range(n):
        if robot.parent[i] == 0:
            M0 = M0 + Bi0[:, :, i].T @ Mm[:, :, i] @ Bi0[:, :, i]
    return CompositeInertiaResult(M0, Mm)
