"""
Batches on the compiled fast path: m states in one call, on both cores.

Inverse and forward dynamics, mass matrix, Jacobian and the analytic derivatives.

:class:`Batch` takes a :class:`~spart_ros.core.fast.FastDynamics`' model (robot, gravity, joint
dynamics) and states stacked along a first axis: ``R0s`` (m, 3, 3), ``r0s`` (m, 3), ``qms`` (m,
n_q), ``u0s`` (m, 6), ``ums`` (m, n_q) and the accelerations or generalized forces likewise
(SPART's conventions, as the single calls).  Each state is computed by the same compiled kernel
as the single call, so the results are the single calls' to the last bit.  Outputs are stacked
the same way: the caller's preallocated ``out`` arrays when given (float64, C-ordered, of the
shape named), else this object's own, kept for the next call with the same m (overwritten by
it: copy to keep).

Both cores: the compiled batch kernels run without the GIL (:mod:`spart_ros.native.batch`); a
call of ``m >= min_split`` states runs on the calling thread and a helper thread (one per Batch,
started on first use) at once, each on its own workspace, each claiming the next chunk of states
when done with one (so a thread that starts late or gets less of a busy machine does less).
``threads=1`` keeps everything in the calling thread.  One Batch is for one caller at a time.
"""

from concurrent.futures import ThreadPoolExecutor
import os

import numpy as np

from .. import checks as chk
from ..errors import InputError
from ...native import batch as NB
from ...native import compiled as N
from ...native import derivatives as DL
from ...native import layout as L

__all__ = ['Batch']

_KINDS = {
    name: N.KINDS[name]
    for name in (
        'rnea_batch',
        'aba_batch',
        'crba_batch',
        'jacobian_batch',
        'rnea_derivatives_batch',
        'aba_derivatives_batch',
    )
}


