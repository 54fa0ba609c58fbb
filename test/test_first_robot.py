"""
A new user's first robot: the README's floating-base command, run as written (issue 34).

``ros2 launch spart_ros spart_ros.launch.py urdf_path:=/path/to/robot.urdf base:=floating`` (the
README and docs/howto/own_urdf.md; here through scripts/local_launch.py, which runs the installed
launch file and its parameter files as ros2 launch does) on Solo12, a quadruped of
example-robot-data (test/data/urdf/vendor/solo12.urdf, 12 joints, on a free-floating base), with
spart_sim as the robot (floating base, zero gravity, LOCKSTEP: the loop does not depend on how
busy the machine is).  Nothing else is given: the controller takes its mode from the base
(floating_base), its joints from the URDF, its commands go to the sim's
effort_controller/commands; it must reach "commanding" and follow a trajectory sent to
``/spart_controller/joint_trajectory`` (the documented topic) to its end.
"""

from pathlib import Path
import sys

from node_helpers import NodeProcess, RELIABLE_QOS, ros_env, scaled
import numpy as np
import pytest

pytestmark = [
    pytest.mark.timeout(240),
    # the controller's watchdog (state_timeout 0.1 s of controller.yaml, the wall clock): a loop
    # starved that long halts once
    pytest.mark.realtime,
]

ROOT = Path(__file__).resolve().parent.parent
SOLO = ROOT / 'test' / 'data' / 'urdf' / 'vendor' / 'solo12.urdf'
LEGS = [f'{leg}_{j}' for leg in ('FL', 'FR', 'HL', 'HR') for j in ('HAA', 'HFE', 'KFE')]
#: the sim: the robot the README's command controls (its default topics: joint_states, odom,
#: effort_controller/commands); no /clock (nothing here runs on sim time)
SIM = {
    'urdf_path': str(SOLO),
    'base': 'floating',
    'gravity': [0.0, 0.0, 0.0],
    'lockstep': True,
    'lockstep_steps': 2,
    'lockstep_republish_period': 0.5,
    'publish_clock': False,
}
TARGET = np.array([0.2, 0.6, -1.2, -0.2, 0.6, -1.2, 0.2, -0.6, 1.2, -0.2, -0.6, 1.2])
DURATION = 1.0  # s of sim time to the target


def test_the_readme_floating_base_command_runs_a_quadruped_as_written(
    ros_node, node_process, tmp_path
):
    from builtin_interfaces.msg import Duration
    from sensor_msgs.msg import JointState
    from spart_interfaces.msg import ControllerStatus
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    ros = ros_node
    status = ros.subscribe(ControllerStatus, '/spart_controller/status', RELIABLE_QOS)
    states = ros.subscribe(JointState, '/joint_states', RELIABLE_QOS)
    sim = node_process('spart_ros', 'sim_node', name='spart_sim', parameters=SIM)
    launch = NodeProcess(
        [
            sys.executable,
            ROOT / 'scripts' / 'local_launch.py',
            'spart_ros.launch.py',
            f'urdf_path:={SOLO}',
            'base:=floating',
        ],
        name='spart_ros_launch',
        env=ros_env(),
        log_dir=tmp_path,
    ).start()
    try:
        ros.wait_for(
            lambda: status.messages and status.messages[-1].commanding,
            scaled(90.0),
            'the controller commanding',
            process=launch,
        )
        first = status.messages[-1]
        assert first.mode == 'floating_base' and first.state == 'holding', first
        assert list(first.joint_names) == LEGS
        assert sim.is_running(), sim.describe()
        trajectory = ros.publisher(
            JointTrajectory, '/spart_controller/joint_trajectory', RELIABLE_QOS
        )
        ros.wait_for_matched(trajectory, process=launch)
        msg = JointTrajectory(joint_names=LEGS)  # stamp 0: start on arrival
        msg.points.append(
            JointTrajectoryPoint(
                positions=TARGET.tolist(),
                velocities=[0.0] * len(LEGS),
                time_from_start=Duration(sec=int(DURATION)),
            )
        )
        n0 = len(status)
        ros.publish_until(
            trajectory,
            lambda: msg,
            lambda: any(s.trajectories >= 1 for s in status.messages[n0:]),
            timeout=scaled(20.0),
            period=1.0,  # each copy would restart it (stamp 0); the status comes at 10 Hz
            what='the trajectory accepted',
            process=launch,
        )
        done = ros.wait_for(
            lambda: next(
                (
                    s
                    for s in status.messages[n0:]
                    if s.trajectories >= 1 and s.state == 'holding' and s.commanding
                ),
                None,
            ),
            scaled(60.0),
            'the trajectory run to its end (holding)',
            process=launch,
        )
        during = [s for s in status.messages[n0:] if s.state == 'tracking']
        print(
            f'\nSolo12 (README command): {len(during)} statuses while tracking, max error '
            f'{max((s.max_position_error for s in during), default=float("nan")):.2e} rad, at '
            f'the end {done.max_position_error:.2e} rad'
        )
        # the controller's tracking errors while it ran (the reference minus the state), and the
        # sim's joints at the end, read by name
        assert during and max(s.max_position_error for s in during) < 5e-3, [
            s.max_position_error for s in during
        ]
        assert done.max_position_error < 1e-3, done
        # a state sent after that status (this process's subscription can match the new sim's
        # writer seconds late: DEVELOPERS.md, "Timing on a loaded machine")
        n1 = len(states)
        last = ros.wait_for(
            lambda: len(states) > n1 and states.messages[-1],
            scaled(30.0),
            'a joint state after the end',
            process=launch,
        )
        q = dict(zip(last.name, last.position))
        reached = np.array([q[j] for j in LEGS])
        np.testing.assert_allclose(reached, TARGET, atol=1e-3)
    finally:
        code = launch.stop(timeout=20.0)
    assert code == 0, launch.describe()


def test_sim_demo_with_a_floating_urdf_of_ones_own_runs_in_zero_gravity(ros_node, tmp_path):
    """
    ``sim_demo.launch.py urdf_path:=... base:=floating``: zero gravity, floating_base, commanding.

    The sim's latched plant_gravity says what it simulates (demo_robot.yaml's -9.81 made a
    floating robot fall before); stopped once the controller commands.
    """
    from geometry_msgs.msg import Vector3Stamped
    from node_helpers import LATCHED_QOS
    from spart_interfaces.msg import ControllerStatus

    ros = ros_node
    status = ros.subscribe(ControllerStatus, '/demo/spart_controller/status', RELIABLE_QOS)
    gravity = ros.subscribe(Vector3Stamped, '/demo/plant_gravity', LATCHED_QOS)
    launch = NodeProcess(
        [
            sys.executable,
            ROOT / 'scripts' / 'local_launch.py',
            'sim_demo.launch.py',
            f'urdf_path:={SOLO}',
            'base:=floating',
            'namespace:=demo',
        ],
        name='sim_demo_launch',
        env=ros_env(),
        log_dir=tmp_path,
    ).start()
    try:
        ros.wait_for(
            lambda: status.messages and status.messages[-1].commanding and gravity.messages,
            scaled(90.0),
            'the controller commanding, the plant saying its gravity',
            process=launch,
        )
        s, g = status.messages[-1], gravity.messages[-1].vector
        assert s.mode == 'floating_base' and list(s.joint_names) == LEGS, s
        assert (g.x, g.y, g.z) == (0.0, 0.0, 0.0)
    finally:
        code = launch.stop(timeout=20.0)
    assert code == 0, launch.describe()
