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
written as lowercase hex. Times are decimal strings of unix nanoseconds, enums integers, keys
lowerCamelCase (the OTLP JSON encoding). Message and tool content only with ``--include-content``
(``gen_ai.input.messages``, ``gen_ai.output.messages``, ``gen_ai.tool.call.arguments`` /
``.result``, as JSON strings); by default no prompt, answer or argument text leaves the log.
"""

from __future__ import annotations

import hashlib
import os
from functools import partial
from pathlib import Path
from typing import Any

import msgspec

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


def nanos(ms: int | None) -> str:
    return str((ms or 0) * 1_000_000)


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
    entries and, with ``content``, the messages and tool arguments and results."""

    def __init__(self, content: bool):
        self.content = content
        self.retries: dict[tuple, list[dict]] = {}
        self.catalog: list[tuple[str, int]] = []  # (child id, seq)
        self.pending_input: list[dict] = []
        self.inputs: dict[int, list[dict]] = {}  # settlement seq → the messages that entered since the previous one
        self.outputs: dict[int, list[dict]] = {}
        self.arguments: dict[int, str] = {}  # tool/call seq → its arguments text
        self.results: dict[Any, str] = {}  # call id → result text (the latest)
        self.call_seqs: dict[Any, int] = {}

    def feed(self, event) -> None:
        kind = event.type
        data = event.data if isinstance(event.data, dict) else {}
        if kind == "llm/retry":
            failure = data.get("failure")
            code = failure.get("code") if isinstance(failure, dict) else None
            self.retries.setdefault((_int(data.get("turn")), _int(data.get("step"))), []).append(
                {"seq": event.seq, "time": event.time, "retry": _int(data.get("retry")), "delay_ms": _number(data.get("delayMs")),
                 "max_retries": _int(data.get("maxRetries")), "mode": _text(data.get("mode")), "error": _text(code)}
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
                self.results[call_id] = text
        elif kind in ("assistant/message", "assistant/attempt"):
            self.inputs[event.seq] = self.pending_input
            self.pending_input = []
            if kind == "assistant/message":
                from ..model import message_of

                message = message_of(event) or {}
                self.outputs[event.seq] = [{"role": "assistant", "parts": parts(message.get("content"))}]
        elif kind == "tool/call":
            arguments = data.get("arguments")
            if isinstance(arguments, str):
                self.arguments[event.seq] = arguments


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


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
    __slots__ = ("id", "parent", "name", "kind", "start", "end", "attributes", "events", "status")

    def __init__(self, id: str, parent: str | None, name: str, kind: int, start: int | None, end: int | None,
                 attrs: list[dict], events: list[dict] | None = None, status: dict | None = None):
        self.id = id
        self.parent = parent
        self.name = name
        self.kind = kind
        self.start = start
        self.end = end
        self.attributes = attrs
        self.events = events or []
        self.status = status


class SessionSpans:
    """A sink (:class:`dshctl.export.rows.Sink`): builds one session's spans from its rows and writes them,
    a batch of spans per line, to ``handle`` (trace id and the session span's parent as placeholders)."""

    def __init__(self, handle, session_key: str, extras: Extras, *, seeded: bool):
        self.handle = handle
        self.key = session_key
        self.extras = extras
        self.root = span_id(session_key, "invoke_agent", 0)
        self.seeded = seeded  # a cut may still mark rows inherited: hold every span until the end
        self.steps: dict[Any, list] = {}
        self.calls: dict[Any, list] = {}
        self.batch: list[Span] = []
        self.held: list[tuple[str, list]] = []  # a seeded log's rows, in order, until its end
        self.first: int | None = None
        self.last: int | None = None
        self.used: set[str] = set()
        self.tool_spans: list[dict] = []  # for subagent linking: id, seq, name, called, result, call id
        self.model: str | None = None

    # sink interface
    def rows(self, table: str, records: list, keys: dict) -> None:
        if self.seeded:
            self.held.append((table, records))
        else:
            self._rows(table, records)

    def _rows(self, table: str, records: list) -> None:
        if table == "steps":
            for row in records:
                self.steps.setdefault(row.turn, []).append(row)
        elif table == "tool_calls":
            for row in records:
                self.calls.setdefault(row.turn, []).append(row)
        elif table == "turns":
            for row in records:
                self._turn(row)

    def inherited_before(self, counts: dict[str, int]) -> None:
        """The rows handed over before the log's last cut were inherited (a seeded log's are still held)."""
        left = dict(counts)
        for table, records in self.held:
            for row in records:
                if left.get(table, 0) > 0:
                    left[table] -= 1
                    if hasattr(row, "inherited"):
                        row.inherited = True

    def session(self, record, keys: dict) -> None:
        held, self.held, self.seeded = self.held, [], False
        for table, records in held:
            self._rows(table, records)
        for turn in list(self.steps) + [t for t in self.calls if t not in self.steps]:
            self._children(turn, self.root)  # rows no turn span holds (outside any turn)
        start = _earliest(self.first, record.created_at if isinstance(record.created_at, int) and record.created_at > 0 else None)
        end = self.last if self.last is not None else start
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
        self._emit(Span(self.root, None, "invoke_agent dsh", INTERNAL, start, end, attrs), root=True)
        self.flush(final=True)

    # spans
    def _unique(self, kind: str, seq: Any) -> str:
        value = span_id(self.key, kind, seq)
        n = 0
        while value in self.used:
            n += 1
            value = span_id(self.key, kind, f"{seq}#{n}")
        self.used.add(value)
        return value

    def _turn(self, row) -> None:
        turn_span = self._unique("turn", row.turn)
        children = self._children(row.turn, turn_span)
        start = row.start_time
        end = start + row.duration_ms if start is not None and row.duration_ms is not None else None
        for child in children:
            start = _earliest(start, child.start)
            end = _latest(end, child.end)
        end = _latest(end, start)
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
        self._emit(Span(turn_span, self.root, f"turn {row.turn}", INTERNAL, start, end, attrs, status=status))

    def _children(self, turn: Any, parent: str) -> list[Span]:
        """The chat and tool spans of one turn's rows (taken out of the pending rows)."""
        spans = []
        retries = self.extras.retries
        by_step: dict[Any, list[Span]] = {}
        for row in self.steps.pop(turn, ()):
            if row.attempt is None:
                continue
            span = self._chat(row, parent)
            by_step.setdefault(row.step, []).append((row.seq, span))
            spans.append(span)
        for step, chats in by_step.items():
            for retry in retries.pop((turn, step), ()):
                earlier = [span for seq, span in chats if seq is not None and seq < retry["seq"]]
                if earlier:
                    earlier[-1].events.append(_retry_event(retry))
        for row in self.calls.pop(turn, ()):
            spans.append(self._tool(row, parent))
        for span in spans:
            self._emit(span)
        return spans

    def _chat(self, row, parent: str) -> Span:
        model = request_model(row.model)
        start = row.requested_at if row.requested_at is not None else (row.step_started_at if row.step_started_at is not None else row.settled_at)
        end = _latest(row.settled_at, start)
        failed = row.outcome == "attempt"
        error = (row.failure_code or row.finish_reason or "incomplete") if failed else None
        ttfc = row.dshctl.provider_ttft_ms
        extras = self.extras
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
            ("gen_ai.input.messages", _json(extras.inputs.pop(row.seq, None)) if extras.content else None),
            ("gen_ai.output.messages", _json(_with_finish(extras.outputs.pop(row.seq, None), row.finish_reason)) if extras.content else None),
        ])
        status = {"code": STATUS_ERROR, "message": error} if failed else None
        name = f"chat {model}" if model else "chat"
        return Span(self._unique("chat", row.seq), parent, name, CLIENT, start, end, attrs, status=status)

    def _tool(self, row, parent: str) -> Span:
        start = row.called_at
        end = _latest(row.result_at, start)
        extras = self.extras
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
            ("gen_ai.tool.call.arguments", extras.arguments.pop(row.seq, None) if extras.content else None),
            ("gen_ai.tool.call.result", extras.results.get(row.call_id) if extras.content and row.matched else None),
        ])
        span = Span(self._unique("tool", row.seq), parent, f"execute_tool {row.name or '?'}", INTERNAL, start, end, attrs,
                    status={"code": STATUS_ERROR, "message": error} if error else None)
        self.tool_spans.append({"id": span.id, "seq": row.seq, "name": row.name, "called": row.called_at, "result": row.result_at})
        return span

    def _emit(self, span: Span, root: bool = False) -> None:
        if span.start is not None:
            self.first = _earliest(self.first, span.start)
        if span.end is not None:
            self.last = _latest(self.last, span.end)
        self.batch.append(span)
        if not self.seeded and len(self.batch) >= SPANS_PER_LINE:
            self.flush()

    def flush(self, final: bool = False) -> None:
        if not self.batch:
            return
        spans = [self._encode(span) for span in self.batch]
        self.batch = []
        self.handle.write(msgspec.json.encode(traces_data(spans)) + b"\n")

    def _encode(self, span: Span) -> dict:
        start = span.start if span.start is not None else (self.first or 0)
        end = span.end if span.end is not None else start
        out = {
            "traceId": "",  # filled in by write_traces, which knows the session's trace
            "spanId": span.id,
            "parentSpanId": span.parent or "",
            "name": span.name,
            "kind": span.kind,
            "startTimeUnixNano": nanos(start),
            "endTimeUnixNano": nanos(max(start, end)),
            "attributes": span.attributes,
        }
        if span.events:
            out["events"] = span.events
        if span.status is not None:
            out["status"] = span.status
        return out


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
    """One session's spool of spans and what linking it to other sessions needs."""

    path: str
    session: str
    session_id: str | None
    parent_id: str | None
    subagent: bool
    created_at: int | None
    root_span: str
    spool: str
    tool_spans: list[dict]
    catalog: list[tuple[str, int]]
    warnings: list[str]


