"""
spart_dynamics: floating-base kinematics and dynamics of a URDF robot as a ROS 2 node.

Thin rclpy adapter: model and state inputs come from
:class:`spart_ros.nodes.robot_inputs.RobotInputs`
(shared with the controller), the computations from :class:`spart_ros.nodes.model.Model` (pure
Python, compiled SPART fast path), the message filling from :mod:`spart_ros.nodes.messages`.

Inputs
    robot description: std_msgs/String on ``robot_description`` (RELIABLE, TRANSIENT_LOCAL,
        depth 1, like robot_state_publisher), or the ``robot_description`` (URDF text) /
        ``urdf_path`` parameters (settable at run time).  Every new description rebuilds the
        model; a bad one is logged (naming the problem) and the previous model is kept.
    joint states: sensor_msgs/JointState on ``joint_states`` (BEST_EFFORT by default: accepts
        reliable and best-effort publishers), mapped by name, any order, subsets keep the last
        values, unknown joints ignored, missing velocities = 0 (warned once), velocity-only
        messages update velocities; messages without any model joint, or naming model joints
        without positions or velocities (efforts only), are ignored (counted, warned
        throttled).  Stamps are ordered per joint: a joint's values older than its last ones
        are dropped (counted, warned throttled; ``accept_older_stamps``), so several sources
        (arm, gripper) stamped a little apart all count.  Each accepted message gives one
        output set stamped with its own stamp.
    clock jumps back (simulator reset, bag loop): joint_states or odometry stamped more than
        ``clock_jump_back`` (1 s) before the last ones, or a jump back of the node clock
        (/clock under use_sim_time, as tf2 detects it), make the node forget every stamp
        (one warning) and accept the new ones.
    base (``base: floating``): nav_msgs/Odometry on ``odom`` (pose of the URDF base link in
        the world, twist of the base link expressed in itself, REP 105) and optionally
        sensor_msgs/Imu on ``imu/data`` (``use_imu: true``); odometry stamped before the last
        odometry is dropped (as joint_states); odometry more than ``odom_max_age`` from the
        joint state is not used (no output, warned throttled); an IMU sample, when fresh (stamp
        within
        ``imu_max_age`` of the joint state's) it overrides the base orientation and angular
        velocity; the IMU frame is the URDF link ``imu_link`` (or the messages' frame_id),
        rigidly attached to the base.  ``base: fixed``: pose from ``base_position`` /
        ``base_orientation`` (default identity), zero twist.

Outputs (stamped with the joint_states stamp, frame_id = ``world_frame``), one set per
joint_states message once every moving joint (and, floating, the odometry) was seen,
reduced by ``decimation`` / ``max_rate``; with ``max_rate`` > 0 the inputs are held as they
arrive (serialized, :meth:`RobotInputs.read_held`) and read on a timer at ``max_rate``: one
output set per tick, from the newest state of each source:
    ``~/link_twists`` (spart_interfaces/LinkTwists), ``~/jacobians`` (Jacobians of
    ``jacobian_links`` at ``jacobian_offsets``), ``~/center_of_mass`` (CenterOfMass).
Services: ``~/forward_dynamics`` (ForwardDynamics), ``~/inverse_dynamics``
(InverseDynamics, ``floating_base`` = SPART Floating_ID), ``~/inverse_kinematics``
(InverseKinematics: joint positions for a target pose of a point on a link; ``success`` false
with the closest configuration when it does not converge).

Performance (1 kHz): joint_states are read serialized (``raw=True``, spart_ros.nodes.cdr) and the
outputs published as serialized templates (spart_ros.nodes.messages.SerializedOutputs): rclpy's
message conversions cost more than the dynamics. Executor: rclpy's EventsExecutor by default.

See docs/dynamics_node.md, the node reference of the documentation site and
config/dynamics_node.yaml for every parameter.
Run: ``ros2 run spart_ros dynamics_node --ros-args --params-file config/dynamics_node.yaml``.
"""

