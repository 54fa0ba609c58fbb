"""
Running a campaign: serially, on a local Dask cluster, or on an existing one.

:func:`run_campaign` runs every run the results folder does not hold yet (so running a campaign
again continues it: after a crash, a Ctrl-C or a lost cluster nothing finished is lost and
nothing is run twice), records each as it finishes, then writes the table, the summary and the
plots.

- ``workers=1``: in this process, no Dask;
- default: a ``distributed.LocalCluster`` of one single-threaded worker process per core;
- ``scheduler='tcp://host:8786'``: the workers of an existing cluster (e.g. dask-jobqueue's on
  SLURM or PBS: docs/campaigns.md), or ``client=``: a ``distributed.Client`` of the caller's.

On Dask the campaign is sent to every worker once (``scatter``); at most twice as many runs as
there are worker threads are queued at a time, so a long campaign streams (and a Ctrl-C cancels
only those).  A worker that dies takes its runs with it: the scheduler runs them again on
another (``distributed.scheduler.allowed-failures`` times, then the run is recorded ``lost``
and a rerun of the campaign retries it).  Dask is imported only here, when a cluster is used.
"""

from dataclasses import dataclass
import itertools
import json
import os
import sys

from .results import results_of, ResultsFolder
from .run import run_one, RunResult
from .summary import format_summary
from .summary import summary as make_summary
from ..core.errors import SpartError

__all__ = ['run_campaign', 'CampaignResult', 'rerun']


@dataclass
class CampaignResult:
    """
    A finished (or interrupted) campaign.

    ``path``: the results folder; ``results``: :class:`~spart_ros.campaign.run.RunResult` per
    run, in index order; ``summary``: :func:`~spart_ros.campaign.summary.summary`'s dict;
    ``table``: the path of ``runs.csv``; ``ran``: how many runs this call ran.
    """

    path: str
    results: list
    summary: dict
    table: str
    ran: int = 0

    def text(self):
        """Return the summary as text."""
        return format_summary(self.summary)


def _task(campaign, index):
    return run_one(campaign, index)


def _cores():
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


class _Progress:
    """A progress bar with ETA (tqdm, on stderr), or nothing."""

    def __init__(self, enabled, total, done, name):
        self.bar = None
        self.counts = {}
        try:
            from tqdm import tqdm
        except ImportError:  # no bar then (pip install tqdm): the runs are the same
            enabled = False
        if enabled:
            self.bar = tqdm(
                total=total, initial=done, desc=name, unit='run', file=sys.stderr, smoothing=0.1
            )

    def update(self, result):
        self.counts[result.status] = self.counts.get(result.status, 0) + 1
        if self.bar is not None:
            failed = {k: v for k, v in self.counts.items() if k != 'passed'}
            self.bar.set_postfix(failed, refresh=False)
            self.bar.update(1)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def _serial(campaign, pending, record):
    for index in pending:
        record(run_one(campaign, index), None)


def _infrastructure_error(index, err):
    """Return the row of a run whose future failed (the run itself never raises: Dask did)."""
    name = type(err).__name__
    why = f'{name}: {err}'
    if name == 'KilledWorker':
        why = f'its worker died too often ({err}): retried when the campaign runs again'
    return RunResult(index=index, status='lost', error=why)


#: a finished run whose result was lost before it reached the client is run again this often
_FETCH_RETRIES = 3


def _on_dask(campaign, pending, record, client, scheduler, workers):
    import logging
    import warnings

    try:
        from distributed import as_completed, Client, LocalCluster
    except ImportError:
        raise SpartError(
            "Dask's distributed is not installed: pip install dask distributed (or run the "
            'campaign in this process: --workers 1, workers=1)'
        ) from None

    own = []
    log = logging.getLogger('distributed')
    level = log.level
    try:
        if client is None:
            if scheduler:
                client = Client(scheduler)
            else:
                log.setLevel(logging.ERROR)  # a cluster of our own: not its INFO lines
                with warnings.catch_warnings():
                    # its HTTP server (health, metrics) takes another port when 8787 is taken
                    warnings.filterwarnings('ignore', message='Port .* is already in use')
                    cluster = LocalCluster(
                        n_workers=workers or _cores(),
                        threads_per_worker=1,
                        processes=True,
                        dashboard_address=None,
                        silence_logs=logging.ERROR,
                    )
                own.append(cluster)
                client = Client(cluster)
            own.insert(0, client)
        shared = client.scatter(campaign, broadcast=True, hash=False)
        slots = max(2 * sum(client.nthreads().values()), 2)
        queue = iter(pending)
        futures = {}
        fetches = {}  # index -> results lost on their way here so far
        done = as_completed()

        def submit(index):
            # a key of its own per attempt: a cancelled key may still be in the scheduler
            attempt = fetches.get(index, 0)
            key = f'spart-run-{campaign.digest[:16]}-{index}' + (f'-{attempt}' if attempt else '')
            future = client.submit(_task, shared, index, key=key)
            futures[future.key] = (future, index)
            done.add(future)

        for index in itertools.islice(queue, slots):
            submit(index)
        try:
            for future in done:
                _, index = futures.pop(future.key)
                if future.status == 'finished':
                    try:
                        result = future.result()
                    except Exception as err:  # noqa: BLE001 - Dask's: the run never raises
                        # finished, then its result lost with its worker before it was fetched
                        # (Dask cancels the future): the run again, as a lost worker's runs are
                        future.release()
                        fetches[index] = fetches.get(index, 0) + 1
                        if fetches[index] <= _FETCH_RETRIES:
                            submit(index)
                            continue
                        result = _infrastructure_error(index, err)
                else:
                    result = _infrastructure_error(index, future.exception())
                future.release()
                record(result, client)
                following = next(queue, None)
                if following is not None:
                    submit(following)
        except BaseException:
            client.cancel([f for f, _ in futures.values()])
            raise
    finally:
        for item in own:
            item.close()
        log.setLevel(level)


