"""
Compiled analytic derivatives of inverse and forward dynamics, in SPART's coordinates.

The frame is the one of :mod:`.kernels`: inertial axes, origin O at the base CoM at this instant.
Coordinates are SPART's: the configuration's tangent is ordered and expressed as the velocity u =
[u0; um] is, so that d/dt q = u exactly: a base perturbation [dtheta; dr0] rotates the base about
its CoM by R0 dtheta (dtheta in the BASE frame, R0 -> R0 exp([dtheta]x)) and moves its CoM by dr0
(inertial frame); then one entry per joint variable.  Derivatives are (6 + n_q) columns wide in
that order; a fixed base has zero base columns.

Inverse dynamics (Carpentier and Mansard, RSS 2018, in the ground frame, with the free-floating
base as six coordinates of its own).  Every body's motion, force and inertia is a Plucker vector
at O.  A perturbation of coordinate k moves the bodies beyond it rigidly by S_k dq_k and turns
the motion subspaces beyond it; what does not turn with them (the velocity and acceleration of the
body carrying k) leaves, per body j beyond k:

    dv_j = Psi_k,   da_j = dPsi_k + Psi_k x v_j,   Psi_k = v_k x S_k,
    dPsi_k = a_k x S_k + v_k x Psi_k                         (configuration)
    dv_j = S_k,     da_j = Psiv_k - v_j x S_k,      Psiv_k = 2 Psi_k            (velocity)

(for a base coordinate, v_k and a_k are the base's translation part V_t = [0; u0[3:]] and A_t = [0;
u0dot[3:] - g], and Psiv_k = V0 x S_k + V_t x S_k for a rotation; gravity is the base
acceleration -g).  The force f_j = I_j a_j + v_j x* I_j v_j then changes by I_j dPsi + B_j Psi
(configuration) and I_j Psiv + B_j S_k (velocity), B_j = v_j x* I_j - I_j v_j x + (I_j v_j)-bar,
and summed over a subtree the composite inertia I^C and B^C give every entry of d tau / d q and
d tau / d u with two 6-vector dot products (rows beyond k) or one (rows before k: the subtree's
force S_k x* F_k + I^C_k dPsi_k + B^C_k Psi_k, projected).  The mass matrix (d tau / d udot) and
the derivative of the momentum h0 = H[0:6] u come out of the same sums.

Forward dynamics: udot = FD(q, u, tau) solves ID(q, u, udot) = tau, so d udot / d x = -H^-1 d ID /
d x at that udot and d udot / d tau = H^-1 (a Cholesky factor of H; a fixed base: its joint block).

No kernel allocates: the caller gives the derivative workspace ``D`` (float64, (n + 8,
D_COLS)), the outputs and, for forward dynamics, a scratch matrix ``L`` (2 (6 + n_q) + 7, 6 +
n_q).  The batch kernels loop over a range of states (the caller splits the range between
threads: they run without the GIL).
"""

import numpy as np

from .kernels import (
    _aba,
    _check_motion,
    _crf_add,
    _crm,
    _dot6,
    _finite,
    _joint_dynamics_on,
    _joint_friction,
    _mat6_vec,
    _singular,
    _spatial_inertia,
    base_generalized_force,
    base_motion,
    base_transpose_times,
    check_vector,
    compiled,
    forward_kinematics,
    velocity_acceleration_pass,
)
from .layout import (
    A,
    ARMATURE,
    BAD_SHAPE,
    DAMPING,
    F,
    FIXED,
    FRICTION,
    FRICTION_VELOCITY,
    IC,
    IW,
    MASS,
    OVERFLOW,
    R,
    S,
    V,
    X,
)

# --- derivative workspace columns (per row of D) ----------------------------------------------
# rows 0..n: bodies (their joint's column data); rows n+1..n+6: the six base columns; row n+7:
# scratch.  SIG: the angular block (row-major 3x3) of the subtree's sum of I_j crm(v_j) +
# crm(v_j)' I_j (its other blocks are -/+ [p]x of the subtree's linear momentum p, HC[3:6], and
# 0); HC: the subtree's momentum, the sum of I_j v_j.
SIG, HC, SC, PSI, PSID, PSIV, ALPHA, BETA, GQ, GV, LAST, GH = (
    0,
    9,
    15,
    21,
    27,
    33,
    39,
    45,
    51,
    57,
    63,
    64,
)
D_COLS = 70


