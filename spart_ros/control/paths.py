"""
Point-to-point motions with a time scaling (Modern Robotics, ch. 9.2).

Sampled at any time with their velocity and acceleration, for a controller to follow.

- :class:`JointPath`: a straight line in joint space, q(t) = q_start + s(t) (q_end - q_start)
  (MR's ``JointTrajectory``); samples are :data:`~spart_ros.control.trajectory.Reference`
  (position, velocity, acceleration), the joint reference the effort laws take.
- :class:`CartesianPath`: the end-effector point on the straight line between the two
  positions, p(t) = p_start + s(t) (p_end - p_start), and the frame turning about one fixed axis,
  R(t) = R_start exp(s(t) log(R_start' R_end)) (MR's ``CartesianTrajectory``: translation and
  rotation decoupled).
- :class:`ScrewPath`: the frame moving along the constant screw that takes it from the start
  pose to the end pose, T(t) = T_start exp(s(t) log(T_start^-1 T_end)) (MR's
  ``ScrewTrajectory``: the point follows a helix, a straight line only without rotation).

s(t) is the cubic or quintic time scaling (:mod:`.time_scaling`) over ``duration`` from
``start_time`` (the controller's clock).  Pose samples are :data:`PoseSample` in the inertial
(world) frame, in the rows of SPART's point Jacobian, so that a controller tracks them with
J u = twist and J udot + Jdot u = acceleration:

    rotation (3, 3), position (3,): the end-effector frame and point;
    twist (6,) = [angular velocity; velocity of the point];
    acceleration (6,) = [angular acceleration; (classical) acceleration of the point].

Before ``start_time`` a path holds its start, after ``end_time`` its end, at rest (both time
scalings start and end at rest, so the samples are continuous; the cubic's acceleration steps
at both ends).  Poses are 4x4 homogeneous transforms (rotation block within 1e-3 of a rotation,
projected onto the nearest one; bottom row [0, 0, 0, 1]); InputError names a bad argument.
"""

from collections import namedtuple

import numpy as np

from .time_scaling import check_duration, time_scaling
from .trajectory import Reference
from ..core import checks as chk
from ..core.errors import InputError
from ..core.rigid_motion import (
    _rotation_from_vector,
    _rotation_vector,
    _transform_exp,
    _transform_log,
    checked_transform,
)

__all__ = ['PoseSample', 'JointPath', 'CartesianPath', 'ScrewPath', 'pose_matrix']

PoseSample = namedtuple('PoseSample', 'rotation position twist acceleration')
PoseSample.__doc__ = """An end-effector reference at one instant, inertial frame: ``rotation`` (3,
3), ``position`` (3,), ``twist`` (6,) [angular velocity; velocity of the point], ``acceleration``
(6,) [angular acceleration; acceleration of the point]."""


def pose_matrix(rotation, position):
    """Return the 4x4 homogeneous transform of a rotation (3, 3) and a position (3,)."""
    T = np.eye(4)
    T[:3, :3] = rotation
    T[:3, 3] = position
    return T


def _pose(name, T):
    R, p = checked_transform(name, T)
    U, _, Vt = np.linalg.svd(R)  # the nearest rotation (a float32 or rounded pose passes)
    return U @ Vt, p.copy()


class _Timed:
    """
    The time base shared by the paths.

    s(t) of ``scaling`` over ``duration`` from ``start_time``.
    """

    def __init__(self, duration, scaling, start_time):
        self.duration = check_duration(duration)
        self._scaling = time_scaling(scaling)
        self.scaling = self._scaling.__name__.split('_')[0]
        self.start_time = chk.scalar('start_time', start_time)
        if not isinstance(self.start_time, float):
            raise InputError(
                f'start_time: expected a time in seconds, got {chk.given(start_time)}'
            )
        self.end_time = self.start_time + self.duration

    def _s(self, t):
        return self._scaling(self.duration, chk.scalar('t', t) - self.start_time)

    def done(self, t):
        """Return True from ``end_time`` on."""
        return float(t) >= self.end_time

    def samples(self, count):
        """``count`` (>= 2) samples evenly spaced from start_time to end_time (MR's N)."""
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 2:
            raise InputError(f'count: expected an integer >= 2, got {chk.given(count)}')
        return [
            self.sample(self.start_time + self.duration * k / (count - 1))
            for k in range(int(count))
        ]


