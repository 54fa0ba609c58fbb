"""
A robot's life around the steady state.

On the embedded plant in gravity with robots the other closed-loop tests never use (a UR5 and a
Franka Panda of the example-robot-data wheel, copied to test/data/urdf): spart_sim and
spart_controller as SEPARATE processes (the INSTALLED nodes), so that one can be stopped or started
without the other.

- UR5, real time (the brakes of hold_until_command, then the controller's hold): the arm drifts
  less than 0.01 rad before the first trajectory; ~/reset in the middle of a trajectory: no effort
  reaches its limit and no joint moves more than 0.05 rad from the reset pose; a weak motor (a
  low effort limit set at run time) makes the tracking error grow: a fault, the controller holds
  and refuses trajectories until ~/enable true; SIGINT to the controller: the sim applies zero
  efforts afterwards (its last command was the controller's zero), the controller exits cleanly;
- lockstep with the controller started last, and started first: both loops run;
- Panda (a mimic finger joint), lockstep, no joints parameter on either node: the sim and the
  controller agree on the commanded joints, and the arm tracks a trajectory.
What the nodes report is not trusted: the checks use the sim's joint_states (positions, and the
efforts it applies, echoed).
"""

import json
import re
import time

from builtin_interfaces.msg import Duration, Time
from core_helpers import urdf_path
from node_helpers import RELIABLE_QOS, RosTestNode, scaled, start_node, trajectory_start
import numpy as np
import pytest
from sensor_msgs.msg import JointState
from spart_interfaces.msg import ControllerStatus
from std_srvs.srv import SetBool, Trigger
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.filterwarnings('ignore::spart_ros.core.errors.SpartWarning'),
    pytest.mark.realtime,
]  # closed loops on a real-time sim (and lockstep ones flat out)

UR5 = urdf_path('ur5_robot')
PANDA = urdf_path('panda')
UR5_JOINTS = [
    'shoulder_pan_joint',
    'shoulder_lift_joint',
    'elbow_joint',
    'wrist_1_joint',
    'wrist_2_joint',
    'wrist_3_joint',
]
UR5_EFFORT = np.array([150.0, 150.0, 150.0, 28.0, 28.0, 28.0])
UR5_START = [0.0, -1.2, 1.5, -0.3, 1.2, 0.0]  # an arm pose with every joint loaded by gravity
GRAVITY = [0.0, 0.0, -9.81]
PANDA_HOME = [0.0, -0.5, 0.0, -2.0, 0.0, 1.6, 0.8]
READY = r'spart_controller\]: mode '


def stamp_s(stamp):
    return stamp.sec + 1e-9 * stamp.nanosec


#: the sim's state publishers' and this process's joint_states queue (reliable KEEP_LAST)
STATE_QUEUE_DEPTH = 1000


def _every_state():
    from rclpy.qos import QoSProfile, ReliabilityPolicy

    return QoSProfile(depth=STATE_QUEUE_DEPTH, reliability=ReliabilityPolicy.RELIABLE)


