"""
spart_controller's FollowJointTrajectory action over real DDS.

The action: ~/follow_joint_trajectory, JointTrajectoryController's name and semantics.  With
the test-only control_msgs (test/interfaces: the public definitions; control_msgs is not
installable here) and the INSTALLED nodes: spart_sim in lockstep and spart_controller, a planar
two-link arm in gravity.  An action client in this process sends goals as MoveIt would; what
the robot did is read from the sim's joint states, not from the nodes' reports:

- a goal executes: accepted, feedback (desired, actual, error of the command joints, the index
  of the point followed toward), success
  (SUCCESSFUL) once within its goal tolerance, the arm at the last point;
- a path tolerance the motion cannot keep: aborted with PATH_TOLERANCE_VIOLATED, the arm held
  where it was (it does not go on to the target);
- preemption: a new goal replaces the running one (aborted, INVALID_GOAL, as JTC documents) and
  succeeds;
- cancel: the goal ends canceled and the current reference is held (the arm stops short of the
  target);
- a goal naming an unknown joint, or a waypoint outside the URDF limits, is rejected;
- without control_msgs the node says so and runs without the action.
"""

import os

from action_msgs.msg import GoalStatus
from builtin_interfaces.msg import Duration
from core_helpers import urdf_path
from node_helpers import RELIABLE_QOS, RosTestNode, scaled, start_node
import numpy as np
import pytest
from sensor_msgs.msg import JointState
from spart_interfaces.msg import ControllerStatus
from trajectory_msgs.msg import JointTrajectoryPoint

try:
    from control_msgs.action import FollowJointTrajectory
    from control_msgs.msg import JointTolerance
except ImportError:  # scripts/test.sh builds it (test/interfaces): missing there is a failure
    if os.environ.get('SPART_TEST_INTERFACES'):
        raise
    pytest.skip(
        'control_msgs is not importable: build the test-only copy with '
        'SPART_TEST_INTERFACES=1 bash scripts/setup.sh',
        allow_module_level=True,
    )

pytestmark = pytest.mark.timeout(300)

NS = 'fjt'
JOINTS = ['shoulder', 'elbow']
GRAVITY = [0.0, -9.81, 0.0]  # in the arm's plane: gravity loads it
START = np.array([0.3, -0.4])
ACTION = f'/{NS}/spart_controller/follow_joint_trajectory'


def seconds(d):
    return d.sec + 1e-9 * d.nanosec


