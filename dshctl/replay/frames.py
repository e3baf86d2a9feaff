"""What a terminal is sent, fragment by fragment, to show a replay as the player shows it: the cast export
and the timed stream (``dshctl replay LOG`` with only standard output a terminal) write it.

Outside a region this is the transcript (:mod:`.transcript`), fragment by fragment: each fragment's
output is appended. Inside a region (the interleaved blocks of one message, :mod:`.layout`) a fragment
may grow a block above the last one, as the player redraws it in place: the output then moves the
cursor back to the start of the line where the layout changed (``CR``, ``CUU n``), erases below
(``ED 0``) and writes the layout again from there. The rows to go back are counted as a terminal of
the given width wraps them (cell widths, tab stops); a change further up than the screen holds can no
longer be reached, so the rows from the top of the screen down are written again — the screen then
shows exactly what the player shows, the scrollback above keeps the earlier rows. Once the region is
complete the screen holds its finished layout, the transcript's.

So a cast's output is the transcript with ``\\n`` written as ``\\r\\n`` for every log whose messages do
not interleave blocks; where they do, played in a terminal it ends on the transcript's screen.

**Linear in the fragments.** A region's layout is kept as it grows (:class:`_Layout`): each block's
marks and its fragments' output, each with the offsets where its lines and its terminal rows start, and
sums over them kept as they change. A fragment lays out only itself (and the marks of the blocks after
it when it changes where its block ends); the first difference, the line it is on, the rows back to the
cursor and the row the screen starts at are found from those sums, never by reading the layout again.
The output written is what changed (a fragment at the end) or at most the screen from the changed line
down. The first difference is where the block grew unless the text that follows it happens to repeat
what was there; that repetition is followed for at most :data:`COINCIDENCE_LIMIT` characters, past
which the layout is redrawn from there (the screen is the same, the output a little longer).
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from typing import Iterator

from . import layout, view
from .items import Item
from .timeline import Timeline
from .transcript import Stamper, fragment_outputs, trimmed
from .view import Segment
from .wrap import FrameWrap

CURSOR_UP = "\x1b[{}A"
ERASE_BELOW = "\x1b[J"
COINCIDENCE_LIMIT = 4096
"""Characters the output after a grown block is compared with what it replaces, when it shifted."""


def terminal_output(
    timeline: Timeline, start: int = 0, *, color: bool = False, timestamps: bool = False, cols: int = 100, rows: int = 30,
    wrap: bool = False,
) -> Iterator[tuple[int, str]]:
    """``(fragment index, output)`` for every fragment from ``start`` on, in the order they streamed,
    building the timeline as it goes; ``cols``×``rows`` is the terminal the output is for. ``wrap``: a
    frame's rows are folded at ``cols`` with their border (:mod:`.wrap`), as the timed stream shows them
    (a cast is the transcript, as asciinema records it, and is not)."""
    wrapper = FrameWrap(cols) if wrap else None

    def region(item: Item, k: int, stamp: Stamper | None, trim: bool):
        yield from _region_output(item, k, color, stamp, trim, cols, rows, wrapper)
        return False

    return fragment_outputs(timeline, start, color=color, timestamps=timestamps, region=region, wrap=wrapper)


def _region_output(item: Item, first: int, color: bool, stamp: Stamper | None, trim: bool, cols: int, rows: int,
                   wrap: FrameWrap | None = None) -> Iterator[tuple[int, str]]:
    """The region's fragments from ``first`` (region-relative) on: the first shows the layout so far, each
    next one what changes it."""
    stamped = stamp.line_start if stamp is not None else True
    laid = _Layout(item, stamp, stamped if wrap is None else (stamped, wrap.state), trim, cols, wrap)
    for member in range(first + 1):
        laid.add(member)
    yield item.start + first, laid.output(0, color)
    reach = max(rows - 1, 0)
    for member in range(first + 1, item.count):
        yield item.start + member, laid.grow(member, color, reach)
    if wrap is not None:
        wrap.state = laid.final_state()[1]
    if stamp is not None:
        stamp.line_start = laid.ends_line(stamped)


def row_starts(text: str, cols: int) -> list[int]:
    """The offsets in ``text`` where a terminal ``cols`` cells wide starts a row, writing it from the
    start of a row: a line break starts one, and so does a character that no longer fits (a wide
    character that would straddle the edge wraps whole); a tab moves to the next stop of 8 (at most to
    the last column)."""
    starts = array("q", [0])
    _scan(text, 0, 0, max(cols, 1), starts, array("q"))
    return list(starts)


def _scan(text: str, base: int, col: int, cols: int, rows: array, newlines: array) -> int:
    """Lay ``text`` (at offset ``base``, the cursor in column ``col``) into rows: append the offsets where
    its line breaks are and where its rows start; returns the column after it."""
    if "\n" not in text:
        return _scan_line(text, base, col, cols, rows) if text else col
    position = base
    for n, line in enumerate(text.split("\n")):
        if n:
            newlines.append(position)
            position += 1
            rows.append(position)
            col = 0
        if line:
            col = _scan_line(line, position, col, cols, rows)
            position += len(line)
    return col


def _scan_line(line: str, base: int, col: int, cols: int, rows: array) -> int:
    """:func:`_scan` for text without a line break."""
    if line.isascii() and line.isprintable():  # one cell a character: the rows are arithmetic
        size = len(line)
        wrap = max(cols - col, 0)  # the first character that no longer fits
        if wrap >= size:
            return col + size
        rows.extend(range(base + wrap, base + size, cols))
        return (size - wrap - 1) % cols + 1
    from rich.cells import get_character_cell_size

    for offset, char in enumerate(line):
        if char == "\t":
            col = min((col // 8 + 1) * 8, cols - 1) if col < cols else col
            continue
        width = 1 if " " <= char < "\x7f" else get_character_cell_size(char)
        if col + width > cols and col:  # at column 0 it is the row's first character, however wide
            rows.append(base + offset)
            col = 0
        col += width
    return col


class _Run:
    """A stretch of a region's output — one block's marks, or its fragments' output — with the offsets
    (from its start) where its segments end, its line breaks are and its rows start. It starts a row: a
    run either begins with a line break or follows one (:mod:`.layout` puts every mark on lines of its
    own), so rows counted from its start are the terminal's."""

    __slots__ = ("segments", "colored", "ends", "newlines", "rows", "col", "length")

    def __init__(self) -> None:
        self.segments: list[Segment] = []
        self.colored: list[str] = []  # each segment with its SGR colour, made when first written
        self.ends = array("q")
        self.newlines = array("q")
        self.rows = array("q", [0])
        self.col = 0
        self.length = 0

    def extend(self, segments: list[Segment], cols: int) -> None:
        for text, style in segments:
            if text:
                self.segments.append((text, style))
                self.col = _scan(text, self.length, self.col, cols, self.rows, self.newlines)
                self.length += len(text)
                self.ends.append(self.length)

    def segments_from(self, offset: int) -> list[Segment]:
        index = bisect_right(self.ends, offset)
        if index >= len(self.segments):
            return []
        text, style = self.segments[index]
        begin = self.ends[index - 1] if index else 0
        return [(text[offset - begin :], style)] + self.segments[index + 1 :]

    def text(self, offset: int = 0) -> str:
        return "".join(text for text, _ in self.segments_from(offset)) if offset else "".join(text for text, _ in self.segments)

    def output(self, offset: int, color: bool) -> str:
        """Its output from ``offset`` on (each segment's colour is its own: they are coloured once)."""
        if not color:
            return self.text(offset)
        index = bisect_right(self.ends, offset)
        if index >= len(self.segments):
            return ""
        colored = self.colored
        for segment in self.segments[len(colored) :]:
            colored.append(view.ansi((segment,)))
        begin = self.ends[index - 1] if index else 0
        if offset == begin:
            return "".join(colored[index:])
        text, style = self.segments[index]
        return view.ansi(((text[offset - begin :], style),)) + "".join(colored[index + 1 :])


