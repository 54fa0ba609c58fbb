"""
spart_ros.campaign's runs and serial campaigns: tiny scenarios (0.05-0.3 s of SC_3DoF).

A campaign's run is the offline closed loop itself (a nominal run is the demo's, bit for bit);
the controller keeps the nominal model while the plant's is dispersed; sensor noise reaches the
controller and not the metrics; a run that raises, diverges, faults or misses a bound is a row;
an interrupted campaign resumes with nothing lost or repeated; ``--rerun K`` gives row K again.
The Dask side is test_campaign_dask.py.
"""

import json
import math
import os

import numpy as np
import pytest

from spart_ros.campaign import load_campaign, rerun, run_campaign, run_one
from spart_ros.campaign.__main__ import main
from spart_ros.campaign.results import read_table

TINY = {'demo': 'SC_3DoF', 'plant': 'rk4', 'duration': 0.2}


def tiny(**changes):
    """Return a campaign of the tiny scenario (``scenario`` changes are merged into it)."""
    spec = {'scenario': dict(TINY), 'runs': 4, 'seed': 2, 'metrics': {'tracking_after': 0.0}}
    spec['scenario'].update(changes.pop('scenario', {}))
    spec.update(changes)
    return load_campaign(spec)


def same_tables(a, b):
    """Return whether two runs.csv are equal in every column but the run's time and worker."""
    (ca, ra), (cb, rb) = read_table(a), read_table(b)
    keep = [k for k, c in enumerate(ca) if c not in ('cpu_s', 'wall_s', 'worker')]
    if ca != cb or len(ra) != len(rb):
        return False
    for x, y in zip(ra, rb):
        for k in keep:
            u, v = x[k], y[k]
            if not (u == v or (isinstance(u, float) and math.isnan(u) and math.isnan(v))):
                return False
    return True


@pytest.mark.parametrize('plant', ['rk4', 'mujoco'])
def test_a_nominal_run_is_the_demo_bit_for_bit(plant):
    """No dispersion, no noise: the campaign's run is closed_loop.demo's run."""
    from spart_ros.sim.closed_loop import demo

    campaign = load_campaign(
        {'scenario': {'demo': 'SC_3DoF_orbit', 'plant': plant, 'duration': 0.2}, 'runs': 1}
    )
    result, run = run_one(campaign, 0, keep_run=True)
    reference = demo('SC_3DoF_orbit', plant=plant, duration=0.2)
    for name in (
        'q',
        'qd',
        'q_ref',
        'commands',
        'base_position',
        'base_rotation',
        'base_twist',
        'thruster_commands',
        'wheel_torques',
        'propellant',
    ):
        assert np.array_equal(getattr(run, name), getattr(reference, name), equal_nan=True), name
    assert result.status == 'passed', result.error
    assert result.metrics['propellant'] == reference.propellant[-1]


def test_the_controller_keeps_the_nominal_model_and_actuators():
    """The plant is dispersed, the controller is what it was designed with."""
    campaign = load_campaign(
        {
            'scenario': {'demo': 'SC_3DoF_orbit', 'plant': 'rk4', 'duration': 0.05},
            'runs': 1,
            'dispersions': {
                'links.Spacecraft.mass': {'distribution': 'uniform', 'low': 5, 'high': 10},
                'thrusters.px_1.direction': {'distribution': 'uniform', 'low': 0.01, 'high': 0.02},
                'wheels.rw_x.rotor_inertia': {
                    'distribution': 'uniform',
                    'low': 1.1,
                    'high': 1.2,
                    'apply': 'scale',
                },
            },
        }
    )
    result, run = run_one(campaign, 0, keep_run=True)
    plant = run.plant.plant
    assert run.controller.robot.base_link.mass == 100.0
    assert plant.robot.base_link.mass == result.draws['links.Spacecraft.mass']
    assert 105 <= plant.robot.base_link.mass <= 110
    nominal = run.controller.law.actuation.actuators
    real = plant.actuation.actuators
    assert np.array_equal(nominal.thrusters[0].direction, [1.0, 0.0, 0.0])
    angle = np.arccos(real.thrusters[0].direction @ nominal.thrusters[0].direction)
    assert abs(angle - result.draws['thrusters.px_1.direction.angle']) < 1e-9
    assert nominal.wheels[0].rotor_inertia == 0.05
    assert 0.055 <= real.wheels[0].rotor_inertia <= 0.06
    assert result.status == 'passed', result.error


