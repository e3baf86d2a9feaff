"""The records ``dshctl stats`` writes, declared once: JSON, NDJSON, tables and the exports read these.

Every record is a msgspec Struct whose attributes are snake_case in Python and camelCase on the wire
(``rename="camel"``); fields are encoded in declaration order, which is the documented key order. A
field whose value is :data:`UNSET` is left out of the output: that is how keys that exist only
sometimes (``costs`` without prices, ``gaps`` without ``--salvage``) are kept out, while ``None`` is
always written as ``null``.

The values are computed by the fold (:mod:`dshctl.stats.fold`) and the aggregate
(:mod:`dshctl.stats.aggregate`). Each record's docstring states the rule of every key (0 where dsh
says 0, null only where dsh has none) and is what ``dshctl(1)`` shows in STATS RECORDS, ROLLUPS,
PRICES and EXPORT: ``python -m dshctl.manpage`` writes those sections from these Structs — their
fields in order, and the docstring's bullet for each key or group of keys (a key without its bullet
fails it; ``tests/test_manpage.py`` fails when the man page and this module disagree). This module
imports nothing from dshctl (a leaf): the exports (Parquet, OTLP) take their schema from here.

Records:

* :class:`SessionRecord` (``kind`` "session"), with :class:`SessionOwnFigures` under ``dshctl``,
  :class:`ModelRecord` and :class:`ToolRecord` per model and tool, :class:`InheritedFigures`;
* :class:`TurnRecord` (``kind`` "turn") and :class:`StepRecord` (``kind`` "step", :class:`StepOwnFigures`);
* :class:`SettlementRecord` (a step's share per model call), :class:`ToolCallRecord` and
  :class:`ImageRecord`: rows ``dshctl export`` writes beside the session, turn and step records;
* :class:`AggregateRecord` (``kind`` "aggregate"), with :class:`AggregateOwnFigures` and
  :class:`ModelTotals`;
* :class:`RollupRow` (``kind`` the rollup: day, week, month, project, model, or total) and
  :class:`ToolRow` (``kind`` "tool" or "total");
* :class:`CostRecord` inside any of them, :class:`Percentiles` / :class:`MeanPercentiles`,
  :class:`RetryWaste`, :class:`MeterTotals`, :class:`PrefixCounts`, :class:`SalvageGap`, :class:`LogError`.
"""

from __future__ import annotations

from typing import Union, overload

import msgspec
from msgspec import UNSET, UnsetType

__all__ = [
    "UNSET",
    "Number",
    "Record",
    "CostRecord",
    "Percentiles",
    "MeanPercentiles",
    "RetryWaste",
    "MeterTotals",
    "ModelTotals",
    "ModelRecord",
    "ToolRecord",
    "InheritedFigures",
    "SessionOwnFigures",
    "SalvageGap",
    "SessionIdentity",
    "SessionRecord",
    "StepOwnFigures",
    "TurnRecord",
    "StepRecord",
    "SettlementRecord",
    "ToolCallRecord",
    "ImageRecord",
    "PrefixCounts",
    "AggregatePercentiles",
    "AggregateOwnFigures",
    "AggregateRecord",
    "RollupRow",
    "ToolRow",
    "LogError",
    "PriceTableInfo",
    "CostBasis",
    "wire_names",
    "wire_value",
]

Number = Union[int, float]
"""A JSON number as dsh's JavaScript folds produce it: an int where the value is whole (milliseconds,
token counts, a ratio that came out whole), else a float."""


class Record(msgspec.Struct, kw_only=True, rename="camel"):
    """Base of every stats record: keyword construction, camelCase keys on the wire."""


# -- shared parts ------------------------------------------------------------------------------------


# A record the fold made (dshctl.stats.costs.cost_record) carries ``nanos`` beside its fields: the
# integer nano-units (input, cache_read, cache_write, output) its amounts come from, exact at any size
# where a float amount is not beyond 2**53 nano-units (the Parquet export writes them). An attribute,
# not a field (dict=True): never in the JSON; a record decoded, copied or pickled has none (cost_nanos).
class CostRecord(Record, kw_only=True, dict=True):
    """What the token meter's billed buckets cost, priced call by call (dsh has no cost figure; see PRICES).
    In session, turn and step records and in each ``dshctl.models`` entry it is null when a call with
    tokens there has no price (or none for a bucket it used) or two currencies meet; a record without
    tokens costs 0 (nothing was billed) in the currency of its calls' prices: a call without usage is
    priced too, at 0, so a session whose calls billed nothing costs ``0 USD`` where its routes are priced
    in USD, as its turns and rollup rows do; a turn or step without tokens and without such a currency
    of its own costs 0 in its session's (``0 USD`` beside the priced rows). The currency is null only
    where there is no single one: no call with a price (no call at all, or none whose route has one), or
    calls priced in several.

    * ``input``, ``cacheRead``, ``cacheWrite``, ``output`` — The amount per bucket (uncached input, cache
      read, cache write, output), each the exact sum of integer nano-units shown with at most nine
      decimals; ``0`` when nothing was billed.
    * ``total`` — Their sum.
    * ``currency`` — The currency of every amount; null only for a record without tokens and without a
      single currency (no call with a price, or calls priced in several; a turn or step: its session's).

    Rollup rows, the total and the aggregate add ``costsByCurrency`` (one such object per currency, never
    converted into another) and ``unpricedModels``; their ``costs`` is null when ``unpricedModels`` is not
    empty or there is more than one currency. Each model without a price gets one note on standard
    error, and one note says when costs are in more than one currency."""

    input: Number
    cache_read: Number
    cache_write: Number
    output: Number
    total: Number
    currency: str | None


