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


def _d(required: str, optional: str = "", opaque: str = "") -> tuple[frozenset, frozenset, frozenset]:
    return frozenset(required.split()), frozenset(optional.split()), frozenset(opaque.split())


V0_DISPOSITIONS: dict[str, tuple[frozenset, frozenset, frozenset]] = {
    "agent-preset/selected": _d("agentPreset"),
    "agent/inbox/spliced": _d("target start inserted", "removedCount outcome"),
    "approval/asked": _d("id toolName", "callId reason"),
    "approval/decided": _d("id outcome"),
    "approval/policy": _d("policy", "source"),
    "assistant/chunk": _d("turn step chunk"),
    "assistant/message": _d("turn step message", "usage interrupted"),
    "command/done": _d("commandId kind", "text sourceEventSeq"),
    "command/run": _d("commandId name source", "args"),
    "compaction/end": _d("compactionId turn", "sourceCommandId error"),
    "compaction/prune": _d("shadowedRange shadowedSeqs shadowedTokenCount"),
    "compaction/start": _d("compactionId turn", "sourceCommandId"),
    "compaction/summary": _d(
        "compactionId summary shadowedRange shadowedSeqs shadowedTokenCount provider model",
        "sourceCommandId maxTokens usage rawOutput llmStreamCall",
    ),
    "feedback/record": _d("text"),
    "goal/change": _d("kind version operation", "goal roundsStarted createdAt updatedAt cleared clearedAt"),
    "hook/invoked": _d("turn point dialect handlerId", "matcher"),
    "hook/result": _d("turn point handlerId decision durationMs", "exitCode stderrSummary"),
    "llm/retry": _d("retryId turn step provider mode policyKey retry delayMs failure", "maxRetries"),
    "llm/retry-started": _d("retryId turn step retry"),
    "model/selection": _d("provider model", "reasoningEffort"),
    "permission/preset": _d("preset"),
    "plan/mode": _d("active"),
    "request/context": _d("provider model", "contextWindow"),
    "request/header": _d("header reason", "startsSeries"),
    "sandbox/mode": _d("mode", "source"),
    "schedule/change": _d("version operation", "schedule id acceptedAt"),
    "session-log-deepseek/delivery-accepted": _d("sessionId throughSeq"),
    "session/end-seed": _d(""),
    "session/title": _d("title messageSeqs source"),
    "session/title-llm-request": _d("titleProvider messageSeqs route system messages maxTokens"),
    "step/end": _d("turn step"),
    "step/start": _d("turn step"),
    "subagent/descriptor": _d("mode version provider", "label agentProvider agentModel agentReasoningEffort persona toolFilter"),
    "subagent/model-selection-policy": _d("allowedModels"),
    "team/member": _d("version teamId member"),
    "team/message/delivered": _d("version teamId messageId targetId"),
    "team/message/queued": _d("version teamId message"),
    "team/task": _d("version teamId task"),
    "todo/write": _d("todos"),
    "tool-workflow/agent-end": _d("runId seq outcome"),
    "tool-workflow/agent-start": _d("runId seq label childId", "phase"),
    "tool-workflow/run-end": _d("runId stopReason"),
    "tool-workflow/run-start": _d("runId name"),
    "tool/call": _d("turn step callId name arguments"),
    "tool/code-dispatch": _d("rootCallId parentCallId subCallId name arguments isError content", "", "arguments"),
    "tool/code-dispatch-start": _d("rootCallId parentCallId subCallId name arguments", "", "arguments"),
    "tool/result": _d("turn step message", "error meta", "meta"),
    "turn/end": _d("turn reason"),
    "turn/start": _d("turn"),
    "user/message": _d("role id content source"),
    "web/deepseek-search-llm-request": _d("endpoint apiVersion body"),
}

V2_DISPOSITIONS = {
    **{k: v for k, v in V0_DISPOSITIONS.items()
       if k not in ("assistant/chunk", "assistant/message", "session-log-deepseek/delivery-accepted", "session/end-seed")},
    "assistant/attempt": _d("turn step stream"),
    "assistant/message": _d("turn step message stream", "usage interrupted"),
    "session-log-deepseek/delivery-accepted": _d("sessionId throughSeq", "sessionFormatVersion"),
    "session/end-seed": _d("", "inherited"),
}

# --------------------------------------------------------------------------- primitives


def _rec(value: Any, label: str) -> dict:
    if not isinstance(value, dict):
        raise _fail(label, "must be a JSON object")
    return value


def _keys(record: dict, required, optional=(), label: str = "") -> None:
    allowed = set(required) | set(optional)
    for key in record:
        if key not in allowed:
            raise _fail(label, f'has unexpected member "{key}"')
    for key in required:
        if key not in record:
            raise _fail(label, f'lacks required member "{key}"')


def _exact(value: Any, label: str, required, optional=()) -> dict:
    record = _rec(value, label)
    _keys(record, required, optional, label)
    return record


def _str(value: Any, label: str) -> None:
    if not isinstance(value, str):
        raise _fail(label, "must be a string")


def _nes(value: Any, label: str) -> None:
    if not non_empty_str(value):
        raise _fail(label, "must be a non-empty string")


def _bool(value: Any, label: str) -> None:
    if not isinstance(value, bool):
        raise _fail(label, "must be a boolean")


def _count(value: Any, label: str) -> int:
    if not count(value):
        raise _fail(label, "must be a non-negative safe integer")
    return int(value)


def _safe(value: Any, label: str) -> int:
    if not safe_integer(value):
        raise _fail(label, "must be a safe integer")
    return int(value)


def _positive(value: Any, label: str) -> int:
    number = _count(value, label)
    if number == 0:
        raise _fail(label, "must be positive")
    return number


def _finite(value: Any, label: str) -> float:
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


def _coords(data: dict, label: str) -> None:
    _count(data.get("turn"), f"{label} turn")
    _count(data.get("step"), f"{label} step")


def _earlier(value: Any, seq: int, label: str) -> int:
    number = _count(value, label)
    if number >= seq:
        raise _fail(label, "must identify an earlier event")
    return number


def _seq_array(value: Any, seq: int, label: str, non_empty: bool) -> list:
    seen: set[int] = set()

    def each(member, member_label):
        number = _earlier(member, seq, member_label)
        if number in seen:
            raise _fail(label, f"repeats seq {number}")
        seen.add(number)

    values = _array(value, label, each)
    if non_empty and not values:
        raise _fail(label, "must be non-empty")
    return values


# --------------------------------------------------------------------------- shared shapes


