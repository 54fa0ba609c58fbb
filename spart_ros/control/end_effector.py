"""
The controlled end effector.

A point and frame fixed on a link, its pose, and the task twist commanded from a twist reference
and an optional pose target (P law).

Twists are [angular velocity; velocity of the point] in the inertial frame, the rows of SPART's
point Jacobian.  ``frame='com'`` takes the offset (and the end-effector frame) in the link CoM
frame, SPART's convention and FastDynamics'; ``frame='link'`` in the URDF link frame (ROS
users' tool frames), converted once here.
"""

import numpy as np

from ..core import checks as chk
from ..core.errors import InputError
from ..core.jacobians import com_offset
from ..core.kinematics import kinematics
from ..core.rigid_motion import _rotation_vector as rotation_vector

__all__ = ['EndEffector', 'rotation_vector']


class EndEffector:
    """
    A point and frame on ``link`` (SPART id or name) of ``robot``.

    ``offset`` (3,): the point, from the frame origin given by ``frame`` ('com': the link CoM
    frame; 'link': the URDF link frame), in that frame.  The end-effector frame's orientation
    is that frame's.  Attributes: ``link`` (id), ``offset`` (3,) from the CoM in the CoM frame,
    ``rotation`` (3, 3) of the end-effector frame in the CoM frame.
    """

    def __init__(self, robot, link, offset=None, frame='com'):
        self.robot = robot
        self.link = chk.link_id('link', link, robot)
        p = np.zeros(3) if offset is None else chk.vector('offset', offset, 3)
        if frame == 'com':
            self.offset, self.rotation = p.copy(), np.eye(3)
        elif frame == 'link':
            R_lc = np.asarray(robot.link(self.link).T, dtype=float)[
                :3, :3
            ]  # CoM frame in the link frame
            self.offset, self.rotation = (
                np.asarray(com_offset(robot, self.link, p), dtype=float),
                R_lc.T.copy(),
            )
        else:
            raise InputError(f"frame: expected 'com' or 'link', got {frame!r}")

    def pose(self, R0, r0, qm):
        """
        Return (R (3, 3), p (3,)).

        The end-effector frame's rotation and the point, inertial frame (SPART's Kinematics; a
        control loop reads the link pose off its FreeFloatingKinematics update instead and calls
        :meth:`frame_pose`).
        """
        if self.link == 0:
            R = chk.array('R0', R0, (3, 3))
            r = chk.vector('r0', r0, 3)
        else:
            k = kinematics(R0, r0, qm, self.robot)
            R, r = k.RL[:, :, self.link - 1], k.rL[:, self.link - 1]
        return self.frame_pose(R, r)

    def frame_pose(self, R_link, r_link):
        """
        Return (R (3, 3), p (3,)) of the end-effector frame and point, inertial frame.

        From the pose of the link's CoM frame: ``R_link`` (3, 3) CoM frame -> inertial, ``r_link``
        (3,) its CoM.
        """
        return R_link @ self.rotation, r_link + R_link @ self.offset

    def pose_error(self, R0, r0, qm, position=None, rotation=None, pose=None):
        """
        Return [rotation vector of R_target R'; p_target - p] (6,), inertial frame.

        Targets ``position`` (3,) and ``rotation`` (3, 3); the parts whose target is None are
        zero. ``pose``: the end effector's (R, p) at this state
        when the caller has it (skips the forward kinematics).
        """
        err = np.zeros(6)
        if position is None and rotation is None:
            return err
        R, p = self.pose(R0, r0, qm) if pose is None else pose
        if rotation is not None:
            err[0:3] = rotation_vector(chk.array('rotation', rotation, (3, 3)) @ R.T)
        if position is not None:
            err[3:6] = chk.vector('position', position, 3) - p
        return err
