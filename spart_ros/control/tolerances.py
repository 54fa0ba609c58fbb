"""
Path and goal tolerances of a trajectory goal, as JointTrajectoryController applies them.

Pure Python, no ROS.

A client (control_msgs/FollowJointTrajectory) may give per joint a *path* tolerance, checked while
the trajectory runs (the measured state may not leave the reference by more: the goal is aborted
with ``PATH_TOLERANCE_VIOLATED``), and a *goal* tolerance, checked from the end of the trajectory
on (the goal succeeds once the measured state is within it of the last point; if that has not
happened ``goal_time_tolerance`` seconds after the end, it is aborted with
``GOAL_TOLERANCE_VIOLATED``).  Each :data:`JointTolerance` gives position, velocity and
acceleration tolerances with control_msgs/JointTolerance's conventions: 0 = the controller's
default, -1 = no check ("erased"), > 0 = the tolerance; any other value is refused (InputError
naming it; JTC logs and falls back to its defaults, here the goal is rejected: a misread tolerance
is a silent wrong answer).  A goal time tolerance of 0 is the default, which is 0 = no limit:
the goal waits for its goal tolerance.

The defaults (the controller's settings, as JTC's ``constraints``): ``path_tolerance`` and
``goal_tolerance`` (positions, one value or one per command joint; 0 = unchecked),
``stopped_velocity_tolerance`` (the velocity goal tolerance of every command joint) and
``goal_time``.  Acceleration tolerances are accepted and not checked: nothing measures the joint
accelerations (JTC checks them only with acceleration state and command interfaces).

Arrays are per coordinate of the model (``q_names``, the robot's independent joints), 0 where a
component is not checked.
"""

from collections import namedtuple
from dataclasses import dataclass
import functools
import math

import numpy as np

from ..core.errors import InputError
from ..native.compiled import call as _call
from ..native.compiled import first_violation as _first_violation
from ..native.compiled import KINDS

_K_VIOLATION = KINDS['first_violation']

__all__ = [
    'JointTolerance',
    'ToleranceRequest',
    'StateTolerances',
    'GoalTolerances',
    'ERASE',
    'default_tolerances',
    'resolve_tolerances',
    'violation',
]

#: control_msgs/JointTolerance's "no check" value
ERASE = -1.0

JointTolerance = namedtuple(
    'JointTolerance', 'name position velocity acceleration', defaults=(0.0, 0.0, 0.0)
)
JointTolerance.__doc__ = """One joint's tolerances as a client gives them
(control_msgs/JointTolerance): ``name``; ``position`` (rad or m), ``velocity``, ``acceleration``: 0
= default, -1 = none, > 0."""

StateTolerances = namedtuple('StateTolerances', 'position velocity acceleration')
StateTolerances.__doc__ = (
    """Resolved tolerances, each (n,) per model coordinate; 0 = not checked."""
)


@dataclass(frozen=True)
class ToleranceRequest:
    """
    What a client asks for besides the trajectory.

    ``path`` and ``goal`` (sequences of :data:`JointTolerance`), ``goal_time`` (s; 0 = the
    default). A goal given with a request (an action goal) reports a result: it succeeds only
    within its goal tolerance.
    """

    path: tuple = ()
    goal: tuple = ()
    goal_time: float = 0.0


@dataclass(frozen=True)
class GoalTolerances:
    """
    Resolved tolerances of one goal.

    ``path``, ``goal`` (:data:`StateTolerances`), ``goal_time`` (s, 0 = no limit).
    """

    path: StateTolerances
    goal: StateTolerances
    goal_time: float = 0.0

    @functools.cached_property
    def checks_path(self):
        """Return whether a path tolerance is checked (once: the tolerances are constant)."""
        return bool(self.path.position.any() or self.path.velocity.any())


def default_tolerances(n, columns, path_position, goal_position, stopped_velocity, goal_time):
    """
    Return the defaults for ``n`` model coordinates.

    ``path_position``, ``goal_position`` (per command joint, at the model coordinates ``columns``),
    ``stopped_velocity`` (the velocity goal tolerance of the command joints), ``goal_time`` (s).
    """

    def full(values):
        out = np.zeros(n)
        out[columns] = values
        return out

    zero = np.zeros(n)
    return GoalTolerances(
        StateTolerances(full(path_position), zero, zero),
        StateTolerances(full(goal_position), full(stopped_velocity), zero),
        float(goal_time),
    )


