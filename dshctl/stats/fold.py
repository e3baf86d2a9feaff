"""One pass over a log's events: dsh's own statistics plus dshctl's, per session, turn and step.

dsh's figures are folds over the whole log in log order (FORMAT §7), reproduced rule by rule:

* ``sessionStats`` (§7.1): one *open step* — set by ``step/start``, matched by (turn, step), closed by
  its ``assistant/message`` or ``step/end``. First token = the first token delta of any attempt of the
  open step (``assistant/attempt`` sets it once; the message falls back to its own stream). At the
  message: ``llmMs += max(0, message − step/start)``; with a first token ``ttftMs += max(0, first −
  start)``, ``ttftSteps += 1``, and when ``data.usage.outputTokens`` is a number ≥ 0 ``decodeMs += max(0,
  message − first)``, ``decodeTokens += outputTokens``. ``tool/call`` → ``tool/result`` pairs by call id
  (own keys only), cleared at ``turn/end``. ``step/end`` counts a step, and a turn when its number differs
  from the previous ``step/end``'s.
* token meter (§7.3, the 0.1.5 line): each settlement's usage (a message's ``data.usage``, else the last
  raw ``usage`` chunk of its stream) goes into one replacement slot per (turn, step); a later sample
  of the same step replaces it, unless ``llm/retry-started`` for that step came in between (then it adds).
* context pressure (§7.5): prompt-side tokens of the latest sample against the latest
  ``request/context.contextWindow``.

Streams are read only with the record-level readers of :mod:`dshctl.stream` (first token, first visible
chunk, last raw chunk). Inter-token gaps walk the runs' ``dt`` lists, never member chunks.

Rows: a step's figures are exactly its contributions to the session's dsh figures (so per-step sums
equal the session's totals); a turn's are the sums of its steps, its TTFT that of its lowest-numbered
step that produced a message (dsh's turn footer).

0 or None: dsh's folds start every total at 0 (``sessionStats``, the token meter's zero buckets), so a
sum nothing contributed to is 0 — in the session record and in a turn's or step's share of it. None is
kept for what dsh has no value for: times of a log without envelope times, first-token figures from
placeholder stream times, ratios over nothing, and the per-step and per-turn readings dsh shows only when
recorded (a step's TTFT, generation and usage; the turn footer; a turn's billing). dshctl(1), STATS
RECORDS, gives the rule of every key.
"""

from __future__ import annotations

from array import array
from typing import Any, Iterable, Sequence, TypeVar

import msgspec
from msgspec import UNSET, UnsetType

from ..model import Event, message_of, tool_result_blocks, tool_result_call_id
from ..stream import (
    RawChunk,
    ToolCallChunks,
    first_token_time,
    first_visible_time,
    is_token_delta,
    last_raw_chunk,
    run_times,
)
from .billing import bill, bill_free, minute_of
from .costs import CostTally
from .figures import cache_hit_percent, counter_percentiles, mean, mean_and_percentiles, number, occupancy_percent, percent_number, rate
from .records import (
    InheritedFigures,
    MeterTotals,
    ModelRecord,
    RetryWaste,
    SessionOwnFigures,
    SessionRecord,
    SettlementRecord,
    StepOwnFigures,
    StepRecord,
    ToolCallRecord,
    ToolRecord,
    TurnRecord,
)
from .results import InheritedPrefix, StatsSamples

STALL_MS = 1000
"""An inter-token gap longer than this is a stall (dshctl's own figure)."""

# Events whose time marks "the request is about to be sent" for the attempt that follows them in the
# same step (dshctl's provider TTFT and attempt time; FORMAT §7.7, §8.2).
REQUEST_POINT_TYPES = frozenset(
    {
        "step/start",
        "user/message",
        "system/message",
        "developer/message",
        "request/header",
        "request/context",
        "session-log-deepseek/delivery-accepted",
        "compaction/end",
        "llm/retry-started",
    }
)

_INF = float("inf")
_NO_TOKENS = (0, 0, 0, 0)
"""dsh's token meters start from zero buckets (``zeroBuckets``): a session without usage has 0 tokens."""
_NO_TIME = "events carry no envelope time (test-fixture form): every timing figure is unavailable"
_PLACEHOLDER = "assistant stream records carry time 0 (placeholder times): first-token, decode and gap figures from them are unavailable"


_COUNTED_BY_BYTES = 8
"""How many distinct gap values :func:`count_gaps` counts with one bytes scan each before it counts the rest
one by one."""


def count_gaps(histogram: Any, gaps: list[int]) -> None:
    """``histogram.update(gaps)`` (a Counter), without a dictionary update per gap where it can: gaps of
    0–255 ms (most of a stream's) are packed into bytes, and each of the first few distinct values is
    counted by one C scan (``bytes.count``) and removed; what is left is counted one by one, as before."""
    if len(gaps) < 16:
        histogram.update(gaps)
        return
    try:
        rest = bytes(gaps)
    except ValueError:  # a gap outside 0..255
        histogram.update(gaps)
        return
    for _ in range(_COUNTED_BY_BYTES):
        if not rest:
            return
        value = rest[:1]
        histogram[rest[0]] += rest.count(value)
        rest = rest.replace(value, b"")
    if rest:
        histogram.update(rest)  # iterating bytes gives the ints themselves


def _turn_and_step(event: Event) -> tuple:
    """(turn, step) of an event: ints, or None where absent or not an integer (as ``Event.turn``/``.step``)."""
    data = event.data
    if data.__class__ is not dict:
        return None, None
    turn = data.get("turn")
    step = data.get("step")
    return (turn if turn.__class__ is int else None), (step if step.__class__ is int else None)


def _turn_of(event: Event) -> Any:
    data = event.data
    turn = data.get("turn") if data.__class__ is dict else None
    return turn if turn.__class__ is int else None


def _integral(value: Any) -> int | None:
    """An int, or a float with an integral value as that int; None for anything else."""
    return value if value.__class__ is int else (int(value) if value.__class__ is float and value.is_integer() else None)


def _usage_buckets(usage: Any) -> tuple[int, int, int, int] | None:
    """(uncached input, output, cache read, cache write) of a TokenUsage, or None if it is not one."""
    if not isinstance(usage, dict):
        return None
    uncached = _integral(usage.get("inputTokens"))
    output = _integral(usage.get("outputTokens"))
    if uncached is None or output is None:
        return None
    read = usage.get("cacheReadTokens")
    write = usage.get("cacheWriteTokens")
    read = 0 if read is None else _integral(read)
    write = 0 if write is None else _integral(write)
    if read is None or write is None:
        return None
    return uncached, output, read, write


def _append(series: dict, key: Any, value: float) -> None:
    """``value`` onto the series of ``key`` (a new array the first time: setdefault would build one each call)."""
    values = series.get(key)
    if values is None:
        values = series[key] = array("d")
    values.append(value)


def _reasoning_tokens(usage: dict) -> int | None:
    """``reasoningTokens`` of a TokenUsage when it reports them (a part of ``outputTokens``, §6)."""
    reasoning = usage.get("reasoningTokens")
    return _integral(reasoning) if reasoning is not None else None


def _first_line(content: Any, limit: int = 80) -> str | None:
    """The first non-blank line of a message's text blocks, cut to ``limit`` characters (kept exact:
    JSON escapes it, tables show it through the sanitizer)."""
    if not isinstance(content, list):
        return None
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            text = block["text"].lstrip()
            if text:
                end = text.find("\n", 0, 4 * limit)  # a prompt can be long: never split all of it
                line = text[: end if end >= 0 else 4 * limit].strip()
                return line if len(line) <= limit else line[: limit - 1] + "…"
    return None


def _tool_failed(event: Event) -> bool:
    """A tool result that says it failed: the error flag of its result (either shape), or ``data.error``."""
    data = event.data
    if data.__class__ is dict and data.get("error") is not None:
        return True
    return tool_result_blocks(event)[1]


def _tool_error(event: Event) -> tuple[str | None, str | None]:
    """(name, code) of a tool result's ``data.error`` (dsh's internal failure identity), each None when absent."""
    data = event.data
    error = data.get("error") if data.__class__ is dict else None
    if not isinstance(error, dict):
        return None, None
    name, code = error.get("name"), error.get("code")
    return (name if isinstance(name, str) else None), (code if isinstance(code, str) else None)


