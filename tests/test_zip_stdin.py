"""What a colleague sends, piped (issue 26): a dsh Web UI export ZIP on standard input, and ``ZIP!member``
given back as a PATH.

A ZIP's directory is at its end, so standard input holding one is read whole (in memory, then an unlinked
temporary file, to a bound) before it is read as a ZIP PATH is; a zstd or plain JSONL log on standard
input keeps streaming. Commands name an export's logs ``ZIP!subagents/<id>/session.jsonl``; that name
reads the one member.
"""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from conftest import SAMPLES, PipeFeeder, invoke as run_cli
from test_zip_exports import _raw_zip, web_export

CHILD = "subagents/session-b4d2f6a8/session.jsonl"


def invoke(*args: str, input: bytes | None = None):
    return run_cli(*args, env={"COLUMNS": None, "DSH_HOME": "/nonexistent-dsh-home"}, input=input)


@pytest.fixture
def export(tmp_path) -> Path:
    return web_export(tmp_path)


@pytest.fixture
def stdin_module():
    import dshctl.source.stdin

    return dshctl.source.stdin


def _same(piped: str, named: str, export: Path) -> None:
    assert piped == named.replace(str(export), "<stdin>")


# ------------------------------------------------------------------------------------ a ZIP on stdin


def test_stats_reads_an_export_on_stdin_as_the_zip_path(export):
    piped = invoke("stats", "--json", "-", input=export.read_bytes())
    assert piped.exit_code == 0, piped.output
    document = json.loads(piped.stdout)
    assert [s["path"] for s in document["sessions"]] == ["<stdin>!session.jsonl", f"<stdin>!{CHILD}"]
    _same(piped.stdout, invoke("stats", "--json", str(export)).stdout, export)


@pytest.mark.parametrize("command", [("cat",), ("replay", "--instant"), ("grep", "red"), ("validate",), ("ls", "--json"),
                                     ("images", "--json"), ("stats", "--by", "turn", "--ndjson")])
def test_every_command_taking_stdin_reads_an_export_on_it(export, command):
    piped = invoke(*command, "-", input=export.read_bytes())
    named = invoke(*command, str(export))
    assert piped.exit_code == named.exit_code == 0, piped.output
    assert piped.stdout.strip()
    if command[0] == "ls":  # its times are the file's; standard input has none
        rows = [{k: v for k, v in row.items() if k not in ("path", "modifiedAt")} for row in json.loads(piped.stdout)["sessions"]]
        assert rows == [{k: v for k, v in row.items() if k not in ("path", "modifiedAt")}
                        for row in json.loads(named.stdout)["sessions"]]
        return
    _same(piped.stdout, named.stdout, export)


def test_images_extracts_from_the_media_of_an_export_on_stdin(export, tmp_path):
    out = tmp_path / "out"
    result = invoke("images", "-", "--out", str(out), "--json", input=export.read_bytes())
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["store"] == {"kind": "zip", "path": "<stdin>", "from": "export"}
    assert sorted(os.listdir(out)) == ["ci-failure.png", "pipeline.jpg"]
    assert (out / "ci-failure.png").read_bytes() == zipfile.ZipFile(export).read(
        next(n for n in zipfile.ZipFile(export).namelist() if n.endswith(".png")))


def test_a_large_export_on_stdin_goes_to_an_unlinked_temporary_file(export, tmp_path, monkeypatch, stdin_module):
    spools = []
    real = stdin_module._spool

    def spool(stream):
        spools.append(real(stream))
        return spools[-1]

    monkeypatch.setattr(stdin_module, "IN_MEMORY_BYTES", 1024)
    monkeypatch.setattr(stdin_module, "_spool", spool)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    result = invoke("stats", "--json", "-", input=export.read_bytes())
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)["sessions"]) == 2
    assert spools and spools[0]._rolled  # held in a file, not in memory
    assert os.listdir(tmp) == []  # a file without a name: nothing to clean up, nothing left behind


