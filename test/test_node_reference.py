"""
The nodes' interface tables (spart_ros.nodes.interfaces) are what the nodes create.

Each node is created in this process (no spinning, no discovery: its publishers, subscriptions,
services and action servers exist once its constructor returned) in the configurations that
switch its topics on and off; its own interfaces (not rclpy's: /rosout, /parameter_events, the
parameter and lifecycle services) must be exactly the table's for those parameter values, with
the table's types and QoS.  The site's node reference is generated from these tables.
"""

import contextlib
from pathlib import Path

import pytest
from spart_ros.nodes.interfaces import active, INTERFACES
from spart_ros.nodes.parameter_docs import node_tables
from spart_ros.nodes.parameters import TYPES

ROOT = Path(__file__).resolve().parent.parent
TABLES = node_tables()
SC = str(ROOT / 'urdf' / 'SC_3DoF.urdf')
KUKA = str(ROOT / 'urdf' / 'kuka_iiwa.urdf')
CHASER = str(ROOT / 'urdf' / 'arm7_spacecraft.urdf')
TARGET = str(ROOT / 'urdf' / 'capture_target.yaml')

#: rclpy's own parameters of every node
RCLPY_PARAMETERS = ('use_sim_time', 'start_type_description_service')
#: rclpy's own interfaces of every node (and of a lifecycle node)
RCLPY_TYPES = ('rcl_interfaces/', 'lifecycle_msgs/', 'type_description_interfaces/')

CASES = [
    ('spart_dynamics', {'urdf_path': KUKA}),
    (
        'spart_dynamics',
        {
            'urdf_path': SC,
            'base': 'floating',
            'use_imu': True,
            'publish_jacobians': False,
            'robot_description_topic': '',
            'input_reliability': 'reliable',
            'input_queue_depth': 7,
        },
    ),
    ('spart_controller', {'urdf_path': KUKA, 'gravity': [0.0, 0.0, -9.81]}),
    (
        'spart_controller',
        {
            'urdf_path': SC,
            'base': 'floating',
            'mode': 'free_flying',
            'joint_command_topic': 'joint_commands',
            'reset_topic': '',
            'plant_gravity_topic': '',
            'use_imu': True,
        },
    ),
    (
        'spart_controller',
        {
            'urdf_path': SC,
            'base': 'floating',
            'mode': 'desired_reaction',
            'robot_description_topic': '',
        },
    ),
    ('spart_controller', {'urdf_path': SC, 'base': 'floating', 'mode': 'floating_base'}),
    (
        'spart_controller',
        {
            'urdf_path': CHASER,
            'base': 'floating',
            'mode': 'floating_base',
            'target_file': TARGET,
            'orbit_topic': '',
        },
    ),
    ('spart_sim', {'urdf_path': SC, 'base': 'floating', 'gravity': [0.0, 0.0, 0.0]}),
    (
        'spart_sim',
        {
            'urdf_path': CHASER,
            'base': 'floating',
            'gravity': [0.0, 0.0, 0.0],
            'target_file': TARGET,
            'target_odometry_topic': 'client/odom',
        },
    ),
    (
        'spart_sim',
        {
            'urdf_path': KUKA,
            'robot_description_topic': '',
            'publish_clock': False,
            'gravity_topic': '',
            'reset_notice_topic': '',
            'controller_name': 'arm_controller',
        },
    ),
]


def _node_class(name):
    from spart_ros.nodes import controller_node, dynamics_node, sim_node

    return {
        'spart_controller': controller_node.ControllerNode,
        'spart_dynamics': dynamics_node.DynamicsNode,
        'spart_sim': sim_node.SimNode,
    }[name]


@contextlib.contextmanager
def _live_node(name, namespace, overrides):
    """Yield node ``name`` built in this process (its own context) with ``overrides``."""
    import rclpy
    from rclpy.parameter import Parameter

    context = rclpy.Context()
    rclpy.init(context=context)
    node = None
    try:
        node = _node_class(name)(
            context=context,
            namespace=namespace,
            parameter_overrides=[Parameter(k, value=v) for k, v in overrides.items()],
        )
        yield node
    finally:
        if node is not None:
            node.destroy_node()
        rclpy.shutdown(context=context)


def _type_name(t):
    module = t.__module__.split('.')  # e.g. sensor_msgs.msg._joint_state
    return f'{module[0]}/{module[1]}/{t.__name__}'


def _qos_words(qos):
    from rclpy.qos import DurabilityPolicy, ReliabilityPolicy

    reliability = {ReliabilityPolicy.RELIABLE: 'reliable', ReliabilityPolicy.BEST_EFFORT: 'best'}
    durability = {
        DurabilityPolicy.VOLATILE: 'volatile',
        DurabilityPolicy.TRANSIENT_LOCAL: 'transient',
    }
    return reliability[qos.reliability], durability[qos.durability], qos.depth


def _expected_qos(text, values):
    """(reliability, durability, depth) that the table's words say, with ``values``' depths."""
    words = text.replace(',', ' ').replace('`', '').split()
    reliability = 'best' if 'best' in words else 'reliable'
    if 'input_reliability' in text and values.get('input_reliability') == 'reliable':
        reliability = 'reliable'
    durability = 'transient' if 'transient' in words else 'volatile'
    depth = words[words.index('depth') + 1]
    depth = int(values[depth]) if depth in values else int(depth)
    return reliability, durability, depth


