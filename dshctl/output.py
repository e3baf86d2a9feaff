"""Output helpers every command shares: JSON / NDJSON / rich tables, warnings, and the one error path.

* Standard output carries data only; warnings and errors go to standard error.
* A closed pipe (``dshctl cat log | head``) ends the command quietly with status 0.
* Standard output that cannot be written (closed, disk full, I/O error) is an :class:`OutputError`,
  reported like any other error; standard error is best effort and never changes the exit status.
* Errors print one line, ``dshctl: error: FILE:LINE (seq N): MESSAGE``, and exit
  with the error's documented status (see :mod:`dshctl.errors`); never a traceback.
* Colour follows ``--no-color`` and the ``NO_COLOR`` environment variable.
* Text from a log is data: table cells, titles and captions are ``rich.text.Text`` (never markup or
  emoji codes), and warnings, errors and cells show control characters as pictures
  (:mod:`dshctl.textsafe`); JSON escapes them instead.
"""

from __future__ import annotations

import os
import secrets
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, TextIO

from .errors import EXIT_UNREADABLE, DshctlError, OutputError
from .textsafe import escape_json_bytes, visible_line

_encoder = None


def color_wanted(no_color_flag: bool) -> bool:
    """Colour unless ``--no-color`` was given or ``NO_COLOR`` is set (to anything but the empty string).
    The command line decides once and hands the answer down as a parameter."""
    return not no_color_flag and not os.environ.get("NO_COLOR")


PIPE_WIDTH = 160
"""Table width when output goes to a pipe or file and ``COLUMNS`` is unset: rich would assume 80 and
fold ids and names that a reader of a log file wants whole."""


_console_classes: list = []


def _console_class():
    """rich's Console, except that a closed pipe raises BrokenPipeError for run() to end quietly
    (rich itself exits with status 1). Built on first use so JSON output never imports rich."""
    if not _console_classes:
        from rich.console import Console

        class PipeQuietConsole(Console):
            def on_broken_pipe(self) -> None:
                self.quiet = True
                raise BrokenPipeError

        _console_classes.append(PipeQuietConsole)
    return _console_classes[0]


def console(stderr: bool = False, pipe_width: int = PIPE_WIDTH, *, color: bool = True):
    """A rich Console for stdout (or stderr), created lazily so plain JSON output never imports rich.
    ``pipe_width`` is its width when the stream is no terminal and ``COLUMNS`` is unset."""
    stream = sys.stderr if stderr else sys.stdout
    width = None
    if not os.environ.get("COLUMNS") and not (hasattr(stream, "isatty") and stream.isatty()):
        width = pipe_width
    return _console_class()(
        stderr=stderr, no_color=not color, highlight=False, soft_wrap=False, width=width, markup=False, emoji=False
    )


def _json_encoder():
    global _encoder
    if _encoder is None:
        import msgspec

        _encoder = msgspec.json.Encoder()
    return _encoder


def to_json(value: Any) -> bytes:
    """Compact JSON; control characters in strings are escaped (DEL and C1 too, which JSON allows raw)."""
    return escape_json_bytes(_json_encoder().encode(value))


def write_bytes(data: bytes) -> None:
    sys.stdout.buffer.write(data)


def emit_json(value: Any) -> None:
    """One JSON document on stdout."""
    write_bytes(to_json(value) + b"\n")


def emit_ndjson(values: Iterable[Any]) -> None:
    """One JSON value per line on stdout, written in batches."""
    encode = _json_encoder().encode
    out = sys.stdout.buffer
    batch: list[bytes] = []
    for value in values:
        batch.append(encode(value))
        if len(batch) >= 256:
            batch.append(b"")
            out.write(escape_json_bytes(b"\n".join(batch)))
            batch.clear()
    if batch:
        batch.append(b"")
        out.write(escape_json_bytes(b"\n".join(batch)))


@contextmanager
def new_text_file(path: Path, *, force: bool) -> Iterator[TextIO]:
    """A text file written whole or not at all: the text goes to a temporary file beside ``path`` that
    takes its name only once everything is written, so a failed write never leaves a half file under
    that name. An existing ``path`` is refused unless ``force``."""
    _refuse_existing(path, force)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o666)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {_os_error_reason(exc)}") from None
    try:
        with open(fd, "w", encoding="utf-8", newline="\n") as out:
            yield out
        _publish(temporary, path, force)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {_os_error_reason(exc)}") from None
    finally:
        _remove_if_present(temporary)


def _refuse_existing(path: Path, force: bool) -> None:
    if path.is_dir():
        raise OutputError(f"cannot write {path}: it is a directory")
    if not force and os.path.lexists(path):
        raise OutputError(f"{path} already exists (--force overwrites)")


def _publish(temporary: Path, path: Path, force: bool) -> None:
    if force:
        os.replace(temporary, path)
        return
    try:
        os.link(temporary, path)  # unlike a rename, fails if the name appeared meanwhile
    except FileExistsError:
        raise OutputError(f"{path} already exists (--force overwrites)") from None
    except OSError:  # a file system without hard links
        _refuse_existing(path, force)
        os.rename(temporary, path)