def test_sensor_noise_reaches_the_controller_and_the_metrics_use_the_truth():
    sigma_q, sigma_p = 1e-4, 2e-3
    campaign = tiny(
        scenario={'duration': 0.3},
        noise={'joint_positions': sigma_q, 'base_position': sigma_p},
        retain={'runs': [0]},
    )
    result, run = run_one(campaign, 0, keep_run=True)
    s = result.series
    dq = (s['q'] - s['true_q']).ravel()  # what the controller read - what was
    dp = (s['base_position'] - s['true_base_position']).ravel()
    # 903 samples each: the std within 15 % (6 standard errors), the mean within 6 of its own
    for d, sigma in ((dq, sigma_q), (dp, sigma_p)):
        assert abs(d.std() / sigma - 1) < 0.15 and abs(d.mean()) < 6 * sigma / np.sqrt(d.size)
    e = s['q_ref'] - s['true_q']
    assert result.metrics['tracking_rms'] == np.sqrt(np.mean(e * e, axis=0)).max()
    assert np.array_equal(s['tracking_error'], e)
    again = run_one(campaign, 0)  # the noise is drawn from the run's own stream
    assert json.dumps(again.metrics) == json.dumps(result.metrics)  # NaN included


@pytest.mark.parametrize(
    'dispersions, success, status, message',
    [
        (
            {'settings.kp': {'distribution': 'uniform', 'low': -2, 'high': -1, 'apply': 'set'}},
            None,
            'error',
            'kp: every value must be a finite number >= 0',
        ),
        (
            {
                'initial.joint_velocities': {
                    'distribution': 'uniform',
                    'low': 1e300,
                    'high': 2e300,
                    'apply': 'set',
                }
            },
            None,
            'nan',
            'not finite',
        ),
        (
            {
                'settings.max_tracking_error': {
                    'distribution': 'uniform',
                    'low': 1e-7,
                    'high': 2e-7,
                    'apply': 'set',
                }
            },
            None,
            'fault',
            'tracking error of Joint_1',
        ),
        ({}, ['tracking_rms < 1e-12'], 'failed', 'not met: tracking_rms < 1e-12'),
    ],
)
def test_a_run_that_raises_diverges_faults_or_fails_is_a_row(
    tmp_path, dispersions, success, status, message
):
    campaign = tiny(runs=2, scenario={'duration': 0.05}, dispersions=dispersions, success=success)
    result = run_campaign(campaign, output=str(tmp_path), workers=1, progress=False, plots=False)
    assert [r.status for r in result.results] == [status, status]
    assert all(message in r.error for r in result.results), result.results[0].error
    assert len(os.listdir(tmp_path / 'series')) == (0 if status in ('error', 'nan') else 2)
    assert result.summary['statuses'] == {status: 2} and result.summary['success_rate'] == 0.0


def test_an_interrupted_campaign_resumes_with_nothing_lost_or_repeated(tmp_path):
    campaign = tiny(
        runs=5,
        dispersions={'links.Link_1.mass': {'distribution': 'normal', 'std': 0.5}},
        noise={'joint_velocities': 1e-3},
    )
    whole = run_campaign(
        campaign, output=str(tmp_path / 'whole'), workers=1, progress=False, plots=False
    )

    def stop_after_two(result, client):
        if result.index == 1:
            raise KeyboardInterrupt

    folder = tmp_path / 'resumed'
    with pytest.raises(KeyboardInterrupt):
        run_campaign(
            campaign,
            output=str(folder),
            workers=1,
            progress=False,
            plots=False,
            on_result=stop_after_two,
        )
    journal = folder / 'runs.jsonl'
    assert len(journal.read_text().splitlines()) == 2
    with open(journal, 'a') as f:  # a crash in the middle of writing run 2's line
        f.write('{"index": 2, "status": "pas')
    again = run_campaign(campaign, output=str(folder), workers=1, progress=False, plots=False)
    assert again.ran == 3
    indices = [json.loads(line)['index'] for line in journal.read_text().splitlines()]
    assert sorted(indices) == [0, 1, 2, 3, 4]
    assert same_tables(whole.table, again.table)
    assert (
        run_campaign(campaign, output=str(folder), workers=1, progress=False, plots=False).ran == 0
    )


