"""
Inverse kinematics: the joint positions that put a point and frame of a link at a target pose.

Modern Robotics' numerical IK (``IKinBody`` / ``IKinSpace``, ch. 6.2) generalized to any link
and point of any model (a tree, prismatic joints, mimic joints, a floating base), with joint
limits, chosen task rows and an adaptive damping:

    e(q) = the twist that moves the end-effector frame T(q) to the target T_d in unit time
    q <- q + dq,   dq = argmin ``|J dq - e|^2`` + lambda^2 ``|dq|^2``   (J: the Jacobian of the
    twist)

**The end-effector frame** is the link's URDF frame (its axes) moved to ``point`` (given in that
frame, from its origin; None = the origin), as a ROS user names a tool frame; targets are its
pose (``rotation`` (3, 3), ``position`` (3,)) in the inertial (world) frame.

**The error twist** e is MR's: the body twist V_b = log(T^-1 T_d) (6,) = [w; v], projected by
``frame``:

- ``'world'`` (default): [R w; R v], world axes at the point: rows are world x, y, z of the
  rotation vector and of the position error (Pinocchio's LOCAL_WORLD_ALIGNED);
- ``'body'``: V_b itself, end-effector axes (MR's ``IKinBody``);
- ``'space'``: Ad_T V_b, world axes at the WORLD ORIGIN (MR's ``IKinSpace``; its linear rows
  depend on where the origin is).

``rows`` selects task components of that twist (indices 0..5 or names of ``ROW_NAMES`` =
wx, wy, wz, vx, vy, vz, or 'position' / 'orientation'): the others are free.  With no
rotation row (or ``rotation=None``: position only) the target rotation is the current one, so
the error is the pure position error R'(p_d - p).  With every linear row selected, a zero error
means the position is reached exactly whatever rows of rotation are selected.

**Convergence** (MR's test): the norm of the selected rotation rows of e <= ``tol_rotation``
[rad] and of the selected linear rows <= ``tol_position`` [m].  In the 'world' and 'body'
frames the first is the angle between the two orientations and the second the position
error once the orientation is reached (exactly, when rotation is not a task).

**The step** is damped least squares through the SVD of J (the pseudo-inverse when lambda = 0).
Adaptive (Levenberg-Marquardt, default): lambda^2 starts at 0.01 max_j ``|J_j|^2`` (Nielsen's
start; J_j the Jacobian's columns), at least ``damping``^2, which keeps the first steps near
the seed (an undamped step from near a singularity can flip the arm to a far solution); a step
is taken only if it lowers ``|e|^2``, and lambda^2 follows the gain ratio rho = (actual decrease of
``|e|^2``) / (decrease the linear model predicted) as Nielsen's rule does: times max(1/3,
1 - (2 rho - 1)^3) (not below ``damping``^2) after a step taken, times 2, 4, 8... after steps
refused (from 1e-6^2 when it is 0).  The iteration stops converged, at ``max_iterations``, or when
no
step lowers the error any more (lambda beyond 1e6, or three steps taken each lowering ``|e|^2``
by less than 1e-12 of it): the target is out of reach from here, and the result holds the
closest configuration found and its error (``success`` False).  Not adaptive (MR's iteration):
every step is taken.

**Joint limits** (the URDF ``<limit lower upper>``; a joint without a range, lower >= upper,
is unbounded) are never exceeded: the seed is clamped into them; a joint at a bound that
the step would push further out is left out of the step (solved again with the others), and
a step that would take a joint across a bound is shortened, its direction kept, so that the
joint stops on it.

**Coordinates**: ``q`` and ``seed`` are the robot's independent coordinates
(``robot.coordinates.names``: SPART's joint variables when it has no mimic joint; a mimic
joint follows its leader, whose limits then include the follower's, mapped).

**The base** (SPART's state: ``R0`` (3, 3) base CoM frame -> inertial, ``r0`` (3,) base CoM;
both None = the URDF base link frame at the world origin, so targets are in the base link
frame):

- ``base='fixed'``: the base stays where it is (a fixed-base robot, or a floating base held,
  e.g. by a docking mechanism or thrusters); J = Jm, the joint columns.
- ``base='free'``: a free-floating base, the system at rest (zero momentum) and moving only
  its joints: the base reacts (momentum conservation), so the end-effector twist is
  J* qdot with the generalized Jacobian J* = Jm - J0 H0^-1 H0m (Umetani and Yoshida), and the
  base pose depends on the joint path, not only on where it ends (the base attitude is not a
  function of q).  The solution is therefore a path: moving the joints along the straight
  segments between the points of ``result.path`` (from the seed) at zero momentum puts the
  end effector at the target and the base at ``result.R0``, ``result.r0`` (the base reaction
  u0 = -H0^-1 H0m qdot integrated along each segment by RK4 in steps of at most 0.02 rad
  or m of every joint).  The system CoM does not move.

Results: an :data:`IKResult`.  Arguments are checked at the entry (InputError naming the
argument); values beyond 1e150 are refused as too large.
"""

