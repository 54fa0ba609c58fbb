"""
MCAP bags of serialized ROS 2 messages, readable by ``ros2 bag`` and Foxglove (no rclpy).

:class:`McapBag` writes messages as they travel on the wire (CDR bytes, e.g. from an rclpy
subscription with ``raw=True``) under channels whose schema is the message definition in
rosbag2's ``ros2msg`` encoding: the type's ``.msg`` text, then for every type it uses (depth
first, each once) a line of 80 ``=``, ``MSG: pkg/Type`` and that type's text.  The
definitions come from the ``.msg`` files of the installed message packages (ament index), so a
reader needs no ROS install to decode the bag (:func:`read_back` checks that it can).  Types
whose package is not installable here but whose definition is a public interface
(``tf2_msgs/msg/TFMessage``) are written from :data:`PUBLISHED_DEFINITIONS`.

Reading: :class:`DecoderFactory` decodes with the definitions a bag carries as mcap_ros2's
decoder does (the same values, the same failures), with Python code generated once per schema
(:func:`cdr_decoder`), several times faster.  :func:`read_messages` returns a bag's messages
decoded, :func:`read_back` checks that every message decodes.
"""

import contextlib
import keyword
import os
import struct

__all__ = [
    'McapBag',
    'message_definition',
    'read_back',
    'read_messages',
    'message_counts',
    'cdr_decoder',
    'DecoderFactory',
    'BagError',
    'PUBLISHED_DEFINITIONS',
]

PRIMITIVES = {
    'bool',
    'byte',
    'char',
    'float32',
    'float64',
    'int8',
    'uint8',
    'int16',
    'uint16',
    'int32',
    'uint32',
    'int64',
    'uint64',
    'string',
    'wstring',
}
SEPARATOR = '=' * 80

#: .msg texts of message types whose package is not installed here (tf2_msgs is not on PyPI), as
#: their packages publish them; used only when the package is missing.
PUBLISHED_DEFINITIONS = {
    'tf2_msgs/TFMessage': 'geometry_msgs/TransformStamped[] transforms\n',
}


class BagError(RuntimeError):
    """A message type whose definition cannot be found, or a bag that does not read back."""


def _msg_file(package, name):
    from ament_index_python.packages import get_package_share_directory, PackageNotFoundError

    try:
        path = os.path.join(get_package_share_directory(package), 'msg', f'{name}.msg')
    except PackageNotFoundError:
        if f'{package}/{name}' in PUBLISHED_DEFINITIONS:
            return PUBLISHED_DEFINITIONS[f'{package}/{name}']
        raise BagError(
            f'message package {package!r} is not installed (type {package}/{name})'
        ) from None
    if not os.path.isfile(path):
        raise BagError(f'no definition {path} for message type {package}/{name}')
    with open(path, encoding='utf-8') as f:
        return f.read()


def _field_types(text, package):
    """Complex field types (``pkg/Type``) used by a .msg text of ``package``, in order."""
    out = []
    for line in text.splitlines():
        line = line.split('#', 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) < 2 or '=' in parts[1] or (len(parts) > 2 and parts[2].startswith('=')):
            continue  # a constant, not a field
        base = parts[0].split('[', 1)[0].split('<=', 1)[0]
        if base in PRIMITIVES:
            continue
        out.append(base if '/' in base else f'{package}/{base}')
    return [t.replace('/msg/', '/') for t in out]


def message_definition(type_name):
    """rosbag2's ``ros2msg`` schema text of ``type_name`` ('pkg/msg/Type' or 'pkg/Type')."""
    package, name = type_name.replace('/msg/', '/').split('/')
    root = _msg_file(package, name)
    parts, seen = [root], set()
    stack = list(reversed(_field_types(root, package)))
    while stack:
        dep = stack.pop()
        if dep in seen:
            continue
        seen.add(dep)
        pkg, typ = dep.split('/')
        text = _msg_file(pkg, typ)
        parts.append(f'{SEPARATOR}\nMSG: {dep}\n{text}')
        stack.extend(reversed(_field_types(text, pkg)))
    return '\n'.join(p.rstrip('\n') for p in parts) + '\n'


