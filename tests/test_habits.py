"""The habits users bring from ripgrep, git and ccusage (issue 26): grep -A/-B/-o/-e/-v, dshctl help,
usage errors in dshctl's wording, --export -, --since by day names, stats --project, images named after
their files, --store on its own, and a test command that prints pytest's summary."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, SAMPLES, invoke as run_cli, sample

TOUR = sample("tour.session.v4.jsonl")
ROOT = sample("sessions")
STORE = sample("attachments")


def invoke(*args: str, env: dict | None = None):
    """conftest's invoke as a pipe of no width, with no sessions root unless ``env`` names one."""
    return run_cli(*args, env={"COLUMNS": None, "DSH_HOME": "/nonexistent-dsh-home", **(env or {})})


# -------------------------------------------------------------------------------------------- grep


def lines(*args: str) -> list[str]:
    result = invoke("grep", *args)
    assert result.exit_code in (0, 1), result.output
    return result.stdout.splitlines()


def test_after_and_before_context_win_over_context_on_their_side():
    both = lines("-C", "2", "Node 14", str(TOUR))
    after = lines("-A", "1", "-C", "2", "Node 14", str(TOUR))
    before = lines("-B", "0", "-A", "0", "Node 14", str(TOUR))
    assert before == lines("Node 14", str(TOUR))
    assert len(before) < len(after) < len(both) or len(after) <= len(both)
    document = json.loads(invoke("grep", "--json", "-B", "1", "-A", "0", "lacks", str(TOUR)).stdout)
    hit = document["hits"][0]
    assert hit["after"] == [] and len(hit["before"]) <= 1


def test_only_matching_prints_each_match_on_its_own_line():
    assert lines("-o", r"red \w+", str(TOUR)) == ["7c1e5a2d:1:1:reasoning:red test", "7c1e5a2d:-:-:title:red CI"]
    assert all(line.endswith(":red") for line in lines("-o", "red", str(TOUR)))


def test_n_numbers_each_line_in_its_block_as_ripgrep_numbers_lines():
    """``-n`` (rejected before: "no such option"): the line's number in its block after the kind, ``:``
    on a matching line and ``-`` on context, as ripgrep marks them; off by default."""
    assert lines("-B", "1", "-F", "Unexpected token", str(TOUR)) == [
        "7c1e5a2d:2:1:tool-result-4:   settings.retries ??= 3;",
        "7c1e5a2d:2:1:tool-result:5: SyntaxError: Unexpected token '??='",
    ]
    assert lines("-n", "-B", "1", "-F", "Unexpected token", str(TOUR)) == [
        "7c1e5a2d:2:1:tool-result-2-4:   settings.retries ??= 3;",
        "7c1e5a2d:2:1:tool-result:3:5: SyntaxError: Unexpected token '??='",
    ]
    assert lines("--line-number", "-o", "-F", "Unexpected token", str(TOUR)) == [
        "7c1e5a2d:2:1:tool-result:3:Unexpected token"]
    assert lines("-N", "-F", "Unexpected token", str(TOUR)) == lines("-F", "Unexpected token", str(TOUR))
    both = invoke("grep", "-n", "-N", "x", str(TOUR))
    assert both.exit_code == 2 and "choose one" in both.stderr
    coloured = invoke("grep", "-n", "--color", "always", "-F", "Unexpected token", str(TOUR)).stdout
    assert "\x1b[32m3\x1b[0m:" in coloured  # the number green, as ripgrep paints it


def test_e_is_repeatable_and_makes_pattern_a_path():
    either = lines("-e", "pipeline", "-e", "Node", str(TOUR))
    assert set(either) == set(lines("pipeline|Node", str(TOUR)))
    assert lines("-F", "-e", "??=", "-e", "(x", str(TOUR)) == lines("-F", "??=", str(TOUR))
    assert lines("-c", "-e", "red", str(TOUR), str(SAMPLES / "tour.session.v2.jsonl"))[0].endswith(":4")
    result = invoke("grep")
    assert result.exit_code == 2 and "missing PATTERN" in result.stderr


