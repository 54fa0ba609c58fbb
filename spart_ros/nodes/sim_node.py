"""
spart_sim: the embedded MuJoCo plant as a ROS 2 node that behaves like ros2_control hardware.

Thin rclpy adapter around :class:`spart_ros.sim.MujocoPlant` (physics and readouts),
:class:`spart_ros.sim.EffortCommand` (the effort controller's command contract) and
:class:`spart_ros.sim.RealTimePacer`.  Stamps are simulated time (like Gazebo); nodes that
read them with ``use_sim_time: true`` follow ``/clock``.

Outputs (relative names follow the node's namespace)
    ``robot_description`` std_msgs/String, RELIABLE + TRANSIENT_LOCAL depth 1 (like
        robot_state_publisher): the URDF (xacro expanded), once at start;
    ``joint_states`` sensor_msgs/JointState, RELIABLE, depth ``state_queue_depth`` (10, like
        joint_state_broadcaster): names sorted alphabetically, positions, velocities, efforts (=
        the applied command);
    ``odom`` nav_msgs/Odometry: pose of the URDF base link in ``odom_frame``, twist in the base
        link frame (REP 105); ``imu`` sensor_msgs/Imu at the base link origin, frame = base link
        (orientation, angular velocity, specific force: +g up at rest).  RELIABLE, depth
        ``state_queue_depth``: a reliable publisher matches best-effort (sensor) and reliable
        subscribers alike, and a lockstep controller must not lose a state;
    ``/clock`` rosgraph_msgs/Clock, RELIABLE depth ``state_queue_depth`` (10: SystemDefaultsQoS,
        as the ros_gz bridge and mujoco_ros2_control publish it; rclpy/rclcpp subscribe
        BEST_EFFORT, which matches), published just before each state.  ``/clock`` and ``imu``
        (as the base actuators' states) are published only while subscribed: a publication
        costs the middleware 40-70 us even to one subscriber.
    ``plant_reset`` (``reset_notice_topic``) std_msgs/Header: one notice per ``~/reset``, stamped
        like the first state after the reset (the reset takes one ``dt`` of simulated time, so
        that state has a stamp of its own), published before it (a controller drops its
        reference and holds that state's pose, whichever of the two it gets first);
        ``plant_gravity`` (``gravity_topic``) geometry_msgs/Vector3Stamped, latched: the
        simulated gravity (a controller compares its own).
Orbit (``orbit_altitude`` or ``orbit_mean_motion`` set; floating base, zero gravity; see
    docs/space_environment.md): the robot falls freely near the reference point of a circular
    orbit, every body under its tidal force and gravity-gradient torque.  Then
    ``odom``'s frame is ``orbit_frame`` (``lvlh``: origin at the reference point, Hill's axes x
    radial, y along-track, z orbit normal), its twist relative to it; the ``initial_base_*``
    parameters are in it; the IMU's angular velocity is inertial (a gyro's) and its specific force
    excludes the tidal field; ``orbit`` (``orbit_topic``) spart_interfaces/Orbit, latched: the
    orbit's parameters; ``/tf`` tf2_msgs/TFMessage (``publish_tf``): ``orbit_frame`` -> base frame
    at each state, the odometry's pose.  Where tf2_msgs is not installed (these PyPI wheels) the
    node says so once and publishes no /tf: the odometry carries the same transform (frame_id,
    child_frame_id, pose, stamp), and a /tf of another type would break every tf listener.
Target (``target_file`` set: a free-flying target, docs/capture.md; :mod:`.sim_target`): a body
    of its own under the same orbit; ``target_odometry_topic`` nav_msgs/Odometry (its link frame,
    as a pose estimator reports it: ``target_period``, ``target_noise``, ``target_delay``), in
    ``/tf`` beside the base; ``grasp_topic`` std_msgs/Header in (a grasp request: the target is
    welded to ``grasp_link`` where it is) and ``grasp_attached_topic`` geometry_msgs/PoseStamped
    out (the weld made: its time, the target's pose in the grasp link's frame).
Input
    ``<controller_name>/commands`` std_msgs/Float64MultiArray, RELIABLE depth 10 (as
        ros2_control's effort controllers subscribe): ``data[i]`` = effort of ``joints[i]``
        (default: the independent joints, :func:`spart_ros.core.mimic.command_joints`, the rule
        of spart_controller's default ``command_joints``).  A wrong length or a NaN/infinite
        value is dropped and logged (throttled); the previous command stays applied.
        ``hold_until_command`` (default true): until the first command arrives the robot is held
        still where it starts, as brakes would (the time goes on).
The URDF's ``<ros2_control>`` tags (the description gz_ros2_control and mujoco_ros2_control read)
    give, when present, the default ``joints`` (the joints with an ``effort`` command interface,
    in the tags' order, mimic followers left out: :func:`spart_ros.core.mimic.command_joints`,
    the rule of spart_controller's default too) and the initial state (``initial_value`` of the
    ``position`` and ``velocity`` state interfaces; the ``initial_joint_*`` parameters take
    precedence); the hardware plugin they name is not loaded (this node is the hardware: a note
    says so), a joint with no effort interface gets no command (warned).  Without a tag: the
    parameters alone, as before.
Services
    ``~/reset`` std_srvs/Trigger: back to the initial state (parameters ``initial_*``), efforts
        zeroed, held again until a command (``hold_until_command``); simulated time goes on by
        one ``dt`` (a clock never runs backwards, and the state after the reset has a new stamp).
    ``~/pause`` std_srvs/SetBool: true pauses the physics and the clock, false resumes.
    ``~/timing`` std_srvs/Trigger: the real-time pacing's counts so far, as JSON in the answer's
        message: ``time_ns`` (the plant's time), ``steps`` (taken by the real-time timer),
        ``batched`` (of those, the ones taken in a batch to catch up with the wall clock: their
        states were never published), ``slipped_s`` (simulated time given up).

Timing
    real time (default): a wall timer at ``publish_rate`` steps the physics as many ``dt``
        steps as keep simulated time = ``real_time_factor`` x wall time, then publishes one
        state; if the machine cannot keep up, at most 20 ms of simulated time is caught up
        per tick and the rest is given up (warned): a stall of this process is not simulated
        as the robot running open loop on the last command.
    lockstep (``lockstep: true``, deterministic, for tests and use_sim_time): every command
        message advances the physics by ``lockstep_steps`` steps (a dropped one too, with the
        previous command, as the hardware keeps running when a controller update fails) and
        publishes /clock and the new state.  The initial state is published at start, again
        when a joint_states, odom or imu subscriber appears, and every
        ``lockstep_republish_period`` s while no command comes; resuming from a pause advances
        one control period (a new state to answer).  Timers run on the steady clock, so
        ``use_sim_time`` does not freeze the node that makes the time.  A controller drives it by
        answering each NEW joint_states stamp with exactly one command (and ignoring a
        repeated stamp): then the run is the same bit for bit every time.

Every parameter, with its default: config/sim_node.yaml (and ``PARAMETERS`` below).
Run: ``ros2 run spart_ros sim_node --ros-args -p urdf_path:=urdf/SC_3DoF.urdf -p base:=floating``.
"""

