"""
Space-robot motion laws.

spart_ros.control: resolved_rate, resolved_rate_min_base_energy, reactionless, desired_reaction):
each law's objective checked on the commanded joint rates with the core's generalized Jacobian and
base reaction, the damped/bounded behaviour near singularities, the effort-path accelerations, and
closed loops on a kinematic free-floating plant (base moved by momentum conservation, integrated
with RK4.
"""

import os
from types import SimpleNamespace
import warnings
import xml.etree.ElementTree as ET

from core_helpers import assert_close, load_robot, random_rotation, random_state, urdf_path
import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from spart_ros import core, spart
from spart_ros.control import (
    DesiredReaction,
    FreeFloatingKinematics,
    Reactionless,
    ResolvedRate,
    ResolvedRateMinBaseEnergy,
)
from spart_ros.control.damped_least_squares import bound_joint_rates, damped_pseudo_inverse
from spart_ros.control.end_effector import EndEffector, rotation_vector
from spart_ros.control.space_modes import SpaceMode, SpaceReferences
from spart_ros.core.errors import InputError, ModelWarning
from spart_ros.core.fast import FastDynamics

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'examples')
Q_BENT = np.array([1.0, -1.4, 1.2, -1.0])
# no damping (smallest singular values of these states' J* are >= 0.02), no rate bound
EXACT = {'singular_region': 1e-4, 'max_joint_rates': np.inf}
#: the 7-DoF test arm (19.5 kg) on a 200 kg, ~24 kg m^2 spacecraft (its 5 kg base made heavier)
HEAVY_BASE_ARM7 = (
    open(urdf_path('arm7_floating'))
    .read()
    .replace(
        '<mass value="5"/>\n      <inertia ixx="0.0260417" ixy="0" ixz="0" iyy="0.0260417" '
        'iyz="0" izz="0.0333333"/>',
        '<mass value="200"/>\n      <inertia ixx="20" ixy="0" ixz="0" iyy="24" iyz="0" izz="28"/>',
    )
)


def planar():
    return spart.urdf2robot(os.path.join(EXAMPLES, 'planar_4link_spacecraft.urdf'))[0]


def twist_error(law, cmd, twist):
    """|J* qd + drift - twist| on the law's task rows, from a fresh FreeFloatingKinematics."""
    k = law.kinematics
    rows = list(law.rows)
    return float(np.linalg.norm((k.Jstar @ cmd.joint_velocities + k.drift - twist)[rows]))


def fresh(law, s):
    """Independent J*, G, drift at state s (not the law's buffers)."""
    return FreeFloatingKinematics(
        law.robot, law.end_effector.link, law.end_effector.offset
    ).update(s.R0, s.r0, s.qm, s.u0, s.um)


# --- the damped pseudo-inverse
# ------------------------------------------------------------------------
def test_damped_pseudo_inverse():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((3, 5))
    D = damped_pseudo_inverse(A)
    assert_close(D.inverse, np.linalg.pinv(A), 1e-12, 'undamped = Moore-Penrose')
    assert D.null_basis.shape == (5, 2) and np.abs(A @ D.null_basis).max() < 1e-12
    # a singular region that does not reach the smallest singular value: no damping
    assert damped_pseudo_inverse(A, 0.1, 1e-3).damping == 0.0
    # rank-deficient: damping at its maximum, |x| <= |b| / (2 lambda)
    S = np.outer([1.0, 2.0, 0.5], [1.0, 0, 0, 1.0, 0])
    D = damped_pseudo_inverse(S, 0.05, 0.1)
    assert D.damping == pytest.approx(0.05)
    b = rng.standard_normal(3)
    assert np.linalg.norm(D.inverse @ b) <= np.linalg.norm(b) / (2 * 0.05) + 1e-12
    assert_close(
        D.inverse, S.T @ np.linalg.inv(S @ S.T + 0.05**2 * np.eye(3)), 1e-12, "J'(JJ'+l^2)^-1"
    )
    qd, scale = bound_joint_rates(np.array([0.5, -2.0, 1.0]), np.array([1.0, 1.0, np.inf]))
    assert scale == 0.5
    assert_close(qd, [0.25, -1.0, 0.5], 1e-15, 'scaled rates')


def test_relative_damping_of_a_zero_matrix():
    """
    relative=True on a zero matrix: a zero inverse, no damping, no NaN and no RuntimeWarning.

    The zero matrix: s_max = 0, with singular_region = inf (Tikhonov, as the min-base-energy law
    uses it); no RuntimeWarning from inf * 0.  A relative Tikhonov damping of a non-zero matrix
    still scales with s_max.
    """
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        for A in (np.zeros((3, 4)), np.zeros((2, 2))):
            D = damped_pseudo_inverse(A, 0.03, np.inf, relative=True)
            assert (
                np.array_equal(D.inverse, np.zeros(A.T.shape)) and D.damping == 0.0 and D.rank == 0
            )
            assert np.array_equal(D.null_basis, np.eye(A.shape[1]))
        A = np.diag([2.0, 1.0])
        D = damped_pseudo_inverse(A, 0.5, np.inf, relative=True)
    assert D.damping == pytest.approx(0.5 * 2.0)
    assert_close(
        D.inverse,
        np.diag([2.0 / (4.0 + 1.0), 1.0 / (1.0 + 1.0)]),
        1e-15,
        's / (s^2 + (0.5 s_max)^2)',
    )