def _owner(shares: list[SettlementFigures]) -> SettlementFigures:
    """The settlement that gives its step the model its step/end counts under: the last message, else
    the first attempt (the fold's rule for a step's route)."""
    for share in reversed(shares):
        if share.outcome == "message":
            return share
    return shares[0]


def _first_visible_ms(stream: list, start: int) -> int | None:
    """From ``step/start`` (``start``) to the first visible chunk of a settlement's stream; a chunk time of
    0 beside a real start is a placeholder (unknown)."""
    visible = first_visible_time(stream)
    if visible is None or (visible == 0 and start > 0):
        return None
    return max(0, visible - start)


def _finish_and_failure(stream: list) -> tuple[str | None, str | None]:
    """(finish kind, failure code) of the last raw finish chunk of a stream."""
    chunk = last_raw_chunk(stream, "finish") if stream else None
    if chunk is None:
        return None, None
    reason = chunk.get("reason")
    if not isinstance(reason, dict):
        return None, None
    kind = reason.get("kind")
    failure = reason.get("failure")
    code = failure.get("code") if isinstance(failure, dict) else None
    return (kind if isinstance(kind, str) else None), (code if isinstance(code, str) else None)


_Number = TypeVar("_Number", int, float)


def _timed_sum(total: _Number | None, timed: bool) -> _Number | None:
    """A sum that starts at 0, as dsh's folds do (nothing contributed → 0); None when the log has no
    envelope times to sum (fixture form)."""
    return (total or 0) if timed else None


def _route_key(provider: Any, model: Any) -> str | None:
    if isinstance(provider, str) and provider and isinstance(model, str) and model:
        return f"{provider}/{model}"
    return None


def _add_buckets(target: list[int] | None, delta: Sequence[int], sign: int = 1) -> list[int]:
    """``target + sign · delta`` over the four token buckets, in place; a new list when ``target`` is None."""
    if target is None:
        target = [0, 0, 0, 0]
    target[0] += sign * delta[0]
    target[1] += sign * delta[1]
    target[2] += sign * delta[2]
    target[3] += sign * delta[3]
    return target


def _bucket_fields(tokens: Sequence[int] | None) -> dict[str, Any]:
    """The five token-bucket fields of a record (keyword arguments), None each without usage."""
    if tokens is None:
        return _NO_BUCKETS
    uncached, output, read, write = tokens
    return {
        "uncached_input_tokens": uncached,
        "cache_read_tokens": read,
        "cache_write_tokens": write,
        "billed_input_tokens": uncached + read + write,
        "output_tokens": output,
    }


_NO_BUCKETS: dict[str, Any] = {
    "uncached_input_tokens": None,
    "cache_read_tokens": None,
    "cache_write_tokens": None,
    "billed_input_tokens": None,
    "output_tokens": None,
}


# -- turns and steps ---------------------------------------------------------------------------------


class CallFigures:
    """What a step and each of its settlements count alike (``StatsFold(keep_settlements=True)`` keeps a
    settlement's share of its step): the fold adds a contribution to the step and, through the same
    method, to the settlement it belongs to, so each rule has one home and the shares add up to the step.
    Timing fields stay None until something contributes."""

    __slots__ = (
        "route", "retries", "backoff_ms", "llm_ms", "ttft_ms", "generation_ms", "decode_ms", "decode_tokens",
        "tool_calls", "tool_ms", "tool_names", "finish", "failure", "interrupted", "provider_ttft_ms",
        "first_visible_ms", "max_gap_ms", "stalls", "stall_ms", "failed_attempts", "waste_input", "waste_output",
        "waste_ms",
    )

    def __init__(self, route: str | None) -> None:
        self.route = route
        self.retries = 0
        self.backoff_ms: int | None = None
        self.llm_ms: int | None = None
        self.ttft_ms: int | None = None
        self.generation_ms: int | None = None
        self.decode_ms: int | None = None
        self.decode_tokens: int | float | None = None
        self.tool_calls = 0
        self.tool_ms: int | None = None
        self.tool_names: list[str] = []
        self.finish: str | None = None
        self.failure: str | None = None
        self.interrupted = False
        self.provider_ttft_ms: int | None = None
        self.first_visible_ms: int | None = None
        self.max_gap_ms: int | None = None
        self.stalls = 0
        self.stall_ms = 0
        self.failed_attempts = 0
        self.waste_input = 0
        self.waste_output = 0
        self.waste_ms: int | None = None

    def add_backoff(self, span: int) -> None:
        self.backoff_ms = (self.backoff_ms or 0) + span

    def add_tool_call(self, name: str | None) -> None:
        self.tool_calls += 1
        self.tool_names.append(name if name is not None else "?")

    def add_tool_ms(self, span: int) -> None:
        self.tool_ms = (self.tool_ms or 0) + span

    def add_failed_attempt(self, wasted_input: int | None, wasted_output: int, wasted_ms: int | None) -> None:
        """An attempt that ended without a message: its tokens (None without usage) and its time wasted."""
        self.failed_attempts += 1
        if wasted_input is not None:
            self.waste_input += wasted_input
            self.waste_output += wasted_output
        if wasted_ms is not None:
            self.waste_ms = (self.waste_ms or 0) + wasted_ms

    def add_timing(self, span: int, ttft: int | None, generation: int | None, decode_tokens: int | float | None) -> None:
        """dsh's step readings on the message that closes the open step: its model time, and with a first
        token its time to it and the generation after it, which with the message's output tokens is the
        decode time and tokens."""
        self.llm_ms = (self.llm_ms or 0) + span
        if ttft is None or generation is None:
            return
        self.ttft_ms = (self.ttft_ms or 0) + ttft
        self.generation_ms = (self.generation_ms or 0) + generation
        if decode_tokens is not None:
            self.decode_ms = (self.decode_ms or 0) + generation
            self.decode_tokens = (self.decode_tokens or 0) + decode_tokens

    def add_gaps(self, top: int, runs: list[list[int]]) -> None:
        """One attempt's inter-token gaps: the largest (``top``, of ``runs``), and those over the stall
        threshold."""
        if self.max_gap_ms is None or top > self.max_gap_ms:
            self.max_gap_ms = max(0, top)
        if top > STALL_MS:
            for gaps in runs:
                for gap in gaps:
                    if gap > STALL_MS:
                        self.stalls += 1
                        self.stall_ms += gap

    def step_row(self, record_type: Any, step: "StepFigures", timed: bool, *, attempts: int, tokens: Sequence[int] | None,
                 reasoning: int | None, ended: bool, costs: Any, **extra: Any) -> Any:
        """The record (a :class:`StepRecord` or a :class:`SettlementRecord`, ``record_type``) of these
        figures, in step ``step``; what differs between a step and its settlement is passed."""
        return record_type(
            turn=step.turn,
            step=step.step,
            attempts=attempts,
            retries=self.retries,
            ttft_ms=self.ttft_ms,
            llm_ms=self.llm_ms,
            generation_ms=self.generation_ms,
            decode_ms=self.decode_ms,
            decode_tokens=self.decode_tokens,
            tokens_per_second=rate(self.decode_tokens, self.decode_ms),
            **_bucket_fields(tokens),
            tool_calls=self.tool_calls,
            tool_ms=_timed_sum(self.tool_ms, timed),
            finish_reason=self.finish,
            failure_code=self.failure,
            interrupted=self.interrupted,
            ended=ended,
            inherited=step.inherited,
            model=self.route,
            reasoning_tokens=reasoning,
            tools=self.tool_names,
            costs=costs,
            dshctl=StepOwnFigures(
                provider_ttft_ms=self.provider_ttft_ms,
                first_visible_ms=self.first_visible_ms,
                max_gap_ms=self.max_gap_ms,
                stalls=self.stalls,
                stall_ms=self.stall_ms,
                failed_attempts=self.failed_attempts,
                wasted_billed_input_tokens=self.waste_input,
                wasted_output_tokens=self.waste_output,
                wasted_attempt_ms=_timed_sum(self.waste_ms, timed),
                backoff_ms=_timed_sum(self.backoff_ms, timed),
            ),
            **extra,
        )


def _with_share(step: "StepFigures", share: "SettlementFigures | None") -> "tuple[CallFigures, ...]":
    """What a contribution to a step counts in: the step, and the settlement it belongs to (when kept)."""
    return (step,) if share is None else (step, share)


