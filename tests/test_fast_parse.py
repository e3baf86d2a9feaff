"""The console script's own parse of the common command lines (``dshctl.commands.parse``, no typer at
start-up) gives exactly what the typer command line gives: the same command, positional arguments and
option values, or it leaves the command line to typer (None), which then says what typer says.

Checked by examples and by Hypothesis over command lines made of every command's flags, values that
are right, wrong or odd, and positional words; and end to end: the console script's output and status
equal the typer command line's for the same arguments.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
import typer
from hypothesis import given, settings
from hypothesis import strategies as st

from dshctl import commands
from dshctl.cli import app
from dshctl.commands import BY_NAME, COMMANDS, parse
from dshctl.options.base import COLOR, NO_COLOR

from conftest import REPO, sample

LOG = str(sample("tour.session.v4.jsonl.zstd"))
GROUP = typer.main.get_command(app)


def typer_parse(args: list[str], monkeypatch) -> tuple | None:
    """What the typer command line hands to ``commands.start`` for ``args``; None when it never gets
    there (help, a usage error)."""
    seen = []

    def start(command, positional, values):
        seen.append((command.name, positional, values))
        return 0

    monkeypatch.setattr(commands, "start", start)
    with open(os.devnull, "w") as devnull:
        out, err = sys.stdout, sys.stderr
        sys.stdout = sys.stderr = devnull
        try:
            GROUP.main(args=list(args), prog_name="dshctl", standalone_mode=False)
        except SystemExit:
            pass
        finally:
            sys.stdout, sys.stderr = out, err
    return seen[0] if seen else None


def fast(args: list[str]) -> tuple | None:
    found = parse(list(args))
    return None if found is None else (found[0].name, found[1], found[2])


EXAMPLES = [
    ["stats", "--json", LOG],
    ["stats", LOG, "--json"],
    ["stats", "--by", "turn", "--json", LOG, LOG],
    ["stats", "--by=step", "--ndjson", "-j", "2", LOG],
    ["stats", "--jobs=3", "--top", "5", "--sort", "cost", "--reverse", LOG],
    ["stats", "--since", "7d", "--until", "2027-01-01", "--tz", "UTC", "--project", ".", "--latest"],
    ["stats", "--prices", "p.toml", "--no-cost", "--no-cache", "--quiet", "--verbose", "-v", "--strict", LOG],
    ["stats", "-f", "--ndjson", "--by", "turn", "-"],
    ["stats"],
    ["--no-color", "stats", LOG],
    ["--color", "always", "stats", LOG],
    ["--color=never", "stats", "--json", LOG],
    ["stats", "--color", "always", LOG],
    ["stats", "--no-color", LOG],
    ["cat", LOG],
    ["cat", "--type", "turn/*", "--type", "step/*", LOG],
    ["cat"],
    ["ls", "root", "--json"],
    ["grep", "-F", "-i", "Node", LOG, LOG],
    ["grep", "pattern"],
    ["grep", "-e", "a", "-e", "b", LOG],
    ["validate", "--format", "sarif", LOG],
    ["validate", LOG, LOG],
    ["images", LOG],
    ["replay", "--speed", "2.5", LOG],
    ["export", "--format", "otlp", LOG],
    ["sql", "select 1", LOG],
    ["prices", LOG],
    ["prices"],
]


@pytest.mark.parametrize("args", EXAMPLES, ids=[" ".join(a).replace(LOG, "LOG") for a in EXAMPLES])
def test_the_fast_parse_is_the_typer_parse(args, monkeypatch):
    found = fast(args)
    assert found == typer_parse(args, monkeypatch)


LEFT_TO_TYPER = [
    [],
    ["--version"],
    ["--help"],
    ["stats", "--help"],
    ["stats", "-h"],
    ["help", "stats"],
    ["stats", "--jsn", LOG],
    ["stats", "--by", "sesion", LOG],
    ["stats", "--by", "sesion"],
    ["stats", "-j", "x", LOG],
    ["stats", "-j4", LOG],
    ["stats", "-vf", LOG],
    ["stats", "--json=1", LOG],
    ["stats", "--", LOG],
    ["stats", "--top", "-1", LOG],
    ["stats", "--top"],
    ["--json", "stats", LOG],
    ["stas", LOG],
    ["cat", LOG, LOG],
    ["sql"],
    ["stats", "--color", "always", "--no-color", LOG],
    ["--no-color", "stats", "--no-color", LOG],
    ["--install-completion"],
    ["images", "--out", "dir", LOG],
    ["replay", "--export", "x.cast", LOG],
]


@pytest.mark.parametrize("args", LEFT_TO_TYPER, ids=[" ".join(a).replace(LOG, "LOG") or "(none)" for a in LEFT_TO_TYPER])
def test_what_the_fast_parse_leaves_to_typer(args):
    assert parse(list(args)) is None


def test_shell_completion_is_left_to_typer(monkeypatch):
    monkeypatch.setenv("_DSHCTL_COMPLETE", "bash_complete")
    assert parse(["stats", LOG]) is None


def _words(command) -> st.SearchStrategy:
    options = command.options.fields.values()
    flags = [flag for declared in options for flag in declared.flags] + ["--help", "-h", "--", "--nope", "-x"]
    values = sorted({str(choice) for declared in options for choice in (declared.choices or ())})
    values += ["4", "0", "-1", "x", "", "2.5", "7d", "a=b", "-", "nan", " 3", "٣", LOG]
    flag = st.sampled_from(flags)
    glued = st.tuples(st.sampled_from([f for f in flags if f.startswith("--")]), st.sampled_from(values)).map("=".join)
    return st.one_of(flag, flag, glued, st.sampled_from(values), st.sampled_from(["log", LOG, "-"]))


@st.composite
def command_lines(draw) -> list[str]:
    command = draw(st.sampled_from([c for c in COMMANDS if c.body is not None]))
    group_flags = [*COLOR.flags, *NO_COLOR.flags, "--version"]
    before = draw(st.lists(st.one_of(st.sampled_from(group_flags), st.sampled_from([*COLOR.choices, "x"])), max_size=3))
    after = draw(st.lists(_words(command), max_size=8))
    return [*before, command.name, *after]


@st.composite
def well_formed_command_lines(draw) -> list[str]:
    """Mostly what typer takes: some of a command's options, each with a value of its kind, and words."""
    from dshctl.commands import annotation

    command = draw(st.sampled_from([c for c in COMMANDS if c.body is not None]))
    pieces: list[list[str]] = []
    for field in draw(st.lists(st.sampled_from(list(command.options.fields)), max_size=5)):
        declared = command.options.fields[field]
        flag = draw(st.sampled_from(declared.flags))
        kind = annotation(command.options, field)
        if kind == "bool":
            pieces.append([flag])
            continue
        if declared.choices is not None:
            value = draw(st.sampled_from([str(choice) for choice in declared.choices]))
        elif "int" in kind or "float" in kind:
            value = str(draw(st.integers(-2, 12) if "int" in kind else st.floats(0.1, 8, allow_nan=False)))
        else:
            value = draw(st.sampled_from(["7d", "x", "", ".", "UTC", "a b"]))
        pieces.append([f"{flag}={value}"] if flag.startswith("--") and draw(st.booleans()) else [flag, value])
    pieces += [[word] for word in draw(st.lists(st.sampled_from(["log", LOG, "-"]), max_size=3))]
    order = draw(st.permutations(pieces))
    colour = draw(st.sampled_from([[], ["--no-color"], ["--color", "always"]]))
    return [*colour, command.name, *(word for piece in order for word in piece)]


