"""Searching logs: :func:`grep_log` for one, :func:`map_grep` for many, and the records they return.

A log is searched piece by piece (:mod:`dshctl.said`: one content block each, streams joined per
block), each piece matched as :mod:`.pattern` says. A ``-F`` string is first looked for in the
decompressed bytes (:mod:`.skip`): a log that cannot hold it is not decoded at all.
"""

from __future__ import annotations

from functools import lru_cache, partial
from typing import Any, Iterable, Iterator

import msgspec

from ..options import GrepOptions
from ..said import DEFAULT_KINDS, KINDS, said
from ..textsafe import without_cr
from .pattern import Found, Line, Pattern, context_lines, find, shown_lines

SCHEMA = "dshctl-grep/1"
"""The ``schema`` of the ``--json`` document."""

__all__ = ["DEFAULT_KINDS", "KINDS", "SCHEMA", "Group", "Hit", "LogGrep", "grep_log", "map_grep"]


class Hit(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One match: where it was said and the line holding it (the ``--json`` / ``--ndjson`` record)."""

    path: str
    id: str | None
    turn: int | None
    step: int | None
    seq: int
    kind: str
    text: str
    """The line of the block holding the match (the lines it spans, when it spans several; with the line
    feed the match ends with, when it ends with one), exactly as written: CRs included."""
    match: tuple[int, int]
    """``[start, end)`` of the match in ``text``, in code points: ``text[start:end]`` is the match (with
    the CRs it spans: the search drops CRs, as the user saw the text)."""
    before: list[str] | None = None
    """With ``context``: up to that many lines of the same block before ``text``."""
    after: list[str] | None = None


class Group(msgspec.Struct, kw_only=True):
    """The text form: a run of consecutive lines of one block — lines holding matches (each once, with
    all of them) and the context around them."""

    turn: int | None
    step: int | None
    seq: int
    kind: str
    lines: list[Line]


class LogGrep(msgspec.Struct, kw_only=True):
    """What one log held: its hits (none when only counted or grouped), the number of lines matches touch
    (as ripgrep's ``-c`` counts), and whether it was read."""

    path: str
    id: str | None
    hits: list[Hit]
    count: int
    groups: list[Group] = []
    """With ``grouped``: the lines to show, instead of hits."""
    skipped: bool = False
    """Outside ``--since`` / ``--until``: nothing past the header was read."""
    warnings: list[str] = []


def grep_log(source: Any, pattern: str | Pattern, options: GrepOptions | None = None) -> LogGrep:
    """The hits of ``pattern`` in one log (a path, ``-`` or a :class:`~dshctl.source.LogRef`).

    ``pattern`` is a string read as ``options`` say (``fixed_strings``, ``ignore_case``, ``smart_case``,
    ``word_regexp``), or a :func:`~dshctl.grep.pattern.compile_pattern` result. ``in_`` narrows what is
    searched (:data:`KINDS`); ``max_count`` stops the log after the hits on that many lines;
    ``count`` / ``files_with_matches`` count without keeping hits; ``context`` adds that many lines of
    the block around each hit. ``count`` of the result is the number of lines the hits touch."""
    options = options or GrepOptions()
    return _grep_one(source, options.pattern(pattern), options)


PART_SIZE = 256
"""A log's hits go out in parts of about this many matching lines, as they are found: the output of one big
log begins before it is all read, and a closed pipe stops the reading."""


def _grep_one(source: Any, pattern: Pattern, options: GrepOptions, grouped: bool = False) -> LogGrep:
    """``grouped``: the text form's :class:`Group` runs of lines instead of hits."""
    (result,) = _grep_parts(source, pattern, options, grouped, part_size=None)
    return result


def _grep_parts(source: Any, pattern: Pattern, options: GrepOptions, grouped: bool = False,
                part_size: int | None = PART_SIZE) -> Iterator[LogGrep]:
    """One log's result in parts, in order, each with the hits or groups found since the one before and
    the lines they touch (``count``); the last one (also the only one with ``part_size`` None) carries
    the log's warnings."""
    from ..reader import open_log
    from ..source import as_ref

    ref = as_ref(source)
    if pattern.fixed is not None:
        skipped = _skip_by_bytes(ref, pattern, options)
        if skipped is not None:
            yield skipped
            return
    with open_log(ref) as log:
        header = log.header
        result = LogGrep(path=log.display, id=header.id, hits=[], count=0)
        told = 0  # lines counted in the parts already yielded
        if not options.window.holds(header.createdAt):
            result.skipped = True
        else:
            if options.mode != "hits":  # -l, -c: one line a log, nothing kept to send early
                part_size = None
            for _ in _search(log.events(), pattern, options, grouped, result):
                if part_size is not None and result.count - told >= part_size:
                    yield LogGrep(path=result.path, id=result.id, hits=result.hits, count=result.count - told, groups=result.groups)
                    told, result.hits, result.groups = result.count, [], []
        result.count -= told
        result.warnings = log.warnings
    yield result


def _search(events, pattern: Pattern, options: GrepOptions, grouped: bool, result: LogGrep) -> Iterator[None]:
    """Adds the hits to ``result``, yielding after each piece searched."""
    limit = options.lines_wanted
    if limit is not None and limit <= 0:
        return
    keep = options.mode == "hits"
    for piece in said(events, options.kinds):
        text = without_cr(piece.text)
        founds = _count_lines(find(pattern, text), result, limit)
        if founds and keep:
            _keep(result, piece, text, founds, options.around, grouped)
        if limit is not None and result.count >= limit:
            return
        yield


def _count_lines(founds: Iterable[Found], result: LogGrep, limit: int | None) -> list[Found]:
    """The piece's matches, counted by the lines they touch, up to the last one on the ``limit``-th line."""
    kept: list[Found] = []
    last_line = -1  # where the last line counted starts
    for found in founds:
        new_lines = found.line_count - (found.line_start == last_line)
        if limit is not None and new_lines and result.count >= limit:
            break
        result.count += new_lines
        last_line = found.last_line_start
        kept.append(found)
    return kept


def _keep(result: LogGrep, piece, text: str, founds: list[Found], context: tuple[int, int], grouped: bool) -> None:
    if grouped:
        result.groups.extend(_group(piece, lines) for lines in shown_lines(text, founds, context))
        return
    if text is not piece.text:  # it had CRs: a hit is data, it keeps them
        written = _WithCr(piece.text)
        founds = [written.found(found) for found in founds]
        text = piece.text
    result.hits.extend(_hit(result, piece, text, found, context) for found in founds)


class _WithCr:
    """A piece as written, CRs included, and where each code point of its CR-less text lies in it."""

    def __init__(self, written: str):
        self.written = written
        self.at = [i for i, c in enumerate(written) if c != "\r"]

    def found(self, found: Found) -> Found:
        """``found`` (in the CR-less text) as it lies in the written piece: its lines with their CRs."""
        at, line, n = self.at, found.line_start, len(found.text)
        begin = at[line - 1] + 1 if line > 0 else 0  # after the line feed: a CR opening the line is in it
        if found.text.endswith("\n"):
            end = at[line + n - 1] + 1
        else:
            end = at[line + n] if line + n < len(at) else len(self.written)  # up to the line feed
        first = line + found.start
        if found.end > found.start:
            start, stop = at[first], at[line + found.end - 1] + 1
        else:  # an empty match lies right after the code point before it
            start = stop = at[first - 1] + 1 if first > 0 else 0
        return Found(self.written[begin:end], start - begin, stop - begin, begin)


def _group(piece, lines: list[Line]) -> Group:
    return Group(turn=piece.turn, step=piece.step, seq=piece.seq, kind=piece.kind, lines=lines)


def _hit(result: LogGrep, piece, text: str, found: Found, context: tuple[int, int]) -> Hit:
    hit = Hit(
        path=result.path,
        id=result.id,
        turn=piece.turn,
        step=piece.step,
        seq=piece.seq,
        kind=piece.kind,
        text=found.text,
        match=(found.start, found.end),
    )
    if any(context):
        hit.before, hit.after = context_lines(text, found, context)
    return hit


def _skip_by_bytes(ref, pattern: Pattern, options: GrepOptions) -> LogGrep | None:
    """A result without reading a record when the log's bytes cannot hold the ``-F`` string; None when
    they may (or cannot be judged this way): then the log is read."""
    from .rawbytes import decompressed, header_of

    test = _byte_test(pattern.fixed, pattern.ignore_case)
    if not test.possible:
        return None
    data = decompressed(ref)
    if data is None:
        return None
    header = header_of(data)
    if header is None:
        return None
    outside = not options.window.holds(header.createdAt)
    if not outside and test.may_hold(data):
        return None
    return LogGrep(path=ref.display, id=header.id, hits=[], count=0, skipped=outside)


@lru_cache(maxsize=8)
def _byte_test(needle: str, ignore_case: bool):
    """One :class:`~.skip.ByteTest` per string, not per log (it compiles regular expressions)."""
    from .skip import ByteTest

    return ByteTest(needle, ignore_case)


def map_grep(refs: list, pattern: Pattern, options: GrepOptions, *, grouped: bool = False, progress: bool = False,
             in_parts: bool = False):
    """``(ref, result or error)`` for every ref; ``in_parts``: a log's result may come in several parts,
    in turn, as it is read (:func:`_grep_parts`), through :func:`dshctl.many.map_logs` (``options.jobs``
    workers)."""
    from ..many import map_logs

    search = partial(_grep_parts, pattern=pattern, options=options, grouped=grouped, part_size=PART_SIZE if in_parts else None)
    return map_logs(search, refs, jobs=options.jobs, progress=progress and options.progress, label="grep", parts=True,
                    color=options.color_when, streams=options.output != "json",
                    until_output=options.output not in ("json", "ndjson"))  # the lines say when they begin
