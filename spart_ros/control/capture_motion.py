"""
The approach and synchronisation law: the end effector onto a moving fixture, the base undisturbed.

Each tick, from the measured state (ROS base convention: the URDF base link pose R_b, p_b and
twist v_b, w_b in b, REP 105; joint positions q and rates qd) and the reference of
:class:`~spart_ros.control.capture_reference.ApproachPath` (pose, twist and acceleration of the
end-effector frame, world), the law computes:

1. the task twist x = V_ref + K_p [rotvec(R_ref R'); p_ref - p] (``pose_gain`` K_p [1/s]);
2. the joint rates qd_ref = J# (x - drift) + N k (limit avoidance), J# the damped
   pseudo-inverse (:mod:`.damped_least_squares`), N = I - J# J its null space, and k pushing each
   joint within ``limit_margin`` of a position limit back (``limit_gain`` [1/s]); then scaled down
   together to the joints' velocity limits;
3. the joint accelerations qdd = K_v (qd_ref - qd) + d/dt qd_ref (``velocity_gain`` K_v [1/s],
   the derivative a backward difference over the control period);
4. the efforts realizing qdd, clamped to the joints' effort limits.

The base (``base``):

- ``'held'`` (default): the base's attitude is held by a torque on the base (its reaction wheels),
  so the arm's motion does not turn it: the base's angular acceleration is
  alpha_b = kp rotvec(R_b' R_hold) - kd w_b (``attitude_gains`` kp [1/s^2], kd [1/s]; R_hold the
  attitude at the first tick), its CoM moves as momentum conservation says (no force).  J and
  the drift are those of a base whose angular velocity is the measured one and whose linear
  momentum is conserved: with P = h0[3:6] the linear momentum, M the total mass and w0 the base
  angular velocity (SPART's u0[0:3]),

      J = Jm - J0[:, 3:6] H0m[3:6] / M
      drift = J0[:, 0:3] w0 + J0[:, 3:6] (P - H0[3:6, 0:3] w0) / M

  and the efforts and the base torque come from the equations of motion with the base's angular
  acceleration and the joints' imposed, its linear acceleration free (no force); the torque (in b,
  a pure torque) is what the wheels must exert, before what their own spin adds
  (:meth:`~spart_ros.control.base_actuation.BaseActuatorControl.required_wrench`);
- ``'free'``: the base reacts freely (no base torque): J = J* (the generalized Jacobian, with
  the drift of the momentum), efforts from floating-base inverse dynamics.  The base then turns
  as the arm moves.

Returned: a :data:`CaptureMotionCommand` with the measured end-effector pose and twist (for the
grasp criteria) and a status.  Pure numpy on the compiled fast path; no ROS.
"""

from collections import namedtuple

import numpy as np

from .damped_least_squares import bound_joint_rates, damped_pseudo_inverse
from .end_effector import EndEffector, rotation_vector
from .free_floating import FreeFloatingKinematics
from .law import BaseFrames
from .space_motion import urdf_joint_rates
from ..core import checks as chk
from ..core.errors import InputError
from ..core.fast import FastDynamics

__all__ = ['CaptureMotion', 'CaptureMotionCommand', 'BASE_MODES', 'held_base_dynamics']

BASE_MODES = ('held', 'free')

CaptureMotionCommand = namedtuple(
    'CaptureMotionCommand',
    'efforts base_torque base_force joint_velocities joint_accelerations ee_rotation ee_position '
    'ee_twist saturated message',
)
CaptureMotionCommand.__doc__ = """One tick of :class:`CaptureMotion`: ``efforts`` (n_q,) [N m or
N], clamped to the effort limits; ``base_torque``, ``base_force`` (3,) at b's origin, in b (the
wheels' torque with ``base='held'``, zero force; None with 'free'); ``joint_velocities``,
``joint_accelerations`` (n_q,) the law's qd_ref and qdd; ``ee_rotation`` (3, 3), ``ee_position``
(3,), ``ee_twist`` (6,) [angular; linear velocity of the point] measured, world; ``saturated``:
the joints whose effort was clamped or whose rate bound scaled the command; ``message``: why the
command is not what the law asked for ('' if it is)."""


