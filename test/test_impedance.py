"""
Impedance modes of the controller (spart_ros.control.impedance), offline on the plants.

- the Coriolis term of the joint impedance, C(q, qd) w by polarization of the fast path's bias,
  is the Christoffel-consistent one (finite differences of H), so H' - 2C is skew;
- joint impedance: the law's efforts = H qdd_d + C(q, qd) qd_d + g + K e + D e' (+ the joint
  friction the model declares); passivity: released with joint velocities around a held pose,
  the energy 1/2 qd' H qd + 1/2 e' K e never grows (RK4 plant with the model's own friction);
- Cartesian impedance, fixed base, on the MuJoCo plant: a wrench applied at the end effector's
  link through MuJoCo's xfrc_applied deflects the end effector by K^-1 times it (force and
  torque, moved to the end-effector point), to 1e-5; a constant pose target 3 cm and 5 deg away:
  the energy 1/2 qd' H qd + spring never grows and the target is reached;
- Cartesian impedance on a free-floating base (generalized Jacobian): the same target, the
  whole system's kinetic energy + spring never grows (to rounding), the target is reached while
  the base reacts.
"""

from core_helpers import urdf_path
import numpy as np
import pytest
from spart_ros import spart
from spart_ros.control.end_effector import rotation_vector
from spart_ros.control.impedance import coriolis_times
from spart_ros.core import robot_from_urdf
from spart_ros.core.base_state import base_from_link_frame
from spart_ros.core.errors import InputError
from spart_ros.core.fast import FastDynamics
from spart_ros.core.inverse_kinematics import InverseKinematics
from spart_ros.core.rigid_motion import _rotation_from_vector
from spart_ros.sim import InitialState, MujocoPlant
from spart_ros.sim.closed_loop import simulate

pytestmark = pytest.mark.filterwarnings('ignore::spart_ros.core.errors.SpartWarning')

KUKA = urdf_path('kuka_iiwa')
ARMATURE = {'*': {'armature': 0.1}}  # rotor inertia: a light last joint damped at 1 kHz needs it
Q0 = {'lbr_iiwa_joint_2': 0.5, 'lbr_iiwa_joint_4': -1.2, 'lbr_iiwa_joint_6': 0.8}
EE, POINT = 'lbr_iiwa_link_7', (0.0, 0.0, 0.1)
K_JOINT = (300.0, 300.0, 200.0, 200.0, 50.0, 50.0, 10.0)
D_JOINT = (20.0, 20.0, 15.0, 15.0, 3.0, 3.0, 0.5)
K_CART = np.array([20.0, 30.0, 25.0, 400.0, 300.0, 500.0])


def test_coriolis_by_polarization_is_christoffel():
    """
    The Coriolis matrix by polarization equals its Christoffel-symbol form.

    C(q, qd) w = sum_jk Gamma_ijk qd_k w_j with
    Gamma_ijk = (dH_ij/dq_k + dH_ik/dq_j - dH_jk/dq_i) / 2 (central differences of the fast path's
    H, h = 1e-6): to 1e-7; and (H' - 2 C) is skew.
    """
    robot, _ = robot_from_urdf(KUKA, joint_dynamics={'*': {'friction': 0.4, 'armature': 0.1}})
    fd = FastDynamics(robot, gravity=[0, 0, -9.81], joint_dynamics=True)
    rng = np.random.default_rng(2)
    R0, r0, u0 = np.eye(3), np.zeros(3), np.zeros(6)
    q, qd, w = rng.uniform(-1, 1, 7), rng.normal(size=7), rng.normal(size=7)
    h = 1e-6
    dH = np.empty((7, 7, 7))  # dH[:, :, k] = dH/dq_k
    for k in range(7):
        e = np.zeros(7)
        e[k] = h
        plus = fd.mass_matrix(R0, r0, q + e)[
            6:, 6:
        ].copy()  # (the result is the workspace's buffer)
        dH[:, :, k] = (plus - fd.mass_matrix(R0, r0, q - e)[6:, 6:]) / (2 * h)
    # gamma[i, j, k] = (dH_ij/dq_k + dH_ik/dq_j - dH_jk/dq_i) / 2
    gamma = 0.5 * (dH + np.einsum('ikj->ijk', dH) - np.einsum('jki->ijk', dH))
    C = np.einsum('ijk,k->ij', gamma, qd)
    np.testing.assert_allclose(coriolis_times(fd, R0, r0, q, u0, qd, w), C @ w, atol=1e-7)
    Hdot = np.einsum('ijk,k->ij', dH, qd)
    assert np.abs((Hdot - 2 * C) + (Hdot - 2 * C).T).max() < 1e-7
    # b(qd) = C(q, qd) qd (the bias without gravity and friction)
    rigid = FastDynamics(robot)
    np.testing.assert_allclose(
        coriolis_times(fd, R0, r0, q, u0, qd, qd),
        rigid.bias_forces(R0, r0, q, u0, qd, floating=False)[1],
        atol=1e-10,
    )


