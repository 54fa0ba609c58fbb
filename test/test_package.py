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
    import importlib
    import re

    setup_py = (ROOT / 'setup.py').read_text()
    entries = re.findall(r'"(\w+)\s*=\s*([\w.]+):(\w+)"', setup_py)
    assert entries, 'no console_scripts found in setup.py'
    for _name, module, func in entries:
        assert callable(getattr(importlib.import_module(module), func))
