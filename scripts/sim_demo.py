"""Main job: the closed loop over real ROS 2 topics, on robots simulated by MuJoCo.

    bash scripts/run_demo.sh [--seconds 4] [--output DIR] [--lockstep] [--scenario sc_3dof]

Two scenarios, one after the other; each runs ``ros2 launch spart_ros sim_demo.launch.py``
through scripts/local_launch.py (the installed launch file and YAML; ros2launch is not
installable here): spart_sim (the MuJoCo plant), spart_controller and spart_dynamics as three
processes reading one parameter file, in the scenario's namespace:

- ``sc_3dof``: SPART's SC_3DoF spacecraft, a 3-joint arm on a FREE-FLOATING base in zero
  gravity (config/demo_sc_3dof.yaml), floating_base control (Floating_ID): the base reacts;
- ``kuka_iiwa``: a KUKA iiwa 7 on a FIXED base in gravity (config/demo_kuka_iiwa.yaml),
  computed torque.

This process records every topic into an MCAP bag (demo_recorder.py), sends a smooth joint
trajectory (one second to the start pose, then every joint out and back), prints the sim time
and tracking error about once per wall-clock second, stops the nodes (SIGINT), then computes
from the recorded messages (demo_analysis.py) the tracking error per joint after the first
second, the base attitude change, the total momentum drift (the core, from the states), the
base acceleration MuJoCo shows against the one SPART's Floating_ID predicts, and the command
latency; writes PNG plots and ``run.mcap`` (checked: every message decodes with the schemas in
the bag) into the output folder, and prints a summary.  The last line is
"[demo] ... OK" (exit code 0) or "[demo] ... FAILED: <reasons>" (exit code 1).

The sim runs in real time by default (what a user sees); ``--lockstep`` makes it advance one
control period per command instead (deterministic).  In real time the demo pauses the sim as
soon as it is up, resets it to its initial pose and resumes it once the controller and the
dynamics node have the model, so the arm does not fall while they start.
"""
import argparse
from dataclasses import dataclass
import datetime
import math
import os
from pathlib import Path
import re
import sys
import tempfile
import time

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'scripts'))
sys.path.insert(0, str(ROOT / 'test'))
import demo_analysis as analysis  # noqa: E402
from demo_recorder import Recorder, RecorderError  # noqa: E402
from node_helpers import NodeProcess, ros_env, scaled  # noqa: E402
import local_launch  # noqa: E402

PREFIX = '[demo]'
NOMINAL_SECONDS = 4.0       # the scenarios' amplitudes are meant for a motion this long
LEAD = 0.3                  # sim s between the last state seen and the trajectory's start
REFERENCE_TOLERANCE = 1e-6  # rad: the controller's reference (interpolated) vs the demo's (analytic)
STATUS_LAG = 10             # states: how far a ~/status may lag behind its stamp
#: topics kept in memory for the analysis (by their last name component)
KEPT = {'joint_states', 'odom', 'imu', 'joint_commands', 'status', 'commands', 'center_of_mass'}
#: lockstep: control period 2 ms (2 steps of 1 ms per command); the loop may stall on a
#: loaded machine without the sim's time moving, so the watchdog waits longer
LOCKSTEP_SIM = {'lockstep': True, 'lockstep_steps': 2, 'lockstep_republish_period': 0.5}
LOCKSTEP_CONTROLLER = {'state_timeout': 0.5}


@dataclass
class Scenario:
    name: str               # also the namespace
    title: str
    urdf: str               # file in share/spart_ros/urdf
    params: str             # file in share/spart_ros/config
    joints: list
    q_start: list           # the sim's initial pose (rad), where the trajectory starts and ends
    amplitude: list         # rad, per joint: out and back
    loop: list              # rad, per joint: out, back past the start, back (see LoopTrajectory)
    rms_limit: float        # rad: tracking RMS after the first second must stay below
    floating: bool


SCENARIOS = {
    'sc_3dof': Scenario(
        'sc_3dof', 'SC_3DoF spacecraft: 3-joint arm, free-floating base, zero gravity, floating_base control',
        'SC_3DoF.urdf', 'demo_sc_3dof.yaml', ['Joint_1', 'Joint_2', 'Joint_3'], [0.0, 0.4, -0.8],
        [0.8, -0.6, 0.5], [0.0, 0.5, 0.9], 0.01, True),
    'kuka_iiwa': Scenario(
        'kuka_iiwa', 'KUKA iiwa 7: fixed base, gravity, computed torque', 'kuka_iiwa.urdf', 'demo_kuka_iiwa.yaml',
        [f'lbr_iiwa_joint_{k}' for k in range(1, 8)], [0.0, 0.5, 0.0, -1.2, 0.0, 0.6, 0.0],
        [0.6, 0.4, -0.5, 0.5, 0.7, -0.5, 0.8], [0.3, 0.0, 0.4, 0.0, -0.3, 0.3, 0.0], 0.001, False),
}


