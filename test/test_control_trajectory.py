"""
Joint trajectories (spart_ros.control.trajectory).

Through every waypoint, C2 everywhere (checked by finite differences at and between the knots),
started and replaced from a moving reference without a jump, held after the end; a schedule of
queued (future) trajectories continuous whatever the order they come in; bad input named: absurd
(overflowing) trajectories, waypoints outside the position limits
(test_controller_state_machine.py).
"""

import numpy as np
import pytest
from spart_ros.control.trajectory import (
    hold,
    JointTrajectory,
    Reference,
    ReferenceSchedule,
    spline_derivatives,
)
from spart_ros.core.errors import InputError


def _start(n, rng, moving=True):
    if not moving:
        return Reference(rng.standard_normal(n), np.zeros(n), np.zeros(n))
    return Reference(rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal(n))


def _numeric(traj, t, h=1e-5):
    """(v, a) of the position by central differences at t."""
    p = lambda s: traj.sample(s).position  # noqa: E731
    return (p(t + h) - p(t - h)) / (2 * h), (p(t + h) - 2 * p(t) + p(t - h)) / h**2


@pytest.mark.parametrize('given', ['positions', 'velocities', 'all'])
def test_hits_every_point_and_is_c2(given):
    rng = np.random.default_rng(1)
    n, k, t0 = 3, 5, 10.0
    times = np.cumsum(rng.uniform(0.3, 1.0, k))
    pos = rng.standard_normal((k, n))
    vel = rng.standard_normal((k, n)) if given != 'positions' else None
    acc = rng.standard_normal((k, n)) if given == 'all' else None
    start = _start(n, rng)
    traj = JointTrajectory(t0, start, times, pos, vel, acc)
    for j, t in enumerate(times):
        ref = traj.sample(t0 + t)
        np.testing.assert_allclose(ref.position, pos[j], atol=1e-12)
        if vel is not None:
            np.testing.assert_allclose(ref.velocity, vel[j], atol=1e-10)
        if acc is not None and j < k - 1:
            np.testing.assert_allclose(ref.acceleration, acc[j], atol=1e-9)
    # continuity of velocity and acceleration at every knot: left and right limits agree
    eps = 1e-9
    for t in np.concatenate([[0.0], times[:-1]]):
        left, right = traj.sample(t0 + t - eps), traj.sample(t0 + t + eps)
        np.testing.assert_allclose(left.velocity, right.velocity, atol=1e-6)
        np.testing.assert_allclose(left.acceleration, right.acceleration, atol=1e-5)
    # the analytic derivatives are the derivatives of the position (finite differences)
    for t in np.linspace(0.05, times[-1] - 0.05, 23):
        v, a = _numeric(traj, t0 + t)
        ref = traj.sample(t0 + t)
        np.testing.assert_allclose(ref.velocity, v, atol=1e-6)
        np.testing.assert_allclose(ref.acceleration, a, atol=2e-4)


def test_starts_from_a_moving_reference_and_holds_after_the_end():
    rng = np.random.default_rng(2)
    start = _start(2, rng)
    traj = JointTrajectory(1.0, start, [0.5, 1.2], rng.standard_normal((2, 2)))
    at = traj.sample(1.0 + 1e-12)
    np.testing.assert_allclose(at.position, start.position, atol=1e-9)
    np.testing.assert_allclose(at.velocity, start.velocity, atol=1e-9)
    np.testing.assert_allclose(at.acceleration, start.acceleration, atol=1e-6)
    before = traj.sample(0.0)
    np.testing.assert_array_equal(before.position, start.position)
    end = traj.sample(5.0)
    np.testing.assert_array_equal(end.position, traj.final.position)
    assert (
        not end.velocity.any()
        and not end.acceleration.any()
        and traj.done(5.0)
        and not traj.done(1.5)
    )
    # position-only waypoints come to rest at the last one (no jump into the hold)
    last = traj.sample(1.0 + 1.2 - 1e-9)
    assert np.abs(last.velocity).max() < 1e-6 and np.abs(last.acceleration).max() < 1e-4


def test_replacing_a_running_trajectory_is_continuous():
    rng = np.random.default_rng(3)
    first = JointTrajectory(
        0.0, _start(3, rng, moving=False), [1.0, 2.0], rng.standard_normal((2, 3))
    )
    t_switch = 0.7
    current = first.sample(t_switch)
    assert np.abs(current.velocity).max() > 0.1  # really moving at the switch
    second = JointTrajectory(t_switch, current, [0.8], rng.standard_normal((1, 3)))
    for field in range(3):
        np.testing.assert_allclose(
            second.sample(t_switch + 1e-10)[field],
            first.sample(t_switch - 1e-10)[field],
            atol=1e-6,
        )


def test_spline_derivatives_are_the_clamped_cubic_spline():
    from scipy.interpolate import CubicSpline

    rng = np.random.default_rng(4)
    t = np.cumsum(rng.uniform(0.2, 1.0, 6))
    y = rng.standard_normal((6, 2))
    v0, v1 = rng.standard_normal(2), rng.standard_normal(2)
    v, a = spline_derivatives(t, y, v0, v1)
    cs = CubicSpline(t, y, bc_type=((1, v0), (1, v1)))
    np.testing.assert_allclose(v, cs(t, 1), atol=1e-10)
    np.testing.assert_allclose(a, cs(t, 2), atol=1e-9)


