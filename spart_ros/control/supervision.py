"""
Whether a controller may command at this tick, and what goes out when it may not (pure Python).

The :class:`Supervisor` is the first unit a tick meets (docs/controller.md, "How the controller
is built").  It holds the :class:`~spart_ros.control.safety.CommandGate` (enabled or not,
halted or commanding, the counters) and the rules about the inputs:

- answer each joint-state stamp once (event-driven: a lockstep plant that republishes a state it
  waits on gets one answer; a repeated stamp only runs the watchdog), unless the answer reached
  no subscriber (:meth:`Supervisor.undelivered`);
- the inputs must be there, fresh (``state_timeout``) and finite: else ONE all-zero command, then
  silence until a tick computes again (the gate's rule);
- a stall: a state stamped more than ``state_timeout`` after the last command means the plant
  ran that long on it while this controller did not run: a halt that ends at this tick, without
  the zero command (the rules after a halt apply: :mod:`.continuity`);
- a tick that fails (a law raising on a singular state, anything unexpected) halts like a
  rejected input.

It never computes a command: :meth:`Supervisor.admit` says :data:`COMPUTE`, or gives the tick's
answer (a zero :data:`~spart_ros.control.tick.Command` or None).
"""

import math
import traceback

import numpy as np

from .safety import all_finite, CommandGate, ZERO
from .settings import ControllerSettings
from .tick import Command
from ..core.errors import SpartError
from ..native.compiled import call as _call
from ..native.compiled import input_problem as _input_problem
from ..native.compiled import KINDS

_K_INPUTS = KINDS['input_problem']
_NO_TIMES = np.zeros(0)

__all__ = ['Supervisor', 'COMPUTE']

#: :meth:`Supervisor.admit`'s answer when the tick may compute a command
COMPUTE = 'compute'


