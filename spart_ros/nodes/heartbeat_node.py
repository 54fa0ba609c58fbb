"""
spart_heartbeat: a minimal liveness/diagnostic node of spart_ros.

It subscribes to ``joint_states`` (sensor_msgs/JointState) and publishes on
``~/status`` (std_msgs/String) a JSON document with the number of messages
received so far and the joint names of the last one, e.g.::

    {"node": "/spart_heartbeat", "count": 3, "joint_names": ["j1", "j2"],
     "joint_count": 2, "last_stamp": 12.5, "rmw": "rmw_fastrtps_cpp"}

A status is published on every received message and, in any case, every
``status_period`` seconds, so a subscriber sees the node is alive before any
joint state arrives.

Parameters (declared at start-up):
    joint_states_topic (string, "joint_states"): input topic; relative, so it
        follows the node's namespace (``/joint_states`` without one).
    status_period (double, 1.0): seconds between periodic status messages;
        <= 0 disables the timer (status only on received messages).

QoS:
    joint_states: BEST_EFFORT, VOLATILE, KEEP_LAST 10 - accepts both the
        reliable joint_state_broadcaster and best-effort (sensor data)
        publishers.
    ~/status: RELIABLE, TRANSIENT_LOCAL, KEEP_LAST 1 - a late subscriber
        (with TRANSIENT_LOCAL durability) still gets the latest status.

Run: ``ros2 run spart_ros heartbeat_node`` on a ROS 2 install, or the
installed ``lib/spart_ros/heartbeat_node`` / ``python -m
spart_ros.nodes.heartbeat_node`` here.
"""

import json
import sys

from rcl_interfaces.msg import ParameterDescriptor
import rclpy
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from spart_ros.nodes.runner import run_node
from std_msgs.msg import String

NODE_NAME = 'spart_heartbeat'

JOINT_STATES_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=10,
    reliability=ReliabilityPolicy.BEST_EFFORT,
    durability=DurabilityPolicy.VOLATILE,
)

STATUS_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=1,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL,
)


class HeartbeatNode(Node):
    """Counts joint_states messages and reports them on ~/status."""

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        self.declare_parameter(
            'joint_states_topic',
            'joint_states',
            ParameterDescriptor(description='Input sensor_msgs/JointState topic.', read_only=True),
        )
        self.declare_parameter(
            'status_period',
            1.0,
            ParameterDescriptor(
                description='Seconds between periodic status messages; <= 0 disables them.',
                read_only=True,
            ),
        )
        topic = self.get_parameter('joint_states_topic').value
        period = float(self.get_parameter('status_period').value)

        self._count = 0
        self._names = []
        self._last_stamp = None
        self._status_pub = self.create_publisher(String, '~/status', STATUS_QOS)
        self._sub = self.create_subscription(
            JointState, topic, self._on_joint_state, JOINT_STATES_QOS
        )
        self._timer = self.create_timer(period, self.publish_status) if period > 0 else None
        self.get_logger().info(
            f'listening on {self._sub.topic_name}, status on '
            f'{self._status_pub.topic_name} (period {period} s)'
        )
        self.publish_status()

    @property
    def count(self):
        """Return the number of joint_states messages received."""
        return self._count

    def _on_joint_state(self, msg):
        self._count += 1
        self._names = list(msg.name)
        self._last_stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        self.publish_status()

    def status(self):
        """Return the status document (a dict) published on ~/status."""
        return {
            'node': self.get_fully_qualified_name(),
            'count': self._count,
            'joint_names': self._names,
            'joint_count': len(self._names),
            'last_stamp': self._last_stamp,
            'rmw': rclpy.utilities.get_rmw_implementation_identifier(),
        }

    def publish_status(self):
        self._status_pub.publish(String(data=json.dumps(self.status())))


def main(args=None):
    """Entry point: run the node until SIGINT/SIGTERM; returns the exit code."""
    return run_node(HeartbeatNode, args=args)


if __name__ == '__main__':
    sys.exit(main())
