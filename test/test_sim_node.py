"""The INSTALLED spart_sim node as separate processes, driven over DDS with real rclpy
publishers, subscribers and service clients.

Two node processes for the module, each in its own namespace with its /clock remapped into
it (both would otherwise publish the one /clock):
  /ls  SC_3DoF free-floating in zero gravity, LOCKSTEP, an initial joint configuration, and
       the controller's joints in an order of their own ([Joint_3, Joint_1, Joint_2]);
  /rt  KUKA iiwa, fixed base, gravity, REAL TIME, controller 'arm_controller'.
Expected values come from an in-process MujocoPlant fed the same commands (lockstep is exact,
so the node's states must equal it bit for bit) and from physics (IMU at rest reads +g).
"""
import math
from pathlib import Path
import time

import numpy as np
import pytest
import yaml

from nav_msgs.msg import Odometry
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import Imu, JointState
from std_msgs.msg import Float64MultiArray, String
from std_srvs.srv import SetBool, Trigger

from spart_ros.sim import EffortCommand, InitialState, MujocoPlant
from node_helpers import LATCHED_QOS, RELIABLE_QOS, BEST_EFFORT_QOS, RosTestNode, installed_executable, scaled, start_node
from core_helpers import urdf_path

pytestmark = pytest.mark.timeout(240)

PKG, EXE = 'spart_ros', 'sim_node'
READY = r'spart_sim\]: robot '
ROOT = Path(__file__).resolve().parent.parent
SC, KUKA = urdf_path('SC_3DoF'), urdf_path('kuka_iiwa')
LS_JOINTS = ['Joint_3', 'Joint_1', 'Joint_2']          # controller order != URDF order
LS_INITIAL = dict(initial_joint_names=['Joint_2', 'Joint_3'], initial_joint_positions=[0.4, -0.7])
LS_PARAMS = dict(urdf_path=SC, base='floating', gravity=[0.0, 0.0, 0.0], lockstep=True, lockstep_steps=2,
                 lockstep_republish_period=2.0, joints=LS_JOINTS, **LS_INITIAL)
RT_PARAMS = dict(urdf_path=KUKA, controller_name='arm_controller', initial_base_position=[0.0, 0.0, 0.5],
                 publish_rate=100.0)


def stamp_ns(stamp):
    return stamp.sec * 1_000_000_000 + stamp.nanosec


@pytest.fixture(scope='module')
def ros():
    node = RosTestNode('test_sim_node')
    yield node
    node.close()


@pytest.fixture(scope='module')
def procs():
    specs = {'ls': LS_PARAMS, 'rt': RT_PARAMS}
    started = {ns: start_node(PKG, EXE, namespace='/' + ns, parameters=p, remappings={'/clock': f'/{ns}/clock'})
               for ns, p in specs.items()}
    try:
        for proc in started.values():
            proc.wait_for_output(READY, 60.0)
        yield started
    finally:
        for proc in started.values():
            proc.cleanup()


class Io:
    """Subscriptions, command publisher and service calls of one sim namespace."""

    def __init__(self, ros, ns, proc, controller):
        self.ros, self.ns, self.proc = ros, ns, proc
        self.js = ros.subscribe(JointState, f'/{ns}/joint_states', RELIABLE_QOS)
        self.odom = ros.subscribe(Odometry, f'/{ns}/odom', BEST_EFFORT_QOS)     # sensor-style subscriber
        self.imu = ros.subscribe(Imu, f'/{ns}/imu', RELIABLE_QOS)
        self.clock = ros.subscribe(Clock, f'/{ns}/clock', BEST_EFFORT_QOS)     # as rclpy's TimeSource
        self.reliable_clock = ros.subscribe(Clock, f'/{ns}/clock', RELIABLE_QOS)  # every message
        self.cmd = ros.publisher(Float64MultiArray, f'/{ns}/{controller}/commands', RELIABLE_QOS)

    def wait(self, predicate, what, timeout=20.0):
        return self.ros.wait_for(predicate, timeout, what, process=self.proc)

    def latest_js(self):
        return max(self.js.messages, key=lambda m: stamp_ns(m.header.stamp)) if self.js.messages else None

    def at(self, collector, t_ns):
        """The message of ``collector`` stamped t_ns (None if none yet)."""
        for m in reversed(collector.messages):
            if stamp_ns(m.header.stamp) == t_ns:
                return m
        return None

    def call(self, srv, name, request):
        return self.ros.call(srv, f'/{self.ns}/spart_sim/{name}', request, 20.0, process=self.proc)


@pytest.fixture(scope='module')
def ls(ros, procs):
    io = Io(ros, 'ls', procs['ls'], 'effort_controller')
    io.wait(lambda: io.cmd.get_subscription_count() >= 1, 'the lockstep sim subscribing to commands')
    return io


