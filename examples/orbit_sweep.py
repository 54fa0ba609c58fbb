#!/usr/bin/env python3
"""
A parameter sweep of the offline closed loop in orbit: SC_3DoF at several altitudes.

The closed-loop demo's SC_3DoF scenario (a 3-joint arm on a free-floating spacecraft, the
controller's ``floating_base`` mode moving the arm through the demo's waypoints, then holding it)
runs offline (:func:`spart_ros.sim.closed_loop.demo`, i.e. ``simulate``) on a circular orbit at
each altitude asked for, and once without an orbit, the spacecraft starting ``--offset`` m above
the orbit's reference point (LVLH x) on the 2:1 relative ellipse (y' = -2 n x).  Everything the
run records is in the LVLH frame (Hill's axes: x radial, y along-track, z orbit normal).

Checks and figures, per altitude:

- the system's centre of mass follows the Clohessy-Wiltshire free drift from its start exactly,
  whatever the arm does (internal forces cancel, and the linear tidal force on the bodies adds
  up to the one on the total mass at the CoM): its largest departure, relative to the motion,
  is printed (``cw_error``: the integration's error, ~4e-10 at 10 ms; with ``--model
  nonlinear`` the CoM departs from CW by the second order of the offset);
- the base's attitude in LVLH against the run without an orbit (in the world): the base starts
  at rest in LVLH, i.e. turning with it at n, so what differs is the gravity-gradient torque on
  every body and the orbital motion's effect on the arm (``attitude_change_rad``; LVLH itself
  turns by n t, ``lvlh_turn_rad``);
- ``orbit_<altitude>.png``: the CoM in LVLH (x-y and y-z) beside the CW solution; ``attitude.png``:
  the base's angle from the no-orbit run over time, per altitude; ``summary.json``.

    python examples/orbit_sweep.py [--altitudes 400 800 2000] [--offset 10] [--duration 60]
        [--dt 0.01] [--plant mujoco|rk4] [--model linear|nonlinear] [--output DIR]

(60 s of three altitudes and the reference: about 30 s of CPU here.)
"""

import argparse
import json
import math
import os
import sys
import tempfile
import time

import matplotlib

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from spart_ros.core.base_state import base_from_link_frame  # noqa: E402
from spart_ros.core.fast.mimic import fast_dynamics  # noqa: E402
from spart_ros.core.orbit import CircularOrbit, clohessy_wiltshire  # noqa: E402
from spart_ros.sim.closed_loop import demo  # noqa: E402
from spart_ros.sim.plant import InitialState  # noqa: E402


def arguments(argv):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--altitudes', type=float, nargs='+', default=[400.0, 800.0, 2000.0],
                    help='orbit altitudes above the Earth [km]')  # fmt: skip
    ap.add_argument('--offset', type=float, default=10.0, help='start above the reference [m]')
    ap.add_argument('--duration', type=float, default=60.0, help='simulated seconds per run')
    ap.add_argument('--dt', type=float, default=0.01, help='physics step and control period [s]')
    ap.add_argument('--plant', choices=('mujoco', 'rk4'), default='mujoco')
    ap.add_argument('--model', choices=('linear', 'nonlinear'), default='linear')
    ap.add_argument('--output', help='folder for the figures and summary.json (default: new)')
    return ap.parse_args(argv)


def com_track(run):
    """Return the system CoM's position and velocity relative to LVLH at each tick, (k, 3) each."""
    fast = fast_dynamics(run.robot)
    p, v = np.empty((len(run.t), 3)), np.empty((len(run.t), 3))
    for k in range(len(run.t)):
        R0, r0, u0 = base_from_link_frame(
            run.robot,
            run.base_rotation[k],
            run.base_position[k],
            run.base_twist[k, 0:3],
            run.base_twist[k, 3:6],
        )
        com = fast.twists(R0, r0, run.q[k], u0, run.qd[k])[2]
        p[k], v[k] = com[0:3], com[3:6]
    return p, v


