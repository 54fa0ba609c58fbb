"""
spart_controller as a lifecycle (managed) node.

Driven through the standard services (~/change_state, ~/get_state: what `ros2 lifecycle set` calls)
with the commands seen on the topic at each step; run-time parameters (`ros2 param set`); SIGINT
gives one zero command and a clean exit. Expected efforts: the numpy SPART functions
(test/dynamics_reference.py).
"""

import time

from builtin_interfaces.msg import Time
from core_helpers import urdf_path
import dynamics_reference as ref
from lifecycle_msgs.msg import Transition
from lifecycle_msgs.srv import ChangeState, GetState
from node_helpers import RELIABLE_QOS, RosTestNode, scaled, start_node, trajectory_start
import numpy as np
import pytest
from rcl_interfaces.srv import SetParameters
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from spart_interfaces.msg import ControllerStatus
from spart_ros import spart
from std_msgs.msg import Float64MultiArray

pytestmark = [
    pytest.mark.timeout(300),
    pytest.mark.filterwarnings('ignore::spart_ros.core.errors.SpartWarning'),
    pytest.mark.realtime,
]  # the controller's watchdog (state_timeout) runs on the wall clock

KUKA = urdf_path('kuka_iiwa')
ROBOT = spart.urdf2robot(KUKA)[0]
NAMES = list(ROBOT.q_names)
G = np.array([0.0, 0.0, -9.81])
NS = '/lc'


@pytest.fixture(scope='module')
def ros():
    node = RosTestNode('test_controller_lifecycle')
    yield node
    node.close()


def expected(q, qd, q_hold, kp, kd=20.0):
    z3 = np.zeros(3)
    qdd = kp * (q_hold - q) - kd * qd
    return ref.expected_id(
        ROBOT,
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
        np.zeros((6, ROBOT.n_links_joints)),
        G,
        floating=False,
    )[0]


class Lifecycle:

    def __init__(self, ros, proc):
        self.ros, self.proc = ros, proc
        self.js = ros.publisher(JointState, f'{NS}/joint_states', RELIABLE_QOS)
        self.commands = ros.subscribe(
            Float64MultiArray, f'{NS}/effort_controller/commands', RELIABLE_QOS
        )
        self.status = ros.subscribe(
            ControllerStatus, f'{NS}/spart_controller/status', RELIABLE_QOS
        )
        self.sec = 100.0

    def change(self, label):
        res = self.ros.call(
            ChangeState,
            f'{NS}/spart_controller/change_state',
            ChangeState.Request(transition=Transition(label=label)),
            process=self.proc,
        )
        return res.success

    def state(self):
        return self.ros.call(
            GetState,
            f'{NS}/spart_controller/get_state',
            GetState.Request(),
            process=self.proc,
            idempotent=True,
        ).current_state.label

    def set_parameter(self, name, value):
        return self.ros.set_parameter(f'{NS}/spart_controller', name, value, process=self.proc)

    def publish(self, q, n=1, period=0.01):
        """
        Publish ``n`` joint states at q, each with a new stamp.

        Returns the commands received meanwhile.
        """
        n0 = len(self.commands)
        for _ in range(n):
            self.sec += 0.01
            msg = JointState(
                name=NAMES, position=[float(x) for x in q], velocity=[0.0] * len(NAMES)
            )
            msg.header.stamp = Time(sec=int(self.sec), nanosec=int(round((self.sec % 1) * 1e9)))
            self.js.publish(msg)
            self.ros.spin_for(period)
        self.ros.spin_for(0.2)
        return [np.array(m.data) for m in self.commands.messages[n0:]]

    def step(self, q):
        """
        Return a state until a non-zero command answers it.

        The publisher matches after configure.
        """
        self.ros.wait_for(
            lambda: self.commands.subscription.get_publisher_count() >= 1,
            15.0,
            'commands matched',
            process=self.proc,
        )
        n0 = len(self.commands)
        end = time.monotonic() + scaled(15.0)
        while time.monotonic() < end:
            for m in self.commands.messages[n0:]:
                if any(m.data):
                    return np.array(m.data)
            self.publish(q, period=0.02)
        raise AssertionError(f'no command for the state at {q}\n{self.proc.describe()}')


