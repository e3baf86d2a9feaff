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
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, TextIO

from .errors import EXIT_UNREADABLE, DshctlError, OutputError
from .textsafe import escape_json_bytes, visible_line

_encoder = None


def color_wanted(no_color_flag: bool) -> bool:
    """Colour unless ``--no-color`` was given or ``NO_COLOR`` is set (to anything but the empty string).
    The command line decides once and hands the answer down as a parameter."""
    return not no_color_flag and not os.environ.get("NO_COLOR")


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


def terminal_width(stream=None) -> int | None:
    """The width tables fit: ``COLUMNS`` when set, else the terminal's; ``None`` for a pipe or file,
    where a table never wraps a row (one row per line, whatever its length)."""
    stream = sys.stdout if stream is None else stream
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        if not stream.isatty():
            return None
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return None


def is_terminal(stream: Any = None) -> bool:
    """Whether ``stream`` (default: standard output) is a terminal; a closed or missing one is not."""
    stream = sys.stdout if stream is None else stream
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):  # AttributeError: None, when started without the stream
        return False


def console(stderr: bool = False, *, color: bool = True, width: int | None = None):
    """A rich Console for stdout (or stderr), created lazily so plain JSON output never imports rich.
    ``width`` overrides the detected one (a table wider than a pipe's default)."""
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
    import secrets  # hmac, hashlib and random: 4 ms a start-up that writes no file should not pay

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


@dataclass(frozen=True)
class Column:
    """One column of a table, as the command declares it.

    ``number``: a figure (digits, units); never cut, never folded. ``fold``: text that may fold onto
    more lines when the table is too wide (ids, titles, paths, values), to no fewer than ``least``
    characters a line (:data:`FOLD_MIN` when unset) while a column can still be hidden, and to
    :data:`FOLD_MIN` when none can (an id that should stay whole has a ``least`` of its length). Other
    text stays whole.
    ``drop``: when the table is still too wide, columns are hidden in increasing ``drop`` order
    (``None``: never), and a footer names them. A ``(header, justify)`` pair is a number when
    right-justified, else text that may fold."""

    header: str
    justify: str = "left"
    number: bool = False
    fold: bool = False
    drop: int | None = None
    least: int | None = None


def number(header: str, drop: int | None = None) -> Column:
    return Column(header, "right", number=True, drop=drop)


def text(header: str, *, fold: bool = False, drop: int | None = None, least: int | None = None) -> Column:
    return Column(header, "left", fold=fold, drop=drop, least=least)


FOLD_MIN = 8
"""The narrowest a folding column gets (or its natural width, when less): fewer characters a line
no longer reads as an id or a title."""


def _as_column(spec) -> Column:
    if isinstance(spec, Column):
        return spec
    header, justify = spec
    return Column(header, justify, number=justify == "right", fold=justify != "right")


@dataclass
class _Layout:
    """Which columns a table shows and how wide each is; ``width`` is the whole table's."""

    shown: list[int]
    widths: dict[int, int]
    hidden: list[str]
    width: int


def _overhead(count: int) -> int:
    return 3 * count + 1  # a border before each column and after the last, one space either side of a cell


def _natural_widths(headers: list[str], rows: list[list[str]]) -> list[int]:
    from rich.cells import cell_len

    widths = [max([cell_len(word) for word in header.split()] or [1]) for header in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], cell_len(cell))
    return widths


def _least_width(column: Column, natural: int) -> int:
    return min(natural, column.least or FOLD_MIN) if column.fold else natural


def _floor_width(column: Column, natural: int) -> int:
    """Below ``least`` only when no column is left to hide: :data:`FOLD_MIN` is the floor."""
    return min(natural, FOLD_MIN, column.least or FOLD_MIN) if column.fold else natural


SHORT_TAIL = 2
"""A fold that leaves this many characters or fewer on a line of their own splits an id badly."""


