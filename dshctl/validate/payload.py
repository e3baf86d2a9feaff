"""Payload admission of dsh's released codecs: which ``data`` members each event type has, and what they mean.

The rules are those of ``@deepseek-ai/dsh-session-format-v0-to-v1@0.1.3-alpha.2``
(``RELEASED_V0_EVENT_DISPOSITIONS``, ``assertReleasedEventPayload``, ``assertReleasedPayloadSemantics``:
FORMAT §2.5, §3.3–§3.6), the released-v2 inventory of ``-v1-to-v2`` and the admission of
``-v2-to-v3@0.1.5-alpha.1`` (``assertEvent``, ``assertV3StructuralRow``, ``assertCanonicalPayload``:
FORMAT §2.7), plus the v4 admission of FORMAT §2.10. Each check raises :class:`PayloadError` with a
message that names the member at fault; the caller turns it into a finding.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any, Callable

import msgspec

from dshctl.jsvalues import MAX_SAFE_INTEGER, is_lossless_json

from .values import count, finite_number, is_placeholder, non_empty_str, positive, safe_integer

__all__ = [
    "PayloadError",
    "DescriptorVersion",
    "V0_DISPOSITIONS",
    "V2_DISPOSITIONS",
    "check_v0_event",
    "check_v2_migration",
    "check_v3_event",
    "check_v4_event",
    "check_stream_chunk",
]


class PayloadError(Exception):
    """A payload member dsh's admission refuses."""


class DescriptorVersion(PayloadError):
    """A v0 ``subagent/descriptor`` whose version is not 3: the released v0→v1 migration refuses the log
    (``SessionFormatUnsupportedMigrationError``, FORMAT §9 #22)."""


def _fail(label: str, what: str) -> PayloadError:
    return PayloadError(f"{label} {what}")


# --------------------------------------------------------------------------- inventories


def _inventory(required: str, optional: str = "", opaque: str = "") -> tuple[frozenset, frozenset, frozenset]:
    return frozenset(required.split()), frozenset(optional.split()), frozenset(opaque.split())


V0_DISPOSITIONS: dict[str, tuple[frozenset, frozenset, frozenset]] = {
    "agent-preset/selected": _inventory("agentPreset"),
    "agent/inbox/spliced": _inventory("target start inserted", "removedCount outcome"),
    "approval/asked": _inventory("id toolName", "callId reason"),
    "approval/decided": _inventory("id outcome"),
    "approval/policy": _inventory("policy", "source"),
    "assistant/chunk": _inventory("turn step chunk"),
    "assistant/message": _inventory("turn step message", "usage interrupted"),
    "command/done": _inventory("commandId kind", "text sourceEventSeq"),
    "command/run": _inventory("commandId name source", "args"),
    "compaction/end": _inventory("compactionId turn", "sourceCommandId error"),
    "compaction/prune": _inventory("shadowedRange shadowedSeqs shadowedTokenCount"),
    "compaction/start": _inventory("compactionId turn", "sourceCommandId"),
    "compaction/summary": _inventory(
        "compactionId summary shadowedRange shadowedSeqs shadowedTokenCount provider model",
        "sourceCommandId maxTokens usage rawOutput llmStreamCall",
    ),
    "feedback/record": _inventory("text"),
    "goal/change": _inventory("kind version operation", "goal roundsStarted createdAt updatedAt cleared clearedAt"),
    "hook/invoked": _inventory("turn point dialect handlerId", "matcher"),
    "hook/result": _inventory("turn point handlerId decision durationMs", "exitCode stderrSummary"),
    "llm/retry": _inventory("retryId turn step provider mode policyKey retry delayMs failure", "maxRetries"),
    "llm/retry-started": _inventory("retryId turn step retry"),
    "model/selection": _inventory("provider model", "reasoningEffort"),
    "permission/preset": _inventory("preset"),
    "plan/mode": _inventory("active"),
    "request/context": _inventory("provider model", "contextWindow"),
    "request/header": _inventory("header reason", "startsSeries"),
    "sandbox/mode": _inventory("mode", "source"),
    "schedule/change": _inventory("version operation", "schedule id acceptedAt"),
    "session-log-deepseek/delivery-accepted": _inventory("sessionId throughSeq"),
    "session/end-seed": _inventory(""),
    "session/title": _inventory("title messageSeqs source"),
    "session/title-llm-request": _inventory("titleProvider messageSeqs route system messages maxTokens"),
    "step/end": _inventory("turn step"),
    "step/start": _inventory("turn step"),
    "subagent/descriptor": _inventory("mode version provider", "label agentProvider agentModel agentReasoningEffort persona toolFilter"),
    "subagent/model-selection-policy": _inventory("allowedModels"),
    "team/member": _inventory("version teamId member"),
    "team/message/delivered": _inventory("version teamId messageId targetId"),
    "team/message/queued": _inventory("version teamId message"),
    "team/task": _inventory("version teamId task"),
    "todo/write": _inventory("todos"),
    "tool-workflow/agent-end": _inventory("runId seq outcome"),
    "tool-workflow/agent-start": _inventory("runId seq label childId", "phase"),
    "tool-workflow/run-end": _inventory("runId stopReason"),
    "tool-workflow/run-start": _inventory("runId name"),
    "tool/call": _inventory("turn step callId name arguments"),
    "tool/code-dispatch": _inventory("rootCallId parentCallId subCallId name arguments isError content", "", "arguments"),
    "tool/code-dispatch-start": _inventory("rootCallId parentCallId subCallId name arguments", "", "arguments"),
    "tool/result": _inventory("turn step message", "error meta", "meta"),
    "turn/end": _inventory("turn reason"),
    "turn/start": _inventory("turn"),
    "user/message": _inventory("role id content source"),
    "web/deepseek-search-llm-request": _inventory("endpoint apiVersion body"),
}

V2_DISPOSITIONS = {
    **{k: v for k, v in V0_DISPOSITIONS.items()
       if k not in ("assistant/chunk", "assistant/message", "session-log-deepseek/delivery-accepted", "session/end-seed")},
    "assistant/attempt": _inventory("turn step stream"),
    "assistant/message": _inventory("turn step message stream", "usage interrupted"),
    "session-log-deepseek/delivery-accepted": _inventory("sessionId throughSeq", "sessionFormatVersion"),
    "session/end-seed": _inventory("", "inherited"),
}

# --------------------------------------------------------------------------- primitives


def _object(value: Any, label: str) -> dict:
    if not isinstance(value, dict):
        raise _fail(label, "must be a JSON object")
    return value


def _exact_members(record: dict, required, optional=(), label: str = "") -> None:
    allowed = set(required) | set(optional)
    for key in record:
        if key not in allowed:
            raise _fail(label, f'has unexpected member "{key}"')
    for key in required:
        if key not in record:
            raise _fail(label, f'lacks required member "{key}"')


def _object_with_keys(value: Any, label: str, required, optional=()) -> dict:
    record = _object(value, label)
    _exact_members(record, required, optional, label)
    return record


def _string(value: Any, label: str) -> None:
    if not isinstance(value, str):
        raise _fail(label, "must be a string")


def _non_empty_string(value: Any, label: str) -> None:
    if not non_empty_str(value):
        raise _fail(label, "must be a non-empty string")


def _boolean(value: Any, label: str) -> None:
    if not isinstance(value, bool):
        raise _fail(label, "must be a boolean")


def _count(value: Any, label: str) -> int:
    if not count(value):
        raise _fail(label, "must be a non-negative safe integer")
    return int(value)


def _safe_integer(value: Any, label: str) -> int:
    if not safe_integer(value):
        raise _fail(label, "must be a safe integer")
    return int(value)


def _positive(value: Any, label: str) -> int:
    number = _count(value, label)
    if number == 0:
        raise _fail(label, "must be positive")
    return number


def _finite_number(value: Any, label: str) -> float:
    if not finite_number(value):
        raise _fail(label, "must be a finite number")
    return value


def _literal(value: Any, allowed: tuple, label: str) -> None:
    for candidate in allowed:
        if value is candidate or (type(value) is type(candidate) and value == candidate):
            return
        if isinstance(candidate, int) and not isinstance(candidate, bool) and isinstance(value, (int, float)) \
                and not isinstance(value, bool) and value == candidate:
            return
    raise _fail(label, "must be one of " + ", ".join(str(c).lower() if isinstance(c, bool) else str(c) for c in allowed))


