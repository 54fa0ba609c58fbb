"""
The controller's design (docs/controller.md "How the controller is built", "Adding a mode").

- the diagrams in docs/controller.md are the ones the code draws (spart_ros.control.design);
- the tick visits its units once, in the order of the data;
- no class in spart_ros/control/ is longer than 500 lines;
- "Adding a mode" followed as it is written: its two files taken from docs/controller.md, the
  package registered as colcon build registers an ament_python package (``setup.py egg_info``),
  the mode run offline, then by the INSTALLED spart_controller started with ``mode: joint_pd``
  (the test's package on its PYTHONPATH), its efforts checked over real topics.
"""

import ast
import os
from pathlib import Path
import re
import subprocess
import sys
from types import SimpleNamespace

from builtin_interfaces.msg import Time
from core_helpers import urdf_path
from node_helpers import RELIABLE_QOS, scaled
import numpy as np
import pytest
from sensor_msgs.msg import JointState
from spart_ros import spart
from spart_ros.control import design, modes
from spart_ros.control.controller import ControlInputs, Controller, HOLDING, TRACKING
from spart_ros.control.goals import SUCCEEDED, TrajectoryGoal
from spart_ros.control.settings import ControllerSettings
from spart_ros.core.errors import InputError
from std_msgs.msg import Float64MultiArray

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / 'docs' / 'controller.md'
URDF = urdf_path('planar_two_link')
KP, KD = 20.0, 2.0
pytestmark = pytest.mark.timeout(300)


def test_the_docs_diagrams_are_the_codes():
    text = DOCS.read_text()
    assert design.markdown() in text, (
        'docs/controller.md: the design diagrams differ from the code: run '
        '`python -m spart_ros.control.design --write`'
    )


def test_one_tick_visits_the_units_in_the_order_of_the_data():
    lines = design.tick_diagram().splitlines()
    calls = [line.strip() for line in lines if 'Controller->>' in line]
    order = [
        'Supervisor: admit(',
        'Continuity: before_law(',
        'JointReference: at(',
        'Continuity: new_fault(',
        'GoalManager: follow(',
        'Law: command(',
        'ControlledRobot: command_values(',
        'Supervisor: commanded(',
        'JointReference: remember(',
    ]
    found = [next(k for k, c in enumerate(calls) if o in c) for o in order]
    assert found == sorted(found), calls
    units = design.units_diagram()
    for unit in ('Supervisor', 'Continuity', 'JointReference', 'GoalManager', 'ControlledRobot'):
        assert f'Controller --> {unit}' in units


def test_no_class_in_control_is_longer_than_500_lines():
    long = []
    for path in sorted((ROOT / 'spart_ros' / 'control').glob('*.py')):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef) and node.end_lineno - node.lineno + 1 > 500:
                long.append(f'{path.name}:{node.name} ({node.end_lineno - node.lineno + 1})')
    assert not long, long


# -- Adding a mode, followed --------------------------------------------------------------------
def _how_to_files():
    """{file name: text} of the code blocks of docs/controller.md's "Adding a mode"."""
    blocks = re.findall(
        r'<!-- adding-a-mode: (\S+) -->[^\n]*\n```python\n(.*?)```', DOCS.read_text(), re.S
    )
    return dict(blocks)


@pytest.fixture(scope='module')
def mode_package(tmp_path_factory):
    """Return (source, metadata) dirs of the how-to's package, registered as colcon build does."""
    files = _how_to_files()
    assert set(files) == {'joint_pd_mode.py', 'setup.py'}, files
    src = tmp_path_factory.mktemp('joint_pd_src')
    eggs = tmp_path_factory.mktemp('joint_pd_metadata')
    for name, text in files.items():
        (src / name).write_text(text)
    subprocess.run(
        [sys.executable, 'setup.py', '-q', 'egg_info', '--egg-base', str(eggs)],
        cwd=src,
        check=True,
        capture_output=True,
    )
    assert (next(eggs.glob('*.egg-info')) / 'entry_points.txt').read_text().split() == [
        '[spart_ros.modes]',
        'joint_pd',
        '=',
        'joint_pd_mode:JointPD',
    ]
    return src, eggs


@pytest.fixture
def on_path(mode_package, monkeypatch):
    src, eggs = mode_package
    monkeypatch.syspath_prepend(str(eggs))
    monkeypatch.syspath_prepend(str(src))
    monkeypatch.setattr(modes, '_LOADED', {})
    yield
    sys.modules.pop('joint_pd_mode', None)


def _expected(q_ref, qd_ref, q, qd):
    return KP * (np.asarray(q_ref) - q) + KD * (np.asarray(qd_ref) - qd)


