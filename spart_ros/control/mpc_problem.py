"""
The receding-horizon problem of the mpc modes: joint error dynamics, linearized limits, a QP.

Pure numpy, scipy.sparse and OSQP (no ROS).  The decision variables are the joints'
accelerations over the horizon, as deviations from the reference's: over step k (K steps of h
seconds) the commanded acceleration is qdd_ref(t) + d_k.  The joint error e = q - q_ref then obeys
the double integrator e'' = d_k exactly (whatever the reference does inside the step), so

    e_{k+1} = e_k + h e'_k + h^2 / 2 d_k,    e'_{k+1} = e'_k + h d_k

are exact constraints, constant in time: the prediction has no discretization error and the
dynamics rows of the QP never change.  The robot's dynamics enter where they matter, in the
limits:

- efforts: tau_k = ID(q_k, qd_k, qdd_k), linearized at the plan of the previous solve (the warm
  start) with the analytic derivatives and the mass matrix, within the effort limits at every
  step's start; exact at the first step (inverse dynamics is affine in the acceleration, and the
  state there is the measured one).  On a free-floating base the efforts are Floating_ID's (base
  unactuated): derivatives and the reduced inertia H* = Hm - H0m' H0^-1 H0m from the same
  derivatives by the implicit function theorem (tau0 = 0);
- joint positions and velocities: the URDF's limits at every node (linear, exact).

Costs (each summed over the nodes, times h): the task error and its rate, ``position`` and
``velocity`` weights (the joint error, or with ``task`` = 'end_effector' the error of a link
point's position in the base frame, linearized at the warm start, plus ``posture`` on the joint
error so that the redundancy stays bounded), ``acceleration`` on d_k, and on a free-floating base
``attitude`` on the base's rotation from the attitude held (its rotation vector, integrated from
the base's angular velocity by the trapezoidal rule) and ``rate`` on the base's angular velocity.
The base's angular velocity is a linear function of the joint state through the conserved
momentum (h0 = H0 u0 + H0m um: d u0 = -H0^-1 (H0m d um + dh0/dqm d qm)), linearized at every
node: the part of the generalized Jacobian the cost needs.

One real-time iteration per solve: the previous solution, shifted, is the linearization point and
OSQP's warm start; the QP's pattern is built once and only the linearized rows (and, for an
end-effector task, the cost's blocks) are updated.  Cost weights per unit: position 1/rad^2 (or
1/m^2), velocity s^2/rad^2, acceleration s^4/rad^2, attitude 1/rad^2, rate s^2/rad^2.
"""

from collections import namedtuple

import numpy as np

__all__ = ['HorizonQP', 'Linearization', 'Plan', 'evaluate', 'rollout']

Linearization = namedtuple(
    'Linearization',
    'effort_offset Dq Dv M omega_offset Gw Jw task_offset Jp',
    defaults=(None, None, None, None, None),
)
Linearization.__doc__ = """The rows of one solve that depend on the robot's state.

Efforts at step k (K,): tau_k = effort_offset[k] + Dq[k] e_k + Dv[k] e'_k + M[k] d_k (``Dq``,
``Dv``, ``M`` (K, n, n); at k = 0 the error is the measured one, inside ``effort_offset``:
``Dq[0]`` and ``Dv[0]`` are not used).  Free-floating base: the base's angular velocity at node
k = 1..K (row k - 1): w_k = omega_offset + Gw e_k + Jw e'_k (``omega_offset`` (K, 3), ``Gw``,
``Jw`` (K, 3, n)).  End-effector task: the point's position error at node k: task_offset + Jp e_k
(``task_offset`` (K, 3), ``Jp`` (K, 3, n)); its rate error Jp e'_k."""

Plan = namedtuple('Plan', 't0 h e ed d')
Plan.__doc__ = """A solution: from control time ``t0`` [s], K steps of ``h`` [s]: the joint error
``e``, its rate ``ed`` (K + 1, n) at the nodes (node 0 the measured state) and the accelerations
``d`` (K, n) over the steps, relative to the reference (the module docstring)."""


