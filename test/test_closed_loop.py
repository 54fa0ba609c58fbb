"""
The closed loop end to end, beyond what the main job checks (test_demo.py).

The INSTALLED launch/sim_demo.launch.py (spart_sim + spart_controller + spart_dynamics, three
processes, one YAML: config/demo_<robot>.yaml plus a few test parameters) run through
scripts/local_launch.py, observed by the main job's Monitor (every topic into an MCAP bag), each
run in its own namespace and over before the next starts. Both runs are LOCKSTEP (the sim advances
2 ms per command), so that what they measure does not depend on how busy the machine is; the checks
use the bag and references of their own (closed_loop_helpers.py), not what the nodes report:

- SC_3DoF, free-floating, zero gravity, floating_base control, the base TUMBLING and DRIFTING from
  the start: tracking RMS < 0.01 rad after the first second against the trajectory's own function
  (not the controller's reported error); total linear and angular momentum (non-zero here),
  computed with the core from every recorded state, constant to 1e-8 kg m/s and kg m^2/s; the
  base acceleration MuJoCo shows (IMU, zero gravity) = the one SPART's Floating_ID predicts from
  the same state and the efforts the sim applied, to 1e-9 relative; two stray commands (wrong
  length, NaN) published into the running loop are dropped by the sim, which keeps applying the
  controller's last command, and the loop goes on.
- KUKA iiwa, fixed base, gravity, computed torque: the controller answers every state exactly
  once (the loop would stall otherwise; no stamp is answered twice) and tracks to RMS < 0.001 rad;
  then an end-effector pose goal on ~/ee_goal (spart_interfaces/EndEffectorGoal: 12 cm in 1 s,
  a Cartesian path, stamped to start 1.5 s later): the end effector (its URDF frame on the last
  link: the default ee_link) stays within 1 mm of the straight line at every recorded state and
  reaches the target.

- Both: the offline closed loop (spart_ros.sim.closed_loop.simulate: the same Controller on the
  same MuJoCo plant, no ROS) given the same parameters, initial state and trajectory message
  reproduces the recorded run: the same joint states at every recorded stamp (KUKA to 1e-12
  rad: bit for bit up to rounding; SC_3DoF, whose base state crosses ROS as a quaternion, to
  1e-9, until the stray commands: a lockstep sim steps on every command message, dropped ones
  too), so the offline runs that replace over-ROS ones in other tests prove the same law.

What test_sim_plant.py / test_sim_node.py prove with torques from a test (momentum, accelerations
against the core, a lone sim dropping bad commands) and what test_demo.py checks in real time
(the watchdog on the wall clock, latency, plots, bags) is not repeated.  The floating-base run
starts with a workaround: in lockstep the controller may never answer its first state (see
LoopRun.start).
"""

import math
import re

import closed_loop_helpers as check
from closed_loop_helpers import APPROACH, LoopRun, LoopTrajectory
from node_helpers import RELIABLE_QOS, trajectory_start
import numpy as np
import pytest

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.filterwarnings('ignore::spart_ros.core.errors.SpartWarning'),
    # lockstep, but the monitor records best-effort while the loop runs up to ~3x real time: it
    # must keep up (a run beside other tests recorded 483 of ~900 states)
    pytest.mark.realtime,
]

SC_JOINTS = ['Joint_1', 'Joint_2', 'Joint_3']
KUKA_JOINTS = [f'lbr_iiwa_joint_{k}' for k in range(1, 8)]
#: LOCKSTEP (the sim advances 2 ms per command): the runs do not depend on how busy the machine
#: is; the sim's time stands still while the loop waits, so only a dead loop should trip the
#: watchdog (a busy machine can hold it up for a fraction of a second)
LOCKSTEP = {
    'lockstep': True,
    'lockstep_steps': 2,
    'lockstep_republish_period': 0.5,
    'joint_command_topic': '~/joint_commands',
    'state_timeout': 2.0,
}
#: the spacecraft starts tumbling and drifting: non-zero momentum to keep
SC_EXTRA = dict(
    LOCKSTEP,
    initial_base_angular_velocity=[0.03, -0.02, 0.05],
    initial_base_linear_velocity=[0.02, 0.01, -0.01],
)
KUKA_EXTRA = LOCKSTEP
MOMENTUM_TOLERANCE = 1e-8  # kg m/s and kg m^2/s (measured ~4e-10: RK4's error at 1 ms steps)
ACCELERATION_TOLERANCE = 1e-9  # relative to the largest acceleration (measured ~3e-15)
BAD_COMMANDS = ([1.0, 2.0], [float('nan'), 0.0, 0.0])


