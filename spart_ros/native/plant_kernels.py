"""
Compiled kernels of the plants (numba): what a plant does at every step or integration stage.

- :func:`orbit_loads_mujoco`: the orbit's tidal force and gravity-gradient torque on every body of
  a MuJoCo model, into ``xfrc_applied`` (at each body's CoM, world = N axes), at one stage;
- :func:`rigid_body_steps`: the RK4 plant's steps (the core's articulated-body algorithm at four
  stages, the orbit's loads on every link at each, a body-fixed base wrench, held joint efforts);
- :func:`dissipation_step`: the joints' damping and friction step of both plants
  (:mod:`spart_ros.sim.joint_dissipation`: Newton's method for the backward-Euler velocities, then
  the linearized law integrated exactly by the symmetric eigenproblem);
- :func:`base_actuators_step`: what the base's wheel motors and thrusters apply over a step
  (:mod:`spart_ros.sim.actuation`);
- the readouts on an orbit: :func:`lvlh_state` (CircularOrbit.to_lvlh), :func:`tidal_acceleration`,
  :func:`ros_quaternion` (core.attitude.quaternion_to_ros's arithmetic, without its checks).

Each is the numpy code it replaces written out operation by operation (the same formulas in the
same order, so that a result changes by rounding at most; :func:`rigid_body_steps` without an orbit
repeats the numpy step's operations exactly, the quaternion's norm summed as numpy's ``dot`` sums
it on this machine, fused multiply-adds in order).  No kernel allocates: scratch comes from the
caller (:mod:`.plant_layout` gives its shapes).  Compiled ahead of time with the rest
(:mod:`.exports`).
"""

import math

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .kernels import _aba, compiled, forward_kinematics
from .layout import IBODY, MASS, NOT_FINITE, R, SINGULAR, X
from .plant_layout import (
    MAX_ITERATIONS,
    NONLINEAR,
    ORBIT_MODEL,
    ORBIT_MU,
    ORBIT_N,
    ORBIT_ON,
    ORBIT_RADIUS,
)


@intrinsic
def _fma(typingctx, a, b, c):
    """Return a * b + c rounded once (LLVM's fma)."""
    sig = types.float64(types.float64, types.float64, types.float64)

    def codegen(context, builder, signature, args):
        double = ir.DoubleType()
        f = builder.module.declare_intrinsic(
            'llvm.fma', [double], ir.FunctionType(double, [double, double, double])
        )
        return builder.call(f, args)

    return sig, codegen


@compiled(inline='always')
def _norm4(a, b, c, d):
    """Return |(a, b, c, d)| as ``np.linalg.norm`` gives it here (OpenBLAS's ddot: fused)."""
    return math.sqrt(_fma(d, d, _fma(c, c, _fma(b, b, a * a))))


# --- the orbit's loads on one body ----------------------------------------------------------
@compiled(inline='always')
def _tidal(orbit, e0, e1, r0, r1, r2):
    """Return the tidal acceleration (3 floats) at r in N (CircularOrbit.accelerations)."""
    n = orbit[ORBIT_N]
    n2 = n * n
    re = r0 * e0 + r1 * e1 + r2 * 0.0
    if orbit[ORBIT_MODEL] != NONLINEAR:
        return (
            n2 * (3.0 * (re * e0) - r0),
            n2 * (3.0 * (re * e1) - r1),
            n2 * (3.0 * (re * 0.0) - r2),
        )
    a = orbit[ORBIT_RADIUS]
    # d = a e + r, |d|^2 = a^2 (1 + q): (a / |d|)^3 - 1 = (1 + q)^-1.5 - 1 without cancellation
    q = (2.0 * re + (r0 * r0 + r1 * r1 + r2 * r2) / a) / a
    lq = math.log1p(q)
    f = a * math.expm1(-1.5 * lq)
    scale = math.exp(-1.5 * lq)
    m = -n2
    return m * (scale * r0 + f * e0), m * (scale * r1 + f * e1), m * (scale * r2 + f * 0.0)


@compiled(inline='always')
def _gradient_direction(orbit, e0, e1, r0, r1, r2):
    """Return (u (3 floats), gain): the gravity-gradient torque's direction and 3 mu / |d|^3."""
    if orbit[ORBIT_MODEL] != NONLINEAR:
        n = orbit[ORBIT_N]
        return e0, e1, 0.0, 3.0 * (n * n)
    a = orbit[ORBIT_RADIUS]
    d0, d1, d2 = a * e0 + r0, a * e1 + r1, a * 0.0 + r2
    dist = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2)
    return d0 / dist, d1 / dist, d2 / dist, 3.0 * orbit[ORBIT_MU] / dist**3


@compiled(inline='always')
def _gradient_torque(u0, u1, u2, gain, Rm, inertia, principal):
    """
    Return gain u x (I_N u) (3 floats): I_N = Rm inertia Rm' (Rm row-major 3x3, body frame -> N).

    ``inertia``: the principal moments (3) when ``principal``, else the inertia (row-major 3x3)
    in the body frame.
    """
    b0 = Rm[0] * u0 + Rm[3] * u1 + Rm[6] * u2  # u in the body frame: Rm' u
    b1 = Rm[1] * u0 + Rm[4] * u1 + Rm[7] * u2
    b2 = Rm[2] * u0 + Rm[5] * u1 + Rm[8] * u2
    if principal:
        c0, c1, c2 = inertia[0] * b0, inertia[1] * b1, inertia[2] * b2
    else:
        c0 = inertia[0] * b0 + inertia[1] * b1 + inertia[2] * b2
        c1 = inertia[3] * b0 + inertia[4] * b1 + inertia[5] * b2
        c2 = inertia[6] * b0 + inertia[7] * b1 + inertia[8] * b2
    v0 = Rm[0] * c0 + Rm[1] * c1 + Rm[2] * c2  # back in N
    v1 = Rm[3] * c0 + Rm[4] * c1 + Rm[5] * c2
    v2 = Rm[6] * c0 + Rm[7] * c1 + Rm[8] * c2
    return (
        gain * (u1 * v2 - u2 * v1),
        gain * (u2 * v0 - u0 * v2),
        gain * (u0 * v1 - u1 * v0),
    )


