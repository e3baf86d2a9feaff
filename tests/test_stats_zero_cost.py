"""A session whose calls billed nothing (#26): it costs ``0 USD`` where its routes are priced in USD, as
its turns and steps do, in the tables, TSV and JSON, in every rollup and in a folder's total; the
currency is null only where there is no single one (no call with a price, no call at all, or calls
priced in several). Calls that billed nothing never make a priced record's currencies differ.

The prices are a user file's flat rates, so every amount is computed here by hand.
"""

from __future__ import annotations

import datetime as dt
import json

import pytest

from conftest import invoke
from stats_logs import rollup_session, rollup_step

MOMENT = int(dt.datetime(2026, 9, 14, 12, tzinfo=dt.timezone.utc).timestamp() * 1000)
PRICES = (
    '[models."acme/usd-1"]\ncurrency = "USD"\ninput = 2\noutput = 4\n'
    '[models."acme/cny-1"]\ncurrency = "CNY"\ninput = 10\noutput = 20\n'
)
ZERO = {"input": 0, "cacheRead": 0, "cacheWrite": 0, "output": 0, "total": 0}


@pytest.fixture
def priced(tmp_path, monkeypatch):
    """A user price file (acme/usd-1 in USD, acme/cny-1 in CNY; acme/none-1 has no price)."""
    config = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    (config / "dshctl").mkdir(parents=True)
    (config / "dshctl" / "prices.toml").write_text(PRICES)
    folder = tmp_path / "logs"
    folder.mkdir()
    return folder


def _step(model, at, tokens=(0, 0, 0, 0)):
    return rollup_step(model=model, start=MOMENT + at, first=MOMENT + at + 100, end=MOMENT + at + 500, tokens=tokens)


def _session(session_id, steps, *, no_usage=()):
    """A one-turn v4 log of ``steps``; the messages of the steps numbered in ``no_usage`` carry no usage
    at all (no ``usage`` field, no usage chunk): dsh's meter counts nothing for them."""
    text = rollup_session(session_id, created=MOMENT, cwd=f"/{session_id}", turns=[steps])
    lines = []
    for line in text.splitlines():
        event = json.loads(line)
        if event.get("type") == "assistant/message" and event["data"]["step"] in no_usage:
            del event["data"]["usage"]
            event["data"]["stream"] = [c for c in event["data"]["stream"] if c.get("chunk", {}).get("type") != "usage"]
        lines.append(json.dumps(event, separators=(",", ":")))
    return "\n".join(lines) + "\n"


def _no_calls(session_id):
    """A turn whose step was cancelled before any model call: no settlement, so no call at all."""
    events = [
        {"type": "session", "version": 4, "id": session_id, "createdAt": MOMENT, "cwd": f"/{session_id}", "isSeeded": False, "delegationDepth": 0},
        {"type": "turn/start", "seq": 0, "time": MOMENT, "data": {"turn": 1}},
        {"type": "step/start", "seq": 1, "time": MOMENT, "data": {"turn": 1, "step": 1}},
        {"type": "user/message", "seq": 2, "time": MOMENT, "data": {"content": [{"type": "text", "text": "go"}], "source": {"kind": "user"}, "id": "u1"}, "surfaceOp": "append"},
        {"type": "step/end", "seq": 3, "time": MOMENT + 10, "data": {"turn": 1, "step": 1}},
        {"type": "turn/end", "seq": 4, "time": MOMENT + 11, "data": {"turn": 1, "reason": {"kind": "aborted", "reason": {"kind": "user"}}}},
    ]
    return "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in events)


LOGS = {
    # a call without usage and a call with usage of 0 tokens, both on a USD route: 0 USD
    "free": _session("free", [_step("acme/usd-1", 0), _step("acme/usd-1", 1000)], no_usage={1}),
    # 1,000 in × 2/M + 500 out × 4/M = 0.002 + 0.002 = 0.004 USD; a CNY call without usage changes nothing
    "paid": _session("paid", [_step("acme/usd-1", 0, (1000, 500, 0, 0)), _step("acme/cny-1", 1000)], no_usage={2}),
    # nothing billed, in two currencies: 0, no single currency
    "mixed": _session("mixed", [_step("acme/usd-1", 0), _step("acme/cny-1", 1000)], no_usage={1, 2}),
    # nothing billed on a route without a price: 0, no currency (and no note: no tokens lack a price)
    "unpriced": _session("unpriced", [_step("acme/none-1", 0)], no_usage={1}),
    "nocalls": _no_calls("nocalls"),
}


