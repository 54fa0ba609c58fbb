"""
Closed-form (sympy) model of a fixed-base robot: H, C, Christoffel symbols, g, Jacobians.

:class:`SymbolicModel` pushes joint symbols q1..qn (and rates qd1..qdn) through the core's
SPART functions (Kinematics, DiffKinematics, Velocities, Jacob, I_I, MCB, GIM, CIM: the same
code the numeric results come from), on the robot with its numbers made exact
(:mod:`.exact`), or on a symbolic robot built with RobotBuilder, and simplifies every result
(:mod:`.simplify`; ``simplify=False`` skips it).  Conventions are the core's: joint symbols in
SPART's q_id order, the base CoM frame fixed at R0, r0 (from ``base_pose``, the URDF base link
frame in the inertial frame (4x4); default: the pose the URDF's ``world`` joint gives the base link
(``robot.base_pose``), else the identity), Jacobians and poses in the inertial frame.
"""

import numpy as np
import sympy

from .exact import exact_array, exact_robot, SNAP
from .simplify import MAX_OPS, TIME_LIMIT, TOTAL_LIMIT
from .simplify import simplify as simplify_expressions
from .. import spart
from ..core.analytic_jacobian import _inverse_rate_matrix, SEQUENCES
from ..core.errors import ModelError


def _obj(values):
    return np.array(list(values), dtype=object)


def _matrix(a):
    a = np.asarray(a, dtype=object)
    return sympy.Matrix(a.tolist()) if a.ndim == 2 else sympy.Matrix(list(a))


