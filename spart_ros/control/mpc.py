"""
Model-predictive control of the joints: modes ``mpc`` (fixed base), ``floating_mpc`` (base free).

Every ``mpc_period`` the law solves a receding-horizon optimal control problem over
``mpc_horizon`` seconds in ``mpc_steps`` steps of h (pure numpy and OSQP, no ROS):

    min  sum_k |x_k - x_ref(t + k h)|^2_Q + |tau_k - tau_ref_k|^2_R
    s.t. x_{k+1} = step(x_k, tau_k)   (semi-implicit Euler on the fast path's forward dynamics)
         |tau_k| <= effort limits,    q_lower <= q_k <= q_upper  (the URDF's position limits)

x = (configuration, u) in SPART's coordinates; the reference is the controller's joint reference
sampled over the horizon (:attr:`ModelPredictive.preview`, the schedule the controller follows),
tau_ref its inverse dynamics.  On a free-floating base (``floating_mpc``) the base is unactuated,
its attitude (the rotation from the one held since activation) and angular velocity are in the
cost, and the base's momentum is kept by the dynamics themselves.

One sequential quadratic programming iteration per solve (real-time iteration): the previous
solution, shifted by the time elapsed, is rolled out from the measured state through the
nonlinear dynamics, linearized along the way with the analytic derivatives
(:class:`~spart_ros.core.fast.derivatives.DynamicsDerivatives`), and the QP in the deviations
(sparse, its pattern built once, OSQP warm-started from the last solution) gives the new plan.
Between two solves the plan's effort at the current time is applied (zero-order hold over h).

**Deadline.**  A solve that takes more than ``mpc_deadline`` seconds (wall clock), or that OSQP
does not solve, is not used: the tick falls back to computed torque (the ``computed_torque`` or
``floating_base`` law with the controller's gains) and so does every tick until the next solve
succeeds; each miss is reported (:data:`MpcStatus` in the status, ``notify`` warning).  The
controller's safety rules (limits, watchdog, zero command on every exit) apply as to every law.

Why OSQP on the linearized dynamics and not Crocoddyl's box-FDDP: docs/mpc.md (measured).
"""

from collections import namedtuple
import time

import numpy as np

from .effort_laws import _JointLaw, ComputedTorque, FloatingBase
from .law import LawOutput
from ..core.errors import InputError
from ..core.rigid_motion import rotation_vector

__all__ = ['ModelPredictive', 'FloatingModelPredictive', 'MpcStatus', 'MpcProblem']

MpcStatus = namedtuple(
    'MpcStatus', 'solves misses fallback solve_time iterations message', defaults=('',)
)
MpcStatus.__doc__ = """What the MPC law reports each tick (the controller's ``details``).

``solves``: solves used since activation, ``misses``: solves not used (deadline or solver),
``fallback``: this tick's effort is computed torque's, ``solve_time``: wall seconds of the last
solve, ``iterations``: OSQP's of the last solve, ``message``: why the last miss was one ('' when
none)."""


def _rodrigues(w):
    """Return exp([w]x) (3, 3)."""
    th = float(np.sqrt(w @ w))
    K = np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
    if th < 1e-9:
        return np.eye(3) + K
    return np.eye(3) + (np.sin(th) / th) * K + ((1.0 - np.cos(th)) / (th * th)) * (K @ K)


