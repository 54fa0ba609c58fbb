#!/usr/bin/env python3
"""
Benchmark: spart_ros.modern_robotics against the book's own code (``modern_robotics``).

The same calls on the book's 3-link arm (its dynamics docstrings' Mlist, Glist, Slist) and on a
random 6-joint chain, alternating call by call, in one process: per function the median time of
a call of each and the ratio (theirs over ours), and the largest difference of the results
relative to their largest entry.  The robot model behind ours is built at the first call of a
chain and kept: the first call's time is printed apart.

    python benchmarks/bench_modern_robotics.py                 # ~15 s of CPU
    python benchmarks/bench_modern_robotics.py --calls 50
Not a test: nothing here fails the build.
"""

import argparse
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for p in (ROOT, os.path.join(ROOT, 'test')):
    if p not in sys.path:
        sys.path.insert(0, p)

import modern_robotics as MR  # noqa: E402
import numpy as np  # noqa: E402
from spart_ros import modern_robotics as mr  # noqa: E402
from test_modern_robotics import _random_chain, BOOK  # noqa: E402


def _cases(chain, rng):
    Mlist, Glist, Slist = chain
    n = Slist.shape[1]
    th, dth, ddth, tau = (rng.uniform(-1, 1, n) for _ in range(4))
    g, Ftip = np.array([0, 0, -9.8]), rng.uniform(-1, 1, 6)
    traj = rng.uniform(-1, 1, (20, n))
    return [
        ('InverseDynamics', (th, dth, ddth, g, Ftip, Mlist, Glist, Slist)),
        ('MassMatrix', (th, Mlist, Glist, Slist)),
        ('ForwardDynamics', (th, dth, tau, g, Ftip, Mlist, Glist, Slist)),
        ('JacobianSpace', (Slist, th)),
        (
            'ComputedTorque',
            (th, dth, tau, g, Mlist, Glist, Slist, ddth, dth, tau, 20.0, 1.0, 18.0),
        ),
        ('ForwardDynamicsTrajectory', (th, dth, traj, g, np.zeros((20, 6)), *chain, 0.01, 2)),
    ]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    parser.add_argument('--calls', type=int, default=100, help='calls per function (default 100)')
    args = parser.parse_args()
    rng = np.random.default_rng(1)
    chains = [
        ("the book's 3-link arm", tuple(BOOK[k] for k in ('Mlist', 'Glist', 'Slist'))),
        ('a random 6R chain', _random_chain(rng, 'rrrrrr')),
    ]
    print(
        f'{"function":<27} {"ours [us]":>10} {"MR [us]":>10} {"MR/ours":>8} {"max rel diff":>13}'
    )
    for label, chain in chains:
        cases = _cases(chain, rng)
        t = time.perf_counter()
        mr.MassMatrix(cases[1][1][0], *chain)  # builds and keeps the chain's model
        print(f'{label}: first call (builds the model) {1e3 * (time.perf_counter() - t):.2f} ms')
        for name, call_args in cases:
            calls = max(3, args.calls // (20 if 'Trajectory' in name else 1))
            ours, theirs = [], []
            for _ in range(calls):
                for f, times in ((getattr(mr, name), ours), (getattr(MR, name), theirs)):
                    t = time.perf_counter()
                    f(*call_args)
                    times.append(time.perf_counter() - t)
            a, b = getattr(mr, name)(*call_args), getattr(MR, name)(*call_args)
            a, b = (np.asarray(x[0] if isinstance(x, tuple) else x, dtype=float) for x in (a, b))
            diff = float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))
            t_ours, t_mr = 1e6 * np.median(ours), 1e6 * np.median(theirs)
            print(f'  {name:<25} {t_ours:10.1f} {t_mr:10.1f} {t_mr / t_ours:8.1f} {diff:13.2e}')


if __name__ == '__main__':
    main()
