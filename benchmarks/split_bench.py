#!/usr/bin/env python3
"""Where reading one log in parts on several cores starts to pay (``dshctl.stats.split``): ``stats --json``
of logs in the benchmark's shape of a few sizes, one pass (``-j 1``) against split (``-j 2``, with
``DSHCTL_SPLIT_MIN_BYTES=1`` so that every size splits), alternated in the same rounds; medians of the
per-round ratios of wall and CPU time (user + system, the workers included).

Usage::

    python benchmarks/split_bench.py [--sizes-mb 1,2,4,8,16] [--rounds 7] [--jobs 2]

Sizes are compressed megabytes on disk (a benchmark-shaped log compresses about 3.7×)."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stats_bench import write_bench_v0  # noqa: E402
from targets import BASE_ENV, Rounds, builds  # noqa: E402

COMPRESSION = 3.66
"""Plain bytes per compressed byte of a benchmark-shaped log (1,073,744,334 / 293,190,051)."""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes-mb", default="1,2,4,8,16")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "dshctl-split-bench"))
    parser.add_argument("--build", default=None, metavar="DSHCTL")
    args = parser.parse_args()
    exe = next(iter(builds([args.build] if args.build else []).values()))
    directory = Path(args.dir)
    directory.mkdir(parents=True, exist_ok=True)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPU(s), load {os.getloadavg()[0]:.1f}; {exe}; "
          f"split -j {args.jobs} against one pass -j 1, {args.rounds} rounds")
    forced = {**BASE_ENV, "DSHCTL_SPLIT_MIN_BYTES": "1"}
    for size in [float(text) for text in args.sizes_mb.split(",")]:
        log = directory / f"bench-{size:g}mb.jsonl.zstd"
        if not log.exists():
            write_bench_v0(log, turns=None, max_bytes=int(size * 1e6 * COMPRESSION))
        r = Rounds()
        r.add("one", [exe, "stats", "--json", "-j", "1", str(log)])
        r.add("split", [exe, "stats", "--json", "-j", str(args.jobs), str(log)], lambda _round: forced)
        r.run(args.rounds)
        assert r.output("one") == r.output("split"), f"{log}: the split changed the document"
        print(f"  {log.stat().st_size / 1e6:6.1f} MB: one pass {r.median('one'):6.2f} s (CPU {r.median('one', 'cpu'):6.2f} s), "
              f"split {r.median('split'):6.2f} s (CPU {r.median('split', 'cpu'):6.2f} s); split/one wall {r.ratio('split', 'one'):.2f}, "
              f"CPU {r.ratio('split', 'one', 'cpu'):.2f}")
    print(f"(load average at the end: {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
