"""
Actuators of a spacecraft's base: reaction wheels and thrusters (constant data, no ROS).

A robot's base actuators are declared in a YAML file next to its URDF (e.g.
``urdf/SC_3DoF.actuators.yaml``; :func:`load_actuators`)::

    base_link: Spacecraft            # optional: checked against the URDF's base link
    reaction_wheels:
      controller: reaction_wheel_controller  # <controller>/commands: N m per wheel
      wheels:
        - name: rw_x                 # the wheel's joint (its rotor link: rw_x_rotor)
          axis: [1, 0, 0]            # spin axis, base link frame b (normalized)
          rotor_inertia: 0.05        # J_s [kg m^2] about the spin axis
          max_torque: 0.2            # motor torque bound [N m]
          max_speed: 600.0           # rotor speed bound relative to the base [rad/s]
          friction: 1.0e-5           # viscous friction [N m s/rad] (the joint's damping)
          position: [0, 0, 0]        # rotor centre of mass in b [m] (default: b's origin)
          mass: 1.0                  # rotor mass [kg] (default 0.5)
          transverse_inertia: 0.03   # about a diameter through its centre [kg m^2] (default J_s/2)
          initial_speed: 0.0         # [rad/s]
    thrusters:
      controller: thruster_controller        # <controller>/commands: N per thruster
      specific_impulse: 220.0                # [s], for the propellant used (default 220)
      thrusters:
        - name: thr_px_1
          position: [-0.5, 0.3, 0.0]         # point of application in b [m]
          direction: [1, 0, 0]               # force ON the spacecraft, in b (normalized)
          max_force: 1.0                     # [N]
          min_impulse: 0.002                 # minimum impulse bit [N s] (0: none)
          throttled: false                   # false: on/off valve (force 0 or max_force)

**Reaction wheels are joints.** Each wheel becomes a continuous joint of the base whose child
link is the rotor (:func:`add_wheels` writes them into the URDF: mass, centre of mass, inertia
diag(J_t, J_t, J_s) in a frame whose z axis is the spin axis, damping = ``friction``), so the
core's multibody dynamics, the MuJoCo plant and SPART's momentum functions count the wheels'
momentum natively; the motor torque is the joint effort (on the rotor; the base feels its
reaction).  A controller treats the wheels as actuators of the base, not as arm joints: its arm
model locks them (:func:`lock_wheels`: the rotors become part of the base) and its base
actuation adds what their spin does (:mod:`spart_ros.control.base_actuation`).

**Thrusters** exert ``max_force`` (on/off) or a force in [0, ``max_force``] (throttled) along
``direction`` at ``position``; an on/off valve once opened stays open for at least
``min_impulse / max_force`` seconds (the minimum impulse bit).  Propellant: F / (Isp g0) kg/s.

Values are SI; a bad value raises InputError naming the actuator and the field.
"""

from dataclasses import dataclass
import math
import os
import xml.etree.ElementTree as ET

import numpy as np

from .errors import InputError
from .urdf import _load_text, _needs_xacro, urdf_text

__all__ = [
    'ReactionWheel',
    'Thruster',
    'BaseActuators',
    'load_actuators',
    'add_wheels',
    'lock_wheels',
    'G0',
    'ROTOR_SUFFIX',
]

#: standard gravity [m/s^2], for the propellant mass flow F / (Isp g0)
G0 = 9.80665
#: a wheel joint ``name`` turns the rotor link ``name + ROTOR_SUFFIX``
ROTOR_SUFFIX = '_rotor'
_WHEEL_FIELDS = (
    'name',
    'axis',
    'rotor_inertia',
    'max_torque',
    'max_speed',
    'friction',
    'position',
    'mass',
    'transverse_inertia',
    'initial_speed',
)
_THRUSTER_FIELDS = ('name', 'position', 'direction', 'max_force', 'min_impulse', 'throttled')


def _number(where, name, value, low=0.0, strict=False, infinite=False):
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise InputError(f'{where}: {name} must be a number, got {value!r}') from None
    if math.isnan(x) or (math.isinf(x) and not infinite) or x < low or (strict and x <= low):
        raise InputError(
            f'{where}: {name} must be a {"" if infinite else "finite "}number '
            f'{">" if strict else ">="} {low:g}, got {value!r}'
        )
    return x


