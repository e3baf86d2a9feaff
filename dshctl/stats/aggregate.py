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
    number,
    percent_number,
    percentiles,
    rate,
)
from .prices import CostSum
from .results import OBSERVATIONS, InheritedPrefix, StatsSamples

_SUMMED = ("llmMs", "toolMs", "ttftMs", "decodeMs", "decodeTokens", "reasoningTokens")
_BUCKETS = ("uncachedInputTokens", "cacheReadTokens", "cacheWriteTokens", "outputTokens")
_MODEL_DERIVED = ("model", "meanTtftMs", "tokensPerSecond", "billedInputTokens", "costs")


def _plus_nullable(total, value, sign: int = 1):
    """``total + sign · value`` where None is "nothing yet": None plus nothing stays None."""
    if value is None:
        return total
    return sign * value if total is None else total + sign * value


def _buckets_record(buckets: dict) -> dict:
    billed = None
    hit = None
    if buckets["uncachedInputTokens"] is not None:
        billed = buckets["uncachedInputTokens"] + (buckets["cacheReadTokens"] or 0) + (buckets["cacheWriteTokens"] or 0)
        hit = cache_hit_percent(
            buckets["cacheReadTokens"] or 0, billed, buckets["uncachedInputTokens"] + (buckets["cacheWriteTokens"] or 0)
        )
    return {
        "uncachedInputTokens": buckets["uncachedInputTokens"],
        "cacheReadTokens": buckets["cacheReadTokens"],
        "cacheWriteTokens": buckets["cacheWriteTokens"],
        "billedInputTokens": billed,
        "outputTokens": buckets["outputTokens"],
        "cacheHitPercent": percent_number(hit),
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
    )


def _dict_after_cut(series: dict, inherited: dict) -> dict:
    return {key: values[len(inherited.get(key, ())) :] for key, values in series.items()}


class PricedTokens:
    """Costs pooled per currency, and the tokens of models without a price (which make a total unknown)."""

    def __init__(self) -> None:
        self.costs = CostSum()
        self.unpriced: dict[str | None, int] = {}

    def add_model(self, entry: dict, sign: int) -> None:
        if "costs" not in entry:
            return
        if entry["costs"] is not None:
            self.costs.add_record(entry["costs"], sign)
            return
        tokens = (entry["billedInputTokens"] or 0) + (entry["outputTokens"] or 0)
        self.unpriced[entry["model"]] = self.unpriced.get(entry["model"], 0) + sign * tokens

    def add(self, other: "PricedTokens") -> None:
        for currency, sums in other.costs.by_currency.items():
            self.costs.add(currency, sums)
        for model, tokens in other.unpriced.items():
            self.unpriced[model] = self.unpriced.get(model, 0) + tokens

    def unpriced_models(self) -> list:
        return sorted((model for model, tokens in self.unpriced.items() if tokens), key=lambda m: (m is None, m or ""))

    def fields(self) -> dict:
        """``costs`` (null when a model without a price has tokens here, or currencies differ),
        ``costsByCurrency`` and ``unpricedModels``."""
        unpriced = self.unpriced_models()
        return {
            "costs": None if unpriced else self.costs.record(),
            "costsByCurrency": self.costs.records(),
            "unpricedModels": unpriced,
        }


class _Pool:
    """Sums and observations pooled over session records (or inherited prefixes, added or taken away)."""

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
        self.waste = {"failedAttempts": 0, "billedInputTokens": 0, "outputTokens": 0, "attemptMs": None, "backoffMs": None}
        self.models: dict[str | None, dict] = {}
        self.model_costs: dict[str | None, PricedTokens] = {}
        self.tools: dict[str | None, dict] = {}
        self.legacy: dict[str, int | None] = {key: None for key in _BUCKETS}
        self.priced: PricedTokens | None = None  # None until a record with costs is added

    def start_from_zero(self) -> None:
        """The sums of no session at all: 0, as dsh's folds start (null stays for a sum every session
        lacks, as dsh lacks it in fixture form); ``reasoningTokens``, which dsh never sums, stays null."""
        for sums in (self.sums, self.buckets, self.legacy, self.waste):
            for key, value in sums.items():
                if value is None and key != "reasoningTokens":
                    sums[key] = 0
        self.stall_ms = 0 if self.stall_ms is None else self.stall_ms

    def add_record(self, record: dict, sign: int = 1) -> None:
        """Add (sign 1) or take away (sign -1) a session record's pooled figures."""
        self.turns += sign * record["turns"]
        self.steps += sign * record["steps"]
        self.ttft_steps += sign * record["ttftSteps"]
        for key in _SUMMED:
            self.sums[key] = _plus_nullable(self.sums[key], record.get(key), sign)
        for key in _BUCKETS:
            self.buckets[key] = _plus_nullable(self.buckets[key], record[key], sign)
        own = record["dshctl"]
        self.stalls += sign * own["stalls"]
        self.stall_ms = _plus_nullable(self.stall_ms, own["stallMs"], sign)
        self.attempts += sign * own["attempts"]
        self.retries += sign * own["retries"]
        self.tool_calls += sign * own["toolCalls"]
        for key, value in own["retryWaste"].items():
            self.waste[key] = _plus_nullable(self.waste[key], value, sign)
        for key in _BUCKETS:
            self.legacy[key] = _plus_nullable(self.legacy[key], own["tokenMeter011"][key], sign)
        for entry in own["models"]:
            merged = self.models.setdefault(entry["model"], {"model": entry["model"]})
            for key, value in entry.items():
                if key not in _MODEL_DERIVED:
                    merged[key] = _plus_nullable(merged.get(key), value, sign)
            if "costs" in entry:
                if self.priced is None:
                    self.priced = PricedTokens()
                self.priced.add_model(entry, sign)
                self.model_costs.setdefault(entry["model"], PricedTokens()).add_model(entry, sign)
        for entry in own.get("tools", ()):
            merged = self.tools.setdefault(entry["name"], {"name": entry["name"]})
            for key, value in entry.items():
                if key != "name":
                    merged[key] = _plus_nullable(merged.get(key), value, sign)

    def add_samples(self, samples: StatsSamples) -> None:
        pooled = self.samples
        for name in OBSERVATIONS:
            getattr(pooled, name).extend(getattr(samples, name))
        pooled.gaps.update(samples.gaps)
        for key, values in samples.model_ttft.items():
            pooled.model_ttft.setdefault(key, array("d")).extend(values)
        for key, values in samples.tool_ms.items():
            pooled.tool_ms.setdefault(key, array("d")).extend(values)


