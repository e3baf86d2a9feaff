"""The library under the command line, by the commands' names: ``dshctl.stats``, ``dshctl.grep``,
``dshctl.validate``, ``dshctl.images``, ``dshctl.replay`` / ``dshctl.timeline``, ``dshctl.ls``,
``dshctl.cat``.

Each takes what the command takes — one path or many (a ``str``, an ``os.PathLike``, ``-`` for standard
input, or a :class:`~dshctl.source.LogRef`) — and the command's options object
(:mod:`dshctl.options`), or its fields as keyword arguments (``dshctl.grep(path, "x", ignore_case=True)``),
and returns what the command prints, as values. Nothing is written to standard output or error.

One error model: input a command could not use at all — options it refuses, a path that names no log,
the only log given unreadable — raises :class:`~dshctl.errors.DshctlError` (a
:class:`~dshctl.errors.UsageError` for options), with the exit status the command would end with.
A log among many that cannot be read is a value: a :class:`~dshctl.errors.LogFailure` in the result's
``failures`` (``validate`` reports it as a finding, as the command does).
"""

from __future__ import annotations

import os
from typing import Any, Iterable, Iterator, TypeVar, Union

from .errors import EXIT_FINDINGS, EXIT_OK, LogFailure, UsageError
from .options import (
    CatOptions,
    ExportOptions,
    GrepOptions,
    ImagesOptions,
    LsOptions,
    Options,
    ReplayOptions,
    SqlOptions,
    StatsOptions,
    ValidateOptions,
)
from .options.base import chosen_log, chosen_logs

Source = Union[str, "os.PathLike[str]", Any]
"""A log: a path (``str`` or ``os.PathLike``), ``-`` for standard input, or a :class:`~dshctl.source.LogRef`."""

O = TypeVar("O", bound=Options)

__all__ = [
    "GrepResult", "StatsResult", "ValidateResult", "cat", "export", "grep", "images", "ls", "replay", "sql", "stats", "timeline", "validate",
]


def _options(kind: type[O], options: O | None, fields: dict[str, Any]) -> O:
    from .settings import check

    check()  # a bad DSHCTL_* setting is its own error, before any log is read (not each log's)
    if options is None:
        return kind(**fields)
    if fields:
        raise TypeError(f"give a {kind.__name__} or its fields as keywords, not both")
    if not isinstance(options, kind):
        raise TypeError(f"options must be a {kind.__name__}, not {type(options).__name__}")
    return options


def _not_followed(options: Options) -> None:
    if getattr(options, "follow", False):
        raise UsageError("follow is the command line's (it waits for the log to grow); a program calls again to read what the log holds now")


def _spec(source: Any) -> Any:
    """A source as the commands' path arguments take it: a LogRef as it is, a path object as a path
    (``Path("-")`` is the file named ``-``)."""
    if isinstance(source, os.PathLike):
        spec = os.fsdecode(source)
        return os.path.join(".", spec) if spec == "-" else spec
    return source


def _many(paths: Source | Iterable[Source] | None, options: Options) -> list[Any]:
    """PATHs as a many-log command takes them (none: the sessions root), and ``--latest``."""
    return chosen_logs([_spec(path) for path in _given(paths)], options)


def _given(paths: Source | Iterable[Source] | None) -> list[Any]:
    if paths is None:
        return []
    if isinstance(paths, (str, bytes, os.PathLike)) or not isinstance(paths, Iterable):
        return [paths]
    return list(paths)


def _one(path: Source | None, options: Options) -> Any:
    return chosen_log(None if path is None else _spec(path), options)


# ------------------------------------------------------------------------------------------- stats


class StatsResult:
    """What ``dshctl stats`` computed: :attr:`document` is the document ``stats --json`` prints, its
    records held as the stats code produces them; :meth:`as_json` gives it as plain JSON values.

    * ``sessions``: a session record per log read (for ``by`` session, turn and step; sorted and cut by
      ``sort`` / ``top`` / ``reverse`` for ``by="session"``);
    * ``turns`` / ``steps``: with ``by="turn"`` / ``"step"``, their records (sorted and cut as asked);
    * ``rows`` and ``total``: with a rollup (``by`` day … tool), its rows and their total;
    * ``aggregate``: the aggregate record over every log read;
    * ``failures``: the logs among many that could not be read (:class:`~dshctl.errors.LogFailure`);
    * ``status``: the command's exit status (1 for a failure or, with ``salvage``, damage read past).
    """

    def __init__(self, document: dict, failures: list[LogFailure], status: int) -> None:
        self.document = document
        self.failures = failures
        self.status = status

    @property
    def by(self) -> str:
        return self.document["by"]

    @property
    def sessions(self) -> list:
        return self.document.get("sessions", [])

    @property
    def turns(self) -> list | None:
        return self.document.get("turns")

    @property
    def steps(self) -> list | None:
        return self.document.get("steps")

    @property
    def rows(self) -> list | None:
        return self.document.get("rows")

    @property
    def total(self) -> Any:
        return self.document.get("total")

    @property
    def aggregate(self) -> Any:
        return self.document["aggregate"]

    def as_json(self) -> dict:
        """The document as ``stats --json`` prints it, as plain dicts, lists, strings and numbers."""
        import msgspec

        return msgspec.to_builtins(self.document)

    def __repr__(self) -> str:
        return f"<StatsResult by={self.by} of {len(self.sessions)} session(s), {len(self.failures)} failure(s)>"


