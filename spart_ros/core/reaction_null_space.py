"""
Reaction null space: joint velocities that leave the base at rest (Nenchev, Yoshida et al.).

With the system momentum h0, the base moves with u0 = H0^-1 h0 + G um, G = -H0^-1 H0m
(:func:`reaction_jacobian`).  Joint velocities in the kernel of G add no base motion: for a
system at rest the base stays at rest.  Two variants:

- full (``attitude_only=False``): kernel of G (equivalently of H0m), base rotation AND
  translation undisturbed; needs n_q > rank(H0m) (at most 6);
- attitude only (``attitude_only=True``): kernel of G[0:3], the base angular velocity rows;
  the base CoM may translate.  This is the kernel of the arm's angular-momentum coupling
  about the SYSTEM CoM (the Schur complement of H0), not of H0m[0:3] (the coupling about the
  base CoM), which would hold only if the base also could not translate.

The basis comes from the SVD of the coupling rows; the rank uses the tolerance
``tol`` on singular values (default max(shape) * eps * largest singular value, as
numpy.linalg.matrix_rank).  Velocities and coupling rows are in SPART's u0 units (rad/s,
m/s per unit joint velocity).
"""

from collections import namedtuple

import numpy as np

from . import checks as chk
from .momentum import _matrices, solve_base

ReactionNullSpace = namedtuple('ReactionNullSpace', 'basis projector rank coupling')
ReactionNullSpace.__doc__ = """Reaction null space of a state.

``basis`` (n_q, k): orthonormal columns spanning the joint velocities with no base reaction
(k = n_q - rank, possibly 0); ``projector`` (n_q, n_q) = basis basis' (symmetric,
idempotent); ``rank`` of the coupling; ``coupling`` (6 or 3, n_q): the base-velocity rows
G = -H0^-1 H0m (or its angular rows) whose kernel this is."""


def null_space(A, tol=None):
    """
    Return (basis (n, k), rank): an orthonormal basis of the kernel of ``A`` (m, n), by SVD.

    ``tol``: the rank tolerance (None: numpy.linalg.matrix_rank's default).
    """
    A = chk.numeric('A', chk.array('A', A, (None, None)), 'null_space (an SVD)')
    return _kernel(A, None if tol is None else chk.nonnegative('tol', tol))


def _kernel(A, tol):
    """:func:`null_space` of a checked float array ``A`` and a checked ``tol`` (or None)."""
    m, n = A.shape
    if n == 0:
        return np.zeros((0, 0)), 0
    _, s, Vt = np.linalg.svd(A, full_matrices=True)
    if tol is None:
        tol = max(m, n) * np.finfo(float).eps * (s[0] if s.size else 0.0)
    rank = int(np.count_nonzero(s > tol))
    return Vt[rank:].T.copy(), rank


def reaction_null_space(H0, H0m, attitude_only=False, tol=None):
    """
    Return the reaction null space of a state, a :class:`ReactionNullSpace`.

    The state's base inertia blocks are ``H0`` (6, 6) and ``H0m`` (6, n_q).

    Joint velocities ``basis @ y`` (any y) leave u0 (or, with ``attitude_only``, the base
    angular velocity) at its momentum-only value H0^-1 h0: zero for a system at rest.
    ``projector @ um`` removes the reacting part of any um.  ``tol``: the rank tolerance (None:
    numpy.linalg.matrix_rank's default).
    """
    where = 'reaction_null_space (a linear solve, an SVD)'
    H0, H0m = _matrices(H0, H0m)
    H0m = chk.numeric('H0m', H0m, where)
    attitude_only = chk.flag('attitude_only', attitude_only)
    if tol is not None:
        tol = chk.nonnegative('tol', tol)
    G = -solve_base(H0, H0m, 'reaction_null_space', [('H0', H0), ('H0m', H0m)])
    coupling = G[0:3] if attitude_only else G
    basis, rank = _kernel(coupling, tol)
    return ReactionNullSpace(basis, basis @ basis.T, rank, coupling)
