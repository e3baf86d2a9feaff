#!/usr/bin/env python3
"""Benchmark ``dshctl stats`` against a floor measured in the same run.

Two logs:

1. **dsh's synthetic first-open session** (FORMAT.md Appendix B), reproduced exactly: released v0,
   200 turns of one step each; per turn ``turn/start``, ``step/start``, ``user/message``, then chunks
   block-start, 125 reasoning deltas ``r<i> `` (one packed row), block-end, block-start, 500 text deltas
   ``w<i> `` (one row), block-end, ``usage {100, 500}``, ``finish stop``, ``assistant/message`` citing the
   631 chunk seqs as ``[[first, last]]``, ``step/end``, ``turn/end`` — 637 events a turn, **127 400
   events**, 2 800 rows; ``time = 1 700 000 000 000 + seq``; every row its own zstd frame (2 801 frames).
   Its statistics are known in advance and checked: 200 turns/steps, TTFT 3 ms a step (first reasoning
   delta at seq b+4, step/start at b+1), LLM 633 ms a step, decode 630 ms for 500 tokens (793.65 tok/s),
   billed input 20 000, output 100 000, cache hit 0 %.
2. **A large log** (``--size-gb``, default 1 GiB of decompressed JSON) in /tmp, not committed. Shape
   ``v4`` (default): the current generation, one zstd frame per turn, turns of two steps — a reasoning
   run, a text run, a named tool-call run, a tool call whose result is ~16 KiB, then a text-only step.
   Shape ``bench``: dsh's shape above (every row its own zstd frame) with more turns. Both are written one
   turn at a time, never held in memory.

For each log, in fresh processes (median of ``--runs``):

* **floor** — ``python3`` (this interpreter) decompressing the file with ``zstandard`` and decoding every
  line with ``msgspec``, nothing else;
* **dshctl** — ``dshctl stats --json FILE`` (the console script: interpreter start, CLI imports, read,
  fold, output);
* the same two measured inside the process around the work only (imports excluded), to separate
  interpreter and import start-up from reading.

Peak RSS is each child's ``ru_maxrss`` (``os.wait4``). Targets (from the issue): benchmark log within
1.5× the floor and under 60 MB peak RSS (dsh's own first open peaks at 94.6 MB); the large log under
100 MB RSS and at least 100 MB/s of decompressed JSON.

Usage::

    python benchmarks/stats_bench.py [--runs 5] [--size-gb 1] [--skip-large] [--large-shape v4|bench] [--dir /tmp/dshctl-stats-bench]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import msgspec
import zstandard

TIME_ZERO = 1_700_000_000_000
ENCODE = msgspec.json.Encoder().encode

FLOOR_SCRIPT = r"""
import sys, time
t0 = time.perf_counter()
import msgspec, zstandard
t1 = time.perf_counter()
decode = msgspec.json.Decoder().decode
n = 0
size = 0
with open(sys.argv[1], "rb") as f:
    reader = zstandard.ZstdDecompressor().stream_reader(f, read_across_frames=True)
    rest = b""
    while True:
        block = reader.read(1 << 20)
        if not block:
            break
        size += len(block)
        lines = (rest + block).split(b"\n")
        rest = lines.pop()
        for line in lines:
            decode(line)
            n += 1
