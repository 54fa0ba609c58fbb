"""
The parameter table of spart_controller (:mod:`.parameters`), and the controller settings it gives.

The defaults of the controller's settings come from
:class:`~spart_ros.control.settings.ControllerSettings` (one set of defaults for the node and
for an offline controller); ``dynamic=True`` marks the run-time ones
(:data:`~spart_ros.control.settings.RUN_TIME`: ``ros2 param set`` applies them between two
ticks); the others are structural (read at configure: set them while unconfigured).
"""

from .parameters import Param, table
from .robot_inputs import INPUT_PARAMETERS
from .runner import EXECUTORS
from ..control.settings import ControllerSettings, RUN_TIME
from ..control.space_modes import INTERFACES

__all__ = ['PARAMETERS', 'RENAMED', 'setting', 'settings_from']

D = ControllerSettings()  # the defaults


def _setting(name, description, **kw):
    """Return a parameter of a ControllerSettings field (its default; run-time if RUN_TIME)."""
    # the field's own default ('' for mode: by the base), not the value D resolved it to
    default = ControllerSettings.__dataclass_fields__[name].default
    if isinstance(default, tuple):
        default = list(default) if default else None
    return Param(name, default, description, dynamic=name in RUN_TIME, **kw)


_GAIN = {'type': 'number_or_list', 'low': 0.0}

