"""
Modern Robotics' library under the book's names: all 47 functions of ``modern_robotics``.

For porting scripts line by line (``from spart_ros import modern_robotics as mr``).

Same names, arguments (their Python names too), order and results as the book's library
(``modern_robotics`` on PyPI, ``ModernRoboticsBook.jl``, whose documentation lists the same
functions): screw axes as the columns of a (6, n) array [w; v], poses as 4x4 homogeneous
transforms, twists and wrenches [angular; linear], a chain's dynamics described by ``Mlist``
(n + 1 transforms: link frame {i} in {i-1} at home, the last the end-effector frame {n+1} in
{n}), ``Glist`` (n spatial inertias (6, 6), G_i in {i}) and ``Slist`` (its space screw axes).
Each function is a thin alias of the general spart_ros function named in the table, keeping MR's
numerical behaviour where users depend on it: NearZero's 1e-6, MatrixLog3's branches at angle 0 and
pi, IK's undamped Newton iteration (at most 20 steps), explicit Euler steps in the simulations.

================================  ================================================================
MR                                spart_ros
================================  ================================================================
NearZero, Normalize               abs(z) < 1e-6; V / norm(V) (a zero V is an InputError)
RotInv, RpToTrans, TransToRp,     the checked rotation / pose (``core.checks``,
TransInv                          ``core.rigid_motion.checked_transform``)
VecToso3, so3ToVec, VecTose3,     ``core.skew_symmetric`` and its inverse (a matrix that is not
se3ToVec, ad                      skew is an InputError); ad(V) = [[[w], 0], [[v], [w]]]
AxisAng3, AxisAng6,               axis and angle of exponential coordinates (MR's choice: the
ScrewToAxis                       angular part's norm, else the linear part's)
MatrixExp3, MatrixLog3            ``core.rotation_from_vector`` / ``core.rotation_vector``
                                  (MR's identity below norm(w) = 1e-6, its axis at exactly pi)
MatrixExp6, MatrixLog6,           ``core.transform_exp`` / ``core.transform_log`` /
Adjoint                           ``core.adjoint`` (the same branches as MatrixExp3 / MatrixLog3)
ProjectToSO3, ProjectToSE3,       the polar factor (SVD); ``mat'mat - I``'s Frobenius norm (1e9 for
DistanceToSO3, DistanceToSE3,     det <= 0); below 1e-3
TestIfSO3, TestIfSE3
FKinBody, FKinSpace               the pose of link ``ee`` of ``core.robot_from_screw_axes(...)``
JacobianBody, JacobianSpace       that chain's ``FastDynamics.jacobian`` of ``ee``, re-expressed
IKinBody, IKinSpace               ``core.inverse_kinematics`` on that chain (frame 'body' /
                                  'space', undamped, every step taken, at most 20 iterations)
InverseDynamics, MassMatrix,      ``core.fast`` (recursive Newton-Euler, composite rigid body,
VelQuadraticForces,               articulated body; fixed base) on the chain of ``Slist`` whose
GravityForces,                    links carry ``Glist`` at ``Mlist``'s frames
EndEffectorForces,                (``core.robot_from_screw_axes(..., link_inertias=...)``);
ForwardDynamics                   ``Ftip`` through the body Jacobian of {n+1}: J_b' Ftip
EulerStep,                        MR's explicit Euler steps (``intRes`` per sample) on that forward
ForwardDynamicsTrajectory,        dynamics; the inverse dynamics sample by sample
InverseDynamicsTrajectory
ComputedTorque, SimulateControl   ``control.effort_laws.ComputedTorque`` (MR's integral term
                                  Ki (eint + e)) on the chain of Mtildelist, Gtildelist; the plant:
                                  the forward dynamics above, Euler steps (no plot)
CubicTimeScaling,                 ``control.time_scaling.cubic_time_scaling`` /
QuinticTimeScaling                ``quintic_time_scaling`` (``.s``)
JointTrajectory,                  ``control.paths.JointPath`` / ``ScrewPath`` / ``CartesianPath``
ScrewTrajectory,                  sampled at N instants (``method`` 3: cubic, 5: quintic)
CartesianTrajectory
================================  ================================================================

Arguments are checked at the entry: a wrong shape, a non-finite number, a rotation block that is
not a rotation (within 1e-3), counts that disagree (``Mlist`` must hold n + 1 transforms for n
screw axes) or a spatial inertia without a rigid body's structure is an InputError naming the
argument.  Results are new float arrays (MR's integer inputs give float results).  The
robot model of a (Mlist, Glist, Slist) is built once and kept for the next calls with the same
arrays (a few per thread), so that a loop over ``InverseDynamics`` costs microseconds per call.
The general functions do more (any link and point of a URDF, joint limits, damping, a
free-floating base): docs/coming_from_modern_robotics.md says where.
"""

import math
import threading

import numpy as np

from .control.effort_laws import ComputedTorque as _ComputedTorqueLaw
from .control.effort_laws import Gains
from .control.paths import CartesianPath, JointPath, pose_matrix, ScrewPath
from .control.time_scaling import cubic_time_scaling, quintic_time_scaling
from .control.trajectory import Reference
from .core import checks as chk
from .core.base_state import LinkBase
from .core.errors import InputError
from .core.fast.mimic import fast_dynamics
from .core.inverse_kinematics import InverseKinematics
from .core.rigid_motion import (
    adjoint,
    checked_transform,
    rotation_from_vector,
    rotation_vector,
    transform_exp,
    transform_log,
)
from .core.screw_chain import mass_properties, robot_from_screw_axes