def _robot(name):
    from pathlib import Path

    from ament_index_python.packages import get_package_share_directory
    from spart_ros import spart

    return spart.urdf2robot(
        str(Path(get_package_share_directory('spart_ros')) / 'urdf' / f'{name}.urdf')
    )[0]


@pytest.fixture(scope='module')
def sc(tmp_path_factory):
    """SC_3DoF in lockstep, tumbling; a 3 s loop in joint space; two stray bad commands in it."""
    from std_msgs.msg import Float64MultiArray

    run = LoopRun(
        tmp_path_factory.mktemp('sc'), 'SC_3DoF', 'cl_sc', SC_JOINTS, SC_EXTRA, floating=True
    )
    run.reference = LoopTrajectory(
        SC_JOINTS, np.zeros(3), np.array([0.5, -0.4, 0.3]), np.array([0.0, 0.3, 0.6]), 3.0
    )
    try:
        run.start()
        start = run.send(run.reference, lead=1.5)  # lockstep runs up to ~3x real time here
        run.run_until(start + APPROACH + 1.0)
        stray = run.monitor.node.create_publisher(
            Float64MultiArray, run.topic('effort_controller/commands'), RELIABLE_QOS
        )
        # the sim, and the monitor's bag recorder (which also hands the monitor the commands)
        run.wait(
            lambda: stray.get_subscription_count() >= 2,
            10.0,
            'the sim and the monitor subscribing',
        )
        for values in BAD_COMMANDS:
            stray.publish(Float64MultiArray(data=values))
            run.monitor.spin(0.05)
        run.run_until(run.reference.end + 0.2)
        run.stop()
        yield run
    finally:
        run.close()


def test_floating_spacecraft_tracks_its_trajectory(sc):
    data, ref = sc.data, sc.reference
    after = ref.start + APPROACH
    _, rms, emax, t = check.tracking(data, ref, after)
    print(
        f'\nSC_3DoF (lockstep, tumbling base): tracking RMS {rms} rad, max {emax} rad '
        f'over {len(t)} states'
    )
    assert np.sum(t <= ref.end) > 0.5 * ref.duration / 0.002, (
        sc.describe()
    )  # (the monitor may miss some)
    assert np.all(rms < 0.01), (rms, sc.describe())
    assert np.nanmax(check.attitude_change(data)) > math.radians(2.0)  # the base reacted


def test_free_floating_momentum_is_constant_and_base_acceleration_is_floating_id(sc):
    """
    No external force on the spacecraft.

    [L about the world origin; p], computed by the core from each recorded state (odometry + joint
    states), keeps its initial value, which is not zero (the base starts tumbling and drifting). At
    25 states spread over the motion, the IMU's linear acceleration (MuJoCo; zero gravity: the
    acceleration of the base link origin, in b) equals Floating_ID's prediction from the same state
    and the efforts the sim echoed.
    """
    robot = _robot('SC_3DoF')
    data = sc.data
    h = check.momentum(robot, data)
    ok = ~np.isnan(h).any(axis=1)
    assert ok.sum() > 0.9 * len(data), 'odometry missing for many states'
    h0 = h[ok][0]
    drift = np.abs(h[ok] - h0).max(axis=0)
    print(
        f'\nmomentum over {ok.sum()} states: initial L {h0[:3]}, p {h0[3:]}; drift '
        f'angular {drift[:3].max():.1e}, '
        f'linear {drift[3:].max():.1e}'
    )
    assert np.linalg.norm(h0[:3]) > 1.0 and np.linalg.norm(h0[3:]) > 1.0, h0  # not trivially zero
    assert drift.max() < MOMENTUM_TOLERANCE, drift
    ref = sc.reference
    moving = np.flatnonzero((data.t > ref.start + ref.approach) & (data.t < ref.end))
    rows = moving[np.linspace(0, len(moving) - 1, 25).astype(int)]
    pairs = check.base_acceleration_check(robot, data, rows)
    assert len(pairs) >= 20, len(pairs)
    scale = max(np.abs(a).max() for a, _ in pairs)
    worst = max(np.abs(a - b).max() for a, b in pairs) / scale
    print(
        f'base acceleration MuJoCo vs Floating_ID: largest difference {worst:.1e} of {scale:.2e} '
        'm/s^2'
    )
    assert scale > 1e-3 and worst < ACCELERATION_TOLERANCE, (worst, scale)


