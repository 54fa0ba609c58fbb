#!/usr/bin/env bash
# Set up spart_ros from a clean checkout: Python 3.11 venv with the pinned
# ROS 2 Kilted wheels, the CMake include-path quirk, colcon build of
# spart_interfaces + spart_ros. Idempotent: a second run only checks stamps.
#
#   bash scripts/setup.sh            # set up / update
#   SPART_FORCE_BUILD=1 bash scripts/setup.sh   # rebuild even if nothing changed
#   PYTHON=/path/to/python3.11 bash scripts/setup.sh
#   SPART_TEST_INTERFACES=1 bash scripts/setup.sh   # also the test-only interfaces (scripts/test.sh)
#   SPART_TEST_BASILISK=1 bash scripts/setup.sh     # also the Basilisk reference venv (scripts/test.sh)
#
# Needs only python3.11 (with venv + pip), gcc/g++/cmake and the package
# registry. See DEVELOPERS.md.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$ROOT/.venv"
REQ="$ROOT/requirements.txt"
say() { echo "[setup] $*"; }
die() { echo "[setup] ERROR: $*" >&2; exit 1; }

# --- 1. Python 3.11 ---------------------------------------------------------
if [[ -n "${PYTHON:-}" ]]; then
  PY="$PYTHON"
elif command -v python3.11 >/dev/null 2>&1; then
  PY=python3.11
else
  PY=python3
fi
command -v "$PY" >/dev/null 2>&1 || die "Python 3.11 is required but '$PY' was not found (set PYTHON=/path/to/python3.11)."
PYVER="$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo unknown)"
[[ "$PYVER" == "3.11" ]] || die "Python 3.11 is required (the ROS 2 Kilted wheels are cp311), but $(command -v "$PY") is Python $PYVER; set PYTHON=/path/to/python3.11."

# --- 2. venv ----------------------------------------------------------------
if [[ -x "$VENV/bin/python" ]]; then
  VENVVER="$("$VENV/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || echo broken)"
  [[ "$VENVVER" == "3.11" ]] || die "$VENV is Python $VENVVER, not 3.11: delete it (rm -rf .venv) and run again."
else
  say "creating $VENV ($("$PY" -V 2>&1))"
  "$PY" -m venv "$VENV"
fi
# colcon must never crawl the venv (it holds package.xml files of its own).
touch "$VENV/COLCON_IGNORE"
# The venv is this machine's "ROS install" (the wheels put share/ament_index,
# share/*/cmake and lib/*.so under it): give it the local_setup files a ROS
# underlay has, so sourcing it works like /opt/ros/<distro>/local_setup.sh
# and colcon does not warn about it on AMENT_PREFIX_PATH.
underlay="# ROS 2 underlay: the ROS wheels pip-installed in this venv (written by spart_ros scripts/setup.sh)
case \":\${AMENT_PREFIX_PATH:-}:\" in *\":$VENV:\"*) ;; *) export AMENT_PREFIX_PATH=\"$VENV\${AMENT_PREFIX_PATH:+:\$AMENT_PREFIX_PATH}\" ;; esac
case \":\${CMAKE_PREFIX_PATH:-}:\" in *\":$VENV:\"*) ;; *) export CMAKE_PREFIX_PATH=\"$VENV\${CMAKE_PREFIX_PATH:+:\$CMAKE_PREFIX_PATH}\" ;; esac"
for f in local_setup.sh local_setup.bash; do
  [[ "$(cat "$VENV/$f" 2>/dev/null || true)" == "$underlay" ]] || printf '%s\n' "$underlay" > "$VENV/$f"
done

# --- 3. pinned requirements (skipped when the stamp matches) ---------------
# The compiled kernels (spart_ros/native: numba's ahead-of-time compiler, two processes: ~50 and
# ~30 s of a core) need
# only numpy and numba: built in the background, from as soon as those two are installed.
KERNELS_LOG="$(mktemp -t spart_kernels.XXXXXX.log)"
kernels=""
start_kernels() {
  [[ -z "$kernels" ]] || return 0
  ( cd "$ROOT" && start=$SECONDS && "$VENV/bin/python" -c 'import spart_ros.native.compiled' \
      && echo "took $((SECONDS - start)) s" ) >"$KERNELS_LOG" 2>&1 &
  kernels=$!
}