@compiled
def _sigma(mf, W, i, out):
    """
    ``out`` (9) = the angular block of I_i crm(v_i) + crm(v_i)' I_i (row-major 3x3).

    With I_i = [[A, m [x]x], [-m [x]x, m 1]] (A = Iw + m [x]x' [x]x) the sum is
    [[A [w]x - [w]x A + m (o x' + x o' - 2 (x . o) 1), -m [vc]x], [m [vc]x, 0]], o = v_O,
    vc = o + w x x the CoM's velocity: 40 products instead of a 6x6x6 matrix product.
    """
    m = mf[i, MASS]
    x0, x1, x2 = W[i, X], W[i, X + 1], W[i, X + 2]
    Iw = W[i, IW : IW + 9]
    w0, w1, w2 = W[i, V], W[i, V + 1], W[i, V + 2]
    o0, o1, o2 = W[i, V + 3], W[i, V + 4], W[i, V + 5]
    xx = x0 * x0 + x1 * x1 + x2 * x2
    a00 = Iw[0] + m * (xx - x0 * x0)
    a01 = Iw[1] - m * x0 * x1
    a02 = Iw[2] - m * x0 * x2
    a10 = Iw[3] - m * x1 * x0
    a11 = Iw[4] + m * (xx - x1 * x1)
    a12 = Iw[5] - m * x1 * x2
    a20 = Iw[6] - m * x2 * x0
    a21 = Iw[7] - m * x2 * x1
    a22 = Iw[8] + m * (xx - x2 * x2)
    # S = A [w]x, column c = A (w x e_c)
    s00, s10, s20 = w2 * a01 - w1 * a02, w2 * a11 - w1 * a12, w2 * a21 - w1 * a22
    s01, s11, s21 = w0 * a02 - w2 * a00, w0 * a12 - w2 * a10, w0 * a22 - w2 * a20
    s02, s12, s22 = w1 * a00 - w0 * a01, w1 * a10 - w0 * a11, w1 * a20 - w0 * a21
    xo2 = 2.0 * (x0 * o0 + x1 * o1 + x2 * o2)
    out[0] = 2.0 * s00 + m * (2.0 * o0 * x0 - xo2)
    out[4] = 2.0 * s11 + m * (2.0 * o1 * x1 - xo2)
    out[8] = 2.0 * s22 + m * (2.0 * o2 * x2 - xo2)
    out[1] = out[3] = s01 + s10 + m * (o0 * x1 + x0 * o1)
    out[2] = out[6] = s02 + s20 + m * (o0 * x2 + x0 * o2)
    out[5] = out[7] = s12 + s21 + m * (o1 * x2 + x1 * o2)


@compiled(inline='always')
def _sigma_times(D, i, x, out):
    """``out`` = Sigma^C_i x (the subtree's I crm(v) + crm(v)' I: see _sigma)."""
    Sg = D[i, SIG : SIG + 9]
    p0, p1, p2 = D[i, HC + 3], D[i, HC + 4], D[i, HC + 5]
    w0, w1, w2, v0, v1, v2 = x[0], x[1], x[2], x[3], x[4], x[5]
    out[0] = Sg[0] * w0 + Sg[1] * w1 + Sg[2] * w2 - (p1 * v2 - p2 * v1)
    out[1] = Sg[3] * w0 + Sg[4] * w1 + Sg[5] * w2 - (p2 * v0 - p0 * v2)
    out[2] = Sg[6] * w0 + Sg[7] * w1 + Sg[8] * w2 - (p0 * v1 - p1 * v0)
    out[3] = p1 * w2 - p2 * w1
    out[4] = p2 * w0 - p0 * w2
    out[5] = p0 * w1 - p1 * w0


