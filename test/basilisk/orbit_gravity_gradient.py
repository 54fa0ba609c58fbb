"""
Basilisk scenario: a rigid spacecraft near a target point on a circular orbit, with its GG torque.

Runs in the Basilisk venv (test/basilisk_oracle.py), imports nothing of spart_ros.  Inputs (JSON,
first argument): ``mu`` [m^3/s^2], ``radius`` a [m], ``dt`` [s] (RK4), ``duration`` [s],
``sample`` [s], and ``cases``: a list of {``mass`` [kg], ``inertia`` 3x3 about the CoM in body
axes, ``r_rel``, ``v_rel`` (3,): position and velocity relative to the target's LVLH frame at t = 0
(Hill: x radial, y along-track, z orbit normal), ``R_lb`` 3x3 body -> LVLH, ``w_rel`` (3,) angular
velocity relative to LVLH in body axes, ``gravity_gradient`` (bool)}.

The target starts at (a, 0, 0) with the circular velocity (0, sqrt(mu / a), 0): its LVLH axes are
the inertial axes at t = 0, turning at n = sqrt(mu / a^3) about z.  Both spacecraft feel the
central body's point-mass gravity (Basilisk's gravity effector: the full two-body problem); the
target is a point (1 kg, no torque), each case's spacecraft has Basilisk's gravity-gradient
effector when asked.  Output (npz, second argument), k samples, for case i: ``time`` (k,),
``r_target``, ``v_target`` (k, 3) inertial, ``r_<i>``, ``v_<i>`` (k, 3) inertial, ``dcm_BN_<i>``
(k, 3, 3) inertial -> body, ``omega_<i>`` (k, 3) inertial angular velocity in body axes.
"""

import json
import sys

from Basilisk.simulation import GravityGradientEffector, spacecraft
from Basilisk.utilities import macros, RigidBodyKinematics, simIncludeGravBody, SimulationBaseClass
import numpy as np


def main(inputs, output):
    with open(inputs, encoding='utf-8') as f:
        given = json.load(f)
    mu, a = float(given['mu']), float(given['radius'])
    n = np.sqrt(mu / a**3)
    sim = SimulationBaseClass.SimBaseClass()
    process = sim.CreateNewProcess('dynamics')
    process.addTask(sim.CreateNewTask('task', macros.sec2nano(given['dt'])))
    gravity = simIncludeGravBody.gravBodyFactory()
    earth = gravity.createEarth()
    earth.isCentralBody = True
    earth.mu = mu
    r0, v0 = np.array([a, 0.0, 0.0]), np.array([0.0, np.sqrt(mu / a), 0.0])
    omega = np.array([0.0, 0.0, n])  # LVLH's angular velocity, inertial axes
    target = spacecraft.Spacecraft()
    target.ModelTag = 'target'
    target.hub.r_CN_NInit = r0.tolist()
    target.hub.v_CN_NInit = v0.tolist()
    gravity.addBodiesTo(target)
    sim.AddModelToTask('task', target)
    sample = macros.sec2nano(given['sample'])
    recorders = [target.scStateOutMsg.recorder(sample)]
    keep = []
    for i, case in enumerate(given['cases']):
        sc = spacecraft.Spacecraft()
        sc.ModelTag = f'chaser{i}'
        sc.hub.mHub = float(case['mass'])
        sc.hub.r_BcB_B = [[0.0], [0.0], [0.0]]
        sc.hub.IHubPntBc_B = np.asarray(case['inertia'], dtype=float).tolist()
        r_rel, v_rel = np.array(case['r_rel']), np.array(case['v_rel'])
        R_lb = np.asarray(case['R_lb'], dtype=float)  # = R_NB at t = 0
        sc.hub.r_CN_NInit = (r0 + r_rel).tolist()
        sc.hub.v_CN_NInit = (v0 + v_rel + np.cross(omega, r_rel)).tolist()
        sc.hub.sigma_BNInit = [[x] for x in RigidBodyKinematics.C2MRP(R_lb.T)]
        w_inertial = np.array(case['w_rel']) + R_lb.T @ omega
        sc.hub.omega_BN_BInit = [[x] for x in w_inertial]
        gravity.addBodiesTo(sc)
        if case['gravity_gradient']:
            gg = GravityGradientEffector.GravityGradientEffector()
            gg.ModelTag = f'gg{i}'
            gg.addPlanetName(earth.planetName)
            sc.addDynamicEffector(gg)
            sim.AddModelToTask('task', gg)
            keep.append(gg)
        sim.AddModelToTask('task', sc)
        keep.append(sc)
        recorders.append(sc.scStateOutMsg.recorder(sample))
    for recorder in recorders:
        sim.AddModelToTask('task', recorder)
    sim.InitializeSimulation()
    sim.ConfigureStopTime(macros.sec2nano(given['duration']))
    sim.ExecuteSimulation()
    out = {
        'time': recorders[0].times() * 1e-9,
        'r_target': np.array(recorders[0].r_BN_N),
        'v_target': np.array(recorders[0].v_BN_N),
    }
    for i, recorder in enumerate(recorders[1:]):
        out[f'r_{i}'] = np.array(recorder.r_BN_N)
        out[f'v_{i}'] = np.array(recorder.v_BN_N)
        out[f'dcm_BN_{i}'] = np.array([RigidBodyKinematics.MRP2C(s) for s in recorder.sigma_BN])
        out[f'omega_{i}'] = np.array(recorder.omega_BN_B)
    np.savez(output, **out)


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
