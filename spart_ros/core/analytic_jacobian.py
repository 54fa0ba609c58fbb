"""
Analytic (Euler-angle-rate) Jacobians and their time derivatives.

The geometric Jacobian (:func:`~spart_ros.core.jacobians.point_jacobian`) maps u to
[angular velocity of the link; velocity of the point], inertial frame.  The analytic Jacobian
maps u to [rates of the link's Euler angles; velocity of the point]:

    Ja = [T(angles)^-1 J_w; J_v],    omega = T(angles) d(angles)/dt,

for the sequences of SPART's attitude helpers, angles = [phi, theta, psi] about x, y, z:

- ``'ZYX'``: R = Rz(psi) Ry(theta) Rx(phi), i.e. ``Angles321_DCM(angles).T`` (URDF rpy);
- ``'XYZ'``: R = Rx(phi) Ry(theta) Rz(psi), i.e. ``Angles123_DCM(angles).T``;

R the active rotation of the link CoM frame (SPART's RL).  Both sequences have their
representation singularity (gimbal lock) at theta = +-pi/2, cos(theta) = 0, where
T is singular and the angle rates are undefined: the numeric functions raise
:class:`RepresentationSingularityError` when ``|cos(theta)|`` < ``SINGULARITY_TOL`` (rates would be
amplified by more than 1e6).  T^-1 is written with the entries of R (no arctangent), so the
functions work on sympy expressions too (no check there: the docstring is the warning).
"""

from collections import namedtuple

import numpy as np

from . import _backend as bk
from . import _checks as chk
from .errors import SpartError
from .jacobians import point_jacobian, point_jacobian_dot

SEQUENCES = ('ZYX', 'XYZ')
#: |cos(theta)| below this is the representation singularity (an error, numeric inputs).
SINGULARITY_TOL = 1e-6

AnalyticJacobianResult = namedtuple('AnalyticJacobianResult', 'Ja0 Jam')
AnalyticJacobianDotResult = namedtuple('AnalyticJacobianDotResult', 'Ja0dot Jamdot')


class RepresentationSingularityError(SpartError, ValueError):
    """The Euler angles are at their singularity (theta = +-pi/2): angle rates are undefined."""


def _sequence(sequence):
    if sequence not in SEQUENCES:
        raise chk.InputError(f'sequence: expected one of {SEQUENCES}, got {chk.given(sequence)}')
    return sequence


def euler_angles(R, sequence='ZYX'):
    """
    Return [phi, theta, psi] (rad, about x, y, z) of a numeric rotation matrix R (body -> world).

    ``sequence``: 'ZYX' or 'XYZ' (module docstring).

    theta in [-pi/2, pi/2]; see the module docstring for the sequences. At theta = +-pi/2 the split
    between phi and psi is arbitrary (phi = 0 is returned there).
    """
    sequence = _sequence(sequence)
    R = chk.numeric('R', chk.rotation('R', R), 'euler_angles')
    if sequence == 'ZYX':
        s, a, b, c, d = -R[2, 0], R[2, 1], R[2, 2], R[1, 0], R[0, 0]
    else:
        s, a, b, c, d = R[0, 2], -R[1, 2], R[2, 2], -R[0, 1], R[0, 0]
    theta = np.arcsin(np.clip(s, -1.0, 1.0))
    if np.hypot(a, b) < 1e-12:  # gimbal lock: only a sum or difference of phi and psi is defined
        psi = np.arctan2(-R[0, 1], R[1, 1]) if sequence == 'ZYX' else np.arctan2(R[1, 0], R[1, 1])
        return np.array([0.0, theta, psi])
    return np.array([np.arctan2(a, b), theta, np.arctan2(c, d)])


def euler_rate_matrix(angles, sequence='ZYX'):
    """
    Return T (3, 3) with omega (inertial frame) = T @ d/dt ``angles`` [phi, theta, psi].

    ``sequence``: 'ZYX' or 'XYZ' (module docstring).
    """
    sequence = _sequence(sequence)
    angles = chk.vector('angles', angles, 3)
    phi, theta, psi = angles[0], angles[1], angles[2]
    T = bk.zeros((3, 3), angles)
    if sequence == 'ZYX':
        cp, sp, ct, st = bk.cos(psi), bk.sin(psi), bk.cos(theta), bk.sin(theta)
        T[:, 0] = [cp * ct, sp * ct, -st]
        T[:, 1] = [-sp, cp, 0]
        T[2, 2] = 1
    else:
        cf, sf, ct, st = bk.cos(phi), bk.sin(phi), bk.cos(theta), bk.sin(theta)
        T[0, 0] = 1
        T[:, 1] = [0, cf, sf]
        T[:, 2] = [st, -sf * ct, cf * ct]
    return T


