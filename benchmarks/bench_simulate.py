#!/usr/bin/env python3
"""
Benchmark: the offline closed loop (spart_ros.sim.closed_loop.simulate) against what it is made of.

Every demo scenario (SC_3DoF: 3 joints on a free-floating base, floating_base; kuka_iiwa: 7 joints,
fixed base in gravity, computed_torque; SC_3DoF_orbit: the 3-joint arm, 4 reaction wheels and 12
thrusters on a 500 km orbit, free_flying) and a vendor arm as its URDF declares it (the xArm7 of
test/data/urdf/vendor: 7 joints with damping and Coulomb friction, computed torque with the
friction compensation, the 3 s out-and-back trajectory of test_joint_dissipation), 1 kHz control on
a 1 ms step, on the MuJoCo plant and on the RK4 plant.  Measured in the same run, alternating:

- ``loop``: the whole loop's CPU per simulated second, and its ticks per CPU second;
- ``step``: the bare MuJoCo step of the same model with the same integrator (``mj_step`` on a copy
  of the run's MuJoCo data: no orbit loads, no actuator decisions, no readouts), per tick;
- ``law``: the controller's law (``law.command``) and ``update`` (``Controller.update``: the law
  and the controller's supervision around it), per tick, timed inside a second run of the loop;
- ``ratio``: loop per tick / (step + law), the issue-35 figure (target <= 1.5), and loop / (step +
  update).

CPU time (time.process_time), medians over the rounds; the machine's load average is printed (it
is shared: other processes slow every figure, the ratios less).

    python benchmarks/bench_simulate.py [--rounds 3] [--seconds 4] [--plants mujoco,rk4]

Not a test: nothing here fails the build; the exit code is 0 either way.
"""

import argparse
import functools
import os
import sys
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _path in (ROOT, os.path.join(ROOT, 'test')):
    if _path not in sys.path:
        sys.path.insert(0, _path)

import numpy as np  # noqa: E402
from spart_ros.sim.closed_loop import demo  # noqa: E402

SCENARIOS = ('SC_3DoF', 'kuka_iiwa', 'SC_3DoF_orbit', 'xarm7 (declared)')
VENDOR_ARM = os.path.join(ROOT, 'test', 'data', 'urdf', 'vendor', 'xarm7.urdf')


def run_scenario(name, plant, seconds, timed=None):
    """
    Return the ClosedLoopRun of scenario ``name`` on ``plant``.

    ``timed``: a dict collecting the CPU seconds of ``law.command`` and ``Controller.update``
    (the run is instrumented then).
    """
    if timed is None:
        return _run(name, plant, seconds)
    from spart_ros.control.controller import Controller

    update = Controller.update

    def timed_update(self, inputs, t):
        law = self.law
        if law is not None and 'command' not in law.__dict__:  # time this law's command too
            law.command = _timer(law.command, timed, 'law')
        t0 = time.process_time()
        try:
            return update(self, inputs, t)
        finally:
            timed['update'] += time.process_time() - t0

    Controller.update = timed_update
    try:
        return _run(name, plant, seconds)
    finally:
        Controller.update = update


def _timer(function, timed, key):
    @functools.wraps(function)
    def timer(*args, **kwargs):
        t0 = time.process_time()
        try:
            return function(*args, **kwargs)
        finally:
            timed[key] += time.process_time() - t0

    return timer


def _run(name, plant, seconds):
    if name.startswith('xarm7'):
        from test_joint_dissipation import _load, out_and_back, out_and_back_run

        return out_and_back_run(VENDOR_ARM, out_and_back(_load(VENDOR_ARM)), plant, None, {})
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return demo(name, plant=plant, duration=seconds)


def bare_step(plant, steps=2000):
    """Return the CPU seconds of one bare ``mj_step`` of a MujocoPlant's model at its state."""
    import mujoco

    model = plant.model
    data = mujoco.MjData(model)
    data.qpos[:], data.qvel[:] = plant.data.qpos, plant.data.qvel
    data.qfrc_applied[:], data.ctrl[:] = plant.data.qfrc_applied, plant.data.ctrl
    previous = mujoco.get_mjcb_passive()
    mujoco.set_mjcb_passive(None)
    try:
        mujoco.mj_step(model, data, 10)
        t0 = time.process_time()
        mujoco.mj_step(model, data, steps)
        return (time.process_time() - t0) / steps
    finally:
        mujoco.set_mjcb_passive(previous)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument(
        '--seconds', type=float, default=4.0, help='simulated seconds per demo run (default 4)'
    )
    ap.add_argument('--plants', default='mujoco,rk4')
    ap.add_argument('--scenarios', default=','.join(SCENARIOS))
    args = ap.parse_args(argv)
    plants = args.plants.split(',')
    scenarios = [s for s in args.scenarios.split(',') if s]
    print(
        f'load average {tuple(round(x, 2) for x in os.getloadavg())}; {args.rounds} rounds '
        'alternating; CPU time; 1 kHz control, 1 ms step',
        flush=True,
    )
    rows, steps = {}, {}
    for _ in range(args.rounds):
        for name in scenarios:
            for plant in plants:
                run = run_scenario(name, plant, args.seconds)
                ticks = len(run.t)
                if plant == 'mujoco':
                    steps.setdefault(name, []).append(bare_step(run.plant))
                timed = {'law': 0.0, 'update': 0.0}
                timed_run = run_scenario(name, plant, args.seconds, timed)
                rows.setdefault((name, plant), []).append(
                    (
                        run.cpu_per_simulated_second(),
                        ticks / max(run.cpu_seconds, 1e-12),
                        timed['law'] / len(timed_run.t),
                        timed['update'] / len(timed_run.t),
                        run.cpu_seconds / ticks,
                        float(np.nanmax(run.rms())),
                    )
                )
    print(
        f'{"scenario":18s} {"plant":7s} {"loop CPU/s":>10s} {"ticks/CPU s":>11s} {"step us":>8s} '
        f'{"law us":>7s} {"update us":>9s} {"loop us":>8s} {"ratio":>6s} {"ratio(update)":>13s}  '
        'RMS rad'
    )
    for (name, plant), values in rows.items():
        loop, rate, law, update, tick, rms = (
            float(np.median([v[k] for v in values])) for k in range(6)
        )
        step = float(np.median(steps[name])) if name in steps else float('nan')
        print(
            f'{name:18s} {plant:7s} {loop:10.4f} {rate:11.0f} {step * 1e6:8.1f} {law * 1e6:7.1f} '
            f'{update * 1e6:9.1f} {tick * 1e6:8.1f} {tick / (step + law):6.2f} '
            f'{tick / (step + update):13.2f}  {rms:.2e}',
            flush=True,
        )
    print(
        'loop = the whole closed loop; step = the bare MuJoCo step of the model (same '
        'integrator); law = law.command; update = Controller.update (the law included); ratio = '
        'loop / (step + law), ratio(update) = loop / (step + update), per tick (medians over the '
        'rounds)'
    )
    return 0


if __name__ == '__main__':
    sys.exit(main())
