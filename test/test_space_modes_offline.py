"""
The space-robot modes' laws in closed loop, offline.

spart_ros.sim.closed_loop.simulate: the controller of spart_controller on the MuJoCo plant, no ROS;
test_closed_loop.py shows this loop equals the nodes' lockstep loop), on the 7-joint arm of a 200
kg free-floating spacecraft (its 5 kg base made heavier: test_controller_space_modes.py says why),
zero gravity, effort interface, a command every 2 ms on a 1 ms physics step (as the lockstep runs
over ROS did. (These ran over ROS in lockstep or real time before; what proves the nodes stays
there.)

- reactionless: an end-effector line (twist 4.5 cm/s for 2 s, position task) followed within
  0.5 mm at every tick, at the twist's speed, while the base attitude stays within 0.02 deg (the
  7-joint arm's 4-dimensional attitude null space);
- desired_reaction: a base attitude target 1 deg away while the end effector holds its pose:
  the attitude error falls as exp(-t) would (25-50 % of the step after 1 s, < 20 % after 2 s,
  < 3 % after 4.5 s), the end effector stays within 1 mm;
- resolved_rate_min_base_energy against resolved_rate: the same 4.5 cm pose target, both reach
  it to 5 mm; the base kinetic energy integrated over 4 s is at least 3 times lower with the
  minimum-energy law, and its base turns less.
"""

from types import SimpleNamespace

from core_helpers import urdf_path
import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from spart_ros import spart
from spart_ros.control import FreeFloatingKinematics
from spart_ros.control.damped_least_squares import damped_pseudo_inverse
from spart_ros.core import base_state as bs
from spart_ros.sim import InitialState, MujocoPlant
from spart_ros.sim.closed_loop import simulate

pytestmark = pytest.mark.filterwarnings('ignore::spart_ros.core.errors.SpartWarning')

URDF = (
    open(urdf_path('arm7_floating'))
    .read()
    .replace(
        '<mass value="5"/>\n      <inertia ixx="0.0260417" ixy="0" ixz="0" iyy="0.0260417" '
        'iyz="0" izz="0.0333333"/>',
        '<mass value="200"/>\n      <inertia ixx="20" ixy="0" ixz="0" iyy="24" iyz="0" izz="28"/>',
    )
)
ROBOT = spart.urdf2robot(URDF)[0]
Q0 = [0.3, 0.6, -0.2, -1.2, 0.4, 0.8, 0.1]
Q_REACTIONLESS = [1.36, -0.88, -0.2, -1.0, -0.53, -0.51, 0.32]
EE = 'arm_tool'
V = np.array([0.0, 0.0, 0.0, 0.0, 0.04, -0.02])  # 4.5 cm/s, mostly sideways


def _plant(q0):
    return MujocoPlant.from_urdf(
        URDF,
        base='floating',
        gravity=[0.0, 0.0, 0.0],
        initial=InitialState(dict(zip(ROBOT.q_names, q0))),
    )


def _angles(R_ref, rotations):
    return np.degrees(
        np.arccos(np.clip((np.einsum('ij,kij->k', R_ref, rotations) - 1) / 2, -1, 1))
    )


def test_reactionless_follows_a_line_and_keeps_the_base_attitude():
    """The twist is given at 0.2 s, lasts 2 s (reference_timeout), then the arm stops."""
    run = simulate(
        None,
        {'mode': 'reactionless', 'ee_link': EE, 'task_rows': (3, 4, 5), 'reference_timeout': 2.0},
        duration=3.0,
        plant=_plant(Q_REACTIONLESS),
        steps_per_tick=2,
        events=[(0.2, lambda c, p, t: c.set_reference('ee_twist', (V, 'world'), t))],
    )
    R, p = run.ee_poses(EE)
    k0 = np.searchsorted(run.t, 0.2)
    d = V[3:] / np.linalg.norm(V[3:])
    rel = p - p[k0]
    along = rel @ d
    off = np.linalg.norm(rel - along[:, None] * d, axis=1)
    middle = (run.t > 0.7) & (run.t < 1.9)
    speed = np.polyfit(run.t[middle], along[middle], 1)[0]
    turned = _angles(run.base_rotation[0], run.base_rotation).max()
    moved = along[-1] / (np.linalg.norm(V[3:]) * 2.0)
    print(
        f'\nreactionless line: at most {off.max() * 1e3:.4f} mm off, {speed * 1e3:.2f} mm/s along '
        f'it (commanded {np.linalg.norm(V[3:]) * 1e3:.2f}), {moved:.3f} of the commanded length; '
        f'base turned {turned:.5f} deg'
    )
    assert off.max() < 0.0005
    assert abs(speed - np.linalg.norm(V[3:])) < 0.03 * np.linalg.norm(V[3:])
    assert 0.9 < moved < 1.1
    assert turned < 0.02
    assert np.abs(run.qd[-1]).max() < 1e-3  # the twist expired: stopped
    st = run.controller.details.command.status
    assert st.feasible, st.message


