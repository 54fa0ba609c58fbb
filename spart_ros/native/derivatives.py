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

No kernel allocates: the caller gives the derivative workspace ``D`` (float64, (n + 8, D_COLS)),
the outputs and, for forward dynamics, a scratch matrix ``L`` (2 (6 + n_q) + 7, 6 + n_q).  The batch
kernels loop over a range of states (the caller splits the range between threads: they run
without the GIL).
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
    aba,
    base_generalized_force,
    base_motion,
    base_transpose_times,
    check_pose,
    check_state,
    check_vector,
    compiled,
    crba,
    forward_kinematics,
    jacobian,
    rnea,
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
    NOT_FINITE,
    OVERFLOW,
    R,
    S,
    V,
)

# --- derivative workspace columns (per row of D) ----------------------------------------------
# rows 0..n: bodies (their joint's column data); rows n+1..n+6: the six base columns; row n+7:
# scratch.  M1 = sum over the subtree of I_j crm(v_j) (row-major 6x6), HC = sum of I_j v_j.
M1, HC, SC, PSI, PSID, PSIV, ALPHA, BETA, GQ, GV, LAST, GH = (
    0,
    36,
    42,
    48,
    54,
    60,
    66,
    72,
    78,
    84,
    90,
    91,
)
D_COLS = 97


@compiled(inline='always')
def _mat6t_vec(M, v, out):
    """``out`` = M' v for a row-major 6x6 M."""
    for c in range(6):
        acc = 0.0
        for r in range(6):
            acc += M[6 * r + c] * v[r]
        out[c] = acc


@compiled
def _composite_b_times(D, i, x, out, tmp):
    """``out`` = B^C_i x = -(M1 x + M1' x) + x x* h^C (composite of body i)."""
    M = D[i, M1 : M1 + 36]
    _mat6_vec(M, x, out)
    _mat6t_vec(M, x, tmp)
    for k in range(6):
        out[k] = -(out[k] + tmp[k])
    _crf_add(x, D[i, HC : HC + 6], out)


@compiled
def _column_data(W, D, body, d, tmp, tmp2):
    """
    ALPHA = I^C S, BETA = B^C' S, GQ, GV of the column whose S, PSI, PSID, PSIV are in row ``d``.

    ``body``: the body carrying it (its composites in W and D).
    """
    s = D[d, SC : SC + 6]
    IC_b = W[body, IC : IC + 36]
    _mat6_vec(IC_b, s, D[d, ALPHA : ALPHA + 6])
    # BETA = B' S = -(M1 S + M1' S) - S x* h
    M = D[body, M1 : M1 + 36]
    beta = D[d, BETA : BETA + 6]
    _mat6_vec(M, s, beta)
    _mat6t_vec(M, s, tmp)
    for k in range(6):
        beta[k] = -(beta[k] + tmp[k])
    for k in range(6):
        tmp[k] = 0.0
    _crf_add(s, D[body, HC : HC + 6], tmp)
    for k in range(6):
        beta[k] -= tmp[k]
    # GQ = S x* F + I^C dPsi + B^C Psi;  GV = I^C Psiv + B^C S;  GH = S x* h^C + I^C Psi
    gq = D[d, GQ : GQ + 6]
    for k in range(6):
        gq[k] = 0.0
    _crf_add(s, W[body, F : F + 6], gq)
    _mat6_vec(IC_b, D[d, PSID : PSID + 6], tmp)
    for k in range(6):
        gq[k] += tmp[k]
    _composite_b_times(D, body, D[d, PSI : PSI + 6], tmp, tmp2)
    for k in range(6):
        gq[k] += tmp[k]
    gv = D[d, GV : GV + 6]
    _mat6_vec(IC_b, D[d, PSIV : PSIV + 6], gv)
    _composite_b_times(D, body, s, tmp, tmp2)
    for k in range(6):
        gv[k] += tmp[k]
    gh = D[d, GH : GH + 6]
    _mat6_vec(IC_b, D[d, PSI : PSI + 6], gh)
    _crf_add(s, D[body, HC : HC + 6], gh)


