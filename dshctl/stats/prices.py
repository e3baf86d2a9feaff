"""Prices per model and what the token meter's billed buckets cost at them.

A price table maps a model route as dsh logs it (``provider/model``) to one price or a price history.
Tables are read in order, each overriding the previous one model by model and adding the models it alone
names: the built-in table (``prices.toml`` beside this module: only prices with a cited public source),
the user's (``$XDG_CONFIG_HOME/dshctl/prices.toml``, else ``~/.config/dshctl/prices.toml``), then
``--prices FILE``. The format (README.md, "Prices")::

    [models."deepseek-official/deepseek-v4-flash"]
    currency = "USD"
    input = 0.28        # per million uncached input tokens
    cacheRead = 0.028   # per million cache-read tokens
    cacheWrite = 0.28   # per million cache-write tokens
    output = 0.42       # per million output tokens (reasoning included)
    since = 2025-09-29  # optional: from this date (00:00 UTC) or date-time on; the session's start decides

A history is an array of tables (``[[models."name"]]``), each with its ``since``.

Amounts are kept in integer nano-units (10⁻⁹ of the currency) per session and model, so rollup rows
add up to their total exactly; records show them as numbers with at most nine decimals.
"""

from __future__ import annotations

import datetime as _dt
import os
from decimal import Decimal
from pathlib import Path
from typing import Any, Iterable

import msgspec

from ..errors import UsageError
from .records import CostRecord

NANO = 10**9
_PER_TOKENS = 10**6
_COMPONENTS = ("input", "cacheRead", "cacheWrite", "output")
_REQUIRED = ("currency", "input", "output")
_KNOWN = frozenset(_COMPONENTS) | {"currency", "since", "source", "checked"}
BUILTIN = Path(__file__).with_name("prices.toml")


class Price(msgspec.Struct, frozen=True):
    """One model's price per million tokens of each bucket, from ``since_ms`` on (None: always).
    A bucket without a price (None) makes a cost that needs it unknown."""

    currency: str
    input: Decimal
    cache_read: Decimal | None
    cache_write: Decimal | None
    output: Decimal
    since_ms: int | None


class PriceTable:
    """Model route → its prices, oldest first."""

    def __init__(self, models: dict[str, list[Price]] | None = None):
        self.models: dict[str, list[Price]] = models or {}

    def overridden_by(self, other: "PriceTable") -> "PriceTable":
        return PriceTable({**self.models, **other.models})

    def price(self, route: str | None, start_ms: int | None) -> Price | None:
        """The price in force at ``start_ms`` (the session's start): the latest entry whose ``since`` is at
        or before it. Without a start only an undated entry applies."""
        found = None
        for price in self.models.get(route or "", ()):
            if price.since_ms is None or (start_ms is not None and price.since_ms <= start_ms):
                found = price
        return found

    def for_session(self, start_ms: int | None) -> "SessionPricing":
        return SessionPricing(self, start_ms)


def missing_price(table: PriceTable, route: str | None, buckets: dict) -> str:
    """What a model whose costs are null lacks, for the note: any price, a bucket's price its tokens
    (``buckets``: the model's ``cacheReadTokens`` and ``cacheWriteTokens``) need, or a price in force
    when a session started. A bucket without a price and without tokens costs nothing."""
    entries = table.models.get(route or "", [])
    if not entries:
        return "no price"
    needed = [key for key, attribute, tokens in _OPTIONAL_BUCKETS
              if buckets.get(tokens) and any(getattr(price, attribute) is None for price in entries)]
    if needed:
        return f"no {' or '.join(needed)} price"
    return "no price in force when a session started"


_OPTIONAL_BUCKETS = (("cacheRead", "cache_read", "cache_read_tokens"), ("cacheWrite", "cache_write", "cache_write_tokens"))


class SessionPricing:
    """The prices in force when one session started: costs of its turns, steps and models."""

    def __init__(self, table: PriceTable, start_ms: int | None):
        self.table = table
        self.start_ms = start_ms
        self._cache: dict[str | None, Price | None] = {}

    def price(self, route: str | None) -> Price | None:
        if route not in self._cache:
            self._cache[route] = self.table.price(route, self.start_ms)
        return self._cache[route]

    def costs(self, route_tokens: dict) -> CostRecord | None:
        """The cost record of token buckets by model (``[uncached, output, read, write]``); None when a
        model with tokens has no price (or none for a bucket it used), or the models' currencies differ."""
        total = CostSum()
        for route, tokens in route_tokens.items():
            if not any(tokens):
                continue
            nanos = bucket_nanos(self.price(route), tokens)
            if nanos is None:
                return None
            total.add(self.price(route).currency, nanos)
        return total.record()


def bucket_nanos(price: Price | None, tokens: Iterable[int]) -> tuple[int, int, int, int] | None:
    """(input, cacheRead, cacheWrite, output) in nano-units, or None when a bucket with tokens has no price."""
    if price is None:
        return None
    uncached, output, read, write = tokens
    amounts = []
    for count, per_million in ((uncached, price.input), (read, price.cache_read), (write, price.cache_write), (output, price.output)):
        if count == 0:
            amounts.append(0)
        elif per_million is None:
            return None
        else:
            amounts.append(int((per_million * count * NANO / _PER_TOKENS).to_integral_value()))
    return tuple(amounts)  # type: ignore[return-value]


