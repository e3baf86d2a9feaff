"""Everyday use (issue 15): tables that never cut a digit, sessions by id or --latest, ls order and
filters, plain folders, warnings summarized, consistency of options, --salvage, the packaged man page."""

from __future__ import annotations

import json
import os
import re
import tomllib
from pathlib import Path

import pytest
import zstandard

from conftest import REPO, SAMPLES, invoke as run_cli, sample

TOUR = sample("tour.session.v4.jsonl")
TORN = sample("torn-tail.session.v4.jsonl")
LONG_ID = "session-7c1e5a2d-3b9f-4e61-a8d4-2f0b6c9e1a57-with-a-long-agent-suffix"


@pytest.fixture(autouse=True)
def columns_make_a_terminal(monkeypatch):
    """These tests draw at a width: with COLUMNS set, standard output counts as a terminal (boxed tables
    fitted to it); without, as the pipe CliRunner gives (plain tables)."""
    import dshctl.tables

    monkeypatch.setattr(dshctl.tables, "stdout_is_terminal", lambda: bool(os.environ.get("COLUMNS")))


def invoke(*args: str, columns: int | None = None, home: Path | None = None, cwd: Path | None = None):
    env = {"COLUMNS": str(columns) if columns else None, "DSH_HOME": str(home) if home else None}
    return run_cli(*args, env=env, cwd=cwd)


def session_log(root: Path, session_id: str, *, cwd: str = "/home/alice/proj", source: Path = TOUR,
                created: int | None = None, mtime: float | None = None) -> Path:
    """``source`` as the log of session ``session_id`` of project ``cwd`` under ``root``."""
    from dshctl.source import project_key

    lines = source.read_bytes().split(b"\n")
    header = json.loads(lines[0])
    header.update(id=session_id, cwd=cwd)
    if created is not None:
        header["createdAt"] = created
    directory = root / project_key(cwd) / session_id
    directory.mkdir(parents=True)
    path = directory / "session.v4.jsonl"
    path.write_bytes(b"\n".join([json.dumps(header).encode(), *lines[1:]]))
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


@pytest.fixture
def home(tmp_path) -> Path:
    """$DSH_HOME with three sessions: two sharing an id prefix, the newest written in /home/bob/other."""
    root = tmp_path / "home" / "sessions"
    session_log(root, "session-7c1e5a2d-aaaa", created=1_790_000_000_000, mtime=1_000_000)
    session_log(root, "session-7c1e9999-bbbb", created=1_790_000_100_000, mtime=3_000_000, source=TORN)
    session_log(root, "agent-session-0f00dead", cwd="/home/bob/other", created=1_790_000_200_000, mtime=2_000_000)
    return tmp_path / "home"


# --------------------------------------------------------------------------------------------------
# Tables


def table_lines(stdout: str) -> list[str]:
    return [line for line in stdout.splitlines() if line[:1] in "┃│┏┡└"]


@pytest.mark.parametrize("width", [40, 80, 120, 250])
def test_print_table_never_cuts_a_number_and_says_what_it_hid(width, capsys, monkeypatch):
    from dshctl.tables import number, print_table, text

    monkeypatch.setenv("COLUMNS", str(width))
    columns = [text("session", fold=True), number("turns"), number("out"), number("tok/s", drop=1),
               number("cache hit", drop=0), text("title", fold=True, drop=2)]
    rows = [[LONG_ID, "1,200", "100.2K", "1,234.5", "97%", "a title long enough to fold " * 3],
            ["session-x", "7", "3", "2.0", "—", "t"]]
    print_table("sessions", columns, rows, color=False)
    out = capsys.readouterr().out
    assert all(len(line) <= width for line in out.splitlines())
    out = " ".join(out.splitlines())  # the footer may fold
    for figure in ("1,200", "100.2K"):  # never dropped, never cut
        assert figure in out
    hidden = re.search(r"hidden to fit \d+ columns: (.*) \(", out)
    shown = {"tok/s": "1,234.5" in out, "cache hit": "97%" in out, "title": "a title" in out}
    for name, present in shown.items():
        assert present or (hidden and name in hidden.group(1)), (name, out)
    if width == 250:
        assert hidden is None and LONG_ID in out