t2 = time.perf_counter()
print(f"{n} {size} {t1 - t0:.6f} {t2 - t1:.6f}")
"""

WORK_SCRIPT = r"""
import sys, time
t0 = time.perf_counter()
from dshctl.stats import log_stats
from dshctl.output import to_json
t1 = time.perf_counter()
result = log_stats(sys.argv[1])
document = to_json(result.session)
t2 = time.perf_counter()
print(f"0 0 {t1 - t0:.6f} {t2 - t1:.6f}")
"""


# --------------------------------------------------------------------------------------------------
# dsh's synthetic released-v0 session (Appendix B)


class V0Builder:
    def __init__(self, time0: int = TIME_ZERO) -> None:
        self.rows: list[dict] = []
        self.seq = 0
        self.time = time0

    def event(self, type_: str, data, **extra) -> int:
        seq = self.seq
        row = {"type": type_, "seq": seq, "time": self.time, "data": data}
        row.update(extra)
        self.rows.append(row)
        self.seq += 1
        self.time += 1
        return seq

    def chunk(self, turn: int, chunk: dict) -> int:
        return self.event("assistant/chunk", {"turn": turn, "step": 1, "chunk": chunk})

    def deltas(self, kind: str, turn: int, index: int, texts: list[str]) -> None:
        if len(texts) < 3:
            for text in texts:
                self.chunk(turn, {"type": f"{kind}-delta", "index": index, "text": text})
            return
        self.rows.append(
            {
                "type": f"{kind}-chunks",
                "seq0": self.seq,
                "time0": self.time,
                "data": {"turn": turn, "step": 1, "index": index, "dt": [1] * (len(texts) - 1), "texts": texts},
            }
        )
        self.seq += len(texts)
        self.time += len(texts)

    def turn(self, turn: int, text_deltas: int) -> None:
        reasoning_count = text_deltas // 4
        self.event("turn/start", {"turn": turn})
        self.event("step/start", {"turn": turn, "step": 1})
        self.event(
            "user/message",
            {"id": f"user-{turn}", "role": "user", "content": [{"type": "text", "text": f"prompt {turn}"}], "source": {"kind": "user"}},
            surfaceOp="append",
        )
        first = self.chunk(turn, {"type": "block-start", "index": 0, "blockType": "reasoning"})
        reasoning = [f"r{i} " for i in range(reasoning_count)]
        self.deltas("reasoning", turn, 0, reasoning)
        self.chunk(turn, {"type": "block-end", "index": 0, "block": {"type": "reasoning", "text": "".join(reasoning)}})
        self.chunk(turn, {"type": "block-start", "index": 1, "blockType": "text"})
        texts = [f"w{i} " for i in range(text_deltas)]
        self.deltas("text", turn, 1, texts)
        self.chunk(turn, {"type": "block-end", "index": 1, "block": {"type": "text", "text": "".join(texts)}})
        usage = {"inputTokens": 100, "outputTokens": text_deltas}
        self.chunk(turn, {"type": "usage", "usage": usage})
        last = self.chunk(turn, {"type": "finish", "reason": {"kind": "stop"}})
        self.event(
            "assistant/message",
            {
                "turn": turn,
                "step": 1,
                "message": {
                    "id": f"assistant-{turn}",
                    "role": "assistant",
                    "content": [{"type": "reasoning", "text": "".join(reasoning)}, {"type": "text", "text": "".join(texts)}],
                    "source": {"kind": "model", "provider": "bench", "model": "bench"},
                },
                "usage": usage,
            },
            sourceEventSeqs=[[first, last]],
            surfaceOp="append",
        )
        self.event("step/end", {"turn": turn, "step": 1})
        self.event("turn/end", {"turn": turn, "reason": {"kind": "completed"}})


def v0_header(session_id: str = "bench-session", created_at: int = TIME_ZERO, cwd: str = "/bench") -> dict:
    return {"type": "session", "version": 0, "id": session_id, "createdAt": created_at, "cwd": cwd, "delegationDepth": 0}


def write_bench_v0(
    path: Path,
    turns: int | None = 200,
    text_deltas: int = 500,
    *,
    max_bytes: int | None = None,
    header: dict | None = None,
) -> dict:
    """dsh's benchmark log: every row (and the header) its own zstd frame, written turn by turn
    (only one turn is ever in memory). ``turns=None`` writes turns until ``max_bytes`` of JSON."""
    header = header or v0_header()
    compress = zstandard.ZstdCompressor(level=3).compress
    logical = 0
    frames = 0
    rows = 0
    with open(path, "wb") as out:
        line = ENCODE(header) + b"\n"
        out.write(compress(line))
        logical += len(line)
        frames += 1
        builder = V0Builder(header["createdAt"])
        turn = 0
        while (turns is None or turn < turns) and (max_bytes is None or logical < max_bytes):
            turn += 1
            builder.turn(turn, text_deltas)
            for row in builder.rows:
                line = ENCODE(row) + b"\n"
                out.write(compress(line))
                logical += len(line)
                frames += 1
            rows += len(builder.rows)
            builder.rows.clear()
    return {"turns": turn, "events": builder.seq, "rows": rows, "frames": frames, "logical_bytes": logical, "bytes": path.stat().st_size}


# --------------------------------------------------------------------------------------------------
# The large log


def _stream_run(kind: str, time0: int, index: int, texts: list[str], gap: int) -> dict:
    return {"type": kind, "time0": time0, "index": index, "dt": [gap] * (len(texts) - 1), "texts": texts}


def v4_turn(turn: int, t: int, tool_text: str) -> tuple[list[dict], int]:
    """One current-generation turn of two steps; returns (events without seq, next time)."""
    events: list[dict] = []

    def add(type_: str, time_: int, data, **extra) -> None:
        event = {"type": type_, "time": time_, "data": data}
        event.update(extra)
        events.append(event)

    add("turn/start", t, {"turn": turn})
    # step 1: reasoning (200 deltas), text (400), a named tool call (40 fragments), then the tool
    add("step/start", t, {"turn": turn, "step": 1})
    add(
        "user/message",
        t + 1,
        {"id": f"user-{turn}", "role": "user", "content": [{"type": "text", "text": f"Please look at part {turn} of the build and explain the failure. " * 8}], "source": {"kind": "user"}},
        surfaceOp="append",
    )
    add("request/context", t + 2, {"provider": "deepseek-official", "model": "deepseek-v4-flash", "contextWindow": 128000})
    s = t + 300
    reasoning = [f"thinking {i} " for i in range(200)]
    text = [f"word{i} " for i in range(400)]
    args = ['{"path": "src/', f"part{turn}", '.py"'] + [f", \"k{i}\": {i}" for i in range(36)] + ["}"]
    r_end = s + 2 * 199
    x_start = r_end + 20
    x_end = x_start + 3 * 399
    c_start = x_end + 10
    c_end = c_start + 39
    usage1 = {"inputTokens": 1500 + turn % 100, "outputTokens": 640, "cacheReadTokens": 30000, "reasoningTokens": 200}
    stream1 = [
        {"type": "chunk", "time": s, "chunk": {"type": "block-start", "index": 0, "blockType": "reasoning"}},
        _stream_run("reasoning-chunks", s, 0, reasoning, 2),
        {"type": "chunk", "time": r_end, "chunk": {"type": "block-end", "index": 0, "block": {"type": "reasoning", "text": "".join(reasoning)}}},
        {"type": "chunk", "time": x_start, "chunk": {"type": "block-start", "index": 1, "blockType": "text"}},
        _stream_run("text-chunks", x_start, 1, text, 3),
        {"type": "chunk", "time": x_end, "chunk": {"type": "block-end", "index": 1, "block": {"type": "text", "text": "".join(text)}}},
        {"type": "tool-call-chunks", "time0": c_start, "index": 2, "dt": [1] * (len(args) - 1), "id": f"call-{turn}", "name": "read", "args": args},
        {"type": "chunk", "time": c_end, "chunk": {"type": "block-end", "index": 2, "block": {"type": "tool-call", "id": f"call-{turn}", "name": "read", "arguments": "".join(args)}}},
        {"type": "chunk", "time": c_end + 1, "chunk": {"type": "usage", "usage": usage1}},
        {"type": "chunk", "time": c_end + 1, "chunk": {"type": "finish", "reason": {"kind": "tool-calls"}}},
    ]
    m1 = c_end + 2
    add(
        "assistant/message",
        m1,
        {
            "turn": turn,
            "step": 1,
            "message": {
                "id": f"assistant-{turn}-1",
                "role": "assistant",
                "content": [
                    {"type": "reasoning", "text": "".join(reasoning)},
                    {"type": "text", "text": "".join(text)},
                    {"type": "tool-call", "id": f"call-{turn}", "name": "read", "arguments": "".join(args)},
                ],
                "source": {"kind": "model", "provider": "deepseek-official", "model": "deepseek-v4-flash"},
            },
            "stream": stream1,
            "usage": usage1,
        },
        surfaceOp="append",
    )
    add("tool/call", m1 + 1, {"turn": turn, "step": 1, "callId": f"call-{turn}", "name": "read", "arguments": "".join(args)})
    add(
        "tool/result",
        m1 + 60,
        {
            "turn": turn,
            "step": 1,
            "message": {
                "role": "tool",
                "source": {"kind": "tool", "callId": f"call-{turn}"},
                "toolCallId": f"call-{turn}",
                "content": [{"type": "text", "text": tool_text}],
                "id": f"result-{turn}",
            },
        },
        surfaceOp="append",
    )
    add("step/end", m1 + 61, {"turn": turn, "step": 1})
    # step 2: a text-only answer (300 deltas)
    s2 = m1 + 70
    add("step/start", s2, {"turn": turn, "step": 2})
    answer = [f"answer{i} " for i in range(300)]
    a0 = s2 + 250
    a_end = a0 + 2 * 299
    usage2 = {"inputTokens": 800, "outputTokens": 300, "cacheReadTokens": 36000}
    stream2 = [
        {"type": "chunk", "time": a0, "chunk": {"type": "block-start", "index": 0, "blockType": "text"}},
        _stream_run("text-chunks", a0, 0, answer, 2),
        {"type": "chunk", "time": a_end, "chunk": {"type": "block-end", "index": 0, "block": {"type": "text", "text": "".join(answer)}}},
        {"type": "chunk", "time": a_end + 1, "chunk": {"type": "usage", "usage": usage2}},
        {"type": "chunk", "time": a_end + 1, "chunk": {"type": "finish", "reason": {"kind": "stop"}}},
    ]
    m2 = a_end + 2
    add(
        "assistant/message",
        m2,
        {
            "turn": turn,
            "step": 2,
            "message": {
                "id": f"assistant-{turn}-2",
                "role": "assistant",
                "content": [{"type": "text", "text": "".join(answer)}],
                "source": {"kind": "model", "provider": "deepseek-official", "model": "deepseek-v4-flash"},
            },
            "stream": stream2,
            "usage": usage2,
        },
        surfaceOp="append",
    )
    add("step/end", m2 + 1, {"turn": turn, "step": 2})
    add("turn/end", m2 + 2, {"turn": turn, "reason": {"kind": "completed"}})
    return events, m2 + 1000


def write_large(path: Path, size_bytes: int, shape: str) -> dict:
    """The large log, streamed to disk one turn at a time (never held in memory)."""
    if shape == "bench":
        return write_bench_v0(path, turns=None, max_bytes=size_bytes)
    return write_v4(path, size_bytes=size_bytes)


def v4_header(session_id: str = "large-session", created_at: int = TIME_ZERO, cwd: str = "/large") -> dict:
    return {"type": "session", "version": 4, "id": session_id, "createdAt": created_at, "cwd": cwd, "delegationDepth": 0, "isSeeded": False}


TOOL_TEXT = "".join(f"{i:6d}  def function_{i}(argument):  return argument * {i}\n" for i in range(300))


def write_v4(path: Path, *, size_bytes: int | None = None, turns: int | None = None, header: dict | None = None, compress: bool = True) -> dict:
    """A current-generation log of ``v4_turn`` turns, until ``turns`` turns or ``size_bytes`` of JSON; zstd
    with one frame per turn, or plain JSONL (``compress=False``)."""
    header = header or v4_header()
    encode_frame = zstandard.ZstdCompressor(level=3).compress if compress else bytes
    logical = 0
    frames = 0
    done = 0
    with open(path, "wb") as out:
        line = ENCODE(header) + b"\n"
        out.write(encode_frame(line))
        logical += len(line)
        seq = 0
        t = header["createdAt"] + 1000
        while (turns is None or done < turns) and (size_bytes is None or logical < size_bytes):
            done += 1
            events_, t = v4_turn(done, t, TOOL_TEXT)
            parts = []
            for event in events_:
                event["seq"] = seq
                seq += 1
                parts.append(ENCODE(event))
            batch = b"\n".join(parts) + b"\n"
            out.write(encode_frame(batch))
            logical += len(batch)
            frames += 1
    return {"turns": done, "events": seq, "frames": frames + 1, "logical_bytes": logical, "bytes": path.stat().st_size}


# --------------------------------------------------------------------------------------------------
# Measuring


def dshctl_command() -> list[str]:
    script = Path(sys.executable).with_name("dshctl")
    if script.exists():
        return [str(script)]
    found = shutil.which("dshctl")
    return [found] if found else [sys.executable, "-m", "dshctl.cli"]


CHILD_ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
"""Children may write and reuse bytecode, as an installed package has it (pip compiles on install)."""


def run_child(argv: list[str]) -> tuple[float, int, bytes]:
    """(wall seconds, peak RSS bytes, stdout) of one fresh child process."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE, env=CHILD_ENV)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        stderr = process.stderr.read() if process.stderr else b""
        if process.returncode != 0:
            raise SystemExit(f"{' '.join(argv)} failed ({process.returncode}): {stderr.decode(errors='replace')}")
        out.seek(0)
        return wall, usage.ru_maxrss * 1024, out.read()


