"""``--since`` / ``--until``: the window of creation times a command keeps, and the one rule for a
session's ``createdAt`` against it.

Values: an ISO 8601 date or date-time, epoch milliseconds, or an age —

* ``2026-03-01`` — midnight UTC of that day.
* ``2026-03-01T12:30``, ``2026-03-01 12:30:05``, ``…Z``, ``…+02:00`` — a date-time; without an offset it is UTC.
* ``1767225600000`` — epoch milliseconds (what the header's ``createdAt`` holds); a program may pass the int.
* ``90m``, ``36h``, ``7d``, ``2w`` — that long before now.
* ``today``, ``yesterday`` — local midnight of that day; ``monday`` … ``sunday`` — local midnight of the
  latest such day (today, when it is one); ``this week`` — Monday's midnight; ``last week`` — seven days
  before now (as git reads it); ``this month`` — the first of the month, local midnight. Local is the
  ``TZ`` of the process.

A session is inside a window when its ``createdAt`` is a positive epoch-ms integer with
``since <= createdAt < until``. One without such a time — missing, not an integer, a boolean, ``0``
(dsh's test fixtures carry ``createdAt: 0``) or negative — is outside every window: nothing says when it
was created, so neither bound can hold it. ``stats``, ``grep``, ``ls``, ``validate``, ``export`` and ``sql``
all apply this rule (:meth:`Window.holds`; ``sql`` to the ``created_at`` of its ``sessions`` table).
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import time as _time
from typing import Any, NamedTuple

from ..errors import UsageError

_AGE = re.compile(r"^(\d+(?:\.\d+)?)\s*(s|m|h|d|w)$")
_UNIT_MS = {"s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}


class Window(NamedTuple):
    """``[since_ms, until_ms)`` in epoch ms; None where that side is open."""

    since_ms: int | None = None
    until_ms: int | None = None

    @classmethod
    def of(cls, since: str | int | None, until: str | int | None, *, now_ms: int | None = None) -> "Window":
        return cls(*parse_window(since, until, now_ms=now_ms))

    @property
    def bounded(self) -> bool:
        return self.since_ms is not None or self.until_ms is not None

    def holds(self, created: Any) -> bool:
        """Whether a session created at ``created`` (a header's ``createdAt``) is inside the window."""
        if not self.bounded:
            return True
        created = created_ms(created)
        if created is None:
            return False
        return (self.since_ms is None or created >= self.since_ms) and (self.until_ms is None or created < self.until_ms)

    def written_before(self, ref) -> bool:
        """True when the log's last write is well before ``--since``: it cannot hold a session inside the
        window, so it is left unopened. Never for a ``--since`` still to come: only future-dated
        (synthetic) logs can match it, and their modification times say nothing about their
        ``createdAt``."""
        since_ms = self.since_ms
        if since_ms is None or ref.path is None or ref.problem is not None or since_ms > clock_ms():
            return False
        try:
            return os.stat(ref.path).st_mtime_ns // 1_000_000 < since_ms - MTIME_SLACK_MS
        except OSError:
            return False


    def excludes(self, ref) -> bool:
        """True when the log ``ref`` names holds a session outside the window, found before reading it:
        last written well before ``--since`` (:meth:`written_before`), or a header whose ``createdAt``
        the window does not hold. False when the window is open, for a log streamed from standard input
        (its header can only be read once, by the command; the members of a ZIP on standard input are
        held whole and are read here as any log is), and for a log whose header cannot be read: reading
        it says why."""
        if not self.bounded:
            return False
        if self.written_before(ref):
            return True
        if ref.reads_stdin:
            return False
        from ..errors import DshctlError
        from ..reader import open_log

        try:
            with open_log(ref) as log:
                created = log.header.createdAt
        except (DshctlError, OSError, ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError):
            return False
        return not self.holds(created)


def created_ms(created: Any) -> int | None:
    """A header's ``createdAt`` when it says when the session was created: a positive epoch-ms safe
    integer (not a bool, not 0 as dsh's test fixtures carry, not negative); else None. The one rule for
    every use of it (the window, the export's times)."""
    from ..jsvalues import is_plain_safe_int

    return created if is_plain_safe_int(created) and created > 0 else None


MTIME_SLACK_MS = 2 * 86_400_000
"""A log last written more than this before ``--since`` is skipped unopened. A session is created before
its log's last write, so ``mtime < since`` alone would do; the slack covers clocks and archive formats
that store local time without a zone (ZIP), and file systems that round times down."""


def clock_ms() -> int:
    """Now, in epoch ms (a function, so tests can set the clock)."""
    return _time.time_ns() // 1_000_000


def parse_window(
    since: str | int | None, until: str | int | None, *, now_ms: int | None = None
) -> tuple[int | None, int | None]:
    """``--since`` and ``--until`` in epoch ms (None when not given); an empty window (``--until`` at or
    before ``--since``) is a usage error: it could only ever select nothing."""
    now = clock_ms() if now_ms is None else now_ms
    since_ms = parse_time_ms(since, option="--since", now_ms=now) if since is not None else None
    until_ms = parse_time_ms(until, option="--until", now_ms=now) if until is not None else None
    if since_ms is not None and until_ms is not None and until_ms <= since_ms:
        raise UsageError(f"--until {until} is not after --since {since}: no session can be in between")
    return since_ms, until_ms


_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _named_time(text: str, now_ms: int) -> int | None:
    """``today``, ``yesterday``, a weekday, ``this week``, ``last week``, ``this month``; None for others."""
    words = " ".join(text.split())
    now = _dt.datetime.fromtimestamp(now_ms / 1000).astimezone()
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if words == "today":
        day = midnight
    elif words == "yesterday":
        day = midnight - _dt.timedelta(days=1)
    elif words in _WEEKDAYS or words.removeprefix("last ") in _WEEKDAYS:
        back = (now.weekday() - _WEEKDAYS.index(words.removeprefix("last "))) % 7
        day = midnight - _dt.timedelta(days=back or (7 if words.startswith("last ") else 0))
    elif words == "this week":
        day = midnight - _dt.timedelta(days=now.weekday())
    elif words == "last week":
        return now_ms - _UNIT_MS["w"]
    elif words == "this month":
        day = midnight.replace(day=1)
    else:
        return None
    # the calendar day's start in local time (a DST change between now and then is the day's own)
    return int(day.replace(tzinfo=None).astimezone().timestamp() * 1000)


MAX_AGE_MS = 100 * 366 * 86_400_000
"""The longest age ``--since``/``--until`` take (a century): no dsh session is older."""


def parse_time_ms(text: str | int, *, option: str, now_ms: int | None = None) -> int:
    if isinstance(text, int) and not isinstance(text, bool):
        return text  # epoch ms, from a program
    if not isinstance(text, str):
        raise UsageError(f"{option}: {text!r} is not a time (a date, epoch milliseconds or an age)")
    value = text.strip()
    if not value:
        raise UsageError(f"{option}: empty value")
    if value.isdigit() and len(value) >= 9:
        return int(value)
    named = _named_time(value.lower(), clock_ms() if now_ms is None else now_ms)
    if named is not None:
        return named
    age = _AGE.match(value.lower())
    if age:
        now = clock_ms() if now_ms is None else now_ms
        span = float(age.group(1)) * _UNIT_MS[age.group(2)]
        if not span < MAX_AGE_MS:  # also inf: 400 nines of weeks overflowed int() into a traceback
            raise UsageError(f"{option}: {text!r} reaches back further than {MAX_AGE_MS // _UNIT_MS['d']:,} days")
        return now - int(span)
    try:
        parsed = _dt.datetime.fromisoformat(value.replace("z", "Z"))
    except ValueError:
        raise UsageError(
            f"{option}: cannot read {text!r} as a date (use 2026-03-01, 2026-03-01T12:30[:00][Z|+02:00], "
            "epoch milliseconds, an age such as 7d, 36h, 90m, or today, yesterday, monday, this week, last week)"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=_dt.timezone.utc)
    return int(parsed.timestamp() * 1000)
