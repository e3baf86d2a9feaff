#!/usr/bin/env python3
"""Does the player stay responsive on a huge log? Seek latency, memory and quit latency of ``replay``.

The log is dsh's benchmark shape grown to ``--size-gb`` GiB of JSON (``stats_bench.write_bench_v0``
with no turn limit: 76,778 turns, 48.9 M events, a zstd frame a row for 1 GiB; built once under
``--dir``, not committed). ``dshctl replay LOG`` runs in a private tmux server at 120×35; the script
reads the screen every 10 ms and measures, each ``--runs`` times:

* **first frame** — from launching the process to the first status line;
* **key answer** — pressing ``9`` (jump to 90 %) right after the first frame, until the player's output
  (read as tmux passes it on, ``pipe-pane``) answers: ``seeking…`` while the duration is still unknown;
* **seek** — from that key until the screen shows 90 % (the status line's ``90%``), beside the
  **floor**: ``dshctl stats --json LOG`` in the same run (one reading pass of the log, nothing else);
* **peak RSS** — the player's ``VmHWM`` once the seek landed (the whole log built);
* **quit** — ``q`` while a seek is pending (a fresh player), and Ctrl-C after the seek landed, until
  the process has exited.

    python benchmarks/replay_seek.py [--size-gb 1] [--runs 3] [--dir /tmp/dshctl-replay-seek] [--checkout DIR]

``--checkout DIR`` runs the ``dshctl`` package found in DIR instead (before/after in the same run).
Exits 1 when a key answer or a quit takes 200 ms or more, or the peak RSS reaches 300 MB.
"""

from __future__ import annotations

import argparse
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LIMIT_MS = 200
LIMIT_RSS_MB = 300


def large_log(directory: Path, size_gb: float) -> Path:
    sys.path.insert(0, str(REPO / "benchmarks"))
    from stats_bench import write_bench_v0

    path = directory / f"bench-{size_gb:g}g" / "session.jsonl.zstd"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        facts = write_bench_v0(path, turns=None, max_bytes=int(size_gb * 1024**3))
        print(f"wrote {path}: {facts}", file=sys.stderr)
    return path


class Tmux:
    """A private tmux server (its own socket) running one command at a fixed size."""

    def __init__(self, command: list[str], cols: int = 120, rows: int = 35, env: dict | None = None) -> None:
        self.socket = f"dshctl-seek-{uuid.uuid4().hex[:8]}"
        line = " ".join(shlex.quote(part) for part in command)
        if env:
            line = "env " + " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()) + " " + line
        self.started = time.monotonic()
        self.tmux("new-session", "-d", "-x", str(cols), "-y", str(rows), line)
        self.pid = int(self.tmux("display", "-p", "#{pane_pid}").strip())

    def tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True).stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", *keys)

    def record(self, path: Path) -> None:
        """Append everything the program writes to the terminal to ``path``."""
        self.tmux("pipe-pane", "-O", f"cat >> {shlex.quote(str(path))}")

    @staticmethod
    def wait_output(path: Path, needle: bytes, after: int, timeout: float) -> float | None:
        """Seconds until ``needle`` is written past byte ``after`` of the recording (polled every 2 ms)."""
        began = time.monotonic()
        while time.monotonic() - began < timeout:
            with open(path, "rb") as recording:
                recording.seek(after)
                if needle in recording.read():
                    return time.monotonic() - began
            time.sleep(0.002)
        return None

    def wait_for(self, predicate, timeout: float) -> float | None:
        """Seconds until ``predicate(screen)`` holds (polled every 10 ms), None on timeout."""
        began = time.monotonic()
        while time.monotonic() - began < timeout:
            if predicate(self.screen()):
                return time.monotonic() - began
            time.sleep(0.01)
        return None

    def alive(self) -> bool:
        try:
            fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return fields[0] != "Z"
        except OSError:
            return False

    def wait_exit(self, timeout: float) -> float | None:
        began = time.monotonic()
        while time.monotonic() - began < timeout:
            if not self.alive():
                return time.monotonic() - began
            time.sleep(0.002)
        return None

    def peak_rss_mb(self) -> float:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return float("nan")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


