"""
The fast path (spart_ros.core.fast.FastDynamics) equals the SPART-named functions.

Every FastDynamics method is checked against its SPART twin (spart_ros.spart, plain
numpy) to 1e-10 relative (max |fast - ref| / max(1, max |ref|)) on random states with
fixed seeds of EVERY test robot: SPART's SC_3DoF (fixed joints at both ends of the arm),
Simple_Spacecraft (zero DoF: only fixed joints), kuka_iiwa (massless base), and the
project's branched_two_arm_spacecraft (branching below the base, prismatic and fixed joints
mid-chain, base inertial offset + rpy), arm7_floating, prismatic_chain, planar_two_link.

References (SPART functions, via test/core_helpers.run_chain where possible):

=================================  ==========================================================
fast                               reference
=================================  ==========================================================
inverse_dynamics                   ID (with wrenches and gravity, and without loads)
inverse_dynamics(floating=False)   ID of the state with u0 = u0dot = 0
floating_inverse_dynamics          Floating_ID
forward_dynamics                   FD
forward_dynamics(floating=False)   solve(Hm, taum - bm), Hm from GIM, bm = ID at umdot = 0
                                   with u0 = u0dot = 0 (and the same loads)
mass_matrix                        [[H0, H0m], [H0m', Hm]] from GIM
bias_forces                        C u (CIM blocks times u); with loads: ID at zero udot
gravity_forces                     ID with gravity, zero motion, no wrenches
jacobian (every link, the base     core.jacobians.point_jacobian (offset from the CoM, in the
  included, with offsets)          link frame); bias vs point_jacobian_dot(...) @ u
twists                             Velocities, Kinematics' rL, Center_of_Mass (position and
                                   velocity)
=================================  ==========================================================

A second check per robot runs the SPART functions on object-dtype inputs, which takes their
plain numpy path (the float path is compiled code sharing the fast path's model packing).

Then the API contract: returned buffers are reused (a second call of the same method
overwrites them; each method has its own: test_bad_inputs.py), lists are accepted, bad
inputs raise InputError naming the argument (the whole catalogue: test_bad_inputs.py), a
massless floating robot raises SingularModelError in forward_dynamics, a symbolic robot is
refused.

The first run compiles the numba kernels (~20 s, cached on disk next to kernels.py);
later runs take a few seconds.
"""

from functools import lru_cache
import importlib.machinery
import sys
from types import SimpleNamespace

from core_helpers import ALL_MODELS, assert_close, load_robot, random_state, run_chain
import numpy as np
import pytest
from spart_ros import spart
from spart_ros.core import fast as fast_module
from spart_ros.core.errors import InputError, ModelError, SingularModelError, SpartError
from spart_ros.core.fast import FastDynamics
from spart_ros.core.jacobians import point_jacobian, point_jacobian_dot
from spart_ros.core.model import RobotBuilder

TOL = 1e-10
SEEDS = (101, 202)
GRAVITY = np.array([0.4, -1.3, -9.81])

CASES = [(m, s) for m in ALL_MODELS for s in SEEDS]
IDS = [f'{m}-{s}' for m, s in CASES]


# --- references ---------------------------------------------------------------------------


def c_contiguous(s):
    """
    random_state's R0 is a transposed (Fortran-ordered) array.

    Which FastDynamics converts on every call (the slower path); the tests pass C-ordered arrays,
    the fast call, everywhere except test_fortran_ordered_R0.
    """
    for k, v in vars(s).items():
        setattr(s, k, np.ascontiguousarray(v))
    return s


@lru_cache(maxsize=None)
def fast(model):
    return FastDynamics(load_robot(model))


