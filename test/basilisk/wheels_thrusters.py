"""
Basilisk scenario: a rigid spacecraft hub with balanced reaction wheels and thrusters, no gravity.

Run by test/basilisk_oracle.py in the Basilisk venv (imports nothing of spart_ros).  Inputs (JSON:
``{"runs": [configuration, ...]}``, one Basilisk import for all; each configuration:
SI, frames: the body frame B = the base link frame b): ``dt``, ``steps``; the hub ``mass``,
``com`` (3,) (B), ``inertia`` (3, 3) about its CoM; ``sigma0`` (MRP of B in N), ``omega0`` (B),
``r0``, ``v0`` (N, of B's origin); ``wheels``: [{axis, Js, Jt, mass, position, speed}] (speed
relative to the hub [rad/s]); ``torques``: (steps, n_w) the motor torque over each step;
``thrusters``: [{position, direction, max_force}]; ``on_times``: {step: [on time (s) per
thruster]} commands given at the start of that step (thrusterDynamicEffector), or ``forces``:
(steps, n_t) the thrust over each step applied as a body-fixed force and torque (extForceTorque).
Output (npz), for run i ``<i>_<name>``: ``time``, ``sigma`` (MRP), ``omega`` (B), ``r``, ``v``
(N, of B's origin),
``speeds`` (wheel speeds), ``H`` (rotational angular momentum about the system CoM, N),
``P`` (orbital angular momentum about N's origin, N), at each step's end (steps + 1 rows, the
first the initial state).

Basilisk 2.12.1's balanced wheels add no mass properties to the spacecraft: the hub's mass, CoM
and inertia must include the rotors (the caller lumps them in).  The wheel effector and the
thrusters run before the hub integrates (a higher priority), so a command written at a step's start
acts over that step.
"""

import json
import sys

from Basilisk.architecture import messaging
from Basilisk.simulation import (
    extForceTorque,
    reactionWheelStateEffector,
    spacecraft,
    thrusterDynamicEffector,
)
from Basilisk.utilities import macros, simIncludeRW, simIncludeThruster, SimulationBaseClass
import numpy as np


def main(inputs_path, out_path):
    with open(inputs_path, encoding='utf-8') as f:
        given = json.load(f)
    out = {}
    for i, cfg in enumerate(given['runs']):
        out.update({f'{i}_{k}': v for k, v in simulate(cfg).items()})
    np.savez(out_path, **out)


