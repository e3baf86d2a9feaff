"""The terminal output of interleaved blocks (a cast, the timed stream) is linear in the fragments and
byte for byte what the first, quadratic implementation wrote (review item 9).

``frames_reference`` keeps that implementation: each fragment laid the whole region out again and
diffed all its text against the last. The current one keeps each block's laid-out rows and redraws from
the block that changed; on random interleavings — text, reasoning and tool calls, line breaks, tabs,
wide characters, empty deltas, every terminal size down to one cell, timestamps, colour, an output
starting inside the message — both write the same bytes. And the work a fragment costs does not grow
with the message: fragments drawn, characters laid into rows and characters compared per fragment stay
the same from 2×150 to 2×600 deltas.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from dshctl.reader import open_log
from dshctl.replay import frames, layout, view
from dshctl.replay.export import cast_events
from dshctl.replay.timeline import Timeline
from dshctl.replay.transcript import transcript
from dshctl.stream import Accumulator

sys.path.insert(0, str(Path(__file__).resolve().parent))
import frames_reference  # noqa: E402

T = 1_790_000_000_000


def message_log(blocks: list[tuple[str, list[str]]], order: list[int], *, finish: str = "tool-calls", before: str | None = None) -> str:
    """A v4 log of one turn whose assistant message streams ``blocks`` (``(kind, deltas)``, kind
    ``text``, ``reasoning`` or ``call``), the deltas taken block by block in ``order`` (each entry the
    block whose next delta streams; blocks left over stream after). ``before``: an earlier step's text
    (so the message may need a line break first)."""
    accumulator = Accumulator()
    clock = [T + 100]

    def push(chunk: dict) -> None:
        accumulator.push(clock[0], chunk)
        clock[0] += 7

    kinds = {"text": "text", "reasoning": "reasoning", "call": "tool-call"}
    for index, (kind, _) in enumerate(blocks):
        push({"type": "block-start", "index": index, "blockType": kinds[kind]})
    taken = [0] * len(blocks)
    sequence = list(order) + [index for index, (_, deltas) in enumerate(blocks) for _ in deltas]
    for index in sequence:
        kind, deltas = blocks[index]
        if taken[index] >= len(deltas):
            continue
        delta = deltas[taken[index]]
        if kind == "call":
            chunk = {"type": "tool-call-delta", "index": index, "id": f"c{index}", "argumentsDelta": delta}
            if taken[index] == 0:
                chunk["name"] = f"tool{index}"
        else:
            chunk = {"type": f"{kind}-delta", "index": index, "text": delta}
        push(chunk)
        taken[index] += 1
    content = []
    for index, (kind, deltas) in enumerate(blocks):
        joined = "".join(deltas)
        block = {"type": "tool-call", "id": f"c{index}", "name": f"tool{index}", "arguments": joined} if kind == "call" else {"type": kind, "text": joined}
        if finish != "max-tokens" or kind != "call":
            push({"type": "block-end", "index": index, "block": block})
            content.append(block)
    push({"type": "finish", "reason": {"kind": finish}})
    lines: list[dict] = [{"type": "session", "version": 4, "id": "frames", "createdAt": T, "cwd": "/w", "delegationDepth": 0, "isSeeded": False}]

    def add(kind: str, at: int, data: dict, **extra) -> None:
        lines.append({"type": kind, "seq": len(lines) - 1, "time": at, "data": data, **extra})

    source = {"kind": "model", "provider": "p", "model": "m"}
    add("turn/start", T, {"turn": 1})
    step = 1
    if before is not None:
        add("step/start", T, {"turn": 1, "step": step})
        stream = [{"type": "text-chunks", "time0": T + 2, "index": 0, "dt": [], "texts": [before]}]
        add("assistant/message", T + 3, {"turn": 1, "step": step, "message": {"id": "a0", "role": "assistant", "content": [{"type": "text", "text": before}], "source": source}, "stream": stream}, surfaceOp="append")
        add("step/end", T + 4, {"turn": 1, "step": step})
        step += 1
    add("step/start", T + 5, {"turn": 1, "step": step})
    message = {"id": "a1", "role": "assistant", "content": content, "source": source}
    add("assistant/message", clock[0], {"turn": 1, "step": step, "message": message, "stream": msgspec.to_builtins(accumulator.records)}, surfaceOp="append")
    for block in content:
        if block["type"] == "tool-call":
            add("tool/call", clock[0] + 1, {"turn": 1, "step": step, "callId": block["id"], "name": block["name"], "arguments": block["arguments"]})
    add("step/end", clock[0] + 2, {"turn": 1, "step": step})
    add("turn/end", clock[0] + 3, {"turn": 1, "reason": {"kind": "max-tokens" if finish == "max-tokens" else "completed"}})
    return "\n".join(json.dumps(line, separators=(",", ":")) for line in lines) + "\n"


def built(text: str, directory: Path) -> Timeline:
    path = directory / "frames.session.v4.jsonl"
    path.write_text(text, encoding="utf-8")
    timeline = Timeline(open_log(str(path)))
    timeline.ensure_all()
    return timeline


def region_of(timeline: Timeline):
    return next((item for item in timeline.items if item.region is not None), None)


DELTA = st.lists(st.sampled_from(list("ab c{}\":") + ["\n", "\t", "字", "é", "\n\n", "xyz" * 5]), max_size=6).map("".join)
BLOCK = st.tuples(st.sampled_from(["text", "reasoning", "call"]), st.lists(DELTA, min_size=1, max_size=8))


@st.composite
def messages(draw):
    blocks = draw(st.lists(BLOCK, min_size=2, max_size=4))
    order = draw(st.lists(st.integers(0, len(blocks) - 1), max_size=sum(len(deltas) for _, deltas in blocks)))
    finish = draw(st.sampled_from(["tool-calls", "tool-calls", "max-tokens"]))
    before = draw(st.sampled_from([None, "done with that", "line\n"]))
    return blocks, order, finish, before


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    messages(),
    st.integers(1, 24),
    st.integers(1, 9),
    st.booleans(),
    st.booleans(),
    st.floats(0, 1),
)
# a wide character alone in a 1-column terminal: a row of its own, not two (the cursor went up -1 rows)
@example(([("text", [""]), ("text", ["字"]), ("text", ["a", "a"])], [2], "tool-calls", None), 1, 1, False, False, 0.0)
def test_the_output_is_the_reference_output_byte_for_byte(message, cols, rows, timestamps, color, where):
    blocks, order, finish, before = message
    with tempfile.TemporaryDirectory() as directory:
        timeline = built(message_log(blocks, order, finish=finish, before=before), Path(directory))
        region = region_of(timeline)
        starts = [0]
        if region is not None:  # and an output starting inside the message (it drops its leading line breaks)
            starts.append(region.start + int(where * (region.count - 1)))
        for start in starts:
            options = dict(color=color, timestamps=timestamps, cols=cols, rows=rows)
            expected = list(frames_reference.terminal_output(timeline, start, **options))
            assert list(frames.terminal_output(timeline, start, **options)) == expected


def test_output_that_repeats_what_it_replaces_is_the_reference_output(tmp_path):
    """A block that grows by a line break where the marks below it began with one (the text that follows
    is unchanged), and one whose growth shifts a repetitive block below it by its period."""
    cases = [
        ([("text", ["one", "\n", "two", "\n"]), ("call", ['{"a"', ": 1}"])], [0, 1, 0, 1, 0, 0]),
        ([("text", ["x", "\n", "x", "\n", "x"]), ("text", ["x\n" * 40, "x\n" * 40])], [1, 0, 1, 0, 0, 0]),
    ]
    for blocks, order in cases:
        timeline = built(message_log(blocks, order), tmp_path)
        assert region_of(timeline) is not None
        for cols, rows in [(100, 40), (5, 3), (1, 1)]:
            new = list(frames.terminal_output(timeline, 0, cols=cols, rows=rows))
            assert new == list(frames_reference.terminal_output(timeline, 0, cols=cols, rows=rows))
            assert any(text == "" for _, text in new)  # a fragment that changed nothing on screen writes nothing


@pytest.mark.serial
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")
@pytest.mark.parametrize("cols,rows", [(100, 40), (7, 5)])
def test_a_repetition_past_the_comparison_limit_redraws_from_further_up(tmp_path, cols, rows):
    """Past :data:`frames.COINCIDENCE_LIMIT` characters of a shifted repetition the output redraws from an
    earlier line than the reference did: more bytes, the same screen."""
    from test_replay_parallel import _tmux_screen, _wrapped

    asciinema = shutil.which("asciinema") or str(Path(sys.executable).parent / "asciinema")
    if not Path(asciinema).exists():
        pytest.skip("asciinema not installed")
    blocks = [("text", ["x", "\n", "x", "\n", "x", "y"]), ("text", ["x\n" * 3000, "z"])]
    path = tmp_path / "frames.session.v4.jsonl"
    path.write_text(message_log(blocks, [1, 0, 0, 0, 0, 0, 0, 1]), encoding="utf-8")
    timeline = built(path.read_text(encoding="utf-8"), tmp_path)
    assert region_of(timeline) is not None
    new = list(frames.terminal_output(timeline, 0, cols=cols, rows=rows))
    old = list(frames_reference.terminal_output(timeline, 0, cols=cols, rows=rows))
    assert new != old and len(new) == len(old)
    for (fragment, mine), (_, theirs) in zip(new, old):
        assert mine == theirs or mine.endswith(theirs.rsplit(frames.ERASE_BELOW, 1)[-1]), fragment
    cast = tmp_path / "x.cast"
    result = subprocess.run([sys.executable, "-m", "dshctl.cli", "--no-color", "replay", str(path), "--export", str(cast), "--cols", str(cols), "--rows", str(rows)], capture_output=True)
    assert result.returncode == 0, result.stderr
    screen = _tmux_screen(f"{asciinema} cat {cast}", cols, rows)
    expected = [row.rstrip() for row in _wrapped(transcript(timeline), cols)][-(rows - 1) :]
    assert [row.rstrip() for row in screen.rstrip("\n").split("\n")][-len(expected) :] == expected


def _interleaved_work(deltas: int, monkeypatch) -> dict[str, float]:
    """Per fragment of a cast of two calls whose ``deltas`` deltas each alternate: fragments drawn,
    characters laid into rows, characters compared; and the layouts of the whole region made."""
    counts = {"drawn": 0, "laid": 0, "compared": 0, "whole": 0}
    draw, scan, common, pieces = frames._Layout._draw, frames._scan, frames._common, layout.pieces

    def counting_draw(self, segments, *args):
        counts["drawn"] += 1
        return draw(self, segments, *args)

    def counting_scan(text, *args):
        counts["laid"] += len(text)
        return scan(text, *args)

    def counting_common(a, b):
        counts["compared"] += min(len(a), len(b))
        return common(a, b)

    def counting_pieces(*args, **kwargs):
        counts["whole"] += 1
        return pieces(*args, **kwargs)

    with tempfile.TemporaryDirectory() as directory:
        calls = [("call", ['{"command": "'] + [f"part {n} " for n in range(deltas)] + ['"}']) for _ in range(2)]
        timeline = built(message_log(calls, [index for _ in range(deltas + 2) for index in (0, 1)]), Path(directory))
    region = region_of(timeline)
    monkeypatch.setattr(frames._Layout, "_draw", counting_draw)
    monkeypatch.setattr(frames, "_scan", counting_scan)
    monkeypatch.setattr(frames, "_common", counting_common)
    monkeypatch.setattr(layout, "pieces", counting_pieces)
    events = list(cast_events(timeline, color=True, cols=100, rows=30))
    monkeypatch.undo()
    assert sum("\x1b[J" in data for _, code, data in events if code == "o") >= deltas  # the upper call redrawn each time
    fragments = region.count
    return {name: value / fragments for name, value in counts.items() if name != "whole"} | {"whole": counts["whole"]}


def test_a_cast_of_interleaved_blocks_costs_the_same_per_fragment_however_long(monkeypatch):
    small = _interleaved_work(150, monkeypatch)
    large = _interleaved_work(600, monkeypatch)
    assert small["whole"] == large["whole"] == 0  # the region is never laid out whole again
    assert large["drawn"] <= 2 and small["drawn"] <= 2  # each fragment drawn once (and a block's marks)
    for name in ("drawn", "laid", "compared"):
        assert large[name] <= small[name] * 1.1 + 1, (name, small, large)


def test_view_segments_are_asked_once_per_fragment(monkeypatch, tmp_path):
    calls = [("call", [f"{n}," for n in range(300)]), ("text", [f"w{n} " for n in range(300)])]
    timeline = built(message_log(calls, [index for _ in range(300) for index in (0, 1)]), tmp_path)
    region = region_of(timeline)
    asked = []
    segments = view.segments
    monkeypatch.setattr(view, "segments", lambda item, k: asked.append(1) or segments(item, k))
    list(frames.terminal_output(timeline, region.start, cols=80, rows=24))
    assert len(asked) == region.count
