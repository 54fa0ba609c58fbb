"""URDF -> SPART robot model (SPART: urdf2robot)."""
import os
import warnings

import numpy as np

from .attitude import rpy_rotation
from .errors import URDFError, UnsupportedJointError, ModelError
from .model import JOINT_TYPES, FIXED, JointLimits, _JointSpec, _LinkSpec, _build_tree, homogeneous


def _origin(origin):
    if origin is None:
        return np.eye(4)
    xyz = np.asarray(origin.xyz if origin.xyz is not None else [0, 0, 0], dtype=float)
    rpy = np.asarray(origin.rpy if origin.rpy is not None else [0, 0, 0], dtype=float)
    return homogeneous(rpy_rotation(rpy), xyz)


def _read_text(source):
    """URDF text from an XML string or a file path."""
    if not isinstance(source, (str, bytes, os.PathLike)):
        raise URDFError(f'expected URDF text or a file path, got {type(source).__name__}')
    if isinstance(source, bytes):
        source = source.decode('utf-8', errors='replace')
    text = str(source)
    if '<' not in text:
        if not os.path.isfile(text):
            raise URDFError(f'{text!r} is neither URDF text nor an existing file')
        with open(text, encoding='utf-8') as f:
            text = f.read()
    return text


def robot_from_urdf(source, verbose=False):
    """Build a robot from URDF (XML text or a file path).  (SPART: urdf2robot)

    Returns ``(robot, robot_keys)``.  Links and joints are numbered as SPART
    does; every link needs an ``<inertial>``.  Revolute and continuous joints are
    SPART type 1, prismatic type 2, fixed type 0; planar and floating joints are
    rejected.  A moving joint without ``<axis>`` gets the URDF default (1, 0, 0)
    and a warning (SPART itself refuses it); non-unit axes are normalized with a
    warning.  ``<limit>`` values are kept in ``joint.limits``.

    Raises URDFError (not URDF, missing inertial...), TopologyError,
    UnsupportedJointError, InertiaError, SingularModelError.
    """
    text = _read_text(source)
    try:
        from urdf_parser_py import urdf as urdf_parser
    except ImportError as err:  # pragma: no cover - dependency missing
        raise URDFError('urdf_parser_py is not installed (pip install urdfdom-py)') from err
    import xml.etree.ElementTree as ET
    try:
        root = ET.fromstring(text.encode('utf-8') if text.lstrip().startswith('<?xml') else text)
    except ET.ParseError as err:
        raise URDFError(f'the text is not valid XML: {err}') from None
    if root.tag != 'robot':
        raise URDFError(f'the XML root element is <{root.tag}>, not <robot>: this is not URDF')
    for jel in root.findall('joint'):
        jtype = jel.get('type')
        if jtype not in JOINT_TYPES:
            raise UnsupportedJointError(
                f'joint {jel.get("name")!r}: type {jtype!r} is not supported (SPART joints are fixed, revolute, '
                'continuous and prismatic; model a planar or floating joint as a chain of those)')
    import contextlib
    import io
    try:
        with contextlib.redirect_stderr(io.StringIO()), warnings.catch_warnings():
            warnings.simplefilter('ignore')
            model = urdf_parser.URDF.from_xml_string(text)
    except Exception as err:  # urdf_parser_py raises many types
        raise URDFError(f'URDF could not be parsed: {err}') from None

    link_specs = []
    for link in model.links:
        if link.inertial is None:
            raise URDFError(f'link {link.name!r} has no <inertial>: every link needs mass and inertia '
                            '(give massless frames <mass value="0"/> and a zero <inertia>)')
        inertial = link.inertial
        if inertial.mass is None:
            raise URDFError(f'link {link.name!r}: <inertial> has no <mass>')
        i = inertial.inertia
        if i is None:
            raise URDFError(f'link {link.name!r}: <inertial> has no <inertia>')
        I = np.array([[i.ixx, i.ixy, i.ixz], [i.ixy, i.iyy, i.iyz], [i.ixz, i.iyz, i.izz]], dtype=float)
        link_specs.append(_LinkSpec(link.name, float(inertial.mass), I, _origin(inertial.origin)))

    joint_specs = []
    for j in model.joints:
        jtype = JOINT_TYPES[j.type]
        if j.axis is not None:
            axis = np.asarray(j.axis, dtype=float)
        elif jtype == FIXED:
            axis = np.zeros(3)
        else:
            warnings.warn(f'joint {j.name!r} has no <axis>: using the URDF default (1, 0, 0)')
            axis = np.array([1.0, 0.0, 0.0])
        lim = JointLimits()
        if j.limit is not None:
            lim = JointLimits(
                lower=-np.inf if j.type == 'continuous' or j.limit.lower is None else float(j.limit.lower),
                upper=np.inf if j.type == 'continuous' or j.limit.upper is None else float(j.limit.upper),
                effort=np.inf if j.limit.effort is None else float(j.limit.effort),
                velocity=np.inf if j.limit.velocity is None else float(j.limit.velocity))
        if j.parent is None or j.child is None:
            raise URDFError(f'joint {j.name!r} needs a <parent> and a <child>')
        joint_specs.append(_JointSpec(j.name, jtype, j.parent, j.child, _origin(j.origin), axis, lim))

    robot = _build_tree(model.name or 'robot', link_specs, joint_specs, origin='urdf')
    if verbose:
        print(robot.summary())
    return robot, robot.keys
