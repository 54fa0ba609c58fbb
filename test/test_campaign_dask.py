"""
spart_ros.campaign on Dask: a LocalCluster of two single-threaded workers, shared by the tests.

The campaign is tiny (8 runs of 0.2 s of SC_3DoF on the RK4 plant) but holds every kind of row:
runs that pass, runs whose drawn gain the controller refuses (error), runs whose drawn fault
threshold is crossed (fault), inertias and centres of mass dispersed, sensor noise.  Serial and
two-worker campaigns give the same table; a worker killed in the middle of a campaign loses no
run and repeats none.  (The cluster's start-up is most of this file's cost.)
"""

import json
import os
import signal

import pytest

from spart_ros.campaign import load_campaign, run_campaign
from test_campaign import same_tables, TINY

SPEC = {
    'scenario': TINY,
    'runs': 8,
    'seed': 5,
    'metrics': {'tracking_after': 0.0},
    'dispersions': {
        'links.Spacecraft.inertia': {
            'distribution': 'normal',
            'std': 0.05,
            'apply': 'scale',
            'axes_std': 0.02,
        },
        'links.Link_*.com': {'distribution': 'uniform', 'low': -0.005, 'high': 0.005},
        'settings.kp': {'distribution': 'uniform', 'low': -20.0, 'high': 200.0, 'apply': 'set'},
        'settings.max_tracking_error': {
            'distribution': 'uniform',
            'low': 1e-7,
            'high': 1e-4,
            'apply': 'set',
        },
    },
    'noise': {'joint_positions': 1e-6},
    'retain': {'every': 4, 'series': ['t', 'q']},
}


@pytest.fixture(scope='module')
def cluster():
    import logging

    from distributed import Client, LocalCluster

    cluster = LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.ERROR,
    )
    client = Client(cluster)
    yield cluster, client
    client.close()
    cluster.close()


@pytest.fixture(scope='module')
def serial(tmp_path_factory):
    """Return the campaign run in this process, without Dask: the reference table."""
    campaign = load_campaign(SPEC)
    result = run_campaign(
        campaign,
        output=str(tmp_path_factory.mktemp('serial')),
        workers=1,
        progress=False,
        plots=False,
    )
    statuses = {r.status for r in result.results}
    assert statuses == {'passed', 'error', 'fault'}, statuses  # every kind of row is in it
    return result


def test_serial_and_two_workers_give_the_same_table(cluster, serial, tmp_path):
    local, _ = cluster
    result = run_campaign(
        load_campaign(SPEC),
        output=str(tmp_path),
        progress=False,
        plots=False,
        scheduler=local.scheduler_address,
    )  # as --scheduler tcp://... does
    assert result.ran == 8
    assert same_tables(serial.table, result.table)
    assert len({r.worker for r in result.results}) == 2  # both workers ran some
    kept = {r.index for r in serial.results if r.index % 4 == 0 or r.status == 'fault'}
    assert sorted(os.listdir(tmp_path / 'series')) == [f'run_{i:06d}.npz' for i in sorted(kept)]


def test_a_worker_killed_in_the_middle_loses_no_run_and_repeats_none(cluster, serial, tmp_path):
    _, client = cluster
    killed = []

    def kill_one(result, dask_client):
        if killed:
            return
        busy = {w: keys for w, keys in dask_client.processing().items() if keys}
        if not busy:  # between two runs on every worker (a loaded machine): at the next result
            return
        victim = sorted(busy)[0]
        pid = dask_client.run(os.getpid, workers=[victim])[victim]
        os.kill(pid, signal.SIGKILL)
        killed.append((victim, list(busy[victim])))

    result = run_campaign(
        load_campaign(SPEC),
        output=str(tmp_path),
        client=client,
        progress=False,
        plots=False,
        on_result=kill_one,
    )
    assert killed and killed[0][1], 'the killed worker had runs to do'
    lines = (tmp_path / 'runs.jsonl').read_text().splitlines()
    assert sorted(json.loads(line)['index'] for line in lines) == list(range(8))
    assert same_tables(serial.table, result.table)
    client.wait_for_workers(2, timeout=60)  # the nanny restarted it (for tests after this one)
