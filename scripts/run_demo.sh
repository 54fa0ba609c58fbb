#!/usr/bin/env bash
# Set up (scripts/setup.sh), then run the main job.
#
# INTERIM main job (until the demo issue lands): start the installed
# spart_heartbeat node for a few seconds, publish joint states to it and
# print what it published on ~/status.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/setup.sh"
# shellcheck source=env.sh
source "$ROOT/scripts/env.sh"
export ROS_DOMAIN_ID="${ROS_DOMAIN_ID:-$(( RANDOM % 100 + 1 ))}"
exec python "$ROOT/scripts/heartbeat_demo.py" "$@"
