"""The records ``dshctl stats`` writes, declared once: JSON, NDJSON, tables and the exports read these.

Every record is a msgspec Struct whose attributes are snake_case in Python and camelCase on the wire
(``rename="camel"``); fields are encoded in declaration order, which is the documented key order
(``dshctl(1)``, STATS RECORDS, ROLLUPS, PRICES). A field whose value is :data:`UNSET` is left out of the
output: that is how keys that exist only sometimes (``costs`` without prices, ``gaps`` without
``--salvage``) are kept out, while ``None`` is always written as ``null``.

The rules of each value (0 where dsh says 0, null only where dsh has none) are the fold's
(:mod:`dshctl.stats.fold`) and the aggregate's (:mod:`dshctl.stats.aggregate`); this module only says
what each field is and which dsh figure it mirrors. It imports nothing from dshctl (a leaf): the
exports (Parquet, OTLP) take their schema from here.

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

from typing import Union

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


class CostRecord(Record, kw_only=True, dict=True):
    """What the token meter's billed buckets cost (:mod:`dshctl.stats.prices`; dsh has no cost figure).

    One amount per bucket and their total, each the exact sum of integer nano-units shown as a number
    with at most nine decimals (``0`` when nothing was billed); ``currency`` is None only for a record
    without tokens (it costs 0 in no currency).

    Beside the fields, a record the fold made (:func:`dshctl.stats.costs.cost_record`) carries ``nanos``,
    the integer nano-units ``(input, cache_read, cache_write, output)`` its amounts come from: exact at
    any size, where a float amount is not beyond 2**53 nano-units. It is an attribute, not a field, so it
    is never in the JSON; a record decoded, copied or pickled has none (:func:`cost_nanos`)."""

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
    """Nearest-rank percentiles of a set of observations (dshctl's, dsh computes none): ``n`` observed,
    and ``p50``/``p90``/``p99`` (None when ``n`` is 0)."""

    n: int
    p50: Number | None
    p90: Number | None
    p99: Number | None


class MeanPercentiles(Percentiles, kw_only=True):
    """:class:`Percentiles` and the mean of the same observations (None when ``n`` is 0)."""

    mean: Number | None


class RetryWaste(Record, kw_only=True):
    """dshctl's retry waste: attempts that ended without a message (``assistant/attempt``), the usage
    they reported and their time (request point → settlement), and the ``llm/retry`` → ``llm/retry-started``
    back-off. Counts and tokens are 0 when none; the two times are None in fixture form."""

    failed_attempts: int
    billed_input_tokens: int
    output_tokens: int
    attempt_ms: int | None
    backoff_ms: int | None


class MeterTotals(Record, kw_only=True):
    """The five token buckets and the cache-hit share, as dsh 0.1.1's token meter counts them (the last
    sample of a step replaces its earlier ones, retries included) — ``dshctl.tokenMeter011``."""

    uncached_input_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    billed_input_tokens: int | None
    output_tokens: int | None
    cache_hit_percent: Number | None


# -- per model and per tool ----------------------------------------------------------------------------


class ModelTotals(Record, kw_only=True):
    """One model's share of dsh's figures (``provider/model`` of the message source, else of the current
    ``request/header``; None when unknown), as the aggregate pools it.

    ``settlements`` and ``messages`` count its ``assistant/attempt`` + ``assistant/message`` events and its
    messages; the token buckets are its share of dsh's token meter; ``ttftMs`` … ``tokensPerSecond`` its
    share of dsh's ``sessionStats`` first-token and decode sums (the session record's rules)."""

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
    """A session's model entry (``dshctl.models``): :class:`ModelTotals`, then the steps (``step/end``)
    and turns of the model, its share of dsh's ``llmMs`` and ``toolMs``, its reasoning tokens (part of
    output, None when no usage reported them) and, with prices, its cost."""

    steps: int
    turns: int
    llm_ms: int | None
    tool_ms: int | None
    reasoning_tokens: int | None
    costs: CostRecord | None | UnsetType = UNSET


class ToolRecord(Record, kw_only=True):
    """A session's tool entry (``dshctl.tools``, per ``tool/call.name``): its calls, the results that say
    they failed, and its share of dsh's ``toolMs`` (``tool/call`` → ``tool/result``; None in fixture form)."""

    name: str | None
    calls: int
    failures: int
    tool_ms: int | None


# -- session ------------------------------------------------------------------------------------------


class InheritedFigures(Record, kw_only=True):
    """dsh's ``sessionStats`` sums and token meter as they stood at a fork/seed cut: the part of the
    session's figures the child inherited (and, with prices, its cost)."""

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
    """dshctl's own figures of a session (the ``dshctl`` object; dsh computes none of them).

    Counts: settlements (``attempts``), messages, interrupted messages, ``llm/retry`` events, tool calls,
    results that answer no call. Latencies: provider TTFT (last request point → first token) and first
    visible chunk per step, inter-token gaps from member times, stalls over 1 s. Then the retry waste, the
    per-model and per-tool breakdown and dsh 0.1.1's token meter."""

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
    """Damage ``--salvage`` read past: the physical line where reading resumed and what was lost."""

    line: int
    message: str