@pytest.fixture(scope='module')
def rt(ros, procs):
    return Io(ros, 'rt', procs['rt'], 'arm_controller')


def command(values):
    return Float64MultiArray(data=[float(v) for v in values])


def lockstep_advance(io, values):
    """Send one command and return the state it produced: the first joint_states stamped
    later than every state seen before."""
    last = stamp_ns(io.latest_js().header.stamp)
    io.cmd.publish(command(values))
    return io.wait(lambda: next((m for m in io.js.messages if stamp_ns(m.header.stamp) > last), None),
                   f'the state after command {list(values)}')


# ---------------------------------------------------------------------------------------
# lockstep node
# ---------------------------------------------------------------------------------------

def test_robot_description_is_latched(ros, procs):
    late = ros.subscribe(String, '/ls/robot_description', LATCHED_QOS)   # subscribes after the publication
    msg = ros.wait_for_message(late, timeout=20.0, process=procs['ls'])
    assert msg.data == Path(SC).read_text(encoding='utf-8')


def test_lockstep_initial_state_frames_and_order(ls):
    js = ls.wait(lambda: ls.js.messages and ls.js.messages[0], 'the initial joint state')
    first = ls.js.messages[0]
    assert list(first.name) == ['Joint_1', 'Joint_2', 'Joint_3']                       # alphabetical
    assert stamp_ns(first.header.stamp) == 0
    assert list(first.position) == [0.0, 0.4, -0.7]                                    # initial_joint_*
    assert list(first.velocity) == [0.0] * 3 and list(first.effort) == [0.0] * 3
    odom = ls.wait(lambda: ls.at(ls.odom, 0), 'the initial odometry')
    assert (odom.header.frame_id, odom.child_frame_id) == ('odom', 'Spacecraft')
    assert odom.pose.pose.orientation.w == 1.0
    imu = ls.wait(lambda: ls.at(ls.imu, 0), 'the initial IMU sample')
    assert imu.header.frame_id == 'Spacecraft'
    assert [imu.linear_acceleration.x, imu.linear_acceleration.y, imu.linear_acceleration.z] == [0.0] * 3
    ls.wait(lambda: any(stamp_ns(c.clock) == 0 for c in ls.clock.messages), 'the initial /clock')
    del js


def test_lockstep_advances_exactly_per_command_and_matches_the_plant(ls):
    """Each command advances lockstep_steps = 2 physics steps (2 ms): stamps t0 + 2 ms k, one
    new state per command, /clock with it; the states equal an in-process MujocoPlant fed
    the same commands, bit for bit (the controller order [Joint_3, Joint_1, Joint_2] mapped
    by name)."""
    ls.wait(lambda: ls.js.messages, 'the initial joint state')
    ref = MujocoPlant.from_urdf(SC, base='floating', gravity=[0, 0, 0],
                                initial=InitialState.from_lists(LS_INITIAL['initial_joint_names'],
                                                                LS_INITIAL['initial_joint_positions']))
    mapping = EffortCommand(LS_JOINTS, ref.joint_names)
    t0 = stamp_ns(ls.latest_js().header.stamp)
    assert t0 == 0, 'this test expects the untouched initial state (runs before reset/pause tests)'
    stamps = []
    for k in range(1, 11):
        values = [0.3 * math.sin(k), -0.2, 0.1 * k]           # Joint_3, Joint_1, Joint_2
        msg = lockstep_advance(ls, values)
        stamps.append(stamp_ns(msg.header.stamp))
        ref.set_efforts(mapping.accept(values))
        ref.step(2)
        exp = ref.joint_state()
        assert list(msg.position) == exp.positions.tolist(), k
        assert list(msg.velocity) == exp.velocities.tolist(), k
        assert list(msg.effort) == [-0.2, 0.1 * k, 0.3 * math.sin(k)]                  # by name
        odom = ls.wait(lambda: ls.at(ls.odom, stamps[-1]), 'the odometry of the new state')
        o = ref.odometry()
        assert [odom.twist.twist.angular.x, odom.twist.twist.angular.y, odom.twist.twist.angular.z] == \
            o.angular.tolist()
    assert stamps == [t0 + 2_000_000 * k for k in range(1, 11)]
    new = sorted({stamp_ns(m.header.stamp) for m in ls.js.messages if stamp_ns(m.header.stamp) > t0})
    assert new == stamps                                       # no state without a command
    ls.wait(lambda: any(stamp_ns(c.clock) == stamps[-1] for c in ls.clock.messages), '/clock at the last state')


