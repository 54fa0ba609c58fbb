"""
Pure unit tests of the dynamics node's helpers (spart_ros.nodes.*).

The helpers: joint states, base estimator, model, requests, messages.  And an independent
check of the ROS <-> SPART base-state conversion (spart_ros.core.base_state) by finite
differences along known trajectories.  No ROS graph, no processes.
"""

import math
from types import SimpleNamespace

from core_helpers import urdf_path
import dynamics_reference as ref
import numpy as np
import pytest
from spart_ros import spart
from spart_ros.core import base_state as bs
from spart_ros.core.errors import InputError, ModelError
from spart_ros.nodes import (
    base_estimator,
    config,
    conversions,
    joint_states,
    requests,
    stamps,
    throttle,
)
from spart_ros.nodes import model as node_model

BRANCHED = urdf_path('branched_two_arm_spacecraft')
KUKA = urdf_path('kuka_iiwa')
ARM7 = urdf_path('arm7_floating')


def _robot(path):
    return spart.urdf2robot(path)[0]


@pytest.fixture(scope='module')
def branched():
    return _robot(BRANCHED)


@pytest.fixture(scope='module')
def kuka():
    return _robot(KUKA)


def _vec(x, y, z):
    return SimpleNamespace(x=x, y=y, z=z)


# ---------------------------------------------------------------------------------------
# base_state by finite differences
# ---------------------------------------------------------------------------------------


def _trajectory(t):
    """Return a smooth base link trajectory: R_b(t) (b -> world), p_b(t)."""
    R = (
        ref.rot([0, 0, 1], 0.7 * t + 0.2)
        @ ref.rot([0, 1, 0], 0.4 * t * t - 0.3)
        @ ref.rot([1, 0, 0], np.sin(1.3 * t))
    )
    p = np.array([1.0 + 0.5 * t - 0.2 * t**3, -2.0 + np.cos(t), 0.3 * t * t])
    return R, p


def _d(f, t, h):
    return (f(t + h) - f(t - h)) / (2 * h)


def _vee(S):
    return np.array([S[2, 1] - S[1, 2], S[0, 2] - S[2, 0], S[1, 0] - S[0, 1]]) / 2


def _ros_twist(t, h=1e-5):
    """(v_b, w_b) of the trajectory, numerically: v_b = R' p_dot, [w_b]x = R' R_dot."""
    R, _ = _trajectory(t)
    p_dot = _d(lambda s: _trajectory(s)[1], t, h)
    R_dot = _d(lambda s: _trajectory(s)[0], t, h)
    return R.T @ p_dot, _vee(R.T @ R_dot)


@pytest.mark.parametrize('path', [BRANCHED, KUKA])
@pytest.mark.parametrize('t', [0.0, 0.8, 2.3])
def test_base_state_velocity_by_finite_differences(path, t):
    """u0 from base_from_link_frame = numerical [omega of the CoM frame in c; CoM velocity]."""
    robot = _robot(path)
    T = np.asarray(robot.base_link.T, float)
    assert np.abs(T[:3, 3]).max() > 0, 'the test needs a base inertial offset'
    h = 1e-5

    def com_pose(s):
        R_b, p_b = _trajectory(s)
        return R_b @ T[:3, :3], p_b + R_b @ T[:3, 3]  # CoM frame c straight from its definition

    R0, r0 = com_pose(t)
    omega_c = _vee(R0.T @ _d(lambda s: com_pose(s)[0], t, h))
    r0_dot = _d(lambda s: com_pose(s)[1], t, h)
    R_b, p_b = _trajectory(t)
    v_b, w_b = _ros_twist(t)
    out = bs.base_from_link_frame(robot, R_b, p_b, v_b, w_b)
    np.testing.assert_allclose(out.R0, R0, atol=1e-12)
    np.testing.assert_allclose(out.r0, r0, atol=1e-12)
    np.testing.assert_allclose(out.u0, np.concatenate([omega_c, r0_dot]), atol=1e-7)
    back = bs.link_frame_from_base(robot, out.R0, out.r0, out.u0)
    for a, b in zip(back, (R_b, p_b, v_b, w_b)):
        np.testing.assert_allclose(a, b, atol=1e-12)


@pytest.mark.parametrize('path', [BRANCHED, KUKA])
@pytest.mark.parametrize('t', [0.0, 1.1])
def test_base_state_acceleration_by_finite_differences(path, t):
    """
    u0dot from base_acceleration_from_link_frame = d/dt of the numerical u0.

    The ROS inputs are the classical acceleration of b's origin and the angular acceleration, both
    in b.
    """
    robot = _robot(path)
    h = 1e-4

    def u0(s):
        R_b, p_b = _trajectory(s)
        v_b, w_b = _ros_twist(s)
        return bs.base_from_link_frame(robot, R_b, p_b, v_b, w_b).u0

    u0dot_num = _d(u0, t, h)
    R_b, _ = _trajectory(t)
    _, w_b = _ros_twist(t)
    a_b = R_b.T @ ((_trajectory(t + h)[1] - 2 * _trajectory(t)[1] + _trajectory(t - h)[1]) / h**2)
    alpha_b = _d(lambda s: _ros_twist(s)[1], t, h)  # d/dt of w_b's components = alpha in b
    u0dot = bs.base_acceleration_from_link_frame(robot, R_b, w_b, a_b, alpha_b)
    np.testing.assert_allclose(u0dot, u0dot_num, atol=2e-5)
    R0 = bs.base_from_link_frame(robot, R_b, np.zeros(3)).R0
    a2, alpha2 = bs.link_frame_acceleration_from_base(robot, R0, u0(t), u0dot)
    np.testing.assert_allclose(a2, a_b, atol=1e-9)
    np.testing.assert_allclose(alpha2, alpha_b, atol=1e-9)


