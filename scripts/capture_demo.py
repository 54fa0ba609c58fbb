"""
The main job's capture scenario (scripts/sim_demo.py ``--scenarios capture``; docs/capture.md).

A servicing spacecraft (urdf/arm7_spacecraft.urdf: a 7-joint arm on a 400 kg bus, four reaction
wheels, twelve thrusters) in a circular 500 km orbit captures a 150 kg client tumbling at 4 deg/s
(urdf/capture_target.yaml), over real ROS 2 topics, in real time, the three nodes of
``sim_demo.launch.py`` with config/demo_capture.yaml (spart_sim at a 0.5 ms step publishing every
10 ms, the target's estimates at 20 Hz with noise and 20 ms late; spart_controller in free_flying
until the goal, then the capture at 100 Hz):

- this process waits until the controller commands and the target's odometry comes, sends the
  ``~/capture`` action goal, prints the phase, the distance and the relative speed once a second,
  and waits for the result (``--capture-seconds`` shortens the run: then the goal is still under
  way when it ends); then, as the other scenarios, pauses the plant (the controller's watchdog
  must send one all-zero command), calls the dynamics node and stops the nodes;
- the bag records every topic (the target's odometry, the grasp request, the weld and its
  impulse, the action's feedback and status) and gets /tf for Foxglove (the target's frame
  too); the animation draws the target (its equivalent-inertia box and fixture axes);
- plots: distance and relative speed per phase (``capture_progress``), base attitude, wheel
  momentum, thrusters, the target's momentum around the grasp with the impulse the plant reports
  (``capture_impulse``), the combined system's rates (``capture_rates``), efforts;
- OK when: the goal accepted; grasped within 4 s of the goal, within the grasp tolerances
  (distance 1 cm, relative twist 1 cm/s and 0.01 rad/s at the fixture); the base attitude within
  0.2 deg until the grasp; every joint within its rate and effort limits, every wheel within its
  speed limit; the plant welded the target once; a full run: succeeded (at rest with the target
  held) within 10 s of the grasp (``DETUMBLE_BOUND``, the sweep's slowest: 9.5 s).
"""

import bisect
import math
import subprocess
import sys
import time

import numpy as np

#: the scenario (sim_demo's SCENARIOS['capture'])
CAPTURE = {
    'label': 'capture: a servicing spacecraft (a 7-joint arm on a 400 kg bus, wheels and '
    'thrusters) in a 500 km orbit captures a 150 kg client tumbling at 4 deg/s: approach and '
    'synchronise, grasp, detumble',
    'robot': 'arm7_spacecraft',
    'namespace': 'demo_capture',
    'floating': True,
    'capture': True,
    'params': 'demo_capture.yaml',
    'target': 'urdf/capture_target.yaml',
    'actuators': 'urdf/arm7_spacecraft.actuators.yaml',
    'orbit': {'altitude': 500e3},
    'publish_period': 0.01,
    'waypoints': [],
}
#: s: the grasp within this of the goal (planned 2 s after it), the rest within DETUMBLE_BOUND
GRASP_BOUND, DETUMBLE_BOUND = 4.0, 10.0
#: deg: the base attitude's change until the grasp (the wheels hold it; the sweep: 0.17 at most)
ATTITUDE_BOUND = 0.2
#: s of simulated time the goal may take at most (a full run)
LONGEST = 30.0


def say(text):
    print(f'[demo] {text}', flush=True)


def _seconds(stamp):
    return stamp.sec + 1e-9 * stamp.nanosec


