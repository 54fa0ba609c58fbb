"""
Inverse kinematics (spart_ros.core.inverse_kinematics), its MR aliases.

The link-frame point Jacobians and the rigid-motion helpers, checked against independent
references.

- Modern Robotics: IKinBody / IKinSpace reproduce the book's printed example results, and equal
  the ``modern_robotics`` package's (the book's own code) on random 6R chains; FKin*, MatrixLog6,
  MatrixExp6, Adjoint likewise;
- every robot of the URDF test corpus (test_urdf_corpus.CORPUS) and of the project's test robots
  with a chain of 6 or more moving joints: random reachable targets (forward kinematics of random
  joint positions within the limits, a point off the link origin) are reached to 1e-6 m /
  1e-6 rad from seeds within 0.5 rad, checked with the SPART chain's own forward kinematics (not
  the solver's), in a median of a few iterations, never outside the joint limits;
- an unreachable target: success False with the closest error, no worse than the best of 20 000
  random configurations;
- a free-floating base: the returned joint path, integrated at zero momentum by an independent
  integrator (scipy, quaternions, the SPART-named GIM), ends with the base where the solver says
  and the end effector on the target; the system CoM does not move.
"""

import math
import os
import warnings

from core_helpers import load_robot, random_rotation, URDF_DIR, urdf_path
import numpy as np
import pytest
from scipy.integrate import solve_ivp
from scipy.linalg import expm
from spart_ros import modern_robotics as mr
from spart_ros import spart
from spart_ros.core import (
    adjoint,
    com_offset,
    inverse_kinematics,
    InverseKinematics,
    link_point_jacobian,
    link_point_jacobian_dot,
    point_jacobian,
    point_jacobian_dot,
    position_limits,
    robot_from_screw_axes,
    rotation_vector,
    transform_exp,
    transform_log,
)
from spart_ros.core.base_state import link_frame_pose
from spart_ros.core.errors import InputError, SingularModelError
from spart_ros.core.urdf import robot_from_urdf

# --- Modern Robotics: the book's examples and its code -----------------------------------------

BLIST = np.array([[0, 0, -1, 2, 0, 0], [0, 0, 0, 0, 1, 0], [0, 0, 1, 0, 0, 0.1]]).T
SLIST = np.array([[0, 0, 1, 4, 0, 0], [0, 0, 0, 0, 1, 0], [0, 0, -1, -6, 0, -0.1]]).T
M_HOME = np.array([[-1, 0, 0, 0], [0, 1, 0, 6], [0, 0, -1, 2], [0, 0, 0, 1]])
T_GOAL = np.array([[0, 1, 0, -5], [1, 0, 0, 4], [0, 0, -1, 1.6858], [0, 0, 0, 1]])


def test_ikinbody_and_ikinspace_reproduce_the_book():
    """``MR``'s printed results (core.py docstrings, ModernRoboticsBook.jl's tests)."""
    theta, ok = mr.IKinBody(BLIST, M_HOME, T_GOAL, [1.5, 2.5, 3], 0.01, 0.001)
    assert ok
    np.testing.assert_allclose(theta, [1.57073819, 2.999667, 3.14153913], atol=1e-8)
    theta, ok = mr.IKinSpace(SLIST, M_HOME, T_GOAL, [1.5, 2.5, 3], 0.01, 0.001)
    assert ok
    np.testing.assert_allclose(theta, [1.57073783, 2.99966384, 3.1415342], atol=1e-8)
    # FKinBody's example: theta = (pi/2, 3, pi)
    np.testing.assert_allclose(
        mr.FKinBody(M_HOME, BLIST, [np.pi / 2, 3, np.pi]),
        [[0, 1, 0, -5], [1, 0, 0, 4], [0, 0, -1, 1.68584073], [0, 0, 0, 1]],
        atol=1e-8,
    )


def _random_chain(rng, n=6):
    """Space screw axes of a random nR chain (unit axes through random points) and a home pose."""
    S = np.zeros((6, n))
    for i in range(n):
        w = rng.standard_normal(3)
        w /= np.linalg.norm(w)
        S[:3, i], S[3:, i] = w, -np.cross(w, rng.uniform(-0.5, 0.5, 3) + [0, 0, 0.3 * i])
    M = np.eye(4)
    M[:3, :3], M[:3, 3] = random_rotation(rng), [0.2, 0.1, 0.3 * n]
    return S, M


