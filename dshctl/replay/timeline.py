"""The replay timeline: what the user saw, fragment by fragment, each at its recorded time — the reading
interface every output of ``dshctl replay`` (and the library's ``dshctl.Timeline``) draws from.

A :class:`Timeline` is built from the normalized events of one log (:mod:`dshctl.reader`) by
:mod:`.builder`. It is a sequence of **fragments** — the smallest things that appear on screen: one
streamed delta, one tool-call name, one user message, one turn header … — grouped into items
(:class:`~.items.Item`: the kinds and what each holds are documented in :mod:`.items`). A stream run is
one item whose fragments are the run's members; the interleaved blocks of one message are one
:data:`~.items.BLOCKS` item whose parts carry their ``block_key`` (:class:`~.items.Region`); every other
visible thing is a one-fragment item.

A **position** ``p`` (``0 … len(timeline)``) means "the first ``p`` fragments are on screen". The
recorded clock at ``p`` is the time of fragment ``p - 1``. Rendering a position, seeking, stepping,
searching and exporting are all functions of the timeline and a position (see :mod:`.render`,
:mod:`.transcript`, :mod:`.export`); playback pacing is a transformation of the fragment times
(:mod:`.transform`).

Reading interface (positions are fragment indexes, times axis milliseconds, see :mod:`.builder`):

* ``len(timeline)`` — fragments built so far; ``complete`` — the log is read to its end;
* ``item_count``, ``item(i)``, ``items`` (a read-only sequence of every item built), ``locate(fragment)``
  → ``(item, member)``, ``times`` (a read-only sequence: ``times[fragment]``), ``origin``,
  ``clock_ms(position)``, ``duration_ms``, ``first_at_or_after(ms)``;
* ``session`` — the log's header as the timeline's first item holds it (``id``, ``version``, ``cwd``,
  ``createdAt``, ``fixture``; redacted when the timeline is): every output's title and header line;
* ``turn_marks`` (``(fragment of the turn header, turn)``), ``tool_marks`` (fragments of ``tool/call``),
  ``titles`` (``(fragment, title)``), ``max_turn``, ``synthetic`` — a mark is published once its item
  is readable;
* ``close()`` (or ``with``): the log closed, the items' temporary file freed.

**Memory.** Items are held by an :class:`~.store.ItemStore`: a compact index (item starts, first and
last times) in memory, the items' text in chunks, the oldest compressed into a temporary file once they
pass a budget — so a timeline of a gigabyte log stays within a few hundred megabytes however far it is
built. **Building.** Lazily, as far as a caller asks (:meth:`Timeline.ensure` and friends: the first
frame needs only the first few events), or in a thread of its own (:meth:`Timeline.build_in_background`,
the interactive player): then nothing waits for the log — the ``ensure`` calls take what is built, and
``complete`` says whether more will come.
"""

from __future__ import annotations

import threading
from bisect import bisect_left, bisect_right
from typing import Any, Iterator, Sequence

from . import layout
from .builder import Builder
from .items import SESSION, TITLE, TOOL_CALL, TURN, Filters, Item
from .store import ItemStore


NO_SESSION = {"id": None, "version": None, "cwd": None, "createdAt": None, "fixture": False}
"""A timeline's ``session`` before its first item is built."""

CLOSE_WAIT_SECONDS = 0.2
"""How long :meth:`Timeline.close` waits for a background build to stop at its next item."""


