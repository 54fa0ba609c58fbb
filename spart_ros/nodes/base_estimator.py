"""
The base link state of a floating base from odometry and IMU (pure Python, no rclpy).

Frames: b = URDF base link frame (REP 105 base_link). A ROS base state is the pose (R_b, p_b)
of b in the world and its twist (v_b, w_b) expressed in b, as nav_msgs/Odometry carries it.
"""

from collections import namedtuple

import numpy as np

from .config import seconds_parameter

__all__ = [
    'BaseLinkState',
    'FloatingBaseEstimator',
    'imu_to_base',
    'frame_state_to_base',
    'check_max_age',
]


BaseLinkState = namedtuple('BaseLinkState', 'R_b p_b v_b w_b')
BaseLinkState.__doc__ = """ROS base state: pose of the URDF base link frame b in the world
(R_b (3, 3) b -> world, p_b (3,)), velocity v_b (3,) of b's origin and angular velocity
w_b (3,), both expressed in b."""


def check_max_age(name, value):
    """
    Return the maximum age parameter ``name`` (s, >= 0; +inf allowed) as a float.

    ConfigError naming it for a negative or NaN value (``odom_max_age`` and ``imu_max_age`` alike).
    """
    return seconds_parameter(name, value, infinite=True)


class FloatingBaseEstimator:
    """
    Latest base link state from odometry, with an optional IMU override.

    ``set_odometry``: pose of b in the world, twist of b in b (nav_msgs/Odometry).
    ``set_imu``: an IMU sample already turned into base link quantities (see
    :func:`imu_to_base`): orientation R_b of b in the world (None if the IMU gives none),
    angular velocity w_b in b (None if none), and the sample's stamp (s).
    ``state(stamp)``: the base state for a joint state stamped ``stamp`` (s): the odometry,
    whose orientation and angular velocity are replaced by the IMU's when the IMU sample
    is fresh (|stamp - imu stamp| <= ``max_age``, the ``imu_max_age`` parameter).  None until
    the first odometry.
    """

    def __init__(self, max_age=0.1):
        self.max_age = check_max_age('imu_max_age', max_age)
        self.odometry = None
        self._imu = None  # (R_b or None, w_b or None, stamp)

    def set_odometry(self, R_b, p_b, v_b, w_b):
        self.odometry = BaseLinkState(R_b, p_b, v_b, w_b)

    def set_imu(self, R_b, w_b, stamp):
        self._imu = (R_b, w_b, float(stamp))

    def imu_fresh(self, stamp):
        return self._imu is not None and abs(float(stamp) - self._imu[2]) <= self.max_age

    def state(self, stamp):
        odo = self.odometry
        if odo is None:
            return None
        if not self.imu_fresh(stamp):
            return odo
        R_imu, w_imu, _ = self._imu
        return BaseLinkState(
            odo.R_b if R_imu is None else R_imu,
            odo.p_b,
            odo.v_b,
            odo.w_b if w_imu is None else w_imu,
        )


def imu_to_base(R_b_imu, R_w_imu=None, w_imu=None):
    """
    (R_b, w_b) of the base link from an IMU rigidly attached to it.

    The IMU frame's orientation R_w_imu in the world and angular velocity w_imu in the IMU frame
    (each None if not provided); R_b_imu = rotation of the IMU frame in b.
    """
    R_b = None if R_w_imu is None else R_w_imu @ R_b_imu.T
    w_b = None if w_imu is None else R_b_imu @ w_imu
    return R_b, w_b


def frame_state_to_base(T_b_f, R_f, p_f, v_f, w_f):
    """
    (R_b, p_b, v_b, w_b) of the base link b from the state of a frame f rigidly attached to it.

    As nav_msgs/Odometry gives it with ``child_frame_id`` f (e.g. a massless ``base_footprint``
    root, or the base link under a massless root): pose (R_f, p_f) of f in the world, velocity v_f
    of f's origin and angular velocity w_f, both expressed in f. ``T_b_f`` (4, 4): pose of f in b
    (fixed).  Exact: the same rigid body, so w_b = R_bf w_f and v_b = R_bf v_f + w_b x p_fb with
    p_fb = -p_bf the vector from f's origin to b's, in b.
    """
    R_bf, p_bf = T_b_f[:3, :3], T_b_f[:3, 3]
    R_b = R_f @ R_bf.T
    p_b = p_f - R_b @ p_bf
    w_b = R_bf @ w_f
    v_b = R_bf @ v_f - np.cross(w_b, p_bf)
    return R_b, p_b, v_b, w_b