def measure(argv: list[str], runs: int) -> dict:
    run_child(argv)  # warm-up: bytecode written, file in the page cache; not counted
    walls, rss = [], []
    output = b""
    for _ in range(runs):
        wall, peak, output = run_child(argv)
        walls.append(wall)
        rss.append(peak)
    return {"wall": statistics.median(walls), "rss": max(rss), "output": output}


def measure_work(script: str, path: Path, runs: int) -> dict:
    imports, works = [], []
    run_child([sys.executable, "-c", script, str(path)])  # warm-up, not counted
    for _ in range(runs):
        _, _, output = run_child([sys.executable, "-c", script, str(path)])
        _, _, t_import, t_work = output.split()
        imports.append(float(t_import))
        works.append(float(t_work))
    return {"import": statistics.median(imports), "work": statistics.median(works)}


def mb(n: float) -> str:
    return f"{n / 1e6:.1f} MB"


def report(label: str, path: Path, facts: dict, runs: int) -> dict:
    floor = measure([sys.executable, "-c", FLOOR_SCRIPT, str(path)], runs)
    dshctl = measure(dshctl_command() + ["stats", "--json", str(path)], runs)
    floor_work = measure_work(FLOOR_SCRIPT, path, runs)
    dshctl_work = measure_work(WORK_SCRIPT, path, runs)
    n_lines, decompressed, _, _ = floor["output"].split()
    decompressed = int(decompressed)
    document = json.loads(dshctl["output"])
    print(f"\n== {label}: {path}")
    print(
        f"   {facts.get('events', '?'):,} events, {facts.get('frames', '?'):,} zstd frames, {int(n_lines):,} lines, "
        f"{mb(decompressed)} decompressed JSON, {mb(path.stat().st_size)} on disk"
    )
    print(f"   {'':28} {'wall (median)':>14} {'peak RSS':>10} {'MB/s':>8}")
    for name, m in (("floor (zstandard+msgspec)", floor), ("dshctl stats --json", dshctl)):
        print(f"   {name:28} {m['wall'] * 1000:11.0f} ms {m['rss'] / 1e6:7.1f} MB {decompressed / 1e6 / m['wall']:8.1f}")
    ratio = dshctl["wall"] / floor["wall"]
    print(f"   ratio dshctl / floor (whole process): {ratio:.2f}×")
    print(
        f"   inside the process (imports excluded): floor {floor_work['work'] * 1000:.0f} ms, "
        f"dshctl read+fold {dshctl_work['work'] * 1000:.0f} ms → {dshctl_work['work'] / floor_work['work']:.2f}×; "
        f"imports: floor {floor_work['import'] * 1000:.0f} ms, dshctl.stats {dshctl_work['import'] * 1000:.0f} ms"
    )
    print(
        f"   dshctl work throughput: {decompressed / 1e6 / dshctl_work['work']:.1f} MB/s decompressed JSON "
        f"(whole process {decompressed / 1e6 / dshctl['wall']:.1f} MB/s)"
    )
    return {"floor": floor, "dshctl": dshctl, "ratio": ratio, "document": document, "decompressed": decompressed, "work": dshctl_work, "floor_work": floor_work}


