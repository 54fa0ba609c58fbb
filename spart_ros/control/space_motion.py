"""
What every space-robot motion law shares: state and references in, joint rates and status out.

A law (:mod:`.resolved_rate`, :mod:`.reactionless`, :mod:`.desired_reaction`) is built once per
robot and end effector and called once per joint-state message:

    cmd = law.update(R0, r0, qm, u0, um, twist=..., position=..., rotation=..., t=stamp)

State in SPART's conventions (R0 (3, 3) base CoM frame -> inertial, r0 (3,) base CoM, qm
(n_q,), u0 (6,) = [base angular velocity in the base frame; base CoM velocity, inertial],
um (n_q,)).  References: ``twist`` (6,) = [angular velocity; velocity of the end-effector
point], inertial frame (feed-forward, default 0); optional pose targets ``position`` (3,) and
``rotation`` (3, 3) of the end-effector frame, closed with the P law
twist_cmd = twist + pose_gain * [rotation_vector(R_target R'); p_target - p].  ``rows`` picks
the task components of the twist.

Each law turns the task rows into joint rates with the generalized Jacobian J* (the base
is free: its motion follows from momentum conservation, including the drift J0 H0^-1 h0 of a
non-zero momentum), then the rates are scaled down together to the joint-rate bounds (the
end effector then moves slower than commanded: the status says so, ``feasible`` False).
Returned: a :class:`SpaceMotionCommand` with the joint velocities (for a velocity
interface), the joint accelerations for an effort interface (fed to floating-base inverse
dynamics),

    qdd = velocity_gain (qd_ref - um) + d/dt qd_ref    (backward difference over ``t``)

and a :class:`SpaceMotionStatus` snapshot.
"""

from collections import namedtuple
from dataclasses import dataclass
import warnings

import numpy as np

from .damped_least_squares import bound_joint_rates, check_damping
from .end_effector import EndEffector
from .free_floating import FreeFloatingKinematics
from ..core import checks as chk
from ..core.errors import InputError, ModelWarning
from ..core.manipulability import task_rows

__all__ = ['SpaceMotionLaw', 'SpaceMotionCommand', 'SpaceMotionStatus', 'urdf_joint_rates']

SpaceMotionCommand = namedtuple(
    'SpaceMotionCommand', 'joint_velocities joint_accelerations task_twist status'
)
SpaceMotionCommand.__doc__ = """Output of a space motion law for one state.

``joint_velocities`` (n_q,) rad/s or m/s (bounded); ``joint_accelerations`` (n_q,) for the
effort path; ``task_twist`` (6,) the commanded end-effector twist (feed-forward plus the pose
P law), inertial frame; ``status`` a :class:`SpaceMotionStatus`."""


@dataclass
class SpaceMotionStatus:
    """
    Snapshot of one control step (inertial frame unless said otherwise).

    - ``momentum`` (6,): [angular momentum about the inertial origin; linear momentum] of the
      measured state [kg m^2/s; kg m/s]; ``momentum_about_com`` (6,): the same about the system
      CoM.
    - ``base_angular_velocity`` (3,): measured, base frame [rad/s].
    - ``predicted_base_velocity`` (6,): u0 the commanded joint rates give by momentum
      conservation.
    - ``arm_base_rate``: ``|angular part of G qd|`` [rad/s], the base rotation the command itself
      causes.
    - ``manipulability``, ``fixed_base_manipulability``: Yoshikawa's measure of the task rows of
      J* and Jm.
    - ``dynamic_singularity``: sigma_min / sigma_max of the task rows of J* (0 = singular).
    - ``joint_limit_distance`` (n_q,): distance of each joint to its nearer position limit (inf
      if none; negative beyond a limit); ``min_joint_limit_distance``: the smallest.
    - ``task_error``: ``|J* qd + drift - twist_cmd|`` on the task rows, before the rate bound.
    - ``base_error``: the residual of the law's base objective [rad/s] (nan for laws without
      one).
    - ``rate_scale``: the factor (<= 1) the rate bound applied (1: none); ``damping``: the lambda
      used.
    - ``null_space_dim``: dimension of the null space the law works in (of J*, or the reaction
      null space); ``feasible``: the command sent meets the law's objectives exactly here (its
      residuals are zero and the rate bound did not scale it); ``message``: why not, or ''.
    """

    momentum: np.ndarray
    momentum_about_com: np.ndarray
    base_angular_velocity: np.ndarray
    predicted_base_velocity: np.ndarray
    arm_base_rate: float
    manipulability: float
    fixed_base_manipulability: float
    dynamic_singularity: float
    joint_limit_distance: np.ndarray
    min_joint_limit_distance: float
    task_error: float
    base_error: float
    rate_scale: float
    damping: float
    null_space_dim: int
    feasible: bool
    message: str


