"""Rollups of many sessions: one row per day, ISO week, month, project, model or tool, and the total.

A session belongs to one project, its ``cwd``, and starts in one day, week and month (of its header's
``createdAt`` in the chosen time zone). Each row is an :class:`~dshctl.stats.aggregate.Aggregate` of
the sessions that belong to it, settled against the whole run's sessions, so an inherited fork prefix is
counted once — in its parent's row when the parent is counted, else in the child's — and the rows add
up to the total.

Day, week and month rows put what the model calls billed — token buckets, reasoning tokens, costs — in
the period of each call's time, the time its price was chosen at (:mod:`dshctl.stats.billing`): a
session running past midnight bills on both days, and an inherited prefix counted in its child bills
when its calls were made. The rest of a session's figures (turns, steps, times, TTFT, throughput) stay
in the period it started in. ``sessions`` counts the sessions that started in the period or billed a
call in it, so one session can count in several rows (the total counts it once).

Model and tool rows split the total instead: a step's figures go to the model of its message, a tool
call's time to its tool. Their token, time, step and cost figures add up to the total; ``sessions`` and
``turns`` count the sessions and turns that used the model or tool, so one session may count in several
rows.
"""

from __future__ import annotations

import datetime as _dt
import os
from typing import Any, Callable

import msgspec

from ..errors import UsageError
from .aggregate import Aggregate, buckets_fields
from .billing import NO_TIME, NOT_POSITIVE, CallBilling, billing_after_cut
from .costs import CostTally, model_cost_fields
from .figures import mean, nearest_rank, number, rate
from .records import UNSET, AggregateRecord, Record, RollupRow, SessionRecord, ToolRow, wire_value

PERIODS = ("day", "week", "month")
SESSION_KEYED = PERIODS + ("project",)
ROLLUPS = SESSION_KEYED + ("model", "tool")
UNKNOWN = "(unknown)"


def time_zone(name: str | None) -> _dt.tzinfo:
    """The zone of ``--tz`` (an IANA name), or the local zone."""
    if name is None:
        return local_zone()
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise UsageError(f"--tz: unknown time zone {name!r} (an IANA name such as Europe/Berlin, America/New_York or UTC)") from None


LOCALTIME = "/etc/localtime"


def local_zone() -> _dt.tzinfo:
    """The local zone by its IANA name when that can be known (``TZ``, else the zoneinfo file
    /etc/localtime links to), so summer and winter time both apply; else the offset in force now."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    name = _local_zone_name()
    if name is not None:
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError, OSError):
            pass
    return _dt.datetime.now().astimezone().tzinfo  # type: ignore[return-value]


def _local_zone_name() -> str | None:
    """``TZ`` (``:Europe/Berlin`` and zoneinfo paths too) when set, else /etc/localtime's link target."""
    spec = os.environ.get("TZ")
    if spec is None:
        try:
            spec = os.readlink(LOCALTIME)
        except OSError:
            return None
    spec = spec.removeprefix(":")
    if "zoneinfo/" in spec:
        spec = spec.rsplit("zoneinfo/", 1)[1]
    return spec or None


def zone_name(zone: _dt.tzinfo) -> str:
    """The IANA name of a zone, else its abbreviation and UTC offset now (``CET (UTC+01:00)``)."""
    key = getattr(zone, "key", None)
    if key:
        return key
    now = _dt.datetime.now(zone)
    offset = now.strftime("%z")
    return f"{now.tzname()} (UTC{offset[:3]}:{offset[3:]})"


