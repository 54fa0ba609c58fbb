"""Geometric Jacobians of points on links and their time derivatives (SPART: Jacob, Jacobdot)."""

from collections import namedtuple

from . import _backend as bk
from . import _checks as chk
from .accelerations import twist_rate_map
from .attitude import _skew as skew_symmetric
from .differential_kinematics import twist_propagation
from .model import FIXED

JacobianResult = namedtuple('JacobianResult', 'J0 Jm')
JacobianDotResult = namedtuple('JacobianDotResult', 'J0dot Jmdot')


def _rate_block(v, *like):
    """[0 0; [v]x 0], (6, 6): d/dt of a twist_propagation matrix whose lever arm changes at v."""
    D = bk.zeros((6, 6), v, *like)
    D[3:6, 0:3] = skew_symmetric(v)
    return D


@chk.checked
def jacobian(rp, r0, rL, P0, pm, i, robot):
    """
    Geometric Jacobian of point ``rp`` (3,) fixed on link ``i``.

    (SPART: Jacob)

    t_p = J0 u0 + Jm um with t_p = [angular velocity of link i; velocity of the
    point], inertial frame.  ``i`` is the SPART link id (0 = base) or a link name.
    Returns ``J0`` (6, 6) and ``Jm`` (6, n_q) (zero for the base).
    """
    i = chk.link_id('i', i, robot)
    J0 = twist_propagation(r0, rp, P0) @ P0
    Jm = bk.zeros((6, robot.n_q), rp, r0, rL, P0, pm)
    if i > 0:
        for j in range(1, i + 1):
            joint = robot.joints[j - 1]
            if joint.type != FIXED and robot.con.branch[i - 1, j - 1]:
                Jm[:, joint.q_id - 1] = twist_propagation(rL[:, j - 1], rp, Jm) @ pm[:, j - 1]
    return JacobianResult(J0, Jm)


@chk.checked
def jacobian_dot(rp, tp, r0, t0, rL, tL, P0, pm, i, robot):
    """
    Time derivative of :func:`jacobian`.

    (SPART: Jacobdot)

    ``i``: the link id, ``rp`` (3,) the point; ``tp`` (6,) is the twist of the point ([omega_i;
    velocity of rp]), ``t0`` (6,)
    and ``tL`` (6, n) the base and link twists.  Returns ``J0dot`` (6, 6) and
    ``Jmdot`` (6, n_q); d/dt t_p = J0 u0dot + Jm umdot + J0dot u0 + Jmdot um.
    """
    i = chk.link_id('i', i, robot)
    Omega0 = bk.zeros((6, 6), t0)
    Omega0[0:3, 0:3] = skew_symmetric(t0[0:3])
    J0dot = twist_propagation(r0, rp, P0) @ Omega0 @ P0 + _rate_block(t0[3:6] - tp[3:6], P0) @ P0
    Jmdot = bk.zeros((6, robot.n_q), rp, tp, r0, t0, rL, tL, P0, pm)
    if i > 0:
        for j in range(1, i + 1):
            joint = robot.joints[j - 1]
            if joint.type != FIXED and robot.con.branch[i - 1, j - 1]:
                Jmdot[:, joint.q_id - 1] = (
                    twist_propagation(rL[:, j - 1], rp, Jmdot) @ twist_rate_map(tL[0:3, j - 1])
                    + _rate_block(tL[3:6, j - 1] - tp[3:6], Jmdot)
                ) @ pm[:, j - 1]
    return JacobianDotResult(J0dot, Jmdot)


def _point(link, offset, R0, r0, RL, rL, robot):
    i = chk.link_id('link', link, robot)
    R, r = (R0, r0) if i == 0 else (RL[:, :, i - 1], rL[:, i - 1])
    rp = r if offset is None else r + R @ offset
    return i, r, rp


@chk.checked
def point_jacobian(link, offset, R0, r0, RL, rL, P0, pm, robot):
    """
    Jacobian of a point on any link, the base included.

    ``link``: SPART link id (0 = base) or link name; ``offset`` (3,): the point's
    offset from the link CoM in the link CoM frame (None = the CoM itself).
    Other inputs as from :func:`kinematics` / :func:`differential_kinematics`.
    Returns (J0 (6, 6), Jm (6, n_q)) as :func:`jacobian`.
    """
    i, _, rp = _point(link, offset, R0, r0, RL, rL, robot)
    return jacobian(rp, r0, rL, P0, pm, i, robot)


@chk.checked
def point_jacobian_dot(link, offset, R0, r0, t0, RL, rL, tL, P0, pm, robot):
    """
    Time derivative of :func:`point_jacobian`.

    Same arguments (``link``, ``offset``...) plus the twists ``t0`` (6,) and ``tL`` (6, n).
    Returns (J0dot (6, 6), Jmdot (6, n_q)).
    """
    i, r, rp = _point(link, offset, R0, r0, RL, rL, robot)
    t = t0 if i == 0 else tL[:, i - 1]
    tp = bk.zeros(6, t, rp)
    tp[0:3] = t[0:3]
    tp[3:6] = t[3:6] + skew_symmetric(t[0:3]) @ (rp - r)
    return jacobian_dot(rp, tp, r0, t0, rL, tL, P0, pm, i, robot)


# --- points given in the URDF link frame (ROS users' tool frames)
# ---------------------------------


def com_offset(robot, link, point):
    """
    Return SPART's ``offset`` (3,) of a point given in a link's URDF frame.

    The point's offset from the link CoM, in the link CoM frame (what :func:`point_jacobian` and
    FastDynamics.jacobian take). ``link``: SPART id (0 = base) or name; ``point`` (3,): from the
    URDF link frame's origin, in its axes (None = the origin).  Inverse: p_link = R_lc offset +
    p_lc, with (R_lc, p_lc) = ``robot.link(link).T``, the CoM frame in the link frame.
    """
    robot = chk.robot(robot)
    i = chk.link_id('link', link, robot)
    T = robot.link(i).T
    p = bk.zeros(3, T) if point is None else chk.vector('point', point, 3)
    return T[:3, :3].T @ (p - T[:3, 3])


@chk.checked
def link_point_jacobian(link, point, R0, r0, RL, rL, P0, pm, robot):
    """
    Return the :func:`point_jacobian` of a point given in the link's URDF frame.

    The link's URDF frame is ROS's link frame, not SPART's CoM frame: ``point`` (3,) from the URDF
    link frame's origin, in its axes (None = the link frame's origin). Rows [angular velocity of
    the link; velocity of the point], inertial frame. Returns (J0 (6, 6), Jm (6, n_q)); the point's
    pose is :func:`spart_ros.core.base_state.link_frame_pose` plus R point.
    """
    return point_jacobian(link, com_offset(robot, link, point), R0, r0, RL, rL, P0, pm, robot)


@chk.checked
def link_point_jacobian_dot(link, point, R0, r0, t0, RL, rL, tL, P0, pm, robot):
    """
    Return the :func:`point_jacobian_dot` of a point given in the link's URDF frame.

    See :func:`link_point_jacobian`. Returns (J0dot (6, 6), Jmdot (6, n_q)).
    """
    return point_jacobian_dot(
        link, com_offset(robot, link, point), R0, r0, t0, RL, rL, tL, P0, pm, robot
    )
