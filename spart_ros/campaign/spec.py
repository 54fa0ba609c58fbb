"""
The campaign file: a scenario, its dispersions, the metrics and what to keep (YAML).

::

    name: station_keeping            # default: the file's name
    scenario: {demo: SC_3DoF_orbit, plant: rk4}   # spart_ros.campaign.scenario
    runs: 200
    seed: 1                          # the draws depend on (seed, run index) only
    dispersions:                     # spart_ros.campaign.dispersions
      links.Spacecraft.inertia: {distribution: normal, std: 0.05, apply: scale}
    noise: {joint_positions: 1.0e-5} # spart_ros.campaign.sensing
    metrics: {tracking_after: 1.0, settled_after: 10.0}   # spart_ros.campaign.metrics
    success: [station_keeping_max < 0.06]    # default: a demo's bounds
    retain:                          # which runs keep their series (npz), which series
      failures: true                 # every run that did not pass (default true)
      every: 50                      # and every 50th run (default 0: none)
      runs: [0, 7]                   # and these
      series: [t, q, q_ref, base_position]   # default: all of them
      decimate: 10                   # every 10th tick (default 1)
    output: results/station_keeping  # default: <file name>_results beside the file

:func:`load_campaign` reads and checks it all before any run: an error names the key and the
problem.  :attr:`Campaign.digest` identifies what decides the rows (scenario, seed, dispersions,
noise, metrics, success), so a results folder is only continued by the campaign that started it;
``runs`` and ``retain`` may change (more runs extend the campaign).
"""

from dataclasses import dataclass, field
import hashlib
import json
import os

from .dispersions import dispersions as parse_dispersions
from .metrics import MetricOptions, predicate
from .parameters import parameters
from .scenario import resolve_scenario
from .sensing import noise as parse_noise
from ..core.errors import InputError

__all__ = ['Campaign', 'Retention', 'load_campaign', 'CAMPAIGN_KEYS', 'SERIES']

CAMPAIGN_KEYS = (
    'name',
    'scenario',
    'runs',
    'seed',
    'dispersions',
    'noise',
    'metrics',
    'success',
    'retain',
    'output',
)
#: the series a retained run can keep (``true_*``: the plant's state, with sensor noise only)
SERIES = (
    't',
    'q',
    'qd',
    'q_ref',
    'qd_ref',
    'tracking_error',
    'commands',
    'base_position',
    'base_rotation',
    'base_twist',
    'station_keeping',
    'distance_to_target',
    'wheel_speeds',
    'wheel_torques',
    'thruster_commands',
    'propellant',
    'actuation_feasible',
    'states',
    'true_q',
    'true_qd',
    'true_base_position',
    'true_base_rotation',
    'true_base_twist',
)


@dataclass(frozen=True)
class Retention:
    """
    Which runs keep their time series, and which series.

    ``failures``: every run whose status is not 'passed'; ``every``: every k-th run (0: none);
    ``runs``: these indices; ``series``: names of :data:`SERIES`; ``decimate``: every k-th tick.
    """

    failures: bool = True
    every: int = 0
    runs: tuple = ()
    series: tuple = SERIES
    decimate: int = 1

    def keeps(self, index, status):
        """Return whether run ``index`` of ``status`` keeps its series."""
        return (
            index in self.runs
            or (self.every > 0 and index % self.every == 0)
            or (self.failures and status != 'passed')
        )


@dataclass
class Campaign:
    """
    A campaign, read and checked (:func:`load_campaign`).

    ``name``; ``scenario``: the :class:`~spart_ros.campaign.scenario.Scenario`; ``runs``;
    ``seed``; ``dispersions``: the :class:`~spart_ros.campaign.dispersions.Dispersion` list;
    ``noise``: a :class:`~spart_ros.campaign.sensing.Noise`; ``options``:
    :class:`~spart_ros.campaign.metrics.MetricOptions`; ``success``: the predicates;
    ``retain``: a :class:`Retention`; ``output``: the results folder; ``source``: the file;
    ``digest``: what decides the rows, hashed; ``spec``: the campaign file's content.
    """

    name: str
    scenario: object
    runs: int
    seed: int
    dispersions: list
    noise: object
    options: object
    success: tuple
    retain: Retention
    output: str
    source: str = ''
    digest: str = ''
    spec: dict = field(default_factory=dict, repr=False)

    def with_runs(self, runs):
        """Return the same campaign with ``runs`` runs (the digest is the same)."""
        from dataclasses import replace

        return replace(self, runs=_count('runs', runs))


def _count(key, value, minimum=1):
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InputError(f'{key}: expected an integer >= {minimum}, got {value!r}')
    return value


