"""
The URDF's <ros2_control> tag (spart_ros.core.ros2_control) and the demo's KUKA iiwa files.

The one robot description the demo's KUKA iiwa ships for every plant
(urdf/kuka_iiwa.urdf.xacro: spart_sim, gz_ros2_control, mock_components) with the ros2_control
controllers file that goes with it.  What cannot run here (Gazebo, controller_manager) is
checked as far as files can be: the xacro expands in every variant into the same robot, and
every file names the same joints.
"""

from pathlib import Path

import numpy as np
import pytest
from spart_ros.core.errors import URDFError
from spart_ros.core.ros2_control import ros2_control_from_urdf
from spart_ros.core.urdf import robot_from_urdf, urdf_text
import yaml

ROOT = Path(__file__).resolve().parent.parent
XACRO = ROOT / 'urdf' / 'kuka_iiwa.urdf.xacro'
KUKA = ROOT / 'urdf' / 'kuka_iiwa.urdf'
PLUGINS = {
    'spart_sim': 'spart_ros/SpartSimSystem',
    'gazebo': 'gz_ros2_control/GazeboSimSystem',
    'mock': 'mock_components/GenericSystem',
}

LINKS = (
    '<link name="base"/><link name="l1"><inertial><mass value="1"/>'
    '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link><link name="l2">'
    '<inertial><mass value="1"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/>'
    '</inertial></link><link name="tool"/>'
    '<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 0 1"/>'
    '<limit effort="10" lower="-1" upper="1" velocity="1"/></joint>'
    '<joint name="j2" type="continuous"><parent link="l1"/><child link="l2"/><axis xyz="0 1 0"/>'
    '</joint><joint name="tool_joint" type="fixed"><parent link="l2"/><child link="tool"/></joint>'
)


def urdf(*blocks):
    return f'<?xml version="1.0"?><robot name="two">{LINKS}{"".join(blocks)}</robot>'


SYSTEM = """
<ros2_control name="arm" type="system">
  <hardware>
    <plugin>mock_components/GenericSystem</plugin>
    <param name="calculate_dynamics">true</param>
  </hardware>
  <joint name="j1">
    <command_interface name="effort">
      <param name="min">-10</param><param name="max">10</param>
    </command_interface>
    <state_interface name="position"><param name="initial_value">0.25</param></state_interface>
    <state_interface name="velocity"/>
    <param name="gear">2</param>
  </joint>
  <joint name="j2" mimic="false">
    <command_interface name="velocity"/>
    <state_interface name="position"/>
  </joint>
  <sensor name="ft">
    <state_interface name="force.x"/><state_interface name="torque.z"/>
    <param name="frame_id">tool</param>
  </sensor>
  <gpio name="vacuum">
    <command_interface name="on" data_type="bool"/>
    <state_interface name="pressure" size="2"/>
  </gpio>
</ros2_control>"""


def test_a_system_tag_is_read_in_full():
    (c,) = ros2_control_from_urdf(urdf(SYSTEM))
    assert (c.name, c.type, c.plugin, c.params) == (
        'arm',
        'system',
        'mock_components/GenericSystem',
        {'calculate_dynamics': 'true'},
    )
    assert c.joint_names == ['j1', 'j2'] and c.joints_commanding('effort') == ['j1']
    j1, j2 = c.joints
    assert j1.command_names == ['effort'] and j1.state_names == ['position', 'velocity']
    assert j1.command_interfaces[0].params == {'min': '-10', 'max': '10'}
    assert (
        j1.initial_values == {'position': 0.25} and j1.params == {'gear': '2'} and j1.mimic is None
    )
    assert j2.command_names == ['velocity'] and j2.initial_values == {} and j2.mimic is False
    (ft,), (gpio,) = c.sensors, c.gpios
    assert ft.state_names == ['force.x', 'torque.z'] and ft.params == {'frame_id': 'tool'}
    assert gpio.command_interfaces[0].data_type == 'bool' and gpio.state_interfaces[0].size == 2


