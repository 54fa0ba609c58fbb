"""
spart_controller's messages: commands out, references and notices in, status out (rclpy).

:class:`ControllerIO` holds the publishers and subscriptions a configured controller node has,
converts messages to the :class:`~spart_ros.control.controller.Controller`'s inputs (trajectory
goals, law references, a plant's reset notice) and its outputs to messages (commands, the
status).  Commands are published as serialized templates (the same bytes as a message object,
a fraction of the cost at 1 kHz).
"""

import time

from builtin_interfaces.msg import Time
from geometry_msgs.msg import (
    PoseStamped,
    QuaternionStamped,
    TwistStamped,
    Vector3Stamped,
    WrenchStamped,
)
import numpy as np
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState
from spart_interfaces.msg import ControllerStatus, EndEffectorGoal
from std_msgs.msg import Float64MultiArray, Header
from trajectory_msgs.msg import JointTrajectory

from .base_actuators_io import BaseActuatorsIO, fill_status
from .conversions import pose_to_matrix, quaternion, stamp_seconds, vector3
from .messages import SerializedCommands, SerializedWrench, set_vector3
from .robot_inputs import ROBOT_DESCRIPTION_QOS
from ..control.ee_goals import PoseGoal
from ..control.goals import TrajectoryGoal
from ..core.errors import InputError

__all__ = ['ControllerIO', 'COMMAND_QOS', 'goal_from_message']

#: as ros2_control's command subscribers (and every other topic of the controller)
COMMAND_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST,
    depth=10,
    reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE,
)


def _seconds(d):
    return d.sec + 1e-9 * d.nanosec


def goal_from_message(msg):
    """``TrajectoryGoal`` of a trajectory_msgs/JointTrajectory (InputError naming the problem)."""
    return TrajectoryGoal.from_points(
        msg.joint_names,
        [
            (_seconds(p.time_from_start), p.positions, p.velocities, p.accelerations)
            for p in msg.points
        ],
        stamp_seconds(msg.header.stamp),
    )


