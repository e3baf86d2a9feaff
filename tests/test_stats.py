"""dshctl stats: dsh's figures on small crafted logs in every generation, computed by hand.

The logs are in ``stats_logs.py`` (raw JSONL with explicit seq/time). Each expectation below carries
its arithmetic; the rules are FORMAT.md §7 (sessionStats, token meter 0.1.5 line, context pressure).
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import msgspec
import pytest

from dshctl.stats import LogStats
from dshctl.stats import log_stats as library_log_stats
from dshctl.humanize import format_duration, format_ms
from dshctl.stats.figures import (
    cache_hit_percent,
    counter_percentiles,
    format_rate,
    format_tokens,
    occupancy_percent,
    percentiles,
    sparkline,
)
from dshctl.options import StatsOptions
from dshctl.options.window import parse_time_ms
from dshctl.stats.records import Percentiles
from dshctl.errors import UsageError

from conftest import SAMPLES
from stats_logs import FILE_NAMES, fixture_form, generations

GENERATIONS = ("v0", "v2", "v3", "v4")


def as_json(result: LogStats) -> SimpleNamespace:
    """A log's statistics with its records as ``stats --json`` writes them (camelCase keys): the
    expectations below are the documented output."""
    rows = msgspec.to_builtins
    return SimpleNamespace(
        session=rows(result.session),
        turns=None if result.turns is None else rows(result.turns),
        steps=None if result.steps is None else rows(result.steps),
        samples=result.samples,
        skipped=result.skipped,
    )


def log_stats(*args, **kwargs) -> SimpleNamespace:
    return as_json(library_log_stats(*args, **kwargs))


def write_log(tmp_path: Path, scenario: str, gen: str) -> Path:
    path = tmp_path / f"{scenario}-{gen}" / FILE_NAMES[gen]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(generations(scenario)[gen])
    return path


def stats(tmp_path: Path, scenario: str, gen: str, by: str = "step") -> SimpleNamespace:
    return log_stats(write_log(tmp_path, scenario, gen), StatsOptions(by=by))


def comparable(result: SimpleNamespace) -> tuple:
    """What must be identical in every generation (seqs, paths and file facts differ)."""
    session = {k: v for k, v in result.session.items() if k not in ("path", "generation", "events", "warnings", "cut")}
    rows = [{k: v for k, v in row.items() if k != "path"} for row in (result.steps or result.turns or [])]
    return session, rows


# ---------------------------------------------------------------------------------------------------
# A. first token inside a failed attempt; retry-started billing


@pytest.mark.parametrize("gen", GENERATIONS)
def test_retry_first_token_in_failed_attempt_and_retry_billing(tmp_path, gen):
    r = stats(tmp_path, "retry", gen)
    s = r.session
    assert (s["turns"], s["steps"]) == (1, 1)
    # first token = attempt 1's "a" at 1100 (the failed attempt's token survives the retry): 1100 − 1000
    assert s["ttftMs"] == 100 and s["ttftSteps"] == 1 and s["meanTtftMs"] == 100
    # LLM time = message 1902 − step/start 1000 (includes the 500 ms back-off)
    assert s["llmMs"] == 902
    # decode = 1902 − 1100 = 802 ms for the message's 3 output tokens → 3 / 0.802 s
    assert s["decodeMs"] == 802 and s["decodeTokens"] == 3
    assert s["tokensPerSecond"] == pytest.approx(3 / 0.802)
    # 0.1.5 meter: llm/retry-started closed the slot, so both attempts add:
    # uncached 100 + 50 = 150, cache read 0 + 150 = 150, output 2 + 3 = 5, billed 150 + 150 = 300
    assert (s["uncachedInputTokens"], s["cacheReadTokens"], s["cacheWriteTokens"]) == (150, 150, 0)
    assert (s["billedInputTokens"], s["outputTokens"]) == (300, 5)
    # cache hit 150 / 300 = 50 %
    assert s["cacheHitPercent"] == 50
    # context: latest sample 50 + 150 = 200 of window 1000 → 20 %
    assert (s["pressureTokens"], s["contextWindow"], s["contextOccupancyPercent"]) == (200, 1000, 20)
    own = s["dshctl"]
    # dsh 0.1.1's meter replaced the failed attempt's sample: 50 + 150 = 200 billed, 3 out, 150/200 = 75 %
    assert own["tokenMeter011"]["billedInputTokens"] == 200 and own["tokenMeter011"]["outputTokens"] == 3
    assert own["tokenMeter011"]["cacheHitPercent"] == 75
    assert (own["attempts"], own["messages"], own["retries"]) == (2, 1, 1)
    # provider TTFT: last request point before attempt 1 = request/context at 1003 → 1100 − 1003
    assert own["providerTtftMs"]["p50"] == 97
    # first visible: "a" at 1100 − 1000
    assert own["firstVisibleMs"]["p50"] == 100
    # gaps: attempt 1 a→b 50; attempt 2 c→d 50, d→e 50
    assert own["interTokenGapMs"] == {"n": 3, "p50": 50, "p90": 50, "p99": 50}
    # waste: attempt 1 billed 100 in / 2 out; ran 1160 − 1003 = 157 ms; back-off 1661 − 1161 = 500 ms
    assert own["retryWaste"] == {"failedAttempts": 1, "billedInputTokens": 100, "outputTokens": 2, "attemptMs": 157, "backoffMs": 500}
    assert own["models"][0]["model"] == "p/m" and own["models"][0]["settlements"] == 2
    [step] = r.steps
    assert (step["attempts"], step["retries"], step["finishReason"], step["failureCode"]) == (2, 1, "stop", None)
    assert (step["generationMs"], step["outputTokens"]) == (802, 5)


# ---------------------------------------------------------------------------------------------------
# B. max-tokens step, tool time with an unmatched call, interrupted message, cancelled step without message


@pytest.mark.parametrize("gen", GENERATIONS)
def test_mixed_session(tmp_path, gen):
    r = stats(tmp_path, "mixed", gen)
    s = r.session
    # step/end ×4 in turns 1, 2, 2, 3
    assert (s["turns"], s["steps"]) == (3, 4)
    # TTFT: 1/1 1100 − 1000 = 100; 2/1 2050 − 2000 = 50; 2/2 2300 − 2200 = 100 (interrupted is timed);
    # 3/1 has no message (and no token) → not counted
    assert (s["ttftMs"], s["ttftSteps"]) == (250, 3)
    assert s["meanTtftMs"] == pytest.approx(250 / 3)
    # LLM: 1201 − 1000 = 201; 2101 − 2000 = 101; 2400 − 2200 = 200 → 502 (the cancelled step adds nothing)
    assert s["llmMs"] == 502
    # decode: 1/1 1201 − 1100 = 101 ms, 20 tok; 2/1 2101 − 2050 = 51 ms, 5 tok; 2/2 has no usage → excluded
    assert (s["decodeMs"], s["decodeTokens"]) == (152, 25)
    assert s["tokensPerSecond"] == pytest.approx(25 / 0.152)
    # tools: c1 2102 → 2153 = 51 ms; c2 never got a result (dropped at turn/end)
    assert s["toolMs"] == 51
    # tokens: 10 + 30 uncached, 20 + 5 output; no cache reads → 0 %
    assert (s["billedInputTokens"], s["outputTokens"], s["cacheHitPercent"]) == (40, 25, 0)
    # no request/context → occupancy null; the latest sample (2/1) gives the pressure 30
    assert (s["pressureTokens"], s["contextWindow"], s["contextOccupancyPercent"]) == (30, None, None)
    own = s["dshctl"]
    assert (own["attempts"], own["messages"], own["interruptedMessages"], own["toolCalls"]) == (4, 3, 1, 2)
    # gaps: 1/1 x 1100 → named tool delta 1150 = 50; 2/1 y 2050 → c1 2060 → c2 2070 = 10, 10; 2/2 r 2300 → z 2350 = 50
    assert own["interTokenGapMs"] == {"n": 4, "p50": 10, "p90": 50, "p99": 50}
    # the cancelled step's attempt: no usage; it ran 3050 − 3000 (step/start) = 50 ms
    assert own["retryWaste"]["failedAttempts"] == 1 and own["retryWaste"]["attemptMs"] == 50

    rows = {(row["turn"], row["step"]): row for row in r.steps}
    assert rows[(1, 1)]["finishReason"] == "max-tokens"
    assert rows[(1, 1)]["tokensPerSecond"] == pytest.approx(20 / 0.101)
    assert (rows[(2, 1)]["toolCalls"], rows[(2, 1)]["toolMs"], rows[(2, 1)]["finishReason"]) == (2, 51, "tool-calls")
    step22 = rows[(2, 2)]
    assert step22["interrupted"] is True and step22["finishReason"] is None
    assert (step22["ttftMs"], step22["llmMs"], step22["generationMs"]) == (100, 200, 100)
    assert step22["decodeMs"] is None and step22["outputTokens"] is None and step22["tokensPerSecond"] is None
    cancelled = rows[(3, 1)]
    assert cancelled["attempts"] == 1 and cancelled["ended"] is True
    assert cancelled["ttftMs"] is None and cancelled["llmMs"] is None and cancelled["outputTokens"] is None


@pytest.mark.parametrize("gen", GENERATIONS)
def test_mixed_turn_rows(tmp_path, gen):
    r = stats(tmp_path, "mixed", gen, by="turn")
    t1, t2, t3 = r.turns
    # turn 1: TTFT of step 1 = 100; 20 tok / 0.101 s; 1203 − 1000 = 203 ms
    assert (t1["ttftMs"], t1["steps"], t1["endReason"], t1["durationMs"]) == (100, 1, "max-tokens", 203)
    assert t1["tokensPerSecond"] == pytest.approx(20 / 0.101)
    # turn 2: TTFT of its lowest step (1) = 50; Σ output / Σ decode over steps with both = 5 / 0.051 s
    assert (t2["ttftMs"], t2["ttftStep"], t2["steps"], t2["toolCalls"], t2["toolMs"]) == (50, 1, 2, 2, 51)
    assert t2["tokensPerSecond"] == pytest.approx(5 / 0.051)
    assert (t2["billedInputTokens"], t2["outputTokens"], t2["endReason"], t2["durationMs"]) == (30, 5, "aborted", 402)
    # turn 3: no message in any step → TTFT, tokens and rate null; 3052 − 3000 = 52 ms
    assert (t3["ttftMs"], t3["outputTokens"], t3["tokensPerSecond"], t3["durationMs"]) == (None, None, None, 52)
    assert t3["steps"] == 1 and t3["endReason"] == "aborted"


# ---------------------------------------------------------------------------------------------------
# C. missing usage: dsh's sums stay at 0 (its folds start at 0); only what dsh cannot compute is null


@pytest.mark.parametrize("gen", GENERATIONS)
def test_missing_usage_gives_dsh_zeros(tmp_path, gen):
    s = stats(tmp_path, "nousage", gen).session
    # timing exists: TTFT 5040 − 5000 = 40, LLM 5041 − 5000 = 41
    assert (s["ttftMs"], s["llmMs"]) == (40, 41)
    # sessionStats: the step has a first token but no usage, so nothing enters decode: 0 ms, 0 tokens;
    # no tool call: toolMs 0 (sessionStats initialises every total to 0)
    assert (s["decodeMs"], s["decodeTokens"], s["toolMs"]) == (0, 0, 0)
    # tokenUsage starts at zero buckets and no sample ever arrives
    buckets = ("uncachedInputTokens", "cacheReadTokens", "cacheWriteTokens", "billedInputTokens", "outputTokens")
    assert [s[key] for key in buckets] == [0, 0, 0, 0, 0]
    # no value in dsh: tok/s needs decodeMs > 0, cache hit needs billed input, pressure needs a sample
    for key in ("tokensPerSecond", "cacheHitPercent", "pressureTokens", "contextOccupancyPercent"):
        assert s[key] is None, key
    assert s["contextWindow"] == 64000
    legacy = s["dshctl"]["tokenMeter011"]
    assert (legacy["billedInputTokens"], legacy["outputTokens"], legacy["cacheHitPercent"]) == (0, 0, None)
    [model] = s["dshctl"]["models"]
    assert (model["billedInputTokens"], model["outputTokens"], model["decodeMs"], model["decodeTokens"]) == (0, 0, 0, 0)
    assert model["tokensPerSecond"] is None


# ---------------------------------------------------------------------------------------------------
# E. nothing optional happens: no tool call, no retry, zero-output steps, a turn without steps


@pytest.mark.parametrize("gen", GENERATIONS)
def test_bare_session_figures_are_dsh_values_including_zero(tmp_path, gen):
    s = stats(tmp_path, "bare", gen).session
    # step/end in turn 1 twice; turn 2 closed without a step is not counted
    assert (s["turns"], s["steps"]) == (1, 2)
    # LLM 1150 − 1000 = 150 and 1250 − 1200 = 50; TTFT 1100 − 1000 = 100 and 1250 − 1200 = 50
    assert (s["llmMs"], s["ttftMs"], s["ttftSteps"], s["meanTtftMs"]) == (200, 150, 2, 75)
    # no tool call: dsh's toolMs is 0, not missing
    assert s["toolMs"] == 0
    # decode 1150 − 1100 = 50 ms and 1250 − 1250 = 0 ms, outputTokens 0 + 0: 0 tokens over 0.05 s = 0 tok/s
    assert (s["decodeMs"], s["decodeTokens"], s["tokensPerSecond"]) == (50, 0, 0)
    # meter: uncached 50 + 60, cache read 0 + 40, output 0 + 0; billed 150; hit 40 / 150 = 26.7 % → 27
    assert (s["uncachedInputTokens"], s["cacheReadTokens"], s["cacheWriteTokens"]) == (110, 40, 0)
    assert (s["billedInputTokens"], s["outputTokens"], s["cacheHitPercent"]) == (150, 0, 27)
    # latest sample 60 + 40; no request/context, so no window and no occupancy
    assert (s["pressureTokens"], s["contextWindow"], s["contextOccupancyPercent"]) == (100, None, None)
    own = s["dshctl"]
    # no retry, no failed attempt, no stall: dshctl's sums are 0 as well
    assert own["retryWaste"] == {"failedAttempts": 0, "billedInputTokens": 0, "outputTokens": 0, "attemptMs": 0, "backoffMs": 0}
    assert (own["stalls"], own["stallMs"], own["interTokenGapMs"]["n"]) == (0, 0, 0)
    [model] = own["models"]
    assert (model["ttftMs"], model["ttftSteps"], model["decodeMs"], model["decodeTokens"], model["tokensPerSecond"]) == (150, 2, 50, 0, 0)


@pytest.mark.parametrize("gen", GENERATIONS)
def test_bare_step_rows(tmp_path, gen):
    steps = {(row["turn"], row["step"]): row for row in stats(tmp_path, "bare", gen).steps}
    first, second = steps[(1, 1)], steps[(1, 2)]
    # 1/1: TTFT 100, total 150, generation 1150 − 1100 = 50 with 0 output tokens → 0 tok/s
    assert (first["ttftMs"], first["llmMs"], first["generationMs"]) == (100, 150, 50)
    assert (first["decodeMs"], first["decodeTokens"], first["tokensPerSecond"]) == (50, 0, 0)
    # 1/2: generation 0 ms: dsh shows no throughput for a span that is not positive
    assert (second["decodeMs"], second["decodeTokens"], second["tokensPerSecond"]) == (0, 0, None)
    assert (second["billedInputTokens"], second["outputTokens"]) == (100, 0)
    for row in (first, second):
        # the step's share of dsh's toolMs, and dshctl's sums: 0; a maximum over no gap: null
        assert (row["toolCalls"], row["toolMs"]) == (0, 0)
        own = row["dshctl"]
        assert (own["wastedAttemptMs"], own["backoffMs"], own["stalls"], own["stallMs"]) == (0, 0, 0, 0)
        assert own["maxGapMs"] is None


@pytest.mark.parametrize("gen", GENERATIONS)
def test_bare_turn_rows_include_the_turn_without_steps(tmp_path, gen):
    t1, t2 = stats(tmp_path, "bare", gen, by="turn").turns
    # turn 1: footer TTFT of step 1 = 100; Σ 0 output / Σ 0.05 s decode = 0 tok/s; 1252 − 1000 = 252 ms
    assert (t1["steps"], t1["ttftMs"], t1["ttftStep"], t1["llmMs"], t1["toolMs"]) == (2, 100, 1, 200, 0)
    assert (t1["decodeMs"], t1["decodeTokens"], t1["tokensPerSecond"], t1["durationMs"]) == (50, 0, 0, 252)
    assert (t1["billedInputTokens"], t1["outputTokens"]) == (150, 0)
    # turn 2: no step → no footer TTFT or throughput, and no usage (dsh settles no billing for it);
    # its shares of dsh's sums are 0; 2001 − 2000 = 1 ms
    assert (t2["steps"], t2["ttftMs"], t2["ttftStep"], t2["tokensPerSecond"]) == (0, None, None, None)
    assert (t2["llmMs"], t2["toolMs"], t2["decodeMs"], t2["decodeTokens"]) == (0, 0, 0, 0)
    assert (t2["billedInputTokens"], t2["outputTokens"], t2["durationMs"], t2["endReason"]) == (None, None, 1, "aborted")


def test_log_without_events_has_dsh_initial_values(tmp_path):
    path = tmp_path / "session.v4.jsonl"
    path.write_text('{"type":"session","version":4,"id":"empty","createdAt":1,"isSeeded":false,"delegationDepth":0}\n')
    s = log_stats(path).session
    zero = ("turns", "steps", "llmMs", "toolMs", "ttftMs", "ttftSteps", "decodeMs", "decodeTokens",
            "uncachedInputTokens", "cacheReadTokens", "cacheWriteTokens", "billedInputTokens", "outputTokens")
    assert {key: s[key] for key in zero} == dict.fromkeys(zero, 0)
    none = ("meanTtftMs", "tokensPerSecond", "cacheHitPercent", "contextWindow", "pressureTokens", "contextOccupancyPercent")
    assert {key: s[key] for key in none} == dict.fromkeys(none)


# ---------------------------------------------------------------------------------------------------
# D. seeded child: the whole log counts, inherited turn included


@pytest.mark.parametrize("gen", GENERATIONS)
def test_seeded_child_counts_whole_log(tmp_path, gen):
    s = stats(tmp_path, "child", gen).session
    assert s["seeded"] is True and s["parentSession"] == "parent"
    # inherited turn 1 + own turn 2
    assert (s["turns"], s["steps"]) == (2, 2)
    # TTFT 1200 − 1000 = 200 and 9400 − 9100 = 300 → 500 over 2; LLM 301 + 401 = 702
    assert (s["ttftMs"], s["ttftSteps"], s["meanTtftMs"], s["llmMs"]) == (500, 2, 250, 702)
    # decode 101 + 101 ms for 10 + 30 tokens → 40 / 0.202 s
    assert s["tokensPerSecond"] == pytest.approx(40 / 0.202)
    # tokens 100 + (20 + 80) billed, 10 + 30 out; hit 80 / 200 = 40 %
    assert (s["billedInputTokens"], s["outputTokens"], s["cacheHitPercent"]) == (200, 40, 40)


@pytest.mark.parametrize("gen", GENERATIONS)
def test_seeded_child_says_what_it_inherited(tmp_path, gen):
    r = stats(tmp_path, "child", gen, by="turn")
    # the prefix is turn 1: one step, LLM 1301 − 1000 = 301, TTFT 1200 − 1000 = 200, decode 1301 − 1200 =
    # 101 ms for 10 tokens, usage 100 in / 10 out, no tool call
    assert r.session["inherited"] == {
        "turns": 1, "steps": 1, "llmMs": 301, "toolMs": 0, "ttftMs": 200, "ttftSteps": 1, "decodeMs": 101,
        "decodeTokens": 10, "uncachedInputTokens": 100, "cacheReadTokens": 0, "cacheWriteTokens": 0,
        "billedInputTokens": 100, "outputTokens": 10,
    }
    assert [(row["turn"], row["inherited"]) for row in r.turns] == [(1, True), (2, False)]
    steps = stats(tmp_path, "child", gen, by="step").steps
    assert [(row["turn"], row["step"], row["inherited"]) for row in steps] == [(1, 1, True), (2, 1, False)]


@pytest.mark.parametrize("gen", GENERATIONS)
def test_unseeded_session_inherits_nothing(tmp_path, gen):
    r = stats(tmp_path, "retry", gen, by="turn")
    assert r.session["inherited"] is None and [row["inherited"] for row in r.turns] == [False]


# ---------------------------------------------------------------------------------------------------
# every generation gives the same numbers


@pytest.mark.parametrize("scenario", ["retry", "mixed", "nousage", "child", "bare"])
@pytest.mark.parametrize("by", ["step", "turn"])
def test_every_generation_gives_the_same_numbers(tmp_path, scenario, by):
    results = {gen: comparable(stats(tmp_path, scenario, gen, by=by)) for gen in GENERATIONS}
    for gen in GENERATIONS[1:]:
        assert results[gen] == results["v0"], gen


@pytest.mark.parametrize("scenario", ["retry", "mixed", "child", "nousage", "bare"])
def test_rows_add_up_to_the_session(tmp_path, scenario):
    """A step's figures are its contributions to the session's dsh figures (steps without one are null)."""
    r = stats(tmp_path, scenario, "v2")
    s = r.session
    for key in ("llmMs", "ttftMs", "decodeMs", "decodeTokens", "uncachedInputTokens", "cacheReadTokens", "outputTokens", "toolMs"):
        assert sum(row[key] for row in r.steps if row[key] is not None) == s[key], key
    assert sum(row["ttftMs"] is not None for row in r.steps) == s["ttftSteps"]


# ---------------------------------------------------------------------------------------------------
# fixture form: no envelope times


def test_fixture_form_has_no_timing_but_counts_and_tokens(tmp_path):
    path = tmp_path / "session.v2.jsonl"
    path.write_text(fixture_form(generations("mixed")["v2"]))
    s = log_stats(path).session
    assert s["timing"] == "unavailable"
    assert any("no envelope time" in note for note in s["notes"])
    assert (s["turns"], s["steps"]) == (3, 4)
    for key in ("llmMs", "toolMs", "ttftMs", "meanTtftMs", "decodeMs", "decodeTokens", "tokensPerSecond"):
        assert s[key] is None, key
    assert s["ttftSteps"] == 0
    assert (s["dshctl"]["retryWaste"]["attemptMs"], s["dshctl"]["retryWaste"]["backoffMs"]) == (None, None)
    assert (s["billedInputTokens"], s["outputTokens"]) == (40, 25)
    # stream record times are real in v2 fixtures: the gaps survive
    assert s["dshctl"]["interTokenGapMs"]["n"] == 4


def test_fixture_form_rows_have_no_time_sums(tmp_path):
    path = tmp_path / "session.v2.jsonl"
    path.write_text(fixture_form(generations("bare")["v2"]))
    turns = log_stats(path, StatsOptions(by="turn")).turns
    assert [(t["llmMs"], t["toolMs"], t["decodeMs"], t["decodeTokens"]) for t in turns] == [(None,) * 4] * 2
    steps = log_stats(path, StatsOptions(by="step")).steps
    assert [(row["toolMs"], row["dshctl"]["wastedAttemptMs"], row["dshctl"]["backoffMs"]) for row in steps] == [(None,) * 3] * 2


def test_placeholder_stream_times_are_unavailable(tmp_path):
    """Envelope times with stream records at time 0 (dsh's complete-envelope fixtures): no TTFT/decode."""
    lines = generations("nousage")["v2"].splitlines()
    text = "\n".join(lines).replace('"time0":5040', '"time0":0').replace('"time":5040', '"time":0') + "\n"
    path = tmp_path / "session.v2.jsonl"
    path.write_text(text)
    s = log_stats(path).session
    assert s["llmMs"] == 41 and s["ttftMs"] is None and s["ttftSteps"] == 0
    assert any("placeholder" in note for note in s["notes"])


# ---------------------------------------------------------------------------------------------------
# the stats path never expands a stream


def test_stats_never_expand_a_stream(tmp_path, monkeypatch):
    import sys

    def refuse(*args, **kwargs):
        raise AssertionError("the stats path expanded an assistant stream")

    for name, module in list(sys.modules.items()):
        if name == "dshctl" or name.startswith("dshctl."):
            for attr in ("iter_members", "expand_strict", "assemble"):
                if hasattr(module, attr):
                    monkeypatch.setattr(module, attr, refuse)
    for scenario in ("retry", "mixed", "nousage", "child"):
        for gen in GENERATIONS:
            log_stats(write_log(tmp_path, scenario, gen), StatsOptions(by="step"))
    for path in sorted(SAMPLES.glob("*.jsonl*")):
        log_stats(path, StatsOptions(by="step"))


# ---------------------------------------------------------------------------------------------------
# pure figures


@pytest.mark.parametrize(
    "read, uncached, write, expected",
    [
        # integer, halves up: 1/8 = 12.5 % → 13; 1/3 → 33; 2/3 → 67
        (1, 7, 0, "13"),
        (1, 2, 0, "33"),
        (2, 1, 0, "67"),
        (0, 10, 0, "0"),
        # 99.4 % → 99 (integer stays below 100)
        (994, 6, 0, "99"),
        # 99.5 % would round to 100: one decimal, 99.5
        (995, 5, 0, "99.5"),
        # 99.94 % → 99.9; 99.95 % needs two decimals (99.95 rounds up to 100.0 at one): 99.95
        (9994, 6, 0, "99.9"),
        (9995, 5, 0, "99.95"),
        (9996, 4, 0, "99.96"),
        # 1 missed in 10 000 000: 99.99999 → "99.99999"
        (9_999_999, 1, 0, "99.99999"),
        # cache writes are missed input too
        (999, 0, 1, "99.9"),
        # a full hit is exactly 100; no billed input → None
        (10, 0, 0, "100"),
        (0, 0, 0, None),
    ],
)
def test_cache_hit_rule(read, uncached, write, expected):
    assert cache_hit_percent(read, read + uncached + write, uncached + write) == expected


def test_cache_hit_rule_against_exact_rounding():
    """For every split of small denominators: the string is the fewest-decimals rounding below 100."""
    from fractions import Fraction

    for billed in range(1, 400):
        for read in range(billed + 1):
            text = cache_hit_percent(read, billed, billed - read)
            exact = Fraction(100 * read, billed)
            if read == billed:
                assert text == "100"
                continue
            value = Fraction(text)
            places = len(text.split(".")[1]) if "." in text else 0
            scale = 10**places
            assert value == Fraction(math.floor(exact * scale + Fraction(1, 2)), scale)
            assert value < 100
            if places:  # one place fewer would have rounded to 100
                coarser = Fraction(math.floor(exact * scale / 10 + Fraction(1, 2)), scale // 10)
                assert coarser == 100


def test_occupancy_rounds_like_javascript_and_clamps():
    assert occupancy_percent(13_500, 128_000) == 11  # 10.55 → 11
    assert occupancy_percent(1, 200) == 1  # 0.5 → 1 (halves up)
    assert occupancy_percent(300, 200) == 100
    assert occupancy_percent(None, 200) is None and occupancy_percent(5, None) is None


def test_nearest_rank_percentiles():
    # n = 10: p50 → rank 5, p90 → rank 9, p99 → rank 10
    assert percentiles(range(1, 11)) == Percentiles(n=10, p50=5, p90=9, p99=10)
    assert percentiles([]) == Percentiles(n=0, p50=None, p90=None, p99=None)
    assert counter_percentiles(Counter({1: 98, 7: 1, 1500: 1})) == Percentiles(n=100, p50=1, p90=1, p99=7)


def test_dsh_display_formats():
    assert format_tokens(517) == "517" and format_tokens(12_240) == "12.2K" and format_tokens(1_250_000) == "1.3M"
    assert format_tokens(84_700) == "84.7K" and format_tokens(517_000) == "517K"
    assert format_duration(45_200) == "45.2s" and format_duration(162_000) == "2m42s" and format_duration(2250) == "2.3s"
    assert format_rate(793.65) == "794" and format_rate(3.7406) == "3.7"
    assert sparkline([1, 2, 4, 8]) == "▂▃▅█" and sparkline([None, 1]) == " █"


def test_long_durations_roll_into_hours_and_days():
    assert format_duration(3_599_000) == "59m59s" and format_duration(3_599_600) == "1h0m"
    assert format_duration(5_430_000) == "1h31m" and format_duration(90_000_000 - 60_000) == "1d1h"
    assert format_ms(90_000_000) == "1d1h" and format_duration(86_370_000) == "1d0h"
    assert format_duration(23 * 3_600_000 + 59 * 60_000) == "23h59m"


def test_time_specs():
    assert parse_time_ms("2026-09-21", option="--since") == 1789948800000
    assert parse_time_ms("2026-09-21T14:13:20Z", option="--since") == 1790000000000
    assert parse_time_ms("2026-09-21T16:13:20+02:00", option="--since") == 1790000000000
    assert parse_time_ms("1790000000000", option="--since") == 1790000000000
    assert parse_time_ms("2d", option="--since", now_ms=1790000000000) == 1790000000000 - 2 * 86_400_000
    with pytest.raises(UsageError):
        parse_time_ms("yesterday-ish", option="--since")


# ---------------------------------------------------------------------------------------------------
# the samples (generated by samples/generate.py; hand computation in samples/README.md)

TOUR = ["tour.session.jsonl", "tour.session.jsonl.zstd", "tour.session.v2.jsonl", "tour.session.v2.jsonl.zstd",
        "tour.session.v3.jsonl", "tour.session.v3.jsonl.zstd", "tour.session.v4.jsonl", "tour.session.v4.jsonl.zstd"]


@pytest.mark.parametrize("name", TOUR)
def test_tour_sample_matches_the_hand_computation(name):
    r = log_stats(SAMPLES / name, StatsOptions(by="turn"))
    s = r.session
    assert (s["turns"], s["steps"]) == (4, 6)
    assert (s["ttftMs"], s["ttftSteps"], s["meanTtftMs"]) == (1950, 6, 325)
    assert (s["llmMs"], s["toolMs"]) == (6050, 160)
    assert (s["decodeMs"], s["decodeTokens"], s["tokensPerSecond"]) == (3600, 900, 250)
    # 0.1.5 meter: 36 200 uncached + 48 500 read = 84 700 billed, 903 out, 57 %
    assert (s["billedInputTokens"], s["outputTokens"], s["cacheHitPercent"]) == (84_700, 903, 57)
    # 0.1.1 meter: 72 700 billed, 900 out, 67 %
    legacy = s["dshctl"]["tokenMeter011"]
    assert (legacy["billedInputTokens"], legacy["outputTokens"], legacy["cacheHitPercent"]) == (72_700, 900, 67)
    assert s["contextOccupancyPercent"] == 15
    turns = {row["turn"]: row for row in r.turns}
    assert [turns[t]["ttftMs"] for t in (1, 2, 3, 4)] == [300, 400, 250, 500]
    assert turns[1]["tokensPerSecond"] == pytest.approx(250 / 2.25)
    assert turns[2]["tokensPerSecond"] == pytest.approx(450)
    assert turns[3]["tokensPerSecond"] == pytest.approx(200 / 0.35)
    assert turns[4]["tokensPerSecond"] is None


@pytest.mark.parametrize("name", ["fork-child.session.jsonl", "fork-child.session.v2.jsonl", "fork-child.session.v3.jsonl.zstd", "fork-child.session.v4.jsonl"])
def test_fork_child_sample(name):
    s = log_stats(SAMPLES / name).session
    assert (s["turns"], s["steps"], s["meanTtftMs"], s["llmMs"]) == (2, 2, 300, 3150)
    assert (s["decodeTokens"], s["decodeMs"]) == (310, 2550)
    legacy = s["dshctl"]["tokenMeter011"]
    assert (legacy["billedInputTokens"], legacy["outputTokens"], legacy["cacheHitPercent"]) == (25_500, 310, 86)
    # the 0.1.5 meter adds the inherited failed attempt: 25 500 + 12 000 billed, 313 out, 22 000 / 37 500 → 59 %
    assert (s["billedInputTokens"], s["outputTokens"], s["cacheHitPercent"]) == (37_500, 313, 59)
    assert s["contextOccupancyPercent"] == 11
