#!/usr/bin/env python3
"""
Benchmark: SPART's chain Kinematics -> DiffKinematics -> Velocities -> I_I -> Accelerations -> ID.

Ours (spart_ros.spart) beside spartpy (PyPI ``spartpy``, import name ``SPARTpy``: SPART's MATLAB
code compiled to C by MATLAB Coder, called through ctypes) on the same URDF and the same state, in
the same run.

A 7-DoF arm on a floating base (SPART's kuka_iiwa.urdf by default).  Prints
the max difference of tau = [tau0; taum] between the two, the median time of
one chain call for each (time.perf_counter_ns, after warm-up, the two sides
interleaved in small blocks so both see the same machine load, gc disabled
while timing), the ratio ours/spartpy, and the same per function.

    python benchmarks/bench_spart_chain.py [--urdf PATH] [--reps N] [--profile] [--whatif]

``--profile`` adds a cProfile of our chain (share per SPART function and per
helper group, top functions by own time); ``--whatif`` times our chain with the
input checks and/or the symbolic dispatch replaced in-process by plain numpy
(diagnostic only, the package files are untouched).
Not a test: nothing here asserts a speed.
"""

import argparse
import cProfile
import gc
import io
import os
import pstats
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402
from spart_ros import spart  # noqa: E402

DEFAULT_URDF = os.path.join(ROOT, 'test', 'data', 'spart', 'urdf', 'kuka_iiwa.urdf')


def random_state(n, nq, seed=0):
    rng = np.random.default_rng(seed)
    R0 = spart.Angles321_DCM(rng.uniform(-np.pi, np.pi, 3)).T  # base -> inertial
    return {
        'R0': R0,
        'r0': rng.normal(size=3),
        'qm': rng.uniform(-2, 2, nq),
        'u0': rng.normal(size=6),
        'um': rng.normal(size=nq),
        'u0dot': rng.normal(size=6),
        'umdot': rng.normal(size=nq),
        'wF0': rng.normal(size=6),
        'wFm': rng.normal(size=(6, n)),
    }


def ours_chain(robot, R0, r0, qm, u0, um, u0dot, umdot, wF0, wFm):
    RJ, RL, rJ, rL, e, g = spart.Kinematics(R0, r0, qm, robot)
    Bij, Bi0, P0, pm = spart.DiffKinematics(R0, r0, rL, e, g, robot)
    t0, tL = spart.Velocities(Bij, Bi0, P0, pm, u0, um, robot)
    I0, Im = spart.I_I(R0, RL, robot)
    t0dot, tLdot = spart.Accelerations(t0, tL, P0, pm, Bi0, Bij, u0, um, u0dot, umdot, robot)
    tau0, taum = spart.ID(wF0, wFm, t0, tL, t0dot, tLdot, P0, pm, I0, Im, Bij, Bi0, robot)
    return np.concatenate([tau0, taum])


def spartpy_chain(sp, R0, r0, qm, u0, um, u0dot, umdot, wF0, wFm):
    RJ, RL, rJ, rL, e, g = sp.kinematics(R0, r0, qm)
    Bij, Bi0, P0, pm = sp.diff_kinematics(R0, r0, rL, e, g)
    t0, tL = sp.velocities(Bij, Bi0, P0, pm, u0, um)
    I0, Im = sp.i_i(R0, RL)
    t0dot, tLdot = sp.accelerations(t0, tL, P0, pm, Bi0, Bij, u0, um, u0dot, umdot)
    tau0, taum = sp.inverse_dynamics(wF0, wFm, t0, tL, t0dot, tLdot, P0, pm, I0, Im, Bij, Bi0)
    return np.concatenate([tau0, taum])


def ours_stages(robot, R0, r0, qm, u0, um, u0dot, umdot, wF0, wFm):
    """(name, thunk) per function, inputs precomputed."""
    k = spart.Kinematics(R0, r0, qm, robot)
    d = spart.DiffKinematics(R0, r0, k.rL, k.e, k.g, robot)
    Bij, Bi0, P0, pm = d
    t0, tL = spart.Velocities(Bij, Bi0, P0, pm, u0, um, robot)
    I0, Im = spart.I_I(R0, k.RL, robot)
    t0dot, tLdot = spart.Accelerations(t0, tL, P0, pm, Bi0, Bij, u0, um, u0dot, umdot, robot)
    return [
        ('Kinematics', lambda: spart.Kinematics(R0, r0, qm, robot)),
        ('DiffKinematics', lambda: spart.DiffKinematics(R0, r0, k.rL, k.e, k.g, robot)),
        ('Velocities', lambda: spart.Velocities(Bij, Bi0, P0, pm, u0, um, robot)),
        ('I_I', lambda: spart.I_I(R0, k.RL, robot)),
        (
            'Accelerations',
            lambda: spart.Accelerations(t0, tL, P0, pm, Bi0, Bij, u0, um, u0dot, umdot, robot),
        ),
        ('ID', lambda: spart.ID(wF0, wFm, t0, tL, t0dot, tLdot, P0, pm, I0, Im, Bij, Bi0, robot)),
    ]


