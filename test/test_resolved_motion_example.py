"""
examples/resolved_motion.py (SPART's ResolvedMotion example) runs as a script for a short time.

Writes its plots and summary, and the integrated motion obeys the physics and the laws: momentum
conserved (no external load), end effector on its circle, reactionless keeps the base yaw,
desired_reaction follows the yaw reference, resolved rate really turns the base.
"""

import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, 'examples', 'resolved_motion.py')
PLOTS = (
    'ee_path.png',
    'ee_velocity.png',
    'joints.png',
    'base.png',
    'momentum.png',
    'manipulability.png',
)


def test_resolved_motion_example_runs_and_conserves_momentum(tmp_path):
    out = tmp_path / 'plots'
    proc = subprocess.run(
        [sys.executable, SCRIPT, '--output', str(out), '--duration', '1.0', '--dt', '0.004'],
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f'wrote {len(PLOTS)} plots and summary.json' in proc.stdout
    for name in PLOTS:
        data = (out / name).read_bytes()
        assert data[:8] == b'\x89PNG\r\n\x1a\n' and len(data) > 10_000, name
    summary = json.loads((out / 'summary.json').read_text())
    modes = {m['mode']: m for m in summary['modes']}
    assert set(modes) == {
        'resolved_rate',
        'resolved_rate_min_base_energy',
        'reactionless',
        'desired_reaction',
    }
    for mode, m in modes.items():
        assert m['samples'] == 251
        # RK4 at 4 ms keeps the (nonlinear) momentum invariant to ~2e-14 of what the arm carries
        assert m['max_momentum_change'] <= 1e-10 * m['momentum_scale'], (mode, m)
        assert m['max_ee_position_error_m'] < 5e-5, (mode, m)  # ~5 um seen
        assert m['steps_feasible'] == 1.0 and m['min_rate_scale'] == 1.0, (mode, m)
    assert modes['reactionless']['max_base_yaw_change_rad'] < 1e-6  # 2e-7 seen (rate-loop lag)
    assert modes['resolved_rate']['max_base_yaw_change_rad'] > 1e-2
    assert (
        modes['resolved_rate_min_base_energy']['max_base_yaw_change_rad']
        < 0.1 * modes['resolved_rate']['max_base_yaw_change_rad']
    )
    assert modes['desired_reaction']['max_base_yaw_error_rad'] < np.deg2rad(0.01)
    assert modes['desired_reaction']['max_base_yaw_change_rad'] > np.deg2rad(1)
