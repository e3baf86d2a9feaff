"""Tables on standard output, the one layout engine of every command, in three forms:

* ``box`` — on a terminal: a rich table fitted to its width (``COLUMNS``, else the terminal's): columns
  hidden in their ``drop`` order while they do not fit (a footer names them), text cut with "…" on one
  line (ids and a figure table's values fold), numbers never cut;
* ``plain`` — to a pipe or a file, or with ``--plain``: no borders, one row per line, columns aligned by
  spaces, never folded or cut whatever ``COLUMNS`` says (as ``kubectl get`` and ``docker ps`` print);
* ``tsv`` — with ``--tsv``: tab-separated cells, a header line first, one table a command (:class:`Tables`
  refuses a second); a cell that is a :class:`Cell` gives its machine value there (whole numbers, milliseconds, ISO times,
  empty for none) where the other forms show it as people read it (``12.2K``, ``1m05s``, ``14:13``, ``—``).

A column may be shown in some forms only (``forms``): a mark beside a row's key on a terminal (``⑂``
after a session id) is a column of its own in a pipe, so the key there is what dshctl takes back.

``auto`` (the default) is ``box`` on a terminal and ``plain`` elsewhere (:func:`table_form`).

Text from a log is data: table cells, titles and captions are ``rich.text.Text`` (never markup or
emoji codes), with control characters shown as pictures (:mod:`dshctl.textsafe`), tabs included, so a
TSV cell never holds a tab or a line break. rich is imported on first use, so output that draws no
table never imports it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, replace
from typing import Any, Iterable

from .stdio import color_wanted, is_terminal, terminal_width
from .terminal import dumb_terminal, terminal_lines
from .textsafe import visible_line

FORMS = ("auto", "box", "plain", "tsv")
NULL_CELL = "—"
"""What a table shows for a value it does not have; an empty cell in TSV."""
PLAIN_EMPTY = "-"
"""An empty cell of a plain table, so that the columns a pipe splits on spaces stay in place."""
PLAIN_GAP = "  "
"""Between the columns of a plain table."""
ELLIPSIS = "…"

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


def console(stderr: bool = False, *, color: bool | str = "auto", width: int | None = None):
    """A rich Console for stdout (or stderr), created lazily so plain JSON output never imports rich.
    ``width`` overrides the detected one (a table wider than a pipe's default). ``color``: a decision
    made (a bool: :meth:`dshctl.options.base.Options.colored`), so a pipe is coloured when it is True
    (``--color always``) and never when False, whatever rich would guess from ``FORCE_COLOR``; or a
    ``--color`` value to decide by (``auto``: a terminal, unless ``NO_COLOR``)."""
    stream = sys.stderr if stderr else sys.stdout
    if not isinstance(color, bool):
        color = color_wanted(color, stream)
    forced = True if color and not is_terminal(stream) else None
    # rich draws a dumb terminal at 80 × 25 unless told both sizes: it gets the width dshctl planned for
    if width is None:
        width = terminal_width(stream) if stderr else terminal_width()
    return _console_class()(
        stderr=stderr, no_color=not color, highlight=False, soft_wrap=False, width=width, height=terminal_lines(stream),
        markup=False, emoji=False, force_terminal=forced, color_system=color_system(color),
    )


def color_system(color: bool) -> str | None:
    """rich's colour system for a decision made: ``auto`` (what TERM and COLORTERM say), except that
    rich would draw nothing for ``TERM=dumb`` or ``unknown``. ``--color auto`` never decides yes there
    (:func:`dshctl.terminal.color_wanted`), so a yes on such a terminal is colour asked for
    (``--color always``, ``FORCE_COLOR``): the 8 standard colours every terminal has."""
    if not color:
        return None
    return "standard" if dumb_terminal() else "auto"


def stdout_is_terminal() -> bool:
    """Whether standard output is a terminal: tables are then boxed and fitted (tests pretend it is)."""
    return is_terminal(sys.stdout)


def table_form(form: str = "auto") -> str:
    """The form a table is drawn in: ``auto`` is ``box`` on a terminal, else ``plain``."""
    if form not in FORMS:
        raise ValueError(f"unknown table form {form!r}: one of {', '.join(FORMS)}")
    if form != "auto":
        return form
    return "box" if stdout_is_terminal() else "plain"


def text_cell(value: Any, style: str | None = None):
    """A table cell or line as ``rich.text.Text``: literal text (no markup, no emoji codes), one line."""
    from rich.text import Text

    return Text(visible_line(value), style=style or "")


@dataclass(frozen=True)
class Column:
    """One column of a table, as the command declares it.

    ``number``: a figure (digits, units); never cut, never folded. ``fold``: text that may fold onto
    more lines when the table is too wide (ids, values), to no fewer than ``least``
    characters a line (:data:`FOLD_MIN` when unset) while a column can still be hidden, and to
    :data:`FOLD_MIN` when none can (an id that should stay whole has a ``least`` of its length).
    ``cut``: text that stays on one line and is cut with "…" instead (titles: ``"end"``; a cwd, whose end
    tells it apart: ``"start"``; a path, whose first directory and file name do: ``"middle"``), narrowed
    as a folding column is. Other text stays whole.
    No column is ever narrower than its header: a header is one line (``cost USD``, ``mean TTFT``).
    Plain and TSV tables never fold, cut or hide.
    ``drop``: when the table is still too wide, columns are hidden in increasing ``drop`` order
    (``None``: never), and a footer names them. A ``(header, justify)`` pair is a number when
    right-justified, else text that may fold.
    ``tsv``: the header in TSV when its values are in other units there (``LLM ms``). ``beside``: on a
    terminal the column has no box of its own, its cells follow the previous column's after a space (a
    mark); in plain and TSV it is a column. ``forms``: the forms that show the column (default all).
    ``unit``: on a terminal, a unit every value of the column ends with (``0.0061 USD``, the one currency
    of a cost column) moves to its header (``cost USD``), so the column is that much narrower. ``key``: what
    tells rows apart (a title, a start time): a ``distinct`` column narrows to :data:`DISTINCT_FLOOR`
    before it hides, as before a last-resort column (:data:`LAST_RESORT`) hides."""

    header: str
    justify: str = "left"
    number: bool = False
    fold: bool = False
    drop: int | None = None
    least: int | None = None
    cut: str | None = None
    tsv: str | None = None
    beside: bool = False
    forms: tuple[str, ...] = ("box", "plain", "tsv")
    unit: bool = False
    key: bool = False

    @property
    def narrows(self) -> bool:
        """Whether the column may be narrower than its widest cell (it folds or cuts)."""
        return self.fold or self.cut is not None


def number(header: str, drop: int | None = None, *, tsv: str | None = None, forms: tuple[str, ...] | None = None,
           unit: bool = False) -> Column:
    return Column(header, "right", number=True, drop=drop, tsv=tsv, forms=forms or Column.forms, unit=unit)


CUTS = (None, "end", "start", "middle", "distinct")
"""How a ``cut`` column loses characters: at its end (titles), its start (a cwd), its middle (a path),
or around what tells its cells apart (``distinct``: file names of copies of one session, which share a
start and an end, ``tour.session.v4.jsonl.zstd`` beside ``tour.session.v2.jsonl.zstd``)."""


def text(header: str, *, fold: bool = False, drop: int | None = None, least: int | None = None, cut: str | None = None,
         tsv: str | None = None, beside: bool = False, forms: tuple[str, ...] | None = None, key: bool = False) -> Column:
    if cut not in CUTS:
        raise ValueError(f"cut is one of {CUTS}, not {cut!r}")
    return Column(header, "left", fold=fold and cut is None, drop=drop, least=least, cut=cut, tsv=tsv, beside=beside,
                  forms=forms or Column.forms, key=key)


@dataclass(frozen=True)
class Cell:
    """A cell shown as ``text`` and given as ``raw`` in TSV (:func:`raw_text`): a figure as a machine
    reads it, ``None`` for none (an empty field)."""

    text: str
    raw: Any = None


def raw_text(value: Any) -> str:
    """A machine value as a TSV field: integers whole, other numbers in positional notation with the
    digits of their shortest exact form (``0.0000627``, never ``6.27e-05``; no trailing ``.0``), booleans
    ``true``/``false``, none (``None``, NaN) empty, text one line."""
    import math

    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return ""
        return str(int(value)) if value.is_integer() else _positional(repr(value))
    return visible_line(value)


def _positional(shortest: str) -> str:
    """A float's shortest round-trip digits (``repr``) without an exponent: ``6.27e-05`` → ``0.0000627``."""
    if "e" not in shortest:
        return shortest
    from decimal import Decimal

    return format(Decimal(shortest), "f")


