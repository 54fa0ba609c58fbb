"""
The INSTALLED spart_dynamics node as separate processes.

Driven over DDS with real rclpy publishers, subscribers and service clients. Expected values come
from the numpy SPART functions (test/dynamics_reference.py), not from the node's fast path.

Five node processes for the whole module (started in parallel, each in its own namespace):
  /fl  floating base, branched two-arm spacecraft (base inertial offset + rpy) with an IMU
       link on two fixed joints; odometry + IMU; Jacobians of three links with offsets;
       on sim time (use_sim_time; the tests publish /clock only to make it jump back);
  /fx  fixed base, KUKA iiwa (base inertial offset), non-identity base pose parameters,
       SingleThreadedExecutor and message-object outputs (the non-default paths);
  /rt  started with a BAD robot_description (keeps running without a model), then given
       models at run time over the robot_description topic and the urdf_path parameter;
  /dc  floating base with an IMU named by its messages' header.frame_id (no imu_link
       parameter) and decimation 3 (one output set per 3 joint_states);
  /ro  fixed base KUKA iiwa with the non-default input parameters: accept_older_stamps,
       input_reliability: reliable, input_queue_depth: 1.
"""

import os
from pathlib import Path
import re
import signal
import time
from types import SimpleNamespace

from builtin_interfaces.msg import Time
from core_helpers import urdf_path
import dynamics_reference as ref
from geometry_msgs.msg import Quaternion
from nav_msgs.msg import Odometry
from node_helpers import (
    BEST_EFFORT_QOS,
    installed_executable,
    LATCHED_QOS,
    RELIABLE_QOS,
    RosTestNode,
    start_node,
    WaitTimeout,
)
import numpy as np
import pytest
from rcl_interfaces.msg import Parameter as ParameterMsg
from rcl_interfaces.msg import ParameterType, ParameterValue
from rcl_interfaces.srv import SetParameters
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState
from spart_interfaces.msg import CenterOfMass, Jacobians, LinkTwists, LinkWrench
from spart_interfaces.srv import ForwardDynamics, InverseDynamics, InverseKinematics
from spart_ros import core, spart
from spart_ros.core.attitude import quaternion_from_ros
from spart_ros.core.base_state import link_frame_pose
from std_msgs.msg import String

pytestmark = pytest.mark.timeout(240)

PKG, EXE = 'spart_ros', 'dynamics_node'
READY = r'spart_dynamics\]: base (fixed|floating), world frame'
ROOT = Path(__file__).resolve().parent.parent

BRANCHED_IMU = ref.with_imu(Path(urdf_path('branched_two_arm_spacecraft')).read_text(), 'bus')
KUKA = urdf_path('kuka_iiwa')
FL_JAC = [('a_tip', [0.01, 0.02, 0.03]), ('b_ee', [0.0, 0.0, 0.05]), ('bus', [0.1, -0.2, 0.3])]
FX_JAC = [('lbr_iiwa_link_7', [0.0, 0.0, 0.1]), ('lbr_iiwa_link_4', [0.0, 0.0, 0.0])]
FX_POSE = (np.array([0.5, -0.2, 0.8]), ref.rot([0.2, 1.0, 0.3], 0.7))
BAD_URDF = '<robot name="bad"><link name="lonely"/><link name="lonely"/></robot>'
TOL = {'rtol': 1e-9, 'atol': 1e-9}

ROBOTS = {
    'branched': spart.urdf2robot(BRANCHED_IMU)[0],
    'kuka': spart.urdf2robot(KUKA)[0],
    'plain_branched': spart.urdf2robot(urdf_path('branched_two_arm_spacecraft'))[0],
}


# ---------------------------------------------------------------------------------------
# fixtures: the test node and the three node processes
# ---------------------------------------------------------------------------------------


@pytest.fixture(scope='module')
def ros():
    node = RosTestNode('test_dynamics_node')
    yield node
    node.close()


@pytest.fixture(scope='module')
def nodes():
    specs = {
        'fl': {
            'base': 'floating',
            'robot_description': BRANCHED_IMU,
            'use_imu': True,
            'imu_link': 'imu_link',
            'imu_topic': 'imu',
            'world_frame': 'odom',
            'use_sim_time': True,
            'jacobian_links': [n for n, _ in FL_JAC],
            'jacobian_offsets': [x for _, o in FL_JAC for x in o],
        },
        'fx': {
            'base': 'fixed',
            'urdf_path': KUKA,
            'base_position': FX_POSE[0].tolist(),
            'base_orientation': ref.quat_xyzw(FX_POSE[1]).tolist(),
            'jacobian_links': [n for n, _ in FX_JAC],
            'jacobian_offsets': [x for _, o in FX_JAC for x in o],
            'executor': 'single_threaded',
            'serialized_outputs': False,  # the non-default paths
            'gravity': [0.0, 0.0, -9.81],  # used unless a request overrides
            'joint_dynamics': False,
        },  # the rigid model of the references (/ro: URDF damping)
        'rt': {'base': 'fixed', 'robot_description': BAD_URDF},
        'dc': {
            'base': 'floating',
            'robot_description': BRANCHED_IMU,
            'use_imu': True,
            'imu_topic': 'imu',
            'world_frame': 'odom',
            'decimation': 3,
        },
        'ro': {
            'base': 'fixed',
            'urdf_path': KUKA,
            'accept_older_stamps': True,
            'input_reliability': 'reliable',
            'input_queue_depth': 1,
        },
    }
    procs = {ns: start_node(PKG, EXE, namespace='/' + ns, parameters=p) for ns, p in specs.items()}
    try:
        for proc in procs.values():
            proc.wait_for_output(READY, 90.0)  # 90 s: numba may compile on a cold cache
        yield procs
    finally:
        for proc in procs.values():
            proc.cleanup()


class Io:
    """Publishers and collectors of one node namespace."""

    def __init__(self, ros, ns, proc):
        self.ros, self.ns, self.proc = ros, ns, proc
        self.js = ros.publisher(JointState, f'/{ns}/joint_states', RELIABLE_QOS)
        self.js_best_effort = ros.publisher(JointState, f'/{ns}/joint_states', BEST_EFFORT_QOS)
        self.odom = ros.publisher(Odometry, f'/{ns}/odom', RELIABLE_QOS)
        self.imu = ros.publisher(Imu, f'/{ns}/imu', BEST_EFFORT_QOS)
        self.description = ros.publisher(String, f'/{ns}/robot_description', LATCHED_QOS)
        self.twists = ros.subscribe(LinkTwists, f'/{ns}/spart_dynamics/link_twists', RELIABLE_QOS)
        self.jacobians = ros.subscribe(Jacobians, f'/{ns}/spart_dynamics/jacobians', RELIABLE_QOS)
        self.com = ros.subscribe(
            CenterOfMass, f'/{ns}/spart_dynamics/center_of_mass', RELIABLE_QOS
        )

    def outputs(self, stamp):
        """
        Return the latest (twists, jacobians, com) stamped ``stamp``.

        None if one is missing.
        """
        got = []
        for c in (self.twists, self.jacobians, self.com):
            m = [x for x in c.messages if x.header.stamp == stamp]
            got.append(m[-1] if m else None)
        return got

    def count(self, stamp):
        return sum(1 for x in self.jacobians.messages if x.header.stamp == stamp)

    def exchange(self, messages, stamp, repeats=3, timeout=20.0):
        """
        Publish ``messages`` every 50 ms until the node answered; return the last outputs.

        ``messages``: [(publisher, msg)], joint_states last.  Until the node answered ``repeats``
        of them with outputs stamped ``stamp`` (so that the inputs published before the last
        joint_states were processed).
        """
        state = {'next': 0.0}

        def step():
            if self.count(stamp) >= repeats and all(self.outputs(stamp)):
                return self.outputs(stamp)
            now = time.monotonic()
            if now >= state['next']:
                for pub, msg in messages:
                    pub.publish(msg)
                state['next'] = now + 0.05
            return None

        return self.ros.wait_for(
            step, timeout, f'outputs stamped {stamp} from /{self.ns}', process=self.proc
        )

    def call(self, srv, name, request, timeout=10.0):
        return self.ros.call(
            srv, f'/{self.ns}/spart_dynamics/{name}', request, timeout, process=self.proc
        )


@pytest.fixture(scope='module')
def fl(ros, nodes):
    return Io(ros, 'fl', nodes['fl'])


@pytest.fixture(scope='module')
def fx(ros, nodes):
    return Io(ros, 'fx', nodes['fx'])


@pytest.fixture(scope='module')
def rt(ros, nodes):
    return Io(ros, 'rt', nodes['rt'])


@pytest.fixture(scope='module')
def dc(ros, nodes):
    return Io(ros, 'dc', nodes['dc'])


@pytest.fixture(scope='module')
def ro(ros, nodes):
    return Io(ros, 'ro', nodes['ro'])


# ---------------------------------------------------------------------------------------
# message builders and checks
# ---------------------------------------------------------------------------------------


def stamp(sec, nanosec=0):
    return Time(sec=int(sec), nanosec=int(nanosec))


def joint_state(names, pos, vel=None, t=None):
    msg = JointState()
    msg.header.stamp = t
    msg.name = list(names)
    msg.position = [float(x) for x in pos]
    msg.velocity = [] if vel is None else [float(x) for x in vel]
    return msg


