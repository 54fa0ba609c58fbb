"""
Expected outputs of the dynamics node, computed independently of the node's code.

Only the numpy SPART functions (``spart_ros.spart``) and formulas written out here are
used: not the fast path, not ``spart_ros.core.base_state``, not ``spart_ros.nodes``.
Used by test_node_state.py (the pure Model) and test_dynamics_node.py (the node process).

ROS base state (REP 105, nav_msgs/Odometry): b = URDF base link frame; R_b, p_b its pose
in the world; v_b the velocity of b's origin and w_b the angular velocity, both in b.
SPART: c = base CoM frame at (R_bc, p_bc) in b; R0 = R_b R_bc, r0 = CoM position,
u0 = [omega in c; CoM velocity in the world].
"""

from types import SimpleNamespace

import numpy as np
from spart_ros import spart


def skew(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def rot(axis, angle):
    """Active rotation about a unit axis (Rodrigues)."""
    K = skew(np.asarray(axis, float) / np.linalg.norm(axis))
    return np.eye(3) + np.sin(angle) * K + (1 - np.cos(angle)) * K @ K


def quat_xyzw(R):
    """ROS quaternion (x, y, z, w) of a rotation matrix (independent of spart_ros)."""
    R = np.asarray(R, float)
    w = np.sqrt(max(0.0, 1 + R[0, 0] + R[1, 1] + R[2, 2])) / 2
    x = np.sqrt(max(0.0, 1 + R[0, 0] - R[1, 1] - R[2, 2])) / 2
    y = np.sqrt(max(0.0, 1 - R[0, 0] + R[1, 1] - R[2, 2])) / 2
    z = np.sqrt(max(0.0, 1 - R[0, 0] - R[1, 1] + R[2, 2])) / 2
    x = np.copysign(x, R[2, 1] - R[1, 2])
    y = np.copysign(y, R[0, 2] - R[2, 0])
    z = np.copysign(z, R[1, 0] - R[0, 1])
    q = np.array([x, y, z, w])
    return q / np.linalg.norm(q)


def base_bc(robot):
    T = np.asarray(robot.base_link.T, float)
    return T[:3, :3], T[:3, 3]


def ros_to_spart(robot, R_b, p_b, v_b=np.zeros(3), w_b=np.zeros(3)):
    """(R0, r0, u0) of a ROS base state, from the rigid-body formulas."""
    R_bc, p_bc = base_bc(robot)
    rho = R_b @ p_bc  # b origin -> base CoM, world
    w_world = R_b @ w_b
    return (
        R_b @ R_bc,
        p_b + rho,
        np.concatenate([R_bc.T @ w_b, R_b @ v_b + np.cross(w_world, rho)]),
    )


def base_column_map(robot, R_b):
    """(6, 6) T with u0 = T [w_b; v_b] (u0 is linear in the twist: built column by column)."""
    T = np.zeros((6, 6))
    for k in range(6):
        e = np.zeros(6)
        e[k] = 1.0
        T[:, k] = ros_to_spart(robot, R_b, np.zeros(3), e[3:6], e[0:3])[2]
    return T


def spart_accel_to_ros(robot, R_b, w_b, u0dot):
    """
    (a_b, alpha_b) in b from SPART's u0dot.

    CoM acceleration = a_origin + alpha x rho + w x (w x rho).
    """
    R_bc, p_bc = base_bc(robot)
    alpha_b = R_bc @ u0dot[0:3]
    a_com_b = R_b.T @ u0dot[3:6]
    return a_com_b - np.cross(alpha_b, p_bc) - np.cross(w_b, np.cross(w_b, p_bc)), alpha_b


def ros_accel_to_spart(robot, R_b, w_b, a_b, alpha_b):
    R_bc, p_bc = base_bc(robot)
    a_com_b = a_b + np.cross(alpha_b, p_bc) + np.cross(w_b, np.cross(w_b, p_bc))
    return np.concatenate([R_bc.T @ alpha_b, R_b @ a_com_b])


def ros_wrench_to_tau0(robot, R_b, torque_b, force_b):
    """
    Convert a wrench given at b's origin in b to tau0.

    tau0 = [torque about the base CoM in c; force in the world].
    """
    R_bc, p_bc = base_bc(robot)
    torque_com_b = torque_b - np.cross(p_bc, force_b)
    return np.concatenate([R_bc.T @ torque_com_b, R_b @ force_b])


def tau0_to_ros_wrench(robot, R_b, tau0):
    R_bc, p_bc = base_bc(robot)
    force_b = R_b.T @ tau0[3:6]
    return R_bc @ tau0[0:3] + np.cross(p_bc, force_b), force_b


def link_com_T(robot, i):
    return np.asarray(robot.base_link.T if i == 0 else robot.links[i - 1].T, float)


def chain(robot, R_b, p_b, v_b, w_b, qm, um, floating=True):
    """Return the SPART chain on a ROS state; u0 = 0 for a fixed base."""
    R0, r0, u0 = ros_to_spart(robot, R_b, p_b, v_b, w_b)
    if not floating:
        u0 = np.zeros(6)
    o = SimpleNamespace(R0=R0, r0=r0, u0=u0, qm=np.asarray(qm, float), um=np.asarray(um, float))
    o.RJ, o.RL, o.rJ, o.rL, o.e, o.g = spart.Kinematics(R0, r0, o.qm, robot)
    o.Bij, o.Bi0, o.P0, o.pm = spart.DiffKinematics(R0, r0, o.rL, o.e, o.g, robot)
    o.t0, o.tL = spart.Velocities(o.Bij, o.Bi0, o.P0, o.pm, u0, o.um, robot)
    o.I0, o.Im = spart.I_I(R0, o.RL, robot)
    return o


def expected_outputs(
    robot, R_b, p_b, v_b, w_b, qm, um, floating=True, jacobians=(), base_columns='ros'
):
    """
    ``rL`` (3, n+1), tL (6, n+1), com (6,).

    For each (link name, offset in the URDF link frame) the Jacobian (6, 6 + n_q or n_q) and the
    point's world position.
    """
    o = chain(robot, R_b, p_b, v_b, w_b, qm, um, floating)
    rL = np.column_stack([o.r0, o.rL])
    tL = np.column_stack([o.t0, o.tL])
    com = np.concatenate(
        [
            spart.Center_of_Mass(o.r0, o.rL, robot),
            spart.Center_of_Mass(o.t0[3:6], o.tL[3:6], robot),
        ]
    )
    Js, points = [], []
    for name, offset in jacobians:
        i = robot.link_index(name)
        Rc, rc = (o.R0, o.r0) if i == 0 else (o.RL[:, :, i - 1], o.rL[:, i - 1])
        T = link_com_T(robot, i)
        R_link = Rc @ T[:3, :3].T  # URDF link frame in the world
        p_link = rc - R_link @ T[:3, 3]
        rp = p_link + R_link @ np.asarray(offset, float)
        J0, Jm = spart.Jacob(rp, o.r0, o.rL, o.P0, o.pm, i, robot)
        if not floating:
            J = Jm
        elif base_columns == 'ros':
            J = np.hstack([J0 @ base_column_map(robot, R_b), Jm])
        else:
            J = np.hstack([J0, Jm])
        Js.append(J)
        points.append(rp)
    return SimpleNamespace(rL=rL, tL=tL, com=com, jacobians=Js, points=points, chain=o)


def _generalized(o, robot):
    o.M0_tilde, o.Mm_tilde = spart.MCB(o.I0, o.Im, o.Bij, o.Bi0, robot)
    o.H0, o.H0m, o.Hm = spart.GIM(o.M0_tilde, o.Mm_tilde, o.Bij, o.Bi0, o.P0, o.pm, robot)
    return o


def _id(o, robot, u0dot, umdot, wF0, wFm, g):
    t0dot, tLdot = spart.Accelerations(
        o.t0, o.tL, o.P0, o.pm, o.Bi0, o.Bij, o.u0, o.um, u0dot, umdot, robot
    )
    return spart.ID(
        wF0, wFm, o.t0, o.tL, t0dot, tLdot, o.P0, o.pm, o.I0, o.Im, o.Bij, o.Bi0, robot, gravity=g
    )


def expected_fd(
    robot, R_b, p_b, v_b, w_b, qm, um, taum, torque_b, force_b, wF0, wFm, g, floating=True
):
    """(umdot, a_b, alpha_b) of SPART FD (floating) or of Hm umdot = taum - bias (fixed)."""
    o = chain(robot, R_b, p_b, v_b, w_b, qm, um, floating)
    if floating:
        tau0 = ros_wrench_to_tau0(robot, R_b, torque_b, force_b)
        u0dot, umdot = spart.FD(
            tau0,
            np.asarray(taum, float),
            wF0,
            wFm,
            o.t0,
            o.tL,
            o.P0,
            o.pm,
            o.I0,
            o.Im,
            o.Bij,
            o.Bi0,
            o.u0,
            o.um,
            robot,
            gravity=g,
        )
        a_b, alpha_b = spart_accel_to_ros(robot, R_b, w_b, u0dot)
        return umdot, a_b, alpha_b
    _generalized(o, robot)
    _, bias = _id(o, robot, np.zeros(6), np.zeros(robot.n_q), wF0, wFm, g)
    umdot = np.linalg.solve(o.Hm, np.asarray(taum, float) - bias)
    return umdot, np.zeros(3), np.zeros(3)


def expected_id(
    robot, R_b, p_b, v_b, w_b, qm, um, umdot, a_b, alpha_b, wF0, wFm, g, floating=True
):
    """(taum, torque_b, force_b) of SPART ID with the base acceleration imposed (fixed: zero)."""
    o = chain(robot, R_b, p_b, v_b, w_b, qm, um, floating)
    u0dot = ros_accel_to_spart(robot, R_b, w_b, a_b, alpha_b) if floating else np.zeros(6)
    tau0, taum = _id(o, robot, u0dot, np.asarray(umdot, float), wF0, wFm, g)
    torque_b, force_b = tau0_to_ros_wrench(robot, R_b, tau0)
    return taum, torque_b, force_b


def expected_floating_id(robot, R_b, p_b, v_b, w_b, qm, um, umdot, wF0, wFm, g):
    """(taum, a_b, alpha_b) of SPART Floating_ID."""
    o = _generalized(chain(robot, R_b, p_b, v_b, w_b, qm, um, True), robot)
    taum, u0dot = spart.Floating_ID(
        wF0,
        wFm,
        o.Mm_tilde,
        o.H0,
        o.t0,
        o.tL,
        o.P0,
        o.pm,
        o.I0,
        o.Im,
        o.Bij,
        o.Bi0,
        o.u0,
        o.um,
        np.asarray(umdot, float),
        robot,
        gravity=g,
    )
    a_b, alpha_b = spart_accel_to_ros(robot, R_b, w_b, u0dot)
    return taum, a_b, alpha_b


def rpy(r, p, y):
    """URDF rpy: Rz(y) Ry(p) Rx(r)."""
    return rot([0, 0, 1], y) @ rot([0, 1, 0], p) @ rot([1, 0, 0], r)


#: The IMU appended by :func:`with_imu`: two fixed joints from the base; its rotation in b.
IMU_RPY = ((0.3, -0.5, 1.0), (-0.7, 0.2, 0.4))
R_B_IMU = rpy(*IMU_RPY[0]) @ rpy(*IMU_RPY[1])


def with_imu(urdf_text, base_link):
    """
    Return the URDF with an IMU link ``imu_link`` fixed to ``base_link`` through ``imu_mount``.

    Two fixed joints with rpy; rotation of imu_link in the base link frame = R_B_IMU.
    """
    (r1, p1, y1), (r2, p2, y2) = IMU_RPY
    extra = f"""
  <joint name="imu_mount_joint" type="fixed">
    <parent link="{base_link}"/><child link="imu_mount"/>
    <origin xyz="0.2 0.1 -0.3" rpy="{r1} {p1} {y1}"/>
  </joint>
  <link name="imu_mount">
    <inertial><origin xyz="0.01 0 0"/><mass value="0.5"/>
      <inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.001"/></inertial>
  </link>
  <joint name="imu_joint" type="fixed">
    <parent link="imu_mount"/><child link="imu_link"/>
    <origin xyz="0.01 0 0.02" rpy="{r2} {p2} {y2}"/>
  </joint>
  <link name="imu_link">
    <inertial><mass value="0"/>
      <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial>
  </link>
</robot>"""
    head, _, _ = urdf_text.rpartition('</robot>')
    return head + extra + '\n'
