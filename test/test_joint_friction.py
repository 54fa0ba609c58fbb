"""
Joint friction, damping and rotor inertia (armature) in the model (spart_ros.core.joint_friction).

- reading: URDF <dynamics damping friction> into joint.dynamics; overrides by keyword and YAML;
  bad values named;
- off by default: SPART's functions and the default fast path give the same results, bit for bit,
  whatever the joints declare;
- the fast path with joint_dynamics=True: ID/FD round trip (fixed and floating base, a mimic
  robot, prismatic joints), FD = H^-1 (tau - bias) with armature on H's diagonal, ID = the
  rigid-body ID + a qdd + d qd + F tanh(qd / v);
- against MuJoCo (the embedded plant, same damping and armature): accelerations equal, fixed and
  floating base; with the option friction='frictionloss' (MuJoCo's constraint, not the default)
  where the constraint saturates against the motion (a heavy joint sliding fast), equal too; at
  rest under an effort smaller than the friction, MuJoCo's static friction holds more than the
  smoothed Coulomb model (the documented difference); test_joint_dissipation.py shows the
  default plants apply the model's law.
"""

from core_helpers import random_state, urdf_path
import numpy as np
import pytest
from spart_ros import spart
from spart_ros.core import robot_from_urdf
from spart_ros.core.errors import InputError, ModelError, URDFError
from spart_ros.core.fast import FastDynamics
from spart_ros.core.fast.mimic import fast_dynamics
from spart_ros.core.joint_friction import (
    FRICTION_VELOCITY,
    joint_dynamics_arrays,
    joint_friction_forces,
)
from spart_ros.core.model import JointDynamics, RobotBuilder
from test_sim_plant import spart_state

KUKA = urdf_path('kuka_iiwa')  # <dynamics damping="0.5"/> on every joint
ARM7 = urdf_path('arm7_floating')
PANDA = urdf_path('panda')  # a mimic finger
BRANCHED = urdf_path('branched_two_arm_spacecraft')  # prismatic joints, a tree
G = np.array([0.0, 0.0, -9.81])
EXTRA = {'*': {'friction': 0.8, 'armature': 0.05}}


def robot(path, **kw):
    return robot_from_urdf(path, **kw)[0]


def test_urdf_dynamics_are_read_and_overridden(tmp_path):
    kuka = robot(KUKA)
    d, f, a = joint_dynamics_arrays(kuka)
    assert np.all(d == 0.5) and not f.any() and not a.any() and kuka.declares_joint_dynamics
    assert not robot(urdf_path('SC_3DoF')).declares_joint_dynamics
    yaml_file = tmp_path / 'dyn.yaml'
    yaml_file.write_text(
        'joint_dynamics:\n  "*": {armature: 0.1}\n  lbr_iiwa_joint_2: {friction: 1.5, armature: '
        '0.3}\n'
    )
    r = robot(KUKA, joint_dynamics=str(yaml_file), armature={'lbr_iiwa_joint_7': 0.02})
    d, f, a = joint_dynamics_arrays(r)
    assert np.all(d == 0.5)  # the URDF's, kept
    assert f.tolist() == [0, 1.5, 0, 0, 0, 0, 0]
    assert a.tolist() == [
        0.1,
        0.3,
        0.1,
        0.1,
        0.1,
        0.1,
        0.02,
    ]  # '*', the joint's own entry, the keyword last
    with pytest.raises(ModelError, match="'nope' is not a joint"):
        robot(KUKA, armature={'nope': 0.1})
    with pytest.raises(InputError, match=r"armature\['\*'\]: expected a finite number >= 0"):
        robot(KUKA, armature=-1.0)
    with pytest.raises(InputError, match='unknown fields'):
        robot(KUKA, joint_dynamics={'lbr_iiwa_joint_1': {'stiffness': 1.0}})
    with pytest.raises(InputError, match='cannot read'):
        robot(KUKA, joint_dynamics=str(tmp_path / 'missing.yaml'))
    bad = open(KUKA).read().replace('<dynamics damping="0.5"/>', '<dynamics damping="-0.5"/>', 1)
    with pytest.raises(URDFError, match='negative'):
        robot(bad)
    b = RobotBuilder('one')
    b.add_link('base', 1.0, np.eye(3))
    b.add_link('l1', 1.0, np.eye(3))
    with pytest.raises(ModelError, match='dynamics.armature'):
        b.add_joint(
            'j',
            'revolute',
            'base',
            'l1',
            axis=[0, 0, 1],
            dynamics=JointDynamics(armature=float('nan')),
        )


