"""
The main job end to end (scripts/sim_demo.py, run by scripts/run_demo.sh).

The embedded MuJoCo plant, the controller and the dynamics node as separate processes over DDS
(this run's ROS_DOMAIN_ID), for both scenarios, checked on what the run itself measured and wrote.

- SC_3DoF, free-floating, floating_base control: tracking RMS < 0.01 rad after the first second
  (MuJoCo's dynamics, not ours), the base turning, and the system momentum about the world origin
  constant to 1e-6 N m s / N s (no external force; RK4 keeps it to ~1e-11 here);
- kuka_iiwa, fixed base in gravity, computed torque: tracking RMS < 0.001 rad;
- both: when the simulator stops publishing (paused), the controller's watchdog sends one
  all-zero command within 0.3 s and nothing after it; the dynamics node answers a service call;
- the outputs: three PNG plots per scenario, an MCAP bag per scenario that decodes with the
  message definitions it carries (re-read here), summary.json, and a closing OK line;
- Foxglove replay: one odometry per recorded joint state (same stamps); each bag's /tf
  (robot_state_publisher's transforms from the recorded joint states, odom -> base link from the
  odometry) and /tf_static put every link where the core's
  forward kinematics puts it for the recorded state, to 1e-9; the shipped layout's plots name
  topics the bags have; an animated GIF of each motion;
- the orbital scenario (SC_3DoF in a 500 km orbit, base actuated by reaction wheels and
  thrusters, free_flying), shortened here to 5 s of its 16 (``--orbit-seconds``): the station
  keeping and attitude bounds that apply to the shortened run (the base within 6 cm of its LVLH
  target, its attitude within 0.5 deg while the arm moves), the thrusters fired, the wheels
  turned, the plots (relative orbit beside the CW free drift, wheels, thrusters), the wheel and
  thruster states in its bag, the thrusters firing in its animation;
- the capture scenario (scripts/capture_demo.py: a servicing spacecraft in orbit captures a client
  tumbling at 4 deg/s through the ~/capture action), shortened to 3 s after its goal
  (``--capture-seconds``): grasped within the bounds that apply (within 4 s of the goal, at the
  fixture within the grasp tolerances, the base attitude held, no limit exceeded, one weld), its
  plots, the target's odometry in the bag and in /tf, the target drawn in the animation.  A full
  capture over ROS (succeeded, at rest) is test_capture_node.py's (lockstep); offline,
  test_capture_offline.py's.
"""

import json
import os
from pathlib import Path
import subprocess
import sys

from node_helpers import ros_env, scaled
import numpy as np
import pytest
from spart_ros.tools.bag import read_back

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / 'scripts' / 'sim_demo.py'

pytestmark = [pytest.mark.timeout(420), pytest.mark.realtime]  # the demo runs in real time
NAMESPACES = {'SC_3DoF': '/demo_sc3dof', 'kuka_iiwa': '/demo_kuka', 'SC_3DoF_orbit': '/demo_orbit'}
#: the scenarios that follow a joint trajectory (the capture scenario is checked on its own)
TRAJECTORIES = tuple(NAMESPACES)


def _trajectories(summary):
    return [r for r in summary['results'] if r['robot'] in TRAJECTORIES]


@pytest.fixture(scope='module')
def run(tmp_path_factory):
    out = tmp_path_factory.mktemp('demo')
    env = ros_env()  # this process's environment and ROS_DOMAIN_ID
    assert env['ROS_DOMAIN_ID'] == os.environ['ROS_DOMAIN_ID']
    proc = subprocess.run(
        [
            sys.executable,
            str(DEMO),
            '--output',
            str(out),
            '--orbit-seconds',
            '5',
            '--capture-seconds',
            '3',
        ],
        env=env,
        cwd=str(ROOT),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=scaled(360.0),
    )
    summary = (
        json.loads((out / 'summary.json').read_text()) if (out / 'summary.json').exists() else None
    )
    return proc, out, summary