def layout(columns: list[Column], rows: list[list[str]], width: int | None) -> _Layout:
    """Fit a table to ``width`` (``None``: a pipe, every column whole): hide columns in their ``drop``
    order until the folding columns fit at their ``least``, fold them, and below ``least`` (to
    :data:`FOLD_MIN`) only when nothing is left to hide; numbers are never cut. A fold that would leave
    one or two characters alone on a line hides one more column, or else folds narrower. A table that
    cannot fit even so is drawn wider than ``width`` rather than cut. A header needs only its longest
    word's width (it wraps at spaces); room left over gives headers their whole width, so a pipe shows
    each on one line."""
    natural = _natural_widths([c.header for c in columns], rows)
    shown = list(range(len(columns)))
    hidden: list[str] = []
    widths = {i: natural[i] for i in shown}
    if width is not None:
        droppable = sorted((c.drop, i) for i, c in enumerate(columns) if c.drop is not None)
        while droppable and _overhead(len(shown)) + sum(_least_width(columns[i], natural[i]) for i in shown) > width:
            _, index = droppable.pop(0)
            shown.remove(index)
            hidden.append(columns[index].header)
        widths = _folded(width, shown, columns, natural)
        if droppable and _short_tails(widths, columns, rows, natural):
            fewer = [i for i in shown if i != droppable[0][1]]
            trial = _folded(width, fewer, columns, natural)
            if not _short_tails(trial, columns, rows, natural):
                shown, widths = fewer, trial
                hidden.append(columns[droppable[0][1]].header)
        _fold_evenly(widths, columns, rows, natural)
    room = None if width is None else width - _overhead(len(shown)) - sum(widths.values())
    _widen_to_headers(room, columns, widths)
    return _Layout(shown, widths, hidden, _overhead(len(shown)) + sum(widths.values()))


def _folded(width: int, shown: list[int], columns: list[Column], natural: list[int]) -> dict[int, int]:
    widths = {i: natural[i] for i in shown}
    room = width - _overhead(len(shown))
    _fold_to(room, columns, widths, natural, _least_width)
    _fold_to(room, columns, widths, natural, _floor_width)
    return widths


def _fold_to(room: int, columns: list[Column], widths: dict[int, int], natural: list[int], least_of) -> None:
    """Narrow the folding columns, widest first, to no less than ``least_of(column, natural)``, until
    the cells take ``room`` characters at most."""
    excess = sum(widths.values()) - room
    folding = [i for i in widths if columns[i].fold]
    while excess > 0 and folding:
        widest = max(folding, key=lambda i: widths[i])
        least = least_of(columns[widest], natural[widest])
        if widths[widest] <= least:
            folding.remove(widest)
            continue
        others = [widths[i] for i in folding if i != widest]
        target = max(least, max(others, default=least), widths[widest] - excess)
        if target >= widths[widest]:
            target = widths[widest] - 1
        excess -= widths[widest] - target
        widths[widest] = target


def _words(rows: list[list[str]], index: int) -> list[int]:
    """The widths of the words of a column's cells (text folds only within a word longer than a line)."""
    from rich.cells import cell_len

    return [cell_len(word) for row in rows for word in row[index].split()]


def _leaves_short_tail(words: list[int], width: int) -> bool:
    return any(word > width and 0 < word % width <= SHORT_TAIL for word in words)


def _short_tails(widths: dict[int, int], columns: list[Column], rows: list[list[str]], natural: list[int]) -> bool:
    return any(columns[i].fold and widths[i] < natural[i] and _leaves_short_tail(_words(rows, i), widths[i])
               for i in widths)