import sys
import time
import traceback

from builtin_interfaces.msg import Time
import numpy as np
from rclpy.clock import Clock as RosClock
from rclpy.clock import ClockType
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import serialize_message
from spart_interfaces.msg import CenterOfMass, Jacobians, LinkTwists
from spart_interfaces.srv import ForwardDynamics, InverseDynamics, InverseKinematics

from .base_estimator import BaseLinkState
from .callback_timing import CallbackTiming
from .config import BASE_COLUMNS, POINT_FRAMES
from .conversions import pose_to_matrix, quaternion, vector3
from .messages import OutputMessages, SerializedOutputs, set_vector3
from .parameters import declare, Param, table
from .requests import loads_from_request, map_request_joints
from .robot_inputs import INPUT_PARAMETERS, RobotInputs
from .runner import EXECUTORS, run_node
from .throttle import Decimator
from ..core.attitude import quaternion_to_ros
from ..core.errors import InputError, SpartError
from ..core.inverse_kinematics import parse_rows

NODE_NAME = 'spart_dynamics'


def output_qos(depth):
    """
    Return the outputs' QoS: RELIABLE, VOLATILE, KEEP_LAST ``depth``.

    Best-effort subscribers match too.
    """
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=depth,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.VOLATILE,
    )


#: every parameter of the node (spart_ros.nodes.parameters): the model and input parameters
#: (robot_description, urdf_path, base, odometry, IMU, gravity, QoS...) are RobotInputs'
#: (robot_inputs.INPUT_PARAMETERS, shared with the controller), then the node's own
PARAMETERS = table(
    *INPUT_PARAMETERS.values(),
    Param(
        'jacobian_links',
        None,
        'links whose Jacobians are published on ~/jacobians; unset = the leaf links of the tree',
        type='string_array',
        example=['tool0'],
    ),
    Param(
        'jacobian_offsets',
        None,
        'point of each Jacobian, flattened [x, y, z, ...] (3 per link of jacobian_links); '
        'unset = zero',
        type='double_array',
        example=[0.0, 0.0, 0.1],
    ),
    Param(
        'jacobian_point_frame',
        'link',
        "frame of jacobian_offsets: 'link' (URDF link frame, from its origin) or "
        "'com' (link CoM frame, from the CoM, SPART)",
        choices=POINT_FRAMES,
    ),
    Param(
        'jacobian_base_columns',
        'ros',
        "base DoF columns of the Jacobians: 'ros' (base link twist in the base "
        "link frame, like nav_msgs/Odometry) or 'spart' (u0)",
        choices=BASE_COLUMNS,
    ),
    Param('link_twists_topic', '~/link_twists', 'spart_interfaces/LinkTwists output topic'),
    Param('jacobians_topic', '~/jacobians', 'spart_interfaces/Jacobians output topic'),
    Param(
        'center_of_mass_topic', '~/center_of_mass', 'spart_interfaces/CenterOfMass output topic'
    ),
    Param('publish_link_twists', True, 'publish ~/link_twists'),
    Param('publish_jacobians', True, 'publish ~/jacobians'),
    Param('publish_center_of_mass', True, 'publish ~/center_of_mass'),
    Param('decimation', 1, 'publish one output set every N joint_states messages', low=1),
    Param(
        'max_rate',
        0.0,
        'at most this many output sets per second (0 = no limit); > 0: the inputs are held as '
        'they arrive and read at this rate (steady clock), one output set per tick from the '
        'newest state',
        low=0.0,
    ),
    Param('output_queue_depth', 10, 'KEEP_LAST depth of the output publishers', low=1),
    Param(
        'executor',
        'events',
        "rclpy executor: 'events' (rclpy.experimental.EventsExecutor, lowest latency) or "
        "'single_threaded' (SingleThreadedExecutor)",
        choices=EXECUTORS,
    ),
    Param(
        'timing_log_period',
        0.0,
        'log the joint_states callback duration (p50, p99, max) every this many seconds (0 = off)',
        low=0.0,
    ),
    Param(
        'serialized_outputs',
        True,
        'publish the outputs as serialized bytes written into per-model templates (same '
        'messages, much cheaper); false = rclpy message objects',
    ),
    Param(
        'forward_dynamics_service',
        '~/forward_dynamics',
        'spart_interfaces/ForwardDynamics service',
    ),
    Param(
        'inverse_dynamics_service',
        '~/inverse_dynamics',
        'spart_interfaces/InverseDynamics service',
    ),
    Param(
        'inverse_kinematics_service',
        '~/inverse_kinematics',
        'spart_interfaces/InverseKinematics service',
    ),
)


