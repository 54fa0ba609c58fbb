"""
spart_controller's base actuators: wheel speeds in, thruster and wheel commands out (rclpy).

With the parameter ``actuators_file`` (the YAML of :mod:`spart_ros.core.actuators`) the controller
drives the base's reaction wheels and thrusters as ros2_control forward command controllers take
them: one std_msgs/Float64MultiArray per group on ``<controller>/commands`` (relative names: the
node's namespace), ``data[i]`` for the i-th actuator of the group in the file's order (wheels:
motor torque [N m]; thrusters: force [N]).  Every command of the controller sends both groups
(before the arm's efforts: a lockstep plant steps on the arm's), a stop command sends zeros to
both.  The wheels' speeds come from a sensor_msgs/JointState (``wheel_states_topic``, by name:
spart_sim publishes them there, and in joint_states).
"""

import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray

from ..core.actuators import load_actuators

__all__ = ['BaseActuatorsIO']


class BaseActuatorsIO:
    """
    Publishers and the wheel-speed subscription of the base actuators (module docstring).

    ``node``: the controller node; ``p``: its parameters; ``qos``: of commands and inputs;
    ``guard(callback, what)``: the node's callback guard.
    """

    def __init__(self, node, p, qos, guard):
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
        self._sub = (
            node.create_subscription(
                JointState, p['wheel_states_topic'], guard(self._on_wheels, 'wheel states'), qos
            )
            if a.wheels
            else None
        )

    @property
    def topics(self):
        return [
            x.topic_name
            for x in (self._pub_wheels, self._pub_thrusters, self._sub)
            if x is not None
        ]

    def _on_wheels(self, msg):
        """Keep the wheels' speeds by name; give them to the controller once all are known."""
        if len(msg.velocity) != len(msg.name):
            return
        for name, v in zip(msg.name, msg.velocity):
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
        if self._pub_wheels is not None:
            self._pub_wheels.publish(Float64MultiArray(data=np.asarray(wheels).tolist()))
        if self._pub_thrusters is not None:
            self._pub_thrusters.publish(Float64MultiArray(data=np.asarray(thrusters).tolist()))

    def flush(self, timeout):
        from rclpy.duration import Duration

        for pub in (self._pub_wheels, self._pub_thrusters):
            if pub is not None:
                pub.wait_for_all_acked(Duration(nanoseconds=int(timeout * 1e9)))

    def destroy(self):
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
