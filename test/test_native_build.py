"""
The compiled kernels' build (spart_ros/native/build.py) and numba.pycc's pending deprecation.

numba.pycc is pending deprecation with no supported replacement released (DEVELOPERS.md, "The
compiled kernels and numba.pycc"): numba is pinned exactly, the pin is the one the plan names,
the build silences pycc's notice and no other warning, and a numba without numba.pycc is refused
naming the plan.
"""

from pathlib import Path
import re
import subprocess
import sys

ROOT = Path(__file__).resolve().parent.parent


def _pins():
    pins = {}
    for line in (ROOT / 'requirements.txt').read_text().splitlines():
        m = re.match(r'^([A-Za-z0-9_.-]+)==([^\s;#]+)', line)
        if m:
            pins[m.group(1).lower()] = m.group(2)
    return pins


def test_numba_is_pinned_and_the_plan_names_the_pin():
    import numba

    pins = _pins()
    assert 'numba' in pins and 'llvmlite' in pins, 'numba and llvmlite must be pinned exactly'
    assert numba.__version__ == pins['numba']  # the environment is the pinned one
    plan = (ROOT / 'DEVELOPERS.md').read_text()
    section = plan.split('## The compiled kernels and numba.pycc', 1)[1].split('\n## ', 1)[0]
    assert f'numba {pins["numba"]}' in section and f'llvmlite\n  {pins["llvmlite"]}' in section
    assert 'PIXIE' in section and 'plan' in section


def test_the_build_silences_pycc_notice_only():
    source = (ROOT / 'spart_ros' / 'native' / 'build.py').read_text()
    assert "simplefilter('ignore')" not in source  # every warning silenced: a real one was lost
    assert source.count("simplefilter('ignore', NumbaPendingDeprecationWarning)") == 2


def test_a_numba_without_pycc_is_refused_naming_the_plan():
    code = (
        'import sys; sys.modules["numba.pycc"] = None; sys.modules["numba.pycc.platform"] = None\n'
        'import spart_ros.native.build\n'
    )
    proc = subprocess.run(
        [sys.executable, '-c', code], capture_output=True, text=True, cwd=str(ROOT), timeout=120
    )
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert 'has no numba.pycc' in last and 'The compiled kernels and numba.pycc' in last, last
