"""
The pure controller (spart_ros.control.controller.Controller) without ROS.

Every transition of its state machine, and a stateful property-based test over random event
sequences asserting its invariants (never a non-finite or out-of-limit command, a zero command on
every exit from commanding, never a command without a fresh valid state). Expected efforts come
from the numpy SPART functions (test/dynamics_reference.py), not the fast path the controller runs
on.
"""

from types import SimpleNamespace

from core_helpers import urdf_path
import dynamics_reference as ref
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import initialize, invariant, rule, RuleBasedStateMachine
import numpy as np
import pytest
from spart_ros import spart
from spart_ros.control.controller import (
    ControlInputs,
    Controller,
    FAULT,
    FINALIZED,
    HALTED,
    HOLDING,
    INACTIVE,
    TRACKING,
    UNCONFIGURED,
)
from spart_ros.control.goals import (
    ABORTED,
    ACTIVE,
    CANCELED,
    check_position_limits,
    PENDING,
    PREEMPTED,
    QUEUED,
    SUCCEEDED,
    TrajectoryGoal,
)
from spart_ros.control.settings import ControllerSettings
from spart_ros.control.states import allowed
from spart_ros.control.trajectory import JointTrajectory, Reference
from spart_ros.core.errors import InputError
from spart_ros.core.fast.mimic import fast_dynamics

pytestmark = pytest.mark.filterwarnings('ignore::spart_ros.core.errors.SpartWarning')

G = np.array([0.0, -9.81, 0.0])  # in the plane of the planar arm: gravity loads it
ROBOT = spart.urdf2robot(urdf_path('planar_two_link'))[0]
SC = spart.urdf2robot(urdf_path('SC_3DoF'))[0]
FIXED = SimpleNamespace(R_b=np.eye(3), p_b=np.zeros(3), v_b=np.zeros(3), w_b=np.zeros(3))
KP, KD = 100.0, 20.0
#: a plant whose states may come up to a second apart: the tests that step a trajectory in big
#: steps of control time (a gap longer than state_timeout is otherwise a stall of the controller)
SLOW = 1.0


def dynamics(robot=ROBOT, gravity=G):
    fd = fast_dynamics(robot)
    fd.gravity = gravity
    return fd


