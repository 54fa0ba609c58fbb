"""
spart_controller's side of a capture: the target's estimates in, the grasp out and in (rclpy).

With a ``target_file`` (the controller's capture unit: :mod:`spart_ros.control.capture_control`):

- ``target_odometry_topic`` nav_msgs/Odometry in: an estimate of the target's link frame l (pose
  in the world frame, LVLH with an orbit; twist of l in l, REP 105), stamped when measured: the
  capture's fixture prediction starts from it (a late estimate is predicted forward);
- ``grasp_topic`` std_msgs/Header out: once per grasp, when the capture's grasp criteria have held
  (stamp: the control time; ``frame_id``: the end-effector link): the plant is to weld the target
  (spart_sim does);
- ``grasp_attached_topic`` geometry_msgs/PoseStamped in: the weld made (stamp: when; pose: the
  target's link frame in the end-effector link's frame): from then on the capture's model carries
  the target there;
- ``orbit_topic`` spart_interfaces/Orbit in (latched; "" = none): the orbit whose LVLH frame is
  the world frame (the fixture's prediction then includes the orbit's motion and loads).
"""

import numpy as np
from std_msgs.msg import Header

from .conversions import pose_to_matrix, stamp_seconds, vector3
from ..core.errors import InputError, SpartError

__all__ = ['CaptureIO']


class CaptureIO:
    """
    The capture's topics of a configured controller node (module docstring).

    ``node``: the ControllerNode (``controller``, ``control_stamp()``, its logger); ``p``: its
    parameters; ``qos``: the topics' QoS; ``latched``: the orbit's; ``guard(callback, what)``.
    """

    def __init__(self, node, p, qos, latched, guard):
        from geometry_msgs.msg import PoseStamped
        from nav_msgs.msg import Odometry

        self.node = node
        self._subs = [
            node.create_subscription(
                Odometry, p['target_odometry_topic'], guard(self._on_odometry, 'target'), qos
            ),
            node.create_subscription(
                PoseStamped, p['grasp_attached_topic'], guard(self._on_attached, 'attached'), qos
            ),
        ]
        if p['orbit_topic']:
            from spart_interfaces.msg import Orbit

            self._subs.append(
                node.create_subscription(
                    Orbit, p['orbit_topic'], guard(self._on_orbit, 'orbit'), latched
                )
            )
        self._pub = node.create_publisher(Header, p['grasp_topic'], qos)
        self.estimates = 0

    @property
    def topics(self):
        return [s.topic_name for s in self._subs] + [self._pub.topic_name]

    @property
    def unit(self):
        return self.node.controller.capture

    def _on_odometry(self, msg):
        unit = self.unit
        if unit is None:
            return
        R, p = pose_to_matrix('target odometry pose', msg.pose.pose)
        v = vector3('target odometry linear', msg.twist.twist.linear)
        w = vector3('target odometry angular', msg.twist.twist.angular)
        state = unit.capture.target.state_from_odometry(R, p, v, w)
        unit.set_estimate(state, stamp_seconds(msg.header.stamp))
        self.estimates += 1

    def _on_attached(self, msg):
        unit = self.unit
        if unit is None or not unit.grasp_wanted:
            return
        R, p = pose_to_matrix('grasp_attached pose', msg.pose)
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = R, p
        t = stamp_seconds(msg.header.stamp)
        try:
            unit.attached(t, T)
        except SpartError as err:
            self.node.get_logger().error(f'grasp_attached: {err}')
            return
        self.node.get_logger().info(
            f'capture: the plant welded the target at t = {t:.6f} s: the model carries it'
        )

    def _on_orbit(self, msg):
        from ..core.orbit import CircularOrbit

        unit = self.unit
        if unit is None:
            return
        try:
            orbit = CircularOrbit.make(
                mean_motion=msg.mean_motion,
                mu=msg.gravitational_parameter,
                body_radius=msg.body_radius,
                model=msg.model,
            )
            unit.set_orbit(orbit)
        except (InputError, SpartError) as err:
            self.node.get_logger().error(f'orbit: {err}: the capture keeps its world frame')
            return
        self.node.get_logger().info(
            f'capture: the world frame is the LVLH frame of the {orbit.describe()}'
        )

    def after_tick(self):
        """Ask the plant for the grasp once, when the capture wants it (after a tick)."""
        unit = self.unit
        if unit is None or not unit.grasp_wanted or unit.grasp_asked is not None:
            return
        sec, nanosec = self.node.control_stamp()
        msg = Header(frame_id=unit.link)
        msg.stamp.sec, msg.stamp.nanosec = int(sec), int(nanosec)
        self._pub.publish(msg)
        unit.grasp_asked = sec + 1e-9 * nanosec
        self.node.get_logger().info(
            f'capture: grasp criteria held at t = {unit.grasp_asked:.6f} s: grasp requested on '
            f'{self._pub.topic_name}'
        )

    def destroy(self):
        for s in self._subs:
            self.node.destroy_subscription(s)
        self.node.destroy_publisher(self._pub)
