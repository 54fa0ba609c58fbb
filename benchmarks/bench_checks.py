#!/usr/bin/env python3
"""
Benchmark: what the input checks cost per call (spart_ros.core._checks, issue 12).

Three comparisons, each timed in alternating blocks in one process (the machinery of
bench_fast_path.py: medians of block means, the order flipped every round):

1. FastDynamics, every method, now vs BEFORE the checks: the package as it was at the
   baseline commit (``--baseline``, default 7b241e2, the last commit before them) is
   extracted from git into a cache directory and imported as ``spart_ros_baseline``
   beside this tree's ``spart_ros``; same robot, same state, C-ordered float64 arrays
   (the fast path's documented fast call).  ratio = now / before.
2. The SPART-named functions (spart_ros.spart) on a 7-DoF arm on a floating base:
   checked (the public function) vs unchecked (the same function without its entry
   checks, ``fn.__wrapped__``: the compiled or numpy body only) and vs before.
3. The attitude helpers and base-state conversions: now vs before.

    python benchmarks/bench_checks.py            # ~2 min (the first run also compiles the
                                                 # baseline's kernels, ~30 s, cached after)
    python benchmarks/bench_checks.py --quick    # fewer rounds
Not a test: nothing here fails the build; the exit code is 0 either way.
"""

import argparse
import importlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
for p in (ROOT, os.path.join(ROOT, 'test'), HERE):
    if p not in sys.path:
        sys.path.insert(0, p)

from bench_fast_path import interleaved, timeit_block  # noqa: E402
from core_helpers import load_robot, random_state, serial_chain_urdf  # noqa: E402
import numpy as np  # noqa: E402

BASELINE = '7b241e2'  # the last commit before the input checks of issue 12
CACHE = os.path.join(os.path.expanduser('~'), '.cache', 'spart_ros_bench')


def baseline_package(ref):
    """
    Import the package ``spart_ros`` of git commit ``ref`` as ``spart_ros_baseline``.

    Extracted once into ~/.cache/spart_ros_bench/<sha>/; numba caches its kernels there.
    """
    sha = subprocess.run(
        ['git', '-C', ROOT, 'rev-parse', ref], capture_output=True, text=True, check=True
    ).stdout.strip()
    top = os.path.join(CACHE, sha)
    pkg = os.path.join(top, 'spart_ros_baseline')
    if not os.path.isdir(pkg):
        data = subprocess.run(
            ['git', '-C', ROOT, 'archive', sha, 'spart_ros'], capture_output=True, check=True
        ).stdout
        tmp = os.path.join(top, 'tmp')
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(tmp)
        os.rename(os.path.join(tmp, 'spart_ros'), pkg)
        shutil.rmtree(tmp)
    if top not in sys.path:
        sys.path.insert(0, top)
    base = importlib.import_module('spart_ros_baseline')
    importlib.import_module('spart_ros_baseline.spart')
    importlib.import_module('spart_ros_baseline.core.fast')
    importlib.import_module('spart_ros_baseline.core.base_state')
    return sha[:10], base


def baseline_robot(robot, spart_then):
    """
    Rebuild ``robot`` with the baseline's model classes: the same numbers, its Robot type.

    The baseline's URDF loader needs urdf_parser_py, no longer installed.
    """
    M = importlib.import_module(spart_then.__name__.rsplit('.', 1)[0] + '.core.model')
    b = robot.base_link
    links = [
        M.Link(k.id, k.name, k.parent_joint, k.mass, k.inertia, k.T) for k in robot.links
    ]
    joints = [
        M.Joint(j.id, j.name, j.type, j.q_id, j.parent_link, j.child_link, j.axis, j.T)
        for j in robot.joints
    ]
    return M.Robot(robot.name, M.BaseLink(b.name, b.mass, b.inertia, b.T), links, joints)


