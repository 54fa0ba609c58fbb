"""
The space-robot motion laws as controller modes (pure Python, no ROS).

A :class:`SpaceMode` wraps one law of :mod:`.resolved_rate`, :mod:`.reactionless` or
:mod:`.desired_reaction` for a controller: the measured state in the ROS base convention
(``base`` with R_b, p_b: pose of the URDF base link in the world; v_b, w_b: its twist in the
base link frame, REP 105) and the joint positions/velocities (n_q,) in; out, per control tick,
either the joint velocities of the law (``interface='velocity'``, for a velocity command
controller) or joint efforts (``interface='effort'``): SPART's Floating_ID of the law's joint
accelerations qdd = velocity_gain (qd_ref - qd) + d/dt qd_ref with the measured (unactuated)
base, so that an effort controller (ros2_control's, or spart_sim) makes the arm follow the
velocity reference while the base reacts.

References: an end-effector twist [angular velocity; velocity of the end-effector point] (a
feed-forward), a pose target of the end-effector frame (closed by the law's P gain), and for
``desired_reaction`` a base attitude target: the rotation of the URDF base link in the world
(converted here to the law's base CoM frame).  The twist and the pose target are given in the
world frame, or in the URDF base link frame (``twist_frame`` / ``pose_frame`` = 'base'),
converted here with the measured base pose of each tick:

- a twist in 'base' is the end effector's twist relative to the world expressed in base link
  axes (a change of coordinates, as MoveIt Servo reads its command frame): [R_b w; R_b v];
- a pose target in 'base' is fixed to the base (it moves with it): R = R_b R_t, p = p_b + R_b p_t.

As a controller's :class:`~spart_ros.control.law.Law` (:meth:`SpaceMode.build`,
:meth:`SpaceMode.command`), the references are kept by :meth:`SpaceMode.set_reference`:
``'ee_twist'`` = (twist (6,), frame), older than ``reference_timeout`` s (steady clock) counts
as none (the arm stops); ``'ee_pose'`` = (R (3, 3), p (3,), frame); ``'ee_goal'`` = a
:class:`~spart_ros.control.ee_goals.PoseGoal` (reach a pose in a given time along a Cartesian or
screw path: at each tick the path's pose is the target and its twist the feed-forward; it starts
from the pose target the law had, or from the measured pose; at its end its pose stays the
target; an ``'ee_pose'`` or ``'ee_twist'`` preempts it); ``'base_attitude'`` = R (3, 3)
(desired_reaction).  Without a reference the task twist is zero: the end effector is held
still (the base still moves by momentum conservation).
"""

from collections import namedtuple
import warnings

import numpy as np

from .desired_reaction import DesiredReaction
from .ee_goals import GoalFollower
from .law import BaseFrames, Law, LawOutput
from .reactionless import Reactionless
from .resolved_rate import ResolvedRate, ResolvedRateMinBaseEnergy
from ..core import base_state as bs
from ..core import checks as chk
from ..core.connectivity import leaf_links
from ..core.errors import InputError

__all__ = ['SpaceMode', 'SPACE_LAWS', 'SpaceReferences', 'INTERFACES', 'REFERENCE_FRAMES']

#: controller mode -> law class
SPACE_LAWS = {
    law.mode: law
    for law in (ResolvedRate, ResolvedRateMinBaseEnergy, Reactionless, DesiredReaction)
}
INTERFACES = ('effort', 'velocity')

#: frames a twist or pose reference may be given in (module docstring)
REFERENCE_FRAMES = ('world', 'base')

SpaceReferences = namedtuple(
    'SpaceReferences',
    'twist position rotation base_rotation twist_frame pose_frame',
    defaults=('world', 'world'),
)
SpaceReferences.__doc__ = """References of one tick, each None when absent: ``twist`` (6,)
[angular; linear velocity of the end-effector point]; ``position`` (3,), ``rotation`` (3, 3): the
end-effector frame's target pose; ``base_rotation`` (3, 3): target rotation of the URDF base link
frame in the world (desired_reaction); ``twist_frame``, ``pose_frame``: 'world' (default) or 'base'
(the URDF base link frame; see the module docstring)."""

SpaceOutput = namedtuple(
    'SpaceOutput', 'values command base_angular_velocity actuators', defaults=(None,)
)
SpaceOutput.__doc__ = """``values`` (n_q,): joint velocities (velocity interface) or efforts
(effort interface); ``command``: the law's SpaceMotionCommand (joint rates, accelerations, task
twist in the world frame, status: SPART's conventions, base CoM frame); ``base_angular_velocity``
(3,): the measured base angular velocity in the URDF base LINK frame (as odometry's twist, REP
105); ``actuators``: the base's wheel commands
(:data:`~spart_ros.control.base_actuation.BaseActuatorCommand`) when they hold the attitude, else
None."""


