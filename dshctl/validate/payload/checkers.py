"""One checker per event type ([v01] ``assertReleasedPayloadSemantics``): what each member means.

:data:`CHECKERS` maps each released event type to its checker; :func:`semantics` runs the one of an event.
"""

from __future__ import annotations

from typing import Any, Callable

import msgspec

from ..values import (
    need_array, need_boolean, need_count, need_finite_number, need_literal, need_non_empty_string,
    need_object, need_object_with, need_positive, need_safe_integer, need_string,
    fail,
)
from . import shapes

__all__ = ["CHECKERS", "semantics"]


# --------------------------------------------------------------------------- per-event semantics
#
# One checker per event type, in :data:`CHECKERS`. Each runs its checks in the order of the released
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
    data = need_object(data, f"{kind} {seq} data")
    checker = CHECKERS.get(kind)
    if checker is not None:
        checker(data, _Judged(kind, seq, version, fixture, f"{kind} {seq}"))


def _agent_preset_selected(data: dict, event: _Judged) -> None:
    need_string(data.get("agentPreset"), f"{event.label} agentPreset")


def _agent_inbox_spliced(data: dict, event: _Judged) -> None:
    label = event.label
    need_literal(data.get("target"), ("next-turn", "next-step"), f"{label} target")
    need_count(data.get("start"), f"{label} start")
    if "removedCount" in data:
        need_count(data["removedCount"], f"{label} removedCount")
    need_array(data.get("inserted"), f"{label} inserted",
           lambda member, _: shapes.message(member, f"{label} inserted message", event.version, "user"))
    if "outcome" in data:
        need_literal(data["outcome"], ("canceled",), f"{label} outcome")


def _approval_asked(data: dict, event: _Judged) -> None:
    label = event.label
    need_non_empty_string(data.get("id"), f"{label} id")
    need_non_empty_string(data.get("toolName"), f"{label} toolName")
    if "callId" in data:
        need_non_empty_string(data["callId"], f"{label} callId")
    if "reason" in data:
        need_string(data["reason"], f"{label} reason")


def _approval_decided(data: dict, event: _Judged) -> None:
    label = event.label
    need_non_empty_string(data.get("id"), f"{label} id")
    need_literal(data.get("outcome"), ("allowed-once", "rejected", "cancelled", "unavailable"), f"{label} outcome")


def _approval_policy(data: dict, event: _Judged) -> None:
    label = event.label
    need_literal(data.get("policy"), ("ask", "never"), f"{label} policy")
    if "source" in data:
        need_literal(data["source"], ("delegation",), f"{label} source")


def _assistant_chunk(data: dict, event: _Judged) -> None:
    shapes.turn_and_step(data, event.label)
    shapes.check_stream_chunk(data.get("chunk"), f"{event.label} chunk")


def _assistant_message(data: dict, event: _Judged) -> None:
    label = event.label
    shapes.turn_and_step(data, label)
    shapes.message(data.get("message"), f"{label} message", event.version, "assistant")
    if "usage" in data:
        shapes.usage(data["usage"], f"{label} usage")
    if "interrupted" in data:
        need_literal(data["interrupted"], (True,), f"{label} interrupted")


def _command_done(data: dict, event: _Judged) -> None:
    label = event.label
    need_non_empty_string(data.get("commandId"), f"{label} commandId")
    need_literal(data.get("kind"), ("success", "error"), f"{label} kind")
    if "text" in data:
        need_string(data["text"], f"{label} text")
    if "sourceEventSeq" in data:
        shapes.earlier_seq(data["sourceEventSeq"], event.seq, f"{label} sourceEventSeq")


def _command_run(data: dict, event: _Judged) -> None:
    label = event.label
    need_non_empty_string(data.get("commandId"), f"{label} commandId")
    need_non_empty_string(data.get("name"), f"{label} name")
    if "args" in data:
        need_string(data["args"], f"{label} args")
    source = need_object_with(data.get("source"), f"{label} source", ("kind",))
    need_literal(source["kind"], ("user",), f"{label} source kind")


def _compaction_start_or_end(data: dict, event: _Judged) -> None:
    label = event.label
    need_non_empty_string(data.get("compactionId"), f"{label} compactionId")
    if "sourceCommandId" in data:
        need_non_empty_string(data["sourceCommandId"], f"{label} sourceCommandId")
    if data.get("turn") is not None:
        need_count(data.get("turn"), f"{label} turn")
    if "error" in data:
        need_string(data["error"], f"{label} error")


