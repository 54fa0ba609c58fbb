"""
End-effector pose goals (spart_ros.control.ee_goals, Controller.submit_pose).

Offline on the plants.

- a Cartesian path turned into a joint trajectory by IK at samples (50 ms): the interpolated
  joint reference keeps the end effector on the path to 1e-7 m / 1e-7 rad between samples;
- fixed base (KUKA iiwa, MuJoCo plant, gravity): computed_torque follows a straight line to the
  goal within 1 mm of the line at every tick (measured micrometres), and reaches the pose; so
  does joint_impedance; a screw path too (on its helix); a queued goal starts at its stamp;
- free-floating base (the 7-joint arm on a 200 kg spacecraft, zero gravity): resolved_rate
  follows the line within 1 mm while the base turns;
- refused, saying why: a target out of reach (the path leaves the workspace), a mode without
  pose goals (floating_base, gravity_compensation), before the first command; a newer goal
  preempts the running one.
"""

from core_helpers import urdf_path
import numpy as np
import pytest
from spart_ros.control.ee_goals import joint_trajectory_of, make_path, PoseGoal
from spart_ros.control.end_effector import rotation_vector
from spart_ros.control.trajectory import JointTrajectory, Reference
from spart_ros.core import robot_from_urdf
from spart_ros.core.base_state import base_from_link_frame
from spart_ros.core.errors import InputError
from spart_ros.core.inverse_kinematics import InverseKinematics
from spart_ros.core.rigid_motion import _rotation_from_vector
from spart_ros.sim import InitialState
from spart_ros.sim.closed_loop import simulate

pytestmark = pytest.mark.filterwarnings('ignore::spart_ros.core.errors.SpartWarning')

KUKA = urdf_path('kuka_iiwa')
KUKA_Q0 = [0.2, 0.6, 0.1, -1.3, 0.2, 0.9, 0.1]
KUKA_NAMES = [f'lbr_iiwa_joint_{k}' for k in range(1, 8)]
EE, POINT = 'lbr_iiwa_link_7', (0.0, 0.0, 0.1)
MOVE, TURN = np.array([0.1, -0.1, 0.05]), np.array([0.0, 0.2, 0.1])  # 15 cm, 13 deg
LINE_TOLERANCE = 0.001  # m: the bound


def _start_pose(robot, q, R_b=np.eye(3), p_b=np.zeros(3), link=EE, point=POINT):
    R0, r0, _ = base_from_link_frame(robot, R_b, p_b)
    return InverseKinematics(robot, link, point).pose(np.array(q), R0, r0)


def _off_line(p, start, end):
    """
    Largest distance of the points p.

    K, 3) from the segment's line, and how far along it the last one is (fraction.
    """
    u = (end - start) / np.linalg.norm(end - start)
    rel = p - start
    along = rel @ u
    return float(np.linalg.norm(rel - along[:, None] * u, axis=1).max()), float(
        along[-1] / np.linalg.norm(end - start)
    )


def test_ik_samples_keep_the_interpolated_reference_on_the_path():
    robot, _ = robot_from_urdf(KUKA)
    ik = InverseKinematics(robot, EE, POINT)
    R0, r0 = np.eye(3), np.asarray(robot.base_link.T, float)[:3, 3]
    R, p = ik.pose(KUKA_Q0, R0, r0)
    goal = PoseGoal.create(_rotation_from_vector(TURN) @ R, p + MOVE, 2.0)
    path = make_path(goal, R, p, 0.0)
    tg = joint_trajectory_of(path, ik, KUKA_Q0, R0, r0, 0.05)
    assert len(tg.times) == 40 and tg.times[-1] == 2.0
    traj = JointTrajectory(
        0.0,
        Reference(np.array(KUKA_Q0), np.zeros(7), np.zeros(7)),
        tg.times,
        tg.positions,
        tg.velocities,
        tg.accelerations,
    )
    worst_p = worst_r = 0.0
    for t in np.linspace(0.0, 2.0, 801):
        Rq, pq = ik.pose(traj.sample(t).position, R0, r0)
        s = path.sample(t)
        worst_p = max(worst_p, np.linalg.norm(pq - s.position))
        worst_r = max(worst_r, np.linalg.norm(rotation_vector(Rq @ s.rotation.T)))
    print(
        f'\nbetween IK samples 50 ms apart: the end effector within {worst_p:.1e} m '
        f'and {worst_r:.1e} rad of the path'
    )
    assert worst_p < 1e-7 and worst_r < 1e-7
    with pytest.raises(InputError, match='cannot be followed'):  # 2 m away: out of reach
        joint_trajectory_of(
            make_path(PoseGoal.create(R, p + [2.0, 0.0, 0.0], 2.0), R, p, 0.0), ik, KUKA_Q0, R0, r0
        )
    for bad, match in (
        ({'duration': 0.0}, 'duration'),
        ({'path': 'spline'}, 'path'),
        ({'scaling': 'linear'}, 'scaling'),
        ({'frame': 'tool0'}, 'frame'),
    ):
        with pytest.raises(InputError, match=match):
            PoseGoal.create(R, p, **dict({'duration': 1.0}, **bad))


