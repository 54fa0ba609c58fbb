"""
Reactionless motion: the end-effector task inside the reaction null space (Nenchev, Yoshida).

qd = B (J* B)# b with B an orthonormal basis of the reaction null space
(:func:`~spart_ros.core.reaction_null_space.reaction_null_space`): the joint motion adds no
base angular velocity (``attitude_only=True``, the default) or no base motion at all, so a
base at rest stays at rest (with a non-zero initial momentum the base keeps its momentum-only
motion H0^-1 h0, which no joint motion can change).  Keeping the base undisturbed comes first:
when the null space has fewer dimensions than the task rows (an arm without the redundancy),
or J* B is singular, the task is tracked only in part, the status says so (``feasible``
False, ``message``) and the base still is not disturbed.
"""

import numpy as np

from .damped_least_squares import damped_pseudo_inverse
from .space_motion import SpaceMotionLaw
from ..core.reaction_null_space import null_space

__all__ = ['Reactionless']


class Reactionless(SpaceMotionLaw):
    """
    The task projected into the reaction null space.

    ``attitude_only`` (default True) keeps only the base attitude undisturbed (the base CoM may
    translate). ``link``, ``offset``, ``frame`` and the other arguments (``kwargs``): as
    :class:`~spart_ros.control.space_motion.SpaceMotionLaw`.
    """

    mode = 'reactionless'

    def __init__(self, robot, link, offset=None, frame='com', *, attitude_only=True, **kwargs):
        super().__init__(robot, link, offset, frame, **kwargs)
        self.attitude_only = bool(attitude_only)

    def _joint_rates(self, ff, J, b):
        coupling = ff.reaction[0:3] if self.attitude_only else ff.reaction
        B, _ = null_space(coupling)
        k, m = B.shape[1], len(b)
        what = 'attitude' if self.attitude_only else 'base motion'
        if k == 0:
            return np.zeros(self.n_q), {
                'null_space_dim': 0,
                'feasible': False,
                'base_error': 0.0,
                'message': f'no reaction null space ({what}): the arm cannot move '
                'without disturbing the base',
            }
        D = damped_pseudo_inverse(J @ B, self.damping, self.singular_region)
        qd = B @ (D.inverse @ b)
        base_error = float(np.linalg.norm(coupling @ qd))
        info = {'damping': D.damping, 'null_space_dim': k, 'base_error': base_error}
        if k < m:
            info['message'] = (
                f'reaction null space ({what}) has {k} dimension(s) for {m} task rows: '
                'the end-effector task is tracked only in part, the base is kept undisturbed'
            )
        return qd, info
