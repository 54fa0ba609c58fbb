r"""
Monte Carlo campaigns from the command line: ``python -m spart_ros.campaign campaign.yaml``.

::

    python -m spart_ros.campaign campaign.yaml                 # a local Dask cluster
    python -m spart_ros.campaign campaign.yaml --workers 1     # in this process, without Dask
    python -m spart_ros.campaign campaign.yaml --scheduler tcp://host:8786   # an existing cluster
    python -m spart_ros.campaign campaign.yaml --rerun 17      # run 17 again, here: same row?

Running it again continues the campaign (the runs its results folder holds are skipped);
``--runs N`` extends (or shortens) it.  It prints the summary (the success rate with its
confidence interval, each metric's percentiles) and where the results are (the table
``runs.csv``, the retained series, ``summary.json``, the plots).  ``--rerun K`` runs run K in this
process, prints its row against the recorded one and keeps its series
(``<output>/rerun/run_K.npz``; ``--plots`` also its tracking, effort and base plots).

Exit code 0; 1 when ``--rerun`` differs from the recorded row; 2 for a bad argument or campaign
file (one line naming it); 130 when interrupted (the finished runs are kept: run it again).
"""

import argparse
import math
import sys

__all__ = ['main']


def _parser():
    ap = argparse.ArgumentParser(
        prog='python -m spart_ros.campaign',
        description=__doc__.split('\n\n')[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    ap.add_argument('campaign', help='the campaign file (YAML; docs/campaigns.md)')
    ap.add_argument(
        '--workers', type=int, help='1: in this process without Dask; N: a local cluster of N'
    )
    ap.add_argument('--scheduler', help='address of an existing Dask scheduler (tcp://host:8786)')
    ap.add_argument('--output', help="results folder (default: the file's output, or beside it)")
    ap.add_argument('--runs', type=int, help="number of runs (default: the file's)")
    ap.add_argument('--rerun', type=int, metavar='K', help='run run K again here and compare')
    ap.add_argument('--plots', action='store_true', help="with --rerun: the run's own plots")
    ap.add_argument('--no-plots', action='store_true', help='no campaign plots')
    ap.add_argument('--quiet', action='store_true', help='no progress bar')
    return ap


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def _differences(row, recorded):
    out = []
    for key in ('status', 'error'):
        if row[key] != recorded.get(key):
            out.append(f'{key}: {row[key]!r} (recorded {recorded.get(key)!r})')
    for group in ('draws', 'metrics'):
        mine, theirs = row[group], recorded.get(group, {})
        for k in sorted(set(mine) | set(theirs)):
            a, b = mine.get(k), theirs.get(k)
            if not _same(a, b):
                out.append(f'{k}: {a!r} (recorded {b!r})')
    return out


def _rerun(campaign, args):
    from .engine import rerun

    result, run, recorded = rerun(campaign, args.rerun, args.output)
    row = result.row()
    print(f'run {args.rerun}: {row["status"]}' + (f': {row["error"]}' if row['error'] else ''))
    for group in ('draws', 'metrics'):
        for k, v in row[group].items():
            print(f'  {k:44s} {v!r}')
    folder = args.output or campaign.output
    print(f'  series: {folder}/rerun/run_{args.rerun:06d}.npz')
    if args.plots and run is not None:
        for path in run.plots(f'{folder}/rerun', f'run_{args.rerun:06d}'):
            print(f'  wrote {path}')
    if recorded is None:
        print('  no recorded row of this run to compare with')
        return 0
    diff = _differences(row, recorded)
    if diff:
        print('  DIFFERS from the recorded row:')
        for d in diff:
            print(f'    {d}')
        return 1
    print('  identical to the recorded row (status, error, every draw and metric, bit for bit)')
    return 0


def main(argv=None):
    args = _parser().parse_args(argv)
    from .engine import run_campaign
    from .spec import load_campaign
    from ..core.errors import SpartError

    try:
        campaign = load_campaign(args.campaign, output=args.output)
        if args.runs is not None:
            campaign = campaign.with_runs(args.runs)
        if args.workers is not None and args.workers < 1:
            raise ValueError(f'--workers: expected an integer >= 1, got {args.workers}')
        if args.rerun is not None:
            if not 0 <= args.rerun < campaign.runs:
                raise ValueError(f'--rerun: expected a run index in 0..{campaign.runs - 1}')
            return _rerun(campaign, args)
        result = run_campaign(
            campaign,
            workers=args.workers,
            scheduler=args.scheduler,
            progress=not args.quiet,
            plots=not args.no_plots,
        )
    except KeyboardInterrupt:
        print(
            'interrupted: the finished runs are recorded; run the same command to continue',
            file=sys.stderr,
        )
        return 130
    except (SpartError, OSError, ValueError) as err:
        print(f'error: {err}', file=sys.stderr)
        return 2
    print(result.text())
    print(f'  results: {result.path} (runs.csv, summary.json, series/, plots/)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
