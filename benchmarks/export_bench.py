#!/usr/bin/env python3
"""Benchmark ``dshctl export`` against ``dshctl stats`` on the same inputs, measured in the same run.

Inputs (built once under ``--dir``, not committed):

* **the 1,200-session root** of ``many_bench.py`` (12 projects, v0 benchmark-shaped and v4 sessions,
  ~158 MB of JSON);
* **a large log** of ``stats_bench.py``'s ``bench`` shape (dsh's first-open benchmark session with more
  turns, every row its own zstd frame), ``--size-gb`` of decompressed JSON (default 1).

For each, in fresh processes (medians of ``--runs``; rounds interleaved so the machine's noise falls on
every command alike):

* ``dshctl stats --json INPUT`` — the floor: the same reading and folding, no export;
* ``dshctl export INPUT --out DIR`` into a new directory — the first run;
* the same into the existing dataset — an unchanged input (the issue's target: ≤ 10 % of the first run);
* for the root, ``dshctl export --format otlp``.

Peak RSS is the largest of the command's processes (its own and its workers', ``RUSAGE_CHILDREN`` of a
wrapper: Linux reports the maximum over every waited-for descendant). Target: under 300 MB.

Measured on 2026-12-01 (2 cores shared with other work; medians of 3, the large log of 2)::

    1,200-session root (156 MB of JSON)   wall s  × stats  peak RSS MB
      stats --json (floor)                  6.80     1.00         33.0
      export (first run)                   12.75     1.88        108.9
      export (unchanged input)              0.45     0.07         27.9   (3.5 % of the first run)
      export --format otlp                 11.87     1.75         36.8
    large log (bench shape, 76,778 turns, 1.00 GiB of JSON)
      stats --json (floor)                 41.07     1.00         43.8
      export (first run)                   42.86     1.04        204.0
      export (unchanged input)              0.14     0.00         23.6   (0.3 % of the first run)

Usage::

    python benchmarks/export_bench.py [--runs 3] [--size-gb 1] [--dir /tmp/dshctl-export-bench] [--skip-large] [--skip-many]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stats_bench import CHILD_ENV, dshctl_command, write_large  # noqa: E402

WRAPPER = r"""
import resource, subprocess, sys, time
start = time.perf_counter()
status = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
wall = time.perf_counter() - start
print(status, wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
"""


def measure(argv: list[str]) -> dict:
    """One fresh run: wall seconds and the peak RSS (MB) of its largest process."""
    out = subprocess.run([sys.executable, "-c", WRAPPER, *argv], capture_output=True, text=True, env=CHILD_ENV, check=True).stdout
    status, wall, rss_kb = out.split()
    if int(status) not in (0, 1):
        raise SystemExit(f"{' '.join(argv)}: exit status {status}")
    return {"wall": float(wall), "rss": int(rss_kb) / 1024}


def median(runs: list[dict], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def bench(label: str, source: Path, work: Path, runs: int, otlp: bool) -> dict:
    dshctl = dshctl_command()
    results: dict[str, list[dict]] = {"stats": [], "export": [], "unchanged": [], "otlp": []}
    for round_ in range(runs):
        dataset = work / f"dataset-{round_}"
        shutil.rmtree(dataset, ignore_errors=True)
        results["stats"].append(measure([*dshctl, "stats", "--json", str(source)]))
        results["export"].append(measure([*dshctl, "export", str(source), "--out", str(dataset)]))
        results["unchanged"].append(measure([*dshctl, "export", str(source), "--out", str(dataset)]))
        if otlp:
            results["otlp"].append(measure([*dshctl, "export", "--format", "otlp", "--force", "--out", str(work / "traces.jsonl"), str(source)]))
        shutil.rmtree(dataset, ignore_errors=True)
    stats_wall = median(results["stats"], "wall")
    export_wall = median(results["export"], "wall")
    print(f"\n{label}")
    print(f"  {'command':<34} {'wall s':>8} {'× stats':>8} {'peak RSS MB':>12}")
    figures = {}
    for name, title in (("stats", "stats --json (floor)"), ("export", "export (first run)"),
                        ("unchanged", "export (unchanged input)"), ("otlp", "export --format otlp")):
        if not results[name]:
            continue
        wall = median(results[name], "wall")
        rss = max(run["rss"] for run in results[name])
        figures[name] = {"wall": wall, "rss": rss}
        print(f"  {title:<34} {wall:>8.2f} {wall / stats_wall:>8.2f} {rss:>12.1f}")
    ratio = median(results["unchanged"], "wall") / export_wall
    print(f"  unchanged re-run / first run: {ratio:.1%} (target ≤ 10%); peak RSS target < 300 MB")
    figures["unchanged_ratio"] = ratio
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--size-gb", type=float, default=1.0)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/dshctl-export-bench"))
    parser.add_argument("--many-dir", type=Path, default=Path("/tmp/dshctl-many-bench"))
    parser.add_argument("--skip-large", action="store_true")
    parser.add_argument("--skip-many", action="store_true")
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    figures = {}
    if not args.skip_many:
        from many_bench import build_root

        root, facts = build_root(args.many_dir)
        figures["many"] = bench(f"1,200-session root ({facts['logical_bytes'] / 1e6:.0f} MB of JSON)", root, args.dir, args.runs, otlp=True)
    if not args.skip_large:
        large = args.dir / f"large-bench-{args.size_gb:g}g" / "session.jsonl.zstd"
        large.parent.mkdir(parents=True, exist_ok=True)
        facts_path = large.parent / "facts.json"
        if not large.exists() or not facts_path.exists():
            started = time.perf_counter()
            facts = write_large(large, int(args.size_gb * (1 << 30)), "bench")
            facts_path.write_text(json.dumps(facts))
            print(f"(generated {large} in {time.perf_counter() - started:.0f} s)")
        facts = json.loads(facts_path.read_text())
        figures["large"] = bench(f"large log (bench shape, {facts['turns']:,} turns, {facts['logical_bytes'] / 2**30:.2f} GiB of JSON)",
                                 large, args.dir, max(1, min(args.runs, 2)), otlp=False)
    (args.dir / "figures.json").write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
