"""The entry points of payload admission, one per generation, and what only that generation admits.

* v0/v1: :func:`check_v0_event` — the released inventory's members, then the semantics (:mod:`.checkers`);
* v2: :func:`check_v2_migration` — what 0.1.5's v2→v3 migration admits (content and source kinds, the
  semantics as the migration reads them);
* v3: :func:`check_v3_event`; v4: :func:`check_v4_event` — the admission those codecs add (FORMAT §2.7, §2.10).
"""

from __future__ import annotations

import re
from typing import Any

from dshctl.jsvalues import MAX_SAFE_INTEGER, is_lossless_json

from ..values import (
    PayloadError,
    fail,
    need_count,
    need_exact_members,
    need_literal,
    need_object,
    need_object_with,
    need_string,
    non_empty_str,
    positive,
)
from . import shapes
from .inventories import V0_DISPOSITIONS, V2_DISPOSITIONS
from .checkers import semantics

__all__ = [
    "DescriptorVersion",
    "check_v0_event",
    "check_v2_migration",
    "check_v3_event",
    "check_v4_event",
    "is_repair_identity",
]


class DescriptorVersion(PayloadError):
    """A v0 ``subagent/descriptor`` whose version is not 3: the released v0→v1 migration refuses the log
    (``SessionFormatUnsupportedMigrationError``, FORMAT §9 #22)."""


def check_v0_event(kind: str, seq: int, data: Any, fixture: bool = False, generation: int = 0) -> None:
    """[v01] ``assertReleasedEventPayload`` for a v0/v1 event after legacy normalization (chunks excluded)."""
    disposition = V0_DISPOSITIONS.get(kind)
    if disposition is None or kind == "assistant/chunk":
        return
    record = need_object(data, f"{kind} {seq} data")
    if kind == "subagent/descriptor" and record.get("version") != 3:
        version = need_count(record.get("version"), f"{kind} {seq} version")
        if generation == 0:
            raise DescriptorVersion(f"{kind} {seq} uses unsupported descriptor version {version}; the released v0→v1 "
                                    "migration accepts only 3")
        return  # a v1 payload with another descriptor version passes unread
    required, optional, opaque = disposition
    need_exact_members(record, required, optional, f"{kind} {seq} data")
    for key in opaque:
        if key in record and not is_lossless_json(record[key]):
            raise fail(f"{kind} {seq}", f"opaque {key} is not lossless JSON")
    semantics(kind, seq, record, 0, fixture)


_V3_SOURCE_KINDS = frozenset({
    "user", "plugin", "model", "tool", "agent-instructions", "session-reference", "team-message", "goal",
    "skill-invocation", "skill-catalog", "coordinator", "subagent-report", "subagent-settled", "webhook", "agent-message",
})
_V3_CONTENT_KINDS = frozenset({"text", "reasoning", "image", "file", "tool-call", "tool-result"})


def _v3_source(message: Any) -> None:
    source = need_object(need_object(message, "message").get("source"), "message source")
    kind = source.get("kind")
    if not isinstance(kind, str) or kind not in _V3_SOURCE_KINDS:
        raise PayloadError(f"unclassified message source kind {kind!r}")
    if kind == "agent-message":
        need_exact_members(source, ("kind", "form", "senderSessionId"), (), "agent-message source")
        if source["form"] != "relay" or not non_empty_str(source["senderSessionId"]):
            raise PayloadError("agent-message source requires relay form and senderSessionId")


def _content_kind(kind: Any, label: str) -> None:
    if not isinstance(kind, str) or kind not in _V3_CONTENT_KINDS:
        raise PayloadError(f"{label}: unclassified message content kind {kind!r}")


def _v3_content(content: Any, label: str) -> None:
    if not isinstance(content, list):
        raise PayloadError(f"{label}: content must be an array")
    for index, value in enumerate(content):
        _v3_block(value, f"{label}[{index}]")


def _v3_block(value: Any, label: str) -> None:
    block = need_object(value, label)
    _content_kind(block.get("type"), label)
    if block["type"] == "tool-result":
        if not isinstance(block.get("content"), list):
            raise PayloadError(f"{label}.content: tool-result content must be an array")
        _v3_content(block["content"], f"{label}.content")
    if block["type"] == "file":
        need_exact_members(block, ("type", "attachment"), (), f'{label} kind "file"')
        attachment = need_object_with(block["attachment"], f'{label} kind "file" attachment',
                                       ("attachmentId", "name", "bytes"))
        if not non_empty_str(attachment["attachmentId"]) or not isinstance(attachment["name"], str):
            raise PayloadError(f'{label} kind "file": file attachment requires attachmentId and name')
        need_count(attachment["bytes"], f'{label} kind "file" attachment bytes')
        return
    probe = dict(block, content=[]) if block["type"] == "tool-result" else block
    shapes.content_block(probe, label, 2)


