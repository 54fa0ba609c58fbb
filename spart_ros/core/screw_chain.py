"""
A serial chain from its screw axes (Modern Robotics' product of exponentials, ch. 4).

MR describes an open chain by the screw axes of its joints at the home position and the
home pose M of the end-effector frame: T(theta) = exp([S1] theta1) ... exp([Sn] thetan) M
(space form, axes S_i in the fixed frame {s}) = M exp([B1] theta1) ... exp([Bn] thetan) (body
form, axes B_i = Ad_M^-1 S_i in the end-effector frame).  :func:`robot_from_screw_axes` builds
the equivalent :class:`~spart_ros.core.model.Robot`: base link ``base`` = {s}; link ``link<i>``
after joint ``joint<i>``, its URDF frame at the home position with {s}'s axes at a point of the
joint's axis; a fixed joint to link ``ee`` whose URDF frame is M at home.  Its forward kinematics
(``base_state.link_frame_pose`` of ``ee``, base at the identity) is MR's FKinSpace/FKinBody,
its point Jacobians MR's space and body Jacobians re-expressed.  Links are massless frames: the
model is for kinematics (Jacobians and inverse kinematics), not dynamics.

A screw axis [w; v] (6,) with ||w|| = 1 is a revolute joint about w through the point w x v,
of pitch h = w . v: a helical joint (h != 0, e.g. the book's IK example) is that revolute
joint followed by a prismatic joint ``joint<i>_pitch`` along w mimicking it (q = h theta_i; the
two motions commute, so their product is exp([S_i] theta_i) exactly), and the chain's
independent coordinates are then the thetas (``robot.coordinates``, as for any mimic joint).
w = 0 with ||v|| = 1 is a prismatic joint along v.  Other columns (non-unit axes) are refused
(InputError naming the column).
"""

import warnings

import numpy as np

from . import checks as chk
from .errors import InputError, MimicJointWarning
from .model import homogeneous, RobotBuilder
from .rigid_motion import _adjoint, checked_transform

__all__ = ['robot_from_screw_axes']

_UNIT_TOL = 1e-6
_PITCH_TOL = 1e-9  # m/rad: below, a pitch is rounding (e.g. of Ad_M B): a revolute joint


def robot_from_screw_axes(screw_axes, home, body=False, name='screw_chain'):
    """
    Return the Robot of the chain with joint screw axes ``screw_axes`` (6, n).

    Columns [w; v], MR's Slist, or Blist with ``body=True``; end-effector home pose ``home`` (4, 4)
    (MR's M); see the module docstring. theta_i are the robot's independent coordinates (rad or m);
    ``name``: the robot's.
    """
    S = chk.numeric('screw_axes', chk.array('screw_axes', screw_axes, (6, None)), 'a screw chain')
    R_M, p_M = checked_transform('home', home)
    if chk.huge([('screw_axes', S), ('home', p_M)]):
        raise chk.overflow_error('robot_from_screw_axes', [('screw_axes', S), ('home', p_M)])
    if not isinstance(name, str) or not name:
        raise InputError(
            f'name: expected a robot name (a non-empty string), got {chk.given(name)}'
        )
    body = chk.flag('body', body)
    M = homogeneous(R_M, p_M)
    if body:
        S = _adjoint(R_M, p_M) @ S  # S_i = Ad_M B_i
    b = RobotBuilder(name)
    zero = np.zeros((3, 3))
    b.add_link('base', 0.0, zero)
    previous, parent = np.zeros(3), 'base'
    for i in range(S.shape[1]):
        w, v = S[0:3, i], S[3:6, i]
        nw = float(np.linalg.norm(w))
        pitch = 0.0
        if abs(nw - 1.0) <= _UNIT_TOL:
            axis = w / nw
            pitch = float(axis @ v)
            kind, point = 'revolute', np.cross(axis, v)
        elif nw <= _UNIT_TOL and abs(float(np.linalg.norm(v)) - 1.0) <= _UNIT_TOL:
            kind, axis, point = 'prismatic', v / np.linalg.norm(v), previous
        else:
            raise InputError(
                f'screw_axes: column {i} = {S[:, i].tolist()} is not a unit screw axis (|w| = 1 '
                'for a revolute or helical joint, w = 0 and |v| = 1 for a prismatic joint)'
            )
        joint, link = f'joint{i + 1}', f'link{i + 1}'
        if (
            abs(pitch) > _PITCH_TOL
        ):  # helical: the rotation, then the translation along the axis that follows it
            b.add_link(f'{link}_turn', 0.0, zero)
            b.add_joint(
                joint,
                kind,
                parent,
                f'{link}_turn',
                origin=homogeneous(p=point - previous),
                axis=axis,
            )
            b.add_link(link, 0.0, zero)
            b.add_joint(
                f'{joint}_pitch',
                'prismatic',
                f'{link}_turn',
                link,
                axis=axis,
                mimic=(joint, pitch, 0.0),
            )
        else:
            b.add_link(link, 0.0, zero)
            b.add_joint(
                joint, kind, parent, link, origin=homogeneous(p=point - previous), axis=axis
            )
        previous, parent = point, link
    b.add_link('ee', 0.0, zero)
    b.add_joint(
        'ee_joint', 'fixed', parent, 'ee', origin=homogeneous(M[:3, :3], M[:3, 3] - previous)
    )
    with warnings.catch_warnings():  # the helical joints' mimic joints are this function's own
        warnings.simplefilter('ignore', MimicJointWarning)
        return b.build()
