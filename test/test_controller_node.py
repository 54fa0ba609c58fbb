"""
The INSTALLED spart_controller node as separate processes over real topics and services.

Expected efforts come from the numpy SPART functions (test/dynamics_reference.py) for the state and
reference the test sends, not from the node's fast path.

Four controller processes (started in parallel, each in its own namespace):
  /ct  computed_torque, KUKA iiwa on a fixed base in gravity, command_joints in a shuffled
       order, an effort limit on one joint, the efforts also as sensor_msgs/JointState;
  /fb  floating_base, SPART's SC_3DoF with odometry;
  /ff  free_flying, the branched two-arm spacecraft: base wrench out;
  /gc  gravity_compensation on a timer (rate).
"""

from pathlib import Path
import re
import time

from builtin_interfaces.msg import Duration, Time
from core_helpers import urdf_path
import dynamics_reference as ref
from geometry_msgs.msg import PoseStamped, Quaternion, WrenchStamped
from nav_msgs.msg import Odometry
from node_helpers import (
    installed_executable,
    LATCHED_QOS,
    RELIABLE_QOS,
    RosTestNode,
    scaled,
    start_node,
    WaitTimeout,
)
import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from sensor_msgs.msg import JointState
from spart_interfaces.msg import ControllerStatus
from spart_ros import spart
from spart_ros.control.trajectory import JointTrajectory as Interpolator
from spart_ros.control.trajectory import Reference
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import SetBool
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.filterwarnings('ignore::spart_ros.core.errors.SpartWarning'),
    pytest.mark.realtime,
]  # the controller's watchdog (state_timeout) runs on the wall clock

ROOT = Path(__file__).resolve().parent.parent
KUKA, SC, BRANCHED = (
    urdf_path(n) for n in ('kuka_iiwa', 'SC_3DoF', 'branched_two_arm_spacecraft')
)
ROBOTS = {
    'ct': spart.urdf2robot(KUKA)[0],
    'fb': spart.urdf2robot(SC)[0],
    'ff': spart.urdf2robot(BRANCHED)[0],
}
ROBOTS['gc'] = ROBOTS['ct']
G = np.array([0.0, 0.0, -9.81])
KP, KD = 50.0, 12.0
CT_JOINTS = [ROBOTS['ct'].q_names[k] for k in (3, 0, 6, 2, 1, 5, 4)]  # not the model order
CT_LIMIT = ('lbr_iiwa_joint_2', 5.0)  # N m: gravity needs more
BASE_GAINS = [2.0, 3.0, 4.0, 5.0]
READY = r'spart_controller\]: mode '


@pytest.fixture(scope='module')
def nodes():
    limits = [CT_LIMIT[1] if j == CT_LIMIT[0] else 1000.0 for j in CT_JOINTS]
    specs = {
        'ct': {
            'mode': 'computed_torque',
            'urdf_path': KUKA,
            'gravity': G.tolist(),
            'kp': KP,
            'kd': KD,
            'joint_dynamics': False,  # the checks' reference is the rigid model's law
            'command_joints': CT_JOINTS,
            'effort_limits': limits,
            'commands_topic': '/ct/commands',
            'joint_command_topic': '/ct/joint_command',
            # the states are off the reference on purpose; when this process pauses longer than
            # state_timeout between two, the controller resumes on the reference
            'max_tracking_error': 1.0,
            'resume_tolerance': 1.0,
        },
        'fb': {
            'mode': 'floating_base',
            'base': 'floating',
            'urdf_path': SC,
            'kp': KP,
            'kd': KD,
            'world_frame': 'odom',
            'commands_topic': '/fb/commands',
            'state_timeout': 0.3,
        },
        'ff': {
            'mode': 'free_flying',
            'base': 'floating',
            'urdf_path': BRANCHED,
            'kp': [KP],
            'kd': KD,
            'world_frame': 'odom',
            'commands_topic': '/ff/commands',
            'base_gains': BASE_GAINS,
            'state_timeout': 0.3,
        },
        # its commands topic has no subscriber until its test subscribes (a lockstep plant
        # whose subscription matches late)
        'late': {
            'mode': 'computed_torque',
            'urdf_path': KUKA,
            'gravity': G.tolist(),
            'commands_topic': '/late/commands',
            'max_tracking_error': 1.0,
            'resume_tolerance': 1.0,
        },
        'gc': {
            'mode': 'gravity_compensation',
            'urdf_path': KUKA,
            'gravity': G.tolist(),
            'rate': 50.0,
            'commands_topic': '/gc/commands',
            'state_timeout': 0.5,
        },
    }
    procs = {
        ns: start_node('spart_ros', 'controller_node', namespace='/' + ns, parameters=p)
        for ns, p in specs.items()
    }
    try:
        for proc in procs.values():
            proc.wait_for_output(READY, 90.0)
        yield procs
    finally:
        for proc in procs.values():
            proc.cleanup()


@pytest.fixture(scope='module')
def ros():
    node = RosTestNode('test_controller_node')
    yield node
    node.close()