class McapBag:
    """
    An MCAP file being written: ``add(topic, type_name, cdr_bytes, time_ns)``; ``close()``.

    One schema per type and one channel per topic, registered on first use.  ``time_ns`` is the
    log and publish time (nanoseconds; the ROS time the message was received).  Messages are held
    and written ``flush_every`` at a time (:meth:`~spart_ros.tools.mcap_writer.MessageWriter.
    add_messages`: a recorder of 1 kHz topics spent ~40 us per message in mcap's
    ``add_message``); the file is the one ``add_message`` of each would write, complete once
    :meth:`close` returns (:meth:`flush` writes what is held).
    """

    def __init__(self, path, flush_every=1000):
        from .mcap_writer import MessageWriter

        self.path = path
        self._file = open(path, 'wb')
        self._writer = MessageWriter(self._file)
        self._writer.start(profile='ros2', library='spart_ros')
        self._schemas, self._channels, self._sequence = {}, {}, {}
        self._rows, self._flush_every = [], int(flush_every)
        self.count = 0

    def add(self, topic, type_name, data, time_ns):
        channel = self._channels.get(topic)
        if channel is None:
            channel = self._register(topic, type_name)
        seq = self._sequence[topic] = self._sequence[topic] + 1
        time_ns = int(time_ns)
        rows = self._rows
        rows.append((channel, time_ns, bytes(data), time_ns, seq))
        self.count += 1
        if len(rows) >= self._flush_every:
            self.flush()

    def flush(self):
        """Write the messages held so far (in the order they were added)."""
        if self._rows:
            self._writer.add_messages(self._rows)
            self._rows = []

    @property
    def topic_counts(self):
        """Messages added so far per topic (a live view: do not modify)."""
        return self._sequence

    def _register(self, topic, type_name):
        self.flush()  # the held messages before the new records: add_message's order
        type_name = type_name.replace('/msg/', '/')
        schema = self._schemas.get(type_name)
        if schema is None:
            schema = self._schemas[type_name] = self._writer.register_schema(
                name=type_name,
                encoding='ros2msg',
                data=message_definition(type_name).encode('utf-8'),
            )
        channel = self._channels[topic] = self._writer.register_channel(
            topic=topic, message_encoding='cdr', schema_id=schema, metadata={}
        )
        self._sequence[topic] = 0
        return channel

    def close(self):
        if self._file is not None:
            self.flush()
            self._writer.finish()
            self._file.close()
            self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


# ---------------------------------------------------------------------------------------------
# reading: CDR decoders generated once per schema
# ---------------------------------------------------------------------------------------------

#: struct code and size (bytes) of each CDR primitive, read as mcap_ros2 reads it (char: int8)
_PRIMITIVE_CODES = {
    'bool': ('?', 1),
    'byte': ('B', 1),
    'char': ('b', 1),
    'int8': ('b', 1),
    'uint8': ('B', 1),
    'int16': ('h', 2),
    'uint16': ('H', 2),
    'int32': ('i', 4),
    'uint32': ('I', 4),
    'int64': ('q', 8),
    'uint64': ('Q', 8),
    'float32': ('f', 4),
    'float64': ('d', 8),
}
_BYTES = ('uint8', 'byte')  # arrays of these decode to bytes


class _Unsupported(Exception):
    """A schema left to mcap_ros2's decoder: a wstring, a type without definition or in itself."""


class _Message:
    """A decoded message: its fields as attributes (``__slots__``), equal field by field."""

    __slots__ = ()
    _type = ''

    def __eq__(self, other):
        return type(other) is type(self) and all(
            getattr(self, f) == getattr(other, f) for f in self.__slots__
        )

    __hash__ = None

    def __repr__(self):
        fields = ', '.join(f'{f}={getattr(self, f)!r}' for f in self.__slots__)
        return f'{self._type}({fields})'