def test_off_by_default_bit_identical():
    """
    The default fast path and SPART's FD/ID ignore what the joints declare.

    A robot with friction, damping and armature gives exactly the results of the same robot
    without.
    """
    plain = robot(KUKA, joint_dynamics={'*': {'damping': 0.0}})
    rich = robot(KUKA, joint_dynamics=EXTRA)
    assert not plain.declares_joint_dynamics and rich.declares_joint_dynamics
    s = random_state(plain, 4)
    for fd_a, fd_b in ((FastDynamics(plain, G), FastDynamics(rich, G)),):
        for name, call in (
            ('FD', lambda fd: fd.forward_dynamics(s.R0, s.r0, s.qm, s.u0, s.um, s.tau0, s.taum)),
            ('ID', lambda fd: fd.inverse_dynamics(s.R0, s.r0, s.qm, s.u0, s.um, s.u0dot, s.umdot)),
            ('H', lambda fd: (fd.mass_matrix(s.R0, s.r0, s.qm),)),
        ):
            for x, y in zip(call(fd_a), call(fd_b)):
                assert np.array_equal(x, y), name
    outs = []
    for r in (plain, rich):
        RJ, RL, rJ, rL, e, g = spart.Kinematics(s.R0, s.r0, s.qm, r)
        Bij, Bi0, P0, pm = spart.DiffKinematics(s.R0, s.r0, rL, e, g, r)
        t0, tL = spart.Velocities(Bij, Bi0, P0, pm, s.u0, s.um, r)
        I0, Im = spart.I_I(s.R0, RL, r)
        outs.append(
            spart.FD(s.tau0, s.taum, s.wF0, s.wFm, t0, tL, P0, pm, I0, Im, Bij, Bi0, s.u0, s.um, r)
        )
    for x, y in zip(*outs):
        assert np.array_equal(x, y)


