"""
Generated code (spart_ros.codegen) against the core, in Python, numba and C.

Every quantity (H, C, bias, g, ID, FD, J and pose of a point) of every robot the generator
supports (the reference and test robots on a fixed base, a URDF with a world joint, mimic
joints, a DH arm, a random 5-joint chain) equals the core's to 1e-12 on random states:
H and C against SPART's GIM / CIM, ID against SPART's ID, bias, g and FD against
FastDynamics(floating=False), J against Jacob, the pose against Kinematics.  The C code is
compiled with the system compiler and called through ctypes; the numba path is compiled for
one small robot.  Then the command line, and every refusal (floating base, symbolic model,
bad requests, the size limit, a singular H at run time).
"""

import os
import subprocess
import sys
import warnings

from core_helpers import (
    ALL_MODELS,
    load_robot,
    random_state,
    rel_err,
    serial_chain_urdf,
    TEST_DIR,
    urdf_path,
)
import numpy as np
import pytest
from spart_ros import codegen, spart
from spart_ros.codegen.build import find_c_compiler
from spart_ros.codegen.generator import identifier
from spart_ros.core.base_state import base_from_link_frame
from spart_ros.core.errors import SpartError
from spart_ros.core.fast import FastDynamics

TOL = 1e-12
GRAVITY = np.array([0.4, -0.3, -9.81])
LOADING = os.path.join(TEST_DIR, 'data', 'urdf', 'loading')
CC = find_c_compiler()
needs_cc = pytest.mark.skipif(
    CC is None, reason='no C compiler (cc, gcc, clang or $CC) on this machine'
)
DH_ARM = {
    'name': 'dh_arm',
    'n': 3,
    'man': [
        {
            'type': 1,
            'DH': {'d': 0.3, 'alpha': np.pi / 2, 'a': 0.05, 'theta': 0.2},
            'b': [0.0, 0.1, 0.02],
            'mass': 4.0,
            'I': np.diag([0.04, 0.01, 0.04]),
        },
        {
            'type': 2,
            'DH': {'d': 0.1, 'alpha': -np.pi / 2, 'a': 0.0, 'theta': 0.3},
            'b': [0.0, 0.05, 0.1],
            'mass': 1.5,
            'I': np.diag([0.012, 0.012, 0.001]),
        },
        {
            'type': 1,
            'DH': {'d': 0.2, 'alpha': 0.7, 'a': 0.1, 'theta': 0.0},
            'b': [0.02, 0.0, 0.08],
            'mass': 0.8,
            'I': np.diag([0.002, 0.002, 0.001]),
        },
    ],
    'base': {'T_L0_J1': np.eye(4), 'mass': 50.0, 'I': np.eye(3)},
    'EE': {'theta': 0.5, 'd': 0.15},
}


def _robot(name):
    with warnings.catch_warnings():
        warnings.simplefilter(
            'ignore'
        )  # mimic joints, massless frames: known and warned elsewhere
        if name == 'dh_arm':
            return spart.DH_Serial2robot(DH_ARM)[0]
        if name == 'chain_5':
            return spart.urdf2robot(serial_chain_urdf(5, seed=4))[0]
        if name in ('ur5_world', 'gripper_mimic'):
            return spart.urdf2robot(os.path.join(LOADING, name + '.urdf'))[0]
        return load_robot(name)


ROBOTS = [m for m in ALL_MODELS if m != 'Simple_Spacecraft'] + [
    'ur5_world',
    'gripper_mimic',
    'dh_arm',
    'chain_5',
]
C_ROBOTS = ['planar_two_link', 'SC_3DoF', 'branched_two_arm_spacecraft', 'dh_arm']
FLOATING_ROBOTS = [
    'SC_3DoF',
    'arm7_floating',
    'branched_two_arm_spacecraft',
    'prismatic_chain',
    'dh_arm',
]


def _links(robot):
    """
    (link, offset) pairs for J and pose.

    The last moving joint's link with a point offset, and for a tree a link on another branch at
    its CoM.
    """
    moving = sorted((j for j in robot.joints if j.type), key=lambda j: j.q_id)
    out = [(moving[-1].child_link, (0.05, -0.1, 0.2))]
    first = moving[0].child_link
    if first != out[0][0]:
        out.append((first, None))
    return out


