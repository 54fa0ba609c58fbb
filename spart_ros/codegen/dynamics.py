"""
Unrolled dynamics of a fixed-base SPART robot on an expression :class:`~.expressions.Graph`.

The algorithms are spatial_v2's (one short function per algorithm, a loop over the links
with a parent array), written for generated code: every spatial quantity is expressed in
ONE frame, the base CoM frame B (origin at the base CoM r0, axes R0), so no per-link
coordinate transform is needed, and the model's constants enter as numbers that fold.

Each moving joint gets a "z frame" F_i: its joint frame turned so that the joint axis is z
(constant rotation Q_i, Q_i z = axis), moved by the joint.  Then

    F_i = F_parent K_i Rz(q_i)  (revolute),  F_parent K_i  (prismatic, fixed),

with the constant K_i = G_parent A_Ji Q_i (A_Ji the joint frame in the parent CoM frame,
G_p = Q_p' A_Lp the parent's CoM frame in its z frame); the joint axis in B is F_i's third
column and does not depend on q_i.  A joint axis along a coordinate axis and URDF frames
that are multiples of 90 degrees make K_i a signed permutation: no multiplication at all.

Conventions are SPART's (docs/conventions.md): joint variables in q_id order, the base CoM
frame as the base (R0, r0 fixed, given at generation), results equal to the core's:
``mass_matrix`` = GIM's Hm, ``coriolis_matrix`` = CIM's Cm (SPART's factorization
C = N'(M Ndot + W M N)), ``inverse_dynamics`` = ID's taum with gravity, Jacobians
[angular velocity of the link; velocity of the point] in the inertial frame.
"""

import numpy as np

from .expressions import add, cos, cross, dot, matmul, matvec, scale, sin, sub
from ..core.model import FIXED, PRISMATIC, REVOLUTE

#: no API: the recursions the generator unrolls (spart_ros.codegen.generate is the entry)
__all__ = []

_SNAP = 1e-14


def _snap_rotation(R):
    """
    Entries within 1e-14 of 0 or +-1 made exact.

    Products of URDF rotations leave 6e-17 where a zero belongs; the change is below the 1e-12 the
    generated code is checked to.
    """
    R = np.array(R, dtype=float)
    for v in (0.0, 1.0, -1.0):
        R[np.abs(R - v) < _SNAP] = v
    return R


def _snap_values(x):
    """Entries below 1e-14 of the largest entry made 0 (rounding left by the rotations)."""
    x = np.array(x, dtype=float)
    big = np.abs(x).max() if x.size else 0.0
    x[np.abs(x) <= _SNAP * big] = 0.0
    return x


def axis_frame(axis):
    """Q with Q @ [0, 0, 1] = axis (unit), exact for +-x, +-y, +-z."""
    a = np.asarray(axis, dtype=float)
    for k in range(3):
        if abs(abs(a[k]) - 1.0) < _SNAP and abs(a).sum() - abs(a[k]) < _SNAP:
            s = 1.0 if a[k] > 0 else -1.0
            i, j = (k + 1) % 3, (k + 2) % 3  # (i, j, k) cyclic: e_i x e_j = e_k
            Q = np.zeros((3, 3))
            Q[i, 0], Q[j, 1], Q[k, 2] = 1.0, s, s  # columns e_i, s e_j, s e_k (right-handed)
            return Q
    a = a / np.linalg.norm(a)
    helper = np.eye(3)[int(np.argmin(np.abs(a)))]
    x = np.cross(helper, a)
    x /= np.linalg.norm(x)
    return np.column_stack([x, np.cross(a, x), a])


