"""
The controller's modes: mode name -> :class:`~spart_ros.control.law.Law` class (pure Python).

Joint-space laws (:mod:`.effort_laws`, and the joint impedance of :mod:`.impedance`) follow a
joint trajectory (or hold a pose); the Cartesian impedance (:mod:`.impedance`) and the
space-robot modes (:mod:`.space_modes`) follow end-effector references.  A new mode is one
:class:`~spart_ros.control.law.Law` subclass and one entry here; the
:class:`~spart_ros.control.controller.Controller` and the ``spart_controller`` node take it from
this table (its ``base``, ``follows``, ``references``, ``interfaces`` and ``holds_position``
say what it needs).
"""

from .effort_laws import ComputedTorque, FloatingBase, FreeFlying, GravityCompensation
from .impedance import CartesianImpedance, FloatingCartesianImpedance, JointImpedance
from .space_modes import SPACE_LAWS, SpaceMode

__all__ = ['MODES', 'build_law', 'accepts_pose_goals']

#: mode name -> Law class (one class may serve several modes: SpaceMode builds the law of its name)
MODES = {
    'computed_torque': ComputedTorque,
    'floating_base': FloatingBase,
    'free_flying': FreeFlying,
    'gravity_compensation': GravityCompensation,
    'joint_impedance': JointImpedance,
    'cartesian_impedance': CartesianImpedance,
    'floating_cartesian_impedance': FloatingCartesianImpedance,
    **{mode: SpaceMode for mode in SPACE_LAWS},
}


def build_law(mode, dynamics, settings, gains):
    """
    Return the :class:`~spart_ros.control.law.Law` of ``mode`` for ``dynamics``.

    ``dynamics``: a robot's fast path; also for ``settings``
    (:class:`~spart_ros.control.settings.ControllerSettings`) and ``gains``
    (:class:`~spart_ros.control.effort_laws.Gains` in the fast path's coordinates).
    """
    return MODES[mode].build(mode, dynamics, settings, gains)


def accepts_pose_goals(mode):
    """
    Return True if a controller in ``mode`` takes end-effector pose goals.

    Pose goals: :class:`~spart_ros.control.ee_goals.PoseGoal`. An end-effector law with the
    reference 'ee_goal' follows the path itself; a fixed-base joint-trajectory law follows it as a
    joint trajectory (inverse kinematics at samples of the path).
    """
    law = MODES[mode]
    if law.follows == 'end_effector':
        return 'ee_goal' in law.reference_names(mode)
    return law.follows == 'joint_trajectory' and law.base == 'fixed'