@compiled
def orbit_loads_mujoco(orbit, t, bodies, mass, inertia, xipos, ximat, user, xfrc):
    """
    Set ``xfrc`` (nbody, 6) = ``user`` + the orbit's loads [force; torque] on ``bodies``, time t.

    MuJoCo's layout: ``xipos`` (nbody, 3) CoM positions in N, ``ximat`` (nbody, 9) the inertia
    frames -> N (row-major), ``inertia`` (k, 3) the principal moments and ``mass`` (k,) of the k
    ``bodies``; the torque is about the CoM (where MuJoCo applies ``xfrc_applied``).  Returns 0.
    """
    a = orbit[ORBIT_N] * t
    e0, e1 = math.cos(a), math.sin(a)
    for k in range(bodies.shape[0]):
        b = bodies[k]
        r0, r1, r2 = xipos[b, 0], xipos[b, 1], xipos[b, 2]
        g0, g1, g2 = _tidal(orbit, e0, e1, r0, r1, r2)
        m = mass[k]
        u0, u1, u2, gain = _gradient_direction(orbit, e0, e1, r0, r1, r2)
        t0, t1, t2 = _gradient_torque(u0, u1, u2, gain, ximat[b], inertia[k], True)
        xfrc[b, 0] = user[b, 0] + m * g0
        xfrc[b, 1] = user[b, 1] + m * g1
        xfrc[b, 2] = user[b, 2] + m * g2
        xfrc[b, 3] = user[b, 3] + t0
        xfrc[b, 4] = user[b, 4] + t1
        xfrc[b, 5] = user[b, 5] + t2
    return 0


@compiled
def _link_orbit_loads(orbit, t, mi, mf, W, r0, wF0, wFm):
    """Set SPART's wF0 (6,), wFm (6, n): [torque; force] of the orbit at each CoM (after FK)."""
    n = mi[0]
    a = orbit[ORBIT_N] * t
    e0, e1 = math.cos(a), math.sin(a)
    for i in range(n + 1):
        c0, c1, c2 = r0[0] + W[i, X], r0[1] + W[i, X + 1], r0[2] + W[i, X + 2]
        g0, g1, g2 = _tidal(orbit, e0, e1, c0, c1, c2)
        m = mf[i, MASS]
        u0, u1, u2, gain = _gradient_direction(orbit, e0, e1, c0, c1, c2)
        t0, t1, t2 = _gradient_torque(
            u0, u1, u2, gain, W[i, R : R + 9], mf[i, IBODY : IBODY + 9], False
        )
        if i == 0:
            wF0[0], wF0[1], wF0[2] = t0, t1, t2
            wF0[3], wF0[4], wF0[5] = m * g0, m * g1, m * g2
        else:
            wFm[0, i - 1], wFm[1, i - 1], wFm[2, i - 1] = t0, t1, t2
            wFm[3, i - 1], wFm[4, i - 1], wFm[5, i - 1] = m * g0, m * g1, m * g2


# --- the RK4 plant --------------------------------------------------------------------------
@compiled(inline='always')
def _rotation(w, x, y, z, Rm):
    """Rm (3, 3) = the rotation of the unit quaternion (w, x, y, z) (rigid_body._rotation)."""
    Rm[0, 0] = 1.0 - 2.0 * (y * y + z * z)
    Rm[0, 1] = 2.0 * (x * y - w * z)
    Rm[0, 2] = 2.0 * (x * z + w * y)
    Rm[1, 0] = 2.0 * (x * y + w * z)
    Rm[1, 1] = 1.0 - 2.0 * (x * x + z * z)
    Rm[1, 2] = 2.0 * (y * z - w * x)
    Rm[2, 0] = 2.0 * (x * z - w * y)
    Rm[2, 1] = 2.0 * (y * z + w * x)
    Rm[2, 2] = 1.0 - 2.0 * (x * x + y * y)


