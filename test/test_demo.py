"""The main job (scripts/sim_demo.py, run by scripts/run_demo.sh) works end to end: run it as
a subprocess in the test environment (install sourced by colcon test, this run's
ROS_DOMAIN_ID), real time as a user sees it, with a short motion, and check its exit code,
progress lines, summary, the PNGs and that run.mcap reads back with the definitions it carries.
The physics and control claims themselves are tested in test_closed_loop.py."""
import os
from pathlib import Path
import re
import subprocess
import sys

import pytest

from node_helpers import ros_env, scaled

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / 'scripts' / 'sim_demo.py'
PNG = b'\x89PNG\r\n\x1a\n'

pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope='module')
def demo(tmp_path_factory):
    out = tmp_path_factory.mktemp('demo') / 'output'
    env = ros_env()        # this process's environment and ROS_DOMAIN_ID
    assert env['ROS_DOMAIN_ID'] == os.environ['ROS_DOMAIN_ID']
    proc = subprocess.run([sys.executable, str(DEMO), '--seconds', '1.5', '--output', str(out)], env=env,
                          cwd=str(ROOT), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=scaled(150.0))
    return proc, out


def test_demo_exits_ok_with_progress_and_summary(demo):
    proc, out = demo
    text = proc.stdout
    lines = text.strip().splitlines()
    assert proc.returncode == 0, text
    assert lines and lines[-1].startswith('[demo] 2 scenario(s)') and lines[-1].endswith(': OK'), text
    assert 'FAILED' not in text and 'problem:' not in text, text
    for name in ('sc_3dof', 'kuka_iiwa'):
        # live progress, about once a wall-clock second, with the sim time and tracking error
        progress = re.findall(rf'^\[demo\] {name} +sim t = +([0-9.]+) s .* tracking error max +[0-9.]+ mrad', text,
                              re.MULTILINE)
        assert len(progress) >= 2, text
        assert f'[demo] === {name}:' in text
    summary = text[text.index('summary'):]
    for joint in ('Joint_1', 'Joint_2', 'Joint_3', 'lbr_iiwa_joint_7'):
        assert re.search(rf'^\[demo\]     {joint} +[0-9.]+ +[0-9.]+$', summary, re.MULTILINE), summary
    for phrase in ('base attitude change:', 'total momentum drift (core', 'command latency (joint_states -> command',
                   'p50', 'p99', 'MuJoCo (IMU) vs SPART Floating_ID', "the controller's own error (~/status) agrees"):
        assert phrase in summary, (phrase, summary)


def test_demo_writes_the_plots_and_a_bag_that_reads_back(demo):
    from spart_ros.tools.bag import read_back
    proc, out = demo
    assert proc.returncode == 0, proc.stdout
    for name in ('sc_3dof', 'kuka_iiwa'):
        for kind in ('tracking', 'efforts', 'base'):
            png = out / f'{name}_{kind}.png'
            assert png.is_file() and png.read_bytes()[:8] == PNG, png
    topics = read_back(str(out / 'run.mcap'))      # every message decoded with the schemas in the bag
    for ns in ('/sc_3dof', '/kuka_iiwa'):
        for topic, schema in (('joint_states', 'sensor_msgs/JointState'), ('odom', 'nav_msgs/Odometry'),
                              ('imu', 'sensor_msgs/Imu'), ('robot_description', 'std_msgs/String'),
                              ('effort_controller/commands', 'std_msgs/Float64MultiArray'),
                              ('spart_controller/joint_trajectory', 'trajectory_msgs/JointTrajectory'),
                              ('spart_controller/status', 'spart_interfaces/ControllerStatus'),
                              ('spart_dynamics/jacobians', 'spart_interfaces/Jacobians')):
            name, count = topics[f'{ns}/{topic}']
            assert name == schema and count >= 1, (topic, name, count)
        assert topics[f'{ns}/joint_states'][1] > 500
    assert topics['/clock'][0] == 'rosgraph_msgs/Clock'
    m = re.search(r'bag run.mcap: (\d+) topics, (\d+) messages', proc.stdout)
    assert m and int(m.group(1)) == len(topics) and int(m.group(2)) == sum(n for _, n in topics.values())
