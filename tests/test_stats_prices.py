"""Costs out of the box (#22): the built-in table from genai-prices, each call priced at its own minute.

* The committed table is what ``python -m dshctl.stats.prices_generate`` makes from the installed
  genai-prices (a test dependency, pinned).
* For each built-in DeepSeek model, over a grid of usages × call times around every dated change and
  peak boundary (a minute either side), dshctl's charge equals genai-prices' ``calc_price`` wherever
  genai-prices is exact, and DeepSeek's published rule (computed here by hand) everywhere.
* Crafted sessions: calls straddling a peak boundary and a price change; a user file overriding one
  model; an unknown route; malformed user files; mixed currencies; ``dshctl prices``.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from decimal import Decimal
from zoneinfo import ZoneInfo

import pytest

from dshctl.options import StatsOptions
from dshctl.stats import log_stats
from dshctl.stats import prices as price_module
from dshctl.stats.prices import Pricer, load_prices, read_price_file

from conftest import SAMPLES as SAMPLES_DIR, invoke, sample, samples
from stats_logs import rollup_session, rollup_step

genai_prices = pytest.importorskip("genai_prices", reason="genai-prices is a test dependency: pip install -e '.[test]'")

UTC = dt.timezone.utc
BEIJING = ZoneInfo("Asia/Shanghai")
PEAK_BILLING = dt.datetime(2026, 8, 16, 16, 0, tzinfo=UTC)  # DeepSeek's notice: 00:00 on 17 August, Beijing
GENAI_PEAK_DATE = dt.datetime(2026, 8, 17, tzinfo=UTC)  # genai-prices switches on the UTC date
WEEKDAYS_ONLY = dt.datetime(2026, 8, 22, 16, 0, tzinfo=UTC)  # 2026-08-23 00:00 Beijing: weekends off-peak
V41_FLASH = dt.datetime(2026, 9, 10, tzinfo=UTC)
MODELS = ("deepseek-v4-flash", "deepseek-v4-pro", "deepseek-flash")
ROUTES = ("deepseek-official", "deepseek", "deepseek-messages")


def _ms(moment: dt.datetime) -> int:
    return int(moment.timestamp() * 1000)


# -- the table is generated ----------------------------------------------------------------------------


def test_the_builtin_table_is_the_generators_output_from_the_installed_genai_prices():
    from dshctl.stats import prices_generate

    assert prices_generate.generate() == price_module.BUILTIN.read_text(encoding="utf-8")
    table = read_price_file(price_module.BUILTIN, name="built-in")
    assert table.info[0].source == "genai-prices" and table.info[0].version == genai_prices.__version__


def test_the_pre_read_table_is_prices_toml():
    """``prices_builtin.py`` (what ``stats`` loads) is generated from prices.toml, the one source: the
    same document as tomllib reads, the generator's text, and the same table."""
    import tomllib

    from dshctl.stats import prices_builtin, prices_generate

    text = price_module.BUILTIN.read_text(encoding="utf-8")
    assert prices_builtin.DOCUMENT == tomllib.loads(text)
    assert prices_generate.PRE_READ.read_text(encoding="utf-8") == prices_generate.pre_read(text)
    pre_read, parsed = price_module.builtin_prices(), read_price_file(price_module.BUILTIN, name="built-in")
    assert (pre_read.models, pre_read.providers, pre_read.aliases, pre_read.info) == (parsed.models, parsed.providers, parsed.aliases, parsed.info)


def test_a_builtin_table_elsewhere_is_read_from_its_file(tmp_path, monkeypatch):
    other = tmp_path / "prices.toml"
    other.write_text(price_module.BUILTIN.read_text(encoding="utf-8").replace("0.66", "0.67"))
    monkeypatch.setattr(price_module, "BUILTIN", other)
    assert price_module.builtin_prices().info[0].path == str(other)
    assert "0.67" in repr(price_module.builtin_prices().models)


def test_the_generator_check_fails_on_a_stale_table(tmp_path):
    stale = tmp_path / "prices.toml"
    stale.write_text(price_module.BUILTIN.read_text(encoding="utf-8").replace("0.66", "0.67"))
    run = lambda *args: subprocess.run([sys.executable, "-m", "dshctl.stats.prices_generate", *args], capture_output=True, text=True)  # noqa: E731
    failed = run("--check", "--output", str(stale))
    assert failed.returncode == 1 and "differs" in failed.stderr
    assert run("--check").returncode == 0


# -- the grid against genai-prices ---------------------------------------------------------------------