# --- resolved rate
# ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    'name,link,rows',
    [
        ('arm7_floating', 'arm_tool', None),
        ('branched_two_arm_spacecraft', 'a_tip', (3, 4, 5)),
        ('SC_3DoF', 'Link_EE', (3, 4, 5)),
    ],
)
def test_resolved_rate_gives_the_twist(name, link, rows):
    """
    Away from singularities the commanded rates give exactly the twist on the task rows.

    With the base reacting and with a non-zero momentum (drift); J* and drift recomputed
    independently.
    """
    robot = load_robot(name)
    rng = np.random.default_rng(2)
    law = ResolvedRate(robot, link, offset=[0.05, 0.0, 0.1], rows=rows, **EXACT)
    for seed in range(3):
        s = random_state(robot, seed, scale=0.1)
        twist = rng.standard_normal(6) * 0.2
        cmd = law.update(s.R0, s.r0, s.qm, s.u0, s.um, twist=twist)
        k = fresh(law, s)
        rows_ = list(law.rows)
        assert_close(
            (k.Jstar @ cmd.joint_velocities + k.drift)[rows_], twist[rows_], 1e-9, 'twist'
        )
        st = cmd.status
        assert st.feasible and st.message == '' and st.rate_scale == 1.0 and st.task_error < 1e-9
        assert st.null_space_dim == robot.n_q - len(rows_)
        assert_close(
            st.predicted_base_velocity,
            k.free_base_velocity + k.reaction @ cmd.joint_velocities,
            1e-12,
            'predicted u0',
        )
        assert_close(st.momentum, k.momentum('origin'), 1e-12, 'momentum')
        assert_close(st.momentum_about_com, k.momentum('com'), 1e-12, 'momentum about the CoM')
        assert_close(st.base_angular_velocity, s.u0[0:3], 0, 'base angular velocity')
        assert st.manipulability == pytest.approx(
            core.manipulability(k.Jstar, law.rows), rel=1e-10
        )
        assert st.fixed_base_manipulability == pytest.approx(
            core.manipulability(k.Jm, law.rows), rel=1e-10
        )
        assert st.dynamic_singularity == pytest.approx(
            core.dynamic_singularity_measure(k.Jstar, law.rows), rel=1e-10
        )
        assert np.isnan(st.base_error)


def test_resolved_rate_near_a_singularity_is_damped_and_reports_it():
    """
    Stretched planar arm asked to move along its own line (unreachable).

    Rates stay below |b| / (2 damping), the status says infeasible, with the damping used.
    """
    robot = planar()
    law = ResolvedRate(
        robot,
        'end_effector',
        rows=(3, 4),
        damping=0.05,
        singular_region=0.1,
        max_joint_rates=np.inf,
    )
    twist = np.array([0, 0, 0, 0.1, 0.05, 0])
    z = np.zeros
    cmd = law.update(np.eye(3), z(3), z(4), z(6), z(4), twist=twist)
    assert np.linalg.norm(cmd.joint_velocities) <= np.linalg.norm(twist) / (2 * 0.05) + 1e-12
    st = cmd.status
    assert not st.feasible and 'approximately' in st.message
    assert st.damping == pytest.approx(0.05) and st.manipulability < 1e-12
    # close to the singularity the undamped pseudo-inverse would ask for far larger rates
    q = np.array([0.0, 1e-3, -1e-3, 0.0])
    cmd = law.update(np.eye(3), z(3), q, z(6), z(4), twist=twist)
    k = law.kinematics
    undamped = np.linalg.pinv(k.Jstar[[3, 4]]) @ twist[[3, 4]]
    assert np.linalg.norm(undamped) > 50 * np.linalg.norm(cmd.joint_velocities)
    assert np.linalg.norm(cmd.joint_velocities) <= np.linalg.norm(twist) / (2 * 0.05) * 1.01


def test_joint_rate_bound_scales_the_whole_command():
    robot = planar()
    z = np.zeros
    twist = np.array([0, 0, 0, 0.5, -0.4, 0])
    free = ResolvedRate(robot, 'end_effector', rows=(3, 4), **EXACT)
    bounded = ResolvedRate(
        robot, 'end_effector', rows=(3, 4), max_joint_rates=[0.05, 0.1, 0.1, 0.1]
    )
    a = free.update(np.eye(3), z(3), Q_BENT, z(6), z(4), twist=twist).joint_velocities
    cmd = bounded.update(np.eye(3), z(3), Q_BENT, z(6), z(4), twist=twist)
    b = cmd.joint_velocities
    assert np.all(np.abs(b) <= np.array([0.05, 0.1, 0.1, 0.1]) + 1e-15)
    assert cmd.status.rate_scale < 1 and np.allclose(b, cmd.status.rate_scale * a, atol=1e-15)
    # the default bound is the URDF's <limit velocity> (1 rad/s)
    assert_close(
        ResolvedRate(robot, 'end_effector').max_joint_rates, np.ones(4), 0, 'URDF velocity limits'
    )


