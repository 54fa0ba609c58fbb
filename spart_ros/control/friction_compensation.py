"""
How a law compensates the joints' damping and Coulomb friction in a digital loop (pure numpy).

The model (:mod:`spart_ros.core.joint_friction`) gives each joint the dissipation
f(w) = d w + F tanh(w / v) against its velocity w; a controller holds each effort for its control
period h (zero-order hold), and a joint whose inertia m is small against its damping settles to
its new velocity well within the period (time constant T = m / d: 0.07 ms for a UFactory xArm7's
last joint, against a 1 ms period; near rest the friction's slope F / v shortens it to 1.4 us).
Compensating the dissipation at the measured velocity then acts one period late and the joint
runs away; at the velocity of the period's middle it is right only for T >> h.

**The law** (:meth:`FrictionCompensation.correction`, for the computed-torque laws, whose
inverse dynamics commands the acceleration qdd_cmd).  Over the period the commanded motion
changes each joint's velocity from qd to qd + h qdd_cmd.  Per joint, with the dissipation
linearized (slope s = f'(w) at the period's middle velocity) and the joint's inertia m (the
diagonal of the mass matrix, the other joints moving as commanded), a constant effort over h
reaches exactly that velocity when the dissipation is compensated at

    w = qd + c(x) h qdd_cmd,   x = h s / m,   c(x) = 1 / (1 - exp(-x)) - 1 / x

(the exact zero-order-hold discretization of m qdd = e - s qd: c rises from 1/2 for a slow
joint, the period's middle, to 1 for a joint that settles within the period, its end), and the
law adds f(w) (Coulomb part times ``scale``, the ``friction_compensation`` setting) in place of the
f(qd) that inverse dynamics adds.  For a joint that settles within the period this sets the
velocity it settles to: the effort d w + F tanh(w / v) has the single steady velocity w (f is
increasing), so the commanded velocity is reached whatever d, F and m, and the loop on that joint
is the PD law integrated by the semi-implicit Euler rule (qd_next = qd + h qdd_cmd, then q_next =
q + h qd_next), whose error dynamics have the determinant 1 - h kd and the trace 2 - h kd - h^2 kp:
stable for 0 < h kd < 2 and h^2 kp < 4 - 2 h kd (the defaults at 1 kHz: 0.02 and 1e-4).  For a
slow joint it is the period's middle (c near 1/2), exact to first order in h / T.  In between it
is exact for the linearized joint.
The friction's feed-forward is in qdd_cmd (the reference's velocity and acceleration), so a joint
starting from rest gets its breakaway effort at once.

The period h is the time since the previous command (the last one, when a tick has none: the
first).  The inertia is the fast path's at the tick's configuration.  Where a joint's h s / m is
large (above :data:`COUPLED_ABOVE`) the linear part is the exact one of the coupled joints instead
of the per-joint one: M qdd = e - S u held over h reaches qd + h qdd_cmd for
e = S qd + M psi(h M^-1 S) qdd_cmd, psi(X) = X (I - exp(-X))^-1 (computed by the symmetric
eigenproblem of L^-1 S L^-T, M = L L'; S the slopes at the period's middle), and the per-joint law
keeps only what is not linear in the dissipation.

**Where it cannot be compensated** (:meth:`FrictionCompensation.fast_joints`): the laws without
a commanded acceleration (the impedance modes, gravity compensation) cannot set a joint's velocity
within a period; on a joint that settles within the control period their velocity feedback and
the compensation at the measured velocity act one period late.  Such a law names those joints and
their time constants once, at build (``notes``), for the nominal 1 kHz period.
"""

import numpy as np

from ..core.errors import InputError
from ..native.compiled import friction_correction as _friction_correction

__all__ = [
    'FrictionCompensation',
    'NOMINAL_PERIOD',
    'discrete_weight',
    'uncompensated_notes',
    'saturation_notes',
]

#: h s / m of a joint above which the compensation's linear part is the coupled one (below it the
#: per-joint law is exact to second order in it and costs a fifth)
COUPLED_ABOVE = 0.6
#: ticks a damping-only robot's weights are kept (FrictionCompensation.needs_inertia)
REFRESH = 10
#: s: the control period the laws' notes assume (spart_sim and ros2_control's usual 1 kHz)
NOMINAL_PERIOD = 1e-3


def discrete_weight(x):
    """
    Return c(x) = 1 / (1 - exp(-x)) - 1 / x, elementwise (x >= 0; 1/2 at 0, toward 1 for large x).

    Where in the period to compensate a linear damping of rate x / h (see the module).
    """
    x = np.asarray(x, dtype=float)
    mid = np.clip(x, 1e-4, 40.0)  # beyond 40 exp(-x) is below rounding (and soon subnormal: slow)
    return np.where(
        x < 1e-4,
        0.5 + x / 12.0,
        np.where(x > 40.0, 1.0 - 1.0 / np.maximum(x, 40.0), -1.0 / np.expm1(-mid) - 1.0 / mid),
    )


