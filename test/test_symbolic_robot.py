"""
spart_ros.symbolic_robot: symbolic_robot's struct against numerical models of the same DH chain.

The references are independent of the module: the frames as symbolic_robot defines them (numpy
products of [Rz(theta) [0 0 d]'] [Rx(alpha) [r 0 0]'] rows [r alpha d theta]), their finite
differences for the Jacobians (J, Ja, Jp, Ja_dot), the energy's B from those Jacobians, and a
numerical DH model (``core.robot_from_dh`` from SPART's DH layout, written here, and its compiled
dynamics) for B, g and the Coriolis torque, whose mass matrix's finite differences give the
Christoffel symbols.  A spatial revolute-prismatic chain without simplification (the values do not
depend on it), a planar revolute chain with it (symbolic_robot's default), and the exported
Python and C code.
"""

import ctypes
import os

import numpy as np
import pytest

import sympy  # a pinned requirement: without it this fails, it does not skip

N_Q = 3  # random joint values per check


def _rz(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]])


def _rx(a):
    c, s = np.cos(a), np.sin(a)
    return np.array([[1.0, 0, 0], [0, c, -s], [0, s, c]])


def frames(DH, types, base, q):
    """Return symbolic_robot's frames T_i (4, 4) at q, computed from its definition."""
    T, out = np.asarray(base, dtype=float), []
    for (r, alpha, d, theta), kind, qi in zip(np.asarray(DH, dtype=float), types, q):
        d, theta = (d + qi, theta) if kind == 'p' else (d, theta + qi)
        Tz, Tx = np.eye(4), np.eye(4)
        Tz[:3, :3], Tz[2, 3] = _rz(theta), d
        Tx[:3, :3], Tx[0, 3] = _rx(alpha), r
        T = T @ Tz @ Tx
        out.append(T)
    return out


def zyz(T):
    """symbolic_robot's Euler angles (the branch of a frame whose T13 is not identically 0)."""
    return np.array(
        [
            np.arctan2(T[1, 2], T[0, 2]),
            np.arctan2(np.hypot(T[0, 2], T[1, 2]), T[2, 2]),
            np.arctan2(T[2, 1], -T[2, 0]),
        ]
    )


def point_jacobian(f, q, h=1e-6):
    """Return [dp/dq; omega per unit rate] (6, n) of the frame f(q) (4, 4), central differences."""
    cols = []
    for k in range(len(q)):
        e = np.zeros(len(q))
        e[k] = h
        Tp, Tm = f(q + e), f(q - e)
        W = (Tp[:3, :3] - Tm[:3, :3]) / (2 * h) @ f(q)[:3, :3].T
        cols.append(
            np.concatenate([(Tp[:3, 3] - Tm[:3, 3]) / (2 * h), [W[2, 1], W[0, 2], W[1, 0]]])
        )
    return np.array(cols).T


def compiled(robot, exprs, extra=None):
    """Return {name: f(q)} of the struct's expressions, through the code generator (fast)."""
    from spart_ros.codegen import generate_from_sympy

    if extra:
        exprs = {k: e.xreplace(extra) for k, e in exprs.items()}
    code = generate_from_sympy('f', [(k, e, k) for k, e in exprs.items()], robot.q, jit=False)
    namespace = {}
    exec(compile(code.files['f.py'], 'f.py', 'exec'), namespace)
    return {k: namespace[k] for k in exprs}


def evaluate(robot, exprs, q, extra=None):
    """Return the struct's expressions at q."""
    return {k: f(np.asarray(q, dtype=float)) for k, f in compiled(robot, exprs, extra).items()}


def dh_model(DH, types, base, coms, masses, Is):
    """Return the numerical DH model (SPART's DH_Serial2robot layout) and its fast path."""
    from spart_ros.core import robot_from_dh
    from spart_ros.core.fast import FastDynamics

    man = [
        {
            'type': 1 if kind == 'r' else 2,
            'DH': {'d': d, 'alpha': alpha, 'a': r, 'theta': theta},
            'b': -np.asarray(c, dtype=float),  # from the CoM to frame {i}'s origin
            'mass': m,
            'I': np.asarray(I, dtype=float),
        }
        for (r, alpha, d, theta), kind, c, m, I in zip(DH, types, coms, masses, Is)
    ]
    base = {'mass': 0.0, 'I': np.zeros((3, 3)), 'T_L0_J1': np.asarray(base, dtype=float)}
    robot, _ = robot_from_dh(
        {'n': len(types), 'man': man, 'base': base, 'EE': {'theta': 0, 'd': 0}}
    )
    return FastDynamics(robot)