def test_hold():
    h = hold(3.0, [0.1, -0.2])
    ref = h.sample(100.0)
    assert ref.position.tolist() == [0.1, -0.2] and not ref.velocity.any() and h.done(3.0)


@pytest.mark.parametrize(
    'times, positions, match',
    [
        ([], np.zeros((0, 2)), 'no points'),
        ([0.0, 1.0], np.zeros((2, 2)), 'time_from_start'),
        ([1.0, 1.0], np.zeros((2, 2)), 'strictly increasing'),
        ([1.0, float('nan')], np.zeros((2, 2)), 'time_from_start'),
        ([1.0], np.zeros((1, 3)), 'positions: expected shape'),
        ([1.0], [[0.0, float('inf')]], 'positions: contains NaN'),
    ],
)
def test_bad_trajectories_are_named(times, positions, match):
    with pytest.raises(InputError, match=match):
        JointTrajectory(0.0, Reference(np.zeros(2), np.zeros(2), np.zeros(2)), times, positions)


def test_absurd_trajectories_are_refused_without_warnings():
    """
    Finite but absurd waypoints (1e300 rad in 1 ns) overflow the interpolation.

    Refused, naming it, instead of a reference of inf/NaN (and numpy's overflow warnings).
    """
    import warnings

    start = Reference(np.zeros(2), np.zeros(2), np.zeros(2))
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        for times, positions in (
            ([1e-9], [[1e300, 0.0]]),
            ([1e-200, 1.0], [[1.0, 0.0], [2.0, 0.0]]),
            ([1.0, 2.0, 3.0], [[1e308, 0.0], [-1e308, 0.0], [1e308, 0.0]]),
        ):
            with pytest.raises(InputError, match='the interpolation overflows'):
                JointTrajectory(0.0, start, times, positions)
    JointTrajectory(0.0, start, [1.0], [[1e3, 0.0]])  # large but sound: accepted


def _reference_jumps(schedule, t, eps=1e-9):
    """``max`` |difference| of position, velocity, acceleration across time t."""
    left, right = schedule.sample(t - eps), schedule.sample(t + eps)
    return [float(np.abs(a - b).max()) for a, b in zip(left, right)]


def _queue(schedule, start, positions, times):
    """
    Return what the node does.

    A trajectory starting at ``start`` from the reference followed then.
    """
    traj = JointTrajectory(start, schedule.sample(start), times, positions)
    schedule.replace(traj)
    return traj


def test_schedule_of_queued_trajectories_is_continuous():
    """
    T1 runs from t = 1; T2 is queued for t = 5; T3 for t = 3 replaces T2 (it starts earlier).

    T4 for t = 7 runs after T3. The reference never jumps, and each one starts from the reference
    followed at its start (the audit's case: T3 started from T2 -> a jump at 3).
    """
    q0 = np.zeros(2)
    schedule = ReferenceSchedule(hold(1.0, q0))
    t1 = _queue(schedule, 1.0, [[1.0, -1.0]], [10.0])
    _queue(schedule, 5.0, [[0.0, 0.0]], [1.0])
    before = schedule.sample(4.0)
    _queue(schedule, 3.0, [[0.5, 0.5]], [2.0])
    np.testing.assert_array_equal(
        schedule.sample(2.9).position, t1.sample(2.9).position
    )  # T1 until 3
    assert schedule.sample(4.0).position.tolist() != before.position.tolist()  # T2 is gone
    _queue(schedule, 7.0, [[0.0, 0.0]], [1.0])
    np.testing.assert_allclose(schedule.sample(6.0).position, [0.5, 0.5])  # T3 done, held
    for t in (1.0, 3.0, 5.0, 7.0, 8.0):
        dp, dv, da = _reference_jumps(schedule, t)
        assert dp < 1e-6 and dv < 1e-5 and da < 1e-3, (t, dp, dv, da)
    np.testing.assert_allclose(schedule.sample(20.0).position, q0)
    assert schedule.end_time == 8.0 and len(schedule) == 3  # T1, T3, T4 (the hold: replaced at 1)
    # the control time passes: replaced segments are forgotten, the reference is unchanged
    ref = schedule.sample(7.5)
    schedule.advance(7.5)
    assert len(schedule) == 1
    np.testing.assert_array_equal(schedule.sample(7.5).position, ref.position)


def test_a_new_trajectory_replaces_everything_from_its_start():
    schedule = ReferenceSchedule(hold(0.0, np.zeros(1)))
    _queue(schedule, 2.0, [[1.0]], [1.0])
    _queue(schedule, 0.5, [[-1.0]], [1.0])  # starts before the queued one: replaces it
    assert len(schedule) == 2 and schedule.end_time == 1.5
    np.testing.assert_allclose(schedule.sample(10.0).position, [-1.0])
    _queue(schedule, 0.5, [[2.0]], [1.0])  # the same start: replaces the one starting then
    assert len(schedule) == 2
    np.testing.assert_allclose(schedule.sample(10.0).position, [2.0])
