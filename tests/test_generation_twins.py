"""The same conversation written as v0 (chunk events + packed rows), v2, v3 and v4 reads into the same
settlements: the v0 fold reproduces what dsh's migrations embed."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from conftest import SAMPLES
from dshctl.reader import open_log

TWINS = ["tour", "fork-child"]
FORMS = ["session.jsonl", "session.jsonl.zstd", "session.v2.jsonl", "session.v3.jsonl", "session.v4.jsonl.zstd"]


def settlements(path: Path) -> list[tuple]:
    out = []
    for event in open_log(str(path)).events():
        if event.type in ("assistant/message", "assistant/attempt"):
            data = event.data
            message = data.get("message") or {}
            out.append(
                (
                    event.type,
                    event.turn,
                    event.step,
                    event.time,
                    msgspec.to_builtins(event.stream),
                    message.get("content"),
                    data.get("usage"),
                    data.get("interrupted"),
                    (message.get("source") or {}).get("replayState"),
                )
            )
    return out


@pytest.mark.parametrize("name", TWINS)
def test_every_form_carries_the_same_settlements(name):
    forms = {form: settlements(SAMPLES / f"{name}.{form}") for form in FORMS}
    reference = forms["session.jsonl"]
    assert len(reference) >= 3
    assert any(kind == "assistant/attempt" for kind, *_ in reference)
    for form, found in forms.items():
        assert found == reference, form


@pytest.mark.parametrize("name", TWINS)
def test_other_events_keep_their_order_across_forms(name):
    def kinds(form):
        skip = {"system/message", "assistant/message", "assistant/attempt"}
        return [
            (e.type, e.turn, e.step)
            for e in open_log(str(SAMPLES / f"{name}.{form}")).events()
            if e.type not in skip
        ]

    reference = kinds("session.jsonl.zstd")
    for form in ("session.v2.jsonl", "session.v4.jsonl"):
        assert kinds(form) == reference, form


def test_zstd_v0_sample_is_multi_frame_with_header_alone_in_frame_one():
    from dshctl.source import LineReader, resolve

    reader = LineReader(resolve(str(SAMPLES / "tour.session.jsonl.zstd"))[0])
    lines = list(reader)
    assert reader.compressed and reader.frames > 10 and reader.first_frame_lines == 1
    assert len(lines) == len((SAMPLES / "tour.session.jsonl").read_bytes().splitlines())
