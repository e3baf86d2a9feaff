#!/usr/bin/env python3
"""Write dshctl's own sample session logs, deterministically.

One conversation model (the "tour": four turns, six steps, with tool calls, a same-step retry, a
max-tokens finish, a cancelled stream and images) is rendered in every dsh log generation:

* v0  -- what dsh <= 0.1.2 writes: one ``assistant/chunk`` event per streamed chunk, packed chunk rows,
         one zstd frame per durable batch (FORMAT.md §1.5, §1.6, §2.4);
* v2  -- what dsh's v1->v2 migration makes of that log: chunks folded into ``data.stream`` (§2.6);
* v3  -- v2->v3: the system prompt becomes ``system/message`` surface events (§2.7);
* v4  -- v3->v4: tool-role results and producer-owned message sources (§2.10).

The same is done for a fork child (inherits the tour's first turn, adds one of its own) and for a tiny
session without a cwd. Every timestamp is an explicit integer (epoch ms) chosen so that dsh's
statistics come out round (see samples/README.md). Nothing depends on the wall clock, the locale or
a random source, so running this twice writes identical files.

Usage::

    python samples/generate.py            # rewrite everything under samples/
    python samples/generate.py --check    # regenerate into a temp dir; exit 1 if samples/ differs
    python samples/generate.py --out DIR  # write somewhere else

Dependencies: the standard library, ``zstandard`` and ``dshctl.stream.Accumulator`` (the packer of
v2+ compact stream records).
"""

from __future__ import annotations

import argparse
import copy
import filecmp
import hashlib
import json
import os
import shutil
import struct
import sys
import tempfile
import uuid
import zipfile
import zlib
from pathlib import Path

import zstandard

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import msgspec  # noqa: E402  (a dshctl dependency; only used to turn Accumulator records into JSON)

from dshctl.stream import Accumulator  # noqa: E402

# ------------------------------------------------------------------------------------------------
# Constants of the model

T0 = 1_790_000_000_000  # tour createdAt; every time below is T0 + an offset in ms
WINDOW_MS = 200  # dsh's write-behind window (writeBatchMaxDelayMs default)
ZSTD_LEVEL = 3

TOUR_ID = "7c1e5a2d-3b9f-4e61-a8d4-2f0b6c9e1a57"
CHILD_ID = "b4d2f6a8-1c3e-4a5b-9d7f-0e2c4a6b8d10"
NOCWD_ID = "session-5d9e2c71-0b3a-4f68-a1c4-7e2b9d0f3a86"
CWD_CHANGE_ID = "e8c1f3a5-7b9d-4e2f-8a6c-0d4b2f6e8a13"
CWD = "/home/alice/dev/dsh tour"
PROJECT_DIR = "--home-alice-dev-dsh~0020tour--"  # projectKey(CWD), FORMAT.md §1.2

PROVIDER = "deepseek-official"
MODEL = "deepseek-v4-flash"
CONTEXT_WINDOW = 128_000

ID_NAMESPACE = uuid.UUID("5f0e8a3c-2d41-4b7e-9c06-1a2b3c4d5e6f")

SYSTEM_PROMPT_1 = "You are dsh, a coding agent. Read before you edit; keep changes small."
SYSTEM_PROMPT_2 = SYSTEM_PROMPT_1 + "\nAnswer in under 200 tokens."

TOOLS = [
    {
        "name": "read",
        "description": "Read a file.",
        "parameters": {"type": "object", "properties": {"file_path": {"type": "string"}, "limit": {"type": "integer"}}},
    },
    {"name": "todo_write", "description": "Set the todo list.", "parameters": {"type": "object", "properties": {"todos": {"type": "array"}}}},
    {"name": "write_file", "description": "Write a file.", "parameters": {"type": "object", "properties": {"file_path": {"type": "string"}}}},
]

RUNTIME_SECTIONS = [
    {"name": "sandbox:policy", "text": "File sandbox: workspace-write."},
    {"name": "approval:policy", "text": "Approval policy: never (requests are refused)."},
]
CHILD_RUNTIME_SECTIONS = RUNTIME_SECTIONS + [{"name": "delegation", "text": "You are a delegated subagent."}]


def at(offset_ms: int) -> int:
    return T0 + offset_ms


def stable_id(*parts: str) -> str:
    return str(uuid.uuid5(ID_NAMESPACE, "/".join(parts)))


# ------------------------------------------------------------------------------------------------
# Images (FORMAT.md §5.2, §5.3): real bytes, content-addressed ids


def _png_chunk(kind: bytes, payload: bytes) -> bytes:
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))


def _stored_zlib(data: bytes) -> bytes:
    """A zlib stream made of one stored (uncompressed) deflate block: byte-stable everywhere."""
    assert len(data) < 65536
    block = b"\x01" + struct.pack("<HH", len(data), len(data) ^ 0xFFFF) + data
    return b"\x78\x01" + block + struct.pack(">I", zlib.adler32(data))


def make_png() -> bytes:
    """A 2x2 RGBA PNG: red, green / blue, half-transparent white."""
    pixels = [
        [(0xE0, 0x30, 0x30, 0xFF), (0x30, 0xA0, 0x40, 0xFF)],
        [(0x30, 0x50, 0xE0, 0xFF), (0xFF, 0xFF, 0xFF, 0x80)],
    ]
    raw = b"".join(b"\x00" + b"".join(bytes(p) for p in row) for row in pixels)  # filter type 0 per row
    ihdr = struct.pack(">IIBBBBB", 2, 2, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", ihdr) + _png_chunk(b"IDAT", _stored_zlib(raw)) + _png_chunk(b"IEND", b"")


def make_jpeg() -> bytes:
    """A 16x8 grayscale baseline JPEG: two flat 8x8 blocks (light gray, then the same gray).

    Quantisation table all ones; Huffman tables with the few symbols used. Block 1 has DC = 8 * (192 - 128)
    = 512 (magnitude category 10), block 2 a DC difference of 0; both have only an end-of-block AC code.
    """
    soi = b"\xff\xd8"
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00" + bytes([1, 1, 0, 0, 1, 0, 1, 0, 0])
    dqt = b"\xff\xdb" + struct.pack(">H", 67) + b"\x00" + bytes([1] * 64)
    sof0 = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, 8, 16, 1) + bytes([1, 0x11, 0])
    # DC table 0: two codes of length 2 -> symbol 0 = "00", symbol 10 = "01".
    dht_dc = b"\xff\xc4" + struct.pack(">H", 2 + 1 + 16 + 2) + b"\x00" + bytes([0, 2] + [0] * 14) + bytes([0x00, 0x0A])
    # AC table 0: one code of length 1 -> symbol 0x00 (end of block) = "0".
    dht_ac = b"\xff\xc4" + struct.pack(">H", 2 + 1 + 16 + 1) + b"\x10" + bytes([1] + [0] * 15) + bytes([0x00])
    sos = b"\xff\xda" + struct.pack(">HB", 8, 1) + bytes([1, 0x00, 0, 63, 0])
    # block 1: DC "01" + 10 bits of 512 ("1000000000") + EOB "0"; block 2: DC "00" + EOB "0" -> 16 bits.
    bits = "01" + "1000000000" + "0" + "00" + "0"
    bits += "1" * (-len(bits) % 8)
    scan = bytes(int(bits[i : i + 8], 2) for i in range(0, len(bits), 8))
    assert b"\xff" not in scan
    return soi + app0 + dqt + sof0 + dht_dc + dht_ac + sos + scan + b"\xff\xd9"


PNG_BYTES = make_png()
JPEG_BYTES = make_jpeg()


def image_ref(data: bytes, media_type: str, width: int, height: int, name: str) -> dict:
    return {
        "attachmentId": "sha256:" + hashlib.sha256(data).hexdigest(),
        "mediaType": media_type,
        "bytes": len(data),
        "width": width,
        "height": height,
        "name": name,
    }


PNG_REF = image_ref(PNG_BYTES, "image/png", 2, 2, "ci-failure.png")
JPEG_REF = image_ref(JPEG_BYTES, "image/jpeg", 16, 8, "pipeline.jpg")


# ------------------------------------------------------------------------------------------------
# The logical model: events in v0 order, with symbolic references


class Ref:
    """A reference to another event inside a payload; rendered as that event's seq per generation."""

    __slots__ = ("event",)

    def __init__(self, event: "Ev") -> None:
        self.event = event