def cost_nanos(cost: CostRecord) -> tuple[int, int, int, int] | None:
    """A cost record's integer nano-units ``(input, cache_read, cache_write, output)``, when it has them."""
    return cost.__dict__.get("nanos")


class Percentiles(Record, kw_only=True):
    """Nearest-rank percentiles of a set of observations (dshctl's; dsh computes none): the smallest
    observed value with at least p % of the observations at or below it.

    * ``n`` — The number of observations.
    * ``p50``, ``p90``, ``p99`` — The percentiles; null when ``n`` is 0."""

    n: int
    p50: Number | None
    p90: Number | None
    p99: Number | None


class MeanPercentiles(Percentiles, kw_only=True):
    """Percentiles and the mean of the same observations.

    * ``mean`` — The mean; null when ``n`` is 0."""

    mean: Number | None


class RetryWaste(Record, kw_only=True):
    """dshctl's retry waste: attempts that ended without a message (``assistant/attempt``), the usage
    they reported, their time and the back-off that followed them.

    * ``failedAttempts`` — Their number (0 when none).
    * ``billedInputTokens``, ``outputTokens`` — The usage they reported (0 when none).
    * ``attemptMs`` — Request point → settlement time, summed over them (0 when none; null in fixture form).
    * ``backoffMs`` — The ``llm/retry`` → ``llm/retry-started`` waits (0 when none; null in fixture form)."""

    failed_attempts: int
    billed_input_tokens: int
    output_tokens: int
    attempt_ms: int | None
    backoff_ms: int | None


class MeterTotals(Record, kw_only=True):
    """The five token buckets and the cache-hit share as dsh 0.1.1's token meter counts them, for
    comparison: the last sample of a step replaces its earlier ones, retried attempts included; that meter
    starts from zero buckets too.

    * ``uncachedInputTokens`` … ``outputTokens`` — The buckets, as the session record's.
    * ``cacheHitPercent`` — cacheRead / billedInput, with dsh's display rule (the session record's)."""

    uncached_input_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    billed_input_tokens: int | None
    output_tokens: int | None
    cache_hit_percent: Number | None


# -- per model and per tool ----------------------------------------------------------------------------


class ModelTotals(Record, kw_only=True):
    """One model's share of dsh's figures, with the session record's rules: per "provider/model" — the
    message source, else the current ``request/header`` config for attempts. The aggregate's
    ``dshctl.models`` entries have these keys; a session's add those of the next block.

    * ``model`` — The "provider/model" route (null when unknown).
    * ``settlements``, ``messages`` — Its ``assistant/attempt`` and ``assistant/message`` events, and its
      messages.
    * ``uncachedInputTokens`` … ``outputTokens`` — Its share of dsh's token meter: the buckets of its
      settlements.
    * ``ttftMs`` … ``tokensPerSecond`` — Its share of dsh's first-token and decode sums, and their ratios."""

    model: str | None
    settlements: int
    messages: int
    uncached_input_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    billed_input_tokens: int | None
    output_tokens: int | None
    ttft_ms: int | None
    ttft_steps: int
    mean_ttft_ms: Number | None
    decode_ms: int | None
    decode_tokens: Number | None
    tokens_per_second: float | None


class ModelRecord(ModelTotals, kw_only=True):
    """A session's model entry: a step, its model time and its calls' tool time count for the model of
    its message.

    * ``steps``, ``turns`` — Its steps (``step/end``), and the turns with a step of that model.
    * ``llmMs``, ``toolMs`` — Its share of dsh's ``llmMs`` and ``toolMs``.
    * ``reasoningTokens`` — Its reasoning tokens (part of output; null when no usage reported them).
    * ``costs`` — With prices: its cost."""

    steps: int
    turns: int
    llm_ms: int | None
    tool_ms: int | None
    reasoning_tokens: int | None
    costs: CostRecord | None | UnsetType = UNSET


class ToolRecord(Record, kw_only=True):
    """A session's tool entry, per ``tool/call.name``, as in the tool rollup.

    * ``name`` — The tool name (null for a call without one).
    * ``calls``, ``failures`` — Its ``tool/call`` events, and the results that say they failed (counted as
      the tool rollup counts them).
    * ``toolMs`` — Its share of dsh's ``toolMs`` (``tool/call`` → ``tool/result``; null in fixture form)."""

    name: str | None
    calls: int
    failures: int
    tool_ms: int | None


# -- session ------------------------------------------------------------------------------------------


