"""
MCAP bags (spart_ros.tools.bag).

Message definitions from the installed .msg files, and bags that decode back with only the
definitions they carry (what ros2 bag and Foxglove need).
"""

from nav_msgs.msg import Odometry
import pytest
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState
from spart_interfaces.msg import Jacobian, Jacobians
from spart_ros.tools.bag import BagError, McapBag, message_definition, read_back, SEPARATOR
from std_msgs.msg import Float64MultiArray


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
