"""
A generated catalogue of bad inputs for the INSTALLED spart_dynamics node.

One process, floating base with an IMU, over real topics and services.

Every field of every input (service requests, joint_states, odometry, IMU, robot_description)
gets each mutation (NaN, +-inf, a huge value, a wrong length, an unknown or repeated name, a
zero quaternion...).  Each one must be refused with an error that names the field, joint or
link at fault (service: ``success: false`` + message; topic: an error line in the log), or,
where the value is legal (a huge but finite angle), answered with finite numbers; the node
keeps running, and the valid input that follows still gets the right answer (checked against
the numpy SPART functions, test/dynamics_reference.py).
"""

import math
from pathlib import Path

from builtin_interfaces.msg import Time
from core_helpers import urdf_path
import dynamics_reference as ref
from geometry_msgs.msg import Quaternion
from nav_msgs.msg import Odometry
from node_helpers import (
    BEST_EFFORT_QOS,
    LATCHED_QOS,
    RELIABLE_QOS,
    RosTestNode,
    start_node,
)
import numpy as np
import pytest
from sensor_msgs.msg import Imu, JointState
from spart_interfaces.msg import Jacobians, LinkWrench
from spart_interfaces.srv import ForwardDynamics, InverseDynamics
from spart_ros import spart
from std_msgs.msg import String

pytestmark = pytest.mark.timeout(300)

URDF = ref.with_imu(Path(urdf_path('branched_two_arm_spacecraft')).read_text(), 'bus')
ROBOT = spart.urdf2robot(URDF)[0]
NS = '/bad'
NAN, INF = float('nan'), float('inf')
#: value mutations of one number: (label, value)
NUMBER_MUTATIONS = [('NaN', NAN), ('inf', INF), ('-inf', -INF)]


@pytest.fixture(scope='module')
def node():
    proc = start_node(
        'spart_ros',
        'dynamics_node',
        namespace=NS,
        parameters={
            'base': 'floating',
            'robot_description': URDF,
            'use_imu': True,
            'imu_link': 'imu_link',
            'imu_topic': 'imu',
            'world_frame': 'odom',
        },
        wait_for=r'spart_dynamics\]: base floating',
        wait_timeout=90.0,
    )
    ros = RosTestNode('test_node_bad_inputs')
    try:
        yield proc, ros
    finally:
        ros.close()
        proc.cleanup()


def _state(seed):
    rng = np.random.default_rng(seed)
    return {
        'R_b': ref.rot(rng.standard_normal(3), rng.uniform(0, 3)),
        'p_b': rng.standard_normal(3),
        'v_b': rng.standard_normal(3),
        'w_b': rng.standard_normal(3),
        'qm': rng.uniform(-1, 1, ROBOT.n_q),
        'um': rng.standard_normal(ROBOT.n_q),
        'x': rng.standard_normal(ROBOT.n_q),
    }


def _quat(R):
    x, y, z, w = ref.quat_xyzw(R)
    return Quaternion(x=x, y=y, z=z, w=w)


def _request(kind, s):
    """Return a valid full-state request (joint order reversed: mapped by name) of ``kind``."""
    req = (ForwardDynamics if kind == 'fd' else InverseDynamics).Request()
    names = list(reversed(ROBOT.q_names))
    req.joint_names = names
    req.positions = [float(x) for x in s['qm'][::-1]]
    req.velocities = [float(x) for x in s['um'][::-1]]
    if kind == 'fd':
        req.efforts = [float(x) for x in s['x'][::-1]]
    else:
        req.accelerations = [float(x) for x in s['x'][::-1]]
        req.floating_base = True
    p = req.base_pose.position
    p.x, p.y, p.z = (float(v) for v in s['p_b'])
    req.base_pose.orientation = _quat(s['R_b'])
    tw = req.base_twist
    tw.linear.x, tw.linear.y, tw.linear.z = (float(v) for v in s['v_b'])
    tw.angular.x, tw.angular.y, tw.angular.z = (float(v) for v in s['w_b'])
    lw = LinkWrench(link_name='a_wrist')
    lw.wrench.force.x, lw.wrench.torque.z = 1.0, -0.5
    req.link_wrenches = [lw]
    return req


def _expected(kind, s):
    wFm = np.zeros((6, ROBOT.n_links_joints))
    wFm[:, ROBOT.link_index('a_wrist') - 1] = [0, 0, -0.5, 1.0, 0, 0]
    z3, z6 = np.zeros(3), np.zeros(6)
    if kind == 'fd':
        return ref.expected_fd(
            ROBOT,
            s['R_b'],
            s['p_b'],
            s['v_b'],
            s['w_b'],
            s['qm'],
            s['um'],
            s['x'],
            z3,
            z3,
            z6,
            wFm,
            z3,
        )[0]
    return ref.expected_floating_id(
        ROBOT, s['R_b'], s['p_b'], s['v_b'], s['w_b'], s['qm'], s['um'], s['x'], z6, wFm, z3
    )[0]


