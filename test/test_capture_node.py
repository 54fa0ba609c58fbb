"""
spart_controller's ~/capture action over real DDS, with spart_sim's target and weld (lockstep).

The INSTALLED nodes: spart_sim in lockstep (20 steps of 0.5 ms per command: control at 100 Hz)
with the capture demo's chaser (urdf/arm7_spacecraft.urdf, its wheels and thrusters) and target
(urdf/capture_target.yaml, tumbling at 4 deg/s; its odometry every 50 ms) in a 500 km orbit;
spart_controller in free_flying with the same target (the orbit from the sim's latched topic:
the world frame is LVLH).  An action client in this process sends
goals; what happened is read from the sim's topics, not only from the controller's reports:

- a goal naming an unknown target is accepted and at once aborted, its result saying why
  (INVALID_GOAL, the reason);
- preemption: a new goal during the first one's approach replaces it (INVALID_GOAL, "replaced by
  capture goal"), and is itself canceled: canceled, SUCCESSFUL, the arm stops (the controller
  holds);
- a fault (the plant stops: the controller's watchdog) aborts the goal with exactly one all-zero
  command (FAULT);
- a capture succeeds: feedback through approach, synchronise and detumble, the sim welds the
  target once when the controller asks (grasp_attached), the result SUCCESSFUL with the grasp and
  rest times, the target at rest after (its odometry);
- the target's frame is on /tf beside the base's, the pose of its odometry (tf2_msgs: the
  test-only copy, test/interfaces).

Each goal starts from the sim's ~/reset (robot and target back at their initial state).
"""

import os
from pathlib import Path

from action_msgs.msg import GoalStatus
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from node_helpers import RELIABLE_QOS, RosTestNode, scaled, start_node
import numpy as np
import pytest
from sensor_msgs.msg import JointState
from spart_interfaces.action import Capture
from spart_interfaces.msg import ControllerStatus
from std_msgs.msg import Float64MultiArray

pytestmark = pytest.mark.timeout(300)

ROOT = Path(__file__).resolve().parent.parent
NS = 'capture_node'
ACTION = f'/{NS}/spart_controller/capture'
JOINTS = [f'arm_joint_{k}' for k in range(1, 8)]
Q0 = [0.0, 0.4, 0.0, -1.8, 0.0, -0.7, 0.0]
COMMON = {
    'base': 'floating',
    'gravity': [0.0, 0.0, 0.0],
    'actuators_file': 'package://spart_ros/urdf/arm7_spacecraft.actuators.yaml',
    'target_file': 'package://spart_ros/urdf/capture_target.yaml',
}


def seconds(stamp):
    return stamp.sec + 1e-9 * stamp.nanosec


