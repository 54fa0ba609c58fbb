"""
The capture's phases and its goals' semantics, without a plant.

spart_ros.control.capture_phases, capture_goal and capture:

- the table: every event key has rows, the terminal phases lead nowhere but to the next goal, the
  machine refuses an event the table does not have from a phase;
- the goal's life as the trajectory action's: accepted (active, feedback each tick), canceled (no
  command from then on: the controller holds), preempted by a newer goal before the grasp,
  aborted on a fault with exactly one all-zero command (a stale estimate, a joint beyond its
  limits, the controller's own abort), a timeout likewise, a refused goal leaving the running one
  alone, no second capture while a target is held;
- a stateful property-based test (hypothesis) over random sequences of goals, cancels, faults,
  ticks, stale estimates, grasp criteria met or not and attachments: every change of phase is a
  row of the table (or two: the reset and the next accept), each row with ``zero`` gives exactly
  one zero command, nothing is commanded after an abort or a cancel, the goal's status matches the
  phase, at most one goal is live.  The laws run for real on a robot at rest; the planner is
  replaced by a fixed plan (its checks are test_capture.py's) to keep the examples cheap.
"""

from capture_sim import CaptureSim, chaser, EE, Q0, tumbling_target_state
from hypothesis import event, HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import invariant, precondition, rule, RuleBasedStateMachine
import numpy as np
import pytest
from spart_ros.control import capture_phases as ph
from spart_ros.control.capture import Capture
from spart_ros.control.capture_goal import (
    CaptureGoal,
    CaptureRefused,
    FAULT,
    INVALID_GOAL,
    SUCCESSFUL,
    TIMED_OUT,
)
from spart_ros.control.capture_planning import CapturePlan
from spart_ros.core.errors import InputError
from spart_ros.core.free_body import FixturePrediction, FreeBody
from spart_ros.core.target import Target

pytestmark = pytest.mark.filterwarnings('ignore::spart_ros.core.errors.SpartWarning')

ROBOT = chaser()
TARGET = Target.make('client', 150.0, [20.0, 25.0, 18.0])
STATE = tumbling_target_state(TARGET, ROBOT, Q0, distance=0.1, rate_deg=2.0)
SIM = CaptureSim(ROBOT, TARGET, Q0, STATE)
AT_REST = SIM.link_state()
BODY = FreeBody(TARGET)
TRUTH = FixturePrediction(BODY, STATE, 0.0)  # the target's motion, kept as it is asked for


def test_the_table():
    keys = {row.key for row in ph.TRANSITIONS}
    assert keys == set(ph.EVENTS)
    for source in (ph.DONE, ph.ABORTED):
        assert {r.target for r in ph.TRANSITIONS if r.source == source} == {ph.IDLE}
    assert all(r.zero == (r.key in ('fault', 'timeout')) for r in ph.TRANSITIONS)
    m = ph.CapturePhases()
    with pytest.raises(InputError, match="no 'attached' in phase 'idle'"):
        m.fire('attached')
    with pytest.raises(InputError, match='expected one of'):
        m.fire('explode')
    assert m.fire('accept').target == ph.APPROACH and m.phase == ph.APPROACH


def _plan(state, prediction, t, *args, **kwargs):
    return CapturePlan(t, t + 1.0, 1.0, Q0, np.zeros(7), 0.1, 0.1, 0.5, 1.1, 'fixed plan')


def _capture(real_plan=False):
    c = Capture(ROBOT, TARGET, EE, estimate_timeout=0.3, min_approach_time=1.0, rest_dwell=0.2)
    if not real_plan:
        c.planner.plan = _plan
    return c


def _estimate(capture, t):
    capture.set_estimate(TRUTH.state(t), t)


def test_accept_feedback_cancel():
    c = _capture(real_plan=True)
    _estimate(c, 0.0)
    goal = c.submit(CaptureGoal(target='client'), AT_REST, 0.0)
    assert goal.status == 'active' and goal.phase == 'approach' and goal.plan.t_grasp > 0
    out = c.update(AT_REST, 0.01)
    assert out.values is not None and out.base_torque is not None and not out.zero
    assert out.feedback.phase == 'approach' and out.feedback.distance == pytest.approx(0.1, 1e-3)
    assert c.cancel(goal, 0.02) and goal.status == 'canceled' and goal.error_code == SUCCESSFUL
    assert c.phase == 'aborted' and not c.cancel(goal)
    for t in (0.03, 0.04):  # no command (the controller holds), and no zero command either
        out = c.update(AT_REST, t)
        assert out.values is None and not out.zero


