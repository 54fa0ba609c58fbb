"""
Rigid-body motions: exponential coordinates of rotations and poses (Modern Robotics, ch. 3).

Twists are ordered [angular; linear] like SPART's and Modern Robotics': a twist V = [w; v] of a
frame {b} is its body twist when w, v are expressed in {b} (MR's V_b: v = the velocity of
{b}'s origin in {b}'s axes), its spatial twist when expressed in the fixed frame {s} (MR's
V_s: v = the velocity of the point of the body at {s}'s origin).  Poses are 4x4 homogeneous
transforms T = [[R, p], [0, 0, 0, 1]] (the frame's rotation and origin in the fixed frame).

- :func:`rotation_vector` (log of SO(3)) and :func:`rotation_from_vector` (exp): the unit
  axis times the angle <-> the rotation matrix (MR: ``so3ToVec(MatrixLog3(R))``, ``MatrixExp3``);
- :func:`transform_log` (log of SE(3)) and :func:`transform_exp` (exp): the twist that moves
  the identity to T in unit time <-> T (MR: ``se3ToVec(MatrixLog6(T))``, ``MatrixExp6``);
- :func:`adjoint`: the 6x6 map of twists from {b} to {s}, V_s = Ad_T V_b (MR: ``Adjoint``).

Arguments are checked at the entry (InputError naming the argument: rotations orthonormal
within 1e-3 with det > 0, transforms with bottom row [0, 0, 0, 1]); results are finite (an
overflow is an InputError naming the input).  The underscored versions skip the checks, for
loops that checked their inputs once.
"""

import math

import numpy as np

from . import checks as chk
from .errors import InputError

__all__ = ['rotation_vector', 'rotation_from_vector', 'transform_log', 'transform_exp', 'adjoint']


def _skew(w):
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def _rotation_vector(R):
    """Rotation vector (unit axis * angle, angle in [0, pi]) of a rotation matrix (unchecked)."""
    w = 0.5 * np.array(
        [R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]]
    )  # sin(angle) axis
    s = math.sqrt(float(w @ w))
    c = 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0)
    angle = math.atan2(s, c)
    if s > 1e-6:
        return angle / s * w
    if c > 0:  # small angle: angle / sin(angle) ~ 1 + angle^2 / 6
        return (1.0 + angle * angle / 6.0) * w
    # angle near pi: the symmetric part (R + R') / 2 = c I + (1 - c) a a' gives a a' (the skew
    # part, sin(angle) [a]x, would tilt the axis by ~sin(angle) / 2)
    B = (0.5 * (R + R.T) - c * np.eye(3)) / (1.0 - c)
    k = int(np.argmax(np.diag(B)))
    axis = B[:, k] / math.sqrt(max(B[k, k], 1e-300))
    if axis @ w < 0:
        axis = -axis
    return angle * axis


def _rotation_from_vector(w):
    """Rodrigues' formula: exp([w]x) (unchecked)."""
    angle = math.sqrt(float(w @ w))
    W = _skew(w)
    if angle < 1e-8:  # second-order series (exact to rounding below 1e-8)
        return np.eye(3) + W + 0.5 * (W @ W)
    return (
        np.eye(3) + (math.sin(angle) / angle) * W + ((1.0 - math.cos(angle)) / angle**2) * (W @ W)
    )


def _transform_log(R, p):
    """[w; v] with exp([w; v]) = (R, p) (unchecked); MR's MatrixLog6."""
    w = _rotation_vector(R)
    angle = math.sqrt(float(w @ w))
    W = _skew(w)
    if angle < 1e-8:
        return np.concatenate([w, p - 0.5 * (W @ p)])
    # G^-1(angle) with w = angle * axis: I - W / 2 + (1 / angle^2) (1 - (angle / 2) cot(angle /
    # 2)) W^2
    half = 0.5 * angle
    k = (1.0 - half / math.tan(half)) / angle**2 if angle < math.pi - 1e-9 else 1.0 / angle**2
    return np.concatenate([w, p - 0.5 * (W @ p) + k * (W @ (W @ p))])


