"""The data members of each released event type: ``(required, optional, opaque)`` per type.

v0/v1: [v01] ``RELEASED_V0_EVENT_DISPOSITIONS`` (FORMAT §2.5, §3.4–§3.5); v2: the released-v2 inventory of
``-v1-to-v2`` as 0.1.5's v2→v3 migration reads it (§2.7). An *opaque* member is kept as written and only
has to be lossless JSON.
"""

from __future__ import annotations

__all__ = ["V0_DISPOSITIONS", "V2_DISPOSITIONS"]


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
