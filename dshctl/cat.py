"""``dshctl cat``: the normalized events as NDJSON (or the physical lines with ``--raw``)."""

from __future__ import annotations

import sys
from fnmatch import fnmatchcase
from typing import Any, Iterator

from .errors import EXIT_OK
from .output import emit_ndjson, warn


def header_json(log) -> dict[str, Any]:
    import msgspec

    header = msgspec.to_builtins(log.header)
    extra = header.pop("extra", None) or {}
    return {"type": "session", **header, **extra}


def iter_cat_records(log, *, type_globs: list[str], turn: int | None, expand: bool) -> Iterator[Any]:
    """What ``dshctl cat`` prints for one opened log, as plain JSON values."""
    from .stream import iter_members

    if not type_globs and turn is None:
        yield header_json(log)
    for event in log.events():
        if type_globs and not any(fnmatchcase(event.type, glob) for glob in type_globs):
            continue
        if turn is not None and event.turn != turn:
            continue
        record = event.to_builtins()
        if expand and event.stream is not None:
            members = 0
            for member_time, chunk in iter_members(event.stream):
                yield {
                    "type": "stream/chunk",
                    "settlementSeq": event.seq,
                    "turn": event.turn,
                    "step": event.step,
                    "member": members,
                    "time": member_time,
                    "chunk": chunk,
                }
                members += 1
            if isinstance(record["data"], dict):  # a v0 settlement's data can be anything; its stream is folded
                record["data"].pop("stream", None)
            record["streamMembers"] = members
        yield record


def run_cat(
    path: str, *, type_globs: list[str], turn: int | None, expand: bool, raw: bool, strict: bool, follow: bool = False
) -> int:
    from .reader import open_log

    if follow:
        return follow_cat(path, type_globs=type_globs, turn=turn, expand=expand, raw=raw, strict=strict)
    if raw:
        return _print_raw_lines(path, strict=strict)
    log = open_log(path, strict=strict, on_warning=warn)
    emit_ndjson(iter_cat_records(log, type_globs=type_globs, turn=turn, expand=expand))
    return EXIT_OK


def _print_raw_lines(path: str, *, strict: bool) -> int:
    from .source import LineReader, resolve_one

    ref = resolve_one(path)
    reader = LineReader(ref)
    out = sys.stdout.buffer
    try:
        for _, line in reader:
            out.write(line)
            out.write(b"\n")
    finally:
        reader.close()
    report_raw_torn_tail(reader, strict=strict)
    return EXIT_OK


def report_raw_torn_tail(reader, *, strict: bool) -> None:
    """``cat --raw`` after the last line: the torn tail it did not print, as a warning (an error with
    ``--strict``)."""
    from .errors import FormatError

    torn = reader.torn_tail
    if torn is not None:
        text = f"torn tail not printed: line {torn.line} ({torn.bytes} bytes, {torn.reason})"
        if strict:
            raise FormatError(text, file=reader.ref.display, line=torn.line)
        warn(f"{reader.ref.display}: {text}")


def follow_cat(spec: str, *, type_globs: list[str], turn: int | None, expand: bool, raw: bool, strict: bool) -> int:
    """``dshctl cat --follow``: each record written as soon as it is final, flushed whenever the reader
    has caught up with the log."""
    from .follow import Follower
    from .output import to_json

    follower = Follower(spec, strict=strict)
    out = sys.stdout.buffer
    follower.on_idle = out.flush
    if raw:
        return _follow_raw(follower, out)

    def consume(log) -> None:
        for record in iter_cat_records(log, type_globs=type_globs, turn=turn, expand=expand):
            out.write(to_json(record) + b"\n")

    return follower.run(consume)


def _follow_raw(follower, out) -> int:
    """``cat --raw --follow``: the physical lines as they become complete (the header included)."""

    def consume(reader) -> None:
        for _, line in reader:
            out.write(line + b"\n")
        report_raw_torn_tail(reader, strict=follower.strict)

    return follower.run(consume, raw=True)
