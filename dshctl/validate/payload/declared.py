"""Events newer than the released codecs whose admission dshctl reads, judged by the payload dsh declares
for them (FORMAT §3.5), each under a rule of its own: what is established about each differs.

* ``working-directory/change`` (dsh 0.2.1-alpha.2, format v4, same version; not ignorable: older builds
  refuse a log holding it): ``{cwd}``, the session's new effective directory, declared "absolute"
  (``packages/session/working-directory``: ``SessionEventMap['working-directory/change']``; dsh's
  directory projection validates it as an absolute directory). Rule ``codec/working-directory``, an error.
* ``deliverables/presented`` (0.1.5-alpha.2, v3+): ``{turn, callId, files: PresentedFile[]}`` with
  ``PresentedFile = {path: string, description?: string}`` (``packages/deliverables/tool-present/src/
  types.ts``). Only the declared types are checked — ``turn`` a turn number (a non-negative safe integer,
  as every turn), ``callId`` a tool-call id (a non-empty string, as every call id dsh checks), ``path``
  and ``description`` strings — and no relationship (whether the call or the files exist): dsh's own load
  is not known to check this payload (FORMAT lists it UNKNOWN beyond its declaration), so a finding is a
  warning, rule ``codec/deliverables``.

Neither refuses a member it does not know: v4 gains optional members without a version bump (FORMAT
§2.10.11).
"""

from __future__ import annotations

from typing import Any

from ..values import (
    fail,
    has_placeholder,
    is_absolute_path,
    need_array,
    need_count,
    need_non_empty_string,
    need_object,
    need_string,
)

__all__ = ["DECLARED_RULES", "check_declared"]

DECLARED_RULES = {
    "working-directory/change": "codec/working-directory",
    "deliverables/presented": "codec/deliverables",
}
"""The event types judged here, and the rule each finding is reported under."""


def check_declared(kind: str, seq: int, data: Any, *, fixture: bool = False) -> None:
    """Raise :class:`~dshctl.validate.values.PayloadError` for the first member of ``data`` at fault."""
    label = f"{kind} {seq}"
    record = need_object(data, f"{label} data")
    if kind == "working-directory/change":
        _working_directory(record, label, fixture)
    elif kind == "deliverables/presented":
        _deliverables(record, label)


def _required(record: dict, key: str, label: str) -> Any:
    if key not in record:
        raise fail(label, f'lacks required member "{key}"')
    return record[key]


def _working_directory(record: dict, label: str, fixture: bool) -> None:
    cwd = _required(record, "cwd", f"{label} data")
    need_string(cwd, f"{label} cwd")
    if not is_absolute_path(cwd) and not (fixture and has_placeholder(cwd)):  # fixtures write {{cwd}}/…
        raise fail(f"{label} cwd", "must be an absolute path")


def _deliverables(record: dict, label: str) -> None:
    need_count(_required(record, "turn", f"{label} data"), f"{label} turn")
    need_non_empty_string(_required(record, "callId", f"{label} data"), f"{label} callId")

    def presented_file(member: Any, member_label: str) -> None:
        file = need_object(member, member_label)
        need_string(_required(file, "path", member_label), f"{member_label} path")
        if "description" in file:
            need_string(file["description"], f"{member_label} description")

    need_array(_required(record, "files", f"{label} data"), f"{label} files", presented_file)