class Ev:
    """One logical event. ``sources`` and replace endpoints are Ev objects, resolved when rendered."""

    def __init__(self, type_: str, time: int, data, sources=None, op=None, ranges=False, origin=None):
        self.type = type_
        self.time = time
        self.data = data
        self.sources = sources  # None or list[Ev]
        self.op = op  # None | "append" | ("replace", Ev, Ev)
        self.ranges = ranges  # write sourceEventSeqs in range form (§2.8)
        self.origin = origin if origin is not None else self  # the v0 event this one stands for
        self.batch = None  # durable batch number (v0), inherited by derived events


class Log:
    def __init__(self, session_id: str):
        self.session_id = session_id
        self.events: list[Ev] = []

    def add(self, type_, time, data, **kw) -> Ev:
        ev = Ev(type_, time, data, **kw)
        self.events.append(ev)
        return ev

    def message_id(self, name: str) -> str:
        return stable_id(self.session_id, "message", name)

    # --- helpers for common events

    def user_message(self, t, name, content, source=None) -> Ev:
        message = {"content": content, "source": source or {"kind": "user"}, "role": "user", "id": self.message_id(name)}
        return self.add("user/message", t, message, op="append")

    def prompt(self, t_queue, t_start, turn, name, content):
        """Queue a human prompt, open the turn, claim it. Returns the message dict (for the user/message)."""
        message = {"content": content, "source": {"kind": "user"}, "role": "user", "id": self.message_id(name)}
        self.add("agent/inbox/spliced", t_queue, {"target": "next-turn", "start": 0, "inserted": [copy.deepcopy(message)]})
        self.add("turn/start", t_start, {"turn": turn})
        self.add("agent/inbox/spliced", t_start, {"target": "next-turn", "start": 0, "removedCount": 1, "inserted": []})
        return message

    def chunks(self, turn, step, timed) -> list[Ev]:
        evs = [self.add("assistant/chunk", t, {"turn": turn, "step": step, "chunk": chunk}) for t, chunk in timed]
        for ev in evs:
            ev.attempt = evs
        return evs

    def assistant_message(self, t, turn, step, chunk_evs, name, ranges=False, interrupted=False) -> Ev:
        timed = [(ev.time, ev.data["chunk"]) for ev in chunk_evs]
        content, usage, replay = assemble(timed, interrupted)
        source = {"kind": "model", "provider": PROVIDER, "model": MODEL}
        if replay is not None:
            source["replayState"] = replay
        data = {
            "turn": turn,
            "step": step,
            "message": {"role": "assistant", "content": content, "source": source, "id": self.message_id(name)},
        }
        if usage is not None and not interrupted:
            data["usage"] = usage
        if interrupted:
            data["interrupted"] = True
        return self.add("assistant/message", t, data, sources=list(chunk_evs), op="append", ranges=ranges)

    def tool_call(self, t, turn, step, call_id, name, arguments) -> Ev:
        return self.add("tool/call", t, {"turn": turn, "step": step, "callId": call_id, "name": name, "arguments": arguments})

    def tool_result(self, t, turn, step, call_ev, name, blocks, meta=None) -> Ev:
        call_id = call_ev.data["callId"]
        message = {
            "source": {"kind": "tool", "callId": call_id},
            "content": [{"type": "tool-result", "toolCallId": call_id, "content": blocks, "isError": False}],
            "role": "user",
            "id": self.message_id(name),
        }
        data = {"turn": turn, "step": step, "message": message}
        if meta is not None:
            data["meta"] = meta
        return self.add("tool/result", t, data, sources=[call_ev], op="append")


# --- stream chunk builders (each returns a list of (time, chunk))


def block_start(t, index, block_type):
    return [(t, {"type": "block-start", "index": index, "blockType": block_type})]


def deltas(kind, index, pieces, t0, step):
    chunk_type = {"text": "text-delta", "reasoning": "reasoning-delta"}[kind]
    return [(t0 + i * step, {"type": chunk_type, "index": index, "text": p}) for i, p in enumerate(pieces)]


def tool_deltas(index, call_id, name, fragments, times, name_on_every_delta):
    out = []
    for i, (t, fragment) in enumerate(zip(times, fragments, strict=True)):
        chunk = {"type": "tool-call-delta", "index": index, "id": call_id}
        if name_on_every_delta or i == 0:
            chunk["name"] = name
        chunk["argumentsDelta"] = fragment
        out.append((t, chunk))
    return out


def block_ends(t, blocks):
    return [(t, {"type": "block-end", "index": i, "block": b}) for i, b in blocks]


def usage_chunk(t, usage):
    return [(t, {"type": "usage", "usage": usage})]


def finish_chunk(t, kind, replay=None, failure=None):
    reason = {"kind": kind}
    if failure is not None:
        reason["failure"] = failure
    chunk = {"type": "finish", "reason": reason}
    if replay is not None:
        chunk["replayState"] = replay
    return [(t, chunk)]


def usage(inp, out, cache_read, reasoning):
    return {"inputTokens": inp, "outputTokens": out, "cacheReadTokens": cache_read, "reasoningTokens": reasoning}


def replay_state(session, name, kinds):
    blocks = []
    for k in kinds:
        if k == "reasoning":
            blocks.append({"type": "reasoning", "signature": stable_id(session, "signature", name)})
        else:
            blocks.append({"type": k})
    return {"response": {"kind": "deepseek-messages", "version": 1, "model": MODEL}, "blocks": blocks}


def assemble(timed, interrupted=False):
    """Our own block assembly (FORMAT.md §4.6) of one attempt: (content, usage, replayState)."""
    order: list[int] = []
    parts: dict[int, dict] = {}
    last_usage = None
    finish = None

    def part(index, block_type):
        if index not in parts:
            parts[index] = {"type": block_type, "text": "", "args": "", "id": None, "name": None, "block": None}
            order.append(index)
        return parts[index]

    for _, c in timed:
        kind = c["type"]
        if kind == "block-start":
            part(c["index"], c["blockType"])
        elif kind in ("text-delta", "reasoning-delta"):
            p = part(c["index"], kind.split("-")[0])
            if p["block"] is None:
                p["text"] += c["text"]
        elif kind == "tool-call-delta":
            p = part(c["index"], "tool-call")
            if p["block"] is None:
                p["id"] = c["id"]
                if c.get("name"):
                    p["name"] = c["name"]
                p["args"] += c["argumentsDelta"]
        elif kind == "block-end":
            p = part(c["index"], c["block"]["type"])
            if p["block"] is None:
                p["block"] = c["block"]
        elif kind == "usage":
            last_usage = c["usage"]
        elif kind == "finish":
            finish = c
    blocks = []
    for index in order:
        p = parts[index]
        if p["block"] is not None:
            blocks.append(p["block"])
        elif p["type"] in ("text", "reasoning"):
            blocks.append({"type": p["type"], "text": p["text"]})
        elif p["type"] == "tool-call":
            blocks.append({"type": "tool-call", "id": p["id"], "name": p["name"] or "", "arguments": p["args"]})
        else:
            raise ValueError("unclosed block of unknown type")
    if interrupted:
        content = [b for b in blocks if b["type"] in ("text", "reasoning") and b["text"].strip()]
        return content, None, None
    replay = None if finish is None else finish.get("replayState")
    if replay is not None and "blocks" in replay and len(replay["blocks"]) != len(blocks):
        replay = None
    content = blocks
    if finish is not None and finish["reason"]["kind"] == "max-tokens":
        keep = [b["type"] != "tool-call" for b in content]
        content = [b for b, k in zip(content, keep) if k]
        if replay is not None and "blocks" in replay:
            replay = {**replay, "blocks": [rb for rb, k in zip(replay["blocks"], keep) if k]}
    return content, last_usage, replay


# ------------------------------------------------------------------------------------------------
# The tour


def runtime_context_message(log: Log, t, name, sections) -> Ev:
    text = "Runtime context (replaces earlier snapshots).\n\n" + "\n\n".join(s["text"] for s in sections)
    source = {"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt", "form": "snapshot", "sections": sections}
    return log.user_message(t, name, [{"type": "text", "text": text}], source)


def request_header(log: Log, t, reason, system, max_tokens=None) -> Ev:
    config = {"provider": PROVIDER, "model": MODEL}
    if max_tokens is not None:
        config["maxTokens"] = max_tokens
    header = {"config": config, "system": system, "tools": copy.deepcopy(TOOLS)}
    return log.add("request/header", t, {"header": header, "reason": reason})


