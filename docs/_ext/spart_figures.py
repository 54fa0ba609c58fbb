"""
The site's figures, drawn with matplotlib from the code's own tables (no hand-made pictures).

- :func:`state_machine`: the controller's states and every row of
  :data:`spart_ros.control.states.TRANSITIONS` (numbered arrows; the generated table beside the
  figure names each row's event);
- :func:`node_graph`: the demo's three nodes and the topics that join them, from
  :data:`spart_ros.nodes.interfaces.INTERFACES` with the demo's parameter file;
- :func:`base_frames`: SPART's base velocity ``u0`` against a ROS odometry twist (a schematic).

Each writes an SVG (fixed hash salt, no date: the same text for the same input).
"""

import math

STATE_XY = {  # the lifecycle downwards; commanding states side by side
    'unconfigured': (0.0, 4.0),
    'inactive': (0.0, 3.0),
    'halted': (0.0, 2.0),
    'holding': (-1.6, 1.0),
    'tracking': (1.6, 1.0),
    'fault': (0.0, 0.0),
    'finalized': (3.2, 4.0),
}


def _pyplot():
    import matplotlib

    matplotlib.use('Agg')
    matplotlib.rcParams['svg.hashsalt'] = 'spart_ros'
    matplotlib.rcParams['font.size'] = 9
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path):
    fig.savefig(path, format='svg', metadata={'Date': None}, bbox_inches='tight')


def transition_groups():
    """
    Return the rows of the transition table grouped by (event, target), in table order.

    [(number, event, target, zero, [sources])]: one numbered arrow label per group.
    """
    from spart_ros.control.states import TRANSITIONS

    groups = {}
    for t in TRANSITIONS:
        groups.setdefault((t.event, t.target, t.zero), []).append(t.source)
    return [
        (k + 1, event, target, zero, sources)
        for k, ((event, target, zero), sources) in enumerate(groups.items())
    ]


def state_machine(path):
    """
    Draw the controller's state diagram from its transition table into ``path`` (SVG).

    A group of rows from every active state is one arrow from the box around them; a group from
    every state (shutdown) is a note beside its target instead of arrows.
    """
    from matplotlib.patches import FancyBboxPatch

    from spart_ros.control.states import COMMANDING, FINALIZED, HALTED, STATES

    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 5.4))
    active = (HALTED, *COMMANDING)
    box = FancyBboxPatch(
        (-2.45, -0.45),
        4.9,
        2.85,
        boxstyle='round,pad=0.05',
        fc='#f7f7ff',
        ec='#8888aa',
        ls='--',
        zorder=0,
    )
    ax.add_patch(box)
    ax.text(-2.35, 2.28, 'active', color='#666688', fontsize=8, va='top')
    boxes = {}
    for s in STATES:
        x, y = STATE_XY[s]
        color = '#cfe8cf' if s in COMMANDING else '#e8e8e8'
        boxes[s] = ax.text(
            x,
            y,
            s,
            ha='center',
            va='center',
            fontsize=10,
            bbox={'boxstyle': 'round,pad=0.5', 'fc': color, 'ec': '#444444'},
            zorder=3,
        )
    everywhere = set(STATES) - {FINALIZED}
    pairs, notes = {}, []
    for number, _, target, _, sources in transition_groups():
        if set(sources) == everywhere:
            notes.append((target, number))
        elif set(sources) == set(active):
            pairs.setdefault(('active', target), []).append(number)
        else:
            for src in sources:
                pairs.setdefault((src, target), []).append(number)
    for (src, dst), numbers in pairs.items():
        back = (dst, src) in pairs
        rad = 0.3 if back else 0.15
        start = box if src == 'active' else boxes[src]
        arrow = ax.annotate(
            '',
            xy=(0.5, 0.5),
            xycoords=boxes[dst],
            xytext=(0.3, 1.0) if src == 'active' else (0.5, 0.5),
            textcoords=start,
            arrowprops={
                'arrowstyle': '-|>',
                'color': '#335588',
                'patchA': None if src == 'active' else boxes[src].get_bbox_patch(),
                'patchB': boxes[dst].get_bbox_patch(),
                'connectionstyle': f'arc3,rad={rad}',
                'lw': 1.0,
                'mutation_scale': 14,
            },
            zorder=2,
        )
        arrow.set_in_layout(False)
        (x0, y0) = (-1.0, 2.4) if src == 'active' else STATE_XY[src]
        (x1, y1) = STATE_XY[dst]
        mx, my = (x0 + x1) / 2, (y0 + y1) / 2
        dx, dy = x1 - x0, y1 - y0
        length = math.hypot(dx, dy) or 1.0
        off = rad * length / 2
        ax.text(
            mx + off * dy / length,
            my - off * dx / length,
            ','.join(str(n) for n in numbers),
            ha='center',
            va='center',
            fontsize=8,
            color='#223366',
            bbox={'boxstyle': 'circle,pad=0.15', 'fc': 'white', 'ec': 'none'},
            zorder=4,
        )
    for target, number in notes:
        x, y = STATE_XY[target]
        ax.text(x, y - 0.45, f'{number}: from every state', ha='center', fontsize=8)
    ax.set_xlim(-2.7, 4.3)
    ax.set_ylim(-0.7, 4.5)
    ax.axis('off')
    _save(fig, path)
    plt.close(fig)


