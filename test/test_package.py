"""Package metadata and layout of spart_ros (cheap checks, no ROS graph)."""

import os
from pathlib import Path
import subprocess
import sys
import xml.etree.ElementTree as ET

import spart_ros

ROOT = Path(__file__).resolve().parents[1]


def test_version_matches_package_xml():
    version = ET.parse(ROOT / 'package.xml').getroot().findtext('version')
    assert spart_ros.__version__ == version
    iface = ET.parse(ROOT / 'spart_interfaces' / 'package.xml').getroot()
    assert iface.findtext('name') == 'spart_interfaces'
    assert iface.findtext('member_of_group') == 'rosidl_interface_packages'


def test_import_spart_ros_is_light():
    """`import spart_ros` must not pull rclpy (or numba) in."""
    code = (
        'import sys, spart_ros; '
        "bad = [m for m in ('rclpy', 'numba') if m in sys.modules]; "
        'print(bad); sys.exit(1 if bad else 0)'
    )
    res = subprocess.run(
        [sys.executable, '-c', code],
        cwd=ROOT,
        env=dict(os.environ),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stdout + res.stderr


def test_console_scripts_point_at_real_modules():
    """Every console_scripts entry of setup.py names a callable of an importable module."""
    import ast
    import importlib
    import re

    # setup.py's syntax, not its layout or quotes: the entry_points dict literal of setup(...)
    tree = ast.parse((ROOT / 'setup.py').read_text())
    scripts = [
        ast.literal_eval(value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Dict)
        for key, value in zip(node.keys, node.values)
        if isinstance(key, ast.Constant) and key.value == 'console_scripts'
    ]
    assert len(scripts) == 1 and scripts[0], 'no console_scripts found in setup.py'
    for entry in scripts[0]:
        match = re.fullmatch(r'(\w+)\s*=\s*([\w.]+):(\w+)', entry)
        assert match, f'malformed console_scripts entry {entry!r}'
        _name, module, func = match.groups()
        assert callable(getattr(importlib.import_module(module), func)), entry


def test_scripts_test_sh_gets_the_bytecode_cache_back_from_colcon():
    """
    `colcon test` sets PYTHONDONTWRITEBYTECODE=1; test/conftest.py undoes it for scripts/test.sh.

    In a process started as colcon starts pytest, with and without test.sh's
    SPART_TEST_BYTECODE=1: the process itself and a child it starts (the nodes, scripts).
    """
    script = (
        'import runpy, subprocess, sys\n'
        'runpy.run_path(sys.argv[1])\n'
        "child = subprocess.run([sys.executable, '-c', 'import sys; "
        "print(sys.dont_write_bytecode)'], capture_output=True, text=True, check=True)"
        '.stdout.strip()\n'
        'print(sys.dont_write_bytecode, child)\n'
    )
    conftest = str(ROOT / 'test' / 'conftest.py')
    env = {k: v for k, v in os.environ.items() if k != 'SPART_TEST_BYTECODE'}
    env['PYTHONDONTWRITEBYTECODE'] = '1'
    for asked, expected in (('1', 'False False'), (None, 'True True')):
        run_env = dict(env, SPART_TEST_BYTECODE=asked) if asked else env
        out = subprocess.run(
            [sys.executable, '-c', script, conftest],
            capture_output=True,
            text=True,
            env=run_env,
            check=True,
        )
        assert out.stdout.strip().splitlines()[-1] == expected, (asked, out.stdout, out.stderr)
    if os.environ.get('SPART_TEST_BYTECODE') == '1':  # this run (scripts/test.sh) too
        assert not sys.dont_write_bytecode and 'PYTHONDONTWRITEBYTECODE' not in os.environ
