"""
spart_sim's per-state messages as serialized templates (message types, no rclpy publishing).

At 1 kHz the sim publishes, for every state, /clock, odometry, IMU, joint_states and (with base
actuators) the wheels' JointState and the ThrusterState.  Building each as a message object and
letting rclpy convert it costs more than the physics step (rclpy's publish of an Odometry object
takes ~50 us here, of its bytes ~20 us), so :class:`SerializedStates` serializes each message
once, filled with sentinel values, finds where the sentinels are (:func:`.messages.template`),
and for every state writes the plant's readouts into those bytes: the same bytes as the message
objects (the fields in the same order, from the same readouts), published with
``publish(bytes)``.  A layout it does not recognise raises CdrError (or ValueError): the node
then publishes message objects.
"""

from nav_msgs.msg import Odometry
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState

from .messages import _sentinels, bool_sequence, SENTINEL_STAMP, template
from ..sim.actuation import wheel_reading

__all__ = ['SerializedStates']


class SerializedStates:
    """
    The serialized per-state messages of a plant (see the module docstring).

    ``plant``: the MujocoPlant; ``world_frame``: the odometry's frame (``odom`` or the orbit's
    frame); ``base_frame``: the odometry's child, the IMU's and the actuator states' frame;
    ``serialize``: rclpy.serialization.serialize_message.  Each ``*_bytes(sec, nanosec)`` returns
    the message of the plant's current state with that stamp (bytes).
    """

    def __init__(self, plant, world_frame, base_frame, serialize):
        self.plant = plant
        self._count = 0
        stamp = SENTINEL_STAMP
        self.clock = template(serialize(Clock(clock=stamp)), {})
        self._check(self.clock, 'Clock')

        n = len(plant.sorted_joint_names)
        pos, vel, eff = self._next(n), self._next(n), self._next(n)
        js = JointState(name=list(plant.sorted_joint_names), position=pos, velocity=vel)
        js.effort, js.header.stamp = eff, stamp
        self.joints = template(serialize(js), {'position': pos, 'velocity': vel, 'effort': eff})
        self._check(self.joints, 'JointState')

        odom = Odometry()
        odom.header.stamp, odom.header.frame_id = stamp, world_frame
        odom.child_frame_id = base_frame
        p, q, v, w = self._next(3), self._next(4), self._next(3), self._next(3)
        pose, twist = odom.pose.pose, odom.twist.twist
        pose.position.x, pose.position.y, pose.position.z = p
        o = pose.orientation
        o.x, o.y, o.z, o.w = q
        twist.linear.x, twist.linear.y, twist.linear.z = v
        twist.angular.x, twist.angular.y, twist.angular.z = w
        self.odometry = template(
            serialize(odom), {'position': p, 'orientation': q, 'linear': v, 'angular': w}
        )
        self._check(self.odometry, 'Odometry')

        imu = Imu()
        imu.header.stamp, imu.header.frame_id = stamp, base_frame
        q, w, a = self._next(4), self._next(3), self._next(3)
        o = imu.orientation
        o.x, o.y, o.z, o.w = q
        imu.angular_velocity.x, imu.angular_velocity.y, imu.angular_velocity.z = w
        imu.linear_acceleration.x, imu.linear_acceleration.y, imu.linear_acceleration.z = a
        self.imu = template(
            serialize(imu), {'orientation': q, 'angular_velocity': w, 'linear_acceleration': a}
        )
        self._check(self.imu, 'Imu')

        self.wheels = self.thrusters = None
        a = plant.actuation
        if a is not None and a.n_wheels:
            k = a.n_wheels
            pos, vel, eff = self._next(k), self._next(k), self._next(k)
            msg = JointState(name=list(a.actuators.wheel_names), position=pos, velocity=vel)
            msg.effort, msg.header.stamp, msg.header.frame_id = eff, stamp, base_frame
            self.wheels = template(
                serialize(msg), {'position': pos, 'velocity': vel, 'effort': eff}
            )
            self._check(self.wheels, 'the wheels JointState')
        if a is not None and a.n_thrusters:
            from spart_interfaces.msg import ThrusterState

            k = a.n_thrusters
            cmd, force, impulse, used = self._next(k), self._next(k), self._next(k), self._next(1)
            firings = [0x5EED0000_00000000 + 0x1000 * j + 7 for j in range(k)]
            msg = ThrusterState(name=list(a.actuators.thruster_names))
            msg.header.stamp, msg.header.frame_id = stamp, base_frame
            msg.commanded, msg.force, msg.impulse, msg.firings = cmd, force, impulse, firings
            msg.propellant_used = used[0]
            msg.firing = [False] * k
            off = serialize(msg)
            msg.firing = [True] * k
            firing = bool_sequence(off, serialize(msg), k)  # where the bools are
            self.thrusters = template(
                off,
                {
                    'commanded': cmd,
                    'force': force,
                    'impulse': impulse,
                    'propellant': used,
                    'firings': firings,
                },
                types={'firings': 'Q'},
                located={'firing': (firing, '?')},
            )
            self._check(self.thrusters, 'ThrusterState')

    def _next(self, count):
        values = _sentinels(count, self._count)
        self._count += count
        return values

    @staticmethod
    def _check(t, what):
        from .cdr import CdrError

        if len(t.stamps) != 1:
            raise CdrError(f'{what}: {len(t.stamps)} stamps found, expected 1')

    # -- one state -------------------------------------------------------------------------
    def clock_bytes(self, sec, nanosec):
        t = self.clock
        t.set_stamp(sec, nanosec)
        return t.to_bytes()

    def joint_state_bytes(self, sec, nanosec):
        r, t = self.plant.joint_state(), self.joints
        t.set_stamp(sec, nanosec)
        t.set_field('position', r.positions)
        t.set_field('velocity', r.velocities)
        t.set_field('effort', r.efforts)
        return t.to_bytes()

    def odometry_bytes(self, sec, nanosec):
        r, t = self.plant.odometry(), self.odometry
        t.set_stamp(sec, nanosec)
        t.set_field('position', r.position)
        t.set_field('orientation', r.orientation)
        t.set_field('linear', r.linear)
        t.set_field('angular', r.angular)
        return t.to_bytes()

    def imu_bytes(self, sec, nanosec):
        r, t = self.plant.imu(), self.imu
        t.set_stamp(sec, nanosec)
        t.set_field('orientation', r.orientation)
        t.set_field('angular_velocity', r.angular_velocity)
        t.set_field('linear_acceleration', r.linear_acceleration)
        return t.to_bytes()

    def wheels_bytes(self, sec, nanosec, reading=None):
        """Return the wheels' JointState (``reading``: their :data:`WheelReading`, None: read)."""
        r = wheel_reading(self.plant) if reading is None else reading
        t = self.wheels
        t.set_stamp(sec, nanosec)
        t.set_field('position', r.positions)
        t.set_field('velocity', r.speeds)
        t.set_field('effort', r.torques)
        return t.to_bytes()

    def thrusters_bytes(self, sec, nanosec):
        r, t = self.plant.actuation.thruster_reading(), self.thrusters
        t.set_stamp(sec, nanosec)
        t.set_field('commanded', r.commanded)
        t.set_field('force', r.forces)
        t.set_field('firing', r.firing)
        t.set_field('impulse', r.impulse)
        t.set_field('firings', r.firings)
        t.set_field('propellant', (r.propellant,))
        return t.to_bytes()
