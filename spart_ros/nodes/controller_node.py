"""spart_controller: model-based joint effort commands for ros2_control-style effort controllers.

Thin rclpy adapter: the model and state inputs come from
:class:`spart_ros.nodes.robot_inputs.RobotInputs` (shared with spart_dynamics: same parameters,
topics and QoS), the control laws, trajectories and safety logic from :mod:`spart_ros.control`
(pure Python on the compiled fast path).

Per control tick (every new joint_states stamp, or at ``rate`` Hz): the reference of the
running trajectory (or the position held since enabling), the law of ``mode``
(``computed_torque``, ``floating_base``, ``free_flying``, ``gravity_compensation``), efforts
clamped to ``effort_limits`` (default: the URDF ``<limit effort>``), published as
std_msgs/Float64MultiArray on ``commands_topic`` in the order of ``command_joints`` (the contract of
forward_command_controller with ``interface_name: effort`` and JointGroupEffortController).

Safety (:class:`spart_ros.control.safety.CommandGate`): joint states of a command joint (and a
floating base's odometry) older than ``state_timeout`` on the steady clock, a rejected input
(NaN, wrong lengths), or a model change give ONE all-zero command, then silence until fresh
valid data (or, after a model change or ``~/enable`` false, until enabled again).  Commanding
resumes on the running reference when the robot is still within ``resume_tolerance`` of it,
else by holding the position the robot has then (the trajectory is dropped: no jump).

Topics: in ``~/joint_trajectory`` (trajectory_msgs/JointTrajectory), ``~/base_pose``
(geometry_msgs/PoseStamped, free_flying); out ``commands_topic``, ``~/status``
(spart_interfaces/ControllerStatus), ``~/base_wrench`` (geometry_msgs/WrenchStamped,
free_flying), optionally ``joint_command_topic`` (sensor_msgs/JointState efforts).
Service ``~/enable`` (std_srvs/SetBool).  Parameters: PARAMETERS below and the shared
INPUT_PARAMETERS; every one with its default in config/controller_kuka_iiwa.yaml's comments.
"""
import math
import sys
import time

import numpy as np
from geometry_msgs.msg import PoseStamped, QuaternionStamped, TwistStamped, WrenchStamped
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState
from spart_interfaces.msg import ControllerStatus
from builtin_interfaces.msg import Time
from std_msgs.msg import Float64MultiArray, Header
from std_srvs.srv import SetBool
from trajectory_msgs.msg import JointTrajectory as JointTrajectoryMsg

from ..control.effort_laws import ComputedTorque, FloatingBase, FreeFlying, Gains, GravityCompensation
from ..control.space_modes import INTERFACES, SPACE_LAWS, SpaceMode, SpaceReferences
from ..control.safety import COMMAND, ZERO, CommandGate, clamp_efforts, effort_limits
from ..control.trajectory import JointTrajectory, hold
from ..core.errors import InputError, SpartError
from .config import ConfigError
from .conversions import pose_to_matrix, quaternion, stamp_seconds, vector3
from .messages import set_vector3
from .robot_inputs import RobotInputs, declare_parameters
from .runner import EXECUTORS, run_node

NODE_NAME = 'spart_controller'

#: mode -> (law class, needs a floating base); the space-robot modes (spart_ros.control.space_modes)
#: follow an end-effector reference instead of a joint trajectory
MODES = {
    'computed_torque': (ComputedTorque, False),
    'floating_base': (FloatingBase, True),
    'free_flying': (FreeFlying, True),
    'gravity_compensation': (GravityCompensation, False),
    **{mode: (SpaceMode, True) for mode in SPACE_LAWS},
}

COMMAND_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.VOLATILE)   # as ros2_control's command subscribers
REFERENCE_QOS = COMMAND_QOS
STATUS_QOS = COMMAND_QOS

#: gains: one number for all joints or one per command joint (declared with dynamic typing)
GAINS = ('kp', 'kd', 'ki', 'integral_limit')