from collections import namedtuple
import math

import numpy as np

from . import _checks as chk
from .errors import InputError, ModelError, SpartError
from .fast import FastDynamics
from .fast.mimic import fast_dynamics, MimicFastDynamics
from .invertibility import check_invertible
from .jacobians import com_offset
from .rigid_motion import _skew, _transform_log

__all__ = [
    'InverseKinematics',
    'inverse_kinematics',
    'IKResult',
    'position_limits',
    'ROW_NAMES',
    'FRAMES',
]

ROW_NAMES = ('wx', 'wy', 'wz', 'vx', 'vy', 'vz')
FRAMES = ('world', 'body', 'space')
BASES = ('fixed', 'free')
_ROW_GROUPS = {'position': (3, 4, 5), 'orientation': (0, 1, 2), 'pose': (0, 1, 2, 3, 4, 5)}
_LAMBDA_START = 1e-6  # the damping a refused step starts from when ``damping`` is 0
_LAMBDA_MAX = 1e6  # beyond: no step lowers the error (a local minimum of |e|)
_STALL = 1e-12  # an accepted step lowering |e|^2 by less than this fraction ...
_STALL_STEPS = 3  # ... this many times in a row: no progress
_TAU = 1e-2  # Nielsen's tau: lambda^2 starts at tau max_j |J_j|^2 (adaptive)
_SUBSTEP = 0.02  # free base: the largest joint motion per RK4 step of the base reaction

IKResult = namedtuple(
    'IKResult', 'q success status iterations rotation_error position_error error R0 r0 path'
)
IKResult.__doc__ = """Result of :func:`inverse_kinematics`.

``q`` (n,): the joint positions (independent coordinates), the solution or the closest found;
``success``: converged within the tolerances; ``status``: 'converged', 'iteration limit' or
'no progress' (no step lowers the error: out of reach, or held by joint limits);
``iterations``: steps computed (accepted or refused); ``rotation_error`` [rad],
``position_error`` [m]: the norms of the selected rotation and linear rows of ``error`` (6,),
the final error twist in the chosen frame (rows not selected are zero); ``R0`` (3, 3), ``r0``
(3,): the base state at the end (moved only with ``base='free'``); ``path`` (k, n): the seed
(clamped into the limits) then every accepted iterate, ``q`` last."""


def position_limits(robot):
    """
    Return (lower, upper), each (n,), of the robot's independent coordinates.

    The coordinates are ``robot.coordinates.names``: the URDF position limits of each joint, a
    mimic follower's mapped onto its leader (q_f = m q_l + o) and intersected with the leader's;
    -inf / inf where a joint has no range (lower >= upper: continuous, no ``<limit>``, or urdfdom's
    default 0, 0). Ranges that meet in one point pin the coordinate there (the PR2's gripper: a
    follower of multiplier -1 with the leader's range [0, 0.548]); ModelError naming the joints
    when a leader's and a follower's ranges do not overlap.
    """
    robot = chk.robot(robot)
    c = robot.coordinates
    lower, upper = np.full(c.n, -np.inf), np.full(c.n, np.inf)
    source = [[] for _ in range(c.n)]
    for row, name in enumerate(c.full_names):
        lim = robot.joints[robot.keys.joint_id[name] - 1].limits
        col = int(np.flatnonzero(c.G[row])[0]) if c.G[row].any() else -1
        if not lim.lower < lim.upper or col < 0:
            continue
        m, o = float(c.G[row, col]), float(c.offset[row])
        lo, hi = sorted(((lim.lower - o) / m + 0.0, (lim.upper - o) / m + 0.0))  # + 0.0: no -0.0
        lower[col], upper[col] = max(lower[col], lo), min(upper[col], hi)
        source[col].append(name)
    bad = np.flatnonzero(lower > upper)
    if bad.size:
        k = int(bad[0])
        raise ModelError(
            f'robot {robot.name!r}: the position limits of joints {source[k]} (a mimic joint and '
            f'its leader {c.names[k]!r}) have no position in common'
        )
    return lower, upper