def test_v_prints_the_lines_without_a_match_within_the_kinds_searched():
    shown = lines("-v", "red", "--in", "user", str(TOUR))
    assert shown == [
        "7c1e5a2d:1:1:user:What does it show?",
        "7c1e5a2d:2:1:user:Read build.log and .github/workflows/ci.yml and tell me what broke.",
        "7c1e5a2d:3:1:user:Now patch ci.yml yourself. Keep it short.",
        "7c1e5a2d:4:1:user:Explain every stage of the pipeline in detail.",
    ]
    assert lines("-vc", "red", "--in", "user", str(TOUR)) == [f"{TOUR}:4"]
    hits = json.loads(invoke("grep", "--json", "-v", "red", "--in", "user", str(TOUR)).stdout)["hits"]
    assert [hit["match"] for hit in hits] == [[0, 0]] * 4
    assert invoke("grep", "-v", "-o", "x", str(TOUR)).exit_code == 2


def test_grep_lines_form_pieces_with_invert():
    from dshctl.grep.pattern import compile_pattern, find

    pattern = compile_pattern("b", invert=True)
    assert [found.text for found in find(pattern, "a\nb\nc\n")] == ["a", "c"]
    assert [found.text for found in find(pattern, "ab\n\nb")] == [""]


# -------------------------------------------------------------------------------------------- help and errors


def test_help_command_says_what_dash_dash_help_says():
    assert invoke("help", "stats").stdout == invoke("stats", "--help").stdout
    assert "Commands" in invoke("help").stdout
    result = invoke("help", "nope")
    assert result.exit_code == 2 and result.stderr.startswith("dshctl: error: no such command: nope (the commands: ls, cat, stats, prices")
    assert invoke("help", "stas").stderr == "dshctl: error: no such command: stas (did you mean stats?); dshctl --help lists the commands\n"


@pytest.mark.parametrize("name", ["nosuch", "stas", "hlep", "rep", "x", "st\x1b[2Jats"])
def test_a_name_that_is_no_command_is_refused_alike_by_dshctl_and_dshctl_help(name):
    """One wording, one hint, whether the name comes after dshctl or after dshctl help."""
    from dshctl.textsafe import visible_line

    given, asked = invoke(name, "x"), invoke("help", name)
    assert given.exit_code == asked.exit_code == 2 and given.stdout == asked.stdout == ""
    assert given.stderr == asked.stderr
    assert given.stderr.startswith(f"dshctl: error: no such command: {visible_line(name)} (")
    assert given.stderr.endswith("; dshctl --help lists the commands\n") and "\x1b" not in given.stderr


def test_help_alone_help_help_and_extra_words():
    assert invoke("help").stdout == invoke("--help").stdout
    assert invoke("help", "help").stdout == invoke("help", "--help").stdout
    assert invoke("help", "help").stdout.startswith("Usage: dshctl help [OPTIONS] [COMMAND]")
    extra = invoke("help", "stats", "extra")
    assert extra.exit_code == 2
    assert extra.stderr == "dshctl: error: got unexpected extra argument(s) (extra); dshctl help --help lists the options\n"
    assert extra.stderr.replace("help --help", "cat --help").replace("(extra)", "(b)") == invoke("cat", "a", "b").stderr