class StepFigures(CallFigures):
    """Per (turn, step) figures: what its settlements count too (:class:`CallFigures`), and the step's own."""

    __slots__ = (
        "turn", "step", "started", "ended", "start", "end", "request_point", "attempts", "messages", "retry_time",
        "tokens", "first_any", "inherited", "reasoning_tokens", "shares", "calls", "call_time", "cost",
    )

    def __init__(self, turn: Any, step: Any):
        super().__init__(None)
        self.turn = turn
        self.step = step
        self.started = False
        self.ended = False
        self.start: int | None = None
        self.end: int | None = None
        self.request_point: int | None = None
        self.attempts = 0
        self.messages = 0
        self.retry_time: int | None = None
        self.tokens: list[int] | None = None  # meter contribution: uncached, output, read, write
        self.first_any: int | None = None
        self.inherited = False
        self.reasoning_tokens: int | None = None  # the meter's share, where usage reports reasoningTokens
        self.shares: list[SettlementFigures] | None = None  # per settlement, when the fold keeps them
        self.calls: list[ToolCallFigures] | None = None  # per tool call, when the fold keeps them
        self.call_time: int | None = None  # when its model call was made: step/start, a retry's llm/retry-started
        self.cost: CostTally | None = None  # the meter's share priced call by call (with prices)

    def row(self, timed: bool, priced: bool) -> StepRecord:
        row: StepRecord = self.step_row(
            StepRecord, self, timed, attempts=self.attempts, tokens=self.tokens, reasoning=self.reasoning_tokens,
            ended=self.ended, costs=(self.cost or CostTally()).record() if priced else UNSET,
        )
        return row


class SettlementFigures(CallFigures):
    """One settlement's share of its step's figures (``StatsFold(keep_settlements=True)``): the fold adds
    to it whatever it adds to the step while this is the step's latest settlement."""

    __slots__ = ("attempt", "retry", "outcome", "seq", "requested", "settled", "buckets", "reasoning", "billed", "charge")

    def __init__(self, attempt: int, retry: int, outcome: str, seq: int, route: str | None, requested: int | None,
                 settled: int | None):
        super().__init__(route)
        self.attempt = attempt
        self.retry = retry
        self.outcome = outcome
        self.seq = seq
        self.requested = requested
        self.settled = settled
        self.buckets: tuple | None = None  # the usage sample (uncached, output, read, write)
        self.reasoning: int | None = None
        self.billed = False  # the meter counts the sample (no later sample of the step replaced it)
        self.charge: tuple | None = None  # what the sample cost at its call's time (with prices)

    def row(self, step: "StepFigures", timed: bool, pricing: Any, *, owner: bool) -> SettlementRecord:
        sample = self.buckets if self.billed else (_NO_TOKENS if self.buckets is not None else None)
        tokens = list(sample) if sample is not None else None
        row: SettlementRecord = self.step_row(
            SettlementRecord, step, timed, attempts=1, tokens=tokens,
            reasoning=self.reasoning if self.billed else (0 if self.reasoning is not None else None),
            ended=step.ended and owner, costs=UNSET if pricing is None else self._cost(tokens).record(),
            attempt=self.attempt,
            retry=self.retry,
            outcome=self.outcome,
            seq=self.seq,
            step_started_at=step.start if timed else None,
            requested_at=self.requested if timed else None,
            settled_at=self.settled if timed else None,
        )
        return row

    def _cost(self, tokens: list[int] | None) -> CostTally:
        """The settlement's share of its step's cost: its sample's charge while the meter counts it, else
        (no usage, or a replaced sample) 0 in its call's currency."""
        tally = CostTally()
        charge = self.charge
        if charge is not None:
            if self.billed and tokens:
                tally.add(charge, sum(tokens))
            else:
                tally.add(charge, 0)
        return tally


def _empty_step_row(step: "StepFigures", timed: bool, pricing: Any) -> SettlementRecord:
    """The one row of a step that has no settlement (its figures are 0 or None, as in its step row)."""
    row = step.row(timed, pricing is not None)
    fields = {name: getattr(row, name) for name in StepRecord.__struct_fields__ if name not in ("kind", "session", "path")}
    return SettlementRecord(
        **fields, attempt=None, retry=step.retries, outcome=None, seq=None,
        step_started_at=step.start if timed else None, requested_at=None, settled_at=None,
    )


class ToolCallFigures:
    """One ``tool/call`` as the fold pairs it (``StatsFold(keep_settlements=True)``)."""

    __slots__ = ("seq", "call_id", "name", "model", "called", "share", "result_seq", "result", "span", "matched",
                 "failed", "error_code", "error_name", "attempt")

    def __init__(self, seq: int, call_id: Any, name: str | None, model: str | None, called: int | None,
                 share: SettlementFigures | None):
        self.seq = seq
        self.call_id = call_id if isinstance(call_id, str) else None
        self.name = name
        self.model = model
        self.called = called
        self.share = share
        self.attempt = share.attempt if share is not None else None
        self.result_seq: int | None = None
        self.result: int | None = None
        self.span: int | None = None
        self.matched = False
        self.failed = False
        self.error_code: str | None = None
        self.error_name: str | None = None

    def row(self, step: "StepFigures", timed: bool) -> ToolCallRecord:
        return ToolCallRecord(
            turn=step.turn,
            step=step.step,
            attempt=self.attempt,
            seq=self.seq,
            call_id=self.call_id,
            name=self.name,
            model=self.model,
            called_at=self.called if timed else None,
            result_seq=self.result_seq,
            result_at=self.result if timed else None,
            tool_ms=self.span if timed else None,
            matched=self.matched,
            failed=self.failed,
            error_code=self.error_code,
            error_name=self.error_name,
            inherited=step.inherited,
        )


class TurnFigures:
    __slots__ = ("turn", "started", "closed", "start", "end", "reason", "steps", "step_ends", "inherited", "prompt")

    def __init__(self, turn: Any):
        self.turn = turn
        self.started = False
        self.closed = False
        self.start: int | None = None
        self.end: int | None = None
        self.reason: str | None = None
        self.steps: dict[Any, StepFigures] = {}
        self.step_ends = 0
        self.inherited = False
        self.prompt: str | None = None  # first line of the turn's first user-typed message


# -- the fold's state, one object per kind of figure --------------------------------------------------


class DshSessionStats:
    """dsh's ``sessionStats`` (§7.1): its sums, the open step, and the tool calls awaiting a result."""

    __slots__ = (
        "turns", "steps", "llm_ms", "tool_ms", "ttft_ms", "ttft_steps", "decode_ms", "decode_tokens",
        "last_turn", "last_turn_set", "open_key", "open_start", "open_first", "pending_calls",
    )

    def __init__(self) -> None:
        self.turns = 0
        self.steps = 0
        self.llm_ms = 0
        self.tool_ms = 0
        self.ttft_ms = 0
        self.ttft_steps = 0
        self.decode_ms = 0
        self.decode_tokens: int | float = 0  # outputTokens may be a float (JSON numbers)
        self.last_turn: Any = None
        self.last_turn_set = False
        self.open_key: tuple | None = None
        self.open_start: int | None = None
        self.open_first: int | None = None
        self.pending_calls: dict[Any, tuple[int | None, StepFigures, str | None, ToolCallFigures | None]] = {}


class ModelFigures:
    """One model's share (``provider/model``, None when unknown): dsh's sums and dshctl's counts.

    A step belongs to the model of its message (else of the request header its attempts used); its
    ``step/end``, model time and tool time count there, so the models' shares add up to the session's."""

    __slots__ = (
        "settlements", "messages", "tokens", "ttft_ms", "ttft_steps", "decode_ms", "decode_tokens",
        "steps", "turns", "llm_ms", "tool_ms", "reasoning", "cost",
    )

    def __init__(self) -> None:
        self.settlements = 0
        self.messages = 0
        self.tokens: list[int] | None = None
        self.ttft_ms = 0
        self.ttft_steps = 0
        self.decode_ms = 0
        self.decode_tokens: int | float = 0
        self.steps = 0
        self.turns: set = set()  # turn numbers with a step/end of this model
        self.llm_ms = 0
        self.tool_ms = 0
        self.reasoning: int | None = None  # the meter's reasoning tokens, where usage reports them
        self.cost: CostTally | None = None  # its calls priced each at its own time (with prices)