def _retention(spec):
    if spec is None:
        return Retention()
    if not isinstance(spec, dict):
        raise InputError('retain: expected a mapping (failures, every, runs, series, decimate)')
    keys = ('failures', 'every', 'runs', 'series', 'decimate')
    unknown = sorted(set(spec) - set(keys))
    if unknown:
        raise InputError(f'retain: unknown keys {unknown} (known: {list(keys)})')
    failures = spec.get('failures', True)
    if not isinstance(failures, bool):
        raise InputError(f'retain.failures: expected true or false, got {failures!r}')
    runs = spec.get('runs', [])
    if not isinstance(runs, list) or any(
        isinstance(k, bool) or not isinstance(k, int) for k in runs
    ):
        raise InputError(f'retain.runs: expected a list of run indices, got {runs!r}')
    series = spec.get('series', list(SERIES))
    if not isinstance(series, list) or not series:
        raise InputError(f'retain.series: expected a list of series names ({list(SERIES)})')
    unknown = sorted(set(series) - set(SERIES))
    if unknown:
        raise InputError(f'retain.series: unknown series {unknown} (known: {list(SERIES)})')
    return Retention(
        failures=failures,
        every=_count('retain.every', spec.get('every', 0), 0),
        runs=tuple(runs),
        series=tuple(series),
        decimate=_count('retain.decimate', spec.get('decimate', 1)),
    )


def _options(spec, scenario):
    spec = spec or {}
    if not isinstance(spec, dict):
        raise InputError(
            'metrics: expected a mapping (tracking_after, settled_after, envelope_points)'
        )
    keys = ('tracking_after', 'settled_after', 'envelope_points')
    unknown = sorted(set(spec) - set(keys))
    if unknown:
        raise InputError(f'metrics: unknown keys {unknown} (known: {list(keys)})')
    settled = spec.get('settled_after', scenario.settled_after)
    return MetricOptions(
        tracking_after=float(spec.get('tracking_after', 1.0)),
        settled_after=None if settled is None else float(settled),
        envelope_points=_count('metrics.envelope_points', spec.get('envelope_points', 101), 2),
    )


def _digest(scenario, spec):
    import dataclasses

    decisive = {
        'scenario': dataclasses.asdict(scenario),
        **{k: spec.get(k) for k in ('seed', 'dispersions', 'noise', 'metrics', 'success')},
    }
    text = json.dumps(decisive, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode('utf-8')).hexdigest()


def load_campaign(source, **overrides):
    """
    Return the :class:`Campaign` of ``source``: a campaign file (path) or its content (a dict).

    ``overrides``: top-level keys replacing the file's (e.g. ``runs=10``, ``output=...``).
    Relative paths of a file start at its folder (of a mapping: the current folder).
    InputError naming the key of a bad or missing value.
    """
    import yaml

    if isinstance(source, dict):
        spec, path, folder = dict(source), '', os.getcwd()
    else:
        path = os.fspath(source)
        try:
            with open(path, encoding='utf-8') as f:
                spec = yaml.safe_load(f)
        except OSError as err:
            raise InputError(f'campaign file {path!r}: {err.strerror}') from None
        except yaml.YAMLError as err:
            raise InputError(f'campaign file {path!r} is not valid YAML: {err}') from None
        if not isinstance(spec, dict):
            raise InputError(f'campaign file {path!r}: expected a mapping ({list(CAMPAIGN_KEYS)})')
        folder = os.path.dirname(os.path.abspath(path))
    spec.update({k: v for k, v in overrides.items() if v is not None})
    unknown = sorted(set(spec) - set(CAMPAIGN_KEYS))
    if unknown:
        raise InputError(f'campaign: unknown keys {unknown} (known: {list(CAMPAIGN_KEYS)})')
    if 'scenario' not in spec:
        raise InputError('campaign: a scenario is needed (scenario: {demo: ...} or {urdf: ...})')
    if 'runs' not in spec:
        raise InputError('campaign: the number of runs is needed (runs: N)')
    scenario = resolve_scenario(spec['scenario'], folder)
    params = parameters(scenario)
    dispersion_list = parse_dispersions(spec.get('dispersions'), params)
    options = _options(spec.get('metrics'), scenario)
    success = spec.get('success')
    if success is None:
        # a demo's bounds, but not those this duration cannot measure (e.g. a shortened run)
        start = {
            'tracking_rms': options.tracking_after,
            'station_keeping_settled': options.settled_after,
        }
        success = [
            f'{m} < {b!r}'
            for m, b in scenario.bounds.items()
            if start.get(m, 0.0) is not None and start.get(m, 0.0) < scenario.duration
        ]
        spec_success = None
    else:
        spec_success = success
    if not isinstance(success, list):
        raise InputError(f'success: expected a list of predicates, got {success!r}')
    stem = os.path.splitext(os.path.basename(path))[0] if path else 'campaign'
    name = str(spec.get('name') or stem)
    output = spec.get('output') or os.path.join(folder, f'{stem}_results')
    if not os.path.isabs(output):
        output = os.path.join(folder, output)
    spec['success'] = spec_success if spec_success is not None else success
    return Campaign(
        name=name,
        scenario=scenario,
        runs=_count('runs', spec['runs']),
        seed=_count('seed', spec.get('seed', 0), 0),
        dispersions=dispersion_list,
        noise=parse_noise(spec.get('noise'), list(_plant_joints(scenario)), scenario.floating),
        options=options,
        success=tuple(predicate(p) for p in success),
        retain=_retention(spec.get('retain')),
        output=output,
        source=os.path.abspath(path) if path else '',
        digest=_digest(scenario, spec),
        spec=spec,
    )


def _plant_joints(scenario):
    """Return the joints the plant reports: the robot's, then the reaction wheels'."""
    names = list(scenario.joint_names)
    wheels = (scenario.actuators or {}).get('reaction_wheels') or {}
    return names + [str(w.get('name')) for w in wheels.get('wheels') or []]
