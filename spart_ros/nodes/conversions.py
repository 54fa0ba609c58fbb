"""
Message fields -> numpy, with errors that name the field (pure Python, no rclpy).

Message arguments are duck-typed: anything with the attributes of the ROS message
(``v.x``, ``q.w``, ``pose.position``...) works, so these are unit-tested without ROS.
"""

import math

import numpy as np

from ..core.attitude import quaternion_from_ros
from ..core.errors import InputError

__all__ = [
    'stamp_seconds',
    'finite',
    'vector3',
    'quaternion',
    'quaternion_values',
    'pose_to_matrix',
]


def stamp_seconds(stamp):
    """builtin_interfaces/Time (sec, nanosec) -> float seconds."""
    return stamp.sec + 1e-9 * stamp.nanosec


def finite(name, values):
    """Return ``values`` as a float array; InputError naming ``name`` if one is not finite."""
    a = np.asarray(values, dtype=float)
    # a message's few numbers (a tuple): one Python sum is finite when they all are (~1 us
    # against ~8 for numpy's test; a sum of finite numbers that overflows is looked at closer)
    if type(values) is tuple and a.ndim == 1 and math.isfinite(sum(values)):
        return a
    if not np.isfinite(a).all():
        raise InputError(f'{name} contains NaN or infinity: {a.tolist()}')
    return a


def vector3(name, v):
    """(3,) array of a geometry_msgs/Vector3 or Point; InputError naming ``name`` if not finite."""
    return finite(name, (v.x, v.y, v.z))


def quaternion(name, q):
    """
    Rotation matrix (active, frame -> world) of a geometry_msgs/Quaternion (x, y, z, w).

    The quaternion is normalized; a zero or non-finite one is an InputError naming ``name``.
    """
    return quaternion_values(name, q.x, q.y, q.z, q.w)


def quaternion_values(name, x, y, z, w):
    """Return :func:`quaternion` of the numbers (x, y, z, w) (a serialized message's)."""
    try:
        return quaternion_from_ros(x, y, z, w)
    except InputError as err:
        raise InputError(f'{name}: {err}') from None


def pose_to_matrix(name, pose):
    """(R (3, 3), p (3,)) of a geometry_msgs/Pose."""
    return quaternion(f'{name}.orientation', pose.orientation), vector3(
        f'{name}.position', pose.position
    )