def ratio_row(label, stmts, ns, rounds, block_s, width=44):
    """Time the statements (first = ours now) interleaved; print us and ratios to the others."""
    med, paired, _ = interleaved([timeit_block(s, ns) for s in stmts], rounds, block_s)
    cells = ' '.join(f'{t * 1e6:9.2f}' for t in med)
    ratios = ' '.join(f'{med[0] / t:7.3f}' for t in med[1:])
    print(f'  {label:<{width}} {cells}  {ratios}', flush=True)
    return [med[0] / t for t in med[1:]]


def fast_rows(spart_now, spart_then, FastNow, FastThen, rounds, block_s):
    print('1. FastDynamics, now vs before the checks (us per call; ratio = now / before)')
    print(f'  {"robot / method":<44} {"now":>9} {"before":>9}  {"ratio":>7}')
    robots = [
        ('SC_3DoF', 'SC_3DoF', True),
        ('kuka_iiwa (fixed)', 'kuka_iiwa', False),
        ('branched_two_arm_spacecraft', 'branched_two_arm_spacecraft', True),
        ('chain 30', None, True),
    ]
    worst = []
    for label, model, floating in robots:
        robot_now = (
            spart_now.urdf2robot(serial_chain_urdf(30, seed=1))[0]
            if model is None
            else load_robot(model)
        )
        robot_then = baseline_robot(robot_now, spart_then)
        g = np.array([0.0, 0.0, -9.81])
        ns = {'now': FastNow(robot_now, gravity=g), 'then': FastThen(robot_then, gravity=g)}
        s = random_state(robot_now, 0)
        for k, v in vars(s).items():
            ns[k] = np.ascontiguousarray(v, dtype=float)
        ns['link'] = robot_now.n_links_joints
        fl = '' if floating else ', floating=False'
        calls = [
            ('inverse_dynamics', f'inverse_dynamics(R0, r0, qm, u0, um, u0dot, umdot{fl})'),
            ('forward_dynamics', f'forward_dynamics(R0, r0, qm, u0, um, tau0, taum{fl})'),
            ('mass_matrix', 'mass_matrix(R0, r0, qm)'),
            ('jacobian(bias=False)', 'jacobian(link, R0, r0, qm, bias=False)'),
            ('jacobian', f'jacobian(link, R0, r0, qm, u0, um{fl})'),
            ('bias_forces', f'bias_forces(R0, r0, qm, u0, um{fl})'),
            ('gravity_forces', 'gravity_forces(R0, r0, qm)'),
            ('twists', f'twists(R0, r0, qm, u0, um{fl})'),
        ]
        if floating:
            calls.append(
                (
                    'floating_inverse_dynamics',
                    'floating_inverse_dynamics(R0, r0, qm, u0, um, umdot)',
                )
            )
        for name, call in calls:
            r = ratio_row(f'{label}: {name}', [f'now.{call}', f'then.{call}'], ns, rounds, block_s)
            worst.append((r[0], f'{label}: {name}'))
        print()
    worst.sort(reverse=True)
    print(
        '  largest ratios now / before: ' + ', '.join(f'{n} {r:.3f}' for r, n in worst[:5]) + '\n'
    )


