"""
Fast path in independent joint coordinates, for robots with mimic joints.

:class:`MimicFastDynamics` has the methods of :class:`~spart_ros.core.fast.FastDynamics`
with the same names, signatures and conventions, but ``qm``, ``um``, ``umdot``, ``taum``
and the joint columns of H and J are in the robot's independent coordinates
(``robot.coordinates.names``: every moving joint that mimics nothing, SPART order).  With
q_full = G q + offset, u_full = G u, udot_full = G udot (see :mod:`spart_ros.core.mimic`):

- ID, bias, gravity forces: the full-coordinate results, joint part mapped by G' (a
  follower's effort reaches its leader times its multiplier, as in a real transmission);
  the base rows do not involve joint efforts and are unchanged;
- floating-base ID: full floating ID with umdot_full = G umdot gives the right base
  acceleration; the joint efforts are mapped by G';
- FD: the constrained equations G' H G udot = tau - G' c (floating base: T = blkdiag(I6, G)
  in place of G), from the composite-rigid-body H and the bias at zero acceleration, solved
  by Cholesky: O(n^2) work on top of the O(n) kernels, fine for the few joints of a robot;
- H: T' H T; Jacobians: J T (the bias Jdot u is the same, G being constant); twists: full.

:func:`fast_dynamics` returns a plain FastDynamics when the robot has no mimic joints.
Returned arrays are this object's buffers, overwritten by the next call.
"""

import numpy as np

from . import FastDynamics
from .. import checks as chk
from ..errors import SingularModelError
from ..invertibility import check_invertible

__all__ = ['MimicFastDynamics', 'fast_dynamics']


def fast_dynamics(robot, gravity=None, joint_dynamics=False):
    """
    Return the fast path for ``robot`` in its independent coordinates.

    A FastDynamics when it has no mimic joints (independent = full coordinates), else a
    MimicFastDynamics. ``joint_dynamics``: add the joints' declared damping, friction and armature
    (FastDynamics).
    """
    cls = MimicFastDynamics if robot.mimic else FastDynamics
    return cls(robot, gravity, joint_dynamics=joint_dynamics)


