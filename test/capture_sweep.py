"""
The capture's envelope on the core's dynamics alone (phase 1's stand-in, test/capture_sim.py).

Not a test (the suite runs one case, test/test_capture.py): ``python test/capture_sweep.py
[rates_deg] [seeds]`` from the repository root, e.g. ``python test/capture_sweep.py 0,5,10,15 3``,
prints one line per tumble rate and random axis: accepted or refused (why), when grasped and at
rest, the base attitude before the grasp and over the run, the largest joint rate, the relative
twist at the grasp.  The envelope on the plants, in the main job's scenario:
benchmarks/bench_capture_sweep.py.
"""

import os
import sys
import time
import warnings

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)), os.getcwd()]

from capture_sim import CaptureSim, chaser, EE, Q0, run, tumbling_target_state  # noqa: E402
import numpy as np  # noqa: E402
from spart_ros.control.capture import Capture  # noqa: E402
from spart_ros.control.capture_goal import CaptureGoal, CaptureRefused  # noqa: E402
from spart_ros.core.rigid_motion import rotation_from_vector  # noqa: E402
from spart_ros.core.target import Target  # noqa: E402


def main(rates=(0.0, 5.0, 10.0, 15.0), seeds=3):
    warnings.simplefilter('ignore')
    robot = chaser()
    F = np.eye(4)
    F[:3, 3] = [0.5, 0.0, 0.0]
    F[:3, :3] = rotation_from_vector([0.0, -np.pi / 2, 0.0])
    target = Target.make('client', 150.0, [20.0, 25.0, 18.0], fixture=F)
    for rate in rates:
        for seed in range(seeds):
            state = tumbling_target_state(target, robot, Q0, 0.15, rate, seed)
            sim = CaptureSim(robot, target, Q0, state)
            goal = CaptureGoal()
            cpu = time.process_time()
            try:
                log, _ = run(Capture(robot, target, EE), sim, goal, 40.0)
            except CaptureRefused as err:
                print(f'{rate:5.1f} deg/s axis {seed}: refused: {err}')
                continue
            cpu = time.process_time() - cpu
            detumble = np.flatnonzero(log['phase'] == 'detumble')
            i = int(detumble[0]) if detumble.size else len(log['t'])
            print(
                f'{rate:5.1f} deg/s axis {seed}: {goal.status}; planned grasp '
                f'{goal.plan.t_grasp:.2f} s, grasped {log["t"][i - 1]:.2f} s, at rest '
                f'{goal.started.get("done", float("nan")):.2f} s; base attitude '
                f'{np.rad2deg(log["base_angle"][:i].max()):.3f} deg before the grasp, '
                f'{np.rad2deg(log["base_angle"].max()):.3f} deg in all; joint rates <= '
                f'{np.abs(log["qd"]).max():.3f} rad/s; relative twist at the grasp '
                f'{log["linear"][i - 1] * 1e3:.3f} mm/s, {log["angular"][i - 1] * 1e3:.3f} '
                f'mrad/s ({cpu:.2f} s CPU)'
            )


if __name__ == '__main__':
    args = sys.argv[1:]
    main(
        tuple(float(x) for x in args[0].split(',')) if args else (0.0, 5.0, 10.0, 15.0),
        int(args[1]) if len(args) > 1 else 3,
    )