def say(text=''):
    print(f'{PREFIX} {text}'.rstrip(), flush=True)


def share_file(*parts):
    """A file of the installed package (share/spart_ros/...)."""
    from ament_index_python.packages import get_package_share_directory
    return Path(get_package_share_directory('spart_ros')).joinpath(*parts)


class ClosedLoop:
    """One scenario's nodes (via the launch file), its trajectory and its recorded data.

    ``start()`` launches and waits until the controller commands; ``send_trajectory()``;
    ``run_until(t)`` spins the recorder (printing progress) until the sim time reaches t;
    ``stop()`` stops the nodes; ``data()`` the recorded run.  ``controller_params`` /
    ``sim_params``: extra parameters (dicts) for one node, on top of the scenario's YAML;
    ``launch_args``: more arguments of sim_demo.launch.py (e.g. use_sim_time); ``scale``
    multiplies the scenario's amplitudes.
    """

    def __init__(self, scenario, recorder, workdir, duration, lockstep=False, controller_params=None,
                 sim_params=None, namespace=None, launch_args=None, scale=1.0):
        self.scenario, self.recorder = scenario, recorder
        self.ns = '/' + (namespace or scenario.name)
        self.lockstep = lockstep
        self.workdir = Path(workdir)
        sim = dict(LOCKSTEP_SIM if lockstep else {}, **(sim_params or {}))
        controller = dict(LOCKSTEP_CONTROLLER if lockstep else {}, **(controller_params or {}))
        self.launch_args = {'namespace': self.ns.lstrip('/'),
                            'urdf_path': str(share_file('urdf', scenario.urdf)),
                            'params': str(share_file('config', scenario.params)), **(launch_args or {})}
        for key, extra in (('sim_params', sim), ('controller_params', controller)):
            if extra:
                path = self.workdir / f'{scenario.name}_{key}.yaml'
                path.write_text(yaml.safe_dump({'/**': {'ros__parameters': extra}}), encoding='utf-8')
                self.launch_args[key] = str(path)
        self.reference = analysis.LoopTrajectory(scenario.joints, np.array(scenario.q_start),
                                                 scale * np.array(scenario.amplitude), scale * np.array(scenario.loop),
                                                 duration)
        self.process = None
        self.exit_code = None
        self.last_status = None
        self._running_log = None        # length of the nodes' output when they were asked to stop

    # -- names ------------------------------------------------------------------------------
    def topic(self, name):
        return f'{self.ns}/{name}'

    @property
    def launch_command(self):
        return ([sys.executable, str(ROOT / 'scripts' / 'local_launch.py'), 'sim_demo.launch.py']
                + [f'{k}:={v}' for k, v in self.launch_args.items()])

    def alive(self):
        return self.process is not None and self.process.is_running()

    def log(self):
        return self.process.output() if self.process is not None else ''

    # -- running ----------------------------------------------------------------------------
    def start(self, timeout=scaled(90.0)):
        """Launch; in real time pause and reset the sim until the controller and dynamics
        node have the model; return once the controller commands."""
        rec = self.recorder
        self.process = NodeProcess(self.launch_command, name=f'sim_demo_{self.scenario.name}', env=ros_env(),
                                   log_dir=self.workdir).start()
        from std_srvs.srv import SetBool, Trigger
        sim = self.topic('spart_sim')
        if not self.lockstep:      # hold the robot where it starts while the others come up
            rec.call(SetBool, f'{sim}/pause', SetBool.Request(data=True), timeout, self.alive)
            rec.call(Trigger, f'{sim}/reset', Trigger.Request(), timeout, self.alive)
        for node in ('spart_controller', 'spart_dynamics'):
            pattern = re.compile(rf'\[{self.ns[1:]}\.{node}\]: model .* \(from topic {re.escape(self.ns)}/')
            rec.wait_for(lambda p=pattern: p.search(self.log()), timeout, f'{node} loading the model', self.alive)
        if not self.lockstep:
            rec.call(SetBool, f'{sim}/pause', SetBool.Request(data=False), timeout, self.alive)
        self.status_when(lambda s: s.commanding, timeout, 'the controller commanding')

    def status_when(self, predicate, timeout, what):
        """Spin until the controller's last ~/status satisfies ``predicate``; return it."""
        topic = self.topic('spart_controller/status')

        def check():
            self.last_status = self.recorder.last(topic, 'spart_interfaces/msg/ControllerStatus')
            return self.last_status if self.last_status is not None and predicate(self.last_status) else None
        return self.recorder.wait_for(check, timeout, what, self.alive)

    def sim_time(self):
        """Stamp (s) of the last joint state received, or None."""
        msg = self.recorder.last(self.topic('joint_states'), 'sensor_msgs/msg/JointState')
        return None if msg is None else analysis.stamp_ns(msg.header.stamp) * 1e-9

    def send_trajectory(self, timeout=scaled(30.0)):
        """Publish the trajectory, starting LEAD sim seconds after the last state seen; wait
        until the controller has it.  Returns its start (sim s)."""
        from builtin_interfaces.msg import Duration, Time
        from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
        from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
        rec, ref = self.recorder, self.reference
        qos = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=10, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.VOLATILE)
        pub = rec.publisher(JointTrajectory, self.topic('spart_controller/joint_trajectory'), qos)
        # the controller and the recorder (which finds the new topic within DISCOVERY_PERIOD)
        rec.wait_for(lambda: pub.get_subscription_count() >= 2, timeout, 'the controller and the recorder '
                     'subscribing to joint_trajectory', self.alive)
        ref.start = round(self.sim_time() + LEAD, 3)
        msg = JointTrajectory(joint_names=list(ref.joints))
        sec, frac = divmod(ref.start, 1.0)
        msg.header.stamp = Time(sec=int(sec), nanosec=int(round(frac * 1e9)))
        for t, q, qd, qdd in ref.waypoints():
            s, f = divmod(t, 1.0)
            msg.points.append(JointTrajectoryPoint(positions=q.tolist(), velocities=qd.tolist(),
                                                   accelerations=qdd.tolist(),
                                                   time_from_start=Duration(sec=int(s), nanosec=int(round(f * 1e9)))))
        pub.publish(msg)
        # (had it come after its start, the controller would have started it late: the
        # comparison of its error with the demo's reference, reference_agreement(), tells)
        self.status_when(lambda s: s.trajectories >= 1, timeout, 'the controller accepting the trajectory')
        return ref.start

    def run_until(self, t_end, progress=True, period=1.0, timeout=None):
        """Spin until the sim time reaches ``t_end``, printing the sim time, the controller's
        tracking error and (floating base) the base rotation every ``period`` wall seconds."""
        timeout = timeout if timeout is not None else scaled(60.0 + 20.0 * (t_end - (self.sim_time() or 0.0)))
        deadline = time.monotonic() + timeout
        while True:
            now = self.sim_time() or 0.0
            if now >= t_end:
                return now
            if time.monotonic() > deadline:
                raise RecorderError(f'timed out after {timeout:g} s: sim time {now:.3f} s of {t_end:.3f} s')
            if not self.alive():
                raise RecorderError('the nodes stopped before the end of the run')
            self.recorder.spin_for(period)
            if progress:
                self.print_progress()

    def print_progress(self):
        now = self.sim_time()
        status = self.recorder.last(self.topic('spart_controller/status'), 'spart_interfaces/msg/ControllerStatus')
        if now is None or status is None:
            return
        ref = self.reference
        phase = ('holding' if now < ref.start else 'to the start pose' if now < ref.start + ref.approach
                 else 'tracking' if now < ref.end else 'holding')
        err = np.abs(np.asarray(status.position_error))
        worst = int(np.argmax(err)) if len(err) else 0
        text = (f'{self.scenario.name:9s} sim t = {now:6.2f} s  {phase:17s} tracking error max '
                f'{1e3 * err.max() if len(err) else float("nan"):7.3f} mrad ({status.joint_names[worst] if len(err) else "-"})')
        odom = self.recorder.last(self.topic('odom'), 'nav_msgs/msg/Odometry') if self.scenario.floating else None
        if odom is not None:
            o = odom.pose.pose.orientation
            text += f'  base rotated {math.degrees(2 * math.acos(min(1.0, abs(o.w)))):5.2f} deg'
        say(text)

    def stop(self):
        """Stop the nodes (SIGINT to the launcher, which passes it on); their exit code."""
        if self.process is not None and self.exit_code is None:
            self._running_log = len(self.log())
            self.exit_code = self.process.stop(timeout=20.0)
        return self.exit_code

    def data(self):
        rec, s = self.recorder, self.scenario
        kept = lambda name: rec.messages(self.topic(name))  # noqa: E731
        return analysis.run_data(s.joints, kept('joint_states'), kept('odom') if s.floating else (),
                                 kept('imu') if s.floating else (), kept('spart_controller/joint_commands'))

    def statuses(self):
        return [m for _, m in self.recorder.messages(self.topic('spart_controller/status'))]

    def node_errors(self, shutdown=False):
        """Error lines (and tracebacks) in the nodes' output while they ran, or (``shutdown``)
        after they were asked to stop."""
        log = self.log()
        cut = self._running_log if self._running_log is not None else len(log)
        text = log[cut:] if shutdown else log[:cut]
        return [ln for ln in text.splitlines() if any(w in ln for w in ('[ERROR]', '[FATAL]', 'Traceback'))]