class Io:

    def __init__(self, ros, ns, proc):
        self.ros, self.ns, self.proc, self.robot = ros, ns, proc, ROBOTS[ns]
        self.js = ros.publisher(JointState, f'/{ns}/joint_states', RELIABLE_QOS)
        self.odom = ros.publisher(Odometry, f'/{ns}/odom', RELIABLE_QOS)
        self.traj = ros.publisher(
            JointTrajectory, f'/{ns}/spart_controller/joint_trajectory', RELIABLE_QOS
        )
        self.desc = ros.publisher(String, f'/{ns}/robot_description', LATCHED_QOS)
        self.commands = ros.subscribe(Float64MultiArray, f'/{ns}/commands', RELIABLE_QOS)
        self.status = ros.subscribe(
            ControllerStatus, f'/{ns}/spart_controller/status', RELIABLE_QOS
        )
        self.wrench = ros.subscribe(
            WrenchStamped, f'/{ns}/spart_controller/base_wrench', RELIABLE_QOS
        )
        self.joint_command = ros.subscribe(JointState, f'/{ns}/joint_command', RELIABLE_QOS)
        ros.wait_for_writers([self.commands, self.status], scaled(30.0), process=proc)

    def step(self, names, q, qd, sec, base=None, timeout=15.0):
        """
        Publish one state stamped ``sec`` until the controller answers it; return the answer.

        The odometry ``base`` goes with the same stamp.  The controller answers it with one command
        (a repeated stamp is not answered twice).  The answer is the first NON-ZERO command after
        the first publication: an all-zero one is the watchdog's (this process paused longer than
        state_timeout since the last state, or the previous test's end arriving late); every state
        these tests step with needs efforts.
        """
        n0 = len(self.commands)
        t = Time(sec=int(sec), nanosec=int(round((sec % 1) * 1e9)))
        msg = JointState(
            name=list(names), position=[float(x) for x in q], velocity=[float(x) for x in qd]
        )
        msg.header.stamp = t

        def answer():
            return next((m for m in self.commands.messages[n0:] if any(m.data)), None)

        # the controller answers a stamp once: its answer is lost for good if it goes out before
        # this process's commands subscription has matched its publisher (discovery at start)
        self.ros.wait_for(
            lambda: self.commands.subscription.get_publisher_count() >= 1,
            15.0,
            f'{self.commands.topic} matched',
            process=self.proc,
        )
        first = min(3.0, timeout / 3)
        try:
            return self.ros.publish_until(
                _StatePublisher(self, base, t),
                lambda: msg,
                answer,
                timeout=first,
                what=f'a command for the state stamped {sec}',
                process=self.proc,
            )
        except WaitTimeout:
            pass
        # the controller's publisher can match this process's new subscription later than this
        # side matched it (seen on a loaded machine): the answer to the first state is then lost,
        # and a republished stamp is not answered again (the watchdog halts on it). Once more 1 ns
        # later: a fresh state, the same efforts to within 1e-9 s of reference motion.
        t = Time(sec=t.sec, nanosec=t.nanosec + 1)
        msg.header.stamp = t
        print(f'\nno answer to the state stamped {sec} in {first:g} s: sent again 1 ns later')
        return self.ros.publish_until(
            _StatePublisher(self, base, t),
            lambda: msg,
            answer,
            timeout=timeout - first,
            what=f'a command for the state stamped {sec} (and again 1 ns later)',
            process=self.proc,
        )

    def last_status(self, predicate=lambda s: True, timeout=10.0):
        n0 = len(self.status)
        return self.ros.wait_for(
            lambda: next((s for s in self.status.messages[n0:] if predicate(s)), None),
            timeout,
            f'/{self.ns} status',
            process=self.proc,
        )

    def publish_states(self, names, q, qd, stamps, period=0.01):
        """
        Publish one joint state per stamp (s), ``period`` s apart.

        Without waiting for commands.
        """
        for sec in stamps:
            msg = JointState(
                name=list(names), position=[float(x) for x in q], velocity=[float(x) for x in qd]
            )
            msg.header.stamp = Time(sec=int(sec), nanosec=int(round((sec % 1) * 1e9)))
            self.js.publish(msg)
            self.ros.spin_for(period)

    def enable(self, on):
        return self.ros.call(
            SetBool,
            f'/{self.ns}/spart_controller/enable',
            SetBool.Request(data=on),
            process=self.proc,
        )

    def set_parameter(self, name, value):
        """Set one of the controller's run-time parameters; return its SetParametersResult."""
        return self.ros.set_parameter(
            f'/{self.ns}/spart_controller', name, value, process=self.proc
        )


class _StatePublisher:
    """Publishes the odometry of ``base`` (if any) then the joint state, for publish_until."""

    def __init__(self, io, base, t):
        self.io, self.base, self.t = io, base, t
        self.topic_name = io.js.topic_name

    def publish(self, msg):
        if self.base is not None:
            self.io.odom.publish(odometry(self.base, self.t))
        self.io.js.publish(msg)

    def get_subscription_count(self):
        return self.io.js.get_subscription_count()


def odometry(base, t):
    R_b, p_b, v_b, w_b = base
    msg = Odometry()
    msg.header.stamp, msg.header.frame_id = t, 'odom'
    p = msg.pose.pose.position
    p.x, p.y, p.z = (float(x) for x in p_b)
    x, y, z, w = ref.quat_xyzw(R_b)
    msg.pose.pose.orientation = Quaternion(x=x, y=y, z=z, w=w)
    tw = msg.twist.twist
    tw.linear.x, tw.linear.y, tw.linear.z = (float(x) for x in v_b)
    tw.angular.x, tw.angular.y, tw.angular.z = (float(x) for x in w_b)
    return msg


@pytest.fixture(scope='module')
def ct(ros, nodes):
    return Io(ros, 'ct', nodes['ct'])


@pytest.fixture(scope='module')
def fb(ros, nodes):
    return Io(ros, 'fb', nodes['fb'])


@pytest.fixture(scope='module')
def ff(ros, nodes):
    return Io(ros, 'ff', nodes['ff'])


@pytest.fixture(scope='module')
def gc(ros, nodes):
    return Io(ros, 'gc', nodes['gc'])


def _pd(ref_, q, qd):
    return ref_.acceleration + KD * (ref_.velocity - qd) + KP * (ref_.position - q)


def _fixed_id(robot, q, qd, qdd):
    z3 = np.zeros(3)
    return ref.expected_id(
        robot,
        np.eye(3),
        z3,
        z3,
        z3,
        q,
        qd,
        qdd,
        z3,
        z3,
        np.zeros(6),
        np.zeros((6, robot.n_links_joints)),
        G,
        floating=False,
    )[0]


def _in(order, robot, values):
    """Values in model order -> the order of ``order`` (names)."""
    return np.array([values[robot.q_names.index(n)] for n in order])


# ---------------------------------------------------------------------------------------
# computed torque (/ct)
# ---------------------------------------------------------------------------------------


