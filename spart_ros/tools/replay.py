"""
What replaying a recorded run in Foxglove or RViz needs, added to an MCAP bag (no ROS needed).

A run recorded on a graph without robot_state_publisher (the demo's) has joint states, odometry and
``robot_description`` but no transforms, so a 3D view cannot show the robot move.
:func:`add_replay_topics` rewrites such a bag with:

- ``/tf`` (``tf2_msgs/msg/TFMessage``): at every joint state, the transform of every joint it names
  from its parent link's URDF frame to its child's, as robot_state_publisher publishes them (the
  joint's ``<origin>`` then its motion; mimic followers from their leaders), stamped with the joint
  state's stamp; at every odometry message, ``header.frame_id -> child_frame_id`` (odom -> base
  link), stamped with its stamp;
- ``/tf_static``: the fixed joints, once, at the start;
- ``/robot_description``: the namespaced description once more at the root, where Foxglove's 3D
  panel loads a URDF from;
- log times on the simulation clock (``/clock``), as ``ros2 bag record --use-sim-time`` records, so
  that the messages' stamps and the playback time agree (Foxglove looks transforms up at the
  playback time); the receipt time each message was recorded with is kept as its publish time.

:class:`RobotTransforms` computes the transforms (SPART model, :mod:`spart_ros.core.link_frames`),
:func:`tf_message_cdr` serializes them.
"""

from bisect import bisect_right
import os
import struct

import numpy as np

from .bag import BagError, message_definition, read_messages
from ..core.attitude import quaternion_to_ros
from ..core.link_frames import joint_transforms

__all__ = ['RobotTransforms', 'tf_message', 'tf_message_cdr', 'add_replay_topics', 'TF_TYPE']

TF_TYPE = 'tf2_msgs/TFMessage'


class RobotTransforms:
    """
    The transforms robot_state_publisher publishes for ``robot`` (a SPART model from the URDF).

    ``static()``: [(parent link, child link, (4, 4))] of the fixed joints.  ``moving(names,
    positions)``: the same for the moving joints named (unknown names ignored), and the mimic
    followers of the leaders named (when the follower itself is not), at those positions.
    """

    def __init__(self, robot):
        self.robot = robot
        self.q = np.zeros(robot.n_q)  # last known positions, SPART's full joint order
        self._index = {name: k for k, name in enumerate(robot.q_names)}
        self._followers = {}  # leader -> [(follower, Mimic)]
        for follower, mimic in robot.mimic.items():
            self._followers.setdefault(mimic.leader, []).append((follower, mimic))
        names = [robot.base_link.name] + [link.name for link in robot.links]
        self._ends = {j.name: (names[j.parent_link], names[j.child_link]) for j in robot.joints}

    def static(self):
        return [
            self._ends[j.name] + (T,)
            for j, T in joint_transforms(self.robot, self.q, moving=False)
        ]

    def moving(self, names, positions):
        named = set()
        for name, value in zip(names, positions):
            k = self._index.get(name)
            if k is not None:
                self.q[k] = float(value)
                named.add(name)
        for leader in [n for n in named if n in self._followers]:
            for follower, m in self._followers[leader]:
                if follower not in named:
                    self.q[self._index[follower]] = (
                        m.multiplier * self.q[self._index[leader]] + m.offset
                    )
                    named.add(follower)
        return [
            self._ends[j.name] + (T,)
            for j, T in joint_transforms(self.robot, self.q, fixed=False)
            if j.name in named
        ]


def _transform_values(T):
    """Return (x, y, z, qx, qy, qz, qw): translation and ROS quaternion of a (4, 4) transform."""
    x, y, z, w = quaternion_to_ros(np.asarray(T[:3, :3], dtype=float))
    return float(T[0, 3]), float(T[1, 3]), float(T[2, 3]), float(x), float(y), float(z), float(w)


