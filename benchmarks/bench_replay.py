"""
The main job's replay topics (spart_ros.tools.replay) in bulk against one message at a time.

A bag as the demo records it (kuka_iiwa, 1 kHz joint states and odometry with /clock; --states
of each) gets /tf, /tf_static and /robot_description by ``add_replay_topics`` (the transforms of
all states at once, CDR from one layout, one ``MessageWriter.add_messages``) and, as the baseline
in the same run, by the one-at-a-time path it replaced: ``RobotTransforms.moving`` and
``tf_message_cdr`` per state, mcap's ``Writer.add_message`` per message.  Alternating rounds;
median CPU seconds of each and their ratio.  Also ``read_back`` of the added topics, every
message decoded against a sample (``sample=True``: the counts from the summary).

    .venv/bin/python benchmarks/bench_replay.py [--states 10000] [--rounds 3]
"""

import argparse
import os
from pathlib import Path
import statistics
import sys
import tempfile
import time
import warnings

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def record(path, robot, urdf_text, n):
    """Write a bag of n joint states, odometries and clocks, received on a wall clock."""
    from builtin_interfaces.msg import Time
    from nav_msgs.msg import Odometry
    from rclpy.serialization import serialize_message
    from rosgraph_msgs.msg import Clock
    from sensor_msgs.msg import JointState
    from spart_ros.tools.bag import McapBag
    from std_msgs.msg import String

    rng = np.random.default_rng(1)
    wall0 = 1_700_000_000_000_000_000
    names = sorted(robot.q_names)
    with McapBag(str(path)) as bag:
        bag.add(
            '/d/robot_description',
            'std_msgs/msg/String',
            serialize_message(String(data=urdf_text)),
            wall0,
        )
        for k in range(n):
            sim = 2_000_000_000 + k * 1_000_000
            wall = wall0 + 5_000_000 + k * 1_003_000
            stamp = Time(sec=sim // 1_000_000_000, nanosec=sim % 1_000_000_000)
            bag.add(
                '/clock', 'rosgraph_msgs/msg/Clock', serialize_message(Clock(clock=stamp)), wall
            )
            js = JointState(name=names, position=rng.uniform(-2, 2, len(names)).tolist())
            js.header.stamp = stamp
            bag.add(
                '/d/joint_states', 'sensor_msgs/msg/JointState', serialize_message(js), wall + 100
            )
            odom = Odometry(child_frame_id=robot.base_link.name)
            odom.header.stamp, odom.header.frame_id = stamp, 'odom'
            odom.pose.pose.orientation.w = 1.0
            bag.add('/d/odom', 'nav_msgs/msg/Odometry', serialize_message(odom), wall + 200)


def one_at_a_time(path, out_path, robot, messages):
    """Write the replay topics the replaced way: per state moving(), per message add_message."""
    from mcap.writer import Writer
    from spart_ros.core.attitude import quaternion_from_ros
    from spart_ros.tools.bag import message_definition
    from spart_ros.tools.replay import _sim_clock, RobotTransforms, tf_message_cdr, TF_TYPE

    transforms = RobotTransforms(robot)
    sim_time = _sim_clock([(m.log_time, d) for _, c, m, d in messages if c.topic == '/clock'])
    times = sim_time([m.log_time for _, _, m, _ in messages])
    with open(out_path, 'wb') as f:
        w = Writer(f)
        w.start(profile='ros2', library='bench')
        tf_schema = w.register_schema(TF_TYPE, 'ros2msg', message_definition(TF_TYPE).encode())
        schemas, channels, seq = {}, {}, {}

        def channel(topic, schema_id):
            if topic not in channels:
                channels[topic] = w.register_channel(topic, 'cdr', schema_id)
                seq[topic] = 0
            seq[topic] += 1
            return channels[topic]

        for k, (schema, ch, message, decoded) in enumerate(messages):
            if schema.id not in schemas:
                schemas[schema.id] = w.register_schema(schema.name, schema.encoding, schema.data)
            t = times[k]
            w.add_message(
                channel(ch.topic, schemas[schema.id]),
                t,
                message.data,
                message.log_time,
                seq[ch.topic],
            )
            if ch.topic == '/d/joint_states':
                moved = transforms.moving(decoded.name, decoded.position)
            elif ch.topic == '/d/odom':
                o, p = decoded.pose.pose.orientation, decoded.pose.pose.position
                T = np.eye(4)
                T[:3, :3], T[:3, 3] = quaternion_from_ros(o.x, o.y, o.z, o.w), [p.x, p.y, p.z]
                moved = [('odom', decoded.child_frame_id, T)]
            else:
                continue
            s = decoded.header.stamp
            data = tf_message_cdr(s.sec * 1_000_000_000 + s.nanosec, moved)
            w.add_message(channel('/tf', tf_schema), t, data, message.log_time, seq['/tf'])
        w.finish()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--states', type=int, default=10000)
    parser.add_argument('--rounds', type=int, default=3)
    args = parser.parse_args(argv)
    from spart_ros.core.urdf import robot_from_urdf
    from spart_ros.tools.bag import read_back, read_messages
    from spart_ros.tools.replay import add_replay_topics

    urdf = ROOT / 'urdf' / 'kuka_iiwa.urdf'
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        robot, _ = robot_from_urdf(str(urdf))
    with tempfile.TemporaryDirectory() as tmp:
        bag = os.path.join(tmp, 'run.mcap')
        record(bag, robot, urdf.read_text(), args.states)
        messages = read_messages(bag)
        bulk, single, full, sample = [], [], [], []
        for _ in range(args.rounds):
            t = time.process_time()
            one_at_a_time(bag, os.path.join(tmp, 'single.mcap'), robot, messages)
            single.append(time.process_time() - t)
            t = time.process_time()
            added = add_replay_topics(
                bag, robot, '/d', os.path.join(tmp, 'bulk.mcap'), messages=messages
            )
            bulk.append(time.process_time() - t)
            t = time.process_time()
            counts = read_back(os.path.join(tmp, 'bulk.mcap'), topics=list(added))
            full.append(time.process_time() - t)
            t = time.process_time()
            assert (
                read_back(os.path.join(tmp, 'bulk.mcap'), topics=list(added), sample=True)
                == counts
            )
            sample.append(time.process_time() - t)
    s, b = statistics.median(single), statistics.median(bulk)
    f, p = statistics.median(full), statistics.median(sample)
    print(
        f'{len(messages)} recorded messages, {added["/tf"]} /tf added '
        f'({args.rounds} rounds, median CPU)'
    )
    print(f'  replay topics one at a time   {s:7.3f} s')
    print(f'  add_replay_topics (bulk)      {b:7.3f} s   x{s / b:.1f}')
    print(f'  read_back, every message      {f:7.3f} s')
    print(f'  read_back, sample=True        {p:7.3f} s   x{f / p:.1f}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