def test_ik_equals_modern_robotics_code():
    """
    Same result as the book's own code.

    modern_robotics on PyPI) on random 6R chains, body and space forms, from seeds within 0.5 rad
    (the iterates agree to ~1e-14; where Newton does not converge in MR's 20 iterations it wanders
    and rounding grows: only the flag is compared.
    """
    import modern_robotics as MR

    rng = np.random.default_rng(7)
    outcomes = set()
    for _ in range(12):
        S, M = _random_chain(rng)
        B = MR.Adjoint(MR.TransInv(M)) @ S
        q_goal = rng.uniform(-np.pi, np.pi, 6)
        goal = MR.FKinSpace(M, S, q_goal)
        seed = q_goal + rng.uniform(-0.5, 0.5, 6)
        np.testing.assert_allclose(mr.FKinSpace(M, S, seed), MR.FKinSpace(M, S, seed), atol=1e-12)
        np.testing.assert_allclose(mr.FKinBody(M, B, seed), MR.FKinBody(M, B, seed), atol=1e-12)
        for ours, theirs, axes in ((mr.IKinSpace, MR.IKinSpace, S), (mr.IKinBody, MR.IKinBody, B)):
            q, ok = ours(axes, M, goal, seed, 1e-3, 1e-4)
            q_mr, ok_mr = theirs(axes, M, goal, seed, 1e-3, 1e-4)
            assert ok == ok_mr
            outcomes.add(ok)
            if ok:
                np.testing.assert_allclose(q, q_mr, atol=1e-10)
    assert True in outcomes


def test_rigid_motion_equals_modern_robotics():
    import modern_robotics as MR

    rng = np.random.default_rng(3)
    for angle in (0.0, 1e-9, 0.3, 2.0, np.pi - 1e-7, np.pi):
        axis = rng.standard_normal(3)
        axis /= np.linalg.norm(axis)
        V = np.concatenate([angle * axis, rng.standard_normal(3)])
        T = transform_exp(V)
        np.testing.assert_allclose(T, expm(MR.VecTose3(V)), atol=1e-12)  # the exact exponential
        if angle > 1e-6:  # MR's code takes rotations below 1e-6 rad as none
            np.testing.assert_allclose(T, MR.MatrixExp6(MR.VecTose3(V)), atol=1e-12)
        back = transform_log(T)
        np.testing.assert_allclose(transform_exp(back), T, atol=1e-9)
        if angle < np.pi - 1e-3:  # at pi the axis sign is a choice
            np.testing.assert_allclose(back, V, atol=1e-9)
            if angle > 1e-6:
                np.testing.assert_allclose(back, MR.se3ToVec(MR.MatrixLog6(T)), atol=1e-9)
        np.testing.assert_allclose(adjoint(T), MR.Adjoint(T), atol=1e-12)
        np.testing.assert_allclose(
            np.linalg.norm(rotation_vector(T[:3, :3])), min(angle, np.pi), atol=1e-7
        )


def test_screw_chain_refuses_what_it_cannot_model():
    bad = SLIST.astype(float).copy()
    bad[0:3, 0] *= 2.0
    with pytest.raises(InputError, match='screw_axes: column 0'):
        robot_from_screw_axes(bad, M_HOME)
    with pytest.raises(InputError, match='home'):
        robot_from_screw_axes(SLIST, 2 * M_HOME)
    # the helical joint: a revolute joint and a prismatic one that mimics it (independent
    # coordinates)
    robot = robot_from_screw_axes(SLIST, M_HOME)
    assert robot.coordinates.names == ['joint1', 'joint2', 'joint3']
    assert robot.mimic['joint3_pitch'].multiplier == pytest.approx(0.1)  # w . v = (-1) (-0.1)


# --- the URDF corpus ---------------------------------------------------------------------------


def _chain_length(robot, link_id):
    k, n = link_id, 0
    while k:
        joint = robot.joints[k - 1]
        n += joint.type != 0
        k = joint.parent_link
    return n


