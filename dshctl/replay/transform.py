"""Plain transformations of a timeline: idle limit, speed, and the option parsers that select parts of it.

Pacing never touches the recorded clock. As in asciinema's player, playback time is derived from the
recorded fragment times by two transformations composed in order:

1. **idle limit** — every pause between consecutive fragments longer than ``idle_limit`` seconds is
   capped to ``idle_limit`` (asciicast ``idle_time_limit`` semantics; ``0`` = no cap);
2. **speed** — playback delays are divided by ``speed``.

:class:`PlaybackClock` holds the cumulative playback time of every fragment at speed 1 (step 1 only),
extended lazily as the timeline grows; speed is applied by the player when it converts wall time.
"""

from __future__ import annotations

import re
from array import array

from ..errors import UsageError
from .items import Filters
from .timeline import Timeline


class PlaybackClock:
    """Cumulative playback seconds (idle-capped, speed 1) of fragments, counted from an origin fragment.

    Only differences between nearby fragments matter to the player (it anchors at a fragment and plays on
    from there), so the clock covers a window: from its origin to as far as it was asked, computed from
    the fragment times as the timeline grows. Asking for a fragment before the origin starts a new
    window there (the values of the old one no longer compare with the new: re-anchor after a jump);
    a window longer than :data:`WINDOW` drops its oldest values as the player moves on."""

    WINDOW = 1 << 20

    def __init__(self, timeline: Timeline, idle_limit: float) -> None:
        self.timeline = timeline
        self.cap_ms = idle_limit * 1000 if idle_limit > 0 else None
        self.at: array = array("d")
        self.origin = 0
        """The fragment ``at[0]`` is for."""
        self._last_time: int | None = None

    def _extend(self, upto: int | None = None) -> None:
        """Compute the window up to fragment ``upto`` (default: every fragment built)."""
        end = len(self.timeline) if upto is None else min(upto + 1, len(self.timeline))
        at = self.at
        n = self.origin + len(at)
        if n >= end:
            return
        cap = self.cap_ms
        total = at[-1] if at else 0.0
        previous = self._last_time
        for times in self.timeline.store.times_from(n, end):
            for t in times:
                if previous is not None:
                    gap = t - previous
                    if gap > 0:
                        if cap is not None and gap > cap:
                            gap = cap
                        total += gap / 1000
                previous = t
                at.append(total)
        self._last_time = previous

    def _restart(self, fragment: int) -> None:
        self.origin = fragment
        self.at = array("d")
        self._last_time = None

    def __getitem__(self, fragment: int) -> float:
        if fragment < self.origin or fragment > self.origin + len(self.at) + 4096:
            self._restart(fragment)  # a jump: the player anchors there (never the clock of all between)
        if fragment >= self.origin + len(self.at):
            self._extend(max(fragment, self.origin + len(self.at) + 4095))
        return self.at[fragment - self.origin]

    def due_count(self, playback_seconds: float, start: int) -> int:
        """How many fragments are due (their playback time ≤ ``playback_seconds``), scanning from ``start``."""
        if start < self.origin:
            self._restart(start)
        if start - self.origin > self.WINDOW:  # forget what the player has left far behind
            drop = start - self.origin - 1024
            self.at = self.at[drop:]
            self.origin += drop
        length = len(self.timeline)
        while True:
            at = self.at
            n = self.origin + len(at)
            if n >= length or (at and at[-1] > playback_seconds + 1e-9) and n > start:
                break
            self._extend(max(n, start) + 4096)  # as far as the time asked for, in steps
        i = start
        while i < n and at[i - self.origin] <= playback_seconds + 1e-9:
            i += 1
        return i


# --------------------------------------------------------------------------------------------------
# Option parsing


_TIME = re.compile(r"^(?:(?:(\d+):)?(\d+):)?(\d+(?:\.\d*)?|\.\d+)$")


def parse_from_time(text: str) -> int:
    """``--from``: seconds (``90``, ``12.5``), ``mm:ss`` or ``hh:mm:ss`` (fractions allowed) → ms."""
    value = text.strip()
    match = _TIME.match(value)
    if not match:
        raise UsageError(f"--from {text!r}: use seconds (90, 12.5), mm:ss or hh:mm:ss")
    hours, minutes, seconds = match.groups()
    if (minutes is not None) and float(seconds) >= 60:
        raise UsageError(f"--from {text!r}: seconds must be below 60 in mm:ss form")
    if hours is not None and int(minutes) >= 60:
        raise UsageError(f"--from {text!r}: minutes must be below 60 in hh:mm:ss form")
    total = float(seconds) + 60 * int(minutes or 0) + 3600 * int(hours or 0)
    return int(round(total * 1000))


def parse_turns(text: str) -> tuple[int, int | None]:
    """``--turns``: ``3``, ``2-5`` or ``2-`` → inclusive ``(first, last)`` (``last`` None = open-ended)."""
    value = text.strip()
    match = re.fullmatch(r"(\d+)(?:\s*(-)\s*(\d+)?)?", value)
    if not match:
        raise UsageError(f"--turns {text!r}: use N, N-M or N-")
    first = int(match.group(1))
    if match.group(2) is None:
        last: int | None = first
    else:
        last = int(match.group(3)) if match.group(3) is not None else None
    if first < 1 or (last is not None and last < first):
        raise UsageError(f"--turns {text!r}: turns are numbered from 1 and the range must not be empty")
    return first, last


def make_filters(*, no_reasoning: bool = False, no_tools: bool = False, turns: str | None = None, redact: tuple[str, ...] = (),
                 redact_secrets: bool = False) -> Filters:
    """What ``--no-reasoning``, ``--no-tools``, ``--turns``, ``--redact`` and ``--redact-secrets`` ask of
    the timeline (a bad ``--redact`` pattern is a usage error here, before the log is read)."""
    redactor = None
    if redact or redact_secrets:
        from .redact import Redactor

        redactor = Redactor(redact, secrets=redact_secrets)
    return Filters(reasoning=not no_reasoning, tools=not no_tools, turns=parse_turns(turns) if turns else None,
                   redactor=redactor)