@lru_cache(maxsize=None)
def case(model, seed):
    """State, SPART chain outputs (with and without loads) and fixed-base references."""
    robot = load_robot(model)
    n, nq = robot.n_links_joints, robot.n_q
    s = c_contiguous(random_state(robot, seed))
    o = run_chain(robot, s, gravity=GRAVITY)  # ID, FD, Floating_ID with wrenches + gravity
    z6, zq, zw = np.zeros(6), np.zeros(nq), np.zeros((6, n))
    ref = SimpleNamespace()
    # ID without any load
    ref.tau0_id0, ref.taum_id0 = spart.ID(
        z6, zw, o.t0, o.tL, o.t0dot, o.tLdot, o.P0, o.pm, o.I0, o.Im, o.Bij, o.Bi0, robot
    )
    # bias with loads = ID at zero generalized acceleration
    t0d, tLd = spart.Accelerations(o.t0, o.tL, o.P0, o.pm, o.Bi0, o.Bij, s.u0, s.um, z6, zq, robot)
    ref.b0_loads, ref.bm_loads = spart.ID(
        s.wF0,
        s.wFm,
        o.t0,
        o.tL,
        t0d,
        tLd,
        o.P0,
        o.pm,
        o.I0,
        o.Im,
        o.Bij,
        o.Bi0,
        robot,
        gravity=GRAVITY,
    )
    # gravity generalized forces: ID with gravity, zero motion, no wrenches
    t0z, tLz = spart.Velocities(o.Bij, o.Bi0, o.P0, o.pm, z6, zq, robot)
    ref.g0, ref.gm = spart.ID(
        z6,
        zw,
        t0z,
        tLz,
        z6,
        np.zeros((6, n)),
        o.P0,
        o.pm,
        o.I0,
        o.Im,
        o.Bij,
        o.Bi0,
        robot,
        gravity=GRAVITY,
    )
    # fixed base: the same state with u0 = u0dot = 0
    f = SimpleNamespace()
    f.t0, f.tL = spart.Velocities(o.Bij, o.Bi0, o.P0, o.pm, z6, s.um, robot)
    f.t0dot, f.tLdot = spart.Accelerations(
        f.t0, f.tL, o.P0, o.pm, o.Bi0, o.Bij, z6, s.um, z6, s.umdot, robot
    )
    f.tau0, f.taum = spart.ID(
        s.wF0,
        s.wFm,
        f.t0,
        f.tL,
        f.t0dot,
        f.tLdot,
        o.P0,
        o.pm,
        o.I0,
        o.Im,
        o.Bij,
        o.Bi0,
        robot,
        gravity=GRAVITY,
    )
    t0d, tLd = spart.Accelerations(f.t0, f.tL, o.P0, o.pm, o.Bi0, o.Bij, z6, s.um, z6, zq, robot)
    f.b0, f.bm = spart.ID(
        s.wF0,
        s.wFm,
        f.t0,
        f.tL,
        t0d,
        tLd,
        o.P0,
        o.pm,
        o.I0,
        o.Im,
        o.Bij,
        o.Bi0,
        robot,
        gravity=GRAVITY,
    )
    f.b0_free, f.bm_free = spart.ID(
        z6, zw, f.t0, f.tL, t0d, tLd, o.P0, o.pm, o.I0, o.Im, o.Bij, o.Bi0, robot
    )
    f.umdot = np.linalg.solve(o.Hm, s.taum - f.bm) if nq else zq
    ref.fixed = f
    return robot, s, o, ref


def state_args(s):
    return s.R0, s.r0, s.qm, s.u0, s.um


def close(a, b, what):
    assert_close(a, b, TOL, what)


# --- one test per method, every robot ------------------------------------------------------


@pytest.mark.parametrize('model,seed', CASES, ids=IDS)
def test_inverse_dynamics(model, seed):
    robot, s, o, ref = case(model, seed)
    fd = fast(model)
    tau0, taum = fd.inverse_dynamics(
        *state_args(s), s.u0dot, s.umdot, s.wF0, s.wFm, gravity=GRAVITY
    )
    close(tau0, o.tau0_id, 'tau0 (floating, loads)')
    close(taum, o.taum_id, 'taum (floating, loads)')
    tau0, taum = fd.inverse_dynamics(*state_args(s), s.u0dot, s.umdot)
    close(tau0, ref.tau0_id0, 'tau0 (floating, no loads)')
    close(taum, ref.taum_id0, 'taum (floating, no loads)')
    # fixed base: SPART ID with u0 = u0dot = 0 (the given u0, u0dot are ignored)
    tau0, taum = fd.inverse_dynamics(
        *state_args(s), s.u0dot, s.umdot, s.wF0, s.wFm, gravity=GRAVITY, floating=False
    )
    close(taum, ref.fixed.taum, 'taum (fixed base)')
    close(tau0, ref.fixed.tau0, 'tau0 (fixed base: the wrench the mount carries)')


@pytest.mark.parametrize('model,seed', CASES, ids=IDS)
def test_floating_inverse_dynamics(model, seed):
    robot, s, o, ref = case(model, seed)
    taum, u0dot = fast(model).floating_inverse_dynamics(
        *state_args(s), s.umdot, s.wF0, s.wFm, gravity=GRAVITY
    )
    close(taum, o.taum_fid, 'taum (Floating_ID)')
    close(u0dot, o.u0dot_fid, 'u0dot (Floating_ID)')
    # consistency: the full ID of the resulting motion has tau0 = 0 and the same taum
    tau0, taum_id = fast(model).inverse_dynamics(
        *state_args(s), u0dot.copy(), s.umdot, s.wF0, s.wFm, gravity=GRAVITY
    )
    close(tau0, np.zeros(6), 'tau0 of the Floating_ID motion')
    close(taum_id, o.taum_fid, 'taum of the Floating_ID motion')


