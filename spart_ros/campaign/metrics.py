"""
A run's metrics, the success predicates on them, and the series their envelopes are drawn from.

Metrics (NaN where the run has nothing to measure, e.g. station keeping on a fixed base):

- ``tracking_rms``: the largest RMS over the joints of the joint tracking error (reference -
  true position) from ``tracking_after`` on [rad]; ``tracking_max``: its largest absolute
  value over that time [rad];
- ``station_keeping_max``, ``station_keeping_final``: the base's largest and last distance from
  where it started [m] (a base the controller holds: free_flying, or base actuators);
  ``station_keeping_settled``: its largest from ``settled_after`` on [m];
- ``attitude_change_max``: the base attitude's largest change from the start [deg];
- ``propellant``: the thrusters' propellant used [kg]; ``wheel_speed_max``: the reaction
  wheels' largest speed [rad/s]; ``wrench_exerted_share``: the share of the ticks whose base
  wrench the actuators exerted;
- ``trajectory_succeeded``: 1 if every trajectory goal succeeded, else 0;
- ``distance_to_target_min``, ``distance_to_target_final``: the smallest and last distance to
  the target [m] (a scenario with a target, whose run reports ``distance_to_target``).

Success predicates (``success:`` in the campaign file) read ``<metric> <op> <number>`` with
``<``, ``<=``, ``>``, ``>=``; a NaN metric fails its predicate.  A demo's bounds are its default
predicates.  Envelope series (:func:`envelope_series`): the tracking error (largest over the
joints), the station-keeping distance and the distance to the target over time.
"""

from dataclasses import dataclass
import operator
import re
import warnings

import numpy as np

from ..core.errors import InputError

__all__ = [
    'METRICS',
    'ENVELOPES',
    'MetricOptions',
    'Predicate',
    'predicate',
    'metrics',
    'envelope_series',
]

#: metric name: (unit, what)
METRICS = {
    'tracking_rms': ('rad', 'largest RMS joint tracking error'),
    'tracking_max': ('rad', 'largest joint tracking error'),
    'station_keeping_max': ('m', "base's largest distance from its start"),
    'station_keeping_final': ('m', "base's final distance from its start"),
    'station_keeping_settled': ('m', "base's largest distance from its start once settled"),
    'attitude_change_max': ('deg', "base attitude's largest change"),
    'propellant': ('kg', 'propellant used'),
    'wheel_speed_max': ('rad/s', "wheels' largest speed"),
    'wrench_exerted_share': ('', 'share of ticks with the base wrench exerted'),
    'trajectory_succeeded': ('', 'every trajectory goal succeeded (1) or not (0)'),
    'distance_to_target_min': ('m', 'smallest distance to the target'),
    'distance_to_target_final': ('m', 'final distance to the target'),
}
#: the series whose envelopes over the runs are plotted: name: (unit, what)
ENVELOPES = {
    'tracking_error': ('rad', 'joint tracking error (largest over the joints)'),
    'station_keeping': ('m', "base's distance from its start"),
    'distance_to_target': ('m', 'distance to the target'),
}
_OPS = {'<': operator.lt, '<=': operator.le, '>': operator.gt, '>=': operator.ge}
_PREDICATE = re.compile(r'^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(<=|>=|<|>)\s*(\S+)\s*$')


@dataclass(frozen=True)
class MetricOptions:
    """
    How the metrics are measured.

    ``tracking_after`` [s]: the tracking error counts from this control time on (default 1 s,
    as the demo's); ``settled_after`` [s]: ``station_keeping_settled`` counts from it (None: not
    measured); ``envelope_points``: samples of each envelope series over the run (default 101).
    """

    tracking_after: float = 1.0
    settled_after: float = None
    envelope_points: int = 101


@dataclass(frozen=True)
class Predicate:
    """
    One success predicate: ``metric`` ``op`` ``bound``.

    ``metric``: a key of :data:`METRICS`; ``op``: '<', '<=', '>' or '>='; ``bound``: a number.
    """

    metric: str
    op: str
    bound: float

    def holds(self, values):
        """Return whether it holds for the metrics ``values`` ({name: float}; NaN fails)."""
        v = values.get(self.metric, float('nan'))
        return bool(np.isfinite(v) and _OPS[self.op](v, self.bound))

    def __str__(self):
        return f'{self.metric} {self.op} {self.bound:g}'


