#!/usr/bin/env python3
"""Every row of issue #25's table in one run: each dshctl figure beside its floor measured in the same
rounds, for each build given, and the stats cache's cold and warm runs.

Rows (targets from the issue):

1. ``stats --json`` on dsh's first-open benchmark log (released v0, 127,400 events; ``stats_bench``),
   whole process, × the floor (one ``python3`` decompressing with zstandard and decoding every line with
   msgspec) — target ≤ 1.5×;
2. the same × the pipeline a user writes instead, ``zstd -dc LOG | jq -r 'select(.type=="assistant/message")
   | .data.usage.outputTokens' | awk '{s+=$1} END {print s}'`` — target < 1.0× (faster than it);
3. ``stats --json`` on a log of ``--size-gb`` (default 1 GiB) in the benchmark's shape, × the floor, its
   throughput and peak RSS — targets ≤ 1.5×, < 100 MB; beside it the same with ``-j 1``, one pass (the
   log not split across cores, :mod:`dshctl.stats.split`);
4. ``stats --json --no-cache ROOT`` over the 1,200-session root (``many_bench``), default jobs, wall ×
   the one-process floor — target ≤ 1.0×; and the cold run of the cache (an empty cache, written);
5. the same command again with nothing changed (warm cache) × its cold run — target ≤ 10 %.

Each round runs every command once, in a fixed order, so that the noise of a shared machine falls on
all of them alike; a row's figure is the median over rounds of the per-round ratio (after one uncounted
warm-up round). Wall time, CPU time (user + system, children included) and peak RSS come from
``os.wait4``. A build is a ``dshctl`` executable (``--build LABEL=PATH``, repeatable; default: the one
beside this interpreter); ``dshctl --version`` says which build it is. Children run without
``PYTHONDONTWRITEBYTECODE`` (an installed package has its bytecode) and each cache run gets its own
``XDG_CACHE_HOME``.

Usage::

    python benchmarks/targets.py [--rounds 15] [--root-rounds 5] [--large-rounds 3] [--size-gb 1]
                                 [--skip-large] [--skip-root] [--build pure=/venv-a/bin/dshctl --build compiled=/venv-b/bin/dshctl]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stats_bench import FLOOR_SCRIPT, write_bench_v0, write_large  # noqa: E402

import many_bench  # noqa: E402

JQ_PIPELINE = (
    "set -o pipefail; zstd -dc \"$0\" | jq -r 'select(.type==\"assistant/message\") | .data.usage.outputTokens'"
    " | awk '{s+=$1} END {print s}'"
)
BASE_ENV = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}


def run_child(argv: list[str], env: dict | None = None) -> dict:
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(argv, stdout=out, stderr=err, env=env or BASE_ENV)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        code = os.waitstatus_to_exitcode(status)
        if code not in (0, 1):
            err.seek(0)
            raise SystemExit(f"{' '.join(argv)} failed ({code}): {err.read().decode(errors='replace')[:2000]}")
        out.seek(0)
        return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime, "rss": usage.ru_maxrss * 1024, "output": out.read()}


class Rounds:
    """Commands run once per round in order; each keeps its figures (only the last output)."""

    def __init__(self) -> None:
        self.commands: dict[str, tuple] = {}
        self.results: dict[str, list[dict]] = {}

    def add(self, name: str, argv: list[str], env_for_round=None) -> None:
        self.commands[name] = (argv, env_for_round)

    def run(self, rounds: int) -> None:
        for round_ in range(rounds + 1):  # round 0: warm-up (bytecode, page cache), not counted
            for name, (argv, env_for_round) in self.commands.items():
                env = env_for_round(round_) if env_for_round else None
                result = run_child(argv, env)
                if round_:
                    for previous in self.results.setdefault(name, []):
                        previous["output"] = None
                    self.results[name].append(result)

    def median(self, name: str, key: str = "wall") -> float:
        return statistics.median(r[key] for r in self.results[name])

    def ratio(self, name: str, base: str, key: str = "wall") -> float:
        return statistics.median(a[key] / b[key] for a, b in zip(self.results[name], self.results[base]))

    def peak(self, name: str) -> int:
        return max(r["rss"] for r in self.results[name])

    def output(self, name: str) -> bytes:
        return self.results[name][-1]["output"]


def builds(given: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    for spec in given or [str(Path(sys.executable).with_name("dshctl"))]:
        label, _, path = spec.rpartition("=")
        version = subprocess.run([path, "--version"], capture_output=True, text=True, env=BASE_ENV).stdout.strip()
        found[label or version.removeprefix("dshctl ")] = path
    return found


def verdict(value: float, limit: float, below: bool = True) -> str:
    return "met" if (value <= limit if below else value < limit) else "MISSED"


def bench_log(directory: Path, dshctl: dict[str, str], rounds: int) -> None:
    log = directory / "--bench--" / "bench-session" / "session.jsonl.zstd"
    log.parent.mkdir(parents=True, exist_ok=True)
    facts = write_bench_v0(log)
    r = Rounds()
    r.add("floor", [sys.executable, "-c", FLOOR_SCRIPT, str(log)])
    r.add("jq", ["bash", "-c", JQ_PIPELINE, str(log)])
    for label, exe in dshctl.items():
        r.add(label, [exe, "stats", "--json", str(log)])
    r.run(rounds)
    assert r.output("jq").strip() == b"100000", r.output("jq")
    for label in dshctl:
        session = json.loads(r.output(label))["sessions"][0]
        assert session["events"] == facts["events"] and session["outputTokens"] == 100_000, session
    print(f"\n1-2. stats --json, dsh's first-open benchmark log ({facts['events']:,} v0 events, {facts['frames']:,} frames), "
          f"{rounds} rounds")
    print(f"     floor {r.median('floor') * 1000:.0f} ms (CPU {r.median('floor', 'cpu') * 1000:.0f} ms), "
          f"jq pipeline {r.median('jq') * 1000:.0f} ms")
    for label in dshctl:
        floor_ratio = r.ratio(label, "floor")
        jq_ratio = r.ratio(label, "jq")
        print(f"     {label:>10}: {r.median(label) * 1000:5.0f} ms, {floor_ratio:.2f}× floor (CPU {r.ratio(label, 'floor', 'cpu'):.2f}×) "
              f"[≤ 1.5×: {verdict(floor_ratio, 1.5)}]; {jq_ratio:.2f}× the jq pipeline [< 1.0×: {verdict(jq_ratio, 1.0, False)}]; "
              f"peak RSS {r.peak(label) / 1e6:.0f} MB")


def large_log(directory: Path, dshctl: dict[str, str], rounds: int, size_gb: float) -> None:
    log = directory / f"large-bench-{size_gb:g}g" / "session.jsonl.zstd"
    log.parent.mkdir(parents=True, exist_ok=True)
    facts_path = log.parent / "facts.json"
    if not facts_path.exists():
        started = time.perf_counter()
        facts = write_large(log, int(size_gb * 1024**3), "bench")
        facts_path.write_text(json.dumps(facts))
        print(f"\n(generated {log} in {time.perf_counter() - started:.0f} s)")
    facts = json.loads(facts_path.read_text())
    r = Rounds()
    r.add("floor", [sys.executable, "-c", FLOOR_SCRIPT, str(log)])
    for label, exe in dshctl.items():
        r.add(label, [exe, "stats", "--json", str(log)])
        r.add(f"{label} -j 1", [exe, "stats", "--json", "-j", "1", str(log)])  # one pass: the log not split
    r.run(rounds)
    for label in dshctl:
        assert r.output(label) == r.output(f"{label} -j 1"), f"{label}: the split changed the document"
    size = facts["logical_bytes"]
    print(f"\n3.   stats --json, {size / 1e9:.2f} GB log in the benchmark's shape ({facts['turns']:,} turns, {facts['frames']:,} frames), "
          f"{rounds} rounds")
    print(f"     floor {r.median('floor'):.1f} s ({size / 1e6 / r.median('floor'):.0f} MB/s), peak RSS {r.peak('floor') / 1e6:.0f} MB")
    for label in dshctl:
        ratio = r.ratio(label, "floor")
        rss = r.peak(label)
        print(f"     {label:>10}: {r.median(label):.1f} s ({size / 1e6 / r.median(label):.0f} MB/s), {ratio:.2f}× floor "
              f"[≤ 1.5×: {verdict(ratio, 1.5)}], peak RSS {rss / 1e6:.0f} MB [< 100 MB: {verdict(rss, 100e6, False)}]")
        one = f"{label} -j 1"
        print(f"     {'':>10}  CPU {r.median(label, 'cpu'):.1f} s ({r.ratio(label, 'floor', 'cpu'):.2f}× the floor's); "
              f"one pass (-j 1, not split) {r.median(one):.1f} s, {r.ratio(one, 'floor'):.2f}× floor, CPU {r.median(one, 'cpu'):.1f} s; "
              f"split/one pass wall {r.ratio(label, one):.2f}, CPU {r.ratio(label, one, 'cpu'):.2f}")


def root(directory: Path, dshctl: dict[str, str], rounds: int) -> None:
    subprocess.run([sys.executable, many_bench.__file__, "--build-only", "--dir", str(directory)], check=True)
    sessions, facts = many_bench.build_root(directory)
    caches = Path(tempfile.mkdtemp(prefix="dshctl-cache-bench-"))
    r = Rounds()
    r.add("floor", [sys.executable, "-c", many_bench.FLOOR_SCRIPT, str(directory / "files.txt")])
    for label, exe in dshctl.items():
        def fresh(round_: int, label: str = label) -> dict:
            home = caches / f"{label}-{round_}"
            shutil.rmtree(home, ignore_errors=True)
            return {**BASE_ENV, "XDG_CACHE_HOME": str(home)}

        def same(round_: int, label: str = label) -> dict:
            return {**BASE_ENV, "XDG_CACHE_HOME": str(caches / f"{label}-{round_}")}

        command = [exe, "stats", "--json", str(sessions)]
        r.add(f"{label} no-cache", [*command, "--no-cache"])
        r.add(f"{label} cold", command, fresh)
        r.add(f"{label} warm", command, same)
    try:
        r.run(rounds)
    finally:
        shutil.rmtree(caches, ignore_errors=True)
    print(f"\n4-5. stats --json ROOT, {facts['sessions']:,} sessions ({facts['logical_bytes'] / 1e6:.0f} MB of JSON), default jobs, "
          f"{rounds} rounds; {len(os.sched_getaffinity(0))} cores")
    print(f"     floor (one process) {r.median('floor'):.2f} s")
    for label in dshctl:
        outputs = {r.output(f"{label} {kind}") for kind in ("no-cache", "cold", "warm")}
        assert len(outputs) == 1, f"{label}: the cache changed the document"
        uncached = r.ratio(f"{label} no-cache", "floor")
        cold = r.ratio(f"{label} cold", "floor")
        warm = r.ratio(f"{label} warm", f"{label} cold")
        print(f"     {label:>10}: --no-cache {r.median(f'{label} no-cache'):.2f} s, {uncached:.2f}× floor [≤ 1.0×: {verdict(uncached, 1.0)}], "
              f"CPU {r.median(f'{label} no-cache', 'cpu'):.2f} s, peak RSS {r.peak(f'{label} no-cache') / 1e6:.0f} MB")
        print(f"     {'':>10}  cache cold (empty, written) {r.median(f'{label} cold'):.2f} s, {cold:.2f}× floor; "
              f"warm {r.median(f'{label} warm') * 1000:.0f} ms, {warm * 100:.1f} % of the cold run [≤ 10 %: {verdict(warm, 0.10)}]")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=15, help="rounds for the benchmark log (rows 1-2)")
    parser.add_argument("--large-rounds", type=int, default=3)
    parser.add_argument("--root-rounds", type=int, default=5)
    parser.add_argument("--size-gb", type=float, default=1.0)
    parser.add_argument("--skip-large", action="store_true")
    parser.add_argument("--skip-root", action="store_true")
    parser.add_argument("--build", action="append", default=[], metavar="LABEL=DSHCTL", help="a dshctl executable to measure (repeatable)")
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "dshctl-stats-bench"))
    parser.add_argument("--root-dir", default=os.path.join(tempfile.gettempdir(), "dshctl-many-bench"))
    args = parser.parse_args()
    dshctl = builds(args.build)
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPU(s), load {os.getloadavg()[0]:.1f}; builds: "
          + ", ".join(f"{label} ({path})" for label, path in dshctl.items()))
    directory = Path(args.dir)
    bench_log(directory, dshctl, args.rounds)
    if not args.skip_large:
        large_log(directory, dshctl, args.large_rounds, args.size_gb)
    if not args.skip_root:
        root(Path(args.root_dir), dshctl, args.root_rounds)
    print(f"\n(load average at the end: {os.getloadavg()[0]:.1f})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