def test_an_export_on_stdin_past_the_bound_is_one_error(export, monkeypatch, stdin_module):
    monkeypatch.setattr(stdin_module, "MAX_ARCHIVE_BYTES", 4096)
    result = invoke("stats", "-", input=export.read_bytes())
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "dshctl: error: <stdin>: a ZIP on standard input larger than 4 KiB is not read (it must be held whole: its "
        "directory is at its end); pass the file as a PATH"]


def test_a_hostile_archive_on_stdin_is_refused_as_a_zip_path_is(tmp_path):
    hostile = _raw_zip(tmp_path / "x.zip", [("session.jsonl", b"{}\n"), ("../evil", b"x")])
    result = invoke("stats", "-", input=hostile.read_bytes())
    assert result.exit_code == 2 and "climbs out with '..'" in result.stderr and "<stdin>" in result.stderr


def test_a_damaged_zip_on_stdin_is_one_error():
    result = invoke("cat", "-", input=b"PK\x03\x04" + b"\x00" * 40)
    assert result.exit_code == 2
    assert result.stderr.startswith("dshctl: error: <stdin>: not a readable ZIP") and len(result.stderr.splitlines()) == 1



class _Stdin:
    """A piped standard input as ``sys.stdin`` is one: a text face over a peekable buffer."""

    def __init__(self, data: bytes) -> None:
        import io

        self.buffer = io.BufferedReader(io.BytesIO(data))

    def isatty(self) -> bool:
        return False


def test_one_archive_is_held_however_often_stdin_changes(export, monkeypatch, stdin_module):
    """A library caller or a test process swapping ``sys.stdin`` keeps one archive, never one per stream."""
    import gc
    import weakref

    first = _Stdin(export.read_bytes())
    monkeypatch.setattr(sys, "stdin", first)
    archive = stdin_module.stdin_archive()
    assert archive is not None and stdin_module.stdin_archive() is archive  # read once, however often asked
    gone = weakref.ref(archive)
    del archive
    for _ in range(3):
        monkeypatch.setattr(sys, "stdin", _Stdin(export.read_bytes()))
        assert stdin_module.stdin_archive() is not None
    gc.collect()
    assert gone() is None  # the first stream's archive was freed, not kept for the process
    monkeypatch.setattr(sys, "stdin", first)  # back to a stream already read: it is not read again
    assert stdin_module.stdin_archive() is None  # its bytes were read whole once; nothing is left to read


@pytest.mark.parametrize("name", ["tour.session.v4.jsonl", "tour.session.v4.jsonl.zstd"])
def test_a_log_on_stdin_is_never_held(name, monkeypatch, stdin_module):
    monkeypatch.setattr(stdin_module, "_spool", lambda stream: pytest.fail("a log on stdin was held whole"))
    piped = invoke("cat", "-", input=(SAMPLES / name).read_bytes())
    assert piped.exit_code == 0 and piped.stdout == invoke("cat", str(SAMPLES / name)).stdout


