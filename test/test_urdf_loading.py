"""
robot_from_urdf takes the robots users have.

Encodings, massless frames, world roots, xacro, cosmetic junk, degenerate inertias; and what it
refuses, it refuses naming the file, link or joint (errors: test_urdf_errors.py; real-world corpus:
test_urdf_corpus.py).
"""

import os
import pathlib
import warnings

from core_helpers import random_state, REF_URDF_DIR, TEST_DIR
import numpy as np
import pytest
from spart_ros import spart
import spart_ros.core as core
from spart_ros.core import RobotBuilder
from spart_ros.core.attitude import rpy_rotation
from spart_ros.core.errors import (
    InertiaError,
    InertiaWarning,
    InputError,
    MimicJointWarning,
    ModelWarning,
    SingularModelError,
    UnsupportedJointError,
    URDFError,
)
from spart_ros.core.fast import FastDynamics
from spart_ros.core.model import check_mass_inertia
from spart_ros.core.urdf import robot_from_urdf, urdf_text

LOADING = os.path.join(TEST_DIR, 'data', 'urdf', 'loading')
UR5 = os.path.join(LOADING, 'ur5_world.urdf')
QUADRUPED = os.path.join(LOADING, 'quadruped_world_floating.urdf')
BIPED = os.path.join(LOADING, 'biped.urdf.xacro')
MANISAT = os.path.join(LOADING, 'manisat_planar.urdf')
PACKAGE_URDFS = sorted(
    str(p) for p in pathlib.Path(TEST_DIR, '..', 'urdf').resolve().glob('*.urdf')
)


