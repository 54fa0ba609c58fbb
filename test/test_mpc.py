"""
The mpc mode (spart_ros.control.mpc) on the MuJoCo plant through the offline closed loop.

Short runs (0.3 s of a KUKA iiwa trajectory): the solves are used, efforts stay within the
limits, the tracking is bounded; a deadline no solve can meet makes every tick computed torque's,
reported.  The 100 Hz figures are benchmarks/bench_mpc.py's.
"""

from core_helpers import urdf_path
import numpy as np
import pytest
from spart_ros.control.settings import ControllerSettings
from spart_ros.core.errors import InputError
from spart_ros.sim.closed_loop import simulate

KUKA = urdf_path('kuka_iiwa')
Q1 = np.array([0.5, 0.4, -0.3, -0.8, 0.2, 0.5, -0.4])


def _run(**settings):
    return simulate(
        KUKA,
        dict({'mode': 'mpc', 'mpc_steps': 10}, **settings),
        duration=0.3,
        trajectory=[(1.0, Q1)],
    )


def test_mpc_tracks_within_the_limits():
    run = _run(mpc_deadline=1.0, effort_limits=[60.0])
    law = run.controller.law
    assert law.solves >= 25 and law.misses == 0
    assert np.nanmax(np.abs(run.commands)) <= 60.0
    e = run.q - run.q_ref
    assert np.abs(e[np.isfinite(e).all(axis=1)]).max() < 0.02
    details = run.controller.details
    assert details.fallback is False and details.solves == law.solves


def test_a_missed_deadline_falls_back_to_computed_torque_and_is_reported():
    run = _run(mpc_deadline=1e-9)
    ct = simulate(KUKA, {'mode': 'computed_torque'}, duration=0.3, trajectory=[(1.0, Q1)])
    law = run.controller.law
    assert law.solves == 0 and law.misses >= 25
    assert 'deadline' in law.message and run.controller.details.fallback
    assert np.allclose(run.commands, ct.commands, atol=1e-9, equal_nan=True)


def test_mpc_settings_are_checked():
    with pytest.raises(InputError, match='mpc_steps'):
        ControllerSettings(mode='mpc', mpc_steps=1).check()
    with pytest.raises(InputError, match='mpc_weights'):
        ControllerSettings(mode='mpc', mpc_weights=(1.0, 2.0)).check()
    with pytest.raises(InputError, match='base: floating'):
        ControllerSettings(mode='floating_mpc').check()
