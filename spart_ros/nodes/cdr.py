"""
Serialized (CDR) fast paths of the nodes' 1 kHz messages: no rclpy, only struct and numpy.

At 1 kHz the rclpy message conversions cost more than the dynamics: turning a
serialized sensor_msgs/JointState into a Python object takes about as long as
the whole model update, and so does converting three output messages back.
So the nodes subscribe to their per-state inputs with ``raw=True`` and read the bytes here
(:func:`parse_joint_state`, :func:`parse_odometry`, :func:`parse_float64_array`), and publish
their per-state outputs as bytes written into templates (:class:`Template`).

Both sides follow the encoding of the ROS 2 middleware here: an encapsulation
header (4 bytes) then plain CDR (XCDR1), little-endian, 8-byte values aligned to 8
relative to the end of the header.  Anything else (another encapsulation, a
malformed buffer) raises :class:`CdrError`; the node then falls back to rclpy's
own (de)serialization, so the fast path can only be faster, never different.
Templates are made by the real serializer (see
:func:`spart_ros.nodes.messages.output_templates`): a message filled with
sentinel values is serialized once and the sentinels' byte offsets are where the
values go, so no layout is hand-coded on the output side.
"""

import struct

import numpy as np

__all__ = [
    'CdrError',
    'parse_joint_state',
    'parse_odometry',
    'parse_float64_array',
    'header_stamp',
    'Template',
    'CDR_LE',
]

CDR_LE = b'\x00\x01'  # encapsulation id: plain CDR, little-endian
_U32 = struct.Struct('<I')
_STAMP = struct.Struct('<iI')


class CdrError(ValueError):
    """The buffer is not the little-endian plain-CDR encoding this module reads."""


def _doubles(buf, off, end):
    """(array of float64, new offset): a CDR sequence<double> at ``off``."""
    off += (-(off - 4)) % 4
    if off + 4 > end:
        raise CdrError('truncated sequence length')
    (n,) = _U32.unpack_from(buf, off)
    off += 4
    if n == 0:
        return _EMPTY, off
    off += (-(off - 4)) % 8
    if off + 8 * n > end:
        raise CdrError(f'sequence of {n} doubles runs past the end of the buffer')
    return np.frombuffer(buf, dtype='<f8', count=n, offset=off), off + 8 * n


_EMPTY = np.zeros(0)


def header_stamp(buf):
    """
    (sec, nanosec) of a serialized message that starts with a std_msgs/Header.

    Little-endian plain CDR: the stamp follows the 4-byte encapsulation header.
    """
    if len(buf) < 12 or buf[0:2] != CDR_LE:
        raise CdrError(f'encapsulation {bytes(buf[0:2]).hex()} is not plain CDR little-endian')
    return _STAMP.unpack_from(buf, 4)


class JointStateReader:
    """Parses serialized sensor_msgs/JointState; caches decoded name lists by their bytes."""

    def __init__(self, cache_size=32):
        self._names = {}
        self._cache_size = cache_size

    def __call__(self, buf):
        """
        Parse a serialized sensor_msgs/JointState.

        Return (sec, nanosec, names (tuple of str), positions, velocities); the arrays are
        read-only views into ``buf``; efforts are not read. CdrError if the buffer is not
        little-endian plain CDR or is malformed.
        """
        end = len(buf)
        if end < 16 or buf[0:2] != CDR_LE:
            raise CdrError(f'encapsulation {bytes(buf[0:2]).hex()} is not plain CDR little-endian')
        sec, nanosec = _STAMP.unpack_from(buf, 4)
        (n,) = _U32.unpack_from(buf, 12)  # header.frame_id length (with NUL)
        off = 16 + n
        off += (-(off - 4)) % 4
        if off + 4 > end:
            raise CdrError('truncated name sequence')
        (count,) = _U32.unpack_from(buf, off)
        start = off
        off += 4
        for _ in range(count):
            off += (-(off - 4)) % 4
            if off + 4 > end:
                raise CdrError('truncated name')
            (n,) = _U32.unpack_from(buf, off)
            off += 4 + n
        if off > end:
            raise CdrError('name runs past the end of the buffer')
        key = bytes(buf[start:off])
        names = self._names.get(key)
        if names is None:
            names = self._decode_names(buf, start + 4, count)
            if len(self._names) >= self._cache_size:
                self._names.clear()
            self._names[key] = names
        positions, off = _doubles(buf, off, end)
        velocities, off = _doubles(buf, off, end)
        return sec, nanosec, names, positions, velocities

    @staticmethod
    def _decode_names(buf, off, count):
        names = []
        for _ in range(count):
            off += (-(off - 4)) % 4
            (n,) = _U32.unpack_from(buf, off)
            if n == 0 or buf[off + 4 + n - 1] != 0:
                raise CdrError('a joint name is not NUL-terminated')
            names.append(bytes(buf[off + 4 : off + 4 + n - 1]).decode('utf-8'))
            off += 4 + n
        return tuple(names)


parse_joint_state = JointStateReader()

_ODOM_TAIL = struct.Struct(
    '<7d36d6d'
)  # pose (position, orientation x y z w), its covariance, twist


