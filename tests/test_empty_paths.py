"""A PATH that holds no log is status 2 for every command, so a CI job given a wrong path cannot pass on
nothing. Only ``ls`` without ROOT lists an empty or missing default sessions root as an empty listing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import invoke, sample

LOG = str(sample("tour.session.v4.jsonl.zstd"))


def empty_root(tmp: Path) -> Path:
    root = tmp / "sessions"
    root.mkdir()
    return root


def empty_project(tmp: Path) -> Path:
    project = tmp / "sessions" / "--home-me-proj--"
    project.mkdir(parents=True)
    return project


def root_of_sessions_without_logs(tmp: Path) -> Path:
    root = tmp / "sessions"
    (root / "--home-me-proj--" / "2026-01-01-abc").mkdir(parents=True)  # created, never appended
    return root


def empty_plain_dir(tmp: Path) -> Path:
    plain = tmp / "ci-artifacts"
    plain.mkdir()
    return plain


def plain_dir_of_other_files(tmp: Path) -> Path:
    plain = tmp / "notes"
    plain.mkdir()
    (plain / "todo.txt").write_text("not a log\n")
    return plain


SHAPES = [empty_root, empty_project, root_of_sessions_without_logs, empty_plain_dir]
COMMANDS = [["cat"], ["replay", "--instant"], ["images"], ["stats"], ["stats", "--json"], ["ls"], ["ls", "--ndjson"]]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_named_path_without_logs_is_status_2(tmp_path, shape, command):
    path = shape(tmp_path)
    result = invoke(*command, str(path))
    assert result.exit_code == 2, result.output
    assert result.stderr == f"dshctl: error: {path}: no dsh session logs found\n"
    assert result.stdout == ""


@pytest.mark.parametrize("shape", SHAPES)
def test_validate_fails_on_nothing(tmp_path, shape):
    path = shape(tmp_path)
    result = invoke("validate", str(path))
    assert result.exit_code == 2, result.output
    assert f"{path}: unreadable [codec/read] no dsh session logs found" in result.stdout


@pytest.mark.parametrize("command", [*COMMANDS, ["validate"], ["grep", "x"]], ids=" ".join)
def test_a_folder_of_other_files_is_not_a_log_location_in_every_command(tmp_path, command):
    """Another cause, another message: something is there, and it is not a log."""
    path = plain_dir_of_other_files(tmp_path)
    result = invoke(*command, str(path))
    assert result.exit_code == 2, result.output
    expected = "not a dsh log location: expected a session directory"
    assert expected in (result.stdout if command == ["validate"] else result.stderr)


def test_validate_junit_on_nothing_is_a_failing_testcase(tmp_path):
    result = invoke("validate", "--format", "junit", str(empty_plain_dir(tmp_path)))
    assert result.exit_code == 2
    assert 'tests="1" failures="0" errors="1"' in result.stdout
    assert "no dsh session logs found" in result.stdout


def test_validate_checks_the_other_paths_and_reports_the_empty_one(tmp_path):
    empty = empty_plain_dir(tmp_path)
    result = invoke("validate", "--format", "json", LOG, str(empty))
    assert result.exit_code == 2
    logs = {entry["file"]: entry["status"] for entry in json.loads(result.stdout)["logs"]}
    assert logs == {str(empty): "unreadable", LOG: "warnings"}  # the tour sample has one warning


def test_stats_refuses_an_empty_path_among_others(tmp_path):
    empty = empty_root(tmp_path)
    result = invoke("stats", "--json", LOG, str(empty))
    assert result.exit_code == 2
    assert result.stderr == f"dshctl: error: {empty}: no dsh session logs found\n"


@pytest.mark.parametrize("command", [["stats"], ["validate"]], ids=" ".join)
def test_an_empty_default_root_is_status_2_for_commands_that_compute(tmp_path, command):
    empty_root(tmp_path)
    result = invoke(*command, home=tmp_path)
    assert result.exit_code == 2, result.output
    assert f"{tmp_path / 'sessions'}: " in result.output and "no dsh session logs found" in result.output


def test_ls_lists_an_empty_default_root_as_nothing(tmp_path):
    empty_root(tmp_path)
    result = invoke("ls", "--json", home=tmp_path)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"sessions": []}
    assert result.stderr == ""


def test_ls_lists_a_missing_default_root_as_nothing_with_a_warning(tmp_path):
    result = invoke("ls", "--json", home=tmp_path / "nowhere")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == {"sessions": []}
    assert result.stderr == f"dshctl: warning: {tmp_path / 'nowhere' / 'sessions'}: no sessions root (dsh has not written a session here yet)\n"