@pytest.mark.parametrize("columns", [None, "40"])
def test_a_pipe_gets_one_row_per_line_whatever_its_length(capsys, monkeypatch, columns):
    import dshctl.tables
    from dshctl.tables import number, print_table, text

    monkeypatch.setattr(dshctl.tables, "stdout_is_terminal", lambda: False)
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)  # an exported COLUMNS folds nothing in a pipe
    print_table(None, [text("id", fold=True), number("n"), text("title", fold=True)],
                [[LONG_ID, "12,345", "x" * 300], ["b", "1", "y"]], color=False)
    lines = capsys.readouterr().out.splitlines()
    assert not table_lines("\n".join(lines))  # no borders
    assert len(lines) == 3  # the header and two rows: no row wrapped
    assert lines[1].split() == [LONG_ID, "12,345", "x" * 300] and lines[2].split() == ["b", "1", "y"]
    assert lines[0].index("n") + 1 == lines[1].index("12,345") + len("12,345")  # numbers right-aligned


@pytest.mark.parametrize("width", [40, 80, 120, 250])
def test_stats_tables_keep_every_figure_whole(home, width):
    root = home / "sessions"
    document = json.loads(invoke("stats", "--json", str(root)).stdout)
    result = invoke("stats", str(root), columns=width)
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert all(len(line) <= width for line in table_lines(out))
    sessions_table = out.split("sessions\n", 1)[1].split("session(s)")[0]
    assert "in+out" in sessions_table  # never hidden: what a session burnt
    for session in document["sessions"]:
        if width >= 80:  # the out column: hidden before in+out only, whole
            assert re.search(rf"│ +{session['outputTokens']:,} │", sessions_table)
    if width == 250:
        assert "session-7c1e5a2d" in out and "session-7c1e9999" in out  # unique prefixes, not session-…
        assert "/home/bob/other" in out  # the cwd column
        assert "hidden to fit" not in sessions_table
    if width <= 80:
        assert "hidden to fit" in out


def test_stats_by_turn_on_80_columns_shows_every_digit(home):
    result = invoke("stats", "--by", "step", str(home / "sessions"), columns=80)
    document = json.loads(invoke("stats", "--by", "step", "--json", str(home / "sessions")).stdout)
    for row in document["steps"]:
        if row["outputTokens"]:
            assert f"{row['outputTokens']:,}" in result.stdout


def test_warnings_of_many_logs_are_summarized_after_the_table(tmp_path):
    root = tmp_path / "sessions"
    for index in range(6):
        session_log(root, f"torn-{index}", source=TORN)
    result = invoke("stats", str(root), columns=120)
    assert result.exit_code == 0
    warnings = [line for line in result.stderr.splitlines() if "warning" in line]
    assert len(warnings) == 1 and warnings[0].startswith("dshctl: warning: torn tail dropped in 6 logs (")
    assert "N bytes" not in warnings[0] and " bytes, no final LF): " in warnings[0]  # numbers, not placeholders
    assert "and 3 more; --verbose lists each" in warnings[0]
    verbose = invoke("stats", "--verbose", str(root), columns=120)
    assert len([line for line in verbose.stderr.splitlines() if "torn tail" in line]) == 6
    document = json.loads(invoke("stats", "--json", str(root)).stdout)
    assert all(len(session["warnings"]) == 1 for session in document["sessions"])


