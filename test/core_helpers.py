"""
Shared helpers of the core tests (test/test_core_*.py) and benchmarks.

- paths of the SPART reference data and of the project's own test URDFs;
- ``load_robot(name)``: a model by name (reference or test URDF), cached;
- ``random_state(robot, seed)``: a random state (R0, r0, qm, u, udot, wrenches, tau) with a fixed
  seed;
- ``run_chain(robot, state)``: the whole SPART chain (Kinematics ... Floating_ID) on a state;
- ``serial_chain_urdf(n_links, seed)``: a random n-link revolute chain as URDF text (benchmarks);
- ``random_tree_urdf(n_links, seed)``: a random branched tree (revolute, continuous, prismatic and
  fixed joints, offset and rotated inertial frames, the base's too) as URDF text.

Import from a test as ``from core_helpers import ...`` (pytest puts test/ on sys.path
because test/ has no __init__.py) or ``from test.core_helpers import ...`` from the repo root.
"""

from functools import lru_cache
import os
from types import SimpleNamespace

import numpy as np
from spart_ros import spart

TEST_DIR = os.path.dirname(os.path.abspath(__file__))
REF_DIR = os.path.join(TEST_DIR, 'data', 'spart')
REF_URDF_DIR = os.path.join(REF_DIR, 'urdf')
URDF_DIR = os.path.join(TEST_DIR, 'data', 'urdf')

#: SPART's example models with stored reference outputs (test/data/spart/<name>.json).
REF_MODELS = ('SC_3DoF', 'Simple_Spacecraft', 'kuka_iiwa')
#: The project's own test robots (test/data/urdf/<name>.urdf).
NEW_MODELS = ('branched_two_arm_spacecraft', 'arm7_floating', 'prismatic_chain', 'planar_two_link')
ALL_MODELS = REF_MODELS + NEW_MODELS


def urdf_path(name):
    """Path of a model's URDF, reference or test robot."""
    for d in (URDF_DIR, REF_URDF_DIR):
        p = os.path.join(d, name + '.urdf')
        if os.path.isfile(p):
            return p
    raise FileNotFoundError(f'no URDF for model {name!r} in {URDF_DIR} or {REF_URDF_DIR}')


@lru_cache(maxsize=None)
def load_robot(name):
    """Return the robot model of ``name`` (see ALL_MODELS), built once per test session."""
    robot, _ = spart.urdf2robot(urdf_path(name))
    return robot


def random_rotation(rng):
    """Return a uniformly random rotation matrix (from a normalized Gaussian quaternion)."""
    q = rng.standard_normal(4)
    q /= np.linalg.norm(q)
    return spart.quat_DCM(q).T


def random_state(robot, seed, scale=1.0):
    """
    Return a random state of ``robot`` with a fixed seed.

    Fields: R0 (3, 3), r0 (3,), qm (n_q,) in [-pi, pi) (prismatic joints in [-0.2, 0.2) m),
    u0, u0dot, wF0, tau0 (6,), um, umdot, taum (n_q,), wFm (6, n); velocities scaled by ``scale``.
    """
    rng = np.random.default_rng(seed)
    n, nq = robot.n_links_joints, robot.n_q
    qm = rng.uniform(-np.pi, np.pi, nq)
    for j in robot.joints:
        if j.type == 2:
            qm[j.q_id - 1] *= 0.2 / np.pi
    return SimpleNamespace(
        R0=random_rotation(rng),
        r0=rng.standard_normal(3),
        qm=qm,
        u0=scale * rng.standard_normal(6),
        um=scale * rng.standard_normal(nq),
        u0dot=rng.standard_normal(6),
        umdot=rng.standard_normal(nq),
        wF0=rng.standard_normal(6),
        wFm=rng.standard_normal((6, n)),
        tau0=rng.standard_normal(6),
        taum=rng.standard_normal(nq),
    )


