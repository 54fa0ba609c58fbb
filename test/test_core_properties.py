"""
Physical and mathematical properties of the core on random states (fixed seeds).

Run on SPART's reference models and on the project's own test robots (a tree that branches
below the base, prismatic joints, a fixed joint mid-chain, inertial offsets and rpy on the
base, zero-mass end-effector frames).  Each property is checked against something computed
another way: finite differences along a trajectory, kinetic energy summed link by link, the
natural orthogonal complement built from Jacobians, direct DH products, elementary rotations.
"""

from types import SimpleNamespace

from core_helpers import ALL_MODELS, assert_close, load_robot, random_state, rel_err, run_chain
import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from spart_ros import spart
from spart_ros.core import attitude, jacobians
from spart_ros.core import model as core_model

SEEDS = (0, 1, 2)
H_FD = 1e-6  # finite-difference step (central differences: error ~ H_FD**2)
TOL_FD = 1e-7  # relative tolerance of finite-difference checks
TOL = 1e-10  # relative tolerance of exact identities
GRAVITY = np.array([0.3, -1.2, -9.81])


def skew(v):
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def vee(S):
    """Vector of the skew-symmetric part of S."""
    A = 0.5 * (S - S.T)
    return np.array([A[2, 1], A[0, 2], A[1, 0]])


# --- trajectories ---------------------------------------------------------------------------
def at_time(s, t, accelerate=True):
    """
    Return the state of ``s`` moved by t seconds along a smooth trajectory.

    Base: body angular velocity w(t) = w + wdot t, R0(t) = R0 exp([w t + wdot t^2/2]x) (exact to
    O(t^3), enough for central differences); r0(t) = r0 + v t + a t^2/2; qm(t) = qm + um t +
    umdot t^2/2; u(t) = u + udot t.  ``accelerate=False``: constant u.
    """
    k = 1.0 if accelerate else 0.0
    w, wd = s.u0[0:3], k * s.u0dot[0:3]
    return SimpleNamespace(
        R0=s.R0 @ Rotation.from_rotvec(w * t + wd * t * t / 2).as_matrix(),
        r0=s.r0 + s.u0[3:6] * t + k * s.u0dot[3:6] * t * t / 2,
        qm=s.qm + s.um * t + k * s.umdot * t * t / 2,
        u0=s.u0 + k * s.u0dot * t,
        um=s.um + k * s.umdot * t,
        u0dot=k * s.u0dot,
        umdot=k * s.umdot,
        wF0=s.wF0,
        wFm=s.wFm,
        tau0=s.tau0,
        taum=s.taum,
    )


def positions(robot, s):
    RJ, RL, rJ, rL, e, g = spart.Kinematics(s.R0, s.r0, s.qm, robot)
    Bij, Bi0, P0, pm = spart.DiffKinematics(s.R0, s.r0, rL, e, g, robot)
    return {'RL': RL, 'rL': rL, 'Bij': Bij, 'Bi0': Bi0, 'P0': P0, 'pm': pm}


def twists(robot, s):
    k = positions(robot, s)
    t0, tL = spart.Velocities(k['Bij'], k['Bi0'], k['P0'], k['pm'], s.u0, s.um, robot)
    return k, t0, tL


def central_difference(f, s, accelerate=True, h=H_FD):
    """d/dt at t = 0 of f(state at t) (f returns an array)."""
    return (
        np.asarray(f(at_time(s, h, accelerate))) - np.asarray(f(at_time(s, -h, accelerate)))
    ) / (2 * h)


def cases(models=ALL_MODELS, seeds=SEEDS):
    return [pytest.param(m, s, id=f'{m}-{s}') for m in models for s in seeds]


def link_frames(robot, s, o):
    """[(R, r)] of the base (k = 0) and every link (k = 1..n)."""
    return [(s.R0, s.r0)] + [(o.RL[:, :, i], o.rL[:, i]) for i in range(robot.n_links_joints)]


def body_twists(o):
    return [o.t0] + [o.tL[:, i] for i in range(o.tL.shape[1])]


def spatial_inertias(robot, o):
    Ms = []
    for m, I in [(robot.base_link.mass, o.I0)] + [
        (robot.links[i].mass, o.Im[:, :, i]) for i in range(robot.n_links_joints)
    ]:
        M = np.zeros((6, 6))
        M[0:3, 0:3] = I
        M[3:6, 3:6] = m * np.eye(3)
        Ms.append(M)
    return Ms


# --- kinematics -----------------------------------------------------------------------------
@pytest.mark.parametrize('name,seed', cases())
def test_twists_are_derivatives_of_positions(name, seed):
    robot = load_robot(name)
    s = random_state(robot, seed)
    k, t0, tL = twists(robot, s)
    n = robot.n_links_joints
    # CoM velocities
    assert_close(central_difference(lambda x: x.r0, s), t0[3:6], TOL_FD, 'base CoM velocity')
    rLdot = central_difference(lambda x: positions(robot, x)['rL'], s)
    assert_close(rLdot, tL[3:6], TOL_FD, 'link CoM velocities')
    # angular velocities in the body frame: R' Rdot = [w_body]x
    R0dot = central_difference(lambda x: x.R0, s)
    assert_close(vee(s.R0.T @ R0dot), s.R0.T @ t0[0:3], TOL_FD, 'base angular velocity')
    RLdot = central_difference(lambda x: positions(robot, x)['RL'], s)
    for i in range(n):
        RL = k['RL'][:, :, i]
        W = RL.T @ RLdot[:, :, i]
        assert_close(W + W.T, np.zeros((3, 3)), TOL_FD, f"R'Rdot of link {i + 1} is skew")
        assert_close(
            vee(W), RL.T @ tL[0:3, i], TOL_FD, f'angular velocity of link {robot.links[i].name}'
        )


