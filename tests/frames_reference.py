"""The cast's terminal output as the first implementation computed it (dshctl 0.x, wave 1): every
fragment of a region lays out the whole region so far again and diffs all its text against the last —
quadratic, kept here as the reference the linear :mod:`dshctl.replay.frames` must match byte for byte
(tests/test_replay_frames.py)."""

from __future__ import annotations

from typing import Iterator

from dshctl.replay import layout, view
from dshctl.replay.timeline import Timeline
from dshctl.replay.transcript import Stamper
from dshctl.replay.view import Segment

CURSOR_UP = "\x1b[{}A"
ERASE_BELOW = "\x1b[J"


def terminal_output(
    timeline: Timeline, start: int = 0, *, color: bool = False, timestamps: bool = False, cols: int = 100, rows: int = 30
) -> Iterator[tuple[int, str]]:
    """``(fragment index, output)`` for every fragment from ``start`` on, in the order they streamed,
    building the timeline as it goes; ``cols``×``rows`` is the terminal the output is for."""
    stamp = Stamper(timeline, color) if timestamps else None
    trim = start > 0
    fragment = start
    while True:
        timeline.ensure(fragment + 1)
        if fragment >= len(timeline):
            return
        item, k = timeline.locate(fragment)
        if item.region is not None:
            yield from _region_output(item, k, color, stamp, trim, cols, rows)
            trim = False
            fragment = item.start + item.count
            continue
        for member in range(k, item.count):
            text = view.ansi_text(item, member) if color else view.text(item, member)
            if trim and text:
                text = text.lstrip("\n")
                trim = not text
            if stamp is not None:
                text = stamp(text, fragment, item.synthetic)
            yield fragment, text
            fragment += 1


def _region_output(item, first: int, color: bool, stamp, trim: bool, cols: int, rows: int) -> Iterator[tuple[int, str]]:
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
        if col + width > cols and col:  # at column 0 it is the row's first character, however wide
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
