"""
What a campaign can disperse in a scenario, and the run inputs a set of values gives.

Every parameter has a name, a kind (:data:`KINDS`) and a nominal value (:func:`parameters` lists
a scenario's); frames and units:

- ``links.<link>.mass`` [kg], ``links.<link>.com`` (3,) the centre of mass in the link frame
  [m], ``links.<link>.inertia`` (an inertia: (3, 3) about the CoM, link frame, [kg m^2]);
- ``thrusters.<name>.position`` (3,) in the base link frame b [m], ``.direction`` (a
  direction: unit (3,) in b), ``.max_force`` [N], ``.min_impulse`` [N s];
  ``thrusters.specific_impulse`` [s];
- ``wheels.<name>.axis`` (a direction, in b), ``.position`` (3,) rotor CoM in b [m],
  ``.friction`` [N m s/rad], ``.max_torque`` [N m], ``.max_speed`` [rad/s], ``.rotor_inertia``,
  ``.transverse_inertia`` [kg m^2], ``.mass`` [kg], ``.initial_speed`` [rad/s];
- ``orbit.altitude`` [m] (or ``orbit.mean_motion`` [rad/s], whichever the scenario gives);
- ``initial.joint_positions``, ``initial.joint_velocities`` (n,) the controller's joints [rad],
  [rad/s]; with a floating base ``initial.base_position`` (3,) [m] in the world,
  ``initial.base_linear_velocity`` [m/s], ``initial.base_angular_velocity`` [rad/s] (the twist
  in the base link frame), ``initial.base_attitude`` (a rotation: a rotation vector [rad] from
  the nominal attitude, in the base link frame);
- ``settings.<field>``: every numeric controller setting (a number, or a vector).

The plant gets the dispersed robot, actuators, orbit and initial state; the controller keeps the
nominal robot and actuators (its model: what it was designed with), and the dispersed controller
settings.
"""

from dataclasses import dataclass

import numpy as np

from .inertia import rotation_matrix
from .link_properties import link_inertials, LinkInertial, with_link_inertials

__all__ = ['Parameter', 'parameters', 'RunInputs', 'run_inputs', 'KINDS']

#: how a draw changes a parameter: value (elementwise), inertia (principal moments and axes),
#: direction (turned by an angle), rotation (a rotation vector from the nominal attitude)
KINDS = ('value', 'inertia', 'direction', 'rotation')
_XYZ = ('x', 'y', 'z')
_WHEEL_VALUES = (
    'friction',
    'max_torque',
    'max_speed',
    'rotor_inertia',
    'transverse_inertia',
    'mass',
    'initial_speed',
)
_INITIAL_VECTORS = ('base_position', 'base_linear_velocity', 'base_angular_velocity')


@dataclass(frozen=True)
class Parameter:
    """
    One dispersible parameter of a scenario.

    ``name``: its full name (the module docstring's table); ``kind``: one of :data:`KINDS`;
    ``nominal``: its value (an array); ``labels``: the names of its elements (a vector's), for
    the table's columns.
    """

    name: str
    kind: str
    nominal: np.ndarray
    labels: tuple = ()


def _value(name, nominal, labels=()):
    a = np.array(nominal, dtype=float)
    return Parameter(name, 'value', a, tuple(labels) if a.ndim else ())