class Chain:
    """A random chain's data, its struct with dynamics and the numerical references."""

    def __init__(self, types, seed, planar=False, simplify=False):
        from spart_ros.core.rigid_motion import rotation_from_vector
        from spart_ros.symbolic_robot import add_manipulator_dynamics, get_manipulator

        rng = np.random.default_rng(seed)
        n = len(types)
        self.types, self.rng = types, rng
        angles = np.zeros(n) if planar else rng.uniform(-1.5, 1.5, n)
        self.DH = np.column_stack(
            [
                np.round(rng.uniform(0.2, 0.5, n), 3),
                angles,
                np.zeros(n) if planar else rng.uniform(-0.3, 0.3, n),
                np.zeros(n) if planar else rng.uniform(-1, 1, n),  # planar: exact numbers only
            ]
        )
        self.base = np.eye(4)
        if not planar:
            self.base[:3, :3] = rotation_from_vector(rng.uniform(-1, 1, 3))
            self.base[:3, 3] = rng.uniform(-0.5, 0.5, 3)
        self.coms = [np.round(rng.uniform(-0.15, 0.05, 3), 3) for _ in range(n)]
        self.masses = list(np.round(rng.uniform(0.5, 3, n), 2))
        self.Is = []
        for _ in range(n):  # a planar chain's with its principal axes along its frame's
            R = np.eye(3) if planar else rotation_from_vector(rng.uniform(-1, 1, 3))
            self.Is.append(R @ np.diag(np.round(rng.uniform(0.02, 0.03, 3), 3)) @ R.T)
        self.g0 = np.array([0.0, -9.81, 0.0]) if planar else rng.uniform(-10, 10, 3)
        kinematics = get_manipulator(self.DH, types, self.base, simplify=simplify)
        self.robot = add_manipulator_dynamics(kinematics, self.coms, self.masses, self.Is, self.g0)
        self.fast = dh_model(self.DH, types, self.base, self.coms, self.masses, self.Is)

    def frames(self, q):
        return frames(self.DH, self.types, self.base, q)

    def com_frame(self, i, q):
        T = self.frames(q)[i].copy()
        T[:3, 3] = T[:3, :3] @ self.coms[i] + T[:3, 3]
        return T

    def references(self, q):
        """B, g, c(q, qd) and the Christoffel symbols of the numerical DH model at q."""
        f, R0, r0, z6 = self.fast, np.eye(3), np.zeros(3), np.zeros(6)
        n, h = len(q), 1e-5

        def H(x):
            return f.mass_matrix(R0, r0, x)[6:, 6:].copy()

        dH = []
        for k in range(n):
            e = np.zeros(n)
            e[k] = h
            dH.append((H(q + e) - H(q - e)) / (2 * h))
        c = np.array(
            [
                [
                    [(dH[k][i, j] + dH[j][i, k] - dH[i][j, k]) / 2 for k in range(n)]
                    for j in range(n)
                ]
                for i in range(n)
            ]
        )
        g = f.gravity_forces(R0, r0, q, gravity=self.g0)[1].copy()
        return H(q), g, c, lambda qd: f.bias_forces(R0, r0, q, z6, qd, floating=False)[1].copy()


@pytest.fixture(scope='module')
def spatial():
    return Chain('rp', seed=39)


@pytest.fixture(scope='module')
def planar():
    return Chain('rr', seed=40, planar=True, simplify=True)


