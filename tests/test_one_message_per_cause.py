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


CAUSES = {
    # name: (file name, bytes, where the message is located, rule, message)
    "text file": ("notes.jsonl", b"hello world\n", ":1", "codec/header", "line 1 is not JSON: not a dsh session log"),
    "JSON, not a header": ("x.jsonl", b'{"a":1}\n', ":1", "codec/header",
                           'line 1 is not a dsh session header (expected {"type":"session", ...})'),
    "torn header": ("torn.jsonl", b'{"type":"session","version":4', ":1", "codec/header",
                    "the header line is not terminated by LF (torn before the first record): not a dsh session log"),
    "no numeric version": ("nov.jsonl", b'{"type":"session","version":"4"}\n', ":1", "codec/header",
                           "line 1 is not a dsh session header: it has no numeric version"),
    "fractional version": ("v15.jsonl", b'{"type":"session","version":1.5}\n', ":1", "codec/version",
                           "header version 1.5 is not a non-negative integer"),
    "newer version": ("v9.jsonl", b'{"type":"session","version":9}\n', ":1", "codec/version",
                      "written by a newer dsh than this tool supports (log format v9); dshctl reads v0-v4"),
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
