"""Searching logs: :func:`grep_log` for one, :func:`grep_logs` for many, and the records they return.

A log is searched piece by piece (:mod:`dshctl.said`: one content block each, streams joined per
block), each piece matched as :mod:`.pattern` says. A ``-F`` string is first looked for in the
decompressed bytes (:mod:`.skip`): a log that cannot hold it is not decoded at all.
"""

from __future__ import annotations

from functools import lru_cache, partial
from typing import Any, Iterable, Iterator

import msgspec

from ..errors import DshctlError, UsageError
from ..said import DEFAULT_KINDS, KINDS, said
from ..textsafe import without_cr
from .pattern import Found, Line, Pattern, compile_pattern, context_lines, find, shown_lines

SCHEMA = "dshctl-grep/1"
"""The ``schema`` of the ``--json`` document."""

__all__ = ["DEFAULT_KINDS", "KINDS", "SCHEMA", "Group", "Hit", "LogGrep", "grep_log", "grep_logs", "map_grep"]


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
    feed the match ends with, when it ends with one), CRs dropped as the user saw them."""
    match: tuple[int, int]
    """``[start, end)`` of the match in ``text``, in code points: ``text[start:end]`` is the match."""
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
    """Outside ``since_ms`` / ``until_ms``: nothing past the header was read."""
    warnings: list[str] = []


class SearchOptions(msgspec.Struct, frozen=True):
    """What one log is searched for, besides the pattern."""

    kinds: tuple[str, ...] = DEFAULT_KINDS
    max_count: int | None = None
    count_only: bool = False
    context: int = 0
    since_ms: int | None = None
    until_ms: int | None = None
    strict: bool = False
    grouped: bool = False
    """The text form: :class:`Group` runs of lines instead of hits."""


def grep_log(
    source: Any,
    pattern: str | Pattern,
    *,
    fixed: bool = False,
    ignore_case: bool = False,
    smart_case: bool = False,
    word: bool = False,
    kinds: Iterable[str] = DEFAULT_KINDS,
    max_count: int | None = None,
    count_only: bool = False,
    context: int = 0,
    since_ms: int | None = None,
    until_ms: int | None = None,
    strict: bool = False,
) -> LogGrep:
    """The hits of ``pattern`` in one log (a path, ``-`` or a :class:`~dshctl.source.LogRef`).

    ``pattern`` is a string read with ``fixed``/``ignore_case``/``smart_case``/``word``, or a
    :func:`compile_pattern` result. ``kinds`` is what is searched (:data:`KINDS`; by default
    :data:`DEFAULT_KINDS`, every kind but ``context``); ``max_count``
    stops the log after the hits on that many lines; ``count_only`` counts without keeping hits;
    ``context`` adds that many lines of the block around each hit. ``count`` is the number of lines the
    hits touch."""
    if not isinstance(pattern, Pattern):
        pattern = compile_pattern(pattern, fixed=fixed, ignore_case=ignore_case, smart_case=smart_case, word=word)
    options = SearchOptions(
        kinds=checked_kinds(kinds),
        max_count=max_count,
        count_only=count_only,
        context=context,
        since_ms=since_ms,
        until_ms=until_ms,
        strict=strict,
    )
    return _grep_one(source, pattern, options)


def checked_kinds(kinds: Iterable[str]) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(kinds))
    unknown = [kind for kind in chosen if kind not in KINDS]
    if unknown or not chosen:
        raise UsageError(f"--in takes kinds among {', '.join(KINDS)}; got {', '.join(unknown) or 'none'}")
    return chosen


def _grep_one(source: Any, pattern: Pattern, options: SearchOptions) -> LogGrep:
    from ..reader import open_log
    from ..source import as_ref

    ref = as_ref(source)
    if pattern.fixed is not None:
        skipped = _skip_by_bytes(ref, pattern, options)
        if skipped is not None:
            return skipped
    with open_log(ref, strict=options.strict) as log:
        header = log.header
        result = LogGrep(path=log.display, id=header.id, hits=[], count=0, warnings=log.warnings)
        if not _in_window(header.createdAt, options):
            result.skipped = True
            return result
        _search(log.events(), pattern, options, result)
    return result


def _search(events, pattern: Pattern, options: SearchOptions, result: LogGrep) -> None:
    limit = options.max_count
    if limit is not None and limit <= 0:
        return
    for piece in said(events, options.kinds):
        text = without_cr(piece.text)
        founds = _count_lines(find(pattern, text), result, limit)
        if founds and not options.count_only:
            _keep(result, piece, text, founds, options)
        if limit is not None and result.count >= limit:
            return


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


def _keep(result: LogGrep, piece, text: str, founds: list[Found], options: SearchOptions) -> None:
    if options.grouped:
        result.groups.extend(_group(piece, lines) for lines in shown_lines(text, founds, options.context))
    else:
        result.hits.extend(_hit(result, piece, text, found, options.context) for found in founds)


def _group(piece, lines: list[Line]) -> Group:
    return Group(turn=piece.turn, step=piece.step, seq=piece.seq, kind=piece.kind, lines=lines)


def _hit(result: LogGrep, piece, text: str, found: Found, context: int) -> Hit:
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
    if context > 0:
        hit.before, hit.after = context_lines(text, found, context)
    return hit


def _in_window(created: Any, options: SearchOptions) -> bool:
    if options.since_ms is None and options.until_ms is None:
        return True
    if not isinstance(created, int) or isinstance(created, bool) or created <= 0:
        return False
    return (options.since_ms is None or created >= options.since_ms) and (
        options.until_ms is None or created < options.until_ms
    )


def _skip_by_bytes(ref, pattern: Pattern, options: SearchOptions) -> LogGrep | None:
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
    outside = not _in_window(header.createdAt, options)
    if not outside and test.may_hold(data):
        return None
    return LogGrep(path=ref.display, id=header.id, hits=[], count=0, skipped=outside)


@lru_cache(maxsize=8)
def _byte_test(needle: str, ignore_case: bool):
    """One :class:`~.skip.ByteTest` per string, not per log (it compiles regular expressions)."""
    from .skip import ByteTest

    return ByteTest(needle, ignore_case)


def grep_logs(
    paths: list[str],
    pattern: str | Pattern,
    *,
    fixed: bool = False,
    ignore_case: bool = False,
    smart_case: bool = False,
    word: bool = False,
    kinds: Iterable[str] = DEFAULT_KINDS,
    max_count: int | None = None,
    count_only: bool = False,
    context: int = 0,
    since_ms: int | None = None,
    until_ms: int | None = None,
    strict: bool = False,
    jobs: int | None = None,
    progress: bool = False,
    color: bool = True,
) -> Iterator[tuple[Any, LogGrep | DshctlError]]:
    """:func:`grep_log` over every log the paths name (files, session directories, sessions roots; the
    default sessions root when there are none): ``(LogRef, result)`` in path order, read in worker
    processes when there are many. A log that cannot be read gives its
    :class:`~dshctl.errors.DshctlError` as its result."""
    from ..many import resolve_many

    if not isinstance(pattern, Pattern):
        pattern = compile_pattern(pattern, fixed=fixed, ignore_case=ignore_case, smart_case=smart_case, word=word)
    options = SearchOptions(
        kinds=checked_kinds(kinds),
        max_count=max_count,
        count_only=count_only,
        context=context,
        since_ms=since_ms,
        until_ms=until_ms,
        strict=strict,
    )
    return map_grep(resolve_many(paths), pattern, options, jobs=jobs, progress=progress, color=color)


def map_grep(refs: list, pattern: Pattern, options: SearchOptions, *, jobs: int | None, progress: bool, color: bool):
    """``(ref, result or error)`` for every ref, through :func:`dshctl.many.map_logs`."""
    from ..many import map_logs

    search = partial(_grep_one, pattern=pattern, options=options)
    return map_logs(search, refs, jobs=jobs, progress=progress, label="grep", color=color)
