"""``dshctl stats --by day|week|month|project|model|tool``, costs, ``--sort/--top/--reverse`` (issue #16).

Four crafted v4 sessions (tests/stats_logs.py ``rollup_session``), every figure chosen by hand:

* s1 — 2026-03-01 23:30 UTC, cwd /a, model p/m. Turn 1: TTFT 100, LLM 600, tokens (uncached 1000, out
  100, read 4000), read 200 ms. Turn 2 starts one hour later (00:30 the next day: the session spans
  midnight): TTFT 300, LLM 1000, tokens (500, 50).
* s2 — 2026-03-02 10:00 UTC, cwd /a. Step 1 p/m: TTFT 200, LLM 1200, tokens (2000, 200), bash 500 ms
  (failed), read 100 ms. Step 2 q/n: TTFT 400, LLM 1000, tokens (300, 30, read 1000).
* s3 — 2026-03-09 08:00 UTC (a Monday), cwd /b, q/n: TTFT 500, LLM 2000, tokens (100, 10), bash 1000 ms.
* s4 — 2026-03-10 09:00 UTC, cwd /a, forked from s2 (it repeats s2's events before its cut), then one
  turn of its own on p/m: TTFT 50, LLM 550, tokens (10, 1).

With s2 counted, s4's inherited prefix is counted once, in s2. Totals: 4 sessions, 5 turns (2+1+1+1),
6 steps, uncached 3,910 (1000+500+2000+300+100+10), read 5,000, output 391 (100+50+200+30+10+1),
LLM 6,350 ms, tools 1,800 ms (200+500+100+1000), TTFT 1,550 ms over 6 steps.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from conftest import SAMPLES, invoke as run_cli
from stats_logs import log_lines, rollup_session, rollup_step


def _ms(text: str) -> int:
    return int(dt.datetime.fromisoformat(text).replace(tzinfo=dt.timezone.utc).timestamp() * 1000)


T1, T2, T3, T4 = (_ms("2026-03-01T23:30"), _ms("2026-03-02T10:00"), _ms("2026-03-09T08:00"), _ms("2026-03-10T09:00"))
HOUR = 3_600_000


def _s2() -> str:
    return rollup_session(
        "s2",
        created=T2,
        cwd="/a",
        turns=[
            [
                rollup_step(start=T2 + 1000, first=T2 + 1200, end=T2 + 2200, tokens=(2000, 200, 0, 0), tools=[("bash", 500, True), ("read", 100, False)]),
                rollup_step(model="q/n", start=T2 + 3000, first=T2 + 3400, end=T2 + 4000, tokens=(300, 30, 1000, 0)),
            ]
        ],
    )


def _logs() -> dict[str, str]:
    s1 = rollup_session(
        "s1",
        created=T1,
        cwd="/a",
        prompt="first line\nsecond line",
        turns=[
            [rollup_step(start=T1 + 1000, first=T1 + 1100, end=T1 + 1600, tokens=(1000, 100, 4000, 0), reasoning=40, tools=[("read", 200, False)])],
            [rollup_step(start=T1 + HOUR, first=T1 + HOUR + 300, end=T1 + HOUR + 1000, tokens=(500, 50, 0, 0))],
        ],
    )
    s2 = _s2()
    s3 = rollup_session(
        "s3",
        created=T3,
        cwd="/b",
        turns=[[rollup_step(model="q/n", start=T3 + 1000, first=T3 + 1500, end=T3 + 3000, tokens=(100, 10, 0, 0), tools=[("bash", 1000, False)])]],
    )
    s4 = rollup_session(
        "s4",
        created=T4,
        cwd="/a",
        parent="s2",
        inherited=log_lines(s2),
        turns=[[rollup_step(start=T4 + 1000, first=T4 + 1050, end=T4 + 1550, tokens=(10, 1, 0, 0))]],
    )
    return {"s1": s1, "s2": s2, "s3": s3, "s4": s4}


PRICES = """
[models."p/m"]
currency = "USD"
input = 1.0
cacheRead = 0.1
output = 2.0

