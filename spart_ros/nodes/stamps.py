"""
Ordering of input stamps: out-of-order messages and clock jumps back (pure Python, no rclpy).

Stamps are integer nanoseconds (``sec * 10**9 + nanosec``: exact, unlike float seconds).
A message stamped before the newest one seen (of the same joint, or of the odometry) is
OLDER: delayed or from a source that lags, it is dropped.  One stamped more than
``jump_back`` ns before it is a JUMP: the clock went back (simulator reset, restarted
simulator, ``ros2 bag play --loop``, a publisher falling back to stamp 0), so the stamps seen
are forgotten and the message is accepted; without this rule the node would drop every
message until the new clock passed the old one.  tf2 clears its buffer on a jump back of the
node clock for the same reason (the nodes do that too, see RobotInputs).
"""

from .config import seconds_parameter

__all__ = ['NEVER', 'NEWER', 'OLDER', 'JUMP', 'stamp_ns', 'jump_back_ns', 'order']

#: "no stamp yet": older than every stamp
NEVER = -(1 << 63)
NEWER, OLDER, JUMP = 'newer', 'older', 'jump'


def stamp_ns(sec, nanosec):
    """builtin_interfaces/Time (sec, nanosec) -> integer nanoseconds."""
    return int(sec) * 1_000_000_000 + int(nanosec)


def jump_back_ns(name, seconds):
    """
    Return the parameter ``name`` (seconds, >= 0; 0 = no jump detection) in integer nanoseconds.

    ConfigError naming it for a negative, NaN or infinite value.
    """
    return int(round(seconds_parameter(name, seconds, note=' (0 = off)') * 1e9))


def order(stamp, newest, jump_back):
    """
    NEWER when ``stamp`` >= ``newest`` (an equal stamp is not out of order).

    JUMP when it is more than ``jump_back`` before it (``jump_back`` > 0), else OLDER. All in
    integer ns.
    """
    if stamp >= newest:
        return NEWER
    if jump_back and newest - stamp > jump_back:
        return JUMP
    return OLDER