def keep_topic(topic):
    return topic.rsplit('/', 1)[-1] in KEPT


# --- one scenario's report -------------------------------------------------------------------
def analyse(loop, out_dir):
    """Numbers, plots and problems of one finished run: a dict."""
    s, ref = loop.scenario, loop.reference
    data = loop.data()
    after = ref.start + ref.approach
    res = {'scenario': s, 'data': data, 'problems': [], 'pngs': []}
    if len(data) < 10:
        res['problems'].append(f'{s.name}: only {len(data)} joint states recorded')
        return res
    e, rms, emax, t = analysis.tracking(data, ref, after)
    res.update(error=e, rms=rms, max=emax, tracked=len(t), window=(after, float(data.t[-1])))
    if not len(t) or not np.all(rms < s.rms_limit):
        res['problems'].append(f'{s.name}: tracking RMS {np.nanmax(rms) if len(t) else float("nan"):.2e} rad '
                               f'(limit {s.rms_limit:g} rad)')
    angle = analysis.attitude_change(data)
    start_row = int(np.searchsorted(data.t, ref.start))
    res['attitude'] = (float(np.degrees(angle[-1] - 0.0)), float(np.degrees(np.nanmax(angle))))
    from spart_ros import spart
    robot, _ = spart.urdf2robot(str(share_file('urdf', s.urdf)))
    if data.floating:
        h = analysis.momentum(robot, data)
        ok = ~np.isnan(h).any(axis=1)
        drift = np.abs(h[ok] - h[ok][0]).max(axis=0)
        res.update(momentum=h, angular_drift=float(drift[0:3].max()), linear_drift=float(drift[3:6].max()),
                   momentum_states=int(ok.sum()))
        if max(res['angular_drift'], res['linear_drift']) > 1e-6:
            res['problems'].append(f'{s.name}: momentum drift {drift.max():.1e} (no external force: expected ~0)')
        coms = loop.recorder.messages(loop.topic('spart_dynamics/center_of_mass'))
        if coms:        # the dynamics node's view: linear momentum = total mass x CoM velocity
            p = np.array([[m.total_mass * m.velocity.x, m.total_mass * m.velocity.y, m.total_mass * m.velocity.z]
                          for _, m in coms])
            res['com_momentum'] = (float(np.abs(p - p[0]).max()), len(p))
        rows = np.linspace(start_row, len(data) - 1, 20).astype(int)
        pairs = analysis.base_acceleration_check(robot, data, rows)
        if pairs:
            diff = max(float(np.abs(a - b).max()) for a, b in pairs)
            scale = max(float(np.abs(a).max()) for a, _ in pairs)
            res['acceleration'] = (diff, scale, len(pairs))
    else:
        res['momentum'] = None
    lat = analysis.latencies(data, since=ref.start)
    res['latency'] = (analysis.percentile(lat, 50), analysis.percentile(lat, 99), len(lat))
    statuses = loop.statuses()
    res['status'] = statuses[-1] if statuses else None
    res['reference_check'] = worst, n = reference_agreement(data, ref, statuses, after)
    if not n or worst > REFERENCE_TOLERANCE:
        res['problems'].append(f'{s.name}: the controller\'s tracking error differs from the demo\'s by {worst:.1e} rad '
                               f'({n} samples): not the same reference (trajectory started late?)')
    # plots
    for kind in ('tracking', 'efforts', 'base'):
        path = Path(out_dir) / f'{s.name}_{kind}.png'
        if kind == 'tracking':
            analysis.plot_tracking(path, s.title, data, ref, after)
        elif kind == 'efforts':
            analysis.plot_efforts(path, f'{s.title}: efforts applied by the sim', data)
        else:
            analysis.plot_base(path, f'{s.title}: base', data, res['momentum'])
        res['pngs'].append(path)
    return res


