"""Price tables: what each model call dsh logs costs, at the rates in force at the moment it was made.

A table maps a price key (``provider/model``) to a price history: dated entries (``since``), each with one
currency, rates per million tokens for the four billed buckets (uncached input, cache read, cache write,
output) and optional time windows — hours of the day in a named time zone (or UTC), on some weekdays —
with their own rates (a provider's peak hours). dsh's routes (``provider/model`` as ``message.source`` or
``request/header`` names them) reach a price key by an exact key, else by the table's ``providers``
mapping (``deepseek-official`` bills as ``deepseek``) and ``aliases`` (``deepseek/deepseek-chat`` bills
as ``deepseek/deepseek-v4-flash``); a route that reaches none has no price and no cost, never a guess.

Tables are read in order, each overriding the previous one key by key and adding its own: the built-in
table (``prices.toml`` beside this module, generated from the ``genai-prices`` package by
:mod:`dshctl.stats.prices_generate`), the user's (``$XDG_CONFIG_HOME/dshctl/prices.toml``, else
``~/.config/dshctl/prices.toml``), then ``--prices FILE``. The format is in ``dshctl(1)``, PRICES::

    [[models."deepseek/deepseek-v4-flash"]]
    since = 2026-09-10            # optional: a TOML date (00:00 UTC) or date-time; undated = before all dated
    currency = "USD"
    input = 0.15                  # per million uncached input tokens
    cacheRead = 0.003             # per million cache-read tokens
    cacheWrite = 0.15             # per million cache-write tokens
    output = 0.6                  # per million output tokens (reasoning included)
    windows = [{ zone = "Asia/Shanghai", days = ["mon", "tue", "wed", "thu", "fri"],
                 hours = ["09:00-12:00", "14:00-18:00"], input = 0.3, cacheRead = 0.006, cacheWrite = 0.3, output = 1.2 }]

A call is priced by the entry whose ``since`` is the latest at or before its time, and within it by the
first window its time falls in (the entry's own rates outside every window). Amounts are integer
nano-units (10⁻⁹ of the currency), so sums are exact; :mod:`dshctl.stats.costs` adds them up.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import msgspec

from ..errors import UsageError

NANO = 10**9
BUILTIN = Path(__file__).with_name("prices.toml")
_BUCKETS = ("input", "cacheRead", "cacheWrite", "output")
_ENTRY_KEYS = frozenset(_BUCKETS) | {"currency", "since", "source", "checked", "note", "windows"}
_WINDOW_KEYS = frozenset(_BUCKETS) | {"zone", "days", "hours", "note"}
_TABLE_KEYS = frozenset({"name", "source", "version", "url", "note"})
_TOP_KEYS = ("table", "providers", "aliases", "models")
DAY_NAMES = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
_HOURS = re.compile(r"([0-9]{2}):([0-9]{2})-([0-9]{2}):([0-9]{2})\Z")  # ASCII digits only; \Z: no newline after


class Rates(msgspec.Struct, frozen=True):
    """Prices per million tokens of each billed bucket; a bucket without a price (None) makes the cost
    of a call that used it unknown."""

    input: Decimal
    cache_read: Decimal | None
    cache_write: Decimal | None
    output: Decimal

    def buckets(self) -> tuple[Decimal | None, Decimal | None, Decimal | None, Decimal | None]:
        """In the meter's bucket order: uncached input, output, cache read, cache write."""
        return self.input, self.output, self.cache_read, self.cache_write


class Window(msgspec.Struct, frozen=True):
    """Hours of the day (minute ranges ``[start, end)``, an end before the start wrapping past midnight)
    on some ISO weekdays (1 = Monday; None: every day), both read in ``zone`` at the call's instant."""

    zone: str
    days: frozenset[int] | None
    hours: tuple[tuple[int, int], ...]
    rates: Rates
    note: str | None = None

    def text(self) -> str:
        days = "every day" if self.days is None else ",".join(DAY_NAMES[d - 1] for d in sorted(self.days))
        hours = ", ".join(f"{a // 60:02d}:{a % 60:02d}-{b // 60:02d}:{b % 60:02d}" for a, b in self.hours)
        return f"{hours} {self.zone}, {days}"


class PriceEntry(msgspec.Struct, frozen=True):
    """One dated entry of a price history: in force from ``since_ms`` (None: before every dated entry)."""

    since_ms: int | None
    currency: str
    rates: Rates
    windows: tuple[Window, ...] = ()
    source: str | None = None
    note: str | None = None


