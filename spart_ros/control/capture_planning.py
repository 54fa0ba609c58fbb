"""
Is a capture feasible, and when to grasp: checked before any attempt (pure numpy, no ROS).

:meth:`CapturePlanner.plan` takes the robot's state, the fixture's predicted motion
(:class:`~spart_ros.core.free_body.FixturePrediction`) and the goal's timing, and returns a
:data:`CapturePlan` (the grasp time, the approach's duration, the joint configuration and rates
at the grasp) or raises :class:`~spart_ros.control.capture_goal.CaptureRefused` naming the cause:

- **out of reach** (:data:`~.capture_goal.OUT_OF_REACH`): the grasp frame is farther from the
  arm's first moving joint than the arm reaches (an upper bound: the lengths of its links along
  the chain to the end effector, times ``reach_margin``) through the synchronisation window at
  every candidate grasp time, or no joint configuration within the position limits (less
  ``limit_margin``) follows the reference (inverse kinematics from the current configuration, the
  base where it is now, along the approach path of :mod:`.capture_reference` and the fixture's
  motion through the window, every ``sample`` s);
- **too fast** (:data:`~.capture_goal.TOO_FAST`): following that reference needs a joint rate
  above ``rate_margin`` of its velocity limit (the rates that give the reference's twist at each
  sample), or an effort above ``effort_margin`` of its effort limit (the accelerations by finite
  differences of the rates, the efforts with the base's attitude held).

Candidate grasp times are tried from t0 + ``approach_time`` (or the shortest approach,
``min_approach_time``) on, every ``step`` s, up to t0 + the approach timeout; the first feasible
one is the plan.  The base is taken where it is (it holds its attitude and moves little while a
much lighter arm moves); the closed loop corrects what that leaves.
"""

from collections import namedtuple

import numpy as np

from .capture_goal import CaptureRefused, OUT_OF_REACH, TOO_FAST
from .capture_motion import _per_joint, held_base_dynamics
from .capture_reference import ApproachPath
from .end_effector import EndEffector
from .free_floating import FreeFloatingKinematics
from .law import BaseFrames
from .space_motion import urdf_joint_rates
from ..core import checks as chk
from ..core.attitude import _cross  # np.cross costs 8 times as much on 3-vectors
from ..core.errors import InputError
from ..core.fast import FastDynamics
from ..core.inverse_kinematics import InverseKinematics
from ..core.kinematics import kinematics

__all__ = ['CapturePlanner', 'CapturePlan', 'reach']

CapturePlan = namedtuple(
    'CapturePlan',
    't0 t_grasp approach_time q_grasp qd_grasp peak_rate peak_effort distance reach message',
)
CapturePlan.__doc__ = """A feasible capture: ``t0`` [s] the approach's start, ``t_grasp`` [s] the
planned grasp time, ``approach_time`` = t_grasp - t0; ``q_grasp`` (n_q,) the configuration at the
grasp (inverse kinematics), ``qd_grasp`` (n_q,) the rates that follow the fixture there;
``peak_rate``, ``peak_effort``: the largest fraction of a joint's velocity and effort limit the
synchronisation window needs; ``distance`` [m]: the grasp frame's distance from the arm's first
joint at the grasp, ``reach`` [m] the arm's; ``message``: the plan in words."""