def _kuka_goal_run(mode, goal_options=None, duration=3.0, **settings):
    """
    KUKA iiwa on the MuJoCo plant (gravity, rotor inertia 0.1), holding KUKA_Q0.

    A pose goal 15 cm and 13 deg away in 2 s submitted at 0.1 s. Returns (run, goal, start pose).
    """
    held = {}

    def send(controller, plant, t):
        R, p = _start_pose(plant.robot, KUKA_Q0, *plant.base_link_state()[0:2])
        held['start'] = (R, p)
        held['goal'] = controller.submit_pose(
            PoseGoal.create(
                _rotation_from_vector(TURN) @ R, p + MOVE, 2.0, **(goal_options or {})
            ),
            t,
        )

    run = simulate(
        KUKA,
        dict(mode=mode, ee_link=EE, ee_offset=POINT, **settings),
        duration=duration,
        initial=InitialState(dict(zip(KUKA_NAMES, KUKA_Q0))),
        joint_dynamics={'*': {'armature': 0.1}},
        events=[(0.1, send)],
    )
    return run, held['goal'], held['start']


@pytest.mark.parametrize(
    'mode, settings, tolerance',
    [
        ('computed_torque', {'kp': 400.0, 'kd': 40.0}, 1e-5),
        (
            'joint_impedance',
            {
                'impedance_stiffness': (300.0, 300.0, 200.0, 200.0, 50.0, 50.0, 10.0),
                'impedance_damping': (20.0, 20.0, 15.0, 15.0, 3.0, 3.0, 0.5),
            },
            1e-4,
        ),
    ],
)
def test_fixed_base_follows_a_straight_line(mode, settings, tolerance):
    """
    On a fixed base the end effector follows a straight line to the target.

    At every tick the end effector is within 1 mm of the line (measured: micrometres; a
    mode-specific bound well below it checks the figure), reaches the target (pose), the goal
    succeeds when the trajectory it became ends.
    """
    run, goal, (R_s, p_s) = _kuka_goal_run(mode, **settings)
    R, p = run.ee_poses(EE, POINT)
    off, reached = _off_line(p, p_s, goal.position)
    err_p, err_r = (
        np.linalg.norm(p[-1] - goal.position),
        np.linalg.norm(rotation_vector(goal.rotation @ R[-1].T)),
    )
    print(
        f'\n{mode}: the end effector at most {off * 1e3:.4f} mm off the line, {reached:.6f} of '
        f'the way, {err_p:.1e} m / {err_r:.1e} rad from the target; '
        f'goal {goal.status}: {goal.message}'
    )
    assert off < LINE_TOLERANCE and off < tolerance
    assert abs(reached - 1.0) < tolerance and err_p < tolerance and err_r < 10 * tolerance
    assert (
        goal.status == 'succeeded'
        and goal.trajectory is not None
        and goal.end_time == pytest.approx(2.1)
    )


def test_screw_path_and_queued_start():
    """
    path='screw' with a start stamp 0.5 s after it was sent: queued until then.

    The end effector moves on the screw (the pose of path.sample at each tick, to 2e-5 m).
    """
    run, goal, (R_s, p_s) = _kuka_goal_run(
        'computed_torque', {'path': 'screw', 'start': 0.6}, kp=400.0, kd=40.0
    )
    assert goal.status == 'succeeded' and goal.start_time == pytest.approx(0.6)
    path = make_path(goal, R_s, p_s, 0.6)
    R, p = run.ee_poses(EE, POINT)
    gap = max(np.linalg.norm(p[k] - path.sample(t).position) for k, t in enumerate(run.t))
    print(f'\nscrew path: the end effector within {gap:.1e} m of it')
    assert gap < 2e-5
    moved = np.linalg.norm(p[np.searchsorted(run.t, 0.59)] - p_s)
    assert moved < 1e-6  # still at the start before the stamp


