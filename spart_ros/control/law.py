"""
The one interface of every control law a controller runs (pure numpy, no ROS).

A law turns the measured state and the references of one control tick into one
:data:`LawOutput`.  The :class:`~spart_ros.control.controller.Controller` owns everything
around it (states, reference schedule, safety gate, clamping), so a law is only the
mathematics; every mode of the controller, joint-space (:mod:`.effort_laws`) and space-robot
(:mod:`.space_modes`) alike, is a :class:`Law`:

- class attributes say what it needs and does: ``base`` ('fixed' or 'floating': the base mode
  of the inputs it needs), ``follows`` ('joint_trajectory': a joint reference the controller
  schedules, or 'end_effector': references given to :meth:`Law.set_reference`; 'none': neither),
  ``references`` (names :meth:`Law.set_reference` takes), ``holds_position`` (a hold of the
  measured joint pose is defined: activation and a tracking fault hold it; else a fault sends
  one zero command and stops), ``interfaces`` (the command interfaces it can output);
- ``build(mode, dynamics, settings, gains)`` makes it for a robot's fast path (``dynamics``: a
  :class:`~spart_ros.core.fast.FastDynamics` in the robot's independent joint coordinates,
  whose ``gravity`` the law uses), a :class:`~spart_ros.control.settings.ControllerSettings`
  and the per-joint :class:`~spart_ros.control.effort_laws.Gains` in the fast path's coordinates;
- ``command(state, joint_reference, t, dt)`` -> :data:`LawOutput`, once per tick;
- ``reset()`` forgets what the law integrates (after a halt), ``clear_references()`` also the
  references it keeps (on activation), ``apply_settings(settings, gains)`` takes new run-time
  settings (gains) between two ticks.

A new mode is one class (a subclass of :class:`Law`) plus one entry in
:data:`spart_ros.control.modes.MODES`, or, from another package, one entry point of the group
``spart_ros.modes`` (docs/controller.md, "Adding a mode").

State in: ``state.base`` with ``R_b`` (3, 3), ``p_b`` (3,): pose of the URDF base link frame b in
the world, ``v_b``, ``w_b`` (3,): its twist expressed in b (REP 105, nav_msgs/Odometry);
``state.q``, ``state.qd`` (n,) in the fast path's joint coordinates (C-ordered float64).
``joint_reference``: a :data:`~spart_ros.control.trajectory.Reference` (n,) each (the hold or
the trajectory; None for laws that follow no joint reference); ``t``: control time (s);
``dt``: time since the previous command (s, 0 at the first).
"""

from collections import namedtuple

import numpy as np

from .friction_compensation import FrictionCompensation
from ..native.compiled import base_frames_floating as _floating
from ..native.compiled import base_link_wrench as _link_wrench
from ..native.compiled import call as _call
from ..native.compiled import KINDS

_K_FLOATING, _K_WRENCH = KINDS['base_frames_floating'], KINDS['base_link_wrench']

__all__ = ['Law', 'LawOutput', 'BaseFrames', 'FrictionCompensation', 'FOLLOWS']

FOLLOWS = ('joint_trajectory', 'end_effector', 'none')

LawOutput = namedtuple(
    'LawOutput',
    'values base_torque base_force details actuators',
    defaults=(None, None, None, None),
)
LawOutput.__doc__ = """One tick's output of a law.

``values`` (n,): joint efforts [N m or N] (``interface`` 'effort') or joint velocities [rad/s or
m/s] ('velocity'), in the fast path's joint coordinates, before clamping; the array may be the
law's buffer, overwritten by its next call.  ``base_torque``, ``base_force`` (3,) each: the base
wrench at b's origin, in b (an actuated base, free_flying), else None.  ``details``: whatever
else the mode reports for a status message (e.g. a space mode's
:data:`~spart_ros.control.space_modes.SpaceOutput`), or None.  ``actuators``: the base's thruster
and wheel commands (:data:`~spart_ros.control.base_actuation.BaseActuatorCommand`) of a law that
drives them, else None."""


