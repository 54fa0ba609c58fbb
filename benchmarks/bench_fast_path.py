#!/usr/bin/env python3
"""
Benchmark: the fast path (spart_ros.core.fast.FastDynamics) beside Pinocchio.

For each robot (SPART's 3-DoF spacecraft, floating and fixed, a 7-DoF arm on a fixed base, a
7-DoF arm on a floating base, the branched two-arm spacecraft, generated serial chains of 3, 10
and 30 links on a fixed base and of 10, 30 and 100 links on a floating base; ``--corpus`` adds
real robots of pybullet_data: quadrupeds on a floating base, arms on a fixed one), on the same
model and the same state (Pinocchio's state is
SPART's mapped through test/pinocchio_oracle.py, and a check column gives the largest
relative difference of the results), prints the median microseconds per warm call of

    ours                                    Pinocchio
    inverse_dynamics (model gravity)        rnea(q, v, a)            (model.gravity)
    forward_dynamics (model gravity)        aba(q, v, tau)           (model.gravity)
    mass_matrix (full (6+n_q)^2 H)          crba(q)
    jacobian(link, bias=False)              computeJointJacobians(q)
    jacobian(link, bias=False)              computeJointJacobians(q) + getJointJacobian(link)
    jacobian(link) (J and Jdot u)  [info]   computeJointJacobiansTimeVariation(q, v) +
                                            getJointJacobian + getJointJacobianTimeVariation

and the ratio ours/Pinocchio, PASS if <= 1.5 (goal 1.0; the info row is not judged).

Gravity (0, 0, -9.81) is a property of the model on both sides, set once and not passed
per call: FastDynamics(robot, gravity=GRAVITY) and Pinocchio's model.gravity.  ID and FD
are therefore timed WITHOUT a gravity= argument (rnea/aba take none), the like-for-like
comparison; a per-call gravity= still overrides the model's, but is not what is timed here.

Then the growth 100-link / 10-link time of ID and FD (target <= 12); the fixed cost of a call
(the same calls on a one-joint robot, beside Pinocchio's); and a breakdown of where our
microseconds go: the public method, the compiled kernel called directly from Python with exactly
the arguments the method passes it ((mi, mf, W) and the rest, recorded from the public call), and
the same kernel in a compiled (@njit) loop (pure machine code).

Timing: both sides are timeit statements (no lambda in the timed loop, gc off), run in
alternating blocks (~1 ms each; order flipped every round) many times; a time is the
median of the per-block means, the ratio is the ratio of those medians ("paired" = the
median of the per-round ratios, which cancels slow drifts of the machine load).

    python benchmarks/bench_fast_path.py            # full run, ~40 s
    python benchmarks/bench_fast_path.py --quick    # ~8 s
Pinocchio's models come from pin.buildModelFromXML (with pin.JointModelFreeFlyer() for a
floating base) on the URDF text with <limit> added where missing (pinocchio_oracle).
Not a test: nothing here fails the build; the exit code is 0 either way.
"""

import argparse
import os
import sys
import time
import timeit

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for p in (ROOT, os.path.join(ROOT, 'test')):
    if p not in sys.path:
        sys.path.insert(0, p)

from core_helpers import random_state, serial_chain_urdf, urdf_path  # noqa: E402
from numba import njit  # noqa: E402
import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402
from pinocchio_oracle import PinocchioOracle  # noqa: E402
from spart_ros import spart  # noqa: E402
from spart_ros.core import fast as fast_module  # noqa: E402
from spart_ros.core.fast import FastDynamics  # noqa: E402
from spart_ros.native import compiled  # noqa: E402
from spart_ros.native import kernels as K  # noqa: E402

TARGET_RATIO, GOAL_RATIO = 1.5, 1.0
TARGET_GROWTH = 12.0
GRAVITY = np.array([0.0, 0.0, -9.81])
LWA = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED


# --- robots and states ------------------------------------------------------------------------