def trace_log(ref, *, spool_dir: str, prices, content: bool, names: dict) -> TraceResult:
    from ..reader import open_log
    from .rows import LogPass

    log = open_log(ref)
    header = log.header
    key = header.id if isinstance(header.id, str) and header.id else log.display
    spool = Path(spool_dir) / f"{names[log.display]}.otlp"
    extras = Extras(content)
    try:
        with open(spool, "wb", buffering=1 << 20) as handle:
            spans = SessionSpans(handle, key, extras, seeded=bool(header.seeded) or header.seedLength is not None)
            session = LogPass(log, spans, prices=prices, extra=(extras,)).run()
    finally:
        log.close()
    return TraceResult(
        path=log.display,
        session=key,
        session_id=header.id,
        parent_id=header.parentSession,
        subagent=header.origin == "subagent",
        created_at=header.createdAt if isinstance(header.createdAt, int) else None,
        root_span=spans.root,
        spool=str(spool),
        tool_spans=spans.tool_spans,
        catalog=extras.catalog,
        warnings=list(session.warnings),
    )


def reader_for(spool_dir: Path, prices, content: bool, refs: list):
    names = {ref.display: f"log{index:06d}" for index, ref in enumerate(refs)}
    return partial(trace_log, spool_dir=str(spool_dir), prices=prices, content=content, names=names)