class FrictionCompensation:
    """
    The joints' damping and Coulomb friction compensation of a law (see the module docstring).

    ``dynamics``: the law's FastDynamics (or MimicFastDynamics: independent coordinates, the
    terms acting in the full ones).  ``active`` is False when the model leaves the joint dynamics
    out or declares neither damping nor friction (then nothing is computed).  ``scale``: the part
    of the Coulomb friction compensated (``friction_compensation``, 0..1; the damping is always
    compensated whole).
    """

    def __init__(self, dynamics, scale=1.0):
        model = dynamics.model
        self.damping, self.friction = model.damping, model.friction
        self.velocity = model.friction_velocity
        self.active = bool(model.joint_dynamics and (self.damping.any() or self.friction.any()))
        coordinates = dynamics.robot.coordinates
        self._G = None if coordinates.is_identity else np.array(coordinates.G)
        self._G2 = None if self._G is None else self._G * self._G
        self.scale = float(scale)
        self.period = 0.0  # the last control period seen [s]
        self.has_friction = bool(model.joint_dynamics and self.friction.any())
        # a linear law's slope per coordinate, G2' d (damping only: a cheaper tick)
        self._damping = self.damping if self._G2 is None else self._G2.T @ self.damping
        self._gain = None  # damping only, every x small: d c, kept for REFRESH ticks
        self._age = 0
        # the compiled correction's arrays (G: a placeholder without one) and scratch
        self.n = dynamics.n_q
        n_full = len(self.damping)
        self._G_kernel = np.ascontiguousarray(
            np.zeros((n_full, self.n)) if self._G is None else self._G, dtype=float
        )
        self._work = np.zeros((5, self.n, self.n))
        self._vectors = np.zeros((10, max(self.n, n_full)))

    def _full(self, x):
        return x if self._G is None else self._G @ x

    def _independent(self, f):
        return f if self._G is None else self._G.T @ f

    def dissipation(self, qd, scale=1.0):
        """Return G' f(G qd) (n,): the model's damping and friction (Coulomb part x ``scale``)."""
        w = self._full(qd)
        return self._independent(
            self.damping * w + (scale * self.friction) * np.tanh(w / self.velocity)
        )

    def slopes(self, qd):
        """Return the dissipation's slope (n,) at velocities ``qd``: G2' (d + F/v sech^2(w/v))."""
        w = self._full(qd)
        t = np.tanh(w / self.velocity)
        s = self.damping + (self.friction / self.velocity) * (1.0 - t * t)
        return s if self._G2 is None else self._G2.T @ s

    def needs_inertia(self, dt):
        """
        Return whether :meth:`correction` needs the mass matrix this tick (``dt``: its period).

        Always with friction; for a damping-only robot whose joints are all slow, every
        :data:`REFRESH` ticks (and when the period changes): the weights c change little in that
        time (c = 1/2 + x / 12 to 3e-6) and the tick saves a mass matrix.
        """
        return self._gain is None or self._age >= REFRESH or (dt > 0.0 and dt != self.period)

    def correction(self, qd, qdd, dt, inertia):
        """
        Return (n,) efforts to add to inverse dynamics with the joint dynamics at (qd, qdd).

        f(w) - f(qd) with w = qd + c(h s / m) h qdd per joint (module docstring), and where a
        joint's x = h s / m exceeds :data:`COUPLED_ABOVE`, the linear part exact for the coupled
        joints.  ``qdd`` the commanded acceleration, ``dt`` the time since the previous command
        (0: the last period), ``inertia`` (n, n) the joints' mass matrix at this configuration.
        A new array.
        """
        if dt > 0.0:
            self.period = dt
        h = self.period
        if inertia is None and self._gain is not None:  # (needs_inertia said so)
            self._age += 1
            return self._gain * (h * qdd)
        self._gain = None
        if h <= 0.0:
            return self.dissipation(qd, self.scale) - self.dissipation(qd)
        m = np.diagonal(inertia)
        if not self.has_friction:  # linear: D c h qdd, c by its series where x is small
            x = (h * self._damping) / m
            if x.max() <= COUPLED_ABOVE:
                c = 0.5 + x * (1.0 / 12.0 - x * x * (1.0 / 720.0))  # error < 3e-6 at x = 0.6
                self._gain, self._age = self._damping * c, 0
                return self._gain * (h * qdd)
        # the per-joint weights, and where a joint's h s / m passes COUPLED_ABOVE the coupled
        # linear part: M qdd = e - S u over h from qd reaches qd + h qdd for e - S qd =
        # M psi(h M^-1 S) qdd, psi(X) = X (1 - exp(-X))^-1 (by the eigenproblem of L^-1 S L^-T,
        # M = L L'), in place of the per-joint law's linear part: compiled
        # (spart_ros.native.control_kernels.friction_correction)
        out = np.empty(self.n)
        code = _friction_correction(
            qd,
            qdd,
            h,
            inertia,
            self.damping,
            self.friction,
            self.velocity,
            self.scale,
            self._G_kernel,
            self._G is not None,
            COUPLED_ABOVE,
            self._work,
            self._vectors,
            out,
        )
        if code:
            raise InputError(
                "friction compensation: the joints' mass matrix is not positive definite"
            )
        return out

    def efforts(self, qd, qdd, reference_velocity, dt):
        """
        Return (n,) the compensation d (qd + qdd dt / 2) + scale F sgn_v(reference_velocity).

        For a law whose inverse dynamics leaves the joint friction out and commands no
        acceleration (the impedance modes: damping at the period's middle, Coulomb friction at
        the reference's velocity, feed-forward); a new array (zeros when not ``active``).
        """
        w, vr = self._full(qd + (0.5 * dt) * qdd), self._full(reference_velocity)
        return self._independent(
            self.damping * w + (self.scale * self.friction) * np.tanh(vr / self.velocity)
        )

    def time_constants(self, inertia):
        """
        Return (n,) each coordinate's dissipation time constant at rest [s], m / f'(0).

        ``inertia`` (n,): the diagonal of the joints' mass matrix (inf where nothing dissipates).
        """
        s = self.slopes(np.zeros(len(inertia)))
        with np.errstate(divide='ignore'):
            T = np.asarray(inertia, dtype=float) / np.maximum(s, 1e-300)
        return np.where(s > 0.0, T, np.inf)

    def fast_joints(self, names, inertia, period=NOMINAL_PERIOD):
        """
        Return [(name, time constant [s])] of the coordinates that settle within ``period``.

        ``names`` (n,) the coordinates' names, ``inertia`` (n,) their mass-matrix diagonal.
        """
        T = self.time_constants(inertia)
        return [(n, float(t)) for n, t in zip(names, T) if t < period]