def test_computed_torque_holds_then_tracks_a_trajectory_in_command_joint_order(ct):
    robot = ct.robot
    rng = np.random.default_rng(1)
    names = sorted(robot.q_names)  # joint_state_broadcaster's alphabetical order
    q0 = rng.uniform(-0.5, 0.5, robot.n_q)
    ct.step(names, _in(names, robot, q0), np.zeros(robot.n_q), 10.0)  # enabled: holds q0 from here
    q1, qd1 = q0 + rng.uniform(-0.05, 0.05, robot.n_q), rng.uniform(-0.2, 0.2, robot.n_q)
    ct.ros.wait_for(
        lambda: ct.joint_command.subscription.get_publisher_count() >= 1,
        15.0,
        'the JointState copy topic matched',
        process=ct.proc,
    )  # its stamp 10.01 is sent once
    cmd = ct.step(names, _in(names, robot, q1), _in(names, robot, qd1), 10.01)
    hold = Reference(q0, np.zeros(robot.n_q), np.zeros(robot.n_q))
    tau = _fixed_id(robot, q1, qd1, _pd(hold, q1, qd1))
    expected = _in(CT_JOINTS, robot, tau)
    k = CT_JOINTS.index(CT_LIMIT[0])
    assert abs(expected[k]) > CT_LIMIT[1]  # the limit really bites
    expected[k] = np.clip(expected[k], -CT_LIMIT[1], CT_LIMIT[1])
    assert len(cmd.data) == len(CT_JOINTS)
    np.testing.assert_allclose(cmd.data, expected, rtol=1e-8, atol=1e-8)
    # the same efforts as sensor_msgs/JointState (joint_command_topic), stamped with the state
    # they answer
    copy = ct.ros.wait_for(
        lambda: next(
            (
                m
                for m in ct.joint_command.messages
                if m.header.stamp == Time(sec=10, nanosec=10_000_000)
            ),
            None,
        ),
        5.0,
        'the JointState copy of the command',
        process=ct.proc,
    )
    assert list(copy.name) == CT_JOINTS and list(copy.effort) == list(cmd.data)
    # the clamped effort in a status sent after that command (issue 34): the joint, what the law
    # asked (the reference's unclamped effort), the limit; and said in the log, as is that gravity
    # at the first pose already needs more (the gravity forces: the efforts at rest)
    answered = time.time() + 0.05
    status = ct.last_status(
        lambda s: s.header.stamp.sec + 1e-9 * s.header.stamp.nanosec > answered
    )
    assert list(status.saturated_joints) == [CT_LIMIT[0]], status
    assert list(status.saturated_limit) == [CT_LIMIT[1]] and status.saturated_commands >= 2
    np.testing.assert_allclose(status.saturated_demand, [tau[robot.q_names.index(CT_LIMIT[0])]])
    ct.proc.wait_for_output(rf'efforts clamped at their limits: {CT_LIMIT[0]} asked', 10.0)
    g0 = _fixed_id(robot, q0, np.zeros(robot.n_q), np.zeros(robot.n_q))
    need = abs(g0[robot.q_names.index(CT_LIMIT[0])])
    assert need > CT_LIMIT[1]
    ct.proc.wait_for_output(
        rf'gravity at the start pose needs {need:.4g} N m at {CT_LIMIT[0]}, more than its effort '
        'limit 5 N m',
        10.0,
    )
    # a trajectory (stamp 0 = now, any joint order, position-only points) from the held reference
    target = q0 + 0.3
    order = list(reversed(robot.q_names))
    msg = JointTrajectory(
        joint_names=order,
        points=[
            JointTrajectoryPoint(
                positions=_in(order, robot, q0 + 0.1).tolist(), time_from_start=Duration(sec=1)
            ),
            JointTrajectoryPoint(
                positions=_in(order, robot, target).tolist(), time_from_start=Duration(sec=2)
            ),
        ],
    )
    ct.ros.publish_until(
        ct.traj,
        lambda: msg,
        lambda: 'trajectory of 2 points' in ct.proc.output(),
        what='the trajectory accepted',
        process=ct.proc,
    )
    interp = Interpolator(10.01, hold, [1.0, 2.0], [q0 + 0.1, target])
    for sec in (10.5, 11.3, 12.5):
        q, qd = q0 + rng.uniform(-0.02, 0.02, robot.n_q), rng.uniform(-0.1, 0.1, robot.n_q)
        cmd = ct.step(names, _in(names, robot, q), _in(names, robot, qd), sec)
        r = interp.sample(sec)
        expected = _in(CT_JOINTS, robot, _fixed_id(robot, q, qd, _pd(r, q, qd)))
        expected[k] = np.clip(expected[k], -CT_LIMIT[1], CT_LIMIT[1])
        np.testing.assert_allclose(cmd.data, expected, rtol=1e-8, atol=1e-8)
    # the trajectory ended at 12.01 s: holding its last point, in a status sent after the last
    # command (one sent before it can still be on its way: once in 20 runs beside a busy loop)
    answered = time.time()
    status = ct.last_status(
        lambda s: s.header.stamp.sec + 1e-9 * s.header.stamp.nanosec > answered
    )
    assert (
        status.mode == 'computed_torque'
        and status.enabled
        and status.commanding
        and status.state == 'holding'
    )
    assert (
        list(status.joint_names) == CT_JOINTS
        and status.trajectories == 1
        and status.compute_time > 0
    )


