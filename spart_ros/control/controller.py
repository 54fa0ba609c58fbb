"""
The controller: one object that owns the states, the reference schedule.

The safety gate and the law, with one entry per tick (pure Python, no ROS).

Shaped like a ros2_control controller: :meth:`Controller.configure` (settings, robot model),
:meth:`~Controller.activate`, :meth:`~Controller.deactivate`, :meth:`~Controller.cleanup`,
:meth:`~Controller.shutdown`, and :meth:`~Controller.update` once per control tick, which
returns the :data:`Command` to send (or None: send nothing).  A ROS node (``spart_controller``)
or an offline simulation only carry inputs in and commands out.

States (:attr:`Controller.state`)::

    unconfigured --configure--> inactive --activate--> halted --fresh valid state--> holding
         ^ <--------cleanup--------'  ^ <--deactivate / new model-- (any active state)  |  ^
                                                                  trajectory starts  v  | ends
    holding / tracking --stale or invalid input, failing law--> halted            tracking
    holding / tracking --tracking error > max_tracking_error--> fault
    fault --activate again, clear_fault()--> holding        (any) --shutdown--> finalized

- ``halted``: active, not commanding: waiting for a robot model or a complete state, or a
  stale or rejected input, or a law that failed.  Entering it from commanding sends ONE
  all-zero command, then nothing until a tick computes again with fresh valid data (a stall of
  the controller, event-driven: a state stamped more than ``state_timeout`` after the last
  command, is a halt that ends at that tick, without the zero: the plant applied the last
  command meanwhile); then
  commanding resumes on the reference if every joint is within ``resume_tolerance`` of it,
  else by holding where the robot is (the motors were limp: jumping back would be a jolt).
- ``holding``: commanding a hold of the measured pose taken at activation (the mode's full
  model, gravity included), after a trajectory ended (its last point), after a reset notice
  or a jump of the measured state (:meth:`plant_reset`, ``jump_tolerance``), or after a halt
  far from the reference.  A pose outside the URDF position limits is held too, and a
  trajectory leading back inside is accepted
  (:func:`~spart_ros.control.goals.check_position_limits`).
- ``tracking``: following a trajectory (:meth:`submit`), or a space mode's end-effector
  references.  A trajectory goal's path tolerance is checked at each tick (a violation aborts it
  and holds the measured pose); an action goal then waits at its last point until the measured
  state is within its goal tolerance (:mod:`.tolerances`, JointTrajectoryController's rules).
- ``fault``: the tracking error passed ``max_tracking_error``: the reason is kept; a
  joint-space mode holds the pose measured then (a space mode, where no joint hold is
  defined, sends one zero command and stops); trajectories are refused until the fault is
  cleared by a new activation or :meth:`clear_fault`.
- ``inactive``: configured, sending nothing; deactivation sends one zero command if a command
  may still be applied.  A new robot model while active (:meth:`set_model`) deactivates the
  same way (activate again to command): the model is structural.

Invariants (checked by test/test_controller_state_machine.py over random event sequences):
every command is finite and within the effort limits; every exit from commanding (halt,
deactivation, a new model, a fault without hold, shutdown) sends one zero command; nothing but
a zero command goes out without a fresh, valid state.

Inputs of a tick (:data:`ControlInputs`) are what a node knows: the state (None when there is
none, with the reason), when each input was received (steady clock), the stamp of the newest
joint state (event-driven controllers answer each stamp once: a lockstep plant that
republishes a state it waits on gets one answer) and the steady time now.  ``t``: the control
time (the joint state's stamp, or a timer's clock), s.
"""

from collections import namedtuple
import logging
import math
import time
import traceback
from types import SimpleNamespace

import numpy as np

from .ee_goals import joint_trajectory_of, make_path
from .effort_laws import Gains
from .goals import (
    ABORTED,
    ACTIVE,
    CANCELED,
    check_position_limits,
    GOAL_TOLERANCE_VIOLATED,
    GoalError,
    INVALID_GOAL,
    INVALID_JOINTS,
    OLD_HEADER_TIMESTAMP,
    PATH_TOLERANCE_VIOLATED,
    PENDING,
    PREEMPTED,
    QUEUED,
    SUCCEEDED,
)
from .modes import accepts_pose_goals, build_law, MODES
from .safety import clamp_efforts, CommandGate, effort_limits, ZERO
from .settings import ControllerSettings, GAINS, RUN_TIME
from .tolerances import default_tolerances, GoalTolerances, resolve_tolerances, violation
from .trajectory import hold, JointTrajectory, Reference, ReferenceSchedule
from ..core.connectivity import leaf_links
from ..core.errors import InputError, SpartError
from ..core.inverse_kinematics import InverseKinematics
from ..core.mimic import command_joints as default_command_joints

__all__ = [
    'Controller',
    'ControlInputs',
    'Command',
    'Feedback',
    'Snapshot',
    'STATES',
    'UNCONFIGURED',
    'INACTIVE',
    'HALTED',
    'HOLDING',
    'TRACKING',
    'FAULT',
    'FINALIZED',
]

UNCONFIGURED, INACTIVE, HALTED, HOLDING, TRACKING, FAULT, FINALIZED = (
    'unconfigured',
    'inactive',
    'halted',
    'holding',
    'tracking',
    'fault',
    'finalized',
)
STATES = (UNCONFIGURED, INACTIVE, HALTED, HOLDING, TRACKING, FAULT, FINALIZED)
#: states in which commands go out
COMMANDING = (HOLDING, TRACKING, FAULT)

ControlInputs = namedtuple(
    'ControlInputs',
    'state unavailable joint_times base_time stamp now',
    defaults=(None, None, None, None),
)
ControlInputs.__doc__ = """What a controller is given at a tick.

``state``: ``base`` (R_b, p_b, v_b, w_b: REP 105, see :mod:`.law`), ``q``, ``qd`` (n,) in the
model's independent joint coordinates, or None; ``unavailable``: why there is no state (one
sentence), None when there is; ``joint_times`` (n,): steady-clock receipt time (s) of each
coordinate's last value (NaN: never); ``base_time``: of the base state (None: fixed base, NaN:
never); ``stamp``: the newest joint state's stamp, (sec, nanosec) (None: ticks on a timer, no
answer-once rule); ``now``: the steady clock (s)."""

