"""
Shared pytest set-up for spart_ros tests.

Kept import-light on purpose: tests of the pure-Python core must not pay for
rclpy. The ROS fixtures import test/node_helpers.py (and rclpy) only when a
test asks for them.
"""

import contextlib
import fcntl
import os
import random
import sys
import tempfile

import pytest

# One DDS domain per test run, so parallel runs (CI, several checkouts) never
# see each other's nodes; scripts/test.sh sets it, a plain pytest run gets a
# random one. Discovery stays on this host.
if not os.environ.get('ROS_DOMAIN_ID'):
    os.environ['ROS_DOMAIN_ID'] = str(random.randint(1, 100))
os.environ.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')

# `colcon test` starts pytest with PYTHONDONTWRITEBYTECODE=1 whatever the caller's environment,
# so every worker, node and script of the run compiled what it imports from source again (a node
# import: 0.53 s of CPU, 0.30 s from the cache; pytest-xdist's two workers, 190 s -> 167 s).
# scripts/test.sh asks for the cache back (the __pycache__ folders are git-ignored); a plain
# `colcon test` keeps colcon's choice. Set here, before the workers and nodes inherit it.
if os.environ.get('SPART_TEST_BYTECODE') == '1':
    os.environ.pop('PYTHONDONTWRITEBYTECODE', None)
    sys.dont_write_bytecode = False

# Under pytest-xdist (scripts/test.sh runs three workers) each worker is a process of its own with
# its own DDS domain, so that the nodes one worker's tests start never meet another's: worker k
# gets the run's domain + 100 k (within 1..232; Fast DDS refuses 233 and above).  The workers
# inherit the run's domain from the controlling process, which set it above.
WORKER = os.environ.get('PYTEST_XDIST_WORKER')
if WORKER:
    os.environ['ROS_DOMAIN_ID'] = str(
        1 + (int(os.environ['ROS_DOMAIN_ID']) - 1 + 100 * int(WORKER[2:])) % 232
    )


# The test-only control_msgs (test/interfaces/control_msgs, the public FollowJointTrajectory
# definitions: control_msgs is not installable here), built by scripts/setup.sh into install_test/
# when
# scripts/test.sh asks for it (SPART_TEST_INTERFACES=1), is put on the paths of this process and of
# the nodes the tests start, never in the product's install space.  A real control_msgs (a ROS
# install with ros2_control) takes precedence: nothing is done then.
TEST_INSTALL = os.path.join(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'install_test'
)


def _use_test_interfaces(prefix=TEST_INSTALL, package='control_msgs'):
    import importlib.util
    import sys

    root = os.path.join(prefix, package)
    spec = importlib.util.find_spec(package)
    if (spec is not None and spec.origin is not None) or not os.path.isdir(root):
        return
    lib = os.path.join(root, 'lib')
    site = os.path.join(lib, f'python{sys.version_info[0]}.{sys.version_info[1]}', 'site-packages')
    for name, value in (
        ('AMENT_PREFIX_PATH', root),
        ('LD_LIBRARY_PATH', lib),
        ('PYTHONPATH', site),
    ):
        os.environ[name] = value + (os.pathsep + os.environ[name] if os.environ.get(name) else '')
    sys.path.insert(0, site)
    # this process started before LD_LIBRARY_PATH named them: load the libraries the Python
    # extensions link against by path (the node processes find them through the variable)
    import ctypes

    for kind in (
        'generator_c',
        'typesupport_introspection_c',
        'typesupport_fastrtps_c',
        'typesupport_c',
        'generator_py',
    ):
        path = os.path.join(lib, f'lib{package}__rosidl_{kind}.so')
        if os.path.exists(path):
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)


_use_test_interfaces()
_use_test_interfaces(package='tf2_msgs')  # spart_sim's /tf (test_orbit_sim_node.py)


#: how realtime tests are kept from other tests' CPU load under pytest-xdist (scripts/test.sh):
#: "priority" (default): they all run on worker gw0 at normal priority, the other workers at nice
#: 19 (xdist_schedule.py); "alone": each waits until no other test runs and keeps the others
#: waiting meanwhile (one core idles then; about 50 s slower from a fresh clone). Neither shields
#: every timing-dependent test here: 3 of 6 "priority" runs and 2 of 2 "alone" runs had a failure
#: (so scripts/test.sh runs the tests in one process unless SPART_TEST_WORKERS says otherwise)
REALTIME = os.environ.get('SPART_TEST_REALTIME', 'priority')


def _scheduled(config):
    """
    Whether this run's realtime files run on the first worker at normal priority.

    The others at the lowest.
    """
    return REALTIME == 'priority' and config.getvalue('dist') == 'loadfile'