def robots():
    """(label, urdf text, floating) of every benchmarked robot."""

    def text(name):
        with open(urdf_path(name), encoding='utf-8') as f:
            return f.read()

    return [
        ('SC_3DoF (floating)', text('SC_3DoF'), True),
        ('kuka_iiwa 7-DoF (fixed)', text('kuka_iiwa'), False),
        ('arm7_floating 7-DoF (floating)', text('arm7_floating'), True),
        ('branched_two_arm_spacecraft', text('branched_two_arm_spacecraft'), True),
        ('SC_3DoF (fixed)', text('SC_3DoF'), False),
        ('chain 3 (fixed)', serial_chain_urdf(3, seed=1), False),
        ('chain 10 (fixed)', serial_chain_urdf(10, seed=1), False),
        ('chain 30 (fixed)', serial_chain_urdf(30, seed=1), False),
        ('chain 10 (floating)', serial_chain_urdf(10, seed=1), True),
        ('chain 30 (floating)', serial_chain_urdf(30, seed=1), True),
        ('chain 100 (floating)', serial_chain_urdf(100, seed=1), True),
    ]


#: real robots of pybullet_data (--corpus): (file, floating)
CORPUS = (
    ('a1/a1.urdf', True),
    ('laikago/laikago_toes.urdf', True),
    ('mini_cheetah/mini_cheetah.urdf', True),
    ('franka_panda/panda.urdf', False),
    ('xarm/xarm6_robot.urdf', False),
    ('kuka_iiwa/model.urdf', False),
)


def corpus():
    import pybullet_data

    out = []
    for name, floating in CORPUS:
        path = os.path.join(pybullet_data.getDataPath(), name)
        if os.path.exists(path):
            with open(path, encoding='utf-8') as f:
                out.append(
                    (
                        f'{name.split("/")[-1][:-5]} ({"floating" if floating else "fixed"})',
                        f.read(),
                        floating,
                    )
                )
    return out