def _vector3(where, name, value, unit=False):
    try:
        v = np.array(value, dtype=float).reshape(-1)
    except (TypeError, ValueError):
        raise InputError(f'{where}: {name} must be 3 numbers, got {value!r}') from None
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise InputError(f'{where}: {name} must be 3 finite numbers, got {value!r}')
    if unit:
        norm = float(np.linalg.norm(v))
        if norm < 1e-9:
            raise InputError(f'{where}: {name} must not be zero, got {value!r}')
        v = v / norm
    return v


@dataclass(frozen=True, eq=False)
class ReactionWheel:
    """
    One reaction wheel (see the module docstring; arrays (3,) in the base link frame b).

    ``name``: its joint; ``axis`` unit spin axis; ``rotor_inertia`` J_s; ``max_torque``;
    ``max_speed`` (relative to the base); ``friction`` (viscous); ``position`` of the rotor CoM;
    ``mass``; ``transverse_inertia`` J_t; ``initial_speed``.
    """

    name: str
    axis: np.ndarray
    rotor_inertia: float
    max_torque: float
    max_speed: float
    friction: float = 0.0
    position: np.ndarray = None
    mass: float = 0.5
    transverse_inertia: float = None
    initial_speed: float = 0.0

    @classmethod
    def from_dict(cls, d, index=0):
        """
        Return the wheel of YAML entry ``d`` (a dict), number ``index`` (for messages).

        InputError naming the wheel and the field.
        """
        if not isinstance(d, dict):
            raise InputError(f'reaction_wheels.wheels[{index}]: expected a mapping, got {d!r}')
        name = str(d.get('name', '')).strip()
        where = f'reaction wheel {name!r}' if name else f'reaction_wheels.wheels[{index}]'
        if not name:
            raise InputError(f'{where}: a name is needed (the joint of the wheel)')
        unknown = sorted(set(d) - set(_WHEEL_FIELDS))
        if unknown:
            raise InputError(f'{where}: unknown fields {unknown} (known: {list(_WHEEL_FIELDS)})')
        for required in ('axis', 'rotor_inertia', 'max_torque', 'max_speed'):
            if required not in d:
                raise InputError(f'{where}: {required} is missing')
        js = _number(where, 'rotor_inertia', d['rotor_inertia'], strict=True)
        jt = _number(where, 'transverse_inertia', d.get('transverse_inertia', js / 2), strict=True)
        max_speed = _number(where, 'max_speed', d['max_speed'], strict=True, infinite=True)
        initial = float(
            _number(where, 'initial_speed', d.get('initial_speed', 0.0), low=-math.inf)
        )
        if abs(initial) > max_speed:
            raise InputError(
                f'{where}: initial_speed {initial:g} rad/s is beyond max_speed {max_speed:g}'
            )
        return cls(
            name=name,
            axis=_vector3(where, 'axis', d['axis'], unit=True),
            rotor_inertia=js,
            max_torque=_number(where, 'max_torque', d['max_torque'], strict=True, infinite=True),
            max_speed=max_speed,
            friction=_number(where, 'friction', d.get('friction', 0.0)),
            position=_vector3(where, 'position', d.get('position', (0.0, 0.0, 0.0))),
            mass=_number(where, 'mass', d.get('mass', 0.5), strict=True),
            transverse_inertia=jt,
            initial_speed=initial,
        )

    @property
    def rotor(self):
        """Return the name of the rotor link."""
        return self.name + ROTOR_SUFFIX


