"""
The safety layer (spart_ros.control.safety).

One zero command then silence on stale or bad input, on a failing law and on disable, commands
again on fresh data; effort limits and clamping.
"""

import math
import warnings

import numpy as np
import pytest
from spart_ros.control.safety import (
    clamp_efforts,
    COMMAND,
    CommandGate,
    effort_limits,
    SILENT,
    ZERO,
)
from spart_ros.core.errors import InputError

NAN = float('nan')


def test_watchdog_one_zero_then_silence_then_recovery():
    g = CommandGate(0.1)
    assert g.decide('waiting') == SILENT  # nothing commanded yet: no zero command either
    fresh = g.problem(10.0, [9.95, 9.99])
    assert (
        fresh is None and g.decide(fresh) == COMMAND and g.halted
    )  # permitted, not yet commanding
    g.commanded()
    assert not g.halted and g.commands == 1 and g.recoveries == 0 and not g.recovering
    stale = g.problem(10.0, [9.85, 9.99])  # the oldest command joint decides
    assert 'joint states are 0.150 s old (state_timeout 0.1 s)' in stale
    assert [g.decide(stale) for _ in range(3)] == [ZERO, SILENT, SILENT]
    assert g.halted and g.recovering and g.timeouts == 1 and g.reason == stale
    assert g.decide(None) == COMMAND and g.recovering
    g.commanded()
    assert not g.halted and not g.recovering and g.recoveries == 1 and g.commands == 2
    assert g.problem(10.0, [NAN, 9.99]) == 'waiting for joint states of every command joint'
    assert 'base state is 0.500 s old' in g.problem(10.0, [9.99], base_time=9.5)
    assert g.problem(10.0, [9.99], base_time=NAN) == 'waiting for the base state (odometry)'
    assert g.problem(10.0, [9.99], base_time=9.95) is None
    # event-driven ticks: fresh messages whose stamp stopped advancing (unstamped joint states)
    assert 'stamp has not advanced for 0.200 s' in g.problem(10.0, [9.99], stamp_time=9.8)
    assert g.problem(10.0, [9.99], stamp_time=9.95) is None


def test_rejected_input_halts_without_counting_a_timeout():
    g = CommandGate(0.1)
    assert g.decide(None) == COMMAND
    g.commanded()
    assert g.reject('joint_states rejected: NaN') == ZERO and g.reject('again') == SILENT
    assert g.rejected == 2 and g.timeouts == 0 and g.zeros == 1
    assert g.decide(None) == COMMAND


def test_a_law_that_keeps_failing_gives_one_zero_then_silence():
    """
    Each tick: decide (fit data), compute, and the law fails.

    C Z then nothing, the counters count what went out.
    """
    g = CommandGate(0.1)
    out = []
    for tick in range(10):
        decision = g.decide(None)
        assert decision == COMMAND
        if tick == 0:
            g.commanded()
            out.append('C')
        else:
            out.append({ZERO: 'Z', SILENT: '-'}[g.reject('control law: singular')])
    assert ''.join(out) == 'CZ--------'
    assert g.commands == 1 and g.zeros == 1 and g.halted and g.recovering
    assert g.decide(None) == COMMAND
    g.commanded()  # the law computes again
    assert g.commands == 2 and g.recoveries == 1 and not g.halted


def test_enable_disable():
    g = CommandGate(0.1, enabled=False)
    assert g.decide(None) == SILENT and g.reason == 'disabled'
    assert g.enable() is True and g.enable() is False
    assert g.decide(None) == COMMAND
    g.commanded()
    g.disable()
    assert [g.decide(None) for _ in range(3)] == [ZERO, SILENT, SILENT]
    g.disable()  # already disabled: no second zero
    assert g.decide(None) == SILENT
    g.enable()
    assert not g.recovering  # an enable is not a recovery (no resume)
    assert g.decide('stale') == SILENT  # enabled, no fresh data yet: nothing to stop
    g.disable()  # nothing commanded since: no zero either
    assert g.decide(None) == SILENT
    g.enable()
    g.decide(None)
    g.commanded()
    assert g.decide('stale') == ZERO
    g.disable()  # the zero is out already: not twice
    assert g.decide(None) == SILENT and g.zeros == 2


def test_effort_limits_and_clamping():
    limits = effort_limits(['a', 'b'], {'a': 10.0, 'b': math.inf})
    assert limits.tolist() == [10.0, math.inf]
    np.testing.assert_array_equal(clamp_efforts([25.0, -1e9], limits), [10.0, -1e9])
    assert effort_limits(['a', 'b'], {}, override=[5.0]).tolist() == [5.0, 5.0]
    assert effort_limits(['a', 'b'], {}, override=[5.0, 6.0]).tolist() == [5.0, 6.0]
    with pytest.raises(InputError, match='one value per command joint'):
        effort_limits(['a', 'b'], {}, override=[1.0, 2.0, 3.0])
    with pytest.raises(InputError, match='must be > 0'):
        effort_limits(['a'], {}, override=[0.0])
    with pytest.raises(InputError, match='non-finite effort for command joint 1'):
        clamp_efforts([1.0, NAN], limits)
    # finite efforts whose sum overflows are clamped (each is checked, not the sum), silently
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        np.testing.assert_array_equal(
            clamp_efforts([1e308, 1e308], np.array([10.0, 20.0])), [10.0, 20.0]
        )
        with pytest.raises(InputError, match='non-finite effort for command joint 1'):
            clamp_efforts([1e308, math.inf], np.array([10.0, 20.0]))
    with pytest.raises(InputError, match='state_timeout'):
        CommandGate(0.0)
