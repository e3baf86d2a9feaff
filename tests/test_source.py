"""dshctl.source: finding dsh logs on disk and streaming their physical lines."""

from __future__ import annotations

import io
import os
import random
import sys
import time
import tracemalloc
from pathlib import Path

import pytest
import zstandard

from dshctl.errors import SourceError, UnsupportedVersion
from dshctl.source import (
    DEFAULT_MAX_LINE_BYTES,
    LineReader,
    LogRef,
    TornTail,
    decode_session_dir_name,
    parse_generation_name,
    project_key,
    resolve,
    sessions_root,
)

HEADER = b'{"type":"session","version":4,"id":"s1","createdAt":1,"isSeeded":false,"delegationDepth":0}'
EVENTS = [b'{"type":"turn/start","seq":%d,"time":1,"data":{"turn":1}}' % i for i in range(6)]


def frame(data: bytes) -> bytes:
    return zstandard.ZstdCompressor(write_checksum=True).compress(data)


def zstd_log(*batches: list[bytes]) -> bytes:
    """dsh's shape: header alone in frame 1, then one frame per batch of LF-terminated lines."""
    return frame(HEADER + b"\n") + b"".join(frame(b"".join(line + b"\n" for line in batch)) for batch in batches)


def read_all(path: Path, **kw) -> tuple[list[tuple[int, bytes]], LineReader]:
    reader = LineReader(resolve(str(path))[0], **kw)
    return list(reader), reader


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


# ----------------------------------------------------------------- raw lines


def test_raw_lines_and_torn_tail(tmp_path):
    p = write(tmp_path / "session.v4.jsonl", HEADER + b"\n" + EVENTS[0] + b"\n" + b'{"type":"tur')
    lines, reader = read_all(p)
    assert lines == [(1, HEADER), (2, EVENTS[0])]
    assert reader.compressed is False
    assert reader.torn_tail == TornTail(line=3, bytes=len(b'{"type":"tur'), reason="no final LF")
    assert reader.bytes_read == reader.bytes_decoded == p.stat().st_size
    assert reader.frames == 0 and reader.first_frame_lines is None


def test_raw_complete_file_has_no_torn_tail(tmp_path):
    p = write(tmp_path / "x.jsonl", HEADER + b"\n" + b"\n".join(EVENTS) + b"\n")
    lines, reader = read_all(p)
    assert [n for n, _ in lines] == list(range(1, 8))
    assert reader.torn_tail is None


def test_cr_is_part_of_the_line_and_blank_lines_are_kept(tmp_path):
    p = write(tmp_path / "crlf.jsonl", b"a\r\n\nb\r\n")
    lines, _ = read_all(p)
    assert lines == [(1, b"a\r"), (2, b""), (3, b"b\r")]


def test_lines_spanning_read_chunks(tmp_path):
    long_line = b"x" * (3 * 1024 * 1024 + 17)  # crosses several 1 MiB reads
    p = write(tmp_path / "big.jsonl", b"h\n" + long_line + b"\nlast\n")
    lines, reader = read_all(p)
    assert lines == [(1, b"h"), (2, long_line), (3, b"last")]
    assert reader.torn_tail is None


def test_empty_file_is_an_error(tmp_path):
    p = write(tmp_path / "session.jsonl", b"")
    with pytest.raises(SourceError, match="empty file: not a dsh log"):
        read_all(p)


def test_raw_line_longer_than_limit(tmp_path):
    p = write(tmp_path / "long.jsonl", b"ok\n" + b"y" * 5000 + b"\n")
    with pytest.raises(SourceError, match="line 2 is longer than.*DSHCTL_MAX_LINE_BYTES") as exc:
        read_all(p, max_line_bytes=4096)
    assert exc.value.line == 2


def test_env_overrides_line_limit(tmp_path, monkeypatch):
    p = write(tmp_path / "long.jsonl", b"y" * 3000 + b"\n")
    monkeypatch.setenv("DSHCTL_MAX_LINE_BYTES", "2K")
    with pytest.raises(SourceError, match="longer than 2 KiB"):
        read_all(p)
    monkeypatch.setenv("DSHCTL_MAX_LINE_BYTES", "4096")
    lines, _ = read_all(p)
    assert len(lines) == 1