def test_no_color_after_the_command(home):
    for args in (["stats", str(home / "sessions"), "--no-color"], ["ls", str(home / "sessions"), "--no-color"],
                 ["cat", str(TOUR), "--no-color"], ["validate", str(TOUR), "--no-color"],
                 ["grep", "-F", "CI", str(TOUR), "--no-color"], ["images", str(TOUR), "--no-color"],
                 ["replay", "--instant", str(TOUR), "--no-color"]):
        assert invoke(*args).exit_code == 0, args


# --------------------------------------------------------------------------------------------------
# Sessions by id, prefix and --latest


def test_a_session_id_or_unique_prefix_names_a_session(home):
    for name in ("agent-session-0f00dead", "0f00", "agent-session-0f", "session-7c1e5a2d"):
        result = invoke("cat", "--type", "session/title", name, home=home)
        assert result.exit_code == 0, (name, result.output)
    assert invoke("replay", "--instant", "7c1e5a2d", home=home).exit_code == 0
    assert invoke("stats", "--json", "7c1e9", home=home).exit_code == 0


def test_an_ambiguous_prefix_lists_the_candidates(home):
    result = invoke("replay", "--instant", "7c1e", home=home)
    assert result.exit_code == 2
    assert "ambiguous" in result.stderr
    assert "session-7c1e5a2d-aaaa" in result.stderr and "session-7c1e9999-bbbb" in result.stderr


def test_an_unknown_id_is_a_clear_error(home):
    result = invoke("cat", "nosuchsession", home=home)
    assert result.exit_code == 2
    assert "no such file, directory or session id" in result.stderr


def test_latest_is_the_most_recently_written_session(home):
    latest = invoke("stats", "--json", "--latest", home=home)
    assert [s["id"] for s in json.loads(latest.stdout)["sessions"]] == ["session-7c1e9999-bbbb"]
    bob = home.parent / "home" / "bob-project"
    in_project = invoke("stats", "--json", "--latest", "--project", "/home/bob/other", home=home)
    assert [s["id"] for s in json.loads(in_project.stdout)["sessions"]] == ["agent-session-0f00dead"]
    assert invoke("cat", "--latest", str(TOUR), home=home).exit_code == 2  # PATH or --latest
    nothing = invoke("cat", "--latest", "--project", str(bob), home=home)
    assert nothing.exit_code == 2 and "no session for project" in nothing.stderr
    assert invoke("cat", "--project", ".", str(TOUR)).exit_code == 2  # --project needs --latest
    hits = invoke("grep", "-c", "--ndjson", ".", "--latest", home=home)
    assert [json.loads(line)["id"] for line in hits.stdout.splitlines()] == ["session-7c1e9999-bbbb"]


def test_short_ids_are_unique_prefixes():
    from dshctl.source import id_matches, short_ids

    ids = ["session-7c1e5a2d-1", "session-7c1e5a2d-2", "session-0000aaaa-x", "bare"]
    short = short_ids(ids)
    assert short == {"session-7c1e5a2d-1": "session-7c1e5a2d-1", "session-7c1e5a2d-2": "session-7c1e5a2d-2",
                     "session-0000aaaa-x": "session-0000aaaa", "bare": "bare"}
    for session_id, prefix in short.items():
        assert [other for other in ids if id_matches(other, prefix)] == [session_id]


# --------------------------------------------------------------------------------------------------
# ls


def ls_ids(*args: str, home: Path | None = None) -> list[str]:
    result = invoke("ls", "--ndjson", *args, home=home)
    assert result.exit_code == 0, result.output
    return [json.loads(line)["id"] for line in result.stdout.splitlines()]


def test_ls_sorts_newest_last_and_by_created_size_title(home):
    root = str(home / "sessions")
    assert ls_ids(root) == ["session-7c1e5a2d-aaaa", "agent-session-0f00dead", "session-7c1e9999-bbbb"]
    assert ls_ids(root, "--sort", "created") == ["session-7c1e5a2d-aaaa", "session-7c1e9999-bbbb", "agent-session-0f00dead"]
    assert ls_ids(root, "--sort", "size")[0] == "session-7c1e9999-bbbb"  # the torn sample is the small one
    assert ls_ids(root, "--sort", "title")[-1] == "session-7c1e9999-bbbb"  # no title: last


