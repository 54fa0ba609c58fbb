"""
A campaign's scenario: what :func:`~spart_ros.sim.closed_loop.simulate` runs, resolved once.

The campaign file's ``scenario`` mapping is a demo name (``demo: SC_3DoF_orbit``: the robot,
controller settings, trajectory, orbit, actuators and initial state of
:data:`~spart_ros.sim.closed_loop.DEMOS`, as :func:`~spart_ros.sim.closed_loop.demo` runs it;
other keys override it) or the inputs ``simulate`` and ``python -m spart_ros.simulate`` take:

- ``urdf``: the robot (a path, or ``package://spart_ros/...``; xacro is expanded);
- ``params``: a node parameters file (keyed ``/**``): its controller settings, base, gravity;
- ``settings``: controller settings ({field: value}, over the params file's);
- ``trajectory``: waypoints ``[[time_from_start, [q...]], ...]`` of every independent joint,
  submitted at ``trajectory_start`` [s] (default 0);
- ``duration``: simulated seconds (default: the last waypoint + 1 s);
- ``plant``: ``mujoco`` (default) or ``rk4``;
- ``base``: ``fixed`` or ``floating`` (default: the params file's; floating on an orbit);
- ``gravity``: [x, y, z] m/s^2 (default: the params file's; zero on an orbit, else -9.81 z);
- ``dt``: the physics step [s] (0.001), ``steps_per_tick`` (1), ``integrator`` (RK4);
- ``orbit``: ``{altitude: m}`` or ``{mean_motion: rad/s}`` (and ``mu``, ``model``...);
- ``actuators``: the base's wheels and thrusters (their YAML file, or its content);
- ``initial``: ``{joint_positions: {joint: rad}, joint_velocities: {...}, base_position,
  base_orientation (x, y, z, w), base_linear_velocity, base_angular_velocity}``;
- ``target``: the capture of a tumbling target (docs/capture.md): its YAML or URDF (a path), or
  the YAML's content, or ``{file: <either>, capture: {...}}`` with the capture's goal and options
  (``simulate``'s ``capture``: ``start``, ``estimate_period``, ``estimate_noise``, the goal's
  fields...); the run's ``distance_to_target`` series and metrics come from it.

Paths are relative to the campaign file's folder.  Everything is read on the machine that
starts the campaign (files become their text), so workers on other hosts need no files.
"""

import copy
from dataclasses import dataclass, field
import inspect
import os
import warnings

import numpy as np

from ..core.errors import InputError

__all__ = ['Scenario', 'resolve_scenario', 'SCENARIO_KEYS', 'PACKAGE_PREFIX']

PACKAGE_PREFIX = 'package://spart_ros/'
SCENARIO_KEYS = (
    'demo',
    'urdf',
    'params',
    'settings',
    'trajectory',
    'trajectory_start',
    'duration',
    'plant',
    'base',
    'gravity',
    'dt',
    'steps_per_tick',
    'integrator',
    'orbit',
    'actuators',
    'initial',
    'target',
)
_INITIAL_KEYS = (
    'joint_positions',
    'joint_velocities',
    'base_position',
    'base_orientation',
    'base_linear_velocity',
    'base_angular_velocity',
)
#: a demo's bounds that become its default success predicates (metric, the DEMOS key)
DEMO_BOUNDS = (
    ('tracking_rms', 'rms_bound'),
    ('station_keeping_max', 'station_keeping_bound'),
    ('station_keeping_settled', 'settled_bound'),
    ('attitude_change_max', 'attitude_bound_deg'),
)


