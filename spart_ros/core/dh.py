"""Denavit-Hartenberg serial chain -> SPART robot model (SPART: DH_Serial2robot)."""
import numpy as np

from . import _backend as bk
from .errors import ModelError
from .model import BaseLink, Joint, Link, Robot, homogeneous, inverse_transform, FIXED


def _get(d, key, where):
    try:
        return d[key] if isinstance(d, dict) else getattr(d, key)
    except (KeyError, AttributeError):
        raise ModelError(f'DH data: {where} has no field {key!r}') from None


def dh_transform(d, alpha, a, theta):
    """Standard DH transform Rz(theta) Tz(d) Tx(a) Rx(alpha), 4x4."""
    ct, st, ca, sa = bk.cos(theta), bk.sin(theta), bk.cos(alpha), bk.sin(alpha)
    R = np.array([[ct, -st * ca, st * sa], [st, ct * ca, -ct * sa], [0 * ct, sa, ca]])
    return homogeneous(R, np.array([a * ct, a * st, d]))


def robot_from_dh(DH_data):
    """Build a serial robot from DH parameters.  (SPART: DH_Serial2robot)

    ``DH_data`` is a dict (or object) laid out as SPART's: ``n``; ``man`` a list
    of n entries with ``type`` (1 revolute, 2 prismatic), ``DH`` (``d``,
    ``alpha``, ``a``, ``theta``), ``b`` (3,) from the link CoM to the next joint
    in the next DH frame, ``mass``, ``I`` (3, 3); ``base`` with ``T_L0_J1``
    (4x4, joint 1 in the base CoM frame), ``mass``, ``I``; ``EE`` with
    ``theta`` and ``d``; optional ``name`` (SPART's ``DH.data.name`` typo not copied).

    Returns ``(robot, T_Ln_EE)``: T_Ln_EE is the end-effector frame in the last
    link's CoM frame (4x4).  Links are named L1..Ln, joints J1..Jn, the base 'Base'.
    """
    n = int(_get(DH_data, 'n', 'DH_data'))
    man = _get(DH_data, 'man', 'DH_data')
    if len(man) != n:
        raise ModelError(f'DH data: n = {n} but man has {len(man)} entries')
    base = _get(DH_data, 'base', 'DH_data')
    ee = _get(DH_data, 'EE', 'DH_data')
    name = DH_data.get('name', 'DH robot') if isinstance(DH_data, dict) else getattr(DH_data, 'name', 'DH robot')
    base_link = BaseLink('Base', _get(base, 'mass', 'base'), bk.as_array(_get(base, 'I', 'base')), np.eye(4))
    links, joints = [], []
    for i in range(1, n + 1):
        m = man[i - 1]
        where = f'man[{i - 1}]'
        dh = _get(m, 'DH', where)
        jtype = int(_get(m, 'type', where))
        if jtype not in (1, 2):
            raise ModelError(f'DH data: {where}.type = {jtype}; DH joints are 1 (revolute) or 2 (prismatic)')
        T_dh = dh_transform(_get(dh, 'd', where + '.DH'), _get(dh, 'alpha', where + '.DH'),
                            _get(dh, 'a', where + '.DH'), _get(dh, 'theta', where + '.DH'))
        b = bk.as_array(_get(m, 'b', where))
        if i == n:
            T_ee = dh_transform(_get(ee, 'd', 'EE'), 0, 0, _get(ee, 'theta', 'EE'))
            T_dh = T_dh @ T_ee
        T_link = T_dh @ inverse_transform(homogeneous(None, b))
        links.append(Link(i, f'L{i}', i, _get(m, 'mass', where), bk.as_array(_get(m, 'I', where)), T_link))
        T_joint = bk.as_array(_get(base, 'T_L0_J1', 'base')) if i == 1 else \
            homogeneous(None, bk.as_array(_get(man[i - 2], 'b', f'man[{i - 2}]')))
        joints.append(Joint(i, f'J{i}', jtype, i, i - 1, i, np.array([0.0, 0.0, 1.0]), T_joint))
    robot = Robot(name, base_link, links, joints, origin='DH')
    T_Ln_EE = homogeneous(None, bk.as_array(_get(man[-1], 'b', f'man[{n - 1}]')))
    return robot, T_Ln_EE
