"""
The safety layer between a control law and the motors (pure Python, no ROS).

ros2_control's effort controllers apply the last command they received for as long as they
run: they have no timeout.  So the publisher of commands must itself stop commanding when its
inputs go stale or bad, and must leave the motors at zero effort when it does.  The
:class:`CommandGate` is that decision, made once per control tick:

- ``COMMAND``: enabled, and the state is complete, finite and fresh: compute, then report
  :meth:`CommandGate.commanded` when the command went out, or :meth:`CommandGate.reject` when
  the computation failed (so a law that keeps failing gives one zero command, not one per tick);
- ``ZERO``: publish ONE all-zero command, then stay silent: on disable (if a command may still
  be applied), and on the first tick with a problem (stale or missing joint states, a joint-state
  stamp that stopped advancing, stale base state, a rejected input, a failed computation);
- ``SILENT``: publish nothing (disabled, or still halted by the same or another problem).

Fresh data after a problem resumes commanding on the next tick that computes (counted as a
recovery; :attr:`CommandGate.recovering` tells the caller that a halt, not an enable, ends).
:func:`clamp_efforts` bounds every effort to its limit and refuses non-finite values.
"""

import math

import numpy as np

from ..core.errors import InputError

__all__ = [
    'CommandGate',
    'all_finite',
    'clamp_efforts',
    'effort_limits',
    'COMMAND',
    'ZERO',
    'SILENT',
]

COMMAND, ZERO, SILENT = 'command', 'zero', 'silent'


def effort_limits(joints, limits_by_name, override=()):
    """
    Return (n,) effort limits of ``joints``.

    ``override`` (one value per joint, or one for all, or empty) when given, else the URDF ``<limit
    effort>`` of each (``limits_by_name``: name -> limit, inf when the URDF gives none). Values
    must be > 0.
    """
    override = [float(x) for x in override]
    if override:
        if len(override) not in (1, len(joints)):
            raise InputError(
                f'effort_limits: expected one value per command joint ({len(joints)}: '
                f'{list(joints)}) or one for all, got {len(override)}'
            )
        limits = np.array(override * len(joints) if len(override) == 1 else override)
    else:
        limits = np.array([limits_by_name[j] for j in joints], dtype=float)
    if np.any(np.isnan(limits)) or np.any(limits <= 0):
        raise InputError(f'effort_limits: every limit must be > 0, got {limits.tolist()}')
    return limits


def all_finite(a, zeros):
    """
    Return whether every value of the vector ``a`` is finite, in one dot product.

    ``zeros``: zeros of ``a``'s length.  a . 0 is NaN when one value is NaN or infinite, else 0 (a
    tenth of the cost of ``isfinite(a).all()`` on a short vector: it runs at every tick).
    """
    return np.dot(a, zeros) == 0.0


def clamp_efforts(efforts, limits, out=None):
    """
    Return ``efforts`` (n,) clamped to [-limits, limits] (into ``out``).

    InputError naming the first non-finite effort (a command must never carry NaN or inf). Finite
    efforts of any size are clamped (their sum may overflow: each is checked, not the sum).
    """
    efforts = np.asarray(efforts, dtype=float)
    finite = np.isfinite(efforts)
    if not finite.all():
        bad = int(np.flatnonzero(~finite)[0])
        raise InputError(
            f'the law gave a non-finite effort for command joint {bad}: {efforts[bad]}'
        )
    return np.clip(efforts, -limits, limits, out=out)