def _arms():
    """
    (label, path, link).

    Every corpus robot with a chain of >= 6 moving joints, and the link at the end of its longest
    chain.
    """
    from test_urdf_corpus import CORPUS

    own = [(f'own/{name}', urdf_path(name)) for name in ('arm7_floating', 'kuka_iiwa')]
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        for label, path in list(CORPUS) + own:
            try:
                robot, _ = robot_from_urdf(path)
            except Exception:  # noqa: BLE001 (the corpus test says which files do not load)
                continue
            best = max(robot.links, key=lambda link: _chain_length(robot, link.id), default=None)
            if best is not None and _chain_length(robot, best.id) >= 6:
                out.append((label, path, best.name))
    return out


ARMS = _arms()


def _load(path):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return robot_from_urdf(path)[0]


def _sample(rng, lower, upper):
    """Uniform within the limits; [-pi, pi] for an unbounded coordinate."""
    lo, hi = (
        np.where(np.isfinite(lower), lower, -np.pi),
        np.where(np.isfinite(upper), upper, np.pi),
    )
    return rng.uniform(lo, hi)


def _pose_spart(robot, link, point, q, R0, r0):
    """
    Return the end-effector pose by the SPART chain (Kinematics + link_frame_pose).

    Full coordinates.
    """
    k = spart.Kinematics(R0, r0, robot.coordinates.positions(q), robot)
    R, p = link_frame_pose(robot, link, R0, r0, k.RL, k.rL)
    return R, p + R @ point


def test_the_corpus_has_arms():
    labels = {label for label, _, _ in ARMS}
    assert {
        'pybullet_data/kuka_iiwa/model.urdf',
        'pybullet_data/franka_panda/panda.urdf',
        'pybullet_data/xarm/xarm6_robot.urdf',
        'own/ur5_world.urdf',
        'own/arm7_floating',
    } <= labels


@pytest.mark.parametrize('label,path,link', ARMS, ids=[a[0] for a in ARMS])
def test_ik_reaches_random_targets_on_every_arm(label, path, link):
    robot = _load(path)
    point = np.array([0.02, -0.01, 0.05])
    ik = InverseKinematics(robot, link, point)
    R0, r0 = ik._base_state(None, None)
    rng = np.random.default_rng(zlib_seed(label))
    iterations, far = [], 0
    for _ in range(20):
        q_goal = _sample(rng, ik.lower, ik.upper)
        R_goal, p_goal = _pose_spart(robot, link, point, q_goal, R0, r0)
        seed = q_goal + rng.uniform(-0.5, 0.5, ik.n)
        res = ik.solve(p_goal, seed, rotation=R_goal)
        assert res.success, (
            f'{label}: {res.status} after {res.iterations} iterations, '
            f'error {res.position_error} m'
        )
        R, p = _pose_spart(robot, link, point, res.q, R0, r0)
        assert np.linalg.norm(p - p_goal) <= 1e-6
        assert np.linalg.norm(rotation_vector(R_goal @ R.T)) <= 1e-6
        assert np.all(res.path >= ik.lower) and np.all(res.path <= ik.upper)
        full = robot.coordinates.positions(res.q)  # mimic followers within their own limits too
        for name, value in zip(robot.q_names, full):
            lim = robot.joints[robot.keys.joint_id[name] - 1].limits
            if lim.lower < lim.upper:
                assert lim.lower - 1e-12 <= value <= lim.upper + 1e-12, (name, value)
        iterations.append(res.iterations)
        far += (
            np.abs(res.q - res.path[0]).max() > 1.0
        )  # a flip to a distant solution, not the seed's
    print(
        f'{label} ({link}, {ik.n} coordinates): iterations median {np.median(iterations):.0f}, '
        f'max {max(iterations)}; {far} of 20 solutions more than 1 rad from the seed'
    )
    assert np.median(iterations) <= 6
    assert far <= 1


def zlib_seed(label):
    import zlib

    return zlib.crc32(label.encode())


# --- limits, unreachable targets, rows, frames --------------------------------------------------


def _kuka():
    robot = load_robot('kuka_iiwa')
    return robot, robot.n_links_joints


