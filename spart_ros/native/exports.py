"""
What the compiled extension module exports, with which argument types, and its name.

Every kernel called from Python is compiled once, ahead of time, for one signature (see
:mod:`.build`): the model and workspace arrays are the packing's (C-ordered), the arrays a
caller passes in may have any layout (``float64[:]``: strided access, so a transposed R0 or a
sliced vector is read correctly without a copy), the outputs are the caller's own C-ordered
arrays.  The compiled functions do not check argument types (numba's unboxing trusts them):
their Python callers pass exactly these types (dtype float64 and the number of dimensions
checked first), and the kernels check shapes and values themselves.

The module's name carries a key of everything its machine code depends on (this package's
sources, the Python and NumPy versions, the CPU it was built for), so a stale build is never
loaded: a changed kernel makes another name.
"""

import hashlib
import os
import platform
import re
import sys

import numpy as np

I1 = 'int64[::1]'  # the tree (mi)
C1, C2, C3, C4 = (
    'float64[::1]',
    'float64[:, ::1]',
    'float64[:, :, ::1]',
    'float64[:, :, :, ::1]',
)  # ours
A1, A2, A3, A4 = (
    'float64[:]',
    'float64[:, :]',
    'float64[:, :, :]',
    'float64[:, :, :, :]',
)  # callers'

#: {exported name: (kernel in kernels.py, argument names, argument types, return type)}
EXPORTS = {}


def _export(name, kernel, arguments, types, returns='int64'):
    arguments = tuple(arguments.split())
    assert len(arguments) == len(types), name
    EXPORTS[name] = (kernel, arguments, tuple(types), returns)


# --- the fast path's entry kernels (FastDynamics)
# --------------------------------------------------
_MODEL = (I1, C2, C2)  # mi, mf, W
_export(
    'rnea',
    'rnea',
    'mi mf W R0 r0 qm u0 um u0dot umdot gravity floating out',
    _MODEL + (A2, A1, A1, A1, A1, A1, A1, A1, 'boolean', C1),
)
_export(
    'rnea_loads',
    'rnea_loads',
    'mi mf W R0 r0 qm u0 um u0dot umdot wF0 wFm gravity floating out',
    _MODEL + (A2, A1, A1, A1, A1, A1, A1, A1, A2, A1, 'boolean', C1),
)
_export(
    'floating_rnea',
    'floating_rnea',
    'mi mf W R0 r0 qm u0 um umdot gravity out',
    _MODEL + (A2, A1, A1, A1, A1, A1, A1, C1),
)
_export(
    'floating_rnea_loads',
    'floating_rnea_loads',
    'mi mf W R0 r0 qm u0 um umdot wF0 wFm gravity out',
    _MODEL + (A2, A1, A1, A1, A1, A1, A1, A2, A1, C1),
)
_export(
    'aba',
    'aba',
    'mi mf W R0 r0 qm u0 um tau0 taum gravity floating out',
    _MODEL + (A2, A1, A1, A1, A1, A1, A1, A1, 'boolean', C1),
)
_export(
    'aba_loads',
    'aba_loads',
    'mi mf W R0 r0 qm u0 um tau0 taum wF0 wFm gravity floating out',
    _MODEL + (A2, A1, A1, A1, A1, A1, A1, A1, A2, A1, 'boolean', C1),
)
_export('crba', 'crba', 'mi mf W R0 r0 qm H', _MODEL + (A2, A1, A1, C2))
_export(
    'jacobian',
    'jacobian',
    'mi mf W R0 r0 qm link offset J',
    _MODEL + (A2, A1, A1, 'int64', A1, C2),
)
_export(
    'jacobian_and_bias',
    'jacobian_and_bias',
    'mi mf W R0 r0 qm u0 um link offset floating J bias',
    _MODEL + (A2, A1, A1, A1, A1, 'int64', A1, 'boolean', C2, C1),
)
_export(
    'twists_and_com',
    'twists_and_com',
    'mi mf W R0 r0 qm u0 um floating rL tL com',
    _MODEL + (A2, A1, A1, A1, A1, 'boolean', C2, C2, C1),
)

# --- entry checks of every public function (spart_ros.core.checks)
# --------------------------------
for _k, _t in enumerate((A1, A2, A3, A4), start=1):
    _export(f'finite_c{_k}', 'finite_c', 'a', (_t,), 'boolean')
