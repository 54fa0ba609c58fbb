"""
The documentation site builds with warnings as errors.

``sphinx-build -W`` on docs/ (the pages, the reference generated from the code, the figures),
as `rosdoc2 build --package-path .` would run it without -W (DEVELOPERS.md, "Documentation").  A
docstring that is not valid reST, a page missing from every table of contents or a broken
reference fails it; the warnings are the failure message.
"""

from pathlib import Path
import subprocess
import sys
import time

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.timeout(900)  # about 17 s of CPU; a worker at nice 19 on a loaded machine waits
def test_the_site_builds_without_warnings(tmp_path):
    start = time.monotonic()
    done = subprocess.run(
        [
            sys.executable,
            '-m',
            'sphinx',
            '-W',
            '--keep-going',
            '-q',
            '-b',
            'html',
            '-d',
            str(tmp_path / 'doctrees'),
            str(ROOT / 'docs'),
            str(tmp_path / 'html'),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    seconds = time.monotonic() - start
    print(f'the site built in {seconds:.1f} s')
    assert done.returncode == 0, f'sphinx-build -W failed:\n{done.stderr}\n{done.stdout}'
    html = tmp_path / 'html'
    for page in (
        'index.html',
        '_generated/nodes/spart_controller.html',
        '_generated/api/spart_ros.core.html',
    ):
        assert (html / page).is_file(), page
    assert (html / '_images' / 'controller_states.svg').is_file()
