#!/usr/bin/env python3
"""
Benchmark: generated code (spart_ros.codegen) beside FastDynamics and Pinocchio.

Part 1, generation (per model: SPART's SC_3DoF, the planar arm, KUKA iiwa, random serial
chains of 4 to 30 revolute joints with random axes and frames, the worst case for the
generator's sparsity): seconds to generate H, C, bias, g, ID, FD, J and pose of the last
link (without the size limit, to measure beyond it); scalar operations per function (after
sharing); bytes of the Python and C files; the time the system C compiler (gcc -O2) and numba
take to compile them (up to --gcc-max and --numba-max joints); then the default size limit at
work on a 20-joint chain (CodegenLimitError).

Part 2, per call (fixed-base robots with 2 to 7 joints, then two on SPART's floating base;
the same model and state on every side, gravity (0, 0, -9.81) part of every model):
microseconds per warm call of

    generated (numba)          FastDynamics (floating=False)        Pinocchio
    ID_into(q, qd, qdd, out)   inverse_dynamics(...)                rnea(q, v, a)
    bias_into(q, qd, out)      bias_forces(...)                     nonLinearEffects(q, v)
    H_into(q, out)             mass_matrix(R0, r0, q)               crba(q)
    FD_into(q, qd, tau, out)   forward_dynamics(...)                aba(q, v, tau)
    J_<link>_into(q, out)      jacobian(link, ..., bias=False)      computeJointJacobians +
    getJointJacobian
    FID_into (floating base)   floating_inverse_dynamics(...)       (no twin)

measured in alternating blocks (bench_fast_path.interleaved: ~1 ms blocks, order flipped every
round, medians), printed with the ratios generated / FastDynamics and generated / Pinocchio,
and a check column: the largest difference generated - FastDynamics (relative, floor 1).
The "alloc" column times the allocating form (ID(q, qd, qdd): a new array per call).

    python benchmarks/bench_codegen.py            # ~3 min on 2 busy cores
    python benchmarks/bench_codegen.py --quick    # fewer rounds, smaller models
Not a test: the exit code is 0 either way.
"""

import argparse
import os
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for p in (ROOT, os.path.join(ROOT, 'test'), os.path.join(ROOT, 'benchmarks')):
    if p not in sys.path:
        sys.path.insert(0, p)

from bench_fast_path import Case, interleaved, timeit_block  # noqa: E402
from core_helpers import serial_chain_urdf, urdf_path  # noqa: E402
import numpy as np  # noqa: E402
from spart_ros import codegen, spart  # noqa: E402
from spart_ros.codegen.build import find_c_compiler  # noqa: E402
from spart_ros.codegen.generator import identifier  # noqa: E402
from spart_ros.core.base_state import link_frame_from_base  # noqa: E402

QUANTITIES = ['H', 'C', 'bias', 'g', 'ID', 'FD']


def text_of(name):
    with open(urdf_path(name), encoding='utf-8') as f:
        return f.read()


def last_link(robot):
    return max((j for j in robot.joints if j.type), key=lambda j: j.q_id).child_link


# --- part 1: generation --------------------------------------------------------------------------


