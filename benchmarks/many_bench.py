#!/usr/bin/env python3
"""Benchmark ``dshctl stats`` over a sessions root of 1,200 logs, and dshctl's start-up.

The root (built once under ``--dir``, deterministic, not committed): 1,200 session directories in 12
project directories, ~158 MB of decompressed JSON —

* even sessions: released v0 in dsh's benchmark shape (FORMAT.md Appendix B; every row its own zstd
  frame), ``session.jsonl.zstd``, 1–16 turns of 100, 200 or 500 text deltas;
* odd sessions: current-generation v4, plain ``session.v4.jsonl``, 1–4 turns of ``stats_bench.v4_turn``;
* every 150th session is a big one (300 v0 turns, or 80 v4 turns: ~4 MB each), so that one big log
  can hold up the tail of a badly scheduled pool.

``createdAt`` steps two hours per session and each file's mtime is set one hour after it, so
``--since`` can be measured too (``--since-run``).

Measured in the same run, in fresh processes, rounds interleaved so that the noise of a shared machine
falls on every command alike (median of ``--runs``):

* **floor** — one ``python3`` process decompressing every log (zstandard) and decoding every line
  (msgspec), nothing else;
* ``dshctl stats --json ROOT`` with the default jobs and with ``-j 1``;
* the parallelism the machine gives right now: the same CPU-bound loop in two processes and in one.

Each is reported as wall time, CPU time (user + system, children included) and peak RSS of the
largest process (``os.wait4``), and as the median of the per-round ratios to the floor. Both dshctl
runs must print the same document. On a shared machine the default jobs can only beat ``-j 1`` by as
much as two processes really run in parallel, which the CPU-bound pair shows.

Start-up: ``dshctl --help`` and ``dshctl --version`` beside ``python -c "import typer"`` and a bare
``python -c pass`` (medians of ``--startup-runs`` fresh processes each, interleaved).

Usage::

    python benchmarks/many_bench.py [--runs 5] [--startup-runs 20] [--dir /tmp/dshctl-many-bench]
                                    [--skip-many] [--skip-startup] [--since-run] [--baseline OTHER_DSHCTL]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stats_bench import CHILD_ENV, TIME_ZERO, dshctl_command, v0_header, v4_header, write_bench_v0, write_v4  # noqa: E402

SESSIONS = 1200
PROJECTS = 12
BIG_EVERY = 150
SESSION_SPACING_MS = 2 * 3600 * 1000
NO_CACHE = ["--no-cache"]
"""Every log read each round: a run through the stats cache (``targets.py`` measures it) would time the
cache's lookups, not the reading."""
RECIPE = "many-bench/1"
"""Bumped whenever the root's recipe changes, so that a stale root is rebuilt."""

FLOOR_SCRIPT = r"""
import sys
import msgspec, zstandard
decode = msgspec.json.Decoder().decode
dctx = zstandard.ZstdDecompressor()
lines = 0
size = 0
for name in open(sys.argv[1]).read().split("\n"):
    with open(name, "rb") as f:
        reader = dctx.stream_reader(f, read_across_frames=True) if name.endswith(".zstd") else f
        rest = b""
        while True:
            block = reader.read(1 << 20)
            if not block:
                break
            size += len(block)
            parts = (rest + block).split(b"\n")
            rest = parts.pop()
            for line in parts:
                decode(line)
                lines += 1
print(lines, size)
"""

SPIN_SCRIPT = r"""
import os, sys
def spin():
    total = 0
    for i in range(4_000_000):
        total += i
children = []
for _ in range(int(sys.argv[1]) - 1):
    pid = os.fork()
    if pid == 0:
        spin()
        os._exit(0)
    children.append(pid)
spin()
for pid in children:
    os.waitpid(pid, 0)
"""
"""A fixed amount of pure-Python CPU work in each of N processes: how much two processes really run in
parallel on this machine right now (the other tenants of a shared machine take their share)."""


# --------------------------------------------------------------------------------------------------
# The root


def session_plan(index: int, rng: random.Random) -> dict:
    """What session ``index`` holds (drawn from ``rng`` in index order, so the root is deterministic)."""
    big = index % BIG_EVERY == 0
    if index % 2 == 0:
        return {"generation": 0, "turns": 300 if big else rng.randint(1, 16), "text_deltas": 500 if big else rng.choice((100, 200, 500))}
    return {"generation": 4, "turns": 80 if big else rng.randint(1, 4)}