@pytest.mark.parametrize(
    "args, message",
    [
        # the nearest real option or command, as git suggests it: one when one is nearest, never a list of every
        # option sharing a letter (click offered --jobs, --json or --ndjson for --jsn)
        (["stats", "--jsn"], "dshctl: error: no such option: --jsn (did you mean --json?); dshctl stats --help lists the options"),
        (["stats", "--jsno"], "dshctl: error: no such option: --jsno (did you mean --json?); dshctl stats --help lists the options"),
        (["grep", "--contxt", "2", "x"], "dshctl: error: no such option: --contxt (did you mean --context?); dshctl grep --help lists the options"),
        (["replay", "--folow"], "dshctl: error: no such option: --folow (did you mean --follow?); dshctl replay --help lists the options"),
        (["stats", "--no-colour"], "dshctl: error: no such option: --no-colour (did you mean --no-color?); dshctl stats --help lists the options"),
        (["stats", "--no"], "dshctl: error: no such option: --no (did you mean --no-cache, --no-color or --no-cost?); dshctl stats --help lists the options"),
        (["images", "--ot", "x"], "dshctl: error: no such option: --ot (did you mean --out?); dshctl images --help lists the options"),
        (["stats", "--xyz"], "dshctl: error: no such option: --xyz; dshctl stats --help lists the options"),
        (["grep", "-Z", "x"], "dshctl: error: no such option: -Z; dshctl grep --help lists the options"),
        (["stas"], "dshctl: error: no such command: stas (did you mean stats?); dshctl --help lists the commands"),
        (["rep"], "dshctl: error: no such command: rep (did you mean replay?); dshctl --help lists the commands"),
        (["vaildate"], "dshctl: error: no such command: vaildate (did you mean validate?); dshctl --help lists the commands"),
        (["nosuch"], "dshctl: error: no such command: nosuch (the commands: ls, cat, stats, prices, grep, replay, validate, images, export, sql, help); dshctl --help lists the commands"),
        (["--colr", "never", "ls"], "dshctl: error: no such option: --colr (did you mean --color?); dshctl --help lists the options"),
        (["--json", "stats"], "dshctl: error: --json is an option of dshctl stats: give it after the command name; dshctl stats --help lists the options"),
        (["stats", "--by", "sesion"], "dshctl: error: --by must be one of session, turn, step, day, week, month, project, model, tool, not 'sesion' (did you mean session?)"),
        (["ls", "--sort", "name"], "dshctl: error: --sort must be one of time, created, size, title, not 'name'"),
        (["--color", "alway", "ls"], "dshctl: error: --color must be one of auto, always, never, not 'alway' (did you mean always?)"),
        (["validate", "--format", "sarf"], "dshctl: error: --format must be one of text, json, sarif, junit, not 'sarf' (did you mean sarif?)"),
        (["grep", "-C"], "dshctl: error: option '-C' requires an argument; dshctl grep --help lists the options"),
        (["stats", "--top", "x"], "dshctl: error: --top takes a whole number, not 'x'"),
        (["replay", "--speed", "fast"], "dshctl: error: --speed takes a number, not 'fast'"),
        (["stats", "-jsn"], "dshctl: error: -jsn: -j takes 'sn' as its value (did you mean --json?)"),  # a dash lost
        (["validate", "--ignore", "codec/tornn-tail"], "dshctl: error: --ignore: unknown rule or level 'codec/tornn-tail' (did you mean codec/torn-tail?)"),
        (["validate", "--ignore", "foo"], "dshctl: error: --ignore: unknown rule or level 'foo' (see dshctl validate --list-rules)"),
    ],
)
def test_usage_errors_read_as_dshctl_errors(args, message):
    result = invoke(*args)
    assert result.exit_code == 2
    assert result.stderr == message + "\n" and result.stdout == ""


def test_a_sort_key_gets_the_nearest_key():
    result = invoke("stats", "--sort", "billed", str(TOUR))
    assert result.exit_code == 2 and "unknown key 'billed' for --by session (did you mean billedInputTokens?); one of:" in result.stderr


def test_a_mistyped_value_is_shown_as_data():
    result = invoke("ls", "--sort", "\x1b[2Jtime")
    assert result.exit_code == 2 and "\x1b" not in result.stderr and "must be one of time" in result.stderr


def test_a_program_gets_the_same_suggestion():
    from dshctl import StatsOptions, UsageError

    with pytest.raises(UsageError, match=r"not 'sesion' \(did you mean session\?\)$"):
        StatsOptions(by="sesion")


def test_the_nearest_names():
    from dshctl.options.suggest import edits, nearest

    assert edits("jsno", "json") == 1 and edits("stas", "stats") == 1 and edits("name", "time") == 4 and edits("kitten", "sitting") == 5
    assert edits("kitten", "sitting", 2) == 2 and edits("colour", "color") == 2 and edits("", "ab") == 2
    commands = ["cat", "ls", "stats", "grep", "validate", "images", "replay", "export", "sql", "prices", "help"]
    assert nearest("s", commands) == ["sql", "stats"]  # one letter: the names it starts
    assert nearest("imgs", commands) == ["images"] and nearest("exprot", commands) == ["export"]
    assert nearest("x", commands) == [] and nearest("foo", commands) == [] and nearest("", commands) == []
    assert nearest("--JSON", ["--json", "--ndjson"]) == ["--json"]  # case and dashes aside
    assert nearest("--jsn", ["-j", "--jobs", "--json"]) == ["--json"]


