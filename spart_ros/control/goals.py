"""
Trajectory goals: how a joint trajectory is handed to a controller and how it goes (pure Python).

A :class:`TrajectoryGoal` is what a client asks for (joints by name, waypoints, a start time)
plus what became of it: :meth:`Controller.submit <spart_ros.control.controller.Controller.submit>`
checks it (InputError naming the problem: refused) and schedules it; from then on the
controller updates ``status`` and ``message`` at each tick:

==============  ==========================================================================
``pending``     accepted, waiting to be planned: no robot model or no measured state yet,
                or an activation's hold not set yet; it starts at the first command
``queued``      planned, starts at ``start_time`` (control time, a future stamp)
``active``      followed now (until ``end_time``)
``succeeded``   the reference reached the last waypoint (the controller holds it)
``preempted``   replaced by a newer goal before it ended
``aborted``     dropped by the controller (``message`` says why: deactivation, a halt far from
                the reference, a reset or a state jump, a tracking fault, a new model)
``canceled``    canceled by the client (:meth:`Controller.cancel`: the current reference is
                held)
==============  ==========================================================================

Progress while it runs: :meth:`Controller.feedback` (desired, actual and error of the last
tick) and ``end_time``.  A FollowJointTrajectory action server maps these one to one.

A goal given with a :class:`~.tolerances.ToleranceRequest` (``tolerances``: an action goal, whose
client waits for a result) follows JointTrajectoryController's rules: its path tolerance is checked
while it runs, and it succeeds once the measured state is within its goal tolerance after the end
(:mod:`.tolerances`); without one (a topic trajectory) the defaults' path tolerance is checked and
it succeeds when its reference reaches the last point.  ``error_code`` says how a goal ended, with
control_msgs/FollowJointTrajectory's result codes (:data:`SUCCESSFUL` ...
:data:`GOAL_TOLERANCE_VIOLATED`):
a refused goal ``INVALID_JOINTS`` (a joint the model does not have) or ``INVALID_GOAL``, a path
tolerance violation or a tracking fault ``PATH_TOLERANCE_VIOLATED``, a goal tolerance not met in
time ``GOAL_TOLERANCE_VIOLATED``, a preempted goal or one aborted for another reason (deactivation,
a reset, a halt far from the reference, a new model) ``INVALID_GOAL`` as JTC reports them, a
succeeded or canceled one ``SUCCESSFUL``.
"""

from dataclasses import dataclass, field
import itertools

import numpy as np

from ..core.errors import InputError

__all__ = [
    'TrajectoryGoal',
    'PENDING',
    'QUEUED',
    'ACTIVE',
    'SUCCEEDED',
    'PREEMPTED',
    'ABORTED',
    'CANCELED',
    'DONE',
    'check_position_limits',
    'GoalError',
    'SUCCESSFUL',
    'INVALID_GOAL',
    'INVALID_JOINTS',
    'OLD_HEADER_TIMESTAMP',
    'PATH_TOLERANCE_VIOLATED',
    'GOAL_TOLERANCE_VIOLATED',
]

PENDING, QUEUED, ACTIVE = 'pending', 'queued', 'active'
SUCCEEDED, PREEMPTED, ABORTED, CANCELED = 'succeeded', 'preempted', 'aborted', 'canceled'
#: final states
DONE = (SUCCEEDED, PREEMPTED, ABORTED, CANCELED)
#: result codes (control_msgs/FollowJointTrajectory's)
(
    SUCCESSFUL,
    INVALID_GOAL,
    INVALID_JOINTS,
    OLD_HEADER_TIMESTAMP,
    PATH_TOLERANCE_VIOLATED,
    GOAL_TOLERANCE_VIOLATED,
) = (0, -1, -2, -3, -4, -5)
_CODES = {
    SUCCEEDED: SUCCESSFUL,
    CANCELED: SUCCESSFUL,
    PREEMPTED: INVALID_GOAL,
    ABORTED: INVALID_GOAL,
}


class GoalError(InputError):
    """
    Why a goal is refused (``message``), with its result ``code``.

    :data:`INVALID_JOINTS`: a joint the model does not have; :data:`OLD_HEADER_TIMESTAMP`: it ended
    before it came; else INVALID_GOAL.
    """

    def __init__(self, message, code=INVALID_GOAL):
        super().__init__(message)
        self.code = code


_ids = itertools.count(1)