class TreeModel:
    """
    The constants of a numeric Robot that the unrolled algorithms need (see the module docstring).

    Per link k (1..n) ``parent``, ``type``, ``q`` (0-based index or -1), ``K``, ``G``, ``k`` (the
    joint origin in the parent's z frame, from the parent's CoM), ``d`` (the CoM in the z frame,
    from the joint origin), ``inertia`` (the CoM inertia in the z frame), ``mass``; the gravity
    (inertial frame) and, for a fixed base, R0, r0 and the gravity in B.
    """

    def __init__(self, robot, R0, r0, gravity):
        self.robot = robot
        self.n, self.n_q = robot.n_links_joints, robot.n_q
        self.R0, self.r0 = np.asarray(R0, dtype=float), np.asarray(r0, dtype=float)
        self.gravity = np.asarray(gravity, dtype=float)
        self.gravity_B = _snap_values(self.R0.T @ np.asarray(gravity, dtype=float))
        n = self.n
        self.parent = [0] * (n + 1)
        self.type = [FIXED] * (n + 1)
        self.q = [-1] * (n + 1)
        self.K, self.G = [np.eye(3)] * (n + 1), [np.eye(3)] * (n + 1)
        self.k, self.d = [np.zeros(3)] * (n + 1), [np.zeros(3)] * (n + 1)
        self.mass = [float(robot.base_link.mass)] + [float(link.mass) for link in robot.links]
        self.inertia = [np.asarray(robot.base_link.inertia, dtype=float)] + [None] * n
        self.children = [[] for _ in range(n + 1)]
        for i, (link, joint) in enumerate(zip(robot.links, robot.joints), start=1):
            p = joint.parent_link
            self.parent[i], self.type[i] = p, joint.type
            self.children[p].append(i)
            self.q[i] = joint.q_id - 1 if joint.type != FIXED else -1
            TJ, TL = np.asarray(joint.T, dtype=float), np.asarray(link.T, dtype=float)
            Q = axis_frame(joint.axis) if joint.type != FIXED else np.eye(3)
            self.K[i] = _snap_rotation(self.G[p] @ TJ[:3, :3] @ Q)
            self.k[i] = _snap_values(self.G[p] @ TJ[:3, 3])
            self.G[i] = _snap_rotation(Q.T @ TL[:3, :3])
            self.d[i] = _snap_values(Q.T @ TL[:3, 3])
            inertia = self.G[i] @ np.asarray(link.inertia, dtype=float) @ self.G[i].T
            self.inertia[i] = _snap_values((inertia + inertia.T) / 2)
        self.moving = [i for i in range(1, n + 1) if self.type[i] != FIXED]

    def path(self, k):
        """Links from k up to (not including) the base: k, parent(k), ..."""
        out = []
        while k:
            out.append(k)
            k = self.parent[k]
        return out

    def descendants(self, k):
        """``k`` and every link below it."""
        out, stack = [], [k]
        while stack:
            i = stack.pop()
            out.append(i)
            stack.extend(self.children[i])
        return out


def _rotate_z(M, c, s):
    """M @ Rz(angle) with c, s = cos, sin of the angle (M a list of rows)."""
    return [[row[0] * c + row[1] * s, row[1] * c - row[0] * s, row[2]] for row in M]


def _congruence(F, inertia):
    """F I F' (symmetric, as full rows); I a constant (3, 3) array."""
    FI = matmul(F, inertia.tolist())
    out = [[None] * 3 for _ in range(3)]
    for r in range(3):
        for c in range(r, 3):
            out[r][c] = out[c][r] = dot(FI[r], F[c])
    return out


class Kinematics:
    """
    Positions, z frames, axes and inertias of every link in B, as graph nodes.

    ``F[k]`` (3x3 rows), ``c[k]`` CoM (3), ``pJ[k]`` joint origin (3), ``e[k]`` joint axis
    (3, moving joints), ``Ic[k]`` CoM inertia in B (3x3 rows, symmetric) for k = 0..n
    (the base: identity, origin, its inertia).
    """

    def __init__(self, graph, model, q):
        self.graph, self.model = graph, model
        n = model.n
        zero3 = [graph.zero] * 3
        ident = [[graph.const(float(r == c)) for c in range(3)] for r in range(3)]
        self.F, self.c, self.pJ, self.e = (
            [ident] + [None] * n,
            [zero3] + [None] * n,
            [zero3] * (n + 1),
            [None] * (n + 1),
        )
        self.Ic = [[[graph.const(v) for v in row] for row in model.inertia[0]]] + [None] * n
        for i in range(1, n + 1):
            p = model.parent[i]
            Fp = self.F[p]
            M = matmul(Fp, model.K[i].tolist())
            self.pJ[i] = add(self.c[p], matvec(Fp, model.k[i].tolist()))
            t = model.type[i]
            if t == REVOLUTE:
                qi = q[model.q[i]]
                self.F[i] = _rotate_z(M, cos(qi), sin(qi))
            else:
                self.F[i] = M
            d = model.d[i].tolist()
            if t == PRISMATIC:
                d = [d[0], d[1], d[2] + q[model.q[i]]]
            if t != FIXED:
                self.e[i] = [M[0][2], M[1][2], M[2][2]]
            self.c[i] = add(self.pJ[i], matvec(self.F[i], d))
            self.Ic[i] = _congruence(self.F[i], model.inertia[i])

    def motion(self, i):
        """
        Return the joint's motion subspace.

        Angular, linear velocity of the point at B's origin.
        """
        e = self.e[i]
        if self.model.type[i] == REVOLUTE:
            return e, cross(self.pJ[i], e)
        zero = self.graph.zero
        return [zero] * 3, e

    def link_rotation(self, k):
        """Return the link's CoM frame in B (SPART's RL in B), 3x3 rows."""
        return matmul(self.F[k], self.model.G[k].tolist())


