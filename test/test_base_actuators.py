"""
The base's reaction wheels and thrusters: declaration, plants, allocation, control (no ROS).

- the YAML declaration: errors name the actuator and the field; the wheels as URDF joints and
  locked into the base;
- both plants: base + wheels + arm, no thruster, zero gravity: the total angular momentum is
  constant to 1e-9 while wheel torques and arm efforts change; the wheel torque and speed limits
  are honoured (and counted); a thruster's minimum impulse bit; propellant;
- the controller's base dynamics with the wheels spinning (``AttitudeDynamics``): the plant's
  base angular acceleration and joint accelerations equal the commanded ones to 1e-9;
- allocation: a feasible wrench is exerted to 1e-9; an infeasible one gives the wrench of scipy's
  bounded least-squares optimum (lsq_linear) and says so, naming the saturated actuators;
- closed loops: free_flying holds the base pose with thrusters and wheels while the arm follows a
  trajectory; a space mode holds the base attitude with the wheels while the arm moves.
"""

import os
import warnings

import numpy as np
import pytest
from spart_ros.control.allocation import effectiveness, WrenchAllocator
from spart_ros.control.base_actuation import AttitudeDynamics, BaseActuatorControl
from spart_ros.core import base_state as bs
from spart_ros.core.actuators import add_wheels, BaseActuators, load_actuators, lock_wheels
from spart_ros.core.errors import InputError
from spart_ros.core.fast import FastDynamics
from spart_ros.core.urdf import robot_from_urdf
from spart_ros.sim.closed_loop import simulate
from spart_ros.sim.plant import InitialState, MujocoPlant
from spart_ros.sim.rigid_body import RigidBodyPlant

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
URDF = os.path.join(ROOT, 'urdf', 'SC_3DoF.urdf')
YAML = os.path.join(ROOT, 'urdf', 'SC_3DoF.actuators.yaml')
ACT = load_actuators(YAML)
ARM = ['Joint_1', 'Joint_2', 'Joint_3']


def _robot(text):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return robot_from_urdf(text)[0]


def _plant(kind, initial=None, dt=0.001, actuators=ACT):
    common = {'base': 'floating', 'gravity': (0.0, 0.0, 0.0), 'dt': dt, 'initial': initial}
    if kind == 'mujoco':
        return MujocoPlant.from_urdf(URDF, actuators=actuators, **common)
    return RigidBodyPlant(_robot(add_wheels(URDF, actuators)), actuators=actuators, **common)


def _initial(speeds=(50.0, -30.0, 10.0, 20.0)):
    o = np.array([0.1, 0.2, 0.3, 0.9])
    names = ACT.wheel_names
    return InitialState(
        {'Joint_1': 0.3, 'Joint_2': 0.4, 'Joint_3': -0.2},
        {'Joint_1': 0.1, 'Joint_2': -0.2, 'Joint_3': 0.05, **dict(zip(names, speeds))},
        base_orientation=tuple(o / np.linalg.norm(o)),
        base_angular_velocity=(0.01, -0.02, 0.015),
        base_linear_velocity=(0.01, 0.02, 0.0),
    )


# -- the declaration --------------------------------------------------------------------------


def test_the_shipped_declaration():
    assert ACT.wheel_names == ['rw_x', 'rw_y', 'rw_z', 'rw_s']
    assert len(ACT.thrusters) == 12 and ACT.base_link == 'Spacecraft'
    M = effectiveness(ACT)
    assert np.linalg.matrix_rank(M[:, :12]) == 6  # the thrusters alone reach every wrench
    assert np.linalg.matrix_rank(M[0:3, 12:]) == 3  # the wheels every torque