@pytest.mark.parametrize('name,seed', cases())
def test_accelerations_are_derivatives_of_twists(name, seed):
    robot = load_robot(name)
    s = random_state(robot, seed)
    o = run_chain(robot, s)
    t0dot_fd = central_difference(lambda x: twists(robot, x)[1], s)
    tLdot_fd = central_difference(lambda x: twists(robot, x)[2], s)
    assert_close(o.t0dot, t0dot_fd, TOL_FD, 't0dot')
    assert_close(o.tLdot, tLdot_fd, TOL_FD, 'tLdot')
    # and the stacked form: tdot = N udot + Ndot u
    u = np.concatenate([s.u0, s.um])
    udot = np.concatenate([s.u0dot, s.umdot])
    tdot = o.N @ udot + o.Ndot @ u
    assert_close(np.concatenate([o.t0dot, o.tLdot.T.reshape(-1)]), tdot, TOL, 'N udot + Ndot u')
    # the system CoM acceleration is the mass-weighted mean of CoM accelerations
    rcom_dd = (
        spart.Center_of_Mass(at_time(s, 1e-4).r0, positions(robot, at_time(s, 1e-4))['rL'], robot)
        - 2 * spart.Center_of_Mass(s.r0, o.rL, robot)
        + spart.Center_of_Mass(
            at_time(s, -1e-4).r0, positions(robot, at_time(s, -1e-4))['rL'], robot
        )
    ) / 1e-8
    assert_close(
        spart.Center_of_Mass(o.t0dot[3:6], o.tLdot[3:6], robot), rcom_dd, 1e-5, 'CoM acceleration'
    )


def _offsets(robot, seed):
    rng = np.random.default_rng(100 + seed)
    return 0.3 * rng.standard_normal((robot.n_links_joints + 1, 3))


@pytest.mark.parametrize('name,seed', cases())
def test_point_jacobians_map_u_to_point_twists(name, seed):
    """
    t_p = J0 u0 + Jm um for a point at an offset on every link and on the base.

    Through Jacob (ids and names) and point_jacobian; velocity by finite differences.
    """
    robot = load_robot(name)
    s = random_state(robot, seed)
    o = run_chain(robot, s)
    offsets = _offsets(robot, seed)
    frames = link_frames(robot, s, o)
    w = [o.t0[0:3]] + [o.tL[0:3, i] for i in range(robot.n_links_joints)]

    def point(x, k):
        kk = positions(robot, x)
        R, r = (x.R0, x.r0) if k == 0 else (kk['RL'][:, :, k - 1], kk['rL'][:, k - 1])
        return r + R @ offsets[k]

    for k, (R, r) in enumerate(frames):
        rp = r + R @ offsets[k]
        J0, Jm = spart.Jacob(rp, s.r0, o.rL, o.P0, o.pm, k, robot)
        assert J0.shape == (6, 6) and Jm.shape == (6, robot.n_q)
        tp = J0 @ s.u0 + Jm @ s.um
        vp = central_difference(lambda x: point(x, k), s)
        assert_close(tp, np.concatenate([w[k], vp]), TOL_FD, f'twist of a point on link {k}')
        # by name
        J0n, Jmn = spart.Jacob(rp, s.r0, o.rL, o.P0, o.pm, robot.link_names[k], robot)
        np.testing.assert_array_equal(J0n, J0)
        np.testing.assert_array_equal(Jmn, Jm)
        # point_jacobian (offset in the link CoM frame), by id and by name
        for link in (k, robot.link_names[k]):
            P0j, Pmj = jacobians.point_jacobian(
                link, offsets[k], s.R0, s.r0, o.RL, o.rL, o.P0, o.pm, robot
            )
            assert_close(P0j, J0, TOL, 'point_jacobian J0')
            assert_close(Pmj, Jm, TOL, 'point_jacobian Jm')
        if k == 0:
            np.testing.assert_array_equal(Jm, np.zeros((6, robot.n_q)))
            expected = np.block([[s.R0, np.zeros((3, 3))], [-skew(rp - s.r0) @ s.R0, np.eye(3)]])
            assert_close(J0, expected, TOL, 'base Jacobian')
    # the CoM of the base: J0 = P0
    J0, Jm = jacobians.point_jacobian(0, None, s.R0, s.r0, o.RL, o.rL, o.P0, o.pm, robot)
    assert_close(J0, o.P0, TOL, 'base CoM Jacobian is P0')