from dataclasses import replace
import json
import sys
import time

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Vector3Stamped
from nav_msgs.msg import Odometry
from rclpy.clock import Clock as RosClock
from rclpy.clock import ClockType
from rclpy.event_handler import PublisherEventCallbacks
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message, serialize_message
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray, Header, String
from std_srvs.srv import SetBool, Trigger

from .cdr import CdrError, parse_float64_array
from .config import BASE_MODES, ConfigError, package_path
from .parameters import declare, Param, table
from .robot_inputs import guarded, ROBOT_DESCRIPTION_QOS
from .runner import EXECUTORS, run_node
from .sim_actuators import SimActuatorsIO
from .state_messages import SerializedStates
from .throttle import LogLimiter
from ..core.errors import SpartError
from ..core.mimic import command_joints
from ..core.orbit import CircularOrbit, EARTH_MU, EARTH_RADIUS, ORBIT_MODELS
from ..core.packages import set_package_paths
from ..core.ros2_control import initial_values, ros2_control_from_urdf
from ..core.urdf import urdf_text
from ..sim import (
    CommandRejected,
    EffortCommand,
    InitialState,
    MujocoPlant,
    RealTimePacer,
    SimulationDiverged,
)
from ..sim.joint_limits import outside_position_limits, VelocityLimits
from ..sim.urdf_import import INTEGRATORS

NODE_NAME = 'spart_sim'
#: s of simulated time caught up per real-time tick at most: a scheduling delay is caught up, a
#: stall of this process is given up (warned): caught up, it would run the robot open loop on the
#: last
#: command (or a controller watchdog's zero) for a time no real plant does
MAX_LAG = 0.02

#: joint_states, odom, imu, /clock out and commands in: rclcpp's SystemDefaultsQoS
STATE_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=10,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
)

