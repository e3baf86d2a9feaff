"""v0 and v1 logs: packed chunk rows, legacy shapes, and folding chunks into settlements.

Physical decode (FORMAT §2.4): a line is either one event or a packed row standing
for ≥ 3 consecutive ``assistant/chunk`` events, one seq per member. A row becomes
one compact run record straight away — its members are never materialized.

Legacy normalization (FORMAT §2.5) upgrades pre-identity shapes in memory the way
dsh 0.1.1-rc.2 does, plus the released v0→v1 edge's renames.

Folding (FORMAT §2.6, dsh's v1→v2 rule) groups chunks per (turn, step) into an
attempt stream: a ``finish`` closes the group; a chunk of another step or after a
finish, ``turn/end``, ``step/end``, ``llm/retry``, ``llm/retry-started`` or end of
input settles it. The group is embedded into the ``assistant/message`` whose
``sourceEventSeqs`` cite exactly its chunks; otherwise it becomes an
``assistant/attempt`` stamped with the seq, time and line of its last chunk.
Events that arrived while a group was pending are emitted after the attempt, or
before the message that embeds it, as dsh's migration orders them. Seqs are the
file's own: folded chunk seqs are listed in :attr:`Event.chunkSeqs`.

Where dsh's migration would refuse (a message without provenance while a
same-step group is pending, or provenance that does not match the group), the
reader stays lenient and notes it on the event; ``dshctl validate`` reports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterator

import msgspec

from ..errors import FormatError
from ..jsvalues import NOT_JSON, is_plain_safe_int, safe_int
from ..model import Event, decode_seq_ranges, encode_seq_ranges, seq_runs
from ..stream import Accumulator, ReasoningChunks, TextChunks, ToolCallChunks
from .v0_rows import WIRE_ROW_DECODERS, TextRowData, ToolRowData, WireTextRow, WireToolRow

ROW_TAGS = ("text-chunks", "reasoning-chunks", "tool-call-chunks")


@dataclass(slots=True)
class PackedRow:
    """A decoded v0 storage row: one compact run standing for ``count`` chunk events."""

    record: TextChunks | ReasoningChunks | ToolCallChunks
    seq0: int
    count: int
    turn: Any
    step: Any
    line: int
    last_time: int


def decode_row(row: dict, line: int, position: int, fixture: bool) -> PackedRow:
    """Decode one packed row (exact key sets, FORMAT §2.4). ``position`` is the seq it must start at,
    used when the fixture form omitted ``seq0``/``time0``. Member types and ranges are checked by
    msgspec in C, so a 500-member row costs little more than its JSON decode."""
    tag = row["type"]
    envelope_keys = {"type", "data"} if fixture and "seq0" not in row else {"type", "seq0", "time0", "data"}
    if row.keys() != envelope_keys:
        raise _bad_row(tag, line, f"envelope keys {sorted(row)}")
    try:
        data: TextRowData | ToolRowData = (
            msgspec.convert(row["data"], ToolRowData) if tag == "tool-call-chunks" else msgspec.convert(row["data"], TextRowData)
        )
    except msgspec.ValidationError as exc:
        raise _bad_row(tag, line, str(exc))
    if "seq0" in row:
        seq0, time0 = row["seq0"], row["time0"]
        if not is_plain_safe_int(seq0) or seq0 < 0 or not is_plain_safe_int(time0):
            raise _bad_row(tag, line, "seq0 and time0 must be safe integers")
    else:
        seq0, time0 = position, 0
    return _packed_row(tag, seq0, time0, data, line)


def _bad_row(tag: str, line: int, why: str) -> FormatError:
    return FormatError(f"malformed {tag} storage row: {why}", line=line)


def _packed_row(tag: str, seq0: int, time0: int, data: TextRowData | ToolRowData, line: int) -> PackedRow:
    members = data.args if type(data) is ToolRowData else data.texts  # type: ignore[union-attr]  # the tag chose the type
    dt = data.dt
    if len(dt) != len(members) - 1:
        raise _bad_row(tag, line, "dt must hold one safe integer per member after the first")
    last_time = time0 + sum(dt)
    if not is_plain_safe_int(last_time) or not is_plain_safe_int(seq0 + len(members) - 1):
        raise _bad_row(tag, line, "member seq or time leaves the safe-integer range")
    record: TextChunks | ReasoningChunks | ToolCallChunks
    if type(data) is ToolRowData:
        record = ToolCallChunks(time0=time0, index=data.index, dt=dt, id=data.id, name=data.name, args=members)
    elif tag == "text-chunks":
        record = TextChunks(time0=time0, index=data.index, dt=dt, texts=members)
    else:
        record = ReasoningChunks(time0=time0, index=data.index, dt=dt, texts=members)
    return PackedRow(record, seq0, len(members), data.turn, data.step, line, last_time)


_ROW_PREFIX = b'{"type":"'


def decode_row_line(raw: bytes, line: int) -> PackedRow | None:
    """A packed row decoded straight from its line in one typed pass, when the line is written as
    dsh writes rows (``{"type":"<tag>",...}`` with ``seq0``/``time0``); ``None`` for anything else,
    which the general path then decodes and judges. Its errors are the general path's own."""
    if not raw.startswith(_ROW_PREFIX):
        return None
    tag_end = raw.find(b'"', 9, 27)
    decode = WIRE_ROW_DECODERS.get(raw[9:tag_end]) if tag_end > 0 else None
    if decode is None:
        return None
    try:
        wire: WireTextRow | WireToolRow = decode(raw)
    except NOT_JSON:
        return None
    if wire.type.encode() != raw[9:tag_end]:
        return None  # an escaped spelling of the tag: leave it to the general path
    try:
        return _packed_row(wire.type, wire.seq0, wire.time0, wire.data, line)
    except FormatError:
        return None


