"""
Model-based joint effort laws on the compiled fast path (pure numpy, no ROS).

Every law takes the measured state in the ROS base convention (``base``: a
:data:`~spart_ros.core.base_state.LinkBase`-like object with R_b, p_b (pose of the
URDF base link frame b in the world) and v_b, w_b (twist of b expressed in b, REP 105)), the
joint positions ``q`` and velocities ``qd`` (n,) in the fast path's joint coordinates, the
joint reference (:data:`~spart_ros.control.trajectory.Reference`) and the time step ``dt`` (s)
since the previous call (for the integral term), and returns joint efforts (n,) (N m or N),
before any clamping.  The commanded joint acceleration is the PD(+I) law

    qdd_cmd = qdd_d + Kd (qd_d - qd) + Kp (q_d - q) + Ki int(q_d - q) dt

(Modern Robotics, ch. 11.4), the integral clamped to +- ``integral_limit`` per joint.

- :class:`ComputedTorque` (fixed base): tau = H(q) qdd_cmd + C(q, qd) qd + g(q), one
  recursive Newton-Euler pass (``inverse_dynamics`` with the model's gravity).
- :class:`FloatingBase` (free-floating, base unactuated): the joint efforts of SPART's
  Floating_ID for qdd_cmd with the measured base state (the base reacts: its acceleration is
  returned too).
- :class:`FreeFlying` (base actuated): the base follows a pose reference with a PD law on
  SE(3) (position error in b, rotation error as the rotation vector of R_b' R_d); the base
  acceleration goes with qdd_cmd into inverse dynamics, giving joint efforts and the base
  wrench (torque and force at b's origin, in b).
- :class:`GravityCompensation`: tau = g(q) - H(q) Kd qd (gravity forces of the still robot on a
  fixed base, plus damping of the measured joint velocities; no position reference).

Joint friction: with a model that has ``joint_dynamics`` (the default of the controller), inverse
dynamics also gives the efforts of the joints' rotor inertia, damping and Coulomb friction
(:mod:`spart_ros.core.joint_friction`), corrected for a digital loop by
:class:`~spart_ros.control.friction_compensation.FrictionCompensation` (the damping and friction
at the velocity that makes a constant effort over the control period reach the commanded velocity,
exact for a joint that settles within the period; the Coulomb part scaled by the
``friction_compensation`` setting); :class:`GravityCompensation` leaves damping and friction
alone (they damp a robot moved by hand).

Two entries: :meth:`command` is the controller's (the :class:`~spart_ros.control.law.Law`
interface: a :data:`~spart_ros.control.law.LawOutput` whose ``values`` are the fast path's
buffer, no base acceleration); :meth:`compute` returns an :data:`EffortCommand` with copies and
the base acceleration too.  Both convert the base state with
:class:`~spart_ros.control.law.BaseFrames` (no checks: the state is the caller's, finite).

``dynamics`` is the fast path of the robot (:func:`spart_ros.core.fast.mimic.fast_dynamics`:
independent joint coordinates for mimic joints), whose ``gravity`` the laws use.
"""

from collections import namedtuple

import numpy as np

from .end_effector import rotation_vector
from .friction_compensation import FrictionCompensation, saturation_notes
from .law import BaseFrames, Law, LawOutput
from ..core.errors import InputError
from ..native.compiled import call as _call
from ..native.compiled import free_flying_base as _free_flying_base
from ..native.compiled import KINDS
from ..native.compiled import pd_acceleration as _pd_acceleration

_K_BASE, _K_PD = KINDS['free_flying_base'], KINDS['pd_acceleration']

__all__ = [
    'Gains',
    'ComputedTorque',
    'FloatingBase',
    'FreeFlying',
    'GravityCompensation',
    'EffortCommand',
]

EffortCommand = namedtuple('EffortCommand', 'efforts base_torque base_force base_acceleration')
EffortCommand.__doc__ = """A law's output: joint ``efforts`` (n,); for a free-flying base the base
wrench (``base_torque``, ``base_force`` at b's origin, in b, (3,) each, else None); the base
acceleration [a_b (classical acceleration of b's origin); alpha_b], both in b, that the law
predicts (floating) or commands (free flying), (6,), or None for a fixed base."""


