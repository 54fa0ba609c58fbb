"""Main job: run the installed spart_dynamics node on SPART's SC_3DoF spacecraft
(a 3-joint arm on a free-floating base), drive it over DDS and print what it computed.

    bash scripts/run_demo.sh [--seconds 5] [--rate 50]

Starts the node as ``ros2 launch spart_ros dynamics.launch.py urdf_path:=<installed
urdf/SC_3DoF.urdf> base:=floating`` would, through scripts/local_launch.py (the installed
launch file and config/dynamics_node.yaml; ros2launch is not installable here), publishes a smooth joint trajectory on
/joint_states and a slowly tumbling base on /odom with rclpy publishers, collects
/spart_dynamics/link_twists, /jacobians and /center_of_mass, calls
/spart_dynamics/inverse_dynamics (floating_base, use_current_state) and
/spart_dynamics/forward_dynamics once each, stops the node (SIGINT) and prints a report.
The last line is "[demo] ... OK" (exit code 0) or "[demo] ... FAILED" (exit code 1).

(Run through scripts/run_demo.sh, which sets up and sources the environment; or, in a
shell where scripts/env.sh is sourced, `python scripts/dynamics_demo.py`.)
"""
import argparse
import math
import os
from pathlib import Path
import re
import sys
import tempfile
import time

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test"))
from node_helpers import (BEST_EFFORT_QOS, RELIABLE_QOS, NodeProcess,  # noqa: E402
                          RosTestNode, WaitTimeout, ros_env)
import local_launch  # noqa: E402  (scripts/local_launch.py: runs the launch files here)

NODE = "/spart_dynamics"
JOINTS = ["Joint_1", "Joint_2", "Joint_3"]
AMPLITUDE = [0.6, -0.8, 0.5]            # rad: each joint goes 0 -> amplitude -> 0
BASE_RATE = [0.02, -0.015, 0.03]        # rad/s: constant base angular velocity (base frame)
BASE_DRIFT = [0.01, 0.0, -0.005]        # m/s: constant base linear velocity (world frame)
FD_EFFORTS = [0.5, -0.3, 0.1]           # N m: joint torques for the forward-dynamics call


def _urdf():
    """The installed SC_3DoF.urdf (share/spart_ros/urdf), else the repository's."""
    try:
        from ament_index_python.packages import get_package_share_directory
        path = Path(get_package_share_directory("spart_ros")) / "urdf" / "SC_3DoF.urdf"
        if path.is_file():
            return path
    except Exception:  # noqa: BLE001 - fall back to the source tree
        pass
    return ROOT / "urdf" / "SC_3DoF.urdf"


def _joint_trajectory(t, duration):
    """Smooth rest-to-rest motion: q = a (1 - cos(2 pi t / T)) / 2."""
    w = 2.0 * math.pi / duration
    q = [a * (1.0 - math.cos(w * t)) / 2.0 for a in AMPLITUDE]
    dq = [a * w * math.sin(w * t) / 2.0 for a in AMPLITUDE]
    return q, dq


