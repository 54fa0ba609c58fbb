"""
The robot as a controller commands it: its mode's law for the model, and the joints it drives.

Pure Python, no ROS.  A :class:`ControlledRobot` is made once per robot model (a new
robot_description is a new one) from the controller's settings: the law of the mode
(:func:`spart_ros.control.modes.build_law`, warmed up), the command joints and their columns in
the model's coordinates, the effort limits (the URDF's, or ``effort_limits``), the position
limits, the per-joint settings (gains, ``max_tracking_error``, the default goal tolerances) and,
when a pose goal needs it, the end effector's inverse kinematics.  It turns a law's output into
the command: the command joints' values, refused when not finite, clamped to the limits (and
the clamping watched: :mod:`.saturation`); at the first state it commands, it says when gravity
there already needs more than a joint's effort limit (a robot that cannot hold itself).
"""

from types import SimpleNamespace

import numpy as np

from .effort_laws import Gains
from .goals import GoalError, INVALID_JOINTS
from .law import BaseFrames
from .modes import build_law
from .safety import all_finite, clamp_efforts, effort_limits
from .saturation import effort_unit, EffortSaturation
from .settings import GAINS
from .tolerances import default_tolerances
from .trajectory import Reference
from ..core.connectivity import leaf_links
from ..core.errors import InputError
from ..core.inverse_kinematics import InverseKinematics
from ..core.mimic import command_joints as default_command_joints
from ..native.compiled import call as _call
from ..native.compiled import clamp_command as _clamp_command
from ..native.compiled import KINDS

__all__ = ['ControlledRobot']

_K_CLAMP = KINDS['clamp_command']


