"""Launch the spart_ros nodes on a real ROS 2 install (launch/launch_ros needed).

    ros2 launch spart_ros spart_ros.launch.py [namespace:=robot1]

Thin on purpose: every node it starts is a Python node of this package and
takes its parameters from config/*.yaml (installed to share/spart_ros/config).
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node


def generate_launch_description():
    share = get_package_share_directory("spart_ros")
    namespace = LaunchConfiguration("namespace")
    return LaunchDescription([
        DeclareLaunchArgument("namespace", default_value="",
                              description="Namespace of the spart_ros nodes."),
        DeclareLaunchArgument("heartbeat_params",
                              default_value=os.path.join(share, "config", "heartbeat.yaml"),
                              description="Parameter file of spart_heartbeat."),
        Node(
            package="spart_ros",
            executable="heartbeat_node",
            name="spart_heartbeat",
            namespace=namespace,
            parameters=[LaunchConfiguration("heartbeat_params")],
            output="screen",
        ),
    ])
