"""One declaration per option (dshctl.options): the command line is built from the options types, the
shared options and rules are written once, and the ``--since``/``--until`` window has one rule.

How "declared once" is checked:

* every typer command's options are exactly its options type's fields — same order, flags, default and
  help — so the command line cannot hold an option the type does not declare, or spell one otherwise;
* a field is named after its long option, so the name is not a second spelling;
* a shared option (``--jobs``, ``--since`` …) is the one declaration wherever it appears (a command may
  only reword its help), and each shared rule refuses with one message in every command;
* no dshctl module outside dshctl/options/ holds a flag as a string of its own (``"--jobs"``, as a
  typer declaration or a hand-made list of flags would), so no option is declared or listed twice.
"""

from __future__ import annotations

import ast
import json
import keyword
import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from dshctl import options as options_module
from dshctl.cli import app
from dshctl.errors import UsageError
from dshctl.options import CatOptions, ExportOptions, GrepOptions, HelpOptions, ImagesOptions, LsOptions, Options, PricesOptions, ReplayOptions, SqlOptions, StatsOptions, ValidateOptions
from dshctl.options import base
from dshctl.options.window import Window

from conftest import REPO as ROOT, sample

TOUR = sample("tour.session.v4.jsonl")

COMMANDS = {
    "cat": CatOptions,
    "export": ExportOptions,
    "grep": GrepOptions,
    "help": HelpOptions,
    "images": ImagesOptions,
    "ls": LsOptions,
    "prices": PricesOptions,
    "replay": ReplayOptions,
    "sql": SqlOptions,
    "stats": StatsOptions,
    "validate": ValidateOptions,
}
READING = {name: kind for name, kind in COMMANDS.items() if name != "help"}
"""Every command but ``help`` (which only describes the others)."""
SHARED = {name: getattr(base, name) for name in dir(base) if isinstance(getattr(base, name), base.Option)}


def _click_commands() -> dict:
    return typer.main.get_command(app).commands


def test_every_command_has_its_options_type():
    assert set(_click_commands()) == set(COMMANDS)
    assert set(options_module.__all__) >= {kind.__name__ for kind in COMMANDS.values()}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_command_line_is_the_options_type(command):
    kind = COMMANDS[command]
    click_options = [param for param in _click_commands()[command].params if param.param_type_name == "option"]
    assert [param.name for param in click_options] == list(kind.fields)
    for param in click_options:
        declared = kind.fields[param.name]
        assert tuple(param.opts + param.secondary_opts) == declared.flags, param.name
        assert param.help == declared.help, param.name
        assert param.multiple == declared.repeatable, param.name
        if declared.choices is not None:
            assert list(param.type.choices) == [str(choice) for choice in declared.choices], param.name
            shown = None if param.default is None else param.default.value  # None: an optional choice not given
            assert shown == (None if declared.default is None else str(declared.default)), param.name
        elif not declared.repeatable:
            assert param.default == declared.default, param.name


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_fields_are_named_after_their_long_option(command):
    for name, declared in COMMANDS[command].fields.items():
        spelled = declared.long.removeprefix("--").replace("-", "_")
        assert name == (spelled + "_" if keyword.iskeyword(spelled) else spelled), (command, name, declared.long)


@pytest.mark.parametrize("shared", sorted(SHARED))
def test_a_shared_option_is_one_declaration(shared):
    declared = SHARED[shared]
    users = [(kind, name) for kind in COMMANDS.values() for name, field in kind.fields.items() if field.flags == declared.flags]
    for kind, name in users:
        field = kind.fields[name]
        assert (field.default, field.choices, field.follows, field.metavar) == (
            declared.default, declared.choices, declared.follows, declared.metavar
        ), (kind.__name__, name)


def test_shared_options_are_shared():
    """The options the issue found re-declared 6 to 8 times: one declaration each."""
    for shared, commands in {
        "NO_COLOR": READING,
        "COLOR": READING,
        "QUIET": READING,
        "PLAIN": ["images", "ls", "prices", "sql", "stats"],
        "TSV": ["images", "ls", "prices", "sql", "stats"],
        "LATEST": ["cat", "grep", "images", "replay", "stats", "validate"],
        "PROJECT": ["cat", "images", "replay"],
        "PROJECT_FILTER": ["grep", "stats", "validate"],
        "SINCE": ["grep", "ls", "stats"],
        "UNTIL": ["grep", "ls", "stats"],
        "JOBS": ["grep", "stats", "validate"],
    }.items():
        declared = SHARED[shared]
        for command in commands:
            field = COMMANDS[command].fields[declared.long.removeprefix("--").replace("-", "_")]
            assert field is declared, (shared, command)


def _string_constants(tree) -> set[str]:
    return {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}