def _resolved(node, entry, values):
    name = (values.get(entry.param) if entry.param else None) or entry.name
    if not entry.param and entry.name == 'effort_controller/commands':  # spart_sim's
        name = f'{values["controller_name"]}/commands'
    if entry.kind == 'service':
        return node.resolve_service_name(name)
    return node.resolve_topic_name(name)


@pytest.mark.parametrize(
    'node_name, overrides', CASES, ids=[f'{n}-{k}' for k, (n, _) in enumerate(CASES)]
)
def test_the_node_has_exactly_the_interfaces_of_its_table(node_name, overrides):
    from rclpy.action import get_action_server_names_and_types_by_node
    from spart_ros.nodes.parameter_docs import node_tables

    table = node_tables()[node_name]
    values = {name: p.default for name, p in table.items()}
    values.update(overrides)
    # a namespace per case: the graph query of a node's action servers by its name may answer
    # with an earlier node of that name (destroyed, still in DDS discovery) that had none
    namespace = f'/interfaces_test_{CASES.index((node_name, overrides))}'
    with _live_node(node_name, namespace, overrides) as node:
        actual = {}
        for kind, items in (('publisher', node.publishers), ('subscription', node.subscriptions)):
            for item in items:
                t = _type_name(item.msg_type)
                if not t.startswith(RCLPY_TYPES):
                    actual[(kind, item.topic_name)] = (t, _qos_words(item.qos_profile))
        for srv in node.services:
            t = _type_name(srv.srv_type)
            if not t.startswith(RCLPY_TYPES):
                actual[('service', node.resolve_service_name(srv.srv_name))] = (t, None)
        servers = get_action_server_names_and_types_by_node(
            node, node.get_name(), node.get_namespace()
        )  # the node's own: in the graph at once
        for name, types in servers:
            actual[('action', name)] = (types[0], None)
        expected = {}
        for entry in active(INTERFACES[node_name], values):
            qos = _expected_qos(entry.qos, values) if entry.qos else None
            expected[(entry.kind, _resolved(node, entry, values))] = (entry.type, qos)
        assert set(actual) == set(expected), (
            f'{node_name} {overrides}: in the node, not in the table: '
            f'{sorted(set(actual) - set(expected))}; in the table, not in the node: '
            f'{sorted(set(expected) - set(actual))}'
        )
        for key, (t, qos) in expected.items():
            assert actual[key][0] == t, (key, actual[key][0], t)
            if qos is not None:
                assert actual[key][1] == qos, (key, actual[key][1], qos)


def test_every_parameter_a_table_names_is_a_parameter_of_the_node():
    from spart_ros.nodes.parameter_docs import node_tables

    tables = node_tables()
    for node, interfaces in INTERFACES.items():
        for entry in interfaces:
            assert not entry.param or entry.param in tables[node], (node, entry.param)
            assert entry.description or entry.param, (node, entry.name, 'needs a description')


def _page_parameter_rows(page):
    """{name: [type, default, range, run time, description]} of a generated page's table."""
    text = page[page.index('Parameters\n----------') :]
    rows, row = {}, None
    for line in text.splitlines():
        if line.startswith('   * - '):
            row = [line[len('   * - ') :]]
            rows[row[0]] = row
        elif line.startswith('     - ') and row is not None:
            row.append(line[len('     - ') :])
    rows.pop('parameter')  # the header
    return {name.strip('`'): cells[1:] for name, cells in rows.items()}


@pytest.mark.parametrize('node_name', ['spart_controller', 'spart_dynamics', 'spart_sim'])
def test_the_reference_lists_exactly_the_parameters_the_node_declares(node_name):
    """
    The generated page's parameter table is what the node declares, row for row.

    Every declared parameter (rclpy's use_sim_time aside) is a row with its type, default (the
    value the node holds when given none), range (the descriptor's additional_constraints) and
    description (the descriptor's); nothing else is a row.
    """
    from spart_ros.nodes.parameter_docs import node_page

    rows = _page_parameter_rows(node_page(node_name))
    overrides = {'urdf_path': SC, 'base': 'floating', 'mode': 'floating_base'}
    overrides = {k: v for k, v in overrides.items() if k in TABLES[node_name]}
    with _live_node(node_name, '/reference_test', overrides) as node:
        declared = sorted(
            n
            for n in node._parameters  # noqa: SLF001 - rclpy has no public list of them
            if n not in RCLPY_PARAMETERS and not n.startswith('qos_overrides.')
        )
        assert sorted(rows) == declared, (
            f'{node_name}: declared, not in the reference: {sorted(set(declared) - set(rows))}; '
            f'in the reference, not declared: {sorted(set(rows) - set(declared))}'
        )
        descriptors = dict(zip(declared, node.describe_parameters(declared)))
        for name in declared:
            type_, default, range_, _, description = rows[name]
            d = descriptors[name]
            assert description == ' '.join(d.description.split()), name
            assert range_.strip() == d.additional_constraints, name
            assert type_ in TYPES, name
            if name in overrides:
                continue
            value = node.get_parameter(name).value
            if value is None:
                assert default == 'unset', name
            else:
                assert default == _yaml_literal(value), (name, default, value)


def _yaml_literal(value):
    if isinstance(value, bool):
        text = str(value).lower()
    elif isinstance(value, str):
        text = '""' if value == '' else value
    elif isinstance(value, (list, tuple)) or hasattr(value, 'tolist'):
        text = '[' + ', '.join(_yaml_literal(v).strip('`') for v in list(value)) + ']'
    else:
        text = repr(value)
    return f'``{text}``'
