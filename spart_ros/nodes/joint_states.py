"""
sensor_msgs/JointState arrays mapped BY NAME into a model's joint-variable order.

Pure Python, no rclpy; see :class:`JointStateMapper`.
"""

from collections import namedtuple
import math

import numpy as np

from .stamps import JUMP, NEVER, NEWER, order
from ..core.errors import InputError

__all__ = ['JointStateMapper', 'JointUpdate']


JointUpdate = namedtuple('JointUpdate', 'matched applied unknown missing_velocities jumped')
JointUpdate.__doc__ = """What one update did: ``matched`` number of the model's joints in the
message, ``applied`` number of them whose values were taken (0: the message had no positions or
velocities, or was older than each of its joints' last stamp), ``unknown`` names it had that the
model lacks, ``missing_velocities`` True when it gave positions without velocities (those joints'
velocities were set to zero), ``jumped`` True when its stamp was taken as a clock jump back (every
joint's stamp was forgotten first)."""


class JointStateMapper:
    """
    Latest joint positions/velocities in the model's joint-variable order, mapped by name.

    ``update(names, positions, velocities)`` takes one sensor_msgs/JointState's arrays:
    any order; joints the model does not have are ignored (returned in ``unknown``), and so
    are the ``ignored`` ones (mimic followers: their leader's value decides them);
    joints not in the message keep their last value; an empty ``velocities`` with positions
    means zero velocity for the joints of the message (``missing_velocities`` is then True);
    velocities without positions (allowed by sensor_msgs/JointState) update only the
    velocities; a message with neither (efforts only) changes nothing.  A message
    whose array lengths do not match its names, or with a NaN / infinite value for a model
    joint, raises InputError and changes nothing.  ``received`` (n,) holds, per joint, the
    ``now`` (any clock, e.g. the receipt time) of its last position update (NaN = never).
    ``ready`` is True once every moving joint has been seen.

    Stamps are ordered PER JOINT, so that several joint_states sources (an arm and a gripper
    stamped a little apart) do not starve each other: ``update(..., stamp=ns)`` takes a joint's
    values only when ``stamp`` is not older than that joint's last one (``stamps`` (n,), integer
    ns); a message older for some of its joints updates the others.  A stamp more than
    ``jump_back`` ns before the last one of a joint of the message is a clock jump back (see
    :mod:`.stamps`): every joint's stamp is forgotten and the message is taken.
    ``stamp=None``: no ordering (every message is taken, no stamp recorded).
    """

    _CACHE_SIZE = 32

    def __init__(self, q_names, previous=None, ignored=()):
        self.names = list(q_names)
        self.ignored = frozenset(
            ignored
        )  # model joints that are not coordinates (mimic followers)
        self.n = len(self.names)
        self.index = {name: k for k, name in enumerate(self.names)}
        self.positions = np.zeros(self.n)
        self.velocities = np.zeros(self.n)
        self.seen = np.zeros(self.n, dtype=bool)
        self.received = np.full(
            self.n, np.nan
        )  # per joint: the ``now`` of its last position update
        self.stamps = np.full(self.n, NEVER, dtype=np.int64)  # per joint: its last stamp (ns)
        self._newest = NEVER  # max(stamps): a newer message needs no per-joint check
        self._n_seen = 0
        self._cache = {}
        self._last_key = self._last_plan = None
        if previous is not None:  # carry the values of joints the new model shares
            for k, name in enumerate(self.names):
                j = previous.index.get(name)
                if j is not None and previous.seen[j]:
                    self.positions[k] = previous.positions[j]
                    self.velocities[k] = previous.velocities[j]
                    self.received[k] = previous.received[j]
                    self.seen[k] = True
                if j is not None:
                    self.stamps[k] = previous.stamps[j]
            self._n_seen = int(self.seen.sum())
            self._newest = int(self.stamps.max()) if self.n else NEVER

    @property
    def ready(self):
        """Return True once every moving joint's position has been received."""
        return self._n_seen == self.n

    def forget_stamps(self):
        """Forget every joint's last stamp (after a clock jump back): any stamp is taken next."""
        self.stamps.fill(NEVER)
        self._newest = NEVER

    def missing(self):
        """Names of the moving joints not seen yet."""
        return [name for name, s in zip(self.names, self.seen) if not s]

    def _plan(self, names):
        key = tuple(names)
        if key == self._last_key:
            return self._last_plan
        plan = self._cache.get(key)
        if plan is None:
            src, dst, unknown, seen_dst = [], [], [], set()
            for k, name in enumerate(key):
                j = self.index.get(name)
                if j is None:
                    if name not in self.ignored:
                        unknown.append(name)
                elif j in seen_dst:
                    raise InputError(f'joint {name!r} appears twice in the message')
                else:
                    seen_dst.add(j)
                    src.append(k)
                    dst.append(j)
            plan = (np.array(src, dtype=np.intp), np.array(dst, dtype=np.intp), tuple(unknown))
            if len(self._cache) >= self._CACHE_SIZE:
                self._cache.clear()
            self._cache[key] = plan
        self._last_key, self._last_plan = key, plan
        return plan

    def update(self, names, positions, velocities=(), now=np.nan, stamp=None, jump_back=0):
        n_names = len(names)
        has_pos, has_vel = len(positions) > 0, len(velocities) > 0
        if has_pos and len(positions) != n_names:
            raise InputError(f'{n_names} names but {len(positions)} positions')
        if has_vel and len(velocities) != n_names:
            raise InputError(f'{n_names} names but {len(velocities)} velocities')
        src, dst, unknown = self._plan(names)
        matched = len(src)
        if not matched or not (has_pos or has_vel):
            return JointUpdate(matched, 0, unknown, False, False)
        jumped = False
        if stamp is not None and stamp < self._newest:  # older than some joint: check its own
            last = self.stamps[dst]
            verdict = order(stamp, int(last.max()), jump_back)
            if verdict == JUMP:
                jumped = True
            elif verdict != NEWER:
                keep = last <= stamp
                if not keep.any():
                    return JointUpdate(matched, 0, unknown, False, False)
                src, dst = src[keep], dst[keep]
        pos = np.asarray(positions, dtype=float)[src] if has_pos else None
        vel = np.asarray(velocities, dtype=float)[src] if has_vel else None
        if has_pos and not math.isfinite(pos.sum()) and not np.isfinite(pos).all():
            bad = names[int(src[~np.isfinite(pos)][0])]
            raise InputError(f'position of joint {bad!r} is NaN or infinite')
        if has_vel and not math.isfinite(vel.sum()) and not np.isfinite(vel).all():
            bad = names[int(src[~np.isfinite(vel)][0])]
            raise InputError(f'velocity of joint {bad!r} is NaN or infinite')
        if has_pos:
            self.positions[dst] = pos
            self.received[dst] = now
            if self._n_seen < self.n:
                self.seen[dst] = True
                self._n_seen = int(self.seen.sum())
        self.velocities[dst] = vel if has_vel else 0.0
        if stamp is not None:
            if jumped:
                self.forget_stamps()
            self.stamps[dst] = stamp
            if stamp > self._newest:
                self._newest = stamp
        return JointUpdate(matched, len(src), unknown, not has_vel, jumped)
