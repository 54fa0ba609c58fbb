"""The controlled end effector: a point and frame fixed on a link, its pose, and the task twist
commanded from a twist reference and an optional pose target (P law).

Twists are [angular velocity; velocity of the point] in the inertial frame, the rows of SPART's
point Jacobian.  ``frame='com'`` takes the offset (and the end-effector frame) in the link CoM
frame, SPART's convention and FastDynamics'; ``frame='link'`` in the URDF link frame (ROS
users' tool frames), converted once here.
"""
import numpy as np

from ..core import checks as chk
from ..core.errors import InputError
from ..core.kinematics import kinematics

__all__ = ['EndEffector', 'rotation_vector']


def rotation_vector(R):
    """Rotation vector (unit axis * angle, angle in [0, pi]) of a rotation matrix ``R`` (3, 3)."""
    w = 0.5 * np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])   # sin(angle) axis
    s = float(np.sqrt(w @ w))
    c = 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0)
    angle = np.arctan2(s, c)
    if s > 1e-6:
        return angle / s * w
    if c > 0:                                   # small angle: angle / sin(angle) ~ 1 + angle^2 / 6
        return (1.0 + angle * angle / 6.0) * w
    # angle near pi: R ~ 2 a a' - I, read the axis off the largest diagonal entry
    B = 0.5 * (R + np.eye(3))
    k = int(np.argmax(np.diag(B)))
    axis = B[:, k] / np.sqrt(max(B[k, k], 1e-300))
    if axis @ w < 0:
        axis = -axis
    return angle * axis


class EndEffector:
    """A point and frame on ``link`` (SPART id or name) of ``robot``.

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
            T = np.asarray(robot.base_link.T if self.link == 0 else robot.links[self.link - 1].T, dtype=float)
            R_lc, p_lc = T[:3, :3], T[:3, 3]       # CoM frame in the URDF link frame
            self.offset, self.rotation = R_lc.T @ (p - p_lc), R_lc.T.copy()
        else:
            raise InputError(f"frame: expected 'com' or 'link', got {frame!r}")

    def pose(self, R0, r0, qm):
        """(R (3, 3), p (3,)): the end-effector frame's rotation and the point, inertial frame
        (SPART's Kinematics; a control loop reads the link pose off its FreeFloatingKinematics
        update instead and calls :meth:`frame_pose`)."""
        if self.link == 0:
            R = chk.array('R0', R0, (3, 3))
            r = chk.vector('r0', r0, 3)
        else:
            k = kinematics(R0, r0, qm, self.robot)
            R, r = k.RL[:, :, self.link - 1], k.rL[:, self.link - 1]
        return self.frame_pose(R, r)

    def frame_pose(self, R_link, r_link):
        """(R (3, 3), p (3,)) of the end-effector frame and point, inertial frame, from the pose
        of the link's CoM frame: ``R_link`` (3, 3) CoM frame -> inertial, ``r_link`` (3,) its CoM."""
        return R_link @ self.rotation, r_link + R_link @ self.offset

    def pose_error(self, R0, r0, qm, position=None, rotation=None, pose=None):
        """[rotation vector of R_target R'; p_target - p] (6,), inertial frame; the parts whose
        target is None are zero.  ``pose``: the end effector's (R, p) at this state when the
        caller has it (skips the forward kinematics)."""
        err = np.zeros(6)
        if position is None and rotation is None:
            return err
        R, p = self.pose(R0, r0, qm) if pose is None else pose
        if rotation is not None:
            err[0:3] = rotation_vector(chk.array('rotation', rotation, (3, 3)) @ R.T)
        if position is not None:
            err[3:6] = chk.vector('position', position, 3) - p
        return err
