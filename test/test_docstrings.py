"""
Every public function and class of spart_ros.core, .control, .sim and .codegen is documented.

Public and documented are defined in docs/_ext/spart_api.py, which the site's build uses to
write the Python reference (so every name checked here has a reference entry): a module without
a leading underscore; in it, the names of its ``__all__`` (else those without a leading
underscore) that it defines.  Documented: a docstring that names every parameter (SPART's
standard argument names, ``spart_ros.core.arguments.ARGUMENTS``, are described once, in the
reference) and, for a function that returns a value, says what (a 'Return ...' summary, as
ament's pep257 convention writes it); a class names its constructor's parameters; its public
methods are checked as functions.
"""

from pathlib import Path
import sys

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / 'docs' / '_ext'))

import spart_api  # noqa: E402 - from docs/_ext, put on the path above


@pytest.mark.parametrize('package', spart_api.CHECKED)
def test_every_public_function_and_class_documents_its_parameters_and_returns(package):
    gaps = spart_api.undocumented(package)
    assert not gaps, f'{len(gaps)} public names of {package} are not documented:\n' + '\n'.join(
        f'  {name}: the docstring lacks {", ".join(what)}' for name, what in gaps
    )


def test_classes_documented_elsewhere_are_so():
    """A class whose fields a node's parameter table documents: each field is in it (or named)."""
    from dataclasses import fields
    import importlib

    from spart_ros.nodes.parameter_docs import node_tables

    tables = node_tables()
    for qualname, node in spart_api.DOCUMENTED_ELSEWHERE.items():
        module, name = qualname.rsplit('.', 1)
        cls = getattr(importlib.import_module(module), name)
        words = set((cls.__doc__ or '').replace('`', ' ').split())
        undocumented = [
            f.name for f in fields(cls) if f.name not in tables[node] and f.name not in words
        ]
        assert not undocumented, f'{qualname}: fields not in {node} parameters: {undocumented}'


def test_the_reference_has_an_entry_for_every_public_name():
    """The generated API pages name every public module and, in an automodule, its names."""
    import spart_docs

    for package in spart_api.PACKAGES:
        page = spart_docs.api_page(package)
        for module in spart_api.modules(package):
            assert f'.. automodule:: {module}' in page, module