@pytest.fixture(scope='module')
def lc(ros):
    proc = start_node(
        'spart_ros',
        'controller_node',
        namespace=NS,
        parameters={
            'autostart': False,
            'urdf_path': KUKA,
            'gravity': G.tolist(),
            'kp': 100.0,
            'kd': 20.0,
            'state_timeout': 0.5,
            'status_rate': 20.0,
            'robot_description_topic': '',
            'joint_dynamics': False,
        },
    )  # expected() is the rigid model's law (the URDF damping: test_offline_closed_loop)
    try:
        proc.wait_for_output(r'unconfigured \(autostart false\)', 90.0)
        yield Lifecycle(ros, proc)
    finally:
        proc.cleanup()


def test_lifecycle_transitions_and_the_commands_of_each(lc):
    q0 = np.linspace(-0.4, 0.4, len(NAMES))
    assert lc.state() == 'unconfigured'
    assert lc.publish(q0, n=5) == []  # unconfigured: no commands
    assert lc.change('configure') and lc.state() == 'inactive'
    lc.ros.wait_for(
        lambda: lc.commands.subscription.get_publisher_count() >= 1,
        15.0,
        'commands matched',
        process=lc.proc,
    )
    assert lc.publish(q0, n=5) == []  # inactive: none either
    assert lc.change('activate') and lc.state() == 'active'
    cmd = lc.step(q0)  # holds the measured pose, gravity included
    np.testing.assert_allclose(
        cmd, expected(q0, np.zeros(len(NAMES)), q0, 100.0), rtol=1e-8, atol=1e-8
    )
    q1 = q0 + 0.01
    cmds = lc.publish(q1, n=3)
    np.testing.assert_allclose(
        cmds[-1], expected(q1, np.zeros(len(NAMES)), q0, 100.0), rtol=1e-8, atol=1e-8
    )
    status = lc.status.messages[-1]
    assert status.enabled and status.commanding and status.state.startswith('holding')
    # deactivate: exactly one all-zero command, then nothing for new states
    n0 = len(lc.commands)
    assert lc.change('deactivate') and lc.state() == 'inactive'
    lc.ros.wait_for(
        lambda: len(lc.commands) > n0, 5.0, 'the zero command of deactivate', process=lc.proc
    )
    assert lc.publish(q1, n=5) == [] and [list(m.data) for m in lc.commands.messages[n0:]] == [
        [0.0] * 7
    ]
    lc.ros.wait_for(
        lambda: lc.status.messages[-1].state.startswith('inactive'), 5.0, 'status inactive'
    )
    # cleanup needs inactive; from active it is refused (the lifecycle's rule)
    assert lc.change('activate')
    q2 = q0 - 0.05
    cmd = lc.step(q2)  # the pose measured now is held, not q0
    np.testing.assert_allclose(
        cmd, expected(q2, np.zeros(len(NAMES)), q2, 100.0), rtol=1e-8, atol=1e-8
    )
    assert not lc.change('cleanup') and lc.state() == 'active'
    n0 = len(lc.commands)
    assert lc.change('deactivate') and lc.change('cleanup') and lc.state() == 'unconfigured'
    lc.ros.spin_for(0.3)
    assert [list(m.data) for m in lc.commands.messages[n0:]] == [[0.0] * 7]
    assert lc.publish(q2, n=5) == []