class Aggregate:
    def __init__(self) -> None:
        self.sessions = 0
        self.failed = 0
        self.skipped = 0
        self.pool = _Pool()
        self.ids: set[str] = set()
        self.prefixes: list[tuple[object, InheritedPrefix]] = []  # (parent id, what the child inherited)
        self.model_sessions: Counter = Counter()  # model → sessions whose log used it
        self.tool_sessions: Counter = Counter()

    def add(self, session: dict, samples: StatsSamples) -> None:
        self.sessions += 1
        if isinstance(session["id"], str):
            self.ids.add(session["id"])
        own = session["dshctl"]
        self.model_sessions.update(entry["model"] for entry in own["models"])
        self.tool_sessions.update(entry["name"] for entry in own.get("tools", ()))
        self.pool.add_record(session)
        inherited = samples.inherited
        if inherited is None:
            self.pool.add_samples(samples)
            return
        # counted after the cut for now; record() adds the prefix back unless the parent is counted
        self.pool.add_record(inherited.record, -1)
        self.pool.add_samples(_after_cut(samples, inherited.samples))
        self.prefixes.append((session["parentSession"], inherited))

    def settled(self, counted_ids: set | None = None) -> tuple[_Pool, dict]:
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
        return pool, {"excluded": len(self.prefixes) - counted, "counted": counted}

    def record(self, counted_ids: set | None = None) -> dict:
        pool, prefixes = self.settled(counted_ids)
        sums = pool.sums
        samples = pool.samples
        tokens = _buckets_record(pool.buckets)
        return {
            "kind": "aggregate",
            "sessions": self.sessions,
            "failed": self.failed,
            "skipped": self.skipped,
            "inheritedPrefixes": prefixes,
            "turns": pool.turns,
            "steps": pool.steps,
            "llmMs": sums["llmMs"],
            "toolMs": sums["toolMs"],
            "ttftMs": sums["ttftMs"],
            "ttftSteps": pool.ttft_steps,
            "meanTtftMs": number(mean(sums["ttftMs"], pool.ttft_steps)),
            "decodeMs": sums["decodeMs"],
            "decodeTokens": sums["decodeTokens"],
            "tokensPerSecond": rate(sums["decodeTokens"], sums["decodeMs"]),
            **tokens,
            "reasoningTokens": sums["reasoningTokens"],
            **(pool.priced.fields() if pool.priced is not None else {}),
            "percentileMethod": PERCENTILE_METHOD,
            "percentiles": {
                "ttftMs": percentiles(samples.ttft_ms),
                "tokensPerSecond": percentiles(samples.tokens_per_second),
                "outputTokensPerTurn": percentiles(samples.output_tokens_per_turn),
                "billedInputTokensPerTurn": percentiles(samples.billed_input_tokens_per_turn),
            },
            "dshctl": {
                "attempts": pool.attempts,
                "retries": pool.retries,
                "toolCalls": pool.tool_calls,
                "providerTtftMs": _mean_and_percentiles(samples.provider_ttft_ms),
                "firstVisibleMs": _mean_and_percentiles(samples.first_visible_ms),
                "interTokenGapMs": counter_percentiles(samples.gaps),
                "stalls": pool.stalls,
                "stallMs": pool.stall_ms,
                "retryWaste": pool.waste,
                "models": _model_records(pool),
                "tokenMeter011": _buckets_record(pool.legacy),
            },
        }


_MODEL_KEYS = (
    "model", "settlements", "messages", "uncachedInputTokens", "cacheReadTokens", "cacheWriteTokens",
    "billedInputTokens", "outputTokens", "ttftMs", "ttftSteps", "meanTtftMs", "decodeMs", "decodeTokens",
    "tokensPerSecond",
)


def _model_records(pool: _Pool) -> list[dict]:
    """The pooled model entries with the session record's keys, in its order."""
    records = []
    for route, entry in sorted(pool.models.items(), key=lambda item: (item[0] is None, item[0] or "")):
        if not entry.get("settlements"):
            continue  # a model only the excluded prefixes used
        entry = dict(entry)
        if entry.get("uncachedInputTokens") is not None:
            entry["billedInputTokens"] = entry["uncachedInputTokens"] + (entry["cacheReadTokens"] or 0) + (entry["cacheWriteTokens"] or 0)
        entry["meanTtftMs"] = number(mean(entry["ttftMs"], entry["ttftSteps"]))
        entry["tokensPerSecond"] = rate(entry["decodeTokens"], entry["decodeMs"])
        records.append({key: entry.get(key) for key in _MODEL_KEYS})
    return records


def _mean_and_percentiles(values) -> dict:
    out = percentiles(values)
    out["mean"] = number(mean(sum(values), len(values)))
    return out
