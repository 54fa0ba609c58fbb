"""
Smoke test: the INSTALLED spart_heartbeat node runs as its own process.

It exchanges messages with this test process over DDS (real rclpy, no mocks).
"""

import os
from pathlib import Path

from node_helpers import (
    BEST_EFFORT_QOS,
    installed_executable,
    json_payload,
    LATCHED_QOS,
    RELIABLE_QOS,
)
from sensor_msgs.msg import JointState
from std_msgs.msg import String

PKG = 'spart_ros'
EXE = 'heartbeat_node'


def _joint_state(ros_node, names, positions):
    msg = JointState()
    msg.header.stamp = ros_node.node.get_clock().now().to_msg()
    msg.name = list(names)
    msg.position = [float(p) for p in positions]
    return msg


def _status_with(collector, **expected):
    """Return the latest status payload whose fields equal ``expected``."""
    for msg in reversed(collector.messages):
        payload = json_payload(msg)
        if payload and all(payload.get(k) == v for k, v in expected.items()):
            return payload
    return None


def test_package_is_installed():
    from ament_index_python.packages import get_package_prefix, get_package_share_directory

    exe = installed_executable(PKG, EXE)
    assert exe.parent == Path(get_package_prefix(PKG)) / 'lib' / PKG
    share = Path(get_package_share_directory(PKG))
    for rel in (
        'package.xml',
        'config/heartbeat.yaml',
        'launch/spart_ros.launch.py',
        'urdf/SC_3DoF.urdf',
        'urdf/kuka_iiwa.urdf',
    ):
        assert (share / rel).is_file(), f'{rel} not installed to {share}'


def test_heartbeat_round_trip(ros_node, node_process):
    """Publish joint states to the node, read its status back, stop it cleanly."""
    proc = node_process(PKG, EXE, parameters={'status_period': 0.2})
    status = ros_node.subscribe(String, '/spart_heartbeat/status', LATCHED_QOS)

    # The node is alive and publishing (periodic status, nothing received yet).
    first = ros_node.wait_for(
        lambda: _status_with(status, count=0),
        20.0,
        'the first status of spart_heartbeat',
        process=proc,
    )
    assert first['node'] == '/spart_heartbeat'
    assert first['rmw'] == os.environ.get('RMW_IMPLEMENTATION', first['rmw'])

    # A reliable publisher (like joint_state_broadcaster); names out of URDF order.
    names = ['joint_b', 'joint_a', 'joint_c']
    pub = ros_node.publisher(JointState, '/joint_states', RELIABLE_QOS)
    got = ros_node.publish_until(
        pub,
        lambda: _joint_state(ros_node, names, [0.1, 0.2, 0.3]),
        lambda: _status_with(status, joint_names=names),
        timeout=20.0,
        what='a status echoing the published joint names',
        process=proc,
    )
    assert got['count'] >= 1
    assert got['joint_count'] == 3
    assert got['last_stamp'] > 0

    # SIGINT is a clean shutdown.
    assert proc.stop() == 0, proc.describe()


def test_heartbeat_namespace_parameters_and_best_effort(ros_node, node_process):
    """
    Namespace, node name and parameters from a parameter file are honoured.

    A best-effort (sensor data) publisher is accepted.
    """
    proc = node_process(
        PKG,
        EXE,
        name='beat',
        namespace='/robot1',
        parameters={'joint_states_topic': 'js', 'status_period': 0.0},
    )
    status = ros_node.subscribe(String, '/robot1/beat/status', LATCHED_QOS)
    # status_period 0: only the start-up status, latched (TRANSIENT_LOCAL).
    first = ros_node.wait_for(
        lambda: _status_with(status, count=0), 20.0, 'the latched start-up status', process=proc
    )
    assert first['node'] == '/robot1/beat'

    ros_node.wait_for_subscribers('/robot1/js', 1, 10.0, process=proc)
    pub = ros_node.publisher(JointState, '/robot1/js', BEST_EFFORT_QOS)
    got = ros_node.publish_until(
        pub,
        lambda: _joint_state(ros_node, ['q1'], [1.0]),
        lambda: _status_with(status, joint_names=['q1']),
        timeout=20.0,
        what='a status after best-effort joint states',
        process=proc,
    )
    assert got['joint_count'] == 1
    assert proc.stop() == 0, proc.describe()
