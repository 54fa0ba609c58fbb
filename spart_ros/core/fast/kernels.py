"""Compiled O(n) rigid-body kernels (numba), in SPART's conventions at the interface.

Inside, every spatial quantity is a Plucker vector in ONE frame: axes of the
inertial frame, origin O at the base CoM at the current instant (r0).  A
common frame makes the recursions transform-free (Featherstone's ground-frame
formulation: velocities and forces add along the tree), and taking O at the
base rather than the inertial origin keeps full precision for a spacecraft
millions of metres from the origin.

Spatial motion vectors are [omega; v_O] (v_O: velocity of the body point at O),
force vectors [n_O; f].  Per-body data live in the rows of a workspace array
``ws`` (row 0 = base, row i = link i, row n+1 = scratch) at the column offsets
below; the model is packed in ``mi`` (ints) and ``mf`` (floats).  No kernel
allocates.
"""
import numpy as np
from numba import njit

# --- model packing -------------------------------------------------------------------
# mi = [n, nq, (parent, joint type, q index) for links 1..n]
# mf[i] = [mass, inertia about CoM in the CoM frame (9), joint frame in parent CoM frame:
#          rotation (9) + translation (3), CoM frame in joint frame: rotation (9) +
#          translation (3), joint axis (3)]
MASS, IBODY, TJR, TJP, TLR, TLP, AXIS = 0, 1, 10, 19, 22, 31, 34
MF_COLS = 37

# --- workspace columns ---------------------------------------------------------------
R, X, IW, S, XJ, V, A, F, IC, PA, U, DINV, UU, C, E, G, RJ = (
    0, 9, 12, 21, 27, 30, 36, 42, 48, 84, 90, 96, 97, 98, 104, 107, 110)
WS_COLS = 119
FIXED, REVOLUTE, PRISMATIC = 0, 1, 2

# error codes returned by the entry kernels (index into ARGUMENT_NAMES); 0 = ok
ARGUMENT_NAMES = ('', 'R0', 'r0', 'qm', 'u0', 'um', 'u0dot', 'umdot', 'wF0', 'wFm', 'gravity',
                  'taum', 'tau0', 'offset', 'link')
BAD_SHAPE, NOT_FINITE = 100, 200


# --- small algebra on 1-D views (row-major 3x3) ---------------------------------------
@njit(cache=True, inline='always')
def _mat3_mul(Am, Bm, out):
    for r in range(3):
        for c in range(3):
            out[3 * r + c] = Am[3 * r] * Bm[c] + Am[3 * r + 1] * Bm[3 + c] + Am[3 * r + 2] * Bm[6 + c]


@njit(cache=True, inline='always')
def _mat3_vec(Am, v, out):
    for r in range(3):
        out[r] = Am[3 * r] * v[0] + Am[3 * r + 1] * v[1] + Am[3 * r + 2] * v[2]


@njit(cache=True, inline='always')
def _cross(a, b, out):
    x = a[1] * b[2] - a[2] * b[1]
    y = a[2] * b[0] - a[0] * b[2]
    z = a[0] * b[1] - a[1] * b[0]
    out[0], out[1], out[2] = x, y, z


