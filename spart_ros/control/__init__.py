"""
spart_ros.control: control laws, trajectories, safety and the controller (pure Python, no ROS).

Layering: ``spart_ros.core`` (numerics) <- ``spart_ros.control`` (this package) <-
``spart_ros.nodes`` (thin rclpy adapters).  Nothing here imports rclpy or message types:
inputs and outputs are numpy arrays in documented frames, so every class is unit-tested
without a ROS graph and runs on the compiled fast path (:mod:`spart_ros.core.fast`).

- :class:`Controller` (:mod:`.controller`): the state machine a controller node (or an offline
  simulation) drives: configure/activate/deactivate and one ``update(inputs, t)`` per tick;
  its settings (:class:`ControllerSettings`), its trajectory goals (:class:`TrajectoryGoal`);
- the laws behind one interface (:class:`~.law.Law`, registry :data:`MODES`): joint-space
  (:mod:`.effort_laws`) and space-robot modes (:mod:`.space_modes`, on the laws of
  :mod:`.resolved_rate`, :mod:`.reactionless`, :mod:`.desired_reaction`);
- :mod:`.trajectory` (C2 interpolation, the reference schedule), :mod:`.safety` (the gate,
  effort clamping).
"""

from .controller import Command, ControlInputs, Controller
from .desired_reaction import DesiredReaction
from .effort_laws import (
    ComputedTorque,
    EffortCommand,
    FloatingBase,
    FreeFlying,
    Gains,
    GravityCompensation,
)
from .free_floating import FreeFloatingKinematics
from .goals import TrajectoryGoal
from .law import Law, LawOutput
from .modes import MODES
from .paths import CartesianPath, JointPath, PoseSample, ScrewPath
from .reactionless import Reactionless
from .resolved_rate import ResolvedRate, ResolvedRateMinBaseEnergy
from .safety import clamp_efforts, CommandGate, effort_limits
from .settings import ControllerSettings
from .space_motion import SpaceMotionCommand, SpaceMotionLaw, SpaceMotionStatus
from .time_scaling import cubic_time_scaling, quintic_time_scaling, TimeScaling
from .trajectory import hold, JointTrajectory, Reference

__all__ = [
    'FreeFloatingKinematics',
    'SpaceMotionLaw',
    'SpaceMotionCommand',
    'SpaceMotionStatus',
    'ResolvedRate',
    'ResolvedRateMinBaseEnergy',
    'Reactionless',
    'DesiredReaction',
    'JointTrajectory',
    'Reference',
    'hold',
    'TimeScaling',
    'cubic_time_scaling',
    'quintic_time_scaling',
    'PoseSample',
    'JointPath',
    'CartesianPath',
    'ScrewPath',
    'ComputedTorque',
    'FloatingBase',
    'FreeFlying',
    'GravityCompensation',
    'Gains',
    'EffortCommand',
    'CommandGate',
    'clamp_efforts',
    'effort_limits',
    'Law',
    'LawOutput',
    'MODES',
    'ControllerSettings',
    'TrajectoryGoal',
    'Controller',
    'ControlInputs',
    'Command',
]
