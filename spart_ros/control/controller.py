"""
The controller: its lifecycle, its states, and one tick as data flowing through its units.

Pure Python, no ROS.  Shaped like a ros2_control controller: :meth:`Controller.configure`
(settings, robot model), :meth:`~Controller.activate`, :meth:`~Controller.deactivate`,
:meth:`~Controller.cleanup`, :meth:`~Controller.shutdown`, and :meth:`~Controller.update` once
per control tick, which returns the :data:`Command` to send (or None: send nothing).  A ROS node
(``spart_controller``) or an offline simulation only carry inputs in and commands out.

The work is done by units with one job each (docs/controller.md, "How the controller is built",
draws them from this code): :class:`~.supervision.Supervisor` (may this tick command? the gate,
the answer-once rule, stale and invalid inputs, stalls), :class:`~.continuity.Continuity` (resets,
jumps, resumes, the tracking fault: when the reference is dropped and what is held),
:class:`~.joint_reference.JointReference` (the reference schedule and the last commanded tick),
:class:`~.goal_manager.GoalManager` (trajectory, pose and action goals) and
:class:`~.controlled_robot.ControlledRobot` (the mode's law built for the model, the command
joints, their limits).  This class owns the lifecycle and the states and wires them.

States (:attr:`Controller.state`; every change of state is a row of
:data:`spart_ros.control.states.TRANSITIONS`)::

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
  command meanwhile); then commanding resumes on the reference if every joint is within
  ``resume_tolerance`` of it, else by holding where the robot is (the motors were limp: jumping
  back would be a jolt).
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

import logging
import time
import traceback

from . import capture_control
from .continuity import Continuity
from .controlled_robot import ControlledRobot
from .goal_manager import goal_refusal, GoalManager
from .goals import ABORTED, INVALID_GOAL
from .joint_reference import JointReference
from .reports import ControllerReports
from .settings import RUN_TIME
from .states import (  # the states and their transition table: spart_ros.control.states
    COMMANDING,
    FAULT,
    FINALIZED,
    HALTED,
    HOLDING,
    INACTIVE,
    STATES,
    TRACKING,
    UNCONFIGURED,
)
from .supervision import COMPUTE, Supervisor
from .tick import Command, ControlInputs, Feedback, Snapshot
from ..core.errors import InputError, SpartError

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


class Controller(ControllerReports):
    """
    The state machine (see the module docstring).

    ``notify(level, key, text)``: where events go ('info', 'warning', 'error'; ``key`` for
    throttling); default: the ``spart_ros.controller`` logger.  Its units: ``supervision``,
    ``continuity``, ``reference``, ``goals``, and ``controlled`` (the ControlledRobot, None
    without a usable model).
    """

    def __init__(self, notify=None):
        self._notify = notify = notify or _log
        self.settings = None
        self.controlled = None
        self.model_error = None
        self._configured = self._finalized = False
        self.counts = {'trajectories': 0, 'faults': 0, 'resets': 0, 'jumps': 0}
        self.supervision = Supervisor(notify, UNCONFIGURED)
        self.reference = JointReference()
        self.goals = GoalManager(self.reference, notify, self._count_rejected)
        self.continuity = Continuity(self.reference, self.goals, self.counts, notify)
        self.details = None
        self.actuation = None  # the base actuators' last status (a law that drives them)
        self.compute_time = 0.0
        #: the capture of a tumbling target (:mod:`.capture_control`: target_file), or None
        self.capture = None
        self._hardware = ()

    # -- what it is doing -----------------------------------------------------------------
    @property
    def gate(self):
        """Return the :class:`~spart_ros.control.safety.CommandGate` (enabled, halted...)."""
        return self.supervision.gate

    @property
    def active(self):
        return self.supervision.gate.enabled

    @property
    def fault(self):
        """Return the reason of the fault, or None when there is none."""
        return self.continuity.fault

    @property
    def state(self):
        """One of :data:`STATES` (module docstring)."""
        if self._finalized:
            return FINALIZED
        if not self._configured:
            return UNCONFIGURED
        gate = self.supervision.gate
        if not gate.enabled:
            return INACTIVE
        if self.continuity.fault is not None:
            return FAULT
        if gate.halted:
            return HALTED
        return TRACKING if self._tracking() else HOLDING

    @property
    def commanding(self):
        return self.state in COMMANDING and not self.gate.halted

    @property
    def reason(self):
        """Why the controller does what it does ('' when commanding normally)."""
        state, gate = self.state, self.gate
        if state == FAULT:
            why = self.fault + (f' (and {gate.reason})' if gate.halted and gate.reason else '')
        elif state == HALTED:
            why = self.model_error or gate.reason
        elif state == INACTIVE:
            return self.model_error or gate.reason
        else:
            why = ''
        pending = self.goals.pending_text()
        return f'{why}; {pending}' if why and pending else why or pending

    def _tracking(self):
        if self.capture is not None and self.capture.commanding:
            return True
        law = self.law
        if law is not None and law.follows == 'end_effector':
            return law.has_reference
        return self.goals.tracking

    # the model, as the controller uses it (None / empty without one)
    robot = property(lambda self: self.controlled.robot if self.controlled else None)
    dynamics = property(lambda self: self.controlled.dynamics if self.controlled else None)
    law = property(lambda self: self.controlled.law if self.controlled else None)
    joint_names = property(lambda self: self.controlled.joint_names if self.controlled else [])
    q_names = property(lambda self: self.controlled.q_names if self.controlled else [])
    _goal = property(lambda self: self.goals.goal)  # the goal followed or queued

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
        self._set_settings(settings.check())
        self._bind(None)
        self.model_error = None
        if robot is not None:
            self._bind(ControlledRobot(self.settings, robot, dynamics, hardware, self._notify))
            self._hardware = hardware
        self._configured = True
        self.gate.reason = '' if self.controlled is not None else 'no robot model yet'

    def cleanup(self):
        """Inactive -> unconfigured: settings and law forgotten."""
        self._require((INACTIVE,), 'cleanup')
        self.goals.abort('the controller was cleaned up')
        self._configured = False
        self._bind(None)
        self.settings = self.model_error = None
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
            if self.controlled is not None
            else 'waiting for a robot description'
        )
        self._reset_run()
        if self.controlled is not None:
            self.controlled.law.clear_references()

    def deactivate(self, reason=''):
        """
        Go from ``active`` to inactive (``reason``: why, for the status).

        Returns ONE all-zero :data:`Command` if a command may still be applied (else None); goals
        are aborted, nothing is sent until activated again.
        """
        if not self.active:
            return None
        self._capture_stopped(
            'the controller was deactivated' + (f' ({reason})' if reason else '')
        )
        self.goals.abort('the controller was deactivated' + (f' ({reason})' if reason else ''))
        self.gate.disable(reason)
        self.continuity.fault = None
        self.reference.schedule = None
        return self.supervision.zero_if_pending()

    def shutdown(self):
        """
        Go from any state to finalized.

        Return ONE all-zero :data:`Command` if a command may still be applied, else None.
        """
        zero = self.deactivate('shutting down') if self.active else None
        self._finalized = True
        return zero

    def set_model(self, robot, dynamics=None, hardware=()):
        """
        Take a new robot model (a new robot_description).

        ``robot``: the core Robot; ``dynamics``: its fast path in independent coordinates (built
        when None); ``hardware``: its ``<ros2_control>`` tags. Active with a law: one zero command
        (if one may be applied), inactive until activated again (a model is structural); active
        waiting for its first model: the law is built and the controller goes on (holding at the
        first state). A model the settings cannot control leaves it inactive, saying why
        (:attr:`reason`, and :meth:`activate` refuses) until a usable model comes. Returns the zero
        :data:`Command` or None.
        """
        zero = None
        if self.active and self.controlled is not None:
            zero = self.deactivate('the robot model changed: activate again to command')
        elif self.controlled is not None:
            self.goals.abort('the robot model changed')
        self._bind(None)
        self.model_error = None
        if not self._configured:  # configure() takes the model
            return zero
        try:
            self._bind(ControlledRobot(self.settings, robot, dynamics, hardware, self._notify))
            self._hardware = hardware
        except Exception as err:  # noqa: BLE001 - any model: never fatal, waits for another one
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
        self.goals.model_changed(self.active)  # a goal kept for the model: does it fit?
        return zero

    def _require(self, states, what):
        if self.state not in states:
            raise InputError(
                f'{what}: not possible in state {self.state} (needs {" or ".join(states)})'
            )

    def _bind(self, controlled, keep_capture=False):
        """Give every unit the model (a ControlledRobot, or None); a capture unit with a target."""
        self.controlled = controlled
        self.supervision.bind(controlled)
        if controlled is not None:
            controlled.law.preview = self.reference.samples  # a look-ahead (the mpc modes)
        self.goals.robot = controlled
        self.continuity.bind(controlled)
        self.capture = capture_control.bound(self, controlled, keep_capture)

    def _set_settings(self, settings):
        self.settings = settings
        for unit in (self.supervision, self.goals, self.continuity):
            unit.settings = settings
        self.gate.state_timeout = float(settings.state_timeout)

    def _reset_run(self):
        """Per-activation memory: the reference, the stamps answered, the last commanded state."""
        self.reference.reset()
        self.supervision.reset_run()
        self.continuity.reset()
        self.goals.reset()
        self.details = None
        self.actuation = None  # the base actuators' last status (a law that drives them)
        self.compute_time = 0.0

    def _count_rejected(self):
        self.gate.rejected += 1

    def _may_take(self, kind):
        """Raise InputError if the controller takes no goal of ``kind`` now (goal_refusal)."""
        mode = self.settings.mode if self.settings is not None and self.active else None
        why = goal_refusal(kind, self.state, mode, self.fault)
        if why:
            raise InputError(why)
        if self.capture is not None and self.capture.live:
            raise InputError(
                f'a capture is under way (phase {self.capture.phase}): {kind} refused (cancel the '
                'capture first)'
            )
        self._capture_stopped(None)  # a capture done (the stack held): handed back first

    def _capture_stopped(self, why, t=None):
        """Abort a capture going on (the controller stopped commanding: ``why``), hand back."""
        if self.capture is not None:
            capture_control.stopped(self, why, t)

    def submit_capture(self, goal, t):
        """
        Accept the capture goal ``goal`` (a CaptureGoal) at control time ``t`` [s].

        The controller must be commanding (active, a model, a commanded state, no fault) with a
        target (``target_file``); a joint trajectory or pose goal it follows is preempted.  Return
        the goal; InputError (a CaptureRefused with the result code for an infeasible capture)
        naming why it is refused (the goal aborted).  See :mod:`.capture_control`.
        """
        return capture_control.submit(self, goal, t)

    def apply_settings(self, **changes):
        """
        Change run-time settings (:data:`~spart_ros.control.settings.RUN_TIME`) between two ticks.

        ``changes``: {setting: value}.  InputError naming the first bad one (nothing changed), or
        naming a structural one (those take a reconfigure: deactivate, cleanup, configure,
        activate).
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
        if self.controlled is not None:
            self.controlled.apply_settings(new)
        self._set_settings(new)

    # -- ticks ------------------------------------------------------------------------------
    def update(self, inputs, t):
        """
        Run one control tick at control time ``t`` (s) on ``inputs`` (:data:`ControlInputs`).

        Return the :data:`Command` to send, or None.

        Never raises: anything unexpected halts like a failing law.
        """
        try:
            return self._update(inputs, t)
        except Exception as err:  # noqa: BLE001 - a tick must never kill its caller: halt instead
            out = self.supervision.failed(err)
            self._capture_stopped(f'the tick failed: {err}', t)
            return out

    def _update(self, inputs, t):
        """Run the tick: supervision -> continuity -> reference and goals -> law -> command."""
        controlled = self.controlled
        supervision = self.supervision
        if controlled is None or not self.active:
            return None
        law, reference, continuity = controlled.law, self.reference, self.continuity
        stopped = continuity.fault is not None and not law.holds_position
        verdict = supervision.admit(inputs, t, reference.last_t, stopped)
        if verdict is not COMPUTE:
            if verdict is not None:  # a stop: a capture going on ends with it
                self._capture_stopped(self.gate.reason, t)
            return verdict  # a stop (one zero command) or nothing
        t0 = _perf_counter()
        t = float(t)
        state = inputs.state
        continuity.before_law(state, t, supervision.recovering)
        if self.capture is not None and self.capture.commanding:
            out = capture_control.tick(self, state, t, t0)
            if out is not None:
                return out
            continuity.before_law(state, t, False)  # handed back: the pose measured now is held
        ref = None
        if law.follows != 'end_effector':
            ref = reference.at(t)
            if continuity.new_fault(state, ref, t):
                if not law.holds_position:
                    supervision.answered()
                    return supervision.stop(f'fault: {self.fault}', timeout=False)
                ref = reference.sample(t)
            elif self.goals.goal is not None:
                ref = self.goals.follow(state, ref, t)
        last_t = reference.last_t
        dt = 0.0 if last_t is None else min(max(t - last_t, 0.0), self.settings.state_timeout)
        if law.follows == 'end_effector':
            out = law.command(state, ref, t, dt, inputs.now)
        else:
            out = law.command(state, ref, t, dt)
        values = controlled.command_values(out.values, t)
        supervision.commanded(values)
        reference.remember(state, ref, t)
        self.details = out.details
        actuators = out.actuators
        self.actuation = None if actuators is None else actuators.status
        self.compute_time = _perf_counter() - t0
        return Command(values, False, out.base_torque, out.base_force, t, actuators)

    def undelivered(self):
        """
        Say that the command just returned reached no subscriber (none matched yet).

        Its state is not answered: the copy a lockstep plant republishes while it waits is.
        """
        self.supervision.undelivered()

    def check(self, inputs):
        """
        Return the watchdog, between ticks (e.g. a steady timer).

        The zero :data:`Command` when the inputs went stale while commanding (once), else None.
        Never computes a command.
        """
        if not self.active or self.controlled is None:
            return None
        out = self.supervision.check(inputs)
        if out is not None:
            self._capture_stopped(self.gate.reason)
        return out

    def reject(self, what, error):
        """
        Halt until a tick computes again: an input was rejected (NaN, wrong lengths...).

        ``what``: the input, ``error``: why it was rejected.  Return the zero :data:`Command` if
        commanding, else None.
        """
        if not self.active or self.controlled is None:
            return None
        out = self.supervision.reject(what, error)
        self._capture_stopped(f'{what} rejected: {error}')
        return out

    def clear_fault(self):
        """
        Leave the fault: hold the pose measured at the next tick.

        Return True, or False when there is none.
        """
        return self.continuity.clear_fault()

    def plant_reset(self, why='the plant was reset', t=None):
        """
        Drop the reference: the plant announced a reset.

        A reset, or anything that moved the robot without the controller: the reference is dropped
        (goals aborted) and the pose measured at the first state after the reset is held.

        ``why``: the reason, for the log and the goals' results; ``t``: the control time (stamp)
        of the first state after the reset, when the plant says
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
        if self.active:
            self._capture_stopped(why, t)
            self.continuity.plant_reset(why, t)

    # -- references -------------------------------------------------------------------------
    def submit(self, goal, t):
        """
        Accept the :class:`~spart_ros.control.goals.TrajectoryGoal` ``goal`` at control time ``t``.

        Started at once or at its ``start``, from the reference followed then (no jump; an earlier
        goal is preempted from then on), or kept pending until the model and a measured state are
        there. Return the goal; InputError naming why it is refused (status 'aborted').
        """
        try:
            self._may_take('trajectory')
            self.goals.accept(goal, t)
        except SpartError as err:
            goal._finish(ABORTED, str(err), getattr(err, 'code', INVALID_GOAL))
            self._count_rejected()
            raise
        self.counts['trajectories'] += 1
        return goal

    def submit_pose(self, goal, t):
        """
        Accept the end-effector pose goal ``goal`` at control time ``t``.

        ``goal``: a :class:`~spart_ros.control.ee_goals.PoseGoal`. An end-effector mode follows its
        path (from its next tick at or after the goal's start); a fixed-base joint mode turns the
        path into a joint trajectory by inverse kinematics at samples of it
        (``path_sample_period``), starting from the reference followed then (see
        :mod:`spart_ros.control.ee_goals`). Return the goal; InputError naming why it is refused
        (status 'aborted'):
        a mode without pose goals, no model or no commanded state yet, a fault, a path the end
        effector cannot follow.
        """
        try:
            self._may_take('pose')
            self.goals.accept_pose(goal, t)
        except SpartError as err:
            goal._finish(ABORTED, str(err))
            self._count_rejected()
            raise
        self.counts['trajectories'] += 1
        return goal

    def cancel(self, goal, t=None):
        """
        Cancel ``goal`` at control time ``t`` (default: the last tick's).

        If followed (or queued), the current reference position is held from then on
        (JointTrajectoryController's cancel). Return True, or False when it was already done.
        """
        return self.goals.cancel(goal, self.reference.last_t if t is None else t)

    def set_reference(self, name, value, received=None):
        """
        Give the law reference ``name``.

        A free-flying base target 'base_pose', a space mode's 'ee_twist', 'ee_pose',
        'base_attitude': see the law's ``references`` (``value``: the reference; ``received``: the
        steady clock time of its receipt, for references that expire). InputError when inactive or
        when the mode
        takes no such reference.
        """
        if self.controlled is None or not self.active:
            raise InputError(
                f'{name}: the controller is {self.state}'
                + ('' if self.controlled is not None else ' (no controllable model yet)')
                + ': reference ignored'
            )
        self.controlled.law.set_reference(name, value, received)


_logger = logging.getLogger('spart_ros.controller')
_perf_counter = time.perf_counter


def _log(level, key, text):
    getattr(_logger, level)(text)
