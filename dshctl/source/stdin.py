"""Standard input as a PATH (``-``): a log streamed as it arrives, or a dsh Web UI export ZIP held whole.

A ZIP names its members in a central directory at its end, so an export on standard input cannot be
streamed: :func:`stdin_archive` tells one by its first bytes, looked at without consuming them (the
buffer's ``peek``, or a read and a seek back), and only then reads standard input whole into a
:class:`~dshctl.source.zipped.HeldArchive`: in memory up to :data:`IN_MEMORY_BYTES`, beyond that in an
unlinked temporary file (``$TMPDIR``), never more than :data:`MAX_ARCHIVE_BYTES` (then one error, status 2,
naming the bound); standard input redirected from a ZIP file is that file, read in place. Members are
never unpacked. A zstd or plain JSONL log on standard input is left
unread here and streamed by the line reader as it arrives.

Standard input is read once: the held archive is kept while ``sys.stdin`` is the stream it came from, so a
second ``-`` (``-!member``) names the same archive. One slot holds it: when ``sys.stdin`` changes (a test
runner, a library caller swapping it), the next ZIP read replaces the last, which is freed.
"""

from __future__ import annotations

import sys
from typing import BinaryIO

from dshctl.errors import SourceError, os_error_reason
from dshctl.humanize import format_byte_limit
from dshctl.source.zipped import ZIP_MAGIC, HeldArchive

__all__ = ["IN_MEMORY_BYTES", "MAX_ARCHIVE_BYTES", "STDIN", "stdin_archive", "stdin_holds_zip"]

STDIN = "<stdin>"
IN_MEMORY_BYTES = 64 << 20
"""An export ZIP on standard input up to this size is held in memory; a larger one in a temporary file."""
MAX_ARCHIVE_BYTES = 4 << 30
"""The largest export ZIP read from standard input (a ZIP needs ZIP64 past 4 GiB; a larger file is
read as a PATH, in place)."""
_CHUNK = 1 << 20

_held: tuple[BinaryIO, HeldArchive | SourceError] | None = None
"""The archive read from the current standard input stream, or why it could not be read, kept with the
stream it came from: it is read once, however often ``-`` is resolved. One slot, never one per stream: an
archive may be 64 MiB in memory, and a process that swaps ``sys.stdin`` would keep every one."""


def stdin_archive() -> HeldArchive | None:
    """The export ZIP on standard input, read whole (once per stream); None when standard input is no
    ZIP (then nothing of it was consumed) or a terminal."""
    global _held
    stream = _stdin_bytes()
    if stream is None:
        return None
    held = _held
    if held is None or held[0] is not stream:
        if not _starts_as_zip(stream):
            return None
        _held = None  # the last stream's archive goes before this one is read
        try:
            held = (stream, HeldArchive(_in_place(stream) or _spool(stream), STDIN))
        except SourceError as exc:
            held = (stream, exc)
        _held = held
    if isinstance(held[1], SourceError):
        raise held[1]
    return held[1]


def stdin_holds_zip() -> bool:
    """Whether standard input starts as a ZIP does, looked at without consuming or holding it (a command
    refusing it need not read it whole)."""
    if _held is not None and _held[0] is _stdin_bytes():
        return True
    stream = _stdin_bytes()
    return stream is not None and _starts_as_zip(stream)


def _stdin_bytes() -> BinaryIO | None:
    stdin = sys.stdin
    if stdin is None:
        return None
    stream = getattr(stdin, "buffer", stdin)
    try:
        if stdin.isatty():
            return None  # nobody types a ZIP; looking would wait for a line
    except (OSError, ValueError, AttributeError):
        pass
    return stream


def _starts_as_zip(stream: BinaryIO) -> bool:
    """Whether the stream starts with a ZIP's magic, read without consuming it. A pipe may hand out
    fewer than 4 bytes at first: a proper prefix of the magic counts (a log starts with ``{`` or
    zstd's magic, never ``P``), and the archive read tells."""
    first = _peek(stream)
    if first is None:
        return False
    if len(first) >= 4:
        return first[:4] in ZIP_MAGIC
    return bool(first) and any(magic.startswith(first) for magic in ZIP_MAGIC)


def _peek(stream: BinaryIO) -> bytes | None:
    try:
        peek = getattr(stream, "peek", None)
        if peek is not None:
            return peek(4)[:4]
        if stream.seekable():
            start = stream.tell()
            first = stream.read(4)
            stream.seek(start)
            return first
    except (OSError, ValueError):
        return None
    return None  # neither: standard input is left to stream, as it always was


def _in_place(stream: BinaryIO) -> BinaryIO | None:
    """Standard input redirected from a whole ZIP file (``< x.zip``): the file itself, read in place as a
    PATH is (no copy, no bound); None for a pipe, or a file read from elsewhere than its start."""
    import os
    import stat

    try:
        descriptor = stream.fileno()
        if not stat.S_ISREG(os.fstat(descriptor).st_mode) or stream.tell() != 0:
            return None
        return os.fdopen(os.dup(descriptor), "rb")
    except (OSError, ValueError, AttributeError):
        return None


def _spool(stream: BinaryIO) -> BinaryIO:
    """All of ``stream``, in memory up to :data:`IN_MEMORY_BYTES`, else in an unlinked temporary file."""
    import tempfile

    spool = tempfile.SpooledTemporaryFile(max_size=IN_MEMORY_BYTES, prefix="dshctl-stdin-")
    total = 0
    try:
        while True:
            chunk = stream.read(_CHUNK)
            if not chunk:
                break
            total += len(chunk)
            if total > MAX_ARCHIVE_BYTES:
                raise SourceError(
                    f"a ZIP on standard input larger than {format_byte_limit(MAX_ARCHIVE_BYTES)} is not read "
                    "(it must be held whole: its directory is at its end); pass the file as a PATH", file=STDIN)
            spool.write(chunk)
        spool.seek(0)
    except OSError as exc:
        spool.close()
        raise SourceError(f"cannot hold the ZIP read from standard input: {os_error_reason(exc)}", file=STDIN) from None
    except BaseException:
        spool.close()
        raise
    return spool  # type: ignore[return-value]
