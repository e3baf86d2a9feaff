"""One ``dshctl grep`` run: the logs read in turn, the results written.

Three things can be asked for — the hits (default), the logs with a hit (``-l``), the hits counted per
log (``-c``) — in three forms: lines (ripgrep's layout, :mod:`.render`), one JSON document, NDJSON.
A log that cannot be read is warned about on standard error and skipped (the only log given: an error).
"""

from __future__ import annotations

from contextlib import closing
from typing import Any, Iterator

from ..errors import EXIT_OK, EXIT_UNREADABLE, DshctlError, LogFailure, UsageError
from ..many import Warnings
from ..options import GrepOptions, chosen_logs
from ..source import LineReader
from .pattern import Pattern
from .search import SCHEMA, LogGrep, map_grep

EXIT_NO_HIT = 1


class GrepRun:
    """The logs of one run, searched lazily as the output is written. ``quiet``: a program's call (no
    progress bar, no warnings on standard error: they stay in the results)."""

    def __init__(self, pattern: Pattern, paths: list[str], options: GrepOptions, *, grouped: bool, quiet: bool = False):
        self.pattern = pattern
        self.options = options
        self.refs = _refs(paths, options)
        self.grouped = grouped
        self.quiet = quiet
        self.matched = False
        self.failed = False
        self.errors: list[dict] = []
        self.failures: list[LogFailure] = []
        self.warnings = Warnings(verbose=options.verbose)

    def results(self) -> Iterator[LogGrep]:
        """Each readable log's result, in path order; an unreadable one is warned about (after the output,
        with the other warnings: :class:`~dshctl.many.Warnings`) and skipped."""
        return self._found(in_parts=False)

    def parts(self) -> Iterator[LogGrep]:
        """:meth:`results` as the output writes them: a log's in parts as it is read, so that the output
        of one big log begins at once and a closed pipe (``| head``) stops the reading."""
        return self._found(in_parts=True)

    def _found(self, *, in_parts: bool) -> Iterator[LogGrep]:
        single = len(self.refs) == 1
        found = map_grep(self.refs, self.pattern, self.options, grouped=self.grouped, progress=not self.quiet, in_parts=in_parts)
        with closing(found):  # closed when the run stops: an error raised here, a closed pipe, a caller gone
            for ref, result in found:
                if isinstance(result, DshctlError):
                    if single:
                        raise result
                    self.warnings.add_unreadable(ref.display, result)
                    self.failed = True
                    self.errors.append({"path": ref.display, "error": result.message})
                    self.failures.append(LogFailure(ref.display, result))
                    continue
                for text in result.warnings:
                    self.warnings.add(ref.display, text)
                if result.count:
                    self.matched = True
                yield result

    def records(self) -> Iterator[Any]:
        """The NDJSON records: hits, or ``{path, id}`` per log with a hit, or ``{path, id, count}``."""
        mode = self.options.mode
        for result in self.parts():  # -l and -c: one part a log (nothing is kept to part)
            if mode == "hits":
                yield from result.hits
            elif result.count:
                yield _log_record(result, mode)

    def document(self) -> dict:
        records = list(self.records())
        return {"schema": SCHEMA, self.options.mode: records, "errors": self.errors}

    def lines(self) -> None:
        from .render import SessionIds, write_lines

        options = self.options
        color = options.colored
        several = len(self.refs) > 1
        names = SessionIds(session_ids_of(self.refs) if several and options.mode == "hits" else ())
        with closing(self.parts()) as parts:  # the reading ends with the writing, also when a write fails
            write_lines(parts, mode=options.mode, context=options.context_lines, color=color, with_path=several,
                        only=options.only_matching, names=names, numbers=options.line_number, heading=several and options.headings)

    def emit(self) -> None:
        from ..output import emit

        emit(self.options.output, document=self.document, records=self.records, table=self.lines)
        if not self.quiet:
            self.warnings.report()


def _refs(paths: list[str], options: GrepOptions) -> list:
    """The logs to read: a log last written well before ``--since`` is left unopened, as ``stats`` does."""
    from ..many import project_refs, resolve_many

    return [ref for ref in project_refs(resolve_many(paths), options.project, paths) if not options.window.written_before(ref)]


def session_ids_of(refs: list) -> list[str | None]:
    """The session id of each log, known before any is searched (the ids the lines show are unique among
    them): a session directory of a sessions root is named by its id (§1.2; dsh checks the header
    against it, §1.4); any other log's header is read. None for a log whose header cannot be read (its
    reading says why) and for standard input, read once, by the search."""
    return [_session_id(ref) for ref in refs]


def _session_id(ref) -> str | None:
    from ..source.paths import decode_session_dir_name, in_sessions_root

    if ref.reads_stdin or ref.problem is not None:
        return None
    if ref.session_dir is not None and ref.member is None and in_sessions_root(ref.session_dir):
        return decode_session_dir_name(ref.session_dir.name)
    from ..reader import open_log

    try:
        with open_log(ref, reader=_HeaderReader(ref)) as log:
            return log.header.id if isinstance(log.header.id, str) else None
    except (DshctlError, OSError, ValueError, TypeError, KeyError, AttributeError, IndexError, RecursionError):
        return None


class _HeaderReader(LineReader):
    """A reader of a log's header alone: no reader thread decoding ahead what is not read."""

    overlap = False


def _log_record(result: LogGrep, mode: str) -> dict:
    record: dict = {"path": result.path, "id": result.id}
    if mode == "counts":
        record["count"] = result.count
    return record


def run_grep(pattern: str | None, paths: list[str], options: GrepOptions) -> int:
    """The ``dshctl grep`` command. Exit status: 0 some hit, 1 none, 2 when no hit was found and some
    log could not be read (or on a usage error). With ``-e``, PATTERN is the first PATH (as in grep)."""
    if options.regexp:
        paths = [pattern, *paths] if pattern is not None else list(paths)
        pattern = None
    elif pattern is None:
        raise UsageError("missing PATTERN: give it first, or with -e PATTERN")
    compiled = options.pattern(pattern)
    run = GrepRun(compiled, chosen_logs(paths, options), options, grouped=options.grouped)
    run.emit()
    if run.matched:
        return EXIT_OK
    return EXIT_UNREADABLE if run.failed else EXIT_NO_HIT
