"""Bad input gets one clear line and a documented exit status — never a traceback — and memory stays bounded."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import zstandard

from conftest import invoke, sample

HEADER = {"type": "session", "version": 4, "id": "s", "createdAt": 1, "isSeeded": False, "delegationDepth": 0}


def run_cli(*args: str, stdin: bytes | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dshctl.cli", *args],
        input=stdin,
        capture_output=True,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


def line(obj) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def event(seq: int, kind: str, data: dict) -> bytes:
    return line({"type": kind, "seq": seq, "time": 1000 + seq, "data": data})


def good_body() -> bytes:
    return (
        event(0, "turn/start", {"turn": 1})
        + event(1, "step/start", {"turn": 1, "step": 1})
        + event(2, "step/end", {"turn": 1, "step": 1})
        + event(3, "turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    )


def assert_clean_failure(result: subprocess.CompletedProcess, status: int, needle: str) -> None:
    err = result.stderr.decode()
    assert result.returncode == status, (result.returncode, err)
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.startswith("dshctl: error:")]
    assert len(lines) == 1, err
    assert needle in lines[0], lines[0]


@pytest.mark.parametrize(
    "name, content, needle",
    [
        ("empty", b"", "empty"),
        ("non-json", b"hello world\n", "not JSON"),
        ("binary", bytes(range(256)) * 4, "not JSON"),
        ("invalid-utf8", b'{"type":"session","version":4,"id":"\xff\xfe"}\n', "not JSON"),
        ("not-a-header", line({"type": "turn/start", "seq": 0}), "not a dsh session header"),
        ("no-version", line({"type": "session", "id": "x"}), "no numeric version"),
        ("header-without-lf", json.dumps(HEADER).encode(), "not terminated by LF"),
        ("newer", line({**HEADER, "version": 5}), "newer dsh"),
    ],
)
def test_unreadable_inputs_exit_2_with_one_line(tmp_path, name, content, needle):
    path = tmp_path / name
    path.write_bytes(content)
    assert_clean_failure(run_cli("cat", str(path)), 2, needle)


def test_missing_file(tmp_path):
    assert_clean_failure(run_cli("cat", str(tmp_path / "nope.jsonl")), 2, "no such file")


def test_header_only_log_is_a_valid_empty_log(tmp_path):
    path = tmp_path / "session.v4.jsonl"
    path.write_bytes(line(HEADER))
    result = run_cli("cat", str(path))
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().count("\n") == 1


def test_torn_tail_is_a_warning_and_strict_makes_it_an_error(tmp_path):
    path = tmp_path / "session.v4.jsonl"
    path.write_bytes(line(HEADER) + good_body() + b'{"type":"turn/st')
    result = run_cli("cat", str(path))
    assert result.returncode == 0
    assert result.stderr.decode().count("dshctl: warning:") == 1 and "torn tail" in result.stderr.decode()
    assert len(result.stdout.splitlines()) == 5
    assert_clean_failure(run_cli("cat", "--strict", str(path)), 2, "torn tail")


def test_unparsable_line_followed_by_turn_end_is_an_error_naming_line_and_seq(tmp_path):
    path = tmp_path / "session.v4.jsonl"
    body = good_body().splitlines(keepends=True)
    body[1] = b"{not json}\n"
    path.write_bytes(line(HEADER) + b"".join(body))
    result = run_cli("cat", str(path))
    assert_clean_failure(result, 2, f"{path}:3 (seq 1)")


def test_seq_gap_without_later_turn_end_is_treated_as_torn_tail(tmp_path):
    path = tmp_path / "session.v4.jsonl"
    body = good_body().splitlines(keepends=True)[:3]
    body[2] = event(7, "step/end", {"turn": 1, "step": 1})
    path.write_bytes(line(HEADER) + b"".join(body))
    result = run_cli("cat", str(path))
    assert result.returncode == 0
    assert "seq gap" in result.stderr.decode() and "torn tail" in result.stderr.decode()
    assert_clean_failure(run_cli("cat", "--strict", str(path)), 2, "seq gap")


def test_truncated_zstd_last_frame_is_a_torn_tail(tmp_path):
    compressor = zstandard.ZstdCompressor(write_checksum=True)
    body = good_body().splitlines(keepends=True)
    frames = compressor.compress(line(HEADER)) + compressor.compress(b"".join(body[:2]))
    last = compressor.compress(b"".join(body[2:]))
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(frames + last[: len(last) // 2])
    result = run_cli("cat", str(path))
    assert result.returncode == 0, result.stderr
    assert "torn" in result.stderr.decode()
    assert len(result.stdout.splitlines()) >= 3  # header + the two events of the complete frame


def test_complete_zstd_frame_ending_inside_a_record_is_an_error(tmp_path):
    compressor = zstandard.ZstdCompressor(write_checksum=True)
    body = good_body()
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(compressor.compress(line(HEADER)) + compressor.compress(body[:-10]) + compressor.compress(body[-10:]))
    assert_clean_failure(run_cli("cat", str(path)), 2, "ends inside a record")


def test_corrupt_zstd_frame_is_an_error(tmp_path):
    compressor = zstandard.ZstdCompressor(write_checksum=True)
    body = bytearray(compressor.compress(good_body() * 3))
    body[len(body) // 2] ^= 0xFF
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(compressor.compress(line(HEADER)) + bytes(body) + compressor.compress(good_body()))
    result = run_cli("cat", str(path))
    assert result.returncode == 2 and "Traceback" not in result.stderr.decode()
    assert "zstd" in result.stderr.decode()


def test_decompression_bomb_fails_fast_with_bounded_memory(tmp_path):
    chunk = b"a" * (1 << 20)
    compressor = zstandard.ZstdCompressor(level=3)
    writer_path = tmp_path / "bomb.zstd"
    with open(writer_path, "wb") as fh, compressor.stream_writer(fh) as writer:
        writer.write(line(HEADER))
        for _ in range(300):  # 300 MiB of one line, a few hundred KiB on disk
            writer.write(chunk)
    assert writer_path.stat().st_size < 2_000_000
    result = run_cli("cat", str(writer_path), env={"DSHCTL_MAX_LINE_BYTES": str(8 << 20)})
    assert_clean_failure(result, 2, "longer than")


def test_hundred_megabyte_line_is_refused_by_default(tmp_path):
    path = tmp_path / "session.v4.jsonl"
    with open(path, "wb") as fh:
        fh.write(line(HEADER))
        fh.write(b'{"type":"user/message","seq":0,"time":1,"data":"')
        fh.write(b"x" * (100 << 20))
        fh.write(b'"}\n')
    result = run_cli("cat", str(path))
    assert_clean_failure(result, 2, "longer than")


def test_stdin_and_closed_pipe(tmp_path):
    data = line(HEADER) + good_body() * 1
    result = run_cli("cat", "-", stdin=data)
    assert result.returncode == 0 and len(result.stdout.splitlines()) == 5
    big = line(HEADER) + b"".join(
        event(i, "todo/write", {"todos": [{"content": "x" * 200, "status": "pending"}]}) for i in range(20000)
    )
    path = tmp_path / "big.jsonl"
    path.write_bytes(big)
    pipe = subprocess.run(
        f"{sys.executable} -m dshctl.cli cat {path} | head -n 2",
        shell=True,
        capture_output=True,
        timeout=120,
    )
    assert pipe.returncode == 0
    assert pipe.stderr == b"", pipe.stderr
    assert len(pipe.stdout.splitlines()) == 2


def test_reading_never_modifies_the_log(tmp_path):
    path = tmp_path / "session.v4.jsonl"
    path.write_bytes(line(HEADER) + good_body() + b'{"torn')
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    for args in (["cat"], ["cat", "--raw"], ["cat", "--expand"]):
        run_cli(*args, str(path))
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["session.v4.jsonl"]


def test_usage_error_exits_2():
    result = run_cli("cat")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr.decode()


def test_version_and_help():
    result = run_cli("--version")
    assert result.returncode == 0 and result.stdout.decode().startswith("dshctl ")
    result = run_cli("--help")
    assert result.returncode == 0
    for command in ("cat", "ls", "stats", "replay", "validate", "images"):
        assert command in result.stdout.decode()


def test_malformed_turn_end_itself_is_not_proof_of_committed_damage(tmp_path):
    # dsh's decoders count only records that decode to a turn/end; a turn/end without time does not.
    path = tmp_path / "session.v4.jsonl"
    body = good_body().splitlines(keepends=True)
    body[3] = line({"type": "turn/end", "seq": 3, "data": {"turn": 1, "reason": {"kind": "completed"}}})
    path.write_bytes(line(HEADER) + b"".join(body))
    result = run_cli("cat", str(path))
    assert result.returncode == 0, result.stderr
    assert "torn tail" in result.stderr.decode()


def test_rich_tables_end_quietly_on_a_closed_pipe(monkeypatch):
    # rich's default is SystemExit(1) on EPIPE; dshctl treats a closed pipe as a normal end (status 0).
    from dshctl import stdio, tables

    read_end, write_end = os.pipe()
    os.close(read_end)
    pipe = os.fdopen(write_end, "w")
    monkeypatch.setattr(sys, "stdout", pipe)
    status = stdio.run(lambda: tables.print_table("t", [("a", "left")], [["x" * 100] for _ in range(2000)]))
    assert status == 0


def test_unusual_envelopes_take_the_general_path(tmp_path):
    from dshctl.reader import open_log

    path = tmp_path / "session.v4.jsonl"
    lines = good_body().splitlines(keepends=True)
    lines[1] = line({"type": "step/start", "seq": 1, "time": 1001.0, "data": {"turn": 1, "step": 1}})
    lines[2] = line({"type": "step/end", "seq": 2, "time": 1002, "data": {"turn": 1, "step": 1}, "extra": 1})
    path.write_bytes(line(HEADER) + b"".join(lines))
    events = list(open_log(str(path)).events())
    assert [e.time for e in events] == [1000, 1001, 1002, 1003]
    assert events[2].notes and "extra" in events[2].notes[0]
    assert not events[1].notes


# --------------------------------------------------------------------------------------------------
# the library door: what open_log accepts, and closing


def test_open_log_takes_a_path_object_a_string_or_a_log_ref(tmp_path):
    from pathlib import Path

    from dshctl.reader import open_log
    from dshctl.source import as_ref, resolve

    path = tmp_path / "session.v4.jsonl"
    path.write_bytes(line(HEADER) + good_body())
    for source in (path, str(path), resolve(str(path))[0], as_ref(path)):
        with open_log(source) as log:
            assert [event.seq for event in log.events()] == [0, 1, 2, 3]
    with pytest.raises(TypeError, match="not int"):
        open_log(3)  # type: ignore[arg-type]
    assert as_ref(Path(str(tmp_path))).path == path  # a session directory, as a string names it


def test_a_path_object_named_dash_is_a_file_not_stdin(tmp_path, monkeypatch):
    from pathlib import Path

    from dshctl.reader import open_log

    monkeypatch.chdir(tmp_path)
    (tmp_path / "-").write_bytes(line(HEADER) + good_body())
    with open_log(Path("-")) as log:
        assert log.display == os.path.join(".", "-")
        assert len(list(log.events())) == 4


def test_leaving_the_with_block_closes_a_log_read_halfway(tmp_path):
    from dshctl.reader import open_log

    path = tmp_path / "session.v4.jsonl"
    path.write_bytes(line(HEADER) + good_body())
    with open_log(path) as log:
        events = log.events()
        next(events)
        assert log.reader._file is not None
    assert log.reader._file is None


@pytest.mark.parametrize("start", [[1], {"seq": 1}, True, "80", 1.5])
def test_a_legacy_tool_result_replacing_an_odd_start_is_read(tmp_path, start):
    """A released v0 ``tool/result`` in the legacy shape (callId/content/isError) whose replace op names a
    ``start`` that is no seq: the fold's lookup (a JavaScript Map's) misses, as dsh's does; it was an
    unhashable-key traceback in stats, cat and replay."""
    lines = sample("tour.session.jsonl").read_text().splitlines()
    index = next(i for i, line in enumerate(lines) if '"type":"tool/result"' in line)
    event = json.loads(lines[index])
    block = event["data"]["message"]["content"][0]
    event["data"] = {"turn": event["data"]["turn"], "step": event["data"]["step"], "callId": block["toolCallId"],
                     "content": block["content"], "isError": False}
    event["surfaceOp"] = {"op": "replace", "start": start}
    lines[index] = json.dumps(event)
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines) + "\n")
    for command in (["stats", "--json"], ["cat"], ["replay"]):
        result = invoke(*command, str(path))
        assert result.exit_code == 0, (command, result.output, result.exception)


@pytest.mark.parametrize("status", [["in_progress"], {"s": 1}, 3])
def test_a_todo_whose_status_is_no_string_is_replayed(tmp_path, status):
    """A todo/write item's status is looked up among the known marks: a list or an object is no key (it
    was an unhashable-key traceback in every replay form)."""
    text = sample("tour.session.jsonl").read_text().replace('"status":"in_progress"}', '"status":' + json.dumps(status) + "}", 1)
    path = tmp_path / "session.jsonl"
    path.write_text(text)
    for command in (["replay"], ["replay", "--export", "-", "--format", "md"], ["replay", "--export", "-", "--format", "cast"]):
        result = invoke(*command, str(path))
        assert result.exit_code == 0, (command, result.output, result.exception)
        assert "Pin Node 20 in ci.yml" in result.output, command