@pytest.mark.parametrize('model,seed', CASES, ids=IDS)
def test_forward_dynamics(model, seed):
    robot, s, o, ref = case(model, seed)
    fd = fast(model)
    u0dot, umdot = fd.forward_dynamics(
        *state_args(s), s.tau0, s.taum, s.wF0, s.wFm, gravity=GRAVITY
    )
    close(u0dot, o.u0dot_fd, 'u0dot (FD)')
    close(umdot, o.umdot_fd, 'umdot (FD)')
    u0dot, umdot = fd.forward_dynamics(
        *state_args(s), s.tau0, s.taum, s.wF0, s.wFm, gravity=GRAVITY, floating=False
    )
    close(u0dot, np.zeros(6), 'u0dot (fixed base)')
    close(umdot, ref.fixed.umdot, 'umdot (fixed base) vs solve(Hm, taum - bm)')


@pytest.mark.parametrize('model,seed', CASES, ids=IDS)
def test_mass_matrix(model, seed):
    robot, s, o, ref = case(model, seed)
    H = fast(model).mass_matrix(s.R0, s.r0, s.qm)
    close(H[:6, :6], o.H0, 'H0')
    close(H[:6, 6:], o.H0m, 'H0m')
    close(H[6:, :6], o.H0m.T, "H0m'")
    close(H[6:, 6:], o.Hm, 'Hm')


@pytest.mark.parametrize('model,seed', CASES, ids=IDS)
def test_bias_forces(model, seed):
    robot, s, o, ref = case(model, seed)
    fd = fast(model)
    u = np.concatenate([s.u0, s.um])
    Cu = o.C @ u  # CIM blocks times u
    b0, bm = fd.bias_forces(*state_args(s))
    close(b0, Cu[:6], 'C u, base rows')
    close(bm, Cu[6:], 'C u, joint rows')
    b0, bm = fd.bias_forces(*state_args(s), s.wF0, s.wFm, gravity=GRAVITY)
    close(b0, ref.b0_loads, 'bias with loads, base rows')
    close(bm, ref.bm_loads, 'bias with loads, joint rows')
    b0, bm = fd.bias_forces(*state_args(s), floating=False)
    close(bm, ref.fixed.bm_free, 'bias, fixed base')
    close(b0, ref.fixed.b0_free, 'bias, fixed base, mount wrench')


@pytest.mark.parametrize('model,seed', CASES, ids=IDS)
def test_gravity_forces(model, seed):
    robot, s, o, ref = case(model, seed)
    g0, gm = fast(model).gravity_forces(s.R0, s.r0, s.qm, GRAVITY)
    close(g0, ref.g0, 'gravity forces, base rows')
    close(gm, ref.gm, 'gravity forces, joint rows')


@pytest.mark.parametrize('model,seed', CASES[::3], ids=IDS[::3])
def test_model_gravity_equals_per_call_gravity(model, seed):
    """
    FastDynamics(robot, gravity=g) uses g wherever a call gives no gravity.

    A per-call gravity overrides it; the default model gravity is zero.
    """
    robot, s, o, ref = case(model, seed)
    fd0 = FastDynamics(robot)
    assert np.array_equal(fd0.gravity, np.zeros(3))
    fd = FastDynamics(robot, gravity=GRAVITY)
    assert np.array_equal(fd.gravity, GRAVITY)
    g0, gm = (x.copy() for x in fd.gravity_forces(s.R0, s.r0, s.qm))
    close(g0, ref.g0, 'model gravity, base rows')
    close(gm, ref.gm, 'model gravity, joint rows')
    a = [x.copy() for x in fd.inverse_dynamics(s.R0, s.r0, s.qm, s.u0, s.um, s.u0dot, s.umdot)]
    b = fd0.inverse_dynamics(s.R0, s.r0, s.qm, s.u0, s.um, s.u0dot, s.umdot, gravity=GRAVITY)
    close(a[0], b[0], 'ID tau0, model vs per-call gravity')
    close(a[1], b[1], 'ID taum, model vs per-call gravity')
    zero = fd.inverse_dynamics(s.R0, s.r0, s.qm, s.u0, s.um, s.u0dot, s.umdot, gravity=np.zeros(3))
    c = fd0.inverse_dynamics(s.R0, s.r0, s.qm, s.u0, s.um, s.u0dot, s.umdot)
    close(
        np.concatenate(zero),
        np.concatenate(c),
        'per-call zero gravity overrides the model gravity',
    )
    with pytest.raises(InputError, match='gravity'):
        fd.gravity = [0.0, np.nan, 1.0]