class Loop:
    """spart_sim and spart_controller in namespace ``ns``, and what the test sees of them."""

    def __init__(self, ros, ns, sim_params, controller_params, start=True):
        self.ros, self.ns = ros, ns
        # every state reaches this process however starved it is (the reset test reads the one
        # state the reset published: missed once in 20 runs beside a busy loop with depth 10)
        self.js = ros.subscribe(JointState, f'/{ns}/joint_states', _every_state())
        self.status = ros.subscribe(
            ControllerStatus, f'/{ns}/spart_controller/status', RELIABLE_QOS
        )
        self.sim_params, self.controller_params = sim_params, controller_params
        self.sim = self.controller = None
        if start:
            self.start_sim()
            self.start_controller()

    def start_sim(self):
        self.sim = start_node(
            'spart_ros',
            'sim_node',
            namespace=f'/{self.ns}',
            parameters=dict({'state_queue_depth': STATE_QUEUE_DEPTH}, **self.sim_params),
            remappings={'/clock': f'/{self.ns}/clock'},
        )

    def start_controller(self):
        self.controller = start_node(
            'spart_ros',
            'controller_node',
            namespace=f'/{self.ns}',
            parameters=dict(status_rate=20.0, **self.controller_params),
        )

    @property
    def procs(self):
        return [p for p in (self.sim, self.controller) if p is not None]

    def wait(self, predicate, timeout, what):
        return self.ros.wait_for(predicate, scaled(timeout), what, process=self.procs)

    def sim_time(self):
        return stamp_s(self.js.messages[-1].header.stamp) if self.js.messages else 0.0

    def wait_commanding(self, timeout=90.0):
        self.wait(
            lambda: self.status.messages and self.status.messages[-1].commanding,
            timeout,
            f'/{self.ns} controller commanding',
        )

    def states(self, since=0.0, joints=UR5_JOINTS):
        """
        Return (t (N,), q (N, n), effort (N, n)) of the sim's joint states.

        Those stamped at or after ``since``; the columns in ``joints`` order.
        """
        rows = [m for m in self.js.messages if stamp_s(m.header.stamp) >= since]
        if not rows:
            return np.zeros(0), np.zeros((0, len(joints))), np.zeros((0, len(joints)))
        cols = [list(rows[0].name).index(j) for j in joints]
        return (
            np.array([stamp_s(m.header.stamp) for m in rows]),
            np.array([[m.position[c] for c in cols] for m in rows]),
            np.array([[m.effort[c] for c in cols] for m in rows]),
        )

    def send(self, joints, waypoints, start):
        """
        Publish a JointTrajectory stamped ``start`` (sim time) through ``waypoints``.

        ``waypoints``: [(t, positions)].
        """
        pub = self.ros.publisher(
            JointTrajectory, f'/{self.ns}/spart_controller/joint_trajectory', RELIABLE_QOS
        )
        self.ros.wait_for_matched(pub, timeout=scaled(10.0), process=self.procs)
        msg = JointTrajectory(joint_names=list(joints))
        msg.header.stamp = Time(sec=int(start), nanosec=int(round(start % 1 * 1e9)))
        for t, q in waypoints:
            msg.points.append(
                JointTrajectoryPoint(
                    positions=[float(x) for x in q],
                    time_from_start=Duration(sec=int(t), nanosec=int(round(t % 1 * 1e9))),
                )
            )
        n = self.status.messages[-1].trajectories
        pub.publish(msg)
        self.wait(
            lambda: self.status.messages[-1].trajectories > n, 10.0, 'the trajectory accepted'
        )

    def call(self, node, srv, name, request):
        return self.ros.call(
            srv, f'/{self.ns}/{node}/{name}', request, scaled(20.0), process=self.procs
        )

    def set_parameter(self, name, value):
        return self.ros.set_parameter(
            f'/{self.ns}/spart_controller', name, value, scaled(20.0), process=self.procs
        )

    def close(self):
        for p in self.procs:
            p.cleanup()


@pytest.fixture(scope='module')
def ros():
    node = RosTestNode('test_closed_loop_safety')
    yield node
    node.close()


@pytest.fixture(scope='module')
def ur5(ros):
    """
    UR5 in real time.

    The sim and the controller read the gravity from one place (the same value given to both, as
    the demo YAML does).
    """
    loop = Loop(
        ros,
        'ur5',
        {
            'urdf_path': UR5,
            'gravity': GRAVITY,
            'initial_joint_names': UR5_JOINTS,
            'initial_joint_positions': UR5_START,
        },
        # this shared VM can stall a process for a few hundred ms under load: with the usual
        # 0.1 s the watchdog would then stop the commands (one zero) and let the arm fall,
        # which is the watchdog doing its job (test_controller_node), not what is tested here
        {'gravity': GRAVITY, 'state_timeout': 0.5},
    )
    try:
        loop.wait_commanding()
        yield loop
    finally:
        loop.close()


