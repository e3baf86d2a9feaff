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

_SUMMED = ("llmMs", "toolMs", "ttftMs", "decodeMs", "decodeTokens")
_BUCKETS = ("uncachedInputTokens", "cacheReadTokens", "cacheWriteTokens", "outputTokens")
_SAMPLE_KEYS = ("ttftMs", "tokensPerSecond", "outputTokensPerTurn", "billedInputTokensPerTurn", "providerTtftMs", "firstVisibleMs")
_MODEL_DERIVED = ("model", "meanTtftMs", "tokensPerSecond", "billedInputTokens")


def _plus(a, b, sign: int = 1):
    if b is None:
        return a
    return sign * b if a is None else a + sign * b


def _buckets_record(b: dict) -> dict:
    billed = None
    hit = None
    if b["uncachedInputTokens"] is not None:
        billed = b["uncachedInputTokens"] + (b["cacheReadTokens"] or 0) + (b["cacheWriteTokens"] or 0)
        hit = cache_hit_percent(b["cacheReadTokens"] or 0, billed, b["uncachedInputTokens"] + (b["cacheWriteTokens"] or 0))
    return {
        "uncachedInputTokens": b["uncachedInputTokens"],
        "cacheReadTokens": b["cacheReadTokens"],
        "cacheWriteTokens": b["cacheWriteTokens"],
        "billedInputTokens": billed,
        "outputTokens": b["outputTokens"],
        "cacheHitPercent": percent_number(hit),
    }


def _after_cut(samples: dict, inherited: dict) -> dict:
    """The observations a seeded session made after its cut: the inherited ones are a prefix of each
    sample array (they were taken first) and a part of the gap histogram."""
    out = {key: samples[key][len(inherited[key]):] for key in _SAMPLE_KEYS}
    gaps = Counter(samples["gaps"])
    gaps.subtract(inherited["gaps"])
    out["gaps"] = +gaps
    return out


class _Pool:
    """Sums and observations pooled over session records (or inherited prefixes, added or taken away)."""

    def __init__(self) -> None:
        self.turns = 0
        self.steps = 0
        self.ttft_steps = 0
        self.sums: dict[str, float | None] = {key: None for key in _SUMMED}
        self.buckets: dict[str, int | None] = {key: None for key in _BUCKETS}
        self.samples = {key: array("d") for key in _SAMPLE_KEYS}
        self.gaps: Counter = Counter()
        self.stalls = 0
        self.stall_ms: int | None = None
        self.attempts = 0
        self.retries = 0
        self.tool_calls = 0
        self.waste = {"failedAttempts": 0, "billedInputTokens": 0, "outputTokens": 0, "attemptMs": None, "backoffMs": None}
        self.models: dict[str | None, dict] = {}
        self.legacy: dict[str, int | None] = {key: None for key in _BUCKETS}

    def add_record(self, record: dict, sign: int = 1) -> None:
        """Add (sign 1) or take away (sign -1) a session record's pooled figures."""
        self.turns += sign * record["turns"]
        self.steps += sign * record["steps"]
        self.ttft_steps += sign * record["ttftSteps"]
        for key in _SUMMED:
            self.sums[key] = _plus(self.sums[key], record[key], sign)
        for key in _BUCKETS:
            self.buckets[key] = _plus(self.buckets[key], record[key], sign)
        own = record["dshctl"]
        self.stalls += sign * own["stalls"]
        self.stall_ms = _plus(self.stall_ms, own["stallMs"], sign)
        self.attempts += sign * own["attempts"]
        self.retries += sign * own["retries"]
        self.tool_calls += sign * own["toolCalls"]
        for key, value in own["retryWaste"].items():
            self.waste[key] = _plus(self.waste[key], value, sign)
        for key in _BUCKETS:
            self.legacy[key] = _plus(self.legacy[key], own["tokenMeter011"][key], sign)
        for entry in own["models"]:
            merged = self.models.setdefault(entry["model"], {"model": entry["model"]})
            for key, value in entry.items():
                if key not in _MODEL_DERIVED:
                    merged[key] = _plus(merged.get(key), value, sign)

    def add_samples(self, samples: dict) -> None:
        for key in _SAMPLE_KEYS:
            self.samples[key].extend(samples[key])
        self.gaps.update(samples["gaps"])