def _dshctl(*args: str) -> subprocess.Popen:
    env = {**os.environ, "DSH_HOME": "/nonexistent-dsh-home", "NO_COLOR": "1", "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "dshctl", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)


@pytest.mark.parametrize("compress", [False, True], ids=["jsonl", "zstd"])
def test_a_log_on_a_pipe_streams_as_it_arrives(tmp_path, compress):
    """Through a real pipe (the buffer's peek, not a seek): the first event is out while the test still
    holds most of the log unwritten, so nothing was held whole. No clock: the writer blocks on the pipe
    once the reader's output is not read (as grep's closed-pipe test)."""

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    from stats_bench import write_v4

    big = tmp_path / "big.session.v4.jsonl"
    write_v4(big, size_bytes=(64 if compress else 12) << 20, compress=compress)
    data = big.read_bytes()
    process = _dshctl("cat", "-")
    feeder = PipeFeeder(process, data)
    try:
        first = process.stdout.readline()
        held = feeder.written
        process.stdout.close()
        process.wait(timeout=300)  # a safety net only: a hang fails here, nothing is timed
    finally:
        process.kill()
        process.wait()
    feeder.join(timeout=60)
    assert first.startswith(b'{"type":"session"')
    assert held < len(data) // 2, (held, len(data))


def test_an_export_through_a_real_pipe_with_its_magic_split(export):
    """A writer that hands out the ZIP's first bytes alone: the prefix of the magic is enough."""
    data = export.read_bytes()
    process = _dshctl("grep", "-c", "red", "-")
    process.stdin.write(data[:2])
    process.stdin.flush()
    time.sleep(0.3)
    out, err = process.communicate(data[2:], timeout=60)
    assert process.returncode == 0, err
    assert out.decode().splitlines() == ["<stdin>!session.jsonl:4", f"<stdin>!{CHILD}:3"]


# ------------------------------------------------------------------------------ ZIP!member as a PATH


@pytest.mark.parametrize("command", [("stats", "--json"), ("replay", "--instant"), ("grep", "red"), ("validate",), ("cat",),
                                     ("images", "--json")])
def test_a_member_named_as_commands_name_it_reads_that_member(export, command):
    named = invoke(*command, f"{export}!{CHILD}")
    unzipped = invoke(*command, str(export.parent / "unzipped" / CHILD))
    assert named.exit_code == unzipped.exit_code == 0, named.output
    assert named.stdout == unzipped.stdout.replace(str(export.parent / "unzipped" / CHILD), f"{export}!{CHILD}")


def test_the_root_member_alone(export):
    document = json.loads(invoke("stats", "--json", f"{export}!session.jsonl").stdout)
    assert [s["path"] for s in document["sessions"]] == [f"{export}!session.jsonl"]


def test_what_grep_names_is_a_path_that_reads(export):
    """Each name grep prints, given back, reads that log alone."""
    for line in invoke("grep", "-c", "red", str(export)).stdout.splitlines():
        name, _, count = line.rpartition(":")
        assert invoke("grep", "-c", "red", name).stdout.splitlines() == [line]


def test_a_real_file_whose_name_holds_a_bang_wins(export, tmp_path):
    odd = tmp_path / f"{export.name}!{CHILD.replace('/', '_')}"
    shutil.copy(SAMPLES / "cwd-change.session.v4.jsonl", odd)
    assert json.loads(invoke("stats", "--json", str(odd)).stdout)["sessions"][0]["path"] == str(odd)
    bang = tmp_path / "a!b.zip"
    shutil.copy(export, bang)
    listed = [s["path"] for s in json.loads(invoke("stats", "--json", str(bang)).stdout)["sessions"]]
    assert listed == [f"{bang}!session.jsonl", f"{bang}!{CHILD}"]
    assert [s["path"] for s in json.loads(invoke("stats", "--json", f"{bang}!{CHILD}").stdout)["sessions"]] == [f"{bang}!{CHILD}"]


def test_an_unknown_member_is_one_error_naming_the_logs(export):
    result = invoke("stats", f"{export}!subagents/nope/session.jsonl")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f'dshctl: error: {export}: the export holds no log "subagents/nope/session.jsonl"; its logs: session.jsonl, {CHILD}']
    media = invoke("cat", f"{export}!media/x.png")
    assert media.exit_code == 2 and 'holds no log "media/x.png"' in media.stderr


def test_many_members_are_counted_not_all_listed(tmp_path):
    path = tmp_path / "big.zip"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("session.jsonl", (SAMPLES / "tour.session.v4.jsonl").read_bytes())
        for n in range(14):
            archive.writestr(f"subagents/s{n:02d}/session.jsonl", (SAMPLES / "fork-child.session.v4.jsonl").read_bytes())
    result = invoke("cat", f"{path}!subagents/zz/session.jsonl")
    assert result.exit_code == 2 and "subagents/s08/session.jsonl and 5 more (15 in all)" in result.stderr


def test_a_member_of_a_hostile_archive_is_refused(tmp_path):
    hostile = _raw_zip(tmp_path / "x.zip", [("session.jsonl", b"{}\n"), ("session.jsonl", b"{}\n")])
    result = invoke("cat", f"{hostile}!session.jsonl")
    assert result.exit_code == 2 and 'two members named "session.jsonl"' in result.stderr


def test_a_bang_after_what_is_no_zip_stays_a_missing_path(tmp_path):
    log = tmp_path / "x.jsonl"
    shutil.copy(SAMPLES / "tour.session.v4.jsonl", log)
    result = invoke("cat", f"{log}!session.jsonl")
    assert result.exit_code == 2 and "no such file or directory" in result.stderr


