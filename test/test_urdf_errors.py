"""
Bad robot descriptions raise a ModelError subclass whose message names the file, the link or joint.

The element and the problem (URDF, RobotBuilder, Robot, DH data).
"""

import copy
import warnings

import numpy as np
import pytest
from spart_ros import spart
from spart_ros.core import RobotBuilder
from spart_ros.core.errors import ModelError, TopologyError, UnsupportedJointError, URDFError
from spart_ros.core.model import BaseLink, Joint, Link, Robot
from spart_ros.core.urdf import robot_from_urdf

INERTIAL = (
    '<inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>'
    '</inertial>'
)


def arm(j1='', l1=INERTIAL, extra=''):
    """Return base -j1-> l1, with the joint's inner XML and l1's inertial replaceable."""
    j1 = (
        j1
        or '<origin xyz="0 0 0.5" rpy="0 0 0"/><axis xyz="0 0 1"/><limit effort="1" velocity="1"/>'
    )
    return (
        f'<?xml version="1.0"?><robot name="arm"><link name="base">{INERTIAL}</link>'
        f'<link name="l1">{l1}</link><joint name="j1" type="revolute"><parent link="base"/>'
        f'<child link="l1"/>{j1}</joint>{extra}</robot>'
    )


def error_of(source, cls=ModelError, **kw):
    with pytest.raises(cls) as err, warnings.catch_warnings():
        warnings.simplefilter('ignore')
        robot_from_urdf(source, **kw)
    return str(err.value)


# --- NaN, infinity, malformed numbers ------------------------------------------------------
@pytest.mark.parametrize(
    'j1,words',
    [
        (
            '<origin xyz="0 nan 0.5"/><axis xyz="0 0 1"/>',
            ["joint 'j1'", '<origin xyz="0 nan 0.5">', 'NaN'],
        ),
        (
            '<origin xyz="0 0 0.5" rpy="inf 0 0"/><axis xyz="0 0 1"/>',
            ["joint 'j1'", 'rpy="inf 0 0"', 'NaN or infinity'],
        ),
        ('<axis xyz="0 NaN 1"/>', ["joint 'j1'", '<axis xyz="0 NaN 1">']),
        ('<axis xyz="0 0"/>', ["joint 'j1'", 'expected 3 numbers, got 2']),
        (
            '<origin xyz="0,0,0.5"/><axis xyz="0 0 1"/>',
            ["joint 'j1'", 'xyz="0,0,0.5"', 'not three numbers'],
        ),
        ('<axis xyz="0 0 0"/>', ["joint 'j1'", 'zero length']),
        (
            '<axis xyz="0 0 1"/><limit lower="-1" upper="nan" effort="1" velocity="1"/>',
            ["joint 'j1'", 'upper="nan"'],
        ),
        (
            '<axis xyz="0 0 1"/><mimic joint="j1" multiplier="inf"/>',
            ["joint 'j1'", 'multiplier="inf"'],
        ),
    ],
)
def test_bad_joint_numbers_name_the_joint_and_element(j1, words):
    msg = error_of(arm(j1=j1), URDFError if 'zero length' not in words else ModelError)
    for w in words:
        assert w in msg, msg


@pytest.mark.parametrize(
    'l1,words',
    [
        (
            '<inertial><mass value="nan"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" '
            'izz="1"/></inertial>',
            ["link 'l1'", '<mass value="nan">'],
        ),
        (
            '<inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="inf" iyz="0" '
            'izz="1"/></inertial>',
            ["link 'l1'", 'iyy="inf"'],
        ),
        (
            '<inertial><origin xyz="0 0 -inf"/><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" '
            'iyy="1" iyz="0" izz="1"/></inertial>',
            ["link 'l1'", 'xyz="0 0 -inf"'],
        ),
        (
            '<inertial><mass value="heavy"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" '
            'izz="1"/></inertial>',
            ["link 'l1'", '<mass value="heavy">', 'not a number'],
        ),
        (
            '<inertial><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>',
            ["link 'l1'", '<mass'],
        ),
        ('<inertial><mass value="1"/></inertial>', ["link 'l1'", '<inertia']),
        (
            '<inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" izz="1"/>'
            '</inertial>',
            ["link 'l1'", 'iyz='],
        ),
        (
            '<inertial><mass value="-2"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" '
            'izz="1"/></inertial>',
            ["link 'l1'", 'mass -2'],
        ),
    ],
)
def test_bad_link_numbers_name_the_link_and_element(l1, words):
    msg = error_of(arm(l1=l1))
    for w in words:
        assert w in msg, msg