def parse_rows(rows, rotation_given):
    """
    Return ``rows`` as a sorted tuple of indices; InputError naming ``rows``.

    ``rows``: None, indices 0..5, names of ROW_NAMES, 'position', 'orientation' or 'pose'; None =
    all six, or the position rows when there is no rotation target.
    """
    if rows is None:
        return _ROW_GROUPS['pose'] if rotation_given else _ROW_GROUPS['position']
    expected = (
        'rows: expected distinct task rows: indices 0..5 or names of [wx, wy, wz, vx, vy, vz] (or '
        "'position', 'orientation', 'pose'), got "
    )
    items = [rows] if isinstance(rows, str) else rows
    if isinstance(items, (dict, set, bytes)) or not hasattr(items, '__iter__'):
        raise InputError(expected + chk.given(rows))
    out = []
    for r in items:
        if isinstance(r, str):
            if r in _ROW_GROUPS:
                out.extend(_ROW_GROUPS[r])
            elif r in ROW_NAMES:
                out.append(ROW_NAMES.index(r))
            else:
                raise InputError(expected + chk.given(rows))
        elif (
            isinstance(r, (int, np.integer))
            and not isinstance(r, (bool, np.bool_))
            and 0 <= r <= 5
        ):
            out.append(int(r))
        else:
            raise InputError(expected + chk.given(rows))
    if not out or len(set(out)) != len(out):
        raise InputError(expected + chk.given(rows))
    out = tuple(sorted(out))
    if not rotation_given and any(r < 3 for r in out):
        raise InputError(
            f'rows: {[ROW_NAMES[r] for r in out if r < 3]} are rotation rows but no rotation '
            'target was given (rotation=None: position only)'
        )
    return out


def _numbers(name, a):
    a = chk.numeric(name, a, 'inverse kinematics')
    if chk.huge([(name, a)]):
        raise chk.overflow_error('inverse kinematics', [(name, a)])
    return a


def _vector(name, x, n):
    return _numbers(name, chk.vector(name, x, n))


def _tolerance(name, x):
    v = chk.nonnegative(name, x)
    if not v > 0:
        raise InputError(f'{name}: expected a tolerance > 0, got {chk.given(x)}')
    return v


def _choice(name, x, options):
    if not isinstance(x, str) or x not in options:
        raise InputError(f'{name}: expected one of {list(options)}, got {chk.given(x)}')
    return x


def _count(name, x):
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, (int, np.integer)) or x < 0:
        raise InputError(f'{name}: expected an integer >= 0, got {chk.given(x)}')
    return int(x)


def _nearest_rotation(R):
    """Return the rotation nearest to ``R`` (checked within 1e-3 of one): its polar factor."""
    U, _, Vt = np.linalg.svd(R)
    return U @ Vt


def _quaternion(R):
    """Return unit quaternion [x, y, z, w] of a rotation matrix (Shepperd's method)."""
    t = R[0, 0] + R[1, 1] + R[2, 2]
    k = int(np.argmax([R[0, 0], R[1, 1], R[2, 2], t]))
    if k == 3:
        w = 0.5 * math.sqrt(1.0 + t)
        q = [
            (R[2, 1] - R[1, 2]) / (4 * w),
            (R[0, 2] - R[2, 0]) / (4 * w),
            (R[1, 0] - R[0, 1]) / (4 * w),
            w,
        ]
    else:
        i, j, m = k, (k + 1) % 3, (k + 2) % 3
        v = 0.5 * math.sqrt(max(1.0 + R[i, i] - R[j, j] - R[m, m], 0.0))
        q = [0.0, 0.0, 0.0, (R[m, j] - R[j, m]) / (4 * v)]
        q[i], q[j], q[m] = v, (R[j, i] + R[i, j]) / (4 * v), (R[m, i] + R[i, m]) / (4 * v)
    q = np.array(q)
    return q / math.sqrt(float(q @ q))


