"""
Space-robot motion control in the core.

Momentum, base reaction, generalized Jacobian, reaction null space, manipulability
(spart_ros.core.momentum, generalized_jacobian, reaction_null_space, manipulability) and their
fast-path twin (spart_ros.control.free_floating.FreeFloatingKinematics).

Independent checks: momentum summed body by body from the SPART chain (Kinematics, Velocities,
I_I), and from body twists obtained by finite differences of Kinematics alone; conservation
along forward dynamics integrated with RK4; the generalized Jacobian against central finite
differences of Kinematics along the motion the base reaction gives;
the fixed-base limit of a base whose mass grows; wrench sums for the momentum rate.
"""

import os

from core_helpers import assert_close, load_robot, random_state, rel_err
import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from spart_ros import core, spart
from spart_ros.control.free_floating import FreeFloatingKinematics
from spart_ros.core.errors import InputError, SingularModelError
from spart_ros.core.fast import FastDynamics
from spart_ros.core.model import BaseLink, Robot

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'examples')
PLANAR_URDF = os.path.join(EXAMPLES, 'planar_4link_spacecraft.urdf')
# branched below the base and two arms; 7-DoF arm; SPART's own 3-DoF spacecraft; a prismatic chain
FLOATING = ('branched_two_arm_spacecraft', 'arm7_floating', 'SC_3DoF', 'prismatic_chain')


def robot_named(name):
    if name == 'planar_4link_spacecraft':
        return spart.urdf2robot(PLANAR_URDF)[0]
    return load_robot(name)


def leaf_links(robot):
    """Links with no child (every arm's end), by id."""
    parents = {int(p) for p in robot.parent}
    return [i for i in range(1, robot.n_links_joints + 1) if i not in parents]


def chain(robot, R0, r0, qm, u0=None, um=None):
    """
    Return the SPART chain at a state.

    Kinematics, H0, H0m, twists (when velocities are given).
    """
    RJ, RL, rJ, rL, e, g = spart.Kinematics(R0, r0, qm, robot)
    Bij, Bi0, P0, pm = spart.DiffKinematics(R0, r0, rL, e, g, robot)
    I0, Im = spart.I_I(R0, RL, robot)
    M0t, Mmt = spart.MCB(I0, Im, Bij, Bi0, robot)
    H0, H0m, _ = spart.GIM(M0t, Mmt, Bij, Bi0, P0, pm, robot)
    out = {
        'RL': RL,
        'rL': rL,
        'P0': P0,
        'pm': pm,
        'I0': I0,
        'Im': Im,
        'H0': H0,
        'H0m': H0m,
        'Bij': Bij,
        'Bi0': Bi0,
    }
    if u0 is not None:
        out['t0'], out['tL'] = spart.Velocities(Bij, Bi0, P0, pm, u0, um, robot)
    return out


def momentum_by_bodies(robot, R0, r0, qm, u0, um, point):
    """[L about point; p], summed over the bodies from their twists (independent of H)."""
    c = chain(robot, R0, r0, qm, u0, um)
    m0 = robot.base_link.mass
    p = m0 * c['t0'][3:6]
    L = c['I0'] @ c['t0'][0:3] + m0 * np.cross(r0 - point, c['t0'][3:6])
    for i, link in enumerate(robot.links):
        v = c['tL'][3:6, i]
        p = p + link.mass * v
        L = L + c['Im'][:, :, i] @ c['tL'][0:3, i] + link.mass * np.cross(c['rL'][:, i] - point, v)
    return np.concatenate([L, p])


def point_pose(robot, R0, r0, qm, link, offset):
    """(R, p) of the link CoM frame and the point link CoM + R offset, from spart.Kinematics."""
    if link == 0:
        return R0, r0 + R0 @ offset
    RJ, RL, rJ, rL, e, g = spart.Kinematics(R0, r0, qm, robot)
    R = RL[:, :, link - 1]
    return R, rL[:, link - 1] + R @ offset


def advance(R0, r0, qm, u0, um, h):
    """
    Return the state after time h at constant (u0, um).

    R0 exp(h [w0]x) (w0 in the base frame).
    """
    return R0 @ Rotation.from_rotvec(h * u0[0:3]).as_matrix(), r0 + h * u0[3:6], qm + h * um


