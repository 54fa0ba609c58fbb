"""
URDF -> SPART robot model (SPART: urdf2robot).

The reader takes what urdfdom (robot_state_publisher, Pinocchio, MoveIt) takes and reads
only what dynamics needs: links, ``<inertial>``, joints (type, parent, child, origin,
axis), ``<limit>``, ``<mimic>`` and ``<dynamics damping friction>`` (into
``joint.dynamics``, with a rotor inertia, armature, given by keyword or YAML).  Everything
else (visual, collision, material, texture, transmission, gazebo, calibration,
safety_controller, unknown tags)
is ignored (a debug log line names it), so a cosmetic slip never refuses a robot.
It is more lenient than urdfdom where SPART's own models need it (revolute joints without
``<limit>``) and stricter where numbers would be wrong silently (NaN or infinity,
duplicate names).  docs/urdf_loading.md has the full list of rules.
"""

import logging
import os
import re
import threading
import warnings
import xml.etree.ElementTree as ET

import numpy as np

from .attitude import rpy_rotation
from .errors import ModelWarning, SpartError, UnsupportedJointError, URDFError
from .joint_friction import apply_joint_dynamics, joint_dynamics_overrides
from .model import (
    _build_tree,
    _JointSpec,
    _LinkSpec,
    homogeneous,
    JOINT_TYPES,
    JointDynamics,
    JointLimits,
    Mimic,
)
from .packages import find_package, PackageNotFound

log = logging.getLogger(__name__)

#: Joint types of the URDF specification (urdfdom refuses any other).
URDF_JOINT_TYPES = ('revolute', 'continuous', 'prismatic', 'fixed', 'floating', 'planar')
_XACRO_MARKERS = re.compile(r'\$\{|\$\(|<xacro:')  # (xacro's output may keep xmlns:xacro)
_XACRO_NAMESPACE = re.compile(r'^\{[^}]*/xacro\}')  # www.ros.org/wiki/xacro, ros.org/wiki/xacro
#: Elements the reader takes numbers or names from (inside <link> and <joint>).
_READ_ELEMENTS = {
    'link',
    'joint',
    'inertial',
    'origin',
    'mass',
    'inertia',
    'parent',
    'child',
    'axis',
    'limit',
    'mimic',
    'dynamics',
}
_DECLARATION = re.compile(r'^\s*<\?xml[^>]*\?>')
_ENCODING = re.compile(rb'^\s*<\?xml[^>]*encoding\s*=\s*["\']([A-Za-z0-9._-]+)["\']')
_XACRO_LOCK = threading.Lock()  # xacro keeps its state in module globals


# --- text --------------------------------------------------------------------------------


def _decode(data, label):
    """``str`` from URDF bytes: a BOM, else the declared encoding, else UTF-8."""
    for bom, codec in (
        (b'\xef\xbb\xbf', 'utf-8-sig'),
        (b'\xff\xfe', 'utf-16'),
        (b'\xfe\xff', 'utf-16'),
    ):
        if data.startswith(bom):
            break
    else:
        m = _ENCODING.match(data)
        codec = m.group(1).decode('ascii') if m else 'utf-8'
    try:
        return data.decode(codec)
    except (LookupError, UnicodeDecodeError) as err:
        raise URDFError(f'{label}: cannot decode the text as {codec}: {err}') from None


def _load_text(source):
    """
    (text, label, path): the URDF as str, a name for messages, the file path or None.

    ``source``: a path (str or os.PathLike), URDF text (a str whose first non-blank
    character is '<') or bytes, with or without an XML declaration naming an encoding.
    """
    if isinstance(source, (bytes, bytearray)):
        return _decode(bytes(source), 'URDF text'), 'URDF text', None
    if not isinstance(source, (str, os.PathLike)):
        raise URDFError(f'expected URDF text, bytes or a file path, got {type(source).__name__}')
    if isinstance(source, str) and source.lstrip('\ufeff \t\r\n').startswith('<'):
        return source, 'URDF text', None
    path = os.fspath(source)
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not path.strip():
        raise URDFError(
            'the robot description is empty (expected URDF text, bytes or a file path)'
        )
    if os.path.isdir(path):
        raise URDFError(_folder_message(path))
    if not os.path.isfile(path):
        hint = (
            ' (it has leading or trailing whitespace)'
            if path != path.strip() and os.path.isfile(path.strip())
            else ''
        )
        raise URDFError(f'{path!r} is neither URDF text nor an existing file{hint}')
    try:
        with open(path, 'rb') as f:
            data = f.read()
    except OSError as err:
        raise URDFError(f'{path}: cannot read the file: {err}') from None
    return _decode(data, path), path, path