def reach(robot, link, point=None):
    """
    Return (root joint id, reach [m]): the first moving joint toward ``link`` and an upper bound.

    ``link``: SPART id or name; ``point`` (3,): the end-effector point in the link's URDF frame.
    The bound is the sum of the distances between consecutive joint origins along the chain, and
    to the point, plus the strokes of its prismatic joints (inf if one has no limits).
    """
    i = chk.link_id('link', link, robot)
    path = []
    while i != 0:
        path.append(i)
        i = int(robot.parent[i - 1])
    path.reverse()
    moving = [j for j in path if robot.joints[j - 1].type != 0]
    if not moving:
        raise InputError(f'link {link!r}: no moving joint between the base and it')
    k = kinematics(np.eye(3), np.zeros(3), np.zeros(robot.n_q), robot)
    rJ = np.asarray(k.rJ, dtype=float).reshape(3, -1)
    R_l, r_l = np.asarray(k.RL, float).reshape(3, 3, -1), np.asarray(k.rL, float).reshape(3, -1)
    last = path[-1]
    T = np.asarray(robot.link(last).T, dtype=float)  # CoM frame in the URDF link frame
    p_link = r_l[:, last - 1] - R_l[:, :, last - 1] @ T[:3, :3].T @ T[:3, 3]
    R_link = R_l[:, :, last - 1] @ T[:3, :3].T
    tip = p_link + R_link @ (np.zeros(3) if point is None else np.asarray(point, float))
    start = path.index(moving[0])
    points = [rJ[:, j - 1] for j in path[start:]] + [tip]
    total = sum(float(np.linalg.norm(b - a)) for a, b in zip(points, points[1:]))
    for j in path[start:]:
        joint = robot.joints[j - 1]
        if joint.type == 2:
            stroke = joint.limits.upper - joint.limits.lower
            total += stroke if np.isfinite(stroke) else np.inf
    return moving[0], total