def _quantities(robot, floating=False):
    specs = ['H', 'C', 'bias', 'g', 'ID', 'FD'] + (['FID'] if floating else [])
    for link, offset in _links(robot):
        at = '' if offset is None else '@' + ','.join(repr(x) for x in offset)
        specs += [f'J:{robot.link_names[link]}{at}', f'pose:{link}{at}']
    return specs


def _reference(robot, code, seed):
    """
    Return the core's values of every generated quantity at a random state.

    No wrenches, the code's gravity; a fixed base at the code's R0, r0 with u0 = u0dot = 0, or a
    floating base in a random state); (inputs, {function name: value}.
    """
    s = random_state(robot, seed)
    floating = code.header['floating']
    R0, r0 = (s.R0, s.r0) if floating else (code.header['R0'], code.header['r0'])
    u0, u0dot = (s.u0, s.u0dot) if floating else (np.zeros(6), np.zeros(6))
    zw = np.zeros((6, robot.n_links_joints))
    q, qd, qdd, tau = s.qm, s.um, s.umdot, s.taum
    RJ, RL, rJ, rL, e, g = spart.Kinematics(R0, r0, q, robot)
    Bij, Bi0, P0, pm = spart.DiffKinematics(R0, r0, rL, e, g, robot)
    t0, tL = spart.Velocities(Bij, Bi0, P0, pm, u0, qd, robot)
    t0dot, tLdot = spart.Accelerations(t0, tL, P0, pm, Bi0, Bij, u0, qd, u0dot, qdd, robot)
    I0, Im = spart.I_I(R0, RL, robot)
    M0t, Mmt = spart.MCB(I0, Im, Bij, Bi0, robot)
    H0, H0m, Hm = spart.GIM(M0t, Mmt, Bij, Bi0, P0, pm, robot)
    C0, C0m, Cm0, Cm = spart.CIM(t0, tL, I0, Im, M0t, Mmt, Bij, Bi0, P0, pm, robot)
    tau0_id, taum_id = spart.ID(
        np.zeros(6), zw, t0, tL, t0dot, tLdot, P0, pm, I0, Im, Bij, Bi0, robot, gravity=GRAVITY
    )
    fd = FastDynamics(robot, gravity=GRAVITY)
    both = np.concatenate
    if floating:
        ref = {
            'mass_matrix': np.block([[H0, H0m], [H0m.T, Hm]]),
            'coriolis_matrix': np.block([[C0, C0m], [Cm0, Cm]]),
            'inverse_dynamics': both([tau0_id, taum_id]),
            'bias_forces': both(fd.bias_forces(R0, r0, q, u0, qd)),
            'gravity_forces': both(fd.gravity_forces(R0, r0, q)),
            'forward_dynamics': both(fd.forward_dynamics(R0, r0, q, u0, qd, s.tau0, tau)),
            'floating_inverse_dynamics': both(
                fd.floating_inverse_dynamics(R0, r0, q, u0, qd, qdd)[::-1]
            ),
        }
    else:
        ref = {
            'mass_matrix': Hm,
            'coriolis_matrix': Cm,
            'inverse_dynamics': taum_id,
            'bias_forces': fd.bias_forces(R0, r0, q, u0, qd, floating=False)[1].copy(),
            'gravity_forces': fd.gravity_forces(R0, r0, q)[1].copy(),
            'forward_dynamics': fd.forward_dynamics(R0, r0, q, u0, qd, u0, tau, floating=False)[
                1
            ].copy(),
        }
    for f in code.functions:
        if f.quantity.kind in ('J', 'pose'):
            link, offset = f.quantity.link, f.quantity.offset
            R, c = (R0, r0) if link == 0 else (RL[:, :, link - 1], rL[:, link - 1])
            p = c if offset is None else c + R @ np.asarray(offset)
            J0, Jm = spart.Jacob(p, r0, rL, P0, pm, link, robot)
            ref[f.name] = (
                (np.hstack([J0, Jm]) if floating else Jm)
                if f.quantity.kind == 'J'
                else np.block([[R, p[:, None]], [np.zeros((1, 3)), np.ones((1, 1))]])
            )
    inputs = {
        'q': q,
        'qd': qd,
        'qdd': qdd,
        'tau': tau,
        'R0': R0,
        'r0': r0,
        'u0': u0,
        'u0dot': u0dot,
        'tau0': s.tau0,
    }
    return inputs, ref