def generation_rows(models, gcc_max, numba_max):
    cc = find_c_compiler()
    hdr = (
        f'{"model":<24} {"nq":>3} {"gen s":>6} {"H ops":>7} {"C ops":>7} {"ID ops":>7} '
        f'{"FD ops":>7} {"py kB":>7} {"C kB":>7} {"gcc s":>7} {"numba s":>8}'
    )
    print(hdr)
    print('-' * len(hdr))
    for label, text in models:
        robot = spart.urdf2robot(text)[0]
        link = last_link(robot)
        t = time.perf_counter()
        code = codegen.generate(
            robot, QUANTITIES + [f'J:{link}', f'pose:{link}'], language='all', max_operations=None
        )  # measured beyond the default limit too
        gen = time.perf_counter() - t
        ops = {
            f.alias: f'{f.operations}{"*" if f.operations > codegen.MAX_OPERATIONS else ""}'
            for f in code.functions
        }
        directory = tempfile.mkdtemp(prefix='bench_codegen_')
        code.write(directory)
        gcc = numba_s = '-'
        if cc is not None and robot.n_q <= gcc_max:
            t = time.perf_counter()
            codegen.compile_c(os.path.join(directory, f'{code.name}.c'))
            gcc = f'{time.perf_counter() - t:.1f}'
        if robot.n_q <= numba_max:
            t = time.perf_counter()
            module = codegen.load_python(
                os.path.join(directory, f'{code.name}.py'), f'bench_gen_{identifier(label)}'
            )
            q = np.zeros(robot.n_q)
            for f in code.functions:
                getattr(module, f.name)(*([q] * len(f.args)) if f.alias != 'FD' else (q, q, q))
            numba_s = f'{time.perf_counter() - t:.1f}'
        print(
            f'{label:<24} {robot.n_q:>3} {gen:6.2f} {ops["H"]:>7} {ops["C"]:>7} {ops["ID"]:>7} '
            f'{ops["FD"]:>7} {len(code.files[code.name + ".py"]) / 1e3:7.0f} '
            f'{len(code.files[code.name + ".c"]) / 1e3:7.0f} {gcc:>7} {numba_s:>8}',
            flush=True,
        )


def limit_row(n):
    robot = spart.urdf2robot(serial_chain_urdf(n, seed=1))[0]
    t = time.perf_counter()
    try:
        code = codegen.generate(robot, QUANTITIES)
        print(
            f'chain {n}: generated within the limits ({time.perf_counter() - t:.1f} s): '
            + ', '.join(f'{f.alias} {f.operations}' for f in code.functions)
        )
    except codegen.CodegenLimitError as error:
        print(f'chain {n}: CodegenLimitError after {time.perf_counter() - t:.1f} s: {error}')


# --- part 2: per call ----------------------------------------------------------------------------