[models."q/n"]
currency = "USD"
input = 0.5
cacheRead = 0.05
output = 1.0
"""


@pytest.fixture()
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no user price file of the machine's
    logs = tmp_path / "logs"
    logs.mkdir()
    for name, text in _logs().items():
        (logs / f"{name}.session.v4.jsonl").write_text(text)
    (tmp_path / "prices.toml").write_text(PRICES)
    return tmp_path


def _paths(root, *names) -> list[str]:
    return [str(root / "logs" / f"{name}.session.v4.jsonl") for name in (names or ("s1", "s2", "s3", "s4"))]


def invoke(*args, env=None):
    return run_cli("stats", *args, env=env)


def document(*args) -> dict:
    result = invoke(*args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


ADDITIVE = (
    "turns", "steps", "uncachedInputTokens", "cacheReadTokens", "cacheWriteTokens", "billedInputTokens",
    "outputTokens", "llmMs", "toolMs", "ttftMs", "ttftSteps", "decodeMs", "decodeTokens",
)


def _assert_rows_add_up(doc: dict, keys=ADDITIVE) -> None:
    rows, total = doc["rows"], doc["total"]
    for key in keys:
        assert sum(row[key] or 0 for row in rows) == total[key], key
    if "costs" in total and total["costs"] is not None:
        assert round(sum(row["costs"]["total"] for row in rows), 9) == total["costs"]["total"]


def _by_key(doc: dict) -> dict:
    return {row["key"]: row for row in doc["rows"]}


def test_total_row_holds_the_hand_computed_figures(root):
    total = document(*_paths(root), "--by", "day", "--tz", "UTC", "--prices", str(root / "prices.toml"))["total"]
    assert (total["sessions"], total["turns"], total["steps"]) == (4, 5, 6)
    assert (total["uncachedInputTokens"], total["cacheReadTokens"], total["outputTokens"]) == (3910, 5000, 391)
    assert (total["llmMs"], total["toolMs"], total["ttftMs"], total["ttftSteps"]) == (6350, 1800, 1550, 6)
    assert total["meanTtftMs"] == pytest.approx(1550 / 6)
    assert total["p90TtftMs"] == 500  # TTFTs 50 100 200 300 400 500: nearest rank ceil(0.9 · 6) = 6
    # p/m: uncached 3510 × 1.0 + read 4000 × 0.1 + output 351 × 2.0 = 3510 + 400 + 702 (per million)
    # q/n: uncached 400 × 0.5 + read 1000 × 0.05 + output 40 × 1.0 = 200 + 50 + 40 (per million)
    assert total["costs"] == {
        "input": 0.00371, "cacheRead": 0.00045, "cacheWrite": 0, "output": 0.000742, "total": 0.004902, "currency": "USD",
    }
    assert total["reasoningTokens"] == 40


def test_days_put_a_sessions_activity_on_its_start_day_and_each_calls_billing_on_the_calls_day(root):
    doc = document(*_paths(root), "--by", "day", "--tz", "UTC", "--prices", str(root / "prices.toml"))
    assert doc["tz"] == "UTC"
    days = _by_key(doc)
    assert list(days) == ["2026-03-01", "2026-03-02", "2026-03-09", "2026-03-10"]
    # s1 runs past midnight: both turns stay on the 1st; its second call (00:30 on the 2nd) bills on the 2nd
    first, second = days["2026-03-01"], days["2026-03-02"]
    assert (first["sessions"], first["turns"], first["steps"], first["llmMs"]) == (1, 2, 2, 1600)
    assert (first["uncachedInputTokens"], first["cacheReadTokens"], first["outputTokens"], first["reasoningTokens"]) == (1000, 4000, 100, 40)
    # p/m: 1000 × 1.0 + 4000 × 0.1 + 100 × 2.0 per million
    assert first["costs"]["total"] == 0.0016 and first["cacheHitPercent"] == 80.0
    # the 2nd: s2 (2300 uncached, 230 out, 1000 read) and s1's second call (500, 50): two sessions
    assert (second["sessions"], second["turns"], second["steps"]) == (2, 1, 2)
    assert (second["uncachedInputTokens"], second["outputTokens"], second["cacheReadTokens"], second["reasoningTokens"]) == (2800, 280, 1000, None)
    # p/m: 2500 × 1.0 + 250 × 2.0; q/n: 300 × 0.5 + 1000 × 0.05 + 30 × 1.0 (per million)
    assert second["costs"]["total"] == 0.00323 and second["models"] == ["p/m", "q/n"]
    # s4 adds only its own turn: its prefix is counted in s2, on the 2nd
    assert (days["2026-03-10"]["turns"], days["2026-03-10"]["steps"], days["2026-03-10"]["uncachedInputTokens"]) == (1, 1, 10)
    _assert_rows_add_up(doc)
    assert sum(row["sessions"] for row in doc["rows"]) == 5 and doc["total"]["sessions"] == 4


def test_time_zone_moves_sessions_between_days(root):
    tokyo = _by_key(document(*_paths(root), "--by", "day", "--tz", "Asia/Tokyo", "--no-cost"))
    # s1 starts 08:30 on the 2nd in Tokyo, with s2 (19:00)
    assert list(tokyo) == ["2026-03-02", "2026-03-09", "2026-03-10"]
    assert tokyo["2026-03-02"]["sessions"] == 2
    new_york = _by_key(document(*_paths(root), "--by", "day", "--tz", "America/New_York", "--no-cost"))
    # s3 is 03:00 on the 9th in New York, s4 05:00 on the 10th; s1 18:30 on the 1st
    assert list(new_york) == ["2026-03-01", "2026-03-02", "2026-03-09", "2026-03-10"]


def test_weeks_are_iso_weeks_starting_monday_and_months_add_up(root):
    weeks = document(*_paths(root), "--by", "week", "--tz", "UTC", "--no-cost")
    # 2026-03-01 is a Sunday (week 9), 2026-03-02 and 2026-03-09 are Mondays; s1's second call, on the
    # 2nd, bills in week 10 beside s2
    assert {key: row["sessions"] for key, row in _by_key(weeks).items()} == {"2026-W09": 1, "2026-W10": 2, "2026-W11": 2}
    assert {key: row["uncachedInputTokens"] for key, row in _by_key(weeks).items()} == {"2026-W09": 1000, "2026-W10": 2800, "2026-W11": 110}
    _assert_rows_add_up(weeks)
    months = document(*_paths(root), "--by", "month", "--tz", "UTC", "--no-cost")
    assert [row["key"] for row in months["rows"]] == ["2026-03"]
    _assert_rows_add_up(months)


def test_projects_add_up_with_the_prefix_counted_in_the_parent(root):
    doc = document(*_paths(root), "--by", "project", "--prices", str(root / "prices.toml"))
    projects = _by_key(doc)
    assert (projects["/a"]["sessions"], projects["/b"]["sessions"]) == (3, 1)
    assert projects["/b"]["uncachedInputTokens"] == 100
    assert projects["/a"]["uncachedInputTokens"] == 3810
    _assert_rows_add_up(doc)
    assert doc["aggregate"]["inheritedPrefixes"] == {"excluded": 1, "counted": 0}


def test_a_child_without_its_parent_keeps_its_prefix_once(root):
    doc = document(*_paths(root, "s1", "s4"), "--by", "day", "--tz", "UTC", "--no-cost")
    days = _by_key(doc)
    # s4 alone: s2's 2 steps + its own, on the 10th; the prefix's calls (uncached 2300) were made on the
    # 2nd and bill there, beside s1's second call (500)
    assert (days["2026-03-10"]["steps"], days["2026-03-10"]["uncachedInputTokens"]) == (3, 10)
    assert (days["2026-03-02"]["sessions"], days["2026-03-02"]["steps"], days["2026-03-02"]["uncachedInputTokens"]) == (2, 0, 2800)
    _assert_rows_add_up(doc)


def test_models_split_the_total(root):
    doc = document(*_paths(root), "--by", "model", "--prices", str(root / "prices.toml"))
    models = _by_key(doc)
    assert (models["p/m"]["steps"], models["q/n"]["steps"]) == (4, 2)
    assert (models["p/m"]["llmMs"], models["q/n"]["llmMs"]) == (3350, 3000)  # 600+1000+1200+550, 1000+2000
    assert (models["p/m"]["toolMs"], models["q/n"]["toolMs"]) == (800, 1000)  # tools run after a p/m or q/n message
    assert models["q/n"]["p90TtftMs"] == 500
    assert models["q/n"]["costs"]["total"] == pytest.approx(0.00029)  # (200 + 50 + 40) per million
    # turns count for each model they used: s2's one turn used both
    assert (models["p/m"]["turns"], models["q/n"]["turns"], doc["total"]["turns"]) == (4, 2, 5)
    _assert_rows_add_up(doc, keys=[key for key in ADDITIVE if key != "turns"])


def test_tools_calls_failures_durations_and_shares(root):
    doc = document(*_paths(root), "--by", "tool")
    tools = _by_key(doc)
    bash, read = tools["bash"], tools["read"]
    assert (bash["calls"], bash["failures"], bash["toolMs"], bash["p50Ms"], bash["p90Ms"], bash["maxMs"]) == (2, 1, 1500, 500, 1000, 1000)
    assert (read["calls"], read["failures"], read["toolMs"], read["p50Ms"], read["p90Ms"], read["maxMs"]) == (2, 0, 300, 100, 200, 200)
    assert (bash["sharePercent"], read["sharePercent"]) == (83.3, 16.7)  # 1500 / 1800, 300 / 1800
    total = doc["total"]
    assert (total["calls"], total["failures"], total["toolMs"], total["maxMs"]) == (4, 1, 1800, 1000)
    _assert_rows_add_up(doc, keys=("calls", "failures", "toolMs", "timedCalls"))
    assert "costs" not in total


def test_records_gain_title_duration_prompt_tools_and_reasoning(root):
    result = invoke(*_paths(root, "s1"), "--by", "turn", "--ndjson")
    turns = [json.loads(line) for line in result.stdout.splitlines()]
    assert [turn["prompt"] for turn in turns] == ["first line", "first line"]
    assert turns[1]["startTime"] == T1 + HOUR
    assert turns[0]["reasoningTokens"] == 40
    steps = [json.loads(line) for line in invoke(*_paths(root, "s2"), "--by", "step", "--ndjson").stdout.splitlines()]
    assert [step["tools"] for step in steps] == [["bash", "read"], []]
    session = document(*_paths(root, "s1"))["sessions"][0]
    # first turn/start (T1+1000) to the last turn/end (T1+HOUR+1000, +1)
    assert session["durationMs"] == HOUR + 1
    assert session["title"] is None


# -- prices -------------------------------------------------------------------------------------------


def test_user_file_overrides_builtin_and_prices_file_overrides_both(root, monkeypatch):
    from dshctl.stats import prices

    builtin = root / "builtin.toml"
    builtin.write_text('[models."p/m"]\ncurrency = "USD"\ninput = 100\noutput = 100\ncacheRead = 100\n[models."q/n"]\ncurrency = "USD"\ninput = 0\noutput = 0\ncacheRead = 0\n')
    monkeypatch.setattr(prices, "BUILTIN", builtin)
    costs = lambda *args: _by_key(document(*_paths(root, "s3"), "--by", "model", *args))["q/n"]["costs"]["total"]  # noqa: E731
    assert costs() == 0  # built-in: q/n free
    user = root / "config" / "dshctl" / "prices.toml"
    user.parent.mkdir(parents=True)
    user.write_text('[models."q/n"]\ncurrency = "USD"\ninput = 10\noutput = 10\n')
    assert costs() == pytest.approx(0.0011)  # user: (100 + 10) × 10 per million
    assert costs("--prices", str(root / "prices.toml")) == pytest.approx(0.00006)  # 100 × 0.5 + 10 × 1.0


def test_time_bounded_prices_follow_the_session_start(root):
    history = root / "history.toml"
    history.write_text(
        '[[models."p/m"]]\ncurrency = "USD"\ninput = 1\ncacheRead = 1\noutput = 1\n\n'
        '[[models."p/m"]]\ncurrency = "USD"\ninput = 3\ncacheRead = 3\noutput = 3\nsince = 2026-03-05\n\n'
        '[models."q/n"]\ncurrency = "USD"\ninput = 0\ncacheRead = 0\noutput = 0\n'
    )
    doc = document(*_paths(root, "s2", "s4"), "--by", "day", "--tz", "UTC", "--prices", str(history))
    days = _by_key(doc)
    assert days["2026-03-02"]["costs"]["total"] == pytest.approx(0.0022)  # s2's p/m tokens 2200 × 1
    assert days["2026-03-10"]["costs"]["total"] == pytest.approx(0.000033)  # s4's own 11 × 3, the prefix in s2
    _assert_rows_add_up(doc)


def test_a_model_without_a_price_has_null_costs_and_one_note(root):
    only_p = root / "only-p.toml"
    only_p.write_text('[models."p/m"]\ncurrency = "USD"\ninput = 1\ncacheRead = 0.1\noutput = 2\n')
    result = invoke(*_paths(root), "--by", "model", "--json", "--prices", str(only_p))
    assert result.exit_code == 0
    doc = json.loads(result.stdout)
    models = _by_key(doc)
    assert models["q/n"]["costs"] is None and models["p/m"]["costs"]["total"] == pytest.approx(0.004612)
    assert doc["total"]["costs"] is None and doc["total"]["unpricedModels"] == ["q/n"]
    assert result.stderr.count("no price for model q/n") == 1


def test_mixed_currencies_are_never_added(root):
    mixed = root / "mixed.toml"
    mixed.write_text(PRICES.replace('currency = "USD"\ninput = 0.5', 'currency = "CNY"\ninput = 0.5'))
    result = invoke(*_paths(root), "--by", "month", "--json", "--prices", str(mixed))
    total = json.loads(result.stdout)["total"]
    assert total["costs"] is None
    assert [(c["currency"], c["total"]) for c in total["costsByCurrency"]] == [("CNY", 0.00029), ("USD", 0.004612)]
    assert "dshctl: note: costs in CNY, USD: totals are given per currency" in result.stderr


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[models.x\n", "not TOML"),
        ('[models."a"]\ncurrency = "USD"\ninput = 1\n', "missing 'output'"),
        ('[models."a"]\ncurrency = "USD"\ninput = 1\noutput = -1\n', "'output' must be a number"),
        ('[models."a"]\ncurrency = "USD"\ninput = 1\noutput = 1\ncache_read = 1\n', "unknown key 'cache_read'"),
        ('[models."a"]\ncurrency = "USD"\ninput = 1\noutput = 1\nsince = "soon"\n', "'since' must be a TOML date"),
    ],
)
def test_a_malformed_price_file_is_a_clear_error(root, text, message):
    bad = root / "bad.toml"
    bad.write_text(text)
    result = invoke(*_paths(root, "s1"), "--prices", str(bad))
    assert result.exit_code == 2
    assert f"price file {bad}" in result.stderr and message in result.stderr


def test_no_cost_drops_costs_and_a_route_without_a_price_has_null_costs(root):
    assert "costs" not in document(*_paths(root, "s1"), "--prices", str(root / "prices.toml"), "--no-cost")["sessions"][0]
    assert document(*_paths(root, "s1"))["sessions"][0]["costs"] is None  # costs are on; no table prices p/m


# -- sort, top, reverse, tables ------------------------------------------------------------------------


def test_sort_top_reverse(root):
    sessions = document(*_paths(root), "--sort", "cost", "--top", "2", "--prices", str(root / "prices.toml"))["sessions"]
    assert [s["id"] for s in sessions] == ["s4", "s2"]  # s4 repeats s2 and adds its own turn
    turns = document(*_paths(root), "--by", "turn", "--sort", "ttftMs", "--reverse", "--top", "1")["turns"]
    assert (turns[0]["session"], turns[0]["ttftMs"]) == ("s4", 50)
    days = document(*_paths(root), "--by", "day", "--tz", "UTC", "--sort", "uncachedInputTokens", "--top", "1", "--no-cost")
    assert [row["key"] for row in days["rows"]] == ["2026-03-02"] and days["total"]["steps"] == 6


@pytest.mark.parametrize(("by", "listed"), [("step", "ttftMs"), ("tool", "p90Ms"), ("week", "p90TtftMs")])
def test_an_unknown_sort_key_lists_the_keys(root, by, listed):
    result = invoke(*_paths(root, "s1"), "--by", by, "--sort", "speed")
    assert result.exit_code == 2 and "unknown key 'speed'" in result.stderr and listed in result.stderr


def test_an_unknown_time_zone_is_a_usage_error(root):
    result = invoke(*_paths(root, "s1"), "--by", "day", "--tz", "Mars/Olympus")
    assert result.exit_code == 2 and "unknown time zone 'Mars/Olympus'" in result.stderr


def test_day_table_has_rows_a_total_and_a_sparkline(root):
    result = invoke(*_paths(root), "--by", "day", "--tz", "UTC", "--prices", str(root / "prices.toml"))
    assert result.exit_code == 0
    out = result.stdout
    assert out.index("2026-03-01") < out.index("2026-03-10") < out.index("total")
    assert "tokens per day 2026-03-01…2026-03-10:" in out
    assert "  cost USD\n" in out and "  0.0049\n" in out  # a pipe too: the one currency in the header


def test_log_text_in_rollup_tables_is_shown_as_data(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    hostile = "/w\x1b]0;owned\x07\x1b[2J"
    log = tmp_path / "h.session.v4.jsonl"
    log.write_text(rollup_session("h", created=T1, cwd=hostile, turns=[[rollup_step(model="p/m\x1b[31m", start=T1 + 1, first=T1 + 2, end=T1 + 3, tools=[("rm\x1b[2J", 1, False)])]]))
    for by in ("project", "model", "tool"):
        out = invoke(str(log), "--by", by).stdout
        assert "\x1b" not in out and "\x07" not in out
    assert "/w␛]0;owned␇␛[2J" in invoke(str(log), "--by", "project").stdout
    assert document(str(log), "--by", "project")["rows"][0]["key"] == hostile  # JSON keeps the exact value


# -- review of issue 16 --------------------------------------------------------------------------------


def test_the_note_names_the_bucket_price_a_model_lacks(root):
    no_read = root / "no-read.toml"
    no_read.write_text('[models."p/m"]\ncurrency = "USD"\ninput = 1\noutput = 2\n'
                       '[models."q/n"]\ncurrency = "USD"\ninput = 1\noutput = 2\n')
    result = invoke(*_paths(root, "s1", "s3"), "--by", "model", "--json", "--prices", str(no_read))
    models = _by_key(json.loads(result.stdout))
    assert models["p/m"]["costs"] is None  # s1 read 4,000 tokens from the cache: no price for them
    assert models["q/n"]["costs"]["total"] == pytest.approx(0.00012)  # no cache-read tokens: none needed
    assert "no cacheRead price for model p/m" in result.stderr and "q/n" not in result.stderr


def test_sort_by_cost_ranks_within_one_currency(root):
    small = root / "logs" / "s5.session.v4.jsonl"
    small.write_text(rollup_session("s5", created=T4, turns=[[rollup_step(start=T4 + 1, first=T4 + 2, end=T4 + 3, tokens=(10, 1, 0, 0))]]))
    euro = root / "euro.toml"
    euro.write_text(PRICES.replace('currency = "USD"\ninput = 0.5\ncacheRead = 0.05\noutput = 1.0',
                                   'currency = "EUR"\ninput = 100\noutput = 100'))
    result = invoke(*_paths(root, "s1", "s3", "s5"), "--sort", "cost", "--json", "--prices", str(euro))
    sessions = json.loads(result.stdout)["sessions"]
    assert [(s["id"], s["costs"]["currency"]) for s in sessions] == [("s1", "USD"), ("s5", "USD"), ("s3", "EUR")]
    assert sessions[2]["costs"]["total"] > sessions[0]["costs"]["total"]  # more EUR, still after the USD rows
    assert "dshctl: note: --sort cost ranks the rows costed in USD; those in EUR follow" in result.stderr
    reverse = document(*_paths(root, "s1", "s3", "s5"), "--sort", "cost", "--reverse", "--prices", str(euro))
    assert [s["id"] for s in reverse["sessions"]] == ["s5", "s1", "s3"]


def test_sort_by_cost_without_costs_is_a_usage_error(root):
    result = invoke(*_paths(root), "--sort", "cost", "--no-cost", "--prices", str(root / "prices.toml"))
    assert result.exit_code == 2 and "--sort cost" in result.stderr and "--no-cost" in result.stderr


@pytest.mark.parametrize("by", ["day", "tool", "session"])
def test_a_sum_over_no_session_is_0_as_dsh_folds_start(root, by):
    doc = document(*_paths(root), "--by", by, "--since", "2030-01-01")
    summed = ("llmMs", "toolMs", "ttftMs", "decodeMs", "decodeTokens", *ADDITIVE[2:7])
    for record in filter(None, (doc.get("total"), doc.get("aggregate"))):
        for key in summed:
            if key in record:
                assert record[key] == 0, (key, record)
    for key in ("meanTtftMs", "tokensPerSecond", "cacheHitPercent"):  # a ratio over nothing: dsh has none
        assert doc["aggregate"][key] is None
    own = doc["aggregate"]["dshctl"]
    assert own["stallMs"] == 0 and own["retryWaste"]["attemptMs"] == 0


@pytest.mark.parametrize("tz", ["Europe/Berlin", ":Europe/Berlin", "/usr/share/zoneinfo/Europe/Berlin"])
def test_the_local_zone_is_reported_and_applied_by_its_iana_name(tmp_path, tz):
    summer = _ms("2026-07-01T22:30")  # 00:30 the next day in Berlin's summer time, 23:30 in its winter time
    log = tmp_path / "summer.session.v4.jsonl"
    log.write_text(rollup_session("summer", created=summer, turns=[[rollup_step(start=summer + 1, first=summer + 2, end=summer + 3)]]))
    result = invoke(str(log), "--by", "day", "--json", env={"TZ": tz})
    doc = json.loads(result.stdout)
    assert doc["tz"] == "Europe/Berlin" and [row["key"] for row in doc["rows"]] == ["2026-07-02"]


def test_a_zone_without_a_name_is_its_abbreviation_and_offset():
    from dshctl.stats.rollup import zone_name

    assert zone_name(dt.timezone(dt.timedelta(hours=1), "CET")) == "CET (UTC+01:00)"


@pytest.mark.parametrize("by", ["session", "turn", "step", "project", "model", "day", "tool"])
@pytest.mark.parametrize("form", ["plain", "box"])
def test_no_sessions_is_said_on_stderr_as_ls_does(monkeypatch, by, form):
    """A window that keeps no session: "no sessions (N outside …)" as a note on standard error, never a
    total row of zeros that reads as figures nor a message drawn as a table; standard output has what ls
    prints then: the table's header line (plain, as --tsv), nothing on a terminal. --quiet hides the note."""
    import dshctl.tables

    monkeypatch.setattr(dshctl.tables, "stdout_is_terminal", lambda: form == "box")
    args = ("stats", "--by", by, "--since", "2099-01-01", str(SAMPLES / "sessions"))
    result = run_cli(*args)
    assert result.exit_code == 0, result.output
    assert result.stderr == "dshctl: no sessions (3 outside --since/--until)\n"
    if form == "box":
        assert result.stdout == ""
    else:
        full = run_cli("stats", "--by", by, "--plain", "--tz", "UTC", str(SAMPLES / "sessions")).stdout
        key = by if by not in ("turn", "step") else "session"
        header = next(line for line in full.splitlines() if line.split()[:1] == [key] and len(line.split()) > 3)
        assert result.stdout.count("\n") == 1 and set(result.stdout.split()) <= set(header.split())  # its fixed columns
        assert result.stdout.split()[0] == header.split()[0]
        assert "no sessions" not in result.stdout and "cost:" not in result.stdout  # no total row, no cost note
    quiet = run_cli(*args, "--quiet")
    assert quiet.exit_code == 0 and quiet.stderr == "" and quiet.stdout == result.stdout