def _write(folder, *names):
    for name in names:
        (folder / f"{name}.session.v4.jsonl").write_text(LOGS[name])
    return folder


def _json(*args):
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout), result.stderr


def _cost(currency, total=0, **buckets):
    return {**ZERO, **buckets, "total": total, "currency": currency}


@pytest.mark.parametrize(
    ("name", "currency"), [("free", "USD"), ("mixed", None), ("unpriced", None), ("nocalls", None)]
)
def test_a_session_that_billed_nothing_costs_0_in_its_routes_currency(priced, name, currency):
    log = str(_write(priced, name) / f"{name}.session.v4.jsonl")
    document, stderr = _json("stats", "--json", log)
    session = document["sessions"][0]
    assert session["costs"] == _cost(currency)
    assert document["aggregate"]["costs"] == _cost(currency)
    assert document["aggregate"]["costsByCurrency"] == ([_cost(currency)] if currency else [])
    assert "no price" not in stderr  # a route without a price but without tokens is no unknown cost
    turns, _ = _json("stats", "--by", "turn", "--json", log)
    assert [turn["costs"] for turn in turns["turns"]] == [_cost(currency)]
    table = invoke("stats", log).stdout
    figure = next(line for line in table.splitlines() if line.startswith("cost (estimate)"))
    assert figure.split()[2:] == (["0", currency] if currency else ["0"])
    tsv = invoke("stats", "--by", "turn", "--tsv", log).stdout.splitlines()
    header, row = tsv[0].split("\t"), tsv[1].split("\t")
    assert row[header.index("cost")] == "0" and row[header.index("currency")] == (currency or "")


def test_steps_of_a_session_that_billed_nothing_cost_0_in_their_own_routes_currency(priced):
    _write(priced, "free", "mixed")
    steps, _ = _json("stats", "--by", "step", "--json", str(priced / "free.session.v4.jsonl"))
    assert [step["costs"] for step in steps["steps"]] == [_cost("USD"), _cost("USD")]
    # a session priced in no single currency: each step's own call names its currency
    steps, _ = _json("stats", "--by", "step", "--json", str(priced / "mixed.session.v4.jsonl"))
    assert [step["costs"] for step in steps["steps"]] == [_cost("USD"), _cost("CNY")]
    plain = invoke("stats", "--by", "step", "--plain", str(priced / "free.session.v4.jsonl")).stdout
    header, *rows = [line for line in plain.splitlines() if line.strip()][1:]  # under the title
    at = header.index("cost USD")  # one currency: in the header, the amounts alone (a pipe as a terminal)
    assert sum(line[at:at + len("cost USD")].strip() == "0" for line in rows) == 2, plain


def test_a_call_that_billed_nothing_never_mixes_a_priced_sessions_currencies(priced):
    document, stderr = _json("stats", "--json", str(_write(priced, "paid") / "paid.session.v4.jsonl"))
    session = document["sessions"][0]
    assert session["costs"] == _cost("USD", 0.004, input=0.002, output=0.002)
    assert [m["costs"] for m in session["dshctl"]["models"]] == [_cost("CNY"), _cost("USD", 0.004, input=0.002, output=0.002)]
    assert document["aggregate"]["costsByCurrency"] == [_cost("USD", 0.004, input=0.002, output=0.002)]
    assert "never converted" not in stderr  # no note of several currencies


