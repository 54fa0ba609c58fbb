"""
Launch the spart_ros system on a real ROS 2 install (launch/launch_ros needed).

    ros2 launch spart_ros spart_ros.launch.py urdf_path:=/path/robot.urdf
    controller_params:=/path/controller.yaml
    ros2 launch spart_ros spart_ros.launch.py base:=floating controller:=false namespace:=robot1

Starts spart_dynamics (dynamics.launch.py: link twists, Jacobians, centre of mass, FD/ID
services) and spart_controller (controller.launch.py: effort commands for a ros2_control effort
controller; ``controller:=false`` leaves it out). ``urdf_path``, ``base`` and ``mode``, when
given, override the parameter files; without ``urdf_path`` the nodes take the URDF from the
``robot_description`` topic (robot_state_publisher's, latched). Every node it starts is a Python
node of this package; robot_state_publisher (C++) only with ``robot_state_publisher:=true``.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription
from launch.conditions import IfCondition
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration


def generate_launch_description():
    share = get_package_share_directory('spart_ros')
    config, launch_dir = os.path.join(share, 'config'), os.path.join(share, 'launch')
    arg = LaunchConfiguration
    common = [
        ('namespace', arg('namespace')),
        ('urdf_path', arg('urdf_path')),
        ('base', arg('base')),
    ]
    return LaunchDescription(
        [
            DeclareLaunchArgument(
                'namespace', default_value='', description='Namespace of the nodes.'
            ),
            DeclareLaunchArgument(
                'urdf_path',
                default_value='',
                description='URDF file (default: the robot_description topic).',
            ),
            DeclareLaunchArgument(
                'base',
                default_value='',
                description="'fixed' or 'floating' (overrides the parameter files).",
            ),
            DeclareLaunchArgument(
                'dynamics_params',
                default_value=os.path.join(config, 'dynamics_node.yaml'),
                description='Parameter file of spart_dynamics.',
            ),
            DeclareLaunchArgument(
                'controller', default_value='true', description='Start spart_controller.'
            ),
            DeclareLaunchArgument(
                'controller_params',
                default_value=os.path.join(config, 'controller.yaml'),
                description='Parameter file of spart_controller.',
            ),
            DeclareLaunchArgument(
                'mode', default_value='', description='Controller mode (overrides its file).'
            ),
            DeclareLaunchArgument(
                'robot_state_publisher',
                default_value='false',
                description='Also start robot_state_publisher (C++) with the URDF of urdf_path.',
            ),
            IncludeLaunchDescription(
                PythonLaunchDescriptionSource(os.path.join(launch_dir, 'dynamics.launch.py')),
                launch_arguments=common
                + [
                    ('params', arg('dynamics_params')),
                    ('robot_state_publisher', arg('robot_state_publisher')),
                ],
            ),
            IncludeLaunchDescription(
                PythonLaunchDescriptionSource(os.path.join(launch_dir, 'controller.launch.py')),
                launch_arguments=common
                + [('params', arg('controller_params')), ('mode', arg('mode'))],
                condition=IfCondition(arg('controller')),
            ),
        ]
    )
