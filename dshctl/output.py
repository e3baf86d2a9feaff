"""Output helpers every command shares: JSON / NDJSON / rich tables, warnings, and the one error path.

* Standard output carries data only; warnings and errors go to standard error.
* A closed pipe (``dshctl cat log | head``) ends the command quietly with status 0.
* Errors print one line, ``dshctl: error: FILE:LINE (seq N): MESSAGE``, and exit
  with the error's documented status (see :mod:`dshctl.errors`); never a traceback.
* Colour follows ``--no-color`` and the ``NO_COLOR`` environment variable.
* Text from a log is data: table cells, titles and captions are ``rich.text.Text`` (never markup or
  emoji codes), and warnings, errors and cells show control characters as pictures
  (:mod:`dshctl.textsafe`); JSON escapes them instead.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Callable, Iterable, TypeVar

from .errors import EXIT_UNREADABLE, DshctlError
from .textsafe import escape_json_bytes, visible_line

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


def console(stderr: bool = False, pipe_width: int = PIPE_WIDTH):
    """A rich Console for stdout (or stderr), created lazily so plain JSON output never imports rich.
    ``pipe_width`` is its width when the stream is no terminal and ``COLUMNS`` is unset."""
    stream = sys.stderr if stderr else sys.stdout
    width = None
    if not os.environ.get("COLUMNS") and not (hasattr(stream, "isatty") and stream.isatty()):
        width = pipe_width
    return _console_class()(
        stderr=stderr, no_color=not color_enabled(), highlight=False, soft_wrap=False, width=width, markup=False, emoji=False
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
    """A warning line on stderr; never changes the exit status. Log text in ``message`` is shown safely."""
    try:
        sys.stderr.write(f"dshctl: warning: {visible_line(message)}\n")
    except (BrokenPipeError, OSError):
        pass


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
) -> None:
    """A rich table on stdout: the title in bold above it, the caption below. ``columns`` are
    ``(header, justify)`` pairs; every cell is literal text (:func:`text_cell`). With ``wrap_last_only``
    every column but the last keeps its cells on one line."""
    from rich.table import Table

    out = console(pipe_width=pipe_width)
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
        out.print(text_cell(caption))


def print_line(text: str, pipe_width: int = PIPE_WIDTH) -> None:
    """One line of literal text on stdout, through the same console as the tables."""
    console(pipe_width=pipe_width).print(text_cell(text))


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