def quat(R):
    x, y, z, w = ref.quat_xyzw(R)
    return Quaternion(x=x, y=y, z=z, w=w)


def odometry(R_b, p_b, v_b, w_b, t, child='bus'):
    msg = Odometry()
    msg.header.stamp, msg.header.frame_id, msg.child_frame_id = t, 'odom', child
    p = msg.pose.pose.position
    p.x, p.y, p.z = (float(x) for x in p_b)
    msg.pose.pose.orientation = quat(R_b)
    tw = msg.twist.twist
    tw.linear.x, tw.linear.y, tw.linear.z = (float(x) for x in v_b)
    tw.angular.x, tw.angular.y, tw.angular.z = (float(x) for x in w_b)
    return msg


def imu(R_imu, w_imu, t, orientation=True, frame='imu_link'):
    msg = Imu()
    msg.header.stamp, msg.header.frame_id = t, frame
    msg.orientation = quat(R_imu)
    if not orientation:
        msg.orientation_covariance[0] = -1.0
    msg.angular_velocity.x, msg.angular_velocity.y, msg.angular_velocity.z = (
        float(x) for x in w_imu
    )
    return msg


def check_outputs(got, exp, robot, jac_specs, columns, frame):
    twists, jacs, com = got
    assert (
        twists.header.frame_id == frame
        and jacs.header.frame_id == frame
        and com.header.frame_id == frame
    )
    assert list(twists.link_names) == robot.link_names
    rL = np.array([[p.x, p.y, p.z] for p in twists.com_positions]).T
    tL = np.array(
        [
            [t.angular.x, t.angular.y, t.angular.z, t.linear.x, t.linear.y, t.linear.z]
            for t in twists.twists
        ]
    ).T
    np.testing.assert_allclose(rL, exp.rL, **TOL)
    np.testing.assert_allclose(tL, exp.tL, **TOL)
    np.testing.assert_allclose(
        [
            com.position.x,
            com.position.y,
            com.position.z,
            com.velocity.x,
            com.velocity.y,
            com.velocity.z,
        ],
        exp.com,
        **TOL,
    )
    assert com.total_mass == pytest.approx(float(robot.total_mass), rel=1e-12)
    assert [j.link_name for j in jacs.jacobians] == [n for n, _ in jac_specs]
    for j, (name, offset), J, p in zip(jacs.jacobians, jac_specs, exp.jacobians, exp.points):
        assert list(j.column_names) == list(columns) and j.rows == 6 and j.cols == len(columns)
        assert list(j.row_names) == ['wx', 'wy', 'wz', 'vx', 'vy', 'vz']
        np.testing.assert_allclose([j.point.x, j.point.y, j.point.z], offset, atol=1e-15)
        np.testing.assert_allclose(np.asarray(j.data).reshape(6, j.cols), J, **TOL)
        np.testing.assert_allclose([j.position.x, j.position.y, j.position.z], p, **TOL)


def shuffled(robot, qm, um, rng, extra=True):
    """Joint names/positions/velocities in a random order (+ a joint the model lacks)."""
    names = list(robot.q_names)
    order = rng.permutation(len(names))
    n, q, v = [names[k] for k in order], [qm[k] for k in order], [um[k] for k in order]
    if extra:
        n.insert(1, 'gripper_finger_not_in_urdf')
        q.insert(1, float('nan'))
        v.insert(1, 5.0)
    return n, q, v


def rand_state(robot, seed):
    rng = np.random.default_rng(seed)
    return (
        ref.rot(rng.standard_normal(3), rng.uniform(0, 3)),
        rng.standard_normal(3),
        rng.standard_normal(3),
        rng.standard_normal(3),
        rng.uniform(-1, 1, robot.n_q),
        rng.standard_normal(robot.n_q),
        rng,
    )


FL_COLUMNS = ['base_wx', 'base_wy', 'base_wz', 'base_vx', 'base_vy', 'base_vz']


# ---------------------------------------------------------------------------------------
# fixed base (/fx, KUKA iiwa)
# ---------------------------------------------------------------------------------------


def test_fixed_nothing_until_every_joint_seen_then_partial_updates(fx):
    robot = ROBOTS['kuka']
    names = robot.q_names
    R_b, p_b, _, _, qm, um, rng = rand_state(robot, 1)
    t1 = stamp(10)
    fx.ros.wait_for_subscribers('/fx/joint_states', 1, 10.0, process=fx.proc)
    # every joint but one: the node waits (and says which joint it waits for)
    fx.ros.publish_until(
        fx.js,
        lambda: joint_state(names[:2] + names[3:], np.delete(qm, 2), np.delete(um, 2), t1),
        lambda: re.search(r"waiting for joint states of \['lbr_iiwa_joint_3'\]", fx.proc.output()),
        what='the node waiting for joint 3',
        process=fx.proc,
    )
    fx.ros.spin_for(0.3)
    assert len(fx.jacobians) == 0 and len(fx.twists) == 0 and len(fx.com) == 0
    # the missing joint alone completes the state (the others keep their values)
    t2 = stamp(11)
    got = fx.exchange([(fx.js, joint_state([names[2]], [qm[2]], [um[2]], t2))], t2)
    exp = ref.expected_outputs(
        robot, FX_POSE[1], FX_POSE[0], np.zeros(3), np.zeros(3), qm, um, False, FX_JAC
    )
    check_outputs(got, exp, robot, FX_JAC, names, 'world')
    # a later subset (best-effort publisher) changes only its joints
    qm2, um2 = qm.copy(), um.copy()
    qm2[[0, 6]], um2[[0, 6]] = [0.3, -0.4], [1.5, -2.5]
    t3 = stamp(12)
    got = fx.exchange(
        [(fx.js_best_effort, joint_state([names[6], names[0]], [-0.4, 0.3], [-2.5, 1.5], t3))], t3
    )
    exp = ref.expected_outputs(
        robot, FX_POSE[1], FX_POSE[0], np.zeros(3), np.zeros(3), qm2, um2, False, FX_JAC
    )
    check_outputs(got, exp, robot, FX_JAC, names, 'world')


def test_fixed_shuffled_unknown_joints_and_missing_velocities(fx):
    robot = ROBOTS['kuka']
    _, _, _, _, qm, um, rng = rand_state(robot, 2)
    n, q, v = shuffled(robot, qm, um, rng)
    t = stamp(20)
    got = fx.exchange([(fx.js, joint_state(n, q, v, t))], t)
    exp = ref.expected_outputs(
        robot, FX_POSE[1], FX_POSE[0], np.zeros(3), np.zeros(3), qm, um, False, FX_JAC
    )
    check_outputs(got, exp, robot, FX_JAC, robot.q_names, 'world')
    # no velocities: they count as zero, with a single warning
    for k in range(2):
        t = stamp(21 + k)
        got = fx.exchange([(fx.js, joint_state(n, q, None, t))], t)
    exp = ref.expected_outputs(
        robot, FX_POSE[1], FX_POSE[0], np.zeros(3), np.zeros(3), qm, 0 * um, False, FX_JAC
    )
    check_outputs(got, exp, robot, FX_JAC, robot.q_names, 'world')
    assert fx.proc.output().count('joint_states without velocities') == 1
    assert "ignoring joints not in the model: ['gripper_finger_not_in_urdf']" in fx.proc.output()
    assert '(message objects, executor single_threaded)' in fx.proc.output()


def test_fixed_bad_joint_states_are_logged_and_skipped(fx):
    robot = ROBOTS['kuka']
    names = robot.q_names
    _, _, _, _, qm, um, _ = rand_state(robot, 3)
    zero = np.zeros(3)
    # NaN position of a model joint, then a message whose arrays do not match its names:
    # each logged naming the problem, no output for it; the next good message is answered
    bad_q = qm.copy()
    bad_q[4] = np.nan
    t_nan, t_len, t_ok = stamp(30), stamp(31), stamp(32)
    fx.ros.publish_until(
        fx.js,
        lambda: joint_state(names, bad_q, um, t_nan),
        lambda: "position of joint 'lbr_iiwa_joint_5' is NaN or infinite" in fx.proc.output(),
        what='the NaN error log',
        process=fx.proc,
    )
    fx.ros.publish_until(
        fx.js,
        lambda: joint_state(names, qm[:-1], um, t_len),
        lambda: 'joint_states: 7 names but 6 positions' in fx.proc.output(),
        what='the length error log',
        process=fx.proc,
    )
    got = fx.exchange([(fx.js, joint_state(names, qm, um, t_ok))], t_ok)
    check_outputs(
        got,
        ref.expected_outputs(robot, FX_POSE[1], FX_POSE[0], zero, zero, qm, um, False, FX_JAC),
        robot,
        FX_JAC,
        names,
        'world',
    )
    assert fx.count(t_nan) == 0 and fx.count(t_len) == 0 and fx.proc.is_running()


