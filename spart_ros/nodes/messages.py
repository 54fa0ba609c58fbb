"""
Output messages of the dynamics and controller nodes, filled from numpy (message types, no rclpy).

:class:`OutputMessages` keeps one preallocated message of each output type for a
model and refills it in place for every state (creating geometry_msgs objects
costs more than the dynamics), so a message must be published before the next
``fill_*`` call (rclpy serializes on ``publish``).
"""

import array
import struct

from builtin_interfaces.msg import Time
from geometry_msgs.msg import Point, Twist
import numpy as np

from spart_interfaces.msg import CenterOfMass, Jacobian, Jacobians, LinkTwists

__all__ = [
    'OutputMessages',
    'SerializedOutputs',
    'SerializedCommands',
    'SerializedWrench',
    'template',
    'bool_sequence',
    'set_vector3',
    'set_point',
]


def set_vector3(msg, v):
    """msg.x, msg.y, msg.z = v (any 3 numbers)."""
    msg.x, msg.y, msg.z = float(v[0]), float(v[1]), float(v[2])


set_point = set_vector3


def _doubles(a):
    """Return a float64 sequence for a message field, from a numpy array (row-major)."""
    return array.array('d', a.tobytes(order='C'))


class OutputMessages:
    """
    LinkTwists, CenterOfMass and Jacobians messages of one model (see spart_interfaces).

    ``model``: a :class:`spart_ros.nodes.model.Model`; ``frame_id``: the world frame.
    """

    def __init__(self, model, frame_id):
        self.frame_id = frame_id
        n_links = len(model.link_names)
        self.link_twists = LinkTwists()
        self.link_twists.header.frame_id = frame_id
        self.link_twists.link_names = list(model.link_names)
        self.link_twists.com_positions = [Point() for _ in range(n_links)]
        self.link_twists.twists = [Twist() for _ in range(n_links)]

        self.center_of_mass = CenterOfMass()
        self.center_of_mass.header.frame_id = frame_id
        self.center_of_mass.total_mass = float(model.total_mass)

        self.jacobians = Jacobians()
        self.jacobians.header.frame_id = frame_id
        cols = len(model.column_names)
        entries = []
        for spec in model.specs:
            jac = Jacobian()
            jac.header.frame_id = frame_id
            jac.link_name = spec.link_name
            set_point(jac.point, spec.offset_link)
            jac.rows = 6
            jac.cols = cols
            jac.row_names = list(model.row_names)
            jac.column_names = list(model.column_names)
            entries.append(jac)
        self.jacobians.jacobians = entries

    def fill_link_twists(self, stamp, rL, tL):
        msg = self.link_twists
        msg.header.stamp = stamp
        # python floats first (.tolist()): far cheaper than one numpy scalar per field
        for p, t, r, w in zip(msg.com_positions, msg.twists, rL.T.tolist(), tL.T.tolist()):
            p.x, p.y, p.z = r
            a, v = t.angular, t.linear
            a.x, a.y, a.z, v.x, v.y, v.z = w
        return msg

    def fill_center_of_mass(self, stamp, com):
        msg = self.center_of_mass
        msg.header.stamp = stamp
        c = com.tolist()
        p, v = msg.position, msg.velocity
        p.x, p.y, p.z, v.x, v.y, v.z = c
        return msg

    def fill_jacobians(self, stamp, jacobians, points):
        msg = self.jacobians
        msg.header.stamp = stamp
        for jac, J, p in zip(msg.jacobians, jacobians, points):
            jac.header.stamp = stamp
            q = jac.position
            q.x, q.y, q.z = p.tolist()
            jac.data = _doubles(J)
        return msg


# ---------------------------------------------------------------------------------------
# serialized templates (the fast path, see spart_ros.nodes.cdr)
# ---------------------------------------------------------------------------------------

_SENTINEL_SEC, _SENTINEL_NANOSEC = 0x2BADC0DE, 0x1337BEEF