@pytest.mark.parametrize(
    'change, words',
    [
        ({'axis': [0, 0, 0]}, ['rw', 'axis', 'zero']),
        ({'rotor_inertia': -1}, ['rw', 'rotor_inertia']),
        ({'max_speed': 'fast'}, ['rw', 'max_speed', 'number']),
        ({'colour': 'red'}, ['rw', 'unknown', 'colour']),
        ({'initial_speed': 700.0, 'max_speed': 600.0}, ['initial_speed', 'max_speed']),
    ],
)
def test_a_bad_wheel_is_named(change, words):
    wheel = {
        'name': 'rw',
        'axis': [1, 0, 0],
        'rotor_inertia': 0.1,
        'max_torque': 1,
        'max_speed': 600,
    }
    with pytest.raises(InputError) as err:
        BaseActuators.from_dict({'reaction_wheels': {'wheels': [dict(wheel, **change)]}})
    assert all(w in str(err.value) for w in words), str(err.value)


def test_bad_thrusters_and_files_are_named(tmp_path):
    thruster = {'name': 't', 'position': [0, 0, 0], 'direction': [1, 0, 0], 'max_force': 1.0}
    for change, words in (
        ({'max_force': 0}, ['t', 'max_force']),
        ({'throttled': 'yes'}, ['t', 'throttled']),
        ({'direction': [1, 0]}, ['t', 'direction']),
    ):
        with pytest.raises(InputError) as err:
            BaseActuators.from_dict({'thrusters': {'thrusters': [dict(thruster, **change)]}})
        assert all(w in str(err.value) for w in words), str(err.value)
    with pytest.raises(InputError, match='used twice'):
        BaseActuators.from_dict({'thrusters': {'thrusters': [thruster, thruster]}})
    bad = tmp_path / 'bad.yaml'
    bad.write_text('thrusters: [1, 2')
    with pytest.raises(InputError, match='not valid YAML'):
        load_actuators(str(bad))
    with pytest.raises(InputError, match='No such file'):
        load_actuators(str(tmp_path / 'missing.yaml'))
    with pytest.raises(InputError, match="base link 'Spacecraft'"):
        add_wheels(
            '<robot name="r"><link name="bus"><inertial><mass value="1"/><inertia ixx="1" '
            'iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link></robot>',
            ACT,
        )


def test_wheels_become_joints_and_lock_into_the_base():
    full = _robot(add_wheels(URDF, ACT))
    arm = _robot(URDF)
    locked = _robot(lock_wheels(add_wheels(URDF, ACT), ACT))
    assert list(full.coordinates.names) == ARM + ACT.wheel_names
    assert list(locked.coordinates.names) == ARM
    rotors = sum(w.mass for w in ACT.wheels)
    assert full.total_mass == pytest.approx(arm.total_mass + rotors)
    assert locked.total_mass == pytest.approx(full.total_mass)
    # a locked rotor is the same inertia as the spinning one at rest: the base block of H agrees
    q = np.array([0.3, 0.4, -0.2])
    H_full = FastDynamics(full).mass_matrix(np.eye(3), np.zeros(3), np.r_[q, 0, 0, 0, 0])
    H_lock = FastDynamics(locked).mass_matrix(np.eye(3), np.zeros(3), q)
    assert np.abs(H_full[:9, :9] - H_lock).max() < 1e-12
    # each wheel's column: its spin inertia about its axis, in the base CoM frame
    for k, w in enumerate(ACT.wheels):
        col = H_full[:3, 9 + k]
        assert np.allclose(col, w.rotor_inertia * w.axis, atol=1e-12), (w.name, col)
    assert lock_wheels(URDF, ACT) == lock_wheels(URDF, ACT)  # a URDF without the wheels: as is


# -- plants -------------------------------------------------------------------------------------