def rollout(e0, ed0, d, h):
    """
    Return (e, e') (K + 1, n) of the double integrator from ``e0``, ``ed0`` (n,) under ``d``.

    Exact for the piecewise-constant accelerations ``d`` (K, n) over steps of ``h`` seconds.
    """
    K, n = d.shape
    e, ed = np.empty((K + 1, n)), np.empty((K + 1, n))
    ed[0], e[0] = ed0, e0
    np.cumsum(h * d, axis=0, out=ed[1:])
    ed[1:] += ed0
    np.cumsum(h * ed[:-1] + (0.5 * h * h) * d, axis=0, out=e[1:])
    e[1:] += e0
    return e, ed


def evaluate(plan, t):
    """
    Return the plan's (e, e', d) at control time ``t``, each (n,) (new arrays).

    Exact inside a step (piecewise-constant acceleration); after the horizon's end the last node
    is held (e' = d = 0 from there is not assumed: its rate and acceleration continue).
    """
    K = len(plan.d)
    s = (t - plan.t0) / plan.h
    k = min(max(int(s), 0), K - 1)
    tau = min(max(t - (plan.t0 + k * plan.h), 0.0), plan.h)
    d = plan.d[k]
    ed = plan.ed[k] + d * tau
    e = plan.e[k] + plan.ed[k] * tau + d * (0.5 * tau * tau)
    return e, ed, d