class Case:
    """One robot, our FastDynamics and Pinocchio's model/data, the same state for both."""

    def __init__(self, label, text, floating, seed=0):
        self.label, self.floating = label, floating
        self.robot, _ = spart.urdf2robot(text)
        self.fd = FastDynamics(
            self.robot, gravity=GRAVITY
        )  # the model's gravity, like model.gravity
        self.oracle = PinocchioOracle(text, self.robot.q_names, floating=floating)
        self.model, self.data = self.oracle.model, self.oracle.data
        s = random_state(self.robot, seed)
        for k, v in vars(s).items():  # C-ordered float64, as a node would pass
            setattr(s, k, np.ascontiguousarray(v, dtype=float))
        if not floating:
            s.u0[:], s.u0dot[:] = 0.0, 0.0
        self.s = s
        o = self.oracle
        self.q = o.q(s.R0, s.r0, s.qm)
        u, udot = o.u(s.u0, s.um), o.u(s.u0dot, s.umdot)
        T = o.T(s.R0)
        self.v = T @ u
        self.a = T @ udot + o.Tdot_u(s.R0, u)
        self.tau_spart = o.u(s.tau0, s.taum)
        self.tau = np.linalg.solve(T.T, self.tau_spart)
        o._set_gravity(s.R0, s.r0, GRAVITY)  # model.gravity for rnea/aba (in Pinocchio's world)
        # the Jacobian's link: the child link of the last moving joint (SPART numbering)
        moving = [j for j in self.robot.joints if j.type != 0]
        last = max(moving, key=lambda j: j.q_id)
        self.link = last.child_link
        self.link_name = self.robot.link_names[self.link]
        self.jid = self.model.getJointId(last.name)

    # -- the same physical quantity from both sides -------------------------------------------
    def check(self):
        """Largest relative difference ours vs Pinocchio (via the oracle) per algorithm."""
        s, fd, o, fl = self.s, self.fd, self.oracle, self.floating

        def rel(a, b):
            return float(np.abs(np.asarray(a) - b).max() / max(1.0, np.abs(b).max()))

        out = {}
        assert np.array_equal(fd.gravity, GRAVITY)
        # as timed: no gravity= argument, the model's gravity (GRAVITY) applies
        tau0, taum = fd.inverse_dynamics(
            s.R0, s.r0, s.qm, s.u0, s.um, s.u0dot, s.umdot, floating=fl
        )
        ours = np.concatenate([tau0, taum]) if fl else taum
        out['ID'] = rel(
            ours, o.inverse_dynamics(s.R0, s.r0, s.qm, s.u0, s.um, s.u0dot, s.umdot, GRAVITY)
        )
        u0dot, umdot = fd.forward_dynamics(
            s.R0, s.r0, s.qm, s.u0, s.um, s.tau0, s.taum, floating=fl
        )
        ours = np.concatenate([u0dot, umdot]) if fl else umdot
        out['FD'] = rel(
            ours, o.forward_dynamics(s.R0, s.r0, s.qm, s.u0, s.um, self.tau_spart, GRAVITY)
        )
        H = fd.mass_matrix(s.R0, s.r0, s.qm)
        out['H'] = rel(H if fl else H[6:, 6:], o.mass_matrix(s.R0, s.r0, s.qm))
        if fl:
            J, _ = fd.jacobian(self.link, s.R0, s.r0, s.qm, bias=False)
            out['J'] = rel(
                J,
                o.jacobian(
                    s.R0,
                    s.r0,
                    s.qm,
                    self.link_name,
                    fd.twists(s.R0, s.r0, s.qm, s.u0, s.um)[0][:, self.link],
                ),
            )
        else:  # Pinocchio's world is the base link frame: compare the joint columns, rotated
            J, _ = fd.jacobian(self.link, s.R0, s.r0, s.qm, bias=False)
            pin.computeJointJacobians(self.model, self.data, self.q)
            pin.updateFramePlacements(self.model, self.data)
            fid = self.model.getFrameId(self.link_name, pin.BODY)
            Jp = pin.getFrameJacobian(self.model, self.data, fid, LWA)
            Rw = o.base_pose(s.R0, s.r0)[0]
            p = Rw @ (
                o.link_com_pose(self.link_name)[1] - self.data.oMf[fid].translation
            )  # CoM - frame
            ang = Rw @ Jp[3:6][:, o.idx_v]
            lin = (
                Rw @ Jp[0:3][:, o.idx_v] + np.cross(ang.T, p).T
            )  # v_com = v_frame + w x (com - frame)
            out['J'] = rel(J[:, 6:], np.vstack([ang, lin]))
        # restore Pinocchio's gravity (the oracle's calls set it)
        o._set_gravity(s.R0, s.r0, GRAVITY)
        return out

    # -- timeit statements ----------------------------------------------------------------------
    def namespace(self):
        s = self.s
        return {
            'fd': self.fd,
            'pin': pin,
            'm': self.model,
            'd': self.data,
            'q': self.q,
            'v': self.v,
            'a': self.a,
            'tau': self.tau,
            'R0': s.R0,
            'r0': s.r0,
            'qm': s.qm,
            'u0': s.u0,
            'um': s.um,
            'u0dot': s.u0dot,
            'umdot': s.umdot,
            'tau0': s.tau0,
            'taum': s.taum,
            'g': GRAVITY,
            'fl': self.floating,
            'link': self.link,
            'jid': self.jid,
            'LWA': LWA,
        }

    def pairs(self):
        """
        (algorithm, our statement, Pinocchio's statement, judged).

        ID and FD pass no gravity: both sides use the gravity of their model (fd.gravity,
        model.gravity).
        """
        fl = '' if self.floating else ', floating=False'
        return [
            (
                'ID',
                f'fd.inverse_dynamics(R0, r0, qm, u0, um, u0dot, umdot{fl})',
                'pin.rnea(m, d, q, v, a)',
                True,
            ),
            (
                'FD',
                f'fd.forward_dynamics(R0, r0, qm, u0, um, tau0, taum{fl})',
                'pin.aba(m, d, q, v, tau)',
                True,
            ),
            ('H', 'fd.mass_matrix(R0, r0, qm)', 'pin.crba(m, d, q)', True),
            (
                'J / cJJ',
                'fd.jacobian(link, R0, r0, qm, bias=False)',
                'pin.computeJointJacobians(m, d, q)',
                True,
            ),
            (
                'J / cJJ+getJJ',
                'fd.jacobian(link, R0, r0, qm, bias=False)',
                'pin.computeJointJacobians(m, d, q); pin.getJointJacobian(m, d, jid, LWA)',
                True,
            ),
            (
                'J+Jdot u [info]',
                f'fd.jacobian(link, R0, r0, qm, u0, um{fl})',
                'pin.computeJointJacobiansTimeVariation(m, d, q, v); pin.getJointJacobian(m, d, '
                'jid, LWA); pin.getJointJacobianTimeVariation(m, d, jid, LWA)',
                False,
            ),
        ]


# --- timing -------------------------------------------------------------------------------------


def timeit_block(stmt, ns):
    """fn(number) -> seconds for ``number`` executions of ``stmt`` (timeit: gc off, no lambda)."""
    timer = timeit.Timer(stmt, globals=ns)
    return timer.timeit