def test_stdin(monkeypatch):
    data = zstd_log(EVENTS[:2])

    class FakeStdin:
        buffer = io.BytesIO(data)

    monkeypatch.setattr(sys, "stdin", FakeStdin())
    [ref] = resolve("-")
    assert ref.path is None and ref.display == "<stdin>"
    reader = LineReader(ref)
    assert list(reader) == [(1, HEADER), (2, EVENTS[0]), (3, EVENTS[1])]
    assert reader.compressed and reader.frames == 2


def test_unreadable_file_is_a_source_error(tmp_path):
    ref = LogRef(path=tmp_path, display="somewhere", generation_from_name=None, session_dir=None)
    with pytest.raises(SourceError) as exc:
        list(LineReader(ref))
    assert exc.value.file == "somewhere"


# ----------------------------------------------------------------- zstd


def test_multi_frame_zstd(tmp_path):
    p = write(tmp_path / "session.v4.jsonl.zstd", zstd_log(EVENTS[:1], EVENTS[1:4], EVENTS[4:]))
    lines, reader = read_all(p)
    assert [line for _, line in lines] == [HEADER, *EVENTS]
    assert [n for n, _ in lines] == list(range(1, 8))
    assert reader.compressed is True
    assert reader.frames == 4
    assert reader.first_frame_lines == 1
    assert reader.torn_tail is None
    assert reader.bytes_read == p.stat().st_size
    assert reader.bytes_decoded == sum(len(line) + 1 for _, line in lines)


def test_zstd_detected_by_magic_not_suffix(tmp_path):
    p = write(tmp_path / "renamed.jsonl", zstd_log(EVENTS[:2]))
    lines, reader = read_all(p)
    assert reader.compressed and len(lines) == 3
    q = write(tmp_path / "plain.jsonl.zstd", HEADER + b"\n")
    lines, reader = read_all(q)
    assert not reader.compressed and lines == [(1, HEADER)]


def test_frame_without_content_size_and_many_blocks(tmp_path):
    # Streamed frames carry no content size and span several 128 KiB blocks.
    body = b"".join(b'{"seq":%d,"pad":"%s"}\n' % (i, b"p" * (i % 300)) for i in range(20000))
    cobj = zstandard.ZstdCompressor(write_checksum=True, write_content_size=False).compressobj()
    streamed = cobj.compress(body) + cobj.flush()
    p = write(tmp_path / "s.jsonl.zstd", frame(HEADER + b"\n") + streamed)
    lines, reader = read_all(p, max_line_bytes=256 * 1024)  # 2 blocks per decompression call
    assert len(lines) == 20001 and reader.frames == 2
    assert b"".join(line + b"\n" for _, line in lines[1:]) == body


@pytest.mark.parametrize("max_line_bytes", [None, 128 * 1024])  # one call per frame / one per block
def test_torn_last_zstd_frame_keeps_complete_prefix_lines(tmp_path, max_line_bytes):
    rng = random.Random(7)  # deterministic: the cut position must not land on a line end
    # ~600 KB of poorly compressible lines: the last frame holds several 128 KiB blocks,
    # so cutting it in the middle leaves complete blocks with complete lines.
    batch = [b'{"seq":%d,"text":"%s"}' % (i, rng.randbytes(100).hex().encode()) for i in range(3000)]
    last = frame(b"".join(line + b"\n" for line in batch))
    data = frame(HEADER + b"\n") + frame(EVENTS[0] + b"\n") + last
    cut = len(data) - len(last) // 2
    p = write(tmp_path / "session.v4.jsonl.zstd", data[:cut])
    lines, reader = read_all(p, max_line_bytes=max_line_bytes)
    assert reader.frames == 2
    assert lines[:2] == [(1, HEADER), (2, EVENTS[0])]
    kept = [line for _, line in lines[2:]]
    assert 0 < len(kept) < len(batch)
    assert kept == batch[: len(kept)]  # a prefix of the torn batch, whole lines only
    tail = reader.torn_tail
    assert tail is not None and tail.reason == "torn zstd frame"
    assert tail.line == len(lines) + 1
    assert 0 < tail.bytes < len(batch[0]) + 1
    assert tail.compressed_bytes == cut - (len(data) - len(last))
    assert reader.torn_frame_start_line == 3


