"""
Symbolic SPART (sympy in numpy object arrays): a planar two-link arm built by hand.

Kinematics, DiffKinematics, Velocities, Jacob, I_I, MCB, GIM and CIM run with symbols for
lengths, masses, inertias, joint angles and rates; the results must equal the textbook
closed forms exactly (sympy.simplify(difference) == 0).  Fixed base: the joint block Hm.
"""

import numpy as np
import pytest
from spart_ros import spart
from spart_ros.core.errors import ModelError
from spart_ros.core.model import homogeneous, RobotBuilder
import sympy as sp

l1, lc1, lc2, l2 = sp.symbols('l1 lc1 lc2 l2', positive=True)
m0, m1, m2 = sp.symbols('m0 m1 m2', positive=True)
I0z, I1, I2 = sp.symbols('I0z I1 I2', positive=True)
q1, q2, qd1, qd2 = sp.symbols('q1 q2 qd1 qd2', real=True)


def obj(x):
    """Return a numpy object array of sympy expressions."""
    return np.array(
        sp.Matrix(x).tolist() if np.ndim(x) == 2 else [sp.sympify(v) for v in x], dtype=object
    )


def simplify(e):
    """
    sympy.simplify, after a rewrite in complex exponentials and an expansion.

    Which alone settles these trigonometric identities (half angles included) and is much faster.
    """
    e = sp.sympify(e)
    quick = sp.expand(e.rewrite(sp.exp))
    return sp.simplify(quick) if quick != 0 else quick


def assert_zero(expr, what):
    bad = [
        (k, v)
        for k, v in enumerate(simplify(e) for e in np.asarray(expr, dtype=object).reshape(-1))
        if v != 0
    ]
    assert not bad, f'{what}: nonzero entries (flat index, simplified value) {bad}'


@pytest.fixture(scope='module')
def arm():
    b = RobotBuilder('planar_2R_symbolic')
    b.add_link('ground', mass=m0, inertia=obj(sp.diag(I0z, I0z, I0z)))
    b.add_link(
        'link1', mass=m1, inertia=obj(sp.diag(0, I1, I1)), com=homogeneous(p=obj([lc1, 0, 0]))
    )
    b.add_link(
        'link2', mass=m2, inertia=obj(sp.diag(0, I2, I2)), com=homogeneous(p=obj([lc2, 0, 0]))
    )
    b.add_joint('shoulder', 'revolute', parent='ground', child='link1', axis=[0, 0, 1])
    b.add_joint(
        'elbow',
        'revolute',
        parent='link1',
        child='link2',
        origin=homogeneous(p=obj([l1, 0, 0])),
        axis=[0, 0, 1],
    )
    return b.build()


@pytest.fixture(scope='module')
def chain(arm):
    """Return the symbolic SPART chain, fixed base at the origin (R0 = I, r0 = 0, u0 = 0)."""
    robot = arm
    out = {}
    R0 = obj(sp.eye(3))
    r0 = obj([0, 0, 0])
    qm = obj([q1, q2])
    u0 = obj([0] * 6)
    um = obj([qd1, qd2])
    out['kin'] = RJ, RL, rJ, rL, e, g = spart.Kinematics(R0, r0, qm, robot)
    out['diff'] = Bij, Bi0, P0, pm = spart.DiffKinematics(R0, r0, rL, e, g, robot)
    out['vel'] = t0, tL = spart.Velocities(Bij, Bi0, P0, pm, u0, um, robot)
    out['I'] = I0, Im = spart.I_I(R0, RL, robot)
    out['mcb'] = M0t, Mmt = spart.MCB(I0, Im, Bij, Bi0, robot)
    out['gim'] = spart.GIM(M0t, Mmt, Bij, Bi0, P0, pm, robot)
    out['cim'] = spart.CIM(t0, tL, I0, Im, M0t, Mmt, Bij, Bi0, P0, pm, robot)
    out.update(R0=R0, r0=r0, qm=qm, u0=u0, um=um, robot=robot)
    return out


def test_symbolic_model(arm):
    assert arm.symbolic
    assert arm.n_q == 2 and arm.link_names == ['ground', 'link1', 'link2']


def test_symbolic_kinematics(chain):
    RJ, RL, rJ, rL, e, g = chain['kin']
    c1, s1, c12, s12 = sp.cos(q1), sp.sin(q1), sp.cos(q1 + q2), sp.sin(q1 + q2)
    assert_zero(rL[:, 0] - obj([lc1 * c1, lc1 * s1, 0]), 'rL link1')
    assert_zero(rL[:, 1] - obj([l1 * c1 + lc2 * c12, l1 * s1 + lc2 * s12, 0]), 'rL link2')
    assert_zero(rJ[:, 1] - obj([l1 * c1, l1 * s1, 0]), 'rJ elbow')
    assert_zero(
        RL[:, :, 1] - obj(sp.Matrix([[c12, -s12, 0], [s12, c12, 0], [0, 0, 1]])), 'RL link2'
    )
    assert_zero(e - obj(sp.Matrix([[0, 0], [0, 0], [1, 1]])), 'e')


