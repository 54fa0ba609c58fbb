"""
End-effector pose goals: reach a pose in a given time along a chosen path (pure Python).

A :class:`PoseGoal` asks the controller's end effector (``ee_link``, the point ``ee_offset`` in
its URDF frame, its axes) to go from where its reference is when the goal starts to a target
pose in ``duration`` seconds, along a straight line (``path='cartesian'``: the point on a
straight line, the frame turning about one fixed axis, Modern Robotics' ``CartesianTrajectory``)
or a constant screw (``'screw'``: ``ScrewTrajectory``), timed by a cubic or quintic time scaling
(:mod:`.paths`, :mod:`.time_scaling`).  How it is followed depends on the mode:

- **end-effector modes** (the space-robot modes, the Cartesian impedance): the path is sampled
  at every tick, its pose the law's target and its twist the feed-forward
  (:meth:`Controller.submit_pose <spart_ros.control.controller.Controller.submit_pose>` hands
  it to the law as the reference ``'ee_goal'``; the law starts the path at its first tick at or
  after the goal's start, from the pose target it had, or from the measured pose);
- **fixed-base joint modes** (``computed_torque``, ``joint_impedance``): by inverse kinematics
  at samples of the path (:func:`joint_trajectory_of`): every ``path_sample_period`` (default
  50 ms) the joint positions that put the end effector on the path (damped Newton-Raphson from
  the previous sample, within the joint limits), the joint velocities J# twist and
  accelerations J# (twist' - J' qd) (J# the pseudo-inverse: the least joint motion of a
  redundant arm), interpolated by the controller's C2 quintic joint trajectory: the end effector
  leaves the path by far less than a micrometre between samples (7 nm and 2e-8 rad measured on
  the KUKA iiwa with 50 ms samples, 1 nm with 20 ms: test/test_ee_goals.py), and the goal is a
  joint trajectory from then on (started
  without a jump from the reference followed, checked against the limits, a tracking fault
  aborts it).  A path that leaves the workspace or the joint limits is refused, naming where.

Frames: ``frame='world'`` (the world frame, the odometry's for a floating base) or ``'base'``
(the URDF base link frame: the target is moved with the base pose of the goal's start).
Goal progress (``status``, ``message``, ``start_time``, ``end_time``) as
:class:`~spart_ros.control.goals.TrajectoryGoal`'s: pending, queued, active, succeeded,
preempted, aborted, canceled.
"""

import itertools
import math

import numpy as np

from .goals import ABORTED, ACTIVE, DONE, PENDING, PREEMPTED, QUEUED, SUCCEEDED, TrajectoryGoal
from .paths import CartesianPath, pose_matrix, ScrewPath
from .time_scaling import check_duration, time_scaling
from ..core import checks as chk
from ..core.errors import InputError
from ..core.rigid_motion import checked_transform

__all__ = ['PoseGoal', 'GoalFollower', 'PATHS', 'make_path', 'joint_trajectory_of']

#: path name -> class
PATHS = {'cartesian': CartesianPath, 'screw': ScrewPath}
FRAMES = ('world', 'base')
_ids = itertools.count(1)


