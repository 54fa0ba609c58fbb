"""
The controller's modes: mode name -> :class:`~spart_ros.control.law.Law` class (pure Python).

Joint-space laws (:mod:`.effort_laws`, and the joint impedance of :mod:`.impedance`) follow a
joint trajectory (or hold a pose); the Cartesian impedance (:mod:`.impedance`) and the
space-robot modes (:mod:`.space_modes`) follow end-effector references.  A new mode is one
:class:`~spart_ros.control.law.Law` subclass, registered either here (:data:`MODES`, the
package's own) or, from another package, as a Python entry point of the group
:data:`ENTRY_POINT_GROUP` (``spart_ros.modes``: ``my_mode = my_package.my_module:MyLaw`` in its
``setup.py`` / ``setup.cfg`` ``entry_points``; docs/controller.md, "Adding a mode").  The
:class:`~spart_ros.control.controller.Controller` and the ``spart_controller`` node take every mode
from :func:`mode_class` (its ``base``, ``follows``, ``references``, ``interfaces`` and
``holds_position`` say what it needs).
"""

from .effort_laws import ComputedTorque, FloatingBase, FreeFlying, GravityCompensation
from .impedance import CartesianImpedance, FloatingCartesianImpedance, JointImpedance
from .law import Law
from .mpc import FloatingModelPredictive, ModelPredictive
from .space_modes import SPACE_LAWS, SpaceMode
from ..core.errors import InputError

__all__ = [
    'MODES',
    'ENTRY_POINT_GROUP',
    'mode_class',
    'mode_names',
    'registered_modes',
    'build_law',
    'accepts_pose_goals',
]

#: the package's modes: mode name -> Law class (one class may serve several modes: SpaceMode
#: builds the law of its name)
MODES = {
    'computed_torque': ComputedTorque,
    'floating_base': FloatingBase,
    'free_flying': FreeFlying,
    'gravity_compensation': GravityCompensation,
    'joint_impedance': JointImpedance,
    'cartesian_impedance': CartesianImpedance,
    'floating_cartesian_impedance': FloatingCartesianImpedance,
    'mpc': ModelPredictive,
    'floating_mpc': FloatingModelPredictive,
    **{mode: SpaceMode for mode in SPACE_LAWS},
}

#: the entry point group other packages register their modes in (name = the mode)
ENTRY_POINT_GROUP = 'spart_ros.modes'

_LOADED = {}  # registered mode -> its Law class, once loaded


def registered_modes():
    """
    Return {mode name: entry point} of the modes other packages register.

    Read from the installed distributions' metadata each call (a package installed since is seen);
    a name the package's own :data:`MODES` has is left out (those cannot be replaced).
    """
    from importlib.metadata import entry_points

    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP) if ep.name not in MODES}


def mode_names():
    """Return every mode name: the package's, then the registered ones (each sorted)."""
    return sorted(MODES) + sorted(registered_modes())


def mode_class(mode):
    """
    Return the :class:`~spart_ros.control.law.Law` class of ``mode``.

    The package's own, else the one a package registers (its module is imported now).
    InputError naming the known modes, or what is wrong with a registered one.
    """
    if not isinstance(mode, str):
        raise InputError(f'mode must be one of {mode_names()}, got {mode!r}')
    law = MODES.get(mode) or _LOADED.get(mode)
    if law is not None:
        return law
    ep = registered_modes().get(mode)
    if ep is None:
        raise InputError(f'mode must be one of {mode_names()}, got {mode!r}')
    try:
        law = ep.load()
    except Exception as err:  # noqa: BLE001 - another package's code: say what failed, never crash
        raise InputError(
            f'mode {mode}: its entry point {ep.value!r} (group {ENTRY_POINT_GROUP}) cannot be '
            f'loaded: {type(err).__name__}: {err}'
        ) from None
    if not (isinstance(law, type) and issubclass(law, Law)):
        raise InputError(
            f'mode {mode}: its entry point {ep.value!r} (group {ENTRY_POINT_GROUP}) is '
            f'{law!r}, not a subclass of spart_ros.control.law.Law'
        )
    _LOADED[mode] = law
    return law


def build_law(mode, dynamics, settings, gains):
    """
    Return the :class:`~spart_ros.control.law.Law` of ``mode`` for ``dynamics``.

    ``dynamics``: a robot's fast path; also for ``settings``
    (:class:`~spart_ros.control.settings.ControllerSettings`) and ``gains``
    (:class:`~spart_ros.control.effort_laws.Gains` in the fast path's coordinates).
    """
    return mode_class(mode).build(mode, dynamics, settings, gains)


def accepts_pose_goals(mode):
    """
    Return True if a controller in ``mode`` takes end-effector pose goals.

    Pose goals: :class:`~spart_ros.control.ee_goals.PoseGoal`. An end-effector law with the
    reference 'ee_goal' follows the path itself; a fixed-base joint-trajectory law follows it as a
    joint trajectory (inverse kinematics at samples of the path).
    """
    law = mode_class(mode)
    if law.follows == 'end_effector':
        return 'ee_goal' in law.reference_names(mode)
    return law.follows == 'joint_trajectory' and law.base == 'fixed'