def spartpy_stages(sp, R0, r0, qm, u0, um, u0dot, umdot, wF0, wFm):
    RJ, RL, rJ, rL, e, g = sp.kinematics(R0, r0, qm)
    Bij, Bi0, P0, pm = sp.diff_kinematics(R0, r0, rL, e, g)
    t0, tL = sp.velocities(Bij, Bi0, P0, pm, u0, um)
    I0, Im = sp.i_i(R0, RL)
    t0dot, tLdot = sp.accelerations(t0, tL, P0, pm, Bi0, Bij, u0, um, u0dot, umdot)
    return [
        ('Kinematics', lambda: sp.kinematics(R0, r0, qm)),
        ('DiffKinematics', lambda: sp.diff_kinematics(R0, r0, rL, e, g)),
        ('Velocities', lambda: sp.velocities(Bij, Bi0, P0, pm, u0, um)),
        ('I_I', lambda: sp.i_i(R0, RL)),
        (
            'Accelerations',
            lambda: sp.accelerations(t0, tL, P0, pm, Bi0, Bij, u0, um, u0dot, umdot),
        ),
        (
            'ID',
            lambda: sp.inverse_dynamics(wF0, wFm, t0, tL, t0dot, tLdot, P0, pm, I0, Im, Bij, Bi0),
        ),
    ]


