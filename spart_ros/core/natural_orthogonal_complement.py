"""The natural orthogonal complement N (t = N u) and its derivative (SPART: NOC, NOCdot)."""

from . import _backend as bk
from . import _checks as chk
from .attitude import _skew as skew_symmetric
from .jacobians import jacobian, jacobian_dot


@chk.checked
def natural_orthogonal_complement(r0, rL, P0, pm, robot):
    """
    Return N, (6 + 6n, 6 + n_q): the stacked twists [t0; t1; ...; tn] = N [u0; um].

    (SPART: NOC)
    """
    n, nq = robot.n_links_joints, robot.n_q
    N = bk.zeros((6 + 6 * n, 6 + nq), r0, rL, P0, pm)
    N[0:6, 0:6] = P0
    for i in range(1, n + 1):
        J0, Jm = jacobian(rL[:, i - 1], r0, rL, P0, pm, i, robot)
        N[6 * i : 6 * i + 6, 0:6] = J0
        N[6 * i : 6 * i + 6, 6:] = Jm
    return N


@chk.checked
def natural_orthogonal_complement_dot(r0, t0, rL, tL, P0, pm, robot):
    """
    Return dN/dt, (6 + 6n, 6 + n_q).

    (SPART: NOCdot)
    """
    n, nq = robot.n_links_joints, robot.n_q
    Ndot = bk.zeros((6 + 6 * n, 6 + nq), r0, t0, rL, tL, P0, pm)
    Ndot[0:3, 0:3] = skew_symmetric(t0[0:3]) @ P0[0:3, 0:3]
    for i in range(1, n + 1):
        J0dot, Jmdot = jacobian_dot(rL[:, i - 1], tL[:, i - 1], r0, t0, rL, tL, P0, pm, i, robot)
        Ndot[6 * i : 6 * i + 6, 0:6] = J0dot
        Ndot[6 * i : 6 * i + 6, 6:] = Jmdot
    return Ndot
