"""
One run of a campaign: draw, build, simulate, measure; never raise.

:func:`run_one` is what every worker executes: its result depends on (campaign, index) only, so
any worker, in any order, at any time (a rerun, ``--rerun K``) gives the same row.  A run that
raises, diverges (NaN) or ends in a controller fault is a row with its status and error, not an
exception.

Status: ``passed`` (every success predicate holds), ``failed`` (one does not), ``fault`` (the
controller faulted or halted after it began commanding), ``nan`` (the simulation diverged or a
series is not finite), ``error`` (the run raised: a value the model or the settings refuse...),
and, from the engine, ``lost`` (its worker died too often: retried when the campaign resumes).
"""

from dataclasses import dataclass, field
import os
import socket
import time
import traceback

import numpy as np

from .dispersions import columns as draw_columns
from .dispersions import draw
from .distributions import stream
from .metrics import envelope_series, METRICS, metrics
from .parameters import run_inputs
from .sensing import SensedPlant
from ..core.errors import SpartError

__all__ = ['RunResult', 'run_one', 'STATUSES', 'simulation']

STATUSES = ('passed', 'failed', 'fault', 'nan', 'error', 'lost')


@dataclass
class RunResult:
    """
    One run's row and what it keeps.

    ``index``; ``status`` (:data:`STATUSES`); ``error``: why it did not pass ('' when it did);
    ``draws``: {column: value drawn}; ``metrics``: {metric: value}; ``cpu_s``, ``wall_s``: the
    run's time; ``worker``: host:pid that ran it; ``envelope``: {series: samples}; ``series``:
    {name: array} when retained, else None.
    """

    index: int
    status: str
    error: str = ''
    draws: dict = field(default_factory=dict)
    metrics: dict = field(default_factory=dict)
    cpu_s: float = 0.0
    wall_s: float = 0.0
    worker: str = ''
    envelope: dict = field(default_factory=dict)
    series: dict = None

    @property
    def success(self):
        return self.status == 'passed'

    def row(self):
        """Return the row as a JSON-able dict (the journal's line, without the series)."""
        return {
            'index': self.index,
            'status': self.status,
            'error': self.error,
            'draws': self.draws,
            'metrics': self.metrics,
            'cpu_s': self.cpu_s,
            'wall_s': self.wall_s,
            'worker': self.worker,
            'retained': self.series is not None,
            'envelope': self.envelope,
        }

    @classmethod
    def from_row(cls, row):
        """Return the result of a journal row (its series, if any, are in the results folder)."""
        return cls(
            index=int(row['index']),
            status=row['status'],
            error=row.get('error', ''),
            draws=dict(row.get('draws', {})),
            metrics=dict(row.get('metrics', {})),
            cpu_s=float(row.get('cpu_s', 0.0)),
            wall_s=float(row.get('wall_s', 0.0)),
            worker=row.get('worker', ''),
            envelope=dict(row.get('envelope', {})),
        )


def _controller_view(campaign, inputs, plant, rng):
    """Return the plant as the controller sees it (nominal model, noisy sensors)."""
    from ..core.actuators import add_wheels, BaseActuators

    scenario = campaign.scenario
    robot = description = None
    if inputs.model_dispersed:
        description = scenario.urdf
        if scenario.actuators is not None:
            nominal = BaseActuators.from_dict(scenario.actuators, source='scenario.actuators')
            description = add_wheels(scenario.urdf, nominal)
        robot = scenario.robot(description)
    return SensedPlant(plant, campaign.noise, rng, robot=robot, description=description)


def simulation(campaign, index, views=None):
    """
    Return (run, truth, draws) of run ``index`` of ``campaign``: the closed loop (may raise).

    ``run``: the :class:`~spart_ros.sim.closed_loop.ClosedLoopRun`; ``truth``: the plant's own
    state when the readings had noise (else None); ``draws``: {column: value}.  ``views``: a
    list the plant (as the controller sees it) is appended to once built, for the caller to
    look at when the run raises.
    """
    from ..core.actuators import BaseActuators
    from ..sim.closed_loop import _plant, simulate

    scenario = campaign.scenario
    values, draws = draw(campaign.dispersions, campaign.seed, index)
    inputs = run_inputs(scenario, values)
    plant = _plant(
        scenario.plant,
        inputs.urdf,
        scenario.base,
        scenario.gravity,
        scenario.dt,
        inputs.initial,
        None,
        None,
        scenario.integrator,
        orbit=inputs.orbit,
        actuators=inputs.actuators,
        target=None if scenario.target is None else scenario.target['target'],
        grasp_link=inputs.settings.get('ee_link') or None,
    )
    view = _controller_view(campaign, inputs, plant, stream(campaign.seed, index, 'noise'))
    if views is not None:
        views.append(view)
    settings = dict(inputs.settings)
    if scenario.controller_actuators is not None:
        settings['actuators_file'] = BaseActuators.from_dict(
            scenario.controller_actuators, source='the controller actuators'
        )
    options = {}
    if scenario.target is not None:
        options = {'target': scenario.target['target'], 'capture': scenario.target['capture']}
    run = simulate(
        settings=settings,
        duration=scenario.duration,
        trajectory=scenario.trajectory,
        trajectory_start=scenario.trajectory_start,
        plant=view,
        steps_per_tick=scenario.steps_per_tick,
        **options,
    )
    return run, view.truth(run.joint_names), draws


#: a state this large has diverged (its square overflows; the core's checks say the same)
HUGE = 1e150


