"""The closed-loop demo's numbers and plots (numpy, the spart_ros core, matplotlib; no rclpy).

From the messages recorded during one run (see demo_recorder.py) it builds a :class:`RunData`
(every joint state once, in stamp order, with the odometry and IMU sample of the same stamp),
and computes, independently of the nodes that ran:

- the tracking error against the demo's own reference (:class:`LoopTrajectory`, the function
  the trajectory message was sampled from);
- total linear and angular momentum of every state with the core
  (:class:`spart_ros.control.FreeFloatingKinematics`, from the odometry and joint states);
- the base link acceleration SPART's Floating_ID predicts from a state and the efforts the sim
  applied, against the one MuJoCo reports (the IMU's specific force);
- the base attitude change and the command latency (joint_states receipt -> receipt of the
  command answering it, both in the demo's process);

and draws the PNGs (matplotlib, Agg).
"""
from dataclasses import dataclass, field
import math

import numpy as np

APPROACH = 1.0          # s: the trajectory's first second brings the arm to its start pose


# --- the reference ----------------------------------------------------------------------
@dataclass
class LoopTrajectory:
    """Rest-to-rest joint motion: from the start of the trajectory (sim time ``start``, s), one
    ``approach`` second to ``q_start`` (the controller's interpolation from where it holds),
    then for s in [0, duration], tau = s / duration,

        q = q_start + amplitude * sin^4(pi tau) + loop * sin^3(pi tau) cos(pi tau) / c_max

    (c_max = 3 sqrt(3) / 16 makes the second profile peak at 1), then holding q_start.  Both
    profiles start and end at rest with zero acceleration (the reference is C2), and the second
    one goes out and back with a phase lag: joints moving with both trace a closed loop in joint
    space, around which a free-floating base ends up turned (momentum conservation is not
    integrable).  Arrays (n,) in the order of ``joints``; rad."""
    joints: list
    q_start: np.ndarray
    amplitude: np.ndarray
    loop: np.ndarray
    duration: float
    start: float = 0.0
    approach: float = APPROACH

    C_MAX = 3 * math.sqrt(3) / 16

    def sample(self, t):
        """(q, qd, qdd), each (len(t), n), at sim times ``t`` (s) after the approach; before
        it, q_start at rest (the approach itself is the controller's)."""
        t = np.atleast_1d(np.asarray(t, dtype=float))
        tau = np.clip((t - self.start - self.approach) / self.duration, 0.0, 1.0)[:, None]
        s, c = np.sin(math.pi * tau), np.cos(math.pi * tau)
        w = math.pi / self.duration
        a, b = self.amplitude, self.loop / self.C_MAX
        q = self.q_start + a * s ** 4 + b * s ** 3 * c
        qd = w * (a * 4 * s ** 3 * c + b * (3 * s ** 2 * c ** 2 - s ** 4))
        qdd = w ** 2 * (a * 4 * (3 * s ** 2 * c ** 2 - s ** 4) + b * (6 * s * c ** 3 - 10 * s ** 3 * c))
        return q, qd, qdd

    def waypoints(self, spacing=0.05):
        """[(time after the trajectory start s, q, qd, qdd)] every ``spacing`` s from the end of
        the approach to the end of the motion (the first one at ``approach`` > 0)."""
        k = int(math.ceil(self.duration / spacing))
        times = self.start + self.approach + np.linspace(0.0, self.duration, k + 1)
        q, qd, qdd = self.sample(times)
        return [(float(t - self.start), q[i], qd[i], qdd[i]) for i, t in enumerate(times)]

    @property
    def end(self):
        return self.start + self.approach + self.duration


# --- the recorded run -------------------------------------------------------------------
def stamp_ns(stamp):
    return stamp.sec * 1_000_000_000 + stamp.nanosec