@compiled
def _rates(
    mi, mf, W, xs, t, floating, R0f, r0f, taum, wrench, orbit, gravity, Rm, tau0, fd, wF0, wFm, k
):
    """Set k = dx/dt at the state xs, time t (RigidBodyPlant._rates); return an error code."""
    nq = mi[1]
    if not floating:
        for j in range(6):
            tau0[j] = 0.0
        code = _aba(
            mi,
            mf,
            W,
            R0f,
            r0f,
            xs[0:nq],
            tau0,
            xs[nq:],
            tau0,
            taum,
            None,
            None,
            gravity,
            False,
            fd,
        )
        if code:
            return code
        for j in range(nq):
            k[j] = xs[nq + j]
            k[nq + j] = fd[6 + j]
        return 0
    a, b, c, d = xs[0], xs[1], xs[2], xs[3]
    norm = _norm4(a, b, c, d)
    _rotation(a / norm, b / norm, c / norm, d / norm, Rm)
    r0, q, u0, u = xs[4:7], xs[7 : 7 + nq], xs[7 + nq : 13 + nq], xs[13 + nq :]
    # the body-fixed base wrench (thrusters): [torque in the base CoM frame; R0 force]
    tau0[0], tau0[1], tau0[2] = wrench[0], wrench[1], wrench[2]
    thrust = wrench[3] != 0.0 or wrench[4] != 0.0 or wrench[5] != 0.0
    for r in range(3):  # (zeros exactly without thrust: the numpy step's zero tau0)
        tau0[3 + r] = (
            Rm[r, 0] * wrench[3] + Rm[r, 1] * wrench[4] + Rm[r, 2] * wrench[5] if thrust else 0.0
        )
    if orbit[ORBIT_ON] != 0.0:
        forward_kinematics(mi, mf, W, Rm, r0, q, False)
        _link_orbit_loads(orbit, t, mi, mf, W, r0, wF0, wFm)
        code = _aba(mi, mf, W, Rm, r0, q, u0, u, tau0, taum, wF0, wFm, gravity, True, fd)
    else:
        code = _aba(mi, mf, W, Rm, r0, q, u0, u, tau0, taum, None, None, gravity, True, fd)
    if code:
        return code
    x, y, z = u0[0], u0[1], u0[2]  # the quaternion's rate (rigid_body._quaternion_rate)
    k[0] = 0.5 * (-b * x - c * y - d * z)
    k[1] = 0.5 * (a * x + c * z - d * y)
    k[2] = 0.5 * (a * y - b * z + d * x)
    k[3] = 0.5 * (a * z + b * y - c * x)
    for j in range(3):
        k[4 + j] = u0[3 + j]
    for j in range(nq):
        k[7 + j] = u[j]
        k[13 + nq + j] = fd[6 + j]
    for j in range(6):
        k[7 + nq + j] = fd[j]
    return 0


@compiled
def rigid_body_steps(
    mi,
    mf,
    W,
    x,
    steps,
    t_ns,
    dt_ns,
    floating,
    R0f,
    r0f,
    taum,
    wrench,
    orbit,
    gravity,
    work,
    small,
    fd,
    wF0,
    wFm,
    done,
):
    """
    Advance the RK4 plant's state ``x`` by ``steps`` steps of dt_ns ns from time t_ns (in place).

    ``x``: floating [quaternion (w, x, y, z) of R0, r0, q, u0, u], fixed [q, u] (with ``R0f``,
    ``r0f`` the fixed base); ``taum`` (n_q,) the joint efforts held, ``wrench`` (6,) a base wrench
    fixed in the base CoM frame [torque; force] (the thrusters'); ``orbit``: :mod:`.plant_layout`'s
    row (its loads on every link at every stage); ``gravity`` (3,).  Scratch: ``work`` (6, len(x)),
    ``small`` (32,), ``fd`` (6 + n_q,), ``wF0`` (6,), ``wFm`` (6, n).  ``done[0]``: the steps
    completed.  Returns 0, the forward dynamics' error code, or NOT_FINITE when a step diverged
    (``x`` then holds the state before it).
    """
    N = x.shape[0]
    h = dt_ns * 1e-9
    half, sixth = 0.5 * h, h / 6.0
    k1, k2, k3, k4, xs = work[0], work[1], work[2], work[3], work[4]
    Rm = small[0:9].reshape((3, 3))
    tau0 = small[9:15]
    done[0] = 0
    for step in range(steps):
        t = (t_ns + step * dt_ns) * 1e-9
        for j in range(N):
            xs[j] = x[j]
        code = _rates(
            mi,
            mf,
            W,
            xs,
            t,
            floating,
            R0f,
            r0f,
            taum,
            wrench,
            orbit,
            gravity,
            Rm,
            tau0,
            fd,
            wF0,
            wFm,
            k1,
        )
        if code:
            return code
        for j in range(N):
            xs[j] = x[j] + half * k1[j]
        code = _rates(
            mi,
            mf,
            W,
            xs,
            t + half,
            floating,
            R0f,
            r0f,
            taum,
            wrench,
            orbit,
            gravity,
            Rm,
            tau0,
            fd,
            wF0,
            wFm,
            k2,
        )
        if code:
            return code
        for j in range(N):
            xs[j] = x[j] + half * k2[j]
        code = _rates(
            mi,
            mf,
            W,
            xs,
            t + half,
            floating,
            R0f,
            r0f,
            taum,
            wrench,
            orbit,
            gravity,
            Rm,
            tau0,
            fd,
            wF0,
            wFm,
            k3,
        )
        if code:
            return code
        for j in range(N):
            xs[j] = x[j] + h * k3[j]
        code = _rates(
            mi,
            mf,
            W,
            xs,
            t + h,
            floating,
            R0f,
            r0f,
            taum,
            wrench,
            orbit,
            gravity,
            Rm,
            tau0,
            fd,
            wF0,
            wFm,
            k4,
        )
        if code:
            return code
        finite = True
        for j in range(N):
            xs[j] = x[j] + sixth * ((k1[j] + 2.0 * (k2[j] + k3[j])) + k4[j])
            finite = finite and math.isfinite(xs[j])
        if not finite:
            return NOT_FINITE
        if floating:
            norm = _norm4(xs[0], xs[1], xs[2], xs[3])
            for j in range(4):
                xs[j] /= norm
        for j in range(N):
            x[j] = xs[j]
        done[0] = step + 1
    return 0


# --- small dense linear algebra (n x n, row-major 2-D arrays) -------------------------------
@compiled
def _cholesky(A, L, n):
    """L (lower) with L L' = A[:n, :n]; returns False when A is not positive definite."""
    for i in range(n):
        for j in range(i + 1):
            s = A[i, j]
            for k in range(j):
                s -= L[i, k] * L[j, k]
            if i == j:
                if not s > 0.0:
                    return False
                L[i, i] = math.sqrt(s)
            else:
                L[i, j] = s / L[j, j]
        for j in range(i + 1, n):
            L[i, j] = 0.0
    return True