@pytest.mark.parametrize(
    'path, floating',
    [(KUKA, False), (ARM7, True), (BRANCHED, True), (BRANCHED, False), (PANDA, False)],
)
def test_inverse_forward_round_trip_and_mass_matrix(path, floating):
    """
    FD then ID gives back the efforts (and the base wrench) to 1e-10 relative.

    FD = solve(H, tau - bias) with H's joint diagonal + armature and the bias with damping and
    friction; ID - rigid-body ID = a qdd + d qd + F tanh(qd / v) exactly (as far as rounding).
    """
    r = robot(path, joint_dynamics={'*': {'friction': 0.8, 'armature': 0.05, 'damping': 0.3}})
    fd = fast_dynamics(r, G, joint_dynamics=True)
    rigid = fast_dynamics(r, G)
    n = fd.n_q
    rng = np.random.default_rng(11)
    for trial in range(5):
        s = random_state(r, trial)
        q = rng.uniform(-1.0, 1.0, n) * 0.1 if path == BRANCHED else rng.uniform(-1.0, 1.0, n)
        qd = rng.normal(size=n) * (0.02 if trial == 0 else 1.0)  # the first within the smoothing
        u0 = rng.normal(size=6) if floating else np.zeros(6)
        tau0 = rng.normal(size=6) if floating else np.zeros(6)
        tau = rng.normal(size=n) * 5.0
        u0dot, qdd = (
            x.copy()
            for x in fd.forward_dynamics(s.R0, s.r0, q, u0, qd, tau0, tau, floating=floating)
        )
        t0, tm = (
            x.copy()
            for x in fd.inverse_dynamics(s.R0, s.r0, q, u0, qd, u0dot, qdd, floating=floating)
        )
        scale = max(1.0, np.abs(tau).max())
        assert np.abs(tm - tau).max() < 1e-10 * scale, (trial, tm - tau)
        if floating:
            assert np.abs(t0 - tau0).max() < 1e-10 * scale
        H = fd.mass_matrix(s.R0, s.r0, q).copy()
        H_rigid = rigid.mass_matrix(s.R0, s.r0, q)
        G_map = r.coordinates.G
        armature = G_map.T @ np.diag(joint_dynamics_arrays(r)[2]) @ G_map
        np.testing.assert_allclose(H[6:, 6:] - H_rigid[6:, 6:], armature, atol=1e-12)
        b0, bm = (x.copy() for x in fd.bias_forces(s.R0, s.r0, q, u0, qd, floating=floating))
        k = 0 if floating else 6
        rhs = np.concatenate([tau0 - b0, tau - bm])[k:]
        np.testing.assert_allclose(
            np.linalg.solve(H[k:, k:], rhs),
            np.concatenate([u0dot, qdd])[k:],
            rtol=1e-9,
            atol=1e-9 * max(1.0, np.abs(qdd).max()),
        )
        _, tm_rigid = rigid.inverse_dynamics(s.R0, s.r0, q, u0, qd, u0dot, qdd, floating=floating)
        full = r.coordinates.G @ qd
        extra = G_map.T @ (
            joint_friction_forces(r, full) + joint_dynamics_arrays(r)[2] * (G_map @ qdd)
        )
        np.testing.assert_allclose(tm - tm_rigid, extra, atol=1e-11 * scale)
        np.testing.assert_allclose(
            fd.joint_friction(qd), G_map.T @ joint_friction_forces(r, full), atol=1e-14
        )
        if floating:  # the base is not actuated: floating-base ID of the same joint accelerations
            tf, u0dot_f = fd.floating_inverse_dynamics(s.R0, s.r0, q, u0, qd, qdd)
            fd.forward_dynamics(s.R0, s.r0, q, u0, qd, np.zeros(6), tf.copy())
            u0dot_b, qdd_b = fd.forward_dynamics(s.R0, s.r0, q, u0, qd, np.zeros(6), tf.copy())
            np.testing.assert_allclose(qdd_b, qdd, atol=1e-9 * max(1.0, np.abs(qdd).max()))
            np.testing.assert_allclose(
                u0dot_b, u0dot_f, atol=1e-9 * max(1.0, np.abs(u0dot_f).max())
            )


def test_smoothed_coulomb_friction():
    """F tanh(qd / v): odd, continuous through 0, within 1e-12 of F sgn(qd) from |qd| = 15 v on."""
    r = robot(KUKA, joint_dynamics={'*': {'friction': 2.0, 'damping': 0.0}})
    qd = np.array(
        [-1.0, -15 * FRICTION_VELOCITY, -FRICTION_VELOCITY, 0.0, FRICTION_VELOCITY, 0.2, 3.0]
    )
    f = joint_friction_forces(r, qd)
    assert f[3] == 0.0 and np.all(np.diff(f) >= 0)  # increasing, through 0 at rest
    np.testing.assert_allclose(f[[0, 1]], [-2.0, -2.0], atol=1e-12)
    np.testing.assert_allclose(f[4], 2.0 * np.tanh(1.0))
    np.testing.assert_allclose(joint_friction_forces(r, -qd), -f)
    with pytest.raises(InputError, match='friction_velocity'):
        FastDynamics(r, joint_dynamics=True, friction_velocity=0.0)