[[ -f "$REQ" ]] || die "$REQ is missing."
REQ_HASH="$( (cat "$REQ"; "$VENV/bin/python" -V) | sha256sum | cut -d' ' -f1)"
PIP_STAMP="$VENV/.spart_requirements.sha256"
if [[ "$(cat "$PIP_STAMP" 2>/dev/null || true)" != "$REQ_HASH" ]]; then
  say "installing pinned requirements (requirements.txt) into .venv ..."
  start=$SECONDS
  # uv (pinned in requirements.txt, installed with pip) downloads in parallel:
  # ~20 s instead of ~2 min for pip on a fresh venv. pip is the fallback.
  UV_PIN="$(grep -E '^uv==' "$REQ" || true)"
  installed=""
  if [[ -n "$UV_PIN" && -z "${SPART_NO_UV:-}" ]]; then
    # files hard-linked from uv's cache, not copied: 4.5 s instead of 13.5 s here (20 s of CPU, most
    # of it system time copying files); uv copies anyway when the cache is on another file system
    export UV_LINK_MODE="${UV_LINK_MODE:-hardlink}"
    if [[ "$("$VENV/bin/uv" --version 2>/dev/null | cut -d' ' -f2)" != "${UV_PIN#uv==}" ]]; then
      "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-input "$UV_PIN" 2>&1 \
        | { grep -v "is ignored: it is neither a file nor a directory" || true; }
    fi
    # numpy, numba and llvmlite first: the kernels then build while uv installs the rest (6-41 s
    # in fresh clones here, downloads and copies)
    mapfile -t KERNEL_REQS < <(grep -E '^(numpy|numba|llvmlite)==' "$REQ")
    if [[ ${#KERNEL_REQS[@]} -eq 3 ]] && "$VENV/bin/uv" pip install --quiet \
         --python "$VENV/bin/python" "${KERNEL_REQS[@]}"; then
      start_kernels
    fi
    if "$VENV/bin/uv" pip install --quiet --python "$VENV/bin/python" \
         -r "$REQ"; then
      installed=uv
    else
      say "uv failed; falling back to pip"
    fi
  fi
  if [[ -z "$installed" ]]; then
    # (the grep drops this machine's pip.conf noise about absent local indexes)
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
        --no-input -r "$REQ" 2>&1 \
      | { grep -v "is ignored: it is neither a file nor a directory" || true; }
    installed=pip
  fi
  echo "$REQ_HASH" > "$PIP_STAMP"
  say "requirements installed with $installed in $((SECONDS - start)) s"
else
  say "requirements up to date (stamp matches requirements.txt)"
fi

# --- 3b. the Basilisk reference of the tests (SPART_TEST_BASILISK=1: scripts/test.sh) -----
# Basilisk (bsk) is what the orbit and actuator tests compare the plants with, as Pinocchio is for
# the dynamics; it is no dependency of spart_ros, and its pins conflict with the project's
# (matplotlib, pillow): its own venv .venv-basilisk from requirements-basilisk.txt, installed in the
# background while the rest is set up (about 2 s with uv's cache warm, 7 s cold; 466 MB, hard
# links into uv's cache). test/basilisk_oracle.py runs the scenarios in it.
BSK_VENV="$ROOT/.venv-basilisk"
BSK_REQ="$ROOT/requirements-basilisk.txt"
basilisk=""
if [[ -n "${SPART_TEST_BASILISK:-}" ]]; then
  [[ -f "$BSK_REQ" ]] || die "$BSK_REQ is missing."
  BSK_HASH="$( (cat "$BSK_REQ"; "$PY" -V) | sha256sum | cut -d' ' -f1)"
  BSK_STAMP="$BSK_VENV/.spart_requirements.sha256"
  if [[ "$(cat "$BSK_STAMP" 2>/dev/null || true)" == "$BSK_HASH" ]]; then
    say "Basilisk reference up to date (.venv-basilisk)"
  else
    BSK_LOG="$(mktemp -t spart_basilisk.XXXXXX.log)"
    ( start=$SECONDS; rm -f "$BSK_STAMP"
      { [[ -x "$BSK_VENV/bin/python" ]] || "$PY" -m venv --without-pip "$BSK_VENV"; } \
        && touch "$BSK_VENV/COLCON_IGNORE" \
        && if [[ -x "$VENV/bin/uv" && -z "${SPART_NO_UV:-}" ]]; then
             UV_LINK_MODE="${UV_LINK_MODE:-hardlink}" "$VENV/bin/uv" pip install --quiet \
               --python "$BSK_VENV/bin/python" -r "$BSK_REQ"
           else
             "$VENV/bin/python" -m pip --python "$BSK_VENV/bin/python" install --quiet \
               --disable-pip-version-check --no-input -r "$BSK_REQ"
           fi \
        && echo "$BSK_HASH" > "$BSK_STAMP" && echo "took $((SECONDS - start)) s" ) >"$BSK_LOG" 2>&1 &
    basilisk=$!
  fi
fi
basilisk_ready() {
  [[ -n "$basilisk" ]] || return 0
  if ! wait "$basilisk"; then
    cat "$BSK_LOG" >&2
    die "the Basilisk reference (requirements-basilisk.txt into .venv-basilisk) failed to install"
  fi
  say "Basilisk reference installed into .venv-basilisk ($(tail -n 1 "$BSK_LOG"))"
  rm -f "$BSK_LOG"
}

# --- 4. CMake include paths named by the wheels' exported targets ----------
# The ROS wheels were built in a manylinux image: their *_rosidl_generator_py
# CMake targets export /opt/python/cp311-cp311/... include directories, and
# CMake refuses to generate when those paths do not exist. Put COPIES of this
# Python's and NumPy's headers there (not links into this checkout: deleting
# one clone must not break the builds of the others). A stamp file records what
# was copied; another checkout with the same pins finds it current and leaves it.
PY_INC="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')"
NP_INC="$("$VENV/bin/python" -c 'import numpy; print(numpy.get_include())')"
NP_VER="$("$VENV/bin/python" -c 'import numpy; print(numpy.__version__)')"
[[ -f "$PY_INC/Python.h" ]] || die "Python headers not found at $PY_INC (install the python3.11 development headers)."
copy_headers() {  # copy_headers SOURCE DEST STAMP
  local src="$1" dest="$2" stamp="$3"
  if [[ -d "$dest" && ! -L "$dest" ]]; then
    # a real directory: ours if it has our stamp (re-copied when the stamp differs),
    # else someone else's real headers (e.g. a manylinux Python): left alone
    [[ -f "$dest/.spart_headers" ]] || return 0
    [[ "$(cat "$dest/.spart_headers")" == "$stamp" ]] && return 0
  fi
  local tmp="$dest.spart_tmp.$$"
  { mkdir -p "$(dirname "$dest")" && rm -rf "$tmp" && cp -rL "$src" "$tmp" \
      && echo "$stamp" > "$tmp/.spart_headers" && rm -rf "$dest" && mv "$tmp" "$dest"; } 2>/dev/null \
    || { rm -rf "$tmp" 2>/dev/null; die "cannot write $dest (needs write access to /opt; run as root, or: sudo mkdir -p $(dirname "$dest") && sudo cp -r $src $dest)"; }
  say "copied $src -> $dest"
}
copy_headers "$PY_INC" /opt/python/cp311-cp311/include/python3.11 "python $PYVER"
copy_headers "$NP_INC" /opt/python/cp311-cp311/lib/python3.11/site-packages/numpy/_core/include "numpy $NP_VER"

# --- 5. the compiled kernels and colcon build ---------------------------------
# numba compiles spart_ros/native/kernels.py (and its siblings) into two extension modules, by two
# processes at once (about 80 s of CPU in all, once per change of the kernels), next to the sources; colcon build installs a copy of it beside the
# package, so tests (source tree) and nodes (install tree) share one build and never compile at
# run time. The module's name carries a hash of its sources. Loading it builds it first when
# there is no build of these sources (numba is imported only then). It is built while colcon
# builds spart_interfaces (the two take a core each), before colcon builds spart_ros.
# shellcheck source=env.sh
source "$ROOT/scripts/env.sh" --no-install
cd "$ROOT"
start_kernels  # (already running if the requirements were just installed)
# The kernels' first part (~50 s of a core, one process) is the set-up's critical path: while it
# builds, the colcon builds run at a lower priority (nice 5) and take the CPU it leaves (a fresh
# clone here: the kernels, starved by the two colcon builds, ended 28 s after everything else).
# colcon gives make `-j<cores> -l<cores>`: the load limit kept make at one job at a time beside the
# kernels, and still there after them (the load average lags); MAKEFLAGS replaces both (a caller's
# MAKEFLAGS is kept).
BUILD_NICE=()
if kill -0 "$kernels" 2>/dev/null; then BUILD_NICE=(nice -n 5); fi
export MAKEFLAGS="${MAKEFLAGS:--j$(nproc 2>/dev/null || echo 2)}"
# The test-only interface packages (test/interfaces: control_msgs' and tf2_msgs' public definitions, which are
# not installable here) when scripts/test.sh asks for them: built beside the rest, into their own
# spaces (build_test/, install_test/, log_test/), never into install/; test/conftest.py puts them on
# the tests' paths. Skipped when a real control_msgs is installed, and when nothing changed.
test_interfaces=""
if [[ -n "${SPART_TEST_INTERFACES:-}" ]]; then
  TEST_HASH="$( { echo "$ROOT"; echo "$REQ_HASH"; find test/interfaces -type f -print0 | sort -z \
                  | xargs -0 sha256sum; } | sha256sum | cut -d' ' -f1)"
  TEST_STAMP="$ROOT/install_test/.spart_build.sha256"
  if python -c 'import importlib.util as u, sys; s = u.find_spec("control_msgs"); sys.exit(not (s and s.origin))' \
       2>/dev/null; then
    say "control_msgs is installed: the test-only copy (test/interfaces) is not built"
  elif [[ "$(cat "$TEST_STAMP" 2>/dev/null || true)" == "$TEST_HASH" ]]; then
    say "test-only interfaces up to date (install_test/)"
  else
    TEST_LOG="$(mktemp -t spart_test_interfaces.XXXXXX.log)"
    ( start=$SECONDS; rm -f "$TEST_STAMP"
      "${BUILD_NICE[@]}" env -u PYTHONDONTWRITEBYTECODE colcon --log-base log_test build --base-paths test/interfaces \
          --build-base build_test --install-base install_test \
          --cmake-args -DPython3_EXECUTABLE="$VENV/bin/python3" -DBUILD_TESTING=OFF \
        && echo "$TEST_HASH" > "$TEST_STAMP" && echo "took $((SECONDS - start)) s" ) >"$TEST_LOG" 2>&1 &
    test_interfaces=$!
  fi
fi
test_interfaces_ready() {
  [[ -n "$test_interfaces" ]] || return 0
  if ! wait "$test_interfaces"; then
    cat "$TEST_LOG" >&2
    die "the test-only interfaces (test/interfaces) failed to build"
  fi
  say "test-only interfaces built into install_test/ ($(tail -n 1 "$TEST_LOG"))"
  rm -f "$TEST_LOG"
}

kernels_ready() {
  if ! wait "$kernels"; then
    cat "$KERNELS_LOG" >&2
    die "the compiled kernels failed to build (python -m spart_ros.native.build --verbose says why)"
  fi
  say "compiled kernels ready ($(grep -v '^$' "$KERNELS_LOG" | paste -sd ';' -))"
  rm -f "$KERNELS_LOG"
}

src_hash() {
  # Everything that goes into the install space (not the tests: colcon test
  # runs them from the source tree; not the compiled kernels: their sources are hashed).
  # The checkout path and the pinned wheels are part of it: the install
  # space holds absolute paths, and spart_interfaces links the wheels' libs.
  {
    echo "$ROOT"
    echo "$REQ_HASH"
    find package.xml setup.py setup.cfg resource launch config urdf spart_ros \
         spart_interfaces -type f ! -path '*/__pycache__/*' ! -name '*.pyc' \
         ! -name '*.nbi' ! -name '*.nbc' ! -name '.kernels.lock' ! -path '*/.build_*' \
         ! -name '_kernels_*' -print0 2>/dev/null \
      | sort -z | xargs -0 sha256sum
  } | sha256sum | cut -d' ' -f1
}
# SPART_PYTHON_ONLY_INTERFACES=1 (scripts/test.sh): spart_interfaces without its C++ bindings
PYTHON_ONLY="$([[ "${SPART_PYTHON_ONLY_INTERFACES:-}" == 1 ]] && echo ON || echo OFF)"
BUILD_HASH="$( { src_hash; echo "python-only interfaces $PYTHON_ONLY"; } | sha256sum | cut -d' ' -f1)"
BUILD_STAMP="$ROOT/install/.spart_build.sha256"
if [[ -z "${SPART_FORCE_BUILD:-}" && -f "$ROOT/install/setup.bash" \
      && "$(cat "$BUILD_STAMP" 2>/dev/null || true)" == "$BUILD_HASH" ]]; then
  kernels_ready
  say "build up to date (no source change since the last colcon build)"
else
  say "colcon build (spart_interfaces, spart_ros) ..."
  build_start=$SECONDS
  rm -f "$BUILD_STAMP"
  # (byte-compile the installed Python even where PYTHONDONTWRITEBYTECODE is set)
  colcon_build() {
    "${BUILD_NICE[@]}" env -u PYTHONDONTWRITEBYTECODE colcon build --paths . spart_interfaces "$@" \
        --cmake-args -DPython3_EXECUTABLE="$VENV/bin/python3" -DBUILD_TESTING=OFF \
                     -DSPART_INTERFACES_PYTHON_ONLY="$PYTHON_ONLY"
  }
  colcon_build --packages-select spart_interfaces || { kill "$kernels" 2>/dev/null; exit 1; }
  kernels_ready                   # spart_ros installs them
  BUILD_NICE=()
  colcon_build --packages-select spart_ros
  echo "$BUILD_HASH" > "$BUILD_STAMP"
  say "colcon build done in $((SECONDS - build_start)) s"
fi
test_interfaces_ready
basilisk_ready
say "ready: source scripts/env.sh"