# name: (default, description, read_only); Parameter.Type = declared without a value;
# gains take one number for all joints or one per command joint (dynamic typing)
PARAMETERS = {
    'mode': ('computed_torque', "control law: 'computed_torque' (fixed base), 'floating_base' (free-floating base, "
             "Floating_ID), 'free_flying' (actuated base, base wrench out), 'gravity_compensation', or a space-robot "
             "mode following an end-effector reference: 'resolved_rate', 'resolved_rate_min_base_energy', "
             "'reactionless', 'desired_reaction'", True),
    'command_interface': ('effort', "space-robot modes: 'effort' (Floating_ID of the velocity reference's "
                          "accelerations) or 'velocity' (joint velocities, for a velocity command controller)", True),
    'ee_link': ('', 'space-robot modes: end-effector link; empty = the first leaf link of the tree', True),
    'ee_offset': ([0.0, 0.0, 0.0], 'space-robot modes: the end-effector point in the ee_link URDF frame [m]', True),
    'task_rows': (Parameter.Type.INTEGER_ARRAY, 'space-robot modes: task components (0..5 of [wx, wy, wz, vx, vy, '
                  'vz]); unset = all six', True),
    'damping': (0.05, 'space-robot modes: damping of the pseudo-inverse of J* inside the singular region', True),
    'singular_region': (0.01, 'space-robot modes: smallest singular value of J* below which damping starts', True),
    'max_joint_rates': (Parameter.Type.DOUBLE_ARRAY, 'space-robot modes: joint rate bounds [rad/s or m/s], one '
                        'per moving joint or one for all; unset = the URDF <limit velocity>', True),
    'velocity_gain': (10.0, 'space-robot modes, effort interface: joint rate loop gain [1/s]', True),
    'pose_gain': (1.0, 'space-robot modes: P gain of an end-effector pose target [1/s]', True),
    'attitude_gain': (1.0, 'desired_reaction: P gain of the base attitude target [1/s]', True),
    'base_rows': ([0, 1, 2], 'desired_reaction: base angular velocity components (base frame x, y, z) to control',
                  True),
    'priority': ('end_effector', "desired_reaction: the task met first: 'end_effector' or 'base'", True),
    'reactionless_attitude_only': (True, 'reactionless: keep only the base attitude undisturbed (false: the whole '
                                   'base motion)', True),
    'reference_timeout': (0.5, 's: an end-effector twist older than this (steady clock) counts as zero (stop)', True),
    'ee_twist_topic': ('~/ee_twist', 'space-robot modes: geometry_msgs/TwistStamped in: end-effector twist '
                       '[angular; linear velocity of the point], world frame', True),
    'ee_pose_topic': ('~/ee_pose', 'space-robot modes: geometry_msgs/PoseStamped in: end-effector pose target, '
                      'world frame', True),
    'base_attitude_topic': ('~/base_attitude', 'desired_reaction: geometry_msgs/QuaternionStamped in: target '
                            'orientation of the base link in the world', True),
    'command_joints': (Parameter.Type.STRING_ARRAY, "the effort controller's joints, in the order of its "
                       "commands; unset = the model's moving joints in model (URDF) order", True),
    'commands_topic': ('/effort_controller/commands', 'std_msgs/Float64MultiArray efforts out '
                       '(<controller_name>/commands of a ros2_control effort controller)', True),
    'kp': (100.0, 'position gain [1/s^2]: one value, or one per command joint', True),
    'kd': (20.0, 'velocity gain [1/s]: one value, or one per command joint', True),
    'ki': (0.0, 'integral gain [1/s^3]: one value, or one per command joint', True),
    'integral_limit': (0.1, 'bound of the integrated position error per joint [rad s or m s]: one value, or one '
                       'per command joint', True),
    'effort_limits': (Parameter.Type.DOUBLE_ARRAY, 'effort bound per command joint (or one for all) [N m or N]; '
                      'unset = the URDF <limit effort> (none = unbounded)', True),
    'state_timeout': (0.1, 's: joint states (and a floating base\'s odometry) older than this (steady clock) '
                      'stop the commands: one all-zero command, then none until fresh data', True),
    'rate': (0.0, 'control ticks per second on a timer; 0 = one tick per new joint_states stamp', True),
    'resume_tolerance': (0.05, 'after a halt (stale or invalid input), commanding resumes on the running reference '
                         'if every joint is within this of it [rad or m], else it holds the current position', True),
    'enabled': (True, 'start enabled (holding the position of the first complete state)', True),
    'base_gains': ([1.0, 2.0, 1.0, 2.0], 'free_flying: base PD gains [kp_position 1/s^2, kd_position 1/s, '
                   'kp_rotation 1/s^2, kd_rotation 1/s]', True),
    'trajectory_topic': ('~/joint_trajectory', 'trajectory_msgs/JointTrajectory reference in', True),
    'base_pose_topic': ('~/base_pose', 'free_flying: geometry_msgs/PoseStamped base reference in (world '
                        'frame; default: hold the pose at enable)', True),
    'base_wrench_topic': ('~/base_wrench', 'free_flying: geometry_msgs/WrenchStamped base wrench out '
                          '(at the base link origin, in the base link frame)', True),
    'joint_command_topic': ('', 'also publish the efforts as sensor_msgs/JointState (topic-based hardware '
                            'interfaces); "" = off', True),
    'status_topic': ('~/status', 'spart_interfaces/ControllerStatus out', True),
    'status_rate': (10.0, 'status messages per second (0 = off)', True),
    'executor': ('events', "rclpy executor: 'events' (EventsExecutor, lowest latency) or 'single_threaded'", True),
}


