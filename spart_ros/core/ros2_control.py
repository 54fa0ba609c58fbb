"""
The URDF's ``<ros2_control>`` tags: what ros2_control's resource manager reads (no ROS needed).

A ``<ros2_control name=... type="system|actuator|sensor">`` tag names its hardware plugin
(``<hardware><plugin>gz_ros2_control/GazeboSimSystem</plugin><param name=...>...</param>``)
and the joints, sensors and GPIOs it drives, each with its command and state interfaces::

    <joint name="joint1">
      <command_interface name="effort"><param name="min">-30</param><param name="max">30</param>
      </command_interface>
      <state_interface name="position"><param name="initial_value">0.5</param></state_interface>
      <state_interface name="velocity"/>
    </joint>

gz_ros2_control, mujoco_ros2_control and mock_components read the same block, so one robot
description serves every plant.  :func:`ros2_control_from_urdf` parses it into plain objects;
nothing here loads a plugin.  Errors (:class:`~.errors.URDFError`) name the tag, joint and
interface at fault.
"""

from dataclasses import dataclass, field
import math
import xml.etree.ElementTree as ET

from .errors import URDFError
from .model import FIXED
from .urdf import _DECLARATION, _load_text, urdf_text

__all__ = [
    'Interface',
    'ComponentJoint',
    'HardwareComponent',
    'ros2_control_from_urdf',
    'initial_values',
    'COMPONENT_TYPES',
]

#: Values of the ``type`` attribute that ros2_control's hardware component parser accepts.
COMPONENT_TYPES = ('system', 'actuator', 'sensor')


@dataclass(frozen=True)
class Interface:
    """
    A command or state interface.

    ``name`` (e.g. 'effort'), ``params``: its ``<param>`` values as text (e.g. {'min': '-30',
    'initial_value':
    '0.5'}), and the optional ``data_type`` / ``size`` attributes (GPIOs).
    """

    name: str
    params: dict = field(default_factory=dict)
    data_type: str = ''
    size: int = 1

    @property
    def initial_value(self):
        """Return the ``initial_value`` param as a float, or None when absent."""
        text = self.params.get('initial_value')
        return None if text is None else float(text)


@dataclass(frozen=True)
class ComponentJoint:
    """
    A ``<joint>``, ``<sensor>`` or ``<gpio>`` of a component.

    ``name``, ``command_interfaces`` and ``state_interfaces`` (:class:`Interface` tuples),
    ``params`` (its ``<param>`` values as text), and for a joint the optional ``mimic`` attribute
    (None when absent).
    """

    name: str
    command_interfaces: tuple = ()
    state_interfaces: tuple = ()
    params: dict = field(default_factory=dict)
    mimic: bool = None

    @property
    def command_names(self):
        return [i.name for i in self.command_interfaces]

    @property
    def state_names(self):
        return [i.name for i in self.state_interfaces]

    @property
    def initial_values(self):
        """{state interface: initial value} for the state interfaces that give one."""
        return {
            i.name: i.initial_value for i in self.state_interfaces if i.initial_value is not None
        }


@dataclass(frozen=True)
class HardwareComponent:
    """
    One ``<ros2_control>`` tag.

    ``name``, ``type`` ('system', 'actuator' or 'sensor'), ``plugin`` (the hardware interface
    class, e.g. 'mock_components/GenericSystem'), hardware ``params``, ``joints``, ``sensors`` and
    ``gpios`` (:class:`ComponentJoint`, in file order).
    """

    name: str
    type: str
    plugin: str
    params: dict = field(default_factory=dict)
    joints: tuple = ()
    sensors: tuple = ()
    gpios: tuple = ()

    @property
    def joint_names(self):
        return [j.name for j in self.joints]

    def joints_commanding(self, interface):
        """
        Return the names of the joints with the command interface ``interface`` (e.g. 'effort').

        In order.
        """
        return [j.name for j in self.joints if interface in j.command_names]


def _local(tag):
    return tag.rsplit('}', 1)[-1] if isinstance(tag, str) else ''


def _params(el, where):
    out = {}
    for p in el:
        if _local(p.tag) != 'param':
            continue
        name = p.get('name')
        if not name:
            raise URDFError(f'{where}: a <param> has no name="..."')
        if name in out:
            raise URDFError(f'{where}: <param name="{name}"> is given twice')
        out[name] = (p.text or '').strip()
    return out


def _interface(el, where):
    name = el.get('name')
    if not name:
        raise URDFError(f'{where}: a <{_local(el.tag)}> has no name="..."')
    where = f'{where}, {_local(el.tag)} {name!r}'
    params = _params(el, where)
    if 'initial_value' in params:
        try:
            value = float(params['initial_value'])
        except ValueError:
            raise URDFError(
                f'{where}: initial_value {params["initial_value"]!r} is not a number'
            ) from None
        if not math.isfinite(value):
            raise URDFError(
                f'{where}: initial_value {params["initial_value"]!r} is NaN or infinity'
            )
    size = el.get('size', '1')
    try:
        size = int(size)
    except ValueError:
        raise URDFError(f'{where}: size="{size}" is not an integer') from None
    return Interface(name, params, el.get('data_type', ''), size)


