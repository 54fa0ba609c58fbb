"""
The goals a controller follows: joint trajectories, end-effector pose goals, action goals.

Pure Python, no ROS.  :class:`GoalManager` takes a
:class:`~spart_ros.control.goals.TrajectoryGoal` (or a
:class:`~spart_ros.control.ee_goals.PoseGoal`) once the controller has said it may take one
(active, not in fault, a mode that follows joint trajectories: :func:`mode_refusal`), and from
then on decides what becomes of it:

- accepted: started at once or at its ``start`` from the reference followed then (no jump), the
  goal before it preempted from then on; kept *pending* when there is no model or no reference yet
  (it starts when the next hold is set); refused naming why (unknown joints, waypoints outside the
  position limits, a trajectory that ended before it came);
- at each tick (:meth:`GoalManager.follow`): queued -> active at its start; its path tolerance
  checked (a violation aborts it and holds the measured pose); after its end, succeeded once the
  measured state is within its goal tolerance (a topic goal: at once), or aborted after its goal
  time tolerance (:mod:`.tolerances`: JointTrajectoryController's rules);
- cancel (the current reference is held), abort (a reset, a halt, a fault, a deactivation...).

A pose goal in a fixed-base joint mode becomes a joint trajectory by inverse kinematics at
samples of its path (:mod:`.ee_goals`); an end-effector mode follows it itself (the law's
'ee_goal' reference).
"""

import numpy as np

from .ee_goals import joint_trajectory_of, make_path
from .goals import (
    ABORTED,
    ACTIVE,
    CANCELED,
    check_position_limits,
    GOAL_TOLERANCE_VIOLATED,
    GoalError,
    INVALID_GOAL,
    OLD_HEADER_TIMESTAMP,
    PATH_TOLERANCE_VIOLATED,
    PENDING,
    PREEMPTED,
    QUEUED,
    SUCCEEDED,
)
from .modes import accepts_pose_goals, mode_class
from .tolerances import GoalTolerances, resolve_tolerances, state_violation, violation
from .trajectory import JointTrajectory, Reference
from ..core.errors import InputError, SpartError

__all__ = ['GoalManager', 'goal_refusal']


def goal_refusal(kind, state, mode, fault):
    """
    Return why a controller refuses a goal of ``kind`` now, or ''.

    ``kind``: 'trajectory' (a joint trajectory) or 'pose' (an end-effector pose goal); ``state``:
    the controller's state; ``mode``: its mode while active (None: not active); ``fault``: the
    fault's reason, or None.
    """
    what = 'trajectory' if kind == 'trajectory' else 'pose goal'
    if mode is None:
        return f'the controller is {state}: {what} ignored (activate it)'
    refusal = _mode_refusal(mode, kind)
    if refusal:
        return refusal
    if fault is not None:
        return f'the controller is in fault ({fault}): ' + (
            'trajectory refused until the fault is cleared (a new activation, or ~/enable true)'
            if kind == 'trajectory'
            else 'goal refused until the fault is cleared'
        )
    return ''


def _mode_refusal(mode, kind):
    """Return why a controller in ``mode`` refuses any goal of ``kind``, or ''."""
    law_class = mode_class(mode)
    if kind == 'pose':
        if accepts_pose_goals(mode):
            return ''
        why = (
            'a floating base: use a space-robot mode (resolved_rate...) or '
            'floating_cartesian_impedance'
            if law_class.base == 'floating'
            else 'it holds no reference'
        )
        return f'mode {mode} takes no end-effector pose goal ({why}): goal refused'
    if law_class.follows == 'end_effector':
        return (
            f'mode {mode} follows end-effector references, not joint '
            'trajectories: trajectory ignored'
        )
    if law_class.follows == 'none':
        return (
            f'mode {mode} holds no position reference (gravity compensation, '
            'damping with kd): trajectory refused; use computed_torque to follow trajectories'
        )
    return ''


