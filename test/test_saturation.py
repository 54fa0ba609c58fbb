"""
Effort saturation and the URDF limits a plant does not enforce, said rather than found (issue 34).

- the pure controller (no plant): a command clamped at a joint's effort limit is in the snapshot
  (the joints, the effort asked, the limit, a count) and in the log, throttled (the largest
  demand); a tracking fault after clamped
  commands names them; the first state a fixed-base robot is commanded at says when gravity
  there needs more than a joint's limit (the demand checked against the numpy SPART gravity
  forces, not the fast path's);
- offline, the KUKA iiwa with joint 2 limited to 40 N m: the fault of its trajectory says the
  efforts were clamped; after the fault it sags (the hold cannot hold it), and a joint past its
  URDF velocity limit (lowered to 0.5 rad/s) is warned; ``python -m spart_ros.simulate`` prints
  both;
- :class:`~spart_ros.sim.joint_limits.VelocityLimits` and ``outside_position_limits`` on arrays;
  offline, a start outside the position limits is warned.
"""

from types import SimpleNamespace

from core_helpers import urdf_path
import dynamics_reference as ref
import numpy as np
import pytest
from spart_ros import spart
from spart_ros.control.controller import ControlInputs, Controller, FAULT
from spart_ros.control.saturation import LOG_PERIOD, WINDOW
from spart_ros.control.settings import ControllerSettings
from spart_ros.core.fast.mimic import fast_dynamics
from spart_ros.sim.joint_limits import outside_position_limits, VelocityLimits

pytestmark = pytest.mark.filterwarnings('ignore::spart_ros.core.errors.ModelWarning')

G = np.array([0.0, -9.81, 0.0])  # in the plane of the planar arm
ROBOT = spart.urdf2robot(urdf_path('planar_two_link'))[0]
FIXED = SimpleNamespace(R_b=np.eye(3), p_b=np.zeros(3), v_b=np.zeros(3), w_b=np.zeros(3))
Q0 = np.array([0.3, -0.4])
LIMIT = 10.0  # N m on the shoulder: gravity at Q0 needs about 29


def _gravity(q):
    z3 = np.zeros(3)
    tau, _, _ = ref.expected_id(
        ROBOT,
        np.eye(3),
        z3,
        z3,
        z3,
        q,
        np.zeros(2),
        np.zeros(2),
        z3,
        z3,
        np.zeros(6),
        np.zeros((6, ROBOT.n_links_joints)),
        G,
        floating=False,
    )
    return np.asarray(tau)


class _Loop:
    """A controller on the planar arm, ticked by hand at 1 kHz of control time."""

    def __init__(self, **settings):
        self.events = []
        self.c = Controller(notify=lambda level, key, text: self.events.append((level, text)))
        fd = fast_dynamics(ROBOT)
        fd.gravity = G
        self.c.configure(ControllerSettings(**settings), ROBOT, fd)
        self.c.activate()
        self.t = 10.0

    def tick(self, q, qd=(0.0, 0.0), dt=0.001):
        self.t += dt
        ns = int(round(self.t * 1e9))
        q, qd = np.asarray(q, float), np.asarray(qd, float)
        inputs = ControlInputs(
            SimpleNamespace(base=FIXED, q=q, qd=qd),
            None,
            np.full(2, self.t),
            None,
            divmod(ns, 1_000_000_000),
            self.t,
        )
        return self.c.update(inputs, self.t)

    def said(self, text):
        return [t for level, t in self.events if text in t]


def test_a_clamped_command_is_in_the_status_and_the_log_throttled():
    loop = _Loop(effort_limits=(LIMIT, 100.0), max_tracking_error=0.0)
    cmd = loop.tick(Q0)
    need = _gravity(Q0)
    assert need[0] > LIMIT  # the premise: gravity alone needs more
    assert cmd.values[0] == LIMIT  # clamped (the hold of Q0 at rest asks for g(Q0))
    sat = loop.c.snapshot().saturation
    assert sat.joints == ['shoulder'] and sat.limit.tolist() == [LIMIT] and sat.count == 1
    np.testing.assert_allclose(sat.demand, need[:1], rtol=1e-9)
    (line,) = loop.said('efforts clamped at their limits')
    assert f'shoulder asked {need[0]:.4g} N m, limit {LIMIT:.4g} N m' in line, line
    # the gravity check of the start pose, once
    (start,) = loop.said('gravity at the start pose')
    assert f'needs {need[0]:.4g} N m at shoulder, more than its effort limit 10 N m' in start
    for _ in range(int(1.5 * LOG_PERIOD / 0.001)):  # 1.5 s of clamped commands: one more line
        loop.tick(Q0)
    assert len(loop.said('efforts still clamped')) == 1 and len(loop.said('clamped at')) == 1
    assert loop.c.snapshot().saturation.count == 1 + int(1.5 * LOG_PERIOD / 0.001)
    # a pose gravity needs less than the limit at (shoulder straight down): within again
    loop.c.apply_settings(effort_limits=(100.0, 100.0))
    loop.tick(Q0)
    sat = loop.c.snapshot().saturation
    assert sat.joints == [] and len(sat.demand) == 0
    assert sat.count == 1 + int(1.5 * LOG_PERIOD / 0.001)  # the count stays
    loop.c.apply_settings(effort_limits=(LIMIT, 100.0))  # a new run within LOG_PERIOD: no line
    loop.tick(Q0)
    lines = loop.said('efforts clamped at') + loop.said('efforts still clamped')
    assert loop.c.snapshot().saturation.joints == ['shoulder'] and len(lines) == 2, lines
    assert len(loop.said('gravity at the start pose')) == 1  # said once