@pytest.mark.parametrize('name,seed', cases())
def test_jacobdot_is_time_derivative_of_jacobian(name, seed):
    robot = load_robot(name)
    s = random_state(robot, seed)
    o = run_chain(robot, s)
    offsets = _offsets(robot, seed)

    def jac(x, k, via_point_jacobian=False):
        kk = positions(robot, x)
        if via_point_jacobian:
            return np.hstack(
                jacobians.point_jacobian(
                    k, offsets[k], x.R0, x.r0, kk['RL'], kk['rL'], kk['P0'], kk['pm'], robot
                )
            )
        R, r = (x.R0, x.r0) if k == 0 else (kk['RL'][:, :, k - 1], kk['rL'][:, k - 1])
        rp = r + R @ offsets[k]
        return np.hstack(spart.Jacob(rp, x.r0, kk['rL'], kk['P0'], kk['pm'], k, robot))

    for k, (R, r) in enumerate(link_frames(robot, s, o)):
        rp = r + R @ offsets[k]
        J0, Jm = spart.Jacob(rp, s.r0, o.rL, o.P0, o.pm, k, robot)
        tp = J0 @ s.u0 + Jm @ s.um
        J0d, Jmd = spart.Jacobdot(rp, tp, s.r0, o.t0, o.rL, o.tL, o.P0, o.pm, k, robot)
        Jdot_fd = central_difference(lambda x: jac(x, k), s)
        assert_close(np.hstack([J0d, Jmd]), Jdot_fd, TOL_FD, f'Jacobdot of a point on link {k}')
        P0d, Pmd = jacobians.point_jacobian_dot(
            k, offsets[k], s.R0, s.r0, o.t0, o.RL, o.rL, o.tL, o.P0, o.pm, robot
        )
        assert_close(
            np.hstack([P0d, Pmd]),
            central_difference(lambda x: jac(x, k, True), s),
            TOL_FD,
            f'point_jacobian_dot on link {k}',
        )
        # d/dt t_p = J udot + Jdot u
        tpdot = J0 @ s.u0dot + Jm @ s.umdot + J0d @ s.u0 + Jmd @ s.um
        tp_fd = central_difference(lambda x: jac(x, k) @ np.concatenate([x.u0, x.um]), s)
        assert_close(tpdot, tp_fd, TOL_FD, f'point acceleration on link {k}')
    # NOCdot is dN/dt
    Ndot_fd = central_difference(
        lambda x: spart.NOC(
            x.r0,
            positions(robot, x)['rL'],
            positions(robot, x)['P0'],
            positions(robot, x)['pm'],
            robot,
        ),
        s,
    )
    assert_close(o.Ndot, Ndot_fd, TOL_FD, 'NOCdot')


@pytest.mark.parametrize('name,seed', cases())
def test_velocities_equal_noc_times_u(name, seed):
    """Velocities' recursion (from the parent link) == N u, N built from Jacobians."""
    robot = load_robot(name)
    s = random_state(robot, seed)
    o = run_chain(robot, s)
    t = o.N @ np.concatenate([s.u0, s.um])
    assert_close(o.t0, t[0:6], TOL, 't0')
    assert_close(o.tL, t[6:].reshape(-1, 6).T, TOL, 'tL')


def _naive_i_minus_1_velocities(robot, o, s):
    """Return tL of SPART's buggy forward pass: link i propagates from link i-1, not its parent."""
    n = robot.n_links_joints
    tL = np.zeros((6, n))
    for i in range(n):
        if robot.con.child_base[i]:
            tL[:, i] = o.Bi0[:, :, i] @ o.t0
        else:
            tL[:, i] = o.Bij[:, :, i, i - 1] @ tL[:, i - 1]
        if robot.joints[i].type != 0:
            tL[:, i] += o.pm[:, i] * s.um[robot.joints[i].q_id - 1]
    return tL


@pytest.mark.parametrize('seed', SEEDS)
def test_tree_branching_below_base_does_not_copy_spart_parent_bug(seed):
    robot = load_robot('branched_two_arm_spacecraft')
    # the model does branch below the base: a link whose parent is not i-1 nor the base
    odd = [i for i in range(1, robot.n_links_joints + 1) if robot.parent[i - 1] not in (0, i - 1)]
    assert [robot.links[i - 1].name for i in odd] == ['a_finger_right']
    s = random_state(robot, seed)
    o = run_chain(robot, s)
    u = np.concatenate([s.u0, s.um])
    t = (o.N @ u)[6:].reshape(-1, 6).T
    assert_close(o.tL, t, TOL, 'Velocities == N u')
    naive = _naive_i_minus_1_velocities(robot, o, s)
    k = odd[0] - 1
    assert rel_err(naive[:, k], t[:, k]) > 1e-3, (
        'the i-1 recursion should differ here (test is not sensitive)'
    )
    # FD and Accelerations use the parent too: compare with N, Ndot, H, C built from Jacobians
    udot = np.concatenate([s.u0dot, s.umdot])
    assert_close(o.tLdot, (o.N @ udot + o.Ndot @ u)[6:].reshape(-1, 6).T, TOL, 'Accelerations')
    w = np.concatenate([s.wF0, s.wFm.T.reshape(-1)])
    tau = np.concatenate([s.tau0, s.taum])
    udot_fd = np.linalg.solve(o.H_noc, tau + o.N.T @ w - o.C_noc @ u)
    assert_close(np.concatenate([o.u0dot_fd, o.umdot_fd]), udot_fd, 1e-9, 'FD')


# --- inertia, energy, C ---------------------------------------------------------------------
@pytest.mark.parametrize('name,seed', cases())
def test_kinetic_energy(name, seed):
    robot = load_robot(name)
    s = random_state(robot, seed)
    o = run_chain(robot, s)
    u = np.concatenate([s.u0, s.um])
    T = 0.5 * robot.base_link.mass * o.t0[3:6] @ o.t0[3:6] + 0.5 * o.t0[0:3] @ o.I0 @ o.t0[0:3]
    for i, link in enumerate(robot.links):
        v, w = o.tL[3:6, i], o.tL[0:3, i]
        T += 0.5 * link.mass * v @ v + 0.5 * w @ o.Im[:, :, i] @ w
    assert abs(0.5 * u @ o.H @ u - T) <= TOL * T
    # H symmetric positive definite
    assert_close(o.H, o.H.T, TOL, 'H symmetric')
    assert np.linalg.eigvalsh(o.H).min() > 0


