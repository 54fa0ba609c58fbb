"""
The launch files.

Read by scripts/local_launch.py (the runner for machines without ros2launch) with its stand-ins for
launch/launch_ros: the nodes, parameter files and overrides they describe, and the command lines
launch_ros would run. The demo's end-to-end test (test_demo.py) runs dynamics.launch.py this way
for real.
"""

from pathlib import Path
import sys

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'scripts'))
import local_launch  # noqa: E402
import pytest  # noqa: E402
import yaml  # noqa: E402

LAUNCH = ROOT / 'launch'


def test_dynamics_launch_defaults():
    (node,) = local_launch.nodes_of(LAUNCH / 'dynamics.launch.py', {})
    assert (node.package, node.executable, node.name, node.namespace) == (
        'spart_ros',
        'dynamics_node',
        'spart_dynamics',
        '',
    )
    params_file, overrides = node.parameters
    assert Path(params_file).name == 'dynamics_node.yaml' and Path(params_file).is_file()
    assert list(yaml.safe_load(Path(params_file).read_text())) == [
        '/**'
    ]  # applies in any namespace
    assert overrides == {}


def test_dynamics_launch_arguments_override_the_yaml(tmp_path):
    args = {
        'urdf_path': str(ROOT / 'urdf' / 'SC_3DoF.urdf'),
        'base': 'floating',
        'namespace': 'chaser',
    }
    (node,) = local_launch.nodes_of(LAUNCH / 'dynamics.launch.py', args)
    assert node.namespace == 'chaser'
    assert node.parameters[1] == {'urdf_path': args['urdf_path'], 'base': 'floating'}
    cmd = local_launch.command_line(node, tmp_path)
    assert cmd[0].endswith('lib/spart_ros/dynamics_node')
    ros = cmd[cmd.index('--ros-args') + 1 :]
    assert ros[:4] == ['-r', '__node:=spart_dynamics', '-r', '__ns:=/chaser']
    files = [ros[k + 1] for k, a in enumerate(ros) if a == '--params-file']
    assert Path(files[0]).name == 'dynamics_node.yaml'  # the YAML first, the overrides after it
    assert yaml.safe_load(Path(files[1]).read_text()) == {
        '/**': {'ros__parameters': node.parameters[1]}
    }


def test_dynamics_launch_with_robot_state_publisher():
    with pytest.raises(RuntimeError, match='needs urdf_path'):
        local_launch.nodes_of(LAUNCH / 'dynamics.launch.py', {'robot_state_publisher': 'true'})
    urdf = ROOT / 'urdf' / 'SC_3DoF.urdf'
    nodes = local_launch.nodes_of(
        LAUNCH / 'dynamics.launch.py', {'robot_state_publisher': 'true', 'urdf_path': str(urdf)}
    )
    assert [n.executable for n in nodes] == ['dynamics_node', 'robot_state_publisher']
    assert nodes[1].parameters == [{'robot_description': urdf.read_text()}]


