"""
The embedded MuJoCo plant (spart_ros.sim), no ROS.

Physics invariants, agreement with the core's dynamics (SPART-named numpy functions, an independent
implementation), ROS readout conventions (checked by finite differences), the command contract,
reset/pause, determinism.

Tolerances (stated with each test) are relative to max(1, |reference|) (core_helpers.rel_err).
"""

import math
import os
from types import SimpleNamespace

from core_helpers import load_robot, rel_err, urdf_path
import numpy as np
import pytest
from spart_ros import spart
from spart_ros.core import base_state as bs
from spart_ros.core.attitude import quaternion_from_ros, quaternion_to_ros
from spart_ros.core.errors import InputError, ModelError, UnsupportedJointError, URDFError
from spart_ros.sim import (
    CommandRejected,
    EffortCommand,
    InitialState,
    MujocoPlant,
    RealTimePacer,
    SimulationDiverged,
)

SC = urdf_path('SC_3DoF')
KUKA = urdf_path('kuka_iiwa')
BRANCHED = urdf_path(
    'branched_two_arm_spacecraft'
)  # base CoM offset + rpy, tree, prismatic joints
G = np.array([0.0, 0.0, -9.81])


def rotation(axis, angle):
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -axis[2], axis[1]], [axis[2], 0, -axis[0]], [-axis[1], axis[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


def random_initial(plant, robot, rng, pose=True, twist=True, scale=1.0):
    """
    Return a random InitialState.

    Joints in +-1 rad / +-0.05 m (inside every URDF limit used here), joint velocities and base
    twist ~ N(0, scale^2), random base pose.
    """
    prismatic = {j.name for j in robot.joints if j.type == 2}
    qm = {n: (0.05 if n in prismatic else 1.0) * rng.uniform(-1, 1) for n in plant.joint_names}
    um = {n: scale * rng.normal() for n in plant.joint_names}
    R = rotation(rng.normal(size=3), rng.uniform(0, np.pi)) if pose else np.eye(3)
    return InitialState(
        joint_positions=qm,
        joint_velocities=um,
        base_position=tuple(rng.normal(size=3)) if pose else (0, 0, 0),
        base_orientation=tuple(quaternion_to_ros(R)),
        base_linear_velocity=tuple(scale * rng.normal(size=3)) if twist else (0, 0, 0),
        base_angular_velocity=tuple(scale * rng.normal(size=3)) if twist else (0, 0, 0),
    )


def spart_state(plant, robot):
    """
    Return the plant's current state and held efforts in SPART's coordinates, no loads.

    R0, r0, u0 of the base CoM frame via core.base_state; qm, um, taum in SPART's joint order.
    """
    odom = plant.odometry()
    R_b = quaternion_from_ros(*odom.orientation)
    base = bs.base_from_link_frame(robot, R_b, odom.position, odom.linear, odom.angular)
    by_name = lambda values: dict(zip(plant.joint_names, values))  # noqa: E731
    q, u, tau = (
        by_name(plant.joint_positions()),
        by_name(plant.joint_velocities()),
        by_name(plant.efforts),
    )
    names = robot.q_names
    return SimpleNamespace(
        R0=base.R0,
        r0=base.r0,
        u0=base.u0,
        qm=np.array([q[k] for k in names]),
        um=np.array([u[k] for k in names]),
        tau0=np.zeros(6),
        taum=np.array([tau[k] for k in names]),
        wF0=np.zeros(6),
        wFm=np.zeros((6, robot.n_links_joints)),
        umdot=np.zeros(robot.n_q),
    )


def core_fd(robot, s, gravity):
    """SPART FD (numpy core) at state s: (u0dot, umdot)."""
    RJ, RL, rJ, rL, e, g = spart.Kinematics(s.R0, s.r0, s.qm, robot)
    Bij, Bi0, P0, pm = spart.DiffKinematics(s.R0, s.r0, rL, e, g, robot)
    t0, tL = spart.Velocities(Bij, Bi0, P0, pm, s.u0, s.um, robot)
    I0, Im = spart.I_I(s.R0, RL, robot)
    return spart.FD(
        s.tau0,
        s.taum,
        s.wF0,
        s.wFm,
        t0,
        tL,
        P0,
        pm,
        I0,
        Im,
        Bij,
        Bi0,
        s.u0,
        s.um,
        robot,
        gravity=gravity,
    )


def core_floating_id(robot, s, gravity):
    """
    SPART Floating_ID (numpy core) at state s with joint accelerations s.umdot.

    (taum, u0dot).
    """
    RJ, RL, rJ, rL, e, g = spart.Kinematics(s.R0, s.r0, s.qm, robot)
    Bij, Bi0, P0, pm = spart.DiffKinematics(s.R0, s.r0, rL, e, g, robot)
    t0, tL = spart.Velocities(Bij, Bi0, P0, pm, s.u0, s.um, robot)
    I0, Im = spart.I_I(s.R0, RL, robot)
    M0_tilde, Mm_tilde = spart.MCB(I0, Im, Bij, Bi0, robot)
    H0, H0m, Hm = spart.GIM(M0_tilde, Mm_tilde, Bij, Bi0, P0, pm, robot)
    return spart.Floating_ID(
        s.wF0,
        s.wFm,
        Mm_tilde,
        H0,
        t0,
        tL,
        P0,
        pm,
        I0,
        Im,
        Bij,
        Bi0,
        s.u0,
        s.um,
        s.umdot,
        robot,
        gravity=gravity,
    )


def internal_torques(plant, t):
    """Smooth joint torques [N m] (internal forces only: momentum must not change)."""
    k = np.arange(1, plant.n_joints + 1)
    return 0.6 * np.sin(2.0 * t * k + k) / k


# ---------------------------------------------------------------------------------------
# model import
# ---------------------------------------------------------------------------------------


def test_import_keeps_fixed_links_and_urdf_joint_order():
    plant = MujocoPlant.from_urdf(SC, base='floating')
    bodies = [plant.model.body(i).name for i in range(plant.model.nbody)]
    # fusestatic off: Link_0 (fixed to the base) and the massless Link_EE are bodies of their own
    assert bodies == ['world', 'Spacecraft', 'Link_0', 'Link_1', 'Link_2', 'Link_3', 'Link_EE']
    assert plant.base_link == 'Spacecraft' and plant.floating
    assert plant.joint_names == ('Joint_1', 'Joint_2', 'Joint_3')
    assert plant.model.nq == 7 + 3 and plant.model.nv == 6 + 3
    kuka = MujocoPlant.from_urdf(KUKA)
    assert kuka.model.nq == kuka.model.nv == 7 and not kuka.floating
    assert kuka.base_link == 'lbr_iiwa_link_0'


def test_import_strips_meshes_and_encoding_and_keeps_massless_frames():
    text = open(BRANCHED, encoding='utf-8').read()
    body = text[text.index('<robot') :]
    mesh = (
        '<visual><geometry><mesh filename="package://nowhere/meshes/bus.stl"/></geometry></visual>'
        '<collision><geometry><mesh filename="package://nowhere/meshes/bus.dae"/></geometry>'
        '</collision>'
    )
    body = body.replace('</inertial>', '</inertial>' + mesh, 1)
    frame = (
        '<joint name="tool_mount" type="fixed"><parent link="bus"/><child link="tool_frame"/>'
        '<origin xyz="0 0 1"/></joint><link name="tool_frame"/></robot>'
    )
    body = body.replace('</robot>', frame)
    urdf = '<?xml version="1.0" encoding="UTF-8"?>\n' + body
    plant = MujocoPlant.from_urdf(urdf, base='floating')
    assert plant.model.ngeom == 0  # no visual/collision geometry left
    assert plant.model.body('tool_frame').mass[0] == 0.0
    assert plant.joint_names == MujocoPlant.from_urdf(BRANCHED, base='floating').joint_names


TWO_LINK = """<robot name="two"{ns}>{prefix}
  <link name="base"><inertial><origin xyz="0.1 0 0"/><mass value="{m}"/>
    <inertia ixx="1" iyy="2" izz="3" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="hinge" type="revolute"><parent link="base"/><child link="arm"/>
    <origin xyz="0 0 0.5"/><axis xyz="0 1 0"/></joint>
  <link name="arm"><inertial><origin xyz="0 0 0.3"/><mass value="1.5"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
</robot>"""


def test_import_takes_what_the_core_takes_xacro_and_world_roots():
    """
    The core's reader decides: xacro is expanded.

    A massless `world` root with a fixed joint is dropped and its origin mounts the base (initial
    pose o mount, the dynamics node's base_position convention); Gazebo's `world` + floating joint
    gives the child as a free base; the reader's warnings are kept.
    """
    xacro = TWO_LINK.format(
        ns=' xmlns:xacro="http://www.ros.org/wiki/xacro"',
        prefix='<xacro:property name="base_mass" value="2.5"/>',
        m='${base_mass}',
    )
    plant = MujocoPlant.from_urdf(xacro)
    assert plant.model.body('base').mass[0] == 2.5
    world = (
        '<link name="world"/><joint name="mount" type="fixed"><parent link="world"/>'
        '<child link="base"/><origin xyz="0 0 1" rpy="0 0 0.5"/></joint>'
    )
    mounted = TWO_LINK.format(ns='', prefix=world, m='2.0')
    R_w = rotation([1, 0, 0], 0.3)
    init = InitialState(
        base_position=(1.0, 2.0, 3.0), base_orientation=tuple(quaternion_to_ros(R_w))
    )
    plant = MujocoPlant.from_urdf(mounted, gravity=G, initial=init)
    assert plant.base_link == 'base' and plant.base_hint == 'fixed'
    odom = plant.odometry()
    assert np.allclose(odom.position, [1, 2, 3] + R_w @ [0, 0, 1], atol=1e-15)
    assert np.allclose(
        quaternion_from_ros(*odom.orientation), R_w @ rotation([0, 0, 1], 0.5), atol=1e-15
    )
    # and the dynamics under gravity agree with the core's on that mount
    from spart_ros.core.fast import FastDynamics
    from spart_ros.core.urdf import robot_from_urdf

    robot, _ = robot_from_urdf(mounted)
    plant.set_efforts([0.7])
    s = spart_state(plant, robot)
    _, umdot = FastDynamics(robot, gravity=G).forward_dynamics(
        s.R0, s.r0, s.qm, np.zeros(6), s.um, np.zeros(6), s.taum, floating=False
    )
    assert rel_err(plant.joint_accelerations(), umdot) < 1e-12
    gazebo = TWO_LINK.format(
        ns='',
        m='2.0',
        prefix='<link name="world"/><joint name="free" type="floating">'
        '<parent link="world"/><child link="base"/></joint>',
    )
    free = MujocoPlant.from_urdf(gazebo, base='floating')
    assert free.base_link == 'base' and free.base_hint == 'floating' and free.model.nv == 7
    frames = TWO_LINK.format(ns='', prefix='', m='2.0').replace(
        '</robot>',
        '<joint name="tool" type="fixed"><parent link="arm"/><child link="tcp"/></joint>'
        '<link name="tcp"/></robot>',
    )
    warned = MujocoPlant.from_urdf(frames)
    assert any("'tcp'" in w for w in warned.load_warnings), warned.load_warnings


def test_import_errors_name_the_problem():
    with pytest.raises(URDFError, match='not valid XML'):
        MujocoPlant.from_urdf('<robot name="x"><link name="a"></robot>')
    with pytest.raises(URDFError, match='not <robot>'):
        MujocoPlant.from_urdf('<sdf/>')
    with pytest.raises(URDFError, match='neither URDF text nor an existing file'):
        MujocoPlant.from_urdf('/no/such/robot.urdf')
    planar = (
        '<robot name="p"><link name="a"><inertial><mass value="1"/><inertia ixx="1" iyy="1" '
        'izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link><joint name="slider" type="planar">'
        '<parent link="a"/><child link="b"/></joint><link name="b"><inertial><mass value="1"/>'
        '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link></robot>'
    )
    with pytest.raises(UnsupportedJointError, match="'slider'.*planar"):
        MujocoPlant.from_urdf(planar)
    massless = (
        '<robot name="m"><link name="frame"><inertial><mass value="0"/><inertia ixx="0" iyy="0" '
        'izz="0" ixy="0" ixz="0" iyz="0"/></inertial></link></robot>'
    )
    with pytest.raises(
        ModelError, match='MuJoCo could not compile.*mass and inertia of moving bodies'
    ):
        MujocoPlant.from_urdf(massless, base='floating')
    with pytest.raises(InputError, match='base must be'):
        MujocoPlant.from_urdf(SC, base='flying')
    with pytest.raises(InputError, match='integrator'):
        MujocoPlant.from_urdf(SC, integrator='leapfrog')
    with pytest.raises(InputError, match='dt'):
        MujocoPlant.from_urdf(SC, dt=0.0)
    with pytest.raises(InputError, match='gravity'):
        MujocoPlant.from_urdf(SC, gravity=[0, 0])


def test_damping_and_limits_are_options():
    """
    The plant takes the joint dynamics the model declares; options change them.

    Default: the joint dynamics the model declares (the URDF's damping 0.5, no friction or
    armature), no limits; joint_damping=False: the rigid-body model of SPART's functions;
    overrides (joint_dynamics, armature) reach MuJoCo's joints.
    """
    default = MujocoPlant.from_urdf(KUKA)
    assert np.allclose(default.model.dof_damping, 0.5) and not default.model.jnt_limited.any()
    assert not default.model.dof_frictionloss.any() and not default.model.dof_armature.any()
    rigid = MujocoPlant.from_urdf(KUKA, joint_damping=False)
    assert not rigid.model.dof_damping.any() and not rigid.model.dof_armature.any()
    real = MujocoPlant.from_urdf(
        KUKA,
        joint_limits=True,
        joint_dynamics={'*': {'friction': 0.2}},
        armature={'lbr_iiwa_joint_3': 0.1},
    )
    # the friction is the model's law, applied by the plant's implicit step (damping with it)
    assert not real.model.dof_frictionloss.any() and real.model.jnt_limited.all()
    assert np.allclose(real.dissipation.friction, 0.2) and np.allclose(
        real.dissipation.damping, 0.5
    )
    stick = MujocoPlant.from_urdf(
        KUKA, joint_dynamics={'*': {'friction': 0.2}}, friction='frictionloss'
    )  # MuJoCo's constraint, on request
    assert np.allclose(stick.model.dof_frictionloss, 0.2) and stick.dissipation is None
    assert np.allclose(stick.model.dof_damping, 0.5)
    with pytest.raises(InputError, match='friction must be one of'):
        MujocoPlant.from_urdf(KUKA, friction='coulomb')
    assert np.allclose(real.model.dof_armature, [0, 0, 0.1, 0, 0, 0, 0])
    assert np.allclose(real.model.jnt_range[0], [-2.96705972839, 2.96705972839])


# ---------------------------------------------------------------------------------------
# physics: momentum and agreement with the core
# ---------------------------------------------------------------------------------------


def momentum_drift(integrator, seconds=3.0, dt=1e-3):
    """
    Largest change of the total linear and angular (about the world origin) momentum of SC_3DoF.

    Free-floating in zero gravity, under internal joint torques only, starting with a random base
    twist and joint velocities. Returns (drift_linear, drift_angular, p0, L0).
    """
    robot = load_robot('SC_3DoF')
    plant = MujocoPlant.from_urdf(
        SC, base='floating', gravity=[0, 0, 0], dt=dt, integrator=integrator
    )
    plant.reset(random_initial(plant, robot, np.random.default_rng(3), scale=0.3))
    m0 = plant.momentum()
    dp = dL = 0.0
    for k in range(int(round(seconds / dt))):
        plant.set_efforts(internal_torques(plant, plant.time))
        plant.step()
        if k % 10 == 9:
            m = plant.momentum()
            dp = max(dp, np.abs(m.linear - m0.linear).max())
            dL = max(dL, np.abs(m.angular_origin - m0.angular_origin).max())
    return dp, dL, m0


def test_free_floating_momentum_is_conserved_with_rk4():
    """
    No external forces.

    Linear and angular momentum constant to 1e-9 (kg m/s, kg m^2/s; magnitudes ~10) over 3 s of RK4
    at dt = 1 ms (measured: ~1e-13). Euler's drift, printed, is ~1e-3 (checked as > 1e-6: the
    reason RK4 is the default).
    """
    dp, dL, m0 = momentum_drift('RK4')
    assert (
        np.linalg.norm(m0.linear) > 1.0 and np.linalg.norm(m0.angular_origin) > 1.0
    )  # not trivially 0
    assert dp < 1e-9 and dL < 1e-9, (dp, dL)
    dp_e, dL_e, _ = momentum_drift('Euler')
    print(
        f'momentum drift over 3 s, dt 1 ms: RK4 linear {dp:.1e} angular {dL:.1e}; '
        f'Euler linear {dp_e:.1e} angular {dL_e:.1e}'
    )
    assert max(dp_e, dL_e) > 1e-6


def test_momentum_readout_matches_the_core():
    """
    The total momentum of MuJoCo (mj_subtreeVel) = the base rows of the core's H u.

    h0 = P0' [L about the base CoM; p], to 1e-10 (branched robot, base CoM offset and rotated).
    """
    robot = load_robot('branched_two_arm_spacecraft')
    plant = MujocoPlant.from_urdf(BRANCHED, base='floating', gravity=[0, 0, 0])
    plant.reset(random_initial(plant, robot, np.random.default_rng(7)))
    s = spart_state(plant, robot)
    RJ, RL, rJ, rL, e, g = spart.Kinematics(s.R0, s.r0, s.qm, robot)
    Bij, Bi0, P0, pm = spart.DiffKinematics(s.R0, s.r0, rL, e, g, robot)
    I0, Im = spart.I_I(s.R0, RL, robot)
    M0_tilde, Mm_tilde = spart.MCB(I0, Im, Bij, Bi0, robot)
    H0, H0m, Hm = spart.GIM(M0_tilde, Mm_tilde, Bij, Bi0, P0, pm, robot)
    h0 = H0 @ s.u0 + H0m @ s.um
    p_core, L_r0 = h0[3:6], s.R0 @ h0[0:3]
    m = plant.momentum()
    assert rel_err(m.linear, p_core) < 1e-10
    assert rel_err(m.angular_origin, L_r0 + np.cross(s.r0, p_core)) < 1e-10
    assert rel_err(m.angular_com, m.angular_origin - np.cross(m.com, m.linear)) < 1e-12
    assert m.mass == pytest.approx(robot.total_mass)


@pytest.mark.parametrize(
    'name, gravity', [('SC_3DoF', [0, 0, 0]), ('branched_two_arm_spacecraft', G)]
)
def test_base_acceleration_matches_core_fd_and_floating_id(name, gravity):
    """
    Along a MuJoCo trajectory (RK4, 1 ms) under joint torques, at 5 instants.

    The base link acceleration MuJoCo computes = the core's FD prediction from the same state and
    torques, and = Floating_ID's from the same state and MuJoCo's joint accelerations, which also
    gives back the applied torques; all to 1e-9 (measured ~1e-14; MuJoCo and SPART are independent
    implementations: MuJoCo's is CRB + Cholesky in generalized coordinates).
    """
    robot = load_robot(name)
    path = urdf_path(name)
    plant = MujocoPlant.from_urdf(path, base='floating', gravity=gravity)
    plant.reset(random_initial(plant, robot, np.random.default_rng(11), scale=0.5))
    checked = 0
    for k in range(1, 1001):
        plant.set_efforts(internal_torques(plant, plant.time) * 5.0)
        if k % 200 == 0:
            s = spart_state(plant, robot)
            a_b, alpha_b = plant.base_acceleration()
            u0dot_mj = bs.base_acceleration_from_link_frame(
                robot,
                quaternion_from_ros(*plant.odometry().orientation),
                plant.odometry().angular,
                a_b,
                alpha_b,
            )
            u0dot, umdot = core_fd(robot, s, gravity)
            assert rel_err(u0dot_mj, u0dot) < 1e-9, (k, u0dot_mj, u0dot)
            qdd = dict(zip(plant.joint_names, plant.joint_accelerations()))
            assert rel_err([qdd[n] for n in robot.q_names], umdot) < 1e-9
            s.umdot = np.array([qdd[n] for n in robot.q_names])
            taum, u0dot_fid = core_floating_id(robot, s, gravity)
            assert rel_err(u0dot_mj, u0dot_fid) < 1e-9
            assert rel_err(taum, s.taum) < 1e-9
            # and back to the ROS convention through the core's conversion
            a_core, alpha_core = bs.link_frame_acceleration_from_base(robot, s.R0, s.u0, u0dot)
            assert rel_err(a_b, a_core) < 1e-9 and rel_err(alpha_b, alpha_core) < 1e-9
            checked += 1
        plant.step()
    assert checked == 5


def test_fixed_base_joint_accelerations_match_core_fd_under_gravity():
    """
    KUKA iiwa, fixed base mounted at a rotated, offset pose, gravity -9.81 z.

    MuJoCo's joint accelerations for random torques = the core's fixed-base FD (FastDynamics,
    floating=False; tested against SPART and Pinocchio in test_fast_path.py) with the joint damping
    both models take from the URDF (joint_dynamics), to 1e-9, at 5 random states inside the joint
    limits (limits enforced: inactive inside the range, they change nothing).
    """
    from spart_ros.core.fast import FastDynamics

    robot = load_robot('kuka_iiwa')
    fast = FastDynamics(robot, gravity=G, joint_dynamics=True)
    rng = np.random.default_rng(5)
    mount = InitialState(
        base_position=(0.3, -0.1, 0.8),
        base_orientation=tuple(quaternion_to_ros(rotation([1, 2, 0.5], 0.6))),
    )
    plant = MujocoPlant.from_urdf(KUKA, gravity=G, initial=mount, joint_limits=True)
    for trial in range(5):
        init = random_initial(plant, robot, rng, pose=False, twist=False)
        init.base_position, init.base_orientation = mount.base_position, mount.base_orientation
        plant.reset(init)
        tau = rng.normal(scale=20.0, size=plant.n_joints)
        plant.set_efforts(tau)
        s = spart_state(plant, robot)
        _, umdot = fast.forward_dynamics(
            s.R0, s.r0, s.qm, np.zeros(6), s.um, np.zeros(6), s.taum, floating=False
        )
        qdd = dict(zip(plant.joint_names, plant.joint_accelerations()))
        assert rel_err([qdd[n] for n in robot.q_names], umdot) < 1e-9, trial
        # the fixed base's IMU reads +g up: R_b' (0, 0, 9.81)
        R_b = rotation([1, 2, 0.5], 0.6)
        assert rel_err(plant.imu().linear_acceleration, R_b.T @ -G) < 1e-12
        assert not plant.imu().angular_velocity.any() and not plant.odometry().linear.any()


def test_urdf_damping_when_enabled_is_viscous():
    """
    joint_damping=True: MuJoCo's accelerations = the core's FD with tau.

    0.5 qdot (the URDF's damping), to 1e-9.
    """
    from spart_ros.core.fast import FastDynamics

    robot = load_robot('kuka_iiwa')
    plant = MujocoPlant.from_urdf(KUKA, gravity=G, joint_damping=True)
    rng = np.random.default_rng(9)
    plant.reset(random_initial(plant, robot, rng, pose=False, twist=False))
    plant.set_efforts(rng.normal(size=7))
    s = spart_state(plant, robot)
    _, umdot = FastDynamics(robot, gravity=G).forward_dynamics(
        s.R0, s.r0, s.qm, np.zeros(6), s.um, np.zeros(6), s.taum - 0.5 * s.um, floating=False
    )
    qdd = dict(zip(plant.joint_names, plant.joint_accelerations()))
    assert rel_err([qdd[n] for n in robot.q_names], umdot) < 1e-9


def test_stiff_damping_integrates_implicitly_and_the_core_plant_says_why_it_cannot():
    """
    A UR5 whose URDF declares damping 2 N m s/rad on every joint, simulated with a 25 ms step.

    The fastest damped motion decays at ~126 1/s (the wrists), beyond RK4's stability at that step
    (a UR10 with the same damping decays at ~4000 1/s: RK4 at 1 ms diverged within 15 ms here).
    Both plants measure the rate (MuJoCo's M and the core's H: the same), say so and step with the
    implicit dissipation step instead (spart_ros.sim.joint_dissipation): 2 s in gravity stay
    finite and the arm hangs still at the end (the damping removes the energy).  The KUKA's URDF
    damping (0.5, rate 561 1/s) keeps RK4 at 1 ms.
    """
    from spart_ros.core.urdf import robot_from_urdf
    from spart_ros.sim.plant import RK4_DAMPING_LIMIT
    from spart_ros.sim.rigid_body import RigidBodyPlant

    text = open(urdf_path('ur5_robot')).read().replace('damping="0.0"', 'damping="2.0"')
    assert text.count('damping="2.0"') == 6
    dt = 0.025
    plant = MujocoPlant.from_urdf(text, gravity=G, dt=dt)
    rate, joint = plant.damping_rate()
    assert rate * dt > RK4_DAMPING_LIMIT and joint.startswith('wrist_')
    assert plant.dissipation is not None and plant.integrator == 'dissipation'
    assert any('integrator RK4 not used' in w and joint in w for w in plant.load_warnings), (
        plant.load_warnings
    )
    plant.set_efforts(np.zeros(plant.n_joints))
    plant.step(80)  # 2 s in gravity: no divergence
    assert np.all(np.isfinite(plant.joint_velocities()))
    robot = robot_from_urdf(text)[0]
    core = RigidBodyPlant(robot, gravity=G, dt=dt)
    core_rate, core_joint = core.damping_rate()
    assert (
        core_rate == pytest.approx(rate, rel=1e-6) and core_joint == joint
    )  # MuJoCo's M vs the core's H
    assert core.integrator == 'dissipation' and 'too stiff for RK4' in core.notes[0]
    core.set_efforts(np.zeros(core.n_joints))
    core.step(80)
    assert np.all(np.isfinite(core.joint_velocities()))
    np.testing.assert_allclose(core.joint_positions(), plant.joint_positions(), atol=1e-6)
    kuka = MujocoPlant.from_urdf(KUKA, gravity=G)
    assert kuka.integrator == 'RK4' and kuka.damping_rate()[0] == pytest.approx(
        RigidBodyPlant(load_robot('kuka_iiwa'), gravity=G).damping_rate()[0], rel=1e-6
    )


# ---------------------------------------------------------------------------------------
# readouts in ROS conventions
# ---------------------------------------------------------------------------------------


def _pose(plant):
    o = plant.odometry()
    return o.position.copy(), quaternion_from_ros(*o.orientation)


def test_odometry_twist_and_imu_by_finite_differences():
    """
    Branched robot (base CoM offset), floating, gravity on, joint torques.

    The odometry twist (REP 105: in the base link frame) = central differences of the base link
    pose, and the IMU's specific force = central difference of the world velocity of the base link
    origin minus gravity, in b.  h = 50 us (steps of 10 us, RK4): agreement to 1e-7 (the truncation
    error of the differences, O(h^2), is ~2e-8 here).
    """
    robot = load_robot('branched_two_arm_spacecraft')
    plant = MujocoPlant.from_urdf(BRANCHED, base='floating', gravity=G, dt=1e-5)
    plant.reset(random_initial(plant, robot, np.random.default_rng(2)))
    plant.set_efforts(internal_torques(plant, 0.0) * 10)
    plant.step(500)
    h_steps = 5
    h = h_steps * plant.dt
    p_a, R_a = _pose(plant)
    v_a = R_a @ plant.odometry().linear
    plant.step(h_steps)
    odom, imu = plant.odometry(), plant.imu()
    p_mid, R_mid = _pose(plant)
    plant.step(h_steps)
    p_c, R_c = _pose(plant)
    v_c = R_c @ plant.odometry().linear
    v_fd = R_mid.T @ (p_c - p_a) / (2 * h)
    dR = (R_c - R_a) / (2 * h)
    W = R_mid.T @ dR  # [w_b]x = R' dR/dt
    w_fd = np.array([W[2, 1] - W[1, 2], W[0, 2] - W[2, 0], W[1, 0] - W[0, 1]]) / 2
    assert np.linalg.norm(odom.linear) > 0.5 and np.linalg.norm(odom.angular) > 0.5
    assert rel_err(odom.linear, v_fd) < 1e-7, (odom.linear, v_fd)
    assert rel_err(odom.angular, w_fd) < 1e-7, (odom.angular, w_fd)
    # the linear twist is NOT MuJoCo's raw free-joint qvel (world frame) unless R_b = I
    assert rel_err(odom.linear, plant.data.qvel[0:3]) > 1e-3 or np.allclose(R_mid, np.eye(3))
    f_fd = R_mid.T @ ((v_c - v_a) / (2 * h) - G)
    assert rel_err(imu.linear_acceleration, f_fd) < 1e-7, (imu.linear_acceleration, f_fd)
    assert np.allclose(imu.angular_velocity, odom.angular) and np.allclose(
        imu.orientation, odom.orientation
    )


def test_free_fall_imu_reads_zero_specific_force():
    """
    A rigid body in free fall reads no specific force; fixed at rest it reads +9.81 up.

    In free fall: no joint torques, joint velocities 0, no spin.
    """
    plant = MujocoPlant.from_urdf(SC, base='floating', gravity=G)
    plant.step(100)
    assert np.abs(plant.imu().linear_acceleration).max() < 1e-9
    assert plant.odometry().linear[2] == pytest.approx(
        -9.81 * 0.1, rel=1e-9
    )  # falling, in b (= world here)
    fixed = MujocoPlant.from_urdf(SC, gravity=G)
    assert np.allclose(fixed.imu().linear_acceleration, [0, 0, 9.81], atol=1e-12)


def test_joint_states_are_sorted_alphabetically_with_efforts():
    plant = MujocoPlant.from_urdf(BRANCHED, base='floating')
    assert list(plant.joint_names) != sorted(plant.joint_names)  # URDF order is not alphabetical
    robot = load_robot('branched_two_arm_spacecraft')
    plant.reset(random_initial(plant, robot, np.random.default_rng(4)))
    tau = np.arange(1.0, plant.n_joints + 1)
    plant.set_efforts(tau)
    plant.step(3)
    js = plant.joint_state()
    assert list(js.names) == sorted(plant.joint_names)
    q = dict(zip(plant.joint_names, plant.joint_positions()))
    u = dict(zip(plant.joint_names, plant.joint_velocities()))
    e = dict(zip(plant.joint_names, tau))
    assert list(js.positions) == [q[n] for n in js.names]
    assert list(js.velocities) == [u[n] for n in js.names]
    assert list(js.efforts) == [e[n] for n in js.names]  # effort = the applied command


# ---------------------------------------------------------------------------------------
# commands, reset, pause, determinism
# ---------------------------------------------------------------------------------------


def test_plant_rejects_bad_efforts_and_keeps_the_previous_ones():
    plant = MujocoPlant.from_urdf(SC, base='floating', gravity=[0, 0, 0])
    plant.set_efforts([0.5, -0.3, 0.1])
    qdd = plant.joint_accelerations()
    with pytest.raises(
        InputError,
        match=r"expected 3 efforts for joints \['Joint_1', 'Joint_2', 'Joint_3'\], got 2",
    ):
        plant.set_efforts([1.0, 2.0])
    with pytest.raises(InputError, match=r"non-finite effort for joints \['Joint_2'\]"):
        plant.set_efforts([1.0, float('nan'), 2.0])
    with pytest.raises(InputError, match='non-finite'):
        plant.set_efforts([1.0, 2.0, float('inf')])
    assert plant.efforts.tolist() == [0.5, -0.3, 0.1]
    assert np.array_equal(plant.joint_accelerations(), qdd)


def test_effort_command_contract():
    """
    ros2_control's effort controller.

    Values in the controller's joint order (here a reordered subset); wrong length or non-finite ->
    rejected, previous command kept; joints the controller does not claim stay at 0.
    """
    plant_joints = ['j_a', 'j_b', 'j_c']
    cmd = EffortCommand(['j_c', 'j_a'], plant_joints)
    assert cmd.accept([3.0, 1.0]).tolist() == [1.0, 0.0, 3.0]
    with pytest.raises(
        CommandRejected, match=r"expected 2 values for joints \['j_c', 'j_a'\], got 3"
    ):
        cmd.accept([1.0, 2.0, 3.0])
    with pytest.raises(CommandRejected, match=r"non-finite value for joints \['j_a'\]"):
        cmd.accept([1.0, float('nan')])
    assert cmd.efforts.tolist() == [1.0, 0.0, 3.0]
    assert (cmd.accepted, cmd.rejected) == (1, 2)
    cmd.clear()
    assert not cmd.efforts.any()
    with pytest.raises(InputError, match=r"\['j_x'\] are not moving joints"):
        EffortCommand(['j_a', 'j_x'], plant_joints)
    with pytest.raises(InputError, match='twice'):
        EffortCommand(['j_a', 'j_a'], plant_joints)
    with pytest.raises(InputError, match='at least one'):
        EffortCommand([], plant_joints)


def test_reset_restores_the_initial_state_and_time_goes_on():
    robot = load_robot('SC_3DoF')
    plant = MujocoPlant.from_urdf(SC, base='floating', gravity=[0, 0, 0])
    init = random_initial(plant, robot, np.random.default_rng(8))
    plant.initial = init
    plant.reset()
    start = (plant.joint_positions(), plant.joint_velocities(), plant.odometry())
    plant.set_efforts([1.0, 1.0, 1.0])
    plant.step(500)
    t = plant.time_ns
    assert not np.allclose(plant.joint_positions(), start[0])
    plant.reset()
    assert plant.time_ns == t == 500 * 1_000_000
    assert np.array_equal(plant.joint_positions(), start[0])
    assert np.array_equal(plant.joint_velocities(), start[1])
    for a, b in zip(plant.odometry(), start[2]):
        assert np.allclose(a, b, rtol=0, atol=1e-15)
    assert not plant.efforts.any()
    assert plant.joint_positions()[0] == pytest.approx(init.joint_positions['Joint_1'])
    # new_time (spart_sim's ~/reset): the reset takes one step, the same state a step later
    plant.step(3)
    plant.reset(new_time=True)
    assert plant.time_ns == t + 4 * 1_000_000 and plant.data.time == pytest.approx(t * 1e-9 + 4e-3)
    assert np.array_equal(plant.joint_positions(), start[0])
    # bad initial states are refused and change nothing
    with pytest.raises(InputError, match="unknown joint 'Joint_9'"):
        plant.reset(InitialState(joint_positions={'Joint_9': 1.0}))
    with pytest.raises(InputError, match='not a rotation'):
        plant.reset(InitialState(base_orientation=(0, 0, 0, 0)))
    fixed = MujocoPlant.from_urdf(SC)
    with pytest.raises(InputError, match='fixed base has no velocity'):
        fixed.reset(InitialState(base_angular_velocity=(0, 0, 1)))
    assert np.array_equal(plant.joint_positions(), start[0])


def test_divergence_resets_to_the_initial_state_and_says_so(tmp_path, monkeypatch):
    """
    A huge effort blows the state up: MuJoCo resets its data.

    The plant goes back to its own initial state with zero efforts, keeps the time, and raises
    SimulationDiverged.
    """
    monkeypatch.chdir(tmp_path)  # where MuJoCo would write MUJOCO_LOG.TXT
    init = InitialState(joint_positions={'lbr_iiwa_joint_2': 0.5})
    plant = MujocoPlant.from_urdf(KUKA, initial=init)
    plant.step(10)
    plant.set_efforts([1e12] * 7)
    with pytest.raises(
        SimulationDiverged,
        match=r'diverged before t = 0\.011000 s .*qacc at degree of freedom 0.*'
        r'efforts \[1000000000000\.0',
    ):
        plant.step(1)
    assert plant.time_ns == 11_000_000 and not plant.efforts.any()
    assert plant.joint_positions()[1] == 0.5 and not plant.data.qfrc_applied.any()
    plant.set_efforts([1.0] * 7)
    assert plant.step(5) == 5 and plant.data.qfrc_applied.tolist() == [1.0] * 7
    assert not os.path.exists('MUJOCO_LOG.TXT')  # MuJoCo's warning went to logging, not a file


def test_pause_freezes_the_simulation():
    plant = MujocoPlant.from_urdf(SC, base='floating', gravity=[0, 0, 0])
    plant.set_efforts([1.0, 0.0, 0.0])
    plant.step(10)
    q, t = plant.joint_positions(), plant.time_ns
    plant.paused = True
    assert plant.step(100) == 0
    assert plant.time_ns == t and np.array_equal(plant.joint_positions(), q)
    plant.paused = False
    assert plant.step(1) == 1 and plant.time_ns == t + plant.dt_ns


def test_runs_are_deterministic_bit_for_bit():
    def run():
        plant = MujocoPlant.from_urdf(SC, base='floating', gravity=[0, 0, 0])
        for _ in range(300):
            plant.set_efforts(internal_torques(plant, plant.time))
            plant.step(2)
        return np.concatenate([plant.data.qpos, plant.data.qvel]), plant.time_ns

    (x1, t1), (x2, t2) = run(), run()
    assert t1 == t2 == 600 * 1_000_000 and np.array_equal(x1, x2)


def test_dt_is_whole_nanoseconds():
    plant = MujocoPlant.from_urdf(SC, dt=1.0 / 3000.0)
    assert plant.dt_ns == 333333 and plant.model.opt.timestep == 333333e-9
    plant.step(3000)
    assert plant.time_ns == 3000 * 333333


def test_real_time_pacer():
    pacer = RealTimePacer(dt=0.001, real_time_factor=1.0, max_lag=0.05)
    pacer.restart(100.0, 0.0)
    assert pacer.steps_due(100.0, 0.0) == 0
    assert pacer.steps_due(100.0105, 0.0) == 10
    assert pacer.steps_due(100.0105, 0.010) == 0
    half = RealTimePacer(dt=0.001, real_time_factor=0.5)
    half.restart(0.0, 2.0)
    assert half.steps_due(0.02, 2.0) == 10
    # 1 s behind: at most max_lag of simulated time, the rest is given up (no burst later)
    assert pacer.steps_due(101.0105, 0.010) == 50
    assert pacer.slipped == pytest.approx(1.0 - 0.05, abs=2e-3)
    assert pacer.steps_due(101.0105, 0.060) == 0
    assert pacer.steps_due(101.0205, 0.060) == 10
    with pytest.raises(InputError, match='real_time_factor'):
        RealTimePacer(dt=0.001, real_time_factor=0.0)


def test_initial_state_from_parameter_lists():
    init = InitialState.from_lists(
        ['Joint_2', 'Joint_1'], [0.5, -0.5], [], base_position=[1, 2, 3]
    )
    assert (
        init.joint_positions == {'Joint_2': 0.5, 'Joint_1': -0.5} and init.joint_velocities == {}
    )
    assert init.base_position == (1, 2, 3) and init.base_orientation == (0.0, 0.0, 0.0, 1.0)
    plant = MujocoPlant.from_urdf(SC, initial=init)
    assert plant.joint_positions().tolist() == [-0.5, 0.5, 0.0]
    assert plant.odometry().position.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(InputError, match='initial_joint_positions: expected 2 values'):
        InitialState.from_lists(['Joint_2', 'Joint_1'], [0.5])
    with pytest.raises(InputError, match='initial_joint_velocities: expected 2 values'):
        InitialState.from_lists(['Joint_2', 'Joint_1'], [0.5, 0.1], [1.0])
    with pytest.raises(InputError, match='twice'):
        InitialState.from_lists(['Joint_2', 'Joint_2'], [0.5, 0.1])


def test_joint_limits_when_enabled_stop_the_joint():
    """
    joint_limits=True: a joint pushed against its URDF limit stays within 0.05 rad of it.

    Pushed for 1 s (KUKA joint 1: 2.967 rad); without limits (the default) it goes on.
    """
    runs = {}
    for limits in (True, False):
        plant = MujocoPlant.from_urdf(
            KUKA,
            gravity=[0, 0, 0],
            joint_limits=limits,
            initial=InitialState(joint_positions={'lbr_iiwa_joint_1': 2.8}),
        )
        plant.set_efforts([20.0, 0, 0, 0, 0, 0, 0])
        plant.step(1000)
        runs[limits] = plant.joint_positions()[0]
    assert 2.9 < runs[True] < 2.96705972839 + 0.05 and runs[False] > 3.5, runs


def test_hold_keeps_the_robot_still_until_released():
    """
    hold(): the robot stays where it is in gravity (as brakes and a launch lock would).

    The time goes on, the accelerations read zero; released, the physics runs from there.
    """
    plant = MujocoPlant.from_urdf(KUKA, initial=InitialState({'lbr_iiwa_joint_2': 0.5}))
    plant.hold()
    q0 = plant.joint_positions()
    assert plant.step(300) == 300 and plant.time_ns == 300_000_000
    np.testing.assert_array_equal(plant.joint_positions(), q0)
    assert not plant.joint_velocities().any() and not plant.joint_accelerations().any()
    assert plant.imu().linear_acceleration[2] == pytest.approx(9.81)
    plant.hold(False)
    assert abs(plant.joint_accelerations()).max() > 0.1  # gravity acts again
    plant.step(10)
    assert abs(plant.joint_positions() - q0).max() > 1e-6
    floating = MujocoPlant.from_urdf(
        SC,
        base='floating',
        gravity=[0.0, 0.0, 0.0],
        initial=InitialState(base_angular_velocity=(0.0, 0.0, 0.1)),
    )
    floating.hold()
    pose = floating.odometry().position.copy()
    floating.step(100)
    np.testing.assert_array_equal(floating.odometry().position, pose)
    assert not floating.base_acceleration()[1].any()


def test_plant_robot_gives_the_default_effort_joints():
    """
    The sim's default joints follow the controller's rule (core.mimic.command_joints).

    The independent joints; a mimic follower is MuJoCo's constraint's, not a command's.
    """
    from spart_ros.core.mimic import command_joints

    plant = MujocoPlant.from_urdf(KUKA)
    assert command_joints(plant.robot) == list(plant.joint_names)