# ---------------------------------------------------------------------------
# Legacy normalization (FORMAT §2.5)

_SIMPLE_TURN_END = {"completed", "blocked", "max-tokens", "interrupted"}


class LegacyNormalizer:
    """Upgrades one event at a time; keeps the little state the rules need."""

    def __init__(self, session_id: Any):
        self.session_id = session_id
        self.tool_result_ids: dict[int, str] = {}
        self.retry_chains: dict[tuple, str] = {}
        self.compaction_id: str | None = None  # the open compaction's id, shared by its summary and end

    def legacy_id(self, seq: int) -> str:
        return f"legacy-message:{self.session_id}:{seq}"

    UNTOUCHED: ClassVar[frozenset[str]] = frozenset({"assistant/chunk", "step/start", "step/end", "tool/call", "llm/retry-started", "session/title"})
    """Frequent types no legacy rule touches: skipped without a call's worth of checks."""

    def normalize(self, event: Event) -> None:
        """Upgrade one event in place: ``compact/*`` is renamed ``compaction/*``, then the rule of its
        type (if any) rewrites an object payload."""
        kind = event.type
        if kind.startswith("compact/"):
            event.type = kind = "compaction/" + kind[len("compact/") :]
        data = event.data
        if not isinstance(data, dict):
            return
        rule = _LEGACY_RULES.get(kind)
        if rule is not None:
            rule(self, event, data)

    def _turn_start(self, event: Event, data: dict) -> None:
        if set(data) == {"turn", "trigger"}:
            event.data = {"turn": data["turn"]}

    def _steering_message(self, event: Event, data: dict) -> None:
        event.type = "user/message"
        if isinstance(data.get("message"), dict):
            event.data = data["message"]
        else:
            event.data = {
                "id": self.legacy_id(event.seq),
                "role": "user",
                "content": data.get("content", []),
                "source": data.get("source", {"kind": "user"}),
            }
        event.note("legacy steering/message normalized to user/message")

    def _user_message(self, event: Event, data: dict) -> None:
        if "content" in data and "source" in data and "id" not in data and "role" not in data and "message" not in data:
            event.data = {"id": self.legacy_id(event.seq), "role": "user", **data}
        source = event.data.get("source")
        if self.compaction_id is not None and isinstance(source, dict) and source.get("kind") == "plugin" \
                and source.get("plugin") == "compact" and "compactionId" not in source:
            event.data = {**event.data, "source": {**source, "compactionId": self.compaction_id}}

    def _assistant_message(self, event: Event, data: dict) -> None:
        if "content" in data and "provenance" in data and "message" not in data:
            rest = {k: v for k, v in data.items() if k not in ("content", "provenance")}
            provenance = data["provenance"] if isinstance(data["provenance"], dict) else {}
            rest["message"] = {
                "id": self.legacy_id(event.seq),
                "role": "assistant",
                "content": data["content"],
                "source": {**provenance, "kind": "model"},
            }
            event.data = rest

    def _tool_result(self, event: Event, data: dict) -> None:
        if {"callId", "content", "isError"} <= set(data) and "message" not in data:
            message_id = self.legacy_id(event.seq)
            op = event.surfaceOp
            if isinstance(op, dict) and op.get("op") == "replace":
                start = safe_int(op.get("start"))  # a JavaScript Map's key: a number; anything else misses
                if start is not None:
                    message_id = self.tool_result_ids.get(start, message_id)
            rest = {k: v for k, v in data.items() if k not in ("callId", "content", "isError")}
            rest["message"] = {
                "id": message_id,
                "role": "user",
                "content": [
                    {
                        "type": "tool-result",
                        "toolCallId": data["callId"],
                        "content": data["content"],
                        "isError": data["isError"],
                    }
                ],
                "source": {"kind": "tool", "callId": data["callId"]},
            }
            event.data = rest
        message = event.data.get("message")
        if isinstance(message, dict) and isinstance(message.get("id"), str):
            self.tool_result_ids[event.seq] = message["id"]

    def _llm_retry(self, event: Event, data: dict) -> None:
        if "retryId" not in data:
            chain = (data.get("turn"), data.get("step"), data.get("provider"), str(data.get("policyKey")))
            retry_id = self.retry_chains.setdefault(chain, f"legacy-retry:{self.session_id}:{event.seq}")
            event.data = {"retryId": retry_id, **data}

    def _compaction_start(self, event: Event, data: dict) -> None:
        # [v01] normalizeLegacyCompaction: one minted id per legacy compaction, shared by its summary,
        # its end and its `compact` checkpoint message
        existing = data.get("compactionId")
        if isinstance(existing, str) and existing:
            self.compaction_id = existing
        elif "compactionId" not in data:
            self.compaction_id = f"legacy-compaction:{self.session_id}:{event.seq}"
            event.data = {**data, "compactionId": self.compaction_id}

    def _compaction_summary(self, event: Event, data: dict) -> None:
        if self.compaction_id is not None and "compactionId" not in data:
            event.data = {**data, "compactionId": self.compaction_id}

    def _compaction_end(self, event: Event, data: dict) -> None:
        self._compaction_summary(event, data)
        self.compaction_id = None

    def _end_seed(self, event: Event, data: dict) -> None:
        self.compaction_id = None

    def _request_header(self, event: Event, data: dict) -> None:
        header = data.get("header")
        if isinstance(header, dict) and "messagePrefix" in header:
            event.data = {**data, "header": {k: v for k, v in header.items() if k != "messagePrefix"}}

    def _turn_end(self, event: Event, data: dict) -> None:
        reason = data.get("reason")
        if not isinstance(reason, dict):
            raise FormatError("malformed pre-react-loop turn/end: reason is not an object")
        kind = reason.get("kind")
        if not isinstance(kind, str):
            raise FormatError("malformed pre-react-loop turn/end: reason.kind is not a string")
        if kind == "aborted" and "reason" not in reason:
            event.data = {**data, "reason": {"kind": "aborted", "reason": {"kind": "legacy"}}}
        elif kind == "disposed":
            event.data = {**data, "reason": {"kind": "aborted", "reason": {"kind": "disposed"}}}
        elif kind == "error" and "error" not in reason:
            if isinstance(reason.get("failure"), dict):
                error = reason["failure"]
            else:
                error = {"message": reason.get("message", ""), "code": reason.get("code", "UNKNOWN")}
            event.data = {**data, "reason": {"kind": "error", "error": error}}
        elif kind in _SIMPLE_TURN_END and set(reason) != {"kind"}:
            event.note(f"turn/end reason {kind!r} carries extra keys")


