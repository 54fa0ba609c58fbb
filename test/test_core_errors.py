"""
Errors and warnings of the core.

Each bad model or input raises the right ``spart_ros.core.errors`` class, with a message that names
the link, joint or argument.
"""

import inspect
import warnings

from core_helpers import load_robot, random_state, run_chain
import numpy as np
import pytest
from spart_ros import spart
from spart_ros.core import errors
from spart_ros.core.errors import (
    InertiaError,
    InputError,
    ModelError,
    SingularModelError,
    SpartError,
    TopologyError,
    UnsupportedJointError,
    URDFError,
)


def link(
    name,
    mass=1.0,
    ixx=0.1,
    iyy=0.1,
    izz=0.1,
    ixy=0.0,
    ixz=0.0,
    iyz=0.0,
    xyz='0 0 0',
    inertial=True,
):
    if not inertial:
        return f'<link name="{name}"/>'
    return (
        f'<link name="{name}"><inertial><origin xyz="{xyz}" rpy="0 0 0"/><mass value="{mass}"/>'
        f'<inertia ixx="{ixx}" ixy="{ixy}" ixz="{ixz}" iyy="{iyy}" iyz="{iyz}" izz="{izz}"/>'
        '</inertial></link>'
    )


def joint(name, parent, child, type='revolute', axis='0 0 1', xyz='0 0 0.5'):
    ax = '' if axis is None else f'<axis xyz="{axis}"/>'
    lim = (
        '<limit lower="-1" upper="1" effort="10" velocity="1"/>'
        if type in ('revolute', 'prismatic')
        else ''
    )
    return (
        f'<joint name="{name}" type="{type}"><parent link="{parent}"/><child link="{child}"/>'
        f'<origin xyz="{xyz}" rpy="0 0 0"/>{ax}{lim}</joint>'
    )


def urdf(*parts, name='test_robot'):
    return f'<?xml version="1.0"?>\n<robot name="{name}">\n' + '\n'.join(parts) + '\n</robot>'


def arm(*extra, base=None, l1=None, l2=None, j1=None, j2=None):
    """Return base -j1-> l1 -j2-> l2, each replaceable."""
    return urdf(
        base or link('base', 10.0),
        l1 or link('l1'),
        l2 or link('l2'),
        j1 or joint('j1', 'base', 'l1'),
        j2 or joint('j2', 'l1', 'l2'),
        *extra,
    )


def build(text, strict=False):
    return spart.urdf2robot(text, strict=strict)[0]


def raises_when_strict(cls, match, text):
    """Non-physical inertias: a warning naming the link by default, an error with strict=True."""
    with pytest.warns(errors.InertiaWarning, match=match):
        build(text)
    with pytest.raises(cls, match=match):
        build(text, strict=True)


def test_hierarchy():
    for cls in (
        ModelError,
        URDFError,
        TopologyError,
        UnsupportedJointError,
        InertiaError,
        SingularModelError,
        InputError,
    ):
        assert issubclass(cls, SpartError) and issubclass(cls, ValueError)
    for cls in (URDFError, TopologyError, UnsupportedJointError, InertiaError, SingularModelError):
        assert issubclass(cls, ModelError)
    assert errors.SpartError is SpartError


def test_valid_arm_builds():
    robot = build(arm())
    assert robot.n_q == 2 and robot.link_names == ['base', 'l1', 'l2']


# --- not URDF -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    'text,words',
    [
        ('this is just a sentence', ['this is just a sentence']),
        ('<robot name="x"><link name="a"', ['XML']),
        ('<html><body>hello</body></html>', ['<html>', '<robot>']),
        ('<?xml version="1.0"?><sdf version="1.6"><model name="m"/></sdf>', ['<sdf>']),
    ],
)
def test_not_urdf(text, words):
    with pytest.raises(URDFError) as err:
        spart.urdf2robot(text)
    for w in words:
        assert w in str(err.value)


def test_missing_file_and_wrong_type():
    with pytest.raises(URDFError, match='no_such_robot.urdf'):
        spart.urdf2robot('/tmp/no_such_dir/no_such_robot.urdf')
    with pytest.raises(URDFError, match='int'):
        spart.urdf2robot(42)


# --- links: inertial, mass, inertia ---------------------------------------------------------
def test_link_without_inertial_is_a_massless_frame():
    with pytest.warns(errors.ModelWarning, match=r"\['l1'\] have no <inertial>"):
        robot = build(arm(l1=link('l1', inertial=False)))
    assert robot.links[0].mass == 0 and not robot.links[0].inertia.any()


def test_negative_mass():
    """
    Refused even without strict (no body has one: forward dynamics with it means nothing).

    The message says so.
    """
    with pytest.raises(
        InertiaError,
        match=r"'l2'.*mass -1 kg is negative: no body has a negative mass.*"
        r'refused even without strict=True',
    ):
        build(arm(l2=link('l2', mass=-1.0)))