def check_v2_migration(kind: str, seq: int, data: Any, stream_ok: bool = True, fixture: bool = False) -> None:
    """What 0.1.5's v2→v3 migration admits of one v2 event ([v23] ``assertEvent``, payload part)."""
    disposition = V2_DISPOSITIONS.get(kind)
    if kind in ("feedback/message-put", "feedback/message-delete"):
        record = need_object(data, f"{kind} data")
        if kind == "feedback/message-delete":
            need_exact_members(record, ("sessionId", "messageId"), (), kind)
            need_string(record["sessionId"], "feedback sessionId")
            need_string(record["messageId"], "feedback messageId")
            return
        need_exact_members(record, ("sessionId", "item"), (), kind)
        need_string(record["sessionId"], "feedback sessionId")
        item = need_object_with(record["item"], "feedback item", ("messageId", "rating", "version", "createdAt", "updatedAt"),
                                 ("note",))
        need_string(item["messageId"], "feedback messageId")
        need_string(item["version"], "feedback version")
        need_literal(item["rating"], ("positive", "negative"), "feedback rating")
        if "note" in item:
            need_string(item["note"], "feedback note")
        need_count(item["createdAt"], "feedback createdAt")
        need_count(item["updatedAt"], "feedback updatedAt")
        return
    if disposition is None:
        raise PayloadError(f"the v2→v3 migration cannot safely transform unclassified event {kind}")
    record = need_object(data, f"{kind} data")
    required, optional, _ = disposition
    need_exact_members(record, required, optional, f"{kind} data")
    label = f"{kind} at seq {seq}"
    if kind in ("user/message", "tool/code-dispatch"):
        _v3_content(record.get("content"), f"{label}.content")
    elif kind in ("assistant/message", "tool/result", "team/message/queued"):
        _v3_content(need_object(record.get("message"), f"{label}.message").get("content"), f"{label}.message.content")
    elif kind in ("agent/inbox/spliced", "session/title-llm-request"):
        field = "inserted" if kind == "agent/inbox/spliced" else "messages"
        members = record.get(field)
        if not isinstance(members, list):
            raise PayloadError(f"{label}.{field}: content must be an array")
        for index, value in enumerate(members):
            _v3_content(need_object(value, f"{label}.{field}[{index}]").get("content"), f"{label}.{field}[{index}].content")
    elif kind == "compaction/summary":
        _v3_content(record.get("summary"), f"{label}.summary")
        if "rawOutput" in record:
            _v3_content(record["rawOutput"], f"{label}.rawOutput")
    if kind in ("assistant/message", "assistant/attempt") and stream_ok:
        stream = record.get("stream")
        if not isinstance(stream, list):
            raise PayloadError(f"{label}.stream: content must be an array")
        for index, value in enumerate(stream):
            entry = need_object(value, f"{label}.stream[{index}]")
            if entry.get("type") != "chunk":
                continue
            chunk = need_object(entry.get("chunk"), f"{label}.stream[{index}].chunk")
            if chunk.get("type") == "block-end":
                _v3_block(chunk.get("block"), f"{label}.stream[{index}].chunk.block")
            if chunk.get("type") == "block-start":
                _content_kind(chunk.get("blockType"), f"{label}.stream[{index}].chunk.blockType")
    if kind != "assistant/attempt":
        semantics(kind, seq, record, 2, fixture)
    if kind in ("assistant/message", "assistant/attempt"):
        for coordinate in ("turn", "step"):
            if need_count(record.get(coordinate), coordinate) == 0:
                raise fail(label, f"{coordinate} must be positive")
    if kind == "session/end-seed" and "inherited" in record and record["inherited"] is not True:
        raise fail(label, "inherited must be true")
    if kind == "user/message":
        _v3_source(record)
    if kind in ("assistant/message", "tool/result"):
        _v3_source(record.get("message"))
    if kind == "tool/result" and isinstance(record.get("error"), dict) and record["error"].get("code") == "TOOL_NOT_STARTED":
        message = need_object(record.get("message"), "tool result message")
        call_id = need_object(message.get("source"), "tool result source").get("callId")
        if not is_repair_identity(message.get("id"), call_id):
            raise PayloadError("TOOL_NOT_STARTED repair requires its canonical historical message id")
    if kind in ("agent/inbox/spliced", "session/title-llm-request"):
        for message in record.get("inserted" if kind == "agent/inbox/spliced" else "messages"):
            _v3_source(message)


def is_repair_identity(message_id: Any, call_id: Any) -> bool:
    """``interrupted-tool-result-<callId>-<seq>`` with a canonical decimal seq ([v23] ``isRepairIdentity``)."""
    if not isinstance(call_id, str) or not isinstance(message_id, str):
        return False
    prefix = f"interrupted-tool-result-{call_id}-"
    if not message_id.startswith(prefix):
        return False
    suffix = message_id[len(prefix):]
    return re.fullmatch(r"0|[1-9]\d*", suffix) is not None and int(suffix) <= MAX_SAFE_INTEGER


