#!/usr/bin/env python3
"""
SPART's ResolvedMotion example, reproduced.

A 4-link planar arm (10 kg links) on a free-floating 100 kg base drives its end effector with a
sinusoidal twist, through the generalized Jacobian.

Robot: ``examples/planar_4link_spacecraft.urdf`` (read by the core's URDF parser).  Reference:
the end-effector velocity v(t) = r w [-sin(w t), cos(w t)] (x, y; w = 2 pi / period), which
draws a circle of radius r, plus a P law on the matching position (``--pose-gain``, 0 = pure
twist feed-forward as in SPART).  Task rows (vx, vy): two of the arm's four joint rates are
free, which the other laws use.

Plant: the full free-floating dynamics, no external force, no gravity, starting with the joints
at the reference's initial rates and the base at its reaction (zero momentum).  Each control period
the law (``spart_ros.control``) turns the reference into joint rates qd_ref and joint
accelerations qdd = Kv (qd_ref - qd) + d/dt qd_ref; floating-base inverse dynamics
(``FastDynamics.floating_inverse_dynamics``) turns those into joint efforts, held for the
period while RK4 integrates the forward dynamics (``FastDynamics.forward_dynamics``; base
attitude as a quaternion).  The base is never commanded: it reacts.

Laws compared (``--modes``): resolved_rate, resolved_rate_min_base_energy, reactionless (base
attitude undisturbed), desired_reaction (base yaw follows yaw_ref(t) = A sin(w t)).

Writes PNG plots and summary.json to the output folder (default: a new temporary folder) and
prints a summary.  The physical check: with no external load the system momentum about the
inertial origin stays at its initial value (zero) along the integrated motion.

    python examples/resolved_motion.py [--output DIR] [--duration 10] [--dt 0.002]
"""

import argparse
import json
import os
import sys
import tempfile
import time

import matplotlib

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from spart_ros import spart  # noqa: E402
from spart_ros.control import (  # noqa: E402
    DesiredReaction,
    Reactionless,
    ResolvedRate,
    ResolvedRateMinBaseEnergy,
)
from spart_ros.core.attitude import quaternion_from_ros  # noqa: E402
from spart_ros.core.fast import FastDynamics  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
URDF = os.path.join(HERE, 'planar_4link_spacecraft.urdf')
MODES = {
    law.mode: law
    for law in (ResolvedRate, ResolvedRateMinBaseEnergy, Reactionless, DesiredReaction)
}
Q0 = np.array([1.0, -1.4, 1.2, -1.0])  # rad: a bent, well-conditioned start
TASK_ROWS = (3, 4)  # vx, vy of the end effector


def quaternion_rate(quat, w):
    """d/dt of the unit quaternion [x, y, z, w] of R0 for the base-frame angular velocity w."""
    v, c = quat[0:3], quat[3]
    return 0.5 * np.concatenate([c * w + np.cross(v, w), [-v @ w]])


def rotation(quat):
    """R0 of the quaternion, C-contiguous (the compiled kernels' layout)."""
    return np.ascontiguousarray(quaternion_from_ros(*quat))


def yaw(R):
    return float(np.arctan2(R[1, 0], R[0, 0]))


class Plant:
    """Free-floating dynamics of the robot: state (quat, r0, q, u0, um), RK4 under held efforts."""

    def __init__(self, robot):
        self.fd = FastDynamics(robot)
        self.zero6 = np.zeros(6)

    def derivative(self, x, taum):
        quat, r0, q, u0, um = x
        u0dot, umdot = self.fd.forward_dynamics(rotation(quat), r0, q, u0, um, self.zero6, taum)
        return [
            quaternion_rate(quat, u0[0:3]),
            u0[3:6].copy(),
            um.copy(),
            u0dot.copy(),
            umdot.copy(),
        ]

    def step(self, x, taum, dt):
        k1 = self.derivative(x, taum)
        k2 = self.derivative([a + dt / 2 * b for a, b in zip(x, k1)], taum)
        k3 = self.derivative([a + dt / 2 * b for a, b in zip(x, k2)], taum)
        k4 = self.derivative([a + dt * b for a, b in zip(x, k3)], taum)
        x = [
            a + dt / 6 * (b1 + 2 * b2 + 2 * b3 + b4)
            for a, b1, b2, b3, b4 in zip(x, k1, k2, k3, k4)
        ]
        x[0] = x[0] / np.linalg.norm(x[0])
        return x