def _array(value: Any, label: str, each: Callable[[Any, str], None] | None = None) -> list:
    if not isinstance(value, list):
        raise _fail(label, "must be an array")
    if each is not None:
        for index, member in enumerate(value):
            each(member, f"{label}[{index}]")
    return value


def _turn_and_step(data: dict, label: str) -> None:
    _count(data.get("turn"), f"{label} turn")
    _count(data.get("step"), f"{label} step")


def _earlier_seq(value: Any, seq: int, label: str) -> int:
    number = _count(value, label)
    if number >= seq:
        raise _fail(label, "must identify an earlier event")
    return number


def _seq_array(value: Any, seq: int, label: str, non_empty: bool) -> list:
    seen: set[int] = set()

    def each(member, member_label):
        number = _earlier_seq(member, seq, member_label)
        if number in seen:
            raise _fail(label, f"repeats seq {number}")
        seen.add(number)

    values = _array(value, label, each)
    if non_empty and not values:
        raise _fail(label, "must be non-empty")
    return values


# --------------------------------------------------------------------------- shared shapes


def _failure(value: Any, label: str) -> None:
    failure = _object_with_keys(value, label, ("message", "code"), ("status", "providerRetryAfterMs", "requestId"))
    _non_empty_string(failure["message"], f"{label} message")
    _non_empty_string(failure["code"], f"{label} code")
    if "status" in failure:
        status = _safe_integer(failure["status"], f"{label} status")
        if status < 100 or status > 599:
            raise _fail(label, "status must be 100 through 599")
    if "providerRetryAfterMs" in failure \
            and _finite_number(failure["providerRetryAfterMs"], f"{label} providerRetryAfterMs") <= 0:
        raise _fail(label, "providerRetryAfterMs must be positive")
    if "requestId" in failure:
        _non_empty_string(failure["requestId"], f"{label} requestId")


def _usage(value: Any, label: str) -> None:
    usage = _object_with_keys(value, label, ("inputTokens", "outputTokens"),
                   ("totalTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens"))
    for key, member in usage.items():
        _count(member, f"{label} {key}")


def _content_blocks(value: Any, label: str, version: int) -> None:
    _array(value, label, lambda member, member_label: _content_block(member, member_label, version))


def _content_block(value: Any, label: str, version: int) -> None:
    block = _object(value, label)
    kind = block.get("type")
    if kind in ("text", "reasoning"):
        _exact_members(block, ("type", "text"), (), label)
        _string(block["text"], f"{label} text")
    elif kind == "image":
        _exact_members(block, ("type", "attachment"), ("offloaded",) if version >= 4 else (), label)
        _image_ref(block["attachment"], f"{label} attachment")
    elif kind == "tool-call":
        _exact_members(block, ("type", "id", "name", "arguments"), (), label)
        _non_empty_string(block["id"], f"{label} id")
        _non_empty_string(block["name"], f"{label} name")
        _string(block["arguments"], f"{label} arguments")
    elif kind == "tool-result":
        _exact_members(block, ("type", "toolCallId", "content"), ("isError",), label)
        _non_empty_string(block["toolCallId"], f"{label} toolCallId")
        _content_blocks(block["content"], f"{label} content", version)
        if "isError" in block:
            _boolean(block["isError"], f"{label} isError")
    else:
        _non_empty_string(kind, f"{label} type")


def _image_ref(value: Any, label: str) -> None:
    ref = _object_with_keys(value, label, ("attachmentId", "mediaType", "bytes", "width", "height"),
                            ("name", "originalDimensions"))
    _non_empty_string(ref["attachmentId"], f"{label} attachmentId")
    _literal(ref["mediaType"], ("image/png", "image/jpeg", "image/webp", "image/gif"), f"{label} mediaType")
    _count(ref["bytes"], f"{label} bytes")
    _positive(ref["width"], f"{label} width")
    _positive(ref["height"], f"{label} height")
    if "name" in ref:
        _string(ref["name"], f"{label} name")
    if "originalDimensions" in ref:
        dims = _object_with_keys(ref["originalDimensions"], f"{label} originalDimensions", ("width", "height"))
        _positive(dims["width"], f"{label} original width")
        _positive(dims["height"], f"{label} original height")


def _message(value: Any, label: str, version: int, expected: str | None) -> None:
    message = _object_with_keys(value, label, ("id", "role", "content", "source"))
    _non_empty_string(message["id"], f"{label} id")
    role = {"assistant": "assistant", "user": "user", "tool": "user"}.get(expected or "")
    if role is None:
        _literal(message["role"], ("system", "user", "assistant"), f"{label} role")
    else:
        _literal(message["role"], (role,), f"{label} role")
    _content_blocks(message["content"], f"{label} content", version)
    source = _object(message["source"], f"{label} source")
    if version < 2 and expected == "user" and source.get("kind") == "goal" and "change" in source:
        _legacy_goal_source(message, source, label)
    else:
        _message_source(source, f"{label} source", version, expected)
    if expected == "tool":
        content = message["content"]
        block = content[0] if isinstance(content, list) and len(content) == 1 else None
        if not isinstance(block, dict) or block.get("type") != "tool-result" or block.get("toolCallId") != source.get("callId"):
            raise _fail(label, "must contain exactly one tool-result block")


def _legacy_goal_source(message: dict, source: dict, label: str) -> None:
    _exact_members(source, ("kind", "goalId", "revision", "round", "change"), (), f"{label} source")
    _non_empty_string(source["goalId"], f"{label} source goalId")
    _positive(source["revision"], f"{label} source revision")
    if source["round"] != 0 or isinstance(source["round"], bool):
        raise _fail(label, "legacy goal source round must be 0")
    change = _object(source["change"], f"{label} source change")
    _goal_change(change, f"{label} source change")
    ref = _object(change["cleared"] if change.get("operation") == "clear" else change.get("goal"),
                  f"{label} source change ref")
    if source["goalId"] != ref.get("id") or source["revision"] != ref.get("revision"):
        raise _fail(label, "legacy goal source does not match its change")


_SOURCE_SHAPES = {
    "team-message": (("kind", "teamId", "messageId", "senderId", "senderName"), ()),
    "goal": (("kind", "goalId", "revision", "round"), ()),
    "skill-invocation": (("kind", "name", "form"), ()),
    "coordinator": (("kind", "form", "senderSessionId"), ()),
    "subagent-report": (("kind", "form", "senderSessionId"), ()),
    "subagent-settled": (("kind", "form", "summary", "senderSessionId"), ()),
    "webhook": (("kind", "provider", "source", "deliveryId", "ruleId", "form", "summary"), ()),
}