def _folder_message(path):
    """Return the error for a folder given as a URDF: what it holds that could be meant."""
    names = sorted(
        n
        for n in os.listdir(path)
        if n.endswith(('.urdf', '.xacro')) and os.path.isfile(os.path.join(path, n))
    )
    if not names:
        return f'{path!r} is a folder, not a URDF file, and it holds no .urdf or .xacro file'
    return (
        f'{path!r} is a folder, not a URDF file: give one of its URDF/xacro files: '
        + ', '.join(os.path.join(path, n) for n in names)
    )


def _expand_xacro(text, label, path, xacro_args, package_paths=None):
    """
    URDF text from xacro text (or a .xacro file), with xacro's Python API.

    ``$(find pkg)`` by :func:`spart_ros.core.packages.find_package` (``package_paths`` first,
    then the process's folders, ROS_PACKAGE_PATH and the ament index, where xacro looks).
    """
    how = (
        'run xacro first (e.g. `xacro robot.urdf.xacro name:=value > robot.urdf`) and load its '
        'output'
    )
    try:
        import xacro
        from xacro import substitution_args
    except ImportError:  # pragma: no cover - xacro is a dependency
        raise URDFError(
            f'{label} holds xacro constructs (${{...}}, <xacro:...>) and the xacro package is not '
            f'installed: {how}'
        ) from None

    def find(package):
        return find_package(package, package_paths or ())

    with _XACRO_LOCK:
        saved = substitution_args._eval_find, substitution_args._eval_dict.get('find')
        substitution_args._eval_find = substitution_args._eval_dict['find'] = find
        try:
            xacro.init_stacks(
                None if path is None else os.path.abspath(path)
            )  # includes: beside the file
            doc = xacro.parse(_DECLARATION.sub('', text.lstrip('\ufeff'), count=1))
            xacro.process_doc(doc, mappings=dict(xacro_args or {}))
            return doc.toxml()
        except Exception as err:  # XacroException, ExpatError, NameError from an expression...
            missing = _cause(err, PackageNotFound)
            if missing is not None:  # said once, with where it looked and how to name a folder
                raise PackageNotFound(f'{label}: {missing}') from None
            detail = ' '.join(str(err).split()) or type(err).__name__  # one line
            raise URDFError(
                f'{label} holds xacro constructs (${{...}}, <xacro:...>) that xacro could not '
                f'expand: {detail}; {how}'
            ) from None
        finally:
            substitution_args._eval_find = saved[0]
            substitution_args._eval_dict['find'] = saved[1]


def _cause(err, kind):
    """Return the exception of type ``kind`` in ``err`` (xacro's ``exc``, causes), or None."""
    seen = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, kind):
            return err
        seen.add(id(err))
        err = getattr(err, 'exc', None) or err.__cause__ or err.__context__
    return None


def _parse_xml(text, label):
    text = _DECLARATION.sub('', text.lstrip('\ufeff'), count=1)
    try:
        root = ET.fromstring(text)
    except ET.ParseError as err:
        raise URDFError(f'{label}: the text is not valid XML: {err}') from None
    if _local(root.tag) != 'robot':
        raise URDFError(
            f'{label}: the XML root element is <{_local(root.tag)}>, not <robot>: this is not URDF'
        )
    return root


# --- elements and numbers ------------------------------------------------------------------


def _local(tag):
    """Tag name without an XML namespace."""
    return tag.rsplit('}', 1)[-1] if isinstance(tag, str) else ''


def _children(el, name):
    return [c for c in el if _local(c.tag) == name]


def _child(el, name):
    """Return the first child element called ``name`` (urdfdom reads the first one), or None."""
    for c in el:
        if _local(c.tag) == name:
            return c
    return None


def _number(el, attr, where, default=None):
    """Return a finite float from an attribute (``default`` if absent; URDFError if required)."""
    text = el.get(attr)
    if text is None:
        if default is None:
            raise URDFError(f'{where}: <{_local(el.tag)}> has no {attr}="..."')
        return default
    try:
        value = float(text)
    except ValueError:
        raise URDFError(f'{where}: <{_local(el.tag)} {attr}="{text}">: not a number') from None
    if not np.isfinite(value):
        raise URDFError(f'{where}: <{_local(el.tag)} {attr}="{text}">: NaN or infinity')
    return value