def interleaved(block_fns, rounds, block_s, warmup=50):
    """
    Median per-call seconds of each block function, measured in alternating blocks.

    block_fns: fn(number) -> seconds for ``number`` calls.  Each block lasts ~block_s; the
    order of the functions is reversed every other round.  Returns (medians, paired ratios
    of each function to the last one: median over rounds of the per-round ratio, the
    per-round means (rounds, functions)).
    """
    for fn in block_fns:
        fn(warmup)
    # calibrate the block size on the slowest function
    per_call = max(min(fn(20) / 20 for _ in range(3)) for fn in block_fns)
    number = int(min(max(block_s / per_call, 3), 5000))
    means = np.empty((rounds, len(block_fns)))
    order = list(range(len(block_fns)))
    for r in range(rounds):
        for k in order if r % 2 == 0 else order[::-1]:
            means[r, k] = block_fns[k](number) / number
    med = np.median(means, axis=0)
    paired = np.median(means / means[:, -1:], axis=0)
    return med, paired, means


# --- diagnosis: where do our microseconds go? ----------------------------------------------------
# The kernels' entry signatures (spart_ros/native/kernels.py):
#   rnea(mi, mf, W, R0, r0, qm, u0, um, u0dot, umdot, gravity, floating, out)
#   aba(mi, mf, W, R0, r0, qm, u0, um, tau0, taum, gravity, floating, out)
#   crba(mi, mf, W, R0, r0, qm, H)
#   jacobian(mi, mf, W, R0, r0, qm, link, offset, J)                     (bias=False)
#   jacobian_and_bias(mi, mf, W, R0, r0, qm, u0, um, link, offset, floating, J, bias)
# (mi, mf) is the constant compiled model, W the FastDynamics' own workspace.  FastDynamics calls
# the compiled (ahead-of-time) functions, spart_ros.native.compiled.<kernel>, through module
# globals of spart_ros.core.fast (_rnea, _aba, _crba, _jacobian, _jacobian_and_bias) with its
# model, its workspace and the rest; gravity is the model's array unless a call gives one; ``out``
# is the method's own output array (the *_loads twins with wrenches are not timed here).  The
# kernel's arguments below are not retyped here: they are recorded from the public call itself
# (wrapped_call), so 'kernel' and 'njit' time exactly what the method runs.
#
# The @njit loops are compiled in each run (not cache=True): numba's on-disk cache of a
# function is keyed on its own source file only, so a cached loop would keep running the
# machine code of an older kernels.py after the kernels change.


@njit
def loop_rnea(number, mi, mf, W, R0, r0, qm, u0, um, u0dot, umdot, gravity, floating, out):
    acc = 0
    for _ in range(number):
        acc += K.rnea(mi, mf, W, R0, r0, qm, u0, um, u0dot, umdot, gravity, floating, out)
    return acc


@njit
def loop_aba(number, mi, mf, W, R0, r0, qm, u0, um, tau0, taum, gravity, floating, out):
    acc = 0
    for _ in range(number):
        acc += K.aba(mi, mf, W, R0, r0, qm, u0, um, tau0, taum, gravity, floating, out)
    return acc


@njit
def loop_crba(number, mi, mf, W, R0, r0, qm, H):
    acc = 0
    for _ in range(number):
        acc += K.crba(mi, mf, W, R0, r0, qm, H)
    return acc


@njit
def loop_jacobian(number, mi, mf, W, R0, r0, qm, link, offset, J):
    acc = 0
    for _ in range(number):
        acc += K.jacobian(mi, mf, W, R0, r0, qm, link, offset, J)
    return acc


@njit
def loop_jacobian_and_bias(number, mi, mf, W, R0, r0, qm, u0, um, link, offset, floating, J, bias):
    acc = 0
    for _ in range(number):
        acc += K.jacobian_and_bias(mi, mf, W, R0, r0, qm, u0, um, link, offset, floating, J, bias)
    return acc