def _diverged(views):
    """Return whether the plant of a run that raised holds a diverged state (NaN or huge)."""
    if not views:
        return False
    plant = views[0].plant
    try:
        state = np.concatenate([plant.joint_positions(), plant.joint_velocities()])
    except Exception:  # noqa: B902 (a plant that cannot even say its state has diverged)
        return True
    return not np.all(np.isfinite(state)) or bool(np.abs(state).max(initial=0.0) > HUGE)


def _finite(run, truth):
    arrays = [run.q, run.qd, run.base_position, run.base_twist]
    if truth is not None:
        arrays += [truth.q, truth.qd, truth.base_position]
    return all(np.all(np.isfinite(a)) for a in arrays)


def _fault(run):
    """Return why the controller faulted or halted once it commanded, or ''."""
    states = run.states
    started = next((k for k, s in enumerate(states) if s in ('holding', 'tracking')), None)
    if started is None:
        return f'the controller never commanded ({run.controller.reason or states[-1]})'
    for k in range(started, len(states)):
        if states[k] in ('fault', 'halted'):
            why = run.controller.fault if states[k] == 'fault' else run.controller.reason
            return f'{states[k]} at t = {run.t[k]:.3f} s' + (f': {why}' if why else '')
    return ''


def series(run, truth, keep, decimate):
    """
    Return {name: array} of the run's series named in ``keep``, every ``decimate``-th tick.

    ``run``, ``truth``: as :func:`simulation` returns them; names from
    :data:`~spart_ros.campaign.spec.SERIES` (those the run does not have are left out).
    """
    q = run.q if truth is None else truth.q
    p = run.base_position if truth is None else truth.base_position
    out = {
        't': run.t,
        'q': run.q,
        'qd': run.qd,
        'q_ref': run.q_ref,
        'qd_ref': run.qd_ref,
        'tracking_error': run.q_ref - q,
        'commands': run.commands,
        'base_position': run.base_position,
        'base_rotation': run.base_rotation,
        'base_twist': run.base_twist,
        'wheel_speeds': run.wheel_speeds,
        'wheel_torques': run.wheel_torques,
        'thruster_commands': run.thruster_commands,
        'propellant': run.propellant,
        'actuation_feasible': run.actuation_feasible,
        'states': np.array(run.states, dtype=str),
    }
    if run.plant.floating:
        out['station_keeping'] = np.linalg.norm(p - p[0], axis=1)
    target = getattr(run, 'distance_to_target', None)
    if target is not None:
        out['distance_to_target'] = np.asarray(target)
    if truth is not None:
        out.update(
            true_q=truth.q,
            true_qd=truth.qd,
            true_base_position=truth.base_position,
            true_base_rotation=truth.base_rotation,
            true_base_twist=truth.base_twist,
        )
    return {k: np.asarray(v)[::decimate] for k, v in out.items() if k in keep and v is not None}


def _error_text(err):
    if isinstance(err, SpartError):
        return str(err)
    last = traceback.extract_tb(err.__traceback__)[-1:]
    where = f' ({os.path.basename(last[0].filename)}:{last[0].lineno})' if last else ''
    return f'{type(err).__name__}: {err}{where}'


def run_one(campaign, index, keep_run=False):
    """
    Return the :class:`RunResult` of run ``index`` of ``campaign`` (never raises).

    ``campaign``: a :class:`~spart_ros.campaign.spec.Campaign`; ``keep_run``: also return the
    :class:`~spart_ros.sim.closed_loop.ClosedLoopRun` (``(result, run)``; run None when it
    raised).
    """
    from ..sim.plant import SimulationDiverged

    cpu, wall = time.process_time(), time.perf_counter()
    result = RunResult(index=int(index), status='error')
    result.draws = dict.fromkeys(draw_columns(campaign.dispersions), float('nan'))
    result.metrics = dict.fromkeys(METRICS, float('nan'))
    run = truth = None
    views = []
    try:
        run, truth, draws = simulation(campaign, index, views)
        result.draws.update(draws)
    except Exception as err:  # noqa: B902 (a run that raises is a row, never a crash)
        result.error = _error_text(err)
        if isinstance(err, SimulationDiverged) or _diverged(views):
            result.status = 'nan'
        try:
            result.draws.update(draw(campaign.dispersions, campaign.seed, index)[1])
        except Exception:  # noqa: B902 (the draw itself raised: the columns stay NaN)
            pass
    if run is not None:
        try:
            result.metrics = metrics(run, campaign.options, truth)
            result.envelope = envelope_series(run, campaign.options, truth)
            fault = _fault(run)
            failed = [str(p) for p in campaign.success if not p.holds(result.metrics)]
            if not _finite(run, truth):
                result.status, result.error = 'nan', 'a series is not finite (NaN or infinity)'
            elif fault:
                result.status, result.error = 'fault', fault
            elif failed:
                result.status = 'failed'
                result.error = 'not met: ' + '; '.join(
                    f'{p} ({result.metrics[p.split()[0]]:.4g})' for p in failed
                )
            else:
                result.status = 'passed'
        except Exception as err:  # noqa: B902 (a metric that raises is the run's error)
            result.status, result.error = 'error', 'measuring the run: ' + _error_text(err)
    retain = campaign.retain
    if run is not None and retain.keeps(result.index, result.status):
        result.series = series(run, truth, retain.series, retain.decimate)
    result.cpu_s = time.process_time() - cpu
    result.wall_s = time.perf_counter() - wall
    result.worker = f'{socket.gethostname()}:{os.getpid()}'
    return (result, run) if keep_run else result
