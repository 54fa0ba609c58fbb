"""
Mimic joints: the coordinate map (core/mimic.py) and the fast path in independent coordinates.

Core/fast/mimic.py), checked against the full-coordinate fast path (the projection q_full = G q +
o, tau = G' tau_full), round trips (FD then ID), finite differences, and Pinocchio's mimic model
(also in test_urdf_corpus.py, for the Panda.
"""

import os
import warnings

from core_helpers import load_robot, random_state, TEST_DIR
import numpy as np
from pinocchio_oracle import PinocchioOracle
import pytest
import spart_ros.core as core
from spart_ros.core import RobotBuilder
from spart_ros.core.errors import InputError, MimicJointWarning, SingularModelError
from spart_ros.core.fast import FastDynamics
from spart_ros.core.fast.mimic import fast_dynamics, MimicFastDynamics
from spart_ros.core.model import homogeneous
from spart_ros.core.urdf import robot_from_urdf

GRIPPER = os.path.join(TEST_DIR, 'data', 'urdf', 'loading', 'gripper_mimic.urdf')
GRAVITY = np.array([0.1, 0.2, -9.81])
TOL = 1e-11


def load(path):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', MimicJointWarning)
        warnings.simplefilter('ignore', UserWarning)
        return robot_from_urdf(path)[0]


def chain_robot(massless_follower=False):
    """
    Return base -a-> l1 -f1-> l2 -f2-> l3.

    f1 = 2 a + 0.3, f2 = -0.5 f1 + 0.1: a chain) plus an independent prismatic joint p; f2's link
    massless when asked (its own column of H is then zero, the constrained H is not.
    """
    b = RobotBuilder('chain')
    rng = np.random.default_rng(4)

    def box(m):
        return np.diag(rng.uniform(0.5, 1.0, 3)) * m * 0.1

    b.add_link('base', 5.0, box(5.0))
    for name, m in (
        ('l1', 1.0),
        ('l2', 0.7),
        ('l3', 0.0 if massless_follower else 0.4),
        ('l4', 0.3),
    ):
        b.add_link(name, m, box(m), com=homogeneous(p=rng.uniform(-0.1, 0.1, 3)))
    b.add_joint('a', 'revolute', 'base', 'l1', origin=homogeneous(p=[0, 0, 0.2]), axis=[0, 0, 1])
    b.add_joint(
        'f1',
        'revolute',
        'l1',
        'l2',
        origin=homogeneous(p=[0.3, 0, 0]),
        axis=[0, 1, 0],
        mimic=('a', 2, 0.3),
    )
    b.add_joint(
        'f2',
        'revolute',
        'l2',
        'l3',
        origin=homogeneous(p=[0.2, 0, 0]),
        axis=[1, 0, 0],
        mimic=('f1', -0.5, 0.1),
    )
    b.add_joint('p', 'prismatic', 'base', 'l4', origin=homogeneous(p=[0, 0.2, 0]), axis=[1, 0, 0])
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', MimicJointWarning)
        return b.build()


def independent_state(fd, seed):
    rng = np.random.default_rng(seed)
    n = fd.n_q
    q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    return {
        'R0': q * np.sign(np.linalg.det(q)),
        'r0': rng.normal(size=3),
        'qm': rng.uniform(-1, 1, n),
        'u0': rng.normal(size=6),
        'um': rng.normal(size=n),
        'u0dot': rng.normal(size=6),
        'umdot': rng.normal(size=n),
        'tau0': rng.normal(size=6),
        'taum': rng.normal(size=n),
    }


# --- the coordinate map --------------------------------------------------------------------
def test_coordinates_of_the_gripper():
    c = load(GRIPPER).coordinates
    assert c.names == ['shoulder', 'wrist', 'finger_left'] and c.n == 3 and c.n_full == 5
    assert c.full_names == ['shoulder', 'wrist', 'finger_left', 'finger_right', 'knuckle']
    G = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [0, 0, -1], [0, -0.5, 0]])
    np.testing.assert_array_equal(c.G, G)
    np.testing.assert_array_equal(c.offset, [0, 0, 0, 0, 0.1])
    q = np.array([0.3, -0.4, 0.02])
    np.testing.assert_allclose(c.positions(q), [0.3, -0.4, 0.02, -0.02, 0.3])
    np.testing.assert_allclose(c.velocities(q), G @ q)
    np.testing.assert_allclose(c.accelerations(q), G @ q)
    # a follower's effort acts on its leader times the multiplier (an ideal transmission)
    np.testing.assert_allclose(c.forces([1, 2, 3, 4, 5]), [1, 2 - 2.5, 3 - 4])
    np.testing.assert_allclose(c.independent(c.positions(q)), q)
    np.testing.assert_allclose(c.constraint_error(c.positions(q)), 0, atol=1e-15)
    assert c.constraint_error([0.3, -0.4, 0.02, 0.0, 0.3])[3] == pytest.approx(0.02)
    with pytest.raises(InputError, match='q'):
        c.positions([1, 2])
    assert not c.is_identity


