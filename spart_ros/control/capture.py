"""
The capture of a tumbling target, end to end, as one plain object a controller drives per tick.

:class:`Capture` composes the units of a capture for one robot, one end effector and one target:

- the target's dynamics and the fixture's prediction from each estimate
  (:mod:`spart_ros.core.free_body`: :meth:`Capture.set_estimate`);
- the feasibility check and the grasp time before any attempt (:mod:`.capture_planning`);
- the approach and synchronisation reference (:mod:`.capture_reference`) and law
  (:mod:`.capture_motion`); the grasp criteria (:mod:`.grasp`);
- the model update at the grasp (:func:`~spart_ros.control.grasp.capture_model`: from then on
  ``Capture.model`` carries the target) and the detumble law on it (:mod:`.detumble`);
- the phases (:mod:`.capture_phases`) and the goal's life (:mod:`.capture_goal`), with the
  trajectory goals' semantics: :meth:`Capture.submit` accepts a feasible goal (preempting one
  before its grasp) or refuses it with the reason; :meth:`Capture.cancel` stops it (no command
  from then on: the controller holds); a fault or a timeout aborts it with one all-zero command
  (:meth:`Capture.abort` for a fault the controller sees, e.g. its own halt).

Per tick, :meth:`Capture.update` takes the measured state (ROS base convention: ``base`` with
R_b, p_b, v_b, w_b; ``q``, ``qd``) and the control time, and returns a :data:`CaptureOutput`:
the joint efforts and the base wrench (at b's origin, in b: the wheels' torque, the thrusters'
force; the base actuators allocate them), or None when the capture does not command.

Faults (each aborts with one zero command): the estimate older than ``estimate_timeout`` before
the attachment, a joint beyond its position limits by more than ``limit_tolerance``, a law
raising an error.  With ``auto_attach`` (offline, a plant without a weld to report) the
attachment is taken as made when the grasp criteria have held; otherwise the plant reports it
(:meth:`Capture.attached`).  Pure numpy; no ROS.
"""

from collections import namedtuple

import numpy as np

from . import capture_phases as ph
from .capture_goal import CaptureFeedback, CaptureGoal, CaptureRefused, FAULT, TIMED_OUT
from .capture_motion import CaptureMotion
from .capture_planning import CapturePlanner
from .capture_reference import ApproachPath
from .detumble import Detumble
from .goals import ABORTED, CANCELED, PREEMPTED, SUCCEEDED
from .grasp import capture_model, grasp_error, GraspCheck
from .law import BaseFrames
from ..core import checks as chk
from ..core.errors import InputError, SpartError
from ..core.fast import FastDynamics
from ..core.free_body import FixturePrediction, FreeBody
from ..core.kinematics import kinematics
from ..core.target import load_target, Target

__all__ = ['Capture', 'CaptureOutput']

CaptureOutput = namedtuple('CaptureOutput', 'values base_torque base_force zero phase feedback')
CaptureOutput.__doc__ = """One tick of a capture: ``values`` (n_q,) joint efforts [N m or N], or
None (no command: idle, canceled, or after the zero command of an abort); ``base_torque``,
``base_force`` (3,) at b's origin, in b, or None; ``zero``: this is the one all-zero command of an
abort; ``phase``; ``feedback``: the goal's :data:`~.capture_goal.CaptureFeedback` (None
without a goal)."""


