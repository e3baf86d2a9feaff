"""How fast does ``dshctl replay`` put its first frame on screen? (budget: 200 ms)

The session is dsh's own first-open benchmark shape (FORMAT.md Appendix B): a released v0 log of 200
turns × (125 reasoning + 500 text deltas), every delta run ≥ 3 packed into one row, every row its own
zstd frame, ``time = 1 700 000 000 000 + seq`` — 127 400 logical events, 125 000 deltas, 2 801 frames.

Measured, each in fresh processes (median of ``--runs``):

* ``first frame, in process`` — from ``open_log`` to the first complete frame (screen + status line)
  rendered by the terminal driver's own drawing code, after the modules are imported;
* ``first frame, --turn 200`` — the same when starting at the last turn (the whole log is read and the
  199-turn prefix is drawn at once);
* ``first frame, end to end`` — ``dshctl replay FILE`` in a pseudo-terminal (100×30): from spawning the
  process (interpreter start-up and imports included) to the first byte of the status line;
* ``transcript (not a tty)`` — ``dshctl replay FILE > /dev/null``: the whole transcript, for scale.

    python benchmarks/replay_first_frame.py [--runs 5] [--keep DIR] [--turns 200] [--text-deltas 500]

Exits 1 when the in-process first frame misses the 200 ms budget.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
BUDGET_MS = 200.0
TIME_ZERO = 1_700_000_000_000


def generate(path: Path, turns: int, text_deltas: int) -> int:
    """Write the Appendix B session (released v0, one frame per row); returns the logical event count."""
    import zstandard

    reasoning = text_deltas // 4
    compressor = zstandard.ZstdCompressor(write_checksum=True)
    seq = 0
    with open(path, "wb") as out:

        def frame(obj) -> None:
            out.write(compressor.compress((json.dumps(obj, separators=(",", ":")) + "\n").encode()))

        def event(kind: str, data: dict, **extra) -> None:
            nonlocal seq
            frame({"type": kind, "seq": seq, "time": TIME_ZERO + seq, "data": data, **extra})
            seq += 1

        def row(tag: str, turn: int, index: int, texts: list[str]) -> None:
            nonlocal seq
            data = {"turn": turn, "step": 1, "index": index, "dt": [1] * (len(texts) - 1), "texts": texts}
            frame({"type": tag, "seq0": seq, "time0": TIME_ZERO + seq, "data": data})
            seq += len(texts)

        frame({"type": "session", "version": 0, "id": "bench-session", "createdAt": TIME_ZERO, "cwd": "/bench", "delegationDepth": 0})
        for k in range(1, turns + 1):
            event("turn/start", {"turn": k})
            event("step/start", {"turn": k, "step": 1})
            event(
                "user/message",
                {"id": f"user-{k}", "role": "user", "content": [{"type": "text", "text": f"prompt {k}"}], "source": {"kind": "user"}},
                surfaceOp="append",
            )
            first = seq

            def chunk(c: dict) -> None:
                event("assistant/chunk", {"turn": k, "step": 1, "chunk": c})

            thinking = [f"r{i} " for i in range(reasoning)]
            words = [f"w{i} " for i in range(text_deltas)]
            chunk({"type": "block-start", "index": 0, "blockType": "reasoning"})
            row("reasoning-chunks", k, 0, thinking)
            chunk({"type": "block-end", "index": 0, "block": {"type": "reasoning", "text": "".join(thinking)}})
            chunk({"type": "block-start", "index": 1, "blockType": "text"})
            row("text-chunks", k, 1, words)
            chunk({"type": "block-end", "index": 1, "block": {"type": "text", "text": "".join(words)}})
            usage = {"inputTokens": 100, "outputTokens": 500}
            chunk({"type": "usage", "usage": usage})
            chunk({"type": "finish", "reason": {"kind": "stop"}})
            message = {
                "id": f"assistant-{k}",
                "role": "assistant",
                "content": [{"type": "reasoning", "text": "".join(thinking)}, {"type": "text", "text": "".join(words)}],
                "source": {"kind": "model", "provider": "bench", "model": "bench"},
            }
            event("assistant/message", {"turn": k, "step": 1, "message": message, "usage": usage}, sourceEventSeqs=[[first, seq - 1]], surfaceOp="append")
            event("step/end", {"turn": k, "step": 1})
            event("turn/end", {"turn": k, "reason": {"kind": "completed"}})
    return seq


IN_PROCESS = r"""
import io, json, sys, time
from dshctl.reader import open_log
from dshctl.replay.timeline import Timeline
from dshctl.replay.player import Player
from dshctl.replay.terminal import _Screen
from rich.console import Console
from rich.text import Text
import prompt_toolkit.input  # imported by the driver after the first frame; excluded from the first-frame time
path, turn = sys.argv[1], int(sys.argv[2])
began = time.perf_counter()
timeline = Timeline(open_log(path))
start = timeline.ensure_turn(turn) if turn else 0
player = Player(timeline, position=start, now=time.monotonic())
player.tick(time.monotonic())
console = Console(file=io.StringIO(), width=100, height=30, force_terminal=True, color_system="truecolor")
_Screen(console).draw(player, scroll=0, message=None, keys=True)
frame = time.perf_counter()
timeline.ensure_all()
built = time.perf_counter()
print(json.dumps({"first_ms": (frame - began) * 1000, "built_ms": (built - began) * 1000, "fragments": len(timeline), "items": len(timeline.items), "position": player.position}))
"""


def in_process(path: Path, turn: int) -> dict:
    result = subprocess.run([sys.executable, "-c", IN_PROCESS, str(path), str(turn)], capture_output=True, text=True, cwd=REPO, check=True)
    return json.loads(result.stdout)


def end_to_end(path: Path) -> float:
    """Spawn ``dshctl replay`` on a pty; ms until the status line's key hint appears."""
    import fcntl
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    env = dict(os.environ, TERM="xterm-256color")
    env.pop("NO_COLOR", None)
    began = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "-m", "dshctl.cli", "replay", str(path)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        cwd=REPO,
        env=env,
        start_new_session=True,
    )
    os.close(slave)
    seen = b""
    elapsed = None
    deadline = began + 20
    try:
        while time.perf_counter() < deadline:
            ready, _, _ = select.select([master], [], [], 0.5)
            if not ready:
                continue
            try:
                data = os.read(master, 65536)
            except OSError:
                break
            if not data:
                break
            seen += data
            if b"? keys" in seen:  # the status line's last words: the whole first frame is drawn
                elapsed = (time.perf_counter() - began) * 1000
                break
        os.write(master, b"q")
        try:
            while True:
                ready, _, _ = select.select([master], [], [], 0.2)
                if not ready or not os.read(master, 65536):
                    break
        except OSError:
            pass
        process.wait(timeout=10)
    finally:
        if process.poll() is None:
            process.kill()
        os.close(master)
    if elapsed is None:
        raise RuntimeError("the first frame never appeared")
    return elapsed