def write_session(root: Path, index: int, plan: dict) -> dict:
    project = f"--bench-p{index % PROJECTS:02d}--"
    session_id = f"many-{index:04d}"
    created = TIME_ZERO + index * SESSION_SPACING_MS
    cwd = f"/bench/p{index % PROJECTS:02d}"
    directory = root / project / session_id
    directory.mkdir(parents=True, exist_ok=True)
    if plan["generation"] == 0:
        path = directory / "session.jsonl.zstd"
        facts = write_bench_v0(path, plan["turns"], plan["text_deltas"], header=v0_header(session_id, created, cwd))
    else:
        path = directory / "session.v4.jsonl"
        facts = write_v4(path, turns=plan["turns"], header=v4_header(session_id, created, cwd), compress=False)
    mtime = created / 1000 + 3600
    os.utime(path, (mtime, mtime))
    return {"path": str(path), "logical_bytes": facts["logical_bytes"], "bytes": facts["bytes"]}


def build_root(directory: Path) -> tuple[Path, dict]:
    root = directory / "sessions"
    facts_path = directory / "facts.json"
    if facts_path.exists():
        facts = json.loads(facts_path.read_text())
        if facts.get("recipe") == RECIPE:
            return root, facts
    started = time.perf_counter()
    rng = random.Random(SESSIONS)
    files = [write_session(root, index, session_plan(index, rng)) for index in range(SESSIONS)]
    facts = {
        "recipe": RECIPE,
        "sessions": SESSIONS,
        "logical_bytes": sum(f["logical_bytes"] for f in files),
        "bytes": sum(f["bytes"] for f in files),
        "largest_logical_bytes": max(f["logical_bytes"] for f in files),
        "since_ms": TIME_ZERO + (SESSIONS * 3 // 4) * SESSION_SPACING_MS,
    }
    (directory / "files.txt").write_text("\n".join(f["path"] for f in files))
    facts_path.write_text(json.dumps(facts))
    print(f"(built {root} in {time.perf_counter() - started:.0f} s)")
    return root, facts


# --------------------------------------------------------------------------------------------------
# Measuring


def run_child(argv: list[str]) -> dict:
    """Wall and CPU seconds, peak RSS (bytes, largest process of the tree) and stdout of one fresh child.

    Linux folds the spawning process's own peak RSS into the child's at exec, so this process keeps
    small (the root is built in a child, outputs are not kept): a child's peak below this process's
    peak (~15 MB) would read as this process's."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(argv, stdout=out, stderr=err, env=CHILD_ENV)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        process.returncode = code
        if code != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(argv)} failed ({code}): {err.read().decode(errors='replace')}")
        out.seek(0)
        return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss * 1024, "output": out.read()}


def interleaved(commands: dict[str, list[str]], runs: int) -> dict[str, list[dict]]:
    """Every command once per round, ``runs`` rounds, after one uncounted warm-up round."""
    for argv in commands.values():
        run_child(argv)
    results: dict[str, list[dict]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, argv in commands.items():
            if results[name]:
                results[name][-1]["output"] = None  # only the last is compared; this process must stay small
            results[name].append(run_child(argv))
    return results


def median_of(runs: list[dict], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def median_ratio(runs: list[dict], base: list[dict], key: str = "wall") -> float:
    """The median over rounds of this command's figure divided by the base's figure of the same round."""
    return statistics.median(a[key] / b[key] for a, b in zip(runs, base))


def bench_many(directory: Path, runs: int, since_run: bool, baseline: str | None) -> None:
    subprocess.run([sys.executable, __file__, "--build-only", "--dir", str(directory)], check=True)
    root, facts = build_root(directory)
    print(
        f"\n== stats over {facts['sessions']:,} sessions: {root}\n"
        f"   {facts['logical_bytes'] / 1e6:.0f} MB decompressed JSON ({facts['bytes'] / 1e6:.0f} MB on disk), "
        f"largest log {facts['largest_logical_bytes'] / 1e6:.1f} MB"
    )
    dshctl = dshctl_command()
    commands = {
        "floor (one process: zstandard + msgspec)": [sys.executable, "-c", FLOOR_SCRIPT, str(directory / "files.txt")],
        "dshctl stats --json ROOT": dshctl + ["stats", "--json", *NO_CACHE, str(root)],
        "dshctl stats --json -j 1 ROOT": dshctl + ["stats", "--json", *NO_CACHE, "-j", "1", str(root)],
    }
    if baseline:
        commands["baseline: stats --json ROOT"] = [baseline, "stats", "--json", *NO_CACHE, str(root)]
        commands["baseline: stats --json -j 1 ROOT"] = [baseline, "stats", "--json", *NO_CACHE, "-j", "1", str(root)]
    commands["two CPU-bound processes"] = [sys.executable, "-c", SPIN_SCRIPT, "2"]
    commands["one CPU-bound process"] = [sys.executable, "-c", SPIN_SCRIPT, "1"]
    if since_run:
        since = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(facts["since_ms"] / 1000))
        commands[f"dshctl stats --json --since {since}"] = dshctl + ["stats", "--json", *NO_CACHE, "--since", since, str(root)]
        if baseline:
            commands[f"baseline: stats --json --since {since}"] = [baseline, "stats", "--json", *NO_CACHE, "--since", since, str(root)]
    results = interleaved(commands, runs)
    names = [name for name in commands if "CPU-bound" not in name]
    floor = results[names[0]]
    print(f"   {'':52}{'wall':>9}{'CPU':>9}{'peak RSS':>11}{'× floor (wall)':>16}{'× floor (CPU)':>15}")
    for name in names:
        r = results[name]
        print(
            f"   {name:52}{median_of(r, 'wall'):8.2f}s{median_of(r, 'cpu'):8.2f}s{median_of(r, 'rss') / 1e6:8.1f} MB"
            f"{median_ratio(r, floor):15.2f}×{median_ratio(r, floor, 'cpu'):14.2f}×"
        )
    default, single = results[names[1]], results[names[2]]
    cores = len(os.sched_getaffinity(0))
    print(
        f"   bound: on {cores} free cores the default jobs' wall is at least the CPU of -j 1 shared by {cores}: "
        f"{median_ratio(single, floor, 'cpu') / cores:.2f}× the floor's CPU (the floor's wall is its CPU on a free core)"
    )
    spin_ratio = median_ratio(results["two CPU-bound processes"], results["one CPU-bound process"])
    print(
        f"   default jobs / -j 1 (wall): {median_ratio(default, single):.2f}×, CPU {median_ratio(default, single, 'cpu'):.2f}×; "
        f"{len(os.sched_getaffinity(0))} cores, on which two CPU-bound processes take {spin_ratio:.2f}× the wall time "
        f"of one (1.00× = two free cores, 2.00× = no parallelism)"
    )
    if baseline:
        base_default, base_single = results["baseline: stats --json ROOT"], results["baseline: stats --json -j 1 ROOT"]
        print(
            f"   baseline: default jobs / -j 1 (wall): {median_ratio(base_default, base_single):.2f}×, "
            f"CPU {median_ratio(base_default, base_single, 'cpu'):.2f}×"
        )
    # each build must print one document whatever its jobs; two builds may differ (figures change)
    for baseline_run in (False, True):
        for since_run in (False, True):
            group = [n for n in names[1:] if n.startswith("baseline:") == baseline_run and ("--since" in n) == since_run]
            if len({results[name][-1]["output"] for name in group}) > 1:
                raise SystemExit(f"these printed different documents: {', '.join(group)}")
    document = json.loads(default[-1]["output"])
    aggregate = document["aggregate"]
    print(f"   aggregate: {aggregate['sessions']:,} sessions, {aggregate['turns']:,} turns, {aggregate['steps']:,} steps, {len(document['errors'])} errors")


def bench_startup(runs: int, baseline: str | None) -> None:
    dshctl = dshctl_command()
    commands = {
        "python -c pass": [sys.executable, "-c", "pass"],
        'python -c "import typer"': [sys.executable, "-c", "import typer"],
        "dshctl --help": dshctl + ["--help"],
        "dshctl --version": dshctl + ["--version"],
    }
    if baseline:
        commands["baseline: --help"] = [baseline, "--help"]
        commands["baseline: --version"] = [baseline, "--version"]
    results = interleaved(commands, runs)
    typer = results['python -c "import typer"']
    print(f"\n== start-up (median of {runs} fresh processes each)")
    print(f"   {'':28}{'wall':>10}{'× import typer':>16}")
    for name, runs_ in results.items():
        print(f"   {name:28}{median_of(runs_, 'wall') * 1000:7.1f} ms{median_ratio(runs_, typer):15.2f}×")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="rounds of the many-log measurement (median)")
    parser.add_argument("--startup-runs", type=int, default=20, help="fresh processes per start-up command (median)")
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "dshctl-many-bench"))
    parser.add_argument("--skip-many", action="store_true")
    parser.add_argument("--skip-startup", action="store_true")
    parser.add_argument("--since-run", action="store_true", help="also stats --since (the last quarter of the sessions)")
    parser.add_argument("--baseline", metavar="DSHCTL", help="another dshctl executable (e.g. an older build) measured in the same rounds")
    parser.add_argument("--build-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build_only:
        build_root(Path(args.dir))
        return 0
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPU(s); dshctl: {' '.join(dshctl_command())}")
    if not args.skip_many:
        directory = Path(args.dir)
        directory.mkdir(parents=True, exist_ok=True)
        bench_many(directory, args.runs, args.since_run, args.baseline)
    if not args.skip_startup:
        bench_startup(args.startup_runs, args.baseline)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