def test_coordinates_are_the_identity_without_mimic_joints():
    robot = load_robot('kuka_iiwa')
    c = robot.coordinates
    assert c.is_identity and c.names == robot.q_names
    np.testing.assert_array_equal(c.G, np.eye(robot.n_q))
    assert type(fast_dynamics(robot)) is FastDynamics


def test_chains_compose():
    robot = chain_robot()
    assert robot.mimic['f2'][:2] == ('a', -1.0)  # -0.5 (2 a + 0.3) + 0.1
    assert robot.mimic['f2'].offset == pytest.approx(-0.05)
    q = np.array([0.4, 0.05])
    np.testing.assert_allclose(robot.coordinates.positions(q), [0.4, 1.1, -0.45, 0.05])


# --- the fast path in independent coordinates ----------------------------------------------
@pytest.mark.parametrize('make', [lambda: load(GRIPPER), chain_robot], ids=['gripper', 'chain'])
@pytest.mark.parametrize('floating', [True, False])
def test_projection_of_the_full_model(make, floating):
    """H, ID, bias, gravity, floating ID, Jacobians: the full-coordinate results projected."""
    robot = make()
    fd, full = fast_dynamics(robot, gravity=GRAVITY), FastDynamics(robot, gravity=GRAVITY)
    assert isinstance(fd, MimicFastDynamics)
    c = robot.coordinates
    T = c.generalized(floating=True)
    for seed in range(3):
        s = independent_state(fd, seed)
        q, u, udot = c.positions(s['qm']), c.velocities(s['um']), c.accelerations(s['umdot'])
        H = np.array(fd.mass_matrix(s['R0'], s['r0'], s['qm']))
        np.testing.assert_allclose(H, T.T @ full.mass_matrix(s['R0'], s['r0'], q) @ T, atol=TOL)
        tau0, taum = fd.inverse_dynamics(
            s['R0'], s['r0'], s['qm'], s['u0'], s['um'], s['u0dot'], s['umdot'], floating=floating
        )
        tau0, taum = tau0.copy(), taum.copy()
        f0, fm = full.inverse_dynamics(
            s['R0'], s['r0'], q, s['u0'], u, s['u0dot'], udot, floating=floating
        )
        np.testing.assert_allclose(tau0, f0, atol=TOL)
        np.testing.assert_allclose(taum, c.G.T @ fm, atol=TOL)
        b0, bm = fd.bias_forces(s['R0'], s['r0'], s['qm'], s['u0'], s['um'], floating=floating)
        b0, bm = b0.copy(), bm.copy()
        f0, fm = full.bias_forces(s['R0'], s['r0'], q, s['u0'], u, floating=floating)
        np.testing.assert_allclose(bm, c.G.T @ fm, atol=TOL)
        g0, gm = fd.gravity_forces(s['R0'], s['r0'], s['qm'])
        np.testing.assert_allclose(
            gm, c.G.T @ full.gravity_forces(s['R0'], s['r0'], q)[1], atol=TOL
        )
        link = robot.n_links_joints
        J, Jb = fd.jacobian(
            link, s['R0'], s['r0'], s['qm'], s['u0'], s['um'], offset=[0.01, 0.02, 0.03]
        )
        J, Jb = J.copy(), Jb.copy()
        Jf, Jbf = full.jacobian(link, s['R0'], s['r0'], q, s['u0'], u, offset=[0.01, 0.02, 0.03])
        np.testing.assert_allclose(J, Jf @ T, atol=TOL)
        np.testing.assert_allclose(Jb, Jbf, atol=TOL)
        if floating:
            taum_f, u0dot_f = fd.floating_inverse_dynamics(
                s['R0'], s['r0'], s['qm'], s['u0'], s['um'], s['umdot']
            )
            taum_f, u0dot_f = taum_f.copy(), u0dot_f.copy()
            tf, uf = full.floating_inverse_dynamics(s['R0'], s['r0'], q, s['u0'], u, udot)
            np.testing.assert_allclose(u0dot_f, uf, atol=TOL)
            np.testing.assert_allclose(taum_f, c.G.T @ tf, atol=TOL)


