"""The closed-loop demo's observer: one rclpy node that records every topic of the run.

:class:`Recorder` runs in the demo's process, in its own rclpy context, on rclpy's
EventsExecutor (spun in short slices: its ``spin()`` is broken in the Kilted wheels).  Every
0.25 s it looks at the ROS graph and subscribes, serialized (``raw=True``), to each topic it
has not seen yet, with a QoS that matches the topic's publishers (reliable when they all are,
transient local when they all are: ``robot_description`` is latched).  Each message goes
straight into the MCAP bag (:class:`spart_ros.tools.bag.McapBag`: the wire bytes and the
message definition, log time = receipt time, system clock) and, for the topics the caller
keeps, into memory as (receipt time in ns on the monotonic clock, bytes) for the analysis.

It also publishes (the trajectory, a test's stray commands) and calls services, spinning
while it waits, so the recording never stops.
"""
import importlib
import time

import rclpy
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
from rclpy.task import Future

from spart_ros.tools.bag import BagError, McapBag, message_definition

DISCOVERY_PERIOD = 0.25     # s between looks at the graph
DEPTH = 1000                # KEEP_LAST depth of the recording subscriptions


class RecorderError(RuntimeError):
    """A wait that timed out or a service that failed (the message says which)."""


def message_class(type_name):
    """The Python class of 'pkg/msg/Type'."""
    package, _, name = type_name.split('/')
    return getattr(importlib.import_module(f'{package}.msg'), name)


def _matching_qos(publishers):
    """A subscription QoS that matches every one of ``publishers`` (TopicEndpointInfo)."""
    qos = [p.qos_profile for p in publishers]
    reliable = all(q.reliability == ReliabilityPolicy.RELIABLE for q in qos)
    latched = all(q.durability == DurabilityPolicy.TRANSIENT_LOCAL for q in qos)
    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=DEPTH,
                      reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
                      durability=DurabilityPolicy.TRANSIENT_LOCAL if latched else DurabilityPolicy.VOLATILE)


class Recorder:
    """Records every topic of the ROS graph into the MCAP file ``bag_path`` (see the module
    docstring); ``keep(topic)`` says which topics' messages to keep in memory as well."""

    def __init__(self, bag_path, keep=lambda topic: False, name='spart_demo_recorder'):
        from rclpy.experimental import EventsExecutor
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.node = rclpy.create_node(name, context=self.context)
        self.executor = EventsExecutor(context=self.context)
        self.executor.add_node(self.node)
        self.bag = McapBag(bag_path)
        self.bag_path = bag_path
        self._keep = keep
        self.kept = {}              # topic -> ([receipt ns, monotonic clock], [bytes]): no tuples for the GC
        self.types = {}             # topic -> type name, for every recorded topic
        self.counts = {}            # topic -> messages recorded
        self.skipped = {}           # topic -> why it is not recorded
        self._subscriptions = {}
        self._never = Future()      # spun against: never completes
        self._closed = False
        self.node.create_timer(DISCOVERY_PERIOD, self.discover)

    # -- recording ------------------------------------------------------------------------
    def discover(self):
        """Subscribe to every topic with publishers that is not recorded yet."""
        for topic, type_names in self.node.get_topic_names_and_types():
            if topic in self._subscriptions or topic in self.skipped:
                continue
            if len(type_names) != 1:
                self.skipped[topic] = f'several types {type_names}'
                continue
            publishers = self.node.get_publishers_info_by_topic(topic)
            if not publishers:
                continue
            type_name = type_names[0]
            try:
                message_definition(type_name)      # the bag must be able to describe it
                cls = message_class(type_name)
            except (BagError, ImportError, AttributeError, ValueError) as err:
                self.skipped[topic] = f'{type_name}: {err}'
                continue
            self.types[topic] = type_name
            self.counts[topic] = 0
            keep = self._keep(topic)
            if keep:
                self.kept.setdefault(topic, ([], []))
            self._subscriptions[topic] = self.node.create_subscription(
                cls, topic, lambda data, t=topic, k=keep: self._on_message(t, data, k), _matching_qos(publishers),
                raw=True)

    def _on_message(self, topic, data, keep):
        self.bag.add(topic, self.types[topic], data, time.time_ns())
        self.counts[topic] += 1
        if keep:
            times, items = self.kept[topic]
            times.append(time.monotonic_ns())
            items.append(data)

    def count(self, topic):
        """Messages of a kept topic received so far."""
        return len(self.kept[topic][0]) if topic in self.kept else 0

    def messages(self, topic, type_name=None, start=0):
        """[(receipt ns, message)] of a kept topic from the ``start``-th on, deserialized."""
        if topic not in self.kept:
            return []
        cls = message_class(type_name or self.types[topic])
        times, items = self.kept[topic]
        return [(t, deserialize_message(data, cls)) for t, data in zip(times[start:], items[start:])]

    def last(self, topic, type_name=None):
        """The last message of a kept topic (deserialized), or None."""
        if not self.count(topic):
            return None
        return deserialize_message(self.kept[topic][1][-1], message_class(type_name or self.types[topic]))

    # -- spinning -------------------------------------------------------------------------
    def spin_for(self, seconds):
        end = time.monotonic() + seconds
        while (remaining := end - time.monotonic()) > 0:
            self.executor.spin_until_future_complete(self._never, timeout_sec=min(remaining, 0.05))

    def wait_for(self, predicate, timeout, what, alive=None):
        """Spin until ``predicate()`` is truthy and return its value; RecorderError after
        ``timeout`` s, or as soon as ``alive()`` (e.g. the launch process is running) is false."""
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if alive is not None and not alive():
                raise RecorderError(f'the nodes stopped while waiting for {what}')
            if time.monotonic() > deadline:
                raise RecorderError(f'timed out after {timeout:g} s waiting for {what}')
            self.executor.spin_until_future_complete(self._never, timeout_sec=0.02)

    # -- talking to the nodes -------------------------------------------------------------
    def publisher(self, msg_type, topic, qos):
        return self.node.create_publisher(msg_type, topic, qos)

    def call(self, srv_type, name, request, timeout=10.0, alive=None):
        """Call a service (waiting for it first) and return the response."""
        client = self.node.create_client(srv_type, name)
        try:
            self.wait_for(client.service_is_ready, timeout, f'the service {name}', alive)
            future = client.call_async(request)
            self.wait_for(future.done, timeout, f'the response of {name}', alive)
            return future.result()
        finally:
            self.node.destroy_client(client)

    def close(self):
        """Stop recording and finish the bag (idempotent)."""
        if self._closed:
            return
        self._closed = True
        try:
            self.executor.shutdown(timeout_sec=1.0)
            self.node.destroy_node()
        finally:
            if self.context.ok():
                self.context.try_shutdown()
            self.bag.close()