@pytest.mark.parametrize('name,seed', cases())
def test_inertia_in_inertial_frame_and_composite_inertias(name, seed):
    robot = load_robot(name)
    s = random_state(robot, seed)
    o = run_chain(robot, s)
    assert_close(o.I0, s.R0 @ robot.base_link.inertia @ s.R0.T, TOL, 'I0')
    Ms = spatial_inertias(robot, o)
    n = robot.n_links_joints
    # M~_i = sum over the subtree of B_ki' M_k B_ki
    for i in range(n):
        Mt = np.zeros((6, 6))
        for k in range(n):
            if robot.con.branch[k, i]:
                B = np.eye(6)
                B[3:6, 0:3] = skew(o.rL[:, i] - o.rL[:, k])
                Mt += B.T @ Ms[k + 1] @ B
        assert_close(o.Mm_tilde[:, :, i], Mt, TOL, f'Mm_tilde of link {i + 1}')
    M0 = Ms[0].copy()
    for k in range(n):
        B = np.eye(6)
        B[3:6, 0:3] = skew(s.r0 - o.rL[:, k])
        M0 += B.T @ Ms[k + 1] @ B
    assert_close(o.M0_tilde, M0, TOL, 'M0_tilde')


@pytest.mark.parametrize('name,seed', cases())
def test_H_and_C_agree_with_noc_forms(name, seed):
    """GIM == GIM_NOC == N'MN; CIM == CIM_NOC == N'(M Ndot + W M N), N' M N built here by hand."""
    robot = load_robot(name)
    s = random_state(robot, seed)
    o = run_chain(robot, s)
    Ms = spatial_inertias(robot, o)
    nb = robot.n_links_joints + 1
    M = np.zeros((6 * nb, 6 * nb))
    W = np.zeros((6 * nb, 6 * nb))
    for k, (Mk, t) in enumerate(zip(Ms, body_twists(o))):
        M[6 * k : 6 * k + 6, 6 * k : 6 * k + 6] = Mk
        W[6 * k : 6 * k + 3, 6 * k : 6 * k + 3] = skew(t[0:3])
    assert_close(o.H, o.H_noc, TOL, 'GIM vs GIM_NOC')
    assert_close(o.H, o.N.T @ M @ o.N, TOL, "GIM vs N'MN")
    assert_close(o.C, o.C_noc, TOL, 'CIM vs CIM_NOC')
    assert_close(o.C, o.N.T @ (M @ o.Ndot + W @ M @ o.N), TOL, "CIM vs N'(M Ndot + W M N)")


@pytest.mark.parametrize('name,seed', cases())
def test_dH_dt_equals_C_plus_C_transpose(name, seed):
    robot = load_robot(name)
    s = random_state(robot, seed)
    o = run_chain(robot, s)

    def H(x):
        return run_chain(robot, x).H

    Hdot = central_difference(H, s, accelerate=False)
    assert_close(o.C + o.C.T, Hdot, TOL_FD, "C + C' vs dH/dt")


@pytest.mark.parametrize('name,seed', cases())
def test_C_u_is_the_inverse_dynamics_bias(name, seed):
    robot = load_robot(name)
    s = random_state(robot, seed)
    o = run_chain(robot, s)
    nq, n = robot.n_q, robot.n_links_joints
    t0dot, tLdot = spart.Accelerations(
        o.t0, o.tL, o.P0, o.pm, o.Bi0, o.Bij, s.u0, s.um, np.zeros(6), np.zeros(nq), robot
    )
    b0, bm = spart.ID(
        np.zeros(6),
        np.zeros((6, n)),
        o.t0,
        o.tL,
        t0dot,
        tLdot,
        o.P0,
        o.pm,
        o.I0,
        o.Im,
        o.Bij,
        o.Bi0,
        robot,
    )
    assert_close(
        np.concatenate([b0, bm]), o.C @ np.concatenate([s.u0, s.um]), TOL, 'C u vs ID(udot = 0)'
    )


# --- dynamics -------------------------------------------------------------------------------
def _gravity_w(robot, o, gravity):
    w = [np.concatenate([np.zeros(3), robot.base_link.mass * gravity])]
    w += [np.concatenate([np.zeros(3), link.mass * gravity]) for link in robot.links]
    return np.concatenate(w)


