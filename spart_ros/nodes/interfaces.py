"""
What each node publishes, subscribes to and serves: one table per node (no rclpy needed).

The site's node reference is generated from these tables and the parameter tables (a topic
whose name a parameter sets is described by that parameter); test/test_node_interfaces.py
creates each node in the configurations that switch its topics on and off and checks that the
node's own publishers, subscriptions, services and action servers are exactly the table's
(names, types, QoS).  rclpy's own interfaces of every node (``/rosout``,
``/parameter_events``, the parameter services, a lifecycle node's ``~/change_state`` ...) are
not listed.
"""

from dataclasses import dataclass

__all__ = ['Interface', 'INTERFACES', 'KINDS', 'active']

#: the kinds of interfaces, in the order of the reference
KINDS = ('subscription', 'publisher', 'service', 'action')

SENSOR_QOS = 'best effort (``input_reliability``), volatile, depth ``input_queue_depth``'
LATCHED_QOS = 'reliable, transient local, depth 1'
RELIABLE_QOS = 'reliable, volatile, depth 10'
STATE_OUT_QOS = 'reliable, volatile, depth ``state_queue_depth``'


@dataclass(frozen=True)
class Interface:
    """
    One topic, service or action of a node.

    ``kind``: one of :data:`KINDS`; ``name``: its default name (relative names resolve in the
    node's namespace, ``~/`` in the node's name); ``type``: the interface type
    (``package/msg/Name``, ``/srv/``, ``/action/``); ``qos`` (topics): in words; ``param``: the
    parameter that renames it ('' = fixed name); ``when``: in words, when the node has it (''
    = always) and ``present``: the same as a function of the node's parameter values
    ({name: value}) returning a bool; ``description``: what goes through it ('' = the
    description of ``param``).
    """

    kind: str
    name: str
    type: str
    qos: str = ''
    param: str = ''
    when: str = ''
    present: object = None
    description: str = ''

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f'{self.name}: kind {self.kind!r} is not one of {KINDS}')


def active(interfaces, values):
    """
    Return the interfaces a node has with the parameter values ``values``.

    ``interfaces``: a node's table; ``values``: {parameter name: value} (unset ones absent or
    None).  A condition that cannot be decided from ``values`` counts as false.
    """
    return [i for i in interfaces if i.present is None or _holds(i.present, values)]


def _holds(predicate, values):
    try:
        return bool(predicate(values))
    except (KeyError, TypeError):
        return False


def _floating(p):
    return p['base'] == 'floating'


def _mode(p):
    """Return the controller's mode for its parameter values ``p`` ('' = by the base)."""
    from ..control.settings import DEFAULT_MODES

    return p['mode'] or DEFAULT_MODES[p.get('base') == 'floating']


def _references(mode):
    from ..control.modes import MODES

    return MODES[mode].reference_names(mode)


def _pose_goals(mode):
    from ..control.modes import accepts_pose_goals

    return accepts_pose_goals(mode)


def _target(p):
    return bool(p['target_file'])


def _control_msgs(_):
    try:
        import control_msgs.action  # noqa: F401 - is it installed?
    except ImportError:
        return False
    return True


#: the model and state inputs every node that computes on the robot shares (RobotInputs)
ROBOT_INPUTS = (
    Interface(
        'subscription',
        'joint_states',
        'sensor_msgs/msg/JointState',
        SENSOR_QOS,
        param='joint_states_topic',
        description='the joint states, mapped by name in any order (a subset keeps the other '
        "joints' last values); stamps ordered per joint",
    ),
    Interface(
        'subscription',
        'odom',
        'nav_msgs/msg/Odometry',
        SENSOR_QOS,
        param='odometry_topic',
        when='``base: floating``',
        present=_floating,
        description='the base state: pose of ``child_frame_id`` (the URDF base link, or a link '
        'fixed to it) in the world, twist in that frame (REP 105)',
    ),
    Interface(
        'subscription',
        'imu/data',
        'sensor_msgs/msg/Imu',
        SENSOR_QOS,
        param='imu_topic',
        when='``base: floating`` and ``use_imu: true``',
        present=lambda p: _floating(p) and p['use_imu'],
        description='when fresh, overrides the base orientation and angular velocity',
    ),
    Interface(
        'subscription',
        'robot_description',
        'std_msgs/msg/String',
        LATCHED_QOS,
        param='robot_description_topic',
        when='``robot_description_topic`` not empty',
        present=lambda p: bool(p['robot_description_topic']),
        description='the URDF: a new one rebuilds the model (a bad one is logged, the previous '
        'model kept)',
    ),
)

