"""
The base actuators over real topics: the INSTALLED spart_sim and spart_controller.

SPART's SC_3DoF with urdf/SC_3DoF.actuators.yaml (four reaction wheels, twelve on/off thrusters),
free-floating, zero gravity, lockstep: spart_controller in free_flying holds the base pose with the
thrusters and the wheels (its commands on reaction_wheel_controller/commands and
thruster_controller/commands, the wheels' speeds from spart_sim's wheel_states) while a base pose
target 5 cm away is reached; spart_sim publishes wheel_states (JointState) and thruster_states
(spart_interfaces/ThrusterState), its robot_description has the wheels as joints; ~/status
reports the actuation; when the controller stops, its last command on each group is zeros.
"""

from pathlib import Path

from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from node_helpers import RELIABLE_QOS, RosTestNode, scaled
import numpy as np
import pytest
from sensor_msgs.msg import JointState
from spart_interfaces.msg import ControllerStatus, ThrusterState
from std_msgs.msg import Float64MultiArray, String

pytestmark = [pytest.mark.timeout(300), pytest.mark.realtime]

ROOT = Path(__file__).resolve().parent.parent
URDF = str(ROOT / 'urdf' / 'SC_3DoF.urdf')
ACTUATORS = str(ROOT / 'urdf' / 'SC_3DoF.actuators.yaml')
NS = 'base_actuators'


@pytest.fixture(scope='module')
def ros():
    node = RosTestNode('test_base_actuators_nodes')
    yield node
    node.close()


def test_free_flying_drives_wheels_and_thrusters_over_topics(ros, node_process):
    # (the processes are stopped after the test whatever happens, and the sim's /clock stays in
    # this test's namespace: a leftover sim's /clock would be every use_sim_time node's time)
    clock = {'/clock': f'/{NS}/clock'}
    sim = node_process(
        'spart_ros',
        'sim_node',
        namespace=NS,
        parameters={
            'urdf_path': URDF,
            'base': 'floating',
            'gravity': [0.0, 0.0, 0.0],
            'actuators_file': ACTUATORS,
            'joints': ['Joint_1', 'Joint_2', 'Joint_3'],
            'lockstep': True,
            'lockstep_steps': 2,
            'lockstep_republish_period': 0.5,
        },
        remappings=clock,
    )
    ctl = node_process(
        'spart_ros',
        'controller_node',
        namespace=NS,
        parameters={
            'mode': 'free_flying',
            'base': 'floating',
            'world_frame': 'odom',
            'commands_topic': 'effort_controller/commands',
            'robot_description_topic': 'robot_description',
            'actuators_file': ACTUATORS,
            'base_gains': [0.4, 1.2, 0.5, 1.5],
            'state_timeout': 2.0,
            'status_rate': 20.0,
        },
        remappings=clock,
    )
    status = ros.subscribe(ControllerStatus, f'/{NS}/spart_controller/status', RELIABLE_QOS)
    wheels = ros.subscribe(JointState, f'/{NS}/wheel_states', RELIABLE_QOS)
    thrusters = ros.subscribe(ThrusterState, f'/{NS}/thruster_states', RELIABLE_QOS)
    odom = ros.subscribe(Odometry, f'/{NS}/odom', RELIABLE_QOS)
    wheel_cmd = ros.subscribe(
        Float64MultiArray, f'/{NS}/reaction_wheel_controller/commands', RELIABLE_QOS
    )
    thruster_cmd = ros.subscribe(
        Float64MultiArray, f'/{NS}/thruster_controller/commands', RELIABLE_QOS
    )
    description = ros.subscribe(String, f'/{NS}/robot_description', _latched())
    procs = [sim, ctl]
    ros.wait_for(
        lambda: status.messages and status.messages[-1].commanding and wheel_cmd.messages,
        scaled(90.0),
        'the controller commanding the wheels',
        process=procs,
    )
    # the controller's wheel_states subscription can hear the sim's publisher later than its
    # joint states (DDS discovery): until then it says so and takes the speeds as 0
    s = ros.wait_for(
        lambda: next((m for m in status.messages[-5:] if m.actuation_feasible), None),
        scaled(30.0),
        'a status with the wheel speeds received and the allocation feasible',
        process=procs,
    )
    assert len(s.wheel_speeds) == 4 and len(s.wheel_momentum) == 3
    # this side's readers can match the sim's writers later still (discovery under load)
    ros.wait_for(
        lambda: wheels.messages and thrusters.messages and odom.messages,
        scaled(30.0),
        'wheel_states, thruster_states and odom here',
        process=procs,
    )
    assert list(wheels.messages[-1].name) == ['rw_x', 'rw_y', 'rw_z', 'rw_s']
    assert len(thrusters.messages[-1].name) == 12
    assert len(wheel_cmd.messages[-1].data) == 4
    ros.wait_for(lambda: description.messages, scaled(10.0), 'robot_description', process=procs)
    assert 'name="rw_x"' in description.messages[-1].data  # the wheels are joints
    # a base pose 5 cm along x: the thrusters fire, the base gets there, the attitude stays
    o = odom.messages[-1].pose.pose
    start = np.array([o.position.x, o.position.y, o.position.z])
    target = PoseStamped()
    target.header.frame_id = 'odom'
    target.pose.position.x, target.pose.position.y = start[0] + 0.05, start[1]
    target.pose.position.z = start[2]
    target.pose.orientation = o.orientation
    pub = ros.publisher(PoseStamped, f'/{NS}/spart_controller/base_pose', RELIABLE_QOS)
    ros.publish_until(
        pub,
        lambda: target,
        lambda: any(any(m.firing) for m in thrusters.messages[-50:]),
        scaled(60.0),
        period=1.0,
        what='a thruster firing',
        process=procs,
    )

    def arrived():
        p = odom.messages[-1].pose.pose.position
        return abs(p.x - start[0] - 0.05) < 0.01

    ros.wait_for(arrived, scaled(120.0), 'the base at its target', process=procs)
    fired = thrusters.messages[-1]
    assert max(fired.impulse) > 0 and fired.propellant_used > 0 and sum(fired.firings) > 0
    q0 = odom.messages[0].pose.pose.orientation
    q1 = odom.messages[-1].pose.pose.orientation
    dot = abs(q0.x * q1.x + q0.y * q1.y + q0.z * q1.z + q0.w * q1.w)
    assert np.degrees(2 * np.arccos(min(1.0, dot))) < 0.5  # the wheels hold the attitude
    # the controller stops: one zero command on each group
    assert ctl.stop() == 0
    ros.spin_for(0.5)
    assert not any(wheel_cmd.messages[-1].data) and not any(thruster_cmd.messages[-1].data)
    assert sim.stop() == 0


def _latched():
    from node_helpers import LATCHED_QOS

    return LATCHED_QOS