#: every parameter of the node (spart_ros.nodes.parameters; all structural: set at start)
PARAMETERS = table(
    Param(
        'robot_description',
        '',
        'URDF (or xacro) text of the robot (takes precedence over urdf_path)',
    ),
    Param(
        'urdf_path', '', 'path of a URDF (or .xacro) file, used when robot_description is empty'
    ),
    Param(
        'base',
        'fixed',
        "'fixed' (root link welded to the world at initial_base_position/orientation) or "
        "'floating' (free joint)",
        choices=BASE_MODES,
    ),
    Param(
        'gravity',
        [0.0, 0.0, -9.81],
        'gravity [x, y, z] in the world frame, m/s^2 ([0, 0, 0] for space); '
        'published on gravity_topic',
        length=3,
    ),
    Param('dt', 0.001, 'physics step, s (rounded to 1 ns)', low=0.0, open_low=True),
    Param(
        'integrator',
        'RK4',
        "'RK4' (keeps a free-floating robot's momentum), 'Euler', 'implicit' or "
        "'implicitfast'; not used, with a warning, where the joints declare Coulomb friction "
        "(joint_friction 'model') or a damping too stiff for RK4 at dt (fastest damping rate x "
        "dt > 2): the plant's implicit step applies them (spart_ros.sim.joint_dissipation)",
        choices=tuple(INTEGRATORS),
    ),
    Param(
        'joint_damping',
        True,
        "apply the joints' damping, Coulomb friction (joint_friction) and rotor inertia "
        '(armature) the model declares: URDF <dynamics damping friction> and joint_dynamics_file, '
        "the values spart_controller compensates (false: the rigid-body model of SPART's "
        'functions)',
    ),
    Param(
        'joint_friction',
        'model',
        "how the declared Coulomb friction acts: 'model' (the model's law d qd + F tanh(qd / "
        "0.01), no static friction: what spart_controller compensates) or 'frictionloss' "
        "(MuJoCo's constraint: stick-slip, a force that differs from the model's, on a light "
        'joint many times weaker)',
        choices=('model', 'frictionloss'),
    ),
    Param(
        'joint_dynamics_file',
        '',
        'YAML file overriding the joints\' damping, friction, armature: {joint (or "*"): '
        '{armature: kg m^2, damping: N m s/rad, friction: N m}} (give the controller the same '
        'file); "" = the '
        "URDF's only",
    ),
    Param(
        'joint_limits',
        False,
        'enforce the URDF position limits (MuJoCo soft constraints, inactive inside the '
        'range; SPART models none)',
    ),
    Param(
        'hold_until_command',
        True,
        'hold the robot still where it starts (and after ~/reset), as brakes would, '
        'until the first effort command arrives: no robot sags or falls while its controller '
        'starts',
    ),
    Param(
        'lockstep',
        False,
        'advance the physics only on commands (lockstep_steps per command message) instead of '
        'in real time',
    ),
    Param(
        'state_queue_depth',
        10,
        'KEEP_LAST depth of the joint_states, odom, imu and /clock publishers (reliable): what a '
        'reader that lags may still receive; 10 as joint_state_broadcaster (a recorder that must '
        "lose nothing, e.g. the demo's bag: 1000)",
        low=1,
    ),
    Param(
        'lockstep_steps',
        1,
        'lockstep: physics steps per command message (control period = lockstep_steps * dt)',
        low=1,
    ),
    Param(
        'lockstep_republish_period',
        1.0,
        'lockstep: publish the current state again after this many wall-clock '
        'seconds without a command (0 = never)',
        low=0.0,
    ),
    Param(
        'real_time_factor',
        1.0,
        'real-time mode: simulated seconds per wall-clock second',
        low=0.0,
        open_low=True,
    ),
    Param(
        'publish_rate',
        1000.0,
        'real-time mode: joint_states/odom/imu/clock publications per wall-clock second '
        '(at most one per physics step)',
        low=0.0,
        open_low=True,
    ),
    Param(
        'package_paths',
        None,
        'folders where $(find pkg) of a xacro robot description looks for packages (each the '
        'package folder, or a folder holding packages), before ROS_PACKAGE_PATH and the ament '
        'index; unset = those two only',
        type='string_array',
        example=['/home/me/ws/src/my_robot_description'],
    ),
    Param('controller_name', 'effort_controller', 'commands topic is <controller_name>/commands'),
    Param(
        'joints',
        None,
        "the effort controller's joints, in the order of the command values; unset = the joints "
        "the URDF's ros2_control tags give an effort command interface (their order), else the "
        'independent joints (mimic leaders), depth-first from the root (siblings in URDF file '
        "order): the same rule as spart_controller's default command_joints",
        type='string_array',
        example=['joint_1', 'joint_2'],
    ),
    Param(
        'initial_joint_names',
        None,
        "joints given an initial position (others start at the ros2_control tag's "
        'initial_value, else 0)',
        type='string_array',
        example=['joint_1', 'joint_2'],
    ),
    Param(
        'initial_joint_positions',
        None,
        'initial positions, one per initial_joint_names',
        type='double_array',
        example=[0.5, -0.3],
    ),
    Param(
        'initial_joint_velocities',
        None,
        'initial velocities, one per initial_joint_names; unset = 0',
        type='double_array',
        example=[0.0, 0.0],
    ),
    Param(
        'initial_base_position',
        [0.0, 0.0, 0.0],
        "base link origin in odom_frame (orbit_frame with an orbit), m (of the URDF's world link "
        'when its fixed joint places the base; fixed base: the mount)',
        length=3,
    ),
    Param(
        'initial_base_orientation',
        [0.0, 0.0, 0.0, 1.0],
        'base link orientation (x, y, z, w) in odom_frame (orbit_frame with an orbit)',
        length=4,
    ),
    Param(
        'initial_base_linear_velocity',
        [0.0, 0.0, 0.0],
        'floating base: velocity of the base link origin, in the base link frame, m/s '
        '(relative to orbit_frame with an orbit)',
        length=3,
    ),
    Param(
        'initial_base_angular_velocity',
        [0.0, 0.0, 0.0],
        'floating base: angular velocity in the base link frame, rad/s (relative to orbit_frame '
        'with an orbit)',
        length=3,
    ),
    Param(
        'actuators_file',
        '',
        "the base's reaction wheels and thrusters (YAML path or package://<pkg>/<path>; "
        'docs/base_actuators.md): the wheels become joints, commands on <controller>/commands per '
        'group (Float64MultiArray), states on wheel_states_topic and thruster_states_topic; "" '
        '= none',
    ),
    Param(
        'wheel_states_topic',
        'wheel_states',
        'sensor_msgs/JointState output: the reaction wheels (angle, speed relative to the base, '
        'effort = the motor torque applied)',
    ),
    Param(
        'thruster_states_topic',
        'thruster_states',
        'spart_interfaces/ThrusterState output: thruster commands, forces, firings, impulse, '
        'propellant',
    ),
    Param('joint_states_topic', 'joint_states', 'sensor_msgs/JointState output'),
    Param('odometry_topic', 'odom', 'nav_msgs/Odometry output'),
    Param('imu_topic', 'imu', 'sensor_msgs/Imu output'),
    Param(
        'robot_description_topic',
        'robot_description',
        'std_msgs/String output (latched); "" = not published',
    ),
    Param(
        'reset_notice_topic',
        'plant_reset',
        'std_msgs/Header output: one notice per ~/reset (stamp = the stamp of '
        'the first state after the reset), before that state; "" = not published',
    ),
    Param(
        'gravity_topic',
        'plant_gravity',
        'geometry_msgs/Vector3Stamped output (latched): the simulated gravity, '
        'for controllers to check theirs; "" = not published',
    ),
    Param(
        'orbit_altitude',
        0.0,
        'circular orbit of the reference point (the LVLH origin) at this altitude above '
        'orbit_body_radius, m; 0 with orbit_mean_motion 0: no orbit (empty space or the uniform '
        "gravity); an orbit needs base 'floating' and gravity [0, 0, 0]",
        low=0.0,
    ),
    Param(
        'orbit_mean_motion',
        0.0,
        'or the orbit by its mean motion n, rad/s (set one of orbit_altitude, orbit_mean_motion)',
        low=0.0,
    ),
    Param(
        'orbit_mu',
        EARTH_MU,
        "the central body's gravitational parameter, m^3/s^2 (default: the Earth's)",
        low=0.0,
        open_low=True,
    ),
    Param(
        'orbit_body_radius',
        EARTH_RADIUS,
        "the central body's radius, m (altitudes are above it; default: the Earth's equatorial)",
        low=0.0,
    ),
    Param(
        'orbit_model',
        'linear',
        "tidal field: 'linear' (Hill / Clohessy-Wiltshire, first order in the distance to the "
        "reference point) or 'nonlinear' (the exact two-body difference)",
        choices=ORBIT_MODELS,
    ),
    Param(
        'orbit_frame',
        'lvlh',
        'with an orbit: header.frame_id of the odometry and the parent of /tf (the LVLH frame, '
        "Hill's axes: x radial, y along-track, z orbit normal); odom_frame otherwise",
    ),
    Param(
        'orbit_topic',
        'orbit',
        'spart_interfaces/Orbit output (latched) with an orbit: its parameters; "" = not '
        'published',
    ),
    Param(
        'publish_tf',
        True,
        'with an orbit: publish orbit_frame -> base frame on /tf at each state (tf2_msgs; where '
        'it is not installed, the odometry alone carries that transform)',
    ),
    Param(
        'target_file',
        '',
        'a free-flying target (YAML or URDF path, or package://<pkg>/<path>; docs/capture.md): '
        'a body of its own under the same orbit, its odometry on target_odometry_topic, welded '
        'to grasp_link when grasp_topic asks; "" = none',
    ),
    Param(
        'grasp_link',
        '',
        'the robot\'s link the target is welded to at the grasp; "" = the first leaf link (not '
        "a reaction wheel's rotor)",
    ),
    Param(
        'target_odometry_topic',
        'target/odom',
        "nav_msgs/Odometry output: the target's link frame as a pose estimator reports it (pose "
        'in the world frame, twist in its own frame, REP 105; LVLH with an orbit)',
    ),
    Param('target_frame', '', 'child_frame_id of the target\'s odometry; "" = the target\'s name'),
    Param(
        'target_period',
        0.0,
        's of simulated time between two target odometry messages (0 = one with every state)',
        low=0.0,
    ),
    Param(
        'target_noise',
        [0.0, 0.0, 0.0, 0.0],
        "white noise of the target's odometry, standard deviations: [position m, attitude rad "
        '(a rotation vector in the target frame), linear m/s, angular rad/s]',
        length=4,
        low=0.0,
    ),
    Param('target_noise_seed', 0, "the target odometry noise's generator seed"),
    Param(
        'target_delay',
        0.0,
        "s: the target's odometry of a state goes out this much simulated time later (stamped "
        'with the state it measured)',
        low=0.0,
    ),
    Param(
        'grasp_topic',
        'grasp',
        "std_msgs/Header input: a grasp request (spart_controller, when its capture's grasp "
        'criteria hold): the target is welded to grasp_link where it is',
    ),
    Param(
        'grasp_attached_topic',
        'grasp_attached',
        'geometry_msgs/PoseStamped output: the weld made (stamp: its time; frame_id: the grasp '
        "link; pose: the target's link frame in the grasp link's frame)",
    ),
    Param(
        'grasp_impulse_topic',
        'grasp_impulse',
        'geometry_msgs/WrenchStamped output, once 10 ms after the weld: the impulse the target '
        'received at the grasp (force: linear N s; torque: angular about its CoM N m s; world '
        'axes)',
    ),
    Param('publish_clock', True, 'publish /clock (simulated time)'),
    Param('odom_frame', 'odom', 'header.frame_id of the odometry (the world frame)'),
    Param(
        'base_frame',
        '',
        'child_frame_id of the odometry and frame of the IMU; "" = the URDF base link',
    ),
    Param(
        'executor',
        'events',
        "rclpy executor: 'events' (EventsExecutor: half the CPU of 'single_threaded' at 1 "
        "kHz here) or 'single_threaded'",
        choices=EXECUTORS,
    ),
)