def _service_mutations(kind):
    """(label, mutate(req), words the error must contain) for every field of a request."""
    per_joint = 'efforts' if kind == 'fd' else 'accelerations'
    out = []
    for field in ('positions', 'velocities', per_joint):
        for label, v in NUMBER_MUTATIONS:

            def m(req, field=field, v=v):
                values = list(getattr(req, field))
                values[2] = v
                setattr(req, field, values)

            out.append(
                (
                    f'{field}[2]={label}',
                    m,
                    [field, repr(list(reversed(ROBOT.q_names)))[1:-1].split(', ')[2].strip("'")],
                )
            )

        def short(req, field=field):
            setattr(req, field, list(getattr(req, field))[:-1])

        out.append((f'{field} one short', short, [field, f'{ROBOT.n_q - 1} values']))
    for path in ('base_pose.position', 'base_twist.linear', 'base_twist.angular'):
        for axis in 'xyz':
            for label, v in NUMBER_MUTATIONS:

                def m(req, path=path, axis=axis, v=v):
                    obj = req
                    for part in path.split('.'):
                        obj = getattr(obj, part)
                    setattr(obj, axis, v)

                out.append(
                    (f'{path}.{axis}={label}', m, [path.replace('.position', '').split('.')[0]])
                )
    for label, q in (
        ('zero', (0.0, 0.0, 0.0, 0.0)),
        ('NaN', (NAN, 0.0, 0.0, 1.0)),
        ('inf', (0.0, INF, 0.0, 1.0)),
    ):

        def m(req, q=q):
            req.base_pose.orientation = Quaternion(x=q[0], y=q[1], z=q[2], w=q[3])

        out.append((f'base_pose.orientation {label}', m, ['base_pose']))
    for label, v in NUMBER_MUTATIONS:

        def grav(req, v=v):
            req.override_gravity = True
            req.gravity.y = v

        out.append((f'gravity.y={label}', grav, ['gravity']))

        def wrench(req, v=v):
            req.link_wrenches[0].wrench.force.y = v

        out.append((f'link_wrenches[0].force.y={label}', wrench, ['link_wrenches[0]', 'force']))
    out += [
        (
            'unknown joint',
            lambda req: req.joint_names.__setitem__(0, 'elbow_x'),
            ["unknown joint 'elbow_x'"],
        ),
        (
            'repeated joint',
            lambda req: req.joint_names.__setitem__(0, req.joint_names[1]),
            ['appears twice'],
        ),
        (
            'unknown link wrench',
            lambda req: setattr(req.link_wrenches[0], 'link_name', 'hand'),
            ["unknown link 'hand'"],
        ),
        (
            'use_current_state with positions',
            lambda req: setattr(req, 'use_current_state', True),
            ['use_current_state'],
        ),
    ]
    return out


@pytest.mark.parametrize('kind', ['fd', 'id'])
def test_service_request_catalogue(node, kind):
    proc, ros = node
    srv = ForwardDynamics if kind == 'fd' else InverseDynamics
    name = f'{NS}/spart_dynamics/{"forward" if kind == "fd" else "inverse"}_dynamics'
    mutations = _service_mutations(kind)
    assert len(mutations) > 40
    for k, (label, mutate, words) in enumerate(mutations):
        s = _state(100 + k)
        bad = _request(kind, s)
        mutate(bad)
        res = ros.call(srv, name, bad, process=proc)
        assert not res.success, f'{label}: accepted ({res})'
        for w in words:
            assert w in res.message, f'{label}: {res.message!r} does not name {w!r}'
        assert 'np.float64' not in res.message, res.message
        # the next valid request is answered right
        res = ros.call(srv, name, _request(kind, s), process=proc)
        assert res.success, f'after {label}: {res.message}'
        got = res.accelerations if kind == 'fd' else res.efforts
        np.testing.assert_allclose(
            got, _expected(kind, s)[::-1], rtol=1e-8, atol=1e-8, err_msg=label
        )
    assert proc.is_running()


