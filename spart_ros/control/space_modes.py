"""The space-robot motion laws as controller modes (pure Python, no ROS).

A :class:`SpaceMode` wraps one law of :mod:`.resolved_rate`, :mod:`.reactionless` or
:mod:`.desired_reaction` for a controller: the measured state in the ROS base convention
(``base`` with R_b, p_b: pose of the URDF base link in the world; v_b, w_b: its twist in the
base link frame, REP 105) and the joint positions/velocities (n_q,) in; out, per control tick,
either the joint velocities of the law (``interface='velocity'``, for a velocity command
controller) or joint efforts (``interface='effort'``): SPART's Floating_ID of the law's joint
accelerations qdd = velocity_gain (qd_ref - qd) + d/dt qd_ref with the measured (unactuated)
base, so that an effort controller (ros2_control's, or spart_sim) makes the arm follow the
velocity reference while the base reacts.

References: an end-effector twist [angular velocity; velocity of the end-effector point] in
the world frame (a feed-forward), a pose target of the end-effector frame in the world (closed
by the law's P gain), and for ``desired_reaction`` a base attitude target: the rotation of the
URDF base link in the world (converted here to the law's base CoM frame).
"""
from collections import namedtuple

import numpy as np

from ..core import base_state as bs
from ..core.errors import InputError
from .desired_reaction import DesiredReaction
from .reactionless import Reactionless
from .resolved_rate import ResolvedRate, ResolvedRateMinBaseEnergy

__all__ = ['SpaceMode', 'SPACE_LAWS', 'SpaceReferences', 'INTERFACES']

#: controller mode -> law class
SPACE_LAWS = {law.mode: law for law in (ResolvedRate, ResolvedRateMinBaseEnergy, Reactionless, DesiredReaction)}
INTERFACES = ('effort', 'velocity')

SpaceReferences = namedtuple('SpaceReferences', 'twist position rotation base_rotation')
SpaceReferences.__doc__ = """References of one tick, each None when absent: ``twist`` (6,) [angular;
linear velocity of the end-effector point], world frame; ``position`` (3,), ``rotation`` (3, 3): the
end-effector frame's target pose in the world; ``base_rotation`` (3, 3): target rotation of the URDF
base link frame in the world (desired_reaction)."""

SpaceOutput = namedtuple('SpaceOutput', 'values command')
SpaceOutput.__doc__ = """``values`` (n_q,): joint velocities (velocity interface) or efforts (effort
interface); ``command``: the law's SpaceMotionCommand (joint rates, accelerations, task twist, status)."""


class SpaceMode:
    """One space motion law as a controller mode (see the module docstring).

    ``mode``: a key of :data:`SPACE_LAWS`; ``dynamics``: the robot's FastDynamics (shared with
    the law; the robot must have no mimic joints: the laws work in SPART's joint variables);
    ``interface``: 'effort' or 'velocity'; ``law_options``: the law's keyword arguments
    (``link``, ``offset``, ``frame``, ``rows``, ``damping``, ...)."""

    def __init__(self, mode, dynamics, interface='effort', **law_options):
        if mode not in SPACE_LAWS:
            raise InputError(f'mode: expected one of {sorted(SPACE_LAWS)}, got {mode!r}')
        if interface not in INTERFACES:
            raise InputError(f'command_interface: expected one of {INTERFACES}, got {interface!r}')
        robot = dynamics.robot
        if robot.mimic:
            raise InputError(f'mode {mode}: robot {robot.name!r} has mimic joints {sorted(robot.mimic)}; the space '
                             'motion laws work in SPART\'s joint variables (every moving joint independent)')
        self.mode, self.interface, self.robot, self.dynamics = mode, interface, robot, dynamics
        link = law_options.pop('link')
        self.law = SPACE_LAWS[mode](robot, link, dynamics=dynamics, **law_options)
        self.n_q = robot.n_q
        self._R_bc = np.asarray(robot.base_link.T, dtype=float)[:3, :3]

    def reset(self):
        self.law.reset()

    def compute(self, base, q, qd, references, t):
        """:data:`SpaceOutput` for the state (``base``, ``q``, ``qd``) at control time ``t`` (s)."""
        R0, r0, u0 = bs.base_from_link_frame(self.robot, base.R_b, base.p_b, base.v_b, base.w_b)
        kwargs = dict(twist=references.twist, position=references.position, rotation=references.rotation, t=t)
        if self.mode == 'desired_reaction':
            R_ref = None if references.base_rotation is None else references.base_rotation @ self._R_bc
            cmd = self.law.update(R0, r0, q, u0, qd, base_rotation=R_ref, **kwargs)
        else:
            cmd = self.law.update(R0, r0, q, u0, qd, **kwargs)
        if self.interface == 'velocity':
            return SpaceOutput(cmd.joint_velocities.copy(), cmd)
        taum, _ = self.dynamics.floating_inverse_dynamics(R0, r0, q, u0, qd, cmd.joint_accelerations)
        return SpaceOutput(taum.copy(), cmd)

    def end_effector_pose(self, base, q):
        """(R (3, 3), p (3,)) of the end-effector frame in the world for a state (for pose targets
        set relative to where the end effector is)."""
        R0, r0, _ = bs.base_from_link_frame(self.robot, base.R_b, base.p_b)
        return self.law.end_effector.pose(R0, r0, q)
