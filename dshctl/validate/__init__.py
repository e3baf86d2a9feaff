"""``dshctl validate``: dsh's durable-boundary checks on demand, for CI, on one log or thousands.

dsh validates a log strictly only at durable boundaries: on restore it checks the codec and the
relationships between events; only when it publishes a migrated generation does it replay every
embedded stream and prove that each message agrees with it (FORMAT §8.7). A damaged or hand-edited
log can therefore pass dsh's ordinary load and fail later. This command runs every one of those
checks, in five levels (see :mod:`.rules`):

1. ``codec`` (:mod:`.codec`, :mod:`.payload`) — one raw pass over the physical lines;
2. ``stream`` (:mod:`.streams`) — strict expansion of every stream, in the same pass;
3. ``settlement`` (:mod:`.settlement`), 4. ``grammar`` (:mod:`.grammar`) and
5. ``relationships`` (:mod:`.relationships`) — over the reader's normalized events.

Exit status: 0 when every log is clean (warnings allowed unless ``--strict``), 1 when any log has an
error finding, 2 when any log is unreadable (not a session header, newer version, corrupt zstd,
committed-region damage) or on a usage error. Unreadable logs are reported as findings too, so CI
shows them in every output format.
"""

from __future__ import annotations

import functools
import os
import sys
import tempfile
import time
from contextlib import closing
from typing import Iterable

from dshctl.errors import EXIT_FINDINGS, EXIT_OK, EXIT_UNREADABLE, DshctlError, UnsupportedVersion
from dshctl.options import ValidateOptions, chosen_logs
from dshctl.source import LogRef, as_ref, no_logs_found, resolve

from .codec import run_codec
from .findings import STATUS_ERRORS, STATUS_UNREADABLE, Collector, Finding, LogReport
from .formats import render, render_rules
from .grammar import check_grammar
from .relationships import Relationships
from .rules import LEVELS, RULES
from .settlement import check_settlement

__all__ = ["run_validate", "validate_log", "validate_paths", "exit_status", "Finding", "LogReport", "RULES", "LEVELS"]

MODEL_LEVELS = ("settlement", "grammar", "relationships")


def validate_log(source: str | os.PathLike | LogRef, options: ValidateOptions | None = None) -> LogReport:
    """Run every level on one log: a path (file or session directory), ``-`` for standard input, or a
    :class:`~dshctl.source.LogRef`. Never raises for a bad log: problems become findings, and so does a
    path that names no single readable log (``codec/read``, or ``codec/version`` for a newer generation).
    ``options``: what ``--ignore`` skips and where ``--max-errors`` stops."""
    options = options or ValidateOptions()
    ignore, max_errors = options.ignored, options.max_errors
    if isinstance(source, LogRef) and not source.reads_stdin:
        return _validate_ref(source, ignore=ignore, max_errors=max_errors)
    spec = source.display if isinstance(source, LogRef) else os.fspath(source)
    spooled: list[str] = []
    try:
        try:
            ref = as_ref(source)
            if ref.reads_stdin:  # standard input: validation reads a log twice
                ref = _spool_stdin(spooled)
        except DshctlError as exc:
            return _unresolved(exc, exc.file or spec, ignore)
        return _validate_ref(ref, ignore=ignore, max_errors=max_errors)
    finally:
        _unlink_all(spooled)


def _unresolved(exc: DshctlError, file: str, ignore: frozenset[str]) -> LogReport:
    """The report of a path that could not be read as a log at all."""
    col = Collector(file, ignore=ignore)
    rule = "codec/version" if isinstance(exc, UnsupportedVersion) else "codec/read"
    col.add(rule, exc.message, line=exc.line)
    return col.report


def _validate_ref(ref: LogRef, *, ignore: frozenset[str], max_errors: int | None) -> LogReport:
    col = Collector(ref.display, ignore=ignore, max_errors=max_errors)
    report = col.report
    try:
        codec = run_codec(ref, col)
    except UnsupportedVersion as exc:
        col.add("codec/version", exc.message, line=exc.line)
        return report
    except DshctlError as exc:
        col.add("codec/read", exc.message, line=exc.line)
        return report
    report.generation = codec.generation
    report.events = codec.events
    if not codec.readable or report.unreadable:
        return report
    wanted = [level for level in MODEL_LEVELS if col.enabled_level(level)]
    if wanted:
        _model_pass(ref, col, codec, wanted)
    return report


def _model_pass(ref: LogRef, col: Collector, codec, wanted: list[str]) -> None:
    from dshctl.reader import open_log

    report = col.report
    settle = "settlement" in wanted
    grammar = "grammar" in wanted
    relationships = None
    if "relationships" in wanted:
        relationships = Relationships(col, codec.generation, codec.header, fixture=codec.fixture,
                                      payload_refused=codec.payload_refused)
        relationships.cut = _cut(codec)
    limit = codec.limit_seq
    bad = codec.bad_streams
    last = None
    try:
        # dsh drops the damaged record and everything after it: so do the model levels
        log = open_log(ref, strict=False, stop_at_line=codec.limit_line)
        for event in log.events():
            if limit is not None and event.seq >= limit:
                continue
            last = event
            if event.stream is not None and event.seq not in bad:
                if settle:
                    check_settlement(event, col)
                if grammar:
                    try:
                        check_grammar(event, col)
                    except (ValueError, TypeError, KeyError, AttributeError) as exc:
                        col.add("stream/chunk", f"a chunk of this stream has a shape the grammar check cannot read "
                                f"({type(exc).__name__}: {exc})", line=event.line, seq=event.seq)
            if relationships is not None:
                relationships.feed(event)
        if relationships is not None:
            relationships.finish(last)
    except DshctlError as exc:
        report.skipped_levels = list(wanted)
        if not report.errors:
            col.add("codec/read", f"the log cannot be read as events: {exc.message}", line=exc.line, seq=exc.seq)
    except (ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError) as exc:
        # The reader met a shape it does not model; the codec level has reported what dsh refuses.
        report.skipped_levels = list(wanted)
        if not report.errors:
            col.add("codec/read", f"the log cannot be read as events ({type(exc).__name__}: {exc})")