def tf_message(stamp_ns, transforms):
    """
    Return a TFMessage as a dict (for a dynamic encoder).

    ``transforms`` [(parent, child, (4, 4))].
    """
    stamp = {'sec': int(stamp_ns // 1_000_000_000), 'nanosec': int(stamp_ns % 1_000_000_000)}
    out = []
    for parent, child, T in transforms:
        tx, ty, tz, x, y, z, w = _transform_values(T)
        out.append(
            {
                'header': {'stamp': stamp, 'frame_id': parent},
                'child_frame_id': child,
                'transform': {
                    'translation': {'x': tx, 'y': ty, 'z': tz},
                    'rotation': {'x': x, 'y': y, 'z': z, 'w': w},
                },
            }
        )
    return {'transforms': out}


_CDR_LE = b'\x00\x01\x00\x00'  # encapsulation header: plain CDR, little endian
_UINT32 = struct.Struct('<I')
_STAMP = struct.Struct('<iI')  # builtin_interfaces/Time: sec, nanosec
_TRANSFORM = struct.Struct('<7d')  # translation x, y, z; rotation x, y, z, w


def _pad(buf, n):
    """Append zeros up to a multiple of ``n`` bytes after the encapsulation header."""
    buf += bytes(-(len(buf) - 4) % n)


def _append_string(buf, text):
    data = text.encode('utf-8')
    _pad(buf, 4)
    buf += _UINT32.pack(len(data) + 1)
    buf += data
    buf += b'\0'


def tf_message_cdr(stamp_ns, transforms):
    """
    Return the serialized (CDR) TFMessage of :func:`tf_message`, without a dynamic encoder.

    ``stamp_ns``: the stamp of every transform (ns); ``transforms`` [(parent, child, (4, 4))].
    Little endian after the encapsulation header, as rclpy publishes: the bytes mcap_ros2's
    encoder writes for ``tf_message(stamp_ns, transforms)`` (test_replay.py compares them).
    """
    sec, nanosec = int(stamp_ns // 1_000_000_000), int(stamp_ns % 1_000_000_000)
    buf = bytearray(_CDR_LE)
    buf += _UINT32.pack(len(transforms))
    for parent, child, T in transforms:
        _pad(buf, 4)
        buf += _STAMP.pack(sec, nanosec)
        _append_string(buf, parent)
        _append_string(buf, child)
        _pad(buf, 8)
        buf += _TRANSFORM.pack(*_transform_values(T))
    return bytes(buf)


def _stamp_ns(header):
    return header.stamp.sec * 1_000_000_000 + header.stamp.nanosec


def _pose_matrix(pose):
    from ..core.attitude import quaternion_from_ros

    o, p = pose.orientation, pose.position
    T = np.eye(4)
    T[:3, :3] = quaternion_from_ros(o.x, o.y, o.z, o.w)
    T[:3, 3] = [p.x, p.y, p.z]
    return T


def _sim_clock(clock):
    """
    Return ``sim_time(t)``: the simulation time (ns) at the receipt time ``t`` (ns).

    ``clock``: [(receipt time, decoded rosgraph_msgs/Clock)] in receipt order; the last clock
    received at ``t`` (the first before any); none: ``t`` itself.
    """
    wall = [t for t, _ in clock]
    sim = [c.clock.sec * 1_000_000_000 + c.clock.nanosec for _, c in clock]

    def sim_time(t):
        if not wall:
            return t
        return sim[max(bisect_right(wall, t) - 1, 0)]

    return sim_time


class _Rewriter:
    """
    An MCAP file written from another one's messages: ``write(...)``, then ``finish()``.

    A schema per (name, text) and a channel per topic, registered on first use (CDR messages);
    sequence numbers counted per topic.
    """

    def __init__(self, f):
        from mcap.writer import Writer

        self._writer = Writer(f)
        self._writer.start(profile='ros2', library='spart_ros')
        self._schemas, self._channels, self._sequence = {}, {}, {}

    def write(self, topic, schema, data, log_time, publish_time):
        """Add a message: ``schema`` (name, encoding, text bytes); times in ns."""
        channel = self._channels.get(topic)
        if channel is None:
            channel = self._register(topic, schema)
        self._sequence[topic] += 1
        self._writer.add_message(
            channel,
            log_time=int(log_time),
            data=data,
            publish_time=int(publish_time),
            sequence=self._sequence[topic],
        )

    def _register(self, topic, schema):
        name, encoding, text = schema
        if (name, text) not in self._schemas:
            self._schemas[name, text] = self._writer.register_schema(
                name=name, encoding=encoding, data=text
            )
        channel = self._channels[topic] = self._writer.register_channel(
            topic=topic, message_encoding='cdr', schema_id=self._schemas[name, text], metadata={}
        )
        self._sequence[topic] = 0
        return channel

    def finish(self):
        self._writer.finish()


def _moved(kind, decoded, transforms, robot):
    """Return the /tf transforms of a recorded message (None: not a joint state or odometry)."""
    if kind == 'joint_states':
        return transforms.moving(decoded.name, decoded.position)
    if kind == 'odom':
        parent = decoded.header.frame_id or 'odom'
        child = decoded.child_frame_id or robot.base_link.name
        return [(parent, child, _pose_matrix(decoded.pose.pose))]
    return None


def _replay(out, messages, kinds, robot, ns, sim_time):
    """Write ``messages`` and the replay topics into ``out`` (a _Rewriter); return the counts."""
    transforms = RobotTransforms(robot)
    tf_schema = (TF_TYPE, 'ros2msg', message_definition(TF_TYPE).encode('utf-8'))
    added = {'/tf': 0, '/tf_static': 0, '/robot_description': 0}

    def add(topic, schema, data, t, receipt):
        out.write(topic, schema, data, t, receipt)
        added[topic] += 1

    for k, (schema, channel, message, decoded) in enumerate(messages):
        t, receipt = sim_time(message.log_time), message.log_time
        if k == 0:
            add('/tf_static', tf_schema, tf_message_cdr(t, transforms.static()), t, receipt)
        recorded = (schema.name, schema.encoding, schema.data)
        out.write(channel.topic, recorded, message.data, t, receipt)
        kind = kinds.get(channel.topic)
        moved = _moved(kind, decoded, transforms, robot)
        if moved is not None:
            tf = tf_message_cdr(_stamp_ns(decoded.header), moved)
            add('/tf', tf_schema, tf, t, receipt)
        elif kind == 'description' and ns and not added['/robot_description']:
            add('/robot_description', recorded, message.data, t, receipt)
    return added


def add_replay_topics(
    path,
    robot,
    namespace='',
    out_path=None,
    clock_topic='/clock',
    messages=None,
    odometry_topics=(),
):
    """
    Rewrite the MCAP bag ``path`` with ``/tf``, ``/tf_static``, ``/robot_description``.

    Written into ``out_path`` (default in place), with log times on the ``clock_topic`` clock (see
    the module docstring). ``namespace``: of the recorded ``joint_states``, ``odom`` and
    ``robot_description`` topics (e.g. '/demo_kuka'). ``messages``: the bag's messages as
    :func:`spart_ros.tools.bag.read_messages` returns them, decoded at least on those topics and
    ``clock_topic``, when read already (else read here); ``odometry_topics``: more
    nav_msgs/Odometry topics whose poses go on ``/tf`` too (``frame_id -> child_frame_id``, e.g. a
    capture's target). Returns {topic: messages added}.
    BagError (nothing written) if the bag has /tf or /tf_static already.
    """
    ns = namespace.rstrip('/')
    kinds = {
        f'{ns}/joint_states': 'joint_states',
        f'{ns}/odom': 'odom',
        f'{ns}/robot_description': 'description',
        clock_topic: 'clock',
        **dict.fromkeys(odometry_topics, 'odom'),
    }
    if messages is None:
        messages = read_messages(path, decode=kinds)
    present = sorted({channel.topic for _, channel, _, _ in messages} & {'/tf', '/tf_static'})
    if present:
        raise BagError(
            f'{path} already has {" and ".join(present)} (recorded from robot_state_publisher, or '
            'replay topics added before): nothing added'
        )
    sim_time = _sim_clock([(m.log_time, d) for _, c, m, d in messages if c.topic == clock_topic])
    out_path = out_path or path
    tmp = f'{out_path}.tmp'
    with open(tmp, 'wb') as f:
        out = _Rewriter(f)
        added = _replay(out, messages, kinds, robot, ns, sim_time)
        out.finish()
    os.replace(tmp, out_path)
    return added