def test_joint_impedance_law():
    """
    One tick of the law = H qdd_d + C qd_d + g + K (q_d - q) + D.

    qd_d - qd) with SPART's numpy GIM, the polarized Coriolis term and SPART's ID at rest for g,
    plus the model's friction compensation (damping at the period's middle, Coulomb at the
    reference velocity.
    """
    from types import SimpleNamespace

    from spart_ros.control import Controller, ControllerSettings
    from spart_ros.control.trajectory import Reference
    from spart_ros.core.fast.mimic import fast_dynamics

    robot, _ = robot_from_urdf(KUKA, joint_dynamics={'*': {'friction': 0.3}})
    fd = fast_dynamics(robot, [0, 0, -9.81], joint_dynamics=True)
    c = Controller(notify=lambda *a: None)
    c.configure(
        ControllerSettings(
            mode='joint_impedance', impedance_stiffness=K_JOINT, impedance_damping=D_JOINT
        ),
        robot,
        fd,
    )
    law = c.law
    rng = np.random.default_rng(7)
    q, qd = rng.uniform(-1, 1, 7), rng.normal(size=7)
    ref = Reference(q + rng.normal(size=7) * 0.01, rng.normal(size=7), rng.normal(size=7))
    base = SimpleNamespace(R_b=np.eye(3), p_b=np.zeros(3), v_b=np.zeros(3), w_b=np.zeros(3))
    dt = 1e-3
    out = law.command(SimpleNamespace(base=base, q=q, qd=qd), ref, 0.0, dt).values.copy()
    R0, r0 = np.eye(3), np.asarray(robot.base_link.T, float)[:3, 3]
    RJ, RL, rJ, rL, e, g_ = spart.Kinematics(R0, r0, q, robot)
    Bij, Bi0, P0, pm = spart.DiffKinematics(R0, r0, rL, e, g_, robot)
    I0, Im = spart.I_I(R0, RL, robot)
    M0, Mm = spart.MCB(I0, Im, Bij, Bi0, robot)
    _, _, H = spart.GIM(M0, Mm, Bij, Bi0, P0, pm, robot)
    t0, tL = spart.Velocities(Bij, Bi0, P0, pm, np.zeros(6), np.zeros(7), robot)
    t0d, tLd = spart.Accelerations(
        t0, tL, P0, pm, Bi0, Bij, np.zeros(6), np.zeros(7), np.zeros(6), np.zeros(7), robot
    )
    _, grav = spart.ID(
        np.zeros(6),
        np.zeros((6, 7)),
        t0,
        tL,
        t0d,
        tLd,
        P0,
        pm,
        I0,
        Im,
        Bij,
        Bi0,
        robot,
        gravity=[0, 0, -9.81],
    )
    K, D = np.array(K_JOINT), np.array(D_JOINT)
    friction = 0.5 * (qd + 0.5 * dt * ref.acceleration) + 0.3 * np.tanh(
        (ref.velocity + 0.5 * dt * ref.acceleration) / 0.01
    )
    expected = (
        H @ ref.acceleration
        + coriolis_times(fd, R0, r0, q, np.zeros(6), qd, ref.velocity)
        + grav
        + K * (ref.position - q)
        + D * (ref.velocity - qd)
        + friction
    )
    np.testing.assert_allclose(out, expected, rtol=1e-9, atol=1e-9)
    with pytest.raises(InputError, match='impedance_stiffness'):
        ControllerSettings(mode='joint_impedance', impedance_stiffness=-1.0).per_joint(['a'])