def _base_state(t):
    """Base pose in the world and twist in the base frame for a constant body rate:
    R(t) = exp(t [w]x), p(t) = v t; returns (quaternion xyzw, position, w_b, v_b)."""
    norm = math.sqrt(sum(c * c for c in BASE_RATE))
    axis = [c / norm for c in BASE_RATE]
    half = 0.5 * norm * t
    quat = [axis[0] * math.sin(half), axis[1] * math.sin(half), axis[2] * math.sin(half),
            math.cos(half)]
    pos = [c * t for c in BASE_DRIFT]
    # v_b = R^T v_world (rotate by the inverse quaternion)
    x, y, z, w = quat
    R = [[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
         [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
         [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]]
    v_b = [sum(R[i][j] * BASE_DRIFT[i] for i in range(3)) for j in range(3)]
    return quat, pos, list(BASE_RATE), v_b


def _fmt(values, digits=4):
    return "[" + ", ".join(f"{v:+.{digits}f}" for v in values) + "]"


def _vec(v):
    return [v.x, v.y, v.z]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0,
                        help="how long to publish joint states and odometry (default 5)")
    parser.add_argument("--rate", type=float, default=50.0,
                        help="publishing rate in Hz (default 50)")
    args = parser.parse_args()
    t_start = time.monotonic()

    from nav_msgs.msg import Odometry
    from sensor_msgs.msg import JointState
    from spart_interfaces.msg import CenterOfMass, Jacobians, LinkTwists
    from spart_interfaces.srv import ForwardDynamics, InverseDynamics

    urdf = _urdf()
    launch_args = {"urdf_path": str(urdf), "base": "floating"}
    env = ros_env()     # picks a ROS_DOMAIN_ID if none is set
    print(f"[demo] ROS_DOMAIN_ID={os.environ.get('ROS_DOMAIN_ID')}: ros2 launch spart_ros dynamics.launch.py "
          + " ".join(f"{k}:={v}" for k, v in launch_args.items()) + "  (via scripts/local_launch.py)")
    workdir = tempfile.TemporaryDirectory(prefix="spart_demo_")
    (node,) = local_launch.nodes_of(local_launch.launch_file_path("dynamics.launch.py"), launch_args)
    cmd = local_launch.command_line(node, workdir.name)
    print("[demo]   " + " ".join(cmd))
    proc = NodeProcess(cmd, name=node.name, env=env, log_dir=workdir.name).start()
    failures = []
    sent = 0
    topics = {}
    id_res = fd_res = None
    rc = None
    try:
        with RosTestNode("spart_demo") as ros:
            topics = {
                f"{NODE}/link_twists": ros.subscribe(LinkTwists, f"{NODE}/link_twists", RELIABLE_QOS),
                f"{NODE}/jacobians": ros.subscribe(Jacobians, f"{NODE}/jacobians", RELIABLE_QOS),
                f"{NODE}/center_of_mass": ros.subscribe(CenterOfMass, f"{NODE}/center_of_mass",
                                                        RELIABLE_QOS),
            }
            pub_js = ros.publisher(JointState, "/joint_states", BEST_EFFORT_QOS)
            pub_odom = ros.publisher(Odometry, "/odom", BEST_EFFORT_QOS)
            # the model is loaded and every endpoint matched before the first message
            proc.wait_for_output(r"spart_dynamics\]: base floating, world frame", 20.0)
            for pub in (pub_js, pub_odom):
                ros.wait_for_matched(pub, 1, 10.0, process=proc)
            for col in topics.values():
                ros.wait_for(lambda c=col: c.subscription.get_publisher_count() >= 1, 10.0,
                             f"the node's publisher of {col.topic}", process=proc)

            period = 1.0 / args.rate
            n_steps = max(1, int(round(args.seconds * args.rate)))
            t0 = time.monotonic()
            for k in range(n_steps + 1):
                t = k * period
                stamp = ros.node.get_clock().now().to_msg()
                quat, pos, w_b, v_b = _base_state(t)
                odom = Odometry()
                odom.header.stamp, odom.header.frame_id = stamp, "world"
                odom.child_frame_id = "Spacecraft"
                p, o = odom.pose.pose.position, odom.pose.pose.orientation
                p.x, p.y, p.z = pos
                o.x, o.y, o.z, o.w = quat
                tw = odom.twist.twist
                tw.angular.x, tw.angular.y, tw.angular.z = w_b
                tw.linear.x, tw.linear.y, tw.linear.z = v_b
                pub_odom.publish(odom)
                q, dq = _joint_trajectory(t, args.seconds)
                js = JointState(name=JOINTS, position=q, velocity=dq)
                js.header.stamp = stamp
                pub_js.publish(js)
                sent += 1
                # spin until the next tick (receives the outputs meanwhile)
                ros.spin_until(lambda: time.monotonic() >= t0 + (k + 1) * period, 1.0, period=0.005)
            # the outputs of the last joint states
            ros.spin_until(lambda: all(len(c) >= sent for c in topics.values()), 2.0)

            req = InverseDynamics.Request(use_current_state=True, floating_base=True)
            id_res = ros.call(InverseDynamics, f"{NODE}/inverse_dynamics", req, 10.0, process=proc)
            req = ForwardDynamics.Request(use_current_state=True, joint_names=JOINTS,
                                          efforts=FD_EFFORTS)
            fd_res = ros.call(ForwardDynamics, f"{NODE}/forward_dynamics", req, 10.0, process=proc)
    except WaitTimeout as exc:
        failures.append(f"timeout: {exc}")
    finally:
        rc = proc.stop()
        node_log = proc.output()
        proc.cleanup()
        workdir.cleanup()

    # ---- report ---------------------------------------------------------------------
    summary = re.search(r"model '.*", node_log)
    print("[demo] node: " + (summary.group(0) if summary else "(no model summary in the log)"))
    if not summary:
        failures.append("no model summary in the node log")
    print(f"[demo] published {sent} sensor_msgs/JointState on /joint_states ({', '.join(JOINTS)}) "
          f"and {sent} nav_msgs/Odometry on /odom at {args.rate:g} Hz")
    for name, col in topics.items():
        print(f"[demo] received {len(col):4d} on {name}")
        if not col.messages:
            failures.append(f"nothing received on {name}")

    com = topics.get(f"{NODE}/center_of_mass")
    if com and com.last:
        m = com.last
        print(f"[demo] last CoM: position {_fmt(_vec(m.position))} m, velocity "
              f"{_fmt(_vec(m.velocity))} m/s, total mass {m.total_mass:g} kg")
    jac = topics.get(f"{NODE}/jacobians")
    if jac and jac.last:
        for j in jac.last.jacobians:
            print(f"[demo] Jacobian of {j.link_name}: {j.rows} x {j.cols}, columns "
                  f"{list(j.column_names)}")
            print(f"[demo]   point at {_fmt(_vec(j.position))} m (world)")
            if len(j.data) != j.rows * j.cols:
                failures.append(f"Jacobian of {j.link_name}: {len(j.data)} values for "
                                f"{j.rows} x {j.cols}")
    twists = topics.get(f"{NODE}/link_twists")
    if twists and twists.last:
        print(f"[demo] link twists of {len(twists.last.link_names)} links: "
              f"{list(twists.last.link_names)}")

    for label, res in (("inverse_dynamics (floating_base, use_current_state)", id_res),
                       ("forward_dynamics (use_current_state)", fd_res)):
        if res is None:
            print(f"[demo] {label}: no response")
            failures.append(f"{label}: no response")
            continue
        print(f"[demo] {label}: success={res.success} message={res.message!r}")
        if not res.success:
            failures.append(f"{label} failed: {res.message}")
            continue
        a = res.base_acceleration
        if hasattr(res, "efforts"):
            print(f"[demo]   joint efforts {dict(zip(res.joint_names, [round(e, 6) for e in res.efforts]))} N m")
        else:
            print(f"[demo]   joint efforts in {dict(zip(JOINTS, FD_EFFORTS))} N m -> joint "
                  f"accelerations {dict(zip(res.joint_names, [round(x, 6) for x in res.accelerations]))} rad/s^2")
        print(f"[demo]   base acceleration: angular {_fmt(_vec(a.angular))} rad/s^2, "
              f"linear {_fmt(_vec(a.linear))} m/s^2")

    problems = [ln for ln in node_log.splitlines() if "ERROR" in ln or "Traceback" in ln]
    print(f"[demo] node log ({len(node_log.splitlines())} lines, {len(problems)} errors):")
    for line in node_log.splitlines():
        print("  | " + line)
    if rc != 0:
        failures.append(f"node exit code {rc}")
    if problems:
        failures.append(f"{len(problems)} error lines in the node log")
    for f in failures:
        print(f"[demo] problem: {f}")
    counts = "/".join(str(len(c)) for c in topics.values()) or "0/0/0"
    verdict = "OK" if not failures else "FAILED"
    print(f"[demo] {sent} joint states in, {counts} link_twists/jacobians/center_of_mass out, "
          f"services {'ok' if id_res and fd_res and id_res.success and fd_res.success else 'failed'}, "
          f"node exit code {rc}, {time.monotonic() - t_start:.1f} s: {verdict}")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
