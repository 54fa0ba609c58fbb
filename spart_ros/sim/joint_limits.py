"""
The joints of a simulated robot beyond their URDF limits: velocities, start positions (no ROS).

Neither plant enforces ``<limit velocity>`` (a real drive would stop, or break, first), so a
joint past it is a result no real robot gives: most often a robot that could not hold itself
(efforts clamped at their limits) falling after a fault.  :class:`VelocityLimits` finds such
joints in one state (``spart_sim``: a throttled warning) or in a whole run (the offline closed
loop: one warning per joint, with its peak).  Joints without a limit (none in the URDF, or 0)
are never reported.  :func:`outside_position_limits`: the joints a plant starts outside their
``<limit lower upper>`` (0 where the URDF allows [0.349, 0.698]: said, not found by the
controller's first trajectory being refused).
"""

import numpy as np

from ..core.errors import SpartWarning
from ..core.model import PRISMATIC

__all__ = ['VelocityLimits', 'outside_position_limits', 'JointLimitWarning']


class JointLimitWarning(SpartWarning):
    """A simulated joint went beyond a URDF limit the plant does not enforce."""


def outside_position_limits(robot, names, positions):
    """
    Return one sentence per joint of ``names`` whose position is outside its URDF limits.

    ``robot``: the core Robot; ``positions`` (n,) in ``names`` order [rad or m].
    """
    joints = {j.name: j for j in robot.joints}
    out = []
    for name, q in zip(names, np.asarray(positions, dtype=float)):
        j = joints.get(name)
        if j is None:
            continue
        lo, hi = j.limits.lower, j.limits.upper
        if q < lo or q > hi:
            out.append(
                f'joint {name} starts at {q:.4g}, outside its URDF limits [{lo:.4g}, {hi:.4g}] '
                "(its start: spart_sim's initial_joint_positions, simulate()'s initial, or the "
                '<ros2_control> initial_value)'
            )
    return out


class VelocityLimits:
    """
    The URDF velocity ``limits`` (n,) of joints ``names`` [rad/s or m/s], inf where none.

    ``units`` (n,): 'rad/s' or 'm/s' per joint (default rad/s).  Build with :meth:`of` from a
    core Robot.  :meth:`over` checks one state, :meth:`excess` a run.
    """

    def __init__(self, names, limits, units=None):
        self.names = list(names)
        limits = np.array(limits, dtype=float).reshape(-1)
        limits[~(limits > 0)] = np.inf  # 0 or NaN: no limit
        self.limits = limits
        self.units = list(units) if units is not None else ['rad/s'] * len(self.names)
        self.any = bool(np.isfinite(limits).any())
        self._over = np.zeros(len(self.names), dtype=bool)

    @classmethod
    def of(cls, robot, names=None):
        """Return the limits of ``robot``'s joints ``names`` (default: its coordinates)."""
        joints = {j.name: j for j in robot.joints}
        names = list(robot.coordinates.names) if names is None else list(names)
        return cls(
            names,
            [joints[n].limits.velocity for n in names],
            ['m/s' if joints[n].type == PRISMATIC else 'rad/s' for n in names],
        )

    def over(self, qd):
        """Return the indices of the joints whose ``|qd|`` (n,) exceeds their limit (or ())."""
        if not self.any:
            return ()
        np.greater(np.abs(qd), self.limits, out=self._over)
        return np.flatnonzero(self._over) if self._over.any() else ()

    def text(self, k, speed):
        """Return the sentence for joint ``k`` at ``speed`` (its largest ``|velocity|``)."""
        u = self.units[k]
        return (
            f'joint {self.names[k]} moves at {speed:.4g} {u}, beyond its URDF velocity limit '
            f'{self.limits[k]:.4g} {u} (the plant does not enforce it; a real drive could not)'
        )

    def excess(self, qd):
        """Return one sentence per joint whose ``|velocity|`` passes its limit in ``qd`` (k, n)."""
        qd = np.asarray(qd, dtype=float)
        if not self.any or qd.size == 0:
            return []
        peak = np.nanmax(np.abs(qd.reshape(-1, len(self.names))), axis=0)
        return [self.text(k, peak[k]) for k in np.flatnonzero(peak > self.limits)]