def _sentinels(count, start):
    return [71234567.0 + 1.000000001 * (start + k) for k in range(count)]


SENTINEL_STAMP = Time(sec=_SENTINEL_SEC, nanosec=_SENTINEL_NANOSEC)


def template(data, fields, types=None, located=None):
    """
    Return a :class:`~.cdr.Template` of the serialized message ``data``.

    Made with the sentinel values ``fields`` (name -> values: float64, or of the struct code of
    ``types[name]``, e.g. 'Q' for uint64) and stamps (:data:`SENTINEL_STAMP`); ``located``:
    fields whose offsets are known already (name -> (offsets, numpy type), e.g. bools found by
    :func:`bool_sequence`).  CdrError when a sentinel is not found exactly once.
    """
    from .cdr import CdrError, Template

    offsets, dtypes = {}, {}
    for name, values in fields.items():
        code = (types or {}).get(name, 'd')
        offs = []
        for v in values:
            pat = struct.pack('<' + code, v)
            at = data.find(pat)
            if at < 0 or data.find(pat, at + 1) >= 0:
                raise CdrError(f'sentinel of field {name!r} found {data.count(pat)} times')
            offs.append(at)
        offsets[name], dtypes[name] = offs, '<' + {'d': 'f8', 'Q': 'u8'}[code]
    for name, (offs, dtype) in (located or {}).items():
        offsets[name], dtypes[name] = list(offs), dtype
    pat = struct.pack('<iI', _SENTINEL_SEC, _SENTINEL_NANOSEC)
    stamps, at = [], data.find(pat)
    while at >= 0:
        stamps.append(at)
        at = data.find(pat, at + 1)
    return Template(data, offsets, stamps, dtypes)


def bool_sequence(a, b, count):
    """
    Return the offsets of a message's sequence of ``count`` bools (list of ``count`` ints).

    ``a`` and ``b``: two serializations of one message, the sequence all False in ``a`` and all
    True in ``b``.  Found by its layout (its uint32 length ``count``, then one byte per bool) at
    one offset of both, not by the bytes that differ: the serializer leaves the alignment padding
    uninitialised, so two serializations of one message can differ there too.  CdrError unless
    exactly one such offset exists.
    """
    import struct

    from .cdr import CdrError

    head = struct.pack('<I', count)
    off, on = head + bytes(count), head + b'\x01' * count
    found = []
    at = b.find(on)
    while at >= 0:
        if a[at : at + len(off)] == off:
            found.append(at + len(head))
        at = b.find(on, at + 1)
    if len(a) != len(b) or len(found) != 1:
        raise CdrError(f'a sequence of {count} bools found {len(found)} times, expected once')
    return list(range(found[0], found[0] + count))


class SerializedCommands:
    """
    A controller's commands as serialized templates.

    std_msgs/Float64MultiArray of ``n`` values and, with ``names``, their sensor_msgs/JointState
    copy (efforts, stamped); CdrError when the message layout is not the expected one (then publish
    message objects).
    """

    def __init__(self, n, names, serialize):
        from sensor_msgs.msg import JointState
        from std_msgs.msg import Float64MultiArray

        values = _sentinels(n, 0)
        self.n = n
        self.commands = template(serialize(Float64MultiArray(data=values)), {'data': values})
        self.joint_command = None
        if names is not None:
            msg = JointState(name=list(names), effort=values)
            msg.header.stamp = SENTINEL_STAMP
            self.joint_command = template(serialize(msg), {'effort': values})

    def commands_bytes(self, values):
        t = self.commands
        t.set_field('data', values)
        return t.to_bytes()

    def joint_command_bytes(self, sec, nanosec, values):
        t = self.joint_command
        t.set_stamp(sec, nanosec)
        t.set_field('effort', values)
        return t.to_bytes()