def _vector(el, attr, where, default=(0.0, 0.0, 0.0)):
    """Return a finite 3-vector from an attribute of three numbers (``default`` if absent)."""
    text = None if el is None else el.get(attr)
    if text is None:
        return np.array(default, dtype=float)
    parts = text.split()
    try:
        value = np.array([float(p) for p in parts])
    except ValueError:
        raise URDFError(
            f'{where}: <{_local(el.tag)} {attr}="{text}">: not three numbers'
        ) from None
    if value.shape != (3,):
        raise URDFError(
            f'{where}: <{_local(el.tag)} {attr}="{text}">: expected 3 numbers, got {len(parts)}'
        )
    if not np.all(np.isfinite(value)):
        raise URDFError(f'{where}: <{_local(el.tag)} {attr}="{text}">: NaN or infinity')
    return value


def _origin(el, where):
    """4x4 transform of an ``<origin>`` child of ``el`` (identity when there is none)."""
    origin = _child(el, 'origin')
    if origin is None:
        return np.eye(4)
    return homogeneous(rpy_rotation(_vector(origin, 'rpy', where)), _vector(origin, 'xyz', where))


def _name(el, kind, label):
    name = el.get('name')
    if not name:
        raise URDFError(f'{label}: a <{kind}> has no name="..."')
    return name


# --- links and joints ----------------------------------------------------------------------


