"""
Model-predictive control: modes ``mpc`` (fixed base) and ``floating_mpc`` (free-floating base).

Pure numpy and OSQP (no ROS).  Every ``mpc_period`` seconds the law plans the joints'
accelerations over ``mpc_horizon`` seconds in ``mpc_steps`` steps, as deviations d_k from the
reference's (:mod:`.mpc_problem`: the joint error's exact double integrator, the effort limits
linearized along the horizon with the analytic derivatives, the joint position and velocity limits
hard; on a free-floating base the base's attitude and angular velocity in the cost).  The reference
over the horizon is the controller's own schedule (:attr:`ModelPredictive.preview`).

Between two solves, at every tick, the law is computed torque (``floating_base`` on a free base)
on the plan: the reference it follows is the planned motion, q_ref(t) + e(t), qd_ref(t) + e'(t),
qdd_ref(t) + d_k, with the controller's PD gains on the deviation from it.  So it tracks as
computed torque does, and IS computed torque when no limit is active and the state is on the
reference (the plan is then the reference); where a limit would be exceeded, the plan gives way
before it is reached.

**Deadline.**  A solve that takes longer than ``mpc_deadline`` seconds of wall-clock time (OSQP
stops at the time left), or that OSQP does not solve, is not used: that tick and the ticks up to
the next solve are computed torque on the reference itself, and the miss is reported: the law's
:data:`MpcStatus` (the controller's status: ``mpc_fallback``, ``mpc_misses``, ``mpc_message``)
and a warning through ``notify`` (the node's log, throttled).  Solves run inside the tick that
needs one (at most ``mpc_deadline`` plus the linearization, a fraction of a millisecond); the
controller's safety rules (limits, watchdogs, one zero command on every exit) apply as to every
law.

Why OSQP on this problem, not Crocoddyl's box-FDDP: docs/derivatives_and_mpc.md (measured).
"""

from collections import namedtuple
import time

import numpy as np

from .effort_laws import _JointLaw, ComputedTorque, FloatingBase
from .friction_compensation import saturation_notes
from .law import LawOutput
from .mpc_problem import evaluate, HorizonQP, Linearization, rollout
from .trajectory import Reference
from ..core.errors import InputError
from ..core.rigid_motion import rotation_vector

__all__ = ['ModelPredictive', 'FloatingModelPredictive', 'MpcStatus', 'TASKS']

#: what the cost tracks: the joint reference, or a link point's motion (in the base frame) that the
#: joint reference gives
TASKS = ('joint', 'end_effector')

MpcStatus = namedtuple(
    'MpcStatus', 'solves misses fallback solve_time iterations message', defaults=('',)
)
MpcStatus.__doc__ = """What the MPC law reports each tick (the controller's ``details``).

``solves``: solves used since activation; ``misses``: solves not used (past the deadline, or not
solved); ``fallback``: this tick's effort is computed torque's on the reference (the last solve
missed); ``solve_time``: wall-clock seconds of the last solve; ``iterations``: OSQP's in the last
solve; ``message``: why the last miss was one ('' when none yet)."""


def _limits(robot, settings):
    """Return the joints' (effort, lower, upper, velocity) limits (n,) in model coordinates."""
    from .safety import effort_limits

    names = list(robot.coordinates.names)
    joints = {j.name: j.limits for j in robot.joints}
    urdf = {j.name: j.limits.effort for j in robot.joints}
    try:
        given = len(settings.effort_limits)
        override = settings.per_joint(names)['effort_limits'] if given else ()
        effort = np.array(effort_limits(names, urdf, override), dtype=float)
    except InputError:  # none declared, or per command joint (a subset): the gate clamps those
        effort = np.array([urdf[q] for q in names], dtype=float)
    effort[~(effort > 0)] = np.inf
    lower = np.array([joints[q].lower for q in names], dtype=float)
    upper = np.array([joints[q].upper for q in names], dtype=float)
    velocity = np.array([joints[q].velocity for q in names], dtype=float)
    velocity[~(velocity > 0)] = np.inf
    return effort, lower, upper, velocity


