"""The stats records are typed Structs declared once (dshctl.stats.records): what the library returns
is what ``--json`` writes, field by field, and every field has a type an export can map."""

from __future__ import annotations

import typing
from pathlib import Path

import msgspec
import pytest

from dshctl.options import StatsOptions
from dshctl.stats import log_stats, records
from dshctl.stats.records import UNSET, SessionRecord, StepRecord, TurnRecord, wire_names, wire_value

from conftest import SAMPLES

RECORD_TYPES = [getattr(records, name) for name in records.__all__ if isinstance(getattr(records, name), type) and issubclass(getattr(records, name), records.Record)]


def _leaf_types(annotation) -> set:
    args = typing.get_args(annotation)
    if not args:
        return {annotation}
    return set().union(*(_leaf_types(arg) for arg in args)) | {typing.get_origin(annotation)}


@pytest.mark.parametrize("cls", RECORD_TYPES, ids=lambda cls: cls.__name__)
def test_every_field_has_a_concrete_type_and_the_record_says_what_it_is(cls):
    hints = typing.get_type_hints(cls)
    for name in cls.__struct_fields__:
        assert typing.Any not in _leaf_types(hints[name]), f"{cls.__name__}.{name} is Any"
    assert cls.__doc__ and len(cls.__doc__.split()) > 5, cls.__name__


def test_records_is_a_leaf_module():
    import ast

    source = Path(records.__file__).read_text(encoding="utf-8")
    imported = {alias.name for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Import) for alias in node.names}
    imported |= {node.module or "" for node in ast.walk(ast.parse(source)) if isinstance(node, ast.ImportFrom)}
    assert imported <= {"__future__", "typing", "msgspec"}


def test_the_library_records_are_the_json_records():
    result = log_stats(SAMPLES / "tour.session.v4.jsonl", StatsOptions(by="step"))
    session = result.session
    assert isinstance(session, SessionRecord) and all(isinstance(step, StepRecord) for step in result.steps)
    wire = msgspec.json.decode(msgspec.json.encode(session))
    assert wire["meanTtftMs"] == session.mean_ttft_ms == 325
    assert wire["dshctl"]["tokenMeter011"]["cacheHitPercent"] == session.dshctl.token_meter011.cache_hit_percent
    assert list(wire)[:3] == ["kind", "path", "id"] and "costs" not in wire and "gaps" not in wire
    for key, value in wire.items():
        if not isinstance(value, (dict, list)):
            assert wire_value(session, key) == value, key
    assert wire_value(session, "noSuchKey") is None and wire_value(session, "costs") is None
    step = result.steps[0]
    assert (step.kind, step.session, step.path) == ("step", session.id, session.path)


def test_turn_rows_get_their_session_and_keep_the_documented_order():
    result = log_stats(SAMPLES / "tour.session.v4.jsonl", StatsOptions(by="turn"))
    row = result.turns[0]
    assert isinstance(row, TurnRecord) and row.costs is UNSET
    assert list(wire_names(TurnRecord))[:5] == ["kind", "session", "path", "turn", "steps"]
    assert msgspec.to_builtins(row)["session"] == result.session.id


def test_a_skipped_log_has_its_identity_only():
    result = log_stats(SAMPLES / "tour.session.v4.jsonl", StatsOptions(since=4_000_000_000_000))
    assert result.skipped and type(result.session) is records.SessionIdentity
    assert result.session.id == "7c1e5a2d-3b9f-4e61-a8d4-2f0b6c9e1a57"
