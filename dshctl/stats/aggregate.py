"""Figures across many sessions: dsh's sums pooled, and nearest-rank percentiles over steps and turns.

Pooling dsh's sums (``ttftMs``/``ttftSteps``, ``decodeTokens``/``decodeMs``, token buckets) gives what dsh's
folds would give over the concatenation of the logs. Percentiles come from per-step and per-turn
observations: TTFT and tok/s per step (the steps that have them), output and billed-input tokens per turn.

A forked or seeded child repeats its parent's events up to the cut, and dsh's per-session figures count
them (FORMAT §7). Across sessions each inherited prefix is counted once: a child whose parent (header
``parentSession``) is among the sessions counted contributes only what it added after the cut; a child
whose parent is not counted keeps its prefix. The header names only the direct parent, so a prefix is
excluded only when that parent itself is counted.
"""

from __future__ import annotations

import copy
from array import array
from collections import Counter

from .figures import (
    PERCENTILE_METHOD,
    cache_hit_percent,
    counter_percentiles,
    mean,
    mean_and_percentiles,
    number,
    percent_number,
    percentiles,
    rate,
)
from .costs import CostTally, model_cost_fields
from .records import (
    AggregateOwnFigures,
    AggregatePercentiles,
    AggregateRecord,
    MeterTotals,
    ModelTotals,
    PrefixCounts,
    RetryWaste,
    SessionRecord,
)
from .results import OBSERVATIONS, InheritedPrefix, StatsSamples

_SUMMED = ("llm_ms", "tool_ms", "ttft_ms", "decode_ms", "decode_tokens", "reasoning_tokens")
_BUCKETS = ("uncached_input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens")
_WASTE = ("failed_attempts", "billed_input_tokens", "output_tokens", "attempt_ms", "backoff_ms")
MODEL_SUMMED = (
    "settlements", "messages", "uncached_input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens",
    "ttft_ms", "ttft_steps", "decode_ms", "decode_tokens", "steps", "turns", "llm_ms", "tool_ms", "reasoning_tokens",
)
"""The figures of a session's model entry that add up across sessions (the others are ratios of them)."""
_TOOL_SUMMED = ("calls", "failures", "tool_ms")


def _plus_nullable(total, value, sign: int = 1):
    """``total + sign · value`` where None is "nothing yet": None plus nothing stays None."""
    if value is None:
        return total
    return sign * value if total is None else total + sign * value


def buckets_fields(buckets: dict) -> dict:
    """The five token buckets and the cache hit of pooled sums (attribute name → value), as keyword
    arguments of a record."""
    uncached = buckets["uncached_input_tokens"]
    read = buckets["cache_read_tokens"]
    write = buckets["cache_write_tokens"]
    billed = None
    hit = None
    if uncached is not None:
        billed = uncached + (read or 0) + (write or 0)
        hit = cache_hit_percent(read or 0, billed, uncached + (write or 0))
    return {
        "uncached_input_tokens": uncached,
        "cache_read_tokens": read,
        "cache_write_tokens": write,
        "billed_input_tokens": billed,
        "output_tokens": buckets["output_tokens"],
        "cache_hit_percent": percent_number(hit),
    }


def _after_cut(samples: StatsSamples, inherited: StatsSamples) -> StatsSamples:
    """The observations a seeded session made after its cut: the inherited ones are a prefix of each
    observation series (they were taken first) and a part of the gap histogram."""
    gaps = Counter(samples.gaps)
    gaps.subtract(inherited.gaps)
    series = {name: getattr(samples, name)[len(getattr(inherited, name)) :] for name in OBSERVATIONS}
    return StatsSamples(
        **series,
        gaps=+gaps,
        model_ttft=_dict_after_cut(samples.model_ttft, inherited.model_ttft),
        tool_ms=_dict_after_cut(samples.tool_ms, inherited.tool_ms),
        model_costs=_costs_after_cut(samples.model_costs, inherited.model_costs),
    )


def _dict_after_cut(series: dict, inherited: dict) -> dict:
    return {key: values[len(inherited.get(key, ())) :] for key, values in series.items()}


def _costs_after_cut(costs: dict | None, inherited: dict | None) -> dict | None:
    """Each model's costs less what the inherited prefix had cost."""
    if costs is None:
        return None
    after = {}
    for route, tally in costs.items():
        tally = tally.copy()
        before = (inherited or {}).get(route)
        if before is not None:
            tally.merge(before, -1)
        after[route] = tally
    return after


