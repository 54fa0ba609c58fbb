"""
spart_ros.kinematic_tree against Exudyn's own module (``exudyn.kinematicTree``, exudyn on PyPI).

Random trees with every joint type, parents in any order, gravity, velocities; both classes
and every function, to 1e-9 (rounding shows at 1e-14).  Where Exudyn's Python module is wrong
the test shows that it is, and that this module agrees with what Exudyn gets right:

- Exudyn's KinematicTree66 moves a prismatic joint by -q (its motion subspace says +q): its
  M and f at q equal ours at q with the prismatic coordinates negated, and so do Exudyn's own
  KinematicTree33's, which moves it by +q;
- Exudyn's KinematicTree33 takes the last link's mass for every prismatic joint's composite
  mass: its f and the mass matrix's revolute rows and columns equal ours, the prismatic ones
  differ from its own KinematicTree66's;
- Exudyn's AddExternalForces multiplies transforms element by element below the first link:
  on a star (every parent the base) it is right and equals ours; on deep trees ours equals
  spatial_v2's external forces (checked against Pinocchio in test_spatial_v2.py) with Exudyn's
  sign.
"""

import os
import warnings

import numpy as np
import pytest
from spart_ros import kinematic_tree as kt
from spart_ros import spatial_v2 as sv
from spart_ros.core.errors import InputError, ModelError

HERE = os.path.dirname(os.path.abspath(__file__))
TYPES = ('Rx', 'Ry', 'Rz', 'Px', 'Py', 'Pz')
GRAVITY = [0.3, -0.7, -9.81]


@pytest.fixture(scope='module')
def exu():
    import exudyn.kinematicTree as ekt
    import exudyn.rigidBodyUtilities as erb

    return ekt, erb


def _rotation(rng):
    Q, R = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q * np.sign(np.diag(R))
    return Q if np.linalg.det(Q) > 0 else -Q


def _lists(rng, n, star=False):
    """Random tree in both of Exudyn's forms (the same bodies, frames and joints)."""
    types = [TYPES[i % 6] for i in range(n)]
    rng.shuffle(types)
    parents = [-1] + [-1 if star else int(rng.integers(-1, i)) for i in range(1, n)]
    A = [_rotation(rng) for _ in range(n)]
    p = [rng.normal(size=3) * 0.4 for _ in range(n)]
    m = [float(x) for x in rng.uniform(0.5, 3.0, n)]
    c = [rng.normal(size=3) * 0.2 for _ in range(n)]
    about_com = []
    for _ in range(n):
        R, (a, b, d) = _rotation(rng), rng.uniform(0.5, 2.0, 3)
        box = np.array([b * b + d * d, a * a + d * d, a * a + b * b]) / 12
        about_com.append(R @ np.diag(box) @ R.T)
    return types, parents, A, p, m, c, about_com


def _trees(exu, lists):
    """(Exudyn's KT66, ours, Exudyn's KT33, ours) of the same lists."""
    ekt, erb = exu
    types, parents, A, p, m, c, Ic = lists
    n = len(types)
    X = [erb.RotationTranslation2T66Inverse(A[i], p[i]) for i in range(n)]
    I6 = [ekt.MassCOMinertia2T66(m[i], c[i], Ic[i]) for i in range(n)]
    I3 = [Ic[i] + m[i] * erb.Skew(c[i]) @ erb.Skew(c[i]).T for i in range(n)]  # about p
    args66 = (types, X, I6, parents, GRAVITY)
    args33 = (types, A, p, I3, c, m, parents, GRAVITY)
    return (
        ekt.KinematicTree66(*args66),
        kt.KinematicTree66(*args66),
        ekt.KinematicTree33(*args33),
        kt.KinematicTree33(*args33),
    )


def _close(a, b, tol=1e-9):
    a, b = np.asarray(a, float), np.asarray(b, float)
    assert np.abs(a - b).max() <= tol * max(1.0, np.abs(b).max()), np.abs(a - b).max()