def test_negative_base_mass():
    with pytest.raises(InertiaError, match="'base'.*mass"):
        build(arm(base=link('base', mass=-5.0)))


def test_inertia_not_positive_semidefinite():
    raises_when_strict(
        InertiaError,
        "'l1'.*positive semi-definite",
        arm(l1=link('l1', ixx=-0.1, iyy=0.1, izz=0.1)),
    )
    # symmetric with positive diagonal but an off-diagonal making it indefinite
    raises_when_strict(
        InertiaError,
        "'l1'.*positive semi-definite",
        arm(l1=link('l1', ixx=0.1, iyy=0.1, izz=0.1, ixy=0.2)),
    )


def test_inertia_breaks_triangle_inequality():
    raises_when_strict(
        InertiaError, "'l2'.*triangle inequality", arm(l2=link('l2', ixx=0.1, iyy=0.1, izz=0.5))
    )


def test_inertia_triangle_inequality_on_principal_moments():
    """A rotated tensor is judged by its principal moments, not its diagonal."""
    R = spart.Angles321_DCM([0.3, -0.5, 1.1]).T
    bad = R @ np.diag([0.1, 0.1, 0.5]) @ R.T
    i = {
        'ixx': bad[0, 0],
        'iyy': bad[1, 1],
        'izz': bad[2, 2],
        'ixy': bad[0, 1],
        'ixz': bad[0, 2],
        'iyz': bad[1, 2],
    }
    raises_when_strict(InertiaError, "'l1'.*triangle", arm(l1=link('l1', **i)))
    good = R @ np.diag([0.2, 0.3, 0.4]) @ R.T
    i = {
        'ixx': good[0, 0],
        'iyy': good[1, 1],
        'izz': good[2, 2],
        'ixy': good[0, 1],
        'ixz': good[0, 2],
        'iyz': good[1, 2],
    }
    build(arm(l1=link('l1', **i)), strict=True)


# --- singular models (they load: kinematics work; forward dynamics names what has no mass)
def build_then_fd_fails(text, match):
    robot = build(text)
    s = random_state(robot, 0)
    o = run_chain_fixed(robot, s)
    with pytest.raises(SingularModelError, match=match):
        spart.FD(
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
        )


def test_prismatic_joint_moving_no_mass():
    text = arm(
        link('finger', mass=0.0, ixx=0, iyy=0, izz=0),
        joint('slide', 'l2', 'finger', type='prismatic', axis='1 0 0'),
    )
    build_then_fd_fails(text, "'slide'.*'finger'")


def test_revolute_joint_moving_nothing():
    text = arm(link('flag', mass=0.0, ixx=0, iyy=0, izz=0), joint('turn', 'l2', 'flag'))
    build_then_fd_fails(text, "'turn'.*'flag'")


def test_prismatic_joint_moving_only_inertia_is_singular():
    """A prismatic joint moving a subtree of zero mass (some inertia) still has zero inertia."""
    text = arm(
        link('disk', mass=0.0, ixx=0.1, iyy=0.1, izz=0.1),
        joint('slide', 'l2', 'disk', type='prismatic', axis='1 0 0'),
    )
    build_then_fd_fails(text, "'slide'")


def test_zero_mass_end_effector_on_fixed_joint_is_accepted():
    text = arm(
        link('tool', mass=0.0, ixx=0, iyy=0, izz=0),
        joint('tool_mount', 'l2', 'tool', type='fixed', axis=None),
    )
    robot = build(text)
    assert robot.link_names[-1] == 'tool' and robot.n_q == 2
    s = random_state(robot, 0)
    o = run_chain(robot, s)
    assert np.all(np.isfinite(o.u0dot_fd)) and np.all(np.isfinite(o.umdot_fd))
    assert np.linalg.eigvalsh(o.H).min() > 0


def _massless_tree():
    """
    Return the URDF of a massless base turning a massless link that has inertia.

    Fixed-base use is fine.
    """
    return urdf(
        link('world', mass=0.0, ixx=0, iyy=0, izz=0),
        link('wheel', mass=0.0, ixx=0.1, iyy=0.1, izz=0.2),
        joint('spin', 'world', 'wheel'),
    )


def test_massless_fixed_base_is_accepted_but_floating_fd_is_not():
    robot = build(_massless_tree())
    s = random_state(robot, 0)
    o = run_chain_fixed(robot, s)
    assert o.Hm.shape == (1, 1) and o.Hm[0, 0] == pytest.approx(0.2)
    with pytest.raises(SingularModelError, match="'test_robot'.*mass"):
        spart.FD(
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
        )
    with pytest.raises(SingularModelError, match="'test_robot'.*mass"):
        spart.Floating_ID(
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
        )
    with pytest.raises(SingularModelError, match='mass'):
        spart.Center_of_Mass(s.r0, o.rL, robot)