def test_preempt_and_a_refused_goal_leaves_the_running_one():
    c = _capture()
    _estimate(c, 0.0)
    first = c.submit(CaptureGoal(), AT_REST, 0.0)
    c.update(AT_REST, 0.01)
    with pytest.raises(CaptureRefused, match="unknown target 'other'"):
        c.submit(CaptureGoal(target='other'), AT_REST, 0.02)
    assert first.status == 'active'
    second = c.submit(CaptureGoal(), AT_REST, 0.03)
    assert first.status == 'preempted' and first.error_code == INVALID_GOAL
    assert 'replaced by capture goal' in first.message and second.status == 'active'
    assert c.phase == 'approach' and c.goal is second


def test_a_stale_estimate_aborts_with_one_zero_command():
    c = _capture()
    _estimate(c, 0.0)
    goal = c.submit(CaptureGoal(), AT_REST, 0.0)
    assert c.update(AT_REST, 0.2).values is not None
    out = c.update(AT_REST, 0.5)  # 0.5 s after the estimate, estimate_timeout 0.3
    assert out.zero and np.all(out.values == 0) and np.all(out.base_torque == 0)
    assert goal.status == 'aborted' and goal.error_code == FAULT and 'old' in goal.message
    assert c.phase == 'aborted'
    assert c.update(AT_REST, 0.6).values is None  # one zero command, then none


def test_a_joint_beyond_its_limits_and_the_controllers_abort_are_faults():
    c = _capture()
    _estimate(c, 0.0)
    goal = c.submit(CaptureGoal(), AT_REST, 0.0)
    bad = CaptureSim(ROBOT, TARGET, Q0 + np.array([0, 0, 0, -0.5, 0, 0, 0]), STATE).link_state()
    out = c.update(bad, 0.01)
    assert (
        out.zero and "joint 'arm_joint_4'" in goal.message and 'beyond its limits' in goal.message
    )
    c = _capture()
    _estimate(c, 0.0)
    goal = c.submit(CaptureGoal(), AT_REST, 0.0)
    assert c.abort('the controller halted (stale joint states)', 0.01)
    assert c.update(AT_REST, 0.02).zero and goal.error_code == FAULT
    assert not c.abort('again')


def test_the_synchronisation_times_out_with_one_zero_command():
    c = _capture()
    _estimate(c, 0.0)
    goal = c.submit(CaptureGoal(synchronise_timeout=0.5), AT_REST, 0.0)
    outs = []
    for k in range(1, 200):  # the robot does not move: the criteria are never met
        t = 0.01 * k
        _estimate(c, t)
        outs.append(c.update(AT_REST, t))
        if goal.done:
            outs.append(c.update(AT_REST, t + 0.01))
            break
    assert goal.status == 'aborted' and goal.error_code == TIMED_OUT, goal.message
    assert 'synchronise took more than 0.5 s' in goal.message
    # the zero command is the update that found the timeout's; none after it
    assert [o.zero for o in outs].count(True) == 1 and outs[-2].zero
    assert outs[-1].values is None
    assert goal.started['synchronise'] == pytest.approx(1.0, abs=0.011)


def test_no_capture_while_a_target_is_held():
    c = _capture()
    _estimate(c, 0.0)
    goal = c.submit(CaptureGoal(), AT_REST, 0.0)
    c.phases.fire('path_end')
    c.phases.fire('grasp_criteria')
    c.update(AT_REST, 0.01)
    with pytest.raises(CaptureRefused, match='grasp of target .client. is under way'):
        c.submit(CaptureGoal(), AT_REST, 0.015)
    c.attached(0.02)
    assert c.phase == 'detumble' and c.model is not ROBOT and goal.status == 'active'
    with pytest.raises(CaptureRefused, match="holds target 'client'"):
        c.submit(CaptureGoal(), AT_REST, 0.03)
    with pytest.raises(InputError, match='not grasp'):
        c.attached(0.04)


def _capture_reference():
    """Return a reference sample: the fixture's at time 0."""
    m = BODY.target.fixture_motion(STATE)
    return type('Reference', (), {'R': m.R, 'p': m.p, 'twist': m.twist})()