class TableInfo(msgspec.Struct, frozen=True):
    """Where a table in force came from (``dshctl prices`` shows them)."""

    name: str
    path: str
    source: str | None = None
    version: str | None = None
    note: str | None = None


class PriceTable:
    """Price key → its history (oldest first); dsh provider → price provider; price key → the key it bills as."""

    def __init__(
        self,
        models: dict[str, list[PriceEntry]] | None = None,
        providers: dict[str, str] | None = None,
        aliases: dict[str, str] | None = None,
        info: list[TableInfo] | None = None,
    ):
        self.models: dict[str, list[PriceEntry]] = models or {}
        self.providers: dict[str, str] = providers or {}
        self.aliases: dict[str, str] = aliases or {}
        self.info: list[TableInfo] = info or []

    def overridden_by(self, other: "PriceTable") -> "PriceTable":
        return PriceTable(
            {**self.models, **other.models},
            {**self.providers, **other.providers},
            {**self.aliases, **other.aliases},
            self.info + other.info,
        )

    def price_key(self, route: str | None) -> str | None:
        """The key whose prices a dsh route bills at: the route itself when a table names it, else its
        provider's price provider with the model (through an alias); None when no table prices it."""
        if not route:
            return None
        if route in self.models:
            return route
        provider, _, model = route.partition("/")
        mapped = self.providers.get(provider)
        if mapped is None or not model:
            return None
        key = f"{mapped}/{model}"
        key = self.aliases.get(key, key)
        return key if key in self.models else None

    def entry(self, key: str, time_ms: int | None) -> PriceEntry | None:
        """The entry of ``key`` in force at ``time_ms``: the latest dated one at or before it, else the
        undated one. Without a time only the undated entry applies."""
        found = None
        for entry in self.models.get(key, ()):
            if entry.since_ms is None or (time_ms is not None and entry.since_ms <= time_ms):
                found = entry
        return found


# -- pricing a call ---------------------------------------------------------------------------------------


def _nanos_per_token(per_million: Decimal | None) -> tuple[int, int] | None:
    """A rate per million as nano-units per token, the exact fraction ``(numerator, denominator)``."""
    if per_million is None:
        return None
    numerator, denominator = (per_million * 1000).as_integer_ratio()
    return numerator, denominator


def _nanos(count: int, factor: tuple[int, int]) -> int:
    """``count`` tokens at ``factor`` nano-units each, rounded to the nano-unit (halves to even)."""
    quotient, remainder = divmod(count * factor[0], factor[1])
    twice = 2 * remainder
    if twice > factor[1] or (twice == factor[1] and quotient & 1):
        quotient += 1
    return quotient


class _Compiled:
    """An entry's rates as nano-unit factors, its windows' too."""

    __slots__ = ("entry", "base", "windows")

    def __init__(self, entry: PriceEntry):
        self.entry = entry
        self.base = tuple(_nanos_per_token(rate) for rate in entry.rates.buckets())
        self.windows = [(window, _zone(window.zone), tuple(_nanos_per_token(r) for r in window.rates.buckets())) for window in entry.windows]


def _zone(name: str) -> _dt.tzinfo:
    if name.upper() == "UTC":
        return _dt.timezone.utc
    from zoneinfo import ZoneInfo

    return ZoneInfo(name)