def test_functions_equal_exudyns(exu):
    ekt, erb = exu
    rng = np.random.default_rng(1)
    for name in (
        'RotationX2T66Inverse',
        'RotationY2T66Inverse',
        'RotationZ2T66Inverse',
        'TranslationX2T66Inverse',
        'TranslationY2T66Inverse',
        'TranslationZ2T66Inverse',
    ):
        x = float(rng.normal())
        _close(getattr(kt, name)(x), getattr(ekt, name)(x), 1e-15)
    v = rng.normal(size=6)
    _close(kt.CRM(v), ekt.CRM(v), 0.0)
    _close(kt.CRF(v), ekt.CRF(v), 0.0)
    m, c, R = 2.5, rng.normal(size=3), _rotation(rng)
    inertia = R @ np.diag([0.3, 0.4, 0.5]) @ R.T
    I6 = ekt.MassCOMinertia2T66(m, c, inertia)
    _close(kt.MassCOMinertia2T66(m, c, inertia), I6, 1e-15)
    for ours, theirs in zip(kt.Inertia66toMassCOMinertia(I6), ekt.Inertia66toMassCOMinertia(I6)):
        _close(ours, theirs, 1e-14)
    body = erb.InertiaCuboid(800.0, [0.1, 0.2, 0.3]).Rotated(R).Translated([0.1, -0.2, 0.05])
    _close(kt.Inertia2T66(body), ekt.Inertia2T66(body), 1e-14)
    for t in TYPES:
        for q in (0.4, -1.3):
            ours = kt.JointTransformMotionSubspace(t, q)
            for a, b in zip(ours, ekt.JointTransformMotionSubspace(t, q)):
                _close(a, b, 1e-15)
            T, MS = kt.JointTransformMotionSubspace66(t, q)
            _close(MS, ekt.JointTransformMotionSubspace66(t, q)[1], 0.0)
            flipped = -q if t[0] == 'P' else q  # Exudyn's 66 form moves a slider by -q
            _close(T, ekt.JointTransformMotionSubspace66(t, flipped)[0], 1e-15)
            # the 66 form is the 33 form's: rotation block A, translation p
            A, v = ours[0], ours[1]
            _close(T, sv.plux(A, v), 1e-15)


def test_trees_equal_exudyns_on_random_trees(exu):
    rng = np.random.default_rng(2)
    for n in (7, 12):
        lists = _lists(rng, n)
        e66, o66, e33, o33 = _trees(exu, lists)
        types = lists[0]
        flip = np.array([-1.0 if t[0] == 'P' else 1.0 for t in types])
        slider = flip < 0
        q, qd, tau = rng.normal(size=(3, n))
        M, f = o66.ComputeMassMatrixAndForceTerms(q, qd)
        Me, fe = e66.ComputeMassMatrixAndForceTerms(q * flip, qd)
        _close(M, Me)
        _close(f, fe)
        M3, f3 = o33.ComputeMassMatrixAndForceTerms(q, qd)
        M3e, f3e = e33.ComputeMassMatrixAndForceTerms(q, qd)
        _close(M3, M, 1e-12)  # our two forms: the same tree
        _close(f3, f, 1e-12)
        _close(f3e, f)  # Exudyn's 33 form moves sliders by +q, as ours
        revolute = np.ix_(~slider, ~slider)
        _close(M3e[revolute], M[revolute])
        assert np.abs(M3e[:, slider] - Me[:, slider]).max() > 1e-3  # Exudyn's own two disagree
        _close(o66.ForwardDynamicsCRB(q, qd, tau), e66.ForwardDynamicsCRB(q * flip, qd, tau))
        _close(o66.ForwardDynamicsCRB(q, qd), e66.ForwardDynamicsCRB(q * flip, qd))
        _close(o33.ForwardDynamicsCRB(q, qd, tau), np.linalg.solve(M, tau - f))
        assert o66.Size() == o33.Size() == e66.Size() == n
        for i in (0, n - 1):
            _close(o66.XL(i), e66.XL(i), 0.0)
            for a, b in zip(o33.XL(i), e33.XL(i)):
                _close(a, b, 0.0)
        assert list(o66.parents) == list(e66.parents)