def test_rate_bound_makes_the_status_infeasible_and_names_the_joint():
    """
    A command the rate bound scales is not the commanded twist.

    Feasible False, the message names the binding joint and the factor, rate_scale < 1; unbounded,
    the same twist is feasible.
    """
    robot = planar()
    z = np.zeros
    twist = np.array([0, 0, 0, 0.5, -0.4, 0])
    bounded = ResolvedRate(
        robot,
        'end_effector',
        rows=(3, 4),
        singular_region=1e-4,
        max_joint_rates=[0.05, 10, 10, 10],
    )
    st = bounded.update(np.eye(3), z(3), Q_BENT, z(6), z(4), twist=twist).status
    assert st.rate_scale < 1 and st.task_error < 1e-9  # the law's own solution was exact
    assert (
        not st.feasible
        and "joint 'joint_1' at 0.05" in st.message
        and f'{st.rate_scale:.3g}' in st.message
    )
    st = (
        ResolvedRate(robot, 'end_effector', rows=(3, 4), **EXACT)
        .update(np.eye(3), z(3), Q_BENT, z(6), z(4), twist=twist)
        .status
    )
    assert st.feasible and st.rate_scale == 1.0 and st.message == ''


def test_zero_urdf_velocity_limit_means_none_and_an_explicit_zero_is_refused():
    """
    URDF <limit velocity="0"> (exporters' "unknown"; MoveIt reads it as unbounded).

    No bound, a ModelWarning naming the joints, and the arm moves (a 0 bound would scale every
    command to 0).  max_joint_rates = 0 given explicitly is refused, naming the parameter.
    """
    text = open(os.path.join(EXAMPLES, 'planar_4link_spacecraft.urdf')).read()
    text = text.replace('velocity="1.0"', 'velocity="0"', 2)  # joint_1 and joint_2
    robot = spart.urdf2robot(text)[0]
    with pytest.warns(ModelWarning, match=r"\['joint_1', 'joint_2'\].*no velocity limit"):
        law = ResolvedRate(robot, 'end_effector', rows=(3, 4), singular_region=1e-4)
    np.testing.assert_array_equal(law.max_joint_rates, [np.inf, np.inf, 1.0, 1.0])
    z = np.zeros
    cmd = law.update(np.eye(3), z(3), Q_BENT, z(6), z(4), twist=[0, 0, 0, 0.05, 0.02, 0])
    assert np.abs(cmd.joint_velocities).max() > 1e-3 and cmd.status.feasible
    for bad in (0.0, [1.0, 0.0, 1.0, 1.0]):
        with pytest.raises(InputError, match='max_joint_rates: expected a number > 0'):
            ResolvedRate(robot, 'end_effector', max_joint_rates=bad)


def test_status_joint_limit_distance_values():
    """
    The distance of each joint to its NEARER position limit.

    Against the limits read from the URDF text here: near the upper and the lower limit, beyond one
    (negative), a continuous joint (inf), a prismatic joint (m); and the minimum.
    """
    robot = load_robot('branched_two_arm_spacecraft')
    limits = {}
    for j in ET.parse(urdf_path('branched_two_arm_spacecraft')).getroot().iter('joint'):
        lim = j.find('limit')
        continuous = j.get('type') == 'continuous'
        if lim is not None:
            limits[j.get('name')] = (
                (-np.inf, np.inf)
                if continuous
                else (float(lim.get('lower')), float(lim.get('upper')))
            )
    q = {
        'a_shoulder': 2.8,
        'a_elbow': 10.0,
        'a_slide': -0.15,
        'a_wrist_joint': -3.0,
        'a_finger_left_joint': 0.0,
        'a_finger_right_joint': 0.04,
        'b_shoulder': -1.0,
        'b_elbow': 1.5,
    }
    qm = np.array([q[n] for n in robot.q_names])
    expected = np.array([min(q[n] - limits[n][0], limits[n][1] - q[n]) for n in robot.q_names])
    np.testing.assert_allclose(
        expected, [0.1, np.inf, 0.05, -0.1, 2.9, 0.01, 1.9, 1.4], rtol=0, atol=1e-12
    )
    z = np.zeros
    st = (
        ResolvedRate(robot, 'b_ee')
        .update(np.eye(3), z(3), qm, z(6), z(8), twist=[0, 0, 0, 0.01, 0, 0])
        .status
    )
    np.testing.assert_allclose(st.joint_limit_distance, expected, rtol=0, atol=1e-12)  # inf == inf
    assert st.min_joint_limit_distance == pytest.approx(-0.1, abs=1e-12)


