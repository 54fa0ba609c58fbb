"""
System momentum of a floating-base robot and the base reaction it implies.

With no external force the linear and angular momentum of the whole system are conserved,
so the base of a free-floating robot reacts to every joint motion.  In SPART's coordinates
(u0 = [base angular velocity in the BASE frame; base CoM velocity, inertial]) the base rows
of H u are the system momentum:

    h0 = H0 u0 + H0m um = P0' [L_r0; p],   P0 = blkdiag(R0, I3)

with L_r0 the angular momentum of every body about the base CoM r0 and p the linear
momentum, both in the inertial frame (so h0[0:3] = R0' L_r0 is projected in the base frame,
h0[3:6] = p in the inertial frame).  Solving for u0 gives the base reaction
u0 = H0^-1 (h0 - H0m um) (SPART's Base Reaction block).

Conserved quantities are the momentum about a point fixed in the inertial frame (e.g. the
origin) or about the system CoM; L_r0 itself changes as the base CoM moves, so a
controller keeps [L_origin; p] and turns it into h0 at each state
(:func:`base_momentum_from`).  Every vector here is (6,) = [angular; linear].
"""

import numpy as np

from . import _backend as bk
from . import checks as chk
from .attitude import _cross as cross
from .errors import InputError, SingularModelError


def _matrices(H0, H0m):
    """Return H0 (6, 6) and H0m (6, n_q), checked."""
    H0 = chk.array('H0', H0, (6, 6))
    H0m = chk.array('H0m', H0m, (6, None))
    return H0, H0m


def _joint_rates(um, H0m):
    """
    ``um`` checked against the joint columns of H0m.

    No robot here to say which is right: a length mismatch names both.
    """
    n = H0m.shape[1]
    try:
        return chk.vector('um', um, n)
    except InputError as err:
        if 'expected length' not in str(err):
            raise
        raise InputError(
            f'um, H0m: expected one joint rate per column of H0m ({n}), {str(err)[4:]}'
        ) from None


# --- unchecked building blocks (arguments already checked), for callers that check once per
# tick (control.free_floating); ``where`` and ``inputs`` ((name, value) pairs) name the
# computation and its arguments if a result overflows.


#: H0 scaled to a unit diagonal with a smallest eigenvalue below this is singular (the criterion
#: of spart_ros.core.invertibility, which FreeFloatingKinematics applies to the robot)
SINGULAR = 1e-10


def singular_base_inertia(H0):
    """
    Return why the locked-system inertia ``H0`` (6, 6, numeric) is singular, or ''.

    Singular also when only rounding keeps it from being so (two point masses on a line: no
    inertia about the line, cond ~1e17): scaled to a unit diagonal, its smallest eigenvalue is
    below :data:`SINGULAR` (or a diagonal entry is not positive).
    """
    d = np.diagonal(H0)
    names = ('wx', 'wy', 'wz', 'vx', 'vy', 'vz')
    if not np.all(d > 0):
        zero = [names[k] for k in range(6) if not d[k] > 0]
        return f'its diagonal is not positive for the base motion {zero}'
    s = 1.0 / np.sqrt(d)
    with chk.quiet():
        smallest = np.linalg.eigvalsh(H0 * s[:, None] * s[None, :])[0]
    if not smallest >= SINGULAR:
        return (
            f'scaled to a unit diagonal its smallest eigenvalue is {smallest:.3g} '
            f'(< {SINGULAR:g}: a base motion moves no mass, e.g. a spin about the line of point '
            'masses)'
        )
    return ''


