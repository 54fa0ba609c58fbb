"""Generalized inertia matrix H (SPART: GIM, GIM_NOC)."""

from collections import namedtuple

from . import _backend as bk
from . import _checks as chk
from .inertia import spatial_inertia
from .model import FIXED

GeneralizedInertiaResult = namedtuple('GeneralizedInertiaResult', 'H0 H0m Hm')


@chk.checked
def generalized_inertia(M0_tilde, Mm_tilde, Bij, Bi0, P0, pm, robot):
    """
    Blocks of H = [H0 H0m; H0m' Hm] from composite inertias.

    (SPART: GIM)

    Returns ``H0`` (6, 6) base block, ``H0m`` (6, n_q) coupling, ``Hm``
    (n_q, n_q) joint block, for u = [u0; um] (u0 as in :func:`velocities`).
    """
    n, nq = robot.n_links_joints, robot.n_q
    H0 = P0.T @ M0_tilde @ P0
    Hm = bk.zeros((nq, nq), M0_tilde, Mm_tilde, Bij, Bi0, P0, pm)
    H0m = bk.zeros((6, nq), Hm)
    for i in range(n):
        ji = robot.joints[i]
        if ji.type == FIXED:
            continue
        a = ji.q_id - 1
        pMi = pm[:, i] @ Mm_tilde[:, :, i]
        H0m[:, a] = pMi @ Bi0[:, :, i] @ P0
        for j in range(i + 1):
            jj = robot.joints[j]
            if jj.type != FIXED and robot.con.branch[i, j]:
                b = jj.q_id - 1
                Hm[a, b] = pMi @ Bij[:, :, i, j] @ pm[:, j]
                Hm[b, a] = Hm[a, b]
    return GeneralizedInertiaResult(H0, H0m, Hm)


def body_inertias(I0, Im, robot):
    """Return the spatial inertias [M0, M1, ..., Mn], each (6, 6) about its CoM, inertial frame."""
    return [spatial_inertia(I0, robot.base_link.mass)] + [
        spatial_inertia(Im[:, :, i], robot.links[i].mass, Im) for i in range(robot.n_links_joints)
    ]


@chk.checked
def generalized_inertia_noc(N, I0, Im, robot):
    """
    Return H = N' M N, (6 + n_q, 6 + n_q), from the natural orthogonal complement.

    (SPART: GIM_NOC)
    """
    H = bk.zeros((N.shape[1], N.shape[1]), N, I0, Im)
    for k, M in enumerate(body_inertias(I0, Im, robot)):
        Nk = N[6 * k : 6 * k + 6, :]
        H = H + Nk.T @ M @ Nk
    return H
