"""
The nodes' reference pages (parameters, topics, services, actions), generated from their tables.

The documentation site's build (docs/_ext/spart_docs.py) writes one page per node with
:func:`node_page`: its interfaces from :data:`spart_ros.nodes.interfaces.INTERFACES` and its
parameters from the node's parameter table (:mod:`spart_ros.nodes.parameters`), so that nothing
is typed twice; test/test_node_reference.py checks the pages against what each node declares.
``python -m spart_ros.nodes.parameter_docs`` (from the repository root) rewrites
:mod:`.parameter_names` (every parameter name of the nodes: a node warns about a parameter that
none of them has); test/test_parameters.py checks that it is current.  A module of its own:
:mod:`.parameters` is imported by the nodes, and importing the nodes from it would make an
import circle.
"""

from .interfaces import INTERFACES, KINDS
from .parameters import constraints

__all__ = [
    'node_tables',
    'node_page',
    'parameter_rows',
    'NODES',
    'names_module',
    'NAMES_MODULE',
]

#: the generated module of every parameter name (from the repository root)
NAMES_MODULE = 'spart_ros/nodes/parameter_names.py'

#: node name -> (executable, module, launch file that starts it)
NODES = {
    'spart_dynamics': ('dynamics_node', 'spart_ros.nodes.dynamics_node', 'dynamics.launch.py'),
    'spart_controller': (
        'controller_node',
        'spart_ros.nodes.controller_node',
        'controller.launch.py',
    ),
    'spart_sim': ('sim_node', 'spart_ros.nodes.sim_node', 'sim_demo.launch.py'),
}

KIND_TITLES = {
    'subscription': 'Subscribed topics',
    'publisher': 'Published topics',
    'service': 'Services',
    'action': 'Action servers',
}


def node_tables():
    """Return {node name: parameter table} of the three nodes."""
    from . import controller_node, dynamics_node, sim_node

    return {
        'spart_controller': controller_node.PARAMETERS,
        'spart_dynamics': dynamics_node.PARAMETERS,
        'spart_sim': sim_node.PARAMETERS,
    }


def _literal(value):
    """Return ``value`` as an inline reST literal, as a YAML parameter file would write it."""
    if value is None:
        return 'unset'
    if isinstance(value, bool):
        text = str(value).lower()
    elif isinstance(value, str):
        text = '""' if value == '' else value
    elif isinstance(value, (list, tuple)):
        text = '[' + ', '.join(_literal(v).strip('`') for v in value) + ']'
    else:
        text = repr(value)
    return f'``{text}``'


def _cell(text):
    """Return ``text`` for one cell of a reST list-table (one line, no stray markup)."""
    return ' '.join(str(text).split()) or ' '


def parameter_rows(params):
    """
    Return the rows of the parameter table of ``params``, one per parameter, in table order.

    ``params``: a node's table ({name: Param}).  Each row is (name, type, default, range,
    run time, description) as text: the default as a YAML parameter file writes it ('unset':
    declared without a value), the range as the node's ParameterDescriptor says it
    (``additional_constraints``), run time 'yes' for parameters ``ros2 param set`` changes.
    """
    return [
        (
            p.name,
            p.type,
            _literal(p.default),
            constraints(p),
            'yes' if p.dynamic else '',
            p.description,
        )
        for p in params.values()
    ]


def _list_table(header, rows, widths):
    out = [
        '.. list-table::',
        '   :header-rows: 1',
        f'   :widths: {" ".join(str(w) for w in widths)}',
        '',
    ]
    for row in [header, *rows]:
        out.append(f'   * - {_cell(row[0])}')
        out += [f'     - {_cell(c)}' for c in row[1:]]
    return out + ['']