class ToolFigures:
    """One tool's calls (``tool/call.name``): how many, how many results said it failed, dsh's tool time."""

    __slots__ = ("calls", "failures", "tool_ms")

    def __init__(self) -> None:
        self.calls = 0
        self.failures = 0
        self.tool_ms = 0


class TokenMeter:
    """dsh's token meter (§7.3, the 0.1.5 line): totals and the one replacement slot of the latest sample."""

    __slots__ = ("totals", "slot_key", "slot_buckets", "slot_step", "slot_route", "slot_reasoning", "slot_share", "slot_charge", "slot_minute")

    def __init__(self) -> None:
        self.slot_share: Any = None  # the settlement whose sample fills the slot (``keep_settlements``)
        self.totals: list[int] | None = None
        self.slot_key: tuple | None = None
        self.slot_buckets: tuple | None = None
        self.slot_step: StepFigures | None = None
        self.slot_route: str | None = None
        self.slot_reasoning: int | None = None
        self.slot_charge: tuple | None = None  # what the slot's sample cost (with prices)
        self.slot_minute: int | None = None  # the minute of its call (:mod:`dshctl.stats.billing`)

    def close_slot(self) -> None:
        """``llm/retry-started``: the step's next sample adds to the meter instead of replacing."""
        self.slot_key = None
        self.slot_buckets = None
        self.slot_step = None
        self.slot_route = None
        self.slot_reasoning = None
        self.slot_share = None
        self.slot_charge = None
        self.slot_minute = None


class TokenMeter011:
    """dsh 0.1.1's meter: the last sample of a step replaces the step's earlier ones, retries included."""

    __slots__ = ("totals", "key", "buckets")

    def __init__(self) -> None:
        self.totals: list[int] | None = None
        self.key: tuple | None = None
        self.buckets: tuple | None = None

    def add(self, key: tuple, buckets: tuple) -> None:
        if self.key == key and self.buckets is not None:
            self.totals = _add_buckets(self.totals, self.buckets, -1)
        self.totals = _add_buckets(self.totals, buckets)
        self.key = key
        self.buckets = buckets


class ContextPressure:
    """dsh's context pressure (§7.5): the latest sample's prompt-side tokens and the latest window."""

    __slots__ = ("tokens", "window")

    def __init__(self) -> None:
        self.tokens: int | None = None
        self.window: int | None = None


class OwnFigures:
    """dshctl's own session figures (not computed by dsh)."""

    __slots__ = (
        "attempts", "messages", "interrupted_messages", "failed_attempts", "retries", "tool_calls",
        "unmatched_results", "header_route", "models", "waste_input", "waste_output", "waste_ms", "backoff_ms",
        "tools", "title", "working_directory", "first_time", "last_time",
    )

    def __init__(self) -> None:
        self.attempts = 0
        self.messages = 0
        self.interrupted_messages = 0
        self.failed_attempts = 0
        self.retries = 0
        self.tool_calls = 0
        self.unmatched_results = 0
        self.header_route: str | None = None  # provider/model of the latest request/header
        self.models: dict[str | None, ModelFigures] = {}
        self.waste_input = 0
        self.waste_output = 0
        self.waste_ms = 0
        self.backoff_ms = 0
        self.tools: dict[str | None, ToolFigures] = {}
        self.title: str | None = None  # the latest session/title
        self.working_directory: str | None = None  # the cwd of the latest working-directory/change
        self.first_time: int | None = None  # earliest and latest envelope time: the session's duration
        self.last_time: int | None = None

    def model(self, route: str | None) -> ModelFigures:
        model = self.models.get(route)
        if model is None:
            model = self.models[route] = ModelFigures()
        return model

    def tool(self, name: str | None) -> ToolFigures:
        tool = self.tools.get(name)
        if tool is None:
            tool = self.tools[name] = ToolFigures()
        return tool


