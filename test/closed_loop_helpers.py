"""
Helpers of test_closed_loop.py.

One closed-loop run of launch/sim_demo.launch.py (spart_sim, spart_controller, spart_dynamics as
separate processes, through scripts/local_launch.py), observed with the main job's own Monitor
(scripts/sim_demo.py: every topic into an MCAP bag, the controller's status followed live), and the
checks made on what the bag holds, independently of the nodes.

- a reference of its own (:class:`LoopTrajectory`, the function the trajectory message is
  sampled from: position, velocity and acceleration) to measure the tracking error against;
- every recorded state (joint states with the odometry and IMU sample of the same stamp) as a
  :class:`RunData`;
- total linear and angular momentum of each state with the core
  (:class:`spart_ros.control.FreeFloatingKinematics`);
- the base link acceleration SPART's Floating_ID predicts from a state and the efforts the sim
  applied, against the one MuJoCo reports (the IMU's specific force).
"""

from dataclasses import dataclass
import math
from pathlib import Path
import sys
import time

from node_helpers import NodeProcess, ros_env, scaled, trajectory_start
import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'scripts'))  # sim_demo (the main job's Monitor), local_launch

APPROACH = 1.0  # s: the trajectory's first second brings the arm to its start pose


# --- the reference ----------------------------------------------------------------------
@dataclass
class LoopTrajectory:
    """
    Rest-to-rest joint motion.

    From the start of the trajectory (sim time ``start``, s), one ``approach`` second to
    ``q_start`` (the controller's interpolation from where it holds), then for s in [0, duration],
    tau = s / duration,.

        q = q_start + amplitude * sin^4(pi tau) + loop * sin^3(pi tau) cos(pi tau) / c_max

    (c_max = 3 sqrt(3) / 16 makes the second profile peak at 1), then holding q_start.  Both
    profiles start and end at rest with zero acceleration (the reference is C2), and the second
    one goes out and back with a phase lag: joints moving with both trace a closed loop in joint
    space, around which a free-floating base ends up turned (momentum conservation is not
    integrable).  Arrays (n,) in the order of ``joints``; rad.
    """

    joints: list
    q_start: np.ndarray
    amplitude: np.ndarray
    loop: np.ndarray
    duration: float
    start: float = 0.0
    approach: float = APPROACH

    C_MAX = 3 * math.sqrt(3) / 16

    def sample(self, t):
        """
        (q, qd, qdd), each (len(t), n), at sim times ``t`` (s) after the approach.

        Before it, q_start at rest (the approach itself is the controller's).
        """
        t = np.atleast_1d(np.asarray(t, dtype=float))
        tau = np.clip((t - self.start - self.approach) / self.duration, 0.0, 1.0)[:, None]
        s, c = np.sin(math.pi * tau), np.cos(math.pi * tau)
        w = math.pi / self.duration
        a, b = self.amplitude, self.loop / self.C_MAX
        q = self.q_start + a * s**4 + b * s**3 * c
        qd = w * (a * 4 * s**3 * c + b * (3 * s**2 * c**2 - s**4))
        qdd = w**2 * (a * 4 * (3 * s**2 * c**2 - s**4) + b * (6 * s * c**3 - 10 * s**3 * c))
        return q, qd, qdd

    def waypoints(self, spacing=0.05):
        """
        Return [(time after the trajectory start s, q, qd, qdd)] every ``spacing`` s.

        From the end of the approach to the end of the motion (the first one at ``approach`` > 0).
        """
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
    """
    One run's states, one row per joint_states stamp (ascending).

    ``t`` (N,) sim time s; ``q``, ``qd``, ``effort`` (N, n) in ``joints`` order (effort = the
    command the sim applied, as it echoes it).  Floating base: ``base_position`` (N, 3),
    ``base_quaternion`` (N, 4) x, y, z, w, ``base_linear``/``base_angular`` (N, 3) twist in the
    base link frame, ``imu_acceleration`` (N, 3) specific force in b (NaN rows where a stamp had
    no sample).
    """

    joints: list
    t: np.ndarray
    q: np.ndarray
    qd: np.ndarray
    effort: np.ndarray
    base_position: np.ndarray = None
    base_quaternion: np.ndarray = None
    base_linear: np.ndarray = None
    base_angular: np.ndarray = None
    imu_acceleration: np.ndarray = None

    def __len__(self):
        return len(self.t)

    @property
    def floating(self):
        return self.base_quaternion is not None


