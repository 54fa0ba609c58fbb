"""
SPART's function set under SPART's names, for porting MATLAB scripts line by line.

``from spart_ros import spart`` then ``spart.Kinematics(R0, r0, qm, robot)``:
same argument order, same array shapes (MATLAB [3 x n] is (3, n), [3x3xn] is
(3, 3, n), [6x6xnxn] is (6, 6, n, n); column vectors are 1-D), same ids (link
id k is index k - 1).  Each name is an alias of the documented core function
named beside it; results are named tuples that unpack like MATLAB's outputs.

Beyond SPART: ``ID``, ``FD`` and ``Floating_ID`` take ``gravity=`` (a vector in
the inertial frame); ``Jacob``/``Jacobdot`` accept a link name for ``i``.
From SPART's Simulink control library: ``Jstar`` (the generalized Jacobian J* =
Jm - J0 H0^-1 H0m, Umetani & Yoshida) and ``Base_Reaction`` (u0 from momentum
conservation, u0 = H0^-1 (h0 - H0m um)); see docs/space_robot_control.md.
SPART bugs not copied: Velocities and FD recurse from each link's parent (not
link i-1); DH_Serial2robot reads ``name``.

Unlike SPART, every function checks its arguments once, at the entry
(``spart_ros.core._checks``): a bad one raises ``InputError`` whose message starts
with the argument's name (wrong shape, None, complex, NaN/inf, R0 or RL not a
rotation within 1e-3, a quaternion far from unit, a link id that is not an integer
in range or an unknown link name, ``robot`` not a Robot, a Python int beyond the float
range), and a result that overflows raises ``InputError`` naming the largest inputs
instead of returning inf/NaN (``ModelError`` naming the robot and the link or joint when
only the model holds values that large), without numpy's overflow warnings.  Object
arrays keep their dtype (numbers take the numpy path, sympy expressions the symbolic
one); FD, Floating_ID, Jstar and Base_Reaction solve linear systems and refuse symbolic
values naming the argument.
"""

from .core import attitude as _attitude
from .core.accelerations import accelerations as Accelerations
from .core.attitude import angles123_dcm as Angles123_DCM
from .core.attitude import angles321_dcm as Angles321_DCM
from .core.attitude import dcm_angles321 as DCM_Angles321
from .core.attitude import dcm_quaternion as DCM_quat
from .core.attitude import euler_axis_dcm as Euler_DCM
from .core.attitude import quaternion_dcm as quat_DCM
from .core.attitude import skew_symmetric as SkewSym
from .core.center_of_mass import center_of_mass as Center_of_Mass
from .core.connectivity import connectivity_map as ConnectivityMap
from .core.convective_inertia import convective_inertia as CIM
from .core.convective_inertia import convective_inertia_noc as CIM_NOC
from .core.dh import robot_from_dh as DH_Serial2robot
from .core.differential_kinematics import differential_kinematics as DiffKinematics
from .core.dynamics import floating_inverse_dynamics as Floating_ID
from .core.dynamics import forward_dynamics as FD
from .core.dynamics import inverse_dynamics as ID
from .core.generalized_inertia import generalized_inertia as GIM
from .core.generalized_inertia import generalized_inertia_noc as GIM_NOC
from .core.generalized_jacobian import generalized_jacobian as Jstar
from .core.inertia import composite_body_inertia as MCB
from .core.inertia import inertia_in_inertial_frame as I_I
from .core.jacobians import jacobian as Jacob
from .core.jacobians import jacobian_dot as Jacobdot
from .core.kinematics import kinematics as Kinematics
from .core.momentum import base_reaction as Base_Reaction
from .core.natural_orthogonal_complement import natural_orthogonal_complement as NOC
from .core.natural_orthogonal_complement import natural_orthogonal_complement_dot as NOCdot
from .core.urdf import robot_from_urdf as urdf2robot
from .core.velocities import velocities as Velocities

__all__ = [
    'Jstar',
    'Base_Reaction',
    'urdf2robot',
    'DH_Serial2robot',
    'ConnectivityMap',
    'Kinematics',
    'DiffKinematics',
    'Velocities',
    'Accelerations',
    'Jacob',
    'Jacobdot',
    'Center_of_Mass',
    'NOC',
    'NOCdot',
    'I_I',
    'MCB',
    'GIM',
    'CIM',
    'GIM_NOC',
    'CIM_NOC',
    'FD',
    'ID',
    'Floating_ID',
    'Angles321_DCM',
    'Angles123_DCM',
    'DCM_Angles321',
    'quat_DCM',
    'DCM_quat',
    'Euler_DCM',
    'SkewSym',
]
del _attitude
