"""
flake8 as `colcon test` runs it in a package made by `ros2 pkg create`.

ament_flake8, with the flake8 plugins ament_flake8 depends on, configured by setup.cfg's
[flake8] section.
"""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
#: every Python file of the repository that is not generated (build/, install/, .venv/)
PATHS = ['spart_ros', 'test', 'scripts', 'launch', 'benchmarks', 'examples', 'docs', 'setup.py']


@pytest.mark.flake8
@pytest.mark.linter
def test_flake8(monkeypatch):
    from ament_flake8.main import main_with_errors  # here: each xdist worker imports every file

    monkeypatch.chdir(ROOT)
    rc, errors = main_with_errors(argv=['--config', str(ROOT / 'setup.cfg')] + PATHS)
    assert rc == 0, f'Found {len(errors)} code style errors / warnings:\n' + '\n'.join(errors)
