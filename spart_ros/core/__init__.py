"""
spart_ros.core: SPART's kinematics and dynamics in plain numpy (no ROS).

Frames, numbering and shapes follow SPART (see docs/conventions.md): every
vector is projected in the inertial frame unless said otherwise, twists are
[angular; linear velocity of the CoM], per-link arrays are stacked on the last
axis ((3, n), (3, 3, n), (6, 6, n, n)), link id k is index k - 1.
"""

import numpy as np

from . import _checks
from .accelerations import accelerations
from .attitude import (
    angles123_dcm,
    angles321_dcm,
    dcm_angles321,
    dcm_quaternion,
    euler_axis_dcm,
    quaternion_dcm,
    rpy_rotation,
    skew_symmetric,
)
from .center_of_mass import center_of_mass
from .connectivity import connectivity_map
from .convective_inertia import convective_inertia, convective_inertia_noc
from .dh import robot_from_dh
from .differential_kinematics import differential_kinematics
from .dynamics import (
    floating_inverse_dynamics,
    forward_dynamics,
    gravity_wrenches,
    inverse_dynamics,
)
from .errors import (
    InertiaError,
    InertiaWarning,
    InputError,
    MimicJointWarning,
    ModelError,
    ModelWarning,
    SingularModelError,
    SpartError,
    SpartWarning,
    TopologyError,
    UnsupportedJointError,
    URDFError,
)
from .generalized_inertia import generalized_inertia, generalized_inertia_noc
from .generalized_jacobian import generalized_jacobian, generalized_jacobian_drift
from .inertia import composite_body_inertia, inertia_in_inertial_frame
from .inverse_kinematics import IKResult, inverse_kinematics, InverseKinematics, position_limits
from .invertibility import check_invertible, singularity
from .jacobians import (
    com_offset,
    jacobian,
    jacobian_dot,
    link_point_jacobian,
    link_point_jacobian_dot,
    point_jacobian,
    point_jacobian_dot,
)
from .kinematics import kinematics
from .manipulability import dynamic_singularity_measure, manipulability, singular_values
from .mimic import IndependentCoordinates
from .model import BaseLink, Joint, JointLimits, Link, Robot, RobotBuilder, RobotKeys
from .momentum import (
    base_momentum,
    base_momentum_from,
    base_reaction,
    momentum_about,
    momentum_rate_about,
    reaction_jacobian,
    system_center_of_mass,
)
from .natural_orthogonal_complement import (
    natural_orthogonal_complement,
    natural_orthogonal_complement_dot,
)
from .reaction_null_space import reaction_null_space, ReactionNullSpace
from .rigid_motion import (
    adjoint,
    rotation_from_vector,
    rotation_vector,
    transform_exp,
    transform_log,
)
from .screw_chain import robot_from_screw_axes
from .urdf import robot_from_urdf
from .velocities import velocities
from .workspace import sample_workspace, Workspace

__all__ = [
    'accelerations',
    'angles123_dcm',
    'angles321_dcm',
    'dcm_angles321',
    'dcm_quaternion',
    'euler_axis_dcm',
    'quaternion_dcm',
    'rpy_rotation',
    'skew_symmetric',
    'center_of_mass',
    'connectivity_map',
    'convective_inertia',
    'convective_inertia_noc',
    'robot_from_dh',
    'differential_kinematics',
    'floating_inverse_dynamics',
    'forward_dynamics',
    'gravity_wrenches',
    'inverse_dynamics',
    'InertiaError',
    'InertiaWarning',
    'InputError',
    'MimicJointWarning',
    'ModelError',
    'ModelWarning',
    'SingularModelError',
    'SpartError',
    'SpartWarning',
    'TopologyError',
    'UnsupportedJointError',
    'URDFError',
    'generalized_inertia',
    'generalized_inertia_noc',
    'generalized_jacobian',
    'generalized_jacobian_drift',
    'composite_body_inertia',
    'inertia_in_inertial_frame',
    'IKResult',
    'inverse_kinematics',
    'InverseKinematics',
    'position_limits',
    'check_invertible',
    'singularity',
    'com_offset',
    'jacobian',
    'jacobian_dot',
    'link_point_jacobian',
    'link_point_jacobian_dot',
    'point_jacobian',
    'point_jacobian_dot',
    'kinematics',
    'dynamic_singularity_measure',
    'manipulability',
    'singular_values',
    'IndependentCoordinates',
    'BaseLink',
    'Joint',
    'JointLimits',
    'Link',
    'Robot',
    'RobotBuilder',
    'RobotKeys',
    'base_momentum',
    'base_momentum_from',
    'base_reaction',
    'momentum_about',
    'momentum_rate_about',
    'reaction_jacobian',
    'system_center_of_mass',
    'natural_orthogonal_complement',
    'natural_orthogonal_complement_dot',
    'reaction_null_space',
    'ReactionNullSpace',
    'adjoint',
    'rotation_from_vector',
    'rotation_vector',
    'transform_exp',
    'transform_log',
    'robot_from_screw_axes',
    'robot_from_urdf',
    'velocities',
    'sample_workspace',
    'Workspace',
    'spart_chain_warm_up',
]


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
