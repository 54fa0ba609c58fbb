#!/usr/bin/env bash
# Set up (scripts/setup.sh), then run the main job.
#
# Main job (scripts/dynamics_demo.py): start the installed spart_dynamics node
# on SPART's SC_3DoF spacecraft (floating base), drive it over DDS with joint
# states and odometry for ~5 s, call its inverse/forward dynamics services and
# print a report ending in "[demo] ... OK" (exit 0) or "... FAILED" (exit 1).
# Extra arguments go to the demo (--seconds, --rate).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
# shellcheck source=env.sh
source "$ROOT/scripts/env.sh"
export ROS_DOMAIN_ID="${ROS_DOMAIN_ID:-$(( RANDOM % 100 + 1 ))}"
exec python "$ROOT/scripts/dynamics_demo.py" "$@"
