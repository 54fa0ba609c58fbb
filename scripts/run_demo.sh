#!/usr/bin/env bash
# Set up (scripts/setup.sh), then run the main job.
#
# Main job (scripts/sim_demo.py): the closed loop on the embedded MuJoCo plant over real ROS 2
# topics, for SPART's SC_3DoF spacecraft (free-floating, floating-base inverse dynamics) and a
# KUKA iiwa (fixed base, gravity, computed torque): spart_sim + spart_controller + spart_dynamics
# as separate processes (launch/sim_demo.launch.py via scripts/local_launch.py), a joint
# trajectory, live progress, a summary, PNG plots and an MCAP bag per scenario in
# demo_output/<time>/. Ends with "[demo] ... OK" (exit 0) or "... FAILED" (exit 1).
# Extra arguments go to the demo (--output, --seconds, --scenarios).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
# shellcheck source=env.sh
source "$ROOT/scripts/env.sh"
export ROS_DOMAIN_ID="${ROS_DOMAIN_ID:-$(( RANDOM % 100 + 1 ))}"
exec python "$ROOT/scripts/sim_demo.py" "$@"