def _remove_if_present(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _os_error_reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


def _to_stderr(line: str) -> None:
    stderr = _BestEffortStderr(sys.stderr)  # library callers run outside run(), too
    stderr.write(line + "\n")
    stderr.flush()


def warn(message: str) -> None:
    """A warning line on stderr; never changes the exit status. Log text in ``message`` is shown safely."""
    _to_stderr(f"dshctl: warning: {visible_line(message)}")


def note(message: str) -> None:
    """An informational line on stderr (``dshctl: wrote x.cast``); never changes the exit status."""
    _to_stderr(f"dshctl: {visible_line(message)}")


def error_line(error: DshctlError) -> str:
    return f"dshctl: error: {visible_line(str(error))}"


def text_cell(value: Any, style: str | None = None):
    """A table cell or line as ``rich.text.Text``: literal text (no markup, no emoji codes), one line."""
    from rich.text import Text

    return Text(visible_line(value), style=style or "")


def print_table(
    title: str | None,
    columns: list[tuple[str, str]],
    rows: Iterable[list[Any]],
    caption: str | None = None,
    *,
    wrap_last_only: bool = False,
    pipe_width: int = PIPE_WIDTH,
    color: bool = True,
) -> None:
    """A rich table on stdout: the title in bold above it, the caption below. ``columns`` are
    ``(header, justify)`` pairs; every cell is literal text (:func:`text_cell`). With ``wrap_last_only``
    every column but the last keeps its cells on one line."""
    from rich.table import Table

    out = console(pipe_width=pipe_width, color=color)
    table = Table(header_style="bold")
    last = len(columns) - 1
    for i, (header, justify) in enumerate(columns):
        table.add_column(text_cell(header), justify=justify, overflow="fold", no_wrap=wrap_last_only and i != last)
    for row in rows:
        table.add_row(*[text_cell(cell) for cell in row])
    if title:
        out.print(text_cell(title, "bold"))
    out.print(table)
    if caption:
        for line in caption.split("\n"):  # dshctl's own line breaks; log text inside stays one line
            out.print(text_cell(line))


class Tables:
    """Tables and lines on stdout drawn one way: with or without colour, and this wide on a pipe."""

    def __init__(self, *, color: bool, pipe_width: int = PIPE_WIDTH, wrap_last_only: bool = False):
        self.color = color
        self.pipe_width = pipe_width
        self.wrap_last_only = wrap_last_only

    def table(self, title: str | None, columns: list[tuple[str, str]], rows: Iterable[list[Any]], caption: str | None = None) -> None:
        print_table(
            title, columns, rows, caption, wrap_last_only=self.wrap_last_only, pipe_width=self.pipe_width, color=self.color
        )

    def line(self, text: str) -> None:
        print_line(text, self.pipe_width, color=self.color)


def print_line(text: str, pipe_width: int = PIPE_WIDTH, *, color: bool = True) -> None:
    """One line of literal text on stdout, through the same console as the tables."""
    console(pipe_width=pipe_width, color=color).print(text_cell(text))


class _CheckedStdout:
    """``sys.stdout`` while a command runs: the real stream, except that a write that fails (disk
    full, I/O error) or finds standard output closed raises :class:`OutputError` for :func:`run` to
    report. A closed pipe stays BrokenPipeError, which run() ends quietly."""

    def __init__(self, stream) -> None:
        self._stream = stream  # None when the process started with standard output closed

    def write(self, data):
        return self._checked("write", data)

    def flush(self) -> None:
        if self._stream is not None:
            self._checked("flush")

    def isatty(self) -> bool:
        try:
            return self._stream is not None and self._stream.isatty()
        except (OSError, ValueError):
            return False

    @property
    def buffer(self) -> "_CheckedStdout":
        return _CheckedStdout(getattr(self._stream, "buffer", None))

    def __getattr__(self, name: str):
        return getattr(self._stream, name)

    def _checked(self, method: str, *args):
        if self._stream is None:
            raise OutputError("cannot write standard output: it is closed")
        try:
            return getattr(self._stream, method)(*args)
        except BrokenPipeError:
            raise
        except (OSError, ValueError) as exc:
            raise OutputError(f"cannot write standard output: {getattr(exc, 'strerror', None) or exc}") from None


class _BestEffortStderr:
    """``sys.stderr`` while a command runs: a closed or failing standard error loses the message, never
    the exit status (click prints usage errors through it, too)."""

    def __init__(self, stream) -> None:
        self._stream = stream  # None when the process started with standard error closed

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except (AttributeError, OSError, ValueError):
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except (AttributeError, OSError, ValueError):
            pass

    def isatty(self) -> bool:
        try:
            return self._stream.isatty()
        except (AttributeError, OSError, ValueError):
            return False

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _silence_stdout() -> None:
    """After EPIPE or a failed write, point stdout at /dev/null so the interpreter's final flush of
    what is still buffered cannot complain (or turn the exit status into 120)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (AttributeError, OSError, ValueError):
        pass


def _flush_or_silence() -> None:
    try:
        sys.stdout.flush()
    except (BrokenPipeError, OutputError):
        _silence_stdout()


def run(body: Callable[[], int | None]) -> int:
    """Run a command body through the one error path and return its exit status."""
    stdout, stderr = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = _CheckedStdout(stdout), _BestEffortStderr(stderr)
    try:
        return _exit_status(body)
    finally:
        sys.stdout, sys.stderr = stdout, stderr


def _exit_status(body: Callable[[], int | None]) -> int:
    try:
        status = body() or 0
        try:
            sys.stdout.flush()  # small outputs meet a full disk only here
        except BrokenPipeError:
            _silence_stdout()
        return status
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except DshctlError as exc:
        _flush_or_silence()
        _to_stderr(error_line(exc))
        return exc.exit_code
    except KeyboardInterrupt:
        _to_stderr("dshctl: interrupted")
        return 130
    except MemoryError:
        _to_stderr("dshctl: error: out of memory")
        return EXIT_UNREADABLE