class Loop:
    """The lockstep loop, an action client of its controller and what the sim publishes."""

    def __init__(self, ros):
        from rclpy.action import ActionClient

        self.ros = ros
        self.js = ros.subscribe(JointState, f'/{NS}/joint_states', RELIABLE_QOS)
        self.target = ros.subscribe(Odometry, f'/{NS}/target/odom', RELIABLE_QOS)
        self.attached = ros.subscribe(PoseStamped, f'/{NS}/grasp_attached', RELIABLE_QOS)
        self.commands = ros.subscribe(
            Float64MultiArray, f'/{NS}/effort_controller/commands', RELIABLE_QOS
        )
        self.status = ros.subscribe(
            ControllerStatus, f'/{NS}/spart_controller/status', RELIABLE_QOS
        )
        self.sim = start_node(
            'spart_ros',
            'sim_node',
            namespace=f'/{NS}',
            remappings={'/clock': f'/{NS}/clock'},
            parameters={
                **COMMON,
                'urdf_path': str(ROOT / 'urdf' / 'arm7_spacecraft.urdf'),
                'dt': 0.0005,
                'lockstep': True,
                'lockstep_steps': 20,
                'initial_joint_names': JOINTS,
                'initial_joint_positions': Q0,
                'grasp_link': 'arm_tool',
                'target_period': 0.05,
                'orbit_altitude': 500e3,
                'state_queue_depth': 100,
            },
        )
        # lockstep: the loop waits for the controller, so a stalled process is no stale input
        self.controller = start_node(
            'spart_ros',
            'controller_node',
            namespace=f'/{NS}',
            parameters={
                **COMMON,
                'mode': 'free_flying',
                'ee_link': 'arm_tool',
                'status_rate': 20.0,
                'state_timeout': 2.0,
            },
        )
        self.procs = [self.sim, self.controller]
        self.client = ActionClient(ros.node, Capture, ACTION)
        self.feedback = []

    def wait(self, predicate, timeout, what):
        return self.ros.wait_for(predicate, scaled(timeout), what, process=self.procs)

    def sim_time(self):
        return seconds(self.js.messages[-1].header.stamp) if self.js.messages else 0.0

    def arm_rates(self):
        m = self.js.messages[-1]
        return np.array([m.velocity[list(m.name).index(j)] for j in JOINTS])

    def after(self, dt, what):
        t = self.sim_time() + dt
        self.wait(lambda: self.sim_time() >= t, 60.0, what)

    def reset(self):
        """Robot and target back at their initial state; the controller holding again."""
        from std_srvs.srv import Trigger

        res = self.ros.call(Trigger, f'/{NS}/spart_sim/reset', Trigger.Request(), timeout=30.0)
        assert res.success, res.message
        self.after(0.3, 'the loop after the reset')

    def send(self, **fields):
        """Return the goal handle once the server answered."""
        self.wait(lambda: self.client.server_is_ready(), 30.0, f'the action server {ACTION}')
        goal = Capture.Goal(**fields)
        future = self.client.send_goal_async(
            goal, feedback_callback=lambda m: self.feedback.append(m.feedback)
        )
        self.wait(future.done, 30.0, 'the goal response')
        return future.result()

    def result(self, handle, timeout=120.0):
        future = handle.get_result_async()
        self.wait(future.done, timeout, 'the result')
        return future.result()

    def close(self):
        self.client.destroy()
        for p in self.procs:
            p.cleanup()


@pytest.fixture(scope='module')
def loop():
    ros = RosTestNode('test_capture_node')
    loop = Loop(ros)
    try:
        loop.wait(
            lambda: loop.status.messages and loop.status.messages[-1].commanding,
            90.0,
            'the controller commanding',
        )
        loop.wait(lambda: len(loop.target.messages) > 2, 60.0, "the target's odometry")
        yield loop
    finally:
        loop.close()
        ros.close()


def test_a_goal_for_another_target_is_aborted_with_the_reason(loop):
    assert f'Capture action server on {ACTION}' in loop.controller.output()
    handle = loop.send(target='debris')
    assert handle.accepted
    res = loop.result(handle)
    assert res.status == GoalStatus.STATUS_ABORTED
    assert res.result.error_code == Capture.Result.INVALID_GOAL
    assert "unknown target 'debris'" in res.result.error_string, res.result.error_string


def test_a_new_goal_preempts_and_a_cancel_holds(loop):
    loop.reset()
    first = loop.send()
    assert first.accepted
    loop.after(0.5, 'the approach under way')
    second = loop.send()
    assert second.accepted
    res = loop.result(first)
    assert res.status == GoalStatus.STATUS_ABORTED
    assert res.result.error_code == Capture.Result.INVALID_GOAL
    assert 'replaced by capture goal' in res.result.error_string, res.result.error_string
    loop.after(0.5, 'the second approach under way')
    future = second.cancel_goal_async()
    loop.wait(future.done, 20.0, 'the cancel response')
    assert len(future.result().goals_canceling) == 1
    res = loop.result(second)
    assert res.status == GoalStatus.STATUS_CANCELED
    assert res.result.error_code == Capture.Result.SUCCESSFUL
    loop.after(1.5, '1.5 s after the cancel')
    qd = loop.arm_rates()
    print(f'\n1.5 s after the cancel: arm joint rates <= {np.abs(qd).max():.2e} rad/s')
    assert np.abs(qd).max() < 0.02  # held: the arm stopped
    assert 'canceled: holding the measured pose' in loop.controller.output()