def test_parameters_run_time_and_structural(lc):
    """
    Gains at run time, applied between two ticks; a bad value refused with the reason.

    A structural one only while unconfigured (taken at the next configure).
    """
    if lc.state() != 'unconfigured':
        lc.change('deactivate')
        lc.change('cleanup')
    # run time, while unconfigured: kept for configure
    res = lc.set_parameter('max_tracking_error', 0.5)
    assert res.successful, res.reason
    res = lc.set_parameter('mode', 'gravity_compensation')  # structural: fine while unconfigured
    assert res.successful, res.reason
    res = lc.set_parameter('mode', 'computed_torque')
    assert res.successful, res.reason
    assert lc.change('configure') and lc.change('activate')
    q = np.linspace(0.3, -0.3, len(NAMES))
    lc.step(q)
    res = lc.set_parameter('kp', 40.0)
    assert res.successful, res.reason
    q1 = q + 0.02
    cmds = lc.publish(q1, n=3)
    np.testing.assert_allclose(
        cmds[-1], expected(q1, np.zeros(len(NAMES)), q, 40.0), rtol=1e-8, atol=1e-8
    )
    for name, value, reason in (
        ('kp', -1.0, 'kp must be a finite number >= 0, got -1.0'),
        ('kd', [1.0, 2.0], 'kd: expected one value or one per command joint (7'),
        ('state_timeout', 0.0, 'state_timeout must be a finite number > 0'),
        ('mode', 'floating_base', 'mode is structural: it takes a reconfigure'),
    ):
        res = lc.set_parameter(name, value)
        assert not res.successful and reason in res.reason, (name, res.reason)
    cmds = lc.publish(q1, n=2)
    np.testing.assert_allclose(
        cmds[-1], expected(q1, np.zeros(len(NAMES)), q, 40.0), rtol=1e-8, atol=1e-8
    )


def test_effort_limits_set_then_unset_at_run_time(lc):
    """
    effort_limits set at run time clamps the next commands.

    Set back to unset (``ros2 param set`` of a NOT_SET value, ``ros2 param load`` of a null) it
    means the URDF limits again, as at start (it crashed the node: the unset value went to the
    controller as None).
    """
    if lc.state() != 'active':
        lc.change('configure')
        lc.change('activate')
    res = lc.set_parameter('kp', 40.0)  # as the run-time test before sets it: this test alone too
    assert res.successful, res.reason
    q = np.linspace(0.2, -0.2, len(NAMES))
    lc.step(q)
    q1 = q + 0.02
    free = expected(q1, np.zeros(len(NAMES)), q, 40.0)
    assert np.abs(free).max() > 2.0
    res = lc.set_parameter('effort_limits', [2.0])
    assert res.successful, res.reason
    np.testing.assert_allclose(
        lc.publish(q1, n=2)[-1], np.clip(free, -2.0, 2.0), rtol=1e-8, atol=1e-8
    )
    res = lc.ros.call(
        SetParameters,
        f'{NS}/spart_controller/set_parameters',
        SetParameters.Request(parameters=[Parameter('effort_limits').to_parameter_msg()]),
        process=lc.proc,
    ).results[0]  # NOT_SET
    assert res.successful, res.reason
    np.testing.assert_allclose(lc.publish(q1, n=2)[-1], free, rtol=1e-8, atol=1e-8)
    assert lc.proc.is_running() and 'Traceback' not in lc.proc.output()


def test_sigint_sends_one_zero_command_and_exits_cleanly(lc):
    if lc.state() != 'active':
        lc.change('configure')
        lc.change('activate')
    lc.step(np.zeros(len(NAMES)))
    n0 = len(lc.commands)
    assert lc.proc.stop() == 0, lc.proc.describe()
    lc.ros.wait_for(lambda: len(lc.commands) > n0, 5.0, 'the zero command of the shutdown')
    lc.ros.spin_for(0.2)
    assert [list(m.data) for m in lc.commands.messages[n0:]] == [[0.0] * 7]
    out = lc.proc.output()
    assert 'Traceback' not in out and 'Failed to publish' not in out, out