@pytest.mark.parametrize('name,seed', cases())
@pytest.mark.parametrize('gravity', [None, GRAVITY], ids=['no_gravity', 'gravity'])
def test_equations_of_motion(name, seed, gravity):
    """ID(udot) == H udot + C u - N' (w + m g); FD and ID invert each other."""
    robot = load_robot(name)
    s = random_state(robot, seed)
    o = run_chain(robot, s, gravity=gravity)
    u = np.concatenate([s.u0, s.um])
    udot = np.concatenate([s.u0dot, s.umdot])
    w = np.concatenate([s.wF0, s.wFm.T.reshape(-1)])
    if gravity is not None:
        w = w + _gravity_w(robot, o, gravity)
    tau = o.H @ udot + o.C @ u - o.N.T @ w
    assert_close(np.concatenate([o.tau0_id, o.taum_id]), tau, TOL, "ID vs H udot + C u - N'w")
    # FD(ID(udot)) == udot
    u0dot, umdot = spart.FD(
        o.tau0_id,
        o.taum_id,
        s.wF0,
        s.wFm,
        o.t0,
        o.tL,
        o.P0,
        o.pm,
        o.I0,
        o.Im,
        o.Bij,
        o.Bi0,
        s.u0,
        s.um,
        robot,
        gravity=gravity,
    )
    assert_close(np.concatenate([u0dot, umdot]), udot, 1e-9, 'FD(ID(udot))')
    # ID(FD(tau)) == tau
    t0dot, tLdot = spart.Accelerations(
        o.t0, o.tL, o.P0, o.pm, o.Bi0, o.Bij, s.u0, s.um, o.u0dot_fd, o.umdot_fd, robot
    )
    tau0, taum = spart.ID(
        s.wF0,
        s.wFm,
        o.t0,
        o.tL,
        t0dot,
        tLdot,
        o.P0,
        o.pm,
        o.I0,
        o.Im,
        o.Bij,
        o.Bi0,
        robot,
        gravity=gravity,
    )
    assert_close(
        np.concatenate([tau0, taum]), np.concatenate([s.tau0, s.taum]), 1e-9, 'ID(FD(tau))'
    )


@pytest.mark.parametrize('name,seed', cases())
def test_gravity_argument_equals_weight_wrenches(name, seed):
    robot = load_robot(name)
    s = random_state(robot, seed)
    g = GRAVITY
    wF0 = s.wF0 + np.concatenate([np.zeros(3), robot.base_link.mass * g])
    wFm = s.wFm + np.vstack([np.zeros((3, robot.n_links_joints)), np.outer(g, robot.masses)])
    with_arg = run_chain(robot, s, gravity=g)
    s2 = random_state(robot, seed)
    s2.wF0, s2.wFm = wF0, wFm
    by_hand = run_chain(robot, s2)
    for f in ('tau0_id', 'taum_id', 'u0dot_fd', 'umdot_fd', 'taum_fid', 'u0dot_fid'):
        assert_close(getattr(with_arg, f), getattr(by_hand, f), TOL, f)
    # and gravity changes something
    assert rel_err(with_arg.u0dot_fd, run_chain(robot, s).u0dot_fd) > 1e-3


@pytest.mark.parametrize('name,seed', cases())
@pytest.mark.parametrize('gravity', [None, GRAVITY], ids=['no_gravity', 'gravity'])
def test_floating_id_agrees_with_fd(name, seed, gravity):
    robot = load_robot(name)
    s = random_state(robot, seed)
    o = run_chain(robot, s, gravity=gravity)
    u0dot, umdot = spart.FD(
        np.zeros(6),
        o.taum_fid,
        s.wF0,
        s.wFm,
        o.t0,
        o.tL,
        o.P0,
        o.pm,
        o.I0,
        o.Im,
        o.Bij,
        o.Bi0,
        s.u0,
        s.um,
        robot,
        gravity=gravity,
    )
    assert_close(u0dot, o.u0dot_fid, 1e-9, 'u0dot')
    assert_close(umdot, s.umdot, 1e-9, 'umdot')


# --- momentum conservation ------------------------------------------------------------------
def _quat_rate(q, w):
    """
    d/dt of a unit quaternion [x, y, z, w] (Hamilton) for body angular velocity w.

    Q (x) [w; 0] / 2.
    """
    v, c = q[0:3], q[3]
    return 0.5 * np.concatenate([c * w + np.cross(v, w), [-v @ w]])


def _rhs(robot, x):
    quat, r0, qm, u0, um = x
    R0 = Rotation.from_quat(quat).as_matrix()  # normalizes
    RJ, RL, rJ, rL, e, g = spart.Kinematics(R0, r0, qm, robot)
    Bij, Bi0, P0, pm = spart.DiffKinematics(R0, r0, rL, e, g, robot)
    t0, tL = spart.Velocities(Bij, Bi0, P0, pm, u0, um, robot)
    I0, Im = spart.I_I(R0, RL, robot)
    n = robot.n_links_joints
    u0dot, umdot = spart.FD(
        np.zeros(6),
        np.zeros(robot.n_q),
        np.zeros(6),
        np.zeros((6, n)),
        t0,
        tL,
        P0,
        pm,
        I0,
        Im,
        Bij,
        Bi0,
        u0,
        um,
        robot,
    )
    return [_quat_rate(quat, u0[0:3]), u0[3:6], um, u0dot, umdot]


def _momenta(robot, x):
    quat, r0, qm, u0, um = x
    R0 = Rotation.from_quat(quat).as_matrix()
    RJ, RL, rJ, rL, e, g = spart.Kinematics(R0, r0, qm, robot)
    Bij, Bi0, P0, pm = spart.DiffKinematics(R0, r0, rL, e, g, robot)
    t0, tL = spart.Velocities(Bij, Bi0, P0, pm, u0, um, robot)
    I0, Im = spart.I_I(R0, RL, robot)
    m0 = robot.base_link.mass
    p = m0 * t0[3:6]
    L = I0 @ t0[0:3] + m0 * np.cross(r0, t0[3:6])
    for i, link in enumerate(robot.links):
        p = p + link.mass * tL[3:6, i]
        L = L + Im[:, :, i] @ tL[0:3, i] + link.mass * np.cross(rL[:, i], tL[3:6, i])
    return p, L