class SymbolicModel:
    """
    Closed-form model of ``robot`` on a fixed base (see the module docstring).

    ``gravity`` (3,) in the inertial frame, numbers or sympy expressions; default
    (0, 0, -g) with the symbol ``g`` (``self.g``).  ``simplify``: simplify every result (the
    switch); ``time_limit``: seconds per simplification step and entry; ``max_ops``: larger
    entries are not expanded; ``total_limit``: seconds per result, beyond which the remaining
    entries stay unsimplified (each limit is reported in ``self.reports``, never a hang).  The
    time limits make the result depend on the machine's speed and load; ``time_limit=None,
    total_limit=None`` leaves only ``max_ops`` (deterministic: the same result everywhere).
    ``snap``: rotation entries of a numeric model within this of 0 or +-1 are made exact (URDF
    rounding of pi/2; see :mod:`.exact`).  ``self.q``, ``self.qd``, ``self.qdd`` are the symbol
    vectors
    (sympy Matrix, n_q x 1); ``self.reports`` holds the simplification figures of each result.
    Results are cached.
    """

    def __init__(
        self,
        robot,
        *,
        base_pose=None,
        gravity=None,
        simplify=True,
        time_limit=TIME_LIMIT,
        max_ops=MAX_OPS,
        total_limit=TOTAL_LIMIT,
        snap=SNAP,
    ):
        if robot.n_q == 0:
            raise ModelError(f'robot {robot.name!r} has no moving joint')
        self.source = robot
        self.robot = exact_robot(robot, snap)
        n = robot.n_q
        self.n_q = n
        self.q = sympy.Matrix(sympy.symbols(f'q1:{n + 1}', real=True))
        self.qd = sympy.Matrix(sympy.symbols(f'qd1:{n + 1}', real=True))
        self.qdd = sympy.Matrix(sympy.symbols(f'qdd1:{n + 1}', real=True))
        self.g = sympy.Symbol('g', positive=True)
        self.gravity = _obj(
            [0, 0, -self.g] if gravity is None else [sympy.sympify(x) for x in gravity]
        )
        if self.gravity.shape != (3,):
            raise ModelError(f'gravity: expected 3 values, got {len(self.gravity)}')
        self.R0, self.r0 = self._base(base_pose)
        self.simplify, self.time_limit, self.max_ops, self.total_limit = (
            simplify,
            time_limit,
            max_ops,
            total_limit,
        )
        self.reports = {}
        self._cache = {}

    def _base(self, base_pose):
        if base_pose is None and self.robot.base_pose is None:
            T = self.robot.base_link.T  # base link frame at the origin: R0 = R_bc, r0 = p_bc
            return np.asarray(T[:3, :3], dtype=object), np.asarray(T[:3, 3], dtype=object)
        from ..core.base_state import base_from_link_frame

        T = np.asarray(self.robot.base_pose if base_pose is None else base_pose, dtype=float)
        R0, r0, _ = base_from_link_frame(
            self.source if not self.source.symbolic else self.robot, T[:3, :3], T[:3, 3]
        )
        return exact_array(R0, (slice(0, 3), slice(0, 3))), exact_array(r0)

    # -- plumbing ------------------------------------------------------------------------------
    def _result(self, name, build):
        """Return the cached, simplified result ``name`` (built by ``build()`` on first use)."""
        if name not in self._cache:
            raw = build()
            out, report = simplify_expressions(
                raw, self.simplify, self.time_limit, self.max_ops, self.total_limit
            )
            self._cache[name], self.reports[name] = out, report
        return self._cache[name]

    def _chain(self):
        """Return the symbolic SPART chain at (q, qd), base fixed (cached object arrays)."""
        if 'chain' not in self._cache:
            r, z6 = self.robot, _obj([sympy.Integer(0)] * 6)
            qm, um = _obj(self.q), _obj(self.qd)
            c = {}
            c['RJ'], c['RL'], c['rJ'], c['rL'], c['e'], c['g'] = spart.Kinematics(
                self.R0, self.r0, qm, r
            )
            c['Bij'], c['Bi0'], c['P0'], c['pm'] = spart.DiffKinematics(
                self.R0, self.r0, c['rL'], c['e'], c['g'], r
            )
            c['t0'], c['tL'] = spart.Velocities(c['Bij'], c['Bi0'], c['P0'], c['pm'], z6, um, r)
            c['I0'], c['Im'] = spart.I_I(self.R0, c['RL'], r)
            c['M0t'], c['Mmt'] = spart.MCB(c['I0'], c['Im'], c['Bij'], c['Bi0'], r)
            self._cache['chain'] = c
        return self._cache['chain']

    def _link(self, link):
        from ..core import _checks as chk

        return chk.link_id('link', link, self.robot)

    def _point(self, link, offset):
        c = self._chain()
        i = self._link(link)
        R, p = (self.R0, self.r0) if i == 0 else (c['RL'][:, :, i - 1], c['rL'][:, i - 1])
        if offset is not None:
            p = p + R @ _obj(sympy.sympify(x) for x in offset)
        return i, R, p

    # -- dynamics ------------------------------------------------------------------------------
    def mass_matrix(self):
        """H(q) (n_q x n_q): SPART's GIM (Hm)."""

        def build():
            c = self._chain()
            return _matrix(
                spart.GIM(c['M0t'], c['Mmt'], c['Bij'], c['Bi0'], c['P0'], c['pm'], self.robot)[2]
            )

        return self._result('H', build)

    def coriolis_matrix(self):
        """
        Return SPART's C(q, qd) (n_q x n_q): CIM's Cm.

        The factorization C = N'(M Ndot + W M N).
        """

        def build():
            c = self._chain()
            return _matrix(
                spart.CIM(
                    c['t0'],
                    c['tL'],
                    c['I0'],
                    c['Im'],
                    c['M0t'],
                    c['Mmt'],
                    c['Bij'],
                    c['Bi0'],
                    c['P0'],
                    c['pm'],
                    self.robot,
                )[3]
            )

        return self._result('C_spart', build)

    def christoffel(self):
        """
        Christoffel symbols of the first kind, a sympy Array (n_q, n_q, n_q).

        C[i, j, k] = 1/2 (dH_ij/dq_k + dH_ik/dq_j - dH_jk/dq_i) (0-based indices).
        """

        def build():
            H, q, n = self.mass_matrix(), self.q, self.n_q
            dH = [H.diff(q[k]) for k in range(n)]
            return sympy.Array(
                [
                    [
                        [(dH[k][i, j] + dH[j][i, k] - dH[i][j, k]) / 2 for k in range(n)]
                        for j in range(n)
                    ]
                    for i in range(n)
                ]
            )

        return self._result('christoffel', build)

    def christoffel_matrix(self):
        """
        C(q, qd) = sum_k c[i, j, k] qd_k (n_q x n_q).

        The Christoffel factorization, with dH/dt - 2 C skew-symmetric. C qd equals SPART's C qd
        (another factorization).
        """

        def build():
            c, n = self.christoffel(), self.n_q
            return sympy.Matrix(n, n, lambda i, j: sum(c[i, j, k] * self.qd[k] for k in range(n)))

        return self._result('C', build)

    def mass_matrix_dot(self):
        """dH/dt = sum_k dH/dq_k qd_k (n_q x n_q)."""

        def build():
            H = self.mass_matrix()
            return sum(
                (H.diff(self.q[k]) * self.qd[k] for k in range(self.n_q)), sympy.zeros(self.n_q)
            )

        return self._result('Hdot', build)

    def gravity_forces(self):
        """
        g(q) (n_q x 1) = dV/dq, V = -sum_k m_k gravity . rL_k.

        The joint forces that hold the robot still (the core's gravity_forces).
        """

        def build():
            rL = self._chain()['rL']
            V = -sum(
                link.mass * (self.gravity @ rL[:, k]) for k, link in enumerate(self.robot.links)
            )
            return sympy.Matrix([sympy.diff(V, qi) for qi in self.q])

        return self._result('g', build)

    def inverse_dynamics(self):
        """Return tau = H qdd + C qd + g (n_q x 1), in the symbols q, qd, qdd (and g)."""

        def build():
            return (
                self.mass_matrix() * self.qdd
                + self.christoffel_matrix() * self.qd
                + self.gravity_forces()
            )

        return self._result('ID', build)

    # -- kinematics ----------------------------------------------------------------------------
    def pose(self, link, offset=None):
        """
        (R (3x3), p (3x1)).

        The link's CoM frame (SPART RL) and the point at ``offset`` (from the CoM, in the CoM
        frame), inertial frame.
        """

        def build():
            _, R, p = self._point(link, offset)
            return _matrix(R).row_join(_matrix(p))

        T = self._result(('pose', self._link(link), _key(offset)), build)
        return T[:, 0:3], T[:, 3]

    def jacobian(self, link, offset=None):
        """
        J(q) (6 x n_q).

        Rows [angular velocity of the link; velocity of the point], inertial frame (SPART Jacob's
        Jm).
        """

        def build():
            c = self._chain()
            i, _, p = self._point(link, offset)
            return _matrix(spart.Jacob(p, self.r0, c['rL'], c['P0'], c['pm'], i, self.robot)[1])

        return self._result(('J', self._link(link), _key(offset)), build)

    def analytic_jacobian(self, link, offset=None, sequence='ZYX'):
        """
        Ja(q) (6 x n_q).

        Rows [rates of the link's Euler angles [phi, theta, psi]; velocity of the point].
        ``sequence`` 'ZYX' (R = Rz(psi) Ry(theta) Rx(phi), SPART Angles321) or 'XYZ' (R = Rx(phi)
        Ry(theta) Rz(psi), SPART Angles123).  Singular at theta = +-pi/2 (gimbal lock), where
        cos(theta) = 0 divides: the expression is undefined there.
        """
        if sequence not in SEQUENCES:
            raise ModelError(f'sequence: expected one of {SEQUENCES}, got {sequence!r}')

        def build():
            J = np.array(self.jacobian(link, offset).tolist(), dtype=object)
            R = np.array(self.pose(link, offset)[0].tolist(), dtype=object)
            Ti = _inverse_rate_matrix(R, sequence, 'analytic_jacobian')
            return _matrix(Ti @ J[0:3, :]).col_join(_matrix(J[3:6, :]))

        return self._result(('Ja', self._link(link), _key(offset), sequence), build)

    def analytic_jacobian_dot(self, link, offset=None, sequence='ZYX'):
        """dJa/dt = sum_k dJa/dq_k qd_k (6 x n_q), same singularity as analytic_jacobian."""

        def build():
            Ja = self.analytic_jacobian(link, offset, sequence)
            return sum(
                (Ja.diff(self.q[k]) * self.qd[k] for k in range(self.n_q)),
                sympy.zeros(6, self.n_q),
            )

        return self._result(('Jadot', self._link(link), _key(offset), sequence), build)

    # -- numbers -------------------------------------------------------------------------------
    def evaluate(self, expr, q=None, qd=None, qdd=None, values=None):
        """
        Return a float array of ``expr`` (a result) at numeric q, qd.

        Also at ``qdd`` (n_q,; zeros if not given) and ``values`` {symbol: number} for other
        symbols (default g = 9.81); a column (n x 1) comes back 1-D.
        """
        values = {self.g: 9.81, **(values or {})}
        symbols = list(self.q) + list(self.qd) + list(self.qdd) + list(values)
        zeros = [0.0] * self.n_q
        numbers = [
            float(x)
            for v in (q, qd, qdd)
            for x in (zeros if v is None else np.asarray(v, dtype=float))
        ]
        body = expr.tolist() if hasattr(expr, 'tolist') else expr
        f = sympy.lambdify(symbols, body, modules='numpy')
        out = np.array(f(*numbers, *[float(v) for v in values.values()]), dtype=float)
        return out[:, 0] if isinstance(expr, sympy.MatrixBase) and expr.cols == 1 else out

    def sizes(self):
        """Return {result: SimplifyReport} of the results built so far."""
        return dict(self.reports)


def _key(offset):
    return None if offset is None else tuple(str(x) for x in offset)