_export('first_non_rotation2', 'first_non_rotation', 'R', (A2,))
_export('first_non_rotation3', 'first_non_rotation', 'R', (A3,))

# --- the SPART-named functions' float path (spart_ros.core._compiled) ----------------------------
_export(
    'spart_kinematics',
    'spart_kinematics',
    'mi mf R0 r0 qm RJ RL rJ rL e g',
    (I1, C2, A2, A1, A1, C3, C3, C2, C2, C2, C2),
)
_export(
    'spart_differential_kinematics',
    'spart_differential_kinematics',
    'mi branch R0 r0 rL e g Bij Bi0 P0 pm',
    (I1, 'int64[:, :]', A2, A1, A2, A2, A2, C4, C3, C2, C2),
)
_export(
    'spart_velocities',
    'spart_velocities',
    'mi Bij Bi0 P0 pm u0 um t0 tL',
    (I1, A4, A3, A2, A2, A1, A1, C1, C2),
)
_export(
    'spart_accelerations',
    'spart_accelerations',
    'mi t0 tL P0 pm Bi0 Bij u0 um u0dot umdot t0dot tLdot',
    (I1, A1, A2, A2, A2, A3, A4, A1, A1, A1, A1, C1, C2),
)
_export(
    'spart_inertia_in_inertial_frame',
    'spart_inertia_in_inertial_frame',
    'mi mf R0 RL I0 Im',
    (I1, C2, A2, A3, C2, C3),
)
_export(
    'spart_inverse_dynamics',
    'spart_inverse_dynamics',
    'mi mf wF0 wFm t0 tL t0dot tLdot P0 pm I0 Im Bij Bi0 tau0 taum wq0 wq',
    (I1, C2, A1, A2, A1, A2, A1, A2, A2, A2, A2, A3, A4, A3, C1, C1, C1, C2),
)

# --- the plants' kernels (plant_kernels.py: 'module.kernel' names a kernel of another module)
# ------------------------------------------------------------------------------------------
_export(
    'orbit_loads_mujoco',
    'plant_kernels.orbit_loads_mujoco',
    'orbit t bodies mass inertia xipos ximat user xfrc',
    (C1, 'float64', I1, C1, C2, A2, A2, C2, A2),
)
_export(
    'rigid_body_steps',
    'plant_kernels.rigid_body_steps',
    'mi mf W x steps t_ns dt_ns floating R0f r0f taum wrench orbit gravity work small fd wF0 wFm '
    'done',
    _MODEL
    + (C1, 'int64', 'int64', 'int64', 'boolean', C2, C1, C1, C1, C1, C1, C2, C1, C1, C1, C2, I1),
)
_export(
    'dissipation_step',
    'plant_kernels.dissipation_step',
    'M r u0 h idx damping friction G has_G velocity has_friction work vectors u1 umean',
    (C2, C1, A1, 'float64', I1, C1, C1, C2, 'boolean', 'float64', 'boolean', C3, C2, C1, C1),
)
_export(
    'base_actuators_step',
    'plant_kernels.base_actuators_step',
    't dt velocities wheel_index wheels wheel_commands wheel_torques wheel_counts thrusters '
    'thruster_commands opened_at thruster_forces firings impulse ctrl ctrl_wheels ctrl_thrusters',
    (
        'float64',
        'float64',
        A1,
        I1,
        C2,
        C1,
        C1,
        'int64[:, ::1]',
        C2,
        C1,
        C1,
        C1,
        I1,
        C1,
        A1,
        I1,
        I1,
    ),
)
_export(
    'lvlh_state',
    'plant_kernels.lvlh_state',
    'orbit t R p v w R_out p_out v_out w_out',
    (C1, 'float64', A2, A1, A1, A1, C2, C1, C1, C1),
)

_export('ros_quaternion', 'plant_kernels.ros_quaternion', 'R out', (A2, C1))
_export(
    'tidal_acceleration',
    'plant_kernels.tidal_acceleration',
    'orbit t r out',
    (C1, 'float64', A1, C1),
)

