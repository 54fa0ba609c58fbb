"""
spart_ros.spatial_v2: spatial_v2's interface against Pinocchio, closed forms and the course.

- the transforms, mcI, crm/crf, jcalc, rq against Pinocchio's SE3, Inertia and Quaternion (their
  Pluecker matrices reordered [angular; linear]), the spatial cross products against 3D vector
  algebra, jcalc's S and rqd against finite differences;
- ID, HandC, FDab, FDcrb and HCcalc against Pinocchio on random trees with every joint type
  (Rx ... Pz, the aliases R and P, helical H), parents in any order, gravity and external
  forces, the Pinocchio model built here from the same lists (its own placements, joint models
  and inertias: nothing of spart_ros but the random numbers);
- a model from URDFs (fixed joints merged, tilted and negative axes, prismatic joints, a mimic
  joint taken as independent) against Pinocchio's own URDF loader;
- the course's tree sets on its example lambda = [0, 1, 1, 3, 3] and on random trees;
- the course's rolling cone and spinning top (examples/) against their closed forms.
"""

import importlib.util
import math
import os
from types import SimpleNamespace
import warnings

import numpy as np
import pytest
from spart_ros import spatial_v2 as sv
from spart_ros.core.errors import InputError, ModelError, SingularModelError

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
P = np.r_[3:6, 0:3]  # Pinocchio's [linear; angular] <-> spatial_v2's [angular; linear]
CODES = ('Rx', 'Ry', 'Rz', 'Px', 'Py', 'Pz', 'R', 'P', 'H')


def _rotation(rng):
    Q, R = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q * np.sign(np.diag(R))
    return Q if np.linalg.det(Q) > 0 else -Q


def _random_model(rng, NB, star=False):
    """Random tree: every joint code, parents in any order below each body, random frames."""
    parent = [0] + [0 if star else int(rng.integers(0, i)) for i in range(2, NB + 1)]
    jtype = []
    for i in range(NB):
        code = CODES[i % len(CODES)]
        pitch = float(rng.uniform(-0.2, 0.2))
        jtype.append({'code': 'H', 'pars': {'pitch': pitch}} if code == 'H' else code)
    Xtree = [sv.plux(_rotation(rng), rng.normal(size=3) * 0.4) for _ in range(NB)]
    inertias = []
    for _ in range(NB):
        R, (a, b, c) = _rotation(rng), rng.uniform(0.5, 2.0, 3)
        moments = np.array([b * b + c * c, a * a + c * c, a * a + b * b]) / 12  # a box's
        inertias.append(
            sv.mcI(rng.uniform(0.5, 3.0), rng.normal(size=3) * 0.3, R @ np.diag(moments) @ R.T)
        )
    return sv.Model(
        NB=NB, parent=parent, jtype=jtype, Xtree=Xtree, I=inertias, gravity=[0.4, -1.1, -9.81]
    )


def _pinocchio(model):
    """Return a Pinocchio model of a spatial_v2 model, built from its fields alone."""
    import pinocchio as pin

    pm = pin.Model()
    pm.gravity.linear = np.array(model.gravity)
    ids = [0]
    joints = {
        'Rx': pin.JointModelRX,
        'Ry': pin.JointModelRY,
        'Rz': pin.JointModelRZ,
        'R': pin.JointModelRZ,
        'Px': pin.JointModelPX,
        'Py': pin.JointModelPY,
        'Pz': pin.JointModelPZ,
        'P': pin.JointModelPZ,
    }
    for i in range(model.NB):
        X = model.Xtree[i]
        E = X[:3, :3]
        rx = -E.T @ X[3:, :3]
        placement = pin.SE3(E.T, np.array([rx[2, 1], rx[0, 2], rx[1, 0]]))
        j = model.jtype[i]
        if isinstance(j, str):
            jm = joints[j]()
        else:
            jm = pin.JointModelHelicalUnaligned(np.array([0.0, 0.0, 1.0]), j['pars']['pitch'])
        jid = pm.addJoint(ids[model.parent[i]], jm, placement, f'joint{i + 1}')
        rbi = model.I[i]
        m = rbi[5, 5]
        c = np.array([rbi[2, 4], rbi[0, 5], rbi[1, 3]]) / m
        Ic = rbi[:3, :3] - m * (np.dot(c, c) * np.eye(3) - np.outer(c, c))
        pm.appendBodyToJoint(jid, pin.Inertia(m, c, Ic), pin.SE3.Identity())
        ids.append(jid)
    return pm, ids


