"""
Joint trajectories: C2 interpolation through waypoints, replaced without a jump (pure numpy).

A :class:`JointTrajectory` is built from waypoints (times after its start, positions, and
optionally velocities and accelerations) and the reference state it starts from (position,
velocity, acceleration at the start time).  Between consecutive knots it is a quintic
polynomial matching position, velocity and acceleration at both ends, so the reference has
continuous velocity and acceleration everywhere (C2) and passes through every waypoint at its
time.  Velocities and accelerations the waypoints do not give are taken from the C2 cubic
spline through the knots (its slope and curvature at each knot), clamped to the start state's
velocity and to rest at the last waypoint; the start state's acceleration and rest at the end
complete the knot accelerations.  After the last waypoint the reference holds its position.

A new trajectory starts from the current reference (:meth:`JointTrajectory.sample` of the old
one at the new start time): position, velocity and acceleration are continuous across the
switch.  :func:`hold` is the trajectory that holds a position.  :class:`ReferenceSchedule` is
the reference over time: the trajectory followed now and those queued to start later (a
trajectory stamped in the future); each new one starts from the reference actually followed at
its start time.  A trajectory whose interpolation overflows (absurd positions or time steps) is
refused (:func:`spart_ros.control.goals.check_position_limits` refuses waypoints outside the
joints'
position limits).

Arrays: ``positions`` (k, n) for k waypoints of n joints; times (k,) in seconds, strictly
increasing and > 0 (relative to the start).  Units are the joints' (rad or m).
"""

import bisect
from collections import namedtuple

import numpy as np

from ..core.errors import InputError
from ..native.compiled import quintic_sample as _quintic_sample

__all__ = ['JointTrajectory', 'Reference', 'ReferenceSchedule', 'hold', 'spline_derivatives']

Reference = namedtuple('Reference', 'position velocity acceleration')
Reference.__doc__ = (
    """A joint reference at one instant: position, velocity, acceleration, each (n,)."""
)


def _array(name, x, shape):
    try:
        a = np.array(x, dtype=float)
    except (TypeError, ValueError):
        raise InputError(f'{name}: expected numbers, got {x!r}') from None
    if a.shape != shape:
        raise InputError(f'{name}: expected shape {shape}, got {a.shape}')
    if not np.all(np.isfinite(a)):
        raise InputError(f'{name}: contains NaN or infinity')
    return a


def spline_derivatives(t, y, v_start, v_end):
    """
    Return the slopes and second derivatives of a clamped C2 cubic spline at its knots.

    Both (k, n), at the knots ``t`` (k,) of the clamped C2 cubic spline through ``y`` (k, n) with
    end slopes ``v_start``, ``v_end`` (n,).

    The slopes solve the tridiagonal system of C2 continuity at the interior knots (h_{i} v_{i-1} +
    2 (h_{i-1} + h_i) v_i + h_{i-1} v_{i+1} = 3 (h_i d_{i-1} + h_{i-1} d_i), d = secant slopes);
    the second derivatives follow from the cubic of each segment.
    """
    k = len(t)
    h = np.diff(t)
    d = np.diff(y, axis=0) / h[:, None]
    v = np.empty_like(y)
    v[0], v[-1] = v_start, v_end
    if k > 2:
        m = k - 2
        A = np.zeros((m, m))
        rhs = 3 * (h[1:, None] * d[:-1] + h[:-1, None] * d[1:])
        for i in range(m):
            A[i, i] = 2 * (h[i] + h[i + 1])
            if i > 0:
                A[i, i - 1] = h[i + 1]
            if i < m - 1:
                A[i, i + 1] = h[i]
        rhs[0] -= h[1] * v_start
        rhs[-1] -= h[-2] * v_end
        v[1:-1] = np.linalg.solve(A, rhs)
    a = np.empty_like(y)
    # second derivative at the left end of each segment, and at the last knot from the last one
    a[:-1] = (6 * d - 4 * v[:-1] - 2 * v[1:]) / h[:, None]
    a[-1] = (-6 * d[-1] + 2 * v[-2] + 4 * v[-1]) / h[-1]
    return v, a


