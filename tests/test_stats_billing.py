"""The billing of a stats fold (:mod:`dshctl.stats.billing`): minute → model → :class:`CallBilling`, which a
meter sample (``bill``) and a call without usage (``bill_free``) reach by one lookup (``_entry``)."""

from __future__ import annotations

from dshctl.stats import billing as B

ROUTE = "deepseek-official/deepseek-v4-flash"


def test_the_entry_of_a_minute_and_model_is_made_once_and_found_after():
    billing: B.Billing = {}
    first = B._entry(billing, 7, ROUTE)
    assert billing == {7: {ROUTE: first}} and first.is_nothing()
    assert B._entry(billing, 7, ROUTE) is first
    other = B._entry(billing, 7, None)  # an unknown model is a model of its own
    timeless = B._entry(billing, None, ROUTE)  # as a call without a time
    assert other is not first and timeless is not first
    assert billing == {7: {ROUTE: first, None: other}, None: {ROUTE: timeless}}


def test_a_sample_and_a_free_call_of_one_minute_and_model_share_its_entry():
    billing: B.Billing = {}
    B.bill_free(billing, 7, ROUTE, ("USD", None))
    B.bill(billing, 7, ROUTE, (10, 0, 5, 0), 3, ("USD", (1, 2, 3, 4)), 1)
    B.bill(billing, 8, ROUTE, (1, 0, 0, 0), None, None, 1)
    entry = billing[7][ROUTE]
    assert (entry.calls, entry.tokens, entry.reasoning) == (1, [10, 0, 5, 0], 3)
    assert entry.cost.free == {"USD": 1} and entry.cost.by_currency == {"USD": [1, 2, 3, 4, 1]}
    assert list(billing) == [7, 8] and billing[8][ROUTE].cost is None
    B.bill(billing, 7, ROUTE, (10, 0, 5, 0), 3, ("USD", (1, 2, 3, 4)), -1)  # the sample replaced: taken away
    assert entry.calls == 0 and not any(entry.tokens) and entry.cost.by_currency == {} and entry.cost.free == {"USD": 1}