LOOPS = {
    'rnea': loop_rnea,
    'aba': loop_aba,
    'crba': loop_crba,
    'jacobian': loop_jacobian,
    'jacobian_and_bias': loop_jacobian_and_bias,
}
# (row label, the timed row of pairs() whose statements it breaks down, kernel); both judged
# Jacobian rows time the same call of ours against a different Pinocchio statement
DIAGNOSED = (
    ('ID', 'ID', 'rnea'),
    ('FD', 'FD', 'aba'),
    ('H', 'H', 'crba'),
    ('J/cJJ', 'J / cJJ', 'jacobian'),
    ('J/cJJ+get', 'J / cJJ+getJJ', 'jacobian'),
    ('J+Jdot', 'J+Jdot u [info]', 'jacobian_and_bias'),
)


def wrapped_call(fd, kern, stmt, ns):
    """
    (kernel, kinds, args).

    The compiled function, its argument kinds and the full argument tuple (mi, mf, W, ...) that the
    public statement ``stmt`` passes to it through the checked call spart_ros.core.fast._call
    (native/_call.c), recorded by running the statement once with _call spied on.
    """
    checked = fast_module._call
    seen = []

    def spy(kernel, kinds, *a):
        seen.append((kernel, kinds, a))
        return checked(kernel, kinds, *a)

    fast_module._call = spy
    try:
        eval(stmt, ns)
    finally:
        fast_module._call = checked
    if len(seen) != 1 or seen[0][0] is not getattr(compiled, kern):
        raise SystemExit(f'{stmt}: expected one checked call of compiled.{kern}, got {seen}')
    kernel, kinds, args = seen[0]
    code = kernel(*args)
    if code != 0:
        raise SystemExit(f'{kern}{args}: error code {code}')
    return kernel, kinds, args


def njit_block(loop, args):
    def run(number):
        t = time.perf_counter()
        loop(number, *args)
        return time.perf_counter() - t

    return run


def describe_args(args):
    """
    Return the recorded arguments after (mi, mf, W), as kinds.

    Arrays by shape, None, scalars.
    """

    def one(a):
        if a is None:
            return 'None'
        if isinstance(a, np.ndarray):
            return f'{a.dtype}{list(a.shape)}'
        return repr(a)

    return ', '.join(['mi', 'mf', 'W'] + [one(a) for a in args[3:]])


def diagnosis_rows(case):
    """
    Return the rows of the call-overhead diagnosis.

    Each row: (algorithm, kernel name, [public method, checked compiled call, direct compiled call,
    kernel in an @njit loop, Pinocchio] block fns, recorded kernel arguments).
    """
    ns = case.namespace()
    pairs = {p[0]: p for p in case.pairs()}
    rows = []
    for label, alg, kern in DIAGNOSED:
        _, ours, theirs, _ = pairs[alg]
        kernel, kinds, args = wrapped_call(case.fd, kern, ours, ns)
        ns[f'{kern}_kernel'], ns[f'{kern}_kinds'], ns[f'{kern}_args'] = kernel, kinds, args
        ns['checked_call'] = compiled.call
        rows.append(
            (
                label,
                kern,
                [
                    timeit_block(ours, ns),
                    timeit_block(f'checked_call({kern}_kernel, {kern}_kinds, *{kern}_args)', ns),
                    timeit_block(f'{kern}_kernel(*{kern}_args)', ns),
                    njit_block(LOOPS[kern], args),
                    timeit_block(theirs, ns),
                ],
                args,
            )
        )
    return rows