class JointTrajectory:
    """
    A C2 joint reference through waypoints, starting at ``start_time`` from ``start``.

    A :data:`Reference`. ``times`` (k,) after the start (s, > 0, increasing), ``positions`` (k, n),
    ``velocities`` / ``accelerations`` (k, n) or None (estimated, see the module docstring).
    InputError names the field at fault, or says the interpolation overflows (positions or time
    steps so far out of range that a coefficient is not finite).
    """

    def __init__(self, start_time, start, times, positions, velocities=None, accelerations=None):
        n = len(start.position)
        times = np.array(times, dtype=float).reshape(-1)
        k = len(times)
        if k == 0:
            raise InputError('trajectory: no points')
        if not np.all(np.isfinite(times)) or times[0] <= 0 or np.any(np.diff(times) <= 0):
            raise InputError(
                f'trajectory: time_from_start must be finite, > 0 and strictly increasing, got '
                f'{times.tolist()}'
            )
        positions = _array('positions', positions, (k, n))
        p0 = np.array(
            [
                _array('start position', start.position, (n,)),
            ]
        )
        v0 = _array('start velocity', start.velocity, (n,))
        a0 = _array('start acceleration', start.acceleration, (n,))
        t = np.concatenate([[0.0], times])
        y = np.concatenate([p0, positions])
        with np.errstate(over='ignore', invalid='ignore', divide='ignore'):  # checked below
            self._build(start_time, t, y, v0, a0, velocities, accelerations, k, n)
        if not np.all(np.isfinite(self._coefficients)):
            raise InputError(
                f'trajectory: the interpolation overflows (positions up to '
                f'{float(np.abs(y).max()):.3g}, shortest segment {float(np.diff(t).min()):.3g} '
                's): refused'
            )

    def _build(self, start_time, t, y, v0, a0, velocities, accelerations, k, n):
        try:
            v_est, a_est = spline_derivatives(t, y, v0, np.zeros(n))
        except np.linalg.LinAlgError:  # refused by the caller (non-finite)
            v_est, a_est = np.full_like(y, np.nan), np.full_like(y, np.nan)
        v = (
            v_est
            if velocities is None
            else np.concatenate([[v0], _array('velocities', velocities, (k, n))])
        )
        if accelerations is not None:
            a = np.concatenate([[a0], _array('accelerations', accelerations, (k, n))])
        elif velocities is None:
            a = a_est
        else:  # given velocities: accelerations from their finite differences
            a = np.gradient(v, t, axis=0) if k > 1 else np.zeros_like(v)
        a[0] = a0
        if velocities is None:
            v[-1] = 0.0
        if accelerations is None:
            a[-1] = 0.0
        self.start_time = float(start_time)
        self.times = t  # knot times after the start, (k + 1,)
        self._knots = t.tolist()  # the same, for bisect (a tenth of searchsorted's cost)
        self.end_time = self.start_time + t[-1]
        self.n = n
        self._coefficients = _quintic_coefficients(t, y, v, a)  # (k, 6, n)
        self._final = Reference(y[-1].copy(), v[-1].copy(), a[-1].copy())
        self._start = Reference(y[0].copy(), v[0].copy(), a[0].copy())

    @property
    def final(self):
        """Return the reference at the last waypoint (held afterwards)."""
        return self._final

    def sample(self, now):
        """
        Return the :data:`Reference` at time ``now`` (s, the clock of ``start_time``).

        The start state before the start, the last waypoint (held, zero velocity and acceleration
        unless the waypoint gave others) after the end.
        """
        s = float(now) - self.start_time
        if s <= 0:
            return Reference(*(x.copy() for x in self._start))
        if s >= self._knots[-1]:
            if s == self._knots[-1]:
                return Reference(*(x.copy() for x in self._final))
            return Reference(self._final.position.copy(), np.zeros(self.n), np.zeros(self.n))
        knots = self._knots
        i = bisect.bisect_right(knots, s) - 1  # np.searchsorted(times, s, 'right') - 1
        p, v, a = np.empty((3, self.n))  # one allocation, three rows
        # the quintic and its derivatives at the time into segment i, compiled
        _quintic_sample(self._coefficients, i, s - knots[i], p, v, a)
        return Reference(p, v, a)

    def samples(self, times, out):
        """
        Write the references at control times ``times`` (m,) into ``out`` = (q, qd, qdd) (m, n).

        What :meth:`sample` returns at each time, in one vectorized pass (a preview of the
        horizon: :mod:`spart_ros.control.mpc`).
        """
        q, qd, qdd = out
        s = np.asarray(times, dtype=float) - self.start_time
        end = self.times[-1]
        i = np.clip(np.searchsorted(self.times, s, side='right') - 1, 0, len(self.times) - 2)
        x = np.clip(s - self.times[i], 0.0, None)[:, None]
        c = self._coefficients[i]  # (m, 6, n)
        x2 = x * x
        x3 = x2 * x
        q[:] = c[:, 0] + x * c[:, 1] + x2 * c[:, 2] + x3 * c[:, 3] + x2 * x2 * c[:, 4]
        q += x3 * x2 * c[:, 5]
        qd[:] = c[:, 1] + 2 * x * c[:, 2] + 3 * x2 * c[:, 3] + 4 * x3 * c[:, 4]
        qd += 5 * x2 * x2 * c[:, 5]
        qdd[:] = 2 * c[:, 2] + 6 * x * c[:, 3] + 12 * x2 * c[:, 4] + 20 * x3 * c[:, 5]
        before, after = s <= 0, s >= end
        for mask, ref in ((before, self._start), (after, self._final)):
            if mask.any():
                q[mask], qd[mask], qdd[mask] = ref.position, ref.velocity, ref.acceleration
        beyond = s > end
        if beyond.any():
            qd[beyond] = 0.0
            qdd[beyond] = 0.0

    def done(self, now):
        """Return whether the trajectory has ended at control time ``now`` (s)."""
        return float(now) >= self.end_time