@compiled
def _cholesky_solve(L, b, x, n):
    """Set x = (L L')^-1 b (x may be b)."""
    for i in range(n):
        s = b[i]
        for k in range(i):
            s -= L[i, k] * x[k]
        x[i] = s / L[i, i]
    for i in range(n - 1, -1, -1):
        s = x[i]
        for k in range(i + 1, n):
            s -= L[k, i] * x[k]
        x[i] = s / L[i, i]


@compiled
def _lower_inverse(L, Li, n):
    """Li = L^-1 (lower triangular)."""
    for j in range(n):
        for i in range(n):
            Li[i, j] = 0.0
        Li[j, j] = 1.0 / L[j, j]
        for i in range(j + 1, n):
            s = 0.0
            for k in range(j, i):
                s -= L[i, k] * Li[k, j]
            Li[i, j] = s / L[i, i]


@compiled
def _symmetric_eigen(A, V, lam, n):
    """
    Eigen-decompose the symmetric A[:n, :n] (destroyed): A = V diag(lam) V' (cyclic Jacobi).

    Rotations sweep the off-diagonal entries until none is left; from the fifth sweep on, an entry
    below rounding of both diagonal entries it couples is set to zero (Numerical Recipes' rule):
    5 to 10 sweeps for the plants' matrices, at most 50.
    """
    for i in range(n):
        for j in range(n):
            V[i, j] = 1.0 if i == j else 0.0
    for sweep in range(50):
        off = 0.0
        for i in range(n):
            for j in range(i + 1, n):
                off += abs(A[i, j])
        if off == 0.0:
            break
        for p in range(n - 1):
            for q in range(p + 1, n):
                apq = A[p, q]
                g = 100.0 * abs(apq)
                if (
                    sweep > 3
                    and abs(A[p, p]) + g == abs(A[p, p])
                    and (abs(A[q, q]) + g == abs(A[q, q]))
                ):
                    A[p, q] = A[q, p] = 0.0
                    continue
                if apq == 0.0:
                    continue
                theta = (A[q, q] - A[p, p]) / (2.0 * apq)
                t = (1.0 if theta >= 0.0 else -1.0) / (abs(theta) + math.sqrt(theta * theta + 1.0))
                c = 1.0 / math.sqrt(t * t + 1.0)
                s = t * c
                for k in range(n):  # A <- A J (columns p, q)
                    akp, akq = A[k, p], A[k, q]
                    A[k, p] = c * akp - s * akq
                    A[k, q] = s * akp + c * akq
                for k in range(n):  # A <- J' A (rows p, q)
                    apk, aqk = A[p, k], A[q, k]
                    A[p, k] = c * apk - s * aqk
                    A[q, k] = s * apk + c * aqk
                A[p, q] = A[q, p] = 0.0
                for k in range(n):
                    vkp, vkq = V[k, p], V[k, q]
                    V[k, p] = c * vkp - s * vkq
                    V[k, q] = s * vkp + c * vkq
    for i in range(n):
        lam[i] = A[i, i]


# --- phi functions of the exact linear step (joint_dissipation._phi1, _phi2, _decay) ----------
@compiled(inline='always')
def _phi1(x):
    """(1 - exp(-x)) / x (x >= 0)."""
    if x < 1e-4:
        return 1.0 - x / 2.0 + x * x / 6.0
    if x > 40.0:
        return 1.0 / x
    return -math.expm1(-x) / x


@compiled(inline='always')
def _phi2(x):
    """(x - 1 + exp(-x)) / x^2 (x >= 0)."""
    if x < 1e-3:
        return 0.5 - x / 6.0 + x * x / 24.0
    if x > 40.0:
        return (x - 1.0) / (x * x)
    return (x + math.expm1(-x)) / (x * x)


@compiled(inline='always')
def _decay(x):
    """exp(-x), 0 beyond 40 (kept from subnormal numbers)."""
    return 0.0 if x > 40.0 else math.exp(-x)


# --- the joints' dissipation law (joint_dissipation.JointDissipation) ------------------------
@compiled
def _joint_velocities(G, has_G, x, idx, w):
    """Set w (n_full,) = G x[idx] (x[idx] itself without G)."""
    nf = w.shape[0]
    if not has_G:
        for j in range(nf):
            w[j] = x[idx[j]]
        return
    for j in range(nf):
        s = 0.0
        for c in range(idx.shape[0]):
            s += G[j, c] * x[idx[c]]
        w[j] = s


@compiled
def _add_back(G, has_G, f, idx, out, sign):
    """out[idx] += sign G' f (f itself without G)."""
    if not has_G:
        for j in range(f.shape[0]):
            out[idx[j]] += sign * f[j]
        return
    for c in range(idx.shape[0]):
        s = 0.0
        for j in range(f.shape[0]):
            s += G[j, c] * f[j]
        out[idx[c]] += sign * s


@compiled
def _add_slopes(G, has_G, s, idx, H):
    """H[idx, idx] += diag(s) (G' diag(s) G with G)."""
    if not has_G:
        for j in range(s.shape[0]):
            H[idx[j], idx[j]] += s[j]
        return
    m = idx.shape[0]
    for a in range(m):
        for b in range(m):
            acc = 0.0
            for j in range(s.shape[0]):
                acc += G[j, a] * s[j] * G[j, b]
            H[idx[a], idx[b]] += acc


@compiled
def _law(damping, friction, velocity, w, f, s):
    """Set f = d w + F tanh(w / v) and its slope s = d + F / v sech^2(w / v), per joint."""
    for j in range(w.shape[0]):
        th = math.tanh(w[j] / velocity)
        f[j] = damping[j] * w[j] + friction[j] * th
        s[j] = damping[j] + (friction[j] / velocity) * (1.0 - th * th)


