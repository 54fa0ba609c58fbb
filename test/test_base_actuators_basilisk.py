"""
The plants' reaction wheels and thrusters against Basilisk (bsk 2.12.1, test/basilisk_oracle.py).

A rigid spacecraft (a 120 kg bus with its CoM off the base link origin and a full inertia tensor)
with three balanced reaction wheels (one skewed, each off the CoM, spinning) and two thrusters,
no gravity, 20 s at dt = 10 ms: the motor torques change every second, the thrusters fire three
pulses.  Both plants (MuJoCo's RK4, the core's RK4 plant) against Basilisk's spacecraft hub with
its reaction wheel state effector (``BalancedWheels``) and RK4 at the same step:

- the thrust applied as a force fixed in the body over each step (Basilisk's ``extForceTorque``):
  attitude, angular velocity, wheel speeds and the base position agree to 1e-9 relative (measured:
  1e-13); the total angular momentum about the CoM is constant between pulses to 1e-12 in both;
- the same pulses as on-time commands of Basilisk's ``thrusterDynamicEffector``: that effector
  switches a pulse off at the first integration STAGE whose time reaches the on time, so a pulse
  can last up to one RK4 stage longer (at most F dt/6 of impulse more: measured 0.20333 N s for a
  0.2 N s pulse, dt = 10 ms); the plants' pulses are whole steps.  Checked: each pulse's impulse
  differs from the plants' by at most F dt/6 per thruster, and the states agree to 1e-2.

Basilisk 2.12.1's balanced wheels add no mass properties: its hub is the bus with the rotors lumped
in (mass, CoM, J_s a a' + J_t (I - a a') each); the plants have the rotors as joints (the motor
torque on the rotor, its reaction on the base).
"""

import warnings

import basilisk_oracle
import numpy as np
import pytest
from spart_ros.core.actuators import add_wheels, BaseActuators
from spart_ros.core.attitude import quaternion_to_ros
from spart_ros.core.urdf import robot_from_urdf
from spart_ros.sim.plant import InitialState, MujocoPlant
from spart_ros.sim.rigid_body import RigidBodyPlant

URDF = """<robot name="rigid_bus"><link name="bus"><inertial>
<origin xyz="0.02 -0.01 0.03" rpy="0.1 -0.2 0.3"/><mass value="120"/>
<inertia ixx="14" ixy="0.3" ixz="-0.2" iyy="16" iyz="0.1" izz="11"/></inertial></link></robot>"""
WHEELS = [
    {
        'name': name,
        'axis': axis,
        'rotor_inertia': js,
        'transverse_inertia': jt,
        'mass': mass,
        'position': position,
        'max_torque': 1.0,
        'max_speed': 1e9,
        'initial_speed': speed,
    }
    for name, axis, js, jt, mass, position, speed in (
        ('rw1', [1, 0, 0], 0.05, 0.03, 1.5, [0.2, 0.1, -0.1], 40.0),
        ('rw2', [0, 1, 0], 0.04, 0.025, 1.2, [-0.1, 0.25, 0.0], -25.0),
        ('rw3', [0.6, 0, 0.8], 0.06, 0.035, 1.8, [0.0, -0.2, 0.15], 10.0),
    )
]
THRUSTERS = [
    {'name': 't1', 'position': [-0.5, 0.3, 0.1], 'direction': [1, 0, 0], 'max_force': 2.0},
    {'name': 't2', 'position': [0.1, -0.5, -0.2], 'direction': [0, 0.6, 0.8], 'max_force': 1.0},
]
DT, STEPS = 0.01, 2000
PULSES = {100: [0.3, 0.0], 400: [0.0, 0.5], 900: [0.2, 0.2]}  # step -> on time per thruster
SIGMA0, W0, V0 = [0.1, -0.05, 0.2], [0.02, -0.01, 0.03], [0.1, -0.05, 0.02]


def _skew(r):
    return np.array([[0, -r[2], r[1]], [r[2], 0, -r[0]], [-r[1], r[0], 0]])


def _dcm_bn(s):
    """[BN] (N -> B) of the MRP s."""
    s = np.asarray(s, dtype=float)
    S = _skew(s)
    return np.eye(3) + (8 * S @ S - 4 * (1 - s @ s) * S) / (1 + s @ s) ** 2


