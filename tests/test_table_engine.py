"""The table engine's defects a new user's trial found (issue 26, wave 6): the width rich draws at
being the one dshctl planned for (``TERM=dumb``, a terminal reporting 0 columns), headers that fold
at widths where they fit, rows folding in ``prices`` and ``sql``, and all-empty columns kept while a
cell is cut."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys

import pytest

import dshctl.tables as tables
from conftest import REPO, SAMPLES
from test_colour_progress import DSHCTL, pane, tmux_only  # noqa: F401 - pane is a fixture
from test_table_forms import run

TOUR_ID = "7c1e5a2d"


def _boxed(screen: str) -> list[str]:
    return [line for line in screen.splitlines() if line[:1] in "┏┃┡│└"]


# -------------------------------------------------------------------------------------------- 1: TERM=dumb


@tmux_only
@pytest.mark.serial
def test_a_dumb_terminal_is_as_wide_as_it_says(pane):
    """rich draws a dumb terminal at 80 × 25 unless told its size: dshctl planned for 120 columns, rich
    cut the numbers (out ``2`` for 253) and split the headers."""
    dumb = "TERM=dumb"  # in the command: tmux sets a pane's TERM itself
    shown = pane(f"{dumb} {DSHCTL} stats {TOUR_ID} --by turn; {dumb} {DSHCTL} stats; {dumb} {DSHCTL} ls", width=120,
                 height=100, env={"DSH_HOME": str(SAMPLES)})
    screen = shown.wait(lambda s: "EXITED 0" in s, "the end")
    boxed = _boxed(screen)
    assert boxed and all(len(line) <= 120 for line in boxed), screen
    assert any(len(line) > 80 for line in boxed), screen  # drawn at the pane's width, not rich's 80
    assert re.search(r"│\s+1 │ 300ms │ 24,000 │ 253 │\s+111 │", screen), screen
    assert "0.0061" in screen  # the session's cost, whole
    headers = [line for line in boxed if line.startswith("┃")]
    assert "┃ turn ┃  TTFT ┃" in headers[0] and "cost USD" in headers[0], screen  # each header on one line


@tmux_only
@pytest.mark.serial
def test_the_player_on_a_dumb_terminal_fills_its_width(pane):
    shown = pane(f"TERM=dumb {DSHCTL} replay {TOUR_ID}", width=120, height=30, env={"DSH_HOME": str(SAMPLES)})
    screen = shown.wait(lambda s: "? keys" in s, "the player's status line")
    status = next(line for line in screen.splitlines() if "? keys" in line)
    assert len(status.rstrip()) > 100, screen  # the status line spans 120 columns, not 80
    subprocess.run(["tmux", "-L", shown.socket, "send-keys", "-t", "t", "q"], timeout=10)
    shown.wait(lambda s: "EXITED 0" in s, "the end")


# -------------------------------------------------------------------------------------------- 2: 0 columns


def test_a_terminal_of_0_columns_counts_as_80(monkeypatch):
    from dshctl import terminal

    class Tty:
        def isatty(self):
            return True

        def fileno(self):
            return 1

    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)
    monkeypatch.setattr(os, "get_terminal_size", lambda fd: os.terminal_size((0, 0)))
    assert terminal.terminal_width(Tty()) == 80
    assert terminal.terminal_size(Tty()) == (80, 25)


@pytest.mark.skipif(shutil.which("script") is None, reason="script (util-linux) is not installed")
def test_ls_in_a_pseudo_terminal_of_no_size_fits_80_columns():
    """``script`` without a terminal of its own makes a pseudo-terminal that reports 0 × 0."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "NO_COLOR")}
    env.update(DSH_HOME=str(SAMPLES), PYTHONPATH=str(REPO), TERM="xterm")
    command = f"{shlex.quote(sys.executable)} -m dshctl ls"
    result = subprocess.run(["script", "-qc", command, "/dev/null"], stdin=subprocess.DEVNULL, capture_output=True,
                            env=env, cwd=REPO, timeout=60)
    out = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", result.stdout.decode("utf-8", "replace"))
    assert "hidden to fit 80 columns" in out and "0 columns" not in out.replace("80 columns", ""), out
    boxed = _boxed(out)
    assert boxed and all(len(line) <= 80 for line in boxed) and max(map(len, boxed)) > 60, out


# -------------------------------------------------------------------------------------------- 6: headers fold


def _header_lines(out: str) -> list[int]:
    """For each boxed table, how many lines its header takes."""
    counts, inside = [], False
    for line in out.splitlines():
        if line.startswith("┏"):
            counts.append(0)
            inside = True
        elif line.startswith("┡") or line.startswith("└"):
            inside = False
        elif inside and line.startswith("┃"):
            counts[-1] += 1
    return counts


