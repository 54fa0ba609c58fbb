"""
Docstring style (PEP 257) as `colcon test` runs it in a package made by `ros2 pkg create`.

ament_pep257, ament's convention.
"""

from ament_pep257.main import main
import pytest
from test_flake8 import PATHS, ROOT


@pytest.mark.linter
@pytest.mark.pep257
@pytest.mark.xfail(
    strict=True,
    reason="the docstrings are not reformatted to ament's convention yet (scheduled "
    'after the merges); remove this mark when it passes (strict: an XPASS fails)',
)
def test_pep257(monkeypatch):
    monkeypatch.chdir(ROOT)
    rc = main(argv=PATHS)
    assert rc == 0, 'Found code style errors / warnings'