def test_spart_ros_launch_starts_dynamics_and_controller():
    nodes = local_launch.nodes_of(LAUNCH / 'spart_ros.launch.py', {'namespace': 'r1'})
    assert [(n.executable, n.name, n.namespace) for n in nodes] == [
        ('dynamics_node', 'spart_dynamics', 'r1'),
        ('controller_node', 'spart_controller', 'r1'),
    ]
    assert [Path(n.parameters[0]).name for n in nodes] == ['dynamics_node.yaml', 'controller.yaml']
    assert [n.parameters[1] for n in nodes] == [{}, {}]
    urdf = str(ROOT / 'urdf' / 'SC_3DoF.urdf')
    nodes = local_launch.nodes_of(
        LAUNCH / 'spart_ros.launch.py',
        {
            'urdf_path': urdf,
            'base': 'floating',
            'mode': 'floating_base',
            'controller_params': str(ROOT / 'config' / 'controller_sc_3dof.yaml'),
            'robot_state_publisher': 'true',
        },
    )
    assert [n.executable for n in nodes] == [
        'dynamics_node',
        'robot_state_publisher',
        'controller_node',
    ]
    assert nodes[0].parameters[1] == {'urdf_path': urdf, 'base': 'floating'}
    assert Path(nodes[2].parameters[0]).name == 'controller_sc_3dof.yaml'
    assert nodes[2].parameters[1] == {
        'urdf_path': urdf,
        'base': 'floating',
        'mode': 'floating_base',
    }
    nodes = local_launch.nodes_of(LAUNCH / 'spart_ros.launch.py', {'controller': 'false'})
    assert [n.executable for n in nodes] == ['dynamics_node']
    with pytest.raises(local_launch.LaunchError, match="'maybe' is not true/false"):
        local_launch.nodes_of(LAUNCH / 'spart_ros.launch.py', {'controller': 'maybe'})


def test_arguments_follow_real_launch_rules(tmp_path, capsys):
    # an undeclared argument is ignored (warned here), as ros2 launch ignores it
    (node,) = local_launch.nodes_of(LAUNCH / 'dynamics.launch.py', {'urdf': 'x.urdf'})
    assert node.parameters[1] == {}
    assert "ignoring undeclared launch argument(s) ['urdf']" in capsys.readouterr().err
    # a missing parameter file: skipped with a warning, the node still starts with the rest
    (node,) = local_launch.nodes_of(
        LAUNCH / 'dynamics.launch.py', {'params': str(tmp_path / 'none.yaml'), 'base': 'floating'}
    )
    cmd = local_launch.command_line(node, tmp_path)
    assert 'none.yaml' in capsys.readouterr().err
    files = [cmd[k + 1] for k, a in enumerate(cmd) if a == '--params-file']
    assert len(files) == 1 and yaml.safe_load(Path(files[0]).read_text())['/**'][
        'ros__parameters'
    ] == {'base': 'floating'}
    # an empty value is refused, as ros2 launch refuses it
    with pytest.raises(local_launch.LaunchError, match="'namespace' has an empty value"):
        local_launch.parse_arguments(['namespace:='])
    with pytest.raises(local_launch.LaunchError, match='name:=value'):
        local_launch.parse_arguments(['base=floating'])
    assert local_launch.parse_arguments(['base:=floating', 'urdf_path:=/a:=b']) == {
        'base': 'floating',
        'urdf_path': '/a:=b',
    }


def test_an_exception_in_a_launch_file_is_reported_as_ros2_launch_does(capsys):
    """
    No traceback: one error line and exit code 1.

    Like ros2 launch's 'Caught exception in launch'.
    """
    code = local_launch.main(
        [str(LAUNCH / 'dynamics.launch.py'), 'robot_state_publisher:=true', '--print']
    )
    err = capsys.readouterr().err
    assert code == 1
    assert 'Caught exception in launch: RuntimeError' in err and 'needs urdf_path' in err
    assert 'Traceback' not in err


def test_every_config_file_applies_in_any_namespace():
    for path in sorted((ROOT / 'config').glob('*.yaml')):
        doc = yaml.safe_load(path.read_text())
        # /** (every node) or /**/<node name> (that node in any namespace; ros2_control's file)
        assert doc and all(
            key == '/**' or (key.startswith('/**/') and '/' not in key[4:]) for key in doc
        ), (
            f'{path.name} must be keyed /** or /**/<node> (a bare node-name key is ignored under '
            'a namespace)'
        )
        assert all(list(v) == ['ros__parameters'] for v in doc.values()), path.name


def test_stand_ins_do_not_leak():
    names = (
        'launch',
        'launch.actions',
        'launch.substitutions',
        'launch.conditions',
        'launch.launch_description_sources',
        'launch.event_handlers',
        'launch_ros',
        'launch_ros.actions',
        'launch_ros.substitutions',
    )
    before = {k: sys.modules.get(k) for k in names}
    local_launch.nodes_of(LAUNCH / 'dynamics.launch.py', {})
    assert {k: sys.modules.get(k) for k in names} == before


