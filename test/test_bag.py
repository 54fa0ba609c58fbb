"""
MCAP bags (spart_ros.tools.bag).

Message definitions from the installed .msg files, and bags that decode back with only the
definitions they carry (what ros2 bag and Foxglove need).
"""

from nav_msgs.msg import Odometry
import numpy as np
import pytest
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState
from spart_interfaces.msg import Jacobian, Jacobians
from spart_ros.tools.bag import BagError, McapBag, message_definition, read_back, SEPARATOR
from std_msgs.msg import Float64MultiArray, String


def test_message_definition_lists_every_dependency_once_depth_first():
    text = message_definition('nav_msgs/msg/Odometry')
    deps = [line[5:] for line in text.splitlines() if line.startswith('MSG: ')]
    assert deps == [
        'std_msgs/Header',
        'builtin_interfaces/Time',
        'geometry_msgs/PoseWithCovariance',
        'geometry_msgs/Pose',
        'geometry_msgs/Point',
        'geometry_msgs/Quaternion',
        'geometry_msgs/TwistWithCovariance',
        'geometry_msgs/Twist',
        'geometry_msgs/Vector3',
    ]
    assert text.count(SEPARATOR) == len(deps)
    # a package-relative field type (Jacobians uses Jacobian of its own package)
    assert 'MSG: spart_interfaces/Jacobian' in message_definition('spart_interfaces/msg/Jacobians')
    with pytest.raises(BagError, match='no_such_msgs'):
        message_definition('no_such_msgs/msg/Thing')


def test_bag_round_trip(tmp_path):
    path = tmp_path / 'run.mcap'
    odom = Odometry(child_frame_id='base')
    odom.pose.pose.position.x = 1.5
    cmd = Float64MultiArray(data=[0.5, -1.0, 2.0])
    jac = Jacobians(jacobians=[Jacobian(link_name='tool', rows=6, cols=1, data=[0.25] * 6)])
    with McapBag(str(path)) as bag:
        for k in range(3):
            bag.add('/odom', 'nav_msgs/msg/Odometry', serialize_message(odom), 10 + k)
        bag.add(
            '/effort_controller/commands',
            'std_msgs/msg/Float64MultiArray',
            serialize_message(cmd),
            20,
        )
        bag.add(
            '/joint_states',
            'sensor_msgs/msg/JointState',
            serialize_message(JointState(name=['a'])),
            30,
        )
        bag.add(
            '/spart_dynamics/jacobians',
            'spart_interfaces/msg/Jacobians',
            serialize_message(jac),
            40,
        )
    assert bag.count == 6
    assert read_back(str(path)) == {
        '/odom': ('nav_msgs/Odometry', 3),
        '/effort_controller/commands': ('std_msgs/Float64MultiArray', 1),
        '/joint_states': ('sensor_msgs/JointState', 1),
        '/spart_dynamics/jacobians': ('spart_interfaces/Jacobians', 1),
    }
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    with open(path, 'rb') as f:
        decoded = {
            c.topic: m
            for _, c, _, m in make_reader(
                f, decoder_factories=[DecoderFactory()]
            ).iter_decoded_messages()
        }
    assert (
        decoded['/odom'].pose.pose.position.x == 1.5 and decoded['/odom'].child_frame_id == 'base'
    )
    assert list(decoded['/effort_controller/commands'].data) == [0.5, -1.0, 2.0]
    assert decoded['/spart_dynamics/jacobians'].jacobians[0].link_name == 'tool'


def test_a_corrupt_bag_is_reported(tmp_path):
    path = tmp_path / 'bad.mcap'
    with McapBag(str(path)) as bag:
        bag.add('/odom', 'nav_msgs/msg/Odometry', b'\x00\x01\x00\x00\x01', 1)  # truncated CDR
    with pytest.raises(BagError, match='does not decode'):
        read_back(str(path))


class _NoGraph:
    """A stand-in node: no topics to discover, subscriptions and timers that do nothing."""

    def create_timer(self, period, callback):
        return type('Timer', (), {'cancel': lambda self: None})()

    def destroy_timer(self, timer):
        pass

    def get_topic_names_and_types(self):
        return []