def run_campaign(
    campaign,
    *,
    output=None,
    workers=None,
    scheduler=None,
    client=None,
    progress=True,
    plots=True,
    on_result=None,
):
    """
    Run the runs of ``campaign`` its results folder lacks; return a :class:`CampaignResult`.

    ``campaign``: a :class:`~spart_ros.campaign.spec.Campaign`; ``output``: the results folder
    (default: the campaign's); ``workers``: 1 runs in this process without Dask, N a local
    cluster of N worker processes (default: one per core); ``scheduler``: the address of an
    existing Dask scheduler; ``client``: a ``distributed.Client`` to use (it stays open);
    ``progress``: a progress bar with ETA on stderr; ``plots``: write the plots;
    ``on_result(result, client)``: called after each run is recorded (client None when
    serial).  A Ctrl-C (KeyboardInterrupt) stops it with every finished run recorded: running
    the campaign again continues it.
    """
    folder = ResultsFolder(output or campaign.output, campaign)
    done = folder.finished()
    pending = [i for i in range(campaign.runs) if i not in done]
    bar = _Progress(progress, campaign.runs, campaign.runs - len(pending), campaign.name)
    ran = [0]

    def record(result, dask_client):
        folder.add(result)
        ran[0] += 1
        bar.update(result)
        if on_result is not None:
            on_result(result, dask_client)

    try:
        if pending:
            serial = (
                client is None
                and not scheduler
                and (workers == 1 or len(pending) == 1 or (workers is None and _cores() == 1))
            )
            if serial:
                _serial(campaign, pending, record)
            else:
                _on_dask(campaign, pending, record, client, scheduler, workers)
    finally:
        bar.close()
    return finish(campaign, folder, plots=plots, ran=ran[0])


def finish(campaign, folder, plots=True, ran=0):
    """
    Write the table, the summary and the plots of the runs ``folder`` holds.

    ``campaign``: the campaign; ``folder``: its :class:`~spart_ros.campaign.results.
    ResultsFolder`; ``plots``: draw them; ``ran``: runs this session ran.  Returns the
    :class:`CampaignResult`.
    """
    rows = {i: r for i, r in folder.finished().items() if i < campaign.runs}
    table = folder.write_table(rows)
    results = results_of(rows)
    summary = make_summary(results, campaign)
    with open(os.path.join(folder.path, 'summary.json'), 'w', encoding='utf-8') as f:
        json.dump(summary, f, indent=1, default=float)
    if plots and results:
        from .plots import campaign_plots

        summary['plots'] = campaign_plots(campaign, results, os.path.join(folder.path, 'plots'))
    return CampaignResult(folder.path, results, summary, table, ran)


def rerun(campaign, index, output=None):
    """
    Run run ``index`` of ``campaign`` again, here; return (result, run, recorded).

    ``output``: the results folder (default: the campaign's).  ``result``: its
    :class:`~spart_ros.campaign.run.RunResult` (series kept); ``run``: the
    :class:`~spart_ros.sim.closed_loop.ClosedLoopRun`; ``recorded``: the journal's row of that
    run, or None.  Its series go to ``<output>/rerun/run_<index>.npz``.
    """
    import dataclasses

    import numpy as np

    from .spec import Retention

    everything = dataclasses.replace(campaign, retain=Retention(runs=(int(index),)))
    result, run = run_one(everything, index, keep_run=True)
    folder = output or campaign.output
    recorded = None
    if os.path.exists(os.path.join(folder, 'campaign.json')):
        recorded = ResultsFolder(folder, campaign).finished().get(int(index))
    if result.series is not None:
        path = os.path.join(folder, 'rerun')
        os.makedirs(path, exist_ok=True)
        np.savez_compressed(os.path.join(path, f'run_{int(index):06d}.npz'), **result.series)
    return result, run, recorded
