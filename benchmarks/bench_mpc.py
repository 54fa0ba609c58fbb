"""
Derivatives, batches and the mpc modes: figures and ratios against baselines of the same run.

    python benchmarks/bench_mpc.py [--quick] [--parts 123] [--compare-with CHECKOUT]

1. analytic derivatives (spart_ros.core.fast.derivatives) per call against Pinocchio's Python
   ``computeRNEADerivatives`` / ``computeABADerivatives`` (same robot, base and state), short
   blocks of each side alternated, the fastest block of each;
2. batches (spart_ros.core.fast.batch) of N = 1000 states against a Python loop of the
   single-state calls that a user would write for the same stacked results (the public
   FastDynamics / DynamicsDerivatives methods, each result stored into the output array), one
   thread and two, and the CPU time per state on one thread and on two (both threads' sum: more
   than one thread's when the two cores slow each other down, whatever the load);
3. the mpc modes' solve time per step (wall clock and the solving thread's CPU time, median and
   p99; how many solves the scheduler preempted, and the wall-clock p99 of the others) in closed
   loops on the MuJoCo plant, horizon 0.5 s in 25 steps: the KUKA iiwa (mpc, also a fast move
   under tight effort limits), SPART's SC_3DoF free-floating (floating_mpc) and
   arm7_floating with an end-effector task; the tracking against computed_torque /
   floating_base; and Crocoddyl's box-FDDP on the same problems (its own Pinocchio action models:
   the same states, references, horizon, steps, weights and effort limits; Euler steps),
   warm-started, one iteration (the real-time iteration) and up to ten.  Crocoddyl is not a
   dependency: ``uv pip install --no-deps crocoddyl==3.2.1 libcrocoddyl==3.2.1`` (its wheels'
   declared dependencies pull example-robot-data, 437 MB installed, that it does not need), else
   skipped.

``--compare-with CHECKOUT``: part 2 (after ours) and part 3's KUKA run also in another checkout of
spart_ros (e.g. the kernels before a change, an earlier formulation of the mode), in a subprocess
of the same run.
"""

import argparse
import os
import resource
import subprocess
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# this checkout's sources first (not an installed copy of older ones), then its test helpers
sys.path[:0] = [ROOT, os.path.join(ROOT, 'test')]
from core_helpers import load_robot, random_rotation, urdf_path  # noqa: E402, I100
from spart_ros.core.fast import FastDynamics  # noqa: E402
from spart_ros.core.fast.batch import Batch  # noqa: E402
from spart_ros.core.fast.derivatives import DynamicsDerivatives  # noqa: E402

KUKA_Q1 = np.array([0.5, 0.4, -0.3, -0.8, 0.2, 0.5, -0.4])
ARM7_Q0 = np.array([-0.12, 0.71, -0.65, -1.08, -0.23, -0.72, -0.98])
ARM7_GOAL = np.array([-0.05, 0.55, -0.51, -1.32, 0.12, -0.83, -1.3])
ARM7_SETTINGS = {
    'mpc_task': 'end_effector',
    'mpc_weights': (1e7, 1e5, 1.0, 1e5, 1e3),
    'mpc_posture_weight': 1.0,
}


def interleaved(calls, reps, rounds):
    """Return the fastest block's seconds per call of each of ``calls`` (alternated blocks)."""
    best = [np.inf] * len(calls)
    for f in calls:
        f()
    for _ in range(rounds):
        for i, f in enumerate(calls):
            t = time.perf_counter()
            for _ in range(reps):
                f()
            best[i] = min(best[i], (time.perf_counter() - t) / reps)
    return best


