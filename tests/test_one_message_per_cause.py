"""One message per cause, the same in every command: what is wrong with a path or a log is worded once,
whether ``cat``, ``stats``, ``replay``, ``grep`` or ``images`` refuse it (``dshctl: error: …``) or
``validate`` reports it (``… unreadable [rule] …``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import mutate
from conftest import SAMPLES, invoke as run_cli

READERS = [["cat"], ["stats"], ["replay", "--instant"], ["grep", "x"], ["images"]]


def invoke(*args: str):
    return run_cli(*args, env={"COLUMNS": "200"})


def _write(tmp: Path, name: str, data: bytes) -> Path:
    path = tmp / name
    path.write_bytes(data)
    return path


def _zstd(data: bytes) -> bytes:
    import zstandard

    return zstandard.ZstdCompressor(write_checksum=True).compress(data)


RANDOM_BYTES = bytes.fromhex("89504e47") + bytes(range(14, 250))  # starts as a PNG does; holds no LF
RANDOM_LINES = bytes(range(256)) * 4  # an LF in every 256 bytes


CAUSES = {
    # name: (file name, bytes, where the message is located, rule, message); each message is located once
    # (``x.jsonl:1: …``) and never names the line again
    "text file": ("notes.jsonl", b"hello world\n", ":1", "codec/header", "not JSON: not a dsh session log"),
    "JSON, not a header": ("x.jsonl", b'{"a":1}\n', ":1", "codec/header",
                           'not a dsh session header (expected {"type":"session", ...})'),
    "torn header": ("torn.jsonl", b'{"type":"session","version":4', ":1", "codec/header",
                    "the header line is not terminated by LF (torn before the first record): not a dsh session log"),
    "no numeric version": ("nov.jsonl", b'{"type":"session","version":"4"}\n', ":1", "codec/header",
                           "not a dsh session header: it has no numeric version"),
    "fractional version": ("v15.jsonl", b'{"type":"session","version":1.5}\n', ":1", "codec/version",
                           "header version 1.5 is not a non-negative integer"),
    "newer version": ("v9.jsonl", b'{"type":"session","version":9}\n', ":1", "codec/version",
                      "written by a newer dsh than this tool supports (log format v9); dshctl reads v0-v4"),
    "random bytes named .zstd": ("x.jsonl.zstd", RANDOM_BYTES, "", "codec/header",
                                 "named .zstd but not a zstd frame (bad magic number), nor JSON: "
                                 "not a dsh session log"),
    "random bytes named .zst": ("x.zst", RANDOM_BYTES, "", "codec/header",
                                "named .zst but not a zstd frame (bad magic number), nor JSON: "
                                "not a dsh session log"),
    "random lines named .zstd": ("lines.jsonl.zstd", RANDOM_LINES, "", "codec/header",
                                 "named .zstd but not a zstd frame (bad magic number), nor JSON: not a dsh session log"),
    "random bytes named .jsonl": ("x.jsonl", RANDOM_LINES, ":1", "codec/header", "not JSON: not a dsh session log"),
    "zstd of text": ("text.jsonl.zstd", _zstd(b"hello world\n"), ":1", "codec/header",
                     "zstd data that is not JSON once decompressed: not a dsh session log"),
    "empty file": ("empty.jsonl", b"", "", "codec/read", "empty file: not a dsh session log"),
}


@pytest.mark.parametrize("cause", CAUSES)
def test_a_log_that_is_not_one_is_worded_alike_by_every_command(tmp_path, cause):
    name, data, where, rule, message = CAUSES[cause]
    path = _write(tmp_path, name, data)
    for command in READERS:
        result = invoke(*command, str(path))
        assert result.exit_code == 2, (command, result.output)
        assert result.stderr == f"dshctl: error: {path}{where}: {message}\n", command
    result = invoke("validate", str(path))
    assert result.exit_code == 2
    assert f"{path}{where}: unreadable [{rule}] {message}" in result.stdout
    listed = invoke("ls", str(path))
    assert listed.exit_code == 2 and listed.stderr == f"dshctl: error: {path}{where}: {message}\n"


@pytest.mark.parametrize("cause", [cause for cause, (name, *_) in CAUSES.items() if name.endswith((".jsonl", ".zstd"))])
def test_a_log_among_many_names_its_line_once(tmp_path, cause):
    """In a folder, the warning names the log and then the line, once (it said ``line 1: line 1 is …``);
    ls's and stats' rows say the same."""
    name, data, where, _, message = CAUSES[cause]
    _write(tmp_path, name, data)  # a folder walk reads *.jsonl and *.jsonl.zstd
    (tmp_path / "good.session.v4.jsonl").write_bytes((SAMPLES / "tour.session.v4.jsonl").read_bytes())
    located = f"line 1: {message}" if where else message
    for command in (["stats", "-j", "1"], ["ls"], ["grep", "x"]):
        result = invoke(*command, str(tmp_path))
        assert result.exit_code == (0 if command[0] == "grep" else 1), (command, result.output)  # grep: it matched
        assert f": {located}\n" in result.stderr, (command, result.stderr)
        assert "line 1: line 1" not in result.stderr and ":1: line 1" not in result.stderr
    rows = json.loads(invoke("ls", "--json", str(tmp_path)).stdout)["sessions"]
    assert [row["error"] for row in rows if row["error"]] == [located]
    errors = json.loads(invoke("stats", "--json", "-j", "1", str(tmp_path)).stdout)["errors"]
    assert [error["error"] for error in errors] == [located]


@pytest.mark.parametrize("cause", ["text file", "random bytes named .zstd", "JSON, not a header"])
def test_a_log_whose_header_cannot_be_read_claims_no_generation(tmp_path, cause):
    """``session.jsonl`` is v0's name, but unreadable bytes are no generation: ls shows ``-`` and null
    (it showed v0 and 0), where a header that names a newer version keeps that version."""
    name, data, *_ = CAUSES[cause]
    session = tmp_path / "--proj--" / "s1"
    session.mkdir(parents=True)
    (session / ("session.jsonl.zstd" if name.endswith(".zstd") else "session.jsonl")).write_bytes(data)
    newer = tmp_path / "--proj--" / "s2"
    newer.mkdir()
    (newer / "session.v4.jsonl").write_bytes(b'{"type":"session","version":9}\n')
    rows = {Path(row["path"]).parent.name: row for row in json.loads(invoke("ls", "--json", str(tmp_path)).stdout)["sessions"]}
    assert rows["s1"]["generation"] is None and rows["s1"]["error"]
    assert rows["s2"]["generation"] == 9 and "newer dsh" in rows["s2"]["error"]
    table = invoke("ls", str(tmp_path)).stdout
    line = next(line for line in table.splitlines() if "s1" in line)
    assert " v0 " not in line and " - " in line


@pytest.mark.parametrize("command", [*READERS, ["validate"], ["ls"]], ids=" ".join)
def test_an_empty_folder_holds_no_logs_in_every_command(tmp_path, command):
    empty = tmp_path / "ci-artifacts"
    empty.mkdir()
    result = invoke(*command, str(empty))
    assert result.exit_code == 2
    if command == ["validate"]:
        assert f"{empty}: unreadable [codec/read] no dsh session logs found" in result.stdout
    else:
        assert result.stderr == f"dshctl: error: {empty}: no dsh session logs found\n"


def test_a_corrupt_frame_says_that_salvage_reads_past_it(tmp_path):
    corrupt = next(m for m in mutate.REGISTRY if m.name == "zstd-corrupt-frame")
    path = _write(tmp_path, "corrupt.jsonl.zstd", corrupt.build())
    message = ("corrupt zstd frame 2: Restored data doesn't match checksum; --salvage (cat, stats, replay) reads "
               "past the damaged frame")
    for command in READERS:
        result = invoke(*command, str(path))
        assert result.exit_code == 2 and result.stderr == f"dshctl: error: {path}: {message}\n", command
    assert f"{path}: unreadable [codec/read] {message}" in invoke("validate", str(path)).stdout
    salvaged = invoke("cat", "--salvage", str(path))
    assert salvaged.exit_code == 1 and "--salvage (cat" not in salvaged.stderr  # said only where it helps


def test_a_torn_zstd_frame_names_its_size_in_every_command():
    torn = SAMPLES / "torn-tail.session.v4.jsonl.zstd"
    frame = "the last zstd frame is incomplete (225 bytes on disk, 0 decoded bytes after its last complete line)"
    outputs = {
        "cat": invoke("cat", str(torn)).stderr,
        "cat --raw": invoke("cat", "--raw", str(torn)).stderr,
        "stats": invoke("stats", str(torn)).stderr,
        "replay": invoke("replay", "--instant", str(torn)).stderr,
        "validate": invoke("validate", str(torn)).stdout,
    }
    for command, text in outputs.items():
        assert frame in text, command
        assert "0 bytes after" not in text, command
    document = json.loads(invoke("validate", "--format", "json", str(torn)).stdout)
    torn_findings = [f for f in document["logs"][0]["findings"] if f["rule"] == "codec/torn-tail"]
    assert [f["message"] for f in torn_findings] == [f"torn tail: {frame}; dsh drops it"]


def test_salvage_reads_past_every_damaged_frame_it_is_offered_for(tmp_path):
    """The hint is kept: a complete frame that ends inside a record (read by the fast path, which declared
    sizes allow) is read past with --salvage too."""
    import zstandard

    compress = zstandard.ZstdCompressor(write_checksum=True, write_content_size=True).compress
    header = b'{"type":"session","version":4,"id":"s1","createdAt":1,"isSeeded":false,"delegationDepth":0}\n'
    path = _write(tmp_path, "mid.session.v4.jsonl.zstd", compress(header) + compress(b'{"type":"turn/st')
                  + compress(b'art","seq":0,"time":1,"data":{"turn":1}}\n'))
    refused = invoke("cat", str(path))
    assert refused.exit_code == 2
    assert refused.stderr == (f"dshctl: error: {path}:2: complete zstd frame 2 ends inside a record (16 bytes after "
                              "the last LF); --salvage (cat, stats, replay) reads past the damaged frame\n")
    for command in (["cat"], ["stats"], ["replay", "--instant"]):
        salvaged = invoke(*command, "--salvage", str(path))
        assert salvaged.exit_code == 1, (command, salvaged.output)
        assert "salvage: complete zstd frame 2 ends inside a record" in salvaged.stderr
