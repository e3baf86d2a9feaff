"""Shapes several event types share: messages and their sources, content blocks, image references, usage,
failures, stream chunks, finish and turn-end reasons, request headers, goals, schedules, titles.

Each raises :class:`~dshctl.validate.values.PayloadError` for the first member at fault, its message
starting with the ``label`` it was given (``"tool/result 9 message source"``).
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

from ..values import (
    need_array, need_boolean, need_count, need_exact_members, need_finite_number, need_literal, need_non_empty_string,
    need_object, need_object_with, need_positive, need_safe_integer, need_string,
    fail,
    is_placeholder,
)


def turn_and_step(data: dict, label: str) -> None:
    need_count(data.get("turn"), f"{label} turn")
    need_count(data.get("step"), f"{label} step")


def earlier_seq(value: Any, seq: int, label: str) -> int:
    number = need_count(value, label)
    if number >= seq:
        raise fail(label, "must identify an earlier event")
    return number


def seq_array(value: Any, seq: int, label: str, non_empty: bool) -> list:
    seen: set[int] = set()

    def each(member, member_label):
        number = earlier_seq(member, seq, member_label)
        if number in seen:
            raise fail(label, f"repeats seq {number}")
        seen.add(number)

    values = need_array(value, label, each)
    if non_empty and not values:
        raise fail(label, "must be non-empty")
    return values


def failure(value: Any, label: str) -> None:
    record = need_object_with(value, label, ("message", "code"), ("status", "providerRetryAfterMs", "requestId"))
    need_non_empty_string(record["message"], f"{label} message")
    need_non_empty_string(record["code"], f"{label} code")
    if "status" in record:
        status = need_safe_integer(record["status"], f"{label} status")
        if status < 100 or status > 599:
            raise fail(label, "status must be 100 through 599")
    if "providerRetryAfterMs" in record \
            and need_finite_number(record["providerRetryAfterMs"], f"{label} providerRetryAfterMs") <= 0:
        raise fail(label, "providerRetryAfterMs must be positive")
    if "requestId" in record:
        need_non_empty_string(record["requestId"], f"{label} requestId")


def usage(value: Any, label: str) -> None:
    record = need_object_with(value, label, ("inputTokens", "outputTokens"),
                   ("totalTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens"))
    for key, member in record.items():
        need_count(member, f"{label} {key}")


def content_blocks(value: Any, label: str, version: int) -> None:
    need_array(value, label, lambda member, member_label: content_block(member, member_label, version))


def content_block(value: Any, label: str, version: int) -> None:
    block = need_object(value, label)
    kind = block.get("type")
    if kind in ("text", "reasoning"):
        need_exact_members(block, ("type", "text"), (), label)
        need_string(block["text"], f"{label} text")
    elif kind == "image":
        need_exact_members(block, ("type", "attachment"), ("offloaded",) if version >= 4 else (), label)
        image_ref(block["attachment"], f"{label} attachment")
    elif kind == "tool-call":
        need_exact_members(block, ("type", "id", "name", "arguments"), (), label)
        need_non_empty_string(block["id"], f"{label} id")
        need_non_empty_string(block["name"], f"{label} name")
        need_string(block["arguments"], f"{label} arguments")
    elif kind == "tool-result":
        need_exact_members(block, ("type", "toolCallId", "content"), ("isError",), label)
        need_non_empty_string(block["toolCallId"], f"{label} toolCallId")
        content_blocks(block["content"], f"{label} content", version)
        if "isError" in block:
            need_boolean(block["isError"], f"{label} isError")
    else:
        need_non_empty_string(kind, f"{label} type")


def image_ref(value: Any, label: str) -> None:
    ref = need_object_with(value, label, ("attachmentId", "mediaType", "bytes", "width", "height"),
                            ("name", "originalDimensions"))
    need_non_empty_string(ref["attachmentId"], f"{label} attachmentId")
    need_literal(ref["mediaType"], ("image/png", "image/jpeg", "image/webp", "image/gif"), f"{label} mediaType")
    need_count(ref["bytes"], f"{label} bytes")
    need_positive(ref["width"], f"{label} width")
    need_positive(ref["height"], f"{label} height")
    if "name" in ref:
        need_string(ref["name"], f"{label} name")
    if "originalDimensions" in ref:
        dims = need_object_with(ref["originalDimensions"], f"{label} originalDimensions", ("width", "height"))
        need_positive(dims["width"], f"{label} original width")
        need_positive(dims["height"], f"{label} original height")


def message(value: Any, label: str, version: int, expected: str | None) -> None:
    record = need_object_with(value, label, ("id", "role", "content", "source"))
    need_non_empty_string(record["id"], f"{label} id")
    role = {"assistant": "assistant", "user": "user", "tool": "user"}.get(expected or "")
    if role is None:
        need_literal(record["role"], ("system", "user", "assistant"), f"{label} role")
    else:
        need_literal(record["role"], (role,), f"{label} role")
    content_blocks(record["content"], f"{label} content", version)
    source = need_object(record["source"], f"{label} source")
    if version < 2 and expected == "user" and source.get("kind") == "goal" and "change" in source:
        legacy_goal_source(record, source, label)
    else:
        message_source(source, f"{label} source", version, expected)
    if expected == "tool":
        content = record["content"]
        block = content[0] if isinstance(content, list) and len(content) == 1 else None
        if not isinstance(block, dict) or block.get("type") != "tool-result" or block.get("toolCallId") != source.get("callId"):
            raise fail(label, "must contain exactly one tool-result block")


def legacy_goal_source(message: dict, source: dict, label: str) -> None:
    need_exact_members(source, ("kind", "goalId", "revision", "round", "change"), (), f"{label} source")
    need_non_empty_string(source["goalId"], f"{label} source goalId")
    need_positive(source["revision"], f"{label} source revision")
    if source["round"] != 0 or isinstance(source["round"], bool):
        raise fail(label, "legacy goal source round must be 0")
    change = need_object(source["change"], f"{label} source change")
    goal_change(change, f"{label} source change")
    ref = need_object(change["cleared"] if change.get("operation") == "clear" else change.get("goal"),
                  f"{label} source change ref")
    if source["goalId"] != ref.get("id") or source["revision"] != ref.get("revision"):
        raise fail(label, "legacy goal source does not match its change")


SOURCE_SHAPES = {
    "team-message": (("kind", "teamId", "messageId", "senderId", "senderName"), ()),
    "goal": (("kind", "goalId", "revision", "round"), ()),
    "skill-invocation": (("kind", "name", "form"), ()),
    "coordinator": (("kind", "form", "senderSessionId"), ()),
    "subagent-report": (("kind", "form", "senderSessionId"), ()),
    "subagent-settled": (("kind", "form", "summary", "senderSessionId"), ()),
    "webhook": (("kind", "provider", "source", "deliveryId", "ruleId", "form", "summary"), ()),
}


def message_source(value: Any, label: str, version: int, expected: str | None) -> None:
    source = need_object(value, label)
    kind = source.get("kind")
    if expected == "assistant" and kind != "model":
        raise fail(label, "must be model source")
    if expected == "tool" and kind != "tool":
        raise fail(label, "must be tool source")
    if kind == "user":
        need_exact_members(source, ("kind",), ("rpcId", "clientTimeZone"), label)
        for key in ("rpcId", "clientTimeZone"):
            if key in source:
                need_non_empty_string(source[key], f"{label} {key}")
    elif kind == "plugin":
        plugin_source(source, label)
    elif kind == "model":
        need_exact_members(source, ("kind", "provider", "model"), ("replayState",), label)
        need_non_empty_string(source["provider"], f"{label} provider")
        need_non_empty_string(source["model"], f"{label} model")
    elif kind == "tool":
        need_exact_members(source, ("kind", "callId"), (), label)
        need_non_empty_string(source["callId"], f"{label} callId")
    elif kind == "agent-instructions":
        need_exact_members(source, ("kind", "form", "changes"), ("baseline", "baselineIdentity"), label)
        need_literal(source["form"], ("instructions",), f"{label} form")
        if "baseline" in source:
            need_literal(source["baseline"], (True,), f"{label} baseline")
        if "baselineIdentity" in source:
            need_non_empty_string(source["baselineIdentity"], f"{label} baselineIdentity")

        def change(member, member_label):
            item = need_object_with(member, member_label, ("action", "scope", "path"), ("digest",))
            need_literal(item["action"], ("set", "replace", "remove"), f"{member_label} action")
            need_string(item["scope"], f"{member_label} scope")
            need_string(item["path"], f"{member_label} path")
            if "digest" in item:
                need_string(item["digest"], f"{member_label} digest")

        need_array(source["changes"], f"{label} changes", change)
    elif kind == "session-reference":
        session_reference(source, label, version)
    elif kind == "skill-catalog":
        need_exact_members(source, ("kind", "form", "entries"), ("update",), label)
        need_literal(source["form"], ("catalog",), f"{label} form")
        if "update" in source:
            need_literal(source["update"], (True,), f"{label} update")

        def entry(member, member_label):
            item = need_object_with(member, member_label, ("name", "description"))
            need_non_empty_string(item["name"], f"{member_label} name")
            need_string(item["description"], f"{member_label} description")

        need_array(source["entries"], f"{label} entries", entry)
    elif isinstance(kind, str) and kind in SOURCE_SHAPES:
        required, optional = SOURCE_SHAPES[kind]
        need_exact_members(source, required, optional, label)
        if kind == "team-message":
            for key in ("teamId", "messageId", "senderId"):
                need_non_empty_string(source[key], f"{label} {key}")
            need_string(source["senderName"], f"{label} senderName")
        elif kind == "goal":
            need_non_empty_string(source["goalId"], f"{label} goalId")
            need_positive(source["revision"], f"{label} revision")
            need_positive(source["round"], f"{label} round")
        elif kind == "skill-invocation":
            need_non_empty_string(source["name"], f"{label} name")
            need_literal(source["form"], ("instructions",), f"{label} form")
        elif kind in ("coordinator", "subagent-report"):
            need_literal(source["form"], ("relay",), f"{label} form")
            need_non_empty_string(source["senderSessionId"], f"{label} senderSessionId")
        elif kind == "subagent-settled":
            need_literal(source["form"], ("notice",), f"{label} form")
            need_string(source["summary"], f"{label} summary")
            need_non_empty_string(source["senderSessionId"], f"{label} senderSessionId")
        elif kind == "webhook":
            for key in ("provider", "source", "deliveryId", "ruleId"):
                need_non_empty_string(source[key], f"{label} {key}")
            need_literal(source["form"], ("notice",), f"{label} form")
            need_string(source["summary"], f"{label} summary")
    else:
        need_non_empty_string(kind, f"{label} kind")


def plugin_source(source: dict, label: str) -> None:
    optional = ["form", "sections", "summary"]
    if source.get("plugin") == "compact":
        optional += ["compactionId", "sourceCommandId"]
    need_exact_members(source, ("kind", "plugin"), optional, label)
    need_non_empty_string(source["plugin"], f"{label} plugin")
    if source["plugin"] == "compact":
        need_non_empty_string(source.get("compactionId"), f"{label} compactionId")
        if "sourceCommandId" in source:
            need_non_empty_string(source["sourceCommandId"], f"{label} sourceCommandId")
    form = source.get("form")
    if "form" not in source:
        return
    need_literal(form, ("instructions", "catalog", "snapshot", "notice", "relay", "recall"), f"{label} form")
    if form == "snapshot":
        def section(member, member_label):
            item = need_object_with(member, member_label, ("name", "text"))
            need_non_empty_string(item["name"], f"{member_label} name")
            need_string(item["text"], f"{member_label} text")

        need_array(source.get("sections"), f"{label} sections", section)
    elif "sections" in source:
        raise fail(label, "sections require snapshot form")
    if form == "notice":
        need_string(source.get("summary"), f"{label} summary")
    elif "summary" in source:
        raise fail(label, "summary requires notice form")


def session_reference(source: dict, label: str, version: int) -> None:
    need_exact_members(source, ("kind", "form", "version", "references"), (), label)
    need_literal(source["form"], ("recall",), f"{label} form")
    need_literal(source["version"], (1,), f"{label} version")
    position = 0
    seen: set = set()
    references = need_array(source["references"], f"{label} references")
    for index, member in enumerate(references):
        member_label = f"{label} references[{index}]"
        ref = need_object_with(member, member_label,
                     ("sessionId", "label", "capturedThroughSeq", "compacted", "originalMessages", "retainedMessages",
                      "omittedMessages", "omittedBytes", "truncated", "inputIndex"),
                     ("capturedFormatVersion",) if version >= 1 else ())
        need_non_empty_string(ref["sessionId"], f"{member_label} sessionId")
        need_string(ref["label"], f"{member_label} label")
        if ref["capturedThroughSeq"] is not None:
            need_count(ref["capturedThroughSeq"], f"{member_label} capturedThroughSeq")
        if "capturedFormatVersion" in ref:
            captured = need_count(ref["capturedFormatVersion"], f"{member_label} capturedFormatVersion")
            if captured < 1 or captured > version:
                raise fail(member_label, f"capturedFormatVersion must be between 1 and {version}")
        need_boolean(ref["compacted"], f"{member_label} compacted")
        original = need_count(ref["originalMessages"], f"{member_label} originalMessages")
        retained = need_count(ref["retainedMessages"], f"{member_label} retainedMessages")
        omitted = need_count(ref["omittedMessages"], f"{member_label} omittedMessages")
        omitted_bytes = need_count(ref["omittedBytes"], f"{member_label} omittedBytes")
        input_index = need_count(ref["inputIndex"], f"{member_label} inputIndex")
        need_boolean(ref["truncated"], f"{member_label} truncated")
        if retained > original or omitted != original - retained:
            raise fail(member_label, "message counts are inconsistent")
        if ref["truncated"] != (omitted > 0 or omitted_bytes > 0):
            raise fail(member_label, "truncated disagrees with omitted content")
        if input_index != position:
            raise fail(label, "inputIndex must match reference position")
        position += 1
        if ref["sessionId"] in seen:
            raise fail(label, f"repeats sessionId {ref['sessionId']}")
        seen.add(ref["sessionId"])
    if not references:
        raise fail(label, "references must be non-empty")


def check_stream_chunk(value: Any, label: str = "chunk") -> None:
    """A ``StreamChunk`` with its exact members (FORMAT §4.1; [v01] ``streamChunkValue``)."""
    chunk = need_object(value, label)
    kind = chunk.get("type")
    if kind == "block-start":
        need_exact_members(chunk, ("type", "index", "blockType"), (), label)
        need_count(chunk["index"], f"{label} index")
        need_non_empty_string(chunk["blockType"], f"{label} blockType")
    elif kind in ("text-delta", "reasoning-delta"):
        need_exact_members(chunk, ("type", "index", "text"), (), label)
        need_count(chunk["index"], f"{label} index")
        need_string(chunk["text"], f"{label} text")
    elif kind == "tool-call-delta":
        need_exact_members(chunk, ("type", "index", "id", "argumentsDelta"), ("name",), label)
        need_count(chunk["index"], f"{label} index")
        need_non_empty_string(chunk["id"], f"{label} id")
        if "name" in chunk:
            need_string(chunk["name"], f"{label} name")
        need_string(chunk["argumentsDelta"], f"{label} argumentsDelta")
    elif kind == "block-end":
        need_exact_members(chunk, ("type", "index", "block"), (), label)
        need_count(chunk["index"], f"{label} index")
        content_block(chunk["block"], f"{label} block", 1)
    elif kind == "usage":
        need_exact_members(chunk, ("type", "usage"), (), label)
        usage(chunk["usage"], f"{label} usage")
    elif kind == "finish":
        need_exact_members(chunk, ("type", "reason"), ("replayState",), label)
        finish_reason(chunk["reason"], f"{label} reason")
        if "replayState" in chunk:
            replay = need_object_with(chunk["replayState"], f"{label} replayState", ("response",), ("blocks",))
            if "blocks" in replay and not isinstance(replay["blocks"], list):
                raise fail(f"{label} replayState", "blocks must be an array")
    else:
        raise fail(label, f"has unknown stream chunk type {kind!r}")


def finish_reason(value: Any, label: str) -> None:
    reason = need_object(value, label)
    kind = reason.get("kind")
    if kind in ("aborted", "error"):
        need_exact_members(reason, ("kind", "failure"), (), label)
        failure(reason["failure"], f"{label} failure")
        return
    if kind in ("stop", "tool-calls", "max-tokens"):
        need_exact_members(reason, ("kind",), (), label)
    need_non_empty_string(kind, f"{label} kind")


def turn_end_reason(value: Any, label: str, version: int) -> None:
    reason = need_object(value, label)
    kind = reason.get("kind")
    simple = ("completed", "blocked", "max-tokens", "interrupted") + (("forked",) if version >= 4 else ())
    if kind in simple:
        need_exact_members(reason, ("kind",), (), label)
    elif kind == "aborted":
        need_exact_members(reason, ("kind", "reason"), (), label)
        cause = need_object(reason["reason"], f"{label} abort cause")
        if cause.get("kind") == "hook":
            need_exact_members(cause, ("kind", "reason"), (), f"{label} abort cause")
            need_string(cause["reason"], f"{label} abort reason")
        else:
            need_exact_members(cause, ("kind",), (), f"{label} abort cause")
            need_literal(cause["kind"], ("user", "parent", "disposed", "legacy"), f"{label} abort kind")
    elif kind == "error":
        need_exact_members(reason, ("kind", "error"), (), label)
        failure(reason["error"], f"{label} error")
    else:
        need_non_empty_string(kind, f"{label} kind")


def request_header(value: Any, label: str, fixture: bool) -> None:
    header = need_object_with(value, label, ("config",), ("adapterDefaults", "system", "tools"))
    config = need_object_with(header["config"], f"{label} config", ("provider", "model"),
                    ("reasoningEffort", "temperature", "maxTokens", "stop"))
    need_non_empty_string(config["provider"], f"{label} provider")
    need_non_empty_string(config["model"], f"{label} model")
    if "reasoningEffort" in config:
        need_non_empty_string(config["reasoningEffort"], f"{label} reasoningEffort")
    if "temperature" in config:
        need_finite_number(config["temperature"], f"{label} temperature")
    if "maxTokens" in config:
        need_positive(config["maxTokens"], f"{label} maxTokens")
    if "stop" in config:
        need_array(config["stop"], f"{label} stop", need_string)
    if "adapterDefaults" in header:
        defaults = need_object_with(header["adapterDefaults"], f"{label} adapterDefaults", (),
                                     ("reasoningEffort", "maxTokens"))
        for key, marker in defaults.items():
            need_literal(marker, (True,), f"{label} adapterDefaults {key}")
            if key not in config:
                raise fail(label, f"adapter default {key} lacks config value")
    if "system" in header:
        need_string(header["system"], f"{label} system")
    tools = header.get("tools")
    scrubbed = fixture and (is_placeholder(tools) or (isinstance(tools, list) and all(isinstance(t, str) for t in tools)))
    if "tools" in header and not scrubbed:  # fixtures scrub schemas to "{{tools}}" or to a list of names
        def tool(member, member_label):
            schema = need_object_with(member, member_label, ("name", "description", "parameters"), ())
            need_non_empty_string(schema["name"], f"{member_label} name")
            need_string(schema["description"], f"{member_label} description")
            need_object(schema["parameters"], f"{member_label} parameters")

        need_array(header["tools"], f"{label} tools", tool)


def shadowed_span(data: dict, seq: int, label: str) -> None:
    span = need_object_with(data.get("shadowedRange"), f"{label} shadowedRange", ("start", "end"))
    start = earlier_seq(span["start"], seq, f"{label} shadowedRange start")
    end = earlier_seq(span["end"], seq, f"{label} shadowedRange end")
    seqs = seq_array(data.get("shadowedSeqs"), seq, f"{label} shadowedSeqs", True)
    if seqs[0] != start or seqs[-1] != end:
        raise fail(label, "shadowedRange must match shadowedSeqs endpoints")
    need_count(data.get("shadowedTokenCount"), f"{label} shadowedTokenCount")


def goal_change(data: dict, label: str) -> None:
    need_literal(data.get("kind"), ("goal/change",), f"{label} kind")
    need_literal(data.get("version"), (1,), f"{label} version")
    if data.get("operation") == "clear":
        need_exact_members(data, ("kind", "version", "operation", "cleared", "clearedAt"), (), f"{label} data")
        ref = need_object_with(data["cleared"], f"{label} cleared", ("id", "revision"))
        need_non_empty_string(ref["id"], f"{label} cleared id")
        need_positive(ref["revision"], f"{label} cleared revision")
        need_count(data["clearedAt"], f"{label} clearedAt")
        return
    need_exact_members(data, ("kind", "version", "operation", "goal", "roundsStarted", "createdAt", "updatedAt"), (),
                   f"{label} data")
    need_literal(data["operation"], ("create", "edit", "pause", "resume", "complete", "block"), f"{label} operation")
    goal = need_object_with(data["goal"], f"{label} goal", ("id", "revision", "objective", "phase", "maxGoalRounds"),
                             ("blockedReason",))
    need_non_empty_string(goal["id"], f"{label} goal id")
    need_positive(goal["revision"], f"{label} goal revision")
    need_non_empty_string(goal["objective"], f"{label} goal objective")
    need_literal(goal["phase"], ("active", "paused", "blocked", "complete"), f"{label} goal phase")
    need_positive(goal["maxGoalRounds"], f"{label} goal maxGoalRounds")
    if goal["phase"] == "blocked":
        reason = need_object_with(goal.get("blockedReason"), f"{label} goal blockedReason", ("code", "message"))
        need_non_empty_string(reason["code"], f"{label} blocked code")
        need_non_empty_string(reason["message"], f"{label} blocked message")
    elif "blockedReason" in goal:
        raise fail(label, "blockedReason requires blocked phase")
    for key in ("roundsStarted", "createdAt", "updatedAt"):
        need_count(data[key], f"{label} {key}")


_INSTANT = re.compile(r"(?!0000)\d{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z")


def instant(value: Any, label: str) -> None:
    ok = isinstance(value, str) and _INSTANT.fullmatch(value) is not None
    if ok:
        try:
            parsed = datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
            ok = parsed.strftime("%Y-%m-%dT%H:%M:%S.") + f"{parsed.microsecond // 1000:03d}Z" == value
        except ValueError:
            ok = False
    if not ok:
        raise fail(label, "must be a canonical UTC instant")


def schedule_id(value: Any, label: str) -> None:
    need_non_empty_string(value, label)
    if value.strip() != value:
        raise fail(label, "must not have surrounding whitespace")


def schedule_change(data: dict, label: str) -> None:
    need_literal(data.get("version"), (1,), f"{label} version")
    if data.get("operation") == "create":
        need_exact_members(data, ("version", "operation", "schedule"), (), f"{label} data")
        record = need_object(data["schedule"], f"{label} schedule")
        kind = record.get("kind")
        if kind == "after":
            need_exact_members(record, ("id", "kind", "prompt", "afterSeconds", "scheduledAt"), (), f"{label} schedule")
            need_positive(record["afterSeconds"], f"{label} afterSeconds")
        elif kind == "at":
            need_exact_members(record, ("id", "kind", "prompt", "scheduledAt"), (), f"{label} schedule")
        elif kind == "every":
            need_exact_members(record, ("id", "kind", "prompt", "everySeconds", "scheduledAt"), (), f"{label} schedule")
            if need_positive(record["everySeconds"], f"{label} everySeconds") < 300:
                raise fail(label, "everySeconds must be at least 300")
        else:
            raise fail(label, "has unknown schedule kind")
        schedule_id(record["id"], f"{label} id")
        need_non_empty_string(record["prompt"], f"{label} prompt")
        instant(record["scheduledAt"], f"{label} scheduledAt")
        return
    need_exact_members(data, ("version", "operation", "id"), ("acceptedAt",) if data.get("operation") == "dispatch" else (),
                   f"{label} data")
    need_literal(data["operation"], ("delete", "dispatch"), f"{label} operation")
    schedule_id(data["id"], f"{label} id")
    if "acceptedAt" in data:
        instant(data["acceptedAt"], f"{label} acceptedAt")


def route(value: Any, label: str) -> None:
    record = need_object_with(value, label, ("provider", "model"))
    need_non_empty_string(record["provider"], f"{label} provider")
    need_non_empty_string(record["model"], f"{label} model")


def title_source(value: Any, label: str) -> None:
    source = need_object(value, label)
    if source.get("kind") == "provider":
        need_exact_members(source, ("kind", "provider"), ("model",), label)
        need_non_empty_string(source["provider"], f"{label} provider")
        if "model" in source:
            route(source["model"], f"{label} model")
        return
    need_exact_members(source, ("kind",), (), label)
    need_literal(source["kind"], ("fallback", "user"), f"{label} kind")


def subagent_descriptor(data: dict, label: str) -> None:
    need_literal(data.get("version"), (3,), f"{label} version")
    need_non_empty_string(data.get("provider"), f"{label} provider")
    if data.get("mode") == "one-shot":
        need_exact_members(data, ("mode", "version", "provider"), ("label",), f"{label} data")
        if "label" in data:
            need_string(data["label"], f"{label} label")
        return
    need_literal(data.get("mode"), ("continuable",), f"{label} mode")
    need_non_empty_string(data.get("label"), f"{label} label")
    for key in ("agentProvider", "agentModel", "agentReasoningEffort", "persona"):
        if key in data:
            need_non_empty_string(data[key], f"{label} {key}")
    if ("agentProvider" in data) != ("agentModel" in data):
        raise fail(label, "agentProvider and agentModel must be paired")
    if "toolFilter" in data:
        tool_filter = need_object_with(data["toolFilter"], f"{label} toolFilter", (), ("allow", "deny"))
        if not tool_filter:
            raise fail(label, "toolFilter requires allow or deny")
        for key in ("allow", "deny"):
            if key in tool_filter:
                need_array(tool_filter[key], f"{label} {key}", need_non_empty_string)


def team_selector(data: dict, label: str) -> None:
    need_literal(data.get("version"), (1,), f"{label} version")
    need_non_empty_string(data.get("teamId"), f"{label} teamId")


def web_search_body(value: Any, label: str) -> None:
    body = need_object_with(value, label, ("model", "max_tokens", "messages", "tools"))
    need_non_empty_string(body["model"], f"{label} model")
    need_positive(body["max_tokens"], f"{label} max_tokens")

    def user_message(member, member_label):
        item = need_object_with(member, member_label, ("role", "content"))
        need_literal(item["role"], ("user",), f"{member_label} role")

        def text(block, block_label):
            entry = need_object_with(block, block_label, ("type", "text"))
            need_literal(entry["type"], ("text",), f"{block_label} type")
            need_string(entry["text"], f"{block_label} text")

        if len(need_array(item["content"], f"{member_label} content", text)) != 1:
            raise fail(member_label, "content must contain one text block")

    if len(need_array(body["messages"], f"{label} messages", user_message)) != 1:
        raise fail(label, "messages must contain one user message")

    def tool(member, member_label):
        entry = need_object_with(member, member_label, ("type", "name", "max_uses"))
        need_literal(entry["type"], ("web_search_20250305",), f"{member_label} type")
        need_literal(entry["name"], ("web_search",), f"{member_label} name")
        need_positive(entry["max_uses"], f"{member_label} max_uses")

    if len(need_array(body["tools"], f"{label} tools", tool)) != 1:
        raise fail(label, "tools must contain one web search tool")
