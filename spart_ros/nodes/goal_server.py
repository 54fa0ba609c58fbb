"""
What spart_controller's action servers share (rclpy adapter): goals tracked to their results.

:class:`GoalServer` holds the goals accepted and not finished, runs each goal's execute callback
until the controller says it is done, then ends it as its status says (succeeded, canceled on a
client's request, else aborted) and logs it.  Its subclasses say how a goal request becomes a
goal, what the controller does with it, and what the result and the feedback carry:
:class:`~.trajectory_action.TrajectoryActionServer` (FollowJointTrajectory) and
:class:`~.capture_action.CaptureActionServer` (spart_interfaces/Capture).
"""

from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.task import Future

from ..control.goals import CANCELED, SUCCEEDED

__all__ = ['GoalServer']


class _Entry:
    __slots__ = ('handle', 'goal', 'done')

    def __init__(self, handle, goal):
        self.handle, self.goal, self.done = handle, goal, Future()


class GoalServer:
    """
    An action server of ``node`` (a ControllerNode) whose goals the controller runs.

    Subclasses define ``_on_goal(request)`` (a GoalResponse), ``_on_accepted(handle)`` (then
    :meth:`_track`), ``_on_cancel(handle)`` (a CancelResponse) and ``_result(goal)`` (the
    action's Result); ``noun`` names a goal in the log.  The node calls :meth:`update` after its
    ticks and transitions.
    """

    noun = 'goal'

    def __init__(self, node, action_type, name):
        self.node = node
        self._action_type = action_type
        self._entries = []  # the goals not finished yet (results, feedback)
        self._executing = {}  # goal handle -> its entry, until its execute callback takes it
        self._server = ActionServer(
            node,
            action_type,
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

    def _track(self, handle, goal):
        """Follow the accepted ``goal`` of ``handle`` to its result, and start executing it."""
        entry = _Entry(handle, goal)
        self._entries.append(entry)
        self._executing[id(handle)] = entry
        handle.execute()

    def _entry(self, handle):
        """Return the entry of the goal ``handle``, or None (finished, or never accepted)."""
        return next((e for e in self._entries if e.handle is handle), None)

    async def _execute(self, handle):
        entry = self._executing.pop(id(handle), None)
        if entry is None:  # cannot happen: every accepted goal has its entry
            handle.abort()
            return self._action_type.Result(
                error_code=self._action_type.Result.INVALID_GOAL,
                error_string='internal error: unknown goal',
            )
        if not entry.goal.done:
            await entry.done
        goal = entry.goal
        result = self._result(goal)
        if handle.is_active:
            if goal.status == SUCCEEDED:
                handle.succeed()
            elif goal.status == CANCELED and handle.is_cancel_requested:
                handle.canceled()
            else:  # aborted, refused or preempted (aborted, as JTC documents)
                handle.abort()
        text = (
            f'{self.name}: {self.noun} {goal.id} {goal.status} (error_code {goal.error_code}): '
            f'{goal.message}'
        )
        log = self.node.get_logger()
        if goal.status == SUCCEEDED:
            log.info(text)
        else:
            log.warning(text)
        return result

    # -- results out ----------------------------------------------------------------------------
    @property
    def busy(self):
        """Whether a goal is running (accepted, not finished)."""
        return bool(self._entries)

    def update(self):
        """Hand the finished goals their results (their execute callbacks resume)."""
        if not self._entries:
            return
        for entry in [e for e in self._entries if e.goal.done]:
            self._entries.remove(entry)
            if not entry.done.done():
                entry.done.set_result(True)

    def destroy(self):
        """Destroy the action server."""
        self._server.destroy()
