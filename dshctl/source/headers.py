"""A log's header line read alone: its session id, for looking a session up by the id its header holds
where its folder's name does not say it (:func:`dshctl.source.paths.find_session`).

Bounded as dsh's own listing reads a header (FORMAT.md §1.4: the first line of a raw log, the first frame
of a zstd one): one line of at most :data:`HEADER_LINE_BYTES`, read :data:`HEADER_READ_BYTES` at a time
and, from a zstd log, decoded that many bytes at a time; nothing past its line feed is read or decoded
beyond the step that holds it (a log whose one frame holds it all is not decoded whole).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

import msgspec
import zstandard

from dshctl.source.zstd import ZSTD_MAGIC

__all__ = ["HEADER_LINE_BYTES", "HEADER_READ_BYTES", "header_id"]

HEADER_LINE_BYTES = 1 << 20
"""The longest header line looked at (dsh's headers are well under a KiB): a longer first line names no id."""
HEADER_READ_BYTES = 8 << 10
"""Bytes read (and, from a zstd log, decoded) in one step while the header line is looked for."""

_decode = msgspec.json.Decoder().decode


class _HeaderLineReader:
    """The first line of one log, read in :data:`HEADER_READ_BYTES` steps (decoded so from its first zstd
    frame) up to :data:`HEADER_LINE_BYTES`; ``bytes_read`` and ``bytes_decoded`` count what it took."""

    def __init__(self, file: BinaryIO):
        self._file = file
        self.bytes_read = 0
        self.bytes_decoded = 0

    def _read(self) -> bytes:
        data = self._file.read(HEADER_READ_BYTES)
        self.bytes_read += len(data)
        return data

    def first_line(self) -> bytes | None:
        """The first line without its LF; None when none ends within the bound, or the frame is damaged."""
        first = self._read()
        if first[:4] != ZSTD_MAGIC:
            return self._line(first, self._read)
        frame = zstandard.ZstdDecompressor().stream_reader(_Prefixed(first, self), read_size=HEADER_READ_BYTES,
                                                           read_across_frames=False)
        try:
            return self._line(frame.read(HEADER_READ_BYTES), lambda: frame.read(HEADER_READ_BYTES))
        except zstandard.ZstdError:
            return None

    def _line(self, data: bytes, more) -> bytes | None:
        parts: list[bytes] = []
        held = 0
        while data:
            self.bytes_decoded += len(data)
            end = data.find(b"\n")
            if end >= 0:
                parts.append(data[:end])
                held += end
                return b"".join(parts) if held <= HEADER_LINE_BYTES else None
            parts.append(data)
            held += len(data)
            if held > HEADER_LINE_BYTES:
                return None
            data = more()
        return None  # no line feed: a torn or empty first line


class _Prefixed:
    """A file read from again after its first bytes were: those, then the rest (for the zstd decoder)."""

    def __init__(self, first: bytes, reader: _HeaderLineReader):
        self._first = first
        self._reader = reader

    def read(self, size: int = -1) -> bytes:
        if self._first:
            data, self._first = self._first, b""
            return data
        return self._reader._read()


def header_id(log: Path) -> str | None:
    """The id the header line of ``log`` holds (a session header's non-empty string ``id``); None when
    its first line cannot be read within :data:`HEADER_LINE_BYTES`, is not JSON, or is no session header,
    and when ``log`` is no regular file (a FIFO named as a log would block its opening)."""
    try:
        if not stat.S_ISREG(os.stat(log).st_mode):
            return None
    except (OSError, ValueError):
        return None
    try:
        with open(log, "rb") as file:
            line = _HeaderLineReader(file).first_line()
    except (OSError, ValueError, MemoryError):
        return None
    if line is None:
        return None
    try:
        header = _decode(line)
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(header, dict) or header.get("type") != "session":
        return None
    session_id = header.get("id")
    return session_id if isinstance(session_id, str) and session_id else None
