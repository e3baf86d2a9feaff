"""The player: position, pause, speed and every navigation command — no I/O, no clock of its own.

The terminal driver passes the current monotonic time (``now``) into every call and draws
``render.screen_rows(timeline, player.position, …)``; tests drive a player with made-up times.

Positions reached by navigation:

* a turn (``]``/``[``/``g``) — just after its header, so the header is on screen;
* a tool call (``n``/``p``) — just after its ``tool/call`` line;
* a search match (``/``) — just after the fragment that completes the match;
* one step (``.``/``,``) — the next/previous fragment that changes the screen.

The player never waits for the log. A command that needs more of the timeline than is built while it
is built in the background (a jump to 90 % before the duration is known, the next turn not read yet, a
search that reached the end of what is built) returns :data:`PENDING`; the driver shows "seeking…",
tries it again as the timeline grows and drops it when a key cancels it. A search scans a bounded slice
each time it is tried (``budget``), so a search through a large log never holds up the keys either.
"""

from __future__ import annotations

from bisect import bisect_right

from . import layout, view
from .timeline import Timeline
from .transform import PlaybackClock

MIN_SPEED = 1 / 64
MAX_SPEED = 2048.0


class _Pending:
    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return "PENDING"


PENDING = _Pending()
"""What a command returns when it needs more of the timeline than the background build has made."""


