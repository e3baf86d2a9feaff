#!/usr/bin/env python3
"""How long does a cast export take when a message streams blocks interleaved (parallel tool calls)?

The session is one step of one turn whose assistant message streams ``--calls`` tool calls at once,
their argument deltas strictly alternating (call 0, call 1, call 0 …: every delta lands in a block
above the last one, the worst order for a terminal that redraws in place), written as dsh 0.2 writes
it (v4, the stream as compact runs in the settlement). For each size (deltas per call) it times, in
fresh processes (median of ``--runs``):

* ``--export x.cast`` — the cast (the output a ``--cols``×``--rows`` terminal is sent, fragment by
  fragment, redrawing the block that grew);
* ``--instant > /dev/null`` — the transcript of the same log, the floor: reading the log and laying
  the message out once.

and prints the cast time beside the floor, as a ratio. A cast linear in the fragments keeps the ratio
about constant as the sizes grow (the quadratic one grew it ×4 per doubling).

    python benchmarks/replay_interleaved.py [--sizes 1000,4000,16000] [--calls 2] [--runs 3]
        [--cols 100] [--rows 30] [--color] [--timeout 900] [--checkout DIR ...] [--keep DIR]

``--checkout`` (repeatable) runs the ``dshctl`` package in DIR instead of this one (e.g. ``git archive``
of the base commit unpacked somewhere), the checkouts' runs interleaved so they share the machine's
load; a run past ``--timeout`` seconds is stopped and shown as ``>TIMEOUT``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
T = 1_790_000_000_000
NAMES = ["bash", "grep", "read", "glob", "write", "edit"]


def _arguments(call: int, deltas: int) -> list[str]:
    """``deltas`` argument pieces of a few characters that join to one JSON object."""
    body = [f"part {call}.{n} " for n in range(deltas)]
    body[0] = '{"command": "' + body[0]
    body[-1] = body[-1] + '"}'
    return body


def write_log(path: Path, deltas: int, calls: int = 2) -> None:
    from dshctl.stream import Accumulator

    import msgspec

    accumulator = Accumulator()
    clock = T + 100
    pieces = [_arguments(call, deltas) for call in range(calls)]
    for call in range(calls):
        accumulator.push(clock, {"type": "block-start", "index": call, "blockType": "tool-call"})
        clock += 1
    for n in range(deltas):
        for call in range(calls):
            chunk = {"type": "tool-call-delta", "index": call, "id": f"c{call}", "argumentsDelta": pieces[call][n]}
            if n == 0:
                chunk["name"] = NAMES[call % len(NAMES)]
            accumulator.push(clock, chunk)
            clock += 1
    content = [{"type": "tool-call", "id": f"c{call}", "name": NAMES[call % len(NAMES)], "arguments": "".join(pieces[call])} for call in range(calls)]
    for call in range(calls):
        accumulator.push(clock, {"type": "block-end", "index": call, "block": content[call]})
        clock += 1
    accumulator.push(clock, {"type": "finish", "reason": {"kind": "tool-calls"}})
    lines = [{"type": "session", "version": 4, "id": "interleaved", "createdAt": T, "cwd": "/w", "delegationDepth": 0, "isSeeded": False}]

    def add(kind: str, at: int, data: dict, **extra) -> None:
        lines.append({"type": kind, "seq": len(lines) - 1, "time": at, "data": data, **extra})

    add("turn/start", T, {"turn": 1})
    add("step/start", T, {"turn": 1, "step": 1})
    add("user/message", T + 1, {"id": "u1", "role": "user", "content": [{"type": "text", "text": "look"}], "source": {"kind": "user"}}, surfaceOp="append")
    message = {"id": "a1", "role": "assistant", "content": content, "source": {"kind": "model", "provider": "p", "model": "m"}}
    usage = {"inputTokens": 10, "outputTokens": 20}
    add("assistant/message", clock + 1, {"turn": 1, "step": 1, "message": message, "stream": msgspec.to_builtins(accumulator.records), "usage": usage}, surfaceOp="append")
    for block in content:
        add("tool/call", clock + 2, {"turn": 1, "step": 1, "callId": block["id"], "name": block["name"], "arguments": block["arguments"]})
    add("step/end", clock + 3, {"turn": 1, "step": 1})
    add("turn/end", clock + 4, {"turn": 1, "reason": {"kind": "completed"}})
    path.write_text("\n".join(json.dumps(line, separators=(",", ":")) for line in lines) + "\n", encoding="utf-8")


def timed(checkout: Path, arguments: list[str], timeout: float, color: bool = False) -> float | None:
    """Seconds one ``dshctl`` run in ``checkout`` takes (None: stopped at ``timeout``)."""
    environment = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    environment["PYTHONPATH"] = str(checkout)
    environment.pop("NO_COLOR", None)
    began = time.perf_counter()
    try:
        result = subprocess.run([sys.executable, "-m", "dshctl.cli", *([] if color else ["--no-color"]), *arguments], cwd=checkout, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    if result.returncode != 0:
        raise RuntimeError(f"dshctl {' '.join(arguments)} failed: {result.stderr.decode(errors='replace')}")
    return time.perf_counter() - began


def _median(values: list[float | None]) -> float | None:
    return None if any(value is None for value in values) else statistics.median(values)


def _seconds(value: float | None, timeout: float) -> str:
    return f">{timeout:.0f} s" if value is None else f"{value:.2f} s"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="1000,4000,16000", help="deltas per call, comma-separated")
    parser.add_argument("--calls", type=int, default=2)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--cols", type=int, default=100)
    parser.add_argument("--rows", type=int, default=30)
    parser.add_argument("--color", action="store_true", help="the cast in colour (as replay writes it by default); else --no-color")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds before a run is stopped")
    parser.add_argument("--checkout", type=Path, action="append", help="a source tree whose dshctl package to run (default: this one)")
    parser.add_argument("--keep", type=Path, help="write the logs here (kept) instead of a temporary directory")
    args = parser.parse_args()
    checkouts = [path.resolve() for path in args.checkout or [REPO]]
    with tempfile.TemporaryDirectory(prefix="dshctl-interleaved-") as scratch:
        directory = args.keep or Path(scratch)
        directory.mkdir(parents=True, exist_ok=True)
        print(f"{args.calls} interleaved tool calls; cast for {args.cols}x{args.rows}{' in colour' if args.color else ''}; median of {args.runs}; {os.cpu_count()} CPU(s)")
        for size in (int(value) for value in args.sizes.split(",")):
            log = directory / f"interleaved-{args.calls}x{size}.session.v4.jsonl"
            if not log.exists():
                write_log(log, size, args.calls)
            cast = directory / "x.cast"
            casts: dict[Path, list[float | None]] = {checkout: [] for checkout in checkouts}
            floors: dict[Path, list[float | None]] = {checkout: [] for checkout in checkouts}
            for _ in range(args.runs):
                for checkout in checkouts:
                    floors[checkout].append(timed(checkout, ["replay", "--instant", str(log)], args.timeout))
                    cast_args = ["replay", str(log), "--export", str(cast), "--force", "--cols", str(args.cols), "--rows", str(args.rows)]
                    casts[checkout].append(timed(checkout, cast_args, args.timeout, args.color))
            for checkout in checkouts:
                cast_time, floor = _median(casts[checkout]), _median(floors[checkout])
                ratio = "" if cast_time is None or floor is None else f"  {cast_time / floor:6.1f}x the floor"
                label = "" if checkouts == [REPO] else f"  {checkout}"
                print(f"  {args.calls}x{size:<6} deltas: --export x.cast {_seconds(cast_time, args.timeout):>9}   --instant {_seconds(floor, args.timeout):>8}{ratio}{label}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