def iso_moment(ms: Any) -> str | None:
    """Epoch milliseconds as an ISO 8601 UTC time with milliseconds (a TSV time): ``2026-09-21T14:13:05.120Z``."""
    from .humanize import utc_moment

    moment = utc_moment(ms, "%Y-%m-%dT%H:%M:%S")
    return None if moment is None else f"{moment}.{ms % 1000:03d}Z"


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


def _natural_widths(headers: list[str], rows: list[list[str]], *, words: bool = False) -> list[int]:
    """Each column's widest cell or its header (``words``: the header's longest word)."""
    from rich.cells import cell_len

    widths = [max([cell_len(word) for word in (header.split() if words else [header])] or [1]) for header in headers]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], cell_len(cell))
    return widths


def _header_width(column: Column) -> int:
    """The narrowest a column gets: its header on one line (hiding counts whole headers, so a column
    shown again never folds one)."""
    from rich.cells import cell_len

    return max(cell_len(column.header), 1)


def _least_width(column: Column, natural: int) -> int:
    if not column.narrows:
        return natural
    return min(natural, max(column.least or FOLD_MIN, _header_width(column)))


def _floor_width(column: Column, natural: int) -> int:
    """Below ``least`` only when no column is left to hide: :data:`FOLD_MIN` is the floor (or the
    header's width: a header never folds)."""
    if not column.narrows:
        return natural
    return min(natural, max(min(FOLD_MIN, column.least or FOLD_MIN), _header_width(column)))