def test_ls_filters_by_time_and_project_and_shows_turns_and_duration(home):
    root = str(home / "sessions")
    assert ls_ids(root, "--since", "1790000100000") == ["agent-session-0f00dead", "session-7c1e9999-bbbb"]
    assert ls_ids(root, "--until", "1790000100000") == ["session-7c1e5a2d-aaaa"]
    assert ls_ids(root, "--project", "/home/bob/other") == ["agent-session-0f00dead"]
    row = json.loads(invoke("ls", "--json", root).stdout)["sessions"][0]
    assert row["turns"] == 4 and row["durationMs"] == 31_002  # createdAt → the time of the last record
    table = invoke("ls", root, columns=120).stdout
    assert "turns" in table and "duration" in table


def test_project_is_the_directory_dsh_stores_sessions_under(tmp_path):
    """``ls --project`` and ``--latest --project`` match alike, by the project directory dsh names after
    the cwd: escaped (a space, a ``~``) and lossy (``/srv/a-b`` and ``/srv/a/b`` are one directory)."""
    home = tmp_path / "home"
    root = home / "sessions"
    here = tmp_path / "dev proj~1"
    here.mkdir()
    session_log(root, "spaced", cwd=str(here), mtime=1_000_000)
    session_log(root, "dashed", cwd="/srv/a-b", mtime=2_000_000)
    session_log(root, "nested", cwd="/srv/a/b", mtime=3_000_000)
    session_log(root, "parent", cwd="/srv/a", mtime=4_000_000)
    for project, ids in [(str(here), ["spaced"]), ("/srv/a-b", ["dashed", "nested"]), ("/srv/a/b/", ["dashed", "nested"]),
                         ("/srv/a", ["parent"])]:
        assert ls_ids(str(root), "--project", project) == ids
        latest = invoke("stats", "--json", "--latest", "--project", project, home=home)
        assert [s["id"] for s in json.loads(latest.stdout)["sessions"]] == ids[-1:]
    assert invoke("ls", "--ndjson", "--project", ".", home=home, cwd=here).stdout.count('"id"') == 1
    assert json.loads(invoke("cat", "--raw", "--latest", "--project", ".", home=home, cwd=here).stdout.splitlines()[0])["id"] == "spaced"


def test_plain_folders_of_logs_and_symlinks_are_read_alike(tmp_path):
    folder = tmp_path / "downloaded"
    folder.mkdir()
    (folder / "a.jsonl").write_bytes(TOUR.read_bytes())
    (folder / "nested").mkdir()
    (folder / "nested" / "b.jsonl.zstd").write_bytes((SAMPLES / "tour.session.v4.jsonl.zstd").read_bytes())
    (folder / "link.jsonl").symlink_to(folder / "a.jsonl")
    listed = json.loads(invoke("ls", "--json", str(folder)).stdout)["sessions"]
    counted = json.loads(invoke("stats", "--json", str(folder)).stdout)["sessions"]
    assert len(listed) == len(counted) == 2  # the symlink reaches a.jsonl again: read once by both
    assert {row["generation"] for row in listed} == {4}  # by the header, whatever the name
    assert invoke("validate", str(folder)).exit_code == 0


# --------------------------------------------------------------------------------------------------
# Consistency


def test_cat_raw_refuses_filters_it_cannot_apply():
    for extra in (["--type", "turn/*"], ["--turn", "1"], ["--expand"]):
        result = invoke("cat", "--raw", *extra, str(TOUR))
        assert result.exit_code == 2 and "--raw" in result.stderr and extra[0] in result.stderr


def test_stream_chunks_are_selectable_on_their_own():
    result = invoke("cat", "--expand", "--type", "stream/chunk", str(TOUR))
    types = {json.loads(line)["type"] for line in result.stdout.splitlines()}
    assert types == {"stream/chunk"}