@pytest.fixture(scope='module')
def bags(run):
    """
    {robot: read_back(its bag)}.

    Every message decoded again with the definitions the bag carries (once for the tests that read
    them).
    """
    _, _, summary = run
    return {r['robot']: read_back(r['bag']['path']) for r in summary['results']}


def test_the_main_job_runs_ok(run):
    proc, out, summary = run
    lines = proc.stdout.strip().splitlines()
    assert proc.returncode == 0, proc.stdout
    assert lines and lines[-1].startswith('[demo] ') and lines[-1].endswith(': OK'), proc.stdout
    assert summary['failures'] == [], summary['failures']
    assert [r['robot'] for r in summary['results']] == [
        'SC_3DoF',
        'kuka_iiwa',
        'SC_3DoF_orbit',
        'capture',
    ]
    assert (
        '  sim time' in proc.stdout and 'tracking error after 1 s' in proc.stdout
    )  # progress, summary
    assert 'command latency' in proc.stdout


def test_tracking_momentum_and_base(run):
    _, _, summary = run
    sc, kuka = summary['results'][:2]
    assert sc['tracking_rms_max'] < 0.01, sc['tracking']
    assert kuka['tracking_rms_max'] < 0.001, kuka['tracking']
    assert sc['sim_seconds'] >= 5.0 - 1e-9 and kuka['sim_seconds'] >= 5.0 - 1e-9  # (float sums)
    for r in (sc, kuka):  # the arms really moved: no error from standing still
        assert min(r['motion_reached'].values()) >= 0.9, r['motion_reached']
    assert sc['base_attitude_max_deg'] > 1.0  # the free-floating base reacts to the arm
    assert kuka['base_attitude_max_deg'] == 0.0  # the fixed one does not
    drift = sc['momentum_drift']
    assert drift['angular'] < 1e-6 and drift['linear'] < 1e-6, drift
    assert 'momentum_drift' not in kuka  # not conserved on a fixed base in gravity
    for r in (sc, kuka):
        assert r['nodes_exit_code'] == 0
        assert r['latency_ms']['samples'] > 1000 and r['latency_ms']['p50'] > 0
        # the disturbance is measured; a scenario is only run again after a measured one
        assert 0.0 <= r['longest_one_command_s'] < 5.0
        assert 'first_attempt' not in r or r['first_attempt']['disturbance'], r['first_attempt']


def test_the_plant_counts_its_states(run):
    """
    Every step of the plant is a state published, or one it counted as taken in a batch.

    How many it publishes in real time is the machine's doing (issue 35: 70-98 % here with the demo
    alone, 43-68 % beside other work), so it is reported (``states_per_second``), not asserted:
    a real-time budget met on one machine is no property of the code.
    """
    _, _, summary = run
    for r in _trajectories(summary):
        states = r['states_per_second']
        assert states['steps'] > 4000 and states['published'] <= states['steps'] + 1, states
        assert 0.0 < states['fraction'] <= 1.0 + 1e-3, states


def test_every_state_the_recording_misses_is_one_the_plant_counted_as_not_published(run):
    """
    The plant's count of lost states (its ``~/timing``) is exact, at any load.

    Between two ``~/timing`` answers (before the trajectory, at the pause) the sim counts the
    steps it took in a batch to catch up with the wall clock (their states never published).
    The stamps missing from the recording over the same interval are exactly that many: nothing
    is lost between the plant and the recorder (reliable, deep queues), and the plant's figure,
    which the demo reports, is the lost states' true count on any machine.  How many are lost
    depends on the load (the test above bounds it when the demo runs alone); this holds always.
    """
    _, _, summary = run
    for r in _trajectories(summary):
        lost = r['lost_states']
        assert lost['steps'] > 4000 and lost['plant_steps'] == lost['steps'], lost
        assert lost['missing_from_recording'] == lost['counted_by_plant'], (r['robot'], lost)