def test_rollups_and_folder_totals_of_sessions_that_billed_nothing(priced):
    _write(priced, *LOGS)
    paid = _cost("USD", 0.004, input=0.002, output=0.002)
    rows, _ = _json("stats", "--by", "model", "--json", str(priced))
    by_model = {row["key"]: row for row in rows["rows"]}
    assert (by_model["acme/usd-1"]["costs"], by_model["acme/usd-1"]["sessions"]) == (paid, 3)
    assert by_model["acme/cny-1"]["costs"] == _cost("CNY") and by_model["acme/cny-1"]["costsByCurrency"] == [_cost("CNY")]
    assert by_model["acme/none-1"]["costs"] == _cost(None) and by_model["acme/none-1"]["costsByCurrency"] == []
    assert by_model["acme/none-1"]["unpricedModels"] == []
    assert rows["total"]["costs"] == paid and rows["total"]["costsByCurrency"] == [paid]
    rows, _ = _json("stats", "--by", "project", "--json", str(priced))
    by_project = {row["key"]: row["costs"] for row in rows["rows"]}
    assert by_project == {"/free": _cost("USD"), "/paid": paid, "/mixed": _cost(None), "/unpriced": _cost(None), "/nocalls": _cost(None)}
    rows, _ = _json("stats", "--by", "day", "--tz", "UTC", "--json", str(priced))
    assert [(row["key"], row["sessions"], row["costs"]) for row in rows["rows"]] == [("2026-09-14", 5, paid)]
    tsv = invoke("stats", "--by", "project", "--tsv", str(priced)).stdout.splitlines()
    header = tsv[0].split("\t")
    cells = {line.split("\t")[0]: (line.split("\t")[header.index("cost")], line.split("\t")[header.index("currency")]) for line in tsv[1:]}
    assert cells == {"/free": ("0", "USD"), "/paid": ("0.004", "USD"), "/mixed": ("0", ""), "/unpriced": ("0", ""), "/nocalls": ("0", ""),
                     "total": ("0.004", "USD")}
    sessions = invoke("stats", "--tsv", str(priced)).stdout.splitlines()
    header = sessions[0].split("\t")
    cells = {line.split("\t")[0]: (line.split("\t")[header.index("cost")], line.split("\t")[header.index("currency")]) for line in sessions[1:]}
    assert cells == {"free": ("0", "USD"), "paid": ("0.004", "USD"), "mixed": ("0", ""), "unpriced": ("0", ""), "nocalls": ("0", "")}


@pytest.mark.parametrize(
    ("names", "currency"),
    [(("free", "unpriced", "nocalls"), "USD"), (("free", "mixed"), None), (("unpriced", "nocalls"), None)],
)
def test_a_folder_that_billed_nothing_totals_0_in_its_one_currency(priced, names, currency):
    document, _ = _json("stats", "--json", str(_write(priced, *names)))
    assert document["aggregate"]["costs"] == _cost(currency)
    rows, _ = _json("stats", "--by", "month", "--json", str(priced))
    assert rows["total"]["costs"] == _cost(currency) and [row["costs"] for row in rows["rows"]] == [_cost(currency)]
    table = invoke("stats", str(priced)).stdout
    figure = next(line for line in table.splitlines() if line.startswith("cost (estimate)"))
    assert figure.split()[2:] == (["0", currency] if currency else ["0"])


def test_calls_that_billed_nothing_add_and_take_away_like_any_charge():
    """A fork child's costs after its cut are its tally less the inherited one: free calls count per
    currency, so they are taken away exactly, and a copy or a merge keeps them."""
    from dshctl.stats.costs import CostTally

    parent = CostTally()
    parent.add(("USD", (0, 0, 0, 0)), 0)
    parent.add((None, "no price"), 0)  # no tokens without a price: nothing, not even a reason
    assert (parent.free, parent.unpriced, parent.reason) == ({"USD": 1}, 0, None)
    child = parent.copy()
    child.add(("CNY", (0, 0, 0, 0)), 0)
    assert child.record().currency is None and child.records() == []  # two currencies, nothing billed
    child.merge(parent, -1)  # what the child added after its cut
    assert child.free == {"CNY": 1} and child.record().currency == "CNY"
    child.add(("CNY", (0, 0, 0, 0)), 0, -1)  # a replaced sample of 0 tokens taken away
    assert child.free == {} and child.record().currency is None
    paid = CostTally()
    paid.add(("USD", (2_000_000, 0, 0, 0)), 1000)
    paid.merge(child)
    paid.merge(parent)
    assert (paid.record().currency, paid.record().total, len(paid.records())) == ("USD", 0.002, 1)
