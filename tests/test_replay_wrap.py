"""A transcript written to a terminal folds a frame's long rows itself, its ``│`` border on every row
(issue 26: ``replay --instant`` at 60 columns let the terminal fold them, so the border was cut).

On a terminal (``--instant``, the timed stream, ``--follow`` without keys) a row of a tool call's or a
tool result's frame breaks where the terminal would fold it and goes on after ``│``; other lines are
left to the terminal; a pipe or a file gets every line whole, whatever ``COLUMNS`` says. Checked at
60/80/120 columns in process, and on tmux's screen.
"""

from __future__ import annotations

import importlib
import io
import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from rich.cells import cell_len

from conftest import SAMPLES, invoke
from dshctl.reader import open_log
from dshctl.replay.timeline import Timeline
from dshctl.replay.transcript import transcript
from dshctl.replay.view import BAR
from dshctl.replay.wrap import FrameWrap

TOUR = SAMPLES / "tour.session.v4.jsonl"
WIDTHS = (60, 80, 120)
SGR = re.compile(r"\x1b\[[0-9;]*m")
REPO = Path(__file__).resolve().parent.parent


def folded(text: str, width: int) -> str:
    """The reference for ASCII text: each line that starts with ``│ `` cut into rows of ``width``
    characters, every row after the first starting with ``│ ``."""
    lines = []
    for line in text.split("\n"):
        if not line.startswith(BAR) or len(line) <= width:
            lines.append(line)
            continue
        lines.append(line[:width])
        rest = line[width:]
        while rest:
            lines.append(BAR + rest[: width - len(BAR)])
            rest = rest[width - len(BAR):]
    return "\n".join(lines)


def on_a_terminal(*args: str, width: int, color: bool = False, env: dict | None = None):
    """``dshctl ARGS`` in process, standard output taken for a terminal of ``width`` columns."""
    replay = importlib.import_module("dshctl.replay.wrap")
    real = replay.is_terminal
    replay.is_terminal = lambda stream=None: True
    try:
        return invoke(*args, env={"COLUMNS": str(width), **(env or {})}, color=color)
    finally:
        replay.is_terminal = real


def timeline(path: Path = TOUR) -> Timeline:
    return Timeline(open_log(str(path)))


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("color", [False, True], ids=["plain", "colour"])
def test_instant_on_a_terminal_folds_a_frames_rows_with_their_border(width, color):
    result = on_a_terminal("replay", "--instant", str(TOUR), width=width, color=color, env={"FORCE_COLOR": "1"} if color else None)
    assert result.exit_code == 0, result.output
    shown = SGR.sub("", result.stdout)
    if color:
        assert SGR.search(result.stdout)
    whole = transcript(timeline())
    assert shown == folded(whole, width)
    long_rows = [line for line in whole.split("\n") if line.startswith(BAR) and len(line) > width]
    assert long_rows, "the tour has frame rows longer than the terminal"  # the test can fail
    assert all(cell_len(line) <= width for line in shown.split("\n") if line.startswith("│"))
    assert shown.replace("\n" + BAR, "") != whole  # the rows were folded by dshctl, not left to the terminal


@pytest.mark.parametrize("width", WIDTHS)
def test_a_pipe_gets_each_line_whole_whatever_columns_says(width):
    result = invoke("replay", "--instant", str(TOUR), env={"COLUMNS": str(width)})
    assert result.exit_code == 0, result.output
    assert result.stdout == transcript(timeline())


@pytest.mark.parametrize("width", WIDTHS)
def test_timestamps_keep_the_border_under_the_clock(width):
    result = on_a_terminal("replay", "--instant", "--timestamps", str(TOUR), width=width)
    rows = result.stdout.split("\n")
    continued = [row for row in rows if row.startswith(" ") and row.lstrip().startswith("│")]
    assert continued, result.stdout
    for row in continued:  # under the clock, the border where the first row has it
        assert row.index("│") == len("[00:10.050] ") and cell_len(row) <= width