def _compaction_prune(data: dict, event: _Judged) -> None:
    shapes.shadowed_span(data, event.seq, event.label)


def _compaction_summary(data: dict, event: _Judged) -> None:
    label, version = event.label, event.version
    if data.get("llmStreamCall") is True and "rawOutput" not in data:
        raise fail(label, "llmStreamCall requires rawOutput")
    need_non_empty_string(data.get("compactionId"), f"{label} compactionId")
    if "sourceCommandId" in data:
        need_non_empty_string(data["sourceCommandId"], f"{label} sourceCommandId")
    shapes.content_blocks(data.get("summary"), f"{label} summary", version)
    shapes.shadowed_span(data, event.seq, label)
    need_non_empty_string(data.get("provider"), f"{label} provider")
    need_non_empty_string(data.get("model"), f"{label} model")
    if "maxTokens" in data:
        need_count(data["maxTokens"], f"{label} maxTokens")
    if "usage" in data:
        shapes.usage(data["usage"], f"{label} usage")
    if "rawOutput" in data:
        shapes.content_blocks(data["rawOutput"], f"{label} rawOutput", version)
    if "llmStreamCall" in data:
        need_literal(data["llmStreamCall"], (True,), f"{label} llmStreamCall")


def _feedback_record(data: dict, event: _Judged) -> None:
    need_non_empty_string(data.get("text"), f"{event.label} text")


def _goal_change_event(data: dict, event: _Judged) -> None:
    shapes.goal_change(data, event.label)


def _hook_invoked(data: dict, event: _Judged) -> None:
    label = event.label
    need_count(data.get("turn"), f"{label} turn")
    need_non_empty_string(data.get("point"), f"{label} point")
    need_literal(data.get("dialect"), ("claude-code", "codex"), f"{label} dialect")
    if "matcher" in data:
        need_string(data["matcher"], f"{label} matcher")
    need_non_empty_string(data.get("handlerId"), f"{label} handlerId")


def _hook_result(data: dict, event: _Judged) -> None:
    label = event.label
    need_count(data.get("turn"), f"{label} turn")
    need_non_empty_string(data.get("point"), f"{label} point")
    need_non_empty_string(data.get("handlerId"), f"{label} handlerId")
    need_non_empty_string(data.get("decision"), f"{label} decision")
    if "exitCode" in data:
        need_safe_integer(data["exitCode"], f"{label} exitCode")
    if "stderrSummary" in data:
        need_string(data["stderrSummary"], f"{label} stderrSummary")
    if need_finite_number(data.get("durationMs"), f"{label} durationMs") < 0:
        raise fail(label, "durationMs must be non-negative")


def _llm_retry(data: dict, event: _Judged) -> None:
    label = event.label
    need_non_empty_string(data.get("retryId"), f"{label} retryId")
    shapes.turn_and_step(data, label)
    need_non_empty_string(data.get("provider"), f"{label} provider")
    need_literal(data.get("mode"), ("normal", "always"), f"{label} mode")
    need_non_empty_string(data.get("policyKey"), f"{label} policyKey")
    retry = need_positive(data.get("retry"), f"{label} retry")
    if data["mode"] == "normal":
        if retry > need_positive(data.get("maxRetries"), f"{label} maxRetries"):
            raise fail(label, "retry exceeds maxRetries")
    elif "maxRetries" in data:
        raise fail(label, "always mode must omit maxRetries")
    delay = need_finite_number(data.get("delayMs"), f"{label} delayMs")
    if delay < 0:
        raise fail(label, "delayMs must be non-negative")
    if delay > 2147483647:
        raise fail(label, "delayMs exceeds the timer range")
    shapes.failure(data.get("failure"), f"{label} failure")


def _llm_retry_started(data: dict, event: _Judged) -> None:
    label = event.label
    need_non_empty_string(data.get("retryId"), f"{label} retryId")
    shapes.turn_and_step(data, label)
    need_positive(data.get("retry"), f"{label} retry")


def _model_selection(data: dict, event: _Judged) -> None:
    label = event.label
    need_non_empty_string(data.get("provider"), f"{label} provider")
    need_non_empty_string(data.get("model"), f"{label} model")
    if "reasoningEffort" in data:
        need_non_empty_string(data["reasoningEffort"], f"{label} reasoningEffort")


def _permission_preset(data: dict, event: _Judged) -> None:
    need_non_empty_string(data.get("preset"), f"{event.label} preset")


def _plan_mode(data: dict, event: _Judged) -> None:
    need_boolean(data.get("active"), f"{event.label} active")


