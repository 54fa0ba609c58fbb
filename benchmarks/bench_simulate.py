#!/usr/bin/env python3
"""
Benchmark: the offline closed loop (spart_ros.sim.closed_loop.simulate), CPU per simulated second.

The closed-loop demo's scenarios (KUKA iiwa 7-DoF fixed base in gravity, computed torque; SC_3DoF
free-floating, floating_base), 1 kHz control on a 1 ms physics step, on the MuJoCo plant and on the
core's RK4 plant; and, measured in the same run, alternating, what the loop is made of: the plant
alone (steps with a constant effort and its readouts) and the controller alone (Controller.update
on a recorded state), so that the loop's own cost (the rest) shows.  Prints CPU seconds per
simulated second (target for the 7-DoF arm: 5 s of 1 kHz control well under 1 s of CPU, i.e.
well under 0.2 s per simulated second) and the loop's share.

    python benchmarks/bench_simulate.py [--rounds 3] [--seconds 5]

Not a test: nothing here fails the build; the exit code is 0 either way.
"""

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402
from spart_ros.sim.closed_loop import demo  # noqa: E402


def cpu(fn):
    t0 = time.process_time()
    out = fn()
    return time.process_time() - t0, out


def plant_alone(run, seconds):
    """CPU per simulated second of the run's plant stepped with a constant effort and read out."""
    plant = run.plant
    plant.reset()
    plant.hold(False) if hasattr(plant, 'hold') else None
    plant.set_efforts(np.nan_to_num(run.commands[0]) * 0.0 + run.commands[1])
    ticks = int(seconds * 1000)

    def go():
        for _ in range(ticks):
            plant.joint_positions()
            plant.joint_velocities()
            plant.base_link_state()
            plant.step(1)

    return cpu(go)[0] / seconds


def controller_alone(run, seconds):
    """CPU per simulated second of Controller.update alone, on the run's recorded states."""
    from spart_ros.control.controller import ControlInputs
    from spart_ros.sim.closed_loop import _Base, _State

    c = run.controller
    n = len(run.t)
    ticks = int(seconds * 1000)
    base = _Base(run.base_rotation[0], run.base_position[0], np.zeros(3), np.zeros(3))
    floating = run.plant.floating
    joint_times = np.zeros(len(run.joint_names))
    t_last = run.t[-1]

    def go():
        for k in range(ticks):
            i = k % n
            t = t_last + (k + 1) * 1e-3
            joint_times.fill(t)
            b = (
                _Base(
                    run.base_rotation[i],
                    run.base_position[i],
                    run.base_twist[i, 0:3],
                    run.base_twist[i, 3:6],
                )
                if floating
                else base
            )
            ns = int(round(t * 1e9))
            c.update(
                ControlInputs(
                    _State(b, run.q[i], run.qd[i]),
                    None,
                    joint_times,
                    t if floating else None,
                    divmod(ns, 1_000_000_000),
                    t,
                ),
                t,
            )

    return cpu(go)[0] / seconds


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--rounds', type=int, default=3)
    ap.add_argument(
        '--seconds', type=float, default=5.0, help='simulated seconds per run (default 5)'
    )
    args = ap.parse_args(argv)
    print(
        f'load average {os.getloadavg()}; {args.rounds} rounds alternating; CPU s per simulated s '
        '(1 kHz control)'
    )
    rows = {}
    for r in range(args.rounds):
        for name in ('kuka_iiwa', 'SC_3DoF'):
            for plant in ('mujoco', 'rk4'):
                run = demo(name, plant=plant, duration=args.seconds)
                loop = run.cpu_per_simulated_second()
                p = plant_alone(run, min(args.seconds, 2.0))
                c = controller_alone(run, min(args.seconds, 2.0))
                rows.setdefault((name, plant), []).append(
                    (loop, p, c, run.rms(1.0).max(), run.cpu_seconds)
                )
    print(
        f'{"scenario":12s} {"plant":7s} {"loop":>8s} {"plant":>8s} {"control":>8s} {"rest":>8s}  '
        f'{"CPU for the run":>16s}  RMS after 1 s'
    )
    for (name, plant), values in rows.items():
        loop, p, c, rms, total = (float(np.median([v[k] for v in values])) for k in range(5))
        print(
            f'{name:12s} {plant:7s} {loop:8.3f} {p:8.3f} {c:8.3f} {loop - p - c:8.3f}  '
            f'{total:8.3f} s / {args.seconds:g} s  {rms:.2e} rad'
        )
    print(
        'loop = the whole closed loop; plant = its plant stepped and read alone; control = '
        "Controller.update alone; rest = the loop's own bookkeeping (medians over the rounds)"
    )
    return 0


if __name__ == '__main__':
    sys.exit(main())