def stats(paths: Source | Iterable[Source] | None = None, options: StatsOptions | None = None, **fields: Any) -> StatsResult:
    """``dshctl stats`` over one log or many (files, session directories, sessions roots; none: the
    sessions root)."""
    from .stats import StatsRun, price_table

    options = _options(StatsOptions, options, fields)
    _not_followed(options)
    run = StatsRun(_many(paths, options), options, price_table(options), quiet=True)
    document = run.document()
    return StatsResult(document, run.failures, EXIT_FINDINGS if run.failures or run.salvaged else EXIT_OK)


# -------------------------------------------------------------------------------------------- grep


class GrepResult:
    """What ``dshctl grep`` found: ``logs``, a :class:`~dshctl.grep.LogGrep` per log read, in path order
    (its ``hits``, its ``count`` of matching lines, ``skipped`` outside ``--since`` / ``--until``);
    ``failures``, the logs among many that could not be read."""

    def __init__(self, logs: list, failures: list[LogFailure]) -> None:
        self.logs = logs
        self.failures = failures

    @property
    def hits(self) -> list:
        """Every hit of every log (none with ``count`` or ``files_with_matches``), in order."""
        return [hit for log in self.logs for hit in log.hits]

    @property
    def count(self) -> int:
        """Matching lines over every log, as ``grep -c`` counts them."""
        return sum(log.count for log in self.logs)

    @property
    def status(self) -> int:
        """The command's exit status: 0 some hit, 1 none, 2 none and some log unreadable."""
        from .grep.run import EXIT_NO_HIT
        from .errors import EXIT_UNREADABLE

        return EXIT_OK if self.count else EXIT_UNREADABLE if self.failures else EXIT_NO_HIT

    def __repr__(self) -> str:
        return f"<GrepResult {self.count} matching line(s) in {len(self.logs)} log(s), {len(self.failures)} failure(s)>"


def grep(paths: Source | Iterable[Source] | None, pattern: Any, options: GrepOptions | None = None, **fields: Any) -> GrepResult:
    """``dshctl grep PATTERN`` over one log or many (``paths`` first, unlike the command line, as every
    function here takes them). ``pattern``: a string read as the options say, or a
    :func:`dshctl.grep.compile_pattern` result."""
    from .grep.run import GrepRun

    options = _options(GrepOptions, options, fields)
    run = GrepRun(options.pattern(pattern), _many(paths, options), options, grouped=False, quiet=True)
    logs = list(run.results())
    return GrepResult(logs, run.failures)


# ---------------------------------------------------------------------------------------- validate


class ValidateResult:
    """What ``dshctl validate`` found: ``reports``, a :class:`~dshctl.validate.LogReport` per log (an
    unreadable one, or a path naming none, is a report with its finding, as the command shows it), and
    ``status``, the command's exit status (0 clean, 1 error findings, 2 an unreadable log; ``strict``:
    warnings fail too); ``outside``, the logs left unvalidated because their sessions are outside
    ``since`` / ``until`` (the command's ``outsideWindow``; named as :class:`ExportResult` names it)."""

    def __init__(self, reports: list, status: int, outside: int = 0) -> None:
        self.reports = reports
        self.status = status
        self.outside = outside

    def __repr__(self) -> str:
        return f"<ValidateResult {len(self.reports)} log(s), status {self.status}, {self.outside} outside>"


def validate(paths: Source | Iterable[Source] | None = None, options: ValidateOptions | None = None, **fields: Any) -> ValidateResult:
    """``dshctl validate`` over one log or many. ``list_rules`` is the command's listing: the rules
    themselves are ``dshctl.validate.rules.RULES``."""
    from .validate import exit_status, validate_paths

    options = _options(ValidateOptions, options, fields)
    if options.list_rules:
        raise UsageError("list_rules is the command's listing; a program reads dshctl.validate.rules.RULES")
    outside: list[str] = []
    reports = validate_paths(_many(paths, options), options, outside=outside)
    return ValidateResult(reports, exit_status(reports, options.strict), len(outside))


# ------------------------------------------------------------------------------------------ images


