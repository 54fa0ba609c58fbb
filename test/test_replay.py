"""
Foxglove / RViz replay of a recorded run (spart_ros.tools.replay).

/tf and /tf_static as robot_state_publisher would publish them, checked link by link against the
core's forward kinematics to 1e-9; log times on the simulation clock; the shipped Foxglove layout.
"""

import json
from pathlib import Path

from builtin_interfaces.msg import Time
from core_helpers import urdf_path
import dynamics_reference as ref
from nav_msgs.msg import Odometry
import numpy as np
import pytest
from rclpy.serialization import serialize_message
from replay_check import read, tf_errors
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from spart_ros.core.urdf import robot_from_urdf
from spart_ros.tools.bag import BagError, McapBag, read_back
from spart_ros.tools.replay import add_replay_topics, RobotTransforms
from std_msgs.msg import String

ROOT = Path(__file__).resolve().parent.parent
GRIPPER = str(ROOT / 'test' / 'data' / 'urdf' / 'loading' / 'gripper_mimic.urdf')
WALL0 = 1_700_000_000_000_000_000  # the recording's receipt times (wall clock)


def record(path, urdf, ns, floating, seed, n=40, leaders_only=False):
    """
    Return a bag as the demo records it.

    /clock, joint states (alphabetical, like joint_state_broadcaster; optionally leaders only),
    odometry and the latched robot description, received on the wall clock.
    """
    robot, _ = robot_from_urdf(urdf)
    rng = np.random.default_rng(seed)
    names = sorted(n for n in robot.q_names if not (leaders_only and n in robot.mimic))
    with McapBag(str(path)) as bag:
        bag.add(
            f'{ns}/robot_description',
            'std_msgs/msg/String',
            serialize_message(String(data=Path(urdf).read_text())),
            WALL0,
        )
        for k in range(n):
            sim = 2_000_000_000 + k * 1_000_000  # 1 kHz of simulated time from 2 s
            wall = WALL0 + 5_000_000 + k * 1_003_000  # received a little later, slightly slower
            stamp = Time(sec=sim // 1_000_000_000, nanosec=sim % 1_000_000_000)
            bag.add(
                '/clock', 'rosgraph_msgs/msg/Clock', serialize_message(Clock(clock=stamp)), wall
            )
            js = JointState(name=names, position=rng.uniform(-2, 2, len(names)).tolist())
            js.header.stamp = stamp
            bag.add(
                f'{ns}/joint_states',
                'sensor_msgs/msg/JointState',
                serialize_message(js),
                wall + 100,
            )
            odom = Odometry(child_frame_id=robot.base_link.name)
            odom.header.stamp, odom.header.frame_id = stamp, 'odom'
            R = ref.rot(rng.standard_normal(3), rng.uniform(0, 3)) if floating else np.eye(3)
            x, y, z, w = ref.quat_xyzw(R)
            o, p = odom.pose.pose.orientation, odom.pose.pose.position
            o.x, o.y, o.z, o.w = float(x), float(y), float(z), float(w)
            p.x, p.y, p.z = (rng.standard_normal(3) if floating else np.zeros(3)).tolist()
            bag.add(f'{ns}/odom', 'nav_msgs/msg/Odometry', serialize_message(odom), wall + 200)
    return robot


@pytest.mark.parametrize('name, floating', [('SC_3DoF', True), ('kuka_iiwa', False)])
def test_tf_of_every_link_equals_the_core_forward_kinematics(tmp_path, name, floating):
    path = tmp_path / f'{name}.mcap'
    robot = record(path, str(ROOT / 'urdf' / f'{name}.urdf'), '/demo', floating, seed=len(name))
    added = add_replay_topics(str(path), robot, '/demo')
    assert added == {'/tf': 80, '/tf_static': 1, '/robot_description': 1}
    p_err, R_err, checked, links = tf_errors(str(path), robot, '/demo')
    assert checked == 40 and links == robot.n_links_joints + 1
    assert p_err < 1e-9 and R_err < 1e-9, (p_err, R_err)
    before = path.read_bytes()
    with pytest.raises(BagError, match='already has /tf and /tf_static'):  # not added twice
        add_replay_topics(str(path), robot, '/demo')
    assert path.read_bytes() == before
    topics = read_back(
        str(path)
    )  # decodes with the definitions it carries (TFMessage written here)
    assert topics['/tf'] == ('tf2_msgs/TFMessage', 80) and topics['/tf_static'] == (
        'tf2_msgs/TFMessage',
        1,
    )
    assert (
        topics['/robot_description'] == ('std_msgs/String', 1)
        and topics['/demo/joint_states'][1] == 40
    )


@pytest.mark.filterwarnings('ignore::UserWarning')
def test_mimic_followers_come_from_their_leaders(tmp_path):
    path = tmp_path / 'gripper.mcap'
    robot = record(path, GRIPPER, '/g', True, seed=3, leaders_only=True)
    assert robot.mimic  # the gripper's fingers follow one joint
    add_replay_topics(str(path), robot, '/g')
    p_err, R_err, checked, _ = tf_errors(str(path), robot, '/g')
    assert checked == 40 and p_err < 1e-9 and R_err < 1e-9, (p_err, R_err)
    moved = read(str(path), '/g')['/tf'][0][2].transforms  # the first joint state's transforms
    assert {t.child_frame_id for t in moved} == {
        robot.links[j.child_link - 1].name for j in robot.joints if j.type != 0
    }


def test_log_times_move_to_the_simulation_clock_and_static_transforms_come_first(tmp_path):
    path = tmp_path / 'kuka.mcap'
    robot = record(path, str(ROOT / 'urdf' / 'kuka_iiwa.urdf'), '/k', False, seed=5, n=10)
    add_replay_topics(str(path), robot, '/k')
    data = read(str(path), '/k')
    for log, publish, js in data['/k/joint_states']:
        assert (
            log == js.header.stamp.sec * 1_000_000_000 + js.header.stamp.nanosec
        )  # the last /clock
        assert publish > WALL0  # receipt kept
    ((log, _, static),) = data['/tf_static']
    assert (
        log == 2_000_000_000
    )  # the description came before the first /clock: the first clock value
    assert list(static.transforms) == []  # the iiwa has no fixed joint (arm7: test below)
    ((log, _, description),) = data['/robot_description']
    assert description.data.startswith('<?xml') and log == 2_000_000_000
    # a bag without /clock keeps its log times
    path2 = tmp_path / 'noclock.mcap'
    with McapBag(str(path2)) as bag:
        js = JointState(name=['lbr_iiwa_joint_1'], position=[0.5])
        bag.add('/joint_states', 'sensor_msgs/msg/JointState', serialize_message(js), 123)
    add_replay_topics(str(path2), robot)
    assert [m[0] for m in read(str(path2), '')['/joint_states']] == [123]


def test_tf_messages_serialized_as_mcap_ros2_serializes_them():
    """tf_message_cdr: the bytes of mcap_ros2's dynamic encoder, for any names and stamps."""
    from mcap_ros2._dynamic import serialize_dynamic
    from spart_ros.tools.bag import message_definition
    from spart_ros.tools.replay import tf_message, tf_message_cdr, TF_TYPE

    encode = serialize_dynamic(TF_TYPE, message_definition(TF_TYPE))[TF_TYPE]
    rng = np.random.default_rng(11)
    names = ['', 'a', 'ab', 'abc', 'odom', 'base_link', 'lbr_iiwa_link_7', 'ünï', 'x' * 9]
    for n in [0, 1, 2, 3, 8]:
        for _ in range(5):
            transforms = []
            for _ in range(n):
                T = np.eye(4)
                T[:3, :3] = ref.rot(rng.standard_normal(3), rng.uniform(-3, 3))
                T[:3, 3] = rng.standard_normal(3) * 10.0 ** rng.integers(-3, 3)
                transforms.append((str(rng.choice(names)), str(rng.choice(names)), T))
            stamp = int(rng.integers(0, 2**31)) * 1_000_000_000 + int(rng.integers(0, 10**9))
            data = tf_message_cdr(stamp, transforms)
            assert data == encode(tf_message(stamp, transforms)), (n, stamp)


def test_replay_topics_from_messages_read_already(tmp_path):
    """The bag written from the messages the demo decoded is the one read here, byte for byte."""
    from spart_ros.tools.bag import read_messages

    robot = record(tmp_path / 'a.mcap', str(ROOT / 'urdf' / 'SC_3DoF.urdf'), '/d', True, seed=9)
    (tmp_path / 'b.mcap').write_bytes((tmp_path / 'a.mcap').read_bytes())
    messages = read_messages(str(tmp_path / 'b.mcap'))
    assert add_replay_topics(str(tmp_path / 'a.mcap'), robot, '/d') == add_replay_topics(
        str(tmp_path / 'b.mcap'), robot, '/d', messages=messages
    )
    assert (tmp_path / 'a.mcap').read_bytes() == (tmp_path / 'b.mcap').read_bytes()


def test_fixed_joints_go_to_tf_static_only():
    robot, _ = robot_from_urdf(urdf_path('arm7_floating'))  # arm_flange: fixed, to arm_tool
    rt = RobotTransforms(robot)
    static = rt.static()
    assert [(p, c) for p, c, _ in static] == [('arm_link_7', 'arm_tool')]
    moving = rt.moving(['arm_joint_3', 'not_a_joint', 'arm_joint_1'], [0.3, 9.0, -0.2])
    assert [(p, c) for p, c, _ in moving] == [
        ('arm_base', 'arm_link_1'),
        ('arm_link_2', 'arm_link_3'),
    ]


def test_the_foxglove_layout_names_its_panels_and_the_demo_topics():
    layout = json.loads((ROOT / 'config' / 'foxglove_layout.json').read_text())
    panels = layout['configById']
    kinds = sorted({key.split('!')[0] for key in panels})
    assert kinds == ['3D', 'Plot', 'Tab']
    (three_d,) = [v for k, v in panels.items() if k.startswith('3D!')]
    assert (
        three_d['topics']['/robot_description']['visible'] is True
        and three_d['followTf'] == 'odom'
    )
    plots = {k: v for k, v in panels.items() if k.startswith('Plot!')}
    titles = sorted(v['title'] for v in plots.values())
    assert titles == [
        'SC_3DoF: commanded efforts',
        'SC_3DoF: tracking error',
        'kuka_iiwa: commanded efforts',
        'kuka_iiwa: tracking error',
    ]
    paths = [p['value'] for v in plots.values() for p in v['paths']]
    assert sum('/demo_sc3dof/spart_controller/status.position_error[' in p for p in paths) == 3
    assert sum('/demo_kuka/spart_controller/status.position_error[' in p for p in paths) == 7
    assert sum('/demo_kuka/effort_controller/commands.data[' in p for p in paths) == 7

    def leaves(node):
        return [node] if isinstance(node, str) else leaves(node['first']) + leaves(node['second'])

    shown = leaves(layout['layout'])
    for tab in (v for k, v in panels.items() if k.startswith('Tab!')):
        for t in tab['tabs']:
            shown += leaves(t['layout'])
    assert sorted(shown) == sorted(panels)  # every configured panel is placed once


# --- the animation (spart_ros.tools.animation) -------------------------------------------------


def _frames(n=12):
    from spart_ros.core.attitude import rpy_rotation

    out = []
    for k in range(n):
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = rpy_rotation([0.05 * k, 0.1 * k, 0.0]), [0.02 * k, 0.0, 0.0]
        out.append((T, {'Joint_1': 0.1 * k, 'Joint_2': -0.05 * k, 'Joint_3': 0.08 * k}))
    return out


def test_the_motion_gif_as_a_stick_figure(tmp_path):
    from PIL import Image
    from spart_ros.tools.animation import motion_gif

    path = tmp_path / 'sc.gif'
    assert (
        motion_gif(
            path, str(ROOT / 'urdf' / 'SC_3DoF.urdf'), _frames(), True, backend='matplotlib'
        )
        == 'matplotlib'
    )
    with Image.open(path) as im:
        assert im.format == 'GIF' and im.n_frames == 12 and im.size == (320, 240)
        first = np.asarray(im.convert('RGB')).copy()
        im.seek(11)
        last = np.asarray(im.convert('RGB'))
    assert np.abs(first.astype(int) - last).sum() > 0  # the robot moved between frames
    with pytest.raises(ValueError, match='no frames'):
        motion_gif(path, str(ROOT / 'urdf' / 'SC_3DoF.urdf'), [], True)
    with pytest.raises(ValueError, match='backend must be'):
        motion_gif(path, str(ROOT / 'urdf' / 'SC_3DoF.urdf'), _frames(), True, backend='vtk')


def test_the_motion_gif_rendered_by_mujoco_offscreen(tmp_path):
    """
    In a process of its own (MuJoCo picks its GL backend at import).

    EGL, as the demo tries it.
    """
    import subprocess
    import sys

    script = (
        f'import sys, numpy as np; sys.path[:0] = [{str(ROOT)!r}, {str(ROOT / "test")!r}]; '
        'from test_replay import _frames; from spart_ros.tools.animation import motion_gif; '
        f'print(motion_gif({str(tmp_path / "sc.gif")!r}, {str(ROOT / "urdf" / "SC_3DoF.urdf")!r}, '
        '_frames(), True, backend="mujoco"))'
    )
    proc = subprocess.run(
        [sys.executable, '-c', script],
        capture_output=True,
        text=True,
        timeout=120,
        env={**__import__('os').environ, 'MUJOCO_GL': 'egl'},
    )
    if proc.returncode and (
        'EGL' in proc.stderr or 'OpenGL' in proc.stderr or 'gl_context' in proc.stderr
    ):
        pytest.skip(f'no EGL here: {proc.stderr.strip().splitlines()[-1]}')
    assert proc.returncode == 0 and proc.stdout.strip().splitlines()[-1] == 'mujoco', proc.stderr
    from PIL import Image

    with Image.open(tmp_path / 'sc.gif') as im:
        assert (
            im.n_frames == 12 and np.asarray(im.convert('RGB')).max() > 100
        )  # something was drawn