# --- minimum base kinetic energy
# ----------------------------------------------------------------------
@pytest.mark.parametrize(
    'name,link,rows',
    [
        ('arm7_floating', 'arm_tool', (3, 4, 5)),
        ('planar_4link_spacecraft', 'end_effector', (3, 4)),
    ],
)
def test_min_base_energy_keeps_the_task_and_minimizes_the_base_energy(name, link, rows):
    robot = planar() if name.startswith('planar') else load_robot(name)
    rng = np.random.default_rng(5)
    kwargs = dict(rows=rows, **EXACT)
    rr, me = ResolvedRate(robot, link, **kwargs), ResolvedRateMinBaseEnergy(robot, link, **kwargs)
    b0 = robot.base_link
    W_base = np.linalg.cholesky(
        np.block(
            [
                [np.asarray(b0.inertia, dtype=float), np.zeros((3, 3))],
                [np.zeros((3, 3)), b0.mass * np.eye(3)],
            ]
        )
    ).T
    for seed in range(3):
        s = random_state(robot, seed, scale=0.1)
        if name.startswith('planar'):
            s.qm = Q_BENT + 0.2 * rng.standard_normal(4)
        twist = rng.standard_normal(6) * 0.2
        a = rr.update(s.R0, s.r0, s.qm, s.u0, s.um, twist=twist)
        b = me.update(s.R0, s.r0, s.qm, s.u0, s.um, twist=twist)
        k = fresh(me, s)
        assert twist_error(me, b, twist) < 1e-9 and b.status.feasible

        def energy(qd):
            return me.base_kinetic_energy(k.free_base_velocity + k.reaction @ qd)

        assert energy(b.joint_velocities) < energy(a.joint_velocities)
        # optimal for its objective 2 T0 + lambda^2 |y|^2, y the null-space part of the command
        # (a is J*# b, orthogonal to the kernel), lambda = energy_damping * s_max(W G N), with
        # W' W = blkdiag(I_base, m_base I3): no null-space step lowers it (independent kernel of
        # J*)
        N = np.linalg.svd(k.Jstar[list(rows)])[2][len(rows) :].T
        lam = me.energy_damping * np.linalg.svd(W_base @ k.reaction @ N, compute_uv=False)[0]
        y = N.T @ (b.joint_velocities - a.joint_velocities)
        assert_close(
            a.joint_velocities + N @ y, b.joint_velocities, 1e-12, 'b = a + a null-space motion'
        )
        objective = lambda y: 2 * energy(a.joint_velocities + N @ y) + lam**2 * y @ y  # noqa: E731
        for _ in range(5):
            step = rng.standard_normal(N.shape[1]) * 1e-3
            assert objective(y + step) >= objective(y) - 1e-15
    # base kinetic energy is the base's own: 1/2 (w' I0 w + m0 |v|^2), w in the base frame
    u0 = np.array([0.1, -0.2, 0.3, 1.0, 2.0, -1.0])
    I0, m0 = np.asarray(robot.base_link.inertia), robot.base_link.mass
    assert me.base_kinetic_energy(u0) == pytest.approx(
        0.5 * (u0[:3] @ I0 @ u0[:3] + m0 * u0[3:] @ u0[3:]), rel=1e-12
    )


def test_min_base_energy_is_regularized_on_a_heavy_base():
    """
    A 20 kg arm on a 200 kg base.

    End-effector position task (4-dimensional kernel, one direction, the wrist roll, barely coupled
    to the base): the unregularized minimum asks for ~280 rad/s there and the rate bound would slow
    the task down 160-fold; the regularized law stays within the URDF bounds (feasible) and still
    cuts the base energy of resolved rate 5-fold.
    """
    robot = spart.urdf2robot(HEAVY_BASE_ARM7)[0]
    assert robot.base_link.mass == 200.0
    q = np.array([0.3, 0.6, -0.2, -1.2, 0.4, 0.8, 0.1])
    z = np.zeros
    twist = np.array([0, 0, 0, 0.0, 0.04, -0.02])
    kwargs = {'frame': 'link', 'rows': (3, 4, 5)}
    rr = ResolvedRate(robot, 'arm_tool', **kwargs).update(
        np.eye(3), z(3), q, z(6), z(7), twist=twist
    )
    law = ResolvedRateMinBaseEnergy(robot, 'arm_tool', **kwargs)
    me = law.update(np.eye(3), z(3), q, z(6), z(7), twist=twist)
    assert me.status.feasible and me.status.rate_scale == 1.0, me.status.message
    assert np.abs(me.joint_velocities).max() < 1.0
    energy = lambda qd: law.base_kinetic_energy(law.kinematics.reaction @ qd)  # noqa: E731
    assert energy(me.joint_velocities) < energy(rr.joint_velocities) / 5
    unregularized = ResolvedRateMinBaseEnergy(
        robot, 'arm_tool', energy_damping=0.0, max_joint_rates=np.inf, **kwargs
    )
    assert (
        np.abs(
            unregularized.update(np.eye(3), z(3), q, z(6), z(7), twist=twist).joint_velocities
        ).max()
        > 100
    )


# --- reactionless
# ----------------------------------------------------------------------------------------
def test_reactionless_keeps_the_base_attitude_and_tracks_when_redundant():
    robot = load_robot('arm7_floating')
    rng = np.random.default_rng(7)
    law = Reactionless(robot, 'arm_tool', rows=(3, 4, 5), **EXACT)
    for seed in range(3):
        s = random_state(robot, seed, scale=0.1)
        twist = rng.standard_normal(6) * 0.2
        cmd = law.update(s.R0, s.r0, s.qm, s.u0, s.um, twist=twist)
        k = fresh(law, s)
        w = (k.free_base_velocity + k.reaction @ cmd.joint_velocities)[0:3]
        assert_close(w, k.free_base_velocity[0:3], 1e-13, 'the arm adds no base rotation')
        assert twist_error(law, cmd, twist) < 1e-9
        st = cmd.status
        assert (
            st.feasible
            and st.null_space_dim == 4
            and st.arm_base_rate < 1e-13
            and st.base_error < 1e-13
        )