DYNAMICS = ROBOT_INPUTS + (
    Interface(
        'publisher',
        '~/link_twists',
        'spart_interfaces/msg/LinkTwists',
        'reliable, volatile, depth ``output_queue_depth``',
        param='link_twists_topic',
        when='``publish_link_twists: true``',
        present=lambda p: p['publish_link_twists'],
        description="every link's CoM position and twist [angular; CoM velocity], world frame, "
        'stamped with the joint state',
    ),
    Interface(
        'publisher',
        '~/jacobians',
        'spart_interfaces/msg/Jacobians',
        'reliable, volatile, depth ``output_queue_depth``',
        param='jacobians_topic',
        when='``publish_jacobians: true``',
        present=lambda p: p['publish_jacobians'],
        description='the Jacobian of each of ``jacobian_links`` at its point, row-major, with '
        "row and column names, and the point's world position",
    ),
    Interface(
        'publisher',
        '~/center_of_mass',
        'spart_interfaces/msg/CenterOfMass',
        'reliable, volatile, depth ``output_queue_depth``',
        param='center_of_mass_topic',
        when='``publish_center_of_mass: true``',
        present=lambda p: p['publish_center_of_mass'],
        description='the system CoM position and velocity, the total mass',
    ),
    Interface(
        'service',
        '~/forward_dynamics',
        'spart_interfaces/srv/ForwardDynamics',
        param='forward_dynamics_service',
        description='joint efforts, base and link wrenches, gravity -> joint and base '
        'accelerations (a full state in the request, or the current one)',
    ),
    Interface(
        'service',
        '~/inverse_dynamics',
        'spart_interfaces/srv/InverseDynamics',
        param='inverse_dynamics_service',
        description='accelerations -> joint efforts and base wrench (``floating_base: true``: '
        "SPART's Floating_ID, the base unactuated)",
    ),
    Interface(
        'service',
        '~/inverse_kinematics',
        'spart_interfaces/srv/InverseKinematics',
        param='inverse_kinematics_service',
        description='joint positions that put a point of a link at a target pose, position or '
        'chosen rows of it, within the joint limits',
    ),
)

