"""
The parameter tables of the three nodes in README.md and docs/*.md (imports the nodes: rclpy).

``python -m spart_ros.nodes.parameter_docs`` (from the repository root) rewrites every marked
table, ``<!-- parameters: NODE -->`` ... ``<!-- end parameters -->``, from the node's table
(:func:`spart_ros.nodes.parameters.markdown`), and :mod:`.parameter_names` (every parameter name
of the nodes: a node warns about a parameter that none of them has); test/test_parameters.py
checks that they are the generated ones.  A module of its own: :mod:`.parameters` is imported by
the nodes, and importing the nodes from it would make an import circle.
"""


from .parameters import markdown

__all__ = ['node_tables', 'replace_tables', 'names_module', 'NAMES_MODULE', 'BEGIN', 'END']

#: the generated module of every parameter name (from the repository root)
NAMES_MODULE = 'spart_ros/nodes/parameter_names.py'

BEGIN, END = '<!-- parameters: {} -->', '<!-- end parameters -->'


def node_tables():
    """{node name: table} of the three nodes."""
    from . import controller_node, dynamics_node, sim_node

    return {
        'spart_controller': controller_node.PARAMETERS,
        'spart_dynamics': dynamics_node.PARAMETERS,
        'spart_sim': sim_node.PARAMETERS,
    }


def replace_tables(text, tables):
    """``text`` with every marked table (``<!-- parameters: NODE -->`` ... end) regenerated."""
    for node, params in tables.items():
        begin = BEGIN.format(node)
        start = text.find(begin)
        if start < 0:
            continue
        start += len(begin) + 1
        end = text.index(END, start)
        text = text[:start] + markdown(params) + text[end:]
    return text


def names_module(tables):
    """Return the text of :data:`NAMES_MODULE` for ``tables`` ({node: table})."""
    names = sorted({name for table in tables.values() for name in table})
    # the layout ament_flake8 / ament_pep257 accept and ruff format keeps: one name a line
    body = ''.join(f'        {name!r},\n' for name in names)
    return (
        '"""\nEvery parameter name of the spart_ros nodes ('
        + ', '.join(sorted(tables))
        + ').\n\n'
        'Generated from their tables by ``python -m spart_ros.nodes.parameter_docs``;\n'
        'test/test_parameters.py checks that it is current. A node given a parameter that none of '
        'them has\nwarns (a typo, or an old name: see '
        ':func:`spart_ros.nodes.parameters.declare`); one that another\nnode has is quiet: a '
        'parameter file keyed ``/**`` is shared by the nodes of a launch file.\n"""\n\n'
        f'NAMES = frozenset(\n    (\n{body}    )\n)\n'
    )


def main():
    """
    Rewrite the marked parameter tables of README.md and docs/*.md, and :data:`NAMES_MODULE`.

    Run from the repository root.
    """
    from pathlib import Path

    tables = node_tables()
    names = Path(NAMES_MODULE)
    if not names.exists() or names.read_text(encoding='utf-8') != names_module(tables):
        names.write_text(names_module(tables), encoding='utf-8')
        print(f'updated {names}')
    for path in [Path('README.md'), *sorted(Path('docs').glob('*.md'))]:
        text = path.read_text(encoding='utf-8')
        new = replace_tables(text, tables)
        if new != text:
            path.write_text(new, encoding='utf-8')
            print(f'updated {path}')


if __name__ == '__main__':
    main()