def make_law(mode, robot, dynamics, args):
    kwargs = {
        'rows': TASK_ROWS,
        'damping': 0.05,
        'singular_region': 0.1,
        'velocity_gain': args.velocity_gain,
        'pose_gain': args.pose_gain,
        'dynamics': dynamics,
    }
    if mode == 'desired_reaction':
        kwargs.update(base_rows=(2,), attitude_gain=1.0)
    return MODES[mode](robot, 'end_effector', **kwargs)


class Reference:
    """
    The references at time t.

    End-effector circle (twist and position) and, for desired_reaction, the base yaw sinusoid
    (rotation and rate).
    """

    def __init__(self, center, args):
        self.center, self.radius, self.w = center, args.radius, 2 * np.pi / args.period
        self.yaw_amplitude = np.deg2rad(args.yaw_amplitude)

    def end_effector(self, t):
        """(twist (6,), position (3,), planar velocity (2,))."""
        r, w = self.radius, self.w
        v = r * w * np.array([-np.sin(w * t), np.cos(w * t)])
        return (
            np.array([0, 0, 0, v[0], v[1], 0.0]),
            self.center + r * np.array([np.cos(w * t), np.sin(w * t), 0]),
            v,
        )

    def yaw(self, t):
        return self.yaw_amplitude * np.sin(self.w * t)

    def base(self, t):
        """Keyword arguments of DesiredReaction.update."""
        c, s = np.cos(self.yaw(t)), np.sin(self.yaw(t))
        return {
            'base_rotation': np.array([[c, -s, 0], [s, c, 0], [0, 0, 1.0]]),
            'base_angular_velocity': np.array(
                [0, 0, self.yaw_amplitude * self.w * np.cos(self.w * t)]
            ),
        }


def simulate(mode, robot, args):
    """Run one law; returns a dict of time series (numpy arrays)."""
    plant = Plant(robot)
    law = make_law(mode, robot, plant.fd, args)
    ee = law.end_effector
    x = [np.array([0.0, 0.0, 0.0, 1.0]), np.zeros(3), Q0.copy(), np.zeros(6), np.zeros(robot.n_q)]
    _, p_start = ee.pose(np.eye(3), np.zeros(3), Q0)
    ref = Reference(p_start - args.radius * np.array([1.0, 0.0, 0.0]), args)
    base_refs = ref.base if mode == 'desired_reaction' else (lambda t: {})
    # start already moving at the reference's rates, the base with its reaction: momentum 0, no
    # start-up transient
    first = law.update(
        rotation(x[0]), x[1], x[2], x[3], x[4], twist=ref.end_effector(0.0)[0], **base_refs(0.0)
    )
    x[4] = first.joint_velocities.copy()
    x[3] = law.kinematics.base_reaction(x[4]).copy()
    law.reset()
    log = {
        k: []
        for k in (
            't',
            'q',
            'qd',
            'qd_ref',
            'tau',
            'ee',
            'ee_ref',
            'ee_vel',
            'ee_vel_ref',
            'yaw',
            'yaw_ref',
            'r0',
            'momentum',
            'manip',
            'manip_fixed',
            'base_energy',
            'feasible',
            'rate_scale',
        )
    }
    base_energy = ResolvedRateMinBaseEnergy.base_kinetic_energy
    steps = int(round(args.duration / args.dt))
    for k in range(steps + 1):
        t = k * args.dt
        quat, r0, q, u0, um = x
        R0 = rotation(quat)
        twist, p_ref, v_ref = ref.end_effector(t)
        yaw_ref = ref.yaw(t) if mode == 'desired_reaction' else np.nan
        cmd = law.update(
            R0,
            r0,
            q,
            u0,
            um,
            twist=twist,
            position=p_ref if args.pose_gain > 0 else None,
            t=t,
            **base_refs(t),
        )
        kin = law.kinematics  # updated by the law at this state
        ee_vel = kin.Jstar @ um + kin.drift
        _, p_ee = ee.pose(R0, r0, q)
        taum = plant.fd.floating_inverse_dynamics(R0, r0, q, u0, um, cmd.joint_accelerations)[
            0
        ].copy()
        for key, val in (
            ('t', t),
            ('q', q),
            ('qd', um),
            ('qd_ref', cmd.joint_velocities),
            ('tau', taum),
            ('ee', p_ee),
            ('ee_ref', p_ref),
            ('ee_vel', ee_vel[3:5]),
            ('ee_vel_ref', v_ref),
            ('yaw', yaw(R0)),
            ('yaw_ref', yaw_ref),
            ('r0', r0),
            ('momentum', cmd.status.momentum),
            ('manip', cmd.status.manipulability),
            ('manip_fixed', cmd.status.fixed_base_manipulability),
            ('base_energy', base_energy(law, u0)),
            ('feasible', cmd.status.feasible),
            ('rate_scale', cmd.status.rate_scale),
        ):
            log[key].append(np.array(val, dtype=float, copy=True))
        if k < steps:
            x = plant.step(x, taum, args.dt)
    out = {key: np.array(v) for key, v in log.items()}
    out['link_positions'] = [
        arm_outline(robot, rotation(x0[0]), x0[1], x0[2])
        for x0 in ([np.array([0, 0, 0, 1.0]), np.zeros(3), Q0], x)
    ]
    return out


