#!/usr/bin/env python3
"""Benchmark ``dshctl grep -F`` over the 1,200-session root of ``many_bench.py``, beside the decode floor.

The root, the floor and the measuring are ``many_bench.py``'s (the root is built once under ``--dir``,
shared with it): the **floor** is one ``python3`` process decompressing every log (zstandard) and
decoding every line (msgspec), nothing else. Measured in the same run, in fresh processes, rounds
interleaved (median of ``--runs``), each as wall time, CPU and the median of the per-round ratios to
the floor:

* ``grep -F`` a string no log holds — the issue's figure (at most 1.5× the floor): every log's bytes
  are decompressed and tested, none is decoded;
* ``grep -F`` a string every v4 log holds (the prompt), none of the v0 logs: half the logs are read in full;
* the same with ``-l``, which stops reading a log at its first hit (turn 1's prompt);
* ``grep`` the same string as a regular expression, with no byte test: every log is read in full.

Usage::

    python benchmarks/grep_bench.py [--runs 5] [--dir /tmp/dshctl-many-bench]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from many_bench import FLOOR_SCRIPT, build_root, interleaved, median_of, median_ratio  # noqa: E402
from stats_bench import dshctl_command  # noqa: E402

ABSENT = "fixed the CI cache"
IN_EVERY_V4_LOG = "explain the failure"


def grep_command(dshctl: list[str], *args: str) -> list[str]:
    """``dshctl grep ARGS`` under ``sh``, so that status 1 (no hit) counts as success to the runner."""
    return ["sh", "-c", '"$@" > /dev/null; [ $? -le 1 ]', "sh", *dshctl, "grep", *args]


def bench(directory: Path, runs: int) -> None:
    subprocess.run([sys.executable, str(Path(__file__).with_name("many_bench.py")), "--build-only", "--dir", str(directory)], check=True)
    root, facts = build_root(directory)
    print(
        f"\n== grep over {facts['sessions']:,} sessions: {root}\n"
        f"   {facts['logical_bytes'] / 1e6:.0f} MB decompressed JSON ({facts['bytes'] / 1e6:.0f} MB on disk)"
    )
    dshctl = dshctl_command()
    commands = {
        "floor (one process: zstandard + msgspec)": [sys.executable, "-c", FLOOR_SCRIPT, str(directory / "files.txt")],
        f"grep -F '{ABSENT}' (in no log)": grep_command(dshctl, "-F", ABSENT, str(root)),
        f"grep -F '{IN_EVERY_V4_LOG}' (every v4 log)": grep_command(dshctl, "-F", IN_EVERY_V4_LOG, str(root)),
        f"grep -l -F '{IN_EVERY_V4_LOG}'": grep_command(dshctl, "-l", "-F", IN_EVERY_V4_LOG, str(root)),
        f"grep '{IN_EVERY_V4_LOG}' (regex: no byte test)": grep_command(dshctl, IN_EVERY_V4_LOG, str(root)),
    }
    results = interleaved(commands, runs)
    floor = results[next(iter(commands))]
    print(f"   {'':52}{'wall':>9}{'CPU':>9}{'× floor (wall)':>16}{'× floor (CPU)':>15}")
    for name, result in results.items():
        print(
            f"   {name:52}{median_of(result, 'wall'):8.2f}s{median_of(result, 'cpu'):8.2f}s"
            f"{median_ratio(result, floor):15.2f}×{median_ratio(result, floor, 'cpu'):14.2f}×"
        )
    print(f"   medians of {runs} rounds; {len(os.sched_getaffinity(0))} usable cores (dshctl's default jobs use them all)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="rounds (median)")
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "dshctl-many-bench"))
    args = parser.parse_args()
    directory = Path(args.dir)
    directory.mkdir(parents=True, exist_ok=True)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPU(s); dshctl: {' '.join(dshctl_command())}")
    bench(directory, args.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