def parameters(scenario):
    """
    Return {name: :class:`Parameter`} of everything ``scenario`` lets a campaign disperse.

    ``scenario``: a :class:`~spart_ros.campaign.scenario.Scenario`; in the module's order.
    """
    from ..control.settings import ControllerSettings
    from ..core.actuators import BaseActuators

    out = {}

    def add(p):
        out[p.name] = p

    for link, inertial in link_inertials(scenario.urdf).items():
        add(_value(f'links.{link}.mass', inertial.mass))
        add(_value(f'links.{link}.com', inertial.com, _XYZ))
        add(Parameter(f'links.{link}.inertia', 'inertia', np.array(inertial.inertia)))
    if scenario.actuators is not None:
        act = BaseActuators.from_dict(scenario.actuators, source='scenario.actuators')
        for t in act.thrusters:
            add(_value(f'thrusters.{t.name}.position', t.position, _XYZ))
            add(Parameter(f'thrusters.{t.name}.direction', 'direction', np.array(t.direction)))
            add(_value(f'thrusters.{t.name}.max_force', t.max_force))
            add(_value(f'thrusters.{t.name}.min_impulse', t.min_impulse))
        if act.thrusters:
            add(_value('thrusters.specific_impulse', act.specific_impulse))
        for w in act.wheels:
            add(Parameter(f'wheels.{w.name}.axis', 'direction', np.array(w.axis)))
            add(_value(f'wheels.{w.name}.position', w.position, _XYZ))
            for key in _WHEEL_VALUES:
                add(_value(f'wheels.{w.name}.{key}', getattr(w, key)))
    if scenario.orbit is not None:
        for key in ('altitude', 'mean_motion'):
            if scenario.orbit.get(key) is not None:
                add(_value(f'orbit.{key}', scenario.orbit[key]))
    initial, names = scenario.initial, scenario.joint_names
    for key in ('joint_positions', 'joint_velocities'):
        given = initial.get(key, {})
        add(_value(f'initial.{key}', [given.get(n, 0.0) for n in names], names))
    if scenario.floating:
        for key in _INITIAL_VECTORS:
            add(_value(f'initial.{key}', initial.get(key, (0.0, 0.0, 0.0)), _XYZ))
        add(Parameter('initial.base_attitude', 'rotation', np.zeros(3), _XYZ))
    defaults = ControllerSettings()
    for key in ControllerSettings.__dataclass_fields__:
        value = scenario.settings.get(key, getattr(defaults, key))
        if _numeric(key, value):
            n = np.size(value)
            add(_value(f'settings.{key}', value, tuple(str(k) for k in range(n))))
    return out


#: numeric settings that are not quantities (indices of rows): never dispersed
_NOT_QUANTITIES = ('base_rows', 'task_rows')


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _numeric(key, value):
    """Return whether setting ``key`` of ``value`` is a quantity (a number or a vector of them)."""
    if key in _NOT_QUANTITIES:
        return False
    if isinstance(value, (tuple, list)):
        return len(value) > 0 and all(_number(v) for v in value)
    return _number(value)


@dataclass
class RunInputs:
    """
    One run's inputs (what the plant and the controller are built from).

    ``urdf``: the plant's robot (URDF text); ``model_dispersed``: whether it differs from the
    nominal robot (the controller then keeps the nominal one); ``actuators``: the plant's base
    actuators (a :class:`~spart_ros.core.actuators.BaseActuators` or None);
    ``actuators_dispersed``: whether they differ from the nominal ones; ``orbit``: a
    :class:`~spart_ros.core.orbit.CircularOrbit` or None; ``initial``: an
    :class:`~spart_ros.sim.plant.InitialState`; ``settings``: {controller setting: value}.
    """

    urdf: str
    model_dispersed: bool
    actuators: object
    actuators_dispersed: bool
    orbit: object
    initial: object
    settings: dict


def _actuators_with(nominal, values):
    """Return the actuators YAML content ``nominal`` with the dispersed values written in."""
    from ..core.actuators import BaseActuators

    act = BaseActuators.from_dict(nominal, source='scenario.actuators')
    content = {k: v for k, v in nominal.items() if k == 'base_link'}
    wheels = []
    for w in act.wheels:
        d = {k: getattr(w, k) for k in ('name', 'axis', 'position') + _WHEEL_VALUES}
        for key in ('axis', 'position') + _WHEEL_VALUES:
            name = f'wheels.{w.name}.{key}'
            if name in values:
                d[key] = values[name]
        wheels.append(
            {k: (np.asarray(v).tolist() if k in ('axis', 'position') else v) for k, v in d.items()}
        )
    thrusters = []
    for t in act.thrusters:
        d = {
            k: getattr(t, k)
            for k in ('name', 'position', 'direction', 'max_force', 'min_impulse', 'throttled')
        }
        for key in ('position', 'direction', 'max_force', 'min_impulse'):
            name = f'thrusters.{t.name}.{key}'
            if name in values:
                d[key] = values[name]
        thrusters.append(
            {
                k: (np.asarray(v).tolist() if k in ('position', 'direction') else v)
                for k, v in d.items()
            }
        )
    if act.wheels:
        content['reaction_wheels'] = {'controller': act.wheel_controller, 'wheels': wheels}
    if act.thrusters:
        content['thrusters'] = {
            'controller': act.thruster_controller,
            'specific_impulse': float(
                values.get('thrusters.specific_impulse', act.specific_impulse)
            ),
            'thrusters': thrusters,
        }
    return BaseActuators.from_dict(content, source='the dispersed actuators')


