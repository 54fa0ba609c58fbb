"""Interim main job: run the installed spart_heartbeat node for a few seconds,
publish joint states to it over DDS and print what it published.

    bash scripts/run_demo.sh [--seconds 3]

(Run through scripts/run_demo.sh, which sets up and sources the environment.)
"""
import argparse
import json
import math
import os
from pathlib import Path
import sys
import time

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))
from node_helpers import LATCHED_QOS, RELIABLE_QOS, RosTestNode, start_node  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=3.0,
                        help="how long to publish joint states (default 3)")
    args = parser.parse_args()

    from sensor_msgs.msg import JointState
    from std_msgs.msg import String

    names = ["joint_1", "joint_2", "joint_3"]
    print(f"[demo] ROS_DOMAIN_ID={os.environ.get('ROS_DOMAIN_ID')}: starting spart_heartbeat")
    proc = start_node("spart_ros", "heartbeat_node", parameters={"status_period": 0.5})
    try:
        with RosTestNode("spart_demo") as ros:
            status = ros.subscribe(String, "/spart_heartbeat/status", LATCHED_QOS)
            pub = ros.publisher(JointState, "/joint_states", RELIABLE_QOS)
            ros.wait_for(lambda: status.messages, 20.0, "the node's first status", process=proc)
            ros.wait_for_matched(pub, 1, 10.0, process=proc)
            sent, t0 = 0, time.monotonic()
            period = 0.1
            while time.monotonic() - t0 < args.seconds:
                t = time.monotonic() - t0
                msg = JointState(name=names,
                                 position=[math.sin(t + i) for i in range(len(names))])
                msg.header.stamp = ros.node.get_clock().now().to_msg()
                pub.publish(msg)
                sent += 1
                ros.spin_for(period)
            expected = sent
            ros.spin_until(lambda: status.last and json.loads(status.last.data)["count"] >= expected,
                           5.0)
        print(f"[demo] published {sent} sensor_msgs/JointState on /joint_states "
              f"({', '.join(names)})")
        print(f"[demo] spart_heartbeat published {len(status.messages)} statuses on "
              "/spart_heartbeat/status; first and last:")
        for msg in (status.messages[0], status.messages[-1]):
            print("  " + msg.data)
        last = json.loads(status.last.data)
    finally:
        rc = proc.stop()
        node_log = proc.output()
        proc.cleanup()
    print("[demo] node log:")
    for line in node_log.splitlines():
        print("  | " + line)
    ok = rc == 0 and last["count"] == sent and last["joint_names"] == names
    print(f"[demo] node received {last['count']}/{sent} messages, exit code {rc}: "
          + ("OK" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
