"""
examples/station_keeping_sweep.py runs (shortened) and writes what it says.

Two thruster cycles of the orbital demo offline for 1.5 s at a 2 ms step: the summary and the
figure are written; each run keeps the base near its target and its attitude, uses propellant,
and the shorter cycle fires more often (more, shorter pulses).
"""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_the_sweep_runs_and_reports(tmp_path):
    proc = subprocess.run(
        [
            sys.executable,
            os.path.join(ROOT, 'examples', 'station_keeping_sweep.py'),
            '--periods',
            '0.05',
            '0.2',
            '--duration',
            '1.5',
            '--dt',
            '0.002',
            '--output',
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    summary = json.loads((tmp_path / 'summary.json').read_text())
    fast, slow = summary['runs']
    for row in (fast, slow):
        assert row['station_keeping_max_m'] < 0.06  # 2.2 cm/s for 1.5 s: ~3 cm
        assert row['attitude_change_max_deg'] < 0.5
        assert row['propellant_g'] > 0 and row['firings'] > 0
    assert fast['firings'] > slow['firings']
    assert (tmp_path / 'station_keeping.png').stat().st_size > 10_000
    assert 'thruster_period 0.050 s' in proc.stdout
