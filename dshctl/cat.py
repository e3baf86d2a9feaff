"""``dshctl cat``: the normalized events as NDJSON (or the physical lines with ``--raw``)."""

from __future__ import annotations

import sys
from fnmatch import fnmatchcase
from typing import Any, Callable, Iterator

from .errors import EXIT_FINDINGS, EXIT_OK
from .options import CatOptions, chosen_log
from .output import emit_ndjson
from .stdio import is_terminal, warn
from .textsafe import visible_raw_line


def header_json(log) -> dict[str, Any]:
    import msgspec

    header = msgspec.to_builtins(log.header)
    extra = header.pop("extra", None) or {}
    return {"type": "session", **header, **extra}


def iter_cat_records(log, options: CatOptions) -> Iterator[Any]:
    """What ``dshctl cat`` prints for one opened log, as plain JSON values. With ``--expand`` a selected
    settlement brings its ``stream/chunk`` lines, and ``--type stream/chunk`` selects them on their own."""
    type_globs, turn, expand = options.type, options.turn, options.expand
    if not type_globs and turn is None:
        yield header_json(log)

    def wanted(kind: str) -> bool:
        return not type_globs or any(fnmatchcase(kind, glob) for glob in type_globs)

    any_chunks_wanted = expand and wanted("stream/chunk")
    for event in log.events():
        if turn is not None and event.turn != turn:
            continue
        event_wanted = wanted(event.type)
        chunks_wanted = expand and (event_wanted or any_chunks_wanted)
        if not event_wanted and not (chunks_wanted and event.stream is not None):
            continue
        record = event.to_builtins()
        if expand and event.stream is not None:
            members = 0
            for chunk_record in _stream_chunks(event):
                if chunks_wanted:
                    yield chunk_record
                members += 1
            if isinstance(record["data"], dict):  # a v0 settlement's data can be anything; its stream is folded
                record["data"].pop("stream", None)
            record["streamMembers"] = members
        if event_wanted:
            yield record


def _stream_chunks(event) -> Iterator[dict[str, Any]]:
    """A settlement's stream members, each a ``stream/chunk`` record."""
    from .stream import iter_members

    for member, (member_time, chunk) in enumerate(iter_members(event.stream)):
        yield {
            "type": "stream/chunk",
            "settlementSeq": event.seq,
            "turn": event.turn,
            "step": event.step,
            "member": member,
            "time": member_time,
            "chunk": chunk,
        }


def run_cat(path: str | None, options: CatOptions) -> int:
    """The ``dshctl cat`` command; 1 when ``salvage`` read past damage."""
    from .reader import open_log

    path = chosen_log(path, options)
    if options.follow:
        return follow_cat(path, options)
    if options.raw:
        return _print_raw_lines(path, strict=options.strict, salvage=options.salvage)
    from .many import reading_path

    with reading_path("cat", path, allowed=options.progress, streams=True, color=options.color_when):
        log = open_log(path, strict=options.strict, on_warning=warn, salvage=options.salvage)
        emit_ndjson(iter_cat_records(log, options))
    return EXIT_FINDINGS if log.gaps else EXIT_OK


def _raw_for(out) -> Callable[[bytes], bytes]:
    """How ``--raw`` writes a stored line: byte for byte to a pipe or file; to a terminal, a line holding
    control characters (a damaged one) with them shown as pictures, never run by the terminal."""
    return visible_raw_line if is_terminal(out) else _as_stored


def _as_stored(line: bytes) -> bytes:
    return line


def _print_raw_lines(path: str, *, strict: bool, salvage: bool) -> int:
    from .source import LineReader, resolve_one

    ref = resolve_one(path)
    reader = LineReader(ref, salvage=salvage)
    out = sys.stdout.buffer
    shown = _raw_for(out)
    try:
        for _, line in reader:
            out.write(shown(line))
            out.write(b"\n")
    finally:
        reader.close()
    for gap in reader.gaps:
        warn(f"{ref.display}: line {gap.line}: salvage: {gap.message}")
    report_raw_torn_tail(reader, strict=strict)
    return EXIT_FINDINGS if reader.gaps else EXIT_OK


def report_raw_torn_tail(reader, *, strict: bool, on_warning: Callable[[str], None] | None = warn) -> None:
    """``cat --raw`` after the last line: the torn tail it did not print, as a warning (an error with
    ``--strict``)."""
    from .errors import FormatError

    torn = reader.torn_tail
    if torn is not None:
        display = reader.ref.display
        text = f"torn tail not printed: {torn.torn_frame}" if torn.torn_frame else f"torn tail not printed ({torn.bytes} bytes, {torn.reason})"
        if strict:
            raise FormatError(text, file=display, line=torn.line)
        if on_warning is not None:
            on_warning(f"{display}: line {torn.line}: {text}")


def follow_cat(spec: str, options: CatOptions) -> int:
    """``dshctl cat --follow``: each record written as soon as it is final, flushed whenever the reader
    has caught up with the log."""
    from .follow import Follower
    from .output import to_json

    follower = Follower(spec, strict=options.strict)
    out = sys.stdout.buffer
    follower.on_idle = out.flush
    if options.raw:
        return _follow_raw(follower, out)

    def consume(log) -> None:
        for record in iter_cat_records(log, options):
            out.write(to_json(record) + b"\n")

    return follower.run(consume)


def _follow_raw(follower, out) -> int:
    """``cat --raw --follow``: the physical lines as they become complete (the header included)."""

    shown = _raw_for(out)

    def consume(reader) -> None:
        for _, line in reader:
            out.write(shown(line) + b"\n")
        report_raw_torn_tail(reader, strict=follower.strict)

    return follower.run(consume, raw=True)