def reference_agreement(data, ref, statuses, after):
    """Largest difference (rad) between the controller's position error (its ~/status) and the
    demo's (the analytic reference) at the same state, after ``after``: shows both mean the
    same trajectory at the same times.  A status carries the error of the last state the
    controller answered, stamped with its clock (the sim's /clock, which may be a few states
    ahead of that state on a busy machine): the best match among the STATUS_LAG states before
    the stamp counts.  (A reference started late by d would differ by about qd d, 1e-3 rad for
    one state at 0.5 rad/s, where consecutive states' errors differ by about 1e-6 rad.)"""
    row = {int(round(t * 1e9)): i for i, t in enumerate(data.t)}
    worst, n = 0.0, 0
    for st in statuses:
        if not len(st.position_error):
            continue
        stamp = analysis.stamp_ns(st.header.stamp)
        if stamp * 1e-9 < after:
            continue
        index = {name: k for k, name in enumerate(st.joint_names)}
        their = np.array([st.position_error[index[j]] for j in data.joints])
        last = row.get(stamp)
        if last is None:
            continue
        rows = np.arange(max(0, last - STATUS_LAG), last + 1)
        q_ref, _, _ = ref.sample(data.t[rows])
        worst, n = max(worst, float(np.abs(q_ref - data.q[rows] - their).max(axis=1).min())), n + 1
    return worst, n