def test_a_member_of_the_export_on_stdin(export):
    for name in (f"<stdin>!{CHILD}", f"-!{CHILD}"):
        piped = invoke("replay", "--instant", "--", name, input=export.read_bytes())
        assert piped.exit_code == 0, piped.output
        assert piped.stdout == invoke("replay", "--instant", str(export.parent / "unzipped" / CHILD)).stdout
    plain = invoke("cat", "--", f"-!{CHILD}", input=(SAMPLES / "tour.session.v4.jsonl").read_bytes())
    assert plain.exit_code == 2 and "standard input holds no ZIP" in plain.stderr


def test_the_html_page_of_an_export_on_stdin_is_the_zip_paths(export, tmp_path):
    """Held whole, the ZIP is read again for the page's per-turn figures and its pictures, as a ZIP file is."""
    piped, named = tmp_path / "piped.html", tmp_path / "named.html"
    assert invoke("replay", "-", "--export", str(piped), "--embed-images", input=export.read_bytes()).exit_code == 0
    assert invoke("replay", str(export), "--export", str(named), "--embed-images").exit_code == 0
    assert piped.read_bytes() == named.read_bytes()


def test_sarif_names_the_members_of_the_zip_on_stdin(export):
    document = json.loads(invoke("validate", "--format", "sarif", "-", input=export.read_bytes()).stdout)
    assert [a["location"]["uri"] for a in document["runs"][0]["artifacts"]] == [
        "stdin%21session.jsonl", "stdin%21subagents/session-b4d2f6a8/session.jsonl"]


def test_stdin_redirected_from_a_zip_file_is_read_in_place(export):
    """``< x.zip`` hands dshctl the file itself: it is read where it is, never copied (so never bounded)."""
    program = ("import sys, dshctl.source.stdin as s\n"
               "def refuse(stream): raise SystemExit('copied')\n"
               "s._spool = refuse\n"
               "from dshctl.entry import main\n"
               "sys.argv = ['dshctl', 'grep', '-c', 'red', '-']\n"
               "main()\n")
    with open(export, "rb") as stdin:
        done = subprocess.run([sys.executable, "-c", program], stdin=stdin, capture_output=True, text=True, timeout=120,
                              env={**os.environ, "DSH_HOME": "/nonexistent-dsh-home", "NO_COLOR": "1"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["<stdin>!session.jsonl:4", f"<stdin>!{CHILD}:3"]


def test_a_long_hostile_bang_argument_tries_a_bounded_number_of_prefixes(export, monkeypatch):
    """``ZIP!member`` tries the prefixes before each ``!``; only those short enough to name a file are
    looked at, so 131,000 marks cost no more than 4,096."""
    import os.path

    import dshctl.source.paths as paths

    calls = []
    real = os.path.isfile
    monkeypatch.setattr(os.path, "isfile", lambda path: calls.append(len(path)) or real(path))
    assert paths._zip_member("x" + "!" * 131_000) is None
    assert 0 < len(calls) <= 4096 and max(calls) <= 4096
    calls.clear()
    assert [ref.member.name for ref in paths._zip_member(f"{export}!{CHILD}")] == [CHILD]  # still found
    result = invoke("cat", "x" + "!" * 131_000)
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1
    assert len(calls) <= 4096


@pytest.mark.parametrize("spec", ["-", f"-!{CHILD}", f"<stdin>!{CHILD}"])
@pytest.mark.parametrize("command", [("replay",), ("cat",), ("stats",)])
def test_follow_refuses_a_zip_on_stdin_as_an_export(export, command, spec):
    """The reason named is the real one: an export is finished, not that standard input cannot be followed."""
    result = invoke(*command, "--follow", "--", spec, input=export.read_bytes())
    assert result.exit_code == 2 and "not a session export ZIP" in result.stderr, result.output
    assert "not standard input" not in result.stderr
    log = invoke(*command, "--follow", "-", input=(SAMPLES / "tour.session.v4.jsonl").read_bytes())
    assert log.exit_code == 2 and "not standard input" in log.stderr