def _request_context(data: dict, event: _Judged) -> None:
    label = event.label
    need_non_empty_string(data.get("provider"), f"{label} provider")
    need_non_empty_string(data.get("model"), f"{label} model")
    if "contextWindow" in data:
        need_positive(data["contextWindow"], f"{label} contextWindow")


def _request_header_event(data: dict, event: _Judged) -> None:
    label = event.label
    shapes.request_header(data.get("header"), f"{label} header", event.fixture)
    need_literal(data.get("reason"), ("initial", "resume", "change", "series"), f"{label} reason")
    if "startsSeries" in data:
        need_literal(data["startsSeries"], (True,), f"{label} startsSeries")


def _sandbox_mode(data: dict, event: _Judged) -> None:
    label = event.label
    need_literal(data.get("mode"), ("read-only", "workspace-write", "danger-full-access"), f"{label} mode")
    if "source" in data:
        need_literal(data["source"], ("delegation",), f"{label} source")


def _schedule_change_event(data: dict, event: _Judged) -> None:
    shapes.schedule_change(data, event.label)


def _delivery_accepted(data: dict, event: _Judged) -> None:
    label = event.label
    if "sessionFormatVersion" in data:
        accepted = need_count(data["sessionFormatVersion"], f"{label} sessionFormatVersion")
    else:
        accepted = 0
    if accepted != event.version:
        return
    need_non_empty_string(data.get("sessionId"), f"{label} sessionId")
    if not event.fixture:
        shapes.earlier_seq(data.get("throughSeq"), event.seq, f"{label} throughSeq")


def _session_title(data: dict, event: _Judged) -> None:
    label = event.label
    need_non_empty_string(data.get("title"), f"{label} title")
    shapes.seq_array(data.get("messageSeqs"), event.seq, f"{label} messageSeqs", False)
    shapes.title_source(data.get("source"), f"{label} source")


def _title_llm_request(data: dict, event: _Judged) -> None:
    label = event.label
    need_non_empty_string(data.get("titleProvider"), f"{label} titleProvider")
    shapes.seq_array(data.get("messageSeqs"), event.seq, f"{label} messageSeqs", True)
    shapes.route(data.get("route"), f"{label} route")
    need_string(data.get("system"), f"{label} system")
    need_array(data.get("messages"), f"{label} messages",
           lambda member, _: shapes.message(member, f"{label} message", event.version, None))
    need_positive(data.get("maxTokens"), f"{label} maxTokens")


def _step_boundary(data: dict, event: _Judged) -> None:
    shapes.turn_and_step(data, event.label)


def _subagent_descriptor_event(data: dict, event: _Judged) -> None:
    shapes.subagent_descriptor(data, event.label)


def _model_selection_policy(data: dict, event: _Judged) -> None:
    label = event.label
    seen: set = set()

    def route(member, member_label):
        item = need_object_with(member, member_label, ("provider", "model"))
        need_non_empty_string(item["provider"], f"{member_label} provider")
        need_non_empty_string(item["model"], f"{member_label} model")
        key = (item["provider"], item["model"])
        if key in seen:
            raise fail(f"{label} allowedModels", f"repeats route {key[0]}/{key[1]}")
        seen.add(key)

    if not need_array(data.get("allowedModels"), f"{label} allowedModels", route):
        raise fail(f"{label} allowedModels", "must be non-empty")


def _team_member(data: dict, event: _Judged) -> None:
    label = event.label
    shapes.team_selector(data, label)
    member = need_object_with(data.get("member"), f"{label} member",
                               ("id", "name", "description", "provider", "context", "phase"), ("error",))
    need_non_empty_string(member["id"], f"{label} member id")
    for key in ("name", "description", "provider"):
        need_string(member[key], f"{label} member {key}")
    need_literal(member["context"], ("fresh", "fork"), f"{label} member context")
    need_literal(member["phase"], ("provisioning", "active", "failed"), f"{label} member phase")
    if "error" in member:
        need_string(member["error"], f"{label} member error")


def _team_message_delivered(data: dict, event: _Judged) -> None:
    label = event.label
    shapes.team_selector(data, label)
    need_non_empty_string(data.get("messageId"), f"{label} messageId")
    need_non_empty_string(data.get("targetId"), f"{label} targetId")


def _team_message_queued(data: dict, event: _Judged) -> None:
    label = event.label
    shapes.team_selector(data, label)
    message = need_object_with(data.get("message"), f"{label} message",
                                ("id", "senderId", "senderName", "targetId", "delivery", "content"))
    for key in ("id", "senderId", "targetId"):
        need_non_empty_string(message[key], f"{label} message {key}")
    need_string(message["senderName"], f"{label} message senderName")
    need_literal(message["delivery"], ("quiet", "wakeup"), f"{label} message delivery")
    shapes.content_blocks(message["content"], f"{label} message content", event.version)