__all__ = [
    'NearZero',
    'Normalize',
    'RotInv',
    'VecToso3',
    'so3ToVec',
    'AxisAng3',
    'MatrixExp3',
    'MatrixLog3',
    'RpToTrans',
    'TransToRp',
    'TransInv',
    'VecTose3',
    'se3ToVec',
    'Adjoint',
    'ScrewToAxis',
    'AxisAng6',
    'MatrixExp6',
    'MatrixLog6',
    'ProjectToSO3',
    'ProjectToSE3',
    'DistanceToSO3',
    'DistanceToSE3',
    'TestIfSO3',
    'TestIfSE3',
    'FKinBody',
    'FKinSpace',
    'JacobianBody',
    'JacobianSpace',
    'IKinBody',
    'IKinSpace',
    'ad',
    'InverseDynamics',
    'MassMatrix',
    'VelQuadraticForces',
    'GravityForces',
    'EndEffectorForces',
    'ForwardDynamics',
    'EulerStep',
    'InverseDynamicsTrajectory',
    'ForwardDynamicsTrajectory',
    'CubicTimeScaling',
    'QuinticTimeScaling',
    'JointTrajectory',
    'ScrewTrajectory',
    'CartesianTrajectory',
    'ComputedTorque',
    'SimulateControl',
]

_NEAR_ZERO = 1e-6  # MR's NearZero
_SO3_TOL = 1e-3  # MR's TestIfSO3 / TestIfSE3
_FAR = 1e9  # MR's distance of a matrix with det <= 0
_MAX_ITERATIONS = 20  # MR's maxiterations
_SKEW_TOL = 1e-9  # a so(3) block that is skew within rounding (relative to its largest entry)


# --- checks ---------------------------------------------------------------------------------


def _numbers(name, x, shape):
    """``x`` as a float array of ``shape`` (None = any length); InputError naming ``name``."""
    return chk.numeric(name, chk.array(name, x, shape), 'Modern Robotics')


def _vector(name, x, n=None):
    if n is None:
        return _numbers(name, x, (None,))
    return chk.numeric(name, chk.vector(name, x, n), 'Modern Robotics')


def _number(name, x):
    v = chk.scalar(name, x)
    if not isinstance(v, float):
        raise InputError(f'{name}: Modern Robotics needs a number, got {chk.given(x)}')
    return v


def _count(name, x, least):
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)) or x < least:
        raise InputError(f'{name}: expected an integer >= {least}, got {chk.given(x)}')
    return int(x)


def _skew_part(name, M):
    """Return [w] of the (3, 3) block ``M`` if it is skew (within rounding), else InputError."""
    scale = max(float(np.abs(M).max()), 1.0)
    if np.abs(M + M.T).max() > _SKEW_TOL * scale:
        raise InputError(
            f"{name}: expected a skew-symmetric matrix (so(3): [w] = -[w]'), got "
            f'{np.round(M, 6).tolist()}'
        )
    return np.array([M[2, 1], M[0, 2], M[1, 0]])


def _skew(w):
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


# --- basic helpers ------------------------------------------------------------------------------


def NearZero(z):
    """Return True if the number ``z`` is small enough to be treated as zero (abs(z) < 1e-6)."""
    return abs(_number('z', z)) < _NEAR_ZERO


def Normalize(V):
    """Return the unit vector along ``V`` (any length); InputError for a zero vector."""
    V = _vector('V', V)
    norm = float(np.linalg.norm(V))
    if norm == 0.0:
        raise InputError('V: a zero vector has no direction to normalize')
    return V / norm


# --- chapter 3: rigid-body motions -----------------------------------------------------------


def RotInv(R):
    """Return the inverse R' (3, 3) of the rotation matrix ``R``."""
    return np.array(chk.numeric('R', chk.rotation('R', R), 'Modern Robotics').T)


def VecToso3(omg):
    """Return the so(3) matrix [omg] (3, 3) of the 3-vector ``omg`` ([omg] x = omg x x)."""
    return _skew(_vector('omg', omg, 3))


def so3ToVec(so3mat):
    """Return the 3-vector of the skew-symmetric matrix ``so3mat`` (3, 3)."""
    return _skew_part('so3mat', _numbers('so3mat', so3mat, (3, 3)))


def AxisAng3(expc3):
    """
    Return (omghat (3,), theta): the unit axis and angle of ``expc3`` (3,) = omghat theta.

    ``expc3``: exponential coordinates of a rotation; a zero one is an InputError (no axis).
    """
    expc3 = _vector('expc3', expc3, 3)
    theta = float(np.linalg.norm(expc3))
    if theta == 0.0:
        raise InputError('expc3: zero exponential coordinates have no rotation axis')
    return expc3 / theta, theta


def MatrixExp3(so3mat):
    """
    Return the rotation matrix exp(so3mat) (3, 3) of the so(3) matrix ``so3mat`` (3, 3).

    The identity when norm(w) < 1e-6 (MR's NearZero), Rodrigues' formula otherwise.
    """
    w = so3ToVec(so3mat)
    if float(np.linalg.norm(w)) < _NEAR_ZERO:
        return np.eye(3)
    return rotation_from_vector(w)


