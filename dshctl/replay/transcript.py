"""The transcript: every fragment's output in order, as plain text or with ANSI styling.

This is what ``dshctl replay`` prints when standard output is not a terminal (or with ``--instant``),
what a no-keys replay streams with timing, and — fragment by fragment — what a cast export holds.
One function produces it, so they always agree: a cast's concatenated output equals the transcript
with ``\\n`` written as ``\\r\\n`` (a terminal needs the carriage return; asciinema records it that way).

With ``--timestamps`` every line that carries output starts with the recorded clock of the fragment
that began it, ``[mm:ss.mmm]`` (``[~mm:ss.mmm]`` when that time is synthetic).
"""

from __future__ import annotations

from typing import Callable, Generator, Iterator

from . import layout, view
from .items import Item
from .timeline import Timeline
from .wrap import FrameWrap
from ..humanize import format_clock


class Stamper:
    """Puts the recorded clock at the start of each output line."""

    def __init__(self, timeline: Timeline, color: bool) -> None:
        self.timeline = timeline
        self.color = color
        self.line_start = True

    def clock(self, fragment: int, synthetic: bool) -> str:
        return ("~" if synthetic else "") + format_clock(self.timeline.times[fragment] - self.timeline.origin)

    def segments(self, segments, fragment: int, synthetic: bool, line_start: bool):
        """``segments`` with the clock of ``fragment`` at each line they start (``line_start``: whether
        the output before them ends a line); returns them and whether they end one."""
        out = []
        stamp = None
        for text, style in segments:
            for n, piece in enumerate(text.split("\n")):
                if n:
                    out.append(("\n", None))
                    line_start = True
                if piece:
                    if line_start:
                        stamp = stamp or self.clock(fragment, synthetic)
                        out += [(f"[{stamp}]", "note"), (" ", None)]
                        line_start = False
                    out.append((piece, style))
        return out, line_start

    def __call__(self, text: str, fragment: int, synthetic: bool) -> str:
        if not text:
            return text
        clock = self.clock(fragment, synthetic)
        prefix = f"\x1b[2m[{clock}]\x1b[0m " if self.color else f"[{clock}] "
        out: list[str] = []
        for n, piece in enumerate(text.split("\n")):
            if n:
                out.append("\n")
                self.line_start = True
            if piece:
                if self.line_start:
                    out.append(prefix)
                    self.line_start = False
                out.append(piece)
        return "".join(out)


def iter_fragments(timeline: Timeline, start: int = 0, *, color: bool = False, timestamps: bool = False,
                   width: int | None = None) -> Iterator[tuple[int, str]]:
    """``(fragment index, output)`` for every fragment from ``start`` on, building the timeline as it goes.

    Output that starts mid-session (``start > 0``) drops the line breaks before its first visible text,
    so it does not open with blank lines. The interleaved blocks of a message (a region) are laid out
    block by block: their fragments come in layout order, not in the order they streamed (a start
    inside a region shows it whole). ``width``: a terminal's, at which a frame's rows are folded with
    their border (:mod:`.wrap`)."""
    wrap = FrameWrap(width) if width else None

    def region(item: Item, k: int, stamp: Stamper | None, trim: bool):
        for member_fragment, segments in layout.pieces(item):
            if wrap is not None:
                text, trim = _wrapped(segments, trim, stamp, member_fragment, item.synthetic, wrap, color)
            else:
                text = view.ansi(segments) if color else "".join(piece for piece, _ in segments)
                text, trim = _shown(text, trim, stamp, member_fragment, item.synthetic)
            yield member_fragment, text
        return trim

    return fragment_outputs(timeline, start, color=color, timestamps=timestamps, region=region, wrap=wrap)


def _shown(text: str, trim: bool, stamp: "Stamper | None", fragment: int, synthetic: bool) -> tuple[str, bool]:
    """A fragment's output: the line breaks before the first visible text dropped while ``trim`` (output
    that starts mid-session), then timestamped; with whether the next output still drops them."""
    if trim and text:
        text = text.lstrip("\n")
        trim = not text
    if stamp is not None:
        text = stamp(text, fragment, synthetic)
    return text, trim