class Batch:
    """
    Stacked evaluations of one model's dynamics (module docstring).

    ``dynamics``: a FastDynamics (its model is used, nothing copied); ``threads``: 1 or 2 (default:
    2 when the machine has two cores or more); ``min_split``: the fewest states split between the
    two threads (below it a second thread costs more than it saves).
    """

    def __init__(self, dynamics, threads=None, min_split=32):
        model = getattr(dynamics, 'model', None)
        if model is None or not hasattr(dynamics, 'new_workspace'):
            raise InputError(
                'dynamics: expected a FastDynamics (spart_ros.core.fast), got '
                f'{chk.given(dynamics)}'
            )
        if threads is None:
            threads = 2 if (os.cpu_count() or 1) >= 2 else 1
        if threads not in (1, 2):
            raise InputError(f'threads: expected 1 or 2, got {threads!r}')
        self.dynamics, self.model, self.robot = dynamics, model, dynamics.robot
        self.n, self.n_q = n, nq = model.n, model.n_q
        self.size = 6 + nq
        self.threads, self.min_split = threads, int(min_split)
        self._mi, self._mf, self._gravity = model.mi, model.mf, model.gravity
        self._W = [np.zeros((n + 2, L.WS_COLS)) for _ in range(threads)]
        self._D = [np.zeros((n + 8, DL.D_COLS)) for _ in range(threads)]
        self._L = [np.zeros((2 * self.size + 7, self.size)) for _ in range(threads)]
        self._claim = np.zeros(1, dtype=np.int64)  # the threads' shared counter (native.batch)
        self._pool = None
        self._buffers = {}

    # -- plumbing ---------------------------------------------------------------------------
    def _stack(self, name, a, m, shape):
        """Return ``a`` as an (m,) + shape float64 array (converted unless it is one)."""
        if type(a) is not np.ndarray or a.dtype != np.float64 or a.shape != (m,) + shape:
            try:
                a = np.array(a, dtype=float)
            except (TypeError, ValueError):
                raise InputError(f'{name}: expected numbers, got {chk.given(a)}') from None
            if a.shape != (m,) + shape:
                raise InputError(
                    f'{name}: expected shape {(m,) + shape} (one row per state), got {a.shape}'
                )
        return a

    def _states(self, R0s, r0s, qms):
        R0s = np.asarray(R0s) if type(R0s) is not np.ndarray else R0s
        if R0s.ndim != 3:
            raise InputError(f'R0s: expected shape (m, 3, 3), got {np.shape(R0s)}')
        m = R0s.shape[0]
        return (
            m,
            self._stack('R0s', R0s, m, (3, 3)),
            self._stack('r0s', r0s, m, (3,)),
            self._stack('qms', qms, m, (self.n_q,)),
        )

    def _out(self, key, out, shape):
        if out is None:
            out = self._buffers.get(key)
            if out is None or out.shape != shape:
                out = self._buffers[key] = np.zeros(shape)
            return out
        if (
            type(out) is not np.ndarray
            or out.dtype != np.float64
            or out.shape != shape
            or not out.flags.c_contiguous
        ):
            raise InputError(
                f'out: expected a C-ordered float64 array of shape {shape}, got {chk.given(out)}'
            )
        return out

    def _run(self, name, m, make_args):
        """Run batch kernel ``name`` over m states (shared by the threads); raise on error."""
        kernel, kinds = getattr(N, name), _KINDS[name]
        claim = self._claim
        claim[0] = 0
        if self.threads == 2 and m >= self.min_split:
            # chunks of a 32nd of the states (at most 64): the one left when the other thread
            # finishes is short, and claiming one costs an atomic add
            chunk = min(64, max(1, m // 32))
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix='spart_batch')
            job = self._pool.submit(N.call, kernel, kinds, *make_args(1, m, chunk, claim))
            code = N.call(kernel, kinds, *make_args(0, m, chunk, claim))
            other = job.result()
            codes = [c for c in (code, other) if c]
        else:
            code = N.call(kernel, kinds, *make_args(0, m, max(m, 1), claim))
            codes = [code] if code else []
        if codes:
            # each thread stops at its first bad state: the smaller one is the range's first
            self._raise(min(codes, key=lambda c: -1 if c is None else c // NB.STRIDE), name)

    def _raise(self, code, name):
        if code is None:  # an argument of another type (checked before: should not happen)
            raise InputError(f'{name}: an argument is not a float64 array of the expected rank')
        k, code = divmod(code, NB.STRIDE)
        kind, arg = divmod(code, 100)
        what = L.ARGUMENT_NAMES[arg] if 0 < arg < len(L.ARGUMENT_NAMES) else ''
        reason = {
            1: 'wrong shape',
            2: 'not finite',
            3: 'singular inertia',
            4: 'not a rotation',
            5: 'the result overflows',
        }.get(kind, f'error code {code}')
        raise InputError(f'{name}: state {k}: ' + (f'{what}s[{k}]: ' if what else '') + reason)

    def _batch(self, name, states, inputs, outputs, floating=None, extra=(), workspace=False):
        """
        Run batch kernel ``name`` and return its outputs (the module docstring).

        ``states`` = (R0s, r0s, qms); ``inputs``: [(name, array, shape of one state)] stacked
        after them; ``outputs``: [(key, the caller's array or None, shape of one state)];
        ``floating``: the flag (with the model's gravity before it) of the kernels that take one;
        ``extra``: arguments after the inputs; ``workspace``: the kernel takes the derivative
        workspace D (after W) and, for forward dynamics, its scratch matrix (last).
        """
        m, R0s, r0s, qms = self._states(*states)
        xs = [self._stack(n, a, m, shape) for n, a, shape in inputs]
        if floating is not None:
            fl = chk.flag('floating', floating)
            if name.startswith('aba') and not self.dynamics._invertible[0 if fl else 1]:
                self.dynamics._check_invertible(fl)
            xs += [self._gravity, fl]
        outs = [self._out(key, o, (m,) + shape) for key, o, shape in outputs]
        D = self._D if workspace else None
        scratch = self._L if workspace and name.startswith('aba') else None

        def args(t, stop, chunk, claim):
            ws = (self._W[t],) if D is None else (self._W[t], D[t])
            last = () if scratch is None else (scratch[t],)
            return (
                self._mi,
                self._mf,
                *ws,
                R0s,
                r0s,
                qms,
                *xs,
                *extra,
                stop,
                chunk,
                claim,
                *outs,
                *last,
            )

        self._run(name, m, args)
        return outs

    # -- batches ----------------------------------------------------------------------------
    def inverse_dynamics(self, R0s, r0s, qms, u0s, ums, u0dots, umdots, floating=True, out=None):
        """
        Return tau (m, 6 + n_q): [tau0; taum] of each state (the fast path's inverse_dynamics).

        ``R0s`` (m, 3, 3), ``r0s`` (m, 3), ``qms``, ``ums``, ``umdots`` (m, n_q), ``u0s``,
        ``u0dots`` (m, 6); ``floating`` False pins the base; ``out`` (m, 6 + n_q): the caller's.
        """
        nq = self.n_q
        inputs = [('u0s', u0s, (6,)), ('ums', ums, (nq,))]
        inputs += [('u0dots', u0dots, (6,)), ('umdots', umdots, (nq,))]
        outputs = [('id', out, (self.size,))]
        return self._batch('rnea_batch', (R0s, r0s, qms), inputs, outputs, floating)[0]

    def forward_dynamics(self, R0s, r0s, qms, u0s, ums, tau0s, taums, floating=True, out=None):
        """
        Return udot (m, 6 + n_q): [u0dot; umdot] of each state (the fast path's forward_dynamics).

        ``R0s`` (m, 3, 3), ``r0s`` (m, 3), ``qms``, ``ums``, ``taums`` (m, n_q), ``u0s``,
        ``tau0s`` (m, 6); ``floating`` False pins the base; ``out`` (m, 6 + n_q): the caller's.
        """
        nq = self.n_q
        inputs = [('u0s', u0s, (6,)), ('ums', ums, (nq,))]
        inputs += [('tau0s', tau0s, (6,)), ('taums', taums, (nq,))]
        outputs = [('fd', out, (self.size,))]
        return self._batch('aba_batch', (R0s, r0s, qms), inputs, outputs, floating)[0]

    def mass_matrix(self, R0s, r0s, qms, out=None):
        """
        Return H (m, 6 + n_q, 6 + n_q) of each state (the fast path's mass_matrix).

        ``R0s`` (m, 3, 3), ``r0s`` (m, 3), ``qms`` (m, n_q); ``out``: the caller's array.
        """
        outputs = [('H', out, (self.size, self.size))]
        return self._batch('crba_batch', (R0s, r0s, qms), [], outputs)[0]

    def jacobian(self, link, R0s, r0s, qms, offset=None, out=None):
        """
        Return J (m, 6, 6 + n_q) of a point on ``link`` at each state (the fast path's jacobian).

        ``link``: SPART id (0 = base) or name; ``offset`` (3,): the point in the link CoM frame;
        ``R0s`` (m, 3, 3), ``r0s`` (m, 3), ``qms`` (m, n_q); ``out``: the caller's array.
        """
        link = chk.link_id('link', link, self.robot)
        offset = np.zeros(3) if offset is None else chk.vector('offset', offset, 3)
        outputs = [('J', out, (6, self.size))]
        return self._batch('jacobian_batch', (R0s, r0s, qms), [], outputs, extra=(link, offset))[0]

    def inverse_dynamics_derivatives(
        self, R0s, r0s, qms, u0s, ums, u0dots, umdots, floating=True, out=None
    ):
        """
        Return (tau, dtau_dq, dtau_du, H, dh0_dq), stacked (m, ...), of each state.

        :meth:`DynamicsDerivatives.inverse_dynamics
        <spart_ros.core.fast.derivatives.DynamicsDerivatives.inverse_dynamics>` per state, and the
        derivative of SPART's momentum h0 = H[0:6] u (m, 6, N) at constant u
        (:meth:`DynamicsDerivatives.momentum
        <spart_ros.core.fast.derivatives.DynamicsDerivatives.momentum>`).  ``R0s`` (m, 3, 3),
        ``r0s`` (m, 3), ``qms``, ``ums``, ``umdots`` (m, n_q), ``u0s``, ``u0dots`` (m, 6): the
        states and accelerations; ``floating`` False pins the base; ``out``: the caller's 5
        arrays ((m, N), 3 x (m, N, N), (m, 6, N), N = 6 + n_q).
        """
        nq, N = self.n_q, self.size
        inputs = [('u0s', u0s, (6,)), ('ums', ums, (nq,))]
        inputs += [('u0dots', u0dots, (6,)), ('umdots', umdots, (nq,))]
        shapes = ((N,), (N, N), (N, N), (N, N), (6, N))
        outputs = [(f'idd{k}', None if out is None else out[k], s) for k, s in enumerate(shapes)]
        return tuple(
            self._batch(
                'rnea_derivatives_batch',
                (R0s, r0s, qms),
                inputs,
                outputs,
                floating,
                workspace=True,
            )
        )

    def forward_dynamics_derivatives(
        self, R0s, r0s, qms, u0s, ums, tau0s, taums, floating=True, out=None
    ):
        """
        Return (udot, dudot_dq, dudot_du, H^-1), stacked (m, ...), of each state.

        :meth:`DynamicsDerivatives.forward_dynamics
        <spart_ros.core.fast.derivatives.DynamicsDerivatives.forward_dynamics>` per state.
        ``R0s`` (m, 3, 3), ``r0s`` (m, 3), ``qms``, ``ums``, ``taums`` (m, n_q), ``u0s``,
        ``tau0s`` (m, 6): the states and generalized forces; ``floating`` False pins the base;
        ``out``: the caller's 4 arrays ((m, N), 3 x (m, N, N)).
        """
        nq, N = self.n_q, self.size
        inputs = [('u0s', u0s, (6,)), ('ums', ums, (nq,))]
        inputs += [('tau0s', tau0s, (6,)), ('taums', taums, (nq,))]
        shapes = ((N,), (N, N), (N, N), (N, N))
        outputs = [(f'fdd{k}', None if out is None else out[k], s) for k, s in enumerate(shapes)]
        return tuple(
            self._batch(
                'aba_derivatives_batch',
                (R0s, r0s, qms),
                inputs,
                outputs,
                floating,
                workspace=True,
            )
        )
