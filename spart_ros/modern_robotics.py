"""
Modern Robotics' inverse kinematics and trajectory functions under the book's names.

For porting scripts line by line (``from spart_ros import modern_robotics as mr``).

Same arguments, order and results as the book's library (``modern_robotics`` on PyPI,
``ModernRoboticsBook.jl``): screw axes as the columns of a (6, n) array [w; v], poses as 4x4
homogeneous transforms.  Each is a thin alias of the general spart_ros function named beside it:

===========================  =====================================================================
IKinBody, IKinSpace          ``core.inverse_kinematics`` on ``core.robot_from_screw_axes(...)``
(link
                             ``ee``), frame 'body' / 'space', MR's undamped Newton iteration (every
                             step taken, at most 20), tolerances eomg [rad], ev [m]
FKinBody, FKinSpace          the pose of that robot's ``ee`` (``core.base_state.link_frame_pose``)
CubicTimeScaling,            ``control.time_scaling.cubic_time_scaling`` / ``quintic_time_scaling``
QuinticTimeScaling           (``.s``)
JointTrajectory              ``control.paths.JointPath`` sampled at N instants: (N, n)
ScrewTrajectory,             ``control.paths.ScrewPath`` / ``CartesianPath`` sampled at N instants:
CartesianTrajectory          a list of N 4x4 poses
===========================  =====================================================================

``method`` is MR's 3 (cubic) or 5 (quintic).  The general functions do more (any link and point
of a URDF, joint limits, task rows, damping, a free-floating base; velocities and accelerations
of the paths at any time): see their docstrings.
"""

import numpy as np

from .control.paths import CartesianPath, JointPath, pose_matrix, ScrewPath
from .control.time_scaling import cubic_time_scaling, quintic_time_scaling
from .core import checks as chk
from .core.base_state import link_frame_pose
from .core.errors import InputError
from .core.inverse_kinematics import InverseKinematics
from .core.kinematics import kinematics
from .core.rigid_motion import checked_transform
from .core.screw_chain import robot_from_screw_axes

__all__ = [
    'IKinBody',
    'IKinSpace',
    'FKinBody',
    'FKinSpace',
    'CubicTimeScaling',
    'QuinticTimeScaling',
    'JointTrajectory',
    'ScrewTrajectory',
    'CartesianTrajectory',
]

_MAX_ITERATIONS = 20  # MR's maxiterations


def _fk(robot, thetalist):
    q = robot.coordinates.positions(chk.vector('thetalist', thetalist, robot.coordinates.n))
    R0, r0 = np.eye(3), np.zeros(3)  # the massless base's CoM frame is its link frame
    k = kinematics(R0, r0, q, robot)
    R, p = link_frame_pose(robot, 'ee', R0, r0, k.RL, k.rL)
    return pose_matrix(R, p)


def FKinSpace(M, Slist, thetalist):
    """
    Return the end-effector pose (4, 4) at joint values ``thetalist``.

    The chain has space screw axes ``Slist`` (6, n) and home pose ``M``.
    """
    return _fk(robot_from_screw_axes(Slist, M), thetalist)


def FKinBody(M, Blist, thetalist):
    """
    Return the end-effector pose (4, 4) at joint values ``thetalist``.

    The chain has body screw axes ``Blist`` (6, n).
    """
    return _fk(robot_from_screw_axes(Blist, M, body=True), thetalist)


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

    From ``thetalist0``; converged when |w_b| <= eomg and |v_b| <= ev (at most 20 iterations).
    """
    return _ik(Blist, M, T, thetalist0, eomg, ev, True)


def IKinSpace(Slist, M, T, thetalist0, eomg, ev):
    """(thetalist, success): MR's space-frame Newton-Raphson IK (|w_s| <= eomg, |v_s| <= ev)."""
    return _ik(Slist, M, T, thetalist0, eomg, ev, False)


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


def _count(N):
    if isinstance(N, bool) or not isinstance(N, (int, np.integer)) or N < 2:
        raise InputError(f'N: expected an integer >= 2, got {chk.given(N)}')
    return int(N)


def JointTrajectory(thetastart, thetaend, Tf, N, method):
    """
    Return (N, n): the straight joint-space path from ``thetastart`` to ``thetaend``.

    Over ``Tf`` seconds at N evenly spaced instants (time scaling ``method`` 3 or 5).
    """
    path = JointPath(thetastart, thetaend, Tf, _method(method))
    return np.array([r.position for r in path.samples(_count(N))])


def ScrewTrajectory(Xstart, Xend, Tf, N, method):
    """N poses (4, 4) along the constant screw from ``Xstart`` to ``Xend`` over ``Tf`` seconds."""
    path = ScrewPath(Xstart, Xend, Tf, _method(method))
    return [pose_matrix(s.rotation, s.position) for s in path.samples(_count(N))]


def CartesianTrajectory(Xstart, Xend, Tf, N, method):
    """N poses (4, 4): the point on the straight line, the frame about a fixed axis (decoupled)."""
    path = CartesianPath(Xstart, Xend, Tf, _method(method))
    return [pose_matrix(s.rotation, s.position) for s in path.samples(_count(N))]
