"""
Odometry and IMU in any frame rigidly fixed to the base convert to the URDF base link exactly.

REP 105 allows base_footprint or the base link; a frame that is not fixed to the base is
refused by name.

The robot: the 7-joint floating arm under a massless root ``base_footprint`` (a fixed joint with
an offset and a rotation), so the URDF base link is ``base_footprint`` and the arm's own
``arm_base`` hangs below it.  The footprint state is turned into the arm_base state here by the
forward formula from the joint's <origin> numbers (the converter computes the inverse from the
model), and both must give the same dynamics to 1e-12 (relative to the largest value); the
dynamics node must do the same over DDS.
"""

import re

from builtin_interfaces.msg import Time
from core_helpers import urdf_path
import dynamics_reference as ref
from nav_msgs.msg import Odometry
import numpy as np
import pytest
from sensor_msgs.msg import JointState
from spart_interfaces.msg import CenterOfMass, Jacobians, LinkTwists
from spart_interfaces.srv import InverseDynamics
from spart_ros.core.errors import ModelError
from spart_ros.core.link_frames import fixed_frame_in_base
from spart_ros.nodes.base_estimator import BaseLinkState, frame_state_to_base
from spart_ros.nodes.config import ModelConfig
from spart_ros.nodes.model import Model

FOOT_XYZ, FOOT_RPY = np.array([0.12, -0.05, 0.31]), (0.2, -0.4, 0.9)  # arm_base in base_footprint


def with_massless_root(text):
    """arm7_floating.urdf under a massless root link base_footprint (no <inertial>)."""
    head, sep, tail = text.partition('<link name="arm_base">')
    root = (
        f'<link name="base_footprint"/>\n  <joint name="footprint_joint" type="fixed">\n'
        f'    <parent link="base_footprint"/><child link="arm_base"/>\n'
        f'    <origin xyz="{" ".join(map(str, FOOT_XYZ))}" '
        f'rpy="{" ".join(map(str, FOOT_RPY))}"/>\n'
        f'  </joint>\n  '
    )
    return head + root + sep + tail


URDF = with_massless_root(open(urdf_path('arm7_floating')).read())
R_FOOT_ARM = ref.rpy(*FOOT_RPY)  # rotation of arm_base in base_footprint


def arm_base_state(R_f, p_f, v_f, w_f):
    """
    Return the state of arm_base from the state of base_footprint.

    Forward, from the URDF numbers.
    """
    R_a = R_f @ R_FOOT_ARM
    p_a = p_f + R_f @ FOOT_XYZ
    w_a = R_FOOT_ARM.T @ w_f
    v_a = R_FOOT_ARM.T @ (v_f + np.cross(w_f, FOOT_XYZ))
    return R_a, p_a, v_a, w_a


def random_state(seed, n_q):
    rng = np.random.default_rng(seed)
    return (
        ref.rot(rng.standard_normal(3), rng.uniform(0.3, 3.0)),
        rng.standard_normal(3),
        rng.standard_normal(3),
        rng.standard_normal(3),
        rng.uniform(-1, 1, n_q),
        rng.standard_normal(n_q),
        rng,
    )


def assert_same(got, expected, tol=1e-12):
    """|got - expected| <= tol relative to the largest |expected| (and at least tol absolute)."""
    got, expected = np.asarray(got, float), np.asarray(expected, float)
    scale = max(1.0, float(np.abs(expected).max(initial=0.0)))
    assert np.abs(got - expected).max(initial=0.0) <= tol * scale, (got, expected)


@pytest.fixture(scope='module')
def model():
    m = Model.from_urdf(URDF, ModelConfig(base='floating'))
    assert m.robot.base_link.name == 'base_footprint' and m.robot.base_link.mass == 0.0
    return m


# ---------------------------------------------------------------------------------------------
# pure
# ---------------------------------------------------------------------------------------------


