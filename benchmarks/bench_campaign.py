#!/usr/bin/env python3
"""
Benchmark: a Monte Carlo campaign's engine (spart_ros.campaign): its overhead and its scaling.

A campaign of ``--runs`` runs of about ``--run-seconds`` of CPU each (SC_3DoF on the RK4 plant,
its links' masses and centres of mass dispersed; the simulated duration is set from one run
measured first) is run, in the same session and alternating round by round:

- directly: ``run_one`` in a loop (no journal, no engine): the baseline;
- by the engine in this process (``workers=1``);
- on a Dask LocalCluster of 1 and of 2 single-threaded workers (the clusters started once,
  before the rounds, their start-up timed apart).

Printed: the wall time per run of each, the engine's overhead per run (the engine's wall time
per run minus the baseline's, as a share of a run: target <= 5 % of a 1 s run), and the speed-up
of 2 workers over 1 (target >= 1.7x for runs of >= 1 s).  On a machine shared with other work
the speed-up is bounded by the cores left free: the load average is printed with the figures.

    python benchmarks/bench_campaign.py [--runs 8] [--run-seconds 1.0] [--rounds 3]

Not a test: nothing here fails the build; the exit code is 0 either way.
"""

import argparse
import os
import statistics
import sys
import tempfile
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

from spart_ros.campaign import load_campaign, run_campaign, run_one  # noqa: E402


def campaign(runs, duration):
    return load_campaign(
        {
            'scenario': {'demo': 'SC_3DoF', 'plant': 'rk4', 'duration': duration},
            'runs': runs,
            'seed': 1,
            'dispersions': {
                'links.*.mass': {'distribution': 'normal', 'std': 0.02, 'apply': 'scale'},
                'links.*.com': {'distribution': 'uniform', 'low': -0.005, 'high': 0.005},
            },
        }
    )


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument('--runs', type=int, default=8, help='runs per campaign')
    ap.add_argument('--run-seconds', type=float, default=1.0, help='CPU seconds of one run')
    ap.add_argument('--rounds', type=int, default=3, help='alternating rounds (medians)')
    args = ap.parse_args(argv)
    import logging

    from distributed import Client, LocalCluster

    logging.getLogger('distributed').setLevel(logging.ERROR)  # not the clusters' INFO lines
    warnings.filterwarnings('ignore', message='Port .* is already in use')  # the second one's

    probe = campaign(1, 1.0)
    run_one(probe, 0)  # warm: imports, kernels
    cpu = run_one(probe, 0).cpu_s
    duration = round(max(0.2, args.run_seconds / cpu), 1)
    c = campaign(args.runs, duration)
    print(
        f'{args.runs} runs of SC_3DoF on RK4, {duration:g} s simulated each (one run: about '
        f'{cpu * duration:.2f} s of CPU); load average {os.getloadavg()[0]:.1f} at the start'
    )
    clusters = {}
    for n in (1, 2):
        t0 = time.perf_counter()
        cluster = LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
        )
        client = Client(cluster)
        client.run(run_one, probe, 0)  # every worker warm
        clusters[n] = (cluster, client)
        print(
            f'  LocalCluster of {n} worker(s): started and warm in {time.perf_counter() - t0:.1f}'
            ' s wall'
        )
    names = ('direct', 'engine, serial', 'Dask, 1 worker', 'Dask, 2 workers')
    workers = dict(zip(names, (1, 1, 1, 2)))
    times = {k: [] for k in names}  # wall seconds per run
    inside = {k: [] for k in names[1:]}  # the engine's own share: workers x wall - the runs' wall
    for r in range(args.rounds):

        def direct():
            t0 = time.perf_counter()
            for i in range(args.runs):
                run_one(c, i)
            return time.perf_counter() - t0, None

        def engine(**how):
            with tempfile.TemporaryDirectory() as out:
                t0 = time.perf_counter()
                result = run_campaign(c, output=out, progress=False, plots=False, **how)
                return time.perf_counter() - t0, sum(x.wall_s for x in result.results)

        order = [
            ('direct', direct),
            ('engine, serial', lambda: engine(workers=1)),
            ('Dask, 1 worker', lambda: engine(client=clusters[1][1])),
            ('Dask, 2 workers', lambda: engine(client=clusters[2][1])),
        ]
        if r % 2:
            order.reverse()
        for name, fn in order:
            wall, runs_wall = fn()
            times[name].append(wall / args.runs)
            if runs_wall is not None:
                inside[name].append((wall * workers[name] - runs_wall) / runs_wall)
        print(
            f'  round {r + 1}: '
            + ', '.join(f'{k} {v[-1]:.3f} s/run' for k, v in times.items())
            + f' (load {os.getloadavg()[0]:.1f})'
        )
    for cluster, client in clusters.values():
        client.close()
        cluster.close()
    med = {k: statistics.median(v) for k, v in times.items()}
    own = {k: statistics.median(v) for k, v in inside.items()}
    base = med['direct']
    print(
        "wall time per run (median of the rounds); the engine's overhead against the direct "
        "loop, and inside each campaign (workers x wall - the runs' own wall, per run wall):"
    )
    for k, v in med.items():
        extra = ''
        if k != 'direct':
            extra = (
                f'   overhead {(v - base) / base * 100:+6.1f} % (inside the campaign '
                f'{own[k] * 100:+.1f} %)'
            )
        print(f'  {k:16s} {v:.3f} s{extra}')
    print(
        f'speed-up of 2 workers over 1: {med["Dask, 1 worker"] / med["Dask, 2 workers"]:.2f}x '
        f'(over the serial engine: {med["engine, serial"] / med["Dask, 2 workers"]:.2f}x; '
        f'target >= 1.7x); engine overhead on Dask: {own["Dask, 1 worker"] * 100:.1f} % (1 '
        f'worker), {own["Dask, 2 workers"] * 100:.1f} % (2) of a run (target <= 5 %); load '
        f'average {os.getloadavg()[0]:.1f} at the end'
    )
    return 0


if __name__ == '__main__':
    sys.exit(main())
