"""``dshctl export --format otlp``: sessions as OpenTelemetry traces, in the OTLP/JSON file format (one
``TracesData`` object per line), following the GenAI semantic conventions of OpenTelemetry semantic
conventions **v1.41.0** (the last release that carries them in the main repository; Development status).

The trace of a session (one trace per top-level session; a subagent session joins its parent's):

* ``invoke_agent dsh`` (INTERNAL) — the session: ``gen_ai.operation.name`` "invoke_agent",
  ``gen_ai.agent.id`` / ``gen_ai.conversation.id`` the session id. A subagent session's span is the child
  of the parent's ``execute_tool`` span that started it (the call running at the ``subagent/catalog``
  event naming the child, else the call running when the child was created, else the latest call whose
  name says agent or task before it — a subagent run in the background outlives its call), else of the
  parent's session span. A fork (a
  seeded session that is not a subagent) is a trace of its own with a span link to its parent's.
* ``turn {n}`` (INTERNAL) — each turn, ``turn/start`` → ``turn/end``.
* ``chat {model}`` (CLIENT) — each model-call settlement (the ``steps`` table's rows): the request point
  → the settlement. Usage is the settlement's share of dsh's token meter, mapped from dsh's disjoint
  buckets: ``gen_ai.usage.input_tokens`` = uncached + cache read + cache write,
  ``gen_ai.usage.cache_read.input_tokens``, ``gen_ai.usage.cache_creation.input_tokens``,
  ``gen_ai.usage.output_tokens`` (reasoning included), ``gen_ai.usage.reasoning.output_tokens``. A
  settlement without a message (failed, retried, cancelled) has ``error.type`` and status ERROR; the
  ``llm/retry`` it caused is a span event ``dsh.llm.retry``.
* ``execute_tool {name}`` (INTERNAL) — each tool call, ``tool/call`` → its ``tool/result``.

Ids are deterministic: a span id is the first 8 bytes of SHA-256 over the session id, the span's kind
and its event seq (a turn: its number), a trace id the first 16 bytes over the top-level session's id,
written as lowercase hex. A second file of a session already written (the same session id: a copy, or
another generation of it) mixes its path into its ids, so that every (trace, span) id is unique.

Times are the log's: a span without one of its own takes its turn's start, else the session's (its
earliest time, else the header's ``createdAt``). A log in dsh's test-fixture form (no envelope seq or
time) has no times, so no spans; a warning says so (:data:`NO_TIME`). Times are decimal strings of unix nanoseconds, enums integers, keys
lowerCamelCase (the OTLP JSON encoding). Message and tool content only with ``--include-content``
(``gen_ai.input.messages``, ``gen_ai.output.messages``, ``gen_ai.tool.call.arguments`` /
``.result``, as JSON strings); by default no prompt, answer or argument text leaves the log.
"""

from __future__ import annotations

import hashlib
import os
from functools import partial
from pathlib import Path
from typing import Any, Callable

import msgspec

from ..jsvalues import safe_int

SEMCONV = "1.41.0"
SCHEMA_URL = f"https://opentelemetry.io/schemas/{SEMCONV}"

INTERNAL, CLIENT = 1, 3
STATUS_ERROR = 2
SPANS_PER_LINE = 1000

_WELL_KNOWN = {"anthropic", "aws.bedrock", "azure.ai.inference", "azure.ai.openai", "cohere", "deepseek", "gcp.gemini",
               "gcp.gen_ai", "gcp.vertex_ai", "groq", "ibm.watsonx.ai", "mistral_ai", "openai", "perplexity", "x_ai"}


def provider_name(route: str | None) -> str:
    """``gen_ai.provider.name`` of a dsh route (``deepseek-official/deepseek-v4-flash`` → ``deepseek``): a
    well-known value where one applies, else dsh's provider id."""
    provider = (route or "").partition("/")[0]
    if provider in _WELL_KNOWN:
        return provider
    if provider.startswith("deepseek"):
        return "deepseek"
    return provider or "dsh"