def _message_class(msgdef):
    """Return a :class:`_Message` class of a parsed definition, made from its fields in order."""
    fields = [f.name for f in msgdef.fields]
    if not all(f.isidentifier() and not keyword.iskeyword(f) for f in fields):
        raise _Unsupported(f'field names of {msgdef.base_type}: {fields}')
    code = f'def __init__(_m{"".join(f", {f}" for f in fields)}):\n'
    code += ''.join(f'    _m.{f} = {f}\n' for f in fields) or '    pass\n'
    namespace = {}
    exec(code, namespace)  # the field names checked above
    attributes = {'__slots__': tuple(fields), '__init__': namespace['__init__']}
    return type(msgdef.msg_name, (_Message,), dict(attributes, _type=str(msgdef.base_type)))


class _Body:
    """
    The statements of one generated decoding function, and what is known of its offset ``o``.

    Offsets count from the end of the 4-byte encapsulation header, where CDR aligns from.
    While generating, ``o`` is known to be ``res`` modulo ``mod`` (1, 2, 4 or 8): primitives
    whose padding that decides are collected into one struct, read (:meth:`flush`) before
    anything of a size known only when decoding.
    """

    def __init__(self, source, mod):
        self.source, self.lines = source, []
        self.mod, self.res = mod, 0
        self._format, self._size, self._count, self._tuple = [], 0, 0, None

    def _advance(self, n):
        self.res = (self.res + n) % self.mod

    def _align(self, size):
        if size > self.mod:  # padding known only when decoding
            self.flush()
            self.lines.append(f'o += -o & {size - 1}')
            self.mod, self.res = size, 0
        pad = -self.res % size
        if pad:
            self._format.append(f'{pad}x')
            self._size += pad
            self._advance(pad)

    def read(self, ptype, count=None):
        """Return the expression of a primitive (or a list of ``count``), read with the group."""
        code, size = _PRIMITIVE_CODES[ptype]
        self._align(size)
        if self._tuple is None:
            self._tuple = self.source.name('t')
        k, n = self._count, count or 1
        self._format.append(f'{n}{code}')
        self._size, self._count = self._size + n * size, k + n
        self._advance(n * size)
        return f'{self._tuple}[{k}]' if count is None else f'list({self._tuple}[{k}:{k + n}])'

    def flush(self):
        """Read the primitives collected so far."""
        if self._format:
            target = f'{self._tuple} = ' if self._tuple else ''
            reader = self.source.struct(''.join(self._format))
            self.lines += [f'{target}{reader}(b, o)', f'o += {self._size}']
        self._format, self._size, self._count, self._tuple = [], 0, 0, None

    def _length(self, count):
        """Return the length of an array: ``count`` (fixed size) or read (a sequence)."""
        if count is not None:
            self.flush()
            return count
        expr = self.read('uint32')
        self.flush()
        n = self.source.name('n')
        self.lines.append(f'{n} = {expr}')
        return n

    def _unknown(self, mod=1):
        self.mod, self.res = mod, 0

    def string(self):
        """Return the variable read: a text (as mcap_ros2 reads it, length 0 or 1: '')."""
        n, s = self._length(None), self.source.name('s')
        self.lines += [f"{s} = str(b[o:o + {n} - 1], 'utf-8') if {n} > 1 else ''", f'o += {n}']
        self._unknown()
        return s

    def strings(self, count):
        n, v, k = self._length(count), self.source.name('l'), self.source.name('k')
        self.lines += [
            f'{v} = []',
            f'for _ in range({n}):',
            '    o += -o & 3',
            f'    {k} = _length(b, o)[0]',
            f"    {v}.append(str(b[o + 4:o + 3 + {k}], 'utf-8') if {k} > 1 else '')",
            f'    o += 4 + {k}',
        ]
        self._unknown()
        return v

    def primitives(self, ptype, count):
        """Return a list (bytes for uint8 and byte) of primitives: ``count`` or a sequence."""
        if count is not None and ptype not in _BYTES:
            return self.read(ptype, count)
        n, v = self._length(count), self.source.name('a')
        code, size = _PRIMITIVE_CODES[ptype]
        if ptype in _BYTES:
            self.lines += [f'{v} = bytes(b[o:o + {n}])', f'o += {n}']
            if count is None:
                self._unknown()
            else:
                self._advance(count)
            return v
        if size > 1:  # mcap_ros2 aligns each element: none when there is none
            self.lines.append(f'if {n}: o += -o & {size - 1}')
        fmt = f"'{self.source.endian}%d{code}' % {n}"
        self.lines += [f'{v} = list(_unpack({fmt}, b, o))', f'o += {size} * {n}']
        self._unknown(min(size, 4))  # aligned after the length or after the elements
        return v

    def messages(self, type_name, count):
        n, v, m = self._length(count), self.source.name('l'), self.source.name('m')
        function = self.source.function(type_name)
        self.lines += [
            f'{v} = []',
            f'for _ in range({n}):',
            f'    {m}, o = {function}(b, o)',
            f'    {v}.append({m})',
        ]
        self._unknown()
        return v

    def message(self, type_name):
        """Return the expression of a message read inline (its fields here)."""
        msgdef = self.source.definition(type_name)
        with self.source.inline(type_name):
            if msgdef.fields:
                args = [self.field(f) for f in msgdef.fields]
            else:  # ROS 2 serializes an empty message as one byte
                self.read('uint8')
                args = []
        return f'{self.source.message_class(type_name)}({", ".join(args)})'

    def field(self, field):
        """Return the expression of ``field`` (parsed) read here."""
        t = field.type
        fixed = t.is_array and t.array_size and not t.is_upper_bound
        count = t.array_size if fixed else None
        if not t.is_primitive_type():
            name = f'{t.pkg_name}/{t.type}'
            return self.messages(name, count) if t.is_array else self.message(name)
        if t.type == 'string':
            return self.strings(count) if t.is_array else self.string()
        if t.type not in _PRIMITIVE_CODES:
            raise _Unsupported(t.type)  # wstring: mcap_ros2 does not read it either
        return self.primitives(t.type, count) if t.is_array else self.read(t.type)