def held_base_dynamics(H, bias, alpha_c, qdd, force=None):
    """
    Return (u0dot (6,), tau0 (6,), taum (n_q,)) with the base's angular acceleration imposed.

    ``H`` (6 + n_q, 6 + n_q) and ``bias`` (6 + n_q,) (C u, the loads) at the state; ``alpha_c``
    (3,) the base's angular acceleration (SPART's u0dot[0:3], base CoM frame); ``qdd`` (n_q,);
    ``force`` (3,): the base's external force at its CoM, world (SPART's tau0[3:6]; None: 0).
    The linear acceleration follows from the base's linear rows; tau0[0:3] is the torque the base
    needs (about its CoM, base frame), tau0[3:6] = ``force``.
    """
    f = np.zeros(3) if force is None else np.asarray(force, dtype=float)
    u0dot = np.empty(6)
    u0dot[0:3] = alpha_c
    u0dot[3:6] = np.linalg.solve(
        H[3:6, 3:6], f - bias[3:6] - H[3:6, 0:3] @ alpha_c - H[3:6, 6:] @ qdd
    )
    tau0 = H[0:6, 0:6] @ u0dot + H[0:6, 6:] @ qdd + bias[0:6]
    taum = H[6:, 0:6] @ u0dot + H[6:, 6:] @ qdd + bias[6:]
    return u0dot, tau0, taum


def _per_joint(name, value, n, positive=True):
    a = np.asarray(value, dtype=float)
    if a.ndim == 0:
        a = np.full(n, float(a))
    if a.shape != (n,) or np.isnan(a).any() or ((a <= 0) if positive else (a < 0)).any():
        raise InputError(
            f'{name}: expected a number {">" if positive else ">="} 0 or {n} of them, got '
            f'{chk.given(value)}'
        )
    return a