@pytest.fixture(scope='module')
def generated(tmp_path_factory):
    """{(robot name, base): (robot, GeneratedCode, directory)}, generated on first use."""
    cache = {}

    def get(name, base='fixed'):
        if (name, base) not in cache:
            robot = _robot(name)
            code = codegen.generate(
                robot,
                _quantities(robot, base == 'floating'),
                language='all',
                base=base,
                gravity=GRAVITY,
                jit=False,
            )
            directory = tmp_path_factory.mktemp(f'codegen_{name}_{base}')
            code.write(directory)
            cache[name, base] = robot, code, directory
        return cache[name, base]

    return get


def _compare(robot, code, call, seeds=(1, 2, 3)):
    for seed in seeds:
        inputs, ref = _reference(robot, code, seed)
        for f in code.functions:
            value = call(f, *(inputs[a] for a, _ in f.args))
            assert value.shape == ref[f.name].shape == f.shape, f.name
            err = rel_err(value, ref[f.name])
            assert err <= TOL, (
                f'{robot.name}: {f.alias} differs from the core by {err:.2e} (seed {seed})'
            )


@pytest.mark.parametrize('name', ROBOTS)
def test_generated_python_equals_the_core(name, generated):
    robot, code, directory = generated(name)
    module = codegen.load_python(directory / f'{code.name}.py', f'generated_{identifier(name)}')
    assert (
        not module.JITTED and module.N_Q == robot.n_q and list(module.JOINT_NAMES) == robot.q_names
    )
    _compare(robot, code, lambda f, *args: getattr(module, f.name)(*args))
    # short names and the _into variants are the same functions
    f = code.functions[0]
    out = np.empty(f.shape)
    q = random_state(robot, 5).qm
    assert getattr(module, f.alias + '_into')(q, out) is out
    np.testing.assert_array_equal(out, getattr(module, f.alias)(q))


@pytest.mark.parametrize('name', FLOATING_ROBOTS)
def test_generated_floating_base_python_equals_the_core(name, generated):
    """
    Floating base as in SPART: R0, r0, u0 at run time, u = [u0; qd].

    H, C, bias, g, ID, FD, Floating_ID, J and pose equal the core's (FastDynamics, GIM, CIM, ID,
    Jacob).
    """
    robot, code, directory = generated(name, 'floating')
    module = codegen.load_python(
        directory / f'{code.name}.py', f'generated_floating_{identifier(name)}'
    )
    assert module.FLOATING_BASE and not hasattr(module, 'BASE_POSE')
    _compare(robot, code, lambda f, *args: getattr(module, f.name)(*args))
    with pytest.raises(ValueError, match=r'R0: expected a \(3, 3\)'):
        module.H(np.eye(2), np.zeros(robot.n_q))


@needs_cc
@pytest.mark.parametrize(
    'name, base', [(name, 'fixed') for name in C_ROBOTS] + [('SC_3DoF', 'floating')]
)
def test_generated_c_equals_the_core(name, base, generated, tmp_path):
    robot, code, directory = generated(name, base)
    library = codegen.load_c(
        codegen.compile_c(directory / f'{code.name}.c', tmp_path / 'lib.so'), code
    )
    _compare(robot, code, lambda f, *args: getattr(library, f.name)(*args))
    header = (directory / f'{code.name}.h').read_text()
    assert f'#define {code.name.upper()}_N_Q {robot.n_q}' in header and 'extern "C"' in header


