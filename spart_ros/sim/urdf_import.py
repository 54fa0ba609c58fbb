"""
URDF -> MuJoCo model for the embedded plant: the core reads the URDF, MuJoCo imports it.

The core's reader (:func:`spart_ros.core.urdf.robot_from_urdf`) decides what is accepted:
the plant takes exactly the inputs the core takes (paths, text, bytes, encoding declarations,
xacro, massless frames, world roots) and refuses the rest with the core's message.  MuJoCo's
own URDF importer then builds the physics from the same (xacro-expanded) text, after a
minimal preprocessing of what MuJoCo cannot or need not read:

- ``<visual>`` and ``<collision>`` are removed (their meshes are often ``package://`` paths,
  which MuJoCo does not resolve; the plant has no contacts);
- a world root the core drops (a massless root with one ``floating`` joint, or a massless
  ``world`` with one ``fixed`` joint: docs/urdf_loading.md) is dropped here too, so the
  robot's base is the same body for both; a fixed joint's origin is returned as the mount;
- the XML declaration goes (the text is re-serialized).

Model choices (see :func:`mujoco_model_from_urdf`):

- ``fusestatic = False``: links on fixed joints stay bodies of their own, so every URDF link
  has a MuJoCo body of the same name (massless frames included);
- a floating base gets a free joint on the root body; a fixed base is welded to the world
  (the plant places the mount);
- the body frame of every body is the URDF LINK frame (``alignfree = False``), not its
  inertial frame;
- the joints' damping, friction and rotor inertia are the core's (``joint.dynamics``: URDF
  ``<dynamics damping friction>`` and the ``joint_dynamics`` / ``armature`` overrides, see
  :mod:`spart_ros.core.joint_friction`): damping and rotor inertia on MuJoCo's joints
  (``damping``, ``armature``); the Coulomb friction is not MuJoCo's: the plant applies the
  model's law itself (:mod:`spart_ros.sim.joint_dissipation`), unless ``friction`` is
  ``'frictionloss'`` (then MuJoCo's ``frictionloss`` constraint, which differs from the model);
  nothing of the three when ``joint_damping`` is False (the rigid-body model SPART's functions
  compute);
- an inertia MuJoCo's compiler refuses (principal moments that break the triangle inequality
  A + B >= C, as in some vendor files) is compiled balanced, then set back to the URDF's in the
  compiled model (MuJoCo's dynamics take it), with a warning naming the links;
- position limits are kept only when asked: some URDFs carry limits only because urdfdom
  wants them (this repository's SC_3DoF.urdf), and SPART's model has none;
- mimic joints are MuJoCo's: soft equality constraints (not exact; the plant sets their time
  constant to 2 dt, MuJoCo's stiffest advised: at its default 20 ms an xArm6's gripper fingers
  lagged their leader by 3 mrad on a 1 rad motion of the arm).
"""

from collections import namedtuple
import warnings
import xml.etree.ElementTree as ET

import numpy as np

from ..core.errors import ModelError, URDFError
from ..core.urdf import robot_from_urdf, urdf_text

__all__ = [
    'mujoco_model_from_urdf',
    'ImportedModel',
    'INTEGRATORS',
    'MOVING_JOINT_TYPES',
    'FRICTION_MODELS',
]

#: integrator name (node parameter) -> mujoco.mjtIntegrator member name
INTEGRATORS = {
    'RK4': 'mjINT_RK4',
    'Euler': 'mjINT_EULER',
    'implicit': 'mjINT_IMPLICIT',
    'implicitfast': 'mjINT_IMPLICITFAST',
}
#: MuJoCo joint types of URDF moving joints: hinge (revolute, continuous) and slide (prismatic)
MOVING_JOINT_TYPES = ('mjJNT_HINGE', 'mjJNT_SLIDE')
#: how a plant applies the joints' Coulomb friction: 'model' (the core's smoothed law, the
#: default) or 'frictionloss' (MuJoCo's constraint: static friction, not the model's law)
FRICTION_MODELS = ('model', 'frictionloss')
_DROPPED = ('visual', 'collision')

ImportedModel = namedtuple('ImportedModel', 'model mount base_hint warnings robot')
ImportedModel.__doc__ = """``model``: the compiled mujoco.MjModel; ``mount`` (4, 4): the base link
frame in the frame of the URDF's dropped world root (identity without one); ``base_hint``:
'fixed', 'floating' or None (what the URDF implies, core's ``robot.base_hint``);
``warnings``: the core reader's warnings (list of str); ``robot``: the core's model of the same
URDF (:class:`~spart_ros.core.model.Robot`)."""


def _dynamics_urdf(text, world_link):
    """
    Return the URDF without visual/collision elements.

    Without the dropped world root and its joint, and without the XML declaration.
    """
    try:
        root = ET.fromstring(text.encode('utf-8') if text.lstrip().startswith('<?xml') else text)
    except ET.ParseError as err:  # the core parsed it: only a surprise gets here
        raise URDFError(f'the text is not valid XML: {err}') from None
    for link in root.iter('link'):
        for tag in _DROPPED:
            for el in link.findall(tag):
                link.remove(el)
    if world_link is not None:
        for el in list(root):
            if (el.tag == 'link' and el.get('name') == world_link) or (
                el.tag == 'joint'
                and el.find('parent') is not None
                and el.find('parent').get('link') == world_link
            ):
                root.remove(el)
    return ET.tostring(root, encoding='unicode')


