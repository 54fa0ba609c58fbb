"""The closed loop end to end: spart_sim + spart_controller + spart_dynamics as three processes
started by the INSTALLED launch/sim_demo.launch.py (through scripts/local_launch.py) with the
demo's YAML, driven and observed over DDS by the main job's own machinery
(scripts/sim_demo.py: ClosedLoop; demo_recorder.py; demo_analysis.py), each run in its own
namespace in this test run's ROS_DOMAIN_ID.

What test_sim_plant.py / test_sim_node.py already prove is not repeated here (the plant's
momentum and accelerations against the core with torques from a test; a lone sim dropping bad
commands); here the torques come from the controller, computed on the dynamics of the model
it loaded from the sim's robot_description, and the checks are about the loop:

- SC_3DoF, free-floating, zero gravity, tumbling and drifting from the start, real time
  (floating_base control: Floating_ID with the measured base state): tracking RMS < 0.01 rad
  after the first second; total linear and angular momentum, computed with the core from every
  recorded state, constant to 1e-8 kg m/s and kg m^2/s (magnitudes 1.6 and 2.5; no external
  force; what is left is RK4's truncation error at 1 ms, 4e-10 here, ~1e-7 for a 2.5 s motion);
  the base acceleration MuJoCo shows (IMU, zero gravity) = the one SPART's Floating_ID predicts
  from the same state and the efforts the sim applied, to 1e-9 relative; stray commands of the
  wrong length and with NaN published into the loop are dropped by the sim, which keeps
  applying the controller's last command (every effort it echoes is one the controller sent).
- KUKA iiwa, fixed base, gravity, LOCKSTEP (deterministic; computed torque): every state
  answered by exactly one command, tracking RMS < 0.001 rad after the first second.
- The controller's watchdog: the sim paused (it stops publishing) -> one all-zero command,
  which the sim applies.  Under use_sim_time (the launch default) this does NOT happen yet: the
  controller's watchdog timer runs on the node clock, which follows /clock and stops with the
  sim (strict xfail below, a reminder to drop the marker when fixed); with use_sim_time:=false
  it does.

Lockstep is not used for the floating base: the controller never answers the first state when
its first odometry arrives after the joint states (it marks their stamp as answered, and a
lockstep sim only republishes that stamp until it gets a command): the loop never starts.
"""
import math
from pathlib import Path
import re
import sys

import numpy as np
import pytest

from node_helpers import scaled

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'scripts'))
import demo_analysis as analysis  # noqa: E402
import sim_demo  # noqa: E402
from demo_recorder import Recorder  # noqa: E402

pytestmark = [pytest.mark.timeout(300), pytest.mark.filterwarnings('ignore::spart_ros.core.errors.SpartWarning')]

SC, KUKA = sim_demo.SCENARIOS['sc_3dof'], sim_demo.SCENARIOS['kuka_iiwa']
#: the SC_3DoF test run starts tumbling and drifting: non-zero momentum to keep
SC_TUMBLING = dict(initial_base_angular_velocity=[0.03, -0.02, 0.05], initial_base_linear_velocity=[0.02, 0.01, -0.01])
MOMENTUM_TOLERANCE = 1e-8       # kg m/s and kg m^2/s (measured 4e-10: RK4's error at 1 ms steps)
ACCELERATION_TOLERANCE = 1e-9   # relative to the largest acceleration (measured ~1e-15)
BAD_COMMANDS = ([1.0, 2.0], [float('nan'), 0.0, 0.0])


def _command_qos():
    from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10, reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.VOLATILE)


class Run:
    """A ClosedLoop with its recorder, in a namespace of its own.  ``close()`` stops the nodes
    (keeping their exit code, output and the recorded messages for the checks): each run is
    over before the next starts, so no two sims publish /clock at once."""

    def __init__(self, tmp, scenario, namespace, seconds, **options):
        self.recorder = Recorder(str(Path(tmp) / f'{namespace}.mcap'), keep=sim_demo.keep_topic,
                                 name=f'test_{namespace}')
        self.loop = sim_demo.ClosedLoop(scenario, self.recorder, tmp, seconds, namespace=namespace, **options)

    def close(self):
        try:
            self.loop.stop()
        finally:
            self.recorder.close()

    def describe(self):
        return '\n'.join(self.loop.log().splitlines()[-40:])


@pytest.fixture(scope='module')
def sc_run(tmp_path_factory):
    """SC_3DoF in real time, tumbling: trajectory, two stray bad commands during the motion."""
    run = Run(tmp_path_factory.mktemp('sc'), SC, 'cl_sc', 3.0, sim_params=SC_TUMBLING,
              controller_params={'state_timeout': 0.5})
    loop = run.loop
    try:
        loop.start()
        start = loop.send_trajectory()
        loop.run_until(start + analysis.APPROACH + 1.0, progress=False)
        from std_msgs.msg import Float64MultiArray
        stray = run.recorder.publisher(Float64MultiArray, loop.topic('effort_controller/commands'), _command_qos())
        run.recorder.wait_for(lambda: stray.get_subscription_count() >= 1, scaled(10), 'the sim subscribing')
        for values in BAD_COMMANDS:
            stray.publish(Float64MultiArray(data=values))
            run.recorder.spin_for(0.05)
        loop.run_until(loop.reference.end + 0.2, progress=False)
    finally:
        run.close()
    return run