def test_stray_bad_commands_are_dropped_and_the_loop_goes_on(sc):
    """
    Two commands of another publisher, one of 2 values for 3 joints and one with a NaN.

    Land in the middle of the motion: the sim drops both, saying which command it keeps applying,
    which is one the controller published; no effort the sim echoes carries the stray values; the
    loop goes on (it tracked: test above). (Every echoed effort is a controller command too, up to
    the commands the monitor may have missed on a busy machine: their publishers keep 10.)
    """
    log = sc.log
    assert (
        "expected 3 values for joints ['Joint_1', 'Joint_2', 'Joint_3'], got 2: dropped" in log
    ), sc.describe()
    assert "non-finite value for joints ['Joint_1']" in log, sc.describe()
    twins = [m for _, m in sc.messages[sc.topic('spart_controller/joint_commands')]]
    sent = {tuple(m.effort) for m in twins} | {
        tuple(m.data)
        for _, m in sc.messages[sc.topic('effort_controller/commands')]
        if len(m.data) == 3
    }
    kept = re.findall(r'dropped \(keeping the previous command \[([^]]*)\]', log)
    assert len(kept) == 2
    for values in kept:
        assert tuple(float(x) for x in values.split(',')) in sent, values
    data = sc.data
    echoed = data.effort[data.t >= sc.reference.start]
    assert len(echoed) and np.isfinite(echoed).all()
    assert not np.any((echoed[:, 0] == 1.0) & (echoed[:, 1] == 2.0)) and not np.any(
        np.all(echoed[:, 1:] == 0, axis=1)
    )
    strangers = sum(tuple(e) not in sent for e in echoed)
    missed = sc.statuses()[-1].commands - len(twins)  # commands published but not recorded
    assert strangers <= max(missed, 0), (strangers, missed)
    others = [
        ln
        for ln in sc.errors_while_running()
        if ': dropped (keeping the previous command' not in ln
    ]
    assert sc.exit_code == 0 and not others, sc.describe()


#: the end-effector goal after the KUKA's joint trajectory: the target's offset from where the
#: end effector is (m), its duration (s), how long after the trajectory's end it starts (s)
EE_GOAL_MOVE, EE_GOAL_DURATION, EE_GOAL_DELAY = np.array([0.08, -0.06, -0.06]), 1.0, 1.5


def _kuka_ee_pose(q):
    """(R, p) of the KUKA's last link frame (the controller's default end effector), world."""
    from spart_ros.core.inverse_kinematics import InverseKinematics

    robot = _robot('kuka_iiwa')
    return InverseKinematics(robot, 'lbr_iiwa_link_7').pose(
        q, np.eye(3), np.asarray(robot.base_link.T)[:3, 3]
    )