def test_aligned_topics_are_recorded_from_their_first_common_stamp(tmp_path):
    """
    A state published on several topics is in the bag on all of them or on none (issue 28 item 2).

    The subscriptions match their publishers one by one: /odom's first message here is the state
    of 3 ms, /joint_states had 1 and 2 ms already. Recorded from 3 ms on, everything after it.
    """
    from builtin_interfaces.msg import Time
    from rosgraph_msgs.msg import Clock
    from spart_ros.nodes.bag_recorder import BagRecorder

    def js(ms):
        msg = JointState(name=['a'], position=[ms * 1.0])
        msg.header.stamp = Time(sec=7, nanosec=ms * 1_000_000)
        return serialize_message(msg)

    def odom(ms):
        msg = Odometry()
        msg.header.stamp = Time(sec=7, nanosec=ms * 1_000_000)
        return serialize_message(msg)

    def clock(ms):
        return serialize_message(Clock(clock=Time(sec=7, nanosec=ms * 1_000_000)))

    path = tmp_path / 'aligned.mcap'
    topics = {'/js': 'sensor_msgs/msg/JointState', '/odom': 'nav_msgs/msg/Odometry'}
    rec = BagRecorder(_NoGraph(), str(path), align=('/js', '/odom', '/clock'))
    write = {
        '/js': rec._writer('/js', topics['/js']),
        '/odom': rec._writer('/odom', topics['/odom']),
        '/clock': rec._writer('/clock', 'rosgraph_msgs/msg/Clock'),
        '/other': rec._writer('/other', topics['/js']),  # not aligned: recorded at once
    }
    make = {'/js': js, '/odom': odom, '/clock': clock, '/other': js}
    for topic, ms in [
        ('/other', 0),
        ('/clock', 1),
        ('/js', 1),
        ('/clock', 2),
        ('/js', 2),
        ('/clock', 3),
        ('/odom', 3),
        ('/js', 3),
        ('/clock', 4),
        ('/odom', 4),
        ('/js', 4),
    ]:
        write[topic](make[topic](ms))
    assert rec.start_stamp == 7_003_000_000
    rec.close()
    assert rec.dropped_at_start == {'/js': 2, '/odom': 0, '/clock': 2}
    assert read_back(str(path)) == {
        '/other': ('sensor_msgs/JointState', 1),
        '/clock': ('rosgraph_msgs/Clock', 2),
        '/odom': ('nav_msgs/Odometry', 2),
        '/js': ('sensor_msgs/JointState', 2),
    }


# --- the generated decoders (DecoderFactory, cdr_decoder): exactly mcap_ros2's decoding ---------

#: message types with every kind of field: the demo's (nested messages, strings, sequences and
#: fixed arrays of doubles, uint8 and uint64, bool, byte and char) and a few more
DECODED_TYPES = [
    'sensor_msgs/msg/JointState',
    'nav_msgs/msg/Odometry',
    'sensor_msgs/msg/Imu',
    'std_msgs/msg/Float64MultiArray',
    'rosgraph_msgs/msg/Clock',
    'std_msgs/msg/String',
    'geometry_msgs/msg/Vector3Stamped',
    'geometry_msgs/msg/WrenchStamped',
    'rcl_interfaces/msg/Log',
    'lifecycle_msgs/msg/TransitionEvent',
    'spart_interfaces/msg/ControllerStatus',
    'spart_interfaces/msg/Jacobians',
    'spart_interfaces/msg/LinkTwists',
    'spart_interfaces/msg/CenterOfMass',
    'spart_interfaces/msg/ThrusterState',
    'spart_interfaces/msg/Orbit',
    'sensor_msgs/msg/NavSatFix',
    'sensor_msgs/msg/Image',
    'std_msgs/msg/ByteMultiArray',
    'std_msgs/msg/Char',
    'std_msgs/msg/Bool',
    'std_msgs/msg/Empty',
    'builtin_interfaces/msg/Duration',
]
TEXTS = ['', 'a', 'ab', 'abc', 'joint_1', 'ünïcödé', 'x' * 13]


def _message_class(namespaced):
    import importlib

    return getattr(importlib.import_module('.'.join(namespaced.namespaces)), namespaced.name)