class CapturePlanner:
    """
    The feasibility and timing of a capture for one end effector (see the module docstring).

    ``robot``, ``link``, ``offset`` (the end-effector point in the link's URDF frame); the bounds
    ``max_joint_rates``, ``max_efforts`` (default the URDF limits), the margins ``rate_margin``,
    ``effort_margin``, ``reach_margin`` (fractions of the bounds a plan may use); ``window`` [s]:
    the synchronisation window checked; ``step`` [s]: between candidate grasp times; ``sample``
    [s]: between the samples of the path checked; ``limit_margin`` [rad or m]: how far from its
    position limits a planned configuration stays; ``dynamics``: the robot's FastDynamics to
    share.
    """

    def __init__(
        self,
        robot,
        link,
        offset=None,
        *,
        max_joint_rates=None,
        max_efforts=None,
        rate_margin=0.8,
        effort_margin=0.8,
        reach_margin=0.95,
        window=1.0,
        step=0.5,
        sample=0.25,
        limit_margin=0.1,
        dynamics=None,
    ):
        self.robot = robot
        fd = FastDynamics(robot) if dynamics is None else dynamics
        self.end_effector = EndEffector(robot, link, offset, 'link')
        self.link = self.end_effector.link
        self.point = None if offset is None else chk.vector('offset', offset, 3)
        self.kinematics = FreeFloatingKinematics(
            robot, self.link, self.end_effector.offset, fd.new_workspace()
        )
        self.dynamics = fd.new_workspace()
        self.ik = InverseKinematics(robot, self.link, self.point, 'fixed', fd.new_workspace())
        n = robot.n_q
        moving = sorted((j for j in robot.joints if j.q_id > 0), key=lambda j: j.q_id)
        rates = urdf_joint_rates(robot) if max_joint_rates is None else max_joint_rates
        self.max_joint_rates = _per_joint('max_joint_rates', rates, n)
        efforts = (
            [j.limits.effort if j.limits.effort > 0 else np.inf for j in moving]
            if max_efforts is None
            else max_efforts
        )
        self.max_efforts = _per_joint('max_efforts', efforts, n)
        self.rate_margin = chk.scalar('rate_margin', rate_margin)
        self.effort_margin = chk.scalar('effort_margin', effort_margin)
        self.reach_margin = chk.scalar('reach_margin', reach_margin)
        self.window = chk.nonnegative('window', window)
        self.step = chk.scalar('step', step)
        self.sample = chk.scalar('sample', sample)
        if not (self.step > 0 and self.sample > 0):
            raise InputError(f'step, sample: expected times > 0 s, got {self.step}, {self.sample}')
        # the configurations planned keep this far from the position limits
        self.limit_margin = chk.nonnegative('limit_margin', limit_margin)
        lower, upper = self.ik.lower, self.ik.upper
        room = np.where(upper - lower > 2 * self.limit_margin, self.limit_margin, 0.0)
        self.ik.lower, self.ik.upper = lower + room, upper - room
        self.root, self.reach = reach(robot, self.link, self.point)
        self.frames = BaseFrames(robot)
        self.mass = float(robot.base_link.mass + sum(lk.mass for lk in robot.links))

    def _root_position(self, R0, r0, q):
        k = kinematics(R0, r0, q, self.robot)
        return np.asarray(k.rJ, dtype=float).reshape(3, -1)[:, self.root - 1]

    @staticmethod
    def _grasp_frame(prediction, t, G):
        m = prediction.motion(t)
        R, p = m.R @ G[:3, :3], m.p + m.R @ G[:3, 3]
        w = m.twist[0:3]
        twist = np.concatenate([w, m.twist[3:6] + _cross(w, p - m.p)])
        return R, p, twist

    def _follow(self, R0, r0, q_seed, path, times):
        """
        Return ((configurations, rates) (k, n_q), None) along ``path`` at ``times``.

        Or (None, (t, IKResult)) at the first time no configuration reaches the reference.
        """
        qs, qds = [], []
        q = q_seed
        for t in times:
            ref = path.sample(t)
            res = self.ik.solve(
                ref.p, q, ref.R, R0=R0, r0=r0, tol_position=1e-6, tol_rotation=1e-6
            )
            if not res.success:
                return None, (t, res)
            q = res.q
            ff = self.kinematics.update(R0, r0, q)
            J = ff.Jm - ff.J0[:, 3:6] @ ff.H0m[3:6] / self.mass
            qds.append(np.linalg.lstsq(J, ref.twist, rcond=None)[0])
            qs.append(q)
        return (np.array(qs), np.array(qds)), None

    def _efforts(self, R0, r0, qs, qds, times):
        """Return the largest efforts (n_q,) along the samples, the base's attitude held."""
        peak = np.zeros(self.robot.n_q)
        qdds = np.gradient(qds, times, axis=0)
        fd = self.dynamics
        for q, qd, qdd in zip(qs, qds, qdds):
            H = np.array(fd.mass_matrix(R0, r0, q))
            u0 = np.zeros(6)
            u0[3:6] = -H[3:6, 6:] @ qd / self.mass  # zero linear momentum, base not turning
            tau0, taum = fd.inverse_dynamics(R0, r0, q, u0, qd, np.zeros(6), np.zeros(len(q)))
            bias = np.concatenate([tau0, taum])
            _, _, taum = held_base_dynamics(H, bias, np.zeros(3), qdd)
            peak = np.maximum(peak, np.abs(taum))
        return peak

    def plan(
        self,
        state,
        prediction,
        t0,
        grasp_offset=None,
        approach_time=0.0,
        min_approach_time=2.0,
        approach_timeout=30.0,
        standoff=0.0,
    ):
        """
        Return the :data:`CapturePlan`, or raise CaptureRefused naming why (module docstring).

        ``state``: the robot's measured state (``base`` with R_b, p_b...; ``q``); ``prediction``:
        the fixture's; ``t0`` [s]: now; ``grasp_offset`` (4, 4): the end-effector frame in the
        fixture frame at the grasp (None: identity); ``approach_time`` [s] (0: the shortest
        feasible from ``min_approach_time`` on); ``approach_timeout`` [s]: the longest approach;
        ``standoff`` [m]: the approach path's (:class:`~.capture_reference.ApproachPath`).
        """
        G = np.eye(4) if grasp_offset is None else np.asarray(grasp_offset, dtype=float)
        R0, r0 = (a.copy() for a in self.frames.pose(state.base))
        q0 = np.array(state.q, dtype=float)
        R_e, p_e = self.end_effector.pose(R0, r0, q0)
        start = np.eye(4)
        start[:3, :3], start[:3, 3] = R_e, p_e
        names = self.robot.q_names
        first = approach_time if approach_time > 0 else min_approach_time
        if first > approach_timeout:
            raise CaptureRefused(
                f'the approach ({first:g} s) is longer than its timeout ({approach_timeout:g} s)'
            )
        candidates = np.arange(first, approach_timeout + 1e-9, self.step)
        if approach_time > 0:
            candidates = candidates[:1]
        root = self._root_position(R0, r0, q0)
        limit = self.reach_margin * self.reach
        closest, ik_failure, too_fast = np.inf, None, None
        k_window = max(2, int(round(self.window / self.sample)) + 1)
        for T in candidates:
            t_g = t0 + float(T)
            window = t_g + np.linspace(0.0, self.window, k_window)
            dist = [
                float(np.linalg.norm(self._grasp_frame(prediction, t, G)[1] - root))
                for t in window
            ]
            closest = min(closest, max(dist))
            if max(dist) > limit:
                continue
            path = ApproachPath(prediction, start, t0, t_g, G, standoff)
            k = max(2, int(np.ceil(float(T) / self.sample)) + 1)
            times = np.concatenate([np.linspace(t0, t_g, k), window[1:]])
            followed, failure = self._follow(R0, r0, q0, path, times)
            if followed is None:
                ik_failure = failure
                continue
            qs, qds = followed
            rate = np.max(np.abs(qds), axis=0) / self.max_joint_rates
            effort = self._efforts(R0, r0, qs, qds, times) / self.max_efforts
            j_r, j_e = int(np.argmax(rate)), int(np.argmax(effort))
            if rate[j_r] > self.rate_margin or effort[j_e] > self.effort_margin:
                # a later grasp may do: a longer approach, or the fixture slower there
                k_r = int(np.argmax(np.abs(qds[:, j_r])))
                too_fast = (times[k_r], j_r, rate, times[k_r] >= t_g - 1e-9, j_e, effort)
                continue
            message = (
                f'grasp at t = {t_g:.3f} s after a {T:g} s approach: the grasp frame '
                f"{dist[0]:.3f} m from the arm's first joint (reach {self.reach:.3f} m); the "
                f"approach and synchronisation need up to {rate[j_r]:.0%} of {names[j_r]!r}'s "
                f"rate limit and {effort[j_e]:.0%} of {names[j_e]!r}'s effort limit"
            )
            i_g = k - 1
            return _plan(
                t0,
                t_g,
                float(T),
                qs[i_g],
                qds[i_g],
                rate[j_r],
                effort[j_e],
                dist[0],
                self.reach,
                message,
            )
        self._refuse(closest, limit, ik_failure, too_fast, names, approach_timeout)

    def _refuse(self, closest, limit, ik_failure, too_fast, names, timeout):
        if too_fast is not None:
            t, j_r, rate, synchronised, j_e, effort = too_fast
            if effort[j_e] > self.effort_margin:
                raise CaptureRefused(
                    f'target too fast: following its fixture needs {effort[j_e]:.0%} of '
                    f"{names[j_e]!r}'s effort limit ({self.max_efforts[j_e]:g}), more than the "
                    f'{self.effort_margin:.0%} allowed',
                    TOO_FAST,
                )
            phase = 'synchronisation' if synchronised else 'approach'
            raise CaptureRefused(
                f'target too fast: following its fixture needs {names[j_r]!r} at '
                f'{rate[j_r] * self.max_joint_rates[j_r]:.3g} rad/s at t = {t:.2f} s (the '
                f'{phase}; its limit {self.max_joint_rates[j_r]:g}, {self.rate_margin:.0%} of it '
                f'allowed), with every approach up to the timeout ({timeout:g} s)',
                TOO_FAST,
            )
        if ik_failure is not None:
            t, res = ik_failure
            raise CaptureRefused(
                f'target out of reach: no configuration within the joint limits (less '
                f'{self.limit_margin:g}) follows the fixture at t = {t:.2f} s (the closest '
                f'found misses by {res.position_error:.3g} m and {res.rotation_error:.3g} rad)',
                OUT_OF_REACH,
            )
        raise CaptureRefused(
            f"target out of reach: its fixture stays {closest:.3f} m or more from the arm's "
            f'first joint through the synchronisation window, the arm reaches '
            f'{self.reach:.3f} m ({limit:.3f} m with the margin)',
            OUT_OF_REACH,
        )


def _plan(t0, t_g, T, q, qd, rate, effort, distance, arm_reach, message):
    return CapturePlan(
        float(t0), t_g, T, q, qd, float(rate), float(effort), distance, arm_reach, message
    )
