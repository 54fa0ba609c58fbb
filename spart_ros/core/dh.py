"""Denavit-Hartenberg serial chain -> SPART robot model (SPART: DH_Serial2robot)."""

import numpy as np

from . import _backend as bk
from .errors import ModelError
from .model import (
    BaseLink,
    homogeneous,
    inverse_transform,
    Joint,
    Link,
    model_array,
    rigid_transform,
    Robot,
)


def _get(d, key, where):
    try:
        return d[key] if isinstance(d, dict) else getattr(d, key)
    except (KeyError, AttributeError, TypeError):
        raise ModelError(f'DH data: {where} has no field {key!r}') from None


def _scalar(d, key, where):
    """
    Return a number (or a sympy expression) from a DH field.

    ModelError naming it if not finite.
    """
    value = _get(d, key, where)
    if bk.is_symbolic(value):
        return value
    try:
        if value is None or isinstance(value, (str, bytes, bool, np.bool_)):
            raise TypeError
        number = float(np.asarray(value, dtype=float).reshape(()))
    except (TypeError, ValueError, OverflowError):
        raise ModelError(
            f'DH data: {where}.{key} = {value!r}'[:200] + ' is not a number'
        ) from None
    if not np.isfinite(number):
        raise ModelError(f'DH data: {where}.{key} = {value!r} is NaN or infinite')
    return number


def _array(d, key, where, shape):
    """
    Return an array of ``shape`` from a DH field (real, finite, or sympy).

    ModelError naming it.
    """
    return model_array(f'DH data: {where}.{key}', _get(d, key, where), shape)


def dh_transform(d, alpha, a, theta):
    """Return standard DH transform Rz(theta) Tz(d) Tx(a) Rx(alpha), 4x4."""
    ct, st, ca, sa = bk.cos(theta), bk.sin(theta), bk.cos(alpha), bk.sin(alpha)
    R = np.array([[ct, -st * ca, st * sa], [st, ct * ca, -ct * sa], [0 * ct, sa, ca]])
    return homogeneous(R, np.array([a * ct, a * st, d]))


def robot_from_dh(DH_data):
    """
    Build a serial robot from DH parameters.

    (SPART: DH_Serial2robot)

    ``DH_data`` is a dict (or object) laid out as SPART's: ``n``; ``man`` a list
    of n entries with ``type`` (1 revolute, 2 prismatic), ``DH`` (``d``,
    ``alpha``, ``a``, ``theta``), ``b`` (3,) from the link CoM to the next joint
    in the next DH frame, ``mass``, ``I`` (3, 3); ``base`` with ``T_L0_J1``
    (4x4, joint 1 in the base CoM frame), ``mass``, ``I``; ``EE`` with
    ``theta`` and ``d``; optional ``name`` (SPART's ``DH.data.name`` typo not copied).

    Returns ``(robot, T_Ln_EE)``: T_Ln_EE is the end-effector frame in the last
    link's CoM frame (4x4).  Links are named L1..Ln, joints J1..Jn, the base 'Base'.
    """
    n_raw = _get(DH_data, 'n', 'DH_data')
    try:
        n = int(n_raw)
    except (TypeError, ValueError):
        raise ModelError(f'DH data: n = {n_raw!r} is not a number of links') from None
    if n != n_raw or n < 1:
        raise ModelError(f'DH data: n = {n_raw!r} must be a whole number >= 1')
    man = _get(DH_data, 'man', 'DH_data')
    try:
        count = len(man)
    except TypeError:
        raise ModelError(
            f'DH data: man must be a list of {n} entries, got {type(man).__name__}'
        ) from None
    if count != n:
        raise ModelError(f'DH data: n = {n} but man has {count} entries')
    base = _get(DH_data, 'base', 'DH_data')
    ee = _get(DH_data, 'EE', 'DH_data')
    name = (
        DH_data.get('name', 'DH robot')
        if isinstance(DH_data, dict)
        else getattr(DH_data, 'name', 'DH robot')
    )
    base_link = BaseLink(
        'Base', _scalar(base, 'mass', 'base'), _array(base, 'I', 'base', (3, 3)), np.eye(4)
    )
    T_L0_J1 = rigid_transform('DH data: base.T_L0_J1', _array(base, 'T_L0_J1', 'base', (4, 4)))
    bs = [_array(m, 'b', f'man[{i}]', (3,)) for i, m in enumerate(man)]
    links, joints = [], []
    for i in range(1, n + 1):
        m = man[i - 1]
        where = f'man[{i - 1}]'
        dh = _get(m, 'DH', where)
        jtype = _get(m, 'type', where)
        if jtype not in (1, 2):
            raise ModelError(
                f'DH data: {where}.type = {jtype!r}; DH joints are 1 (revolute) or 2 (prismatic)'
            )
        T_dh = dh_transform(*(_scalar(dh, k, where + '.DH') for k in ('d', 'alpha', 'a', 'theta')))
        if i == n:
            T_dh = T_dh @ dh_transform(_scalar(ee, 'd', 'EE'), 0, 0, _scalar(ee, 'theta', 'EE'))
        T_link = T_dh @ inverse_transform(homogeneous(None, bs[i - 1]))
        links.append(
            Link(i, f'L{i}', i, _scalar(m, 'mass', where), _array(m, 'I', where, (3, 3)), T_link)
        )
        T_joint = T_L0_J1 if i == 1 else homogeneous(None, bs[i - 2])
        joints.append(
            Joint(i, f'J{i}', int(jtype), i, i - 1, i, np.array([0.0, 0.0, 1.0]), T_joint)
        )
    robot = Robot(name, base_link, links, joints, origin='DH')
    T_Ln_EE = homogeneous(None, bs[-1])
    return robot, T_Ln_EE