def _energy_never_grows(E, tolerance=1e-8):
    rises = np.diff(E)
    print(f'energy {E[0]:.4g} J -> {E[-1]:.3g} J, largest rise between ticks {rises.max():.2e} J')
    assert rises.max() <= tolerance * E[0], rises.max()
    assert E[-1] < 0.05 * E[0]


def test_joint_impedance_is_passive():
    """
    Held at its pose.

    Released with joint velocities (RK4 plant, gravity, the model's damping and a Coulomb friction
    the law compensates): the energy 1/2 qd' H qd + 1/2 e' K e (H with the rotor inertia) never
    grows, tick to tick.
    """
    init = InitialState(
        Q0,
        {
            'lbr_iiwa_joint_1': 0.5,
            'lbr_iiwa_joint_3': -0.4,
            'lbr_iiwa_joint_5': 0.6,
            'lbr_iiwa_joint_7': 1.0,
        },
    )
    run = simulate(
        KUKA,
        {'mode': 'joint_impedance', 'impedance_stiffness': K_JOINT, 'impedance_damping': D_JOINT},
        duration=2.0,
        plant='rk4',
        joint_dynamics={'*': {'armature': 0.1, 'friction': 0.2}},
        initial=init,
    )
    fd = FastDynamics(run.robot, joint_dynamics=True)
    R0, r0 = np.eye(3), np.asarray(run.robot.base_link.T, float)[:3, 3]
    K = np.array(K_JOINT)
    E = np.array(
        [
            0.5 * run.qd[k] @ fd.mass_matrix(R0, r0, run.q[k])[6:, 6:] @ run.qd[k]
            + 0.5 * (run.q_ref[k] - run.q[k]) @ (K * (run.q_ref[k] - run.q[k]))
            for k in range(len(run.t))
        ]
    )
    assert np.all(run.q_ref == run.q_ref[0])  # the pose held at activation
    _energy_never_grows(E)


def _kuka_plant():
    return MujocoPlant.from_urdf(
        KUKA, gravity=[0.0, 0.0, -9.81], joint_dynamics=ARMATURE, initial=InitialState(Q0)
    )


def _cartesian(**extra):
    return dict(
        {
            'mode': 'cartesian_impedance',
            'cartesian_stiffness': tuple(K_CART),
            'ee_link': EE,
            'ee_offset': POINT,
        },
        **extra,
    )


def test_cartesian_deflection_under_a_wrench_is_k_inverse_times_it():
    """
    KUKA iiwa holding its end effector (10 cm out of link 7) in gravity on the MuJoCo plant.

    A constant wrench (8, -5, 6) N and (0.3, -0.2, 0.4) N m applied at link 7's CoM through
    xfrc_applied from t = 0.2 s: 6 s later the end effector has moved by K^-1 f and turned by K^-1
    (torque + (CoM - point) x f), within 1e-5 (of 1e-2 .. 3e-2; damped 2.5 sqrt(K)).
    """
    plant = _kuka_plant()
    body = plant.model.body(EE).id
    f, torque = np.array([8.0, -5.0, 6.0]), np.array([0.3, -0.2, 0.4])

    def push(controller, plant, t):
        plant.data.xfrc_applied[body, 0:3] = f
        plant.data.xfrc_applied[body, 3:6] = torque

    run = simulate(
        None,
        _cartesian(cartesian_damping=tuple(2.5 * np.sqrt(K_CART))),
        duration=6.0,
        plant=plant,
        events=[(0.2, push)],
    )
    R, p = run.ee_poses(EE, POINT)
    moved, turned = p[-1] - p[0], rotation_vector(R[-1] @ R[0].T)
    torque_at_point = torque + np.cross(plant.data.xipos[body] - p[-1], f)
    print(
        f'\ndeflection {moved} m (K^-1 f {f / K_CART[3:]}), rotation {turned} rad '
        f'(K^-1 torque {torque_at_point / K_CART[:3]})'
    )
    np.testing.assert_allclose(moved, f / K_CART[3:], atol=1e-5)
    np.testing.assert_allclose(turned, torque_at_point / K_CART[:3], atol=1e-5)
    assert run.states[-1] == 'holding'


def _target(robot, q, R_b, p_b, link, point=(0.0, 0.0, 0.0)):
    R0, r0, _ = base_from_link_frame(robot, R_b, p_b)
    R, p = InverseKinematics(robot, link, point).pose(np.array(q), R0, r0)
    return _rotation_from_vector(np.array([0.05, -0.05, 0.05])) @ R, p + np.array(
        [0.02, -0.02, 0.03]
    )


