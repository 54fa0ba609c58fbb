"""
When the joint reference stops describing the robot, and what is held then (pure Python).

:class:`Continuity` applies, before the law of each tick, the rules of docs/controller.md
("Resets, jumps and stalls: which rule applies"), in this order: the control clock going back,
the first state after an announced plant reset (:meth:`Continuity.plant_reset`, matched to the
state by its stamp, whichever comes first), the first state after a halt or a stall (resume on the
reference within ``resume_tolerance``, else hold the measured pose), a jump of the measured state
that its velocities cannot explain (``jump_tolerance``), an activation or a cleared fault (hold the
pose measured now).  Then the tracking fault: an error beyond ``max_tracking_error`` holds the
measured pose (or stops a law without a position hold) until the fault is cleared.

Dropping the reference aborts the goals (:class:`~spart_ros.control.goal_manager.GoalManager`);
setting a hold starts a pending goal from it.
"""

import numpy as np

from .goals import PATH_TOLERANCE_VIOLATED
from ..native.compiled import call as _call
from ..native.compiled import jump_excess as _jump_excess
from ..native.compiled import KINDS
from ..native.compiled import largest_excess as _largest_excess

_K_JUMP, _K_EXCESS = KINDS['jump_excess'], KINDS['largest_excess']

__all__ = ['Continuity']

#: s: two control times closer than this are the same stamp (stamps are integer nanoseconds)
STAMP_EPS = 5e-10