def _message_source(value: Any, label: str, version: int, expected: str | None) -> None:
    source = _object(value, label)
    kind = source.get("kind")
    if expected == "assistant" and kind != "model":
        raise _fail(label, "must be model source")
    if expected == "tool" and kind != "tool":
        raise _fail(label, "must be tool source")
    if kind == "user":
        _exact_members(source, ("kind",), ("rpcId", "clientTimeZone"), label)
        for key in ("rpcId", "clientTimeZone"):
            if key in source:
                _non_empty_string(source[key], f"{label} {key}")
    elif kind == "plugin":
        _plugin_source(source, label)
    elif kind == "model":
        _exact_members(source, ("kind", "provider", "model"), ("replayState",), label)
        _non_empty_string(source["provider"], f"{label} provider")
        _non_empty_string(source["model"], f"{label} model")
    elif kind == "tool":
        _exact_members(source, ("kind", "callId"), (), label)
        _non_empty_string(source["callId"], f"{label} callId")
    elif kind == "agent-instructions":
        _exact_members(source, ("kind", "form", "changes"), ("baseline", "baselineIdentity"), label)
        _literal(source["form"], ("instructions",), f"{label} form")
        if "baseline" in source:
            _literal(source["baseline"], (True,), f"{label} baseline")
        if "baselineIdentity" in source:
            _non_empty_string(source["baselineIdentity"], f"{label} baselineIdentity")

        def change(member, member_label):
            item = _object_with_keys(member, member_label, ("action", "scope", "path"), ("digest",))
            _literal(item["action"], ("set", "replace", "remove"), f"{member_label} action")
            _string(item["scope"], f"{member_label} scope")
            _string(item["path"], f"{member_label} path")
            if "digest" in item:
                _string(item["digest"], f"{member_label} digest")

        _array(source["changes"], f"{label} changes", change)
    elif kind == "session-reference":
        _session_reference(source, label, version)
    elif kind == "skill-catalog":
        _exact_members(source, ("kind", "form", "entries"), ("update",), label)
        _literal(source["form"], ("catalog",), f"{label} form")
        if "update" in source:
            _literal(source["update"], (True,), f"{label} update")

        def entry(member, member_label):
            item = _object_with_keys(member, member_label, ("name", "description"))
            _non_empty_string(item["name"], f"{member_label} name")
            _string(item["description"], f"{member_label} description")

        _array(source["entries"], f"{label} entries", entry)
    elif isinstance(kind, str) and kind in _SOURCE_SHAPES:
        required, optional = _SOURCE_SHAPES[kind]
        _exact_members(source, required, optional, label)
        if kind == "team-message":
            for key in ("teamId", "messageId", "senderId"):
                _non_empty_string(source[key], f"{label} {key}")
            _string(source["senderName"], f"{label} senderName")
        elif kind == "goal":
            _non_empty_string(source["goalId"], f"{label} goalId")
            _positive(source["revision"], f"{label} revision")
            _positive(source["round"], f"{label} round")
        elif kind == "skill-invocation":
            _non_empty_string(source["name"], f"{label} name")
            _literal(source["form"], ("instructions",), f"{label} form")
        elif kind in ("coordinator", "subagent-report"):
            _literal(source["form"], ("relay",), f"{label} form")
            _non_empty_string(source["senderSessionId"], f"{label} senderSessionId")
        elif kind == "subagent-settled":
            _literal(source["form"], ("notice",), f"{label} form")
            _string(source["summary"], f"{label} summary")
            _non_empty_string(source["senderSessionId"], f"{label} senderSessionId")
        elif kind == "webhook":
            for key in ("provider", "source", "deliveryId", "ruleId"):
                _non_empty_string(source[key], f"{label} {key}")
            _literal(source["form"], ("notice",), f"{label} form")
            _string(source["summary"], f"{label} summary")
    else:
        _non_empty_string(kind, f"{label} kind")


def _plugin_source(source: dict, label: str) -> None:
    optional = ["form", "sections", "summary"]
    if source.get("plugin") == "compact":
        optional += ["compactionId", "sourceCommandId"]
    _exact_members(source, ("kind", "plugin"), optional, label)
    _non_empty_string(source["plugin"], f"{label} plugin")
    if source["plugin"] == "compact":
        _non_empty_string(source.get("compactionId"), f"{label} compactionId")
        if "sourceCommandId" in source:
            _non_empty_string(source["sourceCommandId"], f"{label} sourceCommandId")
    form = source.get("form")
    if "form" not in source:
        return
    _literal(form, ("instructions", "catalog", "snapshot", "notice", "relay", "recall"), f"{label} form")
    if form == "snapshot":
        def section(member, member_label):
            item = _object_with_keys(member, member_label, ("name", "text"))
            _non_empty_string(item["name"], f"{member_label} name")
            _string(item["text"], f"{member_label} text")

        _array(source.get("sections"), f"{label} sections", section)
    elif "sections" in source:
        raise _fail(label, "sections require snapshot form")
    if form == "notice":
        _string(source.get("summary"), f"{label} summary")
    elif "summary" in source:
        raise _fail(label, "summary requires notice form")


def _session_reference(source: dict, label: str, version: int) -> None:
    _exact_members(source, ("kind", "form", "version", "references"), (), label)
    _literal(source["form"], ("recall",), f"{label} form")
    _literal(source["version"], (1,), f"{label} version")
    position = 0
    seen: set = set()
    references = _array(source["references"], f"{label} references")
    for index, member in enumerate(references):
        member_label = f"{label} references[{index}]"
        ref = _object_with_keys(member, member_label,
                     ("sessionId", "label", "capturedThroughSeq", "compacted", "originalMessages", "retainedMessages",
                      "omittedMessages", "omittedBytes", "truncated", "inputIndex"),
                     ("capturedFormatVersion",) if version >= 1 else ())
        _non_empty_string(ref["sessionId"], f"{member_label} sessionId")
        _string(ref["label"], f"{member_label} label")
        if ref["capturedThroughSeq"] is not None:
            _count(ref["capturedThroughSeq"], f"{member_label} capturedThroughSeq")
        if "capturedFormatVersion" in ref:
            captured = _count(ref["capturedFormatVersion"], f"{member_label} capturedFormatVersion")
            if captured < 1 or captured > version:
                raise _fail(member_label, f"capturedFormatVersion must be between 1 and {version}")
        _boolean(ref["compacted"], f"{member_label} compacted")
        original = _count(ref["originalMessages"], f"{member_label} originalMessages")
        retained = _count(ref["retainedMessages"], f"{member_label} retainedMessages")
        omitted = _count(ref["omittedMessages"], f"{member_label} omittedMessages")
        omitted_bytes = _count(ref["omittedBytes"], f"{member_label} omittedBytes")
        input_index = _count(ref["inputIndex"], f"{member_label} inputIndex")
        _boolean(ref["truncated"], f"{member_label} truncated")
        if retained > original or omitted != original - retained:
            raise _fail(member_label, "message counts are inconsistent")
        if ref["truncated"] != (omitted > 0 or omitted_bytes > 0):
            raise _fail(member_label, "truncated disagrees with omitted content")
        if input_index != position:
            raise _fail(label, "inputIndex must match reference position")
        position += 1
        if ref["sessionId"] in seen:
            raise _fail(label, f"repeats sessionId {ref['sessionId']}")
        seen.add(ref["sessionId"])
    if not references:
        raise _fail(label, "references must be non-empty")


def check_stream_chunk(value: Any, label: str = "chunk") -> None:
    """A ``StreamChunk`` with its exact members (FORMAT §4.1; [v01] ``streamChunkValue``)."""
    chunk = _object(value, label)
    kind = chunk.get("type")
    if kind == "block-start":
        _exact_members(chunk, ("type", "index", "blockType"), (), label)
        _count(chunk["index"], f"{label} index")
        _non_empty_string(chunk["blockType"], f"{label} blockType")
    elif kind in ("text-delta", "reasoning-delta"):
        _exact_members(chunk, ("type", "index", "text"), (), label)
        _count(chunk["index"], f"{label} index")
        _string(chunk["text"], f"{label} text")
    elif kind == "tool-call-delta":
        _exact_members(chunk, ("type", "index", "id", "argumentsDelta"), ("name",), label)
        _count(chunk["index"], f"{label} index")
        _non_empty_string(chunk["id"], f"{label} id")
        if "name" in chunk:
            _string(chunk["name"], f"{label} name")
        _string(chunk["argumentsDelta"], f"{label} argumentsDelta")
    elif kind == "block-end":
        _exact_members(chunk, ("type", "index", "block"), (), label)
        _count(chunk["index"], f"{label} index")
        _content_block(chunk["block"], f"{label} block", 1)
    elif kind == "usage":
        _exact_members(chunk, ("type", "usage"), (), label)
        _usage(chunk["usage"], f"{label} usage")
    elif kind == "finish":
        _exact_members(chunk, ("type", "reason"), ("replayState",), label)
        _finish_reason(chunk["reason"], f"{label} reason")
        if "replayState" in chunk:
            replay = _object_with_keys(chunk["replayState"], f"{label} replayState", ("response",), ("blocks",))
            if "blocks" in replay and not isinstance(replay["blocks"], list):
                raise _fail(f"{label} replayState", "blocks must be an array")
    else:
        raise _fail(label, f"has unknown stream chunk type {kind!r}")


def _finish_reason(value: Any, label: str) -> None:
    reason = _object(value, label)
    kind = reason.get("kind")
    if kind in ("aborted", "error"):
        _exact_members(reason, ("kind", "failure"), (), label)
        _failure(reason["failure"], f"{label} failure")
        return
    if kind in ("stop", "tool-calls", "max-tokens"):
        _exact_members(reason, ("kind",), (), label)
    _non_empty_string(kind, f"{label} kind")