def test_cartesian_impedance_is_passive_and_reaches_its_target():
    """
    A constant pose target 3 cm and 5 deg away, no posture stiffness.

    The energy 1/2 qd' H qd + 1/2 e_p' K_p e_p + 1/2 k_r |rotvec|^2 (isotropic rotational
    stiffness) never grows, tick to tick (MuJoCo plant, gravity compensated), and the target is
    reached.
    """
    plant = _kuka_plant()
    R_d, p_d = _target(
        plant.robot,
        [Q0.get(n, 0.0) for n in plant.robot.q_names],
        *plant.base_link_state()[0:2],
        EE,
        POINT,
    )
    K = np.array([20.0, 20.0, 20.0, 400.0, 300.0, 500.0])
    run = simulate(
        None,
        _cartesian(cartesian_stiffness=tuple(K), nullspace_stiffness=0.0, nullspace_damping=4.0),
        duration=3.0,
        plant=plant,
        events=[(0.0, lambda c, p, t: c.set_reference('ee_pose', (R_d, p_d, 'world'), t))],
    )
    R, p = run.ee_poses(EE, POINT)
    fd = FastDynamics(plant.robot, joint_dynamics=True)
    R0, r0, _ = base_from_link_frame(plant.robot, *plant.base_link_state()[0:2])
    E = []
    for k in range(len(run.t)):
        er, ep = rotation_vector(R_d @ R[k].T), p_d - p[k]
        E.append(
            0.5 * run.qd[k] @ fd.mass_matrix(R0, r0, run.q[k])[6:, 6:] @ run.qd[k]
            + 0.5 * ep @ (K[3:] * ep)
            + 0.5 * K[0] * er @ er
        )
    _energy_never_grows(np.array(E))
    assert np.abs(p_d - p[-1]).max() < 1e-4 and np.abs(rotation_vector(R_d @ R[-1].T)).max() < 1e-3


def test_floating_cartesian_impedance_is_passive_and_reaches_its_target():
    """
    The 7-joint arm on a 200 kg free-floating base (zero gravity, no momentum).

    A pose target 3 cm and 5 deg away through the generalized Jacobian: the whole system's kinetic
    energy (base included) + the spring never grows beyond rounding (1e-8 of it), the target is
    reached to 0.1 mm / 0.2 mrad within 4 s while the base turns.
    """
    urdf = (
        open(urdf_path('arm7_floating'))
        .read()
        .replace(
            '<mass value="5"/>\n      <inertia ixx="0.0260417" ixy="0" ixz="0" iyy="0.0260417" '
            'iyz="0" izz="0.0333333"/>',
            '<mass value="200"/>\n      <inertia ixx="20" ixy="0" ixz="0" iyy="24" iyz="0" '
            'izz="28"/>',
        )
    )
    q0 = [0.3, 0.6, -0.2, -1.2, 0.4, 0.8, 0.1]
    names = [f'arm_joint_{k}' for k in range(1, 8)]
    plant = MujocoPlant.from_urdf(
        urdf,
        base='floating',
        gravity=[0.0, 0.0, 0.0],
        joint_dynamics={'*': {'armature': 0.05}},
        initial=InitialState(dict(zip(names, q0))),
    )
    assert list(plant.robot.q_names) == names
    R_d, p_d = _target(plant.robot, q0, *plant.base_link_state()[0:2], 'arm_tool')
    K = np.array([10.0, 10.0, 10.0, 200.0, 200.0, 200.0])
    run = simulate(
        None,
        {
            'mode': 'floating_cartesian_impedance',
            'ee_link': 'arm_tool',
            'cartesian_stiffness': tuple(K),
            'nullspace_stiffness': 0.0,
            'nullspace_damping': 2.0,
        },
        duration=4.0,
        plant=plant,
        events=[(0.0, lambda c, p, t: c.set_reference('ee_pose', (R_d, p_d, 'world'), t))],
    )
    R, p = run.ee_poses('arm_tool')
    fd = FastDynamics(plant.robot, joint_dynamics=True)
    E = []
    for k in range(len(run.t)):
        R0, r0, u0 = base_from_link_frame(
            plant.robot,
            run.base_rotation[k],
            run.base_position[k],
            run.base_twist[k, 0:3],
            run.base_twist[k, 3:6],
        )
        u = np.concatenate([u0, run.qd[k]])
        er, ep = rotation_vector(R_d @ R[k].T), p_d - p[k]
        E.append(
            0.5 * u @ fd.mass_matrix(R0, r0, run.q[k]) @ u
            + 0.5 * ep @ (K[3:] * ep)
            + 0.5 * K[0] * er @ er
        )
    _energy_never_grows(np.array(E))
    assert np.abs(p_d - p[-1]).max() < 1e-4 and np.abs(rotation_vector(R_d @ R[-1].T)).max() < 2e-4
    turned = np.degrees(
        np.arccos(
            np.clip((np.trace(run.base_rotation[0].T @ run.base_rotation[-1]) - 1) / 2, -1, 1)
        )
    )
    assert turned > 0.01, turned


