"""The closed loop on the embedded plant: spart_sim + spart_controller + spart_dynamics (launch/launch_ros needed).

    ros2 launch spart_ros sim_demo.launch.py                                   # SC_3DoF, free-floating, zero g
    ros2 launch spart_ros sim_demo.launch.py urdf_path:=<share>/urdf/kuka_iiwa.urdf \\
        params:=<share>/config/demo_kuka_iiwa.yaml                             # KUKA iiwa, fixed base, gravity
    ros2 topic pub --once /spart_controller/joint_trajectory trajectory_msgs/msg/JointTrajectory ...

Three Python nodes of this package, as separate processes reading the SAME parameter file
(``params``, keyed ``/**``: each node takes the parameters it declares, so the robot, base,
gravity and topics are stated once):

- ``spart_sim`` (MuJoCo plant, ros2_control-like: joint_states, odom, imu, /clock out, effort
  commands on ``effort_controller/commands`` in) loads the URDF of ``urdf_path`` and publishes
  it on ``robot_description`` (latched);
- ``spart_controller`` (effort commands from the robot's model, trajectories on
  ``spart_controller/joint_trajectory``) and ``spart_dynamics`` (link twists, Jacobians, centre
  of mass, FD/ID services) take the model from ``robot_description``, so the three agree on it,
  and follow the simulated clock (``use_sim_time``).

``sim_params``, ``controller_params``, ``dynamics_params``: extra parameter files of one node,
applied after ``params`` (e.g. ``lockstep: true`` for the sim); ``base`` and ``mode`` override
the files.  robot_state_publisher (C++, off by default) publishes the URDF and the TF tree
instead of the sim.
"""

import os

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

TRUE = ("true", "1", "yes")


def _nodes(context):
    arg = lambda name: LaunchConfiguration(name).perform(context)  # noqa: E731
    namespace, base, urdf_path = arg("namespace"), arg("base"), arg("urdf_path")
    rsp = arg("robot_state_publisher").lower() in TRUE
    sim_time = {"use_sim_time": arg("use_sim_time").lower() in TRUE}
    common = {"base": base} if base else {}
    # the sim publishes the URDF on robot_description unless robot_state_publisher does
    sim = dict(common, urdf_path=urdf_path, **({"robot_description_topic": ""} if rsp else {}))
    controller = dict(common, **sim_time, **({"mode": arg("mode")} if arg("mode") else {}))
    dynamics = dict(common, **sim_time)

    def files(node_params):
        return [arg("params")] + ([arg(node_params)] if arg(node_params) else [])

    nodes = [
        # never on sim time: it is the clock
        Node(package="spart_ros", executable="sim_node", name="spart_sim", namespace=namespace,
             parameters=files("sim_params") + [sim], output="screen"),
        Node(package="spart_ros", executable="controller_node", name="spart_controller", namespace=namespace,
             parameters=files("controller_params") + [controller], output="screen"),
        Node(package="spart_ros", executable="dynamics_node", name="spart_dynamics", namespace=namespace,
             parameters=files("dynamics_params") + [dynamics], output="screen"),
    ]
    if rsp:
        with open(urdf_path, encoding="utf-8") as f:
            urdf = f.read()
        nodes.append(Node(package="robot_state_publisher", executable="robot_state_publisher",
                          namespace=namespace, parameters=[{"robot_description": urdf, **sim_time}],
                          output="screen"))
    return nodes


def generate_launch_description():
    share = get_package_share_directory("spart_ros")
    return LaunchDescription([
        DeclareLaunchArgument("namespace", default_value="", description="Namespace of the nodes."),
        DeclareLaunchArgument("urdf_path", default_value=os.path.join(share, "urdf", "SC_3DoF.urdf"),
                              description="URDF (or xacro) file of the simulated robot."),
        DeclareLaunchArgument("params", default_value=os.path.join(share, "config", "demo_sc_3dof.yaml"),
                              description="Parameter file of the three nodes (e.g. config/demo_kuka_iiwa.yaml)."),
        DeclareLaunchArgument("base", default_value="",
                              description="'fixed' or 'floating' (overrides the parameter files)."),
        DeclareLaunchArgument("mode", default_value="",
                              description="Controller mode (overrides the parameter files)."),
        DeclareLaunchArgument("sim_params", default_value="", description="Extra parameter file of spart_sim."),
        DeclareLaunchArgument("controller_params", default_value="",
                              description="Extra parameter file of spart_controller."),
        DeclareLaunchArgument("dynamics_params", default_value="",
                              description="Extra parameter file of spart_dynamics."),
        DeclareLaunchArgument("use_sim_time", default_value="true",
                              description="The controller and dynamics node follow the sim's /clock."),
        DeclareLaunchArgument("robot_state_publisher", default_value="false",
                              description="Also start robot_state_publisher (C++): it publishes the URDF "
                                          "instead of the sim, and the TF tree."),
        OpaqueFunction(function=_nodes),
    ])