def test_watchdog_and_services(run):
    _, _, summary = run
    for r in summary['results']:
        w = r['watchdog']
        assert w['zero_after_s'] < 0.3 and w['commands_after_zero'] == 0, w
        assert r['inverse_dynamics']['success'], r['inverse_dynamics']


def test_plots_and_bags(run, bags):
    _, out, summary = run
    for r in _trajectories(summary):
        assert len(r['plots']) == (6 if r['robot'] == 'SC_3DoF_orbit' else 3)
        for png in r['plots']:
            data = (out / png).read_bytes()
            assert data[:8] == b'\x89PNG\r\n\x1a\n' and len(data) > 10_000, png
        name = r['robot']
        topics = bags[name]  # every message decoded again
        ns = NAMESPACES[name]
        for topic, schema in (
            (f'{ns}/joint_states', 'sensor_msgs/JointState'),
            (f'{ns}/odom', 'nav_msgs/Odometry'),
            (f'{ns}/effort_controller/commands', 'std_msgs/Float64MultiArray'),
            (f'{ns}/spart_controller/status', 'spart_interfaces/ControllerStatus'),
            (f'{ns}/spart_dynamics/jacobians', 'spart_interfaces/Jacobians'),
            (f'{ns}/robot_description', 'std_msgs/String'),
            ('/clock', 'rosgraph_msgs/Clock'),
        ):
            assert topic in topics and topics[topic][0] == schema, (topic, sorted(topics))
        # every state the plant published between its two ~/timing answers is in the bag (how
        # many it publishes in real time is the machine's doing: 2717 of 5000 seen at load 5-9)
        lost = r['lost_states']
        published = lost['steps'] - lost['counted_by_plant']
        assert published > 0 and topics[f'{ns}/joint_states'][1] >= published, (name, lost)
        assert (
            topics[f'{ns}/robot_description'][1] >= 1
        )  # latched: recorded although published first


def test_bags_replay_in_3d_and_the_motion_is_animated(run, bags):
    from PIL import Image
    from replay_check import tf_errors
    from spart_ros.core.urdf import robot_from_urdf

    _, out, summary = run
    layout = json.loads((ROOT / 'config' / 'foxglove_layout.json').read_text())
    plotted = {
        p['value'].split('.')[0]
        for k, v in layout['configById'].items()
        if k.startswith('Plot!')
        for p in v['paths']
    }
    for r in _trajectories(summary):
        name = r['robot']
        ns = NAMESPACES[name]
        topics = bags[name]
        assert topics['/tf'][0] == 'tf2_msgs/TFMessage' and topics['/tf_static'] == (
            'tf2_msgs/TFMessage',
            1,
        )
        # one /tf message per recorded joint state and per recorded odometry (a busy machine loses
        # some messages of either in the recording: counted, not assumed equal)
        assert (
            topics['/tf'][1]
            == r['bag']['added']['/tf']
            == topics[f'{ns}/joint_states'][1] + topics[f'{ns}/odom'][1]
        )
        lost = r['lost_states']
        assert topics[f'{ns}/odom'][1] >= lost['steps'] - lost['counted_by_plant'] > 0, lost
        # one odometry per joint state, of the same stamp: the base pose of every replayed state
        # (the recording of the state topics starts at their first common stamp; before it the
        # recorder's subscriptions were still matching the sim's publishers)
        bag = r['bag']
        assert bag['joint_states_without_odometry'] == 0, bag
        assert bag['odometry_without_joint_state'] == 0, bag
        assert topics[f'{ns}/odom'][1] == topics[f'{ns}/joint_states'][1] == bag['joint_states']
        assert topics['/robot_description'] == ('std_msgs/String', 1)
        assert {t for t in plotted if t.startswith(ns + '/')} <= set(topics), (
            plotted,
            sorted(topics),
        )
        robot = robot_from_urdf(str(ROOT / 'urdf' / f'{name.replace("_orbit", "")}.urdf'))[0]
        # every 10th joint state that has an odometry message of the same stamp (a busy machine
        # loses some messages of the recording): at least 1 s of the 1 kHz run
        p_err, R_err, checked, links = tf_errors(
            r['bag']['path'], robot, ns, every=5 if name == 'SC_3DoF_orbit' else 10
        )
        assert checked >= 100 and links == robot.n_links_joints + 1
        assert p_err < 1e-9 and R_err < 1e-9, (name, p_err, R_err)
        gif = out / r['animation']['file']
        assert gif.name == f'{name}_motion.gif' and gif.read_bytes()[:6] == b'GIF89a'
        with Image.open(gif) as im:
            assert im.n_frames >= 40 and im.size == (320, 240)
        # 15 frames per simulated second over the 6 s shown; a busy machine loses part of the
        # recording they are drawn from: at least half of them
        assert r['animation']['frames'] >= 45 and r['animation']['backend'] in (
            'mujoco',
            'matplotlib',
        )