def angle(A, B):
    """Return the angle [rad] of the rotation from A to B."""
    M = A.T @ B
    s = np.linalg.norm([M[2, 1] - M[1, 2], M[0, 2] - M[2, 0], M[1, 0] - M[0, 1]]) / 2.0
    return math.atan2(s, (np.trace(M) - 1.0) / 2.0)


def main(argv=None):
    args = arguments(argv)
    out = args.output or tempfile.mkdtemp(prefix='spart_orbit_sweep_')
    os.makedirs(out, exist_ok=True)
    start = time.process_time()
    reference = demo('SC_3DoF', plant=args.plant, dt=args.dt, duration=args.duration)
    summary = {'plant': args.plant, 'model': args.model, 'duration': args.duration, 'runs': []}
    fig_att, ax_att = plt.subplots(figsize=(8, 4.5))
    for altitude in args.altitudes:
        orbit = CircularOrbit.make(altitude=altitude * 1e3, model=args.model)
        n = orbit.mean_motion
        initial = InitialState(
            base_position=(args.offset, 0.0, 0.0),
            base_linear_velocity=(0.0, -2.0 * n * args.offset, 0.0),
        )
        run = demo(
            'SC_3DoF',
            plant=args.plant,
            dt=args.dt,
            duration=args.duration,
            orbit=orbit,
            initial=initial,
        )
        p, v = com_track(run)
        cw, _ = clohessy_wiltshire(n, p[0], v[0], run.t - run.t[0])
        cw_error = float(np.max(np.abs(p - cw)) / np.max(np.abs(cw)))
        turned = np.array(
            [angle(R, Q) for R, Q in zip(reference.base_rotation, run.base_rotation)]
        )
        ax_att.plot(run.t, np.degrees(turned), label=f'{altitude:g} km')
        fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.5))
        for ax, (i, j) in zip((a1, a2), ((1, 0), (1, 2))):
            ax.plot(cw[:, i], cw[:, j], 'k--', lw=2.5, label='Clohessy-Wiltshire (free drift)')
            ax.plot(p[:, i], p[:, j], color='tab:orange', label='system CoM (closed loop)')
            ax.set_xlabel('xyz'[i] + ' [m] (LVLH)')
            ax.set_ylabel('xyz'[j] + ' [m] (LVLH)')
            ax.grid(True, alpha=0.3)
        a1.legend()
        fig.suptitle(
            f'SC_3DoF at {altitude:g} km ({args.model}): CoM in LVLH over {args.duration:g} s, '
            f'largest departure from CW {cw_error:.2e} of the motion'
        )
        fig.tight_layout()
        fig.savefig(os.path.join(out, f'orbit_{altitude:g}.png'), dpi=100)
        plt.close(fig)
        summary['runs'].append(
            {
                'altitude_km': altitude,
                'mean_motion': n,
                'period': orbit.period,
                'cw_error': cw_error,
                'attitude_change_rad': float(turned[-1]),
                'lvlh_turn_rad': n * float(run.t[-1] - run.t[0]),
                'rms_tracking_rad': run.rms(1.0).tolist(),
                'final_state': run.states[-1],
            }
        )
        print(
            f'{altitude:g} km: period {orbit.period:.1f} s, CoM vs CW {cw_error:.2e}, base turned '
            f'{turned[-1]:.4g} rad from the no-orbit run (LVLH turned n t = '
            f'{n * (run.t[-1] - run.t[0]):.4g} rad), tracking RMS {np.max(run.rms(1.0)):.2e} rad'
        )
    ax_att.set_xlabel('t [s]')
    ax_att.set_ylabel('base attitude vs no orbit [deg]')
    ax_att.grid(True, alpha=0.3)
    ax_att.legend()
    fig_att.tight_layout()
    fig_att.savefig(os.path.join(out, 'attitude.png'), dpi=100)
    plt.close(fig_att)
    summary['cpu_seconds'] = time.process_time() - start
    with open(os.path.join(out, 'summary.json'), 'w', encoding='utf-8') as f:
        json.dump(summary, f, indent=1)
    print(f'wrote {len(args.altitudes) + 1} plots and summary.json to {out}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