def solve_base(H0, rhs, where, inputs, check=True):
    """
    Return H0^-1 rhs: ``H0`` (6, 6) the locked-system inertia (SPD unless the robot has no mass).

    ``rhs`` (6,) or (6, k) numeric. InputError naming H0 if it is symbolic (a solve needs numbers),
    SingularModelError if singular (``check``: also when only rounding makes it invertible:
    :func:`singular_base_inertia`; False for a caller that checked the robot once, as
    FreeFloatingKinematics does with :func:`~spart_ros.core.invertibility.check_invertible`), an
    overflow error naming ``inputs`` ((name, value) pairs); ``where``: the calling function, for
    the messages.
    """
    H0 = chk.numeric('H0', H0, f'{where} (a linear solve)')
    why = singular_base_inertia(H0) if check else ''
    if why:
        raise SingularModelError(
            f'{where}: H0 is singular: {why}; a floating base needs a system with mass and '
            'inertia about every axis'
        )
    try:
        with chk.quiet():
            out = np.linalg.solve(H0, rhs)
    except np.linalg.LinAlgError:
        raise SingularModelError(
            'H0 is singular: a floating base needs a system with mass and inertia'
        ) from None
    return chk.results(where, out, inputs)


def about_point(w0, R0, r0, point, where, inputs):
    """
    Return P0' [moment about r0; force] -> [moment about ``point``; force] (6,), inertial frame.

    ``w0`` (6,) in SPART's base coordinates (a momentum h0 or a base generalized force tau0:
    moment about the base CoM r0 in the base frame; force, inertial); ``R0`` (3, 3) base CoM
    frame -> inertial; ``r0``, ``point`` (3,) inertial.  Numeric or symbolic.  ``where`` and
    ``inputs``: the calling function and its (name, value) inputs, for an overflow's message.
    """
    out = bk.zeros(6, w0, R0, r0, point)
    with chk.quiet():
        out[3:6] = w0[3:6]
        out[0:3] = R0 @ w0[0:3] + cross(r0 - point, w0[3:6])
    return chk.results(where, out, inputs)


def center_of_mass_from_H0(H0, R0, r0):
    """
    Return the system CoM (3,), inertial frame, read off the base block ``H0`` (6, 6) of H.

    At the base pose ``R0`` (3, 3), ``r0`` (3,): H0[3:6, 0:3] = -m [r_com - r0]x R0 (m = H0[3, 3]).
    Numeric arguments; SingularModelError if m is not positive.
    """
    m = H0[3, 3]
    if not m > 0:
        raise SingularModelError('H0: total mass H0[3, 3] must be positive')
    S = H0[3:6, 0:3] @ R0.T  # -m [c]x
    return r0 + np.array([S[1, 2] - S[2, 1], S[2, 0] - S[0, 2], S[0, 1] - S[1, 0]]) / (2 * m)


def base_momentum(H0, H0m, u0, um):
    """
    Return h0 = H0 u0 + H0m um (6,): the system momentum in SPART's base coordinates.

    ``H0`` (6, 6), ``H0m`` (6, n_q) from :func:`generalized_inertia` (or ``H[:6, :6]``,
    ``H[:6, 6:]``); ``u0`` (6,), ``um`` (n_q,).  h0[0:3] is the angular momentum of the whole
    system about the base CoM projected in the base frame [kg m^2/s], h0[3:6] the linear
    momentum in the inertial frame [kg m/s].
    """
    H0, H0m = _matrices(H0, H0m)
    u0 = chk.vector('u0', u0, 6)
    um = _joint_rates(um, H0m)
    with chk.quiet():
        h0 = H0 @ u0 + H0m @ um
    return chk.results('base_momentum', h0, [('H0', H0), ('H0m', H0m), ('u0', u0), ('um', um)])


def momentum_about(h0, R0, r0, point=None):
    """
    Return [L_point; p] (6,), inertial frame, from the base-coordinate momentum ``h0`` (6,).

    ``R0`` (3, 3) base CoM frame -> inertial, ``r0`` (3,) base CoM; ``point`` (3,) fixed in
    the inertial frame (default the origin) or the system CoM.  L_point = R0 h0[0:3] +
    (r0 - point) x p.  Conserved without external loads for the origin and the CoM.
    """
    return _momentum_about('momentum_about', 'h0', h0, R0, r0, point)


def _momentum_about(where, name, h0, R0, r0, point):
    h0 = chk.vector(name, h0, 6)
    R0 = chk.rotation('R0', R0)
    r0 = chk.vector('r0', r0, 3)
    point = np.zeros(3) if point is None else chk.vector('point', point, 3)
    return about_point(h0, R0, r0, point, where, [(name, h0), ('r0', r0), ('point', point)])