class _Source:
    """Python source of one schema's decoder for one byte order (``endian``: '<' or '>')."""

    def __init__(self, msgdefs, endian, classes):
        self.msgdefs, self.endian, self.classes = msgdefs, endian, classes
        self.namespace = {
            '_unpack': struct.unpack_from,
            '_length': struct.Struct(endian + 'I').unpack_from,
        }
        self.chunks, self.functions, self._class_names = [], {}, {}
        self._inlined, self._n = set(), 0

    def name(self, prefix):
        self._n += 1
        return f'{prefix}{self._n}'

    def struct(self, fmt):
        name = self.name('_S')
        self.namespace[name] = struct.Struct(self.endian + fmt).unpack_from
        return name

    def definition(self, type_name):
        msgdef = self.msgdefs.get(type_name)
        if msgdef is None:
            raise _Unsupported(f'no definition of {type_name}')
        return msgdef

    def message_class(self, type_name):
        if type_name not in self._class_names:
            if type_name not in self.classes:
                self.classes[type_name] = _message_class(self.definition(type_name))
            self._class_names[type_name] = name = self.name('_C')
            self.namespace[name] = self.classes[type_name]
        return self._class_names[type_name]

    @contextlib.contextmanager
    def inline(self, type_name):
        """Read the fields of ``type_name`` inline within (a type inside itself: _Unsupported)."""
        if type_name in self._inlined:
            raise _Unsupported(f'{type_name} contains itself')
        self._inlined.add(type_name)
        try:
            yield
        finally:
            self._inlined.discard(type_name)

    def _define(self, name, args, body, expr):
        body.flush()
        lines = body.lines + [f'return {expr}']
        self.chunks.append(f'def {name}({args}):\n' + ''.join(f'    {line}\n' for line in lines))

    def function(self, type_name):
        """Return the name of ``f(b, o) -> (message, o)`` reading a ``type_name`` at ``o``."""
        if type_name not in self.functions:
            name = self.functions[type_name] = self.name('_f')
            inlined, self._inlined = self._inlined, set()
            body = _Body(self, mod=1)
            self._define(name, 'b, o', body, f'{body.message(type_name)}, o')
            self._inlined = inlined
        return self.functions[type_name]

    def decoder(self, type_name):
        """Return ``decode(b)``: the ``type_name`` message of ``b`` (CDR after the header)."""
        body = _Body(self, mod=8)
        body.lines.append('o = 0')
        self._define('_decode', 'b', body, body.message(type_name))
        exec('\n'.join(self.chunks), self.namespace)
        return self.namespace['_decode']


