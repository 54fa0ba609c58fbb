#!/usr/bin/env bash
# Set up (scripts/setup.sh), then run every test of spart_ros and
# spart_interfaces with colcon: `colcon test` + `colcon test-result --verbose`.
# Exits non-zero on any failure; the last line printed is pytest's summary.
#
#   bash scripts/test.sh                                   # everything, in 3 pytest-xdist workers (CI)
#   bash scripts/test.sh --pytest-args -k smoke            # extra colcon test args
#   SPART_TEST_WORKERS=0 bash scripts/test.sh              # all in one pytest process (slower)
#
# Each run gets its own DDS domain: ROS_DOMAIN_ID random in 1..100 unless set.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# (and the test-only interface packages, test/interfaces, into install_test/: test/conftest.py uses them;
# the tests that need them fail rather than skip without them)
export SPART_TEST_INTERFACES=1
# (and the Basilisk reference of the orbit and actuator tests, its own venv .venv-basilisk: the tests
# that compare with it fail rather than skip without it)
export SPART_TEST_BASILISK=1
# (and spart_interfaces with its C and Python bindings only: the tests and nodes are Python)
export SPART_PYTHON_ONLY_INTERFACES=1
# Python keeps the bytecode of what it imports (the venv's packages, spart_ros, the tests: pytest
# caches their rewritten asserts) for every process after the first: a run starts hundreds of
# Python processes (the workers, each node, the demo, the examples), and where PYTHONDONTWRITEBYTECODE
# is set (this CI's image) each of them compiled sympy, scipy, matplotlib, pytest ... from source again
# (importing sympy: 1.5 s of CPU without the cache, 0.3 s with it; collecting the tests: 8.5 s, 3.2 s).
# The caches are __pycache__ folders (.gitignore) in .venv and the checkout. `colcon test` sets
# PYTHONDONTWRITEBYTECODE=1 again for pytest: SPART_TEST_BYTECODE=1 has test/conftest.py undo that
# for pytest and every process it starts.
unset PYTHONDONTWRITEBYTECODE
export SPART_TEST_BYTECODE=1
bash "$ROOT/scripts/setup.sh" || exit $?
# shellcheck source=env.sh
source "$ROOT/scripts/env.sh" || exit 1
cd "$ROOT" || exit 1

export ROS_DOMAIN_ID="${ROS_DOMAIN_ID:-$(( RANDOM % 100 + 1 ))}"
echo "[test] ROS_DOMAIN_ID=$ROS_DOMAIN_ID RMW_IMPLEMENTATION=$RMW_IMPLEMENTATION"
# pytest-xdist: SPART_TEST_WORKERS processes (default 3 on this 2-core machine: the node tests
# spend much of their time waiting on nodes and discovery, and with two workers the cores idled 20 %
# of the run, with three 5 %; 0: all in this process),
# each test file on one worker (its module fixtures, e.g. a node several tests read, start once),
# each worker in its own DDS domain (test/conftest.py); the real-time closed loops
# (@pytest.mark.realtime) first, on the first worker at normal priority, the other workers and their
# nodes at nice 19
# colcon test REPLACES PYTEST_ADDOPTS with its own options and --pytest-args (so an exported
# PYTEST_ADDOPTS never reaches pytest): the xdist options go into --pytest-args, first among the
# caller's ones if there are any (a second --pytest-args would replace the first); the leading
# space keeps colcon from reading them as its own options.
WORKERS="${SPART_TEST_WORKERS:-3}"
COLCON_ARGS=("$@")
if [[ "$WORKERS" != 0 ]]; then
  XDIST=(" -n" "$WORKERS" " --dist" "loadfile")
  COLCON_ARGS=()
  merged=""
  for arg in "$@"; do
    COLCON_ARGS+=("$arg")
    if [[ "$arg" == "--pytest-args" && -z "$merged" ]]; then COLCON_ARGS+=("${XDIST[@]}"); merged=1; fi
  done
  [[ -n "$merged" ]] || COLCON_ARGS+=(--pytest-args "${XDIST[@]}")
  echo "[test] pytest-xdist: $WORKERS workers (ROS_DOMAIN_ID + 100 k for worker k; SPART_TEST_WORKERS=0: none)"
fi

LOG="$(mktemp -t spart_test.XXXXXX.log)"
trap 'rm -f "$LOG"' EXIT

start=$SECONDS
colcon test --paths . spart_interfaces \
    --event-handlers console_direct+ console_stderr- \
    --return-code-on-test-failure "${COLCON_ARGS[@]}" 2>&1 | tee "$LOG"
test_rc=${PIPESTATUS[0]}
echo "[test] colcon test finished in $((SECONDS - start)) s (exit code $test_rc)"

colcon test-result --test-result-base build --verbose
result_rc=$?

# pytest's closing line, e.g. "====== 21 passed, 1 skipped in 12.34s ======"
summary="$(grep -aE '^=+ .*\b(passed|failed|errors?|skipped|deselected|no tests ran)\b.* in [0-9.]+s.* =+$' "$LOG" | tail -n 1)"
rc=0
if [[ $test_rc -ne 0 || $result_rc -ne 0 ]]; then rc=1; fi
if [[ -z "$summary" ]]; then
  echo "[test] ERROR: pytest printed no summary line (did pytest run at all?)"
  rc=1
elif ! grep -qE '\b[1-9][0-9]* passed\b' <<<"$summary"; then
  echo "[test] ERROR: no test passed"
  rc=1
fi
if [[ "$WORKERS" != 0 ]] && ! grep -qaE '^(created: [0-9]+/[0-9]+ workers|[0-9]+ workers \[)' "$LOG"; then
  echo "[test] WARNING: the tests ran in one process, not in $WORKERS pytest-xdist workers"
fi
if [[ $rc -eq 0 ]]; then echo "[test] OK"; else echo "[test] FAILED"; fi
[[ -n "$summary" ]] && echo "$summary"
exit $rc