@compiled
def _column_data(W, D, body, d, joint, tmp, cs, tmp2):
    """
    Fill the data of the column whose S, PSI, PSID, PSIV are in row ``d`` of D.

    ALPHA = I^C S and BETA = B^C' S = -Sigma S - S x* h^C (every column); for a joint's column
    (``joint``) also GQ = S x* F + I^C dPsi + B^C Psi, GV = I^C Psiv + B^C S and GH = S x* h^C
    + I^C Psi, with B^C x = -Sigma x + x x* h^C (the rows before it).  ``body``: the body
    carrying it (its composites in W and D).
    """
    s = D[d, SC : SC + 6]
    IC_b = W[body, IC : IC + 36]
    hc = D[body, HC : HC + 6]
    _mat6_vec(IC_b, s, D[d, ALPHA : ALPHA + 6])
    _sigma_times(D, body, s, tmp)  # Sigma S
    for k in range(6):
        cs[k] = 0.0
    _crf_add(s, hc, cs)  # S x* h^C
    beta = D[d, BETA : BETA + 6]
    for k in range(6):
        beta[k] = -tmp[k] - cs[k]
    if not joint:
        return
    psi = D[d, PSI : PSI + 6]
    gh = D[d, GH : GH + 6]
    _mat6_vec(IC_b, psi, gh)  # I^C Psi
    gv = D[d, GV : GV + 6]
    for k in range(6):
        gv[k] = 2.0 * gh[k] - tmp[k] + cs[k]  # Psiv = 2 Psi for a joint
        gh[k] += cs[k]
    gq = D[d, GQ : GQ + 6]
    _mat6_vec(IC_b, D[d, PSID : PSID + 6], gq)
    _crf_add(s, W[body, F : F + 6], gq)
    _crf_add(psi, hc, gq)
    _sigma_times(D, body, psi, tmp2)
    for k in range(6):
        gq[k] -= tmp2[k]