Command = namedtuple('Command', 'values zero base_torque base_force t actuators', defaults=(None,))
Command.__doc__ = """What to send: ``values`` (m,) in ``command_joints`` order (efforts, or joint
velocities for a velocity interface; the controller's buffer, overwritten by its next command),
``zero`` (an all-zero stop command), the base wrench of an actuated base (``base_torque``,
``base_force`` (3,), at b's origin in b, else None), ``t`` the control time it answers (None
for a stop command sent between ticks), ``actuators``: the base's thruster and wheel commands
(:data:`~spart_ros.control.base_actuation.BaseActuatorCommand`) of a law that drives them, else
None (a stop command: send them zeros)."""

Feedback = namedtuple('Feedback', 't desired actual error')
Feedback.__doc__ = """The last commanded tick for a goal's progress: control time ``t``;
``desired`` (:data:`~spart_ros.control.trajectory.Reference`), ``actual`` ((q, qd)) and ``error``
((e, edot) = desired - actual) in the model's joint coordinates."""

Snapshot = namedtuple(
    'Snapshot',
    'state reason active commanding joint_names position_error velocity_error '
    'efforts trajectory_remaining compute_time counts details actuators',
    defaults=(None,),
)
Snapshot.__doc__ = """What a status message says (:meth:`Controller.snapshot`): ``state`` (one of
:data:`STATES`), ``reason`` (why, '' when commanding normally), ``active``, ``commanding``; per
command joint (``joint_names`` (m,) order): ``position_error``, ``velocity_error`` (reference -
measured at the last command) and the last ``efforts`` sent, each (m,); ``trajectory_remaining``
(s), ``compute_time`` (s, of the last tick), ``counts`` (commands, zeros, timeouts, rejected,
recoveries, trajectories, faults, resets, jumps) and the law's ``details`` (a space mode's status,
else None); ``actuators``: the base actuators' last
:data:`~spart_ros.control.base_actuation.ActuationStatus`, else None."""


def _finite(a, zeros):
    """
    Every value of ``a`` finite.

    A . 0 is NaN when one is NaN or infinite, else 0 (one dot product: a tenth of isfinite(a).all()
    on a short vector).
    """
    return np.dot(a, zeros) == 0.0


