"""
The capture of a tumbling target as a unit of the controller (pure Python, no ROS).

:class:`CaptureControl` puts a :class:`~spart_ros.control.capture.Capture` (the approach and
synchronisation, the grasp, the detumble: docs/capture.md) inside the lifecycle
:class:`~spart_ros.control.controller.Controller`, which keeps all of its rules around it: a
capture goal is taken only while the controller commands (active, a model, a commanded state, no
fault), its ticks go through the same supervision (fresh, finite inputs, one answer per stamp),
its efforts through the same clamps, and every exit from commanding sends one zero command:

- per tick, while a capture goal is live (:attr:`CaptureControl.live`), its command replaces the
  mode's law: joint efforts, and the base wrench (at b's origin, in b) turned into wheel torques
  and thruster commands by the base actuators
  (:class:`~spart_ros.control.base_actuation.BaseActuatorControl`, the law's when it has one: the
  wheels' spin terms added by
  :meth:`~spart_ros.control.base_actuation.BaseActuatorControl.required_wrench`);
- a fault or a timeout of the capture (the estimate stale, a joint beyond its limits, a failing
  law, a phase too long) aborts the goal with ONE all-zero command: the controller halts, and at
  the next fresh state resumes by holding the measured pose (as after any halt);
- a halt or a deactivation of the controller (stale inputs, a rejected input, a new model, a plant
  reset, the lifecycle) aborts the goal too (the controller's own zero command is the one);
- a cancel stops the capture without a command: the mode's law holds the measured pose from the
  next tick;
- at the grasp the plant welds the target (it is asked: :attr:`CaptureControl.grasp_wanted`) and
  reports the weld (:meth:`CaptureControl.attached`): from then on the capture's model carries
  the target (:attr:`~spart_ros.control.capture.Capture.model`), and so does the controller's
  once the capture hands back (:meth:`CaptureControl.release`: a cancel or an abort after the
  grasp, or a trajectory or pose goal after it succeeded): its law is rebuilt on that model.

After success (phase ``done``) the detumble law keeps the stack at rest until a new goal comes.
The base: ``capture_base`` 'held' (the wheels hold the attitude during the approach) when the
controller has reaction wheels, else 'free'; the detumble's torque and force bounds are the
wheels' and the thrusters' (80 % of the smallest wheel torque; half the smallest force the
thrusters give along an axis).
"""

from collections import namedtuple

import numpy as np

from .capture import Capture
from .capture_goal import CaptureRefused, INVALID_GOAL
from .capture_phases import ACTIVE_PHASES, DONE, GRASP
from .goals import ABORTED
from ..core.connectivity import leaf_links
from ..core.errors import InputError, SpartError
from ..core.fast import FastDynamics

__all__ = ['CaptureControl', 'CaptureTick', 'CAPTURE_BASES', 'bound', 'tick', 'stopped', 'submit']

#: how the base is treated during the approach ('' = held with wheels, else free)
CAPTURE_BASES = ('', 'held', 'free')

CaptureTick = namedtuple('CaptureTick', 'values base_torque base_force actuators zero why')
CaptureTick.__doc__ = """One tick of the capture in the controller: ``values`` (n_q,) joint efforts
(model coordinates); ``base_torque``, ``base_force`` (3,) at b's origin in b, or None;
``actuators``: the :data:`~spart_ros.control.base_actuation.BaseActuatorCommand`, or None;
``zero``: this tick is the abort's one zero command (``why``: the abort's reason)."""


def _bounds(actuators):
    """Return (max torque [N m], max force [N]) of the detumble for the base's actuators."""
    if actuators is None:
        return 0.0, 0.0
    torque = 0.8 * min((w.max_torque for w in actuators.wheels), default=0.0)
    force = 0.0
    if actuators.thrusters:
        d = np.array([t.direction for t in actuators.thrusters], dtype=float).reshape(-1, 3)
        f = np.array([t.max_force for t in actuators.thrusters], dtype=float)
        along = [
            float((np.maximum(d @ e, 0.0) * f).sum()) for e in np.vstack([np.eye(3), -np.eye(3)])
        ]
        force = 0.5 * min(along)
    return torque, force


