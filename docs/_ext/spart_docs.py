"""
The generated pages of the spart_ros site (a Sphinx extension).

When the build starts (``builder-inited``) it writes, into ``_generated/`` of the source folder:

- ``api/<package>.rst``: the Python reference, one page per package of
  :data:`spart_api.PACKAGES`, an ``automodule`` per public module with its public names (found
  by walking the package: a new module or function appears without editing anything here);
- the node reference and the figures (see :mod:`spart_nodes_doc` and :mod:`spart_figures`).

A file is rewritten only when its text changes, so that an incremental build reads only what
changed.
"""

import importlib
import inspect
from pathlib import Path

import spart_api

GENERATED = '_generated'


def write(path, text):
    """Write ``text`` to ``path`` unless it already holds it; return ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding='utf-8') != text:
        path.write_text(text, encoding='utf-8')
    return path


def heading(text, char='='):
    """Return a reST section title."""
    return f'{text}\n{char * len(text)}\n'


def api_page(package):
    """Return the reST page of the Python package ``package`` (its public modules and names)."""
    lines = [heading(f'``{package}``'), '']
    pkg = importlib.import_module(package)
    lines += [f'.. automodule:: {package}', '   :no-members:', '']
    exported = [n for n in getattr(pkg, '__all__', []) if n not in spart_api.public_names(pkg)]
    targets = []
    for name in exported:
        obj = getattr(pkg, name, None)
        module = getattr(obj, '__module__', None)
        if module and (inspect.isfunction(obj) or inspect.isclass(obj)):
            targets.append(f':py:obj:`{package}.{name} <{module}.{obj.__qualname__}>`')
    if targets:
        lines += [
            f'Importable from ``{package}`` (each documented below, in the module that defines '
            'it): ' + ', '.join(targets) + '.',
            '',
        ]
    for modname in spart_api.modules(package):
        module = importlib.import_module(modname)
        names = spart_api.public_names(module)
        if modname != package:
            lines += [heading(f'``{modname}``', '-'), '', f'.. automodule:: {modname}']
            lines += [f'   :members: {", ".join(names)}' if names else '   :no-members:', '']
        elif names:
            lines += [
                heading(f'Defined in ``{package}``', '-'),
                '',
                f'.. automodule:: {package}',
                '   :no-index:',
                f'   :members: {", ".join(names)}',
                '',
            ]
    return '\n'.join(lines)


def generate(app):
    """Write every generated page into the source folder of ``app``."""
    out = Path(app.srcdir) / GENERATED
    for package in spart_api.PACKAGES:
        write(out / 'api' / f'{package}.rst', api_page(package))


def setup(app):
    """Register the generators (Sphinx extension entry point)."""
    app.connect('builder-inited', generate)
    return {'version': '1', 'parallel_read_safe': True, 'parallel_write_safe': True}