def test_stale_nan_missing_joint_disable_and_bad_trajectories(ct):
    robot = ct.robot
    names = list(robot.q_names)
    q = np.zeros(robot.n_q)
    ct.step(names, q, q, 20.0)
    zeros = [0.0] * len(CT_JOINTS)
    # stale: no more joint states -> exactly one zero command, status says why
    n0 = len(ct.commands)
    ct.ros.wait_for(
        lambda: len(ct.commands) > n0, 5.0, 'the watchdog zero command', process=ct.proc
    )
    ct.ros.spin_for(0.3)
    assert [list(m.data) for m in ct.commands.messages[n0:]] == [zeros]
    s = ct.last_status(lambda s: not s.commanding)
    # (the state is old by its receipt time, or, when step() republished it and a copy arrived
    # after the answer on a loaded machine, by its stamp, which did not advance: both stale)
    assert re.search(
        r'(old|stamp has not advanced for [0-9.]+ s) \(state_timeout 0.1 s\)',
        s.state,
    ), s.state
    assert s.timeouts >= 1 and s.zero_commands >= 1
    # fresh data: commanding again (holding where the robot is)
    cmd = ct.step(names, q, q, 21.0)
    assert any(cmd.data)
    # NaN: one zero command
    bad = JointState(
        name=names, position=[float('nan')] + [0.0] * (len(names) - 1), velocity=[0.0] * len(names)
    )
    bad.header.stamp = Time(sec=22)
    n0 = len(ct.commands)
    ct.ros.publish_until(
        ct.js,
        lambda: bad,
        lambda: len(ct.commands) > n0,
        what='the zero command after NaN',
        process=ct.proc,
    )
    assert list(ct.commands.messages[-1].data) == zeros
    assert ct.last_status(lambda s: s.rejected_messages >= 1).rejected_messages >= 1
    ct.step(names, q, q, 23.0)
    # a command joint missing from the joint states: once its last value is older than the timeout
    n0 = len(ct.commands)
    partial = [n for n in names if n != CT_JOINTS[0]]
    end = time.monotonic() + scaled(2.0)
    sec = 24.0
    while time.monotonic() < end and not any(not any(m.data) for m in ct.commands.messages[n0:]):
        msg = JointState(
            name=partial, position=[0.0] * len(partial), velocity=[0.0] * len(partial)
        )
        msg.header.stamp = Time(sec=int(sec), nanosec=int((sec % 1) * 1e9))
        ct.js.publish(msg)
        ct.ros.spin_for(0.02)
        sec += 0.02
    assert any(not any(m.data) for m in ct.commands.messages[n0:]), (
        'no zero command for a missing joint'
    )
    # disable: one zero command, then nothing; enable: commanding again
    ct.step(names, q, q, 30.0)
    res = ct.enable(False)
    assert res.success
    ct.ros.wait_for(lambda: list(ct.commands.messages[-1].data) == zeros, 5.0, 'zero on disable')
    n0 = len(ct.commands)
    for k in range(5):
        msg = JointState(name=names, position=[0.0] * len(names), velocity=[0.0] * len(names))
        msg.header.stamp = Time(sec=31 + k)
        ct.js.publish(msg)
        ct.ros.spin_for(0.05)
    assert len(ct.commands) == n0
    assert not ct.last_status().enabled
    assert ct.enable(True).success
    assert any(ct.step(names, q, q, 40.0).data)
    # bad trajectories are refused naming the problem; the node keeps running and commanding
    accepted = ct.last_status().trajectories
    bad_traj = JointTrajectory(
        joint_names=['elbow_x'],
        points=[JointTrajectoryPoint(positions=[0.0], time_from_start=Duration(sec=1))],
    )
    ct.ros.publish_until(
        ct.traj,
        lambda: bad_traj,
        lambda: "unknown: ['elbow_x']" in ct.proc.output(),
        what='the refusal of a bad trajectory',
        process=ct.proc,
    )
    short = JointTrajectory(
        joint_names=names,
        points=[JointTrajectoryPoint(positions=[0.0], time_from_start=Duration(sec=1))],
    )
    ct.ros.publish_until(
        ct.traj,
        lambda: short,
        lambda: 'point 0 has 1 positions for 7 joint_names' in ct.proc.output(),
        what='the refusal of a short point',
        process=ct.proc,
    )
    far = JointTrajectory(
        joint_names=names,
        points=[
            JointTrajectoryPoint(positions=[0.0, 2.5] + [0.0] * 5, time_from_start=Duration(sec=1))
        ],
    )
    ct.ros.publish_until(
        ct.traj,
        lambda: far,
        lambda: (
            'puts lbr_iiwa_joint_2 at 2.5, outside its URDF position limits' in ct.proc.output()
        ),
        what='the refusal of a point beyond a limit',
        process=ct.proc,
    )
    assert any(ct.step(names, q, q, 41.0).data) and ct.proc.is_running()
    assert ct.last_status().trajectories == accepted  # none of them counted


def test_model_swap_stops_until_enabled(ct):
    robot = ct.robot
    names = list(robot.q_names)
    q = np.zeros(robot.n_q)
    ct.step(names, q, q, 50.0)
    text = Path(KUKA).read_text().replace('name="lbr_iiwa"', 'name="lbr_iiwa_v2"', 1)
    ct.ros.publish_until(
        ct.desc,
        lambda: String(data=text),
        lambda: "model 'lbr_iiwa_v2'" in ct.proc.output(),
        what='the new model',
        process=ct.proc,
    )
    ct.ros.wait_for(
        lambda: not any(ct.commands.messages[-1].data), 5.0, 'a zero command on the model swap'
    )
    s = ct.last_status(lambda s: not s.enabled)
    assert 'robot model changed' in s.state
    n0 = len(ct.commands)
    msg = JointState(name=names, position=[0.0] * len(names), velocity=[0.0] * len(names))
    msg.header.stamp = Time(sec=51)
    ct.js.publish(msg)
    ct.ros.spin_for(0.3)
    assert len(ct.commands) == n0  # not re-enabled by itself
    assert ct.enable(True).success
    assert any(ct.step(names, q, q, 52.0).data)