@dataclass
class RunData:
    """One run's states, one row per joint_states stamp (ascending).

    ``t`` (N,) sim time s; ``q``, ``qd``, ``effort`` (N, n) in ``joints`` order (effort = the
    command the sim applied, as it echoes it); ``received`` (N,) monotonic ns at which the
    demo received the state.  Floating base: ``base_position`` (N, 3), ``base_quaternion``
    (N, 4) x, y, z, w, ``base_linear``/``base_angular`` (N, 3) twist in the base link frame,
    ``imu_acceleration`` (N, 3) specific force in b (NaN rows where a stamp had no sample).
    ``commands``: {answered state's stamp ns: monotonic receipt ns} of the controller's
    stamped commands.
    """
    joints: list
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    effort: np.ndarray
    received: np.ndarray
    base_position: np.ndarray = None
    base_quaternion: np.ndarray = None
    base_linear: np.ndarray = None
    base_angular: np.ndarray = None
    imu_acceleration: np.ndarray = None
    commands: dict = field(default_factory=dict)

    def __len__(self):
        return len(self.t)

    @property
    def floating(self):
        return self.base_quaternion is not None


def run_data(joints, joint_states, odometry=(), imu=(), joint_commands=()):
    """A :class:`RunData` from received messages [(monotonic receipt ns, message)]: a stamp
    seen twice (a lockstep sim publishes a waiting state again) counts once, at its first
    receipt; odometry/IMU rows are those of the same stamp (NaN if none came)."""
    first = {}
    for received, msg in joint_states:
        first.setdefault(stamp_ns(msg.header.stamp), (received, msg))
    stamps = sorted(first)
    n, N = len(joints), len(stamps)
    q, qd, effort = np.zeros((N, n)), np.zeros((N, n)), np.zeros((N, n))
    received = np.zeros(N, dtype=np.int64)
    for i, s in enumerate(stamps):
        rec, msg = first[s]
        index = {name: k for k, name in enumerate(msg.name)}
        cols = [index[j] for j in joints]
        q[i] = np.asarray(msg.position)[cols]
        qd[i] = np.asarray(msg.velocity)[cols]
        effort[i] = np.asarray(msg.effort)[cols]
        received[i] = rec
    data = RunData(list(joints), np.array(stamps, dtype=np.int64) * 1e-9, q, qd, effort, received)
    row = {s: i for i, s in enumerate(stamps)}
    if odometry:
        data.base_position, data.base_quaternion = np.full((N, 3), np.nan), np.full((N, 4), np.nan)
        data.base_linear, data.base_angular = np.full((N, 3), np.nan), np.full((N, 3), np.nan)
        for _, msg in odometry:
            i = row.get(stamp_ns(msg.header.stamp))
            if i is None:
                continue
            p, o, tw = msg.pose.pose.position, msg.pose.pose.orientation, msg.twist.twist
            data.base_position[i] = (p.x, p.y, p.z)
            data.base_quaternion[i] = (o.x, o.y, o.z, o.w)
            data.base_linear[i] = (tw.linear.x, tw.linear.y, tw.linear.z)
            data.base_angular[i] = (tw.angular.x, tw.angular.y, tw.angular.z)
    if imu:
        data.imu_acceleration = np.full((N, 3), np.nan)
        for _, msg in imu:
            i = row.get(stamp_ns(msg.header.stamp))
            if i is not None:
                a = msg.linear_acceleration
                data.imu_acceleration[i] = (a.x, a.y, a.z)
    for received, msg in joint_commands:
        data.commands.setdefault(stamp_ns(msg.header.stamp), received)
    return data


# --- metrics ------------------------------------------------------------------------------
def tracking(data, reference, after):
    """Tracking error q_ref - q over the states stamped at or after ``after`` (sim s):
    (error (M, n), rms (n,), max |error| (n,), t (M,))."""
    keep = data.t >= after - 1e-12
    t = data.t[keep]
    q_ref, _, _ = reference.sample(t)
    e = q_ref - data.q[keep]
    if not len(t):
        return e, np.full(len(data.joints), np.nan), np.full(len(data.joints), np.nan), t
    return e, np.sqrt(np.mean(e ** 2, axis=0)), np.abs(e).max(axis=0), t


def _rotations(quaternions):
    from scipy.spatial.transform import Rotation
    return Rotation.from_quat(quaternions)      # x, y, z, w


def attitude_change(data):
    """Rotation angle (N,) rad of the base from its first recorded attitude (zeros for a fixed base)."""
    if not data.floating:
        return np.zeros(len(data))
    ok = ~np.isnan(data.base_quaternion).any(axis=1)
    out = np.full(len(data), np.nan)
    R = _rotations(data.base_quaternion[ok])
    out[ok] = (R[0].inv() * R).magnitude()
    return out