def test_symbolic_velocities_and_jacobian(chain):
    Bij, Bi0, P0, pm = chain['diff']
    t0, tL = chain['vel']
    RJ, RL, rJ, rL, e, g = chain['kin']
    c1, s1, c12, s12 = sp.cos(q1), sp.sin(q1), sp.cos(q1 + q2), sp.sin(q1 + q2)
    # link 2 CoM velocity and angular velocity
    v2 = obj(
        [
            -(l1 * s1 + lc2 * s12) * qd1 - lc2 * s12 * qd2,
            (l1 * c1 + lc2 * c12) * qd1 + lc2 * c12 * qd2,
            0,
        ]
    )
    assert_zero(tL[3:6, 1] - v2, 'CoM velocity of link2')
    assert_zero(tL[0:3, 1] - obj([0, 0, qd1 + qd2]), 'angular velocity of link2')
    assert_zero(t0, 'base twist')
    # Jacobian of the tip of link 2 (l2 from the elbow)
    rp = rL[:, 1] + RL[:, :, 1] @ obj([l2 - lc2, 0, 0])
    J0, Jm = spart.Jacob(rp, chain['r0'], rL, P0, pm, 2, robot=chain['robot'])
    J_textbook = sp.Matrix(
        [
            [0, 0],
            [0, 0],
            [1, 1],
            [-l1 * s1 - l2 * s12, -l2 * s12],
            [l1 * c1 + l2 * c12, l2 * c12],
            [0, 0],
        ]
    )
    assert_zero(Jm - obj(J_textbook), 'Jm of the tip')
    assert_zero(
        J0 - obj(sp.Matrix(sp.BlockMatrix([[sp.eye(3), sp.zeros(3)], [-_skew(rp), sp.eye(3)]]))),
        'J0 of the tip',
    )


def _skew(v):
    return sp.Matrix([[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]])


def test_symbolic_inertias(chain):
    I0, Im = chain['I']
    c12, s12 = sp.cos(q1 + q2), sp.sin(q1 + q2)
    R = sp.Matrix([[c12, -s12, 0], [s12, c12, 0], [0, 0, 1]])
    assert_zero(Im[:, :, 1] - obj(R * sp.diag(0, I2, I2) * R.T), 'Im link2')
    M0t, Mmt = chain['mcb']
    # composite inertia of link 2 is its own spatial inertia; the mass block of link 1's is m1 + m2
    assert_zero(Mmt[0:3, 0:3, 1] - Im[:, :, 1], 'Mm_tilde link2 rotational block')
    assert_zero(Mmt[3:6, 3:6, 0] - obj((m1 + m2) * sp.eye(3)), 'Mm_tilde link1 mass block')
    assert_zero(M0t[3:6, 3:6] - obj((m0 + m1 + m2) * sp.eye(3)), 'M0_tilde mass block')


def test_symbolic_H_equals_textbook(chain):
    H0, H0m, Hm = chain['gim']
    c2 = sp.cos(q2)
    H11 = I1 + I2 + m1 * lc1**2 + m2 * (l1**2 + lc2**2 + 2 * l1 * lc2 * c2)
    H12 = I2 + m2 * (lc2**2 + l1 * lc2 * c2)
    H22 = I2 + m2 * lc2**2
    textbook = obj(sp.Matrix([[H11, H12], [H12, H22]]))
    assert Hm.shape == (2, 2)
    assert_zero(Hm - textbook, 'Hm - textbook')


def test_symbolic_C_u_equals_textbook_coriolis(chain):
    C0, C0m, Cm0, Cm = chain['cim']
    um = chain['um']
    h = m2 * l1 * lc2 * sp.sin(q2)
    coriolis = obj([-h * (2 * qd1 * qd2 + qd2**2), h * qd1**2])
    assert_zero(Cm @ um - coriolis, 'Cm um - textbook Coriolis/centrifugal vector')
    # Cm + Cm' = d(Hm)/dt along the motion (exact, symbolic)
    H0, H0m, Hm = chain['gim']
    Hdot = sp.Matrix(Hm.tolist()).diff(q1) * qd1 + sp.Matrix(Hm.tolist()).diff(q2) * qd2
    assert_zero(Cm + Cm.T - obj(Hdot), "Cm + Cm' - dHm/dt")