def test_floating_spacecraft_tracks_its_trajectory(sc_run):
    loop = sc_run.loop
    data = loop.data()
    after = loop.reference.start + analysis.APPROACH
    _, rms, emax, t = analysis.tracking(data, loop.reference, after)
    print(f'\nSC_3DoF (real time, tumbling base): tracking RMS {rms} rad, max {emax} rad over {len(t)} states')
    assert len(t) > 500, sc_run.describe()
    assert np.all(rms < 0.01), (rms, sc_run.describe())
    # the base did react (turned by the arm) and the states are the controller's reference's
    assert np.nanmax(analysis.attitude_change(data)) > math.radians(2.0)
    worst, n = sim_demo.reference_agreement(data, loop.reference, loop.statuses(), after)
    assert n > 10 and worst < sim_demo.REFERENCE_TOLERANCE, (worst, n)


def test_free_floating_momentum_is_constant_and_base_acceleration_is_floating_id(sc_run):
    """No external force on the spacecraft: [L about the world origin; p], computed by the core
    from each recorded state (odometry + joint states), stays at its initial value (which is
    not zero: the base starts tumbling and drifting).  And at 25 states spread over the motion,
    the IMU's linear acceleration (MuJoCo; zero gravity, so specific force = acceleration of the
    base link origin, in b) equals Floating_ID's prediction from the same state and the applied
    efforts echoed in joint_states."""
    from spart_ros import spart
    robot, _ = spart.urdf2robot(str(sim_demo.share_file('urdf', SC.urdf)))
    data = sc_run.loop.data()
    h = analysis.momentum(robot, data)
    ok = ~np.isnan(h).any(axis=1)
    assert ok.sum() > 0.9 * len(data), 'odometry missing for many states'
    h0 = h[ok][0]
    drift = np.abs(h[ok] - h0).max(axis=0)
    print(f'\nmomentum over {ok.sum()} states: initial L {h0[:3]}, p {h0[3:]}; drift angular {drift[:3].max():.1e}, '
          f'linear {drift[3:].max():.1e}')
    assert np.linalg.norm(h0[:3]) > 1.0 and np.linalg.norm(h0[3:]) > 1.0, h0      # not trivially zero
    assert drift.max() < MOMENTUM_TOLERANCE, drift
    ref = sc_run.loop.reference
    moving = np.flatnonzero((data.t > ref.start + ref.approach) & (data.t < ref.end))
    rows = moving[np.linspace(0, len(moving) - 1, 25).astype(int)]
    pairs = analysis.base_acceleration_check(robot, data, rows)
    assert len(pairs) >= 20, len(pairs)
    scale = max(np.abs(a).max() for a, _ in pairs)
    worst = max(np.abs(a - b).max() for a, b in pairs) / scale
    print(f'base acceleration MuJoCo vs Floating_ID: largest difference {worst:.1e} of {scale:.2e} m/s^2')
    assert scale > 1e-3 and worst < ACCELERATION_TOLERANCE, (worst, scale)


def test_stray_bad_commands_are_dropped_and_the_loop_goes_on(sc_run):
    """Two commands of another publisher, one of 2 values for 3 joints and one with a NaN, land
    in the middle of the motion: the sim drops both (logged), keeps applying the controller's
    last command (every effort it echoes after the trajectory start is one the controller
    published, stamped, on ~/joint_commands), and tracking does not notice (test above)."""
    loop = sc_run.loop
    log = loop.log()
    assert "expected 3 values for joints ['Joint_1', 'Joint_2', 'Joint_3'], got 2: dropped" in log, sc_run.describe()
    assert "non-finite value for joints ['Joint_1']" in log, sc_run.describe()
    data = loop.data()
    sent = {tuple(m.effort) for _, m in sc_run.recorder.messages(loop.topic('spart_controller/joint_commands'))}
    later = data.t >= loop.reference.start
    echoed = [tuple(e) for e in data.effort[later]]
    assert echoed and all(np.isfinite(e).all() for e in echoed)
    strangers = [e for e in echoed if e not in sent]
    assert not strangers, strangers[:3]
    # what the sim says it kept is the controller's
    for kept in re.findall(r'dropped \(keeping the previous command \[([^]]*)\]', log):
        assert tuple(float(x) for x in kept.split(',')) in sent, kept
    others = [ln for ln in loop.node_errors() if ': dropped (keeping the previous command' not in ln]
    assert loop.exit_code == 0 and not others, sc_run.describe()