class DynamicsNode(Node):
    """The spart_dynamics node (see the module docstring)."""

    NODE_NAME = NODE_NAME

    def __init__(self, **kwargs):
        super().__init__(NODE_NAME, **kwargs)
        p = self._params = declare(self, PARAMETERS)
        self._decimator = Decimator(p['decimation'], p['max_rate'])
        self._timing = (
            CallbackTiming(float(p['timing_log_period'])) if p['timing_log_period'] > 0 else None
        )
        self._out = self._serialized = None
        self.inputs = RobotInputs(
            self,
            {name: p[name] for name in INPUT_PARAMETERS},
            model_options={
                'jacobian_links': list(p['jacobian_links'] or []),
                'jacobian_offsets': [float(x) for x in (p['jacobian_offsets'] or [])],
                'jacobian_point_frame': p['jacobian_point_frame'],
                'jacobian_base_columns': p['jacobian_base_columns'],
            },
            on_model=self._on_model,
            on_joint_state=self._on_joint_state,
            held=p['max_rate'] > 0,
        )
        self._held_timer = None
        if self.inputs.held:  # the inputs read at the output rate (steady clock, as max_rate)
            # joint_states messages since the last output set (decimation), a newer state
            self._received, self._unpublished = 0, False
            self._held_timer = self.create_timer(
                1.0 / p['max_rate'],
                self.inputs.guard(self._on_output_timer, 'outputs'),
                clock=RosClock(clock_type=ClockType.STEADY_TIME),
            )

        out_qos = output_qos(int(p['output_queue_depth']))
        self._pub_twists = (
            self.create_publisher(LinkTwists, p['link_twists_topic'], out_qos)
            if p['publish_link_twists']
            else None
        )
        self._pub_jacobians = (
            self.create_publisher(Jacobians, p['jacobians_topic'], out_qos)
            if p['publish_jacobians']
            else None
        )
        self._pub_com = (
            self.create_publisher(CenterOfMass, p['center_of_mass_topic'], out_qos)
            if p['publish_center_of_mass']
            else None
        )
        self._srv_fd = self.create_service(
            ForwardDynamics, p['forward_dynamics_service'], self._forward_dynamics
        )
        self._srv_id = self.create_service(
            InverseDynamics, p['inverse_dynamics_service'], self._inverse_dynamics
        )
        self._srv_ik = self.create_service(
            InverseKinematics, p['inverse_kinematics_service'], self._inverse_kinematics
        )
        self.inputs.load_initial_model()

        outputs = [
            pub.topic_name for pub in (self._pub_twists, self._pub_jacobians, self._pub_com) if pub
        ]
        services = [
            self.resolve_service_name(s.srv_name)
            for s in (self._srv_fd, self._srv_id, self._srv_ik)
        ]
        self.get_logger().info(
            f'base {self.inputs.params["base"]}, world frame {self.inputs.world_frame!r}, gravity '
            f'{self.inputs.gravity.tolist()}; inputs {self.inputs.input_topics()}; outputs '
            f'{outputs} '
            f'({"serialized templates" if p["serialized_outputs"] else "message objects"}, '
            f'executor {p["executor"]}); services {services}'
            + ('' if self.inputs.model else '; waiting for a robot description')
        )

    # -- model ----------------------------------------------------------------------------
    def _on_model(self, model):
        world = self.inputs.world_frame
        self._out = OutputMessages(model, world)
        self._serialized = None
        if self._params['serialized_outputs']:
            try:
                self._serialized = SerializedOutputs(
                    OutputMessages(model, world), serialize_message
                )
            except ValueError as err:  # CdrError included: publish message objects instead
                self.get_logger().warning(
                    f'serialized outputs unavailable ({err}); publishing message objects'
                )

    # -- outputs --------------------------------------------------------------------------
    def _on_joint_state(self, sec, nanosec):
        if self._timing is not None:
            t0 = time.perf_counter()
            self._publish_state(sec, nanosec)
            self._timing.add(time.perf_counter() - t0, self.get_logger())
        else:
            self._publish_state(sec, nanosec)

    def _read_held(self):
        """Read the held inputs (max_rate > 0): count the joint states for the next output."""
        received, applied = self.inputs.read_held()
        self._received += received
        self._unpublished = self._unpublished or applied > 0

    def _on_output_timer(self, _timer_info=None):
        self._read_held()
        stamp = self.inputs.last_stamp
        if not self._unpublished or stamp is None or self._received < self._decimator.every:
            return
        if self._timing is not None:
            t0 = time.perf_counter()
        if self._publish_state(*stamp, decimate=False):
            self._received, self._unpublished = 0, False
        if self._timing is not None:
            self._timing.add(time.perf_counter() - t0, self.get_logger())

    def _publish_state(self, sec, nanosec, decimate=True):
        """Publish the output set of the state stamped (sec, nanosec); True when published."""
        inputs = self.inputs
        state = inputs.state((sec, nanosec))
        if state is None:  # INFO while waiting for an input, WARN when one is stale
            inputs.log_unavailable((sec, nanosec))
            return False
        if decimate and not self._decimator(time.monotonic()):
            return False
        out = inputs.model.outputs(state.base, state.q, state.qd)
        ser = self._serialized
        if ser is not None:  # serialized templates: same bytes, a fraction of the cost
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
            return True
        msgs = self._out
        stamp = Time(sec=sec, nanosec=nanosec)
        if self._pub_jacobians is not None:
            self._pub_jacobians.publish(msgs.fill_jacobians(stamp, out.jacobians, out.points))
        if self._pub_twists is not None:
            self._pub_twists.publish(msgs.fill_link_twists(stamp, out.rL, out.tL))
        if self._pub_com is not None:
            self._pub_com.publish(msgs.fill_center_of_mass(stamp, out.com))
        return True

    # -- services -------------------------------------------------------------------------
    def _current_state(self, empty):
        """
        Return the node's latest state for a request with use_current_state.

        ``empty``: {field name: value} of the request's state fields, which must then be empty.
        """
        if any(len(value) for value in empty.values()):
            raise InputError(f'use_current_state is true: {" and ".join(empty)} must be empty')
        if self.inputs.held:  # (max_rate) the newest state, not the last output set's
            self._read_held()
        state = self.inputs.state()
        if state is None:
            raise InputError(f'no current state (use_current_state): {self.inputs.unavailable()}')
        return state

    def _request_state(self, model, req):
        """Return (base, qm, um) from a request: the current state or the request's own."""
        if req.use_current_state:
            state = self._current_state({'positions': req.positions, 'velocities': req.velocities})
            return state.base, state.q.copy(), state.qd.copy()
        joints = map_request_joints(
            model.q_names,
            req.joint_names,
            {'positions': req.positions, 'velocities': req.velocities},
            required=('positions',),
            followers=model.followers,
        )
        R_b, p_b = pose_to_matrix('base_pose', req.base_pose)
        v_b = vector3('base_twist.linear', req.base_twist.linear)
        w_b = vector3('base_twist.angular', req.base_twist.angular)
        if not model.floating and (v_b.any() or w_b.any()):
            raise InputError(
                'base_twist must be zero: the node models a fixed base (parameter base: fixed)'
            )
        return BaseLinkState(R_b, p_b, v_b, w_b), joints['positions'], joints['velocities']

    def _gravity(self, req):
        """
        Return the request's gravity when it overrides the node's.

        Else the ``gravity`` parameter.
        """
        return vector3('gravity', req.gravity) if req.override_gravity else self.inputs.gravity

    @staticmethod
    def _response_order(model, req):
        """
        Return (names, index): the response's joint order and each joint's index.

        names: the request's order, else the model's; index: the model's joint-variable index of
        each.
        """
        names = list(req.joint_names) if len(req.joint_names) else list(model.q_names)
        if sorted(names) != sorted(model.q_names):  # e.g. use_current_state with a partial list
            raise InputError(
                f'joint_names must list every moving joint once (the moving joints are '
                f'{list(model.q_names)}), got {names}'
            )
        index = {name: k for k, name in enumerate(model.q_names)}
        return names, [index[name] for name in names]

    def _serve(self, what, handler, req, res):
        res.success = False
        try:
            model = self.inputs.model
            if model is None:
                raise InputError(
                    'no robot model yet: publish the URDF on the robot description topic or set '
                    'the robot_description / urdf_path parameter'
                )
            outcome = handler(model, req, res)  # None: done; else (success, message)
            res.success, res.message = (True, 'ok') if outcome is None else outcome
        except SpartError as err:
            res.message = str(err)
            self.inputs.warn_throttled((what, str(err)), f'{what} request rejected: {err}')
        except Exception as err:  # noqa: BLE001
            res.message = f'unexpected {type(err).__name__}: {err}'
            self.get_logger().error(
                f'{what}: unexpected {type(err).__name__}: {err}\n{traceback.format_exc()}'
            )
        return res

    def _forward_dynamics(self, req, res):
        return self._serve('forward_dynamics', self._fd, req, res)

    def _inverse_dynamics(self, req, res):
        return self._serve('inverse_dynamics', self._id, req, res)

    def _inverse_kinematics(self, req, res):
        return self._serve('inverse_kinematics', self._ik, req, res)

    def _fd(self, model, req, res):
        base, qm, um = self._request_state(model, req)
        taum = map_request_joints(
            model.q_names, req.joint_names, {'efforts': req.efforts}, followers=model.followers
        )['efforts']
        names, order = self._response_order(model, req)
        torque_b = vector3('base_wrench.torque', req.base_wrench.torque)
        force_b = vector3('base_wrench.force', req.base_wrench.force)
        wF0, wFm = loads_from_request(model.robot, req.link_wrenches)
        out = model.forward_dynamics(
            base, qm, um, taum, torque_b, force_b, wF0, wFm, self._gravity(req)
        )
        res.joint_names = names
        res.accelerations = out.umdot[order].tolist()
        set_vector3(res.base_acceleration.linear, out.a_b)
        set_vector3(res.base_acceleration.angular, out.alpha_b)

    def _ik(self, model, req, res):
        if req.use_current_state:
            state = self._current_state(
                {'joint_names': req.joint_names, 'positions': req.positions}
            )
            base, q_seed = state.base, state.q.copy()
        else:
            q_seed = map_request_joints(
                model.q_names,
                req.joint_names,
                {'positions': req.positions},
                required=('positions',),
                followers=model.followers,
            )['positions']
            if _default_pose(req.base_pose):  # unset: where the node places the base
                base = self.inputs.fixed_base
            else:
                R_b, p_b = pose_to_matrix('base_pose', req.base_pose)
                base = BaseLinkState(R_b, p_b, np.zeros(3), np.zeros(3))
        names, order = self._response_order(model, req)
        rows = list(req.rows) or None
        position_only = all(
            r >= 3 for r in parse_rows(rows, True)
        )  # the orientation is then not read
        p_t = vector3('target.pose.position', req.target.pose.position)
        R_t = (
            np.eye(3)
            if position_only
            else quaternion('target.pose.orientation', req.target.pose.orientation)
        )
        frame_id = req.target.header.frame_id
        if frame_id == model.robot.base_link.name:
            if req.base_free:
                raise InputError(
                    f'target.header.frame_id: the base link {frame_id!r} moves with base_free: '
                    f'give the target in the world frame {self.inputs.world_frame!r}'
                )
            R_t, p_t = base.R_b @ R_t, base.p_b + base.R_b @ p_t
        elif frame_id not in ('', self.inputs.world_frame):
            raise InputError(
                f'target.header.frame_id: {frame_id!r} is neither the world frame '
                f'{self.inputs.world_frame!r} nor the base link {model.robot.base_link.name!r}'
            )
        rotation = None if position_only else R_t
        out = model.inverse_kinematics(
            base,
            q_seed,
            req.link,
            vector3('point', req.point),
            p_t,
            rotation,
            rows,
            req.frame or 'world',
            req.base_free,
            req.tolerance_rotation or 1e-6,
            req.tolerance_position or 1e-6,
            req.max_iterations or 100,
        )
        r = out.result
        res.joint_names = names
        res.positions = r.q[order].tolist()
        res.iterations, res.rotation_error, res.position_error = (
            int(r.iterations),
            r.rotation_error,
            r.position_error,
        )
        _set_pose(res.pose, out.R, out.p)
        _set_pose(res.base_pose, out.R_b, out.p_b)
        if r.success:
            return True, f'converged in {r.iterations} iterations'
        why = (
            'out of reach from this seed, or held by joint limits'
            if r.status == 'no progress'
            else f'max_iterations {req.max_iterations or 100} reached'
        )
        return False, (
            f'not converged ({r.status}: {why}) after {r.iterations} iterations: closest position '
            f'error {r.position_error:.3g} m, rotation error {r.rotation_error:.3g} rad'
        )

    def _id(self, model, req, res):
        base, qm, um = self._request_state(model, req)
        umdot = map_request_joints(
            model.q_names,
            req.joint_names,
            {'accelerations': req.accelerations},
            followers=model.followers,
        )['accelerations']
        names, order = self._response_order(model, req)
        a_b = vector3('base_acceleration.linear', req.base_acceleration.linear)
        alpha_b = vector3('base_acceleration.angular', req.base_acceleration.angular)
        if not model.floating and (a_b.any() or alpha_b.any()):
            raise InputError(
                'base_acceleration must be zero: the node models a fixed base (parameter base: '
                'fixed)'
            )
        wF0, wFm = loads_from_request(model.robot, req.link_wrenches)
        out = model.inverse_dynamics(
            base,
            qm,
            um,
            umdot,
            a_b,
            alpha_b,
            wF0,
            wFm,
            self._gravity(req),
            floating_base=req.floating_base,
        )
        res.joint_names = names
        res.efforts = out.taum[order].tolist()
        set_vector3(res.base_wrench.torque, out.torque_b)
        set_vector3(res.base_wrench.force, out.force_b)
        set_vector3(res.base_acceleration.linear, out.a_b)
        set_vector3(res.base_acceleration.angular, out.alpha_b)


def _default_pose(pose):
    """Return True for a geometry_msgs/Pose left at its default (origin, identity)."""
    p, q = pose.position, pose.orientation
    return p.x == p.y == p.z == 0.0 and q.x == q.y == q.z == 0.0 and q.w == 1.0


def _set_pose(msg, R, p):
    """Fill a geometry_msgs/Pose from a rotation (3, 3) and a position (3,)."""
    msg.position.x, msg.position.y, msg.position.z = (float(x) for x in p)
    msg.orientation.x, msg.orientation.y, msg.orientation.z, msg.orientation.w = (
        float(x) for x in quaternion_to_ros(R)
    )


def main(args=None):
    """
    Entry point: run the node until SIGINT/SIGTERM.

    Returns the exit code (2: bad parameters).
    """
    return run_node(DynamicsNode, args=args)


if __name__ == '__main__':
    sys.exit(main())