CONTROLLER = ROBOT_INPUTS + (
    Interface(
        'subscription',
        '~/joint_trajectory',
        'trajectory_msgs/msg/JointTrajectory',
        RELIABLE_QOS,
        param='trajectory_topic',
        description='a joint trajectory to follow (any joint order; a new one replaces the '
        'running one without a jump)',
    ),
    Interface(
        'subscription',
        '~/ee_goal',
        'spart_interfaces/msg/EndEffectorGoal',
        RELIABLE_QOS,
        param='ee_goal_topic',
        when='a mode that takes pose goals (the fixed-base joint modes, by inverse kinematics; '
        'the end-effector modes)',
        present=lambda p: _pose_goals(_mode(p)),
    ),
    Interface(
        'subscription',
        '~/ee_twist',
        'geometry_msgs/msg/TwistStamped',
        RELIABLE_QOS,
        param='ee_twist_topic',
        when='the end-effector modes (space-robot, Cartesian impedance)',
        present=lambda p: 'ee_twist' in _references(_mode(p)),
    ),
    Interface(
        'subscription',
        '~/ee_pose',
        'geometry_msgs/msg/PoseStamped',
        RELIABLE_QOS,
        param='ee_pose_topic',
        when='the end-effector modes (space-robot, Cartesian impedance)',
        present=lambda p: 'ee_pose' in _references(_mode(p)),
    ),
    Interface(
        'subscription',
        '~/base_pose',
        'geometry_msgs/msg/PoseStamped',
        RELIABLE_QOS,
        param='base_pose_topic',
        when='``mode: free_flying``',
        present=lambda p: 'base_pose' in _references(_mode(p)),
    ),
    Interface(
        'subscription',
        '~/base_attitude',
        'geometry_msgs/msg/QuaternionStamped',
        RELIABLE_QOS,
        param='base_attitude_topic',
        when='``mode: desired_reaction``',
        present=lambda p: 'base_attitude' in _references(_mode(p)),
    ),
    Interface(
        'subscription',
        'plant_reset',
        'std_msgs/msg/Header',
        RELIABLE_QOS,
        param='reset_topic',
        when='``reset_topic`` not empty',
        present=lambda p: bool(p['reset_topic']),
    ),
    Interface(
        'subscription',
        'plant_gravity',
        'geometry_msgs/msg/Vector3Stamped',
        LATCHED_QOS,
        param='plant_gravity_topic',
        when='``plant_gravity_topic`` not empty',
        present=lambda p: bool(p['plant_gravity_topic']),
    ),
    Interface(
        'publisher',
        'effort_controller/commands',
        'std_msgs/msg/Float64MultiArray',
        RELIABLE_QOS,
        param='commands_topic',
        description='the commands of ``command_joints`` (efforts, or joint velocities for '
        '``command_interface: velocity``), for a ros2_control forward command controller; one '
        'all-zero command on every exit from commanding',
    ),
    Interface(
        'publisher',
        '~/base_wrench',
        'geometry_msgs/msg/WrenchStamped',
        RELIABLE_QOS,
        param='base_wrench_topic',
        when='``mode: free_flying``',
        present=lambda p: 'base_pose' in _references(_mode(p)),
    ),
    Interface(
        'publisher',
        '',
        'sensor_msgs/msg/JointState',
        RELIABLE_QOS,
        param='joint_command_topic',
        when='``joint_command_topic`` not empty',
        present=lambda p: bool(p['joint_command_topic']),
    ),
    Interface(
        'publisher',
        '~/status',
        'spart_interfaces/msg/ControllerStatus',
        RELIABLE_QOS,
        param='status_topic',
        description='what the controller does and why: state, reason, errors, efforts, counts',
    ),
    Interface(
        'service',
        '~/enable',
        'std_srvs/srv/SetBool',
        description='true: activate (and clear a fault); false: deactivate (one zero command)',
    ),
    Interface(
        'subscription',
        'target/odom',
        'nav_msgs/msg/Odometry',
        RELIABLE_QOS,
        param='target_odometry_topic',
        when='``target_file`` set',
        present=_target,
    ),
    Interface(
        'subscription',
        'grasp_attached',
        'geometry_msgs/msg/PoseStamped',
        RELIABLE_QOS,
        param='grasp_attached_topic',
        when='``target_file`` set',
        present=_target,
    ),
    Interface(
        'subscription',
        'orbit',
        'spart_interfaces/msg/Orbit',
        LATCHED_QOS,
        param='orbit_topic',
        when='``target_file`` set and ``orbit_topic`` not empty',
        present=lambda p: _target(p) and bool(p['orbit_topic']),
    ),
    Interface(
        'publisher',
        'grasp',
        'std_msgs/msg/Header',
        RELIABLE_QOS,
        param='grasp_topic',
        when='``target_file`` set',
        present=_target,
    ),
    Interface(
        'action',
        '~/capture',
        'spart_interfaces/action/Capture',
        when='``target_file`` set',
        present=_target,
        description='capture the target by its grapple fixture (approach and synchronise, '
        'grasp, detumble), refused before any attempt when out of reach or too fast; feedback: '
        'phase, distance and relative twist at the fixture; cancel, preemption before the grasp, '
        'abort on a fault with one zero command (docs/capture.md)',
    ),
    Interface(
        'action',
        '~/follow_joint_trajectory',
        'control_msgs/action/FollowJointTrajectory',
        when='``control_msgs`` is installed',
        present=_control_msgs,
        description="JointTrajectoryController's action (MoveIt's controller manager drives "
        'it): goals with path and goal tolerances, feedback, preemption, cancel',
    ),
)