def simulate(cfg):
    """Run one configuration; return its arrays."""
    dt, steps = float(cfg['dt']), int(cfg['steps'])
    sim = SimulationBaseClass.SimBaseClass()
    proc = sim.CreateNewProcess('proc')
    step_ns = macros.sec2nano(dt)
    proc.addTask(sim.CreateNewTask('task', step_ns))
    sc = spacecraft.Spacecraft()
    sc.ModelTag = 'sc'
    sc.hub.mHub = float(cfg['mass'])
    sc.hub.r_BcB_B = [[x] for x in cfg['com']]
    sc.hub.IHubPntBc_B = cfg['inertia']
    sc.hub.sigma_BNInit = [[x] for x in cfg['sigma0']]
    sc.hub.omega_BN_BInit = [[x] for x in cfg['omega0']]
    sc.hub.r_CN_NInit = [[x] for x in cfg['r0']]
    sc.hub.v_CN_NInit = [[x] for x in cfg['v0']]
    sim.AddModelToTask('task', sc, 10)
    wheels = cfg['wheels']
    if wheels:
        factory = simIncludeRW.rwFactory()
        for k, w in enumerate(wheels):
            rw = factory.create(
                'custom',
                list(w['axis']),
                Js=float(w['Js']),
                Omega=float(w['speed']) / macros.RPM,
                rWB_B=list(w['position']),
                RWModel=messaging.BalancedWheels,
                useRWfriction=False,
                useMaxTorque=False,
                label=f'rw{k}',
            )
            rw.Jt = float(w['Jt'])
            rw.mass = float(w['mass'])
        effector = reactionWheelStateEffector.ReactionWheelStateEffector()
        factory.addToSpacecraft('rws', effector, sc)
        sim.AddModelToTask('task', effector, 20)  # before the hub integrates: no lag
        torques = np.array(cfg['torques'], dtype=float).reshape(steps, len(wheels))
        payload = messaging.ArrayMotorTorqueMsgPayload()
        cmd_msg = messaging.ArrayMotorTorqueMsg().write(payload)
        effector.rwMotorCmdInMsg.subscribeTo(cmd_msg)
    thrusters = cfg.get('thrusters', [])
    thr_msg = ext = None
    if thrusters and 'on_times' in cfg:
        factory = simIncludeThruster.thrusterFactory()
        for t in thrusters:
            factory.create(
                'MOOG_Monarc_1',
                list(t['position']),
                list(t['direction']),
                MaxThrust=float(t['max_force']),
                MinOnTime=0.0,
                steadyIsp=220.0,
            )
        thr = thrusterDynamicEffector.ThrusterDynamicEffector()
        factory.addToSpacecraft('thr', thr, sc)
        sim.AddModelToTask('task', thr, 21)
        thr_msg = messaging.THRArrayOnTimeCmdMsg()
        thr.cmdsInMsg.subscribeTo(thr_msg)
        on_times = {int(k): v for k, v in cfg['on_times'].items()}
    elif thrusters:
        forces = np.array(cfg['forces'], dtype=float).reshape(steps, len(thrusters))
        P = np.array([t['position'] for t in thrusters], dtype=float)
        D = np.array([t['direction'] for t in thrusters], dtype=float)
        ext = extForceTorque.ExtForceTorque()
        ext.ModelTag = 'thrust'
        sc.addDynamicEffector(ext)
        sim.AddModelToTask('task', ext, 8)
    sim.InitializeSimulation()

    def speeds():  # the integrator's state (the effector's messages are a step old)
        if not wheels:
            return []
        state = sc.dynManager.getStateObject(effector.nameOfReactionWheelOmegasState)
        return np.array(state.getState()).reshape(-1)

    rows = {k: [] for k in ('time', 'sigma', 'omega', 'r', 'v', 'speeds', 'H', 'P')}

    def record(t):
        state = sc.scStateOutMsg.read()
        rows['time'].append(t)
        rows['sigma'].append(state.sigma_BN)
        rows['omega'].append(state.omega_BN_B)
        rows['r'].append(state.r_BN_N)
        rows['v'].append(state.v_BN_N)
        rows['speeds'].append(speeds())
        rows['H'].append(np.array(sc.totRotAngMomPntC_N).reshape(-1))
        rows['P'].append(np.array(sc.totOrbAngMomPntN_N).reshape(-1))

    for k in range(steps):
        if wheels:
            payload = messaging.ArrayMotorTorqueMsgPayload()
            payload.motorTorque = list(torques[k]) + [0.0] * (36 - len(wheels))
            cmd_msg.write(payload, sim.TotalSim.CurrentNanos)
        if thr_msg is not None and k in on_times:
            p = messaging.THRArrayOnTimeCmdMsgPayload()
            p.OnTimeRequest = list(on_times[k]) + [0.0] * (36 - len(thrusters))
            thr_msg.write(p, sim.TotalSim.CurrentNanos)
        if ext is not None:
            f = forces[k]
            ext.extForce_B = [[x] for x in D.T @ f]
            ext.extTorquePntB_B = [[x] for x in np.cross(P, D * f[:, None]).sum(axis=0)]
        if k == 0:
            sim.ConfigureStopTime(0)
            sim.ExecuteSimulation()
            record(0.0)
        sim.ConfigureStopTime(step_ns * (k + 1))
        sim.ExecuteSimulation()
        record((k + 1) * dt)
    return {k: np.array(v, dtype=float) for k, v in rows.items()}


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