def _rotation(q):
    """Rotation matrix of a quaternion [x, y, z, w] (normalized here)."""
    x, y, z, w = q / math.sqrt(float(q @ q))
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def _quaternion_times(q, w):
    """
    ``q`` (x) [w; 0].

    The quaternion product with a pure (vector) quaternion, [x, y, z, w] order.
    """
    v, s = q[0:3], q[3]
    return np.concatenate([s * w + _skew(v) @ w, [-float(v @ w)]])


def _damped_step(A, b, lam):
    """
    Return the argmin of ``|A x - b|^2`` + lam^2 ``|x|^2``.

    For lam > 0 from the smaller of the two regularized normal equations (positive definite; a
    Cholesky solve is a few times cheaper than an SVD), for lam = 0 the pseudo-inverse through the
    SVD of A (singular values below 1e-15 of the largest dropped, as numpy's pinv).
    """
    m, n = A.shape
    if lam > 0.0:
        mu = lam * lam
        if m <= n:
            return A.T @ np.linalg.solve(A @ A.T + mu * np.eye(m), b)
        return np.linalg.solve(A.T @ A + mu * np.eye(n), A.T @ b)
    U, s, Vt = np.linalg.svd(A, full_matrices=False)
    keep = s > 1e-15 * (s[0] if s.size else 0.0)
    gain = np.divide(1.0, s, out=np.zeros_like(s), where=keep)
    return Vt.T @ (gain * (U.T @ b))


