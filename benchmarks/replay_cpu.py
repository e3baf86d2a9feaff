#!/usr/bin/env python3
"""How much CPU and terminal output does the interactive player cost while it plays?

The session is dsh's synthetic first-open benchmark log (``stats_bench.write_bench_v0``: 200 turns of
125 reasoning + 500 text deltas, one delta a millisecond — about 1 000 fragments a second at speed 1,
so the screen changes all the time). ``dshctl replay LOG`` runs in a private tmux server (its own
socket, nothing shared with other tmux sessions) at a fixed size; after a warm-up (start-up, imports,
first frame) the player's CPU (``utime + stime`` from ``/proc/PID/stat``), the bytes it writes to
the terminal (``tmux pipe-pane -O`` into a file) and, for scale, the CPU of the tmux server that
plays the terminal are measured over a fixed window. Each size is run
``--runs`` times; medians are printed.

    python benchmarks/replay_cpu.py [--sizes 120x35,250x80] [--seconds 20] [--runs 1] [--paused] [--checkout DIR ...]

``--paused`` presses space after the warm-up and measures the paused player instead. ``--checkout``
(repeatable) runs the ``dshctl`` package found in DIR instead of this one — e.g. ``git archive`` of the
base commit unpacked somewhere — with the runs of all checkouts interleaved, so a before/after
comparison shares the same machine load.
Exits 1 when the 120×35 playing figure is at or above the 15 % target.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
TARGET_PERCENT = 15.0
TICKS = os.sysconf("SC_CLK_TCK")


def bench_log(directory: Path) -> Path:
    sys.path.insert(0, str(REPO / "benchmarks"))
    from stats_bench import write_bench_v0

    path = directory / "bench-session.jsonl.zstd"
    if not path.exists():
        directory.mkdir(parents=True, exist_ok=True)
        write_bench_v0(path)
    return path


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime (fields 14, 15)


def descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    found, stack = [], [root]
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, []))
    return found


def player_pid(pane_pid: int) -> int | None:
    for pid in descendants(pane_pid):
        try:
            if b"dshctl.cli" in Path(f"/proc/{pid}/cmdline").read_bytes():
                return pid
        except OSError:
            continue
    return None


class Tmux:
    def __init__(self, width: int, height: int, command: str) -> None:
        self.socket = f"dshctl-cpu-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        env = dict(os.environ, TERM="xterm-256color")
        env.pop("NO_COLOR", None)
        self.run("new-session", "-d", "-s", "bench", "-x", str(width), "-y", str(height), command, env=env)

    def run(self, *args: str, env=None) -> str:
        result = subprocess.run(["tmux", "-L", self.socket, "-f", os.devnull, *args], capture_output=True, text=True, check=True, env=env, timeout=10)
        return result.stdout

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=10)


def measure(checkout: Path, log: Path, width: int, height: int, seconds: float, warmup: float, paused: bool) -> tuple[float, float, float]:
    """(% of one core, output KB/s, the terminal's % of a core) of the player in ``checkout`` over
    ``seconds`` after ``warmup``."""
    command = " ".join(shlex.quote(part) for part in [sys.executable, "-m", "dshctl.cli", "replay", str(log)])
    with tempfile.TemporaryDirectory(prefix="dshctl-replay-cpu-") as scratch:
        output = Path(scratch) / "output"
        output.touch()
        tmux = Tmux(width, height, f"cd {shlex.quote(str(checkout))} && exec {command}")
        try:
            tmux.run("pipe-pane", "-O", "-t", "bench", f"cat >> {shlex.quote(str(output))}")
            pane_pid = int(tmux.run("display-message", "-p", "-t", "bench", "#{pane_pid}").strip())
            server = int(tmux.run("display-message", "-p", "-t", "bench", "#{pid}").strip())
            deadline = time.monotonic() + 10
            pid = None
            while pid is None and time.monotonic() < deadline:
                pid = player_pid(pane_pid)
                time.sleep(0.05)
            if pid is None:
                raise RuntimeError("the player did not start")
            time.sleep(warmup)
            if paused:
                tmux.run("send-keys", "-t", "bench", "Space")
                time.sleep(0.5)
            cpu0, bytes0, wall0, terminal0 = cpu_seconds(pid), output.stat().st_size, time.monotonic(), cpu_seconds(server)
            time.sleep(seconds)
            cpu1, bytes1, wall1, terminal1 = cpu_seconds(pid), output.stat().st_size, time.monotonic(), cpu_seconds(server)
            tmux.run("send-keys", "-t", "bench", "q")
        finally:
            tmux.close()
    wall = wall1 - wall0
    return 100 * (cpu1 - cpu0) / wall, (bytes1 - bytes0) / 1024 / wall, 100 * (terminal1 - terminal0) / wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="120x35,250x80", help="comma-separated WIDTHxHEIGHT")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured window per run")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds before measuring (start-up, first frame)")
    parser.add_argument("--runs", type=int, default=1)
    parser.add_argument("--paused", action="store_true", help="pause after the warm-up and measure the idle player")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "dshctl-replay-cpu")
    parser.add_argument("--checkout", type=Path, action="append", help="a source tree whose dshctl package to run (default: this one)")
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        print("tmux is not installed", file=sys.stderr)
        return 2
    log = bench_log(args.dir)
    state = "paused" if args.paused else "playing"
    print(f"{log} ({log.stat().st_size / 1024:.0f} KiB); {state}; {args.seconds:g} s window after {args.warmup:g} s; median of {args.runs}; {os.cpu_count()} CPU(s)")
    checkouts = [path.resolve() for path in args.checkout or [REPO]]
    verdict = 0
    for size in args.sizes.split(","):
        width, height = (int(n) for n in size.lower().split("x"))
        results: dict[Path, list[tuple[float, float, float]]] = {checkout: [] for checkout in checkouts}
        for _ in range(args.runs):
            for checkout in checkouts:
                results[checkout].append(measure(checkout, log, width, height, args.seconds, args.warmup, args.paused))
        for checkout, runs in results.items():
            cpu = statistics.median(r[0] for r in runs)
            kbs = statistics.median(r[1] for r in runs)
            terminal = statistics.median(r[2] for r in runs)
            label = "" if checkouts == [REPO] else f"  {checkout}"
            print(f"  {width}x{height}: {cpu:5.1f} % of a core   {kbs:7.1f} KB/s to the terminal   (tmux itself: {terminal:5.1f} %){label}")
            if checkout == REPO and (width, height) == (120, 35) and not args.paused and cpu >= TARGET_PERCENT:
                verdict = 1
    return verdict


if __name__ == "__main__":
    sys.exit(main())