def _failure(value: Any, label: str) -> None:
    failure = _exact(value, label, ("message", "code"), ("status", "providerRetryAfterMs", "requestId"))
    _nes(failure["message"], f"{label} message")
    _nes(failure["code"], f"{label} code")
    if "status" in failure:
        status = _safe(failure["status"], f"{label} status")
        if status < 100 or status > 599:
            raise _fail(label, "status must be 100 through 599")
    if "providerRetryAfterMs" in failure and _finite(failure["providerRetryAfterMs"], f"{label} providerRetryAfterMs") <= 0:
        raise _fail(label, "providerRetryAfterMs must be positive")
    if "requestId" in failure:
        _nes(failure["requestId"], f"{label} requestId")


def _usage(value: Any, label: str) -> None:
    usage = _exact(value, label, ("inputTokens", "outputTokens"),
                   ("totalTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens"))
    for key, member in usage.items():
        _count(member, f"{label} {key}")


def _blocks(value: Any, label: str, version: int) -> None:
    _array(value, label, lambda member, member_label: _block(member, member_label, version))


def _block(value: Any, label: str, version: int) -> None:
    block = _rec(value, label)
    kind = block.get("type")
    if kind in ("text", "reasoning"):
        _keys(block, ("type", "text"), (), label)
        _str(block["text"], f"{label} text")
    elif kind == "image":
        _keys(block, ("type", "attachment"), ("offloaded",) if version >= 4 else (), label)
        _image(block["attachment"], f"{label} attachment")
    elif kind == "tool-call":
        _keys(block, ("type", "id", "name", "arguments"), (), label)
        _nes(block["id"], f"{label} id")
        _nes(block["name"], f"{label} name")
        _str(block["arguments"], f"{label} arguments")
    elif kind == "tool-result":
        _keys(block, ("type", "toolCallId", "content"), ("isError",), label)
        _nes(block["toolCallId"], f"{label} toolCallId")
        _blocks(block["content"], f"{label} content", version)
        if "isError" in block:
            _bool(block["isError"], f"{label} isError")
    else:
        _nes(kind, f"{label} type")


def _image(value: Any, label: str) -> None:
    ref = _exact(value, label, ("attachmentId", "mediaType", "bytes", "width", "height"), ("name", "originalDimensions"))
    _nes(ref["attachmentId"], f"{label} attachmentId")
    _literal(ref["mediaType"], ("image/png", "image/jpeg", "image/webp", "image/gif"), f"{label} mediaType")
    _count(ref["bytes"], f"{label} bytes")
    _positive(ref["width"], f"{label} width")
    _positive(ref["height"], f"{label} height")
    if "name" in ref:
        _str(ref["name"], f"{label} name")
    if "originalDimensions" in ref:
        dims = _exact(ref["originalDimensions"], f"{label} originalDimensions", ("width", "height"))
        _positive(dims["width"], f"{label} original width")
        _positive(dims["height"], f"{label} original height")


def _message(value: Any, label: str, version: int, expected: str | None) -> None:
    message = _exact(value, label, ("id", "role", "content", "source"))
    _nes(message["id"], f"{label} id")
    role = {"assistant": "assistant", "user": "user", "tool": "user"}.get(expected or "")
    if role is None:
        _literal(message["role"], ("system", "user", "assistant"), f"{label} role")
    else:
        _literal(message["role"], (role,), f"{label} role")
    _blocks(message["content"], f"{label} content", version)
    source = _rec(message["source"], f"{label} source")
    if version < 2 and expected == "user" and source.get("kind") == "goal" and "change" in source:
        _legacy_goal_source(message, source, label)
    else:
        _source(source, f"{label} source", version, expected)
    if expected == "tool":
        content = message["content"]
        block = content[0] if isinstance(content, list) and len(content) == 1 else None
        if not isinstance(block, dict) or block.get("type") != "tool-result" or block.get("toolCallId") != source.get("callId"):
            raise _fail(label, "must contain exactly one tool-result block")


def _legacy_goal_source(message: dict, source: dict, label: str) -> None:
    _keys(source, ("kind", "goalId", "revision", "round", "change"), (), f"{label} source")
    _nes(source["goalId"], f"{label} source goalId")
    _positive(source["revision"], f"{label} source revision")
    if source["round"] != 0 or isinstance(source["round"], bool):
        raise _fail(label, "legacy goal source round must be 0")
    change = _rec(source["change"], f"{label} source change")
    _goal_change(change, f"{label} source change")
    ref = _rec(change["cleared"] if change.get("operation") == "clear" else change.get("goal"), f"{label} source change ref")
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


def _source(value: Any, label: str, version: int, expected: str | None) -> None:
    source = _rec(value, label)
    kind = source.get("kind")
    if expected == "assistant" and kind != "model":
        raise _fail(label, "must be model source")
    if expected == "tool" and kind != "tool":
        raise _fail(label, "must be tool source")
    if kind == "user":
        _keys(source, ("kind",), ("rpcId", "clientTimeZone"), label)
        for key in ("rpcId", "clientTimeZone"):
            if key in source:
                _nes(source[key], f"{label} {key}")
    elif kind == "plugin":
        _plugin_source(source, label)
    elif kind == "model":
        _keys(source, ("kind", "provider", "model"), ("replayState",), label)
        _nes(source["provider"], f"{label} provider")
        _nes(source["model"], f"{label} model")
    elif kind == "tool":
        _keys(source, ("kind", "callId"), (), label)
        _nes(source["callId"], f"{label} callId")
    elif kind == "agent-instructions":
        _keys(source, ("kind", "form", "changes"), ("baseline", "baselineIdentity"), label)
        _literal(source["form"], ("instructions",), f"{label} form")
        if "baseline" in source:
            _literal(source["baseline"], (True,), f"{label} baseline")
        if "baselineIdentity" in source:
            _nes(source["baselineIdentity"], f"{label} baselineIdentity")

        def change(member, member_label):
            item = _exact(member, member_label, ("action", "scope", "path"), ("digest",))
            _literal(item["action"], ("set", "replace", "remove"), f"{member_label} action")
            _str(item["scope"], f"{member_label} scope")
            _str(item["path"], f"{member_label} path")
            if "digest" in item:
                _str(item["digest"], f"{member_label} digest")

        _array(source["changes"], f"{label} changes", change)
    elif kind == "session-reference":
        _session_reference(source, label, version)
    elif kind == "skill-catalog":
        _keys(source, ("kind", "form", "entries"), ("update",), label)
        _literal(source["form"], ("catalog",), f"{label} form")
        if "update" in source:
            _literal(source["update"], (True,), f"{label} update")

        def entry(member, member_label):
            item = _exact(member, member_label, ("name", "description"))
            _nes(item["name"], f"{member_label} name")
            _str(item["description"], f"{member_label} description")

        _array(source["entries"], f"{label} entries", entry)
    elif isinstance(kind, str) and kind in _SOURCE_SHAPES:
        required, optional = _SOURCE_SHAPES[kind]
        _keys(source, required, optional, label)
        if kind == "team-message":
            for key in ("teamId", "messageId", "senderId"):
                _nes(source[key], f"{label} {key}")
            _str(source["senderName"], f"{label} senderName")
        elif kind == "goal":
            _nes(source["goalId"], f"{label} goalId")
            _positive(source["revision"], f"{label} revision")
            _positive(source["round"], f"{label} round")
        elif kind == "skill-invocation":
            _nes(source["name"], f"{label} name")
            _literal(source["form"], ("instructions",), f"{label} form")
        elif kind in ("coordinator", "subagent-report"):
            _literal(source["form"], ("relay",), f"{label} form")
            _nes(source["senderSessionId"], f"{label} senderSessionId")
        elif kind == "subagent-settled":
            _literal(source["form"], ("notice",), f"{label} form")
            _str(source["summary"], f"{label} summary")
            _nes(source["senderSessionId"], f"{label} senderSessionId")
        elif kind == "webhook":
            for key in ("provider", "source", "deliveryId", "ruleId"):
                _nes(source[key], f"{label} {key}")
            _literal(source["form"], ("notice",), f"{label} form")
            _str(source["summary"], f"{label} summary")
    else:
        _nes(kind, f"{label} kind")