def _member(el, where):
    name = el.get('name')
    kind = _local(el.tag)
    if not name:
        raise URDFError(f'{where}: a <{kind}> has no name="..."')
    where = f'{where}, {kind} {name!r}'
    commands, states, seen = [], [], set()
    for c in el:
        tag = _local(c.tag)
        if tag in ('command_interface', 'state_interface'):
            interface = _interface(c, where)
            if (tag, interface.name) in seen:
                raise URDFError(f'{where}: {tag} {interface.name!r} is given twice')
            seen.add((tag, interface.name))
            (commands if tag == 'command_interface' else states).append(interface)
    mimic = el.get('mimic')
    if mimic is not None:
        if mimic.lower() not in ('true', 'false'):
            raise URDFError(f'{where}: mimic="{mimic}" is not true or false')
        mimic = mimic.lower() == 'true'
    return ComponentJoint(name, tuple(commands), tuple(states), _params(el, where), mimic)


def _component(el, label):
    name = el.get('name')
    if not name:
        raise URDFError(f'{label}: a <ros2_control> tag has no name="..."')
    where = f'{label}: <ros2_control name="{name}">'
    ctype = el.get('type', '')
    if ctype.lower() not in COMPONENT_TYPES:
        raise URDFError(f'{where}: type="{ctype}" is not one of {", ".join(COMPONENT_TYPES)}')
    hardware = [c for c in el if _local(c.tag) == 'hardware']
    if len(hardware) != 1:
        raise URDFError(f'{where}: needs exactly one <hardware> element, found {len(hardware)}')
    plugins = [c for c in hardware[0] if _local(c.tag) == 'plugin']
    plugin = (plugins[0].text or '').strip() if len(plugins) == 1 else ''
    if not plugin:
        found = f'{len(plugins)}' if len(plugins) != 1 else 'an empty one'
        raise URDFError(
            f'{where}: <hardware> needs one non-empty <plugin> (e.g. '
            f'mock_components/GenericSystem), found {found}'
        )
    members = {'joint': [], 'sensor': [], 'gpio': []}
    for c in el:
        kind = _local(c.tag)
        if kind in members:
            members[kind].append(_member(c, where))
    for kind, items in members.items():
        names = [m.name for m in items]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise URDFError(f'{where}: {kind}s {twice} are listed twice')
    return HardwareComponent(
        name,
        ctype.lower(),
        plugin,
        _params(hardware[0], f'{where} <hardware>'),
        tuple(members['joint']),
        tuple(members['sensor']),
        tuple(members['gpio']),
    )


def ros2_control_from_urdf(source, robot=None, xacro_args=None):
    """
    Return the ``<ros2_control>`` tags of a URDF, as a list of :class:`HardwareComponent`.

    Empty when the URDF has none.

    ``source``: URDF text, bytes or a file path (``.xacro`` is expanded, ``xacro_args`` as a dict,
    as :func:`~.urdf.robot_from_urdf` does).  With ``robot`` (the model of the same URDF), every
    joint named in a tag must be one of its moving joints, and a joint may belong to one component
    only: URDFError naming it otherwise.
    """
    _, label, _ = _load_text(source)
    text = urdf_text(source, xacro_args)
    try:
        root = ET.fromstring(_DECLARATION.sub('', text.lstrip('\ufeff'), count=1))
    except ET.ParseError as err:
        raise URDFError(f'{label}: the text is not valid XML: {err}') from None
    components = [_component(el, label) for el in root if _local(el.tag) == 'ros2_control']
    owner = {}
    for comp in components:
        for joint in comp.joints:
            if joint.name in owner:
                raise URDFError(
                    f'{label}: joint {joint.name!r} is in two <ros2_control> tags '
                    f'({owner[joint.name]!r} and {comp.name!r})'
                )
            owner[joint.name] = comp.name
    if robot is not None:
        types = {j.name: j.type for j in robot.joints}
        for comp in components:
            for joint in comp.joints:
                if joint.name not in types:
                    raise URDFError(
                        f'{label}: <ros2_control name="{comp.name}"> names joint {joint.name!r}, '
                        f'which is not a joint of robot {robot.name!r} (moving joints: '
                        f'{robot.q_names})'
                    )
                if types[joint.name] == FIXED:
                    raise URDFError(
                        f'{label}: <ros2_control name="{comp.name}"> names joint {joint.name!r}, '
                        'which is fixed (a fixed joint has no interfaces)'
                    )
    return components


def initial_values(components, interface):
    """
    Return {joint: initial value} of the state interface ``interface`` (e.g. 'position').

    Over the joints of ``components`` (:class:`HardwareComponent`) that give one
    (``initial_value``).
    """
    out = {}
    for component in components:
        for joint in component.joints:
            value = joint.initial_values.get(interface)
            if value is not None:
                out[joint.name] = value
    return out
