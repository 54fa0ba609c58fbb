#!/usr/bin/env python3
"""
Benchmark: inverse kinematics (spart_ros.core.InverseKinematics) against two baselines.

The baselines run on the same targets in the same process, alternating target by target:

    ours        InverseKinematics(robot, link).solve(p, seed, rotation=R): adaptive damped
                Newton, joint limits, the compiled fast path for the pose and the Jacobian
    pinocchio   the damped-Newton IK loop of Pinocchio's documentation (examples/
                inverse-kinematics.py) on the same URDF: forwardKinematics, log6, the frame
                Jacobian times Jlog6, damped least squares (1e-12), integrate, with a full step
                (DT = 1) and |log6 error| <= 1e-6; no joint limits
    MR          Modern Robotics' own IKinSpace (the ``modern_robotics`` package, pure numpy) on
                the same chain as screw axes (the space Jacobian's columns at q = 0, M = the link
                pose there); 20 iterations at most, as the book's code; no joint limits

Targets: forward kinematics of random joint positions within the limits (the base where the
URDF's ``world`` joint puts it, as Pinocchio's model has it); seeds within 0.5 rad of them;
tolerances 1e-6 rad and 1e-6 m.  Per robot: success rate, median / 90th percentile
iterations, median time per solve, and each side's time over Pinocchio's (same targets,
interleaved).  Also [info]: ours with a free-floating base (the generalized Jacobian; no
baseline), on targets reached by moving the joints from the seed to those random positions at
zero momentum.

    python benchmarks/bench_inverse_kinematics.py            # ~20 s
    python benchmarks/bench_inverse_kinematics.py --targets 50
Not a test: nothing here fails the build.
"""

import argparse
import os
import sys
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for p in (ROOT, os.path.join(ROOT, 'test')):
    if p not in sys.path:
        sys.path.insert(0, p)

from core_helpers import urdf_path  # noqa: E402
import modern_robotics as MR  # noqa: E402
import numpy as np  # noqa: E402
import pinocchio as pin  # noqa: E402
from pinocchio_oracle import prepare_urdf_for_pinocchio  # noqa: E402
from spart_ros.core import InverseKinematics, robot_from_urdf, rotation_vector  # noqa: E402
from spart_ros.core.base_state import base_from_link_frame  # noqa: E402

ROBOTS = [
    ('kuka_iiwa (7 joints)', urdf_path('kuka_iiwa'), 'lbr_iiwa_link_7'),
    (
        'UR5 (6 joints)',
        os.path.join(ROOT, 'test', 'data', 'urdf', 'loading', 'ur5_world.urdf'),
        'wrist_3_link',
    ),
    ('arm7_floating (7 joints)', urdf_path('arm7_floating'), 'arm_link_7'),
]
TOL = 1e-6


def _load(path):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return robot_from_urdf(path)[0]


class PinocchioIK:
    """Pinocchio's documented IK loop for the URDF frame of ``link`` (fixed base)."""

    def __init__(self, path, link, q_names):
        text = open(path).read()
        self.model = pin.buildModelFromXML(prepare_urdf_for_pinocchio(text))
        self.data = self.model.createData()
        self.fid = self.model.getFrameId(link)
        self.idx = [self.model.joints[self.model.getJointId(n)].idx_q for n in q_names]

    def solve(self, R, p, seed):
        model, data, fid = self.model, self.data, self.fid
        q = pin.neutral(model)
        q[self.idx] = seed
        target = pin.SE3(R, p)
        for i in range(100):
            pin.forwardKinematics(model, data, q)
            pin.updateFramePlacement(model, data, fid)
            iMd = data.oMf[fid].actInv(target)
            err = pin.log(iMd).vector
            if np.linalg.norm(err[:3]) <= TOL and np.linalg.norm(err[3:]) <= TOL:
                return q[self.idx], True, i
            J = pin.computeFrameJacobian(model, data, q, fid)
            J = -np.dot(pin.Jlog6(iMd.inverse()), J)
            v = -J.T @ np.linalg.solve(J @ J.T + 1e-12 * np.eye(6), err)
            q = pin.integrate(model, q, v)
        return q[self.idx], False, 100