def test_a_tracking_fault_after_clamped_commands_says_so_and_one_without_does_not():
    loop = _Loop(effort_limits=(LIMIT, 100.0), max_tracking_error=0.05, jump_tolerance=1.0)
    loop.tick(Q0)
    # 0.1 rad off the hold (not a jump: jump_tolerance): a fault 1 ms after a clamped command
    loop.tick(Q0 + [0.1, 0.0])
    assert loop.c.state == FAULT
    fault = loop.c.fault
    assert 'tracking error of shoulder' in fault and 'after its efforts were clamped' in fault
    assert 'shoulder asked' in fault and 'limit 10 N m' in fault, fault
    # the same fault without saturation (limits the hold fits in): nothing about clamping
    loop = _Loop(effort_limits=(100.0, 100.0), max_tracking_error=0.05, jump_tolerance=1.0)
    loop.tick(Q0)
    loop.tick(Q0 + [0.1, 0.0])
    assert loop.c.state == FAULT and 'clamped' not in loop.c.fault
    assert not loop.said('gravity at the start pose')
    # clamped long before the fault (beyond WINDOW): not its cause
    loop = _Loop(effort_limits=(LIMIT, 100.0), max_tracking_error=0.05, jump_tolerance=1.0)
    loop.tick(Q0)
    loop.c.apply_settings(effort_limits=(100.0, 100.0))
    for _ in range(int(WINDOW / 0.001) + 10):
        loop.tick(Q0)
    loop.tick(Q0 + [0.1, 0.0])
    assert loop.c.state == FAULT and 'clamped' not in loop.c.fault


def test_the_plant_s_limits_on_arrays():
    v = VelocityLimits(['a', 'b', 'c'], [1.0, 0.0, np.inf], ['rad/s', 'm/s', 'rad/s'])
    assert list(v.over(np.array([-1.5, 100.0, 1e9]))) == [0]  # 0 and inf: no limit
    assert len(v.over(np.array([0.5, 0.0, 0.0]))) == 0
    (text,) = v.excess(np.array([[0.1, 5.0, 0.0], [-2.5, 0.0, 3.0]]))
    assert text.startswith('joint a moves at 2.5 rad/s, beyond its URDF velocity limit 1 rad/s')
    assert not VelocityLimits(['a'], [np.inf]).excess(np.ones((3, 1)))
    (start,) = outside_position_limits(ROBOT, ['shoulder', 'elbow'], [3.0, 0.5])
    assert start.startswith('joint shoulder starts at 3, outside its URDF limits [-2.9, 2.9]')


@pytest.fixture(scope='module')
def sagging_kuka(tmp_path_factory):
    """
    Return the KUKA iiwa's URDF file with velocity limits of 0.5 rad/s (instead of 10).

    With joint 2 limited to 40 N m (KUKA_LIMITS) it cannot follow KUKA_TARGET in 1.5 s.
    """
    text = open(urdf_path('kuka_iiwa')).read().replace('velocity="10"', 'velocity="0.5"')
    path = tmp_path_factory.mktemp('kuka') / 'kuka_slow.urdf'
    path.write_text(text)
    return path


KUKA_LIMITS = (300.0, 40.0, 300.0, 300.0, 300.0, 300.0, 300.0)
KUKA_TARGET = [0.0, 0.8, 0.0, -0.5, 0.0, 0.5, 0.0]


def test_offline_an_arm_that_cannot_hold_itself_says_why_it_faulted_and_how_fast_it_fell(
    sagging_kuka,
):
    from spart_ros.sim.closed_loop import simulate
    from spart_ros.sim.joint_limits import JointLimitWarning

    with pytest.warns(JointLimitWarning) as caught:
        run = simulate(
            str(sagging_kuka),
            {'effort_limits': KUKA_LIMITS},
            duration=2.5,
            trajectory=[(1.5, KUKA_TARGET)],
        )
    (goal,) = run.goals
    assert goal.status == 'aborted' and 'after its efforts were clamped' in goal.message
    assert 'lbr_iiwa_joint_2 asked' in goal.message and 'limit 40 N m' in goal.message
    sat = run.controller.controlled.saturation
    assert sat.count > 100 and 'lbr_iiwa_joint_2' in sat.describe()
    # after the fault the hold cannot hold it either: it sags beyond the pose of the fault, its
    # joint 2 clamped, faster than its (lowered) velocity limit
    assert run.states[-1] == FAULT and np.max(np.abs(run.qd[:, 1])) > 0.5
    texts = [str(w.message) for w in caught]
    assert any(t.startswith('joint lbr_iiwa_joint_2 moves at') for t in texts), texts


def test_the_simulate_command_line_prints_the_saturation_and_the_velocity_limits(
    sagging_kuka, capsys
):
    from spart_ros.simulate import main

    limits = '[' + ', '.join(f'{x:g}' for x in KUKA_LIMITS) + ']'
    code = main(
        [
            str(sagging_kuka),
            '--set',
            f'effort_limits={limits}',
            '--waypoint',
            '1.5',
            *[str(x) for x in KUKA_TARGET],
            '--duration',
            '2.5',
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert 'efforts clamped at their limits in ' in out and 'lbr_iiwa_joint_2 asked' in out, out
    assert 'warning: joint lbr_iiwa_joint_2 moves at' in out, out
    assert 'trajectory: aborted fault: tracking error' in out and 'after its efforts' in out


def test_offline_a_start_outside_the_position_limits_is_warned():
    from spart_ros.sim.closed_loop import simulate
    from spart_ros.sim.joint_limits import JointLimitWarning

    with pytest.warns(JointLimitWarning, match='joint lbr_iiwa_joint_2 starts at 2.5, outside'):
        simulate(urdf_path('kuka_iiwa'), {}, duration=0.01, initial={'lbr_iiwa_joint_2': 2.5})