class CaptureMachine(RuleBasedStateMachine):
    """Random sequences of goals, cancels, faults, ticks and estimates."""

    def __init__(self):
        super().__init__()
        self.c = _capture()
        self.c.auto_attach = False  # the attach rule reports it (or the grasp times out)
        # the laws' commands computed once (the machine checks the phases, not the laws)
        motion = self.c.motion
        self._motion = motion.command(AT_REST, _capture_reference(), 0.0)
        motion.command = lambda state, ref, t: self._motion
        self.t = 0.0
        self.goals = []
        self.zero_owed = False  # one zero command owed (two aborts before it: still one)
        self.criteria = False
        self.rest = False
        self.silent = False  # after an abort's zero command or a cancel: nothing commanded
        _estimate(self.c, 0.0)

    # -- what happens ---------------------------------------------------------------------------
    def _changed(self, before, rows_before):
        rows = self.c.phases.history[rows_before:]
        phases = [before] + [r.target for r in rows]
        for row, src in zip(rows, phases):
            assert row in ph.TRANSITIONS and row.source == src
        self.zero_owed = self.zero_owed or any(r.zero for r in rows)
        if any(r.key in ('cancel', 'fault', 'timeout') for r in rows):
            self.silent = True
        if any(r.key in ('accept', 'preempt') for r in rows):
            self.silent = False
        return rows

    @rule(now=st.integers(0, 3))
    def submit(self, now):
        if self.goals and not self.goals[-1].done and now:
            return  # a preempt one time in four: the capture may get on
        before, n = self.c.phase, len(self.c.phases.history)
        goal = CaptureGoal(synchronise_timeout=0.3, grasp_timeout=0.5, detumble_timeout=0.5)
        try:
            self.c.submit(goal, AT_REST, self.t)
        except CaptureRefused:
            assert goal.status == 'aborted' and len(self.c.phases.history) == n
            return
        self.goals.append(goal)
        rows = self._changed(before, n)
        assert rows[-1].key in ('accept', 'preempt')

    @precondition(lambda self: self.goals)
    @rule(now=st.integers(0, 3))
    def cancel(self, now):
        if now:
            return
        before, n = self.c.phase, len(self.c.phases.history)
        done = self.goals[-1].done
        assert self.c.cancel(self.goals[-1], self.t) == (not done)
        self._changed(before, n)

    @rule(now=st.integers(0, 3))
    def fault(self, now):
        if now:
            return
        before, n = self.c.phase, len(self.c.phases.history)
        self.c.abort('a fault', self.t)
        self._changed(before, n)

    @rule(
        dt=st.sampled_from([0.02, 0.1, 0.25, 0.4]),
        steps=st.integers(1, 12),
        fresh=st.sampled_from([True, True, True, False]),
        criteria=st.booleans(),
        rest=st.booleans(),
    )
    def ticks(self, dt, steps, fresh, criteria, rest):
        """Run ``steps`` control ticks of ``dt`` s (fewer if the phase changes)."""
        self.criteria, self.rest = criteria, rest
        phase = self.c.phase
        for _ in range(steps):
            self._tick(dt, fresh)
            if self.c.phase != phase:
                break

    def _tick(self, dt, fresh):
        self.t += dt
        if fresh and self.c.attachment is None:
            _estimate(self.c, self.t)
        if self.c.phase == ph.SYNCHRONISE:
            self.c.grasp_check.update = lambda t, err: self.criteria
        if self.c.law is not None and not hasattr(self, '_detumble'):
            self._detumble = self.c.law.command(AT_REST)
            self.c.law.command = lambda state, t=None: self._detumble
        if self.c.law is not None:
            self.c.law.at_rest = lambda cmd: self.rest
        before, n = self.c.phase, len(self.c.phases.history)
        out = self.c.update(AT_REST, self.t)
        rows = self._changed(before, n)
        if out.zero:
            assert self.zero_owed and np.all(out.values == 0)
            self.zero_owed = False
        elif any(r.zero for r in rows):
            # a fault found in this update: its zero command is this update's (update recurses)
            raise AssertionError('a zero row without its zero command')
        if self.silent and not out.zero:
            assert out.values is None
        if out.values is not None:
            assert np.all(np.isfinite(out.values))
        event(f'phase {self.c.phase}')

    @precondition(lambda self: self.c.phase == ph.GRASP)
    @rule()
    def attach(self):
        before, n = self.c.phase, len(self.c.phases.history)
        self.c.attached(self.t)
        assert [r.key for r in self._changed(before, n)] == ['attached']

    # -- invariants -------------------------------------------------------------------------------
    @invariant()
    def the_goal_matches_the_phase(self):
        live = [g for g in self.goals if not g.done]
        assert len(live) <= 1
        phase = self.c.phase
        if live:
            assert live[0] is self.c.goal and phase in ph.ACTIVE_PHASES
        if phase == ph.DONE:
            assert self.c.goal.status == 'succeeded'
        if phase == ph.ABORTED:
            assert self.c.goal.status in ('aborted', 'canceled')
        for g in self.goals:
            if g is not self.c.goal:
                assert g.done and g.status in ('preempted', 'aborted', 'canceled', 'succeeded')

    @invariant()
    def a_zero_owed_is_pending(self):
        assert self.c._zero_pending == self.zero_owed


TestCaptureMachine = CaptureMachine.TestCase
TestCaptureMachine.settings = settings(
    max_examples=80,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
