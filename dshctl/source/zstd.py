"""zstd logs: a concatenation of frames decoded into lines with bounded memory (FORMAT.md §1.7, §1.8).

dsh writes each commit as one zstd frame ending on a record boundary and locates frames structurally
(``scanZstdFrames``), so dshctl must too: a complete frame has to decode and end on an LF, while EOF
inside the last frame is a torn tail, not corruption. Two ways to get there, which must agree to the
byte (tests/test_zstd_fast_path.py):

* the **fast path** (:meth:`ZstdFrames._zstd_fast`) for frames that declare a bounded size, as dsh's
  writer's do: python-zstandard finds each frame's end itself, so no block header is read in Python;
* the **walk** (:meth:`ZstdFrames._zstd_walk`), which reads every frame header, block header and
  checksum itself (RFC 8878 §3.1.1) and feeds the decoder at most ``MAX_BLOCKS_PER_CALL`` blocks at a
  time. It reads pipes, and takes over from the fast path at the first frame the fast path cannot
  follow (bad magic, a reserved bit, no or a large declared size, a decoder error, EOF inside a frame),
  re-reading that frame from its start so its errors and torn tail are reported exactly.

The walk reads frame headers itself rather than through ``zstandard.get_frame_parameters``: libzstd's
header parser refuses some headers (a window beyond ``ZSTD_WINDOWLOG_MAX``) that the walk must carry on
past, because the error dsh-compatible reading reports for them comes later, from the decoder, and
depends on the frame (a reserved block type further on wins; a sized frame says "error determining
content size", an unsized one "requires too much memory").
"""

from __future__ import annotations

from itertools import count
from typing import Any, Callable, Iterator

import zstandard

from dshctl.build import mypyc_attr
from dshctl.errors import SourceError

__all__ = ["MAX_BLOCKS_PER_CALL", "ZSTD_BLOCK_MAX", "ZSTD_MAGIC", "ZstdFrames", "decode_sized_frame"]

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
ZSTD_BLOCK_MAX = 128 * 1024
"""RFC 8878: a block never regenerates more than Block_Maximum_Size = min(window, 128 KiB)."""
MAX_BLOCKS_PER_CALL = 64
"""One decompression call is fed at most this many blocks, so its output is bounded by
``MAX_BLOCKS_PER_CALL * ZSTD_BLOCK_MAX`` whatever the compression ratio (decompression bombs)."""
SALVAGE_HINT = "; --salvage (cat, stats, replay) reads past the damaged frame"
"""What a damaged frame's error adds: the reading that does not stop there."""
_FRAME_HEADER_MAX = 18
"""Magic, descriptor, window byte, dictionary id and content size: enough to read a frame's declared size."""

_RESERVED_DESCRIPTOR_BITS = 0x18  # the reserved bit and the unused bit dsh's scanner refuses
_CHECKSUM_FLAG = 0x04
_SINGLE_SEGMENT_FLAG = 0x20
_DICTIONARY_ID_BYTES = (0, 1, 2, 4)