def test_a_registered_mode_runs_offline(on_path):
    robot = spart.urdf2robot(URDF)[0]
    assert 'joint_pd' in modes.mode_names() and 'joint_pd' not in modes.MODES
    c = Controller(notify=lambda *a: None)
    c.configure(ControllerSettings(mode='joint_pd', kp=KP, kd=KD), robot)
    c.activate()
    t, n, z3 = 10.0, robot.n_q, np.zeros(3)
    base = SimpleNamespace(R_b=np.eye(3), p_b=z3, v_b=z3, w_b=z3)

    def tick(q, qd):
        nonlocal t
        t += 0.001
        stamp = (int(t), int(round((t % 1) * 1e9)))
        state = SimpleNamespace(base=base, q=np.asarray(q, float), qd=np.asarray(qd, float))
        return c.update(ControlInputs(state, None, np.full(n, 100.0), None, stamp, 100.0), t)

    q0, qd0 = np.array([0.3, -0.4]), np.array([0.1, 0.2])
    np.testing.assert_allclose(tick(q0, qd0).values, _expected(q0, [0, 0], q0, qd0))
    assert c.state == HOLDING
    goal = c.submit(
        TrajectoryGoal.from_points(['shoulder', 'elbow'], [(0.005, [0.31, -0.41], [], [])]), t
    )
    q1 = q0 + [0.002, -0.001]
    cmd = tick(q1, qd0)
    assert c.state == TRACKING and goal.status == 'active'
    fb = c.feedback()
    np.testing.assert_allclose(
        cmd.values, _expected(fb.desired.position, fb.desired.velocity, q1, qd0)
    )
    for _ in range(6):
        tick(q1, qd0)
    assert goal.status == SUCCEEDED
    c.apply_settings(kp=2 * KP)  # run time, through the law's apply_settings
    cmd = tick(q1, [0.0, 0.0])
    np.testing.assert_allclose(cmd.values, 2 * KP * (np.array([0.31, -0.41]) - q1))


def test_a_mode_that_does_not_load_is_named(on_path, tmp_path, monkeypatch):
    with pytest.raises(InputError, match=r"mode must be one of \[.*'joint_pd'\], got 'nope'"):
        ControllerSettings(mode='nope').check()
    meta = tmp_path / 'broken_mode-0.1.dist-info'
    meta.mkdir()
    (meta / 'METADATA').write_text('Metadata-Version: 2.1\nName: broken-mode\nVersion: 0.1\n')
    (meta / 'entry_points.txt').write_text(
        '[spart_ros.modes]\nbroken = no_such_module:Law\nnot_a_law = os:path\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(InputError, match="mode broken: its entry point 'no_such_module:Law'"):
        ControllerSettings(mode='broken').check()
    with pytest.raises(InputError, match='not a subclass of spart_ros.control.law.Law'):
        ControllerSettings(mode='not_a_law').check()


def test_a_registered_mode_through_the_node(mode_package, node_process, ros_node):
    """The installed spart_controller with ``mode: joint_pd``: its package found on PYTHONPATH."""
    src, eggs = mode_package
    path = os.pathsep.join([str(src), str(eggs), os.environ.get('PYTHONPATH', '')])
    ns = '/adding_a_mode'
    proc = node_process(
        'spart_ros',
        'controller_node',
        namespace=ns,
        parameters={
            'mode': 'joint_pd',
            'urdf_path': URDF,
            'kp': KP,
            'kd': KD,
            'state_timeout': 5.0,  # this test's waits are not the watchdog's business
            'commands_topic': f'{ns}/commands',
        },
        env={'PYTHONPATH': path},
    )
    proc.wait_for_output(r'spart_controller\]: mode joint_pd', scaled(90.0))
    js = ros_node.publisher(JointState, f'{ns}/joint_states', RELIABLE_QOS)
    commands = ros_node.subscribe(Float64MultiArray, f'{ns}/commands', RELIABLE_QOS)
    ros_node.wait_for_writers([commands], scaled(30.0), process=proc)

    def answer(q, qd, nanosec):
        n0 = len(commands)
        msg = JointState(name=['shoulder', 'elbow'], position=list(q), velocity=list(qd))
        msg.header.stamp = Time(sec=20, nanosec=nanosec)
        return np.array(
            ros_node.publish_until(
                js,
                lambda: msg,
                lambda: next((m for m in commands.messages[n0:] if any(m.data)), None),
                timeout=scaled(20.0),
                what=f'a command for the state stamped 20 s + {nanosec} ns',
                process=proc,
            ).data
        )

    q0, qd0 = np.array([0.3, -0.4]), np.array([0.1, 0.2])
    np.testing.assert_allclose(answer(q0, qd0, 1_000_000), _expected(q0, [0, 0], q0, qd0))
    q1, qd1 = q0 + [0.01, -0.02], np.array([-0.1, 0.3])
    np.testing.assert_allclose(answer(q1, qd1, 2_000_000), _expected(q0, [0, 0], q1, qd1))