def _per_joint(name, value, n, allow_inf=False):
    a = np.array(value, dtype=float).reshape(-1)
    if a.size == 1:
        a = np.full(n, float(a[0]))
    if a.shape != (n,) or np.isnan(a).any() or (not allow_inf and not np.all(np.isfinite(a))):
        raise InputError(
            f'{name}: expected one {"" if allow_inf else "finite "}value per joint ({n}) or one '
            f'for all, got {np.ravel(value).tolist()}'
        )
    return a


class Gains:
    """
    Per-joint gains of the PD(+I) law for ``n`` joints.

    ``kp`` (1/s^2), ``kd`` (1/s), ``ki`` (1/s^3), each one value per joint or one for all;
    ``integral_limit`` bounds int(e) dt per joint (rad s or m s; inf = unbounded); the joint
    impedance's ``stiffness`` [N m/rad or N/m] and ``damping`` [N m s/rad or N s/m]
    (:mod:`.impedance`).
    """

    def __init__(self, n, kp, kd, ki=0.0, integral_limit=np.inf, stiffness=0.0, damping=0.0):
        self.kp, self.kd, self.ki = (
            _per_joint(k, v, n) for k, v in (('kp', kp), ('kd', kd), ('ki', ki))
        )
        self.stiffness = _per_joint('impedance_stiffness', stiffness, n)
        self.damping = _per_joint('impedance_damping', damping, n)
        self.integral_limit = _per_joint('integral_limit', integral_limit, n, allow_inf=True)
        if (
            np.any(self.kp < 0)
            or np.any(self.kd < 0)
            or np.any(self.ki < 0)
            or np.any(self.integral_limit < 0)
            or np.any(self.stiffness < 0)
            or np.any(self.damping < 0)
        ):
            raise InputError(
                'kp, kd, ki, integral_limit, impedance_stiffness and impedance_damping must be >= '
                '0'
            )
        self.integrating = bool(self.ki.any())  # checked once: ndarray.any() costs a microsecond


class _JointLaw(Law):
    """The PD(+I) joint acceleration law shared by the laws below."""

    def __init__(self, dynamics, gains):
        self.dynamics = dynamics
        self.robot = dynamics.robot
        self.n = dynamics.n_q
        self.gains = gains
        self.integral = np.zeros(self.n)
        self.qdd_cmd = np.zeros(self.n)
        self.frames = BaseFrames(self.robot)
        self._e = np.zeros(self.n)
        self._ev = np.zeros(self.n)
        self._zero6 = self.frames.zero6
        self._zero_q = np.zeros(self.n)
        self.friction = FrictionCompensation(dynamics)

    @classmethod
    def build(cls, mode, dynamics, settings, gains):
        law = cls(dynamics, gains)
        law.friction.scale = settings.friction_compensation
        if law.follows == 'joint_trajectory':
            law.notes = saturation_notes(dynamics, law.friction)
        return law

    def apply_settings(self, settings, gains):
        self.gains = gains
        self.friction.scale = settings.friction_compensation

    def reset(self):
        """Forget the integral (on enable, on a new model, after a halt)."""
        self.integral[:] = 0.0

    def joint_inertia(self, R0, r0, q):
        """
        Return the joints' mass matrix (n, n) at joint positions ``q`` (a new array).

        ``R0``, ``r0``: the base pose. The inertia the joint efforts drive with the base held
        (fixed) or driven (free flying): H's joint block.
        """
        return self.dynamics.mass_matrix(R0, r0, q)[6:, 6:].copy()

    def joint_acceleration(self, q, qd, ref, dt):
        """
        qdd_cmd (n,) of the PD(+I) law (this object's buffer).

        Updates the clamped integral of the error.
        """
        g = self.gains
        if not g.integrating:  # compiled (numpy below for other types, and with an integral)
            args = (q, qd, ref.position, ref.velocity, ref.acceleration, g.kp, g.kd)
            if _call(_pd_acceleration, _K_PD, *args, self._e, self._ev, self.qdd_cmd) == 0:
                return self.qdd_cmd
        e = np.subtract(ref.position, q, out=self._e)
        if dt > 0 and g.integrating:
            np.clip(self.integral + e * dt, -g.integral_limit, g.integral_limit, out=self.integral)
        qdd = np.multiply(g.kp, e, out=self.qdd_cmd)
        qdd += ref.acceleration
        ev = np.subtract(ref.velocity, qd, out=self._ev)
        ev *= g.kd
        qdd += ev
        if g.integrating:
            qdd += g.ki * self.integral
        return qdd

    def compensate(self, taum, qd, dt, inertia):
        """
        Correct taum for the joint friction of a digital loop, in place; return taum.

        taum: the inverse dynamics efforts for ``self.qdd_cmd``; ``inertia``: the joints' mass
        matrix (None when not ``needs_inertia``); the correction:
        :class:`~spart_ros.control.friction_compensation.FrictionCompensation`.
        """
        if self.friction.active:
            taum += self.friction.correction(qd, self.qdd_cmd, dt, inertia)
        return taum

    def _needs_inertia(self, dt):
        return self.friction.active and self.friction.needs_inertia(dt)

    def compute(self, base, q, qd, ref, dt):
        """:data:`EffortCommand` (copies) for the state and reference (module docstring)."""
        out = self.command(_State(base, _float_array(q), _float_array(qd)), ref, None, dt)
        return EffortCommand(
            out.values.copy(), out.base_torque, out.base_force, self._base_acceleration(base)
        )

    def _base_acceleration(self, base):
        return None


