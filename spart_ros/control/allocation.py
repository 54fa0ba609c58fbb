"""
Control allocation: a base wrench -> thruster forces and reaction wheel torques (pure numpy).

The actuators' effectiveness ``M`` (6, n_t + n_w) maps x = [thruster forces (n_t); wheel motor
torques (n_w)] to the wrench they exert on the base, [torque about b's origin; force], in the base
link frame b:

- thruster j: ``[p_j x d_j; d_j]`` per newton (its point and direction in b), 0 <= f_j <= F_j;
- wheel i: ``[-a_i; 0]`` per N m (a motor torque tau on the rotor about its axis a_i pushes the
  base by -tau a_i), ``lower_i <= tau_i <= upper_i`` (its torque limit, narrowed at its speed
  limit).

:meth:`WrenchAllocator.allocate` solves, with bounded least squares (scipy's BVLS,
``scipy.optimize.lsq_linear`` method 'bvls', an active-set method exact at its end, compiled:
:class:`~spart_ros.control.bounded_least_squares.BoundedLeastSquares`, the same steps):

1. the **bounded least-squares optimum** ``x1 = argmin ||S (M x - w)||`` over the bounds, ``S`` =
   diag(1/torque_scale (3), 1/force_scale (3)) so that newton-metres and newtons weigh alike.
   The wrench it achieves, ``M x1``, is the closest to ``w`` the actuators can exert (unique: the
   projection of w on a convex set).  If its residual exceeds ``tolerance`` the wrench is
   **infeasible**: x1 is the answer, reported so (the actuators at their bounds are named);
2. otherwise (feasible: usually many x exert w), the **preferred** x: the same solver on the rows
   of step 1 stacked with ``epsilon`` times the preference rows ``P (x - x_p)`` (fuel: thruster
   forces over F_j times ``fuel_weight``; wheel torques over their limit times ``wheel_weight``;
   optionally the thrusters' torque towards a target, for momentum dumping), then the remaining
   residual (of order epsilon^2) is removed with a least-norm step of the actuators off their
   bounds; if that does not bring it within ``tolerance`` (it always did in the tests), x1 is
   kept.  So a feasible wrench is exerted to ``tolerance`` (1e-9 of the scales by default).

Shapes: ``w`` (6,); results (n_t,), (n_w,), (6,).  Frames: b, at b's origin.
"""

from collections import namedtuple

import numpy as np

from .bounded_least_squares import BoundedLeastSquares
from ..core.errors import InputError

__all__ = ['WrenchAllocator', 'Allocation', 'effectiveness']

Allocation = namedtuple(
    'Allocation',
    'thrust wheel_torques achieved required residual feasible saturated message',
)
Allocation.__doc__ = """One allocation: ``thrust`` (n_t,) [N], ``wheel_torques`` (n_w,) [N m];
``achieved`` (6,) the wrench they exert and ``required`` (6,) the one asked for ([torque about
b's origin; force], b); ``residual`` = required - achieved; ``feasible`` (the required wrench is
exerted to the tolerance); ``saturated``: names of the actuators at a bound that limits the
result (empty when feasible); ``message``: '' or why the wrench is not exerted."""


def effectiveness(actuators):
    """Return M (6, n_t + n_w) of :class:`~spart_ros.core.actuators.BaseActuators` (module doc)."""
    B = actuators.thruster_wrenches
    A = np.zeros((6, len(actuators.wheels)))
    A[0:3] = -actuators.wheel_axes
    return np.hstack([B.reshape(6, -1), A])