def test_frame_state_to_base_by_finite_differences():
    """
    Along a smooth trajectory of a frame f.

    The converted base pose is f's pose times the fixed inverse, and its twist equals the
    finite-difference derivative of that pose (expressed in b).
    """
    T_b_f = np.eye(4)
    T_b_f[:3, :3], T_b_f[:3, 3] = ref.rpy(0.3, -0.2, 1.1), [0.4, -0.3, 0.2]

    def f_pose(t):
        return ref.rot([0.2, 0.5, 1.0], 0.8 * t + 0.1) @ ref.rot([1, 0, 0], np.sin(t)), np.array(
            [np.cos(t), 0.3 * t * t, 1.0 - t]
        )

    def b_pose(t):
        R_f, p_f = f_pose(t)
        R_b = R_f @ T_b_f[:3, :3].T
        return R_b, p_f - R_b @ T_b_f[:3, 3]

    t, h = 0.7, 1e-5
    R_f, p_f = f_pose(t)
    dR = (f_pose(t + h)[0] - f_pose(t - h)[0]) / (2 * h)
    W = R_f.T @ dR
    w_f = np.array([W[2, 1], W[0, 2], W[1, 0]])
    v_f = R_f.T @ (f_pose(t + h)[1] - f_pose(t - h)[1]) / (2 * h)
    R_b, p_b, v_b, w_b = frame_state_to_base(T_b_f, R_f, p_f, v_f, w_f)
    R_e, p_e = b_pose(t)
    np.testing.assert_allclose(R_b, R_e, atol=1e-14)
    np.testing.assert_allclose(p_b, p_e, atol=1e-14)
    dRb = (b_pose(t + h)[0] - b_pose(t - h)[0]) / (2 * h)
    Wb = R_b.T @ dRb
    np.testing.assert_allclose(w_b, [Wb[2, 1], Wb[0, 2], Wb[1, 0]], atol=1e-8)
    np.testing.assert_allclose(
        v_b, R_b.T @ (b_pose(t + h)[1] - b_pose(t - h)[1]) / (2 * h), atol=1e-8
    )


def test_odometry_of_the_arm_base_gives_the_dynamics_of_the_footprint_odometry(model):
    robot = model.robot
    T = model.frame_in_base('arm_base', 'odometry child_frame_id')
    np.testing.assert_allclose(T[:3, :3], R_FOOT_ARM, atol=1e-15)
    np.testing.assert_allclose(T[:3, 3], FOOT_XYZ, atol=1e-15)
    assert model.frame_in_base('base_footprint') is None  # the base link itself
    z = np.zeros(3)
    for seed in range(5):
        R_f, p_f, v_f, w_f, qm, um, rng = random_state(seed, model.n_q)
        foot = BaseLinkState(R_f, p_f, v_f, w_f)
        converted = BaseLinkState(*frame_state_to_base(T, *arm_base_state(R_f, p_f, v_f, w_f)))
        taum, umdot = rng.standard_normal(model.n_q), rng.standard_normal(model.n_q)
        wFm = rng.standard_normal((6, robot.n_links_joints))
        g = rng.standard_normal(3)
        a = model.outputs(foot, qm, um)
        b = model.outputs(converted, qm, um)
        for x, y in zip((a.rL, a.tL, a.com), (b.rL, b.tL, b.com)):
            assert_same(y, x)
        fa = model.forward_dynamics(foot, qm, um, taum, z, z, np.zeros(6), wFm, g)
        fb = model.forward_dynamics(converted, qm, um, taum, z, z, np.zeros(6), wFm, g)
        for x, y in zip(fa, fb):
            assert_same(y, x)
        ia = model.inverse_dynamics(
            foot, qm, um, umdot, z, z, np.zeros(6), wFm, g, floating_base=True
        )
        ib = model.inverse_dynamics(
            converted, qm, um, umdot, z, z, np.zeros(6), wFm, g, floating_base=True
        )
        for x, y in zip(ia, ib):
            assert_same(y, x)
        assert np.abs(fa.umdot).max() > 1e-3  # not a trivial comparison


def test_the_same_robot_without_the_root_has_the_same_joint_dynamics(model):
    """
    The massless root changes nothing physical.

    The arm's own URDF with arm_base odometry gives the same joint accelerations and floating-base
    efforts (a check independent of the converter).
    """
    plain = Model.from_urdf(urdf_path('arm7_floating'), ModelConfig(base='floating'))
    z = np.zeros(3)
    R_f, p_f, v_f, w_f, qm, um, rng = random_state(11, model.n_q)
    taum, umdot = rng.standard_normal(model.n_q), rng.standard_normal(model.n_q)
    g = np.array([0.0, 0.0, -9.81])
    wFm = np.zeros((6, plain.robot.n_links_joints))
    fa = model.forward_dynamics(
        BaseLinkState(R_f, p_f, v_f, w_f),
        qm,
        um,
        taum,
        z,
        z,
        np.zeros(6),
        np.zeros((6, model.robot.n_links_joints)),
        g,
    )
    fb = plain.forward_dynamics(
        BaseLinkState(*arm_base_state(R_f, p_f, v_f, w_f)), qm, um, taum, z, z, np.zeros(6), wFm, g
    )
    assert_same(fb.umdot, fa.umdot, 1e-11)
    ia = model.inverse_dynamics(
        BaseLinkState(R_f, p_f, v_f, w_f),
        qm,
        um,
        umdot,
        z,
        z,
        np.zeros(6),
        np.zeros((6, model.robot.n_links_joints)),
        g,
        floating_base=True,
    )
    ib = plain.inverse_dynamics(
        BaseLinkState(*arm_base_state(R_f, p_f, v_f, w_f)),
        qm,
        um,
        umdot,
        z,
        z,
        np.zeros(6),
        wFm,
        g,
        floating_base=True,
    )
    assert_same(ib.taum, ia.taum, 1e-11)


