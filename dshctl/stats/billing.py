"""What a session's model calls billed, minute by minute: where ``--by day|week|month`` puts each call.

The fold records every sample dsh's token meter counts — its four token buckets, its reasoning tokens
and, with prices, its charge — under its model and the UTC minute of its call's time, the time its price
was chosen at (:class:`~dshctl.stats.prices.Pricer`): the step's ``step/start``, a retry's
``llm/retry-started``, else the settlement's time. A sample that replaces an earlier one is taken away
where that one was counted, so each minute holds exactly what the meter counts of its calls and the
minutes add up to the session's figures.

A rollup reads each minute in its zone (:mod:`dshctl.stats.rollup`). Every zone's offset from UTC has
been a whole number of minutes since 1972 (Monrovia kept -0:44:30 until then), so a local midnight is
the start of a UTC minute and no minute straddles two days.
"""

from __future__ import annotations

from .costs import CostTally

NO_TIME = None
"""The minute of a call the log gives no time: the session's ``createdAt`` stands in, as in pricing."""
NOT_POSITIVE = -1
"""The minute of a call whose time is 0 or negative: a time no period holds (a rollup's "(unknown)")."""


def minute_of(time_ms: int | None) -> int | None:
    """The key a call's time is recorded under: its UTC minute since the epoch (a time in the first
    minute: 0), :data:`NO_TIME` or :data:`NOT_POSITIVE`."""
    if time_ms is None:
        return NO_TIME
    return time_ms // 60_000 if time_ms > 0 else NOT_POSITIVE


class CallBilling:
    """What one model's calls of one minute billed: how many samples the meter counts (replaced ones
    taken away), their token buckets (uncached input, output, cache read, cache write: the meter's
    order), their reasoning tokens (None while no usage reported them) and, with prices, their cost."""

    __slots__ = ("calls", "tokens", "reasoning", "cost")

    def __init__(self) -> None:
        self.calls = 0
        self.tokens = [0, 0, 0, 0]
        self.reasoning: int | None = None
        self.cost: CostTally | None = None

    def add(self, buckets: tuple, reasoning: int | None, charge: tuple | None, sign: int) -> None:
        """One sample (``sign`` -1: a replaced one taken away) and its charge (None: not priced)."""
        self.calls += sign
        tokens = self.tokens
        tokens[0] += sign * buckets[0]
        tokens[1] += sign * buckets[1]
        tokens[2] += sign * buckets[2]
        tokens[3] += sign * buckets[3]
        if reasoning is not None:
            self.reasoning = sign * reasoning if self.reasoning is None else self.reasoning + sign * reasoning
        if charge is not None:
            if self.cost is None:
                self.cost = CostTally()
            self.cost.add(charge, sum(buckets), sign)

    def merge(self, other: "CallBilling", sign: int = 1) -> None:
        self.calls += sign * other.calls
        for i in range(4):
            self.tokens[i] += sign * other.tokens[i]
        if other.reasoning is not None:
            self.reasoning = sign * other.reasoning if self.reasoning is None else self.reasoning + sign * other.reasoning
        if other.cost is not None:
            if self.cost is None:
                self.cost = CostTally()
            self.cost.merge(other.cost, sign)

    def copy(self) -> "CallBilling":
        twin = CallBilling()
        twin.merge(self)
        return twin

    def is_nothing(self) -> bool:
        """Whether every figure is 0 (what a replaced sample leaves where it was counted; calls without
        usage, which only name their currency, bill nothing)."""
        cost = self.cost
        return (
            self.calls == 0
            and not any(self.tokens)
            and not self.reasoning
            and (cost is None or (not cost.by_currency and not cost.unpriced))
        )


Billing = dict
"""Minute (:func:`minute_of`) → model (``provider/model``, None when unknown) → :class:`CallBilling`."""


def _entry(billing: Billing, minute: int | None, route: str | None) -> CallBilling:
    """The billing of ``minute`` and ``route``, made (empty) where there is none yet."""
    models = billing.get(minute)
    if models is None:
        models = billing[minute] = {}
    entry = models.get(route)
    if entry is None:
        entry = models[route] = CallBilling()
    return entry


def bill(billing: Billing, minute: int | None, route: str | None, buckets: tuple, reasoning: int | None, charge: tuple | None, sign: int) -> None:
    """A meter sample into (``sign`` -1: out of) the billing of its call's minute and model."""
    _entry(billing, minute, route).add(buckets, reasoning, charge, sign)


def bill_free(billing: Billing, minute: int | None, route: str | None, charge: tuple) -> None:
    """A call without usage into the billing of its minute and model: no sample of the meter, but its
    price's currency, at 0 (a period of such calls alone costs ``0 USD``)."""
    entry = _entry(billing, minute, route)
    if entry.cost is None:
        entry.cost = CostTally()
    entry.cost.add(charge, 0)


def copy_billing(billing: Billing) -> Billing:
    return {minute: {route: entry.copy() for route, entry in models.items()} for minute, models in billing.items()}


def billing_after_cut(billing: Billing, inherited: Billing) -> Billing:
    """What a forked or seeded session billed after its cut: each minute's billing less the inherited
    prefix's (a sample that replaced an inherited one leaves the difference, over no call of its own)."""
    after = copy_billing(billing)
    for minute, models in inherited.items():
        own = after.setdefault(minute, {})
        for route, entry in models.items():
            mine = own.get(route)
            if mine is None:
                mine = own[route] = CallBilling()
            mine.merge(entry, -1)
    return after
