"""
spart_sim's target: its odometry as a pose estimator gives it, and the weld at the grasp (rclpy).

With the parameter ``target_file`` (a YAML or URDF: :mod:`spart_ros.core.target`) the plant has a
free-flying target (:mod:`spart_ros.sim.target_body`: a body of its own, under the same orbit,
welded to ``grasp_link`` at the grasp).  Then:

- ``target_odometry_topic`` nav_msgs/Odometry: the target's link frame l as a pose estimator
  reports it: pose in the world frame (``orbit_frame``, LVLH, with an orbit; else ``odom_frame``),
  twist of l in l (REP 105; relative to LVLH with an orbit), ``child_frame_id`` ``target_frame``;
  one per ``target_period`` s of simulated time (0: with every state), with white noise
  (``target_noise``: standard deviations of the position [m], the attitude [rad, a rotation
  vector in l], the linear and angular velocity [m/s, rad/s]; ``target_noise_seed``) and
  ``target_delay`` s late (stamped when it was measured: the estimate of t is published with the
  state of t + delay).  The same pose goes on ``/tf`` (world frame -> ``target_frame``) beside the
  base's when tf2_msgs is installed;
- ``grasp_topic`` std_msgs/Header in: the controller asks for the grasp (a capture's grasp
  criteria held): the plant welds the target to ``grasp_link`` where it is, once;
- ``grasp_attached_topic`` geometry_msgs/PoseStamped out: the weld made: stamped with the
  plant's time of the weld, ``frame_id`` the grasp link, the pose of the target's link frame in
  the grasp link's frame (what the weld holds, and what the controller's model carries);
- ``grasp_impulse_topic`` geometry_msgs/WrenchStamped out, once, 10 ms after the weld (its
  transient): the impulse the target received at the grasp (``force``: linear [N s], ``torque``:
  angular about its CoM [N m s], world axes), its momentum change over those 10 ms.

A ``~/reset`` puts the target back at its initial state, released.
"""

from geometry_msgs.msg import PoseStamped, WrenchStamped
from nav_msgs.msg import Odometry
import numpy as np
from std_msgs.msg import Header

from ..sim.target_body import PoseEstimator, SETTLE

__all__ = ['SimTargetIO']


class SimTargetIO:
    """
    The target's publishers and subscription on a sim node (module docstring).

    ``node``: the sim node (``get_logger``, its ``_messages.stamp``); ``plant``: a plant with a
    ``target``; ``p``: the node's parameters; ``world``: the odometry's frame; ``qos``: the state
    topics' QoS; ``events``: the reliable QoS of the grasp topics; ``guard(callback, what)``.
    """

    def __init__(self, node, plant, p, world, qos, events, guard):
        self.node, self.plant, self.body = node, plant, plant.target
        self.frame = p['target_frame'] or self.body.target.name
        self.estimator = PoseEstimator(
            p['target_period'], p['target_noise'], p['target_delay'], p['target_noise_seed']
        )
        self._msg = Odometry()
        self._msg.header.frame_id, self._msg.child_frame_id = world, self.frame
        self._pub = node.create_publisher(Odometry, p['target_odometry_topic'], qos)
        self._pub_attached = node.create_publisher(PoseStamped, p['grasp_attached_topic'], events)
        self._pub_impulse = node.create_publisher(WrenchStamped, p['grasp_impulse_topic'], events)
        self._settle_at = None  # ns: when the grasp's impulse is read
        self._sub = node.create_subscription(
            Header, p['grasp_topic'], guard(self._on_grasp, 'grasp'), events
        )
        self.last = None  # the last odometry published (for /tf)

    @property
    def topics(self):
        pubs = (self._pub, self._pub_attached, self._pub_impulse)
        return [self._sub.topic_name], [p.topic_name for p in pubs]

    def describe(self):
        """Return one line for the log: the target, its grasp link, its estimates."""
        t = self.body.target
        e = self.estimator
        return (
            f'target {t.name!r} ({t.mass:g} kg, fixture {t.fixture_name!r}) welded to '
            f'{self.body.link!r} at the grasp; odometry on {self._pub.topic_name} '
            + (f'every {e.period:g} s' if e.period > 0 else 'with every state')
            + (f', noise {e.noise.tolist()}' if e.noise.any() else '')
            + (f', {e.delay:g} s late' if e.delay > 0 else '')
            + f'; grasp requests on {self._sub.topic_name}, the weld on '
            f'{self._pub_attached.topic_name}'
        )

    def reset(self):
        """Forget the estimates not published yet (after a plant reset: the target is back)."""
        self.estimator.reset()
        self.last = None
        self._settle_at = None

    def publish(self, time_ns):
        """Publish the estimates due at plant time ``time_ns`` [ns] (oldest first)."""
        if self._settle_at is not None and time_ns >= self._settle_at:
            self._settle_at = None
            self._publish_impulse(self.body.settle())
        due = self.estimator.observe(time_ns * 1e-9, self.body.odometry)
        msg = self._msg
        for t, o in due:
            msg.header.stamp = self.node._messages.stamp(int(round(t * 1e9)))
            pose, twist = msg.pose.pose, msg.twist.twist
            pose.position.x, pose.position.y, pose.position.z = (float(x) for x in o.position)
            q = pose.orientation
            q.x, q.y, q.z, q.w = (float(x) for x in o.orientation)
            twist.linear.x, twist.linear.y, twist.linear.z = (float(x) for x in o.linear)
            twist.angular.x, twist.angular.y, twist.angular.z = (float(x) for x in o.angular)
            self._pub.publish(msg)
            self.last = msg
        return bool(due)

    def _on_grasp(self, msg):
        body = self.body
        if body.attached:
            return
        grasp = body.attach()
        out = PoseStamped()
        out.header.stamp = self.node._messages.stamp(self.plant.time_ns)
        out.header.frame_id = body.link
        T = grasp.T_link_target
        out.pose.position.x, out.pose.position.y, out.pose.position.z = (
            float(x) for x in T[:3, 3]
        )
        from ..sim.plant import _rotation_quaternion

        q = _rotation_quaternion(T[:3, :3].copy())
        o = out.pose.orientation
        o.x, o.y, o.z, o.w = (float(x) for x in q)
        self._pub_attached.publish(out)
        self._settle_at = self.plant.time_ns + int(round(SETTLE * 1e9))
        self.node.get_logger().info(
            f'grasp: target {body.target.name!r} welded to {body.link!r} at t = '
            f'{self.plant.time:.6f} s (asked at {msg.stamp.sec + 1e-9 * msg.stamp.nanosec:.6f} s)'
        )

    def _publish_impulse(self, grasp):
        msg = WrenchStamped()
        msg.header.stamp = self.node._messages.stamp(int(round(grasp.time * 1e9)))
        msg.header.frame_id = self._msg.header.frame_id
        j = grasp.impulse
        msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z = (float(x) for x in j[0:3])
        msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = (float(x) for x in j[3:6])
        self._pub_impulse.publish(msg)
        self.node.get_logger().info(
            f'grasp: the target received {np.linalg.norm(j[3:6]):.4g} N s and '
            f"{np.linalg.norm(j[0:3]):.4g} N m s (its momentum change over the weld's transient)"
        )