def _log3(R):
    """Return w (3,) with exp([w]) = R (checked rotation R), MR's branches at angle 0 and pi."""
    c = 0.5 * (float(np.trace(R)) - 1.0)
    if c >= 1.0:
        return np.zeros(3)
    if c <= -1.0:  # angle pi: MR's choice of the axis (the first of these columns of R + I)
        for k in (2, 1, 0):
            if abs(1.0 + R[k, k]) >= _NEAR_ZERO or k == 0:
                axis = (R[:, k] + np.eye(3)[k]) / math.sqrt(2.0 * (1.0 + R[k, k]))
                return math.pi * axis
    return rotation_vector(R)


def MatrixLog3(R):
    """
    Return the so(3) matrix log(R) (3, 3) of the rotation matrix ``R``: angle in [0, pi].

    Zero at the identity (within rounding), MR's axis at an angle of exactly pi.
    """
    R = chk.numeric('R', chk.rotation('R', R), 'Modern Robotics')
    return _skew(_log3(R))


def RpToTrans(R, p):
    """Return the 4x4 pose of the rotation ``R`` (3, 3) and position ``p`` (3,)."""
    R = chk.numeric('R', chk.rotation('R', R), 'Modern Robotics')
    return pose_matrix(R, _vector('p', p, 3))


def TransToRp(T):
    """Return (R (3, 3), p (3,)) of the pose ``T`` (4, 4)."""
    R, p = checked_transform('T', T)
    return np.array(R, dtype=float), np.array(p, dtype=float)


def TransInv(T):
    """Return the inverse (4, 4) of the pose ``T`` (4, 4): [[R', -R' p], [0, 1]]."""
    R, p = checked_transform('T', T)
    return pose_matrix(R.T, -(R.T @ p))


def VecTose3(V):
    """Return the se(3) matrix [V] (4, 4) of the twist ``V`` = [w; v] (6,)."""
    V = _vector('V', V, 6)
    out = np.zeros((4, 4))
    out[:3, :3] = _skew(V[0:3])
    out[:3, 3] = V[3:6]
    return out


def se3ToVec(se3mat):
    """Return the twist [w; v] (6,) of the se(3) matrix ``se3mat`` (4, 4)."""
    M = _numbers('se3mat', se3mat, (4, 4))
    if np.any(M[3] != 0.0):
        raise InputError(f'se3mat: expected a bottom row of zeros (se(3)), got {M[3].tolist()}')
    return np.concatenate([_skew_part('se3mat (its rotation block)', M[:3, :3]), M[:3, 3]])


def Adjoint(T):
    """Return [Ad_T] (6, 6) of the pose ``T`` (4, 4): V_s = [Ad_T] V_b."""
    return adjoint(T)


def ScrewToAxis(q, s, h):
    """
    Return the screw axis [s; q x s + h s] (6,).

    Through the point ``q`` (3,), along the unit vector ``s`` (3,), of pitch ``h``.
    """
    q, s, h = _vector('q', q, 3), _vector('s', s, 3), _number('h', h)
    if abs(float(np.linalg.norm(s)) - 1.0) > _NEAR_ZERO:
        raise InputError(f's: expected a unit vector (the screw direction), got {s.tolist()}')
    return np.concatenate([s, np.cross(q, s) + h * s])


def AxisAng6(expc6):
    """
    Return (S (6,), theta): the screw axis and distance of ``expc6`` (6,) = S theta.

    theta = norm(w), or norm(v) when norm(w) < 1e-6 (MR's choice); zero coordinates are an
    InputError.
    """
    expc6 = _vector('expc6', expc6, 6)
    theta = float(np.linalg.norm(expc6[0:3]))
    if theta < _NEAR_ZERO:
        theta = float(np.linalg.norm(expc6[3:6]))
    if theta == 0.0:
        raise InputError(
            f'expc6: {expc6.tolist()} has no screw axis (|w| < 1e-6 and v = 0: no motion to '
            'normalize)'
        )
    return expc6 / theta, theta


def MatrixExp6(se3mat):
    """
    Return the pose exp(se3mat) (4, 4) of the se(3) matrix ``se3mat`` (4, 4).

    A pure translation [[I, v], [0, 1]] when norm(w) < 1e-6 (MR's NearZero).
    """
    V = se3ToVec(se3mat)
    if float(np.linalg.norm(V[0:3])) < _NEAR_ZERO:
        return pose_matrix(np.eye(3), V[3:6])
    return transform_exp(V)


def MatrixLog6(T):
    """
    Return the se(3) matrix log(T) (4, 4) of the pose ``T`` (4, 4).

    [[0, p], [0, 0]] at a rotation that MatrixLog3 takes for the identity, MatrixLog3's axis at an
    angle of exactly pi.
    """
    R, p = checked_transform('T', T)
    w = _log3(R)
    if not w.any():
        V = np.concatenate([w, p])
    elif 0.5 * (float(np.trace(R)) - 1.0) <= -1.0:  # angle pi, MR's axis: G^-1(pi) p
        W = _skew(w)
        V = np.concatenate([w, p - 0.5 * (W @ p) + (W @ (W @ p)) / math.pi**2])
    else:
        V = transform_log(T)
    return VecTose3(V)


def _polar(name, mat):
    U, _, Vt = np.linalg.svd(mat)
    R = U @ Vt
    if np.linalg.det(R) < 0:
        raise InputError(
            f'{name}: det < 0, a reflection: no rotation is near it (MR would flip a column of '
            'its polar factor)'
        )
    return R


def ProjectToSO3(mat):
    """Return the rotation matrix nearest to ``mat`` (3, 3) (its polar factor, by SVD)."""
    return _polar('mat', _numbers('mat', mat, (3, 3)))