def _boundaries() -> list[dt.datetime]:
    """Call times a minute either side of every change: dated prices, the start of peak billing, the
    weekend rule, each peak window's edges on a weekday and a weekend day, before and after."""
    moments = [PEAK_BILLING, GENAI_PEAK_DATE, WEEKDAYS_ONLY, V41_FLASH]
    days = [dt.date(2026, 8, 10), dt.date(2026, 8, 17), dt.date(2026, 8, 21), dt.date(2026, 8, 22), dt.date(2026, 8, 23),
            dt.date(2026, 8, 24), dt.date(2026, 9, 9), dt.date(2026, 9, 10), dt.date(2026, 9, 12), dt.date(2026, 9, 13), dt.date(2026, 9, 14)]
    for day in days:
        for hour in (0, 1, 4, 6, 10, 12, 16):  # UTC: the windows are 01-04 and 06-10
            moments.append(dt.datetime(day.year, day.month, day.day, hour, tzinfo=UTC))
    out = []
    for moment in moments:
        out += [moment - dt.timedelta(minutes=1), moment, moment + dt.timedelta(minutes=1)]
    return sorted(set(out))


USAGES = [  # (uncached input, output, cache read, cache write): multiples of 1000 keep every amount exact to the nano
    (1000, 0, 0, 0),
    (0, 1000, 0, 0),
    (0, 0, 1000, 0),
    (0, 0, 0, 1000),
    (123_000, 4_000, 987_000, 0),
    (2_000_000, 384_000, 31_000_000, 5_000),
]


def _genai_base(model: str, moment: dt.datetime) -> tuple:
    """genai-prices' off-peak rates at a time, from its own dated entries (the unconstrained first price
    and the start-date ones), as (input, output, cache read, cache write) per million."""
    from genai_prices.data import providers
    from genai_prices.types import StartDateConstraint

    info = next(m for m in next(p for p in providers if p.id == "deepseek").models if m.id == model)
    prices = info.prices if isinstance(info.prices, list) else None
    if prices is None:
        chosen = info.prices
    else:
        chosen = prices[0].prices
        for conditional in prices:
            constraint = conditional.constraint
            if isinstance(constraint, StartDateConstraint):
                start = dt.datetime.combine(constraint.start_date, dt.time(0), UTC)
                if start == GENAI_PEAK_DATE:
                    start = PEAK_BILLING  # DeepSeek's own switch time (documented exception)
                if moment >= start:
                    chosen = conditional.prices
    write = chosen.cache_write_mtok if chosen.cache_write_mtok is not None else chosen.input_mtok
    return chosen.input_mtok, chosen.output_mtok, chosen.cache_read_mtok, write


def _deepseek_rule(model: str, moment: dt.datetime, usage: tuple) -> Decimal:
    """DeepSeek's published rule by hand: peak 09:00-12:00 and 14:00-18:00 Beijing time, Monday to
    Friday (every day before the weekend rule), from the start of peak billing, at twice off-peak."""
    local = moment.astimezone(BEIJING)
    in_hours = 9 <= local.hour < 12 or 14 <= local.hour < 18
    weekday_ok = moment < WEEKDAYS_ONLY or local.isoweekday() <= 5
    peak = moment >= PEAK_BILLING and in_hours and weekday_ok
    rates = _genai_base(model, moment)
    factor = 2 if peak else 1
    return sum((Decimal(count) * rate * factor / 10**6 for count, rate in zip(usage, rates)), Decimal(0))


def _genai_is_exact(model: str, moment: dt.datetime) -> bool:
    """Where genai-prices' own comments do not call its answer approximate (nor our documented exceptions
    differ from it): its daily UTC windows are applied at every date and on weekends, V4 Flash's peak
    rate before V4.1 is the later one, and it switches on the UTC date."""
    utc_window = 1 <= moment.hour < 4 or 6 <= moment.hour < 10
    if PEAK_BILLING <= moment < GENAI_PEAK_DATE:
        return False
    if utc_window and moment < PEAK_BILLING:
        return False
    if utc_window and moment >= WEEKDAYS_ONLY and moment.astimezone(BEIJING).isoweekday() > 5:
        return False
    if utc_window and model == "deepseek-v4-flash" and moment < V41_FLASH:
        return False
    return True


def _nanos(amount: Decimal) -> int:
    assert amount * 10**9 == int(amount * 10**9), "the grid keeps amounts exact to the nano"
    return int(amount * 10**9)


@pytest.mark.parametrize("model", MODELS)
def test_each_call_costs_what_genai_prices_says_wherever_it_is_exact(model):
    from genai_prices import Usage, calc_price

    pricer = Pricer(load_prices())
    compared = 0
    for moment in _boundaries():
        for usage in USAGES:
            uncached, output, read, write = usage
            currency, nanos = pricer.charge(f"deepseek-official/{model}", _ms(moment), usage)
            assert currency == "USD"
            ours = sum(nanos)
            assert ours == _nanos(_deepseek_rule(model, moment, usage)), (moment, usage)
            if _genai_is_exact(model, moment):
                theirs = calc_price(
                    Usage(input_tokens=uncached + read + write, cache_read_tokens=read, cache_write_tokens=write, output_tokens=output),
                    model, provider_id="deepseek", genai_request_timestamp=moment,
                ).total_price
                assert ours == _nanos(theirs), (moment, usage)
                compared += 1
    assert compared > 200  # the grid really reaches genai-prices


