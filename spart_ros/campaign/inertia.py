"""
Physically valid dispersions of an inertia tensor, and misalignments of a direction.

An inertia tensor about a body's centre of mass is valid when it is symmetric, its principal
moments are positive and each is at most the sum of the other two (the triangle inequality: the
body's mass lies somewhere in space).  :func:`disperse_inertia` changes the principal moments by
a draw (added, or as factors) and turns the principal axes by a small random rotation, and draws
again while the result is not valid: the distribution of the moments is the one asked for,
restricted to valid tensors (for dispersions of a few percent nothing is redrawn).

:func:`misalign` turns a unit vector by a drawn angle about an axis perpendicular to it, in a
direction (azimuth) drawn uniformly: a thruster's or a wheel's alignment error as a cone.
"""

import numpy as np

from ..core.errors import InputError

__all__ = ['inertia_problem', 'disperse_inertia', 'misalign', 'rotation_matrix', 'MAX_DRAWS']

#: draws of one inertia dispersion before giving up (a dispersion far too wide for the tensor)
MAX_DRAWS = 1000


def rotation_matrix(rotvec):
    """Return the rotation matrix (3, 3) of the rotation vector ``rotvec`` (3,) [rad]."""
    w = np.asarray(rotvec, dtype=float)
    angle = float(np.sqrt(w @ w))
    K = np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
    if angle < 1e-8:  # second order: exact to rounding at such angles
        return np.eye(3) + K + 0.5 * K @ K
    return np.eye(3) + np.sin(angle) / angle * K + (1.0 - np.cos(angle)) / angle**2 * K @ K


def _moments_problem(moments, tolerance):
    m = np.sort(moments)
    if m[0] <= 0:
        return f'principal moments {m.tolist()} not all positive'
    if m[2] > (m[0] + m[1]) * (1.0 + tolerance):
        return (
            f'principal moments {m.tolist()}: the largest exceeds the sum of the other two '
            '(the triangle inequality)'
        )
    return ''


def inertia_problem(inertia, tolerance=1e-12):
    """
    Return why the tensor ``inertia`` (3, 3) is not a valid inertia about a CoM, or ''.

    ``tolerance``: relative slack of the checks (rounding of a rotated tensor).
    """
    J = np.asarray(inertia, dtype=float)
    if J.shape != (3, 3) or not np.all(np.isfinite(J)):
        return 'not a finite 3x3 matrix'
    if np.abs(J - J.T).max() > tolerance * max(np.abs(J).max(), 1e-300):
        return 'not symmetric'
    return _moments_problem(np.linalg.eigvalsh(J), tolerance)


def disperse_inertia(inertia, draw_moments, axes_std, rng, apply, where):
    """
    Return a valid tensor (3, 3): ``inertia`` with its principal moments and axes dispersed.

    ``inertia`` (3, 3) about the CoM (valid); ``draw_moments(rng)``: returns the draw (3,) for the
    principal moments in ascending order; ``apply``: 'add' (moments + draw) or 'scale' (moments *
    draw) or 'set' (the draw); ``axes_std`` [rad]: std of each component of the rotation vector
    that turns the principal axes (0: not turned); ``rng``: the generator; ``where``: the
    parameter's name, for the message.  Redraws while the result is invalid (at most
    :data:`MAX_DRAWS` times, then InputError naming the dispersion).
    """
    problem = inertia_problem(inertia)
    if problem:
        raise InputError(f'{where}: the nominal inertia is not valid ({problem})')
    moments, axes = np.linalg.eigh(np.asarray(inertia, dtype=float))
    for _ in range(MAX_DRAWS):
        draw = np.asarray(draw_moments(rng), dtype=float)
        m = moments + draw if apply == 'add' else moments * draw if apply == 'scale' else draw
        # R diag(m) R' has the principal moments m: check them, not its rounded eigenvalues
        if _moments_problem(m, 1e-12):
            continue
        R = axes if not axes_std else rotation_matrix(axes_std * rng.standard_normal(3)) @ axes
        out = (R * m) @ R.T
        return (out + out.T) / 2
    raise InputError(
        f'{where}: {MAX_DRAWS} draws gave no valid inertia (positive principal moments, obeying '
        f'the triangle inequality; nominal moments {moments.tolist()}): the dispersion is too '
        'wide for this body'
    )


def misalign(direction, angle, azimuth):
    """
    Return the unit vector ``direction`` (3,) turned by ``angle`` [rad].

    The rotation axis is perpendicular to ``direction``, at ``azimuth`` [rad] about it from a
    fixed perpendicular (the cross product with the base axis least aligned with it).
    """
    d = np.asarray(direction, dtype=float)
    d = d / np.linalg.norm(d)
    e = np.eye(3)[int(np.argmin(np.abs(d)))]
    u = np.cross(d, e)
    u /= np.linalg.norm(u)
    v = np.cross(d, u)
    axis = np.cos(azimuth) * u + np.sin(azimuth) * v
    return rotation_matrix(float(angle) * axis) @ d