class PoseGoal:
    """
    Reach ``rotation`` (3, 3), ``position`` (3,) of the end-effector frame and point.

    In ``duration`` [s] along ``path`` ('cartesian' or 'screw') with the time ``scaling``
    ('quintic' or 'cubic'), target given in ``frame`` ('world' or 'base'), starting at control time
    ``start`` (0 or past = at once). Set by the controller: ``status``, ``message``,
    ``start_time``, ``end_time`` (those of the joint trajectory it became, ``trajectory``, in the
    joint modes), ``id``. :meth:`create` checks every argument (InputError naming it).
    """

    def __init__(
        self,
        rotation,
        position,
        duration,
        path='cartesian',
        scaling='quintic',
        frame='world',
        start=0.0,
    ):
        self.rotation, self.position, self.duration = rotation, position, duration
        self.path, self.scaling, self.frame, self.start = path, scaling, frame, start
        self.trajectory = None
        self._status, self._message, self._start_time, self._end_time = PENDING, '', None, None
        self.id = next(_ids)

    def __repr__(self):
        return (
            f'<PoseGoal {self.id} {self.path} {self.duration:g} s to '
            f'p={np.round(self.position, 4).tolist()} ({self.frame}): {self.status}>'
        )

    @classmethod
    def create(
        cls,
        rotation,
        position,
        duration,
        path='cartesian',
        scaling='quintic',
        frame='world',
        start=0.0,
    ):
        """
        Return a checked goal (InputError naming a bad argument).

        The end effector's target ``rotation`` (3, 3) and ``position`` (3,) in ``frame`` ('world'
        or 'base'), reached in ``duration`` [s] along ``path`` ('cartesian' or 'screw') with the
        time ``scaling`` ('cubic' or 'quintic'), starting at control time ``start`` [s].
        """
        R, p = checked_transform(
            'pose',
            pose_matrix(
                chk.array('rotation', rotation, (3, 3)), chk.vector('position', position, 3)
            ),
        )
        U, _, Vt = np.linalg.svd(R)
        if path not in PATHS:
            raise InputError(f"path: expected 'cartesian' or 'screw', got {chk.given(path)}")
        time_scaling(scaling)
        if frame not in FRAMES:
            raise InputError(f"frame: expected 'world' or 'base', got {chk.given(frame)}")
        start = chk.scalar('start', start)
        if not isinstance(start, float) or not math.isfinite(start):
            raise InputError(f'start: expected a control time in seconds, got {chk.given(start)}')
        return cls(U @ Vt, p.copy(), check_duration(duration), path, scaling, frame, start)

    # progress: the joint trajectory's when there is one
    def _field(name):
        def get(self):
            t = self.trajectory
            return getattr(t, name) if t is not None else getattr(self, '_' + name)

        def put(self, value):
            setattr(self, '_' + name, value)

        return property(get, put)

    status, message, start_time, end_time = (
        _field('status'),
        _field('message'),
        _field('start_time'),
        _field('end_time'),
    )
    del _field

    @property
    def done(self):
        return self.status in DONE

    def _finish(self, status, message='', code=None):
        if self.trajectory is not None:
            self.trajectory._finish(status, message, code)
        elif not self.done:
            self.status, self.message = status, message

    def target(self, R_b=None, p_b=None):
        """
        Return (R, p) of the target in the world.

        As given, or moved by the base pose (R_b, p_b) for ``frame='base'``.
        """
        if self.frame == 'base':
            return R_b @ self.rotation, p_b + R_b @ self.position
        return self.rotation, self.position


class GoalFollower:
    """
    The pose goal an end-effector law follows.

    :meth:`set_goal` a goal, then at each tick :meth:`sample` (the path starts at the first tick at
    or after the goal's start, from the pose ``start_pose()`` returns then); a newer goal or
    reference preempts it, :meth:`abort` drops it.
    """

    def __init__(self):
        self.goal = self.path = None

    @property
    def active(self):
        return self.goal is not None

    def set_goal(self, goal):
        """Follow ``goal`` from the next tick on (the one followed so far is preempted)."""
        self.preempt(f'replaced by goal {goal.id}')
        goal.status, goal.message = PENDING, 'starts at the next tick'
        self.goal, self.path = goal, None

    def preempt(self, why):
        """End the goal followed (if any) as preempted, saying ``why``."""
        if self.goal is not None:
            self.goal._finish(PREEMPTED, why)
        self.goal = self.path = None

    def abort(self, why):
        """End the goal followed (if any) as aborted, saying ``why``."""
        if self.goal is not None:
            self.goal._finish(ABORTED, why)
        self.goal = self.path = None

    def sample(self, t, start_pose, base):
        """
        Return (PoseSample at control time ``t`` or None (no goal, or it starts later), finished).

        ``finished`` True at the tick the path reaches its end (the goal succeeded, forgotten: the
        caller keeps the last sample as its target). ``start_pose()``: (R, p) world of where the
        path starts; ``base``: the base state (R_b, p_b) for a target in the base frame.
        """
        g = self.goal
        if g is None:
            return None, False
        if self.path is None:
            if t < g.start:
                g.status, g.message = QUEUED, f'starts at {g.start:.6f} s'
                return None, False
            R, p = start_pose()
            self.path = make_path(g, R, p, t, base.R_b, base.p_b)
            g.status, g.message, g.start_time, g.end_time = ACTIVE, '', t, self.path.end_time
        s = self.path.sample(t)
        if t >= g.end_time:
            g._finish(SUCCEEDED, f'reached the target at {g.end_time:.6f} s')
            self.goal = self.path = None
            return s, True
        return s, False


