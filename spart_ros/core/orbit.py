"""
A circular orbit as the environment of a spacecraft robot: LVLH frames, tidal loads, CW motion.

The robot moves near a **reference point** (the target point, origin of the LVLH frame) that
falls freely on a circular orbit of radius ``a`` about a central body of gravitational parameter
``mu``, with mean motion ``n = sqrt(mu / a^3)`` (Earth by default: :data:`EARTH_MU`).

Frames (Hill's convention, also called RSW or RIC; :data:`CONVENTION`):

- **LVLH** (local vertical, local horizontal), rotating: origin at the reference point, x radial
  (away from the central body), y along-track (the direction of the orbital velocity), z orbit
  normal (along the orbital angular momentum).  It turns at ``n`` about its z axis.
- **N**, the frame the plants integrate in: origin at the reference point, axes those of LVLH at
  orbit angle 0 (time 0), not rotating.  It falls with the reference point, so the central
  body's uniform pull is gone from it and only the tidal (gravity-gradient) field remains.  LVLH
  axes in N at time t: ``C(t) = Rz(n t)`` (:meth:`CircularOrbit.lvlh_rotation`).

The CCSDS / NASA LVLH frame (z nadir, y opposite the orbit normal, x = y x z, along-track on a
circular orbit) has the same origin: ``v_hill = HILL_FROM_CCSDS @ v_ccsds``
(:data:`HILL_FROM_CCSDS`; its transpose the other way).

Loads on a body of mass m, CoM at r (in N, from the reference point), inertia I about its CoM (in
N), where e(t) = C(t) [1, 0, 0] is the radial unit vector:

- model ``'linear'`` (Hill / Clohessy-Wiltshire, the gravity field to first order in r / a):
  force ``m n^2 (3 e (e . r) - r)``, torque about the CoM ``3 n^2 e x (I e)``, the
  gravity-gradient torque ``3 n^2 (c x I c)`` of the nadir direction c = -e; the system's CoM
  then follows the Clohessy-Wiltshire equations exactly (:func:`clohessy_wiltshire`);
- model ``'nonlinear'``: the exact difference between the central body's point-mass gravity at
  the body and at the reference point, ``-mu d / |d|^3 + mu e / a^2`` with d = a e + r (computed
  without cancellation), and the torque ``3 mu / |d|^3 (u x I u)``, ``u = d / |d|``: the two-body
  problem a full-orbit simulator (Basilisk) integrates, for separations where the linear model's
  error (of relative order r / a) matters.

Pure numpy; no ROS.
"""

from dataclasses import dataclass
import math

import numpy as np

from . import checks as chk
from .errors import InputError

__all__ = [
    'CircularOrbit',
    'EARTH_MU',
    'EARTH_RADIUS',
    'ORBIT_MODELS',
    'CONVENTION',
    'HILL_FROM_CCSDS',
    'clohessy_wiltshire',
    'jacobi_integral',
]

#: Earth's gravitational parameter [m^3/s^2] (IERS 2010 / WGS 84 value, with the atmosphere)
EARTH_MU = 3.986004418e14
#: Earth's equatorial radius [m] (WGS 84): altitudes are above it
EARTH_RADIUS = 6378137.0
#: 'linear': Hill / Clohessy-Wiltshire tidal field; 'nonlinear': exact point-mass difference
ORBIT_MODELS = ('linear', 'nonlinear')
#: the LVLH axes the readouts use
CONVENTION = 'hill: x radial (away from the central body), y along-track, z orbit normal'
#: v_hill = HILL_FROM_CCSDS @ v_ccsds: the CCSDS/NASA LVLH axes (x along-track, y -orbit normal,
#: z nadir) as columns in Hill's
HILL_FROM_CCSDS = np.array([[0.0, 0.0, -1.0], [1.0, 0.0, 0.0], [0.0, -1.0, 0.0]])
HILL_FROM_CCSDS.setflags(write=False)


def _positive(name, value):
    v = chk.scalar(name, value)
    if not v > 0.0:
        raise InputError(f'{name}: expected a positive number, got {v}')
    return v


