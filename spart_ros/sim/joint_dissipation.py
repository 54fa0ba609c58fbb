"""
The joints' damping and Coulomb friction as both plants apply them: the model's law, implicitly.

The law is the core's (:mod:`spart_ros.core.joint_friction`), the one a controller's model
compensates: joint j (full coordinates) takes the effort

    f_j(w) = d_j w + F_j tanh(w / v)          (w: the joint's velocity, v = friction_velocity)

against its motion, with no static friction: a joint at rest under an effort e below F_j creeps
at the velocity where f_j = e (``|w| < v atanh(e / F_j)``); MuJoCo's ``frictionloss`` would hold it
(stick-slip), which the model-based controller does not know.

**Why implicitly.** Near zero velocity the friction is as stiff as a damping of F / v (100 F N m s
/ rad at the default v = 0.01 rad/s), and a declared damping d on a light joint is stiff too: a
wrist of inertia 1.4e-4 kg m^2 with d = 2 settles in 0.07 ms, with F = 1 near rest in 1.4 us.
An explicit integrator with a 1 ms step diverges or chatters on either; so does a linearized
implicit step (where the friction saturates its slope is zero, and a light joint alternates
between sliding one way and the other).

**The step** (:meth:`JointDissipation.step`, both plants), from the state at its start (M the
inertia there, r the efforts minus the bias forces, P the map from the plant's velocity vector to
the joints' velocities):

1. the backward-Euler velocities u* of M (u* - u0) / h + P' f(P u*) = r, solved exactly
   (:meth:`JointDissipation.implicit_velocity`: Newton's method with a line search; the equations
   are the gradient of a strictly convex function, so the solution is unique and the iteration
   converges from anywhere): where the joints end up, robustly;
2. the velocity equations M du/dt = r - P' f(P u) with f linearized at u*, f(u) ~ f(u*) + S (u -
   u*), integrated exactly over the step (the exponential of M^-1 S by the symmetric eigenproblem
   of L^-1 S L^-T, M = L L'): the end velocities u1 and their mean over the step, by which the
   positions move.

Exact for a linear damping whatever its time constant (backward Euler alone was 10 % off in a
joint's acceleration at h / T = 0.5), the friction law exact where the joint ends and linear
around it, stable for any inertia, damping and friction; r (gravity, Coriolis, the efforts) is
held over the step (first order in h for the rigid-body part).  A robot without friction skips
step 1 (its law is linear).
"""

import numpy as np

from ..core.joint_friction import FRICTION_VELOCITY

__all__ = ['JointDissipation']

_LOG2 = np.log(2.0)
#: Newton iterations before a step gives up (a handful are needed; see implicit_velocity)
MAX_ITERATIONS = 60


def _log_cosh(x):
    """log(cosh(x)), elementwise, without overflow."""
    a = np.abs(x)
    return a + np.log1p(np.exp(-2.0 * a)) - _LOG2