def ProjectToSE3(mat):
    """Return the pose nearest to ``mat`` (4, 4): its rotation block projected, its p kept."""
    mat = _numbers('mat', mat, (4, 4))
    return pose_matrix(_polar('mat (its rotation block)', mat[:3, :3]), mat[:3, 3])


def DistanceToSO3(mat):
    """
    Return the distance of ``mat`` (3, 3) from SO(3).

    The Frobenius norm of mat' mat - I if det(mat) > 0, else 1e9 (MR's large number).
    """
    mat = _numbers('mat', mat, (3, 3))
    if np.linalg.det(mat) > 0:
        return float(np.linalg.norm(mat.T @ mat - np.eye(3)))
    return _FAR


def DistanceToSE3(mat):
    """
    Return the distance of ``mat`` (4, 4) from SE(3).

    The Frobenius norm of [[R' R, 0], [mat's bottom row]] - I if det(R) > 0 (R: its rotation
    block), else 1e9.
    """
    mat = _numbers('mat', mat, (4, 4))
    R = mat[:3, :3]
    if np.linalg.det(R) > 0:
        D = np.zeros((4, 4))
        D[:3, :3] = R.T @ R
        D[3] = mat[3]
        return float(np.linalg.norm(D - np.eye(4)))
    return _FAR


def TestIfSO3(mat):
    """Return True if ``mat`` (3, 3) is within 1e-3 of SO(3) (:func:`DistanceToSO3`)."""
    return abs(DistanceToSO3(mat)) < _SO3_TOL


def TestIfSE3(mat):
    """Return True if ``mat`` (4, 4) is within 1e-3 of SE(3) (:func:`DistanceToSE3`)."""
    return abs(DistanceToSE3(mat)) < _SO3_TOL


# --- the chain behind the kinematics and dynamics functions -------------------------------------


