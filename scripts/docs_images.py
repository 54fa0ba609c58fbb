"""
Draw the README's picture: SPART's SC_3DoF tracking the demo's trajectory, offline.

``python scripts/docs_images.py [--output FOLDER]`` (default docs/images) runs the demo's SC_3DoF
scenario on the embedded MuJoCo plant without ROS (``spart_ros.sim.closed_loop.demo``) and draws
its motion, 15 frames per simulated second, with :func:`spart_ros.tools.animation.motion_gif`
(MuJoCo's offscreen renderer where a GL backend works, else matplotlib): the README shows
``SC_3DoF_motion.gif``.  test/test_docs_examples.py runs it into a temporary folder.
"""

import argparse
import os
from pathlib import Path
import sys

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def frames_of(run, fps=15.0):
    """Return the animation frames [(base link pose (4, 4), {joint: position})] of ``run``."""
    names = list(run.robot.coordinates.names)
    frames, next_t = [], run.t[0]
    for k, t in enumerate(run.t):
        if t + 1e-9 < next_t:
            continue
        T = np.eye(4)
        T[:3, :3], T[:3, 3] = run.base_rotation[k], run.base_position[k]
        frames.append((T, dict(zip(names, run.q[k]))))
        next_t = t + 1.0 / fps
    return frames


def main(argv=None):
    """Write SC_3DoF_motion.gif into the output folder; print what was drawn."""
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--output', default=str(ROOT / 'docs' / 'images'))
    parser.add_argument('--backend', default='auto', help="'auto', 'mujoco' or 'matplotlib'")
    args = parser.parse_args(argv)
    # MuJoCo picks its GL backend at its first import (the plant's, before the drawing's)
    os.environ.setdefault('MUJOCO_GL', 'egl')
    from spart_ros.sim.closed_loop import demo
    from spart_ros.tools.animation import motion_gif

    run = demo('SC_3DoF')
    frames = frames_of(run)
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    path = out / 'SC_3DoF_motion.gif'
    backend = motion_gif(
        path,
        str(ROOT / 'urdf' / 'SC_3DoF.urdf'),
        frames,
        True,
        fps=15,
        title='SC_3DoF (sim time, x1)',
        backend=args.backend,
    )
    print(f'{path}: {len(frames)} frames ({backend})')
    return 0


if __name__ == '__main__':
    sys.exit(main())