class Aggregate:
    def __init__(self) -> None:
        self.sessions = 0
        self.failed = 0
        self.skipped = 0
        self.pool = _Pool()
        self.ids: set[str] = set()
        self.prefixes: list[tuple[object, dict]] = []  # (parent id, inherited {"record", "samples"})

    def add(self, session: dict, samples: dict) -> None:
        self.sessions += 1
        if isinstance(session["id"], str):
            self.ids.add(session["id"])
        self.pool.add_record(session)
        inherited = samples.get("inherited")
        if inherited is None:
            self.pool.add_samples(samples)
            return
        # counted after the cut for now; record() adds the prefix back unless the parent is counted
        self.pool.add_record(inherited["record"], -1)
        self.pool.add_samples(_after_cut(samples, inherited["samples"]))
        self.prefixes.append((session["parentSession"], inherited))

    def _settled(self) -> tuple[_Pool, dict]:
        """The pool with every inherited prefix counted once: in the parent when it is counted, else in the child."""
        pool = copy.deepcopy(self.pool)
        counted = 0
        for parent, inherited in self.prefixes:
            if parent in self.ids:
                continue
            pool.add_record(inherited["record"])
            pool.add_samples(inherited["samples"])
            counted += 1
        return pool, {"excluded": len(self.prefixes) - counted, "counted": counted}

    def record(self) -> dict:
        pool, prefixes = self._settled()
        sums = pool.sums
        tokens = _buckets_record(pool.buckets)
        models = []
        for route, entry in sorted(pool.models.items(), key=lambda kv: (kv[0] is None, kv[0] or "")):
            if not entry.get("settlements"):
                continue  # a model only the excluded prefixes used
            entry = dict(entry)
            if entry.get("uncachedInputTokens") is not None:
                entry["billedInputTokens"] = entry["uncachedInputTokens"] + (entry["cacheReadTokens"] or 0) + (entry["cacheWriteTokens"] or 0)
            entry["meanTtftMs"] = number(mean(entry["ttftMs"], entry["ttftSteps"]))
            entry["tokensPerSecond"] = rate(entry["decodeTokens"], entry["decodeMs"])
            models.append(_model_record(entry))
        provider = percentiles(pool.samples["providerTtftMs"])
        provider["mean"] = number(mean(sum(pool.samples["providerTtftMs"]), len(pool.samples["providerTtftMs"])))
        visible = percentiles(pool.samples["firstVisibleMs"])
        visible["mean"] = number(mean(sum(pool.samples["firstVisibleMs"]), len(pool.samples["firstVisibleMs"])))
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
            "percentileMethod": PERCENTILE_METHOD,
            "percentiles": {
                "ttftMs": percentiles(pool.samples["ttftMs"]),
                "tokensPerSecond": percentiles(pool.samples["tokensPerSecond"]),
                "outputTokensPerTurn": percentiles(pool.samples["outputTokensPerTurn"]),
                "billedInputTokensPerTurn": percentiles(pool.samples["billedInputTokensPerTurn"]),
            },
            "dshctl": {
                "attempts": pool.attempts,
                "retries": pool.retries,
                "toolCalls": pool.tool_calls,
                "providerTtftMs": provider,
                "firstVisibleMs": visible,
                "interTokenGapMs": counter_percentiles(pool.gaps),
                "stalls": pool.stalls,
                "stallMs": pool.stall_ms,
                "retryWaste": pool.waste,
                "models": models,
                "tokenMeter011": _buckets_record(pool.legacy),
            },
        }


_MODEL_KEYS = (
    "model", "settlements", "messages", "uncachedInputTokens", "cacheReadTokens", "cacheWriteTokens",
    "billedInputTokens", "outputTokens", "ttftMs", "ttftSteps", "meanTtftMs", "decodeMs", "decodeTokens",
    "tokensPerSecond",
)


def _model_record(entry: dict) -> dict:
    """A pooled model entry with the session record's keys, in its order."""
    return {key: entry.get(key) for key in _MODEL_KEYS}
