"""
A campaign's results folder: the journal of finished runs, the table, the retained series.

::

    <output>/campaign.json      the campaign (its digest: a folder continues only its campaign)
    <output>/runs.jsonl         the journal: one JSON line per finished run, appended and flushed
                                as each run finishes (a crash or Ctrl-C loses no finished run)
    <output>/runs.csv           the table, one row per run in index order (written at the end)
    <output>/series/run_<index>.npz   the retained runs' series (written before their line)
    <output>/summary.json, plots/     (spart_ros.campaign.summary, .plots)

A journal line is a row (:meth:`~spart_ros.campaign.run.RunResult.row`); the table's columns:
``index``, ``status``, ``success``, the draws, the metrics, ``cpu_s``, ``wall_s``, ``worker``,
``retained``, ``error``.  Numbers are written with Python's ``repr`` (the shortest text that
reads back to the same float), so a table read back is the table computed, bit for bit.
"""

import csv
import json
import os

import numpy as np

from .dispersions import columns as draw_columns
from .metrics import METRICS
from .run import RunResult
from ..core.errors import InputError

__all__ = ['ResultsFolder', 'read_table', 'TABLE_TAIL']

#: the table's last columns (after the draws and the metrics)
TABLE_TAIL = ('cpu_s', 'wall_s', 'worker', 'retained', 'error')


class ResultsFolder:
    """
    The results folder of ``campaign`` at ``path`` (created, or continued).

    ``path``: the folder; ``campaign``: a :class:`~spart_ros.campaign.spec.Campaign`.  InputError
    when the folder holds the results of another campaign (another digest).
    """

    def __init__(self, path, campaign):
        self.path = os.path.abspath(path)
        self.campaign = campaign
        os.makedirs(os.path.join(self.path, 'series'), exist_ok=True)
        meta = os.path.join(self.path, 'campaign.json')
        if os.path.exists(meta):
            with open(meta, encoding='utf-8') as f:
                digest = json.load(f).get('digest')
            if digest != campaign.digest:
                raise InputError(
                    f'{self.path} holds the results of another campaign (its scenario, seed, '
                    'dispersions, noise, metrics or success differ from this one): give another '
                    'output folder, or delete that one'
                )
        with open(meta, 'w', encoding='utf-8') as f:
            json.dump(
                {
                    'name': campaign.name,
                    'digest': campaign.digest,
                    'source': campaign.source,
                    'runs': campaign.runs,
                    'columns': draw_columns(campaign.dispersions),
                    'spec': campaign.spec,
                },
                f,
                indent=1,
                default=repr,
            )
        self.journal = os.path.join(self.path, 'runs.jsonl')

    def finished(self):
        """
        Return {index: row} of the runs the journal holds (runs ``lost`` are not finished).

        A line cut short by a crash is dropped, and cut off the file (so that the next line
        starts on a line of its own); a run found twice keeps its first row.
        """
        out = {}
        if not os.path.exists(self.journal):
            return out
        with open(self.journal, 'rb') as f:
            data = f.read()
        end = data.rfind(b'\n') + 1
        if end < len(data):
            with open(self.journal, 'r+b') as f:
                f.truncate(end)
        for line in data[:end].splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            if row.get('status') != 'lost':
                out.setdefault(int(row['index']), row)
        return out

    def series_path(self, index):
        """Return the path of run ``index``'s series (npz)."""
        return os.path.join(self.path, 'series', f'run_{int(index):06d}.npz')

    def add(self, result):
        """
        Record a finished run: its series (if retained), then its journal line, flushed to disk.

        ``result``: a :class:`~spart_ros.campaign.run.RunResult`.
        """
        if result.series is not None:
            tmp = self.series_path(result.index) + '.tmp.npz'
            np.savez_compressed(tmp, **result.series)
            os.replace(tmp, self.series_path(result.index))
        line = json.dumps(result.row(), default=float) + '\n'
        with open(self.journal, 'a', encoding='utf-8') as f:
            f.write(line)
            f.flush()
            os.fsync(f.fileno())

    def columns(self):
        """Return the table's columns."""
        return (
            ['index', 'status', 'success']
            + draw_columns(self.campaign.dispersions)
            + list(METRICS)
            + list(TABLE_TAIL)
        )

    def write_table(self, rows):
        """
        Write ``runs.csv`` from ``rows`` ({index: row}) in index order; return its path.

        Numbers as ``repr`` (exact), NaN as ``nan``.
        """
        path = os.path.join(self.path, 'runs.csv')
        cols = self.columns()
        with open(path + '.tmp', 'w', newline='', encoding='utf-8') as f:
            w = csv.writer(f)
            w.writerow(cols)
            for index in sorted(rows):
                w.writerow([_text(v) for v in table_row(rows[index], cols)])
        os.replace(path + '.tmp', path)
        return path


def table_row(row, cols):
    """Return the values of journal row ``row`` in the table's columns ``cols``."""
    draws, metrics = row.get('draws', {}), row.get('metrics', {})
    out = []
    for c in cols:
        if c == 'success':
            out.append(row['status'] == 'passed')
        elif c in row and c not in ('draws', 'metrics'):
            out.append(row[c])
        elif c in draws:
            out.append(draws[c])
        else:
            out.append(metrics.get(c, float('nan')))
    return out


def _text(v):
    if isinstance(v, bool):
        return 'true' if v else 'false'
    if isinstance(v, float):
        return repr(v)
    return str(v)


def read_table(path):
    """
    Return (columns, rows) of a ``runs.csv``: rows as lists, numbers as floats.

    ``path``: the file.  ``index`` as int, ``success``/``retained`` as bool, text columns as text.
    """
    with open(path, newline='', encoding='utf-8') as f:
        reader = csv.reader(f)
        cols = next(reader)
        rows = []
        for r in reader:
            row = []
            for c, v in zip(cols, r):
                if c == 'index':
                    row.append(int(v))
                elif c in ('success', 'retained'):
                    row.append(v == 'true')
                elif c in ('status', 'worker', 'error'):
                    row.append(v)
                else:
                    row.append(float(v))
            rows.append(row)
    return cols, rows


def results_of(rows):
    """Return the :class:`~spart_ros.campaign.run.RunResult` of each row of ``rows``, by index."""
    return [RunResult.from_row(rows[i]) for i in sorted(rows)]