class _Items(Sequence):
    """Every item built so far, read through the store."""

    def __init__(self, store: ItemStore) -> None:
        self._store = store

    def __len__(self) -> int:
        return self._store.count

    def __getitem__(self, index):
        if isinstance(index, slice):
            return [self._store.item(i) for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._store.item(index)

    def __iter__(self) -> Iterator[Item]:
        for index in range(len(self)):
            yield self._store.item(index)


class _Times(Sequence):
    """The axis time of every fragment built so far."""

    def __init__(self, store: ItemStore) -> None:
        self._store = store

    def __len__(self) -> int:
        return self._store.fragments

    def __getitem__(self, index):
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            values = [value for run in self._store.times_from(start, stop) for value in run] if stop > start else []
            return values[::step]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        return self._store.time(index)

    def __iter__(self) -> Iterator[int]:
        for run in self._store.times_from(0, len(self)):
            yield from run


class Timeline:
    """Fragments with their times, built from one opened log (see the module doc for what it offers).

    Attributes grow as the timeline is built: ``items``, ``times`` (axis ms per fragment),
    ``turn_marks`` (fragment index of each turn header, with the turn number), ``tool_marks``
    (fragment index of each ``tool/call``), ``titles``.
    """

    live = False
    """A timeline of a log still being written (``--follow``): it is never known to be complete, so
    commands work on what has arrived instead of waiting for the rest."""

    def __init__(self, log, filters: Filters | None = None) -> None:
        self.log = log
        self.filters = filters or Filters()
        self.store = ItemStore()
        self.items = _Items(self.store)
        self.times = _Times(self.store)
        self.turn_marks: list[tuple[int, int]] = []
        self.tool_marks: list[int] = []
        self.titles: list[tuple[int, str]] = []
        self._session: dict | None = None
        self.complete = False
        self.synthetic = bool(getattr(log, "fixture", False))
        self.max_turn: int | None = None
        self._builder = Builder(log, self.filters)
        self._source: Iterator[tuple[Item, list[int]]] | None = self._builder.run()
        self._thread: threading.Thread | None = None
        self._stop = False
        self.failure: BaseException | None = None
        """What ended a background build other than the log's end (re-raised by :meth:`raise_failure`)."""

    @classmethod
    def open(cls, source: Any, filters: Filters | None = None) -> "Timeline":
        """The timeline of the log at ``source`` (a path, ``-`` or a LogRef); the log is read as the
        timeline is built."""
        from ..reader import open_log

        return cls(open_log(source), filters)

    # -- building ------------------------------------------------------------

    def __len__(self) -> int:
        return self.store.fragments

    @property
    def item_count(self) -> int:
        return self.store.count

    def item(self, index: int) -> Item:
        return self.store.item(index)

    def _pull(self) -> bool:
        """Add one item; False when the log is exhausted (or, building in the background, always: the
        caller takes what the thread has built)."""
        if self._thread is not None or self._source is None:
            return False
        try:
            entry = next(self._source)
        except StopIteration:
            self._source = None
            self.complete = True
            return False
        self.add(*entry)
        return True

    def add(self, item: Item, times) -> None:
        """Place a built item after the others (the builder's, or a live feed's, one writer at a time).

        The item is stored before its marks are published: a reader on another thread (the player) that
        finds a mark finds its item."""
        start = self.store.fragments
        item.start = start
        if item.region is not None:
            for part, offset in zip(item.region.parts, item.region.offsets):
                part.start = start + offset
        if item.synthetic:
            self.synthetic = True
        self.store.add(item, times)
        if item.kind == TURN:
            if self.max_turn is None or (item.turn or 0) > self.max_turn:
                self.max_turn = item.turn
            self.turn_marks.append((start, item.turn))
        elif item.kind == TOOL_CALL:
            self.tool_marks.append(start)
        elif item.kind == TITLE:
            self.titles.append((start, item.info["title"]))
        elif item.kind == SESSION:
            self._session = item.info

    # -- building in the background -----------------------------------------------

    def build_in_background(self) -> None:
        """Build the rest in a thread of its own; from now on nothing here waits for the log."""
        if self._thread is not None or self._source is None:
            return
        self._thread = threading.Thread(target=self._build, name="dshctl-replay-build", daemon=True)
        self._thread.start()

    def _build(self) -> None:
        source = self._source
        try:
            for entry in source:
                if self._stop:
                    return
                self.add(*entry)
        except BaseException as exc:  # the player reports it once the terminal is restored
            self.failure = exc
        finally:
            if not self._stop:
                self._source = None
                self.complete = True

    @property
    def building(self) -> bool:
        """A background build is under way."""
        return self._thread is not None and not self.complete

    def stop(self) -> None:
        """End a background build (at its next item; the thread is a daemon, so a read that blocks does
        not keep the process)."""
        self._stop = True

    def close(self) -> None:
        """Let the timeline go: end a background build, free the items' temporary file and close the log.
        Nothing may be read from it afterwards. A build thread still blocked in a read (a log that
        stalls) is left to end with the process, its file with it."""
        self.stop()
        thread = self._thread
        if thread is not None and thread.is_alive():
            thread.join(CLOSE_WAIT_SECONDS)
            if thread.is_alive():
                return
        self._source = None
        self.store.close()
        close = getattr(self.log, "close", None)  # a live timeline's items come from a feed, not a log
        if close is not None:
            close()

    def __enter__(self) -> "Timeline":
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def raise_failure(self) -> None:
        if self.failure is not None:
            failure, self.failure = self.failure, None
            raise failure

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
        seen = 0
        while True:
            marks = self.turn_marks
            for start, number in marks[seen:]:
                if number == turn:
                    return start
            seen = len(marks)
            if not self._pull():
                for start, number in self.turn_marks[seen:]:
                    if number == turn:
                        return start
                return None

    def ensure_time(self, offset_ms: int) -> None:
        """Build until a fragment at or past ``origin + offset_ms`` exists."""
        store = self.store
        while not self.complete and (not store.count or store.last_times[store.count - 1] - store.first_times[0] < offset_ms):
            if not self._pull():
                return

    # -- queries --------------------------------------------------------------

    @property
    def origin(self) -> int:
        return self.store.first_times[0] if self.store.count else 0

    def locate(self, fragment: int) -> tuple[Item, int]:
        """The item holding fragment index ``fragment`` and the member index inside it."""
        item = self.store.item(self.store.locate(fragment))
        return item, fragment - item.start

    def clock_ms(self, position: int) -> int:
        """Recorded time at ``position`` (ms since the first fragment): the time of fragment ``position - 1``."""
        length = len(self)
        if position <= 0 or not length:
            return 0
        return self.store.time(min(position, length) - 1) - self.origin

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
        if position <= 0 or not len(self):
            return None
        return self.locate(min(position, len(self)) - 1)[0]

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
        """Index of the first fragment whose clock is ≥ ``offset_ms`` (len when none built)."""
        self.ensure_time(offset_ms)
        store = self.store
        count = store.count
        if not count:
            return 0
        target = store.first_times[0] + offset_ms
        index = bisect_left(store.last_times, target, 0, count)  # the first item reaching it
        if index >= count:
            return store.fragments
        item = store.item(index)
        first = store.starts[index]
        times = next(store.times_from(first, first + item.count))
        return first + bisect_left(times, target)

    @property
    def session(self) -> dict:
        """The session item's ``info`` (the log's header, redacted with the rest; built first if need be)."""
        if self._session is None:
            self.ensure(1)
        return self._session if self._session is not None else NO_SESSION

    @property
    def duration_ms(self) -> int | None:
        store = self.store
        if not self.complete or not store.count:
            return None
        return store.last_times[store.count - 1] - store.first_times[0]