# --- the controller's per-tick kernels (control_kernels.py) -----------------------------------
_export(
    'friction_correction',
    'control_kernels.friction_correction',
    'qd qdd h inertia damping friction velocity scale G has_G coupled_above work vectors out',
    (A1, A1, 'float64', A2, C1, C1, 'float64', 'float64', C2, 'boolean', 'float64', C3, C2, C1),
)
_export(
    'wheel_base_torque',
    'control_kernels.wheel_base_torque',
    'axes Js friction speeds w_b alpha_b torque_b out',
    (C2, C1, C1, A1, A1, A1, A1, C1),
)
_export(
    'attitude_torque',
    'control_kernels.attitude_torque',
    'H tau0_0 taum_0 R_bc p_bc R_b alpha_c alpha_b w_b axes Js friction speeds torque_b force_b '
    'u0dot taum out',
    (C2, C1, C1, C2, C1, A2, C1, A1, A1, C2, C1, C1, A1, A1, A1, C1, C1, C1),
)
_export(
    'wheel_state',
    'control_kernels.wheel_state',
    'speeds tau_max friction fast_speed max_speed axes Js lo hi h',
    (A1, C1, C1, C1, C1, C2, C1, C1, C1, C1),
    'float64',
)
_export(
    'thruster_pulses',
    'control_kernels.thruster_pulses',
    'elapsed dt on_time force throttled f_max B thrusters wrench',
    ('float64', 'float64', C1, C1, C1, C1, C2, C1, C1),
    'float64',
)
_export(
    'wheel_torques',
    'control_kernels.wheel_torques',
    'pinv target lo hi torque_map thrust wheels achieved',
    (C2, A1, C1, C1, C2, C1, C1, C1),
    'float64',
)
_export(
    'quintic_sample',
    'control_kernels.quintic_sample',
    'coefficients i x p v a',
    (C3, 'int64', 'float64', C1, C1, C1),
)
_export(
    'free_flying_base',
    'control_kernels.free_flying_base',
    'R_b p_b v_b w_b R_d p_d gains R_bc p_bc a_b alpha_b u0dot',
    (A2, A1, A1, A1, A2, A1, A1, A2, A1, C1, C1, C1),
)
_export(
    'bvls',
    'least_squares.bvls',
    'A b lb ub tol max_iter active x T V vectors index',
    (C2, C1, C1, C1, 'float64', 'int64', C1, C1, C2, C2, C2, I1),
)
_export(
    'pd_acceleration',
    'control_kernels.pd_acceleration',
    'q qd position velocity acceleration kp kd e ev qdd',
    (A1, A1, A1, A1, A1, A1, A1, C1, C1, C1),
)
_export(
    'input_problem',
    'control_kernels.input_problem',
    'q qd n joint_times index every now timeout base_time has_base',
    (A1, A1, 'int64', A1, I1, 'boolean', 'float64', 'float64', 'float64', 'boolean'),
)
_export(
    'clamp_command',
    'control_kernels.clamp_command',
    'values index every limits out clamped',
    (A1, I1, 'boolean', C1, C1, 'boolean[::1]'),
)
_export(
    'base_frames_floating',
    'control_kernels.base_frames_floating',
    'R_b p_b v_b w_b R_bc p_bc R0 r0 u0',
    (A2, A1, A1, A1, C2, C1, C2, C1, C1),
)
_export(
    'base_link_wrench',
    'control_kernels.base_link_wrench',
    'R_b tau0 R_bc p_bc torque force',
    (A2, A1, C2, C1, C1, C1),
)
_export(
    'mujoco_base_state',
    'plant_kernels.mujoco_base_state',
    'qpos qvel orbit t has_orbit R p v w',
    (A1, A1, C1, 'float64', 'boolean', C2, C1, C1, C1),
)
_export(
    'rigid_base_state',
    'plant_kernels.rigid_base_state',
    'R0 r0 u0 R_cb p_bc floating orbit t has_orbit R p v w',
    (A2, A1, A1, C2, C1, 'boolean', C1, 'float64', 'boolean', C2, C1, C1, C1),
)
_export(
    'hold_efforts',
    'plant_kernels.hold_efforts',
    'values index held efforts qfrc vadr',
    (A1, I1, C1, C1, A1, I1),
)
for _name, _arguments, _types in (
    ('first_violation', 'tolerance reference measured', (A1, A1, A1)),
    ('largest_excess', 'reference measured limit', (A1, A1, A1)),
    ('jump_excess', 'q last_q qd last_qd dt tolerance', (A1, A1, A1, A1, 'float64', 'float64')),
):
    _export(_name, f'control_kernels.{_name}', _arguments, _types)