@pytest.mark.parametrize("route", ROUTES)
@pytest.mark.parametrize("alias", ["deepseek-chat", "deepseek-reasoner", "deepseek-v4-flash-vision-exp"])
def test_routes_and_aliases_bill_as_deepseek_v4_flash(route, alias):
    pricer = Pricer(load_prices())
    for moment in _boundaries():
        usage = (123_000, 4_000, 987_000, 0)
        assert pricer.charge(f"{route}/{alias}", _ms(moment), usage) == pricer.charge("deepseek-official/deepseek-v4-flash", _ms(moment), usage)


def test_amounts_round_to_the_nano_half_to_even():
    pricer = Pricer(load_prices())
    moment = _ms(dt.datetime(2026, 9, 12, 2, tzinfo=UTC))  # Saturday: V4.1 Flash off-peak, cache read 0.003
    # 1 token × 0.003 per million = 3 nano; 0.0028 (pre-August) × 1 = 2.8 → 3; × 5 = 14 exactly
    assert pricer.charge("deepseek-official/deepseek-v4-flash", moment, (0, 0, 1, 0)) == ("USD", (0, 0, 3, 0))
    early = _ms(dt.datetime(2026, 8, 10, 12, tzinfo=UTC))
    assert pricer.charge("deepseek-official/deepseek-v4-flash", early, (0, 0, 1, 0)) == ("USD", (0, 0, 3, 0))
    assert pricer.charge("deepseek-official/deepseek-v4-flash", early, (0, 0, 5, 0)) == ("USD", (0, 0, 14, 0))
    # 0.003625 (V4 Pro, flat) × 2 = 7.25 → 7; × 6 = 21.75 → 22
    assert pricer.charge("deepseek-official/deepseek-v4-pro", early, (0, 0, 2, 0))[1][2] == 7
    assert pricer.charge("deepseek-official/deepseek-v4-pro", early, (0, 0, 6, 0))[1][2] == 22


# -- crafted sessions ------------------------------------------------------------------------------------


def _write(tmp_path, name, text):
    path = tmp_path / f"{name}.session.v4.jsonl"
    path.write_text(text)
    return path


@pytest.fixture()
def config(tmp_path, monkeypatch):
    """An empty user configuration directory (never the machine's own price file)."""
    folder = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder))
    return folder / "dshctl"


STRADDLE = [  # (call time, usage): V4 Flash, across the V4.1 price change and a peak boundary
    (dt.datetime(2026, 9, 9, 23, 58, tzinfo=UTC), (100_000, 2_000, 50_000, 0)),  # V4 off-peak (07:58 Beijing)
    (dt.datetime(2026, 9, 10, 0, 58, tzinfo=UTC), (100_000, 2_000, 50_000, 0)),  # V4.1 off-peak (08:58)
    (dt.datetime(2026, 9, 10, 1, 2, tzinfo=UTC), (100_000, 2_000, 50_000, 0)),  # V4.1 peak (09:02, Thursday)
]


def _straddling_session() -> str:
    created = _ms(STRADDLE[0][0]) - 60_000
    steps = [rollup_step(model="deepseek-official/deepseek-v4-flash", start=_ms(t), first=_ms(t) + 300, end=_ms(t) + 1000, tokens=u) for t, u in STRADDLE]
    return rollup_session("straddle", created=created, turns=[steps[:2], steps[2:]])


def _hand(moment, usage) -> Decimal:
    uncached, output, read, write = usage
    return _deepseek_rule("deepseek-v4-flash", moment, (uncached, output, read, write))


def test_a_session_straddling_a_price_change_and_a_peak_boundary_is_priced_call_by_call(tmp_path, config):
    path = _write(tmp_path, "straddle", _straddling_session())
    expected = [_hand(t, u) for t, u in STRADDLE]
    # 100k in, 50k read, 2k out: V4 off-peak 0.022 + 0.00035 + 0.00132; V4.1 off-peak 0.015 + 0.00015 + 0.0012; peak twice that
    assert expected == [Decimal("0.02367"), Decimal("0.01635"), Decimal("0.03270")]
    result = log_stats(path, StatsOptions(by="step"), prices=load_prices())
    assert [step.costs.total for step in result.steps] == [float(e) for e in expected]
    assert result.session.costs.total == float(sum(expected)) == 0.07272
    assert result.session.dshctl.models[0].costs.total == 0.07272
    turns = log_stats(path, StatsOptions(by="turn"), prices=load_prices()).turns
    assert [turn.costs.total for turn in turns] == [float(expected[0] + expected[1]), float(expected[2])]
    days = json.loads(invoke("stats", "--by", "day", "--tz", "UTC", "--json", str(path)).stdout)
    # each call's cost on the day it was made: the first before midnight UTC, the others after
    assert [(row["key"], row["costs"]["total"]) for row in days["rows"]] == [("2026-09-09", 0.02367), ("2026-09-10", 0.04905)]
    assert days["total"]["costs"]["total"] == 0.07272
    beijing = json.loads(invoke("stats", "--by", "day", "--tz", "Asia/Shanghai", "--json", str(path)).stdout)
    assert [(row["key"], row["costs"]["total"]) for row in beijing["rows"]] == [("2026-09-10", 0.07272)]  # 07:58 to 09:02
    assert days["costBasis"]["tables"][0]["version"] == genai_prices.__version__