# -- 1. derivatives -------------------------------------------------------------------------------
def derivatives(rounds):
    import pinocchio as pin
    from pinocchio_oracle import PinocchioOracle

    print('1. analytic derivatives per call [us] against Pinocchio in Python (fastest block)')
    for name, floating in (('kuka_iiwa', False), ('kuka_iiwa', True), ('SC_3DoF', True)):
        robot = load_robot(name)
        dd = DynamicsDerivatives(FastDynamics(robot, gravity=[0, 0, -9.81]))
        rng = np.random.default_rng(0)
        nq = robot.n_q
        s = (random_rotation(rng), rng.standard_normal(3), rng.standard_normal(nq))
        u0, um, a0, am = (rng.standard_normal(k) for k in (6, nq, 6, nq))
        orc = PinocchioOracle(urdf_path(name), robot.q_names, floating=floating)
        q, m, d = orc.q(*s), orc.model, orc.data
        v, a = rng.standard_normal(m.nv), rng.standard_normal(m.nv)
        oid, pid, ofd, pfd = (
            x * 1e6
            for x in interleaved(
                [
                    lambda: dd.inverse_dynamics(*s, u0, um, a0, am, floating),
                    lambda: pin.computeRNEADerivatives(m, d, q, v, a),
                    lambda: dd.forward_dynamics(*s, u0, um, a0, am, floating),
                    lambda: pin.computeABADerivatives(m, d, q, v, a),
                ],
                300,
                rounds,
            )
        )
        base = 'floating' if floating else 'fixed'
        print(
            f'   {name:10s} {base:8s} ID {oid:5.2f} (Pinocchio {pid:5.2f}, ratio {oid / pid:4.2f})'
            f'   FD {ofd:5.2f} (Pinocchio {pfd:5.2f}, ratio {ofd / pfd:4.2f})'
        )


# -- 2. batches -----------------------------------------------------------------------------------
def batches(m, rounds):
    print(f'2. batches of N = {m} states [ms] against a Python loop of the single calls')
    robot = load_robot('kuka_iiwa')
    fd = FastDynamics(robot, gravity=[0, 0, -9.81])
    dd = DynamicsDerivatives(fd)
    rng = np.random.default_rng(1)
    nq, N = fd.n_q, 6 + fd.n_q
    R0s = np.stack([random_rotation(rng) for _ in range(m)])
    r0s, qms, ums, u0s = (rng.standard_normal((m, k)) for k in (3, nq, nq, 6))
    a0s, ams = rng.standard_normal((m, 6)), rng.standard_normal((m, nq))
    out, H, J = np.zeros((m, N)), np.zeros((m, N, N)), np.zeros((m, 6, N))
    D = [np.zeros((m, N, N)) for _ in range(3)]

    def loop_id():
        for k in range(m):
            out[k, :6], out[k, 6:] = fd.inverse_dynamics(
                R0s[k], r0s[k], qms[k], u0s[k], ums[k], a0s[k], ams[k]
            )

    def loop_fd():
        for k in range(m):
            out[k, :6], out[k, 6:] = fd.forward_dynamics(
                R0s[k], r0s[k], qms[k], u0s[k], ums[k], a0s[k], ams[k]
            )

    def loop_h():
        for k in range(m):
            H[k] = fd.mass_matrix(R0s[k], r0s[k], qms[k])

    def loop_j():
        for k in range(m):
            J[k] = fd.jacobian(7, R0s[k], r0s[k], qms[k], bias=False)[0]

    def loop_fdd():
        for k in range(m):
            r = dd.forward_dynamics(R0s[k], r0s[k], qms[k], u0s[k], ums[k], a0s[k], ams[k])
            out[k], D[0][k], D[1][k], D[2][k] = r

    loops = {'ID': loop_id, 'FD': loop_fd, 'H': loop_h, 'J': loop_j, 'FD derivatives': loop_fdd}
    b1, b2 = Batch(fd, threads=1), Batch(fd, threads=2)
    args = {
        'ID': lambda b: b.inverse_dynamics(R0s, r0s, qms, u0s, ums, a0s, ams),
        'FD': lambda b: b.forward_dynamics(R0s, r0s, qms, u0s, ums, a0s, ams),
        'H': lambda b: b.mass_matrix(R0s, r0s, qms),
        'J': lambda b: b.jacobian(7, R0s, r0s, qms),
        'FD derivatives': lambda b: b.forward_dynamics_derivatives(
            R0s, r0s, qms, u0s, ums, a0s, ams
        ),
    }
    for what, loop in loops.items():
        call = args[what]
        tl, t1, t2 = (
            x * 1e3 for x in interleaved([loop, lambda: call(b1), lambda: call(b2)], 1, rounds)
        )
        # CPU time per state (the process's: both threads), fastest of alternated calls: with
        # two threads it exceeds one thread's when the two cores slow each other down (shared
        # execution units or caches), whatever else the machine runs
        c1 = c2 = np.inf
        for _ in range(rounds):
            c = time.process_time()
            call(b1)
            c1, c = min(c1, time.process_time() - c), time.process_time()
            call(b2)
            c2 = min(c2, time.process_time() - c)
        print(
            f'   {what:15s} loop {tl:7.3f}  batch {t1:6.3f} ({tl / t1:4.1f}x)  two threads '
            f'{t2:6.3f} ({tl / t2:4.1f}x; twice one thread would be {2 * tl / t1:4.1f}x)  CPU per '
            f'state {c1 / m * 1e6:5.2f} us, on two threads {c2 / m * 1e6:5.2f} us '
            f'({c2 / c1:4.2f}x)'
        )


