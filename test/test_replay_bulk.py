"""
The replay's bulk paths (spart_ros.tools.replay, .mcap_writer) against their one-at-a-time forms.

The transforms of many joint states at once equal RobotTransforms.moving per state, quaternions
equal quaternion_to_ros (every branch), odometry poses equal the round trip through the core's
quaternion functions, and MessageWriter.add_messages writes the file Writer.add_message writes.
"""

import io
from pathlib import Path
from types import SimpleNamespace
import warnings

import dynamics_reference as ref
import numpy as np
import pytest
from spart_ros.core.attitude import quaternion_from_ros, quaternion_to_ros
from spart_ros.core.errors import InputError
from spart_ros.core.urdf import robot_from_urdf
from spart_ros.tools.replay import (
    _pose_values,
    _transform_values,
    RobotTransforms,
    rotations_to_ros,
    tf_message_cdr,
    tf_messages_cdr,
)

ROOT = Path(__file__).resolve().parent.parent
GRIPPER = str(ROOT / 'test' / 'data' / 'urdf' / 'loading' / 'gripper_mimic.urdf')


def test_moving_values_of_many_states_equal_moving_state_by_state():
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # massless pads, mimic joints: this test's point
        robot, _ = robot_from_urdf(GRIPPER)
    rng = np.random.default_rng(3)
    leaders = sorted(n for n in robot.q_names if n not in robot.mimic)
    every = sorted(robot.q_names)
    # runs of states naming different joints: all, leaders only (followers from them), one, none
    names = [every] * 5 + [leaders] * 4 + [leaders[:1] + ['not_a_joint']] * 3 + [[]] * 2 + [every]
    states = [(n, rng.uniform(-2, 2, len(n)).tolist()) for n in names]
    one, bulk = RobotTransforms(robot), RobotTransforms(robot)
    runs = bulk.moving_values(states)
    assert [len(rows) for rows, _, _ in runs] == [5, 4, 3, 2, 1]
    for rows, pairs, values in runs:
        for r, v in zip(rows, values):
            expected = one.moving(*states[r])
            assert pairs == [(p, c) for p, c, _ in expected]
            want = np.array([_transform_values(T) for _, _, T in expected]).reshape(v.shape)
            np.testing.assert_allclose(v, want, rtol=0, atol=1e-12)
            stamp = 7_000_000_123 + r
            # the bulk layout filled with the same values: the bytes of tf_message_cdr
            assert tf_messages_cdr([stamp], pairs, want[None])[0] == tf_message_cdr(
                stamp, expected
            )
    np.testing.assert_array_equal(bulk.q, one.q)
    with pytest.raises(InputError, match='NaN'):
        bulk.moving_values([(every, [float('nan')] * len(every))])


def test_rotations_to_ros_equals_quaternion_to_ros_in_every_branch():
    rng = np.random.default_rng(5)
    R = [ref.rot(rng.standard_normal(3), rng.uniform(-np.pi, np.pi)) for _ in range(40)]
    R += [ref.rot(np.eye(3)[k], np.pi - 1e-3) for k in range(3)] + [np.eye(3)]  # x, y, z, w
    R = np.array(R)
    want = np.array([quaternion_to_ros(r) for r in R])
    np.testing.assert_allclose(rotations_to_ros(R), want, rtol=0, atol=1e-15)


def _pose(q, p=(1.0, -2.0, 0.5)):
    x, y, z, w = q
    return SimpleNamespace(
        position=SimpleNamespace(x=p[0], y=p[1], z=p[2]),
        orientation=SimpleNamespace(x=x, y=y, z=z, w=w),
    )


def test_pose_values_are_the_core_round_trip_and_bad_quaternions_are_named():
    rng = np.random.default_rng(8)
    q = rng.standard_normal((20, 4))
    q /= np.linalg.norm(q, axis=1)[:, None]
    q[:5] *= 1.004  # a little off unit: normalized, as tf2 accepts
    values = _pose_values([_pose(v) for v in q])
    want = [quaternion_to_ros(quaternion_from_ros(*v)) for v in q]
    np.testing.assert_allclose(values[:, 3:], want, rtol=0, atol=1e-15)
    np.testing.assert_array_equal(values[:, :3], [[1.0, -2.0, 0.5]] * 20)
    with pytest.raises(InputError, match='norm'):
        _pose_values([_pose(q[0]), _pose((0.0, 0.0, 0.5, 0.5))])


def test_message_writer_writes_the_file_add_message_writes():
    from mcap.writer import Writer
    from spart_ros.tools.mcap_writer import MessageWriter

    rng = np.random.default_rng(2)
    # two channels, out-of-order log times, more than one chunk (a small chunk size)
    rows = [
        (int(c), int(t), rng.bytes(int(n)), int(t) + 5, k)
        for k, (c, t, n) in enumerate(
            zip(
                rng.integers(0, 2, 3000),
                rng.integers(10**9, 2 * 10**9, 3000),
                rng.integers(0, 90, 3000),
            )
        )
    ]
    files = []
    for bulk in (False, True):
        f = io.BytesIO()
        w = (MessageWriter if bulk else Writer)(f, chunk_size=20_000)
        w.start(profile='ros2', library='test')
        s = w.register_schema(name='a/B', encoding='ros2msg', data=b'int32 x\n')
        channels = [
            w.register_channel(topic=f'/t{c}', message_encoding='cdr', schema_id=s)
            for c in range(2)
        ]
        if bulk:
            w.add_messages([(channels[r[0]],) + r[1:] for r in rows])
        else:
            for c, t, data, p, seq in rows:
                w.add_message(channels[c], log_time=t, data=data, publish_time=p, sequence=seq)
        w.finish()
        files.append(f.getvalue())
    assert files[0] == files[1]


def test_read_back_of_a_sample_counts_what_reading_everything_counts(tmp_path):
    from spart_ros.tools.bag import BagError, McapBag, read_back
    from spart_ros.tools.replay import add_replay_topics
    from test_replay import record

    path = tmp_path / 'run.mcap'
    robot = record(path, str(ROOT / 'urdf' / 'SC_3DoF.urdf'), '/demo', True, seed=4, n=300)
    added = add_replay_topics(str(path), robot, '/demo')
    for topics in (None, list(added)):
        assert read_back(str(path), topics=topics, sample=True) == read_back(str(path), topics)
    # a message its definition does not read, in the middle of the bag: found
    broken = tmp_path / 'broken.mcap'
    with McapBag(str(broken)) as bag:
        for k in range(300):
            data = b'\x00\x01\x00\x00' + (b'\x01' if k == 150 else b'\x05\x00\x00\x00abcd\x00')
            bag.add('/s', 'std_msgs/msg/String', data, 1_000 + k)
    with pytest.raises(BagError, match='does not decode'):
        read_back(str(broken), sample=True)