def finite_difference_twist(robot, R0, r0, qm, u0, um, link, offset, h=1e-5):
    """[angular velocity of the link; velocity of the point], central differences of Kinematics."""
    Rp, pp = point_pose(robot, *advance(R0, r0, qm, u0, um, h), link, offset)
    Rm, pm_ = point_pose(robot, *advance(R0, r0, qm, u0, um, -h), link, offset)
    w = Rotation.from_matrix(Rp @ Rm.T).as_rotvec() / (2 * h)
    return np.concatenate([w, (pp - pm_) / (2 * h)])


def scaled_base(robot, k):
    """Return the same robot with the base mass and inertia times k."""
    b = robot.base_link
    return Robot(
        robot.name,
        BaseLink(b.name, b.mass * k, np.asarray(b.inertia) * k, b.T),
        robot.links,
        robot.joints,
    )


# --- momentum ---------------------------------------------------------------------------------
@pytest.mark.parametrize('name', FLOATING + ('planar_4link_spacecraft',))
def test_momentum_is_the_sum_over_bodies(name):
    """
    h0 = H0 u0 + H0m um is P0' [L about the base CoM; p].

    momentum_about any point, the origin and the CoM equal the body-by-body sums;
    base_momentum_from inverts momentum_about.
    """
    robot = robot_named(name)
    for seed in range(3):
        s = random_state(robot, seed)
        c = chain(robot, s.R0, s.r0, s.qm)
        h0 = core.base_momentum(c['H0'], c['H0m'], s.u0, s.um)
        about_base = momentum_by_bodies(robot, s.R0, s.r0, s.qm, s.u0, s.um, s.r0)
        assert_close(h0, np.concatenate([s.R0.T @ about_base[0:3], about_base[3:6]]), 1e-12, 'h0')
        com = spart.Center_of_Mass(s.r0, c['rL'], robot)
        assert_close(core.system_center_of_mass(c['H0'], s.R0, s.r0), com, 1e-12, 'CoM from H0')
        for point in (None, com, np.array([0.3, -2.0, 1.1])):
            expected = momentum_by_bodies(
                robot, s.R0, s.r0, s.qm, s.u0, s.um, np.zeros(3) if point is None else point
            )
            M = core.momentum_about(h0, s.R0, s.r0, point)
            assert_close(M, expected, 1e-12, f'momentum about {point}')
            assert_close(core.base_momentum_from(M, s.R0, s.r0, point), h0, 1e-12, 'round trip')


@pytest.mark.parametrize('name', ('branched_two_arm_spacecraft', 'arm7_floating'))
def test_momentum_against_finite_difference_body_twists(name):
    """
    Momentum about the origin and the system CoM.

    FreeFloatingKinematics, core.momentum_about) against a sum over bodies built from Kinematics
    only: each body's twist by central finite differences of its CoM frame along the motion (u0,
    um), inertias rotated here from the model's CoM-frame tensors, the CoM from the masses (no
    Velocities, I_I or H involved.
    """
    robot = load_robot(name)
    s = random_state(robot, 8)
    bodies = [robot.base_link] + list(robot.links)
    R, r, twists = [], [], []
    RJ, RL, rJ, rL, e, g = spart.Kinematics(s.R0, s.r0, s.qm, robot)
    for i in range(robot.n_links_joints + 1):
        R.append(s.R0 if i == 0 else RL[:, :, i - 1])
        r.append(s.r0 if i == 0 else rL[:, i - 1])
        twists.append(finite_difference_twist(robot, s.R0, s.r0, s.qm, s.u0, s.um, i, np.zeros(3)))
    masses = np.array([float(b.mass) for b in bodies])
    com = sum(m * p for m, p in zip(masses, r)) / masses.sum()

    def by_bodies(point):
        L, p = np.zeros(3), np.zeros(3)
        for b, Ri, ri, t in zip(bodies, R, r, twists):
            inertia_w = Ri @ np.asarray(b.inertia, dtype=float) @ Ri.T
            L += inertia_w @ t[0:3] + float(b.mass) * np.cross(ri - point, t[3:6])
            p += float(b.mass) * t[3:6]
        return np.concatenate([L, p])

    ff = FreeFloatingKinematics(robot, 0).update(s.R0, s.r0, s.qm, s.u0, s.um)
    assert_close(ff.center_of_mass, com, 1e-12, 'CoM')
    for about, point in (('origin', np.zeros(3)), ('com', com)):
        expected = by_bodies(point)
        assert np.abs(expected).max() > 1.0, 'a state that carries momentum'
        assert_close(ff.momentum(about), expected, 1e-8, f'fast momentum about {about}')
        assert_close(
            core.momentum_about(ff.h0, s.R0, s.r0, point),
            expected,
            1e-8,
            f'core momentum about {about}',
        )