class Base:
    """
    The base's motion in B, and R0 (3x3 rows, numbers or nodes).

    ``w`` angular velocity, ``v`` velocity of B's origin (the base CoM), ``al`` angular
    acceleration, ``a`` the spatial acceleration of the origin with gravity in it (a - w x v - g,
    the usual trick: gravity as an upward acceleration of the base). Fixed: all zero but -g;
    floating: from SPART's u0 = [omega in the base frame; CoM velocity, inertial] and u0dot.
    """

    def __init__(self, graph, model, R0=None, u0=None, u0dot=None, gravity=True):
        self.floating = R0 is not None
        zero3 = [graph.zero] * 3
        g = model.gravity if gravity else np.zeros(3)
        if not self.floating:
            self.R0 = model.R0.tolist()
            self.w = self.v = self.al = zero3
            self.a = [graph.const(-x) for x in model.gravity_B] if gravity else zero3
            return
        self.R0 = R0
        Rt = [[R0[c][r] for c in range(3)] for r in range(3)]
        u0 = u0 if u0 is not None else [graph.zero] * 6
        u0dot = u0dot if u0dot is not None else [graph.zero] * 6
        self.w, self.v = u0[0:3], matvec(Rt, u0[3:6])
        self.al = u0dot[0:3]
        self.a = sub(
            matvec(Rt, [x - float(gk) for x, gk in zip(u0dot[3:6], g)]), cross(self.w, self.v)
        )


class Column:
    """
    One generalized coordinate.

    The motion it gives (spatial, in B at B's origin: angular ``a``, linear ``b``) to the links
    below ``link``; a rotation about the axis ``e`` through ``pJ`` (``rev``) or a translation along
    ``e``. Joints are columns of their child link; the floating base's six are columns of link 0.
    """

    __slots__ = ('link', 'rev', 'a', 'b', 'e', 'pJ', 'constant_direction')

    def __init__(self, link, rev, a, b, e, pJ, constant_direction=False):
        self.link, self.rev, self.a, self.b, self.e, self.pJ = link, rev, a, b, e, pJ
        self.constant_direction = (
            constant_direction  # the base's translations: fixed in the inertial frame
        )

    def project(self, n, f):
        """Return the column's share of a spatial force (n, f) at B's origin."""
        return dot(self.a, n) + dot(self.b, f)


def columns(kin, base):
    """Return the Columns of u: [u0 (floating base only); the joints in q_id order]."""
    g, m = kin.graph, kin.model
    zero3 = [g.zero] * 3
    cols = []
    if base.floating:
        for k in range(3):
            e = [g.const(float(k == r)) for r in range(3)]
            cols.append(Column(0, True, e, zero3, e, zero3))
        for k in range(3):
            d = list(base.R0[k])  # R0' e_k: the inertial axis k in B
            cols.append(Column(0, False, zero3, d, d, None, constant_direction=True))
    for i in sorted(m.moving, key=lambda i: m.q[i]):
        a, b = kin.motion(i)
        cols.append(Column(i, m.type[i] == REVOLUTE, a, b, kin.e[i], kin.pJ[i]))
    return cols


def _above(model, upper, lower):
    """Return True when link ``upper`` is ``lower`` or on its path to the base (0 is above all)."""
    return upper == 0 or upper in model.path(lower)