def _plugin_source(source: dict, label: str) -> None:
    optional = ["form", "sections", "summary"]
    if source.get("plugin") == "compact":
        optional += ["compactionId", "sourceCommandId"]
    _keys(source, ("kind", "plugin"), optional, label)
    _nes(source["plugin"], f"{label} plugin")
    if source["plugin"] == "compact":
        _nes(source.get("compactionId"), f"{label} compactionId")
        if "sourceCommandId" in source:
            _nes(source["sourceCommandId"], f"{label} sourceCommandId")
    form = source.get("form")
    if "form" not in source:
        return
    _literal(form, ("instructions", "catalog", "snapshot", "notice", "relay", "recall"), f"{label} form")
    if form == "snapshot":
        def section(member, member_label):
            item = _exact(member, member_label, ("name", "text"))
            _nes(item["name"], f"{member_label} name")
            _str(item["text"], f"{member_label} text")

        _array(source.get("sections"), f"{label} sections", section)
    elif "sections" in source:
        raise _fail(label, "sections require snapshot form")
    if form == "notice":
        _str(source.get("summary"), f"{label} summary")
    elif "summary" in source:
        raise _fail(label, "summary requires notice form")


def _session_reference(source: dict, label: str, version: int) -> None:
    _keys(source, ("kind", "form", "version", "references"), (), label)
    _literal(source["form"], ("recall",), f"{label} form")
    _literal(source["version"], (1,), f"{label} version")
    position = 0
    seen: set = set()
    references = _array(source["references"], f"{label} references")
    for index, member in enumerate(references):
        member_label = f"{label} references[{index}]"
        ref = _exact(member, member_label,
                     ("sessionId", "label", "capturedThroughSeq", "compacted", "originalMessages", "retainedMessages",
                      "omittedMessages", "omittedBytes", "truncated", "inputIndex"),
                     ("capturedFormatVersion",) if version >= 1 else ())
        _nes(ref["sessionId"], f"{member_label} sessionId")
        _str(ref["label"], f"{member_label} label")
        if ref["capturedThroughSeq"] is not None:
            _count(ref["capturedThroughSeq"], f"{member_label} capturedThroughSeq")
        if "capturedFormatVersion" in ref:
            captured = _count(ref["capturedFormatVersion"], f"{member_label} capturedFormatVersion")
            if captured < 1 or captured > version:
                raise _fail(member_label, f"capturedFormatVersion must be between 1 and {version}")
        _bool(ref["compacted"], f"{member_label} compacted")
        original = _count(ref["originalMessages"], f"{member_label} originalMessages")
        retained = _count(ref["retainedMessages"], f"{member_label} retainedMessages")
        omitted = _count(ref["omittedMessages"], f"{member_label} omittedMessages")
        omitted_bytes = _count(ref["omittedBytes"], f"{member_label} omittedBytes")
        input_index = _count(ref["inputIndex"], f"{member_label} inputIndex")
        _bool(ref["truncated"], f"{member_label} truncated")
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
    chunk = _rec(value, label)
    kind = chunk.get("type")
    if kind == "block-start":
        _keys(chunk, ("type", "index", "blockType"), (), label)
        _count(chunk["index"], f"{label} index")
        _nes(chunk["blockType"], f"{label} blockType")
    elif kind in ("text-delta", "reasoning-delta"):
        _keys(chunk, ("type", "index", "text"), (), label)
        _count(chunk["index"], f"{label} index")
        _str(chunk["text"], f"{label} text")
    elif kind == "tool-call-delta":
        _keys(chunk, ("type", "index", "id", "argumentsDelta"), ("name",), label)
        _count(chunk["index"], f"{label} index")
        _nes(chunk["id"], f"{label} id")
        if "name" in chunk:
            _str(chunk["name"], f"{label} name")
        _str(chunk["argumentsDelta"], f"{label} argumentsDelta")
    elif kind == "block-end":
        _keys(chunk, ("type", "index", "block"), (), label)
        _count(chunk["index"], f"{label} index")
        _block(chunk["block"], f"{label} block", 1)
    elif kind == "usage":
        _keys(chunk, ("type", "usage"), (), label)
        _usage(chunk["usage"], f"{label} usage")
    elif kind == "finish":
        _keys(chunk, ("type", "reason"), ("replayState",), label)
        _finish_reason(chunk["reason"], f"{label} reason")
        if "replayState" in chunk:
            replay = _exact(chunk["replayState"], f"{label} replayState", ("response",), ("blocks",))
            if "blocks" in replay and not isinstance(replay["blocks"], list):
                raise _fail(f"{label} replayState", "blocks must be an array")
    else:
        raise _fail(label, f"has unknown stream chunk type {kind!r}")


def _finish_reason(value: Any, label: str) -> None:
    reason = _rec(value, label)
    kind = reason.get("kind")
    if kind in ("aborted", "error"):
        _keys(reason, ("kind", "failure"), (), label)
        _failure(reason["failure"], f"{label} failure")
        return
    if kind in ("stop", "tool-calls", "max-tokens"):
        _keys(reason, ("kind",), (), label)
    _nes(kind, f"{label} kind")


