"""
examples/orbit_sweep.py (the offline closed loop in orbit, swept over altitudes) runs as a script.

It writes its figures and summary, the system's CoM follows the Clohessy-Wiltshire free drift
while the arm moves (1e-8 of the motion), the arm tracks as in the demo, and the base's attitude
change against the no-orbit run is larger in the lower orbit (the gravity-gradient torque goes as
n^2).
"""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, 'examples', 'orbit_sweep.py')


def test_orbit_sweep_example_runs_and_the_com_follows_cw(tmp_path):
    out = tmp_path / 'sweep'
    proc = subprocess.run(
        [sys.executable, SCRIPT, '--output', str(out), '--duration', '6', '--altitudes', '400',
         '3000', '--plant', 'rk4'],
        capture_output=True,
        text=True,
        timeout=240,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert 'wrote 3 plots and summary.json' in proc.stdout
    for name in ('orbit_400.png', 'orbit_3000.png', 'attitude.png'):
        data = (out / name).read_bytes()
        assert data[:8] == b'\x89PNG\r\n\x1a\n' and len(data) > 10_000, name
    summary = json.loads((out / 'summary.json').read_text())
    low, high = summary['runs']
    assert (low['altitude_km'], high['altitude_km']) == (400.0, 3000.0)
    for run in (low, high):
        assert run['cw_error'] < 1e-8, run  # ~4e-10 seen
        assert run['final_state'] == 'holding'
        assert max(run['rms_tracking_rad']) < 0.01  # the demo's bound
        assert 0.0 < run['attitude_change_rad'] < run['lvlh_turn_rad']
    assert low['mean_motion'] > high['mean_motion']
    assert low['attitude_change_rad'] > high['attitude_change_rad']
