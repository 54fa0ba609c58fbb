"""
Damped least squares (the damped pseudo-inverse) with singular-region damping.

Joint-rate bounds.

x = A# b with A# = V diag(s_i / (s_i^2 + lambda^2)) U' minimizes ``|A x - b|^2`` + lambda^2
``|x|^2``.
Away from singularities lambda = 0 (exact pseudo-inverse, exact tracking); inside the
singular region (smallest singular value s_min below ``singular_region``) the damping rises
smoothly to ``damping`` (Nakamura and Hanafusa; Chiaverini 1997):

    lambda^2 = (1 - (s_min / singular_region)^2) damping^2   if s_min < singular_region

so ``|x|`` <= ``|b|`` / (2 lambda) near the singularity instead of ``|b|`` / s_min.  ``damping``
and
``singular_region`` are in the units of A's singular values (m per rad for position rows of a
Jacobian), or with ``relative=True`` fractions of A's largest singular value (for matrices with
no natural scale, e.g. the base reaction G = -H0^-1 H0m, whose size is the arm-to-base mass
ratio); ``singular_region=inf`` damps always (Tikhonov regularization with lambda = damping).
"""

from collections import namedtuple

import numpy as np

from ..core.checks import nonnegative

DampedInverse = namedtuple('DampedInverse', 'inverse null_basis singular_values damping rank')
DampedInverse.__doc__ = """Result of :func:`damped_pseudo_inverse` of A (m, n).

``inverse`` (n, m) the damped pseudo-inverse; ``null_basis`` (n, n - rank) orthonormal
basis of A's numerical kernel; ``singular_values`` (min(m, n),) descending; ``damping``
the lambda used; ``rank`` the numerical rank (singular values above max(m, n) eps s_max)."""


def check_damping(damping, singular_region):
    """Raise InputError unless ``damping`` and ``singular_region`` are finite and >= 0."""
    nonnegative('damping', damping)
    nonnegative('singular_region', singular_region)


def damped_pseudo_inverse(A, damping=0.0, singular_region=0.0, relative=False):
    """
    Return the damped pseudo-inverse of ``A`` (m, n) (see the module docstring).

    Returns a :class:`DampedInverse`.  ``damping`` = 0 gives the Moore-Penrose pseudo-inverse;
    ``singular_region``: the smallest singular value below which the damping rises;
    ``relative``: both are fractions of A's largest singular value.
    """
    m, n = A.shape
    U, s, Vt = np.linalg.svd(A, full_matrices=True)
    k = min(m, n)
    s_max = s[0] if k else 0.0
    if (
        relative
    ):  # fractions of s_max; a zero matrix: 0 (singular_region = inf: inf * 0 would be NaN)
        damping, singular_region = (
            (damping * s_max, singular_region * s_max) if s_max > 0 else (0.0, 0.0)
        )
    rank = int(np.count_nonzero(s > max(m, n) * np.finfo(float).eps * s_max)) if k else 0
    lam2 = 0.0
    s_min = s[k - 1] if k else 0.0
    if k and s_min < singular_region:
        lam2 = (1.0 - (s_min / singular_region) ** 2) * damping**2
    denom = s * s + lam2
    gain = np.divide(
        s, denom, out=np.zeros(k), where=np.arange(k) < rank if lam2 == 0.0 else denom > 0
    )
    inverse = (Vt[:k].T * gain) @ U[:, :k].T
    return DampedInverse(inverse, Vt[rank:].T, s, float(np.sqrt(lam2)), rank)


def bound_joint_rates(qd, max_rates):
    """
    Return (qd scaled, scale).

    ``qd`` (n,) times the largest scale <= 1 that keeps every ``|qd_i|`` within ``max_rates``
    (n,) (inf = no bound). Scaling the whole vector keeps the direction, so the end effector slows
    down along its
    path instead of leaving it.
    """
    over = np.abs(qd) > max_rates
    if not over.any():
        return qd, 1.0
    scale = float(np.min(max_rates[over] / np.abs(qd[over])))
    return qd * scale, scale