def _mujoco(path, floating, overrides, rng, speed=None, friction='model'):
    """
    Return a plant at a random state, the core's FD there and MuJoCo's accelerations.

    (plant, core FD of the plant's state and efforts, MuJoCo's accelerations).
    """
    from spart_ros.sim import InitialState, MujocoPlant

    plant = MujocoPlant.from_urdf(
        path,
        base='floating' if floating else 'fixed',
        gravity=G if not floating else np.zeros(3),
        joint_dynamics=overrides,
        friction=friction,
    )
    r = plant.robot
    names = plant.joint_names
    q = rng.uniform(-1.0, 1.0, len(names))
    qd = (
        rng.normal(size=len(names))
        if speed is None
        else np.sign(rng.normal(size=len(names))) * speed
    )
    plant.reset(
        InitialState(
            dict(zip(names, q)),
            dict(zip(names, qd)),
            base_linear_velocity=tuple(rng.normal(size=3) * 0.1) if floating else (0, 0, 0),
            base_angular_velocity=tuple(rng.normal(size=3) * 0.1) if floating else (0, 0, 0),
        )
    )
    plant.hold(False)
    plant.set_efforts(rng.normal(size=len(names)) * 3.0)
    s = spart_state(plant, r)
    fd = FastDynamics(r, gravity=plant.gravity, joint_dynamics=True)
    u0dot, umdot = fd.forward_dynamics(
        s.R0, s.r0, s.qm, s.u0, s.um, np.zeros(6), s.taum, floating=floating
    )
    by_name = dict(zip(names, plant.joint_accelerations()))
    return plant, s, (u0dot.copy(), umdot.copy()), np.array([by_name[n] for n in r.q_names])


@pytest.mark.parametrize('path, floating', [(KUKA, False), (ARM7, True)])
def test_damping_and_armature_match_mujoco(path, floating):
    """
    Damping and armature in MuJoCo and in the core's FD give the same accelerations.

    The same damping and armature in MuJoCo (RK4: the damping is an explicit passive force) and in
    the core's FD: joint accelerations (and the base's, floating) equal to 1e-9.
    """
    rng = np.random.default_rng(21)
    for _ in range(3):
        plant, s, (u0dot, umdot), qdd = _mujoco(
            path, floating, {'*': {'damping': 0.7, 'armature': 0.08}}, rng
        )
        assert np.allclose(plant.model.dof_armature[-len(umdot) :], 0.08)
        scale = max(1.0, np.abs(umdot).max())
        assert np.abs(qdd - umdot).max() < 1e-9 * scale, np.abs(qdd - umdot).max()
        if floating:
            from spart_ros.core import base_state as bs

            a_b, alpha_b = plant.base_acceleration()
            a_core, alpha_core = bs.link_frame_acceleration_from_base(
                plant.robot, s.R0, s.u0, u0dot
            )
            assert (
                np.abs(alpha_b - alpha_core).max() < 1e-9 * scale
                and np.abs(a_b - a_core).max() < 1e-9 * scale
            )


def test_coulomb_friction_against_mujoco_frictionloss():
    """
    Coulomb friction against MuJoCo's frictionloss (the plants' option friction='frictionloss').

    A joint sliding fast enough that the constraint saturates against the motion (its force -F
    sgn(qd)) is the core's F tanh(qd / v) with |qd| >> v: accelerations equal to 1e-9.  At rest
    under efforts below the friction, MuJoCo's static friction holds the joints back (accelerations
    smaller than the core's, which smooths the friction to zero at zero velocity).
    """
    rng = np.random.default_rng(5)
    F = 0.3
    for _ in range(3):
        plant, s, (_, umdot), qdd = _mujoco(
            KUKA, False, {'*': {'friction': F, 'armature': 0.05}}, rng, 3.0, 'frictionloss'
        )
        force = plant.data.efc_force[: plant.data.nefc]
        assert np.allclose(np.abs(force), F), force  # saturated on every joint
        assert np.abs(qdd - umdot).max() < 1e-9 * max(1.0, np.abs(umdot).max())
    from spart_ros.sim import InitialState

    names = plant.joint_names
    plant.reset(InitialState(dict(zip(names, rng.uniform(-1.0, 1.0, 7)))))
    plant.hold(False)
    plant.set_efforts(np.full(7, 0.1))
    s = spart_state(plant, plant.robot)
    fd = FastDynamics(plant.robot, gravity=np.zeros(3), joint_dynamics=True)
    plant.gravity = np.zeros(3)
    _, umdot = fd.forward_dynamics(
        s.R0, s.r0, s.qm, s.u0, s.um, np.zeros(6), s.taum, floating=False
    )
    held = np.abs(plant.joint_accelerations())
    assert np.all(held < np.abs(umdot)), (held, umdot)