@pytest.mark.parametrize('kind', ['rk4', 'mujoco'])
def test_momentum_is_conserved_with_wheels_and_arm(kind):
    plant = _plant(kind, _initial(), dt=0.002)
    rng = np.random.default_rng(7)
    first = None
    for k in range(10):
        plant.actuation.set_wheel_torques(rng.uniform(-0.5, 0.5, 4))
        plant.set_efforts(np.r_[rng.uniform(-2, 2, 3), 0, 0, 0, 0])
        plant.step(50)
        m = plant.momentum()
        M = np.r_[m.angular_origin, m.linear] if kind == 'mujoco' else m
        first = M if first is None else first
        scale = np.abs(first).max()
        assert np.abs(M - first).max() < 1e-9 * scale, (kind, k, M - first)
    assert np.abs(plant.joint_velocities()[3:] - [50, -30, 10, 20]).max() > 1.0  # they moved


@pytest.mark.parametrize('kind', ['rk4', 'mujoco'])
def test_wheel_torque_and_speed_limits_are_honoured_and_counted(kind):
    plant = _plant(kind, _initial(speeds=(597.0, -597.0, 0.0, 0.0)), dt=0.001)
    a = plant.actuation
    a.set_wheel_torques([1.0, -1.0, 5.0, -5.0])  # the last two beyond max_torque (1 N m)
    top = 0.0
    for _ in range(300):
        plant.step(1)
        w = plant.joint_velocities()[a.wheel_index]
        top = max(top, np.abs(w).max())
        assert np.all(np.abs(a.wheel_torques) <= 1.0 + 1e-15)
    limit = ACT.wheels[0].max_speed
    # the rotor speeds relative to the base stay within the limit (the base's own turning aside:
    # the predicted speed uses the rotor's equation only)
    assert top <= limit * (1 + 1e-6), top
    assert a.speed_limited[0] > 0 and a.speed_limited[1] > 0  # x and y hit 600 rad/s
    assert a.torque_limited[2] == 300 and a.torque_limited[3] == 300
    reading = a.wheel_reading(plant.joint_positions()[a.wheel_index], w)
    assert reading.names == tuple(ACT.wheel_names) and reading.speed_limited[0] > 0


@pytest.mark.parametrize('kind', ['rk4', 'mujoco'])
def test_minimum_impulse_bit_and_propellant(kind):
    plant = _plant(kind, InitialState(), dt=0.001)
    a = plant.actuation
    cmd = np.zeros(12)
    cmd[0] = 1.0  # px_1 opens for one step only: its valve stays open min_on_time = 5 ms
    a.set_thruster_commands(cmd)
    plant.step(1)
    a.set_thruster_commands(np.zeros(12))
    plant.step(20)
    r = a.thruster_reading()
    assert r.impulse[0] == pytest.approx(ACT.thrusters[0].min_impulse, rel=1e-12)
    assert r.firings[0] == 1 and r.impulse[1:].sum() == 0 and not r.firing.any()
    assert r.propellant == pytest.approx(r.impulse.sum() / (220.0 * 9.80665))
    with pytest.raises(InputError, match='expected 12 values'):
        a.set_thruster_commands([1.0])
    with pytest.raises(InputError, match='non-finite'):
        a.set_wheel_torques([0.0, np.nan, 0.0, 0.0])


# -- the controller's base dynamics -----------------------------------------------------------


