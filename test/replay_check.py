"""
Check a bag's /tf against the core's forward kinematics.

Used by test_replay.py on synthetic bags and by test_demo.py on the demo's bags.

For each joint state of the bag (every ``every``-th), the transforms stamped like it (/tf: the
joints it names and the odometry of that stamp; /tf_static) are chained from the odometry frame
to every link, and each link's pose is compared with the pose of its URDF frame from
``spart_ros.core.kinematics`` (link CoM frames, compiled) for the same state: base from the
odometry (``core.base_state``), joints by name (mimic followers from their leaders).
"""

import numpy as np
from spart_ros.core.attitude import quaternion_from_ros
from spart_ros.core.base_state import base_from_link_frame
from spart_ros.core.kinematics import kinematics
from spart_ros.core.model import inverse_transform


def _matrix(rotation, translation):
    """(4, 4) from a ROS quaternion and a point or vector (Transform or Pose fields)."""
    T = np.eye(4)
    T[:3, :3] = quaternion_from_ros(rotation.x, rotation.y, rotation.z, rotation.w)
    T[:3, 3] = [translation.x, translation.y, translation.z]
    return T


def read(path, ns):
    """
    {topic: [(log_time, publish_time, decoded)]} of /tf, /tf_static, joint_states, odom.

    /robot_description.
    """
    from mcap.reader import make_reader
    # the product's decoder (test_bag.py checks it against mcap_ros2's on every message type)
    from spart_ros.tools.bag import DecoderFactory

    wanted = (
        '/tf',
        '/tf_static',
        f'{ns}/joint_states',
        f'{ns}/odom',
        '/robot_description',
        '/clock',
    )
    out = {t: [] for t in wanted}
    with open(path, 'rb') as f:
        for _, channel, message, msg in make_reader(
            f, decoder_factories=[DecoderFactory()]
        ).iter_decoded_messages(topics=list(wanted)):
            out[channel.topic].append((message.log_time, message.publish_time, msg))
    return out


def tf_errors(path, robot, ns, every=1):
    """
    Return the largest differences between the recorded tf and the model's link poses.

    (max position error [m], max rotation error [matrix entries], states checked, links per state).
    """
    data = read(path, ns)
    static = {}
    for _, _, msg in data['/tf_static']:
        for t in msg.transforms:
            static[t.child_frame_id] = (
                t.header.frame_id,
                _matrix(t.transform.rotation, t.transform.translation),
            )
    by_stamp = {}
    for _, _, msg in data['/tf']:
        for t in msg.transforms:
            stamp = t.header.stamp.sec * 1_000_000_000 + t.header.stamp.nanosec
            transform = _matrix(t.transform.rotation, t.transform.translation)
            by_stamp.setdefault(stamp, {})[t.child_frame_id] = (t.header.frame_id, transform)
    odom = {
        m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec: m
        for _, _, m in data[f'{ns}/odom']
    }
    index = {name: k for k, name in enumerate(robot.q_names)}
    q = np.zeros(robot.n_q)
    names = [robot.base_link.name] + [link.name for link in robot.links]
    worst_p = worst_R = 0.0
    checked = 0
    for k, (_, _, js) in enumerate(data[f'{ns}/joint_states']):
        for name, value in zip(js.name, js.position):
            if name in index:
                q[index[name]] = value
        for follower, m in robot.mimic.items():
            if follower not in js.name:
                q[index[follower]] = m.multiplier * q[index[m.leader]] + m.offset
        if k % every:
            continue
        stamp = js.header.stamp.sec * 1_000_000_000 + js.header.stamp.nanosec
        if stamp not in odom:  # recorded before the odometry subscription matched
            continue
        tree = dict(static)
        tree.update(by_stamp.get(stamp, {}))
        world = odom[stamp].header.frame_id

        def pose_of(frame):
            T = np.eye(4)
            while frame != world:
                parent, T_pc = tree[frame]  # KeyError: a frame missing from the tree
                T = T_pc @ T
                frame = parent
            return T

        pose = odom[stamp].pose.pose
        T_b = _matrix(pose.orientation, pose.position)
        R0, r0, _ = base_from_link_frame(robot, T_b[:3, :3], T_b[:3, 3])
        _, RL, _, rL, _, _ = kinematics(R0, r0, q, robot)
        expected = {names[0]: T_b}
        for i, link in enumerate(robot.links):
            T_com = np.eye(4)
            T_com[:3, :3], T_com[:3, 3] = RL[:, :, i], rL[:, i]
            expected[link.name] = T_com @ inverse_transform(np.asarray(link.T, dtype=float))
        for name, T_e in expected.items():
            T = pose_of(name)
            worst_p = max(worst_p, float(np.abs(T[:3, 3] - T_e[:3, 3]).max()))
            worst_R = max(worst_R, float(np.abs(T[:3, :3] - T_e[:3, :3]).max()))
        checked += 1
    return worst_p, worst_R, checked, len(names)
