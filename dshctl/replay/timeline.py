"""The replay timeline: what the user saw, fragment by fragment, each at its recorded time.

A :class:`Timeline` is a pure data model built from the normalized events of one log
(:mod:`dshctl.reader`). It is a sequence of **fragments** — the smallest things that appear on
screen: one streamed delta, one tool-call name, one user message, one turn header … — grouped into
:class:`Item` values. A stream run (a compact ``text-chunks`` / ``reasoning-chunks`` /
``tool-call-chunks`` record) becomes **one** item whose fragments are the run's members, referenced,
not copied; every other visible thing is a one-fragment item.

An item holds what it means — its kind, its log text, its ``info`` and the layout marks that go before
it (:class:`Prefix`) — never how it looks: :mod:`.view` owns every glyph, line layout and style, and
each output (the screen, the transcript, a cast, NDJSON, markdown) draws items through it or reads
their meaning directly.

A **position** ``p`` (``0 … len(timeline)``) means "the first ``p`` fragments are on screen". The
recorded clock at ``p`` is the time of fragment ``p - 1``. Rendering a position, seeking, stepping,
searching and exporting are all functions of the timeline and a position (see :mod:`.render`,
:mod:`.transcript`, :mod:`.export`); playback pacing is a transformation of the fragment times
(:mod:`.transform`).

**Time axis.** Fragment times are milliseconds on one monotone axis. For a log with envelope times
(every real log) the axis *is* the recorded epoch-ms clock: each stream member sits at its receipt
time (``time0 + Σdt``), every other item at its event's time. The axis never runs backwards: a clock
that stepped back (negative ``dt``) is held at the last time. Where the log lacks times the builder
places items with fixed gaps and flags them ``synthetic``:

* fixture-form logs (no envelope ``seq``/``time``): :data:`EVENT_GAP_MS` between visible events; stream
  members keep their recorded spacing (v2+ record times; v0 rows keep only ``dt``);
* streams whose record times are all ``0`` (scripted fixtures) or implausibly far from their
  settlement: :data:`TOKEN_GAP_MS` between fragments.

The real spacing between two timed points is kept even across synthetic items: a recorded gap between
two stream members of different steps still shows, synthetic gaps only fill where nothing is known.

The timeline builds lazily (:meth:`Timeline.ensure`): the first frame needs only the first few events.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left, bisect_right
from typing import Any, Iterator

from . import layout
from .builder import Builder
from .items import *  # noqa: F401,F403  (the item model, re-exported: kinds, Item, Prefix, Filters)
from .items import TITLE, TOOL_CALL, TURN, Filters, Item


class Timeline:
    """Fragments with their times, built lazily from one opened log.

    Attributes grow as the timeline is built: ``items``, ``times`` (axis ms per fragment),
    ``turn_marks`` (fragment index of each turn header, with the turn number), ``tool_marks``
    (fragment index of each ``tool/call``), ``titles``.
    """

    def __init__(self, log, filters: Filters | None = None) -> None:
        self.log = log
        self.filters = filters or Filters()
        self.items: list[Item] = []
        self.item_starts: list[int] = []
        self.times: array = array("q")
        self.turn_marks: list[tuple[int, int]] = []
        self.tool_marks: list[int] = []
        self.titles: list[tuple[int, str]] = []
        self.complete = False
        self.synthetic = bool(getattr(log, "fixture", False))
        self.max_turn: int | None = None
        self._builder = Builder(log, self.filters)
        self._source: Iterator[tuple[Item, list[int]]] | None = self._builder.run()

    @classmethod
    def open(cls, source: Any, filters: Filters | None = None) -> "Timeline":
        """The timeline of the log at ``source`` (a path, ``-`` or a LogRef); the log is read as the
        timeline is built."""
        from ..reader import open_log

        return cls(open_log(source), filters)

    # -- building ------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.times)

    def _pull(self) -> bool:
        """Add one item; False when the log is exhausted."""
        if self._source is None:
            return False
        try:
            item, times = next(self._source)
        except StopIteration:
            self._source = None
            self.complete = True
            return False
        start = len(self.times)
        item.start = start
        if item.region is not None:
            for part, offset in zip(item.region.parts, item.region.offsets):
                part.start = start + offset
        self.items.append(item)
        self.item_starts.append(start)
        self.times.extend(times)
        if item.synthetic:
            self.synthetic = True
        if item.kind == TURN:
            self.turn_marks.append((start, item.turn))
            if self.max_turn is None or (item.turn or 0) > self.max_turn:
                self.max_turn = item.turn
        elif item.kind == TOOL_CALL:
            self.tool_marks.append(start)
        elif item.kind == TITLE:
            self.titles.append((start, item.info["title"]))
        return True

    def ensure(self, fragments: int) -> None:
        """Build until at least ``fragments`` fragments exist (or the log ends)."""
        while len(self.times) < fragments and self._pull():
            pass

    def ensure_all(self) -> None:
        while self._pull():
            pass

    def extend(self, items: int = 64) -> bool:
        """Build up to ``items`` more items; True while more may follow."""
        for _ in range(items):
            if not self._pull():
                return False
        return True

    def ensure_turn(self, turn: int) -> int | None:
        """Fragment index of the header of ``turn`` (building as far as needed), or None."""
        for start, number in self.turn_marks:
            if number == turn:
                return start
        while self._pull():
            item = self.items[-1]
            if item.kind == TURN and item.turn == turn:
                return item.start
        return None

    def ensure_time(self, offset_ms: int) -> None:
        """Build until a fragment at or past ``origin + offset_ms`` exists."""
        while not self.complete and (not self.times or self.times[-1] - self.times[0] < offset_ms):
            self._pull()

    # -- queries --------------------------------------------------------------

    @property
    def origin(self) -> int:
        return self.times[0] if self.times else 0

    def locate(self, fragment: int) -> tuple[Item, int]:
        """The item holding fragment index ``fragment`` and the member index inside it."""
        i = bisect_right(self.item_starts, fragment) - 1
        item = self.items[i]
        return item, fragment - item.start

    def clock_ms(self, position: int) -> int:
        """Recorded time at ``position`` (ms since the first fragment): the time of fragment ``position - 1``."""
        if position <= 0 or not self.times:
            return 0
        return self.times[min(position, len(self.times)) - 1] - self.times[0]

    def is_visible(self, fragment: int) -> bool:
        """Whether fragment ``fragment`` puts anything on screen (a run member may be empty)."""
        item, k = self.locate(fragment)
        if item.region is not None:
            item, k = layout.member(item, k)
        if item.fragments is None:
            return True
        return bool(item.fragments[k]) or (k == 0 and item.prefix is not None)

    def current(self, position: int) -> Item | None:
        """The item of the last fragment shown at ``position``."""
        if position <= 0 or not self.items:
            return None
        return self.locate(min(position, len(self.times)) - 1)[0]

    def title_at(self, position: int) -> str | None:
        title = None
        for start, text in self.titles:
            if start < position:
                title = text
            else:
                break
        return title

    def turn_at(self, position: int) -> tuple[int | None, int | None]:
        item = self.current(position)
        if item is None:
            return None, None
        return item.turn, item.step

    def first_at_or_after(self, offset_ms: int) -> int:
        """Index of the first fragment whose clock is ≥ ``offset_ms`` (len when none)."""
        self.ensure_time(offset_ms)
        if not self.times:
            return 0
        return bisect_left(self.times, self.times[0] + offset_ms)

    @property
    def duration_ms(self) -> int | None:
        if not self.complete or not self.times:
            return None
        return self.times[-1] - self.times[0]
