"""
Basilisk (bsk, AVS Lab) as the tests' independent reference for orbits and spacecraft actuators.

Basilisk lives in its own venv, ``.venv-basilisk`` (``requirements-basilisk.txt``; its pins
conflict with the project's), installed by ``SPART_TEST_BASILISK=1 bash scripts/setup.sh``
(``scripts/test.sh`` sets it).  A scenario is a script in ``test/basilisk/`` that imports nothing
of spart_ros: :func:`run` starts it in that venv's Python with the scenario's inputs (a JSON
file) and reads back what it saved (an ``.npz`` file of arrays)::

    out = basilisk_oracle.run('orbit_gravity_gradient.py', {'mu': 3.986e14, ...})
    out['time'], out['r_BN_N'] ...

Without the venv a test that calls :func:`require` skips with the command that installs it, and
fails under ``scripts/test.sh`` (``SPART_TEST_BASILISK`` set), where it must be there.
"""

import json
import os
import subprocess
import tempfile

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PYTHON = os.path.join(ROOT, '.venv-basilisk', 'bin', 'python')
SCENARIOS = os.path.join(ROOT, 'test', 'basilisk')


def available():
    """Return True when the Basilisk venv is installed."""
    return os.access(PYTHON, os.X_OK) and os.path.isfile(
        os.path.join(ROOT, '.venv-basilisk', '.spart_requirements.sha256')
    )


def require():
    """Skip the calling test without the Basilisk venv (fail under scripts/test.sh)."""
    if available():
        return
    message = (
        'the Basilisk reference is not installed (.venv-basilisk): '
        'SPART_TEST_BASILISK=1 bash scripts/setup.sh'
    )
    if os.environ.get('SPART_TEST_BASILISK'):
        pytest.fail(message)
    pytest.skip(message)


def _environment():
    """Return this environment without what points at the project's venv and ROS underlay."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(('PYTHON', 'AMENT', 'COLCON', 'ROS_', 'RMW_', 'CMAKE', 'VIRTUAL_ENV'))
        and k not in ('LD_LIBRARY_PATH', '_ROS_WHEELS_BOOTSTRAP_COMPLETE')
    }
    if os.environ.get('SPART_TEST_BYTECODE') != '1':
        env['PYTHONDONTWRITEBYTECODE'] = '1'
    return env


def run(scenario, inputs, timeout=240):
    """
    Run ``test/basilisk/<scenario>`` in the Basilisk venv; return its arrays {name: ndarray}.

    ``inputs``: a JSON-serializable dict the script reads (its first argument); the script writes
    its results with ``numpy.savez`` to its second argument.  A failing script raises
    AssertionError with its output.
    """
    require()
    with tempfile.TemporaryDirectory(prefix='spart_basilisk_') as tmp:
        given, result = os.path.join(tmp, 'inputs.json'), os.path.join(tmp, 'out.npz')
        with open(given, 'w', encoding='utf-8') as f:
            json.dump(inputs, f)
        proc = subprocess.run(
            [PYTHON, os.path.join(SCENARIOS, scenario), given, result],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=_environment(),
            cwd=tmp,
        )
        assert proc.returncode == 0 and os.path.isfile(result), (
            f'Basilisk scenario {scenario} failed (exit code {proc.returncode}):\n'
            f'{proc.stdout}\n{proc.stderr}'
        )
        with np.load(result) as data:
            return {k: data[k] for k in data.files}