SIM = (
    Interface(
        'subscription',
        'effort_controller/commands',
        'std_msgs/msg/Float64MultiArray',
        RELIABLE_QOS,
        description='``<controller_name>/commands``: the efforts of ``joints``, in their order, '
        'applied until the next command (a command of the wrong length or with a NaN is '
        'dropped and the previous one held)',
    ),
    Interface(
        'publisher',
        'joint_states',
        'sensor_msgs/msg/JointState',
        STATE_OUT_QOS,
        param='joint_states_topic',
        description='the joints, names sorted as joint_state_broadcaster sorts them; efforts = '
        'the applied command',
    ),
    Interface(
        'publisher',
        'odom',
        'nav_msgs/msg/Odometry',
        STATE_OUT_QOS,
        param='odometry_topic',
        description='the base link pose in ``odom_frame``, its twist in the base link frame '
        '(REP 105)',
    ),
    Interface('publisher', 'imu', 'sensor_msgs/msg/Imu', STATE_OUT_QOS, param='imu_topic'),
    Interface(
        'publisher',
        'robot_description',
        'std_msgs/msg/String',
        LATCHED_QOS,
        param='robot_description_topic',
        when='``robot_description_topic`` not empty',
        present=lambda p: bool(p['robot_description_topic']),
    ),
    Interface(
        'publisher',
        'plant_reset',
        'std_msgs/msg/Header',
        RELIABLE_QOS,
        param='reset_notice_topic',
        when='``reset_notice_topic`` not empty',
        present=lambda p: bool(p['reset_notice_topic']),
    ),
    Interface(
        'publisher',
        'plant_gravity',
        'geometry_msgs/msg/Vector3Stamped',
        LATCHED_QOS,
        param='gravity_topic',
        when='``gravity_topic`` not empty',
        present=lambda p: bool(p['gravity_topic']),
    ),
    Interface(
        'publisher',
        '/clock',
        'rosgraph_msgs/msg/Clock',
        STATE_OUT_QOS,
        when='``publish_clock: true``',
        present=lambda p: p['publish_clock'],
        description='the simulated time',
    ),
    Interface(
        'publisher',
        'target/odom',
        'nav_msgs/msg/Odometry',
        STATE_OUT_QOS,
        param='target_odometry_topic',
        when='``target_file`` set',
        present=_target,
    ),
    Interface(
        'publisher',
        'grasp_attached',
        'geometry_msgs/msg/PoseStamped',
        RELIABLE_QOS,
        param='grasp_attached_topic',
        when='``target_file`` set',
        present=_target,
    ),
    Interface(
        'publisher',
        'grasp_impulse',
        'geometry_msgs/msg/WrenchStamped',
        RELIABLE_QOS,
        param='grasp_impulse_topic',
        when='``target_file`` set',
        present=_target,
    ),
    Interface(
        'subscription',
        'grasp',
        'std_msgs/msg/Header',
        RELIABLE_QOS,
        param='grasp_topic',
        when='``target_file`` set',
        present=_target,
    ),
    Interface(
        'service',
        '~/reset',
        'std_srvs/srv/Trigger',
        description='back to the initial state, held until a command; a notice on '
        '``reset_notice_topic`` goes out before the state after it',
    ),
    Interface('service', '~/pause', 'std_srvs/srv/SetBool', description='pause (true) or resume'),
    Interface(
        'service',
        '~/timing',
        'std_srvs/srv/Trigger',
        description='the real-time pacing so far (JSON): steps taken, those taken in a batch to '
        'catch up (their states not published), simulated time given up',
    ),
)

#: node name -> its interfaces
INTERFACES = {'spart_controller': CONTROLLER, 'spart_dynamics': DYNAMICS, 'spart_sim': SIM}