def test_no_flag_is_spelled_outside_the_options_package():
    flags = {flag for kind in COMMANDS.values() for field in kind.fields.values() for flag in field.flags}
    found = []
    for path in sorted((ROOT / "dshctl").rglob("*.py")):
        if "options" in path.relative_to(ROOT / "dshctl").parts:
            continue
        for literal in _string_constants(ast.parse(path.read_text(encoding="utf-8"))) & flags:
            found.append(f"{path.relative_to(ROOT)}: {literal!r}")
    assert not found, "flags spelled outside dshctl/options: " + ", ".join(found)


# --------------------------------------------------------------------------- the shared rules


def _having(*fields: str) -> list[type[Options]]:
    return [kind for kind in COMMANDS.values() if set(fields) <= set(kind.fields)]


SHARED_RULES = [
    (("json", "ndjson"), dict(json=True, ndjson=True), "--json and --ndjson are mutually exclusive"),
    (("plain", "tsv"), dict(plain=True, tsv=True), "--plain and --tsv are mutually exclusive"),
    (("plain", "json"), dict(plain=True, json=True), "--plain shapes a table; --json prints no table: choose one"),
    (("follow", "plain"), dict(follow=True, plain=True), "--plain does not apply to --follow, which watches one log"),
    (("jobs",), dict(jobs=0), "-j/--jobs must be at least 1"),
    (("strict", "salvage"), dict(strict=True, salvage=True), "--strict refuses damage that --salvage reads past: choose one"),
    (("follow", "salvage"), dict(follow=True, salvage=True), "--salvage reads past damage in a finished log; it does not apply to --follow"),
    (("latest", "project"), dict(project="."), "--project only applies with --latest"),
    (("follow", "since"), dict(follow=True, since="7d"), "--since does not apply to --follow, which watches one log"),
    (("since",), dict(since="2027-01-02", until="2027-01-01"), "--until 2027-01-01 is not after --since 2027-01-02: no session can be in between"),
]


@pytest.mark.parametrize("fields, given, message", SHARED_RULES, ids=[rule[2][:40] for rule in SHARED_RULES])
def test_a_shared_rule_has_one_wording_everywhere(fields, given, message):
    kinds = _having(*fields)
    assert kinds, fields
    for kind in kinds:
        if kind is ValidateOptions and "strict" in fields:
            continue  # validate's --strict makes warnings fail; it has no --salvage to refuse
        if kind.project_filters and "project" in fields:
            kind(**given)  # a command that reads many sessions filters them by --project
            continue
        with pytest.raises(UsageError) as refused:
            kind(**given)
        assert refused.value.message == message, kind.__name__


def test_the_cli_reports_a_refusal_as_every_error():
    result = CliRunner().invoke(app, ["validate", "-j", "0", str(TOUR)])
    assert result.exit_code == 2 and result.stderr == "dshctl: error: -j/--jobs must be at least 1\n"


def test_choices_are_checked_for_programs_too():
    with pytest.raises(UsageError, match="--by must be one of session, turn, step"):
        StatsOptions(by="hour")
    with pytest.raises(UsageError, match="--cast-version must be one of 2, 3"):
        ReplayOptions(cast_version=4)
    with pytest.raises(UsageError, match="--sort must be one of time, created, size, title"):
        LsOptions(sort="name")


def test_the_by_choices_are_the_records_and_the_rollups():
    from dshctl.options.stats import BY, RECORDS
    from dshctl.stats.rollup import ROLLUPS

    assert BY == RECORDS + ROLLUPS


def test_validate_formats_are_the_renderings():
    from dshctl.options.validate import FORMATS
    from dshctl.validate import formats

    assert formats.FORMATS is FORMATS
    for name in FORMATS:
        assert formats.render([], name, False, 0.0) is not None


def test_in_help_lists_the_kinds():
    from dshctl.said import DEFAULT_KINDS, KINDS

    help_text = GrepOptions.fields["in_"].help
    assert ": " + ",".join(DEFAULT_KINDS) + " (the default: all of these)" in help_text
    assert all(kind in help_text for kind in KINDS)


# --------------------------------------------------------------------------- the options object


def test_options_are_frozen_values():
    options = GrepOptions(context=2, in_="user,title")
    with pytest.raises(AttributeError, match="frozen"):
        options.context = 3  # type: ignore[misc]
    assert options == GrepOptions(context=2, in_=("user,title",)) and hash(options) == hash(GrepOptions(context=2, in_=["user,title"]))
    assert options.kinds == ("user", "title")
    assert repr(options) == "GrepOptions(in_=('user,title',), context=2)"
    assert options.replace(context=0) == GrepOptions(in_="user,title")
    with pytest.raises(UsageError, match="-C/--context must be at least 0"):
        options.replace(context=-1)  # a copy is checked as a new object is
    with pytest.raises(TypeError, match="has no option fixed"):
        GrepOptions(fixed=True)


