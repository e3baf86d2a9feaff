"""Output helpers every command shares: JSON / NDJSON / rich tables, warnings, and the one error path.

* Standard output carries data only; warnings and errors go to standard error.
* A closed pipe (``dshctl cat log | head``) ends the command quietly with status 0.
* Errors print one line, ``dshctl: error: FILE:LINE (seq N): MESSAGE``, and exit
  with the error's documented status (see :mod:`dshctl.errors`); never a traceback.
* Colour follows ``--no-color`` and the ``NO_COLOR`` environment variable.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Iterable, TypeVar

from .errors import EXIT_UNREADABLE, DshctlError

T = TypeVar("T")

_state = {"no_color": False}
_encoder = None


def set_no_color(flag: bool) -> None:
    _state["no_color"] = _state["no_color"] or flag


def color_enabled() -> bool:
    return not _state["no_color"] and not os.environ.get("NO_COLOR")


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


def console(stderr: bool = False):
    """A rich Console for stdout (or stderr), created lazily so plain JSON output never imports rich."""
    stream = sys.stderr if stderr else sys.stdout
    width = None
    if not os.environ.get("COLUMNS") and not (hasattr(stream, "isatty") and stream.isatty()):
        width = PIPE_WIDTH
    return _console_class()(stderr=stderr, no_color=not color_enabled(), highlight=False, soft_wrap=False, width=width)


def _json_encoder():
    global _encoder
    if _encoder is None:
        import msgspec

        _encoder = msgspec.json.Encoder()
    return _encoder


def to_json(value: Any) -> bytes:
    return _json_encoder().encode(value)


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
            out.write(b"\n".join(batch))
            batch.clear()
    if batch:
        batch.append(b"")
        out.write(b"\n".join(batch))


def iso_utc(ms: int | None) -> str | None:
    """Epoch milliseconds as ``YYYY-MM-DDTHH:MM:SSZ`` (UTC); None for missing, non-positive or
    out-of-range values (fixtures carry ``createdAt: 0``)."""
    import datetime as _dt

    if not isinstance(ms, int) or isinstance(ms, bool) or ms <= 0:
        return None
    try:
        return _dt.datetime.fromtimestamp(ms / 1000, tz=_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, OSError, ValueError):
        return None


def warn(message: str) -> None:
    """A warning line on stderr; never changes the exit status."""
    try:
        sys.stderr.write(f"dshctl: warning: {message}\n")
    except (BrokenPipeError, OSError):
        pass


def error_line(error: DshctlError) -> str:
    return f"dshctl: error: {error}"


def print_table(title: str | None, columns: list[tuple[str, str]], rows: Iterable[list[Any]], caption: str | None = None) -> None:
    """A rich table on stdout. ``columns`` are ``(header, justify)`` pairs."""
    from rich.table import Table

    table = Table(title=title, caption=caption, header_style="bold", box=None if not color_enabled() else None)
    for header, justify in columns:
        table.add_column(header, justify=justify, overflow="fold")
    for row in rows:
        table.add_row(*["" if cell is None else str(cell) for cell in row])
    console().print(table)


def _silence_stdout() -> None:
    """After EPIPE, point stdout at /dev/null so the interpreter's final flush cannot complain."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def run(body: Callable[[], int | None]) -> int:
    """Run a command body through the one error path and return its exit status."""
    try:
        status = body() or 0
        try:
            sys.stdout.flush()
        except BrokenPipeError:
            _silence_stdout()
        return status
    except BrokenPipeError:
        _silence_stdout()
        return 0
    except DshctlError as exc:
        try:
            sys.stdout.flush()
        except (BrokenPipeError, OSError):
            _silence_stdout()
        sys.stderr.write(error_line(exc) + "\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("dshctl: interrupted\n")
        return 130
    except MemoryError:
        sys.stderr.write("dshctl: error: out of memory\n")
        return EXIT_UNREADABLE