# --- analytic derivatives and batches (issue 38): kernels of derivatives.py and batch.py ---------
# (a dotted kernel name is 'module.kernel' in this package; NOGIL: compiled to release the GIL)
#: exported names compiled to run without the GIL (the batches: two threads on two cores)
NOGIL = set()
_DERIVATIVE = (A2, A1, A1, A1, A1, A1, A1, A1, 'boolean')  # R0 .. umdot (or tau0, taum), g, flag
_export(
    'rnea_derivatives',
    'derivatives.rnea_derivatives',
    'mi mf W D R0 r0 qm u0 um u0dot umdot gravity floating tau dq du H dh',
    _MODEL + (C2,) + _DERIVATIVE + (C1, C2, C2, C2, C2),
)
_export(
    'aba_derivatives',
    'derivatives.aba_derivatives',
    'mi mf W D R0 r0 qm u0 um tau0 taum gravity floating out dq du Minv L',
    _MODEL + (C2,) + _DERIVATIVE + (C1, C2, C2, C2, C2),
)
# R0s .. g, flag, then stop, chunk, claim (the batch's shared counter: batch.py)
_STACK = (A3, A2, A2, A2, A2, A2, A2, A1, 'boolean', 'int64', 'int64', I1)
for _name, _outputs in (('rnea', (C2,)), ('aba', (C2,))):
    _export(
        f'{_name}_batch',
        f'batch.{_name}_batch',
        'mi mf W R0s r0s qms u0s ums xs ys gravity floating stop chunk claim out',
        _MODEL + _STACK + _outputs,
    )
_export(
    'crba_batch',
    'batch.crba_batch',
    'mi mf W R0s r0s qms stop chunk claim H',
    _MODEL + (A3, A2, A2, 'int64', 'int64', I1, C3),
)
_export(
    'jacobian_batch',
    'batch.jacobian_batch',
    'mi mf W R0s r0s qms link offset stop chunk claim J',
    _MODEL + (A3, A2, A2, 'int64', A1, 'int64', 'int64', I1, C3),
)
_export(
    'rnea_derivatives_batch',
    'batch.rnea_derivatives_batch',
    'mi mf W D R0s r0s qms u0s ums xs ys gravity floating stop chunk claim tau dq du H dh',
    _MODEL + (C2,) + _STACK + (C2, C3, C3, C3, C3),
)
_export(
    'aba_derivatives_batch',
    'batch.aba_derivatives_batch',
    'mi mf W D R0s r0s qms u0s ums xs ys gravity floating stop chunk claim out dq du Minv L',
    _MODEL + (C2,) + _STACK + (C2, C3, C3, C3, C2),
)
NOGIL.update(name for name in EXPORTS if name.endswith('_batch'))

HERE = os.path.dirname(os.path.abspath(__file__))
#: the files the machine code is built from
SOURCES = (
    'layout.py',
    'kernels.py',
    'plant_layout.py',
    'plant_kernels.py',
    'control_kernels.py',
    'least_squares.py',
    'derivatives.py',
    'batch.py',
    'exports.py',
    'build.py',
    '_call.c',
)


def _cpu():
    """Return what the CPU the module is built for (numba's 'host') is: model and feature flags."""
    try:
        with open('/proc/cpuinfo', 'rb') as f:
            info = f.read()
    except OSError:
        return platform.machine().encode()
    first = info.split(b'\n\n', 1)[0]
    return (
        b' '.join(
            m.group(0) for m in re.finditer(rb'^(vendor_id|model name|flags)\s*:.*$', first, re.M)
        )
        or platform.machine().encode()
    )


#: the kernels are built as two extension modules, compiled by two processes at once (the build
#: was one core's ~100 s): the core's dynamics (kernels.py, derivatives.py, batch.py), then the
#: plants' and the controller's kernels; the first is ``library_name()``, the other that + '_b'
PARTS = ('', '_b')
#: the source modules of the first part ('' = kernels.py)
_FIRST_PART = ('', 'derivatives', 'batch')


def part_of(export):
    """Return the index in :data:`PARTS` of the extension module that holds ``export``."""
    return 0 if EXPORTS[export][0].rpartition('.')[0] in _FIRST_PART else 1


def library_name():
    """
    Return the extension module's name.

    '_kernels_' + a key of the sources, Python, NumPy and CPU.
    """
    key = hashlib.sha256()
    for name in SOURCES:
        with open(os.path.join(HERE, name), 'rb') as f:
            key.update(f.read())
    key.update(
        f'{sys.implementation.cache_tag} numpy {np.__version__} {platform.machine()}'.encode()
    )
    key.update(_cpu())
    return '_kernels_' + key.hexdigest()[:16]
