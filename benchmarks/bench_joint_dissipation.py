#!/usr/bin/env python3
"""
Benchmark: declared joint damping and friction on the corpus arms, tracking and cost (issue 26).

Every arm of 6 or more joints in the URDF test corpus that declares joint dynamics (one per
distinct arm: test/test_joint_dissipation.py's ``corpus_arms``), as declared, with damping x10 and
with friction x10 (effort limits lifted for those: the URDF's do not allow the motion), default
controller settings, a 1 rad out-and-back joint trajectory over 3 s in gravity, on the MuJoCo
plant and on the RK4 plant; and the same arms without joint dynamics (rigid).  Prints each run's
worst joint RMS [rad] and its CPU per simulated second, and the lightest joint with its time
constants.

    python benchmarks/bench_joint_dissipation.py [--plants mujoco,rk4]

Not a test: nothing here fails the build; the exit code is 0 either way.
"""

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for path in (ROOT, os.path.join(ROOT, 'test')):
    if path not in sys.path:
        sys.path.insert(0, path)

import numpy as np  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--plants', default='mujoco,rk4')
    args = ap.parse_args(argv)
    from test_joint_dissipation import (
        _lightest_joint,
        _load,
        corpus_arms,
        out_and_back,
        out_and_back_run,
        variants,
    )

    print(f'load average {os.getloadavg()}')
    path, joint, inertia = _lightest_joint()
    print(
        f'lightest joint: {joint} of {os.path.relpath(path, ROOT)}, inertia {inertia:.3g} kg m^2'
    )
    print(f'{"arm":42s} {"variant":13s} {"plant":7s} {"RMS rad":>9s} {"worst joint":>14s} CPU/s')
    for label, path in corpus_arms():
        robot = _load(path)
        waypoints = out_and_back(robot)
        rigid = {'*': {'damping': 0.0, 'friction': 0.0}}
        for variant, overrides, settings in [('rigid', rigid, {})] + variants(robot):
            for plant in args.plants.split(','):
                run = out_and_back_run(path, waypoints, plant, overrides, settings)
                rms = run.rms()
                k = int(np.nanargmax(rms))
                print(
                    f'{label:42s} {variant:13s} {plant:7s} {rms[k]:9.2e} '
                    f'{run.joint_names[k]:>14s} {run.cpu_per_simulated_second():.3f}',
                    flush=True,
                )
    return 0


if __name__ == '__main__':
    sys.exit(main())