def test_a_model_it_cannot_control_halts_and_waits_for_one(ct):
    """
    A robot_description without the command_joints halts the controller until a usable one.

    The audit's crash: IndexError in the status timer, the process died.  Now: one zero command,
    status naming the missing joints, the node keeps running, refuses ~/enable; a usable model
    again: commands after ~/enable.
    """
    robot = ct.robot
    names = list(robot.q_names)
    q = np.zeros(robot.n_q)
    assert any(ct.step(names, q, q, 55.0).data)
    ct.ros.publish_until(
        ct.desc,
        lambda: String(data=Path(SC).read_text()),
        lambda: 'cannot control this model' in ct.proc.output(),
        what='the refusal of SC_3DoF',
        process=ct.proc,
    )
    ct.ros.wait_for(
        lambda: not any(ct.commands.messages[-1].data),
        5.0,
        'a zero command on the swap',
        process=ct.proc,
    )
    n0 = len(ct.commands)
    s = ct.last_status(lambda s: 'cannot control this model' in s.state)
    assert not s.enabled and not s.commanding and list(s.joint_names) == [] and s.state_age == -1.0
    assert (
        "command_joints ['lbr_iiwa_joint_4'" in s.state
        and "'Joint_1', 'Joint_2', 'Joint_3'" in s.state
    )
    ct.publish_states(
        ['Joint_1', 'Joint_2', 'Joint_3'], [0.0] * 3, [0.0] * 3, [56.0, 56.01, 56.02]
    )
    ct.publish_states(names, q, q, [56.03, 56.04])
    res = ct.enable(True)
    assert not res.success and 'cannot control this model' in res.message
    ct.last_status(lambda s: 'cannot control' in s.state)  # the status timer goes on
    assert len(ct.commands) == n0 and ct.proc.is_running()
    n_models = ct.proc.output().count("model 'lbr_iiwa'")
    ct.ros.publish_until(
        ct.desc,
        lambda: String(data=Path(KUKA).read_text()),
        lambda: ct.proc.output().count("model 'lbr_iiwa'") > n_models,
        what='KUKA again',
        process=ct.proc,
    )
    ct.publish_states(names, q, q, [57.0, 57.01])
    assert len(ct.commands) == n0  # disabled until asked
    assert ct.enable(True).success
    assert any(ct.step(names, q, q, 58.0).data)


def test_a_trajectory_sent_before_the_first_command_starts_with_it(ct):
    """
    Sent between ~/enable and the next joint state (the hold is not set yet).

    Kept, and started at the first command on the control clock (the joint-state stamp), from the
    held position.
    """
    robot = ct.robot
    names = list(robot.q_names)
    q, z = np.full(robot.n_q, 0.1), np.zeros(robot.n_q)
    ct.step(names, q, z, 60.0)
    assert ct.enable(False).success and ct.enable(True).success
    target = q + 0.2
    msg = JointTrajectory(
        joint_names=names,
        points=[JointTrajectoryPoint(positions=target.tolist(), time_from_start=Duration(sec=1))],
    )
    accepted = ct.last_status().trajectories
    ct.ros.publish_until(
        ct.traj,
        lambda: msg,
        lambda: ct.status.messages[-1].trajectories > accepted,
        what='the trajectory accepted before the first command',
        process=ct.proc,
    )
    ct.step(names, q, z, 61.0)  # the first command: hold q, and the trajectory from here
    interp = Interpolator(61.0, Reference(q, z, z), [1.0], [target])
    k = CT_JOINTS.index(CT_LIMIT[0])
    for sec in (61.5, 61.8):
        cmd = ct.step(names, q, z, sec)
        expected = _in(CT_JOINTS, robot, _fixed_id(robot, q, z, _pd(interp.sample(sec), q, z)))
        expected[k] = np.clip(expected[k], -CT_LIMIT[1], CT_LIMIT[1])
        np.testing.assert_allclose(cmd.data, expected, rtol=1e-8, atol=1e-8)


def test_joint_states_whose_stamp_stops_advancing_halt(ct):
    """
    Event-driven: each new stamp is answered once.

    States that keep coming with the same stamp (unstamped joint states: stamp 0) are no new data:
    after state_timeout one zero command, never a torque left applied; a new stamp resumes.
    """
    robot = ct.robot
    names = list(robot.q_names)
    q = np.zeros(robot.n_q)
    assert any(ct.step(names, q, q, 65.0).data)
    n0 = len(ct.commands)
    ct.publish_states(names, q, q, [65.0] * 60)  # 0.6 s of fresh messages, one stamp
    assert [list(m.data) for m in ct.commands.messages[n0:]] == [[0.0] * len(CT_JOINTS)]
    s = ct.last_status(lambda s: not s.commanding)
    assert 'stamp has not advanced' in s.state, s.state
    assert any(ct.step(names, q, q, 66.0).data)


def test_two_joint_state_sources_stamped_apart_give_no_command_for_an_older_time(ct):
    """
    Joints 1-5 from one source, 6-7 from another stamped a little earlier.

    A gripper's or a second driver's): the second updates its joints but is not answered with a
    command for an older control time (the control clock never turns back, the command rate is not
    doubled.
    """
    robot = ct.robot
    names = list(robot.q_names)
    q = np.zeros(robot.n_q)
    assert any(ct.step(names, q, q, 80.0).data)
    assert any(ct.step(names[5:], q[5:], q[5:], 80.005).data)  # newer: answered
    assert any(ct.step(names[:5], q[:5], q[:5], 80.01).data)  # newer: answered
    n1 = len(ct.commands)
    ct.publish_states(
        names[5:], q[5:], q[5:], [80.008], period=0.03
    )  # newer for 6-7, older than 80.01
    assert not any(any(m.data) for m in ct.commands.messages[n1:]), (
        'a command for an older control time'
    )
    assert any(ct.step(names[:5], q[:5], q[:5], 80.02).data)


def test_a_failing_law_sends_one_zero_then_nothing(ct):
    """
    States the law cannot compute (finite but absurd velocities: the efforts overflow).

    One zero command, then silence (the audit saw a zero on every tick), counters exact.
    """
    robot = ct.robot
    names = list(robot.q_names)
    q = np.zeros(robot.n_q)
    # /ct's state_timeout (0.1 s) is shorter than this test's waits for a status on a busy machine:
    # its watchdog's zero would come first (and the failing law then has nothing to stop)
    res = ct.set_parameter('state_timeout', 5.0)
    assert res.successful, res.reason
    try:
        _a_failing_law_sends_one_zero_then_nothing(ct, robot, names, q)
    finally:
        assert ct.set_parameter('state_timeout', 0.1).successful


