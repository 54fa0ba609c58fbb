"""
The space-robot modes of the INSTALLED spart_controller.

Closing the loop on the INSTALLED spart_sim (MuJoCo) over real topics: a 7-DoF arm
(test/data/urdf/arm7_floating.urdf) on a 200 kg free-floating spacecraft (its 5 kg base made
heavier: with the arm outweighing the base, J* is near-singular and a 4.5 cm/s end-effector motion
spins the base at 40 deg/s), zero gravity, effort interface (Floating_ID of the velocity
reference's accelerations). End-effector poses, base attitudes and base kinetic energies are
computed here, with the core, from the joint states and odometry the sim publishes (every state
recorded, by its stamp: sim time).

- resolved_rate (lockstep, sim time): an end-effector straight line (twist 4.5 cm/s for 2 s)
  followed along the path, sampled at every recorded state: within PATH_TOLERANCE (0.5 mm) of
  the line, the end-effector orientation held to 0.1 deg (all six task rows, zero angular twist),
  the speed along the line that of the twist to 3 % over the motion's middle; the end point to
  5 mm + 10 % of its length (the joint-rate loop lags by 1/velocity_gain = 0.1 s), the base
  turns (> 0.2 deg: the arm's reaction), a pose target is reached to 5 mm, and a twist that stops
  coming stops the arm;
- the velocity interface publishes the law's joint rates, checked against the pure law in this
  process for the same state (no simulator): a twist in the world frame, one in the base link
  frame (rotated here) give the same command, a twist in another frame is rejected.

The laws' other closed-loop checks (reactionless on a line, desired_reaction's base attitude,
the minimum base energy against resolved rate, a pose goal along a line) run offline on the same
MuJoCo plant (test_space_modes_offline.py, test_ee_goals.py; test_closed_loop.py shows the
offline loop equals the nodes' lockstep loop): what they check is the law, not the transport.
"""

import time
from types import SimpleNamespace

from builtin_interfaces.msg import Time
from core_helpers import urdf_path
from geometry_msgs.msg import PoseStamped, QuaternionStamped, TwistStamped
from nav_msgs.msg import Odometry
from node_helpers import RELIABLE_QOS, RosTestNode, scaled, start_node, WaitTimeout
import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from sensor_msgs.msg import JointState
from spart_interfaces.msg import ControllerStatus
from spart_ros import spart
from spart_ros.control.space_modes import SpaceMode, SpaceReferences
from spart_ros.core.attitude import quaternion_from_ros, quaternion_to_ros
from spart_ros.core.fast import FastDynamics
from std_msgs.msg import Float64MultiArray

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.filterwarnings('ignore::spart_ros.core.errors.SpartWarning'),
    pytest.mark.realtime,
]  # closed loops on a real-time sim

URDF = (
    open(urdf_path('arm7_floating'))
    .read()
    .replace(
        '<mass value="5"/>\n      <inertia ixx="0.0260417" ixy="0" ixz="0" iyy="0.0260417" '
        'iyz="0" izz="0.0333333"/>',
        '<mass value="200"/>\n      <inertia ixx="20" ixy="0" ixz="0" iyy="24" iyz="0" izz="28"/>',
    )
)
ROBOT = spart.urdf2robot(URDF)[0]
assert ROBOT.base_link.mass == 200.0
Q0 = [0.3, 0.6, -0.2, -1.2, 0.4, 0.8, 0.1]  # away from singular (straight) configurations
#: where the reactionless solution of the line is well conditioned (joint rates <= 0.16 rad/s;
#: at Q0 it needs 0.77 rad/s and turns the end effector at 0.7 rad/s)
Q_REACTIONLESS = [1.36, -0.88, -0.2, -1.0, -0.53, -0.51, 0.32]
EE = 'arm_tool'
TIMEOUT = 0.1  # s: reference_timeout: the last twist acts this long after it arrived
#: m: largest distance of the end effector from the commanded line, at any recorded state of the
#: motion (measured 0.01 mm resolved rate, 0.03 mm reactionless, real time on the loaded 2-vCPU VM)
PATH_TOLERANCE = 0.0005
#: the sim advances 2 ms (2 physics steps) per command; it republishes a state nobody answered
LOCKSTEP = {'lockstep': True, 'lockstep_steps': 2, 'lockstep_republish_period': 0.5}