def _turn_end_reason(value: Any, label: str, version: int) -> None:
    reason = _object(value, label)
    kind = reason.get("kind")
    simple = ("completed", "blocked", "max-tokens", "interrupted") + (("forked",) if version >= 4 else ())
    if kind in simple:
        _exact_members(reason, ("kind",), (), label)
    elif kind == "aborted":
        _exact_members(reason, ("kind", "reason"), (), label)
        cause = _object(reason["reason"], f"{label} abort cause")
        if cause.get("kind") == "hook":
            _exact_members(cause, ("kind", "reason"), (), f"{label} abort cause")
            _string(cause["reason"], f"{label} abort reason")
        else:
            _exact_members(cause, ("kind",), (), f"{label} abort cause")
            _literal(cause["kind"], ("user", "parent", "disposed", "legacy"), f"{label} abort kind")
    elif kind == "error":
        _exact_members(reason, ("kind", "error"), (), label)
        _failure(reason["error"], f"{label} error")
    else:
        _non_empty_string(kind, f"{label} kind")


def _request_header(value: Any, label: str, fixture: bool) -> None:
    header = _object_with_keys(value, label, ("config",), ("adapterDefaults", "system", "tools"))
    config = _object_with_keys(header["config"], f"{label} config", ("provider", "model"),
                    ("reasoningEffort", "temperature", "maxTokens", "stop"))
    _non_empty_string(config["provider"], f"{label} provider")
    _non_empty_string(config["model"], f"{label} model")
    if "reasoningEffort" in config:
        _non_empty_string(config["reasoningEffort"], f"{label} reasoningEffort")
    if "temperature" in config:
        _finite_number(config["temperature"], f"{label} temperature")
    if "maxTokens" in config:
        _positive(config["maxTokens"], f"{label} maxTokens")
    if "stop" in config:
        _array(config["stop"], f"{label} stop", _string)
    if "adapterDefaults" in header:
        defaults = _object_with_keys(header["adapterDefaults"], f"{label} adapterDefaults", (),
                                     ("reasoningEffort", "maxTokens"))
        for key, marker in defaults.items():
            _literal(marker, (True,), f"{label} adapterDefaults {key}")
            if key not in config:
                raise _fail(label, f"adapter default {key} lacks config value")
    if "system" in header:
        _string(header["system"], f"{label} system")
    tools = header.get("tools")
    scrubbed = fixture and (is_placeholder(tools) or (isinstance(tools, list) and all(isinstance(t, str) for t in tools)))
    if "tools" in header and not scrubbed:  # fixtures scrub schemas to "{{tools}}" or to a list of names
        def tool(member, member_label):
            schema = _object_with_keys(member, member_label, ("name", "description", "parameters"), ())
            _non_empty_string(schema["name"], f"{member_label} name")
            _string(schema["description"], f"{member_label} description")
            _object(schema["parameters"], f"{member_label} parameters")

        _array(header["tools"], f"{label} tools", tool)


def _shadowed_span(data: dict, seq: int, label: str) -> None:
    span = _object_with_keys(data.get("shadowedRange"), f"{label} shadowedRange", ("start", "end"))
    start = _earlier_seq(span["start"], seq, f"{label} shadowedRange start")
    end = _earlier_seq(span["end"], seq, f"{label} shadowedRange end")
    seqs = _seq_array(data.get("shadowedSeqs"), seq, f"{label} shadowedSeqs", True)
    if seqs[0] != start or seqs[-1] != end:
        raise _fail(label, "shadowedRange must match shadowedSeqs endpoints")
    _count(data.get("shadowedTokenCount"), f"{label} shadowedTokenCount")


def _goal_change(data: dict, label: str) -> None:
    _literal(data.get("kind"), ("goal/change",), f"{label} kind")
    _literal(data.get("version"), (1,), f"{label} version")
    if data.get("operation") == "clear":
        _exact_members(data, ("kind", "version", "operation", "cleared", "clearedAt"), (), f"{label} data")
        ref = _object_with_keys(data["cleared"], f"{label} cleared", ("id", "revision"))
        _non_empty_string(ref["id"], f"{label} cleared id")
        _positive(ref["revision"], f"{label} cleared revision")
        _count(data["clearedAt"], f"{label} clearedAt")
        return
    _exact_members(data, ("kind", "version", "operation", "goal", "roundsStarted", "createdAt", "updatedAt"), (),
                   f"{label} data")
    _literal(data["operation"], ("create", "edit", "pause", "resume", "complete", "block"), f"{label} operation")
    goal = _object_with_keys(data["goal"], f"{label} goal", ("id", "revision", "objective", "phase", "maxGoalRounds"),
                             ("blockedReason",))
    _non_empty_string(goal["id"], f"{label} goal id")
    _positive(goal["revision"], f"{label} goal revision")
    _non_empty_string(goal["objective"], f"{label} goal objective")
    _literal(goal["phase"], ("active", "paused", "blocked", "complete"), f"{label} goal phase")
    _positive(goal["maxGoalRounds"], f"{label} goal maxGoalRounds")
    if goal["phase"] == "blocked":
        reason = _object_with_keys(goal.get("blockedReason"), f"{label} goal blockedReason", ("code", "message"))
        _non_empty_string(reason["code"], f"{label} blocked code")
        _non_empty_string(reason["message"], f"{label} blocked message")
    elif "blockedReason" in goal:
        raise _fail(label, "blockedReason requires blocked phase")
    for key in ("roundsStarted", "createdAt", "updatedAt"):
        _count(data[key], f"{label} {key}")


_INSTANT = re.compile(r"(?!0000)\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z")


def _instant(value: Any, label: str) -> None:
    ok = isinstance(value, str) and _INSTANT.fullmatch(value) is not None
    if ok:
        try:
            parsed = datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
            ok = parsed.strftime("%Y-%m-%dT%H:%M:%S.") + f"{parsed.microsecond // 1000:03d}Z" == value
        except ValueError:
            ok = False
    if not ok:
        raise _fail(label, "must be a canonical UTC instant")


def _schedule_id(value: Any, label: str) -> None:
    _non_empty_string(value, label)
    if value.strip() != value:
        raise _fail(label, "must not have surrounding whitespace")


def _schedule_change(data: dict, label: str) -> None:
    _literal(data.get("version"), (1,), f"{label} version")
    if data.get("operation") == "create":
        _exact_members(data, ("version", "operation", "schedule"), (), f"{label} data")
        record = _object(data["schedule"], f"{label} schedule")
        kind = record.get("kind")
        if kind == "after":
            _exact_members(record, ("id", "kind", "prompt", "afterSeconds", "scheduledAt"), (), f"{label} schedule")
            _positive(record["afterSeconds"], f"{label} afterSeconds")
        elif kind == "at":
            _exact_members(record, ("id", "kind", "prompt", "scheduledAt"), (), f"{label} schedule")
        elif kind == "every":
            _exact_members(record, ("id", "kind", "prompt", "everySeconds", "scheduledAt"), (), f"{label} schedule")
            if _positive(record["everySeconds"], f"{label} everySeconds") < 300:
                raise _fail(label, "everySeconds must be at least 300")
        else:
            raise _fail(label, "has unknown schedule kind")
        _schedule_id(record["id"], f"{label} id")
        _non_empty_string(record["prompt"], f"{label} prompt")
        _instant(record["scheduledAt"], f"{label} scheduledAt")
        return
    _exact_members(data, ("version", "operation", "id"), ("acceptedAt",) if data.get("operation") == "dispatch" else (),
                   f"{label} data")
    _literal(data["operation"], ("delete", "dispatch"), f"{label} operation")
    _schedule_id(data["id"], f"{label} id")
    if "acceptedAt" in data:
        _instant(data["acceptedAt"], f"{label} acceptedAt")


def _route(value: Any, label: str) -> None:
    route = _object_with_keys(value, label, ("provider", "model"))
    _non_empty_string(route["provider"], f"{label} provider")
    _non_empty_string(route["model"], f"{label} model")


def _title_source(value: Any, label: str) -> None:
    source = _object(value, label)
    if source.get("kind") == "provider":
        _exact_members(source, ("kind", "provider"), ("model",), label)
        _non_empty_string(source["provider"], f"{label} provider")
        if "model" in source:
            _route(source["model"], f"{label} model")
        return
    _exact_members(source, ("kind",), (), label)
    _literal(source["kind"], ("fallback", "user"), f"{label} kind")