def _a_failing_law_sends_one_zero_then_nothing(ct, robot, names, q):
    assert any(ct.step(names, q, q, 68.0).data)
    # a status stamped (the node's wall clock, this machine's) after that command arrived here:
    # statuses already in flight were built before it (two topics, no order between them)
    answered = time.time() + 0.05
    before = ct.last_status(
        lambda st: st.header.stamp.sec + 1e-9 * st.header.stamp.nanosec > answered
    )
    n0 = len(ct.commands)
    ct.publish_states(
        names, q, np.full(robot.n_q, 1e200), np.arange(68.01, 68.2, 0.01), period=0.02
    )
    # the zero command (however late a busy machine delivers it), then 0.3 s with no other
    ct.ros.wait_for(
        lambda: len(ct.commands) > n0, scaled(10.0), 'the zero command', process=ct.proc
    )
    ct.ros.spin_for(0.3)
    assert [list(m.data) for m in ct.commands.messages[n0:]] == [[0.0] * len(CT_JOINTS)]
    assert 'control law failed' in ct.proc.output()
    s = ct.last_status(lambda st: st.zero_commands > before.zero_commands)
    assert (
        s.zero_commands == before.zero_commands + 1
        and s.commands == before.commands
        and not s.commanding
    )
    assert any(ct.step(names, q, q, 69.0).data)


def test_a_burst_of_joint_states_is_answered_state_by_state(ct):
    """
    Five joint states published back to back: each gets its own command, in order (issue 28).

    They arrive before the executor takes the first (as two did after an odometry message, or a
    millisecond's stall, at 1 kHz): with a queue of one, the older ones were overwritten and never
    answered (0.05-0.2 % of the states in bench_controller_latency.py).
    """
    robot = ct.robot
    names = list(robot.q_names)
    q = np.zeros(robot.n_q)
    # /ct's state_timeout (0.1 s): a busy machine's delays would halt on the burst (stale), and the
    # watchdog's zero after it is not an answer either
    assert ct.set_parameter('state_timeout', 5.0).successful
    try:
        _a_burst_is_answered_state_by_state(ct, names, q)
    finally:
        assert ct.set_parameter('state_timeout', 0.1).successful


def _a_burst_is_answered_state_by_state(ct, names, q):
    assert any(ct.step(names, q, q, 90.0).data)
    ct.ros.spin_for(0.05)
    n0 = len(ct.joint_command)
    stamps = [(90, 1_000_000 * (k + 1)) for k in range(5)]
    for sec, nanosec in stamps:  # no spinning, no sleeping in between
        msg = JointState(name=names, position=list(q), velocity=list(q))
        msg.header.stamp = Time(sec=sec, nanosec=nanosec)
        ct.js.publish(msg)

    def answered():
        return [
            (m.header.stamp.sec, m.header.stamp.nanosec) for m in ct.joint_command.messages[n0:]
        ]

    ct.ros.wait_for(
        lambda: stamps[-1] in answered(), scaled(10.0), 'the answer to the last state', ct.proc
    )
    ct.ros.spin_for(0.1)
    assert answered() == stamps


def test_an_answer_nobody_received_is_given_to_the_republished_state(ros, nodes):
    """
    Event-driven: a command published before any subscription matched answers nothing.

    A lockstep plant whose commands subscription matches late (discovery at start-up) republishes
    the state it waits on; the controller answers that copy (before, it had answered the stamp
    into the void and the loop waited forever: a halted controller, a plant waiting).
    """
    proc, robot = nodes['late'], ROBOTS['ct']
    js = ros.publisher(JointState, '/late/joint_states', RELIABLE_QOS)
    status = ros.subscribe(ControllerStatus, '/late/spart_controller/status', RELIABLE_QOS)
    ros.wait_for_writers([status], scaled(30.0), process=proc)
    msg = JointState(
        name=list(robot.q_names), position=[0.1] * robot.n_q, velocity=[0.0] * robot.n_q
    )
    msg.header.stamp = Time(sec=90, nanosec=0)
    # the stamp answered while nothing subscribes to the commands (publish_until repeats it)
    ros.publish_until(
        js,
        lambda: msg,
        lambda: any(s.commands >= 1 for s in status.messages),
        timeout=15.0,
        period=0.2,
        what='the state answered (status.commands) with no commands subscriber',
        process=proc,
    )
    commands = ros.subscribe(Float64MultiArray, '/late/commands', RELIABLE_QOS)
    ros.wait_for(
        lambda: commands.subscription.get_publisher_count() >= 1,
        15.0,
        '/late/commands matched',
        process=proc,
    )
    # the same stamp again (the plant republishing the state it waits on) gets a command
    ros.publish_until(
        js,
        lambda: msg,
        lambda: any(any(m.data) for m in commands.messages),
        timeout=15.0,
        period=0.2,
        what='a command for the republished state',
        process=proc,
    )


# ---------------------------------------------------------------------------------------
# floating base (/fb) and free flying (/ff)
# ---------------------------------------------------------------------------------------


def _base(rng):
    return (
        ref.rot(rng.standard_normal(3), rng.uniform(0, 3)),
        rng.standard_normal(3),
        rng.standard_normal(3) * 0.1,
        rng.standard_normal(3) * 0.1,
    )


def test_floating_base_equals_floating_id(fb):
    robot = fb.robot
    rng = np.random.default_rng(2)
    names = list(robot.q_names)
    base = _base(rng)
    q0 = rng.uniform(-1, 1, robot.n_q)
    fb.step(names, q0, np.zeros(robot.n_q), 5.0, base=base)
    q1, qd1 = q0 + 0.05, rng.uniform(-0.2, 0.2, robot.n_q)
    base1 = _base(rng)
    cmd = fb.step(names, q1, qd1, 5.02, base=base1)
    qdd = _pd(Reference(q0, np.zeros(robot.n_q), np.zeros(robot.n_q)), q1, qd1)
    taum, _, _ = ref.expected_floating_id(
        robot, *base1, q1, qd1, qdd, np.zeros(6), np.zeros((6, robot.n_links_joints)), np.zeros(3)
    )
    np.testing.assert_allclose(cmd.data, taum, rtol=1e-8, atol=1e-8)
    # the odometry stops (joint states go on): one zero command
    n0 = len(fb.commands)
    sec = 5.04
    end = time.monotonic() + scaled(3.0)
    while time.monotonic() < end and not any(not any(m.data) for m in fb.commands.messages[n0:]):
        msg = JointState(name=names, position=list(q1), velocity=list(qd1))
        msg.header.stamp = Time(sec=int(sec), nanosec=int(round((sec % 1) * 1e9)))
        fb.js.publish(msg)
        fb.ros.spin_for(0.02)
        sec += 0.02
    assert any(not any(m.data) for m in fb.commands.messages[n0:]), (
        'no zero command without odometry'
    )
    # joint states go on: the status' state_age is the odometry's (the older input)
    fb.publish_states(names, q1, qd1, sec + np.arange(0.0, 0.6, 0.02), period=0.02)
    s = fb.last_status(lambda s: not s.commanding)
    assert 'odometry' in s.state or 'base state' in s.state, s.state
    assert s.state_age > 0.5, s.state_age


