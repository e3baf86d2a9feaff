"""Decompression off the critical path: a reader thread decodes the next zstd frames while the caller
decodes and folds the lines of the previous ones (issue #25, "Overlap").

python-zstandard releases the GIL while it decompresses, but one call per frame would not overlap: a
thread that gives the GIL up for a few microseconds waits up to the switch interval (5 ms) to get it
back while the main thread runs Python, so it would decode one frame per 5 ms. The thread therefore
decodes a *batch* of frames (about :data:`BATCH_DECODED` bytes of output) in one call
(``multi_decompress_to_buffer``, each frame its own segment, cut at the zstd magic numbers), and its
Python work per frame is one pass over the frame's header and block headers (about 0.5 µs).

It is only a faster way to the fast path's result (:meth:`~dshctl.source.zstd.ZstdFrames._zstd_fast`),
never a third set of rules. A batch holds only frames the fast path takes as they are: no reserved or
unused header bit, a window a streaming decoder accepts, a declared size from 1 byte to the bound of one
decompression call (and the line limit), blocks (RFC 8878 §3.1.1.2) and checksum that end exactly where
the next magic number starts (libzstd would not tell: it ignores bytes after a frame), decoded to that
size, each frame ending on an LF. A run that fails is retried in halves; a frame left alone is decoded
as the fast path decodes it (a magic number inside compressed data splits one frame in two segments:
that frame costs a second look, the rest of the log does not). At the first frame the thread cannot
vouch for it stops, and the reader goes on from that frame's offset with the structural walk, exactly
where the fast path hands over: errors, torn tails and salvage come from the walk, unchanged. Frame 1
(the header's) is told apart as the fast path tells it; other frames are counted after their batch.
"""

from __future__ import annotations

import os
import queue
import re
import threading
from array import array
from itertools import accumulate, count, islice
from operator import itemgetter
from typing import BinaryIO, Callable, Iterator, NamedTuple, Protocol

import zstandard

from dshctl.errors import SourceError, os_error_reason
from dshctl.source.ref import LogRef
from dshctl.source.zstd import ZSTD_BLOCK_MAX, ZSTD_MAGIC, frame_header_layout

__all__ = ["OVERLAP_MIN_BYTES", "overlap_applies", "overlapped_lines"]

OVERLAP_MIN_BYTES = 4 << 20
"""Logs smaller than this (on disk) are read by the fast path alone: a thread would not pay for itself."""
READ_BYTES = 512 << 10
"""Compressed bytes the thread reads at a time."""
BATCH_DECODED = 1 << 20
"""About this many decoded bytes make one batch (the main thread splits them in one call)."""
QUEUE_BATCHES = 2
"""Batches decoded ahead of the main thread: memory stays a few batches whatever the log's size."""
CARRY_MAX = 64 << 20
"""A frame whose bytes run on this far without a boundary is left to the walk."""

_HEADER_BYTES = 18
_ZSTD_MAGIC_BYTE = 0x28
_LF = 0x0A
_MAGIC = re.compile(re.escape(ZSTD_MAGIC))
"""A literal: a fast search. Skippable and legacy frames need no boundary of their own: the blocks of
the frame before them would not end where its segment does."""
_HEADER_SIZES = [frame_header_layout(descriptor)[0] for descriptor in range(256)]
_SIZE_FIELD_BYTES = [frame_header_layout(descriptor)[1] for descriptor in range(256)]
_WINDOW_BYTE_MAX = 0x88
"""The largest window descriptor a streaming decoder accepts (2**27 bytes, libzstd's default limit; a
one-shot decode would accept more)."""
_DONE, _HANDOFF, _MORE = 0, 1, 2


class LineReader(Protocol):
    """What the thread's caller uses of :class:`~dshctl.source.lines.LineReader` (which imports this
    module: no import back)."""

    overlap: bool
    ref: LogRef
    _file: BinaryIO | None
    _line: int
    frames: int
    first_frame_lines: int | None
    bytes_read: int
    bytes_decoded: int
    max_line_bytes: int
    stop_ahead: Callable[[], None] | None

    def _blocks_per_call(self) -> int: ...
    def _error(self, message: str, line: int | None = None) -> SourceError: ...
    def _frame_lines(self, decoded: bytes) -> Iterator[tuple[int, bytes]]: ...
    def _end_frame(self, frame_no: int) -> None: ...
    def _walk_from(self, frame_start: int, frame_no: int) -> Iterator[tuple[int, bytes]]: ...