class MpcProblem:
    """
    The receding-horizon problem of one robot and its sparse QP (module docstring).

    ``derivatives``: a :class:`~spart_ros.core.fast.derivatives.DynamicsDerivatives`;
    ``floating``: the base is free (unactuated); ``steps``, ``h`` [s]: the horizon's steps and
    their length; ``weights`` = (position, velocity, effort, base attitude, base rate) (1/rad^2,
    s^2/rad^2, 1/(N m)^2, 1/rad^2, s^2/rad^2); ``effort`` (n_q,) limits [N m or N];
    ``lower``, ``upper`` (n_q,) position limits (inf where none).
    """

    def __init__(self, derivatives, floating, steps, h, weights, effort, lower, upper):
        import osqp
        from scipy import sparse

        self.derivatives = derivatives
        self.floating = bool(floating)
        self.nq = nq = derivatives.n_q
        self.steps, self.h = K, h = int(steps), float(h)
        self.nt = nt = 6 + nq if floating else nq  # tangent of the configuration
        self.nx, self.nu = nx, nu = 2 * nt, nq
        self.o = 0 if floating else 6  # first row/column of the derivatives used
        self.effort = np.asarray(effort, float)
        self.lower, self.upper = np.asarray(lower, float), np.asarray(upper, float)
        wp, wv, wr, wa, ww = (float(w) for w in weights)
        q_w = np.full(nt, wp)
        v_w = np.full(nt, wv)
        if floating:  # base rotation and rate; the base's position and velocity are free
            q_w[0:3], q_w[3:6], v_w[0:3], v_w[3:6] = wa, 0.0, ww, 0.0
        self.Q = np.concatenate([q_w, v_w])
        self.R = np.full(nu, wr)
        self.n_z = K * (nx + nu)
        P = sparse.diags(np.concatenate([np.tile(self.Q, K), np.tile(self.R, K)])).tocsc()
        # constraint rows: dynamics (K nx), efforts (K nu), joint positions with limits (K m)
        self.limited = np.flatnonzero(np.isfinite(self.lower) | np.isfinite(self.upper))
        m = len(self.limited)
        rows, cols = [], []
        eye_x, eye_u = np.arange(nx), np.arange(nu)
        ax, bx = np.meshgrid(np.arange(nx), np.arange(nx), indexing='ij')
        bu_r, bu_c = np.meshgrid(np.arange(nx), np.arange(nu), indexing='ij')
        for k in range(K):  # row block k: dx_{k+1} - A_k dx_k - B_k du_k = 0
            rows.append(k * nx + eye_x)
            cols.append(k * nx + eye_x)
        for k in range(1, K):
            rows.append((k * nx + ax).ravel())
            cols.append(((k - 1) * nx + bx).ravel())
        for k in range(K):
            rows.append((k * nx + bu_r).ravel())
            cols.append((K * nx + k * nu + bu_c).ravel())
        n_fixed = K * nx  # the identity entries, never updated
        r0 = K * nx
        for k in range(K):
            rows.append(r0 + k * nu + eye_u)
            cols.append(K * nx + k * nu + eye_u)
        r0 += K * nu
        for k in range(K):  # the joint position part of dx_{k+1}
            rows.append(r0 + k * m + np.arange(m))
            cols.append(k * nx + (nt - nq) + self.limited)
        rows, cols = np.concatenate(rows), np.concatenate(cols)
        self._n_rows = r0 + K * m
        self._values = np.ones(len(rows))
        # where each entry (in the order above) lands in the CSC data
        tag = sparse.csc_matrix(
            (np.arange(1, len(rows) + 1, dtype=float), (rows, cols)),
            shape=(self._n_rows, self.n_z),
        )
        tag.sort_indices()
        self._order = tag.data.astype(np.int64) - 1  # CSC position -> COO index
        self._dyn = slice(n_fixed, n_fixed + (K - 1) * nx * nx + K * nx * nu)
        self._A = tag.copy()
        self._A.data[:] = 1.0
        self._q = np.zeros(self.n_z)
        self._l, self._u = np.zeros(self._n_rows), np.zeros(self._n_rows)
        self.solver = osqp.OSQP()
        self.solver.setup(
            P,
            self._q,
            self._A,
            self._l,
            self._u,
            verbose=False,
            warm_starting=True,
            polishing=False,
            eps_abs=1e-3,
            eps_rel=1e-3,
            max_iter=200,
            adaptive_rho=True,
        )
        # rollout buffers
        self.Ak = np.zeros((K, nx, nx))
        self.Bk = np.zeros((K, nx, nu))
        self.X = np.zeros((K + 1, nx))  # tangent-free record: q-part as SPART's (qm / base pose)
        self.iterations = 0

    # -- the model's step ---------------------------------------------------------------------
    def rollout(self, R0, r0, qm, u0, um, taus):
        """
        Roll ``taus`` (K, n_q) out from the state; linearize each step.

        Returns the states: R0s (K + 1, 3, 3), r0s (K + 1, 3), qms (K + 1, n_q), u0s (K + 1,
        6), ums (K + 1, n_q).  Fills :attr:`Ak`, :attr:`Bk`.
        """
        K, h, nt, nq, o = self.steps, self.h, self.nt, self.nq, self.o
        R0s, r0s = np.empty((K + 1, 3, 3)), np.empty((K + 1, 3))
        qms, u0s, ums = np.empty((K + 1, nq)), np.empty((K + 1, 6)), np.empty((K + 1, nq))
        R0s[0], r0s[0], qms[0], u0s[0], ums[0] = R0, r0, qm, u0, um
        zero6 = np.zeros(6)
        eye = np.eye(nt)
        act = slice(6, 6 + nq)
        rhs = np.zeros((nt, 1 + 2 * nt + nq))
        rhs[:, 1 + nt + nq :] = eye
        for k in range(K):
            udot, fq, fu, Minv = self.derivatives.forward_dynamics(
                R0s[k], r0s[k], qms[k], u0s[k], ums[k], zero6, taus[k], self.floating
            )
            # linearly implicit in u (stiff joint damping: a light joint's d / m >> 1 / h):
            # u+ = u + h G f,  G = (I - h df/du)^-1
            Fq, Fu, Ft = fq[o:, o:], fu[o:, o:], Minv[o:, act]
            rhs[:, 0] = udot[o:]
            rhs[:, 1 : 1 + nt] = Fq
            rhs[:, 1 + nt : 1 + nt + nq] = Ft
            sol = np.linalg.solve(eye - h * Fu, rhs)  # one LAPACK call: G f, G fq, G ft, G
            step = h * sol[:, 0]
            Gq, Gt, G = sol[:, 1 : 1 + nt], sol[:, 1 + nt : 1 + nt + nq], sol[:, 1 + nt + nq :]
            if self.floating:
                u0s[k + 1] = u0s[k] + step[0:6]
                R0s[k + 1] = R0s[k] @ _rodrigues(0.5 * h * (u0s[k, 0:3] + u0s[k + 1, 0:3]))
                r0s[k + 1] = r0s[k] + 0.5 * h * (u0s[k, 3:6] + u0s[k + 1, 3:6])
                ums[k + 1] = ums[k] + step[6:]
            else:
                u0s[k + 1] = 0.0
                R0s[k + 1], r0s[k + 1] = R0s[k], r0s[k]
                ums[k + 1] = ums[k] + step
            # positions by the trapezoidal rule: second order in h
            qms[k + 1] = qms[k] + 0.5 * h * (ums[k] + ums[k + 1])
            A = self.Ak[k]
            A[:nt, :nt] = eye + (0.5 * h * h) * Gq
            A[:nt, nt:] = (0.5 * h) * (eye + G)
            A[nt:, :nt] = h * Gq
            A[nt:, nt:] = G
            self.Bk[k, :nt] = (0.5 * h * h) * Gt
            self.Bk[k, nt:] = h * Gt
        return R0s, r0s, qms, u0s, ums

    def solve(self, state, taus, reference, tau_ref):
        """
        One real-time iteration: return the new plan (K, n_q), or None when OSQP did not solve.

        ``state`` = (R0, r0, qm, u0, um) measured; ``taus`` (K, n_q): the warm start;
        ``reference`` = (q_ref (K + 1, n_q), qd_ref (K + 1, n_q), R_ref (3, 3) the base attitude
        held, or None); ``tau_ref`` (K, n_q).
        """
        K, nx, nu, nt, nq = self.steps, self.nx, self.nu, self.nt, self.nq
        R0s, r0s, qms, u0s, ums = self.rollout(*state, taus)
        q_ref, qd_ref, R_ref = reference
        err = np.zeros((K, nx))
        err[:, nt - nq : nt] = qms[1:] - q_ref[1:]
        err[:, nt + nt - nq :] = ums[1:] - qd_ref[1:]
        if self.floating:
            for k in range(K):
                err[k, 0:3] = rotation_vector(R_ref.T @ R0s[k + 1])
            err[:, nt : nt + 3] = u0s[1:, 0:3]
        self._q[: K * nx] = (err * self.Q).ravel()
        self._q[K * nx :] = ((taus - tau_ref) * self.R).ravel()
        # dynamics rows: 0; efforts and positions: bounds of the deviations
        r = K * nx
        self._l[:r] = self._u[:r] = 0.0
        self._l[r : r + K * nu] = (-self.effort - taus).ravel()
        self._u[r : r + K * nu] = (self.effort - taus).ravel()
        r += K * nu
        lim = self.limited
        self._l[r:] = np.maximum(self.lower[lim] - qms[1:, lim], -1e20).ravel()
        self._u[r:] = np.minimum(self.upper[lim] - qms[1:, lim], 1e20).ravel()
        # matrix values, in the order the pattern was built: identities, -A_k (k >= 1), -B_k
        v = self._values
        n_a = (K - 1) * nx * nx
        s = self._dyn.start
        v[s : s + n_a] = -self.Ak[1:].ravel()
        v[s + n_a : self._dyn.stop] = -self.Bk.ravel()
        self.solver.update(q=self._q, l=self._l, u=self._u, Ax=v[self._order])
        res = self.solver.solve(raise_error=False)
        self.iterations = int(res.info.iter)
        self.status = res.info.status
        if res.info.status_val not in (1, 2) or res.x is None or not np.all(np.isfinite(res.x)):
            return None  # not solved (solved inaccurate, 2, is taken)
        dx = res.x[: K * nx].reshape(K, nx)
        #: the plan's predicted joint positions and velocities (K + 1, n_q), from the state
        self.q_pred = qms.copy()
        self.qd_pred = ums.copy()
        self.q_pred[1:] += dx[:, nt - nq : nt]
        self.qd_pred[1:] += dx[:, 2 * nt - nq :]
        return taus + res.x[K * nx :].reshape(K, nu)


