"""
Manipulability of a point (Yoshikawa) and a dynamic-singularity measure for free-floating arms.

Fixed-base manipulability uses the fixed-base Jacobian Jm; the generalized manipulability
(Umetani and Yoshida) the generalized Jacobian J* (:func:`generalized_jacobian`), which
SPART's Workspace example maps over the workspace.  ``rows`` picks the task components
of the twist [wx, wy, wz, vx, vy, vz] (e.g. ``(3, 4)`` for a planar arm's x-y velocity);
mixing angular and linear rows mixes units (rad/s and m/s), so pick rows of one kind
when comparing numbers across robots.

Dynamic singularities are the states where J* loses rank although Jm may not (they depend
on the masses and on where the arm is, not only on the joint angles: Papadopoulos and
Dubowsky, 1991).  :func:`dynamic_singularity_measure` is the inverse condition number of J*
(sigma_min / sigma_max, in [0, 1]): 0 on a singularity of J*.
"""

import numpy as np

from . import checks as chk
from .errors import InputError

ALL_ROWS = (0, 1, 2, 3, 4, 5)


def task_rows(rows):
    """Return ``rows`` as a tuple of distinct indices into the 6 twist components (None = all)."""
    if rows is None:
        return ALL_ROWS
    expected = 'rows: expected distinct indices 0..5 of [wx, wy, wz, vx, vy, vz], got '
    try:
        out = tuple(int(r) for r in rows)
    except (TypeError, ValueError, OverflowError):
        raise InputError(expected + chk.given(rows)) from None
    if (
        not out
        or any(r != r0 for r, r0 in zip(out, rows))
        or any(not 0 <= r <= 5 for r in out)
        or len(set(out)) != len(out)
    ):
        raise InputError(expected + chk.given(rows))
    return out


def _task(J, rows, name='J'):
    J = chk.numeric(name, chk.array(name, J, (6, None)), 'an SVD')
    rows = task_rows(rows)
    return J if rows == ALL_ROWS else J[list(rows)]


def singular_values(J, rows=None, name='J'):
    """
    Return the singular values (descending) of the task rows of a Jacobian ``J`` (6, n).

    ``rows``: the task rows (None = all); ``name``: J's name in errors.
    """
    if not isinstance(name, str):
        raise InputError(
            f'name: expected the name of J for messages (a string), got {chk.given(name)}'
        )
    J = _task(J, rows, name)
    if J.size and float(np.abs(J).max()) > 1e150:  # its squares overflow inside the SVD
        raise InputError(
            f'{name}: too large: entries up to {float(np.abs(J).max()):.3g} overflow its singular '
            'value decomposition'
        )
    return np.linalg.svd(J, compute_uv=False)


def manipulability(J, rows=None):
    """
    Return Yoshikawa's manipulability of the task rows of ``J`` (6, n).

    The product of its min(m, n) singular values, = sqrt(det(J J')) when m <= n (m task rows).

    Pass the fixed-base Jacobian Jm for the fixed-base measure, J* for the generalized one.
    Units: those of J's rows (m or rad per joint unit) to the power min(m, n).
    """
    with chk.quiet():
        w = float(np.prod(singular_values(J, rows)))
    if not np.isfinite(w):
        raise InputError(
            'J: too large: its manipulability overflows (largest entry '
            f'{float(np.abs(J).max()):.3g})'
        )
    return w


def dynamic_singularity_measure(Jstar, rows=None):
    """
    Return sigma_min / sigma_max of the task rows of the generalized Jacobian ``Jstar`` (6, n_q).

    1 for an isotropic J*, 0 on a (dynamic or kinematic) singularity. A state where this is near 0
    while the same measure of Jm is not is a dynamic singularity.
    """
    s = singular_values(Jstar, rows, 'Jstar')
    return float(s[-1] / s[0]) if s.size and s[0] > 0 else 0.0