@pytest.mark.parametrize("log", [TORN, SAMPLES / "torn-tail.session.v4.jsonl.zstd"])
def test_cat_strict_on_a_torn_log_says_it_once(log):
    result = invoke("cat", "--strict", str(log))
    assert result.exit_code == 2
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dshctl: error:")
    assert len(re.findall(r"\b1[13]\b", lines[0])) == 1  # the line named once


def test_help_texts():
    stats_help = invoke("stats", "--help", columns=200).stdout
    assert "7d" in stats_help and "ISO 8601" in stats_help
    images_help = invoke("images", "--help", columns=200).stdout
    assert "{turn}" in images_help and "{step}" in images_help
    result = invoke("images", "--force", str(TOUR))
    assert "--force only applies with --out DIR" in result.stderr


# --------------------------------------------------------------------------------------------------
# Salvage


@pytest.fixture
def damaged(tmp_path) -> Path:
    """The tour log as zstd frames of four lines each, the third frame's checksum made wrong."""
    lines = TOUR.read_bytes().split(b"\n")[:-1]
    compressor = zstandard.ZstdCompressor(write_content_size=True, write_checksum=True)
    frames = [compressor.compress(b"\n".join(lines[i : i + 4]) + b"\n") for i in range(0, len(lines), 4)]
    data = bytearray(b"".join(frames))
    middle = len(frames[0]) + len(frames[1]) + len(frames[2]) // 2
    data[middle : middle + 8] = bytes(byte ^ 0xFF for byte in data[middle : middle + 8])
    path = tmp_path / "damaged.session.v4.jsonl.zstd"
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize("command", [["cat"], ["stats"], ["replay", "--instant"], ["cat", "--raw"]])
def test_salvage_reads_past_a_corrupt_frame_and_exits_1(damaged, command):
    refused = invoke(*command, str(damaged), columns=120)
    assert refused.exit_code == 2
    assert refused.stderr.rstrip().endswith("corrupt zstd frame 3: Restored data doesn't match checksum; "
                                            "--salvage (cat, stats, replay) reads past the damaged frame")
    assert refused.stdout == "" or "--raw" in command  # the raw lines stream up to the damage
    salvaged = invoke(*command, "--salvage", str(damaged), columns=120)
    assert salvaged.exit_code == 1, salvaged.output
    assert len(salvaged.stdout) > len(refused.stdout)
    assert "salvage: corrupt zstd frame 3" in salvaged.stderr


def test_salvage_in_json_keeps_the_gaps(damaged):
    result = invoke("stats", "--json", "--salvage", str(damaged))
    session = json.loads(result.stdout)["sessions"][0]
    assert [gap["message"].split(";")[0] for gap in session["gaps"]] == [
        "corrupt zstd frame 3: Restored data doesn't match checksum",
        "seq gap in committed region: expected seq 7, found 11",
    ]


def test_salvage_skips_a_damaged_line_of_a_raw_log(tmp_path):
    lines = TOUR.read_bytes().split(b"\n")
    lines[5] = b'{"broken'
    path = tmp_path / "raw.session.v4.jsonl"
    path.write_bytes(b"\n".join(lines))
    assert invoke("cat", str(path)).exit_code == 2
    result = invoke("cat", "--salvage", str(path))
    assert result.exit_code == 1 and len(result.stdout.splitlines()) == len(lines) - 2  # header kept, one lost
    assert "line 6: salvage: unparsable committed record" in result.stderr
    assert invoke("cat", "--salvage", "--strict", str(path)).exit_code == 2


# --------------------------------------------------------------------------------------------------
# replay options


