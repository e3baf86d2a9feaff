"""Rendering a position of a timeline: a pure function of (timeline, position, width, height).

The screen shows the tail of the transcript up to the position — exactly what a terminal would show
after the fragments so far were printed, the interleaved blocks of a message laid out block by block
as far as they have streamed (:mod:`.layout`) — wrapped at the width, with ``│`` frames continued on wrapped
rows. Only the tail is looked at (walking fragments backwards until the screen is full), so a frame
costs O(screen), wherever the position is; stepping back is rendering at ``position - 1``.
"""

from __future__ import annotations

from functools import lru_cache

from . import layout, view
from .items import Item
from .timeline import Timeline
from ..humanize import format_clock
from .view import BAR, STYLES, Segment


@lru_cache(maxsize=64)
def _rich_style(style: str | None):
    from rich.style import Style

    if not style:
        return Style.null()
    entry = STYLES.get(style)
    return Style.parse(entry[1]) if entry and entry[1] else Style.null()


_console = None


def _wrap_console():
    global _console
    if _console is None:
        import io

        from rich.console import Console

        _console = Console(file=io.StringIO(), width=10_000, color_system=None, force_terminal=False, legacy_windows=False)
    return _console


def tail_segments(timeline: Timeline, position: int, lines: int, max_chars: int) -> tuple[list[Segment], bool]:
    """Segments of the transcript up to ``position``, from far enough back to fill ``lines`` lines.

    Returns ``(segments, cut)``; ``cut`` is True when the first segment does not start a line.
    """
    timeline.ensure(position)
    position = min(position, len(timeline))
    collected: list[Segment] = []
    newlines = 0
    chars = 0
    fragment = position - 1
    while fragment >= 0:
        item, k = timeline.locate(fragment)
        for segments in _fragments_backwards(item, k, lines - newlines, max_chars - chars):
            for text, style in reversed(segments):
                collected.append((text, style))
                newlines += text.count("\n")
                chars += len(text)
            if newlines > lines or chars > max_chars:
                collected.reverse()
                return collected, True
        fragment = item.start - 1
    collected.reverse()
    return collected, False


def _fragments_backwards(item: Item, last: int, lines_left: int, chars_left: int):
    """The segments of fragments ``last, last - 1 … 0`` of ``item``, one list per fragment — except
    that a plain run, one style throughout, comes as one piece: a frame reaches back over thousands of
    streamed deltas, and a segment each made rendering cost more than the rest of a frame. A region comes
    as one piece too: its layout at that fragment (its blocks grow in place)."""
    if item.region is not None:
        yield layout.segments(item, last + 1)
        return
    if item.fragments is not None and not view.is_framed(item):
        first, text = _run_tail(item.fragments, last, lines_left, chars_left)
        lead = view.prefix_segments(item.prefix) if first == 0 and item.prefix is not None else []
        yield lead + ([(text, view.RUN_STYLES[item.kind])] if text else [])
        return
    for member in range(last, -1, -1):
        yield view.segments(item, member)


def _run_tail(fragments: list[str], last: int, lines_left: int, chars_left: int) -> tuple[int, str]:
    """``(first, text)``: members ``first … last`` joined, walking back from ``last`` and stopping
    at the member that uses up the line or character budget (as walking one member at a time does)."""
    whole = "".join(fragments[: last + 1])
    if whole.count("\n") <= lines_left and len(whole) <= chars_left:
        return 0, whole
    newlines = chars = 0
    for member in range(last, -1, -1):
        text = fragments[member]
        newlines += text.count("\n")
        chars += len(text)
        if newlines > lines_left or chars > chars_left:
            return member, "".join(fragments[member : last + 1])
    return 0, whole


def screen_rows(timeline: Timeline, position: int, width: int, height: int, scroll: int = 0):
    """The ``height`` rows (rich ``Text``) the screen shows at ``position``; ``scroll`` rows up from the bottom.

    Rows are not padded: a short transcript leaves the bottom rows empty.
    """
    from rich.text import Text

    width = max(width, 8)
    height = max(height, 1)
    need = height + max(scroll, 0)
    segments, cut = tail_segments(timeline, position, need + 1, max(width * (need + 2) * 2, 4096))
    text = Text()
    for piece, style in segments:
        if piece:
            text.append(piece, _rich_style(style) if style else None)
    logical = text.split("\n", allow_blank=True)
    logical = list(logical)
    if cut and len(logical) > 1:
        logical = logical[1:]
    if logical and not logical[-1].plain:
        logical.pop()
    # Only the last `need` rows can reach the screen: wrap lines from the bottom until there are enough.
    rows: list = []
    for line in reversed(logical):
        rows[:0] = [row.copy() for row in _wrapped_rows(line.plain, tuple(line.spans), width)]
        if len(rows) >= need:
            break
    if scroll > 0:
        end = max(len(rows) - scroll, 0)
        rows = rows[max(end - height, 0) : end]
    else:
        rows = rows[-height:]
    return rows