def print_report(res):
    s = res['scenario']
    say(f'=== {s.name}: {s.title} ===')
    if 'rms' not in res:
        return
    a, b = res['window']
    say(f'  tracking after the first second (sim {a:.2f}-{b:.2f} s, {res["tracked"]} states; limit RMS '
        f'{1e3 * s.rms_limit:g} mrad):')
    say(f'    {"joint":18s} {"RMS [mrad]":>11s} {"max [mrad]":>11s}')
    for name, r, m in zip(s.joints, res['rms'], res['max']):
        say(f'    {name:18s} {1e3 * r:11.4f} {1e3 * m:11.4f}')
    worst, n = res['reference_check']
    say(f'  the controller\'s own error (~/status) agrees with the demo\'s reference to {worst:.1e} rad '
        f'({n} samples)')
    if s.floating:
        end, top = res['attitude']
        say(f'  base attitude change: {end:.3f} deg at the end (largest {top:.3f} deg): the base reacts to the arm')
        say(f'  total momentum drift (core, from {res["momentum_states"]} recorded states): linear '
            f'{res["linear_drift"]:.1e} kg m/s, angular {res["angular_drift"]:.1e} kg m^2/s')
        if 'com_momentum' in res:
            drift, n = res['com_momentum']
            say(f'  linear momentum from spart_dynamics (total mass x ~/center_of_mass velocity, {n} messages): '
                f'drift {drift:.1e} kg m/s')
        if 'acceleration' in res:
            diff, scale, n = res['acceleration']
            say(f'  base acceleration, MuJoCo (IMU) vs SPART Floating_ID from the same state and efforts: largest '
                f'difference {diff:.1e} m/s^2 (accelerations up to {scale:.1e} m/s^2, {n} states)')
    else:
        say('  base attitude change: 0 (fixed base); momentum: not conserved on a fixed base (mount, gravity)')
    p50, p99, n = res['latency']
    say(f'  command latency (joint_states -> command, received here): p50 {p50:.2f} ms, p99 {p99:.2f} ms '
        f'({n} commands)')
    st = res['status']
    if st is not None:
        say(f'  controller: {st.commands} commands, {st.zero_commands} zero commands, {st.timeouts} watchdog halts, '
            f'last compute time {1e3 * st.compute_time:.2f} ms')


