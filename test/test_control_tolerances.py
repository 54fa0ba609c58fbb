"""
Trajectory goals' tolerances and results.

spart_ros.control.tolerances, the Controller's goals), without ROS: JointTrajectoryController's
rules as the FollowJointTrajectory action server reports them, and the one default-joints rule with
a URDF's <ros2_control> tags (spart_ros.core.mimic.
"""

from core_helpers import urdf_path
import numpy as np
import pytest
from spart_ros.control.controller import HOLDING, TRACKING
from spart_ros.control.goals import (
    ABORTED,
    ACTIVE,
    CANCELED,
    GOAL_TOLERANCE_VIOLATED,
    INVALID_GOAL,
    INVALID_JOINTS,
    OLD_HEADER_TIMESTAMP,
    PATH_TOLERANCE_VIOLATED,
    PREEMPTED,
    SUCCEEDED,
    SUCCESSFUL,
    TrajectoryGoal,
)
from spart_ros.control.tolerances import (
    default_tolerances,
    JointTolerance,
    resolve_tolerances,
    ToleranceRequest,
    violation,
)
from spart_ros.core.errors import InputError
from spart_ros.core.mimic import command_joints
from spart_ros.core.ros2_control import initial_values, ros2_control_from_urdf
from spart_ros.core.urdf import robot_from_urdf
from test_controller_state_machine import active_controller, SLOW, tick

pytestmark = pytest.mark.filterwarnings('ignore::spart_ros.core.errors.SpartWarning')

Q0 = np.array([0.3, -0.4])
NAMES = ['shoulder', 'elbow']


def action_goal(positions, times=(1.0,), path=(), goal=(), goal_time=0.0, start=0.0, names=NAMES):
    return TrajectoryGoal.from_points(
        names,
        [(t, p, [], []) for t, p in zip(times, positions)],
        start,
        ToleranceRequest(
            tuple(JointTolerance(*x) for x in path),
            tuple(JointTolerance(*x) for x in goal),
            goal_time,
        ),
    )


# --- the tolerance rules -----------------------------------------------------------------------


def test_joint_tolerance_conventions():
    defaults = default_tolerances(3, [0, 2], [0.1, 0.2], [0.01, 0.02], 0.05, 1.5)
    np.testing.assert_array_equal(defaults.path.position, [0.1, 0.0, 0.2])
    np.testing.assert_array_equal(defaults.goal.velocity, [0.05, 0.0, 0.05])
    q_names = ['a', 'b', 'c']
    r = resolve_tolerances(
        defaults,
        q_names,
        ToleranceRequest(
            path=(
                JointTolerance('a', 0.0, 0.3),
                JointTolerance('c', -1.0),
                JointTolerance('b', 0.4),
            ),
            goal=(JointTolerance('c', 0.5, -1.0),),
        ),
    )
    np.testing.assert_array_equal(
        r.path.position, [0.1, 0.4, 0.0]
    )  # 0: the default; -1: none; > 0: it
    np.testing.assert_array_equal(r.path.velocity, [0.3, 0.0, 0.0])
    np.testing.assert_array_equal(r.goal.position, [0.01, 0.0, 0.5])
    np.testing.assert_array_equal(r.goal.velocity, [0.05, 0.0, 0.0])
    assert (
        r.goal_time == 1.5
        and resolve_tolerances(defaults, q_names, ToleranceRequest(goal_time=0.2)).goal_time == 0.2
    )
    assert (
        resolve_tolerances(defaults, q_names, ToleranceRequest()).path.position
        is not defaults.path.position
    )
    for request, words in (
        (ToleranceRequest(path=(JointTolerance('x', 0.1),)), "path_tolerance names joint 'x'"),
        (ToleranceRequest(goal=(JointTolerance('a', -2.0),)), 'goal_tolerance of a: position -2'),
        (ToleranceRequest(goal=(JointTolerance('a', float('nan')),)), 'position nan'),
        (
            ToleranceRequest(path=(JointTolerance('a', 0.1), JointTolerance('a', 0.2))),
            "gives joint 'a' twice",
        ),
        (ToleranceRequest(goal_time=-1.0), 'goal_time_tolerance -1.0 s must be >= 0'),
    ):
        with pytest.raises(InputError, match=words):
            resolve_tolerances(defaults, q_names, request)
    assert (
        violation(r.path, q_names, np.array([0.1, -0.4, 9.0]), np.zeros(3), 'path tolerance') == ''
    )
    assert (
        violation(r.path, q_names, np.array([0.0, -0.41, 0.0]), np.zeros(3), 'path tolerance')
        == 'path tolerance of b violated: position error -0.41 beyond 0.4'
    )
    assert 'velocity error 0.31 beyond 0.3' in violation(
        r.path, q_names, np.zeros(3), np.array([0.31, 0, 0]), 'x'
    )