class InheritedFigures(Record, kw_only=True):
    """What a forked or seeded session inherited (``inherited`` is null without a ``cut``): dsh's figures
    as they stood at the cut, with the session record's rules. The session's figures stay dsh's (the whole
    log, as dsh shows them); its own part is the difference.

    * ``turns`` … ``outputTokens`` — dsh's ``sessionStats`` sums and token meter at the cut.
    * ``costs`` — With prices: the cost of the inherited part."""

    turns: int
    steps: int
    llm_ms: int | None
    tool_ms: int | None
    ttft_ms: int | None
    ttft_steps: int
    decode_ms: int | None
    decode_tokens: Number | None
    uncached_input_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    billed_input_tokens: int
    output_tokens: int
    costs: CostRecord | None | UnsetType = UNSET


class SessionOwnFigures(Record, kw_only=True):
    """dshctl's own figures, not computed by dsh (counts and sums 0 when nothing contributed).

    * ``attempts`` — Settlements: ``assistant/attempt`` and ``assistant/message`` events.
    * ``messages``, ``interruptedMessages`` — Messages, and those that were interrupted.
    * ``retries`` — ``llm/retry`` events.
    * ``toolCalls``, ``unmatchedToolResults`` — ``tool/call`` events, and the results that answer no call.
    * ``providerTtftMs`` — Per step, with mean: from the last request point logged before the attempt
      holding the step's first token — ``step/start``, an input ``user``/``system``/``developer/message``,
      ``request/header``, ``request/context``, ``session-log-deepseek/delivery-accepted``,
      ``compaction/end`` or ``llm/retry-started`` — to that token, so local overhead and back-off are
      excluded.
    * ``firstVisibleMs`` — Per step, with mean: ``step/start`` → first visible chunk, reasoning included.
    * ``interTokenGapMs`` — Gaps between consecutive token deltas within an attempt, from the stream's
      member times (never expanding a stream); negative gaps count as 0.
    * ``stalls``, ``stallMs`` — Those gaps over 1000 ms: how many and their sum (0 when none).
    * ``retryWaste`` — Attempts that ended without a message (``dshctl.retryWaste``).
    * ``models`` — Per "provider/model" (``dshctl.models[]``).
    * ``tools`` — Per ``tool/call.name`` (``dshctl.tools[]``).
    * ``tokenMeter011`` — dsh 0.1.1's token meter (``dshctl.tokenMeter011``)."""

    attempts: int
    messages: int
    interrupted_messages: int
    retries: int
    tool_calls: int
    unmatched_tool_results: int
    provider_ttft_ms: MeanPercentiles
    first_visible_ms: MeanPercentiles
    inter_token_gap_ms: Percentiles
    stalls: int
    stall_ms: int
    retry_waste: RetryWaste
    models: list[ModelRecord]
    tools: list[ToolRecord]
    token_meter011: MeterTotals


class SalvageGap(Record, kw_only=True):
    """Damage ``--salvage`` read past (any gap makes the exit status 1).

    * ``line`` — The physical line where reading resumed.
    * ``message`` — What was skipped and lost, as the warning says it."""

    line: int
    message: str


class SessionIdentity(Record, kw_only=True):
    """The log and its header: what a session record starts with, and all a log skipped by ``--since`` /
    ``--until`` has (its header alone was read).

    * ``kind`` — "session".
    * ``path``, ``id``, ``createdAt``, ``created``, ``generation``, ``cwd``, ``seeded``, ``parentSession`` —
      The log and its header: ``created`` is ``createdAt`` in UTC ISO 8601; ``seeded``: the header says the
      log was forked or seeded; ``parentSession`` the header's."""

    kind: str = "session"
    path: str = ""
    id: str | None = None
    created_at: int | None = None
    created: str | None = None
    generation: int = 0
    cwd: str | None = None
    seeded: bool = False
    parent_session: str | None = None