def test_external_forces(exu):
    rng = np.random.default_rng(3)
    n = 6
    lists = _lists(rng, n, star=True)  # Exudyn's AddExternalForces is right on a star
    e66, o66, _, o33 = _trees(exu, lists)
    flip = np.array([-1.0 if t[0] == 'P' else 1.0 for t in lists[0]])
    q, qd = rng.normal(size=(2, n))
    forces = [rng.normal(size=6) for _ in range(n)]
    _, f = o66.ComputeMassMatrixAndForceTerms(q, qd, forces)
    _close(f, e66.ComputeMassMatrixAndForceTerms(q * flip, qd, forces)[1])
    Xup = [rng.normal(size=(6, 6)) + 3 * np.eye(6) for _ in range(n)]
    fvp = [rng.normal(size=6) for _ in range(n)]
    ours = o66.AddExternalForces(Xup, fvp, forces)
    theirs = e66.AddExternalForces(Xup, [x.copy() for x in fvp], forces)
    for a, b in zip(ours, theirs):
        _close(a, b)
    # deep trees: Exudyn's sign, spatial_v2's forces (Pinocchio-checked); columns are summed
    lists = _lists(rng, 8)
    _, o66, _, o33 = _trees(exu, lists)
    q, qd, tau = rng.normal(size=(3, 8))
    forces = [rng.normal(size=(6, 2)) for _ in range(8)]
    f_ext = [-F.sum(axis=1) for F in forces]
    model = o66._sv()
    H, C = sv.HandC(model, q, qd, f_ext)
    for tree in (o66, o33):
        M, f = tree.ComputeMassMatrixAndForceTerms(q, qd, forces)
        _close(M, H)
        _close(f, C)
        _close(tree.ForwardDynamicsCRB(q, qd, tau, forces), sv.FDab(model, q, qd, tau, f_ext))


def test_lists_from_urdf():
    """Both forms of a URDF robot are its spatial_v2 model (Pinocchio-checked there)."""
    path = os.path.join(HERE, 'data', 'urdf', 'branched_two_arm_spacecraft.urdf')
    rng = np.random.default_rng(4)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        model = sv.model_from_urdf(path, gravity=GRAVITY)
        t66 = kt.KinematicTree66(**kt.lists_from_urdf(path, gravity=GRAVITY))
        t33 = kt.KinematicTree33(**kt.lists_from_urdf(path, form=33, gravity=GRAVITY))
    q, qd = rng.normal(size=(2, model.NB))
    H, C = sv.HandC(model, q, qd)
    for tree in (t66, t33):
        M, f = tree.ComputeMassMatrixAndForceTerms(q, qd)
        _close(M, H, 1e-12)
        _close(f, C, 1e-12)
    assert list(t66.parents) == [p - 1 for p in model.parent]


def test_bad_trees_name_the_list_and_link(exu):
    rng = np.random.default_rng(5)
    types, parents, A, p, m, c, Ic = _lists(rng, 3)
    X = [sv.plux(a.T, r) for a, r in zip(A, p)]
    I6 = [sv.mcI(mi, ci, Ii) for mi, ci, Ii in zip(m, c, Ic)]
    with pytest.raises(ModelError, match=r'listOfParents\[1\] = 1: link / parent indices'):
        kt.KinematicTree66(types, X, I6, [-1, 1, 0])
    with pytest.raises(ModelError, match='length of inertias'):
        kt.KinematicTree66(types, X, I6[:2])
    with pytest.raises(InputError, match=r'listOfJointTypes\[2\]: expected a joint type'):
        kt.KinematicTree66(['Rx', 'Ry', 'Sz'], X, I6)
    bent = X[1].copy()
    bent[0, 5] = 1.0
    with pytest.raises(InputError, match=r'listOfTransformations\[1\] \(link 1\): not a Pluecker'):
        kt.KinematicTree66(types, [X[0], bent, X[2]], I6)
    with pytest.raises(InputError, match=r'listOfRotations\[0\] \(link 0\): expected a rotation'):
        kt.KinematicTree33(types, [2 * A[0], A[1], A[2]], p, Ic, c, m)
    with pytest.raises(InputError, match=r'listOfMass\[1\]'):
        kt.KinematicTree33(types, A, p, Ic, c, [1.0, -1.0, 1.0])
    tree = kt.KinematicTree66(types, X, I6)  # a chain: parents -1, 0, 1
    assert tree.parents == (-1, 0, 1)
    with pytest.raises(InputError, match='externalForces: expected an empty list or one entry'):
        tree.ComputeMassMatrixAndForceTerms(np.zeros(3), np.zeros(3), [np.zeros(6)])
    with pytest.raises(TypeError):
        tree.inertias[0] = I6[1]  # read-only: set the whole list again
    M1 = tree.ComputeMassMatrixAndForceTerms(np.zeros(3), np.zeros(3))[0]
    tree.inertias = [I6[0], I6[1], 2 * I6[2]]
    M2 = tree.ComputeMassMatrixAndForceTerms(np.zeros(3), np.zeros(3))[0]
    assert np.abs(M2 - M1).max() > 1e-6  # the model was rebuilt
    with pytest.raises(InputError, match='RigidBodyInertia'):
        kt.Inertia2T66(np.eye(6))