def _subagent_descriptor(data: dict, label: str) -> None:
    _literal(data.get("version"), (3,), f"{label} version")
    _non_empty_string(data.get("provider"), f"{label} provider")
    if data.get("mode") == "one-shot":
        _exact_members(data, ("mode", "version", "provider"), ("label",), f"{label} data")
        if "label" in data:
            _string(data["label"], f"{label} label")
        return
    _literal(data.get("mode"), ("continuable",), f"{label} mode")
    _non_empty_string(data.get("label"), f"{label} label")
    for key in ("agentProvider", "agentModel", "agentReasoningEffort", "persona"):
        if key in data:
            _non_empty_string(data[key], f"{label} {key}")
    if ("agentProvider" in data) != ("agentModel" in data):
        raise _fail(label, "agentProvider and agentModel must be paired")
    if "toolFilter" in data:
        tool_filter = _object_with_keys(data["toolFilter"], f"{label} toolFilter", (), ("allow", "deny"))
        if not tool_filter:
            raise _fail(label, "toolFilter requires allow or deny")
        for key in ("allow", "deny"):
            if key in tool_filter:
                _array(tool_filter[key], f"{label} {key}", _non_empty_string)


def _team_selector(data: dict, label: str) -> None:
    _literal(data.get("version"), (1,), f"{label} version")
    _non_empty_string(data.get("teamId"), f"{label} teamId")


def _web_search_body(value: Any, label: str) -> None:
    body = _object_with_keys(value, label, ("model", "max_tokens", "messages", "tools"))
    _non_empty_string(body["model"], f"{label} model")
    _positive(body["max_tokens"], f"{label} max_tokens")

    def message(member, member_label):
        item = _object_with_keys(member, member_label, ("role", "content"))
        _literal(item["role"], ("user",), f"{member_label} role")

        def text(block, block_label):
            entry = _object_with_keys(block, block_label, ("type", "text"))
            _literal(entry["type"], ("text",), f"{block_label} type")
            _string(entry["text"], f"{block_label} text")

        if len(_array(item["content"], f"{member_label} content", text)) != 1:
            raise _fail(member_label, "content must contain one text block")

    if len(_array(body["messages"], f"{label} messages", message)) != 1:
        raise _fail(label, "messages must contain one user message")

    def tool(member, member_label):
        entry = _object_with_keys(member, member_label, ("type", "name", "max_uses"))
        _literal(entry["type"], ("web_search_20250305",), f"{member_label} type")
        _literal(entry["name"], ("web_search",), f"{member_label} name")
        _positive(entry["max_uses"], f"{member_label} max_uses")

    if len(_array(body["tools"], f"{label} tools", tool)) != 1:
        raise _fail(label, "tools must contain one web search tool")


# --------------------------------------------------------------------------- per-event semantics
#
# One checker per event type, in :data:`_SEMANTICS`. Each runs its checks in the order of the released
# ``assertReleasedPayloadSemantics``: the first member at fault raises, and its message is the finding.


class _Judged(msgspec.Struct, frozen=True, gc=False):
    """The event whose ``data`` a checker judges."""

    kind: str
    seq: int
    version: int
    """The payload generation the rules are those of: 0 (v0/v1 payloads) or 2 (the v2→v3 migration)."""
    fixture: bool
    """dsh's projected test-fixture form (placeholders, no envelope seqs)."""
    label: str
    """``"<kind> <seq>"``, the start of every message."""


def semantics(kind: str, seq: int, data: Any, version: int, fixture: bool = False) -> None:
    """[v01] ``assertReleasedPayloadSemantics`` for one known event (version = payload generation)."""
    data = _object(data, f"{kind} {seq} data")
    checker = _SEMANTICS.get(kind)
    if checker is not None:
        checker(data, _Judged(kind, seq, version, fixture, f"{kind} {seq}"))


def _agent_preset_selected(data: dict, event: _Judged) -> None:
    _string(data.get("agentPreset"), f"{event.label} agentPreset")


def _agent_inbox_spliced(data: dict, event: _Judged) -> None:
    label = event.label
    _literal(data.get("target"), ("next-turn", "next-step"), f"{label} target")
    _count(data.get("start"), f"{label} start")
    if "removedCount" in data:
        _count(data["removedCount"], f"{label} removedCount")
    _array(data.get("inserted"), f"{label} inserted",
           lambda member, _: _message(member, f"{label} inserted message", event.version, "user"))
    if "outcome" in data:
        _literal(data["outcome"], ("canceled",), f"{label} outcome")


def _approval_asked(data: dict, event: _Judged) -> None:
    label = event.label
    _non_empty_string(data.get("id"), f"{label} id")
    _non_empty_string(data.get("toolName"), f"{label} toolName")
    if "callId" in data:
        _non_empty_string(data["callId"], f"{label} callId")
    if "reason" in data:
        _string(data["reason"], f"{label} reason")


def _approval_decided(data: dict, event: _Judged) -> None:
    label = event.label
    _non_empty_string(data.get("id"), f"{label} id")
    _literal(data.get("outcome"), ("allowed-once", "rejected", "cancelled", "unavailable"), f"{label} outcome")


def _approval_policy(data: dict, event: _Judged) -> None:
    label = event.label
    _literal(data.get("policy"), ("ask", "never"), f"{label} policy")
    if "source" in data:
        _literal(data["source"], ("delegation",), f"{label} source")


def _assistant_chunk(data: dict, event: _Judged) -> None:
    _turn_and_step(data, event.label)
    check_stream_chunk(data.get("chunk"), f"{event.label} chunk")


def _assistant_message(data: dict, event: _Judged) -> None:
    label = event.label
    _turn_and_step(data, label)
    _message(data.get("message"), f"{label} message", event.version, "assistant")
    if "usage" in data:
        _usage(data["usage"], f"{label} usage")
    if "interrupted" in data:
        _literal(data["interrupted"], (True,), f"{label} interrupted")


def _command_done(data: dict, event: _Judged) -> None:
    label = event.label
    _non_empty_string(data.get("commandId"), f"{label} commandId")
    _literal(data.get("kind"), ("success", "error"), f"{label} kind")
    if "text" in data:
        _string(data["text"], f"{label} text")
    if "sourceEventSeq" in data:
        _earlier_seq(data["sourceEventSeq"], event.seq, f"{label} sourceEventSeq")


def _command_run(data: dict, event: _Judged) -> None:
    label = event.label
    _non_empty_string(data.get("commandId"), f"{label} commandId")
    _non_empty_string(data.get("name"), f"{label} name")
    if "args" in data:
        _string(data["args"], f"{label} args")
    source = _object_with_keys(data.get("source"), f"{label} source", ("kind",))
    _literal(source["kind"], ("user",), f"{label} source kind")


def _compaction_start_or_end(data: dict, event: _Judged) -> None:
    label = event.label
    _non_empty_string(data.get("compactionId"), f"{label} compactionId")
    if "sourceCommandId" in data:
        _non_empty_string(data["sourceCommandId"], f"{label} sourceCommandId")
    if data.get("turn") is not None:
        _count(data.get("turn"), f"{label} turn")
    if "error" in data:
        _string(data["error"], f"{label} error")


def _compaction_prune(data: dict, event: _Judged) -> None:
    _shadowed_span(data, event.seq, event.label)


def _compaction_summary(data: dict, event: _Judged) -> None:
    label, version = event.label, event.version
    if data.get("llmStreamCall") is True and "rawOutput" not in data:
        raise _fail(label, "llmStreamCall requires rawOutput")
    _non_empty_string(data.get("compactionId"), f"{label} compactionId")
    if "sourceCommandId" in data:
        _non_empty_string(data["sourceCommandId"], f"{label} sourceCommandId")
    _content_blocks(data.get("summary"), f"{label} summary", version)
    _shadowed_span(data, event.seq, label)
    _non_empty_string(data.get("provider"), f"{label} provider")
    _non_empty_string(data.get("model"), f"{label} model")
    if "maxTokens" in data:
        _count(data["maxTokens"], f"{label} maxTokens")
    if "usage" in data:
        _usage(data["usage"], f"{label} usage")
    if "rawOutput" in data:
        _content_blocks(data["rawOutput"], f"{label} rawOutput", version)
    if "llmStreamCall" in data:
        _literal(data["llmStreamCall"], (True,), f"{label} llmStreamCall")


