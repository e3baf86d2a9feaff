"""The zstd fast path (python-zstandard finds frame ends) and the structural frame walk agree.

The fast path runs for seekable files; on anything unexpected it re-reads that frame with the walk.
Whatever the damage, both must yield the same lines and end the same way: the same error message,
the same torn tail, the same frame counts.
"""

from __future__ import annotations

import functools
import random

import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dshctl.errors import DshctlError
from dshctl.source import LineReader, resolve

HEADER = b'{"type":"session","version":4,"id":"s1","createdAt":1,"isSeeded":false,"delegationDepth":0}\n'


def _line(i: int, width: int) -> bytes:
    return b'{"type":"turn/start","seq":%d,"time":1,"data":{"t":"%s"}}\n' % (i, b"x" * width)


@functools.cache
def _compressor(level: int, sized: bool) -> zstandard.ZstdCompressor:
    # one per setting: a new one at level 19 spends ~0.2 s setting up its tables, a reused one ~nothing
    # (each frame is compressed anew: the bytes are the same)
    return zstandard.ZstdCompressor(level=level, write_checksum=True, write_content_size=sized)


def _frame(data: bytes, *, sized: bool = True, level: int = 3) -> bytes:
    compressor = _compressor(level, sized)
    if sized:
        return compressor.compress(data)
    stream = compressor.compressobj()  # a streaming compressor does not know the size up front
    return stream.compress(data) + stream.flush()


class WalkingReader(LineReader):
    """A reader whose every zstd file takes the structural walk, as standard input does (a subclass, not
    a swapped method: the compiled build's attributes are read-only)."""

    def _zstd_lines(self, first: bytes):
        return self._zstd_walk(first)


def _outcome(path, *, walk: bool, max_line_bytes: int | None = None) -> dict:
    reader = (WalkingReader if walk else LineReader)(resolve(str(path))[0], max_line_bytes=max_line_bytes)
    lines: list = []
    torn_at_yield: list = []
    error = None
    try:
        for item in reader:
            lines.append(item)
            torn_at_yield.append(reader.torn_frame_start_line)
    except DshctlError as exc:
        error = str(exc)
    return {
        "lines": lines,
        "error": error,
        "torn_tail": reader.torn_tail,
        "frames": reader.frames,
        "first_frame_lines": reader.first_frame_lines,
        "torn_frame_start_line": reader.torn_frame_start_line,
        "torn_at_yield": torn_at_yield,
        "bytes_decoded": reader.bytes_decoded,
    }


def _assert_same(path, **kw) -> dict:
    fast = _outcome(path, walk=False, **kw)
    walk = _outcome(path, walk=True, **kw)
    assert fast == walk
    return fast


@st.composite
def logs(draw) -> bytes:
    """A dsh-shaped zstd log: the header frame, then frames of whole lines, some large, some unsized."""
    frames = [_frame(HEADER)]
    seq = 0
    for _ in range(draw(st.integers(0, 8))):
        batch = b""
        for _ in range(draw(st.integers(1, 4))):
            batch += _line(seq, draw(st.sampled_from([0, 10, 300, 5000, 200_000])))
            seq += 1
        frames.append(_frame(batch, sized=draw(st.booleans()), level=draw(st.sampled_from([1, 3, 19]))))
    return b"".join(frames)


DAMAGE_KINDS = ["none", "truncate", "flip", "insert", "delete", "append", "mid-record"]


@st.composite
def damaged(draw) -> bytes:
    data = bytearray(draw(logs()))
    damage(draw, data, draw(st.sampled_from(DAMAGE_KINDS)))
    return bytes(data)


def damage(draw, data: bytearray, kind: str) -> None:
    """One of :data:`DAMAGE_KINDS` done to ``data`` in place (``draw`` chooses where)."""
    if kind == "truncate":
        del data[draw(st.integers(0, len(data) - 1)) :]
    elif kind == "flip":
        i = draw(st.integers(0, len(data) - 1))
        data[i] ^= 1 << draw(st.integers(0, 7))
    elif kind == "insert":
        i = draw(st.integers(0, len(data)))
        data[i:i] = draw(st.binary(min_size=1, max_size=8))
    elif kind == "delete":
        i = draw(st.integers(0, len(data) - 1))
        del data[i : i + draw(st.integers(1, 8))]
    elif kind == "append":
        data += draw(st.binary(min_size=1, max_size=40))
    elif kind == "mid-record":
        data += _frame(b'{"type":"turn/st') + _frame(b'art","seq":0}\n')


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=damaged())
def test_fast_path_and_walk_agree_on_damaged_logs(tmp_path, data):
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(data if data else b"\x28")
    _assert_same(path)