def _rk4(f, x, dt):
    k1 = f(x)
    k2 = f([a + dt / 2 * b for a, b in zip(x, k1)])
    k3 = f([a + dt / 2 * b for a, b in zip(x, k2)])
    k4 = f([a + dt * b for a, b in zip(x, k3)])
    return [
        a + dt / 6 * (b1 + 2 * b2 + 2 * b3 + b4) for a, b1, b2, b3, b4 in zip(x, k1, k2, k3, k4)
    ]


def _free_floating_rhs(fd, robot):
    """
    RK4 right-hand side of the free-floating robot (no loads) on FastDynamics.forward_dynamics.

    R0 integrated as R0dot = R0 [w0]x (re-orthonormalized after each step).
    """
    zero6, zeroq = np.zeros(6), np.zeros(robot.n_q)

    def rhs(x):
        R0, r0, qm, u0, um = x
        u0dot, umdot = fd.forward_dynamics(R0, r0, qm, u0, um, zero6, zeroq)
        return [
            R0 @ core.skew_symmetric(u0[0:3]),
            u0[3:6].copy(),
            um.copy(),
            u0dot.copy(),
            umdot.copy(),
        ]

    return rhs


def _orthonormalize(R):
    U, _, Vt = np.linalg.svd(R)
    return U @ Vt


@pytest.mark.parametrize('name', FLOATING)
def test_momentum_is_conserved_along_forward_dynamics(name):
    """
    Momentum is conserved along FastDynamics.forward_dynamics.

    RK4 (dt = 5 ms, 1 s) of FastDynamics.forward_dynamics with no load from a state with non-zero
    momentum: [L; p] about the origin and about the system CoM (FreeFloatingKinematics and the core
    functions) stay at their initial values to 1e-9 relative (RK4's own error on these nonlinear
    invariants is ~1e-12 at this step), while h0 (about the moving base CoM) changes, and the base
    reaction from the conserved momentum gives the integrated u0.
    """
    robot = load_robot(name)
    s = random_state(robot, 11, scale=0.5)
    fd = FastDynamics(robot)
    ff = FreeFloatingKinematics(robot, leaf_links(robot)[0], dynamics=fd)
    rhs = _free_floating_rhs(fd, robot)
    x = [s.R0, s.r0, s.qm, s.u0, s.um]
    ff.update(*x)
    start = {about: ff.momentum(about).copy() for about in ('origin', 'com')}
    h0_start = ff.h0.copy()
    for _ in range(200):
        x = _rk4(rhs, x, 0.005)
        x[0] = _orthonormalize(x[0])
    R0, r0, qm, u0, um = x
    assert np.abs(qm - s.qm).max() > 0.05, 'the joints must have moved'
    ff.update(R0, r0, qm, u0, um)
    for about in ('origin', 'com'):
        M = ff.momentum(about)
        assert rel_err(M, start[about]) < 1e-9, (
            f'momentum about {about} changed: {M} vs {start[about]}'
        )
    assert rel_err(ff.h0, h0_start) > 1e-4, (
        'h0 (about the base CoM) is not an invariant: the test must see it move'
    )
    # base reaction from the conserved momentum about the origin reproduces the integrated u0
    c = chain(robot, R0, r0, qm)
    h0 = core.base_momentum_from(start['origin'], R0, r0)
    assert_close(
        core.base_reaction(c['H0'], c['H0m'], um, h0), u0, 1e-9, 'u0 from momentum conservation'
    )
    assert_close(ff.base_reaction(um, h0), u0, 1e-9, 'fast-path u0 from momentum conservation')