@pytest.mark.parametrize(
    'name', ['branched_two_arm_spacecraft', 'prismatic_chain', 'arm7_floating', 'SC_3DoF']
)
def test_momentum_is_conserved_without_external_forces(name):
    """
    RK4 (dt = 10 ms) for 1 s, no wrenches, no gravity.

    Linear and angular momentum (about the inertial origin) stay constant to 1e-8 relative. (The
    integrator's own error is ~1e-10 here and falls 16x when dt halves: RK4's order, so a larger
    drift is the core's.)
    """
    robot = load_robot(name)
    s = random_state(robot, 7, scale=0.5)
    x = [Rotation.from_matrix(s.R0).as_quat(), s.r0, s.qm, s.u0, s.um]
    p_start, L_start = _momenta(robot, x)
    dt, steps = 0.01, 100
    for _ in range(steps):
        k1 = _rhs(robot, x)
        k2 = _rhs(robot, [a + dt / 2 * b for a, b in zip(x, k1)])
        k3 = _rhs(robot, [a + dt / 2 * b for a, b in zip(x, k2)])
        k4 = _rhs(robot, [a + dt * b for a, b in zip(x, k3)])
        x = [
            a + dt / 6 * (b1 + 2 * b2 + 2 * b3 + b4)
            for a, b1, b2, b3, b4 in zip(x, k1, k2, k3, k4)
        ]
    p_end, L_end = _momenta(robot, x)
    # the system moved: joints travelled
    assert np.abs(x[2] - s.qm).max() > 0.1
    assert np.linalg.norm(p_end - p_start) <= 1e-8 * np.linalg.norm(p_start)
    assert np.linalg.norm(L_end - L_start) <= 1e-8 * np.linalg.norm(L_start)


def test_quaternion_rate_matches_rotation_rate():
    """The test's own integrator: Rdot = R [w]x for the quaternion rate used above."""
    rng = np.random.default_rng(3)
    q = rng.standard_normal(4)
    q /= np.linalg.norm(q)
    w = rng.standard_normal(3)
    h = 1e-6
    Rdot = (
        Rotation.from_quat(q + h * _quat_rate(q, w)).as_matrix()
        - Rotation.from_quat(q - h * _quat_rate(q, w)).as_matrix()
    ) / (2 * h)
    R = Rotation.from_quat(q).as_matrix()
    assert_close(Rdot, R @ skew(w), 1e-8, 'quaternion rate')


# --- DH robots ------------------------------------------------------------------------------
def _rot_z(t):
    return np.array(
        [[np.cos(t), -np.sin(t), 0, 0], [np.sin(t), np.cos(t), 0, 0], [0, 0, 1, 0], [0, 0, 0, 1.0]]
    )


def _rot_x(t):
    return np.array(
        [[1.0, 0, 0, 0], [0, np.cos(t), -np.sin(t), 0], [0, np.sin(t), np.cos(t), 0], [0, 0, 0, 1]]
    )


def _trans(v):
    T = np.eye(4)
    T[0:3, 3] = v
    return T


def _dh(d, alpha, a, theta):
    """
    Return standard DH.

    Rz(theta) Tz(d) Tx(a) Rx(alpha), written as a product of elementary transforms.
    """
    return _rot_z(theta) @ _trans([0, 0, d]) @ _trans([a, 0, 0]) @ _rot_x(alpha)


def _box_inertia(m, a, b, c):
    return m / 12 * np.diag([b * b + c * c, a * a + c * c, a * a + b * b])


DH_DATA = {
    'name': 'dh_test_arm',  # SPART's DH.data.name typo must not break this
    'n': 4,
    'man': [
        {
            'type': 1,
            'DH': {'d': 0.3, 'alpha': np.pi / 2, 'a': 0.05, 'theta': 0.2},
            'b': np.array([0.0, 0.1, 0.02]),
            'mass': 4.0,
            'I': _box_inertia(4.0, 0.1, 0.3, 0.1),
        },
        {
            'type': 1,
            'DH': {'d': 0.0, 'alpha': 0.0, 'a': 0.5, 'theta': -0.4},
            'b': np.array([0.25, 0.0, 0.0]),
            'mass': 3.0,
            'I': _box_inertia(3.0, 0.5, 0.08, 0.08),
        },
        {
            'type': 2,
            'DH': {'d': 0.1, 'alpha': -np.pi / 2, 'a': 0.0, 'theta': 0.3},
            'b': np.array([0.0, 0.05, 0.1]),
            'mass': 1.5,
            'I': _box_inertia(1.5, 0.06, 0.06, 0.3),
        },
        {
            'type': 1,
            'DH': {'d': 0.2, 'alpha': 0.7, 'a': 0.1, 'theta': 0.0},
            'b': np.array([0.02, 0.0, 0.08]),
            'mass': 0.8,
            'I': _box_inertia(0.8, 0.1, 0.1, 0.1),
        },
    ],
    'base': {
        'T_L0_J1': _trans([0.1, 0.2, 0.5]) @ _rot_x(0.3),
        'mass': 50.0,
        'I': _box_inertia(50.0, 1, 1, 1),
    },
    'EE': {'theta': 0.5, 'd': 0.15},
}