def test_a_retried_call_is_priced_when_it_was_retried(tmp_path, config):
    """A retry after llm/retry-started is a new call, made at that time: before a peak window the first
    attempt is off-peak, the retry inside the window is at the peak rate."""
    start = _ms(dt.datetime(2026, 9, 14, 0, 59, tzinfo=UTC))  # Monday 08:59 Beijing
    retry_at = start + 2 * 60_000  # 09:01
    usage = {"inputTokens": 1000, "outputTokens": 1000}
    lines = [
        {"type": "session", "version": 4, "id": "r", "createdAt": start - 1000, "cwd": "/w", "isSeeded": False, "delegationDepth": 0},
        {"type": "turn/start", "seq": 0, "time": start, "data": {"turn": 1}},
        {"type": "step/start", "seq": 1, "time": start, "data": {"turn": 1, "step": 1}},
        {"type": "request/header", "seq": 2, "time": start, "data": {"header": {"config": {"provider": "deepseek-official", "model": "deepseek-v4-flash"}}, "reason": "initial"}},
        {"type": "assistant/attempt", "seq": 3, "time": start + 500, "data": {"turn": 1, "step": 1, "stream": [
            {"type": "chunk", "time": start + 400, "chunk": {"type": "usage", "usage": usage}},
            {"type": "chunk", "time": start + 500, "chunk": {"type": "finish", "reason": {"kind": "error", "failure": {"message": "x", "code": "SERVER"}}}},
        ]}},
        {"type": "llm/retry", "seq": 4, "time": start + 600, "data": {"turn": 1, "step": 1, "retryId": "q", "provider": "deepseek-official", "mode": "always", "policyKey": "k", "retry": 1, "delayMs": 1, "failure": {"message": "x", "code": "SERVER"}}},
        {"type": "llm/retry-started", "seq": 5, "time": retry_at, "data": {"turn": 1, "step": 1, "retryId": "q", "retry": 1}},
        {"type": "assistant/message", "seq": 6, "time": retry_at + 900, "data": {"turn": 1, "step": 1, "usage": usage, "message": {
            "role": "assistant", "id": "a", "content": [{"type": "text", "text": "ok"}], "source": {"kind": "model", "provider": "deepseek-official", "model": "deepseek-v4-flash"}},
            "stream": [{"type": "chunk", "time": retry_at + 900, "chunk": {"type": "usage", "usage": usage}}, {"type": "chunk", "time": retry_at + 900, "chunk": {"type": "finish", "reason": {"kind": "stop"}}}]}},
        {"type": "step/end", "seq": 7, "time": retry_at + 1000, "data": {"turn": 1, "step": 1}},
        {"type": "turn/end", "seq": 8, "time": retry_at + 1000, "data": {"turn": 1, "reason": {"kind": "completed"}}},
    ]
    path = tmp_path / "retry.session.v4.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    session = log_stats(path, prices=load_prices()).session
    # 1000 in + 1000 out: off-peak 0.15 + 0.6 per million = 0.00075; the retry at peak 0.0015
    assert session.uncached_input_tokens == 2000 and session.costs.total == 0.00225


def test_a_user_file_overrides_one_model_and_keeps_the_others(tmp_path, config):
    moment = dt.datetime(2026, 9, 14, 12, tzinfo=UTC)  # Monday 20:00 Beijing: off-peak
    steps = [
        rollup_step(model="deepseek-official/deepseek-v4-flash", start=_ms(moment), first=_ms(moment) + 100, end=_ms(moment) + 500, tokens=(1_000_000, 0, 0, 0)),
        rollup_step(model="deepseek-official/deepseek-v4-pro", start=_ms(moment) + 1000, first=_ms(moment) + 1100, end=_ms(moment) + 1500, tokens=(1_000_000, 0, 0, 0)),
    ]
    path = _write(tmp_path, "two", rollup_session("two", created=_ms(moment), turns=[steps]))
    config.mkdir(parents=True)
    (config / "prices.toml").write_text('[models."deepseek/deepseek-v4-pro"]\ncurrency = "USD"\ninput = 5\noutput = 10\n')
    rows = {row["key"]: row for row in json.loads(invoke("stats", "--by", "model", "--json", str(path)).stdout)["rows"]}
    assert rows["deepseek-official/deepseek-v4-pro"]["costs"]["total"] == 5  # the user's flat price
    assert rows["deepseek-official/deepseek-v4-flash"]["costs"]["total"] == 0.15  # the built-in V4.1 off-peak
    listed = json.loads(invoke("prices", "--json", str(path)).stdout)
    assert [t["name"] for t in listed["tables"]] == ["built-in", "user"]
    assert listed["prices"]["deepseek/deepseek-v4-pro"][0]["input"] == 5


