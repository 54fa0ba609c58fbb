"""
Compiled batches: one call runs a kernel for the states ``start .. stop - 1`` of stacked inputs.

Inputs are stacked along a first axis (``R0s`` (m, 3, 3), ``r0s`` (m, 3), ``qms`` (m, n_q) ...),
outputs too, given by the caller (C-ordered).  Each state is one call of the single-state entry
kernel (:mod:`.kernels`, :mod:`.derivatives`) on the caller's workspace, so a batch gives exactly
the single calls' results.  Compiled to run without the GIL (:data:`.exports.NOGIL`): two threads,
each with its own workspace and range of states, run on two cores.  Return 0, or ``1000 k + code``
for the first state k whose call returned the error ``code``.
"""

from .derivatives import aba_derivatives, rnea_derivatives
from .kernels import aba, compiled, crba, jacobian, rnea

#: the error code of state k is returned as STRIDE * k + code
STRIDE = 1000


@compiled
def rnea_batch(
    mi, mf, W, R0s, r0s, qms, u0s, ums, u0dots, umdots, gravity, floating, start, stop, out
):
    """out[k] = [tau0; taum] of state k (inverse dynamics)."""
    for k in range(start, stop):
        code = rnea(
            mi,
            mf,
            W,
            R0s[k],
            r0s[k],
            qms[k],
            u0s[k],
            ums[k],
            u0dots[k],
            umdots[k],
            gravity,
            floating,
            out[k],
        )
        if code:
            return STRIDE * k + code
    return 0


@compiled
def aba_batch(
    mi, mf, W, R0s, r0s, qms, u0s, ums, tau0s, taums, gravity, floating, start, stop, out
):
    """out[k] = [u0dot; umdot] of state k (forward dynamics)."""
    for k in range(start, stop):
        code = aba(
            mi,
            mf,
            W,
            R0s[k],
            r0s[k],
            qms[k],
            u0s[k],
            ums[k],
            tau0s[k],
            taums[k],
            gravity,
            floating,
            out[k],
        )
        if code:
            return STRIDE * k + code
    return 0


@compiled
def crba_batch(mi, mf, W, R0s, r0s, qms, start, stop, H):
    """H[k] = the mass matrix of state k."""
    for k in range(start, stop):
        code = crba(mi, mf, W, R0s[k], r0s[k], qms[k], H[k])
        if code:
            return STRIDE * k + code
    return 0


@compiled
def jacobian_batch(mi, mf, W, R0s, r0s, qms, link, offset, start, stop, J):
    """J[k] = the Jacobian (6, 6 + n_q) of the point ``offset`` on ``link`` at state k."""
    for k in range(start, stop):
        code = jacobian(mi, mf, W, R0s[k], r0s[k], qms[k], link, offset, J[k])
        if code:
            return STRIDE * k + code
    return 0


@compiled
def rnea_derivatives_batch(
    mi,
    mf,
    W,
    D,
    R0s,
    r0s,
    qms,
    u0s,
    ums,
    u0dots,
    umdots,
    gravity,
    floating,
    start,
    stop,
    tau,
    dq,
    du,
    H,
    dh,
):
    """:func:`.derivatives.rnea_derivatives` of each state k into tau[k], dq[k] ... dh[k]."""
    for k in range(start, stop):
        code = rnea_derivatives(
            mi,
            mf,
            W,
            D,
            R0s[k],
            r0s[k],
            qms[k],
            u0s[k],
            ums[k],
            u0dots[k],
            umdots[k],
            gravity,
            floating,
            tau[k],
            dq[k],
            du[k],
            H[k],
            dh[k],
        )
        if code:
            return STRIDE * k + code
    return 0


@compiled
def aba_derivatives_batch(
    mi,
    mf,
    W,
    D,
    R0s,
    r0s,
    qms,
    u0s,
    ums,
    tau0s,
    taums,
    gravity,
    floating,
    start,
    stop,
    out,
    dq,
    du,
    Minv,
    L,
):
    """:func:`.derivatives.aba_derivatives` of each state k into out[k], dq[k], du[k], Minv[k]."""
    for k in range(start, stop):
        code = aba_derivatives(
            mi,
            mf,
            W,
            D,
            R0s[k],
            r0s[k],
            qms[k],
            u0s[k],
            ums[k],
            tau0s[k],
            taums[k],
            gravity,
            floating,
            out[k],
            dq[k],
            du[k],
            Minv[k],
            L,
        )
        if code:
            return STRIDE * k + code
    return 0