def run_data(joints, joint_states, odometry=(), imu=()):
    """
    Return a :class:`RunData` from received messages [(receipt ns, message)].

    A stamp seen twice (a lockstep sim publishes a waiting state again) counts once; odometry/IMU
    rows are those of the same stamp (NaN if none came).
    """
    first = {}
    for _, msg in joint_states:
        first.setdefault(stamp_ns(msg.header.stamp), msg)
    stamps = sorted(first)
    n, N = len(joints), len(stamps)
    q, qd, effort = np.zeros((N, n)), np.zeros((N, n)), np.zeros((N, n))
    for i, s in enumerate(stamps):
        msg = first[s]
        index = {name: k for k, name in enumerate(msg.name)}
        cols = [index[j] for j in joints]
        q[i] = np.asarray(msg.position)[cols]
        qd[i] = np.asarray(msg.velocity)[cols]
        effort[i] = np.asarray(msg.effort)[cols]
    data = RunData(list(joints), np.array(stamps, dtype=np.int64) * 1e-9, q, qd, effort)
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
    return data


# --- metrics ------------------------------------------------------------------------------
def tracking(data, reference, after, until=np.inf):
    """
    Tracking error q_ref - q over the states stamped in [``after``, ``until``] (sim s).

    (error (M, n), rms (n,), max |error| (n,), t (M,)).
    """
    keep = (data.t >= after - 1e-12) & (data.t <= until)
    t = data.t[keep]
    q_ref, _, _ = reference.sample(t)
    e = q_ref - data.q[keep]
    if not len(t):
        return e, np.full(len(data.joints), np.nan), np.full(len(data.joints), np.nan), t
    return e, np.sqrt(np.mean(e**2, axis=0)), np.abs(e).max(axis=0), t


def _rotations(quaternions):
    from scipy.spatial.transform import Rotation

    return Rotation.from_quat(quaternions)  # x, y, z, w


def attitude_change(data):
    """
    Rotation angle (N,) rad of the base from its first recorded attitude.

    Zeros for a fixed base.
    """
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
    return bs.base_from_link_frame(
        robot, R_b, data.base_position[i], data.base_linear[i], data.base_angular[i]
    )


def _model_order(robot, joints):
    """Column indices taking ``joints`` order to the robot's joint-variable order."""
    index = {n: k for k, n in enumerate(joints)}
    return [index[n] for n in robot.q_names]


def momentum(robot, data):
    """
    Return the total momentum of every state: (N, 6), [angular about the world origin; linear].

    World frame (kg m^2/s, kg m/s), of every state with a base state, computed by the core
    (FreeFloatingKinematics: the base rows of H u) from the odometry and joint states; NaN rows
    where a state had no odometry. Floating base only.
    """
    from spart_ros.control import FreeFloatingKinematics

    kin = FreeFloatingKinematics(robot, robot.n_links_joints)  # any link: only H is used
    cols = _model_order(robot, data.joints)
    out = np.full((len(data), 6), np.nan)
    for i in range(len(data)):
        if np.isnan(data.base_quaternion[i]).any():
            continue
        base = _robot_base(robot, data, i)
        kin.update(base.R0, base.r0, data.q[i, cols], base.u0, data.qd[i, cols])
        out[i] = kin.momentum('origin')
    return out


def floating_id_base_acceleration(robot, data, i):
    """
    Return the base link acceleration that SPART's Floating_ID predicts at row i, in zero gravity.

    The acceleration is (a_b (3,), alpha_b (3,), both in b), predicted from the state and the
    applied efforts.  Floating_ID maps joint accelerations to joint efforts and base acceleration
    and is affine in the joint accelerations, so n + 1 calls give the map; the joint accelerations
    that produce the applied efforts go through it once more.  (The numpy SPART functions, not the
    fast path the controller uses.)
    """
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
        return spart.Floating_ID(
            wF0, wFm, Mm_tilde, H0, t0, tL, P0, pm, I0, Im, Bij, Bi0, base.u0, um, umdot, robot
        )

    n = robot.n_q
    tau_bias, _ = floating_id(np.zeros(n))
    A = np.column_stack([floating_id(np.eye(n)[k])[0] - tau_bias for k in range(n)])
    umdot = np.linalg.solve(A, taum - tau_bias)
    _, u0dot = floating_id(umdot)
    return bs.link_frame_acceleration_from_base(robot, base.R0, base.u0, u0dot)