@pytest.fixture(scope='module')
def kuka_run(tmp_path_factory):
    """KUKA iiwa in lockstep (2 ms per command), the demo's configuration otherwise; at the
    end, the sim paused: ``zero_command`` = the first all-zero command within 3 s, or None."""
    run = Run(tmp_path_factory.mktemp('kuka'), KUKA, 'cl_kuka', 2.0, lockstep=True)
    try:
        run.loop.start()
        run.loop.send_trajectory()
        run.loop.run_until(run.loop.reference.end + 0.1, progress=False)
        run.zero_command = _pause_and_wait_for_zero(run, scaled(3.0))
    finally:
        run.close()
    return run


def test_fixed_arm_tracks_in_lockstep(kuka_run):
    loop = kuka_run.loop
    data = loop.data()
    after = loop.reference.start + analysis.APPROACH
    _, rms, emax, t = analysis.tracking(data, loop.reference, after)
    print(f'\nKUKA iiwa (lockstep): tracking RMS {rms} rad, max {emax} rad over {len(t)} states')
    assert len(t) > 900, kuka_run.describe()
    assert np.all(rms < 0.001), (rms, kuka_run.describe())
    # lockstep: states on a 2 ms grid, and each one answered by exactly one command: the
    # controller's count of commands is the number of 2 ms steps to the time its ~/status is
    # stamped with (the last /clock: the state it answered last, or the next one)
    stamps = np.round(data.t * 1e9).astype(np.int64)
    assert np.all(stamps % 2_000_000 == 0)
    lag = [st.commands + st.zero_commands - analysis.stamp_ns(st.header.stamp) // 2_000_000
           for st in loop.statuses() if st.commands]
    assert len(lag) > 20 and set(lag) <= {0, 1}, sorted(set(lag))
    worst, n = sim_demo.reference_agreement(data, loop.reference, loop.statuses(), after)
    assert n > 5 and worst < sim_demo.REFERENCE_TOLERANCE, (worst, n)


def _pause_and_wait_for_zero(run, timeout):
    """Pause the sim; the first all-zero command on the commands topic after it (or None)."""
    from std_srvs.srv import SetBool
    loop, rec = run.loop, run.recorder
    topic = loop.topic('effort_controller/commands')
    before = rec.count(topic)
    assert rec.call(SetBool, loop.topic('spart_sim/pause'), SetBool.Request(data=True)).success

    def zero():
        return next((m for _, m in rec.messages(topic, start=before) if not any(m.data)), None)
    try:
        found = rec.wait_for(zero, timeout, 'an all-zero command after the sim stopped')
    except sim_demo.RecorderError:
        found = None
    return found


@pytest.mark.xfail(strict=True, reason='controller_node: the watchdog timer runs on the node clock; under '
                   'use_sim_time it follows /clock and stops with the sim, so it never fires')
def test_watchdog_zeroes_the_torques_under_sim_time(kuka_run):
    assert kuka_run.zero_command is not None


@pytest.fixture
def wall_clock_run(tmp_path):
    """KUKA iiwa in real time, the controller and dynamics node on the wall clock."""
    run = Run(tmp_path, KUKA, 'cl_wd', 1.0, launch_args={'use_sim_time': 'false'})
    try:
        run.loop.start()
        run.recorder.spin_for(0.3)
        yield run
    finally:
        run.close()


def test_watchdog_zeroes_the_torques_when_the_sim_stops(wall_clock_run):
    """The sim stops publishing (paused): after state_timeout (0.1 s) the controller sends one
    all-zero command and then nothing; the sim applies it: the first state after the sim
    resumes echoes zero efforts (the arm was holding against gravity, so they were not zero
    before), then the controller takes over again, holding the arm where it is."""
    from std_srvs.srv import SetBool
    run, loop, rec = wall_clock_run, wall_clock_run.loop, wall_clock_run.recorder
    held = rec.last(loop.topic('joint_states'))
    assert np.abs(held.effort).max() > 1.0          # gravity: the arm is being held
    topic = loop.topic('effort_controller/commands')
    before = rec.count(topic)
    zero = _pause_and_wait_for_zero(run, scaled(3.0))
    assert zero is not None, run.describe()
    assert list(zero.data) == [0.0] * 7
    rec.spin_for(0.5)
    after = [m for _, m in rec.messages(topic, start=before)]
    assert sum(1 for m in after if not any(m.data)) == 1 and not any(after[-1].data), \
        'one zero command, then silence while the sim is stopped'
    last_stamp = analysis.stamp_ns(rec.last(loop.topic('joint_states')).header.stamp)
    states = loop.topic('joint_states')
    n = rec.count(states)
    assert rec.call(SetBool, loop.topic('spart_sim/pause'), SetBool.Request(data=False)).success
    first = rec.wait_for(lambda: next((m for _, m in rec.messages(states, start=n)
                                       if analysis.stamp_ns(m.header.stamp) > last_stamp), None),
                         scaled(5.0), 'a state after resuming')
    assert list(first.effort) == [0.0] * 7
    loop.process.wait_for_output('fresh valid state again: commanding resumes', scaled(5.0))
    assert loop.status_when(lambda s: s.commanding, scaled(5.0), 'commanding again').timeouts >= 1

