"""The rule registry of ``dshctl validate``: every check, its level, severity, and where dsh states it.

Levels, in checking order:

* ``codec`` — what dsh's own restore refuses: the physical codec (header, envelope, seq, time, packed
  rows, ``sourceEventSeqs``), vocabulary, payload admission, the fork cut. Reference: the released npm
  packages ``@deepseek-ai/dsh-session-format{,-v0-to-v1,-v1-to-v2}@0.1.3-alpha.2`` and
  ``-v2-to-v3@0.1.5-alpha.1`` (FORMAT.md tags [v01], [v12], [v23]).
* ``stream`` — strict expansion of every embedded (v2+) or folded (v0/v1) assistant stream.
* ``settlement`` — every ``assistant/message`` agrees with its stream.
* ``grammar`` — the per-attempt adapter contract (FORMAT §4.7).
* ``relationships`` — cross-event rules dsh checks when it restores or migrates a log
  ([v01] ``assertReleasedArtifactRelationships`` and the v1→v2 fold).

``stream``, ``settlement`` and ``grammar`` go *beyond dsh's load*: dsh replays streams only when it
publishes a migrated generation (FORMAT §8.7), and checks the adapter contract only in a dev-time
companion. (For v0/v1 logs dsh's own v1→v2 fold packs every chunk event, so a chunk it cannot pack is
refused on load: ``stream/chunk`` marks those findings.)

Damage rules (``codec/json``, ``codec/packed-row``, ``codec/seq-dense``, ``codec/record``) follow dsh's
committed-region rule (FORMAT §8.5): when a later record is a ``turn/end`` the log is corrupt — an
error and exit status 2; otherwise dsh drops the damaged record and everything after it as the crash
boundary, and the finding is a warning (an error with ``--strict``).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LEVELS", "LEVEL_SUMMARIES", "Rule", "RULES", "BEYOND_DSH_LEVELS", "get_rule"]

LEVELS = ("codec", "stream", "settlement", "grammar", "relationships")
BEYOND_DSH_LEVELS = frozenset({"stream", "settlement", "grammar"})

LEVEL_SUMMARIES = {
    "codec": "header keys per generation, version, delegationDepth, isSeeded/seedLength and the inherited cut "
             "against the session/end-seed marker; envelope keys; dense seq; safe-integer time; packed v0 rows; "
             "range-encoded sourceEventSeqs; surfaceOp; unknown event types (refused unless ignorable: true; "
             "released v0 inventories are closed even then); payload admission of the released inventory; zstd "
             "framing; torn tail. dsh's load checks these (restore)",
    "stream": "strict expansion of every embedded (v2+) stream, every record rule of expandAssistantStream, and "
              "every chunk against the StreamChunk union; v0/v1 chunk events as dsh's v1→v2 fold packs them. "
              "Beyond dsh's load: dsh checks them only when it publishes a migrated generation (v0 chunk "
              "packing: on load)",
    "settlement": "each assistant/message equals its assembled stream: message.content (or the interrupted "
                  "blocks), data.usage (the last usage chunk), message.source.replayState. Beyond dsh's load "
                  "(publication only)",
    "grammar": "the per-attempt adapter contract (FORMAT.md §4.7): usage before finish, nothing after finish, "
               "deltas after their block-end, a second block-end, reopened or unopened indexes, open blocks at "
               "finish, a max-tokens message still carrying tool calls. Beyond dsh's load (a dev-time invariant "
               "only)",
    "relationships": "turn/step nesting and numbering, a step/end for every step, tool call → result pairing "
                     "(advertised tool-call blocks need their tool/call and tool/result in the step), retry "
                     "chains (numbering, one retryId, llm/retry-started pairing, provider), title messageSeqs, "
                     "surface replacement, compaction brackets, commands, delivery markers, code dispatch, the "
                     "v3 system head, v0 chunk provenance. dsh's load checks these (restore and migration)",
}
"""What each level checks and whether dsh's own load does (``dshctl(1)`` shows it above the level's rules)."""


@dataclass(frozen=True)
class Rule:
    id: str
    severity: str  # "error" | "warning"
    summary: str
    source: str  # where dsh states the rule
    section: str  # FORMAT.md section(s)
    fatal: bool = False  # a finding makes the log unreadable (exit 2)
    damage: bool = False  # follows the committed-region rule (error when committed, else a warning)

    @property
    def level(self) -> str:
        return self.id.split("/", 1)[0]

    @property
    def beyond_dsh(self) -> bool:
        return self.level in BEYOND_DSH_LEVELS


V01 = "@deepseek-ai/dsh-session-format-v0-to-v1@0.1.3-alpha.2"
V12 = "@deepseek-ai/dsh-session-format-v1-to-v2@0.1.3-alpha.2"
V23 = "@deepseek-ai/dsh-session-format-v2-to-v3@0.1.5-alpha.1"
FMT = "@deepseek-ai/dsh-session-format@0.1.3-alpha.2"
K = "knyazev741/deepseek-harness@1376315f"

_RULES = [
    # ------------------------------------------------------------------ codec: reading and framing
    Rule("codec/read", "error", "the bytes can be read: file exists, zstd frames are intact (complete frames decode, "
         "checksums match, each ends on a record boundary), lines are within the size limit",
         f"JSONL backend index.ts readRaw / zstd.ts; {K} generation.ts scanZstdFrames", "§1.6, §1.7", fatal=True),
    Rule("codec/zstd-header-frame", "error", "in a zstd log the first frame holds exactly the header line",
         f"{K} session-persistence-jsonl index.ts assertZstdHeaderFrame", "§1.6"),
    Rule("codec/torn-tail", "warning", "the log ends on a complete line (raw) or a complete frame (zstd); "
         "a torn tail is dropped by dsh and fails only with --strict",
         "session-persistence-jsonl format.ts SessionLogScanner; " + K + " generation.ts", "§1.6, §8.5"),
    Rule("codec/fixture-form", "warning", "events carry envelope seq/time; dsh's projected test-fixture form has neither "
         "and needs materialization (seq by position, placeholder substitution) before dsh can load it; "
         "dshctl validates it as materialized",
         "packages/test-support/acp-snapshot/src/normalize.ts omitFixtureEnvelope; llm-replay parseSessionLog",
         "§1.11, corpus README §1"),
    # ------------------------------------------------------------------ codec: header
    Rule("codec/header", "error", "line 1 is a JSON object with type \"session\" and a numeric version",
         f"{FMT} inspectSessionFormatVersion; format.ts fromHeaderLine", "§1.9", fatal=True),
    Rule("codec/version", "error", "the version is a non-negative integer no newer than v4 (newer: written by a newer dsh)",
         f"{FMT} readHeader (status unsupported); {K} format.ts refuseForeignFormatVersion", "§1.9, §2.11", fatal=True),
    Rule("codec/header-keys", "error", "the header has exactly the keys of its generation "
         "(v0/v1: type, version, id, createdAt, delegationDepth + cwd, parentSession, seedLength, origin, agentPreset; "
         "v2+: isSeeded instead of seedLength)",
         f"{V01} decodePhysicalHeader; {V12} decodePhysicalHeader; {V23} releasedV3SessionFormatCodec", "§1.9, §2.10"),
    Rule("codec/header-fields", "error", "header values: id a string, createdAt a non-negative safe integer, cwd an absolute path, "
         "parentSession/agentPreset strings, origin \"subagent\", isSeeded a boolean, seedLength a count",
         f"{V01} decodePhysicalHeader, assertReleasedSessionFormatHeader; {V12} assertReleasedV2Header", "§1.9"),
    Rule("codec/delegation-depth", "error", "the header has delegationDepth, a non-negative safe integer (not -0); "
         "optional in dsh's TypeScript type but mandatory on disk",
         f"{V01} decodePhysicalHeader; {V12} decodePhysicalHeader; core/session index.ts validateSessionHeader", "§1.9, §9 #4"),
    Rule("codec/seed-cut", "error", "the inherited cut agrees with the header: v0 seedLength within the log and not "
         "splitting an attempt; v2+ isSeeded exactly when a session/end-seed {inherited:true} exists (the last one is the cut)",
         f"{V01} scanRows finish; {V12} createDecoder finish, assertAttemptCut, validateReleasedV2Artifact", "§1.9, §2.6"),
    # ------------------------------------------------------------------ codec: records
    Rule("codec/json", "error", "every body line is one JSON object (no blank lines, no null, no arrays)",
         f"format.ts SessionLogScanner; {V01} scanRows; {V12} createDecoder", "§1.8, §8.5", damage=True),
    Rule("codec/seq-dense", "error", "envelope seq is dense from 0: the i-th logical event (rows expanded) has seq i",
         f"format.ts consumeEventLine; {V01} scanRows; {V12} createDecoder", "§8.1, §8.5", damage=True),
    Rule("codec/packed-row", "error", "v0/v1 packed chunk rows have exact keys, a non-empty string payload, "
         "one safe-integer dt per further member, count turn/step/index, safe seq and member times",
         f"core/session chunk-rows.ts decodeStorageRecord; {V01} decodePackedRun", "§2.4", damage=True),
    Rule("codec/record", "error", "v2+ rows pass the physical decoder: required type/seq/time/data, no other top-level key, "
         "string type, safe-integer time, literal ignorable, decodable sourceEventSeqs "
         "(v3+: also the canonical event admission of the v3 codec)",
         f"{V12} decodeEvent; {V23} releasedV3SessionFormatCodec assertV3Event", "§2.2, §3.1", damage=True),
    Rule("codec/envelope-keys", "error", "event envelopes have exactly type, seq, time, data plus ignorable; surface events "
         "may add sourceEventSeqs and surfaceOp, other known events may not",
         f"{V12} validateReleasedV2Artifact; {V23} assertV3Event; core/session index.ts assertSessionEventEnvelope", "§3.1"),
    Rule("codec/time", "error", "envelope time is a safe integer (not -0)",
         f"{V12} validateReleasedV2Artifact; {V01} assertReleasedArtifactCoordinates", "§3.1, §8.1"),
    Rule("codec/ignorable", "error", "ignorable, when present, is literally true",
         f"{V12} decodeEvent, validateReleasedV2Artifact", "§3.1"),
    Rule("codec/unknown-type", "error", "every event type is in the generation's vocabulary; v2+ may skip an unknown type "
         "marked ignorable:true, released v0/v1 inventories are closed even for ignorable; retired legacy types "
         "(request/header-delta, mode/set, request/header reason fallback) are refused",
         f"{V01} assertReleasedArtifactCoordinates, assertSupportedLegacyType; {V12} validateReleasedV2Artifact; "
         "coordinator.ts assertEventsSupported", "§3.3, §2.5"),
    Rule("codec/source-event-seqs", "error", "sourceEventSeqs (flat or [start,end] range form) decode to unique, non-negative, "
         "earlier seqs, strictly increasing when ranges are used; non-empty except on a v0 assistant/message; "
         "not on v2+ assistant/message",
         f"{V12} decodeSeqRanges; {V01} assertReleasedSurfaceMetadata; {V23} assertV3Event", "§2.8, §3.2"),
    Rule("codec/surface-op", "error", "surface events carry surfaceOp: \"append\" or an exact replace op "
         "(v0-v2 {op, start, end}, v3+ {op, startSeq, endSeq}) naming earlier seqs; other events carry none",
         f"{V01} assertReleasedArtifactRelationships applySurface; {V23} assertV3Event, canonicalizeTransformedEvent",
         "§3.1, §3.2"),
    Rule("codec/settlement-fields", "error", "assistant/message and assistant/attempt carry turn and step (non-negative safe "
         "integers) and an array stream (v2+); checked by dsh's ordinary restore",
         f"{K} core/session fromRestore settlement-shape check; {V12} RELEASED_V2_EVENT_DISPOSITIONS", "§8.7"),
    Rule("codec/payload", "error", "event payloads match the released inventory: exact data members per type and their "
         "semantics (messages, sources, content blocks, usage, failures, retry, titles, ...); v3+ admission "
         "(system/message shape, no request/header system, canonical empty fields, error tool results)",
         f"{V01} RELEASED_V0_EVENT_DISPOSITIONS, assertReleasedEventPayload, assertReleasedPayloadSemantics; "
         f"{V23} assertV3Event, assertV3StructuralRow", "§2.5, §2.7, §3.3-§3.6"),
    Rule("codec/payload-v3-migration", "warning", "a v2 log passes the admission dsh 0.1.5+ applies when it migrates the log to "
         "v3 on open (payload semantics, content and source kinds, surface metadata); the v2 writer itself accepts it",
         f"{V23} assertEvent, assertOwnedContent, assertSource", "§2.7"),
    Rule("codec/descriptor-version", "error", "a v0 subagent/descriptor has version 3: the released v0→v1 migration refuses "
         "any other version (\"uses unsupported descriptor version\"), though 0.1.1-rc.2 wrote 2; a v1 payload with "
         "another version passes unread; v2 loads any (0.1.5's v2→v3 migration wants 3: codec/payload-v3-migration); "
         "v3 and v4 admission do not look at it",
         f"{V01} assertReleasedEventPayload; {V23} assertEvent", "§2.5, §9 #22"),
    Rule("codec/working-directory", "error", "working-directory/change (dsh 0.2.1-alpha.2, v4) carries cwd, the "
         "session's new effective directory: an absolute path string (other members pass: v4 adds optional ones "
         "without a version bump); the event is not ignorable, so dsh before 0.2.1-alpha.2 refuses the log",
         "packages/session/working-directory SessionEventMap working-directory/change; "
         "docs/persistence-changes/2026-09-13-working-directory.md", "§3.5, §2.10.11"),
    Rule("codec/deliverables", "warning", "deliverables/presented carries turn (a non-negative safe integer), callId "
         "(a non-empty string) and files, an array of {path: string, description?: string}, as dsh's present tool "
         "declares them (other members pass); a warning: dsh's load is not known to check this payload",
         "packages/deliverables/tool-present/src/types.ts PresentedFile", "§3.5, §2.10.11"),
    # ------------------------------------------------------------------ stream (beyond dsh's load)
    Rule("stream/not-object", "error", "every stream record is a non-array object",
         f"{K} llm assistant-stream.ts expandAssistantStream", "§4.4"),
    Rule("stream/type", "error", "every record type is text-chunks, reasoning-chunks, tool-call-chunks or chunk",
         f"{K} assistant-stream.ts expandAssistantStream", "§4.4"),
    Rule("stream/exact-keys", "error", "records have exact keys (runs: type, time0, index, dt, texts|id+args (+name); raw: type, time, chunk)",
         f"{K} assistant-stream.ts expandAssistantStream", "§4.4"),
    Rule("stream/texts", "error", "text/reasoning runs carry a non-empty array of strings",
         f"{K} assistant-stream.ts expandAssistantStream", "§4.4"),
    Rule("stream/args", "error", "tool-call runs carry a non-empty array of strings",
         f"{K} assistant-stream.ts expandAssistantStream", "§4.4"),
    Rule("stream/id", "error", "tool-call runs carry a non-empty id",
         f"{K} assistant-stream.ts expandAssistantStream", "§4.4"),
    Rule("stream/name", "error", "a tool-call run's name, when present, is a non-empty string",
         f"{K} assistant-stream.ts expandAssistantStream", "§4.4"),
    Rule("stream/safe-integer", "error", "time0, every dt entry and raw time are safe integers",
         f"{K} assistant-stream.ts expandAssistantStream", "§4.4"),
    Rule("stream/index", "error", "run index is a non-negative safe integer (not -0)",
         f"{K} assistant-stream.ts expandAssistantStream", "§4.4"),
    Rule("stream/dt-length", "error", "a run has exactly one dt entry per member after the first",
         f"{K} assistant-stream.ts expandAssistantStream", "§4.4"),
    Rule("stream/member-time", "error", "every reconstructed member time stays a safe integer",
         f"{K} assistant-stream.ts expandAssistantStream", "§4.4"),
    Rule("stream/raw-chunk", "error", "a raw record's chunk is a non-null, non-array, lossless-JSON object",
         f"{K} assistant-stream.ts expandAssistantStream", "§4.4"),
    Rule("stream/chunk", "error", "every chunk is a StreamChunk: a known type with its exact fields "
         "(v0/v1 chunk events dsh's v1→v2 fold cannot pack are refused on load)",
         f"llm types.ts StreamChunk; {V01} streamChunkValue; dsh-llm AssistantStreamAccumulator.push", "§4.1, §4.3"),
    # ------------------------------------------------------------------ settlement (beyond dsh's load)
    Rule("settlement/assemble", "error", "the stream assembles: no unclosed block of a kind the assembler cannot finish",
         f"llm assembler.ts BlockAssembler.blocks; {K} generation.ts assertCurrentAssistantStreams", "§4.6, §8.7"),
    Rule("settlement/content", "error", "message.content equals the assembled blocks (interrupted messages: the "
         "interrupted blocks)", f"{K} session-persistence-jsonl generation.ts assertCurrentAssistantStreams", "§4.6, §8.7"),
    Rule("settlement/usage", "error", "data.usage equals the stream's last usage chunk (both may be absent)",
         f"{K} generation.ts assertCurrentAssistantStreams", "§6, §8.7"),
    Rule("settlement/replay-state", "error", "message.source.replayState equals the assembler's (pruned) replay state",
         f"{K} generation.ts assertCurrentAssistantStreams", "§4.6, §4.9, §8.7"),
    # ------------------------------------------------------------------ grammar (beyond dsh's load)
    Rule("grammar/block-start", "error", "a block-start index is not repeated while that block is open",
         "llm invariant.ts; docs/subsystems/llm-streaming.md adapter contract rule 1", "§4.7 (1)"),
    Rule("grammar/index-reuse", "error", "a block index is not reopened after its block-end within one attempt "
         "(blocks may interleave, but a reused index is silently merged by the assembler)",
         "llm invariant.ts; llm-streaming.md rules 1, 8", "§4.7 (1, 8), §4.6"),
    Rule("grammar/delta-target", "error", "a delta addresses an open block of the matching type",
         "llm invariant.ts; llm-streaming.md rule 2", "§4.7 (2)"),
    Rule("grammar/delta-after-end", "error", "no delta for a block after its block-end (the assembler ignores it)",
         "llm invariant.ts; llm-streaming.md rule 2; assembler.ts", "§4.7 (2), §4.6"),
    Rule("grammar/block-end", "error", "a block-end closes an open block and its block.type equals the opened blockType",
         "llm invariant.ts; llm-streaming.md rule 3", "§4.7 (3)"),
    Rule("grammar/second-block-end", "error", "a block is closed once (the assembler keeps the first close)",
         "llm invariant.ts; assembler.ts", "§4.7 (3), §4.6"),
    Rule("grammar/usage-repeat", "error", "at most one usage chunk per attempt", "llm-streaming.md rule 4", "§4.7 (4)"),
    Rule("grammar/usage-order", "error", "usage comes before finish", "llm-streaming.md rule 5", "§4.7 (5)"),
    Rule("grammar/after-finish", "error", "nothing follows finish", "llm-streaming.md rule 5", "§4.7 (5)"),
    Rule("grammar/open-at-finish", "error", "no block is open at finish unless the finish is error or aborted",
         "llm-streaming.md rule 6; llm index.ts adapterFailureChunk", "§4.7 (6)"),
    Rule("grammar/max-tokens-open", "warning", "a max-tokens finish with open blocks (dsh tolerates it and drops the "
         "truncated tool calls)", "llm-streaming.md rule 6; examples/acp-agent max-tokens-continue fixture", "§4.7 (6)"),
    Rule("grammar/max-tokens-tool-calls", "error", "a message settled by a max-tokens finish carries no tool-call block "
         "(the assembler drops them; a truncated call is never executed)", "llm assembler.ts blocks()", "§4.6, §9 #14"),
    Rule("grammar/no-finish", "warning", "a settled, non-interrupted assistant/message's stream ends with finish",
         "llm-streaming.md rule 7", "§4.7 (7)"),
    # ------------------------------------------------------------------ relationships
    Rule("relationships/turn-order", "error", "turn/start only when no turn is open, numbered 1, 2, 3 ...; turn/end names "
         "the open turn", f"{V01} assertReleasedArtifactRelationships; {V12} transformReleasedEvent", "§3.4, §8.3"),
    Rule("relationships/step-order", "error", "step/start only inside the open turn with no step open, numbered 1, 2, 3 ... "
         "per turn; step/end names the open step", f"{V01} assertReleasedArtifactRelationships", "§3.4, §8.3"),
    Rule("relationships/step-end", "error", "every step is closed by its step/end before turn/end",
         f"{V01} assertReleasedArtifactRelationships", "§3.4, §8.3"),
    Rule("relationships/open-turn", "warning", "the log does not end inside an open turn (a crash: dsh appends "
         "interrupted closers on its next open)", "core/session repair.ts interruptedTurnClosers", "§8.6"),
    Rule("relationships/in-step", "error", "settlements, chunks, tool calls, appended tool results, system/developer "
         "messages name the open turn and step", f"{V01} assertReleasedArtifactRelationships requireOpenStep; "
         f"{V23} restoreReleasedV3Artifact", "§8.3"),
    Rule("relationships/in-turn", "error", "request/header, request/context, tool dispatch events and replacement tool "
         "results occur inside an open turn", f"{V01} assertReleasedArtifactRelationships", "§8.3"),
    Rule("relationships/tool-call-pairing", "error", "each tool/call matches one advertised tool-call block of the step's "
         "assistant/message (same id, name, arguments), once; a message does not re-advertise a call id",
         f"{V01} assertReleasedArtifactRelationships", "§3.4, §8.3"),
    Rule("relationships/tool-result-pairing", "error", "each appended tool/result answers a started call of the step "
         "(an advertised-but-unstarted call only through the exact TOOL_NOT_STARTED repair)",
         f"{V01} assertReleasedArtifactRelationships isExactToolNotStartedRepair", "§3.4, §8.3, §8.6"),
    Rule("relationships/tool-unresolved", "error", "no advertised tool call is left without its tool/result at "
         "step/end or turn/end", f"{V01} assertReleasedArtifactRelationships assertNoUnresolvedTools", "§3.4, §8.3"),
    Rule("relationships/retry-chain", "error", "llm/retry sits on the open (or just-closed) step of the open turn; retry "
         "numbers run 1, 2, 3 ... per chain (turn, step, provider, policyKey) with one retryId, never reused",
         f"{V01} assertReleasedArtifactRelationships assertRetryChain", "§3.4.2, §4.8"),
    Rule("relationships/retry-provider", "error", "llm/retry names the provider of the turn's latest request/header",
         f"{V01} assertReleasedArtifactRelationships", "§3.4.2"),
    Rule("relationships/retry-started", "error", "each llm/retry-started pairs with exactly one earlier llm/retry "
         "(same retryId, retry, turn, step)", f"{V01} assertReleasedArtifactRelationships", "§3.4.2"),
    Rule("relationships/title-sources", "error", "session/title and session/title-llm-request messageSeqs cite earlier human "
         "user/message events (empty exactly for a user-chosen title); a title request holds one framed user message",
         f"{V01} assertTitleSources", "§3.5"),
    Rule("relationships/surface-replace", "error", "a replace op names a range of the current surface and its "
         "sourceEventSeqs cite every shadowed node", f"{V01} applySurface; core/session surface.ts", "§3.2"),
    Rule("relationships/compaction", "error", "compaction/start, summary, end bracket correctly (one open at a time, "
         "matching ids and turn, one summary before a successful end, shadowed spans on the current surface)",
         f"{V01} assertReleasedArtifactRelationships", "§3.5, §8.3"),
    Rule("relationships/command", "error", "command/run ids are unique; command/done follows its command/run and a "
         "success may cite a non-command sourceEventSeq", f"{V01} assertReleasedArtifactRelationships", "§3.5"),
    Rule("relationships/delivery-marker", "error", "a current-generation delivery marker names this session (unless inherited)",
         f"{V01} assertReleasedArtifactRelationships; {V12} assertSourceDeliveryMarker", "§3.5, §2.10.10"),
    Rule("relationships/code-dispatch", "error", "tool/code-dispatch (v3 tool/ptc-dispatch) events pair with a unique "
         "start of the same root, parent, name and arguments", f"{V01} assertReleasedArtifactRelationships", "§3.5"),
    Rule("relationships/system-head", "error", "v3+: system/message sits in an open step; the first surface node is the "
         "system head, replaced only by a system/message; nothing else shadows it",
         f"{V23} restoreReleasedV3Artifact", "§2.7, §2.10.10"),
    Rule("relationships/chunk-provenance", "error", "v0/v1: an assistant/message cites exactly the chunks of its pending "
         "attempt (or none is pending); the v1→v2 fold refuses anything else",
         f"{V12} transformMessage, matchesChunkSources", "§2.6, §3.2"),
]

RULES: dict[str, Rule] = {rule.id: rule for rule in _RULES}


def get_rule(rule_id: str) -> Rule:
    return RULES[rule_id]