@compiled
def _potential(damping, friction, velocity, w):
    """Return sum_j d w^2 / 2 + F v log cosh(w / v) (the law's integral)."""
    acc = 0.0
    for j in range(w.shape[0]):
        y = abs(w[j] / velocity)
        log_cosh = y + math.log1p(math.exp(-2.0 * y)) - math.log(2.0)
        acc += 0.5 * damping[j] * w[j] * w[j] + friction[j] * velocity * log_cosh
    return acc


@compiled
def _gradient(A, r, u0, x, idx, G, has_G, damping, friction, velocity, w, f, s, g):
    """Set g = A (x - u0) - r + P' f(P x), w, f, s at x; return max |g|."""
    N = x.shape[0]
    for i in range(N):
        acc = 0.0
        for j in range(N):
            acc += A[i, j] * (x[j] - u0[j])
        g[i] = acc - r[i]
    _joint_velocities(G, has_G, x, idx, w)
    _law(damping, friction, velocity, w, f, s)
    _add_back(G, has_G, f, idx, g, 1.0)
    size = 0.0
    for i in range(N):
        size = max(size, abs(g[i]))
    return size


@compiled
def _objective(A, r, u0, x, idx, G, has_G, damping, friction, velocity, w):
    """Return (x - u0)' A (x - u0) / 2 - r' x + the law's potential at x."""
    N = x.shape[0]
    quad = 0.0
    lin = 0.0
    for i in range(N):
        acc = 0.0
        for j in range(N):
            acc += A[i, j] * (x[j] - u0[j])
        quad += (x[i] - u0[i]) * acc
        lin += r[i] * x[i]
    _joint_velocities(G, has_G, x, idx, w)
    return 0.5 * quad - lin + _potential(damping, friction, velocity, w)


@compiled
def dissipation_step(
    M,
    r,
    u0,
    h,
    idx,
    damping,
    friction,
    G,
    has_G,
    velocity,
    has_friction,
    work,
    vectors,
    u1,
    umean,
):
    """
    Take the joints' implicit dissipation step (JointDissipation.step): u1, umean.

    ``M`` (N, N) the inertia of the plant's velocity vector, ``r`` (N,) the other generalized
    forces at the step's start, ``u0`` (N,) the velocities then, ``h`` the step, ``idx`` (n,) the
    dissipating coordinates in the velocity vector; the law per full joint ``damping``,
    ``friction`` (n_full,), ``velocity`` v, joint velocities = ``G`` (n_full, n) x[idx] when
    ``has_G``.  Scratch ``work`` (6, N, N), ``vectors`` (16, max(N, n_full)).  Writes ``u1``
    (N,) the end velocities and ``umean`` (N,) their mean over the step; returns the Newton
    iterations taken, or -SINGULAR when M is not positive definite.
    """
    N = u0.shape[0]
    A, H, L, Li, B, V = work[0], work[1], work[2], work[3], work[4], work[5]
    u, grad, step, trial = vectors[0, :N], vectors[1, :N], vectors[2, :N], vectors[3, :N]
    tgrad, ustar, forcing, tmp = vectors[4, :N], vectors[5, :N], vectors[6, :N], vectors[7, :N]
    lam, z0, beta = vectors[8, :N], vectors[9, :N], vectors[10, :N]
    nf = damping.shape[0]  # the law's joints (full coordinates)
    w, f, s = vectors[11, :nf], vectors[12, :nf], vectors[13, :nf]
    for i in range(N):
        for j in range(N):
            A[i, j] = M[i, j] / h
        ustar[i] = u0[i]
    iterations = 0
    if has_friction:
        rmax = 0.0
        for i in range(N):
            rmax = max(rmax, abs(r[i]))
        fmax = 0.0
        for j in range(friction.shape[0]):
            fmax = max(fmax, friction[j])
        tolerance = 1e-13 * (1.0 + rmax + fmax)
        for i in range(N):
            u[i] = u0[i]
        size = _gradient(A, r, u0, u, idx, G, has_G, damping, friction, velocity, w, f, s, grad)
        value, have_value = 0.0, False
        for _ in range(MAX_ITERATIONS):
            if size <= tolerance:
                break
            iterations += 1
            for i in range(N):  # H = A + the law's slopes at u (s is at u: the last gradient's)
                for j in range(N):
                    H[i, j] = A[i, j]
            _add_slopes(G, has_G, s, idx, H)
            if not _cholesky(H, L, N):
                return -SINGULAR
            for i in range(N):
                tmp[i] = -grad[i]
            _cholesky_solve(L, tmp, step, N)
            slope = 0.0
            for i in range(N):
                slope += grad[i] * step[i]
            t = 1.0
            while True:
                for i in range(N):
                    trial[i] = u[i] + t * step[i]
                tsize = _gradient(
                    A, r, u0, trial, idx, G, has_G, damping, friction, velocity, w, f, s, tgrad
                )
                # a halved gradient is progress enough; else Armijo on the convex function
                if tsize <= 0.5 * size or t < 1e-10:
                    have_trial = False
                    break
                if not have_value:
                    value = _objective(A, r, u0, u, idx, G, has_G, damping, friction, velocity, w)
                    have_value = True
                trial_value = _objective(
                    A, r, u0, trial, idx, G, has_G, damping, friction, velocity, w
                )
                have_trial = True
                if trial_value <= value + 1e-4 * t * slope:
                    break
                t *= 0.5
            for i in range(N):
                u[i] = trial[i]
                grad[i] = tgrad[i]
            size = tsize
            have_value = have_trial
            if have_trial:
                value = trial_value
            # s is the law's slope at the new u (its gradient was computed last)
        for i in range(N):
            ustar[i] = u[i]
    # the law linearized at u*: S = P' diag(slopes) P, forcing = r - P' f(u*) + S u*
    _joint_velocities(G, has_G, ustar, idx, w)
    _law(damping, friction, velocity, w, f, s)
    for i in range(N):
        for j in range(N):
            B[i, j] = 0.0
    _add_slopes(G, has_G, s, idx, B)
    for i in range(N):
        acc = 0.0
        for j in range(N):
            acc += B[i, j] * ustar[j]
        forcing[i] = r[i] + acc
    _add_back(G, has_G, f, idx, forcing, -1.0)
    if not _cholesky(M, L, N):
        return -SINGULAR
    _lower_inverse(L, Li, N)
    for i in range(N):  # H = Li S Li' (symmetric)
        for j in range(N):
            acc = 0.0
            for k in range(
                j + 1
            ):  # Li' is upper triangular: (S Li')[i, j] = S[i, :j+1] Li[j, :j+1]
                acc += B[i, k] * Li[j, k]
            A[i, j] = acc
    for i in range(N):
        for j in range(N):
            acc = 0.0
            for k in range(i + 1):
                acc += Li[i, k] * A[k, j]
            H[i, j] = acc
    _symmetric_eigen(H, V, lam, N)
    for i in range(N):  # tmp = L' u0, then z0 = V' tmp; beta = V' (Li forcing)
        acc = 0.0
        for k in range(i, N):
            acc += L[k, i] * u0[k]
        tmp[i] = acc
    for i in range(N):
        acc = 0.0
        for k in range(i + 1):
            acc += Li[i, k] * forcing[k]
        trial[i] = acc
    for i in range(N):
        a = 0.0
        b = 0.0
        for k in range(N):
            a += V[k, i] * tmp[k]
            b += V[k, i] * trial[k]
        z0[i], beta[i] = a, b
    for i in range(N):  # z1 (in tmp), zm (in trial)
        x = max(lam[i], 0.0) * h
        p1 = _phi1(x)
        tmp[i] = z0[i] * _decay(x) + beta[i] * (h * p1)
        trial[i] = z0[i] * p1 + beta[i] * (h * _phi2(x))
    for i in range(N):  # back = Li' V: u1 = Li' (V z1)
        a = 0.0
        b = 0.0
        for k in range(N):
            a += V[i, k] * tmp[k]
            b += V[i, k] * trial[k]
        step[i], tgrad[i] = a, b
    for i in range(N):
        a = 0.0
        b = 0.0
        for k in range(i, N):
            a += Li[k, i] * step[k]
            b += Li[k, i] * tgrad[k]
        u1[i], umean[i] = a, b
    return iterations