def test_massless_base_floating_system():
    """
    A massless base welded to massive links floats fine.

    A massless base on a revolute joint does not (turning the base against the joint moves no mass:
    H is singular).
    """
    massless = link('world', mass=0.0, ixx=0, iyy=0, izz=0)
    robot = build(arm(base=massless, j1=joint('j1', 'world', 'l1', type='fixed', axis=None)))
    o = run_chain(robot, random_state(robot, 1))
    assert np.all(np.isfinite(o.u0dot_fd)) and np.linalg.eigvalsh(o.H).min() > 0
    robot = build(arm(base=massless, j1=joint('j1', 'world', 'l1')))  # fine as a fixed-base arm
    with pytest.raises(SingularModelError, match="'test_robot'.*generalized inertia"):
        run_chain(robot, random_state(robot, 1))


def run_chain_fixed(robot, s):
    """Return the chain up to GIM (no FD): what a fixed-base user calls."""
    from types import SimpleNamespace

    o = SimpleNamespace()
    o.RJ, o.RL, o.rJ, o.rL, o.e, o.g = spart.Kinematics(s.R0, s.r0, s.qm, robot)
    o.Bij, o.Bi0, o.P0, o.pm = spart.DiffKinematics(s.R0, s.r0, o.rL, o.e, o.g, robot)
    o.t0, o.tL = spart.Velocities(o.Bij, o.Bi0, o.P0, o.pm, s.u0, s.um, robot)
    o.I0, o.Im = spart.I_I(s.R0, o.RL, robot)
    o.M0_tilde, o.Mm_tilde = spart.MCB(o.I0, o.Im, o.Bij, o.Bi0, robot)
    o.H0, o.H0m, o.Hm = spart.GIM(o.M0_tilde, o.Mm_tilde, o.Bij, o.Bi0, o.P0, o.pm, robot)
    return o


# --- topology -------------------------------------------------------------------------------
def test_cycle_without_root():
    text = urdf(
        link('a'),
        link('b'),
        link('c'),
        joint('ab', 'a', 'b'),
        joint('bc', 'b', 'c'),
        joint('ca', 'c', 'a'),
    )
    with pytest.raises(TopologyError, match='cycle'):
        build(text)


def test_cycle_beside_a_root():
    text = urdf(link('base'), link('a'), link('b'), joint('ab', 'a', 'b'), joint('ba', 'b', 'a'))
    with pytest.raises(TopologyError) as err:
        build(text)
    msg = str(err.value)
    assert 'cycle' in msg or 'two parent' in msg
    assert "'a'" in msg or "'b'" in msg


def test_several_roots():
    text = urdf(
        link('base'), link('l1'), link('island'), link('other_island'), joint('j1', 'base', 'l1')
    )
    with pytest.raises(TopologyError) as err:
        build(text)
    for name in ('base', 'island', 'other_island'):
        assert f"'{name}'" in str(err.value)


def test_link_with_two_parents():
    text = arm(joint('j3', 'base', 'l2', xyz='1 0 0'))
    with pytest.raises(TopologyError) as err:
        build(text)
    assert "'l2'" in str(err.value) and "'j2'" in str(err.value) and "'j3'" in str(err.value)


def test_joint_to_undefined_link():
    text = arm(joint('j3', 'l2', 'ghost'))
    with pytest.raises((TopologyError, URDFError), match='ghost'):
        build(text)


@pytest.mark.parametrize('jtype', ['planar', 'floating'])
def test_unsupported_joint_types(jtype):
    text = arm(link('extra'), joint('weird_joint', 'l2', 'extra', type=jtype))
    with pytest.raises(UnsupportedJointError) as err:
        build(text)
    assert "'weird_joint'" in str(err.value) and jtype in str(err.value)


def test_unsupported_joint_type_in_builder():
    from spart_ros.core.model import RobotBuilder

    b = RobotBuilder('b')
    b.add_link('base', 1.0, np.eye(3))
    b.add_link('top', 1.0, np.eye(3))
    with pytest.raises(UnsupportedJointError, match="'hover'.*floating"):
        b.add_joint('hover', 'floating', 'base', 'top')


# --- axes -----------------------------------------------------------------------------------
def test_moving_joint_without_axis_warns_and_uses_x():
    with pytest.warns(UserWarning, match="'j2'.*axis"):
        robot = build(arm(j2=joint('j2', 'l1', 'l2', axis=None)))
    np.testing.assert_array_equal(robot.joints[1].axis, [1.0, 0.0, 0.0])
    # the motion really is about x
    s = random_state(robot, 0)
    RJ, RL, rJ, rL, e, g = spart.Kinematics(s.R0, s.r0, s.qm, robot)
    np.testing.assert_allclose(e[:, 1], RJ[:, 0, 1], atol=1e-15)


def test_non_unit_axis_warns_and_normalizes():
    with pytest.warns(UserWarning, match="'j1'.*normalized"):
        robot = build(arm(j1=joint('j1', 'base', 'l1', axis='0 3 4')))
    np.testing.assert_allclose(robot.joints[0].axis, [0.0, 0.6, 0.8], atol=1e-15)
    with pytest.warns(UserWarning, match="'j2'"):
        robot2 = build(arm(j2=joint('j2', 'l1', 'l2', type='prismatic', axis='0 0 2')))
    np.testing.assert_allclose(robot2.joints[1].axis, [0.0, 0.0, 1.0], atol=1e-15)