def _other_batches(checkout, quick):
    """Part 2 of another checkout's bench_mpc.py (e.g. the kernels before a change), after ours."""
    print(f'   the same in {checkout}:')
    env = dict(os.environ, PYTHONPATH=checkout + os.pathsep + os.environ.get('PYTHONPATH', ''))
    done = subprocess.run(
        [sys.executable, os.path.join('benchmarks', 'bench_mpc.py'), '--parts', '2']
        + ['--quick'] * quick,
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
    )
    lines = done.stdout.strip().splitlines()[1:] or done.stderr.strip().splitlines()[-1:]
    print('\n'.join(lines))


# -- 3. mpc -----------------------------------------------------------------------------------
def _recording(records):
    """Patch ModelPredictive._attempt to record each solve's wall and CPU time and inputs."""
    from spart_ros.control import mpc

    original = mpc.ModelPredictive._attempt

    def attempt(self, state, ref, t):
        switches = resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw
        w, c = time.perf_counter(), time.thread_time()
        original(self, state, ref, t)
        records.append(
            (
                time.perf_counter() - w,
                time.thread_time() - c,
                state.q.copy(),
                state.qd.copy(),
                state.base,
                t,
                self._q.copy(),
                self._qd.copy(),
                self._qdd.copy(),
                # the solving thread preempted (involuntary context switches) during the solve
                resource.getrusage(resource.RUSAGE_THREAD).ru_nivcsw - switches,
            )
        )

    mpc.ModelPredictive._attempt = attempt
    return lambda: setattr(mpc.ModelPredictive, '_attempt', original)


def _run(name, settings, base, trajectory, duration, initial=None):
    from spart_ros.sim.closed_loop import simulate

    records = []
    restore = _recording(records)
    try:
        run = simulate(
            urdf_path(name),
            dict({'max_tracking_error': 0.0}, **settings),
            base=base,
            gravity=(0, 0, -9.81) if base == 'fixed' else (0, 0, 0),
            duration=duration,
            trajectory=trajectory,
            initial=initial,
        )
    finally:
        restore()
    return run, records


def _tracking(run):
    e = run.q - run.q_ref
    ok = np.isfinite(e).all(axis=1)
    return np.sqrt(np.mean(e[ok] ** 2)), np.abs(e[ok]).max()


def _base_turn(run):
    from spart_ros.core.rigid_motion import rotation_vector

    R = np.asarray(run.base_rotation)
    return np.degrees(max(np.linalg.norm(rotation_vector(R[0].T @ Rk)) for Rk in R[::10]))