class Player:
    def __init__(self, timeline: Timeline, *, idle_limit: float = 2.0, speed: float = 1.0, position: int = 0, paused: bool = False, now: float = 0.0) -> None:
        self.timeline = timeline
        self.clock = PlaybackClock(timeline, idle_limit)
        self.speed = speed
        self.paused = paused
        self.position = max(position, 0)
        self.message: str | None = None
        self.last_search: str | None = None
        self.sought_ms: int | None = None
        """The recorded time a seek put the player at, between two fragments (a digit jump into an
        idle stretch); ``None``: the time of the last fragment shown."""
        self.searching: _Search | None = None
        self._anchor(now, immediate=True)

    # -- playback clock ---------------------------------------------------------

    def _anchor(self, now: float, *, immediate: bool = False) -> None:
        """Tie playback time to ``now``: the next fragment is due after its recorded (capped) delay,
        or at once with ``immediate``."""
        timeline = self.timeline
        p = self.position
        timeline.ensure(p + 1)
        n = len(timeline)
        if n == 0:
            base = 0.0
        elif immediate:
            base = self.clock[min(p, n - 1)]
        else:
            base = (self.clock[min(p, n) - 1] if p > 0 else self.clock[0]) + self._sought_seconds()
        self.anchor_wall = now
        self.anchor_play = base

    def _sought_seconds(self) -> float:
        """How far into the idle stretch after the last fragment shown a seek put the player, in
        playback seconds (the stretch capped as the clock caps it)."""
        if self.sought_ms is None:
            return 0.0
        into = self.sought_ms - self.timeline.clock_ms(self.position)
        cap = self.clock.cap_ms
        return (into if cap is None else min(into, cap)) / 1000

    @property
    def clock_ms(self) -> int:
        """The recorded time the player is at: where a seek put it, else the last fragment shown's."""
        return self.sought_ms if self.sought_ms is not None else self.timeline.clock_ms(self.position)

    def playback_time(self, now: float) -> float:
        if self.paused:
            return self.anchor_play
        return self.anchor_play + (now - self.anchor_wall) * self.speed

    @property
    def at_end(self) -> bool:
        timeline = self.timeline
        if self.position < len(timeline):
            return False
        timeline.ensure(self.position + 1)
        return timeline.complete and self.position >= len(timeline)

    def tick(self, now: float) -> bool:
        """Advance to every fragment that is due; True if the position changed."""
        if self.paused:
            return False
        target = self.playback_time(now)
        timeline = self.timeline
        position = self.position
        while True:
            timeline.ensure(position + 1)
            new = self.clock.due_count(target, position)
            if new < len(timeline) or timeline.complete:
                break
            # every built fragment is due: build more and look again
            if not timeline.extend(16):
                new = self.clock.due_count(target, position)
                break
            position = new
        changed = new != self.position
        self.position = new
        if changed:
            self.sought_ms = None
        return changed

    def next_due(self, now: float) -> float | None:
        """Wall seconds until the next fragment is due (None when paused or at the end)."""
        if self.paused:
            return None
        timeline = self.timeline
        timeline.ensure(self.position + 1)
        if self.position >= len(timeline):
            return None
        wait = (self.clock[self.position] - self.playback_time(now)) / self.speed
        return max(wait, 0.0)

    # -- commands --------------------------------------------------------------

    def pause(self, now: float) -> None:
        if not self.paused:
            self.anchor_play = self.playback_time(now)
            self.paused = True

    def toggle_pause(self, now: float) -> None:
        if self.at_end:
            # as asciinema's player does: play at the end starts over
            self.position = 0
            self.sought_ms = None
            self.paused = False
            self._anchor(now, immediate=True)
            self.message = "from the start"
            return
        if self.paused:
            self.paused = False
            self._anchor(now)
        else:
            self.pause(now)

    def set_speed(self, speed: float, now: float) -> None:
        speed = min(max(speed, MIN_SPEED), MAX_SPEED)
        self.anchor_play = self.playback_time(now)
        self.anchor_wall = now
        self.speed = speed
        self.message = f"speed {speed:g}×"

    def faster(self, now: float) -> None:
        self.set_speed(self.speed * 2, now)

    def slower(self, now: float) -> None:
        self.set_speed(self.speed / 2, now)

    def seek(self, position: int, now: float, *, at_ms: int | None = None) -> None:
        """To ``position``; with ``at_ms``, the recorded time sought, shown (and played on from) when
        ``position`` is the screen at that time — the last fragment shown recorded before it."""
        timeline = self.timeline
        timeline.ensure(position)
        self.position = min(max(position, 0), len(timeline))
        exact = (at_ms is not None and self.position < len(timeline) and at_ms > timeline.clock_ms(self.position)
                 and self.position == self._position_at(at_ms))
        self.sought_ms = at_ms if exact else None
        self._anchor(now)

    SEEK_SECONDS = 5

    def seek_back(self, now: float) -> None:
        """Five recorded seconds back (asciinema's ←); at least one fragment back."""
        at_ms = max(self.clock_ms - self.SEEK_SECONDS * 1000, 0)
        self.seek(max(min(self._position_at(at_ms), self.position - 1), 0), now, at_ms=at_ms)
        self.message = f"-{self.SEEK_SECONDS} s"

    def seek_ahead(self, now: float) -> None:
        """Five recorded seconds on (asciinema's →); at least one fragment on, so an idle stretch is
        crossed."""
        at_ms = self.clock_ms + self.SEEK_SECONDS * 1000
        self.seek(max(self._position_at(at_ms), self.position + 1), now, at_ms=at_ms)
        self.message = f"+{self.SEEK_SECONDS} s"

    def jump_to_percent(self, percent: int, now: float):
        """To ``percent`` of the recorded duration (asciinema's digits: 0 → 0 %, 9 → 90 %): the clock
        shows that time, the screen what was shown by then. :data:`PENDING` until the duration is known."""
        timeline = self.timeline
        timeline.ensure_all()
        if not timeline.complete and percent and not timeline.live:
            return PENDING
        duration = timeline.duration_ms if timeline.complete else timeline.clock_ms(len(timeline))  # live: so far
        at_ms = (duration or 0) * percent // 100
        self.seek(self._position_at(at_ms), now, at_ms=at_ms)
        self.message = f"{percent}%"

    def _position_at(self, offset_ms: int) -> int:
        """The position showing every fragment recorded by ``offset_ms`` from the start (0 before it)."""
        return 0 if offset_ms <= 0 else self.timeline.first_at_or_after(offset_ms + 1)

    def step_forward(self, now: float) -> bool:
        """One fragment forward (skipping fragments that show nothing); pauses first."""
        if not self.paused:
            self.toggle_pause(now)
        timeline = self.timeline
        q = self.position
        while True:
            timeline.ensure(q + 1)
            if q >= len(timeline):
                break
            q += 1
            if timeline.is_visible(q - 1):
                break
        moved = q != self.position
        self.seek(q, now)
        return moved

    def step_back(self, now: float) -> bool:
        """One fragment back (to the previous position whose last fragment shows something)."""
        if not self.paused:
            self.toggle_pause(now)
        timeline = self.timeline
        q = min(self.position, len(timeline))
        if q > 0:
            q -= 1
            while q > 0 and not timeline.is_visible(q - 1):
                q -= 1
        moved = q != self.position
        self.seek(q, now)
        return moved

    def _marks_after(self, marks_of, position: int):
        timeline = self.timeline
        while True:
            marks = marks_of()
            i = bisect_right(marks, position)
            if i < len(marks):
                return marks[i]
            if not timeline.extend(64):
                marks = marks_of()
                i = bisect_right(marks, position)
                if i < len(marks):
                    return marks[i]
                return PENDING if not timeline.complete and not timeline.live else None

    def _marks_before(self, marks: list[int], position: int) -> int | None:
        i = bisect_right(marks, position - 1) - 1
        return marks[i] if i >= 0 else None

    def _turn_positions(self) -> list[int]:
        return [start + 1 for start, _ in self.timeline.turn_marks]

    def _tool_positions(self) -> list[int]:
        return [start + 1 for start in self.timeline.tool_marks]

    def next_turn(self, now: float):
        target = self._marks_after(self._turn_positions, self.position)
        if target is PENDING:
            return PENDING
        if target is None:
            self.message = "no later turn"
            return False
        self.seek(target, now)
        return True

    def prev_turn(self, now: float) -> bool:
        target = self._marks_before(self._turn_positions(), self.position)
        if target is None:
            self.message = "no earlier turn"
            return False
        self.seek(target, now)
        return True

    def next_tool(self, now: float):
        target = self._marks_after(self._tool_positions, self.position)
        if target is PENDING:
            return PENDING
        if target is None:
            self.message = "no later tool call"
            return False
        self.seek(target, now)
        return True

    def prev_tool(self, now: float) -> bool:
        target = self._marks_before(self._tool_positions(), self.position)
        if target is None:
            self.message = "no earlier tool call"
            return False
        self.seek(target, now)
        return True

    def goto_turn(self, turn: int, now: float):
        start = self.timeline.ensure_turn(turn)
        if start is None and not self.timeline.complete and not self.timeline.live:
            return PENDING
        if start is None:
            self.message = f"no turn {turn}"
            return False
        self.seek(start + 1, now)
        return True

    def search(self, query: str, now: float, budget: float | None = None):
        """Jump to just after the next match of ``query`` (case-insensitive), wrapping around once.
        ``budget``: seconds to scan before returning :data:`PENDING` (call :meth:`search_more`); None:
        scan to the answer."""
        query = query or self.last_search or ""
        if not query:
            return False
        self.last_search = query
        self.searching = _Search(self.timeline, query, self.position)
        return self.search_more(now, budget)

    def search_more(self, now: float, budget: float | None = None):
        """Go on with the search :meth:`search` began."""
        search = self.searching
        if search is None:
            return False
        found = search.run(budget)
        if found is PENDING:
            return PENDING
        self.searching = None
        if found is None:
            self.message = f"not found: {search.query}"
            return False
        self.message = f"/{search.query}" + (" (wrapped)" if search.wrapped else "")
        self.seek(found, now)
        return True