@pytest.mark.parametrize("args, message", [
    (["--from", "1:00:00"], "--from 1:00:00: past the end of the log"),
    (["--turns", "9-"], "--turns 9-: the log has no turn in that range"),
    (["--speed", "1e-300"], "--speed must be between 1/64"),
    (["--speed", "4096"], "--speed must be between 1/64"),
])
def test_replay_refuses_what_would_show_nothing(args, message):
    result = invoke("replay", "--instant", *args, str(TOUR))
    assert result.exit_code == 2 and message in result.stderr and result.stdout == ""


def test_the_status_line_at_40_columns_keeps_state_position_duration_speed():
    from dshctl.reader import open_log
    from dshctl.replay.render import status_text
    from dshctl.replay.timeline import Timeline

    timeline = Timeline(open_log(str(TOUR)))
    timeline.ensure_all()
    position = len(timeline) // 2
    for width in (40, 60, 100):
        line = status_text(timeline, position, speed=2.0, paused=True, width=width).plain
        assert len(line) == width
        assert re.match(r" ⏸ · (turn \d/4 · (step \d · )?)?\d\d:\d\d\.\d{3} / 00:30\.012 · 2×", line), line
    assert "CI on main" not in status_text(timeline, position, speed=2.0, paused=True, width=40).plain


def test_player_seeks_five_seconds_and_jumps_by_tenths():
    from dshctl.reader import open_log
    from dshctl.replay.player import Player
    from dshctl.replay.timeline import Timeline

    timeline = Timeline(open_log(str(TOUR)))
    player = Player(timeline, paused=True)
    player.jump_to_percent(50, 0.0)
    assert timeline.clock_ms(player.position) <= timeline.duration_ms // 2 < timeline.clock_ms(player.position + 1)
    assert player.clock_ms == timeline.duration_ms // 2  # the clock at 50 %, not at the last fragment before
    middle = player.position
    player.seek_ahead(0.0)
    ahead = player.position
    assert ahead > middle
    player.seek_back(0.0)
    assert player.position < ahead
    assert timeline.clock_ms(player.position) <= max(timeline.clock_ms(ahead) - 5000, timeline.clock_ms(ahead - 1))
    player.jump_to_percent(0, 0.0)
    assert player.position == 0


# --------------------------------------------------------------------------------------------------
# Packaging


def test_the_man_page_is_installed_into_share_man_man1():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert project["tool"]["setuptools"]["data-files"]["share/man/man1"] == ["man/dshctl.1"]
    assert (REPO / "man" / "dshctl.1").read_text().startswith(".TH DSHCTL 1")


# --------------------------------------------------------------------------------------------------
# Review of issues 15 and 16