class InverseKinematics:
    """
    Inverse kinematics of one point and frame on ``link`` of ``robot`` (see the module docstring).

    Built once and solved for any number of targets.

    ``link``: SPART id (0 = base) or name; ``point`` (3,): the end-effector point in the link's
    URDF frame (None = its origin); ``base``: 'fixed' or 'free'; ``fast``: the compiled model to
    use (a :class:`~spart_ros.core.fast.FastDynamics`, or a ``MimicFastDynamics`` for a robot with
    mimic joints; None = ``spart_ros.core.fast.mimic.fast_dynamics(robot)``): its buffers are
    overwritten by :meth:`solve`.  Attributes: ``names`` (the coordinates, in the order of q),
    ``lower``, ``upper`` (their limits, see :func:`position_limits`).
    """

    def __init__(self, robot, link, point=None, base='fixed', fast=None):
        self.robot = robot = chk.robot(robot)
        if robot.symbolic:
            raise ModelError(f'robot {robot.name!r} is symbolic: inverse kinematics needs numbers')
        self.link = chk.link_id('link', link, robot)
        self.point = None if point is None else _vector('point', point, 3)
        self.base = _choice('base', base, BASES)
        if fast is None:
            fast = fast_dynamics(robot)
        elif not isinstance(fast, (FastDynamics, MimicFastDynamics)) or fast.robot is not robot:
            raise InputError(
                f'fast: expected the FastDynamics (or MimicFastDynamics) of robot {robot.name!r}, '
                f'got {chk.given(fast)}'
            )
        elif isinstance(fast, FastDynamics) and robot.mimic:
            raise InputError(
                f'fast: robot {robot.name!r} has mimic joints: pass its MimicFastDynamics '
                '(spart_ros.core.fast.mimic.fast_dynamics), which works in independent coordinates'
            )
        self.fast = fast
        self._kinematics = getattr(
            fast, 'full', fast
        )  # link_pose reads the full model's workspace
        self.names = list(robot.coordinates.names)
        self.n = len(self.names)
        self.lower, self.upper = position_limits(robot)
        self._offset = np.ascontiguousarray(com_offset(robot, self.link, self.point), dtype=float)
        T = np.asarray(robot.link(self.link).T, dtype=float)
        self._R_ce = np.ascontiguousarray(T[:3, :3].T)  # end-effector (link) axes in the CoM frame
        if self.base == 'free':
            check_invertible(
                robot, True, base_only=True
            )  # SingularModelError naming what has no mass
        T_bc = np.asarray(robot.base_link.T, dtype=float)
        self._R_bc, self._p_bc = T_bc[:3, :3], T_bc[:3, 3]

    # -- kinematics -------------------------------------------------------------------------
    def pose(self, q, R0=None, r0=None):
        """
        Return (R (3, 3), p (3,)).

        The end-effector frame and point at joint positions ``q`` (n,) (independent coordinates),
        inertial frame; base ``R0``, ``r0`` as in :meth:`solve`.
        """
        q = _vector('q', q, self.n)
        R0, r0 = self._base_state(R0, r0)
        with chk.quiet():
            R, p, _ = self._pose(R0, r0, q)
        return chk.results('InverseKinematics.pose', (R, p), [('q', q), ('R0', R0), ('r0', r0)])

    def _pose(self, R0, r0, q):
        """(R, p) of the end-effector frame at this state; leaves the kinematics in ``fast``."""
        J, _ = self.fast.jacobian(self.link, R0, r0, q, offset=self._offset, bias=False)
        R_c, d = self._kinematics.link_pose(self.link)
        return R_c @ self._R_ce, r0 + d + R_c @ self._offset, J.copy()  # J: fast's buffer

    def _task_jacobian(self, J, R0, r0, q, R, p, frame):
        """
        Return the Jacobian (6, n) of the end-effector twist in ``frame`` w.r.t. the joints.

        World frame: [w; velocity of the point], world axes. Jm, or J* for a free base.
        """
        Jm = J[:, 6:]
        if self.base == 'free':
            H = self.fast.mass_matrix(R0, r0, q)
            Jm = Jm - J[:, :6] @ np.linalg.solve(H[:6, :6], H[:6, 6:])
        if frame == 'world':
            return Jm.copy()
        if frame == 'body':
            return np.vstack([R.T @ Jm[0:3], R.T @ Jm[3:6]])
        return np.vstack([Jm[0:3], Jm[3:6] + _skew(p) @ Jm[0:3]])  # space: velocity at the origin

    @staticmethod
    def _error(R, p, R_d, p_d, frame):
        """Return the error twist (6,) in ``frame``: MR's V_b = log(T^-1 T_d), projected."""
        Vb = _transform_log(R.T @ R_d, R.T @ (p_d - p))
        if frame == 'body':
            return Vb
        w, v = R @ Vb[0:3], R @ Vb[3:6]
        if frame == 'space':
            v = v + _skew(p) @ w
        return np.concatenate([w, v])

    def _base_rates(self, R0, r0, q, dq):
        """u0 (6,) of the free base when the joints move at ``dq`` at zero momentum."""
        H = self.fast.mass_matrix(R0, r0, q)
        return -np.linalg.solve(H[:6, :6], H[:6, 6:] @ dq)

    def _move_base(self, R0, r0, q, q_new):
        """
        Return the base state (R0, r0) after the joints moved from q to q_new at zero momentum.

        The joints move along the straight segment; classical RK4 on the base attitude quaternion
        (q' = q (x) [w0; 0] / 2, w0 in the base frame; normalized at each stage) and on r0' = v0.
        """
        dq = q_new - q
        steps = max(1, int(math.ceil(float(np.abs(dq).max(initial=0.0)) / _SUBSTEP)))
        h = 1.0 / steps
        x = np.concatenate([_quaternion(R0), r0])

        def rate(x, s):
            u0 = self._base_rates(_rotation(x[0:4]), x[4:7], q + s * dq, dq)
            return np.concatenate([0.5 * _quaternion_times(x[0:4], u0[0:3]), u0[3:6]])

        for k in range(steps):
            s = k * h
            k1 = rate(x, s)
            k2 = rate(x + 0.5 * h * k1, s + 0.5 * h)
            k3 = rate(x + 0.5 * h * k2, s + 0.5 * h)
            k4 = rate(x + h * k3, s + h)
            x = x + (h / 6.0) * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
            x[0:4] /= math.sqrt(float(x[0:4] @ x[0:4]))
        return np.ascontiguousarray(_rotation(x[0:4])), np.ascontiguousarray(x[4:7])

    def _limited_step(self, q, J, e, lam):
        """
        ``q`` + the damped step, limit-aware.

        Joints at a bound that the step pushes further out are left out (the step solved again with
        the others), then the step is shortened (its direction kept) until no joint crosses a
        bound; the joints that reach one stop on it.
        """
        lower, upper = self.lower, self.upper
        at_lower, at_upper = q <= lower, q >= upper
        d = _damped_step(J, e, lam)
        if at_lower.any() or at_upper.any():
            free = np.ones(self.n, dtype=bool)
            for _ in range(self.n):
                out = free & ((at_lower & (d < 0.0)) | (at_upper & (d > 0.0)))
                if not out.any():
                    break
                free &= ~out
                cols = np.flatnonzero(free)
                d = np.zeros(self.n)
                if cols.size:
                    d[cols] = _damped_step(J[:, cols], e, lam)
        q_new = q + d
        over = (q_new > upper) | (q_new < lower)
        if not over.any():
            return q_new
        k = np.flatnonzero(over)  # the step is shortened to the first bound it crosses
        room = np.where(d[k] > 0.0, upper[k] - q[k], lower[k] - q[k]) / d[k]
        scale = float(room.min())
        q_new = q + scale * d
        hit = k[room <= scale]  # the joints that set the scale end exactly on their bound
        q_new[hit] = np.where(d[hit] > 0.0, upper[hit], lower[hit])
        return np.clip(q_new, lower, upper)

    # -- the solver ---------------------------------------------------------------------------
    def _base_state(self, R0, r0):
        if R0 is None:
            R0 = self._R_bc  # the base link frame's axes = the world's
        else:
            R0 = np.ascontiguousarray(_nearest_rotation(_numbers('R0', chk.rotation('R0', R0))))
        if r0 is None:
            r0 = R0 @ self._R_bc.T @ self._p_bc  # the base link frame's origin at the world origin
        else:
            r0 = _vector('r0', r0, 3)
        return np.ascontiguousarray(R0, dtype=float), np.ascontiguousarray(r0, dtype=float)

    def solve(
        self,
        position,
        seed,
        rotation=None,
        rows=None,
        frame='world',
        R0=None,
        r0=None,
        tol_rotation=1e-6,
        tol_position=1e-6,
        max_iterations=100,
        damping=1e-6,
        adaptive=True,
    ):
        """
        Return the joint positions that put the end-effector point and frame at a target pose.

        The point at ``position`` (3,) and its frame at ``rotation`` (3, 3) (None: position only),
        inertial frame, from ``seed`` (n,).

        ``rows``, ``frame``, tolerances ``tol_rotation`` [rad] and ``tol_position`` [m], at most
        ``max_iterations`` steps, ``damping`` (lambda >= 0, in the units of J's
        singular values), ``adaptive``, ``R0``/``r0``: see the module docstring.  Returns an
        :data:`IKResult`; an unreachable target is ``success`` False with the closest
        configuration found and its error.
        """
        p_d = _vector('position', position, 3)
        seed = _vector('seed', seed, self.n)
        R_d = (
            None
            if rotation is None
            else _nearest_rotation(_numbers('rotation', chk.rotation('rotation', rotation)))
        )
        rows = parse_rows(rows, R_d is not None)
        frame = _choice('frame', frame, FRAMES)
        R0, r0 = self._base_state(R0, r0)
        tol_r, tol_p = (
            _tolerance('tol_rotation', tol_rotation),
            _tolerance('tol_position', tol_position),
        )
        max_iterations = _count('max_iterations', max_iterations)
        damping = chk.nonnegative('damping', damping)
        adaptive = chk.flag('adaptive', adaptive)
        try:
            with chk.quiet():
                return self._solve(
                    p_d,
                    seed,
                    R_d,
                    rows,
                    frame,
                    R0,
                    r0,
                    tol_r,
                    tol_p,
                    max_iterations,
                    damping,
                    adaptive,
                )
        except (np.linalg.LinAlgError, FloatingPointError, SpartError) as err:
            if isinstance(err, SpartError) and ': too large: ' not in str(err):
                raise
            raise chk.overflow_error(
                'inverse kinematics',
                [('position', p_d), ('seed', seed), ('R0', R0), ('r0', r0)],
                self.robot,
            ) from None

    def _solve(
        self, p_d, seed, R_d, rows, frame, R0, r0, tol_r, tol_p, max_iterations, damping, adaptive
    ):
        rows = np.array(rows, dtype=np.intp)
        rot, lin = rows[rows < 3], rows[rows >= 3]

        def evaluate(R0, r0, q):
            R, p, J = self._pose(R0, r0, q)
            e = self._error(R, p, R if not rot.size else R_d, p_d, frame)
            if not np.all(np.isfinite(e)):
                raise FloatingPointError
            return R, p, J, e

        def norms(e):
            er, ep = e[rot], e[lin]
            return math.sqrt(float(er @ er)), math.sqrt(float(ep @ ep))

        q = np.clip(seed, self.lower, self.upper)
        R, p, J, e = evaluate(R0, r0, q)
        cost = float(e[rows] @ e[rows])
        path = [q.copy()]
        mu, mu_min, growth = damping * damping, damping * damping, 2.0  # mu = lambda^2
        if (
            adaptive
        ):  # a first step near the seed (an undamped one from near a singularity flips the arm)
            Jt0 = self._task_jacobian(J, R0, r0, q, R, p, frame)[rows]
            mu = max(mu, _TAU * float(np.max(np.sum(Jt0 * Jt0, axis=0), initial=0.0)))
        iterations, stalled, Jt, status = 0, 0, None, None
        while True:
            er, ep = norms(e)
            if er <= tol_r and ep <= tol_p:
                status = 'converged'
                break
            if iterations >= max_iterations:
                status = 'iteration limit'
                break
            if Jt is None:
                Jt = self._task_jacobian(J, R0, r0, q, R, p, frame)[rows]
            iterations += 1
            es = e[rows]
            q_new = self._limited_step(q, Jt, es, math.sqrt(mu))
            R0_new, r0_new = self._move_base(R0, r0, q, q_new) if self.base == 'free' else (R0, r0)
            R_new, p_new, J_new, e_new = evaluate(R0_new, r0_new, q_new)
            cost_new = float(e_new[rows] @ e_new[rows])
            rest = es - Jt @ (q_new - q)
            predicted = cost - float(rest @ rest)  # the decrease of |e|^2 the linear model expects
            if not adaptive or (cost_new < cost and predicted > 0.0):
                if adaptive:
                    rho = (cost - cost_new) / predicted
                    mu = max(mu * max(1.0 / 3.0, 1.0 - (2.0 * rho - 1.0) ** 3), mu_min)
                    growth = 2.0
                stalled = stalled + 1 if cost - cost_new <= _STALL * cost else 0
                q, R0, r0, R, p, J, e, cost, Jt = (
                    q_new,
                    R0_new,
                    r0_new,
                    R_new,
                    p_new,
                    J_new,
                    e_new,
                    cost_new,
                    None,
                )
                path.append(q.copy())
                if adaptive and stalled >= _STALL_STEPS:
                    status = 'no progress'
                    break
            else:
                mu = mu * growth if mu > 0.0 else _LAMBDA_START**2
                growth *= 2.0
                if mu > _LAMBDA_MAX**2:
                    status = 'no progress'
                    break
        er, ep = norms(e)
        error = np.zeros(6)
        error[rows] = e[rows]
        result = IKResult(
            q,
            status == 'converged',
            status,
            iterations,
            er,
            ep,
            error,
            R0.copy(),
            r0.copy(),
            np.array(path),
        )
        if not all(np.all(np.isfinite(x)) for x in (q, error, R0, r0)):
            raise FloatingPointError
        return result