def _feedback_record(data: dict, event: _Judged) -> None:
    _non_empty_string(data.get("text"), f"{event.label} text")


def _goal_change_event(data: dict, event: _Judged) -> None:
    _goal_change(data, event.label)


def _hook_invoked(data: dict, event: _Judged) -> None:
    label = event.label
    _count(data.get("turn"), f"{label} turn")
    _non_empty_string(data.get("point"), f"{label} point")
    _literal(data.get("dialect"), ("claude-code", "codex"), f"{label} dialect")
    if "matcher" in data:
        _string(data["matcher"], f"{label} matcher")
    _non_empty_string(data.get("handlerId"), f"{label} handlerId")


def _hook_result(data: dict, event: _Judged) -> None:
    label = event.label
    _count(data.get("turn"), f"{label} turn")
    _non_empty_string(data.get("point"), f"{label} point")
    _non_empty_string(data.get("handlerId"), f"{label} handlerId")
    _non_empty_string(data.get("decision"), f"{label} decision")
    if "exitCode" in data:
        _safe_integer(data["exitCode"], f"{label} exitCode")
    if "stderrSummary" in data:
        _string(data["stderrSummary"], f"{label} stderrSummary")
    if _finite_number(data.get("durationMs"), f"{label} durationMs") < 0:
        raise _fail(label, "durationMs must be non-negative")


def _llm_retry(data: dict, event: _Judged) -> None:
    label = event.label
    _non_empty_string(data.get("retryId"), f"{label} retryId")
    _turn_and_step(data, label)
    _non_empty_string(data.get("provider"), f"{label} provider")
    _literal(data.get("mode"), ("normal", "always"), f"{label} mode")
    _non_empty_string(data.get("policyKey"), f"{label} policyKey")
    retry = _positive(data.get("retry"), f"{label} retry")
    if data["mode"] == "normal":
        if retry > _positive(data.get("maxRetries"), f"{label} maxRetries"):
            raise _fail(label, "retry exceeds maxRetries")
    elif "maxRetries" in data:
        raise _fail(label, "always mode must omit maxRetries")
    delay = _finite_number(data.get("delayMs"), f"{label} delayMs")
    if delay < 0:
        raise _fail(label, "delayMs must be non-negative")
    if delay > 2147483647:
        raise _fail(label, "delayMs exceeds the timer range")
    _failure(data.get("failure"), f"{label} failure")


def _llm_retry_started(data: dict, event: _Judged) -> None:
    label = event.label
    _non_empty_string(data.get("retryId"), f"{label} retryId")
    _turn_and_step(data, label)
    _positive(data.get("retry"), f"{label} retry")


def _model_selection(data: dict, event: _Judged) -> None:
    label = event.label
    _non_empty_string(data.get("provider"), f"{label} provider")
    _non_empty_string(data.get("model"), f"{label} model")
    if "reasoningEffort" in data:
        _non_empty_string(data["reasoningEffort"], f"{label} reasoningEffort")


def _permission_preset(data: dict, event: _Judged) -> None:
    _non_empty_string(data.get("preset"), f"{event.label} preset")


def _plan_mode(data: dict, event: _Judged) -> None:
    _boolean(data.get("active"), f"{event.label} active")


def _request_context(data: dict, event: _Judged) -> None:
    label = event.label
    _non_empty_string(data.get("provider"), f"{label} provider")
    _non_empty_string(data.get("model"), f"{label} model")
    if "contextWindow" in data:
        _positive(data["contextWindow"], f"{label} contextWindow")


def _request_header_event(data: dict, event: _Judged) -> None:
    label = event.label
    _request_header(data.get("header"), f"{label} header", event.fixture)
    _literal(data.get("reason"), ("initial", "resume", "change", "series"), f"{label} reason")
    if "startsSeries" in data:
        _literal(data["startsSeries"], (True,), f"{label} startsSeries")


def _sandbox_mode(data: dict, event: _Judged) -> None:
    label = event.label
    _literal(data.get("mode"), ("read-only", "workspace-write", "danger-full-access"), f"{label} mode")
    if "source" in data:
        _literal(data["source"], ("delegation",), f"{label} source")


def _schedule_change_event(data: dict, event: _Judged) -> None:
    _schedule_change(data, event.label)


def _delivery_accepted(data: dict, event: _Judged) -> None:
    label = event.label
    if "sessionFormatVersion" in data:
        accepted = _count(data["sessionFormatVersion"], f"{label} sessionFormatVersion")
    else:
        accepted = 0
    if accepted != event.version:
        return
    _non_empty_string(data.get("sessionId"), f"{label} sessionId")
    if not event.fixture:
        _earlier_seq(data.get("throughSeq"), event.seq, f"{label} throughSeq")


def _session_title(data: dict, event: _Judged) -> None:
    label = event.label
    _non_empty_string(data.get("title"), f"{label} title")
    _seq_array(data.get("messageSeqs"), event.seq, f"{label} messageSeqs", False)
    _title_source(data.get("source"), f"{label} source")


def _title_llm_request(data: dict, event: _Judged) -> None:
    label = event.label
    _non_empty_string(data.get("titleProvider"), f"{label} titleProvider")
    _seq_array(data.get("messageSeqs"), event.seq, f"{label} messageSeqs", True)
    _route(data.get("route"), f"{label} route")
    _string(data.get("system"), f"{label} system")
    _array(data.get("messages"), f"{label} messages",
           lambda member, _: _message(member, f"{label} message", event.version, None))
    _positive(data.get("maxTokens"), f"{label} maxTokens")


def _step_boundary(data: dict, event: _Judged) -> None:
    _turn_and_step(data, event.label)


def _subagent_descriptor_event(data: dict, event: _Judged) -> None:
    _subagent_descriptor(data, event.label)


def _model_selection_policy(data: dict, event: _Judged) -> None:
    label = event.label
    seen: set = set()

    def route(member, member_label):
        item = _object_with_keys(member, member_label, ("provider", "model"))
        _non_empty_string(item["provider"], f"{member_label} provider")
        _non_empty_string(item["model"], f"{member_label} model")
        key = (item["provider"], item["model"])
        if key in seen:
            raise _fail(f"{label} allowedModels", f"repeats route {key[0]}/{key[1]}")
        seen.add(key)

    if not _array(data.get("allowedModels"), f"{label} allowedModels", route):
        raise _fail(f"{label} allowedModels", "must be non-empty")


def _team_member(data: dict, event: _Judged) -> None:
    label = event.label
    _team_selector(data, label)
    member = _object_with_keys(data.get("member"), f"{label} member",
                               ("id", "name", "description", "provider", "context", "phase"), ("error",))
    _non_empty_string(member["id"], f"{label} member id")
    for key in ("name", "description", "provider"):
        _string(member[key], f"{label} member {key}")
    _literal(member["context"], ("fresh", "fork"), f"{label} member context")
    _literal(member["phase"], ("provisioning", "active", "failed"), f"{label} member phase")
    if "error" in member:
        _string(member["error"], f"{label} member error")


def _team_message_delivered(data: dict, event: _Judged) -> None:
    label = event.label
    _team_selector(data, label)
    _non_empty_string(data.get("messageId"), f"{label} messageId")
    _non_empty_string(data.get("targetId"), f"{label} targetId")


def _team_message_queued(data: dict, event: _Judged) -> None:
    label = event.label
    _team_selector(data, label)
    message = _object_with_keys(data.get("message"), f"{label} message",
                                ("id", "senderId", "senderName", "targetId", "delivery", "content"))
    for key in ("id", "senderId", "targetId"):
        _non_empty_string(message[key], f"{label} message {key}")
    _string(message["senderName"], f"{label} message senderName")
    _literal(message["delivery"], ("quiet", "wakeup"), f"{label} message delivery")
    _content_blocks(message["content"], f"{label} message content", event.version)


def _team_task(data: dict, event: _Judged) -> None:
    label = event.label
    _team_selector(data, label)
    task = _object_with_keys(data.get("task"), f"{label} task",
                             ("id", "revision", "subject", "description", "status", "blockedBy", "writeScopes"),
                             ("ownerId",))
    _non_empty_string(task["id"], f"{label} task id")
    _positive(task["revision"], f"{label} task revision")
    _string(task["subject"], f"{label} task subject")
    _string(task["description"], f"{label} task description")
    _literal(task["status"], ("pending", "in_progress", "completed", "deleted"), f"{label} task status")
    if "ownerId" in task:
        _non_empty_string(task["ownerId"], f"{label} task ownerId")
    _array(task["blockedBy"], f"{label} task blockedBy", _non_empty_string)
    _array(task["writeScopes"], f"{label} task writeScopes", _string)