def overlap_applies(reader: LineReader) -> bool:
    """Whether ``reader`` reads its zstd log through the reader thread: a plain file (``pread``-able) at
    least :data:`OVERLAP_MIN_BYTES` long, read by a reader that allows it (a followed log does not)."""
    if not reader.overlap or reader.ref.path is None or reader.ref.member is not None or reader._file is None:
        return False
    try:
        fd = reader._file.fileno()  # type: ignore[union-attr]
        return os.fstat(fd).st_size >= OVERLAP_MIN_BYTES and reader._file.seekable()  # type: ignore[union-attr]
    except (OSError, ValueError, AttributeError):
        return False


class _Batch(NamedTuple):
    decoded: bytes
    frames: int
    first_frame_bytes: int  # decoded bytes of the batch's first frame
    end: int  # file offset just past the batch


class _Handoff(NamedTuple):
    offset: int  # file offset of the first frame the thread could not vouch for (or the end of the file)
    frames_before: int


class _Failed(NamedTuple):
    error: BaseException  # an OSError reading the file, or anything else the thread met


_Item = _Batch | _Handoff | _Failed


def overlapped_lines(reader: LineReader, first: bytes) -> Iterator[tuple[int, bytes]]:
    """The fast path's lines, decoded by a reader thread a few batches ahead; from the first frame it
    cannot vouch for on (damage, a torn or unsized frame, the end), the walk's."""
    prefetch = _Prefetch(reader._file.fileno(), first, reader)  # type: ignore[union-attr]
    prefetch.start()
    reader.stop_ahead = prefetch.stop
    try:
        while True:
            item = prefetch.next()
            if isinstance(item, _Batch):
                reader.bytes_read = item.end
                decoded = item.decoded
                if len(decoded) > reader.max_line_bytes:
                    # one frame larger than the line limit (the thread sends it alone): the fast
                    # path's own checks, line by line
                    yield from reader._frame_lines(decoded)
                    reader._end_frame(reader.frames + 1)
                    continue
                reader.bytes_decoded += len(decoded)
                lines = decoded.split(b"\n")
                lines.pop()
                start = reader._line + 1
                reader._line += len(lines)
                if reader.frames == 0:
                    # frame 1 (the header's) is told apart, as the fast path tells it
                    head = decoded.count(b"\n", 0, item.first_frame_bytes)
                    yield from zip(count(start), lines[:head])
                    reader.frames = 1
                    reader.first_frame_lines = start + head - 1
                    yield from zip(count(start + head), lines[head:])
                    reader.frames += item.frames - 1
                else:
                    yield from zip(count(start), lines)
                    reader.frames += item.frames
            elif isinstance(item, _Handoff):
                prefetch.stop()
                # the walk from there: what the thread could not vouch for, or the end of the file
                yield from reader._walk_from(item.offset, item.frames_before + 1)
                return
            else:
                error = item.error
                if isinstance(error, OSError):
                    raise reader._error(f"read failed: {os_error_reason(error)}") from None
                raise error
    finally:
        reader.stop_ahead = None
        prefetch.stop()