def test_an_unknown_route_has_no_cost_and_one_note(tmp_path, config):
    moment = _ms(dt.datetime(2026, 9, 14, 12, tzinfo=UTC))
    steps = [rollup_step(model="acme/rocket-1", start=moment + i * 1000, first=moment + i * 1000 + 100, end=moment + i * 1000 + 500, tokens=(10, 1, 0, 0)) for i in range(3)]
    path = _write(tmp_path, "acme", rollup_session("acme", created=moment, turns=[steps]))
    result = invoke("stats", "--json", str(path))
    assert result.exit_code == 0
    session = json.loads(result.stdout)["sessions"][0]
    assert session["costs"] is None and session["dshctl"]["models"][0]["costs"] is None
    assert result.stderr.count("no price for model acme/rocket-1") == 1
    # worded as every other note about figures: "note:" where a warning says "warning:"
    assert "dshctl: note: no price for model acme/rocket-1: its costs are null" in result.stderr.splitlines()[0]
    assert "rocket" not in invoke("stats", "--quiet", str(path)).stderr  # --quiet: no notes
    assert "no price (no cost)" in invoke("prices", str(path)).stdout


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[models.x\n", "not TOML"),
        ('[models."a/b"]\ncurrency = "USD"\ninput = 1\n', "missing 'output'"),
        ('[models."a/b"]\ncurrency = "USD"\ninput = 1\noutput = 1\nwindows = [{ hours = ["09:00-25:00"], input = 2 }]\n', "hours '09:00-25:00'"),
        ('[models."a/b"]\ncurrency = "USD"\ninput = 1\noutput = 1\nwindows = [{ zone = "Mars/Olympus", hours = ["09:00-10:00"], input = 2 }]\n', "unknown time zone 'Mars/Olympus'"),
        ('[models."a/b"]\ncurrency = "USD"\ninput = 1\noutput = 1\nwindows = [{ days = ["someday"], hours = ["09:00-10:00"], input = 2 }]\n', "'days' must be"),
        ('[models."a/b"]\ncurrency = "USD"\ninput = 1\noutput = 1\nwindows = [{ hours = ["09:00-10:00"] }]\n', "no rate"),
        ('[providers]\n"deepseek-official" = 3\n', "must be a non-empty string"),
        ('[tables]\n', "unknown top-level key 'tables'"),
    ],
)
def test_a_malformed_user_file_is_status_2_naming_the_file(tmp_path, config, text, message):
    config.mkdir(parents=True)
    user = config / "prices.toml"
    user.write_text(text)
    log = _write(tmp_path, "s", _straddling_session())
    for command in (["stats", str(log)], ["prices"]):
        result = invoke(*command)
        assert result.exit_code == 2, result.output
        assert f"price file {user}" in result.stderr and message in result.stderr
        assert "Traceback" not in result.stderr


def test_mixed_currencies_are_never_added(tmp_path, config):
    """A user prices V4 Pro in CNY: a session with Flash (USD) and Pro calls has no one cost; the rows
    give one cost per currency; and a history that changes currency splits a single model's cost too."""
    moment = dt.datetime(2026, 9, 14, 12, tzinfo=UTC)
    steps = [
        rollup_step(model="deepseek-official/deepseek-v4-flash", start=_ms(moment), first=_ms(moment) + 100, end=_ms(moment) + 500, tokens=(1_000_000, 0, 0, 0)),
        rollup_step(model="deepseek-official/deepseek-v4-pro", start=_ms(moment) + 1000, first=_ms(moment) + 1100, end=_ms(moment) + 1500, tokens=(1_000_000, 0, 0, 0)),
        rollup_step(model="deepseek-official/deepseek-v4-pro", start=_ms(moment) + 7_200_000, first=_ms(moment) + 7_200_100, end=_ms(moment) + 7_200_500, tokens=(1_000_000, 0, 0, 0)),
    ]
    path = _write(tmp_path, "mixed", rollup_session("mixed", created=_ms(moment), turns=[steps]))
    config.mkdir(parents=True)
    (config / "prices.toml").write_text(
        '[[models."deepseek/deepseek-v4-pro"]]\ncurrency = "CNY"\ninput = 4.5\noutput = 13.5\n'
        '[[models."deepseek/deepseek-v4-pro"]]\nsince = 2026-09-14T13:00:00Z\ncurrency = "EUR"\ninput = 0.5\noutput = 1\n'
    )
    result = invoke("stats", "--by", "day", "--json", "--tz", "UTC", str(path))
    doc = json.loads(result.stdout)
    assert doc["total"]["costs"] is None
    assert [(c["currency"], c["total"]) for c in doc["total"]["costsByCurrency"]] == [("CNY", 4.5), ("EUR", 0.5), ("USD", 0.15)]
    assert "never converted" in result.stderr
    session = json.loads(invoke("stats", "--json", str(path)).stdout)["sessions"][0]
    assert session["costs"] is None
    pro = {row["key"]: row for row in json.loads(invoke("stats", "--by", "model", "--json", str(path)).stdout)["rows"]}["deepseek-official/deepseek-v4-pro"]
    assert pro["costs"] is None and [(c["currency"], c["total"]) for c in pro["costsByCurrency"]] == [("CNY", 4.5), ("EUR", 0.5)]
    assert pro["unpricedModels"] == []
    table = invoke("stats", "--by", "day", "--tz", "UTC", str(path)).stdout
    assert "4.50CNY+0.5000EUR+0.1500USD" in table  # plain: a figure holds no space