class MimicFastDynamics:
    """
    Compiled dynamics of a robot with mimic joints, in independent coordinates.

    Built as :class:`~spart_ros.core.fast.FastDynamics` is (``robot``, ``gravity``, ``model``,
    ``joint_dynamics``).  ``coordinates``
    (:class:`~spart_ros.core.mimic.IndependentCoordinates`), ``n`` links,
    ``n_q`` independent coordinates, ``full`` the FastDynamics in full coordinates.
    """

    def __init__(self, robot, gravity=None, *, model=None, joint_dynamics=False):
        self.robot = robot
        self.full = FastDynamics(robot, gravity, model=model, joint_dynamics=joint_dynamics)
        c = self.coordinates = robot.coordinates
        self.n, self.n_q, self.n_full = robot.n_links_joints, c.n, c.n_full
        self._G, self._GT, self._offset = c.G, np.ascontiguousarray(c.G.T), c.offset
        self._T = c.generalized(floating=True)
        z = np.zeros
        self._q, self._u, self._udot = z(self.n_full), z(self.n_full), z(self.n_full)
        self._tau = z(self.n_q)
        self._HT = z((6 + self.n_full, 6 + self.n_q))
        self._H = z((6 + self.n_q, 6 + self.n_q))
        self._J = z((6, 6 + self.n_q))
        self._rhs = z(6 + self.n_q)
        self._u0dot, self._umdot = self._rhs[0:6], self._rhs[6:]

    def new_workspace(self):
        """
        Return another MimicFastDynamics on the same compiled model, with its own workspace.

        See FastDynamics.new_workspace.
        """
        return MimicFastDynamics(self.robot, model=self.full.model)

    @property
    def model(self):
        """Return the compiled model, in full coordinates, shared by the workspaces."""
        return self.full.model

    @property
    def joint_dynamics(self):
        """Return True if the model adds the joints' damping, friction and armature."""
        return self.full.joint_dynamics

    def joint_friction(self, um):
        """
        Return G' (d u + F sgn_v(u)) with u = G um (n_q,).

        The joints' damping and friction efforts on the independent coordinates (see
        FastDynamics.joint_friction).
        """
        return np.array(self._forces(self.full.joint_friction(self._map('um', um, self._u))))

    @property
    def gravity(self):
        """
        Return the model's gravity vector, (3,) in the inertial frame [m/s^2].

        See FastDynamics.gravity.
        """
        return self.full.gravity

    @gravity.setter
    def gravity(self, g):
        self.full.gravity = g

    # -- coordinates ----------------------------------------------------------------------
    def _positions(self, qm):
        np.dot(self._G, chk.vector('qm', qm, self.n_q), out=self._q)
        self._q += self._offset
        return self._q

    def _map(self, name, x, out):
        if x is None:
            return None
        return np.dot(self._G, chk.vector(name, x, self.n_q), out=out)

    def _forces(self, taum_full):
        return np.dot(self._GT, taum_full, out=self._tau)

    # -- algorithms -----------------------------------------------------------------------
    def inverse_dynamics(
        self, R0, r0, qm, u0, um, u0dot, umdot, wF0=None, wFm=None, gravity=None, floating=True
    ):
        """
        Return (tau0 (6,), taum (n_q,)) realizing u0dot, umdot (independent coordinates).

        taum = G' taum_full; ``floating`` False pins the base.
        """
        tau0, taum = self.full.inverse_dynamics(
            R0,
            r0,
            self._positions(qm),
            u0,
            self._map('um', um, self._u),
            u0dot,
            self._map('umdot', umdot, self._udot),
            wF0,
            wFm,
            gravity,
            floating,
        )
        return tau0, self._forces(taum)

    def bias_forces(self, R0, r0, qm, u0, um, wF0=None, wFm=None, gravity=None, floating=True):
        """
        Return the generalized forces at zero acceleration (independent coordinates).

        ``floating`` False pins the base.
        """
        b0, bm = self.full.bias_forces(
            R0,
            r0,
            self._positions(qm),
            u0,
            self._map('um', um, self._u),
            wF0,
            wFm,
            gravity,
            floating,
        )
        return b0, self._forces(bm)

    def gravity_forces(self, R0, r0, qm, gravity=None):
        """
        Return (g0 (6,), gm (n_q,)).

        The generalized forces that hold the robot still against gravity.
        """
        g0, gm = self.full.gravity_forces(R0, r0, self._positions(qm), gravity)
        return g0, self._forces(gm)

    def floating_inverse_dynamics(
        self, R0, r0, qm, u0, um, umdot, wF0=None, wFm=None, gravity=None
    ):
        """Return (taum (n_q,), u0dot (6,)) for independent joint accelerations, base free."""
        taum, u0dot = self.full.floating_inverse_dynamics(
            R0,
            r0,
            self._positions(qm),
            u0,
            self._map('um', um, self._u),
            self._map('umdot', umdot, self._udot),
            wF0,
            wFm,
            gravity,
        )
        return self._forces(taum), u0dot

    def mass_matrix(self, R0, r0, qm):
        """
        Return H (6 + n_q, 6 + n_q) in independent coordinates.

        T' H_full T, T = blkdiag(I6, G).
        """
        H = self.full.mass_matrix(R0, r0, self._positions(qm))
        np.matmul(H, self._T, out=self._HT)
        return np.matmul(self._T.T, self._HT, out=self._H)

    def forward_dynamics(
        self, R0, r0, qm, u0, um, tau0, taum, wF0=None, wFm=None, gravity=None, floating=True
    ):
        """
        Return (u0dot (6,), umdot (n_q,)) under tau0 and independent efforts taum.

        Solves T' H T udot = tau - T' c (the joint block only, u0dot = 0, with floating=False).
        """
        check_invertible(self.robot, floating, independent=True)  # names what has no mass (cached)
        taum = chk.vector('taum', taum, self.n_q)
        tau0 = chk.vector('tau0', tau0, 6)
        H = self.mass_matrix(R0, r0, qm)  # fills self._q
        b0, bm = self.full.bias_forces(
            R0, r0, self._q, u0, self._map('um', um, self._u), wF0, wFm, gravity, floating
        )
        np.subtract(tau0, b0, out=self._rhs[0:6])
        np.subtract(taum, self._forces(bm), out=self._rhs[6:])
        k = 0 if floating else 6
        A = H[k:, k:]
        try:
            L = np.linalg.cholesky(A)
        except np.linalg.LinAlgError:
            raise SingularModelError(self._singular_message(A, floating)) from None
        x = np.linalg.solve(L.T, np.linalg.solve(L, self._rhs[k:]))
        if floating:
            self._rhs[:] = x
        else:
            self._rhs[0:6] = 0.0
            self._rhs[6:] = x
        return self._u0dot, self._umdot

    def _singular_message(self, A, floating):
        return (
            f'robot {self.robot.name!r}: the generalized inertia matrix in independent '
            'coordinates is singular in this state (a point mass on a joint axis, or a joint that '
            'moves no mass)'
        )

    def jacobian(self, link, R0, r0, qm, u0=None, um=None, offset=None, floating=True, bias=True):
        """
        Return (J (6, 6 + n_q), Jdot u (6,)) of a point on ``link``.

        Joint columns in independent coordinates (J_full T); ``offset``, ``floating``, ``bias``:
        see
        FastDynamics.jacobian.
        """
        J, Jbias = self.full.jacobian(
            link,
            R0,
            r0,
            self._positions(qm),
            u0,
            None if um is None else self._map('um', um, self._u),
            offset,
            floating,
            bias,
        )
        return np.matmul(J, self._T, out=self._J), Jbias

    def link_pose(self, link):
        """Return (R, r) of a link's CoM frame from the last call (see FastDynamics.link_pose)."""
        return self.full.link_pose(link)

    def twists(self, R0, r0, qm, u0, um, floating=True):
        """Return (rL (3, n + 1), tL (6, n + 1), com (6,)), as FastDynamics does (``floating``)."""
        return self.full.twists(
            R0, r0, self._positions(qm), u0, self._map('um', um, self._u), floating
        )