def period_key(by: str, created_ms: Any, zone: _dt.tzinfo) -> str:
    """The day (2026-03-01), ISO week (2026-W09, Monday to Sunday) or month (2026-03) a session started
    in (or a call was made in)."""
    if not isinstance(created_ms, int) or isinstance(created_ms, bool) or created_ms <= 0:
        return UNKNOWN
    try:
        start = _dt.datetime.fromtimestamp(created_ms // 1000, zone)
    except (OverflowError, OSError, ValueError):
        return UNKNOWN
    if by == "day":
        return start.strftime("%Y-%m-%d")
    if by == "month":
        return start.strftime("%Y-%m")
    year, week, _ = start.isocalendar()
    return f"{year}-W{week:02d}"


def session_key(by: str, session: SessionRecord, zone: _dt.tzinfo) -> str:
    if by == "project":
        cwd = session.cwd
        return cwd if isinstance(cwd, str) and cwd else UNKNOWN
    return period_key(by, session.created_at, zone)


class Rollup:
    """Sessions grouped by day, week, month or project (each group an aggregate of its sessions); by
    day, week or month, what their calls billed by the period of each call."""

    def __init__(self, by: str, zone: _dt.tzinfo, priced: bool = False):
        self.by = by
        self.zone = zone
        self.priced = priced
        self.groups: dict[str, Aggregate] = {}
        self.billed = PeriodBilling(by, zone) if by in PERIODS else None

    def add(self, session: SessionRecord, samples) -> None:
        key = session_key(self.by, session, self.zone)
        group = self.groups.get(key)
        if group is None:
            group = self.groups[key] = Aggregate(self.priced)
        group.add(session, samples)
        if self.billed is not None:
            self.billed.add(session, samples, key)

    def rows(self, counted_ids: set) -> list[RollupRow]:
        billed = None if self.billed is None else self.billed.settled(counted_ids)
        keys = set(self.groups) | set(billed or ())
        rows = []
        for key in sorted(keys, key=lambda key: (key == UNKNOWN, key)):
            group = self.groups.get(key) or Aggregate(self.priced)
            row = period_row(self.by, key, group.record(counted_ids))
            if billed is not None:
                row = billed_row(row, billed.get(key) or _Bill(), self.priced)
            rows.append(row)
        return rows


class _Bill:
    """One period's billing: the sessions that started or billed in it, and each model's billing."""

    __slots__ = ("sessions", "models")

    def __init__(self) -> None:
        self.sessions: set[int] = set()
        self.models: dict[str | None, CallBilling] = {}

    def take(self, session: int, models: dict[str | None, CallBilling], sign: int = 1) -> None:
        self.sessions.add(session)
        mine = self.models
        for route, entry in models.items():
            pooled = mine.get(route)
            if pooled is None:
                pooled = mine[route] = CallBilling()
            pooled.merge(entry, sign)

    def copy(self) -> "_Bill":
        twin = _Bill()
        twin.sessions = set(self.sessions)
        twin.models = {route: entry.copy() for route, entry in self.models.items()}
        return twin


class PeriodBilling:
    """What the sessions' calls billed, by the period of each call (in ``zone``), and the inherited
    prefixes' billing to count where the parent is not counted."""

    def __init__(self, by: str, zone: _dt.tzinfo):
        self.by = by
        self.zone = zone
        self.count = 0  # sessions added: a session's number stands for it in a period's sessions
        self.periods: dict[str, _Bill] = {}
        self.prefixes: list[tuple[object, int, str, dict]] = []  # (parent id, session, start, billing by period)
        self._keys: dict[int, str] = {}  # minute → its period

    def add(self, session: SessionRecord, samples, start: str) -> None:
        number = self.count
        self.count += 1
        billing = samples.billing if samples is not None else None
        inherited = samples.inherited if samples is not None else None
        prefix = None if inherited is None else inherited.samples.billing
        if billing is None:
            billing = {}
        if prefix is not None:
            billing = billing_after_cut(billing, prefix)
            self.prefixes.append((session.parent_session, number, start, self._by_period(prefix, start)))
        self._bill(self.periods, number, start, self._by_period(billing, start))
        self.periods.setdefault(start, _Bill()).sessions.add(number)

    def settled(self, counted_ids: set) -> dict[str, _Bill]:
        """Each period's billing with every inherited prefix counted once: in the child, at its calls'
        periods, unless the parent is counted (``counted_ids``)."""
        periods = {key: bill.copy() for key, bill in self.periods.items()}
        for parent, number, start, by_period in self.prefixes:
            if parent not in counted_ids:
                self._bill(periods, number, start, by_period)
        return periods

    @staticmethod
    def _bill(periods: dict[str, _Bill], number: int, start: str, by_period: dict) -> None:
        """A session's billing into the periods; outside its start only where it billed something (a
        replaced sample leaves nothing where it was counted)."""
        for key, models in by_period.items():
            if key != start and all(entry.is_nothing() for entry in models.values()):
                continue
            bill = periods.get(key)
            if bill is None:
                bill = periods[key] = _Bill()
            bill.take(number, models)

    def _by_period(self, billing: dict, start: str) -> dict[str, dict[str | None, CallBilling]]:
        """A session's billing by minute as billing by period (a call without a time: its session's start)."""
        periods: dict[str, dict[str | None, CallBilling]] = {}
        for minute, models in billing.items():
            key = start if minute is NO_TIME else self._period(minute)
            pooled = periods.get(key)
            if pooled is None:
                periods[key] = {route: entry.copy() for route, entry in models.items()}
                continue
            for route, entry in models.items():
                mine = pooled.get(route)
                if mine is None:
                    pooled[route] = entry.copy()
                else:
                    mine.merge(entry)
        return periods

    def _period(self, minute: int) -> str:
        key = self._keys.get(minute)
        if key is None:
            key = UNKNOWN if minute == NOT_POSITIVE else period_key(self.by, max(minute * 60_000, 1), self.zone)
            self._keys[minute] = key
        return key


def billed_row(row: RollupRow, bill: _Bill, priced: bool) -> RollupRow:
    """A day, week or month row with its period's billing: tokens, reasoning tokens, costs; the
    sessions that started or billed in it; the models its sessions used or its calls billed."""
    tokens = [0, 0, 0, 0]
    reasoning = None
    for entry in bill.models.values():
        for i in range(4):
            tokens[i] += entry.tokens[i]
        if entry.reasoning is not None:
            reasoning = entry.reasoning if reasoning is None else reasoning + entry.reasoning
    uncached, output, read, write = tokens
    fields = buckets_fields({"uncached_input_tokens": uncached, "cache_read_tokens": read, "cache_write_tokens": write, "output_tokens": output})
    models = list(row.models)
    billed = [route for route, entry in bill.models.items() if route not in models and not entry.is_nothing()]
    if billed:
        models = sorted(models + billed, key=lambda route: (route is None, route or ""))
    if priced:
        fields.update(model_cost_fields({route: entry.cost or CostTally() for route, entry in bill.models.items()}))
    return msgspec.structs.replace(row, sessions=len(bill.sessions), reasoning_tokens=reasoning, models=models, **fields)


def period_row(kind: str, key: str, record: AggregateRecord) -> RollupRow:
    """A rollup row (or the total, ``kind`` "total") from an aggregate record."""
    return RollupRow(
        kind=kind,
        key=key,
        sessions=record.sessions,
        turns=record.turns,
        steps=record.steps,
        uncached_input_tokens=record.uncached_input_tokens,
        cache_read_tokens=record.cache_read_tokens,
        cache_write_tokens=record.cache_write_tokens,
        billed_input_tokens=record.billed_input_tokens,
        output_tokens=record.output_tokens,
        cache_hit_percent=record.cache_hit_percent,
        reasoning_tokens=record.reasoning_tokens,
        llm_ms=record.llm_ms,
        tool_ms=record.tool_ms,
        ttft_ms=record.ttft_ms,
        ttft_steps=record.ttft_steps,
        mean_ttft_ms=record.mean_ttft_ms,
        p90_ttft_ms=record.percentiles.ttft_ms.p90,
        decode_ms=record.decode_ms,
        decode_tokens=record.decode_tokens,
        tokens_per_second=record.tokens_per_second,
        models=[entry.model for entry in record.dshctl.models],
        costs=record.costs,
        costs_by_currency=record.costs_by_currency,
        unpriced_models=record.unpriced_models,
    )


def model_rows(aggregate: Aggregate, counted_ids: set) -> list[RollupRow]:
    """One row per model of the settled pool (models only an excluded prefix used are left out)."""
    pool, _ = aggregate.settled(counted_ids)
    rows = []
    for route in sorted(pool.models, key=lambda route: (route is None, route or "")):
        entry = pool.models[route]
        if not entry.get("settlements") and not entry.get("steps"):
            continue
        rows.append(_model_row(route, entry, aggregate, pool))
    return rows


def _model_row(route: str | None, entry: dict, aggregate: Aggregate, pool) -> RollupRow:
    ttft = sorted(pool.samples.model_ttft.get(route, ()))
    costs = {}
    if pool.model_costs is not None:
        tally = pool.model_costs.get(route) or CostTally()
        costs = tally.fields([route] if tally.unpriced else [])
    return RollupRow(
        kind="model",
        key=route if route is not None else UNKNOWN,
        sessions=aggregate.model_sessions.get(route, 0),
        turns=entry.get("turns") or 0,
        steps=entry.get("steps") or 0,
        **buckets_fields({key: entry.get(key) for key in _BUCKET_KEYS}),
        reasoning_tokens=entry.get("reasoning_tokens"),
        llm_ms=entry.get("llm_ms"),
        tool_ms=entry.get("tool_ms"),
        ttft_ms=entry.get("ttft_ms"),
        ttft_steps=entry.get("ttft_steps") or 0,
        mean_ttft_ms=number(mean(entry.get("ttft_ms"), entry.get("ttft_steps") or 0)),
        p90_ttft_ms=number(nearest_rank(ttft, 90)),
        decode_ms=entry.get("decode_ms"),
        decode_tokens=entry.get("decode_tokens"),
        tokens_per_second=rate(entry.get("decode_tokens"), entry.get("decode_ms")),
        settlements=entry.get("settlements") or 0,
        **costs,
    )


_BUCKET_KEYS = ("uncached_input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens")


def tool_rows(aggregate: Aggregate, counted_ids: set) -> tuple[list[ToolRow], ToolRow]:
    """One row per tool name, and the total row over every tool call."""
    pool, _ = aggregate.settled(counted_ids)
    total_ms = pool.sums["tool_ms"]
    rows = []
    every: list[float] = []
    for name in sorted(pool.tools, key=lambda name: (name is None, name or "")):
        entry = pool.tools[name]
        if not entry.get("calls"):
            continue
        durations = pool.samples.tool_ms.get(name, ())
        every.extend(durations)
        rows.append(_tool_row("tool", name if name is not None else UNKNOWN, entry, durations, total_ms, aggregate.tool_sessions.get(name, 0)))
    total_entry = {
        "calls": sum(row.calls for row in rows),
        "failures": sum(row.failures for row in rows),
        "tool_ms": total_ms,
    }
    return rows, _tool_row("total", "total", total_entry, every, total_ms, aggregate.sessions)


def _tool_row(kind: str, key: str, entry: dict, durations, total_ms, sessions: int) -> ToolRow:
    ordered = sorted(durations)
    tool_ms = entry.get("tool_ms")
    share = None
    if tool_ms is not None and total_ms:
        share = round(tool_ms / total_ms * 100, 1)
    return ToolRow(
        kind=kind,
        key=key,
        sessions=sessions,
        calls=entry.get("calls") or 0,
        failures=entry.get("failures") or 0,
        timed_calls=len(ordered),
        tool_ms=tool_ms,
        p50_ms=number(nearest_rank(ordered, 50)),
        p90_ms=number(nearest_rank(ordered, 90)),
        max_ms=number(ordered[-1]) if ordered else None,
        share_percent=share,
    )


# -- --sort / --top / --reverse ---------------------------------------------------------------------------

COST_SORT = "cost"
"""The one sort key that is not a record key: ``costs.total`` (rows with a null cost sort last)."""

SORT_KEYS: dict[str, tuple[str, ...]] = {
    "session": (
        "createdAt", "id", "cwd", "title", "durationMs", "turns", "steps", "llmMs", "toolMs", "ttftMs", "meanTtftMs",
        "decodeMs", "decodeTokens", "tokensPerSecond", "uncachedInputTokens", "cacheReadTokens", "cacheWriteTokens",
        "billedInputTokens", "outputTokens", "reasoningTokens", "cacheHitPercent", "events",
    ),
    "turn": (
        "turn", "startTime", "steps", "ttftMs", "llmMs", "decodeMs", "decodeTokens", "tokensPerSecond",
        "uncachedInputTokens", "cacheReadTokens", "cacheWriteTokens", "billedInputTokens", "outputTokens",
        "reasoningTokens", "toolCalls", "toolMs", "attempts", "retries", "durationMs", "endReason",
    ),
    "step": (
        "turn", "step", "attempts", "retries", "ttftMs", "llmMs", "generationMs", "decodeMs", "decodeTokens",
        "tokensPerSecond", "uncachedInputTokens", "cacheReadTokens", "cacheWriteTokens", "billedInputTokens",
        "outputTokens", "reasoningTokens", "toolCalls", "toolMs", "finishReason", "model",
    ),
    "rollup": (
        "key", "sessions", "turns", "steps", "uncachedInputTokens", "cacheReadTokens", "cacheWriteTokens",
        "billedInputTokens", "outputTokens", "reasoningTokens", "cacheHitPercent", "llmMs", "toolMs", "meanTtftMs",
        "p90TtftMs", "tokensPerSecond",
    ),
    "tool": ("key", "sessions", "calls", "failures", "timedCalls", "toolMs", "p50Ms", "p90Ms", "maxMs", "sharePercent"),
}


def sort_table(by: str) -> str:
    if by in ("session", "turn", "step", "tool"):
        return by
    return "rollup"


def check_sort_key(by: str, key: str | None) -> None:
    if key is None:
        return
    keys = SORT_KEYS[sort_table(by)]
    if key in keys or (key == COST_SORT and by != "tool"):
        return
    from ..options.suggest import did_you_mean

    listed = keys if by == "tool" else keys + (COST_SORT,)
    raise UsageError(f"--sort: unknown key {key!r} for --by {by}{did_you_mean(key, listed)}; one of: {', '.join(listed)}")


def cost_total(row: Record) -> Any:
    """``costs.total`` of a record; None without one cost."""
    costs = getattr(row, "costs", None)
    return None if costs is None or costs is UNSET else costs.total


def _sort_value(key: str) -> Callable[[Record], Any]:
    if key == COST_SORT:
        return cost_total
    return lambda row: wire_value(row, key)


def ordered(rows: list, *, sort: str | None, top: int | None, reverse: bool) -> list:
    """Rows by ``sort`` (largest first; ``reverse``: smallest first; null always last), then the first
    ``top``. Without ``sort`` the rows keep their order (``reverse`` turns it round). Costs rank only
    within one currency (:func:`by_cost`)."""
    if sort == COST_SORT:
        rows = by_cost(rows, reverse)
    elif sort is not None:
        value = _sort_value(sort)
        known = [row for row in rows if value(row) is not None]
        unknown = [row for row in rows if value(row) is None]
        known.sort(key=lambda row: _comparable(value(row)), reverse=not reverse)
        rows = known + unknown
    elif reverse:
        rows = rows[::-1]
    return rows if top is None else rows[:top]


def _costs(row: Record) -> Any:
    costs = getattr(row, "costs", None)
    return None if costs is UNSET else costs


def by_cost(rows: list, reverse: bool) -> list:
    """Rows by cost, amounts compared only within a currency: the currency most rows are costed in
    first, then each other currency's rows (ranked among themselves), then rows without one cost
    (unpriced or in mixed currencies)."""
    groups: dict[str, list] = {}
    unknown = []
    for row in rows:
        costs = _costs(row)
        if costs is None or costs.currency is None:
            unknown.append(row)
        else:
            groups.setdefault(costs.currency, []).append(row)
    ranked = []
    for currency in cost_currencies(rows):
        ranked += sorted(groups[currency], key=cost_total, reverse=not reverse)
    return ranked + unknown


def cost_currencies(rows: list) -> list[str]:
    """The currencies rows are costed in, the one most rows use first (then by name)."""
    counts: dict[str, int] = {}
    for row in rows:
        costs = _costs(row)
        if costs is not None and costs.currency is not None:
            counts[costs.currency] = counts.get(costs.currency, 0) + 1
    return sorted(counts, key=lambda currency: (-counts[currency], currency))


def _comparable(value: Any) -> tuple:
    """Numbers before text, so a key that mixes them still sorts."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return (0, value, "")
    return (1, 0, str(value))