@mypyc_attr(allow_interpreted_subclasses=True)  # compiled calls to its host's methods must honour overrides
class ZstdFrames:
    """The zstd half of :class:`~dshctl.source.lines.LineReader`: a mixin without state of its own.

    It relies on its host for reading (``_read``, ``_seek``), errors (``_error``), turning decoded bytes
    into complete lines (``_split``, ``_numbered``), the torn tail (``_tear``) and the line state
    (``_line``, ``_pending``, ``_pending_len``, ``bytes_decoded``, ``max_line_bytes``); it keeps the host's
    ``frames``, ``first_frame_lines`` and ``torn_frame_start_line`` up to date.
    """

    max_line_bytes: int
    bytes_decoded: int
    frames: int
    first_frame_lines: int | None
    torn_frame_start_line: int | None
    _line: int
    _pending: list[bytes]
    _pending_len: int
    salvage: bool

    # the host's reading, error and line-state methods (LineReader's)
    def _read(self, wanted: int = 0) -> bytes:
        raise NotImplementedError

    def _seek(self, offset: int) -> None:
        raise NotImplementedError

    def _error(self, message: str, line: int | None = None) -> SourceError:
        raise NotImplementedError

    def _split(self, data: bytes) -> list[bytes]:
        raise NotImplementedError

    def _numbered(self, lines: list[bytes]) -> Iterator[tuple[int, bytes]]:
        raise NotImplementedError

    def _tear(self, reason: str, compressed_bytes: int | None = None) -> None:
        raise NotImplementedError

    def _gap(self, message: str, line: int) -> None:
        raise NotImplementedError

    def _blocks_per_call(self) -> int:
        return max(1, min(MAX_BLOCKS_PER_CALL, self.max_line_bytes // ZSTD_BLOCK_MAX))

    # -- the fast path ----------------------------------------------------------------------------

    def _zstd_fast(self, first: bytes) -> Iterator[tuple[int, bytes]]:
        """The happy path for frames that declare a bounded size, as dsh's writer's do:
        python-zstandard finds each frame's end itself (a decompressobj stops there), so no block
        header is read in Python and no line is yielded before its frame is complete. Anything else
        -- bad magic, a reserved header bit, no or a large declared size, a decoder error, EOF inside
        a frame, a frame that ends inside a record -- hands the rest of the file to :meth:`_zstd_walk`,
        which reports it exactly."""
        out_bound = self._blocks_per_call() * ZSTD_BLOCK_MAX
        limit = self.max_line_bytes
        new_decoder = zstandard.ZstdDecompressor().decompressobj
        content_size = zstandard.frame_content_size
        data = first
        view = memoryview(data)
        data_offset = 0  # file offset of data[0]
        pos = 0
        frame_no = 0
        while True:
            if len(data) - pos < _FRAME_HEADER_MAX:
                data, data_offset, pos = self._refill(data, data_offset, pos)
                view = memoryview(data)
                if pos == len(data):
                    return  # clean end between frames
            frame_no += 1
            size = -1
            if len(data) - pos > 4 and data.startswith(ZSTD_MAGIC, pos) and not data[pos + 4] & _RESERVED_DESCRIPTOR_BITS:
                try:
                    size = content_size(view[pos : pos + _FRAME_HEADER_MAX])
                except zstandard.ZstdError:
                    pass
            if not 0 <= size <= out_bound:
                yield from self._walk_from(data_offset + pos, frame_no)
                return
            frame_start = data_offset + pos
            feed_size = 1024 if size < 4096 else min(size >> 2, 1 << 16)  # few calls, little left over to copy
            decoder = new_decoder()
            decoded_parts: list[bytes] = []
            try:
                while True:
                    if pos == len(data):
                        data, data_offset, pos = self._refill(data, data_offset, pos)
                        view = memoryview(data)
                        if pos == len(data):
                            break  # EOF inside the frame
                    compressed = view[pos : pos + feed_size]
                    decoded = decoder.decompress(compressed)
                    if decoded:
                        decoded_parts.append(decoded)
                    if decoder.eof:
                        pos += len(compressed) - len(decoder.unused_data)
                        break
                    pos += len(compressed)
            except zstandard.ZstdError:
                pass
            if not decoder.eof:
                yield from self._walk_from(frame_start, frame_no)
                return
            decoded = decoded_parts[0] if len(decoded_parts) == 1 else b"".join(decoded_parts)
            if decoded.endswith(b"\n") and not self._pending and len(decoded) <= limit:
                # the common case: a whole batch of records
                self.bytes_decoded += len(decoded)
                if decoded.find(b"\n") == len(decoded) - 1:  # stops at the first LF: cheap either way
                    self._line += 1
                    yield self._line, decoded[:-1]
                else:
                    lines = decoded.split(b"\n")
                    lines.pop()
                    start = self._line + 1
                    self._line += len(lines)
                    yield from zip(count(start), lines)
                self.frames += 1
                if self.frames == 1:
                    self.first_frame_lines = self._line
            elif decoded and not decoded.endswith(b"\n"):
                # a complete frame that ends inside a record: damage, which the walk reports (and
                # --salvage reads past) from this frame on
                yield from self._walk_from(frame_start, frame_no)
                return
            else:
                yield from self._frame_lines(decoded)
                self._end_frame(frame_no)

    def _refill(self, data: bytes, data_offset: int, pos: int) -> tuple[bytes, int, int]:
        """The unread rest of ``data`` followed by the next read; ``(data, data_offset, pos)`` afterwards."""
        more = self._read()
        if not more:
            return data, data_offset, pos
        return (data[pos:] + more if pos < len(data) else more), data_offset + pos, 0

    def _walk_from(self, frame_start: int, frame_no: int) -> Iterator[tuple[int, bytes]]:
        """The rest of the file, from frame ``frame_no`` at file offset ``frame_start``, by the walk."""
        self._seek(frame_start)
        return self._zstd_walk(self._read(), start=frame_start, frame_no=frame_no - 1)

    # -- lines of complete frames -------------------------------------------------------------------

    def _frame_lines(self, decoded: bytes) -> Iterator[tuple[int, bytes]]:
        """The lines of a complete frame's (last) output."""
        if not self._pending and len(decoded) <= self.max_line_bytes and decoded.endswith(b"\n"):
            # the common case: a whole batch of records, nothing carried over
            self.bytes_decoded += len(decoded)
            lines = decoded.split(b"\n")
            lines.pop()
        else:
            lines = self._split(decoded)
        return self._numbered(lines)

    def _end_frame(self, frame_no: int) -> None:
        """Close complete frame ``frame_no``: it must end on a record boundary."""
        if self._pending_len:
            raise self._error(
                f"complete zstd frame {frame_no} ends inside a record "
                f"({self._pending_len} bytes after the last LF)",
                line=self._line + 1,
            )
        self.frames += 1
        if self.frames == 1:
            self.first_frame_lines = self._line

    # -- the walk ----------------------------------------------------------------------------------

    def _zstd_walk(self, first: bytes, start: int = 0, frame_no: int = 0) -> Iterator[tuple[int, bytes]]:
        """Every frame from file offset ``start`` on (``frame_no`` frames came before it), located
        structurally like dsh's ``scanZstdFrames``: the header, the blocks up to the last one and the
        checksum are walked first; then the complete frame is decoded, and must end on a line boundary.
        EOF inside a frame makes it the torn tail."""
        blocks_per_call = self._blocks_per_call()
        context = zstandard.ZstdDecompressor()
        window = _Buffer(first, self._read, start)
        frame_start = start
        while True:
            if window.end <= frame_start and not window.ensure(frame_start + 1):
                return  # clean end between frames
            frame_no += 1
            frame = _Frame(frame_no, frame_start, self._line + 1)
            try:
                yield from self._walk_frame(context, window, frame, blocks_per_call)
            except _Torn:
                if self.salvage and window.find(ZSTD_MAGIC, frame.start + 1) is not None:
                    # not the end: a damaged size sent the walk past the frames that follow
                    resumed = self._skip_damage(window, frame, self._error(f"corrupt zstd frame {frame.number}: its blocks run past the end of the file"))
                    if resumed is None:  # never: a magic was just found after the frame's start
                        return
                    frame_start = resumed
                    continue
                self.torn_frame_start_line = frame.first_line
                yield from self._torn_frame(context, window, frame)
                return
            except SourceError as damage:
                if not self.salvage:
                    raise SourceError(damage.message + SALVAGE_HINT, file=damage.file, line=damage.line) from None
                resumed = self._skip_damage(window, frame, damage)
                if resumed is None:
                    return
                frame_start = resumed
                continue
            frame_start = frame.end
            window.release(frame.end)

    def _walk_frame(
        self, context: zstandard.ZstdDecompressor, window: _Buffer, frame: _Frame, blocks_per_call: int
    ) -> Iterator[tuple[int, bytes]]:
        """One frame's lines: its header and blocks walked, then decoded; it must end on an LF."""
        self._walk_header(window, frame, blocks_per_call * ZSTD_BLOCK_MAX)
        yield from self._walk_blocks(window, frame, context, blocks_per_call)
        yield from self._frame_lines(self._decode_frame(context, window, frame))
        self._end_frame(frame.number)

    def _skip_damage(self, window: _Buffer, frame: _Frame, damage: SourceError) -> int | None:
        """Salvage: report the damaged frame as a gap and find the next frame magic after its start
        (``None``: none left). The line it broke off is lost with it."""
        self._pending = []
        self._pending_len = 0
        found = window.find(ZSTD_MAGIC, frame.start + 1)
        end = found if found is not None else window.end
        self._gap(f"{damage.message}; skipped {end - frame.start} byte(s) of the file "
                  f"(offsets {frame.start}-{end}) to {'the next frame' if found is not None else 'the end'}",
                  line=self._line + 1)
        if found is not None:
            window.release(found)
        return found

    def _walk_header(self, window: _Buffer, frame: _Frame, out_bound: int) -> None:
        """The frame header (RFC 8878 §3.1.1.1): check the magic and the reserved bits, find where the
        blocks start and whether a checksum follows them. A frame that declares a size within
        ``out_bound`` (the output of one bounded call) is decoded and verified in one call."""
        start = frame.start
        if not window.ensure(start + 5):
            if window.end - start >= 4 and not window.startswith(ZSTD_MAGIC, start):
                raise self._bad_magic(frame.number, window.get(start, start + 4))
            raise _Torn
        if not window.startswith(ZSTD_MAGIC, start):
            raise self._bad_magic(frame.number, window.get(start, start + 4))
        descriptor = window.byte(start + 4)
        if descriptor & _RESERVED_DESCRIPTOR_BITS:
            raise self._error(f"corrupt zstd frame {frame.number}: reserved frame-header bit set")
        header_size, size_field_bytes = frame_header_layout(descriptor)
        end = start + header_size
        if not window.ensure(end):
            raise _Torn
        if size_field_bytes:
            declared_size = int.from_bytes(window.get(end - size_field_bytes, end), "little")
            if size_field_bytes == 2:
                declared_size += 256
            frame.one_shot = 0 < declared_size <= out_bound
        frame.has_checksum = bool(descriptor & _CHECKSUM_FLAG)
        frame.end = end

    def _walk_blocks(
        self, window: _Buffer, frame: _Frame, context: zstandard.ZstdDecompressor, blocks_per_call: int
    ) -> Iterator[tuple[int, bytes]]:
        """The block headers (RFC 8878 §3.1.1.2) up to the last block, then the checksum; ``frame.end``
        moves to the frame's end. Every ``blocks_per_call`` blocks, what the frame holds so far is fed
        to a streaming decoder and its complete lines are yielded: bounded output whatever the ratio."""
        position = frame.end
        pending_blocks = 0
        while True:
            if not window.ensure(position + 3):
                raise _Torn
            block_header = window.uint24(position)
            block_type = (block_header >> 1) & 3
            block_size = block_header >> 3
            if block_type == 3:
                raise self._error(f"corrupt zstd frame {frame.number}: reserved block type")
            if block_size > ZSTD_BLOCK_MAX:
                raise self._error(f"corrupt zstd frame {frame.number}: block larger than 128 KiB")
            position += 4 if block_type == 1 else 3 + block_size  # an RLE block holds one byte
            if not window.ensure(position):
                raise _Torn
            pending_blocks += 1
            if block_header & 1:  # the last block
                break
            if pending_blocks >= blocks_per_call:
                frame.one_shot = False
                if frame.decoder is None:
                    frame.decoder = context.decompressobj()
                lines = self._split(self._feed(frame.decoder, window.get(frame.fed_to, position), frame.number))
                frame.fed_to = position
                window.release(position)
                pending_blocks = 0
                yield from self._numbered(lines)
        if frame.has_checksum:
            position += 4
            if not window.ensure(position):
                raise _Torn
        frame.end = position

    def _decode_frame(self, context: zstandard.ZstdDecompressor, window: _Buffer, frame: _Frame) -> bytes:
        """The complete frame's output not yet fed: in one verified call when it declared a small size,
        else from the streaming decoder, which must end the frame exactly where its blocks end."""
        try:
            if frame.one_shot:
                return context.decompress(window.get(frame.start, frame.end))
            if frame.decoder is None:
                frame.decoder = context.decompressobj()
            decoded = frame.decoder.decompress(window.get(frame.fed_to, frame.end))
            if not frame.decoder.eof or frame.decoder.unused_data:
                raise self._error(
                    f"corrupt zstd frame {frame.number}: the decoder did not end the frame where its blocks end"
                )
            return decoded
        except zstandard.ZstdError as exc:
            raise self._error(f"corrupt zstd frame {frame.number}: {_zstd_message(exc)}") from None

    def _torn_frame(self, context: zstandard.ZstdDecompressor, window: _Buffer, frame: _Frame) -> Iterator[tuple[int, bytes]]:
        """EOF inside ``frame``: keep the complete lines of its decodable prefix; the rest is the torn tail.
        Not for the header frame: dsh opens no log without one complete header frame (FORMAT.md §1.6);
        --salvage still reads what its prefix holds."""
        if frame.number == 1:
            head = _cut_prefix(window.get(frame.start, min(window.end, frame.start + CUT_PREFIX_BYTES)))
            text = head.lstrip(b" \t\r\n")
            if text and not text.startswith(b"{"):
                from dshctl.generations import ZSTD_NOT_JSON

                raise self._error(ZSTD_NOT_JSON, line=1)  # no header was ever there: no cut frame to salvage
            cut = (f"zstd frame 1, the header frame, is cut off after {window.end - frame.start} bytes: "
                   "dsh opens no log without a complete header frame")
            if not self.salvage:
                # the hint only where the cut left a whole line 1 for --salvage to read
                hint = "; --salvage (cat, stats, replay) reads its header line" if b"\n" in head else ""
                raise self._error(cut + hint, line=1)
            self._gap(cut + "; read what it holds", line=1)  # damage read past: status 1, as any salvage
        if window.end > frame.fed_to and window.end - frame.start > 4:
            if frame.decoder is None:
                frame.decoder = context.decompressobj()
            lines = self._split(self._feed(frame.decoder, window.get(frame.fed_to, window.end), frame.number))
            yield from self._numbered(lines)
        self._tear("torn zstd frame", compressed_bytes=window.end - frame.start)

    def _feed(self, decoder: Any, data: bytes | bytearray, frame_no: int) -> bytes:
        try:
            return decoder.decompress(data)
        except zstandard.ZstdError as exc:
            raise self._error(f"corrupt zstd frame {frame_no}: {_zstd_message(exc)}") from None

    def _bad_magic(self, frame_no: int, magic: bytes | bytearray) -> SourceError:
        magic = bytes(magic)
        what = "a skippable frame" if (magic[0] & 0xF0) == 0x50 and magic[1:] == b"\x2a\x4d\x18" else magic.hex(" ")
        return self._error(f"corrupt zstd frame {frame_no}: bad frame magic ({what}); dsh logs hold only zstd frames")


CUT_PREFIX_BYTES = 65536
"""How much of a cut first frame :func:`_cut_prefix` reads: only this much is taken from the window."""


def _cut_prefix(data: bytes | bytearray) -> bytes:
    """The first decoded bytes of a cut frame, up to its first LF: fed 64 compressed bytes at a time (at
    most 16 blocks a feed, so a hostile frame inflates a bounded amount), over its first CUT_PREFIX_BYTES,
    stopping at an LF or 1 MiB of output; what a damaged prefix decoded before the damage."""
    decoder = zstandard.ZstdDecompressor().decompressobj()
    out = bytearray()
    for start in range(0, min(len(data), CUT_PREFIX_BYTES), 64):
        try:
            out += decoder.decompress(bytes(data[start:start + 64]))
        except zstandard.ZstdError:
            break
        if b"\n" in out or len(out) > 1 << 20:
            break
    return bytes(out)


def decode_sized_frame(head: bytes, more: Callable[[int], bytes], max_size: int,
                       observe: Callable[[bytes], None]) -> tuple[bytes, int] | None:
    """One whole zstd frame that declares its size, decoded: ``(its output, its length in the file)``; None
    unless ``head`` (its first bytes, up to the 18 of the largest header) opens a frame that declares from
    1 to ``max_size`` bytes, which its compressed bytes decode to exactly, ending the frame before they end.
    ``more(offset)``: its compressed bytes from ``offset`` (counted from the frame's start) on, as many as
    the caller has at hand (``b""``: no more); ``observe`` sees each decoded piece as it comes and may
    raise to stop (a bound on what a hostile frame inflates to). For a reader that looks into a log from
    the middle (:mod:`dshctl.stats.split`); a log's own reading is :class:`ZstdFrames`'s."""
    if not head.startswith(ZSTD_MAGIC):
        return None
    try:
        size = zstandard.frame_content_size(head)
    except zstandard.ZstdError:
        return None
    if not 0 < size <= max_size:
        return None
    decoder = zstandard.ZstdDecompressor().decompressobj()
    parts: list[bytes] = []
    fed = 0
    try:
        while not decoder.eof:
            piece = more(fed)
            if not piece:
                return None
            output = decoder.decompress(piece)
            parts.append(output)
            fed += len(piece)
            observe(output)
    except zstandard.ZstdError:
        return None
    decoded = b"".join(parts)
    if len(decoded) != size:
        return None
    return decoded, fed - len(decoder.unused_data)


def frame_header_layout(descriptor: int) -> tuple[int, int]:
    """``(header size, content-size field size)`` of a zstd frame from its header descriptor byte
    (RFC 8878 §3.1.1.1: magic, descriptor, window byte unless single-segment, dictionary id, size)."""
    single_segment = descriptor & _SINGLE_SEGMENT_FLAG
    size_flag = descriptor >> 6
    size_field_bytes = (1 if single_segment else 0) if size_flag == 0 else (1 << size_flag)
    window_bytes = 0 if single_segment else 1
    return 5 + window_bytes + _DICTIONARY_ID_BYTES[descriptor & 3] + size_field_bytes, size_field_bytes


class _Torn(Exception):
    """Internal: EOF fell inside the current zstd frame."""


class _Frame:
    """The frame the walk is in: where it starts and ends, and how much of it the decoder has had."""

    __slots__ = ("number", "start", "first_line", "end", "fed_to", "decoder", "one_shot", "has_checksum")

    def __init__(self, number: int, start: int, first_line: int):
        self.number = number
        self.start = start  # file offset of its magic
        self.first_line = first_line  # the physical line number its first line would have
        self.end = start  # file offset just past what the walk has read of it
        self.fed_to = start  # bytes before this offset went to ``decoder``
        self.decoder: Any = None  # a streaming decoder, once the frame is fed in parts
        self.one_shot = False  # decode the complete frame in one verified call
        self.has_checksum = False


class _Buffer:
    """A sliding window over the input, addressed by absolute byte offsets."""

    __slots__ = ("buf", "start", "keep", "eof", "_read")

    def __init__(self, first: bytes, read: Callable[[int], bytes], start: int = 0):
        self.buf = bytearray(first)
        self.start = start  # absolute offset of buf[0]
        self.keep = start  # bytes before this absolute offset are no longer needed
        self.eof = False
        self._read = read  # read(wanted): at least one read's worth, or ``wanted`` bytes when more

    @property
    def end(self) -> int:
        return self.start + len(self.buf)

    def ensure(self, upto: int) -> bool:
        """Make bytes up to absolute offset ``upto`` available; False at EOF."""
        buf = self.buf
        while self.start + len(buf) < upto:
            if self.eof:
                return False
            drop = self.keep - self.start
            if drop > 0:
                del buf[:drop]
                self.start = self.keep
            chunk = self._read(upto - self.start - len(buf))
            if not chunk:
                self.eof = True
                return False
            buf += chunk
        return True

    def get(self, begin: int, end: int) -> bytearray:
        return self.buf[begin - self.start : end - self.start]

    def byte(self, offset: int) -> int:
        return self.buf[offset - self.start]

    def uint24(self, offset: int) -> int:
        """The little-endian 3-byte integer at ``offset`` (a block header)."""
        buf, at = self.buf, offset - self.start
        return buf[at] | buf[at + 1] << 8 | buf[at + 2] << 16

    def startswith(self, prefix: bytes, offset: int) -> bool:
        return self.buf.startswith(prefix, offset - self.start)

    def release(self, upto: int) -> None:
        self.keep = upto

    def find(self, needle: bytes, offset: int) -> int | None:
        """The absolute offset of the next ``needle`` at or after ``offset``, reading on as needed
        (what lies before it is released); ``None`` when the input ends first."""
        while True:
            self.ensure(offset + len(needle))
            at = self.buf.find(needle, max(0, offset - self.start))
            if at >= 0:
                return self.start + at
            if self.eof:
                return None
            offset = max(offset, self.end - len(needle) + 1)
            self.release(offset)
            self.ensure(self.end + 1)


def _zstd_message(exc: Exception) -> str:
    message = str(exc)
    for prefix in ("decompression error: ", "zstd decompressor error: "):
        if message.startswith(prefix):
            message = message[len(prefix) :]
    return message or type(exc).__name__
