"""
The controller's states and its transition table (pure data, no ROS).

:class:`~spart_ros.control.controller.Controller` is in one of :data:`STATES`;
:data:`TRANSITIONS` lists every change of state it makes, with what causes it and whether it
sends one all-zero command on the way.  test/test_controller_state_machine.py checks, over random
event sequences, that every change the controller makes is a row of this table, and the
documentation's state diagram is drawn from it.
"""

from collections import namedtuple

__all__ = [
    'STATES',
    'COMMANDING',
    'TRANSITIONS',
    'Transition',
    'UNCONFIGURED',
    'INACTIVE',
    'HALTED',
    'HOLDING',
    'TRACKING',
    'FAULT',
    'FINALIZED',
    'allowed',
]

UNCONFIGURED, INACTIVE, HALTED, HOLDING, TRACKING, FAULT, FINALIZED = (
    'unconfigured',
    'inactive',
    'halted',
    'holding',
    'tracking',
    'fault',
    'finalized',
)
#: every state, in the order of the lifecycle
STATES = (UNCONFIGURED, INACTIVE, HALTED, HOLDING, TRACKING, FAULT, FINALIZED)
#: states in which commands go out
COMMANDING = (HOLDING, TRACKING, FAULT)

Transition = namedtuple('Transition', 'source event target zero')
Transition.__doc__ = """One change of state: from ``source`` to ``target`` on ``event`` (in words:
a call of the controller, or what a tick finds); ``zero``: one all-zero command is sent on the
way (True), or only when a command may still be applied (None: a stop from a state that may not
be commanding), or none (False)."""

_ACTIVE = (HALTED, HOLDING, TRACKING, FAULT)

#: every change of state of the controller
TRANSITIONS = (
    Transition(UNCONFIGURED, 'configure', INACTIVE, False),
    Transition(INACTIVE, 'cleanup', UNCONFIGURED, False),
    Transition(INACTIVE, 'activate', HALTED, False),
    Transition(HALTED, 'a fresh, valid state (hold the measured pose)', HOLDING, False),
    Transition(
        HALTED, 'a fresh, valid state within resume_tolerance of the reference', TRACKING, False
    ),
    Transition(HOLDING, 'a trajectory or an end-effector reference starts', TRACKING, False),
    Transition(
        TRACKING,
        'the trajectory ends, is canceled or aborted; a reset notice or a jump',
        HOLDING,
        False,
    ),
    *(
        Transition(s, 'a stale or invalid input, a failing law', HALTED, True)
        for s in (HOLDING, TRACKING)
    ),
    *(
        Transition(s, 'tracking error > max_tracking_error', FAULT, False)
        for s in (HOLDING, TRACKING)
    ),
    Transition(
        FAULT, 'clear_fault (~/enable true), or a reset notice that caused it', HOLDING, False
    ),
    Transition(FAULT, 'the same while an input is stale or invalid', HALTED, False),
    *(Transition(s, 'deactivate, or a new robot model', INACTIVE, None) for s in _ACTIVE),
    *(Transition(s, 'shutdown', FINALIZED, None) for s in (UNCONFIGURED, INACTIVE, *_ACTIVE)),
)


def allowed(source, target):
    """Return the rows of :data:`TRANSITIONS` from ``source`` to ``target`` (empty: none)."""
    return [t for t in TRANSITIONS if t.source == source and t.target == target]