def _dh_frames(data, R0, r0, qm):
    """Link CoM frames and end-effector frame by direct DH products (SPART's DH semantics)."""
    T = np.eye(4)
    T[0:3, 0:3], T[0:3, 3] = R0, r0
    F = T @ data['base']['T_L0_J1']  # joint 1 frame (z = joint axis)
    coms = []
    n = data['n']
    for i, m in enumerate(data['man']):
        dh = dict(m['DH'])
        if m['type'] == 1:
            dh['theta'] = dh['theta'] + qm[i]
        else:
            dh['d'] = dh['d'] + qm[i]
        F = F @ _dh(dh['d'], dh['alpha'], dh['a'], dh['theta'])
        if i == n - 1:
            F = F @ _rot_z(data['EE']['theta']) @ _trans([0, 0, data['EE']['d']])
        coms.append(F @ _trans(-m['b']))
    return coms, F


def test_dh_robot_kinematics_match_direct_dh_products():
    robot, T_Ln_EE = spart.DH_Serial2robot(DH_DATA)
    assert robot.name == 'dh_test_arm'
    assert robot.n_links_joints == 4 and robot.n_q == 4
    assert list(robot.joint_type) == [1, 1, 2, 1]
    for seed in SEEDS:
        s = random_state(robot, seed)
        RJ, RL, rJ, rL, e, g = spart.Kinematics(s.R0, s.r0, s.qm, robot)
        coms, F_ee = _dh_frames(DH_DATA, s.R0, s.r0, s.qm)
        for i, T in enumerate(coms):
            assert_close(RL[:, :, i], T[0:3, 0:3], TOL, f'RL of L{i + 1}')
            assert_close(rL[:, i], T[0:3, 3], TOL, f'rL of L{i + 1}')
        # joint axes are the z axes of the DH frames
        T = np.eye(4)
        T[0:3, 0:3], T[0:3, 3] = s.R0, s.r0
        assert_close(e[:, 0], (T @ DH_DATA['base']['T_L0_J1'])[0:3, 2], TOL, 'e of J1')
        for i in range(1, 4):
            assert_close(e[:, i], coms[i - 1][0:3, 2], TOL, f'e of J{i + 1}')
        # end effector: T_Ln_EE in the last link's CoM frame
        T_last = np.eye(4)
        T_last[0:3, 0:3], T_last[0:3, 3] = RL[:, :, -1], rL[:, -1]
        assert_close(T_last @ T_Ln_EE, F_ee, TOL, 'end-effector frame')


def test_dh_robot_equals_hand_built_robot():
    """
    The DH robot and the same robot built link by link have the same kinematics, H and C.

    Built link by link: RobotBuilder, URDF-style frames.
    """
    data = DH_DATA
    b = core_model.RobotBuilder('by_hand')
    b.add_link('Base', mass=data['base']['mass'], inertia=data['base']['I'])
    prev = 'Base'
    origin = data['base']['T_L0_J1']
    for i, m in enumerate(data['man'], start=1):
        A = _dh(m['DH']['d'], m['DH']['alpha'], m['DH']['a'], m['DH']['theta'])
        if i == data['n']:
            A = A @ _rot_z(data['EE']['theta']) @ _trans([0, 0, data['EE']['d']])
        b.add_link(f'L{i}', mass=m['mass'], inertia=m['I'], com=A @ _trans(-m['b']))
        b.add_joint(
            f'J{i}',
            {1: 'revolute', 2: 'prismatic'}[m['type']],
            parent=prev,
            child=f'L{i}',
            origin=origin,
            axis=[0, 0, 1],
        )
        origin, prev = A, f'L{i}'
    hand = b.build()
    dh_robot, _ = spart.DH_Serial2robot(data)
    for seed in SEEDS:
        s = random_state(dh_robot, seed)
        o1, o2 = run_chain(dh_robot, s), run_chain(hand, s)
        for f in ('RL', 'rL', 'e', 'g', 'H', 'C', 'tL', 'tau0_id', 'taum_id'):
            assert_close(getattr(o1, f), getattr(o2, f), TOL, f)


def test_dh_robot_data_errors_name_the_field():
    from spart_ros.core.errors import ModelError

    bad = dict(DH_DATA, base={'mass': 1.0, 'I': np.eye(3)})
    with pytest.raises(ModelError, match='T_L0_J1'):
        spart.DH_Serial2robot(bad)
    with pytest.raises(ModelError, match='man'):
        spart.DH_Serial2robot(dict(DH_DATA, n=3))


# --- attitude helpers -----------------------------------------------------------------------
def _Rx(a):
    return _rot_x(a)[0:3, 0:3]


def _Ry(a):
    c, s_ = np.cos(a), np.sin(a)
    return np.array([[c, 0, s_], [0, 1, 0], [-s_, 0, c]])


def _Rz(a):
    return _rot_z(a)[0:3, 0:3]