_LEGACY_RULES: dict[str, Callable[[LegacyNormalizer, Event, dict], None]] = {
    "turn/start": LegacyNormalizer._turn_start,
    "turn/end": LegacyNormalizer._turn_end,
    "steering/message": LegacyNormalizer._steering_message,
    "user/message": LegacyNormalizer._user_message,
    "assistant/message": LegacyNormalizer._assistant_message,
    "tool/result": LegacyNormalizer._tool_result,
    "llm/retry": LegacyNormalizer._llm_retry,
    "compaction/start": LegacyNormalizer._compaction_start,
    "compaction/summary": LegacyNormalizer._compaction_summary,
    "compaction/end": LegacyNormalizer._compaction_end,
    "session/end-seed": LegacyNormalizer._end_seed,
    "request/header": LegacyNormalizer._request_header,
}
"""The legacy rule of each event type that has one (FORMAT §2.5), by its (renamed) type. Beside the class,
not in its body: mypyc makes an unannotated class-body name of a compiled class an instance attribute."""


# ---------------------------------------------------------------------------
# Folding chunks into settlements (FORMAT §2.6)


@dataclass(slots=True)
class _Group:
    turn: Any
    step: Any
    accumulator: Accumulator = field(default_factory=Accumulator)
    seq_runs: list[list[int]] = field(default_factory=list)  # [first, last] contiguous seq runs
    chunk_count: int = 0
    last_seq: int = -1
    last_time: int | None = None
    last_line: int = 0
    terminated: bool = False
    buffered: list[Event] = field(default_factory=list)

    def add_seqs(self, first: int, count: int) -> None:
        last = first + count - 1
        if self.seq_runs and self.seq_runs[-1][1] + 1 == first:
            self.seq_runs[-1][1] = last
        else:
            self.seq_runs.append([first, last])
        self.chunk_count += count
        self.last_seq = last

    def range_form(self) -> list[Any]:
        encoded: list[Any] = []
        for first, last in self.seq_runs:
            if last - first >= 2:
                encoded.append([first, last])
            else:
                encoded.extend(range(first, last + 1))
        return encoded