def _robot_base(robot, data, i):
    """SPART (R0, r0, u0) of row i from the odometry (ROS base link state)."""
    from spart_ros.core import base_state as bs
    from spart_ros.core.attitude import quaternion_from_ros
    R_b = quaternion_from_ros(*data.base_quaternion[i])
    return bs.base_from_link_frame(robot, R_b, data.base_position[i], data.base_linear[i], data.base_angular[i])


def _model_order(robot, joints):
    """Column indices taking ``joints`` order to the robot's joint-variable order."""
    index = {n: k for k, n in enumerate(joints)}
    return [index[n] for n in robot.q_names]


def momentum(robot, data):
    """Total momentum (N, 6) = [angular about the world origin; linear], world frame
    (kg m^2/s, kg m/s), of every state with a base state, computed by the core
    (FreeFloatingKinematics: the base rows of H u) from the odometry and joint states; NaN
    rows where a state had no odometry.  Floating base only."""
    from spart_ros.control import FreeFloatingKinematics
    kin = FreeFloatingKinematics(robot, robot.n_links_joints)     # any link: only H is used
    cols = _model_order(robot, data.joints)
    out = np.full((len(data), 6), np.nan)
    for i in range(len(data)):
        if np.isnan(data.base_quaternion[i]).any():
            continue
        base = _robot_base(robot, data, i)
        kin.update(base.R0, base.r0, data.q[i, cols], base.u0, data.qd[i, cols])
        out[i] = kin.momentum('origin')
    return out


def floating_id_base_acceleration(robot, data, i, gravity=(0.0, 0.0, 0.0)):
    """The base link acceleration (a_b (3,), alpha_b (3,), both in b) that SPART's Floating_ID
    predicts at row i from the state and the applied efforts.  Floating_ID maps joint
    accelerations to joint efforts and base acceleration and is affine in the joint
    accelerations, so n + 1 calls give the map; the joint accelerations that produce the
    applied efforts go through it once more.  (The numpy SPART functions, not the fast path
    the controller uses.)"""
    from spart_ros import spart
    from spart_ros.core import base_state as bs
    cols = _model_order(robot, data.joints)
    base = _robot_base(robot, data, i)
    qm, um, taum = data.q[i, cols], data.qd[i, cols], data.effort[i, cols]
    RJ, RL, rJ, rL, e, g = spart.Kinematics(base.R0, base.r0, qm, robot)
    Bij, Bi0, P0, pm = spart.DiffKinematics(base.R0, base.r0, rL, e, g, robot)
    t0, tL = spart.Velocities(Bij, Bi0, P0, pm, base.u0, um, robot)
    I0, Im = spart.I_I(base.R0, RL, robot)
    M0_tilde, Mm_tilde = spart.MCB(I0, Im, Bij, Bi0, robot)
    H0, H0m, Hm = spart.GIM(M0_tilde, Mm_tilde, Bij, Bi0, P0, pm, robot)
    wF0, wFm = np.zeros(6), np.zeros((6, robot.n_links_joints))

    def floating_id(umdot):
        return spart.Floating_ID(wF0, wFm, Mm_tilde, H0, t0, tL, P0, pm, I0, Im, Bij, Bi0, base.u0, um, umdot,
                                 robot, gravity=list(gravity))
    n = robot.n_q
    tau_bias, _ = floating_id(np.zeros(n))
    A = np.column_stack([floating_id(np.eye(n)[k])[0] - tau_bias for k in range(n)])
    umdot = np.linalg.solve(A, taum - tau_bias)
    _, u0dot = floating_id(umdot)
    return bs.link_frame_acceleration_from_base(robot, base.R0, base.u0, u0dot)


def base_acceleration_check(robot, data, rows, gravity=(0.0, 0.0, 0.0)):
    """For each row: (MuJoCo's a_b from the IMU, Floating_ID's a_b), both (3,) in b; gravity
    zero (the IMU's specific force is then the acceleration)."""
    out = []
    for i in rows:
        if np.isnan(data.imu_acceleration[i]).any() or np.isnan(data.base_quaternion[i]).any():
            continue
        a_b, _ = floating_id_base_acceleration(robot, data, i, gravity)
        out.append((data.imu_acceleration[i].copy(), np.asarray(a_b)))
    return out


