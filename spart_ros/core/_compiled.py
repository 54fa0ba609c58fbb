"""Compiled float versions of the SPART-named chain (same outputs, SPART layouts).

Kinematics, DiffKinematics, Velocities, I_I, Accelerations and ID dispatch
here for float inputs; the numpy code beside them stays the reference for
symbolic inputs.  The kernels live in ``fast/kernels.py`` (``spart_*``).
"""
from .fast.kernels import (spart_kinematics as kinematics, spart_velocities as velocities, spart_accelerations as accelerations, spart_inertia_in_inertial_frame as inertia_in_inertial_frame, spart_inverse_dynamics as inverse_dynamics, spart_differential_kinematics as differential_kinematics)


def packed(robot):
    """(mi, W) of a numeric robot (see fast.kernels), built once and kept on the robot."""
    p = getattr(robot, '_packed', None)
    if p is None:
        from .fast import _pack
        p = robot._packed = _pack(robot)
    return p
