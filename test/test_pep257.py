"""
Docstring style (PEP 257) as `colcon test` runs it in a package made by `ros2 pkg create`.

ament_pep257, ament's convention.
"""

import pytest
from test_flake8 import PATHS, ROOT


@pytest.mark.linter
@pytest.mark.pep257
def test_pep257(monkeypatch):
    from ament_pep257.main import main  # here: every pytest-xdist worker imports every test file

    monkeypatch.chdir(ROOT)
    rc = main(argv=PATHS)
    assert rc == 0, 'Found code style errors / warnings'
