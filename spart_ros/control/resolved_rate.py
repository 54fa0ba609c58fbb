"""
Resolved-motion-rate control of a free-floating arm with the generalized Jacobian.

After Umetani and Yoshida (1989): plain, and with the base kinetic energy minimized in the null
space.

Task rows of the end-effector twist: J* qd = twist_cmd - drift =: b.

- :class:`ResolvedRate` (mode ``resolved_rate``): qd = J*# b with J*# the damped
  pseudo-inverse (exact away from singularities, bounded rates near them).
- :class:`ResolvedRateMinBaseEnergy` (mode ``resolved_rate_min_base_energy``; SPART's
  "Minimize Floating Kinematic Energy"): qd = J*# b + N y, N an orthonormal basis of J*'s
  kernel and y minimizing the base's own kinetic energy
  T0 = 1/2 u0' blkdiag(I_base, m_base I3) u0 with u0 = H0^-1 h0 + G qd (momentum
  conservation; I_base about the base CoM in the base frame, constant because u0's angular
  part is in the base frame), regularized: y minimizes ``|W u0|^2`` + lambda^2 ``|y|^2``
  (W' W = blkdiag(I_base, m_base I3)) with lambda = ``energy_damping`` times the largest
  singular value of W G N.  Without it a null-space direction that barely moves the base (a
  wrist roll) would be driven at hundreds of rad/s to cancel the last micro-joules, and the
  rate bound would then slow the whole task down.  The end-effector task is unchanged (N y
  adds no twist).
"""

import numpy as np

from .damped_least_squares import damped_pseudo_inverse
from .space_motion import SpaceMotionLaw
from ..core.checks import nonnegative

__all__ = ['ResolvedRate', 'ResolvedRateMinBaseEnergy']


class ResolvedRate(SpaceMotionLaw):
    """
    qd = J*# (twist_cmd - drift) on the task rows.

    See :class:`SpaceMotionLaw` for the arguments and :meth:`SpaceMotionLaw.update`.
    """

    mode = 'resolved_rate'

    def _joint_rates(self, ff, J, b):
        D = damped_pseudo_inverse(J, self.damping, self.singular_region)
        return D.inverse @ b, {
            'damping': D.damping,
            'null_space_dim': D.null_basis.shape[1],
            'singular_values': D.singular_values,
        }


class ResolvedRateMinBaseEnergy(SpaceMotionLaw):
    """
    Resolved rate plus the null-space motion of least base kinetic energy.

    See the module docstring. Without redundancy (J* has no kernel) it is :class:`ResolvedRate`.
    ``energy_damping`` (>= 0, default 0.03): the regularization, a fraction of the strongest
    null-space coupling to the base; ``link``, ``offset``, ``frame`` and the other arguments
    (``kwargs``): as :class:`SpaceMotionLaw`.
    """

    mode = 'resolved_rate_min_base_energy'

    def __init__(self, robot, link, offset=None, frame='com', *, energy_damping=0.03, **kwargs):
        super().__init__(robot, link, offset, frame, **kwargs)
        nonnegative('energy_damping', energy_damping)
        self.energy_damping = float(energy_damping)

    def _joint_rates(self, ff, J, b):
        D = damped_pseudo_inverse(J, self.damping, self.singular_region)
        qd = D.inverse @ b
        N = D.null_basis
        if N.shape[1]:
            W = self.base_energy_root
            A = W @ (ff.reaction @ N)
            c = W @ (ff.free_base_velocity + ff.reaction @ qd)
            qd = qd - N @ (
                damped_pseudo_inverse(A, self.energy_damping, np.inf, relative=True).inverse @ c
            )
        return qd, {
            'damping': D.damping,
            'null_space_dim': N.shape[1],
            'singular_values': D.singular_values,
        }

    def base_kinetic_energy(self, u0):
        """Return 1/2 u0' blkdiag(I_base, m_base I3) u0 [J], the quantity this law minimizes."""
        v = self.base_energy_root @ np.asarray(u0, dtype=float)
        return 0.5 * float(v @ v)
