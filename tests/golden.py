"""Golden harness: every command and output format over the samples, the validate mutants and the corpus.

``python tests/golden.py OUTDIR`` runs the matrix in process (typer's CliRunner, a fixed environment:
UTC, no colour, 200 columns) and writes one file per case: the status, stdout, stderr and any file an
export wrote. ``python tests/golden.py --compare BASE NEW`` lists every case whose output differs (and
the cases only one side has), exit 1 if any. A restructuring run shows zero differences; a change of
behaviour shows exactly the cases it meant to change.

``--only REGEX`` keeps the cases whose name matches (quick checks while working). ``--installed`` runs
the dshctl the interpreter has installed instead of this checkout's (the compiled build: run it with that
environment's python, e.g. ``/tmp/cvenv/bin/python tests/golden.py --installed OUTDIR``).
"""

from __future__ import annotations

import argparse
import difflib
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from conftest import CORPUS, REPO as ROOT, SAMPLES

ENV = {"NO_COLOR": "1", "TZ": "UTC", "COLUMNS": "200", "LINES": "50", "DSH_HOME": "/nonexistent-dsh-home"}

PER_LOG: list[tuple[str, list[str]]] = [
    ("cat", ["cat", "{log}"]),
    ("cat-expand", ["cat", "--expand", "{log}"]),
    ("cat-salvage", ["cat", "--salvage", "{log}"]),
    ("stats", ["stats", "{log}"]),
    ("stats-json", ["stats", "--json", "{log}"]),
    ("stats-turn-json", ["stats", "--by", "turn", "--json", "{log}"]),
    ("stats-step-ndjson", ["stats", "--by", "step", "--ndjson", "{log}"]),
    ("stats-tool-json", ["stats", "--by", "tool", "--json", "{log}"]),
    ("stats-turn", ["stats", "--by", "turn", "{log}"]),
    ("validate", ["validate", "{log}"]),
    ("validate-json", ["validate", "--format", "json", "{log}"]),
    ("validate-strict-sarif", ["validate", "--strict", "--format", "sarif", "{log}"]),
    ("images-json", ["images", "--json", "{log}"]),
    ("images-tsv", ["images", "--tsv", "{log}"]),
    ("stats-step-tsv", ["stats", "--by", "step", "--tsv", "{log}"]),
    ("replay-instant", ["replay", "--instant", "{log}"]),
    ("replay-instant-ts", ["replay", "--instant", "--timestamps", "{log}"]),
    ("replay-md", ["replay", "{log}", "--export", "{out}/x.md"]),
    ("replay-ndjson", ["replay", "{log}", "--export", "{out}/x.ndjson"]),
    ("replay-cast", ["replay", "{log}", "--export", "{out}/x.cast"]),
    ("grep-ndjson", ["grep", "--ndjson", "-i", "e", "{log}"]),
    ("grep-text-C1", ["grep", "-C", "1", "-F", "the", "{log}"]),
]

PER_ROOT: list[tuple[str, list[str]]] = [
    ("ls-json", ["ls", "--json", "{root}"]),
    ("ls", ["ls", "{root}"]),
    ("stats-json", ["stats", "--json", "-j", "1", "{root}"]),
    ("stats", ["stats", "-j", "1", "{root}"]),
    ("stats-day-json", ["stats", "--by", "day", "--json", "-j", "1", "{root}"]),
    ("stats-model-json", ["stats", "--by", "model", "--json", "-j", "1", "{root}"]),
    ("stats-project", ["stats", "--by", "project", "-j", "1", "{root}"]),
    ("stats-tool", ["stats", "--by", "tool", "-j", "1", "{root}"]),
    ("validate-json", ["validate", "--format", "json", "-j", "1", "{root}"]),
    ("grep-json", ["grep", "--json", "-j", "1", "-i", "a", "{root}"]),
    ("grep-count", ["grep", "-c", "-j", "1", "e", "{root}"]),
    ("ls-tsv", ["ls", "--tsv", "{root}"]),
    ("stats-tsv", ["stats", "--tsv", "-j", "1", "{root}"]),
    ("stats-project-tsv", ["stats", "--by", "project", "--tsv", "-j", "1", "{root}"]),
    ("stats-tool-tsv", ["stats", "--by", "tool", "--tsv", "-j", "1", "{root}"]),
    ("prices-tsv", ["prices", "--tsv", "{root}"]),
]


def logs(mutants_dir: Path) -> list[tuple[str, Path]]:
    found = [(f"samples/{p.name}", p) for p in sorted(SAMPLES.glob("*.jsonl*"))]
    found += [(f"mutants/{p.name}", p) for p in sorted(mutants_dir.iterdir())]
    if CORPUS.is_dir():
        found += [(f"corpus/{p.relative_to(CORPUS)}", p) for p in sorted(CORPUS.rglob("*.jsonl*")) if p.is_file()]
    return found