class _Chain:
    """
    The robot model of a chain of MR screw axes and its fast path, built once per arrays.

    ``core.robot_from_screw_axes`` of the unit screws S_i / k_i (k_i = norm(w_i), or norm(v_i)
    when norm(w_i) < 1e-6, as AxisAng6 normalizes): exp([S_i] theta_i) = exp([S_i / k_i] k_i
    theta_i), so the model's joint i is at q_i = k_i theta_i (k = 1 for the unit screws MR's
    chains use; the book's dynamics example has S_1 = [1, 0, 1, 0, 1, 0]) and every result is
    mapped back (forces k tau, mass matrix K H K).  With a dynamics model (``Mlist``, ``Glist``),
    link i (moved by joint i) carries G_i at its frame {i}, whose home pose in {s} is M_01 ...
    M_{i-1,i}; link ``ee`` is the end-effector frame (home ``M``, or the product of all of Mlist).
    Kept per thread (:meth:`of`),
    keyed by the arrays' bytes.  Methods take and return MR's coordinates (theta).
    """

    _local = threading.local()
    _KEEP = 8  # models kept per thread (a script alternates between a few)

    @classmethod
    def of(cls, names, Slist, thetalist, home=None, Mlist=None, Glist=None, body=False):
        """
        Return (chain, theta) for these arguments (checked), the chain from the cache if built.

        ``names``: the arguments' names (screw axes, Mlist, Glist) for the errors; ``home``: the
        end-effector's home pose (None: the identity, or Mlist's product); ``body``: the axes are
        body screw axes.
        """
        slist_name, mlist_name, glist_name = names
        S = _numbers(slist_name, Slist, (6, None))
        n = S.shape[1]
        theta = _numbers('thetalist', thetalist, (None,))
        if theta.shape[0] != n:
            raise InputError(
                f'thetalist: expected {n} joint values (one per column of {slist_name}), got '
                f'{theta.shape[0]}'
            )
        M = G = None
        if Mlist is not None:
            # the key from the raw arrays (the same bytes as a cached model's were checked)
            M, G = _raw(Mlist, (n + 1, 4, 4)), _raw(Glist, (n, 6, 6))
            key = (
                None
                if M is None or G is None
                else (S.shape, S.tobytes(), M.tobytes(), G.tobytes())
            )
            if key is None or key not in getattr(cls._local, 'chains', {}):
                M, G = _frames(mlist_name, Mlist, n), _inertias(glist_name, Glist, n)
                key = (S.shape, S.tobytes(), M.tobytes(), G.tobytes())
        else:
            home = np.eye(4) if home is None else pose_matrix(*checked_transform('M', home))
            key = (body, S.shape, S.tobytes(), home.tobytes())
        cache = getattr(cls._local, 'chains', None)
        if cache is None:
            cache = cls._local.chains = {}
        chain = cache.pop(key, None)
        if chain is None:
            chain = cls(slist_name, S, home, M, G, body)
            if len(cache) >= cls._KEEP:
                del cache[next(iter(cache))]  # the least recently used
        cache[key] = chain
        return chain, theta

    def __init__(self, name, S, home, Mlist, Glist, body):
        n = S.shape[1]
        k = np.linalg.norm(S[0:3], axis=0)
        k = np.where(k < _NEAR_ZERO, np.linalg.norm(S[3:6], axis=0), k)
        if not np.all(k > 0):
            i = int(np.flatnonzero(k == 0)[0])
            raise InputError(f'{name}: column {i} is zero: not a screw axis (no joint motion)')
        self.k = k
        unit = S / k
        inertias = None
        if Mlist is not None:
            frames, T = [], np.eye(4)
            for Mi in Mlist[:-1]:
                T = T @ Mi
                frames.append(T)
            home, inertias = T @ Mlist[-1], list(zip(frames, Glist))
        self.robot = robot_from_screw_axes(
            unit, home, body=body, name='mr_chain', link_inertias=inertias
        )
        self.fast = fast_dynamics(self.robot)
        self.n = n
        self.ee = self.robot.link_index('ee')
        self.R0, self.r0 = np.eye(3), np.zeros(3)
        self.zero6, self.zero3 = np.zeros(6), np.zeros(3)
        self.base = LinkBase(np.eye(3), np.zeros(3), np.zeros(3), np.zeros(3))
        self._law = self._law_gains = None

    def pose(self, theta):
        """Return the end effector's 4x4 homogeneous transform at ``theta``."""
        self.fast.jacobian(self.ee, self.R0, self.r0, self.k * theta, bias=False)
        R, d = self.fast.link_pose(self.ee)
        return pose_matrix(R, self.r0 + d)

    def jacobian(self, theta):
        """(J (6, n) rows [w; velocity of the end effector's origin] in {s}, R, p of it)."""
        J, _ = self.fast.jacobian(self.ee, self.R0, self.r0, self.k * theta, bias=False)
        R, d = self.fast.link_pose(self.ee)
        return J[:, 6:] * self.k, R.copy(), self.r0 + d

    def tip_forces(self, theta, Ftip):
        """J_b(theta)' Ftip (n,): the joint forces with which {n+1} exerts the wrench ``Ftip``."""
        if not Ftip.any():
            return np.zeros(self.n)
        J, R, _ = self.jacobian(theta)
        return J[0:3].T @ (R @ Ftip[0:3]) + J[3:6].T @ (R @ Ftip[3:6])

    def inverse_dynamics(self, theta, dtheta, ddtheta, g, Ftip):
        k = self.k
        _, tau = self.fast.inverse_dynamics(
            self.R0,
            self.r0,
            k * theta,
            self.zero6,
            k * dtheta,
            self.zero6,
            k * ddtheta,
            gravity=g,
            floating=False,
        )
        return k * tau + self.tip_forces(theta, Ftip)

    def bias_forces(self, theta, dtheta):
        k = self.k
        _, c = self.fast.bias_forces(
            self.R0,
            self.r0,
            k * theta,
            self.zero6,
            k * dtheta,
            gravity=self.zero3,
            floating=False,
        )
        return k * c

    def gravity_forces(self, theta, g):
        _, tau = self.fast.gravity_forces(self.R0, self.r0, self.k * theta, gravity=g)
        return self.k * tau

    def forward_dynamics(self, theta, dtheta, tau, g, Ftip):
        k = self.k
        _, qdd = self.fast.forward_dynamics(
            self.R0,
            self.r0,
            k * theta,
            self.zero6,
            k * dtheta,
            self.zero6,
            (tau - self.tip_forces(theta, Ftip)) / k,
            gravity=g,
            floating=False,
        )
        return qdd / k

    def mass_matrix(self, theta):
        H = self.fast.mass_matrix(self.R0, self.r0, self.k * theta)[6:, 6:]
        return self.k[:, None] * H * self.k

    def computed_torque(self, theta, dtheta, eint, g, ref, dref, ddref, gains):
        """
        Return the joint forces of MR's ComputedTorque, through the controller's law.

        In the model's coordinates q = k theta every term of the law scales by k.
        """
        kp, ki, kd = gains
        if self._law is None or self._law_gains != gains:
            self._law = _ComputedTorqueLaw(self.fast, Gains(self.n, kp, kd, ki))
            self._law_gains = gains
        self.fast.gravity = g  # the law's (the model's) gravity; every other call passes its own
        k, law = self.k, self._law
        law.integral[:] = k * eint
        # one step of unit length: the law's integral becomes eint + e, MR's Ki (eint + e)
        reference = Reference(k * ref, k * dref, k * ddref)
        return k * law.compute(self.base, k * theta, k * dtheta, reference, 1.0).efforts


def _raw(x, shape):
    """``x`` as a float array if it is one of ``shape``, else None (unchecked: for a cache key)."""
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        return None
    return a if a.shape == shape else None


def _frames(name, Mlist, n):
    try:
        count = len(Mlist)
    except TypeError:
        count = None
    if count != n + 1:
        raise InputError(
            f'{name}: expected {n + 1} transforms (M_01 ... M_n,n+1 for {n} joints), got '
            f'{chk.given(Mlist)}'
        )
    out = np.empty((n + 1, 4, 4))
    for i in range(n + 1):
        R, p = checked_transform(f'{name}[{i}]', Mlist[i])
        out[i] = pose_matrix(R, p)
    return out


def _inertias(name, Glist, n):
    try:
        count = len(Glist)
    except TypeError:
        count = None
    if count != n:
        raise InputError(
            f'{name}: expected {n} spatial inertias (6, 6), one per link, got {chk.given(Glist)}'
        )
    out = np.array([_numbers(f'{name}[{i}]', Glist[i], (6, 6)) for i in range(n)])
    for i, G in enumerate(out):
        mass_properties(f'{name}[{i}]', G)  # a rigid body's structure, the error naming Glist
    return out


# --- chapters 4 to 6: kinematics ---------------------------------------------------------------


