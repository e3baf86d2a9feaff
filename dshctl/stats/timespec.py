"""``--since`` / ``--until`` values: an ISO 8601 date or date-time, epoch milliseconds, or an age.

* ``2026-03-01`` — midnight UTC of that day.
* ``2026-03-01T12:30``, ``2026-03-01 12:30:05``, ``…Z``, ``…+02:00`` — a date-time; without an offset it is UTC.
* ``1767225600000`` — epoch milliseconds (what the header's ``createdAt`` holds).
* ``90m``, ``36h``, ``7d``, ``2w`` — that long before now.
"""

from __future__ import annotations

import datetime as _dt
import re
import time as _time

from ..errors import UsageError

_AGE = re.compile(r"^(\d+(?:\.\d+)?)\s*(s|m|h|d|w)$")
_UNIT_MS = {"s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}


def parse_window(since: str | None, until: str | None, *, now_ms: int | None = None) -> tuple[int | None, int | None]:
    """``--since`` and ``--until`` in epoch ms (None when not given); an empty window (``--until`` at or
    before ``--since``) is a usage error: it could only ever select nothing."""
    now = int(_time.time() * 1000) if now_ms is None else now_ms
    since_ms = parse_time_ms(since, option="--since", now_ms=now) if since is not None else None
    until_ms = parse_time_ms(until, option="--until", now_ms=now) if until is not None else None
    if since_ms is not None and until_ms is not None and until_ms <= since_ms:
        raise UsageError(f"--until {until} is not after --since {since}: no session can be in between")
    return since_ms, until_ms


MAX_AGE_MS = 100 * 366 * 86_400_000
"""The longest age ``--since``/``--until`` take (a century): no dsh session is older."""


def parse_time_ms(text: str, *, option: str, now_ms: int | None = None) -> int:
    value = text.strip()
    if not value:
        raise UsageError(f"{option}: empty value")
    if value.isdigit() and len(value) >= 9:
        return int(value)
    age = _AGE.match(value.lower())
    if age:
        now = int(_time.time() * 1000) if now_ms is None else now_ms
        span = float(age.group(1)) * _UNIT_MS[age.group(2)]
        if not span < MAX_AGE_MS:  # also inf: 400 nines of weeks overflowed int() into a traceback
            raise UsageError(f"{option}: {text!r} reaches back further than {MAX_AGE_MS // _UNIT_MS['d']:,} days")
        return now - int(span)
    try:
        parsed = _dt.datetime.fromisoformat(value.replace("z", "Z"))
    except ValueError:
        raise UsageError(
            f"{option}: cannot read {text!r} as a date (use 2026-03-01, 2026-03-01T12:30[:00][Z|+02:00], "
            "epoch milliseconds, or an age such as 7d, 36h, 90m)"
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=_dt.timezone.utc)
    return int(parsed.timestamp() * 1000)
