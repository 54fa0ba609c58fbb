#!/usr/bin/env python3
"""
A parameter sweep of the orbital demo offline: station keeping against the thruster cycle.

The orbital scenario of the main job (``SC_3DoF_orbit``: SPART's 3-joint arm on a spacecraft in a
500 km circular orbit; ``free_flying`` keeps the base at its LVLH target point with twelve 1 N
on/off thrusters while the arm follows the demo's trajectory and four reaction wheels hold the
attitude; docs/base_actuators.md) runs offline (:func:`spart_ros.sim.closed_loop.demo`, i.e.
``simulate``) once per thruster cycle (``thruster_period``: the base wrench is allocated every
cycle, the on/off thrusters pulse-width modulated over it; a shorter cycle follows the station
keeping law more closely and fires more, shorter pulses).  Printed and written to
``summary.json`` per cycle: the largest distance from the target, the base attitude's largest
change, the propellant used, the thrusters' firings, the share of ticks whose base wrench was
exerted, the wheels' largest speed; ``station_keeping.png``: the distance to the target over time
per cycle.

    python examples/station_keeping_sweep.py [--periods 0.05 0.1 0.2] [--duration 8]
        [--plant mujoco|rk4] [--dt 0.001] [--output DIR]

(8 s of three cycles: about 40 s of CPU here.)
"""

import argparse
import json
import os
import sys
import tempfile
import time

import matplotlib
import numpy as np

matplotlib.use('Agg')


def _attitude_change_deg(run):
    R0 = run.base_rotation[0]
    cos = (np.trace(np.einsum('ij,kjl->kil', R0.T, run.base_rotation), axis1=1, axis2=2) - 1) / 2
    return float(np.degrees(np.arccos(np.clip(cos, -1.0, 1.0))).max())


def run_one(period, duration, plant, dt):
    """Return the summary (dict) and the distance series of one thruster cycle ``period`` [s]."""
    from spart_ros.sim.closed_loop import demo

    t0 = time.process_time()
    run = demo(
        'SC_3DoF_orbit',
        plant=plant,
        duration=duration,
        settings={'thruster_period': float(period)},
        dt=dt,
    )
    distance = np.linalg.norm(run.base_position - run.base_position[0], axis=1)
    firings = int(run.plant.actuation.firings.sum())
    return {
        'thruster_period_s': float(period),
        'station_keeping_max_m': float(distance.max()),
        'station_keeping_final_m': float(distance[-1]),
        'attitude_change_max_deg': _attitude_change_deg(run),
        'propellant_g': float(run.propellant[-1] * 1e3),
        'firings': firings,
        'wrench_exerted_share': float(run.actuation_feasible[1:].mean()),
        'wheel_speed_max_rad_s': float(np.abs(run.wheel_speeds).max()),
        'cpu_s': time.process_time() - t0,
    }, (run.t, distance)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument('--periods', type=float, nargs='+', default=[0.05, 0.1, 0.2])
    ap.add_argument('--duration', type=float, default=8.0, help='simulated seconds per run')
    ap.add_argument('--plant', choices=('mujoco', 'rk4'), default='mujoco')
    ap.add_argument('--dt', type=float, default=0.001, help='physics step and control period [s]')
    ap.add_argument('--output', default=None, help='folder (default: a temporary one)')
    args = ap.parse_args(argv)
    out = args.output or tempfile.mkdtemp(prefix='station_keeping_')
    os.makedirs(out, exist_ok=True)
    import matplotlib.pyplot as plt

    rows, fig = [], plt.figure(figsize=(8, 4))
    ax = fig.add_subplot()
    for period in args.periods:
        row, (t, distance) = run_one(period, args.duration, args.plant, args.dt)
        rows.append(row)
        cm = {k: row[k] * 100 for k in ('station_keeping_max_m', 'station_keeping_final_m')}
        print(
            f'thruster_period {period:5.3f} s: station keeping '
            f'{cm["station_keeping_max_m"]:6.2f} cm at most, '
            f'{cm["station_keeping_final_m"]:6.2f} cm at the end; attitude '
            f'{row["attitude_change_max_deg"]:.4f} deg; propellant {row["propellant_g"]:.3f} g in '
            f'{row["firings"]} firings; wrench exerted at '
            f'{row["wrench_exerted_share"] * 100:.1f} % of the ticks; wheels '
            f'{row["wheel_speed_max_rad_s"]:.1f} rad/s ({row["cpu_s"]:.1f} s CPU)',
            flush=True,
        )
        ax.plot(t, distance * 100, label=f'thruster_period {period:g} s')
    ax.set_xlabel('simulated time [s]')
    ax.set_ylabel('distance to the target [cm]')
    ax.set_title('SC_3DoF_orbit offline: station keeping per thruster cycle')
    ax.grid(True, alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(os.path.join(out, 'station_keeping.png'), dpi=90)
    plt.close(fig)
    with open(os.path.join(out, 'summary.json'), 'w', encoding='utf-8') as f:
        json.dump({'duration_s': args.duration, 'plant': args.plant, 'runs': rows}, f, indent=2)
    print(f'output: {out}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