class _Search:
    """A search from a position to the end, then from the start back to it, a slice at a time."""

    def __init__(self, timeline: Timeline, query: str, start: int) -> None:
        self.timeline = timeline
        self.query = query
        self.needle = query.lower()
        self.origin = start
        self.fragment = start
        self.stop: int | None = None
        self.carry = ""
        self.wrapped = False

    def run(self, budget: float | None = None):
        """The position found, None when there is none, or :data:`PENDING` when the budget ran out or the
        rest is not built yet."""
        import time

        deadline = None if budget is None else time.monotonic() + budget
        while True:
            found = _scan(self, deadline)
            if found is not PENDING or not self._at_end():
                return found
            if not self.timeline.complete and not self.timeline.live:
                return PENDING  # more will be built: look again then
            if self.wrapped or self.origin == 0:
                return None
            self.wrapped, self.fragment, self.stop, self.carry = True, 0, self.origin, ""

    def _at_end(self) -> bool:
        end = len(self.timeline) if self.stop is None else min(self.stop, len(self.timeline))
        return self.fragment >= end


def _scan(search: _Search, deadline: float | None):
    """Scan from the search's fragment on (see :func:`find_text`); PENDING when it stopped at the end of
    what is built or at the deadline."""
    import time

    timeline = search.timeline
    needle = search.needle
    keep = len(needle) - 1
    text_of = view.text
    stop = search.stop
    while True:
        fragment = search.fragment
        timeline.ensure(fragment + 1)
        if fragment >= len(timeline) or (stop is not None and fragment >= stop):
            return PENDING
        if deadline is not None and time.monotonic() > deadline:
            return PENDING
        item, k = timeline.locate(fragment)
        last = item.count if stop is None else min(item.count, stop - item.start)
        if item.region is not None:
            found = _find_in_region(item, needle, k, last)
            if found is not None:
                return found
            search.carry = layout.text(item, last).lower()[-keep:] if keep > 0 else ""
            search.fragment = item.start + last
            continue
        texts = [text_of(item, m) for m in range(k, last)] if item.fragments is not None else [text_of(item, 0)]
        joined = "".join(texts)
        haystack = (search.carry + joined).lower()
        hit = haystack.find(needle)
        if hit >= 0:
            end = hit + len(needle) - len(search.carry)  # exclusive end inside `joined`
            total = 0
            for offset, text in enumerate(texts):
                total += len(text)
                if total >= end:
                    return fragment + offset + 1
            return fragment + len(texts)
        search.carry = haystack[-keep:] if keep > 0 else ""
        search.fragment = item.start + last


def find_text(timeline: Timeline, query: str, start: int, stop: int | None = None) -> int | None:
    """Position just after the first fragment ≥ ``start`` that completes a match of ``query``."""
    search = _Search(timeline, query, start)
    search.stop = stop
    found = _scan(search, None)
    return None if found is PENDING else found


def _find_in_region(item, needle: str, first: int, last: int) -> int | None:
    """Position just after the fragment of a region (``first`` … ``last - 1``) from which its layout holds
    one more match of ``needle`` than before ``first``: its blocks grow in place, so a match is found in
    the layout, not in the order the fragments streamed."""
    def matches(shown: int) -> int:
        return layout.text(item, shown).lower().count(needle)

    before = matches(first)
    if matches(last) <= before:
        return None
    low, high = first + 1, last  # the layout holds more matches at ``high``
    while low < high:
        middle = (low + high) // 2
        if matches(middle) > before:
            high = middle
        else:
            low = middle + 1
    return item.start + low
