"""
Record every topic of a ROS graph into an MCAP bag, as ``ros2 bag record`` would (rclpy adapter).

:class:`BagRecorder` is composed by a node: it looks for topics every ``discovery_period``
seconds, subscribes to each new one matching ``include`` with the QoS its publishers offer
(TRANSIENT_LOCAL when one of them is, so a latched robot_description is recorded; BEST_EFFORT
when one of them is, else RELIABLE: the same adaptation rosbag2 makes), and writes the
serialized messages as they arrive (receipt time) through :class:`spart_ros.tools.bag.McapBag`.
"""

import importlib
import time

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from ..tools.bag import McapBag

__all__ = ['BagRecorder', 'message_class']


def message_class(type_name):
    """
    Return the Python class of a message type name 'pkg/msg/Type'.

    rosidl_runtime_py's get_message, which is not installed with the rclpy wheels.
    """
    package, kind, name = type_name.split('/')
    return getattr(importlib.import_module(f'{package}.{kind}'), name)


class BagRecorder:
    """
    Recorder of topics of ``node``'s graph into ``path``.

    It records the topics whose names ``include(name)`` accepts.
    """

    def __init__(self, node, path, include=lambda name: True, discovery_period=0.2, depth=1000):
        self.node = node
        self.bag = McapBag(path)
        self.include = include
        self.depth = depth
        self.subscriptions = {}
        self.skipped = {}  # topic -> why it is not recorded
        self._timer = node.create_timer(discovery_period, self.discover)
        self.discover()

    def _qos(self, topic):
        infos = self.node.get_publishers_info_by_topic(topic)
        durable = any(i.qos_profile.durability == DurabilityPolicy.TRANSIENT_LOCAL for i in infos)
        best_effort = any(
            i.qos_profile.reliability == ReliabilityPolicy.BEST_EFFORT for i in infos
        )
        return QoSProfile(
            history=HistoryPolicy.KEEP_LAST,
            depth=self.depth,
            reliability=ReliabilityPolicy.BEST_EFFORT
            if best_effort
            else ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.TRANSIENT_LOCAL if durable else DurabilityPolicy.VOLATILE,
        )

    def discover(self):
        """Subscribe to the matching topics that appeared since the last look."""
        for topic, types in self.node.get_topic_names_and_types():
            if topic in self.subscriptions or topic in self.skipped or not self.include(topic):
                continue
            if not self.node.get_publishers_info_by_topic(topic):
                continue  # only subscribers so far: look again later
            type_name = types[0]
            try:
                msg_type = message_class(type_name)
            except (AttributeError, ImportError, ValueError) as err:
                self.skipped[topic] = f'type {type_name} not available: {err}'
                continue
            self.subscriptions[topic] = self.node.create_subscription(
                msg_type, topic, self._writer(topic, type_name), self._qos(topic), raw=True
            )

    def _writer(self, topic, type_name):
        bag = self.bag

        def write(data):
            bag.add(topic, type_name, data, time.time_ns())

        return write

    def close(self):
        """Stop recording and finish the file (idempotent)."""
        if self._timer is not None:
            self._timer.cancel()
            self.node.destroy_timer(self._timer)
            self._timer = None
        for sub in self.subscriptions.values():
            self.node.destroy_subscription(sub)
        self.subscriptions.clear()
        self.bag.close()
