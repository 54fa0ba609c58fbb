"""spart_ros.core: SPART's kinematics and dynamics in plain numpy (no ROS).

Frames, numbering and shapes follow SPART (see docs/conventions.md): every
vector is projected in the inertial frame unless said otherwise, twists are
[angular; linear velocity of the CoM], per-link arrays are stacked on the last
axis ((3, n), (3, 3, n), (6, 6, n, n)), link id k is index k - 1.
"""
import numpy as np

from .errors import (SpartError, ModelError, URDFError, TopologyError,
                     UnsupportedJointError, InertiaError, SingularModelError,
                     InputError, SpartWarning, ModelWarning, InertiaWarning, MimicJointWarning)
from . import _checks
from .model import Robot, Link, Joint, BaseLink, JointLimits, RobotKeys, RobotBuilder
from .mimic import IndependentCoordinates
from .connectivity import connectivity_map
from .urdf import robot_from_urdf
from .dh import robot_from_dh
from .attitude import (skew_symmetric, euler_axis_dcm, angles321_dcm, angles123_dcm,
                       dcm_angles321, quaternion_dcm, dcm_quaternion, rpy_rotation)
from .kinematics import kinematics
from .differential_kinematics import differential_kinematics
from .velocities import velocities
from .accelerations import accelerations
from .jacobians import (jacobian, jacobian_dot, point_jacobian, point_jacobian_dot, com_offset, link_point_jacobian,
                        link_point_jacobian_dot)
from .center_of_mass import center_of_mass
from .natural_orthogonal_complement import natural_orthogonal_complement, natural_orthogonal_complement_dot
from .inertia import inertia_in_inertial_frame, composite_body_inertia
from .generalized_inertia import generalized_inertia, generalized_inertia_noc
from .convective_inertia import convective_inertia, convective_inertia_noc
from .dynamics import forward_dynamics, inverse_dynamics, floating_inverse_dynamics, gravity_wrenches
from .momentum import (base_momentum, momentum_about, base_momentum_from, momentum_rate_about,
                       system_center_of_mass, reaction_jacobian, base_reaction)
from .generalized_jacobian import generalized_jacobian, generalized_jacobian_drift
from .reaction_null_space import ReactionNullSpace, reaction_null_space
from .manipulability import manipulability, dynamic_singularity_measure, singular_values
from .invertibility import singularity, check_invertible
from .rigid_motion import rotation_vector, rotation_from_vector, transform_log, transform_exp, adjoint
from .screw_chain import robot_from_screw_axes
from .inverse_kinematics import InverseKinematics, inverse_kinematics, IKResult, position_limits
from .workspace import Workspace, sample_workspace


def spart_chain_warm_up(robot):
    """Run the SPART-named chain once on float inputs (compiles or loads its kernels)."""
    n, nq = _checks.robot(robot).n_links_joints, robot.n_q
    R0, r0, z6, q = np.eye(3), np.zeros(3), np.zeros(6), np.zeros(nq)
    RJ, RL, rJ, rL, e, g = kinematics(R0, r0, q, robot)
    Bij, Bi0, P0, pm = differential_kinematics(R0, r0, rL, e, g, robot)
    t0, tL = velocities(Bij, Bi0, P0, pm, z6, q, robot)
    I0, Im = inertia_in_inertial_frame(R0, RL, robot)
    t0dot, tLdot = accelerations(t0, tL, P0, pm, Bi0, Bij, z6, q, z6, q, robot)
    inverse_dynamics(z6, np.zeros((6, n)), t0, tL, t0dot, tLdot, P0, pm, I0, Im, Bij, Bi0, robot)