@pytest.fixture(scope='module')
def ros():
    node = RosTestNode('test_controller_space_modes')
    yield node
    node.close()


class Loop:
    """
    spart_sim + spart_controller (``mode``) in namespace ``ns``, and what the test sees of them.

    Every joint state and odometry message, by stamp. ``lockstep``: the sim advances only on
    commands.
    """

    def __init__(self, ros, ns, mode, q0=Q0, lockstep=False, **controller):
        self.ros, self.ns = ros, ns
        sim = {
            'robot_description': URDF,
            'base': 'floating',
            'gravity': [0.0, 0.0, 0.0],
            'publish_rate': 250.0,
            'initial_joint_names': list(ROBOT.q_names),
            'initial_joint_positions': list(q0),
        }
        if lockstep:
            sim.update(LOCKSTEP)
            controller.setdefault('state_timeout', 2.0)  # a busy machine may hold the loop up
        self.sim = start_node('spart_ros', 'sim_node', namespace=ns, parameters=sim)
        self.ctl = start_node(
            'spart_ros',
            'controller_node',
            namespace=ns,
            parameters=dict(
                mode=mode,
                base='floating',
                world_frame='odom',
                commands_topic='effort_controller/commands',
                ee_link=EE,
                robot_description_topic='robot_description',
                status_rate=20.0,
                **{'reference_timeout': TIMEOUT, **controller},
            ),
        )
        self.states = {}  # stamp (ns) -> [q, (R_b, p_b, v_b, w_b)]
        self.status = ros.subscribe(
            ControllerStatus, f'/{ns}/spart_controller/status', RELIABLE_QOS
        )
        ros.node.create_subscription(JointState, f'/{ns}/joint_states', self._on_js, RELIABLE_QOS)
        ros.node.create_subscription(Odometry, f'/{ns}/odom', self._on_odom, RELIABLE_QOS)
        self.twist = ros.publisher(TwistStamped, f'/{ns}/spart_controller/ee_twist', RELIABLE_QOS)
        self.pose = ros.publisher(PoseStamped, f'/{ns}/spart_controller/ee_pose', RELIABLE_QOS)
        self.attitude = ros.publisher(
            QuaternionStamped, f'/{ns}/spart_controller/base_attitude', RELIABLE_QOS
        )
        self.mode = SpaceMode(
            'resolved_rate', FastDynamics(ROBOT), link=EE, frame='link'
        )  # for its ee pose only
        self._wait_commanding(lockstep)

    def _wait_commanding(self, lockstep):
        """
        Until the controller commands.

        Lockstep too: see test_closed_loop.py's LoopRun.start.
        """
        def ready():
            return (
                self.status.messages and self.status.messages[-1].commanding and self._complete()
            )

        self.ros.wait_for(
            ready, scaled(90.0), f'/{self.ns} controller commanding', process=[self.sim, self.ctl]
        )

    def _complete(self):
        return any(q is not None and o is not None for q, o in self.states.values())

    def _on_js(self, msg):
        q = np.array([msg.position[list(msg.name).index(n)] for n in ROBOT.q_names])
        self.states.setdefault(_ns(msg.header.stamp), [None, None])[0] = q

    def _on_odom(self, msg):
        o, tw = msg.pose.pose, msg.twist.twist
        R = quaternion_from_ros(o.orientation.x, o.orientation.y, o.orientation.z, o.orientation.w)
        self.states.setdefault(_ns(msg.header.stamp), [None, None])[1] = (
            R,
            np.array([o.position.x, o.position.y, o.position.z]),
            np.array([tw.linear.x, tw.linear.y, tw.linear.z]),
            np.array([tw.angular.x, tw.angular.y, tw.angular.z]),
        )

    def complete_states(self, t0=-np.inf, t1=np.inf):
        """
        [(t s, q, (R_b, p_b, v_b, w_b))] of the complete states stamped in [t0, t1] s.

        In time order.
        """
        return [
            (stamp * 1e-9, q, o)
            for stamp, (q, o) in sorted(self.states.items())
            if q is not None and o is not None and t0 <= stamp * 1e-9 <= t1
        ]

    def latest(self):
        """(t s, q, R_b, p_b) of the newest complete state."""
        t, q, (R, p, _, _) = self.complete_states()[-1]
        return t, q, R, p

    def ee_pose(self, q, R_b, p_b):
        return self.mode.end_effector_pose(SimpleNamespace(R_b=R_b, p_b=p_b), q)

    def ee_position(self):
        _, q, R_b, p_b = self.latest()
        return self.ee_pose(q, R_b, p_b)[1]

    def ee_path(self, t0, t1):
        """(t (k,), R_ee (k, 3, 3), p_ee (k, 3)) at every complete state in [t0, t1] s."""
        rows = [(t, *self.ee_pose(q, o[0], o[1])) for t, q, o in self.complete_states(t0, t1)]
        return (
            np.array([r[0] for r in rows]),
            np.array([r[1] for r in rows]),
            np.array([r[2] for r in rows]),
        )

    def run_until(self, t_end, what):
        """Spin until a complete state stamped t_end (s, sim time) or later is in."""
        self.ros.wait_for(
            lambda: self.latest()[0] >= t_end,
            60.0 + 10.0 * max(0.0, t_end - self.latest()[0]),
            what,
            process=[self.sim, self.ctl],
        )

    def drive(self, twist, seconds):
        """
        Publish ``twist`` ([angular; linear], world) at 20 Hz for ``seconds`` of sim time.

        Returns (max base rotation in deg from its attitude at the start, sim time at the start,
        sim time at the end).
        """
        # the first twists must reach the controller: a publisher not yet matched (DDS discovery
        # on a busy machine) loses them, and the arm starts late (0.35 s short seen in a CI run).
        # Matched on this side is not enough (the controller's side can match later: 0.37 s short
        # seen): the drive is timed from the first status that echoes the twist (20 Hz)
        self.ros.wait_for_matched(self.twist, process=[self.sim, self.ctl])
        R_start = self.latest()[2]
        msg = TwistStamped()
        msg.header.frame_id = 'odom'
        msg.twist.angular.x, msg.twist.angular.y, msg.twist.angular.z = twist[:3]
        msg.twist.linear.x, msg.twist.linear.y, msg.twist.linear.z = twist[3:]
        n0 = len(self.status)

        def echoed():
            return next(
                (
                    st
                    for st in self.status.messages[n0:]
                    if len(st.task_twist) == 6
                    and np.allclose(st.task_twist, twist, rtol=0, atol=1e-9)
                ),
                None,
            )

        self.twist_started = self.ros.publish_until(
            self.twist,
            lambda: msg,
            echoed,
            timeout=scaled(10.0),
            period=0.05,
            what='a status echoing the twist',
            process=[self.sim, self.ctl],
        )
        t_start = self.latest()[0]
        angle, deadline = 0.0, time.monotonic() + scaled(30.0)
        while self.latest()[0] < t_start + seconds:
            if time.monotonic() > deadline:
                raise WaitTimeout(f'{seconds} s of sim time of the drive not done in 30 s')
            self.twist.publish(msg)
            self.ros.spin_for(0.05)
            angle = max(angle, _angle(R_start, self.latest()[2]))
        self._drive_end = len(self.status)
        return angle, t_start, self.latest()[0]

    def twist_duration(self, twist):
        """
        Return the seconds from the first status carrying ``twist`` to the first without it.

        On the controller's clock (the statuses' stamps, 20 Hz), whatever this process's lag;
        the twist's timeout after the last one ends it.
        """
        n0, small = self._drive_end, 0.1 * np.linalg.norm(twist)
        stopped = self.ros.wait_for(
            lambda: next(
                (
                    st
                    for st in self.status.messages[n0:]
                    if len(st.task_twist) == 6 and np.linalg.norm(st.task_twist) < small
                ),
                None,
            ),
            scaled(10.0),
            'a status without the twist',
            process=[self.sim, self.ctl],
        )
        return _ns(stopped.header.stamp) * 1e-9 - _ns(self.twist_started.header.stamp) * 1e-9

    def publish_pose(self, R, p):
        msg = PoseStamped()
        msg.header.frame_id = 'odom'
        msg.pose.position.x, msg.pose.position.y, msg.pose.position.z = p
        o = msg.pose.orientation
        o.x, o.y, o.z, o.w = quaternion_to_ros(R)
        self.pose.publish(msg)

    def close(self):
        for proc in (self.ctl, self.sim):
            proc.cleanup()