def build_tour(log: Log) -> dict:
    """Append the tour's events to ``log``; return named events the other builders need."""
    sid = log.session_id
    marks: dict = {}

    # ---------------- Turn 1 (1 step): image prompt; the first attempt fails with a 503 after three
    # text deltas, dsh retries in the same step, the second attempt answers.
    p1 = log.prompt(
        at(990),
        at(1000),
        1,
        "t1-prompt",
        [
            {"type": "text", "text": "CI on main is red. Screenshot of the failing job:"},
            {"type": "image", "attachment": dict(PNG_REF)},
            {"type": "text", "text": "What does it show?"},
        ],
    )
    log.add("step/start", at(1000), {"turn": 1, "step": 1})
    prompt1 = log.add("user/message", at(1002), p1, op="append")
    runtime_context_message(log, at(1002), "t1-runtime", RUNTIME_SECTIONS)
    log.add("session/title", at(1003), {"title": "CI on main is red.", "messageSeqs": [Ref(prompt1)], "source": {"kind": "fallback"}})
    request_header(log, at(1004), "initial", SYSTEM_PROMPT_1)
    log.add("request/context", at(1004), {"provider": PROVIDER, "model": MODEL, "contextWindow": CONTEXT_WINDOW})
    failure = {"message": "provider returned HTTP 503: upstream overloaded", "code": "SERVER", "status": 503}
    s = []
    s += block_start(at(1300), 0, "text")
    s += deltas("text", 0, ["The", " screenshot", " shows"], at(1300), 10)
    s += usage_chunk(at(1330), usage(12_000, 3, 0, 0))
    s += finish_chunk(at(1330), "error", failure=failure)
    log.chunks(1, 1, s)
    retry_id = stable_id(sid, "retry", "t1s1")
    log.add(
        "llm/retry",
        at(1331),
        {
            "retryId": retry_id,
            "turn": 1,
            "step": 1,
            "provider": PROVIDER,
            "mode": "normal",
            "policyKey": '["normal",3,["EMPTY_RESPONSE","RATE_LIMIT","SERVER","TIMEOUT","TRANSPORT"],1000,2,30000]',
            "retry": 1,
            "maxRetries": 3,
            "delayMs": 1000,
            "failure": failure,
        },
    )
    log.add("llm/retry-started", at(2331), {"retryId": retry_id, "turn": 1, "step": 1, "retry": 1})
    r = ["A red", " test", " job", " in CI."]
    t = ["The", " test", " job", " fails:", " SyntaxError", " on", " `??=`", " in", " tests/config.test.js", "."]
    s = []
    s += block_start(at(2700), 0, "reasoning")
    s += deltas("reasoning", 0, r, at(2700), 20)  # 2700 .. 2760
    s += block_start(at(2780), 1, "text")
    s += deltas("text", 1, t, at(2800), 50)  # 2800 .. 3250
    s += block_ends(at(3500), [(0, {"type": "reasoning", "text": "".join(r)}), (1, {"type": "text", "text": "".join(t)})])
    s += usage_chunk(at(3510), usage(2_000, 250, 10_000, 50))
    s += finish_chunk(at(3510), "stop", replay_state(sid, "t1s1", ["reasoning", "text"]))
    log.assistant_message(at(3550), 1, 1, log.chunks(1, 1, s), "t1s1", ranges=True)
    log.add("step/end", at(3551), {"turn": 1, "step": 1})
    marks["turn1_end"] = log.add("turn/end", at(3552), {"turn": 1, "reason": {"kind": "completed"}})

    # ---------------- Turn 2 (3 steps): parallel reads, a todo list, a long answer with an image block
    p2 = log.prompt(
        at(9990), at(10000), 2, "t2-prompt", [{"type": "text", "text": "Read build.log and .github/workflows/ci.yml and tell me what broke."}]
    )
    log.add("step/start", at(10000), {"turn": 2, "step": 1})
    prompt2 = log.add("user/message", at(10002), p2, op="append")
    title_provider = {"provider": "session-title-all-prompts-llm", "route": {"provider": PROVIDER, "model": MODEL}}
    marks["title_request"] = log.add(
        "session/title-llm-request",
        at(10003),
        {
            "titleProvider": title_provider["provider"],
            "messageSeqs": [Ref(prompt1), Ref(prompt2)],
            "route": title_provider["route"],
            "system": "Title this coding session in at most five words.",
            "messages": [
                {
                    "content": [{"type": "text", "text": None}],  # filled in after v0 numbering (fill_title_prompt)
                    "source": {"kind": "plugin", "plugin": "dsh-session-title-llm"},
                    "role": "user",
                    "id": log.message_id("t2-title-prompt"),
                }
            ],
            "maxTokens": 32,
        },
    )

    # step 1: reasoning + two parallel read calls; the first call's arguments arrive in 12 fragments,
    # the name only on the first ("") fragment.
    r1 = ["The", " log", " has", " the", " error,", " the", " workflow", " the", " Node", " version."]
    args_a = ["", '{"', "file", "_path", '": "', "build", ".log", '", "', "limit", '": ', "200", "}"]
    args_b = ['{"file_path": ".github/workflows/ci.yml"}']
    call_a, call_b = "call_00_Qm3vTn8RkLw2Yd5Ps7Xc0001", "call_01_Hb6zJf1NsUe4Ko9Gt2Wa0002"
    s = []
    s += block_start(at(10400), 0, "reasoning")
    s += deltas("reasoning", 0, r1, at(10400), 25)  # 10400 .. 10625
    s += block_start(at(10630), 1, "tool-call")
    s += tool_deltas(1, call_a, "read", args_a, [at(10630)] + [at(10635 + 5 * i) for i in range(11)], False)
    s += block_start(at(10690), 2, "tool-call")
    s += tool_deltas(2, call_b, "read", args_b, [at(10690)], True)
    s += block_ends(
        at(10695),
        [
            (0, {"type": "reasoning", "text": "".join(r1)}),
            (1, {"type": "tool-call", "id": call_a, "name": "read", "arguments": "".join(args_a)}),
            (2, {"type": "tool-call", "id": call_b, "name": "read", "arguments": "".join(args_b)}),
        ],
    )
    s += usage_chunk(at(10696), usage(1_000, 100, 12_000, 40))
    s += finish_chunk(at(10696), "tool-calls", replay_state(sid, "t2s1", ["reasoning", "tool-call", "tool-call"]))
    log.assistant_message(at(10700), 2, 1, log.chunks(2, 1, s), "t2s1")
    ca = log.tool_call(at(10701), 2, 1, call_a, "read", "".join(args_a))
    cb = log.tool_call(at(10701), 2, 1, call_b, "read", "".join(args_b))
    build_log = "build.log\n4:   settings.retries ??= 3;\n5: SyntaxError: Unexpected token '??='\n6: npm ERR! Test failed."
    ci_yml = ".github/workflows/ci.yml\n7:       - uses: actions/setup-node@v4\n8:         with: { node-version: 14 }"
    log.tool_result(at(10751), 2, 1, ca, "t2s1-result-a", [{"type": "text", "text": build_log}], {"path": "build.log"})
    log.tool_result(at(10801), 2, 1, cb, "t2s1-result-b", [{"type": "text", "text": ci_yml}])
    log.add("step/end", at(10802), {"turn": 2, "step": 1})

    # step 2: a todo list (tool-call deltas that repeat the name: a named packed row in v0)
    log.add("step/start", at(10810), {"turn": 2, "step": 2})
    r2 = ["Node 14", " lacks ??=;", " plan the fix."]
    todos = [
        {"content": "Pin Node 20 in ci.yml", "status": "in_progress"},
        {"content": "Re-run the test job", "status": "pending"},
    ]
    args_t = [
        '{"todos": [',
        '{"content": "Pin Node 20 in ci.yml", "status": "in_progress"}, ',
        '{"content": "Re-run the test job", "status": "pending"}',
        "]}",
    ]
    assert json.loads("".join(args_t)) == {"todos": todos}
    call_t = "call_00_Vd8sLq4ZxNc7Rb1Hm6Ty0003"
    s = []
    s += block_start(at(11010), 0, "reasoning")
    s += deltas("reasoning", 0, r2, at(11010), 10)
    s += block_start(at(11040), 1, "tool-call")
    s += tool_deltas(1, call_t, "todo_write", args_t, [at(11040 + 10 * i) for i in range(4)], True)
    s += block_ends(
        at(11080),
        [
            (0, {"type": "reasoning", "text": "".join(r2)}),
            (1, {"type": "tool-call", "id": call_t, "name": "todo_write", "arguments": "".join(args_t)}),
        ],
    )
    s += usage_chunk(at(11081), usage(1_500, 50, 12_500, 10))
    s += finish_chunk(at(11081), "tool-calls", replay_state(sid, "t2s2", ["reasoning", "tool-call"]))
    log.assistant_message(at(11110), 2, 2, log.chunks(2, 2, s), "t2s2")
    ct = log.tool_call(at(11111), 2, 2, call_t, "todo_write", "".join(args_t))
    log.add("todo/write", at(11115), {"todos": todos})
    log.tool_result(at(11121), 2, 2, ct, "t2s2-result", [{"type": "text", "text": "Todo list saved: 1 in progress, 1 pending."}])
    log.add("step/end", at(11122), {"turn": 2, "step": 2})

    # step 3: the answer, a 40-delta text run over ~500 ms (three durable batches in v0), then an image
    log.add("step/start", at(11130), {"turn": 2, "step": 3})
    r3 = ["Cause", ":", " Node", " 14", " in", " CI."]
    t3 = [
        "The", " test", " job", " runs", " on", " Node", " 14", ",", " but", " tests/config.test.js",
        " uses", " `??=`", ",", " which", " needs", " Node", " 15", " or", " newer", ".",
        "\n\n", "Fix", ":", " set", " `node-version:", " 20`", " in", " ci.yml", " (line", " 8)",
        " and", " re-run", " the", " job", " —", " nothing", " else", " failed.", " Pipeline", " sketch:",
    ]
    assert len(t3) == 40
    s = []
    s += block_start(at(11430), 0, "reasoning")
    s += deltas("reasoning", 0, r3, at(11430), 10)  # 11430 .. 11480
    s += block_start(at(11490), 1, "text")
    s += deltas("text", 1, t3, at(11500), 13)  # 11500 .. 12007
    s += block_start(at(12010), 2, "image")
    s += block_ends(
        at(12015),
        [
            (0, {"type": "reasoning", "text": "".join(r3)}),
            (1, {"type": "text", "text": "".join(t3)}),
            (2, {"type": "image", "attachment": dict(JPEG_REF)}),
        ],
    )
    s += usage_chunk(at(12016), usage(500, 300, 14_000, 60))
    s += finish_chunk(at(12016), "stop", replay_state(sid, "t2s3", ["reasoning", "text", "image"]))
    log.assistant_message(at(12030), 2, 3, log.chunks(2, 3, s), "t2s3", ranges=True)
    log.add("step/end", at(12031), {"turn": 2, "step": 3})
    log.add("turn/end", at(12032), {"turn": 2, "reason": {"kind": "completed"}})
    log.add(
        "session/title",
        at(12500),
        {
            "title": "Fix the red CI build",
            "messageSeqs": [Ref(prompt1), Ref(prompt2)],
            "source": {"kind": "provider", "provider": title_provider["provider"], "model": title_provider["route"]},
        },
    )

    # ---------------- Turn 3: new system prompt + maxTokens (request/header "change"), max-tokens finish
    p3 = log.prompt(at(19990), at(20000), 3, "t3-prompt", [{"type": "text", "text": "Now patch ci.yml yourself. Keep it short."}])
    log.add("step/start", at(20000), {"turn": 3, "step": 1})
    log.add("user/message", at(20002), p3, op="append")
    request_header(log, at(20003), "change", SYSTEM_PROMPT_2, max_tokens=200)
    t5 = ["Patch", "ing", " ci", ".yml", " now."]
    args_w = ["", '{"file_path": ".github/workflows/ci.yml", ', '"content": "name: ci\\n', "on: [push]\\n", "jobs:\\n", "  test:\\n", "    runs-on: ubu"]
    call_w = "call_00_Pz5cRw9KeTj3Ln8Dv4Sb0004"
    s = []
    s += block_start(at(20250), 0, "text")
    s += deltas("text", 0, t5, at(20250), 10)  # 20250 .. 20290
    s += block_ends(at(20300), [(0, {"type": "text", "text": "".join(t5)})])
    s += block_start(at(20300), 1, "tool-call")
    s += tool_deltas(1, call_w, "write_file", args_w, [at(20300)] + [at(20310 + 20 * i) for i in range(6)], False)
    s += usage_chunk(at(20420), usage(19_200, 200, 0, 0))
    s += finish_chunk(at(20420), "max-tokens", replay_state(sid, "t3s1", ["text", "tool-call"]))
    log.assistant_message(at(20600), 3, 1, log.chunks(3, 1, s), "t3s1")
    log.add("step/end", at(20601), {"turn": 3, "step": 1})
    log.add("turn/end", at(20602), {"turn": 3, "reason": {"kind": "max-tokens"}})

    # ---------------- Turn 4: the user cancels mid-stream
    p4 = log.prompt(at(29990), at(30000), 4, "t4-prompt", [{"type": "text", "text": "Explain every stage of the pipeline in detail."}])
    log.add("step/start", at(30000), {"turn": 4, "step": 1})
    log.add("user/message", at(30002), p4, op="append")
    r5 = ["Walk", " through", " checkout,", " setup,", " test", " in order."]
    t6 = ["Stage", " 1", " —", " checkout", ":", " the", " runner", " clones"]
    s = []
    s += block_start(at(30500), 0, "reasoning")
    s += deltas("reasoning", 0, r5, at(30500), 20)  # 30500 .. 30600
    s += block_start(at(30620), 1, "text")
    s += deltas("text", 1, t6, at(30620), 40)  # 30620 .. 30900
    log.assistant_message(at(31000), 4, 1, log.chunks(4, 1, s), "t4s1", interrupted=True)
    log.add("step/end", at(31001), {"turn": 4, "step": 1})
    log.add("turn/end", at(31002), {"turn": 4, "reason": {"kind": "aborted", "reason": {"kind": "user"}}})
    return marks


