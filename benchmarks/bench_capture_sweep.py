"""
The capture's envelope on the plants: tumble rates x random axes x seeds (docs/capture.md).

The main job's capture scenario offline (test/capture_cases.py: the servicing spacecraft in a
500 km orbit, the 150 kg client 0.15 m in front of the tool, estimates at 20 Hz with noise and
20 ms late, control at 100 Hz), the client tumbling about a random axis per seed at each rate.
One line per case: captured or refused (why), the grasp and rest times, the relative twist at the
grasp, the base attitude before the grasp and over the run, the largest joint rate and effort
(fractions of their limits), the wheels' speed (fraction of their limit), the target's rate at
the end; then per rate: how many were captured, refused, failed.

    python benchmarks/bench_capture_sweep.py                       # RK4 plant, 0..12 deg/s, 3 axes
    python benchmarks/bench_capture_sweep.py --plant mujoco --rates 0 4 8 --seeds 2

Exit 1 when a case that was accepted did not succeed (a capture tried and missed), 0 otherwise
(refusals before any attempt are the envelope's edge, not failures).
"""

import argparse
import os
import sys
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for p in (os.path.join(ROOT, 'test'), ROOT):
    if p not in sys.path:
        sys.path.insert(0, p)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument('--plant', choices=('rk4', 'mujoco'), default='rk4')
    ap.add_argument('--rates', type=float, nargs='+', default=[0, 2, 4, 6, 8, 10, 12])
    ap.add_argument('--seeds', type=int, default=3, help='random axes per rate')
    ap.add_argument('--duration', type=float, default=16.0, help='simulated seconds per case')
    ap.add_argument('--no-orbit', action='store_true', help='empty space instead of the orbit')
    args = ap.parse_args(argv)
    warnings.simplefilter('ignore')
    import capture_cases as cc

    missed, table = 0, {}
    for rate in args.rates:
        for seed in range(args.seeds):
            run = cc.run(
                cc.tumbling(rate, seed), args.plant, args.duration, orbit=not args.no_orbit
            )
            s = cc.summary(run)
            row = table.setdefault(rate, {'succeeded': 0, 'refused': 0, 'missed': 0})
            if s['status'] == 'succeeded':
                row['succeeded'] += 1
                print(
                    f'{rate:5.1f} deg/s axis {seed}: captured: grasp {s["t_grasp"]:.2f} s, '
                    'at rest '
                    f'{s["t_rest"]:.2f} s ({s["t_rest"] - s["t_grasp"]:.1f} s of detumble); '
                    f'relative {s["relative_speed"] * 1e3:.2f} mm/s, '
                    f'{s["relative_rate"] * 1e3:.2f} mrad/s at the grasp; base '
                    f'{s["attitude_before_deg"]:.3f} deg before the grasp, '
                    f'{s["attitude_deg"]:.2f} in all; joint rates <= {s["rate_fraction"]:.0%}, '
                    'efforts <= '
                    f'{s["effort_fraction"]:.0%}, wheels <= {s["wheel_fraction"]:.0%} of their '
                    f'limits; the target {s["target_rate_deg"]:.3f} deg/s at the end '
                    f'({s["cpu"]:.1f} s CPU)',
                    flush=True,
                )
            elif run.capture.refused:
                row['refused'] += 1
                print(f'{rate:5.1f} deg/s axis {seed}: refused: {run.capture.refused}', flush=True)
            else:
                row['missed'] += 1
                missed += 1
                print(
                    f'{rate:5.1f} deg/s axis {seed}: NOT captured: {s["status"]} '
                    f'({s["message"]}); '
                    f'phases {run.capture.phase_times(run.t)}',
                    flush=True,
                )
    print(f'\nenvelope ({args.plant}, {args.seeds} random axes per rate):')
    for rate, row in table.items():
        print(
            f'  {rate:5.1f} deg/s: captured {row["succeeded"]}, refused {row["refused"]}, '
            f'missed {row["missed"]}'
        )
    return 1 if missed else 0


if __name__ == '__main__':
    sys.exit(main())
