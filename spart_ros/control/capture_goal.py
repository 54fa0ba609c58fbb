"""
A capture goal: what a client asks for, and what became of it (pure Python, no ROS).

A :class:`CaptureGoal` names the target and its fixture, the grasp tolerances and the timeouts;
:meth:`Capture.submit <spart_ros.control.capture.Capture.submit>` checks that the capture is
feasible (:mod:`.capture_planning`) and accepts or refuses it, then updates ``status``,
``message``, ``error_code``, ``phase`` and ``feedback`` at each tick, with the trajectory goals'
semantics (:mod:`.goals`, FollowJointTrajectory's):

==============  ===============================================================================
``pending``     submitted, not checked yet
``active``      accepted: being captured (``phase`` says where it is)
``succeeded``   the target is held and at rest (phase ``done``)
``preempted``   replaced by a newer capture goal before the grasp
``aborted``     stopped by a fault or a timeout (one zero command went out), or refused
                (``error_code`` says why: :data:`OUT_OF_REACH`, :data:`TOO_FAST`,
                :data:`INVALID_GOAL`)
``canceled``    canceled by the client (the controller holds)
==============  ===============================================================================

Result codes (``error_code``, the action's result): :data:`SUCCESSFUL` (succeeded or canceled),
:data:`INVALID_GOAL` (refused: no estimate of the target, a target already held, a bad
argument; or preempted), :data:`OUT_OF_REACH`, :data:`TOO_FAST` (refused before any attempt),
:data:`TIMED_OUT` (a phase's timeout), :data:`FAULT` (a fault while capturing).
Feedback (:data:`CaptureFeedback`): the phase, the distance and angle to the grasp and the
relative twist at the fixture, each tick.
"""

from collections import namedtuple
from dataclasses import dataclass, field
import itertools

import numpy as np

from .goals import ABORTED, ACTIVE, CANCELED, DONE, GoalError, PENDING, PREEMPTED, SUCCEEDED
from .grasp import GraspTolerances
from ..core.errors import InputError

__all__ = [
    'CaptureGoal',
    'CaptureFeedback',
    'CaptureRefused',
    'SUCCESSFUL',
    'INVALID_GOAL',
    'OUT_OF_REACH',
    'TOO_FAST',
    'TIMED_OUT',
    'FAULT',
    'RESULT_CODES',
]

#: result codes (the Capture action's)
SUCCESSFUL, INVALID_GOAL, OUT_OF_REACH, TOO_FAST, TIMED_OUT, FAULT = 0, -1, -2, -3, -4, -5
RESULT_CODES = {
    SUCCESSFUL: 'successful',
    INVALID_GOAL: 'invalid goal',
    OUT_OF_REACH: 'out of reach',
    TOO_FAST: 'too fast',
    TIMED_OUT: 'timed out',
    FAULT: 'fault',
}

CaptureFeedback = namedtuple(
    'CaptureFeedback', 'time phase distance angle relative_twist sigma message'
)
CaptureFeedback.__doc__ = """One tick of a capture: ``time`` [s] (control time), ``phase``;
``distance`` [m] and ``angle`` [rad] from the end effector to the grasp frame; ``relative_twist``
(6,) [angular; linear] of the end effector relative to the fixture at its point, world [rad/s,
m/s]; ``sigma``: the share of the approach's relative pose left (1 .. 0; 0 from the grasp time on);
``message``: the laws' notes (saturations), '' if none."""


class CaptureRefused(GoalError):
    """Why a capture is refused before any attempt (``message``), with its result ``code``."""


_ids = itertools.count(1)


def _positive(name, value, zero=False):
    v = float(value)
    if not np.isfinite(v) or v < 0 or (v == 0 and not zero):
        raise InputError(
            f'capture goal {name}: expected a time {">=" if zero else ">"} 0 s, got {value!r}'
        )
    return v


@dataclass(eq=False)
class CaptureGoal:
    """
    A capture of a target's fixture (see the module docstring).

    ``target``: the target's name (it must be the one the capture was built for); ``fixture``:
    its fixture's name ('' = the target's); ``tolerances``: a
    :class:`~spart_ros.control.grasp.GraspTolerances`; ``approach_time`` [s]: the approach's
    duration (0: the planner chooses, at least ``min_approach_time`` of the capture);
    ``approach_timeout`` [s]: the longest approach the planner may choose;
    ``synchronise_timeout``, ``grasp_timeout``, ``detumble_timeout`` [s]: how long each phase may
    last; ``standoff`` [m]: the approach's stand-off distance (0: straight in).  Set by the
    capture: ``status``, ``message``, ``error_code``, ``phase``, ``feedback`` (the last
    :data:`CaptureFeedback`), ``plan`` (the
    :data:`~spart_ros.control.capture_planning.CapturePlan`), ``id``, ``started`` (the time each
    phase started, {phase: t}).
    """

    target: str = ''
    fixture: str = ''
    tolerances: GraspTolerances = field(default_factory=GraspTolerances)
    approach_time: float = 0.0
    approach_timeout: float = 30.0
    synchronise_timeout: float = 5.0
    grasp_timeout: float = 2.0
    detumble_timeout: float = 60.0
    standoff: float = 0.0
    status: str = PENDING
    message: str = ''
    error_code: int = SUCCESSFUL
    phase: str = ''
    feedback: object = None
    plan: object = None
    id: int = field(default_factory=lambda: next(_ids))
    started: dict = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.tolerances, GraspTolerances):
            raise InputError(
                f'capture goal tolerances: expected GraspTolerances, got {self.tolerances!r}'
            )
        self.approach_time = _positive('approach_time', self.approach_time, zero=True)
        for name in ('approach_timeout', 'synchronise_timeout', 'grasp_timeout'):
            setattr(self, name, _positive(name, getattr(self, name)))
        self.detumble_timeout = _positive('detumble_timeout', self.detumble_timeout)
        self.standoff = _positive('standoff', self.standoff, zero=True)
        if self.approach_time > self.approach_timeout:
            raise InputError(
                f'capture goal: approach_time {self.approach_time:g} s is longer than '
                f'approach_timeout {self.approach_timeout:g} s'
            )

    @property
    def done(self):
        return self.status in DONE

    def timeout(self, phase):
        """Return the timeout [s] of ``phase`` (inf for a phase without one)."""
        return {
            'synchronise': self.synchronise_timeout,
            'grasp': self.grasp_timeout,
            'detumble': self.detumble_timeout,
        }.get(phase, np.inf)

    def _finish(self, status, message='', code=None):
        if not self.done:
            self.status, self.message = status, message
            default = INVALID_GOAL if status in (PREEMPTED, ABORTED) else SUCCESSFUL
            self.error_code = default if code is None else code

    def _start(self):
        self.status, self.message = ACTIVE, ''


#: the statuses of a goal (as :mod:`.goals`)
STATUSES = (PENDING, ACTIVE, SUCCEEDED, PREEMPTED, ABORTED, CANCELED)