class GoalManager:
    """
    The goal followed and the goal pending of one controller (see the module docstring).

    ``reference``: the controller's :class:`~spart_ros.control.joint_reference.JointReference`;
    ``notify(level, key, text)``: where events go; ``rejected()``: counts a refused goal.  Set by
    the controller: ``settings``, ``robot`` (the ControlledRobot, None without a model).
    ``goal``: the goal followed or queued (the newest accepted); ``pending``: a goal waiting for
    the model or the first state.
    """

    def __init__(self, reference, notify, rejected):
        self.reference = reference
        self._notify = notify
        self._rejected = rejected
        self.settings = self.robot = None
        self.goal = self.pending = None

    def reset(self):
        """Per activation: no goal."""
        self.goal = self.pending = None

    @property
    def tracking(self):
        """Whether a goal is followed now (or queued)."""
        goal = self.goal
        return goal is not None and goal.status in (ACTIVE, QUEUED)

    def pending_text(self):
        """Return the sentence saying which goal waits and why ('' when none does)."""
        goal = self.pending
        return f'trajectory {goal.id} pending: {goal.message}' if goal is not None else ''

    # -- goals in ----------------------------------------------------------------------------
    def accept(self, goal, t):
        """
        Take the TrajectoryGoal ``goal`` at control time ``t`` (the controller may take goals).

        Started, or kept pending; InputError (GoalError with a result code) naming why it is
        refused.
        """
        if goal.tolerances is not None and goal.start and goal.start + goal.times[-1] < t:
            raise GoalError(
                f'the trajectory stamped {goal.start:.6f} s ends at '
                f'{goal.start + goal.times[-1]:.6f} s, before it came (control time {t:.6f} s): '
                'refused',
                OLD_HEADER_TIMESTAMP,
            )
        if self.robot is None:
            self._keep(goal, 'waiting for a robot model')
            return
        self.robot.columns(goal.joint_names)
        reference = self.reference
        if not reference.ready:
            if reference.last_q is not None:  # checked now against the last measured pose
                self._trajectory(goal, 0.0, _at_rest(reference.last_q))
            self._keep(
                goal,
                'starts at the next command'
                if reference.last_t is not None
                else 'waiting for the first state',
            )
            return
        self._start(goal, t)

    def accept_pose(self, goal, t):
        """
        Take the PoseGoal ``goal`` at control time ``t`` (the controller may take pose goals).

        An end-effector law follows its path; a joint mode follows the joint trajectory inverse
        kinematics makes of it (``goal.trajectory``). InputError naming why it is refused.
        """
        robot = self.robot
        if robot is None:
            raise InputError(
                'no robot model yet: pose goal refused (send it once the controller commands)'
            )
        if robot.law.follows == 'end_effector':
            robot.law.set_reference('ee_goal', goal)
            return
        reference = self.reference
        if not reference.ready or reference.last_base is None:
            raise InputError(
                'the controller has not commanded a measured state yet: pose goal refused (send '
                'it once it commands)'
            )
        s = self.settings
        start = max(float(t), goal.start) if goal.start else float(t)
        ik = robot.inverse_kinematics(s)
        ref = reference.sample(start)
        R0, r0, _ = robot.frames.fixed(reference.last_base)
        R, p = ik.pose(ref.position, R0, r0)
        path = make_path(goal, R, p, start, reference.last_base.R_b, reference.last_base.p_b)
        trajectory = joint_trajectory_of(
            path, ik, ref.position, R0, r0, s.path_sample_period, start=start
        )
        self.accept(trajectory, t)
        goal.trajectory = trajectory

    def _keep(self, goal, why):
        if self.pending is not None:
            self.pending._finish(PREEMPTED, f'replaced by trajectory {goal.id} before it started')
        goal.status, goal.message = PENDING, why
        self.pending = goal

    def _trajectory(self, goal, start_time, start):
        """
        Return the JointTrajectory of ``goal`` from the reference ``start`` at ``start_time``.

        Joints it does not name hold their reference position. InputError naming the problem.
        """
        robot = self.robot
        cols = robot.columns(goal.joint_names)
        check_position_limits(
            goal.joint_names,
            goal.positions,
            start.position[cols],
            robot.lower[cols],
            robot.upper[cols],
            self.settings.limit_tolerance,
            goal.first,
        )
        default = robot.tolerances
        goal.resolved = (
            GoalTolerances(default.path, None)
            if goal.tolerances is None
            else resolve_tolerances(default, robot.q_names, goal.tolerances)
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
        trajectory = self._trajectory(goal, start, self.reference.sample(start))
        self.reference.follow(trajectory)
        previous = self.goal
        if previous is not None and not previous.done:
            previous._finish(PREEMPTED, f'replaced by trajectory {goal.id} from t = {start:.6f} s')
        goal.start_time, goal.end_time = start, trajectory.end_time
        goal.status, goal.message = (QUEUED if start > t else ACTIVE), ''
        self.goal = goal
        self._notify(
            'info',
            ('goal', goal.id),
            f'trajectory of {len(goal.times)} points for {goal.joint_names} over '
            f'{goal.times[-1]:g} s accepted (goal {goal.id}): starts at {start:.9f} s (control '
            'time)',
        )

    def start_pending(self, t, allowed=True):
        """
        Start the pending goal from the hold just set at control time ``t``.

        Not ``allowed`` (a fault): it is dropped. A goal that does not fit is aborted (counted,
        told).
        """
        goal, self.pending = self.pending, None
        if goal is not None and allowed:
            try:
                self._start(goal, t)
            except SpartError as err:
                goal._finish(ABORTED, str(err))
                self._rejected()
                self._notify(
                    'error',
                    'goal',
                    f'trajectory {goal.id} refused: {err} (holding the current position)',
                )

    def model_changed(self, active):
        """Check the pending goal (kept while ``active``) against the new model: unfit, aborted."""
        goal = self.pending
        if goal is None or not active or self.robot is None:
            return
        try:
            self.robot.columns(goal.joint_names)
            goal.message = 'waiting for the first state'
        except SpartError as err:
            self.pending = None
            goal._finish(ABORTED, str(err), getattr(err, 'code', INVALID_GOAL))
            self._rejected()
            self._notify('error', 'goal', f'trajectory {goal.id} kept for the robot model: {err}')

    # -- at each tick --------------------------------------------------------------------------
    def follow(self, state, ref, t):
        """
        Return the reference of this tick after judging the followed goal at control time ``t``.

        Started, its path tolerance checked (a violation aborts it and holds the measured pose),
        and after its end, succeeded once the measured state is within its goal tolerance (a topic
        goal: at once), or aborted when that has not happened within its goal time tolerance (the
        last point stays held). ``ref``: the reference sampled for this tick.
        """
        goal = self.goal
        if goal.done:
            return ref
        if goal.status == QUEUED:
            if t < goal.start_time:
                return ref
            goal.status = ACTIVE
        tol = goal.resolved
        q_names = self.robot.q_names
        if t < goal.end_time:
            if tol is not None and tol.checks_path:
                why = state_violation(tol.path, q_names, ref, state, 'path tolerance')
                if why:
                    why = f'{why} at t = {t:.3f} s'
                    self._notify(
                        'warning',
                        ('path', goal.id),
                        f'trajectory {goal.id} aborted: {why}; holding the measured pose',
                    )
                    self.abort(why, PATH_TOLERANCE_VIOLATED)
                    self.reference.hold(t, state.q.copy())
                    return self.reference.sample(t)
            return ref
        if tol is None or tol.goal is None:
            goal._finish(SUCCEEDED, f'reached the last point at {goal.end_time:.6f} s')
            return ref
        why = violation(
            tol.goal,
            q_names,
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

    # -- goals out -------------------------------------------------------------------------------
    def abort(self, why, code=INVALID_GOAL):
        """
        Abort the followed and the pending goal (and an end-effector law's goal).

        ``why``: the message of their results, ``code``: their result code (FollowJointTrajectory's
        error codes, :mod:`~spart_ros.control.goals`).
        """
        for goal in (self.goal, self.pending):
            if goal is not None:
                goal._finish(ABORTED, why, code)
        self.goal = self.pending = None
        law = self.robot.law if self.robot is not None else None
        if law is not None and hasattr(law, 'abort_goal'):
            law.abort_goal(why)

    def cancel(self, goal, t):
        """
        Cancel ``goal`` at control time ``t`` (None: no tick yet).

        If followed (or queued), the current reference position is held from then on
        (JointTrajectoryController's cancel). Return True, or False when it was already done.
        """
        if goal.done:
            return False
        goal._finish(CANCELED, 'canceled')
        if goal is self.pending:
            self.pending = None
        elif goal is self.goal:
            self.goal = None
            reference = self.reference
            if reference.ready and t is not None:
                reference.hold(t, reference.sample(t).position)
            else:
                reference.hold_next()
        return True


def _at_rest(position):
    """Return the :data:`~spart_ros.control.trajectory.Reference` of ``position`` (n,) at rest."""
    z = np.zeros_like(position)
    return Reference(position, z, z)