# --- main
# ---------------------------------------------------------------------------------------------


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--quick', action='store_true', help='fewer rounds, shorter blocks (~8 s)')
    ap.add_argument(
        '--rounds',
        type=int,
        default=None,
        help='alternating rounds per row (default 150, quick 25)',
    )
    ap.add_argument(
        '--block-ms', type=float, default=None, help='duration of one block (default 1, quick 0.5)'
    )
    ap.add_argument('--no-diagnose', action='store_true', help='skip the wrapper/kernel breakdown')
    ap.add_argument(
        '--corpus',
        action='store_true',
        help='also real robots of pybullet_data (quadrupeds, arms)',
    )
    args = ap.parse_args(argv)
    rounds = args.rounds or (25 if args.quick else 150)
    block_s = (args.block_ms or (0.5 if args.quick else 1.0)) / 1e3

    import numba

    print(
        f'python {sys.version.split()[0]}, numpy {np.__version__}, numba {numba.__version__}, '
        f'pinocchio {pin.__version__}; {os.cpu_count()} CPUs, load average '
        f'{" ".join(f"{x:.2f}" for x in os.getloadavg())}'
    )
    print(
        f'{rounds} alternating rounds of ~{block_s * 1e3:g} ms blocks per row; microseconds per '
        'call = median of block means; ratio = ours/Pinocchio (paired = median of per-round '
        'ratios)'
    )
    print(
        f'gravity {GRAVITY.tolist()} is set once on both models (FastDynamics(robot, gravity=g); '
        "Pinocchio's "
        'model.gravity): ID and FD pass no gravity= argument, like rnea/aba (like-for-like)\n'
    )

    t_start = time.perf_counter()
    cases = [Case(*r) for r in robots() + (corpus() if args.corpus else [])]
    hdr = (
        f'{"robot":<32} {"n":>3} {"nq":>3} {"algorithm":<16} {"ours us":>9} {"pin us":>9} '
        f'{"ratio":>6} {"paired":>6} {"check":>8}  verdict   Pinocchio call'
    )
    print(hdr)
    print('-' * len(hdr))
    results, failures = {}, []
    for c in cases:
        chk = c.check()
        ns = c.namespace()
        for alg, ours, theirs, judged in c.pairs():
            (t_ours, t_pin), (p_ours, _), _ = interleaved(
                [timeit_block(ours, ns), timeit_block(theirs, ns)], rounds, block_s
            )
            ratio = t_ours / t_pin
            results[(c.label, alg)] = (t_ours, t_pin)
            verdict = ('PASS' if ratio <= TARGET_RATIO else 'FAIL') if judged else 'info'
            if judged and ratio > TARGET_RATIO:
                failures.append((c.label, alg, ratio))
            err = chk.get(alg.split(' ')[0])
            err = f'{err:8.1e}' if err is not None else f'{"":>8}'
            print(
                f'{c.label:<32} {c.robot.n_links_joints:>3} {c.robot.n_q:>3} {alg:<16} '
                f'{t_ours * 1e6:9.2f} {t_pin * 1e6:9.2f} {ratio:6.2f} {p_ours:6.2f} {err}  '
                f'{verdict:<8}  {theirs.split("(")[0]}',
                flush=True,
            )
        print()
    print(
        'check = max |ours - Pinocchio| / max(1, |Pinocchio|) of the result (ID: tau, FD: udot, '
        'H, J), Pinocchio mapped to SPART coordinates by test/pinocchio_oracle.py\n'
    )

    print('growth (100-link chain / 10-link chain, target <= 12):')
    growth_fail = []
    for alg in ('ID', 'FD'):
        a = results[('chain 100 (floating)', alg)]
        b = results[('chain 10 (floating)', alg)]
        g_ours, g_pin = a[0] / b[0], a[1] / b[1]
        ok = g_ours <= TARGET_GROWTH
        if not ok:
            growth_fail.append(alg)
        print(
            f'  {alg}: ours {b[0] * 1e6:7.2f} -> {a[0] * 1e6:7.2f} us = x{g_ours:5.2f} '
            f'{"PASS" if ok else "FAIL"}   (Pinocchio {b[1] * 1e6:6.2f} -> {a[1] * 1e6:6.2f} us = '
            f'x{g_pin:5.2f})'
        )

    print(
        f'\nratios > {TARGET_RATIO}: '
        + (', '.join(f'{label} {a} {r:.2f}' for label, a, r in failures) or 'none')
    )
    judged_ratios = [
        results[(c.label, p[0])][0] / results[(c.label, p[0])][1]
        for c in cases
        for p in c.pairs()
        if p[3]
    ]
    print(
        f'ratios <= {GOAL_RATIO} (the goal): {sum(r <= GOAL_RATIO for r in judged_ratios)} of '
        f'{len(judged_ratios)}; median {np.median(judged_ratios):.2f}, largest '
        f'{max(judged_ratios):.2f}'
    )

    print(
        '\nfixed cost of a call: the same calls on a one-joint robot (a base and one link on a '
        'revolute joint, fixed base), us per call:'
    )
    one = Case('one joint (fixed)', serial_chain_urdf(1, seed=1), False)
    ns = one.namespace()
    ns.update(crba=compiled.crba, mi=one.fd.model.mi, mf=one.fd.model.mf, W=one.fd._W, H=one.fd._H)
    fixed = [
        (alg, ours, theirs)
        for alg, ours, theirs, judged in one.pairs()
        if judged and alg != 'J / cJJ+getJJ'
    ]
    for alg, ours, theirs in fixed:
        (t_ours, t_pin), _, _ = interleaved(
            [timeit_block(ours, ns), timeit_block(theirs, ns)], rounds, block_s
        )
        print(
            f'  {alg:<8} ours {t_ours * 1e6:6.2f}   Pinocchio {t_pin * 1e6:6.2f}   ratio '
            f'{t_ours / t_pin:5.2f}   ({ours.split("(")[0]} vs {theirs.split("(")[0]})'
        )
    (t_method, t_kernel), _, _ = interleaved(
        [
            timeit_block('fd.mass_matrix(R0, r0, qm)', ns),
            timeit_block('crba(mi, mf, W, R0, r0, qm, H)', ns),
        ],
        rounds,
        block_s,
    )
    print(
        f'  of ours (H): the compiled crba called directly {t_kernel * 1e6:.2f} us (the call, its '
        f"argument unboxing and one joint's work), the method {t_method * 1e6:.2f} us (+ its "
        'Python and the type checks)'
    )

    if not args.no_diagnose:
        print('\nwhere our microseconds go (same interleaving; us per call):')
        print('  public  = FastDynamics method (its Python, the checked call)')
        print(
            '  checked = spart_ros.native.compiled.call(kernel, kinds, mi, mf, W, ...): every '
            "argument's type checked in C, then the kernel (native/_call.c), with exactly the "
            'arguments the method passes'
        )
        print(
            '  kernel  = spart_ros.native.compiled.<kernel>(mi, mf, W, ...) (built ahead of time) '
            'called directly (call + unboxing + kernel)'
        )
        print(
            '  njit    = the same kernel (numba JIT of native/kernels.py) inside an @njit loop '
            '(machine code only)'
        )
        print(
            '  wrapper = public - checked; check = checked - kernel; call = kernel - njit '
            '(medians of the per-round differences);'
        )
        print('  njit/pin, public/pin = medians of the per-round ratios')
        h = (
            f'  {"robot":<32} {"row":<9} {"kernel fn":<17} {"public":>7} {"checked":>7} '
            f'{"kernel":>7} {"njit":>7} {"pin":>7}  {"wrapper":>7} {"check":>6} {"call":>6}  '
            f'{"njit/pin":>8} {"public/pin":>10}'
        )
        print(h)
        print('  ' + '-' * (len(h) - 2))
        recorded = {}
        for c in cases:
            for alg, kern, fns, kargs in diagnosis_rows(c):
                label, calls = recorded.setdefault(c.floating, (c.label, {}))
                if label == c.label:
                    calls.setdefault(kern, kargs)
                (pub, chk, ker, nj, pn), paired, means = interleaved(fns, rounds, block_s)
                wrapper = np.median(
                    means[:, 0] - means[:, 1]
                )  # per-round differences: robust to drifts
                check = np.median(means[:, 1] - means[:, 2])
                call = np.median(means[:, 2] - means[:, 3])
                print(
                    f'  {c.label:<32} {alg:<9} {kern:<17} {pub * 1e6:7.2f} {chk * 1e6:7.2f} '
                    f'{ker * 1e6:7.2f} {nj * 1e6:7.2f} {pn * 1e6:7.2f}  {wrapper * 1e6:7.2f} '
                    f'{check * 1e6:6.2f} {call * 1e6:6.2f}  {paired[3]:8.2f} {paired[0]:10.2f}',
                    flush=True,
                )
            print()
        print(
            '  kernel arguments recorded from the public calls (first floating-base and first '
            'fixed-base robot):'
        )
        for label, calls in recorded.values():
            print(f'    {label}:')
            for kern, kargs in calls.items():
                print(f'      {kern}({describe_args(kargs)})')
        print()

    n_judged = sum(1 for c in cases for p in c.pairs() if p[3])
    print(
        f'summary: {n_judged - len(failures)}/{n_judged} ratios <= {TARGET_RATIO} '
        f'({sum(r <= GOAL_RATIO for r in judged_ratios)} <= {GOAL_RATIO}); growth '
        f'{"PASS" if not growth_fail else "FAIL (" + ", ".join(growth_fail) + ")"}; '
        f'load average now {" ".join(f"{x:.2f}" for x in os.getloadavg())}; '
        f'{time.perf_counter() - t_start:.0f} s'
    )
    return 0


if __name__ == '__main__':
    sys.exit(main())