@lru_cache(maxsize=1024)
def _wrapped_rows(plain: str, spans: tuple, width: int) -> tuple:
    """One logical line wrapped at ``width``, ``│`` frames continued on every row. Cached: while a
    session plays, every line above the one growing is the same from frame to frame."""
    from rich.text import Text

    line = Text(plain, spans=list(spans))
    if "\t" in plain:
        line.expand_tabs(4)
    console = _wrap_console()
    if line.plain.startswith(BAR):
        body = line[len(BAR) :]
        bar = line[: len(BAR)]
        wrapped = body.wrap(console, width - len(BAR), overflow="fold") if body.plain else [Text()]
        return tuple(Text.assemble(bar.copy(), row) for row in wrapped)
    if line.plain:
        return tuple(line.wrap(console, width, overflow="fold"))
    return (Text(),)


def screen_text(timeline: Timeline, position: int, width: int = 100, height: int = 30, scroll: int = 0) -> str:
    """Plain text of the screen at ``position`` (rows joined by newlines, trailing spaces stripped)."""
    return "\n".join(row.plain.rstrip() for row in screen_rows(timeline, position, width, height, scroll))


def status_text(
    timeline: Timeline,
    position: int,
    *,
    speed: float,
    paused: bool,
    width: int,
    message: str | None = None,
    keys: bool = True,
    live: str | None = None,
    clock_ms: int | None = None,
):
    """The status line: play state, ``live`` (the ``--follow`` mark), turn/step, recorded clock and
    duration, speed, a progress bar, then the title and the key hint. What does not fit goes, title
    first, then the hint, the bar, the step and the turn: state, live mark, position, duration and speed
    stay at any width. ``clock_ms``: the recorded time shown, when a seek put the player between
    fragments (default: the last fragment's)."""
    from rich.text import Text

    timeline.ensure(position)
    clock_ms = timeline.clock_ms(position) if clock_ms is None else clock_ms
    left = _status_bits(timeline, position, speed, paused, width, live, clock_ms)
    right = _status_right(timeline, position, width - len(left) - 1, keys, message, clock_ms)
    line = left + " " * max(width - len(left) - len(right) - 1, 1) + right + " "
    return Text(line[:width].ljust(width), style="reverse")


def _status_bits(timeline: Timeline, position: int, speed: float, paused: bool, width: int, live: str | None,
                 clock_ms: int) -> str:
    """The left of the status line, with the turn and the step only while there is room for them."""
    turn, step = timeline.turn_at(position)
    at_end = timeline.complete and position >= len(timeline)
    state = f" {'■' if at_end else ('⏸' if paused else '▶')}"
    total = timeline.duration_ms
    clock = format_clock(clock_ms) + (f" / {format_clock(total)}" if total is not None else "")
    current = timeline.current(position)
    marks = ["synthetic timing"] if current is not None and current.synthetic else []
    marks += ["end"] if at_end else []
    turn_bit = None if turn is None else f"turn {turn}" + (f"/{timeline.max_turn}" if timeline.complete and timeline.max_turn else "")
    step_bit = None if turn is None or step is None else f"step {step}"
    for shown in ((turn_bit, step_bit), (turn_bit, None), (None, None)):
        bits = [state, *([live] if live else []), *[bit for bit in shown if bit], clock, _speed(speed) + "×", *marks]
        left = " · ".join(bits)
        if len(left) + 1 <= width:
            break
    return left


PROGRESS_WIDTH = 16


def _status_right(timeline: Timeline, position: int, room: int, keys: bool, message: str | None, clock_ms: int) -> str:
    """The progress bar, then a message, or the title and the key hint: as many of them as ``room``
    holds, the title going first."""
    if message:
        tail = message if len(message) + 1 <= room else ""
    else:
        tail = "? keys" if keys else "ctrl-c quits"
        tail = tail if len(tail) + 1 <= room else ""
    room -= len(tail) + 1 if tail else 0
    bar = _progress_bar(timeline, position, clock_ms, min(PROGRESS_WIDTH, room - 1)) if room >= 9 else ""
    room -= len(bar) + 1 if bar else 0
    if message and not tail:
        tail = _cut(message, room + len(bar) + 1 if bar else room)
        bar = "" if len(tail) > room else bar
    title = "" if message else timeline.title_at(position) or ""
    title = _cut(title, room - 3) if room - 3 >= 8 else ""
    return " ".join(part for part in (bar, f"{title} ·" if title and tail else title, tail) if part)


def _progress_bar(timeline: Timeline, position: int, clock_ms: int, width: int) -> str:
    """How far ``position`` (at ``clock_ms``) is through the session, by recorded time once the
    duration is known."""
    total = timeline.duration_ms
    if total:
        done = clock_ms / total
    else:
        done = position / len(timeline) if timeline.complete and len(timeline) else 0.0
    filled = round(max(0.0, min(done, 1.0)) * width)
    return "━" * filled + "─" * (width - filled)


def _cut(text: str, room: int) -> str:
    if len(text) <= room:
        return text
    return text[: room - 1] + "…" if room > 1 else ""


def _speed(speed: float) -> str:
    if speed >= 10 or speed == int(speed):
        return f"{speed:g}"
    return f"{speed:.2g}"