def _definitions(schema_name, schema_text):
    """
    Return ({type name: parsed definition}, the type names the schema defines).

    Parsed by mcap_ros2, with its defaults for builtin_interfaces Time and Duration (when the
    schema has no definition of them).
    """
    from mcap_ros2._dynamic import _for_each_msgdef, TimeDefinition

    msgdefs = {
        'builtin_interfaces/Time': TimeDefinition,
        'builtin_interfaces/Duration': TimeDefinition,
    }
    defined = set()

    def add(name, short_name, msgdef):
        msgdefs[name] = msgdefs[short_name] = msgdef
        defined.update((name, short_name))

    _for_each_msgdef(schema_name, schema_text, add)
    return msgdefs, defined


def cdr_decoder(schema_name, schema_text):
    """
    Return ``decode(data)`` of the CDR messages of a ``ros2msg`` schema, or None.

    ``decode`` returns the message (its fields as attributes) from the serialized bytes
    (encapsulation header first, either byte order), as mcap_ros2's dynamic decoder does: the
    definitions parsed by mcap_ros2, every type read as it reads it, the same values (lists,
    ``bytes`` for uint8 and byte arrays) and an exception where it raises one.  Python code is
    generated for the schema once: runs of fixed-size fields are read with one struct.  None
    for what it does not generate code for (``wstring``, a type without a definition or inside
    itself, a schema not defining ``schema_name``): mcap_ros2 decodes those.
    """
    msgdefs, defined = _definitions(schema_name, schema_text)
    if schema_name not in defined:
        return None
    classes = {}
    try:
        little, big = (_Source(msgdefs, e, classes).decoder(schema_name) for e in '<>')
    except _Unsupported:
        return None

    def decode(data):
        if len(data) < 4:
            raise ValueError(f'Invalid CDR data size {len(data)}, must contain a 4-byte header')
        return (little if data[1] & 1 else big)(memoryview(data)[4:])

    return decode


class DecoderFactory:
    """
    Decoders of CDR messages with ``ros2msg`` schemas, for an mcap reader's ``decoder_factories``.

    A drop-in for ``mcap_ros2.decoder.DecoderFactory``: :func:`cdr_decoder` per schema, its
    decoder for the schemas that one leaves to it.
    """

    def __init__(self):
        from mcap_ros2.decoder import DecoderFactory as Ros2DecoderFactory

        self._fallback = Ros2DecoderFactory()
        self._decoders = {}

    def decoder_for(self, message_encoding, schema):
        """Return the decoder of ``schema`` (an mcap Schema) or None if not CDR and ros2msg."""
        if message_encoding != 'cdr' or schema is None or schema.encoding != 'ros2msg':
            return None
        if schema.id not in self._decoders:
            decode = cdr_decoder(schema.name, schema.data.decode())
            self._decoders[schema.id] = decode or self._fallback.decoder_for(
                message_encoding, schema
            )
        return self._decoders[schema.id]