HEADER_CASES = [
    ["stats"], ["stats", "--sort", "cost", "--top", "2"], ["stats", TOUR_ID, "--by", "step"], ["stats", TOUR_ID, "--by", "turn"],
    ["stats", "--by", "model"], ["stats", "--by", "tool"], ["stats", "--by", "day", "--tz", "UTC"], ["stats", TOUR_ID], ["ls"],
    ["images", TOUR_ID, "--store", str(SAMPLES / "attachments")], ["prices", str(SAMPLES / "sessions")],
]


@pytest.mark.parametrize("width", [60, 80, 100, 120, 140])
@pytest.mark.parametrize("args", HEADER_CASES, ids=[" ".join(args[:3]) for args in HEADER_CASES])
def test_a_header_never_folds(args, width):
    """``cost USD`` folded at 80, 120 and 140 though it was one line at 60: a column shown again left
    too little room. Hiding counts whole headers."""
    out = run(*args, columns=width, terminal=True, env={"DSH_HOME": str(SAMPLES)}).stdout
    counts = _header_lines(out)
    assert counts and counts == [1] * len(counts), out
    assert all(len(line) <= width for line in _boxed(out)), out


# -------------------------------------------------------------------------------------------- 13: rows fold


def _rows_one_line(out: str) -> bool:
    """No continuation line in a boxed table: every body line has its first cell."""
    body = [line for line in out.splitlines() if line.startswith("│")]
    return bool(body) and all(line.split("│")[1].strip() for line in body)


@pytest.mark.parametrize("width", [60, 80, 120])
def test_the_prices_hours_stay_on_one_line(width):
    out = run("prices", str(SAMPLES / "sessions"), columns=width, terminal=True).stdout
    table = out.split("deepseek/deepseek-v4-flash (USD)\n", 1)[1].split("└", 1)[0]
    assert _rows_one_line(table), out
    assert "since" in table  # what tells the rows apart stays
    assert all(len(line) <= width for line in _boxed(out)), out
    hours = [line.split("│")[2].strip() for line in table.splitlines() if line.startswith("│") and "Asia/Shanghai" in line
             or line.startswith("│") and "…" in line.split("│")[2]]
    assert len(set(hours)) == 2 and any("daily" in h for h in hours) and any("mon-fri" in h for h in hours), hours
    # the daily window and the weekday one, cut where they differ (an end cut showed both as "09:00-12:00, 14:00-18…")


@pytest.mark.parametrize("width", [60, 80, 120])
def test_sql_rows_are_one_line_each(width):
    pytest.importorskip("duckdb")
    query = "select session_id, title, cwd, cost_total from sessions"
    out = run("sql", query, str(SAMPLES), columns=width, terminal=True).stdout
    assert _rows_one_line(out) and all(len(line) <= width for line in _boxed(out)), out
    assert "…" in out or width >= 120  # cut, not folded
    assert "NULL" not in run("sql", "select null as nothing, 1 as one", str(SAMPLES), columns=width, terminal=True).stdout


# -------------------------------------------------------------------------------------------- 14: empty columns


def test_images_hide_the_empty_problem_column_before_cutting_a_name():
    """At 80 columns the name was cut (``ci-failure.…``) while the all-blank ``problem`` column took 12."""
    out = run("images", TOUR_ID, "--store", str(SAMPLES / "attachments"), columns=80, terminal=True,
              env={"DSH_HOME": str(SAMPLES)}).stdout
    table = out.split("└", 1)[0]
    assert "ci-failure.png" in table and "problem" not in table, out
    assert "problem" in " ".join(out.split()).split("hidden to fit", 1)[1], out


@pytest.mark.parametrize("drop", [None, 0, 5])
def test_a_column_without_a_value_hides_first_in_every_table(drop):
    columns = [tables.number("seq"), tables.text("name", cut="end", least=6, drop=7),
               tables.text("empty", drop=drop), tables.number("n", drop=1)]
    rows = [["1", "a-long-file-name.png", "", "3"], ["2", "b.png", tables.NULL_CELL, "4"]]
    fitted = tables.layout(columns, rows, 40)
    assert fitted.hidden[:1] == ["empty"] and 1 in fitted.shown and 3 in fitted.shown
    assert fitted.widths[1] == len("a-long-file-name.png")  # the room went to the name
    assert tables.layout(columns, rows, None).shown == [0, 1, 2, 3]  # a pipe shows every column