@pytest.mark.parametrize('kind', ['rk4', 'mujoco'])
def test_wheels_give_the_commanded_base_acceleration(kind):
    """Check AttitudeDynamics on the arm model (wheels locked) against the plant (spinning)."""
    plant = _plant(kind, _initial(), dt=0.001)
    locked = _robot(lock_wheels(add_wheels(URDF, ACT), ACT))
    R_b, p_b, v_b, w_b = plant.base_link_state()
    R0, r0, u0 = bs.base_from_link_frame(locked, R_b, p_b, v_b, w_b)
    q, qd = plant.joint_positions()[:3], plant.joint_velocities()[:3]
    speeds = plant.joint_velocities()[3:]
    control = BaseActuatorControl(ACT)
    control.set_speeds(speeds)
    qdd, alpha_b = np.array([0.05, -0.1, 0.08]), np.array([0.003, -0.002, 0.001])
    for thrust in (False, True):
        dyn = AttitudeDynamics(
            locked, FastDynamics(locked), R0, r0, q, u0, qd, qdd, alpha_b, w_b, control, speeds
        )
        control.reset()
        required = np.r_[dyn.torque_for(np.zeros(3), np.zeros(3)), 0.2, -0.1, 0.05]
        cmd = control.command(0.0, required, speeds, thrust=thrust, torque_for=dyn.torque_for)
        assert cmd.status.feasible, cmd.status.message
        assert cmd.thrusters.any() == thrust
        plant.set_efforts(np.r_[dyn.taum, 0, 0, 0, 0])
        plant.actuation.set_wheel_torques(cmd.wheels)
        plant.actuation.set_thruster_commands(cmd.thrusters)
        plant.actuation.before_step(plant.time, speeds)
        if kind == 'rk4':
            u0dot, udot = plant._accelerations(
                plant._quat, plant._r0, plant._q, plant._u0, plant._u
            )
            alpha = plant._R_bc @ u0dot[0:3]
            qdd_plant = udot[:3]
        else:
            plant.data.ctrl[plant.actuation._ctrl_wheels] = plant.actuation.wheel_torques
            plant.data.ctrl[plant.actuation._ctrl_thrusters] = plant.actuation.thruster_forces
            plant._fresh = False
            alpha = plant.base_acceleration()[1]
            qdd_plant = plant.joint_accelerations()[:3]
        assert np.abs(alpha - alpha_b).max() < 1e-9, (kind, thrust, alpha, alpha_b)
        assert np.abs(qdd_plant - qdd).max() < 1e-9, (kind, thrust, qdd_plant)


# -- allocation ----------------------------------------------------------------------------------


def _lsq(alloc, w, lo, hi):
    """Return the wrench of scipy's bounded least-squares optimum of the same weighted problem."""
    from scipy.optimize import lsq_linear

    A = alloc.S[:, None] * alloc.M
    res = lsq_linear(A, alloc.S * w, bounds=(lo, hi), method='bvls', tol=1e-14)
    return alloc.M @ res.x, float(np.linalg.norm(alloc.S * (alloc.M @ res.x - w)))


def test_allocation_of_feasible_wrenches_is_exact():
    alloc = WrenchAllocator(ACT)
    rng = np.random.default_rng(11)
    lo, hi = alloc.bounds()
    for _ in range(40):
        w = alloc.M @ rng.uniform(lo, hi)  # feasible by construction
        out = alloc.allocate(w)
        assert out.feasible and out.message == '' and out.saturated == []
        assert np.abs(out.achieved - w).max() < 1e-9 * max(1.0, np.abs(w).max())
        assert np.all(out.thrust >= 0) and np.all(out.thrust <= 1.0 + 1e-12)
        assert np.all(np.abs(out.wheel_torques) <= 1.0 + 1e-12)
    # thrusters only (wheels at zero torque): a pure force by pairs, no torque wasted on fuel
    out = alloc.allocate([0, 0, 0, 0.5, 0, 0], np.zeros(4), np.zeros(4))
    assert out.feasible and np.abs(out.achieved - [0, 0, 0, 0.5, 0, 0]).max() < 1e-9
    assert out.thrust.sum() == pytest.approx(0.5, rel=1e-6)  # no opposing pairs fired


def test_allocation_of_infeasible_wrenches_is_the_bounded_least_squares_optimum():
    alloc = WrenchAllocator(ACT)
    rng = np.random.default_rng(12)
    lo, hi = alloc.bounds()
    for _ in range(30):
        w = np.r_[rng.uniform(-8, 8, 3), rng.uniform(-8, 8, 3)]
        out = alloc.allocate(w)
        best, residual = _lsq(alloc, w, lo, hi)
        if residual <= 1e-9:
            continue
        assert not out.feasible and 'not feasible' in out.message
        assert out.saturated and all(n in out.message for n in out.saturated)
        assert np.abs(out.achieved - best).max() < 1e-9 * np.abs(w).max(), (out.achieved, best)
        assert np.all(out.thrust >= -1e-12) and np.all(np.abs(out.wheel_torques) <= 1 + 1e-12)


