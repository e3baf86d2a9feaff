"""Rendering findings: text (for people), json, SARIF 2.1.0 (code scanning) and JUnit XML (test reporters)."""

from __future__ import annotations

from pathlib import Path
from typing import Iterable
from urllib.parse import quote
from xml.etree import ElementTree as ET

from dshctl import __version__
from dshctl.options.validate import FORMATS
from dshctl.textsafe import escape_json_text, visible, visible_line

from .findings import STATUS_CLEAN, STATUS_ERRORS, STATUS_UNREADABLE, STATUS_WARNINGS, Finding, LogReport
from .rules import LEVELS, RULES, Rule

__all__ = ["FORMATS", "summary", "summary_line", "render", "render_rules"]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFO_URI = "https://github.com/deepseek-ai/deepseek-harness"


def summary(reports: list[LogReport], strict: bool) -> dict:
    statuses = [r.status(strict) for r in reports]
    return {
        "logs": len(reports),
        "clean": sum(1 for s in statuses if s in (STATUS_CLEAN, STATUS_WARNINGS)),
        "withErrors": statuses.count(STATUS_ERRORS),
        "unreadable": statuses.count(STATUS_UNREADABLE),
        "errors": sum(r.errors for r in reports),
        "warnings": sum(r.warnings for r in reports),
        "suppressed": sum(r.suppressed for r in reports),
    }


def summary_line(reports: list[LogReport], strict: bool) -> str:
    s = summary(reports, strict)
    noun = "log" if s["logs"] == 1 else "logs"
    warn = "warning" if s["warnings"] == 1 else "warnings"
    return (f"{s['logs']} {noun}: {s['clean']} clean, {s['withErrors']} with errors, {s['unreadable']} unreadable "
            f"({s['warnings']} {warn})")


def _ordered(report: LogReport) -> list[Finding]:
    return sorted(report.findings, key=lambda f: (f.line is None, f.line or 0, f.seq if f.seq is not None else -1))


def render(reports: list[LogReport], output_format: str, strict: bool, elapsed: float | None = None, *, color: bool = False,
           outside: int | None = None) -> str:
    """The findings in one format. Messages quote log values: text and JUnit show control characters as
    pictures (XML 1.0 cannot carry them at all), JSON and SARIF keep the values, escaped. ``color``: the
    text in colour (the command's ``--color`` answer; the other formats are data, never coloured).
    ``outside``: with ``--since`` / ``--until``, how many logs were left out (text and json say so)."""
    if output_format == "json":
        return _json(reports, strict, elapsed, outside)
    if output_format == "sarif":
        return _sarif(reports, strict)
    if output_format == "junit":
        return _junit(reports, strict, elapsed)
    return _text(reports, strict, color, outside)


# --------------------------------------------------------------------------- text

_LEVEL_STYLES = {"error": "1;31", "unreadable": "1;31", "warning": "1;33"}
"""A finding's label in colour, as compilers show theirs: errors bold red, warnings bold yellow; the
location is bold, the rule id cyan, notes dim."""


def _painter(color: bool):
    """``paint(code, text)``: ``text`` as one safe line (log text is data: its control characters become
    pictures first), in SGR ``code`` when ``color``."""

    def paint(code: str, text: object) -> str:
        shown = visible_line(text)
        return f"\x1b[{code}m{shown}\x1b[0m" if color and shown else shown

    return paint


def _text(reports: list[LogReport], strict: bool, color: bool = False, outside: int | None = None) -> str:
    paint = _painter(color)
    out: list[str] = []
    for report in reports:
        for finding in _ordered(report):
            severity = "error" if strict and finding.severity == "warning" else finding.severity
            label = "unreadable" if finding.fatal else severity
            out.append(f"{paint('1', finding.location())}: {paint(_LEVEL_STYLES.get(label, '1'), label)} "
                       f"{paint('36', f'[{finding.rule}]')} {visible_line(finding.message)}")
        if report.suppressed:
            out.append(f"{paint('1', report.file)}: "
                       + paint("2", f"{report.suppressed} more finding(s) suppressed (--max-errors or per-rule limit)"))
        if report.skipped_levels:
            out.append(f"{paint('1', report.file)}: " + paint("2", f"note: levels not run: {', '.join(report.skipped_levels)}"))
    statuses = [report.status(strict) for report in reports]
    failed = STATUS_ERRORS in statuses or STATUS_UNREADABLE in statuses
    warned = any(report.warnings for report in reports)
    line = summary_line(reports, strict) + (f"; {outside} outside --since/--until" if outside else "")
    out.append(paint("1;31" if failed else "1;33" if warned else "1;32", line))
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- json