@compiled
def _id_derivatives(
    mi, mf, W, D, R0, r0, qm, u0, um, u0dot, umdot, gravity, floating, tau, dq, du, H, dh, fk
):
    """
    Compute the inverse dynamics and its derivatives (module docstring); inputs checked already.

    ``tau`` (N,), ``dq``, ``du``, ``H`` (N, N), ``dh`` (6, N), N = 6 + n_q; ``fk`` False: the
    workspace holds this configuration's kinematics already (forward dynamics ran on it).  The
    base's translation columns of dq, du and dh are zero (a rigid translation of the whole
    system, of its position or velocity, changes no force: gravity is uniform): not computed.
    """
    n, nq = mi[0], mi[1]
    N = 6 + nq
    if fk:
        forward_kinematics(mi, mf, W, R0, r0, qm)
    base_motion(W, u0, u0dot, floating, True)
    for k in range(3):  # gravity as the acceleration -g of the base's translation
        W[0, A + 3 + k] -= gravity[k]
    velocity_acceleration_pass(mi, W, um, umdot, True)
    scratch = D[n + 7]
    tmp, col, cs, tmp2 = scratch[0:6], scratch[6:12], scratch[12:18], scratch[18:24]
    Vt, At = scratch[24:30], scratch[30:36]
    for i in range(n + 1):
        Ii = W[i, IC : IC + 36]
        _spatial_inertia(mf, W, i, Ii)
        v = W[i, V : V + 6]
        h = D[i, HC : HC + 6]
        _mat6_vec(Ii, v, h)
        f = W[i, F : F + 6]
        _mat6_vec(Ii, W[i, A : A + 6], f)
        _crf_add(v, h, f)
        _sigma(mf, W, i, D[i, SIG : SIG + 9])
        D[i, LAST] = i
    # composites, leaves to the base (a child's id is above its parent's)
    for i in range(n, 0, -1):
        p = mi[2 + 3 * (i - 1)]
        if mi[3 + 3 * (i - 1)] != FIXED:
            tau[6 + mi[4 + 3 * (i - 1)]] = _dot6(W[i, S : S + 6], W[i, F : F + 6])
        for k in range(36):
            W[p, IC + k] += W[i, IC + k]
        for k in range(9):
            D[p, SIG + k] += D[i, SIG + k]
        for k in range(6):
            D[p, HC + k] += D[i, HC + k]
            W[p, F + k] += W[i, F + k]
        if D[i, LAST] > D[p, LAST]:
            D[p, LAST] = D[i, LAST]
    base_generalized_force(W, tau[0:6])
    # the columns' data: tree joints in their body's row, base coordinates in rows n+1..n+6
    for i in range(1, n + 1):
        if mi[3 + 3 * (i - 1)] == FIXED:
            continue
        s = D[i, SC : SC + 6]
        for k in range(6):
            s[k] = W[i, S + k]
        v, a = W[i, V : V + 6], W[i, A : A + 6]
        psi, psid = D[i, PSI : PSI + 6], D[i, PSID : PSID + 6]
        _crm(v, s, psi)
        _crm(a, s, psid)
        _crm(v, psi, tmp)
        for k in range(6):
            psid[k] += tmp[k]
            D[i, PSIV + k] = 2.0 * psi[k]
        _column_data(W, D, i, i, True, tmp, cs, tmp2)
    if floating:  # the base's columns (a fixed base has none): their rows need ALPHA, BETA
        for k in range(6):
            Vt[k] = 0.0
            At[k] = 0.0
        for k in range(3):
            Vt[3 + k] = u0[3 + k]
            At[3 + k] = u0dot[3 + k] - gravity[k]
        for c in range(6):
            d = n + 1 + c
            s = D[d, SC : SC + 6]
            for k in range(6):
                s[k] = 0.0
            if c < 3:  # a rotation about the base CoM, axis R0 e_c
                for r in range(3):
                    s[r] = W[0, R + 3 * r + c]
                psi, psid = D[d, PSI : PSI + 6], D[d, PSID : PSID + 6]
                psiv = D[d, PSIV : PSIV + 6]
                _crm(Vt, s, psi)
                _crm(At, s, psid)
                _crm(Vt, psi, tmp)
                _crm(W[0, V : V + 6], s, psiv)
                for k in range(6):
                    psid[k] += tmp[k]
                    psiv[k] += psi[k]
            else:
                s[c] = 1.0
            _column_data(W, D, 0, d, False, tmp, cs, tmp2)
    # the matrices
    for r in range(N):
        for c in range(N):
            dq[r, c] = 0.0
            du[r, c] = 0.0
            H[r, c] = 0.0
        for c in range(6):
            dh[c, r] = 0.0
    for b in range(0 if floating else 1, n + 1):
        if b > 0 and mi[3 + 3 * (b - 1)] == FIXED:
            continue
        for c in range(1 if b > 0 else 6):
            if b > 0:
                dk, k = b, 6 + mi[4 + 3 * (b - 1)]
            else:
                dk, k = n + 1 + c, c
            sk = D[dk, SC : SC + 6]
            if b == 0 and c >= 3:  # a translation of the base: H only
                for i in range(1, n + 1):
                    if mi[3 + 3 * (i - 1)] != FIXED:
                        H[6 + mi[4 + 3 * (i - 1)], k] = D[i, ALPHA + c]
                for c2 in range(6):
                    H[c2, k] = D[n + 1 + c2, ALPHA + c]
                continue
            psi, psid, psiv = D[dk, PSI : PSI + 6], D[dk, PSID : PSID + 6], D[dk, PSIV : PSIV + 6]
            # rows beyond k (and k's own): the composite at the row's body
            for i in range(max(b, 1), int(D[b, LAST]) + 1):
                if mi[3 + 3 * (i - 1)] == FIXED:
                    continue
                r = 6 + mi[4 + 3 * (i - 1)]
                al, be = D[i, ALPHA : ALPHA + 6], D[i, BETA : BETA + 6]
                dq[r, k] = _dot6(al, psid) + _dot6(be, psi)
                du[r, k] = _dot6(al, psiv) + _dot6(be, sk)
                H[r, k] = _dot6(al, sk)
            if b == 0:
                # the base rows of a base column: the same sums at the base, and the base
                # translation rows, whose axes do not turn, see the force turn
                tmp[0] = tmp[1] = tmp[2] = tmp[3] = tmp[4] = tmp[5] = 0.0
                col[0] = col[1] = col[2] = col[3] = col[4] = col[5] = 0.0
                _crf_add(sk, W[0, F : F + 6], tmp)
                _crf_add(sk, D[0, HC : HC + 6], col)
                for c2 in range(6):
                    d2 = n + 1 + c2
                    al, be = D[d2, ALPHA : ALPHA + 6], D[d2, BETA : BETA + 6]
                    dq[c2, k] = _dot6(al, psid) + _dot6(be, psi)
                    du[c2, k] = _dot6(al, psiv) + _dot6(be, sk)
                    H[c2, k] = _dot6(al, sk)
                    dh[c2, k] = _dot6(al, psi)
                    if c2 >= 3:
                        dq[c2, k] += tmp[c2]
                        dh[c2, k] += col[c2]
                continue
            # rows before k: the subtree's force and momentum, projected
            j = mi[2 + 3 * (b - 1)]
            gq, gv, gh, al = (
                D[dk, GQ : GQ + 6],
                D[dk, GV : GV + 6],
                D[dk, GH : GH + 6],
                D[dk, ALPHA : ALPHA + 6],
            )
            while j > 0:
                if mi[3 + 3 * (j - 1)] != FIXED:
                    r = 6 + mi[4 + 3 * (j - 1)]
                    sj = W[j, S : S + 6]
                    dq[r, k] = _dot6(sj, gq)
                    du[r, k] = _dot6(sj, gv)
                    H[r, k] = _dot6(sj, al)
                j = mi[2 + 3 * (j - 1)]
            base_transpose_times(W, gq, tmp)
            for r in range(6):
                dq[r, k] = tmp[r]
            base_transpose_times(W, gv, tmp)
            for r in range(6):
                du[r, k] = tmp[r]
            base_transpose_times(W, gh, tmp)
            for r in range(6):
                dh[r, k] = tmp[r]
            if floating:
                base_transpose_times(W, al, tmp)
                for r in range(6):
                    H[r, k] = tmp[r]
    if _joint_dynamics_on(mi):
        for i in range(1, n + 1):
            if mi[3 + 3 * (i - 1)] == FIXED:
                continue
            q = mi[4 + 3 * (i - 1)]
            k = 6 + q
            w = um[q]
            tau[k] += _joint_friction(mf, i, w)
            if umdot is not None:
                tau[k] += mf[i, ARMATURE] * umdot[q]
            slope = mf[i, DAMPING]
            if mf[i, FRICTION] != 0.0:
                t = np.tanh(w / mf[i, FRICTION_VELOCITY])
                slope += mf[i, FRICTION] / mf[i, FRICTION_VELOCITY] * (1.0 - t * t)
            du[k, k] += slope
            H[k, k] += mf[i, ARMATURE]
    ok = _finite(tau) and _finite(dq) and _finite(du) and _finite(H) and _finite(dh)
    return 0 if ok else OVERFLOW