def test_refusals_and_preemption():
    """
    A goal out of reach is refused (aborted, the reason).

    A newer goal preempts the one running (end-effector mode); a mode without pose goals and a
    controller that has not commanded yet refuse them.
    """
    from spart_ros.control import Controller, ControllerSettings
    from spart_ros.core.fast.mimic import fast_dynamics

    robot, _ = robot_from_urdf(KUKA)
    outcome = {}

    def far(controller, plant, t):
        R, p = _start_pose(plant.robot, KUKA_Q0, *plant.base_link_state()[0:2])
        goal = PoseGoal.create(R, p + [2.0, 0.0, 0.0], 1.0)
        with pytest.raises(InputError, match='cannot be followed'):
            controller.submit_pose(goal, t)
        outcome['far'] = goal

    run = simulate(
        KUKA,
        {'ee_link': EE, 'ee_offset': POINT},
        duration=0.2,
        plant='rk4',
        events=[(0.05, far)],
        initial=InitialState(dict(zip(KUKA_NAMES, KUKA_Q0))),
    )
    assert (
        outcome['far'].status == 'aborted' and 'inverse kinematics stops' in outcome['far'].message
    )
    assert run.states[-1] == 'holding'
    c = Controller(notify=lambda *a: None)
    c.configure(ControllerSettings(), robot, fast_dynamics(robot, joint_dynamics=True))
    c.activate()
    goal = PoseGoal.create(np.eye(3), [0.5, 0.0, 0.5], 1.0)
    with pytest.raises(InputError, match='has not commanded'):
        c.submit_pose(goal, 0.0)
    assert goal.status == 'aborted'
    g = Controller(notify=lambda *a: None)
    g.configure(
        ControllerSettings(mode='gravity_compensation'),
        robot,
        fast_dynamics(robot, joint_dynamics=True),
    )
    g.activate()
    with pytest.raises(InputError, match='takes no end-effector pose goal'):
        g.submit_pose(PoseGoal.create(np.eye(3), [0.5, 0.0, 0.5], 1.0), 0.0)

    def two(controller, plant, t):
        R, p = _start_pose(plant.robot, KUKA_Q0, *plant.base_link_state()[0:2])
        outcome['first'] = controller.submit_pose(PoseGoal.create(R, p + [0.05, 0.0, 0.0], 1.0), t)

    def second(controller, plant, t):  # noqa: E306
        outcome['second'] = controller.submit_pose(
            PoseGoal.create(*outcome['first'].target(), 0.5), t
        )

    simulate(
        KUKA,
        {'mode': 'cartesian_impedance', 'ee_link': EE, 'ee_offset': POINT},
        duration=1.2,
        plant='rk4',
        initial=InitialState(dict(zip(KUKA_NAMES, KUKA_Q0))),
        joint_dynamics={'*': {'armature': 0.1}},
        events=[(0.05, two), (0.3, second)],
    )
    assert outcome['first'].status == 'preempted' and outcome['second'].status == 'succeeded'


def test_floating_base_follows_a_straight_line():
    """
    resolved_rate on the 7-joint arm of a 200 kg free-floating spacecraft (zero gravity).

    A pose goal 9 cm away in 2 s: the end effector within 1 mm of the line at every tick (measured
    a micrometre), at the target at the end, while the base turns (its reaction).
    """
    urdf = (
        open(urdf_path('arm7_floating'))
        .read()
        .replace(
            '<mass value="5"/>\n      <inertia ixx="0.0260417" ixy="0" ixz="0" iyy="0.0260417" '
            'iyz="0" izz="0.0333333"/>',
            '<mass value="200"/>\n      <inertia ixx="20" ixy="0" ixz="0" iyy="24" iyz="0" '
            'izz="28"/>',
        )
    )
    q0 = [0.3, 0.6, -0.2, -1.2, 0.4, 0.8, 0.1]
    names = [f'arm_joint_{k}' for k in range(1, 8)]
    held = {}

    def send(controller, plant, t):
        robot = plant.robot
        R, p = _start_pose(
            robot, q0, *plant.base_link_state()[0:2], link='arm_tool', point=(0.0, 0.0, 0.0)
        )
        held['start'] = (R, p)
        held['goal'] = controller.submit_pose(PoseGoal.create(R, p + [0.0, 0.08, -0.04], 2.0), t)

    run = simulate(
        urdf,
        {'mode': 'resolved_rate', 'ee_link': 'arm_tool'},
        duration=2.5,
        base='floating',
        gravity=[0.0, 0.0, 0.0],
        initial=InitialState(dict(zip(names, q0))),
        events=[(0.05, send)],
    )
    goal, p_s = held['goal'], held['start'][1]
    R, p = run.ee_poses('arm_tool')
    off, reached = _off_line(p, p_s, goal.position)
    turned = np.degrees(
        np.arccos(
            np.clip((np.trace(run.base_rotation[0].T @ run.base_rotation[-1]) - 1) / 2, -1, 1)
        )
    )
    print(
        f'\nresolved_rate (free-floating base): the end effector at most {off * 1e3:.4f} mm off '
        f'the line, {reached:.5f} of the way; the base turned {turned:.3f} deg; goal {goal.status}'
    )
    assert off < LINE_TOLERANCE and off < 1e-4
    assert abs(reached - 1.0) < 1e-4 and goal.status == 'succeeded'
    assert np.linalg.norm(rotation_vector(goal.rotation @ R[-1].T)) < 1e-4
    assert turned > 0.2