def predicate(text):
    """
    Return the :class:`Predicate` of ``text`` (e.g. ``'station_keeping_max < 0.06'``).

    InputError naming an unknown metric or a malformed predicate.
    """
    match = _PREDICATE.match(str(text))
    if not match:
        raise InputError(f'success: {text!r}: expected "<metric> <op> <number>", op < <= > >=')
    name, op, bound = match.groups()
    if name not in METRICS:
        raise InputError(f'success: {text!r}: unknown metric {name!r} (metrics: {list(METRICS)})')
    try:
        value = float(bound)
    except ValueError:
        raise InputError(f'success: {text!r}: {bound!r} is not a number') from None
    return Predicate(name, op, value)


def _holds_base(run):
    mode = run.controller.settings.mode if run.controller is not None else ''
    return mode == 'free_flying' or run.propellant is not None


def _target_distance(run):
    """Return the run's distance to its target (k,), or None (no target)."""
    for name in ('distance_to_target', 'target_distance'):
        d = getattr(run, name, None)
        if d is not None:
            return np.asarray(d, dtype=float)
    return None


def _nanmax(x):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', RuntimeWarning)  # all NaN: NaN
        return float(np.nanmax(x)) if np.size(x) else float('nan')


def _series(run, truth):
    """Return (t, q, base_position, base_rotation): the plant's own when noise hid them."""
    if truth is None:
        return run.t, run.q, run.base_position, run.base_rotation
    return run.t, truth.q, truth.base_position, truth.base_rotation


def metrics(run, options, truth=None):
    """
    Return {metric: float} of the run (:data:`METRICS`; NaN where not measured).

    ``run``: a :class:`~spart_ros.sim.closed_loop.ClosedLoopRun`; ``options``:
    :class:`MetricOptions`; ``truth``: the plant's state when the readings had noise
    (:class:`~spart_ros.campaign.sensing.Truth`).
    """
    t, q, p, R = _series(run, truth)
    out = dict.fromkeys(METRICS, float('nan'))
    err = run.q_ref - q
    after = t >= options.tracking_after
    if after.any() and not np.all(np.isnan(err[after])):
        e = err[after]
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', RuntimeWarning)
            out['tracking_rms'] = _nanmax(np.sqrt(np.nanmean(e * e, axis=0)))
        out['tracking_max'] = _nanmax(np.abs(e))
    if run.plant is not None and run.plant.floating:
        if _holds_base(run):
            d = np.linalg.norm(p - p[0], axis=1)
            out['station_keeping_max'] = float(d.max())
            out['station_keeping_final'] = float(d[-1])
            if options.settled_after is not None:
                out['station_keeping_settled'] = _nanmax(d[t >= options.settled_after])
        cos = (np.einsum('ji,kji->k', R[0], R) - 1.0) / 2.0
        out['attitude_change_max'] = float(np.degrees(np.arccos(np.clip(cos, -1, 1))).max())
    if run.propellant is not None:
        out['propellant'] = float(run.propellant[-1])
        out['wrench_exerted_share'] = float(run.actuation_feasible[1:].mean())
        if run.wheel_speeds.size:
            out['wheel_speed_max'] = float(np.abs(run.wheel_speeds).max())
    if run.goals:
        out['trajectory_succeeded'] = float(all(g.status == 'succeeded' for g in run.goals))
    d = _target_distance(run)
    if d is not None and d.size:
        out['distance_to_target_min'] = -_nanmax(-d)
        out['distance_to_target_final'] = float(d[-1])
    return out


def envelope_series(run, options, truth=None):
    """
    Return {series: list of floats} of :data:`ENVELOPES`, sampled on the run's envelope grid.

    ``options.envelope_points`` samples from the first to the last tick (the nearest tick's
    value); the series a run does not have are left out.  ``run``, ``truth``: as
    :func:`metrics`.
    """
    t, q, p, _ = _series(run, truth)
    n = max(int(options.envelope_points), 2)
    idx = np.rint(np.linspace(0, len(t) - 1, n)).astype(int)
    out = {}
    err = np.abs(run.q_ref - q)
    if not np.all(np.isnan(err)):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', RuntimeWarning)
            out['tracking_error'] = np.nanmax(err[idx], axis=1)
    if run.plant is not None and run.plant.floating and _holds_base(run):
        out['station_keeping'] = np.linalg.norm(p[idx] - p[0], axis=1)
    d = _target_distance(run)
    if d is not None and d.size:
        out['distance_to_target'] = d[idx]
    return {k: [float(x) for x in v] for k, v in out.items()}