class ModelPredictive(_JointLaw):
    """
    MPC of a joint reference on a fixed base (module docstring).

    ``dynamics``: the robot's fast path; ``gains``: the computed-torque fallback's
    :class:`~spart_ros.control.effort_laws.Gains`; ``settings``: the ``mpc_*`` settings and the
    effort limits.
    """

    mode = 'mpc'
    base = 'fixed'
    fallback_class = ComputedTorque

    def __init__(self, dynamics, gains, settings=None):
        from .settings import ControllerSettings
        from ..core.fast.derivatives import DynamicsDerivatives

        super().__init__(dynamics, gains)
        s = settings or ControllerSettings(mode=self.mode, floating=self.base == 'floating')
        horizon, steps = float(s.mpc_horizon), int(s.mpc_steps)
        if not (horizon > 0 and steps >= 2):
            raise InputError(
                f'mpc_horizon must be > 0 s and mpc_steps >= 2, got {horizon!r}, {steps!r}'
            )
        self.h = horizon / steps
        self.period, self.deadline = float(s.mpc_period), float(s.mpc_deadline)
        self.fallback = self.fallback_class(dynamics.new_workspace(), gains)
        robot = self.robot
        joints = {j.name: j for j in robot.joints}
        names = list(robot.coordinates.names)
        effort = np.array([joints[q].limits.effort for q in names], dtype=float)
        if len(s.effort_limits) in (1, len(names)):
            effort = np.broadcast_to(np.asarray(s.effort_limits, float), effort.shape).copy()
        effort[~(effort > 0)] = np.inf
        effort = np.minimum(effort, 1e9)
        lower = np.array([joints[q].limits.lower for q in names], dtype=float)
        upper = np.array([joints[q].limits.upper for q in names], dtype=float)
        self.problem = MpcProblem(
            DynamicsDerivatives(dynamics.new_workspace()),
            self.base == 'floating',
            steps,
            self.h,
            s.mpc_weights,
            effort,
            lower,
            upper,
        )
        self._id = dynamics.new_workspace()
        #: the controller's reference schedule sampler (``sample(t)`` -> Reference), set by the
        #: controller; None: the reference at the tick is held over the horizon
        self.preview = None
        #: notify(level, key, text): where misses are reported (set by the controlled robot)
        self.notify = None
        self.reset()

    @classmethod
    def build(cls, mode, dynamics, settings, gains):
        law = cls(dynamics, gains, settings)
        law.friction.scale = settings.friction_compensation
        law.fallback.friction.scale = settings.friction_compensation
        return law

    def apply_settings(self, settings, gains):
        super().apply_settings(settings, gains)
        self.fallback.apply_settings(settings, gains)
        self.deadline = float(settings.mpc_deadline)

    def reset(self):
        super().reset()
        if hasattr(self, 'fallback'):
            self.fallback.reset()
        self.plan = None  # (t of the solve, efforts (K, n_q)), or None: fall back
        self.warm = None  # the last plan, for the warm start
        self.base_attitude = None
        self.solves = self.misses = 0
        self.solve_time, self.message = 0.0, ''

    def _reference(self, ref, t):
        """q_ref, qd_ref, qdd_ref (K + 1, n_q) over the horizon from ``t``."""
        K, h = self.problem.steps, self.h
        if self.preview is None:
            q = np.tile(ref.position, (K + 1, 1))
            return q, np.zeros_like(q), np.zeros_like(q)
        refs = [ref] + [self.preview(t + k * h) for k in range(1, K + 1)]
        return (
            np.array([r.position for r in refs]),
            np.array([r.velocity for r in refs]),
            np.array([r.acceleration for r in refs]),
        )

    def _state(self, state):
        R0, r0, u0 = self.frames.fixed(state.base)
        return R0, r0, u0

    def _tau_ref(self, R0, r0, q, qd, qdd, u0):
        """Return the reference's inverse dynamics (K, n_q) (a fixed base)."""
        zero = np.zeros(6)
        out = np.empty((len(q) - 1, self.n))
        for k in range(len(q) - 1):
            out[k] = self._id.inverse_dynamics(
                R0, r0, q[k], zero, qd[k], zero, qdd[k], floating=False
            )[1]
        return out

    def _warm_start(self, t, tau_ref):
        K, h = self.problem.steps, self.h
        if self.warm is None:
            return tau_ref.copy()
        t_prev, taus = self.warm
        pos = np.clip((t - t_prev) / h + np.arange(K), 0.0, K - 1)
        j = np.minimum(pos.astype(np.intp), K - 2)
        frac = (pos - j)[:, None]
        return (1.0 - frac) * taus[j] + frac * taus[j + 1]

    def _solve(self, state, ref, t):
        R0, r0, u0 = self._state(state)
        q_ref, qd_ref, qdd_ref = self._reference(ref, t)
        if self.base_attitude is None:
            self.base_attitude = R0.copy()
        tau_ref = self._tau_ref(R0, r0, q_ref, qd_ref, qdd_ref, u0)
        taus = self._warm_start(t, tau_ref)
        return self.problem.solve(
            (R0, r0, state.q, u0, state.qd),
            taus,
            (q_ref, qd_ref, self.base_attitude),
            tau_ref,
        )

    def command(self, state, ref, t, dt):
        t = 0.0 if t is None else float(t)
        if self.plan is None or t - self.plan[0] >= self.period - 1e-9 or t < self.plan[0]:
            start = time.perf_counter()
            try:
                taus = self._solve(state, ref, t)
                why = '' if taus is not None else 'the QP solver did not solve the problem'
            except Exception as err:  # noqa: BLE001 - a failed solve falls back, never stops
                taus, why = None, f'{type(err).__name__}: {err}'
            self.solve_time = time.perf_counter() - start
            if taus is not None and self.solve_time > self.deadline:
                why = (
                    f'the solve took {self.solve_time * 1e3:.2f} ms, past its deadline of '
                    f'{self.deadline * 1e3:.2f} ms'
                )
            if why:
                self.misses += 1
                self.plan, self.message = None, why
                if taus is not None:
                    self.warm = (t, taus)  # still the best warm start for the next solve
                if self.notify is not None:
                    self.notify(
                        'warning',
                        ('mpc', 'miss'),
                        f'{self.mode}: {why}: computed torque until the next solve '
                        f'({self.misses} of {self.misses + self.solves} solves missed)',
                    )
            else:
                self.solves += 1
                self.plan = self.warm = (t, taus)
                self._pred = (self.problem.q_pred, self.problem.qd_pred)
        if self.plan is None:
            out = self.fallback.command(state, ref, t, dt)
            self.details = MpcStatus(
                self.solves,
                self.misses,
                True,
                self.solve_time,
                self.problem.iterations,
                self.message,
            )
            return LawOutput(out.values, out.base_torque, out.base_force, self.details)
        t_plan, taus = self.plan
        s = (t - t_plan) / self.h
        k = min(int(s + 1e-9), len(taus) - 1)
        # between two solves the plan is followed with the fallback's PD gains on the joints'
        # inertia (the plan's feedback at the control rate): tau = tau_plan + M (kp e + kd ev)
        q_pred, qd_pred = self._pred
        frac = min(max(s - k, 0.0), 1.0)
        e = (1.0 - frac) * q_pred[k] + frac * q_pred[k + 1] - state.q
        ev = (1.0 - frac) * qd_pred[k] + frac * qd_pred[k + 1] - state.qd
        R0, r0, _ = self._state(state)
        M = self.fallback.joint_inertia(R0, r0, state.q)
        tau = taus[k] + M @ (self.gains.kp * e + self.gains.kd * ev)
        self.details = MpcStatus(
            self.solves,
            self.misses,
            False,
            self.solve_time,
            self.problem.iterations,
            self.message,
        )
        return LawOutput(tau, None, None, self.details)


class FloatingModelPredictive(ModelPredictive):
    """
    MPC of a joint reference on a free-floating (unactuated) base (module docstring).

    The base attitude held since activation and the base's angular velocity are in the cost.
    ``dynamics``, ``gains``, ``settings``: as :class:`ModelPredictive`.
    """

    mode = 'floating_mpc'
    base = 'floating'
    fallback_class = FloatingBase

    def _state(self, state):
        R0, r0, u0 = self.frames.floating(state.base)
        return R0.copy(), r0.copy(), u0.copy()

    def _tau_ref(self, R0, r0, q, qd, qdd, u0):
        """Return Floating_ID of the reference with the base state measured now (K, n_q)."""
        out = np.empty((len(q) - 1, self.n))
        for k in range(len(q) - 1):
            out[k] = self._id.floating_inverse_dynamics(R0, r0, q[k], u0, qd[k], qdd[k])[0]
        return out