@dataclass
class Scenario:
    """
    The nominal inputs of every run of a campaign.

    ``urdf``: the robot's URDF text; ``settings``: {controller setting: value} (not
    ``floating``); ``trajectory``: waypoints ``[(t, (q...))]`` or None; ``trajectory_start``,
    ``duration``, ``dt`` [s]; ``plant``: 'mujoco' or 'rk4'; ``base``: 'fixed' or 'floating';
    ``gravity`` (3,); ``steps_per_tick``; ``integrator``; ``orbit``: the keywords of
    :meth:`~spart_ros.core.orbit.CircularOrbit.make` or None; ``actuators``: the plant's base
    actuators (the YAML's content) or None; ``controller_actuators``: the controller's (its
    ``actuators_file``: the plant's unless the settings name another) or None; ``initial``:
    {InitialState field: value}; ``target``: passed through to ``simulate`` or None;
    ``joint_names``: the controller's joints (the robot's independent coordinates);
    ``bounds``: {metric: bound} of a demo (its default success predicates); ``settled_after``
    [s]: the demo's settling time (None); ``label``: what it is, in words.
    """

    urdf: str
    settings: dict
    trajectory: list
    trajectory_start: float
    duration: float
    plant: str
    base: str
    gravity: tuple
    dt: float
    steps_per_tick: int
    integrator: str
    orbit: dict
    actuators: dict
    controller_actuators: dict
    initial: dict
    target: object
    joint_names: list
    bounds: dict = field(default_factory=dict)
    settled_after: float = None
    label: str = ''

    @property
    def floating(self):
        return self.base == 'floating'

    def robot(self, urdf=None):
        """Return the core Robot of ``urdf`` (default: the scenario's), wheels not included."""
        return _robot(self.urdf if urdf is None else urdf)


def _robot(urdf):
    from ..core.urdf import robot_from_urdf

    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # the model's warnings are the plant's and the node's
        return robot_from_urdf(urdf)[0]


def _share():
    from ..sim.closed_loop import _share as share

    return share()


def _path(value, folder, key):
    if not isinstance(value, str) or not value.strip():
        raise InputError(f'scenario.{key}: expected a file path, got {value!r}')
    if value.startswith(PACKAGE_PREFIX):
        return os.path.join(_share(), value[len(PACKAGE_PREFIX) :])
    return value if os.path.isabs(value) else os.path.join(folder, value)


def _actuators_content(value, folder, key):
    """Return the actuators YAML's content (a dict) of a path or a mapping (checked)."""
    from ..core.actuators import BaseActuators, load_actuators

    if value is None or value == '':
        return None
    if isinstance(value, dict):
        BaseActuators.from_dict(value, source=f'scenario.{key}')
        return copy.deepcopy(value)
    import yaml

    path = _path(value, folder, key)
    load_actuators(path)  # InputError naming the file's problem
    with open(path, encoding='utf-8') as f:
        return yaml.safe_load(f)


def _target(value, folder):
    """Return {'target': Target, 'capture': mapping or None} of ``scenario.target``, or None."""
    from ..core.target import load_target

    if value is None:
        return None
    capture = None
    if isinstance(value, dict) and set(value) <= {'file', 'capture'} and 'file' in value:
        capture, value = value.get('capture'), value['file']
        if capture is not None and not isinstance(capture, dict):
            raise InputError(f'scenario.target.capture: expected a mapping, got {capture!r}')
    if isinstance(value, str):
        value = _path(value, folder, 'target')
    return {'target': load_target(value), 'capture': copy.deepcopy(capture)}


def _vector(where, value, n):
    a = np.asarray(value, dtype=float).reshape(-1) if value is not None else None
    if a is None or a.shape != (n,) or not np.all(np.isfinite(a)):
        raise InputError(f'{where}: expected {n} finite numbers, got {value!r}')
    return tuple(float(x) for x in a)


def _initial(spec, where='scenario.initial'):
    if spec is None:
        return {}
    if not isinstance(spec, dict):
        raise InputError(f'{where}: expected a mapping of {list(_INITIAL_KEYS)}')
    unknown = sorted(set(spec) - set(_INITIAL_KEYS))
    if unknown:
        raise InputError(f'{where}: unknown keys {unknown} (known: {list(_INITIAL_KEYS)})')
    out = {}
    for key, value in spec.items():
        if key in ('joint_positions', 'joint_velocities'):
            if not isinstance(value, dict):
                raise InputError(f'{where}.{key}: expected {{joint: value}}, got {value!r}')
            out[key] = {str(k): float(v) for k, v in value.items()}
        else:
            out[key] = _vector(f'{where}.{key}', value, 4 if key == 'base_orientation' else 3)
    return out