def test_a_clock_jump_seen_in_the_odometry_resumes_on_the_new_clock(fb):
    """
    A simulator reset: odometry and joint states restart 40 s earlier (more than clock_jump_back).

    The odometry shows the jump first: every stamp is forgotten, and the first joint state of the
    new clock is answered (a hold: the control clock went back).
    """
    robot = fb.robot
    rng = np.random.default_rng(7)
    names, base = list(robot.q_names), _base(rng)
    q = rng.uniform(-1, 1, robot.n_q)
    fb.step(names, q, np.zeros(robot.n_q), 60.0, base=base)
    cmd = fb.step(names, q, np.zeros(robot.n_q), 20.0, base=base)
    # a computed command (the base turns: not zero), not the watchdog's zero of a state left
    # unanswered
    assert any(cmd.data) and np.all(np.isfinite(cmd.data)), list(cmd.data)
    assert 'clock jump back: odometry' in fb.proc.output()


def test_free_flying_base_wrench(ff):
    robot = ff.robot
    rng = np.random.default_rng(3)
    names = list(robot.q_names)
    base0 = _base(rng)
    q0 = rng.uniform(-1, 1, robot.n_q)
    ff.step(names, q0, np.zeros(robot.n_q), 7.0, base=base0)  # holds q0 and the base pose base0
    q1, qd1 = q0 + 0.02, rng.uniform(-0.2, 0.2, robot.n_q)
    base1 = _base(rng)
    cmd = ff.step(names, q1, qd1, 7.02, base=base1)
    R_b, p_b, v_b, w_b = base1
    kp_p, kd_p, kp_r, kd_r = BASE_GAINS
    alpha_b = kp_r * Rotation.from_matrix(R_b.T @ base0[0]).as_rotvec() - kd_r * w_b
    a_b = kp_p * R_b.T @ (base0[1] - p_b) - kd_p * v_b
    qdd = _pd(Reference(q0, np.zeros(robot.n_q), np.zeros(robot.n_q)), q1, qd1)
    taum, torque_b, force_b = ref.expected_id(
        robot,
        R_b,
        p_b,
        v_b,
        w_b,
        q1,
        qd1,
        qdd,
        a_b,
        alpha_b,
        np.zeros(6),
        np.zeros((6, robot.n_links_joints)),
        np.zeros(3),
    )
    np.testing.assert_allclose(cmd.data, taum, rtol=1e-8, atol=1e-8)

    def stamped(t):
        return next((m for m in reversed(ff.wrench.messages) if m.header.stamp == t), None)

    w = ff.ros.wait_for(
        lambda: stamped(Time(sec=7, nanosec=20_000_000)), 5.0, 'the base wrench stamped 7.02'
    )
    assert w.header.frame_id == robot.base_link.name
    np.testing.assert_allclose(
        [w.wrench.torque.x, w.wrench.torque.y, w.wrench.torque.z], torque_b, rtol=1e-8, atol=1e-8
    )
    np.testing.assert_allclose(
        [w.wrench.force.x, w.wrench.force.y, w.wrench.force.z], force_b, rtol=1e-8, atol=1e-8
    )
    # a base pose reference replaces the held pose
    target = PoseStamped()
    target.header.frame_id = 'odom'
    target.pose.position.x = 1.0
    target.pose.orientation.w = 1.0
    pub = ff.ros.publisher(PoseStamped, '/ff/spart_controller/base_pose', RELIABLE_QOS)
    ff.ros.wait_for_matched(pub, timeout=10.0, process=ff.proc)
    alpha_b = kp_r * Rotation.from_matrix(R_b.T).as_rotvec() - kd_r * w_b
    a_b = kp_p * R_b.T @ (np.array([1.0, 0, 0]) - p_b) - kd_p * v_b
    _, torque_b, force_b = ref.expected_id(
        robot,
        R_b,
        p_b,
        v_b,
        w_b,
        q1,
        qd1,
        qdd,
        a_b,
        alpha_b,
        np.zeros(6),
        np.zeros((6, robot.n_links_joints)),
        np.zeros(3),
    )
    sec = 7.04
    for _ in range(50):  # until the reference has arrived (then every answer uses it)
        pub.publish(target)
        ff.step(names, q1, qd1, sec, base=base1)
        t = Time(sec=int(sec), nanosec=int(round((sec % 1) * 1e9)))
        sec += 0.02
        w2 = ff.ros.wait_for(lambda: stamped(t), 5.0, 'a base wrench')
        if np.allclose(
            [w2.wrench.force.x, w2.wrench.force.y, w2.wrench.force.z],
            force_b,
            rtol=1e-6,
            atol=1e-6,
        ):
            break
    np.testing.assert_allclose(
        [w2.wrench.force.x, w2.wrench.force.y, w2.wrench.force.z], force_b, rtol=1e-6, atol=1e-6
    )
    np.testing.assert_allclose(
        [w2.wrench.torque.x, w2.wrench.torque.y, w2.wrench.torque.z],
        torque_b,
        rtol=1e-6,
        atol=1e-6,
    )
    # a halt (no state for longer than state_timeout), then states far from the reference: the
    # joints hold where they are, the base keeps its target (the audit: it took the pose at resume)
    n0 = len(ff.commands)
    ff.ros.wait_for(
        lambda: any(not any(m.data) for m in ff.commands.messages[n0:]),
        5.0,
        'the watchdog zero',
        process=ff.proc,
    )
    q2 = q1 + 0.2  # beyond resume_tolerance (0.05): a hold at q2
    sec += 1.0
    ff.step(names, q2, qd1, sec, base=base1)
    t = Time(sec=int(sec), nanosec=int(round((sec % 1) * 1e9)))
    w3 = ff.ros.wait_for(lambda: stamped(t), 5.0, 'the base wrench after the resume')
    qdd2 = _pd(Reference(q2, np.zeros(robot.n_q), np.zeros(robot.n_q)), q2, qd1)
    _, torque_b, force_b = ref.expected_id(
        robot,
        R_b,
        p_b,
        v_b,
        w_b,
        q2,
        qd1,
        qdd2,
        a_b,
        alpha_b,
        np.zeros(6),
        np.zeros((6, robot.n_links_joints)),
        np.zeros(3),
    )
    np.testing.assert_allclose(
        [w3.wrench.force.x, w3.wrench.force.y, w3.wrench.force.z], force_b, rtol=1e-6, atol=1e-6
    )
    np.testing.assert_allclose(
        [w3.wrench.torque.x, w3.wrench.torque.y, w3.wrench.torque.z],
        torque_b,
        rtol=1e-6,
        atol=1e-6,
    )


