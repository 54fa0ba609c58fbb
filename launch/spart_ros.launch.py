"""Launch the spart_ros system on a real ROS 2 install (launch/launch_ros needed).

    ros2 launch spart_ros spart_ros.launch.py urdf_path:=/path/robot.urdf [base:=floating] [namespace:=robot1]

Starts spart_dynamics (link twists, Jacobians, centre of mass, FD/ID services) with
config/dynamics_node.yaml; ``urdf_path`` and ``base``, when given, override the file.  Without
``urdf_path`` the node waits for the URDF on ``robot_description`` (robot_state_publisher's
latched topic).  Every node it starts is a Python node of this package; robot_state_publisher
(C++) only with ``robot_state_publisher:=true``.  For one node alone see dynamics.launch.py.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def _nodes(context):
    arg = lambda name: LaunchConfiguration(name).perform(context)  # noqa: E731
    overrides = {k: arg(k) for k in ("urdf_path", "base") if arg(k)}
    nodes = [Node(package="spart_ros", executable="dynamics_node", name="spart_dynamics",
                  namespace=arg("namespace"), parameters=[arg("dynamics_params"), overrides], output="screen")]
    if arg("robot_state_publisher").lower() in ("true", "1", "yes"):
        if not arg("urdf_path"):
            raise RuntimeError("robot_state_publisher:=true needs urdf_path:=<file>")
        with open(arg("urdf_path"), encoding="utf-8") as f:
            urdf = f.read()
        nodes.append(Node(package="robot_state_publisher", executable="robot_state_publisher",
                          namespace=arg("namespace"), parameters=[{"robot_description": urdf}],
                          output="screen"))
    return nodes


def generate_launch_description():
    share = get_package_share_directory("spart_ros")
    return LaunchDescription([
        DeclareLaunchArgument("namespace", default_value="", description="Namespace of the nodes."),
        DeclareLaunchArgument("urdf_path", default_value="",
                              description="URDF file (default: the robot_description topic)."),
        DeclareLaunchArgument("base", default_value="",
                              description="'fixed' or 'floating' (overrides the parameter files)."),
        DeclareLaunchArgument("dynamics_params", default_value=os.path.join(share, "config", "dynamics_node.yaml"),
                              description="Parameter file of spart_dynamics."),
        DeclareLaunchArgument("robot_state_publisher", default_value="false",
                              description="Also start robot_state_publisher (C++) with the URDF of urdf_path."),
        OpaqueFunction(function=_nodes),
    ])