def _velocities(kin, base, qd):
    """Spatial velocities (w, vO) of every link at B's origin."""
    m = kin.model
    w, vO = [base.w] * (m.n + 1), [base.v] * (m.n + 1)
    for i in range(1, m.n + 1):
        p = m.parent[i]
        if m.type[i] == FIXED:
            w[i], vO[i] = w[p], vO[p]
            continue
        sa, sl = kin.motion(i)
        qdi = qd[m.q[i]]
        w[i], vO[i] = add(w[p], scale(qdi, sa)), add(vO[p], scale(qdi, sl))
    return w, vO


def inverse_dynamics(kin, base, qd, qdd):
    """
    Return the generalized forces for the joint rates qd, accelerations qdd and the base's motion.

    [tau0 (6, floating base only); taum (n_q)] for the joint rates qd and accelerations qdd (lists
    of nodes or numbers: zeros fold away) and the base's motion: the recursive Newton-Euler
    algorithm, every spatial vector in B at B's origin. tau0 is SPART's: [torque in the base frame;
    force in the inertial frame], at the base CoM.
    """
    g, m = kin.graph, kin.model
    n = m.n
    w, vO = _velocities(kin, base, qd)
    al, aO = [base.al] * (n + 1), [base.a] * (n + 1)
    zero3 = [g.zero] * 3
    fn, ff = [zero3] * (n + 1), [zero3] * (n + 1)
    first = 0 if base.floating else 1
    for i in range(first, n + 1):
        p = m.parent[i]
        if i and m.type[i] == FIXED:
            al[i], aO[i] = al[p], aO[p]
        elif i:
            sa, sl = kin.motion(i)
            qdi, qddi = qd[m.q[i]], qdd[m.q[i]]
            ja, jl = scale(qdi, sa), scale(qdi, sl)  # the joint's velocity
            # a_i = a_p + S qdd + v_p x S qd (S x S = 0: v_p instead of v_i)
            al[i] = add(add(al[p], scale(qddi, sa)), cross(w[p], ja))
            aO[i] = add(add(aO[p], scale(qddi, sl)), add(cross(w[p], jl), cross(vO[p], ja)))
        # Newton-Euler at the CoM, moved to B's origin
        c, mass = kin.c[i], m.mass[i]
        vc = add(vO[i], cross(w[i], c))
        ac = add(add(aO[i], cross(al[i], c)), cross(w[i], vc))
        F = scale(mass, ac)
        Ic = kin.Ic[i]
        N = add(matvec(Ic, al[i]), cross(w[i], matvec(Ic, w[i])))
        fn[i], ff[i] = add(N, cross(c, F)), F
    for i in range(n, 0, -1):
        p = m.parent[i]
        if p or base.floating:
            fn[p], ff[p] = add(fn[p], fn[i]), add(ff[p], ff[i])
    return [col.project(fn[col.link], ff[col.link]) for col in columns(kin, base)]


def _composites(kin, base):
    """
    Composite inertias about B's origin of every subtree.

    (mass, first moment h, rotational inertia J), the base's own body included for a floating base.
    """
    g, m = kin.graph, kin.model
    n = m.n
    mass, h, J = [None] * (n + 1), [None] * (n + 1), [None] * (n + 1)
    for i in range(n, -1 if base.floating else 0, -1):
        c, mi, Ic = kin.c[i], m.mass[i], kin.Ic[i]
        hi = scale(mi, c)
        cc = dot(c, c)
        Ji = [
            [Ic[r][s] + (mi * cc if r == s else 0.0) - hi[r] * c[s] for s in range(3)]
            for r in range(3)
        ]
        if mass[i] is None:
            mass[i], h[i], J[i] = g.const(mi), hi, Ji
        else:  # the children's already there
            mass[i], h[i] = mass[i] + mi, add(h[i], hi)
            J[i] = [[J[i][r][s] + Ji[r][s] for s in range(3)] for r in range(3)]
        p = m.parent[i]
        if i and (p or base.floating):
            if mass[p] is None:
                mass[p], h[p], J[p] = mass[i], h[i], J[i]
            else:
                mass[p], h[p] = mass[p] + mass[i], add(h[p], h[i])
                J[p] = [[J[p][r][s] + J[i][r][s] for s in range(3)] for r in range(3)]
    return mass, h, J