def _json(reports: list[LogReport], strict: bool, elapsed: float | None, outside: int | None = None) -> str:
    from dshctl.output import to_json

    counts = summary(reports, strict)
    if outside is not None:  # only with --since / --until: the logs of sessions outside were not validated
        counts["outsideWindow"] = outside
    document = {
        "tool": "dshctl",
        "version": __version__,
        "strict": strict,
        "summary": counts,
        "logs": [r.to_json(strict) for r in reports],
    }
    if elapsed is not None:
        document["elapsedSeconds"] = round(elapsed, 3)
    return to_json(document).decode() + "\n"


# --------------------------------------------------------------------------- SARIF 2.1.0


def _uri(file: str) -> str:
    if file.startswith("<"):  # <stdin>, or a member of the ZIP on it: <stdin>!session.jsonl
        name, _, member = file[1:].partition(">")
        return quote(name + member)
    path = Path(file)
    if path.is_absolute():
        return path.as_uri()
    return quote(path.as_posix(), safe="/._-~")


def _sarif_rule(rule: Rule) -> dict:
    text = rule.summary[0].upper() + rule.summary[1:]
    props = {
        "level": rule.level,
        "severity": rule.severity,
        "dshSource": rule.source,
        "formatSection": rule.section,
        "beyondDshLoad": rule.beyond_dsh,
        "tags": [rule.level] + (["beyond-dsh-load"] if rule.beyond_dsh else []),
    }
    return {
        "id": rule.id,
        "name": rule.id.replace("/", "-"),
        "shortDescription": {"text": text if len(text) <= 200 else text[:197] + "..."},
        "fullDescription": {"text": f"{text}. dsh source: {rule.source}. FORMAT.md {rule.section}."},
        "defaultConfiguration": {"level": rule.severity},
        "properties": props,
    }


def _sarif(reports: list[LogReport], strict: bool) -> str:
    import json

    rules = list(RULES.values())
    index = {rule.id: i for i, rule in enumerate(rules)}
    results = []
    artifacts: dict[str, int] = {}
    for report in reports:
        uri = _uri(report.file)
        artifacts.setdefault(uri, len(artifacts))
        for finding in _ordered(report):
            level = "error" if (strict or finding.fatal) and finding.severity == "warning" else finding.severity
            location: dict = {"artifactLocation": {"uri": uri, "index": artifacts[uri]}}
            if finding.line is not None and finding.line >= 1:
                location["region"] = {"startLine": finding.line}
            properties = {k: v for k, v in (("seq", finding.seq), ("turn", finding.turn), ("step", finding.step),
                                            ("record", finding.record)) if v is not None}
            if finding.fatal:
                properties["unreadable"] = True
            result = {
                "ruleId": finding.rule,
                "ruleIndex": index[finding.rule],
                "level": level,
                "message": {"text": finding.message},
                "locations": [{"physicalLocation": location}],
            }
            if properties:
                result["properties"] = properties
            results.append(result)
    statuses = [r.status(strict) for r in reports]
    exit_code = 2 if STATUS_UNREADABLE in statuses else 1 if STATUS_ERRORS in statuses else 0
    document = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "dshctl",
                "version": __version__,
                "informationUri": INFO_URI,
                "rules": [_sarif_rule(rule) for rule in rules],
            }},
            "artifacts": [{"location": {"uri": uri}} for uri in artifacts],
            "results": results,
            "invocations": [{"executionSuccessful": True, "exitCode": exit_code}],
            "properties": {"summary": summary(reports, strict)},
        }],
    }
    return escape_json_text(json.dumps(document, ensure_ascii=False, indent=2)) + "\n"


# --------------------------------------------------------------------------- JUnit XML