class CaptureControl:
    """
    A controller's capture (see the module docstring).

    ``settings``: the controller's :class:`~spart_ros.control.settings.ControllerSettings`
    (``target_file``: the target, a YAML/URDF path, its content or a
    :class:`~spart_ros.core.target.Target`; ``capture_base``; ``ee_link``, ``ee_offset``: the end
    effector); ``controlled``: the :class:`~spart_ros.control.controlled_robot.ControlledRobot`
    (its robot, dynamics, and the law's base actuators); ``orbit``: the orbit the world frame is
    the LVLH frame of (a CircularOrbit; None: the world is inertial); ``options``: more keyword
    arguments of :class:`~spart_ros.control.capture.Capture`.
    """

    def __init__(self, settings, controlled, orbit=None, **options):
        if not settings.floating:
            raise InputError(
                'target_file: the capture of a free-flying target needs a floating base (base: '
                'floating)'
            )
        base = settings.capture_base
        if base not in CAPTURE_BASES:
            raise InputError(f'capture_base: expected one of {list(CAPTURE_BASES)}, got {base!r}')
        self.settings = settings
        self.robot = robot = controlled.robot
        # the law's base actuators (free_flying, or a space mode with wheels): they get the
        # wheels' speeds; a law without them leaves the base free
        self.actuation = getattr(controlled.law, 'actuation', None)
        wheels = self.actuation is not None and self.actuation.n_w > 0
        if base == 'held' and not wheels:
            raise InputError(
                "capture_base 'held': the base attitude is held by reaction wheels, and the "
                "controller's law drives none (actuators_file, mode free_flying or a space mode): "
                "use 'free' or give the wheels"
            )
        self.base = base or ('held' if wheels else 'free')
        max_torque, max_force = _bounds(
            self.actuation.actuators if self.actuation is not None else None
        )
        self.link = settings.ee_link or leaf_links(robot)[0]
        self.offset = list(settings.ee_offset)
        dynamics = controlled.dynamics if isinstance(controlled.dynamics, FastDynamics) else None
        detumble = {'max_torque': max_torque, 'max_force': max_force}
        detumble.update(options.pop('detumble', None) or {})
        self._options = dict(
            base=self.base,
            auto_attach=False,
            detumble=detumble,
            dynamics=dynamics,
            **options,
        )
        self.orbit = orbit
        self.capture = self._capture(settings.target_file, orbit)
        self.released = True  # nothing to hand back (no capture has commanded yet)
        self.grasp_asked = None  # the control time the plant was asked to weld

    def _capture(self, target, orbit):
        return Capture(
            self.robot,
            target,
            self.link,
            self.offset,
            orbit=orbit,
            frame='lvlh' if orbit is not None else 'world',
            **self._options,
        )

    # -- what the controller asks --------------------------------------------------------------
    @property
    def phase(self):
        return self.capture.phase

    @property
    def goal(self):
        return self.capture.goal

    @property
    def live(self):
        """Return True while a capture goal commands (approach .. detumble) or a zero is owed."""
        c = self.capture
        return c.phase in ACTIVE_PHASES or c._zero_pending

    @property
    def commanding(self):
        """
        Return True while the capture's command replaces the law's.

        Live, or done (the stack held at rest), or ended and not handed back yet (the tick after
        a cancel: the law then holds the pose measured at that tick).
        """
        return self.live or not self.released

    @property
    def grasp_wanted(self):
        """Return True when the plant is to weld the target now (grasp phase, not attached)."""
        return self.capture.phase == GRASP and self.capture.attachment is None

    def set_orbit(self, orbit):
        """Take the orbit the world frame is the LVLH frame of (only while no capture is live)."""
        if orbit is self.orbit:
            return
        if self.commanding:
            raise InputError('the orbit cannot change during a capture')
        self.orbit = orbit
        self.capture = self._capture(self.capture.target, orbit)

    def set_estimate(self, estimate, t):
        """
        Take a new estimate of the target (a TargetState at time ``t`` [s], the world frame).

        With an orbit, the world frame is LVLH (R l -> LVLH, r and v relative to it).
        """
        self.capture.set_estimate(estimate, t)

    def submit(self, goal, state, t):
        """
        Accept the :class:`~spart_ros.control.capture_goal.CaptureGoal` ``goal`` at ``t``.

        ``state``: the last commanded state.  Return the goal (active); CaptureRefused naming why
        it is not feasible.
        """
        if self.capture.attachment is not None and self.capture.phase == DONE:
            raise CaptureRefused(
                f'the robot holds target {self.capture.target.name!r}: no other capture',
                INVALID_GOAL,
            )
        goal = self.capture.submit(goal, state, t)
        self.released = False
        self.grasp_asked = None
        return goal

    def cancel(self, goal, t=None):
        """
        Cancel ``goal`` at control time ``t``: no command from the next tick (the law holds).

        Return True if it was the goal followed and not done.
        """
        return self.capture.cancel(goal, t)

    def attached(self, t, T_link_target=None):
        """Take the plant's weld made at time ``t`` [s] (``T_link_target``: what it holds)."""
        self.capture.attached(t, T_link_target)

    def stopped(self, why, t=None):
        """
        Abort the capture: the controller stopped commanding (a halt, a deactivation...).

        ``why``: the reason (the goal's message), ``t``: the control time [s].  Its zero command
        is not sent again (the controller's was the one).  Return True if a capture goal was
        live.
        """
        c = self.capture
        aborted = c.abort(f'the controller stopped: {why}', t)
        c._zero_pending = False
        return aborted

    def release(self):
        """
        Hand the control back to the law (after a cancel, an abort, or a new joint goal).

        Return the model the controller's law is to be built on: the capture's (the target on it
        after a grasp), or None when it is the controller's own already.
        """
        was = self.released
        self.released = True
        if was:
            return None
        return self.capture.model if self.capture.model is not self.robot else None

    # -- one tick ------------------------------------------------------------------------------
    def tick(self, state, t):
        """
        Return the :data:`CaptureTick` of this tick, or None when the capture does not command.

        ``state``: the measured state (model coordinates); ``t``: the control time [s].
        """
        out = self.capture.update(state, t)
        if out.zero:
            goal = self.capture.goal
            why = goal.message if goal is not None else 'capture aborted'
            return CaptureTick(None, None, None, None, True, why)
        if out.values is None:
            return None
        act = None
        a = self.actuation
        if a is not None and out.base_torque is not None:
            speeds = a.measured_speeds()
            force = out.base_force if out.base_force is not None else np.zeros(3)
            required = a.required_wrench(
                out.base_torque,
                force,
                np.asarray(state.base.w_b, dtype=float),
                np.zeros(3),
                speeds,
            )
            thrust = a.n_t > 0 and bool(np.any(force))
            act = a.command(t, required, speeds, thrust=thrust)
        return CaptureTick(out.values, out.base_torque, out.base_force, act, False, '')


