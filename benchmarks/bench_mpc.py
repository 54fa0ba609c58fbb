"""
Derivatives, batches and the mpc mode: figures and ratios against baselines of the same run.

    python benchmarks/bench_mpc.py [--quick]

1. analytic derivatives (spart_ros.core.fast.derivatives) per call against Pinocchio's Python
   computeRNEADerivatives / computeABADerivatives (the same robot and base);
2. batches (spart_ros.core.fast.batch) of N = 1000 states against a Python loop of single calls,
   one thread and two;
3. the mpc modes' solve time per step (median, p99) in a closed loop on the MuJoCo plant (KUKA
   iiwa, fixed base; SPART's SC_3DoF, free-floating), horizon 0.5 s, against Crocoddyl's
   box-FDDP on the same problem (its own Pinocchio action models, Euler steps of the same
   length, the same costs, warm-started, one iteration per step as the mode's real-time iteration, and to convergence);
   Crocoddyl is not a dependency (it pulls in 420 MB of example-robot-data): ``uv pip install
   crocoddyl`` for part 3's baseline, else it is skipped.
"""

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'test'))
from core_helpers import load_robot, random_rotation, urdf_path  # noqa: E402, I100
from spart_ros.core.fast import FastDynamics  # noqa: E402
from spart_ros.core.fast.batch import Batch  # noqa: E402
from spart_ros.core.fast.derivatives import DynamicsDerivatives  # noqa: E402


def _per_call(f, reps):
    f()
    best = np.inf
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(reps):
            f()
        best = min(best, (time.perf_counter() - t) / reps)
    return best * 1e6


def derivatives(reps):
    import pinocchio as pin
    from pinocchio_oracle import PinocchioOracle

    print('1. analytic derivatives per call [us] (best of 5) against Pinocchio in Python')
    for name, floating in (('kuka_iiwa', False), ('kuka_iiwa', True), ('SC_3DoF', True)):
        robot = load_robot(name)
        fd = FastDynamics(robot, gravity=[0, 0, -9.81])
        dd = DynamicsDerivatives(fd)
        rng = np.random.default_rng(0)
        nq = fd.n_q
        s = (random_rotation(rng), rng.standard_normal(3), rng.standard_normal(nq))
        u0, um, a0, am = (rng.standard_normal(k) for k in (6, nq, 6, nq))
        ours_id = _per_call(lambda: dd.inverse_dynamics(*s, u0, um, a0, am, floating), reps)
        ours_fd = _per_call(lambda: dd.forward_dynamics(*s, u0, um, a0, am, floating), reps)
        orc = PinocchioOracle(urdf_path(name), robot.q_names, floating=floating)
        q = orc.q(*s)
        v, a = rng.standard_normal(orc.model.nv), rng.standard_normal(orc.model.nv)
        m, d = orc.model, orc.data
        pin_id = _per_call(lambda: pin.computeRNEADerivatives(m, d, q, v, a), reps)
        pin_fd = _per_call(lambda: pin.computeABADerivatives(m, d, q, v, a), reps)
        base = 'floating' if floating else 'fixed'
        print(
            f'   {name:10s} {base:8s} ID {ours_id:6.2f} (Pinocchio {pin_id:6.2f}, ratio '
            f'{ours_id / pin_id:4.2f})   FD {ours_fd:6.2f} (Pinocchio {pin_fd:6.2f}, ratio '
            f'{ours_fd / pin_fd:4.2f})'
        )


def batches(m):
    print(f'2. batches of N = {m} states [ms] against a Python loop of single calls')
    robot = load_robot('kuka_iiwa')
    fd = FastDynamics(robot, gravity=[0, 0, -9.81])
    dd = DynamicsDerivatives(fd)
    rng = np.random.default_rng(1)
    nq = fd.n_q
    R0s = np.stack([random_rotation(rng) for _ in range(m)])
    r0s, qms, ums, u0s = (rng.standard_normal((m, k)) for k in (3, nq, nq, 6))
    a0s, ams = rng.standard_normal((m, 6)), rng.standard_normal((m, nq))
    loops = {
        'ID': lambda: [
            fd.inverse_dynamics(R0s[k], r0s[k], qms[k], u0s[k], ums[k], a0s[k], ams[k])
            for k in range(m)
        ],
        'FD': lambda: [
            fd.forward_dynamics(R0s[k], r0s[k], qms[k], u0s[k], ums[k], a0s[k], ams[k])
            for k in range(m)
        ],
        'H': lambda: [fd.mass_matrix(R0s[k], r0s[k], qms[k]) for k in range(m)],
        'J': lambda: [fd.jacobian(7, R0s[k], r0s[k], qms[k], bias=False) for k in range(m)],
        'FD derivatives': lambda: [
            dd.forward_dynamics(R0s[k], r0s[k], qms[k], u0s[k], ums[k], a0s[k], ams[k])
            for k in range(m)
        ],
    }
    for threads in (1, 2):
        b = Batch(fd, threads=threads)
        calls = {
            'ID': lambda: b.inverse_dynamics(R0s, r0s, qms, u0s, ums, a0s, ams),
            'FD': lambda: b.forward_dynamics(R0s, r0s, qms, u0s, ums, a0s, ams),
            'H': lambda: b.mass_matrix(R0s, r0s, qms),
            'J': lambda: b.jacobian(7, R0s, r0s, qms),
            'FD derivatives': lambda: b.forward_dynamics_derivatives(
                R0s, r0s, qms, u0s, ums, a0s, ams
            ),
        }
        for what, call in calls.items():
            t_batch = _per_call(call, 3) / 1e3
            t_loop = _per_call(loops[what], 1) / 1e3
            print(
                f'   {what:15s} threads={threads}: batch {t_batch:7.3f}, loop {t_loop:7.3f}, '
                f'ratio {t_loop / t_batch:5.1f}x'
            )


