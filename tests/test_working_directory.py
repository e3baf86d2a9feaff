"""dsh 0.2.1-alpha.2 logs (v4, same version): ``working-directory/change {cwd}`` moves a session's
effective directory, the header keeps the original project; ``deliverables/presented`` lists presented
files. The sample ``cwd-change.session.v4.jsonl`` is a subagent child that starts with a change (into
``docs``), moves again with the ``working_directory`` tool (``docs/site``, seq 12) and presents a file.

Every command reads them: validate accepts and checks them, cat knows them, replay shows each change in
every output, stats says where the session ended up, grep places what follows them as before, and ls and
``--project`` go on grouping by the header's project, as dsh does.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dshctl.reader import open_log
from dshctl.replay.export import cast_events, markdown, timeline_records
from dshctl.replay.render import screen_text
from dshctl.replay.timeline import Timeline
from dshctl.replay.transcript import transcript
from dshctl.replay.transform import make_filters

from conftest import REPO, SAMPLES, invoke as run_cli, sample

LOGS = [sample("cwd-change.session.v4.jsonl"), sample("cwd-change.session.v4.jsonl.zstd")]
LOG = LOGS[0]
CWD = "/home/alice/dev/dsh tour"
DOCS, SITE = f"{CWD}/docs", f"{CWD}/docs/site"
LINES = [f"· working directory → {DOCS}", f"· working directory → {SITE}"]


def invoke(*args: str):
    return run_cli(*args, env={"TZ": "UTC", "COLUMNS": "80"})


def timeline(path: Path = LOG) -> Timeline:
    built = Timeline(open_log(str(path)), make_filters())
    built.ensure_all()
    return built


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_the_sample_validates_clean(path):
    result = invoke("validate", "--strict", "--format", "json", str(path))
    assert result.exit_code == 0, result.stdout
    assert json.loads(result.stdout)["logs"][0]["findings"] == []


def test_cat_knows_both_events():
    result = invoke("cat", "--type", "working-directory/*", "--type", "deliverables/*", str(LOG))
    assert result.exit_code == 0
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(r["type"], r["seq"]) for r in records] == [
        ("working-directory/change", 0), ("working-directory/change", 12), ("deliverables/presented", 22)]
    assert records[1]["data"] == {"cwd": SITE}
    assert records[2]["data"]["files"] == [{"path": "index.html", "description": "The docs home page"}]
    assert all("notes" not in r for r in records)  # an unknown type would carry the reader's note


@pytest.mark.parametrize("path", LOGS, ids=lambda p: p.name)
def test_replay_shows_each_change_in_the_transcript_where_it_happened(path):
    text = transcript(timeline(path), color=False)
    lines = text.splitlines()
    assert [line for line in lines if "working directory" in line] == LINES
    # the first before the turn, the second after the tool call that made it and before its result
    assert lines.index(LINES[0]) < lines.index("━━ turn 1 ━━")
    assert lines.index("▶ working_directory") < lines.index(LINES[1]) < lines.index("╭─ result: working_directory ✓")
    assert lines[0].startswith("dsh session e8c1f3a5") and CWD in lines[0]  # the header's project


def test_replay_markdown_ndjson_cast_and_screen_show_the_change():
    built = timeline()
    document = markdown(built)
    assert f"*· working directory → {DOCS}*" in document and f"*· working directory → {SITE}*" in document
    notes = [r for r in timeline_records(built) if r.get("kind") == "note" and r.get("info", {}).get("cwd")]
    assert [(r["kind"], r["seq"], r["turn"], r["step"], r["text"], r["info"]) for r in notes] == [
        ("note", 0, None, None, LINES[0] + "\n", {"cwd": DOCS}),
        ("note", 12, 1, 1, LINES[1] + "\n", {"cwd": SITE}),
    ]
    cast = "".join(data for _, code, data in cast_events(built, color=False) if code == "o")
    assert LINES[0] in cast and LINES[1] in cast
    after_second = next(item.start + 1 for item in built.items if item.seq == 12)
    assert LINES[1] in screen_text(built, after_second, 100, 30)  # the player's screen once it is shown


def test_replay_cli_at_80_columns_and_in_a_pipe():
    result = invoke("replay", "--instant", str(LOG))
    assert result.exit_code == 0
    assert [line for line in result.stdout.splitlines() if "working directory" in line] == LINES


def test_a_cwd_is_shown_as_data(tmp_path):
    from dshctl.replay.view import body_text

    objs = [json.loads(line) for line in LOG.read_text(encoding="utf-8").splitlines()]
    objs[1]["data"]["cwd"] = "/tmp/\x1b[31mred\x1b]0;title\x07"
    path = tmp_path / "cwd.session.v4.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf-8")
    shown = [body_text(item) for item in timeline(path).items if item.info and item.info.get("note") == "working-directory"]
    assert len(shown) == 2 and "red" in shown[0]
    assert all("\x1b" not in text and "\x07" not in text for text in shown)


def test_stats_json_names_the_last_working_directory():
    result = invoke("stats", "--json", str(LOG))
    assert result.exit_code == 0
    session = json.loads(result.stdout)["sessions"][0]
    assert session["cwd"] == CWD  # the header's: the original project
    assert session["workingDirectory"] == SITE
    keys = list(session)
    assert keys.index("workingDirectory") == keys.index("title") + 1


def test_stats_of_a_log_that_never_moves_has_no_working_directory_key():
    result = invoke("stats", "--json", str(SAMPLES / "tour.session.v4.jsonl"))
    assert "workingDirectory" not in json.loads(result.stdout)["sessions"][0]


def test_grep_places_what_follows_a_change_as_before_and_does_not_search_the_path():
    result = invoke("grep", "--ndjson", "-F", "docs/site", str(LOG))
    hits = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(h["kind"], h["turn"], h["step"], h["seq"]) for h in hits] == [
        ("tool-result", 1, 1, 14),  # the tool's answer, after the change at seq 12
        ("assistant", 1, 3, 25),
    ]
    noticed = invoke("grep", "--ndjson", "--in", "context", "-F", "docs/site", str(LOG))
    assert [(json.loads(line)["kind"], json.loads(line)["seq"]) for line in noticed.stdout.splitlines()] == [("context", 18)]


def test_ls_and_project_group_by_the_header_project(tmp_path):
    """dsh stores a session under its header's project (the original cwd), and so do ls and --project read
    it, however far the session moved."""
    project = tmp_path / "sessions" / "--home-alice-dev-dsh~0020tour--" / "e8c1f3a5-7b9d-4e2f-8a6c-0d4b2f6e8a13"
    project.mkdir(parents=True)
    shutil.copy(SAMPLES / "cwd-change.session.v4.jsonl.zstd", project / "session.v4.jsonl.zstd")
    root = str(tmp_path / "sessions")
    listed = json.loads(invoke("ls", "--json", root).stdout)["sessions"]
    assert [(s["id"], s["cwd"]) for s in listed] == [("e8c1f3a5-7b9d-4e2f-8a6c-0d4b2f6e8a13", CWD)]
    assert len(json.loads(invoke("ls", "--json", "--project", CWD, root).stdout)["sessions"]) == 1
    assert json.loads(invoke("ls", "--json", "--project", SITE, root).stdout)["sessions"] == []


def test_the_commands_in_a_fresh_process_at_80_columns():
    """What a user runs, in a process of its own with its output in a pipe."""
    env = dict(os.environ, COLUMNS="80", NO_COLOR="1", TZ="UTC")
    for args in (["replay", "--instant", str(LOG)], ["stats", str(LOG)], ["cat", str(LOG)], ["validate", str(LOG)],
                 ["grep", "--in", "context", "-F", "working", str(LOG)]):
        result = subprocess.run([sys.executable, "-m", "dshctl.cli", *args], capture_output=True, env=env, cwd=REPO, timeout=60)
        assert result.returncode == 0, (args, result.stderr)
        assert b"Traceback" not in result.stderr and result.stderr == b"", (args, result.stderr)
        if args[0] == "stats":  # a pipe: plain tables, never folded to COLUMNS (#26)
            assert not set("┏┃│└") & set(result.stdout.decode()), args