def _times(records):
    wall = np.array([r[0] for r in records[2:]]) * 1e3
    cpu = np.array([r[1] for r in records[2:]]) * 1e3
    # what the wall clock adds to the CPU time: the solves the scheduler interrupted
    preempted = np.array([r[9] > 0 for r in records[2:]])
    calm = wall[~preempted] if (~preempted).any() else wall
    return (
        f'wall median {np.median(wall):5.2f} p99 {np.percentile(wall, 99):5.2f} ms, CPU median '
        f'{np.median(cpu):5.2f} p99 {np.percentile(cpu, 99):5.2f} ms ({len(wall)} solves; '
        f'{preempted.sum()} preempted, wall p99 of the others {np.percentile(calm, 99):5.2f} ms)'
    )


def _crocoddyl(name, floating, records, settings, limit):
    """Box-FDDP on the recorded solves' states and references: (1 iteration, up to 10) [ms]."""
    import crocoddyl
    import pinocchio as pin
    from pinocchio_oracle import PinocchioOracle
    from spart_ros.control.settings import ControllerSettings

    s = ControllerSettings(**{k: v for k, v in settings.items() if k.startswith('mpc_')})
    K, h = s.mpc_steps, s.mpc_horizon / s.mpc_steps
    wp, wv, wa, wt, ww = s.mpc_weights
    robot = load_robot(name)
    orc = PinocchioOracle(urdf_path(name), robot.q_names, floating=floating)
    model = orc.model
    model.gravity = pin.Motion(np.array([0.0, 0.0, 0.0 if floating else -9.81]), np.zeros(3))
    p = orc.idx_v  # SPART joint k -> Pinocchio's v index p[k]
    state = crocoddyl.StateMultibody(model)
    act = (
        crocoddyl.ActuationModelFloatingBase(state)
        if floating
        else crocoddyl.ActuationModelFull(state)
    )
    nv = model.nv
    w = np.zeros(2 * nv)
    w[p], w[nv + p] = wp, wv  # joints; a free flyer's [position, rotation]: the rotation's
    if floating:
        w[3:6], w[nv + 3 : nv + 6] = wt, ww
    models, residuals = [], []
    for k in range(K + 1):
        costs = crocoddyl.CostModelSum(state, act.nu)
        rx = crocoddyl.ResidualModelState(state, state.zero(), act.nu)
        ra = crocoddyl.ResidualModelJointAcceleration(state, np.zeros(nv), act.nu)
        costs.addCost(
            'x',
            crocoddyl.CostModelResidual(state, crocoddyl.ActivationModelWeightedQuad(w), rx),
            h,
        )
        if k < K:
            wa_v = np.zeros(nv)
            wa_v[p] = wa
            costs.addCost(
                'a',
                crocoddyl.CostModelResidual(
                    state, crocoddyl.ActivationModelWeightedQuad(wa_v), ra
                ),
                h,
            )
        dm = crocoddyl.DifferentialActionModelFreeFwdDynamics(state, act, costs)
        am = crocoddyl.IntegratedActionModelEuler(dm, h if k < K else 0.0)
        am.u_lb, am.u_ub = -limit * np.ones(act.nu), limit * np.ones(act.nu)
        models.append(am)
        residuals.append((rx, ra if k < K else None))
    problem = crocoddyl.ShootingProblem(state.zero(), models[:-1], models[-1])
    problem.nthreads = 1  # as the mode's solve (its OpenMP threads spin on a busy machine)
    solver = crocoddyl.SolverBoxFDDP(problem)
    xs, us = None, None
    out = {1: [], 10: []}
    cpu = {1: [], 10: []}
    for iters in (1, 10):
        xs = us = None
        for rec in records[2:]:
            _, _, q, qd, b, _, q_ref, qd_ref, qdd_ref = rec[:9]
            x0 = np.concatenate([orc.q(np.eye(3), np.zeros(3), q), np.zeros(nv)])
            if floating:  # the base link's pose, and its twist in b: REP 105's = Pinocchio's
                x0[0:3], x0[3:7] = b.p_b, pin.Quaternion(b.R_b).coeffs()
                x0[model.nq : model.nq + 3], x0[model.nq + 3 : model.nq + 6] = b.v_b, b.w_b
            x0[model.nq + p] = qd
            problem.x0 = x0
            for k, (rx, ra) in enumerate(residuals):
                xr = np.concatenate([orc.q(np.eye(3), np.zeros(3), q_ref[k]), np.zeros(nv)])
                xr[model.nq + p] = qd_ref[k]
                rx.reference = xr
                if ra is not None:
                    a = np.zeros(nv)
                    a[p] = qdd_ref[k]
                    ra.reference = a
            if xs is None:
                xs, us = [x0] * (K + 1), problem.quasiStatic([x0] * K)
            t, c = time.perf_counter(), time.thread_time()
            solver.solve(xs, us, iters, False)
            out[iters].append(time.perf_counter() - t)
            cpu[iters].append(time.thread_time() - c)
            xs = list(solver.xs[1:]) + [solver.xs[-1]]
            us = list(solver.us[1:]) + [solver.us[-1]]
    return {k: (np.array(v) * 1e3, np.array(cpu[k]) * 1e3) for k, v in out.items()}


