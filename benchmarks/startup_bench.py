#!/usr/bin/env python3
"""Start-up, by instruction counts: ``dshctl --version`` and ``dshctl stats --json`` on dsh's benchmark log
(``stats_bench.write_bench_v0``, 127,400 events), whole process, beside the floor's whole process
(``stats_bench.FLOOR_SCRIPT``: one ``python3`` decompressing with zstandard and decoding every line with
msgspec) and beside the bare interpreter, all under ``valgrind --tool=callgrind`` in the same run.

Instruction counts are noise-free on a shared machine, where wall-clock ratios swing by ±0.5. Each
command runs once uncounted first (bytecode written), then once counted. ``--imports`` adds
``python -X importtime`` of ``stats --json`` (the 25 costliest modules, cumulative).

Usage::

    python benchmarks/startup_bench.py [--build LABEL=PATH/TO/dshctl ...] [--imports] [--dir /tmp/dshctl-startup-bench]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stats_bench import FLOOR_SCRIPT, write_bench_v0  # noqa: E402

ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def instructions(argv: list[str], scratch: Path) -> int:
    """The whole process's instruction count (callgrind's ``summary``), after one uncounted run."""
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    out = scratch / "callgrind.out"
    result = subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *argv],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV,
    )
    found = re.search(r"^summary:\s*(\d+)", out.read_text(), re.M) if out.exists() else None
    if found is None:
        raise SystemExit(f"callgrind failed on {argv}: {result.stderr[-2000:]}")
    out.unlink()
    return int(found.group(1))


def python_of(exe: str) -> str:
    """The interpreter of a console script (its ``#!`` line), so that each build is compared with the
    floor run by its own interpreter."""
    first = Path(exe).read_text().split("\n", 1)[0]
    return first[2:].strip() if first.startswith("#!") else sys.executable


def import_times(argv: list[str], top: int = 25) -> list[str]:
    python, *rest = argv
    result = subprocess.run([python, "-X", "importtime", *rest], capture_output=True, text=True, env=ENV)
    rows = [line for line in result.stderr.splitlines() if line.startswith("import time:") and "|" in line]
    parsed = []
    for line in rows[1:]:  # the first is the column heading
        _, cumulative, name = line.split("|")
        parsed.append((int(cumulative), name.rstrip()))
    parsed.sort(reverse=True)
    return [f"{cumulative / 1000:7.1f} ms  {name}" for cumulative, name in parsed[:top]]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", action="append", default=[], help="LABEL=PATH of a dshctl executable (repeatable)")
    parser.add_argument("--dir", type=Path, default=Path(tempfile.gettempdir()) / "dshctl-startup-bench")
    parser.add_argument("--imports", action="store_true", help="also print python -X importtime of stats --json")
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    log = args.dir / "bench.jsonl.zstd"
    if not log.exists():
        write_bench_v0(log)
    builds = {}
    for spec in args.build or [str(Path(sys.executable).with_name("dshctl"))]:
        label, _, path = spec.rpartition("=")
        builds[label or path] = path
    print(f"instructions (callgrind, whole process), dsh's benchmark log {log}")
    for label, exe in builds.items():
        python = python_of(exe)
        bare = instructions([python, "-c", "pass"], args.dir)
        floor = instructions([python, "-c", FLOOR_SCRIPT, str(log)], args.dir)
        version = instructions([python, exe, "--version"], args.dir)
        stats = instructions([python, exe, "stats", "--json", str(log)], args.dir)
        print(f"  {label}:")
        print(f"    python -c pass          {bare / 1e6:7.1f} M")
        print(f"    floor                   {floor / 1e6:7.1f} M")
        print(f"    dshctl --version        {version / 1e6:7.1f} M  ({version / floor:.2f}× floor, {version / bare:.2f}× bare python)")
        print(f"    dshctl stats --json     {stats / 1e6:7.1f} M  ({stats / floor:.2f}× floor)")
        if args.imports:
            print("    python -X importtime dshctl stats --json (cumulative):")
            for line in import_times([python, exe, "stats", "--json", str(log)]):
                print("      " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