class SimNode(Node):
    """The spart_sim node (see the module docstring)."""

    NODE_NAME = NODE_NAME

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        p = declare(self, PARAMETERS)
        self._log_limiter = LogLimiter(5.0)

        source, origin = self._description_source(p)
        try:  # for $(find pkg) of a xacro description
            set_package_paths(p['package_paths'] or ())
        except SpartError as err:
            raise ConfigError(str(err)) from None
        self._urdf = urdf_text(source)  # xacro expanded: robot_description is plain URDF
        initial = InitialState.from_lists(
            p['initial_joint_names'],
            p['initial_joint_positions'],
            p['initial_joint_velocities'],
            base_position=p['initial_base_position'],
            base_orientation=p['initial_base_orientation'],
            base_linear_velocity=p['initial_base_linear_velocity'],
            base_angular_velocity=p['initial_base_angular_velocity'],
        )
        self._orbit = _orbit(p)
        self._plant = plant = MujocoPlant.from_urdf(
            self._urdf,
            actuators=package_path('actuators_file', p['actuators_file']) or None,
            orbit=self._orbit,
            base=p['base'],
            gravity=p['gravity'],
            dt=p['dt'],
            integrator=p['integrator'],
            joint_damping=p['joint_damping'],
            joint_limits=p['joint_limits'],
            initial=initial,
            joint_dynamics=p['joint_dynamics_file'] or None,
            friction=p['joint_friction'],
            target=package_path('target_file', p['target_file']) or None,
            grasp_link=p['grasp_link'] or None,
        )
        if plant.actuation is not None:  # robot_description: the wheels are joints too
            self._urdf = plant.description
        wheels = plant.actuation.actuators.wheel_names if plant.actuation is not None else []
        self._hardware_notes = []
        hardware = self._hardware(plant, initial)
        self._command = EffortCommand(
            p['joints'] or [j for j in command_joints(plant.robot, hardware) if j not in wheels],
            plant.joint_names,
        )
        # the plant enforces no URDF velocity limit: said (throttled) when a joint passes one
        self._velocity_limits = VelocityLimits.of(plant.robot, plant.joint_names)
        self._hold_until_command = bool(p['hold_until_command'])
        plant.hold(self._hold_until_command)
        self._lockstep = bool(p['lockstep'])
        self._lockstep_steps = int(p['lockstep_steps'])
        rate = float(p['publish_rate'])
        self._pacer = RealTimePacer(plant.dt, p['real_time_factor'], MAX_LAG)
        #: real time: the steps taken, and those of them whose states were not published (a
        #: tick taking several steps publishes the last state only)
        self._steps_taken = self._steps_batched = 0
        republish = float(p['lockstep_republish_period'])
        self._base_frame = p['base_frame'] or plant.base_link
        self._create_interfaces(p)
        self._slip_reported = 0.0  # real time: simulated seconds given up, as last logged
        self._waiting = True  # lockstep: a state is out, no command since
        self._last_publish = time.monotonic()
        self._republish_period = republish
        # timers on the steady clock: this node IS the clock (/clock); under use_sim_time its own
        # timers would wait for the time they are meant to advance
        steady = RosClock(clock_type=ClockType.STEADY_TIME)
        if self._lockstep:
            if republish > 0:
                self._timer = self.create_timer(
                    min(republish, 0.1),
                    self._guard(self._republish_if_waiting, 'republish'),
                    clock=steady,
                )
        else:
            # the pacer anchors at the first tick, once the node spins
            self._timer = self.create_timer(
                max(1.0 / rate, plant.dt), self._guard(self._real_time_tick, 'step'), clock=steady
            )
        self._log_start(p, origin, min(rate, 1.0 / plant.dt))  # before any output it describes
        self._publish_state()

    # -- set-up helpers -------------------------------------------------------------------
    def _create_interfaces(self, p):
        """
        Create the publishers, the commands subscription and the services.

        The robot_description is sent at once.
        """
        state_qos = QoSProfile(
            history=HistoryPolicy.KEEP_LAST,
            depth=int(p['state_queue_depth']),
            reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.VOLATILE,
        )
        self._pub_clock = (
            self.create_publisher(Clock, '/clock', state_qos) if p['publish_clock'] else None
        )
        # lockstep: a new subscriber of a state topic (a controller starting late) gets the state
        matched = PublisherEventCallbacks(
            matched=self._guard(self._on_state_subscriber, 'matched')
        )
        self._pub_joints = self.create_publisher(
            JointState, p['joint_states_topic'], state_qos, event_callbacks=matched
        )
        self._pub_odom = self.create_publisher(
            Odometry, p['odometry_topic'], state_qos, event_callbacks=matched
        )
        self._pub_imu = self.create_publisher(
            Imu, p['imu_topic'], state_qos, event_callbacks=matched
        )
        self._pub_description = None
        if p['robot_description_topic']:
            self._pub_description = self.create_publisher(
                String, p['robot_description_topic'], ROBOT_DESCRIPTION_QOS
            )
            self._pub_description.publish(String(data=self._urdf))
        self._pub_reset = (
            self.create_publisher(Header, p['reset_notice_topic'], STATE_QOS)
            if p['reset_notice_topic']
            else None
        )
        if p['gravity_topic']:
            self._pub_gravity = self.create_publisher(
                Vector3Stamped, p['gravity_topic'], ROBOT_DESCRIPTION_QOS
            )
            g = Vector3Stamped()
            g.header.frame_id = p['odom_frame']
            g.vector.x, g.vector.y, g.vector.z = self._plant.gravity.tolist()
            self._pub_gravity.publish(g)
        commands_topic = f'{p["controller_name"]}/commands'
        self._sub_commands = self.create_subscription(
            Float64MultiArray,
            commands_topic,
            self._guard(self._on_command_raw, 'command'),
            STATE_QOS,
            raw=True,
        )  # serialized: read by spart_ros.nodes.cdr (rclpy's conversion costs more)
        self._actuators = (
            SimActuatorsIO(self, self._plant, p, STATE_QOS, self._guard)
            if self._plant.actuation is not None
            else None
        )
        self._srv_reset = self.create_service(Trigger, '~/reset', self._on_reset)
        self._srv_pause = self.create_service(SetBool, '~/pause', self._on_pause)
        self._srv_timing = self.create_service(Trigger, '~/timing', self._on_timing)
        world = p['odom_frame'] if self._orbit is None else p['orbit_frame']
        self._messages = _StateMessages(self._plant, world, self._base_frame)
        try:  # the per-state messages as bytes: the same as the message objects, cheaper
            self._serialized = SerializedStates(
                self._plant, world, self._base_frame, serialize_message
            )
        except ValueError as err:  # CdrError included: message objects then
            self._serialized = None
            self.get_logger().info(f'state messages built as objects (slower): {err}')
        if self._actuators is not None:
            self._actuators.serialized = self._serialized
        self._target = None
        if self._plant.target is not None:
            from .sim_target import SimTargetIO

            self._target = SimTargetIO(
                self, self._plant, p, world, state_qos, STATE_QOS, self._guard
            )
        self._pub_orbit = self._pub_tf = None
        self._tf_note = None
        if self._orbit is not None:
            if p['orbit_topic']:
                from spart_interfaces.msg import Orbit

                self._pub_orbit = self.create_publisher(
                    Orbit, p['orbit_topic'], ROBOT_DESCRIPTION_QOS
                )
                self._pub_orbit.publish(orbit_message(Orbit, self._orbit, world))
            if p['publish_tf']:
                tf_type = tf_message_type()
                if tf_type is None:
                    self._tf_note = (
                        'publish_tf: tf2_msgs is not installed here: no /tf; the odometry '
                        f'({self._pub_odom.topic_name}) carries the same transform, {world!r} -> '
                        f'{self._base_frame!r}'
                    )
                else:
                    self._pub_tf = self.create_publisher(tf_type, '/tf', TF_QOS)
                    self._messages.add_tf(tf_type, self._target)

    def _hardware(self, plant, initial):
        """
        Return the URDF's ``<ros2_control>`` tags.

        Checked against the robot (URDFError naming the tag and joint: the node stops with exit
        code 2): their initial values start the plant (the parameters' take precedence); what this
        plant does not do is noted for the log.
        """
        hardware = ros2_control_from_urdf(self._urdf, plant.robot)
        positions, velocities = (
            initial_values(hardware, 'position'),
            initial_values(hardware, 'velocity'),
        )
        if positions or velocities:
            plant.initial = replace(
                initial,
                joint_positions={**positions, **initial.joint_positions},
                joint_velocities={**velocities, **initial.joint_velocities},
            )
            plant.reset()
        notes = self._hardware_notes
        followers = plant.robot.coordinates.followers
        # without any effort interface in the tags, the default joints are every independent one
        # (core.mimic.command_joints): those do get effort commands
        efforts = any('effort' in j.command_names for c in hardware for j in c.joints)
        if hardware and not efforts:
            notes.append(
                (
                    'warning',
                    'no joint of the <ros2_control> tags has an effort command interface: '
                    "spart_sim's default joints (parameter joints unset) are then every "
                    f'independent joint {list(plant.robot.coordinates.names)}, commanded by '
                    "effort, as spart_controller's default command_joints; the tags' other "
                    'command interfaces are not simulated',
                )
            )
        for c in hardware:
            notes.append(
                (
                    'info',
                    f'<ros2_control name="{c.name}"> ({c.type}) names the hardware plugin '
                    f'{c.plugin!r}: not loaded, spart_sim simulates its joints itself (their '
                    'command and state interfaces and initial values from the tag)',
                )
            )
            for j in c.joints:
                if efforts and j.command_names and 'effort' not in j.command_names:
                    notes.append(
                        (
                            'warning',
                            f'<ros2_control name="{c.name}">: joint {j.name!r} has command '
                            f'interfaces {j.command_names}: spart_sim takes effort commands only, '
                            'it gets none',
                        )
                    )
                elif 'effort' in j.command_names and (j.name in followers or j.mimic):
                    notes.append(
                        (
                            'warning',
                            f'<ros2_control name="{c.name}">: joint {j.name!r} has an effort '
                            'command interface but mimics another joint: it follows its leader '
                            'and is not commanded',
                        )
                    )
        return hardware

    def _log_start(self, p, origin, rate):
        """Log the loader's warnings, a base mode the URDF contradicts and the one-line summary."""
        plant = self._plant
        for note in plant.load_warnings:
            self.get_logger().warning(f'robot description: {note}')
        start = plant.joint_positions()
        for note in outside_position_limits(plant.robot, plant.joint_names, start):
            self.get_logger().warning(f'initial state: {note}')
        for level, note in self._hardware_notes:  # one call site per severity (rclpy)
            if level == 'warning':
                self.get_logger().warning(f'robot description: {note}')
            else:
                self.get_logger().info(f'robot description: {note}')
        if self._orbit is not None:
            self.get_logger().info(
                f'orbit: {self._orbit.describe()}; odometry and /tf in {p["orbit_frame"]!r}'
            )
        if self._tf_note:
            self.get_logger().warning(self._tf_note)
        if self._target is not None:
            self.get_logger().info(self._target.describe())
        if plant.base_hint and plant.base_hint != p['base']:
            self.get_logger().warning(
                f'the URDF joins {plant.base_link!r} to its world link with a {plant.base_hint} '
                f'joint, but the node simulates a {p["base"]} base (parameter base)'
            )
        timing = (
            f'lockstep: {self._lockstep_steps} step(s) per command'
            if self._lockstep
            else f'real time x{self._pacer.real_time_factor:g}, publishing at {rate:g} Hz'
        )
        services = [
            self.resolve_service_name(s.srv_name) for s in (self._srv_reset, self._srv_pause)
        ]
        self.get_logger().info(
            f'robot {plant.name!r} from {origin}: base {p["base"]} {self._base_frame!r}, '
            f'{plant.n_joints} joints {list(plant.joint_names)}, gravity '
            f'{plant.gravity.tolist()}, dt {plant.dt:g} s {plant.integrator}; {timing}; commands '
            f'on {self._sub_commands.topic_name} for joints {list(self._command.joints)}; outputs '
            f'{[pub.topic_name for pub in self._publishers_out()]}; services {services}'
        )
        if self._actuators is not None:
            a = plant.actuation.actuators
            subs, pubs = self._actuators.topics
            self.get_logger().info(
                f'base actuators from {a.source}: wheels {a.wheel_names}, thrusters '
                f'{a.thruster_names}; commands on {subs}; outputs {pubs}'
            )

    @staticmethod
    def _description_source(p):
        if p['robot_description']:
            if '<' not in p['robot_description']:
                raise ConfigError('robot_description is not URDF XML (no "<" in it)')
            return p['robot_description'], 'parameter robot_description'
        if p['urdf_path']:
            return p['urdf_path'], f'urdf_path {p["urdf_path"]!r}'
        raise ConfigError('no robot: set the robot_description (URDF text) or urdf_path parameter')

    def _publishers_out(self):
        pubs = [
            self._pub_clock,
            self._pub_joints,
            self._pub_odom,
            self._pub_imu,
            self._pub_description,
            self._pub_orbit,
            self._pub_tf,
        ]
        if self._target is not None:
            pubs += [self._target._pub, self._target._pub_attached, self._target._pub_impulse]
        return [pub for pub in pubs if pub is not None]

    def _guard(self, callback, what):
        """
        Return ``callback`` that logs (throttled) instead of raising.

        A timer or subscription must never stop the node.
        """
        return guarded(self, self._log_limiter, callback, what)

    def _error_throttled(self, key, text):
        # one call site per severity: rclpy refuses a severity change at a call site
        if self._log_limiter.allow(key, time.monotonic()):
            self.get_logger().error(text)

    def _advance(self, n):
        """
        Step the physics.

        True when there is a new state to publish (also after the plant diverged and went back to
        its initial state, which is logged).
        """
        try:
            return bool(self._plant.step(n))
        except SimulationDiverged as err:
            self._command.clear()
            self._error_throttled('diverged', f'{err} (log throttled)')
            return True

    # -- publishing -----------------------------------------------------------------------
    def _publish_state(self):
        """
        /clock, odometry, IMU, then joint_states, all stamped with the simulated time.

        The joint states last, because event-driven consumers (spart_controller, spart_dynamics)
        compute when they arrive, with the base state of the same stamp already received.
        """
        plant, msgs, ser = self._plant, self._messages, self._serialized
        stamp = msgs.stamp(plant.time_ns)
        # /clock and the IMU only when subscribed (~1 us to ask; a publication costs 40-70 us
        # of the middleware's even to one subscriber, and the IMU's readout ~20 more)
        clock = self._pub_clock is not None and self._pub_clock.get_subscription_count()
        imu = self._pub_imu.get_subscription_count()
        if ser is not None:  # serialized templates (spart_ros.nodes.state_messages)
            sec, nanosec = stamp.sec, stamp.nanosec
            if clock:
                self._pub_clock.publish(ser.clock_bytes(sec, nanosec))
            if self._pub_tf is None:
                self._pub_odom.publish(ser.odometry_bytes(sec, nanosec))
            else:  # the transform is taken from the odometry message
                self._pub_odom.publish(msgs.odometry(stamp))
            if self._target is not None:
                self._target.publish(plant.time_ns)
            if self._pub_tf is not None:
                self._pub_tf.publish(msgs.tf())
            if imu:
                self._pub_imu.publish(ser.imu_bytes(sec, nanosec))
            if self._actuators is not None:
                self._actuators.publish(stamp, self._base_frame)
            self._pub_joints.publish(ser.joint_state_bytes(sec, nanosec))
        else:
            if clock:
                msgs.clock.clock = stamp
                self._pub_clock.publish(msgs.clock)
            self._pub_odom.publish(msgs.odometry(stamp))
            if self._target is not None:
                self._target.publish(plant.time_ns)
            if self._pub_tf is not None:
                self._pub_tf.publish(msgs.tf())
            if imu:
                self._pub_imu.publish(msgs.imu(stamp))
            if self._actuators is not None:
                self._actuators.publish(stamp, self._base_frame)
            self._pub_joints.publish(msgs.joint_state(stamp))
        self._waiting = True
        self._last_publish = time.monotonic()
        over = self._velocity_limits.over(plant.joint_velocities())
        if len(over) and self._log_limiter.allow('velocity limit', self._last_publish):
            qd = plant.joint_velocities()
            self.get_logger().warning(
                '; '.join(self._velocity_limits.text(k, abs(qd[k])) for k in over)
                + f' at t = {plant.time:.3f} s (log throttled)'
            )

    def _real_time_tick(self, _timer_info=None):
        plant = self._plant
        if plant.paused:  # the pacer restarts on resume
            return
        n = self._pacer.steps_due(time.monotonic(), plant.time)
        if n and self._advance(n):
            self._publish_state()
            self._steps_taken += n
            self._steps_batched += n - 1
        if self._pacer.slipped > self._slip_reported + 0.1 and self._log_limiter.allow(
            'slip', time.monotonic()
        ):
            self._slip_reported = self._pacer.slipped
            self.get_logger().warning(
                f'the simulation cannot keep real time x{self._pacer.real_time_factor:g}: '
                f'{self._pacer.slipped:.3f} s of simulated time given up so far'
            )

    def _republish_if_waiting(self, _timer_info=None):
        if (
            self._waiting
            and not self._plant.paused
            and time.monotonic() - self._last_publish >= self._republish_period
        ):
            self._publish_state()

    def _on_state_subscriber(self, info):
        if (
            self._lockstep
            and info.current_count_change > 0
            and self._waiting
            and not self._plant.paused
        ):
            self._publish_state()

    # -- commands and services ------------------------------------------------------------
    def _on_command_raw(self, data):
        try:
            values = parse_float64_array(data)
        except CdrError:  # another encoding: rclpy's deserializer (slower, same values)
            values = deserialize_message(data, Float64MultiArray).data
        self._on_command(values)

    def _on_command(self, values):
        try:
            self._plant.hold_command(self._command, values)
            if self._plant.held:
                self._plant.hold(False)
                self.get_logger().info(
                    f'first command at t = {self._plant.time:.6f} s: the robot is released '
                    '(hold_until_command)'
                )
        except CommandRejected as err:  # logged; in lockstep the tick still happens
            self._error_throttled(
                ('command', err.kind),
                f'{self._sub_commands.topic_name}: {err}: dropped (keeping the previous '
                f'command {self._command.efforts.tolist()}; log throttled)',
            )
        self._waiting = False
        if self._lockstep and self._advance(self._lockstep_steps):
            self._publish_state()

    def _on_reset(self, request, response):
        try:
            self._plant.reset(new_time=True)  # the state after it gets a stamp of its own
            self._command.clear()
            if self._target is not None:
                self._target.reset()
            self._plant.hold(self._hold_until_command)
            self._pacer.restart(time.monotonic(), self._plant.time)
            # stamped like the first state after the reset, and sent before it (a controller may
            # still get them in either order: it matches the state to the stamp)
            if self._pub_reset is not None:
                self._pub_reset.publish(Header(stamp=self._messages.stamp(self._plant.time_ns)))
            self._publish_state()
            response.success = True
            response.message = f'reset to the initial state at t = {self._plant.time:.9f} s' + (
                ', held until the next command' if self._hold_until_command else ''
            )
        except SpartError as err:
            response.success = False
            response.message = str(err)
        self.get_logger().info(f'~/reset: {response.message}')
        return response

    def _on_timing(self, request, response):
        response.success = True
        response.message = json.dumps(
            {
                'time_ns': int(self._plant.time_ns),
                'steps': self._steps_taken,
                'batched': self._steps_batched,
                'slipped_s': float(self._pacer.slipped),
            }
        )
        return response

    def _on_pause(self, request, response):
        pause = bool(request.data)
        was = self._plant.paused
        self._plant.paused = pause
        if was and not pause:
            self._pacer.restart(time.monotonic(), self._plant.time)
            # lockstep: the state before the pause was answered already (a controller answers each
            # stamp once): advance one control period with the held command, so the loop goes on
            if self._lockstep and self._advance(self._lockstep_steps):
                self._publish_state()
        response.success = True
        response.message = (
            ('paused' if pause else 'running')
            + f' at t = {self._plant.time:.9f} s'
            + ('' if was != pause else ' (no change)')
        )
        self.get_logger().info(f'~/pause: {response.message}')
        return response