def test_torn_frame_start_line_is_known_before_its_lines_are_yielded(tmp_path):
    data = zstd_log([EVENTS[0]], EVENTS[1:4])
    p = write(tmp_path / "t.jsonl.zstd", data[:-2])  # tear the third frame inside its checksum
    reader = LineReader(resolve(str(p))[0])
    seen = []
    for n, _ in reader:
        seen.append((n, reader.torn_frame_start_line))
    assert seen[:2] == [(1, None), (2, None)]
    assert all(start == 3 for n, start in seen[2:]) and len(seen) > 2
    raw_reader = LineReader(resolve(str(write(tmp_path / "r.jsonl", b"a\nb")))[0])
    list(raw_reader)
    assert raw_reader.torn_frame_start_line is None


def test_torn_frame_cut_in_its_header(tmp_path):
    data = zstd_log(EVENTS[:2])
    p = write(tmp_path / "t.jsonl.zstd", data + frame(EVENTS[2] + b"\n")[:6])
    lines, reader = read_all(p)
    assert len(lines) == 3 and reader.frames == 2
    assert reader.torn_tail == TornTail(line=4, bytes=0, reason="torn zstd frame", compressed_bytes=6)


def test_torn_frame_with_partial_line_reports_fragment_size(tmp_path):
    # Cut right before the 4-byte checksum: all content decodes, the last line has no LF.
    last = frame(EVENTS[1] + b"\n" + EVENTS[2] + b"\n")
    data = zstd_log([EVENTS[0]]) + last[:-4]
    lines, reader = read_all(write(tmp_path / "t.jsonl.zstd", data))
    assert [line for _, line in lines] == [HEADER, EVENTS[0], EVENTS[1], EVENTS[2]]
    assert reader.torn_tail.bytes == 0 and reader.torn_tail.line == 5


def test_corrupt_byte_in_complete_earlier_frame(tmp_path):
    f2 = frame(b"".join(e + b"\n" for e in EVENTS))
    data = bytearray(frame(HEADER + b"\n") + f2 + frame(EVENTS[0] + b"\n"))
    data[len(data) - len(f2) - 30] ^= 0xFF  # inside frame 2's compressed payload or checksum
    p = write(tmp_path / "c.jsonl.zstd", bytes(data))
    with pytest.raises(SourceError, match=r"corrupt zstd frame 2: "):
        read_all(p)


def test_bad_checksum_is_corruption(tmp_path):
    f2 = bytearray(frame(EVENTS[0] + b"\n"))
    f2[-1] ^= 1
    p = write(tmp_path / "c.jsonl.zstd", frame(HEADER + b"\n") + bytes(f2))
    with pytest.raises(SourceError, match="corrupt zstd frame 2: .*checksum"):
        read_all(p)


def test_skippable_frame_is_corruption(tmp_path):
    skippable = b"\x50\x2a\x4d\x18" + (4).to_bytes(4, "little") + b"abcd"
    p = write(tmp_path / "s.jsonl.zstd", zstd_log([EVENTS[0]]) + skippable)
    with pytest.raises(SourceError, match="corrupt zstd frame 3: bad frame magic \\(a skippable frame\\)"):
        read_all(p)


def test_frame_header_bits_dsh_rejects(tmp_path):
    # dsh's scanner refuses the reserved bit and the unused bit (libzstd ignores the latter).
    for bit in (0x08, 0x10):
        data = bytearray(frame(HEADER + b"\n" + b"\n".join(EVENTS) + b"\n"))
        data[4] |= bit
        with pytest.raises(SourceError, match="corrupt zstd frame 1: reserved frame-header bit"):
            read_all(write(tmp_path / "c.jsonl.zstd", bytes(data)))


def test_trailing_bytes_after_last_frame(tmp_path):
    good = zstd_log([EVENTS[0]])
    # four or more bytes that are not a frame magic: corruption
    with pytest.raises(SourceError, match="corrupt zstd frame 3: bad frame magic"):
        read_all(write(tmp_path / "a.jsonl.zstd", good + b"\0\0\0\0"))
    # fewer than four bytes: a frame torn inside its magic (dsh's scanner treats it so)
    lines, reader = read_all(write(tmp_path / "b.jsonl.zstd", good + b"\x28\xb5"))
    assert len(lines) == 2 and reader.frames == 2
    assert reader.torn_tail == TornTail(line=3, bytes=0, reason="torn zstd frame", compressed_bytes=2)


