"""The space-robot modes of the INSTALLED spart_controller, closing the loop on the INSTALLED
spart_sim (MuJoCo, real time) over real topics: a 7-DoF arm (test/data/urdf/arm7_floating.urdf)
on a 200 kg free-floating spacecraft (its 5 kg base made heavier: with the arm outweighing the
base, J* is near-singular and a 4.5 cm/s end-effector motion spins the base at 40 deg/s), zero
gravity, effort interface (Floating_ID of the velocity reference's accelerations).  End-effector positions and the base attitude are computed
here from the published odometry and joint states with the core.

- resolved_rate: an end-effector straight line (twist 4.5 cm/s for 2 s) is tracked to 5 mm + 10 %
  of its length (the joint-rate loop lags by 1/velocity_gain = 0.1 s), the base turns (> 0.2 deg:
  the arm's reaction), a pose target is reached to 5 mm, and a twist that stops coming stops the
  arm (reference_timeout);
- reactionless: the same line (position task, 3 rows) with the base attitude kept to < 0.02 deg
  (the 7-joint arm has a 4-dimensional attitude null space);
- the velocity interface publishes the law's joint rates, checked against the pure law in this
  process for the same state (no simulator needed).
"""
import time
from types import SimpleNamespace

import numpy as np
import pytest

from builtin_interfaces.msg import Time
from geometry_msgs.msg import PoseStamped, TwistStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState
from spart_interfaces.msg import ControllerStatus
from std_msgs.msg import Float64MultiArray

from spart_ros import spart
from spart_ros.control.space_modes import SpaceMode, SpaceReferences
from spart_ros.core.attitude import quaternion_from_ros
from spart_ros.core.fast import FastDynamics
from node_helpers import RELIABLE_QOS, RosTestNode, start_node
from core_helpers import urdf_path

pytestmark = [pytest.mark.timeout(300), pytest.mark.filterwarnings('ignore::spart_ros.core.errors.SpartWarning')]

URDF = open(urdf_path('arm7_floating')).read().replace(
    '<mass value="5"/>\n      <inertia ixx="0.0260417" ixy="0" ixz="0" iyy="0.0260417" iyz="0" izz="0.0333333"/>',
    '<mass value="200"/>\n      <inertia ixx="20" ixy="0" ixz="0" iyy="24" iyz="0" izz="28"/>')
ROBOT = spart.urdf2robot(URDF)[0]
assert ROBOT.base_link.mass == 200.0
Q0 = [0.3, 0.6, -0.2, -1.2, 0.4, 0.8, 0.1]           # away from singular (straight) configurations
#: where the reactionless solution of the line is well conditioned (joint rates <= 0.16 rad/s;
#: at Q0 it needs 0.77 rad/s and turns the end effector at 0.7 rad/s)
Q_REACTIONLESS = [1.36, -0.88, -0.2, -1.0, -0.53, -0.51, 0.32]
EE = 'arm_tool'
TIMEOUT = 0.1            # s: reference_timeout: the last twist acts this long after it arrived


@pytest.fixture(scope='module')
def ros():
    node = RosTestNode('test_controller_space_modes')
    yield node
    node.close()


