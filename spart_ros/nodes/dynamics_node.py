"""spart_dynamics: floating-base kinematics and dynamics of a URDF robot as a ROS 2 node.

Thin rclpy adapter: the computations live in :mod:`spart_ros.nodes.state` (pure Python,
compiled SPART fast path) and the message filling in :mod:`spart_ros.nodes.messages`.

Inputs
    robot description: std_msgs/String on ``robot_description`` (RELIABLE, TRANSIENT_LOCAL,
        depth 1, like robot_state_publisher), or the ``robot_description`` (URDF text) /
        ``urdf_path`` parameters (settable at run time).  Every new description rebuilds the
        model; a bad one is logged (naming the problem) and the previous model is kept.
    joint states: sensor_msgs/JointState on ``joint_states`` (BEST_EFFORT: accepts reliable
        and best-effort publishers), mapped by name, any order, subsets keep the last values,
        unknown joints ignored, missing velocities = 0 (warned once).
    base (``base: floating``): nav_msgs/Odometry on ``odom`` (pose of the URDF base link in
        the world, twist of the base link expressed in itself, REP 105) and optionally
        sensor_msgs/Imu on ``imu/data`` (``use_imu: true``): when fresh (stamp within
        ``imu_max_age`` of the joint state's) it overrides the base orientation and angular
        velocity; the IMU frame is the URDF link ``imu_link`` (or the messages' frame_id),
        rigidly attached to the base.  ``base: fixed``: pose from ``base_position`` /
        ``base_orientation`` (default identity), zero twist.

Outputs (stamped with the joint_states stamp, frame_id = ``world_frame``), one set per
joint_states message once every moving joint (and, floating, the odometry) was seen,
reduced by ``decimation`` / ``max_rate``:
    ``~/link_twists`` (spart_interfaces/LinkTwists), ``~/jacobians`` (Jacobians of
    ``jacobian_links`` at ``jacobian_offsets``), ``~/center_of_mass`` (CenterOfMass).
Services: ``~/forward_dynamics`` (ForwardDynamics), ``~/inverse_dynamics``
(InverseDynamics, ``floating_base`` = SPART Floating_ID).

Performance (1 kHz): joint_states are read serialized (``raw=True``, spart_ros.nodes.cdr) and the
outputs published as serialized templates (spart_ros.nodes.messages.SerializedOutputs): rclpy's
message conversions cost more than the dynamics. Executor: rclpy's EventsExecutor by default.

See README.md ("The dynamics node") and config/dynamics_node.yaml for every parameter.
Run: ``ros2 run spart_ros dynamics_node --ros-args --params-file config/dynamics_node.yaml``.
"""

import gc
import sys
import time
import traceback

import numpy as np
import rclpy
from builtin_interfaces.msg import Time
from rclpy.exceptions import ParameterUninitializedException
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.task import Future
from rclpy.serialization import deserialize_message, serialize_message
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu, JointState
from spart_interfaces.msg import CenterOfMass, Jacobians, LinkTwists
from spart_interfaces.srv import ForwardDynamics, InverseDynamics
from std_msgs.msg import String

from ..core.errors import InputError, ModelError, SpartError
from . import state as st
from .cdr import CdrError, parse_joint_state
from .messages import OutputMessages, SerializedOutputs, set_vector3

NODE_NAME = 'spart_dynamics'

#: robot_state_publisher's robot_description: latched.
ROBOT_DESCRIPTION_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1,
                                   reliability=ReliabilityPolicy.RELIABLE,
                                   durability=DurabilityPolicy.TRANSIENT_LOCAL)


def sensor_qos(depth):
    """Inputs (joint_states, odometry, IMU): BEST_EFFORT matches both reliable and
    best-effort publishers; VOLATILE; KEEP_LAST ``depth``."""
    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=depth,
                      reliability=ReliabilityPolicy.BEST_EFFORT,
                      durability=DurabilityPolicy.VOLATILE)


def output_qos(depth):
    """Outputs: RELIABLE, VOLATILE, KEEP_LAST ``depth`` (best-effort subscribers match too)."""
    return QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=depth,
                      reliability=ReliabilityPolicy.RELIABLE,
                      durability=DurabilityPolicy.VOLATILE)