def test_unreachable_target_says_so_with_the_closest_error():
    robot, link = _kuka()
    ik = InverseKinematics(robot, link)
    R0, r0 = ik._base_state(None, None)
    target = np.array([2.0, 1.0, 1.5])  # beyond the arm's reach (about 1.3 m)
    seed = np.zeros(ik.n) + 0.3
    res = ik.solve(target, seed)
    assert not res.success and res.status == 'no progress'
    _, p = _pose_spart(robot, link, np.zeros(3), res.q, R0, r0)
    assert res.position_error == pytest.approx(np.linalg.norm(target - p), rel=1e-6)
    assert np.all(res.q >= ik.lower) and np.all(res.q <= ik.upper)
    # no worse than the best of many random configurations within the limits
    rng = np.random.default_rng(1)
    best = min(
        np.linalg.norm(
            target
            - _pose_spart(robot, link, np.zeros(3), _sample(rng, ik.lower, ik.upper), R0, r0)[1]
        )
        for _ in range(20000)
    )
    print(
        f'unreachable: closest error {res.position_error:.6f} m in {res.iterations} iterations; '
        f'best random configuration {best:.6f} m'
    )
    assert res.position_error <= best + 1e-9


def test_joint_limits_are_never_exceeded():
    """
    The planar arm's elbow stops at its 2.9 rad limit.

    A target needing 3 rad is out of reach.
    """
    robot = load_robot('planar_two_link')
    ik = InverseKinematics(robot, 'link2', point=[0.8, 0.0, 0.0])
    R0, r0 = ik._base_state(None, None)
    _, p_goal = _pose_spart(robot, 'link2', np.array([0.8, 0, 0]), np.array([0.2, 3.0]), R0, r0)
    res = ik.solve(p_goal, [0.0, 2.5])
    assert not res.success
    assert np.all(np.abs(res.path) <= 2.9)
    assert res.q[1] == pytest.approx(2.9)  # held at the bound, the other joint doing what it can
    # a seed outside the limits is clamped into them first
    res = ik.solve(p_goal, [0.0, 3.5])
    assert res.path[0][1] == 2.9


def test_position_only_rows_and_frames():
    robot, link = _kuka()
    ik = InverseKinematics(robot, link, point=[0, 0, 0.1])
    R0, r0 = ik._base_state(None, None)
    rng = np.random.default_rng(4)
    q_goal = _sample(rng, ik.lower, ik.upper)
    R_goal, p_goal = _pose_spart(robot, link, np.array([0, 0, 0.1]), q_goal, R0, r0)
    seed = q_goal + 0.3
    for frame in ('world', 'body', 'space'):
        res = ik.solve(p_goal, seed, rotation=R_goal, frame=frame)
        assert res.success, frame
        R, p = _pose_spart(robot, link, np.array([0, 0, 0.1]), res.q, R0, r0)
        assert (
            np.linalg.norm(p - p_goal) < 1e-6
            and np.linalg.norm(rotation_vector(R_goal @ R.T)) < 1e-6
        )
    res = ik.solve(p_goal, seed)  # position only: the orientation is free
    assert res.success and res.rotation_error == 0.0
    res = ik.solve(p_goal, seed, rotation=R_goal, rows=['position', 'wz'])
    assert res.success
    R, p = _pose_spart(robot, link, np.array([0, 0, 0.1]), res.q, R0, r0)
    assert np.linalg.norm(p - p_goal) < 1e-6
    with pytest.raises(InputError, match='rows'):
        ik.solve(p_goal, seed, rows=['wx'])
    with pytest.raises(InputError, match='frame'):
        ik.solve(p_goal, seed, frame='tool')


def test_tree_prismatic_and_mimic_robots():
    robot = load_robot('branched_two_arm_spacecraft')  # a tree with a prismatic joint
    ik = InverseKinematics(robot, 'a_tip')
    R0, r0 = ik._base_state(None, None)
    q_goal = np.clip(np.full(ik.n, 0.3), ik.lower, ik.upper)
    _, p_goal = _pose_spart(robot, 'a_tip', np.zeros(3), q_goal, R0, r0)
    res = ik.solve(p_goal, np.clip(q_goal - 0.2, ik.lower, ik.upper))
    assert res.success
    assert (
        np.linalg.norm(_pose_spart(robot, 'a_tip', np.zeros(3), res.q, R0, r0)[1] - p_goal) < 1e-6
    )
    # the other arm's joints do not move the target link
    other = [k for k, name in enumerate(ik.names) if name.startswith('b_')]
    np.testing.assert_array_equal(res.q[other], np.clip(q_goal - 0.2, ik.lower, ik.upper)[other])
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        gripper, _ = robot_from_urdf(os.path.join(URDF_DIR, 'loading', 'gripper_mimic.urdf'))
    lower, upper = position_limits(gripper)
    assert len(lower) == gripper.coordinates.n < gripper.n_q