class JointDissipation:
    """
    The joints' damping d and smoothed Coulomb friction F tanh(w / v), and their implicit step.

    ``damping``, ``friction`` (n_full,): per joint of the robot (full coordinates, N m s/rad or N
    s/m, N m or N); ``G`` (n_full, n): joint velocities = G x for the n coordinates x the plant
    integrates (independent coordinates of a robot with mimic joints; None: identity);
    ``velocity``: v (rad/s or m/s).  ``active``: any damping or friction.
    """

    def __init__(self, damping, friction, G=None, velocity=FRICTION_VELOCITY):
        self.damping = np.array(damping, dtype=float).reshape(-1)
        self.friction = np.array(friction, dtype=float).reshape(-1)
        self.velocity = float(velocity)
        self.G = None if G is None else np.array(G, dtype=float)
        self.n = len(self.damping) if G is None else self.G.shape[1]
        self.active = bool(self.damping.any() or self.friction.any())
        self.has_friction = bool(self.friction.any())

    @classmethod
    def of_robot(cls, robot, velocity=FRICTION_VELOCITY):
        """
        Return the law of ``robot``, a :class:`~spart_ros.core.model.Robot` (coordinates, values).

        ``velocity``: the smoothed sign's velocity scale v (rad/s or m/s).
        """
        from ..core.joint_friction import joint_dynamics_arrays

        damping, friction, _ = joint_dynamics_arrays(robot)
        c = robot.coordinates
        return cls(damping, friction, None if c.is_identity else c.G, velocity)

    def _joints(self, x):
        return x if self.G is None else self.G @ x

    def _back(self, f):
        return f if self.G is None else self.G.T @ f

    def forces(self, x):
        """Return the efforts (n,) of the law at coordinate velocities ``x`` (n,): P' f(P x)."""
        w = self._joints(np.asarray(x, dtype=float))
        return self._back(self.damping * w + self.friction * np.tanh(w / self.velocity))

    def slopes(self, x):
        """Return d f_j / d w_j (n_full,) at coordinate velocities x: d + F / v sech^2(w / v)."""
        w = self._joints(np.asarray(x, dtype=float))
        t = np.tanh(w / self.velocity)
        return self.damping + (self.friction / self.velocity) * (1.0 - t * t)

    def _potential(self, x):
        """Return sum_j of the integral of f_j: d w^2 / 2 + F v log cosh(w / v)."""
        w = self._joints(x)
        v = self.velocity
        return float(
            np.dot(0.5 * self.damping, w * w) + np.dot(self.friction * v, _log_cosh(w / v))
        )

    def implicit_velocity(self, M, r, u0, h, joints):
        """
        Return u1 (len(u0),): the velocities at the end of a step of ``h`` (see the module).

        Solves M (u1 - u0) / h + P' f(P u1) = r.  ``M`` (N, N) symmetric positive definite inertia
        of the plant's velocity vector, ``r`` (N,) the other generalized forces (efforts minus
        bias) at the start of the step, ``u0`` (N,) the velocities then, ``joints``: the indices
        (slice or integer array, n of them) of the dissipating coordinates in the velocity vector.
        """
        A = np.asarray(M, dtype=float) / h
        u0 = np.asarray(u0, dtype=float)
        r = np.asarray(r, dtype=float)
        idx = np.arange(len(u0))[joints] if isinstance(joints, slice) else np.asarray(joints)
        block = np.ix_(idx, idx)
        G = self.G
        tolerance = 1e-13 * (1.0 + np.abs(r).max(initial=0.0) + self.friction.max(initial=0.0))

        def phi(x):
            du = x - u0
            return 0.5 * float(du @ (A @ du)) - float(r @ x) + self._potential(x[idx])

        def gradient(x):
            g = A @ (x - u0) - r
            g[idx] += self.forces(x[idx])
            return g

        u = u0.copy()
        value, grad = None, gradient(u)  # the function's value only when a line search needs it
        for _ in range(MAX_ITERATIONS):
            size = np.abs(grad).max()
            if size <= tolerance:
                break
            H = A.copy()
            s = self.slopes(u[idx])
            H[block] += np.diag(s) if G is None else G.T @ (s[:, None] * G)
            step = np.linalg.solve(H, -grad)
            slope = float(grad @ step)  # < 0: a descent direction (H is positive definite)
            t = 1.0
            while True:
                trial = u + t * step
                trial_grad = gradient(trial)
                # a halved gradient is progress enough (near the solution the function's decrease
                # is below its rounding); else Armijo on the convex function
                if np.abs(trial_grad).max() <= 0.5 * size or t < 1e-10:
                    trial_value = None
                    break
                if value is None:
                    value = phi(u)
                trial_value = phi(trial)
                if trial_value <= value + 1e-4 * t * slope:
                    break
                t *= 0.5
            u, value, grad = trial, trial_value, trial_grad
        return u

    def step(self, M, r, u0, h, joints):
        """
        Return (u1, u_mean): the velocities at the end of a step of ``h`` and their mean over it.

        The step of both plants (module docstring): u* = :meth:`implicit_velocity` (the backward-
        Euler solution: robust whatever the stiffness), then the velocity equations with the
        dissipation linearized at u*, f(u) ~ f(u*) + S (u - u*), integrated exactly over the step
        (the exponential of M^-1 S, by the symmetric eigenproblem of L^-1 S L^-T, M = L L'):
        exact for a linear damping whatever its time constant, and for the friction where it is
        linear over the step.  The positions move by h u_mean.  ``M``, ``r`` (the other generalized
        forces), ``u0``, ``joints`` (the dissipating coordinates): as :meth:`implicit_velocity`.
        """
        M = np.asarray(M, dtype=float)
        r = np.asarray(r, dtype=float)
        u0 = np.asarray(u0, dtype=float)
        idx = np.arange(len(u0))[joints] if isinstance(joints, slice) else np.asarray(joints)
        # the linearization point: the backward-Euler solution (any point for a linear law)
        ustar = self.implicit_velocity(M, r, u0, h, idx) if self.has_friction else u0
        s = self.slopes(ustar[idx])
        S = np.zeros_like(M)
        S[np.ix_(idx, idx)] = np.diag(s) if self.G is None else self.G.T @ (s[:, None] * self.G)
        forcing = r + S @ ustar
        forcing[idx] -= self.forces(ustar[idx])  # r - f(u*) + S u*: M du/dt = forcing - S u
        L = np.linalg.cholesky(M)
        Li = np.linalg.inv(L)
        lam, V = np.linalg.eigh(Li @ S @ Li.T)
        lam = np.maximum(lam, 0.0)
        z0 = V.T @ (L.T @ u0)
        beta = V.T @ (Li @ forcing)
        x = lam * h
        p1, p2 = _phi1(x), _phi2(x)
        z1 = z0 * _decay(x) + beta * (h * p1)
        zm = z0 * p1 + beta * (h * p2)  # the mean of z over the step
        back = Li.T @ V
        return back @ z1, back @ zm


def _phi1(x):
    """(1 - exp(-x)) / x, elementwise (x >= 0)."""
    mid = np.clip(x, 1e-4, 40.0)  # beyond 40 exp(-x) is below rounding (and soon subnormal: slow)
    return np.where(
        x < 1e-4,
        1.0 - x / 2.0 + x * x / 6.0,
        np.where(x > 40.0, 1.0 / np.maximum(x, 40.0), -np.expm1(-mid) / mid),
    )


def _phi2(x):
    """(x - 1 + exp(-x)) / x^2, elementwise (x >= 0)."""
    mid = np.clip(x, 1e-3, 40.0)
    big = np.maximum(x, 40.0)
    return np.where(
        x < 1e-3,
        0.5 - x / 6.0 + x * x / 24.0,
        np.where(x > 40.0, (big - 1.0) / (big * big), (mid + np.expm1(-mid)) / (mid * mid)),
    )


def _decay(x):
    """
    exp(-x), 0 beyond x = 40 (below rounding).

    Kept from tiny values: times a velocity they give subnormal numbers, on which every later
    operation is a hundred times slower.
    """
    return np.where(x > 40.0, 0.0, np.exp(-np.minimum(x, 40.0)))
