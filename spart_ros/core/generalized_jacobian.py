"""
Generalized Jacobian of a free-floating robot (Umetani and Yoshida, 1989).

(SPART: Jstar)

A point p on any link moves with t_p = J0 u0 + Jm um ([angular velocity of the link;
velocity of p], inertial frame; J0 (6, 6), Jm (6, n_q) from :func:`point_jacobian` or
``FastDynamics.jacobian``).  On a free-floating robot the base velocity is not an input: it
follows from momentum conservation, u0 = H0^-1 (h0 - H0m um) (:func:`base_reaction`).
Substituting,

    t_p = J* um + J0 H0^-1 h0,     J* = Jm - J0 H0^-1 H0m

J* (6, n_q) is the generalized Jacobian: the end-effector twist per joint velocity with the
base free, and J0 H0^-1 h0 the drift the initial momentum h0 causes (zero for a system
that starts at rest).  When the base mass and inertia grow without bound H0^-1 -> 0 and J*
becomes the fixed-base Jacobian Jm.
"""

from . import checks as chk
from .errors import InputError
from .momentum import solve_base


def generalized_jacobian(J0, Jm, H0, H0m):
    """
    Return J* = Jm - J0 H0^-1 H0m (6, n_q).

    (SPART: Jstar)

    ``J0`` (6, 6), ``Jm`` (6, n_q): the point's Jacobian (base and joint columns, SPART's u0
    convention); ``H0`` (6, 6), ``H0m`` (6, n_q): base blocks of the generalized inertia.
    Rows as the twist [angular velocity of the link; velocity of the point], inertial frame.
    """
    J0 = chk.array('J0', J0, (6, 6))
    Jm = chk.array('Jm', Jm, (6, None))
    H0 = chk.array('H0', H0, (6, 6))
    H0m = chk.array('H0m', H0m, (6, None))
    if H0m.shape[1] != Jm.shape[1]:
        raise InputError(
            f'Jm, H0m: expected the same number of joint columns, got Jm {Jm.shape} and '
            f'H0m {H0m.shape}'
        )
    where = 'generalized_jacobian'
    inputs = [('J0', J0), ('Jm', Jm), ('H0', H0), ('H0m', H0m)]
    X = solve_base(H0, chk.numeric('H0m', H0m, f'{where} (a linear solve)'), where, inputs)
    with chk.quiet():
        Jstar = Jm - J0 @ X
    return chk.results(where, Jstar, inputs)


def generalized_jacobian_drift(J0, H0, h0):
    """
    Return J0 H0^-1 h0 (6,).

    The point's twist with the joints still, caused by the system momentum ``h0`` (6,) in base
    coordinates (:func:`base_momentum`).  t_p = J* um + drift.
    """
    J0 = chk.array('J0', J0, (6, 6))
    H0 = chk.array('H0', H0, (6, 6))
    h0 = chk.vector('h0', h0, 6)
    where = 'generalized_jacobian_drift'
    inputs = [('J0', J0), ('H0', H0), ('h0', h0)]
    x = solve_base(H0, chk.numeric('h0', h0, f'{where} (a linear solve)'), where, inputs)
    with chk.quiet():
        drift = J0 @ x
    return chk.results(where, drift, inputs)
