"""Link twist derivatives (SPART: Accelerations)."""

from collections import namedtuple

import numpy as np

from . import _backend as bk
from . import _checks as chk
from . import _compiled
from .attitude import _cross as cross
from .attitude import _skew
from .model import FIXED

AccelerationsResult = namedtuple('AccelerationsResult', 't0dot tLdot')


def twist_rate_map(omega, *like):
    """
    Return Omega = blkdiag([w]x, [w]x) (6, 6) of the angular velocity ``omega`` (3,).

    d/dt of a vector fixed in a body turning at ``omega``.  ``like``: arrays whose kind (numeric
    or symbolic) the result takes.
    """
    S = _skew(omega)
    Om = bk.zeros((6, 6), S, *like)
    Om[0:3, 0:3] = S
    Om[3:6, 3:6] = S
    return Om


@chk.checked(results=False)  # the compiled code checks its results
def accelerations(t0, tL, P0, pm, Bi0, Bij, u0, um, u0dot, umdot, robot):
    """
    Twist derivatives of the base and every link.

    (SPART: Accelerations)

    ``u0dot`` (6,) = [base angular acceleration in the BASE frame; base CoM
    acceleration in the inertial frame]; ``umdot`` (n_q,).  Returns ``t0dot``
    (6,) and ``tLdot`` (6, n): [angular acceleration; CoM acceleration], inertial.
    """
    n = robot.n_links_joints
    if not bk.is_symbolic(t0, tL, P0, pm, Bi0, Bij, u0, um, u0dot, umdot):
        t0dot, tLdot = np.empty(6), np.empty((6, n))
        if _compiled.accelerations(
            _compiled.packed(robot)[0],
            t0,
            tL,
            P0,
            pm,
            Bi0,
            Bij,
            u0,
            um,
            u0dot,
            umdot,
            t0dot,
            tLdot,
        ):
            raise chk.ResultNotFinite('Accelerations')
        return AccelerationsResult(t0dot, tLdot)
    w0 = t0[0:3]
    t0dot = bk.zeros(6, t0, P0, u0, u0dot)
    t0dot[:] = P0 @ u0dot
    t0dot[0:3] = t0dot[0:3] + cross(w0, P0[0:3, 0:3] @ u0[0:3])
    tLdot = bk.zeros((6, n), t0, tL, P0, pm, u0, um, u0dot, umdot)
    for i, joint in enumerate(robot.joints):
        p = joint.parent_link
        if p == 0:
            tp, tpdot, Bip = t0, t0dot, Bi0[:, :, i]
        else:
            tp, tpdot, Bip = tL[:, p - 1], tLdot[:, p - 1], Bij[:, :, i, p - 1]
        tLdot[:, i] = Bip @ tpdot
        # d/dt of B_ip: its lower-left block is [r_p - r_i]x
        tLdot[3:6, i] = tLdot[3:6, i] + cross(tp[3:6] - tL[3:6, i], tp[0:3])
        if joint.type != FIXED:
            k = joint.q_id - 1
            w = tL[0:3, i]
            rate = bk.zeros(6, w, pm)  # Omega_i pm_i = [w x pa; w x pl]
            rate[0:3] = cross(w, pm[0:3, i])
            rate[3:6] = cross(w, pm[3:6, i])
            tLdot[:, i] = tLdot[:, i] + rate * um[k] + pm[:, i] * umdot[k]
    return AccelerationsResult(t0dot, tLdot)