class Law:
    """Base class of the controller's laws (see the module docstring)."""

    mode = None  # the registry key (several modes may share a class)
    base = 'fixed'  # 'fixed' or 'floating'
    follows = 'joint_trajectory'
    references = ()  # names set_reference() takes
    holds_position = True
    interfaces = ('effort',)
    notes = ()  # warnings raised while building (for a node's log)
    #: the controller's look-ahead at its reference schedule (``JointReference.samples``), set
    #: when the law is bound: what the mpc modes plan over
    preview = None

    @classmethod
    def build(cls, mode, dynamics, settings, gains=None):
        """
        Build the law of ``mode`` for ``dynamics``, ``settings`` and ``gains``.

        InputError naming a bad setting.
        """
        raise NotImplementedError

    @classmethod
    def reference_names(cls, mode):
        """
        Return the references :meth:`set_reference` takes in ``mode``.

        A node subscribes to them.
        """
        return cls.references

    @property
    def interface(self):
        return self.interfaces[0]

    def command(self, state, joint_reference, t, dt):
        """
        Return the :data:`LawOutput` of one tick (see the module docstring).

        ``state``: the measured state (``base``: R_b, p_b, v_b, w_b; ``q``, ``qd``),
        ``joint_reference``: the :data:`~spart_ros.control.trajectory.Reference` to follow (None
        for an end-effector law), ``t``: the control time [s], ``dt``: the time since the last
        tick [s].
        """
        raise NotImplementedError

    def reset(self):
        """Forget what is integrated over ticks (after a halt: the motors were limp)."""

    def clear_references(self):
        """Forget the references kept by :meth:`set_reference` too (on activation)."""
        self.reset()

    def set_reference(self, name, value, received=None):
        """
        Keep reference ``name`` (one of :attr:`references`) = ``value``.

        ``received``: steady clock time (s) of its receipt, for references that expire.
        """
        from ..core.errors import InputError

        raise InputError(
            f'reference {name!r}: mode {self.mode} takes {list(self.references) or "none"}'
        )

    def apply_settings(self, settings, gains=None):
        """
        Take the run-time settings (gains, timeouts) of ``settings`` from the next tick on.

        ``gains``: the :class:`~spart_ros.control.effort_laws.Gains` of the new settings.
        """