def test_usage_errors_in_a_fresh_process_too():
    result = subprocess.run([sys.executable, "-m", "dshctl", "ls", "--sort", "name"], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert result.returncode == 2 and result.stderr.startswith("dshctl: error: --sort must be one of") and "Usage:" not in result.stderr


# -------------------------------------------------------------------------------------------- --export -


@pytest.mark.parametrize("form, start", [("md", "# Fix the red CI build"), ("ndjson", '{"type": "replay/timeline"'), ("cast", '{"version": 2'),
                                         ("html", "<!DOCTYPE html>")])
def test_export_dash_writes_stdout_in_the_format_asked(form, start, tmp_path):
    result = invoke("replay", str(TOUR), "--export", "-", "--format", form)
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(start) and result.stderr == ""
    if form != "html":  # the same bytes as the file
        target = tmp_path / f"x.{form}"
        assert invoke("replay", str(TOUR), "--export", str(target)).exit_code == 0
        assert target.read_text() == result.stdout


def test_export_formats_are_checked():
    assert "choose its form with --format" in invoke("replay", str(TOUR), "--export", "-").stderr
    assert "--format chooses the form of --export" in invoke("replay", str(TOUR), "--format", "md").stderr
    assert "--format must be one of" in invoke("replay", str(TOUR), "--export", "-", "--format", "pdf").stderr
    assert "--force only applies" in invoke("replay", str(TOUR), "--export", "-", "--format", "md", "--force").stderr


def test_format_wins_over_the_suffix(tmp_path):
    target = tmp_path / "transcript.txt"
    assert invoke("replay", str(TOUR), "--export", str(target), "--format", "md").exit_code == 0
    assert target.read_text().startswith("# Fix the red CI build")


# -------------------------------------------------------------------------------------------- --since


@pytest.mark.parametrize(
    "words, expected",
    [
        ("today", dt.datetime(2026, 12, 2)),
        ("yesterday", dt.datetime(2026, 12, 1)),
        ("monday", dt.datetime(2026, 11, 30)),
        ("Wednesday", dt.datetime(2026, 12, 2)),
        ("last wednesday", dt.datetime(2026, 11, 25)),
        ("sunday", dt.datetime(2026, 11, 29)),
        ("this week", dt.datetime(2026, 11, 30)),
        ("last  week", dt.datetime(2026, 11, 25, 15, 30)),
        ("this month", dt.datetime(2026, 12, 1)),
    ],
)
def test_since_takes_days_as_people_name_them(words, expected):
    from dshctl.options.window import parse_time_ms

    now = int(dt.datetime(2026, 12, 2, 15, 30).timestamp() * 1000)  # a Wednesday afternoon, local time
    assert parse_time_ms(words, option="--since", now_ms=now) == int(expected.timestamp() * 1000)


def test_since_words_on_the_command_line(monkeypatch):
    from dshctl.options import window

    monkeypatch.setattr(window, "clock_ms", lambda: int(dt.datetime(2026, 9, 22, 10).timestamp() * 1000))
    assert json.loads(invoke("stats", "--json", "--since", "yesterday", str(ROOT)).stdout)["aggregate"]["sessions"] == 3
    assert json.loads(invoke("stats", "--json", "--since", "today", str(ROOT)).stdout)["aggregate"]["sessions"] == 0
    assert "today, yesterday" in invoke("stats", "--since", "someday", str(ROOT)).stderr


# -------------------------------------------------------------------------------------------- --project


def test_project_filters_stats_grep_and_validate_without_latest():
    project = "/home/alice/dev/dsh tour"
    ids = [s["id"][:8] for s in json.loads(invoke("stats", "--json", "--project", project, str(ROOT)).stdout)["sessions"]]
    assert ids == ["7c1e5a2d", "b4d2f6a8"]  # not the _no-cwd session
    assert len(lines("-l", "--project", project, ".", str(ROOT))) == 2
    assert json.loads(invoke("validate", "--format", "json", "--project", project, str(ROOT)).stdout)["summary"]["logs"] == 2
    none = invoke("stats", "--project", "/elsewhere", str(ROOT))
    assert none.exit_code == 2 and "no session of project /elsewhere" in none.stderr
    assert invoke("cat", "--project", project, str(TOUR)).exit_code == 2  # a one-log command: only with --latest


def test_project_filters_the_default_sessions_root(tmp_path):
    home = tmp_path / "home"
    (home / "sessions").mkdir(parents=True)
    import shutil

    shutil.copytree(ROOT / "--home-alice-dev-dsh~0020tour--", home / "sessions" / "--home-alice-dev-dsh~0020tour--")
    shutil.copytree(ROOT / "_no-cwd", home / "sessions" / "_no-cwd")
    result = invoke("stats", "--json", "--project", "/home/alice/dev/dsh tour", env={"DSH_HOME": str(home)})
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["aggregate"]["sessions"] == 2


# -------------------------------------------------------------------------------------------- images


def test_images_are_named_after_their_files_and_never_overwrite(tmp_path):
    out = tmp_path / "out"
    first = invoke("images", str(TOUR), "--out", str(out), "--store", str(STORE), "--json")
    assert first.exit_code == 0, first.output
    assert sorted(os.listdir(out)) == ["ci-failure.png", "pipeline.jpg"]
    again = json.loads(invoke("images", str(TOUR), "--out", str(out), "--store", str(STORE), "--json").stdout)
    assert [r["status"] for r in again["images"]] == ["present", "duplicate", "present", "duplicate"]  # nothing written twice
    (out / "pipeline.jpg").write_bytes(b"someone else's picture")
    third = json.loads(invoke("images", str(TOUR), "--out", str(out), "--store", str(STORE), "--json").stdout)
    assert sorted(os.listdir(out)) == ["ci-failure.png", "pipeline-2.jpg", "pipeline.jpg"]
    assert (out / "pipeline.jpg").read_bytes() == b"someone else's picture"
    assert [Path(r["path"]).name for r in third["images"]] == ["ci-failure.png", "ci-failure.png", "pipeline-2.jpg", "pipeline-2.jpg"]


def test_images_without_a_name_keep_the_seq_names(tmp_path):
    log = tmp_path / "s.jsonl"
    text = TOUR.read_text().replace('"name":"ci-failure.png",', "").replace(',"name":"ci-failure.png"', "")
    log.write_text(text)
    out = tmp_path / "out"
    assert invoke("images", str(log), "--out", str(out), "--store", str(STORE)).exit_code == 0
    assert sorted(os.listdir(out)) == ["0-0.png", "pipeline.jpg"]


def test_store_alone_verifies_and_lists_its_objects(tmp_path):
    document = json.loads(invoke("images", "--store", str(STORE), "--json").stdout)
    assert document["summary"] == {"objects": 2, "verified": 2, "failed": 0}
    assert {o["mediaType"] for o in document["objects"]} == {"image/png", "image/jpeg"}
    broken = tmp_path / "attachments"
    import shutil

    shutil.copytree(STORE, broken)
    victim = next((broken / "v1" / "objects").rglob("a97e*"))
    victim.chmod(0o600)
    victim.write_bytes(victim.read_bytes() + b"x")
    result = invoke("images", "--store", str(broken))
    assert result.exit_code == 1 and "mismatch" in result.stdout and "1 not" in result.stdout


def test_store_with_a_path_checks_each_reference():
    result = invoke("images", str(TOUR), "--store", str(STORE), "--json")
    assert result.exit_code == 0
    assert {r["status"] for r in json.loads(result.stdout)["images"]} == {"verified"}
    missing = invoke("images", str(TOUR), "--store", str(SAMPLES / "sessions" / "_no-cwd"))
    assert missing.exit_code == 2  # not a store


# -------------------------------------------------------------------------------------------- the README


def test_the_readme_test_command_prints_pytests_summary_and_skip_reasons(tmp_path):
    readme = (REPO / "README.md").read_text()
    command = next(line for line in readme.split("## Quick start", 1)[1].splitlines() if "pytest" in line)
    flags = command.split("pytest", 1)[1].split()
    sample = tmp_path / "test_sample.py"
    sample.write_text("import pytest\n\ndef test_one():\n    pass\n\n@pytest.mark.skip(reason='no chromium here')\ndef test_two():\n    pass\n")
    config = tmp_path / "pyproject.toml"
    config.write_text((REPO / "pyproject.toml").read_text())  # the project's addopts
    result = subprocess.run([sys.executable, "-m", "pytest", *flags, "-p", "no:cacheprovider", str(sample)], capture_output=True,
                            text=True, cwd=tmp_path, timeout=120)
    assert re.search(r"^1 passed, 1 skipped in ", result.stdout, re.M), result.stdout
    assert "no chromium here" in result.stdout