@pytest.mark.parametrize("by", ["day", "week", "month", "project", "model"])
def test_a_rollup_row_carries_the_in_plus_out_the_tables_show(root, by):
    """``inPlusOutTokens`` is the record's, the one value JSON, NDJSON, the table and TSV render: billed
    input plus output, beside the buckets it sums."""
    doc = document("--by", by, "--tz", "UTC", *_paths(root))
    rows = doc["rows"] + [doc["total"]]
    for row in rows:
        assert list(row).index("inPlusOutTokens") == list(row).index("outputTokens") + 1
        assert row["inPlusOutTokens"] == row["billedInputTokens"] + row["outputTokens"]
    tsv = invoke("--by", by, "--tz", "UTC", "--tsv", *_paths(root)).stdout.splitlines()
    column = tsv[0].split("\t").index("in+out")
    assert [int(line.split("\t")[column]) for line in tsv[1:]] == [row["inPlusOutTokens"] for row in rows]
    ndjson = [json.loads(line) for line in invoke("--by", by, "--tz", "UTC", "--ndjson", *_paths(root)).stdout.splitlines()]
    assert [row["inPlusOutTokens"] for row in ndjson] == [row["inPlusOutTokens"] for row in rows]


def test_a_session_and_the_aggregate_carry_the_in_plus_out_the_tables_show(root):
    """Sessions and the aggregate carry ``inPlusOutTokens`` as the rollup rows do (after ``outputTokens``),
    and TSV's session table has the ``in+out`` column plain and boxed show, the same value."""
    doc = document("--tz", "UTC", *_paths(root))
    for record in doc["sessions"] + [doc["aggregate"]]:
        assert list(record).index("inPlusOutTokens") == list(record).index("outputTokens") + 1
        assert record["inPlusOutTokens"] == record["billedInputTokens"] + record["outputTokens"] > 0
    tsv = invoke("--tz", "UTC", "--tsv", *_paths(root)).stdout.splitlines()
    header = tsv[0].split("\t")
    assert header.index("in+out") == header.index("out") + 1
    shown = {line.split("\t")[header.index("session")]: int(line.split("\t")[header.index("in+out")]) for line in tsv[1:]}
    assert shown == {session["id"]: session["inPlusOutTokens"] for session in doc["sessions"]}
    ndjson = [json.loads(line) for line in invoke("--tz", "UTC", "--ndjson", *_paths(root)).stdout.splitlines()]
    assert [r["inPlusOutTokens"] for r in ndjson if r["kind"] == "session"] == [s["inPlusOutTokens"] for s in doc["sessions"]]