class BaseFrames:
    """
    ROS base link state -> SPART's base state, for one robot, without checks or allocation.

    :func:`spart_ros.core.base_state.base_from_link_frame` does the same with every argument
    checked (and symbolic inputs allowed), which costs ten times the dynamics of a small arm
    in a control loop; here the inputs are the controller's own (checked once, finite) and the
    results go into this object's buffers (overwritten by the next call):
    ``R0`` (3, 3) = R_b R_bc, ``r0`` (3,) = p_b + R_b p_bc, ``u0`` (6,) = [R_bc' w_b;
    R_b (v_b + w_b x p_bc)] (R_bc, p_bc: the base CoM frame in b).  A fixed base's pose is
    converted once and kept (it is the same object every tick).
    """

    def __init__(self, robot):
        T = np.asarray(robot.base_link.T, dtype=float)
        self.R_bc, self.p_bc = np.ascontiguousarray(T[:3, :3]), np.ascontiguousarray(T[:3, 3])
        self.R_cb = np.ascontiguousarray(self.R_bc.T)
        x, y, z = self.p_bc
        #: -[p_bc]x: w x p_bc = minus_p_cross @ w
        self.minus_p_cross = np.array([[0.0, z, -y], [-z, 0.0, x], [y, -x, 0.0]])
        self.R0, self.r0, self.u0 = np.eye(3), np.zeros(3), np.zeros(6)
        self._rho, self._v = np.zeros(3), np.zeros(3)
        self._u0_angular, self._u0_linear = self.u0[0:3], self.u0[3:6]  # views
        self.zero6 = np.zeros(6)
        self._fixed = None
        self._out = (self.R0, self.r0, self.u0)

    def pose(self, base):
        """Return (R0, r0) of ``base`` (buffers)."""
        np.dot(base.R_b, self.R_bc, out=self.R0)  # np.dot: a third of np.matmul's cost on 3x3
        np.dot(base.R_b, self.p_bc, out=self._rho)
        np.add(base.p_b, self._rho, out=self.r0)
        return self.R0, self.r0

    def fixed(self, base):
        """Return (R0, r0, zero u0) of a fixed ``base``, converted the first time it is seen."""
        if self._fixed is None or self._fixed[0] is not base:
            R0, r0 = self.pose(base)
            self._fixed = (base, R0.copy(), r0.copy())
        return self._fixed[1], self._fixed[2], self.zero6

    def link_acceleration(self, base, u0dot):
        """
        Return [a_b; alpha_b] (6,) in b from SPART's u0dot (6,) of ``base``.

        a_b: the classical acceleration of b's origin; alpha_b: the angular acceleration. alpha_b =
        R_bc u0dot[0:3], a_b = R_b' u0dot[3:6] - alpha_b x p_bc - w_b x (w_b x p_bc) (a new array).
        """
        out = np.empty(6)
        alpha = np.dot(self.R_bc, u0dot[0:3], out=out[3:6])
        w, p = base.w_b, self.p_bc
        centripetal = w * np.dot(w, p) - p * np.dot(w, w)  # w x (w x p)
        np.dot(base.R_b.T, u0dot[3:6], out=out[0:3])
        out[0:3] -= np.dot(self.minus_p_cross, alpha)  # alpha x p
        out[0:3] -= centripetal
        return out

    def base_acceleration(self, base, a_b, alpha_b):
        """
        Return SPART's u0dot (6,) of the base link's acceleration ``a_b``, ``alpha_b`` (in b).

        a_b: the classical acceleration of b's origin, alpha_b: the angular acceleration; u0dot =
        [R_bc' alpha_b; R_b (a_b + alpha_b x p_bc + w_b x (w_b x p_bc))] (a new array; unchecked
        :func:`~spart_ros.core.base_state.base_acceleration_from_link_frame`).
        """
        out = np.empty(6)
        np.dot(self.R_cb, alpha_b, out=out[0:3])
        w, p = base.w_b, self.p_bc
        acc = a_b + np.dot(self.minus_p_cross, alpha_b)  # + alpha x p
        acc += w * np.dot(w, p) - p * np.dot(w, w)  # + w x (w x p)
        np.dot(base.R_b, acc, out=out[3:6])
        return out

    def link_wrench(self, base, tau0):
        """
        Return SPART's base wrench ``tau0`` (6,) as (torque, force) at b's origin, both in b.

        force_b = R_b' tau0[3:6], torque_b = R_bc tau0[0:3] + p_bc x force_b (new arrays; unchecked
        :func:`~spart_ros.core.base_state.base_generalized_force_to_link_frame`; compiled).
        """
        torque, force = np.empty(3), np.empty(3)
        done = _call(_link_wrench, _K_WRENCH, base.R_b, tau0, self.R_bc, self.p_bc, torque, force)
        if done is not None:
            return torque, force  # (numpy below for inputs of other types)
        force = np.dot(base.R_b.T, tau0[3:6])
        torque = np.dot(self.R_bc, tau0[0:3])
        torque -= np.dot(self.minus_p_cross, force)  # + p x f = - f x p
        return torque, force

    def floating(self, base):
        """Return (R0, r0, u0) of a moving base (buffers; compiled)."""
        b, out = base, self._out
        done = _call(
            _floating, _K_FLOATING, b.R_b, b.p_b, b.v_b, b.w_b, self.R_bc, self.p_bc, *out
        )
        if done is not None:
            return self.R0, self.r0, self.u0  # (numpy below for inputs of other types)
        self.pose(base)
        np.dot(self.R_cb, base.w_b, out=self._u0_angular)
        np.dot(self.minus_p_cross, base.w_b, out=self._v)
        self._v += base.v_b
        np.dot(base.R_b, self._v, out=self._u0_linear)
        return self.R0, self.r0, self.u0