def write_mutants(into: Path) -> None:
    sys.path.insert(0, str(ROOT / "tests"))
    import mutate

    for m in mutate.REGISTRY:
        name = re.sub(r"[^A-Za-z0-9._-]", "_", m.id) + m.suffix
        (into / name).write_bytes(m.build())


VOLATILE = [  # figures that change from run to run, not with the code
    (re.compile(r'"elapsedSeconds":\s*[0-9.e-]+'), '"elapsedSeconds":0'),
    (re.compile(r'"(start|end)TimeUtc":\s*"[^"]*"'), r'"\1TimeUtc":"-"'),
    (re.compile(r'(time|timestamp)="[^"]*"'), r'\1="-"'),
]


def normalize(text: str) -> str:
    for pattern, replacement in VOLATILE:
        text = pattern.sub(replacement, text)
    return text


def run_case(runner, app, argv: list[str], out: Path) -> str:
    result = runner.invoke(app, argv, env=ENV, catch_exceptions=True)
    parts = [f"status {result.exit_code}\n", "--- stdout\n", result.stdout, "--- stderr\n", result.stderr]
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        import traceback

        parts += ["--- exception\n", "".join(traceback.format_exception(result.exception))]
    for f in sorted(out.iterdir()) if out.is_dir() else []:
        parts += [f"--- file {f.name}\n", f.read_text(encoding="utf-8", errors="replace")]
        f.unlink()
    return "".join(parts)


def generate(outdir: Path, only: str | None, installed: bool = False) -> int:
    os.environ.update(ENV)
    if not installed:
        sys.path.insert(0, str(ROOT))
    from typer.testing import CliRunner

    import dshctl
    from dshctl.build import describe
    from dshctl.cli import app

    installed_root = str(Path(dshctl.__file__).resolve().parent.parent)  # ROOT, or an installed build's site-packages

    print(f"golden: {describe()}", file=sys.stderr)

    try:
        runner = CliRunner(mix_stderr=False)
    except TypeError:  # click 8.2 keeps stderr apart always
        runner = CliRunner()
    outdir.mkdir(parents=True, exist_ok=True)
    pattern = re.compile(only) if only else None
    count = 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        mutants_dir, exports = tmp_path / "mutants", tmp_path / "out"
        mutants_dir.mkdir()
        exports.mkdir()
        write_mutants(mutants_dir)
        cases: list[tuple[str, list[str]]] = []
        for label, log in logs(mutants_dir):
            for name, argv in PER_LOG:
                cases.append((f"{label}::{name}", [a.format(log=log, out=exports) for a in argv]))
        roots = [("samples/sessions", SAMPLES / "sessions"), ("samples/dir", SAMPLES)]
        for label, root in roots:
            for name, argv in PER_ROOT:
                cases.append((f"{label}::{name}", [a.format(root=root) for a in argv]))
        for case, argv in cases:
            if pattern and not pattern.search(case):
                continue
            text = run_case(runner, app, argv, exports).replace(str(tmp_path), "<TMP>").replace(installed_root, "<ROOT>").replace(str(ROOT), "<ROOT>")
            text = normalize(text.replace(str(CORPUS), "<CORPUS>"))
            (outdir / (re.sub(r"[^A-Za-z0-9._:-]", "_", case) + ".txt")).write_text(text, encoding="utf-8")
            count += 1
    print(f"{count} cases written to {outdir}")
    return 0


def compare(base: Path, new: Path, show: int) -> int:
    a = {p.name for p in base.iterdir()}
    b = {p.name for p in new.iterdir()}
    differing = []
    for name in sorted(a & b):
        if (base / name).read_bytes() != (new / name).read_bytes():
            differing.append(name)
    for name in sorted(a - b):
        print(f"only in base: {name}")
    for name in sorted(b - a):
        print(f"only in new: {name}")
    for name in differing[:show]:
        print(f"=== {name}")
        old_lines = (base / name).read_text(encoding="utf-8").splitlines(keepends=True)
        new_lines = (new / name).read_text(encoding="utf-8").splitlines(keepends=True)
        sys.stdout.writelines(list(difflib.unified_diff(old_lines, new_lines, n=1))[:40])
    print(f"{len(a & b)} cases compared, {len(differing)} differ, {len(a ^ b)} on one side only")
    return 1 if differing or a ^ b else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir", nargs="?", type=Path)
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BASE", "NEW"))
    parser.add_argument("--only", help="only the cases whose name matches this regex")
    parser.add_argument("--show", type=int, default=20, help="diffs to print with --compare")
    parser.add_argument("--installed", action="store_true", help="run the installed dshctl, not this checkout's")
    args = parser.parse_args()
    if args.compare:
        return compare(*args.compare, args.show)
    if args.outdir is None:
        parser.error("give OUTDIR or --compare BASE NEW")
    if args.outdir.exists():
        shutil.rmtree(args.outdir)
    return generate(args.outdir, args.only, args.installed)


if __name__ == "__main__":
    raise SystemExit(main())