def pytest_configure(config):
    config.addinivalue_line(
        'markers',
        'realtime: a closed loop in real time (its checks depend on timing): under pytest-xdist '
        'it runs on the first worker at normal priority while the others run at the lowest '
        '(SPART_TEST_REALTIME=alone: it runs alone, no other test of the run meanwhile)',
    )
    if WORKER and WORKER != 'gw0' and os.environ.get('SPART_TEST_SCHEDULED') == '1':
        # this worker's tests and every process they start (nodes, launches) get only the CPU time
        # the realtime worker's closed loops leave (children inherit the nice value; node_helpers
        # keeps the nodes in this session, so that the kernel's per-session groups do not undo it)
        os.nice(19)
    if not WORKER:
        os.environ['SPART_TEST_SCHEDULED'] = (
            '1' if _scheduled(config) else '0'
        )  # the workers start after this
    if not WORKER and os.environ.get('SPART_TEST_DURATIONS'):
        from xdist_schedule import FileDurations

        config.pluginmanager.register(
            FileDurations(os.environ['SPART_TEST_DURATIONS']), 'spart_file_durations'
        )


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    # --dist loadfile, longest file first (test/durations.json); realtime files on the first worker
    # first when they run by priority
    if config.getvalue('dist') != 'loadfile':
        return None
    from xdist_schedule import RealtimeFirstScheduling

    return RealtimeFirstScheduling(
        config, log, tmpdir=tempfile.gettempdir(), realtime_first=_scheduled(config)
    )


def pytest_collection_modifyitems(config, items):
    # tell the scheduler (in the controlling process) which files hold realtime tests
    uid = os.environ.get('PYTEST_XDIST_TESTRUNUID')
    if WORKER and uid and os.environ.get('SPART_TEST_SCHEDULED') in ('0', '1'):
        from xdist_schedule import realtime_list

        path = realtime_list(tempfile.gettempdir(), uid)
        files = sorted(
            {item.nodeid.split('::', 1)[0] for item in items if 'realtime' in item.keywords}
        )
        _REALTIME_FILES.update(files)
        tmp = f'{path}.{WORKER}'
        with open(tmp, 'w') as f:
            f.write(''.join(f + '\n' for f in files))
        os.replace(tmp, path)


#: (the scheduled run) this worker's realtime files: the first worker runs them first, at normal
#: priority
_REALTIME_FILES = set()


def _lowered_once_realtime_is_over(item):
    """
    Lower the first worker's priority once its realtime files are done.

    The first worker runs every realtime file first. At its first test of another file the
    realtime part of the run is over and it takes the lowest priority too: no worker's tests (nor
    the nodes they start) are starved by the other's CPU-heavy ones any more.
    """
    if (
        WORKER == 'gw0'
        and os.environ.get('SPART_TEST_SCHEDULED') == '1'
        and os.nice(0) < 19
        and item.nodeid.split('::', 1)[0] not in _REALTIME_FILES
    ):
        os.nice(19 - os.nice(0))


@contextlib.contextmanager
def _alone(exclusive):
    """
    Across the workers of one pytest-xdist run.

    A realtime test waits until no other test runs and keeps the others waiting while it runs; the
    others run side by side. A readers-writer lock on two files (flock): ``turn`` queues a waiting
    realtime test ahead of the tests that start after it, ``run`` is held shared by every running
    test, exclusively by a realtime one.
    """
    uid = os.environ.get('PYTEST_XDIST_TESTRUNUID')
    if not WORKER or not uid or os.environ.get('SPART_TEST_SCHEDULED') == '1':
        yield
        return
    base = os.path.join(tempfile.gettempdir(), f'spart_ros_tests_{uid}')
    with open(base + '.turn', 'a') as turn, open(base + '.run', 'a') as run:
        fcntl.flock(turn, fcntl.LOCK_EX)
        fcntl.flock(run, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        fcntl.flock(turn, fcntl.LOCK_UN)
        try:
            yield
        finally:
            fcntl.flock(run, fcntl.LOCK_UN)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    # setup (module fixtures too: the demo runs in one), call and teardown under the lock
    _lowered_once_realtime_is_over(item)
    with _alone('realtime' in item.keywords):
        yield


def pytest_report_header(config):
    return (
        f'ROS_DOMAIN_ID={os.environ.get("ROS_DOMAIN_ID")} (worker k of pytest-xdist: + 100 k) '
        f'RMW_IMPLEMENTATION={os.environ.get("RMW_IMPLEMENTATION", "(default)")}'
    )


@pytest.fixture
def ros_node(request):
    """Yield a RosTestNode (rclpy node + executor in its own context) for the test side."""
    from node_helpers import RosTestNode

    name = 'test_' + ''.join(c if c.isalnum() else '_' for c in request.node.name)[:50]
    node = RosTestNode(name)
    yield node
    node.close()


@pytest.fixture
def node_process():
    """
    Yield a factory that starts node processes, all stopped and cleaned up after the test.

    ``node_process("spart_ros", "heartbeat_node", parameters=...)`` starts a node process (see
    node_helpers.start_node); every process it started is stopped and cleaned up after the test.
    """
    from node_helpers import start_node

    started = []

    def _start(*args, **kwargs):
        proc = start_node(*args, **kwargs)
        started.append(proc)
        return proc

    yield _start
    for proc in reversed(started):
        proc.cleanup()
