"""Numbers and times as people read them: byte sizes, byte limits, UTC moments, durations and the
replay clock. One home each, so a size or a duration reads the same wherever it is shown.

Durations come in named styles (:data:`DURATION_STYLES`), one function: ``format_duration(ms, style)``.
"""

from __future__ import annotations

import math
from typing import Any

def count(n: int, noun: str, plural: str | None = None) -> str:
    """``n`` things in words: "1 session", "15 spans" (thousands separated)."""
    return f"{n:,} {noun if n == 1 else plural or noun + 's'}"


_BINARY_UNITS = (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024))


def format_bytes(size: Any, *, missing: str = "", largest: str = "GiB") -> str:
    """``69 B``, ``1.5 KiB``, ``2.0 MiB`` …; ``missing`` for anything that is not an int.
    ``largest`` is the biggest unit used (a replay placeholder stops at MiB)."""
    if not isinstance(size, int) or isinstance(size, bool):
        return missing
    if size < 1024:
        return f"{size} B"
    units = [(unit, scale) for unit, scale in reversed(_BINARY_UNITS)]
    chosen = units[0]
    for unit, scale in units:
        if size >= scale:
            chosen = (unit, scale)
        if unit == largest:
            break
    unit, scale = chosen
    return f"{size / scale:.1f} {unit}"


def format_byte_limit(n: int) -> str:
    """A configured limit, exact: ``64 MiB`` when it is a whole number of a unit, else ``N bytes``."""
    for unit, scale in _BINARY_UNITS:
        if n >= scale and n % scale == 0:
            return f"{n // scale} {unit}"
    return f"{n} bytes"


def utc_moment(ms: Any, pattern: str = "%Y-%m-%dT%H:%M:%SZ") -> str | None:
    """Epoch milliseconds in UTC by ``pattern``; None for missing, non-positive or out-of-range values
    (fixtures carry ``createdAt: 0``)."""
    import datetime as _dt

    if not isinstance(ms, int) or isinstance(ms, bool) or ms <= 0:
        return None
    try:
        return _dt.datetime.fromtimestamp(ms / 1000, tz=_dt.timezone.utc).strftime(pattern)
    except (OverflowError, OSError, ValueError):
        return None


def js_round(x: float) -> int:
    """JavaScript ``Math.round`` (dsh rounds its figures with it): the nearest integer, halves rounded
    towards +∞."""
    return math.floor(x + 0.5)


def js_number(x: float) -> str:
    """A number as JavaScript's ``String()`` prints a short decimal (no trailing ``.0``)."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


DURATION_STYLES = ("compact", "fine", "clock")
"""How :func:`format_duration` writes a span:

* ``compact`` — dsh's (``StatsLine.tsx``): ``45.2s`` under a minute, ``2m42s`` under an hour, ``1h31m``
  under a day, ``1d1h`` from there on (each unit rounded on its own, so 23h59m40s carries into 1d0h);
  the stats tables and ``ls``;
* ``fine`` — ``compact``, with spans under a second in milliseconds (``850ms``, ``3.5ms``): TTFT, step
  and tool times;
* ``clock`` — ``850 ms``, ``45.2 s``, then the replay clock without milliseconds (``02:42``,
  ``1:31:00``): replay's turn lines.

``compact`` and ``fine`` write ``—`` for None (no figure)."""


def format_duration(ms: float | None, style: str = "compact") -> str:
    """``ms`` milliseconds in the named ``style`` (:data:`DURATION_STYLES`)."""
    if style == "clock":
        return _clock_duration(int(ms))  # type: ignore[arg-type]
    if style not in ("compact", "fine"):
        raise ValueError(f"unknown duration style {style!r}: one of {', '.join(DURATION_STYLES)}")
    if ms is None:
        return "—"
    if style == "fine" and ms < 1000:
        return f"{js_round(ms)}ms" if ms >= 10 or float(ms).is_integer() else f"{ms:.1f}ms"
    s = ms / 1000
    if s < 60:
        return f"{js_number(js_round(s * 10) / 10)}s"
    whole = js_round(s)
    if whole < 3600:
        return f"{whole // 60}m{whole % 60}s"
    minutes = js_round(s / 60)
    if minutes < 24 * 60:
        return f"{minutes // 60}h{minutes % 60}m"
    hours = js_round(s / 3600)
    return f"{hours // 24}d{hours % 24}h"


def format_ms(ms: float | None) -> str:
    """:func:`format_duration` in the ``fine`` style (TTFT, step and tool times in the stats tables)."""
    return format_duration(ms, "fine")


def _clock_duration(ms: int) -> str:
    if ms < 1000:
        return f"{ms} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    return format_clock(ms, millis=False)


def format_clock(ms: int, *, millis: bool = True) -> str:
    """A position on the recorded clock: ``mm:ss.mmm`` (``h:mm:ss.mmm`` from one hour)."""
    negative = ms < 0
    ms = abs(int(ms))
    seconds, rest = divmod(ms, 1000)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    clock = f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes:02d}:{seconds:02d}"
    if millis:
        clock += f".{rest:03d}"
    return ("-" if negative else "") + clock
