"""
The closed loop without ROS (spart_ros.sim.closed_loop.simulate, python -m spart_ros.simulate).

The controller of spart_controller on the MuJoCo plant and on the core's RK4 plant.

- the demo's two scenarios (config/demo_<robot>.yaml, the same trajectory) track within the
  demo's RMS bounds on both plants, and the two plants give the same run (MuJoCo's RK4 and the
  core's RK4 integrate the same equations: states equal to 1e-12); runs are deterministic;
- the RK4 plant keeps a free-floating robot's momentum and its accelerations are MuJoCo's;
- joint friction: a robot declaring Coulomb friction (and a rotor inertia) tracks as well as the
  same robot without friction on both plants (both apply the model's friction law), where leaving
  the friction uncompensated is several times worse; the damping of the KUKA's light last joint
  compensated for the discrete control period (test_joint_dissipation.py: every vendor arm);
- the command line prints the figures and refuses bad arguments (exit code 2).
(test_closed_loop.py checks that this loop equals the over-ROS lockstep loop of the nodes.)
"""

from core_helpers import urdf_path
import numpy as np
import pytest
from spart_ros.core import robot_from_urdf
from spart_ros.sim import InitialState, MujocoPlant
from spart_ros.sim.closed_loop import demo, DEMOS, simulate
from spart_ros.sim.rigid_body import RigidBodyPlant

pytestmark = pytest.mark.filterwarnings('ignore::spart_ros.core.errors.SpartWarning')

KUKA = urdf_path('kuka_iiwa')
ARMATURE = {'*': {'armature': 0.1}}  # every joint's rotor inertia (kg m^2)
FRICTION = {'*': {'armature': 0.1, 'friction': 0.5}}  # and Coulomb friction (N m)


@pytest.fixture(scope='module')
def kuka_runs():
    return {plant: demo('kuka_iiwa', plant=plant) for plant in ('mujoco', 'rk4')}


@pytest.mark.parametrize(
    'name', sorted(n for n in DEMOS if 'orbit' not in DEMOS[n])
)  # the orbital scenario: test_base_actuators.py (shortened)
def test_the_demo_offline_tracks_within_its_bounds_on_both_plants(name, kuka_runs):
    runs = (
        kuka_runs
        if name == 'kuka_iiwa'
        else {plant: demo(name, plant=plant) for plant in ('mujoco', 'rk4')}
    )
    bound = DEMOS[name]['rms_bound']
    a, b = runs['mujoco'], runs['rk4']
    for plant, run in runs.items():
        rms = run.rms(1.0)
        print(
            f'\n{name} on {plant}: tracking RMS after 1 s {np.round(rms, 7)} rad (bound {bound}); '
            f'{run.cpu_seconds:.3f} s of CPU for {run.duration:.1f} s'
        )
        assert np.all(rms < bound), rms
        assert run.goals[0].status == 'succeeded' and run.states[-1] == 'holding'
        assert np.abs(run.q[-1] - run.q[0]).max() < 1e-4  # back at the start (the last waypoint)
        offsets = np.abs(np.array([o for _, o in DEMOS[name]['waypoints']])).max(axis=0)
        assert np.all(np.abs(run.q - run.q[0]).max(axis=0) > 0.9 * offsets)  # the motion happened
    # MuJoCo's RK4 and the core's RK4 (ABA + quaternion) integrate the same equations
    assert (
        np.abs(a.q - b.q).max() < 1e-12 and np.abs(a.base_position - b.base_position).max() < 1e-12
    )
    assert np.abs(a.base_rotation - b.base_rotation).max() < 1e-12
    if runs['mujoco'].plant.floating:
        turned = np.degrees(
            np.arccos(
                np.clip(
                    (np.trace(a.base_rotation[0].T @ a.base_rotation, axis1=1, axis2=2) - 1) / 2,
                    -1,
                    1,
                )
            )
        ).max()
        assert turned > 2.0, turned  # the free-floating base reacted to its arm


