"""
Joint friction, damping and rotor inertia (armature): what a joint adds to the rigid-body dynamics.

Every moving joint of a :class:`~spart_ros.core.model.Robot` carries a
:class:`~spart_ros.core.model.JointDynamics` (constant data): ``damping`` d and ``friction`` F
from the URDF ``<dynamics damping friction>``, ``armature`` a (a motor's rotor inertia reflected
through its gear; URDF has none: a keyword or a YAML file, :func:`joint_dynamics_overrides`).
With them the equations of motion of the joint coordinates are (Siciliano et al., eq. 7.21 and
8.1; MuJoCo's joint ``damping`` and ``armature``)

    (H(q) + diag(a)) qdd + C(q, qd) qd + g(q) + d qd + F sgn_v(qd) = tau

with the smoothed sign ``sgn_v(x) = tanh(x / v)`` (v = ``friction_velocity``, default
:data:`FRICTION_VELOCITY` = 0.01 rad/s or m/s): Coulomb friction that is continuous through
zero velocity (a model-based controller must not switch its efforts at every velocity
reversal, and an explicit integrator must not chatter), 76 % of F at v, 99.5 % at 3 v.

**Where they are used.** SPART's functions (``ID``, ``FD``, ``GIM``, ... and their SPART
names) never use them: their results are SPART's, bit for bit.  The fast path
(:class:`~spart_ros.core.fast.FastDynamics`) adds them when built with ``joint_dynamics=True``
(default False): inverse dynamics (and bias forces, floating-base inverse dynamics) adds
a qdd + d qd + F sgn_v(qd) to each joint's effort; forward dynamics (the articulated-body
algorithm, fixed or floating base) subtracts d qd + F sgn_v(qd) from the joint efforts and has
a added to each joint's articulated inertia; the mass matrix has a added on its joint
diagonal.  The nodes and the controller use them by default (parameter ``joint_dynamics``),
so that a controller compensates what the model declares, and the plants apply the same law
(``spart_sim`` ``joint_damping``; :mod:`spart_ros.sim.joint_dissipation`: the force a plant
applies is this law's, checked to 1e-9 at any speed in test/test_joint_dissipation.py).

**MuJoCo's conventions**: ``damping`` and ``armature`` are the same terms.  MuJoCo's
``frictionloss`` is a soft constraint, not F sgn_v(qd), and the plants do not use it unless asked
(``friction='frictionloss'``): a joint at rest is held by up to F (static friction), and a sliding
joint gets -F sgn(qd) only where the constraint saturates, which on a heavy joint it does (checked
to 1e-9 in test/test_joint_friction.py) and on a light one it does not (the xArm6's last joint,
8e-5 kg m^2, sliding at 0.5 and 2 rad/s got -0.0038 and -0.015 N m for F = 1 N m).
"""

from collections.abc import Mapping
import math
import numbers
import os

import numpy as np

from . import checks as chk
from .errors import InputError, ModelError
from .model import check_joint_dynamics, FIXED, JOINT_DYNAMICS_FIELDS, JointDynamics

__all__ = [
    'FRICTION_VELOCITY',
    'joint_dynamics_overrides',
    'apply_joint_dynamics',
    'joint_dynamics_arrays',
    'joint_friction_forces',
    'smoothed_sign',
]

#: rad/s or m/s: the velocity scale of the smoothed Coulomb friction sgn_v(x) = tanh(x / v)
FRICTION_VELOCITY = 0.01


def smoothed_sign(x, velocity=FRICTION_VELOCITY):
    """Return tanh(x / ``velocity``) (the smoothed sign of the Coulomb friction), elementwise."""
    return np.tanh(np.asarray(x, dtype=float) / velocity)


def check_friction_velocity(velocity):
    """``velocity`` as a float > 0 (InputError naming ``friction_velocity`` otherwise)."""
    v = chk.nonnegative('friction_velocity', velocity)
    if not v > 0:
        raise InputError(
            f'friction_velocity: expected a velocity > 0 (rad/s or m/s), got {chk.given(velocity)}'
        )
    return v


def joint_dynamics_arrays(robot):
    """
    Return (damping, friction, armature), each (n_q,), in SPART's joint-variable order.

    (``robot.q_names``).

    The robot's declared :class:`JointDynamics` of its moving joints.
    """
    moving = sorted((j for j in robot.joints if j.type != FIXED), key=lambda j: j.q_id)
    return tuple(
        np.array([getattr(j.dynamics, key) for j in moving], dtype=float)
        for key in JOINT_DYNAMICS_FIELDS
    )


def joint_friction_forces(robot, qd, velocity=FRICTION_VELOCITY):
    """
    Return d qd + F sgn_v(qd) (n_q,).

    The efforts the joints' damping and Coulomb friction take at joint velocities ``qd`` (n_q,,
    SPART's joint-variable order), ``velocity`` the smoothing scale v (see the module docstring).
    """
    damping, friction, _ = joint_dynamics_arrays(robot)
    qd = chk.vector('qd', qd, robot.n_q)
    return damping * qd + friction * smoothed_sign(qd, check_friction_velocity(velocity))