def latencies(data, since=None):
    """Command latency (ms) for every state answered by a stamped command: receipt of the
    command - receipt of the state, both in the demo's process; states stamped before
    ``since`` (sim s) left out."""
    out = []
    for t, rec in zip(data.t, data.received):
        if since is not None and t < since:
            continue
        cmd = data.commands.get(int(round(t * 1e9)))
        if cmd is not None:
            out.append((cmd - rec) * 1e-6)
    return np.array(out)


def percentile(values, p):
    return float(np.percentile(values, p)) if len(values) else float('nan')


# --- plots ------------------------------------------------------------------------------
def _pyplot():
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    return plt


def plot_tracking(path, title, data, reference, after):
    """Per joint: measured and reference position (left), tracking error in mrad (right)."""
    plt = _pyplot()
    n = len(data.joints)
    fig, axes = plt.subplots(n, 2, figsize=(11, 1.7 * n + 1.2), sharex=True, squeeze=False)
    q_ref, _, _ = reference.sample(data.t)
    shown = data.t >= reference.start + reference.approach - 1e-12
    for k, name in enumerate(data.joints):
        ax = axes[k, 0]
        ax.plot(data.t, data.q[:, k], label='measured (sim)')
        ax.plot(data.t[shown], q_ref[shown, k], '--', label='reference')
        ax.set_ylabel(f'{name}\n[rad]', fontsize=8)
        ax = axes[k, 1]
        ax.plot(data.t[shown], 1e3 * (q_ref[shown, k] - data.q[shown, k]), color='tab:red')
        ax.axvline(after, color='grey', lw=0.8, ls=':')
        ax.set_ylabel('error [mrad]', fontsize=8)
    axes[0, 0].legend(fontsize=7, loc='best')
    axes[0, 0].set_title('joint position')
    axes[0, 1].set_title('tracking error = reference - measured (after the dotted line)')
    for ax in axes[-1]:
        ax.set_xlabel('sim time [s]')
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def plot_efforts(path, title, data):
    """The efforts the sim applied (its joint_states echo), every joint."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(10, 4))
    for k, name in enumerate(data.joints):
        ax.plot(data.t, data.effort[:, k], label=name)
    ax.set_xlabel('sim time [s]')
    ax.set_ylabel('effort [N m]')
    ax.legend(fontsize=7, ncol=4)
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def plot_base(path, title, data, momentum_rows):
    """Base attitude (roll, pitch, yaw from the odometry; deg) and total momentum minus its
    first value (core, world frame)."""
    plt = _pyplot()
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(10, 6), sharex=True)
    if data.floating:
        ok = ~np.isnan(data.base_quaternion).any(axis=1)
        rpy = np.degrees(_rotations(data.base_quaternion[ok]).as_euler('xyz'))
        for k, label in enumerate(('roll', 'pitch', 'yaw')):
            ax1.plot(data.t[ok], rpy[:, k], label=label)
        ax1.legend(fontsize=8)
    else:
        ax1.plot(data.t, np.zeros(len(data)), label='fixed base')
        ax1.legend(fontsize=8)
    ax1.set_ylabel('base attitude [deg]')
    if momentum_rows is not None:
        ok = ~np.isnan(momentum_rows).any(axis=1)
        drift = momentum_rows[ok] - momentum_rows[ok][0]
        labels = ('L_x', 'L_y', 'L_z', 'p_x', 'p_y', 'p_z')
        for k in range(6):
            ax2.plot(data.t[ok], drift[:, k], label=labels[k])
        ax2.legend(fontsize=7, ncol=6)
        ax2.set_ylabel('momentum - initial\n[kg m^2/s, kg m/s]')
    else:
        ax2.text(0.5, 0.5, 'fixed base: the mount and gravity act on the arm,\nits momentum is not conserved',
                 ha='center', va='center', transform=ax2.transAxes)
        ax2.set_ylabel('momentum')
    ax2.set_xlabel('sim time [s]')
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
