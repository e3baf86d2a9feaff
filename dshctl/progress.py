"""Progress on long work: a bar on standard error while a command reads, shown after about a second.

A command reads inside :func:`reading` (``dshctl.many.map_logs`` does it for the commands that read
many logs); the bar counts the bytes of the logs read — the file's bytes, a ZIP member's inflated bytes —
with their rate and the time left, and the logs done of how many when there are several. A log read in
this process is followed as it is read (:func:`watch`: the line reader's ``bytes_read``), so one big log
moves the bar too; logs read in worker processes count when their batch comes back.

When it is shown: standard error is a terminal, standard output is not a pipe (another program's output
may share the terminal), the command does not write its output to the terminal as it reads (``streams``:
``cat``, a transcript — the output is the progress; ``grep``'s lines, whose first hit may be long in
coming, have a bar until it is written: :func:`output_begins`), no ``--quiet``, and the work has
lasted :data:`DELAY_S`. It is transient: erased before the command's output is written. Nothing of it
ever goes to standard output.

One thread draws it (rich's Progress with its own refresh off), woken every :data:`REFRESH_S`; the
reading thread only adds numbers, so the cost to the work is a few attribute reads per read of 1 MiB.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator

DELAY_S = 1.0
"""Work shorter than this shows no bar."""
REFRESH_S = 0.2
"""How often the bar is redrawn."""

_active: "Meter | None" = None
"""The meter of the work in progress in this process (None in a worker process, or when none runs)."""


def progress_wanted(allowed: bool = True, *, streams: bool = False, until_output: bool = False) -> bool:
    """Whether a bar may be shown on standard error (see the module's docstring); ``until_output``: a
    command whose output may be long in coming (``grep``: the first hit) has a bar until it writes
    (:func:`output_begins`), even when that output goes to the terminal."""
    from .terminal import is_terminal, stdout_is_pipe

    if not allowed or not is_terminal(sys.stderr):
        return False
    if stdout_is_pipe():
        return False
    return until_output or not (streams and is_terminal(sys.stdout))


def output_begins() -> None:
    """The command writes its first output: a bar shown until then is erased, and not shown again (the
    output is the progress from now on). Cheap when there is none."""
    global _bar
    bar = _bar
    if bar is not None:
        _bar = None
        bar.stop()


def log_size(ref: Any) -> int | None:
    """The bytes a log's reading goes through: a file's size, a ZIP member's inflated size; None for
    standard input or a file that cannot be stat'ed."""
    member = getattr(ref, "member", None)
    if member is not None:
        return member.size
    if ref.path is None:
        return None
    try:
        return os.stat(ref.path).st_size
    except OSError:
        return None


class Meter:
    """What the bar shows: logs done of ``logs``, bytes done of ``total`` (None: unknown), and the
    readers of this process whose bytes count while they read."""

    def __init__(self, label: str, logs: int, total: int | None) -> None:
        self.label = label
        self.logs = logs
        self.total = total
        self.done_logs = 0
        self.done_bytes = 0
        self.readers: list[Any] = []
        self.started = time.monotonic()
        self.thread = threading.get_ident()

    def bytes_now(self) -> int:
        live = 0
        for reader in list(self.readers):
            live += getattr(reader, "bytes_read", 0) or 0
        return self.done_bytes + live

    def finished(self, size: int | None, logs: int = 1) -> None:
        self.done_logs += logs
        self.done_bytes += size or 0

    def figures(self, now: float | None = None) -> tuple[str, str, str]:
        """What the bar shows beside itself: the bytes done (of the total, when known), the rate and the time
        left. The rate is the mean since the work began, so the first frame has one as soon as a byte is
        counted; until then the rate and the time left are blank (never ``?`` nor ``-:--:--``), and the
        time left stays blank when the total is unknown (standard input)."""
        from rich.filesize import decimal

        done = self.bytes_now()
        elapsed = (time.monotonic() if now is None else now) - self.started
        amount = decimal(done) if self.total is None else _of(done, self.total)
        if done <= 0 or elapsed <= 0:
            return amount, "", ""
        rate = done / elapsed
        left = "" if self.total is None else f"{_clock(max(self.total - done, 0) / rate)} left"
        return amount, f"{decimal(int(rate))}/s", left


def _of(done: int, total: int) -> str:
    """``3.1/12.0 MB``: the done and the total in the total's unit (as rich's download column)."""
    from rich.filesize import decimal, pick_unit_and_suffix

    unit, suffix = pick_unit_and_suffix(total, ["bytes", "kB", "MB", "GB", "TB", "PB", "EB", "ZB", "YB"], 1000)
    if unit == 1:
        return f"{done:,}/{total:,} bytes"
    return f"{done / unit:,.1f}/{total / unit:,.1f} {suffix}"


def _clock(seconds: float) -> str:
    minutes, second = divmod(int(seconds + 0.5), 60)
    hours, minute = divmod(minutes, 60)
    return f"{hours}:{minute:02d}:{second:02d}" if hours else f"{minute}:{second:02d}"


_bar: "_Bar | None" = None


def bar_console() -> Any:
    """The console of the bar drawn on standard error now, or None: a warning is printed through it,
    above the bar."""
    bar = _bar
    return bar._progress.console if bar is not None and bar.shown and bar._progress is not None else None


def watch(reader: Any) -> None:
    """A line reader starts reading in this process: its ``bytes_read`` counts until :func:`unwatch`.
    Only readers started on the meter's own thread count: a library caller's other threads reading other
    logs are not this command's work."""
    meter = _active
    if meter is not None and meter.thread == threading.get_ident():
        meter.readers.append(reader)


def unwatch(reader: Any) -> None:
    meter = _active
    if meter is not None:
        try:
            meter.readers.remove(reader)
        except ValueError:
            pass


def forget() -> None:
    """In a worker process: no meter (the parent's bar counts the worker's logs when they come back)."""
    global _active, _bar
    _active = _bar = None


@contextmanager
def reading(label: str, refs: list, *, allowed: bool = True, streams: bool = False, until_output: bool = False,
            color: Any = "auto", sizes: list | None = None) -> Iterator[Meter]:
    """Count the work of reading ``refs`` under ``label``; the bar, if wanted, appears after
    :data:`DELAY_S` and is erased when the block ends. Nested calls count into the outer meter.
    ``sizes``: each ref's :func:`log_size`, when the caller has them."""
    global _active, _bar
    if _active is not None:
        yield _active
        return
    sizes = [log_size(ref) for ref in refs] if sizes is None else sizes
    total = None if any(size is None for size in sizes) else sum(sizes)  # type: ignore[arg-type]
    meter = Meter(label, len(refs), total)
    bar = _bar = _Bar(meter, color) if progress_wanted(allowed, streams=streams, until_output=until_output) else None
    _active = meter
    try:
        yield meter
    finally:
        _active = None
        if bar is not None:
            bar.stop()  # again after output_begins: no harm
            _bar = None


class _Bar:
    """The thread that waits :data:`DELAY_S`, then draws the meter every :data:`REFRESH_S`."""

    def __init__(self, meter: Meter, color: Any) -> None:
        from .terminal import color_wanted

        self.meter = meter
        self.color = color_wanted(color, sys.stderr)
        self._stop = threading.Event()
        self._progress = None
        self.shown = False
        self._thread = threading.Thread(target=self._run, name="dshctl-progress", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        if self._stop.wait(DELAY_S):
            return
        try:
            self._progress, task = self._start()
            while True:
                self._draw(task)
                if self._stop.wait(REFRESH_S):
                    return
        except Exception:  # noqa: BLE001 - a bar that cannot be drawn (a closed terminal) is no error of the work
            return

    def _start(self):
        from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn

        from rich.console import Console

        meter = self.meter
        columns: list = [TextColumn(meter.label), BarColumn(), TaskProgressColumn()]
        if meter.logs > 1:
            columns.append(TextColumn("{task.fields[logs]}", markup=False))
        columns += [TextColumn(f"{{task.fields[{name}]}}", markup=False) for name in ("amount", "rate", "left")]
        console = Console(stderr=True, force_terminal=True, no_color=not self.color, highlight=False, markup=False, emoji=False)
        progress = Progress(*columns, console=console, transient=True, auto_refresh=False, redirect_stdout=False, redirect_stderr=False)
        task = progress.add_task(meter.label, total=meter.total, **self._fields())
        progress.start()
        self.shown = True
        return progress, task

    def _fields(self) -> dict[str, str]:
        amount, rate, left = self.meter.figures()
        return {"logs": f"{self.meter.done_logs:,}/{self.meter.logs:,} logs", "amount": amount, "rate": rate, "left": left}

    def _draw(self, task) -> None:
        progress = self._progress
        progress.update(task, completed=self.meter.bytes_now(), **self._fields())
        progress.refresh()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()
        if self._progress is not None:
            self.shown = False
            try:
                self._progress.stop()
            except Exception:  # noqa: BLE001 - see _run
                pass

