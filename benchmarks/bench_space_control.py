#!/usr/bin/env python3
"""
Benchmark: space-robot motion control per control tick (spart_ros.control).

For each robot (SPART's 3-DoF spacecraft, the ResolvedMotion example's 4-link planar arm, a
7-DoF arm on a floating base, the branched two-arm spacecraft, a generated 30-link serial
chain), at one random state, prints the median microseconds per warm call of

    baseline      FastDynamics.mass_matrix + FastDynamics.jacobian(link, bias=False): the two
                  compiled calls everything below is built on (measured in the same run)
    J*            FreeFloatingKinematics.update(R0, r0, qm): H, J, H0^-1 [H0m, h0], J*
    J* + h0       FreeFloatingKinematics.update(R0, r0, qm, u0, um): also momentum and drift
    base reaction update + base_reaction(um)
    momentum      update(..., u0, um) + momentum('origin')
    momentum CoM  update(..., u0, um) + momentum('com')
    <law>         law.update(R0, r0, qm, u0, um, twist=..., t=...) for resolved_rate,
                  resolved_rate_min_base_energy, reactionless, desired_reaction (status included)
    <law> + pose  resolved_rate with a pose target (the P law on the link pose the update's
                  compiled Jacobian call leaves, FreeFloatingKinematics.link_rotation/_position)
    pose P law    the task twist of a pose target alone, on that link pose (what the control
                  loop runs), and [info] through SPART's Kinematics (the loop's path before)
    SPART chain   [info] the same J* from the SPART-named chain (Kinematics, DiffKinematics,
                  I_I, MCB, GIM, point_jacobian, generalized_jacobian)

and each one's ratio to the baseline.  Timing as benchmarks/bench_fast_path.py (imported
from there): timeit statements in alternating blocks, medians of the per-block means.

    python benchmarks/bench_space_control.py            # ~5 s
    python benchmarks/bench_space_control.py --quick    # ~3 s
Not a test: nothing here fails the build.
"""

import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for p in (ROOT, os.path.join(ROOT, 'test'), os.path.join(ROOT, 'benchmarks')):
    if p not in sys.path:
        sys.path.insert(0, p)

from bench_fast_path import interleaved, timeit_block  # noqa: E402
from core_helpers import load_robot, random_state, serial_chain_urdf  # noqa: E402
import numpy as np  # noqa: E402
from spart_ros import core, spart  # noqa: E402
from spart_ros.control import (  # noqa: E402
    DesiredReaction,
    FreeFloatingKinematics,
    Reactionless,
    ResolvedRate,
    ResolvedRateMinBaseEnergy,
)

PLANAR = os.path.join(ROOT, 'examples', 'planar_4link_spacecraft.urdf')


def robots():
    """(label, robot, end-effector link, task rows, base rows of desired_reaction)."""
    chain30, _ = spart.urdf2robot(serial_chain_urdf(30, seed=3))
    return [
        ('SC_3DoF', load_robot('SC_3DoF'), 'Link_EE', (3, 4, 5), (0, 1, 2)),
        ('planar 4-link', spart.urdf2robot(PLANAR)[0], 'end_effector', (3, 4), (2,)),
        ('arm7 floating', load_robot('arm7_floating'), 'arm_tool', None, (0, 1, 2)),
        ('branched 2-arm', load_robot('branched_two_arm_spacecraft'), 'b_ee', None, (0, 1, 2)),
        ('chain 30', chain30, chain30.n_links_joints, None, (0, 1, 2)),
    ]


def spart_chain_jstar(robot, link, R0, r0, qm):
    RJ, RL, rJ, rL, e, g = spart.Kinematics(R0, r0, qm, robot)
    Bij, Bi0, P0, pm = spart.DiffKinematics(R0, r0, rL, e, g, robot)
    I0, Im = spart.I_I(R0, RL, robot)
    M0t, Mmt = spart.MCB(I0, Im, Bij, Bi0, robot)
    H0, H0m, _ = spart.GIM(M0t, Mmt, Bij, Bi0, P0, pm, robot)
    J0, Jm = core.point_jacobian(link, None, R0, r0, RL, rL, P0, pm, robot)
    return core.generalized_jacobian(J0, Jm, H0, H0m)