class CommandGate:
    """
    Enable/disable state and the watchdog of one controller (see the module docstring).

    ``state_timeout`` (s): joint states (and a moving base's state) older than this stop the
    commands; ``enabled``: start enabled.  Counters: ``timeouts`` (ticks that halted on stale or
    missing data),
    ``rejected`` (inputs rejected as invalid, failed computations), ``recoveries`` (halts
    ended by a command), ``commands`` (commands that went out), ``zeros``.
    """

    def __init__(self, state_timeout, enabled=True):
        if not state_timeout > 0 or not math.isfinite(state_timeout):
            raise InputError(
                f'state_timeout must be a finite number of seconds > 0, got {state_timeout}'
            )
        self.state_timeout = float(state_timeout)
        self.enabled = bool(enabled)
        self.halted = True  # until the first complete state: nothing commanded yet
        self.recovering = False  # halted by a problem after commanding (not by enable)
        self.reason = 'waiting for the first complete state' if enabled else 'disabled'
        self._pending_zero = False
        self.timeouts = self.rejected = self.recoveries = self.commands = self.zeros = 0

    # -- enable / disable ----------------------------------------------------------------
    def enable(self):
        """
        Enable (returns True if it was disabled: the caller then sets the hold reference).

        Commands start with the next fit state.
        """
        was = self.enabled
        self.enabled = True
        if not was:
            self.halted, self.recovering, self.reason = (
                True,
                False,
                'waiting for a complete, fresh state',
            )
        return not was

    def disable(self, reason='disabled'):
        """
        Disable (``reason``: why): the next tick publishes one zero command, then nothing.

        The zero command only if a command may still be applied (enabled and not already halted by
        a zero).
        """
        if self.enabled and not self.halted:
            self._pending_zero = True
        self.enabled = False
        self.halted, self.recovering = True, False
        self.reason = reason

    # -- watchdog -------------------------------------------------------------------------
    def problem(self, now, joint_times, base_time=None, stamp_time=None):
        """
        Return why the state is not fit to command, or None.

        ``joint_times`` (receipt times, s, of each command joint's last state; NaN = never
        received), ``base_time`` (receipt time of the base state, None for a fixed base, NaN =
        never), ``stamp_time`` (when the joint-state stamp last changed, for a controller that
        answers each new stamp; None = not checked), all on the clock of ``now``.
        """
        joint_times = np.asarray(joint_times, dtype=float)
        if joint_times.size:
            oldest = float(joint_times.min())  # NaN when one never came (one reduction per tick)
            if oldest != oldest:
                return 'waiting for joint states of every command joint'
            age = now - oldest
            if age > self.state_timeout:
                return f'joint states are {age:.3f} s old (state_timeout {self.state_timeout:g} s)'
        if stamp_time is not None:
            age = now - stamp_time
            if age > self.state_timeout:
                return (
                    f'the joint_states stamp has not advanced for {age:.3f} s (state_timeout '
                    f'{self.state_timeout:g} s)'
                )
        if base_time is not None:
            if math.isnan(base_time):
                return 'waiting for the base state (odometry)'
            age = now - base_time
            if age > self.state_timeout:
                return (
                    f'the base state is {age:.3f} s old (state_timeout {self.state_timeout:g} s)'
                )
        return None

    def reject(self, reason):
        """
        Halt until a tick computes again: return ZERO the first time, then SILENT.

        An input was rejected (non-finite, wrong lengths...) or a tick failed to compute:
        ``reason`` says which.
        """
        self.rejected += 1
        return self.decide(reason, timeout=False)

    def unsupervised(self, reason):
        """
        Halt for this tick: the plant applied the last command longer than the state timeout.

        No new command came (the controller did not run: a stalled process). The halt ends at this
        tick (:attr:`recovering`; counted as a timeout), without the zero command: this tick
        computes the next command.  ``reason``: the stall, in words.
        """
        self.reason = reason
        self.halted = self.recovering = True
        self.timeouts += 1

    def decide(self, problem, timeout=True):
        """
        Return COMMAND, ZERO or SILENT for this tick, given ``problem`` (None = fit to command).

        ``timeout``: count a halt as a timeout (stale or missing data). COMMAND only permits
        computing: call :meth:`commanded` once the command went out (or :meth:`reject`).
        """
        if not self.enabled:
            if self._pending_zero:
                self._pending_zero = False
                self.zeros += 1
                return ZERO
            return SILENT
        if problem is not None:
            self.reason = problem
            if self.halted:
                return SILENT
            self.halted = self.recovering = True
            self.timeouts += int(timeout)
            self.zeros += 1
            return ZERO
        return COMMAND

    def commanded(self):
        """Record that a command went out: commanding (again)."""
        if self.halted:
            self.recoveries += int(self.recovering)
            self.halted = self.recovering = False
        self.reason = ''
        self.commands += 1
