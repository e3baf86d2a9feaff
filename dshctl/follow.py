"""``--follow``: read a log while dsh is still writing it, through the one reading path.

:class:`Follower` opens the log a path names (a sessions root: the session written last) with a
:class:`~dshctl.source.follow.FollowingLineReader`, so the generation decoders, the v0 chunk fold and the
normalized events are the ones every command uses: an event comes out as soon as it is durable and
nothing can change it any more (a v0 chunk waits for its settlement, exactly as in the fold). A command
hands it a *consumer* that reads ``log.events()`` as usual and an *idle* hook (flush, redraw) that runs
whenever the reader has caught up with the file.

Ctrl-C asks the reader to stop: the log then ends as the file stands, the consumer finishes as it would on
the finished file, and the command exits 0 (a second Ctrl-C stops at once, still 0). When dsh migrates the
session to a higher generation, a note says so and the new log is followed from its start. An empty
directory (a session directory dsh has just created) is waited on until its first log appears. While
idle, a pipe on standard output whose reader has gone ends the command quietly, as output to it would.
"""

from __future__ import annotations

import os
import select
import signal
import stat
import time
from contextlib import contextmanager
from typing import Callable, Iterator

from .errors import EXIT_OK
from .interrupt import take_over
from .source.follow import POLL_SECONDS, FollowingLineReader, FollowStop, LogMigrated
from .source.paths import LogRef

__all__ = ["Follower", "follow_target"]


def follow_target(spec: str) -> LogRef:
    """The log ``--follow`` watches for ``spec``: a file, a session directory's highest generation, or
    the most recently written session under a project directory or sessions root."""
    from .errors import UsageError
    from .source.paths import resolve_named, written_key

    if spec == "-":
        from .source.stdin import stdin_holds_zip

        if stdin_holds_zip():  # the real reason first: an export is finished, wherever it comes from
            raise UsageError("--follow reads a log dsh is writing, not a session export ZIP (standard input holds one)")
        raise UsageError("--follow reads a log file or directory, not standard input")
    refs = resolve_named(spec)
    if len(refs) == 1:
        return refs[0]
    written = [(written_key(ref.path), ref) for ref in refs if ref.problem is None and ref.path is not None]
    written = [entry for entry in written if entry[0] is not None]
    if not written:
        raise next((ref.problem for ref in refs if ref.problem is not None), None) or UsageError(f"{spec}: no readable log to follow")
    return max(written, key=lambda entry: entry[0])[1]


def _target_or_none(spec: str) -> LogRef | None:
    """:func:`follow_target`, or ``None`` for an empty directory: a session directory dsh has just
    created, whose first log is still to be published (only dsh's staging files, ``*.tmp``, in it)."""
    from .errors import SourceError

    try:
        return follow_target(spec)
    except SourceError:
        if _empty_directory(spec):
            return None
        raise


def _empty_directory(path: str) -> bool:
    try:
        return all(name.endswith(".tmp") for name in os.listdir(path))
    except OSError:  # not a directory, or not readable: the error follow_target gave stands
        return False


class Follower:
    """One ``--follow`` run: the log followed (switching on migration), Ctrl-C, and the idle hook."""

    def __init__(self, spec: str, *, strict: bool = False, on_warning: Callable[[str], None] | None = None):
        self.spec = spec
        self.ref: LogRef | None = _target_or_none(spec)
        """The log followed; ``None`` until dsh writes the first log of an empty session directory."""
        self.strict = strict
        self.on_warning = on_warning
        self.stop = FollowStop()
        self.on_idle: Callable[[], None] = _nothing
        self.on_note: Callable[[str], None] | None = None
        """Where the notes go (migration, waiting for the first log; default: standard error)."""
        self._output_pipe = _OutputPipe()

    def run(self, consume: Callable[[object], None], *, raw: bool = False) -> int:
        """``consume(log)`` for the followed log, again for each log dsh migrates it to; exit status 0.
        With ``raw`` the consumer gets the line reader itself, no header parsed."""
        try:
            with self._interrupt_stops():
                ref = self.ref or self._first_log()
                while ref is not None:
                    try:
                        self._consume(ref, consume, raw)
                        return EXIT_OK
                    except LogMigrated as moved:
                        ref = self._switch(ref, moved.ref)
                return EXIT_OK  # Ctrl-C before the first log was written
        except KeyboardInterrupt:  # the second Ctrl-C
            return EXIT_OK

    def _first_log(self) -> LogRef | None:
        """The first log of an empty session directory, once dsh writes it; ``None`` after Ctrl-C."""
        self._note(f"{self.spec}: no log yet; waiting for dsh to write one")
        while not self.stop.requested:
            self._idle()
            time.sleep(POLL_SECONDS)
            if _empty_directory(self.spec):
                continue  # one listdir; resolving the path costs more
            self.ref = follow_target(self.spec)
            return self.ref
        return None

    def _consume(self, ref: LogRef, consume: Callable[[object], None], raw: bool) -> None:
        from .stdio import warn
        from .reader import open_log

        reader = FollowingLineReader(ref, self.stop, on_idle=self._idle)
        if raw:
            with reader:
                consume(reader)
            return
        log = open_log(ref, reader=reader, strict=self.strict, on_warning=self.on_warning or warn)
        with log:
            consume(log)

    def _idle(self) -> None:
        self.on_idle()
        if self._output_pipe.closed():
            raise BrokenPipeError  # ends the command quietly, status 0 (dshctl.stdio.run)

    def _switch(self, old: LogRef, new: LogRef) -> LogRef:
        self._note(f"{old.display}: dsh migrated the session to generation {new.generation_from_name}; following {new.display} from its start")
        self.ref = new
        return new

    def _note(self, text: str) -> None:
        from .stdio import note

        (self.on_note or note)(text)

    @contextmanager
    def _interrupt_stops(self) -> Iterator[None]:
        """SIGINT sets the stop flag instead of raising; a second one raises KeyboardInterrupt."""
        stop = self.stop

        def on_sigint(signum, frame) -> None:
            if stop.requested:
                raise KeyboardInterrupt
            stop.requested = True

        try:
            previous = signal.signal(signal.SIGINT, on_sigint)
        except ValueError:  # not the main thread (a library caller): Ctrl-C stays KeyboardInterrupt
            yield
            return
        if take_over():  # Ctrl-C while the command was starting: the log as it stands
            stop.requested = True
        try:
            yield
        finally:
            signal.signal(signal.SIGINT, previous)


def _nothing() -> None:
    pass


class _OutputPipe:
    """Whether standard output is a pipe (or socket) whose reader has gone. A follower that prints
    nothing for a long time (``cat -f --type 'nothing/*' LOG | head``) would never meet EPIPE: while
    idle it asks instead, as ``tail -f`` does; one ``poll`` with no timeout per check."""

    def __init__(self, fd: int = 1) -> None:
        self._poller = _poller_if_pipe(fd)

    def closed(self) -> bool:
        if self._poller is None:
            return False
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in self._poller.poll(0))


def _poller_if_pipe(fd: int):
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return None
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)) or not hasattr(select, "poll"):
        return None
    poller = select.poll()
    poller.register(fd, 0)  # no events asked: POLLERR and POLLHUP are reported anyway
    return poller