def trimmed(segments: list[view.Segment]) -> list[view.Segment]:
    """``segments`` without the line breaks before their first text (output that starts mid-session)."""
    segments = list(segments)
    while segments and segments[0][0].startswith("\n"):
        text, style = segments[0]
        text = text.lstrip("\n")
        segments[0:1] = [(text, style)] if text else []
    return segments


def _wrapped(segments: list[view.Segment], trim: bool, stamp: "Stamper | None", fragment: int, synthetic: bool,
             wrap: FrameWrap, color: bool) -> tuple[str, bool]:
    """:func:`_shown` for output folded at a terminal's width: trimmed, timestamped, then a frame's rows
    folded with their border."""
    if trim:
        segments = trimmed(segments)
        trim = not any(text for text, _ in segments)
    if stamp is not None:
        segments, stamp.line_start = stamp.segments(segments, fragment, synthetic, stamp.line_start)
    segments = wrap.feed(segments)
    return (view.ansi(segments) if color else "".join(text for text, _ in segments)), trim


RegionOutput = Callable[[Item, int, "Stamper | None", bool], Generator[tuple[int, str], None, bool]]
"""How a walk shows a region: ``region(item, member, stamp, trim)`` yields ``(fragment, output)`` from the
region's ``member`` on and returns whether output still drops its leading line breaks."""


def fragment_outputs(timeline: Timeline, start: int, *, color: bool, timestamps: bool, region: RegionOutput,
                     wrap: FrameWrap | None = None) -> Iterator[tuple[int, str]]:
    """The walk every fragment-by-fragment output shares (the transcript's fragments, a cast's and the timed
    stream's terminal output): each item's fragments from ``start`` on, in order, building the timeline
    as it goes — timestamped, the line breaks before the first visible text dropped when ``start > 0``,
    a frame's rows folded by ``wrap`` — and each region as ``region`` shows it."""
    stamp = Stamper(timeline, color) if timestamps else None
    trim = start > 0
    fragment = start
    while True:
        timeline.ensure(fragment + 1)
        if fragment >= len(timeline):
            return
        item, k = timeline.locate(fragment)
        if item.region is not None:
            trim = yield from region(item, k, stamp, trim)
            fragment = item.start + item.count
            continue
        for member in range(k, item.count):
            if wrap is not None:
                text, trim = _wrapped(view.segments(item, member), trim, stamp, fragment, item.synthetic, wrap, color)
            else:
                text, trim = _shown(view.ansi_text(item, member) if color else view.text(item, member), trim, stamp,
                                    fragment, item.synthetic)
            yield fragment, text
            fragment += 1


def iter_chunks(timeline: Timeline, start: int = 0, *, color: bool = False, timestamps: bool = False,
                width: int | None = None) -> Iterator[str]:
    """The transcript from ``start`` in large pieces (whole items at once when that is equivalent);
    ``width``: a terminal's, at which a frame's rows are folded with their border (:mod:`.wrap`)."""
    if timestamps or color or width:
        for _, text in iter_fragments(timeline, start, color=color, timestamps=timestamps, width=width):
            yield text
        return
    trim = start > 0
    fragment = start
    while True:
        timeline.ensure(fragment + 1)
        if fragment >= len(timeline):
            return
        item, k = timeline.locate(fragment)
        text, trim = _shown(layout.text(item) if item.region is not None else view.plain(item, k), trim, None, fragment, False)
        yield text
        fragment = item.start + item.count


def transcript(timeline: Timeline, start: int = 0, *, color: bool = False, timestamps: bool = False, width: int | None = None) -> str:
    return "".join(iter_chunks(timeline, start, color=color, timestamps=timestamps, width=width))


def write_transcript(timeline: Timeline, out, start: int = 0, *, color: bool = False, timestamps: bool = False,
                     width: int | None = None) -> None:
    """Write the transcript to a text stream in batches (``width``: a terminal's, :func:`iter_chunks`)."""
    batch: list[str] = []
    size = 0
    for text in iter_chunks(timeline, start, color=color, timestamps=timestamps, width=width):
        batch.append(text)
        size += len(text)
        if size > 65536:
            out.write("".join(batch))
            batch.clear()
            size = 0
    if batch:
        out.write("".join(batch))
    out.flush()