def test_lockstep_bad_commands_are_dropped_and_the_previous_kept(ls):
    ls.wait(lambda: ls.js.messages, 'the initial joint state')
    good = lockstep_advance(ls, [1.0, 2.0, 3.0])
    assert list(good.effort) == [2.0, 3.0, 1.0]
    short = lockstep_advance(ls, [5.0, 6.0])          # wrong length: the sim still ticks, previous effort held
    assert list(short.effort) == [2.0, 3.0, 1.0]
    assert stamp_ns(short.header.stamp) == stamp_ns(good.header.stamp) + 2_000_000
    nan = lockstep_advance(ls, [float('nan'), 0.0, 0.0])
    assert list(nan.effort) == [2.0, 3.0, 1.0]
    out = ls.proc.wait_for_output(r"expected 3 values for joints \['Joint_3', 'Joint_1', 'Joint_2'\], got 2: "
                                  r'dropped', 10.0)
    assert out
    ls.proc.wait_for_output(r"non-finite value for joints \['Joint_3'\].*: dropped", 10.0)
    after = lockstep_advance(ls, [0.0, 0.0, -1.0])
    assert list(after.effort) == [0.0, -1.0, 0.0]
    assert ls.proc.is_running()


def test_lockstep_pause_and_reset(ls):
    ls.wait(lambda: ls.js.messages, 'the initial joint state')
    moved = lockstep_advance(ls, [0.5, 0.5, 0.5])
    res = ls.call(SetBool, 'pause', SetBool.Request(data=True))
    assert res.success and res.message.startswith('paused')
    last = stamp_ns(moved.header.stamp)
    ls.cmd.publish(command([1.0, 1.0, 1.0]))                 # held, but no step while paused
    ls.ros.spin_for(0.5)
    assert max(stamp_ns(m.header.stamp) for m in ls.js.messages) == last
    res = ls.call(SetBool, 'pause', SetBool.Request(data=False))
    assert res.success and res.message.startswith('running')
    again = ls.wait(lambda: ls.js.messages[-1] if stamp_ns(ls.js.messages[-1].header.stamp) == last
                    and list(ls.js.messages[-1].effort) == [1.0, 1.0, 1.0] else None,
                    'the state republished on resume, with the command received while paused')
    assert list(again.position) == list(moved.position)
    stepped = lockstep_advance(ls, [1.0, 1.0, 1.0])
    assert stamp_ns(stepped.header.stamp) == last + 2_000_000
    # reset: the initial state and zero efforts; time goes on
    res = ls.call(Trigger, 'reset', Trigger.Request())
    assert res.success, res.message
    back = ls.wait(lambda: next((m for m in reversed(ls.js.messages) if list(m.position) == [0.0, 0.4, -0.7]
                                 and stamp_ns(m.header.stamp) == stamp_ns(stepped.header.stamp)), None),
                   'the initial state after reset')
    assert list(back.velocity) == [0.0] * 3 and list(back.effort) == [0.0] * 3
    resumed = lockstep_advance(ls, [0.0, 0.0, 0.0])
    assert stamp_ns(resumed.header.stamp) == stamp_ns(stepped.header.stamp) + 2_000_000


# ---------------------------------------------------------------------------------------
# real-time node
# ---------------------------------------------------------------------------------------

def test_real_time_clock_follows_the_wall_clock(rt):
    """Simulated time advances, never faster than real time (x1), and the states carry the
    clock's stamps; under load the node may give up time, so only a loose lower bound."""
    first = rt.wait(lambda: rt.clock.messages and rt.clock.messages[-1], 'a /clock message')
    wall0, sim0 = time.monotonic(), stamp_ns(first.clock)
    rt.ros.spin_for(1.5)
    wall1, sim1 = time.monotonic(), stamp_ns(rt.clock.messages[-1].clock)
    elapsed_sim, elapsed_wall = (sim1 - sim0) * 1e-9, wall1 - wall0
    assert 0.1 < elapsed_sim <= elapsed_wall + 0.05, (elapsed_sim, elapsed_wall)
    clock_stamps = [stamp_ns(c.clock) for c in rt.clock.messages]
    assert clock_stamps == sorted(clock_stamps)
    js = rt.latest_js()
    t_js = stamp_ns(js.header.stamp)
    rt.wait(lambda: stamp_ns(rt.reliable_clock.messages[-1].clock) >= t_js, 'the clock past the joint state')
    assert t_js in {stamp_ns(c.clock) for c in rt.reliable_clock.messages}     # /clock is published with it
    assert list(js.name) == sorted(js.name) and len(js.name) == 7
    assert all(s % 1_000_000 == 0 for s in clock_stamps)            # whole steps of dt = 1 ms


