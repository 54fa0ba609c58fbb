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
from rclpy.action import CancelResponse, GoalResponse

from .controller_io import goal_from_message
from .goal_server import GoalServer
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


class TrajectoryActionServer(GoalServer):
    """
    The action server of ``node``.

    A ControllerNode: ``controller``, ``control_time()``, ``get_logger()``. The node calls
    :meth:`update` after its ticks and transitions (results of finished goals) and
    :meth:`publish_feedback` at its status rate.
    """

    noun = 'trajectory'

    def __init__(self, node, name=ACTION_NAME):
        self._accepted = None  # the goal of the request just accepted, for its handle
        super().__init__(node, FollowJointTrajectory, name)

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
        self._track(handle, goal)

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

    def _result(self, goal):
        return FollowJointTrajectory.Result(
            error_code=int(goal.error_code), error_string=goal.message
        )

    # -- feedback out -------------------------------------------------------------------------
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
