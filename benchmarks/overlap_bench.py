#!/usr/bin/env python3
"""The zstd reader thread (``dshctl/source/overlap.py``) on and off, beside the floor, in the same rounds.

``dshctl stats --json LOG`` is run three ways each round, in a fixed order: the floor (``stats_bench``'s
one ``python3`` decompressing and decoding every line), dshctl with the reader thread off (the serial
fast path: ``OVERLAP_MIN_BYTES`` set beyond any log) and on (set to 0). Printed: medians of wall time,
CPU time (user + system, the thread's included) and peak RSS, each build's median per-round ratio to
the floor, and the median per-round ratio of thread on to thread off. The two dshctl outputs must be
byte-identical. Extra ``--variant 'PYTHON'`` arguments run the thread on with module settings changed
(``o.READ_BYTES = 256 << 10``), to tune them.

Usage::

    python benchmarks/overlap_bench.py [--rounds 7] [--log PATH] [--variant 'o.BATCH_DECODED = 2 << 20']

The default log is the 1 GiB one of ``targets.py`` (built there, once, under /tmp).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stats_bench import FLOOR_SCRIPT  # noqa: E402

ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
DEFAULT_LOG = Path(tempfile.gettempdir()) / "dshctl-stats-bench" / "large-bench-1g" / "session.jsonl.zstd"


def dshctl(threshold: int, settings: str = "pass") -> list[str]:
    code = ("import sys, dshctl.source.overlap as o; "
            f"o.OVERLAP_MIN_BYTES = {threshold}; {settings}; "
            "from dshctl.entry import main; sys.argv[0] = 'dshctl'; sys.exit(main())")
    return [sys.executable, "-c", code]


def run(argv: list[str]) -> tuple[float, float, float, bytes, int]:
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.DEVNULL, env=ENV)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024, out.read(), os.waitstatus_to_exitcode(status)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--log", type=Path, default=DEFAULT_LOG)
    parser.add_argument("--variant", action="append", default=[], help="module settings for one more thread-on run")
    args = parser.parse_args()
    if not args.log.exists():
        raise SystemExit(f"{args.log} does not exist: build it with benchmarks/targets.py (row 3)")
    commands = {
        "floor": [sys.executable, "-c", FLOOR_SCRIPT, str(args.log)],
        "thread off": [*dshctl(1 << 62), "stats", "--json", str(args.log)],
        "thread on": [*dshctl(0), "stats", "--json", str(args.log)],
    }
    for index, settings in enumerate(args.variant):
        commands[f"variant {index + 1}"] = [*dshctl(0, settings), "stats", "--json", str(args.log)]
    results: dict[str, list[tuple]] = {name: [] for name in commands}
    print(f"{args.log} ({args.log.stat().st_size / 1e6:.0f} MB), {args.rounds} rounds, load {os.getloadavg()[0]:.1f}")
    for round_ in range(args.rounds + 1):  # round 0 warms the page cache and the bytecode, uncounted
        outputs = {}
        for name, argv in commands.items():
            wall, cpu, rss, output, code = run(argv)
            if name != "floor" and code != 0:
                raise SystemExit(f"{name} ended with {code}")
            outputs[name] = output
            if round_:
                results[name].append((wall, cpu, rss))
        if any(output != outputs["thread off"] for name, output in outputs.items() if name != "floor"):
            raise SystemExit("the reader thread changed the output")
    for name, rows in results.items():
        ratio = statistics.median(row[0] / floor[0] for row, floor in zip(rows, results["floor"]))
        print(f"  {name:>10}: wall {statistics.median(r[0] for r in rows):6.2f} s, CPU {statistics.median(r[1] for r in rows):6.2f} s, "
              f"peak RSS {max(r[2] for r in rows) / 1e6:4.0f} MB, {ratio:.2f}× floor")
    for name in commands:
        if name not in ("floor", "thread off"):
            wall = statistics.median(a[0] / b[0] for a, b in zip(results[name], results["thread off"]))
            cpu = statistics.median(a[1] / b[1] for a, b in zip(results[name], results["thread off"]))
            print(f"  {name} / thread off: wall {wall:.3f}, CPU {cpu:.3f}")
    print(f"  (load at the end {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
