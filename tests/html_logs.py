"""Logs and helpers for the HTML export's tests (tests/test_replay_html*.py): hand-written v4 logs, the
page's embedded data read back, and the text comparison's normalization."""

from __future__ import annotations

import base64
import json
import re
import zlib
from pathlib import Path

from conftest import CORPUS, SAMPLES

T0 = 1_790_000_000_000

LAYOUT = re.compile(r"[\s╭╰│─━❯✻]+")
"""What "layout aside" leaves out when the page's text is compared with ``replay --instant``'s: every
whitespace character and every frame glyph the terminal draws around blocks (``╭─ … │ … ╰─``, the
``━━`` of a turn header, the ``❯`` of a prompt, the ``✻`` of thinking). Everything else — every word,
digit and punctuation mark, of the log's text and of the labels — must be equal, in the same order."""


def without_layout(text: str) -> str:
    return LAYOUT.sub("", text)


def write_log(path: Path, events: list[tuple[str, dict]], *, header: dict | None = None) -> Path:
    """A v4 log of ``events`` (``(type, data)``; ``data["_time"]`` sets the event time, else T0 + seq)."""
    fields = {"type": "session", "version": 4, "id": "html-test", "createdAt": T0, "cwd": "/w", "isSeeded": False, "delegationDepth": 0}
    lines = [json.dumps({**fields, **(header or {})}, ensure_ascii=False)]
    for seq, (kind, data) in enumerate(events):
        data = dict(data)
        record = {"type": kind, "seq": seq, "time": data.pop("_time", T0 + seq), "data": data}
        if kind in ("user/message", "assistant/message", "tool/result"):
            record["surfaceOp"] = "append"
        lines.append(json.dumps(record, ensure_ascii=False))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def prompt(turn: int, text: str, time: int) -> tuple[str, dict]:
    return "user/message", {"role": "user", "id": f"u{turn}", "source": {"kind": "user"}, "content": [{"type": "text", "text": text}],
                            "_time": time}


def assistant(turn: int, step: int, stream: list, content: list, time: int, **extra) -> tuple[str, dict]:
    message = {"role": "assistant", "content": content, "source": {"kind": "model", "provider": "p", "model": "m"}, "id": f"a{turn}{step}"}
    return "assistant/message", {"turn": turn, "step": step, "message": message, "stream": stream, "_time": time, **extra}


def tool_result(turn: int, step: int, call_id: str, text: str, time: int, *, error: bool = False) -> tuple[str, dict]:
    message = {"role": "tool", "source": {"kind": "tool", "callId": call_id}, "toolCallId": call_id,
               "content": [{"type": "text", "text": text}], "isError": error, "id": f"r-{call_id}"}
    return "tool/result", {"turn": turn, "step": step, "message": message, "_time": time}


def chunk(time: int, value: dict) -> dict:
    return {"type": "chunk", "time": time, "chunk": value}


def one_turn(turn: int, t: int, prompt_text: str, stream: list, content: list, *, after: list | None = None, title: str | None = None) -> list:
    """turn/start, a prompt, one step with the assistant's ``stream``, ``after`` (tool events), turn/end."""
    events = [("turn/start", {"turn": turn, "_time": t}), ("step/start", {"turn": turn, "step": 1, "_time": t + 1}), prompt(turn, prompt_text, t + 2)]
    if title is not None:
        events.append(("session/title", {"title": title, "messageSeqs": [], "source": {"kind": "fallback"}, "_time": t + 3}))
    end = max([t + 10] + [record.get("time", 0) for record in stream if isinstance(record, dict)] + [record.get("time0", 0) for record in stream]) + 10
    events.append(assistant(turn, 1, stream, content, end))
    events.extend(after or [])
    last = max([end] + [data.get("_time", 0) for _, data in after or []]) + 5
    events.append(("step/end", {"turn": turn, "step": 1, "_time": last}))
    events.append(("turn/end", {"turn": turn, "reason": {"kind": "completed"}, "_time": last + 1}))
    return events


def page_data_of(html_text: str) -> dict:
    """The JSON document a page embeds (base64 → inflate → JSON), as the browser reads it."""
    return json.loads(embedded_bytes(html_text))


def embedded_bytes(html_text: str) -> bytes:
    match = re.search(r'<script type="application/octet-stream" id="dshctl-data"[^>]*>([^<]*)</script>', html_text)
    assert match, "no embedded data"
    return zlib.decompress(base64.b64decode(match.group(1)))


