"""
The mass properties of a URDF's links: read them, write dispersed ones back.

Each link's ``<inertial>``: its mass [kg], its centre of mass (the inertial origin's ``xyz``, in
the link frame [m]) and its inertia about the CoM, expressed here in the link frame (the URDF's
``<inertia>`` is in the inertial origin's ``rpy`` frame: it is turned into the link frame when
read, and written back with ``rpy="0 0 0"``).  Links without ``<inertial>`` (massless frames) have
none to disperse.
"""

from dataclasses import dataclass
import xml.etree.ElementTree as ET

import numpy as np

from ..core.attitude import rpy_rotation
from ..core.errors import InputError
from ..core.urdf import urdf_text

__all__ = ['LinkInertial', 'link_inertials', 'with_link_inertials']

_ELEMENTS = ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz')


@dataclass(frozen=True)
class LinkInertial:
    """
    One link's mass properties.

    ``mass`` [kg]; ``com`` (3,) in the link frame [m]; ``inertia`` (3, 3) about the CoM, in the
    link frame [kg m^2].
    """

    mass: float
    com: np.ndarray
    inertia: np.ndarray


def _child(el, tag):
    return next((c for c in el if c.tag.rsplit('}', 1)[-1] == tag), None)


def _floats(text, n, where):
    try:
        values = [float(v) for v in (text or '').split()]
    except ValueError:
        values = []
    if len(values) != n:
        raise InputError(f'{where}: expected {n} numbers, got {text!r}')
    return np.array(values)


def _root(urdf):
    text = urdf_text(urdf)
    data = text.encode('utf-8') if text.lstrip().startswith('<?xml') else text
    return ET.fromstring(data)


def link_inertials(urdf):
    """
    Return {link name: :class:`LinkInertial`} of the links of ``urdf`` that have an ``<inertial>``.

    ``urdf``: URDF text or path (xacro expanded); in the file's order.
    """
    out = {}
    for link in _root(urdf).iter('link'):
        inertial = _child(link, 'inertial')
        if inertial is None:
            continue
        name = link.get('name')
        where = f'link {name!r}'
        origin = _child(inertial, 'origin')
        xyz = _floats(origin.get('xyz', '0 0 0'), 3, where) if origin is not None else np.zeros(3)
        rpy = _floats(origin.get('rpy', '0 0 0'), 3, where) if origin is not None else np.zeros(3)
        mass_el, inertia_el = _child(inertial, 'mass'), _child(inertial, 'inertia')
        if mass_el is None or inertia_el is None:
            raise InputError(f'{where}: <inertial> needs <mass> and <inertia>')
        i = {k: float(inertia_el.get(k, '0')) for k in _ELEMENTS}
        local = np.array(
            [
                [i['ixx'], i['ixy'], i['ixz']],
                [i['ixy'], i['iyy'], i['iyz']],
                [i['ixz'], i['iyz'], i['izz']],
            ]
        )
        R = rpy_rotation(rpy)
        out[name] = LinkInertial(float(mass_el.get('value')), xyz, R @ local @ R.T)
    return out


def with_link_inertials(urdf, changes):
    """
    Return the URDF text of ``urdf`` with the links of ``changes`` given new mass properties.

    ``changes``: {link name: :class:`LinkInertial`}; each named link's ``<inertial>`` is written
    with ``rpy="0 0 0"`` (its inertia in the link frame).  InputError naming a link that has no
    ``<inertial>``.
    """
    if not changes:
        return urdf_text(urdf)
    root = _root(urdf)
    left = dict(changes)
    for link in root.iter('link'):
        name = link.get('name')
        if name not in left:
            continue
        inertial = _child(link, 'inertial')
        if inertial is None:
            raise InputError(f'link {name!r} has no <inertial> to change')
        p = left.pop(name)
        for el in list(inertial):
            inertial.remove(el)
        xyz = ' '.join(repr(float(v)) for v in p.com)
        ET.SubElement(inertial, 'origin', xyz=xyz, rpy='0 0 0')
        ET.SubElement(inertial, 'mass', value=repr(float(p.mass)))
        J = np.asarray(p.inertia, dtype=float)
        values = (J[0, 0], J[0, 1], J[0, 2], J[1, 1], J[1, 2], J[2, 2])
        ET.SubElement(
            inertial, 'inertia', **{k: repr(float(v)) for k, v in zip(_ELEMENTS, values)}
        )
    if left:
        raise InputError(f'the URDF has no links {sorted(left)}')
    return ET.tostring(root, encoding='unicode')
