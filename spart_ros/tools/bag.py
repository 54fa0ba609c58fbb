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
"""

import os

__all__ = ['McapBag', 'message_definition', 'read_back', 'BagError', 'PUBLISHED_DEFINITIONS']

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
    log and publish time (nanoseconds; the ROS time the message was received).
    """

    def __init__(self, path):
        from mcap.writer import Writer

        self.path = path
        self._file = open(path, 'wb')
        self._writer = Writer(self._file)
        self._writer.start(profile='ros2', library='spart_ros')
        self._schemas, self._channels, self._sequence = {}, {}, {}
        self.count = 0

    def add(self, topic, type_name, data, time_ns):
        channel = self._channels.get(topic)
        if channel is None:
            channel = self._register(topic, type_name)
        seq = self._sequence[topic] = self._sequence[topic] + 1
        self._writer.add_message(
            channel,
            log_time=int(time_ns),
            data=bytes(data),
            publish_time=int(time_ns),
            sequence=seq,
        )
        self.count += 1

    @property
    def topic_counts(self):
        """Messages written so far per topic (a live view: do not modify)."""
        return self._sequence

    def _register(self, topic, type_name):
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
            self._writer.finish()
            self._file.close()
            self._file = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def read_back(path):
    """
    Decode every message of the bag with the definitions it carries (no ROS needed).

    Returns {topic: (schema name, message count)}. BagError if a message does not decode.
    """
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    counts = {}
    with open(path, 'rb') as f:
        reader = make_reader(f, decoder_factories=[DecoderFactory()])
        try:
            for schema, channel, _message, _decoded in reader.iter_decoded_messages():
                name, n = counts.get(channel.topic, (schema.name, 0))
                counts[channel.topic] = (name, n + 1)
        except Exception as err:  # noqa: BLE001 - any decoding failure means a broken bag
            raise BagError(
                f'{path}: a message does not decode with its schema: {type(err).__name__}: {err}'
            ) from None
    return counts