def arm_outline(robot, R0, r0, q):
    """x-y points of the base CoM, the joints and the end effector (for drawing the arm)."""
    RJ, RL, rJ, rL, e, g = spart.Kinematics(R0, r0, q, robot)
    return np.column_stack([r0, rJ])[0:2]


def momentum_scale(robot, log):
    """
    Return a momentum the arm really carries.

    The largest sum over links of |m_i v_i| along the run (bounded here by the joint-rate history),
    to judge the conservation error against.
    """
    lengths = 1.0 + np.arange(robot.n_q)  # lever arm from joint 1 to link i (1 m links)
    masses = np.array([link.mass for link in robot.links if link.mass > 0])
    return float(np.max(np.abs(log['qd']).sum(axis=1)) * masses @ lengths)


def summarize(mode, robot, log):
    err = np.linalg.norm(log['ee'] - log['ee_ref'], axis=1)
    drift = np.linalg.norm(log['momentum'] - log['momentum'][0], axis=1)
    yaw_change = log['yaw'] - log['yaw'][0]
    s = {
        'mode': mode,
        'samples': int(len(log['t'])),
        'max_ee_position_error_m': float(err.max()),
        'final_ee_position_error_m': float(err[-1]),
        'max_momentum_change': float(drift.max()),
        'momentum_scale': momentum_scale(robot, log),
        'max_base_yaw_change_rad': float(np.abs(yaw_change).max()),
        'final_base_yaw_rad': float(log['yaw'][-1]),
        'max_joint_rate_rad_s': float(np.abs(log['qd']).max()),
        'min_generalized_manipulability': float(log['manip'].min()),
        'steps_feasible': float(log['feasible'].mean()),
        'min_rate_scale': float(log['rate_scale'].min()),
    }
    if mode == 'desired_reaction':
        s['max_base_yaw_error_rad'] = float(np.abs(log['yaw'] - log['yaw_ref']).max())
    return s