@pytest.mark.parametrize(
    'make',
    [lambda: load(GRIPPER), chain_robot, lambda: chain_robot(True)],
    ids=['gripper', 'chain', 'chain_massless_follower'],
)
@pytest.mark.parametrize('floating', [True, False])
def test_forward_then_inverse_dynamics_round_trip(make, floating):
    """
    FD in independent coordinates.

    The full RNEA at the projected accelerations, gives back the applied forces (G' tau_full =
    tau): FD solves the constrained equations.
    """
    robot = make()
    fd = fast_dynamics(robot, gravity=GRAVITY)
    for seed in range(3):
        s = independent_state(fd, seed)
        u0dot, umdot = fd.forward_dynamics(
            s['R0'], s['r0'], s['qm'], s['u0'], s['um'], s['tau0'], s['taum'], floating=floating
        )
        u0dot, umdot = u0dot.copy(), umdot.copy()
        if not floating:
            assert not u0dot.any()
        tau0, taum = fd.inverse_dynamics(
            s['R0'], s['r0'], s['qm'], s['u0'], s['um'], u0dot, umdot, floating=floating
        )
        np.testing.assert_allclose(taum, s['taum'], atol=1e-10)
        if floating:
            np.testing.assert_allclose(tau0, s['tau0'], atol=1e-10)
            # and the unactuated-base ID finds the same base acceleration for tau0 = 0
            u0dot0, umdot0 = fd.forward_dynamics(
                s['R0'], s['r0'], s['qm'], s['u0'], s['um'], np.zeros(6), s['taum']
            )
            u0dot0, umdot0 = u0dot0.copy(), umdot0.copy()
            taum_f, u0dot_f = fd.floating_inverse_dynamics(
                s['R0'], s['r0'], s['qm'], s['u0'], s['um'], umdot0
            )
            np.testing.assert_allclose(u0dot_f, u0dot0, atol=1e-10)
            np.testing.assert_allclose(taum_f, s['taum'], atol=1e-10)


def test_massless_follower_only_the_full_model_is_singular():
    robot = chain_robot(massless_follower=True)
    s = random_state(robot, 0)
    with pytest.raises(SingularModelError, match="'f2'"):
        FastDynamics(robot).forward_dynamics(
            s.R0, s.r0, s.qm, s.u0, s.um, s.tau0, s.taum, floating=False
        )
    assert core.singularity(robot, floating=False, independent=True) == ''


def test_jacobian_columns_are_position_derivatives_in_independent_coordinates():
    """Central differences of a link CoM position along each independent coordinate."""
    robot = load(GRIPPER)
    fd = fast_dynamics(robot)
    s = independent_state(fd, 7)
    link = robot.link_index('knuckle_link')
    J = np.array(fd.jacobian(link, s['R0'], s['r0'], s['qm'], bias=False)[0])
    h = 1e-6
    for k in range(fd.n_q):
        dq = np.zeros(fd.n_q)
        dq[k] = h
        plus = fd.twists(s['R0'], s['r0'], s['qm'] + dq, s['u0'], s['um'])[0][:, link].copy()
        minus = fd.twists(s['R0'], s['r0'], s['qm'] - dq, s['u0'], s['um'])[0][:, link].copy()
        np.testing.assert_allclose(J[3:6, 6 + k], (plus - minus) / (2 * h), atol=1e-8)


def test_independent_coordinates_equal_pinocchio_mimic_model_with_wrenches_free_floating():
    """Pinocchio's mimic joints (reduced model, free flyer): H, ID, FD to 1e-10."""
    robot = load(GRIPPER)
    c = robot.coordinates
    fd = fast_dynamics(robot, gravity=GRAVITY)
    oracle = PinocchioOracle(GRIPPER, c.names, floating=True, mimic=True)
    for seed in range(3):
        s = independent_state(fd, seed)
        H = fd.mass_matrix(s['R0'], s['r0'], s['qm'])
        np.testing.assert_allclose(H, oracle.mass_matrix(s['R0'], s['r0'], s['qm']), atol=1e-10)
        tau = np.concatenate(
            fd.inverse_dynamics(
                s['R0'], s['r0'], s['qm'], s['u0'], s['um'], s['u0dot'], s['umdot']
            )
        )
        np.testing.assert_allclose(
            tau,
            oracle.inverse_dynamics(
                s['R0'],
                s['r0'],
                s['qm'],
                s['u0'],
                s['um'],
                s['u0dot'],
                s['umdot'],
                gravity=GRAVITY,
            ),
            atol=1e-10,
        )
        udot = np.concatenate(
            fd.forward_dynamics(s['R0'], s['r0'], s['qm'], s['u0'], s['um'], s['tau0'], s['taum'])
        )
        np.testing.assert_allclose(
            udot,
            oracle.forward_dynamics(
                s['R0'],
                s['r0'],
                s['qm'],
                s['u0'],
                s['um'],
                np.concatenate([s['tau0'], s['taum']]),
                gravity=GRAVITY,
            ),
            atol=1e-10,
        )


def test_input_sizes_are_independent_coordinates():
    robot = load(GRIPPER)
    fd = fast_dynamics(robot)
    s = independent_state(fd, 0)
    with pytest.raises(InputError, match='qm: expected length 3'):
        fd.mass_matrix(s['R0'], s['r0'], np.zeros(5))
    with pytest.raises(InputError, match='umdot'):
        fd.inverse_dynamics(s['R0'], s['r0'], s['qm'], s['u0'], s['um'], s['u0dot'], np.zeros(2))
    fd.gravity = [0, 0, -1]
    np.testing.assert_array_equal(fd.gravity, [0, 0, -1])