class _State:
    __slots__ = ('base', 'q', 'qd')

    def __init__(self, base, q, qd):
        self.base, self.q, self.qd = base, q, qd


def _float_array(x):
    return np.ascontiguousarray(x, dtype=float)


class ComputedTorque(_JointLaw):
    """tau = H(q) qdd_cmd + C(q, qd) qd + g(q) on a fixed base (the base pose from ``base``)."""

    mode = 'computed_torque'
    base = 'fixed'

    def command(self, state, ref, t, dt):
        R0, r0, u0 = self.frames.fixed(state.base)
        qdd = self.joint_acceleration(state.q, state.qd, ref, dt)
        inertia = self.joint_inertia(R0, r0, state.q) if self._needs_inertia(dt) else None
        _, taum = self.dynamics.inverse_dynamics(
            R0, r0, state.q, u0, state.qd, u0, qdd, floating=False
        )
        return LawOutput(self.compensate(taum, state.qd, dt, inertia))


class FloatingBase(_JointLaw):
    """
    Joint efforts of SPART's Floating_ID for qdd_cmd with the measured (moving, unactuated) base.

    The base wrench is zero and the base reacts; its acceleration is returned.
    """

    mode = 'floating_base'
    base = 'floating'

    def command(self, state, ref, t, dt):
        R0, r0, u0 = self.frames.floating(state.base)
        qdd = self.joint_acceleration(state.q, state.qd, ref, dt)
        inertia = self.joint_inertia(R0, r0, state.q) if self._needs_inertia(dt) else None
        taum, self._u0dot = self.dynamics.floating_inverse_dynamics(
            R0, r0, state.q, u0, state.qd, qdd
        )
        return LawOutput(self.compensate(taum, state.qd, dt, inertia))

    def joint_inertia(self, R0, r0, q):
        """
        Return the joints' inertia (n, n) with the base free at ``q`` (a new array).

        ``R0``, ``r0``: the base pose. H* = Hm - H0m' H0^-1 H0m, the reduced inertia the joints
        drive on a free-floating base.
        """
        H = self.dynamics.mass_matrix(R0, r0, q)
        H0m = H[0:6, 6:]
        return H[6:, 6:] - H0m.T @ np.linalg.solve(H[0:6, 0:6], H0m)

    def _base_acceleration(self, base):
        """[a_b; alpha_b] (6,), in b, of the last command's Floating_ID (u0dot, SPART's)."""
        return self.frames.link_acceleration(base, self._u0dot)