#: /tf: as tf2_ros' TransformBroadcaster publishes it
TF_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=100,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
)


def _orbit(p):
    """Return the CircularOrbit the orbit_* parameters ask for, or None (ConfigError if bad)."""
    altitude, mean_motion = p['orbit_altitude'], p['orbit_mean_motion']
    if altitude == 0.0 and mean_motion == 0.0:
        return None
    if altitude > 0.0 and mean_motion > 0.0:
        raise ConfigError(
            f'orbit_altitude ({altitude} m) and orbit_mean_motion ({mean_motion} rad/s) are both '
            'set: set one of them (the other 0)'
        )
    try:
        return CircularOrbit.make(
            altitude=altitude or None,
            mean_motion=mean_motion or None,
            mu=p['orbit_mu'],
            body_radius=p['orbit_body_radius'],
            model=p['orbit_model'],
        )
    except SpartError as err:
        raise ConfigError(str(err)) from None


def tf_message_type():
    """Return tf2_msgs' TFMessage class, or None where tf2_msgs is not installed."""
    try:
        from tf2_msgs.msg import TFMessage
    except ImportError:
        return None
    return TFMessage


def orbit_message(message_type, orbit, frame):
    """Return a spart_interfaces/Orbit of a CircularOrbit (``frame``: the LVLH frame's name)."""
    from ..core.orbit import CONVENTION

    msg = message_type()
    msg.header.frame_id = frame
    msg.mean_motion, msg.period = orbit.mean_motion, orbit.period
    msg.radius, msg.altitude, msg.speed = orbit.radius, orbit.altitude, orbit.speed
    msg.gravitational_parameter, msg.body_radius = orbit.mu, orbit.body_radius
    msg.model, msg.convention = orbit.model, CONVENTION
    return msg