def _team_task(data: dict, event: _Judged) -> None:
    label = event.label
    shapes.team_selector(data, label)
    task = need_object_with(data.get("task"), f"{label} task",
                             ("id", "revision", "subject", "description", "status", "blockedBy", "writeScopes"),
                             ("ownerId",))
    need_non_empty_string(task["id"], f"{label} task id")
    need_positive(task["revision"], f"{label} task revision")
    need_string(task["subject"], f"{label} task subject")
    need_string(task["description"], f"{label} task description")
    need_literal(task["status"], ("pending", "in_progress", "completed", "deleted"), f"{label} task status")
    if "ownerId" in task:
        need_non_empty_string(task["ownerId"], f"{label} task ownerId")
    need_array(task["blockedBy"], f"{label} task blockedBy", need_non_empty_string)
    need_array(task["writeScopes"], f"{label} task writeScopes", need_string)


def _todo_write(data: dict, event: _Judged) -> None:
    def todo(member, member_label):
        item = need_object_with(member, member_label, ("content", "status"))
        need_string(item["content"], f"{member_label} content")
        need_literal(item["status"], ("pending", "in_progress", "completed"), f"{member_label} status")

    need_array(data.get("todos"), f"{event.label} todos", todo)


def _workflow_agent(data: dict, event: _Judged) -> None:
    label = event.label
    need_non_empty_string(data.get("runId"), f"{label} runId")
    need_positive(data.get("seq"), f"{label} seq")
    if event.kind == "tool-workflow/agent-end":
        need_literal(data.get("outcome"), ("completed", "failed", "cancelled"), f"{label} outcome")
    else:
        need_string(data.get("label"), f"{label} label")
        if "phase" in data:
            need_string(data["phase"], f"{label} phase")
        need_non_empty_string(data.get("childId"), f"{label} childId")


def _workflow_run_end(data: dict, event: _Judged) -> None:
    label = event.label
    need_non_empty_string(data.get("runId"), f"{label} runId")
    need_literal(data.get("stopReason"), ("completed", "cancelled", "error"), f"{label} stopReason")


def _workflow_run_start(data: dict, event: _Judged) -> None:
    label = event.label
    need_non_empty_string(data.get("runId"), f"{label} runId")
    need_non_empty_string(data.get("name"), f"{label} name")


def _tool_call(data: dict, event: _Judged) -> None:
    label = event.label
    shapes.turn_and_step(data, label)
    need_non_empty_string(data.get("callId"), f"{label} callId")
    need_non_empty_string(data.get("name"), f"{label} name")
    need_string(data.get("arguments"), f"{label} arguments")


def _code_dispatch(data: dict, event: _Judged) -> None:
    label = event.label
    for key in ("rootCallId", "parentCallId", "subCallId", "name"):
        need_non_empty_string(data.get(key), f"{label} {key}")
    if event.kind == "tool/code-dispatch":
        need_boolean(data.get("isError"), f"{label} isError")
        shapes.content_blocks(data.get("content"), f"{label} content", event.version)


def _tool_result(data: dict, event: _Judged) -> None:
    label = event.label
    shapes.turn_and_step(data, label)
    shapes.message(data.get("message"), f"{label} message", event.version, "tool")
    if "error" in data:
        error = need_object_with(data["error"], f"{label} error", ("name", "code"))
        need_non_empty_string(error["name"], f"{label} error name")
        need_non_empty_string(error["code"], f"{label} error code")


def _turn_end(data: dict, event: _Judged) -> None:
    label = event.label
    need_count(data.get("turn"), f"{label} turn")
    shapes.turn_end_reason(data.get("reason"), f"{label} reason", event.version)


def _turn_start(data: dict, event: _Judged) -> None:
    need_count(data.get("turn"), f"{event.label} turn")


def _user_message(data: dict, event: _Judged) -> None:
    shapes.message(data, event.label, event.version, "user")


def _web_search_request(data: dict, event: _Judged) -> None:
    label = event.label
    need_non_empty_string(data.get("endpoint"), f"{label} endpoint")
    need_non_empty_string(data.get("apiVersion"), f"{label} apiVersion")
    shapes.web_search_body(data.get("body"), f"{label} body")


CHECKERS: dict[str, Callable[[dict, _Judged], None]] = {
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