def _float(v):
    return float(np.asarray(v).reshape(()))


def run_inputs(scenario, values):
    """
    Return the :class:`RunInputs` of ``scenario`` with the parameters ``values`` dispersed.

    ``values``: {parameter name: dispersed value (an array of the parameter's shape)}; the others
    keep their nominal values.  InputError naming a value the model, the actuators, the orbit or
    the settings refuse.
    """
    from ..core.actuators import BaseActuators
    from ..core.attitude import quaternion_from_ros, quaternion_to_ros
    from ..core.orbit import CircularOrbit
    from ..sim.plant import InitialState

    links = {}
    for name, value in values.items():
        if name.startswith('links.'):
            link, key = name[len('links.') :].rsplit('.', 1)
            links.setdefault(link, {})[key] = value
    urdf = scenario.urdf
    if links:
        nominal = link_inertials(urdf)
        changes = {}
        for link, new in links.items():
            old = nominal[link]
            changes[link] = LinkInertial(
                _float(new.get('mass', old.mass)),
                np.asarray(new.get('com', old.com), dtype=float),
                np.asarray(new.get('inertia', old.inertia), dtype=float),
            )
        urdf = with_link_inertials(urdf, changes)
    actuators = None
    dispersed = any(n.startswith(('wheels.', 'thrusters.')) for n in values)
    if scenario.actuators is not None:
        actuators = (
            _actuators_with(scenario.actuators, values)
            if dispersed
            else BaseActuators.from_dict(scenario.actuators, source='scenario.actuators')
        )
    orbit = None
    if scenario.orbit is not None:
        spec = dict(scenario.orbit)
        for key in ('altitude', 'mean_motion'):
            if f'orbit.{key}' in values:
                spec[key] = _float(values[f'orbit.{key}'])
        orbit = CircularOrbit.make(**spec)
    initial = dict(scenario.initial)
    for key in ('joint_positions', 'joint_velocities'):
        if f'initial.{key}' in values:
            q = np.asarray(values[f'initial.{key}'], dtype=float)
            initial[key] = {
                **initial.get(key, {}),
                **{n: float(v) for n, v in zip(scenario.joint_names, q)},
            }
    for key in _INITIAL_VECTORS:
        if f'initial.{key}' in values:
            initial[key] = tuple(float(v) for v in values[f'initial.{key}'])
    if 'initial.base_attitude' in values:
        R0 = quaternion_from_ros(*initial.get('base_orientation', (0.0, 0.0, 0.0, 1.0)))
        R = R0 @ rotation_matrix(values['initial.base_attitude'])
        initial['base_orientation'] = tuple(float(v) for v in quaternion_to_ros(R))
    settings = dict(scenario.settings)
    for name, value in values.items():
        if name.startswith('settings.'):
            key = name[len('settings.') :]
            a = np.asarray(value, dtype=float)
            settings[key] = float(a) if a.ndim == 0 else tuple(float(v) for v in a)
    return RunInputs(
        urdf=urdf,
        model_dispersed=bool(links) or any(n.startswith('wheels.') for n in values),
        actuators=actuators,
        actuators_dispersed=dispersed,
        orbit=orbit,
        initial=InitialState(**initial),
        settings=settings,
    )