@pytest.mark.parametrize('name', FLOATING)
def test_momentum_rate_is_the_external_wrench(name):
    """
    Under random wrenches (no gravity).

    The momentum rate from the base rows of ID at the FD accelerations equals the resultant of the
    wrenches about the origin, a point and the CoM.
    """
    robot = load_robot(name)
    s = random_state(robot, 5)
    fd = FastDynamics(robot)
    u0dot, umdot = (
        a.copy()
        for a in fd.forward_dynamics(
            s.R0, s.r0, s.qm, s.u0, s.um, np.zeros(6), np.zeros(robot.n_q), s.wF0, s.wFm
        )
    )
    tau0 = fd.inverse_dynamics(s.R0, s.r0, s.qm, s.u0, s.um, u0dot, umdot)[0].copy()
    c = chain(robot, s.R0, s.r0, s.qm)
    com = spart.Center_of_Mass(s.r0, c['rL'], robot)
    for point in (np.zeros(3), np.array([1.0, -0.5, 2.0]), com):
        force = s.wF0[3:6] + s.wFm[3:6].sum(axis=1)
        torque = s.wF0[0:3] + np.cross(s.r0 - point, s.wF0[3:6])
        for i in range(robot.n_links_joints):
            torque = torque + s.wFm[0:3, i] + np.cross(c['rL'][:, i] - point, s.wFm[3:6, i])
        assert_close(
            core.momentum_rate_about(tau0, s.R0, s.r0, point),
            np.concatenate([torque, force]),
            1e-10,
            f'momentum rate about {point}',
        )


# --- base reaction and generalized Jacobian ------------------------------------------------------
@pytest.mark.parametrize('name', FLOATING + ('planar_4link_spacecraft',))
def test_generalized_jacobian_matches_finite_differences(name):
    """
    For every link (arm ends, middle links, the base), at a point off its CoM.

    J* um + drift equals the twist obtained by finite differences of Kinematics along the motion
    (base from the base reaction, joints um), for zero and non-zero momentum; and equals J0 u0 + Jm
    um.
    """
    robot = robot_named(name)
    fd = FastDynamics(robot)
    rng = np.random.default_rng(4)
    for seed in range(2):
        s = random_state(robot, seed)
        c = chain(robot, s.R0, s.r0, s.qm)
        for h0 in (np.zeros(6), rng.standard_normal(6) * 5):
            u0 = core.base_reaction(c['H0'], c['H0m'], s.um, h0)
            assert_close(
                core.base_momentum(c['H0'], c['H0m'], u0, s.um),
                h0,
                1e-12,
                'base reaction conserves h0',
            )
            for link in range(robot.n_links_joints + 1):
                offset = rng.standard_normal(3) * 0.2
                J0, Jm = core.point_jacobian(
                    link, offset, s.R0, s.r0, c['RL'], c['rL'], c['P0'], c['pm'], robot
                )
                Jstar = core.generalized_jacobian(J0, Jm, c['H0'], c['H0m'])
                drift = core.generalized_jacobian_drift(J0, c['H0'], h0)
                twist = Jstar @ s.um + drift
                assert_close(twist, J0 @ u0 + Jm @ s.um, 1e-12, 'J* um + drift = J0 u0 + Jm um')
                fdiff = finite_difference_twist(robot, s.R0, s.r0, s.qm, u0, s.um, link, offset)
                assert_close(
                    twist, fdiff, 1e-7, f'{name} link {link}: J* um + drift vs finite differences'
                )
                ff = FreeFloatingKinematics(robot, link, offset, fd)
                ff.update(s.R0, s.r0, s.qm, u0, s.um)
                assert_close(ff.Jstar, Jstar, 1e-12, 'fast J*')
                assert_close(ff.drift, drift, 1e-11, 'fast drift')
                assert_close(ff.h0, h0, 1e-11, 'fast h0')
                assert_close(
                    ff.free_base_velocity + ff.reaction @ s.um, u0, 1e-11, 'fast base reaction'
                )
                assert_close(ff.base_reaction(s.um, h0), u0, 1e-11, 'fast base_reaction()')
                assert_close(
                    ff.reaction,
                    core.reaction_jacobian(c['H0'], c['H0m']),
                    1e-12,
                    'reaction Jacobian',
                )
                assert_close(
                    ff.generalized_jacobian(s.R0, s.r0, s.qm), Jstar, 1e-12, 'one-shot J*'
                )


