"""
The INSTALLED spart_sim on an orbit, over DDS: LVLH odometry, /tf, the latched orbit, errors.

One lockstep node (namespace /orb): a rigid 50 kg spacecraft (a full inertia) on a circular orbit
400 km up, starting 10 m above the reference point on the 2:1 relative ellipse, off the LVLH
axes; 1 s physics steps, 10 per command.  Checked:

- ``orbit`` (spart_interfaces/Orbit, latched) carries the orbit's parameters;
- the odometry is in ``lvlh`` and equals an in-process MujocoPlant with the same orbit, bit for bit
  (lockstep is exact), and its position follows the Clohessy-Wiltshire closed form (1e-6);
- ``/tf`` carries ``lvlh -> base`` with the odometry's stamp and pose (tf2_msgs from
  test/interfaces where no real one is installed); where tf2_msgs is missing the node says so
  once, publishes no /tf, and runs on;
- an orbit with a fixed base, or with both altitude and mean motion, stops the node (exit code 2)
  naming the problem.
"""

import math
import os
import re

from nav_msgs.msg import Odometry
from node_helpers import LATCHED_QOS, RELIABLE_QOS, RosTestNode, start_node
import numpy as np
import pytest
from sensor_msgs.msg import JointState
from spart_ros.core.attitude import quaternion_from_ros
from spart_ros.core.orbit import CircularOrbit, CONVENTION
from spart_ros.sim import InitialState, MujocoPlant
from std_msgs.msg import Float64MultiArray

pytestmark = pytest.mark.timeout(240)

PKG, EXE = 'spart_ros', 'sim_node'
READY = r'spart_sim\]: robot '
ORBIT = CircularOrbit.make(altitude=400e3)
N = ORBIT.mean_motion
URDF = (
    '<robot name="sat"><link name="hub"><inertial><mass value="50.0"/><inertia ixx="10.0" '
    'iyy="14.0" izz="12.0" ixy="0.4" ixz="-0.3" iyz="0.2"/></inertial></link>'
    '<link name="boom"><inertial><origin xyz="0.5 0 0"/><mass value="0.01"/><inertia ixx="1e-5" '
    'iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial></link>'
    '<joint name="hinge" type="revolute"><parent link="hub"/><child link="boom"/>'
    '<axis xyz="0 0 1"/><limit lower="-3" upper="3" effort="10" velocity="1"/></joint></robot>'
)
QUAT = [0.1, -0.2, 0.3, math.sqrt(1 - 0.14)]
PARAMS = {
    'robot_description': URDF,
    'base': 'floating',
    'gravity': [0.0, 0.0, 0.0],
    'dt': 1.0,
    'lockstep': True,
    'lockstep_steps': 10,
    'hold_until_command': False,
    'orbit_altitude': 400e3,
    'initial_base_position': [10.0, 0.0, 0.0],
    'initial_base_orientation': QUAT,
    # the 2:1 ellipse's velocity (0, -2 n x0, 0) in LVLH, given in the base frame
    'initial_base_linear_velocity': (
        quaternion_from_ros(*QUAT).T @ [0.0, -2 * N * 10.0, 0.0]
    ).tolist(),
    'initial_base_angular_velocity': [0.001, 0.0, -0.002],
}


def stamp_ns(stamp):
    return stamp.sec * 1_000_000_000 + stamp.nanosec


@pytest.fixture(scope='module')
def ros():
    node = RosTestNode('test_orbit_sim_node')
    yield node
    node.close()


@pytest.fixture(scope='module')
def proc():
    p = start_node(
        PKG, EXE, namespace='/orb', parameters=PARAMS, remappings={'/clock': '/orb/clock'}
    )
    try:
        p.wait_for_output(READY, 60.0)
        yield p
    finally:
        p.cleanup()


def test_the_orbit_is_latched_and_logged(ros, proc):
    from spart_interfaces.msg import Orbit

    late = ros.subscribe(Orbit, '/orb/orbit', LATCHED_QOS)
    msg = ros.wait_for_message(late, timeout=20.0, process=proc)
    assert msg.header.frame_id == 'lvlh'
    assert msg.mean_motion == ORBIT.mean_motion and msg.period == ORBIT.period
    assert msg.radius == ORBIT.radius and msg.altitude == pytest.approx(400e3, rel=1e-12)
    assert msg.gravitational_parameter == ORBIT.mu and msg.body_radius == ORBIT.body_radius
    assert msg.speed == ORBIT.speed and (msg.model, msg.convention) == ('linear', CONVENTION)
    assert re.search(r'orbit: circular orbit of radius 6\.77814e\+06 m', proc.output())