@pytest.mark.parametrize('seed', range(5))
def test_attitude_helpers(seed):
    rng = np.random.default_rng(seed)
    angles = rng.uniform(-np.pi, np.pi, 3)
    angles[1] /= 2.5  # theta in (-pi/2, pi/2) for a unique 3-2-1 inverse
    phi, theta, psi = angles
    # Euler angle DCMs: transposes of products of elementary rotations
    assert_close(
        spart.Angles321_DCM(angles), (_Rz(psi) @ _Ry(theta) @ _Rx(phi)).T, 1e-14, 'Angles321_DCM'
    )
    assert_close(
        spart.Angles123_DCM(angles), (_Rx(phi) @ _Ry(theta) @ _Rz(psi)).T, 1e-14, 'Angles123_DCM'
    )
    assert_close(
        spart.DCM_Angles321(spart.Angles321_DCM(angles)), angles, 1e-12, 'DCM_Angles321 round trip'
    )
    # URDF rpy is the transpose of Angles321_DCM
    assert_close(
        attitude.rpy_rotation(angles), _Rz(psi) @ _Ry(theta) @ _Rx(phi), 1e-14, 'rpy_rotation'
    )
    # quaternions [x, y, z, w]: quat_DCM is the transpose of the active rotation
    q = rng.standard_normal(4)
    q /= np.linalg.norm(q)
    R = Rotation.from_quat(q).as_matrix()
    assert_close(spart.quat_DCM(q), R.T, 1e-14, 'quat_DCM')
    q2 = spart.DCM_quat(spart.quat_DCM(q))
    assert_close(q2 * np.sign(q2[3]), q * np.sign(q[3]), 1e-12, 'DCM_quat round trip')
    D = spart.Angles321_DCM(angles)
    assert_close(spart.quat_DCM(spart.DCM_quat(D)), D, 1e-12, 'DCM -> quat -> DCM')
    # Euler axis / angle
    axis = rng.standard_normal(3)
    axis /= np.linalg.norm(axis)
    a = rng.uniform(-np.pi, np.pi)
    assert_close(
        spart.Euler_DCM(axis, a), Rotation.from_rotvec(axis * a).as_matrix().T, 1e-14, 'Euler_DCM'
    )
    # SkewSym
    x, y = rng.standard_normal(3), rng.standard_normal(3)
    assert_close(spart.SkewSym(x) @ y, np.cross(x, y), 1e-14, 'SkewSym')
    # ROS quaternion (x, y, z, w) <-> active rotation, both signs, near-unit input normalized
    # (far from unit, e.g. 3 q, is an InputError: test_bad_inputs.py)
    assert_close(attitude.quaternion_from_ros(*(1.004 * q)), R, 1e-14, 'quaternion_from_ros')
    assert_close(attitude.quaternion_from_ros(*(-q)), R, 1e-14, 'quaternion_from_ros(-q)')
    qr = attitude.quaternion_to_ros(R)
    assert qr[3] >= 0
    assert_close(qr, q * np.sign(q[3]), 1e-12, 'quaternion_to_ros')
    assert_close(
        attitude.quaternion_from_ros(*attitude.quaternion_to_ros(R)), R, 1e-12, 'ROS round trip'
    )


def test_attitude_special_rotations():
    # rotations by pi (trace = -1) stress DCM_quat
    for axis in np.eye(3):
        D = spart.Euler_DCM(axis, np.pi)
        assert_close(spart.quat_DCM(spart.DCM_quat(D)), D, 1e-12, f'pi about {axis}')
        assert_close(
            attitude.quaternion_from_ros(*attitude.quaternion_to_ros(D.T)), D.T, 1e-12, 'ROS at pi'
        )
    assert_close(spart.quat_DCM([0, 0, 0, 1]), np.eye(3), 0, 'identity')
    # a 90 degree turn about z: body x axis points along inertial y
    R = attitude.quaternion_from_ros(0, 0, np.sin(np.pi / 4), np.cos(np.pi / 4))
    assert_close(R @ [1, 0, 0], [0, 1, 0], 1e-15, 'ROS quaternion is active')
    from spart_ros.core.errors import InputError

    with pytest.raises(InputError, match='quaternion'):
        attitude.quaternion_from_ros(0, 0, 0, 0)
    with pytest.raises(InputError, match='quaternion'):
        attitude.quaternion_from_ros(np.nan, 0, 0, 1)


# --- new URDF models are read as written ----------------------------------------------------
def test_branched_model_structure():
    robot = load_robot('branched_two_arm_spacecraft')
    assert robot.link_names == [
        'bus',
        'a_upper',
        'a_fore',
        'a_slider',
        'a_camera',
        'a_wrist',
        'a_finger_left',
        'a_tip',
        'a_finger_right',
        'b_upper',
        'b_fore',
        'b_ee',
    ]
    assert list(robot.parent) == [0, 1, 2, 3, 4, 5, 6, 5, 0, 9, 10]
    assert list(robot.joint_type) == [1, 1, 2, 0, 1, 1, 0, 2, 1, 1, 0]
    assert robot.n_q == 8
    # base CoM frame = the <inertial> origin (xyz and rpy)
    np.testing.assert_allclose(robot.base_link.T[0:3, 3], [0.05, -0.03, 0.02])
    np.testing.assert_allclose(
        robot.base_link.T[0:3, 0:3], attitude.rpy_rotation([0.1, -0.2, 0.3]), atol=1e-15
    )
    # limits kept; continuous joints have no position bounds
    j = robot.joints[robot.keys.joint_id['a_finger_right_joint'] - 1]
    assert (j.limits.lower, j.limits.upper, j.limits.effort, j.limits.velocity) == (
        0.0,
        0.05,
        40.0,
        0.1,
    )
    j = robot.joints[robot.keys.joint_id['a_elbow'] - 1]
    assert j.limits.lower == -np.inf and j.limits.upper == np.inf and j.limits.effort == 100.0
    # the base joint position in the inertial frame: r0 is the base CoM, not the URDF origin
    s = random_state(robot, 0)
    RJ, RL, rJ, rL, e, g = spart.Kinematics(s.R0, s.r0, s.qm, robot)
    R_b = s.R0 @ robot.base_link.T[0:3, 0:3].T
    p_b = s.r0 - R_b @ robot.base_link.T[0:3, 3]
    np.testing.assert_allclose(rJ[:, 0], p_b + R_b @ [0.75, 0.1, 0.5], atol=1e-12)