class Continuity:
    """
    The reset, jump, resume and fault rules of one controller (see the module docstring).

    ``reference``: the JointReference; ``goals``: the GoalManager; ``counts``: the controller's
    counters ('faults', 'resets', 'jumps' are counted here); ``notify(level, key, text)``.  Set by
    the controller: ``settings``, ``robot`` (:meth:`bind`).  ``fault``: why the controller is in
    fault (None: not).
    """

    def __init__(self, reference, goals, counts, notify):
        self.reference, self.goals, self.counts = reference, goals, counts
        self._notify = notify
        self.settings = self.robot = None
        self.reset()

    def bind(self, robot):
        """Take the model of ``robot`` (a ControlledRobot; None: none)."""
        self.robot = robot

    def reset(self):
        """Per activation: no fault, nothing announced or seen."""
        self.fault = None
        self._reset_at = None  # (control time of the first state after a plant reset, why)
        self._fault_at = None  # (control time of the tick before a fault, of the fault's tick)
        self._jump_at = None  # (control time of the tick before a jump, of the jump's tick)

    # -- before the law ----------------------------------------------------------------------
    def before_law(self, state, t, recovering):
        """
        Set the reference this tick follows at control time ``t``.

        ``state``: the measured state; ``recovering``: this tick ends a halt. It handles, in this
        order: the control clock going back, the first state after an announced plant reset, a
        resume after a halt, a jump of the measured state, an activation or a reset to hold. The
        first state of a model: can the robot hold itself there (``check_start_pose``)?
        """
        if not self.robot.start_checked:
            self.robot.check_start_pose(state)
        reference = self.reference
        last_t = reference.last_t
        if last_t is not None and t < last_t - self.settings.state_timeout:
            self._drop(f'the control clock jumped back by {last_t - t:.3f} s', 'clock back')
            self._reset_at = None
        elif self._reset_at is not None and t >= self._reset_at[0] - STAMP_EPS:
            self._drop(self._reset_at[1], 'reset')
            self._reset_at = None
        elif recovering:
            self._resume(state, t)
        elif reference.last_q is not None and not reference.hold_pending:
            jump = self._jump(state, t)
            if jump:
                self.counts['jumps'] += 1
                self._jump_at = (last_t, t)
                self._drop(jump, 'jump')
        if reference.hold_pending:
            self._hold(state, t)

    def _jump(self, state, t):
        """
        Return the sentence naming a jump of the measured positions, or ''.

        A jump: a change of the measured positions since the last command that the velocities
        cannot explain (a plant reset, a re-homed encoder).  A velocity passing from the last
        measured one ``v0`` to this one ``v1`` without overshooting either moves a coordinate by
        between ``min(v0, v1) dt`` and ``max(v0, v1) dt``; a change outside that interval widened
        by ``jump_tolerance`` is a jump.  The sign counts: an arm moving forward that is found
        behind, at rest, was put there (after a lag of the controller too, where ``dt`` is long
        and the speeds alone would explain almost any distance).
        """
        reference = self.reference
        tol = float(self.settings.jump_tolerance)
        dt = max(t - reference.last_t, 0.0)
        last_qd = reference.last_qd
        # compiled (numpy's test below for arrays of other types or lengths)
        k = _call(_jump_excess, _K_JUMP, state.q, reference.last_q, state.qd, last_qd, dt, tol)
        if k is None or k == -2:
            k = _jump_numpy(state.q, reference.last_q, state.qd, last_qd, dt, tol)
        if k < 0:
            return ''
        dq = np.subtract(state.q, reference.last_q)
        low = np.minimum(state.qd, last_qd) * dt
        high = np.maximum(state.qd, last_qd) * dt
        return (
            f'the measured {self.robot.q_names[k]} jumped by {dq[k]:.4g} in {dt:.4g} s (its '
            f'velocities {last_qd[k]:.3g} -> {state.qd[k]:.3g} allow {low[k]:.3g} to '
            f'{high[k]:.3g}, +- jump_tolerance {tol:g})'
        )

    def _drop(self, why, key):
        """Drop the reference (goals aborted) and hold the pose of this tick."""
        if not self.reference.hold_pending:
            self._notify(
                'warning', key, f'{why}: the reference is dropped, holding the measured pose'
            )
        self.goals.abort(why)
        self.reference.hold_next()

    def _resume(self, state, t):
        """
        After a halt (the motors were limp).

        Keep the reference if every joint is within resume_tolerance of it, else hold where the
        robot is (the goal is aborted).
        """
        tolerance = self.settings.resume_tolerance
        law = self.robot.law
        reference = self.reference
        base = (
            '; the base target is kept' if getattr(law, 'base_reference', None) is not None else ''
        )
        if reference.hold_pending:
            return
        index = self.robot.index
        if law.follows != 'end_effector' and reference.schedule is not None:
            gap = (
                float(np.abs(reference.sample(t).position - state.q)[index].max())
                if len(index)
                else 0.0
            )
            if gap <= tolerance:
                law.reset()
                self._notify(
                    'info',
                    'resume',
                    f'fresh valid state again: commanding resumes on the reference ({gap:.3g} '
                    f'from it, resume_tolerance {tolerance:g}){base}',
                )
                return
            why = f'{gap:.3g} from the reference (resume_tolerance {tolerance:g})'
        else:
            why = 'no joint reference to resume'
        self._notify(
            'info',
            'resume',
            f'fresh valid state again: commanding resumes, holding the current position '
            f'({why}){base}',
        )
        self.goals.abort(f'the controller halted and the robot is {why}')
        self.reference.hold_next()

    def _hold(self, state, t):
        """Hold the measured pose from ``t``; a pending goal starts here (not in a fault)."""
        self.reference.take_hold(t, state.q)
        self.robot.law.reset()
        self.goals.start_pending(t, allowed=self.fault is None)

    # -- the tracking fault --------------------------------------------------------------------
    def new_fault(self, state, ref, t):
        """
        Return True when this tick's tracking error passes max_tracking_error (a new fault).

        ``state``: the measured state, ``ref``: this tick's reference, ``t``: the control time.
        The fault is entered: goals aborted, the measured pose held (the caller stops a law
        without a position hold).
        """
        if self.fault is not None or not self.robot.fault_check:
            return False
        max_error = self.robot.max_error
        k = _call(_largest_excess, _K_EXCESS, ref.position, state.q, max_error)  # compiled
        if k is None or k == -2:  # arrays of other types or lengths: numpy
            e = np.abs(np.subtract(ref.position, state.q))
            k = int(np.argmax(e - max_error)) if (e > max_error).any() else -1
        if k < 0:
            return False
        e = np.abs(np.subtract(ref.position, state.q))
        self.fault = (
            f'tracking error of {self.robot.q_names[k]} {e[k]:.4g} > max_tracking_error '
            f'{max_error[k]:g} at t = {t:.3f} s'
        )
        clamped = self.robot.saturation.recent(t)  # the usual cause: say it with the fault
        if clamped:
            self.fault += f', after {clamped}'
        self.counts['faults'] += 1
        self._fault_at = (self.reference.last_t, t)
        self._notify(
            'error',
            'fault',
            f'fault: {self.fault}: '
            + (
                'holding the measured pose'
                if self.robot.law.holds_position
                else 'commands stopped'
            )
            + '; a new activation or clear_fault (~/enable true) leaves it',
        )
        self.goals.abort(f'fault: {self.fault}', PATH_TOLERANCE_VIOLATED)
        self.reference.hold(t, state.q.copy())
        return True

    def clear_fault(self):
        """
        Leave the fault: hold the pose measured at the next tick.

        Return True, or False when there is none.
        """
        if self.fault is None:
            return False
        self._notify('info', 'fault', f'fault cleared ({self.fault}): holding the measured pose')
        self.fault = None
        self.reference.hold_next()
        return True

    # -- a plant reset -------------------------------------------------------------------------
    def plant_reset(self, why, t):
        """
        Drop the reference: the plant announced a reset (call while active).

        ``why``: the sentence logged and given to aborted goals. ``t``: the control time (stamp)
        of the first state after the reset, or None (see
        :meth:`Controller.plant_reset <spart_ros.control.controller.Controller.plant_reset>`).
        """
        if t is None or not self.settings.event_driven or not t > 0.0:
            self._drop(why, 'reset')
            return
        t = float(t)
        last_t = self.reference.last_t
        if last_t is None or last_t < t - STAMP_EPS:
            if self._reset_at is None or t < self._reset_at[0]:
                self._reset_at = (t, why)
            return
        fault = self._fault_at
        if self.fault is not None and fault is not None and _between(fault, t):
            self._notify(
                'warning',
                'reset',
                f'{why}: the tracking fault at t = {fault[1]:.3f} s ({self.fault}) was the reset '
                '(its notice came after the state): fault withdrawn, holding the measured pose',
            )
            self.fault = None
            self._fault_at = None
            self.reference.hold_next()
            return
        if self._jump_at is not None and _between(self._jump_at, t):
            return  # seen as a jump at that state: dropped and held already
        self._drop(why, 'reset')


def _jump_numpy(q, last_q, qd, last_qd, dt, tol):
    """Return the coordinate of a jump (Continuity._jump's test) or -1, in numpy."""
    dq = np.subtract(q, last_q)
    if np.abs(dq).max() <= tol:
        return -1
    beyond = np.maximum(np.minimum(qd, last_qd) * dt - dq, dq - np.maximum(qd, last_qd) * dt) - tol
    return int(np.argmax(beyond)) if (beyond > 0).any() else -1


def _between(window, t):
    """Whether tick ``window[1]`` was the first at/after ``t`` (``window[0]``: before it)."""
    before, at = window
    return at >= t - STAMP_EPS and (before is None or before < t - STAMP_EPS)