def test_wide_characters_and_tabs_fold_as_the_terminal_would():
    wrap = FrameWrap(10)
    rows = "".join(text for text, _ in wrap.feed([(BAR, "frame"), ("字字字字字字字", "result")])).split("\n")
    assert rows == ["│ 字字字字", "│ 字字字"]  # a wide character never straddles the edge
    assert all(cell_len(row) <= 10 for row in rows)
    wrap = FrameWrap(12)
    rows = "".join(text for text, _ in wrap.feed([(BAR, "frame"), ("ab\tcdefgh", "result")])).split("\n")
    assert rows == ["│ ab\tcdef", "│ gh"]  # the tab reaches column 8
    wrap = FrameWrap(10)
    text = "a long line of the model's own text"
    assert wrap.feed([(text, "text")]) == [(text, "text")]  # not a frame: left to the terminal


def test_log_text_stays_data_when_folded(tmp_path):
    """A tool result holding escape sequences and markup: its pictures are folded like any text, and
    dshctl adds nothing but its line break and border."""
    log = tmp_path / "hostile.session.v4.jsonl"
    hostile = "\x1b[2J\x1b]0;owned\x07[bold]not markup[/bold] " + "x" * 200
    log.write_text(TOUR.read_text().replace("Todo list saved: 1 in progress, 1 pending.", json.dumps(hostile)[1:-1]))
    result = on_a_terminal("replay", "--instant", str(log), width=60)
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "[bold]not markup[/bold]" in result.stdout.replace("\n" + BAR, "")
    assert all(cell_len(line) <= 60 for line in result.stdout.split("\n") if line.startswith("│"))


def test_the_timed_stream_folds_at_the_terminals_width(monkeypatch):
    from dshctl.replay import terminal

    monkeypatch.setattr(terminal, "_terminal_size", lambda out: (60, 20))
    out = io.StringIO()
    terminal.play_stream(timeline(), 0, speed=1e9, idle_limit=0.0, color=False, timestamps=False, out=out, sleep=lambda s: None)
    assert out.getvalue() == folded(transcript(timeline()), 60)


def test_interleaved_calls_fold_with_their_border_in_the_timed_stream(tmp_path):
    """Two tool calls streamed at once (a region, redrawn in place): each frame's rows folded at the
    width, and the output still ends on the transcript's screen, folded the same way."""
    from test_replay_frames import message_log

    from dshctl.replay import frames

    args = ['{"path": "', "a/" * 40, 'end"}']
    path = tmp_path / "calls.session.v4.jsonl"
    path.write_text(message_log([("call", args), ("call", list(args))], [0, 1, 0, 1, 0, 1]), encoding="utf-8")
    built = timeline(path)
    built.ensure_all()
    assert any(item.region is not None for item in built.items)
    outputs = [text for _, text in frames.terminal_output(built, 0, cols=30, rows=40, wrap=True)]
    assert any(frames.ERASE_BELOW in text for text in outputs)  # a block above the last one grew in place
    from test_replay_parallel import _wrapped

    screen = _emulate("".join(outputs), 30)
    assert screen == [row.rstrip() for row in _wrapped(folded(transcript(timeline(path)), 30), 30)]  # other lines: the terminal folds them


def _emulate(output: str, cols: int) -> list[str]:
    """The rows a terminal ``cols`` wide shows after ``output`` (line breaks, CR, cursor up, erase
    below, folding at the edge): enough of one for what the frames write."""
    rows: list[str] = [""]
    row = col = 0
    i = 0
    while i < len(output):
        match = re.match(r"\x1b\[(\d*)A|\x1b\[J", output[i:])
        if match:
            if match.group(0).endswith("A"):
                row = max(row - int(match.group(1) or 1), 0)
            else:
                rows[row] = rows[row][:col]
                del rows[row + 1:]
            i += len(match.group(0))
            continue
        char = output[i]
        i += 1
        if char == "\r":
            col = 0
        elif char == "\n":
            row, col = row + 1, 0
            if row == len(rows):
                rows.append("")
        else:
            if col >= cols:
                row, col = row + 1, 0
                if row == len(rows):
                    rows.append("")
            line = rows[row].ljust(col)
            rows[row] = line[:col] + char + line[col + 1:]
            col += 1
    rows = [r.rstrip() for r in rows]
    return rows[:-1] if rows and not rows[-1] else rows