def test_desired_reaction_turns_the_base_to_its_reference():
    """
    desired_reaction turns the base by 1 deg while ~/ee_pose holds the end effector.

    About the axis the arm turns it about most easily here (the strongest direction of the base
    reaction within the end-effector position task's null space, G_w N, from the model); plain
    resolved rate would leave the base where it is.
    """
    plant = _plant(Q0)
    R_b, p_b, _, _ = plant.base_link_state()
    R0, r0, _ = bs.base_from_link_frame(ROBOT, R_b, p_b)
    ff = FreeFloatingKinematics(ROBOT, EE).update(R0, r0, np.array(Q0))
    N = damped_pseudo_inverse(ff.Jstar[3:6]).null_basis
    axis_c = np.linalg.svd(ff.reaction[0:3] @ N)[0][:, 0]  # base CoM frame
    axis = R_b @ np.asarray(ROBOT.base_link.T)[:3, :3] @ axis_c
    R_ref = Rotation.from_rotvec(np.radians(1.0) * axis).as_matrix() @ R_b

    def targets(c, p, t):
        R_ee, p_ee = c.law.end_effector_pose(SimpleNamespace(R_b=R_b, p_b=p_b), np.array(Q0))
        c.set_reference('ee_pose', (R_ee, p_ee, 'world'), t)
        c.set_reference('base_attitude', R_ref, t)
        targets.p_ee = p_ee

    run = simulate(
        None,
        {
            'mode': 'desired_reaction',
            'ee_link': EE,
            'task_rows': (3, 4, 5),
            'base_rows': (0, 1, 2),
            'attitude_gain': 1.0,
        },
        duration=5.0,
        plant=plant,
        steps_per_tick=2,
        events=[(0.0, targets)],
    )
    err = _angles(R_ref, run.base_rotation)
    _, p = run.ee_poses(EE)
    ee_off = np.linalg.norm(p - targets.p_ee, axis=1)
    at = lambda s: err[np.argmin(np.abs(run.t - s))]  # noqa: E731
    print(
        f'\ndesired_reaction: attitude error 1 deg, then {at(1.0):.3f} deg after 1 s, '
        f'{at(2.0):.3f} after 2 s, {at(4.5):.4f} after 4.5 s (exp(-t): 0.368, 0.135, 0.011); '
        f'end effector at most {ee_off.max() * 1e3:.4f} mm off'
    )
    assert err[0] > 0.999
    assert 0.25 < at(1.0) < 0.5 and at(2.0) < 0.2 and at(4.5) < 0.03, err
    assert ee_off.max() < 0.001
    st = run.controller.details.command.status
    assert st.feasible and st.base_error < 1e-6 and st.rate_scale == 1.0, st.message


def _base_energy(run):
    """
    Return the base's own kinetic energy [J] at each tick.

    1/2 (w' I_base w + m_base |v_com|^2).
    """
    I_base, m_base = np.asarray(ROBOT.base_link.inertia, dtype=float), float(ROBOT.base_link.mass)
    out = []
    for k in range(len(run.t)):
        _, _, u0 = bs.base_from_link_frame(
            ROBOT,
            run.base_rotation[k],
            run.base_position[k],
            run.base_twist[k, 0:3],
            run.base_twist[k, 3:6],
        )
        out.append(0.5 * (u0[0:3] @ I_base @ u0[0:3] + m_base * u0[3:6] @ u0[3:6]))
    return np.array(out)


def test_min_base_energy_moves_the_base_less_than_resolved_rate():
    results = {}
    for mode in ('resolved_rate', 'resolved_rate_min_base_energy'):
        plant = _plant(Q0)
        R_b, p_b, _, _ = plant.base_link_state()

        def target(c, p, t):
            R_ee, p_ee = c.law.end_effector_pose(SimpleNamespace(R_b=R_b, p_b=p_b), np.array(Q0))
            target.p = p_ee + np.array([0.0, 0.04, -0.02])
            c.set_reference('ee_pose', (R_ee, target.p, 'world'), t)

        run = simulate(
            None,
            {'mode': mode, 'ee_link': EE, 'task_rows': (3, 4, 5)},
            duration=4.0,
            plant=plant,
            steps_per_tick=2,
            events=[(0.0, target)],
        )
        _, p = run.ee_poses(EE)
        energy = _base_energy(run)
        results[mode] = (
            float(np.trapezoid(energy, run.t)),
            float(np.linalg.norm(p[-1] - target.p)),
            float(_angles(run.base_rotation[0], run.base_rotation[-1:])[0]),
        )
        st = run.controller.details.command.status
        assert st.feasible and st.rate_scale == 1.0, st.message
    print(
        '\n'
        + '\n'.join(
            f'{m}: base kinetic energy integral {e:.3g} J s, target missed by {r * 1e3:.2f} mm, '
            f'base turned {a:.3f} deg'
            for m, (e, r, a) in results.items()
        )
    )
    (e_rr, r_rr, a_rr), (e_me, r_me, a_me) = (
        results['resolved_rate'],
        results['resolved_rate_min_base_energy'],
    )
    assert r_rr < 0.005 and r_me < 0.005, results
    assert e_rr > 1e-5, 'resolved rate must move the base: the comparison would say nothing'
    assert e_me < e_rr / 3 and a_me < a_rr, results