@pytest.fixture(scope='module')
def kuka(tmp_path_factory):
    """KUKA iiwa in lockstep (2 ms per command); a 2 s loop in joint space, then a pose goal."""
    from builtin_interfaces.msg import Time

    from spart_interfaces.msg import EndEffectorGoal

    run = LoopRun(tmp_path_factory.mktemp('kuka'), 'kuka_iiwa', 'cl_kuka', KUKA_JOINTS, KUKA_EXTRA)
    run.reference = LoopTrajectory(
        KUKA_JOINTS,
        np.zeros(7),
        np.array([0.6, 0.4, -0.5, 0.5, 0.7, -0.5, 0.8]),
        np.array([0.3, 0.0, 0.4, 0.0, -0.3, 0.3, 0.0]),
        2.0,
    )
    try:
        run.start()
        run.send(run.reference, lead=1.5)  # lockstep runs up to ~3x real time here
        run.run_until(run.reference.end + 0.1)
        # the pose goal: from the pose the trajectory ended at (its start, q = 0), stamped ahead
        R, p = _kuka_ee_pose(run.reference.q_start)
        start = round(run.monitor.sim_time() + EE_GOAL_DELAY, 3)
        msg = EndEffectorGoal(duration=EE_GOAL_DURATION, path='cartesian')
        msg.header.stamp = Time(sec=int(start), nanosec=int(round(start % 1.0 * 1e9)))
        msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = (p + EE_GOAL_MOVE).tolist()
        from spart_ros.core.attitude import quaternion_to_ros

        o = msg.pose.orientation
        o.x, o.y, o.z, o.w = quaternion_to_ros(R)
        pub = run.monitor.node.create_publisher(
            EndEffectorGoal, run.topic('spart_controller/ee_goal'), RELIABLE_QOS
        )
        run.wait(
            lambda: pub.get_subscription_count() >= 1,
            10.0,
            'the controller subscribing to ~/ee_goal',
        )
        trajectories = run.monitor.status[-1][1].trajectories
        pub.publish(msg)
        run.wait(
            lambda: run.monitor.status[-1][1].trajectories > trajectories,
            10.0,
            'the pose goal accepted',
        )
        run.run_until(start + EE_GOAL_DURATION + 0.1)
        # when it started: its stamp, or when the controller had it if it came late (lockstep runs
        # fast)
        started = trajectory_start(run.log, 2)
        assert started is not None, run.describe()
        run.ee_goal = (started, R, p, msg)
        run.stop()
        yield run
    finally:
        run.close()


def test_fixed_arm_tracks_in_lockstep_one_command_per_state(kuka):
    """
    In lockstep the sim only moves on a command, and the controller ignores a repeated stamp.

    The run reaching its end shows every state was answered; the stamped commands show none was
    answered twice.
    """
    data, ref = kuka.data, kuka.reference
    after = ref.start + APPROACH
    _, rms, emax, t = check.tracking(data, ref, after, until=ref.end + 0.5)  # (then the pose goal)
    print(f'\nKUKA iiwa (lockstep): tracking RMS {rms} rad, max {emax} rad over {len(t)} states')
    assert np.sum(t <= ref.end) > 0.5 * ref.duration / 0.002, (
        kuka.describe()
    )  # (the monitor may miss some)
    assert np.all(rms < 0.001), (rms, kuka.describe())
    stamps = np.round(data.t * 1e9).astype(np.int64)
    assert np.all(stamps % 2_000_000 == 0)
    since = int(round(ref.start * 1e9))  # (the monitor found the stamped commands' topic by then)
    answered = [
        s
        for s in (
            check.stamp_ns(m.header.stamp)
            for _, m in kuka.messages[kuka.topic('spart_controller/joint_commands')]
        )
        if s >= since
    ]
    states = stamps[stamps >= since]
    assert len(set(answered)) == len(answered), 'a state answered twice'
    assert len(answered) > 0.5 * len(states)
    assert kuka.exit_code == 0 and not kuka.errors_while_running(), kuka.describe()


def test_fixed_arm_follows_a_pose_goal_on_a_straight_line(kuka):
    start, R_s, p_s, _ = kuka.ee_goal
    data = kuka.data
    rows = np.flatnonzero(data.t >= start - 0.05)
    p = np.array([_kuka_ee_pose(q)[1] for q in data.q[rows]])
    end = p_s + EE_GOAL_MOVE
    u = EE_GOAL_MOVE / np.linalg.norm(EE_GOAL_MOVE)
    along = (p - p_s) @ u
    off = np.linalg.norm((p - p_s) - along[:, None] * u, axis=1)
    print(
        f'\nKUKA iiwa, ~/ee_goal over ROS: {len(rows)} states, the end effector at '
        f'most {off.max() * 1e3:.4f} mm off '
        f'the line, {np.linalg.norm(p[-1] - end) * 1e3:.4f} mm from the target at the end'
    )
    assert len(rows) > 0.5 * EE_GOAL_DURATION / 0.002
    assert off.max() < 0.001 and np.linalg.norm(p[-1] - end) < 0.001
    assert np.abs(along[data.t[rows] < start]).max() < 1e-6  # not before its stamp