class _Pool:
    """Sums and observations pooled over session records (or inherited prefixes, added or taken away).
    Keyed by the records' attribute names."""

    def __init__(self) -> None:
        self.turns = 0
        self.steps = 0
        self.ttft_steps = 0
        self.sums: dict[str, float | None] = {key: None for key in _SUMMED}
        self.buckets: dict[str, int | None] = {key: None for key in _BUCKETS}
        self.samples = StatsSamples.empty()
        self.stalls = 0
        self.stall_ms: int | None = None
        self.attempts = 0
        self.retries = 0
        self.tool_calls = 0
        self.waste: dict[str, int | None] = {"failed_attempts": 0, "billed_input_tokens": 0, "output_tokens": 0, "attempt_ms": None, "backoff_ms": None}
        self.models: dict[str | None, dict] = {}  # route → its MODEL_SUMMED sums
        self.model_costs: dict[str | None, CostTally] | None = None  # route → its costs; None without prices
        self.tools: dict[str | None, dict] = {}  # name → its _TOOL_SUMMED sums
        self.legacy: dict[str, int | None] = {key: None for key in _BUCKETS}

    def start_from_zero(self) -> None:
        """The sums of no session at all: 0, as dsh's folds start (null stays for a sum every session
        lacks, as dsh lacks it in fixture form); ``reasoningTokens``, which dsh never sums, stays null."""
        for sums in (self.sums, self.buckets, self.legacy, self.waste):
            for key, value in sums.items():
                if value is None and key != "reasoning_tokens":
                    sums[key] = 0
        self.stall_ms = 0 if self.stall_ms is None else self.stall_ms

    def add_record(self, record: SessionRecord, sign: int = 1) -> None:
        """Add (sign 1) or take away (sign -1) a session record's pooled figures."""
        self.turns += sign * record.turns
        self.steps += sign * record.steps
        self.ttft_steps += sign * record.ttft_steps
        sums = self.sums
        for key in _SUMMED:
            sums[key] = _plus_nullable(sums[key], getattr(record, key), sign)
        buckets = self.buckets
        for key in _BUCKETS:
            buckets[key] = _plus_nullable(buckets[key], getattr(record, key), sign)
        own = record.dshctl
        self.stalls += sign * own.stalls
        self.stall_ms = _plus_nullable(self.stall_ms, own.stall_ms, sign)
        self.attempts += sign * own.attempts
        self.retries += sign * own.retries
        self.tool_calls += sign * own.tool_calls
        waste = self.waste
        for key in _WASTE:
            waste[key] = _plus_nullable(waste[key], getattr(own.retry_waste, key), sign)
        legacy = self.legacy
        for key in _BUCKETS:
            legacy[key] = _plus_nullable(legacy[key], getattr(own.token_meter011, key), sign)
        for entry in own.models:
            merged = self.models.setdefault(entry.model, {})
            for key in MODEL_SUMMED:
                merged[key] = _plus_nullable(merged.get(key), getattr(entry, key), sign)
        for entry in own.tools:
            merged = self.tools.setdefault(entry.name, {})
            for key in _TOOL_SUMMED:
                merged[key] = _plus_nullable(merged.get(key), getattr(entry, key), sign)

    def add_samples(self, samples: StatsSamples) -> None:
        pooled = self.samples
        for name in OBSERVATIONS:
            getattr(pooled, name).extend(getattr(samples, name))
        pooled.gaps.update(samples.gaps)
        for key, values in samples.model_ttft.items():
            pooled.model_ttft.setdefault(key, array("d")).extend(values)
        for key, values in samples.tool_ms.items():
            pooled.tool_ms.setdefault(key, array("d")).extend(values)
        if samples.model_costs is not None:
            if self.model_costs is None:
                self.model_costs = {}
            for route, tally in samples.model_costs.items():
                pooled_tally = self.model_costs.get(route)
                if pooled_tally is None:
                    pooled_tally = self.model_costs[route] = CostTally()
                pooled_tally.merge(tally)

    def cost_fields(self) -> dict:
        """The pool's ``costs``, ``costs_by_currency`` and ``unpriced_models`` (nothing without prices)."""
        return {} if self.model_costs is None else model_cost_fields(self.model_costs)