def test_costs_are_on_by_default_labelled_and_hidden_by_no_cost(tmp_path, config):
    path = _write(tmp_path, "s", _straddling_session())
    table = invoke("stats", str(path)).stdout
    assert "cost (estimate)" in table and "0.0727 USD" in table
    assert f"cost: an estimate at list prices (built-in: genai-prices {genai_prices.__version__}), not a bill" in table
    for by in ("session", "turn", "step", "day", "model"):
        shown = invoke("stats", "--by", by, str(path)).stdout
        hidden = invoke("stats", "--by", by, "--no-cost", str(path)).stdout
        assert "USD" in shown and "USD" not in hidden and "estimate" not in hidden, by
    assert "costs" not in json.loads(invoke("stats", "--json", "--no-cost", str(path)).stdout)["sessions"][0]


def test_dshctl_prices_lists_the_tables_and_the_entries_of_the_models_found(tmp_path, config):
    path = _write(tmp_path, "s", _straddling_session())
    result = invoke("prices", str(path))
    assert result.exit_code == 0
    out = result.stdout
    assert f"genai-prices {genai_prices.__version__}" in out and "deepseek-official/deepseek-v4-flash" in out
    assert "2026-08-16T16:00Z" in out and "Asia/Shanghai" in out and "deepseek/deepseek-v4-pro" not in out.split("prices per million")[1]
    everything = json.loads(invoke("prices", "--json").stdout)
    assert everything["routes"] is None and set(everything["prices"]) == {f"deepseek/{m}" for m in MODELS}
    assert everything["providers"] == {route: "deepseek" for route in ROUTES}
    found = json.loads(invoke("prices", "--json", str(path)).stdout)
    assert found["routes"] == [{"route": "deepseek-official/deepseek-v4-flash", "sessions": 1, "priceKey": "deepseek/deepseek-v4-flash"}]
    window = found["prices"]["deepseek/deepseek-v4-flash"][-1]["windows"][0]
    assert window == {"zone": "Asia/Shanghai", "days": ["mon", "tue", "wed", "thu", "fri"], "hours": ["09:00-12:00", "14:00-18:00"],
                      "input": 0.3, "cacheRead": 0.006, "cacheWrite": 0.3, "output": 1.2, "note": "peak hours: twice the off-peak rate (DeepSeek)"}


def test_every_deepseek_official_sample_session_has_a_cost(config):
    for path in samples("*.jsonl*"):
        session = log_stats(path, prices=load_prices()).session
        routes = {model.model for model in session.dshctl.models}
        if routes <= {"deepseek-official/deepseek-v4-flash"} and session.billed_input_tokens:
            assert session.costs is not None and session.costs.total > 0 and session.costs.currency == "USD", path.name


def test_a_window_wrapping_midnight_and_a_utc_window(tmp_path):
    table = tmp_path / "night.toml"
    table.write_text(
        '[models."n/m"]\ncurrency = "EUR"\ninput = 1\noutput = 1\n'
        'windows = [{ hours = ["22:00-02:00"], input = 0.5, output = 0.5 }, { zone = "Europe/Berlin", days = ["sun"], hours = ["00:00-24:00"], output = 0 }]\n'
    )
    pricer = Pricer(read_price_file(table))
    at = lambda text: _ms(dt.datetime.fromisoformat(text))  # noqa: E731
    assert pricer.charge("n/m", at("2026-10-01T21:59:00+00:00"), (1_000_000, 0, 0, 0)) == ("EUR", (10**9, 0, 0, 0))
    assert pricer.charge("n/m", at("2026-10-01T22:00:00+00:00"), (1_000_000, 0, 0, 0)) == ("EUR", (5 * 10**8, 0, 0, 0))
    assert pricer.charge("n/m", at("2026-10-02T01:59:00+00:00"), (1_000_000, 0, 0, 0)) == ("EUR", (5 * 10**8, 0, 0, 0))
    # Sunday in Berlin (summer time, UTC+2) begins Saturday 22:00 UTC; the first window matches first
    assert pricer.charge("n/m", at("2026-10-03T22:30:00+00:00"), (0, 1_000_000, 0, 0)) == ("EUR", (0, 5 * 10**8, 0, 0))
    assert pricer.charge("n/m", at("2026-10-04T12:00:00+00:00"), (1_000_000, 1_000_000, 0, 0)) == ("EUR", (10**9, 0, 0, 0))
    assert pricer.charge("n/m", None, (1, 0, 0, 0)) == (None, "no time to choose between its windowed prices")