class SessionRecord(SessionIdentity, kw_only=True):
    """(``kind`` "session"): one session's statistics.

    * ``events``, ``timing`` — The logical events read; "envelope", or "unavailable" for a log without
      envelope times (``notes`` then says why figures are missing).
    * ``cut`` — The seq of the first non-inherited event — v0/v1 ``seedLength``, v2+ the last
      ``session/end-seed {inherited: true}`` — else null.
    * ``turns``, ``steps`` — dsh's counts: one step per ``step/end`` (failed, cancelled and max-tokens steps
      included); a turn each time a ``step/end`` names a turn other than the previous one (turns without a
      step do not count). 0 in a log without steps.
    * ``llmMs`` — Sum of ``step/start`` → ``assistant/message`` over steps whose message arrived in the open
      step (retry waits included; a step without a message adds nothing). 0 when no message arrived so;
      null in fixture form.
    * ``toolMs`` — Sum of ``tool/call`` → ``tool/result`` by call id; calls without a result are dropped at
      ``turn/end``. 0 without a timed pair (no tool call, or none answered); null in fixture form.
    * ``ttftMs``, ``ttftSteps``, ``meanTtftMs`` — Sum of ``step/start`` → first token delta (text, reasoning
      or tool-call delta with content) of any attempt of the step, so a failed attempt's token survives a
      same-step retry, over the ``ttftSteps`` steps that produced a message and have a first token;
      ``meanTtftMs`` = ttftMs / ttftSteps. ttftMs 0 when ttftSteps is 0; null in fixture form or with
      placeholder stream times. meanTtftMs null when ttftSteps is 0.
    * ``decodeMs``, ``decodeTokens``, ``tokensPerSecond`` — First token → message time and the message's
      ``usage.outputTokens`` (reasoning included), summed over steps having both (a zero-output step adds
      its span and 0 tokens). 0 when no step has both; null in fixture form or with placeholder stream
      times. ``tokensPerSecond`` = decodeTokens / (decodeMs / 1000), null unless decodeMs > 0 (0 for zero
      output over a positive span).
    * ``uncachedInputTokens`` … ``outputTokens`` — dsh's token meter (0.1.5 line): each settlement's usage
      (``assistant/message.usage``, else the last ``usage`` chunk of its stream) fills one replacement slot
      per (turn, step), so a message does not double-count its attempt; an ``llm/retry-started`` of that
      step closes the slot, so a retried attempt's usage adds (it was billed). Buckets are disjoint;
      ``billedInputTokens`` = uncached + cache read + cache write; ``reasoningTokens`` is never added. The
      meter starts from zero buckets: all 0 when no settlement reported usage, never null (fixture form
      included: the meter needs no time).
    * ``inPlusOutTokens`` — The tokens burnt: billed input plus output (the tables' ``in+out`` column);
      derived from them, never given.
    * ``cacheHitPercent`` — cacheRead / billedInput as dsh displays it: an integer, halves rounded up; when
      that would show 100 for a hit that is not full, the fewest decimals that stay below 100 (e.g. 99.95);
      exactly 100 only for a full hit. A JSON number with the digits dsh shows; null when billed input is 0.
    * ``contextWindow``, ``pressureTokens``, ``contextOccupancyPercent`` — The latest
      ``request/context.contextWindow`` (one without it clears it), the prompt-side tokens (input + cache
      read + cache write) of the latest usage sample, and min(100, round(pressure / window × 100)). Each
      null until known (dsh's context meter leaves them absent); occupancy null unless both are. dsh's meter
      adds a heuristic estimate of surface growth since the last usage sample (``projectedTokens``) that
      dshctl does not reproduce: this is the sample alone, so occupancy may read lower than dsh's ring after
      compaction or long tool output.
    * ``inherited`` — What a forked or seeded session inherited (``inherited``, below); null without a
      ``cut``.
    * ``title`` — The latest ``session/title`` (null without one).
    * ``workingDirectory`` — Present only for a log that moves its session (dsh 0.2.1-alpha.2 and later):
      the session's effective directory at the end of the log, as dsh's working-directory projection folds
      it — the ``cwd`` of the last ``working-directory/change``. ``cwd`` stays the header's, the original
      project.
    * ``durationMs`` — The first ``turn/start`` to the last ``turn/end`` or ``step/end`` (null without a
      timed ``turn/start``, or in fixture form).
    * ``reasoningTokens`` — The meter's share of reasoning tokens (part of ``outputTokens``, never added to
      it; null when no usage reported them).
    * ``costs`` — The cost (see PRICES: each call at its own time; absent with ``--no-cost``);
      ``inherited`` also holds ``costs`` then.
    * ``notes`` — Why figures are missing (a log without envelope times, placeholder stream times).
    * ``dshctl`` — dshctl's own figures, kept apart (``dshctl``, below).
    * ``warnings`` — The torn tail and other reader warnings of this log (every one, whatever
      ``--verbose`` says).
    * ``gaps`` — With ``--salvage`` only: the damage read past (``gaps[]``, below)."""

    # The identity and log fields have defaults so the fold can build the figures alone (a fork prefix,
    # the live view); results.folded_stats fills them in.
    events: int = 0
    timing: str = "envelope"
    cut: int | None = None
    turns: int
    steps: int
    llm_ms: int | None
    tool_ms: int | None
    ttft_ms: int | None
    ttft_steps: int
    mean_ttft_ms: Number | None
    decode_ms: int | None
    decode_tokens: Number | None
    tokens_per_second: float | None
    uncached_input_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    billed_input_tokens: int
    output_tokens: int
    in_plus_out_tokens: int = 0
    cache_hit_percent: Number | None
    context_window: int | None
    pressure_tokens: int | None
    context_occupancy_percent: int | None
    inherited: InheritedFigures | None
    title: str | None
    working_directory: str | UnsetType = UNSET
    duration_ms: int | None
    reasoning_tokens: int | None
    costs: CostRecord | None | UnsetType = UNSET
    notes: list[str]
    dshctl: SessionOwnFigures
    warnings: list[str] = []
    gaps: list[SalvageGap] | UnsetType = UNSET

    def __post_init__(self) -> None:
        # derived, as the rollup row's: every way a record is made (folded, replaced, decoded) carries it
        self.in_plus_out_tokens = in_plus_out(self.billed_input_tokens, self.output_tokens)


# -- turn and step rows --------------------------------------------------------------------------------