def _inputs():
    rng = np.random.default_rng(3)
    torques = np.repeat(rng.uniform(-0.05, 0.05, size=(STEPS // 100, 3)), 100, axis=0)
    forces = np.zeros((STEPS, 2))
    for k, on in PULSES.items():
        for j, tau in enumerate(on):
            forces[k : k + int(round(tau / DT)), j] = THRUSTERS[j]['max_force']
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        bus, _ = robot_from_urdf(URDF)
    T = np.asarray(bus.base_link.T, dtype=float)
    m_bus, I_c = float(bus.base_link.mass), np.asarray(bus.base_link.inertia, dtype=float)
    mass = m_bus + sum(w['mass'] for w in WHEELS)
    com = (m_bus * T[:3, 3] + sum(w['mass'] * np.array(w['position']) for w in WHEELS)) / mass
    d = T[:3, 3] - com
    inertia = T[:3, :3] @ I_c @ T[:3, :3].T + m_bus * _skew(d) @ _skew(d).T
    for w in WHEELS:
        a = np.array(w['axis'], dtype=float) / np.linalg.norm(w['axis'])
        d = np.array(w['position']) - com
        inertia += (
            w['rotor_inertia'] * np.outer(a, a)
            + w['transverse_inertia'] * (np.eye(3) - np.outer(a, a))
            + w['mass'] * _skew(d) @ _skew(d).T
        )
    R_b0 = _dcm_bn(SIGMA0).T
    common = {
        'dt': DT,
        'steps': STEPS,
        'mass': mass,
        'com': com.tolist(),
        'inertia': inertia.tolist(),
        'sigma0': SIGMA0,
        'omega0': W0,
        'r0': (R_b0 @ com).tolist(),
        'v0': (np.array(V0) + np.cross(R_b0 @ np.array(W0), R_b0 @ com)).tolist(),
        'wheels': [
            {
                'axis': w['axis'],
                'Js': w['rotor_inertia'],
                'Jt': w['transverse_inertia'],
                'mass': w['mass'],
                'position': w['position'],
                'speed': w['initial_speed'],
            }
            for w in WHEELS
        ],  # fmt: skip
        'torques': torques.tolist(),
        'thrusters': [
            {'position': t['position'], 'direction': t['direction'], 'max_force': t['max_force']}
            for t in THRUSTERS
        ],
    }
    runs = [
        dict(common, forces=forces.tolist()),
        dict(common, on_times={str(k): v for k, v in PULSES.items()}),
    ]
    return runs, torques, forces, R_b0


@pytest.fixture(scope='module')
def basilisk():
    basilisk_oracle.require()
    runs, torques, forces, R_b0 = _inputs()
    out = basilisk_oracle.run('wheels_thrusters.py', {'runs': runs})
    return out, torques, forces, R_b0


def _run(plant, torques, forces):
    a = plant.actuation
    rows = {'R': [], 'w': [], 'p': [], 'v': [], 'speeds': []}
    for k in range(STEPS + 1):
        R_b, p_b, v_b, w_b = plant.base_link_state()
        rows['R'].append(R_b)
        rows['v'].append(R_b @ v_b)
        rows['w'].append(w_b)
        rows['p'].append(p_b)
        rows['speeds'].append(plant.joint_velocities()[a.wheel_index])
        if k < STEPS:
            a.set_wheel_torques(torques[k])
            a.set_thruster_commands(forces[k])
            plant.step(1)
    return {k: np.array(v) for k, v in rows.items()}


def _plants(R_b0):
    actuators = BaseActuators.from_dict(
        {'reaction_wheels': {'wheels': WHEELS}, 'thrusters': {'thrusters': THRUSTERS}}
    )
    initial = InitialState(
        base_orientation=tuple(quaternion_to_ros(R_b0)),
        base_angular_velocity=tuple(W0),
        base_linear_velocity=tuple(R_b0.T @ np.array(V0)),
    )
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        robot, _ = robot_from_urdf(add_wheels(URDF, actuators))
    common = {'base': 'floating', 'gravity': (0.0, 0.0, 0.0), 'dt': DT, 'initial': initial}
    return {
        'rk4': RigidBodyPlant(robot, actuators=actuators, **common),
        'mujoco': MujocoPlant.from_urdf(URDF, actuators=actuators, **common),
    }


def _relative(a, b):
    return float(np.abs(a - b).max() / np.abs(b).max())


def test_wheels_and_body_fixed_thrust_agree_with_basilisk(basilisk):
    out, torques, forces, R_b0 = basilisk
    R_bsk = np.array([_dcm_bn(s).T for s in out['0_sigma']])
    for name, plant in _plants(R_b0).items():
        run = _run(plant, torques, forces)
        errors = {
            'attitude': float(np.abs(run['R'] - R_bsk).max()),
            'angular velocity': _relative(run['w'], out['0_omega']),
            'wheel speeds': _relative(run['speeds'], out['0_speeds']),
            'position': _relative(run['p'], out['0_r']),
        }
        assert max(errors.values()) < 1e-9, (name, errors)
    # Basilisk's own momentum about the CoM: constant between pulses (the wheels are internal)
    H = out['0_H']
    quiet = slice(200, 400)  # no pulse between steps 130 and 400
    assert np.abs(H[quiet] - H[quiet.start]).max() < 1e-12 * np.abs(H).max()


def test_thruster_pulses_against_basilisks_thruster_effector(basilisk):
    out, torques, forces, R_b0 = basilisk
    mass = sum(w['mass'] for w in WHEELS) + 120.0
    ours = _run(_plants(R_b0)['rk4'], torques, forces)
    # the plants' pulses are whole steps; Basilisk's last up to one RK4 stage longer: the
    # difference of each pulse's impulse (from B's velocity change over it) is at most F dt / 6
    extra = max(t['max_force'] for t in THRUSTERS) * DT / 6
    measured = []
    for k, on in PULSES.items():
        end = k + int(round(max(on) / DT)) + 2
        gap = mass * np.linalg.norm(
            (out['1_v'][end] - out['1_v'][k]) - (ours['v'][end] - ours['v'][k])
        )
        measured.append(gap)
        assert gap <= 2 * extra * 1.01, (k, gap, extra)
    assert max(measured) > 0.0  # the difference is there (else the effector changed)
    R_bsk = np.array([_dcm_bn(s).T for s in out['1_sigma']])
    assert np.abs(ours['R'] - R_bsk).max() < 1e-2
    assert _relative(ours['w'], out['1_omega']) < 1e-2
    assert _relative(ours['speeds'], out['1_speeds']) < 1e-4
