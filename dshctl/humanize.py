"""Numbers and times as people read them: byte sizes, byte limits, UTC moments. One home each, so a
size reads the same in ``ls``, ``images`` and a replay placeholder."""

from __future__ import annotations

from typing import Any

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
