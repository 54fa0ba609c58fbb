"""
A numeric Robot as an exact symbolic one: model numbers become exact sympy numbers.

URDF numbers typed by people (0.375, 9.3, 1e-3) become rationals (3/8, 93/10, 1/1000), so a
closed-form result reads ``3*cos(q2)/8`` instead of ``0.375*cos(q2)`` and simplification
cancels exactly; longer numbers (rotation entries computed from rpy) stay floats of the same
value; rotation entries within ``snap`` (default 1e-9) of 0 or +-1 become exactly 0 or +-1:
URDFs write pi/2 as 1.5708 or 1.57079632679, which leaves 4.9e-12 where a closed form wants a
zero (the values move by less than ``snap``).
"""

import dataclasses

import numpy as np
import sympy

from ..core.model import Robot

#: Numbers whose shortest decimal form has at most this many significant digits become rationals.
RATIONAL_DIGITS = 8
#: Rotation entries within this of 0 or +-1 become exact.
SNAP = 1e-9


def exact_number(x):
    """
    Return a float (or int) as an exact sympy number (see the module docstring).

    SymPy values pass.
    """
    if isinstance(x, sympy.Basic):
        return x
    f = float(x)
    if f.is_integer():
        return sympy.Integer(int(f))
    mantissa = repr(f).lower().split('e')[0].replace('-', '').replace('.', '').strip('0')
    if len(mantissa) <= RATIONAL_DIGITS:
        return sympy.Rational(repr(f))
    return sympy.Float(f)


def exact_array(a, rotation_block=None, snap=SNAP):
    """
    Return an object array of exact numbers.

    Entries of ``a[rotation_block]`` within ``snap`` of 0, +-1 made exact.
    """
    a = np.asarray(a)
    if a.dtype == object:
        return a
    a = a.astype(float).copy()
    if rotation_block is not None:
        R = a[rotation_block]
        for v in (0.0, 1.0, -1.0):
            R[np.abs(R - v) < snap] = v
        a[rotation_block] = R
    out = np.empty(a.shape, dtype=object)
    for idx, v in np.ndenumerate(a):
        out[idx] = exact_number(v)
    return out


def exact_robot(robot, snap=SNAP):
    """
    ``robot`` with exact sympy numbers (a symbolic Robot).

    A symbolic robot is returned as is.
    """
    if robot.symbolic:
        return robot
    rot = (slice(0, 3), slice(0, 3))
    base = dataclasses.replace(
        robot.base_link,
        mass=exact_number(robot.base_link.mass),
        inertia=exact_array(robot.base_link.inertia),
        T=exact_array(robot.base_link.T, rot, snap),
    )
    links = [
        dataclasses.replace(
            link,
            mass=exact_number(link.mass),
            inertia=exact_array(link.inertia),
            T=exact_array(link.T, rot, snap),
        )
        for link in robot.links
    ]
    joints = [
        dataclasses.replace(
            j, axis=exact_array(j.axis, slice(0, 3), snap), T=exact_array(j.T, rot, snap)
        )
        for j in robot.joints
    ]
    mimic = {k: tuple(v) for k, v in robot.mimic.items()} or None
    return Robot(
        robot.name,
        base,
        links,
        joints,
        origin=robot.origin,
        mimic=mimic,
        base_hint=robot.base_hint,
        base_pose=robot.base_pose,
        world_link=robot.world_link,
    )