@dataclass(frozen=True, eq=False)
class Thruster:
    """
    One thruster (see the module docstring; arrays (3,) in the base link frame b).

    ``name``: its name; ``position`` of the point of application; ``direction`` unit, of the force
    on the spacecraft; ``max_force``; ``min_impulse`` (minimum impulse bit, N s); ``throttled``.
    """

    name: str
    position: np.ndarray
    direction: np.ndarray
    max_force: float
    min_impulse: float = 0.0
    throttled: bool = False

    @classmethod
    def from_dict(cls, d, index=0):
        """
        Return the thruster of YAML entry ``d`` (a dict), number ``index`` (for messages).

        InputError naming the thruster and the field.
        """
        if not isinstance(d, dict):
            raise InputError(f'thrusters.thrusters[{index}]: expected a mapping, got {d!r}')
        name = str(d.get('name', '')).strip()
        where = f'thruster {name!r}' if name else f'thrusters.thrusters[{index}]'
        if not name:
            raise InputError(f'{where}: a name is needed')
        unknown = sorted(set(d) - set(_THRUSTER_FIELDS))
        if unknown:
            raise InputError(
                f'{where}: unknown fields {unknown} (known: {list(_THRUSTER_FIELDS)})'
            )
        for required in ('position', 'direction', 'max_force'):
            if required not in d:
                raise InputError(f'{where}: {required} is missing')
        throttled = d.get('throttled', False)
        if not isinstance(throttled, bool):
            raise InputError(f'{where}: throttled must be true or false, got {throttled!r}')
        return cls(
            name=name,
            position=_vector3(where, 'position', d['position']),
            direction=_vector3(where, 'direction', d['direction'], unit=True),
            max_force=_number(where, 'max_force', d['max_force'], strict=True),
            min_impulse=_number(where, 'min_impulse', d.get('min_impulse', 0.0)),
            throttled=throttled,
        )

    @property
    def min_on_time(self):
        """Return the shortest firing of the valve [s]: min_impulse / max_force."""
        return self.min_impulse / self.max_force

    @property
    def wrench(self):
        """(6,) [torque about b's origin; force] per newton, in b."""
        return np.concatenate([np.cross(self.position, self.direction), self.direction])


@dataclass(frozen=True, eq=False)
class BaseActuators:
    """
    The base's reaction wheels and thrusters, with their command groups.

    ``wheels``, ``thrusters``: tuples of :class:`ReactionWheel`, :class:`Thruster`;
    ``wheel_controller``, ``thruster_controller``: the forward command controllers' names (their
    commands topic is ``<name>/commands``, std_msgs/Float64MultiArray, one value per actuator in
    this order); ``specific_impulse`` [s]; ``base_link``: the base link it was declared for ('':
    any); ``source``: where it was read from.
    """

    wheels: tuple = ()
    thrusters: tuple = ()
    wheel_controller: str = 'reaction_wheel_controller'
    thruster_controller: str = 'thruster_controller'
    specific_impulse: float = 220.0
    base_link: str = ''
    source: str = ''

    def __post_init__(self):
        names = [w.name for w in self.wheels] + [t.name for t in self.thrusters]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise InputError(f'{self.source or "actuators"}: names used twice: {twice}')
        if self.wheels and self.thrusters and self.wheel_controller == self.thruster_controller:
            raise InputError(
                f'{self.source or "actuators"}: the wheels and the thrusters need controllers of '
                f'their own (both are {self.wheel_controller!r})'
            )

    @property
    def wheel_names(self):
        return [w.name for w in self.wheels]

    @property
    def thruster_names(self):
        return [t.name for t in self.thrusters]

    @property
    def wheel_axes(self):
        """(3, n_w): the spin axes in b, one column per wheel."""
        return np.array([w.axis for w in self.wheels], dtype=float).reshape(-1, 3).T

    @property
    def thruster_wrenches(self):
        """(6, n_t): [torque about b's origin; force] in b per newton of each thruster."""
        return np.array([t.wrench for t in self.thrusters], dtype=float).reshape(-1, 6).T

    def check_robot(self, robot):
        """Return self if these actuators fit ``robot`` (a core Robot), else raise InputError."""
        if self.base_link and self.base_link != robot.base_link.name:
            raise InputError(
                f'{self.source or "actuators"} are declared for base link {self.base_link!r}, the '
                f'robot {robot.name!r} has {robot.base_link.name!r}'
            )
        return self

    @classmethod
    def from_dict(cls, data, source=''):
        """
        Return the actuators of ``data``, the YAML's content (see the module docstring).

        ``source``: its file, for messages.
        """
        where = source or 'actuators'
        if data is None:
            data = {}
        if not isinstance(data, dict):
            raise InputError(f'{where}: expected a mapping, got {type(data).__name__}')
        unknown = sorted(set(data) - {'base_link', 'reaction_wheels', 'thrusters'})
        if unknown:
            raise InputError(
                f'{where}: unknown keys {unknown} (known: base_link, reaction_wheels, thrusters)'
            )
        rw = data.get('reaction_wheels') or {}
        th = data.get('thrusters') or {}
        for key, group, items in (
            ('reaction_wheels', rw, 'wheels'),
            ('thrusters', th, 'thrusters'),
        ):
            if not isinstance(group, dict):
                raise InputError(f'{where}: {key} must be a mapping with {items!r}')
            extra = sorted(set(group) - {'controller', items, 'specific_impulse'})
            if extra or ('specific_impulse' in group and key != 'thrusters'):
                raise InputError(f'{where}: {key}: unknown keys {extra or ["specific_impulse"]}')
            if not isinstance(group.get(items, []) or [], list):
                raise InputError(f'{where}: {key}.{items} must be a list')
        wheels = tuple(ReactionWheel.from_dict(d, k) for k, d in enumerate(rw.get('wheels') or []))
        thrusters = tuple(
            Thruster.from_dict(d, k) for k, d in enumerate(th.get('thrusters') or [])
        )
        return cls(
            wheels=wheels,
            thrusters=thrusters,
            wheel_controller=str(rw.get('controller', 'reaction_wheel_controller')),
            thruster_controller=str(th.get('controller', 'thruster_controller')),
            specific_impulse=_number(
                where, 'thrusters.specific_impulse', th.get('specific_impulse', 220.0), strict=True
            ),
            base_link=str(data.get('base_link', '') or ''),
            source=source,
        )