class SessionIdentity(Record, kw_only=True):
    """The log and its header: what a session record starts with, and all a log skipped by ``--since`` /
    ``--until`` has (its header alone was read). ``created`` is ``createdAt`` in UTC ISO 8601; ``seeded``:
    the header says the log was forked or seeded; ``parentSession`` the header's."""

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
    """One session's statistics (``kind`` "session").

    * ``events``, ``timing``, ``cut`` — logical events read; "envelope", or "unavailable" for a log without
      envelope times; the seq of the first non-inherited event (None without a cut).
    * ``turns`` … ``tokensPerSecond`` — dsh's ``sessionStats`` fold (FORMAT §7.1): step and turn counts,
      model and tool time, TTFT and decode sums, the decode rate.
    * ``uncachedInputTokens`` … ``cacheHitPercent`` — dsh's token meter of the 0.1.5 line (§7.3) and its
      cache-hit display rule.
    * ``contextWindow``, ``pressureTokens``, ``contextOccupancyPercent`` — dsh's context pressure (§7.5).
    * ``inherited`` — those figures at the fork/seed cut (None without a cut).
    * ``workingDirectory`` — the ``cwd`` of the last ``working-directory/change`` (dsh 0.2.1+; absent when the
      log has none: the header's ``cwd`` is then the session's directory).
    * ``title``, ``durationMs``, ``reasoningTokens``, ``costs`` — the latest ``session/title``, the first
      ``turn/start`` to the last ``turn/end``/``step/end``, the meter's reasoning share, the cost (with
      prices); ``notes`` say why figures are missing.
    * ``dshctl`` — dshctl's own figures; ``warnings`` the reader's; ``gaps`` with ``--salvage`` only.

    The identity and log fields have defaults so the fold can build the figures alone (a fork prefix,
    the live view); :func:`~dshctl.stats.results.folded_stats` fills them in."""

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


# -- turn and step rows --------------------------------------------------------------------------------


class TurnRecord(Record, kw_only=True):
    """One turn (``kind`` "turn"), with its ``session`` id and ``path``.

    * ``turn``, ``steps`` — the turn number and its ``step/end`` count.
    * ``ttftMs``, ``ttftStep`` — dsh's turn footer: the TTFT of the lowest-numbered step that produced a
      message, and that step.
    * ``llmMs``, ``decodeMs``, ``decodeTokens``, ``tokensPerSecond`` — the turn's share of dsh's
      ``sessionStats`` sums (0 when nothing contributed; None in fixture form) and its decode rate.
    * token buckets — its share of dsh's meter; None when no settlement of the turn reported usage
      (dsh's per-turn billing settles nothing then).
    * ``toolCalls`` … ``endReason`` — counts, its share of ``toolMs``, ``turn/start`` → ``turn/end``, the
      ``turn/end`` reason kind; ``inherited`` for a turn read before the fork cut; ``stepRates`` tok/s
      per step; ``startTime``, ``prompt`` (first line the user typed, ≤ 80 characters),
      ``reasoningTokens``, and with prices ``costs``."""

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
    """dshctl's own figures of one step: provider TTFT, first visible chunk and the longest inter-token
    gap (None without an observation); stalls over 1 s; the step's retry waste (0 when none; the two
    times None in fixture form)."""

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
    """One step (``kind`` "step"), with its ``session`` id and ``path``: exactly its contributions to the
    session's dsh figures, so the rows add up to the session.

    * ``turn``, ``step``, ``attempts``, ``retries`` — coordinates and counts.
    * ``ttftMs``, ``llmMs``, ``generationMs`` — dsh's per-step readings: ``step/start`` → first token,
      → message, first token → message (None without a message in the open step / a first token).
    * ``decodeMs`` … ``tokensPerSecond`` — its share of dsh's decode sums (None without first token or usage).
    * token buckets — its share of dsh's meter, retried attempts included (None without usage).
    * ``toolCalls``, ``toolMs`` — its calls and its share of dsh's ``toolMs``.
    * ``finishReason`` … ``model`` — the last settlement's ``finish`` kind and failure code, whether the
      message was interrupted, a ``step/end`` was seen, the step was read before the fork cut, its route.
    * ``reasoningTokens``, ``tools`` (call names in order, "?" without one), ``costs`` (with prices),
      and dshctl's own figures under ``dshctl``."""

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
    """One model-call settlement of a step (``kind`` "settlement": ``dshctl export``'s ``steps`` rows).

    The :class:`StepRecord` fields are this settlement's share of its step's figures, so a step's
    settlement rows add up to its step row: its token sample while the meter still counts it (0 once a
    later sample of the same step replaced it), dsh's step readings on the message that closed the open
    step, the tool calls its message made, the ``llm/retry`` events and back-off that followed it, and
    ``ended`` on the settlement that gives the step its model (the last message, else the first attempt).
    A step without any settlement has one row, ``attempt`` None.

    * ``attempt`` — 1-based position among the step's settlements; ``retry`` — the ``llm/retry`` events
      of the step read before it (0: the first try); ``outcome`` — "message" or "attempt" (a settlement
      without a surface message: failed, retried or cancelled).
    * ``seq`` — the settlement event's seq; ``stepStartedAt`` the ``step/start`` time, ``requestedAt`` the
      last request point before it (epoch ms), ``settledAt`` the settlement's time."""

    kind: str = "settlement"
    attempt: int | None
    retry: int
    outcome: str | None
    seq: int | None
    step_started_at: int | None
    requested_at: int | None
    settled_at: int | None


