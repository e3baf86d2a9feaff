"""The reader thread (:mod:`dshctl.source.overlap`) gives what the serial fast path gives.

It decodes batches of frames ahead of the caller and hands the first frame it cannot vouch for to the
structural walk; whatever the damage, the lines, the error, the torn tail and every counter the reader
keeps must be those of the serial reading (which tests/test_zstd_fast_path.py ties to the walk).
"""

from __future__ import annotations

import threading

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import dshctl.source.overlap as overlap
from dshctl.errors import DshctlError
from dshctl.source import LineReader, resolve

from test_zstd_fast_path import DAMAGE_KINDS, HEADER, _frame, _line, damage, damaged


def _outcome(path, *, threaded: bool, max_line_bytes: int | None = None, stop_after: int | None = None) -> dict:
    try:
        ref = resolve(str(path))[0]
    except DshctlError as exc:  # damage that makes the file look like something else (a ZIP)
        return {"resolve_error": str(exc)}
    reader = LineReader(ref, max_line_bytes=max_line_bytes)
    reader.overlap = threaded
    lines: list = []
    torn_at_yield: list = []
    error = None
    iterator = iter(reader)
    try:
        for item in iterator:
            lines.append(item)
            torn_at_yield.append(reader.torn_frame_start_line)
            if stop_after is not None and len(lines) >= stop_after:
                break
    except DshctlError as exc:
        error = str(exc)
    finally:
        iterator.close()
    return {
        "lines": lines,
        "error": error,
        "torn_tail": reader.torn_tail,
        "frames": reader.frames if stop_after is None else None,
        "first_frame_lines": reader.first_frame_lines,
        "torn_frame_start_line": reader.torn_frame_start_line,
        "torn_at_yield": torn_at_yield,
        "bytes_decoded": reader.bytes_decoded if stop_after is None else None,
        "gaps": reader.gaps,
    }


@pytest.fixture
def small_batches(monkeypatch):
    """Every log goes through the thread, in batches of a few frames, so that batches, halving and
    hand-overs happen on small logs."""
    monkeypatch.setattr(overlap, "OVERLAP_MIN_BYTES", 0)
    monkeypatch.setattr(overlap, "READ_BYTES", 4096)
    monkeypatch.setattr(overlap, "BATCH_DECODED", 2048)


def _assert_same(path, **kw) -> dict:
    serial = _outcome(path, threaded=False, **kw)
    threaded = _outcome(path, threaded=True, **kw)
    assert threaded == serial
    return serial


def _no_thread_left() -> bool:
    return not any(thread.name == "dshctl-zstd-prefetch" for thread in threading.enumerate())


@st.composite
def many_frames(draw) -> bytes:
    """Many small frames (dsh's shape: a frame per commit), some larger, some unsized, some empty."""
    frames = [_frame(HEADER)]
    seq = 0
    for _ in range(draw(st.integers(0, 60))):
        kind = draw(st.sampled_from(["line", "line", "line", "lines", "big", "unsized", "empty"]))
        if kind == "empty":
            frames.append(_frame(b""))
            continue
        count = draw(st.integers(2, 5)) if kind == "lines" else 1
        width = 20_000 if kind == "big" else draw(st.sampled_from([0, 30, 300]))
        batch = b"".join(_line(seq + i, width) for i in range(count))
        seq += count
        frames.append(_frame(batch, sized=kind != "unsized"))
    return b"".join(frames)


@st.composite
def damaged_many(draw) -> bytes:
    data = bytearray(draw(many_frames()))
    kind = draw(st.sampled_from([*DAMAGE_KINDS, "magic", "skippable"]))
    if kind in DAMAGE_KINDS:
        damage(draw, data, kind)
    elif kind == "magic":
        # a frame magic number (zstd, legacy or skippable) written over compressed bytes: a boundary
        # the thread must see through
        magic = draw(st.sampled_from([b"\x28\xb5\x2f\xfd", b"\x25\xb5\x2f\xfd", b"\x50\x2a\x4d\x18"]))
        i = draw(st.integers(0, max(0, len(data) - 4)))
        data[i : i + 4] = magic
    elif kind == "skippable":
        # a skippable frame between two frames: libzstd skips it, dsh's scanner refuses it
        skip = b"\x5a\x2a\x4d\x18" + (4).to_bytes(4, "little") + b"abcd"
        data += skip + _frame(_line(999, 0))
    return bytes(data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=damaged_many())