def FKinSpace(M, Slist, thetalist):
    """
    Return the end-effector pose (4, 4) at joint values ``thetalist``.

    The chain has space screw axes ``Slist`` (6, n) and home pose ``M``.
    """
    chain, theta = _Chain.of(('Slist', None, None), Slist, thetalist, home=M)
    return chain.pose(theta)


def FKinBody(M, Blist, thetalist):
    """
    Return the end-effector pose (4, 4) at joint values ``thetalist``.

    The chain has body screw axes ``Blist`` (6, n).
    """
    chain, theta = _Chain.of(('Blist', None, None), Blist, thetalist, home=M, body=True)
    return chain.pose(theta)


def _jacobian(axes, thetalist, body):
    """Return the space or body Jacobian (6, n) of the chain with screw axes ``axes``."""
    names = ('Blist' if body else 'Slist', None, None)
    chain, theta = _Chain.of(names, axes, thetalist, body=body)
    J, R, p = chain.jacobian(theta)
    if body:
        return np.vstack([R.T @ J[0:3], R.T @ J[3:6]])
    return np.vstack([J[0:3], J[3:6] + _skew(p) @ J[0:3]])  # the velocity at {s}'s origin


def JacobianBody(Blist, thetalist):
    """
    Return the body Jacobian (6, n) at ``thetalist`` of the chain of body screw axes ``Blist``.

    Columns: the twists [w; v] of the end-effector frame per unit joint rate, in that frame.
    """
    return _jacobian(Blist, thetalist, True)


def JacobianSpace(Slist, thetalist):
    """
    Return the space Jacobian (6, n) at ``thetalist`` of the chain of space screw axes ``Slist``.

    Columns: the spatial twists per unit joint rate (v at {s}'s origin), in {s}.
    """
    return _jacobian(Slist, thetalist, False)


def _ik(axes, M, T, thetalist0, eomg, ev, body):
    robot = robot_from_screw_axes(axes, M, body=body)
    R_d, p_d = checked_transform('T', T)
    for name, tol in (('eomg', eomg), ('ev', ev)):
        if not chk.nonnegative(name, tol) > 0:
            raise InputError(f'{name}: expected a tolerance > 0, got {chk.given(tol)}')
    seed = chk.vector('thetalist0', thetalist0, robot.coordinates.n)
    res = InverseKinematics(robot, 'ee').solve(
        p_d,
        seed,
        rotation=R_d,
        frame='body' if body else 'space',
        R0=np.eye(3),
        r0=np.zeros(3),
        tol_rotation=eomg,
        tol_position=ev,
        max_iterations=_MAX_ITERATIONS,
        damping=0.0,
        adaptive=False,
    )
    return res.q, res.success


def IKinBody(Blist, M, T, thetalist0, eomg, ev):
    """
    Return (thetalist, success): MR's body-frame Newton-Raphson IK to the pose ``T`` (4, 4).

    From ``thetalist0``; converged when norm(w_b) <= eomg and norm(v_b) <= ev (at most 20
    iterations).  Unit screw axes (norm(w) = 1, or w = 0 and norm(v) = 1).
    """
    return _ik(Blist, M, T, thetalist0, eomg, ev, True)


def IKinSpace(Slist, M, T, thetalist0, eomg, ev):
    """
    Return (thetalist, success): MR's space-frame Newton-Raphson IK to the pose ``T`` (4, 4).

    From ``thetalist0``; converged when norm(w_s) <= eomg and norm(v_s) <= ev (at most 20
    iterations).  Unit screw axes.
    """
    return _ik(Slist, M, T, thetalist0, eomg, ev, False)


# --- chapter 8: dynamics ---------------------------------------------------------------------


def ad(V):
    """Return [ad_V] (6, 6) of the twist ``V`` = [w; v]: [[[w], 0], [[v], [w]]] (Lie bracket)."""
    V = _vector('V', V, 6)
    out = np.zeros((6, 6))
    W = _skew(V[0:3])
    out[0:3, 0:3] = out[3:6, 3:6] = W
    out[3:6, 0:3] = _skew(V[3:6])
    return out


_NAMES = ('Slist', 'Mlist', 'Glist')


def _dynamics(Mlist, Glist, Slist, thetalist, names=_NAMES):
    """Return (chain, theta) for the dynamics functions' arguments (checked)."""
    return _Chain.of(names, Slist, thetalist, Mlist=Mlist, Glist=Glist)


def _tip(Ftip):
    return _vector('Ftip', Ftip, 6)


def _gravity(g, name='g'):
    return _vector(name, g, 3)


def InverseDynamics(thetalist, dthetalist, ddthetalist, g, Ftip, Mlist, Glist, Slist):
    """
    Return the joint forces (n,) that move the chain at ``ddthetalist``.

    At ``thetalist``, ``dthetalist``; gravity ``g`` (3,), the wrench ``Ftip`` (6,) the end effector
    applies, in {n+1}: tau = M(theta) ddtheta + c(theta, dtheta) + g(theta) + J_b' Ftip.
    """
    chain, theta = _dynamics(Mlist, Glist, Slist, thetalist)
    n = chain.n
    return chain.inverse_dynamics(
        theta,
        _vector('dthetalist', dthetalist, n),
        _vector('ddthetalist', ddthetalist, n),
        _gravity(g),
        _tip(Ftip),
    )


def MassMatrix(thetalist, Mlist, Glist, Slist):
    """Return the mass matrix M(theta) (n, n) at ``thetalist``."""
    chain, theta = _dynamics(Mlist, Glist, Slist, thetalist)
    return chain.mass_matrix(theta)


