"""The main job's demo (scripts/dynamics_demo.py, run by scripts/run_demo.sh) works: run
it as a subprocess in the test environment (install sourced by colcon test, this run's
ROS_DOMAIN_ID) and check its exit code and closing "[demo] ... OK" line."""
import os
from pathlib import Path
import subprocess
import sys

import pytest

from node_helpers import ros_env, scaled

ROOT = Path(__file__).resolve().parent.parent
DEMO = ROOT / "scripts" / "dynamics_demo.py"

pytestmark = pytest.mark.timeout(120)


def test_dynamics_demo_runs_ok():
    env = ros_env()        # this process's environment and ROS_DOMAIN_ID
    assert env["ROS_DOMAIN_ID"] == os.environ["ROS_DOMAIN_ID"]
    proc = subprocess.run([sys.executable, str(DEMO)], env=env, cwd=str(ROOT),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=scaled(30.0))
    out = proc.stdout
    lines = out.strip().splitlines()
    assert proc.returncode == 0, out
    assert lines and lines[-1].startswith("[demo] ") and lines[-1].endswith(": OK"), out
    assert "FAILED" not in out, out
    assert "[demo] node: model 'Chaser':" in out, out
    for topic in ("link_twists", "jacobians", "center_of_mass"):
        assert f" on /spart_dynamics/{topic}" in out, out
    assert "'Joint_1', 'Joint_2', 'Joint_3']" in out, out   # Jacobian column names