def request_model(route: str | None) -> str | None:
    if not route:
        return None
    return route.partition("/")[2] or route


def span_id(session: str, kind: str, seq: Any) -> str:
    digest = hashlib.sha256(f"{session}\x00{kind}\x00{seq}".encode()).digest()[:8]
    return _nonzero(digest).hex()


def trace_id(session: str) -> str:
    return _nonzero(hashlib.sha256(f"{session}\x00trace".encode()).digest()[:16]).hex()


def _nonzero(digest: bytes) -> bytes:
    return digest if any(digest) else b"\x00" * (len(digest) - 1) + b"\x01"


def nanos(ms: int | None) -> str | None:
    """Epoch ms as the decimal string of unix nanoseconds OTLP/JSON writes; None for no time."""
    return None if ms is None else str(ms * 1_000_000)


def attribute(key: str, value: Any) -> dict | None:
    """An OTLP ``KeyValue``; None for a value that is None."""
    if value is None:
        return None
    return {"key": key, "value": any_value(value)}


def any_value(value: Any) -> dict:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, (list, tuple)):
        return {"arrayValue": {"values": [any_value(v) for v in value if v is not None]}}
    return {"stringValue": str(value)}


def attributes(pairs: list[tuple[str, Any]]) -> list[dict]:
    return [kv for kv in (attribute(key, value) for key, value in pairs) if kv is not None]


# -- what the rows do not carry: retries, subagent catalog entries, content -----------------------------


