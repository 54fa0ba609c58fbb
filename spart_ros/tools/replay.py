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

:class:`RobotTransforms` computes the transforms (SPART model, :mod:`spart_ros.core.link_frames`).
"""

from bisect import bisect_right
import os

import numpy as np

from .bag import BagError, message_definition
from ..core.attitude import quaternion_to_ros
from ..core.link_frames import joint_transforms

__all__ = ['RobotTransforms', 'tf_message', 'add_replay_topics', 'TF_TYPE']

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


def tf_message(stamp_ns, transforms):
    """
    Return a TFMessage as a dict (for a dynamic encoder).

    ``transforms`` [(parent, child, (4, 4))].
    """
    stamp = {'sec': int(stamp_ns // 1_000_000_000), 'nanosec': int(stamp_ns % 1_000_000_000)}
    out = []
    for parent, child, T in transforms:
        x, y, z, w = quaternion_to_ros(np.asarray(T[:3, :3], dtype=float))
        out.append(
            {
                'header': {'stamp': stamp, 'frame_id': parent},
                'child_frame_id': child,
                'transform': {
                    'translation': {'x': float(T[0, 3]), 'y': float(T[1, 3]), 'z': float(T[2, 3])},
                    'rotation': {'x': float(x), 'y': float(y), 'z': float(z), 'w': float(w)},
                },
            }
        )
    return {'transforms': out}


def _stamp_ns(header):
    return header.stamp.sec * 1_000_000_000 + header.stamp.nanosec


def _pose_matrix(pose):
    from ..core.attitude import quaternion_from_ros

    o, p = pose.orientation, pose.position
    T = np.eye(4)
    T[:3, :3] = quaternion_from_ros(o.x, o.y, o.z, o.w)
    T[:3, 3] = [p.x, p.y, p.z]
    return T


def add_replay_topics(path, robot, namespace='', out_path=None, clock_topic='/clock'):
    """
    Rewrite the MCAP bag ``path`` with ``/tf``, ``/tf_static``, ``/robot_description``.

    Written into ``out_path`` (default in place), with log times on the ``clock_topic`` clock (see
    the module docstring). ``namespace``: of the recorded ``joint_states``, ``odom`` and
    ``robot_description`` topics (e.g. '/demo_kuka'). Returns {topic: messages added}. BagError
    (nothing written) if the bag has /tf or /tf_static already.
    """
    from mcap.reader import make_reader
    from mcap.writer import Writer
    from mcap_ros2._dynamic import serialize_dynamic
    from mcap_ros2.decoder import DecoderFactory

    ns = namespace.rstrip('/')
    topics = {
        f'{ns}/joint_states': 'joint_states',
        f'{ns}/odom': 'odom',
        f'{ns}/robot_description': 'description',
        clock_topic: 'clock',
    }
    decoder = DecoderFactory()
    messages = []  # (schema, channel, message, decoded or None), recorded order
    with open(path, 'rb') as f:
        for schema, channel, message in make_reader(f).iter_messages(log_time_order=True):
            decoded = None
            if channel.topic in topics:
                decoded = decoder.decoder_for(channel.message_encoding, schema)(message.data)
            messages.append((schema, channel, message, decoded))
    present = sorted({channel.topic for _, channel, _, _ in messages} & {'/tf', '/tf_static'})
    if present:
        raise BagError(
            f'{path} already has {" and ".join(present)} (recorded from robot_state_publisher, or '
            'replay topics added before): nothing added'
        )
    clock_wall, clock_sim = [], []
    for _, channel, message, decoded in messages:
        if topics.get(channel.topic) == 'clock':
            clock_wall.append(message.log_time)
            clock_sim.append(decoded.clock.sec * 1_000_000_000 + decoded.clock.nanosec)

    def sim_time(t):
        if not clock_wall:
            return t
        k = bisect_right(clock_wall, t) - 1
        return clock_sim[max(k, 0)]

    definition = message_definition(TF_TYPE)
    encode = serialize_dynamic(TF_TYPE, definition)[TF_TYPE]
    transforms = RobotTransforms(robot)
    out_path = out_path or path
    tmp = f'{out_path}.tmp'
    added = {'/tf': 0, '/tf_static': 0, '/robot_description': 0}
    with open(tmp, 'wb') as f:
        writer = Writer(f)
        writer.start(profile='ros2', library='spart_ros')
        schema_ids, channel_ids, sequence = {}, {}, {}

        def channel_for(topic, schema_name, encoding, data):
            key = (schema_name, data)
            if key not in schema_ids:
                schema_ids[key] = writer.register_schema(
                    name=schema_name, encoding=encoding, data=data
                )
            if topic not in channel_ids:
                channel_ids[topic] = writer.register_channel(
                    topic=topic, message_encoding='cdr', schema_id=schema_ids[key], metadata={}
                )
                sequence[topic] = 0
            return channel_ids[topic]

        def write(topic, schema_name, encoding, schema_data, data, log_time, publish_time):
            channel = channel_for(topic, schema_name, encoding, schema_data)
            sequence[topic] += 1
            writer.add_message(
                channel,
                log_time=int(log_time),
                data=data,
                publish_time=int(publish_time),
                sequence=sequence[topic],
            )

        def write_tf(topic, stamp_ns, tfs, log_time, publish_time):
            write(
                topic,
                TF_TYPE,
                'ros2msg',
                definition.encode('utf-8'),
                encode(tf_message(stamp_ns, tfs)),
                log_time,
                publish_time,
            )
            added[topic] += 1

        first = True
        for schema, channel, message, decoded in messages:
            t = sim_time(message.log_time)
            if first:
                write_tf('/tf_static', t, transforms.static(), t, message.log_time)
                first = False
            write(
                channel.topic,
                schema.name,
                schema.encoding,
                schema.data,
                message.data,
                t,
                message.log_time,
            )
            kind = topics.get(channel.topic)
            if kind == 'joint_states':
                write_tf(
                    '/tf',
                    _stamp_ns(decoded.header),
                    transforms.moving(decoded.name, decoded.position),
                    t,
                    message.log_time,
                )
            elif kind == 'odom':
                parent = decoded.header.frame_id or 'odom'
                child = decoded.child_frame_id or robot.base_link.name
                write_tf(
                    '/tf',
                    _stamp_ns(decoded.header),
                    [(parent, child, _pose_matrix(decoded.pose.pose))],
                    t,
                    message.log_time,
                )
            elif kind == 'description' and ns and not added['/robot_description']:
                write(
                    '/robot_description',
                    schema.name,
                    schema.encoding,
                    schema.data,
                    message.data,
                    t,
                    message.log_time,
                )
                added['/robot_description'] += 1
        writer.finish()
    os.replace(tmp, out_path)
    return added
