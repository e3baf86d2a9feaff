"""The player: position, pause, speed and every navigation command — no I/O, no clock of its own.

The terminal driver passes the current monotonic time (``now``) into every call and draws
``render.screen_rows(timeline, player.position, …)``; tests drive a player with made-up times.

Positions reached by navigation:

* a turn (``]``/``[``/``g``) — just after its header, so the header is on screen;
* a tool call (``n``/``p``) — just after its ``tool/call`` line;
* a search match (``/``) — just after the fragment that completes the match;
* one step (``.``/``,``) — the next/previous fragment that changes the screen.
"""

from __future__ import annotations

from bisect import bisect_right

from . import layout, view
from .timeline import Timeline
from .transform import PlaybackClock

MIN_SPEED = 1 / 64
MAX_SPEED = 2048.0


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

    def jump_to_percent(self, percent: int, now: float) -> None:
        """To ``percent`` of the recorded duration (asciinema's digits: 0 → 0 %, 9 → 90 %): the clock
        shows that time, the screen what was shown by then."""
        timeline = self.timeline
        timeline.ensure_all()
        at_ms = (timeline.duration_ms or 0) * percent // 100
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

    def _marks_after(self, marks_of, position: int) -> int | None:
        timeline = self.timeline
        while True:
            marks = marks_of()
            i = bisect_right(marks, position)
            if i < len(marks):
                return marks[i]
            if not timeline.extend(64):
                marks = marks_of()
                i = bisect_right(marks, position)
                return marks[i] if i < len(marks) else None

    def _marks_before(self, marks: list[int], position: int) -> int | None:
        i = bisect_right(marks, position - 1) - 1
        return marks[i] if i >= 0 else None

    def _turn_positions(self) -> list[int]:
        return [start + 1 for start, _ in self.timeline.turn_marks]

    def _tool_positions(self) -> list[int]:
        return [start + 1 for start in self.timeline.tool_marks]

    def next_turn(self, now: float) -> bool:
        target = self._marks_after(self._turn_positions, self.position)
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

    def next_tool(self, now: float) -> bool:
        target = self._marks_after(self._tool_positions, self.position)
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

    def goto_turn(self, turn: int, now: float) -> bool:
        start = self.timeline.ensure_turn(turn)
        if start is None:
            self.message = f"no turn {turn}"
            return False
        self.seek(start + 1, now)
        return True

    def search(self, query: str, now: float) -> bool:
        """Jump to just after the next match of ``query`` (case-insensitive), wrapping around once."""
        query = query or self.last_search or ""
        if not query:
            return False
        self.last_search = query
        found = find_text(self.timeline, query, self.position)
        wrapped = False
        if found is None and self.position > 0:
            found = find_text(self.timeline, query, 0, stop=self.position)
            wrapped = found is not None
        if found is None:
            self.message = f"not found: {query}"
            return False
        self.message = f"/{query}" + (" (wrapped)" if wrapped else "")
        self.seek(found, now)
        return True


def find_text(timeline: Timeline, query: str, start: int, stop: int | None = None) -> int | None:
    """Position just after the first fragment ≥ ``start`` that completes a match of ``query``."""
    needle = query.lower()
    keep = len(needle) - 1
    text_of = view.text
    carry = ""
    fragment = start
    while True:
        timeline.ensure(fragment + 1)
        if fragment >= len(timeline) or (stop is not None and fragment >= stop):
            return None
        item, k = timeline.locate(fragment)
        last = item.count if stop is None else min(item.count, stop - item.start)
        if item.region is not None:
            found = _find_in_region(item, needle, k, last)
            if found is not None:
                return found
            carry = layout.text(item, last).lower()[-keep:] if keep > 0 else ""
            fragment = item.start + last
            continue
        texts = [text_of(item, m) for m in range(k, last)] if item.fragments is not None else [text_of(item, 0)]
        joined = "".join(texts)
        haystack = (carry + joined).lower()
        hit = haystack.find(needle)
        if hit >= 0:
            end = hit + len(needle) - len(carry)  # exclusive end inside `joined`
            total = 0
            for offset, text in enumerate(texts):
                total += len(text)
                if total >= end:
                    return fragment + offset + 1
            return fragment + len(texts)
        carry = haystack[-keep:] if keep > 0 else ""
        fragment = item.start + last


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