def _decoded(path, topics, decode, window=(None, None)):
    """
    Yield (schema, channel, message, decoded) of the bag ``path`` in the order of the file.

    ``topics``: only those (all if None); ``decode``: the topics decoded (all if None; None
    yielded for the others); ``window``: (start, end) log times [ns] (end excluded; None: open).
    BagError if a message does not decode.
    """
    from mcap.reader import make_reader

    factory = DecoderFactory()
    decoders = {}
    with open(path, 'rb') as f:
        try:
            for schema, channel, message in make_reader(f).iter_messages(
                topics=topics, starting_at=window[0], ending_before=window[1], log_time_order=False
            ):
                if decode is not None and channel.topic not in decode:
                    yield schema, channel, message, None
                    continue
                fn = decoders.get(channel.id)
                if fn is None:
                    fn = decoders[channel.id] = factory.decoder_for(
                        channel.message_encoding, schema
                    )
                    if fn is None:
                        raise BagError(f'no CDR ros2msg schema for {channel.topic}')
                yield schema, channel, message, fn(message.data)
        except BagError:
            raise
        except Exception as err:  # noqa: BLE001 - any decoding failure means a broken bag
            raise BagError(
                f'{path}: a message does not decode with its schema: {type(err).__name__}: {err}'
            ) from None


def read_messages(path, decode=None):
    """
    Return every message of the MCAP bag ``path``, decoded with the definitions it carries.

    [(schema, channel, message, decoded)] in log time order (the file's order among equal log
    times, as mcap's ``log_time_order`` reads), ``decoded`` None on the topics not in
    ``decode`` (all decoded if None). BagError if a message does not decode.
    """
    messages = list(_decoded(path, None, None if decode is None else set(decode)))
    messages.sort(key=lambda m: m[2].log_time)  # stable; in order already: one pass
    return messages


def message_counts(messages):
    """Return {topic: (schema name, message count)} of [(schema, channel, ...)]."""
    counts = {}
    for schema, channel, *_ in messages:
        name, n = counts.get(channel.topic, (schema.name, 0))
        counts[channel.topic] = (name, n + 1)
    return counts


def read_back(path, topics=None, sample=False):
    """
    Decode every message of the bag with the definitions it carries (no ROS needed).

    Only those of ``topics`` if given. Returns {topic: (schema name, message count)}. BagError
    if a message does not decode.  ``sample``: the counts from the bag's summary (its channel
    statistics, what its writer counted), decoded only the messages of three short windows (the
    first, middle and last 1 % of its log times: the chunks they are in) and the first message of
    each topic none of them has: proves every topic's definition reads its messages at the
    start, middle and end of the bag (e.g. ones written in bulk from one layout).
    """
    if not sample:
        return message_counts(_decoded(path, topics, None))
    from mcap.reader import make_reader

    with open(path, 'rb') as f:
        summary = make_reader(f).get_summary()
    if summary is None or summary.statistics is None:
        raise BagError(f'{path} has no summary section with statistics: read it in full')
    wanted = None if topics is None else set(topics)
    counts = {}
    for channel_id, n in summary.statistics.channel_message_counts.items():
        channel = summary.channels[channel_id]
        if n and (wanted is None or channel.topic in wanted):
            counts[channel.topic] = (summary.schemas[channel.schema_id].name, n)
    start, end = summary.statistics.message_start_time, summary.statistics.message_end_time
    width = max((end - start) // 100, 1)
    decoded = set()
    for t in (start, start + (end - start) // 2, end + 1 - width):
        for _, channel, _, _ in _decoded(path, sorted(counts), None, (t, t + width)):
            decoded.add(channel.topic)
    for topic in sorted(set(counts) - decoded):
        next(_decoded(path, [topic], None), None)
    return counts