def test_errors_name_the_file(tmp_path):
    path = tmp_path / 'broken_robot.urdf'
    path.write_text(arm(j1='<origin xyz="0 nan 0"/>'))
    msg = error_of(str(path), URDFError)
    assert msg.startswith(str(path) + ': ') and "joint 'j1'" in msg
    assert error_of(arm(j1='<origin xyz="0 nan 0"/>'), URDFError).startswith('URDF text: ')


# --- duplicates and structure --------------------------------------------------------------
def test_duplicate_link_names():
    text = arm(extra=f'<link name="l1">{INERTIAL}</link>')
    msg = error_of(text, URDFError)
    assert "link 'l1' is defined twice" in msg


def test_duplicate_joint_names():
    text = arm(
        extra=f'<link name="l2">{INERTIAL}</link><joint name="j1" type="fixed"><parent link="l1"/>'
        '<child link="l2"/></joint>'
    )
    msg = error_of(text, URDFError)
    assert "joint 'j1' is defined twice" in msg


def test_duplicate_names_in_the_builder_and_the_robot_constructor():
    b = RobotBuilder('dup')
    b.add_link('a', 1.0, np.eye(3))
    with pytest.raises(ModelError, match="link 'a' is defined twice"):
        b.add_link('a', 1.0, np.eye(3))
    base = BaseLink('a', 1.0, np.eye(3))
    links = [
        Link(1, 'b', 1, 1.0, np.eye(3), np.eye(4)),
        Link(2, 'b', 2, 1.0, np.eye(3), np.eye(4)),
    ]
    joints = [
        Joint(1, 'j', 1, 1, 0, 1, np.array([0.0, 0, 1]), np.eye(4)),
        Joint(2, 'k', 1, 2, 1, 2, np.array([0.0, 0, 1]), np.eye(4)),
    ]
    with pytest.raises(ModelError, match=r"link names \['b'\]"):
        Robot('dup', base, links, joints)
    links[1].name = 'c'
    joints[1].name = 'j'
    with pytest.raises(ModelError, match=r"joint names \['j'\]"):
        Robot('dup', base, links, joints)


def test_nan_in_a_hand_built_robot_names_the_element():
    b = RobotBuilder('nan_arm')
    b.add_link('base', 1.0, np.eye(3))
    b.add_link('l1', 1.0, np.eye(3))
    T = np.eye(4)
    T[0, 3] = np.nan
    with pytest.raises(ModelError, match="joint 'j1'.*NaN"):  # checked at the call that gives it
        b.add_joint('j1', 'revolute', 'base', 'l1', origin=T, axis=[0, 0, 1])
    b = RobotBuilder('nan_mass')
    with pytest.raises(ModelError, match="link 'base'.*not finite"):
        b.add_link('base', float('inf'), np.eye(3))


@pytest.mark.parametrize(
    'text,cls,words',
    [
        ('<robot name="r"><link/></robot>', URDFError, ['<link> has no name']),
        (
            '<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="revolute">'
            '<parent link="a"/>'
            '</joint></robot>',
            URDFError,
            ["joint 'j'", '<child link'],
        ),
        (
            '<robot name="r"><link name="a"/><link name="b"/><joint name="j"><parent link="a"/>'
            '<child link="b"/>'
            '</joint></robot>',
            URDFError,
            ["joint 'j'", 'no type'],
        ),
        (
            '<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="hinge">'
            '<parent link="a"/>'
            '<child link="b"/></joint></robot>',
            URDFError,
            ["joint 'j'", "'hinge'", 'revolute, continuous'],
        ),
        (
            '<robot name="r"><link name="a"/><link name="b"/><joint name="neck" type="spherical">'
            '<parent link="a"/>'
            '<child link="b"/></joint></robot>',
            UnsupportedJointError,
            ["joint 'neck'", 'three revolute joints'],
        ),
        (
            '<robot name="r"><link name="a"/><joint name="j" type="fixed"><parent link="a"/>'
            '<child link="ghost"/>'
            '</joint></robot>',
            TopologyError,
            ["joint 'j'", "'ghost'"],
        ),
        (
            '<robot name="r"><link name="a"/><link name="b"/><joint name="j" type="revolute">'
            '<parent link="a"/>'
            '<child link="b"/><mimic/></joint></robot>',
            URDFError,
            ["joint 'j'", '<mimic> has no joint'],
        ),
        ('<robot name="r"></robot>', URDFError, ['no <link>']),
    ],
)
def test_structure_errors(text, cls, words):
    msg = error_of(text, cls)
    for w in words:
        assert w in msg, msg