def _transform_exp(V):
    """4x4 exp([V]) of a twist V = [w; v] (unchecked); MR's MatrixExp6."""
    w, v = V[0:3], V[3:6]
    angle = math.sqrt(float(w @ w))
    T = np.eye(4)
    T[:3, :3] = _rotation_from_vector(w)
    W = _skew(w)
    if angle < 1e-8:
        T[:3, 3] = v + 0.5 * (W @ v)
    else:  # G(angle) v = (I + (1 - cos) / angle^2 W + (angle - sin) / angle^3 W^2) v
        T[:3, 3] = (
            v
            + ((1.0 - math.cos(angle)) / angle**2) * (W @ v)
            + ((angle - math.sin(angle)) / angle**3) * (W @ (W @ v))
        )
    return T


def _adjoint(R, p):
    A = np.zeros((6, 6))
    A[0:3, 0:3] = R
    A[3:6, 3:6] = R
    A[3:6, 0:3] = _skew(p) @ R
    return A


def checked_transform(name, T):
    """
    ``T`` as a float (4, 4) pose.

    Rotation block a rotation (within 1e-3, det > 0), bottom row [0, 0, 0, 1]; InputError naming
    ``name`` otherwise. Returns (R, p).
    """
    T = chk.numeric(name, chk.array(name, T, (4, 4)), 'a pose (numbers)')
    if not np.array_equal(T[3], [0.0, 0.0, 0.0, 1.0]):
        raise InputError(
            f'{name}: expected a homogeneous transform (bottom row [0, 0, 0, 1]), got bottom row '
            f'{T[3].tolist()}'
        )
    R = chk.rotation(f'{name} (its rotation block)', np.ascontiguousarray(T[:3, :3]))
    return R, np.ascontiguousarray(T[:3, 3])


def _numbers(name, x, shape):
    return chk.numeric(name, chk.array(name, x, shape), 'this function')


@chk.quietly
def rotation_vector(R):
    """
    Return the rotation vector (3,) = unit axis * angle (in [0, pi]) of ``R`` (3, 3).

    R = exp([w]x). (MR: so3ToVec(MatrixLog3(R)))
    """
    R = chk.numeric('R', chk.rotation('R', R), 'this function')
    return chk.results('rotation_vector', _rotation_vector(R), [('R', R)])


@chk.quietly
def rotation_from_vector(w):
    """
    Return the rotation matrix (3, 3) exp([w]x) of a rotation vector ``w`` (3,) (Rodrigues).

    (MR: MatrixExp3)
    """
    w = _numbers('w', chk.vector('w', w, 3), (3,))
    if chk.huge([('w', w)]):
        raise chk.overflow_error('rotation_from_vector', [('w', w)])
    return chk.results('rotation_from_vector', _rotation_from_vector(w), [('w', w)])


@chk.quietly
def transform_log(T):
    """
    Return the twist V = [w; v] (6,) with exp([V]) = ``T`` (4, 4).

    The constant body twist that moves a frame from the identity to T in unit time (the angle of w
    in [0, pi]). (MR: se3ToVec(MatrixLog6(T)))
    """
    R, p = checked_transform('T', T)
    return chk.results('transform_log', _transform_log(R, p), [('T', T)])


@chk.quietly
def transform_exp(V):
    """
    Return the pose exp([V]) (4, 4) reached from the identity by the twist ``V`` in unit time.

    ``V`` = [w; v] (6,) is constant. (MR: MatrixExp6(VecTose3(V)))
    """
    V = _numbers('V', chk.vector('V', V, 6), (6,))
    if chk.huge([('V', V)]):
        raise chk.overflow_error('transform_exp', [('V', V)])
    return chk.results('transform_exp', _transform_exp(V), [('V', V)])


@chk.quietly
def adjoint(T):
    """
    Return Ad_T (6, 6) of a pose ``T`` (4, 4) = (R, p).

    [[R, 0], [[p]x R, R]], so that the twist V_b of {b} in its own frame is V_s = Ad_T V_b in the
    frame where T is given. (MR: Adjoint)
    """
    R, p = checked_transform('T', T)
    return chk.results('adjoint', _adjoint(R, p), [('T', T)])
