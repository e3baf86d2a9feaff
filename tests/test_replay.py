"""dshctl replay: the timeline of each sample, stepping and seeking, transcript, exports, options.

The tour expectations below were checked by hand against samples/README.md ("The tour", "Timeline"):
every time is an offset from T0 in ms, and the anchors there (first tokens, messages, tool calls and
results, titles, turn boundaries, the 40-delta run at 11 500 + 13·i) are the times listed here. Items
are (kind, first fragment time, last fragment time, turn, step, fragments).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from itertools import accumulate
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dshctl.errors import UsageError
from dshctl.reader import open_log
from dshctl.options import ReplayOptions
from dshctl.replay import run_replay
from dshctl.replay.export import cast_events, cast_header, markdown, timeline_records, write_cast
from dshctl.replay.player import Player, find_text
from dshctl.replay.render import screen_rows, screen_text, status_text
from dshctl.replay.terminal import play_stream, scroll_amount
from dshctl.replay.items import EVENT_GAP_MS, TOKEN_GAP_MS
from dshctl.replay.timeline import Timeline
from dshctl.replay import view
from dshctl.replay.view import BAR
from dshctl.replay.transcript import iter_fragments, transcript
from dshctl.replay.transform import PlaybackClock, make_filters, parse_from_time, parse_turns

from conftest import CORPUS, REPO, SAMPLES, corpus_file, need_corpus

T0 = 1_790_000_000_000
DSHCTL = [sys.executable, "-m", "dshctl.cli"]  # never a dshctl on PATH: it may be another checkout

TOUR_FILES = [
    "tour.session.jsonl",
    "tour.session.jsonl.zstd",
    "tour.session.v2.jsonl",
    "tour.session.v2.jsonl.zstd",
    "tour.session.v3.jsonl",
    "tour.session.v3.jsonl.zstd",
    "tour.session.v4.jsonl",
    "tour.session.v4.jsonl.zstd",
]

TOUR = [
    ("session", 990, 990, None, None, 1),  # placed at the first event (queued prompt, 10 ms before turn/start)
    ("turn", 1000, 1000, 1, None, 1),
    ("user", 1002, 1002, 1, 1, 1),  # prompt with the PNG placeholder
    ("context", 1002, 1002, 1, 1, 1),  # runtime context
    ("title", 1003, 1003, 1, 1, 1),  # fallback title
    ("text", 1300, 1320, 1, 1, 3),  # failed attempt: three text deltas from 1300
    ("attempt-failed", 1330, 1330, 1, 1, 1),  # finish {error SERVER} at 1330
    ("retry", 1331, 1331, 1, 1, 1),
    ("retry-started", 2331, 2331, 1, 1, 1),
    ("thinking", 2700, 2700, 1, 1, 1),  # second attempt, first token 2700
    ("reasoning", 2700, 2760, 1, 1, 4),
    ("text", 2800, 3250, 1, 1, 10),  # 10 text deltas (2800, 2850, rows of 4 + 4 in v0)
    ("block-end", 3500, 3500, 1, 1, 1),
    ("turn-end", 3552, 3552, 1, 1, 1),
    ("turn", 10000, 10000, 2, None, 1),
    ("user", 10002, 10002, 2, 1, 1),
    ("thinking", 10400, 10400, 2, 1, 1),  # first token 10 400
    ("reasoning", 10400, 10625, 2, 1, 10),  # ends with the loose 10 600, 10 625 deltas
    ("tool-start", 10630, 10630, 2, 1, 1),
    ("tool-name", 10630, 10630, 2, 1, 1),  # the named "" member carries only the name
    ("tool-args", 10635, 10685, 2, 1, 11),  # the other 11 of 12 fragments
    ("tool-start", 10690, 10690, 2, 1, 1),  # second parallel read (closes the first frame)
    ("tool-name", 10690, 10690, 2, 1, 1),
    ("tool-args", 10690, 10690, 2, 1, 1),
    ("tool-end", 10695, 10695, 2, 1, 1),
    ("tool-call", 10701, 10701, 2, 1, 1),  # read A
    ("tool-call", 10701, 10701, 2, 1, 1),  # read B
    ("tool-result", 10751, 10751, 2, 1, 1),
    ("tool-result", 10801, 10801, 2, 1, 1),
    ("step", 10810, 10810, 2, 2, 1),
    ("thinking", 11010, 11010, 2, 2, 1),  # first token 11 010
    ("reasoning", 11010, 11030, 2, 2, 3),
    ("tool-start", 11040, 11040, 2, 2, 1),
    ("tool-name", 11040, 11040, 2, 2, 1),
    ("tool-args", 11040, 11070, 2, 2, 4),  # name repeated on every delta: one named run
    ("tool-end", 11080, 11080, 2, 2, 1),
    ("tool-call", 11111, 11111, 2, 2, 1),  # todo_write call 11 111
    ("note", 11115, 11115, 2, 2, 1),  # todo/write 11 115
    ("tool-result", 11121, 11121, 2, 2, 1),  # result 11 121
    ("step", 11130, 11130, 2, 3, 1),
    ("thinking", 11430, 11430, 2, 3, 1),  # first token 11 430
    ("reasoning", 11430, 11480, 2, 3, 6),
    ("text", 11500, 12007, 2, 3, 40),  # 40 deltas at 11 500 + 13·i
    ("block-end", 12015, 12015, 2, 3, 1),
    ("block", 12015, 12015, 2, 3, 1),  # the assistant JPEG block
    ("turn-end", 12032, 12032, 2, 3, 1),
    ("title", 12500, 12500, None, None, 1),  # provider title, between turns
    ("turn", 20000, 20000, 3, None, 1),
    ("user", 20002, 20002, 3, 1, 1),
    ("text", 20250, 20290, 3, 1, 5),  # first token 20 250
    ("block-end", 20300, 20300, 3, 1, 1),
    ("tool-start", 20300, 20300, 3, 1, 1),
    ("tool-name", 20300, 20300, 3, 1, 1),
    ("tool-args", 20310, 20410, 3, 1, 6),
    ("tool-end", 20420, 20420, 3, 1, 1),  # finish {max-tokens}: the frame is closed, call dropped
    ("note", 20420, 20420, 3, 1, 1),
    ("turn-end", 20602, 20602, 3, 1, 1),
    ("turn", 30000, 30000, 4, None, 1),
    ("user", 30002, 30002, 4, 1, 1),
    ("thinking", 30500, 30500, 4, 1, 1),  # first token 30 500
    ("reasoning", 30500, 30600, 4, 1, 6),
    ("text", 30620, 30900, 4, 1, 8),  # 8 text deltas, then the user cancels
    ("interrupted", 31000, 31000, 4, 1, 1),  # message {interrupted: true} at 31 000
    ("turn-end", 31002, 31002, 4, 1, 1),
]

FORK_CHILD = TOUR[:14] + [
    ("note", 6000, 6000, None, None, 1),  # end of the inherited prefix (v0: seedLength; v2+: inherited marker)
    ("turn", 6002, 6002, 2, None, 1),
    ("user", 6102, 6102, 2, 1, 1),
    ("context", 6102, 6102, 2, 1, 1),
    ("thinking", 6400, 6400, 2, 1, 1),  # first token 6400
    ("reasoning", 6400, 6430, 2, 1, 4),
    ("text", 6460, 6660, 2, 1, 6),
    ("block-end", 6670, 6670, 2, 1, 1),
    ("turn-end", 6702, 6702, 2, 1, 1),  # message at 6700
]

TORN_RAW = [
    ("session", 40000, 40000, None, None, 1),
    ("turn", 40010, 40010, 1, None, 1),
    ("user", 40012, 40012, 1, 1, 1),
    ("text", 40210, 40210, 1, 1, 1),  # "pong"
    ("block-end", 40211, 40211, 1, 1, 1),
    ("note", 40211, 40211, 1, 1, 1),  # the torn turn/end: the log ends inside turn 1
]
TORN_ZSTD = TORN_RAW[:3] + [("note", 40012, 40012, 1, 1, 1)]  # the answer frame is lost


def shape(timeline: Timeline) -> list[tuple]:
    timeline.ensure_all()
    times = timeline.times
    return [
        (item.kind, times[item.start] - T0, times[item.start + item.count - 1] - T0, item.turn, item.step, item.count)
        for item in timeline.items
    ]


def build(path, **filters) -> Timeline:
    return Timeline(open_log(str(path)), make_filters(**filters))


@pytest.mark.parametrize("name", TOUR_FILES)
def test_tour_timeline_matches_the_hand_checked_expectation(name):
    timeline = build(SAMPLES / name)
    assert shape(timeline) == TOUR
    assert not timeline.synthetic
    assert timeline.max_turn == 4
    assert [marker for item in timeline.items if (marker := item.marker)] == [
        "turn 1",
        "turn 2",
        "tool: read",
        "tool: read",
        "tool: todo_write",
        "turn 3",
        "turn 4",
    ]
    assert timeline.duration_ms == 31002 - 990


@pytest.mark.parametrize("name", ["fork-child.session.jsonl", "fork-child.session.jsonl.zstd", "fork-child.session.v2.jsonl", "fork-child.session.v3.jsonl", "fork-child.session.v4.jsonl.zstd"])
def test_fork_child_timeline(name):
    assert shape(build(SAMPLES / name)) == FORK_CHILD


def test_torn_tail_timelines(recwarn):
    assert shape(Timeline(open_log(str(SAMPLES / "torn-tail.session.v4.jsonl"), on_warning=lambda _: None))) == TORN_RAW
    assert shape(Timeline(open_log(str(SAMPLES / "torn-tail.session.v4.jsonl.zstd"), on_warning=lambda _: None))) == TORN_ZSTD


def test_every_generation_prints_the_same_transcript_but_the_header():
    texts = [transcript(build(SAMPLES / name)) for name in TOUR_FILES]
    bodies = {text.split("\n", 1)[1] for text in texts}
    assert len(bodies) == 1


def test_transcript_content():
    text = transcript(build(SAMPLES / "tour.session.v4.jsonl.zstd"))
    assert "  [image ci-failure.png · image/png · 86 B · 2×2]" in text
    assert "The screenshot shows\n✗ attempt failed — SERVER: provider returned HTTP 503" in text
    assert "↻ retry 1 of 3 in 1.0 s after SERVER\n↻ retrying (retry 1)\n" in text
    assert '╭─ tool call read\n│ {"file_path": "build.log", "limit": 200}\n╰─\n╭─ tool call read\n' in text
    assert "╭─ result: read ✓\n│ build.log\n" in text
    assert "╰─ cut off by max tokens; the call was dropped" in text
    assert "Stage 1 — checkout: the runner clones\n⏹ interrupted\n── turn 4 aborted (user) · 1.0 s\n" in text
    assert text.count("━━ turn ") == 4


# -- fixtures without envelope times ----------------------------------------------------------------


def corpus(path: str) -> Path:
    need_corpus()
    return corpus_file(path)


def test_fixture_form_is_labelled_synthetic_and_keeps_recorded_stream_spacing():
    timeline = Timeline(open_log(str(corpus("v4/snapshot-form/session-tool-call-turn.session.v4.jsonl")), on_warning=lambda _: None))
    kinds = [(item.kind, item.synthetic) for item in timeline_items(timeline)]
    assert timeline.synthetic
    assert kinds[:6] == [
        ("session", True),
        ("turn", True),
        ("user", True),
        ("context", True),
        ("title", True),
        ("thinking", True),  # the stream's first record: placed after a synthetic gap ...
    ]
    times = timeline.times
    first = timeline.items[5]
    assert times[first.start] - times[timeline.items[4].start] == EVENT_GAP_MS
    # ... and its members keep their recorded spacing (real, not synthetic)
    reasoning = timeline.items[6]
    assert reasoning.kind == "reasoning" and not reasoning.synthetic
    assert "synthetic timing: the log has no event times" in transcript(timeline)


def test_zero_stream_times_get_token_gaps():
    timeline = Timeline(open_log(str(corpus("v2/complete-envelope/webworker-preview-showcase.session.v2.jsonl"))))
    items = timeline_items(timeline)
    text = next(item for item in items if item.kind in ("text", "block"))
    assert text.synthetic  # stream times are all 0: not the recorded clock
    turn = next(item for item in items if item.kind == "turn")
    assert not turn.synthetic  # envelope times are real
    assert TOKEN_GAP_MS > 0


@pytest.mark.corpus
def test_every_corpus_log_replays(tmp_path):
    refused = {"packages-test-support-acp-snapshot-suite-authored-error.jsonl", "packages-test-support-acp-snapshot-suite-no-model.jsonl", "packages-test-support-acp-snapshot-suite-plain-turn.jsonl"}
    for path in sorted(CORPUS.rglob("*.jsonl")):
        if path.name in refused:
            continue
        timeline = Timeline(open_log(str(path), on_warning=lambda _: None))
        text = transcript(timeline)
        assert text.startswith("dsh session"), path
        # fragment by fragment equals whole items
        assert "".join(t for _, t in iter_fragments(timeline)) == text, path
        times = timeline.times
        assert all(times[i] <= times[i + 1] for i in range(len(times) - 1)), path


def timeline_items(timeline: Timeline):
    timeline.ensure_all()
    return timeline.items


# -- transforms -----------------------------------------------------------------------------------


def capped_pauses(times, idle_limit: float) -> list[float]:
    """Seconds between consecutive fragments, each capped at ``idle_limit`` (0 = no cap)."""
    pauses = [max(b - a, 0) / 1000 for a, b in zip(times, times[1:])]
    return [min(pause, idle_limit) for pause in pauses] if idle_limit > 0 else pauses


def test_idle_limit_and_speed_are_transformations_that_leave_the_clock_alone():
    timeline = build(SAMPLES / "tour.session.v4.jsonl")
    timeline.ensure_all()
    last = len(timeline) - 1
    raw = PlaybackClock(timeline, 0)
    assert raw[0] == 0.0
    assert raw[last] == pytest.approx((timeline.times[-1] - timeline.times[0]) / 1000)  # no cap: the recorded span
    pauses = [raw[i + 1] - raw[i] for i in range(last)]
    assert max(pauses) == pytest.approx((30000 - 20602) / 1000)  # the longest pause: turn 3 end → turn 4
    capped = PlaybackClock(timeline, 2.0)
    assert max(capped[i + 1] - capped[i] for i in range(last)) == pytest.approx(2.0)
    assert [capped[i] for i in range(last + 1)] == pytest.approx([0.0, *accumulate(capped_pauses(timeline.times, 2.0))])
    due = capped.due_count(capped[40], 0)  # every fragment whose playback time has come
    assert due > 40 and due == sum(1 for i in range(last + 1) if capped[i] <= capped[40])
    # speed divides the playback time: at speed 4 the capped session takes a quarter of its playback time
    player = Player(timeline, idle_limit=2.0, speed=4.0, now=0.0)
    player.tick(capped[last] / 4 - 0.1)
    assert player.position < len(timeline)
    player.tick(capped[last] / 4 + 0.001)
    assert player.position == len(timeline)
    player.tick(100.0)
    assert timeline.clock_ms(player.position) == 31002 - 990  # the clock shows recorded time
    player.toggle_pause(100.0)  # space at the end starts over
    assert player.position == 0 and not player.paused
    player.tick(100.5)
    assert 0 < player.position < len(timeline)


def test_option_parsers():
    assert parse_from_time("90") == 90_000
    assert parse_from_time("12.5") == 12_500
    assert parse_from_time("01:30") == 90_000
    assert parse_from_time("1:02:03.5") == 3_723_500
    for bad in ("", "abc", "1:75", "-3", "1:2:3:4"):
        with pytest.raises(UsageError):
            parse_from_time(bad)
    assert parse_turns("3") == (3, 3)
    assert parse_turns("2-5") == (2, 5)
    assert parse_turns("2-") == (2, None)
    for bad in ("0", "5-2", "x", "2-3-4", ""):
        with pytest.raises(UsageError):
            parse_turns(bad)


def test_filters():
    path = SAMPLES / "tour.session.v4.jsonl"
    kinds = {item.kind for item in timeline_items(build(path, no_reasoning=True))}
    assert not kinds & {"thinking", "reasoning"}
    assert "thinking" not in transcript(build(path, no_reasoning=True))
    kinds = {item.kind for item in timeline_items(build(path, no_tools=True))}
    assert not kinds & {"tool-start", "tool-name", "tool-args", "tool-end", "tool-call", "tool-result"}
    turns = {item.turn for item in timeline_items(build(path, turns="2-3"))} - {None}
    assert turns == {2, 3}
    text = transcript(build(path, turns="4"))
    assert "━━ turn 4 ━━" in text and "━━ turn 3 ━━" not in text


# -- rendering, stepping, seeking ---------------------------------------------------------------------


@pytest.mark.parametrize("size", [(100, 30), (40, 10)])
def test_stepping_forward_then_back_gives_the_same_screen(size):
    width, height = size
    timeline = build(SAMPLES / "tour.session.v4.jsonl.zstd")
    player = Player(timeline, paused=True)
    for start_steps in (0, 5, 37, 120):
        player.seek(0, 0.0)
        for _ in range(start_steps):
            player.step_forward(0.0)
        before = screen_text(timeline, player.position, width, height)
        for n in (1, 3, 10, 25):
            origin = player.position
            for _ in range(n):
                player.step_forward(0.0)
            assert screen_text(timeline, player.position, width, height) != before or player.position == origin
            for _ in range(n):
                player.step_back(0.0)
            assert screen_text(timeline, player.position, width, height) == before


def test_each_step_shows_exactly_one_more_fragment():
    timeline = build(SAMPLES / "tour.session.v4.jsonl")
    player = Player(timeline, paused=True)
    previous = transcript_prefix(timeline, 0)
    while player.step_forward(0.0):
        current = transcript_prefix(timeline, player.position)
        fragment = view.text(*timeline.locate(player.position - 1))
        assert fragment and current == previous + fragment
        previous = current
    assert player.position == len(timeline)


def transcript_prefix(timeline: Timeline, position: int) -> str:
    return "".join(text for fragment, text in iter_fragments(timeline) if fragment < position)


def test_seeking_to_a_turn_equals_playing_up_to_it():
    for name in ("tour.session.v4.jsonl.zstd", "tour.session.jsonl.zstd"):
        timeline = build(SAMPLES / name)
        for turn in (1, 2, 3, 4):
            seeker = Player(Timeline(open_log(str(SAMPLES / name))), paused=True)
            assert seeker.goto_turn(turn, 0.0)
            player = Player(timeline, idle_limit=2.0, speed=1.0, now=0.0)
            now = 0.0
            target = timeline.ensure_turn(turn) + 1
            while player.position < target:
                now += 0.005
                player.tick(now)
                # playing never skips past a fragment without showing it: stop exactly at the turn header
                if player.position > target:
                    player.seek(target, now)
            assert seeker.position == target
            assert screen_text(seeker.timeline, seeker.position, 80, 24) == screen_text(timeline, target, 80, 24)
            assert screen_text(timeline, target, 80, 24).splitlines()[-1] == f"━━ turn {turn} ━━"


def test_navigation():
    timeline = build(SAMPLES / "tour.session.v4.jsonl")
    player = Player(timeline, paused=True)
    assert player.next_turn(0.0) and timeline.turn_at(player.position) == (1, None)
    assert player.next_turn(0.0) and timeline.turn_at(player.position)[0] == 2
    assert player.prev_turn(0.0) and timeline.turn_at(player.position)[0] == 1
    assert player.next_tool(0.0)
    assert screen_text(timeline, player.position, 80, 24).splitlines()[-1] == "▶ read"
    assert player.next_tool(0.0) and player.next_tool(0.0)
    assert screen_text(timeline, player.position, 80, 24).splitlines()[-1] == "▶ todo_write"
    assert not player.next_tool(0.0) and player.message == "no later tool call"
    assert player.prev_tool(0.0)
    assert player.goto_turn(4, 0.0) and timeline.turn_at(player.position)[0] == 4
    assert not player.goto_turn(9, 0.0) and player.message == "no turn 9"
    assert player.search("syntaxerror", 0.0)
    assert "SyntaxError" in screen_text(timeline, player.position, 100, 30).splitlines()[-1]
    assert player.search("", 0.0)  # repeats the last search, wrapping around
    assert not player.search("no such words anywhere", 0.0)


def test_search_lands_right_after_the_fragment_that_completes_the_match():
    timeline = build(SAMPLES / "tour.session.v4.jsonl")
    position = find_text(timeline, "Node 15 or newer", 0)
    shown = transcript_prefix(timeline, position)
    assert shown.endswith("newer") or shown.rstrip().endswith("newer.")
    assert "Node 15 or newer" not in transcript_prefix(timeline, position - 1)


def test_pause_speed_and_playback_timing():
    timeline = build(SAMPLES / "tour.session.v4.jsonl")
    player = Player(timeline, idle_limit=2.0, speed=1.0, now=0.0)
    player.tick(0.0)
    assert player.position == 1  # the first fragment is due at once
    player.tick(0.0101)
    assert player.position == 2  # turn header 10 ms later
    player.toggle_pause(0.01)
    player.tick(50.0)
    assert player.position == 2 and player.paused
    player.toggle_pause(50.0)
    player.faster(50.0)
    assert player.speed == 2.0
    due = player.next_due(50.0)
    assert due == pytest.approx(0.002 / 2)  # user message 2 ms after the header, at 2×


def test_status_line():
    timeline = build(SAMPLES / "tour.session.v4.jsonl")
    timeline.ensure_all()
    position = next(start + 1 for start, number in timeline.turn_marks if number == 2) + 1
    line = status_text(timeline, position, speed=2.0, paused=True, width=100).plain
    assert line.startswith(" ⏸ · turn 2/4 · step 1 · 00:09.012 / 00:30.012 · 2× ")
    assert "CI on main is red." in line
    assert len(line) == 100
    fixture = Timeline(open_log(str(corpus("v4/snapshot-form/session-read-image.session.v4.jsonl")), on_warning=lambda _: None))
    assert "synthetic timing" in status_text(fixture, 3, speed=1, paused=False, width=120).plain


def test_screen_wraps_and_continues_frames():
    timeline = build(SAMPLES / "tour.session.v4.jsonl")
    timeline.ensure_all()
    end = next(item.start + item.count for item in timeline.items if item.kind == "tool-args" and item.turn == 3)
    rows = screen_text(timeline, end, 30, 12).splitlines()
    assert all(len(row) <= 30 for row in rows)
    framed = [row for row in rows if row.startswith("│ ")]
    assert len(framed) >= 4  # the long write_file arguments wrap inside the frame
    assert screen_text(timeline, 0, 30, 12) == ""


def reference_screen(timeline: Timeline, position: int, width: int, height: int) -> str:
    """The screen by brute force: the whole transcript so far, every line wrapped, the last rows."""
    from rich.console import Console
    from rich.text import Text

    console = Console(width=1000)
    lines = transcript_prefix(timeline, position).expandtabs(4).split("\n")
    if lines and not lines[-1]:
        lines.pop()
    rows: list[str] = []
    for line in lines:
        if line.startswith(BAR):
            body = Text(line[len(BAR) :]).wrap(console, width - len(BAR), overflow="fold") if line != BAR else [Text()]
            rows += [BAR + row.plain for row in body]
        else:
            rows += [row.plain for row in Text(line).wrap(console, width, overflow="fold")] if line else [""]
    return "\n".join(row.rstrip() for row in rows[-height:])


@pytest.mark.parametrize("size", [(40, 10), (100, 30)])
def test_the_screen_is_the_end_of_the_transcript_so_far(size):
    width, height = size
    timeline = build(SAMPLES / "tour.session.v4.jsonl.zstd")
    timeline.ensure_all()
    for position in range(len(timeline) + 1):
        assert screen_text(timeline, position, width, height) == reference_screen(timeline, position, width, height), position


def test_long_streamed_lines_render_as_the_end_of_the_transcript(tmp_path):
    """dsh's benchmark shape: one delta a word, lines of thousands of characters, so the screen's tail
    is cut inside a streamed run (render takes a run's members as one piece)."""
    sys.path.insert(0, str(REPO / "benchmarks"))
    from replay_first_frame import generate

    path = tmp_path / "bench.session.jsonl.zstd"
    generate(path, turns=3, text_deltas=500)
    timeline = build(path)
    timeline.ensure_all()
    for width, height in ((120, 34), (250, 79), (40, 10)):
        for position in range(0, len(timeline) + 1, 89):
            assert screen_text(timeline, position, width, height) == reference_screen(timeline, position, width, height), (width, height, position)


def test_changing_returned_rows_does_not_change_the_next_frame():
    timeline = build(SAMPLES / "tour.session.v4.jsonl")
    timeline.ensure_all()
    before = screen_text(timeline, len(timeline), 60, 20)
    for row in screen_rows(timeline, len(timeline), 60, 20):
        row.truncate(5)
        row.append("changed")
    assert screen_text(timeline, len(timeline), 60, 20) == before


def test_scroll_amount_finds_rows_that_moved():
    assert scroll_amount(["a", "b", "c", "d"], ["b", "c", "d", "e"]) == 1  # text streaming past the bottom
    assert scroll_amount(["a", "b", "c", "d"], ["c", "d", "e", "f"]) == 2
    assert scroll_amount(["b", "c", "d", "e"], ["a", "b", "c", "d"]) == -1  # paging back
    assert scroll_amount(["a", "", "", ""], ["a", "b", "", ""]) == 0  # growing under a short transcript
    assert scroll_amount(["a", "b", "c", "d"], ["w", "x", "y", "z"]) == 0
    assert scroll_amount([], ["a", "b"]) == 0  # nothing drawn yet


# -- the no-keys timed stream -------------------------------------------------------------------------


def test_timed_stream_prints_the_transcript_at_the_capped_pace():
    import io

    timeline = build(SAMPLES / "tour.session.v4.jsonl")
    out = io.StringIO()
    slept: list[float] = []
    clock = [0.0]

    def sleep(seconds):
        slept.append(seconds)
        clock[0] += seconds

    play_stream(timeline, 0, speed=2.0, idle_limit=1.0, color=False, timestamps=False, out=out, sleep=sleep, now=lambda: clock[0])
    # the transcript, a frame's rows folded at the terminal's width (80 for a stream that is none) with their border
    assert out.getvalue() == transcript(build(SAMPLES / "tour.session.v4.jsonl"), width=80)
    assert out.getvalue() != transcript(build(SAMPLES / "tour.session.v4.jsonl"))
    expected = sum(capped_pauses(timeline.times, 1.0)) / 2.0
    assert sum(slept) == pytest.approx(expected, abs=0.05)


# -- exports --------------------------------------------------------------------------------------------


def run_cli(*args, env_extra=None, **kwargs) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("NO_COLOR", None)
    env.update(env_extra or {})
    return subprocess.run([*DSHCTL, *args], capture_output=True, env=env, cwd=REPO, timeout=60, **kwargs)


@pytest.mark.parametrize("name", ["tour.session.v4.jsonl.zstd", "tour.session.jsonl.zstd", "fork-child.session.v2.jsonl"])
def test_v2_cast_plays_in_asciinema_2_and_equals_the_transcript(tmp_path, name):
    asciinema = shutil.which("asciinema") or str(Path(sys.executable).parent / "asciinema")
    if not Path(asciinema).exists():
        pytest.skip("asciinema not installed")
    cast = tmp_path / "tour.cast"
    result = run_cli("--no-color", "replay", str(SAMPLES / name), "--export", str(cast))
    assert result.returncode == 0, result.stderr
    assert b"asciicast v2" in result.stderr
    played = subprocess.run([asciinema, "cat", str(cast)], capture_output=True, timeout=60, stdin=subprocess.DEVNULL)
    assert played.returncode == 0, played.stderr
    piped = run_cli("replay", str(SAMPLES / name))
    assert piped.returncode == 0
    assert played.stdout == piped.stdout.replace(b"\n", b"\r\n")
    lines = cast.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    assert header["version"] == 2 and header["width"] == 100 and header["height"] == 30
    assert header["idle_time_limit"] == 2.0
    events = [json.loads(line) for line in lines[1:]]
    times = [event[0] for event in events]
    assert times == sorted(times) and times[0] == 0
    markers = [event[2] for event in events if event[1] == "m"]
    assert markers[0] == "turn 1" and any(m.startswith("tool: ") for m in markers) or name.startswith("fork")


def test_cast_with_color_equals_the_colored_transcript(tmp_path):
    import io

    timeline = build(SAMPLES / "tour.session.v4.jsonl")
    out = io.StringIO()
    write_cast(timeline, out, version=2, color=True)
    events = [json.loads(line) for line in out.getvalue().splitlines()[1:]]
    output = "".join(e[2] for e in events if e[1] == "o")
    colored = transcript(build(SAMPLES / "tour.session.v4.jsonl"), color=True)
    assert output == colored.replace("\n", "\r\n")
    assert "\x1b[2;3m" in colored  # reasoning dimmed
    assert re.sub(r"\x1b\[[0-9;]*m", "", colored) == transcript(build(SAMPLES / "tour.session.v4.jsonl"))


def test_real_per_fragment_timing_in_the_cast():
    timeline = build(SAMPLES / "tour.session.v4.jsonl")
    events = list(cast_events(timeline, color=False))
    # the 40-delta run of turn 2 step 3: one output event per delta, 13 ms apart
    run = [e for e in events if e[1] == "o" and 11.500 - 0.990 - 1e-6 <= e[0] <= 12.007 - 0.990 + 1e-6]
    deltas = [round((b[0] - a[0]) * 1000) for a, b in zip(run, run[1:])]
    assert deltas.count(13) >= 38


def test_v3_cast_structure(tmp_path):
    cast = tmp_path / "tour.cast"
    assert run_replay(str(SAMPLES / "tour.session.v4.jsonl"), ReplayOptions(export=cast, cast_version=3, cols=120, rows=40, idle_limit=1.5)) == 0
    lines = cast.read_text(encoding="utf-8").splitlines()
    header = json.loads(lines[0])
    assert header["version"] == 3
    assert header["term"] == {"cols": 120, "rows": 40, "type": "xterm-256color"}
    assert header["idle_time_limit"] == 1.5
    assert header["title"] == "Fix the red CI build"
    assert header["timestamp"] == T0 // 1000
    events = [json.loads(line) for line in lines[1:]]
    assert all(len(e) == 3 and e[1] in ("o", "m") and e[0] >= 0 for e in events)
    assert sum(e[0] for e in events) == pytest.approx((31002 - 990) / 1000, abs=1e-3)
    v2 = tmp_path / "v2.cast"
    run_replay(str(SAMPLES / "tour.session.v4.jsonl"), ReplayOptions(export=v2, cast_version=2))
    v2_events = [json.loads(line) for line in v2.read_text(encoding="utf-8").splitlines()[1:]]
    assert [e[1:] for e in v2_events] == [e[1:] for e in events]


def test_markdown_export(tmp_path):
    target = tmp_path / "tour.md"
    assert run_replay(str(SAMPLES / "tour.session.v4.jsonl.zstd"), ReplayOptions(export=target)) == 0
    text = target.read_text(encoding="utf-8")
    assert text.startswith("# Fix the red CI build\n")
    for heading in ("## Turn 1", "## Turn 2", "## Turn 3", "## Turn 4"):
        assert heading in text
    assert "> CI on main is red. Screenshot of the failing job:" in text
    assert "<details><summary>thinking</summary>\n\nA red test job in CI.\n\n</details>" in text
    assert '**tool call** `read`\n\n```json\n{"file_path": "build.log", "limit": 200}\n```' in text
    assert "**result** `read` ✓" in text
    assert "*✗ attempt failed — SERVER: provider returned HTTP 503: upstream overloaded*" in text


def test_ndjson_export_is_the_timeline(tmp_path):
    target = tmp_path / "tour.ndjson"
    assert run_replay(str(SAMPLES / "tour.session.v4.jsonl"), ReplayOptions(export=target)) == 0
    records = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    head, items = records[0], records[1:]
    assert head["type"] == "replay/timeline" and head["origin"] == T0 + 990 and head["originIsEpochMs"]
    assert [(r["kind"], r["t"] + 990, r["turn"], r["step"], r["count"]) for r in items] == [(k, a, turn, step, n) for k, a, _, turn, step, n in TOUR]
    run = next(r for r in items if r["kind"] == "text" and r["count"] == 40)
    assert [o + 990 for o in run["offsets"]] == [11500 + 13 * i for i in range(40)]
    assert "".join(run["fragments"]).startswith("The test job runs on Node 14")
    timeline = build(SAMPLES / "tour.session.v4.jsonl")
    assert list(timeline_records(timeline)) == records


# -- the command line -----------------------------------------------------------------------------------


def test_non_tty_prints_the_transcript_without_waiting():
    result = run_cli("replay", str(SAMPLES / "tour.session.v4.jsonl.zstd"), "--speed", "0.015625")
    assert result.returncode == 0
    assert result.stdout.decode() == transcript(build(SAMPLES / "tour.session.v4.jsonl.zstd"))
    assert b"\x1b[" not in result.stdout


def test_timestamps_turn_and_from():
    result = run_cli("replay", str(SAMPLES / "tour.session.v4.jsonl"), "--timestamps", "--turn", "2")
    lines = result.stdout.decode().splitlines()
    assert lines[0] == "[00:09.010] ━━ turn 2 ━━"
    assert lines[1] == "[00:09.012] ❯ Read build.log and .github/workflows/ci.yml and tell me what broke."
    result = run_cli("replay", str(SAMPLES / "tour.session.v4.jsonl"), "--from", "00:19.01")
    assert result.stdout.decode().startswith("━━ turn 3 ━━\n")
    result = run_cli("replay", str(SAMPLES / "tour.session.v4.jsonl"), "--from", "19.26", "--timestamps")
    assert result.stdout.decode().startswith("[00:19.260] Patching")  # the first fragment at or after 19.26 s


@pytest.mark.parametrize(
    "args",
    [
        ["--speed", "0"],
        ["--speed", "-2"],
        ["--idle-limit", "-1"],
        ["--turns", "5-2"],
        ["--from", "soon"],
        ["--turn", "9"],
        ["--turn", "2", "--from", "3"],
        ["--turn", "1", "--turns", "2-3"],
        ["--export", "out.txt"],
    ],
)
def test_usage_errors_exit_2(args):
    result = run_cli("replay", str(SAMPLES / "tour.session.v4.jsonl"), *args)
    assert result.returncode == 2
    assert result.stderr.startswith(b"dshctl: error: ")
    assert result.stdout == b""


# -- edge cases in a hand-written log -------------------------------------------------------------------


def write_log(path: Path, events: list[tuple[str, dict]], *, start: int = T0, header: dict | None = None) -> Path:
    fields = {"type": "session", "version": 4, "id": "edge", "createdAt": start, "isSeeded": False, "delegationDepth": 0}
    lines = [json.dumps({**fields, **(header or {})})]
    for seq, (kind, data) in enumerate(events):
        record = {"type": kind, "seq": seq, "time": data.pop("_time", start + seq), "data": data}
        if kind in ("user/message", "assistant/message", "tool/result"):
            record["surfaceOp"] = "append"
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def assistant(turn: int, step: int, stream: list, content: list, time: int, **extra) -> tuple[str, dict]:
    message = {"role": "assistant", "content": content, "source": {"kind": "model", "provider": "p", "model": "m"}, "id": f"a{turn}{step}"}
    return "assistant/message", {"turn": turn, "step": step, "message": message, "stream": stream, "_time": time, **extra}


def test_edge_cases_render_safely(tmp_path):
    t = T0 + 1000
    esc = "\x1b[2J\x1b[31m"
    events = [
        ("turn/start", {"turn": 1}),
        ("step/start", {"turn": 1, "step": 1}),
        ("user/message", {"role": "user", "id": "u1", "source": {"kind": "user"}, "content": [{"type": "text", "text": "hi" + esc}]}),
        assistant(
            1,
            1,
            [
                # delta-only stream, interleaved blocks, a clock that steps back (dt -5)
                {"type": "reasoning-chunks", "time0": t, "index": 0, "dt": [10, -5], "texts": ["think", "ing", " more"]},
                {"type": "text-chunks", "time0": t + 20, "index": 1, "dt": [], "texts": ["answer" + esc]},
                {"type": "reasoning-chunks", "time0": t + 30, "index": 0, "dt": [], "texts": [" again"]},
                {"type": "chunk", "time": t + 40, "chunk": {"type": "tool-call-delta", "index": 2, "id": "", "name": "bash", "argumentsDelta": "{\"cmd\":"}},
                {"type": "tool-call-chunks", "time0": t + 50, "index": 2, "dt": [5], "id": "c1", "args": ["\"ls\"", "}"]},
                {"type": "chunk", "time": t + 60, "chunk": {"type": "block-end", "index": 2, "block": {"type": "tool-call", "id": "c1", "name": "bash", "arguments": "{\"cmd\":\"ls\"}"}}},
                {"type": "chunk", "time": t + 61, "chunk": {"type": "finish", "reason": {"kind": "tool-calls"}}},
            ],
            [],
            t + 70,
        ),
        ("tool/call", {"turn": 1, "step": 1, "callId": "c1", "name": "bash", "arguments": "{\"cmd\":\"ls\"}", "_time": t + 80}),
        (
            "tool/result",
            {
                "turn": 1,
                "step": 1,
                "message": {"role": "tool", "source": {"kind": "tool", "callId": "c1"}, "toolCallId": "c1", "content": [{"type": "text", "text": "\n".join(f"line {i}{esc}" for i in range(30))}], "isError": False, "id": "r1"},
                "_time": t + 90,
            },
        ),
        ("step/end", {"turn": 1, "step": 1, "_time": t + 91}),
        ("step/start", {"turn": 1, "step": 2, "_time": t + 100}),
        # a message without a stream: its content is shown whole at the message time
        assistant(1, 2, [], [{"type": "text", "text": "whole answer"}], t + 200),
        ("step/end", {"turn": 1, "step": 2, "_time": t + 201}),
        ("turn/end", {"turn": 1, "reason": {"kind": "error", "error": {"code": "UNKNOWN", "message": "boom"}}, "_time": t + 202}),
    ]
    timeline = Timeline(open_log(str(write_log(tmp_path / "edge.session.v4.jsonl", events))))
    text = transcript(timeline)
    assert "\x1b" not in text and "␛[2J␛[31m" in text
    times = timeline.times
    assert all(times[i] <= times[i + 1] for i in range(len(times) - 1))  # the stepped-back clock is held
    # the reasoning interleaved with the text is shown once, whole, above it (the message's block order)
    assert "✻ thinking\nthinking more again\nanswer␛[2J␛[31m\n╭─ tool call bash\n│ {\"cmd\":\"ls\"}\n╰─\n" in text
    assert "(continued)" not in text
    assert "│ … 10 more lines\n╰─\n" in text  # a result shows its first 20 lines
    assert "whole answer\n── turn 1 failed — UNKNOWN: boom · 1.2 s\n" in text
    whole = next(item for item in timeline.items if item.kind == "block")
    assert times[whole.start] == t + 200
    # the screen renders the escapes as pictures too, and the colored transcript only adds SGR styling
    assert "\x1b" not in screen_text(timeline, len(timeline), 60, 40)
    colored = transcript(Timeline(open_log(str(tmp_path / "edge.session.v4.jsonl"))), color=True)
    assert re.sub(r"\x1b\[[0-9;]*m", "", colored) == text


def test_log_text_cannot_drive_the_terminal(tmp_path):
    """The header's id and cwd, titles and an interleaved tool call's name reach the screen as pictures."""
    esc = "\x1b]0;owned\x07\x1b[2J"
    t = T0 + 1000
    stream = [
        {"type": "chunk", "time": t, "chunk": {"type": "tool-call-delta", "index": 0, "id": "", "name": "sh" + esc, "argumentsDelta": "{"}},
        {"type": "reasoning-chunks", "time0": t + 10, "index": 1, "dt": [], "texts": ["hm"]},
        {"type": "tool-call-chunks", "time0": t + 20, "index": 0, "dt": [], "id": "c1", "args": ["}"]},
        {"type": "chunk", "time": t + 30, "chunk": {"type": "finish", "reason": {"kind": "tool-calls"}}},
    ]
    events = [
        ("session/title", {"title": "T" + esc, "messageSeqs": [], "source": {"kind": "fallback"}}),
        ("turn/start", {"turn": 1}),
        ("step/start", {"turn": 1, "step": 1}),
        assistant(1, 1, stream, [], t + 40),
    ]
    log = write_log(tmp_path / "x.session.v4.jsonl", events, header={"id": "id" + esc, "cwd": "/w" + esc})
    timeline = Timeline(open_log(str(log)))
    text = transcript(timeline)
    assert "\x1b" not in text and "\x07" not in text
    assert "dsh session id␛]0;owned␇␛[2J · log v4 · /w␛]0;owned␇␛[2J" in text
    assert "· title: T␛]0;owned␇␛[2J" in text
    assert "╭─ tool call sh␛]0;owned␇␛[2J\n│ {}\n╰─ (not completed)\n✻ thinking\nhm\n" in text
    status = status_text(timeline, len(timeline), speed=1.0, paused=False, width=200).plain
    assert "T␛]0;owned␇␛[2J" in status
    untitled = write_log(tmp_path / "y.session.v4.jsonl", events[1:], header={"id": "id" + esc})
    title = cast_header(Timeline(open_log(str(untitled))), version=2, cols=80, rows=24, idle_limit=0)["title"]
    assert title == "dsh session id␛]0;owned␇␛[2J"


def drawn_and_markdown(tmp_path) -> tuple[str, str]:
    """The transcript and the markdown export of a stream with raw deltas, interleaved blocks and a cut."""
    t = T0 + 1000
    stream = [
        # a tool call whose deltas cannot be packed (id ""): one item each
        {"type": "chunk", "time": t, "chunk": {"type": "tool-call-delta", "index": 0, "id": "", "name": "edit", "argumentsDelta": '{"old": "│ a",'}},
        {"type": "chunk", "time": t + 5, "chunk": {"type": "tool-call-delta", "index": 0, "id": "", "argumentsDelta": '\n"new": "│ b"}'}},
        # reasoning streamed as one raw delta whose text begins like the header
        {"type": "chunk", "time": t + 10, "chunk": {"type": "reasoning-delta", "index": 1, "text": "✻ thinking\nis what I wrote"}},
        # the tool call streams on after the reasoning: the blocks interleave
        {"type": "chunk", "time": t + 15, "chunk": {"type": "tool-call-delta", "index": 0, "id": "", "argumentsDelta": " "}},
        {"type": "chunk", "time": t + 20, "chunk": {"type": "finish", "reason": {"kind": "error", "failure": {"code": "E", "message": "cut"}}}},
    ]
    events = [("turn/start", {"turn": 1}), ("step/start", {"turn": 1, "step": 1}), assistant(1, 1, stream, [], t + 40)]
    log = write_log(tmp_path / "md.session.v4.jsonl", events)
    return transcript(Timeline(open_log(str(log)))), markdown(Timeline(open_log(str(log))))


def test_markdown_keeps_a_frame_bar_inside_tool_arguments(tmp_path):
    """Markdown takes the arguments as the log has them; it used to strip every "│ " from the drawing."""
    drawn, text = drawn_and_markdown(tmp_path)
    assert '│ {"old": "│ a",\n│ "new": "│ b"} \n╰─ (not completed)\n' in drawn
    assert '**tool call** `edit`\n\n```json\n{"old": "│ a",\n"new": "│ b"} \n```' in text


def test_markdown_keeps_reasoning_that_begins_like_its_header(tmp_path):
    """Markdown takes the reasoning as the log has it; it used to drop a leading "✻ thinking" line."""
    drawn, text = drawn_and_markdown(tmp_path)
    assert "✻ thinking\n✻ thinking\nis what I wrote" in drawn  # the header, then the text
    assert "<details><summary>thinking</summary>\n\n✻ thinking\nis what I wrote\n\n</details>" in text


def test_markdown_leaves_out_the_layout_drawn_between_blocks(tmp_path):
    """A frame's end or a line between blocks is the screen's layout, not the session's."""
    drawn, text = drawn_and_markdown(tmp_path)
    assert '"new": "│ b"} \n╰─ (not completed)\n✻ thinking\n✻ thinking\nis what I wrote\n✗ attempt failed — E: cut' in drawn
    assert "(continued)" not in text and "╰─" not in text and "╭─" not in text
    assert "*✗ attempt failed — E: cut*" in text


HOSTILE_PROSE = "<img src=x onerror=alert(1)> [click](javascript:alert(1)) ![i](data:text/html,x) <javascript:alert(1)> a & b"


def _rendered(document: str) -> str:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").render(document)


def test_markdown_never_passes_html_or_a_link_from_the_log(tmp_path):
    """Text from a log is data: a prompt's or an answer's HTML and links render as the text typed, never
    as a tag or a live javascript:/data: link; markdown formatting and code stay as written."""
    text = (SAMPLES / "tour.session.v4.jsonl").read_text()
    text = text.replace("Now patch ci.yml yourself. Keep it short.", HOSTILE_PROSE + " **bold**")
    answer = HOSTILE_PROSE + r" `<kbd>` \[x\](javascript:y)"
    text = text.replace('"texts":["Patch","ing"," ci",".yml"," now."]', '"texts":' + json.dumps([answer[:9], answer[9:]]))
    text = text.replace("Patching ci.yml now.", json.dumps(answer)[1:-1])
    log = tmp_path / "h.session.v4.jsonl"
    log.write_text(text)
    document = markdown(Timeline(open_log(str(log))))
    html = _rendered(document)
    assert "<img" not in html and "<a " not in html and "<kbd>" not in html.replace("<code>&lt;kbd&gt;</code>", "")
    assert "javascript:" in html  # shown as text
    assert "&lt;img src=x onerror=alert(1)&gt; [click](javascript:alert(1)) ![i](data:text/html,x)" in html  # the same visible text
    assert "<strong>bold</strong>" in html and "<code>&lt;kbd&gt;</code>" in html  # markdown stays markdown
    assert "a &amp;amp; b" not in html and "a &amp; b" in html
    assert "> &lt;img src=x onerror=alert(1)&gt; \\[click\\](javascript:alert(1))" in document  # the prompt, quoted
    assert "Read build.log and .github/workflows/ci.yml" in document  # ordinary prose untouched


def test_markdown_keeps_code_in_prose_literal():
    from dshctl.replay.export import _prose

    fenced = "before <b>\n\n```html\n<b>x</b> & [a](javascript:b)\n```\n\nafter <i>"
    assert _prose(fenced) == "before &lt;b&gt;\n\n```html\n<b>x</b> & [a](javascript:b)\n```\n\nafter &lt;i&gt;"
    assert _prose("> quoted <x>\n> - [ ] task") == "> quoted &lt;x&gt;\n> - \\[ \\] task"
    assert _prose("plain prose, with (parens) and 1 > 0? no: only entities") == "plain prose, with (parens) and 1 &gt; 0? no: only entities"
    assert _prose("no markup at all.") == "no markup at all."
    tricky = "`a\n\n<img src=x onerror=alert(1)>` and ``x`` `y"
    rendered = _rendered(_prose(tricky))
    assert "<img" not in rendered


def _prose_inline_by_scanning(text: str) -> str:
    """The oracle: each backtick opener scans the runs after it for its closer (quadratic on a text of
    many unmatched runs, which is why dshctl indexes them once)."""
    import re

    from dshctl.replay import export

    blank = re.compile(r"\n[ \t>]*\n")
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if i == 0 or text[i - 1] == "\n":
            marker = export._QUOTE_MARKERS.match(text, i)
            if marker:
                out.append(marker.group())
                i = marker.end()
                continue
        if c == "\\" and i + 1 < n and text[i + 1] in export._ASCII_PUNCTUATION:
            out.append(text[i : i + 2])
            i += 2
        elif c == "`":
            j = i
            while j < n and text[j] == "`":
                j += 1
            end = j
            for run in re.finditer("`+", text[j:]):
                start = j + run.start()
                if blank.search(text, j, start):
                    break
                if run.end() - run.start() == j - i:
                    end = j + run.end()
                    break
            out.append(text[i:end])
            i = end
        else:
            out.append(export._PROSE_ESCAPES.get(c, c))
            i += 1
    return "".join(out)


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet="`\n \t>\\<&[]a*", max_size=80))
def test_markdown_code_spans_are_found_as_a_scan_finds_them(text):
    from dshctl.replay.export import _prose_inline

    assert _prose_inline(text) == _prose_inline_by_scanning(text)