def transcript_ms(path: Path) -> float:
    began = time.perf_counter()
    with open(os.devnull, "wb") as sink:
        subprocess.run([sys.executable, "-m", "dshctl.cli", "replay", str(path)], stdout=sink, check=True, cwd=REPO)
    return (time.perf_counter() - began) * 1000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--text-deltas", type=int, default=500)
    parser.add_argument("--keep", type=Path, help="write the session here (reused when it exists)")
    args = parser.parse_args()

    directory = args.keep or Path(tempfile.mkdtemp(prefix="dshctl-replay-bench-"))
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"bench-{args.turns}x{args.text_deltas}.session.jsonl.zstd"
    if not path.exists():
        began = time.perf_counter()
        events = generate(path, args.turns, args.text_deltas)
        print(f"generated {path} ({events} logical events, {path.stat().st_size / 1024:.0f} KiB) in {time.perf_counter() - began:.1f} s")

    first = [in_process(path, 0) for _ in range(args.runs)]
    last = [in_process(path, args.turns) for _ in range(args.runs)]
    e2e = [end_to_end(path) for _ in range(args.runs)]
    whole = [transcript_ms(path) for _ in range(args.runs)]

    def median(values) -> float:
        return statistics.median(values)

    first_ms = median(r["first_ms"] for r in first)
    rows = [
        ("first frame, in process", first_ms),
        (f"first frame, --turn {args.turns}", median(r["first_ms"] for r in last)),
        ("first frame, end to end (pty)", median(e2e)),
        ("whole timeline built", median(r["built_ms"] for r in first)),
        ("transcript (not a tty), process", median(whole)),
    ]
    print(f"session: {args.turns} turns x ({args.text_deltas // 4} reasoning + {args.text_deltas} text deltas); "
          f"{first[0]['fragments']} fragments in {first[0]['items']} items; median of {args.runs} fresh processes")
    for label, value in rows:
        print(f"  {label:<34} {value:8.1f} ms")
    verdict = "within" if first_ms <= BUDGET_MS else "OVER"
    print(f"budget {BUDGET_MS:.0f} ms for the first frame: {verdict}")
    return 0 if first_ms <= BUDGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
