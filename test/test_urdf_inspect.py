"""The command-line model report: python -m spart_ros.inspect FILE [--base ...] [--strict]."""

import os
import subprocess
import sys

from core_helpers import TEST_DIR
import pytest
from spart_ros import inspect as report_cli

LOADING = os.path.join(TEST_DIR, 'data', 'urdf', 'loading')
ROOT = os.path.dirname(TEST_DIR)
REPO = os.path.dirname(TEST_DIR)


def run(capsys, *argv):
    code = report_cli.main(list(argv))
    return code, capsys.readouterr().out


def test_module_runs_and_reports_the_ur5():
    out = subprocess.run(
        [sys.executable, '-m', 'spart_ros.inspect', os.path.join(LOADING, 'ur5_world.urdf')],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    text = out.stdout
    for words in (
        "robot 'ur5': 10 links, 9 joints (6 moving), base link 'base_link'",
        "URDF root 'world' dropped: a fixed joint places the base at xyz (0.5, -0.2, 0.8) "
        'rpy (0, 0, 1.5708)',
        '`-- upper_arm_link  <- shoulder_lift_joint (revolute)',
        'shoulder_pan_joint: revolute base_link -> shoulder_link, origin xyz (0, 0, 0.089159) '
        'rpy (0, 0, 0), axis (0, 0, 1), [-6.28319, 6.28319] rad, effort 150, velocity 3.15',
        'upper_arm_link: mass 8.393 kg, CoM (0, 0, 0.28)',
        'tool0: massless frame',
        'total mass: 20.9939 kg',
        'centre of mass at the zero configuration',
        'forward dynamics, floating base: yes',
        "links ['ee_link', 'base', 'tool0'] have no <inertial>",
    ):
        assert words in text, words


def test_mimic_and_floating_world(capsys):
    code, out = run(capsys, os.path.join(LOADING, 'gripper_mimic.urdf'), '--base', 'floating')
    assert code == 0 and 'mimic: -0.5 * wrist + 0.1' in out and '--base floating: OK' in out
    assert "the 3 independent ['shoulder', 'wrist', 'finger_left']" in out
    code, out = run(capsys, os.path.join(LOADING, 'quadruped_world_floating.urdf'))
    assert code == 0 and "a floating joint makes 'trunk' a floating base" in out
    assert "'imu_link'" in out and 'not positive semi-definite' in out


def test_xacro_arguments(capsys):
    code, out = run(
        capsys, os.path.join(LOADING, 'biped.urdf.xacro'), '--xacro-arg', 'torso_mass:=20'
    )
    assert code == 0 and 'pelvis: mass 20 kg' in out
    with pytest.raises(SystemExit) as err:
        report_cli.main(
            [os.path.join(LOADING, 'biped.urdf.xacro'), '--xacro-arg', 'torso_mass=20']
        )
    assert err.value.code == 2


def test_package_paths_on_every_command_line(capsys, tmp_path, monkeypatch):
    """
    ``--package-path DIR`` for $(find pkg) on inspect, simulate, codegen; ``--xacro-arg`` too.

    Without it the package is not found: one line saying how to name it (issue 34).
    """
    from spart_ros.codegen.__main__ import _arguments as codegen_arguments
    from spart_ros.core import packages
    from spart_ros.simulate import main as simulate

    monkeypatch.delenv(packages.ENV, raising=False)
    (tmp_path / 'desc' / 'urdf').mkdir(parents=True)
    (tmp_path / 'desc' / 'urdf' / 'part.xacro').write_text(
        '<robot xmlns:xacro="http://www.ros.org/wiki/xacro"><xacro:macro name="part" '
        'params="name m"><link name="${name}"><inertial><mass value="${m}"/><inertia ixx="0.1" '
        'iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link></xacro:macro></robot>'
    )
    arm = tmp_path / 'arm.urdf.xacro'
    arm.write_text(
        '<robot name="arm" xmlns:xacro="http://www.ros.org/wiki/xacro">'
        '<xacro:include filename="$(find desc)/urdf/part.xacro"/><xacro:arg name="m" default="1"/>'
        '<xacro:part name="base" m="4"/><xacro:part name="link" m="$(arg m)"/><joint name="j" '
        'type="revolute"><parent link="base"/><child link="link"/><axis xyz="0 0 1"/>'
        '<limit lower="-1" upper="1" effort="10" velocity="1"/></joint></robot>'
    )
    try:
        code, out = run(capsys, str(arm))
        assert code == 1 and out.count("package 'desc' of $(find desc) not found") == 1, out
        assert '--package-path DIR' in out
        code, out = run(capsys, str(arm), '--package-path', str(tmp_path), '--xacro-arg', 'm:=2.5')
        assert code == 0 and 'link: mass 2.5 kg' in out, out
        assert simulate([str(arm), '--duration', '0.05']) == 2
        assert "package 'desc' of $(find desc) not found" in capsys.readouterr().err
        argv = [str(arm), '--package-path', str(tmp_path / 'desc'), '--xacro-arg', 'm:=2.5']
        assert simulate(argv + ['--duration', '0.05']) == 0
        assert 'arm: mode computed_torque, fixed base' in capsys.readouterr().out
        packages.set_package_paths([])
        args = codegen_arguments(
            [str(arm), '--out', str(tmp_path), '--package-path', str(tmp_path)]
        )
        assert packages.package_paths() == [str(tmp_path)] and args.model == str(arm)
        with pytest.raises(SystemExit):
            run(capsys, str(arm), '--package-path', str(tmp_path / 'missing'))
        assert 'not folders' in capsys.readouterr().err
    finally:
        packages.set_package_paths([])


def test_errors_exit_non_zero(capsys, tmp_path):
    code, out = run(capsys, os.path.join(LOADING, 'manisat_planar.urdf'), '--strict')
    assert code == 1 and 'ERROR: InertiaError' in out and "'Satellite'" in out
    bad = tmp_path / 'planar.urdf'
    bad.write_text(
        '<robot name="r"><link name="a"/><link name="b"/><joint name="glide" type="planar">'
        '<parent link="a"/><child link="b"/></joint></robot>'
    )
    code, out = run(capsys, str(bad))
    assert code == 1 and str(bad) in out and "'glide'" in out
    code, out = run(capsys, str(tmp_path / 'missing.urdf'))
    assert code == 1 and 'missing.urdf' in out


def test_base_that_forward_dynamics_cannot_use_exits_non_zero(capsys, tmp_path):
    path = tmp_path / 'rail.urdf'
    path.write_text(
        '<robot name="rail"><link name="base_footprint"/><joint name="slide" type="prismatic">'
        '<parent link="base_footprint"/><child link="cart"/><axis xyz="1 0 0"/>'
        '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint><link name="cart"><inertial>'
        '<mass value="2"/><inertia ixx="1" ixy="0" ixz="0" iyy="1" iyz="0" izz="1"/></inertial>'
        '</link></robot>'
    )
    code, out = run(capsys, str(path), '--base', 'fixed')
    assert code == 0 and 'forward dynamics, floating base: no' in out and "'slide'" in out
    code, out = run(capsys, str(path), '--base', 'floating')
    assert code == 1 and '--base floating: ERROR' in out


def _box(out):
    """Return the printed bounding box: {axis: (min, max)}."""
    import re

    line = next(text for text in out.splitlines() if 'bounding box [m]' in text)
    return {
        a: (float(lo), float(hi))
        for a, lo, hi in re.findall(r'([xyz]) \[([-0-9.e]+), ([-0-9.e]+)\]', line)
    }


def test_workspace_of_the_planar_arm(capsys, tmp_path):
    """
    The planar arm's tip (link2's point 0.8 m out).

    Every point in the plane z = 0, between the reaches the elbow's limit (2.9 rad) and the
    stretched arm (1.8 m) allow; the printed box is the points'; the PNG has three views.
    """
    from core_helpers import load_robot
    from matplotlib.image import imread
    import numpy as np
    from spart_ros.core import sample_workspace

    png = tmp_path / 'ws.png'
    code, out = run(
        capsys,
        os.path.join(TEST_DIR, 'data', 'urdf', 'planar_two_link.urdf'),
        '--workspace',
        'link2',
        '--point',
        '0.8',
        '0',
        '0',
        '--samples',
        '5000',
        '--seed',
        '3',
        '--output',
        str(png),
    )
    assert code == 0, out
    assert "workspace of the point (0.8, 0, 0) of 'link2': 5000 samples" in out
    box = _box(out)
    assert box['z'] == (0.0, 0.0)
    assert 1.7 < box['x'][1] <= 1.8 and -1.8 <= box['x'][0] < -1.7 and -1.8 <= box['y'][0] < -1.7
    ws = sample_workspace(load_robot('planar_two_link'), 'link2', 5000, point=[0.8, 0, 0], seed=3)
    r = np.linalg.norm(ws.points, axis=1)
    inner = np.sqrt(1.0 + 0.64 + 1.6 * np.cos(2.9))  # the elbow bent to its limit
    assert r.max() <= 1.8 + 1e-12 and r.min() >= inner - 1e-12 and r.min() < inner + 0.02
    for axis, k in zip('xyz', range(3)):
        assert box[axis] == pytest.approx(
            (ws.points[:, k].min(), ws.points[:, k].max()), rel=1e-5, abs=1e-9
        )
    assert np.all(ws.q >= -2.9) and np.all(ws.q <= 2.9)
    image = imread(png)
    assert image.shape[1] > 2.5 * image.shape[0] > 400  # three panels side by side


def test_workspace_bad_arguments(capsys, tmp_path):
    urdf = os.path.join(TEST_DIR, 'data', 'urdf', 'planar_two_link.urdf')
    code, out = run(capsys, urdf, '--workspace', 'elbow', '--output', str(tmp_path / 'x.png'))
    assert code == 2 and "unknown link 'elbow'" in out and not (tmp_path / 'x.png').exists()
    with pytest.raises(SystemExit) as exit_:
        report_cli.main([urdf, '--point', '0', '0', '0'])
    assert exit_.value.code == 2
    code, out = run(
        capsys,
        urdf,
        '--workspace',
        'link2',
        '--output',
        str(tmp_path / 'no' / 'dir' / 'x.png'),
        '--samples',
        '10',
    )
    assert code == 1 and 'ERROR: --workspace' in out


def test_a_folder_is_named_as_a_folder_with_its_urdf_files(capsys, tmp_path):
    urdf = os.path.join(ROOT, 'urdf')
    code, out = run(capsys, urdf)
    assert code == 1 and 'is a folder, not a URDF file' in out, out
    names = sorted(os.listdir(urdf))
    assert any(n.endswith('.yaml') for n in names)  # (the actuators' declaration is not offered)
    for name in names:
        listed = os.path.join(urdf, name) in out
        assert listed == name.endswith(('.urdf', '.xacro')), name  # the URDF/xacro files only
    (tmp_path / 'notes.txt').write_text('no robot here')
    code, out = run(capsys, str(tmp_path))
    assert code == 1 and 'is a folder' in out and 'holds no .urdf or .xacro file' in out