@dataclass(frozen=True)
class CircularOrbit:
    """
    A circular orbit of the reference point (see the module docstring).

    Build it with :meth:`make` (altitude or mean motion).  ``mean_motion`` n [rad/s], ``mu``
    [m^3/s^2], ``body_radius`` [m] (altitudes are above it), ``model`` one of
    :data:`ORBIT_MODELS`.  Derived: ``radius`` a = (mu / n^2)^(1/3) [m], ``altitude``,
    ``period`` 2 pi / n [s], ``speed`` n a [m/s].
    """

    mean_motion: float
    mu: float = EARTH_MU
    body_radius: float = EARTH_RADIUS
    model: str = 'linear'

    @classmethod
    def make(
        cls, altitude=None, mean_motion=None, mu=EARTH_MU, body_radius=EARTH_RADIUS, model='linear'
    ):
        """
        Return the orbit at ``altitude`` [m] above the body's radius or of ``mean_motion`` [rad/s].

        ``mu``: the central body's gravity parameter [m^3/s^2], ``body_radius`` its radius [m],
        ``model``: 'linear' or 'nonlinear'.  Exactly one of the two; InputError names a bad value
        (a non-positive altitude, mean motion, mu or radius; an unknown model).
        """
        mu = _positive('orbit mu', mu)
        body_radius = chk.scalar('orbit body_radius', body_radius)
        if body_radius < 0.0:
            raise InputError(f'orbit body_radius: expected a number >= 0, got {body_radius}')
        if model not in ORBIT_MODELS:
            raise InputError(f'orbit model: expected one of {list(ORBIT_MODELS)}, got {model!r}')
        if (altitude is None) == (mean_motion is None):
            raise InputError(
                'orbit: give either the altitude [m] or the mean motion [rad/s], not '
                + ('both' if altitude is not None else 'neither')
            )
        if altitude is not None:
            altitude = _positive('orbit altitude', altitude)
            n = math.sqrt(mu / (body_radius + altitude) ** 3)
        else:
            n = _positive('orbit mean_motion', mean_motion)
        return cls(float(n), float(mu), float(body_radius), model)

    @property
    def radius(self):
        return (self.mu / self.mean_motion**2) ** (1.0 / 3.0)

    @property
    def altitude(self):
        return self.radius - self.body_radius

    @property
    def period(self):
        return 2.0 * math.pi / self.mean_motion

    @property
    def speed(self):
        return self.mean_motion * self.radius

    @property
    def angular_velocity(self):
        """Return LVLH's angular velocity (3,) relative to N: (0, 0, n), in either frame."""
        return np.array([0.0, 0.0, self.mean_motion])

    def describe(self):
        """Return one line: radius, altitude, mean motion, period, mu, model, convention."""
        return (
            f'circular orbit of radius {self.radius:.6g} m (altitude {self.altitude:.6g} m), mean '
            f'motion {self.mean_motion:.6g} rad/s, period {self.period:.6g} s, mu {self.mu:.10g} '
            f'm^3/s^2, {self.model} tidal model; LVLH axes: {CONVENTION}'
        )

    # -- frames -------------------------------------------------------------------------
    def lvlh_rotation(self, t):
        """Return C (3, 3): the LVLH axes in N at time ``t`` [s] (columns), Rz(n t)."""
        c, s = math.cos(self.mean_motion * t), math.sin(self.mean_motion * t)
        return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])

    def radial(self, t):
        """Return e (3,): the radial unit vector (LVLH x) in N at time ``t``."""
        a = self.mean_motion * t
        return np.array([math.cos(a), math.sin(a), 0.0])

    def to_lvlh(self, t, R, p, v_b, w_b):
        """
        Return a body frame's state in LVLH from its state in N at time ``t``.

        ``R`` (3, 3) body -> N, ``p`` (3,) origin in N, ``v_b`` (3,) the origin's velocity and
        ``w_b`` (3,) the angular velocity, both relative to N and expressed in the body frame.
        Returns (R, p, v_b, w_b) with R body -> LVLH, p in LVLH, v_b and w_b relative to LVLH (the
        rates of that pose) in the body frame.
        """
        C = self.lvlh_rotation(t)
        W = self.angular_velocity
        return (
            C.T @ R,
            C.T @ p,
            v_b - R.T @ np.cross(W, p),
            w_b - R.T @ W,
        )

    def from_lvlh(self, t, R, p, v_b, w_b):
        """
        Return the inverse of :meth:`to_lvlh`: the state in N of a state in LVLH at ``t``.

        ``R``, ``p``, ``v_b``, ``w_b``: the LVLH state (as :meth:`to_lvlh` returns it).
        """
        C = self.lvlh_rotation(t)
        W = self.angular_velocity
        R_n, p_n = C @ R, C @ p
        return R_n, p_n, v_b + R_n.T @ np.cross(W, p_n), w_b + R_n.T @ W

    # -- loads ----------------------------------------------------------------------------
    def accelerations(self, t, r):
        """
        Return the tidal acceleration (k, 3) at time ``t`` [s] at points ``r`` (k, 3) of N.

        The acceleration a freely moving point there has in N ('linear' or 'nonlinear' model).
        """
        r = np.asarray(r, dtype=float)
        e = self.radial(t)
        n2 = self.mean_motion**2
        if self.model == 'linear':
            return n2 * (3.0 * np.multiply.outer(r @ e, e) - r)
        a = self.radius
        # d = a e + r, |d|^2 = a^2 (1 + q): (a / |d|)^3 - 1 = (1 + q)^-1.5 - 1 without cancellation
        q = (2.0 * (r @ e) + np.einsum('ki,ki->k', r, r) / a) / a
        f = a * np.expm1(-1.5 * np.log1p(q))
        scale = np.exp(-1.5 * np.log1p(q))
        return -n2 * (scale[:, None] * r + np.multiply.outer(f, e))

    def loads(self, t, mass, com, rotation, inertia):
        """
        Return (forces (k, 3), torques (k, 3)) on k bodies, in N, torques about their CoMs.

        ``t``: the time [s]; ``mass`` (k,) [kg]; ``com`` (k, 3) CoM positions in N [m];
        ``rotation`` (k, 3, 3) each body's inertia frame -> N; ``inertia`` (k, 3, 3) inertia about
        the CoM in that frame, or (k, 3) its principal moments when the frame is principal.
        """
        com = np.asarray(com, dtype=float)
        rotation = np.asarray(rotation, dtype=float)
        inertia = np.asarray(inertia, dtype=float)
        forces = np.asarray(mass, dtype=float)[:, None] * self.accelerations(t, com)
        if self.model == 'linear':
            u = np.broadcast_to(self.radial(t), com.shape)
            gain = np.full(len(com), 3.0 * self.mean_motion**2)
        else:
            d = self.radius * self.radial(t) + com
            dist = np.linalg.norm(d, axis=1)
            u = d / dist[:, None]
            gain = 3.0 * self.mu / dist**3
        u_b = np.einsum('kji,kj->ki', rotation, u)  # in each body's frame
        Iu_b = inertia * u_b if inertia.ndim == 2 else np.einsum('kij,kj->ki', inertia, u_b)
        Iu = np.einsum('kij,kj->ki', rotation, Iu_b)
        torques = gain[:, None] * np.cross(u, Iu)
        return forces, torques


