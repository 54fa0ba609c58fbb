"""
Convective inertia matrix C (SPART: CIM, CIM_NOC).

SPART's factorization: C = N' (M Ndot + W M N), with W = blkdiag(W_k),
W_k = blkdiag([w_k]x, 0).  It satisfies C + C' = dH/dt and C u is the
convective (Coriolis and centrifugal) generalized force.
"""

from collections import namedtuple

from . import _backend as bk
from . import _checks as chk
from .accelerations import twist_rate_map
from .attitude import _skew as skew_symmetric
from .generalized_inertia import body_inertias
from .model import FIXED

ConvectiveInertiaResult = namedtuple('ConvectiveInertiaResult', 'C0 C0m Cm0 Cm')


def _rate_of(B, v):
    D = bk.zeros((6, 6), B, v)
    D[3:6, 0:3] = skew_symmetric(v)
    return D


def _noc_rows(t0, tL, Bij, Bi0, P0, pm, robot):
    """
    Yield (N_k, Ndot_k), the 6-row blocks of N and dN/dt for bodies k = 0..n.

    Built from the twist-propagation matrices (no positions needed).
    """
    n, nq = robot.n_links_joints, robot.n_q
    Omega0 = bk.zeros((6, 6), t0)
    Omega0[0:3, 0:3] = skew_symmetric(t0[0:3])
    N0 = bk.zeros((6, 6 + nq), P0)
    N0[:, 0:6] = P0
    N0dot = bk.zeros((6, 6 + nq), P0, t0)
    N0dot[:, 0:6] = Omega0 @ P0
    yield N0, N0dot
    for i in range(n):
        Ni = bk.zeros((6, 6 + nq), Bij, Bi0, P0, pm)
        Nidot = bk.zeros((6, 6 + nq), Ni, t0, tL)
        Ni[:, 0:6] = Bi0[:, :, i] @ P0
        Nidot[:, 0:6] = Bi0[:, :, i] @ Omega0 @ P0 + _rate_of(Bi0, t0[3:6] - tL[3:6, i]) @ P0
        for j in range(i + 1):
            jj = robot.joints[j]
            if jj.type != FIXED and robot.con.branch[i, j]:
                c = 6 + jj.q_id - 1
                Ni[:, c] = Bij[:, :, i, j] @ pm[:, j]
                Nidot[:, c] = (
                    Bij[:, :, i, j] @ twist_rate_map(tL[0:3, j])
                    + _rate_of(Bij, tL[3:6, j] - tL[3:6, i])
                ) @ pm[:, j]
        yield Ni, Nidot


def _convective(rows, t0, tL, I0, Im, robot):
    C = None
    ws = [t0[0:3]] + [tL[0:3, i] for i in range(robot.n_links_joints)]
    for (Nk, Nkdot), M, w in zip(rows, body_inertias(I0, Im, robot), ws):
        WM = bk.zeros((6, 6), M, w)
        WM[0:3, 0:3] = skew_symmetric(w) @ M[0:3, 0:3]
        Ck = Nk.T @ (M @ Nkdot + WM @ Nk)
        C = Ck if C is None else C + Ck
    return C


@chk.checked
def convective_inertia(t0, tL, I0, Im, M0_tilde, Mm_tilde, Bij, Bi0, P0, pm, robot):
    """
    Blocks of C = [C0 C0m; Cm0 Cm].

    (SPART: CIM)

    Inputs: twists ``t0`` (6,), ``tL`` (6, n); inertias from :func:`inertia_in_inertial_frame`;
    M0_tilde / Mm_tilde are accepted for SPART's signature (the result does not
    need them).  Returns C0 (6, 6), C0m (6, n_q), Cm0 (n_q, 6), Cm (n_q, n_q).
    """
    C = _convective(_noc_rows(t0, tL, Bij, Bi0, P0, pm, robot), t0, tL, I0, Im, robot)
    return ConvectiveInertiaResult(C[0:6, 0:6], C[0:6, 6:], C[6:, 0:6], C[6:, 6:])


@chk.checked
def convective_inertia_noc(N, Ndot, t0, tL, I0, Im, robot):
    """
    Return C = N' (M Ndot + W M N), (6 + n_q, 6 + n_q).

    (SPART: CIM_NOC)
    """
    rows = (
        (N[6 * k : 6 * k + 6, :], Ndot[6 * k : 6 * k + 6, :])
        for k in range(robot.n_links_joints + 1)
    )
    return _convective(rows, t0, tL, I0, Im, robot)
