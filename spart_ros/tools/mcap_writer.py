"""
An MCAP writer that adds many messages in one call (mcap's ``Writer``, a cheaper message path).

mcap's ``Writer.add_message`` builds a record object and makes a dozen stream calls per message
(~40 us); :meth:`MessageWriter.add_messages` writes each message record with one struct and keeps
the same chunk message indexes, statistics and chunking, so the file is the one ``add_message``
would write (test_replay.py reads such files back with mcap's reader).
"""

import struct

from mcap.records import MessageIndex
from mcap.writer import Writer

__all__ = ['MessageWriter']

#: a message record's opcode, length, channel id, sequence, log time, publish time
_MESSAGE_HEAD = struct.Struct('<BQHIQQ')
_OPCODE_MESSAGE = 0x05
_HEAD_AFTER_LENGTH = _MESSAGE_HEAD.size - 9  # what the record length counts besides the data


class MessageWriter(Writer):
    """mcap's Writer, plus :meth:`add_messages` (chunked writing, the default)."""

    def add_messages(self, rows):
        """
        Add messages in order: what ``add_message`` of each does.

        ``rows``: an iterable of (channel id, log time, data, publish time, sequence), times in ns.
        """
        builder = self._Writer__chunk_builder
        if builder is None:
            for channel, log_time, data, publish_time, sequence in rows:
                self.add_message(channel, log_time, data, publish_time, sequence)
            return
        stats = self._Writer__statistics
        counts, limit = stats.channel_message_counts, self._Writer__chunk_size
        pack = _MESSAGE_HEAD.pack
        buf = builder.record_writer._buffer
        for channel, log_time, data, publish_time, sequence in rows:
            if stats.message_count == 0:
                stats.message_start_time = log_time
            elif log_time < stats.message_start_time:
                stats.message_start_time = log_time
            if log_time > stats.message_end_time:
                stats.message_end_time = log_time
            counts[channel] += 1
            stats.message_count += 1
            if builder.num_messages == 0:
                builder.message_start_time = log_time
            elif log_time < builder.message_start_time:
                builder.message_start_time = log_time
            if log_time > builder.message_end_time:
                builder.message_end_time = log_time
            index = builder.message_indices.get(channel)
            if index is None:
                index = builder.message_indices[channel] = MessageIndex(
                    channel_id=channel, records=[]
                )
            index.records.append((log_time, buf.tell()))
            builder.num_messages += 1
            buf.write(
                pack(
                    _OPCODE_MESSAGE,
                    _HEAD_AFTER_LENGTH + len(data),
                    channel,
                    sequence,
                    log_time,
                    publish_time,
                )
            )
            buf.write(data)
            if buf.tell() > limit:
                self._Writer__finalize_chunk()
                buf = builder.record_writer._buffer
