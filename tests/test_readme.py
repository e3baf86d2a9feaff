"""The README keeps its promises: short, a quick start of exactly two commands (the second what .ci/run
runs), and examples that run as printed.

The examples are run by bash in a copy of the samples, one script with ``set -eo pipefail`` so that a
command failing anywhere in a pipe fails the test; ``/tmp/`` paths go to the test's own directory.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import REPO as ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")


def _sh_blocks(section: str) -> list[str]:
    """The lines of the ``sh`` code blocks of a README section (``## Quick start``), comments dropped."""
    body = README.split(f"\n## {section}\n", 1)[1].split("\n## ", 1)[0]
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", body, flags=re.S):
        lines += [line for line in block.splitlines() if line.strip()]
    return lines


def test_the_readme_is_read_in_five_minutes():
    assert len(README.splitlines()) <= 250


def test_the_quick_start_is_two_commands_the_second_what_ci_runs():
    first, second = _sh_blocks("Quick start")  # exactly two
    assert "pip install" in first and re.search(r"\.venv/bin/dshctl \w+ samples/\S+", first)
    sample = re.search(r"\.venv/bin/dshctl \w+ (samples/\S+)", first).group(1)
    assert (ROOT / sample).is_file(), sample
    assert "'.[test]'" in second and "pytest" in second
    awk = (ROOT / ".ci" / "run").read_text(encoding="utf-8").split("command=$(awk '", 1)[1].split("' README.md)", 1)[0]
    extracted = subprocess.run(["awk", awk, "README.md"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert extracted.strip() == second


def test_every_example_runs_as_printed(tmp_path):
    lines = _sh_blocks("Examples")
    assert lines[0].startswith(". .venv/bin/activate") and lines[1].startswith("export DSH_HOME=$PWD/samples")
    commands = [line for line in lines[2:] if line.startswith("dshctl ")]
    assert len(commands) == len(lines) - 2 >= 10
    if shutil.which("jq") is None:
        commands = [command for command in commands if "| jq" not in command]
    try:
        import duckdb  # noqa: F401
    except ImportError:  # the export extra is not installed
        commands = [command for command in commands if not command.startswith(("dshctl export", "dshctl sql"))]
    shutil.copytree(ROOT / "samples", tmp_path / "samples")
    (tmp_path / "out").mkdir()
    script = "set -eo pipefail\n" + "\n".join(command.replace("/tmp/", f"{tmp_path}/out/") for command in commands) + "\n"
    env = {
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}/usr/bin:/bin",
        "HOME": str(tmp_path / "home"),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "DSH_HOME": str(tmp_path / "samples"),
        "LANG": "C.UTF-8",
    }
    done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert (tmp_path / "tour.html").stat().st_size > 0
    assert '"version": "2.1.0"' in (tmp_path / "dshctl.sarif").read_text(encoding="utf-8")
    assert "Node 14" in done.stdout


def test_help_lists_the_commands_in_the_readme_s_order():
    """``dshctl --help`` lists the commands as the README's table does (what a session holds, its figures
    and prices, finding, replaying, checking, exporting), ``help`` last — not in the order they were added."""
    from conftest import invoke

    table = re.findall(r"^\| `dshctl ([a-z]+)[ `]", README, re.M)
    shown = invoke("--help").stdout.split("Commands:", 1)[1]
    listed = [word for word in re.findall(r"^\W*([a-z]+)\s", shown, re.M) if word in table + ["help"]]
    assert len(table) >= 10 and listed == table + ["help"], (listed, table)