@pytest.mark.parametrize('model,seed', CASES, ids=IDS)
def test_jacobian_every_link(model, seed):
    robot, s, o, ref = case(model, seed)
    fd = fast(model)
    u = np.concatenate([s.u0, s.um])
    u_fixed = np.concatenate([np.zeros(6), s.um])
    rng = np.random.default_rng(seed + 7)
    for link in range(robot.n_links_joints + 1):
        for offset in (None, 0.3 * rng.standard_normal(3)):
            what = f'link {link}, offset {offset}'
            J0, Jm = point_jacobian(link, offset, s.R0, s.r0, o.RL, o.rL, o.P0, o.pm, robot)
            J0d, Jmd = point_jacobian_dot(
                link, offset, s.R0, s.r0, o.t0, o.RL, o.rL, o.tL, o.P0, o.pm, robot
            )
            J_ref, bias_ref = np.hstack([J0, Jm]), np.hstack([J0d, Jmd]) @ u
            J, bias = fd.jacobian(link, s.R0, s.r0, s.qm, s.u0, s.um, offset=offset)
            close(J, J_ref, f'J, {what}')
            close(bias, bias_ref, f'Jdot u, {what}')
            # fixed base: same J, bias of the motion with u0 = 0
            J0d, Jmd = point_jacobian_dot(
                link, offset, s.R0, s.r0, ref.fixed.t0, o.RL, o.rL, ref.fixed.tL, o.P0, o.pm, robot
            )
            J, bias = fd.jacobian(
                link, s.R0, s.r0, s.qm, s.u0, s.um, offset=offset, floating=False
            )
            close(J, J_ref, f'J (fixed base), {what}')
            close(bias, np.hstack([J0d, Jmd]) @ u_fixed, f'Jdot u (fixed base), {what}')
            # bias=False: same J
            J, _ = fd.jacobian(link, s.R0, s.r0, s.qm, offset=offset, bias=False)
            close(J, J_ref, f'J (bias=False), {what}')
    # links by name, the base included
    assert robot.link_names[0] == robot.base_link.name
    for link, name in enumerate(robot.link_names):
        J_id = fd.jacobian(link, s.R0, s.r0, s.qm, s.u0, s.um)[0].copy()
        close(
            fd.jacobian(name, s.R0, s.r0, s.qm, s.u0, s.um)[0], J_id, f'J of link {name!r} by name'
        )


@pytest.mark.parametrize('model,seed', CASES, ids=IDS)
def test_twists(model, seed):
    robot, s, o, ref = case(model, seed)
    fd = fast(model)
    rL, tL, com = fd.twists(*state_args(s))
    close(rL[:, 0], s.r0, 'rL[:, 0] = r0')
    close(rL[:, 1:], o.rL, 'rL (Kinematics)')
    close(tL[:, 0], o.t0, 't0 (Velocities)')
    close(tL[:, 1:], o.tL, 'tL (Velocities)')
    close(com[:3], spart.Center_of_Mass(s.r0, o.rL, robot), 'system CoM (Center_of_Mass)')
    close(com[3:], spart.Center_of_Mass(o.t0[3:6], o.tL[3:6], robot), 'system CoM velocity')
    rL, tL, com = fd.twists(*state_args(s), floating=False)
    close(tL[:, 0], np.zeros(6), 't0 (fixed base)')
    close(tL[:, 1:], ref.fixed.tL, 'tL (fixed base: Velocities with u0 = 0)')
    close(
        com[3:],
        spart.Center_of_Mass(ref.fixed.t0[3:6], ref.fixed.tL[3:6], robot),
        'CoM velocity (fixed)',
    )


