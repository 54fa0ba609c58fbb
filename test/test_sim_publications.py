"""
spart_sim publishes /clock, imu, wheel_states and thruster_states only while they are subscribed.

The node is built in this process (its own context, the orbital demo's robot with wheels and
thrusters, nothing spun): its state publications are counted per topic, first with no
subscriber, then with one on each of those topics (a node of the same context, as ``ros2 topic
echo`` or a use_sim_time node would be).  joint_states and odom go out every state either way.
"""

import time

import pytest
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState
from spart_interfaces.msg import ThrusterState

GATED = {'/pub/clock': Clock, '/pub/imu': Imu, '/pub/wheel_states': JointState}


@pytest.fixture(scope='module')
def sim():
    import rclpy
    from rclpy.parameter import Parameter
    from spart_ros.nodes.sim_node import SimNode

    context = rclpy.Context()
    # /clock is a global name: another test's use_sim_time node in this domain subscribes to it
    # (seen in a full run); this context's /clock is a topic of its own
    rclpy.init(context=context, args=['--ros-args', '-r', '/clock:=/pub/clock'])
    node = listener = None
    try:
        params = {
            'urdf_path': 'urdf/SC_3DoF.urdf',
            'base': 'floating',
            'gravity': [0.0, 0.0, 0.0],
            'actuators_file': 'urdf/SC_3DoF.actuators.yaml',
        }
        node = SimNode(
            context=context,
            namespace='/pub',
            parameter_overrides=[Parameter(k, value=v) for k, v in params.items()],
        )
        listener = rclpy.create_node('listener', context=context)
        yield node, listener
    finally:
        for n in (listener, node):
            if n is not None:
                n.destroy_node()
        rclpy.shutdown(context=context)


def _counted(node):
    counts = {}
    pubs = [node._pub_clock, node._pub_joints, node._pub_odom, node._pub_imu]
    pubs += node._actuators._pubs
    for pub in pubs:
        counts[pub.topic_name] = 0

        def publish(msg, topic=pub.topic_name):
            counts[topic] += 1

        pub.publish = publish
    return counts


def test_gated_topics_go_out_only_when_subscribed(sim):
    node, listener = sim
    counts = _counted(node)
    for _ in range(3):
        node._publish_state()
    assert counts == {
        '/pub/clock': 0,
        '/pub/joint_states': 3,
        '/pub/odom': 3,
        '/pub/imu': 0,
        '/pub/wheel_states': 0,
        '/pub/thruster_states': 0,
    }
    subs = [listener.create_subscription(t, name, lambda m: None, 10) for name, t in GATED.items()]
    subs.append(
        listener.create_subscription(ThrusterState, '/pub/thruster_states', lambda m: None, 10)
    )
    pubs = [node._pub_clock, node._pub_imu] + node._actuators._pubs
    end = time.monotonic() + 10.0
    while not all(p.get_subscription_count() for p in pubs) and time.monotonic() < end:
        time.sleep(0.01)
    for _ in range(2):
        node._publish_state()
    assert counts == {
        '/pub/clock': 2,
        '/pub/joint_states': 5,
        '/pub/odom': 5,
        '/pub/imu': 2,
        '/pub/wheel_states': 2,
        '/pub/thruster_states': 2,
    }