def run_chain(robot, s, gravity=None):
    """
    Every SPART function on state ``s`` (from random_state); returns a namespace of outputs.

    Names as in SPART: RJ RL rJ rL e g Bij Bi0 P0 pm t0 tL t0dot tLdot I0 Im M0_tilde Mm_tilde
    H0 H0m Hm H (assembled) C0 C0m Cm0 Cm C (assembled) N Ndot H_noc C_noc
    u0dot_fd umdot_fd (FD of s.tau0, s.taum) tau0_id taum_id (ID of s.u0dot, s.umdot)
    taum_fid u0dot_fid (Floating_ID of s.umdot), all with s's wrenches and ``gravity``.
    """
    o = SimpleNamespace()
    o.RJ, o.RL, o.rJ, o.rL, o.e, o.g = spart.Kinematics(s.R0, s.r0, s.qm, robot)
    o.Bij, o.Bi0, o.P0, o.pm = spart.DiffKinematics(s.R0, s.r0, o.rL, o.e, o.g, robot)
    o.t0, o.tL = spart.Velocities(o.Bij, o.Bi0, o.P0, o.pm, s.u0, s.um, robot)
    o.t0dot, o.tLdot = spart.Accelerations(
        o.t0, o.tL, o.P0, o.pm, o.Bi0, o.Bij, s.u0, s.um, s.u0dot, s.umdot, robot
    )
    o.I0, o.Im = spart.I_I(s.R0, o.RL, robot)
    o.M0_tilde, o.Mm_tilde = spart.MCB(o.I0, o.Im, o.Bij, o.Bi0, robot)
    o.H0, o.H0m, o.Hm = spart.GIM(o.M0_tilde, o.Mm_tilde, o.Bij, o.Bi0, o.P0, o.pm, robot)
    o.H = np.block([[o.H0, o.H0m], [o.H0m.T, o.Hm]])
    o.C0, o.C0m, o.Cm0, o.Cm = spart.CIM(
        o.t0, o.tL, o.I0, o.Im, o.M0_tilde, o.Mm_tilde, o.Bij, o.Bi0, o.P0, o.pm, robot
    )
    o.C = np.block([[o.C0, o.C0m], [o.Cm0, o.Cm]])
    o.N = spart.NOC(s.r0, o.rL, o.P0, o.pm, robot)
    o.Ndot = spart.NOCdot(s.r0, o.t0, o.rL, o.tL, o.P0, o.pm, robot)
    o.H_noc = spart.GIM_NOC(o.N, o.I0, o.Im, robot)
    o.C_noc = spart.CIM_NOC(o.N, o.Ndot, o.t0, o.tL, o.I0, o.Im, robot)
    o.u0dot_fd, o.umdot_fd = spart.FD(
        s.tau0,
        s.taum,
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
    o.tau0_id, o.taum_id = spart.ID(
        s.wF0,
        s.wFm,
        o.t0,
        o.tL,
        o.t0dot,
        o.tLdot,
        o.P0,
        o.pm,
        o.I0,
        o.Im,
        o.Bij,
        o.Bi0,
        robot,
        gravity=gravity,
    )
    o.taum_fid, o.u0dot_fid = spart.Floating_ID(
        s.wF0,
        s.wFm,
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
        s.u0,
        s.um,
        s.umdot,
        robot,
        gravity=gravity,
    )
    return o


def rel_err(a, b):
    """``max`` |a - b| / max(1, max |b|): relative error with an absolute floor of 1."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.size == 0 and b.size == 0:
        return 0.0
    return float(np.abs(a - b).max() / max(1.0, np.abs(b).max()))


def assert_close(a, b, tol, what=''):
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    assert a.shape == b.shape, f'{what}: shape {a.shape} != {b.shape}'
    err = rel_err(a, b)
    assert err <= tol, f'{what}: relative error {err:.3e} > {tol:.1e}'


def serial_chain_urdf(n_links, seed=0):
    """
    URDF text of a random serial chain: a base (10 kg) and ``n_links`` links on revolute joints.

    Joint axes are random unit vectors, joint origins random (about 0.3 m apart, random rpy),
    link masses in [0.5, 3] kg with box inertias (positive definite, triangle inequality
    holds) in a randomly rotated inertial frame.  Every joint has a ``<limit>``.
    Names: base ``base``, links ``link_1..n``, joints ``joint_1..n``.
    """
    rng = np.random.default_rng(seed)

    def f(*v):
        return ' '.join(repr(float(x)) for x in v)

    def inertial(mass, dims, xyz, rpy):
        a, b, c = dims
        ixx, iyy, izz = (
            mass * (b * b + c * c) / 12,
            mass * (a * a + c * c) / 12,
            mass * (a * a + b * b) / 12,
        )
        return (
            f'<inertial><origin xyz="{f(*xyz)}" rpy="{f(*rpy)}"/>'
            f'<mass value="{f(mass)}"/><inertia ixx="{f(ixx)}" ixy="0" ixz="0" iyy="{f(iyy)}" '
            f'iyz="0" izz="{f(izz)}"/></inertial>'
        )

    parts = [
        f'<?xml version="1.0"?>\n<robot name="serial_chain_{n_links}">',
        '<link name="base">'
        f'{inertial(10.0, (0.5, 0.5, 0.5), (0.0, 0.0, 0.0), (0.0, 0.0, 0.0))}</link>',
    ]
    parent = 'base'
    for k in range(1, n_links + 1):
        axis = rng.standard_normal(3)
        axis /= np.linalg.norm(axis)
        xyz = rng.uniform(-0.1, 0.1, 3) + np.array([0.0, 0.0, 0.3])
        rpy = rng.uniform(-np.pi, np.pi, 3)
        mass = float(rng.uniform(0.5, 3.0))
        dims = rng.uniform(0.05, 0.4, 3)
        com = rng.uniform(-0.1, 0.1, 3) + np.array([0.0, 0.0, 0.15])
        com_rpy = rng.uniform(-np.pi, np.pi, 3)
        parts.append(
            f'<joint name="joint_{k}" type="revolute"><parent link="{parent}"/>'
            f'<child link="link_{k}"/><origin xyz="{f(*xyz)}" rpy="{f(*rpy)}"/>'
            f'<axis xyz="{f(*axis)}"/>'
            '<limit lower="-3.14" upper="3.14" effort="100" velocity="2"/></joint>'
        )
        parts.append(f'<link name="link_{k}">{inertial(mass, dims, com, com_rpy)}</link>')
        parent = f'link_{k}'
    parts.append('</robot>\n')
    return '\n'.join(parts)


def random_tree_urdf(n_links, seed=0):
    """
    URDF text of a random kinematic tree of ``n_links`` links below a base.

    Each link hangs from a random earlier link (branches anywhere, the base included); joints
    are revolute, continuous, prismatic or (one in six) fixed, with random unit axes, origins
    and rpy; masses in [0.5, 3] kg with box inertias in randomly offset and rotated inertial
    frames (the base's too, so that SPART's base frame differs from the URDF base link frame).
    Every moving joint has a ``<limit>``.  Names: ``base``, ``link_1..n``, ``joint_1..n``.
    """
    rng = np.random.default_rng(seed)

    def f(*v):
        return ' '.join(repr(float(x)) for x in v)

    def inertial(mass, rng):
        a, b, c = rng.uniform(0.05, 0.4, 3)
        moments = mass * np.array([b * b + c * c, a * a + c * c, a * a + b * b]) / 12
        return (
            f'<inertial><origin xyz="{f(*rng.uniform(-0.1, 0.1, 3))}" '
            f'rpy="{f(*rng.uniform(-np.pi, np.pi, 3))}"/><mass value="{f(mass)}"/>'
            f'<inertia ixx="{f(moments[0])}" ixy="0" ixz="0" iyy="{f(moments[1])}" iyz="0" '
            f'izz="{f(moments[2])}"/></inertial>'
        )

    parts = [
        f'<?xml version="1.0"?>\n<robot name="random_tree_{n_links}_{seed}">',
        f'<link name="base">{inertial(20.0, rng)}</link>',
    ]
    names = ['base']
    for k in range(1, n_links + 1):
        parent = names[int(rng.integers(0, len(names)))]
        kind = ('revolute', 'revolute', 'continuous', 'prismatic', 'revolute', 'fixed')[
            int(rng.integers(0, 6))
        ]
        axis = rng.standard_normal(3)
        axis /= np.linalg.norm(axis)
        limit = (
            '<limit lower="-3" upper="3" effort="100" velocity="2"/>'
            if kind in ('revolute', 'prismatic')
            else ''
        )
        parts.append(
            f'<joint name="joint_{k}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="link_{k}"/><origin xyz="{f(*rng.uniform(-0.3, 0.3, 3))}" '
            f'rpy="{f(*rng.uniform(-np.pi, np.pi, 3))}"/><axis xyz="{f(*axis)}"/>{limit}</joint>'
        )
        parts.append(f'<link name="link_{k}">{inertial(float(rng.uniform(0.5, 3.0)), rng)}</link>')
        names.append(f'link_{k}')
    parts.append('</robot>\n')
    return '\n'.join(parts)