class ControllerIO:
    """
    Publishers and subscriptions of a configured controller node.

    ``p``: its parameters; ``references``: the law's reference names. What comes in goes to
    ``node.controller`` (goals at ``node.control_time()``, references, reset notices) and the
    plant's gravity to ``node.on_gravity(g)``; every callback guarded by ``guard(callback, what)``.
    """

    def __init__(self, node, p, references, guard, pose_goals=False, inputs=None):
        self.node = node
        self._pub = node.create_publisher(Float64MultiArray, p['commands_topic'], COMMAND_QOS)
        self._pub_js = (
            node.create_publisher(JointState, p['joint_command_topic'], COMMAND_QOS)
            if p['joint_command_topic']
            else None
        )
        self._pub_wrench = (
            node.create_publisher(WrenchStamped, p['base_wrench_topic'], COMMAND_QOS)
            if 'base_pose' in references
            else None
        )
        self._pub_status = node.create_publisher(ControllerStatus, p['status_topic'], COMMAND_QOS)
        self.actuators = (
            BaseActuatorsIO(node, p, COMMAND_QOS, guard, inputs) if p['actuators_file'] else None
        )
        self.world_frame = p['world_frame']
        self.base_link = ''
        self._serialized = self._wrench = None
        self._names = []
        c = node.controller
        subs = [
            (
                JointTrajectory,
                p['trajectory_topic'],
                lambda m: c.submit(goal_from_message(m), node.control_time()),
                'joint_trajectory',
            )
        ]
        convert = {
            'base_pose': (PoseStamped, 'base_pose_topic', self._base_pose),
            'ee_twist': (TwistStamped, 'ee_twist_topic', self._ee_twist),
            'ee_pose': (PoseStamped, 'ee_pose_topic', self._ee_pose),
            'base_attitude': (QuaternionStamped, 'base_attitude_topic', self._base_attitude),
        }
        if pose_goals:
            subs.append(
                (
                    EndEffectorGoal,
                    p['ee_goal_topic'],
                    lambda m: c.submit_pose(self._ee_goal(m), node.control_time()),
                    'ee_goal',
                )
            )
        for name in references:
            if name == 'ee_goal':  # a goal, not a law reference: submit_pose (above)
                continue
            msg_type, topic, fn = convert[name]
            subs.append(
                (
                    msg_type,
                    p[topic],
                    lambda m, n=name, f=fn: c.set_reference(n, f(m), time.monotonic()),
                    name,
                )
            )
        if p['reset_topic']:
            subs.append(
                (
                    Header,
                    p['reset_topic'],
                    lambda m: c.plant_reset(
                        f'the plant announced a reset at t = {stamp_seconds(m.stamp):.6f} s',
                        stamp_seconds(m.stamp),
                    ),
                    'reset notice',
                )
            )
        self._subs = [
            node.create_subscription(t, topic, guard(cb, what), COMMAND_QOS)
            for t, topic, cb, what in subs
        ]
        if p['plant_gravity_topic']:
            self._subs.append(
                node.create_subscription(
                    Vector3Stamped,
                    p['plant_gravity_topic'],
                    guard(
                        lambda m: node.on_gravity(vector3('plant gravity', m.vector)),
                        'plant gravity',
                    ),
                    ROBOT_DESCRIPTION_QOS,
                )
            )

    @property
    def topics(self):
        extra = self.actuators.topics if self.actuators is not None else []
        return [self._pub.topic_name] + [s.topic_name for s in self._subs] + extra

    def flush(self, timeout=2.0):
        """
        Wait (at most ``timeout`` s) until the subscribers acknowledged every command sent.

        The last zero command must not be lost with a publisher destroyed right after it (0.5 s
        was too short for a starved machine: a test saw the plant keep the last efforts).
        Returns whether every reliable subscriber acknowledged them.
        """
        from rclpy.duration import Duration

        acked = True
        for pub in (self._pub, self._pub_js):
            if pub is not None:
                acked &= bool(pub.wait_for_all_acked(Duration(nanoseconds=int(timeout * 1e9))))
        if self.actuators is not None:
            acked &= self.actuators.flush(timeout)
        return acked

    def destroy(self):
        node = self.node
        for pub in (self._pub, self._pub_js, self._pub_wrench, self._pub_status):
            if pub is not None:
                node.destroy_publisher(pub)
        for sub in self._subs:
            node.destroy_subscription(sub)
        self._subs = []
        if self.actuators is not None:
            self.actuators.destroy()
            self.actuators = None

    def set_joints(self, names, base_link):
        """Set the command joints (the commands' length and the JointState copy's names)."""
        self._names, self.base_link = list(names), base_link
        try:
            self._serialized = SerializedCommands(
                len(names), names if self._pub_js else None, serialize_message
            )
        except ValueError:  # CdrError included: message objects then
            self._serialized = None
        self._wrench = None
        if self._pub_wrench is not None and isinstance(base_link, str):
            try:
                self._wrench = SerializedWrench(base_link, serialize_message)
            except ValueError:
                self._wrench = None

    # -- out ------------------------------------------------------------------------------
    def has_readers(self):
        """Return whether a subscription of the commands topic has matched (DDS discovery)."""
        return self._pub.get_subscription_count() > 0

    def publish(self, cmd, stamp):
        """
        Publish a :data:`~spart_ros.control.controller.Command` (None: nothing).

        ``stamp``: (sec, nanosec) of the state it answers, for the JointState copy and the base
        wrench.
        """
        if cmd is None:
            return
        if self.actuators is not None:  # before the arm's: a lockstep plant steps on those
            self.actuators.publish(cmd)
        values, ser = cmd.values, self._serialized
        if ser is not None and len(values) == len(self._names):
            self._pub.publish(ser.commands_bytes(values))
        else:
            self._pub.publish(Float64MultiArray(data=values.tolist()))
        if cmd.zero:
            stamp = divmod(self.node.get_clock().now().nanoseconds, 1_000_000_000)
        if self._pub_js is not None:
            if (
                ser is not None
                and ser.joint_command is not None
                and len(values) == len(self._names)
            ):
                self._pub_js.publish(ser.joint_command_bytes(int(stamp[0]), int(stamp[1]), values))
            else:
                self._pub_js.publish(
                    JointState(
                        header=Header(stamp=Time(sec=int(stamp[0]), nanosec=int(stamp[1]))),
                        name=self._names,
                        effort=values.tolist(),
                    )
                )
        if self._pub_wrench is not None and cmd.base_torque is not None and self._wrench:
            sec, nanosec = int(stamp[0]), int(stamp[1])
            self._pub_wrench.publish(
                self._wrench.wrench_bytes(sec, nanosec, cmd.base_torque, cmd.base_force)
            )
        elif self._pub_wrench is not None and cmd.base_torque is not None:
            msg = WrenchStamped()
            msg.header.stamp = Time(sec=int(stamp[0]), nanosec=int(stamp[1]))
            msg.header.frame_id = self.base_link
            set_vector3(msg.wrench.torque, cmd.base_torque)
            set_vector3(msg.wrench.force, cmd.base_force)
            self._pub_wrench.publish(msg)

    def publish_status(self, mode, snap, state_age, rejected):
        """~/status from a :data:`~spart_ros.control.controller.Snapshot`."""
        msg = ControllerStatus(mode=mode, enabled=snap.active, commanding=snap.commanding)
        msg.header.stamp = self.node.get_clock().now().to_msg()
        msg.header.frame_id = self.world_frame
        msg.state = snap.state + (f': {snap.reason}' if snap.reason else '')
        msg.state_age = state_age
        msg.compute_time = snap.compute_time
        msg.trajectory_remaining = snap.trajectory_remaining
        msg.joint_names = snap.joint_names
        msg.position_error = snap.position_error.tolist()
        msg.velocity_error = snap.velocity_error.tolist()
        msg.efforts = snap.efforts.tolist()
        msg.max_position_error = (
            float(np.abs(snap.position_error).max()) if len(snap.position_error) else 0.0
        )
        c = snap.counts
        msg.commands, msg.zero_commands, msg.timeouts = c['commands'], c['zeros'], c['timeouts']
        msg.rejected_messages = rejected
        msg.trajectories = c['trajectories']
        sat = snap.saturation
        if sat is not None:
            msg.saturated_joints = sat.joints
            msg.saturated_demand, msg.saturated_limit = sat.demand.tolist(), sat.limit.tolist()
            msg.saturated_commands = sat.count
        out = snap.details
        if out is not None and hasattr(out, 'fallback'):  # the mpc modes' MpcStatus
            msg.mpc_solves, msg.mpc_misses = out.solves, out.misses
            msg.mpc_fallback, msg.mpc_solve_time = bool(out.fallback), float(out.solve_time)
            msg.mpc_message = out.message
        elif out is not None:  # a space mode's SpaceOutput
            cmd, st = out.command, out.command.status
            msg.momentum, msg.momentum_about_com = (
                st.momentum.tolist(),
                st.momentum_about_com.tolist(),
            )
            msg.base_angular_velocity = (
                out.base_angular_velocity.tolist()
            )  # base LINK frame, as odometry
            msg.task_twist = cmd.task_twist.tolist()
            msg.manipulability, msg.fixed_base_manipulability = (
                st.manipulability,
                st.fixed_base_manipulability,
            )
            msg.dynamic_singularity = st.dynamic_singularity
            msg.joint_limit_distance = st.joint_limit_distance.tolist()
            msg.rate_scale, msg.task_error, msg.base_error, msg.damping = (
                st.rate_scale,
                st.task_error,
                st.base_error,
                st.damping,
            )
            msg.feasible, msg.message = st.feasible, st.message
        fill_status(msg, snap.actuators)
        self._pub_status.publish(msg)

    # -- references in ----------------------------------------------------------------------
    def _frame(self, what, header, base=True):
        """
        Return 'world' or 'base': the frame a message's header.frame_id names.

        'world' for header.frame_id = world_frame or empty, 'base' for the base link's frame (when
        ``base``); any other frame: InputError naming it (the message is not misread).
        """
        frame = header.frame_id
        if frame in ('', self.world_frame):
            return 'world'
        if base and self.base_link and frame == self.base_link:
            return 'base'
        accepted = f'world_frame {self.world_frame!r} (or empty)' + (
            f' or the base link {self.base_link!r}' if base and self.base_link else ''
        )
        raise InputError(f'{what}.header.frame_id {frame!r}: expected {accepted}; message ignored')

    def _ee_twist(self, msg):
        frame = self._frame('ee_twist', msg.header)
        tw = msg.twist
        return np.concatenate(
            [vector3('ee_twist.angular', tw.angular), vector3('ee_twist.linear', tw.linear)]
        ), frame

    def _ee_pose(self, msg):
        frame = self._frame('ee_pose', msg.header)
        R, p = pose_to_matrix('ee_pose.pose', msg.pose)
        return R, p, frame

    def _ee_goal(self, msg):
        """
        ``PoseGoal`` of a spart_interfaces/EndEffectorGoal.

        InputError naming the field at fault.
        """
        frame = self._frame('ee_goal', msg.header)
        R, p = pose_to_matrix('ee_goal.pose', msg.pose)
        return PoseGoal.create(
            R,
            p,
            msg.duration,
            msg.path or 'cartesian',
            msg.time_scaling or 'quintic',
            frame,
            stamp_seconds(msg.header.stamp),
        )

    def _base_attitude(self, msg):
        self._frame('base_attitude', msg.header, base=False)
        return quaternion('base_attitude.quaternion', msg.quaternion)

    def _base_pose(self, msg):
        self._frame('base_pose', msg.header, base=False)
        return pose_to_matrix('base_pose.pose', msg.pose)