class WrenchAllocator:
    """
    Bounded least-squares allocation of a base wrench (see the module docstring).

    ``actuators``: :class:`~spart_ros.core.actuators.BaseActuators`; ``torque_scale`` [N m] and
    ``force_scale`` [N]: the residual's weights (default: the largest torque and force the
    actuators can exert along one axis, at least 1e-3); ``fuel_weight``, ``wheel_weight``: the
    preference among exact solutions (relative weights of thrust and wheel torque, each over its
    bound); ``epsilon``: weight of the preference rows; ``tolerance``: relative residual (of the
    scales) below which a wrench counts as exerted.
    """

    def __init__(
        self,
        actuators,
        torque_scale=None,
        force_scale=None,
        fuel_weight=1.0,
        wheel_weight=0.01,
        epsilon=1e-5,
        tolerance=1e-9,
    ):
        self.actuators = actuators
        self.M = effectiveness(actuators)
        self.n_t, self.n_w = len(actuators.thrusters), len(actuators.wheels)
        self.names = actuators.thruster_names + actuators.wheel_names
        self.f_max = np.array([t.max_force for t in actuators.thrusters], dtype=float)
        self.tau_max = np.array([w.max_torque for w in actuators.wheels], dtype=float)
        if not np.all(np.isfinite(self.tau_max)):
            raise InputError('allocation: every reaction wheel needs a finite max_torque')
        span = np.concatenate([self.f_max, self.tau_max])
        reach = np.abs(self.M) @ span
        self.torque_scale = float(torque_scale or max(reach[0:3].max(initial=0.0), 1e-3))
        self.force_scale = float(force_scale or max(reach[3:6].max(initial=0.0), 1e-3))
        self.S = np.concatenate(
            [np.full(3, 1.0 / self.torque_scale), np.full(3, 1.0 / self.force_scale)]
        )
        self.fuel_weight, self.wheel_weight = float(fuel_weight), float(wheel_weight)
        self.epsilon, self.tolerance = float(epsilon), float(tolerance)
        # variables scaled to their bound: x = span * y
        self._span = np.where(span > 0, span, 1.0)
        self._A = (self.S[:, None] * self.M) * self._span
        n = self.n_t + self.n_w
        self._lsq = BoundedLeastSquares(6 + n + 3, n)  # step 2: the preference rows (and dump)

    def bounds(self, lower_torques=None, upper_torques=None):
        """
        Return (lower (n,), upper (n,)) of x: thrusters [0, F_j], wheels +- max_torque.

        ``lower_torques``, ``upper_torques`` (n_w,): the wheels' bounds instead, when given.
        """
        lo = np.concatenate(
            [np.zeros(self.n_t), -self.tau_max if lower_torques is None else lower_torques]
        )
        hi = np.concatenate([self.f_max, self.tau_max if upper_torques is None else upper_torques])
        return lo, hi

    def allocate(
        self,
        wrench,
        lower_torques=None,
        upper_torques=None,
        preferred_torques=None,
        thruster_torque=None,
        dump_weight=0.0,
    ):
        """
        Return the :data:`Allocation` of ``wrench`` (6,) [torque about b's origin; force], in b.

        ``lower_torques``, ``upper_torques`` (n_w,): the wheels' torque bounds now (default +-
        max_torque; narrowed at a speed limit); ``preferred_torques`` (n_w,): what the wheels
        should do among exact solutions (default 0); ``thruster_torque`` (3,) with ``dump_weight``
        > 0: the torque the thrusters should exert among exact solutions (momentum dumping).
        """
        w = np.asarray(wrench, dtype=float).reshape(-1)
        if w.shape != (6,) or not np.all(np.isfinite(w)):
            raise InputError(f'allocation: expected a finite wrench of 6 values, got {wrench!r}')
        lo, hi = self.bounds(lower_torques, upper_torques)
        if np.any(lo > hi):
            raise InputError(f'allocation: lower bounds above upper bounds ({lo} > {hi})')
        span = self._span
        ylo, yhi = lo / span, hi / span
        fixed = ylo == yhi  # lsq_linear needs lower < upper: pin those variables
        ylo_s, yhi_s = ylo.copy(), yhi.copy()
        yhi_s[fixed] = np.nextafter(ylo[fixed], np.inf)
        b = self.S * w
        x1 = self._solve(self._A, b, ylo, yhi, ylo_s, yhi_s, fixed)
        r1 = b - self._A @ x1
        if np.abs(r1).max() > self.tolerance:
            return self._result(x1 * span, w, lo, hi, False)
        # feasible: the preferred exact solution
        n = self.n_t + self.n_w
        P = np.diag(
            np.concatenate(
                [np.full(self.n_t, self.fuel_weight), np.full(self.n_w, self.wheel_weight)]
            )
        )
        y_pref = np.zeros(n)
        if preferred_torques is not None:
            y_pref[self.n_t :] = np.asarray(preferred_torques, dtype=float) / span[self.n_t :]
        rows, rhs = [self._A, self.epsilon * P], [b, self.epsilon * (P @ y_pref)]
        if thruster_torque is not None and dump_weight > 0 and self.n_t:
            T = np.zeros((3, n))
            T[:, : self.n_t] = self._A[0:3, : self.n_t]
            rows.append(self.epsilon * dump_weight * T)
            rhs.append(
                self.epsilon * dump_weight * self.S[0:3] * np.asarray(thruster_torque, float)
            )
        A2, b2 = np.vstack(rows), np.concatenate(rhs)
        x2 = self._solve(A2, b2, ylo, yhi, ylo_s, yhi_s, fixed)
        x2 = self._polish(x2, b, ylo, yhi)
        if np.abs(b - self._A @ x2).max() > self.tolerance:
            x2 = x1
        return self._result(x2 * span, w, lo, hi, True)

    def _solve(self, A, b, ylo, yhi, ylo_s, yhi_s, fixed):
        x = self._lsq.solve(A, b, ylo_s, yhi_s, tol=1e-14, max_iter=200)  # scipy's bvls
        return np.clip(np.where(fixed, ylo, x), ylo, yhi)

    def _polish(self, y, b, ylo, yhi):
        """Remove the residual with a least-norm step of the variables off their bounds."""
        r = b - self._A @ y
        margin = 1e-9
        free = (y > ylo + margin) & (y < yhi - margin)
        if not free.any():
            return y
        step = np.linalg.lstsq(self._A[:, free], r, rcond=None)[0]
        out = y.copy()
        out[free] += step
        return np.clip(out, ylo, yhi)

    def _result(self, x, w, lo, hi, feasible):
        achieved = self.M @ x
        residual = w - achieved
        saturated, message = [], ''
        if not feasible:
            at = np.isclose(x, lo, rtol=0, atol=1e-12 * (np.abs(lo) + 1)) | np.isclose(
                x, hi, rtol=0, atol=1e-12 * (np.abs(hi) + 1)
            )
            # a bound limits the result when relaxing it would reduce the residual
            gradient = self.M.T @ (self.S**2 * residual)
            # (a thruster at 0 is not saturated: it cannot pull)
            wheel = np.arange(len(x)) >= self.n_t
            limiting = at & (
                (np.isclose(x, hi, rtol=0, atol=1e-12 * (np.abs(hi) + 1)) & (gradient > 0))
                | (
                    np.isclose(x, lo, rtol=0, atol=1e-12 * (np.abs(lo) + 1))
                    & (gradient < 0)
                    & wheel
                )
            )
            saturated = [self.names[k] for k in np.flatnonzero(limiting)]
            message = (
                'base wrench not feasible: residual torque '
                f'{np.linalg.norm(residual[0:3]):.3g} N m, force '
                f'{np.linalg.norm(residual[3:6]):.3g} '
                f'N (the bounded least-squares optimum)'
                + (f'; at their bounds: {", ".join(saturated)}' if saturated else '')
            )
        return Allocation(
            x[: self.n_t].copy(),
            x[self.n_t :].copy(),
            achieved,
            w.copy(),
            residual,
            bool(feasible),
            saturated,
            message,
        )