class ModelPredictive(_JointLaw):
    """
    MPC of the joint reference on a fixed base (module docstring).

    ``dynamics``: the robot's fast path; ``gains``: the PD gains of the ticks (and of the
    fallback), :class:`~spart_ros.control.effort_laws.Gains`; ``settings``: a
    :class:`~spart_ros.control.settings.ControllerSettings` (the ``mpc_*`` settings, the effort
    limits, ``ee_link`` and ``ee_offset`` for the end-effector task).  ``follower``: the law of
    the ticks (computed torque on the plan, and on the reference when a solve missed).
    """

    mode = 'mpc'
    base = 'fixed'
    follower_class = ComputedTorque

    def __init__(self, dynamics, gains, settings):
        from ..core.fast.batch import Batch

        super().__init__(dynamics, gains)
        self.follower = self.follower_class(dynamics, gains)
        s = settings
        if s.mpc_task not in TASKS:
            raise InputError(f'mpc_task must be one of {list(TASKS)}, got {s.mpc_task!r}')
        self.steps = K = int(s.mpc_steps)
        self.h = float(s.mpc_horizon) / K
        self.period, self.deadline = float(s.mpc_period), float(s.mpc_deadline)
        self.task = s.mpc_task
        effort, lower, upper, velocity = _limits(self.robot, s)
        self.effort_limit = effort
        self.qp = HorizonQP(
            self.n,
            K,
            self.h,
            s.mpc_weights,
            floating=self.base == 'floating',
            task=self.task,
            posture=s.mpc_posture_weight,
            lower=lower,
            upper=upper,
            velocity=velocity,
            effort=effort,
        )
        self.batch = Batch(dynamics.new_workspace(), threads=1)
        if self.task == 'end_effector':
            from ..core.checks import link_id
            from ..core.connectivity import leaf_links

            self._ee = link_id('ee_link', s.ee_link or leaf_links(self.robot)[0], self.robot)
            self._ee_offset = np.asarray(s.ee_offset, dtype=float)
            self._kin = dynamics.new_workspace()
        n = self.n
        self._R0s, self._r0s = np.zeros((K + 1, 3, 3)), np.zeros((K + 1, 3))
        self._zeros6 = np.zeros((K + 1, 6))
        self._q, self._qd, self._qdd = np.zeros((K + 1, n)), np.zeros((K + 1, n)), np.zeros((K, n))
        self._node_times = self.h * np.arange(1, K + 1)
        self._ahead = tuple(np.zeros((K, n)) for _ in range(3))
        # self.preview (the Law's): the controller's look-ahead, ``preview(times (m,), (q, qd,
        # qdd) (m, n))``; None: the reference of the tick is held over the horizon
        #: notify(level, key, text): where misses are reported (set by the controlled robot)
        self.notify = None
        self.reset()

    @classmethod
    def build(cls, mode, dynamics, settings, gains):
        law = cls(dynamics, gains, settings)
        law.follower.friction.scale = settings.friction_compensation
        law.notes = saturation_notes(dynamics, law.follower.friction)
        return law

    def apply_settings(self, settings, gains):
        super().apply_settings(settings, gains)
        self.follower.apply_settings(settings, gains)
        self.deadline = float(settings.mpc_deadline)

    def reset(self):
        super().reset()
        if hasattr(self, 'follower'):
            self.follower.reset()
        self.plan = None  # the Plan followed, or None: computed torque on the reference
        self.last_plan = None  # the last solution (a warm start even when it missed)
        self.next_solve = None  # control time of the next solve
        self.base_attitude = None
        self.solves = self.misses = 0
        self.solve_time, self.message = 0.0, ''
        self.details = MpcStatus(0, 0, True, 0.0, 0, '')

    # -- the horizon ---------------------------------------------------------------------------
    def _references(self, ref, t):
        """Return the reference at the nodes: q, qd (K + 1, n), qdd (K, n) (this object's)."""
        K = self.steps
        q, qd, qdd = self._q, self._qd, self._qdd
        q[0], qd[0], qdd[0] = ref.position, ref.velocity, ref.acceleration
        if self.preview is None:  # no schedule to look at: the tick's reference is held
            q[1:], qd[1:], qdd[1:] = ref.position, 0.0, 0.0
        else:
            ahead = self._ahead
            self.preview(t + self._node_times, ahead)
            q[1:], qd[1:], qdd[1:] = ahead[0], ahead[1], ahead[2][: K - 1]
        return q, qd, qdd

    def _guess(self, e0, ed0, t):
        """Return the warm start (e, ed (K + 1, n), d (K, n)): the last plan, shifted."""
        K, h = self.steps, self.h
        d = np.zeros((K, self.n))
        last = self.last_plan
        if last is not None:  # the last plan's acceleration at each new step's middle
            j = np.floor((t + self._node_times - 0.5 * h - last.t0) / last.h).astype(np.intp)
            ok = (j >= 0) & (j < len(last.d))
            d[ok] = last.d[j[ok]]
        return (*rollout(e0, ed0, d, h), d)  # from the measured error

    def _linearize(self, R0, r0, u0, q, qd, qdd, guess):
        """
        Return the :data:`~spart_ros.control.mpc_problem.Linearization` at the warm start.

        ``R0``, ``r0``, ``u0``: the measured base; ``q``, ``qd`` (K + 1, n), ``qdd`` (K, n): the
        warm start's joint motion at the nodes.
        """
        K = self.steps
        e, ed, d = guess
        self._R0s[:] = R0
        self._r0s[:] = r0
        z = self._zeros6
        tau, dq, du, H, _ = self.batch.inverse_dynamics_derivatives(
            self._R0s[:K], self._r0s[:K], q[:K], z[:K], qd[:K], z[:K], qdd, floating=False
        )
        Dq, Dv, M = dq[:, 6:, 6:], du[:, 6:, 6:], H[:, 6:, 6:]
        offset = _affine_offset(tau[:, 6:], Dq, Dv, M, e[:K], ed[:K], d)
        return Linearization(offset, Dq, Dv, M, *self._task(q, guess))

    def _task(self, q, guess):
        """Return (task_offset (K, 3), Jp (K, 3, n)) of the end-effector task, else (None,) * 2."""
        if self.task != 'end_effector':
            return None, None
        K, n = self.steps, self.n
        R, r = np.eye(3), np.zeros(3)
        kin, link, off = self._kin, self._ee, self._ee_offset
        offset, Jp = np.empty((K, 3)), np.empty((K, 3, n))
        q_ref = self._q
        for k in range(1, K + 1):
            J = kin.jacobian(link, R, r, q[k], offset=off, bias=False)[0]
            Rl, x = kin.link_pose(link)
            p = x + Rl @ off
            Jp[k - 1] = J[3:6, 6:]
            kin.jacobian(link, R, r, q_ref[k], offset=off, bias=False)
            Rl, x = kin.link_pose(link)
            offset[k - 1] = p - (x + Rl @ off) - Jp[k - 1] @ guess[0][k]
        return offset, Jp

    def _state(self, state):
        """Return the base (R0, r0, u0) of the measured state."""
        return self.frames.fixed(state.base)

    def _x0(self, state, R0, u0, e0, ed0):
        return (e0, ed0)

    def _solve(self, state, ref, t, start):
        """
        Return (a new Plan from control time ``t``, or None; why not, or '').

        ``start``: the solve's start on the wall clock (time.perf_counter()).
        """
        R0, r0, u0 = self._state(state)
        q_ref, qd_ref, qdd_ref = self._references(ref, t)
        e0, ed0 = state.q - q_ref[0], state.qd - qd_ref[0]
        x0 = self._x0(state, R0, u0, e0, ed0)
        guess = self._guess(e0, ed0, t)
        q, qd = q_ref + guess[0], qd_ref + guess[1]
        lin = self._linearize(R0, r0, u0, q, qd, qdd_ref + guess[2], guess)
        left = self.deadline - (time.perf_counter() - start)
        if left <= 0:
            return None, 'late'
        plan = self.qp.solve(x0, (q_ref, qd_ref), lin, guess, time_limit=left)
        if plan is None:
            return None, 'late' if 'time limit' in self.qp.status else self.qp.status
        return plan._replace(t0=t), ''

    # -- the tick --------------------------------------------------------------------------
    def command(self, state, ref, t, dt):
        t = 0.0 if t is None else float(t)
        if (
            self.next_solve is None
            or t >= self.next_solve - 1e-9
            or t < self.next_solve - 2 * (self.period)
        ):
            self._attempt(state, ref, t)
        plan = self.plan
        if plan is None:
            out = self.follower.command(state, ref, t, dt)
        else:
            e, ed, d = evaluate(plan, t)
            planned = Reference(ref.position + e, ref.velocity + ed, ref.acceleration + d)
            out = self.follower.command(state, planned, t, dt)
        self.details = MpcStatus(
            self.solves,
            self.misses,
            plan is None,
            self.solve_time,
            self.qp.iterations,
            self.message,
        )
        return LawOutput(out.values, out.base_torque, out.base_force, self.details)

    def _attempt(self, state, ref, t):
        """Solve now; keep the plan, or fall back to computed torque and report the miss."""
        self.next_solve = t + self.period
        start = time.perf_counter()
        try:
            plan, why = self._solve(state, ref, t, start)
        except Exception as err:  # noqa: BLE001 - a failed solve falls back, never stops the tick
            plan, why = None, f'{type(err).__name__}: {err}'
        self.solve_time = elapsed = time.perf_counter() - start
        if why == 'late' or elapsed > self.deadline:
            why = (
                f'the solve took {elapsed * 1e3:.2f} ms, past mpc_deadline '
                f'({self.deadline * 1e3:.2f} ms)'
            )
        elif why:
            why = f'OSQP did not solve the QP ({why})'
        if why:
            self.misses += 1
            self.plan, self.message = None, why
            if plan is not None:
                self.last_plan = plan  # still the best warm start
            if self.notify is not None:
                self.notify(
                    'warning',
                    ('mpc', 'miss'),
                    f'{self.mode}: solve not used: {why}; computed torque until the next solve '
                    f'({self.misses} of {self.misses + self.solves} solves missed)',
                )
            return
        self.solves += 1
        self.plan = self.last_plan = plan