class Clock:
    """Control time (the joint-state stamps) and the steady clock, advanced together."""

    def __init__(self, t=10.0, now=100.0):
        self.t, self.now = t, now

    def tick(self, dt=0.001):
        self.t += dt
        self.now += dt

    @property
    def stamp(self):
        ns = int(round(self.t * 1e9))
        return (ns // 1_000_000_000, ns % 1_000_000_000)


def inputs(clock, q, qd=None, base=FIXED, received=None, stamp=None, unavailable=None):
    q = np.asarray(q, dtype=float)
    qd = np.zeros_like(q) if qd is None else np.asarray(qd, dtype=float)
    received = clock.now if received is None else received
    return ControlInputs(
        SimpleNamespace(base=base, q=q, qd=qd),
        unavailable,
        np.full(len(q), received),
        None if base is FIXED else received,
        clock.stamp if stamp is None else stamp,
        clock.now,
    )


def tick(c, clock, q, qd=None, dt=0.001, **kw):
    clock.tick(dt)
    return c.update(inputs(clock, q, qd, **kw), clock.t)


def expected_ct(q, qd, r, robot=ROBOT, gravity=G, kp=KP, kd=KD):
    """Compute torque of the PD acceleration (numpy SPART ID, fixed base at the origin)."""
    qdd = r.acceleration + kd * (r.velocity - qd) + kp * (r.position - q)
    z3 = np.zeros(3)
    return ref.expected_id(
        robot,
        np.eye(3),
        z3,
        z3,
        z3,
        q,
        qd,
        qdd,
        z3,
        z3,
        np.zeros(6),
        np.zeros((6, robot.n_links_joints)),
        gravity,
        floating=False,
    )[0]


def hold_reference(q):
    z = np.zeros_like(q)
    return Reference(np.asarray(q, dtype=float), z, z)


def active_controller(q0=(0.3, -0.4), **settings):
    events = []
    c = Controller(notify=lambda level, key, text: events.append((level, text)))
    c.events = events
    c.configure(ControllerSettings(kp=KP, kd=KD, **settings), ROBOT, dynamics())
    c.activate()
    clock = Clock()
    cmd = tick(c, clock, q0)
    assert cmd is not None and not cmd.zero and c.state == HOLDING
    return c, clock


def goal(positions, times=(1.0,), names=('shoulder', 'elbow'), start=0.0):
    return TrajectoryGoal.from_points(
        names, [(t, p, [], []) for t, p in zip(times, positions)], start
    )


# ---------------------------------------------------------------------------------------------
# every transition
# ---------------------------------------------------------------------------------------------


def test_configure_activate_hold_deactivate_cleanup():
    c = Controller(notify=lambda *a: None)
    assert c.state == UNCONFIGURED and c.update(inputs(Clock(), [0, 0]), 10.0) is None
    with pytest.raises(InputError, match='activate: not possible in state unconfigured'):
        c.activate()
    c.configure(ControllerSettings(kp=KP, kd=KD), ROBOT, dynamics())
    assert c.state == INACTIVE and c.joint_names == ['shoulder', 'elbow'] and c.reason == ''
    with pytest.raises(InputError, match='configure: not possible in state inactive'):
        c.configure(ControllerSettings(), ROBOT)
    clock = Clock()
    assert tick(c, clock, [0.1, 0.2]) is None  # inactive: nothing
    c.activate()
    assert c.state == HALTED and 'waiting for a complete, fresh state' in c.reason
    q0, qd0 = np.array([0.3, -0.4]), np.array([0.2, -0.1])
    cmd = tick(c, clock, q0, qd0)
    assert c.state == HOLDING and not cmd.zero and cmd.t == clock.t
    # the hold of the measured pose, the mode's full model (gravity included)
    np.testing.assert_allclose(
        cmd.values, expected_ct(q0, qd0, hold_reference(q0)), rtol=1e-9, atol=1e-9
    )
    q1, qd1 = q0 + 0.01, np.array([0.1, 0.05])
    cmd = tick(c, clock, q1, qd1)
    np.testing.assert_allclose(
        cmd.values, expected_ct(q1, qd1, hold_reference(q0)), rtol=1e-9, atol=1e-9
    )
    with pytest.raises(InputError, match='cleanup: not possible in state holding'):
        c.cleanup()
    zero = c.deactivate()
    assert zero.zero and not zero.values.any() and c.state == INACTIVE
    assert c.reason == ''  # the status says 'inactive', not 'inactive: inactive'
    assert c.deactivate() is None and tick(c, clock, q1) is None
    c.activate()  # holds the pose measured now, not the old one
    q2 = q0 - 0.2
    cmd = tick(c, clock, q2)
    np.testing.assert_allclose(
        cmd.values, expected_ct(q2, np.zeros(2), hold_reference(q2)), rtol=1e-9, atol=1e-9
    )
    assert c.deactivate().zero
    c.cleanup()
    assert c.state == UNCONFIGURED and c.joint_names == []
    zero = None
    c.configure(ControllerSettings(), ROBOT, dynamics())
    c.activate()
    tick(c, clock, q0)
    zero = c.shutdown()
    assert zero.zero and c.state == FINALIZED and tick(c, clock, q0) is None


def test_bad_settings_refused_at_configure():
    cases = [
        ({'mode': 'wobbly'}, 'mode must be one of'),
        ({'mode': 'floating_base'}, 'mode floating_base needs base: floating'),
        ({'kp': [1.0, 2.0, 3.0]}, r'kp: expected one value or one per command joint \(2'),
        (
            {'command_joints': ('shoulder', 'wrist')},
            r"command_joints \['wrist'\] are not moving joints",
        ),
        ({'state_timeout': 0.0}, 'state_timeout must be a finite number of seconds > 0'),
        ({'effort_limits': (1.0, -2.0)}, 'effort_limits: every value must be'),
        (
            {'command_interface': 'velocity'},
            'command_interface velocity needs a mode that outputs it',
        ),
    ]
    for changes, match in cases:
        c = Controller(notify=lambda *a: None)
        with pytest.raises(InputError, match=match):
            c.configure(ControllerSettings(**changes), ROBOT, dynamics())
        assert c.state == UNCONFIGURED


def test_the_mode_follows_the_base_unless_named_and_a_wrong_one_names_the_right_ones():
    """
    The mode '' (the node's default): computed_torque on a fixed base, floating_base on floating.

    A mode named for the other base is refused with the modes of this base and the parameter to
    set (issue 34: 'needs base: fixed (got base: floating)' named no mode that works).
    """
    from spart_ros.control.settings import DEFAULT_MODES, modes_for_base

    assert ControllerSettings().mode == 'computed_torque'
    assert ControllerSettings(floating=True).mode == 'floating_base'
    assert ControllerSettings(mode='', floating=True).mode == DEFAULT_MODES[True]
    assert ControllerSettings(mode='free_flying', floating=True).mode == 'free_flying'
    floating = modes_for_base(True)
    assert {'floating_base', 'free_flying', 'reactionless'} <= set(floating)
    assert not {'computed_torque', 'gravity_compensation'} & set(floating)
    with pytest.raises(InputError) as err:
        ControllerSettings(mode='computed_torque', floating=True).check()
    text = str(err.value)
    assert 'mode computed_torque needs base: fixed (got base: floating)' in text
    assert ', '.join(floating) in text and 'mode:=floating_base' in text, text


def test_stale_state_one_zero_then_silence_then_resume_on_the_reference():
    c, clock = active_controller()
    q0 = np.array([0.3, -0.4])
    c.submit(goal([q0 + 0.02], times=[2.0]), clock.t)
    assert c.state == TRACKING
    tick(c, clock, q0)
    clock.tick(0.2)  # no state for 0.2 s > state_timeout 0.1 s
    stale = inputs(clock, q0, received=clock.now - 0.2)
    zero = c.check(stale)
    assert zero.zero and c.state == HALTED and 'old (state_timeout 0.1 s)' in c.reason
    assert c.check(stale) is None and c.update(stale, clock.t) is None  # silence
    cmd = tick(c, clock, q0)  # fresh, within resume_tolerance: on the reference
    assert c.state == TRACKING and not cmd.zero and c.gate.recoveries == 1
    clock.tick(0.2)
    assert c.check(inputs(clock, q0, received=clock.now - 0.2)).zero
    far = q0 + 0.3  # far from the reference: hold it, the goal aborted
    cmd = tick(c, clock, far)
    assert c.state == HOLDING and c._goal is None
    np.testing.assert_allclose(
        cmd.values, expected_ct(far, np.zeros(2), hold_reference(far)), rtol=1e-9
    )


def test_a_stall_of_the_controller_is_a_halt_whichever_callback_comes_first():
    """
    A stall of the controller is a halt, whichever callback comes first.

    The controller's process stalls (0.3 s, a busy machine) while a real-time plant applies its
    last command (ros2_control keeps applying it): on its return the robot is off the reference.
    The watchdog's timer may run first (stale joint states: one zero command, halted, then the
    resume rules) or the newest state may (it is fresh): both give the same outcome: within
    resume_tolerance commanding resumes on the reference, beyond it the measured pose is held
    (the goal aborted), not a tracking fault and not a jolt back to the reference.
    """
    q0 = np.array([0.3, -0.4])

    def stalled(watchdog_first, off):
        c, clock = active_controller(max_tracking_error=0.2)
        g = c.submit(goal([q0 + 0.5], times=[2.0]), clock.t)
        interp = JointTrajectory(g.start_time, hold_reference(q0), [2.0], [q0 + 0.5])
        for _ in range(5):
            clock.tick(0.001)
            r = interp.sample(clock.t)
            c.update(inputs(clock, r.position, r.velocity), clock.t)
        last = clock.now
        clock.tick(0.3)  # nothing ran for 0.3 s
        if watchdog_first:
            assert c.check(inputs(clock, q0, received=last)).zero
        r = interp.sample(clock.t)
        q = r.position - off  # where the last command took the robot
        cmd = c.update(inputs(clock, q, r.velocity), clock.t)
        return c, g, cmd, q, r

    for watchdog_first in (False, True):
        c, g, cmd, q, r = stalled(watchdog_first, 0.03)  # within resume_tolerance 0.05: resumes
        assert c.state == TRACKING and g.status == ACTIVE and c.gate.timeouts == 1, (
            watchdog_first,
            c.state,
        )
        np.testing.assert_allclose(cmd.values, expected_ct(q, r.velocity, r), rtol=1e-9, atol=1e-9)
        for off in (0.1, 0.3):  # beyond it (0.3: beyond max_tracking_error too)
            c, g, cmd, q, r = stalled(watchdog_first, off)
            assert c.state == HOLDING and c.fault is None and g.status == ABORTED, (
                watchdog_first,
                off,
                c.state,
            )
            np.testing.assert_allclose(
                cmd.values, expected_ct(q, r.velocity, hold_reference(q)), rtol=1e-9, atol=1e-9
            )
            assert (
                any('ran 0.30' in text and 'on the last command' in text for _, text in c.events)
                or watchdog_first
            )
    # lockstep: the plant waits for the command, its time does not go on: no stall, however late
    c, clock = active_controller()
    clock.now += 5.0
    clock.tick(0.001)
    c.update(inputs(clock, q0), clock.t)
    assert c.gate.timeouts == 0 and c.state == HOLDING


def test_each_stamp_answered_once_and_a_stamp_that_stops_advancing_halts():
    c, clock = active_controller()
    q = np.array([0.3, -0.4])
    clock.tick()
    first = inputs(clock, q)
    assert c.update(first, clock.t) is not None
    assert c.update(first._replace(now=clock.now + 0.01), clock.t) is None  # the same stamp again
    clock.now += 0.2  # messages keep coming with that stamp
    again = first._replace(joint_times=np.full(2, clock.now), now=clock.now)
    zero = c.update(again, clock.t)
    assert zero.zero and 'stamp has not advanced' in c.reason
    unstamped = Controller(notify=lambda *a: None)
    unstamped.configure(ControllerSettings(), ROBOT, dynamics())
    unstamped.activate()
    clock2 = Clock()
    assert unstamped.update(inputs(clock2, q, stamp=(0, 0)), 0.0) is not None
    clock2.now += 0.2
    assert unstamped.check(inputs(clock2, q, stamp=(0, 0))).zero
    assert 'unstamped (stamp 0): tick on a timer (rate > 0)' in unstamped.reason


def test_a_state_not_yet_answered_is_answered_as_soon_as_the_controller_is_ready():
    """
    Lockstep without deadlock: the plant's state came long before the model.

    It republishes it (same stamp) while it waits: the controller, ready now, answers it (the
    issue's Talos case waited forever: 'the joint_states stamp has not advanced for 72.591 s').
    """
    c = Controller(notify=lambda *a: None)
    c.configure(ControllerSettings(), robot=None)
    c.activate()
    clock = Clock()
    first = inputs(clock, [0.1, 0.2])
    assert c.update(first, clock.t) is None and 'waiting for a robot description' in c.reason
    clock.now += 72.0  # the model comes 72 s later
    c.set_model(ROBOT, dynamics())
    assert c.active and c.state == HALTED
    assert c.update(first._replace(now=clock.now), clock.t) is None  # received 72 s ago: stale
    republished = first._replace(
        joint_times=np.full(2, clock.now), now=clock.now
    )  # same stamp, fresh
    cmd = c.update(republished, clock.t)
    assert cmd is not None and not cmd.zero and c.state == HOLDING


def test_rejected_input_and_failing_law_halt_with_one_zero():
    c, clock = active_controller()
    q = np.array([0.3, -0.4])
    assert c.reject('joint_states', 'NaN in positions').zero and c.state == HALTED
    assert c.reject('joint_states', 'again') is None
    assert not tick(c, clock, q).zero
    bad = tick(c, clock, [np.nan, 0.0])  # a non-finite state given anyway
    assert bad.zero and c.gate.rejected == 3
    assert not tick(c, clock, q).zero
    zero = tick(c, clock, q, qd=[1e200, 1e200])  # the efforts overflow: the law fails
    assert zero.zero and 'control law' in c.reason
    assert tick(c, clock, q, qd=[1e200, 1e200]) is None


def test_trajectory_tracks_succeeds_and_holds_its_last_point():
    c, clock = active_controller(state_timeout=SLOW)
    q0 = np.array([0.3, -0.4])
    target = np.array([0.5, -0.1])
    g = c.submit(goal([q0 + 0.1, target], times=[1.0, 2.0]), clock.t)
    assert g.status == ACTIVE and g.start_time == clock.t and c.state == TRACKING
    interp = JointTrajectory(g.start_time, hold_reference(q0), [1.0, 2.0], [q0 + 0.1, target])
    for k in range(3):
        r = interp.sample(clock.t + 0.7)  # moving as the reference does, 0.01 off it
        q, qd = r.position + 0.01, r.velocity + 0.02
        cmd = tick(c, clock, q, qd, dt=0.7)
        assert np.abs(cmd.values).max() < 100.0  # not clamped (URDF effort 100)
        np.testing.assert_allclose(
            cmd.values, expected_ct(q, qd, interp.sample(clock.t)), rtol=1e-9, atol=1e-9
        )
    assert g.status == SUCCEEDED and c.state == HOLDING and not c.events[-1][0] == 'warning'
    cmd = tick(c, clock, target)
    np.testing.assert_allclose(
        cmd.values, expected_ct(target, np.zeros(2), hold_reference(target)), rtol=1e-9, atol=1e-9
    )
    fb = c.feedback()
    np.testing.assert_allclose(fb.desired.position, target)


def test_goals_queued_preempted_canceled_and_refused():
    c, clock = active_controller()
    q0 = np.array([0.3, -0.4])
    later = c.submit(goal([q0 + 0.1], start=clock.t + 1.0), clock.t)
    assert later.status == QUEUED
    now = c.submit(goal([q0 - 0.1]), clock.t)
    assert now.status == ACTIVE and later.status == PREEMPTED
    assert c.cancel(now) and now.status == CANCELED and not c.cancel(now)
    cmd = tick(c, clock, q0 + 0.05)  # canceled: holds the reference of then (q0, its start)
    assert c.state == HOLDING
    np.testing.assert_allclose(
        cmd.values, expected_ct(q0 + 0.05, np.zeros(2), hold_reference(q0)), rtol=1e-9
    )
    for bad, match in (
        (goal([[0.0, 0.0]], names=['shoulder', 'wrist']), "unknown: \\['wrist'\\]"),
        (goal([[0.0, 3.5]]), 'puts elbow at 3.5, outside its URDF position limits'),
    ):
        with pytest.raises(InputError, match=match):
            c.submit(bad, clock.t)
        assert bad.status == ABORTED
    # which joints, in which order (issue 34: '3 positions for 12 joint_names' said neither)
    with pytest.raises(
        InputError,
        match=r'point 0 has 1 positions for 2 joint_names: one per joint, in the order '
        r"\['shoulder', 'elbow'\]",
    ):
        TrajectoryGoal.from_points(['shoulder', 'elbow'], [(1.0, [0.0], [], [])])
    with pytest.raises(InputError, match='no point with time_from_start > 0'):
        TrajectoryGoal.from_points(['shoulder'], [(0.0, [0.0], [], [])])
    c.deactivate()
    with pytest.raises(InputError, match='the controller is inactive'):
        c.submit(goal([q0]), clock.t)


def test_a_trajectory_before_the_model_is_kept_and_started_at_the_first_state():
    c = Controller(notify=lambda *a: None)
    c.configure(ControllerSettings(kp=KP, kd=KD, state_timeout=SLOW), robot=None)
    c.activate()
    q0 = np.array([0.2, 0.1])
    g = c.submit(goal([q0 + 0.2], times=[1.0]), 0.0)
    assert (
        g.status == PENDING and 'waiting for a robot model' in g.message and 'pending' in c.reason
    )
    c.set_model(ROBOT, dynamics())
    clock = Clock()
    cmd = tick(c, clock, q0)  # the first command: hold q0, the goal from here
    assert g.status == ACTIVE and g.start_time == clock.t
    interp = JointTrajectory(clock.t, hold_reference(q0), [1.0], [q0 + 0.2])
    cmd = tick(c, clock, q0, dt=0.4)
    np.testing.assert_allclose(
        cmd.values, expected_ct(q0, np.zeros(2), interp.sample(clock.t)), rtol=1e-9
    )
    # one that turns out unusable for the model it waited for: aborted then, saying why
    c2 = Controller(notify=lambda *a: None)
    c2.configure(ControllerSettings(), robot=None)
    c2.activate()
    g2 = c2.submit(goal([[0.0]], names=['wrist']), 0.0)
    c2.set_model(ROBOT, dynamics())
    assert g2.status == ABORTED and 'wrist' in g2.message


def test_tracking_fault_holds_the_measured_pose_until_cleared():
    c, clock = active_controller(max_tracking_error=[0.2, 0.5], state_timeout=SLOW)
    q0 = np.array([0.3, -0.4])
    g = c.submit(goal([q0 + 1.0], times=[1.0]), clock.t)
    tick(c, clock, q0, dt=0.5)  # 0.5 of the way: 0.5 rad from q0 > 0.2 on the shoulder
    assert c.state == FAULT and g.status == ABORTED and 'tracking error of shoulder' in c.reason
    stuck = q0 + np.array([0.05, 0.0])
    cmd = tick(c, clock, stuck)
    fault_pose = q0  # held: the pose measured at the fault
    np.testing.assert_allclose(
        cmd.values, expected_ct(stuck, np.zeros(2), hold_reference(fault_pose)), rtol=1e-9
    )
    with pytest.raises(InputError, match='in fault'):
        c.submit(goal([q0]), clock.t)
    assert c.clear_fault() and not c.clear_fault()
    tick(c, clock, stuck)
    assert c.state == HOLDING
    c.submit(goal([stuck + 1.0], times=[1.0]), clock.t)
    tick(c, clock, stuck, dt=0.6)
    assert c.state == FAULT
    c.deactivate()
    c.activate()  # a new activation leaves it too
    tick(c, clock, stuck)
    assert c.state == HOLDING and c.fault is None
    off = Controller(notify=lambda *a: None)  # max_tracking_error 0: no check
    off.configure(
        ControllerSettings(max_tracking_error=0.0, state_timeout=SLOW), ROBOT, dynamics()
    )
    off.activate()
    tick(off, clock, q0)
    off.submit(goal([q0 + 2.0], times=[1.0]), clock.t)
    tick(off, clock, q0, dt=0.9)
    assert off.state == TRACKING


def test_reset_notice_and_state_jumps_drop_the_reference_and_hold_the_new_pose():
    c, clock = active_controller(state_timeout=SLOW)
    q0 = np.array([0.3, -0.4])
    g = c.submit(goal([q0 + 0.5], times=[2.0]), clock.t)
    tick(c, clock, q0, dt=0.5)
    c.plant_reset('the plant announced a reset')
    assert g.status == ABORTED
    home = np.zeros(2)
    cmd = tick(c, clock, home)
    assert c.state == HOLDING and c.counts['resets'] == 1
    np.testing.assert_allclose(
        cmd.values, expected_ct(home, np.zeros(2), hold_reference(home)), rtol=1e-9
    )
    # a jump the velocities cannot explain, without a notice
    g = c.submit(goal([home + 0.5], times=[2.0]), clock.t)
    tick(c, clock, home, dt=0.5)
    moved = home + np.array([0.3, 0.0])  # 0.3 rad in 1 ms at rest
    cmd = tick(c, clock, moved)
    assert g.status == ABORTED and c.counts['jumps'] == 1 and 'jumped by 0.3' in c.events[-1][1]
    np.testing.assert_allclose(
        cmd.values, expected_ct(moved, np.zeros(2), hold_reference(moved)), rtol=1e-9
    )
    # fast but explained by the velocities: no jump
    tick(c, clock, moved + 0.002, qd=[2.5, 2.5])
    assert c.counts['jumps'] == 1
    # the control clock going back (a simulator reset with its clock): dropped too
    clock.t -= 5.0
    cmd = tick(c, clock, moved)
    assert 'the control clock jumped back' in c.events[-1][1] and c.state == HOLDING


def _lagging_run(state_timeout, speed=(0.6, 0.5)):
    """
    Follow a trajectory exactly for 0.4 s, then lag 0.5 s (no tick).

    Returns the controller, its clock, the goal, the trajectory and the last measured pose.
    """
    c, clock = active_controller(state_timeout=state_timeout, max_tracking_error=0.2)
    q0 = np.array([0.3, -0.4])
    end = q0 + 2.0 * np.asarray(speed)
    g = c.submit(goal([end], times=[2.0]), clock.t)
    interp = JointTrajectory(g.start_time, hold_reference(q0), [2.0], [end])
    for _ in range(400):
        clock.tick(0.001)
        r = interp.sample(clock.t)
        c.update(inputs(clock, r.position, r.velocity), clock.t)
    assert c.state == TRACKING
    clock.tick(0.5)  # the controller's process stalls (the plant goes on)
    return c, clock, g, interp, r.position


@pytest.mark.parametrize('state_timeout', [0.1, 0.6])
@pytest.mark.parametrize('notice', ['before', 'after', 'missing'])
def test_a_reset_arriving_while_the_controller_lags_is_held_in_any_order(notice, state_timeout):
    """
    A plant reset during a lag of the controller is held, never a tracking fault.

    Issue 30: the UR5 reset half-way through its trajectory while the controller lagged 0.4 s
    faulted (0.247 > max_tracking_error 0.2). The reset state (the start pose, at rest, 0.25 rad
    behind an arm that moved forward) comes after a lag of 0.5 s, shorter (0.6) or longer (0.1)
    than state_timeout; the reset notice, stamped like that state, comes before it, after it or
    never.
    """
    c, clock, g, _, _ = _lagging_run(state_timeout)
    home = np.array([0.3, -0.4])  # the initial pose, where the reset puts the arm, at rest
    t_reset = clock.t
    if notice == 'before':
        c.plant_reset('the plant announced a reset', t_reset)
        assert g.status == ACTIVE  # (the states before the reset's are still followed)
    cmd = c.update(inputs(clock, home), clock.t)
    if notice == 'after':
        c.plant_reset('the plant announced a reset', t_reset)
    assert c.fault is None and c.state == HOLDING and g.status == ABORTED, (c.state, c.reason)
    cmd = tick(c, clock, home)
    np.testing.assert_allclose(
        cmd.values, expected_ct(home, np.zeros(2), hold_reference(home)), rtol=1e-9
    )
    for _ in range(50):  # and it stays held
        cmd = tick(c, clock, home)
    assert c.state == HOLDING and c.fault is None and not cmd.zero


def test_a_late_notice_withdraws_the_fault_its_reset_raised():
    """
    A reset the velocities can explain is a tracking fault until its notice comes.

    The shoulder moved forward at 0.46 rad/s; after a lag of 0.5 s (shorter than state_timeout)
    the reset state is 0.1 rad ahead of the last measured pose, which the velocities allow, and
    0.32 rad behind the reference: a tracking fault. The notice, stamped like that state,
    withdraws it; without a notice it stays (it cannot be told from a real one).
    """
    for notice in (True, False):
        c, clock, g, interp, last = _lagging_run(0.6, speed=(0.6, 0.0))
        home = last + np.array([0.1, 0.0])  # reset somewhere the motion could have reached
        t_reset = clock.t
        c.update(inputs(clock, home), clock.t)
        assert c.state == FAULT and 'tracking error of shoulder' in c.reason
        if notice:
            c.plant_reset('the plant announced a reset', t_reset)
            assert c.fault is None and 'fault withdrawn' in c.events[-1][1]
        cmd = tick(c, clock, home)
        assert c.state == (HOLDING if notice else FAULT)
        np.testing.assert_allclose(
            cmd.values, expected_ct(home, np.zeros(2), hold_reference(home)), rtol=1e-9
        )
        assert g.status == ABORTED


def test_a_real_tracking_error_after_a_lag_or_a_stall_is_still_a_fault():
    """
    After a lag the law is still judged: a tracking error the velocities explain is a fault.

    Lag shorter than state_timeout: the first state after it, 0.27 rad behind its reference and
    reached at the velocities it reports (the shoulder slowed from 0.46 to 0.3 rad/s: a slipping
    gear), is a fault. A stall (longer than state_timeout): the stall rule holds the measured pose
    (the robot was not commanded), and an arm that then slides away from it faults.
    """
    c, clock, g, interp, last = _lagging_run(0.6, speed=(0.6, 0.0))
    v = np.array([0.3, 0.0])
    q = last + v * 0.5
    c.update(inputs(clock, q, v), clock.t)
    assert c.state == FAULT and 'tracking error of shoulder' in c.reason and c.counts['jumps'] == 0
    c, clock, g, interp, last = _lagging_run(0.1, speed=(0.6, 0.0))
    q = last + v * 0.5
    c.update(inputs(clock, q, v), clock.t)
    assert c.state == HOLDING and c.fault is None and g.status == ABORTED
    slip = np.array([-1.0, 0.0])  # then it slides back at 1 rad/s
    for _ in range(300):
        q = q + slip * 0.001
        tick(c, clock, q, slip)
    assert c.state == FAULT and c.counts['jumps'] == 0


def test_jumps_are_told_from_motion_by_the_direction_of_the_velocities():
    """
    The jump rule: a change outside [min(v0, v1), max(v0, v1)] dt, +- jump_tolerance.

    After a 0.3 s lag (shorter than state_timeout) of an arm at 0.6 rad/s: found 0.15 rad ahead at
    the same speed is motion; found 0.1 rad behind is a jump (the old rule, |v| dt + tolerance,
    allowed 0.23 either way); found 0.3 ahead at rest is motion that slowed down.
    """
    for change, v1, jump in (
        (0.15, 0.6, False),
        (-0.1, 0.6, True),
        (-0.1, 0.0, True),
        (0.15, 0.0, False),
    ):
        c, clock = active_controller(state_timeout=1.0, max_tracking_error=0.0)
        q0 = np.array([0.3, -0.4])
        v0 = np.array([0.6, 0.0])
        tick(c, clock, q0, v0)
        tick(c, clock, q0 + v0 * 0.001, v0)
        tick(c, clock, q0 + v0 * 0.001 + [change, 0.0], [v1, 0.0], dt=0.3)
        assert c.counts['jumps'] == int(jump), (change, v1, c.events[-1])
        if jump:
            assert 'jumped by' in c.events[-1][1] and 'allow' in c.events[-1][1]


def test_a_pose_outside_the_limits_is_held_and_a_way_back_inside_accepted():
    c, clock = active_controller(q0=(3.2, 0.0))  # shoulder beyond its upper limit 2.9
    assert c.state == HOLDING
    with pytest.raises(InputError, match='the last point .* must bring it back inside'):
        c.submit(goal([[3.1, 0.0]]), clock.t)
    with pytest.raises(InputError, match='beyond where it is'):
        c.submit(goal([[3.4, 0.0], [2.0, 0.0]], times=[0.5, 1.0]), clock.t)
    g = c.submit(goal([[3.0, 0.0], [2.5, 0.0]], times=[0.5, 1.0]), clock.t)
    assert g.status == ACTIVE
    # the limit tolerance: a waypoint a hair outside a limit (numerical noise) is accepted
    c2, clock2 = active_controller(q0=(0.0, 0.0))
    c2.submit(goal([[2.9 + 5e-5, -2.9 - 5e-5]]), clock2.t)
    with pytest.raises(InputError, match='limit_tolerance 0.0001'):
        c2.submit(goal([[2.9 + 5e-4, 0.0]]), clock2.t)


def test_position_limits_rule():
    names = ['a', 'b', 'c']
    lower, upper = (
        np.array([-1.0, -np.inf, 0.0]),
        np.array([1.0, np.inf, 0.0]),
    )  # c: no range given (0, 0)
    start = np.zeros(3)
    check_position_limits(names, [[1.0, 1e6, 5.0], [-1.0, -1e6, -5.0]], start, lower, upper)
    with pytest.raises(
        InputError, match=r'point 1 puts a at 1.5, outside its URDF position limits \[-1, 1\]'
    ):
        check_position_limits(names, [[0.0, 0.0, 0.0], [1.5, 0.0, 0.0]], start, lower, upper)
    check_position_limits(names, [[1.0 + 1e-7, 0.0, 0.0]], start, lower, upper, tolerance=1e-6)


def test_model_swap_deactivates_and_an_unusable_model_waits_for_a_usable_one():
    c, clock = active_controller(command_joints=('shoulder', 'elbow'))
    renamed = spart.urdf2robot(urdf_path('planar_two_link'))[0]
    zero = c.set_model(renamed, dynamics(renamed))
    assert zero.zero and c.state == INACTIVE and 'robot model changed' in c.reason
    assert tick(c, clock, [0.0, 0.0]) is None
    c.activate()
    assert not tick(c, clock, [0.0, 0.0]).zero
    zero = c.set_model(
        SC, dynamics(SC, np.zeros(3))
    )  # no joint of the command joints: cannot control
    assert zero.zero and c.state == INACTIVE and 'cannot control this model' in c.reason
    assert (
        "command_joints ['shoulder', 'elbow'] are not moving joints of the model 'Chaser'"
        in c.reason
    )
    with pytest.raises(InputError, match='cannot control this model'):
        c.activate()
    assert c.set_model(ROBOT, dynamics()) is None and c.state == INACTIVE
    c.activate()
    assert not tick(c, clock, [0.0, 0.0]).zero


def test_gravity_compensation_damps_and_refuses_trajectories():
    c = Controller(notify=lambda *a: None)
    c.configure(ControllerSettings(mode='gravity_compensation', kd=5.0), ROBOT, dynamics())
    c.activate()
    clock = Clock()
    q, qd = np.array([0.4, 0.7]), np.array([0.3, -0.6])
    cmd = tick(c, clock, q, qd)
    z3 = np.zeros(3)
    # g(q) - H(q) kd qd: the ID at zero velocity of the acceleration -kd qd
    expected = ref.expected_id(
        ROBOT,
        np.eye(3),
        z3,
        z3,
        z3,
        q,
        np.zeros(2),
        -5.0 * qd,
        z3,
        z3,
        np.zeros(6),
        np.zeros((6, ROBOT.n_links_joints)),
        G,
        floating=False,
    )[0]
    np.testing.assert_allclose(cmd.values, expected, rtol=1e-9, atol=1e-9)
    with pytest.raises(InputError, match='gravity_compensation holds no position reference'):
        c.submit(goal([q]), clock.t)


def test_run_time_settings_between_two_ticks():
    c, clock = active_controller()
    q0, q = np.array([0.3, -0.4]), np.array([0.32, -0.41])
    c.apply_settings(kp=[10.0, 30.0], effort_limits=[50.0])
    cmd = tick(c, clock, q)
    qdd = KD * (0 - 0) + np.array([10.0, 30.0]) * (q0 - q)
    z3 = np.zeros(3)
    expected = ref.expected_id(
        ROBOT,
        np.eye(3),
        z3,
        z3,
        z3,
        q,
        np.zeros(2),
        qdd,
        z3,
        z3,
        np.zeros(6),
        np.zeros((6, ROBOT.n_links_joints)),
        G,
        floating=False,
    )[0]
    np.testing.assert_allclose(cmd.values, np.clip(expected, -50, 50), rtol=1e-9)
    with pytest.raises(InputError, match='structural settings take a reconfigure'):
        c.apply_settings(mode='floating_base')
    with pytest.raises(InputError, match='kd: expected one value or one per command joint'):
        c.apply_settings(kd=[1.0, 2.0, 3.0])
    with pytest.raises(InputError, match='state_timeout'):
        c.apply_settings(state_timeout=-1.0)
    assert c.settings.kd == KD and c.gate.state_timeout == 0.1


def test_effort_limits_clamp_every_command():
    c, clock = active_controller(effort_limits=[1.0, 2.0])
    cmd = tick(c, clock, [0.3, -0.4])
    assert np.all(np.abs(cmd.values) <= [1.0, 2.0]) and np.abs(cmd.values).max() > 0.5


def test_free_floating_modes_and_a_space_mode_through_the_same_entry():
    base = SimpleNamespace(
        R_b=ref.rot([0.2, 1.0, -0.3], 0.7),
        p_b=np.array([0.1, -0.2, 0.3]),
        v_b=np.array([0.01, 0.02, -0.01]),
        w_b=np.array([0.02, -0.01, 0.03]),
    )
    fd = dynamics(SC, np.zeros(3))
    c = Controller(notify=lambda *a: None)
    c.configure(ControllerSettings(mode='floating_base', floating=True, kp=KP, kd=KD), SC, fd)
    c.activate()
    clock = Clock()
    q0 = np.array([0.1, 0.2, -0.3])
    tick(c, clock, q0, base=base)
    q1, qd1 = q0 + 0.01, np.array([0.1, -0.1, 0.2])
    cmd = tick(c, clock, q1, qd1, base=base)
    r = hold_reference(q0)
    qdd = KD * (0 - qd1) + KP * (q0 - q1)
    taum, _, _ = ref.expected_floating_id(
        SC,
        base.R_b,
        base.p_b,
        base.v_b,
        base.w_b,
        q1,
        qd1,
        qdd,
        np.zeros(6),
        np.zeros((6, SC.n_links_joints)),
        np.zeros(3),
    )
    np.testing.assert_allclose(cmd.values, taum, rtol=1e-9, atol=1e-9)
    del r
    s = Controller(notify=lambda *a: None)
    s.configure(
        ControllerSettings(mode='resolved_rate', floating=True, command_interface='velocity'),
        SC,
        fd,
    )
    s.activate()
    cmd = tick(s, clock, q0, base=base)
    assert s.state == HOLDING and np.all(np.isfinite(cmd.values))
    s.set_reference('ee_twist', (np.array([0, 0, 0, 0.01, 0, 0]), 'world'), clock.now)
    cmd = tick(s, clock, q0, base=base)
    assert s.state == TRACKING and np.abs(cmd.values).max() > 0
    with pytest.raises(InputError, match='mode resolved_rate follows end-effector references'):
        s.submit(goal([q0], names=SC.q_names), clock.t)
    with pytest.raises(InputError, match="reference 'base_pose'"):
        s.set_reference('base_pose', (np.eye(3), np.zeros(3)))


# ---------------------------------------------------------------------------------------------
# invariants over random event sequences
# ---------------------------------------------------------------------------------------------

LIMITS = np.array([30.0, 20.0])


class ControllerMachine(RuleBasedStateMachine):
    """
    Random sequences of what a robot's life brings.

    The plant holds the last command it got (ros2_control's effort controllers have no timeout),
    which must be zero whenever the controller is not commanding.
    """

    @initialize()
    def start(self):
        self.c = Controller(notify=lambda *a: None)
        _record_transitions(self.c)
        self.c.configure(
            ControllerSettings(kp=KP, kd=KD, effort_limits=tuple(LIMITS), max_tracking_error=0.3),
            ROBOT,
            dynamics(),
        )
        self.clock = Clock()
        self.applied = np.zeros(2)  # what the plant applies now
        self.q = np.array([0.2, -0.3])
        self.qd = np.zeros(2)
        self.c.activate()

    def send(self, cmd, fresh):
        """Check the invariants on one command and apply ``cmd`` to the plant."""
        if cmd is None:
            return
        assert cmd.values.shape == (2,) and np.all(np.isfinite(cmd.values))
        assert np.all(np.abs(cmd.values) <= LIMITS)
        if cmd.zero:
            assert not cmd.values.any()
        else:
            assert fresh, 'a command without a fresh valid state'
        self.applied = np.array(cmd.values)

    def step(self, q=None, qd=None, dt=0.002, received=None, stamp=None):
        self.clock.tick(dt)
        if q is not None:
            self.q, self.qd = (
                np.asarray(q, dtype=float),
                np.asarray(qd if qd is not None else self.qd, dtype=float),
            )
        x = inputs(self.clock, self.q, self.qd, received=received, stamp=stamp)
        fresh = received is None or self.clock.now - received <= self.c.settings.state_timeout
        self.send(self.c.update(x, self.clock.t), fresh and np.all(np.isfinite(self.q)))

    @rule(dq=st.floats(-0.01, 0.01), v=st.floats(-1.0, 1.0))
    def fresh_state(self, dq, v):
        self.step(self.q + dq, np.array([v, -v]))

    @rule()
    def activate(self):
        if self.c.state == INACTIVE and not self.c.model_error:
            self.c.activate()

    @rule()
    def deactivate(self):
        self.send(self.c.deactivate(), False)

    @rule(
        point=st.lists(st.floats(-3.2, 3.2), min_size=2, max_size=2),
        duration=st.floats(0.05, 2.0),
        start=st.floats(-0.5, 0.5),
    )
    def trajectory(self, point, duration, start):
        try:
            self.c.submit(
                goal([point], times=[duration], start=self.clock.t + start if start > 0 else 0.0),
                self.clock.t,
            )
        except InputError:
            pass

    @rule()
    def reset_notice(self):
        self.c.plant_reset()
        self.q = np.zeros(2)

    @rule(age=st.floats(0.05, 1.0))
    def stale_state(self, age):
        self.clock.tick(age)
        self.send(
            self.c.check(inputs(self.clock, self.q, self.qd, received=self.clock.now - age)), False
        )

    @rule(age=st.floats(0.0, 1.0))
    def repeated_stamp(self, age):
        self.clock.now += age
        x = inputs(self.clock, self.q, self.qd)
        self.send(self.c.update(x, self.clock.t), True)

    @rule()
    def nan_state(self):
        self.send(self.c.reject('joint_states', 'NaN'), False)
        self.clock.tick(0.001)
        self.send(self.c.update(inputs(self.clock, [np.nan, 0.0]), self.clock.t), False)

    @rule(joint=st.integers(0, 1), beyond=st.floats(0.01, 1.0))
    def limit_violation(self, joint, beyond):
        q = self.q.copy()
        q[joint] = 2.9 + beyond
        self.step(q)

    @rule(speed=st.floats(-100.0, 100.0))
    def tracking_fault(self, speed):
        """
        Move away from the reference at ``speed`` rad/s (a collision, a slipping gear).

        Consistently with the velocities: no jump, the tracking error grows.
        """
        for _ in range(4):
            self.step(self.q + speed * 0.002, np.full(2, speed))

    @rule()
    def model_swap(self):
        self.send(self.c.set_model(ROBOT, dynamics()), False)

    @rule()
    def clear_fault(self):
        self.c.clear_fault()

    @rule(kp=st.floats(0.0, 500.0))
    def new_gains(self, kp):
        self.c.apply_settings(kp=kp)

    @rule()
    def cleanup_and_configure(self):
        if self.c.state == INACTIVE:
            self.c.cleanup()
            self.c.configure(self.c_settings(), ROBOT, dynamics())

    def c_settings(self):
        return ControllerSettings(
            kp=KP, kd=KD, effort_limits=tuple(LIMITS), max_tracking_error=0.3
        )

    @invariant()
    def nothing_applied_unless_commanding(self):
        if not self.c.commanding:
            assert not self.applied.any(), (
                f'{self.applied} left applied in state {self.c.state} ({self.c.reason})'
            )

    @invariant()
    def state_is_known(self):
        assert self.c.state in (UNCONFIGURED, INACTIVE, HALTED, HOLDING, TRACKING, FAULT)


#: the controller's calls that may change its state
CALLS = (
    'configure',
    'cleanup',
    'activate',
    'deactivate',
    'shutdown',
    'set_model',
    'update',
    'check',
    'reject',
    'clear_fault',
    'plant_reset',
    'submit',
    'submit_pose',
    'cancel',
)


def _record_transitions(c):
    """
    Make every call of ``c`` that changes its state check the change against the table.

    spart_ros.control.states.TRANSITIONS (the documentation's state diagram is drawn from it).
    """
    for name in CALLS:
        method = getattr(c, name)

        def checked(*args, _method=method, _name=name, **kwargs):
            before = c.state
            try:
                return _method(*args, **kwargs)
            finally:
                after = c.state
                assert before == after or allowed(before, after), (
                    f'{_name}: {before} -> {after} is not in spart_ros.control.states.TRANSITIONS'
                )

        setattr(c, name, checked)


TestControllerMachine = ControllerMachine.TestCase
TestControllerMachine.settings = settings(
    max_examples=60,
    stateful_step_count=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


def test_a_goals_point_index_is_the_point_followed_toward():
    """
    TrajectoryGoal.point_index: FollowJointTrajectory feedback's index, in the client's numbering.

    MoveIt's first point at time 0 (the current state) is skipped but counted: the motion heads for
    point 1 until its time, then point 2, and stays on the last one after the end.
    """
    c, clock = active_controller()
    q0 = np.array([0.3, -0.4])
    g = TrajectoryGoal.from_points(
        ['shoulder', 'elbow'],
        [(0.0, q0, [], []), (0.003, q0 + 0.001, [], []), (0.006, q0 + 0.002, [], [])],
        start=clock.t + 0.002,
    )
    assert g.first == 1 and g.point_index(clock.t) == 1  # not started: its first point
    c.submit(g, clock.t)
    seen = []
    for _ in range(12):
        tick(c, clock, q0)
        seen.append((round(clock.t - g.start_time, 6), g.point_index(clock.t)))
    assert seen == [(round(k * 0.001 - 0.001, 6), 1 if k < 4 else 2) for k in range(12)], (
        seen
    )  # before the start and until 3 ms: point 1; from 3 ms on: point 2 (the last)


def test_every_row_of_the_transition_table_is_taken():
    """
    A scripted life takes every row of spart_ros.control.states.TRANSITIONS, each checked.

    (test_controller_machine checks that every change of state is a row; this that no row is
    a wish: each is a change the controller makes.)
    """
    from spart_ros.control.states import TRANSITIONS

    taken = set()
    c = Controller(notify=lambda *a: None)
    _record_transitions(c)
    calls = {name: getattr(c, name) for name in CALLS}

    def record(name, *args, **kwargs):
        before = c.state
        out = calls[name](*args, **kwargs)
        taken.add((before, c.state))
        return out

    clock = Clock()
    q0 = np.array([0.3, -0.4])

    def state(q, qd=None, stale=False, **kw):
        clock.tick(0.001)
        x = inputs(clock, q, qd, received=clock.now - 1.0 if stale else None, **kw)
        if stale:
            return record('check', x)
        return record('update', x, clock.t)

    def activate():
        record('activate')
        state(q0)
        assert c.state == HOLDING

    def start_tracking(duration=0.5):
        record('submit', goal([q0 + 0.01], times=[duration]), clock.t)
        state(q0)
        assert c.state == TRACKING, c.reason

    def fault():
        q = q0.copy()
        for _ in range(20):  # away from the reference, consistently with the velocity
            q = q + 0.02
            state(q, np.full(2, 20.0))
            if c.state == FAULT:
                return q
        raise AssertionError(f'no fault: {c.state} {c.reason}')

    record(
        'configure', ControllerSettings(kp=KP, kd=KD, max_tracking_error=0.2), ROBOT, dynamics()
    )
    activate()  # inactive -> halted -> holding
    start_tracking()  # holding -> tracking
    state(q0, stale=True)  # tracking -> halted
    state(q0)  # halted -> tracking (within resume_tolerance)
    assert c.state == TRACKING
    for _ in range(600):  # to its end: tracking -> holding
        state(q0 + 0.01)
    assert c.state == HOLDING
    state(q0, stale=True)  # holding -> halted
    state(q0)
    fault()  # holding -> fault
    record('clear_fault')
    state(q0)  # fault -> holding
    start_tracking()
    q = fault()  # tracking -> fault
    state(q, stale=True)  # still fault (the fault comes first), and halted
    record('clear_fault')  # fault -> halted: the input is still stale
    state(q)  # halted -> holding
    fault()
    record('deactivate')  # fault -> inactive
    activate()
    record('deactivate')  # holding -> inactive
    activate()
    start_tracking()
    record('deactivate')  # tracking -> inactive
    record('activate')
    record('deactivate')  # halted -> inactive
    record('cleanup')  # inactive -> unconfigured
    record('shutdown')  # unconfigured -> finalized
    for last in ('inactive', 'halted', 'holding', 'tracking', 'fault'):
        c = Controller(notify=lambda *a: None)
        _record_transitions(c)
        calls = {name: getattr(c, name) for name in CALLS}
        record('configure', ControllerSettings(kp=KP, kd=KD), ROBOT, dynamics())
        if last != 'inactive':
            record('activate')
        if last in ('holding', 'tracking', 'fault'):
            state(q0)
        if last in ('tracking', 'fault'):
            start_tracking()
        if last == 'fault':
            fault()
        assert c.state == last
        record('shutdown')  # -> finalized
    rows = {(t.source, t.target) for t in TRANSITIONS}
    assert rows <= taken, f'rows never taken: {sorted(rows - taken)}'