def _random_value(t, rng):
    """Return a random value of the rosidl type ``t`` for an rclpy message field."""
    from rosidl_parser import definition as d

    if isinstance(t, d.AbstractNestedType):
        if isinstance(t, d.Array):
            n = t.size
        else:
            top = t.maximum_size if isinstance(t, d.BoundedSequence) else 4
            n = int(rng.integers(0, top + 1))
        return [_random_value(t.value_type, rng) for _ in range(n)]
    if isinstance(t, d.NamespacedType):
        return _random_message(_message_class(t), rng)
    if isinstance(t, d.AbstractGenericString):
        return str(rng.choice(TEXTS))
    name = t.typename
    if name in ('double', 'float'):
        x = float(rng.normal(0.0, 10.0 ** rng.integers(-3, 4)))
        return float(np.float32(x)) if name == 'float' else x
    if name == 'boolean':
        return bool(rng.integers(0, 2))
    if name == 'octet':
        return bytes([int(rng.integers(0, 256))])
    if name == 'char':
        return chr(int(rng.integers(0, 256)))
    bits = int(''.join(c for c in name if c.isdigit()))
    low, high = (0, 2**bits) if name.startswith('u') else (-(2 ** (bits - 1)), 2 ** (bits - 1))
    return int(rng.integers(low, high, dtype=np.uint64 if bits == 64 else np.int64))


def _random_message(cls, rng):
    msg = cls()
    for name, t in zip(msg.get_fields_and_field_types(), cls.SLOT_TYPES):
        setattr(msg, name, _random_value(t, rng))
    return msg


def _plain(msg):
    """Return a decoded message as dicts and lists (mcap_ros2's classes and ours alike)."""
    if isinstance(msg, list):
        return [_plain(m) for m in msg]
    if hasattr(msg, '__slots__') and not isinstance(msg, (str, bytes)):
        return {'_type': type(msg).__name__, **{f: _plain(getattr(msg, f)) for f in msg.__slots__}}
    return msg


def _outcome(decode, data):
    try:
        return 'ok', _plain(decode(data))
    except Exception:  # noqa: BLE001 - the failure itself is compared
        return 'raises', None


def _samples(type_name, n, seed):
    """``n`` serialized random messages of ``type_name`` (rclpy's CDR, little endian)."""
    import importlib

    package, _, name = type_name.split('/')
    cls = getattr(importlib.import_module(f'{package}.msg'), name)
    rng = np.random.default_rng(seed)
    return [serialize_message(_random_message(cls, rng)) for _ in range(n)]


@pytest.mark.parametrize('type_name', DECODED_TYPES)
def test_the_generated_decoder_decodes_as_mcap_ros2_does(type_name):
    """The same values, and a failure where mcap_ros2 fails: every truncation of the samples."""
    from mcap_ros2._dynamic import generate_dynamic
    from spart_ros.tools.bag import cdr_decoder

    schema = type_name.replace('/msg/', '/')
    text = message_definition(type_name)
    fast, slow = cdr_decoder(schema, text), generate_dynamic(schema, text)[schema]
    assert fast is not None
    samples = _samples(type_name, 20, seed=len(type_name))
    for data in samples:
        assert _outcome(fast, data) == _outcome(slow, data) and _outcome(fast, data)[0] == 'ok'
    for data in samples[:3]:
        for cut in range(len(data)):
            assert _outcome(fast, data[:cut]) == _outcome(slow, data[:cut]), (type_name, cut)


@pytest.mark.parametrize('type_name', ['nav_msgs/msg/Odometry', 'sensor_msgs/msg/JointState'])
def test_the_generated_decoder_reads_big_endian_cdr(type_name):
    """Big-endian CDR (written by mcap_ros2's writer): decoded as mcap_ros2 decodes it."""
    from io import BytesIO

    from mcap_ros2._cdr import CdrWriter, EncapsulationKind
    from mcap_ros2._dynamic import _write_complex_type, generate_dynamic
    from spart_ros.tools.bag import _definitions, cdr_decoder

    schema = type_name.replace('/msg/', '/')
    text = message_definition(type_name)
    fast, slow = cdr_decoder(schema, text), generate_dynamic(schema, text)[schema]
    msgdefs, _ = _definitions(schema, text)
    for data in _samples(type_name, 10, seed=7):
        out = BytesIO()
        msgdef = msgdefs[schema]
        writer = CdrWriter(out, EncapsulationKind.CDR_BE)
        _write_complex_type(msgdef.msg_name, msgdef.fields, msgdefs, slow(data), writer)
        big = out.getvalue()
        assert big[1] == 0 and big != data
        assert _outcome(fast, big) == _outcome(slow, big) == _outcome(slow, data)


