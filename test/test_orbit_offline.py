"""
The offline closed loop (``simulate``, ``python -m spart_ros.simulate``) on an orbit, no ROS.

The controller moves SC_3DoF's arm on a free-floating base near the orbit's reference point: the
system's CoM follows the Clohessy-Wiltshire free drift from its start (the internal forces
cancel; the linear tidal forces add up to the one on the total mass at the CoM) on both plants;
the recorded base state is in LVLH; the command line takes the orbit and refuses what cannot be.
"""

import numpy as np
import pytest
from spart_ros.core.base_state import base_from_link_frame
from spart_ros.core.fast.mimic import fast_dynamics
from spart_ros.core.orbit import CircularOrbit, clohessy_wiltshire
from spart_ros.sim.closed_loop import demo
from spart_ros.sim.plant import InitialState

ORBIT = CircularOrbit.make(altitude=400e3)


@pytest.mark.parametrize('plant', ('mujoco', 'rk4'))
def test_the_system_com_follows_cw_while_the_arm_moves(plant):
    n = ORBIT.mean_motion
    initial = InitialState(
        base_position=(20.0, -5.0, 3.0), base_linear_velocity=(0.01, -2 * n * 20.0, 0.0)
    )
    run = demo('SC_3DoF', plant=plant, dt=0.01, duration=5.0, orbit=ORBIT, initial=initial)
    assert run.states[-1] == 'holding' and np.max(run.rms(1.0)) < 0.01
    assert np.allclose(run.base_position[0], [20.0, -5.0, 3.0], atol=1e-12)  # LVLH, as given
    fast = fast_dynamics(run.robot)
    p, v = [], []
    for k in range(len(run.t)):
        R0, r0, u0 = base_from_link_frame(
            run.robot,
            run.base_rotation[k],
            run.base_position[k],
            run.base_twist[k, 0:3],
            run.base_twist[k, 3:6],
        )
        com = fast.twists(R0, r0, run.q[k], u0, run.qd[k])[2]
        p.append(com[0:3].copy())
        v.append(com[3:6].copy())
    p = np.array(p)
    cw, _ = clohessy_wiltshire(n, p[0], v[0], run.t - run.t[0])
    assert np.max(np.abs(p - cw)) < 1e-8 * np.max(np.abs(cw))
    # the arm moved the base: the base link's own path is not the CoM's free drift
    assert np.max(np.abs(run.base_position - cw)) > 1e-3


def test_the_command_line_takes_an_orbit(capsys):
    from spart_ros.simulate import main

    code = main(
        ['--demo', 'SC_3DoF', '--plant', 'rk4', '--duration', '1', '--orbit-altitude', '400e3']
    )
    out = capsys.readouterr().out
    assert code == 0, out
    assert 'orbit: circular orbit of radius 6.77814e+06 m (altitude 400000 m)' in out
    assert 'in LVLH' in out
    assert main(['--demo', 'kuka_iiwa', '--duration', '0.1', '--orbit-altitude', '4e5']) == 2
    assert 'floating base' in capsys.readouterr().err
    assert main(['--demo', 'SC_3DoF', '--orbit-altitude', '-1']) == 2
    assert 'orbit altitude' in capsys.readouterr().err
    assert main(['--demo', 'SC_3DoF', '--orbit-altitude', '1', '--orbit-mean-motion', '1']) == 2
    assert 'not both' in capsys.readouterr().err


def test_the_model_report_gives_the_orbit_and_the_robot_as_one_rigid_body(capsys):
    """Principal moments against MuJoCo's angular momentum about the CoM (L = I w)."""
    import re

    from core_helpers import urdf_path
    from spart_ros.inspect import main
    from spart_ros.sim.plant import MujocoPlant

    path = urdf_path('SC_3DoF')
    assert main([path, '--orbit-altitude', '400e3']) == 0
    out = capsys.readouterr().out
    assert 'orbit: circular orbit of radius 6.77814e+06 m (altitude 400000 m)' in out
    found = re.search(r'principal moments about its centre of mass \(([^)]*)\) kg m\^2', out)
    moments = np.array([float(x) for x in found.group(1).split(',')])
    columns = []
    for axis in np.eye(3):
        plant = MujocoPlant.from_urdf(
            path, base='floating', gravity=(0, 0, 0), initial=InitialState(
                base_angular_velocity=tuple(axis))
        )  # fmt: skip
        columns.append(plant.momentum().angular_com)
    inertia = np.array(columns).T
    assert np.allclose(moments, np.linalg.eigvalsh(inertia), rtol=1e-5)  # 6 digits printed
    n = ORBIT.mean_motion
    torque = float(re.search(r'at most 3/2 n\^2 \(I3 - I1\) = (\S+) N m', out).group(1))
    assert torque == pytest.approx(1.5 * n * n * (moments[2] - moments[0]), rel=1e-5)
    period = float(re.search(r'small pitch libration .*: period (\S+) s', out).group(1))
    expected = 2 * np.pi / (n * np.sqrt(3 * (moments[1] - moments[0]) / moments[2]))
    assert period == pytest.approx(expected, rel=1e-5)
    assert main([path, '--orbit-altitude', '-5']) == 2
    assert 'orbit altitude' in capsys.readouterr().out
