"""Generate dshctl's built-in price table (``dshctl/stats/prices.toml``) from the installed genai-prices,
and its pre-read form (``dshctl/stats/prices_builtin.py``: the TOML document as Python literals, which
loads from its bytecode in microseconds where parsing the TOML costs ~7 ms of every ``stats`` run).

    python -m dshctl.stats.prices_generate            # rewrite dshctl/stats/prices.toml and prices_builtin.py
    python -m dshctl.stats.prices_generate --check    # status 1 when a committed file differs

genai-prices (pydantic's maintained price database, ``pip install genai-prices``, a test dependency of
dshctl and never imported at run time) has DeepSeek's dated price changes and its peak windows. Its
entries carry one constraint each (a start date *or* a daily UTC window), so by its own comments some
prices are approximate; there the table follows DeepSeek's published rule instead, and says so:

* peak hours are 09:00-12:00 and 14:00-18:00 Beijing time (Asia/Shanghai; 01:00-04:00 and 06:00-10:00
  UTC), at twice the off-peak rate ("off-peak prices are half the peak prices",
  https://api-docs.deepseek.com/quick_start/pricing and /zh-cn/quick_start/pricing, as stored);
* Monday to Friday only: weekends are off-peak all day (the same pages) from 2026-08-23 00:00 Beijing
  time; before that the windows applied every day;
* no peak hours before peak/off-peak billing began, 2026-08-16 16:00 UTC (00:00 on 17 August, Beijing
  time): genai-prices applies its windows at every date and switches on the UTC date 2026-08-17;
* the peak rate of an entry is twice its own off-peak rate (genai-prices gives V4 Flash, 2026-08-17 to
  2026-09-10, the later V4.1 Flash peak rate).

Not modelled (DeepSeek's rule, not expressible by either table): Chinese public holidays on weekdays are
off-peak all day; the built-in table prices their peak hours at the peak rate (an upper bound).

Route mapping (dsh's ``provider/model`` routes; :meth:`dshctl.stats.prices.PriceTable.price_key`): dsh's
DeepSeek adapter routes — ``deepseek-official`` (the API-key route of dsh's ``llm-deepseek`` plugin),
``deepseek`` (that plugin's earlier route name) and ``deepseek-messages`` (DeepSeek's Anthropic-format
endpoint) — bill at DeepSeek's list prices, ``deepseek/<model>``. ``deepseek-account`` (dsh's built-in
DeepSeek-account route, billed through the account) and every other route have no built-in price.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import sys
from decimal import Decimal
from pathlib import Path

TARGET = Path(__file__).with_name("prices.toml")
PRE_READ = Path(__file__).with_name("prices_builtin.py")

PROVIDERS = {"deepseek-official": "deepseek", "deepseek": "deepseek", "deepseek-messages": "deepseek"}
"""dsh provider route → the price provider it bills as."""

MODELS = ("deepseek-flash", "deepseek-v4-flash", "deepseek-v4-pro")
"""genai-prices' ``deepseek`` models dsh routes to."""

ALIASES = {
    "deepseek/deepseek-chat": ("deepseek/deepseek-v4-flash", "DeepSeek: the non-thinking mode of deepseek-v4-flash (retired 2026-07-24 15:59 UTC); genai-prices still prices it as the old V3 model"),
    "deepseek/deepseek-reasoner": ("deepseek/deepseek-v4-flash", "DeepSeek: the thinking mode of deepseek-v4-flash (retired 2026-07-24 15:59 UTC); genai-prices still prices it as the old R1 model"),
    "deepseek/deepseek-v4-flash-vision-exp": ("deepseek/deepseek-v4-flash", "DeepSeek: a legacy name billed at Flash prices (genai-prices matches it to deepseek-v4-flash too)"),
}

BEIJING = "Asia/Shanghai"
PEAK_HOURS = ("09:00-12:00", "14:00-18:00")
PEAK_HOURS_UTC = ((_dt.time(1, 0), _dt.time(4, 0)), (_dt.time(6, 0), _dt.time(10, 0)))
PEAK_BILLING_STARTS = _dt.datetime(2026, 8, 16, 16, 0, tzinfo=_dt.timezone.utc)
PEAK_BILLING_DATE = _dt.date(2026, 8, 17)  # how genai-prices dates it (a UTC date)
WEEKDAYS_ONLY_FROM = _dt.datetime(2026, 8, 22, 16, 0, tzinfo=_dt.timezone.utc)  # 2026-08-23 00:00 Beijing
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri")