def _offline_twin(run, extra, floating, initial=None):
    """
    Return the offline simulation of a recorded LoopRun.

    The demo YAML and the run's extra parameters as controller settings, its trajectory message
    (times rounded to ns as the message carries them), the sim's lockstep period (2 ms per
    command); returns the ClosedLoopRun.
    """
    from spart_ros.control.goals import TrajectoryGoal
    from spart_ros.sim.closed_loop import _yaml_settings, simulate

    ref = run.reference
    settings = dict(_yaml_settings(str(run.params)))
    gravity = settings.pop('gravity')
    settings.pop('base', None)

    def rounded(t):  # as builtin_interfaces carry it
        return int(t) + round(t % 1.0 * 1e9) * 1e-9

    goal = TrajectoryGoal.from_points(
        ref.joints,
        [(rounded(t), q, qd, qdd) for t, q, qd, qdd in ref.waypoints()],
        rounded(ref.start),
    )
    events = []
    if (
        getattr(run, 'ee_goal', None) is not None
    ):  # the pose goal, as the node made it of the message
        from spart_ros.control.ee_goals import PoseGoal
        from spart_ros.nodes.conversions import pose_to_matrix

        start, _, _, msg = run.ee_goal
        goal_pose = PoseGoal.create(
            *pose_to_matrix('ee_goal.pose', msg.pose), EE_GOAL_DURATION, start=start
        )
        events.append((start - 0.1, lambda c, plant, t: c.submit_pose(goal_pose, t)))
    return simulate(
        str(run.urdf),
        settings,
        duration=run.data.t[-1],
        trajectory=goal,
        base='floating' if floating else 'fixed',
        gravity=gravity,
        dt=extra.get('dt', 0.001),
        steps_per_tick=extra['lockstep_steps'],
        initial=initial,
        events=events,
    )


def _compare(offline, data, joints, until=np.inf):
    cols = [offline.joint_names.index(j) for j in joints]
    index = {int(round(t * 1e9)): k for k, t in enumerate(offline.t)}
    rows = [
        (k, index[int(round(t * 1e9))])
        for k, t in enumerate(data.t)
        if int(round(t * 1e9)) in index and t <= until
    ]
    recorded = np.array([data.q[k] for k, _ in rows])
    simulated = np.array([offline.q[i][cols] for _, i in rows])
    return len(rows), float(np.abs(recorded - simulated).max()), rows


def _where_they_part(offline, data, joints, run, rows):
    """Say where the recorded run first leaves its offline twin (``rows``: _compare's), and why."""
    cols = [offline.joint_names.index(j) for j in joints]
    t = next(
        (data.t[k] for k, i in rows if np.abs(data.q[k] - offline.q[i][cols]).max() > 1e-12), None
    )
    halts = [
        line
        for line in run.log.splitlines()
        if re.search(r'commands stopped|resumes|unsupervised|did not answer|trajectory of', line)
    ]
    return f'first apart at t = {t} s (trajectory start {run.reference.start}); ' + '\n'.join(
        halts[-20:]
    )


def test_offline_loop_equals_the_lockstep_loop_over_ros(kuka, sc):
    from spart_ros.sim import InitialState

    offline = _offline_twin(kuka, KUKA_EXTRA, floating=False)
    n, diff, rows = _compare(offline, kuka.data, KUKA_JOINTS)
    print(
        f'\nKUKA iiwa: offline vs over ROS at {n} recorded states: largest difference {diff:.1e} '
        'rad'
    )
    assert n > 0.5 * len(kuka.data) and diff < 1e-12, (
        n,
        diff,
        _where_they_part(offline, kuka.data, KUKA_JOINTS, kuka, rows),
    )
    initial = InitialState(
        base_linear_velocity=tuple(SC_EXTRA['initial_base_linear_velocity']),
        base_angular_velocity=tuple(SC_EXTRA['initial_base_angular_velocity']),
    )
    offline = _offline_twin(sc, SC_EXTRA, floating=True, initial=initial)
    # until the stray commands: published once the monitor saw this sim time, and a lockstep sim
    # takes a step on every command message, the dropped ones too
    n, diff, rows = _compare(
        offline, sc.data, SC_JOINTS, until=sc.reference.start + APPROACH + 1.0
    )
    base = max(
        np.abs(sc.data.base_position[k] - offline.base_position[i]).max()
        for k, i in rows
        if not np.isnan(sc.data.base_position[k]).any()
    )
    print(
        f'SC_3DoF: offline vs over ROS at {n} recorded states: largest difference {diff:.1e} rad, '
        f'base {base:.1e} m'
    )
    assert n > 1000 and diff < 1e-9 and base < 1e-9, (n, diff, base)
