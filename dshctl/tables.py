"""Tables on standard output: rich tables fitted to the terminal, and lines drawn through the same
console.

Text from a log is data: table cells, titles and captions are ``rich.text.Text`` (never markup or
emoji codes), with control characters shown as pictures (:mod:`dshctl.textsafe`). rich is imported on
first use, so output that draws no table never imports it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from .stdio import terminal_width
from .textsafe import visible_line

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


def console(stderr: bool = False, *, color: bool = True, width: int | None = None):
    """A rich Console for stdout (or stderr), created lazily so plain JSON output never imports rich.
    ``width`` overrides the detected one (a table wider than a pipe's default)."""
    return _console_class()(
        stderr=stderr, no_color=not color, highlight=False, soft_wrap=False, width=width, markup=False, emoji=False
    )


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