# --- the base's actuators over one step (sim.actuation.BaseActuation) -------------------------
@compiled
def base_actuators_step(
    t,
    dt,
    velocities,
    wheel_index,
    wheels,
    wheel_commands,
    wheel_torques,
    wheel_counts,
    thrusters,
    thruster_commands,
    opened_at,
    thruster_forces,
    firings,
    impulse,
    ctrl,
    ctrl_wheels,
    ctrl_thrusters,
):
    """
    Decide what the wheel motors and thrusters apply over the step from time ``t`` (numpy rules).

    Wheels: ``wheels`` (4, n_w) rows max_torque, max_speed, rotor inertia, friction; the speeds
    are ``velocities[wheel_index]``; writes ``wheel_torques`` (the command clamped to the torque
    limit, then to what keeps the speed after the step within the limit) and counts each clamp in
    ``wheel_counts`` (2, n_w) (torque-limited, speed-limited).  Thrusters: ``thrusters`` (3, n_t)
    rows max_force, min_on_time, throttled (1.0 / 0.0); ``opened_at`` (n_t,) the valves' opening
    times (NaN: closed); writes ``thruster_forces`` and adds to ``firings`` and ``impulse``.  With
    ``ctrl_wheels`` / ``ctrl_thrusters`` (MuJoCo's actuator ids, or empty) the results also go to
    ``ctrl``.  Returns 0.
    """
    for i in range(wheel_index.shape[0]):
        cmd = wheel_commands[i]
        tmax, smax = wheels[0, i], wheels[1, i]
        tau = min(max(cmd, -tmax), tmax)
        if tau != cmd:
            wheel_counts[0, i] += 1
        w = velocities[wheel_index[i]]
        limited = tau
        if math.isfinite(smax):
            room = wheels[2, i] / dt  # J (w' - w) = (tau - b w) dt keeps |w'| <= max_speed
            hi = (smax - w) * room + wheels[3, i] * w
            lo = (-smax - w) * room + wheels[3, i] * w
            limited = min(max(tau, min(lo, 0.0)), max(hi, 0.0))
        if limited != tau:
            wheel_counts[1, i] += 1
        wheel_torques[i] = limited
    for j in range(thruster_commands.shape[0]):
        cmd = thruster_commands[j]
        fmax = thrusters[0, j]
        opened = not math.isnan(opened_at[j])
        want = cmd > 0.0
        held = opened and not want and (t - opened_at[j] < thrusters[1, j] - 1e-10)
        open_now = want or held
        if open_now and not opened:
            opened_at[j] = t
        if not open_now:
            opened_at[j] = math.nan
        if thrusters[2, j] != 0.0:
            force = min(max(cmd, 0.0), fmax)
        else:
            force = fmax if open_now else 0.0
        if force > 0.0 and not thruster_forces[j] > 0.0:
            firings[j] += 1
        thruster_forces[j] = force
        impulse[j] += force * dt
    for i in range(ctrl_wheels.shape[0]):
        ctrl[ctrl_wheels[i]] = wheel_torques[i]
    for j in range(ctrl_thrusters.shape[0]):
        ctrl[ctrl_thrusters[j]] = thruster_forces[j]
    return 0


