"""
Whether a robot's generalized inertia matrix is invertible, and if not, why (in words).

Forward dynamics (and floating-base inverse dynamics) inverts H (or its base block H0).  A
singular H comes from the model: a moving joint that moves no mass, a massless floating base,
a robot with no mass at all.  :func:`singularity` finds it once per robot and question, at a
generic configuration (where a singularity that the masses and inertias cause shows; a
state-specific one, e.g. a point mass passing through a joint axis, may still occur), and says
which coordinates, joints and links are at fault; :func:`check_invertible` raises it.
"""

import weakref

import numpy as np

from . import _checks as chk
from .differential_kinematics import differential_kinematics
from .errors import SingularModelError
from .generalized_inertia import generalized_inertia
from .inertia import composite_body_inertia, inertia_in_inertial_frame
from .kinematics import kinematics

#: The names of the six base coordinates of u = [u0; um]: angular then linear velocity.
BASE_COORDINATES = ('base_wx', 'base_wy', 'base_wz', 'base_vx', 'base_vy', 'base_vz')

# {robot: {(floating, base_only, independent): reason}}: answered once per robot (robots are
# constant), kept beside the robot
_ANSWERS = weakref.WeakKeyDictionary()


def singularity(robot, floating=True, base_only=False, independent=False):
    """
    Return why the generalized inertia matrix of ``robot`` is singular, naming the coordinates.

    Joints and links ('' when it is not).

    Tested once per robot (then remembered) at a generic configuration: H is scaled to a unit
    diagonal and singular when its smallest eigenvalue is below 1e-10.  ``floating``: the
    (6 + n_q) matrix of a floating base, else the joint block; ``base_only``: only the base
    block H0 (what the floating-base inverse dynamics inverts); ``independent``: in the
    independent coordinates of a robot with mimic joints (``robot.coordinates``).
    """
    try:  # the common case first: a robot and bools seen before
        return _ANSWERS[robot][floating, base_only, independent]
    except (KeyError, TypeError):
        pass
    robot = chk.robot(robot)
    key = (
        chk.flag('floating', floating),
        chk.flag('base_only', base_only),
        chk.flag('independent', independent),
    )
    answers = _ANSWERS.setdefault(robot, {})
    if key not in answers:
        answers[key] = '' if robot.symbolic else _find_singularity(robot, *key)
    return answers[key]


def check_invertible(robot, floating=True, base_only=False, independent=False):
    """
    Raise SingularModelError naming the coordinates.

    Joints and links at fault if the generalized inertia matrix of ``robot`` (or its base block,
    ``base_only``) is singular: what forward dynamics (and floating-base inverse dynamics) needs.
    ``floating``, ``independent``: see :func:`singularity`.
    """
    why = singularity(robot, floating, base_only, independent)
    if why:
        what = (
            'the base block H0 of the generalized inertia matrix'
            if base_only
            else 'the generalized inertia matrix'
            + (' in independent coordinates' if independent else '')
        )
        raise SingularModelError(
            f'robot {robot.name!r}: {what} is singular: {why} (kinematics, Jacobians and '
            'inverse dynamics work; forward dynamics needs mass behind every moving joint '
            'and a base that can be accelerated: give those links an <inertial>)'
        )


def _find_singularity(robot, floating, base_only, independent):
    if floating and float(robot.total_mass) <= 0:
        return 'the robot has zero total mass, so a floating base has none'
    if base_only and not floating:
        return ''
    H, names = generic_mass_matrix(robot, floating, independent)
    if base_only:
        H, names = H[:6, :6], names[:6]
    null = _null_motion(H)
    if not null:
        return ''
    coordinates = [names[k] for k in null]
    reasons = [f'the motion of {coordinates} moves no mass (at a generic configuration)']
    links, joints = robot.massless_base_cluster() if floating else ([], [])
    if links and any(c.startswith('base_') for c in coordinates):
        reasons.append(
            f'as a floating base, links {links} (the base and what is welded to it) have no mass '
            f'and joints {joints} can turn or slide them without moving any mass'
        )
    for joint, moved in robot.massless_joints().items():
        if joint in coordinates:
            reasons.append(f'joint {joint!r} moves only massless links {moved}')
    return '; '.join(reasons)


def generic_mass_matrix(robot, floating=True, independent=False):
    """
    Return (H, coordinate names) at a fixed generic state (seeded random attitude and joints).

    (6 + n_q) square with a floating base, the joint block otherwise; in the independent
    coordinates with ``independent``.
    """
    rng = np.random.default_rng(20240611)
    q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    R0 = q * np.sign(np.linalg.det(q))
    qm = rng.uniform(-1.0, 1.0, robot.n_q)
    if independent:
        qm = robot.coordinates.positions(qm[: robot.coordinates.n])
    RJ, RL, rJ, rL, e, g = kinematics(R0, np.zeros(3), qm, robot)
    Bij, Bi0, P0, pm = differential_kinematics(R0, np.zeros(3), rL, e, g, robot)
    I0, Im = inertia_in_inertial_frame(R0, RL, robot)
    M0, Mm = composite_body_inertia(I0, Im, Bij, Bi0, robot)
    H0, H0m, Hm = generalized_inertia(M0, Mm, Bij, Bi0, P0, pm, robot)
    H = np.block([[H0, H0m], [H0m.T, Hm]])
    names = list(BASE_COORDINATES) + robot.q_names
    if independent:
        T = robot.coordinates.generalized(floating=True)
        H = T.T @ H @ T
        names = list(BASE_COORDINATES) + robot.coordinates.names
    if not floating:
        H, names = H[6:, 6:], names[6:]
    return H, names


def _null_motion(H, tol=1e-10):
    """
    Return the indices of the coordinates in a null motion of the symmetric H ([] if none).

    H scaled to a unit diagonal, smallest eigenvalue below ``tol``.
    """
    if H.size == 0:
        return []
    d = np.diag(H).copy()
    if np.any(d <= 0):
        return [int(k) for k in np.flatnonzero(d <= 0)]
    s = 1.0 / np.sqrt(d)
    w, V = np.linalg.eigh(H * s[:, None] * s[None, :])
    if w[0] > tol:
        return []
    v = np.abs(V[:, 0])
    return [int(k) for k in np.flatnonzero(v > 0.1 * v.max())]
