"""
The base's actuators under a control law: wheels and thrusters each tick (pure numpy, no ROS).

A law that actuates the base (``free_flying``, and the space modes holding the base attitude)
computes the base wrench it needs on the controller's ARM model, where the reaction wheels are
locked into the base (:func:`spart_ros.core.actuators.lock_wheels`).
:class:`BaseActuatorControl` turns it into thruster and wheel commands:

**What the wheels' spin adds** (a balanced wheel: rotor axisymmetric about its axis a_i, its CoM
on the axis; J_s its spin inertia, w_i its speed relative to the base, b_i its viscous friction).
With the rotors free to spin instead of locked, the base rows of the equations of motion gain
``sum_i J_s a_i dw_i/dt + omega x h`` (h = sum_i J_s w_i a_i, the wheels' momentum relative to the
base, base frame), and each rotor obeys ``J_s (a_i . alpha + dw_i/dt) = tau_i - b_i w_i``; the
arm's rows do not change.  So the thrusters' wrench B f and the motor torques tau
must satisfy

    B f - sum_i [a_i; 0] tau_i = W + [omega x h - sum_i J_s a_i (a_i . alpha) - sum_i b_i w_i a_i;
                                      0]

with W the locked model's wrench for the same base acceleration (alpha, omega: the base's angular
acceleration and velocity, frame b).  :meth:`BaseActuatorControl.required_wrench` forms the right
side; test/test_base_actuators.py checks it against the wheels as joints.

**Thrusters and wheels per tick** (:meth:`BaseActuatorControl.command`):

- every ``thruster_period`` s (a thruster cycle, e.g. 0.1 s) the whole wrench is allocated
  (:class:`~spart_ros.control.allocation.WrenchAllocator`: bounded least squares, thrusters and
  wheels together, the wheels preferred for torque); each on/off thruster then fires at full force
  from the cycle's start for ``f / F_max`` of the cycle (pulse-width modulation, rounded to the
  control period; a pulse shorter than the minimum impulse bit's time is rounded to it or to
  nothing), a throttled one gives its force through the cycle;
- at every tick the wheels take the torque the thrusters firing now do not give (their own bounded
  least squares, exact when the wheels span the torque and stay within their limits): the wheels
  hold the attitude between thruster pulses.  A wheel at ``speed_margin`` of its speed limit gets
  no torque that would spin it faster (reported);
- **momentum management**: when a wheel passes ``dump_start`` of its speed limit, the thrusters
  are asked for the external torque ``-dump_gain h`` (the wheels then absorb it and spin down)
  until every wheel is below ``dump_stop``.

Without thrusters (or with ``thrust=False``) only the torque rows are served, by the wheels.
Results (:data:`BaseActuatorCommand`): thruster commands [N] and wheel torques [N m] in the
declaration order, and an :data:`ActuationStatus` for ``~/status``.
"""

from collections import namedtuple

import numpy as np

from .allocation import WrenchAllocator
from .bounded_least_squares import BoundedLeastSquares
from ..core.actuators import G0
from ..core.errors import InputError
from ..native.compiled import attitude_torque as _attitude_torque
from ..native.compiled import call as _call
from ..native.compiled import finite_c1 as _finite_c1
from ..native.compiled import KINDS
from ..native.compiled import thruster_pulses as _thruster_pulses
from ..native.compiled import wheel_base_torque as _wheel_base_torque
from ..native.compiled import wheel_state as _wheel_state
from ..native.compiled import wheel_torques as _wheel_torques

_K_ATTITUDE, _K_WHEEL = KINDS['attitude_torque'], KINDS['wheel_base_torque']

__all__ = ['BaseActuatorControl', 'BaseActuatorCommand', 'ActuationStatus', 'from_settings']

ActuationStatus = namedtuple(
    'ActuationStatus',
    'feasible saturated message required achieved wheel_speeds wheel_momentum dumping propellant',
)
ActuationStatus.__doc__ = """One tick of the base actuators: ``feasible`` (the wrench asked for is
exerted: the cycle's allocation exact and the wheels' torque exact this tick); ``saturated``
(names of the actuators at a limit that matters); ``message`` ('' or why not feasible);
``required``, ``achieved`` (6,) [torque about b's origin; force] in b (achieved: what the commands
sent this tick exert; thrusters at their PWM state); ``wheel_speeds`` (n_w,) [rad/s];
``wheel_momentum`` (3,) h [N m s] in b; ``dumping`` (momentum management active); ``propellant``:
used by the commands so far [kg] (estimate)."""

