"""The normalized event model every generation decodes into.

Every decoder in :mod:`dshctl.generations` yields :class:`Event` values of one
shape, whatever the file's generation:

* ``assistant/message`` and ``assistant/attempt`` always carry their compact
  assistant stream in :attr:`Event.stream` (v2+ as written; v0/v1 folded from
  ``assistant/chunk`` events and packed rows by dsh's v1→v2 rule, FORMAT §2.6).
* ``sourceEventSeqs`` are decoded (range pairs expanded, FORMAT §2.8).
* v0 legacy shapes are normalized as dsh 0.1.1-rc.2 does in memory (FORMAT §2.5).
* Payloads dshctl does not model stay as decoded JSON in :attr:`Event.data`;
  nothing is dropped. Unknown event types are kept and flagged.

Each event keeps the seq and time written in the file and the physical line it
came from. Fixture-form logs (no envelope seq/time) get seq by position and
``time=None``.

Payload accessors that differ between generations (tool results, replace
operations) live here as small functions so commands never branch on the
generation themselves.
"""

from __future__ import annotations

from typing import Any

import msgspec

from .stream import Record

# Event-type inventories (FORMAT §3.5 "Inventories").
V4_EVENT_TYPES = frozenset(
    """
    agent-preset/selected agent/inbox/spliced approval/asked approval/decided approval/policy
    assistant/attempt assistant/message command/done command/run compaction/end compaction/prune
    compaction/start compaction/summary deliverables/presented developer/message
    feedback/message-delete feedback/message-put feedback/record goal/change hook/invoked
    hook/result image/offload llm/retry llm/retry-started model/selection permission/preset
    plan/mode request/context request/header sandbox/mode schedule/change
    session-log-deepseek/delivery-accepted session/end-seed session/title
    session/title-llm-request step/end step/start subagent/catalog subagent/descriptor
    subagent/model-selection-policy system/message team/member team/message/delivered
    team/message/queued team/task todo/write tool-workflow/agent-end tool-workflow/agent-start
    tool-workflow/run-end tool-workflow/run-start tool/call tool/ptc-dispatch
    tool/ptc-dispatch-start tool/result turn/end turn/start user/message
    web/deepseek-search-llm-request workspace/changes working-directory/change
    """.split()
)
"""v4 as dsh 0.2.1-alpha.2 reads it: the 59 types of v4 plus ``working-directory/change`` (a same-version
addition, not ignorable: older builds refuse a log holding it)."""
V3_EVENT_TYPES = V4_EVENT_TYPES - {"developer/message", "working-directory/change"}
V2_EVENT_TYPES = (
    V3_EVENT_TYPES
    - {
        "system/message",
        "image/offload",
        "workspace/changes",
        "deliverables/presented",
        "subagent/catalog",
        "tool/ptc-dispatch",
        "tool/ptc-dispatch-start",
    }
) | {"tool/code-dispatch", "tool/code-dispatch-start"}
V0_EVENT_TYPES = (V2_EVENT_TYPES - {"assistant/attempt", "feedback/message-put", "feedback/message-delete"}) | {
    "assistant/chunk"
}
KNOWN_EVENT_TYPES = {0: V0_EVENT_TYPES, 1: V0_EVENT_TYPES, 2: V2_EVENT_TYPES, 3: V3_EVENT_TYPES, 4: V4_EVENT_TYPES}

SURFACE_EVENT_TYPES = {
    0: frozenset({"user/message", "assistant/message", "tool/result"}),
    2: frozenset({"user/message", "assistant/message", "tool/result"}),
    3: frozenset({"user/message", "assistant/message", "tool/result", "system/message"}),
    4: frozenset({"user/message", "assistant/message", "tool/result", "system/message", "developer/message"}),
}
SURFACE_EVENT_TYPES[1] = SURFACE_EVENT_TYPES[0]

SETTLEMENT_TYPES = frozenset({"assistant/message", "assistant/attempt"})

SUPPORTED_GENERATIONS = (0, 1, 2, 3, 4)


