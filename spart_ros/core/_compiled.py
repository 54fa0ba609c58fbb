"""
Compiled float versions of the SPART-named chain (same outputs, SPART layouts).

Kinematics, DiffKinematics, Velocities, I_I, Accelerations and ID dispatch
here for float inputs (checked first: C-ordered float64 arrays of the right shapes); the
numpy code beside them stays the reference for symbolic inputs.  The kernels are the
``spart_*`` ones of ``spart_ros/native/kernels.py``, compiled ahead of time; they read the
robot's packed model (:func:`packed`).
"""

from .compiled_model import packed
from ..native.compiled import spart_accelerations as accelerations
from ..native.compiled import spart_differential_kinematics as differential_kinematics
from ..native.compiled import spart_inertia_in_inertial_frame as inertia_in_inertial_frame
from ..native.compiled import spart_inverse_dynamics as inverse_dynamics
from ..native.compiled import spart_kinematics as kinematics
from ..native.compiled import spart_velocities as velocities

__all__ = [
    'accelerations',
    'differential_kinematics',
    'inertia_in_inertial_frame',
    'inverse_dynamics',
    'kinematics',
    'packed',
    'velocities',
]