def VelQuadraticForces(thetalist, dthetalist, Mlist, Glist, Slist):
    """Return c(theta, dtheta) (n,): the Coriolis and centripetal joint forces."""
    chain, theta = _dynamics(Mlist, Glist, Slist, thetalist)
    return chain.bias_forces(theta, _vector('dthetalist', dthetalist, chain.n))


def GravityForces(thetalist, g, Mlist, Glist, Slist):
    """Return the joint forces (n,) that hold the chain still against gravity ``g`` (3,)."""
    chain, theta = _dynamics(Mlist, Glist, Slist, thetalist)
    return chain.gravity_forces(theta, _gravity(g))


def EndEffectorForces(thetalist, Ftip, Mlist, Glist, Slist):
    """Return J_b' Ftip (n,): the joint forces that make the end effector apply ``Ftip`` (6,)."""
    chain, theta = _dynamics(Mlist, Glist, Slist, thetalist)
    return chain.tip_forces(theta, _tip(Ftip))


def ForwardDynamics(thetalist, dthetalist, taulist, g, Ftip, Mlist, Glist, Slist):
    """
    Return the joint accelerations (n,) under the joint forces ``taulist`` (n,).

    M(theta) ddtheta = tau - c - g(theta) - J_b' Ftip, gravity ``g`` (3,), ``Ftip`` (6,) as in
    :func:`InverseDynamics`.
    """
    chain, theta = _dynamics(Mlist, Glist, Slist, thetalist)
    n = chain.n
    return chain.forward_dynamics(
        theta,
        _vector('dthetalist', dthetalist, n),
        _vector('taulist', taulist, n),
        _gravity(g),
        _tip(Ftip),
    )


def EulerStep(thetalist, dthetalist, ddthetalist, dt):
    """
    Return (thetalist + dt dthetalist, dthetalist + dt ddthetalist): one explicit Euler step.

    Over ``dt`` seconds.
    """
    theta = _vector('thetalist', thetalist)
    n = theta.shape[0]
    dtheta, ddtheta = _vector('dthetalist', dthetalist, n), _vector('ddthetalist', ddthetalist, n)
    dt = _number('dt', dt)
    return theta + dt * dtheta, dtheta + dt * ddtheta


def _rows(name, x, N, width):
    """``x`` as (N, width); MR's scalar 0 for "no tip forces" as zeros."""
    if np.ndim(x) == 0 and _number(name, x) == 0.0:
        return np.zeros((N, width))
    a = _numbers(name, x, (None, width))
    if a.shape[0] != N:
        raise InputError(f'{name}: expected {N} rows (one per sample), got {a.shape[0]}')
    return a


def InverseDynamicsTrajectory(thetamat, dthetamat, ddthetamat, g, Ftipmat, Mlist, Glist, Slist):
    """
    Return the joint forces (N, n) along a trajectory, row by row :func:`InverseDynamics`.

    ``thetamat``, ``dthetamat``, ``ddthetamat`` (N, n); ``Ftipmat`` (N, 6), or 0 for none.
    """
    n = _numbers('Slist', Slist, (6, None)).shape[1]
    theta = _numbers('thetamat', thetamat, (None, n))
    N = theta.shape[0]
    chain, _ = _dynamics(Mlist, Glist, Slist, np.zeros(n))
    dtheta, ddtheta = _rows('dthetamat', dthetamat, N, n), _rows('ddthetamat', ddthetamat, N, n)
    tips, g = _rows('Ftipmat', Ftipmat, N, 6), _gravity(g)
    out = np.empty((N, n))
    for i in range(N):
        out[i] = chain.inverse_dynamics(theta[i], dtheta[i], ddtheta[i], g, tips[i])
    return out


def _euler(chain, q, qd, tau, g, tip, h, steps):
    """Return (q, qd) after ``steps`` explicit Euler steps of ``h`` under constant forces."""
    for _ in range(steps):
        qdd = chain.forward_dynamics(q, qd, tau, g, tip)
        q, qd = q + h * qd, qd + h * qdd
    return q, qd


def ForwardDynamicsTrajectory(
    thetalist, dthetalist, taumat, g, Ftipmat, Mlist, Glist, Slist, dt, intRes
):
    """
    Return (thetamat (N, n), dthetamat (N, n)): the motion under the joint forces ``taumat``.

    ``taumat`` (N, n) and ``Ftipmat`` (N, 6, or 0) held over each ``dt``; row 0 is the start
    (``thetalist``, ``dthetalist``), row i + 1 follows ``intRes`` explicit Euler steps of
    dt / intRes under row i.
    """
    chain, q = _dynamics(Mlist, Glist, Slist, thetalist)
    n = chain.n
    qd = _vector('dthetalist', dthetalist, n)
    tau = _numbers('taumat', taumat, (None, n))
    N = tau.shape[0]
    tips, g = _rows('Ftipmat', Ftipmat, N, 6), _gravity(g)
    dt, steps = _number('dt', dt), _count('intRes', intRes, 1)
    thetamat, dthetamat = np.empty((N, n)), np.empty((N, n))
    thetamat[0], dthetamat[0] = q, qd
    for i in range(N - 1):
        q, qd = _euler(chain, q, qd, tau[i], g, tips[i], dt / steps, steps)
        thetamat[i + 1], dthetamat[i + 1] = q, qd
    return thetamat, dthetamat