def test_no_tag_and_several_tags():
    assert ros2_control_from_urdf(urdf()) == []
    second = (
        SYSTEM.replace('name="arm"', 'name="gripper"')
        .replace('<joint name="j1">', '<joint name="j9">')
        .replace('<joint name="j2" mimic="false">', '<joint name="j8">')
    )
    a, b = ros2_control_from_urdf(urdf(SYSTEM, second))
    assert (a.name, b.name) == ('arm', 'gripper') and b.joint_names == ['j9', 'j8']


@pytest.mark.parametrize(
    'block, words',
    [
        (
            SYSTEM.replace('<plugin>mock_components/GenericSystem</plugin>', ''),
            'needs one non-empty <plugin>',
        ),
        (
            SYSTEM.replace('<plugin>mock_components/GenericSystem</plugin>', '<plugin> </plugin>'),
            'found an empty one',
        ),
        (
            SYSTEM.replace('type="system"', 'type="robot"'),
            'type="robot" is not one of system, actuator, sensor',
        ),
        (
            SYSTEM.replace('0.25', 'zero'),
            "joint 'j1', state_interface 'position': initial_value 'zero' is not a number",
        ),
        (SYSTEM.replace('0.25', 'nan'), "initial_value 'nan' is NaN or infinity"),
        (
            SYSTEM.replace(
                '<state_interface name="velocity"/>', '<state_interface name="position"/>'
            ),
            "joint 'j1': state_interface 'position' is given twice",
        ),
        (
            SYSTEM.replace('<joint name="j2" mimic="false">', '<joint name="j1">'),
            "joints ['j1'] are listed twice",
        ),
        (SYSTEM.replace('mimic="false"', 'mimic="maybe"'), 'mimic="maybe" is not true or false'),
        (
            SYSTEM.replace('<ros2_control name="arm"', '<ros2_control'),
            'a <ros2_control> tag has no name',
        ),
        (SYSTEM.replace('<param name="gear">', '<param>'), 'a <param> has no name'),
    ],
)
def test_bad_tags_are_refused_naming_the_problem(block, words):
    with pytest.raises(
        URDFError, match=words.replace('[', r'\[').replace(']', r'\]').replace('(', r'\(')
    ):
        ros2_control_from_urdf(urdf(block))


@pytest.mark.filterwarnings('ignore:.*have no <inertial>')
def test_joints_are_checked_against_the_model():
    robot, _ = robot_from_urdf(urdf())
    assert ros2_control_from_urdf(urdf(SYSTEM), robot)[0].joint_names == ['j1', 'j2']
    with pytest.raises(URDFError, match="names joint 'j7', which is not a joint of robot 'two'"):
        ros2_control_from_urdf(urdf(SYSTEM.replace('"j2"', '"j7"')), robot)
    with pytest.raises(URDFError, match="names joint 'tool_joint', which is fixed"):
        ros2_control_from_urdf(urdf(SYSTEM.replace('"j2"', '"tool_joint"')), robot)
    other = SYSTEM.replace('name="arm"', 'name="other"').replace(
        '<joint name="j1">', '<joint name="j0">'
    )
    with pytest.raises(
        URDFError, match=r"joint 'j2' is in two <ros2_control> tags \('arm' and 'other'\)"
    ):
        ros2_control_from_urdf(urdf(SYSTEM, other))


# --- the demo's KUKA iiwa: one description for every plant ------------------------------------


@pytest.fixture(scope='module')
def kuka():
    return robot_from_urdf(str(KUKA))[0]


