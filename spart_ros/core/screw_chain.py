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
its point Jacobians MR's space and body Jacobians re-expressed.  Links are massless frames (a
model for kinematics: Jacobians and inverse kinematics) unless ``link_inertias`` gives each
moving link its mass: MR's dynamics on (Mlist, Glist, Slist), where link i's frame {i} at home is
M_i = M_01 ... M_{i-1,i} in {s} and G_i its spatial inertia in {i}.

A spatial inertia G (6, 6) about a frame, in that frame's axes, rows and columns [angular;
linear] as MR's (momentum [h; p] = G [w; v], v the velocity of the frame's origin), is
[[I_c - m [c]x^2, m [c]x], [m [c]x', m 1]] for a body of mass m whose CoM is at c (in that frame)
with inertia I_c about it: MR's diag(I_b, m, m, m) when the frame is at the CoM.  The model's
link gets m, c and I_c back from G (:func:`mass_properties`); a G without that structure is an
InputError naming it.

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

__all__ = ['robot_from_screw_axes', 'mass_properties']

_UNIT_TOL = 1e-6
_PITCH_TOL = 1e-9  # m/rad: below, a pitch is rounding (e.g. of Ad_M B): a revolute joint
_INERTIA_RTOL = 1e-9  # structure of a spatial inertia, relative to its largest entry


def mass_properties(name, G):
    """
    Return (m, c (3,), I_c (3, 3)) of the spatial inertia ``G`` (6, 6) (module docstring).

    The mass, the CoM in G's frame and the inertia about the CoM in G's axes.  InputError naming
    ``name`` if G is not symmetric, its linear block not m times the identity, or its coupling
    block not m [c]x (within 1e-9 of its largest entry).
    """
    G = chk.numeric(name, chk.array(name, G, (6, 6)), 'a spatial inertia')
    tol = _INERTIA_RTOL * max(float(np.abs(G).max()), 1e-300)
    m = float(G[3, 3])
    S = G[0:3, 3:6]  # m [c]x
    problem = None
    if np.abs(G - G.T).max() > tol:
        problem = 'it is not symmetric'
    elif np.abs(G[3:6, 3:6] - m * np.eye(3)).max() > tol:
        problem = f'its linear block {G[3:6, 3:6].tolist()} is not m times the identity'
    elif np.abs(S + S.T).max() > tol or (m <= tol and np.abs(S).max() > tol):
        problem = f'its coupling block {S.tolist()} is not m [c]x (a skew matrix times the mass)'
    if problem is not None:
        raise InputError(
            f"{name}: expected a spatial inertia [[I_c - m [c]x^2, m [c]x], [m [c]x', m 1]] "
            f'(MR: diag(I_b, m, m, m) about the CoM), but {problem}'
        )
    c = np.array([S[2, 1], S[0, 2], S[1, 0]]) / m if m > tol else np.zeros(3)
    C = _skew(c)
    inertia = G[0:3, 0:3] + m * (C @ C)
    return m, c, 0.5 * (inertia + inertia.T)


def _skew(w):
    return np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])


def _link_inertias(link_inertias, n):
    """Return n (mass, com (4, 4) in {s} at home, inertia) of ``link_inertias``, or None."""
    if link_inertias is None:
        return None
    try:
        pairs = list(link_inertias)
    except TypeError:
        pairs = None
    if pairs is None or len(pairs) != n:
        raise InputError(
            f'link_inertias: expected {n} pairs (home pose (4, 4), spatial inertia (6, 6)), one '
            f'per joint, got {chk.given(link_inertias)}'
        )
    out = []
    for i, pair in enumerate(pairs):
        try:
            T, G = pair
        except (TypeError, ValueError):
            raise InputError(
                f'link_inertias[{i}]: expected a pair (home pose (4, 4), spatial inertia (6, 6)), '
                f'got {chk.given(pair)}'
            ) from None
        R, p = checked_transform(f'link_inertias[{i}] (its pose)', T)
        m, c, inertia = mass_properties(f'link_inertias[{i}] (its spatial inertia)', G)
        out.append((m, homogeneous(R, p + R @ c), inertia))
    return out


def robot_from_screw_axes(screw_axes, home, body=False, name='screw_chain', link_inertias=None):
    """
    Return the Robot of the chain with joint screw axes ``screw_axes`` (6, n).

    Columns [w; v], MR's Slist, or Blist with ``body=True``; end-effector home pose ``home`` (4, 4)
    (MR's M); see the module docstring. theta_i are the robot's independent coordinates (rad or m);
    ``name``: the robot's.  ``link_inertias``: None (massless links) or n pairs (T_i, G_i), the
    home pose (4, 4) in the fixed frame of a frame on the link moved by joint i and the link's
    spatial inertia (6, 6) about it (module docstring).
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
    inertias = _link_inertias(link_inertias, S.shape[1])
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
        mass, inertia, com = 0.0, zero, None
        if inertias is not None:  # the CoM frame in the link frame ({s}'s axes at ``point``)
            mass, T_com, inertia = inertias[i]
            com = homogeneous(T_com[:3, :3], T_com[:3, 3] - point)
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
            b.add_link(link, mass, inertia, com)
            b.add_joint(
                f'{joint}_pitch',
                'prismatic',
                f'{link}_turn',
                link,
                axis=axis,
                mimic=(joint, pitch, 0.0),
            )
        else:
            b.add_link(link, mass, inertia, com)
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