# -- the file ------------------------------------------------------------------------------------------------


def link_sessions(results: list[TraceResult]) -> dict[str, tuple[str, str | None, list]]:
    """Per session: (trace id, the session span's parent span id or None, its span links)."""
    by_id = {result.session_id: result for result in results if result.session_id is not None}

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

    placed: dict[str, tuple[str, str | None, list]] = {}

    def place(result: TraceResult, depth: int = 0) -> tuple[str, str | None, list]:
        done = placed.get(result.session)
        if done is not None:
            return done
        parent = by_id.get(result.parent_id) if result.parent_id is not None else None
        if parent is None or parent is result or depth > 64:
            answer = (trace_id(result.session), None, [])
        elif result.subagent or any(child == result.session_id for child, _ in parent.catalog):
            answer = (place(parent, depth + 1)[0], spawned_by(result, parent), [])
        else:  # a fork: a trace of its own, linked to the session it was forked from
            parent_trace = place(parent, depth + 1)[0]
            answer = (trace_id(result.session), None, [{"traceId": parent_trace, "spanId": parent.root_span,
                                                         "attributes": [{"key": "dsh.link", "value": {"stringValue": "forked-from"}}]}])
        placed[result.session] = answer
        return answer

    for result in results:
        place(result)
    return placed


def write_traces(results: list[TraceResult], out) -> int:
    """The spools of ``results``, in order, with their trace ids and links filled in; returns spans written."""
    placed = link_sessions(results)
    decode = msgspec.json.decode
    encode = msgspec.json.encode
    count = 0
    for result in results:
        trace, parent, links = placed[result.session]
        with open(result.spool, "rb") as handle:
            for line in handle:
                data = decode(line)
                for resource in data["resourceSpans"]:
                    for scope in resource["scopeSpans"]:
                        for span in scope["spans"]:
                            span["traceId"] = trace
                            if span["spanId"] == result.root_span:
                                if parent is not None:
                                    span["parentSpanId"] = parent
                                if links:
                                    span["links"] = links
                            count += 1
                out.write(encode(data) + b"\n")
        os.unlink(result.spool)
    return count
