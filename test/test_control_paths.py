"""
Time scalings and point-to-point paths (spart_ros.control.time_scaling, .paths).

They and their Modern Robotics aliases against the book's printed examples, the book's own code
(``modern_robotics``) on random inputs, and the sampled velocities and accelerations against
finite differences.
"""

from core_helpers import random_rotation
import numpy as np
import pytest
from spart_ros import modern_robotics as mr
from spart_ros.control import (
    CartesianPath,
    cubic_time_scaling,
    JointPath,
    quintic_time_scaling,
    ScrewPath,
)
from spart_ros.control.paths import pose_matrix
from spart_ros.control.trajectory import hold, ReferenceSchedule
from spart_ros.core import rotation_vector
from spart_ros.core.errors import InputError

X_START = np.array([[1, 0, 0, 1], [0, 1, 0, 0], [0, 0, 1, 1], [0, 0, 0, 1]])
X_END = np.array([[0, 0, 1, 0.1], [1, 0, 0, 0], [0, 1, 0, 4.1], [0, 0, 0, 1]])


def test_time_scalings_reproduce_the_book():
    assert mr.CubicTimeScaling(2, 0.6) == pytest.approx(0.216, abs=1e-15)
    assert mr.QuinticTimeScaling(2, 0.6) == pytest.approx(0.16308, abs=1e-15)


def test_trajectories_reproduce_the_book():
    """``MR``'s printed examples (modern_robotics core.py docstrings; 3 or 4 printed decimals)."""
    traj = mr.JointTrajectory(
        np.array([1, 0, 0, 1, 1, 0.2, 0, 1]), np.array([1.2, 0.5, 0.6, 1.1, 2, 2, 0.9, 1]), 4, 6, 3
    )
    np.testing.assert_allclose(
        traj,
        [
            [1, 0, 0, 1, 1, 0.2, 0, 1],
            [1.0208, 0.052, 0.0624, 1.0104, 1.104, 0.3872, 0.0936, 1],
            [1.0704, 0.176, 0.2112, 1.0352, 1.352, 0.8336, 0.3168, 1],
            [1.1296, 0.324, 0.3888, 1.0648, 1.648, 1.3664, 0.5832, 1],
            [1.1792, 0.448, 0.5376, 1.0896, 1.896, 1.8128, 0.8064, 1],
            [1.2, 0.5, 0.6, 1.1, 2, 2, 0.9, 1],
        ],
        atol=1e-12,
    )
    screw = mr.ScrewTrajectory(X_START, X_END, 5, 4, 3)
    np.testing.assert_allclose(
        screw[1],
        [
            [0.904, -0.25, 0.346, 0.441],
            [0.346, 0.904, -0.25, 0.529],
            [-0.25, 0.346, 0.904, 1.601],
            [0, 0, 0, 1],
        ],
        atol=5e-4,
    )
    np.testing.assert_allclose(
        screw[2],
        [
            [0.346, -0.25, 0.904, -0.117],
            [0.904, 0.346, -0.25, 0.473],
            [-0.25, 0.904, 0.346, 3.274],
            [0, 0, 0, 1],
        ],
        atol=5e-4,
    )
    cart = mr.CartesianTrajectory(X_START, X_END, 5, 4, 5)
    np.testing.assert_allclose(
        cart[1],
        [
            [0.937, -0.214, 0.277, 0.811],
            [0.277, 0.937, -0.214, 0],
            [-0.214, 0.277, 0.937, 1.651],
            [0, 0, 0, 1],
        ],
        atol=5e-4,
    )
    np.testing.assert_allclose(
        cart[2],
        [
            [0.277, -0.214, 0.937, 0.289],
            [0.937, 0.277, -0.214, 0],
            [-0.214, 0.937, 0.277, 3.449],
            [0, 0, 0, 1],
        ],
        atol=5e-4,
    )
    for out in (screw, cart):
        np.testing.assert_allclose(out[0], X_START, atol=1e-15)
        np.testing.assert_allclose(out[-1], X_END, atol=1e-12)


def _random_pose(rng):
    return pose_matrix(random_rotation(rng), rng.uniform(-2, 2, 3))


def test_trajectories_equal_the_book_code():
    import modern_robotics as MR

    rng = np.random.default_rng(5)
    for method in (3, 5):
        for _ in range(5):
            a, b = _random_pose(rng), _random_pose(rng)
            Tf, N = rng.uniform(0.5, 5), int(rng.integers(2, 9))
            for ours, theirs in (
                (mr.ScrewTrajectory, MR.ScrewTrajectory),
                (mr.CartesianTrajectory, MR.CartesianTrajectory),
            ):
                for x, y in zip(ours(a, b, Tf, N, method), theirs(a, b, Tf, N, method)):
                    np.testing.assert_allclose(x, y, atol=1e-9)
            qa, qb = rng.standard_normal(4), rng.standard_normal(4)
            np.testing.assert_allclose(
                mr.JointTrajectory(qa, qb, Tf, N, method),
                MR.JointTrajectory(qa, qb, Tf, N, method),
                atol=1e-12,
            )
            t = rng.uniform(-1, Tf + 1)
            assert mr.CubicTimeScaling(Tf, min(max(t, 0), Tf)) == pytest.approx(
                MR.CubicTimeScaling(Tf, min(max(t, 0), Tf)), abs=1e-14
            )


