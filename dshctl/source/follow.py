"""A log that is still being written: :class:`FollowingLineReader`, a :class:`LineReader` whose end of
file means "not yet".

The line and frame logic is the plain reader's, unchanged: only :meth:`FollowingLineReader._read` differs.
At the end of the file it does not return ``b""`` but waits (polling the file's size every
``POLL_SECONDS``) until more bytes land, so a half-written last line or zstd frame is simply not finished
yet: the raw splitter keeps it pending and the zstd paths keep waiting for the rest of the frame, and no
line is yielded before it is complete (an LF for raw logs, the whole frame for zstd ones, FORMAT §1.5-§1.7).

Following ends when :attr:`FollowStop.requested` is set (Ctrl-C): from then on ``_read`` is the plain
reader's again, so the log ends exactly as ``dshctl cat`` would read the file as it stands, torn tail
included. While waiting, each poll also checks that the file is still the one being read (same inode, not
shorter: else :class:`FollowError`) and, for a session directory, whether dsh published a higher
generation (:class:`LogMigrated`). The file is only ever opened for reading.

dsh only appends, so a file rewritten in place (``cp other.jsonl LOG``: same inode) is no growth. The reader
keeps the first ``HEAD_BYTES`` of the file (the header line) and the ``WINDOW_BYTES`` just before where it
waits; when bytes
arrive after a wait, or the file's size or modification time changes while it waits, it reads both again:
if either differs, the log was rewritten (:class:`FollowError`). A rewrite that leaves both windows as
they were (the same header and the same bytes before the follow position) cannot be told from growth,
and is read as growth.
"""

from __future__ import annotations

import os
import time
from typing import Callable

from dshctl.errors import EXIT_FINDINGS, DshctlError, os_error_reason
from dshctl.source.lines import LineReader
from dshctl.source.paths import LogRef, session_log

__all__ = ["POLL_SECONDS", "FollowError", "FollowStop", "FollowingLineReader", "LogMigrated"]

POLL_SECONDS = 0.1
"""How often a waiting reader looks at the file: a frame is seen at most this long after it lands."""
HEAD_BYTES = 4096
"""How much of the start of the file (the header line, and a zstd log's first frame) is compared to tell
growth from a rewrite: one page, read only when the file changes."""
WINDOW_BYTES = 64
"""How many bytes before the follow position are compared to tell growth from a rewrite."""
MIGRATION_CHECK_SECONDS = 0.5
"""How often a waiting reader of a session directory looks for a higher generation."""


class FollowError(DshctlError):
    """The followed log shrank, was replaced or removed: what was printed no longer describes it."""

    exit_code = EXIT_FINDINGS


class LogMigrated(Exception):
    """dsh published a higher generation of the followed session (not a DshctlError, so it passes the
    reader's error locating untouched); ``ref`` is the new log."""

    def __init__(self, ref: LogRef):
        super().__init__(ref.display)
        self.ref = ref


class FollowStop:
    """Whether following should end (set by the SIGINT handler; read between polls)."""

    __slots__ = ("requested",)

    def __init__(self) -> None:
        self.requested = False


class FollowingLineReader(LineReader):
    """:class:`LineReader` over a file that grows: end of file waits for more instead of ending.

    ``on_idle`` is called each time the reader has caught up with the file, before it sleeps (the
    commands flush their output or redraw there)."""

    overlap = False  # the log grows while it is read: no reading ahead of the end seen so far

    def __init__(
        self,
        ref: LogRef,
        stop: FollowStop,
        *,
        on_idle: Callable[[], None] | None = None,
        poll_seconds: float = POLL_SECONDS,
        max_line_bytes: int | None = None,
    ):
        if ref.member is not None:  # first: a ZIP on standard input has no path either, but is refused as a ZIP
            raise DshctlError("--follow reads a log dsh is writing, not a session export ZIP", file=ref.display)
        if ref.path is None:
            raise DshctlError("--follow reads a log file or directory, not standard input", file=ref.display)
        super().__init__(ref, max_line_bytes=max_line_bytes)
        self.stop = stop
        self.on_idle = on_idle
        self.poll_seconds = poll_seconds
        self._identity: tuple[int, int] | None = None
        self._next_migration_check = 0.0
        self._kept: tuple[int, bytes, bytes] | None = None
        """Where the reader waits, and the file's first bytes and those before that point, as read."""
        self._stamp: tuple[int, int] | None = None
        """The file's size and modification time when ``_kept`` was last confirmed."""

    def _open(self):
        file = super()._open()
        try:
            status = os.fstat(file.fileno())
        except OSError as exc:
            raise self._error(os_error_reason(exc)) from None
        self._identity = (status.st_dev, status.st_ino)
        return file

    def _read(self, wanted: int = 0) -> bytes:
        """The next bytes of the log, waiting for them while the log is followed."""
        waited = False
        while True:
            data = super()._read(wanted)
            if data and waited:
                self._check_not_rewritten()
            if data or self.stop.requested:
                return data
            if not waited:
                self._keep_windows()
                waited = True
            self._check_file()
            if self.on_idle is not None:
                self.on_idle()
            if self.stop.requested:  # Ctrl-C during on_idle: one more plain read above ends the log
                continue
            time.sleep(self.poll_seconds)

    def _check_file(self) -> None:
        """The file read is still the log at its path, no shorter than what was read; and no higher
        generation has replaced it in its session directory."""
        path = self.ref.path
        try:
            status = os.stat(path)  # type: ignore[arg-type]
        except FileNotFoundError:
            raise self._gone("was removed while followed") from None
        except OSError as exc:
            raise self._gone(f"cannot be checked while followed: {os_error_reason(exc)}") from None
        if (status.st_dev, status.st_ino) != self._identity:
            raise self._gone("was replaced by another file (a new inode) while followed")
        if status.st_size < self.bytes_read:
            raise self._gone(f"shrank while followed ({self.bytes_read} bytes read, {status.st_size} now)")
        if (status.st_size, status.st_mtime_ns) != self._stamp:
            self._check_not_rewritten()
            self._stamp = (status.st_size, status.st_mtime_ns)
        self._check_migration()

    def _keep_windows(self) -> None:
        position = self.bytes_read
        self._kept = (position, *self._windows(position))

    def _windows(self, position: int) -> tuple[bytes, bytes]:
        """The file's first bytes and the bytes just before ``position``, as the file holds them now."""
        fd = self._file.fileno()  # type: ignore[union-attr]
        start = max(0, position - WINDOW_BYTES)
        try:
            return os.pread(fd, min(HEAD_BYTES, position), 0), os.pread(fd, position - start, start)
        except OSError as exc:
            raise self._error(f"read failed: {os_error_reason(exc)}") from None

    def _check_not_rewritten(self) -> None:
        if self._kept is None:
            return
        position, *kept = self._kept
        if list(self._windows(position)) != kept:
            raise self._gone("was rewritten in place while followed (bytes already read changed)")

    def _check_migration(self) -> None:
        ref = self.ref
        if ref.session_dir is None or ref.generation_from_name is None:
            return
        now = time.monotonic()
        if now < self._next_migration_check:
            return
        self._next_migration_check = now + MIGRATION_CHECK_SECONDS
        try:
            current = session_log(ref.session_dir, os.path.dirname(ref.display))
        except DshctlError:
            return  # a transient state of the directory (dsh is publishing): look again later
        if current is not None and current.path != ref.path:
            if (current.generation_from_name or 0) > ref.generation_from_name:
                raise LogMigrated(current)

    def _gone(self, what: str) -> FollowError:
        return FollowError(f"the log {what}; stopped following", file=self.ref.display)
