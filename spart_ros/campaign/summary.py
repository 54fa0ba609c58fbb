"""
A campaign's summary: the success rate with its confidence interval, each metric's spread.

The success rate is the share of runs that passed (every run counts: one that raised, diverged
or faulted is a failure of the design as much as one that missed a bound), with its exact
(Clopper-Pearson) two-sided interval: at 95 %, the true rate lies in it for 95 % of campaigns,
whatever the rate.  Each metric: its count of finite values, mean, std and percentiles
(0, 1, 5, 50, 95, 99, 100).
"""

import numpy as np

from .metrics import METRICS

__all__ = ['summary', 'success_interval', 'format_summary', 'PERCENTILES']

PERCENTILES = (0, 1, 5, 50, 95, 99, 100)


def success_interval(successes, runs, confidence=0.95):
    """
    Return (low, high): the Clopper-Pearson interval of a success rate.

    ``successes`` of ``runs`` (integers, runs >= 1); ``confidence`` in (0, 1).
    """
    from scipy.special import betaincinv  # the beta distribution's quantiles

    k, n, a = int(successes), int(runs), 1.0 - float(confidence)
    low = 0.0 if k == 0 else float(betaincinv(k, n - k + 1, a / 2))
    high = 1.0 if k == n else float(betaincinv(k + 1, n - k, 1 - a / 2))
    return low, high


def summary(results, campaign, confidence=0.95):
    """
    Return the summary of a campaign's ``results`` (a JSON-able dict).

    ``results``: :class:`~spart_ros.campaign.run.RunResult` list; ``campaign``: the
    :class:`~spart_ros.campaign.spec.Campaign`; ``confidence`` of the success-rate interval.
    """
    n = len(results)
    statuses = {}
    for r in results:
        statuses[r.status] = statuses.get(r.status, 0) + 1
    passed = statuses.get('passed', 0)
    low, high = success_interval(passed, n, confidence) if n else (0.0, 1.0)
    spread = {}
    for name in METRICS:
        v = np.array([r.metrics.get(name, np.nan) for r in results], dtype=float)
        v = v[np.isfinite(v)]
        if not v.size:
            continue
        spread[name] = {
            'unit': METRICS[name][0],
            'finite': int(v.size),
            'mean': float(v.mean()),
            'std': float(v.std(ddof=1)) if v.size > 1 else 0.0,
            **{f'p{p}': float(x) for p, x in zip(PERCENTILES, np.percentile(v, PERCENTILES))},
        }
    cpu = np.array([r.cpu_s for r in results], dtype=float)
    return {
        'name': campaign.name,
        'scenario': campaign.scenario.label,
        'runs': n,
        'planned': campaign.runs,
        'statuses': statuses,
        'success': [str(p) for p in campaign.success],
        'success_rate': passed / n if n else float('nan'),
        'confidence': confidence,
        'success_interval': [low, high],
        'metrics': spread,
        'cpu_s_per_run': float(cpu.mean()) if n else float('nan'),
        'cpu_s_total': float(cpu.sum()),
        'failures': [
            {'index': r.index, 'status': r.status, 'error': r.error}
            for r in results
            if r.status != 'passed'
        ][:20],
    }


def format_summary(s):
    """Return the summary ``s`` (:func:`summary`) as text (what the command line prints)."""
    lines = [
        f'campaign {s["name"]}: {s["scenario"]}',
        f'  {s["runs"]} of {s["planned"]} runs: '
        + ', '.join(f'{k} {v}' for k, v in sorted(s['statuses'].items())),
        f'  success: {" and ".join(s["success"]) or "ran without error, NaN or fault"}',
    ]
    if s['runs']:
        low, high = s['success_interval']
        lines.append(
            f'  success rate {s["success_rate"] * 100:.1f} % ({s["confidence"] * 100:g} % '
            f'interval {low * 100:.1f} - {high * 100:.1f} %)'
        )
    if s['metrics']:
        lines.append(
            f'  {"metric":26s} {"unit":6s} {"mean":>10s} {"p5":>10s} {"p50":>10s} {"p95":>10s} '
            f'{"max":>10s}'
        )
        for name, m in s['metrics'].items():
            lines.append(
                f'  {name:26s} {m["unit"]:6s} '
                + ' '.join(f'{m[k]:10.4g}' for k in ('mean', 'p5', 'p50', 'p95', 'p100'))
            )
    for f in s['failures'][:5]:
        lines.append(f'  run {f["index"]}: {f["status"]}: {f["error"]}')
    lines.append(f'  CPU {s["cpu_s_total"]:.1f} s in all, {s["cpu_s_per_run"]:.2f} s per run')
    return '\n'.join(lines)