def _affine_offset(tau, Dq, Dv, M, e, ed, d):
    """Return tau - Dq e - Dv e' - M d (K, n) (node 0: the measured state, no error terms)."""
    off = tau - np.einsum('kij,kj->ki', M, d)
    off[1:] -= np.einsum('kij,kj->ki', Dq[1:], e[1:]) + np.einsum('kij,kj->ki', Dv[1:], ed[1:])
    return off


class FloatingModelPredictive(ModelPredictive):
    """
    MPC of the joint reference on a free-floating (unactuated) base (module docstring).

    The ticks are :class:`~spart_ros.control.effort_laws.FloatingBase` on the plan; the cost
    adds the base's attitude (its rotation from the attitude at activation) and angular
    velocity, linear in the joint state through the conserved momentum.  ``dynamics``,
    ``gains``, ``settings``: as :class:`ModelPredictive`.
    """

    mode = 'floating_mpc'
    base = 'floating'
    follower_class = FloatingBase

    def _state(self, state):
        R0, r0, u0 = self.frames.floating(state.base)
        return R0.copy(), r0.copy(), u0.copy()

    def _x0(self, state, R0, u0, e0, ed0):
        if self.base_attitude is None:
            self.base_attitude = R0.copy()
        return (e0, ed0, rotation_vector(self.base_attitude.T @ R0), u0[0:3].copy())

    def _linearize(self, R0, r0, u0, q, qd, qdd, guess):
        """
        Floating_ID's efforts and the base's angular velocity, linearized at the warm start.

        The base pose is the measured one at every node and the momentum SPART's h0 = H[0:6] u
        of the measured state (both held over the horizon: the base turns a few degrees in it).
        """
        K, n = self.steps, self.n
        e, ed, d = guess
        b = self.batch
        Rs, rs, z = self._R0s, self._r0s, self._zeros6
        Rs[:] = R0
        rs[:] = r0
        H = b.mass_matrix(Rs, rs, q)  # (K + 1, N, N)
        h0 = H[0, 0:6] @ np.concatenate([u0, qd[0]])  # the measured momentum
        H0, H0m = H[:, 0:6, 0:6], H[:, 0:6, 6:]
        u0s = np.empty((K + 1, 6))
        u0s[:] = np.linalg.solve(H0, (h0 - np.einsum('kij,kj->ki', H0m, qd))[..., None])[..., 0]
        qdd_all = np.empty((K + 1, n))
        qdd_all[:K], qdd_all[K] = qdd, qdd[K - 1]
        tau0 = b.inverse_dynamics(Rs, rs, q, u0s, qd, z, qdd_all)[:, 0:6]
        u0dot = -np.linalg.solve(H0, tau0[..., None])[..., 0]
        tau, dq, du, H, dh = b.inverse_dynamics_derivatives(Rs, rs, q, u0s, qd, u0dot, qdd_all)
        H0, H0m, Hmm = H[:, 0:6, 0:6], H[:, 0:6, 6:], H[:, 6:, 6:]
        X = np.linalg.inv(H0)  # (K + 1, 6, 6)
        du0_dqm = -X @ dh[:, :, 6:]  # the momentum held: d u0 / d qm, d u0 / d um
        du0_dum = -X @ H0m
        # total derivatives of tau through u0, then tau0 = 0 held by the base's acceleration
        Tq = dq[:, :, 6:] + du[:, :, 0:6] @ du0_dqm
        Tv = du[:, :, 6:] + du[:, :, 0:6] @ du0_dum
        S = np.swapaxes(H0m, 1, 2) @ X  # Hm0 H0^-1
        Dq, Dv = Tq[:, 6:] - S @ Tq[:, 0:6], Tv[:, 6:] - S @ Tv[:, 0:6]
        M = Hmm - S @ H0m
        offset = _affine_offset(tau[:K, 6:], Dq[:K], Dv[:K], M[:K], e[:K], ed[:K], d)
        Gw, Jw = du0_dqm[1:, 0:3], du0_dum[1:, 0:3]
        w_off = (
            u0s[1:, 0:3] - np.einsum('kij,kj->ki', Gw, e[1:]) - np.einsum('kij,kj->ki', Jw, ed[1:])
        )
        return Linearization(offset, Dq[:K], Dv[:K], M[:K], w_off, Gw, Jw, *self._task(q, guess))