def run_capture(name, scenario, out, seconds, launch_log, attempt=1):
    """Run the capture scenario (module docstring); return its result (sim_demo's format)."""
    import sim_demo as sd
    from geometry_msgs.msg import PoseStamped, WrenchStamped
    from nav_msgs.msg import Odometry
    from rclpy.action import ActionClient
    from spart_ros.core.urdf import robot_from_urdf
    from spart_ros.tools.bag import read_messages
    from spart_interfaces.action import Capture

    robot, _ = robot_from_urdf(str(sd.robot_urdf(scenario['robot'])))
    say(f'--- {scenario["label"]}')
    params = sd.share_file('config', scenario['params'])
    args = [
        f'robot:={scenario["robot"]}',
        f'namespace:={scenario["namespace"]}',
        f'params:={params}',
    ]
    cmd = [
        sys.executable,
        str(sd.ROOT / 'scripts' / 'local_launch.py'),
        'sim_demo.launch.py',
        *args,
    ]
    say('ros2 launch spart_ros sim_demo.launch.py ' + ' '.join(args))
    bag_path = out / f'{name}.mcap'
    mon = sd.Monitor(
        scenario, bag_path, 'spart_demo_monitor' + (f'_{attempt}' if attempt > 1 else '')
    )
    ns = mon.ns
    events = {'target': [], 'attached': [], 'impulse': []}
    mon.node.create_subscription(
        Odometry, f'{ns}/target/odom', lambda m: events['target'].append(m), 100
    )
    mon.node.create_subscription(
        PoseStamped, f'{ns}/grasp_attached', lambda m: events['attached'].append(m), 10
    )
    mon.node.create_subscription(
        WrenchStamped, f'{ns}/grasp_impulse', lambda m: events['impulse'].append(m), 10
    )
    client = ActionClient(mon.node, Capture, f'{ns}/spart_controller/capture')
    feedback = []  # (sim time, Capture.Feedback)
    launch = subprocess.Popen(cmd, stdout=launch_log, stderr=subprocess.STDOUT, process_group=0)
    result = {
        'robot': name,
        'label': scenario['label'],
        'floating': True,
        'capture': True,
        'problems': [],
    }
    wall0 = time.monotonic()
    goal_result = None
    try:
        mon.wait(
            lambda: mon.last_joint_state and mon.status and mon.status[-1][1].commanding,
            120.0,
            'the controller to command',
            launch,
        )
        mon.wait(lambda: len(events['target']) > 5, 60.0, "the target's odometry", launch)
        mon.wait(client.server_is_ready, 30.0, 'the ~/capture action server', launch)
        say(f'nodes up, the controller commanding after {time.monotonic() - wall0:.1f} s')
        t_goal = mon.sim_time() + 0.5
        mon.wait(lambda: mon.sim_time() >= t_goal, 30.0, 'the goal time', launch)
        future = client.send_goal_async(
            Capture.Goal(),
            feedback_callback=lambda m: feedback.append((mon.sim_time(), m.feedback)),
        )
        handle = mon.wait(
            lambda: future.done() and future.result(), 60.0, 'the goal response', launch
        )
        t_goal = mon.sim_time()
        if not handle.accepted:
            raise RuntimeError('the capture goal was rejected')
        done = handle.get_result_async()
        limit = seconds if seconds else LONGEST
        say(f'capture goal sent at sim time {t_goal:.2f} s; running up to {limit:g} s')
        wall_run, machine_run = time.monotonic(), sd.machine_cpu(launch.pid)
        next_print = time.monotonic() + 1.0
        while mon.sim_time() < t_goal + limit and not done.done():
            mon.spin(0.05)
            if launch.poll() is not None:
                raise RuntimeError(f'the nodes stopped during the run ({launch.returncode})')
            if time.monotonic() >= next_print and feedback:
                next_print += 1.0
                fb = feedback[-1][1]
                v = fb.relative_twist.linear
                say(
                    f'  sim time {mon.sim_time() - t_goal:5.2f} s  {fb.phase:11s} distance '
                    f'{fb.distance:.4f} m  relative {np.linalg.norm([v.x, v.y, v.z]) * 1e3:.2f} '
                    f'mm/s {fb.message[:60]}'
                )
            if time.monotonic() - wall_run > 10 * limit + 30:
                raise RuntimeError('the simulation is not advancing')
        if done.done():
            goal_result = done.result()
        result['sim_seconds'] = mon.sim_time() - t_goal
        result['wall_seconds'] = time.monotonic() - wall_run
        busy, ours = (b - a for a, b in zip(machine_run, sd.machine_cpu(launch.pid)))
        result['other_load_cores'] = max(busy - ours, 0.0) / max(result['wall_seconds'], 1e-9)
        sd.pause_and_query(mon, result, launch, floating=True)
    finally:
        try:
            sd.stop_nodes(mon, launch, result)
        finally:
            client.destroy()
            mon.close()
    recorded = read_messages(str(bag_path))
    rec = sd.Recording(recorded, ns, robot)
    # a busy machine's stall: the scenario is run once more (sim_demo.disturbance)
    seconds_run = result.get('sim_seconds', 0.0)
    sd.record_stalls(result, mon, rec, t_goal, t_goal + seconds_run, seconds_run)
    summarize_capture(
        result,
        sd,
        mon,
        rec,
        recorded,
        robot,
        scenario,
        t_goal,
        out,
        name,
        bag_path,
        feedback,
        goal_result,
        events,
        full=not seconds,
    )
    return result