def test_runs_are_deterministic(kuka_runs):
    again = demo('kuka_iiwa', plant='mujoco')
    first = kuka_runs['mujoco']
    assert np.array_equal(first.q, again.q) and np.array_equal(
        first.commands, again.commands, equal_nan=True
    )


def test_rk4_plant_keeps_momentum_and_equals_mujoco():
    """
    SC_3DoF free-floating, zero gravity, a tumbling base and random joint efforts.

    The core's RK4 plant keeps the momentum (about the world origin) to 1e-10 over 2 s; its joint
    and base readouts equal MuJoCo's plant stepped alike to 1e-10.
    """
    init = InitialState(
        {'Joint_1': 0.3, 'Joint_2': -0.5},
        {'Joint_1': 0.2, 'Joint_3': -0.3},
        base_position=(0.1, -0.2, 0.3),
        base_orientation=(0.1, 0.2, -0.1, 0.97),
        base_linear_velocity=(0.02, 0.01, -0.03),
        base_angular_velocity=(0.05, -0.04, 0.03),
    )
    robot, _ = robot_from_urdf(urdf_path('SC_3DoF'))
    core = RigidBodyPlant(robot, 'floating', gravity=np.zeros(3), initial=init)
    mj = MujocoPlant.from_urdf(urdf_path('SC_3DoF'), 'floating', gravity=np.zeros(3), initial=init)
    mj.hold(False)
    h0 = core.momentum()
    rng = np.random.default_rng(3)
    drift = 0.0
    for k in range(200):
        tau = rng.normal(size=3)
        core.set_efforts(tau)
        mj.set_efforts(tau)
        core.step(10)
        mj.step(10)
        drift = max(drift, np.abs(core.momentum() - h0).max())
    assert np.abs(h0).max() > 1.0 and drift < 1e-10, (h0, drift)
    for a, b in zip(core.base_link_state(), mj.base_link_state()):
        assert np.abs(a - b).max() < 1e-10
    assert np.abs(core.joint_positions() - mj.joint_positions()).max() < 1e-10
    assert np.abs(core.joint_velocities() - mj.joint_velocities()).max() < 1e-10


def test_friction_declaring_robot_tracks_as_well_as_without():
    """
    The demo's KUKA iiwa trajectory with a rotor inertia of 0.1 kg m^2 on every joint.

    With and without a Coulomb friction of 0.5 N m (the controller's model declares both: it
    compensates).

    - on both plants (the model's own friction law, F tanh(qd / v)): tracking within 10 % of the
      arm without friction (measured 2.2e-6 with, 1.3e-5 without, on each);
    - on MuJoCo, at least 3 times better than a controller whose model leaves the joint dynamics
      out (joint_dynamics False: neither the friction nor the rotor inertia; measured 7.1e-3).
    """
    rms = {}
    for plant in ('rk4', 'mujoco'):
        for label, overrides, compensate in (
            ('without', ARMATURE, True),
            ('with', FRICTION, True),
            ('uncompensated', FRICTION, False),
        ):
            if plant == 'rk4' and label == 'uncompensated':
                continue
            # joint_dynamics False: a model without friction (and without the rotor inertia, which
            # the plant has): the rigid-body controller of a user who ignores the URDF's <dynamics>
            run = demo(
                'kuka_iiwa',
                plant=plant,
                joint_dynamics=overrides,
                settings={'joint_dynamics': compensate},
            )
            rms[plant, label] = run.rms(1.0).max()
    print('\n' + ', '.join(f'{p} {label}: {r:.2e}' for (p, label), r in rms.items()))
    assert rms['rk4', 'with'] < 1.1 * rms['rk4', 'without'], rms
    assert rms['mujoco', 'with'] < 1.1 * rms['mujoco', 'without'], rms
    assert rms['mujoco', 'with'] < DEMOS['kuka_iiwa']['rms_bound']
    assert rms['mujoco', 'uncompensated'] > 3 * rms['mujoco', 'with'], rms