def test_an_imu_in_the_arm_base_gives_the_footprint_orientation_and_rate(model):
    from spart_ros.nodes.base_estimator import imu_to_base

    R_f, p_f, v_f, w_f, _, _, _ = random_state(7, model.n_q)
    R_a, _, _, w_a = arm_base_state(R_f, p_f, v_f, w_f)  # what an IMU in arm_base measures
    R_b, w_b = imu_to_base(model.imu_rotation('arm_base'), R_a, w_a)
    assert_same(R_b, R_f)
    assert_same(w_b, w_f)
    with pytest.raises(ModelError, match="IMU link 'arm_link_1' is not rigidly attached"):
        model.imu_rotation('arm_link_1')


def test_frames_not_fixed_to_the_base_are_refused_by_name(model):
    with pytest.raises(
        ModelError,
        match=r"odometry child_frame_id 'arm_link_3' is not rigidly attached to the "
        r"base link 'base_footprint': joint 'arm_joint_3'",
    ):
        model.frame_in_base('arm_link_3', 'odometry child_frame_id')
    with pytest.raises(
        ModelError, match=r"odometry child_frame_id 'base_link' is not a link of robot"
    ):
        model.frame_in_base('base_link', 'odometry child_frame_id')
    # a link fixed to a moving link is not fixed to the base either
    T = fixed_frame_in_base(model.robot, 'arm_base')
    np.testing.assert_allclose(T[:3, 3], FOOT_XYZ, atol=1e-15)
    with pytest.raises(ModelError, match="joint 'arm_joint_7'"):
        fixed_frame_in_base(model.robot, 'arm_tool')


# ---------------------------------------------------------------------------------------------
# the dynamics node
# ---------------------------------------------------------------------------------------------


def odometry(R, p, v, w, t, child):
    msg = Odometry(child_frame_id=child)
    msg.header.stamp, msg.header.frame_id = t, 'odom'
    x, y, z, qw = ref.quat_xyzw(R)
    o = msg.pose.pose.orientation
    o.x, o.y, o.z, o.w = float(x), float(y), float(z), float(qw)
    pos, tw = msg.pose.pose.position, msg.twist.twist
    pos.x, pos.y, pos.z = (float(a) for a in p)
    tw.linear.x, tw.linear.y, tw.linear.z = (float(a) for a in v)
    tw.angular.x, tw.angular.y, tw.angular.z = (float(a) for a in w)
    return msg


def joint_state(names, q, qd, t):
    msg = JointState(
        name=list(names), position=[float(a) for a in q], velocity=[float(a) for a in qd]
    )
    msg.header.stamp = t
    return msg


