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
"""

from __future__ import annotations

from typing import Iterator

from . import layout, view
from .items import Item
from .timeline import Timeline
from .transcript import Stamper, fragment_outputs
from .view import Segment

CURSOR_UP = "\x1b[{}A"
ERASE_BELOW = "\x1b[J"


def terminal_output(
    timeline: Timeline, start: int = 0, *, color: bool = False, timestamps: bool = False, cols: int = 100, rows: int = 30
) -> Iterator[tuple[int, str]]:
    """``(fragment index, output)`` for every fragment from ``start`` on, in the order they streamed,
    building the timeline as it goes; ``cols``×``rows`` is the terminal the output is for."""

    def region(item: Item, k: int, stamp: Stamper | None, trim: bool):
        yield from _region_output(item, k, color, stamp, trim, cols, rows)
        return False

    return fragment_outputs(timeline, start, color=color, timestamps=timestamps, region=region)


def _region_output(item: Item, first: int, color: bool, stamp: Stamper | None, trim: bool, cols: int, rows: int) -> Iterator[tuple[int, str]]:
    """The region's fragments from ``first`` (region-relative) on: the first shows the layout so far, each
    next one what changes it."""
    state = stamp.line_start if stamp is not None else True
    shown: list[Segment] = []
    for member in range(first, item.count):
        laid = _laid_out(item, member + 1, stamp, state, trim)
        if member == first:
            output = _ansi(laid, 0, color)
        else:
            output = _change(shown, laid, color, cols, rows)
        shown = laid
        yield item.start + member, output
    if stamp is not None:
        stamp.line_start = _plain(shown).endswith("\n") if _plain(shown) else state


def _laid_out(item, shown: int, stamp, line_start: bool, trim: bool) -> list[Segment]:
    """The region's layout of its first ``shown`` fragments as segments (timestamped like the transcript)."""
    out: list[Segment] = []
    for fragment, segments in layout.pieces(item, shown):
        if stamp is not None:
            segments, line_start = stamp.segments(segments, fragment, item.synthetic, line_start)
        out += segments
    if trim:
        while out and out[0][0].startswith("\n"):
            text, style = out[0]
            text = text.lstrip("\n")
            out[0:1] = [(text, style)] if text else []
    return out


def _change(old: list[Segment], new: list[Segment], color: bool, cols: int, rows: int) -> str:
    """The output that turns a terminal showing ``old`` (the cursor after it) into one showing ``new``."""
    before, after = _plain(old), _plain(new)
    if after.startswith(before):
        return _ansi(new, len(before), color)
    same = 0
    limit = min(len(before), len(after))
    while same < limit and before[same] == after[same]:
        same += 1
    line = before.rfind("\n", 0, same) + 1
    back = len(row_starts(before[line:], cols)) - 1  # rows from that line's first to the cursor's
    reach = max(rows - 1, 0)
    if back <= reach:
        return "\r" + (CURSOR_UP.format(back) if back else "") + ERASE_BELOW + _ansi(new, line, color)
    # the line changed is above the screen: write the rows from the top of the screen down again
    hidden = back - reach
    starts = row_starts(after[line:], cols)
    offset = line + (starts[hidden] if hidden < len(starts) else len(after) - line)
    return "\r" + (CURSOR_UP.format(reach) if reach else "") + ERASE_BELOW + _ansi(new, offset, color)


def row_starts(text: str, cols: int) -> list[int]:
    """The offsets in ``text`` where a terminal ``cols`` cells wide starts a row, writing it from the
    start of a row: a line break starts one, and so does a character that no longer fits (a wide
    character that would straddle the edge wraps whole); a tab moves to the next stop of 8 (at most to
    the last column)."""
    from rich.cells import get_character_cell_size

    cols = max(cols, 1)
    starts = [0]
    col = 0
    for offset, char in enumerate(text):
        if char == "\n":
            starts.append(offset + 1)
            col = 0
            continue
        if char == "\t":
            col = min((col // 8 + 1) * 8, cols - 1) if col < cols else col
            continue
        width = 1 if " " <= char < "\x7f" else get_character_cell_size(char)
        if col + width > cols:
            starts.append(offset)
            col = 0
        col += width
    return starts


def _plain(segments: list[Segment]) -> str:
    return "".join(text for text, _ in segments)


def _ansi(segments: list[Segment], offset: int, color: bool) -> str:
    """The output of ``segments`` from character ``offset`` of their text on."""
    rest: list[Segment] = []
    position = 0
    for text, style in segments:
        end = position + len(text)
        if end > offset:
            rest.append((text[max(offset - position, 0) :], style))
        position = end
    return view.ansi(rest) if color else _plain(rest)