def _pin_forces(pm, pd, ids, q, f_ext):
    """f_ext (base coordinates, [n; f]) as Pinocchio's per-joint forces (local frames)."""
    import pinocchio as pin

    pin.forwardKinematics(pm, pd, q)
    fs = pin.StdVec_Force()
    fs.append(pin.Force.Zero())
    for i, f in enumerate(f_ext):
        fs.append(
            pin.Force.Zero() if f is None else pd.oMi[ids[i + 1]].actInv(pin.Force(f[3:], f[:3]))
        )
    return fs


def _close(a, b, tol=1e-9):
    a, b = np.asarray(a), np.asarray(b)
    assert np.abs(a - b).max() <= tol * max(1.0, np.abs(b).max()), np.abs(a - b).max()


@pytest.fixture(scope='module')
def trees():
    rng = np.random.default_rng(39)
    return [(_random_model(rng, NB), rng) for NB in (9, 12)] + [
        (_random_model(rng, 6, star=True), rng)
    ]


# --- arithmetic --------------------------------------------------------------------------------


def test_transforms_and_inertia_equal_pinocchio():
    import pinocchio as pin

    rng = np.random.default_rng(1)
    for _ in range(5):
        R, p = _rotation(rng), rng.normal(size=3)
        X = sv.plux(R.T, p)  # A -> a frame B at p, oriented R in A
        _close(X, pin.SE3(R, p).inverse().toActionMatrix()[np.ix_(P, P)], 1e-14)
        E, r = sv.plux(X)
        _close(E, R.T, 1e-14)
        _close(r, p, 1e-14)
        t = float(rng.uniform(-3, 3))
        for X_sv, axis in ((sv.Xrotx, 'x'), (sv.Xroty, 'y'), (sv.Xrotz, 'z')):
            M = pin.SE3(pin.utils.rotate(axis, t), np.zeros(3)).inverse()
            _close(X_sv(t), M.toActionMatrix()[np.ix_(P, P)], 1e-14)
        _close(sv.Xtrans(p), pin.SE3(np.eye(3), p).inverse().toActionMatrix()[np.ix_(P, P)])
        _close(sv.plux(R.T, p), sv.plux(R.T, np.zeros(3)) @ sv.Xtrans(p), 1e-14)
        m, c, Ic = float(rng.uniform(0.1, 5)), rng.normal(size=3), R @ np.diag([1, 2, 2.5]) @ R.T
        _close(sv.mcI(m, c, Ic), pin.Inertia(m, c, Ic).matrix()[np.ix_(P, P)], 1e-14)
        m2, c2, I2 = sv.mcI(sv.mcI(m, c, Ic))
        _close([m2], [m], 1e-14)
        _close(c2, c, 1e-13)
        _close(I2, Ic, 1e-13)
    assert sv.rotx is sv.Xrotx and sv.xlt is sv.Xtrans


def test_cross_products_are_the_spatial_cross_products():
    rng = np.random.default_rng(2)
    v, m, f = rng.normal(size=(3, 6))
    w, u = v[:3], v[3:]
    _close(sv.crm(v) @ m, np.r_[np.cross(w, m[:3]), np.cross(w, m[3:]) + np.cross(u, m[:3])])
    _close(sv.crf(v) @ f, np.r_[np.cross(w, f[:3]) + np.cross(u, f[3:]), np.cross(w, f[3:])])
    _close(sv.crf(v), -sv.crm(v).T, 0.0)
    _close(sv.crm(v) @ v, np.zeros(6), 1e-15)
    # the power of a force on a motion is invariant: m . crf(v) f = -(crm(v) m) . f
    assert abs(m @ sv.crf(v) @ f + (sv.crm(v) @ m) @ f) < 1e-13
    planar = rng.normal(size=3)
    _close(sv.crf(planar), -sv.crm(planar).T, 0.0)
    _close(sv.crm(planar) @ planar, np.zeros(3), 1e-15)


@pytest.mark.parametrize('code', CODES)
def test_jcalc_motion_subspace_is_the_transform_derivative(code):
    """d/dq Xj = -crm(S) Xj (Featherstone's joint kinematics), by central differences."""
    jtyp = {'code': 'H', 'pars': {'pitch': 0.15}} if code == 'H' else code
    q, h = 0.7, 1e-6
    Xj, S = sv.jcalc(jtyp, q)
    dX = (sv.jcalc(jtyp, q + h)[0] - sv.jcalc(jtyp, q - h)[0]) / (2 * h)
    _close(dX @ np.linalg.inv(Xj), -sv.crm(S), 1e-8)
    _close(sv.jcalc(jtyp, 0.0)[0], np.eye(6), 0.0)
    assert np.count_nonzero(S) == (2 if code == 'H' else 1)