def _ns(t):
    return t.sec * 1_000_000_000 + t.nanosec


def _angle(R1, R2):
    return float(np.degrees(np.arccos(np.clip((np.trace(R1.T @ R2) - 1) / 2, -1, 1))))


def check_line(loop, p0, R0_ee, twist, t_start, t_stop, t_end, orientation=True):
    """
    Check the end effector's path against the commanded line; return the figures.

    The path while a twist (no angular part) drove it from sim time t_start to t_stop, sampled at
    every recorded state up to t_end, against the commanded line p0 + s d (d along the twist):
    distance from the line at most PATH_TOLERANCE; with ``orientation``, the end-effector frame
    within 0.1 deg of R0_ee; the speed along the line over the motion's middle (from 0.5 s after
    it starts, past the rate loop's lag, to 0.3 s before t_stop) that of the twist within 3 %.
    Returns (largest distance m, speed m/s, largest rotation deg, states checked).
    """
    t, R, p = loop.ee_path(t_start, t_end)
    assert len(t) > 100, f'only {len(t)} states recorded during the motion'
    speed_ref = np.linalg.norm(twist[3:])
    d = twist[3:] / speed_ref
    rel = p - p0
    along = rel @ d
    off = np.linalg.norm(rel - along[:, None] * d, axis=1)
    assert off.max() < PATH_TOLERANCE, (
        f'{off.max() * 1e3:.2f} mm off the line at sim time {t[off.argmax()]:.3f} s'
    )
    turned = max(_angle(R0_ee, Ri) for Ri in R)
    if orientation:
        assert turned < 0.1, f'the end-effector frame turned {turned:.3f} deg'
    started = t[np.argmax(along > 0.001)]
    middle = (t > started + 0.5) & (t < t_stop - 0.3)
    assert middle.sum() > 50, 'too short a motion to measure its speed'
    speed = np.polyfit(t[middle], along[middle], 1)[0]
    assert abs(speed - speed_ref) < 0.03 * speed_ref, (
        f'speed along the line {speed:.4f} m/s, commanded {speed_ref:.4f}'
    )
    return off.max(), speed, turned, len(t)