@compiled
def _check_outputs(mi, D, n_rows, out, M1_, M2_, M3_):
    """BAD_SHAPE + 0 when the caller's arrays do not fit the model (the wrapper's own arrays)."""
    N = 6 + mi[1]
    if D.shape[0] != mi[0] + 8 or D.shape[1] != D_COLS or out.shape[0] != N:
        return BAD_SHAPE
    for M in (M1_, M2_, M3_):
        if M.shape[0] != N or M.shape[1] != N:
            return BAD_SHAPE
    return 0


@compiled
def rnea_derivatives(
    mi, mf, W, D, R0, r0, qm, u0, um, u0dot, umdot, gravity, floating, tau, dq, du, H, dh
):
    """
    Return 0 or an error code; ``tau`` = ID, ``dq`` = d tau / d q, ``du`` = d tau / d u.

    ``H`` = d tau / d udot (the mass matrix), ``dh`` (6, N) = d h0 / d q of the momentum h0 =
    H[0:6] u (SPART's base rows).  Module docstring: coordinates and layout.
    """
    code = _check_motion(mi, R0, r0, qm, u0, um, u0dot, umdot)
    if code == 0:
        code = check_vector(gravity, 3, 10)
    if code == 0:
        code = _check_outputs(mi, D, 0, tau, dq, du, H)
    if code:
        return code
    return _id_derivatives(
        mi, mf, W, D, R0, r0, qm, u0, um, u0dot, umdot, gravity, floating, tau, dq, du, H, dh, True
    )


@compiled
def _cholesky(L, o, N):
    """Factor the symmetric block L[o:N, o:N] in place (lower triangle): 0 or an error code."""
    for j in range(o, N):
        d = L[j, j]
        for k in range(o, j):
            d -= L[j, k] * L[j, k]
        if not d > 1e-300:
            return _singular(d)
        d = np.sqrt(d)
        L[j, j] = d
        dinv = 1.0 / d  # one division per column, not one per entry
        for r in range(j + 1, N):
            s = L[r, j]
            for k in range(o, j):
                s -= L[r, k] * L[j, k]
            L[r, j] = s * dinv
    return 0


@compiled
def _invert_factor(L, o, N):
    """Overwrite the lower-triangular factor L[o:N, o:N] with its inverse (row by row)."""
    for i in range(o, N):
        d = 1.0 / L[i, i]
        L[i, i] = d
        for j in range(o, i):
            s = 0.0
            for k in range(j, i):
                s += L[i, k] * L[k, j]
            L[i, j] = -d * s


