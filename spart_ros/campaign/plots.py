"""
A campaign's plots (PNG, matplotlib's Agg backend: no display needed).

- ``histograms.png``: each metric's histogram over the runs, passed and not passed stacked;
- ``envelopes.png``: each envelope series (tracking error, station keeping, distance to the
  target) over time: the median, the 5-95 % band and the extremes over the runs;
- ``sensitivity_<metric>.png``: the metric against each value drawn, a dot per run (the
  success predicates' metrics, or the first metric measured when there are none).
"""

import os

import numpy as np

from .metrics import ENVELOPES, METRICS

__all__ = ['campaign_plots', 'MAX_PANELS']

#: panels of one sensitivity figure (the first draws' columns when there are more)
MAX_PANELS = 36


def _pyplot():
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    return plt


def _grid(plt, n, width=3.2, height=2.4):
    cols = min(n, 4)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(
        rows, cols, figsize=(width * cols, 0.8 + height * rows), squeeze=False
    )
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, axes.flat


def _save(plt, fig, path):
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def histograms(results, path, title):
    """
    Write the metrics' histograms of ``results`` to ``path``; return it (None: no metric).

    ``results``: RunResult list; ``title``: the figure's.
    """
    names = [m for m in METRICS if any(np.isfinite(r.metrics.get(m, np.nan)) for r in results)]
    if not names:
        return None
    plt = _pyplot()
    fig, axes = _grid(plt, len(names))
    ok = np.array([r.success for r in results])
    for ax, name in zip(axes, names):
        v = np.array([r.metrics.get(name, np.nan) for r in results], dtype=float)
        finite = np.isfinite(v)
        ax.hist(
            [v[finite & ok], v[finite & ~ok]],
            bins=min(30, max(5, int(np.sqrt(finite.sum())))),
            stacked=True,
            label=['passed', 'not passed'],
            color=['tab:blue', 'tab:red'],
        )
        unit = METRICS[name][0]
        ax.set_xlabel(f'{name} [{unit}]' if unit else name, fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0].legend(fontsize=7)
    fig.suptitle(title)
    return _save(plt, fig, path)


def envelopes(results, duration, path, title):
    """
    Write the envelope series of ``results`` over time to ``path``; return it (None: none).

    ``duration`` [s]: the runs' length (the samples are spread evenly over it).
    """
    names = [n for n in ENVELOPES if any(n in r.envelope for r in results)]
    if not names:
        return None
    plt = _pyplot()
    fig, axes = plt.subplots(len(names), 1, figsize=(9, 0.8 + 2.4 * len(names)), squeeze=False)
    for ax, name in zip(axes[:, 0], names):
        v = np.array([r.envelope[name] for r in results if name in r.envelope], dtype=float)
        t = np.linspace(0.0, duration, v.shape[1])
        with np.errstate(all='ignore'):
            p = np.nanpercentile(v, [0, 5, 50, 95, 100], axis=0)
        ax.fill_between(t, p[0], p[4], alpha=0.2, color='tab:blue', label='min - max')
        ax.fill_between(t, p[1], p[3], alpha=0.4, color='tab:blue', label='5 - 95 %')
        ax.plot(t, p[2], color='tab:blue', label='median')
        unit, what = ENVELOPES[name]
        ax.set_ylabel(f'{name} [{unit}]', fontsize=8)
        ax.set_title(f'{what}, {len(v)} runs', fontsize=9)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc='upper right')
    axes[-1, 0].set_xlabel('simulated time [s]')
    fig.suptitle(title)
    return _save(plt, fig, path)


def sensitivity(results, metric, path, title):
    """
    Write ``metric`` against each drawn value of ``results`` to ``path``; return it (or None).

    ``metric``: a metric name; one panel per draw column (at most :data:`MAX_PANELS`).
    """
    if not results or not results[0].draws:
        return None
    cols = list(results[0].draws)[:MAX_PANELS]
    y = np.array([r.metrics.get(metric, np.nan) for r in results], dtype=float)
    if not np.isfinite(y).any():
        return None
    plt = _pyplot()
    fig, axes = _grid(plt, len(cols), width=2.6, height=2.0)
    ok = np.array([r.success for r in results])
    for ax, col in zip(axes, cols):
        x = np.array([r.draws.get(col, np.nan) for r in results], dtype=float)
        ax.plot(x[ok], y[ok], '.', ms=3, color='tab:blue')
        ax.plot(x[~ok], y[~ok], '.', ms=3, color='tab:red')
        ax.set_xlabel(col, fontsize=6)
        ax.tick_params(labelsize=6)
    unit = METRICS[metric][0]
    fig.suptitle(f'{title}: {metric}' + (f' [{unit}]' if unit else '') + ' (red: not passed)')
    return _save(plt, fig, path)


def campaign_plots(campaign, results, folder):
    """
    Write the campaign's plots into ``folder``; return their paths.

    ``campaign``: the Campaign; ``results``: its RunResult list.
    """
    os.makedirs(folder, exist_ok=True)
    title = campaign.name
    paths = [
        histograms(results, os.path.join(folder, 'histograms.png'), title),
        envelopes(
            results, campaign.scenario.duration, os.path.join(folder, 'envelopes.png'), title
        ),
    ]
    metrics = list(dict.fromkeys(p.metric for p in campaign.success))
    if not metrics:
        metrics = [
            m for m in METRICS if any(np.isfinite(r.metrics.get(m, np.nan)) for r in results)
        ][:1]
    for m in metrics:
        paths.append(sensitivity(results, m, os.path.join(folder, f'sensitivity_{m}.png'), title))
    return [p for p in paths if p]
