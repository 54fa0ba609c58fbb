"""
Record every topic of a ROS graph into an MCAP bag, as ``ros2 bag record`` would (rclpy adapter).

:class:`BagRecorder` is composed by a node: it looks for topics every ``discovery_period``
seconds, subscribes to each new one matching ``include`` with the QoS its publishers offer
(TRANSIENT_LOCAL when one of them is, so a latched robot_description is recorded; BEST_EFFORT
when one of them is, else RELIABLE: the same adaptation rosbag2 makes), and writes the
serialized messages as they arrive (receipt time) through :class:`spart_ros.tools.bag.McapBag`.

``listeners`` ({topic: callback(data)}) get the serialized messages of topics it records, e.g. a
monitor in the same node that follows them without subscribing a second time (at 1 kHz a second
delivery of each message costs as much CPU as the recording).

Topics found by discovery are recorded from the moment they are found and their subscription
matched: each one from another moment (a 1 kHz topic found 0.2 s later than another loses 200
messages the other has).  Topics the caller knows in advance (``expect``: {topic: type}, from
RELIABLE publishers, as ``ros2 bag record --topics`` with a QoS override) are subscribed at once,
before their publishers start.  Their publishers still match the subscriptions one by one, so
the first messages of one topic may come without those of another: ``align`` (expected topics
whose messages start with their stamp: a std_msgs/Header, or rosgraph_msgs/Clock's time) starts
their recording at the first stamp every one of them delivered, so that a state published on
several topics at once (a simulator's joint_states, odometry, IMU, clock) is in the bag on all of
them or on none; the messages before it are left out and counted (``dropped_at_start``).
"""

import importlib
import struct
import time

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

from ..tools.bag import McapBag

__all__ = ['BagRecorder', 'message_class']

_STAMP = struct.Struct('<iI')  # after the 4-byte CDR encapsulation: sec, nanosec


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

    def __init__(
        self,
        node,
        path,
        include=lambda name: True,
        discovery_period=0.2,
        depth=1000,
        expect=None,
        align=(),
        listeners=None,
    ):
        self.node = node
        #: {topic: callback(data)}: called with each serialized message of the topic it records
        #: (the caller's own use of it, without a second subscription: one delivery less)
        self.listeners = dict(listeners or {})
        self.bag = McapBag(path)
        self.include = include
        self.depth = depth
        self.subscriptions = {}
        self.skipped = {}  # topic -> why it is not recorded
        self._aligned = {topic: [] for topic in align}  # held until each delivered one
        self.start_stamp = None  # ns: the first stamp every aligned topic delivered
        self.dropped_at_start = dict.fromkeys(align, 0)
        reliable = QoSProfile(
            history=HistoryPolicy.KEEP_LAST,
            depth=depth,
            reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.VOLATILE,
        )
        for topic, type_name in (expect or {}).items():
            self._subscribe(topic, type_name, reliable)
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
            self._subscribe(topic, types[0], self._qos(topic))

    def _subscribe(self, topic, type_name, qos):
        try:
            msg_type = message_class(type_name)
        except (AttributeError, ImportError, ValueError) as err:
            self.skipped[topic] = f'type {type_name} not available: {err}'
            return
        self.subscriptions[topic] = self.node.create_subscription(
            msg_type, topic, self._writer(topic, type_name), qos, raw=True
        )

    def _writer(self, topic, type_name):
        bag, listener = self.bag, self.listeners.get(topic)
        if topic in self._aligned:
            if listener is None:
                return lambda data: self._aligned_write(topic, type_name, data, time.time_ns())

            def aligned(data):
                self._aligned_write(topic, type_name, data, time.time_ns())
                listener(data)

            return aligned
        if listener is not None:

            def write_and_listen(data):
                bag.add(topic, type_name, data, time.time_ns())
                listener(data)

            return write_and_listen

        def write(data):
            bag.add(topic, type_name, data, time.time_ns())

        return write

    def _aligned_write(self, topic, type_name, data, received):
        sec, nanosec = _STAMP.unpack_from(data, 4)
        stamp = sec * 1_000_000_000 + nanosec
        if self.start_stamp is not None:
            if stamp >= self.start_stamp:
                self.bag.add(topic, type_name, data, received)
            else:
                self.dropped_at_start[topic] += 1
            return
        held = self._aligned
        held[topic].append((received, stamp, type_name, data))
        if all(held.values()):  # every aligned topic delivered: record from their first stamp
            self.start_stamp = max(messages[0][1] for messages in held.values())
            self._flush_held()

    def _flush_held(self):
        held = sorted(
            (received, topic, stamp, type_name, data)
            for topic, messages in self._aligned.items()
            for received, stamp, type_name, data in messages
        )
        for received, topic, stamp, type_name, data in held:
            if self.start_stamp is None or stamp >= self.start_stamp:
                self.bag.add(topic, type_name, data, received)
            else:
                self.dropped_at_start[topic] += 1
        for messages in self._aligned.values():
            messages.clear()

    def close(self):
        """Stop recording and finish the file (idempotent)."""
        if self.start_stamp is None:
            self._flush_held()  # an aligned topic never came: what the others had, unaligned
        if self._timer is not None:
            self._timer.cancel()
            self.node.destroy_timer(self._timer)
            self._timer = None
        for sub in self.subscriptions.values():
            self.node.destroy_subscription(sub)
        self.subscriptions.clear()
        self.bag.close()