# -- review of wave 1 (items 4, 8, 25) -----------------------------------------------------------------


def test_a_price_file_that_is_not_utf8_is_status_2_naming_the_file(tmp_path, config):
    bad = tmp_path / "p.toml"
    bad.write_bytes(b"\xff\xfe")
    log = _write(tmp_path, "s", _straddling_session())
    for command in (["stats", str(log), "--prices", str(bad)], ["prices", "--prices", str(bad)]):
        result = invoke(*command)
        assert result.exit_code == 2, result.output
        assert f"price file {bad}: not UTF-8 text" in result.stderr and "Traceback" not in result.stderr
    config.mkdir(parents=True)
    (config / "prices.toml").write_bytes(b'[models."a/b"]\ncurrency = "\xe9"\n')  # Latin-1, not UTF-8
    result = invoke("stats", str(log))
    assert result.exit_code == 2 and f"price file {config / 'prices.toml'}: not UTF-8 text" in result.stderr


@pytest.mark.parametrize("hours", ["09:00-12:00\n", "\u0660\u0669:00-12:00", "09:00-1\uff12:00", "9:00-12:00"])
def test_hours_are_two_ascii_digits_each_and_nothing_after(tmp_path, hours):
    table = tmp_path / "p.toml"
    table.write_text('[models."a/b"]\ncurrency = "USD"\ninput = 1\noutput = 1\n'
                     f'windows = [{{ hours = [{json.dumps(hours)}], input = 2 }}]\n', encoding="utf-8")
    with pytest.raises(price_module.UsageError, match="is not a range"):
        read_price_file(table)


def _flat(since: str, rate: int) -> str:
    return f'[[models."a/b"]]\nsince = {since}\ncurrency = "USD"\ninput = {rate}\noutput = {rate}\n'


def test_an_entry_starting_within_a_minute_prices_the_calls_after_it(tmp_path):
    """The review's reproducer: an entry from 14:13:35 prices a call at 14:13:40, even after a call at
    14:13:30 of the same minute was priced at the earlier entry."""
    table = tmp_path / "p.toml"
    table.write_text('[[models."a/b"]]\ncurrency = "USD"\ninput = 1\noutput = 1\n' + _flat("2026-09-21T14:13:35Z", 1000))
    pricer = Pricer(read_price_file(table))
    at = lambda text: _ms(dt.datetime.fromisoformat(text))  # noqa: E731
    million = (1_000_000, 0, 0, 0)
    assert pricer.charge("a/b", at("2026-09-21T14:13:30+00:00"), million) == ("USD", (10**9, 0, 0, 0))
    assert pricer.charge("a/b", at("2026-09-21T14:13:40+00:00"), million) == ("USD", (1000 * 10**9, 0, 0, 0))
    assert pricer.charge("a/b", at("2026-09-21T14:13:34.999+00:00"), million) == ("USD", (10**9, 0, 0, 0))
    assert pricer.charge("a/b", at("2026-09-21T14:13:35+00:00"), million) == ("USD", (1000 * 10**9, 0, 0, 0))


def test_a_since_between_two_milliseconds_starts_at_the_next_one(tmp_path):
    table = tmp_path / "p.toml"
    table.write_text('[[models."a/b"]]\ncurrency = "USD"\ninput = 1\noutput = 1\n' + _flat("2026-09-21T14:13:35.0004Z", 7))
    entry = read_price_file(table).models["a/b"][1]
    start = _ms(dt.datetime(2026, 9, 21, 14, 13, 35, tzinfo=UTC))
    assert entry.since_ms == start + 1  # a call timed at ...35.000 came before it
    pricer = Pricer(read_price_file(table))
    assert pricer.charge("a/b", start, (1_000_000, 0, 0, 0))[1][0] == 10**9
    assert pricer.charge("a/b", start + 1, (1_000_000, 0, 0, 0))[1][0] == 7 * 10**9
    assert price_module.since_text(entry.since_ms) == "2026-09-21T14:13:35.001Z"
    assert price_module.since_text(start) == "2026-09-21T14:13:35Z"
    assert price_module.since_text(start - 35_000) == "2026-09-21T14:13Z"


def test_the_stats_reproducer_prices_turn_3_at_the_new_rate(tmp_path, config):
    table = tmp_path / "p2.toml"
    table.write_text('[[models."deepseek/deepseek-v4-flash"]]\ncurrency = "USD"\ninput = 1\ncacheRead = 1\ncacheWrite = 1\noutput = 1\n'
                     '[[models."deepseek/deepseek-v4-flash"]]\nsince = 2026-09-21T14:13:35Z\ncurrency = "USD"\n'
                     'input = 1000\ncacheRead = 1000\ncacheWrite = 1000\noutput = 1000\n')
    tour = sample("tour.session.v4.jsonl")
    steps = json.loads(invoke("stats", str(tour), "--by", "step", "--prices", str(table), "--json").stdout)["steps"]
    turn3 = next(step for step in steps if (step["turn"], step["step"]) == (3, 1))
    assert turn3["costs"]["total"] == 19.4  # 19,400 tokens at 1000 per million (at 1 per million: 0.0194)