class JointPath(_Timed):
    """
    Straight line in joint space from ``start`` (n,) to ``end`` (n,) over ``duration`` [s].

    MR's ``JointTrajectory``; :meth:`sample` gives a :data:`Reference`.  ``scaling``: 'cubic'
    or 'quintic'; ``start_time`` [s]: when the path starts.
    """

    def __init__(self, start, end, duration, scaling='quintic', start_time=0.0):
        super().__init__(duration, scaling, start_time)
        self.start = chk.numeric('start', chk.array('start', start, (None,)), 'a joint path')
        self.end = chk.numeric('end', chk.vector('end', end, len(self.start)), 'a joint path')
        self._delta = self.end - self.start

    def sample(self, t):
        """Return the :data:`Reference` (position, velocity, acceleration) at time ``t``."""
        s, ds, dds = self._s(t)
        return Reference(self.start + s * self._delta, ds * self._delta, dds * self._delta)

    @property
    def final(self):
        return self.sample(self.end_time)


class CartesianPath(_Timed):
    """
    Straight line of the point and rotation about a fixed axis.

    From pose ``start`` (4, 4) to ``end`` (4, 4) over ``duration`` [s] (MR's
    ``CartesianTrajectory``); see the module docstring.  ``scaling``: 'cubic' or 'quintic';
    ``start_time`` [s]: when the path starts.
    """

    def __init__(self, start, end, duration, scaling='quintic', start_time=0.0):
        super().__init__(duration, scaling, start_time)
        self._R0, self._p0 = _pose('start', start)
        R1, p1 = _pose('end', end)
        self._dp = p1 - self._p0
        self._w = _rotation_vector(self._R0.T @ R1)  # rotation vector, start frame
        self._w_world = self._R0 @ self._w  # the fixed axis times the angle, world

    def sample(self, t):
        """Return :data:`PoseSample` at time ``t``."""
        s, ds, dds = self._s(t)
        R = self._R0 @ _rotation_from_vector(s * self._w)
        return PoseSample(
            R,
            self._p0 + s * self._dp,
            np.concatenate([ds * self._w_world, ds * self._dp]),
            np.concatenate([dds * self._w_world, dds * self._dp]),
        )

    @property
    def final(self):
        return self.sample(self.end_time)


class ScrewPath(_Timed):
    """
    Constant-screw motion from pose ``start`` (4, 4) to ``end`` (4, 4) over ``duration`` [s].

    MR's ``ScrewTrajectory``; see the module docstring.  ``scaling``: 'cubic' or 'quintic';
    ``start_time`` [s]: when the path starts.
    """

    def __init__(self, start, end, duration, scaling='quintic', start_time=0.0):
        super().__init__(duration, scaling, start_time)
        R0, p0 = _pose('start', start)
        R1, p1 = _pose('end', end)
        self._T0 = pose_matrix(R0, p0)
        self._V = _transform_log(R0.T @ R1, R0.T @ (p1 - p0))  # body twist of the whole motion
        self._wxv = np.cross(self._V[0:3], self._V[3:6])

    def sample(self, t):
        """Return :data:`PoseSample` at time ``t``."""
        s, ds, dds = self._s(t)
        T = self._T0 @ _transform_exp(s * self._V)
        R = T[:3, :3]
        w, v = R @ self._V[0:3], R @ self._V[3:6]  # the body twist's axes in the world
        return PoseSample(
            R.copy(),
            T[:3, 3].copy(),
            np.concatenate([ds * w, ds * v]),
            np.concatenate([dds * w, dds * v + ds * ds * (R @ self._wxv)]),
        )

    @property
    def final(self):
        return self.sample(self.end_time)