def spart_rows(spart_now, spart_then, rounds, block_s):
    print(
        '2. SPART-named functions, kuka_iiwa on a floating base (us per call; ratios of "checked" '
        '= the public function now)'
    )
    print(
        f'  {"function":<44} {"checked":>9} {"unchecked":>9} {"before":>9}  {"/unchk":>7} '
        f'{"/before":>7}'
    )
    robot = load_robot('kuka_iiwa')
    robot_then = baseline_robot(robot, spart_then)
    s = random_state(robot, 0)
    ns = {k: np.ascontiguousarray(v, dtype=float) for k, v in vars(s).items()}
    ns.update(robot=robot, robot_then=robot_then, S=spart_now, B=spart_then)
    ev = dict(ns)
    exec(
        'RJ, RL, rJ, rL, e, g = S.Kinematics(R0, r0, qm, robot);'
        'Bij, Bi0, P0, pm = S.DiffKinematics(R0, r0, rL, e, g, robot);'
        't0, tL = S.Velocities(Bij, Bi0, P0, pm, u0, um, robot);'
        't0dot, tLdot = S.Accelerations(t0, tL, P0, pm, Bi0, Bij, u0, um, u0dot, umdot, robot);'
        'I0, Im = S.I_I(R0, RL, robot);'
        'M0_tilde, Mm_tilde = S.MCB(I0, Im, Bij, Bi0, robot);'
        'H0, H0m, Hm = S.GIM(M0_tilde, Mm_tilde, Bij, Bi0, P0, pm, robot);'
        'N = S.NOC(r0, rL, P0, pm, robot); Ndot = S.NOCdot(r0, t0, rL, tL, P0, pm, robot);'
        'rp, tp = rL[:, 6], tL[:, 6]',
        ev,
    )
    ns.update({k: v for k, v in ev.items() if k not in ns and not k.startswith('__')})
    calls = [
        ('Kinematics', 'Kinematics(R0, r0, qm, {r})'),
        ('DiffKinematics', 'DiffKinematics(R0, r0, rL, e, g, {r})'),
        ('Velocities', 'Velocities(Bij, Bi0, P0, pm, u0, um, {r})'),
        ('Accelerations', 'Accelerations(t0, tL, P0, pm, Bi0, Bij, u0, um, u0dot, umdot, {r})'),
        ('I_I', 'I_I(R0, RL, {r})'),
        ('ID', 'ID(wF0, wFm, t0, tL, t0dot, tLdot, P0, pm, I0, Im, Bij, Bi0, {r})'),
        ('FD', 'FD(tau0, taum, wF0, wFm, t0, tL, P0, pm, I0, Im, Bij, Bi0, u0, um, {r})'),
        (
            'Floating_ID',
            'Floating_ID(wF0, wFm, Mm_tilde, H0, t0, tL, P0, pm, I0, Im, Bij, Bi0, u0, um, umdot, '
            '{r})',
        ),
        ('MCB', 'MCB(I0, Im, Bij, Bi0, {r})'),
        ('GIM', 'GIM(M0_tilde, Mm_tilde, Bij, Bi0, P0, pm, {r})'),
        ('CIM', 'CIM(t0, tL, I0, Im, M0_tilde, Mm_tilde, Bij, Bi0, P0, pm, {r})'),
        ('Jacob', 'Jacob(rp, r0, rL, P0, pm, 7, {r})'),
        ('Jacobdot', 'Jacobdot(rp, tp, r0, t0, rL, tL, P0, pm, 7, {r})'),
        ('Center_of_Mass', 'Center_of_Mass(r0, rL, {r})'),
        ('NOC', 'NOC(r0, rL, P0, pm, {r})'),
        ('GIM_NOC', 'GIM_NOC(N, I0, Im, {r})'),
        ('CIM_NOC', 'CIM_NOC(N, Ndot, t0, tL, I0, Im, {r})'),
    ]
    ratios = []
    for name, call in calls:
        now = 'S.' + call.format(r='robot')
        unchecked = f'S.{name}.__wrapped__(' + call.format(r='robot').split('(', 1)[1]
        then = 'B.' + call.format(r='robot_then')
        ratios.append((name, ratio_row(name, [now, unchecked, then], ns, rounds, block_s)))
    print(
        "  (unchecked = fn.__wrapped__: the body only; what it calls is still checked, e.g. NOC's "
        'Jacob calls)'
    )
    print(
        '  median ratio checked / unchecked: '
        f'{np.median([r[0] for _, r in ratios]):.3f}; checked / before: '
        f'{np.median([r[1] for _, r in ratios]):.3f}\n'
    )