class Loop:
    """spart_sim + spart_controller (``mode``) in namespace ``ns``, and what the test sees of them."""

    def __init__(self, ros, ns, mode, q0=Q0, **controller):
        self.ros, self.ns = ros, ns
        self.sim = start_node('spart_ros', 'sim_node', namespace=ns, parameters=dict(
            robot_description=URDF, base='floating', gravity=[0.0, 0.0, 0.0], publish_rate=250.0,
            initial_joint_names=list(ROBOT.q_names), initial_joint_positions=list(q0)))
        self.ctl = start_node('spart_ros', 'controller_node', namespace=ns, parameters=dict(
            mode=mode, base='floating', world_frame='odom', commands_topic='effort_controller/commands',
            ee_link=EE, robot_description_topic='robot_description', status_rate=20.0, reference_timeout=TIMEOUT,
            **controller))
        self.states = {}          # stamp -> [q, odom]
        self.status = ros.subscribe(ControllerStatus, f'/{ns}/spart_controller/status', RELIABLE_QOS)
        ros.node.create_subscription(JointState, f'/{ns}/joint_states', self._on_js, RELIABLE_QOS)
        ros.node.create_subscription(Odometry, f'/{ns}/odom', self._on_odom, RELIABLE_QOS)
        self.twist = ros.publisher(TwistStamped, f'/{ns}/spart_controller/ee_twist', RELIABLE_QOS)
        self.pose = ros.publisher(PoseStamped, f'/{ns}/spart_controller/ee_pose', RELIABLE_QOS)
        self.mode = SpaceMode('resolved_rate', FastDynamics(ROBOT), link=EE, frame='link')   # for its ee pose only
        ros.wait_for(lambda: self.status.messages and self.status.messages[-1].commanding and self._complete(), 90.0,
                     f'/{ns} controller commanding', process=[self.sim, self.ctl])

    def _complete(self):
        return any(q is not None and o is not None for q, o in self.states.values())

    def _on_js(self, msg):
        q = np.array([msg.position[list(msg.name).index(n)] for n in ROBOT.q_names])
        self.states.setdefault(_ns(msg.header.stamp), [None, None])[0] = q

    def _on_odom(self, msg):
        o = msg.pose.pose
        R = quaternion_from_ros(o.orientation.x, o.orientation.y, o.orientation.z, o.orientation.w)
        self.states.setdefault(_ns(msg.header.stamp), [None, None])[1] = (R, np.array([o.position.x, o.position.y,
                                                                                         o.position.z]))

    def latest(self):
        """(stamp, q, R_b, p_b) of the newest complete state."""
        stamp = max(s for s, (q, o) in self.states.items() if q is not None and o is not None)
        q, (R, p) = self.states[stamp]
        return stamp, q, R, p

    def ee_position(self):
        _, q, R_b, p_b = self.latest()
        base = SimpleNamespace(R_b=R_b, p_b=p_b)
        return self.mode.end_effector_pose(base, q)[1]

    def drive(self, twist, seconds):
        """Publish ``twist`` ([angular; linear], world) at 20 Hz for ``seconds``; returns the max base
        rotation (deg) from its attitude at the start."""
        R_start = self.latest()[2]
        msg = TwistStamped()
        msg.twist.angular.x, msg.twist.angular.y, msg.twist.angular.z = twist[:3]
        msg.twist.linear.x, msg.twist.linear.y, msg.twist.linear.z = twist[3:]
        angle, end = 0.0, time.monotonic() + seconds
        while time.monotonic() < end:
            self.twist.publish(msg)
            self.ros.spin_for(0.05)
            angle = max(angle, _angle(R_start, self.latest()[2]))
        return angle

    def close(self):
        for proc in (self.ctl, self.sim):
            proc.cleanup()


def _ns(t):
    return t.sec * 1_000_000_000 + t.nanosec


def _angle(R1, R2):
    return float(np.degrees(np.arccos(np.clip((np.trace(R1.T @ R2) - 1) / 2, -1, 1))))


V = np.array([0.0, 0.0, 0.0, 0.0, 0.04, -0.02])      # 4.5 cm/s, mostly sideways


def test_resolved_rate_tracks_a_line_a_pose_target_and_stops(ros):
    loop = Loop(ros, 'rr', 'resolved_rate')
    try:
        p0 = loop.ee_position()
        turn = loop.drive(V, 2.0)
        ros.spin_for(0.8)                     # the twist times out: the arm stops
        p1 = loop.ee_position()
        moved = p1 - p0
        # 2 s of twist, + the timeout of the last one: the displacement along V, nothing across it
        expected = V[3:] * (2.0 + TIMEOUT)
        assert np.linalg.norm(moved - expected) < 0.005 + np.linalg.norm(V[3:]) * 0.1, (moved, expected)
        assert turn > 0.2, f'the base should turn under resolved-rate control, turned {turn:.3f} deg'
        # stopped: the end effector stays where it is
        ros.spin_for(0.5)
        assert np.linalg.norm(loop.ee_position() - p1) < 0.002
        # a pose target 3 cm away: reached (P law, pose_gain 1/s) within a few time constants
        target = p1 + np.array([0.03, 0.0, 0.01])
        msg = PoseStamped()
        msg.header.frame_id = 'odom'
        msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = target
        R = loop.mode.end_effector_pose(SimpleNamespace(R_b=loop.latest()[2], p_b=loop.latest()[3]),
                                        loop.latest()[1])[0]
        from spart_ros.core.attitude import quaternion_to_ros
        x, y, z, w = quaternion_to_ros(R)
        msg.pose.orientation.x, msg.pose.orientation.y, msg.pose.orientation.z, msg.pose.orientation.w = x, y, z, w
        loop.pose.publish(msg)
        ros.wait_for(lambda: np.linalg.norm(loop.ee_position() - target) < 0.005, 12.0, 'the pose target',
                     process=[loop.sim, loop.ctl])
        st = loop.status.messages[-1]
        assert st.commanding and len(st.momentum) == 6 and len(st.joint_limit_distance) == 7
        assert st.manipulability > 0 and 0 < st.dynamic_singularity <= 1
        assert max(abs(x) for x in st.momentum) < 1e-6          # started at rest, no external force
    finally:
        loop.close()