def test_reactionless_reports_when_the_arm_lacks_the_redundancy():
    """
    SC_3DoF (3 joints, attitude null space of dimension 1) asked for a 3-D velocity.

    The base stays still, the task is tracked only in part and the status says why. The full
    reaction null space of a 3-joint arm is empty: zero command, reported.
    """
    robot = load_robot('SC_3DoF')
    s = random_state(robot, 1)
    twist = np.array([0, 0, 0, 0.1, -0.05, 0.02])
    z = np.zeros
    law = Reactionless(robot, 'Link_EE', rows=(3, 4, 5))
    cmd = law.update(s.R0, s.r0, s.qm, z(6), z(3), twist=twist)
    st = cmd.status
    assert (
        not st.feasible
        and 'reaction null space (attitude) has 1 dimension(s) for 3 task rows' in st.message
    )
    assert st.arm_base_rate < 1e-13 and np.abs(st.predicted_base_velocity[0:3]).max() < 1e-13
    assert np.abs(cmd.joint_velocities).max() > 1e-4  # it still does what it can
    full = Reactionless(robot, 'Link_EE', rows=(3, 4, 5), attitude_only=False)
    cmd = full.update(s.R0, s.r0, s.qm, z(6), z(3), twist=twist)
    assert not cmd.status.feasible and 'no reaction null space' in cmd.status.message
    assert not cmd.joint_velocities.any()


def test_full_reactionless_leaves_the_whole_base_still():
    robot = load_robot('branched_two_arm_spacecraft')  # 8 joints: full null space of dimension 2
    s = random_state(robot, 4)
    z = np.zeros
    law = Reactionless(robot, 'b_ee', rows=(3, 4), attitude_only=False, **EXACT)
    cmd = law.update(s.R0, s.r0, s.qm, z(6), z(robot.n_q), twist=[0, 0, 0, 0.1, 0.1, 0])
    assert np.abs(cmd.status.predicted_base_velocity).max() < 1e-13
    assert cmd.status.null_space_dim == 2 and cmd.status.feasible


# --- desired reaction
# --------------------------------------------------------------------------------
def test_desired_reaction_meets_both_tasks_with_redundancy():
    """
    Planar arm: end-effector (vx, vy) and base yaw rate; the command gives both.

    The base rate command is the feed-forward plus attitude_gain * the attitude error (base frame).
    """
    robot = planar()
    law = DesiredReaction(
        robot, 'end_effector', rows=(3, 4), base_rows=(2,), attitude_gain=2.0, **EXACT
    )
    R0 = Rotation.from_rotvec([0, 0, 0.1]).as_matrix()
    R_ref = Rotation.from_rotvec([0, 0, 0.13]).as_matrix()
    twist = np.array([0, 0, 0, 0.05, -0.1, 0])
    z = np.zeros
    cmd = law.update(
        R0,
        z(3),
        Q_BENT,
        z(6),
        z(4),
        twist=twist,
        base_rotation=R_ref,
        base_angular_velocity=[0, 0, 0.01],
    )
    w_cmd = 0.01 + 2.0 * 0.03
    assert cmd.status.predicted_base_velocity[2] == pytest.approx(w_cmd, rel=1e-9)
    assert twist_error(law, cmd, twist) < 1e-10
    assert cmd.status.feasible and cmd.status.base_error < 1e-12


def test_desired_reaction_base_task_on_a_heavy_base():
    """
    20 kg arm, 200 kg base.

    The base turns 0.002-0.03 rad per joint rad within the end-effector position task's null space
    (singular values of G_w N), below the end effector's singular_region; the base task, damped
    relative to its own scale, is still met exactly (a turn about the axis the arm turns the base
    about most easily, within the rate bounds): base rate = attitude_gain * the attitude error, end
    effector held.
    """
    robot = spart.urdf2robot(HEAVY_BASE_ARM7)[0]
    q = np.array([0.3, 0.6, -0.2, -1.2, 0.4, 0.8, 0.1])
    z = np.zeros
    law = DesiredReaction(robot, 'arm_tool', frame='link', rows=(3, 4, 5), attitude_gain=2.0)
    k = law.kinematics.update(np.eye(3), z(3), q)
    N = np.linalg.svd(k.Jstar[3:6])[2][3:].T
    U, s, _ = np.linalg.svd(k.reaction[0:3] @ N)
    assert s.max() < 0.05 and s.min() < law.singular_region, s  # the case is what it says
    R_ref = Rotation.from_rotvec(np.radians(0.5) * U[:, 0]).as_matrix()
    cmd = law.update(np.eye(3), z(3), q, z(6), z(7), twist=z(6), base_rotation=R_ref)
    assert_close(
        cmd.status.predicted_base_velocity[0:3], 2.0 * np.radians(0.5) * U[:, 0], 1e-9, 'base rate'
    )
    assert twist_error(law, cmd, z(6)) < 1e-12
    st = cmd.status
    assert st.feasible and st.base_error < 1e-12 and st.rate_scale == 1.0, st.message


@pytest.mark.parametrize('priority', ['end_effector', 'base'])
def test_desired_reaction_priority_without_redundancy(priority):
    """
    arm7: 6 task rows + 3 base rows > 7 joints.

    The first task is met exactly, the second in the least-squares sense, and the status reports
    it.
    """
    robot = load_robot('arm7_floating')
    s = random_state(robot, 3)
    z = np.zeros
    law = DesiredReaction(robot, 'arm_tool', priority=priority, **EXACT)
    twist = np.array([0.05, 0, -0.05, 0.1, 0.0, 0.1])
    cmd = law.update(
        s.R0, s.r0, s.qm, z(6), z(7), twist=twist, base_angular_velocity=[0.01, 0.02, -0.01]
    )
    st = cmd.status
    assert not st.feasible
    if priority == 'end_effector':
        assert st.task_error < 1e-10 and st.base_error > 1e-4
        assert 'base attitude reference not met' in st.message
    else:
        assert st.base_error < 1e-10 and st.task_error > 1e-4 and not st.feasible
        assert_close(st.predicted_base_velocity[0:3], [0.01, 0.02, -0.01], 1e-9, 'base rate')


