"""
Per-tick free-floating kinematics of one point: generalized Jacobian, base reaction, momentum.

The control-loop twin of :mod:`spart_ros.core.momentum`,
:mod:`spart_ros.core.generalized_jacobian` and :mod:`spart_ros.core.manipulability`: one
:meth:`FreeFloatingKinematics.update` per state computes H (composite rigid body) and the
point's Jacobian on the compiled fast path (:class:`~spart_ros.core.fast.FastDynamics`),
then H0^-1 [H0m, h0] in one 6x6 solve, and keeps every result in this object's buffers (SPART
conventions, see the core modules):

- ``H0``, ``H0m``, ``Hm`` (6, 6), (6, n_q), (n_q, n_q): blocks of H (base, coupling, joints)
- ``J0``, ``Jm`` (6, 6), (6, n_q): the point's Jacobian (Jm: the fixed-base Jacobian)
- ``reaction`` (6, n_q): G = -H0^-1 H0m: u0 per unit joint velocity
- ``Jstar`` (6, n_q): J* = Jm + J0 G (SPART: Jstar)
- ``h0`` (6,): H0 u0 + H0m um, momentum in base coordinates
- ``free_base_velocity`` (6,): H0^-1 h0: the base velocity with the joints still
- ``drift`` (6,): J0 H0^-1 h0: the point's twist with the joints still
- ``link_rotation`` (3, 3): rotation of the link's CoM frame (SPART RL, R0)
- ``link_position`` (3,): the link's CoM (SPART rL, r0), inertial

so that u0 = free_base_velocity + reaction @ um and t_p = Jstar @ um + drift.  The buffers are
overwritten by the next update: copy what you keep.  Only the numpy results of the 6x6 solve
are allocated per tick.
"""

import numpy as np

from ..core import checks as chk
from ..core.errors import InputError, ModelError
from ..core.fast import FastDynamics
from ..core.invertibility import check_invertible
from ..core.momentum import about_point, center_of_mass_from_H0, solve_base

__all__ = ['FreeFloatingKinematics']