def base_momentum_from(momentum, R0, r0, point=None):
    """
    Return the inverse of :func:`momentum_about`: h0 (6,) from [L_point; p] (6,), inertial frame.

    ``point`` (3,): the point the momentum is about (None: the inertial origin).  Use it to turn
    a conserved momentum (about the origin, say) into the h0 of the current state for
    :func:`base_reaction`.
    """
    momentum = chk.vector('momentum', momentum, 6)
    R0 = chk.rotation('R0', R0)
    r0 = chk.vector('r0', r0, 3)
    point = np.zeros(3) if point is None else chk.vector('point', point, 3)
    out = bk.zeros(6, momentum, R0, r0, point)
    with chk.quiet():
        out[3:6] = momentum[3:6]
        out[0:3] = R0.T @ (momentum[0:3] - cross(r0 - point, momentum[3:6]))
    return chk.results(
        'base_momentum_from', out, [('momentum', momentum), ('r0', r0), ('point', point)]
    )


def momentum_rate_about(tau0, R0, r0, point=None):
    """
    Return d/dt [L_point; p] (6,), inertial frame, from the base force of inverse dynamics.

    ``point`` (3,): the point (None: the inertial origin).

    ``tau0`` (6,): the base rows of ID for the motion (u, udot) with NO loads and no gravity
    (``inverse_dynamics`` / ``FastDynamics.inverse_dynamics``); they are P0' times the rate of
    change of the momentum about the base CoM held fixed, so the same shift as in
    :func:`momentum_about` gives the rate about any point fixed in the inertial frame (and
    about the system CoM, whose velocity is parallel to p).  Equals the resultant of the
    external wrenches about that point (zero for a free-floating robot).
    """
    return _momentum_about('momentum_rate_about', 'tau0', tau0, R0, r0, point)


def system_center_of_mass(H0, R0, r0):
    """Return system CoM (3,), inertial frame, read off H0: H0[3:6, 0:3] = -m [r_com - r0]x R0."""
    where = 'system_center_of_mass'
    H0 = chk.numeric('H0', chk.array('H0', H0, (6, 6)), where)
    R0 = chk.numeric('R0', chk.rotation('R0', R0), where)
    r0 = chk.numeric('r0', chk.vector('r0', r0, 3), where)
    with chk.quiet():
        com = center_of_mass_from_H0(H0, R0, r0)
    return chk.results(where, com, [('H0', H0), ('r0', r0)])


def reaction_jacobian(H0, H0m):
    """
    Return G = -H0^-1 H0m (6, n_q).

    The base velocity u0 each unit joint velocity causes at zero momentum (u0 = H0^-1 h0 + G um).
    Rows as u0: [angular, base frame; linear, inertial].
    """
    H0, H0m = _matrices(H0, H0m)
    H0m = chk.numeric('H0m', H0m, 'reaction_jacobian (a linear solve)')
    return -solve_base(H0, H0m, 'reaction_jacobian', [('H0', H0), ('H0m', H0m)])


def base_reaction(H0, H0m, um, h0=None):
    """
    Return base velocity u0 (6,) from momentum conservation: u0 = H0^-1 (h0 - H0m um).

    (SPART: Base Reaction block)

    ``um`` (n_q,) joint velocities; ``h0`` (6,) the system momentum in base coordinates
    (:func:`base_momentum`, or :func:`base_momentum_from` of a conserved [L; p]); default 0,
    a system at rest.  u0 = [angular velocity, base frame; CoM velocity, inertial].
    """
    H0, H0m = _matrices(H0, H0m)
    um = _joint_rates(um, H0m)
    where = 'base_reaction (a linear solve)'
    H0m, um = chk.numeric('H0m', H0m, where), chk.numeric('um', um, where)
    inputs = [('H0', H0), ('H0m', H0m), ('um', um)]
    with chk.quiet():
        rhs = -(H0m @ um)
        if h0 is not None:
            h0 = chk.numeric('h0', chk.vector('h0', h0, 6), where)
            inputs.append(('h0', h0))
            rhs += h0
    return solve_base(H0, rhs, 'base_reaction', inputs)