# name: (default, description, read_only); a Parameter.Type default = declared without value
PARAMETERS = {
    'robot_description': ('', 'URDF text of the robot (takes precedence over urdf_path); '
                          'settable at run time', False),
    'urdf_path': ('', 'Path of a URDF file, used when robot_description is empty; settable at run time', False),
    'robot_description_topic': ('robot_description', 'std_msgs/String topic with the URDF '
                                '(RELIABLE + TRANSIENT_LOCAL); empty = do not subscribe', True),
    'joint_states_topic': ('joint_states', 'sensor_msgs/JointState input topic', True),
    'base': ('fixed', "'fixed' (base pose parameters) or 'floating' (odometry, optional IMU)", True),
    'base_position': ([0.0, 0.0, 0.0], 'fixed base: position [x, y, z] of the URDF base link '
                      'in world_frame [m]', True),
    'base_orientation': ([0.0, 0.0, 0.0, 1.0], 'fixed base: orientation (x, y, z, w) of the URDF '
                         'base link in world_frame', True),
    'odometry_topic': ('odom', 'floating base: nav_msgs/Odometry topic (pose of the URDF base link '
                       'in the world; twist in the base link frame, REP 105)', True),
    'use_imu': (False, 'floating base: let a fresh sensor_msgs/Imu override the base orientation '
                'and angular velocity', True),
    'imu_topic': ('imu/data', 'sensor_msgs/Imu topic (used when use_imu is true)', True),
    'imu_link': ('', 'URDF link of the IMU frame, rigidly attached to the base; empty = the '
                 "IMU messages' header.frame_id", True),
    'imu_max_age': (0.1, 'an IMU sample is fresh when its stamp is within this many seconds of '
                    "the joint state's stamp", True),
    'world_frame': ('world', 'frame_id of the outputs (the odometry frame for a floating base)', True),
    'jacobian_links': (Parameter.Type.STRING_ARRAY, 'links whose Jacobians are published on '
                       '~/jacobians; unset = the leaf links of the tree', True),
    'jacobian_offsets': (Parameter.Type.DOUBLE_ARRAY, 'point of each Jacobian, flattened '
                         '[x, y, z, ...] (3 per link of jacobian_links); unset = zero', True),
    'jacobian_point_frame': ('link', "frame of jacobian_offsets: 'link' (URDF link frame, from "
                             "its origin) or 'com' (link CoM frame, from the CoM, SPART)", True),
    'jacobian_base_columns': ('ros', "base DoF columns of the Jacobians: 'ros' (base link twist "
                              "in the base link frame, like nav_msgs/Odometry) or 'spart' (u0)", True),
    'link_twists_topic': ('~/link_twists', 'spart_interfaces/LinkTwists output topic', True),
    'jacobians_topic': ('~/jacobians', 'spart_interfaces/Jacobians output topic', True),
    'center_of_mass_topic': ('~/center_of_mass', 'spart_interfaces/CenterOfMass output topic', True),
    'publish_link_twists': (True, 'publish ~/link_twists', True),
    'publish_jacobians': (True, 'publish ~/jacobians', True),
    'publish_center_of_mass': (True, 'publish ~/center_of_mass', True),
    'decimation': (1, 'publish one output set every N joint_states messages', True),
    'max_rate': (0.0, 'at most this many output sets per second (0 = no limit)', True),
    'input_queue_depth': (10, 'KEEP_LAST depth of the joint_states/odometry/IMU subscriptions', True),
    'output_queue_depth': (10, 'KEEP_LAST depth of the output publishers', True),
    'executor': ('events', "rclpy executor: 'events' (rclpy.experimental.EventsExecutor, lowest latency) "
                 "or 'single_threaded' (SingleThreadedExecutor)", True),
    'timing_log_period': (0.0, 'log the joint_states callback duration (p50, p99, max) every this many seconds '
                          '(0 = off)', True),
    'serialized_outputs': (True, 'publish the outputs as serialized bytes written into per-model templates '
                           '(same messages, much cheaper); false = rclpy message objects', True),
    'forward_dynamics_service': ('~/forward_dynamics', 'spart_interfaces/ForwardDynamics service', True),
    'inverse_dynamics_service': ('~/inverse_dynamics', 'spart_interfaces/InverseDynamics service', True),
}