def mpc_solves(duration, compare_with=None):
    print('3. mpc solves per step (closed loops on the MuJoCo plant, horizon 0.5 s, 25 steps)')
    try:
        import crocoddyl  # noqa: F401

        have_croc = True
    except ImportError:
        have_croc = False
        print('   (no Crocoddyl: uv pip install --no-deps crocoddyl==3.2.1 libcrocoddyl==3.2.1)')
    traj = [(1.0, KUKA_Q1), (2.0, 0 * KUKA_Q1)]
    fast = [(0.6, np.array([0.0, 1.9, 0.0, 0.0, 0.0, 0.0, 0.0]))]
    sc_goal = [(1.0, np.array([0.4, -0.5, 0.6])), (2.0, np.zeros(3))]
    cases = [
        ('kuka_iiwa', 'fixed', {}, traj, duration, None, 'computed_torque', 300.0),
        (
            'kuka_iiwa',
            'fixed',
            {'effort_limits': [100.0]},
            fast,
            1.0,
            None,
            'computed_torque',
            100.0,
        ),
        ('SC_3DoF', 'floating', {}, sc_goal, duration, None, 'floating_base', 100.0),
        # the base's attitude against the joints' tracking (no redundancy to use)
        (
            'SC_3DoF',
            'floating',
            {'mpc_weights': (1e2, 10.0, 1.0, 1e5, 1e3)},
            sc_goal,
            duration,
            None,
            'floating_base',
            100.0,
        ),
        (
            'arm7_floating',
            'floating',
            ARM7_SETTINGS,
            [(1.5, ARM7_GOAL)],
            1.7,
            dict(zip(load_robot('arm7_floating').q_names, ARM7_Q0)),
            'floating_base',
            176.0,
        ),
    ]
    for name, base, extra, trajectory, dur, initial, other, limit in cases:
        mode = 'mpc' if base == 'fixed' else 'floating_mpc'
        run, records = _run(
            name,
            dict({'mode': mode, 'mpc_deadline': 1.0}, **extra),
            base,
            trajectory,
            dur,
            initial,
        )
        ref, _ = _run(
            name,
            dict({'mode': other}, **{k: v for k, v in extra.items() if k == 'effort_limits'}),
            base,
            trajectory,
            dur,
            initial,
        )
        label = f'{name} {mode}' + (' (effort limits 100 N m)' if 'effort_limits' in extra else '')
        if 'mpc_weights' in extra and not extra.get('mpc_task'):
            label += f' (mpc_weights {list(extra["mpc_weights"])})'
        print(f'   {label}: {_times(records)}; misses {run.controller.law.misses}')
        rms, emax = _tracking(run)
        rms_o, emax_o = _tracking(ref)
        line = (
            f'      joint tracking RMS {rms:.2e} (max {emax:.2e}) rad; {other} {rms_o:.2e} '
            f'({emax_o:.2e})'
        )
        if base == 'floating':
            final = np.abs(run.q[-1] - run.q_ref[-1]).max()
            line += (
                f'; at the end {final:.1e} rad; base turned at most {_base_turn(run):.2f} deg '
                f'({other} {_base_turn(ref):.2f})'
            )
        print(line)
        if have_croc:
            c = _crocoddyl(name, base == 'floating', records, dict({'mode': mode}, **extra), limit)
            ours = np.median([r[1] for r in records[2:]]) * 1e3
            for iters, (t, cpu) in c.items():
                print(
                    f'      Crocoddyl box-FDDP, {iters:2d} iteration(s): wall median '
                    f'{np.median(t):5.2f} p99 {np.percentile(t, 99):5.2f} ms, CPU median '
                    f'{np.median(cpu):5.2f} p99 {np.percentile(cpu, 99):5.2f} ms; mode / '
                    f'Crocoddyl (CPU medians) {ours / np.median(cpu):5.2f}'
                )
    if compare_with:
        print(f'   the KUKA run in {compare_with}:')
        code = _OTHER_CHECKOUT.format(duration=duration)
        env = dict(
            os.environ, PYTHONPATH=compare_with + os.pathsep + os.environ.get('PYTHONPATH', '')
        )
        done = subprocess.run(
            [sys.executable, '-c', code], cwd=compare_with, env=env, capture_output=True, text=True
        )
        print(done.stdout.rstrip() or done.stderr.strip().splitlines()[-1])