def test_rq_and_rqd():
    import pinocchio as pin

    rng = np.random.default_rng(3)
    for _ in range(5):
        q = rng.normal(size=4)
        q /= np.linalg.norm(q)
        R = pin.Quaternion(q[0], q[1], q[2], q[3]).toRotationMatrix()  # (w, x, y, z)
        E = sv.rq(q)
        _close(E, R.T, 1e-14)  # E: A coordinates -> B coordinates
        _close(sv.rq(E), q * np.sign(q[0]), 1e-14)
        wB = rng.normal(size=3)
        wA = R @ wB
        _close(sv.rqd(q, wB), sv.rqd(wA, q), 1e-14)
        h = 1e-6
        dE = (sv.rq(q + h * sv.rqd(q, wB)) - sv.rq(q - h * sv.rqd(q, wB))) / (2 * h)
        skew = np.array([[0, -wB[2], wB[1]], [wB[2], 0, -wB[0]], [-wB[1], wB[0], 0]])
        _close(dE, -skew @ E, 1e-8)  # dE/dt = -[wB]x E
        long = 1.05 * q  # the stabilizing term pulls |q| back towards 1
        assert long @ sv.rqd(long, wB) < 0 < (0.95 * q) @ sv.rqd(0.95 * q, wB)


# --- dynamics against Pinocchio ------------------------------------------------------------------


def test_dynamics_equal_pinocchio_on_random_trees(trees):
    import pinocchio as pin

    for model, rng in trees:
        pm, ids = _pinocchio(model)
        pd = pm.createData()
        pm0 = pm.copy()
        pm0.gravity.linear[:] = 0.0
        pd0 = pm0.createData()
        NB = model.NB
        q, qd, qdd, tau = rng.normal(size=(4, NB))
        f_ext = [rng.normal(size=6) if i % 3 else None for i in range(NB)]
        fs = _pin_forces(pm, pd, ids, q, f_ext)
        H_pin = np.column_stack([pin.rnea(pm0, pd0, q, np.zeros(NB), e) for e in np.eye(NB)])
        C_pin = pin.rnea(pm, pd, q, qd, np.zeros(NB), fs)
        _close(sv.ID(model, q, qd, qdd), pin.rnea(pm, pd, q, qd, qdd))
        _close(sv.ID(model, q, qd, qdd, f_ext), pin.rnea(pm, pd, q, qd, qdd, fs))
        H, C = sv.HandC(model, q, qd, f_ext)
        _close(H, H_pin)
        _close(C, C_pin)
        H2, C2 = sv.HCcalc(model, q, qd, f_ext)
        _close(H2, H_pin)
        _close(C2, C_pin)
        qdd_pin = pin.aba(pm, pd, q, qd, tau, fs)
        _close(sv.FDab(model, q, qd, tau, f_ext), qdd_pin)
        _close(sv.FDcrb(model, q, qd, tau, f_ext), qdd_pin)
        _close(sv.FDab(model, q, qd, tau), pin.aba(pm, pd, q, qd, tau))


# a base mounted tilted on a world link (gravity given in the world frame), a tilted axis
MOUNTED = """<robot name="mounted">
  <link name="world"/>
  <joint name="mount" type="fixed"><parent link="world"/><child link="base"/>
    <origin xyz="0.1 0.2 0.3" rpy="0.4 -0.3 0.2"/></joint>
  <link name="base"><inertial><mass value="2"/>
    <inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j1" type="revolute"><parent link="base"/><child link="l1"/>
    <origin xyz="0 0 0.2" rpy="0.1 0.2 0.3"/><axis xyz="0 -0.6 0.8"/>
    <limit lower="-3" upper="3" effort="10" velocity="1"/></joint>
  <link name="l1"><inertial><origin xyz="0.2 0 0.1" rpy="0.3 0 0"/><mass value="1.5"/>
    <inertia ixx="0.02" iyy="0.03" izz="0.04" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="j2" type="prismatic"><parent link="l1"/><child link="l2"/>
    <origin xyz="0.4 0 0"/><axis xyz="-1 0 0"/>
    <limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
  <link name="l2"><inertial><mass value="0.7"/>
    <inertia ixx="0.01" iyy="0.01" izz="0.01" ixy="0" ixz="0" iyz="0"/></inertial></link>
</robot>"""