def _nonnegative(name, value, n, positive=False):
    """
    Return a scalar or (n,) of finite-or-inf numbers >= 0 (> 0 if ``positive``).

    As an (n,) array.
    """
    a = np.asarray(value, dtype=float)
    if a.ndim == 0:
        a = np.full(n, float(a))
    if a.shape != (n,) or np.isnan(a).any() or (a <= 0 if positive else a < 0).any():
        raise InputError(
            f'{name}: expected a number {">" if positive else ">="} 0 or {n} of them, got '
            f'{value!r}'
        )
    return a


def urdf_joint_rates(robot):
    """
    Return the joint-rate bounds (n_q,) of the URDF ``<limit velocity>``, in q order.

    Inf where the URDF gives none, and where it gives 0 or less (a ModelWarning names those
    joints). The URDF spec makes ``velocity`` required, so exporters write 0 as "not known"; MoveIt
    reads ``|velocity|`` < eps as unbounded (ros2_control's joint_limits would take it as a bound
    of
    0); a bound of 0 would scale every command to 0 here (the arm would never move), so MoveIt's
    reading is the one taken.
    """
    moving = _moving_joints(robot)
    rates = np.array([j.limits.velocity for j in moving], dtype=float)
    zero = rates <= 0
    if zero.any():
        names = [j.name for j, z in zip(moving, zero) if z]
        warnings.warn(
            f'joints {names}: URDF <limit velocity> <= 0 read as "no velocity limit given" (as '
            'MoveIt does); set max_joint_rates to bound them',
            ModelWarning,
            stacklevel=3,
        )
        rates[zero] = np.inf
    return rates


def _moving_joints(robot):
    """Return the moving joints in joint-variable (q) order."""
    return sorted((j for j in robot.joints if j.q_id > 0), key=lambda j: j.q_id)


def residual_tolerance(b):
    """Residuals below this count as exact (``|b|`` is the right-hand side's size)."""
    return 1e-9 + 1e-6 * float(np.sqrt(b @ b))