def test_schemas_the_generator_leaves_to_mcap_ros2():
    from mcap.records import Schema
    from spart_ros.tools.bag import cdr_decoder, DecoderFactory

    assert cdr_decoder('pkg/Wide', 'wstring text\n') is None  # mcap_ros2 does not read it either
    assert cdr_decoder('pkg/Missing', 'other_pkg/Thing thing\n') is None
    assert cdr_decoder('pkg/Named', 'MSG: pkg/Other\nint32 x\n') is None  # not defined there
    factory = DecoderFactory()
    wide = Schema(id=1, name='pkg/Wide', encoding='ros2msg', data=b'wstring text\n')
    assert factory.decoder_for('cdr', wide) is not None  # mcap_ros2's (it raises on decoding)
    assert factory.decoder_for('json', wide) is None


def test_read_messages_in_log_time_order_decoded_once(tmp_path):
    """read_messages: mcap's log time order (file order among equal times); decoded as asked."""
    from mcap.reader import make_reader
    from spart_ros.tools.bag import message_counts, read_messages

    path = tmp_path / 'order.mcap'
    with McapBag(str(path)) as bag:
        for k, t in enumerate([30, 10, 20, 10, 40]):  # received out of order
            bag.add('/a' if k % 2 else '/b', 'std_msgs/msg/String', serialize_message(
                String(data=f'm{k}')), t)
    messages = read_messages(str(path))
    with open(path, 'rb') as f:
        expected = [m.data for _, _, m in make_reader(f).iter_messages(log_time_order=True)]
    assert [m.data for _, _, m, _ in messages] == expected
    assert [d.data for *_, d in messages] == ['m1', 'm3', 'm2', 'm0', 'm4']
    partly = read_messages(str(path), decode=['/a'])
    assert [(c.topic, d is None) for _, c, _, d in partly] == [
        ('/a', False), ('/a', False), ('/b', True), ('/b', True), ('/b', True)
    ]
    assert message_counts(messages) == read_back(str(path)) == {
        '/b': ('std_msgs/String', 3),
        '/a': ('std_msgs/String', 2),
    }
    assert read_back(str(path), topics=['/a']) == {'/a': ('std_msgs/String', 2)}


def test_held_messages_give_the_file_add_message_writes(tmp_path):
    # McapBag holds messages and writes them in bulk: the file is the one mcap's add_message of
    # each writes, also when a new topic is registered between held messages
    from mcap.writer import Writer

    header = serialize_message(String(data='x'))
    rows = [('/a', 'std_msgs/msg/String', header + bytes(k % 5), 100 + k) for k in range(30)]
    rows[12:12] = [
        ('/b', 'std_msgs/msg/Float64MultiArray', serialize_message(Float64MultiArray()), 50)
    ]
    for flush_every in (1, 7):
        with McapBag(str(tmp_path / f'held{flush_every}.mcap'), flush_every=flush_every) as bag:
            for row in rows:
                bag.add(*row)
    with open(tmp_path / 'one.mcap', 'wb') as f:  # the reference: add_message per message
        bag = McapBag.__new__(McapBag)
        bag._writer, bag._rows = Writer(f), []
        bag._writer.start(profile='ros2', library='spart_ros')
        bag._schemas, bag._channels, bag._sequence = {}, {}, {}
        for topic, type_name, data, t in rows:
            channel = bag._channels.get(topic) or bag._register(topic, type_name)
            bag._sequence[topic] += 1
            bag._writer.add_message(channel, t, data, t, bag._sequence[topic])
        bag._writer.finish()
    reference = (tmp_path / 'one.mcap').read_bytes()
    assert (tmp_path / 'held1.mcap').read_bytes() == reference
    assert (tmp_path / 'held7.mcap').read_bytes() == reference