def fill_title_prompt(log: Log, marks: dict) -> None:
    """The title request quotes the prompts with their v0 seqs (dsh keeps this text byte-identical when
    migrating, while ``messageSeqs`` is renumbered)."""
    request = marks["title_request"]
    quoted = []
    for ref in request.data["messageSeqs"]:
        prompt = ref.event
        words = " ".join(b["text"] for b in prompt.data["content"] if b["type"] == "text")
        quoted.append({"seq": log.events.index(prompt), "text": words})
    text = "Human messages of the session, as JSON:\n" + json.dumps(quoted, ensure_ascii=False, separators=(",", ":"))
    request.data["messages"][0]["content"][0]["text"] = text


def build_child(tour: Log, tour_marks: dict) -> tuple[Log, dict]:
    """A subagent fork of the tour taken after turn 1, with one turn of its own."""
    child = Log(CHILD_ID)
    cut = tour.events.index(tour_marks["turn1_end"]) + 1
    child.events.extend(tour.events[:cut])  # the inherited prefix is the parent's events verbatim
    header = {
        "type": "session",
        "version": 0,
        "id": CHILD_ID,
        "createdAt": at(6_000),
        "cwd": CWD,
        "parentSession": TOUR_ID,
        "seedLength": cut,
        "origin": "subagent",
        "delegationDepth": 1,
    }
    child.add("session/end-seed", at(6_000), {})
    child.add("sandbox/mode", at(6_000), {"mode": "workspace-write", "source": "delegation"})
    child.add("approval/policy", at(6_000), {"policy": "never", "source": "delegation"})
    p = child.prompt(
        at(6_001), at(6_002), 2, "c2-prompt", [{"type": "text", "text": "In one sentence: which Node feature breaks the tests?"}]
    )
    child.add("subagent/descriptor", at(6_002), {"version": 3, "mode": "one-shot", "provider": "fork", "label": "Name the failing feature"})
    child.add("step/start", at(6_100), {"turn": 2, "step": 1})
    child.add("user/message", at(6_102), p, op="append")
    runtime_context_message(child, at(6_102), "c2-runtime", CHILD_RUNTIME_SECTIONS)
    request_header(child, at(6_103), "resume", SYSTEM_PROMPT_1)
    r = ["The", " parent", " saw", " it."]
    t = ["The", " `??=`", " operator,", " which", " Node", " 14 lacks."]
    s = []
    s += block_start(at(6_400), 0, "reasoning")
    s += deltas("reasoning", 0, r, at(6_400), 10)
    s += block_start(at(6_450), 1, "text")
    s += deltas("text", 1, t, at(6_460), 40)  # 6460 .. 6660
    s += block_ends(at(6_670), [(0, {"type": "reasoning", "text": "".join(r)}), (1, {"type": "text", "text": "".join(t)})])
    s += usage_chunk(at(6_671), usage(1_500, 60, 12_000, 20))
    s += finish_chunk(at(6_671), "stop", replay_state(CHILD_ID, "c2s1", ["reasoning", "text"]))
    child.assistant_message(at(6_700), 2, 1, child.chunks(2, 1, s), "c2s1")
    child.add("step/end", at(6_701), {"turn": 2, "step": 1})
    child.add("turn/end", at(6_702), {"turn": 2, "reason": {"kind": "completed"}})
    return child, {"header": header, "cut": cut}