@compiled
def _id_derivatives(
    mi, mf, W, D, R0, r0, qm, u0, um, u0dot, umdot, gravity, floating, tau, dq, du, H, dh
):
    """
    The inverse dynamics and its derivatives (module docstring); the inputs checked already.

    ``tau`` (N,), ``dq``, ``du``, ``H`` (N, N), ``dh`` (6, N), N = 6 + n_q.
    """
    n, nq = mi[0], mi[1]
    N = 6 + nq
    forward_kinematics(mi, mf, W, R0, r0, qm)
    base_motion(W, u0, u0dot, floating, True)
    for k in range(3):  # gravity as the acceleration -g of the base's translation
        W[0, A + 3 + k] -= gravity[k]
    velocity_acceleration_pass(mi, W, um, umdot, True)
    scratch = D[n + 7]
    tmp, col, e, tmp2 = scratch[0:6], scratch[6:12], scratch[12:18], scratch[18:24]
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
        M = D[i, M1 : M1 + 36]
        for c in range(6):  # column c of I crm(v) = I (v x e_c)
            for k in range(6):
                e[k] = 0.0
            e[c] = 1.0
            _crm(v, e, tmp)
            _mat6_vec(Ii, tmp, col)
            for r in range(6):
                M[6 * r + c] = col[r]
        D[i, LAST] = i
    # composites, leaves to the base (a child's id is above its parent's)
    for i in range(n, 0, -1):
        p = mi[2 + 3 * (i - 1)]
        if mi[3 + 3 * (i - 1)] != FIXED:
            tau[6 + mi[4 + 3 * (i - 1)]] = _dot6(W[i, S : S + 6], W[i, F : F + 6])
        for k in range(36):
            W[p, IC + k] += W[i, IC + k]
            D[p, M1 + k] += D[i, M1 + k]
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
        _column_data(W, D, i, i, tmp, tmp2)
    for k in range(6):
        Vt[k] = 0.0
        At[k] = 0.0
    if floating:
        for k in range(3):
            Vt[3 + k] = u0[3 + k]
            At[3 + k] = u0dot[3 + k] - gravity[k]
    for c in range(6):
        d = n + 1 + c
        s = D[d, SC : SC + 6]
        for k in range(6):
            s[k] = 0.0
        if c < 3:
            for r in range(3):
                s[r] = W[0, R + 3 * r + c]
        else:
            s[c] = 1.0
        psi, psid, psiv = D[d, PSI : PSI + 6], D[d, PSID : PSID + 6], D[d, PSIV : PSIV + 6]
        _crm(Vt, s, psi)
        _crm(At, s, psid)
        _crm(Vt, psi, tmp)
        for k in range(6):
            psid[k] += tmp[k]
            psiv[k] = psi[k]
        if c < 3:
            _crm(W[0, V : V + 6], s, tmp)
            for k in range(6):
                psiv[k] += tmp[k]
        _column_data(W, D, 0, d, tmp, tmp2)
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
        mi, mf, W, D, R0, r0, qm, u0, um, u0dot, umdot, gravity, floating, tau, dq, du, H, dh
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
        for r in range(j + 1, N):
            s = L[r, j]
            for k in range(o, j):
                s -= L[r, k] * L[j, k]
            L[r, j] = s / d
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
def _negated_product(M, X, B, o, N):
    """X[o:N, o:N] = -M X (through the scratch block B, rows o..N-1)."""
    for r in range(o, N):
        for c in range(o, N):
            B[r, c] = X[r, c]
            X[r, c] = 0.0
    for r in range(o, N):
        for k in range(o, N):
            m = M[r, k]
            for c in range(o, N):
                X[r, c] -= m * B[k, c]


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
    _negated_product(Minv, dq, B, o, N)
    _negated_product(Minv, du, B, o, N)
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