def _todo_write(data: dict, event: _Judged) -> None:
    def todo(member, member_label):
        item = _object_with_keys(member, member_label, ("content", "status"))
        _string(item["content"], f"{member_label} content")
        _literal(item["status"], ("pending", "in_progress", "completed"), f"{member_label} status")

    _array(data.get("todos"), f"{event.label} todos", todo)


def _workflow_agent(data: dict, event: _Judged) -> None:
    label = event.label
    _non_empty_string(data.get("runId"), f"{label} runId")
    _positive(data.get("seq"), f"{label} seq")
    if event.kind == "tool-workflow/agent-end":
        _literal(data.get("outcome"), ("completed", "failed", "cancelled"), f"{label} outcome")
    else:
        _string(data.get("label"), f"{label} label")
        if "phase" in data:
            _string(data["phase"], f"{label} phase")
        _non_empty_string(data.get("childId"), f"{label} childId")


def _workflow_run_end(data: dict, event: _Judged) -> None:
    label = event.label
    _non_empty_string(data.get("runId"), f"{label} runId")
    _literal(data.get("stopReason"), ("completed", "cancelled", "error"), f"{label} stopReason")


def _workflow_run_start(data: dict, event: _Judged) -> None:
    label = event.label
    _non_empty_string(data.get("runId"), f"{label} runId")
    _non_empty_string(data.get("name"), f"{label} name")


def _tool_call(data: dict, event: _Judged) -> None:
    label = event.label
    _turn_and_step(data, label)
    _non_empty_string(data.get("callId"), f"{label} callId")
    _non_empty_string(data.get("name"), f"{label} name")
    _string(data.get("arguments"), f"{label} arguments")


def _code_dispatch(data: dict, event: _Judged) -> None:
    label = event.label
    for key in ("rootCallId", "parentCallId", "subCallId", "name"):
        _non_empty_string(data.get(key), f"{label} {key}")
    if event.kind == "tool/code-dispatch":
        _boolean(data.get("isError"), f"{label} isError")
        _content_blocks(data.get("content"), f"{label} content", event.version)


def _tool_result(data: dict, event: _Judged) -> None:
    label = event.label
    _turn_and_step(data, label)
    _message(data.get("message"), f"{label} message", event.version, "tool")
    if "error" in data:
        error = _object_with_keys(data["error"], f"{label} error", ("name", "code"))
        _non_empty_string(error["name"], f"{label} error name")
        _non_empty_string(error["code"], f"{label} error code")


def _turn_end(data: dict, event: _Judged) -> None:
    label = event.label
    _count(data.get("turn"), f"{label} turn")
    _turn_end_reason(data.get("reason"), f"{label} reason", event.version)


def _turn_start(data: dict, event: _Judged) -> None:
    _count(data.get("turn"), f"{event.label} turn")


def _user_message(data: dict, event: _Judged) -> None:
    _message(data, event.label, event.version, "user")


def _web_search_request(data: dict, event: _Judged) -> None:
    label = event.label
    _non_empty_string(data.get("endpoint"), f"{label} endpoint")
    _non_empty_string(data.get("apiVersion"), f"{label} apiVersion")
    _web_search_body(data.get("body"), f"{label} body")


_SEMANTICS: dict[str, Callable[[dict, _Judged], None]] = {
    "agent-preset/selected": _agent_preset_selected,
    "agent/inbox/spliced": _agent_inbox_spliced,
    "approval/asked": _approval_asked,
    "approval/decided": _approval_decided,
    "approval/policy": _approval_policy,
    "assistant/chunk": _assistant_chunk,
    "assistant/message": _assistant_message,
    "command/done": _command_done,
    "command/run": _command_run,
    "compaction/start": _compaction_start_or_end,
    "compaction/end": _compaction_start_or_end,
    "compaction/prune": _compaction_prune,
    "compaction/summary": _compaction_summary,
    "feedback/record": _feedback_record,
    "goal/change": _goal_change_event,
    "hook/invoked": _hook_invoked,
    "hook/result": _hook_result,
    "llm/retry": _llm_retry,
    "llm/retry-started": _llm_retry_started,
    "model/selection": _model_selection,
    "permission/preset": _permission_preset,
    "plan/mode": _plan_mode,
    "request/context": _request_context,
    "request/header": _request_header_event,
    "sandbox/mode": _sandbox_mode,
    "schedule/change": _schedule_change_event,
    "session-log-deepseek/delivery-accepted": _delivery_accepted,
    # session/end-seed: nothing beyond its members
    "session/title": _session_title,
    "session/title-llm-request": _title_llm_request,
    "step/end": _step_boundary,
    "step/start": _step_boundary,
    "subagent/descriptor": _subagent_descriptor_event,
    "subagent/model-selection-policy": _model_selection_policy,
    "team/member": _team_member,
    "team/message/delivered": _team_message_delivered,
    "team/message/queued": _team_message_queued,
    "team/task": _team_task,
    "todo/write": _todo_write,
    "tool-workflow/agent-end": _workflow_agent,
    "tool-workflow/agent-start": _workflow_agent,
    "tool-workflow/run-end": _workflow_run_end,
    "tool-workflow/run-start": _workflow_run_start,
    "tool/call": _tool_call,
    "tool/code-dispatch": _code_dispatch,
    "tool/code-dispatch-start": _code_dispatch,
    "tool/result": _tool_result,
    "turn/end": _turn_end,
    "turn/start": _turn_start,
    "user/message": _user_message,
    "web/deepseek-search-llm-request": _web_search_request,
}
"""The semantic checker of each event type; a type not listed has none."""


# --------------------------------------------------------------------------- entry points


def check_v0_event(kind: str, seq: int, data: Any, fixture: bool = False, generation: int = 0) -> None:
    """[v01] ``assertReleasedEventPayload`` for a v0/v1 event after legacy normalization (chunks excluded)."""
    disposition = V0_DISPOSITIONS.get(kind)
    if disposition is None or kind == "assistant/chunk":
        return
    record = _object(data, f"{kind} {seq} data")
    if kind == "subagent/descriptor" and record.get("version") != 3:
        version = _count(record.get("version"), f"{kind} {seq} version")
        if generation == 0:
            raise DescriptorVersion(f"{kind} {seq} uses unsupported descriptor version {version}; the released v0→v1 "
                                    "migration accepts only 3")
        return  # a v1 payload with another descriptor version passes unread
    required, optional, opaque = disposition
    _exact_members(record, required, optional, f"{kind} {seq} data")
    for key in opaque:
        if key in record and not is_lossless_json(record[key]):
            raise _fail(f"{kind} {seq}", f"opaque {key} is not lossless JSON")
    semantics(kind, seq, record, 0, fixture)


_V3_SOURCE_KINDS = frozenset({
    "user", "plugin", "model", "tool", "agent-instructions", "session-reference", "team-message", "goal",
    "skill-invocation", "skill-catalog", "coordinator", "subagent-report", "subagent-settled", "webhook", "agent-message",
})
_V3_CONTENT_KINDS = frozenset({"text", "reasoning", "image", "file", "tool-call", "tool-result"})


def _v3_source(message: Any) -> None:
    source = _object(_object(message, "message").get("source"), "message source")
    kind = source.get("kind")
    if not isinstance(kind, str) or kind not in _V3_SOURCE_KINDS:
        raise PayloadError(f"unclassified message source kind {kind!r}")
    if kind == "agent-message":
        _exact_members(source, ("kind", "form", "senderSessionId"), (), "agent-message source")
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
    block = _object(value, label)
    _content_kind(block.get("type"), label)
    if block["type"] == "tool-result":
        if not isinstance(block.get("content"), list):
            raise PayloadError(f"{label}.content: tool-result content must be an array")
        _v3_content(block["content"], f"{label}.content")
    if block["type"] == "file":
        _exact_members(block, ("type", "attachment"), (), f'{label} kind "file"')
        attachment = _object_with_keys(block["attachment"], f'{label} kind "file" attachment',
                                       ("attachmentId", "name", "bytes"))
        if not non_empty_str(attachment["attachmentId"]) or not isinstance(attachment["name"], str):
            raise PayloadError(f'{label} kind "file": file attachment requires attachmentId and name')
        _count(attachment["bytes"], f'{label} kind "file" attachment bytes')
        return
    probe = dict(block, content=[]) if block["type"] == "tool-result" else block
    _content_block(probe, label, 2)