def test_symbolic_matches_numeric(chain, arm):
    """Substituting numbers into the symbolic H gives the numeric H of the same arm."""
    from core_helpers import load_robot

    H0, H0m, Hm = chain['gim']
    values = {
        l1: 1.0,
        lc1: 0.5,
        lc2: 0.4,
        m0: 1.0,
        m1: 2.0,
        m2: 1.5,
        I1: 0.17,
        I2: 0.08,
        q1: 0.3,
        q2: -1.1,
        qd1: 0.7,
        qd2: -0.2,
    }
    Hm_num = np.array(sp.Matrix(Hm.tolist()).subs(values).evalf(), dtype=float)
    robot = load_robot('planar_two_link')  # same arm as URDF (test/data/urdf/planar_two_link.urdf)
    R0, r0 = np.eye(3), np.zeros(3)
    RJ, RL, rJ, rL, e, g = spart.Kinematics(R0, r0, [0.3, -1.1], robot)
    Bij, Bi0, P0, pm = spart.DiffKinematics(R0, r0, rL, e, g, robot)
    I0, Im = spart.I_I(R0, RL, robot)
    M0t, Mmt = spart.MCB(I0, Im, Bij, Bi0, robot)
    np.testing.assert_allclose(spart.GIM(M0t, Mmt, Bij, Bi0, P0, pm, robot)[2], Hm_num, rtol=1e-12)


def _floats(*arrays):
    found = set()
    for a in arrays:
        for e in np.asarray(a, dtype=object).reshape(-1):
            found |= sp.sympify(e).atoms(sp.Float)
    return found


def test_homogeneous_keeps_exact_entries():
    """
    homogeneous() keeps exact entries: no float 1.0 / 0.0 in the object array.

    With a symbolic translation and no rotation (as RobotBuilder's docstring suggests),
    homogeneous() must not put float 1.0 / 0.0 into the object array.
    """
    T = homogeneous(p=obj([l1, 0, 0]))
    assert T.dtype == object
    assert not _floats(T), f'homogeneous(p=[l1, 0, 0]) holds floats {_floats(T)}'
    T = homogeneous(obj(sp.eye(3)), None)
    assert not _floats(T), f'homogeneous(R, None) holds floats {_floats(T)}'


def test_exact_sympy_numbers_in_a_symbolic_model_stay_exact():
    """
    Exact sympy numbers in a symbolic model stay exact.

    Arrays of exact sympy numbers (no symbol) in a symbolic model are checked as numbers (a
    rotation, finite) but kept exact: no Float in the model or the outputs.
    """
    half = sp.Rational(1, 2)
    b = RobotBuilder('exact_numbers')
    b.add_link(
        'base',
        mass=m0,
        inertia=obj(sp.diag(sp.Rational(1, 12), sp.Rational(1, 12), sp.Rational(1, 6))),
    )
    b.add_link(
        'arm', mass=m1, inertia=obj(sp.diag(0, I1, I1)), com=homogeneous(p=obj([half, 0, 0]))
    )
    c, s_ = sp.sqrt(2) / 2, sp.sqrt(2) / 2
    turn = obj(sp.Matrix([[c, -s_, 0], [s_, c, 0], [0, 0, 1]]))
    b.add_joint(
        'j',
        'revolute',
        parent='base',
        child='arm',
        origin=homogeneous(turn, obj([half, 0, 0])),
        axis=[0, 0, 1],
    )
    robot = b.build()
    assert not _floats(
        robot.base_link.inertia, *[j.T for j in robot.joints], *[link.T for link in robot.links]
    )
    RJ, RL, rJ, rL, e, g = spart.Kinematics(obj(sp.eye(3)), obj([0, 0, 0]), obj([q1]), robot)
    assert not _floats(RJ, RL, rJ, rL), 'floats in Kinematics of an exact model'
    with pytest.raises(ModelError, match='rotation'):  # still checked as a rotation
        b2 = RobotBuilder('not_rigid')
        b2.add_link('base', mass=m0, inertia=obj(sp.eye(3)))
        b2.add_link('arm', mass=m1, inertia=obj(sp.eye(3)))
        b2.add_joint(
            'j',
            'revolute',
            parent='base',
            child='arm',
            origin=homogeneous(obj(2 * sp.eye(3)), None),
            axis=[0, 0, 1],
        )


def test_symbolic_results_are_exact(chain, arm):
    """
    Exact expressions: no sympy Float anywhere in the model or the chain's outputs.

    A 1.0 from a float identity or a float axis turns I1 into 1.0*I1 and defeats sympy.simplify.
    """
    where = {}
    where['robot transforms and axes'] = _floats(
        arm.base_link.T,
        *[link.T for link in arm.links],
        *[j.T for j in arm.joints],
        *[j.axis for j in arm.joints],
    )
    for key, name in (
        ('kin', 'Kinematics'),
        ('diff', 'DiffKinematics'),
        ('vel', 'Velocities'),
        ('I', 'I_I'),
        ('mcb', 'MCB'),
        ('gim', 'GIM'),
        ('cim', 'CIM'),
    ):
        where[name] = _floats(*chain[key])
    bad = {k: sorted(float(f) for f in v) for k, v in where.items() if v}
    assert not bad, f'floats in symbolic results: {bad}'