@settings(max_examples=400, deadline=None)
@given(args=st.one_of(command_lines(), well_formed_command_lines(), well_formed_command_lines()))
def test_whatever_the_fast_parse_reads_typer_reads_alike(args):
    found = fast(args)
    if found is None:
        return
    with pytest.MonkeyPatch.context() as monkeypatch:
        assert found == typer_parse(args, monkeypatch), args


@pytest.mark.parametrize(
    "args",
    [["--version"], ["stats", "--json", LOG], ["stats", "--by", "turn", "--plain", LOG], ["stats", "--json", "--ndjson", LOG],
     ["stats", "--top", "0", LOG], ["cat", "missing.jsonl"], ["--no-color", "validate", LOG]],
    ids=lambda args: " ".join(args).replace(LOG, "LOG"),
)
def test_the_console_script_answers_as_the_typer_command_line(args):
    """The same output, messages and status through the fast parse and through typer (``python -m
    dshctl.cli``, which always parses with typer)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", "COLUMNS": "100"}
    script = subprocess.run([sys.executable, "-m", "dshctl", *args], capture_output=True, env=env, cwd=REPO, timeout=120)
    typer_run = subprocess.run([sys.executable, "-m", "dshctl.cli", *args], capture_output=True, env=env, cwd=REPO, timeout=120)
    assert (script.returncode, script.stdout, script.stderr) == (typer_run.returncode, typer_run.stdout, typer_run.stderr)


def test_the_common_command_lines_start_without_typer():
    """``dshctl --version`` and ``dshctl stats --json LOG`` import neither typer nor click (nor rich, for
    a JSON document)."""
    code = (
        "import sys\n"
        "from dshctl.entry import main\n"
        "sys.argv = ['dshctl', *sys.argv[1:]]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write(repr(sorted(m for m in ('typer', 'click', 'rich', 'tomllib') if m in sys.modules)))\n"
    )
    for args in (["--version"], ["stats", "--json", LOG]):
        result = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=REPO, timeout=60)
        assert result.stderr.endswith("[]"), (args, result.stderr)


def test_every_command_but_help_is_read_by_the_fast_parse():
    assert [command.name for command in COMMANDS if command.body is None] == ["help"]
    assert set(BY_NAME) == set(GROUP.commands)


def _golden_command_lines() -> list[list[str]]:
    """Every command line of the golden harness (tests/golden.py), placeholders filled."""
    import golden

    fill = {"{log}": LOG, "{out}/x.md": "x.md", "{out}/x.ndjson": "x.ndjson", "{out}/x.cast": "x.cast", "{root}": "root"}
    lines = [argv for _, argv in (*golden.PER_LOG, *golden.PER_ROOT)]
    return [[fill.get(word, word) for word in argv] for argv in lines]


@pytest.mark.parametrize("args", _golden_command_lines(), ids=lambda args: " ".join(args).replace(LOG, "LOG"))
def test_the_golden_command_lines_parse_alike(args, monkeypatch):
    """The golden harness runs typer's command line in process; the console script parses these same
    lines itself, into the same values (or leaves them to typer)."""
    found = fast(args)
    if found is not None:
        assert found == typer_parse(args, monkeypatch)
    for variant in (["--no-color", *args], [*args, "--color", "never"]):
        found = fast(variant)
        assert found is None or found == typer_parse(variant, monkeypatch)