def _cut(codec) -> int | None:
    header = codec.header or {}
    if codec.generation is not None and codec.generation <= 1:
        seed = header.get("seedLength")
        return seed if isinstance(seed, int) else None
    return None


def validate_paths(paths: list[str], options: ValidateOptions | None = None, *, progress: bool = False,
                   outside: list[str] | None = None) -> list[LogReport]:
    """Resolve every path (files, session directories, roots, ``-``) and validate each log: those of the
    sessions inside ``--since`` / ``--until`` (as stats reads them: the header's ``createdAt``); the others
    are left out, their names appended to ``outside``. A log whose header cannot be read is validated
    whatever the window (its findings say why)."""
    from dshctl.many import map_logs
    from dshctl.source import sessions_root

    options = options or ValidateOptions()
    ignore = options.ignored
    refs: list[LogRef] = []
    reports: dict[int, LogReport] = {}
    seen: set = set()
    spooled: list[str] = []
    for spec in paths or [str(sessions_root())]:
        try:
            found = [spec] if isinstance(spec, LogRef) else resolve(spec)
            if not found:
                raise no_logs_found(spec)
            if options.project is not None:
                from dshctl.many import project_refs

                found = project_refs(found, options.project, [spec])
        except DshctlError as exc:
            reports[len(refs) + len(reports)] = _unresolved(exc, exc.file or spec, ignore)
            continue
        for ref in found:
            if ref.reads_stdin:
                ref = _spool_stdin(spooled)
            key = "-" if ref.display == "<stdin>" else (ref.path.resolve() if ref.path is not None else "-", ref.member)
            if key in seen:
                continue
            seen.add(key)
            if options.window.written_before(ref):  # left unopened, as stats leaves it
                if outside is not None:
                    outside.append(ref.display)
                continue
            refs.append(ref)
    func = functools.partial(_validate_in_window, options=options) if options.window.bounded else \
        functools.partial(validate_log, options=options)
    results = []
    try:
        with closing(map_logs(func, refs, jobs=options.jobs, progress=progress and options.progress, label="validating",
                                  color=options.color_when)) as mapped:
            for ref, result in mapped:
                if result is None:  # its session is outside --since / --until
                    if outside is not None:
                        outside.append(ref.display)
                    continue
                if isinstance(result, DshctlError):
                    col = Collector(ref.display, ignore=ignore)
                    col.add("codec/read", result.message, line=result.line)
                    result = col.report
                results.append(result)
    finally:
        _unlink_all(spooled)
    # the paths that could not be resolved come first, then every log in argument order
    return list(reports.values()) + results


def _validate_in_window(ref: LogRef, options: ValidateOptions) -> LogReport | None:
    """:func:`validate_log` of a log whose session is inside ``--since`` / ``--until``; None for one
    outside (:meth:`~dshctl.options.window.Window.excludes`: its header is read first, so a log outside
    costs no more than that; a header that cannot be read leaves the log to be validated)."""
    return None if options.window.excludes(ref) else validate_log(ref, options)


def _spool_stdin(spooled: list[str]) -> LogRef:
    """Validation reads a log twice; standard input is copied to a temporary file first."""
    handle, name = tempfile.mkstemp(prefix="dshctl-validate-", suffix=".jsonl")
    with os.fdopen(handle, "wb") as out:
        while True:
            chunk = sys.stdin.buffer.read(1 << 20)
            if not chunk:
                break
            out.write(chunk)
    spooled.append(name)
    from pathlib import Path

    return LogRef(path=Path(name), display="<stdin>", generation_from_name=None, session_dir=None)


def _unlink_all(paths: list[str]) -> None:
    for path in paths:
        try:
            os.unlink(path)
        except OSError:
            pass


def exit_status(reports: Iterable[LogReport], strict: bool) -> int:
    statuses = [r.status(strict) for r in reports]
    if STATUS_UNREADABLE in statuses:
        return EXIT_UNREADABLE
    if STATUS_ERRORS in statuses:
        return EXIT_FINDINGS
    return EXIT_OK


def run_validate(paths: list[str], options: ValidateOptions) -> int:
    """The ``dshctl validate`` command body; returns the exit status."""
    output_format = options.format
    if options.list_rules:
        sys.stdout.write(render_rules(output_format if output_format in ("json", "sarif") else "text", color=options.colored))
        return EXIT_OK
    started = time.perf_counter()
    outside: list[str] = []
    reports = validate_paths(chosen_logs(paths, options), options, progress=True, outside=outside)
    elapsed = time.perf_counter() - started
    sys.stdout.write(render(reports, output_format, options.strict, elapsed, color=options.colored,
                            outside=len(outside) if options.window.bounded else None))
    return exit_status(reports, options.strict)
