r"""
The runs that show a plant without an orbit unchanged by the orbit option (to rounding).

:func:`run` simulates SC_3DoF (floating base, zero gravity, a random start, efforts that change
every step) on the MuJoCo plant and on the RK4 plant and returns every readout at every step.
``test/data/orbit_off_reference.npz`` holds the same runs made with the code before the orbit
option (commit fce8fd6 of main); test_orbit_plants.py compares the current code's runs with it
to a tolerance that rounding explains (another CPU's last bits differ), and the runs with an orbit
(``run(kind, orbit)``) to show that the tolerance sees one.  Regenerate (only for a change meant
to alter the plants without an orbit) with::

    PYTHONPATH=<a checkout of the code to take as the reference> \\
        python test/orbit_off_reference.py test/data/orbit_off_reference.npz
"""

import os
import sys
import warnings

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
URDF = os.path.join(ROOT, 'urdf', 'SC_3DoF.urdf')
STEPS = 100


def run(kind, orbit=None):
    """Return {name: array} of the run on plant ``kind`` ('mujoco' or 'rk4'), ``orbit`` or none."""
    from spart_ros.core.urdf import robot_from_urdf
    from spart_ros.sim.plant import InitialState, MujocoPlant
    from spart_ros.sim.rigid_body import RigidBodyPlant

    rng = np.random.default_rng(27)
    q = rng.uniform(-1, 1, 3)
    quat = rng.normal(size=4)
    initial = InitialState(
        joint_positions={'Joint_1': q[0], 'Joint_2': q[1], 'Joint_3': q[2]},
        joint_velocities={'Joint_1': 0.3, 'Joint_2': -0.2, 'Joint_3': 0.1},
        base_position=(0.1, -0.2, 0.3),
        base_orientation=tuple(quat / np.linalg.norm(quat)),
        base_linear_velocity=(0.01, 0.02, -0.03),
        base_angular_velocity=(0.05, -0.04, 0.03),
    )
    zero = (0.0, 0.0, 0.0)
    if kind == 'mujoco':
        plant = MujocoPlant.from_urdf(
            URDF, base='floating', gravity=zero, initial=initial, orbit=orbit
        )
    else:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            robot, _ = robot_from_urdf(URDF)
        plant = RigidBodyPlant(robot, base='floating', gravity=zero, initial=initial, orbit=orbit)
    out = {k: [] for k in ('q', 'qd', 'R', 'p', 'v', 'w', 'odom', 'extra')}
    for k in range(STEPS):
        plant.set_efforts(np.sin(0.01 * k + np.arange(plant.n_joints)))
        plant.step(1)
        R, p, v, w = plant.base_link_state()
        o = plant.odometry()
        out['q'].append(plant.joint_positions())
        out['qd'].append(plant.joint_velocities())
        for name, value in (('R', R), ('p', p), ('v', v), ('w', w)):
            out[name].append(value)
        out['odom'].append(np.concatenate([o.position, o.orientation, o.linear, o.angular]))
        if kind == 'mujoco':
            imu = plant.imu()
            m = plant.momentum()
            out['extra'].append(
                np.concatenate(
                    [
                        imu.orientation,
                        imu.angular_velocity,
                        imu.linear_acceleration,
                        m.linear,
                        m.angular_com,
                        plant.joint_accelerations(),
                    ]
                )
            )
        else:
            out['extra'].append(np.concatenate([plant.momentum(), plant.joint_accelerations()]))
    return {f'{kind}_{k}': np.array(v) for k, v in out.items()}


if __name__ == '__main__':
    data = {**run('mujoco'), **run('rk4')}
    np.savez_compressed(sys.argv[1], **data)
    print(f'wrote {sys.argv[1]}: {sorted(data)}')