def _interface_rows(node, kind, params):
    rows = []
    for i in INTERFACES[node]:
        if i.kind != kind:
            continue
        name = f'``{i.name}``' if i.name else '(none)'
        if i.param:
            name += f' (``{i.param}``)'
        if i.description:
            description = f'*When* {i.when}: {i.description}' if i.when else i.description
        else:  # the parameter's description, which says when
            description = params[i.param].description
        row = [name, f'``{i.type}``']
        if kind in ('subscription', 'publisher'):
            row.append(i.qos)
        rows.append(row + [description])
    return rows


def _summary(module):
    import importlib

    doc = importlib.import_module(module).__doc__ or ''
    first = doc.strip().split('\n\n')[0]
    return ' '.join(first.split())


def node_page(node, params=None):
    """
    Return the reST reference page of ``node`` (a node name of :data:`NODES`).

    ``params``: its parameter table (default: the node's own).  Sections: what it is and how to
    start it, its topics, services and actions (:data:`~.interfaces.INTERFACES`), its parameters
    (:func:`parameter_rows`).
    """
    executable, module, launch = NODES[node]
    params = node_tables()[node] if params is None else params
    title = f'``{node}``'
    lines = [
        f'.. _node-{node}:',
        '',
        title,
        '=' * len(title),
        '',
        _summary(module),
        '',
        f'Executable ``{executable}`` (``ros2 run spart_ros {executable}``; launch file '
        f"``{launch}``); implementation :mod:`{module}`.  Relative names resolve in the node's "
        'namespace, ``~/`` in its name; a parameter in brackets renames the topic or service.',
        '',
    ]
    for kind in KINDS:
        rows = _interface_rows(node, kind, params)
        if not rows:
            continue
        lines += [KIND_TITLES[kind], '-' * len(KIND_TITLES[kind]), '']
        if kind in ('subscription', 'publisher'):
            lines += _list_table(['name', 'type', 'QoS', 'meaning'], rows, (22, 22, 16, 40))
        else:
            lines += _list_table(['name', 'type', 'meaning'], rows, (25, 25, 50))
    lines += [
        'Parameters',
        '----------',
        '',
        "Declared at start-up from the node's table and validated (a bad value stops the node "
        'with exit code 2 and one line naming it).  *Run time*: ``ros2 param set`` changes it; '
        "the others are read at start (the controller's at configure).  *Range*: what the "
        "node's parameter descriptor says (``ros2 param describe``).  rclpy's own parameters "
        '(``use_sim_time``, ``start_type_description_service``) are not listed.',
        '',
    ]
    lines += _list_table(
        ['parameter', 'type', 'default', 'range', 'run time', 'description'],
        [(f'``{r[0]}``', *r[1:]) for r in parameter_rows(params)],
        (18, 10, 14, 14, 6, 38),
    )
    return '\n'.join(lines)


def names_module(tables):
    """Return the text of :data:`NAMES_MODULE` for ``tables`` ({node: table})."""
    names = sorted({name for table in tables.values() for name in table})
    # the layout ament_flake8 / ament_pep257 accept and ruff format keeps: one name a line
    body = ''.join(f'        {name!r},\n' for name in names)
    return (
        '"""\nEvery parameter name of the spart_ros nodes (' + ', '.join(sorted(tables)) + ').\n\n'
        'Generated from their tables by ``python -m spart_ros.nodes.parameter_docs``;\n'
        'test/test_parameters.py checks that it is current. A node given a parameter that none of '
        'them has\nwarns (a typo, or an old name: see '
        ':func:`spart_ros.nodes.parameters.declare`); one that another\nnode has is quiet: a '
        'parameter file keyed ``/**`` is shared by the nodes of a launch file.\n"""\n\n'
        f'NAMES = frozenset(\n    (\n{body}    )\n)\n'
    )


def main():
    """Rewrite :data:`NAMES_MODULE` from the nodes' tables (run from the repository root)."""
    from pathlib import Path

    tables = node_tables()
    names = Path(NAMES_MODULE)
    if not names.exists() or names.read_text(encoding='utf-8') != names_module(tables):
        names.write_text(names_module(tables), encoding='utf-8')
        print(f'updated {names}')


if __name__ == '__main__':
    main()