# --- readouts ------------------------------------------------------------------------------
@compiled
def lvlh_state(orbit, t, R, p, v, w, R_out, p_out, v_out, w_out):
    """
    Set a body frame's state in LVLH from its state in N at time t (CircularOrbit.to_lvlh).

    ``R`` (3, 3) body -> N, ``p`` (3,) origin in N, ``v``, ``w`` (3,) the origin's velocity and the
    angular velocity relative to N in the body frame.  Writes R body -> LVLH (C' R, C = Rz(n t)),
    p in LVLH, and v, w relative to LVLH in the body frame (v - R' (W x p), w - R' W, W = (0, 0,
    n)).  Returns 0.
    """
    n = orbit[ORBIT_N]
    c, s = math.cos(n * t), math.sin(n * t)
    for k in range(3):
        R_out[0, k] = c * R[0, k] + s * R[1, k]
        R_out[1, k] = c * R[1, k] - s * R[0, k]
        R_out[2, k] = R[2, k]
    p_out[0] = c * p[0] + s * p[1]
    p_out[1] = c * p[1] - s * p[0]
    p_out[2] = p[2]
    x0, x1 = -n * p[1], n * p[0]  # W x p (its third component is 0)
    for k in range(3):
        v_out[k] = v[k] - (R[0, k] * x0 + R[1, k] * x1)
        w_out[k] = w[k] - R[2, k] * n
    return 0


@compiled
def ros_quaternion(R, out):
    """
    Set ``out`` (4,) = the ROS quaternion (x, y, z, w), w >= 0, of the rotation R (body -> world).

    core.attitude.quaternion_to_ros's arithmetic (Shepperd's choice of the largest component, on
    D = R'), without its checks: the same numbers.  Returns 0.
    """
    d00, d11, d22 = R[0, 0], R[1, 1], R[2, 2]
    d01, d10, d02, d20, d12, d21 = R[1, 0], R[0, 1], R[2, 0], R[0, 2], R[2, 1], R[1, 2]
    tr = d00 + d11 + d22
    qs0 = (1 + 2 * d00 - tr) / 4
    qs1 = (1 + 2 * d11 - tr) / 4
    qs2 = (1 + 2 * d22 - tr) / 4
    qs3 = (1 + tr) / 4
    k, best = 0, qs0
    if qs1 > best:
        k, best = 1, qs1
    if qs2 > best:
        k, best = 2, qs2
    if qs3 > best:
        k, best = 3, qs3
    ql = math.sqrt(best)
    if k == 0:
        x, y, z, w = ql, (d01 + d10) / (4 * ql), (d20 + d02) / (4 * ql), (d12 - d21) / (4 * ql)
    elif k == 1:
        x, y, z, w = (d01 + d10) / (4 * ql), ql, (d12 + d21) / (4 * ql), (d20 - d02) / (4 * ql)
    elif k == 2:
        x, y, z, w = (d20 + d02) / (4 * ql), (d12 + d21) / (4 * ql), ql, (d01 - d10) / (4 * ql)
    else:
        x, y, z, w = (d12 - d21) / (4 * ql), (d20 - d02) / (4 * ql), (d01 - d10) / (4 * ql), ql
    if w < 0:
        x, y, z, w = -x, -y, -z, -w
    out[0], out[1], out[2], out[3] = x, y, z, w
    return 0


@compiled
def tidal_acceleration(orbit, t, r, out):
    """Set ``out`` (3,) = the orbit's tidal acceleration at the point ``r`` (3,) of N at time t."""
    a = orbit[ORBIT_N] * t
    out[0], out[1], out[2] = _tidal(orbit, math.cos(a), math.sin(a), r[0], r[1], r[2])
    return 0


# --- the MuJoCo plant's readouts and inputs (sim.plant) -------------------------------------
@compiled
def mujoco_base_state(qpos, qvel, orbit, t, has_orbit, R, p, v, w):
    """
    Set the floating base link's pose and twist from MuJoCo's free joint (base_link_state).

    ``qpos`` [p; quaternion w, x, y, z] and ``qvel`` [velocity of b's origin, world; angular
    velocity, b] (the free joint's first seven and six): R (3, 3) b -> world (mju_quat2Mat's
    formula), p (3,), v = R' qvel[0:3], w (3,) in b; with an orbit (``has_orbit``, ``orbit`` its
    row at time ``t``) in LVLH, the twist relative to it (lvlh_state).  Returns 0.
    """
    a, b, c, d = qpos[3], qpos[4], qpos[5], qpos[6]
    if a == 1.0 and b == 0.0 and c == 0.0 and d == 0.0:
        r00, r01, r02, r10, r11, r12, r20, r21, r22 = 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0
    else:
        aa, ab, ac, ad = a * a, a * b, a * c, a * d
        bb, bc, bd = b * b, b * c, b * d
        cc, cd, dd = c * c, c * d, d * d
        r00 = aa + bb - cc - dd
        r11 = aa - bb + cc - dd
        r22 = aa - bb - cc + dd
        r01 = 2.0 * (bc - ad)
        r02 = 2.0 * (bd + ac)
        r10 = 2.0 * (bc + ad)
        r12 = 2.0 * (cd - ab)
        r20 = 2.0 * (bd - ac)
        r21 = 2.0 * (cd + ab)
    x, y, z = qvel[0], qvel[1], qvel[2]
    v0 = r00 * x + r10 * y + r20 * z
    v1 = r01 * x + r11 * y + r21 * z
    v2 = r02 * x + r12 * y + r22 * z
    p0, p1, p2 = qpos[0], qpos[1], qpos[2]
    w0, w1, w2 = qvel[3], qvel[4], qvel[5]
    if has_orbit:  # lvlh_state, on the values above
        n = orbit[ORBIT_N]
        co, si = math.cos(n * t), math.sin(n * t)
        R[0, 0], R[0, 1], R[0, 2] = co * r00 + si * r10, co * r01 + si * r11, co * r02 + si * r12
        R[1, 0], R[1, 1], R[1, 2] = co * r10 - si * r00, co * r11 - si * r01, co * r12 - si * r02
        R[2, 0], R[2, 1], R[2, 2] = r20, r21, r22
        p[0], p[1], p[2] = co * p0 + si * p1, co * p1 - si * p0, p2
        x0, x1 = -n * p1, n * p0
        v[0] = v0 - (r00 * x0 + r10 * x1)
        v[1] = v1 - (r01 * x0 + r11 * x1)
        v[2] = v2 - (r02 * x0 + r12 * x1)
        w[0], w[1], w[2] = w0 - r20 * n, w1 - r21 * n, w2 - r22 * n
    else:
        R[0, 0], R[0, 1], R[0, 2] = r00, r01, r02
        R[1, 0], R[1, 1], R[1, 2] = r10, r11, r12
        R[2, 0], R[2, 1], R[2, 2] = r20, r21, r22
        p[0], p[1], p[2] = p0, p1, p2
        v[0], v[1], v[2] = v0, v1, v2
        w[0], w[1], w[2] = w0, w1, w2
    return 0