def test_cartesian_settings_are_checked():
    from spart_ros.control import ControllerSettings

    with pytest.raises(InputError, match='cartesian_stiffness: expected 6 values'):
        ControllerSettings(mode='cartesian_impedance', cartesian_stiffness=(1.0, 2.0)).check()
    with pytest.raises(InputError, match='not positive semi-definite'):
        ControllerSettings(
            mode='cartesian_impedance', cartesian_stiffness=(-1.0, 1, 1, 1, 1, 1)
        ).check()
    with pytest.raises(InputError, match='nullspace_stiffness'):
        ControllerSettings(mode='cartesian_impedance', nullspace_stiffness=-1.0).check()
    with pytest.raises(InputError, match='needs base: fixed'):
        ControllerSettings(mode='cartesian_impedance', floating=True).check()


def test_cartesian_impedance_on_a_robot_with_a_mimic_finger():
    """
    Franka Panda (example-robot-data's URDF: the second finger mimics the first).

    The robot franka_ros users run Cartesian impedance on: the fixed-base law works in the 8
    independent coordinates (Jacobian J_full G), holds its end effector in gravity and reaches a
    pose target 3 cm and 5 deg away on the MuJoCo plant; the free-floating law, whose generalized
    Jacobian takes every joint as independent, refuses the robot naming the mimic joint.
    """
    panda = urdf_path('panda')
    q0 = {'panda_joint2': -0.4, 'panda_joint4': -2.0, 'panda_joint6': 1.6, 'panda_joint7': 0.8}
    plant = MujocoPlant.from_urdf(panda, gravity=[0.0, 0.0, -9.81], initial=InitialState(q0))
    robot = plant.robot
    ee = 'panda_hand'
    q_start = [q0.get(n, 0.0) for n in robot.coordinates.names]  # independent coordinates
    R_d, p_d = _target(robot, q_start, *plant.base_link_state()[0:2], ee)
    settings = {'mode': 'cartesian_impedance', 'cartesian_stiffness': tuple(K_CART), 'ee_link': ee}
    hold = simulate(None, settings, duration=1.0, plant=plant)
    R, p = hold.ee_poses(ee)
    assert (
        np.abs(p[-1] - p[0]).max() < 1e-4 and np.abs(rotation_vector(R[-1] @ R[0].T)).max() < 1e-3
    )
    plant.reset()
    run = simulate(
        None,
        settings,
        duration=3.0,
        plant=plant,
        events=[(0.0, lambda c, pl, t: c.set_reference('ee_pose', (R_d, p_d, 'world'), t))],
    )
    R, p = run.ee_poses(ee)
    print(
        f'\nPanda: end effector {np.abs(p_d - p[-1]).max():.1e} m, '
        f'{np.abs(rotation_vector(R_d @ R[-1].T)).max():.1e} rad from the target after 3 s'
    )
    assert np.abs(p_d - p[-1]).max() < 1e-4 and np.abs(rotation_vector(R_d @ R[-1].T)).max() < 1e-3
    floating = MujocoPlant.from_urdf(
        panda, base='floating', gravity=[0.0, 0.0, 0.0], initial=InitialState(q0)
    )
    with pytest.raises(
        InputError,
        match=r"floating_cartesian_impedance: robot 'panda' has mimic joints "
        r"\['panda_finger_joint2'\]",
    ):
        simulate(
            None,
            dict(settings, mode='floating_cartesian_impedance'),
            duration=0.01,
            plant=floating,
        )