class FreeFlying(_JointLaw):
    """
    The joints as :class:`FloatingBase` would move them, and the base actuated too.

    It follows the pose (R_d, p_d) of b in the world set by :meth:`set_base_reference` with.

        alpha_b = Kp_rot rotvec(R_b' R_d) - Kd_rot w_b,   a_b = Kp_pos R_b' (p_d - p_b) - Kd_pos
        v_b

    (both in b); inverse dynamics for (a_b, alpha_b, qdd_cmd) gives the joint efforts and the
    base wrench.  ``dynamics``: the robot's fast path; ``gains``: the joints' :class:`Gains`;
    ``base_gains`` = (kp_position, kd_position, kp_rotation, kd_rotation).
    Reference (:meth:`set_reference`): ``'base_pose'`` = (R_d (3, 3), p_d (3,)).

    ``actuation``: a :class:`~spart_ros.control.base_actuation.BaseActuatorControl` (the base's
    reaction wheels and thrusters; ``dynamics`` then is the arm model with the wheels locked):
    the base wrench goes to them (:data:`~spart_ros.control.law.LawOutput` ``actuators``), with
    the wheels' measured speeds given as the reference ``'wheel_speeds'`` (n_w,).
    """

    mode = 'free_flying'
    base = 'floating'
    references = ('base_pose',)

    def __init__(self, dynamics, gains, base_gains=(1.0, 2.0, 1.0, 2.0), actuation=None):
        super().__init__(dynamics, gains)
        self.base_gains = self.check_base_gains(base_gains)
        self.base_reference = None  # (R_d, p_d); None = hold the pose of the next compute
        self.actuation = actuation

    @classmethod
    def build(cls, mode, dynamics, settings, gains):
        from .base_actuation import from_settings

        return cls(dynamics, gains, settings.base_gains, from_settings(settings))

    def apply_settings(self, settings, gains):
        self.base_gains = self.check_base_gains(settings.base_gains)
        self.gains = gains

    @staticmethod
    def check_base_gains(base_gains):
        """Return ``base_gains`` as 4 floats >= 0 (InputError naming them otherwise)."""
        b = np.array(base_gains, dtype=float).reshape(-1)
        if b.shape != (4,) or not np.all(np.isfinite(b)) or np.any(b < 0):
            raise InputError(
                'base_gains: expected 4 finite values >= 0 (kp_position, kd_position, '
                f'kp_rotation, kd_rotation), got {np.ravel(base_gains).tolist()}'
            )
        return b

    def set_base_reference(self, R_d, p_d):
        """Track the base pose (R_d (3, 3), p_d (3,) of b in the world) from now on."""
        self.base_reference = (np.array(R_d, dtype=float), np.array(p_d, dtype=float))

    def clear_base_reference(self):
        """
        Forget the base target.

        The next :meth:`compute` holds the base pose it is given (on enable). Nothing else clears
        it: a halt and resume keep the target.
        """
        self.base_reference = None

    def set_reference(self, name, value, received=None):
        if name == 'wheel_speeds' and self.actuation is not None:
            return self.actuation.set_speeds(value)
        if name != 'base_pose':
            return super().set_reference(name, value, received)
        self.set_base_reference(*value)

    def clear_references(self):
        self.reset()
        self.clear_base_reference()

    def reset(self):
        super().reset()
        if getattr(self, 'actuation', None) is not None:
            self.actuation.reset()

    def base_acceleration(self, base):
        """Return (a_b, alpha_b) of the base PD law, both (3,) in b (new arrays)."""
        return self._base_law(base)[0:2]

    def _base_law(self, base):
        """
        Return (a_b, alpha_b, u0dot): the base PD law and SPART's base acceleration of it.

        alpha_b = kp_rot rotvec(R_b' R_d) - kd_rot w_b, a_b = kp_pos R_b' (p_d - p_b) - kd_pos v_b,
        u0dot = BaseFrames.base_acceleration's (compiled: free_flying_base; numpy for inputs of
        other types).
        """
        R_d, p_d = self.base_reference
        f = self.frames
        a_b, alpha_b, u0dot = np.empty(3), np.empty(3), np.empty(6)
        args = (base.R_b, base.p_b, base.v_b, base.w_b, R_d, p_d, self.base_gains, f.R_bc, f.p_bc)
        if _call(_free_flying_base, _K_BASE, *args, a_b, alpha_b, u0dot) is None:
            kp_p, kd_p, kp_r, kd_r = self.base_gains
            alpha_b = kp_r * rotation_vector(base.R_b.T @ R_d) - kd_r * base.w_b
            a_b = kp_p * (base.R_b.T @ (p_d - base.p_b)) - kd_p * base.v_b
            u0dot = f.base_acceleration(base, a_b, alpha_b)
        return a_b, alpha_b, u0dot

    def command(self, state, ref, t, dt):
        base = state.base
        if self.base_reference is None:
            self.set_base_reference(base.R_b, base.p_b)
        R0, r0, u0 = self.frames.floating(base)
        qdd = self.joint_acceleration(state.q, state.qd, ref, dt)
        a_b, alpha_b, u0dot = self._base_law(base)
        self._accel = (a_b, alpha_b)
        inertia = self.joint_inertia(R0, r0, state.q) if self._needs_inertia(dt) else None
        tau0, taum = self.dynamics.inverse_dynamics(
            R0, r0, state.q, u0, state.qd, u0dot, qdd, floating=True
        )
        torque_b, force_b = self.frames.link_wrench(base, tau0)
        actuators = None
        if self.actuation is not None:
            taum, actuators = self._actuate(state, R0, r0, u0, qdd, alpha_b, torque_b, force_b, t)
        return LawOutput(
            self.compensate(taum, state.qd, dt, inertia), torque_b, force_b, None, actuators
        )

    def _actuate(self, state, R0, r0, u0, qdd, alpha_b, torque_b, force_b, t):
        """
        Return the joint efforts and the base actuators' commands of this tick.

        The thrusters follow their cycle's allocation of the base wrench; the wheels give the
        angular acceleration alpha_b exactly with whatever the thrusters exert now
        (:class:`~spart_ros.control.base_actuation.AttitudeDynamics`), and the joint efforts are
        those of the base acceleration that results.
        """
        from .base_actuation import AttitudeDynamics

        a, base = self.actuation, state.base
        speeds = a.measured_speeds()
        required = a.required_wrench(torque_b, force_b, base.w_b, alpha_b, speeds)
        dyn = AttitudeDynamics(
            self.robot,
            self.dynamics,
            R0,
            r0,
            state.q,
            u0,
            state.qd,
            qdd,
            alpha_b,
            base.w_b,
            a,
            speeds,
        )
        cmd = a.command(0.0 if t is None else t, required, speeds, torque_for=dyn.torque_for)
        return dyn.taum, cmd

    def _base_acceleration(self, base):
        return np.concatenate(self._accel)


class GravityCompensation(_JointLaw):
    """
    tau = g(q) - H(q) Kd qd.

    The efforts that hold the arm still against the model's gravity (fixed base), plus damping of
    the measured joint velocities with ``gains.kd`` [1/s] (mass weighted, so the same gain damps
    every joint alike). No position reference: a controller refuses trajectories in this mode.
    With kd = 0 (the default ``gains``) it is g(q) alone.  ``dynamics``: the robot's fast path.
    """

    mode = 'gravity_compensation'
    base = 'fixed'
    follows = 'none'
    holds_position = False

    def __init__(self, dynamics, gains=None):
        super().__init__(dynamics, gains or Gains(dynamics.n_q, 0.0, 0.0))

    def command(self, state, ref, t, dt):
        R0, r0, u0 = self.frames.fixed(state.base)
        qdd = np.multiply(self.gains.kd, state.qd, out=self.qdd_cmd)
        np.negative(qdd, out=qdd)
        # H qdd + g: inverse dynamics at zero joint velocity (no Coriolis term)
        _, taum = self.dynamics.inverse_dynamics(
            R0, r0, state.q, u0, self._zero_q, u0, qdd, floating=False
        )
        return LawOutput(taum)