# -- the controller's side (its hooks call these: spart_ros.control.controller) ------------------
def bound(controller, controlled, keep=False):
    """
    Return the controller's capture unit for the ControlledRobot ``controlled`` (None: none).

    A new one when the settings have a target (its orbit kept), or the one it has (``keep``: a
    hand-back onto the model with the target, which keeps the capture; its base actuators are the
    new law's).
    """
    capture = controller.capture
    if keep:
        if capture is not None and controlled is not None:
            capture.actuation = getattr(controlled.law, 'actuation', None)
        return capture
    orbit = capture.orbit if capture is not None else None
    if controlled is None or not controller.settings.target_file:
        return None
    return CaptureControl(controller.settings, controlled, orbit)


def tick(controller, state, t, t0):
    """
    Return the controller's Command of the capture's tick at ``t``, or None (handed back).

    ``state``: the measured state; ``t0``: when the tick started (perf_counter) for its compute
    time.  A zero tick (the capture's abort) is a stop: one zero command, the controller halted.
    """
    import time

    from .tick import Command

    out = controller.capture.tick(state, t)
    if out is None:  # canceled (or ended): the law holds the pose measured now
        _release(controller)
        return None
    supervision = controller.supervision
    if out.zero:  # the capture's abort: one zero command, a halt; resumed by a hold
        supervision.answered()
        stop = supervision.stop(f'capture aborted: {out.why}', timeout=False)
        _release(controller)
        return stop
    values = controller.controlled.command_values(out.values)
    supervision.commanded(values)
    controller.reference.remember(state, None, t)
    controller.details = None  # (the capture's feedback goes out by its action)
    controller.actuation = None if out.actuators is None else out.actuators.status
    controller.compute_time = time.perf_counter() - t0
    return Command(values, False, out.base_torque, out.base_force, t, out.actuators)


def _release(controller):
    """Hand the control back to the law (on the model carrying the target after a grasp)."""
    from .controlled_robot import ControlledRobot

    capture = controller.capture
    model = capture.release()
    if model is not None:  # the law on the model with the target (the same joints)
        c = controller
        c._bind(ControlledRobot(c.settings, model, None, c._hardware, c._notify), True)
    controller.reference.hold_next()
    if controller.controlled is not None:
        controller.controlled.law.clear_references()


def stopped(controller, why, t=None):
    """
    Abort a live capture: the controller stopped commanding (``why``; None: a new goal comes).

    ``controller``: the Controller; ``t``: the control time [s] (None: unknown).

    Its zero command is not sent again (the controller's was the one); a capture that ended (done,
    or canceled and not yet handed back) is handed back.
    """
    capture = controller.capture
    if capture.live and why is not None:
        capture.stopped(why, t)
        _release(controller)
    elif not capture.released and not capture.live:
        _release(controller)


def submit(controller, goal, t):
    """
    Return ``goal`` accepted by ``controller`` at control time ``t`` [s].

    :meth:`~spart_ros.control.controller.Controller.submit_capture`: InputError naming why not.
    """
    from types import SimpleNamespace

    c = controller
    try:
        if c.capture is None:
            raise CaptureRefused('no target: give the controller one (target_file) to capture it')
        if not c.active or c.fault is not None or c.gate.halted:
            raise CaptureRefused(
                f'the controller is not commanding (state {c.state}'
                + (f': {c.reason}' if c.reason else '')
                + '): capture refused'
            )
        r = c.reference
        if r.last_q is None or r.last_base is None:
            raise CaptureRefused('the controller has commanded no state yet: capture refused')
        state = SimpleNamespace(base=r.last_base, q=r.last_q.copy(), qd=r.last_qd.copy())
        goal = c.capture.submit(goal, state, t)
    except SpartError as err:
        if hasattr(goal, '_finish') and not goal.done:
            goal._finish(ABORTED, str(err), getattr(err, 'code', INVALID_GOAL))
        c._count_rejected()
        raise
    c.goals.abort(f'replaced by capture goal {goal.id}')
    c.counts['trajectories'] += 1
    return goal
