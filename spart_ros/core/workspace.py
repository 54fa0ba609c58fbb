"""
The workspace of a link: points it reaches with its joints anywhere within their limits.

Monte Carlo, as symbolic_robot's ``plot_planar_workspace`` and SPART's Workspace example: joint
positions drawn uniformly within the position limits (:func:`~spart_ros.core.inverse_kinematics.
position_limits`, independent coordinates), each one's forward kinematics (the compiled fast
path) giving a point.  A joint without a range is drawn in [-pi, pi] rad (revolute) or
[-``prismatic_range``, ``prismatic_range``] m (prismatic).  The base is fixed with its URDF
link frame at the origin: points are in the base link frame.  Self-collisions are not checked.
"""

from collections import namedtuple

import numpy as np

from . import _checks as chk
from .errors import InputError
from .inverse_kinematics import InverseKinematics
from .model import PRISMATIC

__all__ = ['Workspace', 'sample_workspace']

Workspace = namedtuple('Workspace', 'points q lower upper')
Workspace.__doc__ = """Result of :func:`sample_workspace`: ``points`` (N, 3) in the base link
frame, ``q`` (N, n) the joint positions drawn (independent coordinates), ``lower``, ``upper`` (n,)
the ranges drawn from."""


def sample_workspace(robot, link, samples, point=None, seed=None, prismatic_range=1.0):
    """
    Return the :data:`Workspace` of ``point`` (3,) on ``link`` from random joint positions.

    ``point`` in the link's URDF frame (None = its origin); ``samples`` (>= 1) random joint
    positions within the limits (numpy ``seed`` for a repeatable draw; None = fresh); a
    prismatic joint without limits ranges over +-``prismatic_range`` [m].
    """
    robot = chk.robot(robot)
    if isinstance(samples, bool) or not isinstance(samples, (int, np.integer)) or samples < 1:
        raise InputError(f'samples: expected an integer >= 1, got {chk.given(samples)}')
    if seed is not None and (
        isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0
    ):
        raise InputError(f'seed: expected None or an integer >= 0, got {chk.given(seed)}')
    reach = chk.nonnegative('prismatic_range', prismatic_range)
    ik = InverseKinematics(robot, link, point)
    prismatic = np.array(
        [robot.joints[robot.keys.joint_id[name] - 1].type == PRISMATIC for name in ik.names],
        dtype=bool,
    )
    default = np.where(prismatic, reach, np.pi)
    lower = np.where(np.isfinite(ik.lower), ik.lower, -default)
    upper = np.where(np.isfinite(ik.upper), ik.upper, default)
    rng = np.random.default_rng(seed)
    q = rng.uniform(lower, upper, (int(samples), ik.n))
    R0, r0 = ik._base_state(None, None)
    points = np.empty((int(samples), 3))
    for k in range(int(samples)):
        points[k] = ik._pose(R0, r0, q[k])[1]
    return Workspace(points, q, lower, upper)