def _load(source):
    """
    Return a mapping from ``source``.

    A mapping, or the path of a YAML file holding one (optionally under a top-level key
    ``joint_dynamics``).
    """
    if isinstance(source, Mapping):
        data = source
    elif isinstance(source, (str, os.PathLike)):
        import yaml

        path = os.fspath(source)
        try:
            with open(path, encoding='utf-8') as f:
                data = yaml.safe_load(f)
        except OSError as err:
            raise InputError(f'joint_dynamics: cannot read {path!r}: {err.strerror}') from None
        except yaml.YAMLError as err:
            raise InputError(f'joint_dynamics: {path!r} is not valid YAML: {err}') from None
        if data is None:
            data = {}
        if not isinstance(data, Mapping):
            raise InputError(
                f'joint_dynamics: {path!r} must hold a mapping {{joint name: {{armature: ..., '
                f'damping: ..., friction: ...}}}}, got {type(data).__name__}'
            )
    else:
        raise InputError(
            'joint_dynamics: expected a mapping {joint name: {armature, damping, friction}} or '
            f'the path of a YAML file holding one, got {chk.given(source)}'
        )
    if set(data) == {'joint_dynamics'}:
        data = data['joint_dynamics'] or {}
    return data


def joint_dynamics_overrides(source=None, armature=None):
    """
    Return {joint name or '*': {field: float}} of the overrides ``source`` and ``armature`` give.

    ``source``: None, a mapping ``{joint: {armature: a, damping: d, friction: F}}`` (any of the
    three per joint; the joint ``'*'``: every moving joint, a joint's own entry winning), or the
    path of a YAML file holding that mapping (optionally under a key ``joint_dynamics``).
    ``armature``: a number (every moving joint) or ``{joint: number}``, applied after
    ``source``.  InputError naming the joint and field of a bad value (each a finite number >= 0).
    Joint names are checked against a robot by :func:`apply_joint_dynamics`.
    """
    out = {}
    if source is not None:
        for joint, values in _load(source).items():
            if not isinstance(joint, str) or not joint:
                raise InputError(
                    f'joint_dynamics: keys are joint names (or "*"), got {chk.given(joint)}'
                )
            if not isinstance(values, Mapping):
                raise InputError(
                    f'joint_dynamics[{joint!r}]: expected a mapping of '
                    f'{list(JOINT_DYNAMICS_FIELDS)}, got {chk.given(values)}'
                )
            unknown = sorted(set(values) - set(JOINT_DYNAMICS_FIELDS))
            if unknown:
                raise InputError(
                    f'joint_dynamics[{joint!r}]: unknown fields {unknown} (expected any of '
                    f'{list(JOINT_DYNAMICS_FIELDS)})'
                )
            out.setdefault(joint, {}).update(
                {k: _value(f'joint_dynamics[{joint!r}].{k}', v) for k, v in values.items()}
            )
    if armature is not None:
        items = armature.items() if isinstance(armature, Mapping) else [('*', armature)]
        for joint, value in items:
            out.setdefault(joint, {})['armature'] = _value(f'armature[{joint!r}]', value)
    return out


def _value(name, v):
    if (
        isinstance(v, (bool, np.bool_))
        or not isinstance(v, numbers.Real)
        or not math.isfinite(v)
        or v < 0
    ):
        raise InputError(f'{name}: expected a finite number >= 0, got {chk.given(v)}')
    return float(v)


def apply_joint_dynamics(names, types, dynamics, overrides):
    """
    Return the joints' :class:`JointDynamics` with ``overrides`` applied.

    ``overrides``: see :func:`joint_dynamics_overrides`; ``names`` (joint names), ``types`` (FIXED
    or not, same order), ``dynamics`` (their current JointDynamics). ModelError naming a joint that
    is unknown or fixed.
    """
    index = {n: k for k, n in enumerate(names)}
    moving = [n for n, t in zip(names, types) if t != FIXED]
    for joint in overrides:
        if joint == '*':
            continue
        if joint not in index:
            raise ModelError(
                f'joint_dynamics: {joint!r} is not a joint of the robot (moving joints: {moving})'
            )
        if types[index[joint]] == FIXED:
            raise ModelError(
                f'joint_dynamics: joint {joint!r} is fixed: only moving joints have damping, '
                'friction or armature'
            )
    out = list(dynamics)
    for k, (name, t) in enumerate(zip(names, types)):
        if t == FIXED:
            continue
        values = {key: getattr(out[k], key) for key in JOINT_DYNAMICS_FIELDS}
        values.update(overrides.get('*', {}))
        values.update(overrides.get(name, {}))
        out[k] = check_joint_dynamics(f'joint {name!r}', JointDynamics(**values))
    return out
