"""
spart_sim's base actuators: their commands in, wheel speeds and thruster firings out (rclpy).

With the parameter ``actuators_file`` (:mod:`spart_ros.core.actuators`) the plant has reaction
wheels (joints of the model: in ``joint_states`` and robot_description too) and thrusters
(:mod:`spart_ros.sim.actuation`).  As ros2_control's forward command controllers, one
std_msgs/Float64MultiArray per group, ``<controller>/commands`` (the file's controller names,
relative: the node's namespace): ``data[i]`` = the i-th wheel's motor torque [N m] / the i-th
thruster's force [N] (on/off: > 0 opens its valve), in the file's order; a wrong length or a
non-finite value is dropped and logged, the previous command stays (as for the arm).  With each
state, each when it has a subscriber: ``wheel_states_topic`` sensor_msgs/JointState (the wheels:
rotor angle and speed relative to the base, effort = the motor torque applied, after the torque
and speed limits) and ``thruster_states_topic`` spart_interfaces/ThrusterState (commands, forces,
firings, impulse, propellant).  The limits' clamps are counted and warned (throttled).
"""

import time

from rclpy.serialization import deserialize_message
from sensor_msgs.msg import JointState
from spart_interfaces.msg import ThrusterState
from std_msgs.msg import Float64MultiArray

from .cdr import CdrError, parse_float64_array
from ..sim.actuation import wheel_reading
from ..sim.commands import CommandRejected

__all__ = ['SimActuatorsIO']


class SimActuatorsIO:
    """
    Subscriptions and publishers of a plant's base actuators (module docstring).

    ``node``: the sim node (its ``_error_throttled``, ``_log_limiter``); ``plant``: a plant with
    ``actuation``; ``p``: the node's parameters; ``qos``; ``guard(callback, what)``.
    """

    def __init__(self, node, plant, p, qos, guard):
        self.node, self.plant = node, plant
        a = self.actuation = plant.actuation
        act = a.actuators
        self._subs, self._pubs = [], []
        if a.n_wheels:
            self._subs.append(
                node.create_subscription(
                    Float64MultiArray,
                    f'{act.wheel_controller}/commands',
                    guard(lambda m: self._accept('wheels', a.set_wheel_torques, m), 'wheels'),
                    qos,
                    raw=True,
                )
            )
            self._pub_wheels = node.create_publisher(JointState, p['wheel_states_topic'], qos)
            self._pubs.append(self._pub_wheels)
            self._wheels = JointState(name=list(act.wheel_names))
        if a.n_thrusters:
            self._subs.append(
                node.create_subscription(
                    Float64MultiArray,
                    f'{act.thruster_controller}/commands',
                    guard(
                        lambda m: self._accept('thrusters', a.set_thruster_commands, m),
                        'thrusters',
                    ),
                    qos,
                    raw=True,
                )
            )
            self._pub_thrusters = node.create_publisher(
                ThrusterState, p['thruster_states_topic'], qos
            )
            self._pubs.append(self._pub_thrusters)
            self._thrusters = ThrusterState(name=list(act.thruster_names))
        self._limited = (0, 0)
        #: the sim's SerializedStates (the states as bytes), or None: message objects
        self.serialized = None

    @property
    def topics(self):
        return [s.topic_name for s in self._subs], [q.topic_name for q in self._pubs]

    def _accept(self, what, apply, data):
        try:
            values = parse_float64_array(data)  # serialized (raw=True): rclpy's costs more
        except CdrError:  # another encoding: rclpy's deserializer (slower, same values)
            values = deserialize_message(data, Float64MultiArray).data
        try:
            apply(values)
        except CommandRejected as err:
            self.node._error_throttled(
                (what, err.kind), f'{what} command dropped: {err} (the previous stays; throttled)'
            )

    def publish(self, stamp, frame):
        """Publish the wheels' and thrusters' states of this instant, each when subscribed."""
        a = self.actuation
        ser = self.serialized
        if a.n_wheels:
            r = wheel_reading(self.plant)  # read also unsubscribed: the limits' warning
            subscribed = self._pub_wheels.get_subscription_count()
            if subscribed and ser is not None:
                self._pub_wheels.publish(ser.wheels_bytes(stamp.sec, stamp.nanosec, r))
            elif subscribed:
                msg = self._wheels
                msg.header.stamp, msg.header.frame_id = stamp, frame
                msg.position, msg.velocity = r.positions.tolist(), r.speeds.tolist()
                msg.effort = r.torques.tolist()
                self._pub_wheels.publish(msg)
            limited = (int(r.torque_limited.sum()), int(r.speed_limited.sum()))
            if limited != self._limited and self.node._log_limiter.allow(
                'wheel limits', time.monotonic()
            ):
                self.node.get_logger().warning(
                    'reaction wheels at their limits: torque clamped in '
                    f'{dict(zip(r.names, r.torque_limited.tolist()))} steps, speed limit in '
                    f'{dict(zip(r.names, r.speed_limited.tolist()))} steps so far (throttled)'
                )
            self._limited = limited
        if not a.n_thrusters or not self._pub_thrusters.get_subscription_count():
            return
        if ser is not None:
            self._pub_thrusters.publish(ser.thrusters_bytes(stamp.sec, stamp.nanosec))
        else:
            r = a.thruster_reading()
            msg = self._thrusters
            msg.header.stamp, msg.header.frame_id = stamp, frame
            msg.commanded, msg.force = r.commanded.tolist(), r.forces.tolist()
            msg.firing = [bool(x) for x in r.firing]
            msg.impulse, msg.firings = r.impulse.tolist(), [int(x) for x in r.firings]
            msg.propellant_used = float(r.propellant)
            self._pub_thrusters.publish(msg)
