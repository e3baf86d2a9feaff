"""How the interleaved blocks of one message are laid out: block by block, each growing in place.

When a model streams several content blocks at once (parallel tool calls, text beside a call), their
deltas interleave and only their ``index`` tells them apart. The builder makes such a message one
:data:`~.items.BLOCKS` item holding a :class:`~.items.Region`; every output lays it out here:

* each block once, in the order the message has them (first-seen, as the assembler orders them), with
  everything it has streamed so far — so at a position inside the region an earlier block grows above
  a later one, redrawn in place, and the finished layout is the message as it was assembled;
* between two blocks, the marks any item would get (:class:`~.items.Prefix`): a line break when the
  block above does not end its line, the close of a tool-call frame still open (a call whose end has
  not streamed yet is closed in the layout, and opens again, grown, when its next fragment lands);
* the region's own prefix before its first block, computed from what came before it.

``pieces(item, shown)`` is the layout of a region's first ``shown`` fragments as
``(fragment index, segments)`` in layout order — every fragment once, the marks between blocks on the
first fragment of the block they precede. The screen (:mod:`.render`), the transcript, the exports and
the terminal frames of a cast (:mod:`.frames`) all draw from it.
"""

from __future__ import annotations

from bisect import bisect_right

from . import view
from .items import TOOL_END, TOOL_START, Item
from .view import NEWLINE, Segment

_CLOSE: list[Segment] = [("╰─", "frame"), NEWLINE]


def pieces(item: Item, shown: int | None = None, *, prefix: bool = True) -> list[tuple[int, list[Segment]]]:
    """``(fragment index, segments)`` of the region's first ``shown`` fragments (all by default), in
    layout order; ``prefix``: the region's own prefix on its first piece."""
    region = item.region
    shown = item.count if shown is None else shown
    out: list[tuple[int, list[Segment]]] = []
    ends_line = True
    open_frame = False
    first = True
    for block in region.blocks:
        block_pieces: list[tuple[int, list[Segment]]] = []
        frame = None  # None: not a tool call; True / False: its frame is open / closed
        for index in block:
            offset = region.offsets[index]
            if offset >= shown:
                break  # a block's parts are in the order they streamed
            part = region.parts[index]
            frame = frame_after(part, frame)
            for member in range(min(part.count, shown - offset)):
                block_pieces.append((part.start + member, view.segments(part, member)))
        if not block_pieces:
            continue
        lead = marks(item, first, ends_line, open_frame, prefix=prefix)
        if lead:
            fragment, segments = block_pieces[0]
            block_pieces[0] = (fragment, lead + segments)
        out += block_pieces
        last = _last_text(block_pieces)
        if last is not None:
            ends_line = last.endswith("\n")
        open_frame = bool(frame)
        first = False
    return out


def frame_after(part: Item, frame: bool | None) -> bool | None:
    """The state of a block's tool-call frame once ``part`` shows: None (not a tool call), True (open: a
    header began it) or False (closed: its end, or a whole block shown at once)."""
    if part.kind == TOOL_START:
        return part.info is None
    if part.kind == TOOL_END:
        return False
    return frame


def marks(item: Item, first: bool, ends_line: bool, open_frame: bool, *, prefix: bool = True) -> list[Segment]:
    """What goes before a block's output: the region's own prefix before its ``first`` block; before any
    other, a line break when the output above does not end its line (``ends_line``) and the close of a
    tool-call frame left open (``open_frame``: the frame of the block shown last)."""
    if first:
        return view.prefix_segments(item.prefix) if prefix and item.prefix is not None else []
    return ([] if ends_line else [NEWLINE]) + (_CLOSE if open_frame else [])


def last_text(segments: list[Segment]) -> str | None:
    """The last non-empty text of ``segments`` (None: they show nothing): where a block leaves the line."""
    for text, _ in reversed(segments):
        if text:
            return text
    return None


def segments(item: Item, shown: int | None = None, *, prefix: bool = True) -> list[Segment]:
    """The region's layout as one list of segments."""
    return [segment for _, piece in pieces(item, shown, prefix=prefix) for segment in piece]


def text(item: Item, shown: int | None = None, *, prefix: bool = True) -> str:
    """The region's layout as plain text."""
    return "".join(piece for piece, _ in segments(item, shown, prefix=prefix))


def ends_line(item: Item) -> bool | None:
    """Whether the whole region's layout ends at the start of a line (None: it shows nothing)."""
    last = _last_text(pieces(item, prefix=False))
    return None if last is None else last.endswith("\n")


def member(item: Item, fragment: int) -> tuple[Item, int]:
    """The part of the region holding its fragment ``fragment`` (region-relative) and the member in it."""
    region = item.region
    index = bisect_right(region.offsets, fragment) - 1
    return region.parts[index], fragment - region.offsets[index]


def in_order(item: Item) -> list[Item]:
    """The region's parts in layout order: block by block, each block's parts as they streamed."""
    region = item.region
    return [region.parts[index] for block in region.blocks for index in block]


def _last_text(block_pieces) -> str | None:
    for _, piece in reversed(block_pieces):
        text = last_text(piece)
        if text is not None:
            return text
    return None