def test_fixed_services(fx):
    robot = ROBOTS['kuka']
    _, _, _, _, qm, um, rng = rand_state(robot, 3)
    n, q, v = shuffled(robot, qm, um, rng, extra=False)
    order = [robot.q_names.index(x) for x in n]
    taum, umdot = rng.standard_normal(robot.n_q), rng.standard_normal(robot.n_q)
    g = np.array([0.0, 0.0, -9.81])
    R_b, p_b = ref.rot([1, 0, 0], 0.4), np.array([0.0, 1.0, 2.0])
    z = np.zeros(3)
    wFm = np.zeros((6, robot.n_links_joints))
    wFm[:, robot.link_index('lbr_iiwa_link_5') - 1] = [0.1, 0.2, 0.3, 1.0, -2.0, 3.0]

    def fill(req):
        req.joint_names, req.positions, req.velocities = n, q, v
        req.base_pose.position.x, req.base_pose.position.y, req.base_pose.position.z = p_b
        req.base_pose.orientation = quat(R_b)  # gravity: the node's parameter (no override)
        lw = LinkWrench(link_name='lbr_iiwa_link_5')
        lw.wrench.torque.x, lw.wrench.torque.y, lw.wrench.torque.z = 0.1, 0.2, 0.3
        lw.wrench.force.x, lw.wrench.force.y, lw.wrench.force.z = 1.0, -2.0, 3.0
        req.link_wrenches = [lw]
        return req

    req = fill(ForwardDynamics.Request())
    req.efforts = [taum[k] for k in order]
    res = fx.call(ForwardDynamics, 'forward_dynamics', req)
    assert res.success, res.message
    umdot_e, _, _ = ref.expected_fd(
        robot, R_b, p_b, z, z, qm, um, taum, z, z, np.zeros(6), wFm, g, floating=False
    )
    assert list(res.joint_names) == n  # the request's joint order
    np.testing.assert_allclose(res.accelerations, umdot_e[order], rtol=1e-8, atol=1e-8)
    assert res.base_acceleration.linear.x == 0 and res.base_acceleration.angular.z == 0

    req = fill(InverseDynamics.Request())
    req.accelerations = [umdot[k] for k in order]
    res = fx.call(InverseDynamics, 'inverse_dynamics', req)
    assert res.success, res.message
    taum_e, torque_e, force_e = ref.expected_id(
        robot, R_b, p_b, z, z, qm, um, umdot, z, z, np.zeros(6), wFm, g, floating=False
    )
    assert list(res.joint_names) == n
    np.testing.assert_allclose(res.efforts, taum_e[order], rtol=1e-8, atol=1e-8)
    w = res.base_wrench
    np.testing.assert_allclose(
        [w.torque.x, w.torque.y, w.torque.z], torque_e, rtol=1e-8, atol=1e-8
    )
    np.testing.assert_allclose([w.force.x, w.force.y, w.force.z], force_e, rtol=1e-8, atol=1e-8)
    # an explicit override replaces the node's gravity for this request only
    req.override_gravity = True
    req.gravity.x = 1.5
    res = fx.call(InverseDynamics, 'inverse_dynamics', req)
    taum_o, _, _ = ref.expected_id(
        robot,
        R_b,
        p_b,
        z,
        z,
        qm,
        um,
        umdot,
        z,
        z,
        np.zeros(6),
        wFm,
        np.array([1.5, 0.0, 0.0]),
        floating=False,
    )
    assert res.success and np.allclose(res.efforts, taum_o[order], rtol=1e-8, atol=1e-8)
    assert not np.allclose(taum_o, taum_e, rtol=1e-3)

    # fixed-base specific refusals; the node keeps serving
    bad = fill(InverseDynamics.Request())
    bad.floating_base = True
    res = fx.call(InverseDynamics, 'inverse_dynamics', bad)
    assert not res.success and 'fixed base' in res.message
    bad = fill(ForwardDynamics.Request())
    bad.base_twist.angular.z = 0.1
    res = fx.call(ForwardDynamics, 'forward_dynamics', bad)
    assert not res.success and 'base_twist must be zero' in res.message
    assert fx.call(InverseDynamics, 'inverse_dynamics', fill(InverseDynamics.Request())).success


def test_the_urdf_joint_damping_enters_by_default(fx, ro):
    """
    /ro runs with the default joint_dynamics (true).

    The KUKA's URDF declares damping 0.5 N m s/rad on every joint (no friction, no armature), so
    its inverse dynamics adds 0.5 qd to the rigid model's efforts (/fx: joint_dynamics false) and
    its forward dynamics takes 0.5 qd off the applied efforts.
    """
    robot = ROBOTS['kuka']
    by_name = {j.name: j.dynamics.damping for j in robot.joints}
    damping = np.array([by_name[n] for n in robot.q_names])
    assert damping.shape == (robot.n_q,) and np.all(damping == 0.5)
    _, _, _, _, qm, um, rng = rand_state(robot, 11)
    taum, umdot = rng.standard_normal(robot.n_q), rng.standard_normal(robot.n_q)

    def request(kind, values):
        req = kind.Request()
        req.joint_names, req.positions, req.velocities = (
            list(robot.q_names),
            qm.tolist(),
            um.tolist(),
        )
        req.base_pose.orientation.w = 1.0
        req.override_gravity, req.gravity.z = True, -9.81
        if kind is InverseDynamics:
            req.accelerations = values.tolist()
        else:
            req.efforts = values.tolist()
        return req

    rigid, damped = (
        io.call(InverseDynamics, 'inverse_dynamics', request(InverseDynamics, umdot))
        for io in (fx, ro)
    )
    assert rigid.success and damped.success, (rigid.message, damped.message)
    np.testing.assert_allclose(
        np.subtract(damped.efforts, rigid.efforts), damping * um, rtol=1e-9, atol=1e-9
    )
    got = ro.call(ForwardDynamics, 'forward_dynamics', request(ForwardDynamics, taum))
    want = fx.call(
        ForwardDynamics, 'forward_dynamics', request(ForwardDynamics, taum - damping * um)
    )
    assert got.success and want.success, (got.message, want.message)
    np.testing.assert_allclose(got.accelerations, want.accelerations, rtol=1e-8, atol=1e-8)
    assert not np.allclose(
        got.accelerations,
        fx.call(ForwardDynamics, 'forward_dynamics', request(ForwardDynamics, taum)).accelerations,
        atol=1e-3,
    )


# ---------------------------------------------------------------------------------------
# floating base (/fl, branched spacecraft + IMU)
# ---------------------------------------------------------------------------------------


def test_floating_from_odometry(fl):
    robot = ROBOTS['branched']
    R_b, p_b, v_b, w_b, qm, um, rng = rand_state(robot, 4)
    n, q, v = shuffled(robot, qm, um, rng)
    t0 = stamp(100)
    # joint states alone: nothing, the node waits for the odometry
    fl.ros.publish_until(
        fl.js,
        lambda: joint_state(n, q, v, t0),
        lambda: 'waiting for odometry on /fl/odom' in fl.proc.output(),
        what='the node waiting for odometry',
        process=fl.proc,
    )
    assert fl.count(t0) == 0
    t = stamp(101)
    got = fl.exchange(
        [(fl.odom, odometry(R_b, p_b, v_b, w_b, t)), (fl.js, joint_state(n, q, v, t))], t
    )
    exp = ref.expected_outputs(robot, R_b, p_b, v_b, w_b, qm, um, True, FL_JAC)
    check_outputs(got, exp, robot, FL_JAC, FL_COLUMNS + robot.q_names, 'odom')


def test_floating_imu_overrides_orientation_and_rate_when_fresh(fl):
    robot = ROBOTS['branched']
    R_b, p_b, v_b, w_b, qm, um, rng = rand_state(robot, 5)
    n, q, v = shuffled(robot, qm, um, rng)
    R_imu_b = ref.rot([0.3, -1, 0.2], 1.1)  # the base orientation the IMU measures
    w_imu_b = np.array([0.4, -0.3, 0.25])  # the base angular velocity the IMU measures (in b)
    R_imu = R_imu_b @ ref.R_B_IMU  # IMU frame in the world
    w_imu = ref.R_B_IMU.T @ w_imu_b  # in the IMU frame
    t_imu = stamp(200, 50_000_000)
    # fresh (joint_states 0.05 s before the IMU sample): orientation and rate from the IMU
    t = stamp(200)
    got = fl.exchange(
        [
            (fl.odom, odometry(R_b, p_b, v_b, w_b, t)),
            (fl.imu, imu(R_imu, w_imu, t_imu)),
            (fl.js, joint_state(n, q, v, t)),
        ],
        t,
    )
    check_outputs(
        got,
        ref.expected_outputs(robot, R_imu_b, p_b, v_b, w_imu_b, qm, um, True, FL_JAC),
        robot,
        FL_JAC,
        FL_COLUMNS + robot.q_names,
        'odom',
    )
    # stale (1 s later): the odometry alone
    t = stamp(201)
    got = fl.exchange(
        [
            (fl.odom, odometry(R_b, p_b, v_b, w_b, t)),
            (fl.imu, imu(R_imu, w_imu, t_imu)),
            (fl.js, joint_state(n, q, v, t)),
        ],
        t,
    )
    check_outputs(
        got,
        ref.expected_outputs(robot, R_b, p_b, v_b, w_b, qm, um, True, FL_JAC),
        robot,
        FL_JAC,
        FL_COLUMNS + robot.q_names,
        'odom',
    )
    # an IMU without orientation (covariance[0] = -1): only the angular velocity
    t, t_imu = stamp(300), stamp(300, 10_000_000)
    got = fl.exchange(
        [
            (fl.odom, odometry(R_b, p_b, v_b, w_b, t)),
            (fl.imu, imu(R_imu, w_imu, t_imu, orientation=False)),
            (fl.js, joint_state(n, q, v, t)),
        ],
        t,
    )
    check_outputs(
        got,
        ref.expected_outputs(robot, R_b, p_b, v_b, w_imu_b, qm, um, True, FL_JAC),
        robot,
        FL_JAC,
        FL_COLUMNS + robot.q_names,
        'odom',
    )


