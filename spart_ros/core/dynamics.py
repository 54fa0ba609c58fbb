"""
Inverse, forward and floating-base inverse dynamics (SPART: ID, FD, Floating_ID).

Equations of motion (SPART): H udot + C u = tau + N' [wF0; wFm(:)], with
tau = [tau0; taum], tau0 = [base torque in the BASE frame; base force in the
inertial frame], and wrenches [torque; force] in the inertial frame applied at
the CoMs.  SPART has no gravity term; here ``gravity`` (3,), a vector in the
inertial frame (e.g. [0, 0, -9.81]), adds the wrench [0; m g] at every CoM.
"""

from collections import namedtuple

import numpy as np

from . import _backend as bk
from . import _checks as chk
from . import _compiled
from .accelerations import accelerations
from .attitude import _cross as cross
from .errors import SingularModelError
from .generalized_inertia import generalized_inertia
from .inertia import composite_body_inertia
from .invertibility import check_invertible
from .model import FIXED

InverseDynamicsResult = namedtuple('InverseDynamicsResult', 'tau0 taum')
ForwardDynamicsResult = namedtuple('ForwardDynamicsResult', 'u0dot umdot')
FloatingInverseDynamicsResult = namedtuple('FloatingInverseDynamicsResult', 'taum u0dot')


def gravity_wrenches(wF0, wFm, robot, gravity=None):
    """Return copies of ``wF0`` (6,) and ``wFm`` (6, n) with [0; m g] added at every CoM."""
    robot = chk.robot(robot)
    n = robot.n_links_joints
    wF0 = chk.vector('wF0', wF0, 6)
    wFm = chk.array('wFm', wFm, (6, n))
    if gravity is None:
        return wF0, wFm
    g = chk.vector('gravity', gravity, 3)
    wF0 = wF0 + np.concatenate([np.zeros(3), robot.base_link.mass * g])
    wFm = wFm + np.vstack([np.zeros((3, n)), np.outer(g, robot.masses)]) if n else wFm
    return wF0, wFm


@chk.checked(results=False)  # the compiled code checks its results
def inverse_dynamics(
    wF0, wFm, t0, tL, t0dot, tLdot, P0, pm, I0, Im, Bij, Bi0, robot, gravity=None
):
    """
    Generalized forces that produce the given twist rates.

    (SPART: ID)

    Inputs: external wrenches ``wF0`` (6,), ``wFm`` (6, n) ([torque; force] at
    the CoMs, inertial frame); twists and twist rates from :func:`velocities` and
    :func:`accelerations`; inertias from :func:`inertia_in_inertial_frame`;
    optional ``gravity`` (3,) in the inertial frame.
    Returns ``tau0`` (6,) and ``taum`` (n_q,).
    """
    n = robot.n_links_joints
    wF0, wFm = gravity_wrenches(wF0, wFm, robot, gravity)
    if not bk.is_symbolic(wF0, wFm, t0, tL, t0dot, tLdot, P0, pm, I0, Im, Bij, Bi0, robot):
        tau0, taum = np.empty(6), np.empty(robot.n_q)
        if _compiled.inverse_dynamics(
            *_compiled.packed(robot),
            wF0,
            wFm,
            t0,
            tL,
            t0dot,
            tLdot,
            P0,
            pm,
            I0,
            Im,
            Bij,
            Bi0,
            tau0,
            taum,
            np.empty(6),
            np.empty((6, n)),
        ):
            raise chk.ResultNotFinite('ID')
        return InverseDynamicsResult(tau0, taum)
    # Newton-Euler at each CoM: wq = M tdot + W M t - wF
    wq0 = bk.zeros(6, t0, t0dot, I0, wF0)
    wq0[0:3] = I0 @ t0dot[0:3] + cross(t0[0:3], I0 @ t0[0:3]) - wF0[0:3]
    wq0[3:6] = robot.base_link.mass * t0dot[3:6] - wF0[3:6]
    wq = bk.zeros((6, n), tL, tLdot, Im, wFm, robot)
    for i in range(n):
        w = tL[0:3, i]
        wq[0:3, i] = Im[:, :, i] @ tLdot[0:3, i] + cross(w, Im[:, :, i] @ w) - wFm[0:3, i]
        wq[3:6, i] = robot.links[i].mass * tLdot[3:6, i] - wFm[3:6, i]
    # Backward pass: accumulate subtree wrenches at each CoM.
    for i in range(n - 1, -1, -1):
        p = robot.parent[i]
        if p == 0:
            wq0 = wq0 + Bi0[:, :, i].T @ wq[:, i]
        else:
            wq[:, p - 1] = wq[:, p - 1] + Bij[:, :, i, p - 1].T @ wq[:, i]
    tau0 = P0.T @ wq0
    taum = bk.zeros(robot.n_q, wq)
    for i, joint in enumerate(robot.joints):
        if joint.type != FIXED:
            taum[joint.q_id - 1] = pm[:, i] @ wq[:, i]
    return InverseDynamicsResult(tau0, taum)