EMPTY_RANK = -1
"""The ``drop`` rank of a column with no value in any row (an images table's ``problem`` when there is
none): it hides before every other, in every table."""

LAST_RESORT = 99
"""A column of this ``drop`` rank or more (a cost) hides only when nothing else is left to hide and the
table does not fit with a ``distinct`` column at :data:`DISTINCT_FLOOR` either (as a ``key`` column)."""

DISTINCT_FLOOR = 16
"""The width a ``distinct`` column (the log of copies of a session) narrows to before a last-resort column
hides: it still shows what tells the files apart around the middle of their names."""


def _room_width(column: Column, natural: int) -> int:
    """The width a column takes before a hidden one is shown again: a ``key`` column whole."""
    return natural if column.key else _least_width(column, natural)


def _distinct_floor(column: Column, natural: int) -> int:
    least = _least_width(column, natural)
    return min(least, max(DISTINCT_FLOOR, _header_width(column))) if column.cut == "distinct" else least


SHORT_TAIL = 2
"""A fold that leaves this many characters or fewer on a line of their own splits an id badly."""


def layout(columns: list[Column], rows: list[list[str]], width: int | None) -> _Layout:
    """Fit a table to ``width`` (``None``: a pipe, every column whole): hide a column without a value in
    any row before any cell is cut, then columns in their ``drop`` order until the folding columns fit at their ``least``, then show again, the last hidden first, each
    that fits once a wider one has gone (with the ``key`` columns, and those that hide after it, whole) (a last-resort column, :data:`LAST_RESORT`, stays while a
    ``distinct`` one can narrow to :data:`DISTINCT_FLOOR` instead), fold them, and below ``least`` (to
    :data:`FOLD_MIN`) only when nothing is left to hide; numbers are never cut. A fold that would leave
    one or two characters alone on a line hides one more column, or else folds narrower. A table that
    cannot fit even so is drawn wider than ``width`` rather than cut. No column is narrower than its
    header, which never folds: hiding counts whole headers."""
    natural = _natural_widths([c.header for c in columns], rows)
    by_words = _natural_widths([c.header for c in columns], rows, words=True)
    shown = list(range(len(columns)))
    hidden: list[str] = []
    widths = {i: natural[i] for i in shown}
    if width is not None:
        def fits(indexes: list[int], least_of=_least_width, widths: list[int] = natural) -> bool:
            return _overhead(len(indexes)) + sum(least_of(columns[i], widths[i]) for i in indexes) <= width

        # a column without a value in any row hides before any cell is cut (whatever its rank), for good
        blank = [i for i in shown if rows and all(row[i] in ("", NULL_CELL) for row in rows)]
        while blank and not fits(shown, lambda column, whole: whole):
            shown.remove(blank.pop(0))
        blank_hidden = [i for i in range(len(columns)) if i not in shown]

        def rank(i: int):
            return EMPTY_RANK if i in blank_hidden else columns[i].drop

        droppable = sorted((columns[i].drop, i) for i in shown if columns[i].drop is not None)
        dropped: list[int] = []

        # first as if headers folded at their spaces, so that the columns shown then give room for whole
        # headers by narrowing (a title cut) rather than a column hiding for a header's sake
        while droppable and not fits(shown, widths=by_words):
            drop, next_index = droppable[0]
            if (drop >= LAST_RESORT or columns[next_index].key) and fits(shown, _distinct_floor, by_words):
                break  # the log column of copies narrows to its floor before a cost, a title or a start hides
            _, index = droppable.pop(0)
            shown.remove(index)
            dropped.append(index)
        def room_fits(index: int) -> bool:  # it cuts no title or start shown, nor a column hiding after it
            ahead = {j for j in shown if rank(j) is not None and rank(j) > rank(index)}
            return _overhead(len(shown) + 1) + sum(natural[j] if j in ahead else _room_width(columns[j], natural[j])
                                                   for j in [*shown, index]) <= width

        for index in reversed(dropped):  # a column hidden before a wider one went may fit again, in the room left
            if room_fits(index):
                shown = sorted([*shown, index])
                droppable = sorted([*droppable, (rank(index), index)])
        while not fits(shown):  # whole headers: a key stays whole while another column can hide
            plain = [(drop, i) for drop, i in droppable if drop < LAST_RESORT and not columns[i].key]
            if not plain:
                break
            droppable.remove(plain[0])
            shown.remove(plain[0][1])
            dropped.append(plain[0][1])
        while droppable and not fits(shown, _floor_width):  # a header never folds: hide one more
            _, index = droppable.pop(0)
            shown.remove(index)
            dropped.append(index)
        hidden = [columns[i].header for i in [*blank_hidden, *dropped] if i not in shown]
        widths = _folded(width, shown, columns, natural, rows)
        if droppable and _short_tails(widths, columns, rows, natural):
            fewer = [i for i in shown if i != droppable[0][1]]
            trial = _folded(width, fewer, columns, natural, rows)
            if not _short_tails(trial, columns, rows, natural):
                shown, widths = fewer, trial
                hidden = [columns[i].header for i in sorted(set(range(len(columns))) - set(shown), key=lambda i: (rank(i), i))]
        _fold_evenly(widths, columns, rows, natural)
    return _Layout(shown, widths, hidden, _overhead(len(shown)) + sum(widths.values()))