class SerializedWrench:
    """
    A geometry_msgs/WrenchStamped of a fixed frame as a serialized template.

    ``frame_id``: its header's; ``serialize``: rclpy's serialize_message.  CdrError when the
    layout is not the expected one (then publish message objects).
    """

    def __init__(self, frame_id, serialize):
        from geometry_msgs.msg import WrenchStamped

        values = _sentinels(6, 0)
        msg = WrenchStamped()
        msg.header.stamp, msg.header.frame_id = SENTINEL_STAMP, frame_id
        set_vector3(msg.wrench.force, values[0:3])
        set_vector3(msg.wrench.torque, values[3:6])
        self._template = template(serialize(msg), {'force': values[0:3], 'torque': values[3:6]})

    def wrench_bytes(self, sec, nanosec, torque, force):
        """Return the message stamped (``sec``, ``nanosec``) with ``torque`` and ``force`` (3,)."""
        t = self._template
        t.set_stamp(sec, nanosec)
        t.set_field('force', force)
        t.set_field('torque', torque)
        return t.to_bytes()


class SerializedOutputs:
    """
    The three outputs as serialized-message templates (bytes for ``publish``).

    Built from an :class:`OutputMessages` by serializing its messages filled with
    sentinel values (``serialize``: rclpy.serialization.serialize_message) and locating
    them; raises CdrError (or ValueError) if a sentinel is not found exactly once, and
    the caller then publishes message objects instead.  The same field order as the
    ``fill_*`` methods: same content, byte for byte up to padding.
    """

    def __init__(self, outputs, serialize):
        self._count = 0
        stamp = SENTINEL_STAMP
        n_links = len(outputs.link_twists.link_names)

        def build(msg, fields):
            return template(serialize(msg), fields)

        s = self._next(6 * n_links)
        r = self._next(3 * n_links)
        lt = outputs.fill_link_twists(
            stamp, np.array(r).reshape(n_links, 3).T, np.array(s).reshape(n_links, 6).T
        )
        self.link_twists = build(lt, {'rL': r, 'tL': s})
        self._check_stamps(self.link_twists, 1, 'LinkTwists')

        c = self._next(6)
        self.center_of_mass = build(outputs.fill_center_of_mass(stamp, np.array(c)), {'com': c})
        self._check_stamps(self.center_of_mass, 1, 'CenterOfMass')

        n_jac = len(outputs.jacobians.jacobians)
        fields, Js, ps = {}, [], []
        for k, jac in enumerate(outputs.jacobians.jacobians):
            J = self._next(6 * jac.cols)
            p = self._next(3)
            fields[f'J{k}'], fields[f'p{k}'] = J, p
            Js.append(np.array(J).reshape(6, jac.cols))
            ps.append(np.array(p))
        self.jacobians = build(outputs.fill_jacobians(stamp, Js, ps), fields)
        self._check_stamps(self.jacobians, 1 + n_jac, 'Jacobians')

    def _next(self, count):
        values = _sentinels(count, self._count)
        self._count += count
        return values

    @staticmethod
    def _check_stamps(template, expected, what):
        from .cdr import CdrError

        if len(template.stamps) != expected:
            raise CdrError(f'{what}: {len(template.stamps)} stamps found, expected {expected}')

    def link_twists_bytes(self, sec, nanosec, rL, tL):
        t = self.link_twists
        t.set_stamp(sec, nanosec)
        t.set_field('rL', rL.T)
        t.set_field('tL', tL.T)
        return t.to_bytes()

    def center_of_mass_bytes(self, sec, nanosec, com):
        t = self.center_of_mass
        t.set_stamp(sec, nanosec)
        t.set_field('com', com)
        return t.to_bytes()

    def jacobians_bytes(self, sec, nanosec, jacobians, points):
        t = self.jacobians
        t.set_stamp(sec, nanosec)
        for k, (J, p) in enumerate(zip(jacobians, points)):
            t.set_field(f'J{k}', J)
            t.set_field(f'p{k}', p)
        return t.to_bytes()