def test_seed_and_targets_are_checked():
    robot, link = _kuka()
    ik = InverseKinematics(robot, link)
    with pytest.raises(InputError, match='seed: expected length 7'):
        ik.solve(np.zeros(3), np.zeros(6))
    with pytest.raises(InputError, match='position: too large'):
        ik.solve(np.array([1e200, 0, 0]), np.zeros(7))
    with pytest.raises(InputError, match='base'):
        InverseKinematics(robot, link, base='floating')
    with pytest.raises(SingularModelError):  # no mass: a free base cannot react
        InverseKinematics(robot_from_screw_axes(SLIST, M_HOME), 'ee', base='free')


# --- the free-floating base ----------------------------------------------------------------------


def _base_rates(robot, R0, r0, q, dq):
    """u0 at zero momentum by the SPART-named chain: -H0^-1 H0m dq."""
    RJ, RL, rJ, rL, e, g = spart.Kinematics(R0, r0, q, robot)
    Bij, Bi0, P0, pm = spart.DiffKinematics(R0, r0, rL, e, g, robot)
    I0, Im = spart.I_I(R0, RL, robot)
    M0, Mm = spart.MCB(I0, Im, Bij, Bi0, robot)
    H0, H0m, _ = spart.GIM(M0, Mm, Bij, Bi0, P0, pm, robot)
    return -np.linalg.solve(H0, H0m @ dq)


def _quat_matrix(x):
    x = x / np.linalg.norm(x)
    return spart.quat_DCM(x).T


def _integrate_path(robot, R0, r0, path):
    """
    Return the base state after the joints move along ``path`` at zero momentum.

    The joints move along the straight segments of ``path``; scipy's RK45 (rtol 1e-12) on a
    quaternion and the base CoM.
    """
    x = np.concatenate([spart.DCM_quat(R0.T), r0])
    for qa, qb in zip(path[:-1], path[1:]):
        dq = qb - qa

        def f(s, x):
            R = _quat_matrix(x[:4])
            u0 = _base_rates(robot, R, x[4:], qa + s * dq, dq)
            w = u0[:3]  # body frame; SPART quaternions are [x, y, z, w]
            qv, qw = x[:3], x[3]
            dqv = 0.5 * (qw * w + np.cross(qv, w))
            return np.concatenate([dqv, [-0.5 * qv @ w], u0[3:]])

        x = solve_ivp(f, (0.0, 1.0), x, rtol=1e-12, atol=1e-12).y[:, -1]
    return _quat_matrix(x[:4]), x[4:]


def test_free_floating_base_ik_follows_momentum_conservation():
    robot = load_robot('arm7_floating')
    link = robot.n_links_joints
    ik = InverseKinematics(robot, link, point=[0.0, 0.0, 0.05], base='free')
    rng = np.random.default_rng(11)
    R0, r0 = random_rotation(rng), np.array([0.5, -0.2, 1.0])
    seed = _sample(rng, ik.lower, ik.upper) * 0.5
    # a reachable target: where the arm gets by moving its joints 0.4 rad at zero momentum
    goal_path = np.array([seed, seed + rng.uniform(-0.4, 0.4, ik.n)])
    Rg, rg = _integrate_path(robot, R0, r0, goal_path)
    R_goal, p_goal = _pose_spart(robot, link, np.array([0.0, 0.0, 0.05]), goal_path[-1], Rg, rg)
    res = ik.solve(p_goal, seed, rotation=R_goal, R0=R0, r0=r0)
    assert res.success, res
    assert len(res.path) >= 2
    # replay the solver's path with the independent integrator
    Rb, rb = _integrate_path(robot, R0, r0, res.path)
    np.testing.assert_allclose(Rb, res.R0, atol=1e-8)
    np.testing.assert_allclose(rb, res.r0, atol=1e-8)
    R, p = _pose_spart(robot, link, np.array([0.0, 0.0, 0.05]), res.q, Rb, rb)
    assert np.linalg.norm(p - p_goal) < 1e-6 + 1e-8
    assert np.linalg.norm(rotation_vector(R_goal @ R.T)) < 1e-6 + 1e-8
    # the system CoM stays put (zero linear momentum)

    def com(R, r, q):
        return spart.Center_of_Mass(r, spart.Kinematics(R, r, q, robot).rL, robot)

    np.testing.assert_allclose(com(res.R0, res.r0, res.q), com(R0, r0, seed), atol=1e-9)
    # the base moved (a fixed-base solution would be wrong here)
    assert np.linalg.norm(rotation_vector(R0.T @ res.R0)) > 1e-3
    print(
        f'free base: converged in {res.iterations} iterations, base turned by '
        f'{math.degrees(np.linalg.norm(rotation_vector(R0.T @ res.R0))):.2f} deg'
    )