def test_controller_launch(tmp_path):
    (node,) = local_launch.nodes_of(LAUNCH / 'controller.launch.py', {})
    assert (node.package, node.executable, node.name) == (
        'spart_ros',
        'controller_node',
        'spart_controller',
    )
    assert Path(node.parameters[0]).name == 'controller.yaml' and node.parameters[1] == {}
    args = {
        'urdf_path': str(ROOT / 'urdf' / 'SC_3DoF.urdf'),
        'base': 'floating',
        'mode': 'floating_base',
        'params': str(ROOT / 'config' / 'controller_sc_3dof.yaml'),
        'namespace': 'chaser',
    }
    (node,) = local_launch.nodes_of(LAUNCH / 'controller.launch.py', args)
    assert (
        node.namespace == 'chaser' and Path(node.parameters[0]).name == 'controller_sc_3dof.yaml'
    )
    assert node.parameters[1] == {
        'urdf_path': args['urdf_path'],
        'base': 'floating',
        'mode': 'floating_base',
    }
    cmd = local_launch.command_line(node, tmp_path)
    assert cmd[0].endswith('lib/spart_ros/controller_node')


# --- sim_demo.launch.py: the closed loop on the embedded plant -----------------------------------
DEMO_NODES = [
    ('sim_node', 'spart_sim'),
    ('controller_node', 'spart_controller'),
    ('dynamics_node', 'spart_dynamics'),
]


def test_sim_demo_launch_defaults_and_robots():
    for args, robot in (
        ({}, 'SC_3DoF'),
        ({'robot': 'kuka_iiwa', 'namespace': 'arm'}, 'kuka_iiwa'),
    ):
        nodes = local_launch.nodes_of(LAUNCH / 'sim_demo.launch.py', args)
        assert [(n.executable, n.name) for n in nodes] == DEMO_NODES
        assert all(
            n.package == 'spart_ros' and n.namespace == args.get('namespace', '') for n in nodes
        )
        files = {n.parameters[0] for n in nodes}  # one parameter file for the three
        assert [Path(f).name for f in files] == [f'demo_{robot}.yaml'] and Path(
            files.pop()
        ).is_file()
        # the sim loads the robot's URDF and publishes it; the others read robot_description
        sim_overrides = nodes[0].parameters[1]
        assert (
            Path(sim_overrides['urdf_path']).name == f'{robot}.urdf'
            and Path(sim_overrides['urdf_path']).is_file()
        )
        assert nodes[1].parameters[1:] == [{}] and nodes[2].parameters[1:] == [{}]


def test_sim_demo_launch_with_a_urdf_of_ones_own():
    """
    urdf_path:= without params:= takes config/demo_robot.yaml.

    Not the example robot's file (SC_3DoF's joints and free-floating base): one gravity for the sim
    and the models.
    """
    urdf = ROOT / 'test' / 'data' / 'urdf' / 'ur5_robot.urdf'
    nodes = local_launch.nodes_of(LAUNCH / 'sim_demo.launch.py', {'urdf_path': str(urdf)})
    files = {n.parameters[0] for n in nodes}
    assert [Path(f).name for f in files] == ['demo_robot.yaml']
    doc = yaml.safe_load(Path(files.pop()).read_text())['/**']['ros__parameters']
    assert doc['gravity'] == [0.0, 0.0, -9.81] and doc['base'] == 'fixed'
    assert (
        'joints' not in doc and 'command_joints' not in doc
    )  # the one default rule on both sides


