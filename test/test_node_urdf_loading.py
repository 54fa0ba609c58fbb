"""
Real-world URDFs through the INSTALLED spart_dynamics node (separate processes, real topics).

An encoding declaration on the robot_description topic and in the parameter, a `world` root on a
fixed joint (the parameters place the URDF's world), massless frames and impossible inertias as log
warnings (``strict: true`` refuses them), and mimic joints: joint_states need only the leaders, the
followers are ignored, Jacobian columns and service efforts are per leader (a follower's effort
reaches its leader times its multiplier). Expected values come from the numpy SPART functions in
full coordinates (test/dynamics_reference.py), projected by hand.
"""

from pathlib import Path

from builtin_interfaces.msg import Time
import dynamics_reference as ref
from node_helpers import LATCHED_QOS, RELIABLE_QOS, RosTestNode, start_node
import numpy as np
import pytest
from sensor_msgs.msg import JointState
from spart_interfaces.msg import Jacobians
from spart_interfaces.srv import InverseDynamics
from spart_ros import spart
from std_msgs.msg import String

pytestmark = [
    pytest.mark.timeout(240),
    pytest.mark.filterwarnings('ignore::spart_ros.core.errors.SpartWarning'),
]

DATA = Path(__file__).resolve().parent / 'data' / 'urdf' / 'loading'
UR5 = (DATA / 'ur5_world.urdf').read_text(encoding='utf-8')
GRIPPER = (DATA / 'gripper_mimic.urdf').read_text(encoding='utf-8')
READY = r'spart_dynamics\]: base fixed'


def _inertia_broken(text):
    """
    Return the gripper with one link's inertia breaking the triangle inequality.

    No rigid body has it.
    """
    return text.replace(
        '<inertia ixx="0.002" ixy="0.0001" ixz="0" iyy="0.012" iyz="0" izz="0.012"/>',
        '<inertia ixx="0.001" ixy="0" ixz="0" iyy="0.001" iyz="0" izz="0.012"/>',
        1,
    )


@pytest.fixture(scope='module')
def ros():
    node = RosTestNode('test_node_urdf_loading')
    yield node
    node.close()


def _js(names, q, u, sec):
    msg = JointState(
        name=list(names), position=[float(x) for x in q], velocity=[float(x) for x in u]
    )
    msg.header.stamp = Time(sec=sec)
    return msg


def _jacobian_for(ros, proc, js_pub, jac, msg):
    def step():
        js_pub.publish(msg)
        m = [x for x in jac.messages if x.header.stamp == msg.header.stamp]
        return m[-1] if m else None

    return ros.wait_for(step, 15.0, f'Jacobians stamped {msg.header.stamp.sec}', process=proc)


def test_encoding_declaration_world_root_and_warnings_as_logs(ros):
    """
    The UR5 (encoding declaration, `world` on a fixed joint, massless frames) as a parameter.

    It loads, the massless frames are a log warning (not a raw Python warning on stderr), and the
    base pose is base_position/base_orientation composed with the URDF's world joint.
    """
    assert UR5.startswith('<?xml version="1.0" encoding="utf-8"?>')
    R_w, p_w = ref.rot([0, 0, 1], 0.3), np.array([1.0, 2.0, 0.5])
    proc = start_node(
        'spart_ros',
        'dynamics_node',
        namespace='/ur5',
        parameters={
            'robot_description': UR5,
            'base_position': p_w.tolist(),
            'base_orientation': ref.quat_xyzw(R_w).tolist(),
            'jacobian_links': ['tool0'],
        },
        wait_for=READY,
        wait_timeout=90.0,
    )
    try:
        out = proc.output()
        assert "model 'ur5'" in out and "base 'base_link'" in out, out
        assert 'WARN' in out and 'no <inertial>' in out and 'ModelWarning' not in out, out
        robot = spart.urdf2robot(UR5)[0]
        T = robot.base_pose
        R_b, p_b = R_w @ T[:3, :3], p_w + R_w @ T[:3, 3]  # world link placed by the parameters
        js = ros.publisher(JointState, '/ur5/joint_states', RELIABLE_QOS)
        jac = ros.subscribe(Jacobians, '/ur5/spart_dynamics/jacobians', RELIABLE_QOS)
        rng = np.random.default_rng(3)
        qm, um = rng.uniform(-1, 1, robot.n_q), rng.standard_normal(robot.n_q)
        got = _jacobian_for(ros, proc, js, jac, _js(robot.q_names, qm, um, 5))
        exp = ref.expected_outputs(
            robot, R_b, p_b, np.zeros(3), np.zeros(3), qm, um, False, [('tool0', [0.0, 0.0, 0.0])]
        )
        J = np.asarray(got.jacobians[0].data).reshape(6, got.jacobians[0].cols)
        np.testing.assert_allclose(J, exp.jacobians[0], rtol=1e-9, atol=1e-9)
        p = got.jacobians[0].position
        np.testing.assert_allclose([p.x, p.y, p.z], exp.points[0], rtol=1e-9, atol=1e-9)
    finally:
        proc.cleanup()