@compiled
def _negated_product(M, X, B, o, N, c0, c1):
    """
    X[o:N, c0:c1] = -M[o:N, o:N] X[o:N, c0:c1] (through the scratch block B, rows o..N-1).

    Four columns at a time in registers: no store inside the sum (twice the speed of the
    plain triple loop here).
    """
    for r in range(o, N):
        for c in range(c0, c1):
            B[r, c] = X[r, c]
    for r in range(o, N):
        c = c0
        while c + 4 <= c1:
            a0 = a1 = a2 = a3 = 0.0
            for k in range(o, N):
                m = M[r, k]
                a0 += m * B[k, c]
                a1 += m * B[k, c + 1]
                a2 += m * B[k, c + 2]
                a3 += m * B[k, c + 3]
            X[r, c] = -a0
            X[r, c + 1] = -a1
            X[r, c + 2] = -a2
            X[r, c + 3] = -a3
            c += 4
        while c < c1:
            a0 = 0.0
            for k in range(o, N):
                a0 += M[r, k] * B[k, c]
            X[r, c] = -a0
            c += 1


@compiled
def _fd_derivatives(
    mi, mf, W, D, R0, r0, qm, u0, um, tau0, taum, gravity, floating, out, dq, du, Minv, L
):
    """Forward dynamics and its derivatives (inputs checked by _aba); 0 or an error code."""
    nq = mi[1]
    N = 6 + nq
    code = _aba(mi, mf, W, R0, r0, qm, u0, um, tau0, taum, None, None, gravity, floating, out)
    if code:
        return code
    # L: rows 0..N-1 H, its factor, its inverse; N..2N-1 scratch; 2N tau; 2N+1.. the momentum's
    tau, dh = L[2 * N], L[2 * N + 1 : 2 * N + 7]
    code = _id_derivatives(
        mi,
        mf,
        W,
        D,
        R0,
        r0,
        qm,
        u0,
        um,
        out[0:6],
        out[6:N],
        gravity,
        floating,
        tau,
        dq,
        du,
        L[0:N],
        dh,
        False,
    )
    if code:
        return code
    o = 0 if floating else 6
    code = _cholesky(L, o, N)
    if code:
        return code
    _invert_factor(L, o, N)
    # H^-1 = L^-T L^-1
    for r in range(N):
        for c in range(N):
            Minv[r, c] = 0.0
    for r in range(o, N):
        for c in range(r, N):
            acc = 0.0
            for k in range(c, N):
                acc += L[k, r] * L[k, c]
            Minv[r, c] = acc
            Minv[c, r] = acc
    B = L[N : 2 * N]
    if floating:  # the base translation's columns are zero (see _id_derivatives)
        _negated_product(Minv, dq, B, 0, N, 0, 3)
        _negated_product(Minv, du, B, 0, N, 0, 3)
        _negated_product(Minv, dq, B, 0, N, 6, N)
        _negated_product(Minv, du, B, 0, N, 6, N)
    else:
        _negated_product(Minv, dq, B, o, N, o, N)
        _negated_product(Minv, du, B, o, N, o, N)
    if o:  # a fixed base: the joint block only
        for r in range(N):
            for c in range(N):
                if r < o or c < o:
                    dq[r, c] = 0.0
                    du[r, c] = 0.0
    ok = _finite(dq) and _finite(du) and _finite(Minv)
    return 0 if ok else OVERFLOW


@compiled
def aba_derivatives(
    mi, mf, W, D, R0, r0, qm, u0, um, tau0, taum, gravity, floating, out, dq, du, Minv, L
):
    """
    Return 0 or an error code; ``out`` = udot = FD, ``dq`` = d udot / d q, ``du`` = d udot / d u.

    ``Minv`` = d udot / d tau = H^-1 (a fixed base: its joint block, zeros elsewhere); ``L``
    (2 N + 7, N): scratch.
    """
    if L.shape[0] != 2 * (6 + mi[1]) + 7 or L.shape[1] != 6 + mi[1]:
        return BAD_SHAPE
    code = _check_outputs(mi, D, 0, out, dq, du, Minv)
    if code:
        return code
    return _fd_derivatives(
        mi, mf, W, D, R0, r0, qm, u0, um, tau0, taum, gravity, floating, out, dq, du, Minv, L
    )
