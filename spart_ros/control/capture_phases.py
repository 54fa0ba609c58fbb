"""
The phases of a capture and their transition table (pure data and one small machine, no ROS).

A capture goes through :data:`PHASES`:

=================  ================================================================================
``approach``       the end effector moves onto the fixture's predicted motion (the relative pose
                   shrinks to zero at the planned grasp time)
``synchronise``    it moves with the fixture; waits until the grasp criteria hold for their dwell
``grasp``          the capture event: the gripper closes (a weld in the plant); the end effector
                   keeps moving with the fixture until the attachment is reported
``detumble``       the robot carries the target (its model too): the arm compliant, the base's
                   actuators absorb the momentum, until every rate is at rest
``done``           at rest with the target held (the goal succeeded)
``aborted``        stopped: a fault or a timeout (one zero command: the motors limp), or a cancel
                   (no command: the controller holds)
=================  ================================================================================

:data:`TRANSITIONS` lists every change of phase, its cause (``key``, and ``event`` in words) and
whether one all-zero command goes out on the way (``zero``).  Before a goal, and once a capture has
ended, the machine is :data:`IDLE`.  test/test_capture_phases.py checks over random event
sequences (hypothesis) that every change is a row of the table, and the documentation can draw
it.
"""

from collections import namedtuple

from ..core.errors import InputError

__all__ = [
    'PHASES',
    'ACTIVE_PHASES',
    'TRANSITIONS',
    'CaptureTransition',
    'CapturePhases',
    'IDLE',
    'APPROACH',
    'SYNCHRONISE',
    'GRASP',
    'DETUMBLE',
    'DONE',
    'ABORTED',
    'EVENTS',
]

IDLE = 'idle'
APPROACH, SYNCHRONISE, GRASP, DETUMBLE, DONE, ABORTED = (
    'approach',
    'synchronise',
    'grasp',
    'detumble',
    'done',
    'aborted',
)
#: the phases of a capture, in order
PHASES = (APPROACH, SYNCHRONISE, GRASP, DETUMBLE, DONE, ABORTED)
#: the phases in which the capture commands the robot
ACTIVE_PHASES = (APPROACH, SYNCHRONISE, GRASP, DETUMBLE)
#: before the grasp: a capture may be preempted or canceled without a target held
_BEFORE_GRASP = (APPROACH, SYNCHRONISE)

CaptureTransition = namedtuple('CaptureTransition', 'source key event target zero')
CaptureTransition.__doc__ = """One change of phase: from ``source`` to ``target`` on the event
``key`` (``event``: what causes it, in words); ``zero``: one all-zero command is sent on the
way."""

#: every change of phase
TRANSITIONS = (
    CaptureTransition(IDLE, 'accept', 'a capture goal is accepted (feasible)', APPROACH, False),
    CaptureTransition(
        APPROACH, 'path_end', 'the approach path ends (the planned grasp time)', SYNCHRONISE, False
    ),
    CaptureTransition(
        SYNCHRONISE,
        'grasp_criteria',
        'the grasp criteria have held for their dwell time',
        GRASP,
        False,
    ),
    CaptureTransition(
        GRASP, 'attached', 'the attachment is made (the plant reports the weld)', DETUMBLE, False
    ),
    CaptureTransition(
        DETUMBLE, 'at_rest', 'every rate has been at rest for the dwell time', DONE, False
    ),
    *(
        CaptureTransition(
            s,
            'fault',
            'a fault: the estimate stale, a joint beyond its limits, the law failing, the '
            'controller stopping',
            ABORTED,
            True,
        )
        for s in ACTIVE_PHASES
    ),
    *(
        CaptureTransition(s, 'timeout', 'the phase took longer than its timeout', ABORTED, True)
        for s in (SYNCHRONISE, GRASP, DETUMBLE)
    ),
    *(
        CaptureTransition(s, 'cancel', 'the client cancels (the controller holds)', ABORTED, False)
        for s in ACTIVE_PHASES
    ),
    *(
        CaptureTransition(
            s,
            'preempt',
            'a new capture goal replaces this one (before the grasp)',
            APPROACH,
            False,
        )
        for s in _BEFORE_GRASP
    ),
    *(
        CaptureTransition(s, 'reset', 'the next goal (nothing held)', IDLE, False)
        for s in (DONE, ABORTED)
    ),
)
#: the event keys of the table
EVENTS = tuple(dict.fromkeys(t.key for t in TRANSITIONS))


class CapturePhases:
    """
    The phase of one capture, changed only along :data:`TRANSITIONS`.

    ``phase`` (starts :data:`IDLE`); ``history``: the rows taken, in order.
    """

    def __init__(self):
        self.phase = IDLE
        self.history = []

    def can(self, key):
        """Return the row taken on event ``key`` from the current phase, or None."""
        for row in TRANSITIONS:
            if row.source == self.phase and row.key == key:
                return row
        return None

    def fire(self, key):
        """
        Take the row of event ``key`` from the current phase; return it.

        InputError naming the phase and the event when the table has no such row.
        """
        row = self.can(key)
        if row is None:
            if key not in EVENTS:
                raise InputError(f'capture event: expected one of {list(EVENTS)}, got {key!r}')
            raise InputError(f'capture: no {key!r} in phase {self.phase!r}')
        self.phase = row.target
        self.history.append(row)
        return row