def test_wheel_speed_limit_narrows_the_allocation_and_is_reported():
    control = BaseActuatorControl(ACT, thruster_period=0.1)
    speeds = np.array([599.0, 0.0, 0.0, 0.0])  # rw_x at its limit: no more positive torque
    control.set_speeds(speeds)
    lo, hi = control.torque_bounds(speeds)
    assert hi[0] == pytest.approx(ACT.wheels[0].friction * 599.0) and lo[0] == -1.0
    # a torque the wheels alone cannot give without rw_x spinning faster: the thrusters help
    cmd = control.command(0.0, [-2.5, 0.0, 0.0, 0.0, 0.0, 0.0], speeds, thrust=False)
    assert not cmd.status.feasible and 'rw_x' in cmd.status.message
    assert 'speed limit' in cmd.status.message
    assert cmd.status.dumping  # past dump_start: momentum management asks the thrusters


def test_momentum_dumping_asks_the_thrusters_for_an_external_torque():
    control = BaseActuatorControl(ACT, thruster_period=0.1, dump_gain=0.05)
    speeds = np.array([400.0, 0.0, 0.0, 0.0])  # 67 % of the limit: dumping
    control.set_speeds(speeds)
    cmd = control.command(0.0, np.zeros(6), speeds)
    h = control.wheel_momentum(speeds)
    thrust = control.B @ control._cycle.thrust
    assert cmd.status.dumping and cmd.status.feasible
    # the cycle's thrusters exert (about) -gain h, the wheels take it back: net wrench zero
    assert np.dot(thrust[0:3], h) < 0
    assert np.abs(control._cycle.achieved).max() < 1e-9
    # the wheels' torque on the rotors slows them down
    assert cmd.wheels[0] * speeds[0] <= 0 or not cmd.thrusters.any()


# -- closed loops --------------------------------------------------------------------------------


def _attitude_change_deg(run):
    R0 = run.base_rotation[0]
    return max(
        np.degrees(np.arccos(np.clip((np.trace(R0.T @ R) - 1) / 2, -1, 1)))
        for R in run.base_rotation
    )


def test_free_flying_holds_the_base_with_thrusters_and_wheels():
    settings = {'mode': 'free_flying', 'kp': 100.0, 'kd': 20.0, 'base_gains': (0.1, 0.6, 0.5, 1.5)}
    run = simulate(
        URDF,
        settings,
        duration=3.0,
        trajectory=[(3.0, [0.15, -0.1, 0.12])],
        plant='rk4',
        base='floating',
        gravity=(0.0, 0.0, 0.0),
        actuators=YAML,
        dt=0.002,
    )
    assert 'tracking' in run.states and run.states[-1] in ('tracking', 'holding')
    assert run.actuation_feasible.mean() > 0.99
    assert _attitude_change_deg(run) < 0.01  # the wheels hold it (measured 0.0022 deg)
    assert np.abs(run.base_position - run.base_position[0]).max() < 2e-3  # the thrusters do
    assert np.abs(run.tracking_error()).max() < 1e-4
    assert run.propellant[-1] > 0 and np.abs(run.wheel_speeds[-1]).max() > 0.1


