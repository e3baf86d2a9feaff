"""Level ``relationships``: the cross-event rules dsh checks when it restores or migrates a log.

Reference: ``assertReleasedArtifactRelationships`` of ``@deepseek-ai/dsh-session-format-v0-to-v1@0.1.3-alpha.2``
as called by ``restoreReleasedV2Artifact`` (``-v1-to-v2``; with ``assistant/attempt`` as a step event)
for v0 and v2 logs, and by ``restoreReleasedV3Artifact`` (``-v2-to-v3@0.1.5-alpha.1``) for v3 logs after
its own system-head rules (``system/message`` is a surface node there, ``tool/ptc-dispatch*`` play the
role of ``tool/code-dispatch*``). v0/v1 logs add the v1→v2 fold's refusals: a message whose chunk
provenance is not one complete pending attempt, and a turn/start that does not close the prior
turn (except the legacy interrupted restart the fold repairs). v4 logs follow the same rules with
``developer/message`` as one more in-step surface node and tool-role results (FORMAT §2.10).

The events are the reader's normalized model (v0 legacy shapes upgraded, chunks folded into
settlements, seqs as written). dsh stops at the first violation; dshctl reports each one and keeps
going, resynchronising its state the way the log claims, so one slip does not cascade.
"""

from __future__ import annotations

from typing import Any

from dshctl.model import KNOWN_EVENT_TYPES, Event, replace_range

from .findings import Collector
from .payload import is_repair_identity
from .settlement import json_equal
from .values import is_placeholder

__all__ = ["Relationships"]

def js(value: Any) -> Any:
    """A value compared the way JavaScript's ``===`` compares it: ``true`` is not ``1``, objects by identity."""
    if isinstance(value, bool):
        return ("boolean", value)
    if isinstance(value, (int, float)):
        return ("number", value)
    if isinstance(value, (dict, list)):
        return ("object", id(value))
    return value


def _plain_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _find(surface: list[int], seq: Any) -> int:
    """JavaScript's ``surface.indexOf(seq)``: -1 unless ``seq`` is a number on the surface."""
    if isinstance(seq, bool) or not isinstance(seq, (int, float)):
        return -1
    try:
        return surface.index(seq)
    except ValueError:
        return -1


TOOL_NOT_STARTED_TEXT = ("The tool call was interrupted before the Harness recorded it as started. "
                         "Retry it if it is still needed.")


class _Tool:
    __slots__ = ("name", "arguments", "state", "seq")

    def __init__(self, name, arguments, seq):
        self.name, self.arguments, self.state, self.seq = name, arguments, "advertised", seq