def _inverse_rate_matrix(R, sequence, where):
    """T^-1 (3, 3) from the entries of the rotation R; the singularity checked if numeric."""
    if sequence == 'ZYX':
        c2 = R[0, 0] ** 2 + R[1, 0] ** 2  # cos(theta)^2
    else:
        c2 = R[1, 2] ** 2 + R[2, 2] ** 2
    if not bk.is_symbolic(R) and not c2 >= SINGULARITY_TOL**2:
        raise RepresentationSingularityError(
            f'{where}: the {sequence} Euler angles of the link are at their singularity (theta = '
            f'+-pi/2, |cos(theta)| = {float(np.sqrt(c2)):.3g} < {SINGULARITY_TOL:g}): the angle '
            'rates are undefined there (use the geometric Jacobian, or the '
            f'{"XYZ" if sequence == "ZYX" else "ZYX"} sequence)'
        )
    c = bk.sqrt(c2)
    Ti = bk.zeros((3, 3), R)
    if sequence == 'ZYX':
        Ti[0, :] = [R[0, 0] / c2, R[1, 0] / c2, 0]
        Ti[1, :] = [-R[1, 0] / c, R[0, 0] / c, 0]
        Ti[2, :] = [-R[0, 0] * R[2, 0] / c2, -R[1, 0] * R[2, 0] / c2, 1]
    else:
        Ti[0, :] = [1, -R[0, 2] * R[1, 2] / c2, -R[0, 2] * R[2, 2] / c2]
        Ti[1, :] = [0, R[2, 2] / c, -R[1, 2] / c]
        Ti[2, :] = [0, R[1, 2] / c2, R[2, 2] / c2]
    return Ti


def _rate_matrix_dot(R, rates, sequence):
    """
    dT/dt (3, 3) for the angle rates ``rates``, from the entries of R.

    Sin and cos of the angles read off R, as in _inverse_rate_matrix.
    """
    phid, thetad, psid = rates[0], rates[1], rates[2]
    D = bk.zeros((3, 3), R, rates)
    if sequence == 'ZYX':
        c = bk.sqrt(R[0, 0] ** 2 + R[1, 0] ** 2)
        ct, st, cp, sp = c, -R[2, 0], R[0, 0] / c, R[1, 0] / c
        D[:, 0] = [
            -sp * ct * psid - cp * st * thetad,
            cp * ct * psid - sp * st * thetad,
            -ct * thetad,
        ]
        D[:, 1] = [-cp * psid, -sp * psid, 0]
    else:
        c = bk.sqrt(R[1, 2] ** 2 + R[2, 2] ** 2)
        ct, st, cf, sf = c, R[0, 2], R[2, 2] / c, -R[1, 2] / c
        D[:, 1] = [0, -sf * phid, cf * phid]
        D[:, 2] = [
            ct * thetad,
            -cf * ct * phid + sf * st * thetad,
            -sf * ct * phid - cf * st * thetad,
        ]
    return D


def _rows(Ti, J):
    Ja = bk.zeros(J.shape, Ti, J)
    Ja[0:3, :] = Ti @ J[0:3, :]
    Ja[3:6, :] = J[3:6, :]
    return Ja


def _link_rotation(link, R0, RL, robot):
    i = chk.link_id('link', link, robot)
    return R0 if i == 0 else RL[:, :, i - 1]


@chk.checked
def point_analytic_jacobian(link, offset, R0, r0, RL, rL, P0, pm, robot, sequence='ZYX'):
    """
    Analytic Jacobian of a point on ``link``.

    Rows [rates of the link's Euler angles [phi, theta, psi] in ``sequence`` ('ZYX' or 'XYZ');
    velocity of the point, inertial frame].

    Arguments as :func:`~spart_ros.core.jacobians.point_jacobian` (``offset`` (3,) from the link
    CoM in its CoM frame, None = the CoM).  Returns (Ja0 (6, 6), Jam (6, n_q)):
    d/dt [angles; point] = Ja0 u0 + Jam um.  Raises RepresentationSingularityError at
    theta = +-pi/2 (gimbal lock, see the module docstring).
    """
    sequence = _sequence(sequence)
    J0, Jm = point_jacobian(link, offset, R0, r0, RL, rL, P0, pm, robot)
    Ti = _inverse_rate_matrix(
        _link_rotation(link, R0, RL, robot), sequence, 'point_analytic_jacobian'
    )
    return AnalyticJacobianResult(_rows(Ti, J0), _rows(Ti, Jm))


@chk.checked
def point_analytic_jacobian_dot(
    link, offset, R0, r0, t0, RL, rL, tL, P0, pm, robot, sequence='ZYX'
):
    """
    Time derivative of :func:`point_analytic_jacobian` at the twists ``t0`` (6,), ``tL`` (6, n).

    ``link``, ``offset``: as :func:`~spart_ros.core.jacobians.point_jacobian_dot`;
    ``sequence``: 'ZYX' or 'XYZ' (module docstring). Returns (Ja0dot (6, 6),
    Jamdot (6, n_q)): d2/dt2 [angles; point] = Ja [u0dot; umdot] + Jadot u. Raises
    RepresentationSingularityError at theta = +-pi/2.
    """
    sequence = _sequence(sequence)
    i = chk.link_id('link', link, robot)
    J0, Jm = point_jacobian(link, offset, R0, r0, RL, rL, P0, pm, robot)
    J0dot, Jmdot = point_jacobian_dot(link, offset, R0, r0, t0, RL, rL, tL, P0, pm, robot)
    R = _link_rotation(i, R0, RL, robot)
    Ti = _inverse_rate_matrix(R, sequence, 'point_analytic_jacobian_dot')
    omega = t0[0:3] if i == 0 else tL[0:3, i - 1]
    rates = Ti @ omega
    Tidot = -Ti @ _rate_matrix_dot(R, rates, sequence) @ Ti  # d(T^-1)/dt = -T^-1 dT/dt T^-1
    out = []
    for J, Jdot in ((J0, J0dot), (Jm, Jmdot)):
        D = bk.zeros(J.shape, Ti, J, Jdot)
        D[0:3, :] = Tidot @ J[0:3, :] + Ti @ Jdot[0:3, :]
        D[3:6, :] = Jdot[3:6, :]
        out.append(D)
    return AnalyticJacobianDotResult(*out)