V = np.array([0.0, 0.0, 0.0, 0.0, 0.04, -0.02])  # 4.5 cm/s, mostly sideways


def test_resolved_rate_tracks_a_line_a_pose_target_and_stops(ros):
    # in lockstep, with the controller on the sim's clock (its statuses stamped in sim time): the
    # law, not this machine's load, moves the arm. In real time a starved controller let the
    # free-floating arm coast on its last effort (10 mm too far, or 9 % fast, in fresh clones)
    # the lockstep loop runs faster than real time (1.7x here, idle): twists sent every 0.05 s of
    # wall time came more than 0.1 s of sim time apart whenever this process was late by 10 ms,
    # and the arm stopped between them (10 % short seen) while the 20 Hz statuses still showed the
    # twist: a timeout of 0.5 s of sim time outlasts such gaps
    loop = Loop(
        ros, 'rr', 'resolved_rate', lockstep=True, use_sim_time=True, reference_timeout=0.5
    )
    try:
        _, q, R_b, p_b = loop.latest()
        R0_ee, p0 = loop.ee_pose(q, R_b, p_b)
        turn, t_start, t_stop = loop.drive(V, 2.0)
        duration = loop.twist_duration(V)  # the twist times out: the arm stops
        ros.spin_for(0.8)
        p1 = loop.ee_position()
        off, speed, turned, k = check_line(loop, p0, R0_ee, V, t_start, t_stop, loop.latest()[0])
        print(
            f'\nresolved_rate line: {k} states, at most {off * 1e3:.3f} mm off the line, end '
            f'effector turned {turned:.4f} deg, {speed * 1e3:.2f} mm/s along it '
            f'(commanded {np.linalg.norm(V[3:]) * 1e3:.2f})'
        )
        moved = p1 - p0
        # the controller's time (sim time) from its first status carrying the twist to its first
        # without it (the timeout after the last one; this process's lag does not enter): the
        # displacement along V, nothing across it
        expected = V[3:] * duration
        assert np.linalg.norm(moved - expected) < 0.005 + np.linalg.norm(V[3:]) * 0.1, (
            moved,
            expected,
        )
        assert turn > 0.2, (
            f'the base should turn under resolved-rate control, turned {turn:.3f} deg'
        )
        # stopped: the end effector stays where it is
        ros.spin_for(0.5)
        assert np.linalg.norm(loop.ee_position() - p1) < 0.002
        # a pose target 3 cm away: reached (P law, pose_gain 1/s) within a few time constants
        target = p1 + np.array([0.03, 0.0, 0.01])
        _, q, R_b, p_b = loop.latest()
        loop.publish_pose(loop.ee_pose(q, R_b, p_b)[0], target)
        ros.wait_for(
            lambda: np.linalg.norm(loop.ee_position() - target) < 0.005,
            12.0,
            'the pose target',
            process=[loop.sim, loop.ctl],
        )
        st = loop.status.messages[-1]
        assert st.commanding and len(st.momentum) == 6 and len(st.joint_limit_distance) == 7
        assert st.manipulability > 0 and 0 < st.dynamic_singularity <= 1
        assert st.rate_scale == 1.0 and st.feasible, st.message
        # started at rest, no external force: zero momentum in the statuses built from a joint
        # state and the odometry of its tick; the two topics arrive in either order, and a status
        # built with the previous tick's odometry is off by the base's change in one tick (4.5e-5
        # seen in a CI run), so most, not all, of the last ten are checked
        recent = loop.status.messages[-10:]
        conserved = [max(abs(x) for x in m.momentum) < 1e-6 for m in recent]
        assert len(recent) == 10 and sum(conserved) >= 6, [list(m.momentum) for m in recent]
        # distance to the nearer URDF limit of each joint, at a state near the status's time
        q = loop.latest()[1]
        lower = np.array(
            [j.limits.lower for j in sorted(ROBOT.joints, key=lambda j: j.q_id) if j.q_id > 0]
        )
        upper = np.array(
            [j.limits.upper for j in sorted(ROBOT.joints, key=lambda j: j.q_id) if j.q_id > 0]
        )
        np.testing.assert_allclose(
            st.joint_limit_distance, np.minimum(q - lower, upper - q), atol=0.01
        )
    finally:
        loop.close()


