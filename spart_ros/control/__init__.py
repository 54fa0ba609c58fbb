"""spart_ros.control: control laws, trajectories and safety logic (pure Python, no ROS).

Layering: ``spart_ros.core`` (numerics) <- ``spart_ros.control`` (this package) <-
``spart_ros.nodes`` (thin rclpy adapters).  Nothing here imports rclpy or message types:
inputs and outputs are numpy arrays in documented frames, so every class is unit-tested
without a ROS graph and runs on the compiled fast path (:mod:`spart_ros.core.fast`).
"""

from .free_floating import FreeFloatingKinematics
from .space_motion import SpaceMotionLaw, SpaceMotionCommand, SpaceMotionStatus
from .resolved_rate import ResolvedRate, ResolvedRateMinBaseEnergy
from .reactionless import Reactionless
from .desired_reaction import DesiredReaction
from .trajectory import JointTrajectory, Reference, hold
from .time_scaling import TimeScaling, cubic_time_scaling, quintic_time_scaling
from .paths import PoseSample, JointPath, CartesianPath, ScrewPath
from .effort_laws import ComputedTorque, FloatingBase, FreeFlying, GravityCompensation, Gains, EffortCommand
from .safety import CommandGate, clamp_efforts, effort_limits

__all__ = ['FreeFloatingKinematics', 'SpaceMotionLaw', 'SpaceMotionCommand', 'SpaceMotionStatus', 'ResolvedRate',
           'ResolvedRateMinBaseEnergy', 'Reactionless', 'DesiredReaction', 'JointTrajectory', 'Reference', 'hold',
           'TimeScaling', 'cubic_time_scaling', 'quintic_time_scaling', 'PoseSample', 'JointPath', 'CartesianPath',
           'ScrewPath',
           'ComputedTorque', 'FloatingBase', 'FreeFlying', 'GravityCompensation', 'Gains', 'EffortCommand',
           'CommandGate', 'clamp_efforts', 'effort_limits']