@pytest.mark.parametrize('name', FLOATING)
def test_generalized_jacobian_tends_to_the_fixed_base_jacobian(name):
    """
    Base mass and inertia times k.

    |J* - Jm| falls as 1/k (ratio ~1000 from k = 1e3 to 1e6) and is below 1e-4 |Jm| at k = 1e6
    (arm7's base is light: 3.8e-5 there).
    """
    base_robot = load_robot(name)
    s = random_state(base_robot, 2)
    link = leaf_links(base_robot)[-1]
    errors = []
    for k in (1e3, 1e6):
        robot = scaled_base(base_robot, k)
        ff = FreeFloatingKinematics(robot, link).update(s.R0, s.r0, s.qm)
        errors.append(np.abs(ff.Jstar - ff.Jm).max() / np.abs(ff.Jm).max())
    assert errors[1] < 1e-4
    assert 300 < errors[0] / errors[1] < 3000, errors


def test_fast_path_center_of_mass_and_momentum_names():
    robot = load_robot('branched_two_arm_spacecraft')
    s = random_state(robot, 1)
    ff = FreeFloatingKinematics(robot, 'b_ee').update(s.R0, s.r0, s.qm, s.u0, s.um)
    c = chain(robot, s.R0, s.r0, s.qm)
    com = spart.Center_of_Mass(s.r0, c['rL'], robot)
    assert_close(ff.center_of_mass, com, 1e-12, 'CoM')
    assert_close(
        ff.momentum('base'),
        momentum_by_bodies(robot, s.R0, s.r0, s.qm, s.u0, s.um, s.r0),
        1e-12,
        'base',
    )
    point = np.array([0.1, 0.2, 0.3])
    assert_close(
        ff.momentum(point),
        momentum_by_bodies(robot, s.R0, s.r0, s.qm, s.u0, s.um, point),
        1e-12,
        'point',
    )
    with pytest.raises(InputError, match='about'):
        ff.momentum('nowhere')
    ff.update(s.R0, s.r0, s.qm)  # no velocities: a system at rest
    assert not ff.h0.any() and not ff.drift.any()
    # other layouts and lists give the same result (copied into the object's contiguous state)
    Jstar = ff.Jstar.copy()
    ff.update(np.asfortranarray(s.R0), list(s.r0), s.qm[::-1].copy()[::-1])
    assert_close(ff.Jstar, Jstar, 0, 'J* from a Fortran-ordered R0')


# --- reaction null space
# ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    'name,full_dim,attitude_dim',
    [
        ('arm7_floating', 1, 4),
        ('branched_two_arm_spacecraft', 2, 5),
        ('SC_3DoF', 0, 1),
        ('planar_4link_spacecraft', 1, 3),
    ],
)
def test_reaction_null_space_leaves_the_base_at_rest(name, full_dim, attitude_dim):
    """
    Joint velocities in the reaction null space give u0 = 0 (full) or a zero base angular velocity.

    Attitude only) by momentum conservation from rest; the projector is the orthogonal projector
    onto the basis; dimensions n_q - rank (the planar arm couples only through wz, vx, vy;
    SC_3DoF's joints 2 and 3 are parallel, so their motion couples only through one angular
    component and the attitude coupling has rank 2.
    """
    robot = robot_named(name)
    rng = np.random.default_rng(0)
    for seed in range(3):
        s = random_state(robot, seed)
        c = chain(robot, s.R0, s.r0, s.qm)
        for attitude_only, dim in ((False, full_dim), (True, attitude_dim)):
            rns = core.reaction_null_space(c['H0'], c['H0m'], attitude_only=attitude_only)
            assert rns.basis.shape == (robot.n_q, dim)
            assert rns.rank == robot.n_q - dim
            P = rns.projector
            assert_close(P @ P, P, 1e-12, 'idempotent')
            assert_close(P, P.T, 1e-12, 'symmetric')
            assert_close(rns.basis.T @ rns.basis, np.eye(dim), 1e-12, 'orthonormal')
            y = rng.standard_normal(dim)
            for um in (
                rns.basis @ (y / np.linalg.norm(y)) if dim else np.zeros(robot.n_q),
                P @ rng.standard_normal(robot.n_q),
            ):
                u0 = core.base_reaction(c['H0'], c['H0m'], um)
                moved = u0[0:3] if attitude_only else u0
                assert np.abs(moved).max() < 1e-12 * max(1.0, np.abs(c['H0m']).max())
            # an arbitrary joint motion does turn the base: the check above can fail
            assert (
                np.abs(
                    core.base_reaction(c['H0'], c['H0m'], rng.standard_normal(robot.n_q))[0:3]
                ).max()
                > 1e-4
            )