@pytest.mark.parametrize('path', [BRANCHED, KUKA])
def test_base_wrench_by_virtual_power(path):
    """
    A base wrench and its tau0 do the same power on every motion.

    The wrench: torque, force at b's origin, in b.  tau0 . u0 = torque_b . w_b + force_b . v_b.
    """
    robot = _robot(path)
    rng = np.random.default_rng(3)
    R_b, p_b = _trajectory(0.9)
    torque_b, force_b = rng.standard_normal(3), rng.standard_normal(3)
    R0 = bs.base_from_link_frame(robot, R_b, p_b).R0
    tau0 = bs.link_frame_wrench_to_base_generalized_force(robot, R0, torque_b, force_b)
    for _ in range(5):
        v_b, w_b = rng.standard_normal(3), rng.standard_normal(3)
        u0 = bs.base_from_link_frame(robot, R_b, p_b, v_b, w_b).u0
        assert tau0 @ u0 == pytest.approx(torque_b @ w_b + force_b @ v_b, rel=1e-12, abs=1e-12)
    back = bs.base_generalized_force_to_link_frame(robot, R0, tau0)
    np.testing.assert_allclose(back[0], torque_b, atol=1e-12)
    np.testing.assert_allclose(back[1], force_b, atol=1e-12)


# ---------------------------------------------------------------------------------------
# joint states
# ---------------------------------------------------------------------------------------


def test_joint_state_mapper_by_name():
    m = joint_states.JointStateMapper(['a', 'b', 'c'])
    assert not m.ready and m.missing() == ['a', 'b', 'c']
    up = m.update(['c', 'x', 'a'], [3.0, 99.0, 1.0], [30.0, 99.0, 10.0])
    assert up.unknown == ('x',) and not up.missing_velocities
    assert not m.ready and m.missing() == ['b']
    m.update(['b'], [2.0], [20.0])
    assert m.ready
    np.testing.assert_array_equal(m.positions, [1, 2, 3])
    np.testing.assert_array_equal(m.velocities, [10, 20, 30])
    # subset: others keep their last value; no velocities -> zero for these joints
    up = m.update(['b', 'a'], [-2.0, -1.0])
    assert up.missing_velocities
    np.testing.assert_array_equal(m.positions, [-1, -2, 3])
    np.testing.assert_array_equal(m.velocities, [0, 0, 30])


def test_joint_state_mapper_velocity_only_effort_only_and_foreign_messages():
    m = joint_states.JointStateMapper(['a', 'b'])
    up = m.update(['b', 'a'], [], [2.0, 1.0])  # velocities only: positions not seen yet
    assert up.matched == 2 and not up.missing_velocities and not m.ready
    np.testing.assert_array_equal(m.velocities, [1, 2])
    m.update(['a', 'b'], [5.0, 6.0], [7.0, 8.0])
    up = m.update(['b'], [], [-1.0])  # velocities only, a subset
    assert up.matched == 1 and m.ready
    np.testing.assert_array_equal(m.positions, [5, 6])
    np.testing.assert_array_equal(m.velocities, [7, -1])
    up = m.update(['a', 'b'], [], [])  # efforts only: model joints, nothing to map
    assert up.matched == 2 and up.applied == 0
    up = m.update(['gripper'], [0.1], [0.0])  # another robot's joints
    assert up.matched == 0 and up.applied == 0 and up.unknown == ('gripper',)
    assert m.update([], [], []).matched == 0  # empty message
    np.testing.assert_array_equal(m.positions, [5, 6])
    np.testing.assert_array_equal(m.velocities, [7, -1])


@pytest.mark.parametrize(
    'names, pos, vel, match',
    [
        (['a', 'b'], [1.0], [], '2 names but 1 positions'),
        (['a', 'b'], [1.0, 2.0], [1.0], '2 names but 1 velocities'),
        (['a', 'b'], [1.0, float('nan')], [], "position of joint 'b'"),
        (['a', 'b'], [1.0, 2.0], [0.0, float('inf')], "velocity of joint 'b'"),
        (['a', 'a'], [1.0, 2.0], [], "joint 'a' appears twice"),
    ],
)
def test_joint_state_mapper_rejects_bad_messages(names, pos, vel, match):
    m = joint_states.JointStateMapper(['a', 'b'])
    m.update(['a', 'b'], [5.0, 6.0], [7.0, 8.0])
    with pytest.raises(InputError, match=match):
        m.update(names, pos, vel)
    np.testing.assert_array_equal(m.positions, [5, 6])  # unchanged
    np.testing.assert_array_equal(m.velocities, [7, 8])