@pytest.mark.serial
@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux not installed")
@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("mode", ["instant", "timed"])
def test_on_tmuxs_screen_every_row_of_a_frame_has_its_border(width, mode):
    from test_replay_tmux import Pane

    command = f"{sys.executable} -m dshctl.cli --no-color replay " + ("--instant " if mode == "instant" else "--speed 1000 ")
    command += f"{TOUR}" + (" < /dev/null" if mode == "timed" else "") + "; echo DONE"
    pane = Pane(f"env -u COLUMNS -u LINES sh -c '{command}'", width, 150)  # the pane's own size, not a worker's COLUMNS
    try:
        screen = pane.wait(lambda text: "DONE" in text, "the replay to end", 30)
    finally:
        pane.close()
    rows = screen.split("DONE", 1)[0].rstrip("\n").split("\n")
    from test_replay_parallel import _wrapped

    expected = _wrapped(folded(transcript(timeline()).rstrip("\n"), width), width)  # lines not a frame's: the terminal folds them
    assert [row.rstrip() for row in rows[-len(expected):]] == [row.rstrip() for row in expected]
    inside = False
    for row in rows:  # between a frame's top and bottom every row starts with its border
        if row.startswith("╭─"):
            inside = True
        elif row.startswith("╰─"):
            inside = False
        elif inside:
            assert row.startswith("│"), (row, screen)


def _ascii_messages():
    from hypothesis import strategies as st

    delta = st.lists(st.sampled_from(list("ab c{}\":") + ["\n", "\n\n", "xyz" * 5, "q" * 23]), max_size=6).map("".join)
    block = st.tuples(st.sampled_from(["text", "reasoning", "call"]), st.lists(delta, min_size=1, max_size=8))

    @st.composite
    def messages(draw):
        blocks = draw(st.lists(block, min_size=2, max_size=4))
        order = draw(st.lists(st.integers(0, len(blocks) - 1), max_size=sum(len(deltas) for _, deltas in blocks)))
        return blocks, order, draw(st.sampled_from(["tool-calls", "max-tokens"])), draw(st.sampled_from([None, "done", "line\n"]))

    return messages()


def test_interleaved_blocks_fold_as_the_transcript_on_random_messages():
    """Blocks redrawn in place, each laid out again from another start state: whatever the interleaving,
    the width (down to a frame's border and two cells) and where the output starts, the screen the
    timed stream leaves is the transcript from there, a frame's rows folded with their border."""
    import tempfile

    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
    from test_replay_parallel import _wrapped
    from test_replay_frames import message_log

    from dshctl.replay import frames

    @settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(_ascii_messages(), st.integers(4, 40), st.floats(0, 1))
    def check(message, cols, where):
        blocks, order, finish, before = message
        with tempfile.TemporaryDirectory() as directory:
            path = Path(directory) / "m.session.v4.jsonl"
            path.write_text(message_log(blocks, order, finish=finish, before=before), encoding="utf-8")
            built = timeline(path)
            built.ensure_all()
            region = next((item for item in built.items if item.region is not None), None)
            starts = [0] + ([region.start + int(where * (region.count - 1))] if region is not None else [])
            for start in starts:
                output = "".join(text for _, text in frames.terminal_output(built, start, cols=cols, rows=1000, wrap=True))
                expected = [row.rstrip() for row in _wrapped(folded(transcript(timeline(path), start), cols), cols)]
                assert _emulate(output, cols) == expected

    check()