@pytest.mark.parametrize('model', ALL_MODELS)
def test_against_the_numpy_reference_path(model):
    """
    The SPART-named functions agree with their plain numpy path (object-dtype inputs).

    The SPART-named functions send float inputs to compiled code that shares the fast path's model
    packing (compiled_model.pack); object-dtype inputs take their plain numpy path, built from the
    Robot's transforms directly.  Checking against that path too keeps a packing error from passing
    unseen (it would be common to both float paths).
    """
    robot, s, o, ref = case(model, SEEDS[0])
    fd = fast(model)
    n, nq = robot.n_links_joints, robot.n_q

    def obj(x):
        return np.array(x, dtype=object)

    RJ, RL, rJ, rL, e, g = spart.Kinematics(obj(s.R0), obj(s.r0), obj(s.qm), robot)
    assert rL.dtype == object  # the numpy path, not the compiled one
    Bij, Bi0, P0, pm = spart.DiffKinematics(obj(s.R0), obj(s.r0), rL, e, g, robot)
    t0, tL = spart.Velocities(Bij, Bi0, P0, pm, obj(s.u0), obj(s.um), robot)
    t0d, tLd = spart.Accelerations(
        t0, tL, P0, pm, Bi0, Bij, obj(s.u0), obj(s.um), obj(s.u0dot), obj(s.umdot), robot
    )
    I0, Im = spart.I_I(obj(s.R0), RL, robot)
    H0, H0m, Hm = spart.GIM(*spart.MCB(I0, Im, Bij, Bi0, robot), Bij, Bi0, P0, pm, robot)
    H = np.block([[H0, H0m], [H0m.T, Hm]]).astype(float)
    tau0, taum = spart.ID(
        obj(s.wF0), obj(s.wFm), t0, tL, t0d, tLd, P0, pm, I0, Im, Bij, Bi0, robot,
        gravity=obj(GRAVITY)
    )
    t0z, tLz = spart.Accelerations(
        t0, tL, P0, pm, Bi0, Bij, obj(s.u0), obj(s.um), obj(np.zeros(6)), obj(np.zeros(nq)), robot
    )
    b0, bm = spart.ID(
        obj(s.wF0), obj(s.wFm), t0, tL, t0z, tLz, P0, pm, I0, Im, Bij, Bi0, robot,
        gravity=obj(GRAVITY)
    )
    J0, Jm = point_jacobian(n, None, obj(s.R0), obj(s.r0), RL, rL, P0, pm, robot)

    got = fd.inverse_dynamics(*state_args(s), s.u0dot, s.umdot, s.wF0, s.wFm, gravity=GRAVITY)
    close(np.concatenate(got), np.concatenate([tau0, taum]).astype(float), 'ID vs the numpy path')
    close(fd.mass_matrix(s.R0, s.r0, s.qm), H, 'H vs the numpy path')
    udot = np.linalg.solve(
        H, np.concatenate([s.tau0 - b0.astype(float), s.taum - bm.astype(float)])
    )
    got = fd.forward_dynamics(*state_args(s), s.tau0, s.taum, s.wF0, s.wFm, gravity=GRAVITY)
    close(np.concatenate(got), udot, 'FD vs solve(H, tau - bias) of the numpy path')
    rL_fast, tL_fast, _ = fd.twists(*state_args(s))
    close(rL_fast[:, 1:], rL.astype(float), 'rL vs the numpy path')
    close(tL_fast[:, 1:], tL.astype(float), 'tL vs the numpy path')
    close(
        fd.jacobian(n, s.R0, s.r0, s.qm)[0],
        np.hstack([J0, Jm]).astype(float),
        'J of the last link vs numpy',
    )


# --- API contract ----------------------------------------------------------------------------

MODEL = 'branched_two_arm_spacecraft'


def calls(fd, s, gravity=GRAVITY):
    """(name, thunk) for every method on state s; each thunk returns the method's result tuple."""
    link = fd.n if fd is not None else 0  # the last link
    g = gravity
    return [
        (
            'inverse_dynamics',
            lambda: fd.inverse_dynamics(*state_args(s), s.u0dot, s.umdot, s.wF0, s.wFm, gravity=g),
        ),
        ('bias_forces', lambda: fd.bias_forces(*state_args(s), s.wF0, s.wFm, gravity=g)),
        ('gravity_forces', lambda: fd.gravity_forces(s.R0, s.r0, s.qm, g)),
        (
            'floating_inverse_dynamics',
            lambda: fd.floating_inverse_dynamics(*state_args(s), s.umdot, s.wF0, s.wFm, gravity=g),
        ),
        (
            'forward_dynamics',
            lambda: fd.forward_dynamics(*state_args(s), s.tau0, s.taum, s.wF0, s.wFm, gravity=g),
        ),
        ('mass_matrix', lambda: (fd.mass_matrix(s.R0, s.r0, s.qm),)),
        (
            'jacobian',
            lambda: fd.jacobian(link, s.R0, s.r0, s.qm, s.u0, s.um, offset=[0.1, -0.2, 0.05]),
        ),
        ('twists', lambda: fd.twists(*state_args(s))),
    ]