class Controller:
    """
    The state machine (see the module docstring).

    ``notify(level, key, text)``: where events go ('info', 'warning', 'error'; ``key`` for
    throttling); default: the ``spart_ros.controller`` logger.
    """

    def __init__(self, notify=None):
        self._notify = notify or _log
        self.settings = None
        self.robot = self.dynamics = self.law = None
        self.model_error = None
        self.gate = CommandGate(ControllerSettings.state_timeout, enabled=False)
        self.gate.reason = UNCONFIGURED
        self.fault = None
        self._configured = self._finalized = False
        self._forget_joints()
        self._reset_run()
        self.counts = {'trajectories': 0, 'faults': 0, 'resets': 0, 'jumps': 0}

    # -- what it is doing -----------------------------------------------------------------
    @property
    def active(self):
        return self.gate.enabled

    @property
    def state(self):
        """One of :data:`STATES` (module docstring)."""
        if self._finalized:
            return FINALIZED
        if not self._configured:
            return UNCONFIGURED
        if not self.gate.enabled:
            return INACTIVE
        if self.fault is not None:
            return FAULT
        if self.gate.halted:
            return HALTED
        return TRACKING if self._tracking() else HOLDING

    @property
    def commanding(self):
        return self.state in COMMANDING and not self.gate.halted

    @property
    def reason(self):
        """Why the controller does what it does ('' when commanding normally)."""
        state = self.state
        if state == FAULT:
            why = self.fault + (
                f' (and {self.gate.reason})' if self.gate.halted and self.gate.reason else ''
            )
        elif state == HALTED:
            why = self.model_error or self.gate.reason
        elif state == INACTIVE:
            return self.model_error or self.gate.reason
        else:
            why = ''
        pending = self._pending_text()
        return f'{why}; {pending}' if why and pending else why or pending

    def _tracking(self):
        if self.law is not None and self.law.follows == 'end_effector':
            return self.law.has_reference
        goal = self._goal
        return goal is not None and goal.status in (ACTIVE, QUEUED)

    def _pending_text(self):
        goal = self._pending
        return f'trajectory {goal.id} pending: {goal.message}' if goal is not None else ''

    # -- lifecycle ------------------------------------------------------------------------
    def configure(self, settings, robot=None, dynamics=None, hardware=()):
        """
        Go from unconfigured to inactive with ``settings`` and, when known, the robot model.

        ``settings``: :class:`ControllerSettings`; the robot model: ``robot``: core Robot;
        ``dynamics``: its fast path in independent coordinates, built when None; ``hardware``: the
        URDF's ``<ros2_control>`` tags, whose effort joints are the default command joints
        (:func:`spart_ros.core.mimic.command_joints`). InputError naming the setting (or the
        joints) at fault: the controller stays unconfigured.
        """
        self._require((UNCONFIGURED,), 'configure')
        settings = settings.check()
        self.settings = settings
        self.gate.state_timeout = float(settings.state_timeout)
        self.robot = self.dynamics = self.law = None
        self.model_error = None
        if robot is not None:
            self._build(robot, dynamics, hardware)
        self._configured = True
        self.gate.reason = '' if self.law is not None else 'no robot model yet'

    def cleanup(self):
        """Inactive -> unconfigured: settings and law forgotten."""
        self._require((INACTIVE,), 'cleanup')
        self._abort_goals('the controller was cleaned up')
        self._configured = False
        self.settings = self.law = self.robot = self.dynamics = self.model_error = None
        self._forget_joints()
        self.gate.reason = UNCONFIGURED

    def activate(self):
        """
        Inactive -> active.

        Holds the pose measured at the next fresh, valid state (the mode's full model); a fault is
        cleared; the law's references (a base target, end-effector references) are forgotten.
        InputError when the model cannot be controlled.
        """
        self._require((INACTIVE,), 'activate')
        if self.model_error:
            raise InputError(self.model_error)
        self.gate.enable()
        self.gate.reason = (
            'waiting for a complete, fresh state'
            if self.law is not None
            else 'waiting for a robot description'
        )
        self._reset_run()
        if self.law is not None:
            self.law.clear_references()

    def deactivate(self, reason=''):
        """
        ``active`` -> inactive.

        Returns ONE all-zero :data:`Command` if a command may still be applied (else None); goals
        are aborted, nothing is sent until activated again.
        """
        if not self.active:
            return None
        self._abort_goals('the controller was deactivated' + (f' ({reason})' if reason else ''))
        self.gate.disable(reason)
        self.fault = None
        self._schedule = None
        return self._zero_if_pending()

    def shutdown(self):
        """
        Any state -> finalized.

        ONE all-zero :data:`Command` if a command may still be applied.
        """
        zero = self.deactivate('shutting down') if self.active else None
        self._finalized = True
        return zero

    def set_model(self, robot, dynamics=None, hardware=()):
        """
        Take a new robot model (a new robot_description).

        ``hardware``: its ``<ros2_control>`` tags. Active with a law: one zero command (if one may
        be applied), inactive until activated again (a model is structural); active waiting for its
        first model: the law is built and the controller goes on (holding at the first state). A
        model the settings cannot control leaves it inactive, saying why (:attr:`reason`, and
        :meth:`activate` refuses) until a usable model comes. Returns the zero :data:`Command` or
        None.
        """
        zero = None
        if self.active and self.law is not None:
            zero = self.deactivate('the robot model changed: activate again to command')
        elif self.law is not None:
            self._abort_goals('the robot model changed')
        self.law = None
        self.model_error = None
        if not self._configured:  # configure() takes the model
            return zero
        try:
            self._build(robot, dynamics, hardware)
        except Exception as err:  # noqa: BLE001 - any model: never fatal, waits for another one
            self._forget_joints()
            text = (
                str(err)
                if isinstance(err, SpartError)
                else f'unexpected {type(err).__name__}: {err}'
            )
            self.model_error = f'cannot control this model: {text}'
            self._notify(
                'error',
                'model',
                f'{self.model_error}; waiting for a robot description it can control'
                + ('' if isinstance(err, SpartError) else '\n' + traceback.format_exc()),
            )
            if self.active:
                zero = self.deactivate(self.model_error) or zero
            self.gate.reason = self.model_error
        goal = self._pending
        if goal is not None and self.active:  # kept for the model: does it fit?
            try:
                self._columns(goal)
                goal.message = 'waiting for the first state'
            except SpartError as err:
                self._pending = None
                goal._finish(ABORTED, str(err), getattr(err, 'code', INVALID_GOAL))
                self.gate.rejected += 1
                self._notify(
                    'error', 'goal', f'trajectory {goal.id} kept for the robot model: {err}'
                )
        return zero

    def _require(self, states, what):
        if self.state not in states:
            raise InputError(
                f'{what}: not possible in state {self.state} (needs {" or ".join(states)})'
            )

    # -- the model ------------------------------------------------------------------------
    def _forget_joints(self):
        self._ik = None
        self.joint_names, self.q_names = [], []
        self._every_joint, self._fault_check = False, False
        self._zeros_q, self._zero3, self._checked_base = np.zeros(0), np.zeros(3), None
        self._minus_limits = np.zeros(0)
        self._index = np.zeros(0, dtype=np.intp)
        self._limits = np.zeros(0)
        self._values = np.zeros(0)
        self._zero = np.zeros(0)
        self._lower = self._upper = np.zeros(0)
        self._max_error = np.zeros(0)
        self._efforts = np.zeros(0)

    def _build(self, robot, dynamics=None, hardware=()):
        """Law, command joints, limits for ``robot`` (InputError naming what does not fit)."""
        from ..core.fast.mimic import fast_dynamics

        s = self.settings
        if dynamics is None:
            dynamics = fast_dynamics(robot, joint_dynamics=s.joint_dynamics)
        elif robot.declares_joint_dynamics and dynamics.joint_dynamics != bool(s.joint_dynamics):
            raise InputError(
                f'joint_dynamics is {s.joint_dynamics} but the dynamics given to the controller '
                f"{'adds' if dynamics.joint_dynamics else 'leaves out'} the joints' damping, "
                'friction and armature: build it with fast_dynamics(robot, joint_dynamics=...) to '
                'match'
            )
        q_names = list(robot.coordinates.names)
        names = list(s.command_joints) or default_command_joints(robot, hardware)
        index = {n: k for k, n in enumerate(q_names)}
        unknown = [n for n in names if n not in index]
        if unknown:
            followers = list(robot.coordinates.followers)
            raise InputError(
                f'command_joints {unknown} are not moving joints of the model {robot.name!r} '
                f'({q_names}'
                + (f'; mimic joints {followers} follow their leaders' if followers else '')
                + ')'
            )
        per, gains, limits = self._per_joint(s, names, q_names, robot)
        law = build_law(s.mode, dynamics, s, gains)
        _warm_up(law, len(q_names))
        for note in getattr(law, 'notes', ()):
            self._notify('warning', ('note', note), f'{s.mode}: {note}')
        if law.interface == 'velocity':
            limits = np.full(len(names), np.inf)  # the law bounds the joint rates itself
        joints = {j.name: j.limits for j in robot.joints}
        self.robot, self.dynamics, self.law = robot, dynamics, law
        self._ik = None
        self.q_names = q_names
        self.joint_names = names
        self._index = np.array([index[n] for n in names], dtype=np.intp)
        self._values = np.zeros(len(names))
        self._zero = np.zeros(len(names))
        self._efforts = np.zeros(len(names))
        self._lower = np.array([joints[q].lower for q in q_names], dtype=float)
        self._upper = np.array([joints[q].upper for q in q_names], dtype=float)
        self._every_joint = bool(np.array_equal(self._index, np.arange(len(q_names))))
        self._zeros_q = np.zeros(len(q_names))
        self._err, self._over = np.zeros(len(q_names)), np.zeros(len(q_names), dtype=bool)
        self._checked_base = None
        self._set_limits(limits, per, s)

    def _set_limits(self, limits, per, settings):
        self._limits, self._minus_limits = limits, -limits
        self._max_error = _full(
            per['max_tracking_error'], np.inf, self._index, len(self.q_names), zero_means=np.inf
        )
        self._fault_check = self.law.follows == 'joint_trajectory' and bool(
            np.isfinite(self._max_error).any()
        )
        self._tolerances = default_tolerances(
            len(self.q_names),
            self._index,
            per['path_tolerance'],
            per['goal_tolerance'],
            settings.stopped_velocity_tolerance,
            settings.goal_time,
        )

    def _finite_base(self, base):
        """
        Return the base state finite.

        A fixed base's is checked once (the same object every tick); a moving base's is not checked
        per tick: a NaN or infinity in it makes the efforts non-finite, which the efforts' check
        refuses (the tick halts like a failing law).
        """
        if self.settings.floating:
            return True
        z = self._zero3
        if (
            _finite(base.p_b, z)
            and _finite(base.v_b, z)
            and _finite(base.w_b, z)
            and _finite(base.R_b[0], z)
            and _finite(base.R_b[1], z)
            and _finite(base.R_b[2], z)
        ):
            self._checked_base = base
            return True
        return False

    def _per_joint(self, s, names, q_names, robot):
        """(per-joint settings, Gains in model coordinates, effort limits (m,))."""
        per = s.per_joint(names)
        cols = [q_names.index(n) for n in names]
        full = {key: _full(per[key], per[key][0], cols, len(q_names)) for key in GAINS}
        gains = Gains(
            len(q_names),
            full['kp'],
            full['kd'],
            full['ki'],
            full['integral_limit'],
            full['impedance_stiffness'],
            full['impedance_damping'],
        )
        urdf = {j.name: j.limits.effort for j in robot.joints}
        limits = effort_limits(names, urdf, per['effort_limits'] if 'effort_limits' in per else ())
        return per, gains, limits

    def apply_settings(self, **changes):
        """
        Change run-time settings (:data:`~spart_ros.control.settings.RUN_TIME`) between two ticks.

        InputError naming the first bad one (nothing changed), or naming a structural one (those
        take a reconfigure: deactivate, cleanup, configure, activate).
        """
        structural = sorted(set(changes) - set(RUN_TIME))
        if structural:
            raise InputError(
                f'{structural}: structural settings take a reconfigure (deactivate, cleanup, '
                'configure, activate)'
            )
        if self.settings is None:
            raise InputError('apply_settings: the controller is not configured')
        new = self.settings.replace(**changes).check()
        if self.law is not None:
            per, gains, limits = self._per_joint(new, self.joint_names, self.q_names, self.robot)
            self.law.apply_settings(new, gains)
            self._set_limits(
                limits if self.law.interface != 'velocity' else self._limits, per, new
            )
        self.settings = new
        self.gate.state_timeout = float(new.state_timeout)

    # -- ticks ------------------------------------------------------------------------------
    def _reset_run(self):
        """Per-activation memory: the reference, the stamps answered, the last commanded state."""
        self._schedule = None
        self._hold_pending = True
        self._answered = self._stamp_seen = None
        self._stamp_changed = None
        self._last_t = None
        self._last_q = self._last_qd = None
        self._last_base = None
        self._last_ref = None
        self._reset_at = None  # (control time of the first state after a plant reset, why)
        self._fault_at = None  # (control time of the tick before a fault, of the fault's tick)
        self._jump_at = None  # (control time of the tick before a jump, of the jump's tick)
        self._goal = None  # the goal followed or queued (the newest accepted)
        self._pending = None  # a goal waiting for the model or the first state
        self.fault = None
        self.details = None
        self.actuation = None
        self.compute_time = 0.0

    def update(self, inputs, t):
        """
        One control tick at control time ``t`` (s); the :data:`Command` to send, or None.

        Never raises: anything unexpected halts like a failing law.
        """
        try:
            return self._update(inputs, t)
        except Exception as err:  # noqa: BLE001 - a tick must never kill its caller: halt instead
            return self._failed(err)

    def check(self, inputs):
        """
        Return the watchdog, between ticks (e.g. a steady timer).

        The zero :data:`Command` when the inputs went stale while commanding (once), else None.
        Never computes a command.
        """
        if not self.active or self.law is None or self.gate.halted:
            return None
        problem = self._problem(inputs, watchdog=True)
        if problem is None:
            return None
        return self._stop(problem)

    def reject(self, what, error):
        """
        Halt until a tick computes again: an input was rejected (NaN, wrong lengths...).

        Return the zero :data:`Command` if commanding, else None.
        """
        if not self.active or self.law is None:
            return None
        if self.gate.reject(f'{what} rejected: {error}') == ZERO:
            return self._zero_command()
        return None

    def _stop(self, problem, timeout=True):
        decision = self.gate.decide(problem, timeout)
        if decision == ZERO:
            self._notify('warning', 'halt', f'commands stopped (one zero command sent): {problem}')
            return self._zero_command()
        return None

    def _zero_if_pending(self):
        return self._zero_command() if self.gate.decide(None) == ZERO else None

    def _zero_command(self):
        self._efforts = self._zero
        return Command(self._zero, True, None, None, None)

    def _problem(self, inputs, watchdog=False):
        """Why the inputs are not fit to command now, or None."""
        if inputs.unavailable:
            return inputs.unavailable
        if inputs.state is None:
            return 'no state'
        jt = inputs.joint_times
        times = (
            (jt if self._every_joint else jt[self._index])
            if jt is not None and len(self._index)
            else None
        )
        stamp_time = None
        if (
            watchdog
            and self.settings.event_driven
            and inputs.stamp is not None
            and inputs.stamp == self._answered
        ):
            stamp_time = self._stamp_changed
        problem = self.gate.problem(
            inputs.now, times if times is not None else (), inputs.base_time, stamp_time
        )
        if (
            problem is not None
            and stamp_time is not None
            and 'stamp has not advanced' in problem
            and tuple(inputs.stamp) == (0, 0)
        ):
            problem += (
                '; the joint states are unstamped (stamp 0): tick on a timer (rate > 0) instead'
            )
        return problem

    def _update(self, inputs, t):
        if not self.active or self.law is None:
            return None
        s = self.settings
        stamp = inputs.stamp if s.event_driven else None
        if stamp is not None:
            if stamp != self._stamp_seen:
                self._stamp_seen, self._stamp_changed = stamp, inputs.now
            if stamp == self._answered:  # answered already (a lockstep plant republishing)
                return self.check(inputs)
        problem = self._problem(inputs)
        if problem is not None:
            out = self._stop(problem)
            if out is not None:
                self._answered = stamp
            return out
        state = inputs.state
        if not (
            _finite(state.q, self._zeros_q)
            and _finite(state.qd, self._zeros_q)
            and (state.base is self._checked_base or self._finite_base(state.base))
        ):
            out = self.reject('state', 'not finite (NaN or infinity)')
            self._answered = stamp if out is not None else self._answered
            return out
        if self.fault is not None and not self.law.holds_position:
            self._answered = stamp
            return None  # stopped by the fault until cleared
        if (
            s.event_driven
            and not self.gate.halted
            and self._last_t is not None
            and t - self._last_t > s.state_timeout
        ):
            self._unsupervised(t)
        t0 = time.perf_counter()
        t = float(t)
        self._before_law(state, t)
        law = self.law
        ref = None
        if law.follows != 'end_effector':
            schedule = self._schedule
            ref = schedule.sample(t)
            schedule.advance(t)
            if self.fault is None and self._fault_check and self._tracking_fault(state, ref, t):
                if not law.holds_position:
                    self._answered = stamp
                    return self._stop(f'fault: {self.fault}', timeout=False)
                ref = self._schedule.sample(t)
            elif self._goal is not None:
                ref = self._follow_goal(state, ref, t)
        dt = 0.0 if self._last_t is None else min(max(t - self._last_t, 0.0), s.state_timeout)
        if law.follows == 'end_effector':
            out = law.command(state, ref, t, dt, inputs.now)
        else:
            out = law.command(state, ref, t, dt)
        values = out.values if self._every_joint else out.values[self._index]
        if not _finite(values, self._zero):
            clamp_efforts(values, self._limits)  # raises, naming the joint: the law failed
        values = np.clip(values, self._minus_limits, self._limits, out=self._values)
        self.gate.commanded()
        self._answered = stamp
        self._remember(state, ref, t)
        self._efforts = values
        self.details = out.details
        self.actuation = None if out.actuators is None else out.actuators.status
        self.compute_time = time.perf_counter() - t0
        return Command(values, False, out.base_torque, out.base_force, t, out.actuators)

    def _unsupervised(self, t):
        """
        Handle a stall: the plant's time ran past state_timeout since the last command.

        This controller did not run (a stalled process; the watchdog did not either): the plant
        applied that command meanwhile, and as after a halt the robot may be anywhere near the
        reference. The same rules as after a halt, whichever callback runs first after the stall
        (the watchdog's zero command, or this state): resume on the reference within
        resume_tolerance, else hold the measured pose.
        """
        why = (
            f'the plant ran {t - self._last_t:.3f} s on the last command (state_timeout '
            f'{self.settings.state_timeout:g} s): this controller did not answer its states '
            'meanwhile (a stalled process?)'
        )
        self._notify('warning', 'unsupervised', why)
        self.gate.unsupervised(why)

    def _before_law(self, state, t):
        """
        Set the reference this tick follows.

        It handles, in this order: the control clock going back, the first state after an
        announced plant reset, a resume after a halt, a jump of the measured state, an activation
        or a reset to hold (docs/controller.md, "Resets, jumps and stalls").
        """
        s = self.settings
        if self._last_t is not None and t < self._last_t - s.state_timeout:
            self._drop(f'the control clock jumped back by {self._last_t - t:.3f} s', 'clock back')
            self._reset_at = None
        elif self._reset_at is not None and t >= self._reset_at[0] - _STAMP_EPS:
            self._drop(self._reset_at[1], 'reset')
            self._reset_at = None
        elif self.gate.recovering:
            self._resume(state, t)
        elif self._last_q is not None and not self._hold_pending:
            jump = self._jump(state, t)
            if jump:
                self.counts['jumps'] += 1
                self._jump_at = (self._last_t, t)
                self._drop(jump, 'jump')
        if self._hold_pending:
            self._hold(state, t)

    def _jump(self, state, t):
        """
        Return the sentence naming a jump of the measured positions, or ''.

        A jump: a change of the measured positions since the last command that the velocities
        cannot explain (a plant reset, a re-homed encoder).  A velocity passing from the last
        measured one ``v0`` to this one ``v1`` without overshooting either moves a coordinate by
        between ``min(v0, v1) dt`` and ``max(v0, v1) dt``; a change outside that interval widened
        by ``jump_tolerance`` is a jump.  The sign counts: an arm moving forward that is found
        behind, at rest, was put there (after a lag of the controller too, where ``dt`` is long
        and the speeds alone would explain almost any distance).
        """
        dq = np.subtract(state.q, self._last_q)
        tol = self.settings.jump_tolerance
        if np.abs(dq).max() <= tol:
            return ''
        dt = max(t - self._last_t, 0.0)
        low = np.minimum(state.qd, self._last_qd) * dt
        high = np.maximum(state.qd, self._last_qd) * dt
        beyond = np.maximum(low - dq, dq - high) - tol
        if not (beyond > 0).any():
            return ''
        k = int(np.argmax(beyond))
        return (
            f'the measured {self.q_names[k]} jumped by {dq[k]:.4g} in {dt:.4g} s (its velocities '
            f'{self._last_qd[k]:.3g} -> {state.qd[k]:.3g} allow {low[k]:.3g} to {high[k]:.3g}, '
            f'+- jump_tolerance {tol:g})'
        )

    def _drop(self, why, key):
        """Drop the reference (goals aborted) and hold the pose of this tick."""
        if not self._hold_pending:
            self._notify(
                'warning', key, f'{why}: the reference is dropped, holding the measured pose'
            )
        self._abort_goals(why)
        self._hold_pending = True

    def _resume(self, state, t):
        """
        After a halt (the motors were limp).

        Keep the reference if every joint is within resume_tolerance of it, else hold where the
        robot is (the goal is aborted).
        """
        tolerance = self.settings.resume_tolerance
        law = self.law
        base = (
            '; the base target is kept' if getattr(law, 'base_reference', None) is not None else ''
        )
        if self._hold_pending:
            return
        if law.follows != 'end_effector' and self._schedule is not None:
            gap = (
                float(np.abs(self._schedule.sample(t).position - state.q)[self._index].max())
                if len(self._index)
                else 0.0
            )
            if gap <= tolerance:
                law.reset()
                self._notify(
                    'info',
                    'resume',
                    f'fresh valid state again: commanding resumes on the reference ({gap:.3g} '
                    f'from it, resume_tolerance {tolerance:g}){base}',
                )
                return
            why = f'{gap:.3g} from the reference (resume_tolerance {tolerance:g})'
        else:
            why = 'no joint reference to resume'
        self._notify(
            'info',
            'resume',
            f'fresh valid state again: commanding resumes, holding the current position '
            f'({why}){base}',
        )
        self._abort_goals(f'the controller halted and the robot is {why}')
        self._hold_pending = True

    def _hold(self, state, t):
        """Hold the measured pose from ``t``; a pending goal starts here."""
        self._hold_pending = False
        self._schedule = ReferenceSchedule(hold(t, state.q.copy()))
        self.law.reset()
        self._last_q = None  # no jump check across a hold
        goal, self._pending = self._pending, None
        if goal is not None and self.fault is None:
            try:
                self._start(goal, t)
            except SpartError as err:
                goal._finish(ABORTED, str(err))
                self.gate.rejected += 1
                self._notify(
                    'error',
                    'goal',
                    f'trajectory {goal.id} refused: {err} (holding the current position)',
                )

    def _remember(self, state, ref, t):
        if self._last_q is None:
            self._last_q, self._last_qd = state.q.copy(), state.qd.copy()
        else:
            np.copyto(self._last_q, state.q)
            np.copyto(self._last_qd, state.qd)
        self._last_t = t
        self._last_base = state.base
        self._last_ref = ref

    def _tracking_fault(self, state, ref, t):
        """
        Tracking error beyond max_tracking_error.

        Enter the fault (hold the measured pose) and return True.
        """
        e = np.subtract(ref.position, state.q, out=self._err)
        np.abs(e, out=e)
        if not np.greater(e, self._max_error, out=self._over).any():
            return False
        k = int(np.argmax(e - self._max_error))
        self.fault = (
            f'tracking error of {self.q_names[k]} {e[k]:.4g} > max_tracking_error '
            f'{self._max_error[k]:g} at t = {t:.3f} s'
        )
        self.counts['faults'] += 1
        self._fault_at = (self._last_t, t)
        self._notify(
            'error',
            'fault',
            f'fault: {self.fault}: '
            + ('holding the measured pose' if self.law.holds_position else 'commands stopped')
            + '; a new activation or clear_fault (~/enable true) leaves it',
        )
        self._abort_goals(f'fault: {self.fault}', PATH_TOLERANCE_VIOLATED)
        self._schedule = ReferenceSchedule(hold(t, state.q.copy()))
        return True

    def _failed(self, err):
        """
        Halt like a rejected input after a tick that cannot compute.

        A tick cannot compute on a law failing on a non-finite or singular state, or on an
        unexpected error. Return the zero Command if it was commanding.
        """
        unexpected = not isinstance(err, SpartError)
        text = f'unexpected {type(err).__name__}: {err}' if unexpected else str(err)
        zero = self.gate.reject(f'control law: {text}') == ZERO if self.active else False
        self._notify(
            'warning',
            ('law', text),
            f'control law failed: {text}'
            + ('; one zero command sent' if zero else '; commands stay stopped')
            + ('\n' + traceback.format_exc() if unexpected else ''),
        )
        if zero:
            self._answered = self._stamp_seen
            return self._zero_command()
        return None

    def clear_fault(self):
        """
        Leave the fault: hold the pose measured at the next tick.

        False when there is none.
        """
        if self.fault is None:
            return False
        self._notify('info', 'fault', f'fault cleared ({self.fault}): holding the measured pose')
        self.fault = None
        self._hold_pending = True
        return True

    def plant_reset(self, why='the plant was reset', t=None):
        """
        Drop the reference: the plant announced a reset.

        A reset, or anything that moved the robot without the controller: the reference is dropped
        (goals aborted) and the pose measured at the first state after the reset is held.

        ``t``: the control time (stamp) of the first state after the reset, when the plant says
        it (``spart_sim``'s notice does; None: unknown, the next tick's state is taken as the
        first after the reset). Event-driven, the notice and the state may arrive in either
        order, and the controller may be late:

        - before that state was answered: the state at or after ``t`` is held when it comes
          (states before it are followed as usual);
        - after it was answered: if that state raised a tracking fault, the fault was the reset's
          doing and is withdrawn; if it was seen as a jump, the reference was dropped already;
          else the pose measured at the next tick is held.
        """
        self.counts['resets'] += 1
        if not self.active:
            return
        if t is None or not self.settings.event_driven or not t > 0.0:
            self._drop(why, 'reset')
            return
        t = float(t)
        if self._last_t is None or self._last_t < t - _STAMP_EPS:
            if self._reset_at is None or t < self._reset_at[0]:
                self._reset_at = (t, why)
            return
        fault = self._fault_at
        if self.fault is not None and fault is not None and _between(fault, t):
            self._notify(
                'warning',
                'reset',
                f'{why}: the tracking fault at t = {fault[1]:.3f} s ({self.fault}) was the reset '
                '(its notice came after the state): fault withdrawn, holding the measured pose',
            )
            self.fault = None
            self._fault_at = None
            self._hold_pending = True
            return
        if self._jump_at is not None and _between(self._jump_at, t):
            return  # seen as a jump at that state: dropped and held already
        self._drop(why, 'reset')

    # -- references -------------------------------------------------------------------------
    def submit(self, goal, t):
        """
        Accept the :class:`~spart_ros.control.goals.TrajectoryGoal` ``goal`` at control time ``t``.

        Started at once or at its ``start``, from the reference followed then (no jump; an earlier
        goal is preempted from then on), or kept pending until the model and a measured state are
        there. InputError naming why it is refused (status 'aborted').
        """
        try:
            self._accept(goal, t)
        except SpartError as err:
            goal._finish(ABORTED, str(err), getattr(err, 'code', INVALID_GOAL))
            self.gate.rejected += 1
            raise
        self.counts['trajectories'] += 1
        return goal

    def _accept(self, goal, t):
        s = self.settings
        if s is None or not self.active:
            raise InputError(f'the controller is {self.state}: trajectory ignored (activate it)')
        law_class = MODES[s.mode]
        if law_class.follows == 'end_effector':
            raise InputError(
                f'mode {s.mode} follows end-effector references, not joint '
                'trajectories: trajectory ignored'
            )
        if law_class.follows == 'none':
            raise InputError(
                f'mode {s.mode} holds no position reference (gravity compensation, '
                'damping with kd): trajectory refused; use computed_torque to follow trajectories'
            )
        if self.fault is not None:
            raise InputError(
                f'the controller is in fault ({self.fault}): trajectory refused until '
                'the fault is cleared (a new activation, or ~/enable true)'
            )
        if goal.tolerances is not None and goal.start and goal.start + goal.times[-1] < t:
            raise GoalError(
                f'the trajectory stamped {goal.start:.6f} s ends at '
                f'{goal.start + goal.times[-1]:.6f} s, before it came (control time {t:.6f} s): '
                'refused',
                OLD_HEADER_TIMESTAMP,
            )
        if self.law is None:
            self._keep(goal, 'waiting for a robot model')
            return
        self._columns(goal)
        if self._hold_pending or self._schedule is None:
            if self._last_q is not None:  # checked now against the last measured pose
                self._trajectory(goal, 0.0, _at_rest(self._last_q))
            self._keep(
                goal,
                'starts at the next command'
                if self._last_t is not None
                else 'waiting for the first state',
            )
            return
        self._start(goal, t)

    def submit_pose(self, goal, t):
        """
        Accept the end-effector pose goal ``goal`` at control time ``t``.

        ``goal``: a :class:`~spart_ros.control.ee_goals.PoseGoal`. An end-effector mode follows its
        path (from its next tick at or after the goal's start); a fixed-base joint mode turns the
        path into a joint trajectory by inverse kinematics at samples of it
        (``path_sample_period``), starting from the reference followed then (see
        :mod:`spart_ros.control.ee_goals`). InputError naming why it is refused (status 'aborted'):
        a mode without pose goals, no model or no commanded state yet, a fault, a path the end
        effector cannot follow.
        """
        try:
            self._accept_pose(goal, t)
        except SpartError as err:
            goal._finish(ABORTED, str(err))
            self.gate.rejected += 1
            raise
        self.counts['trajectories'] += 1
        return goal

    def _accept_pose(self, goal, t):
        s = self.settings
        if s is None or not self.active:
            raise InputError(f'the controller is {self.state}: pose goal ignored (activate it)')
        if not accepts_pose_goals(s.mode):
            law_class = MODES[s.mode]
            why = (
                'a floating base: use a space-robot mode (resolved_rate...) or '
                'floating_cartesian_impedance'
                if law_class.base == 'floating'
                else 'it holds no reference'
            )
            raise InputError(
                f'mode {s.mode} takes no end-effector pose goal ({why}): goal refused'
            )
        if self.fault is not None:
            raise InputError(
                f'the controller is in fault ({self.fault}): goal refused until the fault is '
                'cleared'
            )
        if self.law is None:
            raise InputError(
                'no robot model yet: pose goal refused (send it once the controller commands)'
            )
        if self.law.follows == 'end_effector':
            self.law.set_reference('ee_goal', goal)
            return
        if self._hold_pending or self._schedule is None or self._last_base is None:
            raise InputError(
                'the controller has not commanded a measured state yet: pose goal refused (send '
                'it once it commands)'
            )
        start = max(float(t), goal.start) if goal.start else float(t)
        ik = self._inverse_kinematics()
        ref = self._schedule.sample(start)
        R0, r0, _ = self.law.frames.fixed(self._last_base)
        R, p = ik.pose(ref.position, R0, r0)
        path = make_path(goal, R, p, start, self._last_base.R_b, self._last_base.p_b)
        trajectory = joint_trajectory_of(
            path, ik, ref.position, R0, r0, s.path_sample_period, start=start
        )
        self._accept(trajectory, t)
        goal.trajectory = trajectory

    def _inverse_kinematics(self):
        """
        Return the fixed-base IK of the settings' end effector (ee_link, ee_offset).

        Built once per model.
        """
        if self._ik is None:
            s = self.settings
            self._ik = InverseKinematics(
                self.robot,
                s.ee_link or leaf_links(self.robot)[0],
                list(s.ee_offset),
                fast=self.dynamics.new_workspace(),
            )
        return self._ik

    def _keep(self, goal, why):
        if self._pending is not None:
            self._pending._finish(PREEMPTED, f'replaced by trajectory {goal.id} before it started')
        goal.status, goal.message = PENDING, why
        self._pending = goal

    def _columns(self, goal):
        index = {n: k for k, n in enumerate(self.q_names)}
        bad = [n for n in goal.joint_names if n not in index]
        if bad:
            raise GoalError(
                f'joint_names {list(goal.joint_names)} must be distinct moving joints of '
                f'the model ({self.q_names}); unknown: {bad}',
                INVALID_JOINTS,
            )
        return np.array([index[n] for n in goal.joint_names], dtype=np.intp)

    def _trajectory(self, goal, start_time, start):
        """
        Return the JointTrajectory of ``goal`` from the reference ``start`` at ``start_time``.

        Joints it does not name hold their reference position. InputError naming the problem.
        """
        cols = self._columns(goal)
        check_position_limits(
            goal.joint_names,
            goal.positions,
            start.position[cols],
            self._lower[cols],
            self._upper[cols],
            self.settings.limit_tolerance,
            goal.first,
        )
        default = self._tolerances
        goal.resolved = (
            GoalTolerances(default.path, None)
            if goal.tolerances is None
            else resolve_tolerances(default, self.q_names, goal.tolerances)
        )
        k, n = len(goal.times), len(start.position)

        def full(rows, base):
            if rows is None:
                return None
            out = np.tile(base, (k, 1))
            out[:, cols] = rows
            return out

        zeros = np.zeros(n)
        return JointTrajectory(
            start_time,
            start,
            goal.times,
            full(goal.positions, start.position),
            full(goal.velocities, zeros),
            full(goal.accelerations, zeros),
        )

    def _start(self, goal, t):
        start = max(t, goal.start) if goal.start else t
        trajectory = self._trajectory(goal, start, self._schedule.sample(start))
        self._schedule.replace(trajectory)
        previous = self._goal
        if previous is not None and not previous.done:
            previous._finish(PREEMPTED, f'replaced by trajectory {goal.id} from t = {start:.6f} s')
        goal.start_time, goal.end_time = start, trajectory.end_time
        goal.status, goal.message = (QUEUED if start > t else ACTIVE), ''
        self._goal = goal
        self._notify(
            'info',
            ('goal', goal.id),
            f'trajectory of {len(goal.times)} points for {goal.joint_names} over '
            f'{goal.times[-1]:g} s accepted (goal {goal.id}): starts at {start:.9f} s (control '
            'time)',
        )

    def _follow_goal(self, state, ref, t):
        """
        Return the followed goal at control time ``t``.

        Started, its path tolerance checked (a violation aborts it and holds the measured pose),
        and after its end, succeeded once the measured state is within its goal tolerance (a topic
        goal: at once), or aborted when that has not happened within its goal time tolerance (the
        last point stays held). Returns the reference of this tick.
        """
        goal = self._goal
        if goal.done:
            return ref
        if goal.status == QUEUED:
            if t < goal.start_time:
                return ref
            goal.status = ACTIVE
        tol = goal.resolved
        if t < goal.end_time:
            if tol is not None and tol.checks_path:
                why = violation(
                    tol.path,
                    self.q_names,
                    ref.position - state.q,
                    ref.velocity - state.qd,
                    'path tolerance',
                )
                if why:
                    why = f'{why} at t = {t:.3f} s'
                    self._notify(
                        'warning',
                        ('path', goal.id),
                        f'trajectory {goal.id} aborted: {why}; holding the measured pose',
                    )
                    self._abort_goals(why, PATH_TOLERANCE_VIOLATED)
                    self._schedule = ReferenceSchedule(hold(t, state.q.copy()))
                    return self._schedule.sample(t)
            return ref
        if tol is None or tol.goal is None:
            goal._finish(SUCCEEDED, f'reached the last point at {goal.end_time:.6f} s')
            return ref
        why = violation(
            tol.goal,
            self.q_names,
            ref.position - state.q,
            ref.velocity - state.qd,
            'goal tolerance',
        )
        late = t - goal.end_time
        if not why:
            goal._finish(
                SUCCEEDED,
                f'reached the last point at {goal.end_time:.6f} s, within the goal tolerance '
                f'{late:.3f} s later',
            )
        elif tol.goal_time > 0 and late > tol.goal_time:
            why = (
                f'{why} {late:.3f} s after the end of the trajectory (goal_time_tolerance '
                f'{tol.goal_time:g} s); holding its last point'
            )
            self._notify('warning', ('goal', goal.id), f'trajectory {goal.id} aborted: {why}')
            goal._finish(ABORTED, why, GOAL_TOLERANCE_VIOLATED)
        return ref

    def _abort_goals(self, why, code=INVALID_GOAL):
        for goal in (self._goal, self._pending):
            if goal is not None:
                goal._finish(ABORTED, why, code)
        self._goal = self._pending = None
        if self.law is not None and hasattr(self.law, 'abort_goal'):
            self.law.abort_goal(why)

    def cancel(self, goal, t=None):
        """
        Cancel ``goal`` at control time ``t`` (default: the last tick's).

        If followed (or queued), the current reference position is held from then on
        (JointTrajectoryController's cancel). False when it was already done.
        """
        if goal.done:
            return False
        goal._finish(CANCELED, 'canceled')
        if goal is self._pending:
            self._pending = None
        elif goal is self._goal:
            self._goal = None
            t = self._last_t if t is None else t
            if self._schedule is not None and t is not None and not self._hold_pending:
                self._schedule = ReferenceSchedule(hold(t, self._schedule.sample(t).position))
            else:
                self._hold_pending = True
        return True

    def set_reference(self, name, value, received=None):
        """
        Give the law reference ``name``.

        A free-flying base target 'base_pose', a space mode's 'ee_twist', 'ee_pose',
        'base_attitude': see the law's ``references``. InputError when inactive or when the mode
        takes no such reference.
        """
        if self.law is None or not self.active:
            raise InputError(
                f'{name}: the controller is {self.state}'
                + ('' if self.law is not None else ' (no controllable model yet)')
                + ': reference ignored'
            )
        self.law.set_reference(name, value, received)

    # -- for status messages and action servers --------------------------------------------
    def feedback(self):
        """
        Return the :data:`Feedback` of the last commanded tick.

        None before one, or for a mode without a joint reference.
        """
        ref = self._last_ref
        if ref is None or self._last_q is None:
            return None
        q, qd = self._last_q, self._last_qd
        return Feedback(self._last_t, ref, (q, qd), (ref.position - q, ref.velocity - qd))

    def trajectory_remaining(self, t):
        """Seconds until the end of the followed (or queued) trajectory at control time ``t``."""
        schedule = self._schedule
        return max(0.0, schedule.end_time - t) if schedule is not None and t is not None else 0.0

    def state_age(self, inputs):
        """Age (s, steady clock) of the oldest input a command needs (-1 when one never came)."""
        if inputs.joint_times is None or not len(self._index):
            return -1.0
        times = [float(x) for x in inputs.joint_times[self._index]]
        if inputs.base_time is not None:
            times.append(float(inputs.base_time))
        if (
            self.settings.event_driven
            and inputs.stamp is not None
            and self._stamp_changed is not None
            and inputs.stamp == self._answered
        ):
            times.append(self._stamp_changed)
        if any(math.isnan(x) for x in times):
            return -1.0
        return inputs.now - min(times)

    def snapshot(self, t=None):
        """
        Return the :data:`Snapshot` for a status message.

        State, reason, per command joint the errors (reference - measured, at the last command) and
        the last efforts sent, counters.
        """
        fb = self.feedback()
        idx = self._index
        if fb is not None and len(idx):
            pos, vel = fb.error[0][idx], fb.error[1][idx]
        else:
            pos = vel = np.zeros(len(idx))
        g = self.gate
        counts = dict(
            self.counts,
            commands=g.commands,
            zeros=g.zeros,
            timeouts=g.timeouts,
            rejected=g.rejected,
            recoveries=g.recoveries,
        )
        return Snapshot(
            self.state,
            self.reason,
            self.active,
            self.commanding,
            list(self.joint_names),
            pos,
            vel,
            np.array(self._efforts),
            self.trajectory_remaining(t),
            self.compute_time,
            counts,
            self.details,
            self.actuation,
        )