def test_no_drift_at_start_up_then_a_reset_mid_trajectory_is_held(ur5):
    start = np.array(UR5_START)
    # the sim applies the controller's commands (its brakes released: DDS may take a while to
    # match)
    released = ur5.wait(
        lambda: next((m for m in ur5.js.messages if any(m.effort)), None),
        30.0,
        'the sim applying the commands',
    )
    # (counts, not time: a starved test process receives fewer of the sim's states)
    ur5.wait(
        lambda: (
            ur5.sim_time() > stamp_s(released.header.stamp) + 1.5 and len(ur5.js.messages) > 500
        ),
        60.0,
        '1.5 s of states, 500 of them received',
    )
    t, q, effort = ur5.states()
    drift = np.abs(q - start).max()
    print(
        f'\nUR5 start-up: {len(t)} states from t = {t[0]:.3f} s over {t[-1] - t[0]:.2f} s, '
        f'largest drift {drift:.2e} rad, efforts up to {np.abs(effort).max(axis=0).round(1)} N m'
    )
    assert len(t) > 500 and drift < 0.01, (
        drift
    )  # (this process may miss some states on a busy machine)
    assert np.abs(effort[-1]).max() > 1.0  # the controller holds it (gravity), not the brakes
    assert 'plant simulates gravity' not in ur5.controller.output()  # the same gravity: no warning
    # a trajectory; the sim is reset half-way through it
    t0 = round(ur5.sim_time() + 0.5, 3)
    target = start + np.array([0.6, 0.5, -0.6, 0.5, -0.5, 0.6])
    ur5.send(UR5_JOINTS, [(1.0, start + 0.5 * (target - start)), (2.0, target)], t0)
    # (had it come after its stamp, the controller would have started it on arrival)
    t0 = ur5.wait(lambda: trajectory_start(ur5.controller.output()), 10.0, 'its start logged')
    ur5.wait(lambda: ur5.sim_time() > t0 + 1.0, 30.0, 'half of the trajectory')
    t_reset = ur5.sim_time()
    assert (
        np.abs(ur5.states(t_reset - 0.01)[1][-1] - start).max() > 0.3
    )  # well away from the start
    res = ur5.call('spart_sim', Trigger, 'reset', Trigger.Request())
    assert res.success, res.message
    t_reset = float(re.search(r'at t = ([0-9.]+) s', res.message).group(1))
    ur5.wait(lambda: ur5.sim_time() > t_reset + 2.0, 30.0, '2 s after the reset')
    t, q, effort = ur5.states(t_reset - 1e-6)  # (from the state the reset published: its stamp)
    assert np.abs(q[0] - start).max() == 0.0, q[0]
    moved = np.abs(q - start).max(axis=0)
    peak = np.abs(effort).max(axis=0)
    print(
        f'after ~/reset: largest move from the reset pose per joint {np.round(moved, 5)} rad; '
        f'peak efforts {np.round(peak, 1)} N m (limits {UR5_EFFORT})'
    )
    assert len(t) > 500
    assert np.all(moved < 0.05), moved
    assert np.all(peak < 0.99 * UR5_EFFORT), peak
    assert (
        'the plant announced a reset' in ur5.controller.output()
        or 'jumped by' in ur5.controller.output()
    )
    status = ur5.status.messages[-1]
    assert status.commanding and status.state.startswith('holding'), status.state
    assert 'fault:' not in ur5.controller.output(), ur5.controller.output()[-3000:]  # never


def test_a_tracking_fault_holds_and_refuses_until_cleared(ur5):
    """
    A motor too weak for the arm (effort_limits set at run time).

    The tracking error grows past max_tracking_error: fault (said why), the measured pose held,
    trajectories refused; ~/enable true clears it.
    """
    res = ur5.set_parameter('effort_limits', [150.0, 8.0, 150.0, 28.0, 28.0, 28.0])
    assert res.successful, res.reason
    ur5.wait(lambda: ur5.status.messages[-1].state.startswith('fault'), 30.0, 'the fault')
    status = ur5.status.messages[-1]
    assert re.search(r'tracking error of \w+ [0-9.]+ > max_tracking_error 0.2', status.state), (
        status.state
    )
    assert status.commanding  # holding the pose measured at the fault, as it can
    n = status.rejected_messages
    pub = ur5.ros.publisher(
        JointTrajectory, '/ur5/spart_controller/joint_trajectory', RELIABLE_QOS
    )
    ur5.ros.wait_for_matched(pub, timeout=scaled(10.0), process=ur5.procs)
    msg = JointTrajectory(
        joint_names=UR5_JOINTS,
        points=[JointTrajectoryPoint(positions=UR5_START, time_from_start=Duration(sec=1))],
    )
    ur5.ros.publish_until(
        pub,
        lambda: msg,
        lambda: ur5.status.messages[-1].rejected_messages > n,
        what='the trajectory refused',
        process=ur5.procs,
    )
    assert 'in fault' in ur5.controller.output()
    res = ur5.set_parameter(
        'effort_limits', UR5_EFFORT.tolist()
    )  # a strong motor again: back to the held pose
    assert res.successful, res.reason
    ur5.wait(
        lambda: (
            np.abs(ur5.js.messages[-1].velocity).max() < 0.01
            and ur5.status.messages[-1].commanding
            and ur5.status.messages[-1].max_position_error < 0.01
        ),
        30.0,
        'the arm back at the pose of the fault',
    )
    res = ur5.call('spart_controller', SetBool, 'enable', SetBool.Request(data=True))
    assert res.success, res.message
    ur5.wait(lambda: ur5.status.messages[-1].state.startswith('holding'), 10.0, 'holding again')


