"""
Desired reaction: the base attitude follows a reference while the end effector moves.

SPART's Desired-Reaction-Maneuver; Yoshida's reaction-null-space family of laws.

By momentum conservation the base angular velocity (base frame) is
w0 = a_w + G_w qd, with a = H0^-1 h0 and G = -H0^-1 H0m (rows ``base_rows`` of the angular
part).  The base task asks

    G_w qd = w_cmd - a_w,
    w_cmd = base_angular_velocity + attitude_gain * rotation_vector(R0' R0_ref)

(base frame; R0_ref the reference rotation of the base CoM frame, like R0), and the
end-effector task J* qd = b as in resolved-rate control.  The two are solved with task
priority (Nakamura; Siciliano and Slotine): the first task by the damped pseudo-inverse, the
second in the first one's null space,

    qd = J1# b1 + N1 (J2 N1)# (b2 - J2 J1# b1)

with ``priority='end_effector'`` (default: J1 = J*) or ``'base'`` (J1 = G_w).  Both are met
exactly when the arm has the redundancy (task rows + base rows <= n_q, away from
singularities); otherwise the second one is met in the least-squares sense and the status
reports it (``feasible`` False, ``base_error`` / ``task_error``).

The pseudo-inverse of the end-effector task is damped with the law's ``damping`` and
``singular_region`` (m per rad); the base task's (G_w, or G_w N1) with ``base_damping`` and
``base_singular_region`` as fractions of its largest singular value: G is the base rotation per
joint rotation, about the arm-to-base inertia ratio (~0.01 for a 20 kg arm on a 200 kg
spacecraft), so the end effector's absolute thresholds would damp the base task away entirely.
"""

import numpy as np

from .damped_least_squares import damped_pseudo_inverse
from .end_effector import rotation_vector
from .space_motion import residual_tolerance, SpaceMotionLaw
from ..core import checks as chk
from ..core.errors import InputError

__all__ = ['DesiredReaction']


class DesiredReaction(SpaceMotionLaw):
    """
    End-effector task plus a base attitude reference (see the module docstring).

    ``base_rows``: components of the base angular velocity (0, 1, 2 = base-frame x, y, z) to
    control (a planar robot controls only (2,)); ``attitude_gain`` [1/s]; ``priority``:
    'end_effector' or 'base'; ``base_damping``, ``base_singular_region``: the base task's damping
    (relative, see the module docstring).  ``link``, ``offset``, ``frame`` and the other
    arguments (``kwargs``): as :class:`~spart_ros.control.space_motion.SpaceMotionLaw`.
    """

    mode = 'desired_reaction'

    def __init__(
        self,
        robot,
        link,
        offset=None,
        frame='com',
        *,
        base_rows=(0, 1, 2),
        attitude_gain=1.0,
        priority='end_effector',
        base_damping=0.05,
        base_singular_region=0.01,
        **kwargs,
    ):
        super().__init__(robot, link, offset, frame, **kwargs)
        chk.nonnegative('base_damping', base_damping)
        chk.nonnegative('base_singular_region', base_singular_region)
        self.base_damping, self.base_singular_region = (
            float(base_damping),
            float(base_singular_region),
        )
        rows = tuple(base_rows)
        if not rows or len(set(rows)) != len(rows) or any(r not in (0, 1, 2) for r in rows):
            raise InputError(
                'base_rows: expected distinct indices 0..2 of the base angular velocity, got '
                f'{base_rows!r}'
            )
        self.base_rows = list(rows)
        if not (np.isfinite(attitude_gain) and attitude_gain >= 0):
            raise InputError(
                f'attitude_gain: expected a finite number >= 0, got {attitude_gain!r}'
            )
        self.attitude_gain = float(attitude_gain)
        if priority not in ('end_effector', 'base'):
            raise InputError(f"priority: expected 'end_effector' or 'base', got {priority!r}")
        self.priority = priority
        self._base_command = np.zeros(3)

    def base_rate_command(self, R0, base_rotation=None, base_angular_velocity=None):
        """
        Return w_cmd (3,), base frame: feed-forward plus the attitude P law (module docstring).

        ``base_rotation`` (3, 3): the target of R0; ``base_angular_velocity`` (3,): the
        feed-forward, base frame (None: hold the base still).
        """
        w = (
            np.zeros(3)
            if base_angular_velocity is None
            else chk.vector('base_angular_velocity', base_angular_velocity, 3).copy()
        )
        if base_rotation is not None:
            R_ref = chk.array('base_rotation', base_rotation, (3, 3))
            w += self.attitude_gain * rotation_vector(np.asarray(R0, dtype=float).T @ R_ref)
        return w

    def update(
        self,
        R0,
        r0,
        qm,
        u0,
        um,
        twist=None,
        position=None,
        rotation=None,
        t=None,
        base_rotation=None,
        base_angular_velocity=None,
    ):
        """
        Return the command, as :meth:`SpaceMotionLaw.update`, with the base references too.

        ``twist``, ``position``, ``rotation``, ``t``: as :meth:`SpaceMotionLaw.update`.

        ``base_rotation`` (3, 3) target of R0 (base CoM frame -> inertial) and
        ``base_angular_velocity`` (3,) feed-forward in the base frame (both optional: default hold
        the base still).
        """
        self._base_command = self.base_rate_command(R0, base_rotation, base_angular_velocity)
        return super().update(R0, r0, qm, u0, um, twist, position, rotation, t)

    def _joint_rates(self, ff, J, b):
        rows = self.base_rows
        Jb = ff.reaction[rows]
        bb = self._base_command[rows] - ff.free_base_velocity[rows]
        ee = (self.damping, self.singular_region, False)
        base = (self.base_damping, self.base_singular_region, True)
        (J1, b1, d1), (J2, b2, d2) = (
            ((J, b, ee), (Jb, bb, base))
            if self.priority == 'end_effector'
            else ((Jb, bb, base), (J, b, ee))
        )
        D1 = damped_pseudo_inverse(J1, *d1)
        qd = D1.inverse @ b1
        N = D1.null_basis
        damping = D1.damping
        if N.shape[1]:
            D2 = damped_pseudo_inverse(J2 @ N, *d2)
            qd = qd + N @ (D2.inverse @ (b2 - J2 @ qd))
            damping = max(damping, D2.damping)
        base_error = float(np.linalg.norm(Jb @ qd - bb))
        info = {
            'damping': damping,
            'null_space_dim': N.shape[1],
            'base_error': base_error,
            'feasible': base_error <= residual_tolerance(bb),
        }
        if not info['feasible']:
            info['message'] = (
                f'base attitude reference not met (residual {base_error:.3g} rad/s): '
                + (
                    'the arm lacks the redundancy for both tasks here'
                    if self.priority == 'end_effector'
                    else 'singular base coupling'
                )
            )
        return qd, info
