"""Every parameter name of the spart_ros nodes (spart_controller, spart_dynamics, spart_sim), generated from
their tables by ``python -m spart_ros.nodes.parameter_docs``; test/test_parameters.py checks that it
is current.  A node given a parameter that none of them has warns (a typo, or an old name: see
:func:`spart_ros.nodes.parameters.declare`); one that another node has is quiet: a parameter file keyed
``/**`` is shared by the nodes of a launch file."""

NAMES = frozenset((
    'accept_older_stamps', 'attitude_gain', 'autostart', 'base', 'base_attitude_topic', 'base_frame', 'base_gains',
    'base_orientation', 'base_pose_topic', 'base_position', 'base_rows', 'base_wrench_topic', 'cartesian_damping',
    'cartesian_stiffness', 'center_of_mass_topic', 'clock_jump_back', 'command_interface', 'command_joints',
    'commands_topic', 'controller_name', 'damping', 'decimation', 'dt', 'ee_goal_topic', 'ee_link', 'ee_offset',
    'ee_pose_topic', 'ee_twist_topic', 'effort_limits', 'executor', 'forward_dynamics_service', 'goal_time',
    'goal_tolerance', 'gravity', 'gravity_topic', 'hold_until_command', 'impedance_damping', 'impedance_stiffness',
    'imu_link', 'imu_max_age', 'imu_topic', 'initial_base_angular_velocity', 'initial_base_linear_velocity',
    'initial_base_orientation', 'initial_base_position', 'initial_joint_names', 'initial_joint_positions',
    'initial_joint_velocities', 'input_queue_depth', 'input_reliability', 'integral_limit', 'integrator',
    'inverse_dynamics_service', 'inverse_kinematics_service', 'jacobian_base_columns', 'jacobian_links',
    'jacobian_offsets', 'jacobian_point_frame', 'jacobians_topic', 'joint_command_topic', 'joint_damping',
    'joint_dynamics', 'joint_dynamics_file', 'joint_limits', 'joint_states_topic', 'joints', 'jump_tolerance', 'kd',
    'ki', 'kp', 'limit_tolerance', 'link_twists_topic', 'lockstep', 'lockstep_republish_period', 'lockstep_steps',
    'max_joint_rates', 'max_rate', 'max_tracking_error', 'mode', 'nullspace_damping', 'nullspace_stiffness',
    'odom_frame', 'odom_max_age', 'odometry_topic', 'output_queue_depth', 'path_sample_period', 'path_tolerance',
    'plant_gravity_topic', 'pose_gain', 'priority', 'publish_center_of_mass', 'publish_clock', 'publish_jacobians',
    'publish_link_twists', 'publish_rate', 'rate', 'reactionless_attitude_only', 'real_time_factor',
    'reference_timeout', 'reset_notice_topic', 'reset_topic', 'resume_tolerance', 'robot_description',
    'robot_description_topic', 'serialized_outputs', 'singular_region', 'state_timeout', 'status_rate',
    'status_topic', 'stopped_velocity_tolerance', 'strict', 'task_rows', 'timing_log_period', 'trajectory_topic',
    'urdf_path', 'use_imu', 'velocity_gain', 'world_frame',
))