class _Prefetch:
    """The reader thread and its bounded queue of decoded batches."""

    def __init__(self, fd: int, first: bytes, reader: LineReader):
        self.fd = fd
        # a reader of a part of the file (:mod:`dshctl.stats.split`) reads the bytes of its span as the whole
        self.base, end = getattr(reader, "span", None) or (0, os.fstat(fd).st_size)
        self.size = end - self.base
        self.first = first
        self.out_bound = reader._blocks_per_call() * ZSTD_BLOCK_MAX  # the fast path's bound
        self.line_limit = reader.max_line_bytes
        self.queue: queue.Queue[_Item] = queue.Queue(QUEUE_BATCHES)
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._run, name="dshctl-zstd-prefetch", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def next(self) -> _Item:
        while True:
            try:
                return self.queue.get(timeout=0.5)
            except queue.Empty:
                if not self.thread.is_alive() and self.queue.empty():  # never: the thread always says why it ended
                    return _Failed(RuntimeError("the zstd reader thread ended without a word"))

    def stop(self) -> None:
        """End the thread (the caller stopped, or an error): it leaves at its next put."""
        self.stopping.set()
        while self.thread.is_alive():
            try:
                self.queue.get_nowait()
            except queue.Empty:
                pass
            self.thread.join(0.01)

    def _put(self, item: _Item) -> bool:
        while not self.stopping.is_set():
            try:
                self.queue.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    # -- the thread ---------------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            self._decode_all()
        except BaseException as exc:  # told to the main thread, which raises it there
            self._put(_Failed(exc))

    def _decode_all(self) -> None:
        data = self.first
        offset = 0  # file offset of data[0]
        read_to = len(data)
        frames = 0
        decompress = zstandard.ZstdDecompressor().multi_decompress_to_buffer
        want_more = False
        while not self.stopping.is_set():
            if read_to < self.size and (want_more or len(data) < READ_BYTES):
                if len(data) > CARRY_MAX:
                    self._put(_Handoff(offset, frames))
                    return
                more = os.pread(self.fd, min(READ_BYTES, self.size - read_to), self.base + read_to)
                if more:
                    data = data + more if data else more
                    read_to += len(more)
                    want_more = False
                    continue
                self.size = read_to  # the file shrank: the walk reports what is there
            at_eof = read_to >= self.size
            starts = _boundaries(data)
            if not data or not starts or starts[0] != 0:
                self._put(_Handoff(offset, frames))  # the end, or no frame where one must start: the walk says why
                return
            if at_eof:
                starts.append(len(data))
            elif len(starts) < 2:
                want_more = True  # one frame larger than what was read
                continue
            else:
                starts.pop()  # the last segment may not be whole yet
            done, batches, status = self._decode_segments(data, starts, decompress, at_eof)
            for batch in batches:
                frames += batch.frames
                if not self._put(batch._replace(end=offset + batch.end)):
                    return
            if status is _HANDOFF:
                self._put(_Handoff(offset + done, frames))
                return
            want_more = status is _MORE
            data = data[done:]
            offset += done

    def _decode_segments(self, data: bytes, starts: list[int], decompress, at_eof: bool) -> tuple[int, list[_Batch], int]:
        """The batches of the whole segments between ``starts`` (ends relative to ``data``), how far they
        reach, and what comes there: more segments (:data:`_DONE`), a frame to hand over to the walk
        (:data:`_HANDOFF`), or a frame that needs more of the file (:data:`_MORE`)."""
        sizes = self._declared_sizes(data, starts)
        batches: list[_Batch] = []
        position = 0  # index into starts of the next frame
        total = len(starts) - 1
        bound = min(self.out_bound, self.line_limit)
        while position < total:
            end = position
            budget = 0
            while end < total and budget < BATCH_DECODED and 0 < sizes[end] <= bound:
                budget += sizes[end]
                end += 1
            decoded = None
            while end > position:
                decoded = self._decode_run(data, starts, sizes, position, end, decompress)
                if decoded is not None or end - position == 1:
                    break
                end = position + (end - position) // 2  # some segment is not a whole frame: halves
            if decoded is not None:
                batches.append(_Batch(decoded, end - position, sizes[position], starts[end]))
                position = end
                continue
            # one frame the batches cannot take as it is: decoded as the fast path decodes it
            one = self._one_frame(data, starts[position], at_eof)
            if one is None:
                return starts[position], batches, _HANDOFF
            if isinstance(one, int):
                return starts[position], batches, _MORE
            frame_end, frame = one
            batches.append(_Batch(frame, 1, len(frame), frame_end))
            while position < total and starts[position] < frame_end:
                position += 1
            if starts[position] != frame_end:
                # bytes after the frame that no boundary starts: the walk reports them
                return frame_end, batches, _HANDOFF if position < total or at_eof else _DONE
        return starts[total], batches, _DONE

    def _declared_sizes(self, data: bytes, starts: list[int]) -> list[int]:
        """Each segment's declared frame size, or 0 where it is not a frame the batches take as it is:
        a reserved or unused header bit, a window larger than a streaming decoder accepts, no declared
        size, or blocks (RFC 8878 §3.1.1.2) that do not end where the segment does (the decoder would
        not say: it ignores what follows a frame). The loop is the thread's Python work per frame."""
        sizes: list[int] = []
        add = sizes.append
        header_sizes = _HEADER_SIZES
        size_field_bytes = _SIZE_FIELD_BYTES
        window_max = _WINDOW_BYTE_MAX
        for start, end in zip(starts, islice(starts, 1, None)):
            if end - start < 12:
                add(0)
                continue
            descriptor = data[start + 4]
            field = size_field_bytes[descriptor]
            if descriptor & 0x18 or not field or not descriptor & 0x20 and data[start + 5] > window_max:
                add(0)
                continue
            at = start + header_sizes[descriptor]
            block = data[at] | data[at + 1] << 8 | data[at + 2] << 16
            if block & 1 and block & 6 != 6:  # one block, the common case
                blocks_end = at + (4 if block & 6 == 2 else 3 + (block >> 3))
                if block >> 3 > ZSTD_BLOCK_MAX:
                    blocks_end = -1
            else:
                blocks_end = _blocks_end(data, at, end)
            if blocks_end + (4 if descriptor & 0x04 else 0) != end:
                add(0)
            elif field == 1:
                add(data[at - 1])
            elif field == 2:
                add((data[at - 2] | data[at - 1] << 8) + 256)
            else:
                add(int.from_bytes(data[at - field : at], "little"))
        return sizes

    def _decode_run(self, data: bytes, starts: list[int], sizes: list[int], begin: int, end: int, decompress) -> bytes | None:
        """Segments ``begin..end`` decoded in one call, each on its own; ``None`` when one is not a whole
        frame of its declared size or does not end on an LF."""
        segments = array("Q")
        for index in range(begin, end):
            segments.append(starts[index])
            segments.append(starts[index + 1] - starts[index])
        try:
            decoded = decompress(
                zstandard.BufferWithSegments(data, segments.tobytes()), decompressed_sizes=_sizes_bytes(sizes, begin, end)
            )
        except zstandard.ZstdError:
            return None
        joined = b"".join(decoded)
        ends = list(accumulate(sizes[begin:end]))
        if len(joined) != ends[-1]:
            return None
        last_bytes = itemgetter(*[stop - 1 for stop in ends])(joined) if len(ends) > 1 else (joined[-1],)
        if last_bytes.count(_LF) != len(ends):
            return None
        return joined

    def _one_frame(self, data: bytes, start: int, at_eof: bool) -> tuple[int, bytes] | int | None:
        """The frame at ``start`` decoded as the fast path decodes it (its end found by the decoder):
        ``(its end, its bytes)``; :data:`_MORE` when it runs past what was read; ``None`` to hand it
        to the walk."""
        if len(data) - start < _HEADER_BYTES and not at_eof:
            return _MORE
        if data[start] != _ZSTD_MAGIC_BYTE or len(data) - start < 5 or data[start + 4] & 0x18:
            return None
        view = memoryview(data)
        try:
            size = zstandard.frame_content_size(view[start : start + _HEADER_BYTES])
        except zstandard.ZstdError:
            return None
        if not 0 <= size <= self.out_bound:
            return None
        decoder = zstandard.ZstdDecompressor().decompressobj()
        try:
            decoded = decoder.decompress(view[start:])
        except zstandard.ZstdError:
            return None
        if not decoder.eof:
            return None if at_eof else _MORE
        if len(decoded) != size or size and not decoded.endswith(b"\n"):
            return None
        return len(data) - len(decoder.unused_data), decoded


def _boundaries(data: bytes) -> list[int]:
    """Every offset in ``data`` where a zstd frame could start (its magic number), in order."""
    return [match.start() for match in _MAGIC.finditer(data)]


def _blocks_end(data: bytes, at: int, end: int) -> int:
    """Where the blocks from ``at`` end (after the last block), or -1 when they do not end before
    ``end``, hold a reserved block type or a block larger than 128 KiB."""
    while at + 3 <= end:
        header = data[at] | data[at + 1] << 8 | data[at + 2] << 16
        kind = header >> 1 & 3
        if kind == 3 or header >> 3 > ZSTD_BLOCK_MAX:
            return -1
        at += 4 if kind == 1 else 3 + (header >> 3)
        if header & 1:
            return at
    return -1


def _sizes_bytes(sizes: list[int], begin: int, end: int) -> bytes:
    return array("Q", sizes[begin:end]).tobytes()