def test_kinematics_equal_the_frames_and_their_derivatives(spatial):
    chain, robot = spatial, spatial.robot
    n = len(chain.types)
    fields = {f'T{i}': robot.T[i] for i in range(n)}
    fields.update({f'relT{i}': robot.relT[i] for i in range(n)})
    fields.update({f'Jp{i}': robot.Jp[i] for i in range(n)})
    fields.update(J=robot.J, Ja=robot.Ja, euler=robot.euler[-1])
    functions = compiled(robot, fields)
    for _ in range(N_Q):
        q = chain.rng.uniform(-1, 1, n)
        values, Ts = {k: f(q) for k, f in functions.items()}, chain.frames(q)
        T_prev = chain.base
        for i in range(n):
            np.testing.assert_allclose(values[f'T{i}'], Ts[i], atol=1e-12)
            np.testing.assert_allclose(
                values[f'relT{i}'], np.linalg.solve(T_prev, Ts[i]), atol=1e-12
            )
            np.testing.assert_allclose(
                values[f'Jp{i}'],
                point_jacobian(lambda x, i=i: chain.com_frame(i, x), q),
                atol=1e-8,
            )
            T_prev = Ts[i]
        np.testing.assert_allclose(
            values['J'], point_jacobian(lambda x: chain.frames(x)[-1], q), atol=1e-8
        )
        np.testing.assert_allclose(values['euler'], zyz(Ts[-1]), atol=1e-12)
        h, Ja = 1e-6, []
        for k in range(n):
            e = np.zeros(n)
            e[k] = h
            up, down = chain.frames(q + e)[-1], chain.frames(q - e)[-1]
            Ja.append(np.concatenate([up[:3, 3] - down[:3, 3], zyz(up) - zyz(down)]) / (2 * h))
        np.testing.assert_allclose(values['Ja'], np.array(Ja).T, atol=1e-7)
        # the generic point's Jacobian, at the end effector's origin, is J
        p = dict(zip(robot.point, Ts[-1][:3, 3]))
        at_tip = evaluate(robot, {'jacobian': robot.jacobian}, q, p)['jacobian']
        np.testing.assert_allclose(at_tip, values['J'], atol=1e-12)