class _Sums:
    """The sums of one value over the runs, kept as values change (a Fenwick tree): prefix sums and the
    run a running total falls in, in a time that does not grow with the fragments."""

    __slots__ = ("values", "tree", "total", "top")

    def __init__(self, size: int) -> None:
        self.values = [0] * size
        self.tree = [0] * (size + 1)
        self.total = 0
        self.top = 1 << size.bit_length() if size else 0

    def set(self, index: int, value: int) -> None:
        delta = value - self.values[index]
        if not delta:
            return
        self.values[index] = value
        self.total += delta
        tree, size = self.tree, len(self.values)
        index += 1
        while index <= size:
            tree[index] += delta
            index += index & -index

    def before(self, index: int) -> int:
        """The sum over the runs before run ``index``."""
        tree, total = self.tree, 0
        while index > 0:
            total += tree[index]
            index -= index & -index
        return total

    def find(self, k: int) -> tuple[int, int]:
        """``(run, k - the sum before it)`` for the run where the running sum passes ``k``."""
        tree, size, position, step = self.tree, len(self.values), 0, self.top
        while step:
            ahead = position + step
            if ahead <= size and tree[ahead] <= k:
                position = ahead
                k -= tree[ahead]
            step >>= 1
        return position, k


class _Layout:
    """A region's layout as it grows, fragment by fragment, laid into a terminal's rows: for each block
    (in the region's block order) a run for its marks and a run for its fragments (runs ``2u`` and
    ``2u + 1``), and the state each block leaves behind for the next (:func:`.layout.marks`)."""

    def __init__(self, item: Item, stamp: Stamper | None, line_start, trim: bool, cols: int, wrap: FrameWrap | None = None) -> None:
        """``line_start``: the stamper's (whether the output before the region ends a line); with ``wrap``,
        the pair of it and the wrap's state, which the state each block is drawn from carries too."""
        region = item.region
        self.item = item
        self.stamp = stamp
        self.wrap = wrap
        self.cols = max(cols, 1)
        self.parts = region.parts
        self.offsets = region.offsets
        units = len(region.blocks)
        self.block_of: list[int | None] = [None] * len(region.parts)
        for unit, block in enumerate(region.blocks):
            for index in block:
                self.block_of[index] = unit
        self.runs = [_Run() for _ in range(2 * units)]
        self.pieces: list[list[tuple[int, list[Segment]]]] = [[] for _ in range(units)]  # fragments shown, as the view draws them
        self.frame: list[bool | None] = [None] * units
        self.last: list[str | None] = [None] * units  # the last text of a block's fragments
        self.marks_last: list[str | None] = [None] * units  # and of its marks
        # the state before a block, after it, and the one its fragments were drawn from and end in:
        # (first, ends_line, open_frame, line_start, trim) and (line_start, trim)
        self.initial = (True, True, False, line_start, trim)
        self.enter = [self.initial] * units
        self.leave = [self.initial] * units
        self.started = _Sums(units)  # 1 for a block that shows something
        self.drawn_from: list[tuple[bool, bool] | None] = [None] * units
        self.drawn_to: list[tuple[bool, bool]] = [(line_start, trim)] * units
        self.lengths = _Sums(2 * units)
        self.row_counts = _Sums(2 * units)  # rows a run adds (those it starts after its first)
        self.newline_counts = _Sums(2 * units)
        self.changed: list[tuple[int, _Run]] = []
        self.relaid = 0
        """Fragments drawn again since the layout began (for the tests: each is drawn once, unless a
        block's start state changes)."""

    # -- growing --------------------------------------------------------------

    def add(self, member: int) -> None:
        """Show the region's fragment ``member`` (the next one, in the order they streamed)."""
        self.changed = []
        index = bisect_right(self.offsets, member) - 1
        unit = self.block_of[index]
        if unit is None:  # a part of no block is never shown
            return
        part = self.parts[index]
        k = member - self.offsets[index]
        if k == 0:
            self.frame[unit] = layout.frame_after(part, self.frame[unit])
        segments = view.segments(part, k)
        text = layout.last_text(segments)
        if text is not None:
            self.last[unit] = text
        pieces = self.pieces[unit]
        pieces.append((part.start + k, segments))
        if len(pieces) == 1:  # the block's first fragment: it starts in the state the block shown above it leaves
            self.started.set(unit, 1)
            above = self._started_before(unit)
            self.enter[unit] = self.initial if above is None else self.leave[above]
            self._lay(unit)
        else:
            body = self.runs[2 * unit + 1]
            self.changed.append((2 * unit + 1, body.length))
            drawn, line_start, trim = self._draw(segments, part.start + k, *self.drawn_to[unit])
            self.drawn_to[unit] = (line_start, trim)
            body.extend(drawn, self.cols)
            self._measure(2 * unit + 1)
            self.leave[unit] = self._leaving(unit)
        above = unit
        below = self._started_after(unit)
        while below is not None and self.leave[above] != self.enter[below]:  # the blocks below, until one starts as it did
            self.enter[below] = self.leave[above]
            self._lay(below)
            above, below = below, self._started_after(below)

    def _started_before(self, unit: int) -> int | None:
        """The last block above ``unit`` that shows something, if any (a block not begun passes its state on)."""
        count = self.started.before(unit)
        return self.started.find(count - 1)[0] if count else None

    def _started_after(self, unit: int) -> int | None:
        count = self.started.before(unit + 1)
        return self.started.find(count)[0] if count < self.started.total else None

    def _lay(self, unit: int) -> None:
        """Lay block ``unit`` out again from the state before it: its marks, and its fragments if they
        start in another state than they were drawn from."""
        first, ends_line, open_frame, line_start, trim = self.enter[unit]
        fragment = self.pieces[unit][0][0]
        marks = layout.marks(self.item, first, ends_line, open_frame)
        self.marks_last[unit] = layout.last_text(marks)
        drawn, line_start, trim = self._draw(marks, fragment, line_start, trim)
        run = _Run()
        run.extend(drawn, self.cols)
        self._replace(2 * unit, run)
        if self.drawn_from[unit] != (line_start, trim):
            self.drawn_from[unit] = (line_start, trim)
            run = _Run()
            for fragment, segments in self.pieces[unit]:
                drawn, line_start, trim = self._draw(segments, fragment, line_start, trim)
                run.extend(drawn, self.cols)
            self.drawn_to[unit] = (line_start, trim)
            self._replace(2 * unit + 1, run)
        self.leave[unit] = self._leaving(unit)

    def final_state(self):
        """The ``line_start`` state after the layout (that of its last block shown)."""
        last = self._started_before(len(self.pieces))
        return self.initial[3] if last is None else self.drawn_to[last][0]

    def _leaving(self, unit: int) -> tuple:
        first, ends_line, _, _, _ = self.enter[unit]
        last = self.last[unit] if self.last[unit] is not None else self.marks_last[unit]
        return (False, last.endswith("\n") if last is not None else ends_line, bool(self.frame[unit]), *self.drawn_to[unit])

    def _draw(self, segments: list[Segment], fragment: int, line_start: bool, trim: bool) -> tuple[list[Segment], bool, bool]:
        """Segments as the output shows them: timestamped, and without the line breaks output that starts
        mid-session drops before its first text; with the state after them."""
        self.relaid += 1
        if self.wrap is not None:
            line_start, wrapped = line_start
        if self.stamp is not None:
            segments, line_start = self.stamp.segments(segments, fragment, self.item.synthetic, line_start)
        if trim:
            segments = trimmed(segments)
            trim = not segments
        if self.wrap is not None:
            self.wrap.state = wrapped
            segments = self.wrap.feed(segments)
            line_start = (line_start, self.wrap.state)
        return segments, line_start, trim

    def _replace(self, index: int, run: _Run) -> None:
        self.changed.append((index, self.runs[index]))
        self.runs[index] = run
        self._measure(index)

    def _measure(self, index: int) -> None:
        run = self.runs[index]
        self.lengths.set(index, run.length)
        self.row_counts.set(index, len(run.rows) - 1)
        self.newline_counts.set(index, len(run.newlines))

    # -- the output of a change -------------------------------------------------

    def grow(self, member: int, color: bool, reach: int) -> str:
        """Show fragment ``member``; the output that turns a terminal showing the layout before it (the
        cursor after it) into one showing the layout with it (``reach``: rows above the cursor's on screen)."""
        old_length, old_rows = self.lengths.total, self.row_counts.total + 1
        self.add(member)
        same = self._same(old_length)
        if same >= old_length:
            return self.output(old_length, color)
        line = self._line_start(same)
        back = old_rows - 1 - self._row_of(line)  # rows from that line's first to the cursor's
        if back <= reach:
            return "\r" + (CURSOR_UP.format(back) if back else "") + ERASE_BELOW + self.output(line, color)
        # the line changed is above the screen: write the rows from the top of the screen down again
        top = self._row_start(old_rows - 1 - reach)
        return "\r" + (CURSOR_UP.format(reach) if reach else "") + ERASE_BELOW + self.output(top, color)

    def _same(self, old_length: int) -> int:
        """How many characters of the layout before the last fragment the layout now starts with."""
        if not self.changed:
            return old_length
        changed: dict[int, int | _Run] = {}
        for index, before in self.changed:
            changed.setdefault(index, before)  # a run replaced twice: what it was first
        indexes = sorted(changed)
        low = indexes[0]
        kept = changed[low] if isinstance(changed[low], int) else 0  # a run that grew keeps what it had
        position = self.lengths.before(low) + kept
        old_head: list[str] = []
        new_head: list[str] = []
        for n, index in enumerate(indexes):
            if n:  # the runs between two changed ones are the same before and after
                between = self.text_between(self.lengths.before(indexes[n - 1] + 1), self.lengths.before(index))
                old_head.append(between)
                new_head.append(between)
            before = changed[index]
            skip = kept if n == 0 else 0
            new_head.append(self.runs[index].text(skip))
            if isinstance(before, _Run):
                old_head.append(before.text(skip))
        old, new = "".join(old_head), "".join(new_head)
        common = _common(old, new)
        if common < min(len(old), len(new)):
            return position + common
        if len(old) == len(new):
            return old_length  # the same text: nothing after it changed either
        # one side goes on where the other ended: the output that follows, shifted, may repeat
        rest = (new if len(new) > len(old) else old)[common:]
        return position + common + self._shifted_common(rest, self.lengths.before(indexes[-1] + 1))

    def _shifted_common(self, rest: str, offset: int) -> int:
        """The common start of ``rest`` followed by the layout from ``offset`` on, and the layout from
        ``offset`` on (at most :data:`COINCIDENCE_LIMIT` characters)."""
        available = self.lengths.total - offset
        size = 64
        while True:
            limit = min(available, size)
            following = self.text_between(offset, offset + limit)
            common = _common((rest + following)[:limit], following)
            if common < limit or limit == available or size >= COINCIDENCE_LIMIT:
                return common
            size *= 4

    # -- reading the layout -----------------------------------------------------

    def _locate(self, offset: int) -> tuple[int, int]:
        """The run holding character ``offset`` (< the layout's length) and the offset in it."""
        return self.lengths.find(offset)

    def _runs_from(self, offset: int) -> Iterator[tuple[_Run, int]]:
        """``(run, offset in it)`` from the character ``offset`` on, skipping empty runs."""
        total = self.lengths.total
        while offset < total:
            index, local = self._locate(offset)
            run = self.runs[index]
            yield run, local
            offset += run.length - local

    def output(self, offset: int, color: bool) -> str:
        """The layout from character ``offset`` on, as written to the terminal."""
        return "".join(run.output(local, color) for run, local in self._runs_from(offset))

    def text_between(self, start: int, stop: int) -> str:
        """The layout's plain text from character ``start`` to ``stop``."""
        if stop <= start:
            return ""
        out: list[str] = []
        size = 0
        for run, local in self._runs_from(start):
            for text, _ in run.segments_from(local) if local else run.segments:
                out.append(text)
                size += len(text)
                if size >= stop - start:
                    return "".join(out)[: stop - start]
        return "".join(out)[: stop - start]

    def _line_start(self, offset: int) -> int:
        """The start of the line holding character ``offset`` (after the last line break before it)."""
        if offset >= self.lengths.total:
            count = self.newline_counts.total
        else:
            index, local = self._locate(offset)
            count = self.newline_counts.before(index) + bisect_left(self.runs[index].newlines, local)
        if not count:
            return 0
        index, rest = self.newline_counts.find(count - 1)
        return self.lengths.before(index) + self.runs[index].newlines[rest] + 1

    def _row_of(self, offset: int) -> int:
        """The index of the row holding character ``offset`` (the rows that start at or before it, less one)."""
        if offset >= self.lengths.total:
            return self.row_counts.total
        index, local = self._locate(offset)
        return self.row_counts.before(index) + bisect_right(self.runs[index].rows, local) - 1

    def _row_start(self, row: int) -> int:
        """Where row ``row`` starts (the layout's length past its last row)."""
        if row <= 0:
            return 0
        if row > self.row_counts.total:
            return self.lengths.total
        index, rest = self.row_counts.find(row - 1)
        return self.lengths.before(index) + self.runs[index].rows[rest + 1]

    def ends_line(self, empty: bool) -> bool:
        """Whether the layout ends at the start of a line (``empty`` when it shows nothing)."""
        total = self.lengths.total
        if not total:
            return empty
        run, local = next(self._runs_from(total - 1))
        return run.text(local).endswith("\n")


def _common(a: str, b: str) -> int:
    """The length of the common start of ``a`` and ``b``."""
    size = min(len(a), len(b))
    if a[:size] == b[:size]:
        return size
    low, high = 0, size  # a[:low] == b[:low], a[:high] != b[:high]
    while high - low > 1:
        middle = (low + high) // 2
        if a[low:middle] == b[low:middle]:
            low = middle
        else:
            high = middle
    return low