def build_nocwd() -> tuple[Log, dict]:
    """A one-turn session whose header has no cwd (listed under ``_no-cwd``)."""
    log = Log(NOCWD_ID)
    base = 40_000
    p = log.prompt(at(base), at(base + 10), 1, "n1-prompt", [{"type": "text", "text": "ping"}])
    log.add("step/start", at(base + 10), {"turn": 1, "step": 1})
    log.add("user/message", at(base + 12), p, op="append")
    request_header(log, at(base + 13), "initial", SYSTEM_PROMPT_1)
    log.add("request/context", at(base + 13), {"provider": PROVIDER, "model": MODEL, "contextWindow": CONTEXT_WINDOW})
    s = []
    s += block_start(at(base + 210), 0, "text")
    s += deltas("text", 0, ["pong"], at(base + 210), 0)
    s += block_ends(at(base + 211), [(0, {"type": "text", "text": "pong"})])
    s += usage_chunk(at(base + 212), usage(9_000, 2, 0, 0))
    s += finish_chunk(at(base + 212), "stop")
    log.assistant_message(at(base + 220), 1, 1, log.chunks(1, 1, s), "n1s1")
    log.add("step/end", at(base + 221), {"turn": 1, "step": 1})
    log.add("turn/end", at(base + 222), {"turn": 1, "reason": {"kind": "completed"}})
    header = {"type": "session", "version": 0, "id": NOCWD_ID, "createdAt": at(base - 500), "delegationDepth": 0}
    return log, {"header": header}


def build_cwd_change() -> tuple[Log, dict]:
    """A subagent child as dsh 0.2.1-alpha.2 writes it (v4, same version): it starts in the directory its
    parent chose (``working-directory/change`` before its first turn; the header keeps the original
    project), moves on with the ``working_directory`` tool (a second change, and the notice dsh queues
    for the model), and presents a file (``deliverables/presented``). Rendered in v4 only: older
    generations do not know the event."""
    log = Log(CWD_CHANGE_ID)
    base = 70_000
    docs, site = f"{CWD}/docs", f"{CWD}/docs/site"
    log.add("working-directory/change", at(base), {"cwd": docs})
    p = log.prompt(at(base + 1), at(base + 2), 1, "w1-prompt", [{"type": "text", "text": "Build the docs site and show me the page."}])
    log.add("step/start", at(base + 2), {"turn": 1, "step": 1})
    log.add("user/message", at(base + 4), p, op="append")
    request_header(log, at(base + 5), "initial", SYSTEM_PROMPT_1)
    log.add("request/context", at(base + 5), {"provider": PROVIDER, "model": MODEL, "contextWindow": CONTEXT_WINDOW})

    # step 1: into docs/site with the working_directory tool
    text1 = ["The built", " site is in site/;", " moving there."]
    args_cd = ['{"cd": ', '"site"}']
    call_cd = "call_00_Wd3kPs8NfQ1Lr6Tz2Vb0001"
    s = []
    s += block_start(at(base + 300), 0, "text")
    s += deltas("text", 0, text1, at(base + 300), 20)
    s += block_start(at(base + 360), 1, "tool-call")
    s += tool_deltas(1, call_cd, "working_directory", args_cd, [at(base + 360), at(base + 370)], False)
    s += block_ends(at(base + 380), [(0, {"type": "text", "text": "".join(text1)}),
                                     (1, {"type": "tool-call", "id": call_cd, "name": "working_directory", "arguments": "".join(args_cd)})])
    s += usage_chunk(at(base + 381), usage(3_000, 30, 0, 0))
    s += finish_chunk(at(base + 381), "tool-calls")
    log.assistant_message(at(base + 400), 1, 1, log.chunks(1, 1, s), "w1s1")
    cd = log.tool_call(at(base + 401), 1, 1, call_cd, "working_directory", "".join(args_cd))
    log.add("working-directory/change", at(base + 410), {"cwd": site})
    notice = {"content": [{"type": "text", "text": f"The working directory changed from {json.dumps(docs)} to {json.dumps(site)}."}],
              "source": {"kind": "working-directory"}, "role": "user", "id": log.message_id("w1-cwd-notice")}
    log.add("agent/inbox/spliced", at(base + 410), {"target": "next-step", "start": 0, "inserted": [copy.deepcopy(notice)]})
    log.tool_result(at(base + 411), 1, 1, cd, "w1s1-result", [{"type": "text", "text": site}])
    log.add("step/end", at(base + 412), {"turn": 1, "step": 1})

    # step 2: the notice reaches the model; it presents the page
    log.add("step/start", at(base + 420), {"turn": 1, "step": 2})
    log.add("agent/inbox/spliced", at(base + 420), {"target": "next-step", "start": 0, "removedCount": 1, "inserted": []})
    log.add("user/message", at(base + 421), notice, op="append")
    text2 = ["index.html", " is built."]
    files = [{"path": "index.html", "description": "The docs home page"}]
    args_present = ['{"files": ', json.dumps(files) + "}"]
    call_present = "call_00_Dp5mRt2XcV7Nq4Ls9Hk0002"
    s = []
    s += block_start(at(base + 700), 0, "text")
    s += deltas("text", 0, text2, at(base + 700), 20)
    s += block_start(at(base + 740), 1, "tool-call")
    s += tool_deltas(1, call_present, "present", args_present, [at(base + 740), at(base + 750)], False)
    s += block_ends(at(base + 760), [(0, {"type": "text", "text": "".join(text2)}),
                                     (1, {"type": "tool-call", "id": call_present, "name": "present", "arguments": "".join(args_present)})])
    s += usage_chunk(at(base + 761), usage(500, 40, 3_000, 0))
    s += finish_chunk(at(base + 761), "tool-calls")
    log.assistant_message(at(base + 780), 1, 2, log.chunks(1, 2, s), "w1s2")
    shown = log.tool_call(at(base + 781), 1, 2, call_present, "present", "".join(args_present))
    log.tool_result(at(base + 790), 1, 2, shown, "w1s2-result", [{"type": "text", "text": "Presented 1 file."}])
    log.add("deliverables/presented", at(base + 791), {"turn": 1, "callId": call_present, "files": copy.deepcopy(files)})
    log.add("step/end", at(base + 792), {"turn": 1, "step": 2})

    # step 3: the answer
    log.add("step/start", at(base + 800), {"turn": 1, "step": 3})
    text3 = ["Done:", " docs/site/index.html", " is presented."]
    s = []
    s += block_start(at(base + 1000), 0, "text")
    s += deltas("text", 0, text3, at(base + 1000), 20)
    s += block_ends(at(base + 1050), [(0, {"type": "text", "text": "".join(text3)})])
    s += usage_chunk(at(base + 1051), usage(300, 12, 3_500, 0))
    s += finish_chunk(at(base + 1051), "stop")
    log.assistant_message(at(base + 1060), 1, 3, log.chunks(1, 3, s), "w1s3")
    log.add("step/end", at(base + 1061), {"turn": 1, "step": 3})
    log.add("turn/end", at(base + 1062), {"turn": 1, "reason": {"kind": "completed"}})
    header = {"type": "session", "version": 0, "id": CWD_CHANGE_ID, "createdAt": at(base - 1), "cwd": CWD,
              "parentSession": TOUR_ID, "origin": "subagent", "delegationDepth": 1}
    return log, {"header": header}


# ------------------------------------------------------------------------------------------------
# Durable batches (FORMAT.md §1.5): a 200 ms write-behind window from the first pending event, and
# forced flushes before every model request, before every tool body and at every pre-step boundary.


