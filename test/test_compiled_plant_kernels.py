"""
The plants' and the controller's compiled kernels (issue 35) against the numpy they replaced.

- the joints' dissipation step (Newton + the exact linear step) against its numpy form
  (plant_kernel_references.py, the code before the kernel) to 1e-12 of the velocities, with and
  without friction, with a mimic map, on a floating base's velocity vector;
- the friction compensation's coupled branch against its numpy form on the xArm7 (the problem
  amplifies rounding: numpy's own answer moves by 8e-13 when the inertia moves by 1e-16);
- the orbit's loads on MuJoCo's bodies against CircularOrbit.loads, both models; the LVLH readout
  against CircularOrbit.to_lvlh;
- the RK4 plant's compiled step against its numpy step to rounding, without an orbit and with
  the orbit and the thrusters;
- the base actuators' per-step rules, the wheels' required wrench and the attitude dynamics'
  torque against their numpy forms; the controller's per-tick checks (tolerance, fault, jump)
  against numpy's tests on random vectors;
- BaseFrames' unchecked base conversions against spart_ros.core.base_state's on a base whose CoM
  frame is offset and turned.
"""

import math
import os
import warnings

from core_helpers import TEST_DIR
import numpy as np
import plant_kernel_references as ref
import pytest

ROOT = os.path.dirname(TEST_DIR)
SC_3DOF = os.path.join(ROOT, 'urdf', 'SC_3DoF.urdf')
ACTUATORS = os.path.join(ROOT, 'urdf', 'SC_3DoF.actuators.yaml')
XARM7 = os.path.join(TEST_DIR, 'data', 'urdf', 'vendor', 'xarm7.urdf')


def _robot(source, **kw):
    from spart_ros.core.urdf import robot_from_urdf

    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return robot_from_urdf(source, **kw)[0]


def _spd(rng, n, scale):
    A = rng.normal(size=(n, n))
    return (A @ A.T + n * rng.uniform(1e-3, 1.0) * np.eye(n)) * scale


@pytest.mark.parametrize(
    'case', ['fixed friction', 'fixed damping', 'floating friction', 'mimic friction']
)
def test_the_dissipation_step_is_its_numpy_form(case):
    from spart_ros.sim.joint_dissipation import JointDissipation

    rng = np.random.default_rng(35)
    n, N = 7, 7 if not case.startswith('floating') else 13
    G = None
    if case.startswith('mimic'):  # an eighth joint follows the seventh
        G = np.vstack([np.eye(n), np.eye(n)[6:7]])
    worst = 0.0
    for _ in range(20):
        n_full = n if G is None else n + 1
        damping = rng.uniform(0.0, 2.0, n_full)
        friction = rng.uniform(0.0, 1.0, n_full) if 'friction' in case else np.zeros(n_full)
        law = JointDissipation(damping, friction, G)
        M = _spd(rng, N, 10 ** rng.uniform(-3, 0))
        r, u0 = rng.normal(size=N), rng.normal(size=N)
        joints = np.arange(N - n, N)
        u1, mean = law.step(M, r, u0, 1e-3, joints)
        r1, rmean = ref.dissipation_step(law, M, r, u0, 1e-3, joints)
        scale = np.abs(u0).max() + np.abs(r1).max()
        worst = max(worst, np.abs(u1 - r1).max() / scale, np.abs(mean - rmean).max() / scale)
    assert worst < 1e-12, worst


def test_the_friction_compensation_is_its_numpy_form():
    from spart_ros.control.friction_compensation import FrictionCompensation
    from spart_ros.core.fast.mimic import fast_dynamics

    fd = fast_dynamics(_robot(XARM7), [0, 0, -9.81], joint_dynamics=True)
    fc = FrictionCompensation(fd)
    rng = np.random.default_rng(36)
    worst = 0.0
    for _ in range(20):
        q, qd, qdd = rng.uniform(-1, 1, 7), 0.5 * rng.normal(size=7), rng.normal(size=7)
        M = fd.mass_matrix(np.eye(3), np.zeros(3), q)[6:, 6:].copy()
        fc._gain, fc.period = None, 1e-3
        out = fc.correction(qd, qdd, 1e-3, M)
        expected = ref.friction_correction(fc, qd, qdd, 1e-3, M)
        worst = max(worst, np.abs(out - expected).max() / np.abs(expected).max())
    assert worst < 2e-11, worst  # 1.9e-12 seen