def test_generated_numba_equals_the_core(tmp_path):
    """
    The jitted module (numba, cached beside the file) computes the same numbers.

    Fixed and floating base (numba is a pinned requirement: without it this fails, it does not
    skip).
    """
    robot = load_robot('planar_two_link')
    for base, quantities in (('fixed', ['ID', 'FD', 'J:link2']), ('floating', ['ID', 'J:link2'])):
        code = codegen.generate(robot, quantities, base=base, gravity=GRAVITY, name=f'jit_{base}')
        code.write(tmp_path)
        module = codegen.load_python(tmp_path / f'{code.name}.py', f'generated_jit_planar_{base}')
        assert module.JITTED
        _compare(robot, code, lambda f, *args: getattr(module, f.name)(*args), seeds=(1,))
    with pytest.raises(ValueError, match='q: expected 2 values'):
        module.ID(np.eye(3), np.zeros(3), np.zeros(6), np.zeros(2), np.zeros(6), np.zeros(2))
    with pytest.raises(ValueError, match=r'tau: expected a float64 array of shape \(8,\)'):
        module.ID_into(
            np.eye(3), np.zeros(2), np.zeros(6), np.zeros(2), np.zeros(6), np.zeros(2), np.zeros(2)
        )


def test_base_pose_and_gravity_follow_the_core(tmp_path):
    """
    A base turned and moved (base_pose of the URDF base link), another gravity.

    The generated H, ID, J and pose still equal the core's for the same R0, r0.
    """
    robot = load_robot('kuka_iiwa')
    T = np.eye(4)
    T[:3, :3] = spart.Angles321_DCM([0.3, -0.5, 1.2]).T
    T[:3, 3] = [1.0, -2.0, 0.5]
    code = codegen.generate(
        robot,
        ['g', 'ID', 'J:lbr_iiwa_link_7', 'pose:lbr_iiwa_link_7'],
        base_pose=T,
        gravity=[1.0, 2.0, -9.0],
        jit=False,
    )
    R0, r0, _ = base_from_link_frame(robot, T[:3, :3], T[:3, 3])
    np.testing.assert_allclose(code.header['R0'], R0)
    code.write(tmp_path)
    module = codegen.load_python(tmp_path / f'{code.name}.py', 'generated_turned_kuka')
    s = random_state(robot, 7)
    fd = FastDynamics(robot, gravity=[1.0, 2.0, -9.0])
    z6 = np.zeros(6)
    assert rel_err(module.g(s.qm), fd.gravity_forces(R0, r0, s.qm)[1]) <= TOL
    assert (
        rel_err(
            module.ID(s.qm, s.um, s.umdot),
            fd.inverse_dynamics(R0, r0, s.qm, z6, s.um, z6, s.umdot, floating=False)[1],
        )
        <= TOL
    )
    J, _ = fd.jacobian('lbr_iiwa_link_7', R0, r0, s.qm, bias=False, floating=False)
    assert rel_err(module.J_lbr_iiwa_link_7(s.qm), J[:, 6:]) <= TOL
    R, p = fd.link_pose('lbr_iiwa_link_7')
    pose = module.pose_lbr_iiwa_link_7(s.qm)
    assert rel_err(pose[:3, :3], R) <= TOL and rel_err(pose[:3, 3], r0 + p) <= TOL


def test_urdf_world_joint_is_the_default_base_pose():
    robot = _robot('ur5_world')
    code = codegen.generate(robot, ['g'], jit=False)
    np.testing.assert_array_equal(code.header['base_pose'], robot.base_pose)


def test_sizes_are_reported():
    """
    Sharing pays: the emitted operations are far fewer than the same expressions as trees.

    Both figures reach the file header.
    """
    code = codegen.generate(load_robot('kuka_iiwa'), ['H', 'FD'], jit=False)
    H, FD = code.functions
    assert 0 < H.operations < H.tree_size / 1000 and FD.operations < FD.tree_size / 1e6
    text = code.files[f'{code.name}.py']
    assert f'{H.operations} operations' in text and f'{H.operations} operations' in code.summary()