def test_buffers_are_reused_and_overwritten():
    """
    Documented behaviour: results are the object's buffers.

    The next call of the same method overwrites them in place (copy a result to keep it).
    """
    robot = load_robot(MODEL)
    fd = FastDynamics(robot)
    s1, s2 = c_contiguous(random_state(robot, 1)), c_contiguous(random_state(robot, 2))
    for (name, first), (_, second) in zip(calls(fd, s1), calls(fd, s2)):
        r1 = first()
        kept = [np.array(a, copy=True) for a in r1]
        r2 = second()
        for k, (a1, a2, a1_kept) in enumerate(zip(r1, r2, kept)):
            assert a2 is a1, f'{name}: output {k} is a new array, expected the reused buffer'
            assert not np.array_equal(a1, a1_kept), (
                f'{name}: output {k} was not overwritten by the second call'
            )
            assert np.array_equal(a1, a2)
        # the same state again gives the first values back
        for a, a_kept in zip(first(), kept):
            assert np.array_equal(a, a_kept), name


def test_fortran_ordered_R0():
    """
    R0 = R.T (e.g. spart.quat_DCM(q).T) is Fortran-ordered.

    Same results (it is copied to C order, never compiled for:
    test_bad_inputs.test_no_compilation_for_new_layouts).
    """
    robot, s, o, ref = case(MODEL, SEEDS[0])
    R0 = np.asfortranarray(s.R0)
    assert not R0.flags.c_contiguous
    tau0, taum = fast(MODEL).inverse_dynamics(
        R0, s.r0, s.qm, s.u0, s.um, s.u0dot, s.umdot, s.wF0, s.wFm, gravity=GRAVITY
    )
    close(tau0, o.tau0_id, 'tau0 (R0 Fortran-ordered)')
    close(taum, o.taum_id, 'taum (R0 Fortran-ordered)')


def test_inputs_as_lists():
    robot = load_robot(MODEL)
    fd = FastDynamics(robot)
    s = c_contiguous(random_state(robot, 3))
    s_list = SimpleNamespace(**{k: v.tolist() for k, v in vars(s).items()})
    expected = [(name, [np.array(a, copy=True) for a in fn()]) for name, fn in calls(fd, s)]
    got = [
        (name, [np.array(a, copy=True) for a in fn()])
        for name, fn in calls(fd, s_list, GRAVITY.tolist())
    ]
    for (name, a), (_, b) in zip(expected, got):
        for k, (x, y) in enumerate(zip(a, b)):
            assert np.array_equal(x, y), f'{name}: output {k} differs with list inputs'
    # lists are converted, never compiled for: the kernels are built ahead of time, nothing can
    # compile (test_bad_inputs.test_no_compilation_for_new_layouts: numba is never imported)
    assert all(
        type(k).__name__ == 'builtin_function_or_method' for k in fast_module._KERNELS.values()
    )


def test_integer_and_ragged_inputs():
    robot = load_robot(MODEL)
    fd = FastDynamics(robot)
    s = c_contiguous(random_state(robot, 3))
    qi = np.zeros(robot.n_q, dtype=np.int64)
    expected = np.array(fd.mass_matrix(s.R0, s.r0, qi.astype(float)), copy=True)
    assert np.array_equal(fd.mass_matrix(s.R0, s.r0, qi), expected)
    with pytest.raises(InputError, match=r'^r0: .*not an array of numbers'):
        fd.mass_matrix(s.R0, [1.0, [2.0, 3.0]], s.qm)
    with pytest.raises(InputError, match=r'^qm: .*real numbers'):
        fd.mass_matrix(s.R0, s.r0, ['a'] * robot.n_q)


METHODS = (
    'inverse_dynamics',
    'bias_forces',
    'gravity_forces',
    'floating_inverse_dynamics',
    'forward_dynamics',
    'mass_matrix',
    'jacobian',
    'twists',
)
READERS = (
    'link_pose',
)  # read what the last call computed: no state argument (test_link_pose_...)
MAKERS = ('new_workspace',)  # another workspace on the same model (test_workspaces_...)
JOINT_TERMS = (
    'joint_friction',
)  # the joints' damping and friction alone (test_joint_friction.py)


def test_every_method_is_covered():
    public = {k for k, v in vars(FastDynamics).items() if not k.startswith('_') and callable(v)}
    covered = set(METHODS) | set(READERS) | set(MAKERS) | set(JOINT_TERMS)
    assert public == covered, public ^ covered
    assert [name for name, _ in calls(None, None)] == list(METHODS)


