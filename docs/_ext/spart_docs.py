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
        if modname == 'spart_ros.core.arguments':  # a table of data: shown as a table
            lines += [heading(f'``{modname}``', '-'), '', f'.. automodule:: {modname}', '']
            lines += arguments_table(module.ARGUMENTS)
        elif modname != package:
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


def transitions_table():
    """Return the reST table of the controller's transitions (the numbers of the state diagram)."""
    import spart_figures

    zero = {True: 'yes', None: 'if commanding', False: ''}
    rows = [
        '.. list-table::',
        '   :header-rows: 1',
        '   :widths: 5 30 15 40 10',
        '',
        '   * - #',
        '     - from',
        '     - to',
        '     - on',
        '     - one zero command',
    ]
    for number, event, target, z, sources in spart_figures.transition_groups():
        rows += [
            f'   * - {number}',
            '     - ' + ', '.join(f'``{s}``' for s in sources),
            f'     - ``{target}``',
            f'     - {event}',
            f'     - {zero[z]}',
        ]
    return '\n'.join(rows) + '\n'


def interfaces_page(root):
    """Return the reST page of spart_interfaces' messages, services and actions (definitions)."""
    lines = [
        heading('Messages, services and actions (``spart_interfaces``)'),
        '',
        'The definitions as they are in ``spart_interfaces/msg``, ``spart_interfaces/srv`` and '
        '``spart_interfaces/action`` (every field is documented in its comment).',
        '',
    ]
    for kind, title in (('msg', 'Messages'), ('srv', 'Services'), ('action', 'Actions')):
        lines += [heading(title, '-'), '']
        for path in sorted((Path(root) / 'spart_interfaces' / kind).glob(f'*.{kind}')):
            name = f'spart_interfaces/{kind}/{path.stem}'
            lines += [f'.. _{kind}-{path.stem}:', '', heading(f'``{name}``', '~'), '']
            lines += ['.. code-block:: none', '']
            lines += [
                f'   {line}'.rstrip() for line in path.read_text(encoding='utf-8').splitlines()
            ]
            lines.append('')
    return '\n'.join(lines)


def arguments_table(arguments):
    """Return the reST lines of the table of SPART's standard argument names."""
    lines = [
        ".. list-table:: SPART's standard arguments (``ARGUMENTS``)",
        '   :header-rows: 1',
        '   :widths: 15 20 65',
        '',
        '   * - name',
        '     - shape',
        '     - meaning',
    ]
    for name, (shape, meaning) in arguments.items():
        lines += [f'   * - ``{name}``', f'     - {shape or " "}', f'     - {meaning}']
    return lines + ['']


def generate(app):
    """Write every generated page and figure into the source folder of ``app``."""
    import os

    from spart_ros.nodes.parameter_docs import node_page, NODES
    import spart_figures

    root = Path(os.environ['SPART_DOCS_ROOT'])
    out = Path(app.srcdir) / GENERATED
    for package in spart_api.PACKAGES:
        write(out / 'api' / f'{package}.rst', api_page(package))
    for node in NODES:
        write(out / 'nodes' / f'{node}.rst', node_page(node))
    write(out / 'interfaces.rst', interfaces_page(root))
    write(out / 'transitions.rst', transitions_table())
    # the changelog, copied: rosdoc2 builds a copy of docs/, where ../CHANGELOG.rst is not
    write(out / 'changelog.rst', (root / 'CHANGELOG.rst').read_text(encoding='utf-8'))
    figures = out / 'figures'
    figures.mkdir(parents=True, exist_ok=True)
    spart_figures.state_machine(figures / 'controller_states.svg')
    spart_figures.node_graph(figures / 'node_graph.svg', root / 'config' / 'demo_SC_3DoF.yaml')
    spart_figures.base_frames(figures / 'base_frames.svg')


def setup(app):
    """Register the generators (Sphinx extension entry point)."""
    app.connect('builder-inited', generate)
    # Mermaid diagrams (docs/controller.md, drawn by spart_ros.control.design): GitHub draws them;
    # here they show as their text (no Mermaid extension is installed)
    from pygments.lexers.special import TextLexer

    app.add_lexer('mermaid', TextLexer)
    return {'version': '1', 'parallel_read_safe': True, 'parallel_write_safe': True}