def test_a_stall_of_the_machine_is_measured_from_the_applied_efforts():
    """
    What makes the demo run a robot again (scripts/sim_demo.py).

    A failed run after a stall, measured from the efforts the sim echoed (the plant on one command)
    or the controller's halts; a failure without one is a failure.
    """
    import numpy as np

    sys.path.insert(0, str(ROOT / 'scripts'))
    import sim_demo

    rec = sim_demo.Recording.__new__(sim_demo.Recording)
    ms = 1_000_000
    # 1 kHz, a new command each state, but 3 ms on one (a late answer) and 30 ms on another (a
    # stall); a gap of the recording (states 50-59 lost) between different commands counts for
    # nothing
    efforts = {k: np.array([float(k), -float(k)]) for k in range(100) if not 50 <= k < 60}
    for k in range(10, 13):
        efforts[k] = efforts[10]
    for k in range(70, 100):
        efforts[k] = efforts[70]
    rec.applied = {(1000 + k) * ms: e for k, e in efforts.items()}
    assert rec.longest_one_command(1.0, 1.099) == pytest.approx(0.029)
    assert rec.longest_one_command(1.0, 1.065) == pytest.approx(0.002)
    quiet = {
        'problems': ['tracking RMS 2e-3'],
        'halts_during_run': 0,
        'longest_one_command_s': 0.005,
    }
    assert sim_demo.disturbance(quiet) == ''
    assert 'ran 30 ms on one command' in sim_demo.disturbance(
        dict(quiet, longest_one_command_s=0.03)
    )
    assert 'halted 1 time(s)' in sim_demo.disturbance(dict(quiet, halts_during_run=1))


def test_the_orbital_scenario(run, bags):
    """Station keeping, attitude, wheels and thrusters of the shortened orbital run."""
    from PIL import Image

    _, out, summary = run
    r = summary['results'][2]
    assert r['sim_seconds'] >= 5.0 - 1e-9 and r['problems'] == []  # (float sums)
    sk = r['station_keeping']
    assert sk['max_m'] <= sk['bound_m'] == 0.06  # measured 4.1 cm (full run), 3.9 cm (5 s)
    assert r['attitude_while_moving_deg'] <= 0.5  # measured 0.2 deg (a busy machine)
    a = r['actuators']
    assert a['wheel_speed_max_rad_s'] > 1.0 and a['propellant_g'] > 0.1
    assert 0 < a['thruster_on_fraction'] < 0.5
    assert r['free_drift_final_m'] > sk['final_m']  # the thrusters hold what would drift away
    topics = bags['SC_3DoF_orbit']
    for topic, schema in (
        ('/demo_orbit/wheel_states', 'sensor_msgs/JointState'),
        ('/demo_orbit/thruster_states', 'spart_interfaces/ThrusterState'),
        ('/demo_orbit/reaction_wheel_controller/commands', 'std_msgs/Float64MultiArray'),
        ('/demo_orbit/thruster_controller/commands', 'std_msgs/Float64MultiArray'),
    ):
        assert topic in topics and topics[topic][0] == schema and topics[topic][1] > 200, topic
    for png in ('relative_orbit', 'wheels', 'thrusters'):
        assert f'SC_3DoF_orbit_{png}.png' in r['plots']

    # the animation draws the thrusters firing: frames with exhaust-coloured (cyan) pixels, which
    # the scenario without thrusters has none of
    def plume_frames(gif):
        count = 0
        with Image.open(gif) as im:
            for k in range(im.n_frames):
                im.seek(k)
                rgb = np.asarray(im.convert('RGB'), dtype=int)
                cyan = (rgb[..., 0] < 90) & (rgb[..., 1] > 170) & (rgb[..., 2] > 200)
                count += int(cyan.sum() > 20)  # a plume: dozens of pixels (a shade: a few)
        return count

    assert plume_frames(out / r['animation']['file']) > 0
    assert plume_frames(out / summary['results'][0]['animation']['file']) == 0