class Aggregate:
    """Sessions pooled; ``priced``: with costs (the cost fields then appear even over no priced call)."""

    def __init__(self, priced: bool = False) -> None:
        self.sessions = 0
        self.failed = 0
        self.skipped = 0
        self.pool = _Pool()
        if priced:
            self.pool.model_costs = {}
        self.ids: set[str] = set()
        self.prefixes: list[tuple[object, InheritedPrefix]] = []  # (parent id, what the child inherited)
        self.model_sessions: Counter = Counter()  # model → sessions whose log used it
        self.tool_sessions: Counter = Counter()

    def add(self, session: SessionRecord, samples: StatsSamples) -> None:
        self.sessions += 1
        if isinstance(session.id, str):
            self.ids.add(session.id)
        own = session.dshctl
        self.model_sessions.update(entry.model for entry in own.models)
        self.tool_sessions.update(entry.name for entry in own.tools)
        self.pool.add_record(session)
        inherited = samples.inherited
        if inherited is None:
            self.pool.add_samples(samples)
            return
        # counted after the cut for now; record() adds the prefix back unless the parent is counted
        self.pool.add_record(inherited.record, -1)
        self.pool.add_samples(_after_cut(samples, inherited.samples))
        self.prefixes.append((session.parent_session, inherited))

    def settled(self, counted_ids: set | None = None) -> tuple[_Pool, PrefixCounts]:
        """The pool with every inherited prefix counted once: in the parent when it is counted (among
        ``counted_ids``, default this aggregate's sessions: a rollup row passes the whole run's), else in
        the child."""
        ids = self.ids if counted_ids is None else counted_ids
        pool = copy.deepcopy(self.pool)
        if self.sessions == 0:
            pool.start_from_zero()
        counted = 0
        for parent, inherited in self.prefixes:
            if parent in ids:
                continue
            pool.add_record(inherited.record)
            pool.add_samples(inherited.samples)
            counted += 1
        return pool, PrefixCounts(excluded=len(self.prefixes) - counted, counted=counted)

    def record(self, counted_ids: set | None = None) -> AggregateRecord:
        pool, prefixes = self.settled(counted_ids)
        sums = pool.sums
        samples = pool.samples
        return AggregateRecord(
            sessions=self.sessions,
            failed=self.failed,
            skipped=self.skipped,
            inherited_prefixes=prefixes,
            turns=pool.turns,
            steps=pool.steps,
            llm_ms=sums["llm_ms"],
            tool_ms=sums["tool_ms"],
            ttft_ms=sums["ttft_ms"],
            ttft_steps=pool.ttft_steps,
            mean_ttft_ms=number(mean(sums["ttft_ms"], pool.ttft_steps)),
            decode_ms=sums["decode_ms"],
            decode_tokens=sums["decode_tokens"],
            tokens_per_second=rate(sums["decode_tokens"], sums["decode_ms"]),
            **buckets_fields(pool.buckets),
            reasoning_tokens=sums["reasoning_tokens"],
            **pool.cost_fields(),
            percentile_method=PERCENTILE_METHOD,
            percentiles=AggregatePercentiles(
                ttft_ms=percentiles(samples.ttft_ms),
                tokens_per_second=percentiles(samples.tokens_per_second),
                output_tokens_per_turn=percentiles(samples.output_tokens_per_turn),
                billed_input_tokens_per_turn=percentiles(samples.billed_input_tokens_per_turn),
            ),
            dshctl=AggregateOwnFigures(
                attempts=pool.attempts,
                retries=pool.retries,
                tool_calls=pool.tool_calls,
                provider_ttft_ms=mean_and_percentiles(samples.provider_ttft_ms),
                first_visible_ms=mean_and_percentiles(samples.first_visible_ms),
                inter_token_gap_ms=counter_percentiles(samples.gaps),
                stalls=pool.stalls,
                stall_ms=pool.stall_ms,
                retry_waste=RetryWaste(**pool.waste),
                models=_model_records(pool),
                token_meter011=MeterTotals(**buckets_fields(pool.legacy)),
            ),
        )


def _model_records(pool: _Pool) -> list[ModelTotals]:
    """The pooled model entries, as the session record's first keys."""
    records = []
    for route, entry in sorted(pool.models.items(), key=lambda item: (item[0] is None, item[0] or "")):
        if not entry.get("settlements"):
            continue  # a model only the excluded prefixes used
        uncached = entry.get("uncached_input_tokens")
        billed = None
        if uncached is not None:
            billed = uncached + (entry.get("cache_read_tokens") or 0) + (entry.get("cache_write_tokens") or 0)
        records.append(
            ModelTotals(
                model=route,
                settlements=entry.get("settlements"),
                messages=entry.get("messages"),
                uncached_input_tokens=uncached,
                cache_read_tokens=entry.get("cache_read_tokens"),
                cache_write_tokens=entry.get("cache_write_tokens"),
                billed_input_tokens=billed,
                output_tokens=entry.get("output_tokens"),
                ttft_ms=entry.get("ttft_ms"),
                ttft_steps=entry.get("ttft_steps"),
                mean_ttft_ms=number(mean(entry.get("ttft_ms"), entry.get("ttft_steps"))),
                decode_ms=entry.get("decode_ms"),
                decode_tokens=entry.get("decode_tokens"),
                tokens_per_second=rate(entry.get("decode_tokens"), entry.get("decode_ms")),
            )
        )
    return records