def _trajectory(spec, n, where='scenario.trajectory'):
    if spec is None:
        return None
    if not isinstance(spec, (list, tuple)) or not spec:
        raise InputError(f'{where}: expected waypoints [[time_from_start, [q...]], ...]')
    out = []
    for k, point in enumerate(spec):
        if not isinstance(point, (list, tuple)) or len(point) != 2:
            raise InputError(f'{where}[{k}]: expected [time_from_start, [q...]], got {point!r}')
        out.append((float(point[0]), _vector(f'{where}[{k}] positions', point[1], n)))
    return out


def _orbit(spec):
    if spec is None:
        return None
    from ..core.orbit import CircularOrbit

    if not isinstance(spec, dict):
        raise InputError(
            f'scenario.orbit: expected a mapping (altitude or mean_motion), got {spec!r}'
        )
    allowed = set(inspect.signature(CircularOrbit.make).parameters) - {'cls'}
    unknown = sorted(set(spec) - allowed)
    if unknown:
        raise InputError(f'scenario.orbit: unknown keys {unknown} (known: {sorted(allowed)})')
    CircularOrbit.make(**spec)  # InputError naming a bad value
    return dict(spec)


def _demo_inputs(name, spec, folder):
    """Return the scenario mapping of demo ``name`` with ``spec``'s keys over it."""
    from ..sim.closed_loop import _yaml_settings, DEMOS

    if name not in DEMOS:
        raise InputError(f'scenario.demo: expected one of {sorted(DEMOS)}, got {name!r}')
    demo = DEMOS[name]
    share = _share()
    settings = _yaml_settings(os.path.join(share, 'config', f'demo_{name}.yaml'))
    floating = demo['floating']
    gravity = settings.pop('gravity', [0.0, 0.0, 0.0] if floating else [0.0, 0.0, -9.81])
    settings.pop('base', None)
    waypoints = [[t, list(offset)] for t, offset in demo['waypoints']]  # offsets from zero
    out = {
        'urdf': os.path.join(share, 'urdf', f'{demo.get("robot", name)}.urdf'),
        'settings': settings,
        'trajectory': waypoints,
        'base': 'floating' if floating else 'fixed',
        'gravity': gravity,
        'orbit': demo.get('orbit'),
        'actuators': os.path.join(share, demo['actuators']) if 'actuators' in demo else None,
        'initial': (
            {'base_linear_velocity': list(demo['initial_velocity'])}
            if 'initial_velocity' in demo
            else None
        ),
    }
    for key, value in spec.items():
        if key == 'settings':
            out['settings'] = {**settings, **(value or {})}
        elif key != 'demo':
            out[key] = value
    bounds = {metric: demo[key] for metric, key in DEMO_BOUNDS if key in demo}
    return out, bounds, demo.get('settled_after'), demo['label']