class SpaceMotionLaw:
    """
    Base class of the space motion laws (see the module docstring).

    ``robot``, ``link``, ``offset``, ``frame``: the end effector (:class:`EndEffector`);
    ``rows``: task components of [wx, wy, wz, vx, vy, vz] (default all six);
    ``damping``, ``singular_region``: the damped pseudo-inverse of J*
    (:mod:`.damped_least_squares`); ``max_joint_rates``: scalar or (n_q,) bound on ``|qd_i|``, > 0
    (inf = none; default the URDF ``<limit velocity>``, see :func:`urdf_joint_rates`);
    ``velocity_gain`` [1/s]: the
    effort path's rate loop; ``pose_gain`` [1/s]: scalar or (6,) P gain of pose targets;
    ``dynamics``: a FastDynamics of the robot to share.
    """

    mode = None  # the controller node's name for the law

    def __init__(
        self,
        robot,
        link,
        offset=None,
        frame='com',
        *,
        rows=None,
        damping=0.05,
        singular_region=0.01,
        max_joint_rates=None,
        velocity_gain=10.0,
        pose_gain=1.0,
        dynamics=None,
    ):
        self.robot = robot
        self.end_effector = EndEffector(robot, link, offset, frame)
        self.kinematics = FreeFloatingKinematics(
            robot, self.end_effector.link, self.end_effector.offset, dynamics
        )
        nq = self.n_q = robot.n_q
        self.rows = task_rows(rows)
        self._rows = list(self.rows)
        check_damping(damping, singular_region)
        self.damping, self.singular_region = float(damping), float(singular_region)
        moving = _moving_joints(robot)
        if max_joint_rates is None:
            max_joint_rates = urdf_joint_rates(robot)
        # > 0: the whole command is scaled to the tightest bound, so one 0 would stop every joint
        self.max_joint_rates = _nonnegative('max_joint_rates', max_joint_rates, nq, positive=True)
        self.velocity_gain = float(_nonnegative('velocity_gain', velocity_gain, 1)[0])
        self.pose_gain = _nonnegative('pose_gain', pose_gain, 6)
        self.lower = np.array([j.limits.lower for j in moving], dtype=float)
        self.upper = np.array([j.limits.upper for j in moving], dtype=float)
        base = robot.base_link
        M0 = np.zeros((6, 6))
        M0[0:3, 0:3] = np.asarray(base.inertia, dtype=float)
        M0[3:6, 3:6] = float(base.mass) * np.eye(3)
        vals, vecs = np.linalg.eigh(M0)
        #: W with W' W = blkdiag(I_base, m_base I3): base kinetic energy = ``|W u0|^2 / 2``
        self.base_energy_root = np.sqrt(np.clip(vals, 0.0, None))[:, None] * vecs.T
        self.reset()

    def reset(self):
        """Forget the previous reference (the next d/dt qd_ref is 0)."""
        self._previous = None

    # -- the law ---------------------------------------------------------------------------------
    def _joint_rates(self, ff, J, b):
        """
        (qd (n_q,), info dict) for task rows ``J`` qd = ``b``; subclasses implement it.

        info keys: damping, null_space_dim, singular_values (of J, if computed), base_error,
        feasible (extra condition), message.
        """
        raise NotImplementedError

    def task_twist(self, R0, r0, qm, twist=None, position=None, rotation=None, pose=None):
        """
        Return the commanded end-effector twist (6,): feed-forward plus the pose P law.

        ``twist`` (6,) feed-forward; pose targets ``position`` (3,) and ``rotation`` (3, 3);
        ``pose``: the end effector's (R, p) at this state when known (else forward kinematics).
        """
        x = np.zeros(6) if twist is None else chk.vector('twist', twist, 6).copy()
        if position is not None or rotation is not None:
            x += self.pose_gain * self.end_effector.pose_error(
                R0, r0, qm, position, rotation, pose
            )
        return x

    def update(self, R0, r0, qm, u0, um, twist=None, position=None, rotation=None, t=None):
        """
        Run one control step; return a :class:`SpaceMotionCommand` (see the module docstring).

        References: ``twist`` (6,), ``position`` (3,), ``rotation`` (3, 3) (as
        :meth:`task_twist`); ``t``: the control time [s], for the reference's derivative.
        """
        ff = self.kinematics.update(R0, r0, qm, u0, um)
        um = chk.vector('um', um, self.n_q)
        pose = None
        if position is not None or rotation is not None:  # the link pose of this update
            pose = self.end_effector.frame_pose(ff.link_rotation, ff.link_position)
        x = self.task_twist(R0, r0, qm, twist, position, rotation, pose)
        rows = self._rows
        J = ff.Jstar[rows]
        b = x[rows] - ff.drift[rows]
        qd, info = self._joint_rates(ff, J, b)
        task_error = float(np.linalg.norm(J @ qd - b))
        qd, scale = bound_joint_rates(qd, self.max_joint_rates)
        qdd = self._accelerations(qd, um, t)
        status = self._status(ff, u0, qm, qd, J, b, task_error, scale, info)
        return SpaceMotionCommand(qd, qdd, x, status)

    def _accelerations(self, qd, um, t):
        """velocity_gain (qd - um) + backward difference of qd over t."""
        qdd = self.velocity_gain * (qd - um)
        if t is not None:
            t = float(t)
            if self._previous is not None and t > self._previous[1]:
                qdd += (qd - self._previous[0]) / (t - self._previous[1])
            self._previous = (qd.copy(), t)
        return qdd

    def _status(self, ff, u0, qm, qd, J, b, task_error, scale, info):
        s_star = info.get('singular_values')
        if s_star is None:
            s_star = np.linalg.svd(J, compute_uv=False)
        s_fixed = np.linalg.svd(ff.Jm[self._rows], compute_uv=False)
        u0_pred = ff.free_base_velocity + ff.reaction @ qd
        arm_rate = ff.reaction[0:3] @ qd
        qm = np.asarray(qm, dtype=float)
        limit = np.minimum(qm - self.lower, self.upper - qm)
        reasons = []
        if task_error > residual_tolerance(b) or not info.get('feasible', True):
            reasons.append(
                info.get('message')
                or f'task tracked only approximately (residual {task_error:.3g}): '
                'J* is singular or damped here'
            )
        if scale < 1.0:
            k = int(np.argmin(self.max_joint_rates / np.maximum(np.abs(qd), 1e-300)))
            reasons.append(
                f'joint rates scaled by {scale:.3g} to the rate bounds (joint '
                f'{self.robot.q_names[k]!r} at {self.max_joint_rates[k]:.3g}): the end effector '
                'moves slower than commanded'
            )
        feasible = not reasons
        return SpaceMotionStatus(
            momentum=ff.momentum('origin'),
            momentum_about_com=ff.momentum('com'),
            base_angular_velocity=np.array(u0[0:3], dtype=float),
            predicted_base_velocity=u0_pred,
            arm_base_rate=float(np.sqrt(arm_rate @ arm_rate)),
            manipulability=float(np.prod(s_star)),
            fixed_base_manipulability=float(np.prod(s_fixed)),
            dynamic_singularity=float(s_star[-1] / s_star[0])
            if s_star.size and s_star[0] > 0
            else 0.0,
            joint_limit_distance=limit,
            min_joint_limit_distance=float(limit.min()),
            task_error=task_error,
            base_error=float(info.get('base_error', np.nan)),
            rate_scale=scale,
            damping=float(info.get('damping', 0.0)),
            null_space_dim=int(info.get('null_space_dim', 0)),
            feasible=feasible,
            message='; '.join(reasons),
        )
