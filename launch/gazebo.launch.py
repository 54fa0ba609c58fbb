"""
The KUKA iiwa in Gazebo (gz sim) under ros2_control, driven by spart_controller.

Launch/launch_ros, ros_gz_sim, gz_ros2_control, controller_manager and robot_state_publisher
needed.

    ros2 launch spart_ros gazebo.launch.py                    # Gazebo with its GUI, empty world
    ros2 launch spart_ros gazebo.launch.py gui:=false         # server only (headless)

One robot description for every plant: urdf/kuka_iiwa.urdf.xacro expanded with ``plant:=gazebo``
(its <ros2_control> block names gz_ros2_control/GazeboSimSystem, the gz_ros2_control plugin loads
``controllers``, a fixed joint bolts the base to Gazebo's world). This file starts:

- Gazebo (ros_gz_sim's gz_sim.launch.py) and a /clock bridge (ros_gz_bridge);
- robot_state_publisher with that URDF (robot_description, latched; /tf), on sim time;
- ros_gz_sim's ``create``, which spawns the robot from robot_description;
- controller_manager spawners: joint_state_broadcaster, hold_controller (inactive: the fallback),
  then, once the hold controller is configured, effort_controller (forward_command_controller on
  the effort interfaces); all from ``controllers`` (config/kuka_iiwa_controllers.yaml);
- spart_controller (computed torque, ``controller_params``, default
  config/controller_kuka_iiwa.yaml) on sim time: joint_states in, /effort_controller/commands out.

Send it a trajectory on /spart_controller/joint_trajectory. NOT run in this package's CI (Gazebo
and ros2_control are not installable there): its tests check that this file loads and lists its
arguments and nodes, that the xacro expands in every variant and that the controllers file names
the URDF's joints.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import (
    DeclareLaunchArgument,
    IncludeLaunchDescription,
    OpaqueFunction,
    RegisterEventHandler,
)
from launch.event_handlers import OnProcessExit
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare


def _robot_description(arg, share):
    import xacro  # noqa: E402 - a dependency of this package (package.xml), needed only here

    path = os.path.join(share, 'urdf', 'kuka_iiwa.urdf.xacro')
    doc = xacro.process_file(
        path,
        mappings={
            'plant': 'gazebo',
            'controllers': arg('controllers'),
            'initial_positions': arg('initial_positions'),
        },
    )
    return doc.toxml()


def _gazebo(context):
    arg = lambda name: LaunchConfiguration(name).perform(context)  # noqa: E731
    gui = arg('gui').lower() in ('true', '1', 'yes')
    return [
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(
                PathJoinSubstitution(
                    [FindPackageShare('ros_gz_sim'), 'launch', 'gz_sim.launch.py']
                )
            ),
            launch_arguments=[('gz_args', '-r ' + ('' if gui else '-s ') + arg('world'))],
        )
    ]


def _nodes(context):
    arg = lambda name: LaunchConfiguration(name).perform(context)  # noqa: E731
    share = get_package_share_directory('spart_ros')
    urdf = _robot_description(arg, share)
    sim_time = {'use_sim_time': True}
    timeout = ['--controller-manager-timeout', '120']
    hold = Node(
        package='controller_manager',
        executable='spawner',
        output='screen',
        arguments=['hold_controller', '--inactive', '--param-file', arg('controllers')] + timeout,
    )
    return [
        Node(
            package='ros_gz_bridge',
            executable='parameter_bridge',
            output='screen',
            arguments=['/clock@rosgraph_msgs/msg/Clock[gz.msgs.Clock'],
        ),
        Node(
            package='robot_state_publisher',
            executable='robot_state_publisher',
            output='screen',
            parameters=[{'robot_description': urdf, **sim_time}],
        ),
        Node(
            package='ros_gz_sim',
            executable='create',
            output='screen',
            arguments=[
                '-topic',
                'robot_description',
                '-name',
                'kuka_iiwa',
                '-allow_renaming',
                'true',
            ],
        ),
        Node(
            package='controller_manager',
            executable='spawner',
            output='screen',
            arguments=['joint_state_broadcaster'] + timeout,
        ),
        hold,
        # the fallback must be configured before its controller is activated
        RegisterEventHandler(
            OnProcessExit(
                target_action=hold,
                on_exit=[
                    Node(
                        package='controller_manager',
                        executable='spawner',
                        output='screen',
                        arguments=['effort_controller', '--param-file', arg('controllers')]
                        + timeout,
                    )
                ],
            )
        ),
        Node(
            package='spart_ros',
            executable='controller_node',
            name='spart_controller',
            output='screen',
            parameters=[arg('controller_params'), sim_time],
        ),
    ]


def generate_launch_description():
    share = get_package_share_directory('spart_ros')
    return LaunchDescription(
        [
            DeclareLaunchArgument(
                'world', default_value='empty.sdf', description='Gazebo world (file or name).'
            ),
            DeclareLaunchArgument(
                'gui', default_value='true', description="Start Gazebo's GUI (false: server only)."
            ),
            DeclareLaunchArgument(
                'controllers',
                default_value=os.path.join(share, 'config', 'kuka_iiwa_controllers.yaml'),
                description='ros2_control controllers file (controller_manager, spawners).',
            ),
            DeclareLaunchArgument(
                'controller_params',
                default_value=os.path.join(share, 'config', 'controller_kuka_iiwa.yaml'),
                description='Parameter file of spart_controller.',
            ),
            DeclareLaunchArgument(
                'initial_positions',
                default_value='0 0 0 0 0 0 0',
                description='Initial joint positions (7 numbers, rad) of the <ros2_control> '
                'block.',
            ),
            OpaqueFunction(function=_gazebo),
            OpaqueFunction(function=_nodes),
        ]
    )
