"""
One robot description for every plant, on the INSTALLED nodes.

A URDF whose <ros2_control> tag lists the Franka Panda's joints (the arm in reverse order, the
finger with an effort interface, its mimic twin with none) and their initial positions.  spart_sim
(lockstep, no ``joints`` or ``initial_joint_*`` parameter) and spart_controller (no
``command_joints``; the URDF from the sim's robot_description topic) both take their joints from
the tag, in its order, the mimic joint left out; the sim starts at the tag's initial values and
notes the hardware plugin it does not load; the arm tracks a trajectory (had the two disagreed on
the order, each command would have gone to the wrong joint). Without a tag the parameters rule as
before (test_closed_loop_safety's Panda, test_sim_node).
"""

import re

from builtin_interfaces.msg import Duration
from core_helpers import urdf_path
from node_helpers import RELIABLE_QOS, RosTestNode, scaled, start_node
import numpy as np
import pytest
from sensor_msgs.msg import JointState
from spart_interfaces.msg import ControllerStatus
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.filterwarnings('ignore::spart_ros.core.errors.SpartWarning'),
]

NS = 'tagged'
GRAVITY = [0.0, 0.0, -9.81]
ARM = [f'panda_joint{k}' for k in range(1, 8)]
HOME = [0.0, -0.5, 0.0, -2.0, 0.0, 1.6, 0.8]
EXPECTED = list(reversed(ARM)) + ['panda_finger_joint1']


def tagged_panda():
    """
    Return the Panda URDF with a <ros2_control> tag.

    gz_ros2_control's plugin, as a Gazebo recipe has it.
    """
    joints = ''.join(
        f'<joint name="{j}"><command_interface name="effort"/><state_interface name="position">'
        f'<param name="initial_value">{q}</param></state_interface>'
        '<state_interface name="velocity"/></joint>'
        for j, q in reversed(list(zip(ARM, HOME)))
    )
    joints += (
        '<joint name="panda_finger_joint1"><command_interface name="effort"/>'
        '<state_interface name="position"><param name="initial_value">0.02</param>'
        '</state_interface><state_interface name="velocity"/></joint>'
        '<joint name="panda_finger_joint2" mimic="true"><state_interface name="position"/></joint>'
    )
    tag = (
        '<ros2_control name="panda_system" type="system"><hardware>'
        f'<plugin>gz_ros2_control/GazeboSimSystem</plugin></hardware>{joints}</ros2_control>'
    )
    return open(urdf_path('panda'), encoding='utf-8').read().replace('</robot>', tag + '</robot>')


# the controller's watchdog (state_timeout) runs on the wall clock: a starved one halts
@pytest.mark.realtime
def test_sim_and_controller_take_their_joints_from_the_tag_and_track():
    ros = RosTestNode('test_ros2_control_nodes')
    js = ros.subscribe(JointState, f'/{NS}/joint_states', RELIABLE_QOS)
    status = ros.subscribe(ControllerStatus, f'/{NS}/spart_controller/status', RELIABLE_QOS)
    sim = start_node(
        'spart_ros',
        'sim_node',
        namespace=f'/{NS}',
        remappings={'/clock': f'/{NS}/clock'},
        parameters={'robot_description': tagged_panda(), 'gravity': GRAVITY, 'lockstep': True},
    )
    procs = [sim]

    def wait(predicate, timeout, what):
        return ros.wait_for(predicate, scaled(timeout), what, process=procs)

    def sim_time():
        m = js.messages[-1]
        return m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec

    def q(names):
        m = js.messages[-1]
        return np.array([m.position[list(m.name).index(j)] for j in names])

    try:
        # the tag's initial values: the sim alone, in lockstep, does not step (it republishes its
        # state until a command comes); the controller starts after (a busy machine had already
        # moved the finger 2.7e-4 when the test first looked, with both started together)
        wait(lambda: js.messages, 60.0, 'the first joint state')
        np.testing.assert_allclose(q(ARM), HOME, rtol=0, atol=1e-12)
        assert abs(q(['panda_finger_joint1'])[0] - 0.02) < 1e-12
        procs.append(
            start_node(
                'spart_ros',
                'controller_node',
                namespace=f'/{NS}',
                parameters={'gravity': GRAVITY, 'status_rate': 20.0, 'state_timeout': 2.0},
            )
        )
        wait(
            lambda: status.messages and status.messages[-1].commanding,
            90.0,
            'the controller commanding',
        )
        assert list(status.messages[-1].joint_names) == EXPECTED
        # the sim logs its summary as it starts; its log file may lag its first messages
        sim.wait_for_output(re.escape(f'for joints {EXPECTED}'), scaled(10.0))
        assert "names the hardware plugin 'gz_ros2_control/GazeboSimSystem': not loaded" in (
            sim.output()
        )
        # a trajectory of the arm: every command must reach the joint it is meant for
        target = np.array(HOME) + np.array([0.3, 0.2, -0.3, 0.3, 0.3, -0.3, 0.4])
        pub = ros.publisher(
            JointTrajectory, f'/{NS}/spart_controller/joint_trajectory', RELIABLE_QOS
        )
        ros.wait_for_matched(pub, timeout=scaled(10.0), process=procs)
        pub.publish(
            JointTrajectory(
                joint_names=ARM,
                points=[
                    JointTrajectoryPoint(
                        positions=target.tolist(), time_from_start=Duration(sec=1)
                    )
                ],
            )
        )
        wait(lambda: status.messages[-1].trajectories > 0, 20.0, 'the trajectory accepted')
        t0 = sim_time()
        wait(lambda: sim_time() > t0 + 1.6, 120.0, 'the end of the trajectory')
        err = np.abs(q(ARM) - target).max()
        print(
            f'\nPanda with a <ros2_control> tag (lockstep, default joints {EXPECTED}): '
            f'|q - target| {err:.2e} rad'
        )
        assert err < 1e-3, err
        assert 'dropped' not in sim.output()
    finally:
        for p in procs:
            p.cleanup()
        ros.close()


def test_a_tag_naming_a_joint_the_robot_lacks_stops_the_sim_naming_it():
    text = tagged_panda().replace('<joint name="panda_joint3">', '<joint name="panda_joint9">')
    proc = start_node(
        'spart_ros', 'sim_node', namespace='/tagged_bad', parameters={'robot_description': text}
    )
    try:
        proc.wait_for_output(
            r'invalid configuration: .*names joint \'panda_joint9\', '
            r'which is not a joint of robot',
            60.0,
        )
        assert proc.proc.wait(scaled(30.0)) == 2
    finally:
        proc.cleanup()