def uncompensated_notes(mode, dynamics, compensation, period=NOMINAL_PERIOD):
    """
    Return the notes (list of str) of a law without a commanded acceleration: one per fast joint.

    The coordinates whose dissipation time constant (at rest, at the zero configuration) is below
    ``period``: ``mode`` cannot compensate their damping and friction at that rate (module
    docstring).  ``dynamics``: the law's FastDynamics; ``compensation``: the law's
    :class:`FrictionCompensation`.
    """
    if not compensation.active:
        return []
    n = dynamics.n_q
    inertia = np.diagonal(dynamics.mass_matrix(np.eye(3), np.zeros(3), np.zeros(n)))[6:].copy()
    names = list(dynamics.robot.coordinates.names)
    return [
        f'joint {name!r}: its damping and friction settle it in {T * 1e3:.3g} ms (time constant '
        f'at rest, zero configuration), within a {period * 1e3:g} ms control period: {mode} '
        'cannot compensate them at that rate (it compensates them at the measured velocity, one '
        'period late; computed_torque compensates them exactly)'
        for name, T in compensation.fast_joints(names, inertia, period)
    ]


def saturation_notes(dynamics, compensation):
    """
    Return the notes (list of str) of the joints whose dissipation exceeds their effort limit.

    A joint whose damping and friction at its URDF velocity limit take more than its URDF effort
    limit cannot be compensated above the speed where they reach it (the efforts are clamped):
    said once, at build, with that speed, rather than found by a tracking fault mid-motion.
    ``dynamics``: the law's FastDynamics; ``compensation``: its :class:`FrictionCompensation`.
    """
    if not compensation.active:
        return []
    out = []
    joints = {j.name: j for j in dynamics.robot.joints}
    for name in dynamics.robot.coordinates.names:
        j = joints[name]
        d, F = j.dynamics.damping, j.dynamics.friction * compensation.scale
        lim = j.limits
        if not (d > 0 and lim.velocity > 0 and np.isfinite(lim.velocity) and lim.effort > 0):
            continue
        need = d * lim.velocity + F
        if need > lim.effort:
            speed = max(lim.effort - F, 0.0) / d
            out.append(
                f'joint {name!r}: its damping {d:g} N m s/rad and friction {F:g} take '
                f'{need:.4g} at its velocity limit {lim.velocity:g}, above its URDF effort limit '
                f'{lim.effort:g}: above {speed:.3g} rad/s (or m/s) it cannot be compensated (the '
                'efforts are clamped; effort_limits raises them)'
            )
    return out