def plot(logs, out_dir):
    files = []
    colors = dict(zip(MODES, ('C0', 'C1', 'C2', 'C3')))

    def save(fig, name):
        path = os.path.join(out_dir, name)
        fig.tight_layout()
        fig.savefig(path, dpi=90)
        plt.close(fig)
        files.append(path)

    fig, (ax, ax_err) = plt.subplots(2, 1, figsize=(7, 7), gridspec_kw={'height_ratios': [3, 2]})
    first = next(iter(logs.values()))
    ax.plot(first['ee_ref'][:, 0], first['ee_ref'][:, 1], 'k--', lw=2, label='reference')
    for mode, log in logs.items():
        ax.plot(log['ee'][:, 0], log['ee'][:, 1], color=colors[mode], label=mode)
        ax_err.semilogy(
            log['t'], np.linalg.norm(log['ee'] - log['ee_ref'], axis=1) + 1e-12, color=colors[mode]
        )
    for pts, style in zip(first['link_positions'], ('-o', ':o')):
        ax.plot(pts[0], pts[1], style, color='0.4', ms=4)
    ax.set_aspect('equal')
    ax.set_xlabel('x [m]')
    ax.set_ylabel('y [m]')
    ax.set_title('end-effector path (grey: base CoM and joints at start and end, first mode)')
    ax.legend(fontsize=7)
    ax_err.set_xlabel('t [s]')
    ax_err.set_ylabel('|p - p_ref| [m]')
    save(fig, 'ee_path.png')

    fig, axes = plt.subplots(2, 1, sharex=True, figsize=(7, 5))
    for i, name in enumerate(('vx', 'vy')):
        axes[i].plot(first['t'], first['ee_vel_ref'][:, i], 'k--', lw=2, label='reference')
        for mode, log in logs.items():
            axes[i].plot(log['t'], log['ee_vel'][:, i], color=colors[mode], label=mode)
        axes[i].set_ylabel(f'{name} [m/s]')
    axes[0].legend(fontsize=7)
    axes[1].set_xlabel('t [s]')
    save(fig, 'ee_velocity.png')

    fig, axes = plt.subplots(
        len(logs), 2, sharex=True, figsize=(9, 2.2 * len(logs)), squeeze=False
    )
    for row, (mode, log) in enumerate(logs.items()):
        axes[row, 0].plot(
            log['t'], log['q'], label=[f'joint_{i + 1}' for i in range(log['q'].shape[1])]
        )
        axes[row, 0].set_ylabel(f'{mode}\nq [rad]', fontsize=7)
        axes[row, 1].plot(log['t'], log['qd'])
        axes[row, 1].set_ylabel('qd [rad/s]')
    axes[0, 0].legend(fontsize=6, ncol=2)
    axes[-1, 0].set_xlabel('t [s]')
    axes[-1, 1].set_xlabel('t [s]')
    save(fig, 'joints.png')

    fig, axes = plt.subplots(3, 1, sharex=True, figsize=(7, 7))
    for mode, log in logs.items():
        axes[0].plot(log['t'], np.rad2deg(log['yaw']), color=colors[mode], label=mode)
        if mode == 'desired_reaction':
            axes[0].plot(
                log['t'], np.rad2deg(log['yaw_ref']), 'k--', label='desired_reaction reference'
            )
        axes[1].plot(log['t'], log['r0'][:, 0], color=colors[mode])
        axes[2].plot(log['t'], log['base_energy'], color=colors[mode])
    axes[0].set_ylabel('base yaw [deg]')
    axes[0].legend(fontsize=7)
    axes[1].set_ylabel('base CoM x [m]')
    axes[2].set_ylabel('base kinetic energy [J]')
    axes[2].set_xlabel('t [s]')
    save(fig, 'base.png')

    fig, axes = plt.subplots(2, 1, sharex=True, figsize=(7, 5))
    for mode, log in logs.items():
        dm = log['momentum'] - log['momentum'][0]
        axes[0].semilogy(
            log['t'][1:],
            np.linalg.norm(dm[1:, 3:6], axis=1) + 1e-18,
            color=colors[mode],
            label=mode,
        )
        axes[1].semilogy(
            log['t'][1:], np.linalg.norm(dm[1:, 0:3], axis=1) + 1e-18, color=colors[mode]
        )
    axes[0].set_ylabel('|p - p(0)| [kg m/s]')
    axes[1].set_ylabel('|L_O - L_O(0)| [kg m^2/s]')
    axes[1].set_xlabel('t [s]')
    axes[0].set_title('momentum conservation along the integrated motion')
    axes[0].legend(fontsize=7)
    save(fig, 'momentum.png')

    fig, ax = plt.subplots(figsize=(7, 4))
    for mode, log in logs.items():
        ax.plot(log['t'], log['manip'], color=colors[mode], label=f'{mode}: generalized (J*)')
        ax.plot(
            log['t'], log['manip_fixed'], ':', color=colors[mode], label=f'{mode}: fixed base (Jm)'
        )
    ax.set_xlabel('t [s]')
    ax.set_ylabel('manipulability (vx, vy) [m^2]')
    ax.legend(fontsize=6)
    save(fig, 'manipulability.png')
    return files