def assign_batches(events: list[Ev], first_batch_end: int = 0) -> None:
    """Number the durable batch of every event (in place).

    ``first_batch_end``: the first N events form batch 0 no matter their times (a fork child's
    materialized seed). After that: an event at or after ``first pending time + 200 ms`` finds the
    window already flushed; ``step/start`` and the first chunk of an attempt (the model request) flush
    what is pending before them; a ``tool/call`` is flushed together with what precedes it.
    """
    batch = 0
    pending_since = None
    pending = False

    def flush():
        nonlocal batch, pending_since, pending
        if pending:
            batch += 1
        pending_since = None
        pending = False

    for i, ev in enumerate(events):
        if i < first_batch_end:
            ev.batch = 0  # the seed is written at once: no window of its own, it leaves with the next flush
            pending = True
            continue
        if pending and pending_since is not None and ev.time >= pending_since + WINDOW_MS:
            flush()
        first_chunk = ev.type == "assistant/chunk" and ev.attempt[0] is ev
        if ev.type == "step/start" or first_chunk:
            flush()
        ev.batch = batch
        if not pending or pending_since is None:
            pending_since = ev.time
        pending = True
        if ev.type == "tool/call":
            flush()


# ------------------------------------------------------------------------------------------------
# Rendering helpers


def dumps(value) -> str:
    """JSON like JavaScript's JSON.stringify: compact, raw UTF-8, insertion order."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def resolve(value, seqs: dict):
    if isinstance(value, Ref):
        return seqs[id(value.event)]
    if isinstance(value, dict):
        return {k: resolve(v, seqs) for k, v in value.items()}
    if isinstance(value, list):
        return [resolve(v, seqs) for v in value]
    return value


def encode_ranges(seqs: list[int]) -> list:
    """§2.8 range form: runs of >= 3 consecutive seqs become [first, last] pairs."""
    assert all(b > a for a, b in zip(seqs, seqs[1:]))
    out: list = []
    i = 0
    while i < len(seqs):
        j = i
        while j + 1 < len(seqs) and seqs[j + 1] == seqs[j] + 1:
            j += 1
        if j - i + 1 >= 3:
            out.append([seqs[i], seqs[j]])
        else:
            out.extend(seqs[i : j + 1])
        i = j + 1
    return out


def seq_map(events: list[Ev]) -> dict:
    seqs = {}
    for seq, ev in enumerate(events):
        seqs[id(ev)] = seq
        seqs.setdefault(id(ev.origin), seq)
    return seqs


def render_event(ev: Ev, seq: int, seqs: dict, version: int) -> dict:
    out = {"type": ev.type, "seq": seq, "time": ev.time, "data": resolve(ev.data, seqs)}
    if isinstance(ev.op, tuple) and ev.type == "system/message":
        # the v2->v3 migration writes surfaceOp before sourceEventSeqs on the heads it generates
        out["surfaceOp"] = render_op(ev.op, seqs, version)
        out["sourceEventSeqs"] = [seqs[id(s)] for s in ev.sources]
        return out
    if ev.sources is not None:
        cited = [seqs[id(s)] for s in ev.sources]
        out["sourceEventSeqs"] = encode_ranges(cited) if ev.ranges else cited
    if ev.op is not None:
        out["surfaceOp"] = render_op(ev.op, seqs, version)
    return out


def render_op(op, seqs: dict, version: int):
    if op == "append":
        return "append"
    _, start, end = op
    if version >= 3:
        return {"op": "replace", "startSeq": seqs[id(start)], "endSeq": seqs[id(end)]}
    return {"op": "replace", "start": seqs[id(start)], "end": seqs[id(end)]}


# --- v0 physical rows (§2.4)

_PACKABLE = {"text-delta": "text-chunks", "reasoning-delta": "reasoning-chunks", "tool-call-delta": "tool-call-chunks"}


def _run_key(ev: Ev):
    if ev.type != "assistant/chunk" or ev.sources is not None or ev.op is not None:
        return None
    chunk = ev.data["chunk"]
    kind = chunk["type"]
    if kind not in _PACKABLE:
        return None
    if kind == "tool-call-delta":
        if set(chunk) not in ({"type", "index", "id", "argumentsDelta"}, {"type", "index", "id", "name", "argumentsDelta"}):
            return None
        return (kind, ev.data["turn"], ev.data["step"], chunk["index"], chunk["id"], "name" in chunk, chunk.get("name"))
    if set(chunk) != {"type", "index", "text"}:
        return None
    return (kind, ev.data["turn"], ev.data["step"], chunk["index"])


def v0_batch_lines(events: list[Ev], first_seq: int, seqs: dict) -> list[str]:
    """Lines of one durable batch, runs of >= 3 packable deltas packed into one row."""
    lines = []
    i = 0
    while i < len(events):
        key = _run_key(events[i])
        j = i
        if key is not None:
            while j + 1 < len(events) and _run_key(events[j + 1]) == key:
                j += 1
        if key is not None and j - i + 1 >= 3:
            run = events[i : j + 1]
            first = run[0].data
            chunk0 = first["chunk"]
            data = {"turn": first["turn"], "step": first["step"], "index": chunk0["index"]}
            if chunk0["type"] == "tool-call-delta":
                data["id"] = chunk0["id"]
                if "name" in chunk0:
                    data["name"] = chunk0["name"]
            data["dt"] = [b.time - a.time for a, b in zip(run, run[1:])]
            if chunk0["type"] == "tool-call-delta":
                data["args"] = [e.data["chunk"]["argumentsDelta"] for e in run]
            else:
                data["texts"] = [e.data["chunk"]["text"] for e in run]
            row = {"type": _PACKABLE[chunk0["type"]], "seq0": first_seq + i, "time0": run[0].time, "data": data}
            lines.append(dumps(row))
            i = j + 1
            continue
        lines.append(dumps(render_event(events[i], first_seq + i, seqs, 0)))
        i += 1
    return lines


def batches_of(events: list[Ev]) -> list[list[int]]:
    """Consecutive event positions grouped by durable batch."""
    groups: list[list[int]] = []
    last = object()
    for pos, ev in enumerate(events):
        if ev.batch != last:
            groups.append([])
            last = ev.batch
        groups[-1].append(pos)
    return groups


def render_v0(header: dict, events: list[Ev]) -> tuple[str, list[str]]:
    """(header line, [text of each durable batch])"""
    seqs = seq_map(events)
    frames = []
    for group in batches_of(events):
        frames.append("".join(line + "\n" for line in v0_batch_lines([events[p] for p in group], group[0], seqs)))
    return dumps(header) + "\n", frames


def render_current(header: dict, events: list[Ev], version: int) -> tuple[str, list[str], list[str]]:
    """(header line, [text of each turn's frame], [text of each durable batch])

    v2+ files group their events one frame per turn (a frame ends after each ``turn/end``; events after
    the last one join the last frame): how the live v2-v4 writer frames its flushes is not established
    (FORMAT.md §1.5), and a turn per frame compresses much better than a batch per frame.
    """
    seqs = seq_map(events)
    lines = [dumps(render_event(ev, p, seqs, version)) + "\n" for p, ev in enumerate(events)]
    per_turn: list[str] = [""]
    for ev, line in zip(events, lines):
        per_turn[-1] += line
        if ev.type == "turn/end":
            per_turn.append("")
    if per_turn[-1] == "":
        per_turn.pop()
    per_batch = ["".join(lines[p] for p in group) for group in batches_of(events)]
    return dumps(header) + "\n", per_turn, per_batch


# ------------------------------------------------------------------------------------------------
# v0 -> v2: fold chunks into settlements (§2.6)


def stream_records(chunk_evs: list[Ev]) -> list:
    acc = Accumulator()
    for ev in chunk_evs:
        acc.push(ev.time, ev.data["chunk"])
    out = []
    for rec in msgspec.to_builtins(acc.records):
        if rec["type"] == "chunk":
            out.append({"type": "chunk", "time": rec["time"], "chunk": rec["chunk"]})
        else:
            ordered = {"type": rec["type"], "time0": rec["time0"], "index": rec["index"], "dt": rec["dt"]}
            if rec["type"] == "tool-call-chunks":
                ordered["id"] = rec["id"]
                if "name" in rec:
                    ordered["name"] = rec["name"]
                ordered["args"] = rec["args"]
            else:
                ordered["texts"] = rec["texts"]
            out.append(ordered)
    return out


def to_v2(events: list[Ev], seed_length: int | None) -> list[Ev]:
    out: list[Ev] = []
    pending: list[Ev] = []  # chunk events of the open attempt group
    buffered: list[Ev] = []
    terminated = False

    def key(ev):
        return (ev.data["turn"], ev.data["step"])

    def settle_attempt():
        nonlocal pending, buffered, terminated
        last = pending[-1]
        turn, step = key(last)
        attempt = Ev("assistant/attempt", last.time, {"turn": turn, "step": step, "stream": stream_records(pending)}, origin=last)
        attempt.batch = last.batch
        out.append(attempt)
        out.extend(buffered)
        pending, buffered, terminated = [], [], False

    for pos, ev in enumerate(events):
        if ev.type == "assistant/chunk":
            if pending and (key(pending[0]) != key(ev) or terminated):
                settle_attempt()
            pending.append(ev)
            if ev.data["chunk"]["type"] == "finish":
                terminated = True
            continue
        if ev.type == "assistant/message":
            if not (pending and key(pending[0]) == key(ev) and ev.sources == pending):
                raise ValueError("sample model: every assistant/message must cite exactly its pending attempt")
            data = {k: v for k, v in ev.data.items()}
            data["stream"] = stream_records(pending)
            message = Ev(ev.type, ev.time, data, op=ev.op, origin=ev.origin)
            message.batch = ev.batch
            out.extend(buffered)
            out.append(message)
            pending, buffered, terminated = [], [], False
            continue
        if pending and ev.type in ("turn/end", "step/end", "llm/retry", "llm/retry-started"):
            settle_attempt()
        if pending:
            buffered.append(ev)
            continue
        if ev.type == "session/end-seed" and seed_length is not None and pos == seed_length:
            tagged = Ev(ev.type, ev.time, {"inherited": True}, origin=ev.origin)
            tagged.batch = ev.batch
            out.append(tagged)
            continue
        out.append(ev)
    if pending:
        settle_attempt()
    for ev in out:
        if ev.sources is not None and any(s.type == "assistant/chunk" for s in ev.sources):
            raise ValueError("a surviving event cites a consumed chunk")
    return out


# ------------------------------------------------------------------------------------------------
# v2 -> v3: the system prompt becomes surface (§2.7)


def to_v3(events: list[Ev], session_id: str) -> list[Ev]:
    out: list[Ev] = []
    head: Ev | None = None
    prompt = ""
    step = None
    v2_seq = {id(ev): seq for seq, ev in enumerate(events)}

    def system_message(text: str, anchor: Ev) -> Ev:
        nonlocal head, prompt
        identity = json.dumps(["session-format-v2-to-v3", session_id, v2_seq[id(anchor)], anchor.type], separators=(",", ":"))
        message = {
            "id": "v2-to-v3-system-" + hashlib.sha256(identity.encode()).hexdigest(),
            "role": "system",
            "source": {"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt"},
            "content": [] if text == "" else [{"type": "text", "text": text}],
        }
        data = {"turn": step[0], "step": step[1], "message": message}
        if head is None:
            ev = Ev("system/message", anchor.time, data, op="append")
        else:
            ev = Ev("system/message", anchor.time, data, op=("replace", head, head), sources=[head])
        ev.origin = ev
        ev.batch = anchor.batch
        head, prompt = ev, text
        return ev

    for ev in events:
        if ev.type == "step/start":
            step = (ev.data["turn"], ev.data["step"])
        if ev.type == "request/header":
            header = dict(ev.data["header"])
            system = header.pop("system", "")
            if head is None or system != prompt:
                out.append(system_message(system, ev))
            new = Ev(ev.type, ev.time, {**ev.data, "header": header}, origin=ev.origin)
            new.batch = ev.batch
            out.append(new)
            continue
        out.append(ev)
        if ev.type == "step/start" and head is None:
            out.append(system_message("", ev))
        if ev.type in ("step/end", "turn/end"):
            step = None
    return out


# ------------------------------------------------------------------------------------------------
# v3 -> v4: tool-role results and producer-owned sources (§2.10.2, §2.10.3)

_SAME_NAME_PRODUCERS = {
    "agent-instructions", "session-reference", "team-message", "goal", "skill-invocation", "skill-catalog",
    "coordinator", "subagent-report", "subagent-settled", "webhook", "agent-message", "model-selection",
    "plan-mode", "time-context", "tmux-context", "user-approval", "repeat-tool-reminder", "tool-cordis",
    "cordis-host-runner", "tool-goal", "tool-jobs", "hooks-codex", "hooks-claude-code", "schedule",
    "dsh-session-title-llm",
}


def v4_source(source: dict, role: str) -> dict:
    if source.get("kind") != "plugin":
        return source
    plugin = source["plugin"]
    rest = {k: v for k, v in source.items() if k not in ("kind", "plugin")}
    if plugin == "compact":
        kind = "compact-checkpoint"
    elif plugin in ("tools-code-mode", "tools-ptc"):
        kind = "ptc-mode"
    elif plugin == "dsh-compaction-basic":
        kind = "compact-basic"
    elif plugin == "@deepseek-ai/dsh-system-prompt":
        kind = "system-prompt" if role == "system" else "runtime-context"
    elif plugin in _SAME_NAME_PRODUCERS:
        kind = plugin
    else:
        kind = "plugin:" + plugin
    return {"kind": kind, **rest}


def to_v4(events: list[Ev]) -> list[Ev]:
    out = []
    for ev in events:
        data = ev.data
        if ev.type == "user/message":
            data = {**data, "source": v4_source(data["source"], "user")}
        elif ev.type == "system/message":
            message = data["message"]
            data = {**data, "message": {**message, "source": v4_source(message["source"], "system")}}
        elif ev.type == "agent/inbox/spliced":
            data = {**data, "inserted": [{**m, "source": v4_source(m["source"], "user")} for m in data["inserted"]]}
        elif ev.type == "session/title-llm-request":
            data = {**data, "messages": [{**m, "source": v4_source(m["source"], m["role"])} for m in data["messages"]]}
        elif ev.type == "tool/result":
            message = data["message"]
            wrapper = message["content"][0]
            lifted = {"role": "tool", "source": message["source"], "toolCallId": wrapper["toolCallId"], "content": wrapper["content"]}
            if "isError" in wrapper:
                lifted["isError"] = wrapper["isError"]
            lifted["id"] = message["id"]
            data = {**data, "message": lifted}
        if data is ev.data:
            out.append(ev)
            continue
        new = Ev(ev.type, ev.time, data, sources=ev.sources, op=ev.op, ranges=ev.ranges, origin=ev.origin)
        new.batch = ev.batch
        out.append(new)
    return out


# ------------------------------------------------------------------------------------------------
# Files


def zstd_frames(header_line: str, frames: list[str]) -> list[bytes]:
    cctx = zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_checksum=True)
    return [cctx.compress(header_line.encode())] + [cctx.compress(f.encode()) for f in frames if f]


def write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def header_for(version: int, base: dict) -> dict:
    """v0 header -> the header of ``version`` (v2+: isSeeded instead of seedLength, §1.9)."""
    if version == 0:
        return dict(base)
    out = {"type": "session", "version": version, "id": base["id"], "createdAt": base["createdAt"]}
    if "cwd" in base:
        out["cwd"] = base["cwd"]
    if "parentSession" in base:
        out["parentSession"] = base["parentSession"]
    out["isSeeded"] = "seedLength" in base
    if "origin" in base:
        out["origin"] = base["origin"]
    out["delegationDepth"] = base["delegationDepth"]
    return out


def generations(log: Log, header: dict, seed_length: int | None) -> dict[int, tuple[str, list[str]]]:
    v0 = log.events
    v2 = to_v2(v0, seed_length)
    v3 = to_v3(v2, log.session_id)
    v4 = to_v4(v3)
    return {
        0: render_v0(header_for(0, header), v0) + (None,),
        2: render_current(header_for(2, header), v2, 2),
        3: render_current(header_for(3, header), v3, 3),
        4: render_current(header_for(4, header), v4, 4),
    }


def file_name(stem: str, version: int) -> str:
    return f"{stem}.session.jsonl" if version == 0 else f"{stem}.session.v{version}.jsonl"


def log_name(version: int) -> str:
    return "session.jsonl" if version == 0 else f"session.v{version}.jsonl"


def generate(out: Path) -> None:
    tour = Log(TOUR_ID)
    marks = build_tour(tour)
    fill_title_prompt(tour, marks)
    child, child_info = build_child(tour, marks)
    nocwd, nocwd_info = build_nocwd()
    cwd_change, cwd_change_info = build_cwd_change()

    # Durable batches belong to each file's own write history. The child's inherited prefix (written at
    # once when the fork materializes) shares its Ev objects with the tour, so each log's numbering is
    # saved and put back right before that log is rendered.
    assign_batches(tour.events)
    tour_batches = [ev.batch for ev in tour.events]
    assign_batches(child.events, first_batch_end=child_info["cut"])
    child_batches = [ev.batch for ev in child.events]
    assign_batches(nocwd.events)
    assign_batches(cwd_change.events)

    def with_batches(log: Log, batches: list[int]):
        for ev, b in zip(log.events, batches):
            ev.batch = b

    tour_header = {"type": "session", "version": 0, "id": TOUR_ID, "createdAt": T0, "cwd": CWD, "delegationDepth": 0}
    with_batches(tour, tour_batches)
    tour_gen = generations(tour, tour_header, None)
    with_batches(child, child_batches)
    child_gen = generations(child, child_info["header"], child_info["cut"])
    nocwd_gen = generations(nocwd, nocwd_info["header"], None)
    cwd_change_v4 = render_current(header_for(4, cwd_change_info["header"]), to_v4(to_v3(to_v2(cwd_change.events, None), CWD_CHANGE_ID)), 4)

    zstd_files: dict[str, bytes] = {}
    for stem, gens in (("tour", tour_gen), ("fork-child", child_gen)):
        for version, (header_line, frames, _) in gens.items():
            name = file_name(stem, version)
            write(out / name, (header_line + "".join(frames)).encode())
            zstd_files[name] = b"".join(zstd_frames(header_line, frames))
            write(out / (name + ".zstd"), zstd_files[name])

    header_line, frames, _ = cwd_change_v4
    name = file_name("cwd-change", 4)
    write(out / name, (header_line + "".join(frames)).encode())
    write(out / (name + ".zstd"), b"".join(zstd_frames(header_line, frames)))

    # torn tails (§1.6, §8.5): the no-cwd session's v4 log cut inside its last line, and the same log
    # written one zstd frame per durable batch with the last frame cut in the middle
    header_line, _, batches = nocwd_gen[4]
    raw = (header_line + "".join(batches)).encode()
    assert raw.endswith(b"\n")
    last_line_start = raw.rstrip(b"\n").rfind(b"\n") + 1
    last_line = raw[last_line_start:-1]
    write(out / "torn-tail.session.v4.jsonl", raw[: last_line_start + len(last_line) // 2])
    zframes = zstd_frames(header_line, batches)
    write(out / "torn-tail.session.v4.jsonl.zstd", b"".join(zframes[:-1]) + zframes[-1][: len(zframes[-1]) // 2])

    # attachment store (§5.3)
    for data in (PNG_BYTES, JPEG_BYTES):
        digest = hashlib.sha256(data).hexdigest()
        write(out / "attachments" / "v1" / "objects" / digest[:2] / digest, data)

    # a dsh Web UI export of the tour (§1.10), as a colleague attaches it to a bug report: the log's text
    # as session.jsonl (frames decompressed, whatever the generation) and each referenced image under
    # media/<attachmentId>.<ext>; fixed member times so the bytes do not depend on the clock
    tour_v4_line, tour_v4_frames, _ = tour_gen[4]
    write(out / f"dsh-session-{TOUR_ID}.zip", export_zip({
        "session.jsonl": (tour_v4_line + "".join(tour_v4_frames)).encode(),
        **{f"media/sha256:{hashlib.sha256(data).hexdigest()}.{ext}": data for data, ext in ((PNG_BYTES, "png"), (JPEG_BYTES, "jpg"))},
    }))

    # a sessions root laid out as dsh does (§1.2): copies of the files above. The fork child's directory
    # holds three generations (v0, v2 and v4: read the highest only), the tour's only v4.
    root = out / "sessions"
    write(root / PROJECT_DIR / encode_segment(TOUR_ID) / (log_name(4) + ".zstd"), zstd_files[file_name("tour", 4)])
    child_dir = root / PROJECT_DIR / encode_segment(CHILD_ID)
    for version in (0, 2, 4):
        write(child_dir / (log_name(version) + ".zstd"), zstd_files[file_name("fork-child", version)])
    header_line, frames, _ = nocwd_gen[4]
    write(root / "_no-cwd" / encode_segment(NOCWD_ID) / (log_name(4) + ".zstd"), b"".join(zstd_frames(header_line, frames)))


def export_zip(members: dict[str, bytes]) -> bytes:
    """A ZIP of ``members`` (deflated, in this order) whose bytes depend on nothing but them."""
    import io

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in members.items():
            info = zipfile.ZipInfo(name, date_time=(2026, 9, 21, 14, 13, 20))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def encode_segment(value: str) -> str:
    """dsh's injective session-directory encoding (§1.2)."""
    if value == ".":
        return "~002E"
    if value == "..":
        return "~002E~002E"
    out = []
    for unit in struct.unpack("<%dH" % (len(value.encode("utf-16-le")) // 2), value.encode("utf-16-le")):
        ch = chr(unit)
        if ch.isascii() and (ch.isalnum() or ch in "._-"):
            out.append(ch)
        else:
            out.append("~%04X" % unit)
    return "".join(out)


# ------------------------------------------------------------------------------------------------
# --check


def _zstd_frames_of(data: bytes) -> tuple[list[bytes], bool]:
    """Decoded content of every complete frame, and whether a torn (incomplete) frame follows."""
    frames = []
    pos = 0
    while pos < len(data):
        dctx = zstandard.ZstdDecompressor()
        dobj = dctx.decompressobj()
        try:
            content = dobj.decompress(data[pos:])
        except zstandard.ZstdError:
            return frames, True
        if not dobj.eof:
            return frames, True
        consumed = len(data) - pos - len(dobj.unused_data)
        frames.append(content)
        pos += consumed
    return frames, False


def same_file(a: Path, b: Path) -> bool:
    if filecmp.cmp(a, b, shallow=False):
        return True
    if a.name.endswith(".zip"):
        # another zlib may deflate the same members to other bytes: compare the members instead
        with zipfile.ZipFile(a) as za, zipfile.ZipFile(b) as zb:
            return [(i.filename, za.read(i)) for i in za.infolist()] == [(i.filename, zb.read(i)) for i in zb.infolist()]
    if a.name.endswith(".zstd"):
        # a different libzstd may pick other compressed bytes for the same frames: compare the decoded
        # frames (and whether a torn frame follows) instead
        return _zstd_frames_of(a.read_bytes()) == _zstd_frames_of(b.read_bytes())
    return False


OWN_FILES = {"generate.py", "README.md"}


def generated_files(root: Path) -> set[str]:
    out = set()
    for dirpath, _, files in os.walk(root):
        for f in files:
            rel = os.path.relpath(os.path.join(dirpath, f), root)
            if rel in OWN_FILES or "__pycache__" in rel.split(os.sep):
                continue
            out.add(rel)
    return out


def check(samples: Path) -> list[str]:
    with tempfile.TemporaryDirectory() as tmp:
        fresh = Path(tmp)
        generate(fresh)
        want = generated_files(fresh)
        have = generated_files(samples)
        problems = [f"missing: {p}" for p in sorted(want - have)]
        problems += [f"not generated (stale): {p}" for p in sorted(have - want)]
        problems += [f"differs: {p}" for p in sorted(want & have) if not same_file(fresh / p, samples / p)]
        return problems


def clean(out: Path) -> None:
    for rel in generated_files(out) if out.exists() else ():
        (out / rel).unlink()
    for sub in ("attachments", "sessions"):
        if (out / sub).exists():
            shutil.rmtree(out / sub)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="regenerate into a temp dir and report differences")
    parser.add_argument("--out", type=Path, default=HERE, help="output directory (default: samples/)")
    args = parser.parse_args(argv)
    if args.check:
        problems = check(args.out)
        for p in problems:
            print(p)
        if problems:
            print(f"{len(problems)} sample file(s) out of date; run: python samples/generate.py", file=sys.stderr)
            return 1
        print("samples are up to date")
        return 0
    clean(args.out)
    generate(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