class Header(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Line 1 of a log (FORMAT §1.9). Optional fields are ``None`` when absent."""

    type: str = "session"
    version: int
    id: str | None = None
    createdAt: int | None = None
    cwd: str | None = None
    parentSession: str | None = None
    seedLength: int | None = None
    isSeeded: bool | None = None
    origin: str | None = None
    delegationDepth: int | None = None
    agentPreset: str | None = None
    extra: dict[str, Any] | None = None
    """Keys dshctl does not know, kept verbatim (dsh's released codecs refuse them)."""

    @property
    def seeded(self) -> bool:
        return bool(self.isSeeded) if self.version >= 2 else self.seedLength is not None


class Event(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One logical event of the normalized model."""

    type: str
    seq: int
    time: int | None
    data: Any
    line: int
    """Physical line (1-based, header = 1) the event was decoded from; for a
    folded v0 settlement, the line of its own event (an attempt: of its last chunk)."""
    stream: list[Record] | None = None
    """Compact assistant stream of ``assistant/message`` / ``assistant/attempt``."""
    sourceEventSeqs: list[int] | None = None
    surfaceOp: Any = None
    ignorable: bool = False
    chunkSeqs: list[Any] | None = None
    """v0/v1 only: the seqs of the ``assistant/chunk`` events folded into
    :attr:`stream`, in range form (``[first, last]`` pairs for runs of ≥ 3)."""
    notes: list[str] | None = None
    """Reader observations about this event (unknown type, fold mismatch, undecodable stream)."""

    def note(self, text: str) -> None:
        if self.notes is None:
            self.notes = [text]
        else:
            self.notes.append(text)

    @property
    def turn(self) -> int | None:
        data = self.data
        if isinstance(data, dict):
            value = data.get("turn")
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        return None

    @property
    def step(self) -> int | None:
        data = self.data
        if isinstance(data, dict):
            value = data.get("step")
            if isinstance(value, int) and not isinstance(value, bool):
                return value
        return None

    def to_builtins(self) -> dict[str, Any]:
        """The event as plain JSON, the stream embedded in ``data`` as v2+ writes it."""
        out: dict[str, Any] = {"type": self.type, "seq": self.seq, "time": self.time, "line": self.line}
        data = self.data
        if self.stream is not None and isinstance(data, dict):
            data = dict(data)
            data["stream"] = self.stream
        out["data"] = data
        if self.sourceEventSeqs is not None:
            out["sourceEventSeqs"] = self.sourceEventSeqs
        if self.surfaceOp is not None:
            out["surfaceOp"] = self.surfaceOp
        if self.ignorable:
            out["ignorable"] = True
        if self.chunkSeqs is not None:
            out["chunkSeqs"] = self.chunkSeqs
        if self.notes:
            out["notes"] = self.notes
        return out


# ---------------------------------------------------------------------------
# Accessors over payloads whose shape differs between generations


def message_of(event: Event) -> dict | None:
    """The message object of a surface event (``user/message.data`` is the message itself)."""
    data = event.data
    if not isinstance(data, dict):
        return None
    if event.type == "user/message":
        return data
    message = data.get("message")
    return message if isinstance(message, dict) else None


def tool_result_call_id(event: Event) -> str | None:
    """Call id of a ``tool/result``: v4 ``message.toolCallId``, else ``message.source.callId``."""
    message = message_of(event)
    if message is None:
        return None
    call_id = message.get("toolCallId")
    if isinstance(call_id, str) and call_id:
        return call_id
    source = message.get("source")
    if isinstance(source, dict):
        call_id = source.get("callId")
        if isinstance(call_id, str):
            return call_id
    return None


def tool_result_blocks(event: Event) -> tuple[list, bool]:
    """(result content blocks, is_error) of a ``tool/result`` in either shape (FORMAT §2.10.2)."""
    message = message_of(event)
    if message is None:
        return [], False
    content = message.get("content")
    if not isinstance(content, list):
        return [], False
    if message.get("role") == "tool":
        return content, message.get("isError") is True
    for block in content:
        if isinstance(block, dict) and block.get("type") == "tool-result":
            inner = block.get("content")
            return (inner if isinstance(inner, list) else []), block.get("isError") is True
    return content, False


def replace_range(surface_op: Any) -> tuple[int, int] | None:
    """``(start, end)`` of a replace op in either spelling (v0–v2 start/end, v3+ startSeq/endSeq)."""
    if not isinstance(surface_op, dict) or surface_op.get("op") != "replace":
        return None
    start = surface_op.get("startSeq", surface_op.get("start"))
    end = surface_op.get("endSeq", surface_op.get("end"))
    if isinstance(start, int) and isinstance(end, int):
        return start, end
    return None


def _seq_range(item: Any) -> tuple[int, int] | None:
    """One item of range-encoded ``sourceEventSeqs`` (FORMAT §2.8) as ``(first, last)``: a seq, or a
    ``[start, end]`` pair with ``start <= end``; None for anything else."""
    if isinstance(item, int) and not isinstance(item, bool):
        return item, item
    if (
        isinstance(item, list)
        and len(item) == 2
        and all(isinstance(bound, int) and not isinstance(bound, bool) for bound in item)
        and item[0] <= item[1]
    ):
        return item[0], item[1]
    return None


def decode_seq_ranges(value: Any, own_seq: int) -> list[int] | None:
    """Expand range-encoded ``sourceEventSeqs`` (FORMAT §2.8) of the event at ``own_seq``; ``None`` if the
    value is not a list of ints and ``[start, end]`` pairs, or if a range would expand past ``own_seq``
    members, which is as many earlier seqs as exist (dsh's ``decodeSeqRanges`` refuses it too; without
    the bound one pair like ``[0, 1e12]`` would allocate without limit)."""
    if not isinstance(value, list):
        return None
    seqs: list[int] = []
    for item in value:
        if isinstance(item, int) and not isinstance(item, bool):
            seqs.append(item)
            continue
        bounds = _seq_range(item)
        if bounds is None or bounds[1] - bounds[0] + 1 > own_seq - len(seqs):
            return None
        seqs.extend(range(bounds[0], bounds[1] + 1))
    return seqs


def seq_runs(value: Any) -> list[list[int]] | None:
    """The maximal runs ``[first, last]`` of consecutive seqs that range-encoded ``sourceEventSeqs``
    expand to, found without expanding them (two seq lists are equal exactly when their maximal runs
    are); ``None`` if the value is not a list of seqs and ``[start, end]`` pairs. How many seqs the runs
    may hold is the caller's bound (:func:`decode_seq_ranges` has its own)."""
    if not isinstance(value, list):
        return None
    runs: list[list[int]] = []
    for item in value:
        bounds = _seq_range(item)
        if bounds is None:
            return None
        first, last = bounds
        if runs and runs[-1][1] + 1 == first:
            runs[-1][1] = last
        else:
            runs.append([first, last])
    return runs


def encode_seq_ranges(seqs: list[int]) -> list[Any]:
    """Range form of a strictly increasing seq list: runs of ≥ 3 become ``[first, last]``."""
    encoded: list[Any] = []
    first = 0
    total = len(seqs)
    while first < total:
        last = first  # extend [first, last] over consecutive seqs
        while last + 1 < total and seqs[last + 1] == seqs[last] + 1:
            last += 1
        if last - first >= 2:
            encoded.append([seqs[first], seqs[last]])
        else:
            encoded.extend(seqs[first : last + 1])
        first = last + 1
    return encoded