@pytest.mark.parametrize('scaling', [cubic_time_scaling, quintic_time_scaling])
def test_time_scaling_derivatives(scaling):
    T, h = 2.5, 1e-6
    assert scaling(T, 0.0) == (0.0, 0.0, 0.0) and scaling(T, T) == (1.0, 0.0, 0.0)
    assert scaling(T, -1.0) == (0.0, 0.0, 0.0) and scaling(T, 10.0) == (1.0, 0.0, 0.0)
    for t in np.linspace(0.05, T - 0.05, 17):
        s, ds, dds = scaling(T, t)
        assert ds == pytest.approx((scaling(T, t + h).s - scaling(T, t - h).s) / (2 * h), abs=1e-8)
        assert dds == pytest.approx(
            (scaling(T, t + h).s_dot - scaling(T, t - h).s_dot) / (2 * h), abs=1e-6
        )
    # the quintic also starts and ends without acceleration: its acceleration is continuous
    if scaling is quintic_time_scaling:
        assert abs(scaling(T, 1e-9).s_ddot) < 1e-6 and abs(scaling(T, T - 1e-9).s_ddot) < 1e-6


def _angular_velocity(path, t, h):
    """World angular velocity from finite differences of the rotation: log(R(t+h) R(t-h)') / 2h."""
    return rotation_vector(path.sample(t + h).rotation @ path.sample(t - h).rotation.T) / (2 * h)


@pytest.mark.parametrize('cls', [CartesianPath, ScrewPath])
@pytest.mark.parametrize('scaling', ['cubic', 'quintic'])
def test_pose_path_twist_and_acceleration_are_derivatives(cls, scaling):
    rng = np.random.default_rng(11)
    a, b = _random_pose(rng), _random_pose(rng)
    path = cls(a, b, 3.0, scaling, start_time=10.0)
    h = 1e-5
    for t in np.linspace(10.1, 12.9, 9):
        s = path.sample(t)
        np.testing.assert_allclose(s.rotation.T @ s.rotation, np.eye(3), atol=1e-12)
        v_fd = (path.sample(t + h).position - path.sample(t - h).position) / (2 * h)
        np.testing.assert_allclose(s.twist[3:], v_fd, atol=1e-7)
        np.testing.assert_allclose(s.twist[:3], _angular_velocity(path, t, h), atol=1e-7)
        a_fd = (path.sample(t + h).twist - path.sample(t - h).twist) / (2 * h)
        np.testing.assert_allclose(s.acceleration, a_fd, atol=1e-6)
    # at rest on the start before start_time, on the end after end_time
    for t, pose in ((9.0, a), (10.0, a), (13.0, b), (20.0, b)):
        s = path.sample(t)
        np.testing.assert_allclose(pose_matrix(s.rotation, s.position), pose, atol=1e-12)
        assert not s.twist.any() and not s.acceleration.any()
    assert path.end_time == 13.0 and path.done(13.0) and not path.done(12.99)


def test_cartesian_path_is_a_straight_line_and_a_screw_path_a_helix():
    rng = np.random.default_rng(2)
    a, b = _random_pose(rng), _random_pose(rng)
    line, screw = CartesianPath(a, b, 1.0), ScrewPath(a, b, 1.0)
    d = b[:3, 3] - a[:3, 3]
    w_line = rotation_vector(a[:3, :3].T @ b[:3, :3])
    off_line = []
    for t in np.linspace(0, 1, 11):
        p = line.sample(t).position - a[:3, 3]
        assert np.linalg.norm(np.cross(p, d)) < 1e-12 * np.linalg.norm(d) ** 2  # on the segment
        # the rotation turns about one fixed axis (in the start frame)
        w = rotation_vector(a[:3, :3].T @ line.sample(t).rotation)
        assert np.linalg.norm(np.cross(w, w_line)) < 1e-12
        off_line.append(
            np.linalg.norm(np.cross(screw.sample(t).position - a[:3, 3], d)) / np.linalg.norm(d)
        )
    assert max(off_line) > 1e-3  # with rotation, the screw's point leaves the line
    # without rotation the screw path is the straight line too
    b2 = b.copy()
    b2[:3, :3] = a[:3, :3]
    for t in np.linspace(0, 1, 7):
        np.testing.assert_allclose(
            ScrewPath(a, b2, 1.0).sample(t).position,
            CartesianPath(a, b2, 1.0).sample(t).position,
            atol=1e-12,
        )


def test_joint_path_feeds_the_reference_schedule():
    path = JointPath([0.0, 1.0], [1.0, -1.0], 2.0, 'cubic', start_time=1.0)
    schedule = ReferenceSchedule(hold(0.0, [0.0, 1.0]))
    schedule.replace(path)
    r = schedule.sample(2.0)  # midway: s = 0.5, ds = 1.5 / 2 per s
    np.testing.assert_allclose(r.position, [0.5, 0.0])
    np.testing.assert_allclose(r.velocity, [0.75, -1.5])
    np.testing.assert_allclose(schedule.sample(5.0).position, [1.0, -1.0])
    assert schedule.end_time == 3.0


def test_bad_arguments_are_named():
    with pytest.raises(InputError, match='duration'):
        CartesianPath(X_START, X_END, 0.0)
    with pytest.raises(InputError, match='duration'):
        ScrewPath(X_START, X_END, float('nan'))
    with pytest.raises(InputError, match='end'):
        CartesianPath(X_START, 2 * X_END, 1.0)
    with pytest.raises(InputError, match='scaling'):
        ScrewPath(X_START, X_END, 1.0, 'linear')
    with pytest.raises(InputError, match='end: expected length 2'):
        JointPath([0, 1], [0, 1, 2], 1.0)
    with pytest.raises(InputError, match='method'):
        mr.JointTrajectory([0], [1], 1.0, 5, 4)
    with pytest.raises(InputError, match='N'):
        mr.ScrewTrajectory(X_START, X_END, 1.0, 1, 3)