def _value(what, name, component, default, given):
    """``JointTolerance``'s conventions: 0 -> ``default``, -1 -> 0 (no check), > 0 -> ``given``."""
    try:
        given = float(given)
    except (TypeError, ValueError):
        raise InputError(f'{what} of {name}: {component} {given!r} is not a number') from None
    if given == 0.0:
        return default
    if given == ERASE:
        return 0.0
    if not math.isfinite(given) or given < 0.0:
        raise InputError(
            f'{what} of {name}: {component} {given:g} (expected > 0 for a tolerance, 0 for the '
            f'default, -1 for none): goal refused'
        )
    return given


def resolve_tolerances(defaults, q_names, request):
    """
    Return the :class:`GoalTolerances` of a goal.

    ``defaults`` (:class:`GoalTolerances`) overridden by ``request`` (:class:`ToleranceRequest`)
    for joints of ``q_names`` (the model's coordinates). InputError naming a joint that is not one
    of them, a joint given twice, a value that is neither > 0, 0 nor -1, or a negative or
    non-finite goal time.
    """
    index = {n: k for k, n in enumerate(q_names)}
    resolved = []
    for what, entries, base in (
        ('path_tolerance', request.path, defaults.path),
        ('goal_tolerance', request.goal, defaults.goal),
    ):
        arrays = [a.copy() for a in base]
        seen = set()
        for entry in entries:
            entry = JointTolerance(*entry)
            if entry.name not in index:
                raise InputError(
                    f'{what} names joint {entry.name!r}, which is not a moving joint of the model '
                    f'({list(q_names)}): goal refused'
                )
            if entry.name in seen:
                raise InputError(f'{what} gives joint {entry.name!r} twice: goal refused')
            seen.add(entry.name)
            k = index[entry.name]
            for a, component in zip(arrays, StateTolerances._fields):
                a[k] = _value(what, entry.name, component, a[k], getattr(entry, component))
        resolved.append(StateTolerances(*arrays))
    goal_time = float(request.goal_time)
    if not math.isfinite(goal_time) or goal_time < 0.0:
        raise InputError(
            f'goal_time_tolerance {request.goal_time!r} s must be >= 0 (0 = the default): goal '
            'refused'
        )
    return GoalTolerances(resolved[0], resolved[1], goal_time or defaults.goal_time)


def violation(tolerances, q_names, position_error, velocity_error, what):
    """
    Return the sentence naming the first coordinate whose error exceeds ``tolerances``.

    ``tolerances``: :data:`StateTolerances`; '' when none does.  ``q_names``: the coordinates'
    names. ``position_error``,
    ``velocity_error`` (n,): reference - measured; ``what``: 'path tolerance' or 'goal tolerance'.
    """
    for component, error in (('position', position_error), ('velocity', velocity_error)):
        tol = getattr(tolerances, component)
        over = (tol > 0.0) & (np.abs(error) > tol)
        if over.any():
            k = int(np.flatnonzero(over)[0])
            return (
                f'{what} of {q_names[k]} violated: {component} error {error[k]:.4g} beyond '
                f'{tol[k]:g}'
            )
    return ''


def state_violation(tolerances, q_names, ref, state, what):
    """
    Return :func:`violation` of the errors ``ref`` - ``state`` ('' when none), tested compiled.

    ``ref``: the :data:`~spart_ros.control.trajectory.Reference`; ``state``: the measured (q,
    qd); the errors are formed only for the sentence.
    """
    for component, measured in (('position', state.q), ('velocity', state.qd)):
        tol = getattr(tolerances, component)
        k = _call(_first_violation, _K_VIOLATION, tol, getattr(ref, component), measured)
        if k is None or k != -1:  # a violation, or arrays of other types or lengths: numpy's
            return violation(
                tolerances, q_names, ref.position - state.q, ref.velocity - state.qd, what
            )
    return ''