def check_v2_migration(kind: str, seq: int, data: Any, stream_ok: bool = True, fixture: bool = False) -> None:
    """What 0.1.5's v2→v3 migration admits of one v2 event ([v23] ``assertEvent``, payload part)."""
    disposition = V2_DISPOSITIONS.get(kind)
    if kind in ("feedback/message-put", "feedback/message-delete"):
        record = _object(data, f"{kind} data")
        if kind == "feedback/message-delete":
            _exact_members(record, ("sessionId", "messageId"), (), kind)
            _string(record["sessionId"], "feedback sessionId")
            _string(record["messageId"], "feedback messageId")
            return
        _exact_members(record, ("sessionId", "item"), (), kind)
        _string(record["sessionId"], "feedback sessionId")
        item = _object_with_keys(record["item"], "feedback item", ("messageId", "rating", "version", "createdAt", "updatedAt"),
                                 ("note",))
        _string(item["messageId"], "feedback messageId")
        _string(item["version"], "feedback version")
        _literal(item["rating"], ("positive", "negative"), "feedback rating")
        if "note" in item:
            _string(item["note"], "feedback note")
        _count(item["createdAt"], "feedback createdAt")
        _count(item["updatedAt"], "feedback updatedAt")
        return
    if disposition is None:
        raise PayloadError(f"the v2→v3 migration cannot safely transform unclassified event {kind}")
    record = _object(data, f"{kind} data")
    required, optional, _ = disposition
    _exact_members(record, required, optional, f"{kind} data")
    label = f"{kind} at seq {seq}"
    if kind in ("user/message", "tool/code-dispatch"):
        _v3_content(record.get("content"), f"{label}.content")
    elif kind in ("assistant/message", "tool/result", "team/message/queued"):
        _v3_content(_object(record.get("message"), f"{label}.message").get("content"), f"{label}.message.content")
    elif kind in ("agent/inbox/spliced", "session/title-llm-request"):
        field = "inserted" if kind == "agent/inbox/spliced" else "messages"
        members = record.get(field)
        if not isinstance(members, list):
            raise PayloadError(f"{label}.{field}: content must be an array")
        for index, value in enumerate(members):
            _v3_content(_object(value, f"{label}.{field}[{index}]").get("content"), f"{label}.{field}[{index}].content")
    elif kind == "compaction/summary":
        _v3_content(record.get("summary"), f"{label}.summary")
        if "rawOutput" in record:
            _v3_content(record["rawOutput"], f"{label}.rawOutput")
    if kind in ("assistant/message", "assistant/attempt") and stream_ok:
        stream = record.get("stream")
        if not isinstance(stream, list):
            raise PayloadError(f"{label}.stream: content must be an array")
        for index, value in enumerate(stream):
            entry = _object(value, f"{label}.stream[{index}]")
            if entry.get("type") != "chunk":
                continue
            chunk = _object(entry.get("chunk"), f"{label}.stream[{index}].chunk")
            if chunk.get("type") == "block-end":
                _v3_block(chunk.get("block"), f"{label}.stream[{index}].chunk.block")
            if chunk.get("type") == "block-start":
                _content_kind(chunk.get("blockType"), f"{label}.stream[{index}].chunk.blockType")
    if kind != "assistant/attempt":
        semantics(kind, seq, record, 2, fixture)
    if kind in ("assistant/message", "assistant/attempt"):
        for coordinate in ("turn", "step"):
            if _count(record.get(coordinate), coordinate) == 0:
                raise _fail(label, f"{coordinate} must be positive")
    if kind == "session/end-seed" and "inherited" in record and record["inherited"] is not True:
        raise _fail(label, "inherited must be true")
    if kind == "user/message":
        _v3_source(record)
    if kind in ("assistant/message", "tool/result"):
        _v3_source(record.get("message"))
    if kind == "tool/result" and isinstance(record.get("error"), dict) and record["error"].get("code") == "TOOL_NOT_STARTED":
        message = _object(record.get("message"), "tool result message")
        call_id = _object(message.get("source"), "tool result source").get("callId")
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
    record = _object_with_keys(data, "system/message data", ("turn", "step", "message"))
    for coordinate in ("turn", "step"):
        if _count(record[coordinate], f"system/message {coordinate}") == 0:
            raise PayloadError(f"system/message {coordinate} must be positive")
    message = _object_with_keys(record["message"], "system message", ("id", "role", "source", "content"))
    if not non_empty_str(message["id"]) or message["role"] != "system":
        raise PayloadError("system message requires an id and system role")
    source = _object(message["source"], "system source")
    if version >= 4:
        _object_with_keys(source, "system source", ("kind",))
        if source["kind"] != "system-prompt":
            raise PayloadError('v4 system message source must be exactly {"kind":"system-prompt"}')
    elif source.get("kind") != "plugin" or not non_empty_str(source.get("plugin")):
        raise PayloadError("system message requires plugin source")
    _content_blocks(message["content"], "system message content", version)


def check_v3_event(kind: str, seq: int, data: Any) -> None:
    """v3 admission of one event's payload ([v23] ``assertV3StructuralRow``, ``assertCanonicalPayload``)."""
    if kind == "request/header":
        header = _object(_object(data, "request/header data").get("header"), "request header")
        if "system" in header:
            raise PayloadError("format v3 request/header rejects retired header.system")
        if (isinstance(header.get("tools"), list) and not header["tools"]) or (
                isinstance(header.get("adapterDefaults"), dict) and not header["adapterDefaults"]):
            raise PayloadError("request/header empty optional header fields (tools [], adapterDefaults {}) must be omitted")
    elif kind == "system/message":
        _system_message(data, 3)
    elif kind == "tool/result":
        record = _object(data, "tool/result data")
        if "error" in record:
            content = _object(record.get("message"), "tool/result message").get("content")
            if not (isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict)
                    and content[0].get("type") == "tool-result" and content[0].get("isError") is True):
                raise PayloadError("tool/result carries error metadata for a non-error tool result")


_MESSAGE_SLOTS = ("user/message", "system/message", "developer/message", "assistant/message", "tool/result")


def check_v4_event(kind: str, seq: int, data: Any) -> None:
    """v4 admission (FORMAT §2.10: [v34] retired-syntax.ts, tool-role.ts, message-sources.ts, developer.ts)."""
    record = _object(data, f"{kind} data")
    if kind == "request/header":
        header = _object(record.get("header"), "request header")
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
        message = _object(message, f"{kind} message")
        source = _object(message.get("source"), f"{kind} message source")
        if not non_empty_str(source.get("kind")) or source["kind"] == "plugin":
            raise PayloadError(f"{kind} message source kind must be non-empty and not \"plugin\" in v4")
        _no_tool_result_block(message.get("content"), f"{kind} message content")
    if kind == "tool/result":
        message = _object(record.get("message"), "tool/result message")
        if message.get("role") != "tool":
            raise PayloadError('v4 tool/result message role must be "tool"')
        source = _object(message.get("source"), "tool/result source")
        if source.get("kind") != "tool" or not non_empty_str(message.get("toolCallId")) or message["toolCallId"] != source.get("callId"):
            raise PayloadError("v4 tool/result toolCallId must be non-empty and equal message.source.callId")
        if "isError" in message and not isinstance(message["isError"], bool):
            raise PayloadError("v4 tool/result isError must be a boolean")
        if not isinstance(message.get("content"), list):
            raise PayloadError("v4 tool/result content must be an array")
        if "error" in record and message.get("isError") is not True:
            raise PayloadError("v4 tool/result with data.error requires message.isError true")
    elif kind == "developer/message":
        message = _object(record.get("message"), "developer/message message")
        if message.get("role") != "developer":
            raise PayloadError('developer/message role must be "developer"')
        for coordinate in ("turn", "step"):
            if not positive(record.get(coordinate)):
                raise PayloadError(f"developer/message {coordinate} must be positive")
    elif kind == "assistant/message":
        source = _object(_object(record.get("message"), "message").get("source"), "message source")
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