def test_unit_axes_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        build(arm(j1=joint('j1', 'base', 'l1', axis='0.36 0.48 0.8')))
        load_robot.__wrapped__('branched_two_arm_spacecraft')


def test_zero_axis():
    with pytest.raises(ModelError, match="'j1'.*axis"):
        build(arm(j1=joint('j1', 'base', 'l1', axis='0 0 0')))


# --- numeric inputs -------------------------------------------------------------------------
@pytest.fixture(scope='module')
def chain():
    robot = load_robot('branched_two_arm_spacecraft')
    s = random_state(robot, 0)
    return robot, s, run_chain(robot, s)


def test_qm_wrong_length(chain):
    robot, s, o = chain
    with pytest.raises(InputError, match=r'qm.*8'):
        spart.Kinematics(s.R0, s.r0, s.qm[:-1], robot)
    with pytest.raises(InputError, match='qm'):
        spart.Kinematics(s.R0, s.r0, np.concatenate([s.qm, [0.0]]), robot)


def test_R0_wrong_shape(chain):
    robot, s, o = chain
    for bad in (np.eye(4), np.eye(3)[:2], np.zeros(9), [[1, 0, 0], [0, 1, 0]]):
        with pytest.raises(InputError, match='R0'):
            spart.Kinematics(bad, s.r0, s.qm, robot)
    with pytest.raises(InputError, match='R0'):
        spart.I_I(np.eye(2), o.RL, robot)


def test_ragged_and_non_numeric_inputs(chain):
    robot, s, o = chain
    with pytest.raises(InputError, match='r0'):
        spart.Kinematics(s.R0, ['a', 'b', 'c'], s.qm, robot)
    with pytest.raises(InputError, match='R0'):
        spart.Kinematics([[1, 0, 0], [0, 1], [0, 0, 1]], s.r0, s.qm, robot)


def _call(robot, s, o, fn, **override):
    """Call SPART function ``fn`` on the chain's values, with some arguments replaced."""
    f = getattr(spart, fn)
    env = dict(vars(s))
    env.update(vars(o))
    k = 4
    env.update(rp=o.rL[:, k - 1], tp=o.tL[:, k - 1], i=k, robot=robot)
    env.update(override)
    names = [p for p in inspect.signature(f).parameters if p != 'gravity']
    return f(
        *[env[p] for p in names],
        **({'gravity': override['gravity']} if 'gravity' in override else {}),
    )


# (function, argument) pairs a user fills in from their own data
USER_INPUTS = [
    ('Kinematics', 'R0'),
    ('Kinematics', 'r0'),
    ('Kinematics', 'qm'),
    ('DiffKinematics', 'rL'),
    ('DiffKinematics', 'e'),
    ('DiffKinematics', 'g'),
    ('Velocities', 'u0'),
    ('Velocities', 'um'),
    ('Accelerations', 'u0'),
    ('Accelerations', 'um'),
    ('Accelerations', 'u0dot'),
    ('Accelerations', 'umdot'),
    ('Jacob', 'rp'),
    ('Jacob', 'r0'),
    ('Jacobdot', 'rp'),
    ('Jacobdot', 'tp'),
    ('Jacobdot', 't0'),
    ('Center_of_Mass', 'r0'),
    ('Center_of_Mass', 'rL'),
    ('I_I', 'R0'),
    ('I_I', 'RL'),
    ('FD', 'tau0'),
    ('FD', 'taum'),
    ('FD', 'wF0'),
    ('FD', 'wFm'),
    ('FD', 'u0'),
    ('FD', 'um'),
    ('ID', 'wF0'),
    ('ID', 'wFm'),
    ('Floating_ID', 'wF0'),
    ('Floating_ID', 'wFm'),
    ('Floating_ID', 'u0'),
    ('Floating_ID', 'um'),
    ('Floating_ID', 'umdot'),
]