def test_reactionless_keeps_the_base_attitude(ros):
    """The end-effector position task (3 rows) in the 4-dimensional attitude null space of the
    7-joint arm: tracked as the resolved-rate line is, with the base attitude undisturbed."""
    loop = Loop(ros, 'rl', 'reactionless', q0=Q_REACTIONLESS, task_rows=[3, 4, 5])
    try:
        p0 = loop.ee_position()
        turn = loop.drive(V, 2.0)
        ros.spin_for(0.8)
        moved = loop.ee_position() - p0
        expected = V[3:] * (2.0 + TIMEOUT)
        assert turn < 0.02, f'reactionless: the base turned {turn:.4f} deg'
        assert np.linalg.norm(moved - expected) < 0.005 + np.linalg.norm(V[3:]) * 0.1, (moved, expected)
        st = loop.status.messages[-1]
        assert st.feasible and st.mode == 'reactionless', st.message
    finally:
        loop.close()


def test_velocity_interface_publishes_the_law_joint_rates(ros):
    """No simulator: a state by hand; the command = the pure law's joint rates for that state."""
    ns = 'vi'
    names = list(reversed(ROBOT.q_names))
    proc = start_node('spart_ros', 'controller_node', namespace=ns, parameters=dict(
        mode='resolved_rate', base='floating', robot_description=URDF, world_frame='odom', command_interface='velocity',
        commands_topic='/vi/commands', command_joints=names, ee_link=EE, reference_timeout=5.0),
        wait_for=r'spart_controller\]: mode resolved_rate', wait_timeout=90.0)
    try:
        cmds = ros.subscribe(Float64MultiArray, '/vi/commands', RELIABLE_QOS)
        js = ros.publisher(JointState, '/vi/joint_states', RELIABLE_QOS)
        odom_pub = ros.publisher(Odometry, '/vi/odom', RELIABLE_QOS)
        twist_pub = ros.publisher(TwistStamped, '/vi/spart_controller/ee_twist', RELIABLE_QOS)
        rng = np.random.default_rng(9)
        q, qd = np.array(Q0), rng.standard_normal(7) * 0.1
        v_b, w_b = rng.standard_normal(3) * 0.01, rng.standard_normal(3) * 0.01
        twist = TwistStamped()
        twist.twist.linear.y, twist.twist.angular.z = 0.05, 0.1

        def publish(sec):
            t = Time(sec=sec)
            od = Odometry()
            od.header.stamp = t
            od.pose.pose.orientation.w = 1.0
            od.twist.twist.linear.x, od.twist.twist.linear.y, od.twist.twist.linear.z = v_b
            od.twist.twist.angular.x, od.twist.twist.angular.y, od.twist.twist.angular.z = w_b
            odom_pub.publish(od)
            twist_pub.publish(twist)
            msg = JointState(name=list(ROBOT.q_names), position=list(q), velocity=list(qd))
            msg.header.stamp = t
            js.publish(msg)
        sec = 10
        for _ in range(40):                    # until a command answers a state that had the twist
            publish(sec)
            ros.spin_for(0.1)
            sec += 1
            if len(cmds) >= 3:
                break
        cmd = cmds.messages[-1]
        assert len(cmd.data) == 7
        mode = SpaceMode('resolved_rate', FastDynamics(ROBOT), 'velocity', link=EE, frame='link')
        base = SimpleNamespace(R_b=np.eye(3), p_b=np.zeros(3), v_b=v_b, w_b=w_b)
        refs = SpaceReferences(np.array([0.0, 0.0, 0.1, 0.0, 0.05, 0.0]), None, None, None)
        expected = mode.compute(base, q, qd, refs, float(sec)).values
        order = [ROBOT.q_names.index(n) for n in names]
        np.testing.assert_allclose(cmd.data, expected[order], rtol=1e-8, atol=1e-10)
        assert np.abs(expected).max() > 1e-3
    finally:
        proc.cleanup()