BaseActuatorCommand = namedtuple('BaseActuatorCommand', 'thrusters wheels status')
BaseActuatorCommand.__doc__ = """``thrusters`` (n_t,) [N] (on/off: 0 or F_max), ``wheels`` (n_w,)
[N m], ``status``: :data:`ActuationStatus`."""


class BaseActuatorControl:
    """
    Thruster and wheel commands for a base wrench (see the module docstring).

    ``actuators``: :class:`~spart_ros.core.actuators.BaseActuators`; ``thruster_period`` [s]; the
    momentum management's ``dump_start``, ``dump_stop`` (fractions of the speed limit) and
    ``dump_gain`` [1/s]; ``speed_margin`` (fraction of the speed limit where a wheel stops
    accelerating); ``allocator``: options of the
    :class:`~spart_ros.control.allocation.WrenchAllocator`.
    """

    def __init__(
        self,
        actuators,
        thruster_period=0.1,
        dump_start=0.6,
        dump_stop=0.2,
        dump_gain=0.05,
        speed_margin=0.98,
        **allocator,
    ):
        self.actuators = actuators
        self.n_t, self.n_w = len(actuators.thrusters), len(actuators.wheels)
        self.thruster_period = float(thruster_period)
        if not self.thruster_period > 0:
            raise InputError(f'thruster_period must be > 0 s, got {thruster_period!r}')
        if not 0 <= dump_stop < dump_start:
            raise InputError(
                f'momentum management: expected 0 <= dump_stop < dump_start, got {dump_stop!r}, '
                f'{dump_start!r}'
            )
        self.dump_start, self.dump_stop = float(dump_start), float(dump_stop)
        self.dump_gain, self.speed_margin = float(dump_gain), float(speed_margin)
        self.allocator = WrenchAllocator(actuators, **allocator)
        w = actuators.wheels
        self.axes = actuators.wheel_axes  # (3, n_w), b
        self.Js = np.array([x.rotor_inertia for x in w], dtype=float)
        self.friction = np.array([x.friction for x in w], dtype=float)
        self.tau_max = np.array([x.max_torque for x in w], dtype=float)
        self.max_speed = np.array([x.max_speed for x in w], dtype=float)
        self.f_max = np.array([t.max_force for t in actuators.thrusters], dtype=float)
        self.min_on = np.array([t.min_on_time for t in actuators.thrusters], dtype=float)
        self.throttled = np.array([t.throttled for t in actuators.thrusters], dtype=bool)
        self.B = actuators.thruster_wrenches.reshape(6, -1)  # (6, n_t)
        self._wheels_torque = -self.axes  # (3, n_w): torque on the base per N m
        self._pinv = np.linalg.pinv(self._wheels_torque) if self.n_w else np.zeros((0, 3))
        self._wheels_lsq = BoundedLeastSquares(3, self.n_w)
        self._flow = 1.0 / (actuators.specific_impulse * G0)
        # the compiled kernels' arrays (C-ordered)
        self._axes = np.ascontiguousarray(self.axes, dtype=float)
        self._torque_map = np.ascontiguousarray(self._wheels_torque, dtype=float)
        self._pinv = np.ascontiguousarray(self._pinv, dtype=float)
        self._B = np.ascontiguousarray(self.B, dtype=float)
        self._throttled = self.throttled.astype(float)
        self._fast_speed = self.speed_margin * self.max_speed  # |w| at which a wheel stops
        self._zero3, self._zero6 = np.zeros(3), np.zeros(6)
        self._base_frame = (None, None, None)  # (robot, R_bc, p_bc) of the last AttitudeDynamics
        #: the wheels' last measured speeds (n_w,) [rad/s] (:meth:`set_speeds`), None: none yet
        self.speeds = None
        self.reset()

    def set_speeds(self, speeds):
        """Keep the wheels' measured speeds (n_w,) [rad/s], declaration order."""
        v = np.array(speeds, dtype=float).reshape(-1)
        if v.shape != (self.n_w,) or not (_finite_c1(v) or np.all(np.isfinite(v))):
            raise InputError(
                f'wheel speeds: expected {self.n_w} finite values for '
                f'{self.actuators.wheel_names}, got {np.ravel(speeds).tolist()}'
            )
        self.speeds = v

    def measured_speeds(self):
        """Return the kept speeds, zeros before any (then :meth:`command` says so)."""
        return np.zeros(self.n_w) if self.speeds is None else self.speeds

    def reset(self):
        """Start a new thruster cycle at the next command; momentum management off."""
        self._cycle_start = None
        self._on_time = np.zeros(self.n_t)
        self._force = np.zeros(self.n_t)
        self._cycle = None  # the cycle's Allocation
        self.dumping = False
        self.propellant = 0.0 if not hasattr(self, 'propellant') else self.propellant
        self._last_t = None

    # -- the wheels' dynamics -------------------------------------------------------------
    def wheel_momentum(self, speeds):
        """
        Return h (3,).

        the wheels' momentum at ``speeds`` (n_w,) relative to the base, in b [N m s].
        """
        return self.axes @ (self.Js * np.asarray(speeds, dtype=float))

    def required_wrench(self, torque_b, force_b, w_b, alpha_b, speeds):
        """
        Return the wrench (6,) the thrusters and motors must give (module docstring).

        ``torque_b``, ``force_b``: the locked model's base wrench at b's origin, in b; ``w_b``,
        ``alpha_b``: the base's angular velocity and acceleration in b; ``speeds`` (n_w,).
        Compiled (:func:`spart_ros.native.control_kernels.wheel_base_torque`).
        """
        out = np.empty(6)
        args = (self._axes, self.Js, self.friction, speeds, w_b, alpha_b, torque_b, out[0:3])
        if _call(_wheel_base_torque, _K_WHEEL, *args) is None:  # not float64 vectors: convert
            _wheel_base_torque(*_vectors(args, (3, 4, 5, 6)))
        out[3:6] = force_b
        return out

    def torque_bounds(self, speeds):
        """Return (lower, upper) (n_w,) at ``speeds``: +- max_torque, one-sided at a limit."""
        lo, hi = np.empty(self.n_w), np.empty(self.n_w)
        self._wheel_state(np.asarray(speeds, dtype=float).reshape(-1), lo, hi, np.empty(3))
        return lo, hi

    def _wheel_state(self, speeds, lo, hi, h):
        """Set the torque bounds and the momentum h at ``speeds``; return max |w| / w_max."""
        return _wheel_state(
            speeds,
            self.tau_max,
            self.friction,
            self._fast_speed,
            self.max_speed,
            self._axes,
            self.Js,
            lo,
            hi,
            h,
        )

    # -- one tick -------------------------------------------------------------------------
    def command(self, t, required, speeds, thrust=True, torque_for=None):
        """
        Return the :data:`BaseActuatorCommand` of one tick at control time ``t`` [s].

        ``required`` (6,): :meth:`required_wrench` (for the thruster cycle's allocation);
        ``speeds`` (n_w,): the wheels' measured speeds [rad/s]; ``thrust``: use the thrusters
        (else only the torque rows, by the wheels); ``torque_for(torque_b, force_b)``: the torque
        (3,) the wheels must exert on the base (in b) when the thrusters exert this wrench now (at
        b's origin, in b) -- a law's exact base dynamics (:class:`AttitudeDynamics`); default: the
        required torque less the thrusters'.
        """
        required = np.asarray(required, dtype=float)
        speeds = np.asarray(speeds, dtype=float).reshape(-1)
        if speeds.shape != (self.n_w,):
            raise InputError(
                f'wheel speeds: expected {self.n_w} values for {self.actuators.wheel_names}, got '
                f'{speeds.size}'
            )
        dt = 0.0 if self._last_t is None else max(t - self._last_t, 0.0)
        self._last_t = t
        lo, hi, h = np.empty(self.n_w), np.empty(self.n_w), np.empty(3)
        largest = self._wheel_state(speeds, lo, hi, h)  # compiled: bounds, momentum, max |w|
        if self.n_w and largest >= self.dump_start:
            self.dumping = True
        elif not self.n_w or largest <= self.dump_stop:
            self.dumping = False
        saturated, messages = [], []
        use_thrusters = thrust and self.n_t > 0
        if use_thrusters and (
            self._cycle_start is None or t - self._cycle_start >= self.thruster_period - 1e-9
        ):
            self._new_cycle(t, required, lo, hi, h)
        thrusters, thrust_wrench = np.zeros(self.n_t), np.zeros(6)
        if use_thrusters:  # the cycle's pulses now, and their wrench
            total = _thruster_pulses(
                t - self._cycle_start,
                dt,
                self._on_time,
                self._force,
                self._throttled,
                self.f_max,
                self._B,
                thrusters,
                thrust_wrench,
            )
            self.propellant += float(total * dt * self._flow)
            if not self._cycle.feasible:
                saturated += self._cycle.saturated
                messages.append(f'thruster cycle: {self._cycle.message}')
        # the wheels: the torque the thrusters firing now leave
        if torque_for is None:
            target = required[0:3] - thrust_wrench[0:3]
        else:
            target = np.asarray(torque_for(thrust_wrench[0:3], thrust_wrench[3:6]), dtype=float)
        wheels, achieved = np.empty(self.n_w), np.empty(6)
        miss = _wheel_torques(
            self._pinv, target, lo, hi, self._torque_map, thrust_wrench, wheels, achieved
        )
        if miss < 0.0:  # the least-norm torques pass a bound: bounded least squares
            wheels = self._bounded_wheel_torques(target, lo, hi)
            exerted = self._wheels_torque @ wheels
            achieved = thrust_wrench.copy()
            achieved[0:3] += exerted
            miss = np.linalg.norm(target - exerted)
        if miss > 1e-9 * self.allocator.torque_scale:
            at = np.isclose(wheels, lo, atol=1e-12) | np.isclose(wheels, hi, atol=1e-12)
            names = [n for n, a in zip(self.actuators.wheel_names, at) if a]
            fraction = np.abs(speeds) / self.max_speed
            near = [
                n for n, f in zip(self.actuators.wheel_names, fraction) if f >= self.speed_margin
            ]
            saturated += [n for n in names if n not in saturated]
            messages.append(
                (
                    f'wheels short of the torque by {miss:.3g} N m'
                    if self.n_w
                    else f'no reaction wheels: the thrusters firing now leave {miss:.3g} N m of '
                    'the torque asked for at this tick'
                )
                + (f' (at their torque bounds: {", ".join(names)})' if names else '')
                + (f' (at the speed limit: {", ".join(near)})' if near else '')
            )
        if self.n_w and self.speeds is None:
            messages.append('no wheel speeds received yet (taken as 0)')
        status = ActuationStatus(
            not messages,
            saturated,
            '; '.join(messages),
            required.copy(),
            achieved,
            speeds.copy(),
            h,
            self.dumping,
            self.propellant,
        )
        return BaseActuatorCommand(thrusters, wheels, status)

    def _new_cycle(self, t, required, lo, hi, h):
        """Allocate the cycle's wrench and set each thruster's pulse (module docstring)."""
        dump = -self.dump_gain * h if self.dumping else None
        alloc = self.allocator.allocate(
            required, lo, hi, thruster_torque=dump, dump_weight=10.0 if self.dumping else 0.0
        )
        self._cycle, self._cycle_start = alloc, t
        f = np.clip(alloc.thrust, 0.0, self.f_max)
        on = f / self.f_max * self.thruster_period
        short = (on > 0) & (on < self.min_on)
        on[short] = np.where(on[short] >= 0.5 * self.min_on[short], self.min_on[short], 0.0)
        self._on_time = np.where(self.throttled, 0.0, on)
        self._force = np.where(self.throttled, f, 0.0)

    def _bounded_wheel_torques(self, target, lo, hi):
        """Return the wheels' bounded least-squares torques (n_w,) for a torque ``target`` (3,)."""
        fixed = lo >= hi
        hi_s = np.where(fixed, np.nextafter(lo, np.inf), hi)
        x = self._wheels_lsq.solve(self._wheels_torque, target, lo, hi_s, tol=1e-14)  # bvls
        return np.clip(np.where(fixed, lo, x), lo, hi)