def interleaved_us(fns, reps, warmup, block=25):
    """
    Per-call times (microseconds) of each thunk in ``fns``.

    Measured in alternating blocks of ``block`` calls (order reversed every other round) so that
    both sides see the same machine load. Returns one dict per thunk: median, p10, p90, best (the
    fastest block's mean per call).
    """
    for fn in fns:
        for _ in range(warmup):
            fn()
    rounds = max(reps // block, 1)
    times = [np.empty(rounds * block, dtype=np.int64) for _ in fns]
    best = [np.inf for _ in fns]
    clock = time.perf_counter_ns
    gc_was = gc.isenabled()
    gc.disable()
    try:
        for r in range(rounds):
            order = range(len(fns)) if r % 2 == 0 else reversed(range(len(fns)))
            for k in order:
                fn, out = fns[k], times[k]
                base = r * block
                for i in range(block):
                    t = clock()
                    fn()
                    out[base + i] = clock() - t
                best[k] = min(best[k], out[base : base + block].mean())
    finally:
        if gc_was:
            gc.enable()
    return [
        {
            'median': np.median(t) / 1e3,
            'p10': np.percentile(t, 10) / 1e3,
            'p90': np.percentile(t, 90) / 1e3,
            'best': b / 1e3,
        }
        for t, b in zip(times, best)
    ]


STAGES = (
    'kinematics',
    'differential_kinematics',
    'velocities',
    'inertia_in_inertial_frame',
    'accelerations',
    'inverse_dynamics',
)


def profile_ours(robot, st, reps=2000):
    """
    ``cProfile`` of our chain.

    Share of each SPART function, then the top functions by own time.
    """
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(reps):
        ours_chain(robot, **st)
    prof.disable()
    stats = pstats.Stats(prof)
    total = sum(v[2] for v in stats.stats.values())  # own times
    print(f'\ncProfile of {reps} calls of our chain (profiler overhead inflates small functions):')
    print('  share of the chain by SPART function (cumulative time):')
    for (filename, _, func), (_, _, _, ct, _) in sorted(
        stats.stats.items(), key=lambda kv: -kv[1][3]
    ):
        if func in STAGES and 'spart_ros' in filename:
            print(f'    {func:<28} {100 * ct / total:5.1f} %')
    groups = {
        'input checks (checks.*, _checks.*)': 'checks.py',
        'symbolic dispatch (_backend.*)': '_backend.py',
        'numpy allocation/eye (numpy internals)': 'numpy',
    }
    print('  own time by helper group:')
    for label, key in groups.items():
        own = sum(v[2] for (f, _, _), v in stats.stats.items() if key in f)
        print(f'    {label:<40} {100 * own / total:5.1f} %')
    out = io.StringIO()
    pstats.Stats(prof, stream=out).sort_stats('tottime').print_stats(20)
    print(out.getvalue())


def what_if(robot, st, sp, reps, warmup):
    """
    Show what each overhead of our chain costs (diagnostic only).

    Our chain with the per-call input checks and/or the per-array symbolic dispatch replaced, in
    this process, by plain numpy (monkeypatched; the package files are untouched).
    """
    import importlib

    chk = importlib.import_module('spart_ros.core._checks')
    bk = importlib.import_module('spart_ros.core._backend')
    saved = (chk.array, chk.vector, bk.zeros, bk.eye)
    ref = ours_chain(robot, **st)

    def plain(name, x, *shape):
        return x if isinstance(x, np.ndarray) else np.asarray(x, dtype=float)

    variants = [
        ('as is', {}),
        ('no input checks', {'array': plain, 'vector': plain}),
        (
            'no symbolic dispatch',
            {'zeros': lambda shape, *like: np.zeros(shape), 'eye': lambda n, *like: np.eye(n)},
        ),
        (
            'neither',
            {
                'array': plain,
                'vector': plain,
                'zeros': lambda shape, *like: np.zeros(shape),
                'eye': lambda n, *like: np.eye(n),
            },
        ),
    ]
    print('\nwhat-if (diagnostic, monkeypatched in this process), microseconds per chain call:')
    fns = []
    for label, patch in variants:

        def run(patch=patch):
            chk.array, chk.vector = patch.get('array', saved[0]), patch.get('vector', saved[1])
            bk.zeros, bk.eye = patch.get('zeros', saved[2]), patch.get('eye', saved[3])
            return ours_chain(robot, **st)

        assert np.abs(run() - ref).max() < 1e-12
        fns.append(run)
    fns.append(lambda: spartpy_chain(sp, **st))
    try:
        res = interleaved_us(fns, reps, warmup)
    finally:
        chk.array, chk.vector, bk.zeros, bk.eye = saved
    for (label, _), r in zip(variants + [('spartpy', None)], res):
        print(
            f'  {label:<22} median {r["median"]:8.1f}   p10 {r["p10"]:8.1f}   best '
            f'{r["best"]:8.1f}'
        )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--urdf', default=DEFAULT_URDF)
    ap.add_argument('--reps', type=int, default=3000, help='timed repetitions per measurement')
    ap.add_argument('--warmup', type=int, default=200)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--profile', action='store_true', help='cProfile our chain')
    ap.add_argument(
        '--whatif',
        action='store_true',
        help='diagnostic: time our chain without input checks / symbolic dispatch (monkeypatched)',
    )
    args = ap.parse_args(argv)

    import SPARTpy  # spartpy's import name

    robot, _ = spart.urdf2robot(args.urdf)
    sp = SPARTpy.SPART(args.urdf)
    n, nq = robot.n_links_joints, robot.n_q
    assert (sp.robot.n_links_joints, sp.robot.n_q) == (n, nq)
    st = random_state(n, nq, args.seed)

    print(
        f'robot {robot.name!r} from {os.path.relpath(args.urdf, ROOT)}: n = {n}, n_q = {nq}, '
        'floating base'
    )
    print(
        f'python {sys.version.split()[0]}, numpy {np.__version__}; spartpy C library '
        f'{SPARTpy.SPARTpy._CODEGEN_ROOT}/SPART_C/SPART_C.so'
    )

    tau_ours = ours_chain(robot, **st)
    tau_sp = spartpy_chain(sp, **st)
    diff = np.abs(tau_ours - tau_sp).max()
    print(
        f'tau = [tau0; taum]: max |ours - spartpy| = {diff:.3e}  (max |tau| = '
        f'{np.abs(tau_sp).max():.3e})'
    )

    print(
        f'\n{args.reps} timed calls each after {args.warmup} warm-up calls, ours and spartpy '
        'interleaved in blocks of 25;\nmicroseconds per call: median [10th-90th percentile], best '
        '= fastest block mean'
    )
    t_ours, t_sp = interleaved_us(
        [lambda: ours_chain(robot, **st), lambda: spartpy_chain(sp, **st)], args.reps, args.warmup
    )
    w = 16
    print(
        f'{"":<{w}} {"ours median [p10-p90]":>26} {"best":>7}  {"spartpy median [p10-p90]":>26} '
        f'{"best":>7}  {"ratio med":>9} {"ratio best":>10}'
    )

    def row(label, a, b):
        print(
            f'{label:<{w}} {a["median"]:9.1f} [{a["p10"]:6.1f}-{a["p90"]:7.1f}] {a["best"]:7.1f}  '
            f'{b["median"]:9.1f} [{b["p10"]:6.1f}-{b["p90"]:7.1f}] {b["best"]:7.1f}  '
            f'{a["median"] / b["median"]:9.2f} {a["best"] / b["best"]:10.2f}'
        )

    row('full chain', t_ours, t_sp)
    for (name, f_ours), (_, f_sp) in zip(ours_stages(robot, **st), spartpy_stages(sp, **st)):
        a, b = interleaved_us([f_ours, f_sp], max(args.reps // 2, 100), args.warmup // 4)
        row('  ' + name, a, b)
    ratio = t_ours['median'] / t_sp['median']
    verdict = 'ours is faster' if ratio < 1 else 'ours is SLOWER'
    print(
        f'\nours/spartpy (full chain, medians) = {ratio:.2f}  ({verdict}); '
        f'best blocks: {t_ours["best"] / t_sp["best"]:.2f}'
    )

    if args.profile:
        profile_ours(robot, st)
    if args.whatif:
        what_if(robot, st, sp, args.reps, args.warmup)
    return 0


if __name__ == '__main__':
    sys.exit(main())