class StatsFold:
    """Feed events in log order with :meth:`feed` (or :meth:`run`), then read :meth:`session`."""

    def __init__(
        self,
        *,
        keep_turns: bool = False,
        keep_steps: bool = False,
        seed_length: int | None = None,
        pricing: Any = None,
        keep_settlements: bool = False,
    ):
        self.keep_turns = keep_turns
        # one row per settlement and per tool call (``dshctl export``); stats itself never asks for them
        self.keep_settlements = keep_settlements
        self.settlement_rows: list[SettlementRecord] = []
        self.tool_call_rows: list[ToolCallRecord] = []
        # prices each model call at its own time (:class:`dshctl.stats.prices.Pricer`); None: no costs
        self.pricing = pricing
        self.keep_steps = keep_steps
        # the fork/seed cut: v0/v1 name it in the header (the end-seed sits at seq seedLength), v2+ mark it
        # with session/end-seed {inherited: true}
        self.seed_length = seed_length
        self.prefix: InheritedPrefix | None = None  # what the events before the cut contributed
        self.dsh = DshSessionStats()
        self.meter = TokenMeter()
        self.meter011 = TokenMeter011()
        self.context = ContextPressure()
        self.own = OwnFigures()
        # what the log says about its times
        self.timing_known = True
        self.placeholder_times = False
        self.outside_steps = 0  # settlements outside any step/start…step/end
        # rows and observations
        self.turn_rows: list[TurnRecord] = []
        self.step_rows: list[StepRecord] = []
        self.observed = StatsSamples.empty()
        self.observed.spark = array("d")  # tok/s per step in log order; NaN where unknown
        # what the meter counts, by the minute of each call and its model (the samples' field, typed here
        # as never None: the compiled build needs the fold to type-check)
        self._billing: dict = {}
        self.observed.billing = self._billing
        # the turns and steps still open
        self.turn_records: dict[Any, TurnFigures] = {}
        self.current_turn: TurnFigures | None = None
        self.current_step: StepFigures | None = None
        # every turn a record was opened for, as bounds (int turns) and whether an unnumbered one was: the
        # split reader's proof that its parts share no turn-keyed state (:mod:`dshctl.stats.split`)
        self.turn_bounds: list[int] | None = None
        self.unnumbered_turn = False
        self._handlers = {
            "assistant/message": self._message,
            "assistant/attempt": self._attempt,
            "tool/call": self._tool_call,
            "tool/result": self._tool_result,
            "step/start": self._step_start,
            "step/end": self._step_end,
            "turn/start": self._turn_start,
            "turn/end": self._turn_end,
            "request/header": self._request_header,
            "request/context": self._request_context,
            "llm/retry": self._retry,
            "llm/retry-started": self._retry_started,
            "session/end-seed": self._end_seed,
            "session/title": self._title,
            "working-directory/change": self._working_directory,
        }
        if keep_turns:  # only turn rows show a prompt; otherwise a user/message is just a request point
            self._handlers["user/message"] = self._user_message

    # -- driving -------------------------------------------------------------------------------------

    def run(self, events: Iterable[Event]) -> "StatsFold":
        handlers = self._handlers
        request_points = REQUEST_POINT_TYPES
        for event in events:
            kind = event.type
            handler = handlers.get(kind)
            if handler is not None:
                handler(event)
            elif kind in request_points:
                self._request_point(event)
        self.finish()
        return self

    def close_ended_turns(self) -> None:
        """Finalize now every turn whose ``turn/end`` was read, instead of at the next ``turn/start``.
        ``--follow`` calls it when the log pauses, so a turn's row comes out when the turn ends; the rows
        are the same unless a later event still adds to an ended turn, which dsh's loop order never does."""
        records = self.turn_records
        for turn in [turn for turn, record in records.items() if record.closed]:
            self._finalize_turn(records.pop(turn))

    def feed(self, event: Event) -> None:
        handler = self._handlers.get(event.type)
        if handler is not None:
            handler(event)
        elif event.type in REQUEST_POINT_TYPES:
            self._request_point(event)

    # -- records ---------------------------------------------------------------------------------------

    def _turn(self, turn: Any) -> TurnFigures:
        record = self.turn_records.get(turn)
        if record is None:
            record = self.turn_records[turn] = TurnFigures(turn)
            self._opened(turn)
        return record

    def _opened(self, turn: Any) -> None:
        bounds = self.turn_bounds
        if turn is None:
            self.unnumbered_turn = True
        elif bounds is None:
            self.turn_bounds = [turn, turn]
        elif turn < bounds[0]:
            bounds[0] = turn
        elif turn > bounds[1]:
            bounds[1] = turn

    def _step(self, turn: Any, step: Any) -> StepFigures:
        record = self._turn(turn)
        found = record.steps.get(step)
        if found is None:
            found = record.steps[step] = StepFigures(turn, step)
        return found

    def _close_turns(self, keep: Any = None) -> None:
        """Finalize every turn record except ``keep`` (the turn just opened)."""
        records = self.turn_records
        for turn in [t for t in records if t != keep or keep is None]:
            self._finalize_turn(records.pop(turn))

    def _finalize_turn(self, record: TurnFigures) -> None:
        steps = sorted(record.steps.values(), key=lambda s: (s.step if isinstance(s.step, int) else -1))
        placed = [s for s in steps if s.started or s.ended]
        for step in steps:
            if not (step.started or step.ended):
                self.outside_steps += 1
        totals: list[int] | None = None
        cost = CostTally() if self.pricing is not None else None
        reasoning: int | None = None
        decode_ms = 0
        decode_tokens: int | float = 0
        llm_ms = 0
        tool_ms = 0
        ttft = None
        ttft_step = None
        attempts = retries = tool_calls = 0
        if self.keep_settlements:
            for step in steps:
                self._settlement_rows(step)
        for step in steps:
            if step.tokens is not None:
                totals = _add_buckets(totals, step.tokens)
            if step.cost is not None and cost is not None:
                cost.merge(step.cost)
            if step.reasoning_tokens is not None:
                reasoning = (reasoning or 0) + step.reasoning_tokens
        for step in placed:
            attempts += step.attempts
            retries += step.retries
            tool_calls += step.tool_calls
            if step.llm_ms is not None:
                llm_ms += step.llm_ms
                # dsh's turn footer: TTFT of the lowest-numbered step that produced a message
                if ttft_step is None:
                    ttft_step = step.step
                    ttft = step.ttft_ms
            if step.tool_ms is not None:
                tool_ms += step.tool_ms
            if step.decode_ms is not None:
                decode_ms += step.decode_ms
                decode_tokens += step.decode_tokens or 0
            self._observe_step(step)
        if not (record.started or placed):
            return
        if totals is not None:
            self.observed.output_tokens_per_turn.append(totals[1])
            self.observed.billed_input_tokens_per_turn.append(totals[0] + totals[2] + totals[3])
        if self.keep_turns:
            timed = self.timing_known
            tokens_timed = self._first_tokens_timed()
            duration = None
            if record.start is not None and record.end is not None:
                duration = max(0, record.end - record.start)
            self.turn_rows.append(
                TurnRecord(
                    turn=record.turn,
                    steps=record.step_ends,
                    ttft_ms=ttft,
                    ttft_step=ttft_step,
                    llm_ms=_timed_sum(llm_ms, timed),
                    decode_ms=_timed_sum(decode_ms, tokens_timed),
                    decode_tokens=_timed_sum(decode_tokens, tokens_timed),
                    tokens_per_second=rate(decode_tokens, decode_ms),
                    # dsh's latestTurnBilling settles nothing for a turn without usage: null, not 0
                    **_bucket_fields(totals),
                    tool_calls=tool_calls,
                    tool_ms=_timed_sum(tool_ms, timed),
                    attempts=attempts,
                    retries=retries,
                    duration_ms=duration,
                    end_reason=record.reason,
                    inherited=record.inherited,
                    step_rates=[rate(s.decode_tokens, s.decode_ms) for s in placed],
                    start_time=record.start if timed else None,
                    prompt=record.prompt,
                    reasoning_tokens=reasoning,
                    costs=UNSET if cost is None else cost.record(),
                )
            )

    def _settlement_rows(self, step: StepFigures) -> None:
        """A finished step's rows per settlement and per tool call (``keep_settlements``)."""
        timed = self.timing_known
        pricing = self.pricing
        shares = step.shares
        if not shares:
            if step.started or step.ended:
                self.settlement_rows.append(_empty_step_row(step, timed, pricing))
        else:
            owner = _owner(shares)
            for share in shares:
                self.settlement_rows.append(share.row(step, timed, pricing, owner=share is owner))
        for call in step.calls or ():
            self.tool_call_rows.append(call.row(step, timed))

    def _share(self, record: StepFigures) -> "SettlementFigures | None":
        """The step's latest settlement (what its later tool calls and retries belong to)."""
        shares = record.shares
        return shares[-1] if shares else None

    def _counted(self, record: StepFigures) -> tuple[CallFigures, ...]:
        """What a contribution to the step ``record`` counts in: the step, and its latest settlement."""
        return _with_share(record, self._share(record) if self.keep_settlements else None)

    def _observe_step(self, step: StepFigures) -> None:
        """A finished step's observations, and its row when the steps are kept."""
        observed = self.observed
        if step.ttft_ms is not None:
            observed.ttft_ms.append(step.ttft_ms)
        step_rate = rate(step.decode_tokens, step.decode_ms)
        if step_rate is not None:
            observed.tokens_per_second.append(step_rate)
        spark = observed.spark
        if spark is not None:
            spark.append(step_rate if step_rate is not None else float("nan"))
        if step.provider_ttft_ms is not None:
            observed.provider_ttft_ms.append(step.provider_ttft_ms)
        if step.first_visible_ms is not None:
            observed.first_visible_ms.append(step.first_visible_ms)
        if self.keep_steps:
            self.step_rows.append(step.row(self.timing_known, self.pricing is not None))

    # -- handlers -------------------------------------------------------------------------------------

    def _request_point(self, event: Event) -> None:
        step = self.current_step
        if step is not None and event.time is not None:
            step.request_point = event.time

    def _title(self, event: Event) -> None:
        data = event.data
        title = data.get("title") if data.__class__ is dict else None
        if isinstance(title, str):
            self.own.title = title

    def _working_directory(self, event: Event) -> None:
        data = event.data
        cwd = data.get("cwd") if data.__class__ is dict else None
        if isinstance(cwd, str):
            self.own.working_directory = cwd

    def _user_message(self, event: Event) -> None:
        """A request point; the turn's first message the user typed gives its prompt preview (§7.6)."""
        self._request_point(event)
        turn = self.current_turn
        if turn is None or turn.prompt is not None:
            return
        data = event.data
        source = data.get("source") if data.__class__ is dict else None
        if isinstance(source, dict) and source.get("kind") == "user":
            turn.prompt = _first_line(data.get("content"))

    def _seen_time(self, time: int | None) -> None:
        """The latest closing time seen (``turn/end``, ``step/end``): the end of the session's duration."""
        own = self.own
        if time is not None and (own.last_time is None or time > own.last_time):
            own.last_time = time

    def _turn_start(self, event: Event) -> None:
        if event.time is None:
            self.timing_known = False
        elif self.own.first_time is None:
            self.own.first_time = event.time
        turn = _turn_of(event)
        self._close_turns(keep=turn)
        record = self._turn(turn)
        record.started = True
        if record.start is None:
            record.start = event.time
        self.current_turn = record

    def _turn_end(self, event: Event) -> None:
        # dsh: unmatched calls are dropped at every turn/end
        dsh = self.dsh
        if dsh.pending_calls:
            dsh.pending_calls = {}
        record = self._turn(_turn_of(event))
        record.closed = True
        record.end = event.time
        self._seen_time(event.time)
        data = event.data
        reason = data.get("reason") if isinstance(data, dict) else None
        if isinstance(reason, dict) and isinstance(reason.get("kind"), str):
            record.reason = reason["kind"]
        elif isinstance(reason, str):
            record.reason = reason
        self.current_step = None

    def _step_start(self, event: Event) -> None:
        turn, step = _turn_and_step(event)
        time = event.time
        dsh = self.dsh
        dsh.open_key = (turn, step)
        dsh.open_start = time
        dsh.open_first = None
        if time is None:
            self.timing_known = False
        record = self._step(turn, step)
        record.started = True
        if record.start is None:
            record.start = time
            record.call_time = time
        record.request_point = time
        self.current_step = record

    def _step_end(self, event: Event) -> None:
        if event.time is None:
            self.timing_known = False
        turn, step = _turn_and_step(event)
        dsh = self.dsh
        dsh.steps += 1
        if not dsh.last_turn_set or dsh.last_turn != turn:
            dsh.turns += 1
        dsh.last_turn = turn
        dsh.last_turn_set = True
        dsh.open_key = None
        record = self._step(turn, step)
        record.ended = True
        record.end = event.time
        self._seen_time(event.time)
        self._turn(turn).step_ends += 1
        model = self.own.model(record.route)
        model.steps += 1
        model.turns.add(turn)
        if self.current_step is record:
            self.current_step = None

    def _end_seed(self, event: Event) -> None:
        if event.time is None:
            self.timing_known = False
        data = event.data
        tagged = data.__class__ is dict and data.get("inherited") is True
        if tagged or (self.seed_length is not None and event.seq == self.seed_length):
            self._mark_prefix()

    def _mark_prefix(self) -> None:
        """Everything read so far was inherited: keep what it contributed. A later cut (a seed of a
        seed) replaces this one; the last is the log's cut."""
        records = self.turn_records
        for turn in [t for t, record in records.items() if record.closed]:
            self._finalize_turn(records.pop(turn))
        for record in records.values():  # a turn still open at the cut is the parent's turn
            record.inherited = True
            for step in record.steps.values():
                step.inherited = True
        for turn_row in self.turn_rows:
            turn_row.inherited = True
        for step_row in self.step_rows:
            step_row.inherited = True
        for settlement_row in self.settlement_rows:
            settlement_row.inherited = True
        for call_row in self.tool_call_rows:
            call_row.inherited = True
        self.prefix = InheritedPrefix(record=self.session(), samples=self.samples().snapshot())

    def _request_header(self, event: Event) -> None:
        data = event.data
        header = data.get("header") if isinstance(data, dict) else None
        config = header.get("config") if isinstance(header, dict) else None
        if isinstance(config, dict):
            self.own.header_route = _route_key(config.get("provider"), config.get("model"))
        self._request_point(event)

    def _request_context(self, event: Event) -> None:
        data = event.data
        window = data.get("contextWindow") if isinstance(data, dict) else None
        self.context.window = window if window.__class__ is int and window > 0 else None
        self._request_point(event)

    def _retry(self, event: Event) -> None:
        self.own.retries += 1
        record = self._step(*_turn_and_step(event))
        record.retry_time = event.time
        for figures in self._counted(record):
            figures.retries += 1

    def _retry_started(self, event: Event) -> None:
        key = _turn_and_step(event)
        if self.meter.slot_key == key:
            self.meter.close_slot()
        record = self._step(*key)
        if record.retry_time is not None and event.time is not None:
            span = max(0, event.time - record.retry_time)
            self.own.backoff_ms += span
            record.retry_time = None
            for figures in self._counted(record):
                figures.add_backoff(span)
        if event.time is not None:
            record.request_point = event.time
            record.call_time = event.time  # the retried call is made now

    def _tool_call(self, event: Event) -> None:
        data = event.data
        call_id = data.get("callId") if isinstance(data, dict) else None
        name = data.get("name") if isinstance(data, dict) else None
        name = name if isinstance(name, str) else None
        record = self._step(*_turn_and_step(event))
        self.own.tool_calls += 1
        self.own.tool(name).calls += 1
        call = None
        share = self._share(record) if self.keep_settlements else None
        for figures in _with_share(record, share):
            figures.add_tool_call(name)
        if self.keep_settlements:
            call = ToolCallFigures(event.seq, call_id, name, record.route, event.time, share)
            if record.calls is None:
                record.calls = []
            record.calls.append(call)
        try:
            self.dsh.pending_calls[call_id] = (event.time, record, name, call)
        except TypeError:  # an unhashable callId cannot pair with anything
            pass

    def _tool_result(self, event: Event) -> None:
        call_id = tool_result_call_id(event)
        pending = self.dsh.pending_calls.pop(call_id, None) if call_id is not None else None
        if pending is None:
            self.own.unmatched_results += 1
            return
        dispatched, record, name, call = pending
        tool = self.own.tool(name)
        failed = _tool_failed(event)
        if failed:
            tool.failures += 1
        if call is not None:
            call.matched = True
            call.failed = failed
            call.result_seq = event.seq
            call.result = event.time
            call.error_name, call.error_code = _tool_error(event)
        if dispatched is None or event.time is None:
            return
        span = max(0, event.time - dispatched)
        if call is not None:
            call.span = span
        for figures in _with_share(record, call.share if call is not None else None):
            figures.add_tool_ms(span)
        self.dsh.tool_ms += span
        tool.tool_ms += span
        self.own.model(record.route).tool_ms += span
        _append(self.observed.tool_ms, name, span)

    # -- settlements ------------------------------------------------------------------------------------

    def _meter_sample(
        self, key: tuple, buckets: tuple, record: StepFigures, route: str | None, reasoning: int | None, time: int | None
    ) -> None:
        """A usage sample into the token meter's replacement slot (0.1.5 line), and into the step's and
        the model's share of it (reasoning tokens, a part of output, follow the same slot), and into the
        billing of its call's minute. With prices the sample is charged at its call's time; a replaced
        sample's charge and billing are taken away."""
        meter = self.meter
        model_of = self.own.model
        previous = meter.slot_buckets if meter.slot_key == key else None
        if previous is not None and previous == buckets and meter.slot_reasoning == reasoning:
            return
        share = self._share(record) if self.keep_settlements else None
        if share is not None:
            if previous is not None and meter.slot_share is not None:
                meter.slot_share.billed = False
            share.billed = True
        meter.slot_share = share
        pricing = self.pricing
        if previous is not None:
            meter.totals = _add_buckets(meter.totals, previous, -1)
            previous_step = meter.slot_step
            previous_model = model_of(meter.slot_route)
            if pricing is not None and meter.slot_charge is not None:
                self._charge(meter.slot_charge, sum(previous), previous_step, previous_model, -1)
            bill(self._billing, meter.slot_minute, meter.slot_route, previous, meter.slot_reasoning, meter.slot_charge, -1)
            if previous_step is not None:
                previous_step.tokens = _add_buckets(previous_step.tokens, previous, -1)
                if meter.slot_reasoning is not None:  # it added them to the step's: never None here
                    previous_step.reasoning_tokens = (previous_step.reasoning_tokens or 0) - meter.slot_reasoning
            previous_model.tokens = _add_buckets(previous_model.tokens, previous, -1)
            if meter.slot_reasoning is not None:
                previous_model.reasoning = (previous_model.reasoning or 0) - meter.slot_reasoning
        meter.totals = _add_buckets(meter.totals, buckets)
        record.tokens = _add_buckets(record.tokens, buckets)
        call_time = record.call_time if record.call_time is not None else time
        charge = None
        if pricing is not None:  # a sample of 0 tokens too: it costs 0 in its route's currency
            charge = pricing.charge(route, call_time, buckets)
            self._charge(charge, sum(buckets), record, model_of(route), 1)
        minute = minute_of(call_time)
        bill(self._billing, minute, route, buckets, reasoning, charge, 1)
        meter.slot_charge = charge
        meter.slot_minute = minute
        if share is not None:
            share.charge = charge
        if reasoning is not None:
            record.reasoning_tokens = (record.reasoning_tokens or 0) + reasoning
        model = model_of(route)
        model.tokens = _add_buckets(model.tokens, buckets)
        if reasoning is not None:
            model.reasoning = (model.reasoning or 0) + reasoning
        meter.slot_key = key
        meter.slot_buckets = buckets
        meter.slot_step = record
        meter.slot_route = route
        meter.slot_reasoning = reasoning

    def _free_call(self, pricing: Any, record: StepFigures, route: str | None, time: int | None, share: Any) -> None:
        """A call without usage: the meter counts nothing, but the call costs 0 in its route's currency
        at its time (a session of such calls alone costs ``0 USD``, as its turns do)."""
        call_time = record.call_time if record.call_time is not None else time
        charge = pricing.charge(route, call_time, _NO_TOKENS)
        self._charge(charge, 0, record, self.own.model(route), 1)
        bill_free(self._billing, minute_of(call_time), route, charge)
        if share is not None:
            share.charge = charge

    def _charge(self, charge: tuple, tokens: int, step: StepFigures | None, model: ModelFigures, sign: int) -> None:
        """A call's charge into (or, ``sign`` -1, out of) the step's and the model's costs (the session's
        are the sum of its models')."""
        if step is not None:
            if step.cost is None:
                step.cost = CostTally()
            step.cost.add(charge, tokens, sign)
        if model.cost is None:
            model.cost = CostTally()
        model.cost.add(charge, tokens, sign)

    def _first_token(self, stream: list, event: Event) -> int | None:
        """First token time of a settlement's stream; a time of 0 beside a real envelope time is a
        placeholder (dsh's complete-envelope fixtures) and counts as unknown."""
        if not stream:
            return None
        first = first_token_time(stream)
        if first == 0 and (event.time or 0) > 0:
            self.placeholder_times = True
            return None
        return first

    def _settlement_common(
        self, event: Event, stream: list, record: StepFigures, usage: Any, route: str | None, first: int | None
    ) -> tuple | None:
        self.own.attempts += 1
        record.attempts += 1
        self.own.model(route).settlements += 1
        buckets = _usage_buckets(usage) if usage is not None else None
        share = None
        if self.keep_settlements:
            share = SettlementFigures(
                record.attempts, record.retries, "message" if event.type == "assistant/message" else "attempt",
                event.seq, route, record.request_point, event.time,
            )
            if record.shares is None:
                record.shares = []
            record.shares.append(share)
            if buckets is not None:
                share.buckets = buckets
                share.reasoning = _reasoning_tokens(usage)
        if buckets is not None:
            key = (record.turn, record.step)
            self._meter_sample(key, buckets, record, route, _reasoning_tokens(usage), event.time)
            self.meter011.add(key, buckets)
            self.context.tokens = buckets[0] + buckets[2] + buckets[3]
        elif self.pricing is not None:
            self._free_call(self.pricing, record, route, event.time, share)
        kind, code = _finish_and_failure(stream)
        for figures in _with_share(record, share):
            figures.finish = kind
            figures.failure = code
        if stream:
            # the step's are its first attempt's (with a first token, with a visible chunk); each settlement's its own
            point = record.request_point
            provider = max(0, first - point) if first is not None and point is not None else None
            if record.first_any is None and first is not None:
                record.first_any = first
                record.provider_ttft_ms = provider
            wanted = share is not None or record.first_visible_ms is None
            visible = _first_visible_ms(stream, record.start) if wanted and record.start is not None else None
            if share is not None:
                share.provider_ttft_ms = provider
                share.first_visible_ms = visible
            if record.first_visible_ms is None:
                record.first_visible_ms = visible
            self._gaps(stream, record, share)
        return buckets

    def _attempt(self, event: Event) -> None:
        stream = event.stream or []
        key = _turn_and_step(event)
        first = self._first_token(stream, event)
        # dsh sessionStats: the first token of any attempt of the open step
        dsh = self.dsh
        if dsh.open_key == key and dsh.open_first is None and first is not None:
            dsh.open_first = first
        record = self._step(*key)
        usage = last_raw_chunk(stream, "usage") if stream else None
        usage = usage.get("usage") if usage is not None else None
        own = self.own
        route = own.header_route
        buckets = self._settlement_common(event, stream, record, usage, route, first)
        if record.route is None:
            record.route = route
        wasted_in = buckets[0] + buckets[2] + buckets[3] if buckets is not None else None
        wasted_out = buckets[1] if buckets is not None else 0
        span = max(0, event.time - record.request_point) if event.time is not None and record.request_point is not None else None
        own.failed_attempts += 1
        if wasted_in is not None:
            own.waste_input += wasted_in
            own.waste_output += wasted_out
        if span is not None:
            own.waste_ms += span
        for figures in self._counted(record):
            figures.add_failed_attempt(wasted_in, wasted_out, span)

    def _message(self, event: Event) -> None:
        stream = event.stream or []
        data = event.data if event.data.__class__ is dict else {}
        key = _turn_and_step(event)
        record = self._step(*key)
        message = message_of(event) or {}
        source = message.get("source")
        route = _route_key(source.get("provider"), source.get("model")) if isinstance(source, dict) else None
        record.route = route
        own = self.own
        own.messages += 1
        record.messages += 1
        model = own.model(route)
        model.messages += 1
        if data.get("interrupted") is True:
            record.interrupted = True
            own.interrupted_messages += 1
        own_first = self._first_token(stream, event)
        # dsh's step readings on this message: its model time, time to first token, generation, decode tokens
        span: int | None = None
        ttft: int | None = None
        generation: int | None = None
        decoded: int | float | None = None
        # dsh sessionStats
        dsh = self.dsh
        if dsh.open_key == key:
            dsh.open_key = None
            start = dsh.open_start
            time = event.time
            if start is not None and time is not None:
                first = dsh.open_first if dsh.open_first is not None else own_first
                span = max(0, time - start)
                dsh.llm_ms += span
                model.llm_ms += span
                if first is not None:
                    ttft = max(0, first - start)
                    dsh.ttft_ms += ttft
                    dsh.ttft_steps += 1
                    _append(self.observed.model_ttft, route, ttft)
                    generation = max(0, time - first)
                    model.ttft_ms += ttft
                    model.ttft_steps += 1
                    usage = data.get("usage")
                    output = usage.get("outputTokens") if usage.__class__ is dict else None
                    if (output.__class__ is int or output.__class__ is float) and 0 <= output < _INF:
                        dsh.decode_ms += generation
                        dsh.decode_tokens += output
                        model.decode_ms += generation
                        model.decode_tokens += output
                        decoded = output
        usage = data.get("usage")
        if usage is None and stream:
            chunk = last_raw_chunk(stream, "usage")
            usage = chunk.get("usage") if chunk is not None else None
        self._settlement_common(event, stream, record, usage, route, own_first)
        share = self._share(record) if self.keep_settlements else None
        if share is not None:
            share.interrupted = data.get("interrupted") is True
        if span is not None:
            for figures in _with_share(record, share):
                figures.add_timing(span, ttft, generation, decoded)

    # -- inter-token gaps (dshctl) --------------------------------------------------------------------------

    def _gaps(self, stream: list, record: StepFigures, share: SettlementFigures | None = None) -> None:
        """Gaps between consecutive token deltas of one attempt, from member times (``dt``), in ms.

        Runs add their ``dt`` lists to the histogram whole (C speed); only gaps between records are
        computed here. Negative gaps (a clock stepping back) are clamped to 0 when reported. Records at
        time 0 are placeholders: gaps across them are skipped, gaps inside a run are kept. A run with
        empty members (not tokens) is walked member by member.
        """
        histogram = self.observed.gaps
        keep = self.keep_steps or share is not None
        previous: int | None = None
        between: list[int] = []
        runs: list[list[int]] = []
        for item in stream:
            cls = item.__class__
            if cls is RawChunk:
                if not is_token_delta(item.chunk):
                    continue
                time = item.time
                if time == 0:
                    previous = None
                    continue
                if previous is not None:
                    between.append(time - previous)
                previous = time
                continue
            if cls is ToolCallChunks:
                members = item.args
                whole = item.name.__class__ is str or all(members)  # no empty member (each is a str)
            else:
                members = item.texts
                whole = all(members)
            if whole:
                time0 = item.time0
                dt = item.dt
                if time0 != 0 and previous is not None:
                    between.append(time0 - previous)
                if dt:
                    count_gaps(histogram, dt)
                    if keep:
                        runs.append(dt)
                    previous = None if time0 == 0 else time0 + sum(dt)
                else:
                    previous = None if time0 == 0 else time0
                continue
            placeholder = item.time0 == 0
            for time, member in zip(run_times(item), members):
                if member == "":
                    continue
                if previous is not None:
                    between.append(time - previous)
                previous = time
            if placeholder:
                previous = None
        if between:
            count_gaps(histogram, between)
            if keep:
                runs.append(between)
        if keep and runs:
            top = max(max(gaps) for gaps in runs)
            for figures in _with_share(record, share):
                figures.add_gaps(top, runs)

    # -- results ---------------------------------------------------------------------------------------------

    def finish(self) -> None:
        self._close_turns()

    def _first_tokens_timed(self) -> bool:
        """Whether first-token times are real: envelope times exist and stream records are not placeholders."""
        return self.timing_known and not self.placeholder_times

    def _clamp_gaps(self) -> None:
        """Negative gaps (a clock stepping back) count as 0 from here on."""
        gaps = self.observed.gaps
        negative = [gap for gap in gaps if gap < 0]
        if negative:
            for gap in negative:
                gaps[0] += gaps.pop(gap)

    def session(self) -> SessionRecord:
        """The session record's figures (dsh's at the top level, dshctl's under ``dshctl``); the log's
        identity is left at its defaults (:func:`~dshctl.stats.results.folded_stats` fills it in)."""
        timed = self.timing_known
        tokens_timed = self._first_tokens_timed()
        dsh = self.dsh
        totals = self.meter.totals or _NO_TOKENS
        hit = cache_hit_percent(totals[2], totals[0] + totals[2] + totals[3], totals[0] + totals[3])
        ttft_ms = _timed_sum(dsh.ttft_ms, tokens_timed)
        decode_ms = _timed_sum(dsh.decode_ms, tokens_timed)
        decode_tokens = _timed_sum(dsh.decode_tokens, tokens_timed)
        pressure = self.context
        return SessionRecord(
            turns=dsh.turns,
            steps=dsh.steps,
            llm_ms=_timed_sum(dsh.llm_ms, timed),
            tool_ms=_timed_sum(dsh.tool_ms, timed),
            ttft_ms=ttft_ms,
            ttft_steps=dsh.ttft_steps,
            mean_ttft_ms=number(mean(ttft_ms, dsh.ttft_steps)),
            decode_ms=decode_ms,
            decode_tokens=decode_tokens,
            tokens_per_second=rate(decode_tokens, decode_ms),
            **_bucket_fields(totals),
            cache_hit_percent=percent_number(hit),
            context_window=pressure.window,
            pressure_tokens=pressure.tokens,
            context_occupancy_percent=occupancy_percent(pressure.tokens, pressure.window),
            inherited=_inherited_figures(self.prefix),
            title=self.own.title,
            working_directory=self._last_working_directory(),
            duration_ms=self._duration_ms(),
            reasoning_tokens=self._reasoning_total(),
            costs=UNSET if self.pricing is None else self._session_cost().record(),
            notes=self._notes(),
            dshctl=self._own_record(),
        )

    def _last_working_directory(self) -> str | UnsetType:
        """``workingDirectory``: the session's effective directory at the end of the log as dsh's
        working-directory projection folds it, for a log that moves it (dsh 0.2.1+); absent otherwise: the
        header's ``cwd`` is then the session's directory."""
        cwd = self.own.working_directory
        return UNSET if cwd is None else cwd

    def _session_cost(self) -> CostTally:
        total = CostTally()
        for model in self.own.models.values():
            if model.cost is not None:
                total.merge(model.cost)
        return total

    def _duration_ms(self) -> int | None:
        """The first ``turn/start`` to the last ``turn/end`` or ``step/end``."""
        own = self.own
        if not self.timing_known or own.first_time is None or own.last_time is None:
            return None
        return max(0, own.last_time - own.first_time)

    def _reasoning_total(self) -> int | None:
        reported = [m.reasoning for m in self.own.models.values() if m.reasoning is not None]
        return sum(reported) if reported else None

    def _notes(self) -> list[str]:
        notes = []
        if not self.timing_known:
            notes.append(_NO_TIME)
        if self.placeholder_times:
            notes.append(_PLACEHOLDER)
        if self.outside_steps:
            notes.append(f"{self.outside_steps} settlement(s) outside any step/start…step/end: counted in tokens only")
        return notes

    def _own_record(self) -> SessionOwnFigures:
        """dshctl's own figures of the session record (its ``dshctl`` object)."""
        timed = self.timing_known
        own = self.own
        observed = self.observed
        self._clamp_gaps()
        gaps = observed.gaps
        return SessionOwnFigures(
            attempts=own.attempts,
            messages=own.messages,
            interrupted_messages=own.interrupted_messages,
            retries=own.retries,
            tool_calls=own.tool_calls,
            unmatched_tool_results=own.unmatched_results,
            provider_ttft_ms=mean_and_percentiles(observed.provider_ttft_ms),
            first_visible_ms=mean_and_percentiles(observed.first_visible_ms),
            inter_token_gap_ms=counter_percentiles(gaps),
            stalls=sum(count for gap, count in gaps.items() if gap > STALL_MS),
            stall_ms=sum(gap * count for gap, count in gaps.items() if gap > STALL_MS),
            retry_waste=RetryWaste(
                failed_attempts=own.failed_attempts,
                billed_input_tokens=own.waste_input,
                output_tokens=own.waste_output,
                attempt_ms=_timed_sum(own.waste_ms, timed),
                backoff_ms=_timed_sum(own.backoff_ms, timed),
            ),
            models=self._model_records(),
            tools=self._tool_records(),
            token_meter011=_meter_fields(self.meter011.totals),
        )

    def _model_records(self) -> list[ModelRecord]:
        timed = self.timing_known
        tokens_timed = self._first_tokens_timed()
        records = []
        for route, model in sorted(self.own.models.items(), key=lambda item: (item[0] is None, item[0] or "")):
            records.append(
                ModelRecord(
                    model=route,
                    settlements=model.settlements,
                    messages=model.messages,
                    **_bucket_fields(model.tokens or _NO_TOKENS),
                    ttft_ms=_timed_sum(model.ttft_ms, tokens_timed),
                    ttft_steps=model.ttft_steps,
                    mean_ttft_ms=number(mean(model.ttft_ms, model.ttft_steps)),
                    decode_ms=_timed_sum(model.decode_ms, tokens_timed),
                    decode_tokens=_timed_sum(model.decode_tokens, tokens_timed),
                    tokens_per_second=rate(model.decode_tokens, model.decode_ms),
                    steps=model.steps,
                    turns=len(model.turns),
                    llm_ms=_timed_sum(model.llm_ms, timed),
                    tool_ms=_timed_sum(model.tool_ms, timed),
                    reasoning_tokens=model.reasoning,
                    costs=UNSET if self.pricing is None else (model.cost or CostTally()).record(),
                )
            )
        return records

    def _tool_records(self) -> list[ToolRecord]:
        timed = self.timing_known
        return [
            ToolRecord(name=name, calls=tool.calls, failures=tool.failures, tool_ms=_timed_sum(tool.tool_ms, timed))
            for name, tool in sorted(self.own.tools.items(), key=lambda item: (item[0] is None, item[0] or ""))
        ]

    def samples(self) -> StatsSamples:
        """Per-step and per-turn observations the multi-log aggregate needs, the spark, and the inherited
        prefix (picklable; the arrays are the fold's own, not copies)."""
        self._clamp_gaps()
        if not self._first_tokens_timed():
            self.observed.model_ttft.clear()
        model_costs = None
        if self.pricing is not None:
            model_costs = {route: model.cost or CostTally() for route, model in self.own.models.items()}
        return msgspec.structs.replace(self.observed, inherited=self.prefix, model_costs=model_costs)