def test_the_capture_scenario(run, bags):
    """The shortened capture: grasped within its bounds; its plots, bag and animation."""
    from PIL import Image

    _, out, summary = run
    r = summary['results'][3]
    assert r['problems'] == [] and r['nodes_exit_code'] == 0, r['problems']
    c = r['capture']
    assert c['phases'][:2] == ['approach', 'synchronise'] and 'detumble' in c['phases'], c
    assert c['welds'] == 1 and c['grasp_after_s'] <= 4.0  # measured 2.2 s
    g = c['at_grasp']  # the tolerances: 1 cm, 0.05 rad, 1 cm/s, 0.01 rad/s
    assert g['distance_m'] <= 0.01 and g['relative_speed_m_s'] <= 0.01, g
    assert g['angle_rad'] <= 0.05 and g['relative_rate_rad_s'] <= 0.01, g
    assert c['attitude_before_grasp_deg'] <= 0.2  # measured 0.02-0.03 deg
    assert max(c['rate_fraction'], c['effort_fraction'], c['wheel_fraction']) <= 1.0
    assert len(c['impulse']) == 6
    w = r['watchdog']
    assert w['zero_after_s'] < 0.3 and w['commands_after_zero'] == 0, w
    assert r['inverse_dynamics']['success'], r['inverse_dynamics']
    for png in ('progress', 'base', 'wheels', 'impulse', 'rates', 'efforts'):
        data = (out / f'capture_{png}.png').read_bytes()
        assert data[:8] == b'\x89PNG\r\n\x1a\n' and len(data) > 10_000, png
    topics = bags['capture']
    ns = '/demo_capture'
    for topic, schema in (
        (f'{ns}/target/odom', 'nav_msgs/Odometry'),
        (f'{ns}/grasp', 'std_msgs/Header'),
        (f'{ns}/grasp_attached', 'geometry_msgs/PoseStamped'),
        (f'{ns}/grasp_impulse', 'geometry_msgs/WrenchStamped'),
        (f'{ns}/joint_states', 'sensor_msgs/JointState'),
        (f'{ns}/wheel_states', 'sensor_msgs/JointState'),
    ):
        assert topic in topics and topics[topic][0] == schema, (topic, sorted(topics))
    # /tf: the robot's joints and base at each state, the target at each of its estimates
    assert (
        topics['/tf'][1]
        == r['bag']['added']['/tf']
        == topics[f'{ns}/joint_states'][1]
        + topics[f'{ns}/odom'][1]
        + topics[f'{ns}/target/odom'][1]
    )
    assert topics[f'{ns}/target/odom'][1] >= 60  # 20 Hz over the run (and before the goal)

    # the animation draws the target: its box's green, which the robot has none of
    def green_frames(gif):
        count = 0
        with Image.open(gif) as im:
            for k in range(im.n_frames):
                im.seek(k)
                rgb = np.asarray(im.convert('RGB'), dtype=int)
                green = (rgb[..., 1] > rgb[..., 0] + 40) & (rgb[..., 1] > rgb[..., 2] + 40)
                count += int(green.sum() > 200)
        return count

    assert green_frames(out / r['animation']['file']) >= 0.9 * r['animation']['frames']