class Relationships:
    def __init__(self, col: Collector, generation: int, header: dict, *, fixture: bool,
                 payload_refused: set[int] | frozenset = frozenset()):
        self.col = col
        self.payload_refused = payload_refused
        self.gen = generation
        self.header = header
        self.fixture = fixture
        self.known = KNOWN_EVENT_TYPES[generation]
        self.surface_types = {"user/message", "assistant/message", "tool/result"}
        if generation >= 3:
            self.surface_types.add("system/message")
        if generation >= 4:
            self.surface_types.add("developer/message")
        self.open_turn: Any = None
        self.open_step: Any = None
        self.next_turn = 1
        self.next_step = 1
        self.provider: Any = None
        self.tools: dict[str, _Tool] = {}
        self.surface: list[int] = []
        self.retries: list[dict] = []
        self.retry_ids: set = set()
        self.retry_starts: set = set()
        self.commands: set = set()
        self.types: dict[int, str] = {}
        self.human: dict[int, bool] = {}
        self.ptc_roots: dict = {}
        self.ptc_starts: dict = {}
        self.compaction: dict | None = None
        self.deferred: list[tuple] = []  # compaction crossings, reported unless the compaction is inherited-stale
        self.previous: Event | None = None
        # v3+ system head
        self.step_coords: tuple | None = None
        self.head: int | None = None
        self.has_surface = False

    # ------------------------------------------------------------------ helpers

    def _add(self, rule: str, message: str, event: Event) -> None:
        self.col.add(rule, message, line=event.line, seq=event.seq, turn=event.turn, step=event.step)

    def _in_step(self, event: Event, data: dict) -> bool:
        if self.open_turn is None or self.open_step is None or js(data.get("turn")) != js(self.open_turn) \
                or js(data.get("step")) != js(self.open_step):
            where = "no step is open" if self.open_step is None else f"the open step is turn {self.open_turn} step {self.open_step}"
            self._add("relationships/in-step", f"{event.type} names turn {data.get('turn')!r} step {data.get('step')!r}, "
                      f"but {where}", event)
            return False
        return True

    def _shape(self, event: Event, ok: bool, what: str) -> bool:
        """dsh's relationship validator dereferences payload members; a shape it cannot read refuses the log."""
        if not ok and event.seq not in self.payload_refused:
            self.col.add("codec/payload", f"{event.type} {what} (dsh's relationship validator cannot read it)",
                         line=event.line, seq=event.seq, turn=event.turn, step=event.step)
        return ok

    def _in_turn(self, event: Event) -> None:
        if self.open_turn is None:
            self._add("relationships/in-turn", f"{event.type} is outside an open turn", event)

    # ------------------------------------------------------------------ driver

    def feed(self, event: Event) -> None:
        kind = event.type
        data = event.data
        self.types[event.seq] = kind
        if not isinstance(data, dict):
            self.previous = event
            return
        if kind not in self.known and kind != "assistant/attempt":
            self.previous = event
            return
        try:
            self._feed(event, kind, data)
        except (TypeError, AttributeError, KeyError, IndexError):
            pass  # a payload too broken to relate; level codec reports its shape
        self.previous = event

    def _feed(self, event: Event, kind: str, data: dict) -> None:
        if self.gen <= 1 and event.notes:
            self._fold_notes(event)
        if self.gen <= 1 and self.cut is not None and event.chunkSeqs:
            self._cut_splits(event)
        if self.gen >= 3:
            self._system_head(event, kind, data)
        if kind in self.surface_types:
            self._apply_surface(event)
            if kind == "user/message":
                source = data.get("source")
                content = data.get("content")
                self.human[event.seq] = isinstance(source, dict) and source.get("kind") == "user" \
                    and isinstance(content, list) and None not in content
        if kind in ("turn/start", "turn/end") and self.compaction is not None:
            self.deferred.append((self.compaction["startSeq"], f"{kind} crosses an open compaction "
                                  f"(compaction/start at seq {self.compaction['startSeq']})", event))
        handler = _HANDLERS.get(kind)
        if handler is not None:
            handler(self, event, data)

    # ------------------------------------------------------------------ turns and steps

    def _turn_start(self, event: Event, data: dict) -> None:
        turn = data.get("turn")
        if self.gen <= 1 and self._legacy_restart(turn):
            self.open_turn = None
            self.next_turn += 1
        if self.open_turn is not None or js(turn) != js(self.next_turn):
            why = f"turn {self.open_turn} is still open" if self.open_turn is not None else f"the next turn is {self.next_turn}"
            self._add("relationships/turn-order", f"turn/start {turn!r} does not open the expected turn ({why})", event)
        self.open_turn = turn
        self.open_step = None
        self.tools.clear()
        self.next_step = 1
        if _plain_int(turn):
            self.next_turn = turn

    def _legacy_restart(self, turn: Any) -> bool:
        """The v1→v2 fold closes a turn left open by a legacy restart ([v12] ``legacyInterruptedTurn``)."""
        previous = self.previous
        if self.open_turn is None or self.open_step is not None or not isinstance(self.open_turn, int) \
                or js(turn) != js(self.open_turn + 1) or previous is None or previous.type != "agent/inbox/spliced":
            return False
        splice = previous.data if isinstance(previous.data, dict) else {}
        inserted = splice.get("inserted")
        return splice.get("target") == "next-turn" and isinstance(inserted, list) and len(inserted) > 0

    def _turn_end(self, event: Event, data: dict) -> None:
        turn = data.get("turn")
        if self.open_turn is None or js(self.open_turn) != js(turn):
            self._add("relationships/turn-order", f"turn/end {turn!r} has no matching open turn"
                      + (f" (turn {self.open_turn} is open)" if self.open_turn is not None else ""), event)
        self._unresolved(event, "turn/end")
        if self.open_step is not None:
            self._add("relationships/step-end", f"turn/end {turn!r} crosses open step {self.open_step}: the step has no "
                      "step/end", event)
        if _plain_int(turn):
            self.next_turn = turn + 1
        elif _plain_int(self.open_turn):
            self.next_turn = self.open_turn + 1
        self.open_turn = None
        self.open_step = None
        self.tools.clear()

    def _step_start(self, event: Event, data: dict) -> None:
        turn, step = data.get("turn"), data.get("step")
        if self.open_turn is None or js(self.open_turn) != js(turn) or self.open_step is not None \
                or js(step) != js(self.next_step):
            if self.open_turn is None or js(self.open_turn) != js(turn):
                why = "no turn is open" if self.open_turn is None else f"turn {self.open_turn} is open"
            elif self.open_step is not None:
                why = f"step {self.open_step} is still open"
            else:
                why = f"the next step is {self.next_step}"
            self._add("relationships/step-order", f"step/start turn {turn!r} step {step!r} does not match the open turn "
                      f"and next step ({why})", event)
        self.open_step = step
        if _plain_int(step):
            self.next_step = step

    def _step_end(self, event: Event, data: dict) -> None:
        turn, step = data.get("turn"), data.get("step")
        if self.open_turn is None or self.open_step is None or js(turn) != js(self.open_turn) \
                or js(step) != js(self.open_step):
            self._add("relationships/step-order", f"step/end turn {turn!r} step {step!r} does not close the open step"
                      + (f" (turn {self.open_turn} step {self.open_step})" if self.open_step is not None else " (none is open)"),
                      event)
        self._unresolved(event, "step/end")
        self.tools.clear()
        self.open_step = None
        self.next_step += 1

    # ------------------------------------------------------------------ settlements and tools

    def _step_event(self, event: Event, data: dict) -> None:
        self._in_step(event, data)

    def _assistant_message(self, event: Event, data: dict) -> None:
        self._in_step(event, data)
        message = data.get("message")
        if not self._shape(event, isinstance(message, dict), "message must be an object"):
            return
        content = message.get("content")
        if not self._shape(event, isinstance(content, str) or (isinstance(content, list) and None not in content),
                           "message.content must be an array of blocks"):
            return
        for block in content:
            if not isinstance(block, dict) or block.get("type") != "tool-call":
                continue
            call_id = block.get("id")
            if js(call_id) in self.tools:
                self._add("relationships/tool-call-pairing", f"assistant/message repeats advertised tool call {call_id!r}",
                          event)
            self.tools[js(call_id)] = _Tool(block.get("name"), block.get("arguments"), event.seq)

    def _tool_call(self, event: Event, data: dict) -> None:
        self._in_step(event, data)
        call_id = data.get("callId")
        tool = self.tools.get(js(call_id))
        if tool is None or tool.state != "advertised" or js(tool.name) != js(data.get("name")) \
                or js(tool.arguments) != js(data.get("arguments")):
            if tool is None:
                why = "no assistant/message of this step advertised it"
            elif tool.state != "advertised":
                why = "it already started"
            else:
                why = "its name or arguments differ from the advertised tool-call block"
            self._add("relationships/tool-call-pairing", f"tool/call {call_id!r} does not match one advertised tool call: "
                      f"{why}", event)
            if tool is None:
                return
        tool.state = "started"

    def _tool_result(self, event: Event, data: dict) -> None:
        if event.surfaceOp != "append":
            if self.open_turn is None:
                self._add("relationships/in-turn", "a replacement tool/result is outside an open turn", event)
            return
        if not self._in_step(event, data):
            pass
        message = data.get("message")
        if not self._shape(event, isinstance(message, dict) and isinstance(message.get("source"), dict),
                           "message and message.source must be objects"):
            return
        if not self._shape(event, "error" not in data or isinstance(data["error"], dict), "error must be an object"):
            return
        source = message["source"]
        call_id = message.get("toolCallId") if self.gen >= 4 and message.get("toolCallId") else source.get("callId")
        tool = self.tools.get(js(call_id))
        if tool is None:
            self._add("relationships/tool-result-pairing", f"tool/result {call_id!r} answers no advertised tool call of "
                      "this step", event)
            return
        if tool.state == "advertised" and not self._exact_not_started(event, data, message, call_id):
            self._add("relationships/tool-result-pairing", f"tool/result {call_id!r} answers a call that never started "
                      "(no tool/call), and it is not the exact TOOL_NOT_STARTED repair", event)
        del self.tools[js(call_id)]

    def _exact_not_started(self, event: Event, data: dict, message: dict, call_id: Any) -> bool:
        error = data.get("error") if isinstance(data.get("error"), dict) else {}
        if error.get("name") != "ToolNotStartedError" or error.get("code") != "TOOL_NOT_STARTED":
            return False
        if event.sourceEventSeqs is not None:
            return False
        expected_id = f"interrupted-tool-result-{call_id}-{event.seq}"
        if message.get("id") != expected_id and not (self.gen >= 3 and is_repair_identity(message.get("id"), call_id)):
            return False
        content = message.get("content")
        if self.gen >= 4:
            is_error, blocks = message.get("isError"), content
        else:
            block = content[0] if isinstance(content, list) and content and isinstance(content[0], dict) else {}
            is_error, blocks = block.get("isError"), block.get("content")
        return (is_error is True and isinstance(blocks, list) and len(blocks) == 1 and isinstance(blocks[0], dict)
                and blocks[0].get("type") == "text" and blocks[0].get("text") == TOOL_NOT_STARTED_TEXT)

    def _unresolved(self, event: Event, boundary: str) -> None:
        if self.tools:
            call_id = next(iter(self.tools))
            self._add("relationships/tool-unresolved", f"{boundary} leaves tool call {call_id!r} (advertised at seq "
                      f"{self.tools[call_id].seq}) without its tool/result", event)

    # ------------------------------------------------------------------ request, dispatch, retries

    def _request_header(self, event: Event, data: dict) -> None:
        self._in_turn(event)
        header = data.get("header")
        config = header.get("config") if isinstance(header, dict) else None
        if self._shape(event, config is not None, "header.config is missing"):
            self.provider = config.get("provider") if isinstance(config, dict) else None

    def _code_dispatch(self, event: Event, data: dict) -> None:
        self._in_turn(event)
        kind = event.type.replace("ptc-dispatch", "code-dispatch")
        root, parent, child = data.get("rootCallId"), data.get("parentCallId"), data.get("subCallId")
        known = self.ptc_roots.get(js(child))
        if known is not None and js(known) != js(root):
            self._add("relationships/code-dispatch", f"{event.type} changes the rootCallId of {child!r}", event)
        if js(parent) != js(root) and js(self.ptc_roots.get(js(parent))) != js(root):
            self._add("relationships/code-dispatch", f"{event.type} parentCallId {parent!r} does not belong to "
                      f"rootCallId {root!r}", event)
        if kind == "tool/code-dispatch-start":
            if js(child) in self.ptc_starts:
                self._add("relationships/code-dispatch", f"{event.type} repeats subCallId {child!r}", event)
            self.ptc_starts[js(child)] = {"root": root, "parent": parent, "name": data.get("name"),
                                      "arguments": data.get("arguments"), "settled": False}
        else:
            start = self.ptc_starts.get(js(child))
            if start is None or start["settled"]:
                self._add("relationships/code-dispatch", f"{event.type} {child!r} has no unique start", event)
            elif js(start["root"]) != js(root) or js(start["parent"]) != js(parent) \
                    or js(start["name"]) != js(data.get("name")) or not json_equal(start["arguments"], data.get("arguments")):
                self._add("relationships/code-dispatch", f"{event.type} {child!r} does not match its start", event)
                start["settled"] = True
            else:
                start["settled"] = True
        self.ptc_roots[js(child)] = root

    def _retry(self, event: Event, data: dict) -> None:
        turn, step = data.get("turn"), data.get("step")
        current_step = self.open_step if self.open_step is not None else self.next_step - 1
        if self.open_turn is None or js(turn) != js(self.open_turn) or js(step) != js(current_step):
            self._add("relationships/retry-chain", f"llm/retry names turn {turn!r} step {step!r}, not the current turn and "
                      "step", event)
        if js(data.get("provider")) != js(self.provider):
            self._add("relationships/retry-provider", f"llm/retry provider {data.get('provider')!r} is not the provider "
                      f"of the latest request/header ({self.provider!r})", event)
        chain = (js(turn), js(step), js(data.get("provider")), js(data.get("policyKey")))
        prior = next((r for r in reversed(self.retries) if r["chain"] == chain), None)
        expected = (prior["retry"] if prior and _plain_int(prior["retry"]) else 0) + 1
        retry_id = data.get("retryId")
        if js(data.get("retry")) != js(expected):
            self._add("relationships/retry-chain", f"llm/retry must use retry {expected}, found {data.get('retry')!r}", event)
        if prior is not None and js(prior["retryId"]) != js(retry_id):
            self._add("relationships/retry-chain", "llm/retry must keep one retryId across a policy chain", event)
        if prior is None and js(retry_id) in self.retry_ids:
            self._add("relationships/retry-chain", f"llm/retry reuses retryId {retry_id!r} across policy chains", event)
        self.retries.append({"chain": chain, "retry": data.get("retry"), "retryId": retry_id, "turn": turn, "step": step})
        self.retry_ids.add(js(retry_id))

    def _retry_started(self, event: Event, data: dict) -> None:
        retry_id, retry = data.get("retryId"), data.get("retry")
        scheduled = next((r for r in self.retries if js(r["retryId"]) == js(retry_id) and js(r["retry"]) == js(retry)), None)
        if scheduled is None:
            self._add("relationships/retry-started", f"llm/retry-started {retry_id!r} retry {retry!r} pairs no earlier "
                      "llm/retry", event)
            return
        if js(scheduled["turn"]) != js(data.get("turn")) or js(scheduled["step"]) != js(data.get("step")):
            self._add("relationships/retry-started", "llm/retry-started does not match its llm/retry's turn and step", event)
        key = (js(retry_id), js(retry))
        if key in self.retry_starts:
            self._add("relationships/retry-started", "llm/retry-started repeats one scheduled attempt", event)
        self.retry_starts.add(key)

    # ------------------------------------------------------------------ titles, commands, markers

    def _title(self, event: Event, data: dict) -> None:
        seqs = data.get("messageSeqs")
        if not self._shape(event, isinstance(seqs, list), "messageSeqs must be an array"):
            return
        if event.type == "session/title":
            source = data.get("source")
            if not self._shape(event, isinstance(source, dict), "source must be an object"):
                return
            if (len(seqs) == 0) != (source.get("kind") == "user"):
                self._add("relationships/title-sources", "session/title messageSeqs must be empty exactly for a "
                          "user-chosen title", event)
        for seq in seqs:
            if isinstance(seq, bool) or not isinstance(seq, int) or not self.human.get(seq, False):
                what = self.types.get(seq, "no event") if isinstance(seq, int) else "not a seq"
                self._add("relationships/title-sources", f"{event.type} messageSeqs cites seq {seq!r} ({what}), not an "
                          "earlier human user/message", event)
                break
        if event.type == "session/title-llm-request":
            messages = data.get("messages")
            message = messages[0] if isinstance(messages, list) and messages else None
            ok = isinstance(messages, list) and len(messages) == 1 and isinstance(message, dict) \
                and message.get("role") == "user" and isinstance(message.get("content"), list) \
                and len(message["content"]) == 1 and isinstance(message["content"][0], dict) \
                and message["content"][0].get("type") == "text"
            if isinstance(message, dict) and not self._shape(event, isinstance(message.get("source"), dict),
                                                             "messages[0].source must be an object"):
                return
            source = message.get("source") if isinstance(message, dict) else {}
            title_source = (source.get("kind") == "plugin" and source.get("plugin") == "dsh-session-title-llm") or \
                (self.gen >= 4 and source.get("kind") == "dsh-session-title-llm")
            if not (ok and title_source):
                self._add("relationships/title-sources", "session/title-llm-request messages do not represent its "
                          "messageSeqs (one user message from dsh-session-title-llm with one text block)", event)

    def _command_run(self, event: Event, data: dict) -> None:
        command_id = data.get("commandId")
        if js(command_id) in self.commands:
            self._add("relationships/command", f"command/run repeats commandId {command_id!r}", event)
        self.commands.add(js(command_id))

    def _command_done(self, event: Event, data: dict) -> None:
        command_id = data.get("commandId")
        if js(command_id) not in self.commands:
            self._add("relationships/command", f"command/done {command_id!r} has no earlier command/run", event)
        source_seq = data.get("sourceEventSeq")
        if source_seq is not None:
            source_type = self.types.get(source_seq)
            if data.get("kind") != "success" or source_type in ("command/run", "command/done"):
                self._add("relationships/command", f"command/done {command_id!r} has an invalid sourceEventSeq", event)

    def _delivery(self, event: Event, data: dict) -> None:
        version = data.get("sessionFormatVersion", 0)
        if version != self.gen:
            return
        header = self.header
        inherited = header.get("parentSession") is not None and self._inherited(event.seq)
        session_id = data.get("sessionId")
        if self.fixture and (is_placeholder(session_id) or is_placeholder(header.get("id"))):
            return
        if not inherited and session_id != header.get("id"):
            self._add("relationships/delivery-marker", f"delivery marker names session {session_id!r}, not this log's "
                      f"{header.get('id')!r}", event)

    def _inherited(self, seq: int) -> bool:
        cut = self.cut
        return cut is not None and seq < cut

    cut: int | None = None

    # ------------------------------------------------------------------ compaction

    def _compaction_start(self, event: Event, data: dict) -> None:
        if self.compaction is not None:
            self._add("relationships/compaction", "compaction/start overlaps an open compaction", event)
        self._compaction_turn(data.get("turn"), event)
        self.compaction = {"id": data.get("compactionId"), "sourceCommandId": data.get("sourceCommandId"),
                           "turn": data.get("turn"), "startSeq": event.seq, "summarized": False}

    def _compaction_turn(self, owner: Any, event: Event) -> None:
        if (self.open_turn is not None) if owner is None else js(owner) != js(self.open_turn):
            self._add("relationships/compaction", f"{event.type} does not match the open turn", event)

    def _compaction_owner(self, data: dict, event: Event, what: str) -> bool:
        open_ = self.compaction
        if open_ is None or js(data.get("compactionId")) != js(open_["id"]) \
                or js(data.get("sourceCommandId")) != js(open_["sourceCommandId"]):
            self._add("relationships/compaction", f"{what} has no matching compaction/start", event)
            return False
        return True

    def _compaction_summary(self, event: Event, data: dict) -> None:
        self._compaction_owner(data, event, "compaction/summary")
        if self.compaction is not None:
            self._compaction_turn(self.compaction["turn"], event)
            if self.compaction["summarized"]:
                self._add("relationships/compaction", "compaction/summary repeats", event)
            self.compaction["summarized"] = True
        self._surface_span(data, event)

    def _compaction_end(self, event: Event, data: dict) -> None:
        owned = self._compaction_owner(data, event, "compaction/end")
        open_ = self.compaction
        if open_ is not None:
            if js(data.get("turn")) != js(open_["turn"]):
                self._add("relationships/compaction", "compaction/end changes its owner turn", event)
            self._compaction_turn(open_["turn"], event)
            if "error" not in data and not open_["summarized"] and owned:
                self._add("relationships/compaction", "a successful compaction/end requires one compaction/summary", event)
            self._flush_deferred(open_["startSeq"])
        self.compaction = None

    def _flush_deferred(self, start_seq: int | None) -> None:
        keep = []
        for owner, message, event in self.deferred:
            if start_seq is None or owner == start_seq:
                self._add("relationships/compaction", message, event)
            else:
                keep.append((owner, message, event))
        self.deferred = keep

    def _compaction_prune(self, event: Event, data: dict) -> None:
        self._surface_span(data, event)

    def _surface_span(self, data: dict, event: Event) -> None:
        span = data.get("shadowedRange")
        seqs = data.get("shadowedSeqs")
        if not self._shape(event, span is not None and isinstance(seqs, (list, str)),
                           "shadowedRange and shadowedSeqs are missing"):
            return
        if not isinstance(span, dict):
            span = {}
        surface = self.surface
        start, end = _find(surface, span.get("start")), _find(surface, span.get("end"))
        expected = surface[start:end + 1] if start >= 0 and end >= start else []
        if len(expected) != len(seqs) or any(js(a) != js(b) for a, b in zip(expected, seqs)):
            self._add("relationships/compaction", f"{event.type} shadowedSeqs do not name an exact span of the current "
                      "surface", event)

    def _end_seed(self, event: Event, data: dict) -> None:
        if self.compaction is not None:
            start = self.compaction["startSeq"]
            self.deferred = [d for d in self.deferred if d[0] != start]  # inherited orphan: stale
        self.compaction = None

    def _user_message(self, event: Event, data: dict) -> None:
        source = data.get("source")
        if not self._shape(event, isinstance(source, dict), "source must be an object") or event.surfaceOp == "append":
            return
        compact = (source.get("kind") == "plugin" and source.get("plugin") == "compact") or \
            (self.gen >= 4 and source.get("kind") == "compact-checkpoint")
        if compact:
            self._compaction_owner(source, event, f"compaction checkpoint at seq {event.seq}")

    # ------------------------------------------------------------------ surface

    def _apply_surface(self, event: Event) -> None:
        op = event.surfaceOp
        if op is None:
            return  # level codec reports the missing marker
        if op == "append":
            self.surface.append(event.seq)
            return
        span = replace_range(op)
        if span is None:
            return
        surface = self.surface
        start, end = _find(surface, span[0]), _find(surface, span[1])
        if start < 0 or end < start:
            self._add("relationships/surface-replace", f"{event.type} replaces seqs {span[0]}..{span[1]}, which are not "
                      "a range of the current surface", event)
            surface.append(event.seq)
            return
        shadowed = surface[start:end + 1]
        cited = set(event.sourceEventSeqs or [])
        missing = [seq for seq in shadowed if seq not in cited]
        if missing:
            self._add("relationships/surface-replace", f"{event.type} replacement sourceEventSeqs omit shadowed surface "
                      f"node(s) {', '.join(map(str, missing[:5]))}", event)
        surface[start:end + 1] = [event.seq]

    # ------------------------------------------------------------------ v3+ system head

    def _system_head(self, event: Event, kind: str, data: dict) -> None:
        if kind == "step/start":
            self.step_coords = (js(data.get("turn")), js(data.get("step")))
        elif kind in ("step/end", "turn/end"):
            self.step_coords = None
        surface = kind in self.surface_types
        op = event.surfaceOp
        span = replace_range(op) if surface and op != "append" else None
        if kind == "system/message":
            if not self._shape(event, isinstance(data.get("message"), dict), "message must be an object"):
                return
            if self.step_coords is None or self.step_coords != (js(data.get("turn")), js(data.get("step"))):
                self._add("relationships/system-head", "system/message does not sit in an open step", event)
            if self.has_surface and self.head is None:
                self._add("relationships/system-head", "system/message requires a protected first surface head "
                          "(another surface event came first)", event)
            if op == "append":
                if not self.has_surface:
                    self.head = event.seq
            elif span is not None and self.head in span:
                if span != (self.head, self.head):
                    self._add("relationships/system-head", "system/message must replace exactly the current system head",
                              event)
                self.head = event.seq
        elif span is not None and self.head is not None and self.head in span:
            self._add("relationships/system-head", f"{kind} replacement shadows the protected system head "
                      f"(seq {self.head})", event)
        if kind in ("compaction/prune", "compaction/summary") and self.head is not None:
            seqs = data.get("shadowedSeqs")
            if isinstance(seqs, list) and self.head in seqs:
                self._add("relationships/system-head", "compaction shadows the protected system head", event)
        if surface:
            self.has_surface = True

    # ------------------------------------------------------------------ v0 fold

    def _fold_notes(self, event: Event) -> None:
        for note in event.notes or ():
            if "dsh's migration refuses" in note or "no attempt is pending" in note:
                self._add("relationships/chunk-provenance", f"{event.type}: {note}", event)

    def _cut_splits(self, event: Event) -> None:
        """[v12] ``assertAttemptCut``: the inherited cut (v0 ``seedLength``) may not split one attempt."""
        members = [m for item in event.chunkSeqs for m in (item if isinstance(item, list) else [item])]
        if members and min(members) < self.cut <= max(members):
            self.col.add("codec/seed-cut", f"the inherited cut (seedLength {self.cut}) splits the attempt of chunks "
                         f"{min(members)}..{max(members)}; dsh's v1→v2 migration refuses it",
                         line=event.line, seq=event.seq, turn=event.turn, step=event.step)

    # ------------------------------------------------------------------ end

    def finish(self, last: Event | None) -> None:
        self._flush_deferred(None)
        if self.open_turn is not None and last is not None:
            self.col.add("relationships/open-turn", f"the log ends inside open turn {self.open_turn!r}"
                         + (f" (step {self.open_step} open)" if self.open_step is not None else "")
                         + ": a crash; dsh appends interrupted closers the next time it opens the session",
                         line=last.line, seq=last.seq)