def load_actuators(source):
    """
    Return the :class:`BaseActuators` of a YAML file path (or of its parsed content, a dict).

    ``source``: None or '' gives None (no actuators).  InputError naming the file and the problem.
    """
    if source is None or (isinstance(source, str) and not source.strip()):
        return None
    if isinstance(source, BaseActuators):
        return source
    if isinstance(source, dict):
        return BaseActuators.from_dict(source)
    import yaml

    path = os.fspath(source)
    try:
        with open(path, encoding='utf-8') as f:
            data = yaml.safe_load(f)
    except OSError as err:
        raise InputError(f'actuators file {path!r}: {err.strerror}') from None
    except yaml.YAMLError as err:
        raise InputError(f'actuators file {path!r} is not valid YAML: {err}') from None
    return BaseActuators.from_dict(data, source=f'actuators file {path!r}')


def frame_z_along(axis):
    """Return a rotation (3, 3) whose third column (z axis) is the unit vector ``axis``."""
    z = np.asarray(axis, dtype=float)
    helper = np.array([1.0, 0.0, 0.0]) if abs(z[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    x = np.cross(helper, z)
    x /= np.linalg.norm(x)
    y = np.cross(z, x)
    return np.column_stack([x, y, z])


def _frame_z_to(axis):
    """Return the roll, pitch, yaw (URDF: R = Rz Ry Rx) of a frame whose z axis is ``axis``."""
    R = frame_z_along(axis)
    if abs(R[2, 0]) < 1.0 - 1e-12:
        return (
            math.atan2(R[2, 1], R[2, 2]),
            -math.asin(R[2, 0]),
            math.atan2(R[1, 0], R[0, 0]),
        )
    # pitch +-90 deg (gimbal lock): roll 0, R = Rz(yaw) Ry(pitch)
    return 0.0, -math.copysign(math.pi / 2, R[2, 0]), math.atan2(-R[0, 1], R[1, 1])


def _fmt(values):
    return ' '.join(repr(float(v)) for v in values)


def _root(urdf):
    text = urdf_text(urdf)
    if text.lstrip().startswith('<?xml'):
        text = text.encode('utf-8')
    return ET.fromstring(text)


def _base_link(root):
    children = {
        j.find('child').get('link') for j in root.iter('joint') if j.find('child') is not None
    }
    roots = [link.get('name') for link in root.iter('link') if link.get('name') not in children]
    if len(roots) != 1:
        raise InputError(f'the URDF has {len(roots)} root links {roots}: expected one')
    name = roots[0]
    # a massless world root with one joint (docs/urdf_loading.md): its child is the base
    joints = [j for j in root.iter('joint') if j.find('parent').get('link') == name]
    link = next(link for link in root.iter('link') if link.get('name') == name)
    if link.find('inertial') is None and len(joints) == 1:
        return joints[0].find('child').get('link')
    return name


def add_wheels(urdf, actuators):
    """
    Return the URDF text with one continuous joint and rotor link per reaction wheel.

    ``urdf``: URDF text or path (xacro expanded); ``actuators``: :class:`BaseActuators`.  Each
    wheel's joint (its ``name``) joins the base link to its rotor link (``name`` + ``_rotor``) at
    ``position``, its z axis along the spin ``axis``; the rotor's mass, inertia
    diag(J_t, J_t, J_s) and the joint's ``<dynamics damping>`` (the viscous friction) and
    ``<limit effort velocity>`` (torque and speed limits) come from the declaration.  InputError if
    a name is taken.  Without wheels the text is returned unchanged.
    """
    if actuators is None or not actuators.wheels:
        return urdf_text(urdf)
    root = _root(urdf)
    base = _base_link(root)
    if actuators.base_link and actuators.base_link != base:
        raise InputError(
            f'{actuators.source or "actuators"} are declared for base link '
            f'{actuators.base_link!r}, the URDF has {base!r}'
        )
    taken = {el.get('name') for el in root if el.tag in ('link', 'joint')}
    for w in actuators.wheels:
        clash = [n for n in (w.name, w.rotor) if n in taken]
        if clash:
            raise InputError(
                f'reaction wheel {w.name!r}: the URDF already has a link or joint named {clash}'
            )
        link = ET.SubElement(root, 'link', name=w.rotor)
        inertial = ET.SubElement(link, 'inertial')
        ET.SubElement(inertial, 'origin', xyz='0 0 0', rpy='0 0 0')
        ET.SubElement(inertial, 'mass', value=repr(float(w.mass)))
        jt, js = repr(float(w.transverse_inertia)), repr(float(w.rotor_inertia))
        ET.SubElement(inertial, 'inertia', ixx=jt, ixy='0', ixz='0', iyy=jt, iyz='0', izz=js)
        joint = ET.SubElement(root, 'joint', name=w.name, type='continuous')
        ET.SubElement(joint, 'parent', link=base)
        ET.SubElement(joint, 'child', link=w.rotor)
        ET.SubElement(joint, 'origin', xyz=_fmt(w.position), rpy=_fmt(_frame_z_to(w.axis)))
        ET.SubElement(joint, 'axis', xyz='0 0 1')
        limit = {'effort': w.max_torque, 'velocity': w.max_speed}
        ET.SubElement(
            joint,
            'limit',
            **{k: repr(float(v if math.isfinite(v) else 0.0)) for k, v in limit.items()},
        )
        ET.SubElement(joint, 'dynamics', damping=repr(float(w.friction)), friction='0')
    return ET.tostring(root, encoding='unicode')


def lock_wheels(urdf, actuators, expand_xacro=True):
    """
    Return the ``urdf`` text with the ``actuators``' wheel joints fixed (the rotors in the base).

    A controller's arm model: the wheels are actuators of the base, not arm joints.  Wheel joints
    absent from the URDF are skipped (a description without them); without wheels the text is
    returned unchanged.  ``expand_xacro=False``: xacro text is returned as it is (for text from
    another process, which the core's reader then refuses).
    """
    if not expand_xacro:
        text, _, path = _load_text(urdf)
        if _needs_xacro(text, path):
            return text
        urdf = text
    if actuators is None or not actuators.wheels:
        return urdf_text(urdf)
    root = _root(urdf)
    names = set(actuators.wheel_names)
    for joint in root.iter('joint'):
        if joint.get('name') in names:
            joint.set('type', 'fixed')
            for tag in ('axis', 'limit', 'dynamics'):
                for el in joint.findall(tag):
                    joint.remove(el)
    return ET.tostring(root, encoding='unicode')