class TurnRecord(Record, kw_only=True):
    """(``kind`` "turn"): one per turn seen.

    * ``kind``, ``session``, ``path`` — "turn"; the session's id and the log's path.
    * ``turn``, ``steps`` — The turn number and its ``step/end`` count (0 for a turn closed without a step).
    * ``ttftMs``, ``ttftStep`` — dsh's turn footer: the TTFT of the lowest-numbered step that produced a
      message (null when that step has no first token, or no step produced one), and that step.
    * ``llmMs``, ``decodeMs``, ``decodeTokens`` — The turn's share of the session's sums: 0 when nothing
      contributed (a turn without steps too); null in fixture form (decode also with placeholder stream
      times).
    * ``tokensPerSecond`` — dsh's turn footer: Σ output / Σ decode seconds over its steps having both (null
      unless that decode time is positive).
    * ``uncachedInputTokens`` … ``outputTokens`` — The turn's share of the meter; null when no settlement
      of the turn reported usage (dsh's per-turn billing settles nothing for such a turn).
    * ``toolCalls`` — Its ``tool/call`` events.
    * ``toolMs`` — The turn's share of the session's ``toolMs``: 0 when nothing contributed; null in fixture
      form.
    * ``attempts``, ``retries`` — Its settlements and its ``llm/retry`` events.
    * ``durationMs`` — ``turn/start`` → ``turn/end`` (null without both times).
    * ``endReason`` — The ``turn/end`` reason kind (null without one).
    * ``inherited`` — True for a turn read before the fork cut (a turn still open at the cut included).
    * ``stepRates`` — tok/s per step (null where unknown).
    * ``startTime`` — The ``turn/start`` time (epoch ms; null in fixture form).
    * ``prompt`` — The first non-blank line of the turn's first ``user/message`` typed by the user (source
      kind ``user``), trimmed and cut to 80 characters (null without one; the exact text, in JSON and
      NDJSON only: no table shows it).
    * ``reasoningTokens`` — The turn's share of ``reasoningTokens`` (null when none reported).
    * ``costs`` — With prices: its cost."""

    kind: str = "turn"
    session: str | None = None
    path: str = ""
    turn: int | None
    steps: int
    ttft_ms: int | None
    ttft_step: int | None
    llm_ms: int | None
    decode_ms: int | None
    decode_tokens: Number | None
    tokens_per_second: float | None
    uncached_input_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    billed_input_tokens: int | None
    output_tokens: int | None
    tool_calls: int
    tool_ms: int | None
    attempts: int
    retries: int
    duration_ms: int | None
    end_reason: str | None
    inherited: bool
    step_rates: list[float | None]
    start_time: int | None
    prompt: str | None
    reasoning_tokens: int | None
    costs: CostRecord | None | UnsetType = UNSET


class StepOwnFigures(Record, kw_only=True):
    """dshctl's own figures of one step, with the session's rules.

    * ``providerTtftMs``, ``firstVisibleMs``, ``maxGapMs`` — The step's provider TTFT, first visible chunk
      and longest inter-token gap (null without an observation).
    * ``stalls``, ``stallMs``, ``failedAttempts``, ``wastedBilledInputTokens``, ``wastedOutputTokens`` —
      Its stalls over 1 s and its retry waste (0 when none).
    * ``wastedAttemptMs``, ``backoffMs`` — The time of its failed attempts and the back-off after them (0
      when none, null in fixture form)."""

    provider_ttft_ms: int | None
    first_visible_ms: int | None
    max_gap_ms: Number | None
    stalls: int
    stall_ms: Number
    failed_attempts: int
    wasted_billed_input_tokens: int
    wasted_output_tokens: int
    wasted_attempt_ms: int | None
    backoff_ms: int | None


class StepRecord(Record, kw_only=True):
    """(``kind`` "step"): one row per step, exactly its contributions to the session's dsh figures.

    * ``kind``, ``session``, ``path`` — "step"; the session's id and the log's path.
    * ``turn``, ``step``, ``attempts``, ``retries`` — Coordinates, its settlements and its ``llm/retry``
      events.
    * ``ttftMs``, ``llmMs``, ``generationMs`` — dsh's per-step readings: ``step/start`` → first token,
      ``step/start`` → message (total) and first token → message (with or without usage); each null when
      the step has no message in its open step or (TTFT, generation) no first token.
    * ``decodeMs``, ``decodeTokens``, ``tokensPerSecond`` — The step's share of the session's decode sums:
      null when the step lacks a first token or usage (dsh leaves it out); 0 tokens for a zero-output step;
      tok/s null unless the span is positive.
    * ``uncachedInputTokens`` … ``outputTokens`` — The step's share of the meter, retried attempts
      included; null when no settlement of the step reported usage.
    * ``toolCalls`` — Its ``tool/call`` events.
    * ``toolMs`` — The step's share of ``toolMs``: 0 without a timed pair; null in fixture form.
    * ``finishReason``, ``failureCode`` — Kind of the last settlement's ``finish`` chunk (null when none was
      streamed), and its failure code.
    * ``interrupted``, ``ended``, ``inherited`` — The message was interrupted; a ``step/end`` was seen; the
      step was read before the fork cut.
    * ``model`` — Its "provider/model" route.
    * ``reasoningTokens`` — The step's share of ``reasoningTokens`` (null when none reported).
    * ``tools`` — The names of its tool calls in order ("?" for a call without a name).
    * ``costs`` — With prices: its cost.
    * ``dshctl`` — dshctl's own figures of the step (``dshctl``, below).

    A step's dsh figures are its contributions to the session's, so their non-null values add up to the
    session record; a turn's are the sums of its steps."""

    kind: str = "step"
    session: str | None = None
    path: str = ""
    turn: int | None
    step: int | None
    attempts: int
    retries: int
    ttft_ms: int | None
    llm_ms: int | None
    generation_ms: int | None
    decode_ms: int | None
    decode_tokens: Number | None
    tokens_per_second: float | None
    uncached_input_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    billed_input_tokens: int | None
    output_tokens: int | None
    tool_calls: int
    tool_ms: int | None
    finish_reason: str | None
    failure_code: str | None
    interrupted: bool
    ended: bool
    inherited: bool
    model: str | None
    reasoning_tokens: int | None
    tools: list[str]
    costs: CostRecord | None | UnsetType = UNSET
    dshctl: StepOwnFigures