# --- the controller's goals ---------------------------------------------------------------------


def test_a_path_tolerance_violation_aborts_and_holds_the_measured_pose():
    c, clock = active_controller(jump_tolerance=10.0)  # (no state-jump checks here)
    g = c.submit(action_goal([Q0 + 0.5], path=[('shoulder', 0.05)]), clock.t)
    tick(c, clock, Q0, dt=0.1)  # the reference moved 0.004 rad: within 0.05
    assert g.status == ACTIVE
    lag = Q0 - np.array([0.06, 0.0])  # 0.06 behind a reference that has barely moved
    tick(c, clock, lag)
    assert g.status == ABORTED and g.error_code == PATH_TOLERANCE_VIOLATED and c.state == HOLDING
    assert 'path tolerance of shoulder violated: position error 0.0' in g.message
    np.testing.assert_allclose(c.feedback().desired.position, lag)  # the pose measured then, held
    # the elbow erased (-1) and the shoulder's default 0 = unchecked: the same lag passes
    g = c.submit(action_goal([lag + 0.5], path=[('elbow', -1.0)]), clock.t)
    tick(c, clock, lag - 0.1, dt=0.1)  # (within max_tracking_error 0.2)
    assert g.status == ACTIVE and c.state == TRACKING


def test_a_topic_trajectory_gets_the_default_path_tolerance_and_ends_with_its_reference():
    c, clock = active_controller(
        path_tolerance=[0.05, 0.0], jump_tolerance=10.0, max_tracking_error=0.0, state_timeout=SLOW
    )
    g = c.submit(TrajectoryGoal.from_points(NAMES, [(1.0, Q0 + 0.2, [], [])]), clock.t)
    tick(c, clock, Q0 + np.array([0.0, 0.3]), dt=0.1)  # the elbow unchecked
    assert g.status == ACTIVE
    tick(c, clock, Q0 - 0.1, dt=0.1)
    assert g.status == ABORTED and g.error_code == PATH_TOLERANCE_VIOLATED
    c.apply_settings(path_tolerance=0.0)  # run time: no check
    g = c.submit(TrajectoryGoal.from_points(NAMES, [(1.0, Q0 + 0.2, [], [])]), clock.t)
    tick(c, clock, Q0 - 1.0, dt=0.5)
    tick(
        c, clock, Q0 - 1.0, qd=[1.0, 1.0], dt=0.6
    )  # far off and moving at the end: no result awaited
    assert g.status == SUCCEEDED and g.error_code == SUCCESSFUL


def test_an_action_goal_succeeds_within_its_goal_tolerance_or_aborts_after_the_goal_time():
    # (no jump or fault checks here; a plant whose states may come 30 s apart: no stall)
    c, clock = active_controller(jump_tolerance=10.0, max_tracking_error=0.0, state_timeout=60.0)
    target = Q0 + 0.2
    g = c.submit(
        action_goal([target], goal=[('shoulder', 0.01), ('elbow', 0.01)], goal_time=0.5), clock.t
    )
    tick(c, clock, Q0, dt=1.1)  # the end passed, 0.2 rad off: waiting
    assert g.status == ACTIVE and c.state == TRACKING
    tick(
        c, clock, target - 0.005, qd=[0.02, 0.0]
    )  # within the position tolerance, moving 0.02 rad/s:
    assert g.status == ACTIVE  # beyond the default stopped_velocity_tolerance 0.01
    tick(c, clock, target - 0.005, qd=[0.005, 0.0])
    assert (
        g.status == SUCCEEDED
        and g.error_code == SUCCESSFUL
        and 'within the goal tolerance' in g.message
    )
    assert c.state == HOLDING
    late = c.submit(action_goal([Q0], goal=[('shoulder', 0.01)], goal_time=0.5), clock.t)
    tick(c, clock, target, dt=1.3)  # 0.3 s after the end, still 0.2 rad off
    assert late.status == ACTIVE
    tick(c, clock, target, dt=0.3)  # 0.6 s > goal_time 0.5
    assert late.status == ABORTED and late.error_code == GOAL_TOLERANCE_VIOLATED
    assert (
        'goal tolerance of shoulder violated' in late.message
        and 'goal_time_tolerance 0.5 s' in late.message
    )
    np.testing.assert_allclose(c.feedback().desired.position, Q0)  # its last point stays held
    forever = c.submit(
        action_goal([target], goal=[('shoulder', 1e-6)]), clock.t
    )  # goal_time 0: no limit
    tick(c, clock, Q0, dt=30.0)
    assert forever.status == ACTIVE


