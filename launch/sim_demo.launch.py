"""
The closed loop on the embedded MuJoCo plant, on a real ROS 2 install (launch/launch_ros needed).

    ros2 launch spart_ros sim_demo.launch.py                                  # SC_3DoF,
    free-floating
    ros2 launch spart_ros sim_demo.launch.py robot:=kuka_iiwa                 # KUKA iiwa, fixed
    base, gravity
    ros2 launch spart_ros sim_demo.launch.py urdf_path:=/my/robot.urdf                # fixed base,
    gravity
    ros2 launch spart_ros sim_demo.launch.py urdf_path:=/my/robot.urdf base:=floating # floating
    base, zero gravity
    ros2 launch spart_ros sim_demo.launch.py urdf_path:=/my/robot.urdf params:=/my/demo.yaml

Starts spart_sim (the plant: joint_states, odom, imu, robot_description, /clock; applies
effort commands), spart_controller (controller.launch.py) and spart_dynamics
(dynamics.launch.py). All three read ONE parameter file, ``params`` (default
config/demo_<robot>.yaml; with ``urdf_path``: config/demo_robot.yaml, or
config/demo_robot_floating.yaml with ``base:=floating``), keyed ``/**:``: shared names (base,
gravity, topics) mean the same thing to every node, and a node ignores the others' parameters.
The controller and the dynamics node take the URDF from the sim's robot_description topic (as
from robot_state_publisher).
Every node is a Python node of this package; robot_state_publisher (C++) only with
``robot_state_publisher:=true``. ``scripts/sim_demo.py`` (the README's main job) runs this file
with scripts/local_launch.py, sends the trajectory and records the run.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription, OpaqueFunction
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def _sim(context):
    arg = lambda name: LaunchConfiguration(name).perform(context)  # noqa: E731
    share = get_package_share_directory('spart_ros')
    robot = arg('robot')
    urdf = arg('urdf_path') or os.path.join(share, 'urdf', f'{robot}.urdf')
    overrides = {'urdf_path': urdf, **({'base': arg('base')} if arg('base') else {})}
    nodes = [
        Node(
            package='spart_ros',
            executable='sim_node',
            name='spart_sim',
            namespace=arg('namespace'),
            parameters=[_params(arg, share), overrides],
            output='screen',
        )
    ]
    if arg('robot_state_publisher').lower() in ('true', '1', 'yes'):
        with open(urdf, encoding='utf-8') as f:
            nodes.append(
                Node(
                    package='robot_state_publisher',
                    executable='robot_state_publisher',
                    namespace=arg('namespace'),
                    parameters=[
                        {'robot_description': f.read(), 'publish_robot_description': False}
                    ],
                    output='screen',
                )
            )
    return nodes


def _params(arg, share):
    if arg('params'):
        return arg('params')
    # a URDF of the user's: the generic file of its base (gravity said once for the three nodes;
    # a floating base in zero gravity), not the example robot's (its joints are that robot's)
    if arg('urdf_path'):
        floating = arg('base') == 'floating'
        name = 'demo_robot_floating.yaml' if floating else 'demo_robot.yaml'
    else:
        name = f'demo_{arg("robot")}.yaml'
    return os.path.join(share, 'config', name)


def _others(context):
    arg = lambda name: LaunchConfiguration(name).perform(context)  # noqa: E731
    share, launch_dir = (
        get_package_share_directory('spart_ros'),
        os.path.join(get_package_share_directory('spart_ros'), 'launch'),
    )
    common = [('namespace', arg('namespace')), ('params', _params(arg, share))] + (
        [('base', arg('base'))] if arg('base') else []
    )
    return [
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(os.path.join(launch_dir, 'controller.launch.py')),
            launch_arguments=common,
        ),
        IncludeLaunchDescription(
            PythonLaunchDescriptionSource(os.path.join(launch_dir, 'dynamics.launch.py')),
            launch_arguments=common,
        ),
    ]


def generate_launch_description():
    return LaunchDescription(
        [
            DeclareLaunchArgument(
                'robot',
                default_value='SC_3DoF',
                description='Example robot: SC_3DoF (free-floating) or kuka_iiwa (fixed, '
                'gravity); picks urdf/<robot>.urdf and config/demo_<robot>.yaml.',
            ),
            DeclareLaunchArgument(
                'urdf_path', default_value='', description="URDF file (default: the robot's)."
            ),
            DeclareLaunchArgument(
                'params',
                default_value='',
                description='Parameter file of all three nodes (default: '
                'config/demo_<robot>.yaml; with urdf_path: config/demo_robot.yaml, a fixed base '
                'in gravity, or with base:=floating config/demo_robot_floating.yaml, zero '
                'gravity).',
            ),
            DeclareLaunchArgument(
                'base', default_value='', description="'fixed' or 'floating' (overrides params)."
            ),
            DeclareLaunchArgument(
                'namespace', default_value='', description='Namespace of the nodes.'
            ),
            DeclareLaunchArgument(
                'robot_state_publisher',
                default_value='false',
                description='Also start robot_state_publisher (C++) for the TF tree.',
            ),
            OpaqueFunction(function=_sim),
            OpaqueFunction(function=_others),
        ]
    )