@compiled
def hold_efforts(values, index, held, efforts, qfrc, vadr):
    """
    Hold a command's ``values`` (m,): held[index] = values, then efforts = held, qfrc[vadr] = held.

    EffortCommand.accept then MujocoPlant.set_efforts (``held``: the command's efforts of every
    plant joint, ``efforts`` the plant's, ``qfrc`` MuJoCo's qfrc_applied at the joints' dof
    ``vadr``).  Returns 0; -1 (nothing changed) when a value is not finite or the lengths differ.
    """
    m = index.shape[0]
    if values.shape[0] != m:
        return -1
    for k in range(m):
        if not math.isfinite(values[k]):
            return -1
    for k in range(m):
        held[index[k]] = values[k]
    for j in range(held.shape[0]):
        efforts[j] = held[j]
        qfrc[vadr[j]] = held[j]
    return 0


@compiled
def rigid_base_state(R0, r0, u0, R_cb, p_bc, floating, orbit, t, has_orbit, R, p, v, w):
    """
    Set the base link's pose and twist from SPART's base state (RigidBodyPlant.base_link_state).

    ``R0`` (3, 3), ``r0`` (3,), ``u0`` (6,) [angular velocity; CoM velocity] of the base CoM
    frame c in the world; ``R_cb`` (3, 3) = R_bc' and ``p_bc`` (3,): the CoM frame in b.  R = R0
    R_cb, p = r0 - R p_bc; floating: w = R_cb' u0[0:3], v = R' (u0[3:6] - (R w) x (R p_bc)), else
    zero; with an orbit (``has_orbit``) in LVLH, the twist relative to it (lvlh_state).  Returns 0.
    """
    for i in range(3):
        for k in range(3):
            R[i, k] = R0[i, 0] * R_cb[0, k] + R0[i, 1] * R_cb[1, k] + R0[i, 2] * R_cb[2, k]
    rho0 = R[0, 0] * p_bc[0] + R[0, 1] * p_bc[1] + R[0, 2] * p_bc[2]
    rho1 = R[1, 0] * p_bc[0] + R[1, 1] * p_bc[1] + R[1, 2] * p_bc[2]
    rho2 = R[2, 0] * p_bc[0] + R[2, 1] * p_bc[1] + R[2, 2] * p_bc[2]
    p[0], p[1], p[2] = r0[0] - rho0, r0[1] - rho1, r0[2] - rho2
    if floating:
        for k in range(3):  # w = R_bc u0[0:3] (R_bc = R_cb')
            w[k] = R_cb[0, k] * u0[0] + R_cb[1, k] * u0[1] + R_cb[2, k] * u0[2]
        a0 = R[0, 0] * w[0] + R[0, 1] * w[1] + R[0, 2] * w[2]  # R w
        a1 = R[1, 0] * w[0] + R[1, 1] * w[1] + R[1, 2] * w[2]
        a2 = R[2, 0] * w[0] + R[2, 1] * w[1] + R[2, 2] * w[2]
        e0 = u0[3] - (a1 * rho2 - a2 * rho1)
        e1 = u0[4] - (a2 * rho0 - a0 * rho2)
        e2 = u0[5] - (a0 * rho1 - a1 * rho0)
        for k in range(3):
            v[k] = R[0, k] * e0 + R[1, k] * e1 + R[2, k] * e2
    else:
        v[0] = v[1] = v[2] = 0.0
        w[0] = w[1] = w[2] = 0.0
    if has_orbit:  # lvlh_state in place: column by column, the N-frame values read first
        n = orbit[ORBIT_N]
        co, si = math.cos(n * t), math.sin(n * t)
        x0, x1 = -n * p[1], n * p[0]
        for k in range(3):
            r0k, r1k, r2k = R[0, k], R[1, k], R[2, k]
            v[k] = v[k] - (r0k * x0 + r1k * x1)
            w[k] = w[k] - r2k * n
            R[0, k] = co * r0k + si * r1k
            R[1, k] = co * r1k - si * r0k
        q0, q1 = p[0], p[1]
        p[0], p[1] = co * q0 + si * q1, co * q1 - si * q0
    return 0