# --- effort path, pose targets, end effector
# ------------------------------------------------------------
def test_joint_accelerations_for_the_effort_path():
    robot = planar()
    law = ResolvedRate(robot, 'end_effector', rows=(3, 4), velocity_gain=20.0, **EXACT)
    z = np.zeros
    um = np.array([0.01, 0.02, -0.01, 0.0])
    a = law.update(np.eye(3), z(3), Q_BENT, z(6), um, twist=[0, 0, 0, 0.1, 0, 0], t=1.0)
    assert_close(
        a.joint_accelerations,
        20.0 * (a.joint_velocities - um),
        1e-14,
        'first call: no feed-forward',
    )
    b = law.update(np.eye(3), z(3), Q_BENT, z(6), um, twist=[0, 0, 0, 0.1, 0.02, 0], t=1.01)
    expected = 20.0 * (b.joint_velocities - um) + (b.joint_velocities - a.joint_velocities) / 0.01
    assert_close(b.joint_accelerations, expected, 1e-12, 'Kv (qd_ref - qd) + d/dt qd_ref')
    law.reset()
    c = law.update(np.eye(3), z(3), Q_BENT, z(6), um, twist=[0, 0, 0, 0.1, 0.02, 0], t=1.02)
    assert_close(c.joint_accelerations, 20.0 * (c.joint_velocities - um), 1e-14, 'after reset')


@pytest.mark.parametrize('frame', ['com', 'link'])
def test_end_effector_pose_and_pose_law(frame):
    """
    EndEffector.pose against Kinematics, and the task twist of a pose target.

    Kinematics: URDF link frame = CoM frame rotated back by the inertial rpy.  The task twist of a
    pose target = feed-forward + gain * [rotation vector; position].
    """
    robot = load_robot('arm7_floating')
    s = random_state(robot, 0)
    link = robot.link_index('arm_link_7')
    offset = np.array([0.02, -0.03, 0.1])
    ee = EndEffector(robot, link, offset, frame)
    R, p = ee.pose(s.R0, s.r0, s.qm)
    RJ, RL, rJ, rL, e, g = spart.Kinematics(s.R0, s.r0, s.qm, robot)
    T = np.asarray(robot.links[link - 1].T, dtype=float)  # CoM frame in the link frame
    if frame == 'com':
        R_ref, p_ref = RL[:, :, link - 1], rL[:, link - 1] + RL[:, :, link - 1] @ offset
    else:
        R_link = RL[:, :, link - 1] @ T[:3, :3].T
        R_ref, p_ref = R_link, rL[:, link - 1] - R_link @ T[:3, 3] + R_link @ offset
    assert_close(R, R_ref, 1e-12, 'rotation')
    assert_close(p, p_ref, 1e-12, 'point')
    law = ResolvedRate(robot, link, offset, frame, pose_gain=[1, 2, 3, 4, 5, 6])
    target_R = Rotation.from_rotvec([0.1, -0.2, 0.05]).as_matrix() @ R
    target_p = p + [0.01, 0.02, -0.03]
    x = law.task_twist(s.R0, s.r0, s.qm, twist=np.ones(6), position=target_p, rotation=target_R)
    assert_close(
        x,
        np.ones(6) + np.array([1, 2, 3, 4, 5, 6]) * np.r_[[0.1, -0.2, 0.05], [0.01, 0.02, -0.03]],
        1e-12,
        'pose law',
    )


@pytest.mark.parametrize('name', ['arm7_floating', 'branched_two_arm_spacecraft'])
def test_fast_link_pose_and_pose_law_match_kinematics(name):
    """
    The link pose of FreeFloatingKinematics and a law's pose target on it match Kinematics.

    The link pose (read off the compiled Jacobian's forward kinematics) equals spart.Kinematics for
    the base and every link; a law's pose target computed on it (the control loop's path) equals
    the one from Kinematics (EndEffector.pose), state after state.
    """
    robot = load_robot(name)
    for seed in range(3):
        s = random_state(robot, seed)
        RJ, RL, rJ, rL, e, g = spart.Kinematics(s.R0, s.r0, s.qm, robot)
        for link in range(robot.n_links_joints + 1):
            ff = FreeFloatingKinematics(robot, link).update(s.R0, s.r0, s.qm)
            R, r = (s.R0, s.r0) if link == 0 else (RL[:, :, link - 1], rL[:, link - 1])
            assert_close(ff.link_rotation, R, 1e-12, f'link {link} rotation')
            assert_close(ff.link_position, r, 1e-12, f'link {link} CoM')
    link = robot.n_links_joints
    law = ResolvedRate(robot, link, [0.03, -0.02, 0.1], 'link', pose_gain=[1, 2, 3, 4, 5, 6])
    target_R, target_p = (
        Rotation.from_rotvec([0.3, -0.1, 0.2]).as_matrix(),
        np.array([0.5, -0.2, 0.4]),
    )
    for seed in range(3):
        s = random_state(robot, seed)
        cmd = law.update(
            s.R0, s.r0, s.qm, s.u0, s.um, twist=np.ones(6), position=target_p, rotation=target_R
        )
        slow = law.task_twist(
            s.R0, s.r0, s.qm, np.ones(6), target_p, target_R
        )  # through Kinematics
        assert_close(cmd.task_twist, slow, 1e-12, 'pose law on the fast link pose')
        assert np.abs(slow - 1).max() > 0.1, 'the pose term must matter'