class Supervisor:
    """
    The gate and the input rules of one controller (see the module docstring).

    ``notify(level, key, text)``: where events go; ``reason``: the gate's reason before the first
    configuration (the controller's state then).  ``settings`` (set by the controller):
    ``event_driven``, ``state_timeout``, ``floating``.  :meth:`bind` gives it the command joints
    of a :class:`~spart_ros.control.controlled_robot.ControlledRobot`.  ``efforts`` (m,): the
    last command sent.
    """

    def __init__(self, notify, reason):
        self._notify = notify
        self.settings = None
        self.gate = CommandGate(ControllerSettings.state_timeout, enabled=False)
        self.gate.reason = reason
        self.unbind()
        self.reset_run()

    # -- the model and the run -----------------------------------------------------------
    def bind(self, robot):
        """Take the command joints of ``robot`` (a ControlledRobot; None: :meth:`unbind`)."""
        if robot is None:
            self.unbind()
            return
        self._index, self._every_joint = robot.index, robot.every_joint
        self._zeros_q = np.zeros(len(robot.q_names))
        self._zero = robot.zero
        self.efforts = np.zeros(len(robot.joint_names))
        self._checked_base = None

    def unbind(self):
        """No model: no command joints."""
        self._index = np.zeros(0, dtype=np.intp)
        self._every_joint = False
        self._zeros_q, self._zero3, self._checked_base = np.zeros(0), np.zeros(3), None
        self._zero = np.zeros(0)
        self.efforts = np.zeros(0)

    def reset_run(self):
        """Per activation: no stamp answered or seen yet."""
        self._answered = self._stamp_seen = self._stamp_changed = None
        self._stamp = None  # the stamp this tick answers (None: ticks on a timer)

    @property
    def recovering(self):
        """Whether this tick ends a halt that followed commanding (not an activation's)."""
        return self.gate.recovering

    # -- a tick ----------------------------------------------------------------------------
    def admit(self, inputs, t, last_t, stopped):
        """
        Return :data:`COMPUTE` if this tick may command, else its answer (a zero Command or None).

        ``inputs``: :data:`~spart_ros.control.tick.ControlInputs`; ``t`` control time (s);
        ``last_t``: control time of the last command (None: none since the hold was set);
        ``stopped``: a fault stopped the commands (a law without a position hold).  Call only
        while active with a model.
        """
        s = self.settings
        stamp = self._stamp = inputs.stamp if s.event_driven else None
        if stamp is not None:
            if stamp != self._stamp_seen:
                self._stamp_seen, self._stamp_changed = stamp, inputs.now
            if stamp == self._answered:  # answered already (a lockstep plant republishing)
                return self.check(inputs)
        state = inputs.state
        if not self._fit(inputs, state):  # the tests below, compiled (0: every one passes)
            problem = self._problem(inputs)
            if problem is not None:
                out = self.stop(problem)
                if out is not None:
                    self._answered = stamp
                return out
            if not (
                all_finite(state.q, self._zeros_q)
                and all_finite(state.qd, self._zeros_q)
                and (state.base is self._checked_base or self._finite_base(state.base))
            ):
                out = self.reject('state', 'not finite (NaN or infinity)')
                self._answered = stamp if out is not None else self._answered
                return out
        if stopped:
            self._answered = stamp
            return None  # stopped by the fault until cleared
        if (
            s.event_driven
            and not self.gate.halted
            and last_t is not None
            and t - last_t > s.state_timeout
        ):
            self._unsupervised(t - last_t)
        return COMPUTE

    def _fit(self, inputs, state):
        """
        Return True when the inputs pass every test of :meth:`admit` (one compiled call).

        False: one fails, or they are of types the kernel does not take (then admit's numpy
        tests say which and why).
        """
        if inputs.unavailable or state is None:
            return False
        base = state.base
        if not (base is self._checked_base or self.settings.floating):
            return False  # a fixed base not checked yet
        jt, base_time = inputs.joint_times, inputs.base_time
        code = _call(
            _input_problem,
            _K_INPUTS,
            state.q,
            state.qd,
            self._zeros_q.shape[0],
            _NO_TIMES if jt is None else jt,
            self._index,
            self._every_joint,
            float(inputs.now),
            self.gate.state_timeout,
            0.0 if base_time is None else float(base_time),
            base_time is not None,
        )
        return code == 0

    def commanded(self, values):
        """Record that the command ``values`` of this tick went out (its stamp is answered)."""
        self.gate.commanded()
        self._answered = self._stamp
        self.efforts = values

    def answered(self):
        """Record that this tick's answer is a stop (its stamp is answered)."""
        self._answered = self._stamp

    def undelivered(self):
        """
        Record that this tick's command reached no subscriber: no stamp is answered.

        A lockstep plant whose commands subscription has not matched yet (discovery at start-up)
        never gets the answer and republishes the state it waits on: that copy is answered.
        """
        self._answered = None

    def _finite_base(self, base):
        """
        Return the base state finite.

        A fixed base's is checked once (the same object every tick); a moving base's is not checked
        per tick: a NaN or infinity in it makes the efforts non-finite, which the efforts' check
        refuses (the tick halts like a failing law).
        """
        if self.settings.floating:
            return True
        z = self._zero3
        if (
            all_finite(base.p_b, z)
            and all_finite(base.v_b, z)
            and all_finite(base.w_b, z)
            and all_finite(base.R_b[0], z)
            and all_finite(base.R_b[1], z)
            and all_finite(base.R_b[2], z)
        ):
            self._checked_base = base
            return True
        return False

    def _unsupervised(self, gap):
        """
        Handle a stall: the plant's time ran ``gap`` s past state_timeout since the last command.

        This controller did not run (a stalled process; the watchdog did not either): the plant
        applied that command meanwhile, and as after a halt the robot may be anywhere near the
        reference. The same rules as after a halt, whichever callback runs first after the stall
        (the watchdog's zero command, or this state): resume on the reference within
        resume_tolerance, else hold the measured pose.
        """
        why = (
            f'the plant ran {gap:.3f} s on the last command (state_timeout '
            f'{self.settings.state_timeout:g} s): this controller did not answer its states '
            'meanwhile (a stalled process?)'
        )
        self._notify('warning', 'unsupervised', why)
        self.gate.unsupervised(why)

    # -- stops -----------------------------------------------------------------------------
    def check(self, inputs):
        """
        Run the watchdog between ticks on ``inputs`` (a ControlInputs).

        Return the zero Command once when the inputs went stale, else None.
        """
        if self.gate.halted:
            return None
        problem = self._problem(inputs, watchdog=True)
        if problem is None:
            return None
        return self.stop(problem)

    def reject(self, what, error):
        """
        Halt on a rejected input (``what``: which input, ``error``: why it was rejected).

        Return the zero Command if commanding, else None.
        """
        if self.gate.reject(f'{what} rejected: {error}') == ZERO:
            return self.zero_command()
        return None

    def stop(self, problem, timeout=True):
        """
        Halt for ``problem`` (a sentence; ``timeout``: count the halt as a timeout).

        Return the zero Command if commanding, else None.
        """
        if self.gate.decide(problem, timeout) == ZERO:
            self._notify('warning', 'halt', f'commands stopped (one zero command sent): {problem}')
            return self.zero_command()
        return None

    def zero_if_pending(self):
        """After disabling the gate: return the zero Command if a command may still be applied."""
        return self.zero_command() if self.gate.decide(None) == ZERO else None

    def zero_command(self):
        """Return the all-zero stop Command (and remember it as the last efforts sent)."""
        self.efforts = self._zero
        return Command(self._zero, True, None, None, None)

    def failed(self, err):
        """
        Halt like a rejected input after a tick that cannot compute.

        A tick cannot compute on a law failing on a non-finite or singular state, or on an
        unexpected error (``err``: the exception). Return the zero Command if it was commanding.
        """
        unexpected = not isinstance(err, SpartError)
        text = f'unexpected {type(err).__name__}: {err}' if unexpected else str(err)
        zero = self.gate.reject(f'control law: {text}') == ZERO if self.gate.enabled else False
        self._notify(
            'warning',
            ('law', text),
            f'control law failed: {text}'
            + ('; one zero command sent' if zero else '; commands stay stopped')
            + ('\n' + traceback.format_exc() if unexpected else ''),
        )
        if zero:
            self._answered = self._stamp_seen
            return self.zero_command()
        return None

    # -- the inputs ------------------------------------------------------------------------
    def _problem(self, inputs, watchdog=False):
        """Why the inputs are not fit to command now, or None."""
        if inputs.unavailable:
            return inputs.unavailable
        if inputs.state is None:
            return 'no state'
        jt = inputs.joint_times
        times = (
            (jt if self._every_joint else jt[self._index])
            if jt is not None and len(self._index)
            else None
        )
        stamp_time = None
        if (
            watchdog
            and self.settings.event_driven
            and inputs.stamp is not None
            and inputs.stamp == self._answered
        ):
            stamp_time = self._stamp_changed
        problem = self.gate.problem(
            inputs.now, times if times is not None else (), inputs.base_time, stamp_time
        )
        if (
            problem is not None
            and stamp_time is not None
            and 'stamp has not advanced' in problem
            and tuple(inputs.stamp) == (0, 0)
        ):
            problem += (
                '; the joint states are unstamped (stamp 0): tick on a timer (rate > 0) instead'
            )
        return problem

    def state_age(self, inputs):
        """Return the age (s, steady clock) of the oldest of ``inputs`` a command needs (or -1)."""
        if inputs.joint_times is None or not len(self._index):
            return -1.0
        times = [float(x) for x in inputs.joint_times[self._index]]
        if inputs.base_time is not None:
            times.append(float(inputs.base_time))
        if (
            self.settings.event_driven
            and inputs.stamp is not None
            and self._stamp_changed is not None
            and inputs.stamp == self._answered
        ):
            times.append(self._stamp_changed)
        if any(math.isnan(x) for x in times):
            return -1.0
        return inputs.now - min(times)