def _mpc_run(urdf, mode, base, gravity, traj, duration):
    from spart_ros.control import mpc
    from spart_ros.sim.closed_loop import simulate

    times = []
    original = mpc.MpcProblem.solve

    def timed(self, *args):
        t = time.perf_counter()
        out = original(self, *args)
        times.append(time.perf_counter() - t)
        return out

    mpc.MpcProblem.solve = timed
    try:
        run = simulate(
            urdf,
            {'mode': mode, 'mpc_deadline': 1.0},
            base=base,
            gravity=gravity,
            duration=duration,
            trajectory=traj,
        )
    finally:
        mpc.MpcProblem.solve = original
    return np.array(times[2:]) * 1e3, run


def _crocoddyl(urdf, robot, floating, steps, h, weights, iterations, solves):
    import crocoddyl
    import pinocchio as pin
    from pinocchio_oracle import PinocchioOracle

    orc = PinocchioOracle(urdf, robot.q_names, floating=floating)
    model = orc.model
    model.gravity = pin.Motion(np.array([0, 0, 0 if floating else -9.81]), np.zeros(3))
    state = crocoddyl.StateMultibody(model)
    act = (crocoddyl.ActuationModelFloatingBase if floating else crocoddyl.ActuationModelFull)(
        state
    )
    wp, wv, wr = weights[:3]
    x0 = np.concatenate([pin.neutral(model), np.zeros(model.nv)])
    w = np.concatenate([np.full(model.nv, wp), np.full(model.nv, wv)])
    if floating:
        w[0:3] = 0.0
        w[model.nv : model.nv + 3] = 0.0
    models = []
    for k in range(steps + 1):
        costs = crocoddyl.CostModelSum(state, act.nu)
        xres = crocoddyl.ResidualModelState(state, x0, act.nu)
        costs.addCost(
            'x',
            crocoddyl.CostModelResidual(state, crocoddyl.ActivationModelWeightedQuad(w), xres),
            0.5,
        )
        costs.addCost(
            'u',
            crocoddyl.CostModelResidual(state, crocoddyl.ResidualModelControl(state, act.nu)),
            0.5 * wr,
        )
        dm = crocoddyl.DifferentialActionModelFreeFwdDynamics(state, act, costs)
        am = crocoddyl.IntegratedActionModelEuler(dm, h if k < steps else 0.0)
        am.u_lb, am.u_ub = -300 * np.ones(act.nu), 300 * np.ones(act.nu)
        models.append(am)
    problem = crocoddyl.ShootingProblem(x0, models[:-1], models[-1])
    solver = crocoddyl.SolverBoxFDDP(problem)
    rng = np.random.default_rng(2)
    times = []
    xs, us = [x0] * (steps + 1), problem.quasiStatic([x0] * steps)
    for _ in range(solves):
        x = x0.copy()
        x[-model.nv :] += 0.05 * rng.standard_normal(model.nv)
        problem.x0 = x
        t = time.perf_counter()
        solver.solve(xs, us, iterations, False)
        times.append(time.perf_counter() - t)
        xs, us = list(solver.xs[1:]) + [solver.xs[-1]], list(solver.us[1:]) + [solver.us[-1]]
    return np.array(times) * 1e3


def mpc_solves(duration):
    print('3. mpc solve time per step [ms] (closed loop on the MuJoCo plant, horizon 0.5 s)')
    from spart_ros.control.settings import ControllerSettings

    s = ControllerSettings()
    steps, h = s.mpc_steps, s.mpc_horizon / s.mpc_steps
    q1 = np.array([0.5, 0.4, -0.3, -0.8, 0.2, 0.5, -0.4])
    cases = (
        ('kuka_iiwa', 'mpc', 'fixed', (0, 0, -9.81), [(1.0, q1), (2.0, 0 * q1)], False),
        (
            'SC_3DoF',
            'floating_mpc',
            'floating',
            (0, 0, 0),
            [(1.0, np.array([0.4, -0.5, 0.6])), (2.0, np.zeros(3))],
            True,
        ),
    )
    try:
        import crocoddyl  # noqa: F401

        have_croc = True
    except ImportError:
        have_croc = False
        print('   (Crocoddyl not installed: `uv pip install crocoddyl` for the baseline)')
    for name, mode, base, g, traj, floating in cases:
        times, run = _mpc_run(urdf_path(name), mode, base, g, traj, duration)
        print(
            f'   {name:10s} {mode:12s} {steps} steps of {h * 1e3:.0f} ms: median '
            f'{np.median(times):6.2f}, p99 {np.percentile(times, 99):6.2f} ({len(times)} solves; '
            f'{1e3 / np.percentile(times, 99):5.0f} Hz at p99)'
        )
        if have_croc:
            robot = load_robot(name)
            for iters in (1, 10):
                ct = _crocoddyl(
                    urdf_path(name), robot, floating, steps, h, s.mpc_weights, iters, 200
                )
                print(
                    f'      Crocoddyl box-FDDP, {iters:2d} iteration(s): median '
                    f'{np.median(ct):6.2f}, p99 {np.percentile(ct, 99):6.2f}; mode / Crocoddyl '
                    f'(median) {np.median(times) / np.median(ct):5.2f}'
                )


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[1])
    ap.add_argument('--quick', action='store_true', help='fewer repetitions')
    args = ap.parse_args(argv)
    derivatives(2000 if args.quick else 20000)
    batches(1000)
    mpc_solves(1.0 if args.quick else 2.2)
    return 0


if __name__ == '__main__':
    sys.exit(main())