def test_gravity_compensation_on_a_timer(gc):
    """
    rate: at most 50 ticks per second of the node clock whatever the joint_states rate (200 Hz).

    Counted by the node (its status: commands sent, stamped on its clock), so the bound holds at
    any load: a starved node ticks less, never more, and one answering each state would exceed it
    with ten states at once every 50 ms.  The efforts hold the arm against gravity: SPART's ID at
    rest.
    """
    robot = gc.robot
    q = np.random.default_rng(4).uniform(-1, 1, robot.n_q)
    names = list(robot.q_names)
    gc.step(names, q, np.zeros(robot.n_q), 70.0)
    first = gc.last_status(lambda s: s.commanding)
    sec, published = 70.0, 0
    while published < 200:
        for _ in range(10):
            sec += 0.005
            msg = JointState(name=names, position=list(q), velocity=[0.0] * len(names))
            msg.header.stamp = Time(sec=int(sec), nanosec=int(round((sec % 1) * 1e9)))
            gc.js.publish(msg)
            published += 1
        gc.ros.spin_for(0.05)
    last = gc.last_status(lambda s: s.commanding)

    def seconds(s):
        return s.header.stamp.sec + 1e-9 * s.header.stamp.nanosec

    ticks, span = last.commands - first.commands, seconds(last) - seconds(first)
    assert 1 <= ticks <= 50.0 * span + 1, (ticks, span, published)
    z3 = np.zeros(3)
    tau, _, _ = ref.expected_id(
        robot,
        np.eye(3),
        z3,
        z3,
        z3,
        q,
        np.zeros(robot.n_q),
        np.zeros(robot.n_q),
        z3,
        z3,
        np.zeros(6),
        np.zeros((6, robot.n_links_joints)),
        G,
        floating=False,
    )
    np.testing.assert_allclose(gc.commands.messages[-1].data, tau, rtol=1e-8, atol=1e-8)


# ---------------------------------------------------------------------------------------
# configuration
# ---------------------------------------------------------------------------------------


def test_invalid_configuration_exits_with_a_clear_error():
    for params, text in (
        ({'mode': 'wobbly'}, 'mode must be one of'),
        ({'mode': 'floating_base', 'urdf_path': SC}, 'mode floating_base needs base: floating'),
        # lengths: against the URDF's joints, or against command_joints (no model needed)
        (
            {'urdf_path': KUKA, 'kp': [1.0, 2.0]},
            'kp: expected one value or one per command joint (7',
        ),
        (
            {'command_joints': ['a', 'b'], 'effort_limits': [1.0, 2.0, 3.0]},
            'effort_limits: expected one value or one per command joint (2',
        ),
    ):
        proc = start_node('spart_ros', 'controller_node', namespace='/cfg', parameters=params)
        try:
            proc.wait_exit()
            assert proc.returncode == 2, proc.describe()
            assert text in proc.output()
        finally:
            proc.cleanup()


def test_an_old_or_unknown_parameter_is_said_not_ignored():
    """
    ROS ignores a parameter a node does not declare.

    `enabled` (before the lifecycle node: `enabled: false` started it disabled) is now `autostart`:
    taken as such, warned, so that an upgraded controller does not start commanding a robot its
    user wanted disabled; both given is an error.  A name no spart_ros node has is warned with this
    node's nearest; another node's (a shared `/**` file, the demo's) is quiet.
    """
    proc = start_node(
        'spart_ros',
        'controller_node',
        namespace='/old',
        parameters={'urdf_path': KUKA, 'enabled': False, 'kp_gain': 3.0, 'integrator': 'RK4'},
    )
    try:
        proc.wait_for_output(r'unconfigured \(autostart false\)', scaled(60))
        out = proc.output()
        assert (
            'parameter enabled is now autostart: enabled: False taken as autostart: False' in out
        ), out
        assert 'parameters of no spart_ros node, ignored: kp_gain (did you mean kp or ' in out, out
        assert 'integrator' not in out
    finally:
        proc.cleanup()
    proc = start_node(
        'spart_ros',
        'controller_node',
        namespace='/old',
        parameters={'enabled': False, 'autostart': True},
    )
    try:
        proc.wait_exit()
        assert (
            proc.returncode == 2
            and 'enabled was renamed autostart: give autostart only' in proc.output()
        )
    finally:
        proc.cleanup()


def test_installed_files():
    from ament_index_python.packages import get_package_share_directory

    installed_executable('spart_ros', 'controller_node')
    share = Path(get_package_share_directory('spart_ros'))
    for rel in (
        'config/controller.yaml',
        'config/controller_sc_3dof.yaml',
        'config/controller_kuka_iiwa.yaml',
        'launch/controller.launch.py',
    ):
        assert (share / rel).is_file(), rel