def status_line(screen: str) -> str:
    rows = [row for row in screen.rstrip("\n").split("\n")]
    return rows[-1] if rows else ""


def player(checkout: Path, log: Path) -> list[str]:
    return [sys.executable, "-c", f"import sys; sys.path.insert(0, {str(checkout)!r}); from dshctl.cli import main; main()", "replay", str(log)]


def one_run(checkout: Path, log: Path) -> dict:
    figures: dict[str, float] = {}
    env = {"PYTHONPATH": str(checkout), "TERM": "xterm-256color"}
    # seek to 90 %, then Ctrl-C
    run = Tmux(player(checkout, log), env=env)
    recording = Path(f"/tmp/dshctl-seek-{uuid.uuid4().hex[:8]}.out")
    recording.write_bytes(b"")
    try:
        first = run.wait_for(lambda s: "keys" in status_line(s), 60)
        figures["first frame ms"] = 1000 * (first if first is not None else float("nan"))
        run.record(recording)
        time.sleep(0.2)
        size = recording.stat().st_size
        pressed = time.monotonic()
        run.keys("9")
        answer = run.wait_output(recording, "seeking".encode(), size, 30)
        if answer is None:  # the duration was known already: the jump itself is the answer
            answer = run.wait_output(recording, b"90%", size, 30)
        figures["key answer ms"] = 1000 * (answer if answer is not None else float("nan"))
        landed = run.wait_for(lambda s: "90%" in status_line(s), 900)
        figures["seek s"] = (time.monotonic() - pressed) if landed is not None else float("nan")
        figures["peak RSS MB"] = run.peak_rss_mb()
        run.keys("C-c")
        gone = run.wait_exit(10)
        figures["ctrl-c ms"] = 1000 * (gone if gone is not None else float("nan"))
    finally:
        run.close()
        recording.unlink(missing_ok=True)
    # q while the seek is pending
    run = Tmux(player(checkout, log), env=env)
    try:
        run.wait_for(lambda s: "keys" in status_line(s), 60)
        run.keys("9")
        run.wait_for(lambda s: "seeking" in s or "90%" in status_line(s), 30)
        time.sleep(1.0)
        run.keys("q")
        gone = run.wait_exit(60)
        figures["q while seeking ms"] = 1000 * (gone if gone is not None else float("nan"))
    finally:
        run.close()
    return figures


def floor_seconds(checkout: Path, log: Path) -> float:
    began = time.monotonic()
    subprocess.run([sys.executable, "-m", "dshctl.cli", "stats", "--json", str(log)], cwd=checkout, capture_output=True, env={**os.environ, "PYTHONPATH": str(checkout)})
    return time.monotonic() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-gb", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/dshctl-replay-seek"))
    parser.add_argument("--checkout", type=Path, default=REPO)
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        print("tmux is needed", file=sys.stderr)
        return 2
    log = large_log(args.dir, args.size_gb)
    print(f"log {log} ({log.stat().st_size / 1e6:.0f} MB), checkout {args.checkout}")
    runs = []
    floors = []
    for number in range(args.runs):
        floors.append(floor_seconds(args.checkout, log))
        runs.append(one_run(args.checkout, log))
        print(f"run {number + 1}: " + ", ".join(f"{k} {v:.1f}" for k, v in runs[-1].items()) + f", floor {floors[-1]:.1f} s", flush=True)
    medians = {key: statistics.median(run[key] for run in runs) for key in runs[0]}
    floor = statistics.median(floors)
    print("median: " + ", ".join(f"{k} {v:.1f}" for k, v in medians.items()))
    print(f"seek {medians['seek s']:.1f} s = {medians['seek s'] / floor:.2f}× the floor (stats --json, {floor:.1f} s)")
    failed = [key for key in ("key answer ms", "ctrl-c ms", "q while seeking ms") if not medians[key] < LIMIT_MS]
    if not medians["peak RSS MB"] < LIMIT_RSS_MB:
        failed.append("peak RSS MB")
    if failed:
        print("over the limits: " + ", ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