class SettlementRecord(StepRecord, kw_only=True):
    """(``kind`` "settlement"): one model-call settlement of a step, failed attempts included. The
    step record's keys are this settlement's share of its step's figures, so a step's settlement rows add
    up to its ``--by step`` row: its token sample while the meter still counts it (0 once a later sample of
    the same step replaced it), dsh's step readings on the message that closed the open step, the tool
    calls its message made, the ``llm/retry`` events and back-off that followed it, and ``ended`` on the
    settlement that gives the step its model (the last message, else the first attempt). A step without
    any settlement has one row, ``attempt`` null.

    * ``attempt`` — The 1-based position among the step's settlements.
    * ``retry`` — The ``llm/retry`` events of the step read before it (0: the first try).
    * ``outcome`` — "message", or "attempt" for a settlement without a surface message (failed, retried or
      cancelled).
    * ``seq`` — The settlement event's seq.
    * ``stepStartedAt``, ``requestedAt``, ``settledAt`` — The ``step/start`` time, the last request point
      before the settlement and the settlement's own time (epoch ms)."""

    kind: str = "settlement"
    attempt: int | None
    retry: int
    outcome: str | None
    seq: int | None
    step_started_at: int | None
    requested_at: int | None
    settled_at: int | None


class ToolCallRecord(Record, kw_only=True):
    """(``kind`` "toolCall"): one ``tool/call``.

    * ``kind``, ``session``, ``path`` — "toolCall"; the session's id and the log's path.
    * ``turn``, ``step``, ``attempt``, ``seq`` — Where the call was made: the settlement of the step whose
      message made it, and the call's seq.
    * ``callId``, ``name``, ``model`` — The call id, the tool's name, and the step's route when the call was
      made.
    * ``calledAt`` — The call's time.
    * ``resultSeq``, ``resultAt`` — Its ``tool/result`` as dsh pairs them (same call id, before
      ``turn/end``).
    * ``toolMs`` — Its share of dsh's ``toolMs`` (null when dsh times nothing: no paired result, or no
      envelope times).
    * ``matched``, ``failed`` — A result answered it; the result says it failed.
    * ``errorCode``, ``errorName`` — The result's ``data.error``.
    * ``inherited`` — Read before the fork cut."""

    kind: str = "toolCall"
    session: str | None = None
    path: str = ""
    turn: int | None
    step: int | None
    attempt: int | None
    seq: int
    call_id: str | None
    name: str | None
    model: str | None
    called_at: int | None
    result_seq: int | None
    result_at: int | None
    tool_ms: int | None
    matched: bool
    failed: bool
    error_code: str | None
    error_name: str | None
    inherited: bool


class ImageRecord(Record, kw_only=True):
    """(``kind`` "image"): one image reference, a row of ``dshctl images`` typed: a declared field that
    is not of its documented type is null (``dshctl images`` shows it as written).

    * ``kind``, ``session``, ``path`` — "image"; the session's id and the log's path.
    * ``seq``, ``line``, ``eventType`` — The event holding the reference, its physical line and its type
      (``dshctl images``' ``type``).
    * ``turn``, ``step`` — From the event, else from the enclosing ``turn/start`` / ``step/start``.
    * ``carrier``, ``location`` — Where in the event the reference is (``dshctl images``' ``where`` and
      ``at``: names no SQL dialect reserves).
    * ``n`` — The 0-based occurrence index of the image within its event.
    * ``attachmentId``, ``mediaType``, ``bytes``, ``width``, ``height``, ``name`` — The reference as written.
    * ``originalWidth``, ``originalHeight`` — Its ``originalDimensions``.
    * ``offloaded``, ``offloadedBy`` — Offloaded by an ``image/offload`` event (and its seq), or marked so
      by its own ``offloaded: true`` (``offloadedBy`` null)."""

    kind: str = "image"
    session: str | None = None
    path: str = ""
    seq: int
    line: int
    event_type: str
    turn: int | None
    step: int | None
    carrier: str
    location: str
    n: int
    attachment_id: str | None
    media_type: str | None
    bytes: int | None
    width: int | None
    height: int | None
    name: str | None
    original_width: int | None
    original_height: int | None
    offloaded: bool
    offloaded_by: int | None