class Extras:
    """An extra reader of the log pass (``feed`` each event): ``llm/retry`` events, ``subagent/catalog``
    entries and, with ``content``, the messages and tool arguments and results.

    What it keeps waits for the row that takes it (popped then); what no row takes (a result without its
    call, a retry of a step without a chat) is forgotten a turn later (:meth:`forget_before`), so it holds
    about one turn's worth, however long the log."""

    def __init__(self, content: bool):
        self.content = content
        self.retries: dict[tuple, list[dict]] = {}  # (turn, step) → its llm/retry events
        self.catalog: list[tuple[str, int]] = []  # (child id, seq)
        self.pending_input: list[dict] = []
        self.inputs: dict[int, tuple[Any, list[dict]]] = {}  # settlement seq → (turn, the messages since the previous one)
        self.outputs: dict[int, tuple[Any, list[dict]]] = {}
        self.arguments: dict[int, tuple[Any, str]] = {}  # tool/call seq → (turn, its arguments text)
        self.results: dict[Any, tuple[Any, str]] = {}  # call id → (turn, result text (the latest))

    def feed(self, event) -> None:
        kind = event.type
        data = event.data if isinstance(event.data, dict) else {}
        turn = safe_int(data.get("turn"))
        if kind == "llm/retry":
            failure = data.get("failure")
            code = failure.get("code") if isinstance(failure, dict) else None
            self.retries.setdefault((turn, safe_int(data.get("step"))), []).append(
                {"seq": event.seq, "time": event.time, "retry": safe_int(data.get("retry")), "delay_ms": _number(data.get("delayMs")),
                 "max_retries": safe_int(data.get("maxRetries")), "mode": _text(data.get("mode")), "error": _text(code)}
            )
        elif kind == "subagent/catalog":
            child = data.get("childId")
            if isinstance(child, str):
                self.catalog.append((child, event.seq))
        if not self.content:
            return
        if kind in ("user/message", "system/message", "developer/message"):
            from ..model import message_of

            message = message_of(event) or {}
            role = message.get("role") if isinstance(message.get("role"), str) else kind.partition("/")[0]
            self.pending_input.append({"role": role, "parts": parts(message.get("content"))})
        elif kind == "tool/result":
            from ..model import tool_result_blocks, tool_result_call_id

            call_id = tool_result_call_id(event)
            blocks, _ = tool_result_blocks(event)
            text = _joined_text(blocks)
            self.pending_input.append({"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id, "response": text}]})
            if call_id is not None:
                self.results[call_id] = (turn, text)
        elif kind in ("assistant/message", "assistant/attempt"):
            self.inputs[event.seq] = (turn, self.pending_input)
            self.pending_input = []
            if kind == "assistant/message":
                from ..model import message_of

                message = message_of(event) or {}
                self.outputs[event.seq] = (turn, [{"role": "assistant", "parts": parts(message.get("content"))}])
        elif kind == "tool/call":
            arguments = data.get("arguments")
            if isinstance(arguments, str):
                self.arguments[event.seq] = (turn, arguments)

    def take(self, kept: dict, key: Any) -> Any:
        """What was kept for ``key`` (a row's), removed; None when nothing."""
        entry = kept.pop(key, None)
        return None if entry is None else entry[1]

    def forget_before(self, turn: Any) -> None:
        """Drop what no row of a turn before ``turn`` took (nor of no known turn): their rows are past."""
        if not isinstance(turn, int):
            return
        for kept in (self.inputs, self.outputs, self.arguments, self.results):
            stale = [key for key, (of, _) in kept.items() if not isinstance(of, int) or of < turn]
            for key in stale:
                del kept[key]
        stale = [key for key in self.retries if not isinstance(key[0], int) or key[0] < turn]
        for key in stale:
            del self.retries[key]


def _number(value: Any) -> Any:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _joined_text(blocks: Any) -> str:
    if not isinstance(blocks, list):
        return ""
    return "".join(block.get("text", "") for block in blocks if isinstance(block, dict) and isinstance(block.get("text"), str))


def parts(content: Any) -> list[dict]:
    """dsh content blocks as the conventions' message parts."""
    out = []
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind in ("text", "reasoning") and isinstance(block.get("text"), str):
            out.append({"type": kind, "content": block["text"]})
        elif kind == "tool-call":
            out.append({"type": "tool_call", "id": block.get("id"), "name": block.get("name"), "arguments": block.get("arguments")})
        elif kind == "tool-result":
            out.append({"type": "tool_call_response", "id": block.get("toolCallId"), "response": _joined_text(block.get("content"))})
        elif kind == "image":
            attachment = block.get("attachment") if isinstance(block.get("attachment"), dict) else {}
            out.append({"type": "image", "attachment_id": attachment.get("attachmentId"), "mime_type": attachment.get("mediaType")})
        elif isinstance(kind, str):
            out.append({"type": kind})
    return out


# -- spans of one session ---------------------------------------------------------------------------------


class Span:
    __slots__ = ("id", "parent", "name", "kind", "start", "end", "attributes", "events", "status", "row")

    def __init__(self, id: str, parent: str | None, name: str, kind: int, start: int | None, end: int | None,
                 attrs: list[dict], events: list[dict] | None = None, status: dict | None = None, row: tuple | None = None):
        self.id = id
        self.parent = parent
        self.name = name
        self.kind = kind
        self.start = start
        self.end = end
        self.attributes = attrs
        self.events = events or []
        self.status = status
        self.row = row


class SessionSpans:
    """A sink (:class:`dshctl.export.rows.Sink`): builds one session's spans from its rows and writes them,
    a batch of spans per line, to ``handle`` (trace id and the session span's parent as placeholders).

    A turn's rows are held until the turn ends, then written: memory stays about one turn's. What is
    known only at the end is filled in by :func:`write_traces`: a seeded log's rows before its last cut
    are inherited (each span says which row it is, :data:`ROW_KEY`), and a span without any time of its
    own takes its parent's start, else the session's (``None`` in the spool)."""

    def __init__(self, handle, session_key: str, extras: Extras, *, seeded: bool, created: int | None,
                 times_known: Callable[[], bool] = lambda: True):
        self.handle = handle
        self.key = session_key
        self.extras = extras
        self.root = span_id(session_key, "invoke_agent", 0)
        self.marks = seeded  # a later cut may make rows inherited: spans name their rows
        self.created = created
        self.times_known = times_known
        self.steps: dict[Any, list] = {}
        self.calls: dict[Any, list] = {}
        self.batch: list[Span] = []
        self.counts = {"turns": 0, "steps": 0, "tool_calls": 0}
        self.inherited: dict[str, int] = {}
        self.first: int | None = None
        self.last: int | None = None
        self.used: set[str] = set()
        self.tool_spans: list[dict] = []  # for subagent linking: id, seq, name, called, result
        self.start: int | None = None

    # sink interface
    def rows(self, table: str, records: list, keys: dict) -> None:
        if table == "steps":
            for row in records:
                self.steps.setdefault(row.turn, []).append((self._ordinal(table), row))
        elif table == "tool_calls":
            for row in records:
                self.calls.setdefault(row.turn, []).append((self._ordinal(table), row))
        elif table == "turns":
            for row in records:
                self._turn(self._ordinal(table), row)

    def _ordinal(self, table: str) -> int:
        ordinal = self.counts[table]
        self.counts[table] = ordinal + 1
        return ordinal

    def inherited_before(self, counts: dict[str, int]) -> None:
        """The rows handed over before the log's last cut were inherited: :func:`write_traces` marks their spans."""
        self.inherited = {table: count for table, count in counts.items() if count and table in self.counts}

    def session(self, record, keys: dict) -> None:
        for turn in list(self.steps) + [t for t in self.calls if t not in self.steps]:
            for span in self._children(turn, self.root):  # rows no turn span holds (outside any turn)
                self._emit(span)
        start = _earliest(self.first, self.created) if self.times_known() else None
        end = self.last if self.last is not None else start
        self.start = start
        if start is None:  # no time at all: a span needs one; nothing of this session is written
            self.batch = []
            self.handle.seek(0)
            self.handle.truncate()
            return
        attrs = attributes([
            ("gen_ai.operation.name", "invoke_agent"),
            ("gen_ai.provider.name", provider_name(keys.get("model"))),
            ("gen_ai.agent.name", "dsh"),
            ("gen_ai.agent.id", record.id),
            ("gen_ai.conversation.id", record.id),
            ("gen_ai.request.model", request_model(keys.get("model"))),
            ("gen_ai.usage.input_tokens", record.billed_input_tokens),
            ("gen_ai.usage.output_tokens", record.output_tokens),
            ("gen_ai.usage.cache_read.input_tokens", record.cache_read_tokens),
            ("gen_ai.usage.cache_creation.input_tokens", record.cache_write_tokens),
            ("gen_ai.usage.reasoning.output_tokens", record.reasoning_tokens),
            ("dsh.session.path", record.path),
            ("dsh.session.cwd", record.cwd),
            ("dsh.session.parent_id", record.parent_session),
            ("dsh.session.generation", record.generation),
            ("dsh.session.title", record.title if self.extras.content else None),
            ("dsh.turns", record.turns),
            ("dsh.steps", record.steps),
            ("dsh.llm_ms", record.llm_ms),
            ("dsh.tool_ms", record.tool_ms),
            *_cost_attributes(record.costs),
        ])
        self._emit(Span(self.root, None, "invoke_agent dsh", INTERNAL, start, end, attrs))
        self.flush()

    # spans
    def _unique(self, kind: str, seq: Any) -> str:
        value = span_id(self.key, kind, seq)
        n = 0
        while value in self.used:
            n += 1
            value = span_id(self.key, kind, f"{seq}#{n}")
        self.used.add(value)
        return value

    def _turn(self, ordinal: int, row) -> None:
        turn_span = self._unique("turn", row.turn)
        children = self._children(row.turn, turn_span)
        start = row.start_time
        end = start + row.duration_ms if start is not None and row.duration_ms is not None else None
        for child in children:
            start = _earliest(start, child.start)
            end = _latest(end, child.end)
        end = _latest(end, start)
        for child in children:
            if child.start is None:  # no time of its own: the turn's
                child.start = start
            self._emit(child)
        status = {"code": STATUS_ERROR, "message": row.end_reason} if row.end_reason in ("error", "interrupted") else None
        attrs = attributes([
            ("dsh.turn", row.turn),
            ("dsh.turn.end_reason", row.end_reason),
            ("dsh.steps", row.steps),
            ("dsh.inherited", row.inherited),
            ("gen_ai.conversation.id", row.session),
            ("gen_ai.usage.input_tokens", row.billed_input_tokens),
            ("gen_ai.usage.output_tokens", row.output_tokens),
            ("dsh.prompt", row.prompt if self.extras.content else None),
        ])
        self._emit(Span(turn_span, self.root, f"turn {row.turn}", INTERNAL, start, end, attrs, status=status, row=("turns", ordinal)))
        self.extras.forget_before(row.turn)

    def _children(self, turn: Any, parent: str) -> list[Span]:
        """The chat and tool spans of one turn's rows (taken out of the pending rows), not yet written."""
        spans = []
        extras = self.extras
        by_step: dict[Any, list[Span]] = {}
        for ordinal, row in self.steps.pop(turn, ()):
            if row.attempt is None:  # a step without any settlement: no model call, no span
                continue
            span = self._chat(ordinal, row, parent)
            by_step.setdefault(row.step, []).append((row.seq, span))
            spans.append(span)
        for step, chats in by_step.items():
            for retry in extras.retries.pop((turn, step), ()):
                earlier = [span for seq, span in chats if seq is not None and seq < retry["seq"]]
                if earlier:
                    earlier[-1].events.append(_retry_event(retry))
        for ordinal, row in self.calls.pop(turn, ()):
            spans.append(self._tool(ordinal, row, parent))
        return spans

    def _chat(self, ordinal: int, row, parent: str) -> Span:
        model = request_model(row.model)
        start = row.requested_at if row.requested_at is not None else (row.step_started_at if row.step_started_at is not None else row.settled_at)
        end = _latest(row.settled_at, start)
        failed = row.outcome == "attempt"
        error = (row.failure_code or row.finish_reason or "incomplete") if failed else None
        ttfc = row.dshctl.provider_ttft_ms
        extras = self.extras
        inputs = extras.take(extras.inputs, row.seq)
        outputs = extras.take(extras.outputs, row.seq)
        attrs = attributes([
            ("gen_ai.operation.name", "chat"),
            ("gen_ai.provider.name", provider_name(row.model)),
            ("gen_ai.request.model", model),
            ("gen_ai.response.model", model if row.outcome == "message" else None),
            ("gen_ai.conversation.id", row.session),
            ("gen_ai.response.finish_reasons", [row.finish_reason] if row.finish_reason is not None else None),
            ("gen_ai.response.time_to_first_chunk", ttfc / 1000 if ttfc is not None else None),
            ("gen_ai.usage.input_tokens", row.billed_input_tokens),
            ("gen_ai.usage.cache_read.input_tokens", row.cache_read_tokens),
            ("gen_ai.usage.cache_creation.input_tokens", row.cache_write_tokens),
            ("gen_ai.usage.output_tokens", row.output_tokens),
            ("gen_ai.usage.reasoning.output_tokens", row.reasoning_tokens),
            ("error.type", error),
            ("dsh.route", row.model),
            ("dsh.turn", row.turn),
            ("dsh.step", row.step),
            ("dsh.attempt", row.attempt),
            ("dsh.retry", row.retry),
            ("dsh.outcome", row.outcome),
            ("dsh.seq", row.seq),
            ("dsh.ttft_ms", row.ttft_ms),
            ("dsh.llm_ms", row.llm_ms),
            ("dsh.inherited", row.inherited),
            *_cost_attributes(row.costs),
            ("gen_ai.input.messages", _json(inputs) if extras.content else None),
            ("gen_ai.output.messages", _json(_with_finish(outputs, row.finish_reason)) if extras.content else None),
        ])
        status = {"code": STATUS_ERROR, "message": error} if failed else None
        name = f"chat {model}" if model else "chat"
        return Span(self._unique("chat", row.seq), parent, name, CLIENT, start, end, attrs, status=status, row=("steps", ordinal))

    def _tool(self, ordinal: int, row, parent: str) -> Span:
        start = row.called_at
        end = _latest(row.result_at, start)
        extras = self.extras
        arguments = extras.take(extras.arguments, row.seq)
        result = extras.take(extras.results, row.call_id) if row.matched else None
        error = (row.error_code or row.error_name or "tool_error") if row.failed else None
        attrs = attributes([
            ("gen_ai.operation.name", "execute_tool"),
            ("gen_ai.tool.name", row.name),
            ("gen_ai.tool.call.id", row.call_id),
            ("gen_ai.tool.type", "function"),
            ("gen_ai.conversation.id", row.session),
            ("error.type", error),
            ("dsh.turn", row.turn),
            ("dsh.step", row.step),
            ("dsh.seq", row.seq),
            ("dsh.tool_ms", row.tool_ms),
            ("dsh.tool.matched", row.matched),
            ("dsh.inherited", row.inherited),
            ("gen_ai.tool.call.arguments", arguments if extras.content else None),
            ("gen_ai.tool.call.result", result if extras.content else None),
        ])
        span = Span(self._unique("tool", row.seq), parent, f"execute_tool {row.name or '?'}", INTERNAL, start, end, attrs,
                    status={"code": STATUS_ERROR, "message": error} if error else None, row=("tool_calls", ordinal))
        self.tool_spans.append({"id": span.id, "seq": row.seq, "name": row.name, "called": row.called_at, "result": row.result_at})
        return span

    def _emit(self, span: Span) -> None:
        for moment in (span.start, span.end):
            if moment is not None:
                self.first = _earliest(self.first, moment)
                self.last = _latest(self.last, moment)
        self.batch.append(span)
        if len(self.batch) >= SPANS_PER_LINE:
            self.flush()

    def flush(self) -> None:
        if not self.batch:
            return
        spans = [self._encode(span) for span in self.batch]
        self.batch = []
        self.handle.write(msgspec.json.encode(traces_data(spans)) + b"\n")

    def _encode(self, span: Span) -> dict:
        start = span.start
        end = span.end if span.end is not None else start
        out = {
            "traceId": "",  # filled in by write_traces, which knows the session's trace
            "spanId": span.id,
            "parentSpanId": span.parent or "",
            "name": span.name,
            "kind": span.kind,
            "startTimeUnixNano": nanos(start),  # None: no time of its own (write_traces fills it in)
            "endTimeUnixNano": nanos(end if start is None or end is None else max(start, end)),
            "attributes": span.attributes,
        }
        if span.events:
            out["events"] = span.events
        if span.status is not None:
            out["status"] = span.status
        if self.marks and span.row is not None:
            out[ROW_KEY] = span.row
        return out


ROW_KEY = "dshctlRow"
"""In the spool of a seeded log: the ``(table, ordinal)`` of a span's row, so that :func:`write_traces`
marks the spans of rows before the last cut inherited (removed there: never in the file written)."""


def traces_data(spans: list[dict]) -> dict:
    from .. import __version__

    return {
        "resourceSpans": [{
            "resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "dsh"}},
                                        {"key": "telemetry.sdk.name", "value": {"stringValue": "dshctl"}}]},
            "scopeSpans": [{"scope": {"name": "dshctl", "version": __version__}, "spans": spans, "schemaUrl": SCHEMA_URL}],
            "schemaUrl": SCHEMA_URL,
        }]
    }