def _full(values, other, cols, n, zero_means=None):
    """
    Spread the per command joint ``values`` to (n,) per model coordinate.

    Command joint k at ``cols[k]``, ``other`` elsewhere; 0 -> ``zero_means``.
    """
    out = np.full(n, float(other))
    out[cols] = values
    if zero_means is not None:
        out[out == 0] = zero_means
    return out


#: s: two control times closer than this are the same stamp (stamps are integer nanoseconds)
_STAMP_EPS = 5e-10


def _between(window, t):
    """Whether tick ``window[1]`` was the first at/after ``t`` (``window[0]``: before it)."""
    before, at = window
    return at >= t - _STAMP_EPS and (before is None or before < t - _STAMP_EPS)


def _at_rest(position):
    """Return the :data:`~spart_ros.control.trajectory.Reference` of ``position`` (n,) at rest."""
    z = np.zeros_like(position)
    return Reference(position, z, z)


def _warm_up(law, n):
    """
    One computation on a neutral state.

    That the first tick does not pay for loading the fast path's kernels of this call (hundreds of
    milliseconds on a busy machine: the watchdog would stop a robot just handed over by its
    brakes).
    """
    z3, zq = np.zeros(3), np.zeros(n)
    state = SimpleNamespace(
        base=SimpleNamespace(R_b=np.eye(3), p_b=z3, v_b=z3, w_b=z3), q=zq, qd=zq
    )
    try:
        if law.follows == 'end_effector':
            law.command(state, None, 0.0, 0.0, None)
        else:
            law.command(state, Reference(zq, zq, zq), 0.0, 0.0)
    # a neutral state a law cannot take (a singular pose) warms nothing
    except Exception:  # noqa: BLE001
        pass
    law.clear_references()


_logger = logging.getLogger('spart_ros.controller')


def _log(level, key, text):
    getattr(_logger, level)(text)