class ControlledRobot:
    """
    The law of ``settings.mode`` for ``robot``, and the command joints (module docstring).

    ``robot``: core Robot; ``dynamics``: its fast path in independent coordinates (built when
    None, with ``settings.joint_dynamics``); ``hardware``: the URDF's ``<ros2_control>`` tags,
    whose effort joints are the default command joints; ``notify(level, key, text)``: where the
    law's notes go.  InputError naming what does not fit (a command joint the model does not
    have, a setting, dynamics built otherwise than the settings say).

    Attributes: ``robot``, ``dynamics``, ``law``, ``frames`` (its
    :class:`~spart_ros.control.law.BaseFrames`); ``q_names`` (n,) the model's coordinates,
    ``joint_names`` (m,) the command joints, ``index`` (m,) their columns; ``lower``, ``upper``
    (n,) position limits; ``limits`` (m,) effort (or, for a velocity law, no) limits;
    ``max_error`` (n,) ``max_tracking_error`` per coordinate (inf: unchecked), ``fault_check``
    (whether any is checked); ``tolerances``, the default goal tolerances
    (:func:`~spart_ros.control.tolerances.default_tolerances`); ``saturation``, the
    :class:`~spart_ros.control.saturation.EffortSaturation` of its commands; ``start_checked``:
    :meth:`check_start_pose` ran.
    """

    def __init__(self, settings, robot, dynamics=None, hardware=(), notify=None):
        from ..core.fast.mimic import fast_dynamics

        s = settings
        if dynamics is None:
            dynamics = fast_dynamics(robot, joint_dynamics=s.joint_dynamics)
        elif robot.declares_joint_dynamics and dynamics.joint_dynamics != bool(s.joint_dynamics):
            raise InputError(
                f'joint_dynamics is {s.joint_dynamics} but the dynamics given to the controller '
                f"{'adds' if dynamics.joint_dynamics else 'leaves out'} the joints' damping, "
                'friction and armature: build it with fast_dynamics(robot, joint_dynamics=...) to '
                'match'
            )
        q_names = list(robot.coordinates.names)
        names = list(s.command_joints) or default_command_joints(robot, hardware)
        index = {n: k for k, n in enumerate(q_names)}
        unknown = [n for n in names if n not in index]
        if unknown:
            followers = list(robot.coordinates.followers)
            raise InputError(
                f'command_joints {unknown} are not moving joints of the model {robot.name!r} '
                f'({q_names}'
                + (f'; mimic joints {followers} follow their leaders' if followers else '')
                + ')'
            )
        per, gains, limits = _per_joint(s, names, q_names, robot)
        law = build_law(s.mode, dynamics, s, gains)
        _warm_up(law, len(q_names))
        if hasattr(law, 'notify'):  # a law that reports events of its own (mpc; not the warm-up's)
            law.notify = notify
        for note in getattr(law, 'notes', ()):
            if notify is not None:
                notify('warning', ('note', note), f'{s.mode}: {note}')
        if law.interface == 'velocity':
            limits = np.full(len(names), np.inf)  # the law bounds the joint rates itself
        joints = {j.name: j.limits for j in robot.joints}
        self.robot, self.dynamics, self.law = robot, dynamics, law
        self.frames = BaseFrames(robot)  # the base pose in SPART's terms (pose goals)
        self._ik = None
        self.q_names = q_names
        self.joint_names = names
        self.index = np.array([index[n] for n in names], dtype=np.intp)
        self.every_joint = bool(np.array_equal(self.index, np.arange(len(q_names))))
        self.zero = np.zeros(len(names))  # the stop command; also the finite check's zeros
        self._values = np.zeros(len(names))
        self.lower = np.array([joints[q].lower for q in q_names], dtype=float)
        self.upper = np.array([joints[q].upper for q in q_names], dtype=float)
        self._set_limits(limits, per, s)
        types = {j.name: j.type for j in robot.joints}
        self.units = [effort_unit(types[n]) for n in names]
        self._notify = notify
        self._clamped = np.zeros(len(names), dtype=bool)
        self.saturation = EffortSaturation(names, self.units, notify)
        self.start_checked = False

    def _set_limits(self, limits, per, settings):
        limits = np.ascontiguousarray(limits, dtype=float)  # (the clamp kernel's layout)
        self.limits, self._minus_limits = limits, -limits
        self.max_error = _full(
            per['max_tracking_error'], np.inf, self.index, len(self.q_names), zero_means=np.inf
        )
        self.fault_check = self.law.follows == 'joint_trajectory' and bool(
            np.isfinite(self.max_error).any()
        )
        self.tolerances = default_tolerances(
            len(self.q_names),
            self.index,
            per['path_tolerance'],
            per['goal_tolerance'],
            settings.stopped_velocity_tolerance,
            settings.goal_time,
        )

    def apply_settings(self, settings):
        """Take new run-time settings (checked already): the law's gains, limits, tolerances."""
        per, gains, limits = _per_joint(settings, self.joint_names, self.q_names, self.robot)
        self.law.apply_settings(settings, gains)
        self._set_limits(
            limits if self.law.interface != 'velocity' else self.limits, per, settings
        )

    def command_values(self, values, t=None):
        """
        Return the command (m,) from a law's ``values`` (n,) in the model's coordinates.

        The command joints' values, clamped to ``limits`` (this object's buffer, overwritten by
        the next call); ``t``: the control time (s), for :attr:`saturation`. InputError naming the
        joint when one is not finite: the law failed.
        """
        count = _call(
            _clamp_command,
            _K_CLAMP,
            values,
            self.index,
            self.every_joint,
            self.limits,
            self._values,
            self._clamped,
        )  # compiled: the numpy below for values of other types, or not finite (it says which)
        if count is not None and count >= 0:
            if count or self.saturation.active:
                demand = values if self.every_joint else values[self.index]
                self.saturation.update(demand, self._clamped, self.limits, t)
            return self._values
        values = values if self.every_joint else values[self.index]
        if not all_finite(values, self.zero):
            clamp_efforts(values, self.limits)  # raises, naming the joint
        out = np.maximum(values, self._minus_limits, out=self._values)  # np.clip, a third of
        out = np.minimum(out, self.limits, out=out)  # its cost (finite values: the same)
        clamped = np.not_equal(out, values, out=self._clamped)
        if self.saturation.active or np.count_nonzero(clamped):  # (a third of any()'s cost)
            self.saturation.update(values, clamped, self.limits, t)
        return out

    def check_start_pose(self, state):
        """
        Say once when gravity at ``state`` needs more than a command joint's effort limit.

        ``state``: the first state this robot is commanded at (``base``, ``q``: model coordinates),
        on a fixed base in gravity; a warning naming each such joint, the effort and the limit
        (a robot that cannot hold itself there sags with its efforts clamped, and a tracking fault
        follows).  Return the joints (list of str).
        """
        self.start_checked = True
        law = self.law
        if law.base != 'fixed' or law.interface == 'velocity' or not np.any(self.dynamics.gravity):
            return []
        R0, r0, _ = self.frames.fixed(state.base)
        _, gm = self.dynamics.gravity_forces(R0, r0, state.q)
        need = np.abs(np.asarray(gm, dtype=float)[self.index])
        over = [k for k in range(len(self.joint_names)) if need[k] > self.limits[k]]
        for k in over:
            name, unit = self.joint_names[k], self.units[k]
            if self._notify is not None:
                self._notify(
                    'warning',
                    ('start pose', name),
                    f'gravity at the start pose needs {need[k]:.4g} {unit} at {name}, more than '
                    f'its effort limit {self.limits[k]:.4g} {unit}: the robot cannot hold itself '
                    'there (its efforts are clamped, it sags, a tracking fault follows); raise '
                    'effort_limits or the URDF <limit effort>, or start where it can hold itself',
                )
        return [self.joint_names[k] for k in over]

    def columns(self, joint_names):
        """
        Return where the moving joints ``joint_names`` are in the model's coordinates (intp).

        GoalError (INVALID_JOINTS) naming the unknown ones.
        """
        index = {n: k for k, n in enumerate(self.q_names)}
        bad = [n for n in joint_names if n not in index]
        if bad:
            raise GoalError(
                f'joint_names {list(joint_names)} must be distinct moving joints of '
                f'the model ({self.q_names}); unknown: {bad}',
                INVALID_JOINTS,
            )
        return np.array([index[n] for n in joint_names], dtype=np.intp)

    def inverse_kinematics(self, settings):
        """
        Return the fixed-base IK of the settings' end effector (``ee_link``, ``ee_offset``).

        Built once per model (on its own fast-path workspace).
        """
        if self._ik is None:
            self._ik = InverseKinematics(
                self.robot,
                settings.ee_link or leaf_links(self.robot)[0],
                list(settings.ee_offset),
                fast=self.dynamics.new_workspace(),
            )
        return self._ik


