"""Every rule of ``dshctl validate`` has a negative sample (``tests/mutate.py``) that trips it with the
documented exit status, and every valid sample validates clean."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import mutate
from conftest import SAMPLES
from dshctl.source import resolve
from dshctl.options import ValidateOptions
from dshctl.validate import exit_status, validate_log, validate_paths
from dshctl.validate.rules import LEVELS, RULES

MUTANTS = mutate.mutants()


def _validate(path: Path):
    return validate_log(resolve(str(path))[0])


@pytest.mark.parametrize("m", MUTANTS, ids=[m.id for m in MUTANTS])
def test_mutant_trips_its_rule(m: mutate.Mutant, tmp_path: Path):
    path = tmp_path / f"mutant{m.suffix}"
    path.write_bytes(m.build())
    report = _validate(path)
    rules = {f.rule for f in report.findings}
    if m.absent:
        assert m.rule not in rules, report.findings
    else:
        assert m.rule in rules, [(f.rule, f.message) for f in report.findings]
    assert exit_status([report], m.strict) == m.exit, [(f.rule, f.severity, f.message) for f in report.findings]
    for finding in report.findings:
        assert finding.rule in RULES
        assert finding.severity in ("error", "warning")
        assert finding.file == str(path)


def test_every_rule_has_a_negative_sample():
    covered = {m.rule for m in MUTANTS if not m.absent}
    assert set(RULES) - covered == set()


def test_rule_registry_is_well_formed():
    for rule_id, rule in RULES.items():
        level, _, name = rule_id.partition("/")
        assert level in LEVELS and name and name == name.lower() and " " not in name
        assert rule.severity in ("error", "warning")
        assert rule.summary and rule.source and rule.section.startswith(("§", "corpus"))
        assert rule.beyond_dsh == (level in ("stream", "settlement", "grammar"))


VALID = sorted(p.name for p in SAMPLES.iterdir() if p.is_file() and ".jsonl" in p.name)


@pytest.mark.parametrize("name", VALID)
def test_samples_validate_clean(name: str):
    report = _validate(SAMPLES / name)
    errors = [(f.rule, f.message) for f in report.findings if f.severity == "error"]
    assert errors == []
    assert exit_status([report], False) == 0
    warnings = {f.rule for f in report.findings}
    if name.startswith("torn-tail"):
        assert "codec/torn-tail" in warnings
        assert exit_status([report], True) == 1  # --strict: a torn tail fails
    else:
        # dsh's own max-tokens stop leaves the tool-call block open (adapter rule 6, tolerated)
        assert warnings <= {"grammar/max-tokens-open"}


def test_sessions_root_validates_clean():
    reports = validate_paths([str(SAMPLES / "sessions")], ValidateOptions(jobs=1))
    assert len(reports) >= 3
    assert exit_status(reports, False) == 0


def test_ignore_by_rule_and_level(tmp_path: Path):
    m = next(m for m in MUTANTS if m.rule == "settlement/content")
    path = tmp_path / "m.jsonl"
    path.write_bytes(m.build())
    ref = resolve(str(path))[0]
    assert exit_status([validate_log(ref, ValidateOptions(ignore="settlement/content"))], False) == 0
    assert exit_status([validate_log(ref, ValidateOptions(ignore="settlement"))], False) == 0


def test_fatal_findings_cannot_be_ignored(tmp_path: Path):
    m = next(m for m in MUTANTS if m.rule == "codec/header")
    path = tmp_path / "m.jsonl"
    path.write_bytes(m.build())
    report = validate_log(resolve(str(path))[0], ValidateOptions(ignore="codec"))
    assert report.unreadable and exit_status([report], False) == 2
    assert [f.rule for f in report.findings] == ["codec/header"]


def test_max_errors_suppresses_the_rest(tmp_path: Path):
    objs = mutate.load(mutate.V2)
    for obj in objs[1:]:
        if obj["type"] in ("turn/start", "step/start", "step/end", "turn/end", "request/context"):
            obj["surfaceOp"] = "append"  # a refusal per event (codec/envelope-keys)
    path = tmp_path / "many.jsonl"
    path.write_bytes(mutate.dump(objs))
    full = validate_log(resolve(str(path))[0])
    limited = validate_log(resolve(str(path))[0], ValidateOptions(max_errors=2))
    assert full.errors > 2
    assert limited.errors == 2 and limited.suppressed == full.errors - 2
    assert exit_status([limited], False) == 1


def test_every_released_event_type_has_its_semantic_checker():
    from dshctl.validate import payload

    released = set(payload.V0_DISPOSITIONS) | set(payload.V2_DISPOSITIONS)
    # session/end-seed has nothing beyond its members; assistant/attempt is judged by the migration itself
    assert set(payload.checkers.CHECKERS) == released - {"session/end-seed", "assistant/attempt"}


@pytest.mark.parametrize("kind, data, first", [
    ("llm/retry", {"retryId": "", "turn": -1, "step": 1}, "llm/retry 7 retryId must be a non-empty string"),
    ("llm/retry", {"retryId": "r", "turn": -1, "step": "x"}, "llm/retry 7 turn must be a non-negative safe integer"),
    ("hook/invoked", {"turn": 1, "point": "p", "dialect": "x", "matcher": 3}, "hook/invoked 7 dialect must be one of claude-code, codex"),
    ("compaction/summary", {"llmStreamCall": True, "compactionId": ""}, "compaction/summary 7 llmStreamCall requires rawOutput"),
    ("turn/end", {"turn": 1, "reason": {"kind": "aborted", "reason": {"kind": "nope"}}},
     "turn/end 7 reason abort kind must be one of user, parent, disposed, legacy"),
])
def test_semantic_checks_report_the_first_member_at_fault(kind, data, first):
    from dshctl.validate.payload import PayloadError, semantics

    with pytest.raises(PayloadError) as raised:
        semantics(kind, 7, data, 0)
    assert str(raised.value) == first


def test_validate_log_takes_a_path_a_pathlike_or_a_logref(tmp_path: Path, monkeypatch):
    import io

    import msgspec

    from dshctl.validate.findings import LogReport

    sample = SAMPLES / "tour.session.v2.jsonl"
    by_ref = validate_log(resolve(str(sample))[0])
    for source in (str(sample), sample):
        report = validate_log(source)
        assert isinstance(report, LogReport) and isinstance(report, msgspec.Struct)
        assert report.to_json() == by_ref.to_json()
    missing = validate_log(tmp_path / "nope.jsonl")
    assert missing.unreadable and [f.rule for f in missing.findings] == ["codec/read"]
    assert missing.file == str(tmp_path / "nope.jsonl")

    class Stdin:
        buffer = io.BytesIO(sample.read_bytes())

    for source in ("-", lambda: resolve("-")[0]):
        Stdin.buffer = io.BytesIO(sample.read_bytes())
        monkeypatch.setattr(sys, "stdin", Stdin)
        spooled = validate_log(source() if callable(source) else source)
        assert spooled.file == "<stdin>" and spooled.events == by_ref.events
        assert [f.to_json()["message"] for f in spooled.findings] == [f.to_json()["message"] for f in by_ref.findings]