class SpaceMode(Law):
    """
    One space motion law as a controller mode (see the module docstring).

    ``mode``: a key of :data:`SPACE_LAWS`; ``dynamics``: the robot's FastDynamics (its model shared
    with the law, which computes in a workspace of its own; the robot must have no mimic joints:
    the laws work in SPART's joint variables); ``interface``: 'effort' or 'velocity';
    ``reference_timeout`` [s]: a twist older than this is dropped; ``actuation``: the base
    actuators' control (a BaseActuatorControl, or None) that holds the base attitude with the
    wheels, with ``attitude_gains`` (kp [1/s^2], kd [1/s]); ``law_options``: the law's keyword
    arguments (``link``, ``offset``, ``frame``, ``rows``, ``damping``, ...).  ``notes``: the
    warnings the law raised while being built (e.g. URDF velocity limits of 0 read as none), for a
    node's log.
    """

    base = 'floating'
    follows = 'end_effector'
    holds_position = False
    interfaces = INTERFACES

    def __init__(
        self,
        mode,
        dynamics,
        interface='effort',
        reference_timeout=0.5,
        actuation=None,
        attitude_gains=(1.0, 2.0),
        **law_options,
    ):
        if mode not in SPACE_LAWS:
            raise InputError(f'mode: expected one of {sorted(SPACE_LAWS)}, got {mode!r}')
        if interface not in INTERFACES:
            raise InputError(f'command_interface: expected one of {INTERFACES}, got {interface!r}')
        robot = dynamics.robot
        if robot.mimic:
            raise InputError(
                f'mode {mode}: robot {robot.name!r} has mimic joints {sorted(robot.mimic)}; the '
                "space motion laws work in SPART's joint variables (every moving joint "
                'independent)'
            )
        self.mode, self.interface, self.robot, self.dynamics = mode, interface, robot, dynamics
        link = law_options.pop('link')
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            # the law gets its own workspace: compute() runs the law, then floating-base ID on
            # self.dynamics, and neither may overwrite the other's results
            self.law = SPACE_LAWS[mode](
                robot, link, dynamics=dynamics.new_workspace(), **law_options
            )
        self.notes = [str(w.message) for w in caught]
        self.n_q = robot.n_q
        self._R_bc = np.asarray(robot.base_link.T, dtype=float)[:3, :3]
        self.references = self.reference_names(mode)
        self.reference_timeout = float(reference_timeout)
        self.frames = BaseFrames(robot)
        if actuation is not None and not actuation.n_w:
            actuation = None  # thrusters only: the space modes leave the base free
        if actuation is not None and interface != 'effort':
            raise InputError(
                f'mode {mode}: the reaction wheels hold the base attitude through the effort '
                'interface (floating-base inverse dynamics); command_interface is '
                f'{interface!r}'
            )
        self.actuation = actuation
        self.attitude_gains = np.array(attitude_gains, dtype=float)
        self.clear_references()

    @classmethod
    def reference_names(cls, mode):
        return ('ee_twist', 'ee_pose', 'ee_goal') + (
            ('base_attitude',) if mode == 'desired_reaction' else ()
        )

    @property
    def interface(self):
        return self._interface

    @interface.setter
    def interface(self, value):
        self._interface = value

    @classmethod
    def build(cls, mode, dynamics, settings, gains=None):
        """
        Return the mode for ``settings``.

        :class:`~spart_ros.control.settings.ControllerSettings`: the end effector, the law's
        options, ``command_interface``, ``reference_timeout``; ``dynamics``: the robot's fast path;
        ``gains``: not used (the laws' gains are settings).
        """
        from .base_actuation import from_settings

        s = settings
        options = {
            'link': s.ee_link or leaf_links(dynamics.robot)[0],
            'offset': list(s.ee_offset),
            'frame': 'link',
            'rows': list(s.task_rows) if s.task_rows else None,
            'damping': float(s.damping),
            'singular_region': float(s.singular_region),
            'velocity_gain': float(s.velocity_gain),
            'pose_gain': float(s.pose_gain),
        }
        if s.max_joint_rates:
            rates = [float(x) for x in s.max_joint_rates]
            options['max_joint_rates'] = rates[0] if len(rates) == 1 else rates
        if mode == 'desired_reaction':
            options.update(
                attitude_gain=float(s.attitude_gain),
                base_rows=list(s.base_rows),
                priority=s.priority,
            )
        elif mode == 'reactionless':
            options.update(attitude_only=bool(s.reactionless_attitude_only))
        return cls(
            mode,
            dynamics,
            s.command_interface,
            reference_timeout=s.reference_timeout,
            actuation=from_settings(s),
            attitude_gains=tuple(s.base_gains)[2:4],
            **options,
        )

    def apply_settings(self, settings, gains=None):
        self.reference_timeout = float(settings.reference_timeout)
        self.attitude_gains = np.array(tuple(settings.base_gains)[2:4], dtype=float)

    def reset(self):
        self.law.reset()
        if self.actuation is not None:
            self.actuation.reset()

    def clear_references(self):
        self.reset()
        self._hold_attitude = None  # R_b the wheels hold (the first state's)
        self._twist = None  # (twist, frame, received)
        self._pose = None  # (R, p, frame)
        self._base_attitude = None
        if getattr(self, '_goals', None) is not None:
            self._goals.abort('the references were cleared (activation)')
        self._goals = GoalFollower()

    def abort_goal(self, why):
        """Drop the pose goal being followed (aborted: ``why``); the pose target stays."""
        self._goals.abort(why)

    def set_reference(self, name, value, received=None):
        """
        Keep reference ``name`` = ``value`` (return None).

        'ee_twist' = (twist (6,), frame), 'ee_pose' = (R (3, 3), p (3,), frame),
        'base_attitude' = R (3, 3) (desired_reaction); frames 'world' or 'base' (module docstring);
        ``received``: steady clock time (s) of the twist.
        """
        if name == 'wheel_speeds' and self.actuation is not None:
            return self.actuation.set_speeds(value)
        if name not in self.references:
            return super().set_reference(name, value, received)
        if name == 'ee_goal':
            self._goals.set_goal(value)
        elif name == 'ee_twist':
            twist, frame = value
            self._check_frame('twist_frame', frame)
            self._twist = (chk.vector('ee_twist', twist, 6).copy(), frame, received)
            self._goals.preempt('replaced by an ee_twist reference')
        elif name == 'ee_pose':
            R, p, frame = value
            self._check_frame('pose_frame', frame)
            self._pose = (
                chk.array('ee_pose rotation', R, (3, 3)).copy(),
                chk.vector('ee_pose position', p, 3).copy(),
                frame,
            )
            self._goals.preempt('replaced by an ee_pose reference')
        else:
            self._base_attitude = chk.array('base_attitude', value, (3, 3)).copy()

    @staticmethod
    def _check_frame(name, frame):
        if frame not in REFERENCE_FRAMES:
            raise InputError(f'{name}: expected one of {REFERENCE_FRAMES}, got {frame!r}')

    @property
    def has_reference(self):
        """Return True if a twist, pose or goal reference is kept (the twist maybe expired)."""
        return self._twist is not None or self._pose is not None or self._goals.active

    def references_at(self, now):
        """
        Return the :data:`SpaceReferences` of the kept references at steady time ``now``.

        A twist older than ``reference_timeout`` counts as none.
        """
        twist, twist_frame = None, 'world'
        if self._twist is not None and (
            now is None or self._twist[2] is None or now - self._twist[2] <= self.reference_timeout
        ):
            twist, twist_frame, _ = self._twist
        R, p, pose_frame = self._pose if self._pose is not None else (None, None, 'world')
        return SpaceReferences(twist, p, R, self._base_attitude, twist_frame, pose_frame)

    def command(self, state, joint_reference, t, dt, now=None):
        """
        Return the :data:`~spart_ros.control.law.LawOutput` of one tick (the Law entry).

        ``state``, ``joint_reference`` (not used: the end effector is followed), ``t``, ``dt``: as
        :meth:`~spart_ros.control.law.Law.command`.

        :meth:`compute` with the kept references (``now``: steady clock, for the twist's timeout)
        or the pose goal's path at ``t``; ``details`` = the :data:`SpaceOutput`.
        """
        refs = self.references_at(now)
        if self._goals.active:
            sample, finished = self._goals.sample(
                t, lambda: self._start_pose(state.base, state.q, refs), state.base
            )
            if sample is not None:
                refs = refs._replace(
                    twist=sample.twist,
                    position=sample.position,
                    rotation=sample.rotation,
                    twist_frame='world',
                    pose_frame='world',
                )
                if finished:  # the goal's pose stays the target
                    self._pose, self._twist = (
                        (sample.rotation.copy(), sample.position.copy(), 'world'),
                        None,
                    )
        out = self.compute(state.base, state.q, state.qd, refs, t)
        return LawOutput(out.values, None, None, out, out.actuators)

    def _start_pose(self, base, q, refs):
        """
        Where a goal's path starts.

        The pose target (world) if there is one, else the measured pose.
        """
        _, position, rotation = self._in_world(base, refs)
        if position is not None and rotation is not None:
            return rotation, position
        R, p = self.end_effector_pose(base, q)
        return (R if rotation is None else rotation), (p if position is None else position)

    def compute(self, base, q, qd, references, t):
        """
        Return the :data:`SpaceOutput` for the state at control time ``t`` (s).

        The state: ``base``, ``q``, ``qd``; ``references``: {name: value} as
        :meth:`set_reference` keeps them.
        """
        R0, r0, u0 = bs.base_from_link_frame(self.robot, base.R_b, base.p_b, base.v_b, base.w_b)
        twist, position, rotation = self._in_world(base, references)
        kwargs = {'twist': twist, 'position': position, 'rotation': rotation, 't': t}
        if self.mode == 'desired_reaction':
            R_ref = (
                None if references.base_rotation is None else references.base_rotation @ self._R_bc
            )
            cmd = self.law.update(R0, r0, q, u0, qd, base_rotation=R_ref, **kwargs)
        else:
            cmd = self.law.update(R0, r0, q, u0, qd, **kwargs)
        w_b = np.array(base.w_b, dtype=float)
        if self.interface == 'velocity':
            return SpaceOutput(cmd.joint_velocities.copy(), cmd, w_b)
        if self.actuation is not None:
            return self._attitude_held(base, R0, r0, q, u0, qd, cmd, w_b, t)
        taum, _ = self.dynamics.floating_inverse_dynamics(
            R0, r0, q, u0, qd, cmd.joint_accelerations
        )
        return SpaceOutput(taum.copy(), cmd, w_b)

    def _attitude_held(self, base, R0, r0, q, u0, qd, cmd, w_b, t):
        """
        Joint efforts and wheel torques: the arm as the law asks, the base attitude held.

        The base's angular acceleration is alpha_b = kp rotvec(R_b' R_hold) - kd w_b (the
        attitude of the first state after activation; ``base_gains`` kp_rotation, kd_rotation),
        its CoM acceleration what the zero external force leaves; inverse dynamics of the arm model
        (wheels locked) gives the joint efforts and the base torque, which the wheels give
        (:class:`~spart_ros.control.base_actuation.BaseActuatorControl`, no thrust).
        """
        from .end_effector import rotation_vector

        R_b = np.asarray(base.R_b, dtype=float)
        if self._hold_attitude is None:
            self._hold_attitude = R_b.copy()
        kp, kd = self.attitude_gains
        alpha_b = kp * rotation_vector(R_b.T @ self._hold_attitude) - kd * w_b
        from .base_actuation import AttitudeDynamics

        a = self.actuation
        speeds = a.measured_speeds()
        dyn = AttitudeDynamics(
            self.robot,
            self.dynamics,
            R0,
            r0,
            q,
            u0,
            qd,
            cmd.joint_accelerations,
            alpha_b,
            w_b,
            a,
            speeds,
        )
        required = np.zeros(6)
        required[0:3] = dyn.torque_for(np.zeros(3), np.zeros(3))
        act = a.command(
            0.0 if t is None else t, required, speeds, thrust=False, torque_for=dyn.torque_for
        )
        taum = dyn.taum.copy()
        return SpaceOutput(taum, cmd, w_b, act)

    @staticmethod
    def _in_world(base, references):
        """(twist, position, rotation) of ``references`` in the world frame (module docstring)."""
        twist, position, rotation = references.twist, references.position, references.rotation
        for name, frame in (
            ('twist_frame', references.twist_frame),
            ('pose_frame', references.pose_frame),
        ):
            if frame not in REFERENCE_FRAMES:
                raise InputError(f'{name}: expected one of {REFERENCE_FRAMES}, got {frame!r}')
        R_b = np.asarray(base.R_b, dtype=float)
        if twist is not None and references.twist_frame == 'base':
            twist = chk.vector('twist', twist, 6)
            twist = np.concatenate([R_b @ twist[0:3], R_b @ twist[3:6]])
        if references.pose_frame == 'base':
            if position is not None:
                position = np.asarray(base.p_b, dtype=float) + R_b @ chk.vector(
                    'position', position, 3
                )
            if rotation is not None:
                rotation = R_b @ chk.array('rotation', rotation, (3, 3))
        return twist, position, rotation

    def end_effector_pose(self, base, q):
        """
        Return (R (3, 3), p (3,)) of the end-effector frame in the world at a state.

        ``base``: the base link state (R_b, p_b, ...), ``q``: the joint positions.

        For pose targets set relative to where the end effector is.
        """
        R0, r0, _ = bs.base_from_link_frame(self.robot, base.R_b, base.p_b)
        return self.law.end_effector.pose(R0, r0, q)