def base_acceleration_check(robot, data, rows):
    """
    For each row: (MuJoCo's a_b from the IMU, Floating_ID's a_b), both (3,) in b.

    Zero gravity: the IMU's specific force is then the acceleration of the base link origin.
    """
    out = []
    for i in rows:
        if np.isnan(data.imu_acceleration[i]).any() or np.isnan(data.base_quaternion[i]).any():
            continue
        a_b, _ = floating_id_base_acceleration(robot, data, i)
        out.append((data.imu_acceleration[i].copy(), np.asarray(a_b)))
    return out


# --- one run ---------------------------------------------------------------------------------
def read_bag(path, topics):
    """
    {topic: [(log time ns, decoded message)]} of ``topics`` in the MCAP file at ``path``.

    Decoded with the definitions the bag carries.
    """
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    out = {t: [] for t in topics}
    with open(path, 'rb') as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        for _, channel, message, msg in reader.iter_decoded_messages(topics=list(topics)):
            out[channel.topic].append((message.log_time, msg))
    return out


class LoopRun:
    """
    One run of sim_demo.launch.py for ``robot``.

    SC_3DoF or kuka_iiwa; or the file ``urdf_path`` with config/demo_robot.yaml) in ``namespace``,
    with config/demo_<robot>.yaml plus ``extra`` parameters
    (one file for the three nodes, as the launch file wants it), observed by the main job's Monitor
    (recording into ``tmp``.

    ``start()``: launch, wait until the controller commands; ``send(reference)``: the
    trajectory; ``run_until(t)``; ``stop()``: the nodes' exit code, then ``data`` (RunData),
    ``messages`` (the decoded bag) and ``log`` are available.
    """

    TOPICS = (
        'joint_states',
        'odom',
        'imu',
        'spart_controller/status',
        'spart_controller/joint_commands',
        'effort_controller/commands',
    )

    def __init__(self, tmp, robot, namespace, joints, extra=None, floating=False, urdf_path=None):
        from ament_index_python.packages import get_package_share_directory
        import rclpy
        import sim_demo

        self.robot, self.ns, self.joints, self.floating = (
            robot,
            '/' + namespace,
            list(joints),
            floating,
        )
        share = Path(get_package_share_directory('spart_ros'))
        # a robot of the package, or any URDF with config/demo_robot.yaml (the launch file's
        # urdf_path:=)
        self.urdf = Path(urdf_path) if urdf_path else share / 'urdf' / f'{robot}.urdf'
        config = 'demo_robot.yaml' if urdf_path else f'demo_{robot}.yaml'
        doc = yaml.safe_load((share / 'config' / config).read_text())
        doc['/**']['ros__parameters'].update(extra or {})
        self.params = Path(tmp) / f'{namespace}.yaml'
        self.params.write_text(yaml.safe_dump(doc), encoding='utf-8')
        self.bag = Path(tmp) / f'{namespace}.mcap'
        self._rclpy = rclpy
        self._owns_rclpy = not rclpy.ok()  # the Monitor runs in rclpy's default context
        if self._owns_rclpy:
            rclpy.init()
        self.monitor = sim_demo.Monitor({'namespace': namespace}, self.bag)
        self.process = NodeProcess(
            [
                sys.executable,
                str(ROOT / 'scripts' / 'local_launch.py'),
                'sim_demo.launch.py',
                f'robot:={robot}',
                f'namespace:={namespace}',
                f'params:={self.params}',
            ]
            + ([f'urdf_path:={urdf_path}'] if urdf_path else []),
            name=f'sim_demo_{namespace}',
            env=ros_env(),
            log_dir=tmp,
        )
        self.exit_code = self.data = self.messages = None

    def topic(self, name):
        return f'{self.ns}/{name}'

    def wait(self, predicate, timeout, what):
        return self.monitor.wait(predicate, scaled(timeout), what, self.process.proc)

    def start(self, timeout=90.0):
        """
        Launch and wait until the controller commands.

        In lockstep too: the controller answers a state only once a command went out, so a state
        that came before the first odometry is answered when the sim republishes it.
        """
        self.process.start()
        mon = self.monitor
        self.wait(
            lambda: mon.status and mon.status[-1][1].commanding,
            timeout,
            'the controller commanding',
        )

    def send(self, reference, lead=0.3):
        """
        Publish ``reference`` as a JointTrajectory and wait until the controller has it.

        The trajectory is stamped to start ``lead`` sim seconds after the last state seen
        (positions, velocities and accelerations every 0.05 s).  Sets and returns
        ``reference.start``: the start the controller logged, which is the stamp unless the
        message came after it (the controller then starts it on arrival, time-shifted whole).
        A lockstep sim runs up to ~3x real time, and a new subscription can take 3 s of wall
        time to hear an old publisher (DEVELOPERS.md, "Timing on a loaded machine"), so a lead
        alone cannot cover a late arrival.
        """
        from builtin_interfaces.msg import Duration, Time
        from rclpy.qos import QoSProfile, ReliabilityPolicy
        from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

        mon = self.monitor
        # not while the controller's last state may still be the sim's first, stamped 0: it reads
        # a zero stamp as "unstamped" and would start the trajectory at its node clock's time
        # (the wall clock, decades ahead of the sim's)
        self.wait(lambda: mon.sim_time() >= 0.1, 30.0, 'the sim past its first states')
        pub = mon.node.create_publisher(
            JointTrajectory,
            self.topic('spart_controller/joint_trajectory'),
            QoSProfile(depth=10, reliability=ReliabilityPolicy.RELIABLE),
        )
        self.wait(
            lambda: pub.get_subscription_count() >= 1,
            10.0,
            'the controller subscribing to the trajectory',
        )
        reference.start = round(mon.sim_time() + lead, 3)
        msg = JointTrajectory(joint_names=list(reference.joints))
        msg.header.stamp = Time(
            sec=int(reference.start), nanosec=int(round(reference.start % 1.0 * 1e9))
        )
        for t, q, qd, qdd in reference.waypoints():
            msg.points.append(
                JointTrajectoryPoint(
                    positions=q.tolist(),
                    velocities=qd.tolist(),
                    accelerations=qdd.tolist(),
                    time_from_start=Duration(sec=int(t), nanosec=int(round(t % 1.0 * 1e9))),
                )
            )
        pub.publish(msg)
        self.wait(
            lambda: mon.status and mon.status[-1][1].trajectories >= 1,
            10.0,
            'the trajectory accepted',
        )
        started = self.wait(
            lambda: trajectory_start(self.log, 1),
            10.0,
            "the controller's log line of the trajectory's start",
        )
        if abs(started - reference.start) > 1e-6:
            print(
                f'the trajectory came late: stamped {reference.start:.3f} s, started at '
                f'{started:.3f} s'
            )
            reference.start = started
        return reference.start

    def run_until(self, t_end, timeout=60.0):
        self.wait(
            lambda: self.monitor.sim_time() >= t_end,
            timeout + 20.0 * t_end,
            f'sim time {t_end:.2f} s',
        )

    def drain(self, window=0.3, timeout=15.0):
        """
        Pause the sim (it stops publishing) and spin the monitor until it has caught up.

        The monitor writes the messages still on their way: on a busy machine it can be seconds
        behind a lockstep loop, and what it has not read when it closes is lost.  Caught up = fewer
        than 30 messages written in ``window`` s (a backlog goes in at thousands a second; what
        keeps coming once the sim is paused is the controller's 50 Hz status).
        """
        from std_srvs.srv import SetBool

        self.monitor.call(SetBool, 'spart_sim/pause', SetBool.Request(data=True))
        bag, end = self.monitor.recorder.bag, time.monotonic() + scaled(timeout)
        while time.monotonic() < end:
            before = bag.count
            self.monitor.spin(window)
            if bag.count - before < 30:
                return

    def stop(self):
        """
        Pause the sim, let the monitor catch up.

        Stop the nodes (SIGINT to the launcher, which passes it on) and read the bag.
        """
        if self.exit_code is not None:
            return self.exit_code
        try:
            if self.process.is_running():
                self.drain()
        finally:
            self.log_at_stop = len(self.process.output())
            try:
                self.exit_code = self.process.stop(timeout=20.0)
            finally:
                self.monitor.close()
        self.messages = read_bag(self.bag, [self.topic(t) for t in self.TOPICS])
        m = {t: self.messages[self.topic(t)] for t in self.TOPICS}
        self.data = run_data(
            self.joints,
            m['joint_states'],
            m['odom'] if self.floating else (),
            m['imu'] if self.floating else (),
        )
        return self.exit_code

    @property
    def log(self):
        return self.process.output()

    def statuses(self):
        return [msg for _, msg in self.messages[self.topic('spart_controller/status')]]

    def errors_while_running(self):
        """Error lines of the nodes before they were asked to stop."""
        text = self.log[: getattr(self, 'log_at_stop', None)]
        return [
            ln
            for ln in text.splitlines()
            if any(w in ln for w in ('[ERROR]', '[FATAL]', 'Traceback'))
        ]

    def describe(self):
        return '\n'.join(self.log.splitlines()[-40:])

    def close(self):
        try:
            self.stop()
        finally:
            self.process.cleanup()
            if self._owns_rclpy:
                self._rclpy.try_shutdown()