def test_mimic_cycles_are_refused_by_the_model():
    b = RobotBuilder('cycle')
    b.add_link('base', 1.0, np.eye(3))
    for k in (1, 2):
        b.add_link(f'l{k}', 1.0, np.eye(3))
    b.add_joint('a', 'revolute', 'base', 'l1', axis=[0, 0, 1], mimic=('b', 1.0, 0.0))
    b.add_joint('b', 'revolute', 'base', 'l2', axis=[0, 0, 1], mimic=('a', 1.0, 0.0))
    with pytest.raises(ModelError, match='cycle'):
        b.build()


# --- DH data -------------------------------------------------------------------------------
DH = {
    'name': 'dh2',
    'n': 2,
    'man': [
        {
            'type': 1,
            'DH': {'d': 0.1, 'alpha': 0.2, 'a': 0.3, 'theta': 0.0},
            'b': [0.1, 0.0, 0.0],
            'mass': 1.0,
            'I': np.eye(3),
        },
        {
            'type': 2,
            'DH': {'d': 0.0, 'alpha': 0.0, 'a': 0.2, 'theta': 0.4},
            'b': [0.05, 0.0, 0.0],
            'mass': 0.5,
            'I': np.eye(3) * 0.1,
        },
    ],
    'base': {'T_L0_J1': np.eye(4), 'mass': 10.0, 'I': np.eye(3)},
    'EE': {'theta': 0.0, 'd': 0.1},
}


def with_(path, value):
    data = copy.deepcopy(DH)
    target = data
    for key in path[:-1]:
        target = target[key]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


def test_valid_dh_builds():
    robot, T = spart.DH_Serial2robot(DH)
    assert robot.n_q == 2 and T.shape == (4, 4)


@pytest.mark.parametrize(
    'path,value,words',
    [
        (('man', 0, 'DH', 'd'), np.nan, ['man[0].DH.d', 'NaN']),
        (('man', 1, 'DH', 'theta'), np.inf, ['man[1].DH.theta']),
        (('man', 1, 'mass'), np.nan, ['man[1].mass']),
        (('man', 0, 'I'), np.full((3, 3), np.nan), ['man[0].I', 'NaN']),
        (('man', 0, 'I'), np.eye(2), ['man[0].I', 'shape']),
        (('man', 0, 'b'), [0.1, 0.2], ['man[0].b', 'shape']),
        (('man', 1, 'b'), [0.1, np.nan, 0.0], ['man[1].b']),
        (('base', 'T_L0_J1'), np.eye(3), ['base.T_L0_J1', 'shape']),
        (('base', 'mass'), 'ten', ['base.mass', 'not a number']),
        (('EE', 'd'), np.nan, ['EE.d']),
        (('man', 0, 'DH', 'alpha'), KeyError, ['man[0].DH', "'alpha'"]),
        (('man', 1, 'mass'), KeyError, ['man[1]', "'mass'"]),
        (('EE',), KeyError, ["'EE'"]),
        (('n',), 2.5, ['n = 2.5']),
        (('n',), 'two', ["n = 'two'"]),
        (('man',), 7, ['man must be a list']),
        (('man', 0, 'type'), 3, ['man[0].type = 3']),
    ],
)
def test_bad_dh_data_names_the_field(path, value, words):
    with pytest.raises(ModelError) as err:
        spart.DH_Serial2robot(with_(path, value))
    for w in words:
        assert w in str(err.value), str(err.value)