def test_real_time_fixed_base_readouts_and_commands(rt):
    rt.wait(lambda: rt.imu.messages and rt.odom.messages, 'IMU and odometry')
    imu, odom = rt.imu.messages[-1], rt.odom.messages[-1]
    # fixed base at rest: the IMU reads +g upward, the odometry is the mount pose with zero twist
    assert (imu.linear_acceleration.x, imu.linear_acceleration.y) == (0.0, 0.0)
    assert imu.linear_acceleration.z == pytest.approx(9.81, abs=1e-12)
    assert odom.pose.pose.position.z == 0.5 and odom.child_frame_id == 'lbr_iiwa_link_0'
    assert odom.twist.twist.linear.x == 0.0 and odom.twist.twist.angular.z == 0.0
    # gravity acts: the arm moves with zero effort
    rt.wait(lambda: any(abs(v) > 1e-3 for v in rt.latest_js().velocity), 'the arm moving under gravity')
    # a command is applied and echoed in effort (alphabetical = joint_1..joint_7 here)
    values = [0.5, -1.0, 1.5, -2.0, 2.5, -3.0, 3.5]
    rt.ros.publish_until(rt.cmd, lambda: command(values), lambda: list(rt.latest_js().effort) == values,
                         timeout=20.0, what='the command echoed in joint_states.effort', process=rt.proc)
    # a NaN command is dropped: the echo stays
    rt.cmd.publish(command([float('nan')] * 7))
    rt.proc.wait_for_output(r'non-finite value for joints .*: dropped', 10.0)
    t = stamp_ns(rt.latest_js().header.stamp)
    rt.wait(lambda: stamp_ns(rt.latest_js().header.stamp) > t + 50_000_000, 'later states')
    assert list(rt.latest_js().effort) == values


def test_real_time_pause_reset_resume(rt):
    """Pause stops the physics and the clock; reset (while paused) publishes the initial state
    at the frozen time; resume runs the clock on from there."""
    rt.wait(lambda: rt.clock.messages, 'a /clock message')
    assert rt.call(SetBool, 'pause', SetBool.Request(data=True)).success
    rt.ros.spin_for(0.2)                      # messages in flight at the pause arrive
    frozen = stamp_ns(rt.clock.messages[-1].clock)
    n_js = len(rt.js.messages)
    rt.ros.spin_for(0.5)
    assert stamp_ns(rt.clock.messages[-1].clock) == frozen and len(rt.js.messages) == n_js
    res = rt.call(Trigger, 'reset', Trigger.Request())
    assert res.success, res.message
    back = rt.wait(lambda: len(rt.js.messages) > n_js and rt.js.messages[-1], 'the state published by reset')
    assert stamp_ns(back.header.stamp) == frozen
    assert list(back.position) == [0.0] * 7 and list(back.velocity) == [0.0] * 7 and list(back.effort) == [0.0] * 7
    assert rt.call(SetBool, 'pause', SetBool.Request(data=False)).success
    rt.wait(lambda: stamp_ns(rt.clock.messages[-1].clock) > frozen + 100_000_000, 'the clock running again')


# ---------------------------------------------------------------------------------------
# configuration, installation
# ---------------------------------------------------------------------------------------

@pytest.mark.parametrize('params, message', [
    ({}, 'no robot: set the robot_description'),
    ({'urdf_path': SC, 'joints': ['Joint_1', 'Joint_9']}, r"controller joints \['Joint_9'\] are not moving joints"),
    ({'urdf_path': SC, 'initial_joint_names': ['Joint_1'], 'initial_joint_positions': [0.1, 0.2]},
     'initial_joint_positions: expected 1 values'),
    ({'urdf_path': SC, 'base': 'wobbly'}, "base must be 'fixed' or 'floating', got 'wobbly'"),
])
def test_invalid_configuration_exits_with_a_clear_error(params, message):
    import re
    proc = start_node(PKG, EXE, namespace='/cfg', parameters=params or {'publish_clock': False})
    try:
        deadline = time.monotonic() + scaled(30)
        while proc.is_running() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert proc.returncode == 2, proc.describe()
        assert re.search(message, proc.output()), proc.describe()
    finally:
        proc.cleanup()


def test_installed_files_and_yaml_in_sync():
    from ament_index_python.packages import get_package_share_directory
    from spart_ros.nodes.sim_node import PARAMETERS
    installed_executable(PKG, EXE)
    share = Path(get_package_share_directory(PKG))
    assert (share / 'config' / 'sim_node.yaml').is_file()
    doc = yaml.safe_load((ROOT / 'config' / 'sim_node.yaml').read_text())
    params = doc['/**']['ros__parameters']
    unset = {'joints', 'initial_joint_names', 'initial_joint_positions', 'initial_joint_velocities'}
    assert set(params) == set(PARAMETERS) - unset
    for name, value in params.items():
        assert value == PARAMETERS[name][0], name


def test_nodes_shut_down_cleanly(procs):
    """Last test of the module: SIGINT -> exit code 0 (EventsExecutor loop in run_node)."""
    for ns, proc in procs.items():
        assert proc.is_running(), proc.describe()
        assert proc.stop() == 0, proc.describe()
