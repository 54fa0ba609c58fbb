"""
How scripts/test.sh spreads the test files over its pytest-xdist workers (``--dist loadfile``).

- Every file with a ``@pytest.mark.realtime`` test runs on the first worker (gw0), before
  anything else there, longest first; that worker keeps the normal CPU priority until its first
  file without one (then the realtime part of the run is over: it takes the lowest too).
- Every other file goes to whichever worker is free, longest first (longest-processing-time
  scheduling: the run does not end with one worker busy on a long file while the other idles).
  The other workers run at the lowest priority (``nice 19``, test/conftest.py), so that their
  tests, and the nodes those tests start, only get the CPU time the real-time closed loops leave.
- ``SPART_TEST_REALTIME=alone`` (each realtime test alone, conftest.py's lock): every file longest
  first on whichever worker is free, no priorities.

The lengths come from test/durations.json (seconds per file, wall time on the 2-core machine;
``SPART_TEST_DURATIONS=path bash scripts/test.sh`` writes a fresh one); a file missing there
counts as :data:`UNKNOWN_SECONDS`.  Which files are realtime is learnt from the workers'
collection (conftest.py writes it), not from the file: a mark added to a test takes effect at once.
"""

import json
import os

from xdist.scheduler import LoadFileScheduling

HERE = os.path.dirname(os.path.abspath(__file__))
DURATIONS = os.path.join(HERE, 'durations.json')
#: the assumed length of a file test/durations.json does not know (new files run early)
UNKNOWN_SECONDS = 20.0
#: the worker that runs the realtime files
REALTIME_WORKER = 'gw0'


def realtime_list(tmpdir, testrunuid):
    """Return the file where workers write the realtime test files of run ``testrunuid``."""
    return os.path.join(tmpdir, f'spart_ros_tests_{testrunuid}.realtime')


def load_durations(path=DURATIONS):
    try:
        with open(path) as f:
            return {k: float(v) for k, v in json.load(f).items()}
    except (OSError, ValueError):
        return {}


class RealtimeFirstScheduling(LoadFileScheduling):
    """
    Schedule ``--dist loadfile`` with the realtime files first on one worker.

    The realtime files run on :data:`REALTIME_WORKER` first, and every file longest first (see
    the module's docstring).
    """

    def __init__(self, config, log=None, tmpdir=None, realtime_first=True):
        super().__init__(config, log)
        self._tmpdir = tmpdir
        self._realtime_first = realtime_first
        self._durations = load_durations()
        self._realtime = None

    def _realtime_files(self):
        if self._realtime is None:
            self._realtime = set()
            for node in self.nodes:
                path = realtime_list(self._tmpdir, node.workerinput['testrunuid'])
                try:
                    with open(path) as f:
                        self._realtime = {line.strip() for line in f if line.strip()}
                    break
                except OSError:
                    continue
        return self._realtime

    def _seconds(self, scope):
        return self._durations.get(scope, UNKNOWN_SECONDS)

    def _pick(self, node):
        """Return the file ``node`` should run next, or None when none is for it."""
        realtime = (
            self._realtime_files() if self._realtime_first else set()
        )  # (else: longest first anywhere)
        runs_realtime = node.gateway.id == REALTIME_WORKER or REALTIME_WORKER not in {
            n.gateway.id for n in self.nodes
        }
        order = sorted(
            self.workqueue,
            key=lambda s: (not (runs_realtime and s in realtime), -self._seconds(s)),
        )
        for scope in order:
            if runs_realtime or scope not in realtime:
                return scope
        return None

    def _assign_work_unit(self, node):
        scope = self._pick(node)
        if scope is None:
            return
        work_unit = self.workqueue.pop(scope)
        self.assigned_work.setdefault(node, {})[scope] = work_unit
        collection = self.registered_collections[node]
        node.send_runtest_some(
            [collection.index(nodeid) for nodeid, done in work_unit.items() if not done]
        )

    def _reschedule(self, node):
        if node.shutting_down:
            return
        pending = self._pending_of(self.assigned_work[node])
        if not self.workqueue or (self._pick(node) is None and not pending):
            node.shutdown()  # nothing left it may run
            return
        if pending > 2:  # xdist's low-water mark: queue the next file before this one ends
            return
        self._assign_work_unit(node)


class FileDurations:
    """
    Wall seconds per test file (setup + call + teardown of its tests).

    Written as JSON at the end of the run: the data of test/durations.json.
    """

    def __init__(self, path):
        self.path = path
        self.seconds = {}

    def pytest_runtest_logreport(self, report):
        scope = report.nodeid.split('::', 1)[0]
        self.seconds[scope] = self.seconds.get(scope, 0.0) + report.duration

    def pytest_sessionfinish(self):
        with open(self.path, 'w') as f:
            json.dump({k: round(v, 1) for k, v in sorted(self.seconds.items())}, f, indent=1)
            f.write('\n')