class DynamicsNode(Node):
    """The spart_dynamics node (see the module docstring)."""

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        for name, (default, description, read_only) in PARAMETERS.items():
            self.declare_parameter(name, default, ParameterDescriptor(description=description,
                                                                      read_only=read_only))
        p = {name: self._value(name) for name in PARAMETERS}
        self._params = p
        self._log_limiter = st.LogLimiter(5.0)
        self._once = st.LogLimiter(None)

        self._config = st.ModelConfig(
            base=p['base'], jacobian_links=list(p['jacobian_links'] or []),
            jacobian_offsets=[float(x) for x in (p['jacobian_offsets'] or [])],
            jacobian_point_frame=p['jacobian_point_frame'], jacobian_base_columns=p['jacobian_base_columns'],
            imu_link=p['imu_link'] if (p['base'] == 'floating' and p['use_imu']) else '').check()
        if p['executor'] not in ('events', 'single_threaded'):
            raise st.ConfigError(f"executor must be 'events' or 'single_threaded', got {p['executor']!r}")
        self._floating = p['base'] == 'floating'
        self._world_frame = p['world_frame']
        self._decimator = st.Decimator(p['decimation'], p['max_rate'])
        self._fixed_base = self._fixed_base_state(p['base_position'], p['base_orientation'])
        self._estimator = st.FloatingBaseEstimator(p['imu_max_age'])
        self._use_imu = self._floating and bool(p['use_imu'])
        self._timing = CallbackTiming(float(p['timing_log_period'])) if p['timing_log_period'] > 0 else None

        self._model = None
        self._description = None
        self._mapper = st.JointStateMapper([])
        self._pending_joints = {}          # joint states received before any model
        self._out = None
        self._serialized = None
        self._last_stamp = None            # stamp (sec, nanosec) of the last joint state

        in_qos, out_qos = sensor_qos(int(p['input_queue_depth'])), output_qos(int(p['output_queue_depth']))
        self._pub_twists = (self.create_publisher(LinkTwists, p['link_twists_topic'], out_qos)
                            if p['publish_link_twists'] else None)
        self._pub_jacobians = (self.create_publisher(Jacobians, p['jacobians_topic'], out_qos)
                               if p['publish_jacobians'] else None)
        self._pub_com = (self.create_publisher(CenterOfMass, p['center_of_mass_topic'], out_qos)
                         if p['publish_center_of_mass'] else None)

        # raw=True: the callback gets the serialized message (see spart_ros.nodes.cdr)
        self._sub_joints = self.create_subscription(JointState, p['joint_states_topic'],
                                                    self._guard(self._on_joint_states, 'joint_states'), in_qos,
                                                    raw=True)
        self._sub_odom = self._sub_imu = self._sub_description = None
        if self._floating:
            self._sub_odom = self.create_subscription(Odometry, p['odometry_topic'],
                                                      self._guard(self._on_odometry, 'odometry'), in_qos)
            if self._use_imu:
                self._sub_imu = self.create_subscription(Imu, p['imu_topic'], self._guard(self._on_imu, 'imu'),
                                                         in_qos)
        if p['robot_description_topic']:
            self._sub_description = self.create_subscription(
                String, p['robot_description_topic'], self._guard(self._on_description, 'robot_description'),
                ROBOT_DESCRIPTION_QOS)
        self._srv_fd = self.create_service(ForwardDynamics, p['forward_dynamics_service'], self._forward_dynamics)
        self._srv_id = self.create_service(InverseDynamics, p['inverse_dynamics_service'], self._inverse_dynamics)

        if p['robot_description']:
            self._load_model(p['robot_description'], 'parameter robot_description')
        elif p['urdf_path']:
            self._load_model(p['urdf_path'], f'urdf_path {p["urdf_path"]!r}', path=True)
        self.add_on_set_parameters_callback(self._on_set_parameters)

        inputs = [self._sub_joints.topic_name]
        inputs += [s.topic_name for s in (self._sub_odom, self._sub_imu, self._sub_description) if s]
        outputs = [pub.topic_name for pub in (self._pub_twists, self._pub_jacobians, self._pub_com) if pub]
        self.get_logger().info(
            f'base {p["base"]}, world frame {self._world_frame!r}; inputs {inputs}; outputs {outputs} '
            f'({"serialized templates" if p["serialized_outputs"] else "message objects"}, executor {p["executor"]}); '
            f'services {[self.resolve_service_name(s.srv_name) for s in (self._srv_fd, self._srv_id)]}'
            + ('' if self._model else '; waiting for a robot description'))

    # -- plumbing -------------------------------------------------------------------------
    def _value(self, name):
        """A parameter's value; None for one declared without a default and not set."""
        try:
            return self.get_parameter(name).value
        except ParameterUninitializedException:
            return None

    def _log_error(self, key, text):
        if self._log_limiter.allow(key, time.monotonic()):
            self.get_logger().error(text)

    def _guard(self, callback, what):
        """Wrap a subscription callback: SpartError -> error log (throttled per message
        text); any other exception -> error log with the traceback.  Never raises."""
        def wrapped(msg):
            try:
                callback(msg)
            except SpartError as err:
                self._log_error((what, str(err)), f'{what}: {err}')
            except Exception as err:  # noqa: BLE001 - a callback must never kill the node
                self._log_error((what, type(err).__name__, str(err)),
                                f'{what}: unexpected {type(err).__name__}: {err}\n{traceback.format_exc()}')
        return wrapped

    def _fixed_base_state(self, position, orientation):
        if len(position) != 3 or len(orientation) != 4:
            raise st.ConfigError(f'base_position needs 3 numbers and base_orientation 4 (x, y, z, w); got '
                                 f'{list(position)} and {list(orientation)}')
        R = st.quaternion('base_orientation', _Quat(*orientation))
        p = st._finite('base_position', position)
        return st.BaseLinkState(R, p, np.zeros(3), np.zeros(3))

    # -- model ----------------------------------------------------------------------------
    def _load_model(self, source, origin, path=False):
        """Build and install a model; on failure log and keep the previous one.
        Returns (success, message)."""
        keep = 'keeping the previous model' if self._model else 'no model loaded yet'
        try:
            if not path and '<' not in source:
                raise ModelError('the robot description is not URDF XML (no "<" in it)')
            model = st.Model.from_urdf(source, self._config)
        except SpartError as err:
            self.get_logger().error(f'robot description from {origin} rejected: {err} ({keep})')
            return False, str(err)
        except Exception as err:  # noqa: BLE001
            self.get_logger().error(f'robot description from {origin} rejected: unexpected '
                                    f'{type(err).__name__}: {err} ({keep})\n{traceback.format_exc()}')
            return False, f'{type(err).__name__}: {err}'
        mapper = st.JointStateMapper(model.q_names, previous=self._mapper)
        if self._pending_joints:
            names = [n for n in self._pending_joints if n in mapper.index]
            if names:
                mapper.update(names, [self._pending_joints[n][0] for n in names],
                              [self._pending_joints[n][1] for n in names])
            self._pending_joints.clear()
        self._model, self._mapper = model, mapper
        self._out = OutputMessages(model, self._world_frame)
        self._serialized = None
        if self._params['serialized_outputs']:
            try:
                self._serialized = SerializedOutputs(OutputMessages(model, self._world_frame), serialize_message)
            except ValueError as err:   # CdrError included: publish message objects instead
                self.get_logger().warning(f'serialized outputs unavailable ({err}); publishing message objects')
        self._description = source
        self.get_logger().info(f'{model.summary()} (from {origin})')
        _freeze_heap()
        return True, 'ok'

    def _on_description(self, msg):
        if msg.data == self._description:
            return
        self._load_model(msg.data, f'topic {self._sub_description.topic_name}')

    def _on_set_parameters(self, params):
        for param in params:
            if param.name in ('robot_description', 'urdf_path') and param.value:
                is_path = param.name == 'urdf_path'
                ok, message = self._load_model(param.value, f'parameter {param.name}', path=is_path)
                if not ok:
                    return SetParametersResult(successful=False, reason=message)
        return SetParametersResult(successful=True)

    # -- inputs ---------------------------------------------------------------------------
    def _on_joint_states(self, data):
        if self._timing is not None:
            t0 = time.perf_counter()
            self._on_joint_states_raw(data)
            self._timing.add(time.perf_counter() - t0, self.get_logger())
        else:
            self._on_joint_states_raw(data)

    def _on_joint_states_raw(self, data):
        try:
            sec, nanosec, names, positions, velocities = parse_joint_state(data)
        except CdrError:        # another encoding: rclpy's deserializer (slower, same result)
            msg = deserialize_message(data, JointState)
            sec, nanosec, names = msg.header.stamp.sec, msg.header.stamp.nanosec, tuple(msg.name)
            positions, velocities = msg.position, msg.velocity
        self._on_joint_state(sec, nanosec, names, positions, velocities)

    def _on_joint_state(self, sec, nanosec, names, positions, velocities):
        model = self._model
        if model is None:
            if len(positions) == len(names):
                vel = velocities if len(velocities) == len(names) else [0.0] * len(names)
                for name, q, v in zip(names, positions, vel):
                    self._pending_joints[name] = (float(q), float(v))
            return
        update = self._mapper.update(names, positions, velocities)
        if update.missing_velocities and self._once.allow('no velocities', 0.0):
            self.get_logger().warning('joint_states without velocities: their joint velocities count as zero '
                                      '(warned once)')
        if update.unknown and self._once.allow(('unknown', update.unknown), 0.0):
            self.get_logger().info(f'ignoring joints not in the model: {list(update.unknown)}')
        self._last_stamp = (sec, nanosec)
        if not self._mapper.ready:
            if self._log_limiter.allow('waiting joints', time.monotonic()):
                self.get_logger().info(f'waiting for joint states of {self._mapper.missing()}')
            return
        base = self._base_state(self._last_stamp)
        if base is None:
            if self._log_limiter.allow('waiting odometry', time.monotonic()):
                self.get_logger().info(f'waiting for odometry on {self._sub_odom.topic_name}')
            return
        if not self._decimator(time.monotonic()):
            return
        self._publish(model, base, sec, nanosec)

    def _base_state(self, stamp):
        """Base state for a joint state stamped ``stamp`` = (sec, nanosec)."""
        if not self._floating:
            return self._fixed_base
        return self._estimator.state(stamp[0] + 1e-9 * stamp[1])

    def _publish(self, model, base, sec, nanosec):
        out = model.outputs(base, self._mapper.positions, self._mapper.velocities)
        ser = self._serialized
        if ser is not None:     # serialized templates: same bytes, a fraction of the cost
            # an output nobody subscribes to is not filled (1 us to ask, ~10 us saved)
            pub = self._pub_jacobians
            if pub is not None and pub.get_subscription_count():
                pub.publish(ser.jacobians_bytes(sec, nanosec, out.jacobians, out.points))
            pub = self._pub_twists
            if pub is not None and pub.get_subscription_count():
                pub.publish(ser.link_twists_bytes(sec, nanosec, out.rL, out.tL))
            pub = self._pub_com
            if pub is not None and pub.get_subscription_count():
                pub.publish(ser.center_of_mass_bytes(sec, nanosec, out.com))
            return
        msgs = self._out
        stamp = Time(sec=sec, nanosec=nanosec)
        if self._pub_jacobians is not None:
            self._pub_jacobians.publish(msgs.fill_jacobians(stamp, out.jacobians, out.points))
        if self._pub_twists is not None:
            self._pub_twists.publish(msgs.fill_link_twists(stamp, out.rL, out.tL))
        if self._pub_com is not None:
            self._pub_com.publish(msgs.fill_center_of_mass(stamp, out.com))

    def _on_odometry(self, msg):
        R_b, p_b = st.pose_to_matrix('odometry pose', msg.pose.pose)
        v_b = st.vector3('odometry twist linear', msg.twist.twist.linear)
        w_b = st.vector3('odometry twist angular', msg.twist.twist.angular)
        model = self._model
        if model is not None and msg.child_frame_id and msg.child_frame_id != model.robot.base_link.name \
                and self._once.allow(('odom child', msg.child_frame_id), 0.0):
            self.get_logger().warning(
                f'odometry child_frame_id {msg.child_frame_id!r} is not the URDF base link '
                f'{model.robot.base_link.name!r}: its pose and twist are used as the base link\'s (warned once)')
        if msg.header.frame_id and msg.header.frame_id != self._world_frame \
                and self._once.allow(('odom frame', msg.header.frame_id), 0.0):
            self.get_logger().warning(f'odometry frame_id {msg.header.frame_id!r} differs from world_frame '
                                      f'{self._world_frame!r} (warned once)')
        self._estimator.set_odometry(R_b, p_b, v_b, w_b)

    def _on_imu(self, msg):
        model = self._model
        if model is None:
            return
        frame = self._config.imu_link or msg.header.frame_id
        if not frame:
            raise InputError('IMU message without header.frame_id and no imu_link parameter')
        R_b_imu = model.imu_rotation(frame)
        has_orientation = msg.orientation_covariance[0] != -1.0
        has_rate = msg.angular_velocity_covariance[0] != -1.0
        R_w_imu = st.quaternion('IMU orientation', msg.orientation) if has_orientation else None
        w_imu = st.vector3('IMU angular_velocity', msg.angular_velocity) if has_rate else None
        R_b, w_b = st.imu_to_base(R_b_imu, R_w_imu, w_imu)
        self._estimator.set_imu(R_b, w_b, st.stamp_seconds(msg.header.stamp))

    # -- services -------------------------------------------------------------------------
    def _request_state(self, model, req):
        """(base, qm, um) from a request: the current state or the request's own."""
        if req.use_current_state:
            if len(req.positions) or len(req.velocities):
                raise InputError('use_current_state is true: positions and velocities must be empty')
            if not self._mapper.ready or self._last_stamp is None:
                raise InputError(f'no joint state yet (use_current_state): waiting for joints '
                                 f'{self._mapper.missing() if self._last_stamp is not None else model.q_names}')
            base = self._base_state(self._last_stamp)
            if base is None:
                raise InputError(f'no odometry yet on {self._sub_odom.topic_name} (use_current_state)')
            return base, self._mapper.positions.copy(), self._mapper.velocities.copy()
        joints = st.map_request_joints(model.q_names, req.joint_names,
                                       {'positions': req.positions, 'velocities': req.velocities},
                                       required=('positions',))
        R_b, p_b = st.pose_to_matrix('base_pose', req.base_pose)
        v_b = st.vector3('base_twist.linear', req.base_twist.linear)
        w_b = st.vector3('base_twist.angular', req.base_twist.angular)
        if not model.floating and (v_b.any() or w_b.any()):
            raise InputError('base_twist must be zero: the node models a fixed base (parameter base: fixed)')
        return st.BaseLinkState(R_b, p_b, v_b, w_b), joints['positions'], joints['velocities']

    def _serve(self, what, handler, req, res):
        res.success = False
        try:
            model = self._model
            if model is None:
                raise InputError('no robot model yet: publish the URDF on the robot description topic or set '
                                 'the robot_description / urdf_path parameter')
            handler(model, req, res)
            res.success = True
            res.message = 'ok'
        except SpartError as err:
            res.message = str(err)
            self._log_error((what, str(err)), f'{what} request rejected: {err}')
        except Exception as err:  # noqa: BLE001
            res.message = f'unexpected {type(err).__name__}: {err}'
            self.get_logger().error(f'{what}: unexpected {type(err).__name__}: {err}\n{traceback.format_exc()}')
        return res

    def _forward_dynamics(self, req, res):
        return self._serve('forward_dynamics', self._fd, req, res)

    def _inverse_dynamics(self, req, res):
        return self._serve('inverse_dynamics', self._id, req, res)

    def _fd(self, model, req, res):
        base, qm, um = self._request_state(model, req)
        taum = st.map_request_joints(model.q_names, req.joint_names, {'efforts': req.efforts})['efforts']
        torque_b = st.vector3('base_wrench.torque', req.base_wrench.torque)
        force_b = st.vector3('base_wrench.force', req.base_wrench.force)
        wF0, wFm, g = st.loads_from_request(model.robot, req.link_wrenches, req.gravity)
        out = model.forward_dynamics(base, qm, um, taum, torque_b, force_b, wF0, wFm, g)
        res.joint_names = list(model.q_names)
        res.accelerations = out.umdot.tolist()
        set_vector3(res.base_acceleration.linear, out.a_b)
        set_vector3(res.base_acceleration.angular, out.alpha_b)

    def _id(self, model, req, res):
        base, qm, um = self._request_state(model, req)
        umdot = st.map_request_joints(model.q_names, req.joint_names,
                                      {'accelerations': req.accelerations})['accelerations']
        a_b = st.vector3('base_acceleration.linear', req.base_acceleration.linear)
        alpha_b = st.vector3('base_acceleration.angular', req.base_acceleration.angular)
        if not model.floating and (a_b.any() or alpha_b.any()):
            raise InputError('base_acceleration must be zero: the node models a fixed base (parameter base: fixed)')
        wF0, wFm, g = st.loads_from_request(model.robot, req.link_wrenches, req.gravity)
        out = model.inverse_dynamics(base, qm, um, umdot, a_b, alpha_b, wF0, wFm, g,
                                     floating_base=req.floating_base)
        res.joint_names = list(model.q_names)
        res.efforts = out.taum.tolist()
        set_vector3(res.base_wrench.torque, out.torque_b)
        set_vector3(res.base_wrench.force, out.force_b)
        set_vector3(res.base_acceleration.linear, out.a_b)
        set_vector3(res.base_acceleration.angular, out.alpha_b)


