"""
Launch the spart_dynamics node on a real ROS 2 install (launch/launch_ros needed).

    ros2 launch spart_ros dynamics.launch.py urdf_path:=/path/to/robot.urdf
    ros2 launch spart_ros dynamics.launch.py urdf_path:=... base:=floating
    robot_state_publisher:=true
    ros2 launch spart_ros dynamics.launch.py params:=/my/dynamics_node.yaml

Thin on purpose: the node (a Python node of this package) takes its parameters from
config/dynamics_node.yaml (or ``params:=``); ``urdf_path`` and ``base``, when given,
override the file. robot_state_publisher (C++, optional, off by default) publishes the
same URDF on robot_description and the TF tree from joint_states.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def _nodes(context):
    arg = lambda name: LaunchConfiguration(name).perform(context)  # noqa: E731
    overrides = {k: arg(k) for k in ('urdf_path', 'base') if arg(k)}
    nodes = [
        Node(
            package='spart_ros',
            executable='dynamics_node',
            name='spart_dynamics',
            namespace=arg('namespace'),
            parameters=[arg('params'), overrides],
            output='screen',
        )
    ]
    if arg('robot_state_publisher').lower() in ('true', '1', 'yes'):
        if not arg('urdf_path'):
            raise RuntimeError('robot_state_publisher:=true needs urdf_path:=<file>')
        with open(arg('urdf_path'), encoding='utf-8') as f:
            urdf = f.read()
        nodes.append(
            Node(
                package='robot_state_publisher',
                executable='robot_state_publisher',
                namespace=arg('namespace'),
                parameters=[{'robot_description': urdf}],
                output='screen',
            )
        )
    return nodes


def generate_launch_description():
    share = get_package_share_directory('spart_ros')
    return LaunchDescription(
        [
            DeclareLaunchArgument(
                'namespace', default_value='', description='Namespace of the nodes.'
            ),
            DeclareLaunchArgument(
                'params',
                default_value=os.path.join(share, 'config', 'dynamics_node.yaml'),
                description='Parameter file of spart_dynamics.',
            ),
            DeclareLaunchArgument(
                'urdf_path',
                default_value='',
                description="URDF file (overrides the parameter file's urdf_path).",
            ),
            DeclareLaunchArgument(
                'base',
                default_value='',
                description="'fixed' or 'floating' (overrides the parameter file's base).",
            ),
            DeclareLaunchArgument(
                'robot_state_publisher',
                default_value='false',
                description='Also start robot_state_publisher (C++) with the URDF of urdf_path.',
            ),
            OpaqueFunction(function=_nodes),
        ]
    )