def _restore_inertias(mujoco, model, text):
    """
    Set the inertia of every body whose URDF inertia breaks A + B >= C back to the URDF's.

    Returns the names of those links.  ``text``: the URDF MuJoCo compiled.
    """
    from ..core.attitude import rpy_rotation

    restored = []
    for link in ET.fromstring(text).iter('link'):
        inertial = link.find('inertial')
        el = None if inertial is None else inertial.find('inertia')
        if el is None:
            continue
        k = ('ixx', 'iyy', 'izz', 'ixy', 'ixz', 'iyz')
        ixx, iyy, izz, ixy, ixz, iyz = (float(el.get(n, '0')) for n in k)
        inertia = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
        origin = inertial.find('origin')
        rpy = (
            [0.0] * 3 if origin is None else [float(x) for x in origin.get('rpy', '0 0 0').split()]
        )
        R = np.asarray(rpy_rotation(rpy), dtype=float)
        moments, axes = np.linalg.eigh(R @ inertia @ R.T)
        if moments[0] + moments[1] >= moments[2] * (1.0 - 1e-12):
            continue
        if np.linalg.det(axes) < 0:
            axes[:, 2] = -axes[:, 2]
        b = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, link.get('name'))
        quat = np.empty(4)
        mujoco.mju_mat2Quat(quat, np.ascontiguousarray(axes).reshape(9))
        model.body_inertia[b], model.body_iquat[b] = moments, quat
        restored.append(link.get('name'))
    return restored


def mujoco_model_from_urdf(
    source,
    floating,
    joint_damping=True,
    joint_limits=False,
    xacro_args=None,
    joint_dynamics=None,
    armature=None,
    friction='model',
    extend=None,
):
    """
    Return the :class:`ImportedModel` of a URDF (path, text or bytes; xacro with ``xacro_args``).

    ``source``: the URDF; ``floating``: free joint on the root body (else welded to the world).
    ``joint_damping``: give each joint the core's damping (MuJoCo's ``damping``) and rotor
    inertia (``armature``): the URDF ``<dynamics damping friction>`` with the ``joint_dynamics``
    / ``armature`` overrides of :func:`~spart_ros.core.urdf.robot_from_urdf`; False zeroes them.
    ``friction``: 'model' (MuJoCo gets no friction: the plant applies the model's law) or
    'frictionloss' (the declared friction as MuJoCo's ``frictionloss`` constraint: stick-slip, not
    the model's law; see :mod:`spart_ros.sim.joint_dissipation`).  ``joint_limits``: keep URDF
    position limits (soft constraints, active only at the limits); False removes them.
    ``extend(mujoco, spec, robot)``: called on the spec before it is compiled (e.g. the base's
    actuators).
    Raises the core's URDFError / UnsupportedJointError / TopologyError..., or ModelError
    when MuJoCo cannot build the model (e.g. a moving joint that carries no mass).
    """
    import mujoco

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        robot, _ = robot_from_urdf(
            source, xacro_args=xacro_args, joint_dynamics=joint_dynamics, armature=armature
        )
    text = _dynamics_urdf(urdf_text(source, xacro_args), robot.world_link)
    try:
        spec = mujoco.MjSpec.from_string(text)
    except Exception as err:  # noqa: BLE001 - MuJoCo raises ValueError and others
        raise URDFError(f'MuJoCo could not read the URDF: {err}') from None
    spec.compiler.fusestatic = False
    spec.compiler.alignfree = False
    root = spec.worldbody.first_body()
    if floating:
        root.add_freejoint()
    else:  # the plant places the mount; MuJoCo's "world" root may have moved it
        root.pos, root.quat = [0.0, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0]
    declared = {j.name: j.dynamics for j in robot.joints}
    for joint in spec.joints:
        d = declared.get(joint.name)
        damping = [0.0] * len(joint.damping)  # MuJoCo 4: polynomial coefficients (d, d2, d3)
        joint.frictionloss = joint.armature = 0.0
        if joint_damping and d is not None:
            damping[0] = d.damping
            joint.armature = d.armature
            if friction == 'frictionloss':
                joint.frictionloss = d.friction
        joint.damping = damping
        if not joint_limits:
            joint.limited = mujoco.mjtLimited.mjLIMITED_FALSE
    if extend is not None:
        extend(mujoco, spec, robot)
    notes = []
    try:
        model = spec.compile()
    except Exception as err:  # noqa: BLE001
        if 'A + B >= C' not in str(err):
            raise ModelError(f'MuJoCo could not compile the model: {err}') from None
        # an inertia that breaks the triangle inequality (e.g. rounded vendor values): MuJoCo's
        # compiler refuses it, its dynamics take it; compiled balanced, then set back as declared
        spec.compiler.balanceinertia = True
        try:
            model = spec.compile()
        except Exception as err2:  # noqa: BLE001
            raise ModelError(f'MuJoCo could not compile the model: {err2}') from None
        restored = _restore_inertias(mujoco, model, text)
        notes.append(
            f'links {restored}: principal moments of inertia that break A + B >= C, which '
            "MuJoCo's compiler refuses; the plant simulates them as the URDF declares them"
        )
    if model.nbody < 2 or model.body(1).name != robot.base_link.name:
        raise ModelError(
            f'MuJoCo made {model.body(1).name if model.nbody > 1 else "no body"!r} the base, the '
            f'core {robot.base_link.name!r} (a root link named "world" that is not a massless '
            'frame with one fixed or floating joint: rename it)'
        )
    mount = np.eye(4) if robot.base_pose is None else np.array(robot.base_pose, dtype=float)
    return ImportedModel(
        model, mount, robot.base_hint, [str(w.message) for w in caught] + notes, robot
    )
