#!/usr/bin/env python3
"""The compiled build, probed: the same typed source of dshctl's hot modules compiled with mypyc into a
scratch copy of the package, measured beside the pure-Python package by instruction counts (callgrind:
noise-free on a shared machine) and made runnable as a ``dshctl`` executable for ``targets.py``.

What it does:

1. copies the ``dshctl`` package of this checkout to ``--dir`` and runs ``mypyc`` on ``--modules``
   (default: the shipped set, ``setup.py``'s ``COMPILED``);
   mypyc needs ``pip install mypy``;
2. writes ``--dir/bin/dshctl``, the console script over that copy (its compiled modules shadow the
   ``.py`` files beside them);
3. counts the instructions of one in-process ``log_stats`` of dsh's benchmark log (``stats_bench``),
   imports excluded (three runs minus one, halved), under ``valgrind --tool=callgrind``, for the pure
   package and the compiled copy, and the floor's (zstandard + msgspec) for scale.

Why these modules: they are ``setup.py``'s ``COMPILED`` (the zstd frames, the line reader, the v0 decoder
and the stats fold). Give ``--modules`` to probe others: the stream core and the reader type-check and
their msgspec Structs live in pure modules, but compiled they measured no gain and mypyc 2.4 broke them
(see ``setup.py``).

Usage::

    python benchmarks/compiled_probe.py [--dir /tmp/dshctl-compiled] [--modules dshctl/stats/fold.py ...] [--skip-build] [--skip-count]
    python benchmarks/targets.py --build pure=.venv/bin/dshctl --build compiled=/tmp/dshctl-compiled/bin/dshctl
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stats_bench import write_bench_v0  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
MODULES = ["dshctl/source/zstd.py", "dshctl/source/lines.py", "dshctl/generations/v0.py", "dshctl/stats/fold.py"]

WORK = r"""
import sys
from dshctl.options import StatsOptions
from dshctl.output import to_json
from dshctl.stats import log_stats
for _ in range(int(sys.argv[2])):
    to_json(log_stats(sys.argv[1], StatsOptions(no_cost=True)).session)
"""

FLOOR = r"""
import sys
import msgspec, zstandard
decode = msgspec.json.Decoder().decode
for _ in range(int(sys.argv[2])):
    with open(sys.argv[1], "rb") as f:
        reader = zstandard.ZstdDecompressor().stream_reader(f, read_across_frames=True)
        rest = b""
        while True:
            block = reader.read(1 << 20)
            if not block:
                break
            lines = (rest + block).split(b"\n")
            rest = lines.pop()
            for line in lines:
                decode(line)
"""


def build(directory: Path, modules: list[str]) -> None:
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    shutil.copytree(REPO / "dshctl", directory / "dshctl", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
    started = time.perf_counter()
    before = os.times()
    result = subprocess.run([sys.executable, "-m", "mypyc", *modules], cwd=directory, capture_output=True, text=True)
    after = os.times()
    if result.returncode != 0:
        raise SystemExit(f"mypyc failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    print(f"mypyc {', '.join(modules)}: {time.perf_counter() - started:.0f} s wall, {cpu:.0f} s CPU")
    script = directory / "bin" / "dshctl"
    script.parent.mkdir()
    script.write_text(
        f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(directory)!r})\n"
        "from dshctl.entry import main\nsys.exit(main())\n"
    )
    script.chmod(0o755)
    shown = subprocess.run([str(script), "--version"], capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    compiled = subprocess.run(
        [sys.executable, "-c", "import importlib; print(importlib.import_module('dshctl.stats.fold').__file__)"],
        capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(directory)}, cwd=tempfile.gettempdir(),
    ).stdout.strip()
    print(f"{script}: runs {compiled}")


def instructions(script: str, log: Path, runs: int, pythonpath: str | None) -> int:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "callgrind.out"
        result = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", sys.executable, "-c", script, str(log), str(runs)],
            capture_output=True, text=True, env=env, cwd=scratch,  # not this checkout: '' leads sys.path
        )
    found = re.search(r"Collected : (\d+)", result.stderr)
    if result.returncode != 0 or found is None:
        raise SystemExit(f"callgrind failed: {result.stderr[-2000:]}")
    return int(found.group(1))


def per_run(script: str, log: Path, pythonpath: str | None) -> int:
    return (instructions(script, log, 3, pythonpath) - instructions(script, log, 1, pythonpath)) // 2


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", default=os.path.join(tempfile.gettempdir(), "dshctl-compiled"))
    parser.add_argument("--modules", nargs="+", default=MODULES)
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--skip-count", action="store_true")
    args = parser.parse_args()
    directory = Path(args.dir)
    if not args.skip_build:
        build(directory, args.modules)
    if args.skip_count:
        return 0
    log = Path(tempfile.gettempdir()) / "dshctl-stats-bench" / "--bench--" / "bench-session" / "session.jsonl.zstd"
    log.parent.mkdir(parents=True, exist_ok=True)
    write_bench_v0(log)
    floor = per_run(FLOOR, log, None)
    pure = per_run(WORK, log, str(REPO))
    compiled = per_run(WORK, log, str(directory))
    print("instructions per stats of dsh's benchmark log, imports excluded (callgrind):")
    print(f"   floor (zstandard + msgspec)   {floor / 1e6:8.1f} M")
    print(f"   pure Python                   {pure / 1e6:8.1f} M  {pure / floor:.2f}× floor")
    print(f"   compiled ({len(args.modules)} modules)         {compiled / 1e6:8.1f} M  {compiled / floor:.2f}× floor, "
          f"{(compiled - pure) / pure * 100:+.1f} % of pure")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
