"""A log's decompressed bytes in one piece, for the byte test of ``grep -F`` (:mod:`.skip`).

Nothing here judges the log: any trouble (a damaged frame, a torn tail, a log too big to hold in memory,
standard input) answers None, and the log is then read the ordinary way, which reports it.
"""

from __future__ import annotations

import os
from typing import Any

import msgspec

from ..errors import DshctlError
from ..jsvalues import NOT_JSON
from ..model import Header
from ..source.zstd import ZSTD_MAGIC

MAX_BYTES = 64 << 20
"""Bigger logs are not held in memory for the byte test: they are read the ordinary way."""


def decompressed(ref: Any, limit: int = MAX_BYTES) -> bytes | None:
    """The log's bytes, zstd frames decompressed; None when they cannot be had cheaply and safely."""
    if ref.path is None or ref.problem is not None or ref.member is not None:
        return None
    try:
        with open(ref.path, "rb") as file:
            if file.read(4) != ZSTD_MAGIC:
                if os.fstat(file.fileno()).st_size > limit:
                    return None  # too big to hold: reading 64 MB only to drop it would be waste
                file.seek(0)
                data = file.read(limit + 1)
            else:
                file.seek(0)
                data = _zstd_read(file, limit + 1)
    except Exception:  # noqa: BLE001 - any failure: read the log the ordinary way, which reports it
        return None
    return data if len(data) <= limit else None


def _zstd_read(file, size: int) -> bytes:
    import zstandard

    reader = zstandard.ZstdDecompressor().stream_reader(file, read_across_frames=True)
    parts: list[bytes] = []
    left = size
    while left > 0:
        part = reader.read(min(left, 8 << 20))
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


_decode = msgspec.json.Decoder().decode


def header_of(data: bytes) -> Header | None:
    """The header of a log's bytes when line 1 is one dsh accepts; None otherwise."""
    from ..generations import parse_header

    end = data.find(b"\n")
    if end < 0:
        return None
    try:
        return parse_header(_decode(data[:end]), lambda _text: None)
    except (DshctlError, *NOT_JSON):
        return None