def test_velocity_interface_publishes_the_law_joint_rates(ros):
    """
    No simulator: states by hand (the base turned and moving).

    The command = the pure law's joint rates for that state and the twist in the world frame. A
    twist given in the base link frame (another twist, so that the command must change) is rotated
    to the world here; one in another frame is rejected (counted, logged naming the frame) and the
    last valid one still applies.  The status: base angular velocity in the base LINK frame (the
    odometry's), the task twist in the world, rate_scale 1.
    """
    ns = 'vi'
    names = list(reversed(ROBOT.q_names))
    proc = start_node(
        'spart_ros',
        'controller_node',
        namespace=ns,
        parameters={
            'mode': 'resolved_rate',
            'base': 'floating',
            'robot_description': URDF,
            'world_frame': 'odom',
            'command_interface': 'velocity',
            'commands_topic': '/vi/commands',
            'command_joints': names,
            'ee_link': EE,
            'reference_timeout': 5.0,
            # states come by hand every 0.1 s and more, and each check reads the last command 0.1 s
            # after its state: the default watchdog (0.1 s) races it with a zero command; the
            # watchdog is not what this test is about
            'state_timeout': 2.0,
            'status_rate': 20.0,
        },
        wait_for=r'spart_controller\]: mode resolved_rate',
        wait_timeout=90.0,
    )
    try:
        cmds = ros.subscribe(Float64MultiArray, '/vi/commands', RELIABLE_QOS)
        status = ros.subscribe(ControllerStatus, '/vi/spart_controller/status', RELIABLE_QOS)
        js = ros.publisher(JointState, '/vi/joint_states', RELIABLE_QOS)
        odom_pub = ros.publisher(Odometry, '/vi/odom', RELIABLE_QOS)
        twist_pub = ros.publisher(TwistStamped, '/vi/spart_controller/ee_twist', RELIABLE_QOS)
        rng = np.random.default_rng(9)
        q, qd = np.array(Q0), rng.standard_normal(7) * 0.1
        v_b, w_b = rng.standard_normal(3) * 0.01, rng.standard_normal(3) * 0.01
        R_b = Rotation.from_rotvec([0.3, -0.2, 0.5]).as_matrix()
        clock = {'sec': 10}

        def twist_msg(tw, frame):
            msg = TwistStamped()
            msg.header.frame_id = frame
            msg.twist.angular.x, msg.twist.angular.y, msg.twist.angular.z = tw[0:3]
            msg.twist.linear.x, msg.twist.linear.y, msg.twist.linear.z = tw[3:6]
            return msg

        def publish(twist):
            t = Time(sec=clock['sec'])
            clock['sec'] += 1
            od = Odometry()
            od.header.stamp = t
            o = od.pose.pose.orientation
            o.x, o.y, o.z, o.w = quaternion_to_ros(R_b)
            od.twist.twist.linear.x, od.twist.twist.linear.y, od.twist.twist.linear.z = v_b
            od.twist.twist.angular.x, od.twist.twist.angular.y, od.twist.twist.angular.z = w_b
            odom_pub.publish(od)
            twist_pub.publish(twist)
            msg = JointState(name=list(ROBOT.q_names), position=list(q), velocity=list(qd))
            msg.header.stamp = t
            js.publish(msg)
            ros.spin_for(0.1)

        mode = SpaceMode('resolved_rate', FastDynamics(ROBOT), 'velocity', link=EE, frame='link')
        base = SimpleNamespace(R_b=R_b, p_b=np.zeros(3), v_b=v_b, w_b=w_b)
        order = [ROBOT.q_names.index(n) for n in names]

        def expected_for(world_twist):
            mode.reset()
            return mode.compute(
                base, q, qd, SpaceReferences(world_twist, None, None, None), 0.0
            ).values[order]

        def command_after(twist, expected):
            """
            Publish states with ``twist`` until a command answers one that had it.

            For at most 20 s (scaled): the node hears this process's new publishers up to ~3 s
            late (DEVELOPERS.md, "A new node hears an old participant late"); until it hears the
            twist its commands are zero, and 40 tries (4 s) once ended on zeros.
            """
            deadline = time.monotonic() + scaled(20.0)
            while time.monotonic() < deadline:
                publish(twist)
                if len(cmds) >= 3 and np.allclose(
                    cmds.messages[-1].data, expected, rtol=1e-8, atol=1e-10
                ):
                    break
            return np.array(cmds.messages[-1].data)

        tw1 = np.array([0.0, 0.0, 0.1, 0.0, 0.05, 0.0])  # [angular; linear], world
        e1 = expected_for(tw1)
        np.testing.assert_allclose(
            command_after(twist_msg(tw1, 'odom'), e1), e1, rtol=1e-8, atol=1e-10
        )
        assert np.abs(e1).max() > 1e-3
        tw2 = np.array([0.05, -0.02, 0.0, 0.03, 0.0, -0.04])
        e2 = expected_for(tw2)
        assert np.abs(e2 - e1).max() > 1e-3, 'the second twist must give another command'
        in_base = twist_msg(np.r_[R_b.T @ tw2[0:3], R_b.T @ tw2[3:6]], ROBOT.base_link.name)
        np.testing.assert_allclose(command_after(in_base, e2), e2, rtol=1e-8, atol=1e-10)
        st = ros.wait_for_message(
            status,
            lambda m: np.allclose(m.task_twist, tw2, atol=1e-12),
            5.0,
            'a status with the base-frame twist in the world frame',
            process=proc,
        )
        np.testing.assert_allclose(
            st.base_angular_velocity, w_b, rtol=0, atol=1e-15
        )  # base link frame
        assert st.rate_scale == 1.0 and st.feasible and st.task_error < 1e-9
        rejected = status.messages[-1].rejected_messages
        for _ in range(3):
            publish(twist_msg(np.ones(6) * 0.1, 'tool0'))
        np.testing.assert_allclose(
            cmds.messages[-1].data, e2, rtol=1e-8, atol=1e-10
        )  # the last valid twist
        ros.wait_for(
            lambda: status.messages[-1].rejected_messages >= rejected + 3,
            5.0,
            'the rejections counted',
            process=proc,
        )
        ros.wait_for(
            lambda: "ee_twist.header.frame_id 'tool0'" in proc.output(),
            5.0,
            'the rejection logged',
            process=proc,
        )
    finally:
        proc.cleanup()