# --- chapter 9: trajectory generation ----------------------------------------------------------


def CubicTimeScaling(Tf, t):
    """s(t) of the cubic time scaling over ``Tf`` seconds."""
    return cubic_time_scaling(Tf, t).s


def QuinticTimeScaling(Tf, t):
    """s(t) of the quintic time scaling over ``Tf`` seconds."""
    return quintic_time_scaling(Tf, t).s


def _method(method):
    if isinstance(method, bool) or method not in (3, 5):
        raise InputError(f'method: expected 3 (cubic) or 5 (quintic), got {chk.given(method)}')
    return 'cubic' if method == 3 else 'quintic'


def JointTrajectory(thetastart, thetaend, Tf, N, method):
    """
    Return (N, n): the straight joint-space path from ``thetastart`` to ``thetaend``.

    Over ``Tf`` seconds at N evenly spaced instants (time scaling ``method`` 3 or 5).
    """
    path = JointPath(thetastart, thetaend, Tf, _method(method))
    return np.array([r.position for r in path.samples(_count('N', N, 2))])


def ScrewTrajectory(Xstart, Xend, Tf, N, method):
    """N poses (4, 4) along the constant screw from ``Xstart`` to ``Xend`` over ``Tf`` seconds."""
    path = ScrewPath(Xstart, Xend, Tf, _method(method))
    return [pose_matrix(s.rotation, s.position) for s in path.samples(_count('N', N, 2))]


def CartesianTrajectory(Xstart, Xend, Tf, N, method):
    """N poses (4, 4): the point on the straight line, the frame about a fixed axis (decoupled)."""
    path = CartesianPath(Xstart, Xend, Tf, _method(method))
    return [pose_matrix(s.rotation, s.position) for s in path.samples(_count('N', N, 2))]


# --- chapter 11: robot control -------------------------------------------------------------------


def _gains(Kp, Ki, Kd):
    return _number('Kp', Kp), _number('Ki', Ki), _number('Kd', Kd)


def ComputedTorque(
    thetalist,
    dthetalist,
    eint,
    g,
    Mlist,
    Glist,
    Slist,
    thetalistd,
    dthetalistd,
    ddthetalistd,
    Kp,
    Ki,
    Kd,
):
    """
    Return the computed-torque controller's joint forces (n,) at this instant.

    tau = M(theta) (Kp e + Ki (eint + e) + Kd de) + InverseDynamics(theta, dtheta, ddthetad, g,
    0), e = ``thetalistd`` - ``thetalist``, de = ``dthetalistd`` - ``dthetalist``; ``eint`` (n,):
    the time integral of e so far; gains (one per robot) >= 0.
    """
    chain, q = _dynamics(Mlist, Glist, Slist, thetalist)
    n = chain.n
    return chain.computed_torque(
        q,
        _vector('dthetalist', dthetalist, n),
        _vector('eint', eint, n),
        _gravity(g),
        _vector('thetalistd', thetalistd, n),
        _vector('dthetalistd', dthetalistd, n),
        _vector('ddthetalistd', ddthetalistd, n),
        _gains(Kp, Ki, Kd),
    )


def SimulateControl(
    thetalist,
    dthetalist,
    g,
    Ftipmat,
    Mlist,
    Glist,
    Slist,
    thetamatd,
    dthetamatd,
    ddthetamatd,
    gtilde,
    Mtildelist,
    Gtildelist,
    Kp,
    Ki,
    Kd,
    dt,
    intRes,
):
    """
    Return (taumat (N, n), thetamat (N, n)): the computed-torque controller in closed loop.

    At each of the N samples of the reference (``thetamatd``, ``dthetamatd``, ``ddthetamatd``, (N,
    n)) :func:`ComputedTorque` on the model (``gtilde``, ``Mtildelist``, ``Gtildelist``,
    ``Slist``), held over ``dt`` while the actual chain (``g``, ``Mlist``, ``Glist``, tip wrenches
    ``Ftipmat`` (N, 6) or 0) moves by ``intRes`` explicit Euler steps; eint accumulates dt times
    the error after each sample.  Row i: the forces applied and the joint values reached.  MR's
    function then plots the result with matplotlib; this one does not (plot the arrays).
    """
    plant, q = _dynamics(Mlist, Glist, Slist, thetalist)
    n = plant.n
    model, _ = _dynamics(
        Mtildelist, Gtildelist, Slist, thetalist, ('Slist', 'Mtildelist', 'Gtildelist')
    )
    qd = _vector('dthetalist', dthetalist, n)
    ref = _numbers('thetamatd', thetamatd, (None, n))
    N = ref.shape[0]
    dref, ddref = _rows('dthetamatd', dthetamatd, N, n), _rows('ddthetamatd', ddthetamatd, N, n)
    tips, g, gtilde = _rows('Ftipmat', Ftipmat, N, 6), _gravity(g), _gravity(gtilde, 'gtilde')
    gains, dt, steps = _gains(Kp, Ki, Kd), _number('dt', dt), _count('intRes', intRes, 1)
    eint = np.zeros(n)
    taumat, thetamat = np.empty((N, n)), np.empty((N, n))
    for i in range(N):
        tau = model.computed_torque(q, qd, eint, gtilde, ref[i], dref[i], ddref[i], gains)
        q, qd = _euler(plant, q, qd, tau, g, tips[i], dt / steps, steps)
        taumat[i], thetamat[i] = tau, q
        eint = eint + dt * (ref[i] - q)
    return taumat, thetamat