class FreeFloatingKinematics:
    """
    Generalized Jacobian, base reaction and momentum of one point, per control tick.

    ``robot``: a floating-base :class:`~spart_ros.core.model.Robot` with moving joints;
    ``link``: SPART link id (0 = base) or name of the link carrying the point; ``offset`` (3,):
    the point from the link CoM, in the link CoM frame (as ``FastDynamics.jacobian``);
    ``dynamics``: a FastDynamics of the same robot to share (one is made otherwise).
    """

    def __init__(self, robot, link, offset=None, dynamics=None):
        check_invertible(robot, floating=True, base_only=True)  # H0^-1 is needed every tick
        if robot.n_q == 0:
            raise ModelError(f'robot {robot.name!r} has no moving joint: nothing to control')
        if dynamics is not None and dynamics.robot is not robot:
            raise InputError('dynamics: a FastDynamics of another robot model')
        self.robot = robot
        self.dynamics = FastDynamics(robot) if dynamics is None else dynamics
        self.link = chk.link_id('link', link, robot)
        self.offset = np.zeros(3) if offset is None else chk.vector('offset', offset, 3).copy()
        nq = self.n_q = robot.n_q
        z = np.zeros
        self.H0, self.H0m, self.J0, self.Jm = z((6, 6)), z((6, nq)), z((6, 6)), z((6, nq))
        self.Hm = z((nq, nq))
        self.reaction, self.Jstar = z((6, nq)), z((6, nq))
        self.h0, self.free_base_velocity, self.drift = z(6), z(6), z(6)
        self.R0, self.r0, self.qm = np.eye(3), z(3), z(nq)  # the last updated state
        self.link_rotation, self.link_position = np.eye(3), z(3)
        self._rhs = z((6, nq + 1))  # [H0m, h0] for one solve
        self._solve_inputs = [('H0', self.H0), ('[H0m, h0]', self._rhs)]  # named if it overflows

    def update(self, R0, r0, qm, u0=None, um=None):
        """
        Compute every attribute at state (R0, r0, qm).

        With ``u0`` (6,) and ``um`` (n_q,) also the momentum h0, else h0 = 0 (a system at rest).
        Returns self.
        """
        fd, nq = self.dynamics, self.n_q
        # checked copies: the kernels then always see contiguous float64 (another layout, e.g. a
        # transposed R0, would make numba compile a new specialization in the control loop)
        self.R0[:] = chk.array('R0', R0, (3, 3))
        self.r0[:] = chk.vector('r0', r0, 3)
        self.qm[:] = chk.vector('qm', qm, nq)
        R0, r0, qm = self.R0, self.r0, self.qm
        H = fd.mass_matrix(R0, r0, qm)
        self.H0[:] = H[0:6, 0:6]
        self.H0m[:] = H[0:6, 6:]
        self.Hm[:] = H[6:, 6:]
        J, _ = fd.jacobian(self.link, R0, r0, qm, offset=self.offset, bias=False)
        self.J0[:] = J[:, 0:6]
        self.Jm[:] = J[:, 6:]
        # the link pose of that Jacobian call's kinematics, for free (pure-Python Kinematics would
        # cost ~40 us per tick; test_space_motion_laws checks it against it)
        R, d = fd.link_pose(self.link)
        self.link_rotation[:] = R
        np.add(r0, d, out=self.link_position)
        if u0 is None and um is None:
            self.h0[:] = 0.0
        else:
            u0 = chk.vector('u0', u0, 6)
            um = chk.vector('um', um, nq)
            np.matmul(self.H0, u0, out=self.h0)
            self.h0 += self.H0m @ um
        self._rhs[:, 0:nq] = self.H0m
        self._rhs[:, nq] = self.h0
        # the robot was checked once (check_invertible): no eigenvalues per tick
        X = solve_base(
            self.H0, self._rhs, 'FreeFloatingKinematics.update', self._solve_inputs, check=False
        )
        np.negative(X[:, 0:nq], out=self.reaction)
        self.free_base_velocity[:] = X[:, nq]
        np.matmul(self.J0, self.reaction, out=self.Jstar)
        self.Jstar += self.Jm
        np.matmul(self.J0, self.free_base_velocity, out=self.drift)
        return self

    def generalized_jacobian(self, R0, r0, qm):
        """
        Return J* (6, n_q) at (R0, r0, qm) (this object's buffer).

        (SPART: Jstar)
        """
        return self.update(R0, r0, qm).Jstar

    def base_reaction(self, um, h0=None):
        """
        Return u0 = H0^-1 (h0 - H0m um) (6,) at the last updated state; ``h0`` (6,) default 0.

        (SPART: Base Reaction block)
        """
        um = chk.vector('um', um, self.n_q)
        if h0 is None:
            return self.reaction @ um
        h0 = chk.vector('h0', h0, 6)
        return (
            solve_base(self.H0, h0, 'base_reaction', [('H0', self.H0), ('h0', h0)], check=False)
            + self.reaction @ um
        )

    @property
    def center_of_mass(self):
        """System CoM (3,), inertial frame, at the last updated state."""
        return center_of_mass_from_H0(self.H0, self.R0, self.r0)

    def momentum(self, about='origin'):
        """
        Return [L; p] (6,), inertial frame, of the last update's velocities.

        Angular momentum about ``about`` ('origin', 'com' = the system CoM, 'base' = the base CoM,
        or a point (3,) fixed in the inertial frame) and linear momentum.
        """
        if isinstance(about, str):
            points = {
                'origin': np.zeros,
                'base': lambda _: self.r0,
                'com': lambda _: self.center_of_mass,
            }
            if about not in points:
                raise InputError(
                    f"about: expected 'origin', 'com', 'base' or a point (3,), got {about!r}"
                )
            point = points[about](3)
        else:
            point = chk.vector('about', about, 3)
        return about_point(
            self.h0,
            self.R0,
            self.r0,
            point,
            'FreeFloatingKinematics.momentum',
            [('h0', self.h0), ('about', point)],
        )
