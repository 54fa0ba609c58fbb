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

import os
import struct

import numpy as np

from .bag import BagError, message_definition, read_messages
from ..core.attitude import quaternion_from_ros, quaternion_to_ros
from ..core.checks import QUATERNION_TOL
from ..core.errors import InputError
from ..core.link_frames import joint_origin, joint_transforms
from ..core.model import FIXED, PRISMATIC, REVOLUTE

__all__ = [
    'RobotTransforms',
    'tf_message',
    'tf_message_cdr',
    'tf_messages_cdr',
    'rotations_to_ros',
    'add_replay_topics',
    'TF_TYPE',
]

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

    def moving_values(self, states):
        """
        Return the transforms of :meth:`moving` for many joint states at once (numpy).

        ``states`` [(names, positions)] in order; returns [(rows, pairs, values)]: for each run of
        states naming the same joints, their indices in ``states``, the [(parent, child)] of the
        transforms and (len(rows), len(pairs), 7) translation and ROS quaternion values, as
        :func:`_transform_values` of :meth:`moving` for each state.  Leaves ``q`` at the last.
        """
        out, start = [], 0
        keys = [(tuple(names), min(len(names), len(positions))) for names, positions in states]
        for i in range(1, len(states) + 1):
            if i == len(states) or keys[i] != keys[start]:
                names, m = keys[start]
                P = np.array([states[k][1][:m] for k in range(start, i)], dtype=float)
                out.append((range(start, i),) + self._run(names[:m], P.reshape(i - start, m)))
                start = i
        return out

    def _run(self, names, P):
        """(pairs, values) of the states (len(P),) naming ``names`` with positions ``P``."""
        Q = np.tile(self.q, (len(P), 1))
        named = {}
        for j, name in enumerate(names):
            k = self._index.get(name)
            if k is not None:
                named[name] = k
                Q[:, k] = P[:, j]  # a name given twice: the last, as moving()
        for leader in [n for n in named if n in self._followers]:
            for follower, m in self._followers[leader]:
                if follower not in named:
                    k = named[follower] = self._index[follower]
                    Q[:, k] = m.multiplier * Q[:, self._index[leader]] + m.offset
        if not np.all(np.isfinite(Q)):
            bad = np.flatnonzero(~np.all(np.isfinite(Q), axis=1))[0]
            raise InputError(f'q: NaN or infinity in {Q[bad].tolist()} (a joint state)')
        if len(Q):
            self.q = Q[-1].copy()
        joints = [j for j in self.robot.joints if j.type != FIXED and j.name in named]
        values = np.empty((len(Q), len(joints), 7))
        for c, joint in enumerate(joints):
            origin = joint_origin(self.robot, joint)
            theta = Q[:, joint.q_id - 1]
            R, p = (
                np.broadcast_to(origin[:3, :3], (len(Q), 3, 3)),
                np.broadcast_to(origin[:3, 3], (len(Q), 3)),
            )
            if joint.type == REVOLUTE:
                R = origin[:3, :3] @ _axis_rotations(joint.axis, theta)
            elif joint.type == PRISMATIC:
                p = origin[:3, 3] + np.outer(
                    theta, origin[:3, :3] @ np.asarray(joint.axis, dtype=float)
                )
            values[:, c, :3], values[:, c, 3:] = p, rotations_to_ros(R)
        return [self._ends[j.name] for j in joints], values


def _axis_rotations(axis, theta):
    """(N, 3, 3) rotations by ``theta`` (N,) about the unit ``axis``: link_frames' Rodrigues."""
    x, y, z = (float(a) for a in axis)
    c, s = np.cos(theta), np.sin(theta)
    C = 1.0 - c
    return np.stack(
        [
            np.stack([c + x * x * C, x * y * C - z * s, x * z * C + y * s], axis=1),
            np.stack([y * x * C + z * s, c + y * y * C, y * z * C - x * s], axis=1),
            np.stack([z * x * C - y * s, z * y * C + x * s, c + z * z * C], axis=1),
        ],
        axis=1,
    )