# -- many sessions ---------------------------------------------------------------------------------------


class PrefixCounts(Record, kw_only=True):
    """How many inherited fork prefixes went which way.

    * ``excluded`` — Prefixes left out: the parent is counted, so the child adds only what came after its
      cut.
    * ``counted`` — Prefixes kept in the child (its parent is not counted)."""

    excluded: int
    counted: int


class AggregatePercentiles(Record, kw_only=True):
    """Nearest-rank percentiles across sessions.

    * ``ttftMs``, ``tokensPerSecond`` — dsh's TTFT and tok/s, per step.
    * ``outputTokensPerTurn``, ``billedInputTokensPerTurn`` — Output and billed input tokens, per turn."""

    ttft_ms: Percentiles
    tokens_per_second: Percentiles
    output_tokens_per_turn: Percentiles
    billed_input_tokens_per_turn: Percentiles


class AggregateOwnFigures(Record, kw_only=True):
    """The session's ``dshctl`` keys pooled over the sessions (no ``messages``,
    ``interruptedMessages``, ``unmatchedToolResults`` or ``tools``).

    * ``attempts`` … ``tokenMeter011`` — As in the session's ``dshctl``, pooled; its ``models`` entries have
      the keys of ``dshctl.models[] (aggregate)``."""

    attempts: int
    retries: int
    tool_calls: int
    provider_ttft_ms: MeanPercentiles
    first_visible_ms: MeanPercentiles
    inter_token_gap_ms: Percentiles
    stalls: int
    stall_ms: Number | None
    retry_waste: RetryWaste
    models: list[ModelTotals]
    token_meter011: MeterTotals


class AggregateRecord(Record, kw_only=True):
    """(``kind`` "aggregate", in ``--json``): many sessions pooled, as dsh's folds would give them over
    the concatenated logs.

    * ``kind`` — "aggregate".
    * ``sessions``, ``failed``, ``skipped`` — The sessions read, those that failed, and those skipped
      (outside ``--since``/``--until``).
    * ``inheritedPrefixes`` — How each inherited prefix was counted (below).
    * ``turns`` … ``outputTokens`` and ``cacheHitPercent`` — dsh's sums pooled over the sessions, with the
      session record's rules; a time sum is null only when every session counted lacks times; over no
      session at all every sum is 0, as dsh's folds start, and only the ratios are null.
    * ``inPlusOutTokens`` — The tokens burnt: billed input plus output (the tables' ``in+out``); null only
      when both are; derived from them, never given.
    * ``reasoningTokens`` — Pooled likewise.
    * ``costs``, ``costsByCurrency``, ``unpricedModels`` — With prices (see PRICES).
    * ``percentileMethod`` — "nearest-rank".
    * ``percentiles`` — Per step and per turn (below).
    * ``dshctl`` — dshctl's own figures pooled (below).

    Each inherited prefix is counted once. A session whose ``parentSession`` is among the sessions counted
    contributes only what it added after its cut (sums, counts, per-step and per-turn observations, gaps,
    per-model figures); a session whose parent is not counted (not given, unreadable, or outside
    ``--since``/``--until``) keeps its prefix, counted once there. The header names only the direct
    parent: a grandchild's prefix is excluded only when its own parent is counted."""

    kind: str = "aggregate"
    sessions: int
    failed: int
    skipped: int
    inherited_prefixes: PrefixCounts
    turns: int
    steps: int
    llm_ms: int | None
    tool_ms: int | None
    ttft_ms: int | None
    ttft_steps: int
    mean_ttft_ms: Number | None
    decode_ms: int | None
    decode_tokens: Number | None
    tokens_per_second: float | None
    uncached_input_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    billed_input_tokens: int | None
    output_tokens: int | None
    in_plus_out_tokens: int | None = None
    cache_hit_percent: Number | None
    reasoning_tokens: int | None
    costs: CostRecord | None | UnsetType = UNSET
    costs_by_currency: list[CostRecord] | UnsetType = UNSET
    unpriced_models: list[str | None] | UnsetType = UNSET
    percentile_method: str
    percentiles: AggregatePercentiles
    dshctl: AggregateOwnFigures

    def __post_init__(self) -> None:
        self.in_plus_out_tokens = in_plus_out(self.billed_input_tokens, self.output_tokens)