def screw_chain(ik, R0, r0):
    """
    Return (Slist, M) of the chain to ``ik``'s link.

    Slist: the space screw axes of the chain (the columns of the space Jacobian at q = 0); M: the
    link frame's pose there.
    """
    q0 = np.zeros(ik.n)
    R, p = ik.pose(q0, R0, r0)
    J = ik._task_jacobian(ik._pose(R0, r0, q0)[2], R0, r0, q0, R, p, 'space')
    M = np.eye(4)
    M[:3, :3], M[:3, 3] = R, p
    return J, M


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--targets', type=int, default=100)
    parser.add_argument('--seed', type=int, default=1)
    args = parser.parse_args()
    print(
        f'{"robot":26s} {"side":10s} {"success":>8s} {"it med":>7s} {"it p90":>7s} '
        f'{"ms/solve":>9s} {"/ pinocchio":>11s} {"beyond limits":>13s}'
    )
    for label, path, link in ROBOTS:
        robot = _load(path)
        ik = InverseKinematics(robot, link)
        free = InverseKinematics(robot, link, base='free') if 'floating' in label else None
        pik = PinocchioIK(path, link, ik.names)
        T_b = (
            robot.base_pose if robot.base_pose is not None else np.eye(4)
        )  # the URDF's world joint
        R0, r0, _ = base_from_link_frame(robot, T_b[:3, :3], T_b[:3, 3])
        S, M = screw_chain(ik, R0, r0)
        rng = np.random.default_rng(args.seed)
        lo = np.where(np.isfinite(ik.lower), ik.lower, -np.pi)
        hi = np.where(np.isfinite(ik.upper), ik.upper, np.pi)
        stats = {k: ([], [], [], []) for k in ('ours', 'pinocchio', 'MR', 'ours free')}

        def record(side, fn, check):
            t = time.perf_counter()
            q, ok, it = fn()
            stats[side][2].append(time.perf_counter() - t)
            stats[side][0].append(bool(ok and check(q)))
            stats[side][1].append(it)
            stats[side][3].append(
                bool(ok and (np.any(q < ik.lower - 1e-12) or np.any(q > ik.upper + 1e-12)))
            )

        for _ in range(args.targets):
            q_goal = rng.uniform(lo, hi)
            R, p = ik.pose(q_goal, R0, r0)
            seed = np.clip(q_goal + rng.uniform(-0.5, 0.5, ik.n), ik.lower, ik.upper)
            T = np.eye(4)
            T[:3, :3], T[:3, 3] = R, p

            def reached(q):
                Rq, pq = ik.pose(q, R0, r0)
                return (
                    np.linalg.norm(pq - p) <= 2 * TOL
                    and np.linalg.norm(rotation_vector(R @ Rq.T)) <= 2 * TOL
                )

            def ours():
                r = ik.solve(p, seed, rotation=R, R0=R0, r0=r0, tol_rotation=TOL, tol_position=TOL)
                return r.q, r.success, r.iterations

            def mr():
                q, ok = MR.IKinSpace(S, M, T, seed, TOL, TOL)
                return q, ok, np.nan

            record('ours', ours, reached)
            record('pinocchio', lambda: pik.solve(R, p, seed), reached)
            record('MR', mr, reached)
            if free is not None:  # the pose the free base reaches moving its joints seed -> q_goal
                Rf0, rf0 = free._move_base(R0, r0, seed, q_goal)
                Rf, pf = free.pose(q_goal, Rf0, rf0)

                def ours_free():
                    r = free.solve(pf, seed, rotation=Rf, R0=R0, r0=r0)
                    return r.q, r.success, r.iterations

                record('ours free', ours_free, lambda q: True)
        base = np.median(stats['pinocchio'][2])
        for side, (ok, its, times, beyond) in stats.items():
            if not times:
                continue
            its = np.array(its, dtype=float)
            it_med = f'{np.nanmedian(its):7.0f}' if np.isfinite(its).any() else f'{"-":>7s}'
            it_p90 = (
                f'{np.nanpercentile(its, 90):7.0f}' if np.isfinite(its).any() else f'{"-":>7s}'
            )
            tag = ' [info: base free, no baseline]' if side == 'ours free' else ''
            print(
                f'{label:26s} {side:10s} {100 * np.mean(ok):7.0f}% {it_med} {it_p90} '
                f'{1e3 * np.median(times):9.3f} {np.median(times) / base:11.2f} '
                f'{sum(beyond):13d}{tag}'
            )
    print(
        'success: converged and the pose checked within 2e-6 by forward kinematics (ours: the '
        'SPART-compiled FK); beyond limits: converged solutions outside the URDF joint limits '
        '(the baselines ignore them)'
    )


if __name__ == '__main__':
    main()