#: part 3's KUKA run in another checkout (whatever its mode's solve is called there)
_OTHER_CHECKOUT = """
import sys, time
import numpy as np
sys.path.insert(0, 'test')
from core_helpers import urdf_path
from spart_ros.control import mpc
from spart_ros.sim.closed_loop import simulate
cls = getattr(mpc, 'MpcProblem', None) or mpc.ModelPredictive
name = 'solve' if hasattr(mpc, 'MpcProblem') else '_solve'
orig, times = getattr(cls, name), []


def timed(self, *a):
    t = time.perf_counter()
    r = orig(self, *a)
    times.append(time.perf_counter() - t)
    return r


setattr(cls, name, timed)
q1 = np.array([0.5, 0.4, -0.3, -0.8, 0.2, 0.5, -0.4])
run = simulate(
    urdf_path('kuka_iiwa'), {{'mode': 'mpc', 'mpc_deadline': 1.0}}, duration={duration},
    trajectory=[(1.0, q1), (2.0, 0 * q1)],
)
e = run.q - run.q_ref
ok = np.isfinite(e).all(axis=1)
t = np.array(times[2:]) * 1e3
rms = np.sqrt(np.mean(e[ok] ** 2))
print(f'      solve median {{np.median(t):5.2f}} p99 {{np.percentile(t, 99):5.2f}} ms; '
      f'tracking RMS {{rms:.2e}} rad')
"""


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    ap.add_argument('--quick', action='store_true', help='fewer rounds, shorter runs')
    ap.add_argument('--parts', default='123', help='which parts to run (default 123)')
    ap.add_argument('--compare-with', help='another checkout of spart_ros for parts 2 and 3')
    args = ap.parse_args(argv)
    if '1' in args.parts:
        derivatives(20 if args.quick else 80)
    if '2' in args.parts:
        batches(1000, 5 if args.quick else 15)
        if args.compare_with:
            _other_batches(args.compare_with, args.quick)
    if '3' in args.parts:
        mpc_solves(1.0 if args.quick else 2.2, args.compare_with)
    return 0


if __name__ == '__main__':
    sys.exit(main())