def _floats(name, value):
    """A number or a list of numbers -> list of floats (ConfigError naming the parameter)."""
    try:
        return [float(x) for x in (value if isinstance(value, (list, tuple)) else [value])]
    except (TypeError, ValueError):
        raise ConfigError(f'{name}: expected a number or a list of numbers, got {value!r}') from None


class ControllerNode(Node):
    """The spart_controller node (see the module docstring)."""

    NODE_NAME = NODE_NAME

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        p = self._params = declare_parameters(self, PARAMETERS, dynamic_typing=GAINS)
        if p['mode'] not in MODES:
            raise ConfigError(f'mode must be one of {sorted(MODES)}, got {p["mode"]!r}')
        if p['executor'] not in EXECUTORS:
            raise ConfigError(f'executor must be one of {EXECUTORS}, got {p["executor"]!r}')
        if not p['rate'] >= 0 or not math.isfinite(p['rate']):
            raise ConfigError(f'rate must be >= 0 (0 = on every joint_states), got {p["rate"]}')
        self._mode = p['mode']
        self._law_class, needs_floating = MODES[self._mode]
        self._space = self._law_class is SpaceMode
        if p['command_interface'] not in INTERFACES:
            raise ConfigError(f'command_interface must be one of {INTERFACES}, got {p["command_interface"]!r}')
        if p['command_interface'] == 'velocity' and not self._space:
            raise ConfigError(f'command_interface velocity needs a space-robot mode ({sorted(SPACE_LAWS)}); mode '
                              f'{self._mode} commands efforts')
        self._gate = CommandGate(float(p['state_timeout']), enabled=bool(p['enabled']))
        self._gains_params = {k: _floats(k, p[k]) for k in GAINS}
        self._base_gains = _floats('base_gains', p['base_gains'])
        # input_queue_depth 1: a controller acts on the NEWEST state; a queue of older ones (a busy
        # machine) would be answered one by one, each command applied later than the last
        self.inputs = RobotInputs(self, model_options=dict(jacobians=False), on_model=self._on_model,
                                  on_joint_state=self._on_joint_state, on_rejected=self._on_rejected,
                                  defaults=dict(input_queue_depth=1))
        if needs_floating != self.inputs.floating:
            raise ConfigError(f'mode {self._mode} needs base: {"floating" if needs_floating else "fixed"} '
                              f'(got base: {self.inputs.params["base"]})')

        self._law = None
        self._names = []                # command joints
        self._index = np.zeros(0, dtype=np.intp)   # their model coordinate indices
        self._limits = np.zeros(0)
        self._zeros = Float64MultiArray()
        self._trajectory = None
        self._previous = None           # the reference until a trajectory stamped in the future starts
        self._last_tick = None          # control time of the last command (s)
        self._last_stamp = None         # joint_states stamp of the last tick
        self._hold_pending = self._gate.enabled
        self._error = (np.zeros(0), np.zeros(0))
        self._efforts = np.zeros(0)
        self._compute_time = 0.0
        self._trajectories = 0
        self._ee_twist = None           # (twist (6,), steady receipt time) of the space modes
        self._ee_pose = None            # (R (3, 3), p (3,)) end-effector target
        self._base_attitude = None      # R (3, 3) base link target (desired_reaction)
        self._space_out = None          # the last SpaceMotionCommand

        self._pub = self.create_publisher(Float64MultiArray, p['commands_topic'], COMMAND_QOS)
        self._pub_joint_command = (self.create_publisher(JointState, p['joint_command_topic'], COMMAND_QOS)
                                   if p['joint_command_topic'] else None)
        self._pub_wrench = (self.create_publisher(WrenchStamped, p['base_wrench_topic'], COMMAND_QOS)
                            if self._mode == 'free_flying' else None)
        self._pub_status = self.create_publisher(ControllerStatus, p['status_topic'], STATUS_QOS)
        self._sub_trajectory = self.create_subscription(
            JointTrajectoryMsg, p['trajectory_topic'], self.inputs.guard(self._on_trajectory, 'joint_trajectory'),
            REFERENCE_QOS)
        self._sub_base_pose = (self.create_subscription(
            PoseStamped, p['base_pose_topic'], self.inputs.guard(self._on_base_pose, 'base_pose'), REFERENCE_QOS)
            if self._mode == 'free_flying' else None)
        if self._space:
            self._sub_ee_twist = self.create_subscription(
                TwistStamped, p['ee_twist_topic'], self.inputs.guard(self._on_ee_twist, 'ee_twist'), REFERENCE_QOS)
            self._sub_ee_pose = self.create_subscription(
                PoseStamped, p['ee_pose_topic'], self.inputs.guard(self._on_ee_pose, 'ee_pose'), REFERENCE_QOS)
            if self._mode == 'desired_reaction':
                self._sub_base_attitude = self.create_subscription(
                    QuaternionStamped, p['base_attitude_topic'],
                    self.inputs.guard(self._on_base_attitude, 'base_attitude'), REFERENCE_QOS)
        self._srv_enable = self.create_service(SetBool, '~/enable', self._on_enable)
        # the watchdog runs even when no joint_states arrive (they are what it watches)
        self._watchdog = self.create_timer(min(0.02, self._gate.state_timeout / 4), self._check_watchdog)
        self._timer = self.create_timer(1.0 / p['rate'], self._on_timer) if p['rate'] > 0 else None
        self._status_timer = (self.create_timer(1.0 / p['status_rate'], self._publish_status)
                              if p['status_rate'] > 0 else None)
        self.inputs.load_initial_model()
        self.get_logger().info(
            f'mode {self._mode}, base {self.inputs.params["base"]}, gravity {self.inputs.gravity.tolist()}, '
            f'commands on {self._pub.topic_name} '
            f'({"every joint_states" if not p["rate"] else str(p["rate"]) + " Hz"}), state_timeout '
            f'{self._gate.state_timeout:g} s, {"enabled" if self._gate.enabled else "disabled"}; inputs '
            f'{self.inputs.input_topics() + [self._sub_trajectory.topic_name]}'
            + ('' if self.inputs.model else '; waiting for a robot description'))

    # -- model ----------------------------------------------------------------------------
    def _on_model(self, model):
        """A new model: stop (one zero command with the old joints), rebuild the law; enabled
        again only on request, unless this is the first model and ``enabled`` is set."""
        first = self._law is None
        if not first:   # one zero command for the old joints, then nothing until enabled
            self._gate.disable('the robot model changed: enable again (~/enable) to command')
            self._tick_zero_if_pending()
        self._law = None
        try:
            self._build(model)
        except SpartError as err:
            self.get_logger().error(f'cannot control this model: {err}')
            self._gate.disable(f'cannot control this model: {err}')
            return
        if first and self._params['enabled']:
            self._hold_pending = True

    def _build(self, model):
        names = list(self._params['command_joints'] or model.q_names)
        index = {n: k for k, n in enumerate(model.q_names)}
        unknown = [n for n in names if n not in index]
        if unknown:
            raise ConfigError(f'command_joints {unknown} are not moving joints of the model '
                              f'({model.q_names}' + (f'; mimic joints {list(model.followers)} follow their '
                                                     'leaders' if model.followers else '') + ')')
        if len(set(names)) != len(names):
            raise ConfigError(f'command_joints lists a joint twice: {names}')
        limits_by_name = {j.name: j.limits.effort for j in model.robot.joints}
        self._limits = effort_limits(names, limits_by_name, self._params['effort_limits'] or ())
        g = self._gains_params
        n = model.n_q
        per = {}
        for key, values in g.items():   # per command joint -> per model coordinate (others: first value)
            if len(values) not in (1, len(names)):
                raise ConfigError(f'{key}: expected one value or one per command joint ({len(names)}: {names}), '
                                  f'got {len(values)}')
            full = np.full(n, values[0])
            if len(values) == len(names):
                full[[index[nm] for nm in names]] = values
            per[key] = full
        gains = Gains(n, per['kp'], per['kd'], per['ki'], per['integral_limit'])
        if self._space:
            self._law = self._space_mode(model)
            if self._law.interface == 'velocity':
                self._limits = np.full(len(names), np.inf)     # the law bounds the joint rates itself
        elif self._law_class is FreeFlying:
            self._law = FreeFlying(model.fast, gains, self._base_gains)
        else:
            self._law = self._law_class(model.fast, gains)
        self._names = names
        self._index = np.array([index[nm] for nm in names], dtype=np.intp)
        self._zeros = Float64MultiArray(data=[0.0] * len(names))
        self._efforts = np.zeros(len(names))
        self._error = (np.zeros(len(names)), np.zeros(len(names)))
        self._trajectory = None

    def _space_mode(self, model):
        """The SpaceMode of the parameters for ``model`` (InputError naming the parameter)."""
        from .model import leaf_links
        p = self._params
        options = dict(link=p['ee_link'] or leaf_links(model.robot)[0], offset=_floats('ee_offset', p['ee_offset']),
                       frame='link', rows=list(p['task_rows']) if p['task_rows'] else None,
                       damping=float(p['damping']), singular_region=float(p['singular_region']),
                       velocity_gain=float(p['velocity_gain']), pose_gain=float(p['pose_gain']))
        if p['max_joint_rates']:
            rates = _floats('max_joint_rates', p['max_joint_rates'])
            options['max_joint_rates'] = rates[0] if len(rates) == 1 else rates
        if self._mode == 'desired_reaction':
            options.update(attitude_gain=float(p['attitude_gain']), base_rows=list(p['base_rows']),
                           priority=p['priority'])
        elif self._mode == 'reactionless':
            options.update(attitude_only=bool(p['reactionless_attitude_only']))
        return SpaceMode(self._mode, model.fast, p['command_interface'], **options)

    # -- enable / disable ------------------------------------------------------------------
    def _on_enable(self, req, res):
        if req.data:
            if self._law is None:
                res.success, res.message = False, 'no controllable model yet: ' + (self.inputs.unavailable() or
                                                                                  self._gate.reason)
                return res
            if self._gate.enable() or self._trajectory is None:
                self._hold_pending = True      # hold the position of the next complete state
                self._law.reset()
                self._ee_twist = self._ee_pose = self._base_attitude = None
            res.success, res.message = True, 'enabled: holding the current position until a trajectory comes'
        else:
            self._gate.disable()
            self._trajectory = None
            self._tick_zero_if_pending()
            res.success, res.message = True, 'disabled: one zero command sent'
        self.get_logger().info(res.message)
        return res

    def _tick_zero_if_pending(self):
        if self._gate.decide(None) == ZERO:
            self._publish_zero()

    # -- references ----------------------------------------------------------------------
    def _control_stamp(self):
        """(sec, nanosec) of the control clock: the last joint_states stamp (event-driven: the
        stamp of the state a command answers), or the node clock (``rate`` ticks, or unstamped
        joint_states)."""
        stamp = self.inputs.last_stamp
        if self._timer is None and stamp is not None and stamp != (0, 0):
            return stamp
        return divmod(self.get_clock().now().nanoseconds, 1_000_000_000)

    def _control_time(self):
        """The control clock in seconds (see :meth:`_control_stamp`)."""
        sec, nanosec = self._control_stamp()
        return sec + 1e-9 * nanosec

    def _on_trajectory(self, msg):
        law, model = self._law, self.inputs.model
        if self._space:
            raise InputError(f'joint_trajectory: mode {self._mode} follows end-effector references '
                             f'({self._params["ee_twist_topic"]}, {self._params["ee_pose_topic"]}): trajectory ignored')
        if law is None or model is None:
            raise InputError('joint_trajectory: no controllable model yet: trajectory ignored')
        if not self._gate.enabled:
            raise InputError('joint_trajectory: the controller is disabled (~/enable): trajectory ignored')
        index = {n: k for k, n in enumerate(model.q_names)}
        names = list(msg.joint_names)
        bad = [n for n in names if n not in index]
        if bad or len(set(names)) != len(names) or not names:
            raise InputError(f'joint_trajectory: joint_names {names} must be distinct moving joints of the model '
                             f'({model.q_names}); unknown: {bad}')
        now = self._control_time()
        start = stamp_seconds(msg.header.stamp) or now      # stamp 0 (or in the past): start now
        current = self._reference(max(now, start))
        cols = np.array([index[n] for n in names], dtype=np.intp)
        points = list(msg.points)
        if points and _duration(points[0].time_from_start) <= 0:
            points = points[1:]          # a first point at time 0 is the current state (MoveIt's habit)
        if not points:
            raise InputError('joint_trajectory: no point with time_from_start > 0')
        k, m = len(points), len(names)

        def field(attr, required):
            rows = [getattr(pt, attr) for pt in points]
            if all(len(r) == 0 for r in rows) and not required:
                return None
            for j, r in enumerate(rows):
                if len(r) != m:
                    raise InputError(f'joint_trajectory: point {j} has {len(r)} {attr} for {m} joint_names')
            full = np.tile(current.position if attr == 'positions' else np.zeros(model.n_q), (k, 1))
            full[:, cols] = np.array(rows, dtype=float)
            return full
        positions = field('positions', True)
        velocities, accelerations = field('velocities', False), field('accelerations', False)
        times = [_duration(pt.time_from_start) for pt in points]
        trajectory = JointTrajectory(max(now, start), current, times, positions, velocities, accelerations)
        # a start in the future: the running reference goes on until then
        self._previous = self._trajectory if start > now else None
        self._trajectory = trajectory
        self._trajectories += 1
        self.get_logger().info(f'trajectory of {k} points for {names} over {times[-1]:g} s accepted')

    def _on_ee_twist(self, msg):
        tw = msg.twist
        twist = np.concatenate([vector3('ee_twist.angular', tw.angular), vector3('ee_twist.linear', tw.linear)])
        self._ee_twist = (twist, time.monotonic())

    def _on_ee_pose(self, msg):
        R, p = pose_to_matrix('ee_pose.pose', msg.pose)
        self._ee_pose = (R, p)

    def _on_base_attitude(self, msg):
        self._base_attitude = quaternion('base_attitude.quaternion', msg.quaternion)

    def _space_references(self):
        """This tick's references; a twist older than reference_timeout counts as none (stop)."""
        twist = None
        if self._ee_twist is not None and time.monotonic() - self._ee_twist[1] <= self._params['reference_timeout']:
            twist = self._ee_twist[0]
        R, p = self._ee_pose if self._ee_pose is not None else (None, None)
        return SpaceReferences(twist, p, R, self._base_attitude)

    def _on_base_pose(self, msg):
        R_d, p_d = pose_to_matrix('base_pose.pose', msg.pose)
        if self._law is None:
            raise InputError('base_pose: no controllable model yet')
        self._law.set_base_reference(R_d, p_d)

    def _reference(self, t):
        """The joint reference at control time ``t`` (holding the current position if none)."""
        if self._trajectory is None:
            state = self.inputs.state()
            self._trajectory = hold(t, state.q if state is not None else np.zeros(self.inputs.model.n_q))
        if self._previous is not None:
            if t < self._trajectory.start_time:
                return self._previous.sample(t)
            self._previous = None
        return self._trajectory.sample(t)

    # -- control ticks --------------------------------------------------------------------
    def _on_joint_state(self, sec, nanosec):
        if self._timer is None:
            if (sec, nanosec) == self._last_stamp:
                return                      # a repeated stamp: already answered (lockstep plants)
            self._last_stamp = (sec, nanosec)
            self._tick()

    def _on_timer(self):
        self._tick()

    def _on_rejected(self, what, error):
        if what in ('joint_states', 'odometry', 'imu') and self._gate.reject(f'{what} rejected: {error}') == ZERO:
            self._publish_zero()

    def _problem(self):
        inputs = self.inputs
        why = inputs.unavailable()
        if why is not None:
            return why
        base_time = inputs.odom_steady if inputs.floating else None
        return self._gate.problem(time.monotonic(), inputs.joints.received[self._index], base_time)

    def _check_watchdog(self):
        if self._law is None or not self._gate.enabled or self._gate.halted:
            return
        problem = self._problem()
        if problem is not None and self._gate.decide(problem) == ZERO:
            self._publish_zero()
            self.inputs.warn_throttled('halt', f'commands stopped (one zero command sent): {problem}')

    def _tick(self):
        law = self._law
        if law is None:
            return
        problem = self._problem()
        recovering = self._gate.halted and self._gate.commands > 0
        decision = self._gate.decide(problem)
        if decision == COMMAND and recovering:
            self._resume()
        if decision == ZERO:
            self._publish_zero()
            self.inputs.warn_throttled('halt', f'commands stopped (one zero command sent): {problem or self._gate.reason}')
            return
        if decision != COMMAND:
            return
        t0 = time.perf_counter()
        state = self.inputs.state()
        now = self._control_time()
        if self._hold_pending:
            self._hold_pending = False
            self._trajectory = hold(now, state.q)
            law.reset()
            if isinstance(law, FreeFlying):
                law.set_base_reference(state.base.R_b, state.base.p_b)
        if self._space:
            self._space_tick(law, state, now, t0)
            return
        ref = self._reference(now)
        dt = 0.0 if self._last_tick is None else min(max(now - self._last_tick, 0.0), self._gate.state_timeout)
        self._last_tick = now
        try:
            out = law.compute(state.base, state.q, state.qd, ref, dt)
            efforts = clamp_efforts(out.efforts[self._index], self._limits)
        except SpartError as err:
            self._law_failed(err)
            return
        self._publish(efforts, out.base_torque, out.base_force)
        self._compute_time = time.perf_counter() - t0
        self._efforts = efforts
        self._error = ((ref.position - state.q)[self._index], (ref.velocity - state.qd)[self._index])

    def _resume(self):
        """Commanding again after a halt (the motors were limp): go on with the reference if the
        robot is still within ``resume_tolerance`` of it, else hold where the robot is now rather
        than jump back onto the reference (the running trajectory is dropped)."""
        state = self.inputs.state()
        if not self._space and self._trajectory is not None and state is not None:
            gap = float(np.abs(self._reference(self._control_time()).position - state.q).max())
            if gap <= self._params['resume_tolerance']:
                self._law.reset()
                self.get_logger().warning(f'fresh valid state again: commanding resumes on the reference '
                                          f'({gap:.3g} from it, resume_tolerance {self._params["resume_tolerance"]:g})')
                return
            why = f'{gap:.3g} from the reference (resume_tolerance {self._params["resume_tolerance"]:g})'
        else:
            why = 'no joint reference to resume'
        self._hold_pending = True
        self._previous = None
        self.get_logger().warning(f'fresh valid state again: commanding resumes, holding the current position ({why})')

    def _law_failed(self, err):
        """A law that cannot compute (non-finite state, singular...): halt like a rejected input."""
        if self._gate.reject(f'control law: {err}') == ZERO:
            self._publish_zero()
        self.inputs.warn_throttled(('law', str(err)), f'control law failed: {err}: one zero command sent')

    def _space_tick(self, mode, state, now, t0):
        """One tick of a space-robot mode: joint velocities or efforts from the end-effector references."""
        try:
            out = mode.compute(state.base, state.q, state.qd, self._space_references(), now)
            values = clamp_efforts(out.values[self._index], self._limits)
        except SpartError as err:
            self._law_failed(err)
            return
        self._publish(values)
        self._compute_time = time.perf_counter() - t0
        self._efforts = values
        self._space_out = out.command
        if not out.command.status.feasible:
            self.inputs.warn_throttled(('infeasible', out.command.status.message[:60]),
                                       f'{self._mode}: {out.command.status.message}')

    def _publish(self, efforts, base_torque=None, base_force=None):
        self._pub.publish(Float64MultiArray(data=efforts.tolist()))
        stamp = None
        if self._pub_joint_command is not None:
            stamp = self._stamp()
            self._pub_joint_command.publish(JointState(header=Header(stamp=stamp), name=self._names,
                                                       effort=efforts.tolist()))
        if self._pub_wrench is not None and base_torque is not None:
            msg = WrenchStamped()
            msg.header.stamp = stamp or self._stamp()
            msg.header.frame_id = self.inputs.model.robot.base_link.name
            set_vector3(msg.wrench.torque, base_torque)
            set_vector3(msg.wrench.force, base_force)
            self._pub_wrench.publish(msg)

    def _stamp(self):
        """builtin_interfaces/Time of the control clock (the state's stamp: outputs pair with it,
        exactly, as integers)."""
        sec, nanosec = self._control_stamp()
        return Time(sec=int(sec), nanosec=int(nanosec))

    def _publish_zero(self):
        self._pub.publish(self._zeros)
        self._efforts = np.zeros(len(self._names))
        if self._pub_joint_command is not None:
            self._pub_joint_command.publish(JointState(header=Header(stamp=self.get_clock().now().to_msg()),
                                                       name=self._names, effort=[0.0] * len(self._names)))

    # -- status ---------------------------------------------------------------------------
    def _publish_status(self):
        g = self._gate
        msg = ControllerStatus(mode=self._mode, enabled=g.enabled, commanding=g.enabled and not g.halted
                               and self._law is not None)
        msg.header.stamp = self.get_clock().now().to_msg()
        msg.header.frame_id = self.inputs.world_frame
        msg.state = 'active' if msg.commanding else (g.reason or self.inputs.unavailable() or 'waiting')
        received = self.inputs.joints.received[self._index] if len(self._index) else np.array([])
        msg.state_age = (time.monotonic() - float(received.min())) if received.size and \
            not np.isnan(received).any() else -1.0
        msg.compute_time = self._compute_time
        traj = self._trajectory
        msg.trajectory_remaining = max(0.0, traj.end_time - self._control_time()) if traj is not None else 0.0
        msg.joint_names = list(self._names)
        msg.position_error = self._error[0].tolist()
        msg.velocity_error = self._error[1].tolist()
        msg.efforts = self._efforts.tolist()
        msg.max_position_error = float(np.abs(self._error[0]).max()) if self._error[0].size else 0.0
        msg.commands, msg.zero_commands, msg.timeouts = g.commands, g.zeros, g.timeouts
        msg.rejected_messages = self.inputs.counts['rejected']
        msg.trajectories = self._trajectories
        cmd = self._space_out
        if cmd is not None:
            st = cmd.status
            msg.momentum, msg.momentum_about_com = st.momentum.tolist(), st.momentum_about_com.tolist()
            msg.base_angular_velocity = st.base_angular_velocity.tolist()
            msg.task_twist = cmd.task_twist.tolist()
            msg.manipulability, msg.fixed_base_manipulability = st.manipulability, st.fixed_base_manipulability
            msg.dynamic_singularity = st.dynamic_singularity
            msg.joint_limit_distance = st.joint_limit_distance[self._index].tolist()
            msg.feasible, msg.message = st.feasible, st.message
        self._pub_status.publish(msg)


def _duration(d):
    return d.sec + 1e-9 * d.nanosec


def main(args=None):
    """Entry point: run the node until SIGINT/SIGTERM; returns the exit code (2: bad parameters)."""
    return run_node(ControllerNode, args=args)


if __name__ == '__main__':
    sys.exit(main())