def _retry_event(retry: dict) -> dict:
    return {
        "timeUnixNano": nanos(retry["time"]),
        "name": "dsh.llm.retry",
        "attributes": attributes([
            ("dsh.retry", retry["retry"]),
            ("dsh.retry.delay_ms", retry["delay_ms"]),
            ("dsh.retry.max_retries", retry["max_retries"]),
            ("dsh.retry.mode", retry["mode"]),
            ("error.type", retry["error"]),
            ("dsh.seq", retry["seq"]),
        ]),
    }


def _cost_attributes(costs: Any) -> list[tuple[str, Any]]:
    """The cost of a span (dshctl's estimate from list prices; the conventions define none)."""
    if costs is None or costs is msgspec.UNSET or costs.currency is None:
        return []
    return [("dsh.cost.total", float(costs.total)), ("dsh.cost.currency", costs.currency)]


def _with_finish(messages: list | None, finish: str | None) -> list | None:
    if messages and finish is not None:
        messages[-1]["finish_reason"] = finish
    return messages


def _json(value: Any) -> str | None:
    return None if value is None else msgspec.json.encode(value).decode()


def _earliest(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else min(a, b)


def _latest(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else max(a, b)


# -- one log, in a worker ----------------------------------------------------------------------------------


class TraceResult(msgspec.Struct, kw_only=True):
    """One session's spool of spans and what linking it to other sessions needs. ``start``: the time a
    span without one takes (the session's start; None: the session has no time, and no spans);
    ``inherited``: per table, how many rows (the first) came before a seeded log's last cut."""

    path: str
    session: str
    session_id: str | None
    parent_id: str | None
    subagent: bool
    created_at: int | None
    start: int | None
    root_span: str
    spool: str
    tool_spans: list[dict]
    catalog: list[tuple[str, int]]
    inherited: dict[str, int]
    warnings: list[str]


NO_TIME = "no event times: a span needs a time, so this session is left out of the traces"


def trace_log(ref, *, spool_dir: str, prices, content: bool, names: dict, window=None) -> TraceResult | None:
    from ..options.window import created_ms
    from ..reader import open_log
    from .rows import LogPass

    log = open_log(ref)
    header = log.header
    if window is not None and not window.holds(header.createdAt):  # standard input outside --since/--until
        log.close()
        return None
    key = header.id if isinstance(header.id, str) and header.id else log.display
    spool = Path(spool_dir) / f"{names[log.display]}.otlp"
    extras = Extras(content)
    try:
        with open(spool, "wb", buffering=1 << 20) as handle:
            spans = SessionSpans(handle, key, extras, seeded=bool(header.seeded) or header.seedLength is not None,
                                 created=created_ms(header.createdAt), times_known=lambda: not log.fixture)
            session = LogPass(log, spans, prices=prices, extra=(extras,), per_turn=True).run()
    finally:
        log.close()
    return TraceResult(
        path=log.display,
        session=key,
        session_id=header.id,
        parent_id=header.parentSession,
        subagent=header.origin == "subagent",
        created_at=created_ms(header.createdAt),
        start=spans.start,
        root_span=spans.root,
        spool=str(spool),
        tool_spans=spans.tool_spans,
        catalog=extras.catalog,
        inherited=spans.inherited,
        warnings=[*session.warnings, *([NO_TIME] if spans.start is None else [])],
    )


def reader_for(spool_dir: Path, prices, content: bool, refs: list, window=None):
    names = {ref.display: f"log{index:06d}" for index, ref in enumerate(refs)}
    return partial(trace_log, spool_dir=str(spool_dir), prices=prices, content=content, names=names, window=window)


# -- the file ------------------------------------------------------------------------------------------------


class Placement(msgspec.Struct):
    """Where one session's spans go: its trace, the session span's parent (another session's span, or
    None), its span links, and, for a second file of a session already written (the same session id:
    a copy, another generation), the text mixed into its span ids so that they stay unique."""

    trace: str
    parent: str | None
    links: list
    twin: str | None = None


def link_sessions(results: list[TraceResult]) -> list[Placement | None]:
    """Per result (in order): its :class:`Placement`, None for a session left out (no time)."""
    written = [result for result in results if result.start is not None]
    by_id: dict[str, TraceResult] = {}
    for result in written:
        if result.session_id is not None:
            by_id.setdefault(result.session_id, result)  # a twin's children join the first file's spans

    def spawned_by(child: TraceResult, parent: TraceResult) -> str:
        for child_id, seq in parent.catalog:
            if child_id == child.session_id:
                running = [span for span in parent.tool_spans if span["seq"] < seq]
                if running:
                    return running[-1]["id"]
        created = child.created_at
        if created is not None:
            before = [span for span in parent.tool_spans if span["called"] is not None and span["called"] <= created]
            around = [span for span in before if span["result"] is None or created <= span["result"]]
            if around:
                return around[-1]["id"]
            # a subagent run in the background outlives its call: the latest agent-starting call before it
            agents = [span for span in before if any(word in (span["name"] or "").lower() for word in ("agent", "task"))]
            if agents:
                return agents[-1]["id"]
        return parent.root_span

    placed: dict[int, Placement] = {}
    firsts: dict[str, TraceResult] = {}
    for result in written:
        firsts.setdefault(result.session, result)

    def place(result: TraceResult, depth: int = 0) -> Placement:
        done = placed.get(id(result))
        if done is not None:
            return done
        twin = None if firsts[result.session] is result else result.path
        own_trace = trace_id(result.session if twin is None else f"{result.session}\x00{twin}")
        parent = by_id.get(result.parent_id) if result.parent_id is not None else None
        if parent is None or parent.session == result.session or depth > 64:
            answer = Placement(own_trace, None, [], twin)
        elif result.subagent or any(child == result.session_id for child, _ in parent.catalog):
            answer = Placement(place(parent, depth + 1).trace, spawned_by(result, parent), [], twin)
        else:  # a fork: a trace of its own, linked to the session it was forked from
            parent_trace = place(parent, depth + 1).trace
            answer = Placement(own_trace, None, [{"traceId": parent_trace, "spanId": parent.root_span,
                                                  "attributes": [{"key": "dsh.link", "value": {"stringValue": "forked-from"}}]}], twin)
        placed[id(result)] = answer
        return answer

    return [place(result) if result.start is not None else None for result in results]


def _twin_span(span: str, twin: str) -> str:
    return _nonzero(hashlib.sha256(f"{span}\x00{twin}".encode()).digest()[:8]).hex()


def write_traces(results: list[TraceResult], out) -> int:
    """The spools of ``results``, in order, with what only the whole run knows filled in: trace ids,
    parents and links across sessions, a twin file's own span ids, inherited rows, the times of spans
    without one. Returns the spans written."""
    placements = link_sessions(results)
    decode = msgspec.json.decode
    encode = msgspec.json.encode
    count = 0
    for result, placement in zip(results, placements):
        if placement is not None:
            with open(result.spool, "rb") as handle:
                for line in handle:
                    data = decode(line)
                    for resource in data["resourceSpans"]:
                        for scope in resource["scopeSpans"]:
                            for span in scope["spans"]:
                                _finish_span(span, result, placement)
                                count += 1
                    out.write(encode(data) + b"\n")
        os.unlink(result.spool)
    return count


def _finish_span(span: dict, result: TraceResult, placement: Placement) -> None:
    span["traceId"] = placement.trace
    root = span["spanId"] == result.root_span
    if placement.twin is not None:
        span["spanId"] = _twin_span(span["spanId"], placement.twin)
        if span["parentSpanId"]:
            span["parentSpanId"] = _twin_span(span["parentSpanId"], placement.twin)
    if root:
        if placement.parent is not None:
            span["parentSpanId"] = placement.parent
        if placement.links:
            span["links"] = placement.links
    row = span.pop(ROW_KEY, None)
    if row is not None and row[1] < result.inherited.get(row[0], 0):
        for kv in span["attributes"]:
            if kv["key"] == "dsh.inherited":
                kv["value"] = {"boolValue": True}
    if span["startTimeUnixNano"] is None:
        span["startTimeUnixNano"] = nanos(result.start)
    start = span["startTimeUnixNano"]
    if span["endTimeUnixNano"] is None or int(span["endTimeUnixNano"]) < int(start):
        span["endTimeUnixNano"] = start
    for event in span.get("events", ()):
        if event["timeUnixNano"] is None:
            event["timeUnixNano"] = start