@pytest.mark.parametrize('model', ['linear', 'nonlinear'])
def test_the_orbit_loads_on_mujoco_bodies_and_the_lvlh_readout(model):
    from spart_ros.core.orbit import CircularOrbit
    from spart_ros.sim.plant import _to_lvlh, InitialState, MujocoPlant

    orbit = CircularOrbit.make(altitude=500e3, model=model)
    initial = InitialState(
        {'Joint_1': 0.3, 'Joint_2': -0.4, 'Joint_3': 0.2},
        base_position=(3.0, -2.0, 1.0),
        base_orientation=(0.1, 0.2, -0.3, 0.927362),
        base_angular_velocity=(0.01, -0.02, 0.03),
    )
    plant = MujocoPlant.from_urdf(
        SC_3DOF, base='floating', gravity=(0, 0, 0), orbit=orbit, initial=initial
    )
    plant.step(3)
    loads = plant.effectors[0]
    d = plant.data
    d.time = 0.37
    forces, torques = loads.loads(d)
    user = np.arange(d.xfrc_applied.size, dtype=float).reshape(d.xfrc_applied.shape)
    loads.mujoco_stage(d, user)
    b = loads.bodies
    assert np.abs(d.xfrc_applied[b, 0:3] - user[b, 0:3] - forces).max() <= 1e-15 * (
        np.abs(forces).max() + np.abs(user).max()
    )
    assert np.abs(d.xfrc_applied[b, 3:6] - user[b, 3:6] - torques).max() <= 1e-15 * (
        np.abs(torques).max() + np.abs(user).max()
    )
    R, p = np.linalg.qr(np.random.default_rng(1).normal(size=(3, 3)))[0], np.array([2.0, -1, 3])
    v, w = np.array([0.1, 0.2, -0.3]), np.array([0.01, 0.02, 0.03])
    for a, e in zip(_to_lvlh(orbit, 123.4, R, p, v, w), orbit.to_lvlh(123.4, R, p, v, w)):
        assert np.abs(a - e).max() <= 1e-15 * (1 + np.abs(e).max())


@pytest.mark.parametrize('case', ['no orbit', 'orbit and thrusters'])
def test_the_compiled_rk4_step_is_the_numpy_step(case):
    from spart_ros.core.actuators import add_wheels, load_actuators
    from spart_ros.core.orbit import CircularOrbit
    from spart_ros.sim.plant import InitialState
    from spart_ros.sim.rigid_body import RigidBodyPlant

    orbit, actuators, urdf = None, None, SC_3DOF
    if case != 'no orbit':
        orbit, actuators = CircularOrbit.make(altitude=500e3), load_actuators(ACTUATORS)
        urdf = add_wheels(SC_3DOF, actuators)
    robot = _robot(urdf)
    initial = InitialState(
        {'Joint_1': 0.3, 'Joint_2': -0.4},
        {'Joint_3': 0.5},
        base_orientation=(0.1, 0.2, -0.3, 0.927362),
        base_linear_velocity=(0.01, 0.02, 0.0),
        base_angular_velocity=(0.01, -0.02, 0.03),
    )
    plants = [
        RigidBodyPlant(
            robot,
            base='floating',
            gravity=(0, 0, 0),
            initial=initial,
            orbit=orbit,
            actuators=actuators,
        )
        for _ in range(2)
    ]
    compiled, numpy = plants
    assert compiled._compiled
    numpy._compiled = False
    for k in range(60):
        for plant in plants:
            plant.set_efforts(np.sin(0.1 * k + np.arange(plant.n_joints)))
            if actuators is not None:
                plant.actuation.set_thruster_commands(np.where(np.arange(12) % 5 == k % 5, 1, 0))
                plant.actuation.set_wheel_torques([0.01, -0.02, 0.03, 0.0])
            plant.step(2)
    a, b = compiled._pack(), numpy._pack()
    # to rounding (bit for bit here without an orbit, where numpy's dot sums as the kernel does:
    # test_orbit_plants' reference relies on it; another BLAS may round the quaternion's norm
    # otherwise)
    assert np.abs(a - b).max() <= 1e-13 * np.abs(b).max(), np.abs(a - b).max()
    if orbit is not None:
        assert np.array_equal(compiled.actuation.impulse, numpy.actuation.impulse)