def _target_momentum(target, odometry):
    """Return (t (k,), linear (k, 3) [N s], angular about the CoM (k, 3) [N m s]) from odometry."""
    from spart_ros.core.attitude import quaternion_from_ros

    t, lin, ang = [], [], []
    I, com = np.asarray(target.inertia, dtype=float), np.asarray(target.com, dtype=float)
    for m in odometry:
        o, tw = m.pose.pose.orientation, m.twist.twist
        R = np.asarray(quaternion_from_ros(o.x, o.y, o.z, o.w), dtype=float)
        v = np.array([tw.linear.x, tw.linear.y, tw.linear.z])
        w = np.array([tw.angular.x, tw.angular.y, tw.angular.z])
        t.append(_seconds(m.header.stamp))
        lin.append(target.mass * (R @ (v + np.cross(w, com))))
        ang.append(R @ (I @ w))
    return np.array(t), np.array(lin).reshape(-1, 3), np.array(ang).reshape(-1, 3)


def summarize_capture(
    result,
    sd,
    mon,
    rec,
    recorded,
    robot,
    scenario,
    t_goal,
    out,
    name,
    bag_path,
    feedback,
    goal_result,
    events,
    full,
):
    """Check the capture against its bounds and write its plots, bag topics and animation."""
    from spart_ros.control.grasp import GraspTolerances
    from spart_ros.core.actuators import load_actuators
    from spart_ros.core.target import load_target
    from spart_ros.tools import plots
    from spart_ros.tools.animation import motion_gif, target_drawing
    from spart_ros.tools.bag import BagError, message_counts, read_back
    from spart_ros.tools.replay import add_replay_topics

    from spart_interfaces.action import Capture

    problems = result['problems']
    target = load_target(str(sd.share_file(scenario['target'])))
    tol = GraspTolerances()
    ns = mon.ns
    # the goal: its result, the phases it went through
    phases = list(dict.fromkeys(fb.phase for _, fb in feedback))
    cap = {'phases': phases, 'feedback': len(feedback), 'goal_time': t_goal}
    if goal_result is not None:
        r = goal_result.result
        cap.update(
            status=int(goal_result.status),
            error_code=int(r.error_code),
            message=r.error_string,
            grasp_time=r.grasp_time,
            rest_time=r.rest_time,
        )
    result['capture'] = cap
    # the grasp: the last feedback before the detumble, the plant's weld
    before = [(t, fb) for t, fb in feedback if fb.phase in ('synchronise', 'grasp')]
    welds = events['attached']
    t_grasp = _seconds(welds[0].header.stamp) if welds else None
    cap['welds'] = len(welds)
    if t_grasp is None:
        problems.append('the plant welded no target')
    elif len(welds) > 1:
        problems.append(f'the plant welded the target {len(welds)} times')
    if t_grasp is not None:
        cap['grasp_after_s'] = t_grasp - t_goal
        if t_grasp - t_goal > GRASP_BOUND:
            problems.append(f'the grasp {t_grasp - t_goal:.2f} s after the goal > {GRASP_BOUND} s')
        if before:
            fb = before[-1][1]
            v, w = fb.relative_twist.linear, fb.relative_twist.angular
            linear, angular = np.linalg.norm([v.x, v.y, v.z]), np.linalg.norm([w.x, w.y, w.z])
            cap['at_grasp'] = {
                'distance_m': fb.distance,
                'angle_rad': fb.angle,
                'relative_speed_m_s': float(linear),
                'relative_rate_rad_s': float(angular),
            }
            for what, value, bound in (
                ('distance', fb.distance, tol.position),
                ('angle', fb.angle, tol.orientation),
                ('relative speed', linear, tol.linear),
                ('relative rate', angular, tol.angular),
            ):
                if value > bound:
                    problems.append(f'at the grasp: {what} {value:.3g} > {bound:g}')
    if impulse_msg := (events['impulse'][0] if events['impulse'] else None):
        f, m = impulse_msg.wrench.force, impulse_msg.wrench.torque
        cap['impulse'] = [m.x, m.y, m.z, f.x, f.y, f.z]
    if full:
        if goal_result is None:
            problems.append(f'the capture did not end within {LONGEST:g} s')
        elif goal_result.result.error_code != Capture.Result.SUCCESSFUL or cap['rest_time'] <= 0:
            problems.append(f'the capture did not succeed: {goal_result.result.error_string}')
        elif cap['rest_time'] - cap['grasp_time'] > DETUMBLE_BOUND:
            problems.append(
                f'the detumble took {cap["rest_time"] - cap["grasp_time"]:.1f} s > '
                f'{DETUMBLE_BOUND:g} s'
            )
    # the base attitude until the grasp; the limits
    stamps = sorted(s for s in rec.odom if s >= t_goal * 1e9)
    if stamps:
        R0 = rec.odom[stamps[0]][0]
        end = t_grasp if t_grasp is not None else np.inf
        angle = [
            math.degrees(math.acos(max(-1.0, min(1.0, (np.trace(R0.T @ rec.odom[s][0]) - 1) / 2))))
            for s in stamps
            if s * 1e-9 <= end
        ]
        cap['attitude_before_grasp_deg'] = max(angle) if angle else 0.0
        if cap['attitude_before_grasp_deg'] > ATTITUDE_BOUND:
            problems.append(
                f'base attitude before the grasp {cap["attitude_before_grasp_deg"]:.3f} deg > '
                f'{ATTITUDE_BOUND} deg'
            )
    arm = [j for j in robot.joints if j.q_id > 0]
    cols = [robot.q_names.index(j.name) for j in arm]
    rates = np.array([j.limits.velocity for j in arm])
    qd = np.array([qd for _, _, _, qd in rec.js])[:, cols] if rec.js else np.zeros((0, len(arm)))
    cap['rate_fraction'] = float((np.abs(qd) / rates).max()) if len(qd) else 0.0
    efforts = np.array([j.limits.effort for j in arm])
    tau = np.array([c[1] for c in rec.commands]) if rec.commands else np.zeros((0, len(arm)))
    cap['effort_fraction'] = float((np.abs(tau) / efforts).max()) if len(tau) else 0.0
    actuators = load_actuators(str(sd.share_file(scenario['actuators'])))
    w_max = np.array([w.max_speed for w in actuators.wheels])
    speeds = np.array([v for _, v in rec.wheels]) if rec.wheels else np.zeros((0, len(w_max)))
    cap['wheel_fraction'] = float((np.abs(speeds) / w_max).max()) if len(speeds) else 0.0
    for what in ('rate_fraction', 'effort_fraction', 'wheel_fraction'):
        if cap[what] > 1.0:
            problems.append(f'{what.replace("_", " ")} {cap[what]:.3f} > 1 (a limit exceeded)')
    # states per simulated second (one per publish period)
    seconds = result.get('sim_seconds', 0.0)
    if seconds > 0:
        period = scenario['publish_period']
        t0_ns, t1_ns = t_goal * 1e9, (t_goal + seconds) * 1e9
        published = sum(1 for s, _, _, _ in rec.js if t0_ns < s <= t1_ns)
        result['states_per_second'] = {
            'published': published,
            'steps': int(round(seconds / period)),
            'per_simulated_second': published / seconds,
            'fraction': published / max(round(seconds / period), 1),
        }
    lat = rec.latencies()
    lat = lat[len(lat) // 10 :] * 1e3
    if len(lat):
        result['latency_ms'] = {
            'p50': float(np.percentile(lat, 50)),
            'p99': float(np.percentile(lat, 99)),
            'max': float(lat.max()),
            'samples': int(len(lat)),
        }
    # the bag: /tf of the robot, its base and the target, read back
    target_odom = [m for _, c, _, m in recorded if c.topic == f'{ns}/target/odom']
    try:
        added = add_replay_topics(
            str(bag_path), robot, ns, messages=recorded, odometry_topics=(f'{ns}/target/odom',)
        )
        topics = message_counts(recorded)
        # the added topics counted (the bag's summary), decoded at its start, middle and end (the
        # /tf of a run are written from one layout; test_demo.py decodes every message)
        topics.update(read_back(str(bag_path), topics=list(added), sample=True))
        js_stamps = {s for s, _, _, _ in rec.js}
        result['bag'] = {
            'path': str(bag_path),
            'topics': len(topics),
            'messages': sum(n for _, n in topics.values()),
            'added': added,
            'joint_states': len(rec.js),
            'target_odometry': len(target_odom),
            'joint_states_without_odometry': len(js_stamps - set(rec.odom)),
            'odometry_without_joint_state': len(set(rec.odom) - js_stamps),
            'left_out_at_start': dict(mon.recorder.dropped_at_start),
        }
        if not target_odom:
            problems.append('the bag has no target odometry')
    except BagError as err:
        problems.append(str(err))
    # the animation: the robot and the target (its last odometry before each state), 15 fps
    t_target = [_seconds(m.header.stamp) for m in target_odom]
    frames, next_t = [], -0.5
    odom_stamps = sorted(rec.odom)
    from spart_ros.core.attitude import quaternion_from_ros

    for stamp, _, q_k, _ in rec.js:
        t = stamp * 1e-9 - t_goal
        k = bisect.bisect_right(odom_stamps, stamp) - 1
        j = bisect.bisect_right(t_target, stamp * 1e-9) - 1
        if t >= next_t and k >= 0 and stamp - odom_stamps[k] <= 20_000_000:
            R_b, p_b = rec.odom[odom_stamps[k]][:2]
            T_b = np.eye(4)
            T_b[:3, :3], T_b[:3, 3] = R_b, p_b
            drawing = None
            if j >= 0:
                o = target_odom[j].pose.pose
                T_l = np.eye(4)
                T_l[:3, :3] = quaternion_from_ros(
                    o.orientation.x, o.orientation.y, o.orientation.z, o.orientation.w
                )
                T_l[:3, 3] = [o.position.x, o.position.y, o.position.z]
                drawing = target_drawing(target, T_l)
            frames.append((T_b, dict(zip(robot.q_names, q_k)), [], drawing))
            next_t = t + 1.0 / 15
    if frames:
        gif = f'{name}_motion.gif'
        try:
            backend = motion_gif(
                out / gif,
                str(sd.robot_urdf(scenario['robot'])),
                frames,
                True,
                fps=15,
                title=f'{name} (sim time, x1)',
            )
            result['animation'] = {'file': gif, 'backend': backend, 'frames': len(frames)}
        except Exception as err:  # noqa: BLE001 - reported, the run goes on
            problems.append(f'the animation failed: {type(err).__name__}: {err}')
    # plots
    pngs = []
    if feedback:
        t_f = np.array([t for t, _ in feedback]) - t_goal
        fb = [f for _, f in feedback]

        def norm(vectors):
            return np.array([np.linalg.norm([v.x, v.y, v.z]) for v in vectors])

        plots.capture_progress(
            out / f'{name}_progress.png',
            f'{name}: distance and relative twist at the fixture, per phase (the action feedback)',
            t_f,
            [f.phase for f in fb],
            np.array([f.distance for f in fb]),
            np.array([f.angle for f in fb]),
            norm([f.relative_twist.linear for f in fb]),
            norm([f.relative_twist.angular for f in fb]),
            (tol.position, tol.orientation, tol.linear, tol.angular),
        )
        pngs.append(f'{name}_progress.png')
    if stamps:
        t_o = np.array(stamps) * 1e-9 - t_goal
        rpy = np.array([sd.rpy_deg(rec.odom[s][0]) for s in stamps])
        plots.base_motion(out / f'{name}_base.png', f'{name}: base attitude (LVLH)', t_o, rpy)
        pngs.append(f'{name}_base.png')
    if len(speeds):
        t_w = np.array([s for s, _ in rec.wheels]) * 1e-9 - t_goal
        Js = np.array([w.rotor_inertia for w in actuators.wheels])
        h = speeds * Js @ actuators.wheel_axes.T
        plots.reaction_wheels(
            out / f'{name}_wheels.png',
            f"{name}: reaction wheels (their momentum takes the stack's)",
            list(rec.wheel_names),
            t_w,
            speeds,
            h,
        )
        pngs.append(f'{name}_wheels.png')
    if rec.thrusters:
        t_th = np.array([s for s, _, _ in rec.thrusters]) * 1e-9 - t_goal
        plots.thrusters(
            out / f'{name}_thrusters.png',
            f'{name}: thrusters',
            list(rec.thruster_names),
            t_th,
            np.array([f for _, f, _ in rec.thrusters]),
            np.array([m for _, _, m in rec.thrusters]),
        )
        pngs.append(f'{name}_thrusters.png')
    if target_odom:
        t_m, lin, ang = _target_momentum(target, target_odom)
        keep = np.ones(len(t_m), dtype=bool)
        if t_grasp is not None:
            keep = np.abs(t_m - t_grasp) <= 1.5
        plots.grasp_impulse(
            out / f'{name}_impulse.png',
            f"{name}: the target's momentum around the grasp (its odometry, noisy)",
            t_m[keep] - t_goal,
            lin[keep],
            ang[keep],
            (t_grasp if t_grasp is not None else t_m[-1]) - t_goal,
            np.array(cap['impulse']) if 'impulse' in cap else None,
        )
        pngs.append(f'{name}_impulse.png')
        # the combined system's rates
        t_base = np.array(stamps) * 1e-9 - t_goal if stamps else np.zeros(0)
        base_rate = np.degrees([np.linalg.norm(rec.odom[s][3]) for s in stamps])
        target_rate = np.degrees(
            [
                np.linalg.norm(
                    [m.twist.twist.angular.x, m.twist.twist.angular.y, m.twist.twist.angular.z]
                )
                for m in target_odom
            ]
        )
        t_js = np.array([s for s, _, _, _ in rec.js]) * 1e-9 - t_goal
        plots.capture_rates(
            out / f'{name}_rates.png',
            f"{name}: the combined system's rates (relative to LVLH)",
            t_base,
            base_rate,
            t_m - t_goal,
            target_rate,
            t_js,
            np.degrees(np.abs(qd).max(axis=1)) if len(qd) else np.zeros(len(t_js)),
            None if t_grasp is None else t_grasp - t_goal,
        )
        pngs.append(f'{name}_rates.png')
        cap['target_rate_end_deg_s'] = float(target_rate[-1])
    if rec.commands:
        receipts = np.array([r for _, r, _, _ in rec.js])
        t_js = np.array([s for s, _, _, _ in rec.js]) * 1e-9 - t_goal
        t_c = np.array([t_js[max(0, np.searchsorted(receipts, c[0]) - 1)] for c in rec.commands])
        plots.efforts(
            out / f'{name}_efforts.png', f'{name}: commanded efforts', robot.q_names, t_c, tau
        )
        pngs.append(f'{name}_efforts.png')
    result['plots'] = pngs


def print_capture(r):
    """Print the capture scenario's summary lines."""
    c = r.get('capture', {})
    say(f'=== {r["label"]}')
    say(
        f'  {r.get("sim_seconds", 0):.2f} s simulated after the goal, '
        f'{r.get("wall_seconds", 0):.2f} s wall time (real time)'
    )
    say(f'  phases {c.get("phases")}; result {c.get("message", "(none: the run ended first)")}')
    if 'grasp_after_s' in c:
        g = c.get('at_grasp', {})
        say(
            f'  grasp {c["grasp_after_s"]:.2f} s after the goal (bound {GRASP_BOUND:g} s): '
            'distance '
            f'{g.get("distance_m", float("nan")) * 1e3:.2f} mm, relative '
            f'{g.get("relative_speed_m_s", float("nan")) * 1e3:.2f} mm/s and '
            f'{g.get("relative_rate_rad_s", float("nan")) * 1e3:.2f} mrad/s at the fixture; the '
            f'plant welded it {c.get("welds", 0)} time(s)'
            + (f', impulse {np.linalg.norm(c["impulse"][3:6]):.3g} N s' if 'impulse' in c else '')
        )
    if c.get('rest_time'):
        say(
            f'  at rest {c["rest_time"] - c["grasp_time"]:.2f} s after the grasp (bound '
            f'{DETUMBLE_BOUND:g} s), the target at '
            f'{c.get("target_rate_end_deg_s", float("nan")):.3f} '
            'deg/s at the end'
        )
    say(
        f'  base attitude {c.get("attitude_before_grasp_deg", float("nan")):.3f} deg until the '
        f'grasp (bound {ATTITUDE_BOUND} deg); joint rates <= {c.get("rate_fraction", 0):.0%}, '
        f'efforts <= {c.get("effort_fraction", 0):.0%}, wheels <= {c.get("wheel_fraction", 0):.0%}'
        ' of their limits'
    )
    if 'latency_ms' in r:
        lat = r['latency_ms']
        say(f'  command latency p50 {lat["p50"]:.2f} ms p99 {lat["p99"]:.2f} ms')
    if 'bag' in r:
        b = r['bag']
        say(
            f"  bag {b['path']}: {b['topics']} topics, {b['messages']} messages, the target's "
            f'odometry {b["target_odometry"]} (and in /tf)'
        )
    say(f'  plots: {", ".join(r.get("plots", []))}')
    if 'animation' in r:
        say(f'  animation: {r["animation"]["file"]} ({r["animation"]["frames"]} frames)')
    for p in r['problems']:
        say(f'  PROBLEM: {p}')