def test_complete_frame_ending_mid_record(tmp_path):
    data = frame(HEADER + b"\n") + frame(EVENTS[0] + b"\n" + EVENTS[1][:10]) + frame(EVENTS[1][10:] + b"\n")
    p = write(tmp_path / "m.jsonl.zstd", data)
    with pytest.raises(SourceError, match="complete zstd frame 2 ends inside a record") as exc:
        read_all(p)
    assert exc.value.line == 3


def test_last_complete_frame_ending_mid_record_is_not_a_torn_tail(tmp_path):
    data = frame(HEADER + b"\n") + frame(EVENTS[0] + b"\n" + b'{"partial')
    with pytest.raises(SourceError, match="complete zstd frame 2 ends inside a record"):
        read_all(write(tmp_path / "m.jsonl.zstd", data))


def test_first_frame_lines_counts_header_frame(tmp_path):
    data = frame(HEADER + b"\n" + EVENTS[0] + b"\n") + frame(EVENTS[1] + b"\n")
    lines, reader = read_all(write(tmp_path / "f.jsonl.zstd", data))
    assert reader.first_frame_lines == 2 and len(lines) == 3


def test_decompression_bomb_fails_fast_with_bounded_memory(tmp_path):
    limit = 1024 * 1024
    cobj = zstandard.ZstdCompressor(write_checksum=True).compressobj()
    chunk = b"a" * (8 * 1024 * 1024)
    bomb = b"".join(cobj.compress(chunk) for _ in range(25)) + cobj.flush()  # 200 MB of 'a', no LF
    assert len(bomb) < 1024 * 1024
    p = write(tmp_path / "bomb.jsonl.zstd", frame(HEADER + b"\n") + bomb)
    tracemalloc.start()
    started = time.perf_counter()
    try:
        with pytest.raises(SourceError, match="line 2 is longer than 1 MiB") as exc:
            read_all(p, max_line_bytes=limit)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert exc.value.line == 2
    assert peak < 3 * limit, f"peak {peak} bytes"
    assert time.perf_counter() - started < 2.0


def test_one_shot_frame_content_size_cannot_bypass_the_limit(tmp_path):
    # A frame that declares its size (one verified call) but is over the call bound streams instead.
    p = write(tmp_path / "big.jsonl.zstd", frame(HEADER + b"\n") + frame(b"b" * (5 * 1024 * 1024)))
    tracemalloc.start()
    try:
        with pytest.raises(SourceError, match="line 2 is longer than"):
            read_all(p, max_line_bytes=512 * 1024)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 3 * 512 * 1024


def test_lying_content_size_is_corruption_not_a_huge_allocation(tmp_path):
    # Frame header claims 1 TiB of content (8-byte size field, no checksum); one raw block follows.
    content = EVENTS[0] + b"\n"
    lying = (
        b"\x28\xb5\x2f\xfd" + bytes([0xC0, 0x00]) + (2**40).to_bytes(8, "little")
        + ((len(content) << 3) | 1).to_bytes(3, "little") + content
    )
    p = write(tmp_path / "l.jsonl.zstd", frame(HEADER + b"\n") + lying)
    with pytest.raises(SourceError, match="corrupt zstd frame 2"):
        read_all(p)


def test_default_limit_constant():
    assert DEFAULT_MAX_LINE_BYTES == 64 * 1024 * 1024


# ----------------------------------------------------------------- resolve


def touch(path: Path, data: bytes = HEADER + b"\n") -> Path:
    return write(path, data)


def test_resolve_file_any_name(tmp_path):
    for name, gen in [
        ("session.jsonl", 0),
        ("session.jsonl.zstd", 0),
        ("session.v3.jsonl.zstd", 3),
        ("session.v02.jsonl", None),
        ("dump.txt", None),
    ]:
        p = touch(tmp_path / name)
        [ref] = resolve(str(p))
        assert ref.path == p and ref.display == str(p)
        assert ref.generation_from_name == gen
        assert ref.session_dir is None


def test_resolve_missing_path(tmp_path):
    with pytest.raises(SourceError, match="no such file or directory") as exc:
        resolve(str(tmp_path / "nope"))
    assert exc.value.file == str(tmp_path / "nope")