PARAMETERS = table(
    Param(
        'autostart',
        True,
        'configure and activate at start (the lifecycle transitions a launch file or '
        '`ros2 lifecycle set` would make); false: wait unconfigured for them',
    ),
    _setting(
        'mode',
        "control law; '' (unset): by the base, 'computed_torque' on a fixed base, "
        "'floating_base' on a floating one; 'computed_torque' (fixed base), 'floating_base' "
        "(free-floating base, Floating_ID), 'free_flying' (actuated base, base wrench out), "
        "'gravity_compensation' "
        "(g(q) and kd damping, no trajectories), 'joint_impedance' (fixed base), "
        "'cartesian_impedance' (fixed base) or 'floating_cartesian_impedance' (free-floating "
        "base), 'mpc' (fixed base) or 'floating_mpc' (free-floating base): model-predictive "
        'control of the joint reference (docs/derivatives_and_mpc.md), or a space-robot mode '
        "following an end-effector reference: 'resolved_rate', "
        "'resolved_rate_min_base_energy', 'reactionless', 'desired_reaction'; or a mode another "
        'package registers (entry point group spart_ros.modes: docs/controller.md, "Adding a '
        'mode"); checked at configure',
    ),
    _setting(
        'command_joints',
        "the effort controller's joints, in the order of its commands; unset = the joints the "
        "URDF's ros2_control tags give an effort command interface (their order, mimic joints "
        "left out), else the independent joints (mimic leaders) in the model's order, depth-first "
        "from the base link, siblings in URDF file order: the same rule as spart_sim's default "
        'joints',
        type='string_array',
        example=['joint_1', 'joint_2'],
    ),
    Param(
        'commands_topic',
        'effort_controller/commands',
        'std_msgs/Float64MultiArray efforts out '
        '(<controller_name>/commands of a ros2_control effort controller; relative: under the '
        'namespace)',
    ),
    _setting('kp', 'position gain [1/s^2]: one value, or one per command joint', **_GAIN),
    _setting(
        'kd',
        'velocity gain [1/s]: one value, or one per command joint (gravity_compensation: the '
        'damping)',
        **_GAIN,
    ),
    _setting('ki', 'integral gain [1/s^3]: one value, or one per command joint', **_GAIN),
    _setting(
        'friction_compensation',
        "part of the joints' declared Coulomb friction the laws compensate, 0..1 (1: the "
        "model's, what spart_sim applies; lower on a robot whose drives compensate friction "
        'themselves or whose URDF friction is nominal: docs/controller.md); damping is '
        'compensated whole',
        low=0.0,
        high=1.0,
    ),
    _setting(
        'integral_limit',
        'bound of the integrated position error per joint [rad s or m s]: one value, or one '
        'per command joint',
        finite=False,
        **_GAIN,
    ),
    _setting(
        'impedance_stiffness',
        'joint_impedance: joint stiffness K [N m/rad or N/m]: one value, or one per command joint',
        **_GAIN,
    ),
    _setting(
        'impedance_damping',
        'joint_impedance: joint damping D [N m s/rad or N s/m]: one value, or one per command '
        'joint (stable at 1 kHz while D / inertia < 2000 1/s)',
        **_GAIN,
    ),
    _setting(
        'cartesian_stiffness',
        'cartesian impedance modes: end-effector stiffness K, world axes: 6 values (the '
        'diagonal: rotation x, y, z [N m/rad], translation x, y, z [N/m]) or 36 (a 6x6 matrix, '
        'row-major)',
        type='double_array',
        low=0.0,
    ),
    _setting(
        'cartesian_damping',
        'cartesian impedance modes: end-effector damping D (6 or 36 values, as '
        'cartesian_stiffness) [N m s/rad, N s/m]; unset = 2 sqrt(cartesian_stiffness)',
        type='double_array',
        example=[6.3, 6.3, 6.3, 34.6, 34.6, 34.6],
    ),
    _setting(
        'nullspace_stiffness',
        'cartesian_impedance: posture stiffness in the null space of the task, mass-weighted '
        '[1/s^2] (the posture: the joint positions at activation)',
        low=0.0,
    ),
    _setting(
        'nullspace_damping',
        'cartesian impedance modes: null-space damping, mass-weighted [1/s]; < 0 = 2 '
        'sqrt(nullspace_stiffness)',
    ),
    _setting(
        'effort_limits',
        'effort bound per command joint (or one for all) [N m or N]; unset = the URDF <limit '
        'effort> (none = unbounded)',
        type='double_array',
        low=0.0,
        open_low=True,
        finite=False,
        example=[100.0],
    ),
    _setting(
        'max_tracking_error',
        'a tracking error (reference - measured position) beyond this is a fault: the '
        'controller holds the pose measured then and refuses trajectories until the fault is '
        'cleared (~/enable true, or a new activation) [rad or m]: one value, or one per command '
        'joint; 0 = no check',
        **_GAIN,
    ),
    _setting(
        'path_tolerance',
        "default path tolerance of trajectory goals (JointTrajectoryController's "
        'constraints.<joint>.trajectory): a position error (reference - measured) beyond it while '
        'a trajectory runs aborts it (FollowJointTrajectory: PATH_TOLERANCE_VIOLATED) and holds '
        'the measured pose [rad or m]: one value, or one per command joint; 0 = no check',
        **_GAIN,
    ),
    _setting(
        'goal_tolerance',
        'default goal tolerance of FollowJointTrajectory goals (constraints.<joint>.goal): the '
        'goal succeeds once every position error is within it after the end [rad or m]: one '
        'value, or one per command joint; 0 = no check',
        **_GAIN,
    ),
    _setting(
        'stopped_velocity_tolerance',
        "FollowJointTrajectory goals succeed once every command joint's velocity "
        'error is within this after the end [rad/s or m/s] '
        '(constraints.stopped_velocity_tolerance); 0 = no check',
        low=0.0,
    ),
    _setting(
        'goal_time',
        'default goal time tolerance of FollowJointTrajectory goals (constraints.goal_time): a '
        'goal not within its goal tolerance this long after the end is aborted '
        '(GOAL_TOLERANCE_VIOLATED) [s]; 0 = no limit',
        low=0.0,
    ),
    _setting(
        'state_timeout',
        "s: joint states (and a floating base's odometry) older than this (steady clock), or a "
        'joint-state stamp that stops advancing, stop the commands: one all-zero command, then '
        'none until fresh data',
        low=0.0,
        open_low=True,
    ),
    _setting(
        'resume_tolerance',
        'after a halt, commanding resumes on the reference if every joint is within this of '
        'it [rad or m], else it holds the measured pose',
        low=0.0,
    ),
    _setting(
        'limit_tolerance',
        'a trajectory point this far beyond a URDF position limit is still accepted [rad or '
        'm] (solver noise)',
        low=0.0,
    ),
    _setting(
        'jump_tolerance',
        'a measured position that moved, since the last command, outside what its velocities '
        'allow (between min and max of the last and the new velocity x dt) by more than this '
        '(a plant reset, a re-homed encoder) drops the reference: the new pose is held '
        '[rad or m]',
        low=0.0,
    ),
    Param(
        'reset_topic',
        'plant_reset',
        "std_msgs/Header in: a plant's reset notice (spart_sim publishes one on each "
        '~/reset): the reference is dropped and the measured pose held; "" = none',
    ),
    Param(
        'plant_gravity_topic',
        'plant_gravity',
        'geometry_msgs/Vector3Stamped in (latched): the gravity the plant '
        'simulates; a gravity parameter that differs is warned; "" = none',
    ),
    Param(
        'rate',
        0.0,
        'control ticks per second on a timer; 0 = one tick per new joint_states stamp',
        low=0.0,
    ),
    _setting(
        'base_gains',
        'free_flying: base PD gains [kp_position 1/s^2, kd_position 1/s, kp_rotation 1/s^2, '
        'kd_rotation 1/s]',
        type='double_array',
        low=0.0,
        length=4,
    ),
    _setting(
        'actuators_file',
        "the base's reaction wheels and thrusters (YAML path or package://<pkg>/<path>; "
        'docs/base_actuators.md): free_flying allocates its base wrench to them, the space modes '
        'hold the base attitude with the wheels; commands on <controller>/commands per group; '
        '"" = none',
    ),
    _setting(
        'thruster_period',
        'base actuators: a thruster cycle [s] (the wrench allocated, on/off thrusters '
        'pulse-width modulated over it)',
        low=0.0,
        open_low=True,
    ),
    _setting(
        'momentum_dump',
        "base actuators' momentum management: [start, stop, gain]: the thrusters unload the "
        "wheels from start until stop (fractions of a wheel's speed limit) with the external "
        'torque -gain h [1/s]',
        type='double_array',
        length=3,
    ),
    _setting(
        'mpc_horizon',
        'mpc, floating_mpc: the prediction horizon [s] (docs/derivatives_and_mpc.md)',
        low=0.0,
        open_low=True,
    ),
    _setting('mpc_steps', 'mpc, floating_mpc: steps over the horizon', low=2, high=1000),
    _setting(
        'mpc_period',
        'mpc, floating_mpc: seconds between two solves (the plan is followed in between)',
        low=0.0,
        open_low=True,
    ),
    _setting(
        'mpc_deadline',
        'mpc, floating_mpc: a solve slower than this [s] (wall clock) or not solved is not '
        'used: computed torque until the next solve, reported in ~/status (mpc_fallback, '
        'mpc_misses, mpc_message) and the log',
        low=0.0,
        open_low=True,
    ),
    _setting(
        'mpc_weights',
        'mpc, floating_mpc: costs [task position 1/rad^2 (1/m^2), task velocity s^2/rad^2, '
        'acceleration s^4/rad^2, base attitude 1/rad^2, base angular velocity s^2/rad^2]; the '
        'default corrects an error as the PD gains kp 100, kd 20 do',
        type='double_array',
        low=0.0,
        length=5,
    ),
    _setting(
        'mpc_task',
        "mpc, floating_mpc: what the cost tracks: 'joint' (the joint reference) or "
        "'end_effector' (the motion of ee_link's point, in the base frame, that the joint "
        'reference gives; the redundancy is free for the base objective)',
        choices=('joint', 'end_effector'),
    ),
    _setting(
        'mpc_posture_weight',
        "mpc, floating_mpc with mpc_task 'end_effector': the joint error's cost [1/rad^2]",
        low=0.0,
    ),
    Param(
        'wheel_states_topic',
        'wheel_states',
        "base actuators: sensor_msgs/JointState in, the wheels' speeds by name",
    ),
    _setting(
        'target_file',
        'a free-flying target to capture (YAML or URDF path, or package://<pkg>/<path>; '
        'docs/capture.md): the ~/capture action (approach and synchronise with its grapple '
        'fixture, grasp, detumble) on the estimates of target_odometry_topic; base floating; '
        '"" = none',
    ),
    _setting(
        'capture_base',
        "capture: the base during the approach: 'held' (its attitude held by the reaction "
        'wheels of actuators_file) or \'free\' (it reacts); "" = held with wheels, else free',
        choices=('', 'held', 'free'),
    ),
    Param(
        'target_odometry_topic',
        'target/odom',
        "capture: nav_msgs/Odometry in, estimates of the target's link frame (pose in the world "
        'frame, twist in its own frame, REP 105), stamped when measured',
    ),
    Param(
        'grasp_topic',
        'grasp',
        'capture: std_msgs/Header out, once when the grasp criteria have held: the plant is to '
        'weld the target (spart_sim does)',
    ),
    Param(
        'grasp_attached_topic',
        'grasp_attached',
        "capture: geometry_msgs/PoseStamped in, the weld made: the target's link frame in the "
        "end effector link's frame (the model carries the target there from then on)",
    ),
    Param(
        'orbit_topic',
        'orbit',
        'capture: spart_interfaces/Orbit in (latched, as spart_sim publishes it): the orbit '
        'whose LVLH frame is the world frame (the target\'s prediction follows it); "" = none',
    ),
    Param(
        'wheel_speeds_in_joint_states',
        False,
        "base actuators: read the wheels' speeds from joint_states (spart_sim publishes them "
        'there too) instead of wheel_states_topic: one subscription fewer at the state rate',
    ),
    Param(
        'trajectory_topic', '~/joint_trajectory', 'trajectory_msgs/JointTrajectory reference in'
    ),
    Param(
        'base_pose_topic',
        '~/base_pose',
        'free_flying: geometry_msgs/PoseStamped base reference in (world '
        'frame; default: hold the pose at activation)',
    ),
    Param(
        'base_wrench_topic',
        '~/base_wrench',
        'free_flying: geometry_msgs/WrenchStamped base wrench out (at the '
        'base link origin, in the base link frame)',
    ),
    Param(
        'joint_command_topic',
        '',
        'also publish the efforts as sensor_msgs/JointState (topic-based hardware '
        'interfaces), stamped with the state they answer; "" = off',
    ),
    Param('status_topic', '~/status', 'spart_interfaces/ControllerStatus out'),
    Param('status_rate', 10.0, 'status messages per second (0 = off)', low=0.0),
    Param(
        'executor',
        'events',
        "rclpy executor: 'events' (EventsExecutor, lowest latency) or 'single_threaded'",
        choices=EXECUTORS,
    ),
    _setting(
        'command_interface',
        "space-robot modes: 'effort' (Floating_ID of the velocity reference's "
        "accelerations) or 'velocity' (joint velocities, for a velocity command controller)",
        choices=INTERFACES,
    ),
    _setting(
        'ee_link',
        'end effector of the end-effector modes and pose goals: its link; empty = the first leaf '
        'link of the tree',
    ),
    _setting(
        'ee_offset',
        'the end-effector point in the ee_link URDF frame [m]',
        type='double_array',
        length=3,
    ),
    _setting(
        'task_rows',
        'space-robot and cartesian impedance modes: task components (0..5 of [wx, wy, wz, vx, vy, '
        'vz]); unset = all six',
        type='integer_array',
        low=0,
        high=5,
        example=[3, 4, 5],
    ),
    _setting(
        'path_sample_period',
        's: a pose goal in a joint mode (computed_torque, joint_impedance) becomes a joint '
        'trajectory by inverse kinematics at samples of its path this far apart',
        low=0.0,
        open_low=True,
    ),
    _setting(
        'damping',
        'space-robot modes: damping of the pseudo-inverse of J* inside the singular region',
        low=0.0,
    ),
    _setting(
        'singular_region',
        'space-robot modes: smallest singular value of J* below which damping starts',
        low=0.0,
    ),
    _setting(
        'max_joint_rates',
        'space-robot modes: joint rate bounds [rad/s or m/s], one per moving joint or one '
        'for all; unset = the URDF <limit velocity>',
        type='double_array',
        low=0.0,
        open_low=True,
        finite=False,
        example=[1.0],
    ),
    _setting(
        'velocity_gain', 'space-robot modes, effort interface: joint rate loop gain [1/s]', low=0.0
    ),
    _setting(
        'pose_gain', 'space-robot modes: P gain of an end-effector pose target [1/s]', low=0.0
    ),
    _setting(
        'attitude_gain', 'desired_reaction: P gain of the base attitude target [1/s]', low=0.0
    ),
    _setting(
        'base_rows',
        'desired_reaction: base angular velocity components (base frame x, y, z) to control',
        type='integer_array',
        low=0,
        high=2,
    ),
    _setting(
        'priority',
        "desired_reaction: the task met first: 'end_effector' or 'base'",
        choices=('end_effector', 'base'),
    ),
    _setting(
        'reactionless_attitude_only',
        'reactionless: keep only the base attitude undisturbed (false: the whole base motion)',
    ),
    _setting(
        'reference_timeout',
        's: an end-effector twist older than this (steady clock) counts as none',
        low=0.0,
        open_low=True,
    ),
    Param(
        'ee_twist_topic',
        '~/ee_twist',
        'end-effector modes (space-robot, Cartesian impedance): '
        'geometry_msgs/TwistStamped in: end-effector twist '
        '[angular; linear velocity of the point]; header.frame_id world_frame (or empty) or the '
        'base link (the twist in base link axes); other frames are rejected',
    ),
    Param(
        'ee_pose_topic',
        '~/ee_pose',
        'end-effector modes (space-robot, Cartesian impedance): '
        'geometry_msgs/PoseStamped in: end-effector pose target; '
        'header.frame_id world_frame (or empty) or the base link (a target fixed to the base); '
        'other frames are rejected',
    ),
    Param(
        'ee_goal_topic',
        '~/ee_goal',
        'spart_interfaces/EndEffectorGoal in (modes that take pose goals: the fixed-base '
        'joint modes by IK, the end-effector modes along the path): reach a pose in a given time '
        'along a Cartesian or screw path; header.frame_id world_frame (or empty) or the base link',
    ),
    Param(
        'base_attitude_topic',
        '~/base_attitude',
        'desired_reaction: geometry_msgs/QuaternionStamped in: target '
        'orientation of the base link in the world (header.frame_id world_frame or empty)',
    ),
    *INPUT_PARAMETERS.values(),
    # every state is answered, in order, also when two arrive before the executor takes the
    # first (an odometry message converted before them, a millisecond's stall of the process:
    # with a depth of 1 the older one was overwritten, 0.05-0.2 % of the states at 1 kHz); a
    # backlog is bounded to 10 states (at ~0.3 ms a tick, 3 ms to reach the newest again)
    overrides={'input_queue_depth': 10},
)

#: parameters renamed since an earlier release: {old name: new name} (the old one is taken, warned)
RENAMED = {'enabled': 'autostart'}

#: the parameters that are ControllerSettings fields
SETTINGS = tuple(name for name in PARAMETERS if hasattr(D, name))


def setting(name, value):
    """
    Return the :class:`ControllerSettings` value of parameter ``name``'s validated ``value``.

    Unset -> the setting's default (e.g. ``effort_limits``: the URDF's), a list -> a tuple where
    the setting holds one.
    """
    default = getattr(D, name)
    if value is None:
        return default
    return tuple(value) if isinstance(default, tuple) else value


def settings_from(values):
    """:class:`ControllerSettings` of the node's parameter ``values`` (validated by the table)."""
    return ControllerSettings(
        floating=values['base'] == 'floating',
        event_driven=not values['rate'],
        **{name: setting(name, values[name]) for name in SETTINGS},
    )