def test_space_mode_holds_the_attitude_with_the_wheels():
    """
    resolved_rate drives the end effector at 2.2 cm/s; the wheels keep the base still.

    The twist is given before the first tick: a reference step later would make the law's
    feed-forward (d/dt of the joint-rate reference, a backward difference) spike for one tick, more
    than the wheels' 1 N m (reported, and the attitude then recovers by the PD law).
    """
    initial = InitialState({'Joint_1': 0.3, 'Joint_2': 0.7, 'Joint_3': -1.2})
    settings = {
        'mode': 'resolved_rate',
        'ee_link': 'Link_3',
        'task_rows': (3, 4, 5),
        'base_gains': (1.0, 2.0, 0.5, 1.5),
        'velocity_gain': 2.0,
        'reference_timeout': 10.0,
    }

    def twist(controller, plant, t):
        controller.set_reference('ee_twist', (np.array([0, 0, 0, 0.0, 0.02, 0.01]), 'world'), t)

    runs = {
        name: simulate(
            URDF,
            settings,
            duration=2.5,
            events=[(0.0, twist)],
            plant='mujoco',
            base='floating',
            gravity=(0.0, 0.0, 0.0),
            actuators=actuators,
            dt=0.002,
            initial=initial,
        )
        for name, actuators in (('wheels', YAML), ('free', None))
    }
    held, free = runs['wheels'], runs['free']
    assert np.abs(held.q - held.q[0]).max() > 0.3  # the arm moved
    assert held.actuation_feasible[1:].all()
    assert _attitude_change_deg(held) < 1e-3, _attitude_change_deg(held)  # measured 6e-5 deg
    assert _attitude_change_deg(free) > 0.3  # without the wheels the base turns (0.62 deg)


def _base(plant):
    from types import SimpleNamespace

    R_b, p_b, v_b, w_b = plant.base_link_state()
    return SimpleNamespace(R_b=R_b, p_b=p_b, v_b=v_b, w_b=w_b)


def test_a_mode_that_does_not_drive_the_actuators_leaves_them_at_zero():
    """floating_base on a plant with wheels: the arm model has them locked, they get zeros."""
    run = simulate(
        URDF,
        {'mode': 'floating_base'},
        duration=0.2,
        trajectory=[(0.2, [0.02, 0.0, 0.0])],
        plant='rk4',
        base='floating',
        gravity=(0.0, 0.0, 0.0),
        actuators=YAML,
        dt=0.002,
    )
    assert run.command_joints == ARM and 'tracking' in run.states
    assert not run.wheel_torques.any() and not run.thruster_commands.any()
    assert not run.actuation_feasible.any() and run.propellant[-1] == 0.0


@pytest.mark.parametrize('kept', ['both', 'wheels', 'thrusters', 'none'])
def test_the_simulate_command_line_prints_its_summary_for_any_actuators(kept, tmp_path, capsys):
    """
    ``python -m spart_ros.simulate`` with wheels only, thrusters only, both, or no file (issue 34).

    Thrusters only crashed after the run (the largest wheel speed of no wheels); the summary line
    names what the robot has and gives only its figures; an orbit as in the issue's command.
    """
    import yaml
    from spart_ros.simulate import main

    doc = yaml.safe_load(open(YAML))
    if kept == 'wheels':
        doc.pop('thrusters')
    elif kept == 'thrusters':
        doc.pop('reaction_wheels')
    path = tmp_path / 'actuators.yaml'
    path.write_text(yaml.safe_dump(doc))
    argv = [URDF, '--base', 'floating', '--gravity', '0', '0', '0', '--set', 'mode=free_flying']
    argv += ['--orbit-altitude', '400e3', '--duration', '0.2', '--plant', 'rk4', '--dt', '0.002']
    argv += [] if kept == 'none' else ['--actuators', str(path)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert 'final state holding' in out, out
    lines = [line for line in out.splitlines() if 'base actuators' in line]
    if kept == 'none':
        assert not lines, out
        return
    (line,) = lines
    wheels, thrusters = kept in ('both', 'wheels'), kept in ('both', 'thrusters')
    assert f'({4 if wheels else 0} wheels, {12 if thrusters else 0} thrusters)' in line, line
    assert ('wheel speed' in line) == wheels and ('propellant' in line) == thrusters, line
    assert 'wrench exerted at' in line
