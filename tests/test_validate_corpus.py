"""Every file of dsh's public fixture corpus gets its expected verdict from ``dshctl validate``.

Expectations follow ../shared/corpus/README.md §2, judged by the rules of dsh's released codec and
migration packages (FORMAT tags [v01], [v12], [v23]). Fixture-form files (no envelope seq/time) carry
the ``codec/fixture-form`` warning and are validated as materialized.
"""

from __future__ import annotations

import pytest

from conftest import CORPUS, HAS_CORPUS, corpus_files
from dshctl.source import resolve
from dshctl.validate import exit_status, validate_log

pytestmark = pytest.mark.corpus

CLEAN, WARNINGS, ERRORS, UNREADABLE = "clean", "warnings", "errors", "unreadable"
FIXTURE = "codec/fixture-form"

# path -> (status without --strict, rules that must be reported)
EXPECTED: dict[str, tuple[str, set[str]]] = {
    # README §2 "Refuse": the header has no version
    "v0/packages-test-support-acp-snapshot-suite-authored-error.jsonl": (UNREADABLE, {"codec/header"}),
    "v0/packages-test-support-acp-snapshot-suite-no-model.jsonl": (UNREADABLE, {"codec/header"}),
    "v0/packages-test-support-acp-snapshot-suite-plain-turn.jsonl": (UNREADABLE, {"codec/header"}),
    # README §2: refused by dsh's production reader for the missing delegationDepth
    "v0/apps-web-fresh-round-trip.jsonl": (ERRORS, {"codec/delegation-depth"}),
    "v0/apps-web-goal-multi-turn-actions.jsonl": (ERRORS, {"codec/delegation-depth"}),
    "v0/apps-web-permission-policy-context.jsonl": (ERRORS, {"codec/delegation-depth"}),
    "v0/apps-web-plan-review.jsonl": (ERRORS, {"codec/delegation-depth"}),
    "v0/apps-web-pwsh-terminal-seed.jsonl": (ERRORS, {"codec/delegation-depth"}),
    # ... and the two incoherent ones must produce validation errors. cordis-tool-round's citations
    # outnumber its own seq, which the released v0 decoder treats as a malformed row; a later turn/end
    # makes that committed-region damage (corrupt log).
    "v0/apps-web-cordis-tool-round.jsonl": (UNREADABLE, {"codec/delegation-depth", "codec/record"}),
    "v0/apps-web-minimal-preset.jsonl": (ERRORS, {"codec/delegation-depth", "relationships/in-step"}),
    # README §2 "Warning only": finish max-tokens with an open tool-call block (adapter rule 6)
    "v0/examples-acp-agent-max-tokens-continue.jsonl": (WARNINGS, {"grammar/max-tokens-open"}),
    "v2/snapshot-form/sdk-max-tokens-continue.session.v2.jsonl": (WARNINGS, {"grammar/max-tokens-open"}),
    # README §2 "Possible refusal (UNKNOWN)": descriptor version 2. The released v0→v1 migration refuses it
    # ([v01] assertReleasedEventPayload throws SessionFormatUnsupportedMigrationError for a v0 source): an error.
    "v0/examples-acp-agent-subagent-continuable-session-1.jsonl": (ERRORS, {"codec/descriptor-version"}),
    "v0/examples-acp-agent-subagent-fork-in-process-session-1.jsonl": (ERRORS, {"codec/descriptor-version"}),
    "v0/examples-acp-agent-subagent-max-tokens-partial-session-1.jsonl": (ERRORS, {"codec/descriptor-version"}),
    "v0/examples-acp-agent-subagent-mixed-session-2.jsonl": (ERRORS, {"codec/descriptor-version"}),
    # A `compact` plugin replacement with no compaction/start: the released relationship validator
    # ([v01] assertReleasedArtifactRelationships, user/message case) refuses it, although the corpus
    # README lists the file among those that load (0.1.1-rc.2 accepted it).
    "v0/examples-acp-agent-agent-instructions.jsonl": (ERRORS, {"relationships/compaction"}),
    # complete envelopes: nothing to report at all
    "v2/complete-envelope/webworker-preview-showcase.session.v2.jsonl": (CLEAN, set()),
    "v2/complete-envelope/webworker-preview-architecture-review.child.session.v2.jsonl": (CLEAN, set()),
}
ALL = corpus_files("**/*.jsonl", names=True) if HAS_CORPUS else []


def expected(name: str) -> tuple[str, set[str]]:
    # README §2 "Everything else loads (after materialization for fixture-form files)"
    return EXPECTED.get(name, (WARNINGS, {FIXTURE}))


@pytest.mark.parametrize("name", corpus_files("**/*.jsonl", names=True))
def test_corpus_verdict(name: str):
    status, rules = expected(name)
    report = validate_log(resolve(str(CORPUS / name))[0])
    found = {f.rule for f in report.findings}
    assert report.status(False) == status, [(f.rule, f.severity, f.message) for f in report.findings]
    assert rules <= found, found
    errors = {f.rule for f in report.findings if f.severity == "error"}
    if status in (CLEAN, WARNINGS):
        assert not errors
    else:
        assert errors <= rules, errors - rules  # no error beyond the expected ones
    assert exit_status([report], False) == {CLEAN: 0, WARNINGS: 0, ERRORS: 1, UNREADABLE: 2}[status]


def test_table_names_real_files():
    assert set(EXPECTED) <= set(ALL)
    assert len(ALL) == 44


def test_v3_and_v4_corpus_files_are_read_natively():
    for name in ALL:
        if ".v3." in name or name.startswith("v4/"):
            report = validate_log(resolve(str(CORPUS / name))[0])
            assert report.generation in (3, 4) and not report.unreadable
