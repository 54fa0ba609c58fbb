"""spart_controller: model-based joint effort commands for ros2_control-style effort controllers.

Thin rclpy adapter: the model and state inputs come from
:class:`spart_ros.nodes.robot_inputs.RobotInputs` (shared with spart_dynamics: same parameters,
topics and QoS), the control laws, trajectories and safety logic from :mod:`spart_ros.control`
(pure Python on the compiled fast path).

Per control tick (every new joint_states stamp, or at ``rate`` Hz): the reference of the
trajectory followed (or the position held since enabling), the law of ``mode``
(``computed_torque``, ``floating_base``, ``free_flying``, ``gravity_compensation``), efforts
clamped to ``effort_limits`` (default: the URDF ``<limit effort>``), published as
std_msgs/Float64MultiArray on ``commands_topic`` in the order of ``command_joints`` (the contract of
forward_command_controller with ``interface_name: effort`` and JointGroupEffortController).

Safety (:class:`spart_ros.control.safety.CommandGate`): joint states of a command joint (and a
floating base's odometry) older than ``state_timeout`` on the steady clock, a joint-state stamp
that stops advancing (event-driven: unstamped joint states), a rejected input (NaN, wrong
lengths), a law that fails, or a model change give ONE all-zero command, then silence until
fresh valid data (or, after a model change or ``~/enable`` false, until enabled again).
Commanding resumes on the reference followed when the robot is still within ``resume_tolerance``
of it, else by holding the position the robot has then (the trajectory is dropped: no jump).
A model the parameters cannot control (e.g. without the ``command_joints``) leaves the node
disabled, saying why in ``~/status``, until a usable one comes.  No callback or timer ever
raises: the node never exits on bad input.

Topics: in ``~/joint_trajectory`` (trajectory_msgs/JointTrajectory), ``~/base_pose``
(geometry_msgs/PoseStamped, free_flying); out ``commands_topic``, ``~/status``
(spart_interfaces/ControllerStatus), ``~/base_wrench`` (geometry_msgs/WrenchStamped,
free_flying), optionally ``joint_command_topic`` (sensor_msgs/JointState efforts).
Service ``~/enable`` (std_srvs/SetBool).  Parameters: PARAMETERS below and the shared
INPUT_PARAMETERS; every one with its default in config/controller_kuka_iiwa.yaml's comments.
"""
from collections import namedtuple
import math
import sys
import time
import traceback

import numpy as np
from geometry_msgs.msg import PoseStamped, QuaternionStamped, TwistStamped, WrenchStamped
from rclpy.clock import Clock, ClockType
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
from ..control.trajectory import JointTrajectory, Reference, ReferenceSchedule, check_position_limits, hold
from ..core.errors import InputError, SpartError
from .config import ConfigError
from .conversions import pose_to_matrix, quaternion, stamp_seconds, vector3
from .messages import set_vector3
from .robot_inputs import RobotInputs, declare_parameters, guarded
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
                       '[angular; linear velocity of the point]; header.frame_id world_frame (or empty) or the base '
                       'link (the twist in base link axes); other frames are rejected', True),
    'ee_pose_topic': ('~/ee_pose', 'space-robot modes: geometry_msgs/PoseStamped in: end-effector pose target; '
                      'header.frame_id world_frame (or empty) or the base link (a target fixed to the base); '
                      'other frames are rejected', True),
    'base_attitude_topic': ('~/base_attitude', 'desired_reaction: geometry_msgs/QuaternionStamped in: target '
                            'orientation of the base link in the world (header.frame_id world_frame or empty)', True),
    'command_joints': (Parameter.Type.STRING_ARRAY, "the effort controller's joints, in the order of its "
                       "commands; unset = the model's moving joints (mimic leaders) in the model's order: "
                       "depth-first from the base link, siblings in URDF file order (SPART's and MuJoCo's "
                       "order)", True),
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


def _per_command_joint(key, values, names):
    """ConfigError unless ``values`` has one value or one per command joint ``names``."""
    if len(values) not in (1, len(names)):
        raise ConfigError(f'{key}: expected one value or one per command joint ({len(names)}: {names}), '
                          f'got {len(values)}')