class ToolCallRecord(Record, kw_only=True):
    """One ``tool/call`` (``kind`` "toolCall"), with its ``session`` id and ``path``.

    * ``turn``, ``step``, ``attempt`` (the settlement of the step whose message made the call), ``seq``.
    * ``callId``, ``name``, ``model`` (the step's route when the call was made).
    * ``calledAt`` — the call's time; ``resultSeq``, ``resultAt`` — its ``tool/result`` as dsh pairs them
      (same call id, before ``turn/end``); ``toolMs`` its share of dsh's ``toolMs`` (None when dsh times
      nothing: no paired result, or no envelope times).
    * ``matched``, ``failed`` (the result says it failed), ``errorCode`` / ``errorName`` (the result's
      ``data.error``), ``inherited`` (read before the fork cut)."""

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
    """One image reference (``kind`` "image"): a row of ``dshctl images``, typed — a declared field that is
    not of its documented type is None (``dshctl images`` shows it as written). ``eventType``, ``carrier``
    and ``location`` are that command's ``type``, ``where`` and ``at`` (names no SQL dialect reserves)."""

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
    """Inherited fork prefixes across sessions: ``excluded`` (the parent is counted, so the child adds
    only what came after its cut) and ``counted`` (kept in the child)."""

    excluded: int
    counted: int


class AggregatePercentiles(Record, kw_only=True):
    """Nearest-rank percentiles across sessions: dsh's TTFT and tok/s per step, output and billed input
    tokens per turn."""

    ttft_ms: Percentiles
    tokens_per_second: Percentiles
    output_tokens_per_turn: Percentiles
    billed_input_tokens_per_turn: Percentiles


class AggregateOwnFigures(Record, kw_only=True):
    """dshctl's own figures pooled over sessions (the session's ``dshctl`` keys but ``messages``,
    ``interruptedMessages``, ``unmatchedToolResults`` and ``tools``)."""

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
    """Many sessions pooled (``kind`` "aggregate"): what dsh's folds would give over the concatenated
    logs, each inherited fork prefix counted once.

    * ``sessions``, ``failed``, ``skipped`` (outside ``--since``/``--until``), ``inheritedPrefixes``.
    * ``turns`` … ``cacheHitPercent``, ``reasoningTokens`` — dsh's ``sessionStats`` sums and token meter
      pooled (a time sum None only when every session lacks times; over no session every sum is 0).
    * ``costs``, ``costsByCurrency``, ``unpricedModels`` — with prices (see :class:`RollupRow`).
    * ``percentileMethod``, ``percentiles`` — nearest rank; ``dshctl`` — dshctl's own figures pooled."""

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
    cache_hit_percent: Number | None
    reasoning_tokens: int | None
    costs: CostRecord | None | UnsetType = UNSET
    costs_by_currency: list[CostRecord] | UnsetType = UNSET
    unpriced_models: list[str | None] | UnsetType = UNSET
    percentile_method: str
    percentiles: AggregatePercentiles
    dshctl: AggregateOwnFigures


class RollupRow(Record, kw_only=True):
    """One row of ``--by day|week|month|project|model`` (``kind`` the rollup), or their total (``kind``
    "total", ``key`` "total").

    * ``key`` — the day, ISO week, month, cwd or ``provider/model`` ("(unknown)" without one).
    * ``sessions`` … ``tokensPerSecond`` — the aggregate's dsh sums for the row's sessions (a model row:
      the model's share), ``p90TtftMs`` the nearest-rank p90 of its steps' TTFT.
    * ``models`` (day … project rows and the total: the routes its sessions used) or ``settlements``
      (model rows).
    * ``costs``, ``costsByCurrency``, ``unpricedModels`` — with prices: the cost (None when a model
      without a price has tokens here or currencies differ), one cost per currency (never converted),
      the models without a price."""

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


class ToolRow(Record, kw_only=True):
    """One row of ``--by tool`` (``kind`` "tool"), or their total (``kind`` "total"): calls and failures
    of the tool, the calls dsh times (a result before ``turn/end``) and their share of dsh's ``toolMs``,
    nearest-rank p50/p90 and the longest, and the share of all tool time (one decimal)."""

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