def _link_spec(el, name):
    """(_LinkSpec, has_inertial) of a ``<link>``: no ``<inertial>`` = a massless frame."""
    where = f'link {name!r}'
    inertial = _child(el, 'inertial')
    if inertial is None:
        return _LinkSpec(name, 0.0, np.zeros((3, 3)), np.eye(4)), False
    mass_el = _child(inertial, 'mass')
    if mass_el is None:
        raise URDFError(
            f'{where}: <inertial> has no <mass value="..."/> (leave out the whole <inertial> '
            'for a massless frame)'
        )
    mass = _number(mass_el, 'value', where)
    inertia_el = _child(inertial, 'inertia')
    if inertia_el is None:
        raise URDFError(f'{where}: <inertial> has no <inertia ixx=... iyz=.../>')
    i = {k: _number(inertia_el, k, where) for k in ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz')}
    inertia = np.array(
        [
            [i['ixx'], i['ixy'], i['ixz']],
            [i['ixy'], i['iyy'], i['iyz']],
            [i['ixz'], i['iyz'], i['izz']],
        ]
    )
    return _LinkSpec(name, mass, inertia, _origin(inertial, where)), True


def _limits(el, jtype, where):
    """
    ``JointLimits`` of a joint: urdfdom's defaults (lower = upper = 0 when ``<limit>`` omits them).

    No ``<limit>`` (SPART's URDFs) or a continuous joint: no position bounds.
    """
    limit = _child(el, 'limit')
    if limit is None:
        return JointLimits()
    bounded = jtype in ('revolute', 'prismatic')
    return JointLimits(
        lower=_number(limit, 'lower', where, 0.0) if bounded else -np.inf,
        upper=_number(limit, 'upper', where, 0.0) if bounded else np.inf,
        effort=_number(limit, 'effort', where, np.inf),
        velocity=_number(limit, 'velocity', where, np.inf),
    )


def _dynamics(el, jtype, where):
    """
    Return the JointDynamics of a joint's ``<dynamics damping friction>``.

    urdfdom's defaults 0; other attributes, e.g. Franka's, ignored; none for fixed and floating
    joints.
    """
    dyn = _child(el, 'dynamics')
    if dyn is None or jtype in ('fixed', 'floating', 'planar'):
        return JointDynamics()
    values = {key: _number(dyn, key, where, 0.0) for key in ('damping', 'friction')}
    for key, value in values.items():
        if value < 0:
            raise URDFError(
                f'{where}: <dynamics {key}="{dyn.get(key)}">: negative (damping and friction take '
                'energy out: >= 0)'
            )
    return JointDynamics(**values)


def _joint_spec(el, name):
    """(_JointSpec with type as a URDF string, raw mimic tuple or None)."""
    where = f'joint {name!r}'
    jtype = el.get('type')
    if jtype is None:
        raise URDFError(f'{where}: no type="..." (URDF joints are {", ".join(URDF_JOINT_TYPES)})')
    if jtype == 'spherical':
        raise UnsupportedJointError(
            f'{where}: type "spherical" is not URDF (urdfdom refuses it too): model it '
            'as three revolute joints with orthogonal axes through two massless links'
        )
    if jtype not in URDF_JOINT_TYPES:
        raise URDFError(
            f'{where}: unknown type {jtype!r} (URDF joints are {", ".join(URDF_JOINT_TYPES)})'
        )
    ends = {}
    for role in ('parent', 'child'):
        e = _child(el, role)
        if e is None or not e.get('link'):
            raise URDFError(f'{where}: no <{role} link="..."/>')
        ends[role] = e.get('link')
    axis_el = _child(el, 'axis')
    if jtype in ('fixed', 'floating'):
        # urdfdom does not read their <axis>; SPART keeps it (its models' data): kept when it
        # is three finite numbers, else ignored
        try:
            axis = (
                np.zeros(3) if axis_el is None else _vector(axis_el, 'xyz', where, (0.0, 0.0, 0.0))
            )
        except URDFError as err:
            log.debug('%s (ignored: a %s joint has no axis)', err, jtype)
            axis = np.zeros(3)
    elif jtype == 'planar':
        axis = np.zeros(3) if axis_el is None else _vector(axis_el, 'xyz', where, (1.0, 0.0, 0.0))
    elif axis_el is None:
        warnings.warn(
            f'{where} has no <axis>: using the URDF default (1, 0, 0)', ModelWarning, stacklevel=2
        )
        axis = np.array([1.0, 0.0, 0.0])
    else:
        axis = _vector(axis_el, 'xyz', where, (1.0, 0.0, 0.0))
    mimic = None
    mimic_el = _child(el, 'mimic')
    if mimic_el is not None:
        leader = mimic_el.get('joint')
        if not leader:
            raise URDFError(f'{where}: <mimic> has no joint="..."')
        mimic = Mimic(
            leader,
            _number(mimic_el, 'multiplier', where, 1.0),
            _number(mimic_el, 'offset', where, 0.0),
        )
    spec = _JointSpec(
        name,
        jtype,
        ends['parent'],
        ends['child'],
        _origin(el, where),
        axis,
        _limits(el, jtype, where),
        dynamics=_dynamics(el, jtype, where),
    )
    return spec, mimic


def _massless(spec):
    return float(spec.mass) == 0.0 and not np.any(spec.inertia)


def _root_options(links, joints):
    """
    Handle a ``world``-like root: returns (links, joints, options for Robot).

    - a massless root whose only joint is ``floating``: root and joint dropped, the child is
      the base, ``base_hint='floating'``;
    - a massless root named ``world`` whose only joint is ``fixed``: root and joint dropped,
      the child is the base, ``base_hint='fixed'``, ``base_pose`` = the joint's origin (the
      base link frame in the world frame);
    - any other root named ``world`` stays the base (``base_hint='fixed'``, identity pose).
    Any other floating joint, and every planar joint, is an UnsupportedJointError.
    """
    children = {j.child for j in joints}
    roots = [name for name in links if name not in children]
    options = {}
    if len(roots) == 1:
        root = roots[0]
        out = [j for j in joints if j.parent == root]
        if (
            len(out) == 1
            and _massless(links[root])
            and (out[0].type == 'floating' or (root == 'world' and out[0].type == 'fixed'))
        ):
            joint = out[0]
            links = {k: v for k, v in links.items() if k != root}
            joints = [j for j in joints if j is not joint]
            options = {
                'base_hint': joint.type,
                'world_link': root,
                'base_pose': joint.origin if joint.type == 'fixed' else None,
            }
        elif root == 'world':
            options = {'base_hint': 'fixed', 'base_pose': np.eye(4)}
    for j in joints:
        if j.type == 'planar':
            raise UnsupportedJointError(
                f'joint {j.name!r}: type "planar" is not supported: model it as two prismatic '
                'joints (x, y) and a revolute joint (about the plane normal) through two massless '
                'links'
            )
        if j.type == 'floating':
            raise UnsupportedJointError(
                f'joint {j.name!r}: a "floating" joint is supported only as the one joint of a '
                'massless root link (such as world), where it means a floating base at its child; '
                f'here it joins {j.parent!r} to {j.child!r}: make {j.child!r} a separate robot, '
                'or remove the joint and use a floating base'
            )
    return links, joints, options


def _needs_xacro(text, path):
    """
    Return True for a ``.xacro`` file, and for text whose links or joints use xacro.

    An element in xacro's namespace, or ``${...}`` / ``$(...)`` in an attribute the reader takes.
    Markers elsewhere (a ``$(find pkg)`` mesh path, a shell line in a ``<gazebo>`` plugin) leave
    the text to the plain reader, as urdfdom reads it.
    """
    if path is not None and path.endswith('.xacro'):
        return True
    if not _XACRO_MARKERS.search(text):
        return False
    try:
        root = ET.fromstring(_DECLARATION.sub('', text.lstrip('\ufeff'), count=1))
    except ET.ParseError:
        return True  # e.g. an unbound xacro: prefix: xacro's error says more
    for el in root.iter():
        if not isinstance(el.tag, str) or _XACRO_NAMESPACE.match(el.tag):
            return True
    for top in root:
        if _local(top.tag) in ('link', 'joint'):
            for el in top.iter():
                if _local(el.tag) in _READ_ELEMENTS and any(
                    '${' in v or '$(' in v for v in el.attrib.values()
                ):
                    return True
    log.debug('URDF text holds ${...} or $(...) outside links and joints: read without xacro')
    return False


def _xacro_refused(label):
    return URDFError(
        f'{label} holds xacro constructs (${{...}}, $(...), <xacro:...>) in its links or joints: '
        'expand it first (robot_state_publisher publishes expanded URDF; `xacro robot.urdf.xacro '
        '> robot.urdf`)'
    )


def _robot_from_text(
    text, label, path, strict, xacro_args, expand_xacro, overrides, package_paths=None
):
    if _needs_xacro(text, path):
        if not expand_xacro:
            raise _xacro_refused(label)
        text = _expand_xacro(text, label, path, xacro_args, package_paths)
    root = _parse_xml(text, label)
    ignored = sorted(
        {_local(c.tag) for c in root if _local(c.tag) not in ('link', 'joint')} - {''}
    )
    if ignored:
        log.debug(
            '%s: ignoring elements without dynamics: %s',
            label,
            ', '.join(f'<{t}>' for t in ignored),
        )
    links, massless, joints, mimic = {}, [], [], {}
    for el in _children(root, 'link'):
        name = _name(el, 'link', label)
        if name in links:
            raise URDFError(f'link {name!r} is defined twice (link names must be unique)')
        links[name], has_inertial = _link_spec(el, name)
        if not has_inertial:
            massless.append(name)
    if not links:
        raise URDFError(f'robot {root.get("name", "")!r} has no <link>')
    for el in _children(root, 'joint'):
        name = _name(el, 'joint', label)
        if any(j.name == name for j in joints):
            raise URDFError(f'joint {name!r} is defined twice (joint names must be unique)')
        spec, m = _joint_spec(el, name)
        joints.append(spec)
        if m is not None:
            mimic[name] = m
    links, joints, options = _root_options(links, joints)
    massless = [name for name in massless if name in links]
    if massless:
        warnings.warn(
            f'links {massless} have no <inertial>: taken as massless frames (fine on fixed '
            'joints; forward dynamics needs mass behind every moving joint)',
            ModelWarning,
            stacklevel=2,
        )
    types = {j.name: j.type for j in joints}
    for follower, m in mimic.items():
        why = (
            'is fixed'
            if types[follower] == 'fixed'
            else 'is not a joint of the model'
            if m.leader not in types
            else 'is fixed'
            if types[m.leader] == 'fixed'
            else ''
        )
        if why:
            who = follower if types[follower] == 'fixed' else m.leader
            warnings.warn(
                f'joint {follower!r}: <mimic joint="{m.leader}"> ignored: joint {who!r} {why}',
                ModelWarning,
                stacklevel=2,
            )
        else:
            joints = [j if j.name != follower else _replace_mimic(j, m) for j in joints]
    dynamics = apply_joint_dynamics(
        [j.name for j in joints],
        [JOINT_TYPES[j.type] for j in joints],
        [j.dynamics for j in joints],
        overrides,
    )
    joint_specs = [
        _JointSpec(
            j.name, JOINT_TYPES[j.type], j.parent, j.child, j.origin, j.axis, j.limits, j.mimic, d
        )
        for j, d in zip(joints, dynamics)
    ]
    return _build_tree(
        root.get('name') or 'robot',
        list(links.values()),
        joint_specs,
        origin='urdf',
        strict=strict,
        **options,
    )


def _replace_mimic(spec, mimic):
    return _JointSpec(
        spec.name,
        spec.type,
        spec.parent,
        spec.child,
        spec.origin,
        spec.axis,
        spec.limits,
        mimic,
        spec.dynamics,
    )


# --- entry ---------------------------------------------------------------------------------


def robot_from_urdf(
    source,
    verbose=False,
    strict=False,
    xacro_args=None,
    expand_xacro=True,
    joint_dynamics=None,
    armature=None,
    package_paths=None,
):
    """
    Build a robot from URDF.

    (SPART: urdf2robot)

    ``source``: a file path (str or os.PathLike), URDF text (str) or bytes, with or without
    an ``<?xml ... encoding=...?>`` declaration.  ``.xacro`` files, and text still holding
    ``${...}`` or ``<xacro:...>`` in its links or joints, are expanded with xacro
    (``xacro_args``: its ``name:=value`` arguments as a dict) or refused with a URDFError
    saying to run xacro first; ``expand_xacro=False`` refuses them without running xacro
    (for text from other processes, e.g. a ``robot_description`` topic: xacro evaluates
    expressions and reads files and environment variables).  ``$(find pkg)``: the folders
    ``package_paths`` (list of str) first, then the process's, ROS_PACKAGE_PATH and the ament
    index (:mod:`spart_ros.core.packages`; a PackageNotFound names where it looked).

    Returns ``(robot, robot_keys)``, links and joints numbered as SPART numbers them (``verbose``:
    print the robot's one-line summary).
    Revolute and continuous joints are SPART type 1, prismatic 2, fixed 0.  Rules (details
    in docs/urdf_loading.md):

    - a link without ``<inertial>`` is a massless frame (a ModelWarning names them);
      forward dynamics then refuses only what it cannot do (SingularModelError naming the
      joints and links, :meth:`Robot.check_invertible`);
    - an inertia no rigid body has (not positive semi-definite, triangle inequality broken,
      beyond rounding) is used as given with an InertiaWarning; ``strict=True`` refuses it;
    - a massless root with a ``floating`` joint (Gazebo's ``world``) means a floating base at
      its child (``robot.base_hint == 'floating'``); a ``world`` root with a ``fixed`` joint
      means a fixed base with that pose (``base_hint == 'fixed'``, ``robot.base_pose`` 4x4);
      other floating joints and planar joints are UnsupportedJointError saying how to model them;
    - ``<mimic>`` tags are kept in ``robot.mimic`` (SPART's functions keep full coordinates,
      with a MimicJointWarning; ``robot.coordinates`` maps the independent ones);
    - a moving joint without ``<axis>`` gets the URDF default (1, 0, 0) with a warning;
      non-unit axes are normalized with a warning; ``<limit>`` values go to ``joint.limits``;
    - ``<dynamics damping friction>`` of moving joints go to ``joint.dynamics``
      (:class:`~spart_ros.core.model.JointDynamics`, with ``armature`` 0), overridden by
      ``joint_dynamics`` (a mapping ``{joint: {armature, damping, friction}}``, ``'*'`` for every
      moving joint, or the path of a YAML file holding it) and ``armature`` (a number for
      every moving joint, or ``{joint: number}``): see :mod:`spart_ros.core.joint_friction`.
      SPART's functions never use them; the fast path does with ``joint_dynamics=True``.

    Every error (URDFError, TopologyError, UnsupportedJointError, InertiaError) and warning
    starts with the file path (or "URDF text") and names the link or joint.
    """
    overrides = joint_dynamics_overrides(joint_dynamics, armature)
    text, label, path = _load_text(source)
    caught = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            robot = _robot_from_text(
                text, label, path, strict, xacro_args, expand_xacro, overrides, package_paths
            )
    except SpartError as err:
        message = str(err)
        raise type(err)(message if message.startswith(label) else f'{label}: {message}') from None
    finally:
        for w in caught:
            message = str(w.message)
            warnings.warn(
                message if message.startswith(label) else f'{label}: {message}',
                w.category,
                stacklevel=2,
            )
    if verbose:
        print(robot.summary())
    return robot, robot.keys


def urdf_text(source, xacro_args=None, package_paths=None):
    """
    Return the URDF text :func:`robot_from_urdf` reads from ``source`` (path, text or bytes).

    Decoded, and expanded by xacro when it is xacro (``xacro_args``: its ``name:=value``
    arguments as a dict; ``package_paths``: folders for ``$(find pkg)``, as
    :func:`robot_from_urdf`'s), for other readers of the same robot, e.g. MuJoCo in
    :mod:`spart_ros.sim`.
    """
    text, label, path = _load_text(source)
    if _needs_xacro(text, path):
        text = _expand_xacro(text, label, path, xacro_args, package_paths)
    return text