def test_space_mode_and_its_law_compute_in_their_own_workspaces():
    """
    ``SpaceMode`` runs its law, then floating-base inverse dynamics on the mode's FastDynamics.

    The law computes in a workspace of its own on the same compiled model (nothing shared but the
    constant model), so the mode's calls, even at another state, leave the law's kinematics (the
    link pose it read its end effector from) as the law computed them.
    """
    robot = load_robot('branched_two_arm_spacecraft')
    fd = FastDynamics(robot)
    mode = SpaceMode('resolved_rate', fd, 'effort', link='b_ee', frame='link')
    law_fd = mode.law.kinematics.dynamics
    assert law_fd is not fd and law_fd.model is fd.model
    s1, s2 = random_state(robot, 1, scale=0.1), random_state(robot, 2, scale=0.1)
    mode.law.kinematics.update(s1.R0, s1.r0, s1.qm, s1.u0, s1.um)
    link = mode.law.kinematics.link
    pose = [np.array(x, copy=True) for x in law_fd.link_pose(link)]
    fd.floating_inverse_dynamics(s2.R0, s2.r0, s2.qm, s2.u0, s2.um, s2.umdot)
    assert all(np.array_equal(x, y) for x, y in zip(law_fd.link_pose(link), pose))
    assert not np.array_equal(fd.link_pose(link)[0], pose[0])


def test_space_mode_reference_frames_and_base_link_angular_velocity():
    """
    Reference frames of SpaceMode, and the frame of the base angular velocity it measures.

    SpaceMode: a twist given in base link axes and a pose target fixed to the base give the same
    command as the same references in the world; another frame is refused by name.  The measured
    base angular velocity comes out in the base LINK frame (the input w_b), the law's status in the
    base CoM frame (rotated here: the bus has an inertial rpy).
    """
    robot = load_robot('branched_two_arm_spacecraft')
    mode = SpaceMode(
        'resolved_rate',
        FastDynamics(robot),
        'velocity',
        link='b_ee',
        frame='link',
        singular_region=1e-4,
        max_joint_rates=np.inf,
    )
    rng = np.random.default_rng(3)
    s = random_state(robot, 2, scale=0.1)
    base = SimpleNamespace(
        R_b=random_rotation(rng),
        p_b=rng.standard_normal(3),
        v_b=rng.standard_normal(3) * 0.01,
        w_b=rng.standard_normal(3) * 0.01,
    )
    R_b, p_b = base.R_b, base.p_b
    twist = rng.standard_normal(6) * 0.05
    R_t, p_t = mode.end_effector_pose(base, s.qm)
    R_t, p_t = (
        Rotation.from_rotvec([0.05, 0.0, -0.04]).as_matrix() @ R_t,
        p_t + [0.02, -0.01, 0.03],
    )

    def run(refs):
        mode.reset()
        return mode.compute(base, s.qm, s.um, refs, 0.0)

    world = run(SpaceReferences(twist, p_t, R_t, None))
    in_base = run(
        SpaceReferences(
            np.r_[R_b.T @ twist[0:3], R_b.T @ twist[3:6]],
            R_b.T @ (p_t - p_b),
            R_b.T @ R_t,
            None,
            'base',
            'base',
        )
    )
    assert_close(in_base.command.task_twist, world.command.task_twist, 1e-12, 'task twist')
    assert_close(in_base.values, world.values, 1e-10, 'joint rates')
    assert np.abs(world.command.task_twist - twist).max() > 1e-3, 'the pose term must matter'
    with pytest.raises(InputError, match="twist_frame: expected one of .*got 'tool0'"):
        run(SpaceReferences(twist, None, None, None, 'tool0'))
    # angular velocity: as given (base link frame), and = R_bc times the law's (base CoM frame)
    R_bc = np.asarray(robot.base_link.T)[:3, :3]
    assert_close(world.base_angular_velocity, base.w_b, 0, 'base link frame')
    assert_close(
        R_bc @ world.command.status.base_angular_velocity,
        base.w_b,
        1e-15,
        'CoM frame -> link frame',
    )
    assert np.abs(world.command.status.base_angular_velocity - base.w_b).max() > 1e-4, (
        'the frames must differ'
    )


def test_rotation_vector_matches_scipy():
    rng = np.random.default_rng(0)
    vectors = [rng.standard_normal(3) for _ in range(20)]
    vectors += [
        np.array([1e-9, 0, 0]),
        np.zeros(3),
        np.array([0, np.pi - 1e-7, 0]),
        np.array([np.pi, 0, 0]),
        np.array([1, 1, 1]) / np.sqrt(3) * np.pi,
    ]
    for v in vectors:
        angle = np.linalg.norm(v)
        if angle > np.pi:
            v = v / angle * (angle - 2 * np.pi * np.floor((angle + np.pi) / (2 * np.pi)))
        got = rotation_vector(Rotation.from_rotvec(v).as_matrix())
        # at exactly pi the axis sign is arbitrary
        assert np.allclose(got, v, atol=1e-8) or (
            abs(np.linalg.norm(v) - np.pi) < 1e-6 and np.allclose(got, -v, atol=1e-6)
        )