def test_rerun_k_gives_row_k_bit_for_bit(tmp_path, capsys):
    path = tmp_path / 'campaign.yaml'
    import yaml

    spec = {
        'scenario': dict(TINY, duration=0.1),
        'runs': 3,
        'seed': 9,
        'metrics': {'tracking_after': 0.0},
        'dispersions': {
            'links.Spacecraft.inertia': {
                'distribution': 'normal',
                'std': 0.05,
                'apply': 'scale',
                'axes_std': 0.05,
            },
            'links.Link_2.com': {'distribution': 'uniform', 'low': -0.01, 'high': 0.01},
            'initial.joint_positions': {'distribution': 'normal', 'std': [0.01, 0.02, 0.0]},
        },
        'noise': {'joint_positions': 1e-5},
        'output': 'results',
    }
    path.write_text(yaml.safe_dump(spec))
    assert main([str(path), '--workers', '1', '--quiet', '--no-plots']) == 0
    assert 'success rate' in capsys.readouterr().out
    assert main([str(path), '--rerun', '2']) == 0
    out = capsys.readouterr().out
    assert 'identical to the recorded row' in out
    assert (tmp_path / 'results' / 'rerun' / 'run_000002.npz').exists()
    # the comparison can fail: a recorded metric changed by one unit in the last place
    journal = tmp_path / 'results' / 'runs.jsonl'
    rows = [json.loads(line) for line in journal.read_text().splitlines()]
    row = next(r for r in rows if r['index'] == 2)
    row['metrics']['tracking_max'] = float(np.nextafter(row['metrics']['tracking_max'], 1.0))
    journal.write_text(''.join(json.dumps(r) + '\n' for r in rows))
    assert main([str(path), '--rerun', '2']) == 1
    assert 'DIFFERS' in capsys.readouterr().out
    result, run, recorded = rerun(load_campaign(str(path)), 1)
    assert recorded['draws'] == result.row()['draws'] and run is not None


def test_the_command_line_writes_the_results_and_continues_a_campaign(tmp_path, capsys):
    import yaml

    path = tmp_path / 'c.yaml'
    spec = {
        'scenario': dict(TINY, duration=0.05),
        'runs': 2,
        'dispersions': {
            'settings.kd': {'distribution': 'uniform', 'low': 0.8, 'high': 1.2, 'apply': 'scale'}
        },
        'success': ['tracking_max < 1.0'],
        'metrics': {'tracking_after': 0.0},
        'retain': {'every': 2, 'series': ['t', 'q', 'tracking_error'], 'decimate': 5},
    }
    path.write_text(yaml.safe_dump(spec))
    assert main([str(path), '--workers', '1', '--quiet']) == 0
    out = capsys.readouterr().out
    assert 'success rate 100.0 % (95 % interval 15.8 - 100.0 %)' in out, out
    folder = tmp_path / 'c_results'
    assert sorted(os.listdir(folder / 'plots')) == [
        'envelopes.png',
        'histograms.png',
        'sensitivity_tracking_max.png',
    ]
    series = np.load(folder / 'series' / 'run_000000.npz')
    assert sorted(series.files) == ['q', 't', 'tracking_error'] and len(series['t']) == 11
    summary = json.loads((folder / 'summary.json').read_text())
    assert summary['runs'] == 2 and summary['metrics']['tracking_max']['finite'] == 2
    cols, rows = read_table(folder / 'runs.csv')
    assert cols[:4] == ['index', 'status', 'success', 'settings.kd'] and len(rows) == 2
    assert main([str(path), '--workers', '1', '--quiet', '--no-plots', '--runs', '3']) == 0
    assert len(read_table(folder / 'runs.csv')[1]) == 3
    spec['seed'] = 1  # another campaign into the same folder: refused
    path.write_text(yaml.safe_dump(spec))
    assert main([str(path), '--workers', '1', '--quiet']) == 2
    assert 'holds the results of another campaign' in capsys.readouterr().err
    assert main([str(tmp_path / 'missing.yaml')]) == 2


def test_a_run_lost_with_its_worker_is_retried_when_the_campaign_runs_again(tmp_path):
    from spart_ros.campaign.engine import _infrastructure_error

    class KilledWorker(Exception):  # distributed's name for a run whose workers kept dying
        pass

    lost = _infrastructure_error(1, KilledWorker('run-1 killed 3 workers'))
    assert lost.status == 'lost' and 'retried when the campaign runs again' in lost.error
    campaign = tiny(runs=2, scenario={'duration': 0.05})
    first = run_campaign(campaign, output=str(tmp_path), workers=1, progress=False, plots=False)
    journal = tmp_path / 'runs.jsonl'
    rows = [json.loads(line) for line in journal.read_text().splitlines()]
    journal.write_text(json.dumps(rows[0]) + '\n' + json.dumps(lost.row()) + '\n')
    again = run_campaign(campaign, output=str(tmp_path), workers=1, progress=False, plots=False)
    assert again.ran == 1 and [r.status for r in again.results] == ['passed', 'passed']
    assert same_tables(first.table, again.table)