def test_workspaces_on_one_model_keep_their_own_results():
    """
    Two workspaces of one compiled model share the model and nothing else.

    The workspaces: new_workspace, FastDynamics(model=...).  The model: nothing copied, the same
    gravity.  Every method's result, and the kinematics link_pose reads, stay those of the
    workspace's own last call while the other workspace computes at another state.
    """
    robot = load_robot(MODEL)
    a = FastDynamics(robot, gravity=GRAVITY)
    b = a.new_workspace()
    c = FastDynamics(model=a.model)
    assert b.model is a.model is c.model and b.robot is robot
    assert b.model.mi is a.model.mi and b.model.mf is a.model.mf
    s1, s2 = c_contiguous(random_state(robot, 1)), c_contiguous(random_state(robot, 2))
    alone = {
        name: [np.array(x, copy=True) for x in fn()] for name, fn in calls(FastDynamics(robot), s1)
    }
    mine = {name: fn() for name, fn in calls(a, s1)}
    pose = [np.array(x, copy=True) for x in a.link_pose(robot.n_links_joints)]
    for other in (b, c):
        for name, fn in calls(other, s2):
            fn()
    for name, got in mine.items():
        for k, (x, y) in enumerate(zip(got, alone[name])):
            assert np.array_equal(x, y), (
                f'{name}: output {k} of workspace a changed when b and c computed'
            )
    assert all(np.array_equal(x, y) for x, y in zip(a.link_pose(robot.n_links_joints), pose))
    # gravity is the model's: set on one workspace, used by all
    c.gravity = -GRAVITY
    assert np.array_equal(a.gravity, -GRAVITY) and np.array_equal(b.gravity, -GRAVITY)
    with pytest.raises(InputError, match=r'^model: expected a CompiledModel'):
        FastDynamics(model=robot)
    with pytest.raises(InputError, match=r'^gravity: belongs to the model'):
        FastDynamics(model=a.model, gravity=GRAVITY)
    with pytest.raises(InputError, match=r'^robot: .* is not the robot of model'):
        FastDynamics(load_robot('SC_3DoF'), model=a.model)


@pytest.mark.parametrize('model,seed', CASES[::2], ids=IDS[::2])
def test_link_pose_is_the_last_calls_kinematics(model, seed):
    """
    link_pose(i) is the last call's Kinematics: (RL, rL - r0), by id or name.

    After any method at a state, link_pose(i) is (RL, rL - r0) of SPART's Kinematics at that state
    (R0, 0 for the base), by id or name; after a second state, that state's; an error before any
    call.
    """
    robot, s, o, _ = case(model, seed)
    fd = FastDynamics(robot)
    with pytest.raises(SpartError, match='^link_pose: no state yet'):
        fd.link_pose(0)
    other = c_contiguous(random_state(robot, seed + 1))
    _, RL2, _, rL2, _, _ = spart.Kinematics(other.R0, other.r0, other.qm, robot)
    for name, thunk in calls(fd, s):
        thunk()
        for i in range(robot.n_links_joints + 1):
            R, d = fd.link_pose(i if i % 2 else robot.link_names[i])
            R_ref, r_ref = (s.R0, s.r0) if i == 0 else (o.RL[:, :, i - 1], o.rL[:, i - 1])
            close(R, R_ref, f'{name}: R of link {i}')
            close(s.r0 + d, r_ref, f'{name}: CoM of link {i}')
    fd.mass_matrix(other.R0, other.r0, other.qm)
    R, d = fd.link_pose(robot.n_links_joints)
    close(R, RL2[:, :, -1], 'R at the second state')
    close(other.r0 + d, rL2[:, -1], 'CoM at the second state')
    for bad in (-1, robot.n_links_joints + 1, True, 'no_such_link'):
        with pytest.raises(InputError, match='^link: '):
            fd.link_pose(bad)


@pytest.mark.parametrize('method', METHODS)
def test_wrong_length_qm_names_qm(method):
    robot = load_robot(MODEL)
    fd = FastDynamics(robot)
    s = c_contiguous(random_state(robot, 4))
    s.qm = np.zeros(robot.n_q + 1)
    fn = dict(calls(fd, s))[method]
    with pytest.raises(InputError, match='qm'):
        fn()


@pytest.mark.parametrize(
    'method',
    [
        'inverse_dynamics',
        'bias_forces',
        'floating_inverse_dynamics',
        'forward_dynamics',
        'jacobian',
        'twists',
    ],
)
def test_nan_in_um_names_um(method):
    robot = load_robot(MODEL)
    fd = FastDynamics(robot)
    s = c_contiguous(random_state(robot, 5))
    s.um = s.um.copy()
    s.um[2] = np.nan
    fn = dict(calls(fd, s))[method]
    with pytest.raises(InputError, match='um'):
        fn()