class _Entry:
    def __init__(self, since: _dt.datetime | None, base, peak, note: str | None):
        self.since = since
        self.base = base  # (input, cacheRead, cacheWrite, output) Decimals
        self.peak = peak  # the same at peak hours, or None
        self.note = note


def _rates(price) -> tuple:
    """(input, cacheRead, cacheWrite, output) of a genai-prices ModelPrice; a missing cache-write price
    is the input price (genai-prices charges cache writes as input then)."""
    cache_write = price.cache_write_mtok if price.cache_write_mtok is not None else price.input_mtok
    return price.input_mtok, price.cache_read_mtok, cache_write, price.output_mtok


def _genai_parts(model) -> tuple[list, list]:
    """genai-prices' dated base prices ``[(date or None, rates)]`` and its daily windows ``[(start, end, rates)]``."""
    from genai_prices.types import StartDateConstraint, TimeOfDateConstraint

    prices = model.prices if isinstance(model.prices, list) else None
    if prices is None:
        return [(None, _rates(model.prices))], []
    dated, windows = [], []
    for conditional in prices:
        constraint = conditional.constraint
        if constraint is None:
            dated.append((None, _rates(conditional.prices)))
        elif isinstance(constraint, StartDateConstraint):
            dated.append((constraint.start_date, _rates(conditional.prices)))
        elif isinstance(constraint, TimeOfDateConstraint):
            windows.append((constraint.start_time.replace(tzinfo=None), constraint.end_time.replace(tzinfo=None), _rates(conditional.prices)))
        else:  # pragma: no cover - a constraint kind this generator does not know
            raise SystemExit(f"{model.id}: unknown genai-prices constraint {constraint!r}")
    return dated, windows


def _as_instant(day: _dt.date | None) -> _dt.datetime | None:
    if day is None:
        return None
    if day == PEAK_BILLING_DATE:
        return PEAK_BILLING_STARTS
    return _dt.datetime(day.year, day.month, day.day, tzinfo=_dt.timezone.utc)


def deepseek_history(model) -> list[_Entry]:
    """A genai-prices DeepSeek model as dated entries, DeepSeek's peak rule applied."""
    dated, windows = _genai_parts(model)
    if windows:
        hours = tuple((start, end) for start, end, _ in windows)
        if hours != PEAK_HOURS_UTC:
            raise SystemExit(f"{model.id}: genai-prices' windows {hours} are not DeepSeek's peak hours {PEAK_HOURS_UTC}: check the rule")
        latest = dated[-1][1]
        for _, _, peak in windows:
            if peak != tuple(None if rate is None else rate * 2 for rate in latest):
                raise SystemExit(f"{model.id}: genai-prices' peak rates {peak} are not twice its latest off-peak {latest}: check the rule")
    starts = sorted({_as_instant(day) for day, _ in dated if day is not None} | ({PEAK_BILLING_STARTS, WEEKDAYS_ONLY_FROM} if windows else set()))
    entries = []
    for since in [None, *starts]:
        base = dated[0][1]
        for day, rates in dated:
            instant = _as_instant(day)
            if instant is None or (since is not None and instant <= since):
                base = rates
        peak = None
        if windows and since is not None and since >= PEAK_BILLING_STARTS:
            peak = tuple(None if rate is None else rate * 2 for rate in base)
        note = None
        if since == PEAK_BILLING_STARTS:
            note = "peak/off-peak billing began at 16:00 UTC (00:00 on 17 August, Beijing time), peak hours every day; genai-prices switches on the UTC date"
        elif since == WEEKDAYS_ONLY_FROM:
            note = "weekends off-peak all day from 2026-08-23 00:00 Beijing time (DeepSeek); genai-prices cannot say so"
        entries.append(_Entry(since, base, peak, note))
    return entries


def _number(value: Decimal) -> str:
    return format(value.normalize(), "f")


def _since(since: _dt.datetime | None) -> str:
    if since is None:
        return ""
    if since.time() == _dt.time(0):
        return f"since = {since.date().isoformat()}\n"
    return f"since = {since.strftime('%Y-%m-%dT%H:%M:%SZ')}\n"


def _rate_lines(rates: tuple) -> str:
    lines = []
    for key, value in zip(("input", "cacheRead", "cacheWrite", "output"), rates):
        if value is not None:
            lines.append(f"{key} = {_number(value)}\n")
    return "".join(lines)


def _strings(values) -> str:
    return ", ".join(f'"{value}"' for value in values)