@pytest.mark.parametrize("limit", [1 << 20, 300_000, 64 * 1024])
def test_fast_path_and_walk_agree_under_small_line_limits(tmp_path, limit):
    rng = random.Random(limit)
    body = b"".join(_line(i, rng.choice([10, 100_000, 400_000])) for i in range(12))
    path = tmp_path / "session.v4.jsonl.zstd"
    for sized in (True, False):
        path.write_bytes(_frame(HEADER) + _frame(body, sized=sized))
        _assert_same(path, max_line_bytes=limit)


def test_damage_after_a_large_unsized_frame_is_reported_once(tmp_path):
    """The fast path yields lines of a large size-less frame as they decode; when that frame turns
    out torn, the walk re-reads it and only the lines not yet yielded follow."""
    body = b"".join(_line(i, 3000) for i in range(4000))
    whole = _frame(HEADER) + _frame(body, sized=False)
    path = tmp_path / "session.v4.jsonl.zstd"
    path.write_bytes(whole[: len(whole) - 5000])
    outcome = _assert_same(path)
    numbers = [n for n, _ in outcome["lines"]]
    assert numbers == list(range(1, len(numbers) + 1))
    assert outcome["torn_tail"] is not None and outcome["error"] is None


def test_the_walks_frame_header_arithmetic_is_libzstds():
    """The walk sizes frame headers itself (libzstd's parser refuses headers the walk reports later,
    differently); its arithmetic must still be libzstd's for every descriptor byte."""
    from dshctl.source.zstd import ZSTD_MAGIC, frame_header_layout

    for descriptor in range(256):
        header_size, _ = frame_header_layout(descriptor)
        assert header_size == zstandard.frame_header_size(ZSTD_MAGIC + bytes([descriptor])), hex(descriptor)


def test_decode_sized_frame_takes_one_whole_frame_of_a_declared_size_only():
    from dshctl.source.zstd import decode_sized_frame

    text = b"".join(b'{"seq":%d,"data":"%s"}\n' % (n, b"x" * (n % 50)) for n in range(3000))
    frame = zstandard.ZstdCompressor(level=3).compress(text)
    after = zstandard.ZstdCompressor().compress(b"{}\n")
    stream = frame + after

    def pieces(data: bytes, size: int = 100):
        return lambda offset: data[offset : offset + size]

    seen: list[bytes] = []
    assert decode_sized_frame(stream[:18], pieces(stream), len(text), seen.append) == (text, len(frame))
    assert b"".join(seen) == text and len(seen) > 1  # each piece observed as it was decoded
    ignore = lambda piece: None  # noqa: E731
    assert decode_sized_frame(stream[:18], pieces(stream, 1 << 20), len(text) - 1, ignore) is None  # larger than allowed
    unsized = zstandard.ZstdCompressor(write_content_size=False).compress(text)
    assert decode_sized_frame(unsized[:18], pieces(unsized), 1 << 30, ignore) is None
    assert decode_sized_frame(b"\x00" + frame[1:18], pieces(frame), 1 << 30, ignore) is None  # no magic
    assert decode_sized_frame(frame[:18], pieces(frame[:-5]), 1 << 30, ignore) is None  # cut: the bytes end first
    broken = frame[:40] + bytes(b ^ 0xFF for b in frame[40:60]) + frame[60:]
    assert decode_sized_frame(broken[:18], pieces(broken), 1 << 30, ignore) is None  # the decoder's error
    empty = zstandard.ZstdCompressor().compress(b"")
    assert decode_sized_frame(empty[:18], pieces(empty), 1 << 30, ignore) is None  # declares no bytes

    class Enough(Exception):
        pass

    def stop(piece: bytes) -> None:
        raise Enough

    with pytest.raises(Enough):  # the caller's bound stops the decoding
        decode_sized_frame(frame[:18], pieces(frame), 1 << 30, stop)