def test_dynamics_equal_the_numerical_dh_model(spatial, planar):
    for chain in (spatial, planar):
        robot = chain.robot
        n = len(chain.types)
        C = {f'C{i}': sympy.Matrix(robot.C.tolist()[i]) for i in range(n)}
        functions = compiled(robot, dict(B=robot.B, g=robot.g, **C))
        for _ in range(N_Q):
            q, qd = chain.rng.uniform(-1, 1, n), chain.rng.uniform(-2, 2, n)
            values = {k: f(q) for k, f in functions.items()}
            B, g, c, coriolis = chain.references(q)
            np.testing.assert_allclose(values['B'], B, rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(values['g'], g, rtol=1e-10, atol=1e-10)
            christoffel = np.array([values[f'C{i}'] for i in range(n)])
            np.testing.assert_allclose(christoffel, c, atol=1e-8)
            # contracted twice with q_dot: the Coriolis and centrifugal torque
            np.testing.assert_allclose(
                np.einsum('ijk,j,k->i', christoffel, qd, qd), coriolis(qd), atol=1e-10
            )
        # B from the kinetic energy of the frames' own finite-difference Jacobians (one state)
        Ts, energy = chain.frames(q), np.zeros((n, n))
        for i in range(n):
            J = point_jacobian(lambda x, i=i: chain.com_frame(i, x), q)
            R = Ts[i][:3, :3]
            energy += chain.masses[i] * J[:3].T @ J[:3] + J[3:].T @ R @ chain.Is[i] @ R.T @ J[3:]
        np.testing.assert_allclose(values['B'], energy, atol=1e-8)


def test_ja_dot_is_the_time_derivative_of_ja(spatial):
    chain, robot = spatial, spatial.robot
    n = len(chain.types)
    q, qd, h = chain.rng.uniform(-1, 1, n), chain.rng.uniform(-2, 2, n), 1e-6
    rates = dict(zip(robot.q_dot, qd))
    Ja_dot = evaluate(robot, {'Ja_dot': robot.Ja_dot}, q, rates)['Ja_dot']
    Ja = compiled(robot, {'Ja': robot.Ja})['Ja']
    Ja = [Ja(x) for x in (q + h * qd, q - h * qd)]
    np.testing.assert_allclose(Ja_dot, (Ja[0] - Ja[1]) / (2 * h), atol=1e-7)


def test_the_planar_chain_simplifies_as_symbolic_robot_does(planar):
    robot, q = planar.robot, planar.robot.q
    # T13 identically 0: the first Euler branch, the angle of the sum of the joints
    assert robot.euler[-1][0] == 0 and robot.euler[-1][1] == 0
    assert sympy.simplify(robot.Ja[5, :] - sympy.Matrix([[1, 1]])) == sympy.zeros(1, 2)
    assert sympy.count_ops(robot.B) < 40  # e.g. a + b cos(q2)
    assert robot.B[1, 1].free_symbols == set() and robot.B[0, 0].free_symbols == {q[1]}
    assert robot.fields()[:3] == ['fixedDHParams', 'jointTypes', 'base']
    for name in (
        'T',
        'relT',
        'z',
        'p',
        'euler',
        'J',
        'Ja',
        'q',
        'q_dot',
        'Jp',
        'B',
        'C',
        'g',
        'Ja_dot',
    ):
        assert robot.has(name), name


def test_export_functions_writes_python_and_c(spatial, tmp_path):
    from spart_ros import codegen
    from spart_ros.codegen.build import find_c_compiler
    from spart_ros.symbolic_robot import export_functions

    chain, robot = spatial, spatial.robot
    n = len(chain.types)
    paths = export_functions(robot, 'arm', True, out_dir=tmp_path, jit=False)
    assert sorted(os.path.basename(p) for p in paths) == ['arm.c', 'arm.h', 'arm.py']
    module = codegen.load_python(tmp_path / 'arm.py')
    q = chain.rng.uniform(-1, 1, n)
    B, g, c, _ = chain.references(q)
    Ts = chain.frames(q)
    expected = {f'T{i + 1}': Ts[i] for i in range(n)}
    expected.update(
        EEpose=np.concatenate([Ts[-1][:3, 3], zyz(Ts[-1])]),
        Jg=point_jacobian(lambda x: chain.frames(x)[-1], q),
        B=B,
        C=c,
        G=g,
    )
    for name, value in expected.items():
        np.testing.assert_allclose(getattr(module, name)(q), value, atol=1e-7, err_msg=name)
    if find_c_compiler() is None:
        pytest.skip('no C compiler')
    lib = ctypes.CDLL(str(codegen.compile_c(tmp_path / 'arm.c')))
    for name, value in expected.items():
        out = np.empty(np.shape(value))
        fn = getattr(lib, f'arm_{name}')
        assert (
            fn(
                np.ctypeslib.as_ctypes(np.ascontiguousarray(q)),
                np.ctypeslib.as_ctypes(out.reshape(-1)),
            )
            == 0
        )
        np.testing.assert_allclose(out, value, atol=1e-7, err_msg=name)


def test_bad_inputs_say_what_is_wrong(spatial):
    from spart_ros.codegen import CodegenError
    from spart_ros.core.errors import InputError
    from spart_ros.symbolic_robot import (
        add_manipulator_dynamics,
        export_functions,
        get_manipulator,
    )

    DH, base = spatial.DH, spatial.base
    for call, message in (
        (lambda: get_manipulator(DH, 'rx', base), 'jointTypes'),
        (lambda: get_manipulator(DH, 'rrr', base), r'DHParams: expected a \(3, 4\)'),
        (lambda: get_manipulator(DH[:, :3], 'rp', base), 'DHParams'),
        (lambda: get_manipulator(DH, 'rp', np.ones((4, 4))), 'base'),
        (lambda: get_manipulator(DH, 'rp', np.diag([2.0, 1, 1, 1])), 'base .its rotation block'),
        (
            lambda: get_manipulator([[0.1, 0, 0, 'a b'], [0, 0, 0, 0]], 'rp', base),
            r'DHParams\[0, 3\]',
        ),
        (
            lambda: add_manipulator_dynamics(
                spatial.robot, spatial.coms[:1], [1, 1], spatial.Is, [0, 0, 1]
            ),
            'coms',
        ),
        (lambda: add_manipulator_dynamics(object(), [], [], [], [0, 0, 1]), 'robot'),
    ):
        with pytest.raises(InputError, match=message):
            call()
    a = sympy.Symbol('a', positive=True)
    symbolic = get_manipulator([[a, 0, 0, 0]], 'r', np.eye(4), simplify=False)
    assert a in symbolic.T[0].free_symbols
    with pytest.raises(CodegenError, match='the symbol a is not a joint position'):
        export_functions(symbolic, 'x', True, out_dir='/nonexistent-never-written')
