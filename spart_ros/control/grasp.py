"""
The grasp of a target's fixture: its criteria, and the model the controller carries after it.

**Criteria** (:class:`GraspTolerances`): the end-effector frame E and the grasp frame G (the
fixture frame f moved by the grasp offset: where E must be at the grasp, ``T_G = T_f G``) agree

- in position: ``|p_E - p_G|`` <= ``position`` [m];
- in orientation: the angle of ``R_G' R_E`` <= ``orientation`` [rad];
- in relative twist at the end-effector point: ``|v_E - (v_f + w_f x (p_E - p_f))|`` <=
  ``linear`` [m/s] and ``|w_E - w_f|`` <= ``angular`` [rad/s];

continuously for ``dwell`` s (:class:`GraspCheck`).  :func:`grasp_error` measures them
(:data:`GraspError`).

**The model after the grasp** (:func:`capture_model`): the target becomes a payload of the
end-effector link, fixed where it was at the grasp (the measured relative pose, not the nominal
one): a new :class:`~spart_ros.core.model.Robot` with the target's mass and inertia on a fixed
joint of that link (:func:`spart_ros.core.payload.attach_payload`); the joint variables are the
same, so the controller's joint arrays do not change.  From the grasp on, every law computes with
this model (its dynamics, its momentum): the detumble needs the target's inertia in it.

Pure numpy, no ROS.
"""

from collections import namedtuple
from dataclasses import dataclass

import numpy as np

from ..core import checks as chk
from ..core.attitude import _cross  # np.cross costs 8 times as much on 3-vectors
from ..core.errors import InputError
from ..core.payload import attach_payload
from ..core.rigid_motion import _rotation_vector

__all__ = ['GraspTolerances', 'GraspError', 'GraspCheck', 'grasp_error', 'capture_model']

GraspError = namedtuple('GraspError', 'distance angle linear angular relative_twist')
GraspError.__doc__ = """How far the end effector is from the grasp: ``distance`` [m], ``angle``
[rad], ``linear`` [m/s], ``angular`` [rad/s] (module docstring), ``relative_twist`` (6,) [w_E -
w_f; v_E - v_f at p_E], world axes."""


@dataclass(frozen=True)
class GraspTolerances:
    """
    The grasp's criteria (see the module docstring).

    ``position`` [m], ``orientation`` [rad], ``linear`` [m/s], ``angular`` [rad/s]: each > 0;
    ``dwell`` [s] >= 0: how long they must all hold.
    """

    position: float = 0.01
    orientation: float = 0.05
    linear: float = 0.01
    angular: float = 0.01
    dwell: float = 0.2

    def __post_init__(self):
        for name in ('position', 'orientation', 'linear', 'angular'):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and np.isfinite(v) and v > 0):
                raise InputError(f'grasp tolerance {name}: expected a number > 0, got {v!r}')
        if not (
            isinstance(self.dwell, (int, float)) and np.isfinite(self.dwell) and self.dwell >= 0
        ):
            raise InputError(f'grasp tolerance dwell: expected a time >= 0 s, got {self.dwell!r}')

    def within(self, error):
        """Return True if the :data:`GraspError` ``error`` meets every tolerance."""
        return (
            error.distance <= self.position
            and error.angle <= self.orientation
            and error.linear <= self.linear
            and error.angular <= self.angular
        )

    def describe(self, error):
        """Return the criteria ``error`` misses, in words ('' when it meets them all)."""
        out = []
        for what, value, tol, unit in (
            ('distance', error.distance, self.position, 'm'),
            ('angle', error.angle, self.orientation, 'rad'),
            ('relative speed', error.linear, self.linear, 'm/s'),
            ('relative rate', error.angular, self.angular, 'rad/s'),
        ):
            if value > tol:
                out.append(f'{what} {value:.3g} {unit} > {tol:g}')
        return ', '.join(out)


def grasp_error(R_e, p_e, twist_e, fixture, grasp_offset=None):
    """
    Return the :data:`GraspError` of the end effector against the fixture.

    ``R_e`` (3, 3), ``p_e`` (3,): the end-effector frame and point, ``twist_e`` (6,) [angular
    velocity; velocity of the point], world; ``fixture``: the fixture's
    :data:`~spart_ros.core.target.FixtureMotion` (same world frame); ``grasp_offset`` (4, 4): the
    end-effector frame in the fixture frame at the grasp (None: the identity).
    """
    R_f, p_f = np.asarray(fixture.R, dtype=float), np.asarray(fixture.p, dtype=float)
    if grasp_offset is None:
        R_g, p_g = R_f, p_f
    else:
        G = np.asarray(grasp_offset, dtype=float)
        R_g, p_g = R_f @ G[:3, :3], p_f + R_f @ G[:3, 3]
    tw = np.asarray(fixture.twist, dtype=float)
    twist_e = np.asarray(twist_e, dtype=float)
    rel = np.empty(6)
    rel[0:3] = twist_e[0:3] - tw[0:3]
    rel[3:6] = twist_e[3:6] - (tw[3:6] + _cross(tw[0:3], p_e - p_f))
    return GraspError(
        float(np.linalg.norm(p_e - p_g)),
        float(np.linalg.norm(_rotation_vector(R_g.T @ R_e))),
        float(np.linalg.norm(rel[3:6])),
        float(np.linalg.norm(rel[0:3])),
        rel,
    )


class GraspCheck:
    """
    Whether the grasp's criteria have held for their dwell time (``tolerances``).

    :meth:`update` once per tick; :meth:`reset` when the phase starts again.
    """

    def __init__(self, tolerances):
        if not isinstance(tolerances, GraspTolerances):
            raise InputError(f'tolerances: expected GraspTolerances, got {chk.given(tolerances)}')
        self.tolerances = tolerances
        self.reset()

    def reset(self):
        """Start again: the criteria have not held yet."""
        self.since = None

    def update(self, t, error):
        """Return True once ``error`` (a GraspError) at time ``t`` has held for ``dwell`` s."""
        if not self.tolerances.within(error):
            self.since = None
            return False
        if self.since is None:
            self.since = float(t)
        return float(t) - self.since >= self.tolerances.dwell - 1e-12


def capture_model(robot, link, target, T_link_target, name=None):
    """
    Return the Robot with ``target`` fixed to ``link`` (see the module docstring).

    ``robot``: the controller's model; ``link``: the end-effector link (SPART id or name);
    ``target``: a :class:`~spart_ros.core.target.Target`; ``T_link_target`` (4, 4): the target's
    link frame l in the link's URDF frame at the grasp (measured); ``name``: the payload link's
    name (default the target's name).
    """
    T = np.asarray(chk.array('T_link_target', T_link_target, (4, 4)), dtype=float)
    pose = T.copy()
    pose[:3, 3] = T[:3, 3] + T[:3, :3] @ target.com  # the target's CoM frame (l's axes)
    return attach_payload(robot, link, target.mass, target.inertia, pose, name=name or target.name)