def test_the_base_actuators_rules_and_the_wheels_dynamics_are_their_numpy_forms():
    from spart_ros.control.base_actuation import AttitudeDynamics, BaseActuatorControl
    from spart_ros.core.actuators import add_wheels, load_actuators, lock_wheels
    from spart_ros.core.fast import FastDynamics
    from spart_ros.sim.actuation import BaseActuation

    actuators = load_actuators(ACTUATORS)
    rng = np.random.default_rng(37)
    a = BaseActuation(actuators, np.arange(4), 1e-3)
    for k in range(200):
        a.set_wheel_torques(rng.uniform(-0.3, 0.3, 4))
        a.set_thruster_commands(rng.uniform(-1, 1, 12))
        speeds = rng.choice([0.0, 599.9, -599.9, 30.0], 4)
        torques, forces = ref.actuators_step(a, k * 1e-3, speeds)
        out = a.before_step(k * 1e-3, speeds)
        assert np.array_equal(out[0], torques) and np.array_equal(out[1], forces)
    control = BaseActuatorControl(actuators)
    robot = _robot(lock_wheels(add_wheels(SC_3DOF, actuators), actuators))
    fd = FastDynamics(robot)
    for _ in range(10):
        speeds = rng.uniform(-300, 300, 4)
        w_b, alpha_b, torque, force = (rng.normal(size=3) for _ in range(4))
        got = control.required_wrench(torque, force, w_b, alpha_b, speeds)
        expected = ref.required_wrench(control, torque, force, w_b, alpha_b, speeds)
        assert np.abs(got - expected).max() <= 1e-14 * np.abs(expected).max()
        R0 = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        R0 *= np.sign(np.linalg.det(R0))
        q, qd, qdd, u0 = (
            rng.normal(size=3),
            rng.normal(size=3),
            rng.normal(size=3),
            rng.normal(size=6),
        )
        dyn = AttitudeDynamics(
            robot, fd, R0, rng.normal(size=3), q, u0, qd, qdd, alpha_b, w_b, control, speeds
        )
        got = dyn.torque_for(torque, force)
        expected, u0dot, taum = ref.torque_for(dyn, torque, force)
        assert np.abs(got - expected).max() <= 1e-12 * np.abs(expected).max()
        assert np.abs(dyn.u0dot - u0dot).max() <= 1e-12 * np.abs(u0dot).max()
        assert np.abs(dyn.taum - taum).max() <= 1e-12 * np.abs(taum).max()


def test_the_per_tick_checks_are_numpys():
    from spart_ros.native import compiled

    rng = np.random.default_rng(38)
    for _ in range(300):
        n = int(rng.integers(1, 9))
        reference, measured = rng.normal(size=n), rng.normal(size=n)
        tol = np.where(rng.uniform(size=n) < 0.3, 0.0, rng.uniform(0, 2, n))
        over = (tol > 0) & (np.abs(reference - measured) > tol)
        expected = int(np.flatnonzero(over)[0]) if over.any() else -1
        assert compiled.first_violation(tol, reference, measured) == expected
        limit = np.where(tol > 0, tol, np.inf)
        e = np.abs(reference - measured)
        expected = int(np.argmax(e - limit)) if (e > limit).any() else -1
        assert compiled.largest_excess(reference, measured, limit) == expected
        q, last_q = rng.normal(size=n), rng.normal(size=n)
        qd, last_qd = rng.normal(size=n), rng.normal(size=n)
        dt, jump = float(rng.uniform(0, 2)), float(rng.uniform(0, 1.5))
        dq = q - last_q
        beyond = np.maximum(np.minimum(qd, last_qd) * dt - dq, dq - np.maximum(qd, last_qd) * dt)
        beyond -= jump
        expected = -1
        if np.abs(dq).max() > jump and (beyond > 0).any():
            expected = int(np.argmax(beyond))
        assert compiled.jump_excess(q, last_q, qd, last_qd, dt, jump) == expected
    assert compiled.first_violation(np.ones(3), np.ones(2), np.ones(3)) == -2


def test_base_frames_convert_as_the_core_does():
    from spart_ros.control.law import BaseFrames
    from spart_ros.core import base_state as bs

    text = open(SC_3DOF).read()
    # the base link's <inertial> moved and turned: a CoM frame that is not the link frame
    start = text.index('<inertial>', text.index('<link name="Spacecraft"'))
    origin = text.index('<origin', start)
    end = text.index('/>', origin)
    text = text[:origin] + '<origin xyz="0.1 -0.2 0.05" rpy="0.3 -0.2 0.5"' + text[end:]
    robot = _robot(text)
    assert np.abs(np.asarray(robot.base_link.T)[:3, 3]).max() > 0.05
    frames = BaseFrames(robot)
    rng = np.random.default_rng(39)

    class Base:
        pass

    for _ in range(10):
        base = Base()
        base.R_b = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        base.R_b *= np.sign(np.linalg.det(base.R_b))
        base.p_b, base.v_b, base.w_b = (rng.normal(size=3) for _ in range(3))
        a_b, alpha_b, tau0 = rng.normal(size=3), rng.normal(size=3), rng.normal(size=6)
        expected = bs.base_acceleration_from_link_frame(robot, base.R_b, base.w_b, a_b, alpha_b)
        assert np.abs(frames.base_acceleration(base, a_b, alpha_b) - expected).max() < 1e-14
        R0, _, _ = frames.floating(base)
        for got, want in zip(
            frames.link_wrench(base, tau0),
            bs.base_generalized_force_to_link_frame(robot, R0, tau0),
        ):
            assert np.abs(got - want).max() < 1e-14
    assert math.isfinite(float(frames.p_bc[0]))


