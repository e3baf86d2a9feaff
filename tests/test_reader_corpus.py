"""Every file of dsh's public fixture corpus opens, or fails with the documented error.

Expectations per file come from ../shared/corpus/README.md: the logical event count after expanding
packed rows, and which files must be refused.
"""

from __future__ import annotations

import pytest

from conftest import CORPUS
from dshctl.assembler import assemble
from dshctl.errors import FormatError
from dshctl.reader import open_log

pytestmark = pytest.mark.corpus

# file -> logical events after row expansion (None = refused: header has no version)
EXPECTED_V0 = {
    "apps-web-permission-policy-context.jsonl": 813,
    "scripts-python-sdk-single-exe-advanced.jsonl": 84,
    "examples-acp-agent-subagent-continuable-session-1.jsonl": 37,
    "examples-headless-agent-compaction-recovery.jsonl": 31,
    "examples-acp-agent-goal-snapshots-goal-round-driver-session-expected.jsonl": 62,
    "apps-web-pwsh-terminal-seed.jsonl": 18,
    "examples-acp-agent-subagent-max-tokens-partial-session-1.jsonl": 30,
    "examples-acp-agent-packed-chunks.jsonl": 124,
    "examples-acp-agent-subagent-report.jsonl": 56,
    "examples-acp-agent-empty-response-retry.jsonl": 21,
    "packages-test-support-acp-snapshot-suite-no-model.jsonl": None,
    "apps-web-plan-review.jsonl": 343,
    "apps-web-minimal-preset.jsonl": 6,
    "examples-acp-agent-read-image.jsonl": 25,
    "examples-acp-agent-skill-load.jsonl": 34,
    "examples-acp-agent-subagent-mixed-session-2.jsonl": 89,
    "examples-acp-agent-agent-instructions.jsonl": 45,
    "examples-acp-agent-session-title-after-turn.jsonl": 19,
    "packages-test-support-acp-snapshot-suite-authored-error.jsonl": None,
    "examples-headless-agent-semantic-checkpoint-snapshots-tool-outcome-unknown-session-expected.jsonl": 24,
    "apps-web-fresh-round-trip.jsonl": 94,
    "examples-acp-agent-max-tokens-continue.jsonl": 32,
    "examples-acp-agent-cancel.jsonl": 14,
    "examples-acp-agent-error-finish.jsonl": 12,
    "examples-acp-agent-inline-image-prompt.jsonl": 16,
    "examples-acp-agent-subagent-fork-in-process-session-1.jsonl": 99,
    "apps-web-cordis-tool-round.jsonl": 60,
    "packages-test-support-acp-snapshot-suite-plain-turn.jsonl": None,
    "examples-acp-agent-parallel-tool-calls.jsonl": 32,
    "apps-web-goal-multi-turn-actions.jsonl": 2098,
}
EXPECTED_V2_V4 = {
    "v2/complete-envelope/webworker-preview-showcase.session.v2.jsonl": 199,
    "v2/complete-envelope/webworker-preview-architecture-review.child.session.v2.jsonl": 177,
    "v2/snapshot-form/sdk-text-turn.session.v2.jsonl": 22,
    "v2/snapshot-form/sdk-inline-image-prompt.session.v2.jsonl": 15,
    "v2/snapshot-form/sdk-max-tokens-continue.session.v2.jsonl": 23,
    "v2/snapshot-form/acp-cancel.session.v2.jsonl": 15,
    "v2/snapshot-form/session-tool-call-turn.session.v2.jsonl": 20,
    "v2/snapshot-form/sdk-subagent-fork-in-process.child.session.1.v2.jsonl": 29,
    "v2/snapshot-form/session-deepseek-messages-replay.session.v2.jsonl": 20,
    "v2/v3-for-comparison/session-empty-response-retry-current.session.v3.jsonl": 19,
    "v4/snapshot-form/session-tool-call-turn.session.v4.jsonl": 18,
    "v4/snapshot-form/session-read-image.session.v4.jsonl": 18,
    "v4/snapshot-form/session-plugin-manager.session.v4.jsonl": 23,
    "v4/snapshot-form/session-empty-response-retry-current.session.v4.jsonl": 16,
}
# incoherent fixtures whose messages do not match their chunks (corpus README §2)
INCOHERENT = {"apps-web-cordis-tool-round.jsonl", "apps-web-minimal-preset.jsonl"}