HEADER = """\
# dshctl's built-in price table. GENERATED by `python -m dshctl.stats.prices_generate` from the
# genai-prices package (version below): do not edit; regenerate, and the test suite checks it.
# List prices in USD per million tokens: costs are estimates from them, not a bill.
#
# Where genai-prices says its own data is approximate, DeepSeek's published rule is used instead
# (https://api-docs.deepseek.com/quick_start/pricing, as stored): peak hours 09:00-12:00 and
# 14:00-18:00 Asia/Shanghai, Monday to Friday (every day before 2026-08-23), at twice the off-peak
# rate, from 2026-08-16 16:00 UTC; no peak hours before. Chinese public holidays (off-peak all day
# by DeepSeek's rule) are not modelled: their peak hours are priced at the peak rate.
#
# Routes: dsh's provider routes below bill at the price provider's list prices; a route that maps
# to no entry has no cost. Override any entry (or route) in ~/.config/dshctl/prices.toml.
"""


def generate() -> str:
    """The table's text from the installed genai-prices."""
    import genai_prices
    from genai_prices.data import providers

    deepseek = next(provider for provider in providers if provider.id == "deepseek")
    models = {model.id: model for model in deepseek.models}
    out = [HEADER, "\n[table]\n", 'source = "genai-prices"\n', f'version = "{genai_prices.__version__}"\n']
    out.append(f'note = "DeepSeek list prices from genai-prices {genai_prices.__version__}; peak hours by DeepSeek\'s published rule"\n')
    out.append("\n[providers]  # dsh provider route -> price provider\n")
    for route, provider in PROVIDERS.items():
        out.append(f'"{route}" = "{provider}"\n')
    out.append("\n[aliases]  # model name -> the entry it bills as\n")
    for alias, (target, why) in ALIASES.items():
        out.append(f'"{alias}" = "{target}"  # {why}\n')
    for model_id in MODELS:
        model = models[model_id]
        key = f"deepseek/{model_id}"
        out.append(f"\n# {model.name}" + (f" - genai-prices: {model.price_comments}" if model.price_comments else "") + "\n")
        for entry in deepseek_history(model):
            out.append(f'\n[[models."{key}"]]\n')
            out.append(_since(entry.since))
            out.append('currency = "USD"\n')
            out.append(_rate_lines(entry.base))
            out.append(f'source = "genai-prices {genai_prices.__version__}"\n')
            if entry.note:
                out.append(f'note = "{entry.note}"\n')
            if entry.peak is not None:
                out.append(f'[[models."{key}".windows]]\n')
                out.append(f'zone = "{BEIJING}"\n')
                if entry.since is not None and entry.since >= WEEKDAYS_ONLY_FROM:
                    out.append(f"days = [{_strings(WEEKDAYS)}]\n")
                out.append(f"hours = [{_strings(PEAK_HOURS)}]\n")
                out.append(_rate_lines(entry.peak))
                out.append('note = "peak hours: twice the off-peak rate (DeepSeek)"\n')
    return "".join(out)


def pre_read(toml_text: str) -> str:
    """``prices_builtin.py`` for the table ``toml_text``: its document, as ``tomllib`` reads it, in
    Python literals (key order kept; floats and date-times written by ``repr``, which round-trips)."""
    import pprint
    import tomllib

    document = pprint.pformat(tomllib.loads(toml_text), sort_dicts=False, width=120)
    return (
        '"""The built-in price table (prices.toml beside this module) as tomllib reads it, pre-read.\n\n'
        "GENERATED by ``python -m dshctl.stats.prices_generate`` from prices.toml: do not edit; regenerate,\n"
        'and the test suite checks that the two agree. :func:`dshctl.stats.prices.load_prices` reads this."""\n\n'
        "import datetime\n\n"
        f"DOCUMENT = {document}\n"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dshctl.stats.prices_generate", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the committed table differs from genai-prices'")
    parser.add_argument("--output", type=Path, default=TARGET, help=f"where to write (default {TARGET})")
    args = parser.parse_args(argv)
    try:
        text = generate()
    except ImportError:
        print("prices_generate: genai-prices is not installed (pip install 'dshctl[test]')", file=sys.stderr)
        return 2
    pre_read_path = args.output.with_name(PRE_READ.name)
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            print(f"{args.output} differs from genai-prices' data: run python -m dshctl.stats.prices_generate", file=sys.stderr)
            return 1
        if args.output == TARGET and PRE_READ.read_text(encoding="utf-8") != pre_read(text):
            print(f"{PRE_READ} differs from {TARGET}: run python -m dshctl.stats.prices_generate", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(text, encoding="utf-8")
    pre_read_path.write_text(pre_read(text), encoding="utf-8")
    print(f"wrote {args.output} and {pre_read_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
