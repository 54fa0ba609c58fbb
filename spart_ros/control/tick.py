"""
What goes into and out of one controller tick (pure Python, no ROS).

:data:`ControlInputs` is what a node (or an offline loop) knows at a tick, :data:`Command` what
the controller answers, :data:`Feedback` the last commanded tick as an action reports it, and
:data:`Snapshot` what a status message says.  The units of the controller
(:mod:`.controller`, docs/controller.md "How the controller is built") pass these between them;
nothing here computes.
"""

from collections import namedtuple

__all__ = ['ControlInputs', 'Command', 'Feedback', 'Snapshot']

ControlInputs = namedtuple(
    'ControlInputs',
    'state unavailable joint_times base_time stamp now',
    defaults=(None, None, None, None),
)
ControlInputs.__doc__ = """What a controller is given at a tick.

``state``: ``base`` (R_b, p_b, v_b, w_b: REP 105, see :mod:`.law`), ``q``, ``qd`` (n,) in the
model's independent joint coordinates, or None; ``unavailable``: why there is no state (one
sentence), None when there is; ``joint_times`` (n,): steady-clock receipt time (s) of each
coordinate's last value (NaN: never); ``base_time``: of the base state (None: fixed base, NaN:
never); ``stamp``: the newest joint state's stamp, (sec, nanosec) (None: ticks on a timer, no
answer-once rule); ``now``: the steady clock (s)."""

Command = namedtuple('Command', 'values zero base_torque base_force t actuators', defaults=(None,))
Command.__doc__ = """What to send: ``values`` (m,) in ``command_joints`` order (efforts, or joint
velocities for a velocity interface; the controller's buffer, overwritten by its next command),
``zero`` (an all-zero stop command), the base wrench of an actuated base (``base_torque``,
``base_force`` (3,), at b's origin in b, else None), ``t`` the control time it answers (None
for a stop command sent between ticks), ``actuators``: the base's thruster and wheel commands
(:data:`~spart_ros.control.base_actuation.BaseActuatorCommand`) of a law that drives them, else
None (a stop command: send them zeros)."""

Feedback = namedtuple('Feedback', 't desired actual error')
Feedback.__doc__ = """The last commanded tick for a goal's progress: control time ``t``;
``desired`` (:data:`~spart_ros.control.trajectory.Reference`), ``actual`` ((q, qd)) and ``error``
((e, edot) = desired - actual) in the model's joint coordinates."""

Snapshot = namedtuple(
    'Snapshot',
    'state reason active commanding joint_names position_error velocity_error '
    'efforts trajectory_remaining compute_time counts details actuators saturation',
    defaults=(None, None),
)
Snapshot.__doc__ = """What a status message says (:meth:`Controller.snapshot`): ``state`` (one of
:data:`~spart_ros.control.controller.STATES`), ``reason`` (why, '' when commanding normally),
``active``, ``commanding``; per command joint (``joint_names`` (m,) order): ``position_error``,
``velocity_error`` (reference - measured at the last command) and the last ``efforts`` sent, each
(m,); ``trajectory_remaining`` (s), ``compute_time`` (s, of the last tick), ``counts`` (commands,
zeros, timeouts, rejected, recoveries, trajectories, faults, resets, jumps) and the law's
``details`` (a space mode's status, else None); ``actuators``: the base actuators' last
:data:`~spart_ros.control.base_actuation.ActuationStatus`, else None; ``saturation``: the command
joints' :class:`~spart_ros.control.saturation.EffortSaturation` (None without a model)."""