def make_path(goal, R_start, p_start, start_time, R_b=None, p_b=None):
    """
    Return the path of ``goal`` from the pose (R_start, p_start) (world) at ``start_time``.

    ``R_b``, ``p_b``: the base link pose in the world, for a goal given in the base frame.
    """
    R_d, p_d = goal.target(R_b, p_b)
    return PATHS[goal.path](
        pose_matrix(R_start, p_start),
        pose_matrix(R_d, p_d),
        goal.duration,
        goal.scaling,
        float(start_time),
    )


def joint_trajectory_of(path, ik, seed, R0, r0, sample_period=0.05, tolerance=1e-9, start=0.0):
    """
    Return the joint trajectory goal that puts the end effector of ``ik`` on ``path``.

    A :class:`~spart_ros.control.goals.TrajectoryGoal` (every joint of ``ik.names``); ``ik``: a
    fixed-base :class:`~spart_ros.core.inverse_kinematics.InverseKinematics`; ``path``: see the
    module docstring. Knots every ``sample_period`` or less (the duration divided evenly), joint
    positions by IK from ``seed`` (n,) then from the previous knot (to ``tolerance`` m and rad),
    velocities J# twist, accelerations J# (acceleration - J' qd), base (R0, r0) held; times after
    the path's start, the goal starting at control time ``start``. InputError saying where the path
    cannot be followed (unreachable, or the joint limits).
    """
    sample_period = check_duration(sample_period, 'path_sample_period')
    k = max(1, int(math.ceil(path.duration / sample_period - 1e-9)))
    fast = ik.fast
    q = np.asarray(seed, dtype=float).copy()
    points = []
    zero6 = np.zeros(6)
    for i in range(1, k + 1):
        tau = path.duration * i / k
        s = path.sample(path.start_time + tau)
        res = ik.solve(
            s.position,
            q,
            s.rotation,
            R0=R0,
            r0=r0,
            tol_rotation=tolerance,
            tol_position=tolerance,
            max_iterations=50,
        )
        if not res.success:
            raise InputError(
                f'the {type(path).__name__} cannot be followed: at {tau:.3f} s of '
                f'{path.duration:.3f} s inverse kinematics stops {res.position_error:.3g} m and '
                f'{res.rotation_error:.3g} rad from it ({res.status}: out of reach, or held by a '
                'joint limit)'
            )
        q = res.q
        J, _ = fast.jacobian(ik.link, R0, r0, q, offset=ik._offset, bias=False)
        pinv = np.linalg.pinv(J[:, 6:])
        qd = pinv @ s.twist
        _, Jdot_qd = fast.jacobian(
            ik.link, R0, r0, q, zero6, qd, offset=ik._offset, floating=False
        )
        qdd = pinv @ (s.acceleration - Jdot_qd)
        points.append((tau, q.copy(), qd, qdd))
    return TrajectoryGoal.from_points(ik.names, points, start)