def test_command_line_round_trip(tmp_path, capsys):
    """
    Python -m spart_ros.codegen on a URDF file.

    Files written, the summary printed, the module imports and equals the core.
    """
    out = tmp_path / 'out'
    cmd = [
        sys.executable,
        '-m',
        'spart_ros.codegen',
        urdf_path('SC_3DoF'),
        '--quantities',
        'H,ID,J:Link_3@0,0,0.1',
        '--out',
        str(out),
        '--language',
        'all',
        '--gravity',
        '0.4,-0.3,-9.81',
        '--no-jit',
        '--name',
        'sc3',
    ]
    if CC is not None:
        cmd.append('--compile')
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert 'wrote' in done.stdout and 'operations' in done.stdout
    assert {'sc3.py', 'sc3.c', 'sc3.h'} <= {p.name for p in out.iterdir()}
    if CC is not None:
        assert (out / 'libsc3.so').is_file()
    module = codegen.load_python(out / 'sc3.py', 'generated_cli_sc3')
    robot = load_robot('SC_3DoF')
    code = codegen.generate(robot, ['H', 'ID', 'J:Link_3@0,0,0.1'], gravity=GRAVITY, jit=False)
    inputs, ref = _reference(robot, code, 4)
    assert rel_err(module.H(inputs['q']), ref['mass_matrix']) <= TOL
    assert (
        rel_err(module.ID(inputs['q'], inputs['qd'], inputs['qdd']), ref['inverse_dynamics'])
        <= TOL
    )
    # a floating base, and a bad request, through the command line's main() (in this process: a
    # second interpreter start costs seconds)
    from spart_ros.codegen.__main__ import main

    assert (
        main(
            [
                urdf_path('SC_3DoF'),
                '--quantities',
                'FID',
                '--base',
                'floating',
                '--out',
                str(out),
                '--name',
                'sc3_floating',
                '--no-jit',
            ]
        )
        == 0
    )
    module = codegen.load_python(out / 'sc3_floating.py', 'generated_cli_sc3_floating')
    s = random_state(robot, 4)
    taum, u0dot = FastDynamics(robot).floating_inverse_dynamics(
        s.R0, s.r0, s.qm, s.u0, s.um, s.umdot
    )
    assert (
        rel_err(module.FID(s.R0, s.qm, s.u0, s.um, s.umdot), np.concatenate([u0dot, taum])) <= TOL
    )
    assert (
        main([urdf_path('SC_3DoF'), '--quantities', 'J:nope', '--out', str(tmp_path / 'bad')]) == 1
    )
    assert (
        "unknown link 'nope'" in capsys.readouterr().err
    )  # one line naming the problem, exit status 1
    with pytest.raises(SystemExit):
        main([urdf_path('SC_3DoF'), '--out', str(tmp_path / 'bad'), '--gravity', '1,2'])


@pytest.mark.parametrize(
    'kwargs, match',
    [
        ({'base': 'wobbly'}, "base: expected 'fixed' or 'floating'"),
        ({'base': 'floating', 'base_pose': np.eye(4)}, 'a floating base takes its pose'),
        ({'quantities': ['FID']}, 'FID is for a floating base'),
        ({'quantities': ['Q']}, "unknown quantity 'Q'"),
        ({'quantities': ['J']}, 'J needs a link'),
        ({'quantities': ['J:ghost']}, "unknown link 'ghost'"),
        ({'quantities': ['pose:99']}, 'link 99 is not a link'),
        ({'quantities': ['J:link2@1,2']}, 'offset after @ must be x,y,z'),
        ({'quantities': ['H:link2']}, 'H takes no link'),
        ({'quantities': []}, 'none given'),
        ({'language': 'fortran'}, "language: expected 'python', 'c' or 'all'"),
        ({'gravity': [0, 0]}, 'gravity: expected 3 finite numbers'),
        ({'base_pose': np.zeros((3, 3))}, 'base_pose: expected a 4x4'),
        ({'base_pose': 2 * np.eye(4)}, 'base_pose'),
    ],
)
def test_bad_requests_are_refused_by_name(kwargs, match):
    kwargs = {'quantities': ['H'], **kwargs}
    with pytest.raises(codegen.CodegenError, match=match):
        codegen.generate(load_robot('planar_two_link'), **kwargs)


def test_models_it_cannot_serve_are_refused():
    from spart_ros.core.model import RobotBuilder
    import sympy as sp

    m = sp.Symbol('m', positive=True)
    b = RobotBuilder('symbolic_arm')
    b.add_link('base', mass=m, inertia=np.eye(3))
    b.add_link('arm', mass=m, inertia=np.eye(3))
    b.add_joint('j', 'revolute', parent='base', child='arm', axis=[0, 0, 1])
    with pytest.raises(codegen.CodegenError, match='is symbolic'):
        codegen.generate(b.build(), ['H'])
    with pytest.raises(codegen.CodegenError, match='no moving joint'):
        codegen.generate(load_robot('Simple_Spacecraft'), ['H'])
    with pytest.raises(SpartError):
        codegen.generate('<robot name="x"><link name="a"/></robot', ['H'])