def clohessy_wiltshire(n, r0, v0, t):
    """
    Return (r (k, 3), v (k, 3)): the Clohessy-Wiltshire motion in LVLH (Hill) at times t (k,).

    ``n`` mean motion [rad/s]; ``r0``, ``v0`` (3,) position and velocity relative to LVLH at t = 0.
    The closed-form solution of x'' = 3 n^2 x + 2 n y', y'' = -2 n x', z'' = -n^2 z.
    """
    n = _positive('n', n)
    x0, y0, z0 = chk.vector('r0', r0, 3)
    u0, w0, s0 = chk.vector('v0', v0, 3)
    t = np.atleast_1d(np.asarray(t, dtype=float))
    c, s = np.cos(n * t), np.sin(n * t)
    x = (4.0 - 3.0 * c) * x0 + s / n * u0 + 2.0 / n * (1.0 - c) * w0
    y = 6.0 * (s - n * t) * x0 + y0 - 2.0 / n * (1.0 - c) * u0 + (4.0 * s - 3.0 * n * t) / n * w0
    z = c * z0 + s / n * s0
    vx = 3.0 * n * s * x0 + c * u0 + 2.0 * s * w0
    vy = 6.0 * n * (c - 1.0) * x0 - 2.0 * s * u0 + (4.0 * c - 3.0) * w0
    vz = -n * s * z0 + c * s0
    return np.stack([x, y, z], axis=1), np.stack([vx, vy, vz], axis=1)


def jacobi_integral(n, r, v):
    """
    Return the Jacobi integral (k,) per unit mass of LVLH positions ``r`` and velocities ``v``.

    Both (k, 3), ``n`` the mean motion.  ``(|v|^2 - 3 n^2 x^2 + n^2 z^2) / 2``: the energy in
    the rotating frame, constant along the
    Clohessy-Wiltshire motion.
    """
    r, v = np.atleast_2d(r), np.atleast_2d(v)
    return 0.5 * (np.einsum('ki,ki->k', v, v) - 3.0 * n * n * r[:, 0] ** 2 + n * n * r[:, 2] ** 2)