def _turn_end_reason(value: Any, label: str, version: int) -> None:
    reason = _rec(value, label)
    kind = reason.get("kind")
    simple = ("completed", "blocked", "max-tokens", "interrupted") + (("forked",) if version >= 4 else ())
    if kind in simple:
        _keys(reason, ("kind",), (), label)
    elif kind == "aborted":
        _keys(reason, ("kind", "reason"), (), label)
        cause = _rec(reason["reason"], f"{label} abort cause")
        if cause.get("kind") == "hook":
            _keys(cause, ("kind", "reason"), (), f"{label} abort cause")
            _str(cause["reason"], f"{label} abort reason")
        else:
            _keys(cause, ("kind",), (), f"{label} abort cause")
            _literal(cause["kind"], ("user", "parent", "disposed", "legacy"), f"{label} abort kind")
    elif kind == "error":
        _keys(reason, ("kind", "error"), (), label)
        _failure(reason["error"], f"{label} error")
    else:
        _nes(kind, f"{label} kind")


def _request_header(value: Any, label: str, fixture: bool) -> None:
    header = _exact(value, label, ("config",), ("adapterDefaults", "system", "tools"))
    config = _exact(header["config"], f"{label} config", ("provider", "model"),
                    ("reasoningEffort", "temperature", "maxTokens", "stop"))
    _nes(config["provider"], f"{label} provider")
    _nes(config["model"], f"{label} model")
    if "reasoningEffort" in config:
        _nes(config["reasoningEffort"], f"{label} reasoningEffort")
    if "temperature" in config:
        _finite(config["temperature"], f"{label} temperature")
    if "maxTokens" in config:
        _positive(config["maxTokens"], f"{label} maxTokens")
    if "stop" in config:
        _array(config["stop"], f"{label} stop", _str)
    if "adapterDefaults" in header:
        defaults = _exact(header["adapterDefaults"], f"{label} adapterDefaults", (), ("reasoningEffort", "maxTokens"))
        for key, marker in defaults.items():
            _literal(marker, (True,), f"{label} adapterDefaults {key}")
            if key not in config:
                raise _fail(label, f"adapter default {key} lacks config value")
    if "system" in header:
        _str(header["system"], f"{label} system")
    tools = header.get("tools")
    scrubbed = fixture and (is_placeholder(tools) or (isinstance(tools, list) and all(isinstance(t, str) for t in tools)))
    if "tools" in header and not scrubbed:  # fixtures scrub schemas to "{{tools}}" or to a list of names
        def tool(member, member_label):
            schema = _exact(member, member_label, ("name", "description", "parameters"), ())
            _nes(schema["name"], f"{member_label} name")
            _str(schema["description"], f"{member_label} description")
            _rec(schema["parameters"], f"{member_label} parameters")

        _array(header["tools"], f"{label} tools", tool)


def _shadowed(data: dict, seq: int, label: str) -> None:
    span = _exact(data.get("shadowedRange"), f"{label} shadowedRange", ("start", "end"))
    start = _earlier(span["start"], seq, f"{label} shadowedRange start")
    end = _earlier(span["end"], seq, f"{label} shadowedRange end")
    seqs = _seq_array(data.get("shadowedSeqs"), seq, f"{label} shadowedSeqs", True)
    if seqs[0] != start or seqs[-1] != end:
        raise _fail(label, "shadowedRange must match shadowedSeqs endpoints")
    _count(data.get("shadowedTokenCount"), f"{label} shadowedTokenCount")


def _goal_change(data: dict, label: str) -> None:
    _literal(data.get("kind"), ("goal/change",), f"{label} kind")
    _literal(data.get("version"), (1,), f"{label} version")
    if data.get("operation") == "clear":
        _keys(data, ("kind", "version", "operation", "cleared", "clearedAt"), (), f"{label} data")
        ref = _exact(data["cleared"], f"{label} cleared", ("id", "revision"))
        _nes(ref["id"], f"{label} cleared id")
        _positive(ref["revision"], f"{label} cleared revision")
        _count(data["clearedAt"], f"{label} clearedAt")
        return
    _keys(data, ("kind", "version", "operation", "goal", "roundsStarted", "createdAt", "updatedAt"), (), f"{label} data")
    _literal(data["operation"], ("create", "edit", "pause", "resume", "complete", "block"), f"{label} operation")
    goal = _exact(data["goal"], f"{label} goal", ("id", "revision", "objective", "phase", "maxGoalRounds"), ("blockedReason",))
    _nes(goal["id"], f"{label} goal id")
    _positive(goal["revision"], f"{label} goal revision")
    _nes(goal["objective"], f"{label} goal objective")
    _literal(goal["phase"], ("active", "paused", "blocked", "complete"), f"{label} goal phase")
    _positive(goal["maxGoalRounds"], f"{label} goal maxGoalRounds")
    if goal["phase"] == "blocked":
        reason = _exact(goal.get("blockedReason"), f"{label} goal blockedReason", ("code", "message"))
        _nes(reason["code"], f"{label} blocked code")
        _nes(reason["message"], f"{label} blocked message")
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
    _nes(value, label)
    if value.strip() != value:
        raise _fail(label, "must not have surrounding whitespace")


def _schedule_change(data: dict, label: str) -> None:
    _literal(data.get("version"), (1,), f"{label} version")
    if data.get("operation") == "create":
        _keys(data, ("version", "operation", "schedule"), (), f"{label} data")
        record = _rec(data["schedule"], f"{label} schedule")
        kind = record.get("kind")
        if kind == "after":
            _keys(record, ("id", "kind", "prompt", "afterSeconds", "scheduledAt"), (), f"{label} schedule")
            _positive(record["afterSeconds"], f"{label} afterSeconds")
        elif kind == "at":
            _keys(record, ("id", "kind", "prompt", "scheduledAt"), (), f"{label} schedule")
        elif kind == "every":
            _keys(record, ("id", "kind", "prompt", "everySeconds", "scheduledAt"), (), f"{label} schedule")
            if _positive(record["everySeconds"], f"{label} everySeconds") < 300:
                raise _fail(label, "everySeconds must be at least 300")
        else:
            raise _fail(label, "has unknown schedule kind")
        _schedule_id(record["id"], f"{label} id")
        _nes(record["prompt"], f"{label} prompt")
        _instant(record["scheduledAt"], f"{label} scheduledAt")
        return
    _keys(data, ("version", "operation", "id"), ("acceptedAt",) if data.get("operation") == "dispatch" else (), f"{label} data")
    _literal(data["operation"], ("delete", "dispatch"), f"{label} operation")
    _schedule_id(data["id"], f"{label} id")
    if "acceptedAt" in data:
        _instant(data["acceptedAt"], f"{label} acceptedAt")