@njit(cache=True, inline='always')
def _dot6(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@njit(cache=True)
def _inertia_times(ws, mf, i, vel, out):
    """out = I_i^O vel: spatial momentum of body i moving with spatial velocity vel."""
    m = mf[i, MASS]
    x = ws[i, X:X + 3]
    Iw = ws[i, IW:IW + 9]
    # velocity of the CoM: v_O + w x x
    vc0 = vel[3] + vel[1] * x[2] - vel[2] * x[1]
    vc1 = vel[4] + vel[2] * x[0] - vel[0] * x[2]
    vc2 = vel[5] + vel[0] * x[1] - vel[1] * x[0]
    p0, p1, p2 = m * vc0, m * vc1, m * vc2
    out[0] = Iw[0] * vel[0] + Iw[1] * vel[1] + Iw[2] * vel[2] + x[1] * p2 - x[2] * p1
    out[1] = Iw[3] * vel[0] + Iw[4] * vel[1] + Iw[5] * vel[2] + x[2] * p0 - x[0] * p2
    out[2] = Iw[6] * vel[0] + Iw[7] * vel[1] + Iw[8] * vel[2] + x[0] * p1 - x[1] * p0
    out[3], out[4], out[5] = p0, p1, p2


@njit(cache=True)
def _spatial_inertia(ws, mf, i, out):
    """out (36, row-major 6x6) = I_i^O = [[Ic + m[x]'[x], m[x]], [m[x]', m 1]]."""
    m = mf[i, MASS]
    x0, x1, x2 = ws[i, X], ws[i, X + 1], ws[i, X + 2]
    Iw = ws[i, IW:IW + 9]
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


@njit(cache=True, inline='always')
def _mat6_vec(M, v, out):
    for r in range(6):
        acc = 0.0
        for c in range(6):
            acc += M[6 * r + c] * v[c]
        out[r] = acc


@njit(cache=True, inline='always')
def _crm(vel, s, out):
    """out = vel x_m s (spatial motion cross product): [w x a; v x a + w x b]."""
    w0, w1, w2, v0, v1, v2 = vel[0], vel[1], vel[2], vel[3], vel[4], vel[5]
    a0, a1, a2, b0, b1, b2 = s[0], s[1], s[2], s[3], s[4], s[5]
    out[0] = w1 * a2 - w2 * a1
    out[1] = w2 * a0 - w0 * a2
    out[2] = w0 * a1 - w1 * a0
    out[3] = v1 * a2 - v2 * a1 + w1 * b2 - w2 * b1
    out[4] = v2 * a0 - v0 * a2 + w2 * b0 - w0 * b2
    out[5] = v0 * a1 - v1 * a0 + w0 * b1 - w1 * b0


@njit(cache=True, inline='always')
def _crf_add(vel, h, out):
    """out += vel x_f h (spatial force cross product): [w x n + v x f; w x f]."""
    w0, w1, w2, v0, v1, v2 = vel[0], vel[1], vel[2], vel[3], vel[4], vel[5]
    n0, n1, n2, f0, f1, f2 = h[0], h[1], h[2], h[3], h[4], h[5]
    out[0] += w1 * n2 - w2 * n1 + v1 * f2 - v2 * f1
    out[1] += w2 * n0 - w0 * n2 + v2 * f0 - v0 * f2
    out[2] += w0 * n1 - w1 * n0 + v0 * f1 - v1 * f0
    out[3] += w1 * f2 - w2 * f1
    out[4] += w2 * f0 - w0 * f2
    out[5] += w0 * f1 - w1 * f0


# --- input checks ---------------------------------------------------------------------
@njit(cache=True)
def _finite(a):
    for v in a.ravel():
        if not np.isfinite(v):
            return False
    return True


@njit(cache=True)
def check_vector(a, length, code):
    if a.shape[0] != length:
        return BAD_SHAPE + code
    if not _finite(a):
        return NOT_FINITE + code
    return 0


@njit(cache=True)
def check_pose(mi, R0, r0, qm):
    """0, or BAD_SHAPE/NOT_FINITE + argument index."""
    if R0.shape[0] != 3 or R0.shape[1] != 3:
        return BAD_SHAPE + 1
    if not _finite(R0):
        return NOT_FINITE + 1
    code = check_vector(r0, 3, 2)
    if code == 0:
        code = check_vector(qm, mi[1], 3)
    return code


@njit(cache=True)
def check_state(mi, R0, r0, qm, u0, um):
    code = check_pose(mi, R0, r0, qm)
    if code == 0:
        code = check_vector(u0, 6, 4)
    if code == 0:
        code = check_vector(um, mi[1], 5)
    return code


@njit(cache=True)
def check_loads(mi, wF0, wFm, gravity):
    n = mi[0]
    if wF0.shape[0] != 6:
        return BAD_SHAPE + 8
    if wFm.shape[0] != 6 or wFm.shape[1] != n:
        return BAD_SHAPE + 9
    if gravity.shape[0] != 3:
        return BAD_SHAPE + 10
    if not _finite(wF0):
        return NOT_FINITE + 8
    if not _finite(wFm):
        return NOT_FINITE + 9
    if not _finite(gravity):
        return NOT_FINITE + 10
    return 0




# --- passes ---------------------------------------------------------------------------
@njit(cache=True)
def forward_kinematics(mi, mf, ws, R0, r0, qm):
    """Link frames, CoM positions relative to O, world inertias, joint motion subspaces."""
    n = mi[0]
    for r in range(3):
        for c in range(3):
            ws[0, R + 3 * r + c] = R0[r, c]
        ws[0, X + r] = 0.0
        ws[0, E + r] = 0.0
    for k in range(6):
        ws[0, S + k] = 0.0
    scratch = ws[n + 1]
    for i in range(n + 1):
        if i > 0:
            p = mi[2 + 3 * (i - 1)]
            jt = mi[3 + 3 * (i - 1)]
            qi = mi[4 + 3 * (i - 1)]
            RJi = ws[i, RJ:RJ + 9]
            _mat3_mul(ws[p, R:R + 9], mf[i, TJR:TJR + 9], RJi)
            _mat3_vec(ws[p, R:R + 9], mf[i, TJP:TJP + 3], ws[i, XJ:XJ + 3])
            for k in range(3):
                ws[i, XJ + k] += ws[p, X + k]
            ax = mf[i, AXIS:AXIS + 3]
            _mat3_vec(RJi, ax, ws[i, E:E + 3])
            Rq = scratch[0:9]
            if jt == REVOLUTE:
                q = qm[qi]
                cq, sq = np.cos(q), np.sin(q)
                k0, k1, k2 = ax[0], ax[1], ax[2]
                t = 1.0 - cq
                Rq[0], Rq[1], Rq[2] = cq + t * k0 * k0, t * k0 * k1 - sq * k2, t * k0 * k2 + sq * k1
                Rq[3], Rq[4], Rq[5] = t * k0 * k1 + sq * k2, cq + t * k1 * k1, t * k1 * k2 - sq * k0
                Rq[6], Rq[7], Rq[8] = t * k0 * k2 - sq * k1, t * k1 * k2 + sq * k0, cq + t * k2 * k2
            else:
                for k in range(9):
                    Rq[k] = 1.0 if k % 4 == 0 else 0.0
            RJq = scratch[9:18]
            _mat3_mul(RJi, Rq, RJq)
            _mat3_mul(RJq, mf[i, TLR:TLR + 9], ws[i, R:R + 9])
            # CoM: joint origin + RJ (axis q if prismatic) + RJ Rq TLp
            loc = scratch[18:21]
            _mat3_vec(RJq, mf[i, TLP:TLP + 3], loc)
            for k in range(3):
                ws[i, X + k] = ws[i, XJ + k] + loc[k]
                ws[i, G + k] = loc[k]
            if jt == PRISMATIC:
                q = qm[qi]
                for k in range(3):
                    ws[i, X + k] += ws[i, E + k] * q
                    ws[i, G + k] += ws[i, E + k] * q
            # joint motion subspace at O
            e = ws[i, E:E + 3]
            if jt == REVOLUTE:
                ws[i, S], ws[i, S + 1], ws[i, S + 2] = e[0], e[1], e[2]
                _cross(ws[i, XJ:XJ + 3], e, ws[i, S + 3:S + 6])
            elif jt == PRISMATIC:
                ws[i, S], ws[i, S + 1], ws[i, S + 2] = 0.0, 0.0, 0.0
                ws[i, S + 3], ws[i, S + 4], ws[i, S + 5] = e[0], e[1], e[2]
            else:
                for k in range(6):
                    ws[i, S + k] = 0.0
        # rotational inertia about the CoM in the world axes: R Ib R'
        tmp = scratch[0:9]
        Ri = ws[i, R:R + 9]
        Ib = mf[i, IBODY:IBODY + 9]
        for r in range(3):
            for c in range(3):
                tmp[3 * r + c] = Ri[3 * r] * Ib[c] + Ri[3 * r + 1] * Ib[3 + c] + Ri[3 * r + 2] * Ib[6 + c]
        for r in range(3):
            for c in range(3):
                ws[i, IW + 3 * r + c] = tmp[3 * r] * Ri[3 * c] + tmp[3 * r + 1] * Ri[3 * c + 1] + tmp[3 * r + 2] * Ri[3 * c + 2]


@njit(cache=True)
def base_motion(ws, u, ud, floating, with_accel, use_ud):
    """Base spatial velocity and acceleration at O from SPART's u0 / u0dot.

    V0 = [R0 u0[:3]; u0[3:]] (O is the base CoM); A0 = [R0 u0dot[:3]; u0dot[3:] - w0 x v0].
    """
    for k in range(6):
        ws[0, V + k] = 0.0
        ws[0, A + k] = 0.0
    if floating:
        _mat3_vec(ws[0, R:R + 9], u[0:3], ws[0, V:V + 3])
        ws[0, V + 3], ws[0, V + 4], ws[0, V + 5] = u[3], u[4], u[5]
        if with_accel:
            if use_ud:
                _mat3_vec(ws[0, R:R + 9], ud[0:3], ws[0, A:A + 3])
            w, v = ws[0, V:V + 3], ws[0, V + 3:V + 6]
            ws[0, A + 3] = (ud[3] if use_ud else 0.0) - (w[1] * v[2] - w[2] * v[1])
            ws[0, A + 4] = (ud[4] if use_ud else 0.0) - (w[2] * v[0] - w[0] * v[2])
            ws[0, A + 5] = (ud[5] if use_ud else 0.0) - (w[0] * v[1] - w[1] * v[0])


@njit(cache=True)
def velocity_acceleration_pass(mi, ws, um, umdot, with_accel, use_qdd):
    """V_i = V_p + s qd;  A_i = A_p + (V_i x s) qd + s qdd  (c_i stored)."""
    n = mi[0]
    for i in range(1, n + 1):
        p = mi[2 + 3 * (i - 1)]
        jt = mi[3 + 3 * (i - 1)]
        qi = mi[4 + 3 * (i - 1)]
        for k in range(6):
            ws[i, V + k] = ws[p, V + k]
            ws[i, C + k] = 0.0
        if jt != FIXED:
            qd = um[qi]
            for k in range(6):
                ws[i, V + k] += ws[i, S + k] * qd
            _crm(ws[i, V:V + 6], ws[i, S:S + 6], ws[i, C:C + 6])
            for k in range(6):
                ws[i, C + k] *= qd
        if with_accel:
            for k in range(6):
                ws[i, A + k] = ws[p, A + k] + ws[i, C + k]
            if jt != FIXED and use_qdd:
                qdd = umdot[qi]
                for k in range(6):
                    ws[i, A + k] += ws[i, S + k] * qdd


@njit(cache=True)
def external_forces(mi, mf, ws, wF0, wFm, gravity, sign, target):
    """ws[:, target] += sign * (external wrench + m g) of each body, moved from its CoM to O."""
    n = mi[0]
    for i in range(n + 1):
        m = mf[i, MASS]
        if i == 0:
            t0, t1, t2, f0, f1, f2 = wF0[0], wF0[1], wF0[2], wF0[3], wF0[4], wF0[5]
        else:
            t0, t1, t2 = wFm[0, i - 1], wFm[1, i - 1], wFm[2, i - 1]
            f0, f1, f2 = wFm[3, i - 1], wFm[4, i - 1], wFm[5, i - 1]
        f0 += m * gravity[0]
        f1 += m * gravity[1]
        f2 += m * gravity[2]
        x = ws[i, X:X + 3]
        ws[i, target] += sign * (t0 + x[1] * f2 - x[2] * f1)
        ws[i, target + 1] += sign * (t1 + x[2] * f0 - x[0] * f2)
        ws[i, target + 2] += sign * (t2 + x[0] * f1 - x[1] * f0)
        ws[i, target + 3] += sign * f0
        ws[i, target + 4] += sign * f1
        ws[i, target + 5] += sign * f2


@njit(cache=True)
def body_forces(mi, mf, ws):
    """F_i = I_i A_i + V_i x_f (I_i V_i): the force each body's motion needs (at O)."""
    n = mi[0]
    scratch = ws[n + 1]
    h = scratch[0:6]
    for i in range(n + 1):
        _inertia_times(ws, mf, i, ws[i, A:A + 6], ws[i, F:F + 6])
        _inertia_times(ws, mf, i, ws[i, V:V + 6], h)
        _crf_add(ws[i, V:V + 6], h, ws[i, F:F + 6])


@njit(cache=True)
def accumulate_forces(mi, ws, taum):
    """Backward pass: F_p += F_i; taum = s_i . F_i."""
    n = mi[0]
    for i in range(n, 0, -1):
        p = mi[2 + 3 * (i - 1)]
        qi = mi[4 + 3 * (i - 1)]
        if mi[3 + 3 * (i - 1)] != FIXED:
            taum[qi] = _dot6(ws[i, S:S + 6], ws[i, F:F + 6])
        for k in range(6):
            ws[p, F + k] += ws[i, F + k]


@njit(cache=True)
def base_generalized_force(ws, out):
    """tau0 = S0' F0 = [R0' n_O; f] (torque in the base frame, force in the inertial frame)."""
    Rb = ws[0, R:R + 9]
    for r in range(3):
        out[r] = Rb[r] * ws[0, F] + Rb[3 + r] * ws[0, F + 1] + Rb[6 + r] * ws[0, F + 2]
        out[3 + r] = ws[0, F + 3 + r]


@njit(cache=True)
def composite_inertias(mi, mf, ws):
    """IC_i = sum of I^O over the subtree of i (no transforms in a common frame)."""
    n = mi[0]
    for i in range(n + 1):
        _spatial_inertia(ws, mf, i, ws[i, IC:IC + 36])
    for i in range(n, 0, -1):
        p = mi[2 + 3 * (i - 1)]
        for k in range(36):
            ws[p, IC + k] += ws[i, IC + k]


@njit(cache=True)
def base_block(ws, row, M, out):
    """out (6x6 row-major) = S0' M S0 for the 6x6 matrix M (row-major view)."""
    Rb = ws[0, R:R + 9]
    # S0 = [[R0, 0], [0, 1]] (O at the base CoM)
    tmp = ws[row, 0:36]
    for r in range(6):
        for c in range(6):
            if c < 3:
                tmp[6 * r + c] = M[6 * r] * Rb[c] + M[6 * r + 1] * Rb[3 + c] + M[6 * r + 2] * Rb[6 + c]
            else:
                tmp[6 * r + c] = M[6 * r + c]
    for r in range(6):
        for c in range(6):
            if r < 3:
                out[6 * r + c] = Rb[r] * tmp[c] + Rb[3 + r] * tmp[6 + c] + Rb[6 + r] * tmp[12 + c]
            else:
                out[6 * r + c] = tmp[6 * r + c]


@njit(cache=True)
def base_transpose_times(ws, f, out):
    """out = S0' f for a 6-vector f."""
    Rb = ws[0, R:R + 9]
    for r in range(3):
        out[r] = Rb[r] * f[0] + Rb[3 + r] * f[1] + Rb[6 + r] * f[2]
        out[3 + r] = f[3 + r]


@njit(cache=True)
def cholesky_solve6(M, b):
    """Solve M x = b in place (x -> b) for a symmetric positive-definite 6x6 M (row-major,
    overwritten by its factor).  Returns False if M is not positive definite."""
    for j in range(6):
        d = M[6 * j + j]
        for k in range(j):
            d -= M[6 * j + k] * M[6 * j + k]
        if not d > 1e-300:
            return False
        d = np.sqrt(d)
        M[6 * j + j] = d
        for r in range(j + 1, 6):
            s = M[6 * r + j]
            for k in range(j):
                s -= M[6 * r + k] * M[6 * j + k]
            M[6 * r + j] = s / d
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
    return True


# --- entry kernels: one call per algorithm, error code out --------------------------------
SINGULAR = 300


@njit(cache=True)
def _prepare(mi, mf, ws, R0, r0, qm, u0, um):
    code = check_state(mi, R0, r0, qm, u0, um)
    if code == 0:
        forward_kinematics(mi, mf, ws, R0, r0, qm)
    return code


@njit(cache=True)
def rnea(mi, mf, ws, R0, r0, qm, u0, um, u0dot, umdot, wF0, wFm, gravity, floating, use_acc, use_loads,
         tau0, taum):
    """Recursive Newton-Euler: tau0 (6,), taum (n_q,) for the given motion and loads.

    use_acc False: zero accelerations (bias forces); use_loads False: no wrenches, no gravity."""
    code = _prepare(mi, mf, ws, R0, r0, qm, u0, um)
    if code:
        return code
    if use_acc:
        code = check_vector(u0dot, 6, 6)
        if code == 0:
            code = check_vector(umdot, mi[1], 7)
    if code == 0 and use_loads:
        code = check_loads(mi, wF0, wFm, gravity)
    if code:
        return code
    base_motion(ws, u0, u0dot, floating, True, use_acc)
    velocity_acceleration_pass(mi, ws, um, umdot, True, use_acc)
    body_forces(mi, mf, ws)
    if use_loads:
        external_forces(mi, mf, ws, wF0, wFm, gravity, -1.0, F)
    accumulate_forces(mi, ws, taum)
    base_generalized_force(ws, tau0)
    return 0


@njit(cache=True)
def floating_rnea(mi, mf, ws, R0, r0, qm, u0, um, umdot, wF0, wFm, gravity, use_loads, taum, u0dot):
    """Base unactuated: taum (n_q,) and u0dot (6,) for given umdot such that tau0 = 0."""
    n = mi[0]
    code = _prepare(mi, mf, ws, R0, r0, qm, u0, um)
    if code == 0:
        code = check_vector(umdot, mi[1], 7)
    if code == 0 and use_loads:
        code = check_loads(mi, wF0, wFm, gravity)
    if code:
        return code
    base_motion(ws, u0, u0, True, True, False)
    velocity_acceleration_pass(mi, ws, um, umdot, True, True)
    body_forces(mi, mf, ws)
    if use_loads:
        external_forces(mi, mf, ws, wF0, wFm, gravity, -1.0, F)
    accumulate_forces(mi, ws, taum)
    composite_inertias(mi, mf, ws)
    scratch = ws[n + 1]
    H0 = scratch[36:72]
    base_block(ws, n + 1, ws[0, IC:IC + 36], H0)
    base_generalized_force(ws, u0dot)
    if not cholesky_solve6(H0, u0dot):
        return SINGULAR
    for k in range(6):
        u0dot[k] = -u0dot[k]
    # the base acceleration adds the same spatial acceleration dA = S0 u0dot to every body
    dA = scratch[72:78]
    _mat3_vec(ws[0, R:R + 9], u0dot[0:3], dA[0:3])
    dA[3], dA[4], dA[5] = u0dot[3], u0dot[4], u0dot[5]
    f = scratch[78:84]
    for i in range(1, n + 1):
        if mi[3 + 3 * (i - 1)] != FIXED:
            _mat6_vec(ws[i, IC:IC + 36], dA, f)
            taum[mi[4 + 3 * (i - 1)]] += _dot6(ws[i, S:S + 6], f)
    return 0


@njit(cache=True)
def aba(mi, mf, ws, R0, r0, qm, u0, um, tau0, taum, wF0, wFm, gravity, floating, use_loads, u0dot, umdot):
    """Articulated-body algorithm: u0dot (6,) and umdot (n_q,) for generalized forces tau0, taum."""
    n = mi[0]
    code = _prepare(mi, mf, ws, R0, r0, qm, u0, um)
    if code == 0:
        code = check_vector(tau0, 6, 12)
    if code == 0:
        code = check_vector(taum, mi[1], 11)
    if code == 0 and use_loads:
        code = check_loads(mi, wF0, wFm, gravity)
    if code:
        return code
    base_motion(ws, u0, u0, floating, True, False)   # A0 = bias part only
    velocity_acceleration_pass(mi, ws, um, um, False, False)
    scratch = ws[n + 1]
    h = scratch[0:6]
    for i in range(n + 1):
        _spatial_inertia(ws, mf, i, ws[i, IC:IC + 36])
        _inertia_times(ws, mf, i, ws[i, V:V + 6], h)
        for k in range(6):
            ws[i, PA + k] = 0.0
        _crf_add(ws[i, V:V + 6], h, ws[i, PA:PA + 6])
    if use_loads:
        external_forces(mi, mf, ws, wF0, wFm, gravity, -1.0, PA)
    for i in range(n, 0, -1):
        p = mi[2 + 3 * (i - 1)]
        IA = ws[i, IC:IC + 36]
        pA = ws[i, PA:PA + 6]
        if mi[3 + 3 * (i - 1)] != FIXED:
            s = ws[i, S:S + 6]
            Ui = ws[i, U:U + 6]
            _mat6_vec(IA, s, Ui)
            D = _dot6(s, Ui)
            if not D > 0.0:
                return SINGULAR
            ws[i, DINV] = 1.0 / D
            ws[i, UU] = taum[mi[4 + 3 * (i - 1)]] - _dot6(s, pA)
            for r in range(6):
                for c in range(6):
                    IA[6 * r + c] -= Ui[r] * Ui[c] / D
            # pa = pA + Ia c + U u / D
            _mat6_vec(IA, ws[i, C:C + 6], h)
            for k in range(6):
                pA[k] += h[k] + Ui[k] * ws[i, UU] / D
        for k in range(36):
            ws[p, IC + k] += IA[k]
        for k in range(6):
            ws[p, PA + k] += pA[k]
    if floating:
        # S0' (IA0 (S0 u0dot + A0b) + pA0) = tau0
        M = scratch[36:72]
        base_block(ws, n + 1, ws[0, IC:IC + 36], M)
        _mat6_vec(ws[0, IC:IC + 36], ws[0, A:A + 6], h)
        for k in range(6):
            h[k] += ws[0, PA + k]
        rhs = scratch[72:78]
        base_transpose_times(ws, h, rhs)
        for k in range(6):
            u0dot[k] = tau0[k] - rhs[k]
        if not cholesky_solve6(M, u0dot):
            return SINGULAR
        dA = scratch[78:84]
        _mat3_vec(ws[0, R:R + 9], u0dot[0:3], dA[0:3])
        for k in range(3):
            ws[0, A + k] += dA[k]
            ws[0, A + 3 + k] += u0dot[3 + k]
    else:
        for k in range(6):
            u0dot[k] = 0.0
            ws[0, A + k] = 0.0
    for i in range(1, n + 1):
        p = mi[2 + 3 * (i - 1)]
        for k in range(6):
            ws[i, A + k] = ws[p, A + k] + ws[i, C + k]
        if mi[3 + 3 * (i - 1)] != FIXED:
            qi = mi[4 + 3 * (i - 1)]
            qdd = (ws[i, UU] - _dot6(ws[i, U:U + 6], ws[i, A:A + 6])) * ws[i, DINV]
            umdot[qi] = qdd
            for k in range(6):
                ws[i, A + k] += ws[i, S + k] * qdd
    return 0


@njit(cache=True)
def crba(mi, mf, ws, R0, r0, qm, H):
    """Composite-rigid-body algorithm: H (6 + n_q, 6 + n_q), u = [u0; um] ordering."""
    n = mi[0]
    nq = mi[1]
    if H.shape[0] != 6 + nq or H.shape[1] != 6 + nq:
        return BAD_SHAPE
    code = check_pose(mi, R0, r0, qm)
    if code:
        return code
    forward_kinematics(mi, mf, ws, R0, r0, qm)
    composite_inertias(mi, mf, ws)
    scratch = ws[n + 1]
    H0 = scratch[36:72]
    base_block(ws, n + 1, ws[0, IC:IC + 36], H0)
    for r in range(6):
        for c in range(6):
            H[r, c] = H0[6 * r + c]
    f = scratch[0:6]
    col = scratch[6:12]
    for i in range(1, n + 1):
        if mi[3 + 3 * (i - 1)] == FIXED:
            continue
        a = 6 + mi[4 + 3 * (i - 1)]
        _mat6_vec(ws[i, IC:IC + 36], ws[i, S:S + 6], f)
        H[a, a] = _dot6(ws[i, S:S + 6], f)
        base_transpose_times(ws, f, col)
        for r in range(6):
            H[r, a] = col[r]
            H[a, r] = col[r]
        j = mi[2 + 3 * (i - 1)]
        while j > 0:
            if mi[3 + 3 * (j - 1)] != FIXED:
                b = 6 + mi[4 + 3 * (j - 1)]
                H[a, b] = _dot6(ws[j, S:S + 6], f)
                H[b, a] = H[a, b]
            j = mi[2 + 3 * (j - 1)]
    # joints on different branches do not couple
    return 0


@njit(cache=True)
def point_jacobian(mi, mf, ws, R0, r0, qm, u0, um, link, offset, floating, with_bias, J, bias):
    """J (6, 6 + n_q) of a point on ``link`` (offset in the link CoM frame) and bias = Jdot u (6,).

    Rows: [angular velocity of the link; velocity of the point], inertial frame."""
    n = mi[0]
    nq = mi[1]
    code = _prepare(mi, mf, ws, R0, r0, qm, u0, um)
    if code == 0:
        code = check_vector(offset, 3, 13)
    if code:
        return code
    if link < 0 or link > n:
        return BAD_SHAPE + 14
    if J.shape[0] != 6 or J.shape[1] != 6 + nq:
        return BAD_SHAPE
    scratch = ws[n + 1]
    xp = scratch[0:3]
    _mat3_vec(ws[link, R:R + 9], offset, xp)
    for k in range(3):
        xp[k] += ws[link, X + k]
    for r in range(6):
        for c in range(6 + nq):
            J[r, c] = 0.0
    Rb = ws[0, R:R + 9]
    for c in range(3):
        J[0, c], J[1, c], J[2, c] = Rb[c], Rb[3 + c], Rb[6 + c]
        # (R0 e_c) x xp
        J[3, c] = Rb[3 + c] * xp[2] - Rb[6 + c] * xp[1]
        J[4, c] = Rb[6 + c] * xp[0] - Rb[c] * xp[2]
        J[5, c] = Rb[c] * xp[1] - Rb[3 + c] * xp[0]
        J[3 + c, 3 + c] = 1.0
    j = link
    while j > 0:
        if mi[3 + 3 * (j - 1)] != FIXED:
            b = 6 + mi[4 + 3 * (j - 1)]
            s = ws[j, S:S + 6]
            J[0, b], J[1, b], J[2, b] = s[0], s[1], s[2]
            J[3, b] = s[3] + s[1] * xp[2] - s[2] * xp[1]
            J[4, b] = s[4] + s[2] * xp[0] - s[0] * xp[2]
            J[5, b] = s[5] + s[0] * xp[1] - s[1] * xp[0]
        j = mi[2 + 3 * (j - 1)]
    if not with_bias:
        return 0
    # bias: the point's acceleration at zero generalized acceleration
    base_motion(ws, u0, u0, floating, True, False)
    velocity_acceleration_pass(mi, ws, um, um, True, False)
    Ak, Vk = ws[link, A:A + 6], ws[link, V:V + 6]
    w0, w1, w2 = Vk[0], Vk[1], Vk[2]
    vp0 = Vk[3] + w1 * xp[2] - w2 * xp[1]
    vp1 = Vk[4] + w2 * xp[0] - w0 * xp[2]
    vp2 = Vk[5] + w0 * xp[1] - w1 * xp[0]
    bias[0], bias[1], bias[2] = Ak[0], Ak[1], Ak[2]
    bias[3] = Ak[3] + Ak[1] * xp[2] - Ak[2] * xp[1] + w1 * vp2 - w2 * vp1
    bias[4] = Ak[4] + Ak[2] * xp[0] - Ak[0] * xp[2] + w2 * vp0 - w0 * vp2
    bias[5] = Ak[5] + Ak[0] * xp[1] - Ak[1] * xp[0] + w0 * vp1 - w1 * vp0
    return 0


@njit(cache=True)
def twists_and_com(mi, mf, ws, R0, r0, qm, u0, um, floating, rL, tL, com):
    """rL (3, n+1) CoM positions, tL (6, n+1) twists [omega; CoM velocity] (column 0 = base),
    com (6,) = [system CoM position; its velocity]; inertial frame."""
    n = mi[0]
    code = _prepare(mi, mf, ws, R0, r0, qm, u0, um)
    if code:
        return code
    base_motion(ws, u0, u0, floating, False, False)
    velocity_acceleration_pass(mi, ws, um, um, False, False)
    mtot = 0.0
    for k in range(6):
        com[k] = 0.0
    for i in range(n + 1):
        x = ws[i, X:X + 3]
        Vi = ws[i, V:V + 6]
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
    return 0