def test_sim_demo_launch_with_a_floating_urdf_of_ones_own_runs_in_zero_gravity():
    """
    urdf_path:= base:=floating without params:= takes config/demo_robot_floating.yaml.

    Zero gravity, the floating-base mode by default (the controller's mode '' follows the base), no
    joints named (issue 34: demo_robot.yaml's -9.81 made a floating robot fall).
    """
    from spart_ros.control.settings import ControllerSettings

    urdf = ROOT / 'test' / 'data' / 'urdf' / 'vendor' / 'solo12.urdf'
    nodes = local_launch.nodes_of(
        LAUNCH / 'sim_demo.launch.py', {'urdf_path': str(urdf), 'base': 'floating'}
    )
    files = {n.parameters[0] for n in nodes}
    assert [Path(f).name for f in files] == ['demo_robot_floating.yaml']
    doc = yaml.safe_load(Path(files.pop()).read_text())['/**']['ros__parameters']
    assert doc['gravity'] == [0.0, 0.0, 0.0] and doc['base'] == 'floating'
    assert 'joints' not in doc and 'command_joints' not in doc
    assert ControllerSettings(mode=doc['mode'], floating=True).mode == 'floating_base'
    assert all(n.parameters[1].get('base') == 'floating' for n in nodes)


def test_the_readme_floating_base_command_gives_the_controller_a_floating_base_mode():
    """spart_ros.launch.py base:=floating: controller.yaml's mode '' is floating_base then."""
    from spart_ros.control.settings import ControllerSettings

    urdf = str(ROOT / 'test' / 'data' / 'urdf' / 'vendor' / 'solo12.urdf')
    _, controller = local_launch.nodes_of(
        LAUNCH / 'spart_ros.launch.py', {'urdf_path': urdf, 'base': 'floating'}
    )
    doc = yaml.safe_load(Path(controller.parameters[0]).read_text())['/**']['ros__parameters']
    assert controller.parameters[1] == {'urdf_path': urdf, 'base': 'floating'}
    assert doc['mode'] == ''
    assert ControllerSettings(mode=doc['mode'], floating=True).mode == 'floating_base'
    assert ControllerSettings(mode=doc['mode'], floating=False).mode == 'computed_torque'


def test_sim_demo_launch_arguments_override(tmp_path):
    urdf, params = ROOT / 'urdf' / 'SC_3DoF.urdf', tmp_path / 'mine.yaml'
    params.write_text(yaml.safe_dump({'/**': {'ros__parameters': {'lockstep': True}}}))
    sim, controller, dynamics = local_launch.nodes_of(
        LAUNCH / 'sim_demo.launch.py',
        {'urdf_path': str(urdf), 'params': str(params), 'base': 'fixed'},
    )
    assert sim.parameters == [str(params), {'urdf_path': str(urdf), 'base': 'fixed'}]
    assert controller.parameters == [str(params), {'base': 'fixed'}]
    assert dynamics.parameters == [str(params), {'base': 'fixed'}]
    cmd = local_launch.command_line(sim, tmp_path)
    assert cmd[0].endswith('lib/spart_ros/sim_node') and cmd[
        cmd.index('--params-file') + 1
    ] == str(params)


def test_sim_demo_launch_with_robot_state_publisher():
    nodes = local_launch.nodes_of(LAUNCH / 'sim_demo.launch.py', {'robot_state_publisher': 'true'})
    assert [n.executable for n in nodes] == [
        'sim_node',
        'robot_state_publisher',
        'controller_node',
        'dynamics_node',
    ]
    rsp = nodes[1].parameters[0]
    assert (
        rsp['publish_robot_description'] is False
        and '<robot name="Chaser">' in rsp['robot_description']
    )


# --- gazebo.launch.py: Gazebo + ros2_control + spart_controller (not installable here: listed)
# ----

GAZEBO_ARGS = ['world', 'gui', 'controllers', 'controller_params', 'initial_positions']