SETTLING_TYPES = frozenset({"turn/end", "step/end", "llm/retry", "llm/retry-started"})
"""The events that end a pending v0 attempt (besides its own ``assistant/message``)."""


def fold_chunks(items: Iterator[Event | PackedRow], *, time_known: Callable[[], bool]) -> Iterator[Event]:
    """Fold ``assistant/chunk`` events and packed rows into settlement streams (FORMAT §2.6).

    ``time_known`` is asked when an attempt settles, not before: the first record read decides whether
    the log carries event times (the fixture form does not), and ``items`` is consumed lazily."""
    group: _Group | None = None

    def settle() -> Iterator[Event]:
        nonlocal group
        if group is None:
            return
        pending, group = group, None
        yield Event(
            type="assistant/attempt",
            seq=pending.last_seq,
            time=pending.last_time if time_known() else None,
            data={"turn": pending.turn, "step": pending.step},
            line=pending.last_line,
            stream=pending.accumulator.records,
            chunkSeqs=pending.range_form(),
        )
        yield from pending.buffered

    for item in items:
        if isinstance(item, PackedRow):
            if group is not None and (group.terminated or (group.turn, group.step) != (item.turn, item.step)):
                yield from settle()
            if group is None:
                group = _Group(item.turn, item.step)
            group.accumulator.push_run(item.record)
            group.add_seqs(item.seq0, item.count)
            group.last_time = item.last_time
            group.last_line = item.line
            continue
        event = item
        kind = event.type
        if kind == "assistant/chunk":
            data = event.data if isinstance(event.data, dict) else {}
            chunk = data.get("chunk")
            turn, step = data.get("turn"), data.get("step")
            if group is not None and (group.terminated or (group.turn, group.step) != (turn, step)):
                yield from settle()
            if not isinstance(chunk, dict) or not isinstance(chunk.get("type"), str):
                event.note("assistant/chunk without a chunk object; kept as an ordinary event")
                yield event
                continue
            if group is None:
                group = _Group(turn, step)
            try:
                group.accumulator.push(event.time if event.time is not None else 0, chunk)
            except ValueError as exc:
                raise FormatError(f"assistant/chunk cannot join a stream: {exc}", line=event.line, seq=event.seq)
            group.add_seqs(event.seq, 1)
            group.last_time = event.time
            group.last_line = event.line
            if chunk.get("type") == "finish":
                group.terminated = True
            continue
        if kind == "assistant/message":
            yield from _fold_message(event, group, settle)
            group = None
            continue
        if kind in SETTLING_TYPES:
            if group is not None:
                yield from settle()
            yield event
            continue
        if group is not None:
            group.buffered.append(event)
        else:
            yield event
    yield from settle()