def _route(value: Any, label: str) -> None:
    route = _exact(value, label, ("provider", "model"))
    _nes(route["provider"], f"{label} provider")
    _nes(route["model"], f"{label} model")


def _title_source(value: Any, label: str) -> None:
    source = _rec(value, label)
    if source.get("kind") == "provider":
        _keys(source, ("kind", "provider"), ("model",), label)
        _nes(source["provider"], f"{label} provider")
        if "model" in source:
            _route(source["model"], f"{label} model")
        return
    _keys(source, ("kind",), (), label)
    _literal(source["kind"], ("fallback", "user"), f"{label} kind")


def _descriptor(data: dict, label: str) -> None:
    _literal(data.get("version"), (3,), f"{label} version")
    _nes(data.get("provider"), f"{label} provider")
    if data.get("mode") == "one-shot":
        _keys(data, ("mode", "version", "provider"), ("label",), f"{label} data")
        if "label" in data:
            _str(data["label"], f"{label} label")
        return
    _literal(data.get("mode"), ("continuable",), f"{label} mode")
    _nes(data.get("label"), f"{label} label")
    for key in ("agentProvider", "agentModel", "agentReasoningEffort", "persona"):
        if key in data:
            _nes(data[key], f"{label} {key}")
    if ("agentProvider" in data) != ("agentModel" in data):
        raise _fail(label, "agentProvider and agentModel must be paired")
    if "toolFilter" in data:
        tool_filter = _exact(data["toolFilter"], f"{label} toolFilter", (), ("allow", "deny"))
        if not tool_filter:
            raise _fail(label, "toolFilter requires allow or deny")
        for key in ("allow", "deny"):
            if key in tool_filter:
                _array(tool_filter[key], f"{label} {key}", _nes)


def _team_selector(data: dict, label: str) -> None:
    _literal(data.get("version"), (1,), f"{label} version")
    _nes(data.get("teamId"), f"{label} teamId")


def _web_search_body(value: Any, label: str) -> None:
    body = _exact(value, label, ("model", "max_tokens", "messages", "tools"))
    _nes(body["model"], f"{label} model")
    _positive(body["max_tokens"], f"{label} max_tokens")

    def message(member, member_label):
        item = _exact(member, member_label, ("role", "content"))
        _literal(item["role"], ("user",), f"{member_label} role")

        def text(block, block_label):
            entry = _exact(block, block_label, ("type", "text"))
            _literal(entry["type"], ("text",), f"{block_label} type")
            _str(entry["text"], f"{block_label} text")

        if len(_array(item["content"], f"{member_label} content", text)) != 1:
            raise _fail(member_label, "content must contain one text block")

    if len(_array(body["messages"], f"{label} messages", message)) != 1:
        raise _fail(label, "messages must contain one user message")

    def tool(member, member_label):
        entry = _exact(member, member_label, ("type", "name", "max_uses"))
        _literal(entry["type"], ("web_search_20250305",), f"{member_label} type")
        _literal(entry["name"], ("web_search",), f"{member_label} name")
        _positive(entry["max_uses"], f"{member_label} max_uses")

    if len(_array(body["tools"], f"{label} tools", tool)) != 1:
        raise _fail(label, "tools must contain one web search tool")


# --------------------------------------------------------------------------- per-event semantics