def test_a_session_record_derives_in_plus_out_however_it_is_made(root):
    import msgspec

    from dshctl.stats.records import AggregateRecord, SessionRecord

    doc = document("--tz", "UTC", *_paths(root, "s1"))
    session = msgspec.json.decode(json.dumps({**doc["sessions"][0], "inPlusOutTokens": 1}), type=SessionRecord)
    assert session.in_plus_out_tokens == session.billed_input_tokens + session.output_tokens  # never given
    assert msgspec.structs.replace(session, output_tokens=0).in_plus_out_tokens == session.billed_input_tokens
    aggregate = msgspec.json.decode(json.dumps(doc["aggregate"]), type=AggregateRecord)
    assert msgspec.structs.replace(aggregate, billed_input_tokens=None, output_tokens=None).in_plus_out_tokens is None


def test_in_plus_out_is_derived_however_a_row_is_made():
    import msgspec

    from dshctl.stats.records import RollupRow

    left = ("kind", "key", "in_plus_out_tokens", "models", "settlements", "costs", "costs_by_currency", "unpriced_models")
    fields = {name: None for name in RollupRow.__struct_fields__ if name not in left}
    fields.update(kind="day", key="2026-03-01", sessions=1, turns=1, steps=1, ttft_steps=0)
    row = RollupRow(**{**fields, "billed_input_tokens": 100, "output_tokens": 7})
    assert row.in_plus_out_tokens == 107
    assert msgspec.structs.replace(row, output_tokens=None).in_plus_out_tokens == 100
    assert RollupRow(**fields).in_plus_out_tokens is None  # null only where both are: dsh has none
    decoded = msgspec.json.decode(msgspec.json.encode({**msgspec.to_builtins(row), "inPlusOutTokens": 1}), type=RollupRow)
    assert decoded.in_plus_out_tokens == 107  # never given: the buckets say it