def _per_joint(s, names, q_names, robot):
    """(per-joint settings, Gains in model coordinates, effort limits (m,))."""
    per = s.per_joint(names)
    cols = [q_names.index(n) for n in names]
    full = {key: _full(per[key], per[key][0], cols, len(q_names)) for key in GAINS}
    gains = Gains(
        len(q_names),
        full['kp'],
        full['kd'],
        full['ki'],
        full['integral_limit'],
        full['impedance_stiffness'],
        full['impedance_damping'],
    )
    urdf = {j.name: j.limits.effort for j in robot.joints}
    limits = effort_limits(names, urdf, per['effort_limits'] if 'effort_limits' in per else ())
    return per, gains, limits


def _full(values, other, cols, n, zero_means=None):
    """
    Spread the per command joint ``values`` to (n,) per model coordinate.

    Command joint k at ``cols[k]``, ``other`` elsewhere; 0 -> ``zero_means``.
    """
    out = np.full(n, float(other))
    out[cols] = values
    if zero_means is not None:
        out[out == 0] = zero_means
    return out


def _warm_up(law, n):
    """
    One computation on a neutral state.

    That the first tick does not pay for loading the fast path's kernels of this call (hundreds of
    milliseconds on a busy machine: the watchdog would stop a robot just handed over by its
    brakes).
    """
    z3, zq = np.zeros(3), np.zeros(n)
    state = SimpleNamespace(
        base=SimpleNamespace(R_b=np.eye(3), p_b=z3, v_b=z3, w_b=z3), q=zq, qd=zq
    )
    try:
        if law.follows == 'end_effector':
            law.command(state, None, 0.0, 0.0, None)
        else:
            law.command(state, Reference(zq, zq, zq), 0.0, 0.0)
    # a neutral state a law cannot take (a singular pose) warms nothing
    except Exception:  # noqa: BLE001
        pass
    law.clear_references()