def test_dynamics_node_converts_odometry_frames_and_refuses_moving_ones(tmp_path):
    from node_helpers import RELIABLE_QOS, RosTestNode, start_node

    ns = 'odomframes'
    proc = start_node(
        'spart_ros',
        'dynamics_node',
        namespace='/' + ns,
        parameters={'base': 'floating', 'robot_description': URDF, 'world_frame': 'odom'},
    )
    ros = RosTestNode('test_odometry_frames')
    try:
        proc.wait_for_output(r'spart_dynamics\]: base floating', 90.0)
        js = ros.publisher(JointState, f'/{ns}/joint_states', RELIABLE_QOS)
        odom = ros.publisher(Odometry, f'/{ns}/odom', RELIABLE_QOS)
        subs = [
            ros.subscribe(t, f'/{ns}/spart_dynamics/{n}', RELIABLE_QOS)
            for t, n in (
                (LinkTwists, 'link_twists'),
                (Jacobians, 'jacobians'),
                (CenterOfMass, 'center_of_mass'),
            )
        ]
        R_f, p_f, v_f, w_f, qm, um, rng = random_state(3, 7)
        names = [f'arm_joint_{k}' for k in range(1, 8)]
        umdot = rng.standard_normal(7)

        def run(odom_msg, sec):
            t = Time(sec=sec)
            odom_msg.header.stamp = t
            got = {}

            def step():
                for c in subs:
                    m = [x for x in c.messages if x.header.stamp == t]
                    if m:
                        got[c] = m[-1]
                if len(got) == 3:
                    return True
                odom.publish(odom_msg)
                js.publish(joint_state(names, qm, um, t))
                return False

            ros.wait_for(step, 20.0, f'outputs stamped {sec}', process=proc)
            res = ros.call(
                InverseDynamics,
                f'/{ns}/spart_dynamics/inverse_dynamics',
                InverseDynamics.Request(
                    use_current_state=True,
                    floating_base=True,
                    joint_names=names,
                    accelerations=umdot.tolist(),
                ),
                process=proc,
            )
            assert res.success, res.message
            twists = np.array(
                [
                    [w.angular.x, w.angular.y, w.angular.z, w.linear.x, w.linear.y, w.linear.z]
                    for w in got[subs[0]].twists
                ]
            )
            jac = np.concatenate([np.asarray(j.data) for j in got[subs[1]].jacobians])
            c = got[subs[2]]
            return (
                twists,
                jac,
                np.array([c.position.x, c.position.y, c.position.z]),
                np.array(res.efforts),
                np.array([res.base_acceleration.linear.x, res.base_acceleration.angular.z]),
            )

        foot = run(odometry(R_f, p_f, v_f, w_f, Time(), child='base_footprint'), 10)
        arm = run(odometry(*arm_base_state(R_f, p_f, v_f, w_f), Time(), child='arm_base'), 11)
        for x, y in zip(foot, arm):
            assert_same(y, x)
        assert np.abs(foot[3]).max() > 1e-3
        # a moving link and an unknown frame: refused by name, the node keeps running
        for child, words in (
            (
                'arm_link_3',
                "is not rigidly attached to the base link 'base_footprint': joint 'arm_joint_3'",
            ),
            ('nowhere', 'is not a link of robot'),
        ):
            ros.publish_until(
                odom,
                lambda: odometry(R_f, p_f, v_f, w_f, Time(sec=20), child=child),
                lambda: re.search(
                    f"odometry child_frame_id '{child}' {re.escape(words)}", proc.output()
                ),
                what=f'the refusal of {child}',
                process=proc,
            )
        assert proc.is_running()
    finally:
        ros.close()
        proc.cleanup()


def test_controller_efforts_with_odometry_in_either_frame_agree():
    """
    The controller path (RobotInputs' conversion, then the floating-base law).

    The same state given as base_footprint odometry and as arm_base odometry gives the same efforts
    to 1e-12.
    """
    from node_helpers import RELIABLE_QOS, RosTestNode, scaled, start_node

    ns = 'odomframes_ctrl'
    proc = start_node(
        'spart_ros',
        'controller_node',
        namespace='/' + ns,
        parameters={
            'base': 'floating',
            'mode': 'floating_base',
            'robot_description': URDF,
            'world_frame': 'odom',
            'joint_command_topic': 'joint_commands',
            'state_timeout': 5.0,
            'max_tracking_error': 0.0,
        },
    )
    ros = RosTestNode('test_odometry_frames_controller')
    try:
        proc.wait_for_output(r'spart_controller\]: active', 90.0)
        js = ros.publisher(JointState, f'/{ns}/joint_states', RELIABLE_QOS)
        odom = ros.publisher(Odometry, f'/{ns}/odom', RELIABLE_QOS)
        commands = ros.subscribe(JointState, f'/{ns}/joint_commands', RELIABLE_QOS)
        # a state is answered once: its answer must not go to a reader the controller has not
        # matched yet (a fresh clone's run waited 10 s for it)
        ros.wait_for_writers([commands], scaled(30.0), process=proc)
        R_f, p_f, v_f, w_f, qm, um, _ = random_state(4, 7)
        names = [f'arm_joint_{k}' for k in range(1, 8)]

        def run(odom_msg, sec):
            t = Time(sec=sec)
            odom_msg.header.stamp = t

            def answered():
                return next((m for m in commands.messages if m.header.stamp == t), None)

            msg = ros.publish_until(
                js,
                lambda: (odom.publish(odom_msg), joint_state(names, qm, um, t))[1],
                answered,
                what=f'the command answering the state stamped {sec}',
                process=proc,
            )
            return np.array(msg.effort)

        foot = run(odometry(R_f, p_f, v_f, w_f, Time(), child='base_footprint'), 10)
        arm = run(odometry(*arm_base_state(R_f, p_f, v_f, w_f), Time(), child='arm_base'), 11)
        assert_same(arm, foot)
        assert np.abs(foot).max() > 1e-3  # not a trivial comparison
    finally:
        ros.close()
        proc.cleanup()