def _solve_spd(H, rhs, robot, what):
    try:
        L = np.linalg.cholesky(H)
    except np.linalg.LinAlgError:
        if not np.all(np.abs(H) < 1e150):  # lost to overflow: the inputs are too large
            raise chk.ResultNotFinite(what) from None
        raise SingularModelError(
            f'robot {robot.name!r}: the {what} is not positive definite '
            '(a massless floating base, a joint that moves no mass, or inputs that do not '
            'belong together)'
        ) from None
    return np.linalg.solve(L.T, np.linalg.solve(L, rhs))


@chk.checked(solves=True)
def forward_dynamics(
    tau0, taum, wF0, wFm, t0, tL, P0, pm, I0, Im, Bij, Bi0, u0, um, robot, gravity=None
):
    """
    Generalized accelerations from generalized forces (floating base).

    (SPART: FD)

    Inputs: ``tau0`` (6,) base generalized force, ``taum`` (n_q,) joint efforts,
    wrenches, twists, inertias and maps as in :func:`inverse_dynamics`, ``u0``
    (6,), ``um`` (n_q,), optional ``gravity`` (3,).  Solves
    H udot = tau + N'w - C u.  Returns ``u0dot`` (6,), ``umdot`` (n_q,).
    """
    nq = robot.n_q
    check_invertible(robot, floating=True)
    # ID at zero acceleration gives C u - N'w (the bias); composite inertias give H.
    t0dot, tLdot = accelerations(
        t0, tL, P0, pm, Bi0, Bij, u0, um, np.zeros(6), np.zeros(nq), robot
    )
    b0, bm = inverse_dynamics(
        wF0, wFm, t0, tL, t0dot, tLdot, P0, pm, I0, Im, Bij, Bi0, robot, gravity
    )
    M0t, Mmt = composite_body_inertia(I0, Im, Bij, Bi0, robot)
    H0, H0m, Hm = generalized_inertia(M0t, Mmt, Bij, Bi0, P0, pm, robot)
    H = np.block([[H0, H0m], [H0m.T, Hm]])
    udot = _solve_spd(
        H,
        np.concatenate([tau0 - b0, taum - bm]),
        robot,
        'generalized inertia matrix (from I0, Im, Bij, Bi0, P0, pm)',
    )
    return ForwardDynamicsResult(udot[0:6], udot[6:])


@chk.checked(solves=True)
def floating_inverse_dynamics(
    wF0, wFm, Mm_tilde, H0, t0, tL, P0, pm, I0, Im, Bij, Bi0, u0, um, umdot, robot, gravity=None
):
    """
    Joint efforts and base acceleration for given joint accelerations, with the base unactuated.

    tau0 = 0. (SPART: Floating_ID)

    ``H0`` (6, 6) is the base block of H (from :func:`generalized_inertia`);
    ``Mm_tilde`` is accepted for SPART's signature.  Returns ``taum`` (n_q,) and
    ``u0dot`` (6,).
    """
    check_invertible(robot, floating=True, base_only=True)
    zero = np.zeros(6)
    t0dot, tLdot = accelerations(t0, tL, P0, pm, Bi0, Bij, u0, um, zero, umdot, robot)
    tau0, _ = inverse_dynamics(
        wF0, wFm, t0, tL, t0dot, tLdot, P0, pm, I0, Im, Bij, Bi0, robot, gravity
    )
    u0dot = -_solve_spd(H0, tau0, robot, 'base inertia block H0')
    t0dot, tLdot = accelerations(t0, tL, P0, pm, Bi0, Bij, u0, um, u0dot, umdot, robot)
    _, taum = inverse_dynamics(
        wF0, wFm, t0, tL, t0dot, tLdot, P0, pm, I0, Im, Bij, Bi0, robot, gravity
    )
    return FloatingInverseDynamicsResult(taum, u0dot)