def test_attitude_null_space_is_not_the_kernel_of_the_angular_rows_of_H0m():
    """
    The angular rows of H0m are the coupling about the base CoM.

    Their kernel still turns the base (the base CoM translates and couples back). The attitude-only
    null space does not.
    """
    robot = load_robot('arm7_floating')
    s = random_state(robot, 3)
    c = chain(robot, s.R0, s.r0, s.qm)
    naive = np.linalg.svd(c['H0m'][0:3])[2][3:].T
    assert np.abs(core.base_reaction(c['H0'], c['H0m'], naive[:, 0])[0:3]).max() > 1e-3
    rns = core.reaction_null_space(c['H0'], c['H0m'], attitude_only=True)
    assert np.abs(core.base_reaction(c['H0'], c['H0m'], rns.basis[:, 0])[0:3]).max() < 1e-13


# --- manipulability
# ----------------------------------------------------------------------------------
def test_manipulability_definitions():
    rng = np.random.default_rng(1)
    J = rng.standard_normal((6, 7))
    assert core.manipulability(J) == pytest.approx(np.sqrt(np.linalg.det(J @ J.T)), rel=1e-12)
    Jr = J[[3, 4, 5]]
    assert core.manipulability(J, rows=(3, 4, 5)) == pytest.approx(
        np.sqrt(np.linalg.det(Jr @ Jr.T)), rel=1e-12
    )
    tall = rng.standard_normal((6, 3))
    assert core.manipulability(tall) == pytest.approx(
        np.sqrt(np.linalg.det(tall.T @ tall)), rel=1e-12
    )
    s = np.linalg.svd(J, compute_uv=False)
    assert core.dynamic_singularity_measure(J) == pytest.approx(s[-1] / s[0], rel=1e-12)
    assert core.dynamic_singularity_measure(np.zeros((6, 2))) == 0.0
    for bad in ((6,), (0, 7), (1, 1), 'xy', ()):
        with pytest.raises(InputError, match='rows'):
            core.manipulability(J, rows=bad)


def test_planar_arm_singularities_fixed_and_generalized():
    """
    Stretched planar arm (all joints 0).

    Fixed-base and generalized manipulability of (vx, vy) vanish (a kinematic singularity is also
    one of J*). Bent: both positive, the generalized one smaller (the base recoils: the
    free-floating arm is less dexterous), measure in (0, 1).
    """
    robot = robot_named('planar_4link_spacecraft')
    ff = FreeFloatingKinematics(robot, 'end_effector')
    ff.update(np.eye(3), np.zeros(3), np.zeros(4))
    assert core.manipulability(ff.Jm, (3, 4)) < 1e-12
    assert core.manipulability(ff.Jstar, (3, 4)) < 1e-12
    assert core.dynamic_singularity_measure(ff.Jstar, (3, 4)) < 1e-12
    ff.update(np.eye(3), np.zeros(3), np.array([1.0, -1.4, 1.2, -1.0]))
    fixed, free = core.manipulability(ff.Jm, (3, 4)), core.manipulability(ff.Jstar, (3, 4))
    assert 0.1 < free < fixed
    assert 0 < core.dynamic_singularity_measure(ff.Jstar, (3, 4)) < 1


