"""
Compiled O(n) rigid-body kernels (numba), in SPART's conventions at the interface.

Inside, every spatial quantity is a Plucker vector in ONE frame: axes of the
inertial frame, origin O at the base CoM at the current instant (r0).  A
common frame makes the recursions transform-free (Featherstone's ground-frame
formulation: velocities and forces add along the tree), and taking O at the
base rather than the inertial origin keeps full precision for a spacecraft
millions of metres from the origin.

Spatial motion vectors are [omega; v_O] (v_O: velocity of the body point at O),
force vectors [n_O; f].  The constant model is ``mi`` (the tree, ints) and ``mf``
(one row of masses, inertias and frames per body), the caller's workspace ``W``
(row 0 = base, row i = link i, row n+1 = scratch): column offsets in
:mod:`spart_ros.native.layout`.  Kernels write only the workspace and the output
arrays given by the caller (one set per algorithm, so that one algorithm never
overwrites another's results); the model is only read.  No kernel allocates.

The entry kernels check their inputs where it is nearly free (shapes, finite
values, R0 a rotation) and their outputs (finite: an overflow is reported, not
returned); they return 0 or an error code (BAD_SHAPE, NOT_FINITE, NOT_ROTATION
+ the argument's index in ARGUMENT_NAMES; SINGULAR; OVERFLOW), which the caller
turns into a message.
"""

from functools import partial

from numba import njit
import numpy as np

from .layout import (  # noqa: F401
    A,
    ARGUMENT_NAMES,
    ARMATURE,
    AXIS,
    BAD_SHAPE,
    C,
    DAMPING,
    DINV,
    E,
    F,
    FIXED,
    FRICTION,
    FRICTION_VELOCITY,
    G,
    IBODY,
    IC,
    IW,
    MASS,
    MF_COLS,
    NOT_FINITE,
    NOT_ROTATION,
    OVERFLOW,
    PA,
    PRISMATIC,
    R,
    REVOLUTE,
    RJ,
    ROTATION_TOL,
    S,
    SINGULAR,
    TJP,
    TJR,
    TJR_IDENTITY,
    TLP,
    TLR,
    TLR_IDENTITY,
    U,
    UU,
    V,
    WS_COLS,
    X,
    XJ,
)

# Kernels never allocate or return arrays, so numba's runtime (NRT) buys nothing and costs a
# lot: it wraps every array argument in a fresh MemInfo and adds atomic reference counts to
# every view.  Without it a 3-DoF rnea call from Python dropped from ~2.6 us to ~1.7 us.  The
# extension module built from this file (spart_ros.native.build) has no runtime at all.  Not
# cached on disk: this file is compiled ahead of time (build.py); the numba dispatchers here
# serve that build and the benchmarks' @njit loops.
compiled = partial(njit, _nrt=False)


# --- small algebra on 1-D views (row-major 3x3) ---------------------------------------
@compiled(inline='always')
def _mat3_mul(Am, Bm, out):
    for r in range(3):
        for c in range(3):
            out[3 * r + c] = (
                Am[3 * r] * Bm[c] + Am[3 * r + 1] * Bm[3 + c] + Am[3 * r + 2] * Bm[6 + c]
            )


@compiled(inline='always')
def _mat3_vec(Am, v, out):
    for r in range(3):
        out[r] = Am[3 * r] * v[0] + Am[3 * r + 1] * v[1] + Am[3 * r + 2] * v[2]


@compiled(inline='always')
def _cross(a, b, out):
    x = a[1] * b[2] - a[2] * b[1]
    y = a[2] * b[0] - a[0] * b[2]
    z = a[0] * b[1] - a[1] * b[0]
    out[0], out[1], out[2] = x, y, z