def _folded(width: int, shown: list[int], columns: list[Column], natural: list[int],
            rows: list[list[str]] | None = None) -> dict[int, int]:
    widths = {i: natural[i] for i in shown}
    room = width - _overhead(len(shown))
    _fold_to(room, columns, widths, natural, _least_width)
    if rows and len(rows) > 1:  # below their least, cells that are all alike (copies' titles) are cut first
        alike = [i for i in shown if columns[i].cut is not None and len({row[i] for row in rows}) == 1]
        _fold_to(room, columns, widths, natural, _floor_width, alike)
    _fold_to(room, columns, widths, natural, _floor_width)
    return widths


def _fold_to(room: int, columns: list[Column], widths: dict[int, int], natural: list[int], least_of,
             among: list[int] | None = None) -> None:
    """Narrow the folding columns (of ``among``), widest first, to no less than ``least_of(column,
    natural)``, until the cells take ``room`` characters at most."""
    excess = sum(widths.values()) - room
    folding = [i for i in (widths if among is None else among) if columns[i].narrows]
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
    stub), else to the widest such width above the floor; never narrower than its header."""
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
        candidates = [w for w in (even, *range(width - 1, floor - 1, -1)) if w >= _header_width(columns[i])]
        widths[i] = next((w for w in candidates if not _leaves_short_tail(words, w)), width)


def print_table(
    title: str | None,
    columns: list,
    rows: Iterable[list[Any]],
    caption: str | None = None,
    *,
    color: bool | str = "auto",
    form: str = "auto",
    listing: bool = False,
) -> None:
    """A table on stdout in ``form`` (:func:`table_form`): the title in bold above it, the caption below
    (TSV: neither). ``columns`` are :class:`Column` (or ``(header, justify)`` pairs); every cell is
    literal text (:func:`text_cell`), or a :class:`Cell` whose machine value TSV gives. Boxed, the table fits the terminal's width as :func:`layout`
    says, with a footer naming hidden columns; plain and TSV, each row is one line, whatever its length.
    ``listing``: the command's only table, whose caption (a count) is shown on a terminal only, so that
    every line a pipe reads is the header or a row."""
    specs = [_as_column(column) for column in columns]
    form = table_form(form)
    if form == "tsv":
        cells = [[raw_text(cell.raw) if isinstance(cell, Cell) else _tsv_field(visible_line(cell)) for cell in row] for row in rows]
    else:
        cells = [[visible_line(cell.text if isinstance(cell, Cell) else cell) for cell in row] for row in rows]
    specs, cells = _in_form(form, specs, cells)
    if form == "box":  # the one home of a cell without a value: "—" here, "-" in plain, empty in TSV
        cells = [[cell or NULL_CELL for cell in row] for row in cells]
    if listing and form != "box":
        caption = None
    if form == "tsv":
        _print_tsv(specs, cells)
    elif form == "plain":
        _print_plain(title, specs, cells, caption, color)
    else:
        _print_box(title, specs, cells, caption, color)


def _tsv_field(cell: str) -> str:
    return "" if cell == NULL_CELL else cell


def _in_form(form: str, specs: list[Column], cells: list[list[str]]) -> tuple[list[Column], list[list[str]]]:
    """The columns ``form`` shows, and on a terminal each ``beside`` column's cells after the cells of the
    column before it."""
    keep = [i for i, spec in enumerate(specs) if form in spec.forms]
    if form == "box":
        merged: list[int] = []
        joined = [list(row) for row in cells]
        for i in keep:
            if specs[i].beside and merged:
                for row in joined:
                    if row[i]:
                        row[merged[-1]] = f"{row[merged[-1]]} {row[i]}" if row[merged[-1]] else row[i]
            else:
                merged.append(i)
        return [specs[i] for i in merged], [[row[i] for i in merged] for row in joined]
    if form == "tsv":
        return ([replace(specs[i], header=specs[i].tsv or specs[i].header) for i in keep],
                [[row[i] for i in keep] for row in cells])
    return [specs[i] for i in keep], [[row[i] for i in keep] for row in cells]


def _units_in_headers(specs: list[Column], cells: list[list[str]]) -> list[Column]:
    """Each ``unit`` column whose values all end with one unit (a value and the unit, a space apart; a
    cell without a value, or a bare number such as ``0``, has none) shows it in its header instead."""
    for i, spec in enumerate(specs):
        if not spec.unit:
            continue
        units = set()
        for row in cells:
            parts = row[i].split(" ")
            if len(parts) == 2:
                units.add(parts[1])
            elif len(parts) > 2 or not (row[i] in ("", NULL_CELL) or _is_number(row[i])):
                units.add(None)
        if len(units) != 1 or None in units:
            continue
        (unit,) = units
        specs[i] = replace(spec, header=f"{spec.header} {unit}")
        for row in cells:
            parts = row[i].split(" ")
            if len(parts) == 2:
                row[i] = parts[0]
    return specs


def _is_number(cell: str) -> bool:
    try:
        float(cell.replace(",", ""))
    except ValueError:
        return False
    return True


def _print_box(title: str | None, specs: list[Column], cells: list[list[str]], caption: str | None, color: bool | str) -> None:
    from rich import box
    from rich.table import Table

    specs = _units_in_headers(list(specs), cells)
    width = terminal_width()
    fitted = layout(specs, cells, width)
    out = console(color=color, width=max(fitted.width, width or 0))
    table = Table(header_style="bold", box=box.HEAVY_HEAD)
    for i in fitted.shown:
        spec = specs[i]
        table.add_column(_header_cell(spec.header), justify=spec.justify, width=fitted.widths[i],
                         overflow="fold", no_wrap=not spec.fold)
    logs = {i: _log_cut([row[i] for row in cells], fitted.widths[i]) for i in fitted.shown if specs[i].cut == "distinct"}
    whole = {i: rule for i, (rule, apart) in logs.items() if apart}
    spans = {i: _distinct_marks([row[i] for row in cells]) for i in logs if i not in whole}
    shown = [[whole[i][row[i]] if i in whole else _cut(row[i], fitted.widths[i], specs[i].cut, spans.get(i, {}).get(row[i]))
              for i in fitted.shown] for row in cells]
    for at, i in enumerate(fitted.shown):
        if i in spans:
            _part_alike(cells, shown, i, at, fitted.widths[i])
            column = _one_rule([row[i] for row in cells], [line[at] for line in shown], logs[i][0])
            for line, cell in zip(shown, column):
                line[at] = cell
    for row in shown:
        table.add_row(*[text_cell(cell) for cell in row])
    if title:
        _print_line(out, title, "bold")
    out.print(table)
    for line in (caption or "").split("\n") if caption else []:  # dshctl's own line breaks
        _print_line(out, line)
    if fitted.hidden:
        _print_line(out, f"hidden to fit {width} columns: {', '.join(fitted.hidden)} (wider terminal, --plain or --json shows all)")


def _log_cut(cells: list[str], width: int) -> tuple[dict[str, str] | None, bool]:
    """The cells of a log column cut by one rule for the whole column, the first of these that keeps
    apart the rows that differ: each file name (its directories, which the rows share or which tell them
    apart less, dropped) cut at its end; each path cut at its start (its file name's end, and the
    ``.session.v2.jsonl`` all rows share, kept); each file name cut in its middle. With whether it keeps
    them all apart; when none does, the rule that keeps the most apart (:func:`_cut_around` then cuts
    each cell around what tells it from its likest neighbours, and :func:`_one_rule` chooses); ``None``
    when every cell fits."""
    import posixpath

    from rich.cells import cell_len

    values = sorted({cell for cell in cells if cell and cell != NULL_CELL})
    if all(cell_len(value) <= width for value in values):
        return None, False

    def name(value: str) -> str:
        return posixpath.basename(value) or value

    rules = (
        lambda value: _cut(name(value), width, "end"),
        lambda value: _cut(value, width, "start"),
        lambda value: _cut(name(value), width, "middle"),
    )
    best = None
    for rule in rules:
        shown = {value: value if cell_len(value) <= width else rule(value) for value in values}
        if len(set(shown.values())) == len(values):
            return shown, True
        if best is None or len(set(shown.values())) > len(set(best.values())):
            best = shown
    return best, False


def _one_rule(cells: list[str], shown: list[str], best: dict[str, str] | None) -> list[str]:
    """A log column's cells as ``best``, the one-rule cut of :func:`_log_cut`, when it tells apart as many
    rows as ``shown`` (the cut around what differs, which mixes forms: an end cut here, a start cut there)
    does: a column read down one way is easier to scan, and a rule that keeps fewer apart loses to the
    mixed cut."""
    if best is None:
        return shown
    values = {cell for cell in cells if cell and cell != NULL_CELL}
    mixed = len({line for cell, line in zip(cells, shown) if cell in values})
    if len(set(best.values())) < mixed:
        return shown
    return [best.get(cell, line) for cell, line in zip(cells, shown)]


NEIGHBOURS = 3
"""How many cells either side, in sorted order of their starts and of their ends, a cell of a
``distinct`` column is told apart from (those share the most with it)."""


def _distinct_marks(cells: list[str]) -> dict[str, list[tuple[int, int]]]:
    """For each distinct cell of a column, for each cell sharing much with it, two positions where the
    two differ: the first after their shared start, the last before their shared end."""
    import os

    values = sorted({cell for cell in cells if cell and cell != NULL_CELL})
    if len(values) < 2:
        return {}
    backwards = sorted(values, key=lambda value: value[::-1])
    near: dict[str, set[str]] = {value: set() for value in values}
    for ordered in (values, backwards):
        for i, value in enumerate(ordered):
            near[value].update(ordered[max(0, i - NEIGHBOURS):i] + ordered[i + 1:i + 1 + NEIGHBOURS])
    spans = {}
    for value in values:
        marks = []
        for other in near[value]:
            first = min(len(os.path.commonprefix([value, other])), len(value) - 1)
            last = max(0, len(value) - 1 - len(os.path.commonprefix([value[::-1], other[::-1]])))
            marks.append((len(value) - 1 - last + first, first, last))
        spans[value] = [(first, last) for _, first, last in sorted(marks, reverse=True)]  # the likest first
    return spans


def _window(marks: list[tuple[int, int]], length: int, room: int) -> tuple[int, int]:
    """The ``[start, stop)`` of at most ``room`` characters that holds one position of each pair of
    ``marks`` it can, the first pairs (the likest cells) before the others; the shortest such, and the
    latest of equals."""
    best: tuple = ((), 0, 0, length)
    for start in sorted({x for pair in marks for x in pair}):
        held = [min((x for x in pair if start <= x < start + room), default=None) for pair in marks]
        stop = max((x for x in held if x is not None), default=start) + 1
        key = (tuple(x is not None for x in held), -(stop - start), start)
        if key > best[:3]:
            best = (*key, stop)
    return best[2], best[3]


def _part_alike(cells: list[list[str]], shown: list[list[str]], index: int, at: int, width: int) -> None:
    """Cells of a ``distinct`` column that still look alike once cut (they differ both near their start
    and near their end, further apart than the column is wide): their start, "…", and their end."""
    values: dict[str, set[str]] = {}
    for row, line in zip(cells, shown):
        values.setdefault(line[at], set()).add(row[index])
    alike = {value for group in values.values() if len(group) > 1 for value in group}
    head = max(1, (width - 1) // 4)
    for row, line in zip(cells, shown):
        if row[index] in alike:
            tail = _fitting(row[index][head:][::-1], width - 1 - head)[::-1]
            line[at] = row[index][:head] + ELLIPSIS + tail


def _cut(cell: str, width: int, side: str | None, span: list[tuple[int, int]] | None = None) -> str:
    """A cell of a ``cut`` column that fits ``width`` cells: "…" where it was cut (its end, its start,
    its middle, or around ``span``, the marks of :func:`_distinct_marks`)."""
    from rich.cells import cell_len

    if side is None or cell_len(cell) <= width:
        return cell
    if side == "distinct" and span is not None:
        return _cut_around(cell, width, span)
    if side in ("middle", "distinct"):
        head = _fitting(cell, (width - 1) // 2)
        tail = _fitting(cell[::-1], width - 1 - cell_len(head))[::-1]
        return head + ELLIPSIS + tail
    if side == "end":
        return _fitting(cell, width - 1).rstrip() + ELLIPSIS
    return ELLIPSIS + _fitting(cell[::-1], width - 1)[::-1].lstrip()


def _cut_around(cell: str, width: int, marks: list[tuple[int, int]]) -> str:
    """``cell`` cut to ``width`` keeping where it differs from the column's cells most like it (one of
    each pair of ``marks``, as many as fit), with as much of what is around as fits, "…" on the sides
    cut; when even that part does not fit, its end."""
    from rich.cells import cell_len

    start, stop = _window(marks, len(cell), max(1, width - 2))

    def fits(a: int, b: int) -> bool:
        return cell_len(cell[a:b]) + (a > 0) + (b < len(cell)) <= width

    if not fits(start, stop):
        a = stop
        while a > 0 and fits(a - 1, stop):
            a -= 1
        return (ELLIPSIS if a > 0 else "") + cell[a:stop] + (ELLIPSIS if stop < len(cell) else "")
    a, b = start, stop
    while b < len(cell) and fits(a, b + 1):  # what follows first (a file name's end), then what precedes
        b += 1
    while a > 0 and fits(a - 1, b):
        a -= 1
    return (ELLIPSIS if a > 0 else "") + cell[a:b] + (ELLIPSIS if b < len(cell) else "")


def _fitting(text: str, room: int) -> str:
    """The longest start of ``text`` that takes at most ``room`` cells."""
    from rich.cells import cell_len

    used = 0
    for index, char in enumerate(text):
        used += cell_len(char)
        if used > room:
            return text[:index]
    return text


def _print_plain(title: str | None, specs: list[Column], cells: list[list[str]], caption: str | None, color: bool | str) -> None:
    """Borderless: the header and one line per row, columns two spaces apart, numbers right-aligned;
    an empty cell, and one without a value ("—" on a terminal), shows "-" (one placeholder); nothing is
    folded, cut or hidden. A unit every value of a column has is in its header, as on a terminal
    (``cost USD``), and a figure holds no space (``25.4KiB``, as ``docker images`` prints sizes), so
    ``awk '{print $NF}'`` finds the figure a row ends with."""
    from rich.cells import cell_len

    cells = [list(row) for row in cells]
    specs = _units_in_headers(list(specs), cells)  # strips the unit from the cells
    cells = [[cell.replace(" ", "") if spec.number else cell for spec, cell in zip(specs, row)] for row in cells]
    rows = [[cell if cell and cell != NULL_CELL else PLAIN_EMPTY for cell in row] for row in cells]
    headers = [spec.header for spec in specs]
    widths = [max([cell_len(headers[i])] + [cell_len(row[i]) for row in rows]) for i in range(len(specs))]

    def line(values: list[str]) -> str:
        padded = []
        for i, value in enumerate(values):
            room = widths[i] - cell_len(value)
            last = i == len(values) - 1
            padded.append(" " * room + value if specs[i].number else value + ("" if last else " " * room))
        return PLAIN_GAP.join(padded)

    out = console(color=color)
    if title:
        _print_line(out, title, "bold", wrap=False)
    _print_line(out, line(headers), "bold", wrap=False)
    lines = [line(row) for row in rows]
    _write_lines(out, lines)
    for text in (caption or "").split("\n") if caption else []:
        _print_line(out, text, wrap=False)


def _print_tsv(specs: list[Column], cells: list[list[str]]) -> None:
    """Tab-separated: the header line, then a line per row; a cell the table shows as "—" is empty, a
    :class:`Cell` is its machine value. Cells hold no tab or line break (they are shown as pictures, ␉ ␊)."""
    lines = ["\t".join(spec.header for spec in specs)]
    lines += ["\t".join(row) for row in cells]
    sys.stdout.write("\n".join(lines) + "\n")


def _write_lines(out, lines: list[str]) -> None:
    """Lines of text as they are, through the console (colour, the closed-pipe rule)."""
    if lines:
        out.file.write("\n".join(lines) + "\n")


def _header_cell(header: str):
    """A header on one line (its column is at least as wide)."""
    cell = text_cell(header)
    cell.no_wrap = True
    return cell


def _print_line(out, line: str, style: str | None = None, *, wrap: bool | None = None) -> None:
    """A line of dshctl's own text; wrapped only on a terminal (``wrap`` None) or when ``wrap``."""
    if wrap is None:
        wrap = stdout_is_terminal() and terminal_width() is not None
    out.print(text_cell(line, style), soft_wrap=not wrap)