def helper_rows(spart_now, spart_then, base_now, base_then, rounds, block_s):
    print(
        '3. Attitude helpers and base-state conversions, now vs before (us per call; ratio = now '
        '/ before)'
    )
    print(f'  {"function":<44} {"now":>9} {"before":>9}  {"ratio":>7}')
    rng = np.random.default_rng(0)
    q = rng.standard_normal(4)
    q /= np.linalg.norm(q)
    robot = load_robot('branched_two_arm_spacecraft')
    robot_then = baseline_robot(robot, spart_then)
    R = np.ascontiguousarray(spart_now.quat_DCM(q).T)
    ns = {
        'S': spart_now,
        'B': spart_then,
        'BSn': base_now,
        'BSt': base_then,
        'q': q,
        'R': R,
        'D': np.ascontiguousarray(R.T),
        'a': rng.uniform(-1, 1, 3),
        'e': np.array([0.0, 0.6, 0.8]),
        'x': rng.standard_normal(3),
        'v': rng.standard_normal(3),
        'w': rng.standard_normal(3),
        'p': rng.standard_normal(3),
        'u0': rng.standard_normal(6),
        'robot': robot,
        'robot_then': robot_then,
    }
    rows = [
        ('quat_DCM', 'S.quat_DCM(q)', 'B.quat_DCM(q)'),
        ('DCM_quat', 'S.DCM_quat(D)', 'B.DCM_quat(D)'),
        ('Angles321_DCM', 'S.Angles321_DCM(a)', 'B.Angles321_DCM(a)'),
        ('DCM_Angles321', 'S.DCM_Angles321(D)', 'B.DCM_Angles321(D)'),
        ('Euler_DCM', 'S.Euler_DCM(e, 0.3)', 'B.Euler_DCM(e, 0.3)'),
        ('SkewSym', 'S.SkewSym(x)', 'B.SkewSym(x)'),
        (
            'base_from_link_frame',
            'BSn.base_from_link_frame(robot, R, p, v, w)',
            'BSt.base_from_link_frame(robot_then, R, p, v, w)',
        ),
        (
            'link_frame_from_base',
            'BSn.link_frame_from_base(robot, R, p, u0)',
            'BSt.link_frame_from_base(robot_then, R, p, u0)',
        ),
    ]
    for name, now, then in rows:
        ratio_row(name, [now, then], ns, rounds, block_s)
    print()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument(
        '--baseline', default=BASELINE, help=f'git commit of "before" (default {BASELINE})'
    )
    ap.add_argument('--quick', action='store_true', help='fewer rounds, shorter blocks')
    ap.add_argument(
        '--rounds',
        type=int,
        default=None,
        help='alternating rounds per row (default 60, quick 15)',
    )
    ap.add_argument(
        '--only', choices=('fast', 'spart', 'helpers'), default=None, help='one section only'
    )
    args = ap.parse_args(argv)
    rounds = args.rounds or (15 if args.quick else 60)
    block_s = (0.5 if args.quick else 1.0) / 1e3
    t0 = time.perf_counter()
    sha, base = baseline_package(args.baseline)
    from spart_ros import spart as spart_now
    from spart_ros.core import base_state as base_now
    from spart_ros.core.fast import FastDynamics as FastNow

    spart_then = base.spart
    print(
        f'baseline: {args.baseline} ({sha}) imported as spart_ros_baseline from '
        f'{os.path.dirname(base.__file__)}'
    )
    print(
        f'{rounds} alternating rounds of ~{block_s * 1e3:g} ms blocks per row; load average '
        f'{" ".join(f"{x:.2f}" for x in os.getloadavg())}\n'
    )
    if args.only in (None, 'fast'):
        fast_rows(spart_now, spart_then, FastNow, base.core.fast.FastDynamics, rounds, block_s)
    if args.only in (None, 'spart'):
        spart_rows(spart_now, spart_then, rounds, block_s)
    if args.only in (None, 'helpers'):
        helper_rows(spart_now, spart_then, base_now, base.core.base_state, rounds, block_s)
    print(
        f'load average now {" ".join(f"{x:.2f}" for x in os.getloadavg())}; '
        f'{time.perf_counter() - t0:.0f} s'
    )
    return 0


if __name__ == '__main__':
    sys.exit(main())