def test_expectations_cover_the_whole_corpus():
    on_disk = {str(p.relative_to(CORPUS)) for p in CORPUS.rglob("*.jsonl")}
    listed = {f"v0/{name}" for name in EXPECTED_V0} | set(EXPECTED_V2_V4)
    assert on_disk == listed


def _read(path: Path):
    warnings: list[str] = []
    log = open_log(str(path), on_warning=warnings.append)
    events = list(log.events())
    return log, events, warnings


@pytest.mark.parametrize("name", sorted(EXPECTED_V0))
def test_v0_corpus_file(name):
    expected = EXPECTED_V0[name]
    path = CORPUS / "v0" / name
    if expected is None:
        with pytest.raises(FormatError, match="no numeric version"):
            _read(path)
        return
    log, events, warnings = _read(path)
    assert log.generation == 0
    assert log.fixture, "corpus v0 files are in fixture form"
    assert log.event_count == expected
    assert not any(e.type == "assistant/chunk" for e in events), "chunks are folded into settlements"
    if name.startswith("apps-web-"):
        assert any("delegationDepth" in w for w in warnings)
    if name in INCOHERENT:
        return
    for event in events:
        if event.type == "assistant/message" and event.stream:
            assembler = assemble(event.stream)
            message = event.data["message"]
            blocks = assembler.interrupted_blocks() if event.data.get("interrupted") else assembler.blocks()
            assert blocks == message["content"], (name, event.seq)


@pytest.mark.parametrize("rel", sorted(EXPECTED_V2_V4))
def test_v2_to_v4_corpus_file(rel):
    log, events, warnings = _read(CORPUS / rel)
    assert log.generation == int(rel.split(".v")[-1][0])
    assert log.event_count == len(events) == EXPECTED_V2_V4[rel]
    settlements = [e for e in events if e.type in ("assistant/message", "assistant/attempt")]
    assert settlements and all(e.stream is not None for e in settlements)
    assert not any(e.notes for e in events), [e.notes for e in events if e.notes]


def test_fork_cut_v0_seed_length():
    log, events, _ = _read(CORPUS / "v0" / "examples-acp-agent-subagent-fork-in-process-session-1.jsonl")
    assert log.cut == 42
    assert [e.seq for e in events if e.type == "session/end-seed"] == [42]


def test_fork_cut_v2_inherited_marker():
    log, events, _ = _read(CORPUS / "v2/complete-envelope/webworker-preview-architecture-review.child.session.v2.jsonl")
    assert log.cut == 169


def test_v0_retry_folds_failed_attempt_and_embeds_the_cited_one():
    log, events, _ = _read(CORPUS / "v0" / "examples-acp-agent-empty-response-retry.jsonl")
    kinds = [e.type for e in events if e.type in ("assistant/attempt", "assistant/message", "llm/retry", "llm/retry-started")]
    assert kinds == ["assistant/attempt", "llm/retry", "llm/retry-started", "assistant/message"]
    attempt = next(e for e in events if e.type == "assistant/attempt")
    finish = [r.chunk for r in attempt.stream if getattr(r, "chunk", {}).get("type") == "finish"]
    assert finish and finish[0]["reason"]["kind"] == "error"
    message = next(e for e in events if e.type == "assistant/message")
    assert message.stream and message.notes is None


def test_packed_rows_stay_packed():
    log, events, _ = _read(CORPUS / "v0" / "examples-acp-agent-packed-chunks.jsonl")
    runs = [r for e in events if e.stream for r in e.stream if r.__class__.__name__ != "RawChunk"]
    assert runs and max(len(getattr(r, "texts", None) or r.args) for r in runs) >= 3


def test_legacy_shapes_are_normalized():
    log, events, _ = _read(CORPUS / "v0" / "apps-web-pwsh-terminal-seed.jsonl")
    for event in events:
        if event.type == "turn/start":
            assert set(event.data) == {"turn"}
        if event.type in ("assistant/message", "tool/result"):
            assert "message" in event.data
        if event.type == "user/message":
            assert event.data.get("role") == "user" and event.data.get("id")


def test_max_tokens_fixture_prunes_replay_state():
    log, events, _ = _read(CORPUS / "v0" / "examples-acp-agent-max-tokens-continue.jsonl")
    message = next(e for e in events if e.type == "assistant/message" and e.stream)
    assembled = assemble(message.stream)
    assert assembled.blocks() == message.data["message"]["content"]
    assert assembled.replay_state() == message.data["message"]["source"].get("replayState")
