"""The parameter tables of the three nodes in README.md and docs/*.md (imports the nodes: rclpy).

``python -m spart_ros.nodes.parameter_docs`` (from the repository root) rewrites every marked
table, ``<!-- parameters: NODE -->`` ... ``<!-- end parameters -->``, from the node's table
(:func:`spart_ros.nodes.parameters.markdown`); test/test_parameters.py checks that they are the
generated ones.  A module of its own: :mod:`.parameters` is imported by the nodes, and importing
the nodes from it would make an import circle.
"""
from .parameters import markdown

__all__ = ['node_tables', 'replace_tables', 'BEGIN', 'END']

BEGIN, END = '<!-- parameters: {} -->', '<!-- end parameters -->'


def node_tables():
    """{node name: table} of the three nodes."""
    from . import controller_node, dynamics_node, sim_node
    return {'spart_controller': controller_node.PARAMETERS, 'spart_dynamics': dynamics_node.PARAMETERS,
            'spart_sim': sim_node.PARAMETERS}


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


def main():
    """Rewrite the marked parameter tables of README.md and docs/*.md (run from the repository root)."""
    from pathlib import Path
    tables = node_tables()
    for path in [Path('README.md'), *sorted(Path('docs').glob('*.md'))]:
        text = path.read_text(encoding='utf-8')
        new = replace_tables(text, tables)
        if new != text:
            path.write_text(new, encoding='utf-8')
            print(f'updated {path}')


if __name__ == '__main__':
    main()
