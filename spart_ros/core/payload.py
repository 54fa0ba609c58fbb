"""
A payload rigidly attached to a link: the model with it, and the velocities just after it is.

When a robot grasps a body (a captured target, a tool), the two move as one from then on: the
robot's model gains a link, fixed to the grasping link, with the body's mass and inertia
(:func:`attach_payload`: a new :class:`~spart_ros.core.model.Robot`, the robot's own being
never changed).  The joint variables stay the same (a fixed joint adds none), so the joint
order, limits and every per-joint array of a controller are unchanged; the per-link arrays gain
one link (numbered depth-first: the payload is the last child of its link).

At the attachment the velocities jump (a plastic impact with internal impulses): configuration
unchanged, the payload's twist made equal to the grasping link's motion, the momentum of robot
+ payload unchanged (no external impulse).  :func:`attachment_velocities` gives the combined
system's u0, um just after from the robot's u0, um and the payload's twist just before::

    H_c u+ = H_r u- + J_p' M_p t_p-

(H_c, H_r: the combined and the robot's mass matrices; J_p the Jacobian of the payload's CoM in
the combined model; M_p = blkdiag(I_p, m_p I3) its spatial inertia at its CoM, world; t_p- its
twist [angular velocity; CoM velocity], world), and the impulse the payload receives.

Pure numpy on the compiled fast path; no ROS.
"""

from collections import namedtuple

import numpy as np

from . import checks as chk
from .errors import InputError
from .fast import FastDynamics
from .model import (
    _build_tree,
    _JointSpec,
    _LinkSpec,
    check_mass_inertia,
    homogeneous,
    JointLimits,
    Robot,
)
from .rigid_motion import checked_transform

__all__ = ['attach_payload', 'attachment_velocities', 'Attachment', 'payload_link']

Attachment = namedtuple('Attachment', 'u0 um impulse')
Attachment.__doc__ = """Velocities of the combined system just after an attachment: ``u0`` (6,),
``um`` (n_q,) (SPART's conventions); ``impulse`` (6,) [angular impulse about the payload's CoM;
linear impulse] the payload received from the robot [N m s; N s], world axes (the robot received
its opposite)."""


def _link_com(robot, i):
    """Return the CoM frame (4, 4) of link id ``i`` in its URDF link frame."""
    return np.asarray(robot.base_link.T if i == 0 else robot.link(i).T, dtype=float)


def attach_payload(robot, link, mass, inertia, pose, name='payload'):
    """
    Return a new Robot: ``robot`` with a payload body fixed to ``link``.

    ``link``: SPART id (0 = base) or name of the grasping link; ``mass`` [kg] (> 0), ``inertia``
    (3, 3) [kg m^2] about the payload's CoM in its own axes; ``pose`` (4, 4): the payload's CoM
    frame (those axes) in the link's URDF frame; ``name``: the payload link's name (its fixed
    joint is ``name + '_joint'``).  The joint variables, their order and limits are those of
    ``robot``; the payload is the last child of ``link``.  InputError naming a bad argument.
    """
    if not isinstance(robot, Robot):
        raise InputError(f'robot: expected a Robot, got {chk.given(robot)}')
    i = chk.link_id('link', link, robot)
    mass = chk.scalar('mass', mass)
    if not mass > 0:
        raise InputError(f'mass: a payload has a mass > 0 kg, got {mass}')
    inertia = np.array(chk.array('inertia', inertia, (3, 3)), dtype=float)
    check_mass_inertia(str(name), mass, inertia)
    R, p = checked_transform('pose', pose)
    name = str(name)
    if name in robot.keys.link_id or name + '_joint' in robot.keys.joint_id:
        raise InputError(
            f'name: robot {robot.name!r} has a link {name!r} or a joint {name + "_joint"!r} '
            'already: give the payload another name'
        )
    links = [
        _LinkSpec(
            robot.base_link.name,
            robot.base_link.mass,
            robot.base_link.inertia,
            _link_com(robot, 0),
        )
    ]
    links += [
        _LinkSpec(lk.name, lk.mass, lk.inertia, _link_com(robot, lk.id)) for lk in robot.links
    ]
    mimic = robot.mimic
    joints = []
    for j in robot.joints:
        origin = _link_com(robot, j.parent_link) @ np.asarray(j.T, dtype=float)
        joints.append(
            _JointSpec(
                j.name,
                j.type,
                robot.link_names[j.parent_link],
                robot.link_names[j.child_link],
                origin,
                np.asarray(j.axis),
                j.limits,
                mimic.get(j.name),
                j.dynamics,
            )
        )
    links.append(_LinkSpec(name, mass, inertia, np.eye(4)))
    joints.append(
        _JointSpec(
            name + '_joint',
            0,
            robot.link_names[i],
            name,
            homogeneous(np.asarray(R, float), np.asarray(p, float)),
            np.zeros(3),
            JointLimits(),
        )
    )
    options = {
        'base_hint': robot.base_hint,
        'base_pose': robot.base_pose,
        'world_link': robot.world_link,
    }
    return _build_tree(robot.name, links, joints, origin=robot.origin, **options)


def payload_link(combined, name='payload'):
    """Return the SPART link id of the payload ``name`` in ``combined`` (attach_payload's)."""
    if name not in combined.keys.link_id:
        raise InputError(f'robot {combined.name!r} has no payload link {name!r}')
    return combined.keys.link_id[name]


def attachment_velocities(
    robot, combined, R0, r0, qm, u0, um, payload_twist, name='payload', gravity=None
):
    """
    Return the :data:`Attachment`: the combined system's velocities just after the attachment.

    ``robot``: the model before (without the payload); ``combined``: :func:`attach_payload`'s
    model (payload link ``name``); the state (SPART's conventions) ``R0``, ``r0``, ``qm``, ``u0``,
    ``um`` just before; ``payload_twist`` (6,): the payload's [angular velocity; CoM velocity],
    world, just before (it is where the combined model puts it).  ``gravity``: not used (an
    impact's impulses are finite, gravity's are not), accepted for symmetry with the plants.
    See the module docstring.
    """
    del gravity
    if robot.n_q != combined.n_q:
        raise InputError(
            f"combined: {combined.n_q} joint variables for the robot's {robot.n_q}: not a model "
            'attach_payload made of this robot'
        )
    k = payload_link(combined, name)
    t_p = chk.vector('payload_twist', payload_twist, 6)
    u0 = chk.vector('u0', u0, 6)
    um = chk.vector('um', um, robot.n_q)
    u = np.concatenate([u0, um])
    fr, fc = FastDynamics(robot), FastDynamics(combined)
    rhs = fr.mass_matrix(R0, r0, qm) @ u
    J, _ = fc.jacobian(k, R0, r0, qm, bias=False)
    J = np.array(J)
    R_p, _ = fc.link_pose(k)
    body = combined.link(k)
    M = np.zeros((6, 6))
    M[0:3, 0:3] = R_p @ np.asarray(body.inertia, dtype=float) @ R_p.T
    M[3:6, 3:6] = body.mass * np.eye(3)
    rhs += J.T @ (M @ t_p)
    u_plus = np.linalg.solve(np.array(fc.mass_matrix(R0, r0, qm)), rhs)
    impulse = M @ (J @ u_plus - t_p)
    return Attachment(u_plus[0:6], u_plus[6:], impulse)
