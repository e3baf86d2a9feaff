"""Figures across many sessions: dsh's sums pooled, and nearest-rank percentiles over steps and turns.

Pooling dsh's sums (``ttftMs``/``ttftSteps``, ``decodeTokens``/``decodeMs``, token buckets) gives what dsh's
folds would give over the concatenation of the logs. Percentiles come from per-step and per-turn
observations: TTFT and tok/s per step (the steps that have them), output and billed-input tokens per turn.
"""

from __future__ import annotations

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


def _plus(a, b):
    if b is None:
        return a
    return b if a is None else a + b


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


class Aggregate:
    def __init__(self) -> None:
        self.sessions = 0
        self.failed = 0
        self.skipped = 0
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

    def add(self, session: dict, samples: dict) -> None:
        self.sessions += 1
        self.turns += session["turns"]
        self.steps += session["steps"]
        self.ttft_steps += session["ttftSteps"]
        for key in _SUMMED:
            self.sums[key] = _plus(self.sums[key], session[key])
        for key in _BUCKETS:
            self.buckets[key] = _plus(self.buckets[key], session[key])
        for key in _SAMPLE_KEYS:
            self.samples[key].extend(samples[key])
        self.gaps.update(samples["gaps"])
        own = session["dshctl"]
        self.stalls += own["stalls"]
        self.stall_ms = _plus(self.stall_ms, own["stallMs"])
        self.attempts += own["attempts"]
        self.retries += own["retries"]
        self.tool_calls += own["toolCalls"]
        for key, value in own["retryWaste"].items():
            self.waste[key] = _plus(self.waste[key], value)
        for key in _BUCKETS:
            self.legacy[key] = _plus(self.legacy[key], own["tokenMeter011"][key])
        for entry in own["models"]:
            merged = self.models.get(entry["model"])
            if merged is None:
                self.models[entry["model"]] = dict(entry)
                continue
            for key, value in entry.items():
                if key in ("model", "meanTtftMs", "tokensPerSecond", "billedInputTokens"):
                    continue
                merged[key] = _plus(merged[key], value)

    def record(self) -> dict:
        sums = self.sums
        tokens = _buckets_record(self.buckets)
        models = []
        for route, entry in sorted(self.models.items(), key=lambda kv: (kv[0] is None, kv[0] or "")):
            entry = dict(entry)
            if entry.get("uncachedInputTokens") is not None:
                entry["billedInputTokens"] = entry["uncachedInputTokens"] + (entry["cacheReadTokens"] or 0) + (entry["cacheWriteTokens"] or 0)
            entry["meanTtftMs"] = number(mean(entry["ttftMs"], entry["ttftSteps"]))
            entry["tokensPerSecond"] = rate(entry["decodeTokens"], entry["decodeMs"])
            models.append(entry)
        provider = percentiles(self.samples["providerTtftMs"])
        provider["mean"] = number(mean(sum(self.samples["providerTtftMs"]), len(self.samples["providerTtftMs"])))
        visible = percentiles(self.samples["firstVisibleMs"])
        visible["mean"] = number(mean(sum(self.samples["firstVisibleMs"]), len(self.samples["firstVisibleMs"])))
        return {
            "kind": "aggregate",
            "sessions": self.sessions,
            "failed": self.failed,
            "skipped": self.skipped,
            "turns": self.turns,
            "steps": self.steps,
            "llmMs": sums["llmMs"],
            "toolMs": sums["toolMs"],
            "ttftMs": sums["ttftMs"],
            "ttftSteps": self.ttft_steps,
            "meanTtftMs": number(mean(sums["ttftMs"], self.ttft_steps)),
            "decodeMs": sums["decodeMs"],
            "decodeTokens": sums["decodeTokens"],
            "tokensPerSecond": rate(sums["decodeTokens"], sums["decodeMs"]),
            **tokens,
            "percentileMethod": PERCENTILE_METHOD,
            "percentiles": {
                "ttftMs": percentiles(self.samples["ttftMs"]),
                "tokensPerSecond": percentiles(self.samples["tokensPerSecond"]),
                "outputTokensPerTurn": percentiles(self.samples["outputTokensPerTurn"]),
                "billedInputTokensPerTurn": percentiles(self.samples["billedInputTokensPerTurn"]),
            },
            "dshctl": {
                "attempts": self.attempts,
                "retries": self.retries,
                "toolCalls": self.tool_calls,
                "providerTtftMs": provider,
                "firstVisibleMs": visible,
                "interTokenGapMs": counter_percentiles(self.gaps),
                "stalls": self.stalls,
                "stallMs": self.stall_ms,
                "retryWaste": self.waste,
                "models": models,
                "tokenMeter011": _buckets_record(self.legacy),
            },
        }