def test_derived_values_are_computed_once():
    replay = ReplayOptions(from_="1:02.5", turns="2-3", no_tools=True, export="x.cast")
    assert replay.from_ms == 62_500 and replay.filters.keeps_turn(2) and not replay.filters.keeps_turn(4)
    assert replay.export == Path("x.cast")  # a program may give a str for a path option
    stats = StatsOptions(since=1_790_000_000_000, tz="UTC", by="day")
    assert stats.window == Window(1_790_000_000_000, None) and str(stats.zone) == "UTC" and stats.rollup
    assert ValidateOptions(ignore=["grammar,codec/read", "stream"]).ignored == {"grammar", "codec/read", "stream"}


def test_options_pickle_for_worker_processes():
    import pickle

    options = StatsOptions(by="turn", since="7d")
    again = pickle.loads(pickle.dumps(options))
    assert again == options and again.window == options.window


# --------------------------------------------------------------------------- the window rule


@pytest.mark.parametrize(
    "created, inside",
    [
        (1_790_000_000_000, True),
        (0, False),  # dsh's fixtures carry createdAt: 0 — no creation time
        (-5, False),
        (None, False),
        (True, False),  # a boolean is not a time
        ("1790000000000", False),
        (1_789_999_999_999, False),  # before --since
        (1_800_000_000_000, False),  # at --until: outside
    ],
)
def test_the_window_holds_a_positive_integer_created_inside_it(created, inside):
    assert Window(1_790_000_000_000, 1_800_000_000_000).holds(created) is inside
    assert Window(None, 1_800_000_000_000).holds(created) is (inside or created == 1_789_999_999_999)


def test_no_window_holds_everything():
    for created in (None, 0, True, -5, 1):
        assert Window().holds(created)


@pytest.fixture
def odd_created(tmp_path):
    """A sessions root whose headers carry every kind of createdAt."""
    header, body = TOUR.read_text().split("\n", 1)
    for name, value in [("ok", 1_790_000_000_000), ("zero", 0), ("neg", -5), ("missing", None), ("bool", True)]:
        folder = tmp_path / "--home-x--" / f"session-{name}"
        folder.mkdir(parents=True)
        fields = dict(json.loads(header), id=f"session-{name}")
        if value is None:
            del fields["createdAt"]
        else:
            fields["createdAt"] = value
        (folder / "session.v4.jsonl").write_text(json.dumps(fields) + "\n" + body)
    return tmp_path


@pytest.mark.parametrize("window", [["--until", "2100-01-01"], ["--since", "1970-01-02"], ["--since", "2026-01-01", "--until", "2027-01-01"]])
def test_stats_grep_and_ls_keep_the_same_sessions(odd_created, window):
    runner = CliRunner()
    root = str(odd_created)
    ls = runner.invoke(app, ["ls", "--ndjson", *window, root])
    stats = runner.invoke(app, ["stats", "--ndjson", "-j", "1", *window, root])
    grep = runner.invoke(app, ["grep", "-l", "--ndjson", "-j", "1", *window, "Node", root])
    grep_fixed = runner.invoke(app, ["grep", "-F", "-l", "--ndjson", "-j", "1", *window, "Node", root])
    kept = {
        name: sorted(json.loads(line)["id"] for line in result.stdout.splitlines())
        for name, result in (("ls", ls), ("stats", stats), ("grep", grep), ("grep -F", grep_fixed))
    }
    assert kept["ls"] == ["session-ok"], kept
    assert kept["stats"] == kept["grep"] == kept["grep -F"] == kept["ls"], kept


def test_since_until_parse_errors_are_one_wording():
    for kind in _having("since"):
        with pytest.raises(UsageError, match=re.escape("--since: cannot read 'soon' as a date")):
            kind(since="soon")
        with pytest.raises(UsageError, match="--until: True is not a time"):
            kind(until=True)


def test_help_reads_the_declarations_without_heavy_modules():
    """``dshctl --help`` builds every command from the options types: they import nothing heavy, and
    neither does the help itself (the commands' modules load when a command runs)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import dshctl.options\n"
        "light = sorted(m for m in ('msgspec', 'rich', 'zstandard', 'typer') if m in sys.modules)\n"
        "sys.argv = ['dshctl', 'stats', '--help']\n"
        "from dshctl.entry import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in ('msgspec', 'rich', 'zstandard', 'dshctl.stats', 'dshctl.replay') if m in sys.modules)\n"
        "sys.stderr.write(repr((light, heavy)))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.stderr == "([], [])", result.stderr