def _inherited_figures(prefix: InheritedPrefix | None) -> InheritedFigures | None:
    """dsh's sums as they stood at the fork/seed cut: the share of the session's figures it inherited."""
    if prefix is None:
        return None
    record = prefix.record
    return InheritedFigures(
        turns=record.turns,
        steps=record.steps,
        llm_ms=record.llm_ms,
        tool_ms=record.tool_ms,
        ttft_ms=record.ttft_ms,
        ttft_steps=record.ttft_steps,
        decode_ms=record.decode_ms,
        decode_tokens=record.decode_tokens,
        uncached_input_tokens=record.uncached_input_tokens,
        cache_read_tokens=record.cache_read_tokens,
        cache_write_tokens=record.cache_write_tokens,
        billed_input_tokens=record.billed_input_tokens,
        output_tokens=record.output_tokens,
        costs=record.costs,
    )


def _meter_fields(tokens: list[int] | None) -> MeterTotals:
    uncached, output, read, write = tokens or _NO_TOKENS
    billed = uncached + read + write
    hit = cache_hit_percent(read, billed, uncached + write)
    return MeterTotals(
        uncached_input_tokens=uncached,
        cache_read_tokens=read,
        cache_write_tokens=write,
        billed_input_tokens=billed,
        output_tokens=output,
        cache_hit_percent=percent_number(hit),
    )