@pytest.mark.parametrize('plant', sorted(PLUGINS))
def test_the_xacro_expands_in_every_variant_into_the_same_robot(plant, kuka):
    args = {'plant': plant, 'controllers': '/tmp/controllers.yaml'}
    robot, _ = robot_from_urdf(str(XACRO), xacro_args=args)
    assert robot.q_names == kuka.q_names and robot.link_names[-8:] == kuka.link_names
    np.testing.assert_array_equal(robot.masses, kuka.masses)
    assert robot.base_hint == (
        'fixed' if plant == 'gazebo' else None
    )  # Gazebo: bolted to its world
    (c,) = ros2_control_from_urdf(str(XACRO), robot, xacro_args=args)
    assert c.plugin == PLUGINS[plant] and c.type == 'system'
    assert c.joint_names == kuka.q_names and c.joints_commanding('effort') == kuka.q_names
    for joint, urdf_joint in zip(c.joints, [j for j in kuka.joints if j.type != 0]):
        assert joint.state_names == ['position', 'velocity', 'effort']
        limits = joint.command_interfaces[0].params
        assert float(limits['max']) == urdf_joint.limits.effort == -float(limits['min'])
        assert joint.initial_values == {'position': 0.0, 'velocity': 0.0}
    text = urdf_text(str(XACRO), args)
    assert ('gz_ros2_control::GazeboSimROS2ControlPlugin' in text) == (plant == 'gazebo')
    assert ('<parameters>/tmp/controllers.yaml</parameters>' in text) == (plant == 'gazebo')


def test_the_xacro_arguments_are_checked():
    q0 = '0.1 -0.2 0.3 -0.4 0.5 -0.6 0.7'
    (c,) = ros2_control_from_urdf(str(XACRO), xacro_args={'initial_positions': q0})
    assert [j.initial_values['position'] for j in c.joints] == [float(x) for x in q0.split()]
    with pytest.raises(URDFError, match='plant:=gz is not one of spart_sim, gazebo, mock'):
        ros2_control_from_urdf(str(XACRO), xacro_args={'plant': 'gz'})
    with pytest.raises(URDFError, match='initial_positions needs 7 numbers, got 3'):
        ros2_control_from_urdf(str(XACRO), xacro_args={'initial_positions': '1 2 3'})


def test_the_controllers_file_names_the_tag_joints_and_the_controller_commands_them(kuka):
    doc = yaml.safe_load((ROOT / 'config' / 'kuka_iiwa_controllers.yaml').read_text())
    assert sorted(doc) == [
        '/**/controller_manager',
        '/**/effort_controller',
        '/**/hold_controller',
    ]
    manager = doc['/**/controller_manager']['ros__parameters']
    assert manager['update_rate'] == 1000
    assert (
        manager['joint_state_broadcaster']['type']
        == 'joint_state_broadcaster/JointStateBroadcaster'
    )
    assert (
        manager['effort_controller']['type']
        == 'forward_command_controller/ForwardCommandController'
    )
    assert manager['effort_controller']['fallback_controllers'] == ['hold_controller']
    effort = doc['/**/effort_controller']['ros__parameters']
    hold = doc['/**/hold_controller']['ros__parameters']
    (tag,) = ros2_control_from_urdf(str(XACRO))
    assert effort['interface_name'] == 'effort' and effort['joints'] == tag.joints_commanding(
        'effort'
    )
    assert hold['joints'] == effort['joints'] and hold['command_interfaces'] == ['effort']
    assert sorted(hold['gains']) == sorted(effort['joints'])
    assert set(effort['joints']) <= set(kuka.q_names)
    # spart_controller sends its commands in this order, on this controller's topic
    for name in ('controller_kuka_iiwa.yaml', 'demo_kuka_iiwa.yaml'):
        params = yaml.safe_load((ROOT / 'config' / name).read_text())['/**']['ros__parameters']
        assert params['command_joints'] == effort['joints'], name
        assert params['commands_topic'].lstrip('/') == 'effort_controller/commands', name


def test_only_the_gazebo_variant_needs_the_installed_package(monkeypatch):
    """$(find spart_ros) (the default controllers file) is evaluated in the Gazebo variant only."""
    monkeypatch.setenv('AMENT_PREFIX_PATH', '/nonexistent')
    for plant in ('spart_sim', 'mock'):
        assert (
            ros2_control_from_urdf(str(XACRO), xacro_args={'plant': plant})[0].plugin
            == PLUGINS[plant]
        )
    text = urdf_text(str(XACRO), {'plant': 'gazebo', 'controllers': '/my/controllers.yaml'})
    assert '<parameters>/my/controllers.yaml</parameters>' in text
    with pytest.raises(URDFError, match=r"package 'spart_ros' of \$\(find spart_ros\) not found"):
        urdf_text(str(XACRO), {'plant': 'gazebo'})
