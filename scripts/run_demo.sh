#!/usr/bin/env bash
# Set up (scripts/setup.sh), then run the main job.
#
# Main job (scripts/sim_demo.py): the closed loop over real ROS 2 topics on robots
# simulated by MuJoCo: for SPART's SC_3DoF spacecraft (free-floating base, zero gravity)
# and then a KUKA iiwa (fixed base, gravity), sim_demo.launch.py starts spart_sim,
# spart_controller and spart_dynamics as separate processes; the demo sends a joint
# trajectory, prints progress and a summary (tracking error, base attitude, momentum
# drift, command latency), writes PNG plots and an MCAP bag of every topic to
# demo_output/<date-time>/, and ends with "[demo] ... OK" (exit 0) or "... FAILED"
# (exit 1). Extra arguments go to the demo (--seconds, --output, --lockstep, --scenario).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
# shellcheck source=env.sh
source "$ROOT/scripts/env.sh"
export ROS_DOMAIN_ID="${ROS_DOMAIN_ID:-$(( RANDOM % 100 + 1 ))}"
exec python "$ROOT/scripts/sim_demo.py" "$@"