def test_mimic_joints_strict_inertia_and_encoding_on_the_topic(ros):
    proc = start_node(
        'spart_ros',
        'dynamics_node',
        namespace='/grip',
        parameters={'strict': True, 'jacobian_links': ['finger_right_link']},
        wait_for=READY,
        wait_timeout=90.0,
    )
    try:
        desc = ros.publisher(String, '/grip/robot_description', LATCHED_QOS)
        js = ros.publisher(JointState, '/grip/joint_states', RELIABLE_QOS)
        jac = ros.subscribe(Jacobians, '/grip/spart_dynamics/jacobians', RELIABLE_QOS)
        # strict: an impossible inertia refuses the model, naming the link
        ros.publish_until(
            desc,
            lambda: String(data=_inertia_broken(GRIPPER)),
            lambda: 'rejected' in proc.output() and "'upper'" in proc.output(),
            what='the strict inertia refusal',
            process=proc,
        )
        # the gripper with an encoding declaration, over the topic
        text = '<?xml version="1.0" encoding="utf-8"?>\n' + GRIPPER.split('\n', 1)[1]
        ros.publish_until(
            desc,
            lambda: String(data=text),
            lambda: "model 'gripper_mimic'" in proc.output(),
            what='the gripper model',
            process=proc,
        )
        robot = spart.urdf2robot(GRIPPER)[0]
        c = robot.coordinates
        assert c.followers and proc.output().count('mimic:') >= 1
        # xacro on the topic is refused without running it (robot_state_publisher publishes
        # expanded URDF); the gripper stays the model
        xacro_text = (
            '<robot name="x" xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:property name="m" '
            'value="1"/><link name="a"><inertial><mass value="${m}"/>'
            '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link></robot>'
        )
        ros.publish_until(
            desc,
            lambda: String(data=xacro_text),
            lambda: 'expand it first' in proc.output(),
            what='the xacro refusal',
            process=proc,
        )
        assert 'keeping the previous model' in proc.output() and "model 'x'" not in proc.output()
        leaders = c.names
        rng = np.random.default_rng(4)
        q, u = rng.uniform(-0.5, 0.5, c.n), rng.standard_normal(c.n)
        # only the leaders, plus a follower with a contradicting value that must be ignored
        follower = next(iter(c.followers))
        msg = _js(list(leaders) + [follower], list(q) + [9.0], list(u) + [9.0], 7)
        got = _jacobian_for(ros, proc, js, jac, msg)
        assert 'ignoring joints not in the model' not in proc.output()
        J = got.jacobians[0]
        assert list(J.column_names) == list(leaders)  # one column per leader
        q_full, u_full = c.positions(q), c.velocities(u)
        exp = ref.expected_outputs(
            robot,
            np.eye(3),
            np.zeros(3),
            np.zeros(3),
            np.zeros(3),
            q_full,
            u_full,
            False,
            [('finger_right_link', [0.0, 0.0, 0.0])],
        )
        np.testing.assert_allclose(
            np.asarray(J.data).reshape(6, J.cols), exp.jacobians[0] @ c.G, rtol=1e-9, atol=1e-9
        )
        # inverse dynamics per leader: G' tau_full with the full accelerations G qdd
        qdd = rng.standard_normal(c.n)
        z3, z6 = np.zeros(3), np.zeros(6)
        req = InverseDynamics.Request(
            joint_names=list(reversed(leaders)),
            positions=list(q[::-1]),
            velocities=list(u[::-1]),
            accelerations=list(qdd[::-1]),
        )
        req.base_pose.orientation.w = 1.0
        res = ros.call(InverseDynamics, '/grip/spart_dynamics/inverse_dynamics', req, process=proc)
        assert res.success, res.message
        tau_full, _, _ = ref.expected_id(
            robot,
            np.eye(3),
            z3,
            z3,
            z3,
            q_full,
            u_full,
            c.accelerations(qdd),
            z3,
            z3,
            z6,
            np.zeros((6, robot.n_links_joints)),
            z3,
            floating=False,
        )
        np.testing.assert_allclose(res.efforts, (c.G.T @ tau_full)[::-1], rtol=1e-9, atol=1e-9)
        # a follower in a request: refused, naming its leader
        bad = InverseDynamics.Request(
            joint_names=list(leaders) + [follower], positions=[0.0] * (c.n + 1)
        )
        bad.base_pose.orientation.w = 1.0
        res = ros.call(InverseDynamics, '/grip/spart_dynamics/inverse_dynamics', bad, process=proc)
        assert (
            not res.success
            and 'mimic joint' in res.message
            and repr(c.followers[follower].leader) in res.message
        )
    finally:
        proc.cleanup()


def test_the_nodes_find_xacro_packages_in_package_paths(tmp_path):
    """
    The parameter package_paths: spart_dynamics and spart_sim expand a xacro's $(find pkg).

    A ``urdf_path`` whose package is in no ament index (issue 34); spart_dynamics reads it through
    RobotInputs, as spart_controller does.
    """
    (tmp_path / 'desc' / 'urdf').mkdir(parents=True)
    (tmp_path / 'desc' / 'urdf' / 'part.xacro').write_text(
        '<robot xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:macro name="part" '
        'params="name"><link name="${name}"><inertial><mass value="2"/><inertia ixx="0.1" '
        'iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link></xacro:macro></robot>'
    )
    arm = tmp_path / 'arm.urdf.xacro'
    arm.write_text(
        '<robot name="found_arm" xmlns:xacro="http://www.ros.org/wiki/xacro">'
        '<xacro:include filename="$(find desc)/urdf/part.xacro"/><xacro:part name="base"/>'
        '<xacro:part name="link"/><joint name="j" type="revolute"><parent link="base"/>'
        '<child link="link"/><axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="10" '
        'velocity="1"/></joint></robot>'
    )
    common = {'urdf_path': str(arm), 'package_paths': [str(tmp_path)]}
    procs = [
        start_node('spart_ros', 'dynamics_node', namespace='/pkgs', parameters=common),
        start_node(
            'spart_ros',
            'sim_node',
            namespace='/pkgs',
            parameters=dict(common, publish_clock=False, lockstep=True),
        ),
    ]
    try:
        procs[0].wait_for_output(r"model 'found_arm': 2 links .* \(from urdf_path", 60.0)
        procs[1].wait_for_output(r"robot 'found_arm' from urdf_path", 60.0)
    finally:
        for p in procs:
            p.cleanup()
