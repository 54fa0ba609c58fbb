"""
The parameter tables (spart_ros.nodes.parameters).

Validation, and the documents that must say the same as the tables: config/*.yaml (every parameter
with its default, or an example for an unset one), the example and demo YAML files (only parameters
of the nodes, valid values).  The site's node reference, generated from the tables, is checked
against the nodes by test/test_node_reference.py.
"""

import array
from pathlib import Path

import pytest
from spart_ros.nodes.config import ConfigError
from spart_ros.nodes.parameter_docs import NAMES_MODULE, names_module, node_tables
from spart_ros.nodes.parameters import Param, validate
import yaml

ROOT = Path(__file__).resolve().parent.parent
TABLES = node_tables()
#: the file listing every parameter of a node, with its default
DEFAULTS_FILE = {
    'spart_controller': 'controller.yaml',
    'spart_dynamics': 'dynamics_node.yaml',
    'spart_sim': 'sim_node.yaml',
}


def _doc(path):
    return yaml.safe_load((ROOT / 'config' / path).read_text())['/**']['ros__parameters']


def test_validation_names_the_parameter():
    kp = Param('kp', 100.0, 'gain', type='number_or_list', low=0.0, dynamic=True)
    assert validate(kp, 400) == 400.0 and isinstance(validate(kp, 400), float)  # an int from YAML
    assert validate(kp, [1, 2.5]) == [1.0, 2.5] and validate(kp, array.array('d', [3.0])) == [3.0]
    for bad, text in (
        (-1.0, 'kp must be a finite number >= 0, got -1.0'),
        (float('nan'), 'kp must be a finite'),
        (float('inf'), 'kp must be a finite'),
        ('high', "kp must be a number, got 'high'"),
        ([], 'kp must be a number or a non-empty list'),
        (True, 'kp must be a number'),
    ):
        with pytest.raises(ConfigError, match=text):
            validate(kp, bad)
    mode = Param('mode', 'a', 'mode', choices=('a', 'b'))
    with pytest.raises(ConfigError, match=r"mode must be one of \('a', 'b'\), got 'c'"):
        validate(mode, 'c')
    timeout = Param('state_timeout', 0.1, 's', low=0.0, open_low=True)
    with pytest.raises(ConfigError, match='state_timeout must be a finite number > 0, got 0.0'):
        validate(timeout, 0)
    rows = Param('task_rows', None, 'rows', type='integer_array', low=0, high=5)
    assert validate(rows, None) is None and validate(rows, [3, 4]) == [3, 4]
    with pytest.raises(
        ConfigError, match='task_rows must be a finite number >= 0 and <= 5, got 6'
    ):
        validate(rows, [3, 6])
    with pytest.raises(ConfigError, match='task_rows must be an integer, got 1.5'):
        validate(rows, [1.5])
    g = Param('gravity', [0.0, 0.0, 0.0], 'g', length=3)
    assert validate(g, [0, 0, -9.81]) == [0.0, 0.0, -9.81]
    with pytest.raises(ConfigError, match='gravity must hold 3 values, got 2'):
        validate(g, [0.0, 1.0])
    limits = Param(
        'effort_limits', None, 'N m', type='double_array', low=0.0, open_low=True, finite=False
    )
    assert validate(limits, [float('inf'), 5]) == [float('inf'), 5.0]
    with pytest.raises(ConfigError, match='effort_limits must be a number > 0'):
        validate(limits, [0.0])
    with pytest.raises(ConfigError, match='flag must be true or false'):
        validate(Param('flag', True, 'x'), 1)


@pytest.mark.parametrize('node', sorted(TABLES))
def test_the_defaults_file_lists_every_parameter_with_its_default(node):
    """
    config/<node>.yaml: every parameter with a default.

    With that value (validated: the file is what `--params-file` gives the node); the unset ones
    are commented examples.
    """
    table, doc = TABLES[node], _doc(DEFAULTS_FILE[node])
    with_default = {name for name, p in table.items() if p.default is not None}
    assert set(doc) == with_default, (
        sorted(set(doc) - with_default),
        sorted(with_default - set(doc)),
    )
    text = (ROOT / 'config' / DEFAULTS_FILE[node]).read_text()
    for name, p in table.items():
        if p.default is None:
            assert f'# {name}:' in text, (
                f'{DEFAULTS_FILE[node]}: {name} (unset by default) needs a commented example'
            )
            continue
        assert validate(p, doc[name]) == validate(p, p.default), name


@pytest.mark.parametrize(
    'path',
    sorted(
        p.name
        for p in (ROOT / 'config').glob('*.yaml')
        # the smoke test's node, and controller_manager's file
        if p.name != 'heartbeat.yaml' and not p.name.endswith('_controllers.yaml')
    ),
)
def test_every_yaml_names_only_parameters_of_the_nodes_with_valid_values(path):
    """
    A misspelt key is ignored by ROS (a node reads only what it declares).

    Every key of every file must be a parameter of a node that validates its value. A demo file
    (config/demo_*.yaml) is shared by the three nodes: each key belongs to at least one of them.
    """
    doc = _doc(path)
    for key, value in doc.items():
        owners = [t[key] for t in TABLES.values() if key in t]
        assert owners, (
            f'{path}: {key!r} is not a parameter of spart_sim, spart_controller or spart_dynamics'
        )
        for p in owners:
            validate(p, value)
    if path.startswith('demo_'):
        assert (
            'urdf_path' not in doc and 'robot_description' not in doc
        )  # the sim's alone (launch file)
        assert (
            'use_sim_time' not in doc
        )  # it would stop the sim: its timers would wait for its own /clock
        assert (
            doc['commands_topic'] == f'{doc["controller_name"]}/commands'
        )  # relative: follows the namespace
        assert 'joints' not in doc or doc['joints'] == doc['command_joints']


def test_the_commands_topic_defaults_are_relative():
    """
    A namespaced robot's controller commands its own effort controller.

    That of a namespaced controller_manager: relative defaults, like joint_states and odom.
    """
    assert not TABLES['spart_controller']['commands_topic'].default.startswith('/')
    assert (
        TABLES['spart_controller']['commands_topic'].default
        == TABLES['spart_sim']['controller_name'].default + '/commands'
    )
    assert (
        TABLES['spart_controller']['reset_topic'].default
        == TABLES['spart_sim']['reset_notice_topic'].default
    )
    assert (
        TABLES['spart_controller']['plant_gravity_topic'].default
        == TABLES['spart_sim']['gravity_topic'].default
    )


def test_the_names_module_is_the_tables():
    """
    spart_ros/nodes/parameter_names.py is generated from the tables.

    A node warns about a parameter none of the nodes has.  Generated by
    `python -m spart_ros.nodes.parameter_docs`.
    """
    assert (ROOT / NAMES_MODULE).read_text() == names_module(TABLES), (
        f'{NAMES_MODULE} is not the generated one (python -m spart_ros.nodes.parameter_docs)'
    )
