# Source me (bash): the spart_ros development environment.
#
#   source scripts/env.sh
#
# - activates .venv (the ROS 2 Kilted wheels, colcon, numpy, ...),
# - puts the venv on AMENT_PREFIX_PATH / CMAKE_PREFIX_PATH (it is the "ROS
#   install" here: share/ament_index, share/*/cmake, lib/*.so),
# - sources install/setup.bash when the workspace is built (skip with
#   `source scripts/env.sh --no-install`),
# - RMW_IMPLEMENTATION=rmw_fastrtps_cpp and DDS discovery on this host only
#   (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST), unless already set.
# ROS_DOMAIN_ID is left alone (scripts/test.sh picks a random one per run).

_spart_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_spart_venv="$_spart_root/.venv"

if [[ ! -x "$_spart_venv/bin/python" ]]; then
  echo "[env] $_spart_venv is missing: run 'bash scripts/setup.sh' first" >&2
  return 1 2>/dev/null || exit 1
fi

# prepend DIR to the colon-separated variable NAME, without duplicates
_spart_prepend() {
  local name="$1" dir="$2" cur="${!1:-}"
  case ":$cur:" in *":$dir:"*) ;; *) export "$name=$dir${cur:+:$cur}" ;; esac
}

# activate the venv (what bin/activate does, minus the prompt change)
export VIRTUAL_ENV="$_spart_venv"
_spart_prepend PATH "$_spart_venv/bin"
unset PYTHONHOME
# let this venv's Python set its own LD_LIBRARY_PATH (ros_wheels_bootstrapper),
# even when this shell was started from another wheel venv's Python
unset _ROS_WHEELS_BOOTSTRAP_COMPLETE

_spart_prepend AMENT_PREFIX_PATH "$_spart_venv"
_spart_prepend CMAKE_PREFIX_PATH "$_spart_venv"
export RMW_IMPLEMENTATION="${RMW_IMPLEMENTATION:-rmw_fastrtps_cpp}"
export ROS_AUTOMATIC_DISCOVERY_RANGE="${ROS_AUTOMATIC_DISCOVERY_RANGE:-LOCALHOST}"

if [[ "${1:-}" != "--no-install" && -f "$_spart_root/install/setup.bash" ]]; then
  # colcon's setup scripts are not `set -u` clean
  case "$-" in *u*) _spart_had_u=1; set +u ;; *) _spart_had_u= ;; esac
  # shellcheck disable=SC1091
  source "$_spart_root/install/setup.bash"
  if [[ -n "$_spart_had_u" ]]; then set -u; fi
  unset _spart_had_u
fi
unset -f _spart_prepend
unset _spart_root _spart_venv