def header_words(out: str) -> list[str]:
    """The words of a table's header, its lines joined column by column."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("┏")) + 1
    end = next(i for i, line in enumerate(lines) if line.startswith("┡"))
    cells = [[cell.strip() for cell in line.strip("┃").split("┃")] for line in lines[start:end]]
    return [" ".join(filter(None, column)) for column in zip(*cells)]


@pytest.mark.parametrize("width", [None, 80, 120])
def test_a_header_keeps_every_word(width, capsys, monkeypatch):
    from dshctl.tables import number, print_table, text

    if width is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", str(width))
    headers = ["session", "mean TTFT", "billed in", "cache hit", "p90 TTFT", "tool time", "tok/s by step"]
    columns = [text(headers[0], fold=True)] + [number(header) for header in headers[1:]]
    print_table(None, columns, [["session-1", "1s", "2", "3%", "4s", "5s", "6"]], color=False)
    out = capsys.readouterr().out
    if width is None:  # to a pipe: one header line, every header whole
        assert re.split(r"\s{2,}", out.splitlines()[0].strip()) == headers
        return
    assert header_words(out) == headers


def test_rollup_headers_say_which_cache_figure(home):
    result = invoke("stats", "--by", "day", str(home / "sessions"), columns=250)
    assert {"uncached in", "cache read", "cache write", "cache hit", "mean TTFT", "p90 TTFT"} <= set(header_words(result.stdout))


def session_column(out: str) -> list[str]:
    return [line.split("│")[1].strip() for line in out.splitlines() if line.startswith("│")]


def test_a_short_id_is_unique_in_the_sessions_root_not_only_among_the_rows(tmp_path):
    root = tmp_path / "home" / "sessions"
    shown = session_log(root, "session-12345678ab-0000")
    session_log(root, "session-12345678cd-0000")
    for args in (["stats", str(shown.parent), str(TOUR)], ["stats", "--by", "turn", "--top", "2", str(shown.parent), str(TOUR)]):
        result = invoke(*args, home=tmp_path / "home", columns=250)
        names = [name for name in session_column(result.stdout) if name.startswith("session-1234")]
        assert names and set(names) == {"session-12345678a"}, result.stdout
        assert invoke("cat", "--type", "session/title", names[0], home=tmp_path / "home").exit_code == 0


def test_short_ids_read_prefixes_as_find_session_does():
    from dshctl.source import id_matches, short_ids

    among = ["session-barebarebare", "session-7c1e5a2d-9", "agent-session-7c1e5a2d-8"]
    short = short_ids(["barebarebare-1", "session-7c1e5a2d-1"], among=among)
    everyone = [*among, *short]
    for session_id, prefix in short.items():
        assert [other for other in everyone if id_matches(other, prefix)] == [session_id], (session_id, prefix)


@pytest.mark.parametrize("width", [40, 80])
@pytest.mark.parametrize("by", ["session", "turn"])
def test_a_short_id_stays_whole_while_a_column_can_be_hidden(tmp_path, width, by):
    root = tmp_path / "sessions"
    for index in range(3):
        session_log(root, f"session-aaaa111{index}-0000-4000-8000-00000000000{index}")
    result = invoke("stats", "--by", by, str(root), columns=width)
    names = session_column(result.stdout.split("sessions\n")[-1] if by == "session" else result.stdout)
    assert {"session-aaaa1110", "session-aaaa1111", "session-aaaa1112"} <= set(names), result.stdout


def test_a_fold_leaves_no_one_or_two_characters_alone(capsys, monkeypatch):
    from dshctl.tables import layout, number, text

    columns = [text("id", fold=True), number("n"), number("figure", drop=0), text("model", fold=True)]
    rows = [["session-aaaa1111", "12,345", "1.5s", "acme/mystery-model"]]
    for width in range(30, 60):
        fitted = layout(columns, [list(row) for row in rows], width)
        assert fitted.width <= width or width < 34  # 34: id and model at 8, every column hidden that can be
        for i in (fitted.shown if fitted.width <= width else []):
            for word in rows[0][i].split():
                tail = len(word) % fitted.widths[i]
                assert len(word) <= fitted.widths[i] or tail == 0 or tail > 2, (width, fitted)


def test_play_goes_on_from_the_time_a_digit_jump_showed():
    from dshctl.reader import open_log
    from dshctl.replay.player import Player
    from dshctl.replay.timeline import Timeline

    timeline = Timeline(open_log(str(TOUR)))
    player = Player(timeline, paused=True, idle_limit=60.0)
    player.jump_to_percent(50, 0.0)
    sought, gap_end = player.clock_ms, timeline.clock_ms(player.position + 1)
    player.toggle_pause(10.0)
    assert player.next_due(10.0) == pytest.approx((gap_end - sought) / 1000)
    player.tick(10.0 + (gap_end - sought) / 1000)
    assert player.clock_ms == gap_end  # the next fragment shown: its own time again


@pytest.mark.skipif(__import__("shutil").which("groff") is None, reason="groff is not installed")
@pytest.mark.parametrize("width", ["60", "80", "120"])
def test_the_man_page_renders_without_troff_warnings(width):
    import subprocess

    result = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", "-rLL=" + width + "n", str(REPO / "man" / "dshctl.1")],
                            capture_output=True, text=True, timeout=60)
    assert result.stderr == ""