# --- errors
# ------------------------------------------------------------------------------------------
def test_bad_inputs_name_the_argument():
    robot = load_robot('arm7_floating')
    s = random_state(robot, 0)
    c = chain(robot, s.R0, s.r0, s.qm)
    H0, H0m = c['H0'], c['H0m']
    J0 = np.eye(6)
    with pytest.raises(InputError, match='Jm'):
        core.generalized_jacobian(J0, np.zeros((6, 3)), H0, H0m)
    with pytest.raises(InputError, match='H0m'):
        core.generalized_jacobian(J0, np.zeros((6, 7)), H0, np.zeros(6))
    with pytest.raises(InputError, match='um'):
        core.base_reaction(H0, H0m, np.zeros(3))
    with pytest.raises(InputError, match='h0'):
        core.base_reaction(H0, H0m, np.zeros(7), h0=[np.nan] * 6)
    with pytest.raises(InputError, match='point'):
        core.momentum_about(np.zeros(6), s.R0, s.r0, point=[1, 2])
    with pytest.raises(InputError, match='tol'):
        core.reaction_null_space(H0, H0m, tol=-1)
    with pytest.raises(SingularModelError):
        core.base_reaction(np.zeros((6, 6)), H0m, np.zeros(7))
    with pytest.raises(SingularModelError):
        core.system_center_of_mass(np.zeros((6, 6)), s.R0, s.r0)
    ff = FreeFloatingKinematics(robot, 'arm_tool')
    with pytest.raises(InputError, match='u0'):
        ff.update(s.R0, s.r0, s.qm, np.zeros(5), s.um)
    with pytest.raises(InputError, match='qm'):
        ff.update(s.R0, s.r0, np.zeros(3))
    with pytest.raises(InputError, match='dynamics'):
        FreeFloatingKinematics(robot, 'arm_tool', dynamics=FastDynamics(load_robot('SC_3DoF')))
    with pytest.raises(Exception, match='nope'):
        FreeFloatingKinematics(robot, 'nope')
    # a point mass on a massless base: H0 (the locked system's inertia) has no rotational inertia
    b = core.RobotBuilder('point_on_massless_base')
    b.add_link('base', mass=0.0, inertia=np.zeros((3, 3)))
    b.add_link('ball', mass=1.0, inertia=np.zeros((3, 3)))
    b.add_joint('j', 'revolute', parent='base', child='ball', axis=[0, 0, 1])
    with pytest.raises(SingularModelError, match='H0'):
        FreeFloatingKinematics(b.build(), 'ball')


def test_a_base_inertia_singular_only_to_rounding_is_refused_like_free_floating_kinematics():
    """
    Two point masses on a line: no inertia about the line, so H0 is singular.

    At a generic attitude rounding leaves H0 invertible (cond ~1e16): the core's functions that
    solve with H0 refuse it with SingularModelError, as FreeFloatingKinematics refuses the robot,
    instead of returning an arbitrary spin about the line.
    """
    axis = np.array([0.3, 0.7, -0.2]) / np.linalg.norm([0.3, 0.7, -0.2])
    b = core.RobotBuilder('two_point_masses_on_a_line')
    b.add_link('base', mass=1.0, inertia=np.zeros((3, 3)))
    b.add_link('ball', mass=1.0, inertia=np.zeros((3, 3)))
    T = np.eye(4)
    T[:3, 3] = 0.5 * axis
    b.add_joint('slide', 'prismatic', parent='base', child='ball', axis=axis, origin=T)
    robot = b.build()
    with pytest.raises(SingularModelError, match='H0'):
        FreeFloatingKinematics(robot, 'ball')
    q, _ = np.linalg.qr(np.random.default_rng(1).normal(size=(3, 3)))
    R0 = q * np.sign(np.linalg.det(q))
    H = FastDynamics(robot).mass_matrix(R0, np.zeros(3), np.array([0.3]))
    H0, H0m = H[:6, :6], H[:6, 6:]
    assert np.linalg.cond(H0) > 1e14  # invertible to numpy: only rounding
    J0, Jm = np.eye(6), np.ones((6, 1))
    for call in (
        lambda: core.base_reaction(H0, H0m, [1.0]),
        lambda: core.base_reaction(H0, H0m, [0.0], h0=[1.0, 0, 0, 0, 0, 0]),
        lambda: core.reaction_jacobian(H0, H0m),
        lambda: core.generalized_jacobian(J0, Jm, H0, H0m),
        lambda: core.reaction_null_space(H0, H0m),
    ):
        with pytest.raises(SingularModelError, match='H0 is singular.*smallest eigenvalue'):
            call()
    # a robot with inertia about every axis is not refused (the same masses, a rod's inertia)
    b = core.RobotBuilder('rod')
    b.add_link('base', mass=1.0, inertia=np.diag([1e-3, 1e-3, 1e-3]))
    b.add_link('ball', mass=1.0, inertia=np.zeros((3, 3)))
    b.add_joint('slide', 'prismatic', parent='base', child='ball', axis=axis, origin=T)
    H = FastDynamics(b.build()).mass_matrix(R0, np.zeros(3), np.array([0.3]))
    u0 = core.base_reaction(H[:6, :6], H[:6, 6:], [1.0])
    np.testing.assert_allclose(H[:6, :6] @ u0, -H[:6, 6:] @ [1.0], atol=1e-12)