class CallbackTiming:
    """Durations of the joint_states callback, logged as percentiles every ``period`` s."""

    def __init__(self, period):
        self.period = period
        self.samples = np.zeros(100_000)
        self.n = 0
        self.next = time.monotonic() + period

    def add(self, dt, logger):
        if self.n < len(self.samples):
            self.samples[self.n] = dt
            self.n += 1
        now = time.monotonic()
        if now >= self.next and self.n:
            d = self.samples[:self.n] * 1e3
            logger.info(f'joint_states callback over {self.n} messages [ms]: p50 {np.percentile(d, 50):.3f} '
                        f'p99 {np.percentile(d, 99):.3f} max {d.max():.3f}')
            self.n = 0
            self.next = now + self.period


def _freeze_heap():
    """Move every object alive now (numba, llvmlite, the model) out of the garbage collector's
    reach: a full collection over that heap takes milliseconds, the latency tail at 1 kHz."""
    gc.collect()
    gc.freeze()


def make_executor(kind):
    """The executor named by the ``executor`` parameter."""
    if kind == 'events':
        from rclpy.experimental import EventsExecutor
        return EventsExecutor()
    if kind == 'single_threaded':
        from rclpy.executors import SingleThreadedExecutor
        return SingleThreadedExecutor()
    raise st.ConfigError(f"executor must be 'events' or 'single_threaded', got {kind!r}")


class _Quat:
    def __init__(self, x, y, z, w):
        self.x, self.y, self.z, self.w = float(x), float(y), float(z), float(w)


def main(args=None):
    """Entry point: run the node until SIGINT/SIGTERM; returns the exit code."""
    rclpy.init(args=args)
    node = None
    code = 0
    try:
        node = DynamicsNode()
        executor = make_executor(node.get_parameter('executor').value)
        executor.add_node(node)
        _freeze_heap()
        # Not executor.spin(): in the Kilted wheels EventsExecutor.spin() never runs a callback
        # (it busy-waits holding the GIL, deaf to SIGINT). spin_until_future_complete works and
        # costs less per message than a spin_once loop; the future completes at shutdown
        # (SIGINT/SIGTERM), the timeout is only a safety net.
        stop = Future()
        node.context.on_shutdown(lambda: stop.done() or stop.set_result(True))
        while node.context.ok() and not stop.done():
            executor.spin_until_future_complete(stop, timeout_sec=1.0)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    except SpartError as err:   # invalid parameters: say which, exit non-zero
        print(f'[{NODE_NAME}] invalid configuration: {err}', file=sys.stderr)
        code = 2
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown()
    return code


if __name__ == '__main__':
    sys.exit(main())
