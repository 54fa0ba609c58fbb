"""
spart_controller's ``~/capture`` action server (spart_interfaces/action/Capture; rclpy adapter).

The semantics are the trajectory action's (:mod:`.trajectory_action`), decided by the controller
(:meth:`~spart_ros.control.controller.Controller.submit_capture`, its capture unit
:mod:`spart_ros.control.capture_control`); this module carries goals in and results and feedback
out:

- a goal whose fields are not valid (a negative tolerance, a timeout below 0) is refused at once
  (the client's goal response); any other is accepted and checked: not feasible (out of reach,
  too fast, no estimate of the target yet, a target held, the controller not commanding) it is
  aborted at once, its result saying why (``error_code`` OUT_OF_REACH, TOO_FAST or INVALID_GOAL,
  ``error_string`` the reason); feasible, it replaces whatever ran (a joint trajectory, or a
  capture before its grasp: aborted with INVALID_GOAL, "replaced by ...");
- feedback at the controller's ``status_rate``: the phase, the distance and angle to the grasp,
  the relative twist at the fixture, the share of the approach left, the laws' notes;
- a cancel stops the capture (the controller holds the measured pose): result canceled,
  SUCCESSFUL; a fault or a timeout aborts it with one all-zero command (FAULT, TIMED_OUT), as does
  the controller stopping (a halt, a deactivation);
- success: at rest with the target held (phase ``done``; ``grasp_time``, ``rest_time``).

Fields left 0 take the defaults of :class:`~spart_ros.control.capture_goal.CaptureGoal` and
:class:`~spart_ros.control.grasp.GraspTolerances`.
"""

from rclpy.action import CancelResponse, GoalResponse

from spart_interfaces.action import Capture

from .goal_server import GoalServer
from ..control.capture_goal import CaptureGoal
from ..control.grasp import GraspTolerances
from ..core.errors import InputError, SpartError

__all__ = ['CaptureActionServer', 'goal_from_request', 'ACTION_NAME']

ACTION_NAME = '~/capture'

_TOLERANCES = (
    ('position_tolerance', 'position'),
    ('orientation_tolerance', 'orientation'),
    ('linear_tolerance', 'linear'),
    ('angular_tolerance', 'angular'),
    ('dwell_time', 'dwell'),
)
_TIMES = (
    'approach_time',
    'approach_timeout',
    'synchronise_timeout',
    'grasp_timeout',
    'detumble_timeout',
    'standoff',
)


def goal_from_request(request):
    """
    Return the :class:`~spart_ros.control.capture_goal.CaptureGoal` of a Capture goal request.

    0 in a tolerance or a time = the default; InputError naming a bad field.
    """
    tol = {}
    for field, name in _TOLERANCES:
        value = float(getattr(request, field))
        if value < 0:
            raise InputError(f'{field}: expected a value >= 0 (0 = the default), got {value}')
        if value > 0:
            tol[name] = value
    times = {}
    for name in _TIMES:
        value = float(getattr(request, name))
        if value < 0:
            raise InputError(
                f'{name}: expected seconds (or m) >= 0 (0 = the default), got {value}'
            )
        if value > 0:
            times[name] = value
    return CaptureGoal(
        target=request.target,
        fixture=request.fixture,
        tolerances=GraspTolerances(**tol),
        **times,
    )


class CaptureActionServer(GoalServer):
    """
    The ``~/capture`` action server of ``node`` (a ControllerNode with a target).

    The node calls :meth:`update` after its ticks and transitions (results of the goals that
    finished) and :meth:`publish_feedback` at its status rate.
    """

    noun = 'capture goal'

    def __init__(self, node, name=ACTION_NAME):
        super().__init__(node, Capture, name)

    # -- goals in ---------------------------------------------------------------------------
    def _on_goal(self, request):
        try:
            goal_from_request(request)
        except SpartError as err:
            self.node.get_logger().error(f'{self.name}: goal refused: {err}')
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _on_accepted(self, handle):
        goal = goal_from_request(handle.request)
        try:
            self.node.controller.submit_capture(goal, self.node.control_time())
            self.node.get_logger().info(
                f'{self.name}: capture goal {goal.id} accepted: {goal.plan.message}'
                if goal.plan is not None and getattr(goal.plan, 'message', '')
                else f'{self.name}: capture goal {goal.id} accepted'
            )
        except SpartError as err:  # refused: the goal is aborted, its result says why
            self.node.get_logger().warning(f'{self.name}: capture goal {goal.id} refused: {err}')
        self._track(handle, goal)

    def _on_cancel(self, handle):
        entry = self._entry(handle)
        if entry is None or entry.goal.done:
            return CancelResponse.REJECT
        unit = self.node.controller.capture
        if unit is not None:
            unit.cancel(entry.goal, self.node.control_time())
        self.node.get_logger().info(
            f'{self.name}: capture goal {entry.goal.id} canceled: holding the measured pose'
        )
        return CancelResponse.ACCEPT

    def _result(self, goal):
        started = goal.started or {}
        return Capture.Result(
            error_code=int(goal.error_code),
            error_string=goal.message,
            phase=goal.phase or '',
            grasp_time=float(started.get('detumble', 0.0)),
            rest_time=float(started.get('done', 0.0)),
        )

    # -- feedback out -------------------------------------------------------------------------
    def publish_feedback(self, frame=''):
        """Feedback of every running goal: its last tick (``frame``: the world frame's name)."""
        for entry in self._entries:
            goal, fb = entry.goal, entry.goal.feedback
            if goal.done or fb is None or not entry.handle.is_active:
                continue
            msg = Capture.Feedback()
            ns = int(round(fb.time * 1e9))
            msg.header.stamp.sec, msg.header.stamp.nanosec = (
                ns // 1_000_000_000,
                ns % 1_000_000_000,
            )
            msg.header.frame_id = frame
            msg.phase = fb.phase
            msg.distance, msg.angle = float(fb.distance), float(fb.angle)
            w, v = fb.relative_twist[0:3], fb.relative_twist[3:6]
            t = msg.relative_twist
            t.angular.x, t.angular.y, t.angular.z = (float(x) for x in w)
            t.linear.x, t.linear.y, t.linear.z = (float(x) for x in v)
            msg.approach_left = float(fb.sigma)
            msg.message = fb.message or ''
            entry.handle.publish_feedback(msg)