@dataclass(eq=False)
class TrajectoryGoal:
    """
    A joint trajectory for a controller (see the module docstring).

    ``joint_names`` (m): moving joints of the robot, any order (the others hold their
    reference); ``times`` (k,): after the start, s, > 0 and strictly increasing; ``positions``
    (k, m); ``velocities``, ``accelerations`` (k, m) or None (then from a C2 spline, see
    :mod:`.trajectory`); ``start``: control time (s) to start at, 0 or in the past = at once;
    ``first``: the index of ``positions[0]`` in the client's numbering (messages name points
    by it); ``tolerances``: a :class:`~.tolerances.ToleranceRequest` (an action goal) or None (see
    the module docstring).  Set by the controller: ``status``, ``message``, ``error_code``,
    ``start_time``, ``end_time``, ``id``, ``resolved`` (the tolerances resolved for the model).
    """

    joint_names: list
    times: np.ndarray
    positions: np.ndarray
    velocities: np.ndarray = None
    accelerations: np.ndarray = None
    start: float = 0.0
    first: int = 0
    tolerances: object = None
    status: str = PENDING
    message: str = ''
    error_code: int = SUCCESSFUL
    start_time: float = None
    end_time: float = None
    id: int = field(default_factory=lambda: next(_ids))
    #: the tolerances applied (a :class:`~.tolerances.GoalTolerances`, set when it starts)
    resolved: object = field(default=None, repr=False)

    @classmethod
    def from_points(cls, joint_names, points, start=0.0, tolerances=None):
        """
        Return a goal of the joints ``joint_names`` from the waypoints ``points``.

        ``start``: control time to start at (s); ``tolerances``: as the class's.

        ``points`` = [(time_from_start s, positions, velocities, accelerations)] (empty sequences
        for absent velocities/accelerations), as a trajectory_msgs/JointTrajectory carries them. A
        first point at time 0 is the current state (MoveIt sends it) and is skipped. InputError
        naming the problem: no joint names, a name twice, no point after 0, a point of the wrong
        length, NaN or infinity.
        """
        names = [str(n) for n in joint_names]
        if not names or len(set(names)) != len(names):
            raise InputError(f'joint_names {names} must be distinct and not empty')
        points = list(points)
        skipped = int(bool(points) and points[0][0] <= 0)
        points = points[skipped:]
        if not points:
            raise InputError('no point with time_from_start > 0')
        m = len(names)

        def column(k, attr, required):
            rows = [p[k] for p in points]
            if not required and all(len(r) == 0 for r in rows):
                return None
            for j, r in enumerate(rows):
                if len(r) != m:
                    raise InputError(
                        f'point {j + skipped} has {len(r)} {attr} for {m} joint_names: one per '
                        f'joint, in the order {names}'
                    )
            values = np.array(rows, dtype=float)
            if not np.all(np.isfinite(values)):
                raise InputError(f'{attr} contain NaN or infinity')
            return values

        times = np.array([float(p[0]) for p in points])
        if not np.all(np.isfinite(times)) or np.any(np.diff(times) <= 0):
            raise InputError(
                f'time_from_start must be finite and strictly increasing, got {times.tolist()}'
            )
        start = float(start)
        if not np.isfinite(start):
            raise InputError(f'the start time must be finite, got {start}')
        return cls(
            names,
            times,
            column(1, 'positions', True),
            column(2, 'velocities', False),
            column(3, 'accelerations', False),
            start,
            skipped,
            tolerances,
        )

    @property
    def done(self):
        return self.status in DONE

    def point_index(self, t):
        """
        Return the index of the point followed toward at control time ``t``.

        In the client's numbering (a skipped first point at time 0 counted: ``first``): the point
        the current segment ends at, the first one before it is reached, the last one from its
        time on (FollowJointTrajectory feedback's ``index``, "the currently used point from
        trajectory.points"). ``first`` before the goal starts.
        """
        if self.start_time is None:
            return self.first
        # half a nanosecond: stamps are integer nanoseconds, seconds in floats are not exact
        k = int(np.searchsorted(self.times, t - self.start_time + 5e-10, side='right'))
        return self.first + min(k, len(self.times) - 1)

    def _finish(self, status, message='', code=None):
        if not self.done:
            self.status, self.message = status, message
            self.error_code = _CODES[status] if code is None else code


def check_position_limits(names, positions, start, lower, upper, tolerance=0.0, first=0):
    """
    Check the waypoints ``positions`` (k, m) against the position limits of the joints ``names``.

    InputError naming the first waypoint (numbered from ``first``) and joint outside the position
    limits ``lower``, ``upper`` (m,) by more than ``tolerance``. A joint without a range (lower >=
    upper: continuous, no ``<limit>``, or urdfdom's 0, 0) is not checked. A joint that STARTS
    outside its range (``start`` (m,), e.g. a robot that sagged before its controller came up) is
    not a dead end: its waypoints may lie between the start and the range, and the last one must be
    inside (the way back in).
    """
    positions = np.asarray(positions, dtype=float)
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    start = np.asarray(start, dtype=float)
    checked = lower < upper
    low = np.where(checked, np.minimum(lower, start), -np.inf) - tolerance
    high = np.where(checked, np.maximum(upper, start), np.inf) + tolerance
    outside = (positions < low) | (positions > high)
    if outside.any():
        j, m = (int(x) for x in np.argwhere(outside)[0])
        raise InputError(
            f'point {j + first} puts {names[m]} at {positions[j, m]:.6g}, outside its URDF '
            f'position limits [{lower[m]:.6g}, {upper[m]:.6g}]'
            + (
                f' and beyond where it is ({start[m]:.6g})'
                if not lower[m] <= start[m] <= upper[m]
                else ''
            )
            + f' (limit_tolerance {tolerance:g}): refused'
        )
    final = positions[-1]
    stuck = checked & ((final < lower - tolerance) | (final > upper + tolerance))
    if stuck.any():
        m = int(np.flatnonzero(stuck)[0])
        raise InputError(
            f'{names[m]} is at {start[m]:.6g}, outside its URDF position limits '
            f'[{lower[m]:.6g}, {upper[m]:.6g}]; the last point ({final[m]:.6g}) must bring it '
            'back inside: refused'
        )