def test_a_fault_aborts_with_one_zero_command(loop):
    from std_srvs.srv import SetBool

    loop.reset()
    handle = loop.send()
    assert handle.accepted
    loop.after(0.5, 'the approach under way')
    n0 = len(loop.commands.messages)
    res = loop.ros.call(SetBool, f'/{NS}/spart_sim/pause', SetBool.Request(data=True))
    assert res.success
    res = loop.result(handle)  # the watchdog (state_timeout 2 s of the steady clock) stops it
    assert res.status == GoalStatus.STATUS_ABORTED
    assert res.result.error_code == Capture.Result.FAULT
    assert 'the controller stopped' in res.result.error_string, res.result.error_string
    loop.ros.spin_for(0.5)
    zeros = [m for m in loop.commands.messages[n0:] if not np.any(m.data)]
    assert len(zeros) == 1, len(zeros)
    assert not np.any(loop.commands.messages[-1].data)  # nothing after it
    res = loop.ros.call(SetBool, f'/{NS}/spart_sim/pause', SetBool.Request(data=False))
    assert res.success


def test_a_capture_succeeds_over_the_topics(loop):
    loop.reset()
    loop.feedback.clear()
    n_attached = len(loop.attached.messages)
    handle = loop.send(detumble_timeout=30.0)
    assert handle.accepted
    res = loop.result(handle, timeout=240.0)
    assert res.status == GoalStatus.STATUS_SUCCEEDED, res.result.error_string
    assert res.result.error_code == Capture.Result.SUCCESSFUL and res.result.phase == 'done'
    phases = list(dict.fromkeys(m.phase for m in loop.feedback))
    assert phases[:3] == ['approach', 'synchronise', 'detumble'] or phases[:4] == [
        'approach',
        'synchronise',
        'grasp',
        'detumble',
    ], phases
    welds = loop.attached.messages[n_attached:]
    assert len(welds) == 1 and welds[0].header.frame_id == 'arm_tool'
    t_weld = seconds(welds[0].header.stamp)
    assert abs(t_weld - res.result.grasp_time) < 0.05  # the controller took the sim's weld
    assert res.result.rest_time > res.result.grasp_time > 0.0
    # the grasp: the end effector on the fixture, slowly relative to it (the feedback before)
    before = [m for m in loop.feedback if m.phase in ('synchronise', 'grasp')]
    last = before[-1]
    rel = np.array(
        [last.relative_twist.linear.x, last.relative_twist.linear.y, last.relative_twist.linear.z]
    )
    assert last.distance < 0.01 and np.linalg.norm(rel) < 0.01, (last.distance, rel)
    # after: the target at rest as the sim measures it (its odometry: twist of l in l)
    w = loop.target.messages[-1].twist.twist.angular
    rate = np.linalg.norm([w.x, w.y, w.z])
    print(
        f'\ncapture over ROS: grasp at {res.result.grasp_time:.2f} s, at rest at '
        f'{res.result.rest_time:.2f} s; the target turns at {np.degrees(rate):.3f} deg/s after'
    )
    assert np.degrees(rate) < 0.2


def test_the_target_is_in_tf_beside_the_base(loop):
    try:
        from tf2_msgs.msg import TFMessage  # noqa: I100 - test/interfaces' copy here
    except ImportError:  # scripts/test.sh builds it (test/interfaces): missing there is a failure
        if os.environ.get('SPART_TEST_INTERFACES'):
            raise
        pytest.skip('tf2_msgs is not importable: SPART_TEST_INTERFACES=1 bash scripts/setup.sh')
    tf = loop.ros.subscribe(TFMessage, '/tf', RELIABLE_QOS)
    # what the sim sends before its writer matches this new reader is lost (DDS discovery: the
    # writer's side can match later than this reader's), so wait for messages, not sim time
    loop.ros.wait_for_writers([tf], timeout=scaled(30.0), process=loop.procs)
    loop.wait(
        lambda: sum(len(m.transforms) == 2 for m in tf.messages) >= 10,
        30.0,
        '/tf messages with the base and the target',
    )
    both = [m for m in tf.messages if len(m.transforms) == 2]
    odometry = {seconds(m.header.stamp): m for m in loop.target.messages}
    checked = 0
    for m in both:
        base, target = m.transforms
        assert base.header.frame_id == target.header.frame_id == 'lvlh'
        assert target.child_frame_id == 'client' and base.child_frame_id == 'arm_base'
        o = odometry.get(seconds(target.header.stamp))
        if o is None:
            continue
        p, t = o.pose.pose.position, target.transform.translation
        assert (p.x, p.y, p.z) == (t.x, t.y, t.z)
        checked += 1
    assert checked > 0