def test_size_limit_raises_naming_the_limit():
    """
    Beyond max_operations the generator stops with the limit's name and value.

    Instead of writing code no compiler digests in reasonable time.
    """
    with pytest.raises(codegen.CodegenLimitError, match='max_operations=500'):
        codegen.generate(load_robot('kuka_iiwa'), ['H'], max_operations=500)
    with pytest.raises(codegen.CodegenLimitError, match='max_seconds=0'):
        codegen.generate(
            spart.urdf2robot(serial_chain_urdf(12, seed=1))[0], ['C'], max_seconds=0.0
        )


def test_singular_mass_matrix_is_an_error(tmp_path):
    """
    A joint that moves no mass is refused at generation (naming it).

    A state where H is singular (a point mass folded onto the first joint's line) makes the
    generated FD raise (Python) or return the error code (C) instead of returning inf or NaN.
    """
    from spart_ros.core.model import homogeneous, RobotBuilder

    b = RobotBuilder('point_mass_arm')
    b.add_link('base', mass=1.0, inertia=np.eye(3))
    b.add_link('upper', mass=0.0, inertia=np.zeros((3, 3)))
    b.add_link('lower', mass=1.0, inertia=np.zeros((3, 3)), com=homogeneous(p=[0.5, 0.0, 0.0]))
    b.add_joint('shoulder', 'revolute', parent='base', child='upper', axis=[0, 0, 1])
    b.add_joint(
        'elbow',
        'revolute',
        parent='upper',
        child='lower',
        origin=homogeneous(p=[1.0, 0.0, 0.0]),
        axis=[0, 0, 1],
    )
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        robot = b.build()
    code = codegen.generate(robot, ['FD'], language='all', jit=False)
    code.write(tmp_path)
    module = codegen.load_python(tmp_path / f'{code.name}.py', 'generated_singular')
    np.testing.assert_allclose(
        module.FD([0.0, 1.0], [0.0, 0.0], [1.0, 0.0]),
        FastDynamics(robot, gravity=[0, 0, -9.81]).forward_dynamics(
            np.eye(3),
            np.zeros(3),
            [0.0, 1.0],
            np.zeros(6),
            [0.0, 0.0],
            np.zeros(6),
            [1.0, 0.0],
            floating=False,
        )[1],
        rtol=1e-12,
    )
    with pytest.raises(ValueError, match='not positive definite'):
        module.FD(np.zeros(2), np.zeros(2), np.ones(2))
    if CC is not None:
        library = codegen.load_c(codegen.compile_c(tmp_path / f'{code.name}.c'), code)
        with pytest.raises(ValueError, match='returned 1'):
            library.FD(np.zeros(2), np.zeros(2), np.ones(2))
    b = RobotBuilder('dead_joint')
    b.add_link('base', mass=1.0, inertia=np.eye(3))
    b.add_link('arm', mass=0.0, inertia=np.zeros((3, 3)))
    b.add_joint('idle', 'revolute', parent='base', child='arm', axis=[0, 0, 1])
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        dead = b.build()
    with pytest.raises(SpartError, match='idle'):
        codegen.generate(dead, ['FD'])


def test_nodes_do_not_import_sympy_or_the_generators():
    """
    A node's imports (its model, the core, the fast path, the control laws) leave sympy.

    spart_ros.symbolic and spart_ros.codegen out: start-up must not pay for them.
    """
    code = (
        'import sys; import spart_ros.nodes.model, spart_ros.nodes.controller_node, '
        'spart_ros.nodes.dynamics_node; '
        "bad = [m for m in ('sympy', 'spart_ros.symbolic', 'spart_ros.codegen') "
        'if m in sys.modules]; '
        'print(bad); sys.exit(1 if bad else 0)'
    )
    done = subprocess.run(
        [sys.executable, '-c', code],
        cwd=os.path.dirname(TEST_DIR),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
