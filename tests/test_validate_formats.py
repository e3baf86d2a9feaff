"""The four output formats of ``dshctl validate``, the CLI's exit statuses and options."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest

import mutate
from conftest import SAMPLES, invoke as run_cli
from dshctl.options import ValidateOptions
from dshctl.validate import run_validate
from dshctl.validate.rules import RULES


@pytest.fixture()
def logs(tmp_path: Path) -> dict[str, Path]:
    """A clean log, a log with errors, a log with warnings only, an unreadable log."""
    out = {"clean": SAMPLES / "fork-child.session.v3.jsonl", "torn": SAMPLES / "torn-tail.session.v4.jsonl"}
    for key, rule in (("errors", "settlement/content"), ("unreadable", "codec/header")):
        m = next(m for m in mutate.mutants() if m.rule == rule)
        path = tmp_path / f"{key}.session.v2.jsonl"
        path.write_bytes(m.build())
        out[key] = path
    return out


def invoke(*args: str):
    return run_cli("validate", *args)


def test_exit_statuses(logs):
    assert invoke(str(logs["clean"])).exit_code == 0
    assert invoke(str(logs["torn"])).exit_code == 0
    assert invoke("--strict", str(logs["torn"])).exit_code == 1
    assert invoke(str(logs["errors"])).exit_code == 1
    assert invoke(str(logs["unreadable"])).exit_code == 2
    assert invoke(str(logs["clean"]), str(logs["errors"]), str(logs["unreadable"])).exit_code == 2
    assert invoke("--ignore", "no/such-rule", str(logs["clean"])).exit_code == 2
    assert invoke("--format", "yaml", str(logs["clean"])).exit_code == 2
    assert invoke(str(logs["clean"].parent / "missing.jsonl")).exit_code == 2


def test_text_output_and_summary_line(logs):
    result = invoke(str(logs["clean"]), str(logs["errors"]), str(logs["unreadable"]), str(logs["torn"]))
    lines = result.stdout.strip().splitlines()
    assert lines[-1] == "4 logs: 2 clean, 1 with errors, 1 unreadable (3 warnings)"
    assert any("error [settlement/content]" in line and ":" in line for line in lines)
    assert any("unreadable [codec/header]" in line for line in lines)


def test_json_output(logs):
    result = invoke("--format", "json", str(logs["errors"]), str(logs["clean"]))
    document = json.loads(result.stdout)
    assert document["summary"] == {"logs": 2, "clean": 1, "withErrors": 1, "unreadable": 0,
                                   "errors": document["summary"]["errors"], "warnings": 1, "suppressed": 0}
    log = document["logs"][0]
    assert log["status"] == "errors" and log["generation"] == 2
    finding = next(f for f in log["findings"] if f["rule"] == "settlement/content")
    assert set(finding) >= {"rule", "level", "severity", "file", "line", "seq", "turn", "step", "record", "message"}
    assert finding["level"] == "settlement" and finding["line"] >= 2 and finding["turn"] == 1


def test_sarif_structure(logs):
    result = invoke("--format", "sarif", str(logs["errors"]), str(logs["unreadable"]), str(logs["torn"]))
    assert result.exit_code == 2
    sarif = json.loads(result.stdout)
    assert sarif["version"] == "2.1.0" and sarif["$schema"].endswith("sarif-2.1.0.json")
    assert len(sarif["runs"]) == 1
    run = sarif["runs"][0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "dshctl"
    rule_ids = [r["id"] for r in driver["rules"]]
    assert rule_ids == list(RULES)
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"] and rule["defaultConfiguration"]["level"] in ("error", "warning")
        assert rule["properties"]["level"] in ("codec", "stream", "settlement", "grammar", "relationships")
    assert run["results"]
    for result_ in run["results"]:
        assert result_["ruleId"] in rule_ids and rule_ids[result_["ruleIndex"]] == result_["ruleId"]
        assert result_["level"] in ("error", "warning", "note")
        assert result_["message"]["text"]
        location = result_["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"]
        if "region" in location:
            assert isinstance(location["region"]["startLine"], int) and location["region"]["startLine"] >= 1
    levels = {r["ruleId"]: r["level"] for r in run["results"]}
    assert levels["codec/header"] == "error" and levels["codec/torn-tail"] == "warning"
    assert run["invocations"][0]["exitCode"] == 2


def test_junit_structure(logs):
    result = invoke("--format", "junit", str(logs["clean"]), str(logs["errors"]), str(logs["unreadable"]), str(logs["torn"]))
    root = ET.fromstring(result.stdout)
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [str(logs[k]) for k in ("clean", "errors", "unreadable", "torn")]
    for suite in suites:
        cases = suite.findall("testcase")
        assert int(suite.get("tests")) == len(cases)
        assert int(suite.get("failures")) == sum(len(c.findall("failure")) for c in cases)
        assert int(suite.get("errors")) == sum(len(c.findall("error")) for c in cases)
    clean, errors, unreadable, torn = suites
    assert clean.get("failures") == "0" and clean.get("tests") == "5"
    failures = [f for c in errors.findall("testcase") for f in c.findall("failure")]
    assert failures and all(f.get("type") in RULES for f in failures)
    assert any(f.get("type") == "settlement/content" for f in failures)
    assert unreadable.get("errors") == "1" and unreadable.find("testcase/error").get("type") == "codec/header"
    assert "codec/torn-tail" in torn.find("system-out").text
    assert int(root.get("failures")) == sum(int(s.get("failures")) for s in suites)


def test_list_rules(capsys):
    result = invoke("--list-rules")
    assert result.exit_code == 0
    for rule_id in RULES:
        assert rule_id in result.stdout
    assert "beyond dsh's load" in result.stdout
    document = json.loads(invoke("--list-rules", "--format", "json").stdout)
    assert {r["id"] for r in document} == set(RULES)
    assert all(r["dshSource"] and r["formatSection"] for r in document)


def test_max_errors_reports_suppressed(tmp_path: Path):
    objs = mutate.load(mutate.V2)
    for obj in objs[1:]:
        if obj["type"] in ("turn/start", "step/start", "step/end", "turn/end"):
            obj["surfaceOp"] = "append"
    path = tmp_path / "many.jsonl"
    path.write_bytes(mutate.dump(objs))
    result = invoke("--max-errors", "1", "--format", "json", str(path))
    log = json.loads(result.stdout)["logs"][0]
    assert log["errors"] == 1 and log["suppressed"] > 0 and result.exit_code == 1
    text = invoke("--max-errors", "1", str(path)).stdout
    assert "more finding(s) suppressed" in text


def test_stdin(logs, monkeypatch, capsys):
    import io

    data = logs["clean"].read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    status = run_validate(["-"], ValidateOptions(format="json"))
    document = json.loads(capsys.readouterr().out)
    assert status == 0 and document["logs"][0]["file"] == "<stdin>" and document["logs"][0]["status"] == "clean"


def test_many_logs_in_parallel(tmp_path: Path, capsys, monkeypatch):
    from dshctl import many

    monkeypatch.setattr(many, "BATCH_BYTES", 10_000)  # these small logs make several batches
    paths = []
    for index in range(9):
        path = tmp_path / f"log{index}.session.v2.jsonl"
        path.write_bytes((SAMPLES / "tour.session.v2.jsonl").read_bytes())
        paths.append(str(path))
    status = run_validate(paths, ValidateOptions(jobs=2))
    out = capsys.readouterr().out
    assert status == 0 and out.strip().splitlines()[-1] == "9 logs: 9 clean, 0 with errors, 0 unreadable (9 warnings)"


def test_subprocess_exit_status(logs):
    import subprocess

    exe = Path(sys.executable).with_name("dshctl")
    command = [str(exe)] if exe.exists() else [sys.executable, "-m", "dshctl.cli"]
    done = subprocess.run([*command, "validate", str(logs["errors"])], capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "Traceback" not in done.stderr


def test_findings_quoting_log_text_cannot_drive_a_terminal_or_break_xml():
    """A message quoting a log value with escape sequences: pictures in text and JUnit, escapes in JSON."""
    from dshctl.validate.findings import Finding, LogReport
    from dshctl.validate.formats import render

    message = "has key x\x1b]0;t\x07\x1b[2J\x9b\x7f"
    report = LogReport(file="a\x1b.jsonl")
    report.findings.append(Finding(rule="stream/exact-keys", severity="error", message=message, file="a\x1b.jsonl", line=2))
    text = render([report], "text", strict=False)
    assert "a␛.jsonl:2: error [stream/exact-keys] has key x␛]0;t␇␛[2J\ufffd␡" in text
    junit = ET.fromstring(render([report], "junit", strict=False))
    assert [f.get("message") for f in junit.iter("failure")] == ["has key x␛]0;t␇␛[2J\ufffd␡"]
    as_json, as_sarif = (render([report], fmt, strict=False) for fmt in ("json", "sarif"))
    assert not any(c in as_json + as_sarif for c in "\x1b\x07\x9b\x7f")
    assert json.loads(as_json)["logs"][0]["findings"][0]["message"] == message
    assert json.loads(as_sarif)["runs"][0]["results"][0]["message"]["text"] == message