def mass_matrix(kin, base):
    """
    H (rows of nodes; (6 + n_q)^2 for a floating base in SPART's u, else n_q^2).

    The composite-rigid-body algorithm, H_ij = S_i' I_j S_j with I_j the composite inertia below
    the deeper column's link, about B's origin.
    """
    g, m = kin.graph, kin.model
    mass, h, J = _composites(kin, base)
    cols = columns(kin, base)
    H = [[g.zero] * len(cols) for _ in cols]
    for j, cj in enumerate(cols):
        L = cj.link
        # I S_j = [J a + h x b; m b - h x a], a spatial force at B's origin
        Fn = add(matvec(J[L], cj.a), cross(h[L], cj.b))
        Ff = sub(scale(mass[L], cj.b), cross(h[L], cj.a))
        for i, ci in enumerate(cols):
            if _above(m, ci.link, L) and (ci.link != L or i <= j):
                H[i][j] = H[j][i] = ci.project(Fn, Ff)
    return H


def coriolis_matrix(kin, base, qd):
    """
    Return SPART's C (CIM: C = sum_k N_k' (M_k Ndot_k + W_k M_k N_k), rows and columns as u).

    With a_kj, b_kj the angular and CoM-velocity parts of column j of N_k (link k's twist):
    C_ij = sum over links k below both columns of a_ki . X_kj + b_ki . Y_kj, with
    X_kj = I_k d/dt(a_kj) + w_k x I_k a_kj and Y_kj = m_k d/dt(b_kj).  For a rotation i,
    b_ki . Y = e_i . (c_k x Y - pJ_i x Y), so the per-(k, j) vectors X, Y, c_k x Y are
    summed up the tree once (U below) and C_ij reads them at the deeper of the two columns.
    Time derivatives are inertial ones, in B's coordinates: an axis fixed in a body turns
    with it, the base's translation axes do not.
    """
    g, m = kin.graph, kin.model
    n = m.n
    w, vO = _velocities(kin, base, qd)
    cdot = [add(vO[k], cross(w[k], kin.c[k])) for k in range(n + 1)]
    zero3 = [g.zero] * 3
    cols = columns(kin, base)
    C = [[g.zero] * len(cols) for _ in cols]
    for j, cj in enumerate(cols):
        p = m.parent[cj.link] if cj.link else 0  # the body the column's axis is fixed in
        e = cj.e
        edot = zero3 if cj.constant_direction else cross(w[p], e)
        if cj.rev:
            pJdot = add(vO[p], cross(w[p], cj.pJ))  # the axis point, a point of that body
        U = {}
        for k in sorted(m.descendants(cj.link), reverse=True):  # children before parents
            if cj.rev:
                rho, rhodot = sub(kin.c[k], cj.pJ), sub(cdot[k], pJdot)
                bdot = add(cross(edot, rho), cross(e, rhodot))
                X = add(matvec(kin.Ic[k], edot), cross(w[k], matvec(kin.Ic[k], e)))
            else:
                bdot, X = edot, zero3
            Y = scale(m.mass[k], bdot)
            V = [X, Y, cross(kin.c[k], Y)]
            for ch in m.children[k]:
                V = [add(a, b) for a, b in zip(V, U[ch])]
            U[k] = V
        for i, ci in enumerate(cols):
            if ci.link in U:  # i at or below j: the sum over the links below i
                X, Y, Z = U[ci.link]
            elif _above(m, ci.link, cj.link):
                X, Y, Z = U[cj.link]  # i above j: the sum over the links below j
            else:
                continue
            if ci.rev:
                C[i][j] = dot(ci.e, add(X, sub(Z, cross(ci.pJ, Y))))
            else:
                C[i][j] = dot(ci.e, Y)
    return C


