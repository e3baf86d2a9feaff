"""Parallel tool calls (#20 item 1): blocks of one message whose deltas interleave, told apart only by their
index, are shown whole — each once, under its own name, with its complete arguments, in the message's
block order — in the transcript, the markdown and the NDJSON export; the player's screen and the cast
grow them in place, never a box per fragment; a call a max-tokens finish dropped is marked everywhere.

Each scenario is one crafted message (2–4 interleaved calls, or a text block interleaved with a call),
written as dsh ≤ 0.1.2 writes it (v0: a chunk event per delta, runs of three or more packed into rows),
as the v1→v2 fold makes it (v2: compact runs in the settlement) and as v4.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest

from dshctl.assembler import assemble
from dshctl.reader import open_log
from dshctl.replay.export import markdown, timeline_records
from dshctl.replay.frames import row_starts, terminal_output
from dshctl.replay.render import screen_text
from dshctl.replay.timeline import Timeline
from dshctl.replay.transcript import transcript
from dshctl.stream import Accumulator

from chunks import call, end, start, text
from conftest import REPO, SAMPLES
from stats_logs import later

T = 1_790_000_000_000

CALLS = [("grep", '{"pattern": "needle", "path": "src"}'), ("bash", '{"command": "ls -la"}'), ("read", '{"file_path": "README.md"}'), ("glob", '{"pattern": "*.py"}')]


def pieces(value: str, count: int) -> list[str]:
    size = -(-len(value) // count)
    return [value[i : i + size] for i in range(0, len(value), size)]


def interleaved(calls: int, *, with_text: bool = False, finish: str = "tool-calls") -> tuple[list[tuple[int, dict]], list[dict]]:
    """Timed chunks of one message whose blocks take turns in bursts of three deltas (so v0 packs each
    burst into a row), and the tool calls it makes. Block 0 is text when ``with_text``; the first call
    repeats its name on every delta, the others name it on their first delta only."""
    blocks: list[tuple[str, str, list[str]]] = []  # (kind, name or text, pieces)
    if with_text:
        blocks.append(("text", "", pieces("Looking at both files now, then I will report back.", 9)))
    for number in range(calls):
        name, arguments = CALLS[number]
        blocks.append(("call", name, pieces(arguments, 9)))
    timed: list[tuple[int, dict]] = []
    clock = [T + 100]

    def add(chunk: dict) -> None:
        timed.append((clock[0], chunk))
        clock[0] += 1

    for index, (kind, _, _) in enumerate(blocks):
        add(start(index, "text" if kind == "text" else "tool-call"))
    for burst in range(3):
        for index, (kind, name, parts) in enumerate(blocks):
            for k in range(burst * 3, burst * 3 + 3):
                if k >= len(parts):
                    continue
                if kind == "text":
                    add(text(index, parts[k]))
                else:
                    named = index == (1 if with_text else 0) or k == 0
                    add(call(index, f"c{index}", parts[k], name if named else None))
    content = []
    for index, (kind, name, parts) in reversed(list(enumerate(blocks))):
        if kind == "text":
            block = {"type": "text", "text": "".join(parts)}
        else:
            block = {"type": "tool-call", "id": f"c{index}", "name": name, "arguments": "".join(parts)}
        if finish != "max-tokens" or kind == "text":
            add(end(index, block))  # block-ends in reverse order: an earlier index closes after a later one
    add({"type": "usage", "usage": {"inputTokens": 10, "outputTokens": 20}})
    add({"type": "finish", "reason": {"kind": finish}})
    for index, (kind, name, parts) in enumerate(blocks):
        if kind == "text":
            content.append({"type": "text", "text": "".join(parts)})
        elif finish != "max-tokens":
            content.append({"type": "tool-call", "id": f"c{index}", "name": name, "arguments": "".join(parts)})
    return timed, content


def _head(version: int) -> dict:
    head = {"type": "session", "version": version, "id": "parallel", "createdAt": T, "cwd": "/w", "delegationDepth": 0}
    if version >= 2:
        head["isSeeded"] = False
    return head


def _prelude(add) -> None:
    add("turn/start", T, {"turn": 1})
    add("step/start", T, {"turn": 1, "step": 1})
    add("user/message", T + 1, {"id": "u1", "role": "user", "content": [{"type": "text", "text": "look"}], "source": {"kind": "user"}}, surfaceOp="append")


def _postlude(add, content: list[dict], at: int, finish: str) -> None:
    for block in content:
        if block["type"] == "tool-call":
            add("tool/call", at, {"turn": 1, "step": 1, "callId": block["id"], "name": block["name"], "arguments": block["arguments"]})
    add("step/end", at + 1, {"turn": 1, "step": 1})
    add("turn/end", at + 2, {"turn": 1, "reason": {"kind": "max-tokens" if finish == "max-tokens" else "completed"}})


def v2_log(timed, content, finish: str) -> str:
    lines = [_head(2)]

    def add(kind, at, data, **extra):
        lines.append({"type": kind, "seq": len(lines) - 1, "time": at, "data": data, **extra})

    _prelude(add)
    accumulator = Accumulator()
    for at, chunk in timed:
        accumulator.push(at, chunk)
    message = {"id": "a1", "role": "assistant", "content": content, "source": {"kind": "model", "provider": "p", "model": "m"}}
    stream = msgspec.to_builtins(accumulator.records)
    settled = timed[-1][0] + 1
    add("assistant/message", settled, {"turn": 1, "step": 1, "message": message, "stream": stream, "usage": {"inputTokens": 10, "outputTokens": 20}}, surfaceOp="append")
    _postlude(add, content, settled + 1, finish)
    return "\n".join(json.dumps(line, separators=(",", ":")) for line in lines) + "\n"


def v0_log(timed, content, finish: str) -> str:
    """One chunk event per delta; each burst of three or more packable deltas of one block is a row."""
    lines: list[dict] = [_head(0)]
    seq = [0]

    def add(kind, at, data, **extra):
        lines.append({"type": kind, "seq": seq[0], "time": at, "data": data, **extra})
        seq[0] += 1

    _prelude(add)
    first = seq[0]

    def key(chunk):
        if chunk["type"] == "tool-call-delta":
            return ("tool-call-chunks", chunk["index"], chunk["id"], chunk.get("name"), "name" in chunk)
        if chunk["type"] == "text-delta":
            return ("text-chunks", chunk["index"])
        return None

    i = 0
    while i < len(timed):
        run_key = key(timed[i][1])
        j = i
        while run_key is not None and j + 1 < len(timed) and key(timed[j + 1][1]) == run_key:
            j += 1
        if run_key is not None and j - i + 1 >= 3:
            run = timed[i : j + 1]
            chunk0 = run[0][1]
            data = {"turn": 1, "step": 1, "index": chunk0["index"]}
            if run_key[0] == "tool-call-chunks":
                data["id"] = chunk0["id"]
                if "name" in chunk0:
                    data["name"] = chunk0["name"]
            data["dt"] = [b[0] - a[0] for a, b in zip(run, run[1:])]
            members = [chunk["argumentsDelta"] if "argumentsDelta" in chunk else chunk["text"] for _, chunk in run]
            data["args" if run_key[0] == "tool-call-chunks" else "texts"] = members
            lines.append({"type": run_key[0], "seq0": seq[0], "time0": run[0][0], "data": data})
            seq[0] += len(run)
            i = j + 1
        else:
            add("assistant/chunk", timed[i][0], {"turn": 1, "step": 1, "chunk": timed[i][1]})
            i += 1
    message = {"id": "a1", "role": "assistant", "content": content, "source": {"kind": "model", "provider": "p", "model": "m"}}
    settled = timed[-1][0] + 1
    add("assistant/message", settled, {"turn": 1, "step": 1, "message": message, "usage": {"inputTokens": 10, "outputTokens": 20}}, sourceEventSeqs=[[first, seq[0] - 1]], surfaceOp="append")
    _postlude(add, content, settled + 1, finish)
    return "\n".join(json.dumps(line, separators=(",", ":")) for line in lines) + "\n"


SCENARIOS = {
    "two-calls": dict(calls=2),
    "three-calls": dict(calls=3),
    "four-calls": dict(calls=4),
    "text-and-a-call": dict(calls=1, with_text=True),
}
GENERATIONS = ("v0", "v2", "v4")


def write(tmp_path: Path, generation: str, finish: str = "tool-calls", **scenario) -> tuple[Path, list[dict], list[dict]]:
    timed, content = interleaved(finish=finish, **scenario)
    if generation == "v0":
        body, name = v0_log(timed, content, finish), "session.jsonl"
    else:
        body = v2_log(timed, content, finish)
        body, name = (later(body, 4), "session.v4.jsonl") if generation == "v4" else (body, "session.v2.jsonl")
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    assembled = assemble(Accumulator_records(timed))
    return path, assembled.blocks(), assembled.truncated_tool_calls()


def Accumulator_records(timed):
    accumulator = Accumulator()
    for at, chunk in timed:
        accumulator.push(at, chunk)
    return accumulator.records


def timeline(path: Path) -> Timeline:
    built = Timeline(open_log(str(path)))
    built.ensure_all()
    return built


def boxes(text: str) -> list[tuple[str, str]]:
    """The tool-call frames of a transcript: (name, arguments inside the frame)."""
    found = []
    lines = text.split("\n")
    for n, line in enumerate(lines):
        if line.startswith("╭─ tool call"):
            body = []
            for inner in lines[n + 1 :]:
                if not inner.startswith("│ "):
                    break
                body.append(inner[2:])
            found.append((line[len("╭─ tool call") :].strip(), "\n".join(body)))
    return found


@pytest.mark.parametrize("generation", GENERATIONS)
@pytest.mark.parametrize("scenario", SCENARIOS)
def test_each_call_is_shown_once_whole_in_block_order(tmp_path, scenario, generation):
    path, blocks, _ = write(tmp_path, generation, **SCENARIOS[scenario])
    calls = [(block["name"], block["arguments"]) for block in blocks if block["type"] == "tool-call"]
    built = timeline(path)
    text = transcript(built)
    assert "(continued)" not in text
    assert boxes(text) == calls  # once each, its own name, the assembled arguments, in block order
    if SCENARIOS[scenario].get("with_text"):
        prose = next(block["text"] for block in blocks if block["type"] == "text")
        assert f"❯ look\n{prose}\n╭─ tool call {calls[0][0]}\n" in text  # the text block whole, first
    # markdown: a section per call, under its own name, with the assembled arguments
    document = markdown(Timeline(open_log(str(path))))
    sections = [chunk for chunk in document.split("**tool call** ")[1:]]
    assert [(section.split("`")[1], section.split("```json\n")[1].split("\n```")[0]) for section in sections] == calls
    # NDJSON: the message is one record whose parts, joined per block, are the assembled blocks
    records = list(timeline_records(Timeline(open_log(str(path)))))
    region = next(record for record in records if record.get("kind") == "blocks")
    joined: dict[int, str] = {}
    for part in region["parts"]:
        if part["kind"] == "tool-args":
            joined[part["block"]] = joined.get(part["block"], "") + "".join(part["fragments"])
    assert [joined[index] for index in sorted(joined)] == [arguments for _, arguments in calls]
    blocks_in_order = []
    for part in region["parts"]:
        if part.get("block") is not None and part["block"] not in blocks_in_order:
            blocks_in_order.append(part["block"])
    assert blocks_in_order == sorted(blocks_in_order)  # block by block, in the message's order


@pytest.mark.parametrize("generation", GENERATIONS)
def test_the_screen_grows_each_call_in_place(tmp_path, generation):
    path, blocks, _ = write(tmp_path, generation, calls=3)
    built = timeline(path)
    calls = [block for block in blocks if block["type"] == "tool-call"]
    region = next(item for item in built.items if item.kind == "blocks")
    for position in range(region.start, region.start + region.count + 1):
        screen = screen_text(built, position, 100, 200)
        headers = [line for line in screen.split("\n") if line.startswith("╭─ tool call")]
        assert len(headers) == len(set(headers)) <= len(calls), position  # never a box per fragment
        for name, arguments in boxes(screen):  # each box holds a prefix of its call's arguments
            if name:  # (a header shows for a moment before its name)
                assert any(name == call["name"] and call["arguments"].startswith(arguments) for call in calls), (position, name, arguments)
    whole = screen_text(built, len(built), 100, 200)
    assert boxes(whole) == [(call["name"], call["arguments"]) for call in calls]
    assert whole == "\n".join(line.rstrip() for line in transcript(built).rstrip("\n").split("\n"))


@pytest.mark.parametrize("generation", GENERATIONS)
def test_a_max_tokens_finish_marks_every_interleaved_call_dropped(tmp_path, generation):
    path, blocks, truncated = write(tmp_path, generation, finish="max-tokens", calls=2)
    assert [block["type"] for block in blocks] == [] and len(truncated) == 2  # the assembler drops both
    text = transcript(timeline(path))
    assert [name for name, _ in boxes(text)] == ["grep", "bash"]
    assert text.count("╰─ cut off by max tokens; the call was dropped") == 2
    document = markdown(Timeline(open_log(str(path))))
    assert document.count("**tool call** ") == 2
    assert document.count("*dropped: the reply was cut off by max tokens, so dsh never ran this call*") == 2
    region = next(record for record in timeline_records(Timeline(open_log(str(path)))) if record.get("kind") == "blocks")
    ends = [part for part in region["parts"] if part["kind"] == "tool-end"]
    assert [part["info"] for part in ends] == [{"dropped": True}, {"dropped": True}]


def test_a_call_closed_before_a_max_tokens_finish_is_marked_dropped(tmp_path):
    """Not interleaved: a complete call, then text, then max tokens — dsh drops that call too."""
    stream = [
        {"type": "tool-call-chunks", "time0": T + 100, "index": 0, "dt": [1], "id": "c0", "name": "bash", "args": ['{"a"', ": 1}"]},
        {"type": "chunk", "time": T + 102, "chunk": end(0, {"type": "tool-call", "id": "c0", "name": "bash", "arguments": '{"a": 1}'})},
        {"type": "text-chunks", "time0": T + 103, "index": 1, "dt": [], "texts": ["and then"]},
        {"type": "chunk", "time": T + 104, "chunk": {"type": "finish", "reason": {"kind": "max-tokens"}}},
    ]
    lines = [_head(4)]

    def add(kind, at, data, **extra):
        lines.append({"type": kind, "seq": len(lines) - 1, "time": at, "data": data, **extra})

    _prelude(add)
    message = {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": "and then"}], "source": {"kind": "model", "provider": "p", "model": "m"}}
    add("assistant/message", T + 105, {"turn": 1, "step": 1, "message": message, "stream": stream}, surfaceOp="append")
    path = tmp_path / "session.v4.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    assert "│ {\"a\": 1}\n╰─ dropped: the reply was cut off by max tokens\nand then" in transcript(timeline(path))
    assert "*dropped: the reply was cut off by max tokens, so dsh never ran this call*" in markdown(Timeline(open_log(str(path))))


def test_terminal_rows_are_counted_as_a_terminal_wraps_them():
    assert row_starts("", 10) == [0]
    assert row_starts("abc\ndef", 10) == [0, 4]
    assert row_starts("x" * 10, 10) == [0]  # a full row: the cursor waits at its end
    assert row_starts("x" * 11, 10) == [0, 10]
    assert row_starts("x" * 9 + "字", 10) == [0, 9]  # a wide character that would straddle the edge wraps whole
    assert row_starts("\tx" * 2, 10) == [0]  # tabs to stops of 8, never past the last column


def _tmux_screen(command: str, cols: int, rows: int) -> str:
    name = f"dshctl-cast-{os.getpid()}-{time.monotonic_ns()}"
    subprocess.run(["tmux", "new-session", "-d", "-s", name, "-x", str(cols), "-y", str(rows), f"sh -c '{command}; sleep 60'"], check=True)
    try:
        previous, deadline = None, time.monotonic() + 15
        while time.monotonic() < deadline:
            time.sleep(0.3)
            screen = subprocess.run(["tmux", "capture-pane", "-p", "-t", name], capture_output=True, text=True).stdout
            if screen == previous and screen.strip():
                return screen
            previous = screen
        return previous or ""
    finally:
        subprocess.run(["tmux", "kill-session", "-t", name], capture_output=True)


@pytest.mark.serial
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")
@pytest.mark.parametrize("cols,rows", [(100, 40), (60, 12)])
def test_the_cast_played_in_a_terminal_ends_on_the_transcript(tmp_path, cols, rows):
    asciinema = shutil.which("asciinema") or str(Path(sys.executable).parent / "asciinema")
    if not Path(asciinema).exists():
        pytest.skip("asciinema not installed")
    path, _, _ = write(tmp_path, "v4", calls=3, with_text=True)
    cast = tmp_path / "x.cast"
    result = subprocess.run([sys.executable, "-m", "dshctl.cli", "--no-color", "replay", str(path), "--export", str(cast), "--cols", str(cols), "--rows", str(rows)], capture_output=True, cwd=REPO)
    assert result.returncode == 0, result.stderr
    outputs = [json.loads(line)[2] for line in cast.read_text(encoding="utf-8").splitlines()[1:] if json.loads(line)[1] == "o"]
    assert any("\x1b[J" in output for output in outputs)  # a block above the last one grew in place
    screen = _tmux_screen(f"{asciinema} cat {cast}", cols, rows)
    expected = [row.rstrip() for row in _wrapped(transcript(timeline(path)), cols)][-(rows - 1) :]
    assert [row.rstrip() for row in screen.rstrip("\n").split("\n")][-len(expected) :] == expected


def _wrapped(text: str, cols: int) -> list[str]:
    rows = []
    for line in text.rstrip("\n").split("\n"):
        starts = row_starts(line, cols)
        rows += [line[a:b] for a, b in zip(starts, starts[1:] + [len(line)])]
    return rows


def test_terminal_output_outside_regions_is_the_transcript(tmp_path):
    built = Timeline(open_log(str(SAMPLES / "tour.session.v4.jsonl")))
    assert "".join(text for _, text in terminal_output(built)) == transcript(Timeline(open_log(str(SAMPLES / "tour.session.v4.jsonl"))))


def test_a_timeline_larger_than_its_memory_budget_reads_back_what_it_spilled(tmp_path, monkeypatch):
    """The store keeps the newest chunks in memory and the rest compressed in a temporary file; every
    item and time reads back the same, whichever chunk it is in."""
    from dshctl.replay import store

    monkeypatch.setattr(store, "RESIDENT_BYTES", 4096)
    monkeypatch.setattr(store, "CHUNK_BYTES", 2048)
    whole = timeline(SAMPLES / "tour.session.v4.jsonl")
    small = Timeline(open_log(str(SAMPLES / "tour.session.v4.jsonl")))
    small.ensure_all()
    assert small.store.spilled_bytes > 0
    assert transcript(small) == transcript(whole) and list(small.times) == list(whole.times)
    assert [item.kind for item in small.items] == [item.kind for item in whole.items]
    assert screen_text(small, 40, 80, 20) == screen_text(whole, 40, 80, 20)
