"""
The main job's capture scenario offline, and its variants: shared by the tests and the sweep.

The scenario (config/demo_capture.yaml, docs/capture.md): urdf/arm7_spacecraft.urdf (a 7-joint
arm on a 400 kg bus, four 2 N m reaction wheels, twelve 2 N thrusters) in a circular 500 km orbit,
spart_controller's free_flying until the capture goal, control at 100 Hz; the client of
urdf/capture_target.yaml (150 kg, its fixture 0.15 m in front of the tool at the start) tumbling
about ``axis`` (or a random one, ``seed``) at ``rate_deg``; its estimates at 20 Hz with the demo's
noise (0.5 mm, 1 mrad, 0.5 mm/s, 0.2 mrad/s) and 20 ms late.

``python benchmarks/bench_capture_sweep.py`` runs the sweep (rates x axes x seeds, both plants).
"""

import dataclasses
import math
from pathlib import Path
import time

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
URDF = str(ROOT / 'urdf' / 'arm7_spacecraft.urdf')
ACTUATORS = str(ROOT / 'urdf' / 'arm7_spacecraft.actuators.yaml')
TARGET = str(ROOT / 'urdf' / 'capture_target.yaml')
JOINTS = [f'arm_joint_{k}' for k in range(1, 8)]
Q0 = [0.0, 0.4, 0.0, -1.8, 0.0, -0.7, 0.0]
SETTINGS = {'mode': 'free_flying', 'ee_link': 'arm_tool'}
ESTIMATES = {
    'estimate_period': 0.05,
    'estimate_noise': [0.0005, 0.001, 0.0005, 0.0002],
    'estimate_delay': 0.02,
}
#: the plants' steps: RK4 at 1 ms; MuJoCo at 0.5 ms (its weld's time constant is 2 dt)
DT = {'rk4': 1e-3, 'mujoco': 5e-4}


def tumbling(rate_deg, seed=None, axis=None, target=None):
    """
    Return the scenario's target tumbling at ``rate_deg`` [deg/s].

    About ``axis`` (base frame) or a random one (``seed``), its fixture where the declaration
    puts it; ``target``: another declaration (default the scenario's).
    """
    from spart_ros.core.target import load_target

    t = load_target(TARGET if target is None else target)
    if axis is None:
        axis = np.random.default_rng(seed).standard_normal(3)
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    twist = np.concatenate([math.radians(rate_deg) * axis, np.zeros(3)])
    twist.setflags(write=False)
    return dataclasses.replace(t, initial_twist=twist)


def run(target, plant='rk4', duration=14.0, orbit=True, capture=None, record=True):
    """Return the ClosedLoopRun of the scenario with ``target`` (a Target or a file)."""
    from spart_ros.core.orbit import CircularOrbit
    from spart_ros.sim.closed_loop import simulate
    from spart_ros.sim.plant import InitialState

    dt = DT[plant]
    return simulate(
        URDF,
        dict(SETTINGS),
        duration=duration,
        plant=plant,
        base='floating',
        gravity=(0.0, 0.0, 0.0),
        dt=dt,
        steps_per_tick=int(round(0.01 / dt)),
        initial=InitialState(dict(zip(JOINTS, Q0))),
        actuators=ACTUATORS,
        orbit=CircularOrbit.make(altitude=500e3) if orbit else None,
        target=target,
        capture={**ESTIMATES, **(capture or {})},
        record=record,
    )


def summary(run):
    """
    Return {figure: value} of a capture run.

    ``status``, ``code``, ``message``; ``t_grasp``, ``t_rest`` [s] (NaN if not); the relative
    speed and rate at the grasp [m/s, rad/s]; the base attitude change before the grasp and over
    the run [deg]; the largest joint rate and commanded effort as fractions of their limits, the
    largest wheel speed of its limit; the target's rate at the end [deg/s]; the loop's CPU [s].
    """
    from spart_ros.core.actuators import load_actuators
    from spart_ros.core.urdf import robot_from_urdf

    c = run.capture
    goal = c.goal
    phase = np.asarray(c.phase, dtype=str)
    after = np.flatnonzero(phase == 'detumble')
    k = int(after[0]) - 1 if after.size else len(run.t) - 1
    R0 = run.base_rotation[0]
    cos = (np.einsum('ji,kji->k', R0, run.base_rotation) - 1.0) / 2.0
    angle = np.degrees(np.arccos(np.clip(cos, -1.0, 1.0)))
    robot, _ = robot_from_urdf(URDF)
    limits = {j.name: j.limits for j in robot.joints}
    rates = np.array([limits[n].velocity for n in JOINTS])
    efforts = np.array([limits[n].effort for n in JOINTS])
    cols = [run.joint_names.index(n) for n in JOINTS]
    ccols = [run.command_joints.index(n) for n in JOINTS]
    a = load_actuators(ACTUATORS)
    w_max = np.array([w.max_speed for w in a.wheels])
    commands = np.nan_to_num(run.commands[:, ccols])
    started = goal.started if goal is not None else {}
    return {
        'status': goal.status if goal is not None else 'none',
        'code': goal.error_code if goal is not None else 0,
        'message': goal.message if goal is not None else c.refused,
        't_grasp': started.get('detumble', math.nan),
        't_rest': started.get('done', math.nan),
        'relative_speed': float(c.relative_linear[k]) if after.size else math.nan,
        'relative_rate': float(c.relative_angular[k]) if after.size else math.nan,
        'attitude_before_deg': float(angle[: k + 1].max()),
        'attitude_deg': float(angle.max()),
        'rate_fraction': float((np.abs(run.qd[:, cols]) / rates).max()),
        'effort_fraction': float((np.abs(commands) / efforts).max()),
        'wheel_fraction': float((np.abs(run.wheel_speeds) / w_max).max()),
        'target_rate_deg': float(np.degrees(np.linalg.norm(c.target_twist[-1, 3:6]))),
        'cpu': run.cpu_seconds,
    }


def timed(function, *args, **kw):
    """Return (function's value, its CPU seconds)."""
    t = time.process_time()
    out = function(*args, **kw)
    return out, time.process_time() - t