def _string(buf, off, end, what):
    """(str, new offset): a CDR string (uint32 length with the NUL, then the bytes) at ``off``."""
    off += (-(off - 4)) % 4
    if off + 4 > end:
        raise CdrError(f'truncated {what}')
    (n,) = _U32.unpack_from(buf, off)
    off += 4
    if n == 0 or off + n > end or buf[off + n - 1] != 0:
        raise CdrError(f'{what} is not a NUL-terminated string within the buffer')
    return bytes(buf[off : off + n - 1]).decode('utf-8'), off + n


def parse_odometry(buf):
    """
    Parse a serialized nav_msgs/Odometry.

    Return (sec, nanosec, frame_id, child_frame_id, position (3,), orientation (x, y, z, w),
    linear (3,), angular (3,)): the pose and twist, floats in tuples (the covariances are not
    read).  CdrError if the buffer is not little-endian plain CDR or is malformed.
    """
    end = len(buf)
    if end < 16 or buf[0:2] != CDR_LE:
        raise CdrError(f'encapsulation {bytes(buf[0:2]).hex()} is not plain CDR little-endian')
    sec, nanosec = _STAMP.unpack_from(buf, 4)
    frame_id, off = _string(buf, 12, end, 'header.frame_id')
    child, off = _string(buf, off, end, 'child_frame_id')
    off += (-(off - 4)) % 8
    if off + _ODOM_TAIL.size + 36 * 8 > end:
        raise CdrError('odometry pose or twist runs past the end of the buffer')
    v = _ODOM_TAIL.unpack_from(buf, off)
    return sec, nanosec, frame_id, child, v[0:3], v[3:7], v[43:46], v[46:49]


def parse_float64_array(buf):
    """
    Parse a serialized std_msgs/Float64MultiArray: return its data (read-only float64 view).

    The layout (dimensions, data_offset) is skipped, as the effort controllers ignore it.
    CdrError if the buffer is not little-endian plain CDR or is malformed.
    """
    end = len(buf)
    if end < 12 or buf[0:2] != CDR_LE:
        raise CdrError(f'encapsulation {bytes(buf[0:2]).hex()} is not plain CDR little-endian')
    (dims,) = _U32.unpack_from(buf, 4)
    off = 8
    for _ in range(dims):  # MultiArrayDimension: label, size, stride
        _, off = _string(buf, off, end, 'layout.dim label')
        off += (-(off - 4)) % 4 + 8
    off += (-(off - 4)) % 4 + 4  # data_offset
    if off > end:
        raise CdrError('truncated Float64MultiArray layout')
    return _doubles(buf, off, end)[0]


class Template:
    """
    A serialized message whose numbers are rewritten in place.

    ``data``: the serialized message (bytes) made with sentinel values;
    ``fields``: name -> list of byte offsets of its values (in the order the
    values are given to :meth:`set_field`), float64 unless ``types`` gives the field another
    numpy type ('<u8', '?'...); ``stamps``: byte offsets of builtin_interfaces/Time
    (sec, nanosec) pairs to rewrite together.
    Values are written in memory order (one block per run of consecutive offsets).
    """

    def __init__(self, data, fields, stamps, types=None):
        if bytes(data[0:2]) != CDR_LE:
            raise CdrError(
                f'encapsulation {bytes(data[0:2]).hex()} is not plain CDR little-endian'
            )
        self.buf = bytearray(data)
        self.stamps = list(stamps)
        self._blocks = {}
        self._order = {}
        self._types = {}
        for name, offsets in fields.items():
            dtype = np.dtype((types or {}).get(name, '<f8'))
            self._types[name] = dtype
            order = np.argsort(np.asarray(offsets, dtype=np.int64), kind='stable')
            self._order[name] = None if np.array_equal(order, np.arange(len(order))) else order
            offsets = [offsets[k] for k in order]
            blocks, k = [], 0
            while k < len(offsets):  # runs of consecutive values
                j = k
                while j + 1 < len(offsets) and offsets[j + 1] == offsets[j] + dtype.itemsize:
                    j += 1
                blocks.append(
                    (
                        k,
                        j + 1,
                        np.frombuffer(self.buf, dtype=dtype, count=j + 1 - k, offset=offsets[k]),
                    )
                )
                k = j + 1
            self._blocks[name] = blocks
        #: fields written as one block, in order (set_field's fast case)
        self._single = {
            name: blocks[0][2]
            for name, blocks in self._blocks.items()
            if len(blocks) == 1 and self._order[name] is None
        }

    def set_field(self, name, values):
        """Write the ``values`` (flat, in field order) of field ``name``."""
        view = self._single.get(name)
        if view is not None:  # one block in order: a copy (numpy converts the type)
            try:
                view[:] = values  # a flat array or sequence (np.ravel's call costs 1.5 us)
            except ValueError:
                view[:] = np.ravel(values)
            return
        values = np.asarray(values, dtype=self._types[name]).ravel()
        order = self._order[name]
        if order is not None:
            values = values[order]
        for a, b, view in self._blocks[name]:
            view[:] = values[a:b]

    def set_stamp(self, sec, nanosec):
        for off in self.stamps:
            _STAMP.pack_into(self.buf, off, sec, nanosec)

    def to_bytes(self):
        return bytes(self.buf)