def duration(t):
    ns = int(round(t * 1e9))
    return Duration(sec=ns // 1_000_000_000, nanosec=ns % 1_000_000_000)


class Arm:
    """The lockstep loop and an action client of its controller."""

    def __init__(self, ros):
        from rclpy.action import ActionClient

        self.ros = ros
        self.js = ros.subscribe(JointState, f'/{NS}/joint_states', RELIABLE_QOS)
        self.status = ros.subscribe(
            ControllerStatus, f'/{NS}/spart_controller/status', RELIABLE_QOS
        )
        urdf = urdf_path('planar_two_link')
        self.sim = start_node(
            'spart_ros',
            'sim_node',
            namespace=f'/{NS}',
            remappings={'/clock': f'/{NS}/clock'},
            parameters={
                'urdf_path': urdf,
                'gravity': GRAVITY,
                'lockstep': True,
                'initial_joint_names': JOINTS,
                'initial_joint_positions': START.tolist(),
            },
        )
        # lockstep: the loop waits for the controller, so a stalled process is no stale input
        # (state_timeout)
        self.controller = start_node(
            'spart_ros',
            'controller_node',
            namespace=f'/{NS}',
            parameters={
                'gravity': GRAVITY,
                'status_rate': 20.0,
                'state_timeout': 2.0,
                'kp': 400.0,
                'kd': 40.0,
            },
        )
        self.procs = [self.sim, self.controller]
        self.client = ActionClient(ros.node, FollowJointTrajectory, ACTION)
        self.feedback = []

    def wait(self, predicate, timeout, what):
        return self.ros.wait_for(predicate, scaled(timeout), what, process=self.procs)

    def sim_time(self):
        return seconds(self.js.messages[-1].header.stamp) if self.js.messages else 0.0

    def q(self):
        m = self.js.messages[-1]
        return np.array([m.position[list(m.name).index(j)] for j in JOINTS])

    def qd(self):
        m = self.js.messages[-1]
        return np.array([m.velocity[list(m.name).index(j)] for j in JOINTS])

    def after(self, dt, what):
        """Wait until ``dt`` more seconds of simulated time have passed."""
        t = self.sim_time() + dt
        self.wait(lambda: self.sim_time() >= t, 60.0, what)

    def goal(self, points, joints=JOINTS, path=(), goal=(), goal_time=0.0):
        """
        Return a FollowJointTrajectory goal through ``points`` [(t, positions)].

        Tolerances [(joint, position)].
        """
        g = FollowJointTrajectory.Goal()
        g.trajectory.joint_names = list(joints)
        g.trajectory.points = [
            JointTrajectoryPoint(positions=[float(x) for x in q], time_from_start=duration(t))
            for t, q in points
        ]
        g.path_tolerance = [JointTolerance(name=n, position=p) for n, p in path]
        g.goal_tolerance = [JointTolerance(name=n, position=p) for n, p in goal]
        g.goal_time_tolerance = duration(goal_time)
        return g

    def send(self, goal):
        """Return the goal handle once the server answered (accepted or not)."""
        self.wait(lambda: self.client.server_is_ready(), 30.0, f'the action server {ACTION}')
        future = self.client.send_goal_async(
            goal, feedback_callback=lambda m: self.feedback.append(m.feedback)
        )
        self.wait(future.done, 20.0, 'the goal response')
        return future.result()

    def result(self, handle, timeout=60.0):
        future = handle.get_result_async()
        self.wait(future.done, timeout, 'the result')
        return future.result()

    def close(self):
        self.client.destroy()
        for p in self.procs:
            p.cleanup()


@pytest.fixture(scope='module')
def arm():
    ros = RosTestNode('test_trajectory_action')
    loop = Arm(ros)
    try:
        loop.wait(
            lambda: loop.status.messages and loop.status.messages[-1].commanding,
            90.0,
            'the controller commanding',
        )
        loop.wait(lambda: loop.sim_time() > 0.1, 60.0, 'the loop running')
        yield loop
    finally:
        loop.close()
        ros.close()


def test_the_test_only_definition_is_the_published_one():
    """control_msgs 6.3.0 and later: the feedback's fields, types and order (index included)."""
    fields = FollowJointTrajectory.Feedback.get_fields_and_field_types()
    assert list(fields.items()) == [
        ('header', 'std_msgs/Header'),
        ('joint_names', 'sequence<string>'),
        ('desired', 'trajectory_msgs/JointTrajectoryPoint'),
        ('actual', 'trajectory_msgs/JointTrajectoryPoint'),
        ('error', 'trajectory_msgs/JointTrajectoryPoint'),
        ('index', 'int32'),
        ('multi_dof_joint_names', 'sequence<string>'),
        ('multi_dof_desired', 'trajectory_msgs/MultiDOFJointTrajectoryPoint'),
        ('multi_dof_actual', 'trajectory_msgs/MultiDOFJointTrajectoryPoint'),
        ('multi_dof_error', 'trajectory_msgs/MultiDOFJointTrajectoryPoint'),
        ('multi_dof_index', 'int32'),
    ]
    goal = FollowJointTrajectory.Goal.get_fields_and_field_types()
    assert list(goal) == [
        'trajectory',
        'multi_dof_trajectory',
        'path_tolerance',
        'component_path_tolerance',
        'goal_tolerance',
        'component_goal_tolerance',
        'goal_time_tolerance',
    ]
    assert list(FollowJointTrajectory.Result.get_fields_and_field_types()) == [
        'error_code',
        'error_string',
    ]


def test_a_goal_executes_with_feedback_and_succeeds(arm):
    assert f'FollowJointTrajectory action server on {ACTION}' in arm.controller.output()
    q0 = arm.q()
    target = q0 + np.array([0.4, 0.3])
    arm.feedback.clear()
    handle = arm.send(
        arm.goal(
            [(0.5, q0 + np.array([0.2, 0.1])), (1.0, target)],
            goal=[(j, 0.005) for j in JOINTS],
            goal_time=2.0,
        )
    )
    assert handle.accepted
    res = arm.result(handle)
    assert res.status == GoalStatus.STATUS_SUCCEEDED, (res.status, res.result.error_string)
    assert res.result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
    assert 'within the goal tolerance' in res.result.error_string
    arm.after(0.2, 'the last point held')  # (this process reads the states a little late)
    assert np.abs(arm.q() - target).max() < 0.005  # the goal tolerance, measured by the sim
    fb = arm.feedback
    assert len(fb) >= 2, len(fb)
    for m in fb:
        assert list(m.joint_names) == JOINTS
        desired, actual, error = (np.array(x.positions) for x in (m.desired, m.actual, m.error))
        np.testing.assert_allclose(error, desired - actual, atol=1e-12)
        np.testing.assert_allclose(
            np.array(m.error.velocities),
            np.array(m.desired.velocities) - np.array(m.actual.velocities),
            atol=1e-12,
        )
        assert len(m.desired.accelerations) == 2
    # index: the point followed toward (0 until 0.5 s, then 1, the last), as JTC fills it
    assert [m.index for m in fb] == [int(seconds(m.desired.time_from_start) >= 0.5) for m in fb]
    assert {m.index for m in fb} == {0, 1} and all(m.multi_dof_index == 0 for m in fb)
    desired = np.array([m.desired.positions for m in fb])
    away = np.abs(desired - target).max(axis=1)
    print(
        f'\n{len(fb)} feedback messages over {seconds(fb[-1].desired.time_from_start):.2f} s of '
        f'the goal; the reference {away[0]:.3f} -> {away[-1]:.3f} rad from the target'
    )
    assert away[-1] < away[0] and away[0] > 0.1  # the reference went to the target
    assert np.all(
        np.diff([seconds(m.header.stamp) for m in fb]) >= 0
    )  # stamped with the control time


def test_a_path_tolerance_violation_aborts_and_holds(arm):
    q0 = arm.q()
    target = q0 + np.array([0.6, -0.5])
    handle = arm.send(arm.goal([(0.6, target)], path=[('shoulder', 1e-5), ('elbow', 1e-5)]))
    assert handle.accepted
    res = arm.result(handle)
    assert res.status == GoalStatus.STATUS_ABORTED
    assert res.result.error_code == FollowJointTrajectory.Result.PATH_TOLERANCE_VIOLATED
    assert 'path tolerance of' in res.result.error_string and 'violated' in res.result.error_string
    arm.after(1.0, '1 s after the abort')
    q = arm.q()
    print(
        f'\npath tolerance 1e-5 rad: aborted ({res.result.error_string}); 1 s later |q - start| '
        f'{np.abs(q - q0).max():.2e} rad, |q - target| {np.abs(q - target).min():.3f} rad'
    )
    assert np.abs(q - q0).max() < 0.02  # held where it was, not taken on to the target
    assert np.abs(arm.qd()).max() < 1e-3


def test_a_new_goal_preempts_the_running_one(arm):
    q0 = arm.q()
    first = arm.send(arm.goal([(3.0, q0 + np.array([0.8, 0.8]))]))
    assert first.accepted
    arm.after(0.3, 'the first goal under way')
    target = q0 + np.array([-0.3, 0.2])
    second = arm.send(arm.goal([(1.0, target)], goal=[(j, 0.005) for j in JOINTS]))
    assert second.accepted
    res = arm.result(first)
    assert res.status == GoalStatus.STATUS_ABORTED
    assert res.result.error_code == FollowJointTrajectory.Result.INVALID_GOAL
    assert 'replaced by trajectory' in res.result.error_string
    res = arm.result(second)
    assert res.status == GoalStatus.STATUS_SUCCEEDED, res.result.error_string
    arm.after(0.2, 'the last point held')
    assert np.abs(arm.q() - target).max() < 0.005


def test_cancel_holds_the_current_reference(arm):
    q0 = arm.q()
    target = q0 + np.array([0.8, -0.6])
    handle = arm.send(arm.goal([(2.0, target)]))
    assert handle.accepted
    arm.after(0.6, 'the goal under way')
    future = handle.cancel_goal_async()
    arm.wait(future.done, 20.0, 'the cancel response')
    assert len(future.result().goals_canceling) == 1
    q_cancel = arm.q()
    res = arm.result(handle)
    assert res.status == GoalStatus.STATUS_CANCELED
    assert res.result.error_code == FollowJointTrajectory.Result.SUCCESSFUL
    arm.after(1.0, '1 s after the cancel')
    q = arm.q()
    print(
        f'\ncancel after 0.6 s of 2 s: moved {np.abs(q_cancel - q0).max():.3f} rad by then, '
        f'{np.abs(q - q_cancel).max():.3f} rad after; {np.abs(q - target).max():.3f} rad short of '
        'the target'
    )
    assert np.abs(q_cancel - q0).max() > 0.02  # it was moving
    assert np.abs(q - q_cancel).max() < 0.05  # and stopped where its reference was
    assert np.abs(q - target).max() > 0.3
    assert np.abs(arm.qd()).max() < 1e-3
    assert 'canceled: holding the current reference' in arm.controller.output()


def test_goals_the_controller_cannot_follow_are_rejected(arm):
    q0 = arm.q()
    for goal, words in (
        (arm.goal([(1.0, [0.1, 0.2])], joints=['shoulder', 'wrist']), "unknown: ['wrist']"),
        (arm.goal([(1.0, [q0[0], 3.5])]), 'puts elbow at 3.5, outside its URDF position limits'),
        (arm.goal([(1.0, q0)], path=[('wrist', 0.1)]), "path_tolerance names joint 'wrist'"),
    ):
        handle = arm.send(goal)
        assert not handle.accepted
        arm.wait(lambda: words in arm.controller.output(), 10.0, f'the log saying {words!r}')
    assert arm.controller.is_running()


def test_without_control_msgs_the_node_says_so():
    """A node whose environment has no control_msgs runs without the action server and says so."""
    import control_msgs

    if 'install_test' not in (control_msgs.__file__ or ''):
        pytest.skip('control_msgs is installed for real here: it cannot be taken away from a node')
    path = os.pathsep.join(
        p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if 'install_test' not in p
    )
    proc = start_node(
        'spart_ros',
        'controller_node',
        namespace='/fjt_none',
        env={'PYTHONPATH': path},
        parameters={'urdf_path': urdf_path('planar_two_link')},
    )
    try:
        proc.wait_for_output(
            r'control_msgs is not installed .*no FollowJointTrajectory action server', 60.0
        )
        proc.wait_for_output(r'spart_controller\]: mode ', 60.0)
        assert proc.is_running()
    finally:
        assert proc.stop() == 0
        proc.cleanup()
