"""``dshctl stats`` on the command line: many logs, output formats, filters, exit status."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from dshctl.cli import app

from conftest import invoke as run_cli, sample
from stats_logs import FILE_NAMES, generations


@pytest.fixture
def logs(tmp_path):
    """retry (created 1 790 000 000 000) and mixed (1 800 000 000 000) as v2 and v4 logs, plus a broken one."""
    out = {}
    for scenario, gen in (("retry", "v2"), ("mixed", "v4")):
        path = tmp_path / scenario / FILE_NAMES[gen]
        path.parent.mkdir()
        path.write_text(generations(scenario)[gen])
        out[scenario] = str(path)
    broken = tmp_path / "broken" / "session.v2.jsonl"
    broken.parent.mkdir()
    broken.write_text("this is not json\n")
    out["broken"] = str(broken)
    return out


def invoke(*args, env=None):
    return run_cli("stats", *args, env=env)


def test_json_document_aggregates_and_reports_an_unreadable_log(logs):
    result = invoke(logs["retry"], logs["mixed"], logs["broken"], "--json", "--by", "step")
    assert result.exit_code == 1  # a log among many could not be read; the rest still counts
    doc = json.loads(result.stdout)
    assert doc["schema"] == "dshctl-stats/1" and doc["by"] == "step"
    assert [s["id"] for s in doc["sessions"]] == ["retry", "mixed"]
    assert len(doc["errors"]) == 1 and doc["errors"][0]["path"].endswith("broken/session.v2.jsonl")
    assert len(doc["steps"]) == 1 + 4 and {row["kind"] for row in doc["steps"]} == {"step"}
    agg = doc["aggregate"]
    assert (agg["sessions"], agg["failed"], agg["turns"], agg["steps"]) == (2, 1, 4, 5)
    # pooled dsh sums: TTFT 100 + 250 over 1 + 3 steps; decode (3 + 25) tokens in (802 + 152) ms
    assert (agg["ttftMs"], agg["ttftSteps"], agg["meanTtftMs"]) == (350, 4, 87.5)
    assert agg["tokensPerSecond"] == pytest.approx(28 / 0.954)
    # tokens: retry 300 billed / 5 out, mixed 40 / 25; hit 150 / 340 = 44.1 % → 44
    assert (agg["billedInputTokens"], agg["outputTokens"], agg["cacheHitPercent"]) == (340, 30, 44)
    p = agg["percentiles"]
    assert agg["percentileMethod"] == "nearest-rank"
    # step TTFTs [100 | 100, 50, 100] sorted [50, 100, 100, 100]: p50 = rank 2 → 100, p90 = rank 4 → 100
    assert p["ttftMs"] == {"n": 4, "p50": 100, "p90": 100, "p99": 100}
    # step rates [3/0.802 | 20/0.101, 5/0.051] sorted [3.74, 98.04, 198.02]: p50 = rank 2
    assert p["tokensPerSecond"]["n"] == 3
    assert p["tokensPerSecond"]["p50"] == pytest.approx(5 / 0.051)
    assert p["tokensPerSecond"]["p90"] == pytest.approx(20 / 0.101)
    # output tokens per turn: retry t1 5; mixed t1 20, t2 5 (t3 has none) → [5, 5, 20]
    assert p["outputTokensPerTurn"] == {"n": 3, "p50": 5, "p90": 20, "p99": 20}
    assert "unreadable" not in result.stdout  # errors go to stderr, data to stdout


def test_ndjson_one_record_per_kind(logs):
    for by, kind, count in (("session", "session", 2), ("turn", "turn", 4), ("step", "step", 5)):
        result = invoke(logs["retry"], logs["mixed"], "--ndjson", "--by", by)
        assert result.exit_code == 0, result.output
        records = [json.loads(line) for line in result.stdout.splitlines()]
        assert len(records) == count and {r["kind"] for r in records} == {kind}
        if by != "session":
            assert {r["session"] for r in records} == {"retry", "mixed"}


def test_zero_where_dsh_has_zero_null_where_it_has_no_value_in_json(tmp_path):
    path = tmp_path / "s" / "session.v4.jsonl"
    path.parent.mkdir()
    path.write_text(generations("nousage")["v4"])
    result = invoke(str(path), "--json")
    assert result.exit_code == 0
    s = json.loads(result.stdout)["sessions"][0]
    assert s["outputTokens"] == 0 and s["toolMs"] == 0
    assert s["cacheHitPercent"] is None and s["tokensPerSecond"] is None
    assert '"outputTokens":0' in result.stdout and '"cacheHitPercent":null' in result.stdout


def test_since_until_filter_on_created_at(logs):
    # retry was created at 1 790 000 000 000 (2026-09-21T14:13:20Z), mixed at 1 800 000 000 000 (2027-01-15T08:00Z)
    result = invoke(logs["retry"], logs["mixed"], "--json", "--since", "2026-12-01")
    doc = json.loads(result.stdout)
    assert [s["id"] for s in doc["sessions"]] == ["mixed"] and doc["aggregate"]["skipped"] == 1
    result = invoke(logs["retry"], logs["mixed"], "--json", "--until", "2026-12-01")
    assert [s["id"] for s in json.loads(result.stdout)["sessions"]] == ["retry"]
    result = invoke(logs["retry"], "--since", "not a date")
    assert result.exit_code == 2


def test_single_unreadable_log_is_an_error(logs):
    result = invoke(logs["broken"])
    assert result.exit_code == 2


def test_tables_render_for_every_view(logs):
    for by in ("session", "turn", "step"):
        result = invoke(logs["mixed"], "--by", by)
        assert result.exit_code == 0, result.output
        assert "\x1b[" not in result.stdout
    single = invoke(logs["mixed"])
    assert "dsh's figures" in single.stdout and "dshctl's own figures" in single.stdout
    assert "3 turns · 4 steps" in single.stdout
    many = invoke(logs["retry"], logs["mixed"], logs["broken"])
    assert many.exit_code == 1
    assert "percentiles across sessions (nearest-rank)" in many.stdout and "unreadable" in many.stdout


def test_many_logs_in_worker_processes(tmp_path, monkeypatch):
    from dshctl import many

    monkeypatch.setattr(many, "BATCH_BYTES", 1000)  # these small logs make several batches
    paths = []
    for i in range(9):  # ≥ 8 logs: read in worker processes
        path = tmp_path / f"s{i}" / "session.v2.jsonl"
        path.parent.mkdir()
        path.write_text(generations("retry")["v2"])
        paths.append(str(path))
    result = invoke(*paths, "--json", "-j", "2")
    assert result.exit_code == 0, result.output
    agg = json.loads(result.stdout)["aggregate"]
    assert (agg["sessions"], agg["steps"], agg["billedInputTokens"], agg["ttftMs"]) == (9, 9, 9 * 300, 9 * 100)
    assert agg["dshctl"]["interTokenGapMs"]["n"] == 9 * 3


def write(tmp_path: Path, scenario: str, gen: str) -> str:
    path = tmp_path / f"{scenario}-{gen}" / FILE_NAMES[gen]
    path.parent.mkdir()
    path.write_text(generations(scenario)[gen])
    return str(path)


@pytest.mark.parametrize("gen", ["v0", "v2", "v4"])
@pytest.mark.parametrize("parent_first", [True, False])
def test_aggregate_counts_an_inherited_prefix_once(tmp_path, gen, parent_first):
    parent, child = write(tmp_path, "parent", "v4"), write(tmp_path, "child", gen)
    doc = json.loads(invoke(*([parent, child] if parent_first else [child, parent]), "--json").stdout)
    agg = doc["aggregate"]
    # parent: 2 turns, TTFT 200 + 100, LLM 301 + 201, decode 101 + 101 ms for 10 + 40 tokens,
    #   uncached 100 + 200, cache read 100, output 50;
    # child without its inherited turn 1 (= the parent's turn 1): 1 turn, TTFT 300, LLM 401,
    #   decode 101 ms for 30 tokens, uncached 20, cache read 80, output 30
    assert (agg["turns"], agg["steps"], agg["ttftMs"], agg["ttftSteps"], agg["llmMs"], agg["toolMs"]) == (3, 3, 600, 3, 903, 0)
    assert (agg["decodeMs"], agg["decodeTokens"]) == (303, 80)
    assert (agg["uncachedInputTokens"], agg["cacheReadTokens"], agg["billedInputTokens"], agg["outputTokens"]) == (320, 180, 500, 80)
    assert agg["cacheHitPercent"] == 36  # 180 / 500
    # per step: the parent's TTFTs 200, 100 and the child's own 300; per turn: outputs 10, 40 | 30
    assert agg["percentiles"]["ttftMs"] == {"n": 3, "p50": 200, "p90": 300, "p99": 300}
    assert agg["percentiles"]["outputTokensPerTurn"] == {"n": 3, "p50": 30, "p90": 40, "p99": 40}
    own = agg["dshctl"]
    assert (own["attempts"], own["models"][0]["settlements"], own["models"][0]["billedInputTokens"]) == (3, 3, 500)
    assert own["tokenMeter011"]["billedInputTokens"] == 500
    assert agg["inheritedPrefixes"] == {"excluded": 1, "counted": 0}
    # the per-session records stay dsh's: the child shows its whole log
    child_record = next(s for s in doc["sessions"] if s["id"] == "child")
    assert (child_record["turns"], child_record["billedInputTokens"], child_record["inherited"]["turns"]) == (2, 200, 1)


def test_aggregate_counts_the_prefix_in_the_child_when_the_parent_is_absent(tmp_path):
    agg = json.loads(invoke(write(tmp_path, "child", "v2"), "--json").stdout)["aggregate"]
    # exactly the child's whole log: 2 turns, TTFT 200 + 300, 100 + 100 billed, 10 + 30 out
    assert (agg["turns"], agg["ttftMs"], agg["billedInputTokens"], agg["outputTokens"]) == (2, 500, 200, 40)
    assert agg["percentiles"]["ttftMs"]["n"] == 2
    assert agg["inheritedPrefixes"] == {"excluded": 0, "counted": 1}


def test_a_parent_outside_since_does_not_count(tmp_path):
    # parent created at 1 819 999 999 000, child at 1 820 000 000 000: --since drops the parent
    parent, child = write(tmp_path, "parent", "v2"), write(tmp_path, "child", "v2")
    agg = json.loads(invoke(parent, child, "--json", "--since", "1820000000000").stdout)["aggregate"]
    assert (agg["sessions"], agg["skipped"], agg["turns"], agg["billedInputTokens"]) == (1, 1, 2, 200)
    assert agg["inheritedPrefixes"] == {"excluded": 0, "counted": 1}


def test_table_marks_seeded_sessions(tmp_path):
    result = invoke(write(tmp_path, "parent", "v2"), write(tmp_path, "child", "v2"))
    rows = result.stdout.split("sessions\n", 1)[1].split("session(s)")[0].splitlines()[1:]  # a pipe's plain table
    assert [("⑂" in line) for line in rows if "parent" in line or "child" in line] == [False, True]
    assert "⑂ forked from another session" in result.stdout
    assert "\n⑂ forked from another session" in result.stdout and "␊" not in result.stdout  # a caption line of its own
    single = invoke(write(tmp_path, "child", "v4"))
    # the inherited turn 1: 100 billed in, 10 out
    assert "inherited ⑂" in single.stdout and "1 turn(s) · 1 step(s) · in 100 · out 10" in single.stdout
    turns = invoke(write(tmp_path, "child", "v0"), "--by", "turn").stdout
    assert re.search(r"^ +1  ⑂ ", turns, re.M) and "⑂ inherited from the parent session" in turns  # a column of its own in a pipe


def test_samples_sessions_aggregate_counts_the_fork_prefix_once():
    doc = json.loads(invoke(str(sample("sessions")), "--json").stdout)
    child = next(s for s in doc["sessions"] if s["id"].startswith("b4d2f6a8"))
    # the child inherits the tour's turn 1 (samples/README.md): the failed attempt 12 000 in / 3 out and the
    # retry 2 000 + 10 000 read / 250 out; TTFT 300, LLM 2550, decode 2250 ms for 250 tokens
    assert child["inherited"] == {
        "turns": 1, "steps": 1, "llmMs": 2550, "toolMs": 0, "ttftMs": 300, "ttftSteps": 1, "decodeMs": 2250,
        "decodeTokens": 250, "uncachedInputTokens": 14_000, "cacheReadTokens": 10_000, "cacheWriteTokens": 0,
        "billedInputTokens": 24_000, "outputTokens": 253,
        # at the built-in V4.1 Flash off-peak rates (Monday 22:13 Beijing): 14 000 × 0.15 + 10 000 × 0.003
        # + 253 × 0.6 per million
        "costs": {"input": 0.0021, "cacheRead": 0.00003, "cacheWrite": 0, "output": 0.0001518, "total": 0.0022818, "currency": "USD"},
    }
    agg = doc["aggregate"]
    # 84 700 + 37 500 + 9 000 = 131 200 billed, less the child's 24 000 inherited; 903 + 313 + 2 − 253 out
    assert (agg["billedInputTokens"], agg["outputTokens"]) == (107_200, 965)
    assert (agg["turns"], agg["steps"], agg["ttftSteps"], agg["llmMs"]) == (4 + 1 + 1, 6 + 1 + 1, 8, 6050 + 600 + 210)
    # cache read 48 500 + 12 000 + 0 = 60 500 of 107 200 → 56.4 % → 56
    assert agg["cacheHitPercent"] == 56
    assert agg["inheritedPrefixes"] == {"excluded": 1, "counted": 0}


def test_sessions_root(tmp_path):
    result = invoke(str(sample("sessions")), "--ndjson")
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    by_id = {r["id"]: r for r in records}
    tour = by_id["7c1e5a2d-3b9f-4e61-a8d4-2f0b6c9e1a57"]
    assert (tour["turns"], tour["steps"], tour["billedInputTokens"]) == (4, 6, 84_700)


def test_no_color_is_a_parameter_of_one_invocation_not_state(monkeypatch):
    """``--no-color`` once must not take colour from later calls in the same process (library use, tests)."""
    import importlib

    monkeypatch.delenv("NO_COLOR", raising=False)
    seen = []
    monkeypatch.setattr(importlib.import_module("dshctl.stats"), "run_stats", lambda paths, options: seen.append(options.color_when) or 0)
    monkeypatch.setattr(importlib.import_module("dshctl.stdio"), "is_terminal", lambda stream=None: True)
    runner = CliRunner()
    for args in (["--no-color", "stats", "x"], ["stats", "x"], ["--no-color", "stats", "x"], ["--color", "never", "stats", "x"],
                 ["stats", "--color", "always", "x"], ["--color", "always", "stats", "--no-color", "x"]):
        assert runner.invoke(app, args).exit_code == 0
    assert seen == ["never", "auto", "never", "never", "always", "never"]
