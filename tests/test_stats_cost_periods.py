"""Costs across fork cuts and periods (review of wave 1, items 11 and 16).

* A tally keeps a currency while any of its sums is not 0: what a child added after its cut can be a
  sample that replaced an inherited one (no call of its own, a non-zero amount).
* ``--by day|week|month`` (in ``--tz``): each model call's tokens and cost count in the period of the
  call's time, the time its price was chosen at; the rows add up to the total exactly.
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from dshctl.cli import app
from dshctl.stats.costs import CostTally

MILLION = 1_000_000
CREATED = 1_790_000_000_000  # 2026-09-21 14:13:20 UTC


def invoke(*args):
    return CliRunner().invoke(app, ["--no-color", "stats", *args], env={"NO_COLOR": "1"})


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