def test_huge_values_are_refused_or_answered_finite(node):
    """A huge but finite input: either a named error or finite numbers, never inf/NaN out."""
    proc, ros = node
    name = f'{NS}/spart_dynamics/forward_dynamics'
    for field in ('positions', 'velocities', 'efforts'):
        for value in (1e200, -1e200, 1e154):
            s = _state(7)
            req = _request('fd', s)
            values = list(getattr(req, field))
            values[1] = value
            setattr(req, field, values)
            res = ros.call(ForwardDynamics, name, req, process=proc)
            if res.success:
                assert all(math.isfinite(x) for x in res.accelerations), (field, value, res)
            else:
                assert res.message and 'np.float64' not in res.message, res.message
    assert proc.is_running()


def _js(names, pos, vel, t):
    msg = JointState(
        name=list(names), position=[float(x) for x in pos], velocity=[float(x) for x in vel]
    )
    msg.header.stamp = t
    return msg


def _odom(s, t):
    msg = Odometry()
    msg.header.stamp, msg.header.frame_id, msg.child_frame_id = t, 'odom', 'bus'
    p = msg.pose.pose.position
    p.x, p.y, p.z = (float(v) for v in s['p_b'])
    msg.pose.pose.orientation = _quat(s['R_b'])
    tw = msg.twist.twist
    tw.linear.x, tw.linear.y, tw.linear.z = (float(v) for v in s['v_b'])
    tw.angular.x, tw.angular.y, tw.angular.z = (float(v) for v in s['w_b'])
    return msg


def _topic_mutations():
    """(topic kind, label, make(s, t) -> message, words the error log must name)."""
    names = list(ROBOT.q_names)
    out = []
    for label, v in NUMBER_MUTATIONS:

        def pos(s, t, v=v):
            q = s['qm'].copy()
            q[3] = v
            return _js(names, q, s['um'], t)

        def vel(s, t, v=v):
            u = s['um'].copy()
            u[0] = v
            return _js(names, s['qm'], u, t)

        out += [
            ('js', f'position={label}', pos, [f'position of joint {names[3]!r}']),
            ('js', f'velocity={label}', vel, [f'velocity of joint {names[0]!r}']),
        ]

        def odom_p(s, t, v=v):
            msg = _odom(s, t)
            msg.pose.pose.position.z = v
            return msg

        def odom_w(s, t, v=v):
            msg = _odom(s, t)
            msg.twist.twist.angular.x = v
            return msg

        def imu_w(s, t, v=v):
            msg = Imu()
            msg.header.stamp, msg.header.frame_id = t, 'imu_link'
            msg.orientation = _quat(s['R_b'])
            msg.angular_velocity.y = v
            return msg

        out += [
            ('odom', f'position={label}', odom_p, ['odometry pose.position']),
            ('odom', f'angular={label}', odom_w, ['odometry twist angular']),
            ('imu', f'angular_velocity={label}', imu_w, ['IMU angular_velocity']),
        ]
    out += [
        (
            'js',
            'positions one short',
            lambda s, t: _js(names, s['qm'][:-1], s['um'], t),
            [f'{len(names)} names but {len(names) - 1} positions'],
        ),
        (
            'js',
            'velocities one long',
            lambda s, t: _js(names, s['qm'], list(s['um']) + [0.0], t),
            [f'{len(names)} names but {len(names) + 1} velocities'],
        ),
        (
            'js',
            'repeated joint',
            lambda s, t: _js([names[0]] + names, [0.0] + list(s['qm']), [0.0] + list(s['um']), t),
            [f'joint {names[0]!r} appears twice'],
        ),
        (
            'odom',
            'zero quaternion',
            lambda s, t: _with(
                _odom(s, t), 'pose.pose.orientation', Quaternion(x=0.0, y=0.0, z=0.0, w=0.0)
            ),
            ['odometry pose.orientation'],
        ),
        (
            'imu',
            'zero quaternion',
            lambda s, t: _with(
                _with(Imu(), 'header.frame_id', 'imu_link'),
                'orientation',
                Quaternion(x=0.0, y=0.0, z=0.0, w=0.0),
            ),
            ['IMU orientation'],
        ),
    ]
    return out


def _with(msg, path, value):
    *parents, last = path.split('.')
    obj = msg
    for part in parents:
        obj = getattr(obj, part)
    setattr(obj, last, value)
    return msg