def test_gazebo_launch_lists_its_arguments(capsys):
    args = local_launch.arguments_of(LAUNCH / 'gazebo.launch.py')
    assert [a[0] for a in args] == GAZEBO_ARGS and all(a[2] for a in args)  # each described
    defaults = {name: default for name, default, _ in args}
    assert defaults['world'] == 'empty.sdf' and defaults['gui'] == 'true'
    assert (
        Path(defaults['controllers']).name == 'kuka_iiwa_controllers.yaml'
        and Path(defaults['controllers']).is_file()
    )
    assert Path(defaults['controller_params']).name == 'controller_kuka_iiwa.yaml'
    assert local_launch.main([str(LAUNCH / 'gazebo.launch.py'), '--show-args']) == 0
    out = capsys.readouterr().out
    assert all(f"'{name}':" in out for name in GAZEBO_ARGS) and "(default: 'empty.sdf')" in out


def test_gazebo_launch_nodes_and_what_is_not_installed_here(tmp_path, capsys):
    from spart_ros.core.ros2_control import ros2_control_from_urdf
    from spart_ros.core.urdf import robot_from_urdf

    missing = []
    nodes = local_launch.nodes_of(LAUNCH / 'gazebo.launch.py', {'gui': 'false'}, missing)
    assert [(n.package, n.executable, n.arguments[:1]) for n in nodes] == [
        ('ros_gz_bridge', 'parameter_bridge', ['/clock@rosgraph_msgs/msg/Clock[gz.msgs.Clock']),
        ('robot_state_publisher', 'robot_state_publisher', []),
        ('ros_gz_sim', 'create', ['-topic']),
        ('controller_manager', 'spawner', ['joint_state_broadcaster']),
        ('controller_manager', 'spawner', ['hold_controller']),
        (
            'controller_manager',
            'spawner',
            ['effort_controller'],
        ),  # after the fallback is configured
        ('spart_ros', 'controller_node', []),
    ]
    bridge, rsp, create, jsb, hold, effort, controller = nodes
    assert effort.after is hold and all(n.after is None for n in nodes if n is not effort)
    assert '--inactive' in hold.arguments and '--param-file' in effort.arguments
    assert [n.name for n in nodes if n.name] == ['spart_controller']
    assert Path(controller.parameters[0]).name == 'controller_kuka_iiwa.yaml'
    assert (
        controller.parameters[1] == {'use_sim_time': True}
        and rsp.parameters[0]['use_sim_time'] is True
    )
    # robot_state_publisher gets the xacro's Gazebo variant: gz_ros2_control drives the URDF's
    # joints
    urdf = rsp.parameters[0]['robot_description']
    robot, _ = robot_from_urdf(urdf)
    (tag,) = ros2_control_from_urdf(urdf, robot)
    assert tag.plugin == 'gz_ros2_control/GazeboSimSystem' and tag.joint_names == robot.q_names
    assert robot.base_hint == 'fixed' and 'gz_ros2_control-system' in urdf
    # Gazebo itself comes from ros_gz_sim's launch file, not installed here (server only: -s)
    assert (
        len(missing) == 1
        and "'ros_gz_sim'" in missing[0]
        and "'gz_args': '-r -s empty.sdf'" in missing[0]
    )
    with pytest.raises(
        local_launch.MissingPackage, match="package 'ros_gz_sim' is not installed here"
    ):
        local_launch.nodes_of(LAUNCH / 'gazebo.launch.py', {})
    # --print lists everything; running it here is refused with one line
    assert local_launch.main([str(LAUNCH / 'gazebo.launch.py'), '--print']) == 0
    out = capsys.readouterr().out
    assert out.count('[local_launch] ') == 8 and 'lib/spart_ros/controller_node' in out
    assert '(after spawner hold_controller exits)' in out and 'include of a launch file of' in out
    assert local_launch.main([str(LAUNCH / 'gazebo.launch.py')]) == 2
    assert "package 'ros_gz_sim' is not installed here" in capsys.readouterr().err