def test_a_trajectory_before_the_model_waits_for_it_and_a_gravity_mismatch_is_warned(ros):
    """
    Active before any robot description (autostart, the description comes on its topic).

    A trajectory sent then is kept (the status says so) and starts at the first command once the
    model is there, from the measured pose. The plant's gravity (latched, as spart_sim publishes
    it) differing from the gravity parameter is warned.
    """
    from pathlib import Path

    from builtin_interfaces.msg import Duration
    from geometry_msgs.msg import Vector3Stamped
    from node_helpers import LATCHED_QOS
    from spart_ros.control.trajectory import JointTrajectory as Interpolator
    from spart_ros.control.trajectory import Reference
    from std_msgs.msg import String
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

    ns = '/lcm'
    proc = start_node(
        'spart_ros',
        'controller_node',
        namespace=ns,
        parameters={
            'gravity': G.tolist(),
            'kp': 100.0,
            'kd': 20.0,
            'state_timeout': 0.5,
            'status_rate': 20.0,
            'joint_dynamics': False,
        },
    )
    try:
        proc.wait_for_output(r'waiting for a robot description', 90.0)
        status = ros.subscribe(ControllerStatus, f'{ns}/spart_controller/status', RELIABLE_QOS)
        commands = ros.subscribe(
            Float64MultiArray, f'{ns}/effort_controller/commands', RELIABLE_QOS
        )
        gravity = ros.publisher(Vector3Stamped, f'{ns}/plant_gravity', LATCHED_QOS)
        mars = Vector3Stamped()
        mars.vector.z = -3.71
        gravity.publish(mars)
        proc.wait_for_output(
            r'the plant simulates gravity \[0.0, 0.0, -3.71\] but this controller models '
            r'\[0.0, 0.0, -9.81\]',
            20.0,
        )
        traj = ros.publisher(
            JointTrajectory, f'{ns}/spart_controller/joint_trajectory', RELIABLE_QOS
        )
        q0 = np.full(len(NAMES), 0.2)
        target = q0 + 0.3
        msg = JointTrajectory(
            joint_names=NAMES,
            points=[
                JointTrajectoryPoint(positions=target.tolist(), time_from_start=Duration(sec=2))
            ],
        )
        ros.publish_until(
            traj,
            lambda: msg,
            lambda: status.messages and status.messages[-1].trajectories >= 1,
            what='the trajectory kept',
            process=proc,
        )
        st = status.messages[-1]
        assert (
            st.state.startswith('halted') and 'pending: waiting for a robot model' in st.state
        ), st.state
        desc = ros.publisher(String, f'{ns}/robot_description', LATCHED_QOS)
        desc.publish(String(data=Path(KUKA).read_text()))
        proc.wait_for_output(r"model 'lbr_iiwa'", 30.0)
        lc = Lifecycle(ros, proc)
        lc.js = ros.publisher(JointState, f'{ns}/joint_states', RELIABLE_QOS)
        lc.commands = commands
        lc.sec = 50.0
        lc.step(q0)  # the first command: hold q0, the goal from here
        start = ros.wait_for(
            lambda: trajectory_start(proc.output()), scaled(10.0), 'its start logged', process=proc
        )
        assert 50.0 < start <= lc.sec + 1e-6
        cmds = lc.publish(q0, n=1)
        assert cmds, 'no command for a state after the first one'
        ros.wait_for(
            lambda: status.messages[-1].state.startswith('tracking'), 5.0, 'tracking', process=proc
        )
        assert status.messages[-1].trajectories == 1
        interp = Interpolator(start, Reference(q0, 0 * q0, 0 * q0), [2.0], [target])
        sec = lc.sec
        r = interp.sample(sec)
        z3 = np.zeros(3)
        qdd = r.acceleration + 20.0 * r.velocity + 100.0 * (r.position - q0)
        exp = ref.expected_id(
            ROBOT,
            np.eye(3),
            z3,
            z3,
            z3,
            q0,
            np.zeros(len(NAMES)),
            qdd,
            z3,
            z3,
            np.zeros(6),
            np.zeros((6, ROBOT.n_links_joints)),
            G,
            floating=False,
        )[0]
        np.testing.assert_allclose(cmds[-1], exp, rtol=1e-8, atol=1e-8)
    finally:
        proc.cleanup()