def test_the_thread_reads_damaged_logs_as_the_serial_reader(tmp_path, small_batches, data):
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(data if data else b"\x28")
    _assert_same(path)
    assert _no_thread_left()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=damaged())
def test_the_thread_agrees_on_the_fast_path_properties_logs(tmp_path, small_batches, data):
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(data if data else b"\x28")
    _assert_same(path)


@pytest.mark.parametrize("limit", [1 << 20, 300_000, 64 * 1024, 1000])
def test_the_thread_agrees_under_small_line_limits(tmp_path, small_batches, limit):
    body = [_frame(_line(i, width)) for i, width in enumerate([10, 100_000, 400_000, 10, 900, 10])]
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(_frame(HEADER) + b"".join(body))
    _assert_same(path, max_line_bytes=limit)


def test_a_magic_number_inside_compressed_data_costs_one_frame(tmp_path, small_batches):
    """A boundary pattern inside a frame's compressed bytes splits it in two segments; the thread decodes
    that frame on its own and carries on (no hand-over to the walk for the rest of the log)."""
    frames = [_frame(HEADER)] + [_frame(_line(i, 40)) for i in range(200)]
    victim = bytearray(frames[100])
    victim[len(victim) // 2 : len(victim) // 2 + 4] = b"\x28\xb5\x2f\xfd"
    # find a frame whose compressed bytes hold the pattern naturally: make it with raw (stored) bytes
    raw = zstandard.ZstdCompressor(level=1, write_checksum=True).compress(
        b'{"type":"turn/start","seq":100,"time":1,"data":{"t":"\x28\xb5\x2f\xfd"}}\n'
    )
    assert b"\x28\xb5\x2f\xfd" in raw[4:]
    frames[100] = raw
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(b"".join(frames))
    walked = []
    original = LineReader._walk_from

    def spy(self, frame_start, frame_no):
        walked.append(frame_no)
        return original(self, frame_start, frame_no)

    LineReader._walk_from = spy  # type: ignore[method-assign]
    try:
        outcome = _assert_same(path)
    finally:
        LineReader._walk_from = original  # type: ignore[method-assign]
    assert outcome["error"] is None and len(outcome["lines"]) == 201
    assert walked == [202]  # only the (empty) end of the file is left to the walk


def test_a_caller_that_stops_ends_the_thread(tmp_path, small_batches):
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(_frame(HEADER) + b"".join(_frame(_line(i, 300)) for i in range(2000)))
    outcome = _assert_same(path, stop_after=10)
    assert len(outcome["lines"]) == 10
    assert _no_thread_left()


def test_small_logs_are_read_without_the_thread(tmp_path, monkeypatch):
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(_frame(HEADER) + _frame(_line(0, 10)))
    started = []
    monkeypatch.setattr(overlap._Prefetch, "start", lambda self: started.append(self))
    assert len(list(LineReader(resolve(str(path))[0]))) == 2
    assert started == []


def test_closing_the_reader_ends_the_thread_before_the_file(tmp_path, small_batches):
    """A caller that gives up on a log (an error further up) closes the reader, not the line iterator:
    the thread must not read on from a closed, perhaps reused, file descriptor."""
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(_frame(HEADER) + b"".join(_frame(_line(i, 300)) for i in range(2000)))
    reader = LineReader(resolve(str(path))[0])
    lines = iter(reader)
    next(lines)
    assert not _no_thread_left()
    reader.close()
    assert _no_thread_left()
    assert reader.stop_ahead is None