def test_odometry_in_lvlh_equals_the_plant_and_follows_cw_and_tf_carries_it(ros, proc):
    from tf2_msgs.msg import TFMessage  # noqa: I100 - test/interfaces' copy here

    odom = ros.subscribe(Odometry, '/orb/odom', RELIABLE_QOS)
    js = ros.subscribe(JointState, '/orb/joint_states', RELIABLE_QOS)
    tf = ros.subscribe(TFMessage, '/tf', RELIABLE_QOS)
    cmd = ros.publisher(Float64MultiArray, '/orb/effort_controller/commands', RELIABLE_QOS)
    ros.wait_for(lambda: cmd.get_subscription_count() >= 1, 20.0, 'commands matched', process=proc)
    ros.wait_for_writers([odom, js, tf])

    def latest():
        return max((stamp_ns(m.header.stamp) for m in js.messages), default=-1)

    zero = Float64MultiArray(data=[0.0])
    ros.publish_until(cmd, lambda: zero, lambda: latest() > 0, timeout=20.0)  # the path works
    # then one command per new state (lockstep: 10 s each), to 600 s at least
    while latest() < 600_000_000_000:
        last = latest()
        cmd.publish(zero)
        ros.wait_for(lambda last=last: latest() > last, 20.0, 'the next state', process=proc)
    final = latest()
    by_stamp = ros.wait_for(
        lambda: (lambda d: d if final in d else None)(
            {stamp_ns(m.header.stamp): m for m in odom.messages}
        ),
        20.0,
        'the last odometry',
        process=proc,
    )
    # the same in process
    plant = MujocoPlant.from_urdf(
        URDF,
        base='floating',
        gravity=(0, 0, 0),
        dt=1.0,
        orbit=ORBIT,
        initial=InitialState(
            base_position=tuple(PARAMS['initial_base_position']),
            base_orientation=tuple(QUAT),
            base_linear_velocity=tuple(PARAMS['initial_base_linear_velocity']),
            base_angular_velocity=tuple(PARAMS['initial_base_angular_velocity']),
        ),
    )
    t_ns, checked = 0, 0
    while t_ns <= final:
        if t_ns in by_stamp:
            m = by_stamp[t_ns]
            assert (m.header.frame_id, m.child_frame_id) == ('lvlh', 'hub')
            o = plant.odometry()
            p, q = m.pose.pose.position, m.pose.pose.orientation
            tw = m.twist.twist
            assert [p.x, p.y, p.z] == o.position.tolist(), t_ns
            assert [q.x, q.y, q.z, q.w] == o.orientation.tolist(), t_ns
            assert [tw.linear.x, tw.linear.y, tw.linear.z] == o.linear.tolist(), t_ns
            assert [tw.angular.x, tw.angular.y, tw.angular.z] == o.angular.tolist(), t_ns
            checked += 1
        plant.step(10)
        t_ns += 10_000_000_000
    assert checked >= 50
    # the hub's CoM is its origin, and the boom is light (0.01 kg of 50): the hub's path is CW's
    # (the boom and the integration aside); in N instead of LVLH it would be metres off
    t = np.array(sorted(by_stamp)) * 1e-9
    r = np.array([[by_stamp[k].pose.pose.position.x, by_stamp[k].pose.pose.position.y,
                   by_stamp[k].pose.pose.position.z] for k in sorted(by_stamp)])  # fmt: skip
    x0 = 10.0
    cw = np.stack([x0 * np.cos(N * t), -2 * x0 * np.sin(N * t), 0 * t], axis=1)
    assert np.max(np.abs(r - cw)) < 1e-4 * x0
    # /tf: lvlh -> hub at the odometry's stamps, with its pose
    transforms = ros.wait_for(
        lambda: (lambda d: d if final in d else None)(
            {stamp_ns(m.transforms[0].header.stamp): m.transforms[0] for m in tf.messages}
        ),
        20.0,
        'the last /tf',
        process=proc,
    )
    for k, m in by_stamp.items():
        if k in transforms:
            tr = transforms[k]
            assert (tr.header.frame_id, tr.child_frame_id) == ('lvlh', 'hub')
            p, q = m.pose.pose.position, m.pose.pose.orientation
            a, b = tr.transform.translation, tr.transform.rotation
            assert [a.x, a.y, a.z, b.x, b.y, b.z, b.w] == [p.x, p.y, p.z, q.x, q.y, q.z, q.w]


def test_without_tf2_msgs_the_node_says_so_and_runs(ros):
    paths = os.environ.get('PYTHONPATH', '').split(os.pathsep)
    kept = os.pathsep.join(p for p in paths if 'tf2_msgs' not in p)
    p = start_node(
        PKG,
        EXE,
        namespace='/orb_notf',
        parameters={**PARAMS, 'publish_clock': False},
        env={'PYTHONPATH': kept},
    )
    try:
        p.wait_for_output(READY, 60.0)
        p.wait_for_output(r'tf2_msgs is not installed here: no /tf; the odometry', 20.0)
        odom = ros.subscribe(Odometry, '/orb_notf/odom', RELIABLE_QOS)
        msg = ros.wait_for_message(odom, timeout=20.0, process=p)
        assert msg.header.frame_id == 'lvlh'
        assert p.is_running()
    finally:
        p.cleanup()


@pytest.mark.parametrize(
    'params, message',
    [
        ({'base': 'fixed'}, r'orbit: needs a floating base'),
        ({'gravity': [0.0, 0.0, -9.81]}, r'orbit: gravity must be zero'),
        ({'orbit_mean_motion': 0.001}, r'orbit_altitude .* and orbit_mean_motion .* are both set'),
        ({'orbit_model': 'kepler'}, r'orbit_model'),
    ],
)
def test_a_bad_orbit_stops_the_node_naming_the_problem(params, message):
    p = start_node(
        PKG, EXE, namespace='/orb_bad', parameters={**PARAMS, 'publish_clock': False, **params}
    )
    try:
        p.wait_exit()
        assert p.returncode == 2, p.describe()
        assert re.search(message, p.output()), p.describe()
    finally:
        p.cleanup()
