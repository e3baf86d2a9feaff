"""Small pure figures shared by the stats fold, the aggregate and the renderers.

* ``cache_hit_percent`` — dsh's cache-hit display rule (FORMAT §7.3), in exact integer arithmetic.
* ``occupancy_percent`` — dsh's context-occupancy rounding and clamp (FORMAT §7.5).
* ``nearest_rank`` / ``counter_percentiles`` — the percentile method used everywhere in dshctl stats.
* ``format_*`` — the display formats of dsh's stats line (``StatsLine.tsx``, ``message-chrome.ts``);
  durations are :func:`dshctl.humanize.format_duration`'s.
"""

from __future__ import annotations

import math
from collections import Counter
from typing import Iterable, Sequence

from ..humanize import js_number, js_round
from .records import MeanPercentiles, Percentiles

PERCENTILES = (50, 90, 99)
PERCENTILE_METHOD = "nearest-rank"
"""p-th percentile = the smallest observed value with at least p % of the observations at or below it
(sorted[ceil(p/100 · n) − 1]); always an observed value, never interpolated."""


def cache_hit_percent(cache_read: int, billed_input: int, missed: int) -> str | None:
    """dsh's cache-hit share of billed input as its display string, or None without billed input.

    ``missed`` = uncached input + cache writes (so ``billed_input = cache_read + missed``).
    The share is rounded to an integer, halves up. If that would show 100 for a hit that is not full,
    the fewest decimals that keep the rounded value below 100 are used instead: with ``g`` the missed
    share in percent, the first ``d ≥ 1`` with ``g·10^d > ½``, and the last digit is ``10 − L`` where ``L`` is
    ``g·10^d`` rounded half *down* (between 1 and 5) — which is ``100 − g`` rounded half up at ``d`` places.
    Only a full hit (nothing missed) is exactly "100".
    """
    if billed_input <= 0:
        return None
    if missed == 0:
        return "100"
    # integer percent, ties up: floor((200·read + D) / (2·D))
    integer = (200 * cache_read + billed_input) // (2 * billed_input)
    if integer < 100:
        return str(integer)
    # g = 100·missed/D; find the first d with 2·100·missed·10^d > D
    d = 1
    while 200 * missed * 10**d <= billed_input:
        d += 1
    # L = round-half-down(g·10^d) = ceil(g·10^d − ½) = ceil((200·missed·10^d − D) / (2·D))
    numerator = 200 * missed * 10**d - billed_input
    loss = -(-numerator // (2 * billed_input))
    loss = min(5, max(1, loss))
    return "99." + "9" * (d - 1) + str(10 - loss)


def percent_number(text: str | None) -> int | float | None:
    """A display percent string as a JSON number with the same digits."""
    if text is None:
        return None
    return int(text) if "." not in text else float(text)


def occupancy_percent(used: int | None, window: int | None) -> int | None:
    """``min(100, round(used / window · 100))`` as dsh's context meter shows it; None unless both known."""
    if used is None or window is None or window <= 0:
        return None
    return min(100, js_round(used / window * 100))


def nearest_rank(sorted_values: Sequence[float], p: float) -> float | None:
    n = len(sorted_values)
    if n == 0:
        return None
    rank = max(1, math.ceil(p / 100 * n))
    return sorted_values[rank - 1]


def number(x: float | None) -> int | float | None:
    """An integral float as an int (``3.0`` → ``3``), so JSON shows whole milliseconds as integers."""
    if x is None:
        return None
    if x.__class__ is float and x.is_integer():
        return int(x)
    return x


def percentiles(values: Iterable[float]) -> Percentiles:
    """``n``, ``p50``, ``p90``, ``p99`` by nearest rank; the percentiles are None when ``n`` is 0."""
    ordered = sorted(values)
    p50, p90, p99 = (number(nearest_rank(ordered, p)) for p in PERCENTILES)
    return Percentiles(n=len(ordered), p50=p50, p90=p90, p99=p99)


def mean_and_percentiles(values: Sequence[float]) -> MeanPercentiles:
    """:func:`percentiles` and the mean of the same values."""
    ordered = sorted(values)
    p50, p90, p99 = (number(nearest_rank(ordered, p)) for p in PERCENTILES)
    return MeanPercentiles(n=len(ordered), p50=p50, p90=p90, p99=p99, mean=number(mean(sum(values), len(values))))


def counter_percentiles(counts: Counter) -> Percentiles:
    """Nearest-rank percentiles of a value → count histogram."""
    n = sum(counts.values())
    found: dict[int, float] = {}
    if n:
        targets = [(p, max(1, math.ceil(p / 100 * n))) for p in PERCENTILES]
        cumulative = 0
        it = iter(targets)
        current = next(it)
        for value in sorted(counts):
            cumulative += counts[value]
            while current is not None and cumulative >= current[1]:
                found[current[0]] = value
                current = next(it, None)
            if current is None:
                break
    return Percentiles(n=n, p50=found.get(50), p90=found.get(90), p99=found.get(99))


def mean(total: float | None, n: int) -> float | None:
    return None if total is None or n == 0 else total / n


def rate(tokens: float | None, ms: float | None) -> float | None:
    """Tokens per second, as dsh shows it only when the time span is positive."""
    if tokens is None or ms is None or ms <= 0:
        return None
    return tokens / (ms / 1000)


# -- display formats ------------------------------------------------------------------------------


def format_tokens(n: int | None) -> str:
    """dsh's compact count: 517 / 12.2K / 517K / 1.2M."""
    if n is None:
        return "—"

    def scaled(v: float) -> str:
        return str(js_round(v)) if v >= 100 else js_number(js_round(v * 10) / 10)

    if n < 1_000:
        return str(n)
    if n < 1_000_000:
        return f"{scaled(n / 1_000)}K"
    return f"{scaled(n / 1_000_000)}M"


def format_rate(tps: float | None) -> str:
    """dsh's decode throughput: whole tokens from ten up, one decimal below."""
    if tps is None:
        return "—"
    tps = max(0.0, tps)
    return str(js_round(tps)) if tps >= 10 else js_number(js_round(tps * 10) / 10)


SPARK_BARS = "▁▂▃▄▅▆▇█"


def sparkline(values: Sequence[float | None], width: int = 48) -> str:
    """A one-line bar chart; ``None`` values show as a space. Longer series are averaged into ``width`` cells."""
    if not values:
        return ""
    if len(values) > width:
        cells: list[float | None] = []
        n = len(values)
        for i in range(width):
            chunk = [v for v in values[i * n // width : (i + 1) * n // width] if v is not None]
            cells.append(sum(chunk) / len(chunk) if chunk else None)
    else:
        cells = list(values)
    known = [v for v in cells if v is not None]
    if not known:
        return ""
    top = max(known)
    if top <= 0:
        return "".join(" " if v is None else SPARK_BARS[0] for v in cells)
    last = len(SPARK_BARS) - 1
    return "".join(" " if v is None else SPARK_BARS[min(last, int(v / top * last + 0.5))] for v in cells)
