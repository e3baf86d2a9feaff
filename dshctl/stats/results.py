"""What ``dshctl stats`` computes for one log, as typed values that cross the worker pool (they pickle).

The records themselves (``session``, ``turns``, ``steps``) are the Structs of :mod:`dshctl.stats.records`,
whose keys and key order are the documented output (``dshctl(1)``, STATS RECORDS). Around them:

* :class:`LogStats` — one log's statistics: the records, the observations, and whether ``--since`` /
  ``--until`` skipped it.
* :class:`StatsSamples` — per-step and per-turn observations the multi-log aggregate needs, and the
  tok/s series of a single log's sparkline.
* :class:`InheritedPrefix` — what the events before a fork/seed cut contributed, so the aggregate can
  count an inherited prefix once.
"""

from __future__ import annotations

from array import array
from collections import Counter
from typing import Any

import msgspec

from ..humanize import utc_moment
from .records import SalvageGap, SessionIdentity, SessionRecord, StepRecord, TurnRecord

OBSERVATIONS = (
    "ttft_ms",
    "tokens_per_second",
    "output_tokens_per_turn",
    "billed_input_tokens_per_turn",
    "provider_ttft_ms",
    "first_visible_ms",
)
"""The observation series of :class:`StatsSamples` (arrays of doubles, in log order)."""


def with_session(row: TurnRecord | StepRecord, session_id: str | None, path: str) -> Any:
    """A fold's turn or step row as ``stats`` prints it: a copy with its session and path."""
    return msgspec.structs.replace(row, session=session_id, path=path)


def in_session(row: TurnRecord | StepRecord, session_id: str | None, path: str, currency: str | None) -> Any:
    """:func:`with_session`, its cost read in the session's ``currency`` (:func:`.costs.in_session_currency`)."""
    from .costs import in_session_currency

    row = with_session(row, session_id, path)
    costs = getattr(row, "costs", None)
    if costs is not None and currency is not None:
        row.costs = in_session_currency(costs, currency)
    return row


class StatsSamples(msgspec.Struct):
    """Observations in log order: per step (that has the figure) and per turn (that has usage)."""

    ttft_ms: array
    tokens_per_second: array
    provider_ttft_ms: array
    first_visible_ms: array
    output_tokens_per_turn: array
    billed_input_tokens_per_turn: array
    gaps: Counter
    """Inter-token gap (ms) → count, negative gaps clamped to 0."""
    model_ttft: dict = msgspec.field(default_factory=dict)
    """Model (``provider/model``, None when unknown) → dsh's TTFT of each of its steps, in log order."""
    tool_ms: dict = msgspec.field(default_factory=dict)
    """Tool name → the duration of each of its calls dsh times (``tool/call`` → ``tool/result``)."""
    model_costs: dict | None = None
    """Model → its calls' :class:`~dshctl.stats.costs.CostTally` (exact nano-units), with prices; None without."""
    spark: array | None = None
    """tok/s per step in log order, NaN where unknown: a single log's sparkline. None where not kept
    (a worker of a multi-log run does not send it back)."""
    inherited: InheritedPrefix | None = None
    """What the inherited prefix contributed, for a forked or seeded session; None otherwise."""
    billing: dict | None = None
    """What the token meter counts, by the UTC minute of each call and its model
    (:data:`dshctl.stats.billing.Billing`): where a day, week or month rollup puts tokens and costs.
    None where not recorded (pooled observations)."""

    @classmethod
    def empty(cls) -> "StatsSamples":
        return cls(
            ttft_ms=array("d"),
            tokens_per_second=array("d"),
            provider_ttft_ms=array("d"),
            first_visible_ms=array("d"),
            output_tokens_per_turn=array("d"),
            billed_input_tokens_per_turn=array("d"),
            gaps=Counter(),
        )

    def snapshot(self) -> "StatsSamples":
        """A copy of the observations as they are now (their owner goes on appending), without ``spark``
        and ``inherited`` (the aggregate reads neither from a prefix)."""
        from .billing import copy_billing

        return StatsSamples(
            ttft_ms=array("d", self.ttft_ms),
            tokens_per_second=array("d", self.tokens_per_second),
            provider_ttft_ms=array("d", self.provider_ttft_ms),
            first_visible_ms=array("d", self.first_visible_ms),
            output_tokens_per_turn=array("d", self.output_tokens_per_turn),
            billed_input_tokens_per_turn=array("d", self.billed_input_tokens_per_turn),
            gaps=Counter(self.gaps),
            model_ttft={key: array("d", values) for key, values in self.model_ttft.items()},
            tool_ms={key: array("d", values) for key, values in self.tool_ms.items()},
            model_costs=None if self.model_costs is None else {key: tally.copy() for key, tally in self.model_costs.items()},
            billing=None if self.billing is None else copy_billing(self.billing),
        )


class InheritedPrefix(msgspec.Struct):
    """The session record and the observations as they stood at the fork/seed cut."""

    record: SessionRecord
    samples: StatsSamples


class LogStats(msgspec.Struct):
    """Statistics of one log (:func:`dshctl.stats.log_stats`).

    ``session`` is the session record; ``turns`` / ``steps`` the per-turn / per-step records when asked
    for (``by``), else None. When ``skipped`` (the header's ``createdAt`` is outside ``--since`` /
    ``--until``) only the session's identity is filled in and ``samples`` is None.
    """

    session: SessionRecord | SessionIdentity
    turns: list[TurnRecord] | None
    steps: list[StepRecord] | None
    samples: StatsSamples | None
    skipped: bool


def _identity_fields(log) -> dict:
    header = log.header
    return {
        "path": log.display,
        "id": header.id,
        "created_at": header.createdAt,
        "created": utc_moment(header.createdAt),
        "generation": header.version,
        "cwd": header.cwd,
        "seeded": header.seeded,
        "parent_session": header.parentSession,
    }


def session_identity(log) -> SessionIdentity:
    """The fields of a session record that come from the header and the path."""
    return SessionIdentity(**_identity_fields(log))


def folded_stats(log, fold, *, by: str = "session", salvage: bool = False) -> LogStats:
    """The statistics of ``log`` once ``fold`` (a :class:`~dshctl.stats.fold.StatsFold`) has read all of
    it: what :func:`~dshctl.stats.log_stats` returns, and what ``stats --follow`` ends with."""
    header = log.header
    if log.fixture:
        fold.timing_known = False
    session = msgspec.structs.replace(
        fold.session(),
        **_identity_fields(log),
        events=log.event_count,
        timing="unavailable" if (log.fixture or not fold.timing_known) else "envelope",
        cut=log.cut,
        warnings=list(log.warnings),
    )
    if salvage:
        session.gaps = [SalvageGap(line=gap.line, message=gap.message) for gap in log.gaps]
    currency = getattr(session.costs, "currency", None)
    turns = [in_session(row, header.id, log.display, currency) for row in fold.turn_rows] if by == "turn" else None
    steps = [in_session(row, header.id, log.display, currency) for row in fold.step_rows] if by == "step" else None
    return LogStats(session=session, turns=turns, steps=steps, samples=fold.samples(), skipped=False)