def solve_spd(graph, H, b, what):
    """
    ``x`` with H x = b for a symmetric positive definite H (rows of nodes).

    An unrolled LDL' factorization; each pivot is checked > 0 at run time (``what`` names the
    matrix).
    """
    n = len(b)
    L = [[None] * n for _ in range(n)]
    LD = [[None] * n for _ in range(n)]
    invD = [None] * n
    for j in range(n):
        d = H[j][j]
        for k in range(j):
            d = d - L[j][k] * LD[j][k]
        graph.require_positive(
            d, f'{what} is not positive definite at this state (pivot {j + 1} <= 0)'
        )
        invD[j] = 1.0 / d
        for i in range(j + 1, n):
            s = H[i][j]
            for k in range(j):
                s = s - L[i][k] * LD[j][k]
            LD[i][j], L[i][j] = s, s * invD[j]
    y = list(b)
    for i in range(n):
        for k in range(i):
            y[i] = y[i] - L[i][k] * y[k]
    x = [y[i] * invD[i] for i in range(n)]
    for i in range(n - 1, -1, -1):
        for k in range(i + 1, n):
            x[i] = x[i] - L[k][i] * x[k]
    return x


def forward_dynamics(kin, base, qd, tau, what):
    """
    Return udot = H^-1 (tau - bias).

    The mass matrix, the bias forces (RNEA at zero acceleration, with gravity; ``base`` carries u0
    and no u0dot) and an unrolled LDL' solve. ``tau`` as u.
    """
    g = kin.graph
    H = mass_matrix(kin, base)
    bias = inverse_dynamics(kin, base, qd, [g.zero] * kin.model.n_q)
    return solve_spd(g, H, [t - b for t, b in zip(tau, bias)], what)


def floating_inverse_dynamics(kin, base, qd, qdd, what):
    """
    Return [u0dot (6); taum (n_q)] for joint accelerations qdd with the base free.

    tau0 = 0 (SPART Floating_ID): H00 u0dot = -(H0m qdd + b0), taum = Hm0 u0dot + Hmm qdd + bm.
    """
    g = kin.graph
    H = mass_matrix(kin, base)
    bias = inverse_dynamics(kin, base, qd, [g.zero] * kin.model.n_q)
    nq = kin.model.n_q
    rhs = [-(bias[r] + sum((H[r][6 + k] * qdd[k] for k in range(nq)), g.zero)) for r in range(6)]
    u0dot = solve_spd(g, [row[0:6] for row in H[0:6]], rhs, what)
    taum = [
        bias[6 + r]
        + sum((H[6 + r][k] * u0dot[k] for k in range(6)), g.zero)
        + sum((H[6 + r][6 + k] * qdd[k] for k in range(nq)), g.zero)
        for r in range(nq)
    ]
    return u0dot + taum


def _point(kin, link, offset):
    c = kin.c[link]
    if offset is None or not np.any(offset):
        return c
    return add(c, matvec(kin.link_rotation(link), [float(x) for x in offset]))


def jacobian(kin, base, link, offset=None):
    """
    Return J of a point on ``link``, rows [angular velocity; velocity of the point].

    J has 6 rows of nodes; 6 + n_q columns for a floating base, else n_q. The point is given by its
    offset from the link's CoM, in its CoM frame. Rows [angular velocity of the link; velocity of
    the point], INERTIAL frame (B turned by R0), columns as u (SPART's J0, Jm side by side).
    """
    g, m = kin.graph, kin.model
    P = _point(kin, link, offset)
    cols = columns(kin, base)
    J = [[g.zero] * len(cols) for _ in range(6)]
    for j, col in enumerate(cols):
        if not _above(m, col.link, link):
            continue
        if col.constant_direction:  # the base's translations: R0 R0' e_k = e_k, exactly
            values = [g.zero] * 3 + [g.const(float(j - 3 == r)) for r in range(3)]
        else:  # v_P = v_O + w x P
            values = matvec(base.R0, col.a) + matvec(base.R0, add(col.b, cross(col.a, P)))
        for r, v in enumerate(values):
            J[r][j] = v
    return J


def pose(kin, base, r0, link, offset=None):
    """
    Return the 4x4 pose of the link's CoM frame in the inertial frame.

    The origin is moved to the point at ``offset``: [[R0 RL_B, r0 + R0 p_B], [0 0 0 1]]; ``r0`` (3)
    numbers or nodes.
    """
    g = kin.graph
    R = matmul(base.R0, kin.link_rotation(link))
    p = add(list(r0), matvec(base.R0, _point(kin, link, offset)))
    return [R[0] + [p[0]], R[1] + [p[1]], R[2] + [p[2]], [g.zero, g.zero, g.zero, g.one]]