def load(source, **kw):
    """(robot, [warnings]) with every warning recorded."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        robot, keys = robot_from_urdf(source, **kw)
    assert keys is robot.keys
    return robot, caught


def messages(caught, category=Warning):
    return [str(w.message) for w in caught if issubclass(w.category, category)]


def same_model(a, b):
    """Every name, number and transform of two robots agree exactly."""
    assert (
        a.link_names == b.link_names and a.joint_names == b.joint_names and a.q_names == b.q_names
    )
    assert a.base_hint == b.base_hint and np.array_equal(a.base_pose, b.base_pose)
    for x, y in zip([a.base_link] + a.links, [b.base_link] + b.links):
        assert (
            x.mass == y.mass and np.array_equal(x.inertia, y.inertia) and np.array_equal(x.T, y.T)
        )
    for x, y in zip(a.joints, b.joints):
        assert (x.type, x.parent_link) == (y.type, y.parent_link)
        assert np.array_equal(x.axis, y.axis) and np.array_equal(x.T, y.T) and x.limits == y.limits


def fast_fd(robot, floating, seed=0):
    s = random_state(robot, seed)
    return FastDynamics(robot).forward_dynamics(
        s.R0, s.r0, s.qm, s.u0, s.um, s.tau0, s.taum, gravity=[0, 0, -9.81], floating=floating
    )


def spart_fd(robot, seed=0):
    s = random_state(robot, seed)
    RJ, RL, rJ, rL, e, g = spart.Kinematics(s.R0, s.r0, s.qm, robot)
    Bij, Bi0, P0, pm = spart.DiffKinematics(s.R0, s.r0, rL, e, g, robot)
    t0, tL = spart.Velocities(Bij, Bi0, P0, pm, s.u0, s.um, robot)
    I0, Im = spart.I_I(s.R0, RL, robot)
    return spart.FD(
        s.tau0, s.taum, s.wF0, s.wFm, t0, tL, P0, pm, I0, Im, Bij, Bi0, s.u0, s.um, robot
    )


# --- text: encodings, declarations, paths, bytes -------------------------------------------
def test_encoding_declaration_from_path_str_bytes_and_pathlike():
    reference, _ = load(UR5)
    with open(UR5, 'rb') as f:
        data = f.read()
    assert data.startswith(b'<?xml version="1.0" encoding="utf-8"?>')
    for source in (pathlib.Path(UR5), data, data.decode('utf-8'), bytearray(data)):
        robot, _ = load(source)
        same_model(robot, reference)


def test_declared_encoding_bom_version_zero_and_leading_blank_lines():
    body = (
        '<robot name="bras_\u00e9paule"><link name="base"><inertial><mass value="1"/>'
        '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link></robot>'
    )
    latin1 = ('<?xml version="1.0" encoding="ISO-8859-1"?>\n<!-- \u00e9 -->\n' + body).encode(
        'iso-8859-1'
    )
    assert load(latin1)[0].name == 'bras_\u00e9paule'
    assert (
        load('<?xml version="1.0" encoding="ISO-8859-1"?>' + body)[0].name == 'bras_\u00e9paule'
    )  # str: decoded
    assert (
        load(b'\xef\xbb\xbf<?xml version="1.0" encoding="utf-8"?>' + body.encode())[0].name
        == 'bras_\u00e9paule'
    )
    assert (
        load('\n\n  <?xml version="0.0" ?>\n' + body)[0].name == 'bras_\u00e9paule'
    )  # as pybullet's files


def test_cosmetic_junk_is_ignored():
    """
    <texture> without filename, <transmission> without type, a <geometry> with two shapes.

    An unparsable visual, unknown tags, robot version="1.0", XML version 0.0: same model.
    """
    clean, _ = load(UR5)
    junk, caught = load(os.path.join(LOADING, 'ur5_world_cosmetic_junk.urdf'))
    same_model(junk, clean)
    assert messages(caught, ModelWarning) == [
        m.replace('ur5_world.urdf', 'ur5_world_cosmetic_junk.urdf')
        for m in messages(load(UR5)[1], ModelWarning)
    ]


def test_spart_reference_models_without_limits_still_load():
    for name in ('SC_3DoF', 'Simple_Spacecraft', 'kuka_iiwa'):
        robot, _ = load(os.path.join(REF_URDF_DIR, name + '.urdf'))
        assert robot.base_hint is None and robot.world_link is None and not robot.mimic


@pytest.mark.parametrize('path', PACKAGE_URDFS, ids=[os.path.basename(p) for p in PACKAGE_URDFS])
def test_package_urdfs_pass_urdfdom_and_keep_spart_dynamics(path):
    """
    urdf/*.urdf load in urdfdom (Pinocchio's parser) as they are.

    Urdf/SC_3DoF.urdf (limits added) is SPART's model: same numbers as
    test/data/spart/urdf/SC_3DoF.urdf.
    """
    import pinocchio as pin

    pin.buildModelFromUrdf(path)
    ours, _ = load(path)
    original = os.path.join(REF_URDF_DIR, os.path.basename(path))
    if os.path.isfile(original):
        spart_model, _ = load(original)
        assert ours.link_names == spart_model.link_names and ours.q_names == spart_model.q_names
        for x, y in zip(
            [ours.base_link] + ours.links, [spart_model.base_link] + spart_model.links
        ):
            assert (
                x.mass == y.mass
                and np.array_equal(x.inertia, y.inertia)
                and np.array_equal(x.T, y.T)
            )
        for x, y in zip(ours.joints, spart_model.joints):
            assert x.type == y.type and np.array_equal(x.axis, y.axis) and np.array_equal(x.T, y.T)


# --- massless frames -----------------------------------------------------------------------
def test_links_without_inertial_are_massless_frames_named_in_one_warning():
    robot, caught = load(UR5)
    msgs = messages(caught, ModelWarning)
    assert len(msgs) == 1 and UR5 in msgs[0] and "['ee_link', 'base', 'tool0']" in msgs[0]
    for name in ('ee_link', 'base', 'tool0'):
        link = robot.links[robot.link_index(name) - 1]
        assert link.mass == 0 and not link.inertia.any() and np.array_equal(link.T, np.eye(4))
    # the frames are still frames: tool0 sits 0.0823 m beyond wrist_3_link's origin
    s = random_state(robot, 3)
    RJ, RL, rJ, rL, e, g = spart.Kinematics(s.R0, s.r0, s.qm, robot)
    k3, kt = robot.link_index('wrist_3_link') - 1, robot.link_index('tool0') - 1
    assert np.isclose(np.linalg.norm(rL[:, kt] - rJ[:, k3]), 0.0823, atol=1e-12)
    assert np.all(np.isfinite(fast_fd(robot, floating=False)[1]))


def _ur5_with_massless_wrist():
    with open(UR5, encoding='utf-8') as f:
        text = f.read()
    start = text.index('<link name="wrist_3_link">')
    end = text.index('</link>', start) + len('</link>')
    return text[:start] + '<link name="wrist_3_link"/>' + text[end:]


def test_moving_joint_without_mass_behind_it_loads_and_fd_names_it():
    robot, caught = load(_ur5_with_massless_wrist())
    assert "'wrist_3_link'" in messages(caught, ModelWarning)[0]
    s = random_state(robot, 1)
    # kinematics, Jacobians, inverse dynamics work
    fd = FastDynamics(robot)
    J, _ = fd.jacobian('tool0', s.R0, s.r0, s.qm, s.u0, s.um)
    assert np.all(np.isfinite(J))
    tau0, taum = fd.inverse_dynamics(
        s.R0, s.r0, s.qm, s.u0, s.um, s.u0dot, s.umdot, floating=False
    )
    assert np.all(np.isfinite(taum)) and taum[-1] == pytest.approx(0.0, abs=1e-12)
    # forward dynamics names the joint and the massless links it moves, on every path
    for fn in (
        lambda: fast_fd(robot, floating=False),
        lambda: fast_fd(robot, floating=True),
        lambda: spart_fd(robot),
    ):
        with pytest.raises(SingularModelError) as err:
            fn()
        msg = str(err.value)
        assert (
            "'wrist_3_joint'" in msg
            and "'wrist_3_link'" in msg
            and "'tool0'" in msg
            and "'ur5'" in msg
        )


def test_massless_floating_base_loads_fixed_fd_works_floating_fd_names_base():
    """A massless root (base_footprint) on a prismatic rail: fine fixed, singular floating."""
    text = (
        '<robot name="rail"><link name="base_footprint"/>'
        '<joint name="slide" type="prismatic"><parent link="base_footprint"/><child link="cart"/>'
        '<axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint>'
        '<link name="cart"><inertial><mass value="2"/>'
        '<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>'
        '</robot>'
    )
    robot, _ = load(text)
    assert np.all(np.isfinite(fast_fd(robot, floating=False)[1]))
    with pytest.raises(SingularModelError) as err:
        fast_fd(robot, floating=True)
    assert "'base_footprint'" in str(err.value) and "'slide'" in str(err.value)
    assert core.singularity(robot, floating=False) == ''


# --- world roots ---------------------------------------------------------------------------
def test_world_fixed_root_is_a_fixed_base_with_that_pose():
    robot, _ = load(UR5)
    assert robot.base_link.name == 'base_link' and 'world' not in robot.link_names
    assert 'world_joint' not in robot.joint_names
    assert robot.base_hint == 'fixed' and robot.world_link == 'world'
    expected = np.eye(4)
    expected[:3, :3], expected[:3, 3] = rpy_rotation([0, 0, 1.5707963267948966]), [0.5, -0.2, 0.8]
    np.testing.assert_allclose(robot.base_pose, expected, atol=1e-15)


def test_world_floating_root_is_a_floating_base_at_its_child():
    robot, caught = load(QUADRUPED)
    assert (
        robot.base_link.name == 'trunk'
        and robot.base_hint == 'floating'
        and robot.world_link == 'world'
    )
    assert robot.base_pose is None and 'floating_base' not in robot.joint_names and robot.n_q == 12
    assert not any(
        "'world'" in m for m in messages(caught)
    )  # the dropped root is no massless frame
    udot = fast_fd(robot, floating=True)
    assert np.all(np.isfinite(udot[0])) and np.all(np.isfinite(udot[1]))


def test_other_world_roots_stay_the_base():
    """A world with two children, or with a moving joint, is kept as the (fixed) base."""
    inertial = (
        '<inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>'
        '</inertial>'
    )
    two = (
        f'<robot name="cell"><link name="world"/><link name="table">{inertial}</link>'
        f'<link name="arm">{inertial}</link>'
        '<joint name="t" type="fixed"><parent link="world"/><child link="table"/></joint>'
        '<joint name="a" type="fixed"><parent link="world"/><child link="arm"/></joint></robot>'
    )
    robot, _ = load(two)
    assert (
        robot.base_link.name == 'world' and robot.base_hint == 'fixed' and robot.world_link is None
    )
    np.testing.assert_array_equal(robot.base_pose, np.eye(4))
    rail = two.replace(
        '<joint name="a" type="fixed"><parent link="world"/><child link="arm"/></joint>', ''
    )
    rail = (
        rail.replace('<link name="arm">' + inertial + '</link>', '')
        .replace('type="fixed"', 'type="prismatic"')
        .replace('</joint>', '<axis xyz="1 0 0"/></joint>')
    )
    robot, _ = load(rail)
    assert robot.base_link.name == 'world' and robot.n_q == 1 and robot.base_hint == 'fixed'


def test_massive_root_with_floating_joint_is_refused_with_advice():
    inertial = (
        '<inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>'
        '</inertial>'
    )
    text = (
        f'<robot name="r"><link name="ship">{inertial}</link><link name="drone">{inertial}</link>'
        '<joint name="tether" type="floating"><parent link="ship"/><child link="drone"/></joint>'
        '</robot>'
    )
    with pytest.raises(UnsupportedJointError) as err:
        robot_from_urdf(text)
    assert "'tether'" in str(err.value) and 'massless root' in str(err.value)


def test_planar_joint_says_how_to_model_it():
    text = (
        '<robot name="r"><link name="floor"/><link name="puck"><inertial><mass value="1"/>'
        '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>'
        '<joint name="glide" type="planar"><parent link="floor"/><child link="puck"/>'
        '<axis xyz="0 0 1"/></joint></robot>'
    )
    with pytest.raises(UnsupportedJointError) as err:
        robot_from_urdf(text)
    assert "'glide'" in str(err.value) and 'two prismatic joints' in str(err.value)


# --- xacro ---------------------------------------------------------------------------------
def test_xacro_file_with_properties_macros_and_arguments():
    robot, _ = load(BIPED)
    assert robot.name == 'biped' and robot.n_q == 8 and robot.base_link.mass == 12.0
    thigh = robot.links[robot.link_index('left_thigh') - 1]
    assert thigh.mass == 2.5 and thigh.inertia[0, 0] == pytest.approx(
        2.5 * (0.07**2 + 0.42**2) / 12
    )
    right_hip = robot.joints[robot.keys.joint_id['right_hip_yaw'] - 1]
    assert right_hip.T[1, 3] == pytest.approx(-0.09)  # the macro's reflect="-1"
    assert robot.links[robot.link_index('right_shin') - 1].mass == pytest.approx(1.5)
    heavier, _ = load(BIPED, xacro_args={'torso_mass': '20'})
    assert heavier.base_link.mass == 20.0


def test_xacro_text_and_includes_beside_the_file(tmp_path):
    (tmp_path / 'parts').mkdir()
    (tmp_path / 'parts' / 'wheel.xacro').write_text(
        '<robot xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:macro name="wheel" params="n">'
        '<link name="wheel_${n}"><inertial><mass value="${m}"/>'
        '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.02"/></inertial></link>'
        '<joint name="axle_${n}" type="continuous">'
        '<parent link="body"/><child link="wheel_${n}"/><origin xyz="0 ${0.2 * n} 0"/>'
        '<axis xyz="0 1 0"/></joint></xacro:macro></robot>'
    )
    main = (
        '<?xml version="1.0"?><robot name="cart" xmlns:xacro="http://www.ros.org/wiki/xacro">'
        '<xacro:property name="m" value="0.5"/><xacro:include filename="parts/wheel.xacro"/>'
        '<link name="body"><inertial><mass value="3"/>'
        '<inertia ixx="0.1" ixy="0" ixz="0" iyy="0.1" iyz="0" izz="0.1"/></inertial></link>'
        '<xacro:wheel n="1"/><xacro:wheel n="-1"/></robot>'
    )
    path = tmp_path / 'cart.urdf'  # xacro text in a .urdf file: expanded too
    path.write_text(main)
    robot, _ = load(str(path))
    assert robot.q_names == ['axle_1', 'axle_-1'] and robot.total_mass == pytest.approx(4.0)
    # text without a file: no include, properties and expressions still expand
    text = (
        '<robot name="t" xmlns:xacro="http://www.ros.org/wiki/xacro">'
        '<xacro:property name="m" value="2"/>'
        '<link name="a"><inertial><mass value="${m * 3}"/><inertia ixx="1" ixy="0" ixz="0" '
        'iyy="1" iyz="0" izz="1"/></inertial></link></robot>'
    )
    assert load(text)[0].base_link.mass == 6.0


def _description_package(root, name='my_arm_description', manifest=True):
    """Write package ``name`` with a macro file under ``root``; return the robot's xacro text."""
    pkg = root / name
    (pkg / 'urdf').mkdir(parents=True)
    if manifest:
        (pkg / 'package.xml').write_text(
            f'<?xml version="1.0"?><package format="3"><name>{name}</name></package>'
        )
    (pkg / 'urdf' / 'link.xacro').write_text(
        '<robot xmlns:xacro="http://www.ros.org/wiki/xacro">'
        '<xacro:macro name="box_link" params="name mass"><link name="${name}"><inertial>'
        '<mass value="${mass}"/><inertia ixx="0.1" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/>'
        '</inertial></link></xacro:macro></robot>'
    )
    return (
        f'<robot name="arm" xmlns:xacro="http://www.ros.org/wiki/xacro">'
        f'<xacro:include filename="$(find {name})/urdf/link.xacro"/>'
        '<xacro:arg name="mass" default="2.0"/><xacro:box_link name="base" mass="5.0"/>'
        '<xacro:box_link name="link_1" mass="$(arg mass)"/>'
        '<joint name="joint_1" type="revolute"><parent link="base"/><child link="link_1"/>'
        '<axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint>'
        '</robot>'
    )


def test_xacro_find_looks_in_the_folders_named_ros_package_path_and_the_ament_index(
    tmp_path, monkeypatch
):
    """
    ``$(find pkg)``: the package's folder, a folder holding it, deeper with a package.xml.

    Then ROS_PACKAGE_PATH, then the ament index (spart_ros's own share, as xacro finds it); the
    folders a call names come first, the process's next (issue 34: xacro alone asks the ament
    index only, and the error told to run xacro, which fails the same way).
    """
    from spart_ros.core import packages

    monkeypatch.delenv(packages.ENV, raising=False)
    text = _description_package(tmp_path / 'src' / 'robots')
    arm = tmp_path / 'arm.urdf.xacro'
    arm.write_text(text)
    pkg = tmp_path / 'src' / 'robots' / 'my_arm_description'
    for folder in (pkg, pkg.parent, tmp_path / 'src', tmp_path):  # itself, holder, crawled
        robot, _ = robot_from_urdf(str(arm), package_paths=[str(folder)])
        assert [(link.name, link.mass) for link in robot.links] == [('link_1', 2.0)], folder
    robot, _ = robot_from_urdf(str(arm), package_paths=[str(pkg)], xacro_args={'mass': '3.5'})
    assert robot.links[0].mass == 3.5
    monkeypatch.setenv(packages.ENV, f'/no/such/folder{os.pathsep}{tmp_path / "src"}')
    assert robot_from_urdf(str(arm))[0].n_q == 1
    monkeypatch.delenv(packages.ENV)
    packages.set_package_paths([str(pkg.parent)])
    try:
        assert 'link_1' in urdf_text(str(arm))
    finally:
        packages.set_package_paths([])
    with pytest.raises(InputError, match='not folders'):
        packages.set_package_paths([str(tmp_path / 'missing')])
    # the ament index, as xacro: spart_ros's share folder
    from ament_index_python.packages import get_package_share_directory

    share = get_package_share_directory('spart_ros')
    assert packages.find_package('spart_ros') == share
    marked = text.replace(
        'mass="5.0"/>',
        'mass="5.0"/><xacro:property name="p" value="$(find spart_ros)"/>'
        '<link name="where"><visual><geometry><mesh filename="${p}/a.stl"/></geometry></visual>'
        '</link>',
        1,
    )
    arm.write_text(marked)
    assert f'{share}/a.stl' in urdf_text(str(arm), package_paths=[str(pkg)])


def test_xacro_find_of_a_package_nowhere_is_one_error_saying_where_and_how(
    tmp_path, monkeypatch
):
    from spart_ros.core import packages

    monkeypatch.setenv(packages.ENV, str(tmp_path / 'elsewhere'))
    arm = tmp_path / 'arm.urdf.xacro'
    arm.write_text(_description_package(tmp_path / 'src', manifest=False))
    with pytest.raises(URDFError) as err:
        robot_from_urdf(str(arm), package_paths=[str(tmp_path / 'other')])
    text = str(err.value)
    assert text.count('not found') == 1 and text.startswith(str(arm)), text  # once (was twice)
    for words in (
        "package 'my_arm_description' of $(find my_arm_description) not found",
        str(tmp_path / 'other'),
        'ROS_PACKAGE_PATH set',
        'the ament index',
        '--package-path DIR',
        "the nodes' parameter package_paths",
    ):
        assert words in text, text
    assert 'run xacro first' not in text  # running xacro fails the same way


@pytest.mark.parametrize(
    'text,words',
    [
        (
            '<robot name="r"><link name="a"><inertial><mass value="${m}"/>'
            '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link></robot>',
            ["'m'", 'run xacro first'],
        ),
        (
            '<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
            '<xacro:include filename="/no/such/file.xacro"/>'
            '<link name="a"/></robot>',
            ['/no/such/file.xacro', 'run xacro first'],
        ),
        (
            '<robot name="r"><xacro:unknown_macro/><link name="a"/></robot>',
            ['xacro', 'run xacro first'],
        ),
    ],
)
def test_xacro_that_cannot_expand_says_run_xacro_first(text, words):
    with pytest.raises(URDFError) as err:
        robot_from_urdf(text)
    for w in words:
        assert w in str(err.value), str(err.value)


LINK_A = (
    '<link name="a"><inertial><mass value="2"/>'
    '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>'
    '</inertial>{extra}</link>'
)


@pytest.mark.parametrize(
    'extra',
    [
        '<visual><geometry><mesh filename="$(find my_robot_description)/meshes/a.dae"/></geometry>'
        '</visual>',
        '<visual><geometry><mesh filename="package://d/${name}.stl"/></geometry></visual>',
    ],
)
def test_xacro_markers_outside_links_and_joints_dynamics_are_read_as_urdfdom_does(extra):
    """
    A $(find ...) mesh path or ${...} in a Gazebo plugin is not xacro to urdfdom either.

    The file loads as plain URDF, without running xacro (which would fail on them).
    """
    gazebo = (
        '<gazebo><plugin name="p" filename="x.so"><script>echo ${HOME} $(date)</script></plugin>'
        '</gazebo>'
    )
    text = f'<robot name="r">{LINK_A.format(extra=extra)}{gazebo}</robot>'
    robot, _ = load(text)
    assert robot.base_link.mass == 2.0
    assert load(text.encode())[0].base_link.mass == 2.0


def test_xacro_in_a_read_attribute_or_namespace_still_expands():
    old_ns = (
        '<robot name="r" xmlns:xacro="http://ros.org/wiki/xacro">'
        '<xacro:property name="m" value="3"/>'
        + LINK_A.format(extra='').replace('value="2"', 'value="${m}"')
        + '</robot>'
    )
    assert load(old_ns)[0].base_link.mass == 3.0  # the older namespace URI


def test_expand_xacro_false_refuses_xacro_without_running_it(tmp_path):
    marker = tmp_path / 'ran'
    text = (
        '<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
        f'<xacro:property name="m" value="${{open(\'{marker}\', \'w\') and 1}}"/>'
        + LINK_A.format(extra='').replace('value="2"', 'value="${m}"')
        + '</robot>'
    )
    with pytest.raises(URDFError, match='xacro constructs .* expand it first'):
        robot_from_urdf(text, expand_xacro=False)
    assert not marker.exists()
    # plain URDF with markers only in cosmetic places still loads
    mesh = '<visual><geometry><mesh filename="$(find p)/m.stl"/></geometry></visual>'
    cosmetic = '<robot name="r">' + LINK_A.format(extra=mesh) + '</robot>'
    assert robot_from_urdf(cosmetic, expand_xacro=False)[0].base_link.mass == 2.0


def test_axis_of_fixed_and_floating_joints_is_not_read_as_urdfdom():
    text = (
        '<robot name="r">'
        + LINK_A.format(extra='')
        + LINK_A.format(extra='').replace('"a"', '"b"')
        + '<joint name="f" type="fixed"><parent link="a"/><child link="b"/><axis xyz="0 0"/>'
          '</joint></robot>'
    )
    robot, _ = load(text)
    assert robot.n_q == 0 and [j.name for j in robot.joints] == ['f']


@pytest.mark.parametrize(
    'source,words',
    [
        ('', ['empty']),
        ('   ', ['empty']),
    ],
)
def test_empty_description_says_empty(source, words):
    with pytest.raises(URDFError) as err:
        robot_from_urdf(source)
    assert all(w in str(err.value) for w in words), str(err.value)


def test_path_with_trailing_newline_gets_a_hint(tmp_path):
    path = tmp_path / 'r.urdf'
    path.write_text('<robot name="r">' + LINK_A.format(extra='') + '</robot>')
    with pytest.raises(URDFError, match='whitespace'):
        robot_from_urdf(str(path) + '\n')


# --- inertias ------------------------------------------------------------------------------
def test_manisat_planar_inertias_warn_per_link_and_strict_refuses():
    robot, caught = load(MANISAT)
    msgs = messages(caught, InertiaWarning)
    assert len(msgs) == 4
    for name, izz in (('Satellite', '0.285'), ('L1', '0.015'), ('L2', '0.008'), ('L3', '0.001')):
        assert any(
            f"link '{name}'" in m and f'izz={izz}' in m and 'triangle' in m and MANISAT in m
            for m in msgs
        )
    assert (
        robot.base_link.inertia[2, 2] == 0.285 and robot.base_link.inertia[0, 0] == 0
    )  # used as given
    assert np.all(np.isfinite(spart_fd(robot)[0]))  # SPART computes with them
    with pytest.raises(InertiaError, match=r"manisat_planar.urdf: link 'Satellite'.*triangle"):
        robot_from_urdf(MANISAT, strict=True)


def test_rounding_level_violations_pass_silently():
    # a placeholder inertia on the triangle-inequality boundary, off by rounding
    inertia = np.diag([1e-6, 1e-6, 2e-6 + 1e-22])
    R = rpy_rotation([0.3, -0.2, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        check_mass_inertia('placeholder', 1e-3, inertia, strict=True)
        check_mass_inertia('rotated', 1e-3, R @ inertia @ R.T, strict=True)
        check_mass_inertia('slightly_negative', 1.0, np.diag([-1e-9, 1.0, 1.0]), strict=True)
        check_mass_inertia('point_mass', 2.0, np.zeros((3, 3)), strict=True)
        # a thin plate (I1 + I2 = I3) printed with 6 significant digits: 1.7e-6 of I3 off (issue 9)
        check_mass_inertia(
            'thin_plate', 1.0, np.diag([0.0833333, 0.333333, 0.416667]), strict=True
        )
        check_mass_inertia(
            'thin_plate_rotated',
            1.0,
            np.array(
                [
                    [float(f'{x:.6g}') for x in row]
                    for row in R @ np.diag([1 / 12, 1 / 3, 5 / 12]) @ R.T
                ]
            ),
            strict=True,
        )
        check_mass_inertia('rod', 1.0, np.diag([0.0, 0.0833333, 0.0833333]), strict=True)
    # real violations still warn, and strict refuses them: 1 % beyond the triangle inequality
    plate_1pc = np.diag([1 / 12, 1 / 3, 1.01 * 5 / 12])
    with pytest.warns(InertiaWarning, match="'plate_1pc'.*triangle"):
        check_mass_inertia('plate_1pc', 1.0, plate_1pc)
    with pytest.raises(InertiaError, match="'plate_1pc'.*triangle"):
        check_mass_inertia('plate_1pc', 1.0, plate_1pc, strict=True)
    with pytest.warns(InertiaWarning, match="'sensor'.*not positive semi-definite"):
        check_mass_inertia(
            'sensor', 0.01, np.array([[1e-5, 1.0035e-5, 0], [1.0035e-5, 1e-5, 0], [0, 0, 1e-5]])
        )


def test_quadruped_warns_only_for_the_sensor_link():
    robot, caught = load(QUADRUPED)
    msgs = messages(caught, InertiaWarning)
    assert len(msgs) == 1 and "'imu_link'" in msgs[0] and '-3.5e-08' in msgs[0]
    hip = robot.links[robot.link_index('FL_hip') - 1]
    np.testing.assert_array_equal(
        hip.inertia, np.diag([1e-6, 1e-6, 2e-6])
    )  # the placeholder, as given
    with pytest.raises(InertiaError, match="'imu_link'"), warnings.catch_warnings():
        warnings.simplefilter('ignore')  # the massless frames
        robot_from_urdf(QUADRUPED, strict=True)


def test_builder_strict():
    b = RobotBuilder('planar')
    b.add_link('disk', mass=1.0, inertia=np.diag([0.0, 0.0, 1.0]))
    with pytest.warns(InertiaWarning, match="'disk'"):
        b.build()
    with pytest.raises(InertiaError, match="'disk'"):
        b.build(strict=True)


# --- mimic tags ----------------------------------------------------------------------------
def test_mimic_tags_are_read_and_spart_functions_warn():
    robot, caught = load(os.path.join(LOADING, 'gripper_mimic.urdf'))
    assert robot.mimic == {
        'finger_right': ('finger_left', -1.0, 0.0),
        'knuckle': ('wrist', -0.5, 0.1),
    }
    msgs = messages(caught, MimicJointWarning)
    assert len(msgs) == 1 and "['finger_right', 'knuckle']" in msgs[0] and 'n_q = 5' in msgs[0]
    assert robot.n_q == 5 and robot.coordinates.names == ['shoulder', 'wrist', 'finger_left']


def test_mimic_chains_compose_and_bad_leaders_are_ignored_with_a_warning():
    inertial = (
        '<inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>'
        '</inertial>'
    )
    links = ''.join(f'<link name="{n}">{inertial}</link>' for n in ('b', 'l1', 'l2', 'l3', 'l4'))

    def j(name, child, mimic=''):
        return (
            f'<joint name="{name}" type="revolute"><parent link="b"/><child link="{child}"/>'
            '<axis xyz="0 0 1"/>'
            f'<limit effort="1" velocity="1"/>{mimic}</joint>'
        )

    text = (
        f'<robot name="r">{links}{j("a", "l1")}'
        + j('f1', 'l2', "<mimic joint='a' multiplier='2' offset='1'/>")
        + j('f2', 'l3', "<mimic joint='f1' multiplier='3' offset='0.5'/>")
        + j('f3', 'l4', "<mimic joint='ghost'/>")
        + '</robot>'
    )
    robot, caught = load(text)
    assert robot.mimic == {'f1': ('a', 2.0, 1.0), 'f2': ('a', 6.0, 3.5)}  # f2 = 3 (2 a + 1) + 0.5
    assert any("'f3'" in m and "'ghost'" in m for m in messages(caught, ModelWarning))
    assert robot.coordinates.names == ['a', 'f3']
