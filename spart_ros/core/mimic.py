"""
Mimic joints: independent joint coordinates and SPART's full joint variables.

A URDF ``<mimic joint="leader" multiplier="m" offset="o"/>`` on joint f says
q_f = m q_leader + o.  A robot with mimic joints keeps SPART's full joint variables
(every moving joint, ``robot.q_names``, n_q of them: what the SPART-named functions take)
and has fewer independent coordinates (the joints that mimic nothing, in SPART order).
With G (n_q, n_ind) and ``offset`` (n_q,) constant:

    q_full = G q + offset,   u_full = G u,   udot_full = G udot   (no G-dot term),
    tau = G' tau_full.

The last line is the principle of virtual work: the generalized force on an independent
coordinate is the sum of the joint efforts of its joints, each weighted by its multiplier
(a follower's effort acts on its leader as through an ideal transmission; the constraint
forces do no work).  The constrained equations of motion are then

    G' H G udot + G' c = tau        (c = the bias C u minus loads and gravity)

which is what Pinocchio computes for its mimic joints (``buildModelFromUrdf(..., mimic=True)``).
For a floating base, G is extended by the identity on the 6 base coordinates.
"""

import numpy as np

from . import checks as chk
from .errors import InputError


class IndependentCoordinates:
    """
    The map between a robot's independent joint coordinates and SPART's full ones.

    Attributes: ``names`` (independent joint names, SPART order), ``full_names``
    (``robot.q_names``), ``n``, ``n_full``, ``G`` (n_full, n), ``offset`` (n_full,),
    ``index`` (n,): the full-coordinate index of each independent joint, ``followers``:
    {follower: Mimic(leader, multiplier, offset)} (leaders independent), ``is_identity``
    (True when the robot has no mimic joints).
    """

    def __init__(self, robot):
        try:  # any robot model (a Robot builds its own when it is made)
            self.full_names, self.followers = list(robot.q_names), dict(robot.mimic)
        except AttributeError:
            raise InputError(
                f'robot: expected a spart_ros Robot, got {chk.given(robot)}'
            ) from None
        self.names = [name for name in self.full_names if name not in self.followers]
        self.n, self.n_full = len(self.names), len(self.full_names)
        self.is_identity = not self.followers
        column = {name: k for k, name in enumerate(self.names)}
        self.G = np.zeros((self.n_full, self.n))
        self.offset = np.zeros(self.n_full)
        for row, name in enumerate(self.full_names):
            m = self.followers.get(name)
            if m is None:
                self.G[row, column[name]] = 1.0
            else:
                self.G[row, column[m.leader]] = m.multiplier
                self.offset[row] = m.offset
        self.index = np.array([self.full_names.index(name) for name in self.names], dtype=np.int64)
        self.G.setflags(write=False)
        self.offset.setflags(write=False)

    def __repr__(self):
        return (
            f'<IndependentCoordinates n={self.n} n_full={self.n_full} '
            f'followers={list(self.followers)}>'
        )

    def positions(self, q):
        """
        Return the full joint positions, shape (n_full,), from independent ones ``q`` (n,).

        G q + offset.
        """
        return self.G @ chk.vector('q', q, self.n) + self.offset

    def velocities(self, u):
        """Return the full joint velocities, (n_full,), from independent ones ``u`` (n,): G u."""
        return self.G @ chk.vector('u', u, self.n)

    def accelerations(self, udot):
        """
        Return the full joint accelerations, (n_full,), from independent ones (n,).

        G udot (G is constant).
        """
        return self.G @ chk.vector('udot', udot, self.n)

    def forces(self, tau_full):
        """
        Return the forces on the independent coordinates (n,) of full joint efforts (n_full,).

        G' tau_full (each follower's effort reaches its leader times its multiplier).
        """
        return self.G.T @ chk.vector('tau_full', tau_full, self.n_full)

    def independent(self, q_full):
        """Return the independent coordinates' values (n,) read from ``q_full`` (n_full,)."""
        return chk.vector('q_full', q_full, self.n_full)[self.index]

    def constraint_error(self, q_full):
        """
        Return q_full - (G q + offset) for the q read from q_full.

        Zero when the followers agree with their leaders (n_full,).
        """
        q_full = chk.vector('q_full', q_full, self.n_full)
        return q_full - (self.G @ q_full[self.index] + self.offset)

    def generalized(self, floating=True):
        """Return the map of the whole generalized velocity: blkdiag(I6, G) (floating) or G."""
        if not chk.flag('floating', floating):
            return np.array(self.G)
        T = np.zeros((6 + self.n_full, 6 + self.n))
        T[0:6, 0:6] = np.eye(6)
        T[6:, 6:] = self.G
        return T


def command_joints(robot, hardware=()):
    """
    Return the joints an effort controller commands when its joint list is not given.

    The joints come in the order of its commands.

    ``hardware``: the URDF's ``<ros2_control>`` tags
    (:func:`spart_ros.core.ros2_control.ros2_control_from_urdf`, objects with ``joints``, each with
    ``name``, ``command_names`` and ``mimic``): when they give joints an ``effort`` command
    interface, those joints in the tags' order, less the ones that follow another (a URDF mimic
    joint, or ``mimic="true"``): the joints an effort controller of that robot claims. Otherwise
    (no tag, or no effort interface in it) the robot's independent joints (every moving joint that
    mimics nothing), in SPART order (depth-first from the base link, siblings in URDF file order,
    which is MuJoCo's order too).

    The ONE rule behind both spart_sim's default ``joints`` and spart_controller's default
    ``command_joints``, so that a sim and a controller started with default parameters on the
    same robot description agree on the commands' length and order.
    """
    try:
        names, followers = list(robot.coordinates.names), robot.coordinates.followers
    except AttributeError:
        raise InputError(f'robot: expected a spart_ros Robot, got {chk.given(robot)}') from None
    tagged = [j for component in hardware for j in component.joints if 'effort' in j.command_names]
    if not tagged:
        return names
    return [j.name for j in tagged if j.name not in followers and not j.mimic]