@pytest.mark.parametrize('fn,arg', USER_INPUTS, ids=[f'{f}-{a}' for f, a in USER_INPUTS])
@pytest.mark.parametrize('bad', [np.nan, np.inf, -np.inf], ids=['nan', 'inf', '-inf'])
def test_non_finite_user_inputs(chain, fn, arg, bad):
    robot, s, o = chain
    x = np.array(
        vars(s).get(arg, vars(o).get(arg))
        if arg not in ('rp', 'tp')
        else (o.rL[:, 3] if arg == 'rp' else o.tL[:, 3]),
        dtype=float,
    )
    x.flat[x.size // 2] = bad
    with pytest.raises(InputError) as err:
        _call(robot, s, o, fn, **{arg: x})
    assert str(err.value).startswith(arg + ':'), f'{fn}: message {err.value!s} does not name {arg}'
    assert 'NaN' in str(err.value) or 'inf' in str(err.value)


@pytest.mark.parametrize('fn,arg', USER_INPUTS, ids=[f'{f}-{a}' for f, a in USER_INPUTS])
def test_wrong_length_user_inputs(chain, fn, arg):
    robot, s, o = chain
    x = np.array(
        vars(s).get(arg, vars(o).get(arg))
        if arg not in ('rp', 'tp')
        else (o.rL[:, 3] if arg == 'rp' else o.tL[:, 3]),
        dtype=float,
    )
    x = x[..., :-1]
    with pytest.raises(InputError) as err:
        _call(robot, s, o, fn, **{arg: x})
    assert str(err.value).startswith(arg + ':'), f'{fn}: message {err.value!s} does not name {arg}'


@pytest.mark.parametrize('fn', ['ID', 'FD', 'Floating_ID'])
def test_gravity_argument_checked(chain, fn):
    robot, s, o = chain
    with pytest.raises(InputError, match='gravity'):
        _call(robot, s, o, fn, gravity=[0.0, np.nan, -9.81])
    with pytest.raises(InputError, match='gravity'):
        _call(robot, s, o, fn, gravity=[0.0, -9.81])


SPART_FUNCTIONS = [
    'Kinematics',
    'DiffKinematics',
    'Velocities',
    'Accelerations',
    'Jacob',
    'Jacobdot',
    'Center_of_Mass',
    'NOC',
    'NOCdot',
    'I_I',
    'MCB',
    'GIM',
    'CIM',
    'GIM_NOC',
    'CIM_NOC',
    'FD',
    'ID',
    'Floating_ID',
]


@pytest.mark.parametrize('fn', SPART_FUNCTIONS)
def test_every_array_argument_is_checked(chain, fn):
    """
    Every array argument of every SPART-named function is checked.

    Intermediate ones too (Bij, P0, t0, Im, N, ...): a NaN or a wrong shape raises InputError
    naming that argument, never a silent NaN result, a numpy error, or an error naming another
    argument.
    """
    robot, s, o = chain
    names = [
        p
        for p in inspect.signature(getattr(spart, fn)).parameters
        if p not in ('robot', 'gravity', 'i')
    ]
    env = dict(vars(s))
    env.update(vars(o))
    env.update(rp=o.rL[:, 3], tp=o.tL[:, 3])
    problems = []
    for arg in names:
        for kind in ('NaN', 'shape'):
            x = np.array(env[arg], dtype=float)
            if kind == 'NaN':
                x.flat[0] = np.nan
            else:
                x = x[..., :-1]
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter('ignore')
                    _call(robot, s, o, fn, **{arg: x})
                problems.append(f'{arg} ({kind}): no error')
            except InputError as err:
                if not str(err).startswith(arg + ':'):
                    problems.append(f'{arg} ({kind}): InputError names another argument: {err}')
            except Exception as err:  # noqa: BLE001 - reporting which
                problems.append(f'{arg} ({kind}): {type(err).__name__}: {err}')
    assert not problems, f'{fn}: unchecked arguments:\n  ' + '\n  '.join(problems)


def test_jacob_link_errors(chain):
    robot, s, o = chain
    with pytest.raises(InputError, match="^i: unknown link 'no_such_link'"):
        spart.Jacob(o.rL[:, 0], s.r0, o.rL, o.P0, o.pm, 'no_such_link', robot)
    with pytest.raises(InputError, match="^i: unknown link 'no_such_link'"):
        spart.Jacobdot(
            o.rL[:, 0], o.tL[:, 0], s.r0, o.t0, o.rL, o.tL, o.P0, o.pm, 'no_such_link', robot
        )
    from spart_ros.core import jacobians

    with pytest.raises(InputError, match="^link: unknown link 'no_such_link'"):
        jacobians.point_jacobian('no_such_link', None, s.R0, s.r0, o.RL, o.rL, o.P0, o.pm, robot)
    for bad in (-1, robot.n_links_joints + 1, 2.5):
        with pytest.raises(InputError, match='link id'):
            spart.Jacob(o.rL[:, 0], s.r0, o.rL, o.P0, o.pm, bad, robot)


def test_model_name_lookups(chain):
    robot, s, o = chain
    assert robot.link_index('a_tip') == 7
    assert robot.q_position('b_elbow') == 7
    with pytest.raises(ModelError, match="'a_camera_mount'.*fixed"):
        robot.q_position('a_camera_mount')
    with pytest.raises(ModelError, match="'nope'"):
        robot.q_position('nope')


# --- axes, frames and values at the model's entry (issue 12) --------------------------------
def test_huge_axis_is_normalized_not_zeroed():
    """
    An axis of 1e200 entries.

    Scaled by its largest entry before normalizing (its norm would overflow to inf, the axis to
    zero), a ModelWarning and no numpy RuntimeWarning.
    """
    text = arm(j1=joint('j1', 'base', 'l1', axis='1e200 1e200 0'))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        robot = build(text)
    kinds = {type(w.message) for w in caught}
    assert kinds == {errors.ModelWarning}, [str(w.message) for w in caught]
    np.testing.assert_allclose(robot.joints[0].axis, [2**-0.5, 2**-0.5, 0.0], rtol=1e-15)
    # the model is a real rotation about that axis, H is regular
    s = random_state(robot, 1)
    o = run_chain(robot, s)
    RL = o.RL[:, :, 0]
    np.testing.assert_allclose(RL.T @ RL, np.eye(3), atol=1e-14)
    assert np.linalg.eigvalsh(o.H)[0] > 1e-6


@pytest.mark.parametrize('axis', ['0 0 0', '1e-200 0 0'])
def test_zero_axis_is_an_error(axis):
    with pytest.raises(ModelError, match="joint 'j1': axis .* zero length"):
        build(arm(j1=joint('j1', 'base', 'l1', axis=axis)))


def test_robot_constructor_refuses_a_zero_or_non_unit_axis_and_non_rigid_frames():
    from spart_ros.core.model import BaseLink, Joint, Link, Robot

    base = BaseLink('b', 1.0, np.eye(3))

    def robot(axis=(0.0, 0.0, 1.0), T=np.eye(4)):
        return Robot(
            'r',
            base,
            [Link(1, 'l', 1, 1.0, np.eye(3), np.eye(4))],
            [Joint(1, 'j', 1, 1, 0, 1, np.array(axis), T)],
        )

    assert robot().n_q == 1
    for axis in ((0.0, 0.0, 0.0), (0.0, 0.0, 2.0)):
        with pytest.raises(ModelError, match=r"^joint 'j': axis .* is not a unit vector"):
            robot(axis)
    with pytest.raises(ModelError, match=r"^joint 'j': axis: expected shape \(3,\), got \(4,\)"):
        robot((0.0, 0.0, 1.0, 0.0))
    with pytest.raises(
        ModelError, match=r"^joint 'j': T \(its rotation block\): expected a rotation matrix"
    ):
        robot(T=np.diag([2.0, 2.0, 2.0, 1.0]))
    with pytest.raises(
        ModelError, match=r"^joint 'j': T: expected a rigid transform .*row \[0.0, 0.0, 0.0, 2.0\]"
    ):
        robot(T=2 * np.eye(4))
    with pytest.raises(ModelError, match=r'^base_link: expected a BaseLink, got None'):
        Robot('r', None, [], [])


def test_builder_checks_every_argument_at_the_call():
    """
    Each bad value raises at the add_link / add_joint call that gives it.

    Naming the link or joint and the argument (the cases the audit found: complex mass, None
    inertia, a 3-vector com, ragged inertia, 3x3 origin, 2*eye(4) origin, an axis of length 4, NaN
    limits).
    """
    from spart_ros.core import RobotBuilder
    from spart_ros.core.model import JointLimits

    b = RobotBuilder('b')
    b.add_link('base', 1.0, np.eye(3))
    cases = [
        (
            lambda: b.add_link('a', 1 + 1j, np.eye(3)),
            InertiaError,
            r"^link 'a': mass: expected real numbers",
        ),
        (
            lambda: b.add_link('a', 1.0, None),
            InertiaError,
            r"^link 'a': inertia: expected an array of shape \(3, 3\), "
            'got None',
        ),
        (
            lambda: b.add_link('a', 1.0, np.eye(3), com=[np.nan, 0, 0]),
            ModelError,
            r"^link 'a': com: expected shape \(4, 4\), got \(3,\)",
        ),
        (
            lambda: b.add_link('a', 1.0, [[1, 0], [0, 1, 0], [0, 0, 1]]),
            InertiaError,
            r"^link 'a': inertia: .*rows of different lengths",
        ),
        (
            lambda: b.add_link('a', -2.0, np.eye(3)),
            InertiaError,
            r"^link 'a': mass -2 kg is negative",
        ),
        (
            lambda: b.add_joint('j', 'revolute', 'base', 'a', origin=np.eye(3)),
            ModelError,
            r"^joint 'j': origin: expected shape \(4, 4\), got \(3, 3\)",
        ),
        (
            lambda: b.add_joint('j', 'revolute', 'base', 'a', origin=2 * np.eye(4)),
            ModelError,
            r"^joint 'j': origin: expected a rigid transform",
        ),
        (
            lambda: b.add_joint('j', 'revolute', 'base', 'a', axis=[0, 0, 1, 0]),
            ModelError,
            r"^joint 'j': axis: expected shape \(3,\), got \(4,\)",
        ),
        (
            lambda: b.add_joint('j', 'revolute', 'base', 'a', axis=[0, 0, 0]),
            ModelError,
            r"^joint 'j': axis .* zero length",
        ),
        (
            lambda: b.add_joint('j', 'revolute', 'base', 'a', limits=JointLimits(np.nan, 1.0)),
            ModelError,
            r"^joint 'j': limits.lower: expected a number .*got float nan",
        ),
        (
            lambda: b.add_joint('j', 'revolute', 'base', 'a', limits=(-1.0, 1.0)),
            ModelError,
            r"^joint 'j': limits: expected JointLimits",
        ),
        (
            lambda: b.add_joint('j', 'revolute', 'base', 'a', mimic=('k', np.nan, 0.0)),
            ModelError,
            r"^joint 'j': mimic multiplier: expected a finite number",
        ),
    ]
    for call, cls, match in cases:
        with pytest.raises(cls, match=match):
            call()
    assert list(b._links) == ['base'] and b._joints == []  # nothing half-added
    b.add_link('a', 1.0, np.eye(3))
    with pytest.warns(errors.ModelWarning, match="joint 'j': axis .* normalized"):
        b.add_joint('j', 'revolute', 'base', 'a', axis=[0.0, 3.0, 4.0])
    np.testing.assert_allclose(b.build().joints[0].axis, [0.0, 0.6, 0.8], rtol=1e-15)


def test_dh_frame_and_mass_are_checked():
    def dh(**base):
        man = [
            {
                'type': 1,
                'DH': {'d': 0.1, 'alpha': 0.2, 'a': 0.3, 'theta': 0.0},
                'b': [0.1, 0.0, 0.0],
                'mass': 1.0,
                'I': np.eye(3),
            }
        ]
        return {
            'n': 1,
            'man': man,
            'EE': {'theta': 0.0, 'd': 0.1},
            'base': dict({'T_L0_J1': np.eye(4), 'mass': 10.0, 'I': np.eye(3)}, **base),
        }

    assert spart.DH_Serial2robot(dh())[0].n_q == 1
    with pytest.raises(ModelError, match=r'^DH data: base.T_L0_J1: expected a rigid transform'):
        spart.DH_Serial2robot(dh(T_L0_J1=2 * np.eye(4)))
    with pytest.raises(
        ModelError, match=r'^DH data: base.T_L0_J1 \(its rotation block\): expected a rotation'
    ):
        spart.DH_Serial2robot(dh(T_L0_J1=np.diag([1.0, 1.0, -1.0, 1.0])))
    with pytest.raises(ModelError, match=r'^DH data: base.mass = None is not a number'):
        spart.DH_Serial2robot(dh(mass=None))
    with pytest.raises(ModelError, match=r'^DH data: base.I: expected real numbers, got complex'):
        spart.DH_Serial2robot(dh(I=np.eye(3) * (1 + 1j)))


def test_overflow_from_the_model_names_the_robot_and_joint():
    """
    A joint at 1e300 m: the mass matrix overflows.

    The error names the robot and the joint, not R0 (the largest input, of magnitude 1).
    """
    from spart_ros.core.fast import FastDynamics

    robot = build(arm(j2=joint('j2', 'l1', 'l2', xyz='1e300 0 0')))
    fd = FastDynamics(robot)
    with pytest.raises(
        ModelError, match=r"^robot 'test_robot': too large: joint 'j2' holds values up to 1e\+300"
    ):
        fd.mass_matrix(np.eye(3), np.zeros(3), np.zeros(2))


def test_fast_dynamics_refuses_a_model_changed_after_it_was_built():
    from spart_ros.core.fast import FastDynamics

    robot = build(arm())
    robot.links[1].mass = float('nan')  # a Robot checks its values when built; this is later
    with pytest.raises(
        ModelError, match=r"^robot 'test_robot': link 'l2' or joint 'j2' holds NaN"
    ):
        FastDynamics(robot)


# --- numpy's error state, shared checks (review items) ---------------------------------------
def test_numpy_error_state_of_the_caller_is_restored(chain):
    """
    The caller's numpy error state is restored after a checked numpy body.

    Checked numpy bodies (``checked``, ``quietly``) run with numpy's overflow warnings off and
    report an overflow as an InputError; the caller's error state (np.seterr, its call handler) is
    what it was, after a result and after an error.
    """
    from spart_ros.core import base_state

    robot, s, o = chain

    def handler(kind, flag):
        raise AssertionError(f'numpy error handler called: {kind}')

    old, old_call = np.seterr(all='raise'), np.seterrcall(handler)
    try:
        np.seterr(under='ignore', divide='call')
        before = (np.geterr(), np.geterrcall())
        c = np.sqrt(0.5)
        Rz45 = np.array([[c, -c, 0.0], [c, c, 0.0], [0.0, 0.0, 1.0]])
        calls = [
            lambda: spart.Center_of_Mass(s.r0, o.rL, robot),  # checked
            lambda: spart.Center_of_Mass(
                np.full(3, 1e308), np.full(o.rL.shape, 1e308), robot
            ),  # overflows
            lambda: base_state.base_from_link_frame(robot, np.eye(3), np.zeros(3)),  # quietly
            lambda: base_state.base_from_link_frame(
                robot, Rz45, np.zeros(3), [1.7e308, 1.7e308, 0]
            ),
        ]  # overflows
        for k, call in enumerate(calls):
            if k % 2:
                with pytest.raises(
                    InputError, match='too large'
                ):  # not numpy's FloatingPointError
                    call()
            else:
                call()
            assert (np.geterr(), np.geterrcall()) == before, k
    finally:
        np.seterr(**old)
        np.seterrcall(old_call)


def test_nonnegative_names_the_argument():
    from spart_ros.core.checks import nonnegative

    for ok, want in (
        (0, 0.0),
        (2.5, 2.5),
        (np.float32(0.5), 0.5),
        (np.array(3), 3.0),
        (np.int64(4), 4.0),
    ):
        got = nonnegative('tol', ok)
        assert got == want and type(got) is float, (ok, got)
    for bad in (-1e-300, np.nan, np.inf, True, None, 'x', [1.0], 1j, 10**400):
        with pytest.raises(InputError, match='^tol: '):
            nonnegative('tol', bad)
    assert nonnegative('max_age', np.inf, infinite=True) == np.inf
    for bad in (-np.inf, np.nan, -1):
        with pytest.raises(
            InputError, match='^max_age: expected a number >= 0|^max_age: expected a finite'
        ):
            nonnegative('max_age', bad, infinite=True)


def test_solvers_refuse_a_symbolic_robot_as_a_model_error():
    """
    forward_dynamics / floating_inverse_dynamics on a symbolic robot.

    ModelError naming the robot (not SingularModelError: the robot is not singular), before any
    computation.
    """
    from spart_ros.core import model as core_model
    import sympy as sp

    m = sp.Symbol('m', positive=True)
    b = core_model.RobotBuilder('sym')
    b.add_link('base', mass=m, inertia=np.eye(3))
    b.add_link('l1', mass=1.0, inertia=np.eye(3))
    b.add_joint('j1', 'revolute', parent='base', child='l1', axis=[0, 0, 1])
    robot = b.build()
    n, nq = robot.n_links_joints, robot.n_q
    z = np.zeros
    args_fd = (
        z(6),
        z(nq),
        z(6),
        z((6, n)),
        z(6),
        z((6, n)),
        z((6, 6)),
        z((6, n)),
        z((3, 3)),
        z((3, 3, n)),
        z((6, 6, n, n)),
        z((6, 6, n)),
        z(6),
        z(nq),
        robot,
    )
    args_fid = (
        z(6),
        z((6, n)),
        z((6, 6, n)),
        z((6, 6)),
        z(6),
        z((6, n)),
        z((6, 6)),
        z((6, n)),
        z((3, 3)),
        z((3, 3, n)),
        z((6, 6, n, n)),
        z((6, 6, n)),
        z(6),
        z(nq),
        z(nq),
        robot,
    )
    for fn, args in ((spart.FD, args_fd), (spart.Floating_ID, args_fid)):
        with pytest.raises(ModelError, match="^robot 'sym' is symbolic: .* needs numbers") as err:
            fn(*args)
        assert not isinstance(err.value, SingularModelError)


def test_numbers_in_object_arrays_are_numbers_in_every_model_check():
    """
    Numbers in object arrays are numbers in every model check.

    An object array of sympy numbers (no symbols) is checked as numbers by model_array and
    rigid_transform alike (a non-rigid one is refused) and kept exact by both (symbolic models stay
    exact); plain Python numbers in an object array become float64.
    """
    from spart_ros.core.model import model_array, rigid_transform
    import sympy as sp

    half = sp.Rational(1, 2)
    T = np.array([[1, 0, 0, half], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], dtype=object)
    for fn, x in ((model_array, T), (rigid_transform, T)):
        a = fn('T', x) if fn is rigid_transform else fn('T', x, (4, 4))
        assert a.dtype == object and a[0, 3] == half and isinstance(a[0, 3], sp.Rational)
    plain = np.array([[1, 0, 0, 0.5], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], dtype=object)
    assert (
        model_array('T', plain, (4, 4)).dtype == np.float64
        and rigid_transform('T', plain).dtype == np.float64
    )
    with pytest.raises(ModelError, match='not a finite number'):
        model_array('T', np.array([sp.oo, 0, 0], dtype=object), (3,))
    with pytest.raises(ModelError, match='^T \\(its rotation block\\)'):
        rigid_transform(
            'T',
            np.array(
                [[sp.Integer(2), 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], dtype=object
            ),
        )  # a scale, in sympy numbers
    x = sp.Symbol('x')
    assert (
        rigid_transform(
            'T', np.array([[1, 0, 0, x], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], dtype=object)
        ).dtype
        == object
    )


def test_model_scale_follows_the_model():
    """Robot.model_scale names the largest value of the model as it is now (not cached)."""
    robot = build(arm(l2=link('l2', mass=3.0)))
    assert robot.model_scale() == (10.0, "link 'base'")
    robot.links[1].mass = 1e200
    assert robot.model_scale() == (1e200, "link 'l2'")
