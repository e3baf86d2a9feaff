"""One ``dshctl grep`` run: the options checked, the logs read in turn, the results written.

Three things can be asked for — the hits (default), the logs with a hit (``-l``), the hits counted per
log (``-c``) — in three forms: lines (ripgrep's layout, :mod:`.render`), one JSON document, NDJSON.
A log that cannot be read is warned about on standard error and skipped (the only log given: an error).
"""

from __future__ import annotations

from typing import Any, Iterator

from ..errors import EXIT_OK, EXIT_UNREADABLE, DshctlError, UsageError
from ..output import check_output
from ..stdio import is_terminal
from ..stats.timespec import parse_window
from .pattern import compile_pattern
from .search import KINDS, SCHEMA, LogGrep, checked_kinds, SearchOptions, map_grep

EXIT_NO_HIT = 1


class GrepRun:
    """The logs of one run, searched lazily as the output is written."""

    def __init__(self, pattern, options: SearchOptions, refs: list, *, mode: str, output: str, jobs: int | None, color: bool):
        self.pattern = pattern
        self.options = options
        self.refs = refs
        self.mode = mode
        self.output = output
        self.jobs = jobs
        self.color = color
        self.matched = False
        self.failed = False
        self.errors: list[dict] = []

    @classmethod
    def checked(
        cls,
        pattern: str,
        paths: list[str],
        *,
        fixed: bool,
        ignore_case: bool,
        smart_case: bool,
        word: bool,
        kinds: list[str],
        files_with_matches: bool,
        count: bool,
        max_count: int | None,
        context: int,
        output: str,
        since: str | None,
        until: str | None,
        jobs: int | None,
        color: bool,
    ) -> "GrepRun":
        check_output(output)
        mode = _mode(files_with_matches, count)
        _check_numbers(max_count=max_count, context=context, jobs=jobs)
        compiled = compile_pattern(pattern, fixed=fixed, ignore_case=ignore_case, smart_case=smart_case, word=word)
        since_ms, until_ms = parse_window(since, until)
        options = SearchOptions(
            kinds=checked_kinds(_split_kinds(kinds)),
            max_count=1 if mode == "files" else max_count,
            count_only=mode != "hits",
            context=context if mode == "hits" else 0,
            since_ms=since_ms,
            until_ms=until_ms,
            grouped=mode == "hits" and output == "table",
        )
        return cls(compiled, options, _refs(paths, since_ms), mode=mode, output=output, jobs=jobs, color=color)

    def results(self) -> Iterator[LogGrep]:
        """Each readable log's result, in path order; an unreadable one is warned about and skipped."""
        from ..stdio import warn

        single = len(self.refs) == 1
        for ref, result in map_grep(self.refs, self.pattern, self.options, jobs=self.jobs, progress=True, color=self.color):
            if isinstance(result, DshctlError):
                if single:
                    raise result
                warn(str(result))
                self.failed = True
                self.errors.append({"path": ref.display, "error": result.message})
                continue
            for text in result.warnings:
                warn(f"{ref.display}: {text}")
            if result.count:
                self.matched = True
            yield result

    def records(self) -> Iterator[Any]:
        """The NDJSON records: hits, or ``{path, id}`` per log with a hit, or ``{path, id, count}``."""
        for result in self.results():
            if self.mode == "hits":
                yield from result.hits
            elif result.count:
                yield _log_record(result, self.mode)

    def document(self) -> dict:
        records = list(self.records())
        return {"schema": SCHEMA, self.mode: records, "errors": self.errors}

    def lines(self) -> None:
        from .render import write_lines

        color = self.color and is_terminal()
        write_lines(self.results(), mode=self.mode, context=self.options.context, color=color, with_path=len(self.refs) > 1)

    def emit(self) -> None:
        from ..output import emit

        emit(self.output, document=self.document, records=self.records, table=self.lines)


def _mode(files_with_matches: bool, count: bool) -> str:
    if files_with_matches and count:
        raise UsageError("-l/--files-with-matches and -c/--count are mutually exclusive")
    return "files" if files_with_matches else "counts" if count else "hits"


def _check_numbers(*, max_count: int | None, context: int, jobs: int | None) -> None:
    if max_count is not None and max_count < 0:
        raise UsageError("-m/--max-count must be at least 0")
    if context < 0:
        raise UsageError("-C/--context must be at least 0")
    if jobs is not None and jobs < 1:
        raise UsageError("-j/--jobs must be at least 1")


def _split_kinds(kinds: list[str]) -> list[str]:
    """``--in`` values: repeated, comma-separated, or both; none given means every kind."""
    if not kinds:
        return list(KINDS)
    return [kind.strip() for value in kinds for kind in value.split(",") if kind.strip()]


def _refs(paths: list[str], since_ms: int | None) -> list:
    """The logs to read: a log last written well before ``--since`` is left unopened, as ``stats`` does."""
    from ..many import resolve_many
    from ..stats import written_before

    refs = resolve_many(paths)
    if since_ms is None:
        return refs
    return [ref for ref in refs if not written_before(ref, since_ms)]


def _log_record(result: LogGrep, mode: str) -> dict:
    record: dict = {"path": result.path, "id": result.id}
    if mode == "counts":
        record["count"] = result.count
    return record


def run_grep(
    pattern: str,
    paths: list[str],
    *,
    fixed: bool,
    ignore_case: bool,
    smart_case: bool,
    word: bool,
    kinds: list[str],
    files_with_matches: bool,
    count: bool,
    max_count: int | None,
    context: int,
    output: str,
    since: str | None,
    until: str | None,
    jobs: int | None,
    color: bool = True,
) -> int:
    """The ``dshctl grep`` command. Exit status: 0 some hit, 1 none, 2 when no hit was found and some
    log could not be read (or on a usage error)."""
    run = GrepRun.checked(
        pattern,
        paths,
        fixed=fixed,
        ignore_case=ignore_case,
        smart_case=smart_case,
        word=word,
        kinds=kinds,
        files_with_matches=files_with_matches,
        count=count,
        max_count=max_count,
        context=context,
        output=output,
        since=since,
        until=until,
        jobs=jobs,
        color=color,
    )
    run.emit()
    if run.matched:
        return EXIT_OK
    return EXIT_UNREADABLE if run.failed else EXIT_NO_HIT