# --- link-frame points and Robot.link
# -------------------------------------------------------------


def test_link_frame_point_jacobian_and_robot_link():
    robot = load_robot('branched_two_arm_spacecraft')
    rng = np.random.default_rng(2)
    R0, r0, qm = random_rotation(rng), rng.standard_normal(3), rng.uniform(-1, 1, robot.n_q)
    u0, um = rng.standard_normal(6), rng.standard_normal(robot.n_q)
    k = spart.Kinematics(R0, r0, qm, robot)
    Bij, Bi0, P0, pm = spart.DiffKinematics(R0, r0, k.rL, k.e, k.g, robot)
    t0, tL = spart.Velocities(Bij, Bi0, P0, pm, u0, um, robot)
    point = np.array([0.1, -0.2, 0.05])
    for link in range(robot.n_links_joints + 1):
        assert robot.link(link) is (robot.base_link if link == 0 else robot.links[link - 1])
        assert robot.link(robot.link_names[link]) is robot.link(link)
        J0, Jm = link_point_jacobian(link, point, R0, r0, k.RL, k.rL, P0, pm, robot)
        off = com_offset(robot, link, point)
        J0s, Jms = point_jacobian(link, off, R0, r0, k.RL, k.rL, P0, pm, robot)
        np.testing.assert_array_equal(J0, J0s)
        np.testing.assert_array_equal(Jm, Jms)
        # the point of the URDF frame: its velocity by finite differences of link_frame_pose
        h = 1e-6

        def p_of(s):
            q = qm + s * um
            R0s = (
                R0
                @ spart.Euler_DCM(
                    u0[:3] / max(np.linalg.norm(u0[:3]), 1e-300), s * np.linalg.norm(u0[:3])
                ).T
            )
            kk = spart.Kinematics(R0s, r0 + s * u0[3:], q, robot)
            R, p = link_frame_pose(robot, link, R0s, r0 + s * u0[3:], kk.RL, kk.rL)
            return p + R @ point

        v_fd = (p_of(h) - p_of(-h)) / (2 * h)
        np.testing.assert_allclose((J0 @ u0 + Jm @ um)[3:], v_fd, atol=1e-7)
        J0d, Jmd = link_point_jacobian_dot(link, point, R0, r0, t0, k.RL, k.rL, tL, P0, pm, robot)
        J0ds, Jmds = point_jacobian_dot(link, off, R0, r0, t0, k.RL, k.rL, tL, P0, pm, robot)
        np.testing.assert_array_equal(J0d, J0ds)
        np.testing.assert_array_equal(Jmd, Jmds)
    with pytest.raises(InputError, match='key: link id 12 out of range'):
        robot.link(12)


def test_one_off_function_equals_the_class():
    robot, link = _kuka()
    ik = InverseKinematics(robot, link)
    p_goal = np.array([0.4, 0.2, 0.6])
    a = ik.solve(p_goal, np.full(7, 0.2))
    b = inverse_kinematics(robot, link, p_goal, np.full(7, 0.2))
    assert a.success and b.success
    np.testing.assert_array_equal(a.q, b.q)
