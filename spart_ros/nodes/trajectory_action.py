"""
spart_controller's FollowJointTrajectory action server (rclpy adapter; needs control_msgs).

``~/follow_joint_trajectory`` (control_msgs/action/FollowJointTrajectory), the name and the
semantics of ros2_controllers' JointTrajectoryController, so that MoveIt's
``moveit_simple_controller_manager`` (``type: FollowJointTrajectory``) and every other client of
JTC drive spart_controller.  Everything that decides is the controller's
(:class:`spart_ros.control.controller.Controller`, :mod:`spart_ros.control.tolerances`); this
module
carries goals in and results and feedback out:

- a goal is checked as it comes: refused (the client's goal response) when the controller is not
  active or in fault, the mode follows no joint trajectory, a joint is unknown, a waypoint is
  outside the URDF limits, a tolerance is invalid, the trajectory ends before it came, or it
  carries a multi-DOF trajectory; accepted, it replaces whatever ran, from the reference followed
  then (no jump; the replaced goal is aborted with INVALID_GOAL, as JTC documents);
- feedback (desired, actual and error of the command joints at the last command; ``index``: the
  goal's point followed toward, in its numbering, as JointTrajectoryController reports it) at the
  controller's ``status_rate``;
- a cancel holds the current reference (the result: canceled, SUCCESSFUL); a path tolerance
  violation aborts with PATH_TOLERANCE_VIOLATED (and a tracking fault too), a goal tolerance not
  met ``goal_time_tolerance`` after the end with GOAL_TOLERANCE_VIOLATED, a deactivation, reset or
  halt far from the reference with INVALID_GOAL; ``error_string`` says why.

Importing this module imports control_msgs (ImportError when it is not installed: the node then
says so and offers the ``~/joint_trajectory`` topic only).
"""

from builtin_interfaces.msg import Duration, Time
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.task import Future

from .controller_io import goal_from_message
from ..control.goals import CANCELED, SUCCEEDED
from ..control.tolerances import JointTolerance, ToleranceRequest
from ..core.errors import InputError, SpartError

__all__ = ['TrajectoryActionServer', 'goal_from_action', 'ACTION_NAME']

ACTION_NAME = '~/follow_joint_trajectory'


def _seconds(d):
    return d.sec + 1e-9 * d.nanosec