def resolve_scenario(spec, folder='.'):
    """
    Return the :class:`Scenario` of a campaign file's ``scenario`` mapping ``spec``.

    ``folder``: where relative paths start (the campaign file's).  InputError naming the key of a
    bad or missing value; the controller settings and the model are checked here (a campaign
    of a scenario that cannot run fails before it starts).
    """
    from ..control.settings import ControllerSettings
    from ..core.urdf import urdf_text
    from ..sim.closed_loop import _yaml_settings, PLANTS

    if not isinstance(spec, dict):
        raise InputError(f'scenario: expected a mapping (a demo, or {list(SCENARIO_KEYS[1:])})')
    unknown = sorted(set(spec) - set(SCENARIO_KEYS))
    if unknown:
        raise InputError(f'scenario: unknown keys {unknown} (known: {list(SCENARIO_KEYS)})')
    bounds, settled_after, label = {}, None, ''
    if 'demo' in spec:
        spec, bounds, settled_after, label = _demo_inputs(spec['demo'], spec, folder)
    if not spec.get('urdf'):
        raise InputError('scenario: a demo or a urdf is needed')
    urdf = urdf_text(_path(spec['urdf'], folder, 'urdf'))
    settings = {}
    if spec.get('params'):
        settings = _yaml_settings(_path(spec['params'], folder, 'params'))
    given = spec.get('settings') or {}
    if not isinstance(given, dict):
        raise InputError(f'scenario.settings: expected {{setting: value}}, got {given!r}')
    settings.update(
        {k: tuple(v) if isinstance(v, list) else v for k, v in given.items() if k != 'gravity'}
    )
    orbit = _orbit(spec.get('orbit'))
    base = spec.get('base') or settings.pop('base', None) or ('floating' if orbit else 'fixed')
    settings.pop('base', None)
    if base not in ('fixed', 'floating'):
        raise InputError(f"scenario.base: expected 'fixed' or 'floating', got {base!r}")
    gravity = spec.get('gravity', given.get('gravity', settings.pop('gravity', None)))
    settings.pop('gravity', None)
    if gravity is None:
        gravity = (0.0, 0.0, 0.0) if orbit else (0.0, 0.0, -9.81)
    gravity = _vector('scenario.gravity', gravity, 3)
    plant = spec.get('plant', 'mujoco')
    if plant not in PLANTS:
        raise InputError(f'scenario.plant: expected one of {list(PLANTS)}, got {plant!r}')
    actuators = _actuators_content(spec.get('actuators'), folder, 'actuators')
    controller_actuators = actuators
    named = settings.get('actuators_file')
    if named:
        controller_actuators = _actuators_content(named, folder, 'settings.actuators_file')
    settings.pop('actuators_file', None)
    unknown = sorted(set(settings) - set(ControllerSettings.__dataclass_fields__))
    if unknown:
        raise InputError(f'scenario.settings: unknown controller settings {unknown}')
    robot = _robot(urdf)
    joint_names = list(robot.coordinates.names)
    trajectory = _trajectory(spec.get('trajectory'), len(joint_names))
    duration = spec.get('duration')
    if duration is None:
        if trajectory is None:
            raise InputError('scenario: a duration [s] is needed (there is no trajectory)')
        duration = trajectory[-1][0] + 1.0 + float(spec.get('trajectory_start', 0.0))
    duration = float(duration)
    if not np.isfinite(duration) or duration <= 0:
        raise InputError(f'scenario.duration: expected seconds > 0, got {duration!r}')
    target = _target(spec.get('target'), folder)
    scenario = Scenario(
        urdf=urdf,
        settings=settings,
        trajectory=trajectory,
        trajectory_start=float(spec.get('trajectory_start', 0.0)),
        duration=duration,
        plant=plant,
        base=base,
        gravity=gravity,
        dt=float(spec.get('dt', 1e-3)),
        steps_per_tick=int(spec.get('steps_per_tick', 1)),
        integrator=str(spec.get('integrator', 'RK4')),
        orbit=orbit,
        actuators=actuators,
        controller_actuators=controller_actuators,
        initial=_initial(spec.get('initial')),
        target=target,
        joint_names=joint_names,
        bounds=bounds,
        settled_after=settled_after,
        label=label
        or f'{robot.name} ({base} base, mode {settings.get("mode", "computed_torque")})',
    )
    check_settings(scenario, scenario.settings)
    return scenario


def check_settings(scenario, settings):
    """
    Return the :class:`~spart_ros.control.settings.ControllerSettings` of ``settings`` (checked).

    ``scenario``: the :class:`Scenario` (its base and controller actuators); ``settings``:
    {field: value}.  InputError naming a bad setting.
    """
    from ..control.settings import ControllerSettings
    from ..core.actuators import BaseActuators

    values = dict(settings)
    if scenario.controller_actuators is not None:
        values['actuators_file'] = BaseActuators.from_dict(
            scenario.controller_actuators, source='the controller actuators'
        )
    return ControllerSettings(floating=scenario.floating, **values).check()