def test_session_dir_picks_highest_generation(tmp_path):
    d = tmp_path / "sess"
    for name in ("session.jsonl.zstd", "session.v2.jsonl.zstd", "session.v3.jsonl.zstd",
                 "session.v4.jsonl.zstd.0123456789ab.tmp", "session.lock"):
        touch(d / name)
    (d / ".dsh-mkdir-xyz").mkdir()
    [ref] = resolve(str(d))
    assert ref.path == d / "session.v3.jsonl.zstd"
    assert ref.generation_from_name == 3
    assert ref.session_dir == d


def test_generations_compare_numerically(tmp_path):
    d = tmp_path / "sess"
    touch(d / "session.v2.jsonl")
    touch(d / "session.v10.jsonl")  # not supported, but proves 10 > 2 (not "10" < "2")
    with pytest.raises(UnsupportedVersion, match=r"session\.v10\.jsonl"):
        resolve(str(d))


def test_non_canonical_names_are_ignored(tmp_path):
    """In a session directory of a sessions root, as dsh does; elsewhere they are logs of a plain folder
    (a directory holding logs beside its generation files is one: none is passed over)."""
    d = tmp_path / "root" / "--proj--" / "sess"
    touch(d / "session.v2.jsonl")
    touch(d / "session.v0.jsonl")
    touch(d / "session.v02.jsonl")
    touch(d / "session.v9.jsonl.bak")
    touch(d / "Session.v7.jsonl")
    [ref] = resolve(str(d))
    assert ref.path.name == "session.v2.jsonl"
    assert [ref.path.name for ref in resolve(str(tmp_path / "root"))] == ["session.v2.jsonl"]
    elsewhere = d.rename(tmp_path / "sess")
    assert [ref.path.name for ref in resolve(str(elsewhere))] == [
        "Session.v7.jsonl", "session.v0.jsonl", "session.v02.jsonl", "session.v2.jsonl"]
    assert parse_generation_name("session.v0.jsonl") is None
    assert parse_generation_name("session.v02.jsonl.zstd") is None
    assert parse_generation_name("session.v9007199254740992.jsonl") is None
    assert parse_generation_name("session.v12.jsonl.zstd") == (12, True)
    assert parse_generation_name("session.jsonl") == (0, False)


def test_session_dir_with_only_non_canonical_names_is_a_plain_folder_of_logs(tmp_path):
    d = tmp_path / "sess"
    touch(d / "session.v0.jsonl")
    touch(d / "notes.txt")
    (ref,) = resolve(str(d))
    assert ref.path == d / "session.v0.jsonl" and ref.generation_from_name is None and ref.session_dir is None


def test_a_folder_without_any_log_is_no_log_location(tmp_path):
    touch(tmp_path / "stuff" / "notes.txt")
    with pytest.raises(SourceError, match="expected a session directory"):
        resolve(str(tmp_path / "stuff"))


def test_both_encodings_of_a_generation_is_an_error(tmp_path):
    d = tmp_path / "sess"
    touch(d / "session.v4.jsonl")
    touch(d / "session.v4.jsonl.zstd")
    with pytest.raises(SourceError, match="both raw and zstd"):
        resolve(str(d))


def test_newer_generation_is_unsupported_without_fallback(tmp_path):
    d = tmp_path / "sess"
    touch(d / "session.v3.jsonl.zstd")
    touch(d / "session.v4.jsonl.zstd")
    touch(d / "session.v5.jsonl.zstd")
    with pytest.raises(UnsupportedVersion) as exc:
        resolve(str(d))
    assert exc.value.message == (
        "written by a newer dsh than this tool supports (session.v5.jsonl.zstd); dshctl reads generations 0-4"
    )


def test_sessions_root_layout(tmp_path):
    root = tmp_path / "sessions"
    a = touch(root / "--proj--" / "sess-1" / "session.v4.jsonl.zstd")
    touch(root / "--proj--" / "sess-1" / "session.v3.jsonl.zstd")
    b = touch(root / "_no-cwd" / "x~002Ey" / "session.jsonl")
    (root / "--proj--" / "empty-session").mkdir()  # created, never appended: no file
    (root / "--proj--" / ".dsh-mkdir-123").mkdir()
    touch(root / "stray.txt")
    refs = resolve(str(root))
    assert [r.path for r in refs] == sorted([a, b], key=str)
    assert {r.path: r.session_dir for r in refs} == {a: a.parent, b: b.parent}
    assert all(r.problem is None for r in refs)
    # a project directory alone
    [ref] = resolve(str(root / "--proj--"))
    assert ref.path == a
    assert resolve(str(root / "_no-cwd"))[0].path == b


