"""
Compiled batches: one call runs a kernel for the states ``claim[0] .. stop - 1`` of stacked inputs.

Inputs are stacked along a first axis (``R0s`` (m, 3, 3), ``r0s`` (m, 3), ``qms`` (m, n_q) ...),
outputs too, given by the caller (C-ordered). Each state is one call of the single-state entry
kernel (:mod:`.kernels`, :mod:`.derivatives`) on the caller's workspace, so a batch gives exactly
the single calls' results. Compiled to run without the GIL (:data:`.exports.NOGIL`): two threads,
each with its own workspace, run on two cores and share the range: each claims ``chunk`` states at
a time from the counter ``claim`` (int64 (1,): the next unclaimed state, set by the caller to the
first state; an atomic add), so that a thread that starts late or runs slower (a busy core) takes
fewer chunks instead of being waited for. One thread alone: ``chunk`` = all the states. Return 0,
or ``1000 k + code`` for the first state k of this thread's chunks whose call returned the error
``code`` (it stops there; the smallest k of both threads is the first bad state of the range: every
chunk below it was computed to its end).
"""

from numba.core import types
from numba.extending import intrinsic

from .derivatives import aba_derivatives, rnea_derivatives
from .kernels import aba, compiled, crba, jacobian, rnea


@intrinsic
def _fetch_add(typingctx, claim, step):
    """Add ``step`` to claim[0] atomically (int64 (1,) array); return its previous value."""
    sig = types.int64(claim, step)

    def codegen(context, builder, signature, args):
        array = context.make_array(signature.args[0])(context, builder, args[0])
        add = context.cast(builder, args[1], signature.args[1], types.int64)
        return builder.atomic_rmw('add', array.data, add, 'seq_cst')

    return sig, codegen


#: the error code of state k is returned as STRIDE * k + code
STRIDE = 1000


@compiled
def rnea_batch(
    mi, mf, W, R0s, r0s, qms, u0s, ums, u0dots, umdots, gravity, floating, stop, chunk, claim, out
):
    """out[k] = [tau0; taum] of state k (inverse dynamics)."""
    lo = _fetch_add(claim, chunk)
    while lo < stop:
        for k in range(lo, min(lo + chunk, stop)):
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
        lo = _fetch_add(claim, chunk)
    return 0


@compiled
def aba_batch(
    mi, mf, W, R0s, r0s, qms, u0s, ums, tau0s, taums, gravity, floating, stop, chunk, claim, out
):
    """out[k] = [u0dot; umdot] of state k (forward dynamics)."""
    lo = _fetch_add(claim, chunk)
    while lo < stop:
        for k in range(lo, min(lo + chunk, stop)):
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
        lo = _fetch_add(claim, chunk)
    return 0


@compiled
def crba_batch(mi, mf, W, R0s, r0s, qms, stop, chunk, claim, H):
    """H[k] = the mass matrix of state k."""
    lo = _fetch_add(claim, chunk)
    while lo < stop:
        for k in range(lo, min(lo + chunk, stop)):
            code = crba(mi, mf, W, R0s[k], r0s[k], qms[k], H[k])
            if code:
                return STRIDE * k + code
        lo = _fetch_add(claim, chunk)
    return 0


@compiled
def jacobian_batch(mi, mf, W, R0s, r0s, qms, link, offset, stop, chunk, claim, J):
    """J[k] = the Jacobian (6, 6 + n_q) of the point ``offset`` on ``link`` at state k."""
    lo = _fetch_add(claim, chunk)
    while lo < stop:
        for k in range(lo, min(lo + chunk, stop)):
            code = jacobian(mi, mf, W, R0s[k], r0s[k], qms[k], link, offset, J[k])
            if code:
                return STRIDE * k + code
        lo = _fetch_add(claim, chunk)
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
    stop,
    chunk,
    claim,
    tau,
    dq,
    du,
    H,
    dh,
):
    """:func:`.derivatives.rnea_derivatives` of each state k into tau[k], dq[k] ... dh[k]."""
    lo = _fetch_add(claim, chunk)
    while lo < stop:
        for k in range(lo, min(lo + chunk, stop)):
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
        lo = _fetch_add(claim, chunk)
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
    stop,
    chunk,
    claim,
    out,
    dq,
    du,
    Minv,
    L,
):
    """:func:`.derivatives.aba_derivatives` of each state k into out[k], dq[k], du[k], Minv[k]."""
    lo = _fetch_add(claim, chunk)
    while lo < stop:
        for k in range(lo, min(lo + chunk, stop)):
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
        lo = _fetch_add(claim, chunk)
    return 0