def test_topic_input_catalogue(node):
    proc, ros = node
    js = ros.publisher(JointState, f'{NS}/joint_states', RELIABLE_QOS)
    odom = ros.publisher(Odometry, f'{NS}/odom', RELIABLE_QOS)
    imu = ros.publisher(Imu, f'{NS}/imu', BEST_EFFORT_QOS)
    jac = ros.subscribe(Jacobians, f'{NS}/spart_dynamics/jacobians', RELIABLE_QOS)
    pubs = {'js': js, 'odom': odom, 'imu': imu}
    names = list(ROBOT.q_names)
    mutations = _topic_mutations()
    for k, (kind, label, make, words) in enumerate(mutations):
        s = _state(200 + k)
        t_bad, t_ok = Time(sec=1000 + 2 * k), Time(sec=1001 + 2 * k)
        before = len(proc.output())
        if kind != 'js':  # the bad odometry/IMU sample comes with a valid joint state
            pubs[kind].publish(make(s, t_bad))
        ros.publish_until(
            js if kind == 'js' else pubs[kind],
            lambda: make(s, t_bad),
            lambda: (
                'ERROR' in proc.output()[before:]
                and all(w in proc.output()[before:] for w in words)
            ),
            what=f'the error log for {kind} {label}',
            process=proc,
        )
        assert 'np.float64' not in proc.output()[before:]
        # valid inputs after the bad one: the right Jacobian, stamped with the valid joint state
        exp = ref.expected_outputs(
            ROBOT,
            s['R_b'],
            s['p_b'],
            s['v_b'],
            s['w_b'],
            s['qm'],
            s['um'],
            True,
            [(n, [0.0, 0.0, 0.0]) for n in ('a_tip', 'a_finger_right', 'b_ee', 'imu_link')],
        )

        def answered():
            odom.publish(_odom(s, t_ok))
            js.publish(_js(names, s['qm'], s['um'], t_ok))
            m = [x for x in jac.messages if x.header.stamp == t_ok]
            return m[-1] if m else None

        got = ros.wait_for(lambda: answered(), 10.0, f'outputs after {kind} {label}', process=proc)
        J = np.asarray(got.jacobians[0].data).reshape(6, got.jacobians[0].cols)
        np.testing.assert_allclose(
            J, exp.jacobians[0], rtol=1e-9, atol=1e-9, err_msg=f'{kind} {label}'
        )
    assert proc.is_running()


@pytest.mark.parametrize(
    'name, value',
    [
        ('imu_max_age', -0.1),
        ('imu_max_age', NAN),
        ('odom_max_age', -1.0),
        ('odom_max_age', NAN),
        ('clock_jump_back', -1.0),
        ('clock_jump_back', INF),
    ],
)
def test_bad_input_parameters_stop_the_node_naming_them(name, value):
    """
    imu_max_age is checked like odom_max_age: exit code 2, the message naming it.

    A negative or NaN age would make the IMU or the odometry silently never or always fresh.
    """
    proc = start_node(
        'spart_ros',
        'dynamics_node',
        namespace='/badparam',
        parameters={'base': 'floating', 'use_imu': True, name: value},
    )
    try:
        proc.wait_exit()
        assert proc.returncode == 2, proc.describe()
        assert f'{name} must be a' in proc.output(), proc.describe()
    finally:
        proc.cleanup()


def test_bad_robot_descriptions_keep_the_model(node):
    proc, ros = node
    desc = ros.publisher(String, f'{NS}/robot_description', LATCHED_QOS)

    def link(name):
        return (
            f'<link name="{name}"><inertial><mass value="1"/>'
            '<inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial></link>'
        )

    bad = [
        ('not XML', 'hello robot', 'not URDF XML'),
        ('broken XML', '<robot name="x"><link name="a">', 'not valid XML'),
        ('not URDF', '<html><body/></html>', 'not <robot>'),
        (
            'unknown joint type',
            f'<robot name="p">{link("a")}{link("b")}'
            '<joint name="j" type="planar"><parent link="a"/><child link="b"/></joint></robot>',
            "joint 'j'",
        ),
        ('two roots', f'<robot name="c">{link("a")}{link("b")}</robot>', 'root links'),
        (
            'missing child link',
            f'<robot name="m">{link("a")}<joint name="j" type="fixed"><parent link="a"/>'
            '<child link="ghost"/></joint></robot>',
            "'ghost'",
        ),
    ]
    for label, text, words in bad:
        before = len(proc.output())
        ros.publish_until(
            desc,
            lambda: String(data=text),
            lambda: 'rejected' in proc.output()[before:] and words in proc.output()[before:],
            what=f'the rejection of {label}',
            process=proc,
        )
        assert 'keeping the previous model' in proc.output()[before:], label
    # still the same model: a service call on the branched spacecraft works
    s = _state(5)
    res = ros.call(
        InverseDynamics, f'{NS}/spart_dynamics/inverse_dynamics', _request('id', s), process=proc
    )
    assert res.success, res.message
    np.testing.assert_allclose(res.efforts, _expected('id', s)[::-1], rtol=1e-8, atol=1e-8)