class _StateMessages:
    """Preallocated output messages of one plant, filled at each publication."""

    def __init__(self, plant, odom_frame, base_frame):
        self.plant = plant
        self.clock = Clock()
        self.js = JointState()
        self.js.name = list(plant.sorted_joint_names)
        self.odom = Odometry()
        self.odom.header.frame_id, self.odom.child_frame_id = odom_frame, base_frame
        self.imu_msg = Imu()
        self.imu_msg.header.frame_id = base_frame
        self.tf_msg = None

    def add_tf(self, tf_type, target=None):
        """
        Publish the odometry's pose as a /tf transform too (a TFMessage class).

        ``target``: the sim's target (SimTargetIO): its last odometry's pose beside the base's.
        """
        from geometry_msgs.msg import TransformStamped

        t = TransformStamped()
        t.header.frame_id, t.child_frame_id = self.odom.header.frame_id, self.odom.child_frame_id
        self.tf_msg = tf_type(transforms=[t])
        self._tf_types, self._target = (tf_type, TransformStamped), target

    def tf(self):
        """Return the TFMessage of the last :meth:`odometry` (its stamp and pose)."""
        t = self.tf_msg.transforms[0]
        _transform(t, self.odom)
        target = getattr(self, '_target', None)
        if target is not None and target.last is not None:
            if len(self.tf_msg.transforms) == 1:  # the target's, from its first odometry on
                u = self._tf_types[1]()
                u.header.frame_id, u.child_frame_id = target.last.header.frame_id, target.frame
                self.tf_msg = self._tf_types[0](transforms=[t, u])
            _transform(self.tf_msg.transforms[1], target.last)
        return self.tf_msg

    @staticmethod
    def stamp(time_ns):
        return Time(sec=time_ns // 1_000_000_000, nanosec=time_ns % 1_000_000_000)

    def joint_state(self, stamp):
        js = self.plant.joint_state()
        msg = self.js
        msg.header.stamp = stamp
        msg.position, msg.velocity, msg.effort = (
            js.positions.tolist(),
            js.velocities.tolist(),
            js.efforts.tolist(),
        )
        return msg

    def odometry(self, stamp):
        o = self.plant.odometry()
        msg = self.odom
        msg.header.stamp = stamp
        pose, twist = msg.pose.pose, msg.twist.twist
        pose.position.x, pose.position.y, pose.position.z = o.position.tolist()
        q = pose.orientation
        q.x, q.y, q.z, q.w = o.orientation.tolist()
        twist.linear.x, twist.linear.y, twist.linear.z = o.linear.tolist()
        twist.angular.x, twist.angular.y, twist.angular.z = o.angular.tolist()
        return msg

    def imu(self, stamp):
        r = self.plant.imu()
        msg = self.imu_msg
        msg.header.stamp = stamp
        q = msg.orientation
        q.x, q.y, q.z, q.w = r.orientation.tolist()
        w, a = msg.angular_velocity, msg.linear_acceleration
        w.x, w.y, w.z = r.angular_velocity.tolist()
        a.x, a.y, a.z = r.linear_acceleration.tolist()
        return msg


def _transform(t, odom):
    """Set the TransformStamped ``t`` to the pose and stamp of the Odometry ``odom``."""
    pose = odom.pose.pose
    t.header.stamp = odom.header.stamp
    t.transform.translation.x = pose.position.x
    t.transform.translation.y = pose.position.y
    t.transform.translation.z = pose.position.z
    t.transform.rotation = pose.orientation


def main(args=None):
    """
    Entry point: run the node until SIGINT/SIGTERM.

    Returns the exit code (2: bad parameters).
    """
    return run_node(SimNode, args=args)


if __name__ == '__main__':
    sys.exit(main())