def test_model_from_urdf_equals_pinocchios_urdf_loader():
    """Fixed joints merged, tilted/negative axes aligned, prismatic joints, a mimic joint."""
    import pinocchio as pin
    from pinocchio_oracle import prepare_urdf_for_pinocchio

    rng = np.random.default_rng(4)
    g = np.array([0.3, 0.2, -9.81])
    texts = []
    for name in ('branched_two_arm_spacecraft', 'panda'):
        with open(os.path.join(HERE, 'data', 'urdf', f'{name}.urdf'), encoding='utf-8') as f:
            texts.append(f.read())
    for text, NB, codes in zip(texts + [MOUNTED], (8, 9, 2), ({'Rx', 'Pz'}, {'Py'}, {'Pz'})):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')  # panda's mimic joint: independent here
            model = sv.model_from_urdf(text, gravity=g)
        assert model.NB == NB and len(model.names) == NB and codes <= set(model.jtype)
        pm = pin.buildModelFromXML(prepare_urdf_for_pinocchio(text))
        pm.gravity.linear = g  # the world's (MOUNTED's base is tilted in it)
        pd = pm.createData()
        q, qd, qdd = rng.uniform(-1, 1, (3, NB))
        qp, vp, ap, iv = pin.neutral(pm), np.zeros(pm.nv), np.zeros(pm.nv), []
        for k, joint in enumerate(model.joint_names):
            j = pm.joints[pm.getJointId(joint)]
            if j.nq == 2:  # continuous: (cos, sin)
                qp[j.idx_q : j.idx_q + 2] = math.cos(q[k]), math.sin(q[k])
            else:
                qp[j.idx_q] = q[k]
            vp[j.idx_v], ap[j.idx_v] = qd[k], qdd[k]
            iv.append(j.idx_v)
        _close(sv.ID(model, q, qd, qdd), pin.rnea(pm, pd, qp, vp, ap)[iv])
        H, C = sv.HandC(model, q, qd)
        M = pin.crba(pm, pd, qp)
        _close(H, (np.triu(M) + np.triu(M, 1).T)[np.ix_(iv, iv)])
        _close(C, pin.nonLinearEffects(pm, pd, qp, vp)[iv])


# --- the model -------------------------------------------------------------------------------


def test_model_fields_dict_and_one_by_one():
    rng = np.random.default_rng(5)
    model = _random_model(rng, 4)
    fields = {key: getattr(model, key) for key in sv.Model.FIELDS}
    q, qd, qdd = rng.normal(size=(3, 4))
    tau = sv.ID(model, q, qd, qdd)
    _close(sv.ID(fields, q, qd, qdd), tau, 0.0)  # a dict of the fields is a model
    m2 = sv.Model()  # a MATLAB script fills its struct field by field
    for key, value in fields.items():
        setattr(m2, key, value)
    _close(sv.ID(m2, q, qd, qdd), tau, 0.0)
    m2.gravity = [0.0, 0.0, 0.0]  # a new field rebuilds the compiled model
    _close(sv.ID(m2, q, qd, qdd), tau - sv.HandC(model, q, np.zeros(4))[1], 1e-9)
    with pytest.raises(TypeError):
        m2.Xtree[0] = np.eye(6)  # read-only: set the whole list again
    with pytest.raises(ValueError, match='read-only'):
        m2.I[0][0, 0] = 1.0
    model.appearance = {'base': []}  # showmotion's fields are kept, unused
    assert sv.ID(model, q, qd, qdd) is not None
    helical = {'code': 'H', 'pars': {'pitch': 0.1}}  # a MATLAB struct: a dict or an object
    m2.jtype = [SimpleNamespace(code='H', pars=SimpleNamespace(pitch=0.1))] + list(model.jtype[1:])
    model.jtype = [helical] + list(model.jtype[1:])
    m2.gravity = model.gravity
    _close(sv.ID(m2, q, qd, qdd), sv.ID(model, q, qd, qdd), 0.0)
    assert m2.jtype[0] == helical  # stored as a read-only structure