def inverse_kinematics(
    robot,
    link,
    position,
    seed,
    rotation=None,
    point=None,
    rows=None,
    frame='world',
    base='fixed',
    R0=None,
    r0=None,
    tol_rotation=1e-6,
    tol_position=1e-6,
    max_iterations=100,
    damping=1e-6,
    adaptive=True,
):
    """
    Return the joint positions that put ``point`` of ``link`` at a target pose.

    Joint positions are the robot's independent coordinates. They put ``point`` (3,) of ``link``
    (in its URDF frame; None = its origin) at ``position`` (3,) and the link's axes at ``rotation``
    (3, 3) (None: position only), inertial frame, from ``seed`` (n,).

    One-off form of :class:`InverseKinematics` (build that once to solve many targets); every
    argument is described in the module docstring: ``base``, ``rows``, ``frame``, ``R0``, ``r0``,
    ``tol_rotation``, ``tol_position``, ``max_iterations``, ``damping``, ``adaptive``.  Returns an
    :data:`IKResult`.

    >>> res = inverse_kinematics(robot, 'tool0', T[:3, 3], q0, rotation=T[:3, :3])
    >>> res.success, res.q, res.iterations
    """
    return InverseKinematics(robot, link, point, base).solve(
        position,
        seed,
        rotation,
        rows,
        frame,
        R0,
        r0,
        tol_rotation,
        tol_position,
        max_iterations,
        damping,
        adaptive,
    )
