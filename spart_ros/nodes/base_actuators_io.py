"""
spart_controller's base actuators: wheel speeds in, thruster and wheel commands out (rclpy).

With the parameter ``actuators_file`` (the YAML of :mod:`spart_ros.core.actuators`) the controller
drives the base's reaction wheels and thrusters as ros2_control forward command controllers take
them: one std_msgs/Float64MultiArray per group on ``<controller>/commands`` (relative names: the
node's namespace), ``data[i]`` for the i-th actuator of the group in the file's order (wheels:
motor torque [N m]; thrusters: force [N]).  Every command of the controller sends both groups
(before the arm's efforts: a lockstep plant steps on the arm's), a stop command sends zeros to
both.  The wheels' speeds come from a sensor_msgs/JointState (``wheel_states_topic``, by name:
spart_sim publishes them there, and in joint_states); with ``wheel_speeds_in_joint_states`` they
are read from the joint states the controller receives anyway (no second subscription: at 1 kHz
each delivery of a message costs tens of microseconds of CPU).
"""

import numpy as np
from rclpy.serialization import deserialize_message, serialize_message
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from .cdr import CdrError, parse_joint_state
from .messages import SerializedCommands
from ..core.actuators import load_actuators

__all__ = ['BaseActuatorsIO']


class BaseActuatorsIO:
    """
    Publishers and the wheel-speed subscription of the base actuators (module docstring).

    ``node``: the controller node; ``p``: its parameters; ``qos``: of commands and inputs;
    ``guard(callback, what)``: the node's callback guard; ``inputs``: the node's RobotInputs
    (the joint states, for wheel speeds read from them).
    """

    def __init__(self, node, p, qos, guard, inputs=None):
        self.node = node
        self.actuators = load_actuators(p['actuators_file'])
        a = self.actuators
        self._wheels = np.zeros(len(a.wheels))
        self._thrusters = np.zeros(len(a.thrusters))
        self._pub_wheels = (
            node.create_publisher(Float64MultiArray, f'{a.wheel_controller}/commands', qos)
            if a.wheels
            else None
        )
        self._pub_thrusters = (
            node.create_publisher(Float64MultiArray, f'{a.thruster_controller}/commands', qos)
            if a.thrusters
            else None
        )
        self._index = {n: k for k, n in enumerate(a.wheel_names)}
        self._speeds = np.full(len(a.wheels), np.nan)
        from_joints = inputs is not None and bool(p['wheel_speeds_in_joint_states'])
        self._inputs = inputs if a.wheels and from_joints else None
        if self._inputs is not None:
            inputs.joint_listeners.append(self._on_wheels)
        self._sub = (
            node.create_subscription(
                JointState,
                p['wheel_states_topic'],
                guard(self._on_wheels_raw, 'wheel states'),
                qos,
                raw=True,
            )  # serialized: read by spart_ros.nodes.cdr (rclpy's conversion costs more)
            if a.wheels and not from_joints
            else None
        )
        # the commands as serialized templates (the same bytes as the message objects)
        self._serialized = {}
        for group, count in (('wheels', len(a.wheels)), ('thrusters', len(a.thrusters))):
            try:
                self._serialized[group] = SerializedCommands(count, None, serialize_message)
            except ValueError:  # CdrError included: message objects then
                pass

    @property
    def topics(self):
        return [
            x.topic_name
            for x in (self._pub_wheels, self._pub_thrusters, self._sub)
            if x is not None
        ]

    def _on_wheels_raw(self, data):
        try:
            _, _, names, _, velocities = parse_joint_state(data)
        except CdrError:  # another encoding: rclpy's deserializer (slower, same result)
            msg = deserialize_message(data, JointState)
            names, velocities = msg.name, msg.velocity
        self._on_wheels(names, velocities)

    def _on_wheels(self, names, velocities):
        """Keep the wheels' speeds by name; give them to the controller once all are known."""
        if len(velocities) != len(names):
            return
        for name, v in zip(names, velocities):
            k = self._index.get(name)
            if k is not None:
                self._speeds[k] = v
        c = self.node.controller
        if (
            np.all(np.isfinite(self._speeds))
            and c.active
            and getattr(c.law, 'actuation', None) is not None  # a mode that drives them
        ):
            c.set_reference('wheel_speeds', self._speeds)

    def publish(self, cmd):
        """Send a command's thruster and wheel commands (zeros with a stop command)."""
        act = cmd.actuators
        wheels = self._wheels if act is None else act.wheels
        thrusters = self._thrusters if act is None else act.thrusters
        for pub, group, values in (
            (self._pub_wheels, 'wheels', wheels),
            (self._pub_thrusters, 'thrusters', thrusters),
        ):
            if pub is None:
                continue
            ser = self._serialized.get(group)
            if ser is not None and len(values) == ser.n:
                pub.publish(ser.commands_bytes(values))
            else:
                pub.publish(Float64MultiArray(data=np.asarray(values).tolist()))

    def flush(self, timeout):
        """Wait (at most ``timeout`` s) for the acknowledgements; return whether all came."""
        from rclpy.duration import Duration

        acked = True
        for pub in (self._pub_wheels, self._pub_thrusters):
            if pub is not None:
                acked &= bool(pub.wait_for_all_acked(Duration(nanoseconds=int(timeout * 1e9))))
        return acked

    def destroy(self):
        if self._inputs is not None and self._on_wheels in self._inputs.joint_listeners:
            self._inputs.joint_listeners.remove(self._on_wheels)
        for pub in (self._pub_wheels, self._pub_thrusters):
            if pub is not None:
                self.node.destroy_publisher(pub)
        if self._sub is not None:
            self.node.destroy_subscription(self._sub)


def fill_status(msg, status):
    """Set the base actuators' fields of a ControllerStatus from an ActuationStatus (or None)."""
    if status is None:
        return
    msg.actuation_feasible = bool(status.feasible)
    msg.actuation_message = status.message
    msg.saturated_actuators = list(status.saturated)
    msg.wheel_speeds = np.asarray(status.wheel_speeds, dtype=float).tolist()
    msg.wheel_momentum = np.asarray(status.wheel_momentum, dtype=float).tolist()
    msg.momentum_dumping = bool(status.dumping)
    msg.propellant_used = float(status.propellant)