def distinct_paths(paths: list[str | None]) -> list[str]:
    """Paths without the directories they all start with (what tells copies of one session apart)."""
    import os

    known = [path for path in paths if path]
    parts = [path.split(os.sep) for path in known]
    shared = 0
    if parts:
        shortest = min(len(p) for p in parts)
        while shared < shortest - 1 and len({p[shared] for p in parts}) == 1:
            shared += 1
    return [os.sep.join(path.split(os.sep)[shared:]) if path else "—" for path in paths]


DISTINCT_LEAST = 32
"""A ``log`` column naming copies of a session stays whole up to this width while another column can be
hidden: what tells the copies apart is the one thing its rows do not share (their titles, cwds and
figures are the same), so it goes narrow last, not first because it is the widest."""


def distinct_least(paths: list[str]) -> int:
    """The least width of a column of :func:`distinct_paths`: the longest, up to :data:`DISTINCT_LEAST`."""
    from rich.cells import cell_len

    return min(DISTINCT_LEAST, max((cell_len(path) for path in paths), default=FOLD_MIN))


class SessionNames:
    """How a table names the sessions of its rows, by the rule grep's lines follow too
    (:func:`dshctl.source.shown_ids`): the shortest prefix of each id (as git shows hashes) that no other
    row and no session of the sessions root shares — an id shown is a PATH that ``find_session`` resolves
    for a session of the sessions root (never inside a DIR argument: TSV's ``log`` column is the path
    there) — the log's path when it has no id."""

    def __init__(self, ids: list[Any]):
        from .source import shown_ids

        self._short = shown_ids(ids)
        self.longest = max(map(len, self._short.values()), default=0)
        """The longest short id: a column of them is at least this wide while another can be hidden."""

    def __call__(self, session_id: Any, path: str) -> str:
        return self._short.get(session_id, path) if isinstance(session_id, str) and session_id else path


class Tables:
    """Tables and lines on stdout drawn one way: with or without colour, in one form (``auto``,
    ``plain``, ``tsv``); plain tables are set apart by an empty line; TSV is one table (a header line and
    its rows, what a program reads back), so a second is a bug of the command, and prints no titles,
    captions or other lines."""

    def __init__(self, *, color: bool | str = "auto", form: str = "auto"):
        self.color = color
        self.form = table_form(form)
        self._tables = 0

    def table(self, title: str | None, columns: list, rows: Iterable[list[Any]], caption: str | None = None) -> None:
        if self._tables and self.form == "tsv":
            raise AssertionError(f"--tsv is one table: a second ({title}) was asked for")
        if self._tables and self.form != "box":
            sys.stdout.write("\n")
        self._tables += 1
        print_table(title, columns, rows, caption, color=self.color, form=self.form)

    def line(self, text: str) -> None:
        if self.form != "tsv":
            print_line(text, color=self.color, wrap=None if self.form == "box" else False)


def print_line(text: str, *, color: bool | str = "auto", wrap: bool | None = None) -> None:
    """One line of literal text on stdout, through the same console as the tables (wrapped on a
    terminal, unless ``wrap`` says)."""
    _print_line(console(color=color), text, wrap=wrap)