def test_sigint_leaves_zero_efforts_applied(ur5):
    ur5.wait_commanding()
    # gravity: real efforts applied now (the sim's echo of the controller's commands)
    ur5.wait(
        lambda: ur5.js.messages and np.abs(ur5.js.messages[-1].effort).max() > 1.0,
        30.0,
        'the sim applying the commands',
    )
    assert ur5.controller.stop() == 0, ur5.controller.describe()
    out = ur5.controller.output()
    assert 'Traceback' not in out and 'Failed to publish' not in out, out
    # the sim's time once the controller has exited, from the sim itself (the states this process
    # received can be a second behind on a busy machine: stamps read from them put the SIGINT
    # too early, and states from before the zero counted as after it)
    timing = ur5.ros.call(
        Trigger, f'/{ur5.ns}/spart_sim/timing', Trigger.Request(), scaled(20.0), process=ur5.sim
    )
    t_stop = 1e-9 * json.loads(timing.message)['time_ns']
    # 50 states from 0.3 s after that on (this process may miss states on a busy machine: it
    # waits for that many received, not for a stretch of sim time)
    ur5.ros.wait_for(
        lambda: (
            len(ur5.js.messages) > 50
            and stamp_s(ur5.js.messages[-51].header.stamp) >= t_stop + 0.3
        ),
        scaled(30.0),
        '50 states received from 0.3 s after SIGINT on',
        process=ur5.sim,
    )
    t, q, effort = ur5.states(t_stop + 0.3)
    # the sim applies the controller's zero (else: what the controller said as it stopped)
    assert len(t) > 50 and not effort.any(), (effort[-1], out[-1500:])


@pytest.fixture(scope='module')
def lockstep(ros, ur5):
    """
    Three lockstep loops at once (after the real-time one: a lockstep loop runs flat out).

    UR5 with the controller started 3 s after the sim (its robot_description and first state long
    stale by then: the issue's deadlock) and 3 s before it; the Panda with default joints.
    """
    # the real-time UR5's tests are over: its sim would run beside the lockstep loops to the end
    ur5.close()
    arm = [f'panda_joint{k}' for k in range(1, 8)]
    ur5_sim = {
        'urdf_path': UR5,
        'gravity': GRAVITY,
        'lockstep': True,
        'initial_joint_names': UR5_JOINTS,
        'initial_joint_positions': UR5_START,
    }
    loops = {}
    try:
        loops['last'] = Loop(ros, 'ls_last', ur5_sim, {'gravity': GRAVITY}, start=False)
        loops['first'] = Loop(ros, 'ls_first', ur5_sim, {'gravity': GRAVITY}, start=False)
        loops['panda'] = Loop(
            ros,
            'panda',
            {
                'urdf_path': PANDA,
                'gravity': GRAVITY,
                'lockstep': True,
                'initial_joint_names': arm,
                'initial_joint_positions': PANDA_HOME,
            },
            {'gravity': GRAVITY},
            start=False,
        )
        loops['last'].start_sim()
        loops['first'].start_controller()
        loops['panda'].start_sim()
        loops['panda'].start_controller()
        time.sleep(3.0)
        loops['last'].start_controller()
        loops['first'].start_sim()
        yield loops
    finally:
        for loop in loops.values():
            loop.close()


@pytest.mark.parametrize('order', ['last', 'first'])
def test_lockstep_runs_whatever_the_start_order(lockstep, order):
    """Lockstep: the sim advances only on commands; the controller started after or before it."""
    loop = lockstep[order]
    loop.wait(lambda: loop.sim_time() > 0.5, 90.0, '0.5 s of simulated time in lockstep')
    t, q, _ = loop.states()
    assert np.abs(q - np.array(UR5_START)).max() < 0.01
    assert loop.controller.is_running() and loop.sim.is_running()
    loop.close()  # (no other test reads it: flat out, it would take CPU from the ones that run)


def test_a_mimic_robot_with_default_joints_tracks(lockstep):
    """
    Panda: 7 arm joints and two fingers, the second mimicking the first.

    No joints parameter on either node: both take the independent joints (8), so every command is
    applied (the issue: the sim took 9, the controller 8, and every command was dropped).
    """
    arm = [f'panda_joint{k}' for k in range(1, 8)]
    loop = lockstep['panda']
    loop.wait_commanding()
    start = round(loop.sim_time() + 1.5, 3)  # a lockstep loop runs faster than real time here
    target = np.array(PANDA_HOME) + np.array([0.3, 0.2, -0.3, 0.3, 0.3, -0.3, 0.4])
    loop.send(arm, [(1.0, target)], start)
    # (had it come after its stamp, the controller would have started it when it came: the log
    # says when)
    start = loop.wait(
        lambda: trajectory_start(loop.controller.output()), 10.0, 'its start logged'
    )
    loop.wait(lambda: loop.sim_time() > start + 1.5, 120.0, 'the end of the trajectory')
    t, q, _ = loop.states(start + 1.2, arm)
    err = np.abs(q - target).max()
    print(f'\nPanda (lockstep, default joints): |q - target| after the end {err:.2e} rad')
    assert err < 1e-3, err
    assert 'dropped' not in loop.sim.output()
    joints = loop.sim.output()
    assert "for joints ['panda_joint1'" in joints and "'panda_finger_joint1']" in joints
