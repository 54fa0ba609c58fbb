"""URDF -> MuJoCo model, for the embedded plant (MuJoCo's own URDF importer, minimal
preprocessing).

The preprocessing only removes what MuJoCo cannot or need not read for dynamics:
``<visual>`` and ``<collision>`` elements (their meshes are often ``package://`` paths,
which MuJoCo does not resolve; the plant has no contacts) and the XML declaration (the text
is re-serialized).  Everything else (inertials, joint origins and axes, limits, ``<dynamics>``,
mimic joints as equality constraints) is MuJoCo's reading of the URDF.

Model choices (see :func:`mujoco_model_from_urdf`):

- ``fusestatic = False``: links on fixed joints stay bodies of their own, so every URDF link
  has a MuJoCo body of the same name (massless frames included);
- a floating base gets a free joint on the root body; a fixed base is welded to the world at
  the origin (the plant can move the mount afterwards);
- the body frame of every body is the URDF LINK frame (``alignfree = False``), not its
  inertial frame;
- URDF ``<dynamics damping friction>`` and position limits are kept only when asked: SPART's
  model (and so the controllers built on it) has neither.
"""
import os
import xml.etree.ElementTree as ET

from ..core.errors import ModelError, URDFError, UnsupportedJointError

__all__ = ['urdf_text', 'mujoco_model_from_urdf', 'INTEGRATORS', 'MOVING_JOINT_TYPES']

#: integrator name (node parameter) -> mujoco.mjtIntegrator member name
INTEGRATORS = {'RK4': 'mjINT_RK4', 'Euler': 'mjINT_EULER', 'implicit': 'mjINT_IMPLICIT',
               'implicitfast': 'mjINT_IMPLICITFAST'}
#: MuJoCo joint types of URDF moving joints: hinge (revolute, continuous) and slide (prismatic)
MOVING_JOINT_TYPES = ('mjJNT_HINGE', 'mjJNT_SLIDE')
_DROPPED = ('visual', 'collision')


def urdf_text(source):
    """URDF text of ``source``: URDF XML (str or bytes) or a path to a URDF file."""
    if isinstance(source, bytes):
        return source.decode('utf-8')
    if isinstance(source, os.PathLike) or (isinstance(source, str) and '<' not in source):
        path = os.fspath(source)
        if not os.path.isfile(path):
            raise URDFError(f'{path!r} is neither URDF text nor an existing file')
        with open(path, encoding='utf-8') as f:
            return f.read()
    if not isinstance(source, str):
        raise URDFError(f'expected URDF text or a file path, got {type(source).__name__}')
    return source


def _dynamics_urdf(text):
    """The URDF without visual/collision elements and without the XML declaration (MuJoCo
    reads the re-serialized text); URDFError if it is not URDF."""
    try:
        # bytes: ElementTree honours an encoding declaration only on bytes
        root = ET.fromstring(text.encode('utf-8') if text.lstrip().startswith('<?xml') else text)
    except ET.ParseError as err:
        raise URDFError(f'the text is not valid XML: {err}') from None
    if root.tag != 'robot':
        raise URDFError(f'the XML root element is <{root.tag}>, not <robot>: this is not URDF')
    for link in root.iter('link'):
        for tag in _DROPPED:
            for el in link.findall(tag):
                link.remove(el)
    for jel in root.findall('joint'):
        if jel.get('type') in ('floating', 'planar'):
            raise UnsupportedJointError(f'joint {jel.get("name")!r}: type {jel.get("type")!r} is not supported '
                                        '(the plant, like SPART, has fixed, revolute, continuous and prismatic '
                                        'joints; the base is made floating by the base mode)')
    return ET.tostring(root, encoding='unicode')


def mujoco_model_from_urdf(source, floating, joint_damping=False, joint_limits=True):
    """Compiled ``mujoco.MjModel`` of a URDF (text or file path).

    ``floating``: free joint on the root body (else welded to the world).
    ``joint_damping``: keep URDF ``<dynamics damping friction>`` (viscous damping and
    MuJoCo's frictionloss); False zeroes both.  ``joint_limits``: keep URDF position limits
    (soft constraints, active only at the limits); False removes them.
    Raises URDFError / UnsupportedJointError / ModelError naming the problem.
    """
    import mujoco
    text = _dynamics_urdf(urdf_text(source))
    try:
        spec = mujoco.MjSpec.from_string(text)
    except Exception as err:  # noqa: BLE001 - MuJoCo raises ValueError and others
        raise URDFError(f'MuJoCo could not read the URDF: {err}') from None
    spec.compiler.fusestatic = False
    spec.compiler.alignfree = False
    root = spec.worldbody.first_body()
    if root is None:
        raise URDFError('the URDF has no link')
    if floating:
        root.add_freejoint()
    for joint in spec.joints:
        if not joint_damping:
            joint.damping = [0.0] * len(joint.damping)     # MuJoCo 4: polynomial coefficients
            joint.frictionloss = 0.0
        if not joint_limits:
            joint.limited = mujoco.mjtLimited.mjLIMITED_FALSE
    try:
        model = spec.compile()
    except Exception as err:  # noqa: BLE001
        raise ModelError(f'MuJoCo could not compile the model: {err}') from None
    return model