def test_a_window_in_a_zone_whose_offset_is_not_whole_minutes(tmp_path):
    """Monrovia kept UTC-0:44:30 until 1972: 09:44:00 UTC is 08:59:30 there, 09:44:40 UTC is 09:00:10 —
    one UTC minute on either side of the window's start."""
    table = tmp_path / "p.toml"
    table.write_text('[models."a/b"]\ncurrency = "USD"\ninput = 1\noutput = 1\n'
                     'windows = [{ zone = "Africa/Monrovia", hours = ["09:00-10:00"], input = 2 }]\n')
    pricer = Pricer(read_price_file(table))
    before = _ms(dt.datetime(1971, 6, 1, 9, 44, 0, tzinfo=UTC))
    assert pricer.charge("a/b", before, (1_000_000, 0, 0, 0))[1][0] == 10**9
    assert pricer.charge("a/b", before + 40_000, (1_000_000, 0, 0, 0))[1][0] == 2 * 10**9
    assert pricer.charge("a/b", before + 20_000, (1_000_000, 0, 0, 0))[1][0] == 10**9


def test_dshctl_prices_shows_a_since_to_the_millisecond(tmp_path, config):
    table = tmp_path / "p.toml"
    table.write_text(_flat("2026-09-21T14:13:35.25Z", 7) + _flat("2026-09-22T00:00:00Z", 8))
    listed = json.loads(invoke("prices", "--json", "--prices", str(table)).stdout)["prices"]["a/b"]
    assert [entry["since"] for entry in listed] == ["2026-09-21T14:13:35.250Z", "2026-09-22T00:00:00Z"]
    assert "2026-09-21T14:13:35.250Z" in invoke("prices", "--prices", str(table), env={"COLUMNS": "200"}).stdout



def test_a_session_pricer_falls_back_only_to_a_real_creation_time():
    """The header's createdAt stands in for a call without time only where it says when the session was
    created (options.window.created_ms, the one rule): not a bool, 0, a negative or an unsafe integer."""
    from dshctl.stats.prices import PriceTable, session_pricer

    table = PriceTable()
    assert session_pricer(table, 1_767_225_600_000).fallback_ms == 1_767_225_600_000
    for created in (True, 0, -1, 2**60, 1.5, None):
        assert session_pricer(table, created).fallback_ms is None, created


def test_a_step_without_usage_costs_0_in_its_sessions_currency(tmp_path):
    """A record without tokens costs nothing (dsh billed nothing), but it read ``0`` in no currency
    beside ``0.0023 USD``: a turn or step of a session priced in one currency costs 0 in it, in the
    table, in TSV and in JSON; with no single currency in the session it stays 0 with a null currency."""
    tour = sample("tour.session.v4.jsonl")
    steps = log_stats(tour, StatsOptions(by="step"), prices=load_prices()).steps
    assert steps[-1].output_tokens is None  # the interrupted step of turn 4 has no usage
    assert (steps[-1].costs.total, steps[-1].costs.currency) == (0, "USD")
    turns = log_stats(tour, StatsOptions(by="turn"), prices=load_prices()).turns
    assert (turns[-1].costs.total, turns[-1].costs.currency) == (0, "USD")
    document = json.loads(invoke("stats", "--by", "step", "--json", tour).stdout)
    assert document["steps"][-1]["costs"] == {"input": 0, "cacheRead": 0, "cacheWrite": 0, "output": 0, "total": 0,
                                              "currency": "USD"}
    table = invoke("stats", "--by", "step", tour).stdout.splitlines()
    assert next(line for line in table if line.rstrip().endswith("interrupted")).split()[-2:] == ["0", "interrupted"]
    assert next(line for line in table if line.startswith("turn")).split()[-3:] == ["cost", "USD", "finish"]  # its currency
    tsv = invoke("stats", "--by", "step", "--tsv", tour).stdout.splitlines()
    last = dict(zip(tsv[0].split("\t"), tsv[-1].split("\t")))  # TSV: no finish reason, interrupted a column of its own
    assert (last["cost"], last["currency"], last["finish"], last["interrupted"]) == ("0", "USD", "", "true")
    unpriced = tmp_path / "unpriced.session.v4.jsonl"
    unpriced.write_text((SAMPLES_DIR / "tour.session.v4.jsonl").read_text().replace("deepseek-official", "nowhere-route"))
    stats = log_stats(unpriced, StatsOptions(by="step"), prices=load_prices())
    assert stats.session.costs is None  # tokens without a price
    assert (stats.steps[-1].costs.total, stats.steps[-1].costs.currency) == (0, None)
