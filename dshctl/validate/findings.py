"""Findings, the per-log report, and the collector that applies ``--ignore`` and ``--max-errors``."""

from __future__ import annotations

from typing import Any

import msgspec

from .rules import RULES

__all__ = ["Finding", "LogReport", "Collector", "STATUS_CLEAN", "STATUS_WARNINGS", "STATUS_ERRORS", "STATUS_UNREADABLE"]

STATUS_CLEAN = "clean"
STATUS_WARNINGS = "warnings"
STATUS_ERRORS = "errors"
STATUS_UNREADABLE = "unreadable"


class Finding(msgspec.Struct):
    """One finding of one rule in one log. ``to_json`` is its JSON form (field names and order fixed)."""

    rule: str
    severity: str
    message: str
    file: str
    line: int | None = None
    seq: int | None = None
    turn: int | None = None
    step: int | None = None
    record: int | None = None
    fatal: bool = False

    @property
    def level(self) -> str:
        return self.rule.split("/", 1)[0]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rule": self.rule,
            "level": self.level,
            "severity": self.severity,
            "file": self.file,
            "line": self.line,
            "seq": self.seq,
            "turn": self.turn,
            "step": self.step,
            "record": self.record,
            "message": self.message,
        }
        if self.fatal:
            out["fatal"] = True
        return out

    def location(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        extra = []
        if self.seq is not None:
            extra.append(f"seq {self.seq}")
        if self.turn is not None:
            extra.append(f"turn {self.turn}" + (f" step {self.step}" if self.step is not None else ""))
        if self.record is not None:
            extra.append(f"record {self.record}")
        return f"{where} ({', '.join(extra)})" if extra else where


class LogReport(msgspec.Struct):
    """What ``validate`` found in one log: its findings, what was suppressed, and the levels not run."""

    file: str
    generation: int | None = None
    findings: list[Finding] = []
    suppressed: int = 0
    suppressed_errors: int = 0
    unreadable: bool = False
    events: int = 0
    skipped_levels: list[str] = []

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.severity == "error")

    @property
    def warnings(self) -> int:
        return sum(1 for f in self.findings if f.severity == "warning")

    def status(self, strict: bool = False) -> str:
        if self.unreadable:
            return STATUS_UNREADABLE
        if self.errors or self.suppressed_errors or (strict and self.warnings):
            return STATUS_ERRORS
        if self.warnings:
            return STATUS_WARNINGS
        return STATUS_CLEAN

    def to_json(self, strict: bool = False) -> dict[str, Any]:
        return {
            "file": self.file,
            "generation": self.generation,
            "status": self.status(strict),
            "events": self.events,
            "errors": self.errors,
            "warnings": self.warnings,
            "suppressed": self.suppressed,
            "skippedLevels": self.skipped_levels,
            "findings": [f.to_json() for f in self.findings],
        }


class Collector:
    """Gathers the findings of one log.

    ``ignore`` holds rule ids and level names to drop (fatal findings are never dropped: an unreadable
    log stays unreadable). After ``max_errors`` error findings further errors are only counted.
    Each rule reports at most ``per_rule_limit`` findings per log; the rest are counted as suppressed.
    """

    def __init__(self, file: str, *, ignore: frozenset[str] = frozenset(), max_errors: int | None = None,
                 per_rule_limit: int = 200):
        self.report = LogReport(file=file)
        self.file = file
        self.ignore = ignore
        self.max_errors = max_errors
        self.per_rule_limit = per_rule_limit
        self._errors = 0
        self._per_rule: dict[str, int] = {}

    def enabled(self, rule_id: str) -> bool:
        return rule_id not in self.ignore and rule_id.split("/", 1)[0] not in self.ignore

    def add(self, rule_id: str, message: str, *, line: int | None = None, seq: int | None = None,
            turn: Any = None, step: Any = None, record: int | None = None, severity: str | None = None,
            fatal: bool = False) -> None:
        rule = RULES[rule_id]
        fatal = fatal or rule.fatal
        if fatal:
            self.report.unreadable = True
        elif not self.enabled(rule_id):
            return
        severity = severity or rule.severity
        if fatal:
            severity = "error"
        count = self._per_rule.get(rule_id, 0)
        if not fatal and (
            count >= self.per_rule_limit
            or (severity == "error" and self.max_errors is not None and self._errors >= self.max_errors)
        ):
            self.report.suppressed += 1
            if severity == "error":
                self.report.suppressed_errors += 1
            return
        self._per_rule[rule_id] = count + 1
        if severity == "error":
            self._errors += 1
        self.report.findings.append(
            Finding(rule=rule_id, severity=severity, message=message, file=self.file, line=line, seq=seq,
                    turn=_int_or_none(turn), step=_int_or_none(step), record=record, fatal=fatal)
        )

    def enabled_level(self, level: str) -> bool:
        return level not in self.ignore

    def has(self, rule_id: str) -> bool:
        return any(f.rule == rule_id for f in self.report.findings)


def _int_or_none(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None