class CaptureMotion:
    """
    The approach and synchronisation law of one end effector (see the module docstring).

    ``robot``: a floating-base Robot (no mimic joints); ``link``, ``offset``, ``frame``: the end
    effector (:class:`~spart_ros.control.end_effector.EndEffector`; default the URDF link frame);
    ``base``: 'held' or 'free' (:data:`BASE_MODES`); ``dynamics``: the robot's FastDynamics to
    share (its model; the law computes in workspaces of its own); ``pose_gain`` [1/s],
    ``velocity_gain`` [1/s]; ``damping``, ``singular_region``: the damped pseudo-inverse;
    ``max_joint_rates`` (scalar or (n_q,), default the URDF velocity limits); ``max_efforts``
    (default the URDF effort limits); ``limit_margin`` [rad or m], ``limit_gain`` [1/s]: the
    position-limit avoidance; ``attitude_gains`` (kp [1/s^2], kd [1/s]) of the held base.
    """

    def __init__(
        self,
        robot,
        link,
        offset=None,
        frame='link',
        *,
        base='held',
        dynamics=None,
        pose_gain=2.0,
        velocity_gain=20.0,
        damping=0.02,
        singular_region=0.02,
        max_joint_rates=None,
        max_efforts=None,
        limit_margin=0.1,
        limit_gain=2.0,
        attitude_gains=(4.0, 4.0),
    ):
        if base not in BASE_MODES:
            raise InputError(f'base: expected one of {BASE_MODES}, got {base!r}')
        if robot.mimic:
            raise InputError(
                f'robot {robot.name!r} has mimic joints {sorted(robot.mimic)}: the capture laws '
                "work in SPART's joint variables (every moving joint independent)"
            )
        self.robot, self.base = robot, base
        fd = FastDynamics(robot) if dynamics is None else dynamics
        if fd.robot is not robot:
            raise InputError('dynamics: a FastDynamics of another robot model')
        self.dynamics = fd.new_workspace()
        self.end_effector = EndEffector(robot, link, offset, frame)
        self.kinematics = FreeFloatingKinematics(
            robot, self.end_effector.link, self.end_effector.offset, fd.new_workspace()
        )
        n = self.n_q = robot.n_q
        moving = sorted((j for j in robot.joints if j.q_id > 0), key=lambda j: j.q_id)
        self.lower = np.array([j.limits.lower for j in moving], dtype=float)
        self.upper = np.array([j.limits.upper for j in moving], dtype=float)
        rates = urdf_joint_rates(robot) if max_joint_rates is None else max_joint_rates
        self.max_joint_rates = _per_joint('max_joint_rates', rates, n)
        efforts = (
            [j.limits.effort if j.limits.effort > 0 else np.inf for j in moving]
            if max_efforts is None
            else max_efforts
        )
        self.max_efforts = _per_joint('max_efforts', efforts, n)
        self.pose_gain = chk.nonnegative('pose_gain', pose_gain)
        self.velocity_gain = chk.nonnegative('velocity_gain', velocity_gain)
        self.damping = chk.nonnegative('damping', damping)
        self.singular_region = chk.nonnegative('singular_region', singular_region)
        self.limit_margin = chk.nonnegative('limit_margin', limit_margin)
        self.limit_gain = chk.nonnegative('limit_gain', limit_gain)
        kp, kd = attitude_gains
        self.attitude_gains = (chk.nonnegative('kp', kp), chk.nonnegative('kd', kd))
        self.frames = BaseFrames(robot)
        self.mass = float(robot.base_link.mass + sum(link.mass for link in robot.links))
        self.reset()

    def reset(self):
        """Forget the previous tick (the next d/dt qd_ref is 0) and the attitude held."""
        self._previous = None
        self.hold_attitude = None

    def _limit_rates(self, q):
        """Rates (n_q,) pushing joints within limit_margin of a limit back inside."""
        k = np.zeros(self.n_q)
        if self.limit_margin <= 0 or self.limit_gain <= 0:
            return k
        low = q - self.lower
        high = self.upper - q
        near_low = low < self.limit_margin
        near_high = high < self.limit_margin
        k[near_low] = self.limit_gain * (self.limit_margin - low[near_low])
        k[near_high] -= self.limit_gain * (self.limit_margin - high[near_high])
        return k

    def command(self, state, reference, t):
        """
        Return the :data:`CaptureMotionCommand` of one tick.

        ``state``: the measured state (``base`` with R_b, p_b, v_b, w_b; ``q``, ``qd``);
        ``reference``: a :data:`~spart_ros.control.capture_reference.ReferenceSample` (or any
        object with R, p, twist); ``t``: the control time [s].
        """
        base = state.base
        q = np.asarray(state.q, dtype=float)
        qd = np.asarray(state.qd, dtype=float)
        R0, r0, u0 = self.frames.floating(base)
        R0, r0, u0 = R0.copy(), r0.copy(), u0.copy()
        ff = self.kinematics.update(R0, r0, q, u0, qd)
        R_e, p_e = self.end_effector.frame_pose(ff.link_rotation, ff.link_position)
        twist_e = ff.J0 @ u0 + ff.Jm @ qd
        if self.base == 'held':
            M = self.mass
            w0 = u0[0:3]
            J = ff.Jm - ff.J0[:, 3:6] @ ff.H0m[3:6] / M
            drift = ff.J0[:, 0:3] @ w0 + ff.J0[:, 3:6] @ (ff.h0[3:6] - ff.H0[3:6, 0:3] @ w0) / M
        else:
            J, drift = ff.Jstar, ff.drift
        e = np.empty(6)
        e[0:3] = rotation_vector(np.asarray(reference.R, dtype=float) @ R_e.T)
        e[3:6] = np.asarray(reference.p, dtype=float) - p_e
        x = np.asarray(reference.twist, dtype=float) + self.pose_gain * e
        D = damped_pseudo_inverse(J, self.damping, self.singular_region)
        qd_ref = D.inverse @ (x - drift)
        k = self._limit_rates(q)
        if k.any():
            qd_ref += k - D.inverse @ (J @ k)
        qd_ref, scale = bound_joint_rates(qd_ref, self.max_joint_rates)
        qdd = self.velocity_gain * (qd_ref - qd)
        t = float(t)
        if self._previous is not None and t > self._previous[1]:
            qdd += (qd_ref - self._previous[0]) / (t - self._previous[1])
        self._previous = (qd_ref.copy(), t)
        base_torque = base_force = None
        if self.base == 'held':
            R_b = np.asarray(base.R_b, dtype=float)
            w_b = np.asarray(base.w_b, dtype=float)
            if self.hold_attitude is None:
                self.hold_attitude = R_b.copy()
            kp, kd = self.attitude_gains
            alpha_b = kp * rotation_vector(R_b.T @ self.hold_attitude) - kd * w_b
            fd = self.dynamics
            H = np.array(fd.mass_matrix(R0, r0, q))
            tau0, taum = fd.inverse_dynamics(R0, r0, q, u0, qd, np.zeros(6), np.zeros(self.n_q))
            bias = np.concatenate([tau0, taum])
            _, tau0, taum = held_base_dynamics(H, bias, self.frames.R_cb @ alpha_b, qdd)
            base_torque = self.frames.R_bc @ tau0[0:3]
            base_force = np.zeros(3)
        else:
            taum, _ = self.dynamics.floating_inverse_dynamics(R0, r0, q, u0, qd, qdd)
            taum = np.array(taum)
        efforts = np.clip(taum, -self.max_efforts, self.max_efforts)
        names = self.robot.q_names
        clamped = [names[i] for i in np.flatnonzero(efforts != taum)]
        reasons = []
        if clamped:
            reasons.append(f'efforts clamped to their limits: {clamped}')
        saturated = list(clamped)
        if scale < 1.0:
            i = int(np.argmin(self.max_joint_rates / np.maximum(np.abs(qd_ref / scale), 1e-300)))
            reasons.append(
                f'joint rates scaled by {scale:.3g} to the rate limits ({names[i]!r} at '
                f'{self.max_joint_rates[i]:.3g}): the end effector lags its reference'
            )
            saturated.append(names[i])
        return CaptureMotionCommand(
            efforts,
            base_torque,
            base_force,
            qd_ref,
            qdd,
            R_e,
            p_e,
            twist_e,
            saturated,
            '; '.join(reasons),
        )