def _pose_values(poses):
    """
    (N, 7) translation and ROS quaternion of geometry_msgs Poses: the pose matrix's values.

    The quaternions checked and normalized as :func:`quaternion_from_ros` does (its InputError).
    """
    values = np.array(
        [
            (p.position.x, p.position.y, p.position.z)
            + (p.orientation.x, p.orientation.y, p.orientation.z, p.orientation.w)
            for p in poses
        ],
        dtype=float,
    ).reshape(len(poses), 7)
    q = values[:, 3:]
    n2 = np.sum(q * q, axis=1)
    bad = ~np.isfinite(values).all(axis=1) | (n2 == 0) | (np.abs(n2 - 1) > QUATERNION_TOL)
    if bad.any():
        o = poses[int(np.flatnonzero(bad)[0])].orientation
        quaternion_from_ros(o.x, o.y, o.z, o.w)  # raises the error naming the problem
    q = np.where(np.abs(n2 - 1)[:, None] <= 1e-12, q, q / np.sqrt(n2)[:, None])
    q1, q2, q3, q4 = q.T
    D = np.stack(
        [
            np.stack(
                [1 - 2 * (q2**2 + q3**2), 2 * (q1 * q2 + q3 * q4), 2 * (q1 * q3 - q2 * q4)], 1
            ),
            np.stack(
                [2 * (q2 * q1 - q3 * q4), 1 - 2 * (q1**2 + q3**2), 2 * (q2 * q3 + q1 * q4)], 1
            ),
            np.stack(
                [2 * (q3 * q1 + q2 * q4), 2 * (q3 * q2 - q1 * q4), 1 - 2 * (q1**2 + q2**2)], 1
            ),
        ],
        axis=1,
    )
    values[:, 3:] = rotations_to_ros(np.swapaxes(D, 1, 2))
    return values


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
    values = np.array([[_transform_values(T) for _, _, T in transforms]], dtype=float)
    pairs = [(parent, child) for parent, child, _ in transforms]
    return tf_messages_cdr([stamp_ns], pairs, values.reshape(1, len(pairs), 7))[0]


def _tf_layout(pairs):
    """
    Return (template bytes, numpy dtype) of a TFMessage of the frames ``pairs`` [(parent, child)].

    The template has the strings, lengths and padding; the dtype's fields ``s{k}``, ``n{k}``
    (sec, nanosec) and ``v{k}`` (7 float64: translation, rotation x y z w) of transform ``k``
    are at their offsets in it.
    """
    buf = bytearray(_CDR_LE)
    buf += _UINT32.pack(len(pairs))
    names, formats, offsets = [], [], []
    for k, (parent, child) in enumerate(pairs):
        _pad(buf, 4)
        names += [f's{k}', f'n{k}']
        formats += ['<i4', '<u4']
        offsets += [len(buf), len(buf) + 4]
        buf += bytes(_STAMP.size)
        _append_string(buf, parent)
        _append_string(buf, child)
        _pad(buf, 8)
        names.append(f'v{k}')
        formats.append(('<f8', 7))
        offsets.append(len(buf))
        buf += bytes(_TRANSFORM.size)
    dtype = np.dtype(
        {'names': names, 'formats': formats, 'offsets': offsets, 'itemsize': len(buf)}
    )
    return bytes(buf), dtype


def tf_messages_cdr(stamps_ns, pairs, values):
    """
    Return the serialized TFMessages of many stamps of the same frames, in bulk (numpy).

    ``stamps_ns`` (N,) ints [ns]; ``pairs`` [(parent, child)] (m); ``values`` (N, m, 7): each
    transform's translation x, y, z and ROS quaternion x, y, z, w.  Returns N bytes objects, each
    what :func:`tf_message_cdr` returns for that stamp (one layout filled N times).
    """
    stamps = np.asarray(stamps_ns, dtype=np.int64).reshape(-1)
    values = np.asarray(values, dtype=float).reshape(len(stamps), len(pairs), 7)
    template, dtype = _tf_layout(pairs)
    out = np.frombuffer(bytearray(template * len(stamps)), dtype=dtype)
    sec, nanosec = np.divmod(stamps, 1_000_000_000)
    for k in range(len(pairs)):
        out[f's{k}'], out[f'n{k}'], out[f'v{k}'] = sec, nanosec, values[:, k]
    blob, size = out.tobytes(), len(template)
    return [blob[i : i + size] for i in range(0, len(blob), size)]


def rotations_to_ros(R):
    """
    Return the ROS quaternions (N, 4) (x, y, z, w), w >= 0, of active rotations ``R`` (N, 3, 3).

    :func:`spart_ros.core.attitude.quaternion_to_ros` of each (the same branches and
    operations), vectorised; rotations assumed (not checked).
    """
    D = np.swapaxes(np.asarray(R, dtype=float), 1, 2)
    d00, d01, d02 = D[:, 0, 0], D[:, 0, 1], D[:, 0, 2]
    d10, d11, d12 = D[:, 1, 0], D[:, 1, 1], D[:, 1, 2]
    d20, d21, d22 = D[:, 2, 0], D[:, 2, 1], D[:, 2, 2]
    tr = d00 + d11 + d22
    qs = np.stack([1 + 2 * d00 - tr, 1 + 2 * d11 - tr, 1 + 2 * d22 - tr, 1 + tr], axis=1) / 4
    k = np.argmax(qs, axis=1)
    ql = np.sqrt(qs[np.arange(len(k)), k])
    d = 4 * ql
    with np.errstate(divide='ignore', invalid='ignore'):  # only the largest branch is kept
        a, b, c = (d01 + d10) / d, (d20 + d02) / d, (d12 - d21) / d
        e, f, g = (d12 + d21) / d, (d20 - d02) / d, (d01 - d10) / d
    branches = np.stack(
        [
            np.stack([ql, a, b, c], axis=1),
            np.stack([a, ql, e, f], axis=1),
            np.stack([b, e, ql, g], axis=1),
            np.stack([c, f, g, ql], axis=1),
        ]
    )
    q = branches[k, np.arange(len(k))]
    return np.where(q[:, 3:] >= 0, q, -q)