def semantics(kind: str, seq: int, data: Any, version: int, fixture: bool = False) -> None:
    """[v01] ``assertReleasedPayloadSemantics`` for one known event (version = payload generation)."""
    data = _rec(data, f"{kind} {seq} data")
    label = f"{kind} {seq}"
    get = data.get
    if kind == "agent-preset/selected":
        _str(get("agentPreset"), f"{label} agentPreset")
    elif kind == "agent/inbox/spliced":
        _literal(get("target"), ("next-turn", "next-step"), f"{label} target")
        _count(get("start"), f"{label} start")
        if "removedCount" in data:
            _count(data["removedCount"], f"{label} removedCount")
        _array(get("inserted"), f"{label} inserted", lambda m, l: _message(m, f"{label} inserted message", version, "user"))
        if "outcome" in data:
            _literal(data["outcome"], ("canceled",), f"{label} outcome")
    elif kind == "approval/asked":
        _nes(get("id"), f"{label} id")
        _nes(get("toolName"), f"{label} toolName")
        if "callId" in data:
            _nes(data["callId"], f"{label} callId")
        if "reason" in data:
            _str(data["reason"], f"{label} reason")
    elif kind == "approval/decided":
        _nes(get("id"), f"{label} id")
        _literal(get("outcome"), ("allowed-once", "rejected", "cancelled", "unavailable"), f"{label} outcome")
    elif kind == "approval/policy":
        _literal(get("policy"), ("ask", "never"), f"{label} policy")
        if "source" in data:
            _literal(data["source"], ("delegation",), f"{label} source")
    elif kind == "assistant/chunk":
        _coords(data, label)
        check_stream_chunk(get("chunk"), f"{label} chunk")
    elif kind == "assistant/message":
        _coords(data, label)
        _message(get("message"), f"{label} message", version, "assistant")
        if "usage" in data:
            _usage(data["usage"], f"{label} usage")
        if "interrupted" in data:
            _literal(data["interrupted"], (True,), f"{label} interrupted")
    elif kind == "command/done":
        _nes(get("commandId"), f"{label} commandId")
        _literal(get("kind"), ("success", "error"), f"{label} kind")
        if "text" in data:
            _str(data["text"], f"{label} text")
        if "sourceEventSeq" in data:
            _earlier(data["sourceEventSeq"], seq, f"{label} sourceEventSeq")
    elif kind == "command/run":
        _nes(get("commandId"), f"{label} commandId")
        _nes(get("name"), f"{label} name")
        if "args" in data:
            _str(data["args"], f"{label} args")
        _literal(_exact(get("source"), f"{label} source", ("kind",))["kind"], ("user",), f"{label} source kind")
    elif kind in ("compaction/start", "compaction/end"):
        _nes(get("compactionId"), f"{label} compactionId")
        if "sourceCommandId" in data:
            _nes(data["sourceCommandId"], f"{label} sourceCommandId")
        if get("turn") is not None:
            _count(get("turn"), f"{label} turn")
        if "error" in data:
            _str(data["error"], f"{label} error")
    elif kind == "compaction/prune":
        _shadowed(data, seq, label)
    elif kind == "compaction/summary":
        if get("llmStreamCall") is True and "rawOutput" not in data:
            raise _fail(label, "llmStreamCall requires rawOutput")
        _nes(get("compactionId"), f"{label} compactionId")
        if "sourceCommandId" in data:
            _nes(data["sourceCommandId"], f"{label} sourceCommandId")
        _blocks(get("summary"), f"{label} summary", version)
        _shadowed(data, seq, label)
        _nes(get("provider"), f"{label} provider")
        _nes(get("model"), f"{label} model")
        if "maxTokens" in data:
            _count(data["maxTokens"], f"{label} maxTokens")
        if "usage" in data:
            _usage(data["usage"], f"{label} usage")
        if "rawOutput" in data:
            _blocks(data["rawOutput"], f"{label} rawOutput", version)
        if "llmStreamCall" in data:
            _literal(data["llmStreamCall"], (True,), f"{label} llmStreamCall")
    elif kind == "feedback/record":
        _nes(get("text"), f"{label} text")
    elif kind == "goal/change":
        _goal_change(data, label)
    elif kind == "hook/invoked":
        _count(get("turn"), f"{label} turn")
        _nes(get("point"), f"{label} point")
        _literal(get("dialect"), ("claude-code", "codex"), f"{label} dialect")
        if "matcher" in data:
            _str(data["matcher"], f"{label} matcher")
        _nes(get("handlerId"), f"{label} handlerId")
    elif kind == "hook/result":
        _count(get("turn"), f"{label} turn")
        _nes(get("point"), f"{label} point")
        _nes(get("handlerId"), f"{label} handlerId")
        _nes(get("decision"), f"{label} decision")
        if "exitCode" in data:
            _safe(data["exitCode"], f"{label} exitCode")
        if "stderrSummary" in data:
            _str(data["stderrSummary"], f"{label} stderrSummary")
        if _finite(get("durationMs"), f"{label} durationMs") < 0:
            raise _fail(label, "durationMs must be non-negative")
    elif kind == "llm/retry":
        _nes(get("retryId"), f"{label} retryId")
        _coords(data, label)
        _nes(get("provider"), f"{label} provider")
        _literal(get("mode"), ("normal", "always"), f"{label} mode")
        _nes(get("policyKey"), f"{label} policyKey")
        retry = _positive(get("retry"), f"{label} retry")
        if data["mode"] == "normal":
            if retry > _positive(get("maxRetries"), f"{label} maxRetries"):
                raise _fail(label, "retry exceeds maxRetries")
        elif "maxRetries" in data:
            raise _fail(label, "always mode must omit maxRetries")
        delay = _finite(get("delayMs"), f"{label} delayMs")
        if delay < 0:
            raise _fail(label, "delayMs must be non-negative")
        if delay > 2147483647:
            raise _fail(label, "delayMs exceeds the timer range")
        _failure(get("failure"), f"{label} failure")
    elif kind == "llm/retry-started":
        _nes(get("retryId"), f"{label} retryId")
        _coords(data, label)
        _positive(get("retry"), f"{label} retry")
    elif kind == "model/selection":
        _nes(get("provider"), f"{label} provider")
        _nes(get("model"), f"{label} model")
        if "reasoningEffort" in data:
            _nes(data["reasoningEffort"], f"{label} reasoningEffort")
    elif kind == "permission/preset":
        _nes(get("preset"), f"{label} preset")
    elif kind == "plan/mode":
        _bool(get("active"), f"{label} active")
    elif kind == "request/context":
        _nes(get("provider"), f"{label} provider")
        _nes(get("model"), f"{label} model")
        if "contextWindow" in data:
            _positive(data["contextWindow"], f"{label} contextWindow")
    elif kind == "request/header":
        _request_header(get("header"), f"{label} header", fixture)
        _literal(get("reason"), ("initial", "resume", "change", "series"), f"{label} reason")
        if "startsSeries" in data:
            _literal(data["startsSeries"], (True,), f"{label} startsSeries")
    elif kind == "sandbox/mode":
        _literal(get("mode"), ("read-only", "workspace-write", "danger-full-access"), f"{label} mode")
        if "source" in data:
            _literal(data["source"], ("delegation",), f"{label} source")
    elif kind == "schedule/change":
        _schedule_change(data, label)
    elif kind == "session-log-deepseek/delivery-accepted":
        accepted = 0 if "sessionFormatVersion" not in data else _count(data["sessionFormatVersion"], f"{label} sessionFormatVersion")
        if accepted != version:
            return
        _nes(get("sessionId"), f"{label} sessionId")
        if not fixture:
            _earlier(get("throughSeq"), seq, f"{label} throughSeq")
    elif kind == "session/end-seed":
        return
    elif kind == "session/title":
        _nes(get("title"), f"{label} title")
        _seq_array(get("messageSeqs"), seq, f"{label} messageSeqs", False)
        _title_source(get("source"), f"{label} source")
    elif kind == "session/title-llm-request":
        _nes(get("titleProvider"), f"{label} titleProvider")
        _seq_array(get("messageSeqs"), seq, f"{label} messageSeqs", True)
        _route(get("route"), f"{label} route")
        _str(get("system"), f"{label} system")
        _array(get("messages"), f"{label} messages", lambda m, l: _message(m, f"{label} message", version, None))
        _positive(get("maxTokens"), f"{label} maxTokens")
    elif kind in ("step/end", "step/start"):
        _coords(data, label)
    elif kind == "subagent/descriptor":
        _descriptor(data, label)
    elif kind == "subagent/model-selection-policy":
        seen: set = set()

        def route(member, member_label):
            item = _exact(member, member_label, ("provider", "model"))
            _nes(item["provider"], f"{member_label} provider")
            _nes(item["model"], f"{member_label} model")
            key = (item["provider"], item["model"])
            if key in seen:
                raise _fail(f"{label} allowedModels", f"repeats route {key[0]}/{key[1]}")
            seen.add(key)

        if not _array(get("allowedModels"), f"{label} allowedModels", route):
            raise _fail(f"{label} allowedModels", "must be non-empty")
    elif kind == "team/member":
        _team_selector(data, label)
        member = _exact(get("member"), f"{label} member", ("id", "name", "description", "provider", "context", "phase"), ("error",))
        _nes(member["id"], f"{label} member id")
        for key in ("name", "description", "provider"):
            _str(member[key], f"{label} member {key}")
        _literal(member["context"], ("fresh", "fork"), f"{label} member context")
        _literal(member["phase"], ("provisioning", "active", "failed"), f"{label} member phase")
        if "error" in member:
            _str(member["error"], f"{label} member error")
    elif kind == "team/message/delivered":
        _team_selector(data, label)
        _nes(get("messageId"), f"{label} messageId")
        _nes(get("targetId"), f"{label} targetId")
    elif kind == "team/message/queued":
        _team_selector(data, label)
        message = _exact(get("message"), f"{label} message", ("id", "senderId", "senderName", "targetId", "delivery", "content"))
        for key in ("id", "senderId", "targetId"):
            _nes(message[key], f"{label} message {key}")
        _str(message["senderName"], f"{label} message senderName")
        _literal(message["delivery"], ("quiet", "wakeup"), f"{label} message delivery")
        _blocks(message["content"], f"{label} message content", version)
    elif kind == "team/task":
        _team_selector(data, label)
        task = _exact(get("task"), f"{label} task",
                      ("id", "revision", "subject", "description", "status", "blockedBy", "writeScopes"), ("ownerId",))
        _nes(task["id"], f"{label} task id")
        _positive(task["revision"], f"{label} task revision")
        _str(task["subject"], f"{label} task subject")
        _str(task["description"], f"{label} task description")
        _literal(task["status"], ("pending", "in_progress", "completed", "deleted"), f"{label} task status")
        if "ownerId" in task:
            _nes(task["ownerId"], f"{label} task ownerId")
        _array(task["blockedBy"], f"{label} task blockedBy", _nes)
        _array(task["writeScopes"], f"{label} task writeScopes", _str)
    elif kind == "todo/write":
        def todo(member, member_label):
            item = _exact(member, member_label, ("content", "status"))
            _str(item["content"], f"{member_label} content")
            _literal(item["status"], ("pending", "in_progress", "completed"), f"{member_label} status")

        _array(get("todos"), f"{label} todos", todo)
    elif kind in ("tool-workflow/agent-end", "tool-workflow/agent-start"):
        _nes(get("runId"), f"{label} runId")
        _positive(get("seq"), f"{label} seq")
        if kind == "tool-workflow/agent-end":
            _literal(get("outcome"), ("completed", "failed", "cancelled"), f"{label} outcome")
        else:
            _str(get("label"), f"{label} label")
            if "phase" in data:
                _str(data["phase"], f"{label} phase")
            _nes(get("childId"), f"{label} childId")
    elif kind == "tool-workflow/run-end":
        _nes(get("runId"), f"{label} runId")
        _literal(get("stopReason"), ("completed", "cancelled", "error"), f"{label} stopReason")
    elif kind == "tool-workflow/run-start":
        _nes(get("runId"), f"{label} runId")
        _nes(get("name"), f"{label} name")
    elif kind == "tool/call":
        _coords(data, label)
        _nes(get("callId"), f"{label} callId")
        _nes(get("name"), f"{label} name")
        _str(get("arguments"), f"{label} arguments")
    elif kind in ("tool/code-dispatch", "tool/code-dispatch-start"):
        for key in ("rootCallId", "parentCallId", "subCallId", "name"):
            _nes(get(key), f"{label} {key}")
        if kind == "tool/code-dispatch":
            _bool(get("isError"), f"{label} isError")
            _blocks(get("content"), f"{label} content", version)
    elif kind == "tool/result":
        _coords(data, label)
        _message(get("message"), f"{label} message", version, "tool")
        if "error" in data:
            error = _exact(data["error"], f"{label} error", ("name", "code"))
            _nes(error["name"], f"{label} error name")
            _nes(error["code"], f"{label} error code")
    elif kind == "turn/end":
        _count(get("turn"), f"{label} turn")
        _turn_end_reason(get("reason"), f"{label} reason", version)
    elif kind == "turn/start":
        _count(get("turn"), f"{label} turn")
    elif kind == "user/message":
        _message(data, label, version, "user")
    elif kind == "web/deepseek-search-llm-request":
        _nes(get("endpoint"), f"{label} endpoint")
        _nes(get("apiVersion"), f"{label} apiVersion")
        _web_search_body(get("body"), f"{label} body")


