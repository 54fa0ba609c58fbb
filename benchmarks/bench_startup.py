#!/usr/bin/env python3
"""Benchmark: start-up of a fresh process that uses the fast path.

Runs, in a fresh interpreter (``python -c ...``, the same python as this script), what a
node does at start: import spart_ros (the core and the fast path, hence numpy and numba),
build the 7-DoF model from URDF (SPART's kuka_iiwa.urdf), create FastDynamics and get the
first inverse_dynamics result (the first call loads the kernels' machine code from numba's
on-disk cache).  Prints the breakdown of each run; the process is run several times (the
first run may compile and fill the cache), and the verdict uses the runs after the first
(target: < 2 s from process start to the first result, interpreter start-up included).

    python benchmarks/bench_startup.py [--runs N] [--urdf PATH]
Not a test: the exit code is 0 either way.
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_URDF = os.path.join(ROOT, 'test', 'data', 'spart', 'urdf', 'kuka_iiwa.urdf')
TARGET_S = 2.0

CHILD = r'''
import time
t0 = time.perf_counter()
import sys, json
sys.path.insert(0, {root!r})
import numpy as np
t1 = time.perf_counter()
import spart_ros
from spart_ros.core import robot_from_urdf
t2 = time.perf_counter()
from spart_ros.core.fast import FastDynamics
t3 = time.perf_counter()
robot, keys = robot_from_urdf({urdf!r})
t4 = time.perf_counter()
fd = FastDynamics(robot)
t5 = time.perf_counter()
nq = robot.n_q
R0, r0 = np.eye(3), np.zeros(3)
qm, um, umdot = np.full(nq, 0.3), np.full(nq, 0.1), np.zeros(nq)
u0, u0dot = np.zeros(6), np.zeros(6)
tau0, taum = fd.inverse_dynamics(R0, r0, qm, u0, um, u0dot, umdot, gravity=np.array([0.0, 0.0, -9.81]),
                                 floating=False)
t6 = time.perf_counter()
abs_first = time.time()
fd.inverse_dynamics(R0, r0, qm, u0, um, u0dot, umdot, gravity=np.array([0.0, 0.0, -9.81]), floating=False)
t7 = time.perf_counter()
import numba
print(json.dumps(dict(numpy=t1 - t0, core=t2 - t1, fast=t3 - t2, urdf=t4 - t3, construct=t5 - t4,
                      first_call=t6 - t5, second_call=t7 - t6, in_script=t6 - t0, abs_first=abs_first, abs_start=time.time() - (t7 - t0), n_q=nq,
                      taum=[float(x) for x in taum], numba=numba.__version__,
                      modules=len(sys.modules))))
'''


def run_once(urdf):
    code = CHILD.format(root=ROOT, urdf=urdf)
    env = dict(os.environ)
    launched = time.time()
    t = time.perf_counter()
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, env=env, cwd='/')
    wall = time.perf_counter() - t
    if out.returncode != 0:
        raise SystemExit(f'child failed:\n{out.stderr}')
    d = json.loads(out.stdout.strip().splitlines()[-1])
    d['wall'] = wall
    d['to_first'] = d['abs_first'] - launched          # launch -> first result
    d['interpreter'] = d['abs_start'] - launched       # launch -> the script's first line
    return d


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--runs', type=int, default=3, help='fresh processes to run (default 3; the first may compile)')
    ap.add_argument('--urdf', default=DEFAULT_URDF)
    args = ap.parse_args(argv)
    print(f'python {sys.executable} ({sys.version.split()[0]}); model {os.path.relpath(args.urdf, ROOT)}; '
          f'load average {" ".join(f"{x:.2f}" for x in os.getloadavg())}')
    cols = [('to_first', 'to 1st result'), ('interpreter', 'interp.'), ('numpy', 'import numpy'),
            ('core', 'import core'), ('fast', 'import fast'), ('urdf', 'URDF->model'),
            ('construct', 'FastDynamics()'), ('first_call', '1st ID call'), ('second_call', '2nd ID call'),
            ('wall', 'wall (to exit)')]
    print(f'{"run":<4}' + ''.join(f'{label:>18}' for _, label in cols))
    runs = []
    for k in range(args.runs):
        d = run_once(args.urdf)
        runs.append(d)
        print(f'{k + 1:<4}' + ''.join(f'{d[key] * 1e3:15.1f} ms' for key, _ in cols), flush=True)
    later = runs[1:] or runs
    worst = max(d['to_first'] for d in later)
    print('\nto 1st result = from launching the process (parent clock) to the first inverse_dynamics result '
          '(child clock, same machine); interp. = interpreter start-up before the script\'s first line')
    print('taum of the first result: ' + ', '.join('%.4f' % x for x in runs[-1]['taum']))
    print('runs after the first (cache present): to 1st result ' + ', '.join('%.2f s' % d['to_first'] for d in later))
    print(f'target < {TARGET_S} s: {"PASS" if worst < TARGET_S else "FAIL"} (worst of the runs after the first: '
          f'{worst:.2f} s)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