def _duration(seconds):
    ns = max(int(round(seconds * 1e9)), 0)
    return Duration(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


def goal_from_action(request):
    """
    Return the TrajectoryGoal of a FollowJointTrajectory goal request.

    A :class:`~spart_ros.control.goals.TrajectoryGoal` from its trajectory, path and goal
    tolerances, goal time tolerance; InputError naming what this controller cannot follow.
    """
    multi = request.multi_dof_trajectory
    if multi.joint_names or multi.points:
        raise InputError(
            f'multi_dof_trajectory names {list(multi.joint_names)}: multi-DOF (planar, floating) '
            'joints are not commanded by this controller: goal refused'
        )
    for what in ('component_path_tolerance', 'component_goal_tolerance'):
        if getattr(request, what, ()):
            raise InputError(
                f'{what} applies to multi-DOF joints, which this controller does not command: '
                'goal refused'
            )
    tolerances = ToleranceRequest(
        tuple(
            JointTolerance(t.name, t.position, t.velocity, t.acceleration)
            for t in request.path_tolerance
        ),
        tuple(
            JointTolerance(t.name, t.position, t.velocity, t.acceleration)
            for t in request.goal_tolerance
        ),
        _seconds(request.goal_time_tolerance),
    )
    goal = goal_from_message(request.trajectory)
    goal.tolerances = tolerances
    return goal


class _Entry:
    __slots__ = ('handle', 'goal', 'done')

    def __init__(self, handle, goal):
        self.handle, self.goal, self.done = handle, goal, Future()


class TrajectoryActionServer:
    """
    The action server of ``node``.

    A ControllerNode: ``controller``, ``control_time()``, ``get_logger()``. The node calls
    :meth:`update` after its ticks and transitions (results of finished goals) and
    :meth:`publish_feedback` at its status rate.
    """

    def __init__(self, node, name=ACTION_NAME):
        self.node = node
        self._entries = []  # the goals not finished yet (results, feedback)
        self._executing = {}  # goal handle -> its entry, until its execute callback takes it
        self._accepted = None  # the goal of the request just accepted, for its handle
        self._server = ActionServer(
            node,
            FollowJointTrajectory,
            name,
            execute_callback=self._execute,
            goal_callback=self._guard(self._on_goal, GoalResponse.REJECT),
            handle_accepted_callback=self._guard(self._on_accepted, None),
            cancel_callback=self._guard(self._on_cancel, CancelResponse.REJECT),
        )
        self.name = node.resolve_topic_name(name)

    def _guard(self, callback, fallback):
        def wrapped(arg):
            try:
                return callback(arg)
            except Exception as err:  # noqa: BLE001 - an action callback must never kill the node
                self.node.get_logger().error(
                    f'{self.name}: unexpected {type(err).__name__}: {err}'
                )
                return fallback

        return wrapped

    # -- goals in ---------------------------------------------------------------------------
    def _on_goal(self, request):
        try:
            goal = goal_from_action(request)
            self.node.controller.submit(goal, self.node.control_time())
        except SpartError as err:
            self.node.get_logger().error(f'{self.name}: goal refused: {err}')
            return GoalResponse.REJECT
        self._accepted = goal
        return GoalResponse.ACCEPT

    def _on_accepted(self, handle):
        goal, self._accepted = self._accepted, None
        entry = _Entry(handle, goal)
        self._entries.append(entry)
        self._executing[id(handle)] = entry
        handle.execute()

    def _on_cancel(self, handle):
        entry = self._entry(handle)
        if entry is None or entry.goal.done:
            return CancelResponse.REJECT
        self.node.controller.cancel(entry.goal, self.node.control_time())
        self.node.get_logger().info(
            f'{self.name}: goal (trajectory {entry.goal.id}) canceled: holding the current '
            'reference'
        )
        return CancelResponse.ACCEPT

    def _entry(self, handle):
        for entry in self._entries:
            if entry.handle is handle:
                return entry
        return None

    async def _execute(self, handle):
        entry = self._executing.pop(id(handle), None)
        if entry is None:  # cannot happen: every accepted goal has its entry
            handle.abort()
            return FollowJointTrajectory.Result(
                error_code=FollowJointTrajectory.Result.INVALID_GOAL,
                error_string='internal error: unknown goal',
            )
        await entry.done
        goal = entry.goal
        result = FollowJointTrajectory.Result(
            error_code=int(goal.error_code), error_string=goal.message
        )
        if handle.is_active:
            if goal.status == SUCCEEDED:
                handle.succeed()
            elif goal.status == CANCELED and handle.is_cancel_requested:
                handle.canceled()
            else:  # aborted, or preempted (aborted, as JTC documents)
                handle.abort()
        log = self.node.get_logger()
        text = (
            f'{self.name}: trajectory {goal.id} {goal.status} (error_code {goal.error_code}): '
            f'{goal.message}'
        )
        if goal.status == SUCCEEDED:
            log.info(text)
        else:
            log.warning(text)
        return result

    # -- results and feedback out -------------------------------------------------------------
    @property
    def busy(self):
        return bool(self._entries)

    def update(self):
        """Hand the finished goals their results (their execute callbacks resume)."""
        if not self._entries:
            return
        for entry in [e for e in self._entries if e.goal.done]:
            self._entries.remove(entry)
            entry.done.set_result(True)

    def publish_feedback(self):
        """
        Feedback of every running goal.

        Desired, actual and error (positions, velocities) of the command joints at the last
        command, stamped with its control time.
        """
        if not self._entries:
            return
        c = self.node.controller
        fb = c.feedback()
        if fb is None:
            return
        names = list(c.joint_names)
        index = {n: k for k, n in enumerate(c.q_names)}
        cols = [index[n] for n in names]
        (q, qd), (e, ed) = fb.actual, fb.error
        for entry in self._entries:
            goal = entry.goal
            if goal.done or not entry.handle.is_active:
                continue
            msg = FollowJointTrajectory.Feedback()
            ns = int(round(fb.t * 1e9))
            msg.header.stamp = Time(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)
            msg.joint_names = names
            d = msg.desired
            d.positions = fb.desired.position[cols].tolist()
            d.velocities = fb.desired.velocity[cols].tolist()
            d.accelerations = fb.desired.acceleration[cols].tolist()
            if goal.start_time is not None:
                d.time_from_start = _duration(fb.t - goal.start_time)
            msg.actual.positions, msg.actual.velocities = q[cols].tolist(), qd[cols].tolist()
            msg.error.positions, msg.error.velocities = e[cols].tolist(), ed[cols].tolist()
            if hasattr(msg, 'index'):  # control_msgs 6.3.0 and later
                msg.index = goal.point_index(fb.t)
            entry.handle.publish_feedback(msg)

    def destroy(self):
        self._server.destroy()