class RollupRow(Record, kw_only=True):
    """(``kind`` "day", "week", "month", "project", "model", or "total"): one row of ``--by
    day|week|month|project|model``, or their total.

    * ``kind``, ``key`` — The rollup, or "total"; the day, ISO week, month, cwd or "provider/model"
      ("(unknown)" without one; "total" for the total).
    * ``sessions``, ``turns``, ``steps`` — Its sessions and their turns and steps (a model row: those that
      used the model, an inherited prefix included, so one session can count in several rows).
    * ``uncachedInputTokens`` … ``outputTokens`` — The five token buckets, pooled as the aggregate pools
      them (a model row: the model's share).
    * ``inPlusOutTokens`` — The tokens burnt: billed input plus output (the tables' ``in+out`` column);
      null only when both are; derived from them, never given.
    * ``cacheHitPercent`` — With dsh's display rule.
    * ``reasoningTokens`` — Part of output, never added to it.
    * ``llmMs``, ``toolMs``, ``ttftMs``, ``ttftSteps``, ``meanTtftMs`` — dsh's sums and the mean TTFT.
    * ``p90TtftMs`` — Nearest rank over the steps' TTFT.
    * ``decodeMs``, ``decodeTokens``, ``tokensPerSecond`` — The decode sums and their ratio (a ratio of sums).
    * ``models`` — The "provider/model" routes its sessions used, as ccusage lists them per day (not in
      model rows).
    * ``settlements`` — Model rows only: the model's settlements.
    * ``costs``, ``costsByCurrency``, ``unpricedModels`` — With prices: the cost (null when a model without
      a price has tokens here or currencies differ), one cost per currency (never converted), the models
      without a price (see PRICES)."""

    kind: str
    key: str
    sessions: int
    turns: int
    steps: int
    uncached_input_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    billed_input_tokens: int | None
    output_tokens: int | None
    in_plus_out_tokens: int | None = None
    cache_hit_percent: Number | None
    reasoning_tokens: int | None
    llm_ms: int | None
    tool_ms: int | None
    ttft_ms: int | None
    ttft_steps: int
    mean_ttft_ms: Number | None
    p90_ttft_ms: Number | None
    decode_ms: int | None
    decode_tokens: Number | None
    tokens_per_second: float | None
    models: list[str | None] | UnsetType = UNSET
    settlements: int | UnsetType = UNSET
    costs: CostRecord | None | UnsetType = UNSET
    costs_by_currency: list[CostRecord] | UnsetType = UNSET
    unpriced_models: list[str | None] | UnsetType = UNSET

    def __post_init__(self) -> None:
        # derived, so that every way a row is made (built, replaced, decoded) carries the sum of its buckets
        self.in_plus_out_tokens = in_plus_out(self.billed_input_tokens, self.output_tokens)


@overload
def in_plus_out(billed_input_tokens: int, output_tokens: int) -> int: ...
@overload
def in_plus_out(billed_input_tokens: int | None, output_tokens: int | None) -> int | None: ...
def in_plus_out(billed_input_tokens: int | None, output_tokens: int | None) -> int | None:
    """The tokens burnt (the tables' ``in+out``): billed input (uncached, cache read and cache write) plus
    output; null only when both are."""
    if billed_input_tokens is None and output_tokens is None:
        return None
    return (billed_input_tokens or 0) + (output_tokens or 0)


class ToolRow(Record, kw_only=True):
    """(``kind`` "tool" or "total"): one row of ``--by tool``, or their total.

    * ``kind``, ``key`` — "tool" or "total"; the tool name ("(unknown)" for a call without one).
    * ``sessions`` — The sessions that called it.
    * ``calls`` — Every ``tool/call``.
    * ``failures`` — Results whose error flag is set — v4 ``message.isError``, earlier the tool-result
      block's ``isError`` — or that carry ``data.error``; a result that answers no call is not counted.
    * ``timedCalls`` — The calls dsh times: a result arrived before ``turn/end``.
    * ``toolMs`` — Their time, the tool's share of dsh's ``toolMs``.
    * ``p50Ms``, ``p90Ms``, ``maxMs`` — Over the timed calls, nearest rank.
    * ``sharePercent`` — toolMs / the total toolMs, one decimal."""

    kind: str
    key: str
    sessions: int
    calls: int
    failures: int
    timed_calls: int
    tool_ms: int | None
    p50_ms: Number | None
    p90_ms: Number | None
    max_ms: Number | None
    share_percent: float | None


class LogError(Record, kw_only=True):
    """A log among many that could not be read (``errors``): its path and why."""

    path: str
    error: str


class PriceTableInfo(Record, kw_only=True):
    """A price table in force: ``built-in``, ``user`` or ``--prices``, its file, and where its prices
    came from (the built-in table: ``genai-prices`` and that package's version)."""

    name: str
    path: str
    source: str | None
    version: str | None


class CostBasis(Record, kw_only=True):
    """What the costs of a ``--json`` document are (``costBasis``): estimates from list prices, at the
    tables read in this order (each overriding the previous model by model)."""

    estimate: str = "list prices"
    tables: list[PriceTableInfo]


# -- reading by wire name ----------------------------------------------------------------------------------

_WIRE: dict[type, dict[str, str]] = {}


def wire_names(cls: type) -> dict[str, str]:
    """Wire key → attribute name of a record type (``ttftMs`` → ``ttft_ms``)."""
    names = _WIRE.get(cls)
    if names is None:
        names = _WIRE[cls] = dict(zip(cls.__struct_encode_fields__, cls.__struct_fields__))
    return names


def wire_value(record: Record, key: str):
    """The value of a record's wire key (``--sort ttftMs``); None when the record has no such key or
    leaves it out."""
    name = wire_names(type(record)).get(key)
    value = getattr(record, name, None) if name is not None else None
    return None if value is UNSET else value