def test_result_codes_of_preempted_canceled_refused_and_faulted_goals():
    c, clock = active_controller(max_tracking_error=0.2, jump_tolerance=10.0, state_timeout=SLOW)
    first = c.submit(action_goal([Q0 + 0.3], times=[2.0]), clock.t)
    second = c.submit(action_goal([Q0 - 0.1]), clock.t)
    assert (
        first.status == PREEMPTED
        and first.error_code == INVALID_GOAL
        and 'replaced by trajectory' in first.message
    )
    tick(c, clock, Q0, dt=0.5)
    reference = c.feedback().desired.position.copy()
    assert (
        c.cancel(second, clock.t) and second.status == CANCELED and second.error_code == SUCCESSFUL
    )
    tick(c, clock, Q0, dt=0.5)  # the reference of the cancel is held
    np.testing.assert_allclose(c.feedback().desired.position, reference)
    for bad, code in (
        (action_goal([[0.0, 0.0]], names=['shoulder', 'wrist']), INVALID_JOINTS),
        (action_goal([[0.0, 3.5]]), INVALID_GOAL),
        (action_goal([Q0], start=clock.t - 2.0), OLD_HEADER_TIMESTAMP),
    ):
        with pytest.raises(InputError):
            c.submit(bad, clock.t)
        assert bad.status == ABORTED and bad.error_code == code, (bad.message, bad.error_code)
    old_topic = TrajectoryGoal.from_points(NAMES, [(1.0, Q0, [], [])], start=clock.t - 2.0)
    assert (
        c.submit(old_topic, clock.t).status == ACTIVE
    )  # the topic: a past stamp starts now, as before
    g = c.submit(action_goal([Q0 + 1.0]), clock.t)
    tick(c, clock, Q0, dt=0.5)  # 0.5 rad behind: max_tracking_error 0.2, a fault
    assert g.status == ABORTED and g.error_code == PATH_TOLERANCE_VIOLATED and 'fault' in g.message
    c.clear_fault()
    tick(c, clock, Q0)
    g = c.submit(action_goal([Q0 + 0.1]), clock.t)
    c.deactivate()
    assert g.status == ABORTED and g.error_code == INVALID_GOAL and 'deactivated' in g.message


# --- the default joints from the <ros2_control> tags --------------------------------------------


def _tag(joints, name='arm'):
    body = ''.join(
        f'<joint name="{j}"{mimic}>'
        + ''.join(f'<command_interface name="{i}"/>' for i in interfaces)
        + '<state_interface name="position"><param name="initial_value">0.25</param>'
          '</state_interface>'
        '<state_interface name="velocity"/></joint>'
        for j, interfaces, mimic in joints
    )
    return (
        f'<ros2_control name="{name}" type="system"><hardware><plugin>p/P</plugin>'
        f'</hardware>{body}</ros2_control>'
    )


def test_the_default_joints_follow_the_ros2_control_tags():
    """
    One rule for spart_sim's joints and spart_controller's command_joints.

    The effort joints of the tags in their order, mimic followers left out; without effort joints
    in a tag, the robot's independent joints as before.
    """
    text = open(urdf_path('panda'), encoding='utf-8').read()
    robot = robot_from_urdf(text)[0]
    independent = list(robot.coordinates.names)
    assert command_joints(robot) == independent and 'panda_finger_joint2' not in independent
    arm = [f'panda_joint{k}' for k in range(1, 8)]
    joints = [(j, ['effort'], '') for j in reversed(arm)] + [
        ('panda_finger_joint1', ['position'], ''),
        ('panda_finger_joint2', ['effort'], ''),
    ]
    tagged = text.replace('</robot>', _tag(joints) + '</robot>')
    hardware = ros2_control_from_urdf(tagged, robot)
    assert command_joints(robot, hardware) == list(
        reversed(arm)
    )  # the tag's order; the follower left out
    assert initial_values(hardware, 'position') == {j: 0.25 for j, _, _ in joints}
    flagged = tagged.replace(
        '<joint name="panda_joint7">', '<joint name="panda_joint7" mimic="true">'
    )
    assert command_joints(robot, ros2_control_from_urdf(flagged, robot)) == list(reversed(arm))[1:]
    positions_only = text.replace(
        '</robot>', _tag([(j, ['position'], '') for j in arm]) + '</robot>'
    )
    assert command_joints(robot, ros2_control_from_urdf(positions_only, robot)) == independent