def _fl_request(req, robot, n, q, v, R_b, p_b, v_b, w_b, wFm):
    req.joint_names, req.positions, req.velocities = n, q, v
    req.base_pose.position.x, req.base_pose.position.y, req.base_pose.position.z = p_b
    req.base_pose.orientation = quat(R_b)
    tw = req.base_twist
    tw.linear.x, tw.linear.y, tw.linear.z = v_b
    tw.angular.x, tw.angular.y, tw.angular.z = w_b
    req.override_gravity = True
    req.gravity.x, req.gravity.y, req.gravity.z = 0.5, -0.2, -9.81
    lws = []
    for k in np.flatnonzero(np.abs(wFm).sum(axis=0)):
        lw = LinkWrench(link_name=robot.links[k].name)
        lw.wrench.torque.x, lw.wrench.torque.y, lw.wrench.torque.z = wFm[0:3, k]
        lw.wrench.force.x, lw.wrench.force.y, lw.wrench.force.z = wFm[3:6, k]
        lws.append(lw)
    req.link_wrenches = lws
    return req


def _vec(v):
    return [v.x, v.y, v.z]


def test_floating_services(fl):
    robot = ROBOTS['branched']
    R_b, p_b, v_b, w_b, qm, um, rng = rand_state(robot, 6)
    n, q, v = shuffled(robot, qm, um, rng, extra=False)
    order = [robot.q_names.index(x) for x in n]
    g = np.array([0.5, -0.2, -9.81])
    wFm = np.zeros((6, robot.n_links_joints))
    wFm[:, robot.link_index('a_wrist') - 1] = rng.standard_normal(6)
    wFm[:, robot.link_index('b_fore') - 1] = rng.standard_normal(6)
    wF0 = np.zeros(6)
    taum, umdot = rng.standard_normal(robot.n_q), rng.standard_normal(robot.n_q)
    torque_b, force_b, a_b, alpha_b = (rng.standard_normal(3) for _ in range(4))
    args = (robot, n, q, v, R_b, p_b, v_b, w_b, wFm)

    req = _fl_request(ForwardDynamics.Request(), *args)
    req.efforts = [taum[k] for k in order]
    (req.base_wrench.torque.x, req.base_wrench.torque.y, req.base_wrench.torque.z) = torque_b
    (req.base_wrench.force.x, req.base_wrench.force.y, req.base_wrench.force.z) = force_b
    res = fl.call(ForwardDynamics, 'forward_dynamics', req)
    assert res.success, res.message
    e_umdot, e_a, e_alpha = ref.expected_fd(
        robot, R_b, p_b, v_b, w_b, qm, um, taum, torque_b, force_b, wF0, wFm, g
    )
    assert list(res.joint_names) == n
    np.testing.assert_allclose(res.accelerations, e_umdot[order], rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(_vec(res.base_acceleration.linear), e_a, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(_vec(res.base_acceleration.angular), e_alpha, rtol=1e-8, atol=1e-8)

    req = _fl_request(InverseDynamics.Request(), *args)
    req.accelerations = [umdot[k] for k in order]
    (
        req.base_acceleration.linear.x,
        req.base_acceleration.linear.y,
        req.base_acceleration.linear.z,
    ) = a_b
    (
        req.base_acceleration.angular.x,
        req.base_acceleration.angular.y,
        req.base_acceleration.angular.z,
    ) = alpha_b
    res = fl.call(InverseDynamics, 'inverse_dynamics', req)
    assert res.success, res.message
    e_taum, e_torque, e_force = ref.expected_id(
        robot, R_b, p_b, v_b, w_b, qm, um, umdot, a_b, alpha_b, wF0, wFm, g
    )
    np.testing.assert_allclose(res.efforts, e_taum[order], rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(_vec(res.base_wrench.torque), e_torque, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(_vec(res.base_wrench.force), e_force, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(_vec(res.base_acceleration.linear), a_b, atol=1e-12)

    req.floating_base = True
    res = fl.call(InverseDynamics, 'inverse_dynamics', req)
    assert res.success, res.message
    e_taum, e_a, e_alpha = ref.expected_floating_id(
        robot, R_b, p_b, v_b, w_b, qm, um, umdot, wF0, wFm, g
    )
    np.testing.assert_allclose(res.efforts, e_taum[order], rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(_vec(res.base_acceleration.linear), e_a, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(_vec(res.base_acceleration.angular), e_alpha, rtol=1e-8, atol=1e-8)
    assert _vec(res.base_wrench.force) == [0.0, 0.0, 0.0]


def test_floating_services_current_state(fl):
    robot = ROBOTS['branched']
    R_b, p_b, v_b, w_b, qm, um, rng = rand_state(robot, 7)
    n, q, v = shuffled(robot, qm, um, rng)
    t = stamp(400)
    fl.exchange([(fl.odom, odometry(R_b, p_b, v_b, w_b, t)), (fl.js, joint_state(n, q, v, t))], t)
    umdot = rng.standard_normal(robot.n_q)
    req = InverseDynamics.Request(
        use_current_state=True,
        floating_base=True,
        joint_names=list(reversed(robot.q_names)),
        accelerations=list(reversed(umdot.tolist())),
    )
    res = fl.call(InverseDynamics, 'inverse_dynamics', req)
    assert res.success, res.message
    z6, zm = np.zeros(6), np.zeros((6, robot.n_links_joints))
    e_taum, e_a, e_alpha = ref.expected_floating_id(
        robot, R_b, p_b, v_b, w_b, qm, um, umdot, z6, zm, np.zeros(3)
    )
    assert list(res.joint_names) == list(reversed(robot.q_names))  # the request's order
    np.testing.assert_allclose(res.efforts, e_taum[::-1], rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(_vec(res.base_acceleration.angular), e_alpha, rtol=1e-8, atol=1e-8)
    # FD of the current state with no efforts at all
    res = fl.call(
        ForwardDynamics, 'forward_dynamics', ForwardDynamics.Request(use_current_state=True)
    )
    assert res.success, res.message
    e = ref.expected_fd(
        robot,
        R_b,
        p_b,
        v_b,
        w_b,
        qm,
        um,
        np.zeros(robot.n_q),
        np.zeros(3),
        np.zeros(3),
        z6,
        zm,
        np.zeros(3),
    )
    np.testing.assert_allclose(res.accelerations, e[0], rtol=1e-8, atol=1e-8)


# ---------------------------------------------------------------------------------------
# the inverse_kinematics service (/fx fixed KUKA at a non-identity base pose, /fl floating)
# ---------------------------------------------------------------------------------------


def _ik_request(link, point, R_t, p_t, frame_id='', **fields):
    req = InverseKinematics.Request(link=link)
    req.point.x, req.point.y, req.point.z = (float(x) for x in point)
    req.target.header.frame_id = frame_id
    req.target.pose.position.x, req.target.pose.position.y, req.target.pose.position.z = (
        float(x) for x in p_t
    )
    req.target.pose.orientation = quat(R_t)
    for key, value in fields.items():
        setattr(req, key, value)
    return req


def _set_base(req, R_b, p_b):
    req.base_pose.position.x, req.base_pose.position.y, req.base_pose.position.z = (
        float(x) for x in p_b
    )
    req.base_pose.orientation = quat(R_b)
    return req


def _pose(msg):
    o = msg.orientation
    return quaternion_from_ros(o.x, o.y, o.z, o.w), np.array(_vec(msg.position))


def _fk_world(robot, link, point, q, R_b, p_b):
    """Return the end-effector pose in the world by the SPART chain, from the base link pose."""
    R0, r0, _ = ref.ros_to_spart(robot, R_b, p_b)
    k = spart.Kinematics(R0, r0, q, robot)
    R, p = link_frame_pose(robot, link, R0, r0, k.RL, k.rL)
    return R, p + R @ point


def _angle(R):
    return float(np.linalg.norm(core.rotation_vector(R)))


def test_fixed_inverse_kinematics(fx):
    robot = ROBOTS['kuka']
    link, point = 'lbr_iiwa_link_7', np.array([0.0, 0.0, 0.1])
    R_b, p_b = FX_POSE[1], FX_POSE[0]  # the node's base pose parameters
    lower, upper = core.position_limits(robot)
    rng = np.random.default_rng(21)
    q_goal = rng.uniform(lower, upper) * 0.8
    R_t, p_t = _fk_world(robot, link, point, q_goal, R_b, p_b)
    seed = np.clip(q_goal + rng.uniform(-0.4, 0.4, robot.n_q), lower, upper)
    names = list(reversed(robot.q_names))
    req = _set_base(
        _ik_request(link, point, R_t, p_t, joint_names=names, positions=seed[::-1].tolist()),
        R_b,
        p_b,
    )
    res = fx.call(InverseKinematics, 'inverse_kinematics', req)
    assert res.success, res.message
    assert list(res.joint_names) == names and 'converged in' in res.message
    q = np.array(res.positions)[::-1]
    assert np.all(q >= lower) and np.all(q <= upper)
    R, p = _fk_world(robot, link, point, q, R_b, p_b)
    assert np.linalg.norm(p - p_t) < 1e-6 and _angle(R_t @ R.T) < 1e-6
    assert 1 <= res.iterations <= 20 and res.position_error < 1e-6 and res.rotation_error < 1e-6
    R_got, p_got = _pose(res.pose)
    np.testing.assert_allclose(p_got, p, atol=1e-9)
    assert _angle(R_got @ R.T) < 1e-9
    R_base, p_base = _pose(res.base_pose)
    np.testing.assert_allclose(p_base, p_b, atol=1e-12)
    # the same target given in the base link frame
    rel = _set_base(
        _ik_request(
            link,
            point,
            R_b.T @ R_t,
            R_b.T @ (p_t - p_b),
            frame_id=robot.base_link.name,
            joint_names=names,
            positions=seed[::-1].tolist(),
        ),
        R_b,
        p_b,
    )
    res2 = fx.call(InverseKinematics, 'inverse_kinematics', rel)
    assert res2.success, res2.message
    np.testing.assert_allclose(res2.positions, res.positions, atol=1e-6)
    # position only ("position" rows): the orientation is free and need not be given
    pos_only = _set_base(
        _ik_request(
            link,
            point,
            R_t,
            p_t,
            rows=['position'],
            joint_names=names,
            positions=seed[::-1].tolist(),
        ),
        R_b,
        p_b,
    )
    pos_only.target.pose.orientation = Quaternion(x=0.0, y=0.0, z=0.0, w=0.0)
    res3 = fx.call(InverseKinematics, 'inverse_kinematics', pos_only)
    assert res3.success, res3.message
    assert (
        np.linalg.norm(
            _fk_world(robot, link, point, np.array(res3.positions)[::-1], R_b, p_b)[1] - p_t
        )
        < 1e-6
    )
    # base_pose left at its default: where the node places the base (its parameters), as the
    # current state would; not the origin (issue 34)
    res5 = fx.call(
        InverseKinematics,
        'inverse_kinematics',
        _ik_request(link, point, R_t, p_t, joint_names=names, positions=seed[::-1].tolist()),
    )
    assert res5.success, res5.message
    np.testing.assert_allclose(res5.positions, res.positions, atol=1e-9)
    np.testing.assert_allclose(_pose(res5.base_pose)[1], p_b, atol=1e-12)
    # the seed from the node's current state (joint_states; the base from the parameters)
    t = stamp(35)  # between the fx tests before (10..32) and after (40..)
    fx.exchange([(fx.js, joint_state(robot.q_names, seed, None, t))], t)
    res4 = fx.call(
        InverseKinematics,
        'inverse_kinematics',
        _ik_request(link, point, R_t, p_t, use_current_state=True, frame='body'),
    )
    assert res4.success, res4.message
    assert list(res4.joint_names) == robot.q_names
    R, p = _fk_world(robot, link, point, np.array(res4.positions), R_b, p_b)
    assert np.linalg.norm(p - p_t) < 1e-6 and _angle(R_t @ R.T) < 1e-6


def test_inverse_kinematics_out_of_reach_and_bad_requests(fx):
    robot = ROBOTS['kuka']
    link = 'lbr_iiwa_link_7'
    R_b, p_b = FX_POSE[1], FX_POSE[0]
    lower, upper = core.position_limits(robot)
    names, seed = robot.q_names, np.full(robot.n_q, 0.3)

    def ik(p_t=(0.2, 0.1, 1.0), R_t=np.eye(3), **fields):
        fields.setdefault('joint_names', names)
        fields.setdefault('positions', seed.tolist())
        return fx.call(
            InverseKinematics,
            'inverse_kinematics',
            _set_base(
                _ik_request(fields.pop('link', link), np.zeros(3), R_t, p_t, **fields), R_b, p_b
            ),
        )

    far = p_b + R_b @ np.array([3.0, 0.0, 1.0])  # 3 m out: the arm reaches about 1.3 m
    res = ik(far, rows=['position'])
    assert not res.success and 'not converged (no progress' in res.message
    q = np.array(res.positions)
    assert len(q) == robot.n_q and np.all(q >= lower) and np.all(q <= upper)
    _, p = _fk_world(robot, link, np.zeros(3), q, R_b, p_b)
    assert res.position_error == pytest.approx(np.linalg.norm(far - p), rel=1e-6)
    assert 1.5 < res.position_error < np.linalg.norm(far - p_b)
    cases = [
        ({'link': 'nope'}, "link: unknown link 'nope'"),
        ({'rows': ['wq']}, 'rows: expected'),
        ({'frame': 'tool'}, "frame: expected one of \\['world', 'body', 'space'\\]"),
        ({'base_free': True}, 'base_free is true but the node models a fixed base'),
        (
            {'use_current_state': True},
            'use_current_state is true: joint_names and positions must be empty',
        ),
        ({'positions': seed[:-1].tolist()}, f'positions has {robot.n_q - 1} values'),
        ({'tolerance_position': -1.0}, 'tol_position: expected'),
        ({'max_iterations': -3}, 'max_iterations: expected an integer >= 0'),
    ]
    for fields, message in cases:
        res = ik(**fields)
        assert not res.success and re.search(message, res.message), (fields, res.message)
        assert not res.positions
    req = _set_base(
        _ik_request(
            link,
            np.zeros(3),
            np.eye(3),
            (0.2, 0.1, 1.0),
            joint_names=names,
            positions=seed.tolist(),
        ),
        R_b,
        p_b,
    )
    req.target.header.frame_id = 'map'
    res = fx.call(InverseKinematics, 'inverse_kinematics', req)
    assert (
        not res.success
        and "target.header.frame_id: 'map' is neither the world frame 'world'" in res.message
    )
    req.target.header.frame_id = ''
    req.target.pose.orientation = Quaternion(x=0.0, y=0.0, z=0.0, w=0.0)
    res = fx.call(InverseKinematics, 'inverse_kinematics', req)
    assert not res.success and res.message.startswith('target.pose.orientation')
    assert ik(rows=['position']).success  # the node still serves


def test_floating_inverse_kinematics_with_the_base_free_or_held(fl):
    robot = ROBOTS['branched']
    link = 'a_tip'
    R_b, p_b, _, _, qm, _, rng = rand_state(robot, 31)
    lower, upper = core.position_limits(robot)
    seed = np.clip(qm * 0.5, lower, upper)
    _, p_seed = _fk_world(robot, link, np.zeros(3), seed, R_b, p_b)
    p_t = p_seed + np.array([0.03, -0.02, 0.02])
    R0, r0, _ = ref.ros_to_spart(robot, R_b, p_b)
    expected = core.InverseKinematics(robot, link, base='free').solve(p_t, seed, R0=R0, r0=r0)
    assert expected.success

    def ik(**fields):
        req = _set_base(
            _ik_request(
                link,
                np.zeros(3),
                np.eye(3),
                p_t,
                frame_id='odom',
                rows=['position'],
                joint_names=robot.q_names,
                positions=seed.tolist(),
                **fields,
            ),
            R_b,
            p_b,
        )
        return fl.call(InverseKinematics, 'inverse_kinematics', req)

    res = ik(base_free=True)
    assert res.success, res.message
    np.testing.assert_allclose(res.positions, expected.q, atol=1e-9)
    R_bf, p_bf = _pose(res.base_pose)
    R_be = expected.R0 @ ref.base_bc(robot)[0].T
    assert _angle(R_bf @ R_be.T) < 1e-9
    assert _angle(R_bf @ R_b.T) > 1e-5  # the base turned: it reacts to the arm
    # the end effector is on the target with the base where the node says it went
    _, p = _fk_world(robot, link, np.zeros(3), np.array(res.positions), R_bf, p_bf)
    assert np.linalg.norm(p - p_t) < 1e-6
    held = ik(base_free=False)
    assert held.success, held.message
    R_bh, p_bh = _pose(held.base_pose)
    np.testing.assert_allclose(p_bh, p_b, atol=1e-12)
    assert np.abs(np.array(held.positions) - np.array(res.positions)).max() > 1e-6
    res = ik(
        base_free=True,
        target=_ik_request(link, np.zeros(3), np.eye(3), p_t, frame_id='bus').target,
    )
    assert not res.success and 'moves with base_free' in res.message


def test_floating_bad_requests_keep_the_node_serving(fl):
    robot = ROBOTS['branched']
    R_b, p_b, v_b, w_b, qm, um, rng = rand_state(robot, 8)
    names = list(robot.q_names)

    def fd(**changes):
        req = _fl_request(
            ForwardDynamics.Request(),
            robot,
            names,
            qm.tolist(),
            um.tolist(),
            R_b,
            p_b,
            v_b,
            w_b,
            np.zeros((6, robot.n_links_joints)),
        )
        for k, val in changes.items():
            setattr(req, k, val)
        return fl.call(ForwardDynamics, 'forward_dynamics', req)

    nan_q = qm.tolist()
    nan_q[2] = float('nan')
    bad_lw = LinkWrench(link_name='no_such_link')
    cases = [
        ({'joint_names': names[:-1] + ['elbow_x']}, "unknown joint 'elbow_x'"),
        (
            {
                'joint_names': names[:-1],
                'positions': qm[:-1].tolist(),
                'velocities': um[:-1].tolist(),
            },
            f"lacks the moving joints \\['{names[-1]}'\\]",
        ),
        (
            {'positions': qm[:-1].tolist()},
            f'positions has {len(names) - 1} values for {len(names)}',
        ),
        ({'efforts': [1.0, 2.0]}, f'efforts has 2 values for {len(names)}'),
        ({'positions': nan_q}, f"positions of joint '{names[2]}' is NaN"),
        (
            {'use_current_state': True},
            'use_current_state is true: positions and velocities must be empty',
        ),
        ({'link_wrenches': [bad_lw]}, "unknown link 'no_such_link'"),
        (
            {
                'base_pose': type(ForwardDynamics.Request().base_pose)(
                    orientation=Quaternion(x=0.0, y=0.0, z=0.0, w=0.0)
                )
            },
            'base_pose.orientation',
        ),
    ]
    for changes, match in cases:
        res = fd(**changes)
        assert not res.success, changes
        assert re.search(match, res.message), (match, res.message)
    res = fd()
    assert res.success, res.message
    assert fl.proc.is_running()


# ---------------------------------------------------------------------------------------
# IMU frame from the messages, decimation (/dc)
# ---------------------------------------------------------------------------------------

# default Jacobians: every leaf link (no child) in link order, the IMU link included
LEAVES = [(x, [0.0, 0.0, 0.0]) for x in ('a_tip', 'a_finger_right', 'b_ee', 'imu_link')]


def test_imu_frame_from_message_header(dc):
    robot = ROBOTS['branched']
    R_b, p_b, v_b, w_b, qm, um, rng = rand_state(robot, 12)
    n, q, v = shuffled(robot, qm, um, rng)
    R_imu_b, w_imu_b = ref.rot([1, 0.2, -0.4], 0.8), np.array([-0.2, 0.5, 0.1])
    R_imu, w_imu = R_imu_b @ ref.R_B_IMU, ref.R_B_IMU.T @ w_imu_b
    # header.frame_id = 'imu_link' (two fixed joints from the base): the IMU's orientation and rate
    t = stamp(700)
    got = dc.exchange(
        [
            (dc.odom, odometry(R_b, p_b, v_b, w_b, t)),
            (dc.imu, imu(R_imu, w_imu, stamp(700, 1000))),
            (dc.js, joint_state(n, q, v, t)),
        ],
        t,
    )
    check_outputs(
        got,
        ref.expected_outputs(robot, R_imu_b, p_b, v_b, w_imu_b, qm, um, True, LEAVES),
        robot,
        LEAVES,
        FL_COLUMNS + robot.q_names,
        'odom',
    )
    # a frame the URDF lacks: an error naming it, the IMU sample is not used, the node goes on
    t = stamp(701)
    got = dc.exchange(
        [
            (dc.odom, odometry(R_b, p_b, v_b, w_b, t)),
            (dc.imu, imu(R_imu, w_imu, stamp(701, 1000), frame='camera_imu')),
            (dc.js, joint_state(n, q, v, t)),
        ],
        t,
    )
    assert re.search(r"IMU.*'camera_imu' is not a link of robot", dc.proc.output())
    check_outputs(
        got,
        ref.expected_outputs(robot, R_b, p_b, v_b, w_b, qm, um, True, LEAVES),
        robot,
        LEAVES,
        FL_COLUMNS + robot.q_names,
        'odom',
    )


def test_decimation_publishes_every_third_joint_state(dc):
    robot = ROBOTS['branched']
    R_b, p_b, v_b, w_b, qm, um, _ = rand_state(robot, 13)
    t = stamp(801)  # odometry no older than odom_max_age for every joint state below
    dc.exchange(
        [
            (dc.odom, odometry(R_b, p_b, v_b, w_b, t)),
            (dc.js, joint_state(robot.q_names, qm, um, t)),
        ],
        t,
    )
    stamps = [stamp(801, (k + 1) * 1000) for k in range(12)]
    for s in stamps:
        dc.js.publish(joint_state(robot.q_names, qm, um, s))
        dc.ros.spin_for(0.02)
    dc.ros.wait_for(
        lambda: sum(dc.count(s) for s in stamps) >= 4 or None,
        10.0,
        '4 decimated output sets',
        process=dc.proc,
    )
    dc.ros.spin_for(0.3)  # a fifth would arrive by now
    answered = [k for k, s in enumerate(stamps) if dc.count(s)]
    assert len(answered) == 4 and np.all(np.diff(answered) == 3), answered


def test_ignored_joint_states_foreign_empty_and_older_stamps(fx):
    """
    Foreign, empty and older joint states give no output; the next good one does.

    Messages with none of the model's joints (another robot's, an empty one) and messages stamped
    before the last one give no output and are counted/warned; the next good one does.
    """
    robot = ROBOTS['kuka']
    _, _, _, _, qm, um, _ = rand_state(robot, 21)
    t_ok = stamp(40)
    fx.exchange([(fx.js, joint_state(robot.q_names, qm, um, t_ok))], t_ok)
    t_foreign, t_empty, t_old = stamp(41), stamp(42), stamp(39, 900_000_000)  # 0.1 s before t_ok
    fx.ros.publish_until(
        fx.js,
        lambda: joint_state(['gripper_left', 'gripper_right'], [0.01, 0.01], [0, 0], t_foreign),
        lambda: (
            "none of the model's joints (names ['gripper_left', 'gripper_right'])"
            in fx.proc.output()
        ),
        what='the foreign joint_states warning',
        process=fx.proc,
    )
    fx.ros.publish_until(
        fx.js,
        lambda: joint_state(robot.q_names, qm, um, t_old),
        lambda: 'before the last one' in fx.proc.output(),
        what='the older-stamp warning',
        process=fx.proc,
    )
    for _ in range(5):
        fx.js.publish(joint_state([], [], [], t_empty))
        fx.ros.spin_for(0.02)
    t_next = stamp(43)
    fx.exchange([(fx.js, joint_state(robot.q_names, qm, um, t_next))], t_next)
    assert fx.count(t_foreign) == 0 and fx.count(t_empty) == 0 and fx.count(t_old) == 0


def test_velocity_only_joint_states_update_velocities(fl):
    robot = ROBOTS['branched']
    R_b, p_b, v_b, w_b, qm, um, rng = rand_state(robot, 22)
    t = stamp(900)
    fl.exchange(
        [
            (fl.odom, odometry(R_b, p_b, v_b, w_b, t)),
            (fl.js, joint_state(robot.q_names, qm, um, t)),
        ],
        t,
    )
    um2 = rng.standard_normal(robot.n_q)
    t2 = stamp(901)
    msg = JointState(name=list(robot.q_names), velocity=um2.tolist())  # no positions
    msg.header.stamp = t2
    got = fl.exchange([(fl.odom, odometry(R_b, p_b, v_b, w_b, t2)), (fl.js, msg)], t2)
    exp = ref.expected_outputs(robot, R_b, p_b, v_b, w_b, qm, um2, True, FL_JAC)
    check_outputs(got, exp, robot, FL_JAC, FL_COLUMNS + robot.q_names, 'odom')


def test_stale_odometry_gives_no_output_until_fresh(fl):
    robot = ROBOTS['branched']
    R_b, p_b, v_b, w_b, qm, um, _ = rand_state(robot, 23)
    t_odom, t_js = stamp(910), stamp(911)  # 1 s apart: beyond odom_max_age (0.2 s)
    fl.ros.publish_until(
        fl.js,
        lambda: (
            fl.odom.publish(odometry(R_b, p_b, v_b, w_b, t_odom)),
            joint_state(robot.q_names, qm, um, t_js),
        )[1],
        lambda: re.search(
            r'\[WARN\] \[[\d.]+\] \[fl\.spart_dynamics\]: odometry stamp is 1\.000 s '
            r'older than the joint state',
            fl.proc.output(),
        ),
        what='the stale odometry warning',
        process=fl.proc,
    )
    assert fl.count(t_js) == 0
    t = stamp(912)
    fl.exchange(
        [
            (fl.odom, odometry(R_b, p_b, v_b, w_b, t)),
            (fl.js, joint_state(robot.q_names, qm, um, t)),
        ],
        t,
    )


# ---------------------------------------------------------------------------------------
# input semantics: stamp order per joint, clock jumps back, efforts only, QoS parameters
# ---------------------------------------------------------------------------------------


def _fx_expected(qm, um):
    robot, zero = ROBOTS['kuka'], np.zeros(3)
    return ref.expected_outputs(robot, FX_POSE[1], FX_POSE[0], zero, zero, qm, um, False, FX_JAC)


def test_effort_only_joint_states_are_ignored_and_named_so(fx):
    """
    A JointState naming model joints with efforts only changes nothing and gives no output.

    Its warning says so (not 'none of the model's joints').
    """
    robot = ROBOTS['kuka']
    names = robot.q_names
    _, _, _, _, qm, um, _ = rand_state(robot, 31)
    t_ok, t_eff = stamp(2000), stamp(2001)
    fx.exchange([(fx.js, joint_state(names, qm, um, t_ok))], t_ok)
    before = len(fx.proc.output())

    def efforts_only():
        msg = JointState(name=list(names), effort=[1.0] * len(names))
        msg.header.stamp = t_eff
        return msg

    fx.ros.publish_until(
        fx.js,
        efforts_only,
        lambda: (
            'joint_states naming model joints without positions or velocities'
            in fx.proc.output()[before:]
        ),
        what='the efforts-only warning',
        process=fx.proc,
    )
    assert "none of the model's joints" not in fx.proc.output()[before:]
    t_next = stamp(2002)
    got = fx.exchange([(fx.js, joint_state(names, qm, um, t_next))], t_next)
    check_outputs(got, _fx_expected(qm, um), robot, FX_JAC, names, 'world')
    assert fx.count(t_eff) == 0


def test_joint_state_sources_stamped_apart_are_ordered_per_joint(fx):
    """
    An arm source and a gripper source (the last two joints) stamped 0.5 s earlier.

    The gripper's messages are taken (one ordering for all joints dropped them every time); an arm
    message older than the arm's last stamp is dropped, for the arm joints only.
    """
    robot = ROBOTS['kuka']
    names = robot.q_names
    arm, grip = names[:5], names[5:]
    _, _, _, _, qm, um, rng = rand_state(robot, 32)
    t_arm, t_grip = stamp(2010), stamp(2009, 500_000_000)
    fx.exchange([(fx.js, joint_state(arm, qm[:5], um[:5], t_arm))], t_arm)
    qm[5:], um[5:] = rng.uniform(-1, 1, 2), rng.standard_normal(2)
    got = fx.exchange([(fx.js, joint_state(grip, qm[5:], um[5:], t_grip))], t_grip)
    check_outputs(got, _fx_expected(qm, um), robot, FX_JAC, names, 'world')
    # a late arm message (before the arm's last stamp, after the gripper's) is dropped; the
    # gripper's next one is answered with the arm's values of t_arm
    t_late, t_grip2 = stamp(2009, 800_000_000), stamp(2009, 900_000_000)
    fx.js.publish(joint_state(arm, qm[:5] + 0.5, um[:5], t_late))
    qm[5:] = rng.uniform(-1, 1, 2)
    got = fx.exchange([(fx.js, joint_state(grip, qm[5:], um[5:], t_grip2))], t_grip2)
    check_outputs(got, _fx_expected(qm, um), robot, FX_JAC, names, 'world')
    assert fx.count(t_late) == 0  # (its warning may be throttled: test_ignored_... warned 5 s ago)


def test_stamps_jumping_back_are_a_clock_jump(fx):
    """
    Stamps restarting from 0 (a restarted simulator, a looping bag) are taken, with a warning.

    Instead of silencing the node; then the order holds again on the new clock.
    """
    robot = ROBOTS['kuka']
    names = robot.q_names
    _, _, _, _, qm, um, rng = rand_state(robot, 33)
    t = stamp(2020)
    fx.exchange([(fx.js, joint_state(names, qm, um, t))], t)
    t_reset = stamp(0, 500_000_000)
    qm2 = rng.uniform(-1, 1, robot.n_q)
    got = fx.exchange([(fx.js, joint_state(names, qm2, um, t_reset))], t_reset)
    check_outputs(got, _fx_expected(qm2, um), robot, FX_JAC, names, 'world')
    assert (
        'clock jump back: joint_states stamped 0.500000000 s, more than clock_jump_back (1.0 s)'
        in fx.proc.output()
    )
    t_old, t_new = stamp(0, 400_000_000), stamp(0, 600_000_000)
    fx.js.publish(joint_state(names, qm, um, t_old))
    got = fx.exchange([(fx.js, joint_state(names, qm2, um, t_new))], t_new)
    check_outputs(got, _fx_expected(qm2, um), robot, FX_JAC, names, 'world')
    assert fx.count(t_old) == 0


def test_older_odometry_is_dropped_and_a_jump_back_taken(fl):
    robot = ROBOTS['branched']
    R_b, p_b, v_b, w_b, qm, um, _ = rand_state(robot, 34)
    R_2, p_2, v_2, w_2, _, _, _ = rand_state(robot, 35)
    t = stamp(3100)
    fl.exchange(
        [
            (fl.odom, odometry(R_b, p_b, v_b, w_b, t)),
            (fl.js, joint_state(robot.q_names, qm, um, t)),
        ],
        t,
    )
    # a delayed older odometry with another pose: dropped, the newer pose stays in use
    t_late, t_js = stamp(3099, 900_000_000), stamp(3100, 100_000_000)
    fl.ros.publish_until(
        fl.odom,
        lambda: odometry(R_2, p_2, v_2, w_2, t_late),
        lambda: (
            'odometry stamped 3099.900000000 s, before the last one (3100.000000000 s): dropped'
            in fl.proc.output()
        ),
        what='the older odometry warning',
        process=fl.proc,
    )
    got = fl.exchange([(fl.js, joint_state(robot.q_names, qm, um, t_js))], t_js)
    check_outputs(
        got,
        ref.expected_outputs(robot, R_b, p_b, v_b, w_b, qm, um, True, FL_JAC),
        robot,
        FL_JAC,
        FL_COLUMNS + robot.q_names,
        'odom',
    )
    # odometry (and joint states) stamped far back: a clock jump, taken
    before = len(fl.proc.output())
    t_back = stamp(3050)
    got = fl.exchange(
        [
            (fl.odom, odometry(R_2, p_2, v_2, w_2, t_back)),
            (fl.js, joint_state(robot.q_names, qm, um, t_back)),
        ],
        t_back,
    )
    check_outputs(
        got,
        ref.expected_outputs(robot, R_2, p_2, v_2, w_2, qm, um, True, FL_JAC),
        robot,
        FL_JAC,
        FL_COLUMNS + robot.q_names,
        'odom',
    )
    assert 'clock jump back: ' in fl.proc.output()[before:]


def test_node_clock_jump_back_forgets_the_stamps(fl):
    """
    /fl runs on sim time.

    A jump back of /clock (a simulator reset) makes the node forget the stamps, as tf2's buffer
    does: joint_states and odometry stamped a little (less than clock_jump_back) before the last
    ones, dropped until then, are taken.
    """
    robot = ROBOTS['branched']
    R_b, p_b, v_b, w_b, qm, um, _ = rand_state(robot, 36)
    clock = fl.ros.publisher(Clock, '/clock', RELIABLE_QOS)
    fl.ros.wait_for_matched(clock, 1, 10.0, process=fl.proc)
    t1 = stamp(3200)
    fl.exchange(
        [
            (fl.odom, odometry(R_b, p_b, v_b, w_b, t1)),
            (fl.js, joint_state(robot.q_names, qm, um, t1)),
        ],
        t1,
    )
    for _ in range(5):
        clock.publish(Clock(clock=t1))
        fl.ros.spin_for(0.1)
    # before the jump: 0.1 s older joint states are dropped
    t_old = stamp(3199, 900_000_000)
    for _ in range(3):
        fl.odom.publish(odometry(R_b, p_b, v_b, w_b, t_old))
        fl.js.publish(joint_state(robot.q_names, qm, um, t_old))
        fl.ros.spin_for(0.1)
    assert fl.count(t_old) == 0
    fl.ros.publish_until(
        clock,
        lambda: Clock(clock=stamp(3199, 700_000_000)),
        lambda: 'clock jump back: the node clock jumped back by 0.300000000 s' in fl.proc.output(),
        what='the clock jump warning',
        process=fl.proc,
    )
    t2 = stamp(3199, 800_000_000)
    fl.exchange(
        [
            (fl.odom, odometry(R_b, p_b, v_b, w_b, t2)),
            (fl.js, joint_state(robot.q_names, qm, um, t2)),
        ],
        t2,
    )


# the best-effort publisher meets a reliable subscription on purpose: rclpy's default
# incompatible-QoS handler reports it with its own deprecated logger.warn
@pytest.mark.filterwarnings('ignore:Deprecated in favor of:DeprecationWarning')
def test_reliable_input_and_accepted_older_stamps(ro, fx):
    """
    input_reliability: reliable matches reliable publishers only (joint_state_broadcaster's).

    The default best_effort matches both. accept_older_stamps: older stamps are answered.
    """
    robot = ROBOTS['kuka']
    names = robot.q_names
    eye = (np.eye(3), np.zeros(3), np.zeros(3), np.zeros(3))
    leaf = [('lbr_iiwa_link_7', [0.0, 0.0, 0.0])]  # default Jacobians: the leaf link
    _, _, _, _, qm, um, rng = rand_state(robot, 37)
    fx.ros.wait_for_matched(fx.js_best_effort, 1, 10.0, process=fx.proc)
    t = stamp(50)
    got = ro.exchange([(ro.js, joint_state(names, qm, um, t))], t)
    check_outputs(
        got, ref.expected_outputs(robot, *eye, qm, um, False, leaf), robot, leaf, names, 'world'
    )
    ro.ros.spin_for(0.3)
    assert ro.js_best_effort.get_subscription_count() == 0  # incompatible QoS: never matched
    t_be = stamp(51)
    for _ in range(5):
        ro.js_best_effort.publish(joint_state(names, qm, um, t_be))
        ro.ros.spin_for(0.05)
    # older stamps: answered, with their values
    qm2 = rng.uniform(-1, 1, robot.n_q)
    t_old = stamp(49, 500_000_000)
    got = ro.exchange([(ro.js, joint_state(names, qm2, um, t_old))], t_old)
    check_outputs(
        got, ref.expected_outputs(robot, *eye, qm2, um, False, leaf), robot, leaf, names, 'world'
    )
    assert ro.count(t_be) == 0
    assert 'before the last one' not in ro.proc.output()


def test_input_queue_depth_takes_effect(ro, fx):
    """
    20 joint_states arriving while the node is busy (stopped with SIGSTOP for 0.3 s).

    With input_queue_depth 100 (/qd, the default) every one is answered, with 1 (/ro) only the
    newest few (the subscription keeps the last one). Both subscribe reliably, so that only the
    depth differs: a best-effort subscriber (/fx) starved and stopped loses the burst in DDS
    before any queue sees it (none of 20 answered in 2 of 6 runs at nice 19 beside two busy
    processes over shared memory; reliable, 4 of 4 answered all).
    """
    robot = ROBOTS['kuka']
    names = robot.q_names
    _, _, _, _, qm, um, _ = rand_state(robot, 38)
    deep = QoSProfile(
        history=HistoryPolicy.KEEP_LAST,
        depth=200,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.VOLATILE,
    )
    # a burst of 20 answers must all reach this process, however slow: above the default output
    # depth (10), a reliable writer overwrites what this process has not acknowledged
    qd_proc = start_node(
        PKG,
        EXE,
        namespace='/qd',
        parameters={
            'base': 'fixed',
            'urdf_path': KUKA,
            'input_reliability': 'reliable',
            'output_queue_depth': 50,
        },
    )
    try:
        qd_proc.wait_for_output(READY, 90.0)
        _queue_depths(
            {'qd': SimpleNamespace(ros=fx.ros, proc=qd_proc), 'ro': ro}, names, qm, um, deep
        )
    finally:
        qd_proc.cleanup()


def _queue_depths(ios, names, qm, um, deep):
    qd, ro = ios['qd'], ios['ro']
    pubs = {k: io.ros.publisher(JointState, f'/{k}/joint_states', deep) for k, io in ios.items()}
    coms = {
        k: io.ros.subscribe(CenterOfMass, f'/{k}/spart_dynamics/center_of_mass', deep)
        for k, io in ios.items()
    }
    for k, io in ios.items():  # matched both ways: one joint state answered
        t = stamp(2100)
        io.ros.publish_until(
            pubs[k],
            lambda: joint_state(names, qm, um, t),
            lambda: any(m.header.stamp == t for m in coms[k].messages),
            what=f'/{k} answering',
            process=io.proc,
        )
    burst = [stamp(2101, k * 1_000_000) for k in range(20)]

    def answered(k):
        got = {(m.header.stamp.sec, m.header.stamp.nanosec) for m in coms[k].messages}
        return [s for s in burst if (s.sec, s.nanosec) in got]

    def busy_burst(k):
        """Stop the node, publish the burst to it, let it go."""
        os.kill(ios[k].proc.pid, signal.SIGSTOP)
        try:
            for s in burst:
                pubs[k].publish(joint_state(names, qm, um, s))
            ios[k].ros.spin_for(0.3)
        finally:
            os.kill(ios[k].proc.pid, signal.SIGCONT)

    # one node at a time (with both stopped at once, a best-effort node lost the burst more often)
    busy_burst('qd')
    try:
        qd.ros.wait_for(
            lambda: len(answered('qd')) == len(burst),
            20.0,
            'every joint state answered by /qd',
            process=qd.proc,
        )
    except WaitTimeout as exc:
        raise WaitTimeout(f'{exc}\n(/qd answered {len(answered("qd"))} of {len(burst)})') from None
    busy_burst('ro')
    ro.ros.wait_for(
        lambda: burst[-1] in answered('ro'),
        20.0,
        'the newest joint state answered by /ro',
        process=ro.proc,
    )
    ro.ros.spin_for(0.5)
    assert len(answered('ro')) < len(burst) // 2, answered('ro')


# ---------------------------------------------------------------------------------------


def _set_parameter(io, name, value):
    req = SetParameters.Request(
        parameters=[
            ParameterMsg(
                name=name,
                value=ParameterValue(type=ParameterType.PARAMETER_STRING, string_value=value),
            )
        ]
    )
    res = io.call(SetParameters, 'set_parameters', req)
    return res.results[0]


def test_runtime_bad_description_at_start_keeps_node_up(rt):
    assert rt.proc.is_running()
    assert re.search(
        r"robot description from parameter robot_description rejected: .*link 'lonely' is defined "
        r'twice.*\(no model loaded yet\)',
        rt.proc.output(),
    )
    res = rt.call(
        InverseDynamics, 'inverse_dynamics', InverseDynamics.Request(use_current_state=True)
    )
    assert not res.success and 'no robot model yet' in res.message


def test_runtime_description_topic_replaces_the_model(rt):
    kuka, branched = ROBOTS['kuka'], ROBOTS['plain_branched']
    # before any joint state: use_current_state is refused
    rt.description.publish(String(data=Path(KUKA).read_text()))
    rt.proc.wait_for_output(r"model 'lbr_iiwa'.*from topic /rt/robot_description", 20.0)
    res = rt.call(
        ForwardDynamics, 'forward_dynamics', ForwardDynamics.Request(use_current_state=True)
    )
    assert (
        not res.success
        and 'no current state (use_current_state): waiting for joint states of' in res.message
    )

    _, _, _, _, qm, um, rng = rand_state(kuka, 9)
    t = stamp(500)
    got = rt.exchange([(rt.js, joint_state(kuka.q_names, qm, um, t))], t)
    leaf = [('lbr_iiwa_link_7', [0.0, 0.0, 0.0])]
    eye = (np.eye(3), np.zeros(3), np.zeros(3), np.zeros(3))
    check_outputs(
        got,
        ref.expected_outputs(kuka, *eye, qm, um, False, leaf),
        kuka,
        leaf,
        kuka.q_names,
        'world',
    )

    # a new description (another robot) on the topic: rebuilt, outputs follow the new model
    rt.description.publish(String(data=Path(urdf_path('branched_two_arm_spacecraft')).read_text()))
    rt.proc.wait_for_output(r"model 'branched_two_arm_spacecraft'", 20.0)
    _, _, _, _, qm, um, rng = rand_state(branched, 10)
    t = stamp(501)
    got = rt.exchange([(rt.js, joint_state(*shuffled(branched, qm, um, rng), t))], t)
    leaves = [(x, [0.0, 0.0, 0.0]) for x in ('a_tip', 'a_finger_right', 'b_ee')]
    check_outputs(
        got,
        ref.expected_outputs(branched, *eye, qm, um, False, leaves),
        branched,
        leaves,
        branched.q_names,
        'world',
    )

    # a bad description: error naming the problem, the previous model stays and keeps working
    rt.description.publish(
        String(
            data='<robot name="broken"><link name="a"><inertial><mass value="1"/>'
            '</inertial></link>'
        )
    )
    rt.proc.wait_for_output(
        r'robot description from topic /rt/robot_description rejected: .*'
        r'\(keeping the previous model\)',
        20.0,
    )
    t = stamp(502)
    got = rt.exchange([(rt.js, joint_state(branched.q_names, qm, um, t))], t)
    assert list(got[0].link_names) == branched.link_names
    res = rt.call(
        InverseDynamics, 'inverse_dynamics', InverseDynamics.Request(use_current_state=True)
    )
    assert res.success, res.message
    assert list(res.joint_names) == branched.q_names
    assert rt.proc.is_running()


def test_runtime_urdf_path_parameter(rt):
    kuka = ROBOTS['kuka']
    result = _set_parameter(rt, 'urdf_path', '/no/such/robot.urdf')
    assert not result.successful and '/no/such/robot.urdf' in result.reason
    result = _set_parameter(rt, 'urdf_path', KUKA)
    assert result.successful, result.reason
    rt.proc.wait_for_output(r"model 'lbr_iiwa'.*from parameter urdf_path", 10.0)
    _, _, _, _, qm, um, _ = rand_state(kuka, 11)
    t = stamp(600)
    got = rt.exchange([(rt.js, joint_state(kuka.q_names, qm, um, t))], t)
    assert list(got[0].link_names) == kuka.link_names


# ---------------------------------------------------------------------------------------
# configuration, installation, documentation
# ---------------------------------------------------------------------------------------


def test_invalid_configuration_exits_with_a_clear_error():
    proc = start_node(PKG, EXE, namespace='/cfg', parameters={'base': 'wobbly'})
    try:
        proc.wait_exit()
        assert proc.returncode == 2, proc.describe()
        assert "base must be one of ('fixed', 'floating'), got 'wobbly'" in proc.output()
    finally:
        proc.cleanup()


def test_installed_files():
    from ament_index_python.packages import get_package_share_directory

    installed_executable(PKG, EXE)
    share = Path(get_package_share_directory(PKG))
    for rel in ('config/dynamics_node.yaml', 'launch/dynamics.launch.py'):
        assert (share / rel).is_file(), rel
    compile((ROOT / 'launch' / 'dynamics.launch.py').read_text(), 'dynamics.launch.py', 'exec')
    assert os.environ.get('ROS_DOMAIN_ID')