def test_damping_of_a_light_joint_compensated_for_the_period():
    """
    KUKA iiwa's URDF damping.

    0.5 N m s/rad) on its 1e-3 kg m^2 last joint, compensated by the controller for the discrete
    control period (control.friction_compensation): tracking within 20 % of the arm without
    damping (measured 2.03e-5 without, 2.02e-5 with; at the period's middle it was 4.0e-5, at the
    measured velocity alone 6.0e-4).
    """
    damped = demo('kuka_iiwa', plant='rk4').rms(1.0).max()
    rigid = demo('kuka_iiwa', plant='rk4', joint_dynamics={'*': {'damping': 0.0}}).rms(1.0).max()
    print(
        f'\nKUKA iiwa, RMS after 1 s: without damping {rigid:.2e} rad, URDF damping '
        f'compensated {damped:.2e} rad'
    )
    assert damped < 1.2 * rigid, (damped, rigid)


def test_simulate_arguments_are_checked():
    from spart_ros.core.errors import InputError

    with pytest.raises(InputError, match='plant'):
        simulate(KUKA, duration=0.01, plant='gazebo')
    with pytest.raises(InputError, match='unknown controller settings'):
        simulate(KUKA, {'gain': 3.0}, duration=0.01)
    with pytest.raises(InputError, match='floating'):
        simulate(KUKA, {'mode': 'floating_base'}, duration=0.01)
    with pytest.raises(InputError, match='steps_per_tick'):
        simulate(KUKA, duration=0.01, steps_per_tick=0)


def test_command_line(capsys, tmp_path):
    from spart_ros.simulate import main

    assert (
        main(
            [
                '--demo',
                'kuka_iiwa',
                '--duration',
                '2.0',
                '--plant',
                'rk4',
                '--output',
                str(tmp_path),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert 'lbr_iiwa_joint_7' in out and 'of CPU per simulated second' in out and 'within' in out
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        'kuka_iiwa_base.png',
        'kuka_iiwa_efforts.png',
        'kuka_iiwa_tracking.png',
    ]
    assert main([KUKA, '--set', 'mode=joint_space', '--duration', '0.1']) == 2
    assert 'mode must be one of' in capsys.readouterr().err


def test_command_line_says_a_mode_without_reference_has_no_tracking_error(capsys):
    """gravity_compensation holds no reference: no error of 0 against the hold it ignores."""
    import warnings

    from spart_ros.simulate import main

    with warnings.catch_warnings():
        warnings.simplefilter('error', RuntimeWarning)  # no "Mean of empty slice" either
        assert main([KUKA, '--set', 'mode=gravity_compensation', '--duration', '1.2']) == 0
    out = capsys.readouterr().out
    assert 'tracking error after' not in out and 'RMS' not in out, out
    assert 'no tracking error: mode gravity_compensation follows no reference' in out, out
    run = simulate(KUKA, {'mode': 'gravity_compensation'}, duration=0.05)
    assert np.isnan(run.q_ref).all() and np.isnan(run.rms()).all()
    assert run.controller.feedback() is None  # as its docstring says, for a mode without one
    assert main([KUKA, '--duration', '0.3']) == 0
    assert 'no tick after 1 s (--rms-after): no tracking error' in capsys.readouterr().out
    assert main(['--demo', 'nope']) == 2


@pytest.mark.parametrize('plant', ['mujoco', 'rk4'])
def test_without_recording_the_run_keeps_its_last_state(plant):
    """``record=False`` keeps the last tick's row: the same as the recorded run's last row."""
    kw = {'duration': 0.05, 'plant': plant, 'trajectory': [(0.05, [0.3] * 7)]}
    full = simulate(KUKA, **kw)
    last = simulate(KUKA, record=False, **kw)
    assert len(last.t) == 1 and len(last.states) == 1
    for key in ('t', 'q', 'qd', 'q_ref', 'qd_ref', 'commands', 'base_position', 'base_twist'):
        np.testing.assert_array_equal(getattr(last, key)[0], getattr(full, key)[-1], err_msg=key)
    assert last.states[-1] == full.states[-1] and last.q[0].any()
