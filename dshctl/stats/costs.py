"""Costs added up exactly: integer nano-units (10⁻⁹ of a currency) per currency, never converted.

A :class:`CostTally` is what a step, a turn, a model, a session or a rollup row cost: the sum of its
calls' charges (:meth:`dshctl.stats.prices.Pricer.charge`) per currency, and the tokens of the calls
without a price (which make the total unknown). A call that billed no tokens (no usage, or usage of 0)
is priced too, at 0 in its route's currency: it names the currency of a record that has no other, so a
session whose calls billed nothing costs ``0 USD`` where its routes are priced in USD, not 0 in no
currency. A charge replaced by a later sample of the same call
(dsh's token meter) is taken away again, so a tally is always the sum of the calls counted.
"""

from __future__ import annotations

from typing import Iterable

from .records import CostRecord

NANO = 10**9


class CostTally:
    """Nano-units per currency (``[input, output, cacheRead, cacheWrite, calls]``, the meter's bucket
    order and the priced calls), and the billed tokens of calls without a price with the first reason.
    A currency stays while any of its sums is not 0: what a fork child added after its cut can be a
    sample that replaced an inherited one, an amount over no call of its own. Calls without tokens
    are counted apart, per currency (``free``): they decide the currency only where nothing else does,
    and never make a record's currencies differ."""

    __slots__ = ("by_currency", "unpriced", "reason", "free")

    def __init__(self) -> None:
        self.by_currency: dict[str, list[int]] = {}
        self.unpriced = 0
        self.reason: str | None = None
        self.free: dict[str, int] = {}  # currency → calls without tokens priced in it

    def add(self, charge: tuple, tokens: int, sign: int = 1) -> None:
        """One call's charge (``sign`` -1: a replaced one taken away); ``tokens``: its billed tokens."""
        currency, detail = charge
        if not tokens:
            if currency is not None:
                _count(self.free, currency, sign)
            return
        if currency is None:
            self.unpriced += sign * tokens
            if self.reason is None:
                self.reason = detail
            return
        sums = self.by_currency.get(currency)
        if sums is None:
            sums = self.by_currency[currency] = [0, 0, 0, 0, 0]
        sums[0] += sign * detail[0]
        sums[1] += sign * detail[1]
        sums[2] += sign * detail[2]
        sums[3] += sign * detail[3]
        sums[4] += sign
        if not any(sums):
            del self.by_currency[currency]

    def merge(self, other: "CostTally", sign: int = 1) -> None:
        for currency, theirs in other.by_currency.items():
            sums = self.by_currency.get(currency)
            if sums is None:
                sums = self.by_currency[currency] = [0, 0, 0, 0, 0]
            for i in range(5):
                sums[i] += sign * theirs[i]
            if not any(sums):
                del self.by_currency[currency]
        for currency, calls in other.free.items():
            _count(self.free, currency, sign * calls)
        self.unpriced += sign * other.unpriced
        if self.reason is None:
            self.reason = other.reason

    def copy(self) -> "CostTally":
        twin = CostTally()
        twin.by_currency = {currency: list(sums) for currency, sums in self.by_currency.items()}
        twin.unpriced = self.unpriced
        twin.reason = self.reason
        twin.free = dict(self.free)
        return twin

    def records(self) -> list[CostRecord]:
        """One cost record per currency, by currency name; with nothing billed, 0 in the one currency
        of the calls without tokens, if they have one."""
        if not self.by_currency:
            return [cost_record(currency, (0, 0, 0, 0)) for currency in self.free] if len(self.free) == 1 else []
        return [cost_record(currency, sums) for currency, sums in sorted(self.by_currency.items())]

    def record(self) -> CostRecord | None:
        """The cost: None when a call without a price has tokens here or currencies meet; with nothing
        billed 0, in the currency of the calls without tokens when they have one (else in none)."""
        if self.unpriced:
            return None
        if not self.by_currency:
            return cost_record(next(iter(self.free)) if len(self.free) == 1 else None, (0, 0, 0, 0))
        if len(self.by_currency) > 1:
            return None
        ((currency, sums),) = self.by_currency.items()
        return cost_record(currency, sums)

    def fields(self, unpriced_models: list) -> dict:
        """``costs``, ``costs_by_currency`` and ``unpriced_models`` of a rollup row or aggregate."""
        return {
            "costs": None if unpriced_models or len(self.by_currency) > 1 else self.record(),
            "costs_by_currency": self.records(),
            "unpriced_models": unpriced_models,
        }


def _count(counts: dict[str, int], key: str, change: int) -> None:
    """Adds ``change`` to a count, dropping it at 0."""
    count = counts.get(key, 0) + change
    if count:
        counts[key] = count
    else:
        counts.pop(key, None)


def in_session_currency(costs, currency: str | None):
    """A turn's or step's ``costs`` as its session reads them: one without tokens (0, in no currency,
    since nothing was billed) costs 0 in the session's currency when the session has one, so it reads
    ``0 USD`` beside the priced rows and sums by currency with them; anything else as it is."""
    if currency is not None and isinstance(costs, CostRecord) and costs.currency is None:
        return cost_record(currency, (0, 0, 0, 0))
    return costs


def cost_record(currency: str | None, sums: Iterable[int]) -> CostRecord:
    """A cost record from nano-units in the meter's bucket order (input, output, cacheRead, cacheWrite)."""
    input_, output, read, write = list(sums)[:4]
    record = CostRecord(
        input=amount(input_),
        cache_read=amount(read),
        cache_write=amount(write),
        output=amount(output),
        total=amount(input_ + read + write + output),
        currency=currency,
    )
    record.nanos = (input_, read, write, output)  # exact beside the floats (records.cost_nanos; not on the wire)
    return record


def amount(nanos: int) -> int | float:
    """Nano-units as a number of the currency (at most nine decimals; 0 as the integer 0)."""
    return 0 if nanos == 0 else nanos / NANO


def model_cost_fields(tallies: dict) -> dict:
    """The cost fields of a pool of models (route → tally): the models' sum, and the models with tokens
    but no price, sorted (unknown last)."""
    total = CostTally()
    for tally in tallies.values():
        total.merge(tally)
    unpriced = sorted((route for route, tally in tallies.items() if tally.unpriced), key=lambda m: (m is None, m or ""))
    return total.fields(unpriced)