def _fold_message(event: Event, group: _Group | None, settle) -> Iterator[Event]:
    cited = _cited_runs(event)
    same_step = group is not None and (group.turn, group.step) == (event.turn, event.step)
    if group is None or not same_step:
        yield from settle()
        if cited and group is None:
            event.note("sourceEventSeqs cite chunks but no attempt is pending (dsh's migration refuses this)")
        elif cited:
            event.note("sourceEventSeqs cite chunks that form no pending attempt of this step")
        event.stream = []
        _keep_citation(event, cited)
        yield event
        return
    if cited is None:
        event.note("message has no chunk provenance while a same-step attempt is pending; embedded it (dsh's migration refuses this)")
    elif not cited:
        yield from settle()
        event.stream = []
        _keep_citation(event, cited)
        yield event
        return
    elif cited != group.seq_runs:
        yield from settle()
        event.note("sourceEventSeqs do not cite exactly the pending attempt's chunks (dsh's migration refuses this)")
        event.stream = []
        _keep_citation(event, cited)
        yield event
        return
    yield from group.buffered
    event.stream = group.accumulator.records
    event.chunkSeqs = group.range_form()
    yield event


def _cited_runs(event: Event) -> list[list[int]] | None:
    """The message's citation as maximal seq runs. The reader leaves a v0 message's
    ``sourceEventSeqs`` as written, so a 600-chunk citation is compared as one run, never expanded."""
    raw = event.sourceEventSeqs
    event.sourceEventSeqs = None
    if raw is None:
        return None
    runs = seq_runs(raw)
    if runs is not None and sum(last - first + 1 for first, last in runs) > event.seq:
        runs = None  # more seqs than precede the message: _keep_citation would expand it without bound
    if runs is None:
        event.note(_BAD_SEQS)
    return runs


def _keep_citation(event: Event, cited: list[list[int]] | None) -> None:
    """A message whose citation did not embed a stream keeps what it cited, in range form."""
    if cited is not None:
        seqs = [seq for first, last in cited for seq in range(first, last + 1)]
        event.chunkSeqs = encode_seq_ranges(seqs) if seqs == sorted(set(seqs)) else seqs


def decode_source_event_seqs(value: Any, event: Event, position: int) -> list[int] | None:
    """``position`` is the seq the event must have; its own seq is not trusted before that is checked."""
    if value is None:
        return None
    seqs = decode_seq_ranges(value, position)
    if seqs is None:
        event.note(_BAD_SEQS)
    return seqs


_BAD_SEQS = "sourceEventSeqs is not a list of seqs and [start, end] pairs"
