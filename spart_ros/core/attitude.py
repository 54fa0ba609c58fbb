"""
Attitude helpers: skew matrices, rotations, DCMs, Euler angles, quaternions.

SPART's attitude functions return Direction Cosine Matrices (DCM): the
matrix that maps inertial-frame components to body-frame components, i.e.
the TRANSPOSE of the active rotation of the body.  SPART quaternions are
[x, y, z, w] (vector first, scalar last) -- the same order as ROS messages'
fields, but remember that quaternion_dcm returns the transpose of
tf_transformations.quaternion_matrix.

Every public function checks its arguments (spart_ros.core._checks): real,
finite, of the right shape; a DCM or rotation argument must be orthonormal
(R'R = I within 1e-3, det > 0); a quaternion or rotation axis must be non-zero
and is normalized when ``| |q|^2 - 1 | <= 0.01`` (the tolerance tf2 applies to ROS
quaternions), an InputError beyond.  Symbolic (sympy) arguments get the shape
checks only.  The underscored twins skip the checks, for the library's inner loops.
"""

import numpy as np

from . import _backend as bk
from . import checks as chk


def _skew(x):
    S = bk.zeros((3, 3), x)
    S[0, 1], S[0, 2] = -x[2], x[1]
    S[1, 0], S[1, 2] = x[2], -x[0]
    S[2, 0], S[2, 1] = -x[1], x[0]
    return S


def skew_symmetric(x):
    """
    Return [x]x, the (3, 3) matrix whose product with a 3-vector y is cross(x, y).

    (SPART: SkewSym)
    """
    return _skew(chk.vector('x', x, 3))


def _cross(a, b):
    out = bk.zeros(3, a, b)
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]
    return out


def cross(a, b):
    """
    Return the cross product a x b of two 3-vectors, written out.

    np.cross is slow and mishandles object arrays.
    """
    a, b = chk.vector('a', a, 3), chk.vector('b', b, 3)
    with chk.quiet():
        out = _cross(a, b)
    return chk.results('cross', out, (('a', a), ('b', b)))


def _quaternion_dcm(q):
    q1, q2, q3, q4 = q[0], q[1], q[2], q[3]
    D = bk.zeros((3, 3), q)
    D[0, 0] = 1 - 2 * (q2**2 + q3**2)
    D[0, 1] = 2 * (q1 * q2 + q3 * q4)
    D[0, 2] = 2 * (q1 * q3 - q2 * q4)
    D[1, 0] = 2 * (q2 * q1 - q3 * q4)
    D[1, 1] = 1 - 2 * (q1**2 + q3**2)
    D[1, 2] = 2 * (q2 * q3 + q1 * q4)
    D[2, 0] = 2 * (q3 * q1 + q2 * q4)
    D[2, 1] = 2 * (q3 * q2 - q1 * q4)
    D[2, 2] = 1 - 2 * (q1**2 + q2**2)
    return D


def quaternion_dcm(q):
    """
    DCM of the quaternion q = [x, y, z, w] (scalar last).

    (SPART: quat_DCM)

    Returns the (3, 3) DCM, inertial -> body, i.e. the transpose of the active
    rotation matrix of q.  q is normalized first (InputError if it is zero or
    far from unit, see the module docstring).
    """
    return _quaternion_dcm(chk.quaternion('q', q))


def _dcm_quaternion(D):
    tr = D[0, 0] + D[1, 1] + D[2, 2]
    qs = np.array([1 + 2 * D[0, 0] - tr, 1 + 2 * D[1, 1] - tr, 1 + 2 * D[2, 2] - tr, 1 + tr]) / 4
    k = int(np.argmax(qs))
    ql = np.sqrt(qs[k])
    if k == 0:
        q = [
            ql,
            (D[0, 1] + D[1, 0]) / (4 * ql),
            (D[2, 0] + D[0, 2]) / (4 * ql),
            (D[1, 2] - D[2, 1]) / (4 * ql),
        ]
    elif k == 1:
        q = [
            (D[0, 1] + D[1, 0]) / (4 * ql),
            ql,
            (D[1, 2] + D[2, 1]) / (4 * ql),
            (D[2, 0] - D[0, 2]) / (4 * ql),
        ]
    elif k == 2:
        q = [
            (D[2, 0] + D[0, 2]) / (4 * ql),
            (D[1, 2] + D[2, 1]) / (4 * ql),
            ql,
            (D[0, 1] - D[1, 0]) / (4 * ql),
        ]
    else:
        q = [
            (D[1, 2] - D[2, 1]) / (4 * ql),
            (D[2, 0] - D[0, 2]) / (4 * ql),
            (D[0, 1] - D[1, 0]) / (4 * ql),
            ql,
        ]
    return np.array(q)


def dcm_quaternion(DCM):
    """
    Return the quaternion [x, y, z, w] of a DCM (inverse of quaternion_dcm).

    (SPART: DCM_quat)

    Uses the largest of the four squared components (Shepperd), as SPART does,
    so it is accurate for every rotation; the sign follows that component.
    ``DCM`` must be a numeric rotation matrix.
    """
    return _dcm_quaternion(_numeric_rotation('DCM', DCM, 'dcm_quaternion (DCM_quat)'))


def _numeric_rotation(name, R, where):
    return chk.numeric(name, chk.rotation(name, R), where)


def _euler_axis_dcm(e, alpha):
    s, c = bk.sin(alpha / 2), bk.cos(alpha / 2)
    q = bk.zeros(4, e, alpha)
    q[0], q[1], q[2], q[3] = e[0] * s, e[1] * s, e[2] * s, c
    return _quaternion_dcm(q)