class Generated:
    """
    A Case and the generated module of the same model.

    The Case: bench_fast_path's (FastDynamics, Pinocchio, one state); the generated module: a fixed
    base at the Case's R0, r0, or SPART's floating base.
    """

    def __init__(self, label, text, directory, floating=False):
        self.case = c = Case(label, text, floating=floating)
        self.floating = floating
        s = c.s
        T = None
        if not floating:
            R_b, p_b, _, _ = link_frame_from_base(c.robot, s.R0, s.r0)
            T = np.eye(4)
            T[:3, :3], T[:3, 3] = R_b, p_b
        self.link_fn = f'J_{identifier(c.link_name)}'
        quantities = ['ID', 'bias', 'H', 'FD', f'J:{c.link}'] + (['FID'] if floating else [])
        code = codegen.generate(
            c.robot,
            quantities,
            base='floating' if floating else 'fixed',
            base_pose=T,
            gravity=c.fd.gravity,
            name=f'bench_{identifier(label)}',
        )
        code.write(directory)
        self.gen = codegen.load_python(os.path.join(directory, f'{code.name}.py'), code.name)
        nu = c.robot.n_q + (6 if floating else 0)
        self.out = {'out_n': np.empty(nu), 'out_H': np.empty((nu, nu)), 'out_J': np.empty((6, nu))}

    def namespace(self):
        ns = self.case.namespace()
        ns.update(
            gen=self.gen,
            Jfn=getattr(self.gen, self.link_fn),
            Jinto=getattr(self.gen, self.link_fn + '_into'),
            **self.out,
        )
        return ns

    def rows(self):
        """(row, generated _into, generated allocating, FastDynamics, Pinocchio or None)."""
        if self.floating:
            return [
                (
                    'ID',
                    'gen.ID_into(R0, qm, u0, um, u0dot, umdot, out_n)',
                    'gen.ID(R0, qm, u0, um, u0dot, umdot)',
                    'fd.inverse_dynamics(R0, r0, qm, u0, um, u0dot, umdot)',
                    'pin.rnea(m, d, q, v, a)',
                ),
                (
                    'bias',
                    'gen.bias_into(R0, qm, u0, um, out_n)',
                    'gen.bias(R0, qm, u0, um)',
                    'fd.bias_forces(R0, r0, qm, u0, um)',
                    'pin.nonLinearEffects(m, d, q, v)',
                ),
                (
                    'H',
                    'gen.H_into(R0, qm, out_H)',
                    'gen.H(R0, qm)',
                    'fd.mass_matrix(R0, r0, qm)',
                    'pin.crba(m, d, q)',
                ),
                (
                    'FD',
                    'gen.FD_into(R0, qm, u0, um, tau0, taum, out_n)',
                    'gen.FD(R0, qm, u0, um, tau0, taum)',
                    'fd.forward_dynamics(R0, r0, qm, u0, um, tau0, taum)',
                    'pin.aba(m, d, q, v, tau)',
                ),
                (
                    'FID',
                    'gen.FID_into(R0, qm, u0, um, umdot, out_n)',
                    'gen.FID(R0, qm, u0, um, umdot)',
                    'fd.floating_inverse_dynamics(R0, r0, qm, u0, um, umdot)',
                    None,
                ),
                (
                    'J',
                    'Jinto(R0, qm, out_J)',
                    'Jfn(R0, qm)',
                    'fd.jacobian(link, R0, r0, qm, bias=False)',
                    'pin.computeJointJacobians(m, d, q); pin.getJointJacobian(m, d, jid, LWA)',
                ),
            ]
        return [
            (
                'ID',
                'gen.ID_into(qm, um, umdot, out_n)',
                'gen.ID(qm, um, umdot)',
                'fd.inverse_dynamics(R0, r0, qm, u0, um, u0dot, umdot, floating=False)',
                'pin.rnea(m, d, q, v, a)',
            ),
            (
                'bias',
                'gen.bias_into(qm, um, out_n)',
                'gen.bias(qm, um)',
                'fd.bias_forces(R0, r0, qm, u0, um, floating=False)',
                'pin.nonLinearEffects(m, d, q, v)',
            ),
            (
                'H',
                'gen.H_into(qm, out_H)',
                'gen.H(qm)',
                'fd.mass_matrix(R0, r0, qm)',
                'pin.crba(m, d, q)',
            ),
            (
                'FD',
                'gen.FD_into(qm, um, taum, out_n)',
                'gen.FD(qm, um, taum)',
                'fd.forward_dynamics(R0, r0, qm, u0, um, tau0, taum, floating=False)',
                'pin.aba(m, d, q, v, tau)',
            ),
            (
                'J',
                'Jinto(qm, out_J)',
                'Jfn(qm)',
                'fd.jacobian(link, R0, r0, qm, bias=False)',
                'pin.computeJointJacobians(m, d, q); pin.getJointJacobian(m, d, jid, LWA)',
            ),
        ]

    def check(self):
        """Largest relative difference generated - FastDynamics per row."""
        c, s, gen = self.case, self.case.s, self.gen
        fd = c.fd
        cat = np.concatenate

        def rel(a, b):
            return float(np.abs(np.asarray(a) - b).max() / max(1.0, np.abs(b).max()))

        J = fd.jacobian(c.link, s.R0, s.r0, s.qm, bias=False)[0]
        if self.floating:
            return {
                'ID': rel(
                    gen.ID(s.R0, s.qm, s.u0, s.um, s.u0dot, s.umdot),
                    cat(fd.inverse_dynamics(s.R0, s.r0, s.qm, s.u0, s.um, s.u0dot, s.umdot)),
                ),
                'bias': rel(
                    gen.bias(s.R0, s.qm, s.u0, s.um),
                    cat(fd.bias_forces(s.R0, s.r0, s.qm, s.u0, s.um)),
                ),
                'H': rel(gen.H(s.R0, s.qm), fd.mass_matrix(s.R0, s.r0, s.qm)),
                'FD': rel(
                    gen.FD(s.R0, s.qm, s.u0, s.um, s.tau0, s.taum),
                    cat(fd.forward_dynamics(s.R0, s.r0, s.qm, s.u0, s.um, s.tau0, s.taum)),
                ),
                'FID': rel(
                    gen.FID(s.R0, s.qm, s.u0, s.um, s.umdot),
                    cat(fd.floating_inverse_dynamics(s.R0, s.r0, s.qm, s.u0, s.um, s.umdot)[::-1]),
                ),
                'J': rel(getattr(gen, self.link_fn)(s.R0, s.qm), J),
            }
        z6 = np.zeros(6)
        return {
            'ID': rel(
                gen.ID(s.qm, s.um, s.umdot),
                fd.inverse_dynamics(s.R0, s.r0, s.qm, z6, s.um, z6, s.umdot, floating=False)[1],
            ),
            'bias': rel(
                gen.bias(s.qm, s.um), fd.bias_forces(s.R0, s.r0, s.qm, z6, s.um, floating=False)[1]
            ),
            'H': rel(gen.H(s.qm), fd.mass_matrix(s.R0, s.r0, s.qm)[6:, 6:]),
            'FD': rel(
                gen.FD(s.qm, s.um, s.taum),
                fd.forward_dynamics(s.R0, s.r0, s.qm, z6, s.um, z6, s.taum, floating=False)[1],
            ),
            'J': rel(getattr(gen, self.link_fn)(s.qm), J[:, 6:]),
        }