def test_bad_models_and_inputs_name_the_problem():
    eye = np.eye(6)
    body = sv.mcI(1.0, [0.1, 0, 0], np.eye(3) * 0.1)
    with pytest.raises(ModelError, match='parent: body 2 has parent 2'):
        sv.Model(parent=[0, 2])
    with pytest.raises(ModelError, match=r"jtype\[1\] \(body 2\): unrecognised joint code 'Rw'"):
        sv.Model(jtype=['Rx', 'Rw'])
    with pytest.raises(ModelError, match='planar'):
        sv.Model(jtype=['r'])
    with pytest.raises(InputError, match='pitch'):
        sv.jcalc({'code': 'H', 'pars': {}}, 0.1)
    bent = eye.copy()
    bent[0, 4] = 0.5
    with pytest.raises(InputError, match=r'Xtree\[0\] \(body 1\): not a Pluecker'):
        sv.Model(Xtree=[bent])
    bad = body.copy()
    bad[3, 3] = 2.0
    with pytest.raises(InputError, match=r'I\[0\] \(body 1\): not a rigid-body spatial inertia'):
        sv.Model(I=[bad])
    with pytest.raises(ModelError, match='gamma_q'):
        sv.Model(gamma_q=lambda q: q)
    model = sv.Model(NB=2, parent=[0, 1], jtype=['Rz', 'Px'], Xtree=[eye, eye], I=[body])
    with pytest.raises(ModelError, match='I: 1 entries for NB = 2'):
        sv.ID(model, [0, 0], [0, 0], [0, 0])
    model.I = [body, body]  # noqa: E741 (spatial_v2's field)
    with pytest.raises(InputError, match='qd'):
        sv.ID(model, [0, 0], [0, 0, 0], [0, 0])
    with pytest.raises(InputError, match='f_ext: expected an empty list or NB = 2'):
        sv.ID(model, [0, 0], [0, 0], [0, 0], [np.zeros(6)])
    with pytest.raises(InputError, match=r'f_ext\[1\] \(body 2\)'):
        sv.ID(model, [0, 0], [0, 0], [0, 0], [None, np.zeros(5)])
    model.I = [body, np.zeros((6, 6))]  # noqa: E741 (the slider moves nothing with mass)
    with pytest.raises(SingularModelError, match='joint2'):
        sv.FDab(model, [0, 0], [0, 0], [0, 0])
    with pytest.raises(SingularModelError, match='joint2'):
        sv.FDcrb(model, [0, 0], [0, 0], [0, 0])
    with pytest.raises(InputError, match='model: expected a spatial_v2 Model'):
        sv.ID([1, 2], [0], [0], [0])


# --- the course's tree sets ----------------------------------------------------------------------


def test_tree_sets_of_the_courses_example():
    lam = [0, 1, 1, 3, 3]
    assert sv.kappa(lam) == [[1], [1, 2], [1, 3], [1, 3, 4], [1, 3, 5]]
    assert sv.mu(lam) == [[1], [2, 3], [], [4, 5], [], []]  # mu[0]: the base's children
    assert sv.nu(lam) == [[1, 2, 3, 4, 5], [2], [3, 4, 5], [4], [5]]
    assert sv.depth(lam) == [1, 2, 2, 3, 3]
    with pytest.raises(ModelError, match='body 3 has parent 3'):
        sv.kappa([0, 1, 3])


def test_tree_sets_agree_with_each_other_on_random_trees():
    rng = np.random.default_rng(6)
    for NB in (1, 7, 15):
        lam = [int(rng.integers(0, i)) for i in range(1, NB + 1)]
        k, m, n, d = sv.kappa(lam), sv.mu(lam), sv.nu(lam), sv.depth(lam)
        for i in range(1, NB + 1):
            for j in range(1, NB + 1):
                assert (j in k[i - 1]) == (i in n[j - 1])  # j supports i <=> i in j's subtree
            assert m[lam[i - 1]].count(i) == 1 and d[i - 1] == len(k[i - 1])
            assert k[i - 1][-1] == i and (lam[i - 1] == 0) == (d[i - 1] == 1)
        assert sum(len(c) for c in m) == NB


# --- the course's simulations --------------------------------------------------------------------


def _example(name):
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(ROOT, 'examples', f'{name}.py')
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rolling_cone_returns_with_its_quaternion_flipped():
    cone = _example('rolling_cone')
    r = cone.simulate(steps=200)  # alpha = 30 deg: once about the vertical, twice about its axis
    assert r['sign_flip_error'] < 2e-7  # 7e-8 seen (RK4's truncation error)
    assert r['closed_form_error'] < 5e-7  # 1.6e-7 seen
    assert r['rolling_rate_drift'] < 1e-12 and r['quaternion_norm_error'] < 1e-8
    r3 = cone.simulate(steps=100, alpha=math.asin(1.0 / 3.0))  # three turns about its axis
    assert np.abs(r3['q_end'] - r3['q0']).max() < 1e-5  # back with the same sign (3e-6 seen)
    assert r3['closed_form_error'] < 2e-5  # 6e-6 seen


def test_spinning_top_precesses_as_the_closed_form_says():
    top = _example('spinning_top')
    r = top.simulate(steps=300)
    assert r['quaternion_axis_error'] < 2e-5  # ~6e-6 seen (RK4 at 0.1 rad of spin a step)
    assert r['model_axis_error'] < 1e-10 and r['tilt_drift'] < 1e-10  # FDab: zero acceleration
    assert r['quaternion_return'] < 2e-5
    assert r['nutation_tilt_range'] > 1.0 and r['nutation_models_agree'] < 5e-5