# --------------------------------------------------------------------------- entry points


def check_v0_event(kind: str, seq: int, data: Any, fixture: bool = False, generation: int = 0) -> None:
    """[v01] ``assertReleasedEventPayload`` for a v0/v1 event after legacy normalization (chunks excluded)."""
    disposition = V0_DISPOSITIONS.get(kind)
    if disposition is None or kind == "assistant/chunk":
        return
    record = _rec(data, f"{kind} {seq} data")
    if kind == "subagent/descriptor" and record.get("version") != 3:
        version = _count(record.get("version"), f"{kind} {seq} version")
        if generation == 0:
            raise DescriptorVersion(f"{kind} {seq} uses unsupported descriptor version {version}; the released v0→v1 "
                                    "migration accepts only 3")
        return  # a v1 payload with another descriptor version passes unread
    required, optional, opaque = disposition
    _keys(record, required, optional, f"{kind} {seq} data")
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
    source = _rec(_rec(message, "message").get("source"), "message source")
    kind = source.get("kind")
    if not isinstance(kind, str) or kind not in _V3_SOURCE_KINDS:
        raise PayloadError(f"unclassified message source kind {kind!r}")
    if kind == "agent-message":
        _keys(source, ("kind", "form", "senderSessionId"), (), "agent-message source")
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
    block = _rec(value, label)
    _content_kind(block.get("type"), label)
    if block["type"] == "tool-result":
        if not isinstance(block.get("content"), list):
            raise PayloadError(f"{label}.content: tool-result content must be an array")
        _v3_content(block["content"], f"{label}.content")
    if block["type"] == "file":
        _keys(block, ("type", "attachment"), (), f'{label} kind "file"')
        attachment = _exact(block["attachment"], f'{label} kind "file" attachment', ("attachmentId", "name", "bytes"))
        if not non_empty_str(attachment["attachmentId"]) or not isinstance(attachment["name"], str):
            raise PayloadError(f'{label} kind "file": file attachment requires attachmentId and name')
        _count(attachment["bytes"], f'{label} kind "file" attachment bytes')
        return
    probe = dict(block, content=[]) if block["type"] == "tool-result" else block
    _block(probe, label, 2)


