"""How one log's bytes become physical lines (FORMAT.md §1.6–§1.8, §8.5).

:class:`LineReader` streams the log a :class:`~dshctl.source.paths.LogRef` names as ``(physical line
number, bytes)`` pairs with bounded memory: raw JSONL, or a concatenation of zstd frames (decoded by its
zstd half, :class:`~dshctl.source.zstd.ZstdFrames`), split on LF only, with the torn tail reported in
:class:`TornTail` instead of yielded. Nothing here parses JSON; the header and record layers sit on top.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from itertools import count
from typing import BinaryIO, Callable, Iterator

from dshctl.build import mypyc_attr
from dshctl.errors import SourceError, UsageError, os_error_reason
from dshctl.humanize import format_byte_limit
from dshctl.progress import unwatch, watch
from dshctl.settings import MAX_LINE_BYTES
from dshctl.source.ref import LogRef
from dshctl.source.zstd import ZSTD_MAGIC, ZstdFrames

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "Gap",
    "MAX_LINE_BYTES_ENV",
    "LineReader",
    "SpanReader",
    "TornTail",
    "max_line_bytes_from_env",
]

DEFAULT_MAX_LINE_BYTES: int = MAX_LINE_BYTES.default
"""The longest line when ``DSHCTL_MAX_LINE_BYTES`` is unset: the setting's declaration's (:mod:`dshctl.settings`)."""
MAX_LINE_BYTES_ENV: str = MAX_LINE_BYTES.name
READ_CHUNK = 1024 * 1024
"""Bytes asked for by one read of the log."""


@dataclass(frozen=True)
class TornTail:
    """The end of the input that was not a complete line (not corruption, §8.5)."""

    line: int  # physical line number the torn fragment would have had
    bytes: int  # size of the discarded fragment (decoded bytes)
    reason: str  # "no final LF" | "torn zstd frame"
    compressed_bytes: int | None = None  # bytes of the torn zstd frame in the file (zstd only)

    @property
    def torn_frame(self) -> str | None:
        """What a torn zstd frame is, in the one wording every command uses (its decodable part may end
        on a line boundary: then nothing decoded is lost, and the frame's size on disk is what is
        dropped); None for a raw log."""
        if self.compressed_bytes is None:
            return None
        return (f"the last zstd frame is incomplete ({self.compressed_bytes} bytes on disk, {self.bytes} decoded "
                "bytes after its last complete line)")


@dataclass(frozen=True)
class Gap:
    """Damage read past in salvage mode: the physical line number the next line read has, and what
    was lost."""

    line: int
    message: str


def max_line_bytes_from_env() -> int:
    """The longest line, :data:`dshctl.settings.MAX_LINE_BYTES` (its setting, else its default)."""
    return MAX_LINE_BYTES.read()


@mypyc_attr(allow_interpreted_subclasses=True)  # FollowingLineReader's _open and _read override it
class LineReader(ZstdFrames):
    """Iterate complete LF-terminated lines of one log with bounded memory.

    Yields ``(physical line number, line bytes without the LF)``; a CR stays
    part of the line. zstd is recognised by its magic, never by the suffix.
    Every concatenated frame is decoded: frames are located structurally
    (magic, frame header, block headers, checksum) the way dsh's scanner does,
    so a complete frame must decode and end on a line boundary, while an
    incomplete final frame is torn: the complete lines of its available prefix
    are yielded and the rest is reported in :attr:`torn_tail`.

    Memory stays near ``max_line_bytes``: each decompression call is fed at
    most ``max_line_bytes // 128 KiB`` (1..64) zstd blocks, so its output is
    bounded whatever the compression ratio, and a line is refused as soon as
    its buffered prefix exceeds the limit.

    Attributes (valid during and after iteration): ``compressed``, ``frames``
    (complete zstd frames decoded), ``first_frame_lines`` (lines that ended in
    frame 1, set once frame 1 is complete; ``None`` for raw input),
    ``torn_tail``, ``gaps`` (with ``salvage``: damaged frames read past, each a :class:`Gap`; the
    walk that locates damage resumes at the next frame magic instead of raising), ``bytes_read`` (file bytes), ``bytes_decoded`` (plain bytes),
    ``torn_frame_start_line`` (first physical line number that came from a torn
    final zstd frame; lines from there on are not in a complete frame, so damage
    there is a torn tail, not corruption). It is set when the tear is detected:
    before any line of the torn frame is yielded when that frame is at most one
    decompression call (``max_line_bytes // 128 KiB`` blocks, 8 MiB by default)
    and declares its size, as dsh's writer does; for larger or size-less frames
    earlier lines of the torn frame may already have been yielded, so decide
    after iteration in that case. A reader iterates once.
    """

    overlap = True
    """Whether a large zstd file may be decoded ahead by a reader thread (:mod:`dshctl.source.overlap`)."""

    def __init__(self, ref: LogRef, *, max_line_bytes: int | None = None, salvage: bool = False, lines_before: int = 0):
        """``lines_before``: the physical lines of the log before the first this reader reads (a part of a
        log read on its own, :mod:`dshctl.stats.split`, numbers its lines as the whole log's reading does)."""
        self.ref = ref
        self.salvage = salvage
        self.gaps: list[Gap] = []
        self.max_line_bytes = max_line_bytes_from_env() if max_line_bytes is None else max_line_bytes
        if self.max_line_bytes <= 0:
            raise UsageError("max_line_bytes must be positive")
        self.compressed = False
        self.frames = 0
        self.first_frame_lines: int | None = None
        self.torn_frame_start_line: int | None = None
        self.torn_tail: TornTail | None = None
        self.bytes_read = 0
        self.bytes_decoded = 0
        self._file: BinaryIO | None = None
        self._owns_file = False
        self._started = False
        # pending fragment of the current line, kept as pieces to avoid quadratic joins
        self._pending: list[bytes] = []
        self._pending_len = 0
        self._line = lines_before  # last physical line number yielded
        self.stop_ahead: Callable[[], None] | None = None
        """Set while a reader thread reads ahead (:mod:`dshctl.source.overlap`): ends it."""

    @property
    def last_line(self) -> int:
        """The physical line number of the last line given out (``lines_before`` until the first)."""
        return self._line

    # -- lifecycle ------------------------------------------------------------

    def close(self) -> None:
        unwatch(self)
        stop_ahead, self.stop_ahead = self.stop_ahead, None
        if stop_ahead is not None:  # the reader thread stops before the file it reads is closed
            stop_ahead()
        file, self._file = self._file, None
        if file is not None and self._owns_file:
            try:
                file.close()
            except OSError:
                pass

    def __enter__(self) -> "LineReader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        if self._started:
            raise RuntimeError("a LineReader can be iterated only once")
        self._started = True
        return self._iterate()

    def iter_lines(self) -> Iterator[tuple[int, bytes]]:
        """The same as ``iter(reader)``. A method, not ``iter_lines = __iter__``: compiled, that alias
        became an instance attribute whose default mypyc 2.4 looks up in the module's globals, failing
        and leaving a KeyError set, which surfaced later as an unrelated error."""
        return self.__iter__()

    # -- reading --------------------------------------------------------------

    def _error(self, message: str, line: int | None = None) -> SourceError:
        return SourceError(message, file=self.ref.display, line=line)

    def _open(self) -> BinaryIO:
        if self.ref.problem is not None:
            raise self.ref.problem
        if self.ref.member is not None:  # a log inside a web export ZIP (a file, or held from stdin): inflated as read
            from dshctl.source.zipped import open_member

            self._owns_file = True
            return open_member(self.ref)
        if self.ref.path is None:
            self._owns_file = False
            return sys.stdin.buffer
        try:
            file = open(self.ref.path, "rb")
        except OSError as exc:
            raise self._error(os_error_reason(exc)) from None
        self._owns_file = True
        return file

    def _read(self, wanted: int = 0) -> bytes:
        """The next bytes of the log: ``READ_CHUNK`` of them, or ``wanted`` when that is more (fewer
        near the end, or from a pipe); ``b""`` at the end."""
        try:
            data = self._file.read(max(READ_CHUNK, wanted))  # type: ignore[union-attr]
        except OSError as exc:
            raise self._error(f"read failed: {os_error_reason(exc)}") from None
        if data:
            self.bytes_read += len(data)
        return data or b""

    def _seek(self, offset: int) -> None:
        """Go back to file offset ``offset`` to read from there again."""
        try:
            self._file.seek(offset)  # type: ignore[union-attr]
        except OSError as exc:
            raise self._error(f"read failed: {os_error_reason(exc)}") from None
        self.bytes_read = offset

    def _iterate(self) -> Iterator[tuple[int, bytes]]:
        self._file = self._open()
        watch(self)  # a progress bar counts bytes_read while the log is read
        try:
            first = self._read()
            while 0 < len(first) < 4:  # a pipe may hand out fewer bytes than asked
                more = self._read()
                if not more:
                    break
                first += more
            if not first:
                raise self._error("empty file: not a dsh session log")
            if first[:4] == ZSTD_MAGIC or (len(first) < 4 and ZSTD_MAGIC.startswith(first)):
                self.compressed = True
                yield from self._zstd_lines(first)
            else:
                yield from self._raw_lines(first)
        finally:
            self.close()

    def _zstd_lines(self, first: bytes) -> Iterator[tuple[int, bytes]]:
        """The fast path for a file, which can seek back to re-read a frame with the walk; the walk
        for standard input."""
        if self.ref.path is not None and self._file.seekable():  # type: ignore[union-attr]
            from dshctl.source.overlap import overlap_applies, overlapped_lines

            if overlap_applies(self):
                return overlapped_lines(self, first)
            return self._zstd_fast(first)
        return self._zstd_walk(first)

    # -- line splitting ---------------------------------------------------------

    def _split(self, data: bytes) -> list[bytes]:
        """Complete lines ending in ``data``; the unterminated rest joins the pending fragment."""
        if not data:
            return []
        self.bytes_decoded += len(data)
        parts = data.split(b"\n")
        tail = parts.pop()
        if not parts:
            self._pending.append(tail)
            self._pending_len += len(tail)
            if self._pending_len > self.max_line_bytes:
                raise self._too_long(self._line + 1)
            return parts
        if self._pending:
            self._pending.append(parts[0])
            parts[0] = b"".join(self._pending)
            if len(parts[0]) > self.max_line_bytes:
                raise self._too_long(self._line + 1)
        if len(data) > self.max_line_bytes:
            for offset, line in enumerate(parts):
                if len(line) > self.max_line_bytes:
                    raise self._too_long(self._line + 1 + offset)
        if tail:
            self._pending = [tail]
            self._pending_len = len(tail)
            if self._pending_len > self.max_line_bytes:
                raise self._too_long(self._line + len(parts) + 1)
        else:
            self._pending = []
            self._pending_len = 0
        return parts

    def _numbered(self, lines: list[bytes]) -> Iterator[tuple[int, bytes]]:
        """``lines`` with the physical line numbers that follow the last one given out."""
        start = self._line + 1
        self._line += len(lines)
        return zip(count(start), lines)

    def _tear(self, reason: str, compressed_bytes: int | None = None) -> None:
        """The pending fragment is the torn tail: report it and drop it."""
        self.torn_tail = TornTail(
            line=self._line + 1, bytes=self._pending_len, reason=reason, compressed_bytes=compressed_bytes
        )
        self._pending = []
        self._pending_len = 0

    def _gap(self, message: str, line: int) -> None:
        """Salvage: damage read past; the lines it held are lost, the reading goes on."""
        self.gaps.append(Gap(line=line, message=message))

    def _too_long(self, line: int) -> SourceError:
        return self._error(
            f"the line is longer than {format_byte_limit(self.max_line_bytes)} "
            f"(the limit is {self.max_line_bytes} bytes); "
            f"set {MAX_LINE_BYTES_ENV} to raise the limit",
            line=line,
        )

    def _raw_lines(self, first: bytes) -> Iterator[tuple[int, bytes]]:
        data = first
        while data:
            yield from self._numbered(self._split(data))
            data = self._read()
        if self._pending_len:
            self._tear("no final LF")


class SpanReader(LineReader):
    """A :class:`LineReader` of the bytes ``start..end`` of a log file, as if they were the whole file
    (offsets relative to ``start``): a part of a big log read on its own (:mod:`dshctl.stats.split`), its
    lines numbered after ``lines_before``. The reader thread (:mod:`dshctl.source.overlap`) reads the same
    span: its batched decoding costs less CPU than the fast path's frame-by-frame calls; ``overlap``
    False reads without one."""

    def __init__(self, ref: LogRef, start: int, end: int, *, overlap: bool = True, lines_before: int = 0):
        super().__init__(ref, lines_before=lines_before)
        self.span = (start, end)
        self.overlap = overlap

    def _open(self) -> BinaryIO:
        file = super()._open()
        file.seek(self.span[0])
        return file

    def _read(self, wanted: int = 0) -> bytes:
        start, end = self.span
        left = end - start - self.bytes_read
        if left <= 0:
            return b""
        data = self._file.read(min(max(READ_CHUNK, wanted), left))  # type: ignore[union-attr]
        self.bytes_read += len(data)
        return data

    def _seek(self, offset: int) -> None:
        self._file.seek(self.span[0] + offset)  # type: ignore[union-attr]
        self.bytes_read = offset