def _demo_values(node, table, demo):
    values = {name: p.default for name, p in table.items()}
    values.update({k: v for k, v in demo.items() if k in table})
    return values


def node_graph(path, demo_file):
    """
    Draw the demo's node graph into ``path`` (SVG).

    ``demo_file``: a demo parameter file (config/demo_<robot>.yaml): the three nodes with those
    parameters; a topic joins a publisher and a subscriber of the same resolved name.
    """
    import yaml

    from spart_ros.nodes.interfaces import active, INTERFACES
    from spart_ros.nodes.parameter_docs import node_tables

    demo = yaml.safe_load(open(demo_file, encoding='utf-8'))['/**']['ros__parameters']
    tables = node_tables()
    topics = {}  # name -> {'type', 'pub': [nodes], 'sub': [nodes]}
    for node, table in tables.items():
        values = _demo_values(node, table, demo)
        for i in active(INTERFACES[node], values):
            if i.kind not in ('publisher', 'subscription'):
                continue
            name = (values.get(i.param) if i.param else None) or i.name
            if not i.param and name == 'effort_controller/commands':
                name = f'{values["controller_name"]}/commands'
            if name.startswith('~/'):
                name = f'{node}/{name[2:]}'
            entry = topics.setdefault(name, {'type': i.type, 'pub': [], 'sub': []})
            entry['pub' if i.kind == 'publisher' else 'sub'].append(node)
    shared = {n: e for n, e in topics.items() if e['pub'] and e['sub']}
    own = {n: e for n, e in topics.items() if n not in shared}
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8.5, 0.5 + 0.42 * len(shared) + 0.5))
    height = max(len(shared), 3)
    node_xy = {
        'spart_sim': (0.0, height / 2),
        'spart_controller': (6.0, height * 0.75),
        'spart_dynamics': (6.0, height * 0.2),
    }
    boxes = {}
    for node, (x, y) in node_xy.items():
        outs = sorted(n for n, e in own.items() if node in e['pub'])
        label = node + ('\n' + '\n'.join(f'-> {o}' for o in outs) if outs else '')
        boxes[node] = ax.text(
            x,
            y,
            label,
            ha='center',
            va='center',
            fontsize=8,
            bbox={'boxstyle': 'round,pad=0.5', 'fc': '#dde8f5', 'ec': '#335588'},
            zorder=3,
        )
    for k, (name, e) in enumerate(sorted(shared.items())):
        y = height - (k + 0.5) * height / len(shared)
        topic = ax.text(
            3.0,
            y,
            f'{name}\n{e["type"]}',
            ha='center',
            va='center',
            fontsize=7,
            bbox={'boxstyle': 'round,pad=0.3', 'fc': 'white', 'ec': '#999999'},
            zorder=3,
        )
        for src in e['pub']:
            _edge(ax, boxes[src], topic, node_xy[src][0] < 3.0)
        for dst in e['sub']:
            _edge(ax, topic, boxes[dst], node_xy[dst][0] > 3.0)
    ax.set_xlim(-1.8, 7.8)
    ax.set_ylim(-0.4, height + 0.4)
    ax.axis('off')
    _save(fig, path)
    plt.close(fig)
    return shared, own