def parse_args(argv):
    p = argparse.ArgumentParser(
        description=__doc__.split('\n\n')[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        '--output', help='folder for the plots and summary.json (default: a new temporary folder)'
    )
    p.add_argument(
        '--duration', type=float, default=10.0, help='simulated seconds (default one period, 10)'
    )
    p.add_argument('--dt', type=float, default=0.002, help='control period = integration step [s]')
    p.add_argument('--period', type=float, default=10.0, help='period of the sinusoidal twist [s]')
    p.add_argument(
        '--radius', type=float, default=0.25, help='radius of the end-effector circle [m]'
    )
    p.add_argument(
        '--pose-gain',
        type=float,
        default=1.0,
        help='P gain on the reference position [1/s]; 0 = none',
    )
    p.add_argument(
        '--velocity-gain', type=float, default=50.0, help='joint-rate loop gain Kv [1/s]'
    )
    p.add_argument(
        '--yaw-amplitude',
        type=float,
        default=5.0,
        help='desired_reaction: yaw reference amplitude [deg]',
    )
    p.add_argument('--modes', nargs='+', default=list(MODES), choices=list(MODES))
    args = p.parse_args(argv)
    if not (args.duration > 0 and args.dt > 0 and args.period > 0):
        p.error('--duration, --dt and --period must be positive')
    return args


def main(argv=None):
    args = parse_args(argv)
    out_dir = args.output or tempfile.mkdtemp(prefix='spart_resolved_motion_')
    os.makedirs(out_dir, exist_ok=True)
    robot, _ = spart.urdf2robot(URDF)
    print(
        f'[resolved_motion] {robot.summary()}; {args.duration:g} s at dt = {args.dt:g} s, modes '
        f'{args.modes}'
    )
    logs, summaries = {}, []
    for mode in args.modes:
        start = time.perf_counter()
        logs[mode] = simulate(mode, robot, args)
        s = summarize(mode, robot, logs[mode])
        s['wall_time_s'] = time.perf_counter() - start
        summaries.append(s)
        line = (
            f'[resolved_motion] {mode:30s} ee error max {s["max_ee_position_error_m"] * 1e3:8.3g} '
            f'mm, base yaw change max {np.rad2deg(s["max_base_yaw_change_rad"]):9.3g} deg, '
            f'momentum change max {s["max_momentum_change"]:.2e} (scale '
            f'{s["momentum_scale"]:.3g}), min manipulability '
            f'{s["min_generalized_manipulability"]:.3f}'
        )
        if 'max_base_yaw_error_rad' in s:
            line += f', yaw tracking error max {np.rad2deg(s["max_base_yaw_error_rad"]):.3g} deg'
        print(line)
    files = plot(logs, out_dir)
    with open(os.path.join(out_dir, 'summary.json'), 'w') as f:
        json.dump(
            {
                'robot': robot.name,
                'duration_s': args.duration,
                'dt_s': args.dt,
                'modes': summaries,
                'plots': [os.path.basename(p) for p in files],
            },
            f,
            indent=2,
        )
    print(f'[resolved_motion] wrote {len(files)} plots and summary.json to {out_dir}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