def logs_to_compare() -> list[Path]:
    """Every sample log and every corpus log (the corpus when it is beside the checkout)."""
    logs = sorted(path for path in SAMPLES.glob("*.jsonl*"))
    if CORPUS.is_dir():
        logs += sorted(CORPUS.rglob("*.jsonl"))
    return logs


# -- interleaved blocks of one message (parallel tool calls, text beside a call) ----------------------------

CROSSED_KEY = "sk-abcDEF123456789XYZ0000"
"""A secret the crossed message's text streams split across three deltas of one part (one burst)."""
CROSSED_TOKEN = "Zq8wYt3Kp0Lm7Rn2Vb5X"
"""A bearer token the crossed message's bash call streams split across two of its parts (two bursts,
with the other blocks' deltas between them)."""


def crossed() -> tuple[list[tuple[int, dict]], list[dict]]:
    """Timed chunks of one message whose blocks start in index order (text, bash, read) but first stream
    in the reverse order — the read call, then bash, then the text — and then take turns in bursts of
    three deltas; and its content. The transcript lays the blocks out in block-start order, not in the
    order their first output streamed."""
    from chunks import call, end, start, text

    prose = ["Checking the key sk-abc", "DEF123456789", "XYZ0000", " before ", "anything, ", "then ", "report", "ing", "."]
    bash = ['{"command": ', "\"curl -H 'Authorization: ", f"Bearer {CROSSED_TOKEN[:9]}", f"{CROSSED_TOKEN[9:]}' ", "https://", "ex", "ample", ".com", '"}']
    read = ['{"file', '_path": ', '"REA', 'DME', '.md', '", ', '"lim', 'it": ', "5}"]
    blocks = [("text", "", prose), ("call", "bash", bash), ("call", "read", read)]
    timed: list[tuple[int, dict]] = []
    at = [T0 + 100]

    def add(value: dict) -> None:
        timed.append((at[0], value))
        at[0] += 7

    for index, (kind, _, _) in enumerate(blocks):
        add(start(index, "text" if kind == "text" else "tool-call"))
    for burst in range(3):
        for index in (2, 1, 0):
            kind, name, parts = blocks[index]
            for k in range(burst * 3, burst * 3 + 3):
                add(text(index, parts[k]) if kind == "text" else call(index, f"c{index}", parts[k], name if k == 0 else None))
    content = [{"type": "text", "text": "".join(prose)}] + [
        {"type": "tool-call", "id": f"c{index}", "name": name, "arguments": "".join(parts)} for index, (_, name, parts) in enumerate(blocks) if index]
    for index in (2, 1, 0):
        add(end(index, content[index]))
    add({"type": "usage", "usage": {"inputTokens": 10, "outputTokens": 20}})
    add({"type": "finish", "reason": {"kind": "tool-calls"}})
    return timed, content


def interleaved_log(folder: Path, generation: str, timed: list[tuple[int, dict]], content: list[dict], finish: str = "tool-calls") -> Path:
    """``timed`` chunks as one message, written as dsh writes it in ``generation``: ``v0`` (a chunk
    event per delta, runs of three or more packed into rows), ``v2`` (compact runs) or ``v4`` — with
    tests/test_replay_parallel.py's writers."""
    from stats_logs import later
    from test_replay_parallel import v0_log, v2_log

    folder.mkdir(parents=True, exist_ok=True)
    if generation == "v0":
        body, name = v0_log(timed, content, finish), "session.jsonl"
    else:
        body = v2_log(timed, content, finish)
        body, name = (later(body, 4), "session.v4.jsonl") if generation == "v4" else (body, "session.v2.jsonl")
    path = folder / name
    path.write_text(body, encoding="utf-8")
    return path


MESSAGES = ("two-calls", "three-calls", "four-calls", "text-and-a-call", "crossed", "dropped")
"""The crafted interleaved messages: 2–4 calls and a text beside a call (tests/test_replay_parallel.py's
scenarios), :func:`crossed`, and two calls a max-tokens finish drops."""
DROPPED = "cut off by max tokens; the call was dropped"