_HANDLERS = {
    "turn/start": Relationships._turn_start,
    "turn/end": Relationships._turn_end,
    "step/start": Relationships._step_start,
    "step/end": Relationships._step_end,
    "assistant/attempt": Relationships._step_event,
    "developer/message": Relationships._step_event,
    "assistant/message": Relationships._assistant_message,
    "tool/call": Relationships._tool_call,
    "tool/result": Relationships._tool_result,
    "request/header": Relationships._request_header,
    "request/context": lambda self, event, data: self._in_turn(event),
    "tool/code-dispatch-start": Relationships._code_dispatch,
    "tool/code-dispatch": Relationships._code_dispatch,
    "tool/ptc-dispatch-start": Relationships._code_dispatch,
    "tool/ptc-dispatch": Relationships._code_dispatch,
    "llm/retry": Relationships._retry,
    "llm/retry-started": Relationships._retry_started,
    "session/title": Relationships._title,
    "session/title-llm-request": Relationships._title,
    "command/run": Relationships._command_run,
    "command/done": Relationships._command_done,
    "session-log-deepseek/delivery-accepted": Relationships._delivery,
    "compaction/start": Relationships._compaction_start,
    "compaction/summary": Relationships._compaction_summary,
    "compaction/end": Relationships._compaction_end,
    "compaction/prune": Relationships._compaction_prune,
    "session/end-seed": Relationships._end_seed,
    "user/message": Relationships._user_message,
}