def test_joint_state_mapper_ignores_nan_of_unknown_joints_and_carries_over():
    m = joint_states.JointStateMapper(['a', 'b'])
    m.update(['zz', 'a', 'b'], [float('nan'), 1.0, 2.0], [float('nan'), 0.5, 0.25])
    assert m.ready
    m2 = joint_states.JointStateMapper(['b', 'c'], previous=m)
    assert m2.missing() == ['c'] and m2.positions[0] == 2.0 and m2.velocities[0] == 0.25
    assert joint_states.JointStateMapper([]).ready


S = 1_000_000_000  # ns per s


def test_joint_state_stamps_are_ordered_per_joint():
    """
    Two sources (arm a, b; gripper c) stamped a little apart both count.

    A message is older only for the joints whose last stamp is newer (it updates the others).
    """
    m = joint_states.JointStateMapper(['a', 'b', 'c'])
    up = m.update(['a', 'b'], [1.0, 2.0], [], stamp=10 * S, jump_back=S)
    assert up.applied == 2 and not m.ready
    up = m.update(['c'], [3.0], [], stamp=10 * S - S // 2, jump_back=S)  # 0.5 s earlier: c's first
    assert up.applied == 1 and not up.jumped and m.ready
    up = m.update(
        ['a', 'b'], [9.0, 9.0], [], stamp=10 * S - 1, jump_back=S
    )  # 1 ns before a and b's
    assert (up.matched, up.applied) == (2, 0)
    np.testing.assert_array_equal(m.positions, [1, 2, 3])
    up = m.update(
        ['c', 'a'], [4.0, 9.0], [], stamp=10 * S - S // 4, jump_back=S
    )  # newer for c only
    assert (up.matched, up.applied) == (2, 1)
    np.testing.assert_array_equal(m.positions, [1, 2, 4])
    np.testing.assert_array_equal(m.stamps, [10 * S, 10 * S, 10 * S - S // 4])
    up = m.update(
        ['a', 'b', 'c'], [5.0, 6.0, 7.0], [], stamp=10 * S, jump_back=S
    )  # equal stamp: taken
    assert up.applied == 3
    np.testing.assert_array_equal(m.positions, [5, 6, 7])
    up = m.update(['a'], [0.0], [], stamp=0)  # no jump detection: dropped
    assert up.applied == 0
    up = m.update(['a'], [8.0], [], stamp=None)  # no ordering: taken
    assert up.applied == 1 and m.positions[0] == 8.0
    assert m.stamps[0] == 10 * S  # and not recorded


def test_joint_state_clock_jump_back_forgets_every_stamp():
    m = joint_states.JointStateMapper(['a', 'b', 'c'])
    m.update(['a', 'b', 'c'], [1.0, 2.0, 3.0], [], stamp=100 * S, jump_back=S)
    assert (
        m.update(['a'], [9.0], [], stamp=99 * S, jump_back=S).applied == 0
    )  # exactly 1 s back: older
    with pytest.raises(InputError, match="position of joint 'a'"):  # a bad one forgets nothing
        m.update(['a'], [float('nan')], [], stamp=0, jump_back=S)
    np.testing.assert_array_equal(m.stamps, [100 * S] * 3)
    up = m.update(['a', 'b'], [4.0, 5.0], [], stamp=S // 10, jump_back=S)  # a simulator reset
    assert up.jumped and up.applied == 2
    np.testing.assert_array_equal(m.positions, [4, 5, 3])
    np.testing.assert_array_equal(m.stamps[:2], [S // 10] * 2)
    up = m.update(['c'], [6.0], [], stamp=S // 20, jump_back=S)  # c forgotten too
    assert up.applied == 1 and not up.jumped
    # a new model carries the stamps of the joints it shares
    m2 = joint_states.JointStateMapper(['c', 'd'], previous=m)
    np.testing.assert_array_equal(m2.stamps, [S // 20, stamps.NEVER])
    assert m2.update(['c'], [0.0], [], stamp=0, jump_back=S).applied == 0
    m2.forget_stamps()
    assert m2.update(['c'], [0.0], [], stamp=0, jump_back=S).applied == 1


def test_stamp_order_and_parameters():
    assert stamps.stamp_ns(3, 7) == 3 * S + 7
    assert stamps.order(5, stamps.NEVER, S) == stamps.NEWER
    assert stamps.order(5, 5, S) == stamps.NEWER
    assert stamps.order(5, 6, S) == stamps.OLDER
    assert stamps.order(0, S + 1, S) == stamps.JUMP
    assert stamps.order(0, S, S) == stamps.OLDER
    assert stamps.order(0, 100 * S, 0) == stamps.OLDER  # 0: no jump detection
    assert stamps.jump_back_ns('clock_jump_back', 0.25) == S // 4
    for bad in (-1.0, float('nan'), float('inf')):
        with pytest.raises(config.ConfigError, match='^clock_jump_back must be'):
            stamps.jump_back_ns('clock_jump_back', bad)
    assert base_estimator.check_max_age('odom_max_age', float('inf')) == float('inf')
    for bad in (-0.1, float('nan')):
        with pytest.raises(config.ConfigError, match='^odom_max_age must be'):
            base_estimator.check_max_age('odom_max_age', bad)
        with pytest.raises(config.ConfigError, match='^imu_max_age must be'):
            base_estimator.FloatingBaseEstimator(max_age=bad)


# ---------------------------------------------------------------------------------------
# IMU, base estimator
# ---------------------------------------------------------------------------------------


def test_imu_rotation_from_urdf_fixed_chain():
    text = ref.with_imu(open(BRANCHED).read(), 'bus')
    robot = spart.urdf2robot(text)[0]
    np.testing.assert_allclose(
        node_model.imu_rotation_in_base(robot, 'imu_link'), ref.R_B_IMU, atol=1e-12
    )
    np.testing.assert_allclose(node_model.imu_rotation_in_base(robot, 'bus'), np.eye(3), atol=0)
    with pytest.raises(ModelError, match="joint 'a_slide'.*not fixed"):
        node_model.imu_rotation_in_base(robot, 'a_camera')  # fixed to a moving link
    with pytest.raises(ModelError, match="IMU link 'nope' is not a link"):
        node_model.imu_rotation_in_base(robot, 'nope')


def test_floating_base_estimator_imu_override():
    est = base_estimator.FloatingBaseEstimator(max_age=0.1)
    assert est.state(10.0) is None
    R_odo = ref.rot([0, 0, 1], 0.3)
    est.set_odometry(R_odo, np.ones(3), np.array([1.0, 0, 0]), np.array([0, 0, 0.1]))
    assert est.state(10.0).R_b is R_odo
    R_imu_frame = ref.rot([1, 0, 0], 0.5)  # IMU orientation in the world
    w_imu = np.array([0.2, -0.1, 0.3])  # in the IMU frame
    R_b, w_b = base_estimator.imu_to_base(ref.R_B_IMU, R_imu_frame, w_imu)
    np.testing.assert_allclose(R_b @ ref.R_B_IMU, R_imu_frame, atol=1e-12)  # b then imu = imu
    np.testing.assert_allclose(R_b @ w_b, R_imu_frame @ w_imu, atol=1e-12)  # same world rate
    est.set_imu(R_b, w_b, 10.05)
    s = est.state(10.0)
    assert s.R_b is R_b and s.w_b is w_b and s.p_b is not None and s.v_b[0] == 1.0
    assert est.state(10.2).R_b is R_odo  # stale
    est.set_imu(None, w_b, 10.0)  # no orientation in the IMU message
    s = est.state(10.0)
    assert s.R_b is R_odo and s.w_b is w_b


# ---------------------------------------------------------------------------------------
# Model vs the numpy SPART functions
# ---------------------------------------------------------------------------------------


def _state(robot, seed):
    rng = np.random.default_rng(seed)
    R_b = ref.rot(rng.standard_normal(3), rng.uniform(0, np.pi))
    return (
        R_b,
        rng.standard_normal(3),
        rng.standard_normal(3),
        rng.standard_normal(3),
        rng.uniform(-1, 1, robot.n_q),
        rng.standard_normal(robot.n_q),
    )


JAC = [
    ('a_tip', [0.01, 0.02, 0.03]),
    ('b_ee', [0.0, 0.0, 0.0]),
    ('bus', [0.1, -0.2, 0.3]),
    ('a_camera', [0.05, 0.0, -0.1]),
]


@pytest.mark.parametrize('columns', ['ros', 'spart'])
def test_model_outputs_floating(branched, columns):
    cfg = config.ModelConfig(
        base='floating',
        jacobian_links=[n for n, _ in JAC],
        jacobian_offsets=[x for _, o in JAC for x in o],
        jacobian_base_columns=columns,
    )
    model = node_model.Model(branched, cfg)
    assert model.column_names[:6] == list(node_model.BASE_COLUMN_NAMES[columns])
    assert model.column_names[6:] == branched.q_names
    for seed in range(3):
        R_b, p_b, v_b, w_b, qm, um = _state(branched, seed)
        out = model.outputs(base_estimator.BaseLinkState(R_b, p_b, v_b, w_b), qm, um)
        exp = ref.expected_outputs(branched, R_b, p_b, v_b, w_b, qm, um, True, JAC, columns)
        np.testing.assert_allclose(out.rL, exp.rL, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(out.tL, exp.tL, rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(out.com, exp.com, rtol=1e-10, atol=1e-10)
        for J, Je, p, pe in zip(out.jacobians, exp.jacobians, out.points, exp.points):
            assert J.shape == (6, 6 + branched.n_q)
            np.testing.assert_allclose(J, Je, rtol=1e-10, atol=1e-10)
            np.testing.assert_allclose(p, pe, rtol=1e-10, atol=1e-10)
        if columns == 'ros':  # the base columns act on the odometry twist itself
            t_tip = out.jacobians[0] @ np.concatenate([w_b, v_b, um])
            exp_tip = exp.jacobians[0][:, 6:] @ um + ref.expected_outputs(
                branched, R_b, p_b, v_b, w_b, qm, np.zeros_like(um), True, JAC[:1]
            ).jacobians[0][:, :6] @ np.concatenate([w_b, v_b])
            np.testing.assert_allclose(t_tip, exp_tip, atol=1e-10)


def test_model_com_point_frame_matches_link_frame(branched):
    base = {'base': 'floating', 'jacobian_links': ['a_fore']}
    T = np.asarray(branched.links[branched.link_index('a_fore') - 1].T, float)
    off_link = np.array([0.3, -0.1, 0.2])
    off_com = T[:3, :3].T @ (off_link - T[:3, 3])
    m1 = node_model.Model(branched, config.ModelConfig(**base, jacobian_offsets=list(off_link)))
    m2 = node_model.Model(
        branched,
        config.ModelConfig(**base, jacobian_offsets=list(off_com), jacobian_point_frame='com'),
    )
    np.testing.assert_allclose(m2.specs[0].offset_link, off_link, atol=1e-12)
    R_b, p_b, v_b, w_b, qm, um = _state(branched, 7)
    s = base_estimator.BaseLinkState(R_b, p_b, v_b, w_b)
    o1, o2 = m1.outputs(s, qm, um), m2.outputs(s, qm, um)
    np.testing.assert_allclose(o1.jacobians[0], o2.jacobians[0], atol=1e-12)
    np.testing.assert_allclose(o1.points[0], o2.points[0], atol=1e-12)


def test_model_outputs_fixed(kuka):
    model = node_model.Model(
        kuka, config.ModelConfig(base='fixed', jacobian_offsets=[0.0, 0.0, 0.1])
    )
    assert [s.link_name for s in model.specs] == ['lbr_iiwa_link_7']  # the leaf by default
    assert model.column_names == kuka.q_names
    R_b, p_b, v_b, w_b, qm, um = _state(kuka, 1)
    out = model.outputs(base_estimator.BaseLinkState(R_b, p_b, v_b * 0, w_b * 0), qm, um)
    exp = ref.expected_outputs(
        kuka, R_b, p_b, 0 * v_b, 0 * w_b, qm, um, False, [('lbr_iiwa_link_7', [0, 0, 0.1])]
    )
    np.testing.assert_allclose(out.tL, exp.tL, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(out.tL[:, 0], 0, atol=0)
    np.testing.assert_allclose(out.jacobians[0], exp.jacobians[0], rtol=1e-10, atol=1e-10)
    assert out.jacobians[0].shape == (6, kuka.n_q)
    np.testing.assert_allclose(out.points[0], exp.points[0], atol=1e-10)
    # the base twist is ignored for a fixed base
    out2 = model.outputs(base_estimator.BaseLinkState(R_b, p_b, v_b, w_b), qm, um)
    np.testing.assert_allclose(out2.tL, out.tL, atol=0)


def _loads(robot, seed):
    rng = np.random.default_rng(seed)
    return (
        rng.standard_normal(6),
        rng.standard_normal((6, robot.n_links_joints)),
        np.array([0.1, -0.3, -9.81]),
    )


@pytest.mark.parametrize('seed', [0, 1])
def test_model_dynamics_floating(branched, seed):
    model = node_model.Model(branched, config.ModelConfig(base='floating'))
    R_b, p_b, v_b, w_b, qm, um = _state(branched, seed)
    rng = np.random.default_rng(10 + seed)
    taum, umdot = rng.standard_normal(branched.n_q), rng.standard_normal(branched.n_q)
    torque_b, force_b, a_b, alpha_b = (rng.standard_normal(3) for _ in range(4))
    wF0, wFm, g = _loads(branched, seed)
    s = base_estimator.BaseLinkState(R_b, p_b, v_b, w_b)

    fd = model.forward_dynamics(s, qm, um, taum, torque_b, force_b, wF0, wFm, g)
    for a, e in zip(
        fd,
        ref.expected_fd(
            branched, R_b, p_b, v_b, w_b, qm, um, taum, torque_b, force_b, wF0, wFm, g
        ),
    ):
        np.testing.assert_allclose(a, e, rtol=1e-8, atol=1e-8)

    inv = model.inverse_dynamics(s, qm, um, umdot, a_b, alpha_b, wF0, wFm, g)
    e_taum, e_torque, e_force = ref.expected_id(
        branched, R_b, p_b, v_b, w_b, qm, um, umdot, a_b, alpha_b, wF0, wFm, g
    )
    for a, e in (
        (inv.taum, e_taum),
        (inv.torque_b, e_torque),
        (inv.force_b, e_force),
        (inv.a_b, a_b),
    ):
        np.testing.assert_allclose(a, e, rtol=1e-8, atol=1e-8)

    fid = model.inverse_dynamics(s, qm, um, umdot, None, None, wF0, wFm, g, floating_base=True)
    e_taum, e_a, e_alpha = ref.expected_floating_id(
        branched, R_b, p_b, v_b, w_b, qm, um, umdot, wF0, wFm, g
    )
    for a, e in ((fid.taum, e_taum), (fid.a_b, e_a), (fid.alpha_b, e_alpha)):
        np.testing.assert_allclose(a, e, rtol=1e-8, atol=1e-8)
    np.testing.assert_array_equal(fid.force_b, 0)
    # consistency: FD of the Floating_ID efforts gives back umdot and the base acceleration
    fd2 = model.forward_dynamics(s, qm, um, fid.taum, np.zeros(3), np.zeros(3), wF0, wFm, g)
    np.testing.assert_allclose(fd2.umdot, umdot, atol=1e-8)
    np.testing.assert_allclose(fd2.a_b, fid.a_b, atol=1e-8)


def test_model_dynamics_fixed(kuka):
    model = node_model.Model(
        kuka, config.ModelConfig(base='fixed', joint_dynamics=False)
    )  # the rigid reference
    R_b, p_b, _, _, qm, um = _state(kuka, 4)
    rng = np.random.default_rng(5)
    taum, umdot = rng.standard_normal(kuka.n_q), rng.standard_normal(kuka.n_q)
    wF0, wFm, g = _loads(kuka, 2)
    z = np.zeros(3)
    s = base_estimator.BaseLinkState(R_b, p_b, z, z)
    fd = model.forward_dynamics(s, qm, um, taum, z, z, wF0, wFm, g)
    e = ref.expected_fd(kuka, R_b, p_b, z, z, qm, um, taum, z, z, wF0, wFm, g, floating=False)
    np.testing.assert_allclose(fd.umdot, e[0], rtol=1e-8, atol=1e-8)
    np.testing.assert_array_equal(fd.a_b, 0)
    inv = model.inverse_dynamics(s, qm, um, umdot, z, z, wF0, wFm, g)
    e = ref.expected_id(kuka, R_b, p_b, z, z, qm, um, umdot, z, z, wF0, wFm, g, floating=False)
    for a, b in zip((inv.taum, inv.torque_b, inv.force_b), e):
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-8)
    with pytest.raises(InputError, match='fixed base'):
        model.inverse_dynamics(s, qm, um, umdot, z, z, wF0, wFm, g, floating_base=True)


def test_model_config_errors(branched):
    with pytest.raises(config.ConfigError, match='base must be one of'):
        config.ModelConfig(base='wobbly').check()
    with pytest.raises(config.ConfigError, match='jacobian_offsets'):
        config.ModelConfig(jacobian_offsets=[1.0, 2.0]).check()
    with pytest.raises(config.ConfigError, match='jacobian_base_columns'):
        config.ModelConfig(jacobian_base_columns='pinocchio').check()
    with pytest.raises(ModelError, match="jacobian_links: link 'hand'"):
        node_model.Model(branched, config.ModelConfig(jacobian_links=['hand']))
    with pytest.raises(config.ConfigError, match='3 per link'):
        node_model.Model(
            branched,
            config.ModelConfig(jacobian_links=['a_tip', 'b_ee'], jacobian_offsets=[0.0] * 3),
        )
    with pytest.raises(ModelError, match="IMU link 'a_tip' is not rigidly attached"):
        node_model.Model(branched, config.ModelConfig(base='floating', imu_link='a_tip'))
    assert node_model.leaf_links(branched) == ['a_tip', 'a_finger_right', 'b_ee']


def test_model_from_urdf_errors():
    with pytest.raises(ModelError, match='empty'):
        node_model.Model.from_urdf('  ', config.ModelConfig())
    with pytest.raises(ModelError, match=r"link 'l1' is defined twice"):
        node_model.Model.from_urdf(
            '<robot name="r"><link name="l1"/><link name="l1"/></robot>', config.ModelConfig()
        )
    m = node_model.Model.from_urdf(ARM7, config.ModelConfig(base='floating'))
    assert 'base floating' in m.summary() and '7 moving joints' in m.summary()


# ---------------------------------------------------------------------------------------
# service request helpers
# ---------------------------------------------------------------------------------------


def test_map_request_joints():
    q = ['a', 'b', 'c']
    out = requests.map_request_joints(
        q, ['c', 'a', 'b'], {'positions': [3, 1, 2], 'velocities': []}, required=('positions',)
    )
    np.testing.assert_array_equal(out['positions'], [1, 2, 3])
    np.testing.assert_array_equal(out['velocities'], [0, 0, 0])
    assert requests.map_request_joints(q, [], {'efforts': []})['efforts'].tolist() == [0, 0, 0]
    cases = [
        (['a', 'b', 'x'], [1, 2, 3], "unknown joint 'x'"),
        (['a', 'b'], [1, 2], r"lacks the moving joints \['c'\]"),
        (['a', 'b', 'b'], [1, 2, 3], "joint 'b' appears twice"),
        (['a', 'b', 'c'], [1, 2], 'positions has 2 values for 3 joint_names'),
        (['a', 'b', 'c'], [1, float('nan'), 2], "positions of joint 'b' is NaN"),
        ([], [], 'positions is empty'),
    ]
    for names, pos, match in cases:
        with pytest.raises(InputError, match=match):
            requests.map_request_joints(q, names, {'positions': pos}, required=('positions',))


def test_loads_from_request(branched):
    def lw(name, t, f):
        return SimpleNamespace(
            link_name=name, wrench=SimpleNamespace(torque=_vec(*t), force=_vec(*f))
        )

    wF0, wFm = requests.loads_from_request(
        branched,
        [
            lw('bus', (1, 2, 3), (4, 5, 6)),
            lw('b_ee', (1, 0, 0), (0, 0, 1)),
            lw('b_ee', (1, 0, 0), (0, 0, 1)),
        ],
    )
    np.testing.assert_array_equal(wF0, [1, 2, 3, 4, 5, 6])
    np.testing.assert_array_equal(wFm[:, branched.link_index('b_ee') - 1], [2, 0, 0, 0, 0, 2])
    assert np.count_nonzero(wFm) == 2
    with pytest.raises(InputError, match=r"link_wrenches\[0\]: unknown link 'hand'"):
        requests.loads_from_request(branched, [lw('hand', (0, 0, 0), (0, 0, 0))])
    with pytest.raises(InputError, match='force contains NaN'):
        requests.loads_from_request(branched, [lw('bus', (0, 0, 0), (0, float('inf'), 0))])


def test_pose_and_quaternion_conversions():
    q = ref.quat_xyzw(ref.rot([1, 2, 3], 0.9))
    pose = SimpleNamespace(
        position=_vec(1, 2, 3), orientation=SimpleNamespace(x=q[0], y=q[1], z=q[2], w=q[3])
    )
    R, p = conversions.pose_to_matrix('base_pose', pose)
    np.testing.assert_allclose(R, ref.rot([1, 2, 3], 0.9), atol=1e-12)
    assert p.tolist() == [1, 2, 3]
    with pytest.raises(InputError, match='base_pose.orientation'):
        conversions.pose_to_matrix(
            'base_pose',
            SimpleNamespace(
                position=_vec(0, 0, 0), orientation=SimpleNamespace(x=0, y=0, z=0, w=0)
            ),
        )
    with pytest.raises(InputError, match='base_pose.position contains NaN'):
        conversions.pose_to_matrix(
            'base_pose',
            SimpleNamespace(
                position=_vec(0, float('nan'), 0), orientation=SimpleNamespace(x=0, y=0, z=0, w=1)
            ),
        )
    assert conversions.stamp_seconds(SimpleNamespace(sec=3, nanosec=500_000_000)) == 3.5


def test_decimator_and_log_limiter():
    d = throttle.Decimator(every=3)
    assert [d(0.0) for _ in range(7)] == [False, False, True, False, False, True, False]
    r = throttle.Decimator(max_rate=10.0)
    assert [r(t) for t in (0.0, 0.05, 0.1, 0.12, 0.2)] == [True, False, True, False, True]
    with pytest.raises(config.ConfigError, match='decimation'):
        throttle.Decimator(every=0)
    with pytest.raises(config.ConfigError, match='max_rate'):
        throttle.Decimator(max_rate=-1)
    lim = throttle.LogLimiter(5.0)
    assert (
        lim.allow('k', 0.0)
        and not lim.allow('k', 4.0)
        and lim.allow('k', 5.5)
        and lim.allow('j', 5.5)
    )
    once = throttle.LogLimiter(None)
    assert once.allow('k', 0.0) and not once.allow('k', 1e9)


# ---------------------------------------------------------------------------------------
# messages
# ---------------------------------------------------------------------------------------


def test_output_messages(branched):
    from builtin_interfaces.msg import Time
    from rclpy.serialization import deserialize_message, serialize_message
    from spart_ros.nodes.messages import OutputMessages

    from spart_interfaces.msg import Jacobians, LinkTwists

    model = node_model.Model(
        branched,
        config.ModelConfig(
            base='floating',
            jacobian_links=['a_tip', 'bus'],
            jacobian_offsets=[0.1, 0.2, 0.3, 0, 0, 0],
        ),
    )
    R_b, p_b, v_b, w_b, qm, um = _state(branched, 2)
    out = model.outputs(base_estimator.BaseLinkState(R_b, p_b, v_b, w_b), qm, um)
    msgs = OutputMessages(model, 'odom')
    stamp = Time(sec=12, nanosec=34)
    jm = deserialize_message(
        serialize_message(msgs.fill_jacobians(stamp, out.jacobians, out.points)), Jacobians
    )
    assert jm.header.frame_id == 'odom' and jm.header.stamp == stamp
    j = jm.jacobians[0]
    assert (j.link_name, j.rows, j.cols) == ('a_tip', 6, 6 + branched.n_q)
    assert list(j.column_names) == model.column_names and list(j.row_names) == list(
        node_model.ROW_NAMES
    )
    assert (j.point.x, j.point.y, j.point.z) == (0.1, 0.2, 0.3)
    np.testing.assert_array_equal(np.asarray(j.data).reshape(6, j.cols), out.jacobians[0])
    np.testing.assert_array_equal([j.position.x, j.position.y, j.position.z], out.points[0])
    lt = deserialize_message(
        serialize_message(msgs.fill_link_twists(stamp, out.rL, out.tL)), LinkTwists
    )
    assert list(lt.link_names) == model.link_names
    k = 3
    assert [lt.twists[k].angular.x, lt.twists[k].linear.z, lt.com_positions[k].y] == [
        out.tL[0, k],
        out.tL[5, k],
        out.rL[1, k],
    ]
    com = msgs.fill_center_of_mass(stamp, out.com)
    assert com.total_mass == pytest.approx(float(branched.total_mass))
    assert [com.position.x, com.velocity.z] == [out.com[0], out.com[5]]
    assert math.isfinite(com.velocity.x)


# ---------------------------------------------------------------------------------------
# serialized (CDR) fast paths
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    'frame, names, vel',
    [
        ('', ['j1', 'joint_2', 'a_very_long_joint_name_3'], True),
        ('base_link', ['x'], False),
        ('odo', [], False),
        ('w', ['ü_joint', 'b', 'cc', 'ddd', 'eeee'], True),
    ],
)
def test_cdr_joint_state_parser_matches_rclpy(frame, names, vel):
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    from spart_ros.nodes.cdr import JointStateReader

    rng = np.random.default_rng(len(names))
    msg = JointState()
    msg.header.frame_id = frame
    msg.header.stamp.sec, msg.header.stamp.nanosec = 1700000000, 999999999
    msg.name = names
    msg.position = rng.standard_normal(len(names)).tolist()
    msg.velocity = rng.standard_normal(len(names)).tolist() if vel else []
    msg.effort = [1.0] * len(names)
    read = JointStateReader()
    for _ in range(2):  # the second time from the name cache
        sec, nanosec, got_names, pos, v = read(serialize_message(msg))
        assert (sec, nanosec, got_names) == (1700000000, 999999999, tuple(names))
        assert pos.tolist() == list(msg.position) and v.tolist() == list(msg.velocity)


def test_cdr_joint_state_parser_rejects_other_encodings():
    from spart_ros.nodes.cdr import CdrError, JointStateReader

    with pytest.raises(CdrError, match='encapsulation'):
        JointStateReader()(b'\x00\x00\x00\x00' + bytes(40))
    with pytest.raises(CdrError):
        JointStateReader()(
            b'\x00\x01\x00\x00' + bytes(8) + b'\x00\x00\x00\x00' + b'\x09\x00\x00\x00'
        )


@pytest.mark.parametrize('fixed', [False, True])
def test_serialized_outputs_equal_message_objects(branched, fixed):
    from builtin_interfaces.msg import Time
    from rclpy.serialization import deserialize_message, serialize_message
    from spart_ros.nodes.messages import OutputMessages, SerializedOutputs

    from spart_interfaces.msg import CenterOfMass, Jacobians, LinkTwists

    model = node_model.Model(
        branched,
        config.ModelConfig(
            base='fixed' if fixed else 'floating',
            jacobian_links=['a_tip', 'bus', 'b_ee'],
            jacobian_offsets=[0.1, 0.2, 0.3, 0, 0, 0, 0, 0, 1],
        ),
    )
    ser = SerializedOutputs(OutputMessages(model, 'odom'), serialize_message)
    ref_msgs = OutputMessages(model, 'odom')
    for seed in range(3):
        R_b, p_b, v_b, w_b, qm, um = _state(branched, seed)
        out = model.outputs(base_estimator.BaseLinkState(R_b, p_b, v_b, w_b), qm, um)
        sec, nsec = 1000 + seed, 123456789 * seed
        stamp = Time(sec=sec, nanosec=nsec)
        pairs = [
            (
                ser.link_twists_bytes(sec, nsec, out.rL, out.tL),
                ref_msgs.fill_link_twists(stamp, out.rL, out.tL),
                LinkTwists,
            ),
            (
                ser.jacobians_bytes(sec, nsec, out.jacobians, out.points),
                ref_msgs.fill_jacobians(stamp, out.jacobians, out.points),
                Jacobians,
            ),
            (
                ser.center_of_mass_bytes(sec, nsec, out.com),
                ref_msgs.fill_center_of_mass(stamp, out.com),
                CenterOfMass,
            ),
        ]
        for data, expected, cls in pairs:
            assert isinstance(data, bytes)
            assert deserialize_message(data, cls) == deserialize_message(
                serialize_message(expected), cls
            )


def test_base_twist_map_matches_base_state(branched):
    R_b, p_b, v_b, w_b, _, _ = _state(branched, 21)
    u0 = bs.base_from_link_frame(branched, R_b, p_b, v_b, w_b).u0
    np.testing.assert_allclose(
        node_model.base_twist_map(branched, R_b) @ np.concatenate([w_b, v_b]), u0, atol=1e-12
    )
    np.testing.assert_allclose(
        node_model.base_twist_map(branched, R_b), ref.base_column_map(branched, R_b), atol=1e-12
    )