def _fold_evenly(widths: dict[int, int], columns: list[Column], rows: list[list[str]], natural: list[int]) -> None:
    """Narrow a column whose fold leaves a short tail: to the width that splits its longest word into
    equal lines when no word then leaves one (below the floor, too: even lines read better than a
    stub), else to the widest such width above the floor."""
    for i, width in widths.items():
        if not columns[i].fold or width >= natural[i]:
            continue
        words = _words(rows, i)
        if not _leaves_short_tail(words, width):
            continue
        longest = max(words)
        lines = -(-longest // width)
        even = -(-longest // lines)
        floor = _floor_width(columns[i], natural[i])
        candidates = [even, *range(width - 1, floor - 1, -1)]
        widths[i] = next((w for w in candidates if not _leaves_short_tail(words, w)), width)


def _widen_to_headers(room: int | None, columns: list[Column], widths: dict[int, int]) -> None:
    """Widen columns whose header would wrap to the header's width, left to right, while ``room``
    (``None``: unlimited) lasts."""
    from rich.cells import cell_len

    for i in widths:
        wanted = cell_len(columns[i].header) - widths[i]
        if wanted > 0 and (room is None or wanted <= room):
            widths[i] += wanted
            room = None if room is None else room - wanted


def print_table(
    title: str | None,
    columns: list,
    rows: Iterable[list[Any]],
    caption: str | None = None,
    *,
    color: bool = True,
) -> None:
    """A rich table on stdout: the title in bold above it, the caption below. ``columns`` are
    :class:`Column` (or ``(header, justify)`` pairs); every cell is literal text (:func:`text_cell`).
    On a terminal (or ``COLUMNS``) the table fits its width as :func:`layout` says, with a footer naming
    hidden columns; to a pipe each row is one line, whatever its length."""
    from rich import box
    from rich.table import Table

    specs = [_as_column(column) for column in columns]
    cells = [[visible_line(cell) for cell in row] for row in rows]
    width = terminal_width()
    fitted = layout(specs, cells, width)
    out = console(color=color, width=max(fitted.width, width or 0))
    table = Table(header_style="bold", box=box.HEAVY_HEAD)
    for i in fitted.shown:
        spec = specs[i]
        table.add_column(_header_cell(spec.header), justify=spec.justify, width=fitted.widths[i],
                         overflow="fold", no_wrap=not spec.fold)
    for row in cells:
        table.add_row(*[text_cell(row[i]) for i in fitted.shown])
    if title:
        _print_line(out, title, "bold")
    out.print(table)
    for line in (caption or "").split("\n") if caption else []:  # dshctl's own line breaks
        _print_line(out, line)
    if fitted.hidden:
        _print_line(out, f"hidden to fit {width} columns: {', '.join(fitted.hidden)} (wider terminal, a pipe or --json shows all)")


def _header_cell(header: str):
    """A header wraps at its spaces even over a column whose cells never wrap (a number's)."""
    cell = text_cell(header)
    cell.no_wrap = False
    return cell


def _print_line(out, line: str, style: str | None = None) -> None:
    """A line of dshctl's own text; on a pipe never wrapped."""
    out.print(text_cell(line, style), soft_wrap=terminal_width() is None)


class Tables:
    """Tables and lines on stdout drawn one way: with or without colour."""

    def __init__(self, *, color: bool):
        self.color = color

    def table(self, title: str | None, columns: list, rows: Iterable[list[Any]], caption: str | None = None) -> None:
        print_table(title, columns, rows, caption, color=self.color)

    def line(self, text: str) -> None:
        print_line(text, color=self.color)


def print_line(text: str, *, color: bool = True) -> None:
    """One line of literal text on stdout, through the same console as the tables."""
    _print_line(console(color=color), text)


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
    _point_at_devnull(sys.stdout)


def _point_at_devnull(stream) -> None:
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, stream.fileno())
        finally:
            os.close(devnull)
    except (AttributeError, OSError, ValueError):
        pass


def settle_stderr() -> None:
    """Flush standard error now, while a failure can still be swallowed. A buffered standard error that
    cannot be written (``2>/dev/full``, an I/O error) keeps what it holds, and the interpreter's own
    flush at exit would fail on it again and turn the exit status into 120 (with PYTHONUNBUFFERED it is
    written through and fails early instead). So when this flush fails, what is left goes to /dev/null:
    the message is lost, the status stands."""
    stream = sys.stderr
    if stream is None:  # the process started with standard error closed
        return
    try:
        stream.flush()
        return
    except (AttributeError, OSError, ValueError):
        pass
    _point_at_devnull(stream)
    try:
        stream.flush()
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
        settle_stderr()


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
        from .interrupt import interrupted_status

        return interrupted_status()
    except MemoryError:
        _to_stderr("dshctl: error: out of memory")
        return EXIT_UNREADABLE