def from_settings(settings):
    """
    Return the :class:`BaseActuatorControl` a controller's settings declare, or None.

    :class:`~spart_ros.control.settings.ControllerSettings`: ``actuators_file`` (the YAML, ''
    none), ``thruster_period``, ``momentum_dump`` (dump_start, dump_stop, dump_gain).
    """
    from ..core.actuators import load_actuators

    actuators = load_actuators(getattr(settings, 'actuators_file', '') or None)
    if actuators is None or not (actuators.wheels or actuators.thrusters):
        return None
    start, stop, gain = (float(x) for x in settings.momentum_dump)
    return BaseActuatorControl(
        actuators,
        thruster_period=float(settings.thruster_period),
        dump_start=start,
        dump_stop=stop,
        dump_gain=gain,
    )


class AttitudeDynamics:
    """
    The base rows of one tick with the base's angular acceleration imposed (pure numpy).

    For the arm model (wheels locked, SPART's base coordinates): inverse dynamics at the state with
    the joints' accelerations ``qdd`` and a zero base acceleration gives (tau0_0, taum_0); the mass
    matrix H.  With the base's angular acceleration ``alpha_b`` imposed (frame b), the thrusters'
    wrench (torque_b, force_b at b's origin, in b) decides its CoM acceleration a (the base's
    linear rows: H_ll a = R_b force - tau0_0,l - H_la alpha); the angular rows then give the
    torque the base needs, which the wheels supply together with what their spin adds
    (:meth:`BaseActuatorControl.required_wrench`).  ``robot``: the arm model (its base link
    frame); ``actuation``: the :class:`BaseActuatorControl`; ``w_b``: the base angular velocity
    (b); ``speeds``: the wheels' (n_w,).  After :meth:`torque_for`, ``u0dot`` (6,) and
    ``taum`` (n_q,) are those of the last thrust given (the joint efforts to send).
    """

    def __init__(self, robot, dynamics, R0, r0, q, u0, qd, qdd, alpha_b, w_b, actuation, speeds):
        frame = actuation._base_frame
        if frame[0] is not robot:  # the base CoM frame in b, kept for the next tick's robot
            T = np.asarray(robot.base_link.T, dtype=float)
            frame = actuation._base_frame = (
                robot,
                np.ascontiguousarray(T[:3, :3]),
                np.ascontiguousarray(T[:3, 3]),
            )
        self.robot = robot
        _, self.R_bc, self.p_bc = frame
        self.R0 = np.array(R0, dtype=float)
        self.R_b = self.R0 @ self.R_bc.T
        tau0, taum = dynamics.inverse_dynamics(R0, r0, q, u0, qd, actuation._zero6, qdd)
        self.tau0_0, self.taum_0 = np.array(tau0), np.array(taum)
        self.H = np.array(dynamics.mass_matrix(R0, r0, q))
        self.alpha_b = np.ascontiguousarray(alpha_b, dtype=float)
        self.alpha_c = self.R_bc.T @ self.alpha_b
        self.w_b = np.ascontiguousarray(w_b, dtype=float)
        self.actuation = actuation
        self.speeds = np.ascontiguousarray(speeds, dtype=float)
        self.u0dot = np.zeros(6)
        self.taum = self.taum_0.copy()
        self._out = np.zeros(3)
        zero = actuation._zero3
        self.torque_for(zero, zero)

    def torque_for(self, torque_b, force_b):
        """
        Return the torque (3,) the wheels must exert on the base (b) under this thrust.

        Compiled (:func:`spart_ros.native.control_kernels.attitude_torque`); sets ``u0dot`` and
        ``taum``.
        """
        a = self.actuation
        args = (
            self.H,
            self.tau0_0,
            self.taum_0,
            self.R_bc,
            self.p_bc,
            self.R_b,
            self.alpha_c,
            self.alpha_b,
            self.w_b,
            a._axes,
            a.Js,
            a.friction,
            self.speeds,
            torque_b,
            force_b,
            self.u0dot,
            self.taum,
            self._out,
        )
        code = _call(_attitude_torque, _K_ATTITUDE, *args)
        if code is None:  # the thrust not as float64 vectors: convert
            code = _attitude_torque(*_vectors(args, (13, 14)))
        if code:
            raise InputError(
                "base actuators: the base's linear inertia block is singular (no mass?)"
            )
        return self._out.copy()


def _vectors(args, which):
    """Return ``args`` with the arguments at ``which`` as float64 vectors (copies)."""
    return tuple(
        np.array(a, dtype=float).reshape(-1) if k in which else a for k, a in enumerate(args)
    )
