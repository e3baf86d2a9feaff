"""Costs across fork cuts and periods (review of wave 1, items 11 and 16).

* A tally keeps a currency while any of its sums is not 0: what a child added after its cut can be a
  sample that replaced an inherited one (no call of its own, a non-zero amount).
* ``--by day|week|month`` (in ``--tz``): each model call's tokens and cost count in the period of the
  call's time, the time its price was chosen at; the rows add up to the total exactly.
"""

from __future__ import annotations

import json

from dshctl.stats.costs import CostTally

from conftest import invoke as run_cli

MILLION = 1_000_000
CREATED = 1_790_000_000_000  # 2026-09-21 14:13:20 UTC


def invoke(*args):
    return run_cli("stats", *args)


def document(*args) -> dict:
    result = invoke(*args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _lines(events: list[dict]) -> str:
    return "".join(json.dumps(event, separators=(",", ":")) + "\n" for event in events)


# -- item 11: a currency stays while any of its sums is not 0 -----------------------------------------


def test_a_replaced_inherited_charge_leaves_the_difference():
    """full: a charge of 5 replaced by one of 10; prefix: the 5. What came after the cut costs 5, over no
    call of its own."""
    full = CostTally()
    full.add(("USD", (5, 0, 0, 0)), 1)
    full.add(("USD", (5, 0, 0, 0)), 1, -1)
    full.add(("USD", (10, 0, 0, 0)), 1)
    prefix = CostTally()
    prefix.add(("USD", (5, 0, 0, 0)), 1)
    after = full.copy()
    after.merge(prefix, -1)
    assert after.by_currency == {"USD": [5, 0, 0, 0, 0]}
    assert after.record().total == 5e-9 and after.record().currency == "USD"
    after.merge(after.copy(), -1)
    assert after.by_currency == {}  # every sum 0: the currency goes


def test_add_keeps_a_currency_whose_calls_net_to_zero_with_an_amount_left():
    tally = CostTally()
    tally.add(("EUR", (3, 1, 0, 0)), 4, -1)
    tally.add(("EUR", (3, 0, 0, 0)), 3)
    assert tally.by_currency == {"EUR": [0, -1, 0, 0, 0]}


PRICES = '[models."p/m"]\ncurrency = "USD"\ninput = 1\noutput = 1\n'


def _step_events(turn: int, time: int, usage_attempt: dict, usage_message: dict | None):
    attempt = {"type": "assistant/attempt", "time": time + 500, "data": {"turn": turn, "step": 1, "stream": [
        {"type": "chunk", "time": time + 400, "chunk": {"type": "usage", "usage": usage_attempt}},
        {"type": "chunk", "time": time + 500, "chunk": {"type": "finish", "reason": {"kind": "stop"}}},
    ]}}
    head = [
        {"type": "turn/start", "time": time, "data": {"turn": turn}},
        {"type": "step/start", "time": time, "data": {"turn": turn, "step": 1}},
        {"type": "request/header", "time": time, "data": {"header": {"config": {"provider": "p", "model": "m"}}, "reason": "initial"}},
        attempt,
    ]
    tail = []
    if usage_message is not None:
        message = {"role": "assistant", "id": f"a{turn}", "content": [{"type": "text", "text": "ok"}], "source": {"kind": "model", "provider": "p", "model": "m"}}
        tail.append({"type": "assistant/message", "time": time + 900, "data": {"turn": turn, "step": 1, "usage": usage_message, "message": message,
                     "stream": [{"type": "chunk", "time": time + 900, "chunk": {"type": "usage", "usage": usage_message}}]}, "surfaceOp": "append"})
    tail += [{"type": "step/end", "time": time + 1000, "data": {"turn": turn, "step": 1}},
             {"type": "turn/end", "time": time + 1000, "data": {"turn": turn, "reason": {"kind": "completed"}}}]
    return head, tail


def _numbered(header: dict, events: list[dict]) -> str:
    return _lines([header] + [{**event, "seq": seq} for seq, event in enumerate(events)])


def test_a_fork_cut_inside_a_step_whose_sample_is_replaced_after_the_cut(tmp_path, monkeypatch):
    """The parent's step settled an attempt of 1M input tokens and ended. Its child forked inside that
    step: the child's message (2M) replaces the inherited attempt's sample, so the child added 1M
    tokens and 1 USD after its cut, over no call of its own."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "p.toml").write_text(PRICES)
    head, tail = _step_events(1, CREATED + 1000, {"inputTokens": MILLION, "outputTokens": 0}, None)
    session = {"type": "session", "version": 4, "cwd": "/w", "delegationDepth": 0}
    (tmp_path / "parent.session.v4.jsonl").write_text(_numbered({**session, "id": "P", "createdAt": CREATED, "isSeeded": False}, head + tail))
    _, child_tail = _step_events(1, CREATED + 1000, {}, {"inputTokens": 2 * MILLION, "outputTokens": 0})
    cut = {"type": "session/end-seed", "time": CREATED + 600, "data": {"inherited": True}}
    child = {**session, "id": "C", "createdAt": CREATED + 60_000, "isSeeded": True, "parentSession": "P"}
    (tmp_path / "child.session.v4.jsonl").write_text(_numbered(child, head + [cut] + child_tail))
    paths = [str(tmp_path / "parent.session.v4.jsonl"), str(tmp_path / "child.session.v4.jsonl")]
    doc = document(*paths, "--prices", str(tmp_path / "p.toml"))
    assert [s["costs"]["total"] for s in doc["sessions"]] == [1, 2]
    aggregate = doc["aggregate"]
    assert aggregate["uncachedInputTokens"] == 2 * MILLION  # the parent's 1M, the child's 1M after the cut
    assert aggregate["costs"]["total"] == 2
    for by in ("day", "model", "project"):
        rollup = document(*paths, "--by", by, "--tz", "UTC", "--prices", str(tmp_path / "p.toml"))
        assert rollup["total"]["costs"]["total"] == 2, by
        assert sum(row["costs"]["total"] for row in rollup["rows"]) == 2, by


# -- item 16: day, week and month rows bill each call in the period of its time ----------------------

import datetime as dt  # noqa: E402
from decimal import ROUND_HALF_EVEN, Decimal  # noqa: E402
from zoneinfo import ZoneInfo  # noqa: E402

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from stats_logs import RETRY_V2, fixture_form, rollup_session, rollup_step  # noqa: E402

RATES = {  # per million: (input, output, cacheRead, cacheWrite), odd enough that every call rounds
    "p/m": ("0.123456789", "1.987654321", "0.0123457", "0.2000003"),
    "q/n": ("3.3333333", "7.0000007", "0.3333333", "3.3333333"),
}
ODD_PRICES = "".join(
    f'[models."{route}"]\ncurrency = "USD"\ninput = {i}\noutput = {o}\ncacheRead = {r}\ncacheWrite = {w}\n'
    for route, (i, o, r, w) in RATES.items()
)
MIDNIGHT = int(dt.datetime(2026, 2, 27, tzinfo=dt.timezone.utc).timestamp() * 1000)  # a Friday, near a month's end
ZONES = ("UTC", "Asia/Kolkata", "America/St_Johns", "Pacific/Chatham", "Europe/Berlin", "Asia/Shanghai")


def _nanos(route: str, tokens: tuple) -> list[int]:
    """A call's nano-units per bucket by hand, in the meter's order (input, output, cacheRead, cacheWrite)."""
    rates = RATES[route]
    return [int((Decimal(count) * Decimal(rate) * 1000).quantize(Decimal(1), rounding=ROUND_HALF_EVEN)) for count, rate in zip(tokens, rates)]


def _period(by: str, ms: int, zone: str) -> str:
    local = dt.datetime.fromtimestamp(ms / 1000, ZoneInfo(zone))
    if by == "day":
        return local.strftime("%Y-%m-%d")
    if by == "month":
        return local.strftime("%Y-%m")
    year, week, _ = local.isocalendar()
    return f"{year}-W{week:02d}"


def _row_nanos(row: dict) -> list[int]:
    costs = row["costs"]
    return [round(costs[key] * 10**9) for key in ("input", "output", "cacheRead", "cacheWrite")]


calls = st.lists(
    st.tuples(
        st.integers(min_value=1, max_value=5 * 86_400_000),  # ms after the previous call
        st.sampled_from(sorted(RATES)),
        st.tuples(*(st.integers(min_value=0, max_value=3_000_000) for _ in range(4))),
    ),
    min_size=1,
    max_size=6,
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(sessions=st.lists(st.tuples(st.integers(min_value=0, max_value=40 * 86_400_000), calls), min_size=1, max_size=3),
       by=st.sampled_from(("day", "week", "month")), zone=st.sampled_from(ZONES))
def test_each_calls_tokens_and_cost_count_in_the_period_of_its_time_exactly(tmp_path_factory, sessions, by, zone):
    folder = tmp_path_factory.mktemp("periods")
    (folder / "p.toml").write_text(ODD_PRICES)
    expected: dict[str, dict] = {}
    paths = []
    for number, (offset, specs) in enumerate(sessions):
        created = MIDNIGHT + offset
        clock = created
        steps = []
        members = {_period(by, created, zone)}
        for gap, route, tokens in specs:
            clock += gap
            steps.append(rollup_step(model=route, start=clock, first=clock + 10, end=clock + 20, tokens=tokens))
            key = _period(by, clock, zone)
            members.add(key)
            row = expected.setdefault(key, {"tokens": [0, 0, 0, 0], "nanos": [0, 0, 0, 0], "sessions": set()})
            row["tokens"] = [a + b for a, b in zip(row["tokens"], tokens)]
            row["nanos"] = [a + b for a, b in zip(row["nanos"], _nanos(route, tokens))]
        for key in members:
            expected.setdefault(key, {"tokens": [0, 0, 0, 0], "nanos": [0, 0, 0, 0], "sessions": set()})["sessions"].add(number)
        path = folder / f"s{number}.session.v4.jsonl"
        path.write_text(rollup_session(f"s{number}", created=created, turns=[[step] for step in steps]))
        paths.append(str(path))
    doc = document(*paths, "--by", by, "--tz", zone, "--prices", str(folder / "p.toml"), "-j", "1")
    rows = {row["key"]: row for row in doc["rows"]}
    assert sorted(rows) == sorted(expected)
    for key, want in expected.items():
        row = rows[key]
        uncached, output, read, write = want["tokens"]
        assert (row["uncachedInputTokens"], row["outputTokens"], row["cacheReadTokens"], row["cacheWriteTokens"]) == (uncached, output, read, write), key
        assert row["billedInputTokens"] == uncached + read + write
        assert _row_nanos(row) == want["nanos"], key
        assert round(row["costs"]["total"] * 10**9) == sum(want["nanos"])
        assert row["sessions"] == len(want["sessions"]), key
    total = doc["total"]
    assert total["sessions"] == len(sessions)
    assert [sum(_row_nanos(row)[i] for row in doc["rows"]) for i in range(4)] == _row_nanos(total)
    for name in ("uncachedInputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "turns", "steps", "llmMs"):
        assert sum(row[name] for row in doc["rows"]) == total[name], name


def test_a_session_across_midnight_counts_on_both_days_and_keeps_its_turns_on_the_first(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "p.toml").write_text('[models."p/m"]\ncurrency = "USD"\ninput = 1\noutput = 2\n')
    start = MIDNIGHT - 3_600_000  # 23:00 UTC
    steps = [rollup_step(start=start + 60_000, first=start + 61_000, end=start + 62_000, tokens=(1_000_000, 0, 0, 0)),
             rollup_step(start=MIDNIGHT + 60_000, first=MIDNIGHT + 61_000, end=MIDNIGHT + 62_000, tokens=(0, 1_000_000, 0, 0))]
    path = tmp_path / "late.session.v4.jsonl"
    path.write_text(rollup_session("late", created=start, turns=[[steps[0]], [steps[1]]]))
    doc = document(str(path), "--by", "day", "--tz", "UTC", "--prices", str(tmp_path / "p.toml"))
    rows = [(r["key"], r["sessions"], r["turns"], r["steps"], r["uncachedInputTokens"], r["outputTokens"], r["costs"]["total"]) for r in doc["rows"]]
    assert rows == [("2026-02-26", 1, 2, 2, 1_000_000, 0, 1), ("2026-02-27", 1, 0, 0, 0, 1_000_000, 2)]
    assert (doc["total"]["sessions"], doc["total"]["costs"]["total"]) == (1, 3)
    assert doc["rows"][1]["models"] == ["p/m"]  # the model its call used
    # an hour west of UTC both calls are on the 26th
    west = document(str(path), "--by", "day", "--tz", "Atlantic/Azores", "--prices", str(tmp_path / "p.toml"))
    assert [(r["key"], r["costs"]["total"]) for r in west["rows"]] == [("2026-02-26", 3)]
    table = invoke(str(path), "--by", "day", "--tz", "UTC", "--prices", str(tmp_path / "p.toml")).stdout
    row = next(line.split() for line in table.splitlines() if line.startswith("2026-02-27"))  # a pipe: the plain form
    assert row[1:4] == ["1", "0", "0"] and row[-1] == "2.00" and "cost USD" in table  # plain: its currency in the header
    assert "tokens and costs on the day of each call; turns, steps and times on the day a session started" in table


def test_a_retry_after_midnight_bills_on_the_day_it_was_made(tmp_path, monkeypatch):
    """The first attempt (step/start 23:59:00) and the retry (llm/retry-started 00:00:30) are two calls."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "p.toml").write_text('[models."p/m"]\ncurrency = "USD"\ninput = 1\noutput = 1\n')
    shift = MIDNIGHT - 60_000 - 1000  # RETRY_V2's step starts at 1000, its retry at 1661
    lines = []
    for line in RETRY_V2.splitlines():
        event = json.loads(line)
        if event["type"] == "session":
            event["createdAt"] = shift + 1000
            event["version"] = 4
        else:
            event["time"] += shift
            if event["type"] == "llm/retry-started":
                event["time"] = MIDNIGHT + 30_000
        lines.append(json.dumps(event))
    path = tmp_path / "retry.session.v4.jsonl"
    path.write_text("\n".join(lines) + "\n")
    doc = document(str(path), "--by", "day", "--tz", "UTC", "--prices", str(tmp_path / "p.toml"))
    # the failed attempt: 100 in + 2 out; the retry: 50 in + 3 out + 150 cache read (no cacheRead price: null)
    rows = {r["key"]: r for r in doc["rows"]}
    assert (rows["2026-02-26"]["uncachedInputTokens"], rows["2026-02-26"]["costs"]["total"]) == (100, 0.000102)
    assert (rows["2026-02-27"]["uncachedInputTokens"], rows["2026-02-27"]["cacheReadTokens"], rows["2026-02-27"]["costs"]) == (50, 150, None)
    assert rows["2026-02-27"]["unpricedModels"] == ["p/m"] and rows["2026-02-26"]["unpricedModels"] == []


def test_a_log_without_times_bills_on_its_sessions_start_day(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    (tmp_path / "p.toml").write_text('[models."p/m"]\ncurrency = "USD"\ninput = 1\noutput = 1\ncacheRead = 1\n')
    path = tmp_path / "fixture.session.v2.jsonl"
    path.write_text(fixture_form(RETRY_V2))  # createdAt 1790000000000: 2026-09-21
    doc = document(str(path), "--by", "day", "--tz", "UTC", "--prices", str(tmp_path / "p.toml"))
    assert [(r["key"], r["billedInputTokens"], r["costs"]["total"]) for r in doc["rows"]] == [("2026-09-21", 300, 0.000305)]