def check_bench_figures(document: dict) -> list[str]:
    s = document["sessions"][0]
    expected = {
        "turns": 200,
        "steps": 200,
        "events": 127_400,
        "ttftMs": 600,  # 3 ms × 200 (first reasoning delta b+4 − step/start b+1)
        "ttftSteps": 200,
        "llmMs": 126_600,  # (b+634 − b+1) × 200
        "decodeMs": 126_000,  # (b+634 − b+4) × 200
        "decodeTokens": 100_000,
        "billedInputTokens": 20_000,
        "outputTokens": 100_000,
        "cacheHitPercent": 0,
    }
    problems = [f"{key}: {s[key]!r} != {value!r}" for key, value in expected.items() if s[key] != value]
    if abs(s["tokensPerSecond"] - 100_000 / 126) > 1e-9:
        problems.append(f"tokensPerSecond {s['tokensPerSecond']}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="fresh processes per measurement (median wall time)")
    parser.add_argument("--size-gb", type=float, default=1.0, help="decompressed size of the large log, GiB")
    parser.add_argument("--skip-large", action="store_true", help="only the benchmark-shape log")
    parser.add_argument("--large-shape", choices=("v4", "bench"), default="v4")
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "dshctl-stats-bench"))
    parser.add_argument("--keep", action="store_true", help="keep the large log for the next run")
    args = parser.parse_args()
    directory = Path(args.dir)
    directory.mkdir(parents=True, exist_ok=True)
    print(f"python {sys.version.split()[0]}, zstandard {zstandard.__version__}, msgspec {msgspec.__version__}, {os.cpu_count()} CPU(s)")
    print(f"dshctl: {' '.join(dshctl_command())}")

    bench = directory / "--bench--" / "bench-session" / "session.jsonl.zstd"
    bench.parent.mkdir(parents=True, exist_ok=True)
    facts = write_bench_v0(bench)
    assert facts["events"] == 127_400 and facts["rows"] == 2_800 and facts["frames"] == 2_801, facts
    result = report("dsh's first-open benchmark session (released v0, 200 turns)", bench, facts, args.runs)
    problems = check_bench_figures(result["document"])
    print("   figures: " + ("as computed by hand (200 turns, TTFT 3 ms, 793.65 tok/s, 20 000 in / 100 000 out)" if not problems else "; ".join(problems)))
    ok_ratio = result["ratio"] <= 1.5
    ok_rss = result["dshctl"]["rss"] < 60e6
    print(f"   target ≤ 1.5× floor: {'met' if ok_ratio else 'MISSED'} ({result['ratio']:.2f}×); peak RSS < 60 MB: {'met' if ok_rss else 'MISSED'} ({result['dshctl']['rss'] / 1e6:.1f} MB)")

    if not args.skip_large:
        size = int(args.size_gb * 1024**3)
        large = directory / f"large-{args.large_shape}-{args.size_gb:g}g" / ("session.v4.jsonl.zstd" if args.large_shape == "v4" else "session.jsonl.zstd")
        large.parent.mkdir(parents=True, exist_ok=True)
        if not large.exists():
            start = time.perf_counter()
            facts = write_large(large, size, args.large_shape)
            (large.parent / "facts.json").write_text(json.dumps(facts))
            print(f"\n(generated {large} in {time.perf_counter() - start:.0f} s: {facts})")
        else:
            facts = json.loads((large.parent / "facts.json").read_text())
        result = report(f"large log ({args.large_shape} shape, {facts['turns']:,} turns)", large, facts, max(1, min(args.runs, 3)))
        s = result["document"]["sessions"][0]
        print(f"   figures: {s['turns']:,} turns, {s['steps']:,} steps, mean TTFT {s['meanTtftMs']} ms, {s['tokensPerSecond']:.1f} tok/s")
        throughput = result["decompressed"] / 1e6 / result["dshctl"]["wall"]
        ok_rss = result["dshctl"]["rss"] < 100e6
        print(
            f"   target < 100 MB RSS: {'met' if ok_rss else 'MISSED'} ({result['dshctl']['rss'] / 1e6:.1f} MB); "
            f"≥ 100 MB/s: {'met' if throughput >= 100 else 'MISSED'} ({throughput:.1f} MB/s)"
        )
        if not args.keep:
            shutil.rmtree(large.parent)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