def _system_message(data: Any, version: int) -> None:
    record = need_object_with(data, "system/message data", ("turn", "step", "message"))
    for coordinate in ("turn", "step"):
        if need_count(record[coordinate], f"system/message {coordinate}") == 0:
            raise PayloadError(f"system/message {coordinate} must be positive")
    message = need_object_with(record["message"], "system message", ("id", "role", "source", "content"))
    if not non_empty_str(message["id"]) or message["role"] != "system":
        raise PayloadError("system message requires an id and system role")
    source = need_object(message["source"], "system source")
    if version >= 4:
        need_object_with(source, "system source", ("kind",))
        if source["kind"] != "system-prompt":
            raise PayloadError('v4 system message source must be exactly {"kind":"system-prompt"}')
    elif source.get("kind") != "plugin" or not non_empty_str(source.get("plugin")):
        raise PayloadError("system message requires plugin source")
    shapes.content_blocks(message["content"], "system message content", version)


def check_v3_event(kind: str, seq: int, data: Any) -> None:
    """v3 admission of one event's payload ([v23] ``assertV3StructuralRow``, ``assertCanonicalPayload``)."""
    if kind == "request/header":
        header = need_object(need_object(data, "request/header data").get("header"), "request header")
        if "system" in header:
            raise PayloadError("format v3 request/header rejects retired header.system")
        if (isinstance(header.get("tools"), list) and not header["tools"]) or (
                isinstance(header.get("adapterDefaults"), dict) and not header["adapterDefaults"]):
            raise PayloadError("request/header empty optional header fields (tools [], adapterDefaults {}) must be omitted")
    elif kind == "system/message":
        _system_message(data, 3)
    elif kind == "tool/result":
        record = need_object(data, "tool/result data")
        if "error" in record:
            content = need_object(record.get("message"), "tool/result message").get("content")
            if not (isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict)
                    and content[0].get("type") == "tool-result" and content[0].get("isError") is True):
                raise PayloadError("tool/result carries error metadata for a non-error tool result")


_MESSAGE_SLOTS = ("user/message", "system/message", "developer/message", "assistant/message", "tool/result")


def check_v4_event(kind: str, seq: int, data: Any) -> None:
    """v4 admission (FORMAT §2.10: [v34] retired-syntax.ts, tool-role.ts, message-sources.ts, developer.ts)."""
    record = need_object(data, f"{kind} data")
    if kind == "request/header":
        header = need_object(record.get("header"), "request header")
        if "system" in header:
            raise PayloadError("v4 request/header refuses header.system, even empty")
        if (isinstance(header.get("tools"), list) and not header["tools"]) or (
                isinstance(header.get("adapterDefaults"), dict) and not header["adapterDefaults"]):
            raise PayloadError("request/header empty optional header fields must be omitted")
    elif kind == "system/message":
        _system_message(record, 4)
    messages: list = []
    if kind == "user/message":
        messages = [record]
    elif kind in _MESSAGE_SLOTS:
        messages = [record.get("message")]
    elif kind == "agent/inbox/spliced" and isinstance(record.get("inserted"), list):
        messages = record["inserted"]
    elif kind == "session/title-llm-request" and isinstance(record.get("messages"), list):
        messages = record["messages"]
    for message in messages:
        message = need_object(message, f"{kind} message")
        source = need_object(message.get("source"), f"{kind} message source")
        if not non_empty_str(source.get("kind")) or source["kind"] == "plugin":
            raise PayloadError(f"{kind} message source kind must be non-empty and not \"plugin\" in v4")
        _no_tool_result_block(message.get("content"), f"{kind} message content")
    if kind == "tool/result":
        message = need_object(record.get("message"), "tool/result message")
        if message.get("role") != "tool":
            raise PayloadError('v4 tool/result message role must be "tool"')
        source = need_object(message.get("source"), "tool/result source")
        if source.get("kind") != "tool" or not non_empty_str(message.get("toolCallId")) or message["toolCallId"] != source.get("callId"):
            raise PayloadError("v4 tool/result toolCallId must be non-empty and equal message.source.callId")
        if "isError" in message and not isinstance(message["isError"], bool):
            raise PayloadError("v4 tool/result isError must be a boolean")
        if not isinstance(message.get("content"), list):
            raise PayloadError("v4 tool/result content must be an array")
        if "error" in record and message.get("isError") is not True:
            raise PayloadError("v4 tool/result with data.error requires message.isError true")
    elif kind == "developer/message":
        message = need_object(record.get("message"), "developer/message message")
        if message.get("role") != "developer":
            raise PayloadError('developer/message role must be "developer"')
        for coordinate in ("turn", "step"):
            if not positive(record.get(coordinate)):
                raise PayloadError(f"developer/message {coordinate} must be positive")
    elif kind == "assistant/message":
        source = need_object(need_object(record.get("message"), "message").get("source"), "message source")
        if source.get("kind") != "model":
            raise PayloadError("assistant/message source must be model")


def _no_tool_result_block(content: Any, label: str) -> None:
    if not isinstance(content, list):
        return
    for block in content:
        if isinstance(block, dict):
            if block.get("type") == "tool-result":
                raise PayloadError(f"{label} holds a tool-result block, gone in v4")
            if isinstance(block.get("content"), list):
                _no_tool_result_block(block["content"], label)