def call_rows(models, rounds, block_s, floating=False):
    directory = tempfile.mkdtemp(prefix='bench_codegen_calls_')
    hdr = (
        f'{"robot":<26} {"nq":>3} {"row":<5} {"gen us":>7} {"alloc":>7} {"fd us":>7} '
        f'{"pin us":>7} {"gen/fd":>7} {"gen/pin":>7} {"check":>8}'
    )
    print(hdr)
    print('-' * len(hdr))
    slower = []
    for label, text in models:
        t = time.perf_counter()
        g = Generated(label, text, directory, floating)
        ns = g.namespace()
        for row in g.rows():  # first calls: numba compiles (or loads its cache)
            for stmt in row[1:3]:
                eval(stmt, ns)
        compiled = time.perf_counter() - t
        checks = g.check()
        for name, into, alloc, ours, theirs in g.rows():
            stmts = [into, alloc, ours] + ([theirs] if theirs else [])
            times, _, _ = interleaved([timeit_block(s, ns) for s in stmts], rounds, block_s)
            t_gen, t_alloc, t_fd = times[:3]
            t_pin = times[3] if theirs else None
            if t_gen > t_fd:
                slower.append(f'{label} {name}')
            pin_us, pin_ratio = (
                (f'{t_pin * 1e6:7.2f}', f'{t_gen / t_pin:7.2f}') if theirs else ('-', '-')
            )
            print(
                f'{label:<26} {g.case.robot.n_q:>3} {name:<5} {t_gen * 1e6:7.2f} '
                f'{t_alloc * 1e6:7.2f} {t_fd * 1e6:7.2f} {pin_us:>7} {t_gen / t_fd:7.2f} '
                f'{pin_ratio:>7} {checks[name]:8.1e}',
                flush=True,
            )
        print(
            f'  (generation, numba compilation or cache load and first calls: {compiled:.1f} s)\n'
        )
    return slower


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--quick', action='store_true', help='fewer rounds, models up to 15 joints')
    ap.add_argument(
        '--rounds',
        type=int,
        default=None,
        help='alternating rounds per row (default 100, quick 20)',
    )
    ap.add_argument(
        '--block-ms', type=float, default=None, help='duration of one block (default 1, quick 0.5)'
    )
    ap.add_argument(
        '--max-links',
        type=int,
        default=None,
        help='largest generated chain (default 30, quick 15)',
    )
    ap.add_argument(
        '--gcc-max',
        type=int,
        default=None,
        help='compile C up to this many joints (default 15, quick 7)',
    )
    ap.add_argument(
        '--numba-max', type=int, default=7, help='compile with numba up to this many joints'
    )
    ap.add_argument('--skip-generation', action='store_true')
    ap.add_argument('--skip-calls', action='store_true')
    ap.add_argument('--skip-floating', action='store_true', help='no floating-base rows')
    args = ap.parse_args(argv)
    rounds = args.rounds or (20 if args.quick else 100)
    block_s = (args.block_ms or (0.5 if args.quick else 1.0)) / 1e3
    max_links = args.max_links or (15 if args.quick else 30)
    gcc_max = args.gcc_max or (7 if args.quick else 15)
    import numba
    import pinocchio as pin

    print(
        f'python {sys.version.split()[0]}, numpy {np.__version__}, numba {numba.__version__}, '
        f'pinocchio {pin.__version__}, C compiler {find_c_compiler()}; {os.cpu_count()} CPUs, '
        f'load average {" ".join(f"{x:.2f}" for x in os.getloadavg())}'
    )
    start = time.perf_counter()
    if not args.skip_generation:
        print('\n== generation: all of H, C, bias, g, ID, FD, J and pose of the last link ==')
        models = [
            ('planar_two_link', text_of('planar_two_link')),
            ('SC_3DoF', text_of('SC_3DoF')),
            ('kuka_iiwa', text_of('kuka_iiwa')),
        ]
        models += [
            (f'chain {n}', serial_chain_urdf(n, seed=1))
            for n in (4, 7, 10, 15, 20, 30)
            if n <= max_links
        ]
        generation_rows(models, gcc_max, args.numba_max)
        print(
            f'* above the default limit (max_operations={codegen.MAX_OPERATIONS} per function; '
            'measured here with no limit); the limit at work:'
        )
        limit_row(20)
    slower = []
    if not args.skip_calls:
        print(
            f'\n== per call, fixed base, {rounds} alternating rounds of ~{block_s * 1e3:g} ms '
            'blocks; us = median of block means =='
        )
        models = [
            ('planar_two_link', text_of('planar_two_link')),
            ('SC_3DoF (fixed)', text_of('SC_3DoF')),
            ('chain 4', serial_chain_urdf(4, seed=1)),
            ('chain 5', serial_chain_urdf(5, seed=1)),
            ('chain 6', serial_chain_urdf(6, seed=1)),
            ('kuka_iiwa', text_of('kuka_iiwa')),
            ('arm7_floating (fixed)', text_of('arm7_floating')),
        ]
        slower = call_rows(models, rounds, block_s)
        if not args.skip_floating:
            print(
                "== per call, SPART's floating base (u = [u0; qd], R0 an input; Pinocchio: a free "
                'flyer, its state mapped by test/pinocchio_oracle.py) =='
            )
            models = [
                ('SC_3DoF (floating)', text_of('SC_3DoF')),
                ('arm7_floating (floating)', text_of('arm7_floating')),
            ]
            slower += call_rows(models, rounds, block_s, floating=True)
        print(
            'gen = the generated, numba-compiled <name>_into with a preallocated output (as '
            'FastDynamics keeps its own outputs); alloc = <name>(...) returning a new array; '
            'check = max |gen - FastDynamics| / max(1, |FastDynamics|)'
        )
    print(
        f'\nsummary: generated slower than FastDynamics in: {", ".join(slower) or "none"}; load '
        f'average now {" ".join(f"{x:.2f}" for x in os.getloadavg())}; '
        f'{time.perf_counter() - start:.0f} s'
    )
    return 0


if __name__ == '__main__':
    sys.exit(main())