# --- main ------------------------------------------------------------------------------------
def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--seconds', type=float, default=NOMINAL_SECONDS,
                    help=f'simulated seconds of motion per scenario after the first second (default '
                         f'{NOMINAL_SECONDS:g}; shorter ones move less: amplitudes x (seconds / {NOMINAL_SECONDS:g})^2 '
                         'keep the accelerations and efforts of the default)')
    ap.add_argument('--output', type=Path, default=None,
                    help='output folder (default demo_output/<date-time>/ in the repository)')
    ap.add_argument('--lockstep', action='store_true', help='lockstep sim (deterministic) instead of real time')
    ap.add_argument('--scenario', action='append', choices=sorted(SCENARIOS),
                    help='run only this scenario (repeatable; default: all)')
    args = ap.parse_args(argv)
    t_start = time.monotonic()
    out = args.output or ROOT / 'demo_output' / datetime.datetime.now().strftime('%Y%m%d-%H%M%S')
    out.mkdir(parents=True, exist_ok=True)
    names = args.scenario or list(SCENARIOS)
    env = ros_env()
    say(f'ROS_DOMAIN_ID={env["ROS_DOMAIN_ID"]}; output folder {out}')
    problems, results = [], []
    bag_path = out / 'run.mcap'
    recorder = Recorder(str(bag_path), keep=keep_topic)
    with tempfile.TemporaryDirectory(prefix='spart_sim_demo_') as workdir:
        try:
            for name in names:
                scenario = SCENARIOS[name]
                loop = ClosedLoop(scenario, recorder, workdir, args.seconds, lockstep=args.lockstep,
                                  scale=min(1.0, (args.seconds / NOMINAL_SECONDS) ** 2))
                say(f'--- {name}: {scenario.title} ({"lockstep" if args.lockstep else "real time"})')
                before = len(problems)
                say('ros2 launch spart_ros sim_demo.launch.py '
                    + ' '.join(f'{k}:={v}' for k, v in loop.launch_args.items()) + '  (via scripts/local_launch.py)')
                try:
                    loop.start()
                    t0 = loop.send_trajectory()
                    say(f'{name}: trajectory sent: from sim t = {t0:.3f} s, {analysis.APPROACH:g} s to the start pose, '
                        f'then {args.seconds:g} s of motion')
                    loop.run_until(loop.reference.end + 0.3)
                except RecorderError as err:
                    problems.append(f'{name}: {err}')
                finally:
                    code = loop.stop()
                    if code != 0:
                        problems.append(f'{name}: the launch exited with code {code}')
                    errors = loop.node_errors()
                    if errors:
                        problems.append(f'{name}: {len(errors)} error lines in the node output, first: {errors[0]}')
                    late = loop.node_errors(shutdown=True)
                    if late:      # exit codes are checked; errors while stopping are shown, not failed on
                        say(f'{name}: note: {len(late)} error lines while the nodes shut down, first: {late[0]}')
                    if len(problems) > before:
                        say(f'{name}: node output (last lines):')
                        for line in loop.log().splitlines()[-30:]:
                            print('  | ' + line, flush=True)
                if loop.reference.start:
                    res = analyse(loop, out)
                    results.append(res)
                    problems.extend(res['problems'])
        finally:
            recorder.close()

    say('')
    say('=================================== summary ===================================')
    for res in results:
        print_report(res)
    # the bag: every recorded topic reads back with its own schema
    from spart_ros.tools.bag import BagError, read_back
    try:
        back = read_back(str(bag_path))
        missing = {t: n for t, n in recorder.counts.items() if n and back.get(t, (None, 0))[1] != n}
        if missing:
            problems.append(f'run.mcap: topics with messages missing on reading back: {sorted(missing)}')
        say(f'bag {bag_path.name}: {len(back)} topics, {sum(n for _, n in back.values())} messages, every one '
            f'decoded with the schema in the bag ({bag_path.stat().st_size / 1e6:.1f} MB)')
    except BagError as err:
        problems.append(str(err))
    if recorder.skipped:
        say(f'not recorded: {recorder.skipped}')
    pngs = [p for res in results for p in res['pngs']]
    absent = [p.name for p in pngs if not p.is_file() or p.stat().st_size == 0]
    if absent:
        problems.append(f'plots not written: {absent}')
    say(f'plots: {", ".join(p.name for p in pngs)}')
    say(f'output: {out}')
    for problem in problems:
        say(f'problem: {problem}')
    verdict = 'OK' if not problems and len(results) == len(names) else 'FAILED'
    summary = ', '.join(f'{r["scenario"].name} RMS max {1e3 * np.nanmax(r["rms"]):.3f} mrad' for r in results
                        if 'rms' in r)
    say(f'{len(results)} scenario(s) ({summary}), {len(pngs)} plots, run.mcap, {time.monotonic() - t_start:.1f} s: '
        + (verdict if verdict == 'OK' else f'FAILED: {"; ".join(problems) or "a scenario did not run"}'))
    return 0 if verdict == 'OK' else 1


if __name__ == '__main__':
    sys.exit(main())