@compiled(inline='always')
def _dot6(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@compiled
def _inertia_times(mf, W, i, vel, out):
    """``out`` = I_i^O vel: spatial momentum of body i moving with spatial velocity vel."""
    m = mf[i, MASS]
    x = W[i, X : X + 3]
    Iw = W[i, IW : IW + 9]
    # velocity of the CoM: v_O + w x x
    vc0 = vel[3] + vel[1] * x[2] - vel[2] * x[1]
    vc1 = vel[4] + vel[2] * x[0] - vel[0] * x[2]
    vc2 = vel[5] + vel[0] * x[1] - vel[1] * x[0]
    p0, p1, p2 = m * vc0, m * vc1, m * vc2
    out[0] = Iw[0] * vel[0] + Iw[1] * vel[1] + Iw[2] * vel[2] + x[1] * p2 - x[2] * p1
    out[1] = Iw[3] * vel[0] + Iw[4] * vel[1] + Iw[5] * vel[2] + x[2] * p0 - x[0] * p2
    out[2] = Iw[6] * vel[0] + Iw[7] * vel[1] + Iw[8] * vel[2] + x[0] * p1 - x[1] * p0
    out[3], out[4], out[5] = p0, p1, p2


@compiled
def _spatial_inertia(mf, W, i, out):
    """``out`` (36, row-major 6x6) = I_i^O = [[Ic + m[x]'[x], m[x]], [m[x]', m 1]]."""
    m = mf[i, MASS]
    x0, x1, x2 = W[i, X], W[i, X + 1], W[i, X + 2]
    Iw = W[i, IW : IW + 9]
    # m [x]'[x] = m (|x|^2 1 - x x')
    xx = x0 * x0 + x1 * x1 + x2 * x2
    xs = (x0, x1, x2)
    for r in range(3):
        for c in range(3):
            out[6 * r + c] = Iw[3 * r + c] + m * ((xx if r == c else 0.0) - xs[r] * xs[c])
            out[6 * (r + 3) + c + 3] = m if r == c else 0.0
    # m [x]x in the upper right, its transpose lower left
    out[3], out[4], out[5] = 0.0, -m * x2, m * x1
    out[9], out[10], out[11] = m * x2, 0.0, -m * x0
    out[15], out[16], out[17] = -m * x1, m * x0, 0.0
    for r in range(3):
        for c in range(3):
            out[6 * (r + 3) + c] = out[6 * c + r + 3]


@compiled(inline='always')
def _mat6_vec(M, v, out):
    for r in range(6):
        acc = 0.0
        for c in range(6):
            acc += M[6 * r + c] * v[c]
        out[r] = acc


@compiled(inline='always')
def _crm(vel, s, out):
    """``out`` = vel x_m s (spatial motion cross product): [w x a; v x a + w x b]."""
    w0, w1, w2, v0, v1, v2 = vel[0], vel[1], vel[2], vel[3], vel[4], vel[5]
    a0, a1, a2, b0, b1, b2 = s[0], s[1], s[2], s[3], s[4], s[5]
    out[0] = w1 * a2 - w2 * a1
    out[1] = w2 * a0 - w0 * a2
    out[2] = w0 * a1 - w1 * a0
    out[3] = v1 * a2 - v2 * a1 + w1 * b2 - w2 * b1
    out[4] = v2 * a0 - v0 * a2 + w2 * b0 - w0 * b2
    out[5] = v0 * a1 - v1 * a0 + w0 * b1 - w1 * b0


@compiled(inline='always')
def _crf_add(vel, h, out):
    """``out`` += vel x_f h (spatial force cross product): [w x n + v x f; w x f]."""
    w0, w1, w2, v0, v1, v2 = vel[0], vel[1], vel[2], vel[3], vel[4], vel[5]
    n0, n1, n2, f0, f1, f2 = h[0], h[1], h[2], h[3], h[4], h[5]
    out[0] += w1 * n2 - w2 * n1 + v1 * f2 - v2 * f1
    out[1] += w2 * n0 - w0 * n2 + v2 * f0 - v0 * f2
    out[2] += w0 * n1 - w1 * n0 + v0 * f1 - v1 * f0
    out[3] += w1 * f2 - w2 * f1
    out[4] += w2 * f0 - w0 * f2
    out[5] += w0 * f1 - w1 * f0


# --- input and output checks ------------------------------------------------------------
@compiled(fastmath={'reassoc'})  # reassociation lets the sum vectorize; NaN/inf semantics kept
def _finite(a):
    """
    Return True if every entry of a 1-D to 4-D array is finite.

    x * 0 is 0 for finite x, NaN otherwise.
    """
    acc = 0.0
    if a.ndim == 1:
        for k in range(a.shape[0]):
            acc += a[k] * 0.0
    elif a.ndim == 2:
        for r in range(a.shape[0]):
            for c in range(a.shape[1]):
                acc += a[r, c] * 0.0
    elif a.ndim == 3:
        for r in range(a.shape[0]):
            for c in range(a.shape[1]):
                for k in range(a.shape[2]):
                    acc += a[r, c, k] * 0.0
    else:
        for r in range(a.shape[0]):
            for c in range(a.shape[1]):
                for k in range(a.shape[2]):
                    for m in range(a.shape[3]):
                        acc += a[r, c, k, m] * 0.0
    return acc == 0.0


@compiled
def _c_contiguous(a):
    """
    Numpy's C-contiguity of a float64 array from its shape and strides.

    Axes of length 1 do not count; an empty array is contiguous.
    """
    step = 8
    for k in range(a.ndim - 1, -1, -1):
        d = a.shape[k]
        if d == 0:
            return True
        if d != 1:
            if a.strides[k] != step:
                return False
            step *= d
    return True


@compiled(inline='always')
def _is_rotation(a, b, c, d, e, f, g, h, i):
    """
    Return True if [[a, b, c], [d, e, f], [g, h, i]] is a rotation within ROTATION_TOL (see above).

    False for NaN or infinite entries too (every comparison with NaN fails).
    """
    # the six distinct entries of R'R - I
    if not (
        abs(a * a + d * d + g * g - 1.0) <= ROTATION_TOL
        and abs(b * b + e * e + h * h - 1.0) <= ROTATION_TOL
        and abs(c * c + f * f + i * i - 1.0) <= ROTATION_TOL
        and abs(a * b + d * e + g * h) <= ROTATION_TOL
        and abs(a * c + d * f + g * i) <= ROTATION_TOL
        and abs(b * c + e * f + h * i) <= ROTATION_TOL
    ):
        return False
    return a * (e * i - f * h) - b * (d * i - f * g) + c * (d * h - e * g) > 0.0


@compiled
def check_vector(a, length, code):
    if a.shape[0] != length:
        return BAD_SHAPE + code
    if not _finite(a):
        return NOT_FINITE + code
    return 0


@compiled
def check_pose(mi, R0, r0, qm):
    """0, or BAD_SHAPE/NOT_ROTATION + argument index (NOT_ROTATION covers NaN in R0 too)."""
    if R0.shape[0] != 3 or R0.shape[1] != 3:
        return BAD_SHAPE + 1
    if not _is_rotation(
        R0[0, 0], R0[0, 1], R0[0, 2], R0[1, 0], R0[1, 1], R0[1, 2], R0[2, 0], R0[2, 1], R0[2, 2]
    ):
        return NOT_ROTATION + 1
    code = check_vector(r0, 3, 2)
    if code == 0:
        code = check_vector(qm, mi[1], 3)
    return code


@compiled
def check_state(mi, R0, r0, qm, u0, um):
    code = check_pose(mi, R0, r0, qm)
    if code == 0:
        code = check_vector(u0, 6, 4)
    if code == 0:
        code = check_vector(um, mi[1], 5)
    return code


@compiled
def check_loads(mi, wF0, wFm, gravity):
    """Wrenches (both arrays, or both None: none) and gravity (3,)."""
    n = mi[0]
    if wF0 is not None:
        if wF0.shape[0] != 6:
            return BAD_SHAPE + 8
        if wFm.shape[0] != 6 or wFm.shape[1] != n:
            return BAD_SHAPE + 9
        if not _finite(wF0):
            return NOT_FINITE + 8
        if not _finite(wFm):
            return NOT_FINITE + 9
    if gravity.shape[0] != 3:
        return BAD_SHAPE + 10
    if not _finite(gravity):
        return NOT_FINITE + 10
    return 0


# Checks called from Python by spart_ros.core.checks (every public function's entry checks): a
# float64 array of any layout; True / -1 only when it is also C-contiguous (the checks return
# C-ordered arrays, so another layout is copied by the caller, then checked again).


@compiled
def finite_c(a):
    """
    Return True if the float64 array ``a`` is C-contiguous and every entry finite.

    ``a``: 1-D to 4-D.
    """
    return _c_contiguous(a) and _finite(a)


@compiled
def first_non_rotation(R):
    """
    For a C-contiguous R (3, 3), or R (3, 3, n).

    -1 if R, or every R[:, :, k], is a rotation within ROTATION_TOL; else the first k that is not
    (0 for a 2-D R).  -2 if R is not C-contiguous (nothing checked). The shape must already be
    checked.
    """
    if not _c_contiguous(R):
        return -2
    if R.ndim == 2:
        return (
            -1
            if _is_rotation(
                R[0, 0], R[0, 1], R[0, 2], R[1, 0], R[1, 1], R[1, 2], R[2, 0], R[2, 1], R[2, 2]
            )
            else 0
        )
    for k in range(R.shape[2]):
        if not _is_rotation(
            R[0, 0, k],
            R[0, 1, k],
            R[0, 2, k],
            R[1, 0, k],
            R[1, 1, k],
            R[1, 2, k],
            R[2, 0, k],
            R[2, 1, k],
            R[2, 2, k],
        ):
            return k
    return -1


# --- passes ---------------------------------------------------------------------------
@compiled
def forward_kinematics(mi, mf, W, R0, r0, qm, with_inertia=True):
    """Link frames, CoM positions relative to O, world inertias, joint motion subspaces."""
    n = mi[0]
    for r in range(3):
        for c in range(3):
            W[0, R + 3 * r + c] = R0[r, c]
        W[0, X + r] = 0.0
        W[0, E + r] = 0.0
    for k in range(6):
        W[0, S + k] = 0.0
    scratch = W[n + 1]
    for i in range(n + 1):
        if i > 0:
            p = mi[2 + 3 * (i - 1)]
            jt = mi[3 + 3 * (i - 1)]
            qi = mi[4 + 3 * (i - 1)]
            RJi = W[i, RJ : RJ + 9]
            Rp = W[p, R : R + 9]
            if mf[i, TJR_IDENTITY] != 0.0:
                for k in range(9):
                    RJi[k] = Rp[k]
            else:
                _mat3_mul(Rp, mf[i, TJR : TJR + 9], RJi)
            t0, t1, t2 = mf[i, TJP], mf[i, TJP + 1], mf[i, TJP + 2]
            xj0 = Rp[0] * t0 + Rp[1] * t1 + Rp[2] * t2 + W[p, X]
            xj1 = Rp[3] * t0 + Rp[4] * t1 + Rp[5] * t2 + W[p, X + 1]
            xj2 = Rp[6] * t0 + Rp[7] * t1 + Rp[8] * t2 + W[p, X + 2]
            W[i, XJ], W[i, XJ + 1], W[i, XJ + 2] = xj0, xj1, xj2
            k0, k1, k2 = mf[i, AXIS], mf[i, AXIS + 1], mf[i, AXIS + 2]
            e0 = RJi[0] * k0 + RJi[1] * k1 + RJi[2] * k2
            e1 = RJi[3] * k0 + RJi[4] * k1 + RJi[5] * k2
            e2 = RJi[6] * k0 + RJi[7] * k1 + RJi[8] * k2
            W[i, E], W[i, E + 1], W[i, E + 2] = e0, e1, e2
            # RJ Rq, Rq = c 1 + s [k]x + (1 - c) k k' (Rodrigues): row r of RJ [k]x is RJ[r] x k,
            # and RJ k is the joint axis in the world (e); straight into R when the link's frame
            # is the joint's (TLR identity).  Scalars in registers, not the scratch row: 15 %.
            RJq = W[i, R : R + 9] if mf[i, TLR_IDENTITY] != 0.0 else scratch[9:18]
            if jt == REVOLUTE:
                q = qm[qi]
                cq, sq = np.cos(q), np.sin(q)
                t = 1.0 - cq
                te = (t * e0, t * e1, t * e2)
                for r in range(3):
                    a0, a1, a2 = RJi[3 * r], RJi[3 * r + 1], RJi[3 * r + 2]
                    RJq[3 * r] = cq * a0 + sq * (a1 * k2 - a2 * k1) + te[r] * k0
                    RJq[3 * r + 1] = cq * a1 + sq * (a2 * k0 - a0 * k2) + te[r] * k1
                    RJq[3 * r + 2] = cq * a2 + sq * (a0 * k1 - a1 * k0) + te[r] * k2
            else:  # fixed, prismatic: no rotation
                for k in range(9):
                    RJq[k] = RJi[k]
            if mf[i, TLR_IDENTITY] == 0.0:
                _mat3_mul(RJq, mf[i, TLR : TLR + 9], W[i, R : R + 9])
            # CoM: joint origin + RJ (axis q if prismatic) + RJ Rq TLp
            l0, l1, l2 = mf[i, TLP], mf[i, TLP + 1], mf[i, TLP + 2]
            g0 = RJq[0] * l0 + RJq[1] * l1 + RJq[2] * l2
            g1 = RJq[3] * l0 + RJq[4] * l1 + RJq[5] * l2
            g2 = RJq[6] * l0 + RJq[7] * l1 + RJq[8] * l2
            x0, x1, x2 = xj0 + g0, xj1 + g1, xj2 + g2
            if jt == PRISMATIC:
                q = qm[qi]
                x0, x1, x2 = x0 + e0 * q, x1 + e1 * q, x2 + e2 * q
                g0, g1, g2 = g0 + e0 * q, g1 + e1 * q, g2 + e2 * q
            W[i, X], W[i, X + 1], W[i, X + 2] = x0, x1, x2
            W[i, G], W[i, G + 1], W[i, G + 2] = g0, g1, g2
            # joint motion subspace at O
            if jt == REVOLUTE:
                W[i, S], W[i, S + 1], W[i, S + 2] = e0, e1, e2
                W[i, S + 3] = xj1 * e2 - xj2 * e1
                W[i, S + 4] = xj2 * e0 - xj0 * e2
                W[i, S + 5] = xj0 * e1 - xj1 * e0
            elif jt == PRISMATIC:
                W[i, S], W[i, S + 1], W[i, S + 2] = 0.0, 0.0, 0.0
                W[i, S + 3], W[i, S + 4], W[i, S + 5] = e0, e1, e2
            else:
                for k in range(6):
                    W[i, S + k] = 0.0
        if not with_inertia:
            continue
        # rotational inertia about the CoM in the world axes: R Ib R'
        tmp = scratch[0:9]
        Ri = W[i, R : R + 9]
        Ib = mf[i, IBODY : IBODY + 9]
        for r in range(3):
            for c in range(3):
                tmp[3 * r + c] = (
                    Ri[3 * r] * Ib[c] + Ri[3 * r + 1] * Ib[3 + c] + Ri[3 * r + 2] * Ib[6 + c]
                )
        for r in range(3):
            for c in range(r, 3):
                W[i, IW + 3 * r + c] = (
                    tmp[3 * r] * Ri[3 * c]
                    + tmp[3 * r + 1] * Ri[3 * c + 1]
                    + tmp[3 * r + 2] * Ri[3 * c + 2]
                )
        W[i, IW + 3] = W[i, IW + 1]
        W[i, IW + 6] = W[i, IW + 2]
        W[i, IW + 7] = W[i, IW + 5]


@compiled
def base_motion(W, u, ud, floating, with_accel):
    """
    Compute the base spatial velocity and acceleration at O from SPART's u0 / u0dot.

    V0 = [R0 u0[:3]; u0[3:]] (O is the base CoM); A0 = [R0 u0dot[:3]; u0dot[3:] - w0 x v0].
    """
    for k in range(6):
        W[0, V + k] = 0.0
        W[0, A + k] = 0.0
    if floating:
        _mat3_vec(W[0, R : R + 9], u[0:3], W[0, V : V + 3])
        W[0, V + 3], W[0, V + 4], W[0, V + 5] = u[3], u[4], u[5]
        if with_accel:
            a3 = a4 = a5 = 0.0
            if ud is not None:
                _mat3_vec(W[0, R : R + 9], ud[0:3], W[0, A : A + 3])
                a3, a4, a5 = ud[3], ud[4], ud[5]
            w, v = W[0, V : V + 3], W[0, V + 3 : V + 6]
            W[0, A + 3] = a3 - (w[1] * v[2] - w[2] * v[1])
            W[0, A + 4] = a4 - (w[2] * v[0] - w[0] * v[2])
            W[0, A + 5] = a5 - (w[0] * v[1] - w[1] * v[0])


@compiled
def velocity_acceleration_pass(mi, W, um, umdot, with_accel):
    """
    V_i = V_p + s qd;  A_i = A_p + (V_i x s) qd + s qdd  (c_i stored).

    Each joint's numbers in registers (_crm's operations, in its order).
    """
    n = mi[0]
    for i in range(1, n + 1):
        p = mi[2 + 3 * (i - 1)]
        jt = mi[3 + 3 * (i - 1)]
        qi = mi[4 + 3 * (i - 1)]
        Vp, Vi, Ci = W[p, V : V + 6], W[i, V : V + 6], W[i, C : C + 6]
        c0 = c1 = c2 = c3 = c4 = c5 = 0.0
        if jt != FIXED:
            qd = um[qi]
            si = W[i, S : S + 6]
            a0, a1, a2, b0, b1, b2 = si[0], si[1], si[2], si[3], si[4], si[5]
            w0, w1, w2 = Vp[0] + a0 * qd, Vp[1] + a1 * qd, Vp[2] + a2 * qd
            v0, v1, v2 = Vp[3] + b0 * qd, Vp[4] + b1 * qd, Vp[5] + b2 * qd
            Vi[0], Vi[1], Vi[2], Vi[3], Vi[4], Vi[5] = w0, w1, w2, v0, v1, v2
            c0 = (w1 * a2 - w2 * a1) * qd
            c1 = (w2 * a0 - w0 * a2) * qd
            c2 = (w0 * a1 - w1 * a0) * qd
            c3 = (v1 * a2 - v2 * a1 + w1 * b2 - w2 * b1) * qd
            c4 = (v2 * a0 - v0 * a2 + w2 * b0 - w0 * b2) * qd
            c5 = (v0 * a1 - v1 * a0 + w0 * b1 - w1 * b0) * qd
        else:
            for k in range(6):
                Vi[k] = Vp[k]
        Ci[0], Ci[1], Ci[2], Ci[3], Ci[4], Ci[5] = c0, c1, c2, c3, c4, c5
        if with_accel:
            Ap, Ai = W[p, A : A + 6], W[i, A : A + 6]
            Ai[0], Ai[1], Ai[2] = Ap[0] + c0, Ap[1] + c1, Ap[2] + c2
            Ai[3], Ai[4], Ai[5] = Ap[3] + c3, Ap[4] + c4, Ap[5] + c5
            if umdot is not None:
                if jt != FIXED:
                    qdd = umdot[qi]
                    si = W[i, S : S + 6]
                    for k in range(6):
                        Ai[k] += si[k] * qdd


@compiled
def _add_wrench(W, i, t0, t1, t2, f0, f1, f2, sign, target):
    """W[i, target:target+6] += sign * ([t; f] applied at body i's CoM, moved to O)."""
    x = W[i, X : X + 3]
    W[i, target] += sign * (t0 + x[1] * f2 - x[2] * f1)
    W[i, target + 1] += sign * (t1 + x[2] * f0 - x[0] * f2)
    W[i, target + 2] += sign * (t2 + x[0] * f1 - x[1] * f0)
    W[i, target + 3] += sign * f0
    W[i, target + 4] += sign * f1
    W[i, target + 5] += sign * f2


@compiled
def external_forces(mi, mf, W, wF0, wFm, gravity, sign, target, with_gravity=True):
    """
    W[:, target] += sign * (external wrenches + m g) of each body, moved from its CoM to O.

    wF0/wFm None: no wrenches; gravity (3,), inertial frame (``with_gravity`` False: added
    already, by body_forces).
    """
    n = mi[0]
    g0, g1, g2 = gravity[0], gravity[1], gravity[2]
    if with_gravity and (g0 != 0.0 or g1 != 0.0 or g2 != 0.0):
        for i in range(n + 1):
            m = mf[i, MASS]
            _add_wrench(W, i, 0.0, 0.0, 0.0, m * g0, m * g1, m * g2, sign, target)
    if wF0 is not None:
        _add_wrench(W, 0, wF0[0], wF0[1], wF0[2], wF0[3], wF0[4], wF0[5], sign, target)
        for i in range(1, n + 1):
            _add_wrench(
                W,
                i,
                wFm[0, i - 1],
                wFm[1, i - 1],
                wFm[2, i - 1],
                wFm[3, i - 1],
                wFm[4, i - 1],
                wFm[5, i - 1],
                sign,
                target,
            )


@compiled
def body_forces(mi, mf, W, gravity):
    """
    F_i = I_i A_i + V_i x_f (I_i V_i) - (m_i g at the CoM): the force each body's motion needs.

    At O; gravity (3,), inertial frame.  One pass with each body's numbers in registers (the
    operations of _inertia_times, _crf_add and external_forces' gravity, in their order).
    """
    n = mi[0]
    g0, g1, g2 = gravity[0], gravity[1], gravity[2]
    with_gravity = g0 != 0.0 or g1 != 0.0 or g2 != 0.0
    for i in range(n + 1):
        m = mf[i, MASS]
        x0, x1, x2 = W[i, X], W[i, X + 1], W[i, X + 2]
        Iw = W[i, IW : IW + 9]
        vel, acc = W[i, V : V + 6], W[i, A : A + 6]
        w0, w1, w2, v0, v1, v2 = vel[0], vel[1], vel[2], vel[3], vel[4], vel[5]
        b0, b1, b2, a0, a1, a2 = acc[0], acc[1], acc[2], acc[3], acc[4], acc[5]
        # I A
        p0 = m * (a0 + b1 * x2 - b2 * x1)
        p1 = m * (a1 + b2 * x0 - b0 * x2)
        p2 = m * (a2 + b0 * x1 - b1 * x0)
        F0 = Iw[0] * b0 + Iw[1] * b1 + Iw[2] * b2 + x1 * p2 - x2 * p1
        F1 = Iw[3] * b0 + Iw[4] * b1 + Iw[5] * b2 + x2 * p0 - x0 * p2
        F2 = Iw[6] * b0 + Iw[7] * b1 + Iw[8] * b2 + x0 * p1 - x1 * p0
        # h = I V
        f0 = m * (v0 + w1 * x2 - w2 * x1)
        f1 = m * (v1 + w2 * x0 - w0 * x2)
        f2 = m * (v2 + w0 * x1 - w1 * x0)
        n0 = Iw[0] * w0 + Iw[1] * w1 + Iw[2] * w2 + x1 * f2 - x2 * f1
        n1 = Iw[3] * w0 + Iw[4] * w1 + Iw[5] * w2 + x2 * f0 - x0 * f2
        n2 = Iw[6] * w0 + Iw[7] * w1 + Iw[8] * w2 + x0 * f1 - x1 * f0
        # + V x* h
        F0 += w1 * n2 - w2 * n1 + v1 * f2 - v2 * f1
        F1 += w2 * n0 - w0 * n2 + v2 * f0 - v0 * f2
        F2 += w0 * n1 - w1 * n0 + v0 * f1 - v1 * f0
        F3 = p0 + (w1 * f2 - w2 * f1)
        F4 = p1 + (w2 * f0 - w0 * f2)
        F5 = p2 + (w0 * f1 - w1 * f0)
        if with_gravity:  # - (m g at the CoM, moved to O)
            mg0, mg1, mg2 = m * g0, m * g1, m * g2
            F0 += -1.0 * (0.0 + x1 * mg2 - x2 * mg1)
            F1 += -1.0 * (0.0 + x2 * mg0 - x0 * mg2)
            F2 += -1.0 * (0.0 + x0 * mg1 - x1 * mg0)
            F3 += -1.0 * mg0
            F4 += -1.0 * mg1
            F5 += -1.0 * mg2
        Fi = W[i, F : F + 6]
        Fi[0], Fi[1], Fi[2], Fi[3], Fi[4], Fi[5] = F0, F1, F2, F3, F4, F5


@compiled
def accumulate_forces(mi, W, taum):
    """
    Backward pass: F_p += F_i; taum = s_i .

    F_i.
    """
    n = mi[0]
    for i in range(n, 0, -1):
        p = mi[2 + 3 * (i - 1)]
        qi = mi[4 + 3 * (i - 1)]
        if mi[3 + 3 * (i - 1)] != FIXED:
            taum[qi] = _dot6(W[i, S : S + 6], W[i, F : F + 6])
        for k in range(6):
            W[p, F + k] += W[i, F + k]


@compiled(inline='always')
def _joint_dynamics_on(mi):
    """Return the model's joint dynamics flag (layout: mi[2 + 3 n])."""
    return mi[2 + 3 * mi[0]] != 0


@compiled(inline='always')
def _joint_friction(mf, i, qd):
    """Damping and smoothed Coulomb friction of joint i at velocity qd: d qd + F tanh(qd / v)."""
    t = mf[i, DAMPING] * qd
    if mf[i, FRICTION] != 0.0:
        t += mf[i, FRICTION] * np.tanh(qd / mf[i, FRICTION_VELOCITY])
    return t


@compiled
def add_joint_forces(mi, mf, um, umdot, taum):
    """
    ``taum`` += armature umdot + damping um + friction tanh(um / v), per moving joint.

    ``umdot`` None: no armature term. Only called when the model's joint dynamics flag is set.
    """
    n = mi[0]
    for i in range(1, n + 1):
        if mi[3 + 3 * (i - 1)] != FIXED:
            k = mi[4 + 3 * (i - 1)]
            t = _joint_friction(mf, i, um[k])
            if umdot is not None:
                t += mf[i, ARMATURE] * umdot[k]
            taum[k] += t


@compiled
def base_generalized_force(W, out):
    """tau0 = S0' F0 = [R0' n_O; f] (torque in the base frame, force in the inertial frame)."""
    Rb = W[0, R : R + 9]
    for r in range(3):
        out[r] = Rb[r] * W[0, F] + Rb[3 + r] * W[0, F + 1] + Rb[6 + r] * W[0, F + 2]
        out[3 + r] = W[0, F + 3 + r]


@compiled
def composite_inertias(mi, mf, W):
    """IC_i = sum of I^O over the subtree of i (no transforms in a common frame)."""
    n = mi[0]
    for i in range(n + 1):
        _spatial_inertia(mf, W, i, W[i, IC : IC + 36])
    for i in range(n, 0, -1):
        p = mi[2 + 3 * (i - 1)]
        for k in range(36):
            W[p, IC + k] += W[i, IC + k]


@compiled
def base_block(W, row, M, out):
    """``out`` (6x6 row-major) = S0' M S0 for the 6x6 matrix M (row-major view)."""
    Rb = W[0, R : R + 9]
    # S0 = [[R0, 0], [0, 1]] (O at the base CoM)
    tmp = W[row, 0:36]
    for r in range(6):
        for c in range(6):
            if c < 3:
                tmp[6 * r + c] = (
                    M[6 * r] * Rb[c] + M[6 * r + 1] * Rb[3 + c] + M[6 * r + 2] * Rb[6 + c]
                )
            else:
                tmp[6 * r + c] = M[6 * r + c]
    for r in range(6):
        for c in range(6):
            if r < 3:
                out[6 * r + c] = Rb[r] * tmp[c] + Rb[3 + r] * tmp[6 + c] + Rb[6 + r] * tmp[12 + c]
            else:
                out[6 * r + c] = tmp[6 * r + c]


@compiled
def base_transpose_times(W, f, out):
    """``out`` = S0' f for a 6-vector f."""
    Rb = W[0, R : R + 9]
    for r in range(3):
        out[r] = Rb[r] * f[0] + Rb[3 + r] * f[1] + Rb[6 + r] * f[2]
        out[3 + r] = f[3 + r]


@compiled(inline='always')
def _singular(pivot):
    """Return the error code of a pivot that is not positive: OVERFLOW if it is NaN or infinite."""
    return SINGULAR if pivot * 0.0 == 0.0 else OVERFLOW


@compiled
def cholesky_solve6(M, b):
    """
    Solve M x = b in place (x -> b) for a symmetric positive-definite 6x6 M.

    Row-major, overwritten by its factor. Returns 0, SINGULAR if M is not positive definite, or
    OVERFLOW if a pivot is not finite (M overflowed).
    """
    for j in range(6):
        d = M[6 * j + j]
        for k in range(j):
            d -= M[6 * j + k] * M[6 * j + k]
        if not d > 1e-300:
            return _singular(d)
        d = np.sqrt(d)
        M[6 * j + j] = d
        dinv = 1.0 / d  # one division per column
        for r in range(j + 1, 6):
            s = M[6 * r + j]
            for k in range(j):
                s -= M[6 * r + k] * M[6 * j + k]
            M[6 * r + j] = s * dinv
    for r in range(6):
        s = b[r]
        for k in range(r):
            s -= M[6 * r + k] * b[k]
        b[r] = s / M[6 * r + r]
    for r in range(5, -1, -1):
        s = b[r]
        for k in range(r + 1, 6):
            s -= M[6 * k + r] * b[k]
        b[r] = s / M[6 * r + r]
    return 0


# the composite rigid bodies of crba (ten numbers per body) in the columns of ABA's PA and U
CR = PA


# --- entry kernels: one call per algorithm, 0 or an error code out ----------------------
# Arguments: the model (mi, mf), the caller's workspace W, the state, then the outputs, given
# last (``out`` = [6 base values, n_q joint values]).  gravity (3,) is always given (the model's
# unless the caller overrides it); the ``*_loads`` twins also take external wrenches wF0 (6,) and
# wFm (6, n) (inside, both None means none).


@compiled
def _check_motion(mi, R0, r0, qm, u0, um, u0dot, umdot):
    code = check_state(mi, R0, r0, qm, u0, um)
    if code == 0 and u0dot is not None:
        code = check_vector(u0dot, 6, 6)
    if code == 0 and umdot is not None:
        code = check_vector(umdot, mi[1], 7)
    return code


@compiled
def _newton_euler(mi, mf, W, R0, r0, qm, u0, um, u0dot, umdot, wF0, wFm, gravity, floating, out):
    """
    Forward and backward Newton-Euler passes (u0dot None = zero).

    ``taum`` into out[6:], the total force on the base in W[0, F:F+6].  0 or an error code.
    """
    nq = mi[1]
    code = _check_motion(mi, R0, r0, qm, u0, um, u0dot, umdot)
    if code == 0:
        code = check_loads(mi, wF0, wFm, gravity)
    if code:
        return code
    forward_kinematics(mi, mf, W, R0, r0, qm)
    base_motion(W, u0, u0dot, floating, True)
    velocity_acceleration_pass(mi, W, um, umdot, True)
    body_forces(mi, mf, W, gravity)
    external_forces(mi, mf, W, wF0, wFm, gravity, -1.0, F, False)
    accumulate_forces(mi, W, out[6 : 6 + nq])
    if _joint_dynamics_on(mi):
        add_joint_forces(mi, mf, um, umdot, out[6 : 6 + nq])
    return 0


@compiled
def _rnea(mi, mf, W, R0, r0, qm, u0, um, u0dot, umdot, wF0, wFm, gravity, floating, out):
    code = _newton_euler(
        mi, mf, W, R0, r0, qm, u0, um, u0dot, umdot, wF0, wFm, gravity, floating, out
    )
    if code:
        return code
    base_generalized_force(W, out[0:6])
    return 0 if _finite(out) else OVERFLOW


@compiled
def rnea(mi, mf, W, R0, r0, qm, u0, um, u0dot, umdot, gravity, floating, out):
    """Recursive Newton-Euler: out = [tau0 (6), taum (n_q)]."""
    return _rnea(mi, mf, W, R0, r0, qm, u0, um, u0dot, umdot, None, None, gravity, floating, out)


@compiled
def rnea_loads(mi, mf, W, R0, r0, qm, u0, um, u0dot, umdot, wF0, wFm, gravity, floating, out):
    """:func:`rnea` with external wrenches."""
    return _rnea(mi, mf, W, R0, r0, qm, u0, um, u0dot, umdot, wF0, wFm, gravity, floating, out)


@compiled
def floating_rnea(mi, mf, W, R0, r0, qm, u0, um, umdot, gravity, out):
    """Return base unactuated: out = [u0dot (6), taum (n_q)] for umdot, with tau0 = 0."""
    return _floating_rnea(mi, mf, W, R0, r0, qm, u0, um, umdot, None, None, gravity, out)


@compiled
def floating_rnea_loads(mi, mf, W, R0, r0, qm, u0, um, umdot, wF0, wFm, gravity, out):
    """:func:`floating_rnea` with external wrenches."""
    return _floating_rnea(mi, mf, W, R0, r0, qm, u0, um, umdot, wF0, wFm, gravity, out)


@compiled
def _floating_rnea(mi, mf, W, R0, r0, qm, u0, um, umdot, wF0, wFm, gravity, out):
    n, nq = mi[0], mi[1]
    code = _newton_euler(mi, mf, W, R0, r0, qm, u0, um, None, umdot, wF0, wFm, gravity, True, out)
    if code:
        return code
    taum, u0dot = out[6 : 6 + nq], out[0:6]
    composite_inertias(mi, mf, W)
    scratch = W[n + 1]
    H0 = scratch[36:72]
    base_block(W, n + 1, W[0, IC : IC + 36], H0)
    base_generalized_force(W, u0dot)
    code = cholesky_solve6(H0, u0dot)
    if code:
        return code
    for k in range(6):
        u0dot[k] = -u0dot[k]
    # the base acceleration adds the same spatial acceleration dA = S0 u0dot to every body
    dA = scratch[72:78]
    _mat3_vec(W[0, R : R + 9], u0dot[0:3], dA[0:3])
    dA[3], dA[4], dA[5] = u0dot[3], u0dot[4], u0dot[5]
    f = scratch[78:84]
    for i in range(1, n + 1):
        if mi[3 + 3 * (i - 1)] != FIXED:
            _mat6_vec(W[i, IC : IC + 36], dA, f)
            taum[mi[4 + 3 * (i - 1)]] += _dot6(W[i, S : S + 6], f)
    return 0 if _finite(out) else OVERFLOW


@compiled
def aba(mi, mf, W, R0, r0, qm, u0, um, tau0, taum, gravity, floating, out):
    """Articulated-body algorithm: out = [u0dot (6), umdot (n_q)]."""
    return _aba(mi, mf, W, R0, r0, qm, u0, um, tau0, taum, None, None, gravity, floating, out)


@compiled
def aba_loads(mi, mf, W, R0, r0, qm, u0, um, tau0, taum, wF0, wFm, gravity, floating, out):
    """:func:`aba` with external wrenches."""
    return _aba(mi, mf, W, R0, r0, qm, u0, um, tau0, taum, wF0, wFm, gravity, floating, out)


@compiled
def _aba(mi, mf, W, R0, r0, qm, u0, um, tau0, taum, wF0, wFm, gravity, floating, out):
    n, nq = mi[0], mi[1]
    code = check_state(mi, R0, r0, qm, u0, um)
    if code == 0:
        code = check_vector(tau0, 6, 12)
    if code == 0:
        code = check_vector(taum, nq, 11)
    if code == 0:
        code = check_loads(mi, wF0, wFm, gravity)
    if code:
        return code
    forward_kinematics(mi, mf, W, R0, r0, qm)
    base_motion(W, u0, None, floating, True)  # A0 = its bias part only
    velocity_acceleration_pass(mi, W, um, None, False)
    scratch = W[n + 1]
    h = scratch[0:6]
    for i in range(n + 1):
        _spatial_inertia(mf, W, i, W[i, IC : IC + 36])
        _inertia_times(mf, W, i, W[i, V : V + 6], h)
        for k in range(6):
            W[i, PA + k] = 0.0
        _crf_add(W[i, V : V + 6], h, W[i, PA : PA + 6])
    external_forces(mi, mf, W, wF0, wFm, gravity, -1.0, PA)
    joint_dynamics = _joint_dynamics_on(mi)
    for i in range(n, 0, -1):
        p = mi[2 + 3 * (i - 1)]
        IA = W[i, IC : IC + 36]
        pA = W[i, PA : PA + 6]
        if mi[3 + 3 * (i - 1)] != FIXED:
            s = W[i, S : S + 6]
            Ui = W[i, U : U + 6]
            _mat6_vec(IA, s, Ui)
            D = _dot6(s, Ui)
            k = mi[4 + 3 * (i - 1)]
            tau = taum[k]
            if joint_dynamics:  # the rotor inertia adds to the joint's articulated inertia
                D += mf[i, ARMATURE]
                tau -= _joint_friction(mf, i, um[k])
            if not D > 0.0:
                return _singular(D)
            dinv = 1.0 / D
            W[i, DINV] = dinv
            uu = tau - _dot6(s, pA)
            W[i, UU] = uu
            # Ia = IA - U U' / D: one division per joint, not 36 (a third of the pass's time),
            # the upper triangle computed and mirrored (Ia stays exactly symmetric); each entry
            # added to the parent's as computed, and pa = pA + Ia c + U u / D from the same rows
            # (one sweep over the 36 entries instead of three)
            ud = scratch[84:90]
            for c in range(6):
                ud[c] = Ui[c] * dinv
            ci = W[i, C : C + 6]
            for r in range(6):
                acc = 0.0
                for c in range(6):
                    if c < r:
                        val = IA[6 * c + r]
                    else:
                        val = IA[6 * r + c] - Ui[r] * ud[c]
                    IA[6 * r + c] = val
                    W[p, IC + 6 * r + c] += val
                    acc += val * ci[c]
                pA[r] += acc + ud[r] * uu
        else:
            for k in range(36):
                W[p, IC + k] += IA[k]
        for k in range(6):
            W[p, PA + k] += pA[k]
    u0dot, umdot = out[0:6], out[6 : 6 + nq]
    if floating:
        # S0' (IA0 (S0 u0dot + A0b) + pA0) = tau0
        M = scratch[36:72]
        base_block(W, n + 1, W[0, IC : IC + 36], M)
        _mat6_vec(W[0, IC : IC + 36], W[0, A : A + 6], h)
        for k in range(6):
            h[k] += W[0, PA + k]
        rhs = scratch[72:78]
        base_transpose_times(W, h, rhs)
        for k in range(6):
            u0dot[k] = tau0[k] - rhs[k]
        code = cholesky_solve6(M, u0dot)
        if code:
            return code
        dA = scratch[78:84]
        _mat3_vec(W[0, R : R + 9], u0dot[0:3], dA[0:3])
        for k in range(3):
            W[0, A + k] += dA[k]
            W[0, A + 3 + k] += u0dot[3 + k]
    else:
        for k in range(6):
            u0dot[k] = 0.0
            W[0, A + k] = 0.0
    for i in range(1, n + 1):
        p = mi[2 + 3 * (i - 1)]
        for k in range(6):
            W[i, A + k] = W[p, A + k] + W[i, C + k]
        if mi[3 + 3 * (i - 1)] != FIXED:
            qdd = (W[i, UU] - _dot6(W[i, U : U + 6], W[i, A : A + 6])) * W[i, DINV]
            umdot[mi[4 + 3 * (i - 1)]] = qdd
            for k in range(6):
                W[i, A + k] += W[i, S + k] * qdd
    return 0 if _finite(out) else OVERFLOW


@compiled
def _rigid_composites(mi, mf, W):
    """
    Sum the subtrees' composite rigid bodies in ten numbers each, W[i, CR : CR + 10].

    [M, h (3), Ibar (6: 00 01 02 11 12 22)]: mass, first moment about O (sum m x) and
    rotational inertia about O, the entries of :func:`composite_inertias`' 6x6 I^C (whose
    upper right block is [h]x, lower right M 1) summed in the same order: the same numbers, a
    third of the work.
    """
    n = mi[0]
    for i in range(n + 1):
        m = mf[i, MASS]
        x0, x1, x2 = W[i, X], W[i, X + 1], W[i, X + 2]
        Iw = W[i, IW : IW + 9]
        xx = x0 * x0 + x1 * x1 + x2 * x2
        K = W[i, CR : CR + 10]
        K[0] = m
        K[1], K[2], K[3] = m * x0, m * x1, m * x2
        K[4] = Iw[0] + m * (xx - x0 * x0)
        K[5] = Iw[1] + m * (0.0 - x0 * x1)
        K[6] = Iw[2] + m * (0.0 - x0 * x2)
        K[7] = Iw[4] + m * (xx - x1 * x1)
        K[8] = Iw[5] + m * (0.0 - x1 * x2)
        K[9] = Iw[8] + m * (xx - x2 * x2)
    for i in range(n, 0, -1):
        p = mi[2 + 3 * (i - 1)]
        for k in range(10):
            W[p, CR + k] += W[i, CR + k]


@compiled
def crba(mi, mf, W, R0, r0, qm, H):
    """Composite-rigid-body algorithm: H (6 + n_q, 6 + n_q), u = [u0; um] ordering."""
    n = mi[0]
    code = check_pose(mi, R0, r0, qm)
    if code:
        return code
    forward_kinematics(mi, mf, W, R0, r0, qm)
    _rigid_composites(mi, mf, W)
    # the base's composite as the 6x6 of composite_inertias (for base_block)
    K, I0 = W[0, CR : CR + 10], W[0, IC : IC + 36]
    M, h0, h1, h2 = K[0], K[1], K[2], K[3]
    I0[0], I0[1], I0[2], I0[3], I0[4], I0[5] = K[4], K[5], K[6], 0.0, -h2, h1
    I0[6], I0[7], I0[8], I0[9], I0[10], I0[11] = K[5], K[7], K[8], h2, 0.0, -h0
    I0[12], I0[13], I0[14], I0[15], I0[16], I0[17] = K[6], K[8], K[9], -h1, h0, 0.0
    I0[18], I0[19], I0[20], I0[21], I0[22], I0[23] = 0.0, h2, -h1, M, 0.0, 0.0
    I0[24], I0[25], I0[26], I0[27], I0[28], I0[29] = -h2, 0.0, h0, 0.0, M, 0.0
    I0[30], I0[31], I0[32], I0[33], I0[34], I0[35] = h1, -h0, 0.0, 0.0, 0.0, M
    scratch = W[n + 1]
    H0 = scratch[36:72]
    base_block(W, n + 1, I0, H0)
    for r in range(6):
        for c in range(6):
            H[r, c] = H0[6 * r + c]
    # an overflow shows on the diagonal (|H_ab| <= sqrt(H_aa H_bb), H being positive
    # semi-definite; a NaN comes from the same composite inertias): checked as computed
    acc = (H0[0] + H0[7] + H0[14] + H0[21] + H0[28] + H0[35]) * 0.0
    # entries between two branches are zero and not written below: zeroed first unless the tree
    # is a chain (a caller's H, e.g. a batch's, may hold anything)
    chain = True
    for i in range(2, n + 1):
        if mi[2 + 3 * (i - 1)] != i - 1:
            chain = False
    if not chain:
        for r in range(6, H.shape[0]):
            for c in range(6, H.shape[1]):
                H[r, c] = 0.0
    Rb = W[0, R : R + 9]
    joint_dynamics = _joint_dynamics_on(mi)
    for i in range(1, n + 1):
        if mi[3 + 3 * (i - 1)] == FIXED:
            continue
        a = 6 + mi[4 + 3 * (i - 1)]
        # f = I^C_i s_i = [Ibar w + h x v; M v - h x w] for s = [w; v] (the subtree's momentum at
        # a unit rate; in _mat6_vec's order of terms) in registers, then H's row and column a
        K = W[i, CR : CR + 10]
        M, h0, h1, h2 = K[0], K[1], K[2], K[3]
        si = W[i, S : S + 6]
        s0, s1, s2, s3, s4, s5 = si[0], si[1], si[2], si[3], si[4], si[5]
        f0 = K[4] * s0 + K[5] * s1 + K[6] * s2 - h2 * s4 + h1 * s5
        f1 = K[5] * s0 + K[7] * s1 + K[8] * s2 + h2 * s3 - h0 * s5
        f2 = K[6] * s0 + K[8] * s1 + K[9] * s2 - h1 * s3 + h0 * s4
        f3 = h2 * s1 - h1 * s2 + M * s3
        f4 = h0 * s2 - h2 * s0 + M * s4
        f5 = h1 * s0 - h0 * s1 + M * s5
        haa = s0 * f0 + s1 * f1 + s2 * f2 + s3 * f3 + s4 * f4 + s5 * f5
        if joint_dynamics:
            haa += mf[i, ARMATURE]
        H[a, a] = haa
        acc += haa * 0.0
        # the base's columns: S0' f = [R0' f[:3]; f[3:]]
        c0 = Rb[0] * f0 + Rb[3] * f1 + Rb[6] * f2
        c1 = Rb[1] * f0 + Rb[4] * f1 + Rb[7] * f2
        c2 = Rb[2] * f0 + Rb[5] * f1 + Rb[8] * f2
        H[0, a], H[1, a], H[2, a], H[3, a], H[4, a], H[5, a] = c0, c1, c2, f3, f4, f5
        H[a, 0], H[a, 1], H[a, 2], H[a, 3], H[a, 4], H[a, 5] = c0, c1, c2, f3, f4, f5
        # ancestors couple through the subtree's momentum; other branches stay zero
        j = mi[2 + 3 * (i - 1)]
        while j > 0:
            if mi[3 + 3 * (j - 1)] != FIXED:
                b = 6 + mi[4 + 3 * (j - 1)]
                Sj = W[j, S : S + 6]
                hab = Sj[0] * f0 + Sj[1] * f1 + Sj[2] * f2 + Sj[3] * f3 + Sj[4] * f4 + Sj[5] * f5
                H[a, b] = hab
                H[b, a] = hab
            j = mi[2 + 3 * (j - 1)]
    return 0 if acc == 0.0 else OVERFLOW


@compiled
def _fill_jacobian(mi, W, link, offset, J):
    """
    J (6, 6 + n_q) of the point ``offset`` (link CoM frame) on ``link``; needs the kinematics.

    Leaves the point (relative to O) in the scratch row, columns 0..2.  Returns True if every entry
    is finite (checked as computed: the angular rows are unit axes and R0's columns).
    """
    n, nq = mi[0], mi[1]
    xp = W[n + 1, 0:3]
    _mat3_vec(W[link, R : R + 9], offset, xp)
    for k in range(3):
        xp[k] += W[link, X + k]
    acc = (xp[0] + xp[1] + xp[2]) * 0.0
    for r in range(6):
        for c in range(6 + nq):
            J[r, c] = 0.0
    Rb = W[0, R : R + 9]
    for c in range(3):
        J[0, c], J[1, c], J[2, c] = Rb[c], Rb[3 + c], Rb[6 + c]
        # (R0 e_c) x xp
        J[3, c] = Rb[3 + c] * xp[2] - Rb[6 + c] * xp[1]
        J[4, c] = Rb[6 + c] * xp[0] - Rb[c] * xp[2]
        J[5, c] = Rb[c] * xp[1] - Rb[3 + c] * xp[0]
        J[3 + c, 3 + c] = 1.0
        acc += (J[3, c] + J[4, c] + J[5, c]) * 0.0
    j = link
    while j > 0:
        if mi[3 + 3 * (j - 1)] != FIXED:
            b = 6 + mi[4 + 3 * (j - 1)]
            s = W[j, S : S + 6]
            J[0, b], J[1, b], J[2, b] = s[0], s[1], s[2]
            J[3, b] = s[3] + s[1] * xp[2] - s[2] * xp[1]
            J[4, b] = s[4] + s[2] * xp[0] - s[0] * xp[2]
            J[5, b] = s[5] + s[0] * xp[1] - s[1] * xp[0]
            acc += (J[3, b] + J[4, b] + J[5, b]) * 0.0
        j = mi[2 + 3 * (j - 1)]
    return acc == 0.0


@compiled
def _check_jacobian(mi, link, offset, J):
    code = check_vector(offset, 3, 13)
    if code == 0 and (link < 0 or link > mi[0]):
        code = BAD_SHAPE + 14
    return code


@compiled
def jacobian(mi, mf, W, R0, r0, qm, link, offset, J):
    """
    J (6, 6 + n_q) of a point on ``link`` (offset in the link CoM frame).

    Rows: [angular velocity of the link; velocity of the point], inertial frame.
    """
    code = check_pose(mi, R0, r0, qm)
    if code == 0:
        code = _check_jacobian(mi, link, offset, J)
    if code:
        return code
    forward_kinematics(mi, mf, W, R0, r0, qm, False)
    return 0 if _fill_jacobian(mi, W, link, offset, J) else OVERFLOW


@compiled
def jacobian_and_bias(mi, mf, W, R0, r0, qm, u0, um, link, offset, floating, J, bias):
    """:func:`jacobian` and bias = Jdot u (6,), the point's acceleration at zero udot."""
    n = mi[0]
    code = check_state(mi, R0, r0, qm, u0, um)
    if code == 0:
        code = _check_jacobian(mi, link, offset, J)
    if code:
        return code
    forward_kinematics(mi, mf, W, R0, r0, qm, False)
    if not _fill_jacobian(mi, W, link, offset, J):
        return OVERFLOW
    xp = W[n + 1, 0:3]
    base_motion(W, u0, None, floating, True)
    velocity_acceleration_pass(mi, W, um, None, True)
    Ak, Vk = W[link, A : A + 6], W[link, V : V + 6]
    w0, w1, w2 = Vk[0], Vk[1], Vk[2]
    vp0 = Vk[3] + w1 * xp[2] - w2 * xp[1]
    vp1 = Vk[4] + w2 * xp[0] - w0 * xp[2]
    vp2 = Vk[5] + w0 * xp[1] - w1 * xp[0]
    bias[0], bias[1], bias[2] = Ak[0], Ak[1], Ak[2]
    bias[3] = Ak[3] + Ak[1] * xp[2] - Ak[2] * xp[1] + w1 * vp2 - w2 * vp1
    bias[4] = Ak[4] + Ak[2] * xp[0] - Ak[0] * xp[2] + w2 * vp0 - w0 * vp2
    bias[5] = Ak[5] + Ak[0] * xp[1] - Ak[1] * xp[0] + w0 * vp1 - w1 * vp0
    return 0 if _finite(bias) else OVERFLOW


@compiled
def twists_and_com(mi, mf, W, R0, r0, qm, u0, um, floating, rL, tL, com):
    """
    ``rL`` (3, n+1) CoM positions, tL (6, n+1) twists [omega; CoM velocity] (column 0 = base).

    ``com`` (6,) = [system CoM position; its velocity]; inertial frame.
    """
    n = mi[0]
    code = check_state(mi, R0, r0, qm, u0, um)
    if code:
        return code
    forward_kinematics(mi, mf, W, R0, r0, qm, False)
    base_motion(W, u0, None, floating, False)
    velocity_acceleration_pass(mi, W, um, None, False)
    mtot = 0.0
    for k in range(6):
        com[k] = 0.0
    for i in range(n + 1):
        x = W[i, X : X + 3]
        Vi = W[i, V : V + 6]
        m = mf[i, MASS]
        mtot += m
        for k in range(3):
            rL[k, i] = r0[k] + x[k]
            tL[k, i] = Vi[k]
        tL[3, i] = Vi[3] + Vi[1] * x[2] - Vi[2] * x[1]
        tL[4, i] = Vi[4] + Vi[2] * x[0] - Vi[0] * x[2]
        tL[5, i] = Vi[5] + Vi[0] * x[1] - Vi[1] * x[0]
        for k in range(3):
            com[k] += m * x[k]
            com[3 + k] += m * tL[3 + k, i]
    if mtot > 0.0:
        for k in range(6):
            com[k] /= mtot
    for k in range(3):
        com[k] += r0[k]
    return 0 if _finite(rL) and _finite(tL) and _finite(com) else OVERFLOW


# --- SPART-layout kernels: the float path of the SPART-named functions --------------------
# The same model (mi, mf); outputs in SPART's shapes, given by the caller (and scratch, so that
# nothing here allocates).


@compiled
def spart_kinematics(mi, mf, R0, r0, qm, RJ, RL, rJ, rL, e, g):
    n = mi[0]
    for i in range(n):
        p = mi[2 + 3 * i]
        jt = mi[3 + 3 * i]
        qi = mi[4 + 3 * i]
        ax = mf[i + 1, AXIS : AXIS + 3]
        for r in range(3):
            for c in range(3):
                acc = 0.0
                for k in range(3):
                    Rp = R0[r, k] if p == 0 else RL[r, k, p - 1]
                    acc += Rp * mf[i + 1, TJR + 3 * k + c]
                RJ[r, c, i] = acc
            acc = r0[r] if p == 0 else rL[r, p - 1]
            for k in range(3):
                Rp = R0[r, k] if p == 0 else RL[r, k, p - 1]
                acc += Rp * mf[i + 1, TJP + k]
            rJ[r, i] = acc
        # rotation of the joint variable, Rq = [[q00, q01, q02], [q10, q11, q12], [q20, q21, q22]]
        q00, q01, q02, q10, q11, q12, q20, q21, q22 = 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0
        if jt == REVOLUTE:
            q = qm[qi]
            cq, sq = np.cos(q), np.sin(q)
            t = 1.0 - cq
            x, y, z = ax[0], ax[1], ax[2]
            q00, q01, q02 = cq + t * x * x, t * x * y - sq * z, t * x * z + sq * y
            q10, q11, q12 = t * x * y + sq * z, cq + t * y * y, t * y * z - sq * x
            q20, q21, q22 = t * x * z - sq * y, t * y * z + sq * x, cq + t * z * z
        shift = qm[qi] if jt == PRISMATIC else 0.0
        for r in range(3):
            # RJq row r
            a0 = RJ[r, 0, i] * q00 + RJ[r, 1, i] * q10 + RJ[r, 2, i] * q20
            a1 = RJ[r, 0, i] * q01 + RJ[r, 1, i] * q11 + RJ[r, 2, i] * q21
            a2 = RJ[r, 0, i] * q02 + RJ[r, 1, i] * q12 + RJ[r, 2, i] * q22
            for c in range(3):
                RL[r, c, i] = (
                    a0 * mf[i + 1, TLR + c]
                    + a1 * mf[i + 1, TLR + 3 + c]
                    + a2 * mf[i + 1, TLR + 6 + c]
                )
            com0 = mf[i + 1, TLP] + ax[0] * shift
            com1 = mf[i + 1, TLP + 1] + ax[1] * shift
            com2 = mf[i + 1, TLP + 2] + ax[2] * shift
            rL[r, i] = rJ[r, i] + a0 * com0 + a1 * com1 + a2 * com2
            e[r, i] = RJ[r, 0, i] * ax[0] + RJ[r, 1, i] * ax[1] + RJ[r, 2, i] * ax[2]
            g[r, i] = rL[r, i] - rJ[r, i]
    ok = _finite(RJ) and _finite(RL) and _finite(rJ) and _finite(rL) and _finite(g)
    return 0 if ok else OVERFLOW


@compiled
def spart__from_parent(mi, Bij, Bi0, x0, X, i):
    """
    X[:, i] = B_ip x_p.

    A twist (or twist rate) carried from link i's parent (x0 if the base).
    """
    p = mi[2 + 3 * i]
    for r in range(6):
        acc = 0.0
        for c in range(6):
            acc += (Bi0[r, c, i] * x0[c]) if p == 0 else (Bij[r, c, i, p - 1] * X[c, p - 1])
        X[r, i] = acc


@compiled
def spart_velocities(mi, Bij, Bi0, P0, pm, u0, um, t0, tL):
    n = mi[0]
    for r in range(6):
        acc = 0.0
        for c in range(6):
            acc += P0[r, c] * u0[c]
        t0[r] = acc
    for i in range(n):
        spart__from_parent(mi, Bij, Bi0, t0, tL, i)
        if mi[3 + 3 * i] != FIXED:
            qd = um[mi[4 + 3 * i]]
            for r in range(6):
                tL[r, i] += pm[r, i] * qd
    return 0 if _finite(t0) and _finite(tL) else OVERFLOW


@compiled
def spart__cross_add(a0, a1, a2, b0, b1, b2, out, col, row0, scale):
    out[row0, col] += scale * (a1 * b2 - a2 * b1)
    out[row0 + 1, col] += scale * (a2 * b0 - a0 * b2)
    out[row0 + 2, col] += scale * (a0 * b1 - a1 * b0)


@compiled
def spart_accelerations(mi, t0, tL, P0, pm, Bi0, Bij, u0, um, u0dot, umdot, t0dot, tLdot):
    n = mi[0]
    w0 = P0[0, 0] * u0[0] + P0[0, 1] * u0[1] + P0[0, 2] * u0[2]
    w1 = P0[1, 0] * u0[0] + P0[1, 1] * u0[1] + P0[1, 2] * u0[2]
    w2 = P0[2, 0] * u0[0] + P0[2, 1] * u0[1] + P0[2, 2] * u0[2]
    for r in range(6):
        acc = 0.0
        for c in range(6):
            acc += P0[r, c] * u0dot[c]
        t0dot[r] = acc
    t0dot[0] += t0[1] * w2 - t0[2] * w1
    t0dot[1] += t0[2] * w0 - t0[0] * w2
    t0dot[2] += t0[0] * w1 - t0[1] * w0
    for i in range(n):
        p = mi[2 + 3 * i]
        spart__from_parent(mi, Bij, Bi0, t0dot, tLdot, i)
        if p == 0:
            wp0, wp1, wp2, vp0, vp1, vp2 = t0[0], t0[1], t0[2], t0[3], t0[4], t0[5]
        else:
            wp0, wp1, wp2 = tL[0, p - 1], tL[1, p - 1], tL[2, p - 1]
            vp0, vp1, vp2 = tL[3, p - 1], tL[4, p - 1], tL[5, p - 1]
        # d/dt of B_ip: (v_p - v_i) x w_p
        spart__cross_add(
            vp0 - tL[3, i], vp1 - tL[4, i], vp2 - tL[5, i], wp0, wp1, wp2, tLdot, i, 3, 1.0
        )
        if mi[3 + 3 * i] != FIXED:
            k = mi[4 + 3 * i]
            qd, qdd = um[k], umdot[k]
            spart__cross_add(
                tL[0, i], tL[1, i], tL[2, i], pm[0, i], pm[1, i], pm[2, i], tLdot, i, 0, qd
            )
            spart__cross_add(
                tL[0, i], tL[1, i], tL[2, i], pm[3, i], pm[4, i], pm[5, i], tLdot, i, 3, qd
            )
            for r in range(6):
                tLdot[r, i] += pm[r, i] * qdd
    return 0 if _finite(t0dot) and _finite(tLdot) else OVERFLOW


@compiled
def spart_inertia_in_inertial_frame(mi, mf, R0, RL, I0, Im):
    n = mi[0]
    for i in range(n + 1):
        for r in range(3):
            for c in range(3):
                acc = 0.0
                for a in range(3):
                    Ra = R0[r, a] if i == 0 else RL[r, a, i - 1]
                    for b in range(3):
                        Rb = R0[c, b] if i == 0 else RL[c, b, i - 1]
                        acc += Ra * mf[i, IBODY + 3 * a + b] * Rb
                if i == 0:
                    I0[r, c] = acc
                else:
                    Im[r, c, i - 1] = acc
    return 0 if _finite(I0) and _finite(Im) else OVERFLOW


@compiled
def spart_inverse_dynamics(
    mi, mf, wF0, wFm, t0, tL, t0dot, tLdot, P0, pm, I0, Im, Bij, Bi0, tau0, taum, wq0, wq
):
    """tau0 (6,), taum (n_q,); wq0 (6,) and wq (6, n): scratch (the bodies' wrenches)."""
    n = mi[0]
    for i in range(n + 1):
        m = mf[i, MASS]
        for r in range(3):
            if i == 0:
                wq0[r] = I0[r, 0] * t0dot[0] + I0[r, 1] * t0dot[1] + I0[r, 2] * t0dot[2] - wF0[r]
                wq0[3 + r] = m * t0dot[3 + r] - wF0[3 + r]
            else:
                wq[r, i - 1] = (
                    Im[r, 0, i - 1] * tLdot[0, i - 1]
                    + Im[r, 1, i - 1] * tLdot[1, i - 1]
                    + Im[r, 2, i - 1] * tLdot[2, i - 1]
                    - wFm[r, i - 1]
                )
                wq[3 + r, i - 1] = m * tLdot[3 + r, i - 1] - wFm[3 + r, i - 1]
        # + w x (I w)
        if i == 0:
            w0, w1, w2 = t0[0], t0[1], t0[2]
            h0 = I0[0, 0] * w0 + I0[0, 1] * w1 + I0[0, 2] * w2
            h1 = I0[1, 0] * w0 + I0[1, 1] * w1 + I0[1, 2] * w2
            h2 = I0[2, 0] * w0 + I0[2, 1] * w1 + I0[2, 2] * w2
            wq0[0] += w1 * h2 - w2 * h1
            wq0[1] += w2 * h0 - w0 * h2
            wq0[2] += w0 * h1 - w1 * h0
        else:
            k = i - 1
            w0, w1, w2 = tL[0, k], tL[1, k], tL[2, k]
            h0 = Im[0, 0, k] * w0 + Im[0, 1, k] * w1 + Im[0, 2, k] * w2
            h1 = Im[1, 0, k] * w0 + Im[1, 1, k] * w1 + Im[1, 2, k] * w2
            h2 = Im[2, 0, k] * w0 + Im[2, 1, k] * w1 + Im[2, 2, k] * w2
            wq[0, k] += w1 * h2 - w2 * h1
            wq[1, k] += w2 * h0 - w0 * h2
            wq[2, k] += w0 * h1 - w1 * h0
    for i in range(n - 1, -1, -1):
        p = mi[2 + 3 * i]
        for r in range(6):
            acc = 0.0
            for c in range(6):
                acc += (Bi0[c, r, i] if p == 0 else Bij[c, r, i, p - 1]) * wq[c, i]
            if p == 0:
                wq0[r] += acc
            else:
                wq[r, p - 1] += acc
    for r in range(6):
        acc = 0.0
        for c in range(6):
            acc += P0[c, r] * wq0[c]
        tau0[r] = acc
    for i in range(n):
        if mi[3 + 3 * i] != FIXED:
            acc = 0.0
            for r in range(6):
                acc += pm[r, i] * wq[r, i]
            taum[mi[4 + 3 * i]] = acc
    return 0 if _finite(tau0) and _finite(taum) else OVERFLOW


@compiled
def spart_differential_kinematics(mi, branch, R0, r0, rL, e, g, Bij, Bi0, P0, pm):
    n = mi[0]
    Bij[:] = 0.0
    acc = 0.0  # the lever arms, checked as computed (the other entries are 0, 1 or copies)
    for i in range(n):
        for j in range(n):
            if branch[i, j]:
                for k in range(6):
                    Bij[k, k, i, j] = 1.0
                d0, d1, d2 = rL[0, j] - rL[0, i], rL[1, j] - rL[1, i], rL[2, j] - rL[2, i]
                acc += (d0 + d1 + d2) * 0.0
                Bij[3, 1, i, j], Bij[3, 2, i, j] = -d2, d1
                Bij[4, 0, i, j], Bij[4, 2, i, j] = d2, -d0
                Bij[5, 0, i, j], Bij[5, 1, i, j] = -d1, d0
    Bi0[:] = 0.0
    pm[:] = 0.0
    for i in range(n):
        for k in range(6):
            Bi0[k, k, i] = 1.0
        d0, d1, d2 = r0[0] - rL[0, i], r0[1] - rL[1, i], r0[2] - rL[2, i]
        acc += (d0 + d1 + d2) * 0.0
        Bi0[3, 1, i], Bi0[3, 2, i] = -d2, d1
        Bi0[4, 0, i], Bi0[4, 2, i] = d2, -d0
        Bi0[5, 0, i], Bi0[5, 1, i] = -d1, d0
        jt = mi[3 + 3 * i]
        if jt == REVOLUTE:
            pm[0, i], pm[1, i], pm[2, i] = e[0, i], e[1, i], e[2, i]
            pm[3, i] = e[1, i] * g[2, i] - e[2, i] * g[1, i]
            pm[4, i] = e[2, i] * g[0, i] - e[0, i] * g[2, i]
            pm[5, i] = e[0, i] * g[1, i] - e[1, i] * g[0, i]
        elif jt == PRISMATIC:
            pm[3, i], pm[4, i], pm[5, i] = e[0, i], e[1, i], e[2, i]
    P0[:] = 0.0
    for r in range(3):
        for c in range(3):
            P0[r, c] = R0[r, c]
        P0[3 + r, 3 + r] = 1.0
    return 0 if acc == 0.0 and _finite(pm) else OVERFLOW
