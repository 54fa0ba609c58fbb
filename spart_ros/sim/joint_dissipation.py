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
   (Newton's method with a line search; the equations are the gradient of a strictly convex
   function, so the solution is unique and the iteration converges from anywhere): where the
   joints end up, robustly;
2. the velocity equations M du/dt = r - P' f(P u) with f linearized at u*, f(u) ~ f(u*) + S (u -
   u*), integrated exactly over the step (the exponential of M^-1 S by the symmetric eigenproblem
   of L^-1 S L^-T, M = L L'): the end velocities u1 and their mean over the step, by which the
   positions move.

Exact for a linear damping whatever its time constant (backward Euler alone was 10 % off in a
joint's acceleration at h / T = 0.5), the friction law exact where the joint ends and linear
around it, stable for any inertia, damping and friction; r (gravity, Coriolis, the efforts) is
held over the step (first order in h for the rigid-body part).  A robot without friction skips
step 1 (its law is linear).

**Compiled.** The step runs in one kernel (:func:`spart_ros.native.plant_kernels.dissipation_step`:
Newton's iterations with a Cholesky solve, the eigenproblem by cyclic Jacobi rotations), the
numpy code it replaced written out (test/plant_kernel_references.py keeps that code; the kernel
equals it to 1e-12 of the velocities): 11 us against 380 us per step on a 7-joint arm.
"""

import numpy as np

from ..core.joint_friction import FRICTION_VELOCITY
from ..native.plant_layout import DISSIPATION_MATRICES, DISSIPATION_VECTORS

__all__ = ['JointDissipation']


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
        from ..native import compiled

        self._kernel = compiled.dissipation_step
        # the kernel's G (n_full, n): a placeholder without one
        self._G = np.zeros((len(self.damping), self.n)) if self.G is None else self.G
        self._G = np.ascontiguousarray(self._G, dtype=float)
        self._scratch = None

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

    def step(self, M, r, u0, h, joints):
        """
        Return (u1, u_mean): the velocities at the end of a step of ``h`` and their mean over it.

        The step of both plants (module docstring): u* = the backward-Euler solution of
        M (u* - u0) / h + P' f(P u*) = r (robust whatever the stiffness; skipped without friction:
        the law is linear), then the velocity equations with the dissipation linearized at u*,
        f(u) ~ f(u*) + S (u - u*), integrated exactly over the step (the exponential of M^-1 S, by
        the symmetric eigenproblem of L^-1 S L^-T, M = L L'): exact for a linear damping whatever
        its time constant, and for the friction where it is linear over the step.  The positions
        move by h u_mean.  ``M`` (N, N) symmetric positive definite inertia of the plant's velocity
        vector, ``r`` (N,) the other generalized forces (efforts minus bias) at the start of the
        step, ``u0`` (N,) the velocities then, ``joints``: the indices (slice or integer array, n
        of them) of the dissipating coordinates in the velocity vector.  Compiled
        (:func:`spart_ros.native.plant_kernels.dissipation_step`); new arrays.
        """
        M = np.ascontiguousarray(M, dtype=float)
        N = M.shape[0]
        key = (N, joints.start, joints.stop, joints.step) if isinstance(joints, slice) else None
        cached = self._scratch  # the kernel's scratch, kept for the same joints (an index
        # array given again is the same object: the plants keep theirs)
        if cached is None or (cached[0] != key if key is not None else cached[1] is not joints):
            idx = np.arange(N)[joints] if key is not None else np.asarray(joints)
            self._scratch = (
                key,
                joints,
                idx.astype(np.int64),
                np.zeros((DISSIPATION_MATRICES, N, N)),
                np.zeros((DISSIPATION_VECTORS, max(N, len(self.damping)))),
                np.zeros(N),
                np.zeros(N),
            )
        _, _, idx, work, vectors, u1, mean = self._scratch
        code = self._kernel(
            M,
            np.ascontiguousarray(r, dtype=float),
            np.asarray(u0, dtype=float),
            float(h),
            idx,
            self.damping,
            self.friction,
            self._G,
            self.G is not None,
            self.velocity,
            self.has_friction,
            work,
            vectors,
            u1,
            mean,
        )
        if code < 0:  # M not positive definite: the step cannot be taken (the plant resets)
            u1[:] = mean[:] = np.nan
        return u1.copy(), mean.copy()
