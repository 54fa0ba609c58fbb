"""
The embedded plant: a URDF robot on MuJoCo, behaving like ros2_control hardware.

Pure Python (no rclpy, no message types); the ROS adapter is ``spart_ros.nodes.sim_node``.

- :mod:`.plant`: :class:`MujocoPlant` (physics, effort hold, readouts in ROS conventions);
- :mod:`.urdf_import`: URDF -> MuJoCo model (MuJoCo's importer, minimal preprocessing);
- :mod:`.commands`: :class:`EffortCommand` (the effort controller's commands contract);
- :mod:`.pacing`: :class:`RealTimePacer` (simulated time kept with the wall clock).

MuJoCo is imported when a model is built, not by this package's import.
"""

from .commands import CommandRejected, EffortCommand
from .pacing import RealTimePacer
from .plant import (
    BASE_MODES,
    BaseOdometry,
    ImuReading,
    InitialState,
    JointStateReading,
    Momentum,
    MujocoPlant,
    SimulationDiverged,
)

__all__ = [
    'MujocoPlant',
    'InitialState',
    'JointStateReading',
    'BaseOdometry',
    'ImuReading',
    'Momentum',
    'EffortCommand',
    'CommandRejected',
    'RealTimePacer',
    'SimulationDiverged',
    'BASE_MODES',
]