def message(name: str) -> tuple[list[tuple[int, dict]], list[dict], str]:
    """One of :data:`MESSAGES`: its timed chunks, its content and how it finished."""
    from test_replay_parallel import SCENARIOS, interleaved

    if name == "crossed":
        return (*crossed(), "tool-calls")
    if name == "dropped":
        return (*interleaved(calls=2, finish="max-tokens"), "max-tokens")
    return (*interleaved(**SCENARIOS[name]), "tool-calls")


def assembled_blocks(timed: list[tuple[int, dict]]) -> list[dict]:
    """The message's blocks as dsh's assembler makes them of its chunks."""
    from dshctl.assembler import assemble
    from dshctl.stream import Accumulator

    accumulator = Accumulator()
    for at, value in timed:
        accumulator.push(at, value)
    return assemble(accumulator.records).blocks()


def dropped_call_log(folder: Path, how: str) -> Path:
    """A call, then a text block, then a max-tokens finish (dsh drops the call, FORMAT §4.6) — not
    interleaved. ``how`` the call ends: ``closed`` (its block-end came), ``open`` (none: the text's output
    closed its frame) or ``whole`` (no deltas, only its block-end)."""
    t = T0 + 1000
    deltas = [{"type": "tool-call-chunks", "time0": t + 10, "index": 0, "dt": [5], "id": "c0", "name": "bash", "args": ['{"cmd": ', '"ls"}']}]
    closing = [chunk(t + 20, {"type": "block-end", "index": 0, "block": {"type": "tool-call", "id": "c0", "name": "bash", "arguments": '{"cmd": "ls"}'}})]
    stream = {"closed": deltas + closing, "open": deltas, "whole": closing}[how] + [
        {"type": "text-chunks", "time0": t + 30, "index": 1, "dt": [5], "texts": ["and ", "then"]},
        chunk(t + 40, {"type": "finish", "reason": {"kind": "max-tokens"}})]
    folder.mkdir(parents=True, exist_ok=True)
    return write_log(folder / f"dropped-{how}.session.v4.jsonl", one_turn(1, t, "go", stream, [{"type": "text", "text": "and then"}]))


def secret_log(tmp_path: Path) -> Path:
    """A log carrying secrets everywhere a page shows text: split across streamed deltas, in a prompt, a
    tool call's arguments, a tool result, a failure message past the view's 300-character cut, a title."""
    t = T0 + 1000
    key = "sk-abcDEF123456789XYZ0000"
    stream = [
        {"type": "text-chunks", "time0": t + 10, "index": 0, "dt": [10, 10, 10], "texts": ["the key is sk-abc", "DEF123456789", "XYZ0000", " and codename project-x42."]},
        chunk(t + 50, {"type": "block-end", "index": 0, "block": {"type": "text", "text": f"the key is {key} and codename project-x42."}}),
        chunk(t + 60, {"type": "tool-call-delta", "index": 1, "id": "c1", "name": "bash", "argumentsDelta": '{"cmd": "curl -H \'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9'}),
        chunk(t + 70, {"type": "tool-call-delta", "index": 1, "id": "c1", "argumentsDelta": '.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U\' https://bob:hunter2pass@example.com"}'}),
        chunk(t + 80, {"type": "block-end", "index": 1, "block": {"type": "tool-call", "id": "c1", "name": "bash", "arguments": "{}"}}),
        chunk(t + 81, {"type": "finish", "reason": {"kind": "tool-calls"}}),
    ]
    after = [
        ("tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "bash", "arguments": "{}", "_time": t + 90}),
        tool_result(1, 1, "c1", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAE\nbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n-----END OPENSSH PRIVATE KEY-----\nok", t + 95),
        ("llm/retry", {"turn": 1, "step": 1, "retry": 1, "maxRetries": 3, "delayMs": 10, "failure": {"code": "x" * 280 + " ghp_abcdefghijklmnopqrstuvwxyz0123456789"}, "_time": t + 96}),
    ]
    events = one_turn(1, t, f"use password=Tr0ub4dor&3 and {key} for project-x7", stream, [], after=after, title="project-x99 rollout")
    return write_log(tmp_path / "secrets.session.v4.jsonl", events)


SECRETS = ("abcDEF", "DEF123456789", "XYZ0000", "eyJhbGciOiJIUzI1NiJ9", "dozjgNryP4J3", "hunter2pass", "b3BlbnNzaC1rZXkt",
           "bm9uZQAAAAAAAAAB", "Tr0ub4dor", "ghp_abcdefghijklmnop", "project-x")
