"""A log's header line read alone: its session id, for looking a session up by the id its header holds
where its folder's name does not say it (:func:`dshctl.source.paths.find_session`).

Bounded as dsh's own listing reads a header (FORMAT.md §1.4: the first line of a raw log, the first frame
of a zstd one): one line of at most :data:`HEADER_LINE_BYTES`, read and decoded without a reader thread;
nothing past it is read.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import msgspec

from dshctl.errors import DshctlError
from dshctl.source.lines import LineReader
from dshctl.source.ref import LogRef

__all__ = ["HEADER_LINE_BYTES", "header_id"]

HEADER_LINE_BYTES = 1 << 20
"""The longest header line looked at (dsh's headers are well under a KiB): a longer first line names no id."""

_decode = msgspec.json.Decoder().decode


class _HeaderLineReader(LineReader):
    """A reader of the first line alone: no reader thread decoding ahead what is never read."""

    overlap = False


def header_id(log: Path) -> str | None:
    """The id the header line of ``log`` holds (a session header's non-empty string ``id``); None when
    its first line cannot be read within :data:`HEADER_LINE_BYTES`, is not JSON, or is no session header,
    and when ``log`` is no regular file (a FIFO named as a log would block its opening)."""
    try:
        if not stat.S_ISREG(os.stat(log).st_mode):
            return None
    except (OSError, ValueError):
        return None
    reader = _HeaderLineReader(LogRef(path=log, display=str(log), generation_from_name=None, session_dir=None),
                               max_line_bytes=HEADER_LINE_BYTES)
    lines = iter(reader)
    try:
        line = next(lines, None)
    except (DshctlError, OSError, MemoryError):
        return None
    finally:
        lines.close()  # type: ignore[attr-defined]  # a generator: its reading ends, the file is closed
        reader.close()
    if line is None:
        return None
    try:
        header = _decode(line[1])
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(header, dict) or header.get("type") != "session":
        return None
    session_id = header.get("id")
    return session_id if isinstance(session_id, str) and session_id else None