def _in_window(window: Window, zone: _dt.tzinfo, time_ms: int) -> bool:
    local = _dt.datetime.fromtimestamp(time_ms // 1000, zone)
    if window.days is not None and local.isoweekday() not in window.days:
        return False
    minute = local.hour * 60 + local.minute
    for start, end in window.hours:
        if (start <= minute < end) if start < end else (minute >= start or minute < end):
            return True
    return False


Charge = tuple
"""What one call costs: ``(currency, (input, output, cacheRead, cacheWrite) nano-units)`` with the rates
in force, or ``(None, reason)`` when it has no price."""


class Pricer:
    """Prices the model calls of one session (each at its own time; ``fallback_ms``, the session's start,
    for a call the log gives no time). The rates found are cached by route and minute where they hold
    for the whole minute: no entry starts within it and each window's zone is a whole number of minutes
    off UTC (so its local minutes are UTC's)."""

    def __init__(self, table: PriceTable, fallback_ms: int | None = None):
        self.table = table
        self.fallback_ms = fallback_ms
        self._keys: dict[str | None, str | None] = {}
        self._compiled: dict[int, _Compiled] = {}
        self._rates: dict[tuple, Any] = {}

    def charge(self, route: str | None, time_ms: int | None, buckets: tuple) -> Charge:
        """The cost of one call's billed buckets (uncached input, output, cache read, cache write)."""
        if time_ms is None:
            time_ms = self.fallback_ms
        minute = None if time_ms is None else time_ms // 60_000
        cache_key = (route, minute)
        rates = self._rates.get(cache_key)
        if rates is None:
            rates, whole_minute = self._rates_at(route, time_ms)
            if whole_minute:
                self._rates[cache_key] = rates
        currency, factors = rates
        if currency is None:
            return rates
        uncached, output, read, write = buckets
        input_factor, output_factor, read_factor, write_factor = factors
        if (read and read_factor is None) or (write and write_factor is None):
            return None, f"no {'cacheRead' if read and read_factor is None else 'cacheWrite'} price"
        return currency, (
            _nanos(uncached, input_factor) if uncached else 0,
            _nanos(output, output_factor) if output else 0,
            _nanos(read, read_factor) if read else 0,
            _nanos(write, write_factor) if write else 0,
        )

    def _rates_at(self, route: str | None, time_ms: int | None) -> tuple[tuple, bool]:
        """The rates in force at ``time_ms``, and whether they are those of its whole minute."""
        key = self._keys.get(route, False)
        if key is False:
            key = self._keys[route] = self.table.price_key(route)
        if key is None:
            return (None, "no price"), True
        entry = self.table.entry(key, time_ms)
        whole_minute = time_ms is None or not any(_starts_within(price.since_ms, time_ms) for price in self.table.models[key])
        if entry is None:
            reason = "no price in force at the time of a call" if time_ms is not None else "no undated price for a call without a time"
            return (None, reason), whole_minute
        compiled = self._compiled.get(id(entry))
        if compiled is None:
            compiled = self._compiled[id(entry)] = _Compiled(entry)
        if compiled.windows:
            if time_ms is None:
                return (None, "no time to choose between its windowed prices"), True
            try:
                whole_minute = whole_minute and all(_minutes_off_utc(zone, time_ms) for _, zone, _ in compiled.windows)
                for window, zone, factors in compiled.windows:
                    if _in_window(window, zone, time_ms):
                        return (entry.currency, factors), whole_minute
            except (OverflowError, OSError, ValueError):
                return (None, "a call time out of range"), True
        return (entry.currency, compiled.base), whole_minute


def _starts_within(since_ms: int | None, time_ms: int) -> bool:
    """Whether an entry starts inside the minute of ``time_ms`` (after its first millisecond)."""
    return since_ms is not None and since_ms // 60_000 == time_ms // 60_000 and since_ms % 60_000 != 0


def _minutes_off_utc(zone: _dt.tzinfo, time_ms: int) -> bool:
    """Whether ``zone`` is a whole number of minutes off UTC through the minute of ``time_ms`` (every
    zone since 1972; Monrovia kept -0:44:30 until then)."""
    start = time_ms // 60_000 * 60
    for seconds in (start, start + 59):
        offset = _dt.datetime.fromtimestamp(seconds, zone).utcoffset()
        if offset is None or offset % _dt.timedelta(minutes=1):
            return False
    return True


def cost_basis(prices: PriceTable):
    """What a document's costs are: estimates at list prices, from these tables (``costBasis``)."""
    from .records import CostBasis, PriceTableInfo

    return CostBasis(tables=[PriceTableInfo(name=t.name, path=t.path, source=t.source, version=t.version) for t in prices.info])


def session_pricer(prices: PriceTable | None, created: Any) -> Pricer | None:
    """What prices one session's calls (None without prices); the header's ``createdAt`` stands in for
    the time of a call the log gives none."""
    from ..options.window import created_ms

    if prices is None:
        return None
    return Pricer(prices, created_ms(created))


# -- reading tables --------------------------------------------------------------------------------------


def user_prices_path() -> Path | None:
    """The user's price file (it may not exist); None without a home directory to hold it."""
    from ..errors import UsageError
    from ..settings import home_directory

    base = os.environ.get("XDG_CONFIG_HOME") or ""
    try:
        root = Path(base) if os.path.isabs(base) else home_directory("XDG_CONFIG_HOME") / ".config"
    except UsageError:
        return None
    return root / "dshctl" / "prices.toml"


from ..options.base import PRICES as _PRICES_OPTION  # noqa: E402  (a leaf: no cycle)

_PRICES_FLAG = _PRICES_OPTION.long
"""How a table named on the command line is called in messages and in ``costBasis``."""


_PACKAGED = BUILTIN


def load_prices(extra: str | None = None) -> PriceTable:
    """The built-in table, overridden by the user's file when it exists, then by ``extra`` (must exist)."""
    table = builtin_prices()
    user = user_prices_path()
    if user is not None and user.is_file():
        table = table.overridden_by(read_price_file(user, name="user"))
    if extra is not None:
        table = table.overridden_by(read_price_file(Path(extra), name=_PRICES_FLAG))
    return table


def builtin_prices() -> PriceTable:
    """The built-in table: ``prices.toml``'s document as generated beside it, pre-read
    (``prices_builtin.py``, :mod:`dshctl.stats.prices_generate`), checked as every table is; the file
    itself where :data:`BUILTIN` names another."""
    if BUILTIN != _PACKAGED:
        return read_price_file(BUILTIN, name="built-in")
    from .prices_builtin import DOCUMENT

    return _table(DOCUMENT, "built-in", str(BUILTIN))


def read_price_file(path: Path, *, name: str | None = None) -> PriceTable:
    import tomllib

    name = name or _PRICES_FLAG
    try:
        with open(path, "rb") as handle:
            document = tomllib.load(handle)
    except OSError as exc:
        raise UsageError(f"cannot read price file {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"price file {path}: not TOML: {exc}") from None
    except UnicodeDecodeError as exc:  # TOML is UTF-8: tomllib decodes the bytes before it parses them
        raise UsageError(f"price file {path}: not UTF-8 text, as TOML must be ({exc.reason} at byte {exc.start})") from None
    try:
        return _table(document, name, str(path))
    except ValueError as exc:
        raise UsageError(f"price file {path}: {exc}") from None


def _table(document: dict, name: str, path: str) -> PriceTable:
    unknown = sorted(set(document) - set(_TOP_KEYS))
    if unknown:
        raise ValueError(f"unknown top-level key {unknown[0]!r} (keys: {', '.join(_TOP_KEYS)}; prices go under [models.\"provider/model\"])")
    meta = _mapping(document.get("table", {}), "'table'")
    bad = sorted(set(meta) - _TABLE_KEYS)
    if bad:
        raise ValueError(f"[table]: unknown key {bad[0]!r} (keys: {', '.join(sorted(_TABLE_KEYS))})")
    info = TableInfo(
        name=name,
        path=path,
        **{key: _text(f"[table] {key!r}", meta[key]) for key in ("source", "version", "note") if key in meta},
    )
    providers = {key: _text(f"providers {key!r}", value) for key, value in _mapping(document.get("providers", {}), "'providers'").items()}
    aliases = {key: _text(f"aliases {key!r}", value) for key, value in _mapping(document.get("aliases", {}), "'aliases'").items()}
    models = _mapping(document.get("models", {}), "'models'")
    return PriceTable({key: _history(key, entry) for key, entry in models.items()}, providers, aliases, [info])


def _mapping(value: Any, what: str) -> dict:
    if not isinstance(value, dict):
        raise ValueError(f"{what} must be a table")
    return value


def _text(what: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{what} must be a non-empty string")
    return value.strip()


def _history(name: str, entry: Any) -> list[PriceEntry]:
    entries = entry if isinstance(entry, list) else [entry]
    prices = [_entry(name, item) for item in entries]
    prices.sort(key=lambda price: -1 if price.since_ms is None else price.since_ms)
    starts = [price.since_ms for price in prices]
    if len(set(starts)) != len(starts):
        raise ValueError(f"model {name!r}: two prices with the same 'since'")
    return prices


def _entry(name: str, item: Any) -> PriceEntry:
    where = f"model {name!r}"
    if not isinstance(item, dict):
        raise ValueError(f"{where}: expected a table of prices")
    unknown = sorted(set(item) - _ENTRY_KEYS)
    if unknown:
        raise ValueError(f"{where}: unknown key {unknown[0]!r} (keys: {', '.join(sorted(_ENTRY_KEYS))})")
    for key in ("currency", "input", "output"):
        if key not in item:
            raise ValueError(f"{where}: missing {key!r}")
    currency = item["currency"]
    if not isinstance(currency, str) or not currency.strip():
        raise ValueError(f"{where}: 'currency' must be a non-empty string such as \"USD\"")
    rates = _rates(where, item, None)
    windows = item.get("windows", [])
    if not isinstance(windows, list):
        raise ValueError(f"{where}: 'windows' must be an array of tables")
    return PriceEntry(
        since_ms=_since_ms(where, item.get("since")),
        currency=currency.strip().upper(),
        rates=rates,
        windows=tuple(_window(f"{where}, window {i + 1}", window, rates) for i, window in enumerate(windows)),
        source=item["source"] if isinstance(item.get("source"), str) else None,
        note=item["note"] if isinstance(item.get("note"), str) else None,
    )


def _rates(where: str, item: dict, base: Rates | None) -> Rates:
    """The rates of an entry, or of a window (a bucket it does not name keeps the entry's rate)."""
    def rate(key: str, attribute: str) -> Decimal | None:
        if key in item:
            return _per_million(where, item, key)
        return None if base is None else getattr(base, attribute)

    return Rates(
        input=rate("input", "input"),
        cache_read=rate("cacheRead", "cache_read"),
        cache_write=rate("cacheWrite", "cache_write"),
        output=rate("output", "output"),
    )


def _window(where: str, item: Any, base: Rates) -> Window:
    if not isinstance(item, dict):
        raise ValueError(f"{where}: expected a table (zone, days, hours and rates)")
    unknown = sorted(set(item) - _WINDOW_KEYS)
    if unknown:
        raise ValueError(f"{where}: unknown key {unknown[0]!r} (keys: {', '.join(sorted(_WINDOW_KEYS))})")
    if not any(key in item for key in _BUCKETS):
        raise ValueError(f"{where}: no rate (give at least one of {', '.join(_BUCKETS)})")
    zone = item.get("zone", "UTC")
    if not isinstance(zone, str):
        raise ValueError(f"{where}: 'zone' must be an IANA time zone name such as \"Asia/Shanghai\", or \"UTC\"")
    try:
        _zone(zone)
    except (ValueError, KeyError, OSError):
        raise ValueError(f"{where}: unknown time zone {zone!r}") from None
    days = item.get("days")
    if days is not None:
        if not isinstance(days, list) or not days or any(not isinstance(d, str) or d.lower() not in DAY_NAMES for d in days):
            raise ValueError(f"{where}: 'days' must be a non-empty array of {', '.join(DAY_NAMES)}")
        days = frozenset(DAY_NAMES.index(d.lower()) + 1 for d in days)
    hours = item.get("hours")
    if not isinstance(hours, list) or not hours:
        raise ValueError(f"{where}: 'hours' must be a non-empty array of \"HH:MM-HH:MM\" ranges")
    return Window(zone=zone, days=days, hours=tuple(_hour_range(where, text) for text in hours), rates=_rates(where, item, base),
                  note=item["note"] if isinstance(item.get("note"), str) else None)


def _hour_range(where: str, text: Any) -> tuple[int, int]:
    match = _HOURS.match(text) if isinstance(text, str) else None
    if match:
        h1, m1, h2, m2 = (int(g) for g in match.groups())
        if h1 < 24 and m1 < 60 and (h2 < 24 or (h2, m2) == (24, 0)) and m2 < 60 and (h1, m1) != (h2, m2):
            return h1 * 60 + m1, h2 * 60 + m2
    raise ValueError(f"{where}: hours {text!r} is not a range \"HH:MM-HH:MM\" (start included, end excluded)")


def _per_million(where: str, item: dict, key: str) -> Decimal:
    value = item[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or value != value or value == float("inf"):
        raise ValueError(f"{where}: {key!r} must be a number ≥ 0 (price per million tokens)")
    return Decimal(str(value))  # the digits as written: 0.28 is 0.28, not its binary neighbour


_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)
_MS = _dt.timedelta(milliseconds=1)


def _since_ms(where: str, value: Any) -> int | None:
    """The first millisecond an entry is in force (calls are timed to the millisecond: a ``since``
    between two of them starts at the next)."""
    if value is None:
        return None
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        whole, rest = divmod(value - _EPOCH, _MS)
        return whole + (rest > _dt.timedelta(0))
    if isinstance(value, _dt.date):
        return (_dt.datetime(value.year, value.month, value.day, tzinfo=_dt.timezone.utc) - _EPOCH) // _MS
    raise ValueError(f"{where}: 'since' must be a TOML date (since = 2025-09-29) or date-time")


def since_text(since_ms: int | None) -> str:
    """An entry's start as it is shown (``2026-08-16T16:00Z``, or "before the dated prices")."""
    if since_ms is None:
        return "(undated)"
    moment = _EPOCH + since_ms * _MS
    if moment.time() == _dt.time(0):
        return moment.strftime("%Y-%m-%d")
    if moment.second == moment.microsecond == 0:
        return moment.strftime("%Y-%m-%dT%H:%MZ")
    if moment.microsecond == 0:
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def rates_text(rates: Rates) -> str:
    parts = []
    for label, value in (("in", rates.input), ("cache read", rates.cache_read), ("cache write", rates.cache_write), ("out", rates.output)):
        parts.append(f"{label} {'—' if value is None else format(value.normalize(), 'f')}")
    return " · ".join(parts)