def test_massless_floating_robot_is_singular():
    b = RobotBuilder('massless')
    b.add_link('base', mass=0.0, inertia=np.zeros((3, 3)))
    b.add_link('panel', mass=0.0, inertia=np.zeros((3, 3)))
    b.add_joint('panel_mount', 'fixed', parent='base', child='panel', origin=np.eye(4))
    robot = b.build()
    fd = FastDynamics(robot)
    args = (np.eye(3), np.zeros(3), np.zeros(0), np.zeros(6), np.zeros(0))
    with pytest.raises(SingularModelError):
        fd.forward_dynamics(*args, np.ones(6), np.zeros(0))
    with pytest.raises(SingularModelError):
        fd.floating_inverse_dynamics(*args, np.zeros(0))
    # a fixed base is fine: nothing moves
    u0dot, umdot = fd.forward_dynamics(*args, np.ones(6), np.zeros(0), floating=False)
    assert np.array_equal(u0dot, np.zeros(6)) and umdot.shape == (0,)


def test_symbolic_robot_is_refused():
    import sympy as sp

    m0, m1, l1 = sp.symbols('m0 m1 l1', positive=True)
    b = RobotBuilder('symbolic_arm')
    b.add_link('ground', mass=m0, inertia=np.array(sp.eye(3).tolist(), dtype=object))
    b.add_link('link1', mass=m1, inertia=np.array(sp.eye(3).tolist(), dtype=object))
    b.add_joint(
        'shoulder',
        'revolute',
        parent='ground',
        child='link1',
        axis=[0, 0, 1],
        origin=np.array([[1, 0, 0, l1], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], dtype=object),
    )
    robot = b.build()
    assert robot.symbolic
    with pytest.raises(ModelError, match='symbolic'):
        FastDynamics(robot)


# --- no allocation on the hot path --------------------------------------------------------------


def blocks_kept_per_call(fn, calls=2000):
    """
    Python memory blocks still allocated after each call.

    0: nothing kept; numba's runtime would keep none either, but it would allocate a MemInfo per
    array argument, see the next test.
    """
    for _ in range(50):
        fn()
    before = sys.getallocatedblocks()
    for _ in range(calls):
        fn()
    return (sys.getallocatedblocks() - before) / calls


def test_calls_keep_no_memory():
    """
    Every method, with and without loads, on a 2-link and an 11-link robot.

    No memory kept per call (results go to the object's own arrays; nothing is allocated for them).
    """
    kept = {}
    for model in ('planar_two_link', MODEL):
        robot = load_robot(model)
        fd = FastDynamics(robot)
        s = c_contiguous(random_state(robot, 6))
        plain = SimpleNamespace(**vars(s))
        plain.wF0 = plain.wFm = None
        for state, g in ((s, GRAVITY), (plain, None)):
            kept.update(
                {
                    (model, name, g is None): blocks_kept_per_call(fn)
                    for name, fn in calls(fd, state, g)
                }
            )
    assert all(k < 0.01 for k in kept.values()), {key: k for key, k in kept.items() if k >= 0.01}


def test_the_kernels_run_without_numbas_runtime():
    """
    The compiled kernels run without numba's runtime.

    They are one extension module built ahead of time without numba's runtime (NRT: it wrapped
    every array argument in a freshly allocated MemInfo, ~0.9 us of a 1.7 us 3-DoF rnea call): its
    build record says so, and loading it did not import numba.
    """
    import json

    from spart_ros.native import compiled

    assert compiled.LIBRARY.endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES))
    info = json.load(
        open(
            compiled.LIBRARY[: compiled.LIBRARY.index(compiled.NAME) + len(compiled.NAME)]
            + '.json'
        )
    )
    assert info['module'] == compiled.NAME and info['nrt'] is False, info
    assert type(fast_module._KERNELS['rnea']).__name__ == 'builtin_function_or_method'


def test_fortran_ordered_R0_is_read_in_place():
    """
    A Fortran-ordered (transposed) R0 takes the fast call (read with its strides, not copied).

    The same results, no memory kept.
    """
    robot, s, o, ref = case(MODEL, SEEDS[0])
    fd = fast(MODEL)
    F = np.asfortranarray(s.R0)
    expected = [
        np.array(x) for x in fd.inverse_dynamics(s.R0, s.r0, s.qm, s.u0, s.um, s.u0dot, s.umdot)
    ]
    got = fd.inverse_dynamics(F, s.r0, s.qm, s.u0, s.um, s.u0dot, s.umdot)
    assert all(np.array_equal(x, y) for x, y in zip(got, expected))
    assert (
        blocks_kept_per_call(
            lambda: fd.inverse_dynamics(F, s.r0, s.qm, s.u0, s.um, s.u0dot, s.umdot)
        )
        < 0.01
    )
    checked = []
    fd._checked = lambda *a: checked.append(a)  # the general path would check (and convert) it
    fd.inverse_dynamics(F, s.r0, s.qm, s.u0, s.um, s.u0dot, s.umdot)
    assert checked == []