#: a trajectory message checked and read, not yet started: header stamp (s, 0 = start now),
#: model coordinate columns of its joint_names, times (k,) after the start, positions (k, m),
#: velocities and accelerations (k, m) or None
TrajectoryPlan = namedtuple('TrajectoryPlan', 'stamp names cols times positions velocities accelerations')


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
        names = list(p['command_joints'] or [])
        if len(set(names)) != len(names):
            raise ConfigError(f'command_joints lists a joint twice: {names}')
        if names:       # lengths that need no model: refused at start (exit code 2)
            lengths = dict(self._gains_params)
            if p['effort_limits']:
                lengths['effort_limits'] = list(p['effort_limits'])
            for key, values in lengths.items():
                _per_command_joint(key, values, names)
        # input_queue_depth 1: a controller acts on the NEWEST state; a queue of older ones (a busy
        # machine) would be answered one by one, each command applied later than the last
        self.inputs = RobotInputs(self, model_options=dict(jacobians=False), on_model=self._on_model,
                                  on_joint_state=self._on_joint_state, on_rejected=self._on_rejected,
                                  defaults=dict(input_queue_depth=1))
        if needs_floating != self.inputs.floating:
            raise ConfigError(f'mode {self._mode} needs base: {"floating" if needs_floating else "fixed"} '
                              f'(got base: {self.inputs.params["base"]})')

        self._law = None
        self._forget_joints()           # command joints, their indices, limits (none before a model)
        self._schedule = None           # ReferenceSchedule: the joint reference over control time
        self._pending_plan = None       # a TrajectoryPlan received before the hold: starts with it
        self._last_tick = None          # control time of the last command (s)
        self._last_stamp = None         # joint_states stamp of the last tick
        self._stamp_seen = None         # the last joint_states stamp, and when (steady clock) it
        self._stamp_steady = None       # changed: event-driven ticks need advancing stamps
        self._hold_pending = self._gate.enabled    # hold the position of the next fit state
        self._auto_enable = self._gate.enabled     # enabled: true applies to the first usable model
        self._starting = True           # parameter errors found while starting: exit code 2
        self._compute_time = 0.0
        self._trajectories = 0
        self._ee_twist = None           # (twist (6,), steady receipt time) of the space modes
        self._ee_pose = None            # (R (3, 3), p (3,)) end-effector target
        self._base_attitude = None      # R (3, 3) base link target (desired_reaction)
        self._space_out = None          # the last SpaceOutput

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
        # every timer guarded (a raising callback would end the executor, and the node); the
        # watchdog runs even when no joint_states arrive (they are what it watches), on the
        # steady clock (under use_sim_time the node clock stops with the simulator); if it
        # fails, it halts
        self._watchdog = self.create_timer(min(0.02, self._gate.state_timeout / 4),
                                           self._guarded(self._check_watchdog, 'watchdog', self._halt),
                                           clock=Clock(clock_type=ClockType.STEADY_TIME))
        self._timer = self.create_timer(1.0 / p['rate'], self._tick) if p['rate'] > 0 else None  # never raises
        self._status_timer = (self.create_timer(1.0 / p['status_rate'], self._guarded(self._publish_status, 'status'))
                              if p['status_rate'] > 0 else None)
        self.inputs.load_initial_model()
        self._starting = False
        self.get_logger().info(
            f'mode {self._mode}, base {self.inputs.params["base"]}, gravity {self.inputs.gravity.tolist()}, '
            f'commands on {self._pub.topic_name} '
            f'({"every joint_states" if not p["rate"] else str(p["rate"]) + " Hz"}), state_timeout '
            f'{self._gate.state_timeout:g} s, {"enabled" if self._gate.enabled else "disabled"}; inputs '
            f'{self.inputs.input_topics() + [self._sub_trajectory.topic_name]}'
            + ('' if self.inputs.model else '; waiting for a robot description'))

    def _guarded(self, callback, what, on_error=None):
        """A timer callback that never raises (robot_inputs.guarded, logged throttled); no
        arguments, so that rclpy passes no TimerInfo."""
        run = guarded(self, self.inputs.log_limiter, callback, what, on_error)
        return lambda: run()

    # -- model ----------------------------------------------------------------------------
    def _on_model(self, model):
        """A new model: stop (one zero command with the old joints, if commanding), rebuild the
        law; enabled again only on request, unless no model was controlled yet and ``enabled``
        is set.  A model the parameters cannot control: at start, the parameters are refused
        (exit code 2); at run time, disabled with the reason in ~/status until a usable model."""
        if self._law is not None:   # one zero command for the old joints, then nothing until enabled
            self._gate.disable('the robot model changed: enable again (~/enable) to command')
            self._tick_zero_if_pending()
        self._law = None
        self._schedule = self._pending_plan = None
        try:
            self._build(model)
        except Exception as err:  # noqa: BLE001 - at run time, never fatal: waits for another model
            self._forget_joints()
            if self._starting:
                raise
            text = str(err) if isinstance(err, SpartError) else f'unexpected {type(err).__name__}: {err}'
            self.get_logger().error(f'cannot control this model: {text}; waiting for a robot description it can '
                                    'control' + ('' if isinstance(err, SpartError) else '\n' + traceback.format_exc()))
            self._gate.disable(f'cannot control this model: {text}')
            return
        if self._auto_enable:
            self._auto_enable = False
            self._gate.enable()
            self._hold_pending = True

    def _forget_joints(self):
        """No command joints (no model, or one that cannot be controlled)."""
        self._names = []
        self._index = np.zeros(0, dtype=np.intp)
        self._limits = np.zeros(0)
        self._position_limits = (np.zeros(0), np.zeros(0))
        self._zeros = Float64MultiArray()
        self._efforts = np.zeros(0)
        self._error = (np.zeros(0), np.zeros(0))

    def _build(self, model):
        names = list(self._params['command_joints'] or model.q_names)
        index = {n: k for k, n in enumerate(model.q_names)}
        unknown = [n for n in names if n not in index]
        if unknown:
            raise ConfigError(f'command_joints {unknown} are not moving joints of the model {model.robot.name!r} '
                              f'({model.q_names}' + (f'; mimic joints {list(model.followers)} follow their '
                                                     'leaders' if model.followers else '') + ')')
        limits_by_name = {j.name: j.limits for j in model.robot.joints}
        limits = effort_limits(names, {j: lim.effort for j, lim in limits_by_name.items()},
                               self._params['effort_limits'] or ())
        g = self._gains_params
        n = model.n_q
        per = {}
        for key, values in g.items():   # per command joint -> per model coordinate (others: first value)
            _per_command_joint(key, values, names)
            full = np.full(n, values[0])
            if len(values) == len(names):
                full[[index[nm] for nm in names]] = values
            per[key] = full
        gains = Gains(n, per['kp'], per['kd'], per['ki'], per['integral_limit'])
        if self._space:
            law = self._space_mode(model)
            if law.interface == 'velocity':
                limits = np.full(len(names), np.inf)     # the law bounds the joint rates itself
        elif self._law_class is FreeFlying:
            law = FreeFlying(model.fast, gains, self._base_gains)
        else:
            law = self._law_class(model.fast, gains)
        self._names = names
        self._index = np.array([index[nm] for nm in names], dtype=np.intp)
        self._limits = limits
        self._position_limits = (np.array([limits_by_name[q].lower for q in model.q_names], dtype=float),
                                 np.array([limits_by_name[q].upper for q in model.q_names], dtype=float))
        self._zeros = Float64MultiArray(data=[0.0] * len(names))
        self._efforts = np.zeros(len(names))
        self._error = (np.zeros(len(names)), np.zeros(len(names)))
        self._law = law

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
        mode = SpaceMode(self._mode, model.fast, p['command_interface'], **options)
        for note in mode.notes:
            self.get_logger().warning(f'{self._mode}: {note}')
        return mode

    # -- enable / disable ------------------------------------------------------------------
    def _on_enable(self, req, res):
        try:
            self._enable(bool(req.data), res)
        except Exception as err:  # noqa: BLE001 - a service callback must never kill the node
            self.get_logger().error(f'~/enable: unexpected {type(err).__name__}: {err}\n{traceback.format_exc()}')
            self._halt('~/enable', err)
            res.success, res.message = False, f'unexpected {type(err).__name__}: {err} (commands halted)'
        return res

    def _enable(self, on, res):
        self._auto_enable = False       # the user decides from now on
        if on:
            if self._law is None:
                res.success, res.message = False, 'no controllable model yet: ' + (self.inputs.unavailable() or
                                                                                  self._gate.reason)
                return
            if self._gate.enable() or self._schedule is None:
                self._hold_pending = True          # hold the position of the next complete state (resets the law)
                if isinstance(self._law, FreeFlying):
                    self._law.clear_base_reference()    # and the base pose it has then
                self._ee_twist = self._ee_pose = self._base_attitude = None
            res.success, res.message = True, 'enabled: holding the current position until a trajectory comes'
        else:
            self._gate.disable()
            self._schedule = self._pending_plan = None
            self._tick_zero_if_pending()
            res.success, res.message = True, 'disabled: one zero command sent if one was applied'
        self.get_logger().info(res.message)

    def _tick_zero_if_pending(self):
        if self._gate.decide(None) == ZERO:
            self._publish_zero()

    # -- references ----------------------------------------------------------------------
    def _control_stamp(self):
        """(sec, nanosec) of the control clock: the last joint_states stamp (event-driven: the
        stamp of the state a command answers; a simulator's first state is stamped 0), or the
        node clock (``rate`` ticks)."""
        stamp = self.inputs.last_stamp
        if self._timer is None and stamp is not None:
            return stamp
        return divmod(self.get_clock().now().nanoseconds, 1_000_000_000)

    def _control_time(self):
        """The control clock in seconds (see :meth:`_control_stamp`)."""
        sec, nanosec = self._control_stamp()
        return sec + 1e-9 * nanosec

    def _on_trajectory(self, msg):
        """A trajectory: checked now (InputError naming the problem: refused, counted); started
        now, or at its future stamp, from the reference followed then; received before the
        hold is set (no command since enabling), it starts at the first command, on the
        control clock (its stamp 0 or in the past = then)."""
        if self._space:
            raise InputError(f'joint_trajectory: mode {self._mode} follows end-effector references '
                             f'({self._params["ee_twist_topic"]}, {self._params["ee_pose_topic"]}): trajectory ignored')
        if self._law is None or self.inputs.model is None:
            raise InputError('joint_trajectory: no controllable model yet: trajectory ignored')
        if not self._gate.enabled:
            raise InputError('joint_trajectory: the controller is disabled (~/enable): trajectory ignored')
        plan = self._plan(msg, self.inputs.model)
        if self._hold_pending or self._schedule is None:
            state = self.inputs.state()
            q = state.q if state is not None else np.zeros(self.inputs.model.n_q)
            self._trajectory_from(plan, 0.0, Reference(q, np.zeros_like(q), np.zeros_like(q)))   # checked now
            self._pending_plan = plan
            when = 'at the first command'
        else:
            when = f'at {self._start_trajectory(plan, self._control_time()):.9f} s (control time)'
        self._trajectories += 1
        self.get_logger().info(f'trajectory of {len(plan.times)} points for {plan.names} over {plan.times[-1]:g} s '
                               f'accepted: starts {when}')

    def _plan(self, msg, model):
        """The TrajectoryPlan of a JointTrajectory message (InputError naming the problem)."""
        index = {n: k for k, n in enumerate(model.q_names)}
        names = list(msg.joint_names)
        bad = [n for n in names if n not in index]
        if bad or len(set(names)) != len(names) or not names:
            raise InputError(f'joint_trajectory: joint_names {names} must be distinct moving joints of the model '
                             f'({model.q_names}); unknown: {bad}')
        cols = np.array([index[n] for n in names], dtype=np.intp)
        points = list(msg.points)
        skipped = int(bool(points) and _duration(points[0].time_from_start) <= 0)
        points = points[skipped:]        # a first point at time 0 is the current state (MoveIt's habit)
        if not points:
            raise InputError('joint_trajectory: no point with time_from_start > 0')
        m = len(names)

        def field(attr, required):
            rows = [getattr(pt, attr) for pt in points]
            if all(len(r) == 0 for r in rows) and not required:
                return None
            for j, r in enumerate(rows):
                if len(r) != m:
                    raise InputError(f'joint_trajectory: point {j + skipped} has {len(r)} {attr} for {m} '
                                     'joint_names')
            values = np.array(rows, dtype=float)
            if not np.all(np.isfinite(values)):
                raise InputError(f'joint_trajectory: {attr} contain NaN or infinity')
            return values
        positions = field('positions', True)
        lower, upper = self._position_limits
        check_position_limits(names, positions, lower[cols], upper[cols], first=skipped)
        return TrajectoryPlan(stamp_seconds(msg.header.stamp), names, cols, [_duration(pt.time_from_start)
                              for pt in points], positions, field('velocities', False), field('accelerations', False))

    def _trajectory_from(self, plan, start_time, current):
        """The JointTrajectory of ``plan`` starting at ``start_time`` from the reference
        ``current`` (the joints it does not name hold their reference position)."""
        k, n = len(plan.times), len(current.position)

        def full(rows, base):
            if rows is None:
                return None
            out = np.tile(base, (k, 1))
            out[:, plan.cols] = rows
            return out
        zeros = np.zeros(n)
        return JointTrajectory(start_time, current, plan.times, full(plan.positions, current.position),
                               full(plan.velocities, zeros), full(plan.accelerations, zeros))

    def _start_trajectory(self, plan, now):
        """Follow ``plan`` from now, or from its stamp when later, continuing the reference
        followed at that time (a running or a queued trajectory): no jump.  Returns the start."""
        start = max(now, plan.stamp) if plan.stamp else now
        self._schedule.replace(self._trajectory_from(plan, start, self._schedule.sample(start)))
        return start

    def _reference_frame(self, what, header, base=True):
        """'world' for header.frame_id = world_frame or empty, 'base' for the base link's frame
        (when ``base``); any other frame: InputError naming it (the message is not misread)."""
        frame = header.frame_id
        if frame in ('', self.inputs.world_frame):
            return 'world'
        model = self.inputs.model
        base_link = model.robot.base_link.name if model is not None else None
        if base and frame == base_link:
            return 'base'
        accepted = f'world_frame {self.inputs.world_frame!r} (or empty)' + (
            f' or the base link {base_link!r}' if base and base_link else '')
        raise InputError(f'{what}.header.frame_id {frame!r}: expected {accepted}; message ignored')

    def _on_ee_twist(self, msg):
        frame = self._reference_frame('ee_twist', msg.header)
        tw = msg.twist
        twist = np.concatenate([vector3('ee_twist.angular', tw.angular), vector3('ee_twist.linear', tw.linear)])
        self._ee_twist = (twist, time.monotonic(), frame)

    def _on_ee_pose(self, msg):
        frame = self._reference_frame('ee_pose', msg.header)
        R, p = pose_to_matrix('ee_pose.pose', msg.pose)
        self._ee_pose = (R, p, frame)

    def _on_base_attitude(self, msg):
        self._reference_frame('base_attitude', msg.header, base=False)
        self._base_attitude = quaternion('base_attitude.quaternion', msg.quaternion)

    def _space_references(self):
        """This tick's references; a twist older than reference_timeout counts as none (stop)."""
        twist, twist_frame = None, 'world'
        if self._ee_twist is not None and time.monotonic() - self._ee_twist[1] <= self._params['reference_timeout']:
            twist, _, twist_frame = self._ee_twist
        R, p, pose_frame = self._ee_pose if self._ee_pose is not None else (None, None, 'world')
        return SpaceReferences(twist, p, R, self._base_attitude, twist_frame, pose_frame)

    def _on_base_pose(self, msg):
        R_d, p_d = pose_to_matrix('base_pose.pose', msg.pose)
        if self._law is None:
            raise InputError('base_pose: no controllable model yet')
        self._law.set_base_reference(R_d, p_d)      # kept until enabled again (a halt keeps it)

    # -- control ticks --------------------------------------------------------------------
    def _on_joint_state(self, sec, nanosec):
        # the newest stamp (RobotInputs.last_stamp), not this message's: another source's
        # slightly older state updates its joints without a second command for an older time
        stamp = self.inputs.last_stamp
        if stamp != self._stamp_seen:       # the watchdog of event-driven ticks: stamps must advance
            self._stamp_seen, self._stamp_steady = stamp, time.monotonic()
        if self._timer is None:
            if stamp == self._last_stamp:
                if stamp == (0, 0) and self.inputs.once.allow('unstamped', 0.0):
                    self.get_logger().warning('joint_states stamped 0 again: an event-driven controller answers '
                                              'each new stamp once and halts (one zero command) when the stamp '
                                              'stops advancing; for unstamped joint states set rate > 0')
                return                      # a repeated stamp: already answered (lockstep plants)
            if self._tick():                # answered only if a command went out (else: again next time)
                self._last_stamp = stamp

    def _on_rejected(self, what, error):
        if what in ('joint_states', 'odometry', 'imu') and self._gate.reject(f'{what} rejected: {error}') == ZERO:
            self._publish_zero()

    def _input_times(self):
        """Steady-clock times of the inputs a command needs: each command joint's last state
        (NaN = never), the base state's (None: fixed base), the last change of the joint-state
        stamp (event-driven ticks; else None)."""
        inputs = self.inputs
        return (inputs.joints.received[self._index], inputs.odom_steady if inputs.floating else None,
                self._stamp_steady if self._timer is None else None)

    def _problem(self):
        why = self.inputs.unavailable()
        if why is not None:
            return why
        return self._gate.problem(time.monotonic(), *self._input_times())

    def _check_watchdog(self):
        if self._law is None or not self._gate.enabled or self._gate.halted:
            return
        problem = self._problem()
        if problem is not None and self._gate.decide(problem) == ZERO:
            self._publish_zero()
            hint = ('; the joint states are unstamped (stamp 0): set rate > 0' if self._stamp_seen == (0, 0)
                    and 'stamp has not advanced' in problem else '')
            self.inputs.warn_throttled('halt', f'commands stopped (one zero command sent): {problem}{hint}')

    def _halt(self, what, error):
        """A timer or service failed unexpectedly: halt (one zero command if commanding)."""
        if self._law is not None and self._gate.reject(f'{what} failed: {error}') == ZERO:
            self._publish_zero()

    def _tick(self):
        """One control tick; True if a command (or the zero command) was published.  Never
        raises: anything unexpected halts like a failing law."""
        try:
            return self._tick_once()
        except Exception as err:  # noqa: BLE001 - a tick must never kill the node: halt instead
            return self._law_failed(err)

    def _tick_once(self):
        law = self._law
        if law is None:
            return False
        gate = self._gate
        problem = self._problem()
        decision = gate.decide(problem)
        if decision == ZERO:
            self._publish_zero()
            self.inputs.warn_throttled('halt', f'commands stopped (one zero command sent): {problem or gate.reason}')
            return True
        if decision != COMMAND:
            return False
        t0 = time.perf_counter()
        state = self.inputs.state()
        now = self._control_time()
        resumed = self._resume(state, now) if gate.recovering else None
        if self._last_tick is not None and now < self._last_tick - gate.state_timeout and not self._hold_pending:
            self.inputs.warn_throttled('clock back', f'the control clock jumped back by {self._last_tick - now:.3f} s: '
                                       'holding the current position (the trajectory is dropped)')
            self._hold_pending = True
        if self._hold_pending or self._schedule is None:
            self._hold(state, now)
        if self._space:
            sent = self._space_tick(law, state, now, t0)
            if sent and resumed:
                self.inputs.warn_throttled('resume', resumed)
            return sent
        schedule = self._schedule
        ref = schedule.sample(now)
        schedule.advance(now)
        dt = 0.0 if self._last_tick is None else min(max(now - self._last_tick, 0.0), gate.state_timeout)
        self._last_tick = now
        out = law.compute(state.base, state.q, state.qd, ref, dt)     # errors: _tick halts
        efforts = clamp_efforts(out.efforts[self._index], self._limits)
        self._publish(efforts, out.base_torque, out.base_force)
        self._compute_time = time.perf_counter() - t0
        self._efforts = efforts
        self._error = ((ref.position - state.q)[self._index], (ref.velocity - state.qd)[self._index])
        if resumed:
            self.inputs.warn_throttled('resume', resumed)
        return True

    def _hold(self, state, now):
        """Hold the position of ``state`` from ``now`` (after enabling, or resuming far from the
        reference); a trajectory received before then starts here.  The base target of
        free_flying is kept (set to the pose at the next command after enabling)."""
        self._hold_pending = False
        self._schedule = ReferenceSchedule(hold(now, state.q))
        self._law.reset()
        plan, self._pending_plan = self._pending_plan, None
        if plan is not None:
            try:
                self._start_trajectory(plan, now)
            except SpartError as err:       # checked at receipt; refused here only if the start state differs
                self.inputs.counts['rejected'] += 1
                self.get_logger().error(f'joint_trajectory: {err} (holding the current position)')

    def _resume(self, state, now):
        """Commanding again after a halt (the motors were limp): go on with the reference if the
        robot is still within ``resume_tolerance`` of it, else hold where the robot is now rather
        than jump back onto the reference (the trajectory followed is dropped).  Returns the line
        to log once a command went out."""
        tolerance = self._params['resume_tolerance']
        base = ('; the base target is kept' if isinstance(self._law, FreeFlying)
                and self._law.base_reference is not None else '')
        if not self._space and self._schedule is not None:
            gap = float(np.abs(self._schedule.sample(now).position - state.q).max())
            if gap <= tolerance:
                self._law.reset()
                return (f'fresh valid state again: commanding resumes on the reference ({gap:.3g} from it, '
                        f'resume_tolerance {tolerance:g}){base}')
            why = f'{gap:.3g} from the reference (resume_tolerance {tolerance:g})'
        else:
            why = 'no joint reference to resume'
        self._hold_pending = True
        return f'fresh valid state again: commanding resumes, holding the current position ({why}){base}'

    def _law_failed(self, err):
        """A tick that cannot compute (a law failing on a non-finite or singular state, or an
        unexpected error): halt like a rejected input, ONE zero command if it was commanding,
        then silence until a tick computes again; True if the zero command went out."""
        unexpected = not isinstance(err, SpartError)
        text = f'unexpected {type(err).__name__}: {err}' if unexpected else str(err)
        zero = self._gate.reject(f'control law: {text}') == ZERO
        if zero:
            self._publish_zero()
        self.inputs.warn_throttled(('law', text), f'control law failed: {text}'
                                   + ('; one zero command sent' if zero else '; commands stay stopped')
                                   + ('\n' + traceback.format_exc() if unexpected else ''))
        return zero

    def _space_tick(self, mode, state, now, t0):
        """One tick of a space-robot mode: joint velocities or efforts from the end-effector references."""
        out = mode.compute(state.base, state.q, state.qd, self._space_references(), now)   # errors: _tick halts
        values = clamp_efforts(out.values[self._index], self._limits)
        self._publish(values)
        self._compute_time = time.perf_counter() - t0
        self._efforts = values
        self._space_out = out
        if not out.command.status.feasible:
            self.inputs.warn_throttled(('infeasible', out.command.status.message[:60]),
                                       f'{self._mode}: {out.command.status.message}')
        return True

    def _publish(self, efforts, base_torque=None, base_force=None):
        """Publish a command (and its copies); the gate counts it."""
        self._pub.publish(Float64MultiArray(data=efforts.tolist()))
        self._gate.commanded()
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
        msg.state_age = self._state_age()
        msg.compute_time = self._compute_time
        schedule = self._schedule
        msg.trajectory_remaining = max(0.0, schedule.end_time - self._control_time()) if schedule is not None else 0.0
        msg.joint_names = list(self._names)
        msg.position_error = self._error[0].tolist()
        msg.velocity_error = self._error[1].tolist()
        msg.efforts = self._efforts.tolist()
        msg.max_position_error = float(np.abs(self._error[0]).max()) if self._error[0].size else 0.0
        msg.commands, msg.zero_commands, msg.timeouts = g.commands, g.zeros, g.timeouts
        msg.rejected_messages = self.inputs.counts['rejected']
        msg.trajectories = self._trajectories
        out = self._space_out
        if out is not None:
            cmd, st = out.command, out.command.status
            msg.momentum, msg.momentum_about_com = st.momentum.tolist(), st.momentum_about_com.tolist()
            msg.base_angular_velocity = out.base_angular_velocity.tolist()      # base LINK frame, as odometry
            msg.task_twist = cmd.task_twist.tolist()
            msg.manipulability, msg.fixed_base_manipulability = st.manipulability, st.fixed_base_manipulability
            msg.dynamic_singularity = st.dynamic_singularity
            msg.joint_limit_distance = st.joint_limit_distance[self._index].tolist()
            msg.rate_scale, msg.task_error, msg.base_error, msg.damping = (st.rate_scale, st.task_error,
                                                                           st.base_error, st.damping)
            msg.feasible, msg.message = st.feasible, st.message
        self._pub_status.publish(msg)

    def _state_age(self):
        """Age (s, steady clock) of the oldest input a command needs (the watchdog's inputs:
        command joints, the odometry of a floating base, the last new joint-state stamp of
        event-driven ticks); -1 when one never came (or no command joints)."""
        joint_times, base_time, stamp_time = self._input_times()
        times = [float(t) for t in joint_times] + [t for t in (base_time, stamp_time) if t is not None]
        if not len(joint_times) or any(math.isnan(t) for t in times):
            return -1.0
        return time.monotonic() - min(times)


def _duration(d):
    return d.sec + 1e-9 * d.nanosec


def main(args=None):
    """Entry point: run the node until SIGINT/SIGTERM; returns the exit code (2: bad parameters)."""
    return run_node(ControllerNode, args=args)


if __name__ == '__main__':
    sys.exit(main())