def test_the_quintic_sample_is_numpys():
    from spart_ros.native import compiled

    rng = np.random.default_rng(40)
    c = rng.normal(size=(3, 6, 7))
    p, v, a = np.empty(7), np.empty(7), np.empty(7)
    for x in rng.uniform(0, 1.5, 20):
        compiled.quintic_sample(c, 1, float(x), p, v, a)
        powers = x ** np.arange(6)
        for got, want in (
            (p, powers @ c[1]),
            (v, (np.arange(1, 6) * powers[:5]) @ c[1, 1:]),
            (a, (np.array([2.0, 6.0, 12.0, 20.0]) * powers[:4]) @ c[1, 2:]),
        ):
            assert np.abs(got - want).max() <= 1e-14 * (1 + np.abs(want).max())


def test_the_free_flying_base_law_is_numpys():
    """The base PD law and its u0dot: small, general and near-pi rotations from the target."""
    from spart_ros.control.end_effector import rotation_vector
    from spart_ros.control.law import BaseFrames
    from spart_ros.core.rigid_motion import rotation_from_vector
    from spart_ros.native import compiled

    robot = _robot(SC_3DOF)
    frames = BaseFrames(robot)
    frames.R_bc = np.ascontiguousarray(rotation_from_vector([0.2, -0.1, 0.3]))
    frames.R_cb = np.ascontiguousarray(frames.R_bc.T)
    frames.p_bc = np.array([0.1, -0.2, 0.05])
    x, y, z = frames.p_bc
    frames.minus_p_cross = np.array([[0.0, z, -y], [-z, 0.0, x], [y, -x, 0.0]])
    rng = np.random.default_rng(41)
    gains = np.array([0.05, 0.4, 0.5, 1.5])

    class Base:
        pass

    for angle in (1e-8, 0.3, 2.0, np.pi - 1e-7, np.pi):
        base = Base()
        base.R_b = rotation_from_vector(rng.normal(size=3))
        base.p_b, base.v_b, base.w_b = (rng.normal(size=3) for _ in range(3))
        axis = rng.normal(size=3)
        R_d = base.R_b @ rotation_from_vector(angle * axis / np.linalg.norm(axis))
        p_d = rng.normal(size=3)
        a_b, alpha_b, u0dot = np.empty(3), np.empty(3), np.empty(6)
        state = (base.R_b, base.p_b, base.v_b, base.w_b, R_d, p_d, gains)
        compiled.free_flying_base(*state, frames.R_bc, frames.p_bc, a_b, alpha_b, u0dot)
        kp_p, kd_p, kp_r, kd_r = gains
        want_alpha = kp_r * rotation_vector(base.R_b.T @ R_d) - kd_r * base.w_b
        want_a = kp_p * (base.R_b.T @ (p_d - base.p_b)) - kd_p * base.v_b
        want_u0dot = frames.base_acceleration(base, want_a, want_alpha)
        assert np.abs(alpha_b - want_alpha).max() < 1e-13, (angle, alpha_b, want_alpha)
        assert np.abs(a_b - want_a).max() < 1e-13
        assert np.abs(u0dot - want_u0dot).max() < 1e-13


def test_the_pd_acceleration_is_numpys():
    """The effort laws' PD joint acceleration (no integral) and its errors, as numpy's."""
    from spart_ros.native import compiled

    rng = np.random.default_rng(42)
    n = 7
    q, qd, p, v, a = (rng.normal(size=n) for _ in range(5))
    kp, kd = rng.uniform(0, 400, n), rng.uniform(0, 40, n)
    e, ev, qdd = np.empty(n), np.empty(n), np.empty(n)
    assert compiled.pd_acceleration(q, qd, p, v, a, kp, kd, e, ev, qdd) == 0
    want = kp * (p - q) + a + (v - qd) * kd
    for got, expect in ((e, p - q), (ev, (v - qd) * kd), (qdd, want)):
        np.testing.assert_allclose(got, expect, rtol=1e-15, atol=1e-15 * np.abs(expect).max())
    assert compiled.pd_acceleration(q[:3], qd, p, v, a, kp, kd, e, ev, qdd) == -1  # lengths