def _axis_rotation(e, alpha):
    """
    Active rotation about the unit axis e by alpha, Rodrigues' formula.

    In whole angles (cos alpha, sin alpha), so symbolic kinematics has no half angles to simplify
    away.
    """
    c, s = bk.cos(alpha), bk.sin(alpha)
    R = bk.zeros((3, 3), e, alpha)
    for r in range(3):
        for k in range(3):
            R[r, k] = (1 - c) * e[r] * e[k] + (c if r == k else 0)
    S = _skew(e)
    return R + s * S


def euler_axis_dcm(e, alpha):
    """
    Return the DCM of a rotation by ``alpha`` about the unit axis ``e``.

    (SPART: Euler_DCM)

    ``euler_axis_dcm(e, a).T`` is the active rotation about e by a.  ``e`` is
    normalized first (InputError if zero or far from unit).
    """
    return _euler_axis_dcm(
        chk.unit_vector('e', e, 3, 'unit rotation axis'), chk.scalar('alpha', alpha)
    )


def _angles321_dcm(angles):
    phi, theta, psi = angles[0], angles[1], angles[2]
    cf, sf, ct, st, cp, sp = (
        bk.cos(phi),
        bk.sin(phi),
        bk.cos(theta),
        bk.sin(theta),
        bk.cos(psi),
        bk.sin(psi),
    )
    D = bk.zeros((3, 3), angles)
    D[0, :] = [ct * cp, ct * sp, -st]
    D[1, :] = [sf * st * cp - cf * sp, sf * st * sp + cf * cp, sf * ct]
    D[2, :] = [cf * st * cp + sf * sp, cf * st * sp - sf * cp, cf * ct]
    return D


def angles321_dcm(angles):
    """
    Return the DCM of Euler angles [phi (x), theta (y), psi (z)] in the 3-2-1 sequence.

    (SPART: Angles321_DCM)

    Equals (Rz(psi) Ry(theta) Rx(phi)).T, the transpose of the URDF rpy rotation.
    """
    return _angles321_dcm(chk.vector('angles', angles, 3))


def angles123_dcm(angles):
    """
    Return the DCM of Euler angles [phi (x), theta (y), psi (z)] in the 1-2-3 sequence.

    (SPART: Angles123_DCM)

    Equals (Rx(phi) Ry(theta) Rz(psi)).T.
    """
    angles = chk.vector('angles', angles, 3)
    phi, theta, psi = angles[0], angles[1], angles[2]
    cf, sf, ct, st, cp, sp = (
        bk.cos(phi),
        bk.sin(phi),
        bk.cos(theta),
        bk.sin(theta),
        bk.cos(psi),
        bk.sin(psi),
    )
    C1 = np.array([[1, 0, 0], [0, cf, sf], [0, -sf, cf]])
    C2 = np.array([[ct, 0, -st], [0, 1, 0], [st, 0, ct]])
    C3 = np.array([[cp, sp, 0], [-sp, cp, 0], [0, 0, 1]])
    return C3 @ C2 @ C1


def dcm_angles321(DCM):
    """
    Return the Euler angles [phi, theta, psi] (3-2-1) of a DCM; inverse of angles321_dcm.

    (SPART: DCM_Angles321)

    theta is in [-pi/2, pi/2]; at theta = +-pi/2 the split of phi and psi is arbitrary.
    ``DCM`` must be a numeric rotation matrix.
    """
    D = _numeric_rotation('DCM', DCM, 'dcm_angles321 (DCM_Angles321)')
    theta = -np.arcsin(np.clip(D[0, 2], -1.0, 1.0))
    phi = np.arctan2(D[1, 2], D[2, 2])
    psi = np.arctan2(D[0, 1], D[0, 0])
    return np.array([phi, theta, psi])


def rpy_rotation(rpy):
    """Return the active rotation of URDF ``rpy``: Rz(yaw) Ry(pitch) Rx(roll), shape (3, 3)."""
    return _angles321_dcm(chk.vector('rpy', rpy, 3)).T


def _unit_quaternion_rotation(x, y, z, w):
    """
    Return the rotation (9 floats, row-major; active, body -> world) of a unit quaternion.

    (x, y, z, w) as ROS orders them. Not checked, in Python floats (the same IEEE operations as
    numpy's scalars, a fifth of their cost): for a caller per step or tick whose quaternion is
    unit by construction (:func:`quaternion_from_ros` checks and normalizes one that is not).
    """
    return (
        1.0 - 2.0 * (y * y + z * z),
        2.0 * (x * y - z * w),
        2.0 * (x * z + y * w),
        2.0 * (x * y + z * w),
        1.0 - 2.0 * (x * x + z * z),
        2.0 * (y * z - x * w),
        2.0 * (x * z - y * w),
        2.0 * (y * z + x * w),
        1.0 - 2.0 * (x * x + y * y),
    )


def quaternion_from_ros(x, y, z, w):
    """
    Return the rotation matrix (active, body -> world) of a ROS quaternion (x, y, z, w).

    Normalized when ``| |q|^2 - 1 | <= 0.01`` (tf2's tolerance); InputError for a
    zero, non-finite or farther-from-unit quaternion.
    """
    q = np.array(
        [chk.scalar(f'quaternion {k}', v) for k, v in zip('xyzw', (x, y, z, w))], dtype=float
    )
    return _quaternion_dcm(chk.quaternion('quaternion (x, y, z, w)', q)).T


def quaternion_to_ros(R):
    """Return the ROS quaternion (x, y, z, w), w >= 0, of an active rotation R (body -> world)."""
    q = _dcm_quaternion(_numeric_rotation('R', R, 'quaternion_to_ros').T)
    return q if q[3] >= 0 else -q