class Capture:
    """
    One robot capturing one target (see the module docstring).

    ``robot``: the controller's floating-base Robot; ``target``: a
    :class:`~spart_ros.core.target.Target` (or what :func:`~spart_ros.core.target.load_target`
    takes); ``link``, ``offset``: the end effector (the point in the link's URDF frame; its axes
    the link's); ``orbit``: the target's orbit (a CircularOrbit, or None); ``frame``: the frame of
    the estimates and of the controller's world, 'world' or 'lvlh'; ``grasp_offset`` (4, 4): the
    end-effector frame in the fixture frame at the grasp (None: identity); ``base``: 'held' or
    'free' (:class:`~.capture_motion.CaptureMotion`); ``estimate_timeout`` [s];
    ``limit_tolerance`` [rad or m]; ``rest_dwell`` [s]: how long the rates must stay at rest;
    ``auto_attach``; ``min_approach_time`` [s]; ``motion``, ``detumble``, ``planner``: keyword
    options of the approach law, the detumble law and the planner; ``dynamics``: the robot's
    FastDynamics to share.
    """

    def __init__(
        self,
        robot,
        target,
        link,
        offset=None,
        *,
        orbit=None,
        frame='world',
        grasp_offset=None,
        base='held',
        estimate_timeout=0.5,
        limit_tolerance=0.05,
        rest_dwell=1.0,
        auto_attach=True,
        min_approach_time=2.0,
        motion=None,
        detumble=None,
        planner=None,
        dynamics=None,
    ):
        self.robot = self.model = robot
        self.target = target if isinstance(target, Target) else load_target(target)
        self.body = FreeBody(self.target, orbit)
        if frame not in ('world', 'lvlh'):
            raise InputError(f"frame: expected 'world' or 'lvlh', got {frame!r}")
        self.frame = frame
        self.grasp_offset = (
            np.eye(4)
            if grasp_offset is None
            else np.array(chk.array('grasp_offset', grasp_offset, (4, 4)), dtype=float)
        )
        self.dynamics = FastDynamics(robot) if dynamics is None else dynamics
        self.link, self.offset = link, offset
        self.motion = CaptureMotion(
            robot, link, offset, 'link', base=base, dynamics=self.dynamics, **(motion or {})
        )
        self.planner = CapturePlanner(
            robot, link, offset, dynamics=self.dynamics, **(planner or {})
        )
        self.detumble_options = dict(detumble or {})
        self.estimate_timeout = chk.nonnegative('estimate_timeout', estimate_timeout)
        self.limit_tolerance = chk.nonnegative('limit_tolerance', limit_tolerance)
        self.rest_dwell = chk.nonnegative('rest_dwell', rest_dwell)
        self.min_approach_time = chk.nonnegative('min_approach_time', min_approach_time)
        self.auto_attach = bool(auto_attach)
        self.frames = BaseFrames(robot)
        self.phases = ph.CapturePhases()
        self.goal = self.prediction = self.path = self.law = None
        self.estimate_time = None
        self.attachment = None  # (t, T_link_target) once attached
        self._zero_pending = False
        self._state = None
        self._rest_since = None

    # -- inputs ---------------------------------------------------------------------------------
    @property
    def phase(self):
        return self.phases.phase

    def set_estimate(self, estimate, t):
        """
        Take a new estimate of the target; the fixture's prediction from it replaces the last.

        ``estimate``: a :data:`~spart_ros.core.target.TargetState` at time ``t`` [s], in
        ``frame``.
        """
        self.prediction = FixturePrediction(self.body, estimate, t, self.frame)
        self.estimate_time = float(t)
        if self.path is not None:
            self.path.set_prediction(self.prediction)

    def _check_goal(self, goal, t):
        if not isinstance(goal, CaptureGoal):
            raise InputError(f'goal: expected a CaptureGoal, got {chk.given(goal)}')
        t_name, f_name = self.target.name, self.target.fixture_name
        if goal.target and goal.target != t_name:
            raise CaptureRefused(f'unknown target {goal.target!r}: this capture is of {t_name!r}')
        if goal.fixture and goal.fixture != f_name:
            raise CaptureRefused(
                f'unknown fixture {goal.fixture!r}: target {t_name!r} has {f_name!r}'
            )
        if self.attachment is not None:
            raise CaptureRefused(
                f'the robot holds target {t_name!r} (attached at t = {self.attachment[0]:.3f} s): '
                'no other capture'
            )
        if self.phase == ph.GRASP:
            raise CaptureRefused(
                f'the grasp of target {t_name!r} is under way: no other capture until it ends'
            )
        if self.prediction is None:
            raise CaptureRefused(f'no estimate of target {t_name!r} yet: send its odometry first')
        if t - self.estimate_time > self.estimate_timeout:
            raise CaptureRefused(
                f'the estimate of target {t_name!r} is {t - self.estimate_time:.3f} s old '
                f'(estimate_timeout {self.estimate_timeout:g} s)'
            )

    def submit(self, goal, state, t):
        """
        Accept the CaptureGoal ``goal`` at control time ``t`` with the measured ``state``.

        It replaces (preempts) a goal before its grasp. Return the goal, active. CaptureRefused (a
        GoalError with the result code) naming why when it is not feasible: the goal is then
        aborted with that code and the capture going on, if any, goes on.
        """
        t = float(t)
        try:
            self._check_goal(goal, t)
            plan = self.planner.plan(
                state,
                self.prediction,
                t,
                self.grasp_offset,
                goal.approach_time,
                self.min_approach_time,
                goal.approach_timeout,
                goal.standoff,
            )
        except CaptureRefused as err:
            if isinstance(goal, CaptureGoal):
                goal._finish(ABORTED, str(err), err.code)
            raise
        previous = self.goal
        if previous is not None and not previous.done:
            previous._finish(PREEMPTED, f'replaced by capture goal {goal.id} at t = {t:.3f} s')
            self.phases.fire('preempt')
        else:
            if self.phase in (ph.DONE, ph.ABORTED):
                self.phases.fire('reset')
            self.phases.fire('accept')
        R0, r0 = self.frames.pose(state.base)
        R_e, p_e = self.motion.end_effector.pose(R0, r0, np.asarray(state.q, dtype=float))
        start = np.eye(4)
        start[:3, :3], start[:3, 3] = R_e, p_e
        self.path = ApproachPath(
            self.prediction, start, t, plan.t_grasp, self.grasp_offset, goal.standoff
        )
        self.motion.reset()
        self.grasp_check = GraspCheck(goal.tolerances)
        goal.plan, goal.phase, goal.started = plan, self.phase, {self.phase: t}
        goal._start()
        self.goal = goal  # a zero command still owed (an abort just before) goes out first
        return goal

    def cancel(self, goal, t=None):
        """
        Cancel ``goal`` at control time ``t``: no command from then on (the controller holds).

        Return True, or False when it was not the goal followed or was done already.
        """
        if goal is not self.goal or goal.done:
            return False
        goal._finish(CANCELED, 'canceled')
        self._end('cancel', t)
        return True

    def abort(self, why, t=None, code=FAULT):
        """
        Abort the capture going on (a fault: ``why``): one all-zero command at the next update.

        ``t``: the control time [s]; ``code``: the goal's result code. Return True if a capture
        was going on.
        """
        if self.goal is None or self.goal.done:
            return False
        self.goal._finish(ABORTED, why, code)
        self._end('fault' if code != TIMED_OUT else 'timeout', t)
        return True

    def _end(self, key, t):
        row = self.phases.fire(key)
        self._zero_pending = self._zero_pending or row.zero  # one owed before stays owed
        self.goal.phase = self.phase
        if t is not None:
            self.goal.started[self.phase] = float(t)

    def attached(self, t, T_link_target=None):
        """
        Take the attachment as made at time ``t``: the model carries the target from now on.

        ``T_link_target`` (4, 4): the target's link frame in the end-effector link's URDF frame
        (None: from the last state and the prediction at ``t``).  Only in the grasp phase.
        """
        if self.phase != ph.GRASP:
            raise InputError(f'attached: the capture is in phase {self.phase!r}, not grasp')
        if self._state is None:
            raise InputError('attached: no state of the robot yet (update first)')
        t = float(t)
        if T_link_target is None:
            T_link_target = self._relative_pose(self._state, t)
        self.model = capture_model(self.robot, self.link, self.target, T_link_target)
        self.attachment = (t, np.array(T_link_target, dtype=float))
        q = np.asarray(self._state.q, dtype=float)
        self.law = Detumble(self.model, q, **self.detumble_options)
        self._enter('attached', t)

    def _relative_pose(self, state, t):
        R0, r0 = self.frames.pose(state.base)
        k = kinematics(R0, r0, np.asarray(state.q, dtype=float), self.robot)
        i = self.motion.end_effector.link
        T_c = np.asarray(self.robot.link(i).T, dtype=float)  # CoM frame in the link frame
        R_c = np.asarray(k.RL, dtype=float).reshape(3, 3, -1)[:, :, i - 1]
        r_c = np.asarray(k.rL, dtype=float).reshape(3, -1)[:, i - 1]
        R_l = R_c @ T_c[:3, :3].T
        p_l = r_c - R_l @ T_c[:3, 3]
        s = self.prediction.target_state(t)
        R_t, p_t = s.R, s.r - s.R @ self.target.com
        T = np.eye(4)
        T[:3, :3] = R_l.T @ R_t
        T[:3, 3] = R_l.T @ (p_t - p_l)
        return T

    def _enter(self, key, t):
        self.phases.fire(key)
        self.goal.phase = self.phase
        self.goal.started[self.phase] = t
        if self.phase == ph.DONE:
            self.goal._finish(SUCCEEDED, f'captured and at rest at t = {t:.3f} s')

    # -- per tick -------------------------------------------------------------------------------
    def _fault(self, state, t):
        """Return the fault that aborts the capture now, or ''."""
        if self.attachment is None and t - self.estimate_time > self.estimate_timeout:
            return (
                f'the estimate of target {self.target.name!r} is {t - self.estimate_time:.3f} s '
                f'old (estimate_timeout {self.estimate_timeout:g} s)'
            )
        q = np.asarray(state.q, dtype=float)
        m = self.motion
        tol = self.limit_tolerance
        out = np.flatnonzero((q < m.lower - tol) | (q > m.upper + tol))
        if out.size:
            i = int(out[0])
            return (
                f'joint {self.robot.q_names[i]!r} at {q[i]:.4g}, beyond its limits '
                f'[{m.lower[i]:.4g}, {m.upper[i]:.4g}] (limit_tolerance {tol:g})'
            )
        return ''

    def update(self, state, t):
        """
        Return the :data:`CaptureOutput` of one tick (see the module docstring).

        ``state``: the measured state; ``t``: the control time [s].
        """
        t = float(t)
        self._state = state
        if self._zero_pending:
            self._zero_pending = False
            z = np.zeros(self.robot.n_q)
            return CaptureOutput(z, np.zeros(3), np.zeros(3), True, self.phase, self._feedback())
        if self.phase not in ph.ACTIVE_PHASES + (ph.DONE,):
            return CaptureOutput(None, None, None, False, self.phase, self._feedback())
        goal = self.goal
        why = self._fault(state, t) if goal is not None and not goal.done else ''
        if why:
            self.abort(why, t)
            return self.update(state, t)
        try:
            if self.attachment is None:
                return self._approach(state, t)
            return self._detumble(state, t)
        except SpartError as err:
            self.abort(f'the capture law failed: {err}', t)
            return self.update(state, t)

    def _timed_out(self, t):
        goal = self.goal
        since = goal.started.get(self.phase, t)
        if t - since > goal.timeout(self.phase):
            self.abort(
                f'phase {self.phase} took more than {goal.timeout(self.phase):g} s '
                f'(since t = {since:.3f} s)',
                t,
                TIMED_OUT,
            )
            return True
        return False

    def _approach(self, state, t):
        goal = self.goal
        ref = self.path.sample(t)
        cmd = self.motion.command(state, ref, t)
        err = grasp_error(
            cmd.ee_rotation, cmd.ee_position, cmd.ee_twist, ref.fixture, self.grasp_offset
        )
        goal.feedback = CaptureFeedback(
            t, self.phase, err.distance, err.angle, err.relative_twist, ref.sigma, cmd.message
        )
        if self.phase == ph.APPROACH and ref.stage == 'synchronise':
            self._enter('path_end', t)
        if self.phase == ph.SYNCHRONISE:
            if self.grasp_check.update(t, err):
                self._enter('grasp_criteria', t)
                if self.auto_attach:
                    self.attached(t)
            elif self._timed_out(t):
                return self.update(state, t)
        elif self.phase == ph.GRASP and self._timed_out(t):
            return self.update(state, t)
        return CaptureOutput(
            cmd.efforts, cmd.base_torque, cmd.base_force, False, self.phase, goal.feedback
        )

    def _detumble(self, state, t):
        cmd = self.law.command(state, t)
        goal = self.goal
        if self.phase == ph.DETUMBLE:
            if self.law.at_rest(cmd):
                if self._rest_since is None:
                    self._rest_since = t
                if t - self._rest_since >= self.rest_dwell - 1e-12:
                    self._enter('at_rest', t)
            else:
                self._rest_since = None
                if self._timed_out(t):
                    return self.update(state, t)
        goal.feedback = CaptureFeedback(t, self.phase, 0.0, 0.0, np.zeros(6), 0.0, cmd.message)
        return CaptureOutput(
            cmd.efforts, cmd.base_torque, cmd.base_force, False, self.phase, goal.feedback
        )

    def _feedback(self):
        return None if self.goal is None else self.goal.feedback