def cases(robot, link, rows, base_rows):
    """[(label, statement)] and the namespace they run in."""
    s = random_state(robot, 1, scale=0.1)
    ff = FreeFloatingKinematics(robot, link)
    laws = {
        cls.mode: cls(robot, link, rows=rows, dynamics=ff.dynamics)
        for cls in (ResolvedRate, ResolvedRateMinBaseEnergy, Reactionless)
    }
    laws['desired_reaction'] = DesiredReaction(
        robot, link, rows=rows, base_rows=base_rows, dynamics=ff.dynamics
    )
    link_id = ff.link
    ff.update(s.R0, s.r0, s.qm)
    _, p = laws['resolved_rate'].end_effector.pose(s.R0, s.r0, s.qm)
    laws['resolved_rate'].update(
        s.R0, s.r0, s.qm, s.u0, s.um
    )  # its link pose, for the pose P law rows
    ns = {
        'fd': ff.dynamics,
        'ff': ff,
        'laws': laws,
        'rr': laws['resolved_rate'],
        'link': link_id,
        'R0': s.R0,
        'r0': s.r0,
        'qm': s.qm,
        'u0': s.u0,
        'um': s.um,
        'twist': np.array([0.01, -0.02, 0.01, 0.05, 0.02, -0.03]),
        'position': p + 0.01,
        'robot': robot,
        'spart_chain_jstar': spart_chain_jstar,
    }
    law_call = "laws['{}'].update(R0, r0, qm, u0, um, twist=twist, t=0.0)"
    rows_ = [
        ('J*', 'ff.update(R0, r0, qm)'),
        ('J* + h0', 'ff.update(R0, r0, qm, u0, um)'),
        ('base reaction', 'ff.update(R0, r0, qm); ff.base_reaction(um)'),
        ('momentum', "ff.update(R0, r0, qm, u0, um); ff.momentum('origin')"),
        ('momentum CoM', "ff.update(R0, r0, qm, u0, um); ff.momentum('com')"),
    ]
    rows_ += [(mode, law_call.format(mode)) for mode in laws]
    rows_ += [
        (
            'resolved_rate + pose',
            "laws['resolved_rate'].update(R0, r0, qm, u0, um, twist=twist, position=position, "
            't=0.0)',
        ),
        (
            'pose P law (fast link pose)',
            'rr.task_twist(R0, r0, qm, twist, position, '
            'pose=rr.end_effector.frame_pose(rr.kinematics.link_rotation, '
            'rr.kinematics.link_position))',
        ),
        ('pose P law, Kinematics [info]', 'rr.task_twist(R0, r0, qm, twist, position)'),
        ('SPART chain J* [info]', 'spart_chain_jstar(robot, link, R0, r0, qm)'),
        ('baseline', 'fd.mass_matrix(R0, r0, qm); fd.jacobian(link, R0, r0, qm, bias=False)'),
    ]
    return rows_, ns


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--quick', action='store_true', help='fewer, shorter blocks')
    ap.add_argument('--rounds', type=int, default=None)
    ap.add_argument('--block-ms', type=float, default=None)
    args = ap.parse_args(argv)
    rounds = args.rounds or (8 if args.quick else 30)
    block_s = (args.block_ms or (2.0 if args.quick else 3.0)) * 1e-3
    print(
        f'space control per tick: median us per call over {rounds} interleaved rounds of '
        f'~{block_s * 1e3:g} ms blocks; ratio = time / baseline (FastDynamics.mass_matrix + '
        'jacobian, same run)'
    )
    for label, robot, link, rows, base_rows in robots():
        rows_, ns = cases(robot, link, rows, base_rows)
        fns = [timeit_block(stmt, ns) for _, stmt in rows_]
        med, paired, _ = interleaved(fns, rounds, block_s)
        task = 'all 6' if rows is None else str(tuple(rows))
        print(f'\n{label}: n_q = {robot.n_q}, end effector {link!r}, task rows {task}')
        print(f'  {"":30s} {"us":>9s} {"ratio":>7s} {"paired":>7s}')
        for (name, _), t, r in zip(rows_, med, paired):
            print(f'  {name:30s} {t * 1e6:9.1f} {t / med[-1]:7.1f} {r:7.1f}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