def _junit(reports: list[LogReport], strict: bool, elapsed: float | None) -> str:
    root = ET.Element("testsuites", name="dshctl validate")
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for report in reports:
        suite = ET.SubElement(root, "testsuite", name=report.file)
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        findings = _ordered(report)
        fatal = [f for f in findings if f.fatal]
        warnings_out: list[str] = []
        if fatal:
            for finding in fatal:
                case = ET.SubElement(suite, "testcase", name=f"{finding.rule} {_where(finding)}", classname=_classname(report, "codec"))
                error = ET.SubElement(case, "error", message=finding.message, type=finding.rule)
                error.text = f"{finding.location()}: unreadable [{finding.rule}] {finding.message}"
                counts["tests"] += 1
                counts["errors"] += 1
        failing_levels = set()
        for finding in findings:
            if finding.fatal:
                continue
            failing = finding.severity == "error" or strict
            line = f"{finding.location()}: {finding.severity} [{finding.rule}] {finding.message}"
            if not failing:
                warnings_out.append(line)
                continue
            failing_levels.add(finding.level)
            case = ET.SubElement(suite, "testcase", name=f"{finding.rule} {_where(finding)}",
                                 classname=_classname(report, finding.level))
            failure = ET.SubElement(case, "failure", message=finding.message, type=finding.rule)
            failure.text = line
            counts["tests"] += 1
            counts["failures"] += 1
        if report.suppressed:
            warnings_out.append(f"{report.suppressed} more finding(s) suppressed")
        if not fatal:
            for level in LEVELS:
                if level in failing_levels:
                    continue
                case = ET.SubElement(suite, "testcase", name=level, classname=_classname(report, level))
                counts["tests"] += 1
                if level in report.skipped_levels:
                    ET.SubElement(case, "skipped", message="not run: the log could not be read as events")
                    counts["skipped"] += 1
        if warnings_out:
            ET.SubElement(suite, "system-out").text = "\n".join(warnings_out)
        for key, value in counts.items():
            suite.set(key, str(value))
            totals[key] += value
    for key, value in totals.items():
        root.set(key, str(value))
    if elapsed is not None:
        root.set("time", f"{elapsed:.3f}")
    _show_controls(root)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _show_controls(root: ET.Element) -> None:
    """Control characters from the log as pictures in every attribute and text: XML 1.0 cannot carry them."""
    for element in root.iter():
        for key, value in element.attrib.items():
            element.set(key, visible_line(value))
        if element.text:
            element.text = visible(element.text)


def _where(finding: Finding) -> str:
    parts = []
    if finding.line is not None:
        parts.append(f"line {finding.line}")
    if finding.seq is not None:
        parts.append(f"seq {finding.seq}")
    return "(" + ", ".join(parts) + ")" if parts else ""


def _classname(report: LogReport, level: str) -> str:
    return f"{report.file}.{level}"


# --------------------------------------------------------------------------- --list-rules


def render_rules(output_format: str, ignore: Iterable[str] = (), *, color: bool = False) -> str:
    rules = list(RULES.values())
    if output_format == "json":
        from dshctl.output import to_json

        return to_json([
            {"id": r.id, "level": r.level, "severity": r.severity, "summary": r.summary, "dshSource": r.source,
             "formatSection": r.section, "beyondDshLoad": r.beyond_dsh, "fatal": r.fatal, "damage": r.damage}
            for r in rules
        ]).decode() + "\n"
    if output_format == "sarif":
        import json

        return json.dumps({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [{"tool": {"driver": {
            "name": "dshctl", "version": __version__, "informationUri": INFO_URI,
            "rules": [_sarif_rule(r) for r in rules]}}, "results": []}]}, indent=2) + "\n"
    paint = _painter(color)
    out = []
    for level in LEVELS:
        beyond = " (beyond dsh's load)" if level in ("stream", "settlement", "grammar") else ""
        out.append(paint("1", f"{level}{beyond}"))
        for rule in rules:
            if rule.level != level:
                continue
            tags = [rule.severity]
            if rule.fatal:
                tags.append("unreadable")
            if rule.damage:
                tags.append("damage: exit 2 when committed, warning in the droppable tail")
            out.append(f"  {paint('36', rule.id)}  [{'; '.join(tags)}]")
            out.append(f"      {rule.summary}")
            out.append(f"      dsh: {rule.source}; FORMAT.md {rule.section}")
        out.append("")
    return "\n".join(out)
