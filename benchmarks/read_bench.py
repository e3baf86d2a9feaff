#!/usr/bin/env python3
"""Benchmark the reading path: ``dshctl cat`` on a ≥ 1 GB log and ``dshctl ls`` on 10,000 sessions.

Measured side by side in one run, each in fresh processes (median of ``--runs``):

* **floor** — python3 decompressing the same file with zstandard and decoding every line with msgspec;
* **dshctl cat FILE > /dev/null** — the whole reading path (sources, generations, v0 folding,
  normalized events) plus NDJSON encoding.

Printed: wall time, peak RSS (``ru_maxrss`` via ``os.wait4``), MB/s of decompressed JSON and the ratio to
the floor. The goal from the foundation issue: ``dshctl cat`` of a ≥ 1 GB log under 100 MB peak RSS.

``ls``: a sessions root of 10,000 copies of the bundled tour sample (v4, zstd), listed with ``--ndjson``;
the goal is "in seconds".

The large logs are written into ``--dir`` (default /tmp/dshctl-read-bench) by the generator of
``stats_bench.py`` (the same shapes: ``v4`` and dsh's ``bench`` v0 shape) and are not committed.

Usage::

    python benchmarks/read_bench.py [--size-gb 1] [--runs 3] [--shapes v4,bench] [--skip-ls]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stats_bench import FLOOR_SCRIPT, dshctl_command, measure, write_large  # noqa: E402

SAMPLE = Path(__file__).resolve().parents[1] / "samples" / "tour.session.v4.jsonl.zstd"


def large_log(directory: Path, shape: str, size_gb: float) -> tuple[Path, dict]:
    path = directory / f"large-{shape}-{size_gb:g}g.jsonl.zstd"
    facts_path = path.with_suffix(".facts")
    if path.exists() and facts_path.exists():
        facts = json.loads(facts_path.read_text())
    else:
        print(f"   writing {path} …", flush=True)
        facts = write_large(path, int(size_gb * (1 << 30)), shape)
        facts_path.write_text(json.dumps(facts))
    return path, facts


def bench_cat(path: Path, facts: dict, runs: int) -> None:
    logical = facts["logical_bytes"]
    print(f"\n== dshctl cat: {path.name}: {logical / 1e9:.2f} GB decompressed JSON, {facts['events']:,} events, "
          f"{facts['frames']:,} frames, {facts['bytes'] / 1e6:.0f} MB on disk")
    floor = measure([sys.executable, "-c", FLOOR_SCRIPT, str(path)], runs)
    cat = measure(["sh", "-c", 'exec "$0" cat "$1" > /dev/null', *dshctl_command(), str(path)], runs)
    print(f"   {'':28}{'wall':>10}{'peak RSS':>12}{'MB/s':>10}")
    for label, result in (("floor (zstandard+msgspec)", floor), ("dshctl cat > /dev/null", cat)):
        print(f"   {label:28}{result['wall']:9.2f}s{result['rss'] / 1e6:9.1f} MB{logical / result['wall'] / 1e6:10.1f}")
    print(f"   ratio dshctl / floor: {cat['wall'] / floor['wall']:.2f}×")
    verdict = "met" if cat["rss"] < 100e6 else "MISSED"
    print(f"   target peak RSS < 100 MB: {verdict} ({cat['rss'] / 1e6:.1f} MB)")


def bench_ls(directory: Path, runs: int) -> None:
    root = directory / "sessions-10k"
    if not root.exists():
        data = SAMPLE.read_bytes()
        for project in range(100):
            for session in range(100):
                session_dir = root / f"--project-{project}--" / f"session-{session}"
                session_dir.mkdir(parents=True)
                (session_dir / "session.v4.jsonl.zstd").write_bytes(data)
    result = measure([*dshctl_command(), "ls", "--ndjson", str(root)], runs)
    rows = result["output"].count(b"\n")
    print(f"\n== dshctl ls: {rows:,} sessions in {result['wall']:.2f}s, peak RSS {result['rss'] / 1e6:.1f} MB")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-gb", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--shapes", default="v4,bench")
    parser.add_argument("--skip-ls", action="store_true")
    parser.add_argument("--dir", type=Path, default=Path("/tmp/dshctl-read-bench"))
    parser.add_argument("--clean", action="store_true", help="delete the generated files afterwards")
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    for shape in args.shapes.split(","):
        path, facts = large_log(args.dir, shape, args.size_gb)
        bench_cat(path, facts, args.runs)
    if not args.skip_ls:
        bench_ls(args.dir, args.runs)
    if args.clean:
        shutil.rmtree(args.dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