# --- closed loops on a kinematic free-floating plant
# ------------------------------------------------------
def _kinematic_loop(law, robot, duration, dt, reference):
    """
    RK4 of (R0, r0, q) with q' = the law's command and u0 = the base reaction (momentum 0).

    An ideal joint-velocity servo on a free-floating robot.
    """

    def rhs(x, t):
        R0, r0, q = x
        twist, position = reference(t)
        cmd = law.update(
            R0, r0, q, np.zeros(6), np.zeros(robot.n_q), twist=twist, position=position
        )
        u0 = law.kinematics.base_reaction(cmd.joint_velocities)
        return [R0 @ core.skew_symmetric(u0[0:3]), u0[3:6], cmd.joint_velocities]

    x = [np.eye(3), np.zeros(3), Q_BENT.copy()]
    t = 0.0
    for _ in range(int(round(duration / dt))):
        k1 = rhs(x, t)
        k2 = rhs([a + dt / 2 * b for a, b in zip(x, k1)], t + dt / 2)
        k3 = rhs([a + dt / 2 * b for a, b in zip(x, k2)], t + dt / 2)
        k4 = rhs([a + dt * b for a, b in zip(x, k3)], t + dt)
        x = [
            a + dt / 6 * (b1 + 2 * b2 + 2 * b3 + b4)
            for a, b1, b2, b3, b4 in zip(x, k1, k2, k3, k4)
        ]
        U, _, Vt = np.linalg.svd(x[0])
        x[0] = U @ Vt
        t += dt
    return x


def _line(p0, velocity):
    return lambda t: (np.r_[0, 0, 0, velocity], p0 + t * np.asarray(velocity))


def test_closed_loop_reactionless_and_resolved_rate_on_a_free_floating_plant():
    """
    Planar arm, end effector along a 0.3 m straight line in 2 s (feed-forward + P law).

    Reactionless: base yaw changes < 1e-9 rad while the end effector reaches the end of the line
    within 1 mm; resolved rate: the same path within 1 mm, and the base really turns (> 1 deg).
    """
    robot = planar()
    ee = EndEffector(robot, 'end_effector')
    _, p0 = ee.pose(np.eye(3), np.zeros(3), Q_BENT)
    duration = 2.0
    v = np.array([-0.3, 0.3, 0.0]) / np.sqrt(2) / duration  # 0.3 m in 2 s
    reference = _line(p0, v)
    results = {}
    for law_class in (Reactionless, ResolvedRate):
        law = law_class(robot, 'end_effector', rows=(3, 4), pose_gain=2.0)
        R0, r0, q = _kinematic_loop(law, robot, duration, 0.01, reference)
        _, p = ee.pose(R0, r0, q)
        results[law_class.mode] = (
            np.arctan2(R0[1, 0], R0[0, 0]),
            np.linalg.norm(p - (p0 + duration * v)),
        )
    yaw, err = results['reactionless']
    assert abs(yaw) < 1e-9 and err < 1e-3, results
    yaw, err = results['resolved_rate']
    assert abs(yaw) > np.deg2rad(1) and err < 1e-3, results


# --- errors
# -------------------------------------------------------------------------------------------------
def test_bad_arguments_name_the_problem():
    robot = planar()
    z = np.zeros
    for kwargs, match in (
        ({'rows': (7,)}, 'rows'),
        ({'damping': -1}, 'damping'),
        ({'singular_region': float('nan')}, 'singular_region'),
        ({'max_joint_rates': [1, 2]}, 'max_joint_rates'),
        ({'max_joint_rates': -1}, 'max_joint_rates'),
        ({'velocity_gain': -2}, 'velocity_gain'),
        ({'pose_gain': [1, 2]}, 'pose_gain'),
    ):
        with pytest.raises(InputError, match=match):
            ResolvedRate(robot, 'end_effector', **kwargs)
    with pytest.raises(InputError, match='frame'):
        ResolvedRate(robot, 'end_effector', frame='tool')
    with pytest.raises(InputError, match='priority'):
        DesiredReaction(robot, 'end_effector', priority='both')
    with pytest.raises(InputError, match='base_rows'):
        DesiredReaction(robot, 'end_effector', base_rows=(3,))
    with pytest.raises(InputError, match='attitude_gain'):
        DesiredReaction(robot, 'end_effector', attitude_gain=-1)
    law = DesiredReaction(robot, 'end_effector')
    with pytest.raises(InputError, match='twist'):
        law.update(np.eye(3), z(3), Q_BENT, z(6), z(4), twist=z(5))
    with pytest.raises(InputError, match='position'):
        law.update(np.eye(3), z(3), Q_BENT, z(6), z(4), position=z(2))
    with pytest.raises(InputError, match='base_rotation'):
        law.update(np.eye(3), z(3), Q_BENT, z(6), z(4), base_rotation=np.eye(2))
    with pytest.raises(InputError, match='um'):
        law.update(np.eye(3), z(3), Q_BENT, z(6), z(3))
    with pytest.raises(InputError, match='u0'):
        law.update(np.eye(3), z(3), Q_BENT, [np.nan] * 6, z(4))
