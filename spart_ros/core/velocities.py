"""Link twists from generalized velocities (SPART: Velocities)."""

from collections import namedtuple

import numpy as np

from . import _backend as bk
from . import _checks as chk
from . import _compiled
from .model import FIXED

VelocitiesResult = namedtuple('VelocitiesResult', 't0 tL')


@chk.checked(results=False)  # the compiled code checks its results
def velocities(Bij, Bi0, P0, pm, u0, um, robot):
    """
    Twists of the base and every link.

    (SPART: Velocities)

    ``u0`` (6,) = [base angular velocity in the BASE frame; base CoM velocity in
    the inertial frame]; ``um`` (n_q,) joint rates.  Returns ``t0`` (6,) and
    ``tL`` (6, n): [angular velocity; CoM velocity], inertial frame.  The
    recursion goes from each link's PARENT (SPART's own code uses link i-1,
    wrong for trees branching below the base).
    """
    n = robot.n_links_joints
    if not bk.is_symbolic(Bij, Bi0, P0, pm, u0, um):
        t0, tL = np.empty(6), np.empty((6, n))
        if _compiled.velocities(_compiled.packed(robot)[0], Bij, Bi0, P0, pm, u0, um, t0, tL):
            raise chk.ResultNotFinite('Velocities')
        return VelocitiesResult(t0, tL)
    t0 = P0 @ u0
    tL = bk.zeros((6, n), Bij, Bi0, P0, pm, u0, um)
    for i, joint in enumerate(robot.joints):
        p = joint.parent_link
        tL[:, i] = Bi0[:, :, i] @ t0 if p == 0 else Bij[:, :, i, p - 1] @ tL[:, p - 1]
        if joint.type != FIXED:
            tL[:, i] = tL[:, i] + pm[:, i] * um[joint.q_id - 1]
    return VelocitiesResult(t0, tL)