def _stamp_ns(header):
    return header.stamp.sec * 1_000_000_000 + header.stamp.nanosec


def _sim_clock(clock):
    """
    Return ``sim_time(t)``: the simulation times (ns, a list) at the receipt times ``t`` (ns).

    ``clock``: [(receipt time, decoded rosgraph_msgs/Clock)] in receipt order; the last clock
    received at each ``t`` (the first before any); none: ``t`` itself.
    """
    wall = np.array([t for t, _ in clock], dtype=np.int64)
    sim = np.array([c.clock.sec * 1_000_000_000 + c.clock.nanosec for _, c in clock], np.int64)

    def sim_time(t):
        if not len(wall):
            return [int(x) for x in t]
        k = np.maximum(np.searchsorted(wall, np.asarray(t, dtype=np.int64), 'right') - 1, 0)
        return sim[k].tolist()

    return sim_time


class _Rewriter:
    """
    An MCAP file written from another one's messages: ``write(...)``, then ``finish()``.

    A schema per (name, text) and a channel per topic, registered on first use (CDR messages);
    sequence numbers counted per topic; the messages written in order at ``finish`` in one
    :meth:`~spart_ros.tools.mcap_writer.MessageWriter.add_messages` call.
    """

    def __init__(self, f):
        from .mcap_writer import MessageWriter

        self._writer = MessageWriter(f)
        self._writer.start(profile='ros2', library='spart_ros')
        self._schemas, self._channels, self._sequence = {}, {}, {}
        self._rows = []

    def write(self, topic, schema, data, log_time, publish_time):
        """Add a message: ``schema`` (name, encoding, text bytes); times in ns."""
        channel = self._channels.get(topic)
        if channel is None:
            channel = self._register(topic, schema)
        seq = self._sequence[topic] = self._sequence[topic] + 1
        self._rows.append((channel, int(log_time), data, int(publish_time), seq))

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
        self._writer.add_messages(self._rows)
        self._rows = []
        self._writer.finish()


def _tf_data(messages, kinds, transforms, robot):
    """
    Return {index in ``messages``: serialized /tf} of the joint states and odometry (in bulk).

    A joint state: its joints' transforms (:meth:`RobotTransforms.moving_values`); an odometry:
    ``header.frame_id -> child_frame_id`` (odom -> base link); both stamped with its stamp.
    """
    states, odom = [], {}
    for k, (_, channel, _, decoded) in enumerate(messages):
        kind = kinds.get(channel.topic)
        if kind == 'joint_states':
            states.append((k, decoded))
        elif kind == 'odom':
            parent = decoded.header.frame_id or 'odom'
            child = decoded.child_frame_id or robot.base_link.name
            odom.setdefault((parent, child), []).append((k, decoded))
    out = {}
    runs = transforms.moving_values([(d.name, d.position) for _, d in states])
    for rows, pairs, values in runs:
        index = [states[r][0] for r in rows]
        stamps = [_stamp_ns(states[r][1].header) for r in rows]
        out.update(zip(index, tf_messages_cdr(stamps, pairs, values)))
    for pair, recorded in odom.items():
        values = _pose_values([d.pose.pose for _, d in recorded])
        stamps = [_stamp_ns(d.header) for _, d in recorded]
        data = tf_messages_cdr(stamps, [pair], values.reshape(len(recorded), 1, 7))
        out.update(zip((k for k, _ in recorded), data))
    return out


def _replay(out, messages, kinds, robot, ns, sim_time):
    """Write ``messages`` and the replay topics into ``out`` (a _Rewriter); return the counts."""
    transforms = RobotTransforms(robot)
    tf_schema = (TF_TYPE, 'ros2msg', message_definition(TF_TYPE).encode('utf-8'))
    added = {'/tf': 0, '/tf_static': 0, '/robot_description': 0}
    if not messages:
        return added
    tf = _tf_data(messages, kinds, transforms, robot)
    receipts = [message.log_time for _, _, message, _ in messages]
    times = sim_time(receipts)
    schemas = {}  # recorded (name, encoding, text) per schema object
    write = out.write
    t0 = times[0]
    write('/tf_static', tf_schema, tf_message_cdr(t0, transforms.static()), t0, receipts[0])
    added['/tf_static'] += 1
    for k, (schema, channel, message, _) in enumerate(messages):
        t, receipt = times[k], receipts[k]
        recorded = schemas.get(id(schema))
        if recorded is None:
            recorded = schemas[id(schema)] = (schema.name, schema.encoding, schema.data)
        write(channel.topic, recorded, message.data, t, receipt)
        data = tf.get(k)
        if data is not None:
            write('/tf', tf_schema, data, t, receipt)
            added['/tf'] += 1
        elif ns and not added['/robot_description'] and kinds.get(channel.topic) == 'description':
            write('/robot_description', recorded, message.data, t, receipt)
            added['/robot_description'] += 1
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