class HorizonQP:
    """
    The sparse QP of the horizon (module docstring) and its OSQP workspace, built once.

    ``n``: joints; ``steps`` (K), ``h`` [s]: the horizon; ``weights`` = (position, velocity,
    acceleration, attitude, rate); ``floating``: a free-floating base (the attitude and rate
    variables and costs); ``task``: 'joint' or 'end_effector'; ``posture``: the joint error's
    weight in an end-effector task [1/rad^2]; ``lower``, ``upper``, ``velocity`` (n,): position
    and velocity limits (inf where none); ``effort`` (n,): effort limits (inf where none).
    """

    def __init__(
        self,
        n,
        steps,
        h,
        weights,
        floating=False,
        task='joint',
        posture=0.0,
        lower=None,
        upper=None,
        velocity=None,
        effort=None,
    ):
        import osqp
        from scipy import sparse

        inf = np.full(n, np.inf)
        self.n, self.K, self.h = n, K, h = int(n), int(steps), float(h)
        self.floating, self.task = bool(floating), task
        self.lower = -inf if lower is None else np.asarray(lower, float)
        self.upper = inf if upper is None else np.asarray(upper, float)
        self.velocity = inf if velocity is None else np.asarray(velocity, float)
        self.effort = inf if effort is None else np.asarray(effort, float)
        wp, wv, wa, wt, ww = (float(w) for w in weights)
        self.weights = (wp, wv, wa, wt, ww)
        self.posture = float(posture)
        # variables: node k = 1..K: [e (n), e' (n), (w (3), theta (3))], then d_0 .. d_{K-1}
        self.nx = nx = 2 * n + (6 if self.floating else 0)
        self.nz = nz = K * nx + K * n
        k_nodes = np.arange(K)
        self._e = (k_nodes[:, None] * nx + np.arange(n)).astype(np.intp)  # (K, n), nodes 1..K
        self._ed = self._e + n
        self._w = (k_nodes[:, None] * nx + 2 * n + np.arange(3)).astype(np.intp)
        self._th = self._w + 3
        self._d = (K * nx + k_nodes[:, None] * n + np.arange(n)).astype(np.intp)
        rows, cols, vals = [], [], []
        row, count = [0], [0]  # rows and entries so far

        def add(r, c, v):
            r, c = np.ravel(r), np.ravel(c)
            rows.append(r), cols.append(c), vals.append(np.broadcast_to(v, r.shape).ravel())
            count[0] += len(r)

        def block_rows(count):
            start = row[0]
            row[0] += count
            return start

        eye_n = np.arange(n)
        # 1. dynamics (constant): e_k - e_{k-1} - h e'_{k-1} - h^2/2 d_{k-1} = 0 (k = 1: rhs)
        r0 = block_rows(K * n)
        r_e = r0 + k_nodes[:, None] * n + eye_n  # (K, n): the rows of each node's e equation
        add(r_e, self._e, 1.0)
        add(r_e[1:], self._e[:-1], -1.0)
        add(r_e[1:], self._ed[:-1], -h)
        add(r_e, self._d, -0.5 * h * h)
        self._dyn_e = r_e[0]
        r0 = block_rows(K * n)
        r_ed = r0 + k_nodes[:, None] * n + eye_n
        add(r_ed, self._ed, 1.0)
        add(r_ed[1:], self._ed[:-1], -1.0)
        add(r_ed, self._d, -h)
        self._dyn_ed = r_ed[0]
        self._n_eq = row[0]
        if self.floating:
            # 2. base rate (varying): w_k - Gw_k e_k - Jw_k e'_k = offset_k
            r0 = block_rows(K * 3)
            r_w = r0 + (k_nodes[:, None] * 3 + np.arange(3))  # (K, 3)
            add(r_w, self._w, 1.0)
            first = count[0]
            rr = np.broadcast_to(r_w[:, :, None], (K, 3, n))
            add(rr, np.broadcast_to(self._e[:, None, :], (K, 3, n)), 1.0)
            add(rr, np.broadcast_to(self._ed[:, None, :], (K, 3, n)), 1.0)
            self._rate_rows = r_w
            # 3. attitude (constant): theta_k - theta_{k-1} - h/2 (w_{k-1} + w_k) = 0
            r0 = block_rows(K * 3)
            r_t = r0 + (k_nodes[:, None] * 3 + np.arange(3))
            add(r_t, self._th, 1.0)
            add(r_t[1:], self._th[:-1], -1.0)
            add(r_t, self._w, -0.5 * h)
            add(r_t[1:], self._w[:-1], -0.5 * h)
            self._att_rows = r_t
            self._n_eq = row[0]
            self._rate_entries = (first, first + 2 * K * 3 * n)
        # 4. efforts (varying): Dq_k e_k + Dv_k e'_k + M_k d_k (k = 0: M_0 d_0 only)
        limited_effort = np.isfinite(self.effort)
        self._m_eff = m = int(limited_effort.sum())
        self._eff_joints = np.flatnonzero(limited_effort)
        if m:
            r0 = block_rows(K * m)
            r_f = r0 + (k_nodes[:, None] * m + np.arange(m))  # (K, m)
            self._effort_rows = r_f
            rr = np.broadcast_to(r_f[:, :, None], (K, m, n))
            self._effort_entries = count[0]
            add(rr, np.broadcast_to(self._d[:, None, :], (K, m, n)), 1.0)
            add(rr[1:], np.broadcast_to(self._e[:-1, None, :], (K - 1, m, n)), 1.0)
            add(rr[1:], np.broadcast_to(self._ed[:-1, None, :], (K - 1, m, n)), 1.0)
        # 5. positions and velocities (constant): e_k and e'_k of the limited joints
        self._pos_joints = np.flatnonzero(np.isfinite(self.lower) | np.isfinite(self.upper))
        self._vel_joints = np.flatnonzero(np.isfinite(self.velocity))
        for joints, var, name in (
            (self._pos_joints, self._e, '_pos_rows'),
            (self._vel_joints, self._ed, '_vel_rows'),
        ):
            c = len(joints)
            r0 = block_rows(K * c)
            rr = r0 + (k_nodes[:, None] * c + np.arange(c))
            setattr(self, name, rr)
            if c:
                add(rr, var[:, joints], 1.0)
        self.n_rows = row[0]
        rows, cols, vals = (np.concatenate(x) for x in (rows, cols, vals))
        # CSC with every entry's place recorded (duplicates never occur)
        order = np.lexsort((rows, cols))
        self._A_rows, self._A_cols = rows[order], cols[order]
        self._where = np.empty(len(order), dtype=np.intp)
        self._where[order] = np.arange(len(order))  # COO entry -> CSC data position
        self._Ax = vals[order].astype(float)
        self._coo_vals = vals.astype(float)
        A = sparse.csc_matrix((np.ones(len(order)), (rows, cols)), shape=(self.n_rows, nz))
        A.sort_indices()
        assert A.nnz == len(order), 'duplicate entries in the QP pattern'
        self._indptr, self._indices = A.indptr, A.indices
        # cost: diagonal, or with an end-effector task dense n x n blocks on e_k and e'_k
        self._P_blocks = task == 'end_effector'
        P = self._cost_matrix(sparse)
        self._q = np.zeros(nz)
        self._l, self._u = np.full(self.n_rows, -np.inf), np.full(self.n_rows, np.inf)
        self._l[: self._n_eq] = self._u[: self._n_eq] = 0.0
        self.solver = osqp.OSQP()
        self.solver.setup(
            P,
            self._q,
            A,
            self._l,
            self._u,
            verbose=False,
            warm_starting=True,
            polishing=False,
            eps_abs=1e-4,
            eps_rel=1e-4,
            max_iter=400,
            adaptive_rho=True,
            check_termination=10,
        )
        self.iterations, self.status = 0, ''
        self._z = None

    # -- the cost --------------------------------------------------------------------------
    def _cost_matrix(self, sparse):
        """P (upper triangle, CSC) with the diagonal weights; the blocks' pattern if any."""
        n, h = self.n, self.h
        wp, wv, wa, wt, ww = self.weights
        diag = np.zeros(self.nz)
        joint_p, joint_v = (
            (self.posture, self.posture * wv / max(wp, 1e-300)) if (self._P_blocks) else (wp, wv)
        )
        diag[self._e] = 2 * h * joint_p
        diag[self._ed] = 2 * h * joint_v
        diag[self._d] = 2 * h * wa
        if self.floating:
            diag[self._th] = 2 * h * wt
            diag[self._w] = 2 * h * ww
        self._diag = diag
        if not self._P_blocks:
            return sparse.diags(diag).tocsc()
        iu = np.triu_indices(n)
        r = np.concatenate([self._e[:, iu[0]], self._ed[:, iu[0]]]).ravel()
        c = np.concatenate([self._e[:, iu[1]], self._ed[:, iu[1]]]).ravel()
        other = np.setdiff1d(np.arange(self.nz), np.concatenate([self._e, self._ed]).ravel())
        rows = np.concatenate([r, other])
        cols = np.concatenate([c, other])
        P = sparse.csc_matrix((np.ones(len(rows)), (rows, cols)), shape=(self.nz, self.nz))
        P.sort_indices()
        order = np.lexsort((rows, cols))
        self._P_where = np.empty(len(order), dtype=np.intp)
        self._P_where[order] = np.arange(len(order))
        self._P_iu = iu
        self._P_other = other
        self._Px = np.zeros(len(order))
        return P

    # -- one solve ---------------------------------------------------------------------------
    def solve(self, x0, ref, lin, guess, time_limit=0.0):
        """
        Solve one QP: return a :data:`Plan` (``t0`` 0), or None when OSQP did not solve it.

        ``x0`` = (e_0, e'_0 (n,), and on a free-floating base theta_0, w_0 (3,)): the measured
        error, base attitude error and base angular velocity; ``ref`` = (q_ref, qd_ref) (K + 1,
        n) at the nodes; ``lin``: the :data:`Linearization` at the warm start; ``guess``: the
        warm start's (e, ed (K + 1, n), d (K, n)); ``time_limit`` [s]: OSQP's (0: none).
        """
        n, K, h = self.n, self.K, self.h
        e0, ed0 = x0[0], x0[1]
        l, u = self._l, self._u
        # dynamics right-hand sides: node 1 takes the measured state
        l[self._dyn_e] = u[self._dyn_e] = e0 + h * ed0
        l[self._dyn_ed] = u[self._dyn_ed] = ed0
        vals = self._coo_vals
        if self.floating:
            th0, w0 = x0[2], x0[3]
            a, b = self._rate_entries
            half = (b - a) // 2
            vals[a : a + half] = -lin.Gw.ravel()
            vals[a + half : b] = -lin.Jw.ravel()
            l[self._rate_rows] = u[self._rate_rows] = lin.omega_offset
            l[self._att_rows[0]] = u[self._att_rows[0]] = th0 + 0.5 * h * w0
        if self._m_eff:
            j = self._eff_joints
            a = self._effort_entries
            size = K * self._m_eff * n
            vals[a : a + size] = lin.M[:, j, :].ravel()
            a += size
            size = (K - 1) * self._m_eff * n
            vals[a : a + size] = lin.Dq[1:, j, :].ravel()
            vals[a + size : a + 2 * size] = lin.Dv[1:, j, :].ravel()
            lim = self.effort[j]
            off = lin.effort_offset[:, j]
            l[self._effort_rows] = -lim - off
            u[self._effort_rows] = lim - off
        pj, vj = self._pos_joints, self._vel_joints
        if len(pj):
            l[self._pos_rows] = self.lower[pj] - ref[0][1:, pj]
            u[self._pos_rows] = self.upper[pj] - ref[0][1:, pj]
        if len(vj):
            l[self._vel_rows] = -self.velocity[vj] - ref[1][1:, vj]
            u[self._vel_rows] = self.velocity[vj] - ref[1][1:, vj]
        self._Ax[self._where] = vals
        update = {'q': self._q, 'l': l, 'u': u, 'Ax': self._Ax}
        if self._P_blocks:
            self._task_cost(lin, update)
        self.solver.update(**update)
        if time_limit > 0:
            self.solver.update_settings(time_limit=float(time_limit))
        z = np.empty(self.nz)  # the warm start: the shifted plan
        z[self._e] = guess[0][1:]
        z[self._ed] = guess[1][1:]
        z[self._d] = guess[2]
        if self.floating and self._z is not None:
            z[self._w] = self._z[self._w]
            z[self._th] = self._z[self._th]
        elif self.floating:
            z[self._w] = 0.0
            z[self._th] = 0.0
        self.solver.warm_start(x=z)
        res = self.solver.solve(raise_error=False)
        self.iterations, self.status = int(res.info.iter), str(res.info.status)
        x = res.x
        if res.info.status_val not in (1, 2) or x is None or not np.all(np.isfinite(x)):
            return None  # 1 solved, 2 solved inaccurate (taken: the limits are checked below)
        self._z = x
        d = x[self._d]
        # the states of the accelerations found, exactly (OSQP meets the dynamics rows to its
        # tolerance only): the plan followed is the double integrator's
        return Plan(0.0, h, *rollout(e0, ed0, d, h), d)

    def _task_cost(self, lin, update):
        """Set the end-effector task's cost blocks and linear terms at this solve's Jp."""
        wp, wv = self.weights[0], self.weights[1]
        h = self.h
        JtJ = np.einsum('kri,krj->kij', lin.Jp, lin.Jp)  # (K, n, n)
        iu = self._P_iu
        eye = np.eye(self.n)
        Pe = 2 * h * (wp * JtJ + self.posture * eye)
        Pv = 2 * h * (wv * JtJ + self.posture * wv / max(wp, 1e-300) * eye)
        vals = np.concatenate(
            [Pe[:, iu[0], iu[1]].ravel(), Pv[:, iu[0], iu[1]].ravel(), self._diag[self._P_other]]
        )
        self._Px[self._P_where] = vals
        update['Px'] = self._Px
        q = self._q
        q[:] = 0.0
        q[self._e] = 2 * h * wp * np.einsum('kri,kr->ki', lin.Jp, lin.task_offset)
