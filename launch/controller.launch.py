"""
Launch the spart_controller node on a real ROS 2 install (launch/launch_ros needed).

    ros2 launch spart_ros controller.launch.py urdf_path:=/path/robot.urdf
    params:=/path/controller_kuka_iiwa.yaml
    ros2 launch spart_ros controller.launch.py params:=.../controller_sc_3dof.yaml   # URDF from
    robot_description

Thin on purpose: the node takes its parameters from config/controller.yaml (every parameter
with its default) or ``params:=`` (e.g. the installed config/controller_sc_3dof.yaml or
controller_kuka_iiwa.yaml); ``urdf_path``, ``base`` and ``mode``, when given, override the file.
Commands go to ``commands_topic`` (default effort_controller/commands, under ``namespace``):
configure a ros2_control forward_command_controller with ``interface_name: effort`` and the same
joints (see docs/controller.md).  The node is a lifecycle node that configures and activates
itself (``autostart: true``); with ``autostart: false`` in the parameters it waits unconfigured
for ``ros2 lifecycle set`` (or a launch_ros LifecycleNode's transitions).
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def _nodes(context):
    arg = lambda name: LaunchConfiguration(name).perform(context)  # noqa: E731
    overrides = {k: arg(k) for k in ('urdf_path', 'base', 'mode') if arg(k)}
    return [
        Node(
            package='spart_ros',
            executable='controller_node',
            name='spart_controller',
            namespace=arg('namespace'),
            parameters=[arg('params'), overrides],
            output='screen',
        )
    ]


def generate_launch_description():
    share = get_package_share_directory('spart_ros')
    return LaunchDescription(
        [
            DeclareLaunchArgument(
                'namespace', default_value='', description='Namespace of the node.'
            ),
            DeclareLaunchArgument(
                'params',
                default_value=os.path.join(share, 'config', 'controller.yaml'),
                description='Parameter file of spart_controller.',
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
                'mode',
                default_value='',
                description="Control law (overrides the parameter file's mode).",
            ),
            OpaqueFunction(function=_nodes),
        ]
    )