class CostSum:
    """Costs added up per currency in nano-units (never converted between currencies)."""

    def __init__(self) -> None:
        self.by_currency: dict[str, list[int]] = {}

    def add(self, currency: str, nanos: Iterable[int], sign: int = 1) -> None:
        sums = self.by_currency.setdefault(currency, [0, 0, 0, 0])
        for i, amount in enumerate(nanos):
            sums[i] += sign * amount

    def add_record(self, record: CostRecord | None, sign: int = 1) -> None:
        if record is not None and record.currency is not None:  # a cost without a currency is 0
            self.add(record.currency, record_nanos(record), sign)

    def records(self) -> list[CostRecord]:
        return [cost_record(currency, sums) for currency, sums in sorted(self.by_currency.items())]

    def record(self) -> CostRecord | None:
        """The one currency's cost record; None for mixed currencies (see :meth:`records`)."""
        records = self.records()
        if not records:
            return cost_record(None, [0, 0, 0, 0])
        return records[0] if len(records) == 1 else None


def cost_record(currency: str | None, nanos: Iterable[int]) -> CostRecord:
    input_, cache_read, cache_write, output = nanos
    return CostRecord(
        input=_amount(input_),
        cache_read=_amount(cache_read),
        cache_write=_amount(cache_write),
        output=_amount(output),
        total=_amount(input_ + cache_read + cache_write + output),
        currency=currency,
    )


def record_nanos(record: CostRecord) -> list[int]:
    return [round(amount * NANO) for amount in (record.input, record.cache_read, record.cache_write, record.output)]


def _amount(nanos: int) -> int | float:
    return 0 if nanos == 0 else nanos / NANO


# -- reading tables ------------------------------------------------------------------------------------


def user_prices_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".config"
    return root / "dshctl" / "prices.toml"


def load_prices(extra: str | None = None) -> PriceTable:
    """The built-in table, overridden by the user's file when it exists, then by ``extra`` (must exist)."""
    table = read_price_file(BUILTIN)
    user = user_prices_path()
    if user.is_file():
        table = table.overridden_by(read_price_file(user))
    if extra is not None:
        table = table.overridden_by(read_price_file(Path(extra)))
    return table


def read_price_file(path: Path) -> PriceTable:
    import tomllib

    try:
        with open(path, "rb") as handle:
            document = tomllib.load(handle)
    except OSError as exc:
        raise UsageError(f"cannot read price file {path}: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"price file {path}: not TOML: {exc}") from None
    try:
        return PriceTable(_models(document))
    except ValueError as exc:
        raise UsageError(f"price file {path}: {exc}") from None


def _models(document: dict) -> dict[str, list[Price]]:
    unknown = sorted(set(document) - {"models"})
    if unknown:
        raise ValueError(f"unknown top-level key {unknown[0]!r} (prices go under [models.\"provider/model\"])")
    models = document.get("models", {})
    if not isinstance(models, dict):
        raise ValueError("'models' must be a table of model names")
    return {name: _history(name, entry) for name, entry in models.items()}


def _history(name: str, entry: Any) -> list[Price]:
    entries = entry if isinstance(entry, list) else [entry]
    prices = [_price(name, item) for item in entries]
    prices.sort(key=lambda price: -1 if price.since_ms is None else price.since_ms)
    starts = [price.since_ms for price in prices]
    if len(set(starts)) != len(starts):
        raise ValueError(f"model {name!r}: two prices with the same 'since'")
    return prices


def _price(name: str, item: Any) -> Price:
    where = f"model {name!r}"
    if not isinstance(item, dict):
        raise ValueError(f"{where}: expected a table of prices")
    unknown = sorted(set(item) - _KNOWN)
    if unknown:
        raise ValueError(f"{where}: unknown key {unknown[0]!r} (keys: {', '.join(sorted(_KNOWN))})")
    for key in _REQUIRED:
        if key not in item:
            raise ValueError(f"{where}: missing {key!r}")
    currency = item["currency"]
    if not isinstance(currency, str) or not currency.strip():
        raise ValueError(f"{where}: 'currency' must be a non-empty string such as \"USD\"")
    return Price(
        currency=currency.strip().upper(),
        input=_per_million(where, item, "input"),
        cache_read=_per_million(where, item, "cacheRead") if "cacheRead" in item else None,
        cache_write=_per_million(where, item, "cacheWrite") if "cacheWrite" in item else None,
        output=_per_million(where, item, "output"),
        since_ms=_since_ms(where, item.get("since")),
    )


def _per_million(where: str, item: dict, key: str) -> Decimal:
    value = item[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or value != value or value == float("inf"):
        raise ValueError(f"{where}: {key!r} must be a number ≥ 0 (price per million tokens)")
    return Decimal(str(value))  # the digits as written: 0.28 is 0.28, not its binary neighbour


def _since_ms(where: str, value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        return int(value.timestamp() * 1000)
    if isinstance(value, _dt.date):
        return int(_dt.datetime(value.year, value.month, value.day, tzinfo=_dt.timezone.utc).timestamp() * 1000)
    raise ValueError(f"{where}: 'since' must be a TOML date (since = 2025-09-29) or date-time")
