"""grep's hits of several logs on a terminal (issue 26): each log's path once, as a heading above its hits,
as ripgrep lays them out there; into a pipe (or ``--no-heading``) every line carries its path, unchanged.
The tmux tests run dshctl on a real terminal of 80 and 120 columns."""

from __future__ import annotations

import os
import shlex

import pytest
from conftest import REPO, SAMPLES, invoke
from test_colour_progress import DSHCTL, pane, tmux_only  # noqa: F401 - pane: the fixture

ROOT = SAMPLES / "sessions"
TWO = [str(SAMPLES / "tour.session.v4.jsonl"), str(SAMPLES / "fork-child.session.v4.jsonl")]


def _grep(*args: str, cwd=None) -> str:
    result = invoke("grep", *args, cwd=cwd)
    assert result.exit_code == 0, result.output
    return result.stdout


def test_a_heading_per_log_then_its_lines_as_for_that_log_alone():
    headed = _grep("--heading", "red", *TWO, cwd=REPO)
    blocks = headed.split("\n\n")
    assert len(blocks) == 2  # an empty line between logs
    for block, log in zip(blocks, TWO):
        heading, *lines = block.rstrip("\n").split("\n")
        assert heading == log  # the path -l, -c and --no-heading print
        alone = _grep("red", log).splitlines()
        assert [line.split(":", 1)[1] for line in lines] == [line.split(":", 1)[1] for line in alone]  # the ids are unique among both


def test_a_pipe_keeps_the_path_on_every_line_and_no_heading_says_so_too():
    piped = _grep("red", *TWO)
    assert piped == _grep("--no-heading", "red", *TWO)
    assert all(line.startswith(tuple(TWO)) for line in piped.splitlines())
    headed = _grep("--heading", "red", *TWO, cwd=REPO).splitlines()
    headings = set(TWO)
    assert [line[len(log) + 1:] for line in piped.splitlines() for log in TWO if line.startswith(log + ":")] == [
        line for line in headed if line and line not in headings
    ]


def test_heading_with_context_separates_groups_inside_a_log_only():
    headed = _grep("--heading", "-C", "1", "-n", "red", *TWO)
    for block in headed.split("\n\n"):
        assert not block.startswith("--") and not block.rstrip("\n").endswith("--")
    assert "--\n" in headed


def test_one_log_has_no_heading_and_counts_and_files_are_unchanged():
    one = TWO[0]
    assert _grep("--heading", "red", one) == _grep("red", one)  # one log: no path at all, as ripgrep
    assert _grep("--heading", "-c", "red", *TWO) == _grep("-c", "red", *TWO)
    assert _grep("--heading", "-l", "red", *TWO) == _grep("-l", "red", *TWO)


def test_heading_and_no_heading_refuse_each_other():
    result = invoke("grep", "--heading", "--no-heading", "red", *TWO)
    assert result.exit_code == 2 and "choose one" in result.stderr


def test_the_heading_is_the_path_the_other_outputs_print(monkeypatch):
    """A sessions root's logs, from a working directory above them: the heading is the path ``-l``, ``-c``
    and ``--no-heading`` print (absolute), never a relative form of it (ripgrep shows one form)."""
    monkeypatch.chdir(SAMPLES.parent)
    home = {"DSH_HOME": str(SAMPLES)}
    listed = invoke("grep", "-l", "red", env=home).stdout.splitlines()
    counted = [line.rsplit(":", 1)[0] for line in invoke("grep", "-c", "red", env=home).stdout.splitlines()]
    prefixed = {line.split(":", 1)[0] for line in invoke("grep", "--no-heading", "red", env=home).stdout.splitlines()}
    headed = invoke("grep", "--heading", "red", env=home).stdout.split("\n\n")
    headings = [block.split("\n", 1)[0] for block in headed]
    assert len(listed) >= 2 and all(os.path.isabs(path) for path in listed)
    assert headings == listed == counted and set(headings) == prefixed


@tmux_only
@pytest.mark.serial
@pytest.mark.parametrize("width", [80, 120])
def test_hits_of_a_sessions_root_fit_a_real_terminal(pane, width):
    """DSH_HOME=samples, ``dshctl grep red``: no hit line wraps (the ~110-character path is a heading)."""
    shown = pane(f"DSH_HOME={shlex.quote(str(SAMPLES))} {DSHCTL} grep red; echo ==piped; "
                 f"DSH_HOME={shlex.quote(str(SAMPLES))} {DSHCTL} grep red | cat", width=width, height=120)
    screen = shown.wait(lambda s: "EXITED 0" in s, "the end")
    tty, piped = screen.split("==piped", 1)
    rows = [row for row in tty.splitlines() if row.strip()]
    hits = [row for row in rows if row[:8] in ("7c1e5a2d", "b4d2f6a8")]
    assert len(hits) >= 7
    headings = [row for row in rows if "session.v4.jsonl.zstd" in row]
    assert len(headings) >= 2 and all(":" not in row.split("session.v4.jsonl.zstd", 1)[1] for row in headings)
    assert all(len(row.rstrip()) <= width for row in hits)
    assert "session.v4.jsonl.zstd:7c1e5a2d:1:1:user:" in piped.replace("\n", "")  # a pipe: the path on every line