def _edge(ax, a, b, rightwards):
    """Draw an arrow from the text box ``a`` to ``b``, from side to side."""
    ax.annotate(
        '',
        xy=(0.0 if rightwards else 1.0, 0.5),
        xycoords=b,
        xytext=(1.0 if rightwards else 0.0, 0.5),
        textcoords=a,
        arrowprops={
            'arrowstyle': '-|>',
            'color': '#557799',
            'lw': 0.7,
            'shrinkA': 4,
            'shrinkB': 4,
            'mutation_scale': 12,
        },
        zorder=1,
    )


def base_frames(path):
    """Draw SPART's base velocity against a ROS odometry twist into ``path`` (SVG)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7.0, 3.6))
    ax.set_aspect('equal')

    def frame(x, y, angle, name, color, length=0.9):
        for k, axis in enumerate(('x', 'y')):
            a = angle + k * math.pi / 2
            ax.annotate(
                '',
                xy=(x + length * math.cos(a), y + length * math.sin(a)),
                xytext=(x, y),
                arrowprops={'arrowstyle': '-|>', 'color': color, 'lw': 1.4},
            )
            ax.text(
                x + 1.12 * length * math.cos(a),
                y + 1.12 * length * math.sin(a),
                f'{axis}$_{{{name}}}$',
                color=color,
                ha='center',
                va='center',
            )
        ax.plot([x], [y], 'o', color=color, ms=4)

    # the world (odom) frame, the base link frame b, the base CoM frame c
    frame(0.0, 0.0, 0.0, 'world', '#555555')
    ax.text(-0.1, -0.35, 'world / odom', color='#555555', ha='left', fontsize=8)
    body = plt.Polygon(
        [(3.0, 0.6), (5.6, 1.2), (5.2, 2.9), (2.6, 2.3)], fc='#f2efe4', ec='#8a7f5a', zorder=0
    )
    ax.add_patch(body)
    frame(3.2, 0.95, 0.23, 'b', '#aa3333', 0.8)
    ax.text(3.0, 0.55, 'base link b (URDF)', color='#aa3333', fontsize=8, ha='left', va='top')
    frame(4.2, 1.85, 0.55, 'c', '#2255aa', 0.7)
    ax.text(4.35, 1.6, 'base CoM frame c\n(<inertial>)', color='#2255aa', fontsize=8, va='top')
    ax.annotate(
        '',
        xy=(4.2, 1.85),
        xytext=(3.2, 0.95),
        arrowprops={'arrowstyle': '->', 'ls': '--', 'color': '#777777'},
    )
    ax.text(3.55, 1.5, '$p_{bc}$', color='#777777')
    ax.text(
        6.0,
        2.55,
        'ROS (nav_msgs/Odometry):\n  pose of b in odom;\n  twist [v; w] of b,\n'
        '  at b, in b axes',
        color='#aa3333',
        fontsize=8,
        va='top',
    )
    ax.text(
        6.0,
        1.05,
        'SPART u0 = [w; v]:\n  w in c axes;\n  v of c (the CoM),\n  in world axes',
        color='#2255aa',
        fontsize=8,
        va='top',
    )
    ax.set_xlim(-0.6, 8.6)
    ax.set_ylim(-0.6, 3.3)
    ax.axis('off')
    _save(fig, path)
    plt.close(fig)