def images(path: Source | None = None, options: ImagesOptions | None = None, **fields: Any):
    """``dshctl images``: the image references of one log (a :class:`~dshctl.images.ImageScan`); with
    ``out``, the images extracted there too, each reference's ``status`` saying what became of it."""
    from pathlib import Path

    from .images import default_store, detect_store, extract_all, scan_images

    options = _options(ImagesOptions, options, fields)
    store = detect_store(options.store, how=options.fields["store"].long) if options.store is not None else None
    scan = scan_images(_one(path, options))
    if options.out is not None:
        store = store or default_store(None if scan.log_file is None else Path(scan.log_file))
        extract_all(scan, options, store=store)
    return scan


# ---------------------------------------------------------------------------------- replay, timeline


def timeline(path: Source | None = None, options: ReplayOptions | None = None, **fields: Any):
    """What ``dshctl replay`` shows, as a :class:`~dshctl.replay.timeline.Timeline`: items with meaning
    (kind, text, info) on the recorded clock, built lazily as it is read; ``turns``, ``no_reasoning``
    and ``no_tools`` filter it, ``salvage`` reads past damage. Close it with ``timeline.close()`` (or use
    it in a ``with`` block): that closes the log and frees the temporary file its items may spill to."""
    from .reader import open_log
    from .replay.timeline import Timeline

    options = _options(ReplayOptions, options, fields)
    _not_followed(options)
    return Timeline(open_log(_one(path, options), salvage=options.salvage), options.filters)


def replay(path: Source | None = None, options: ReplayOptions | None = None, **fields: Any) -> str:
    """What ``dshctl replay`` writes to a pipe: the transcript (from ``turn`` or ``from_``; with
    ``timestamps``), as a string; with ``export``, the file written instead (``force`` overwrites) and
    the line the command prints about it."""
    import io
    from pathlib import Path

    from .replay import _refuse_nothing_to_show, export_file, start_position
    from .replay.transcript import write_transcript

    options = _options(ReplayOptions, options, fields)
    shown = timeline(path, options)
    try:
        start = start_position(shown, options)
        _refuse_nothing_to_show(shown, options.turns)
        if options.export is not None:
            return export_file(shown, Path(options.export), start=start, options=options)
        out = io.StringIO()
        write_transcript(shown, out, start, color=False, timestamps=options.timestamps)
        return out.getvalue()
    finally:
        shown.close()


# ------------------------------------------------------------------------------------------ ls, cat


def ls(root: Source | None = None, options: LsOptions | None = None, **fields: Any) -> list:
    """``dshctl ls``: a row per session under a sessions root (the default one when ``root`` is None),
    the records as in ``ls --json`` (an unreadable log's row has its ``error``)."""
    from .ls import session_refs, session_rows

    options = _options(LsOptions, options, fields)
    return session_rows(session_refs(None if root is None else _spec(root)), options, progress=False)


def cat(path: Source | None = None, options: CatOptions | None = None, **fields: Any) -> Iterator[Any]:
    """``dshctl cat``: the records it prints (the header, then the events, as plain JSON values), read
    as they are iterated; with ``raw``, the stored lines (bytes, without their line feeds). The log is
    opened at once: an unreadable one raises here, not at the first record."""
    from .cat import iter_cat_records
    from .reader import open_log

    options = _options(CatOptions, options, fields)
    _not_followed(options)
    source = _one(path, options)
    if options.raw:
        return _raw_lines(source, options)
    return _closing(open_log(source, strict=options.strict, salvage=options.salvage), lambda log: iter_cat_records(log, options))


def _raw_lines(source: Any, options: CatOptions) -> Iterator[bytes]:
    from .cat import report_raw_torn_tail
    from .source import LineReader, as_ref

    reader = LineReader(as_ref(source), salvage=options.salvage)

    def lines(reader) -> Iterator[bytes]:
        for _, line in reader:
            yield line
        report_raw_torn_tail(reader, strict=options.strict, on_warning=None)

    return _closing(reader, lines)


def _closing(resource: Any, produce) -> Iterator[Any]:
    try:
        yield from produce(resource)
    finally:
        resource.close()


# ---------------------------------------------------------------------------------- export and sql


def export(paths: Source | Iterable[Source] | None = None, options: ExportOptions | None = None, **fields: Any):
    """``dshctl export`` of one log or many (none: the sessions root): an
    :class:`~dshctl.export.ExportResult` (logs read, unchanged, removed; rows per table; ``errors``)."""
    from .export import export_logs

    options = _options(ExportOptions, options, fields)
    return export_logs([_spec(path) for path in _given(paths)], options)


def sql(query: str, paths: Source | Iterable[Source] | None = None, options: SqlOptions | None = None, **fields: Any):
    """``dshctl sql QUERY``: the rows of ``query`` over the tables of ``paths`` (logs, roots or datasets
    written by :func:`export`; none: the sessions root), an :class:`~dshctl.export.sql.SqlResult`."""
    from .export.sql import query_rows

    options = _options(SqlOptions, options, fields)
    return query_rows(query, [_spec(path) for path in _given(paths)], options)