def _quintic_coefficients(t, y, v, a):
    """
    Per segment i, the coefficients c (6, n) of p(x) = sum_j c_j x^j, x = time into the segment.

    Matching (y, v, a) at both knots.
    """
    h = np.diff(t)[:, None]
    y0, y1, v0, v1, a0, a1 = y[:-1], y[1:], v[:-1], v[1:], a[:-1], a[1:]
    c0, c1, c2 = y0, v0, a0 / 2
    # remaining three from the end conditions (standard quintic Hermite)
    d = y1 - y0 - v0 * h - a0 * h**2 / 2
    e = v1 - v0 - a0 * h
    f = a1 - a0
    c3 = (10 * d - 4 * e * h + f * h**2 / 2) / h**3
    c4 = (-15 * d + 7 * e * h - f * h**2) / h**4
    c5 = (6 * d - 3 * e * h + f * h**2 / 2) / h**5
    return np.stack([c0, c1, c2, c3, c4, c5], axis=1)


def hold(now, position):
    """
    Return the trajectory that holds ``position`` from ``now`` on.

    Zero velocity/acceleration.
    """
    p = np.array(position, dtype=float)
    return _Hold(float(now), p)


class _Hold:

    def __init__(self, start_time, position):
        self.start_time = self.end_time = start_time
        self.n = len(position)
        self._ref = Reference(position, np.zeros(self.n), np.zeros(self.n))
        self.final = self._ref

    def sample(self, now):
        ref = self._ref
        return Reference(ref.position.copy(), ref.velocity.copy(), ref.acceleration.copy())

    def samples(self, times, out):
        out[0][:] = self._ref.position
        out[1][:] = 0.0
        out[2][:] = 0.0

    def done(self, now):
        return True


class ReferenceSchedule:
    """
    The joint reference over control time, from the trajectory (or hold) ``first``.

    The trajectory (or hold) followed now, then the ones queued to start later (a trajectory
    stamped in the future).

    :meth:`replace` installs a trajectory from its ``start_time`` on: every queued one starting
    at or after that time is dropped, the earlier ones run until then.  Build the new trajectory
    from :meth:`sample` at its start time: it then continues the reference actually followed at
    that instant (position, velocity, acceleration), whatever was running or queued.
    """

    def __init__(self, first):
        self._segments = [first]

    def _at(self, t):
        segments = self._segments
        segment = segments[0]
        if len(segments) == 1:  # (most ticks)
            return segment
        for s in segments[1:]:
            if s.start_time > t:
                break
            segment = s
        return segment

    def sample(self, t):
        """Return :data:`Reference` followed at time ``t`` (s, the clock of the start times)."""
        return self._at(t).sample(t)

    def samples(self, times, out):
        """
        Write the references followed at times ``times`` (m,) into ``out`` = (q, qd, qdd) (m, n).

        As :meth:`sample` at each time, vectorized per trajectory (a look-ahead: the mpc modes).
        """
        times = np.asarray(times, dtype=float)
        starts = [s.start_time for s in self._segments[1:]]
        which = np.searchsorted(starts, times, side='right')  # the segment of each time
        for k in np.unique(which):
            rows = np.flatnonzero(which == k)
            parts = tuple(np.empty((len(rows), x.shape[1])) for x in out)
            self._segments[k].samples(times[rows], parts)
            for x, part in zip(out, parts):
                x[rows] = part

    def replace(self, trajectory):
        """Follow ``trajectory`` from its start time on (see the class docstring)."""
        self._segments = [s for s in self._segments if s.start_time < trajectory.start_time] + [
            trajectory
        ]

    def advance(self, t):
        """Forget the trajectories replaced before time ``t`` (call with the control time)."""
        segments = self._segments
        while len(segments) > 1 and segments[1].start_time <= t:
            segments.pop(0)

    @property
    def end_time(self):
        """When the last queued trajectory ends (its final position is held afterwards)."""
        return self._segments[-1].end_time

    def __len__(self):
        return len(self._segments)