def check_v2_migration(kind: str, seq: int, data: Any, stream_ok: bool = True, fixture: bool = False) -> None:
    """What 0.1.5's v2→v3 migration admits of one v2 event ([v23] ``assertEvent``, payload part)."""
    disposition = V2_DISPOSITIONS.get(kind)
    if kind in ("feedback/message-put", "feedback/message-delete"):
        record = _rec(data, f"{kind} data")
        if kind == "feedback/message-delete":
            _keys(record, ("sessionId", "messageId"), (), kind)
            _str(record["sessionId"], "feedback sessionId")
            _str(record["messageId"], "feedback messageId")
            return
        _keys(record, ("sessionId", "item"), (), kind)
        _str(record["sessionId"], "feedback sessionId")
        item = _exact(record["item"], "feedback item", ("messageId", "rating", "version", "createdAt", "updatedAt"), ("note",))
        _str(item["messageId"], "feedback messageId")
        _str(item["version"], "feedback version")
        _literal(item["rating"], ("positive", "negative"), "feedback rating")
        if "note" in item:
            _str(item["note"], "feedback note")
        _count(item["createdAt"], "feedback createdAt")
        _count(item["updatedAt"], "feedback updatedAt")
        return
    if disposition is None:
        raise PayloadError(f"the v2→v3 migration cannot safely transform unclassified event {kind}")
    record = _rec(data, f"{kind} data")
    required, optional, _ = disposition
    _keys(record, required, optional, f"{kind} data")
    label = f"{kind} at seq {seq}"
    if kind in ("user/message", "tool/code-dispatch"):
        _v3_content(record.get("content"), f"{label}.content")
    elif kind in ("assistant/message", "tool/result", "team/message/queued"):
        _v3_content(_rec(record.get("message"), f"{label}.message").get("content"), f"{label}.message.content")
    elif kind in ("agent/inbox/spliced", "session/title-llm-request"):
        field = "inserted" if kind == "agent/inbox/spliced" else "messages"
        members = record.get(field)
        if not isinstance(members, list):
            raise PayloadError(f"{label}.{field}: content must be an array")
        for index, value in enumerate(members):
            _v3_content(_rec(value, f"{label}.{field}[{index}]").get("content"), f"{label}.{field}[{index}].content")
    elif kind == "compaction/summary":
        _v3_content(record.get("summary"), f"{label}.summary")
        if "rawOutput" in record:
            _v3_content(record["rawOutput"], f"{label}.rawOutput")
    if kind in ("assistant/message", "assistant/attempt") and stream_ok:
        stream = record.get("stream")
        if not isinstance(stream, list):
            raise PayloadError(f"{label}.stream: content must be an array")
        for index, value in enumerate(stream):
            entry = _rec(value, f"{label}.stream[{index}]")
            if entry.get("type") != "chunk":
                continue
            chunk = _rec(entry.get("chunk"), f"{label}.stream[{index}].chunk")
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
        message = _rec(record.get("message"), "tool result message")
        if not is_repair_identity(message.get("id"), _rec(message.get("source"), "tool result source").get("callId")):
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
    record = _exact(data, "system/message data", ("turn", "step", "message"))
    for coordinate in ("turn", "step"):
        if _count(record[coordinate], f"system/message {coordinate}") == 0:
            raise PayloadError(f"system/message {coordinate} must be positive")
    message = _exact(record["message"], "system message", ("id", "role", "source", "content"))
    if not non_empty_str(message["id"]) or message["role"] != "system":
        raise PayloadError("system message requires an id and system role")
    source = _rec(message["source"], "system source")
    if version >= 4:
        _exact(source, "system source", ("kind",))
        if source["kind"] != "system-prompt":
            raise PayloadError('v4 system message source must be exactly {"kind":"system-prompt"}')
    elif source.get("kind") != "plugin" or not non_empty_str(source.get("plugin")):
        raise PayloadError("system message requires plugin source")
    _blocks(message["content"], "system message content", version)


def check_v3_event(kind: str, seq: int, data: Any) -> None:
    """v3 admission of one event's payload ([v23] ``assertV3StructuralRow``, ``assertCanonicalPayload``)."""
    if kind == "request/header":
        header = _rec(_rec(data, "request/header data").get("header"), "request header")
        if "system" in header:
            raise PayloadError("format v3 request/header rejects retired header.system")
        if (isinstance(header.get("tools"), list) and not header["tools"]) or (
                isinstance(header.get("adapterDefaults"), dict) and not header["adapterDefaults"]):
            raise PayloadError("request/header empty optional header fields (tools [], adapterDefaults {}) must be omitted")
    elif kind == "system/message":
        _system_message(data, 3)
    elif kind == "tool/result":
        record = _rec(data, "tool/result data")
        if "error" in record:
            content = _rec(record.get("message"), "tool/result message").get("content")
            if not (isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict)
                    and content[0].get("type") == "tool-result" and content[0].get("isError") is True):
                raise PayloadError("tool/result carries error metadata for a non-error tool result")


_MESSAGE_SLOTS = ("user/message", "system/message", "developer/message", "assistant/message", "tool/result")


def check_v4_event(kind: str, seq: int, data: Any) -> None:
    """v4 admission (FORMAT §2.10: [v34] retired-syntax.ts, tool-role.ts, message-sources.ts, developer.ts)."""
    record = _rec(data, f"{kind} data")
    if kind == "request/header":
        header = _rec(record.get("header"), "request header")
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
        message = _rec(message, f"{kind} message")
        source = _rec(message.get("source"), f"{kind} message source")
        if not non_empty_str(source.get("kind")) or source["kind"] == "plugin":
            raise PayloadError(f"{kind} message source kind must be non-empty and not \"plugin\" in v4")
        _no_tool_result_block(message.get("content"), f"{kind} message content")
    if kind == "tool/result":
        message = _rec(record.get("message"), "tool/result message")
        if message.get("role") != "tool":
            raise PayloadError('v4 tool/result message role must be "tool"')
        source = _rec(message.get("source"), "tool/result source")
        if source.get("kind") != "tool" or not non_empty_str(message.get("toolCallId")) or message["toolCallId"] != source.get("callId"):
            raise PayloadError("v4 tool/result toolCallId must be non-empty and equal message.source.callId")
        if "isError" in message and not isinstance(message["isError"], bool):
            raise PayloadError("v4 tool/result isError must be a boolean")
        if not isinstance(message.get("content"), list):
            raise PayloadError("v4 tool/result content must be an array")
        if "error" in record and message.get("isError") is not True:
            raise PayloadError("v4 tool/result with data.error requires message.isError true")
    elif kind == "developer/message":
        message = _rec(record.get("message"), "developer/message message")
        if message.get("role") != "developer":
            raise PayloadError('developer/message role must be "developer"')
        for coordinate in ("turn", "step"):
            if not positive(record.get(coordinate)):
                raise PayloadError(f"developer/message {coordinate} must be positive")
    elif kind == "assistant/message":
        source = _rec(_rec(record.get("message"), "message").get("source"), "message source")
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