def test_root_with_a_newer_session_defers_the_error_to_that_session(tmp_path):
    root = tmp_path / "sessions"
    ok = touch(root / "--p--" / "a" / "session.v4.jsonl")
    touch(root / "--p--" / "b" / "session.v4.jsonl")
    touch(root / "--p--" / "b" / "session.v5.jsonl")
    refs = resolve(str(root))
    assert [r.path for r in refs][0] == ok
    bad = refs[1]
    assert isinstance(bad.problem, UnsupportedVersion)
    with pytest.raises(UnsupportedVersion):
        list(LineReader(bad))


def test_empty_root_and_unrecognised_dir(tmp_path):
    empty_root = tmp_path / "dsh" / "sessions"
    empty_root.mkdir(parents=True)
    assert resolve(str(empty_root)) == []
    empty_other = tmp_path / "empty"
    empty_other.mkdir()
    assert resolve(str(empty_other)) == []  # nothing there, whatever its name: no logs found
    other = tmp_path / "random"
    touch(other / "notes.md")
    with pytest.raises(SourceError, match="expected a session directory"):
        resolve(str(other))


def test_export_dir_includes_subagent_logs(tmp_path):
    export = tmp_path / "dsh-session-abc"
    root_log = touch(export / "session.jsonl")
    child = touch(export / "subagents" / "child-1" / "session.jsonl")
    touch(export / "media" / "img.png", b"\x89PNG")
    refs = resolve(str(export))
    assert [r.path for r in refs] == [root_log, child]
    # exports name every generation session.jsonl, so the name says nothing
    assert [r.generation_from_name for r in refs] == [None, None]
    assert refs[1].session_dir == child.parent


def test_plain_session_dir_returns_only_its_log(tmp_path):
    d = tmp_path / "sess"
    touch(d / "session.jsonl.zstd")
    [ref] = resolve(str(d))
    assert ref.generation_from_name == 0


# ----------------------------------------------------------------- names


def test_project_key_examples():
    assert project_key("/home/alice/dev proj") == "--home-alice-dev~0020proj--"
    assert project_key("/") == "--root--"
    assert project_key("C:\\Users\\bob") == "--C-Users-bob--"
    assert project_key("/a//b::c") == "--a-b-c--"
    assert project_key("/x~y") == "--x~007Ey--"
    assert project_key("/dsh/workspace") == "--dsh-workspace--"
    assert project_key("/é😀") == "--~00E9~D83D~DE00--"
    assert project_key("/" + "a" * 300) == "--" + "a" * 251 + "--"
    with pytest.raises(ValueError):
        project_key("")


def test_decode_session_dir_name():
    assert decode_session_dir_name("x~002Ey") == "x.y"
    assert decode_session_dir_name("~002E") == "."
    assert decode_session_dir_name("~002E~002E") == ".."
    assert decode_session_dir_name("agent-session-1234") == "agent-session-1234"
    assert decode_session_dir_name("a~007Eb~002Fc~0020d") == "a~b/c d"
    assert decode_session_dir_name("~D83D~DE00") == "😀"
    assert decode_session_dir_name("~D800x") == "\ud800x"  # lone surrogate survives
    assert decode_session_dir_name("x~zz") == "x~zz"


def test_sessions_root_env(monkeypatch, tmp_path):
    monkeypatch.setenv("DSH_HOME", str(tmp_path))
    assert sessions_root() == tmp_path / "sessions"
    monkeypatch.setenv("DSH_HOME", "   ")
    assert sessions_root() == Path.home() / ".dsh" / "sessions"
    monkeypatch.delenv("DSH_HOME")
    assert sessions_root() == Path.home() / ".dsh" / "sessions"
    monkeypatch.setenv("DSH_HOME", "~/elsewhere")
    assert sessions_root() == Path.home() / "elsewhere" / "sessions"
    monkeypatch.setenv("DSH_HOME", "rel")
    assert sessions_root() == Path(os.getcwd()) / "rel" / "sessions"
