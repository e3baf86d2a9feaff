"""``dshctl stats``: dsh's own statistics — per session, turn and step — for one log or thousands.

Library use::

    from dshctl.stats import log_stats
    result = log_stats("session.v4.jsonl.zstd", by="step")
    result.session["meanTtftMs"], result.steps[0]["tokensPerSecond"]

:func:`log_stats` returns a :class:`LogStats`; its records are the JSON objects ``dshctl stats --json``
prints. The figures and their null rules are documented in the man page (``dshctl(1)``, STATS RECORDS)
and in :mod:`dshctl.stats.fold`.
"""

from __future__ import annotations

import os
import time
from functools import partial
from typing import Any, Iterator

import msgspec

from ..errors import EXIT_FINDINGS, EXIT_OK, DshctlError, UsageError
from ..humanize import utc_moment
from ..present import check_output
from .aggregate import Aggregate
from .fold import StatsFold
from .prices import PriceTable
from .results import InheritedPrefix, LogStats, StatsSamples
from .timespec import parse_time_ms

SCHEMA = "dshctl-stats/1"
BY_CHOICES = ("session", "turn", "step")

__all__ = ["SCHEMA", "InheritedPrefix", "LogStats", "StatsFold", "StatsSamples", "log_stats", "run_stats"]


def log_stats(
    source: Any,
    *,
    by: str = "session",
    since_ms: int | None = None,
    until_ms: int | None = None,
    strict: bool = False,
    prices: PriceTable | None = None,
) -> LogStats:
    """Statistics of one log (a path or a :class:`~dshctl.source.LogRef`).

    ``turns`` / ``steps`` are filled in for ``by="turn"`` / ``by="step"``. ``skipped`` is True (and
    nothing past the header is read) when the header's ``createdAt`` falls outside ``[since_ms, until_ms)``.
    With ``prices`` (:func:`dshctl.stats.prices.load_prices`) every record gets ``costs`` at the prices in
    force at the session's start (``createdAt``).
    """
    from ..reader import open_log

    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    log = open_log(source, strict=strict)
    header = log.header
    identity = {
        "kind": "session",
        "path": log.display,
        "id": header.id,
        "createdAt": header.createdAt,
        "created": utc_moment(header.createdAt),
        "generation": header.version,
        "cwd": header.cwd,
        "seeded": header.seeded,
        "parentSession": header.parentSession,
    }
    if since_ms is not None or until_ms is not None:
        created = header.createdAt
        if (
            not isinstance(created, int)
            or created <= 0
            or (since_ms is not None and created < since_ms)
            or (until_ms is not None and created >= until_ms)
        ):
            log.close()
            return LogStats(session=identity, turns=None, steps=None, samples=None, skipped=True)
    seed_length = log.cut if log.generation <= 1 else None
    pricing = prices.for_session(_start_ms(header.createdAt)) if prices is not None else None
    fold = StatsFold(keep_turns=by == "turn", keep_steps=by == "step", seed_length=seed_length, pricing=pricing)
    fold.run(log.events())
    if log.fixture:
        fold.timing_known = False
    session = identity
    session["events"] = log.event_count
    session["timing"] = "unavailable" if (log.fixture or not fold.timing_known) else "envelope"
    session["cut"] = log.cut
    session.update(fold.session())
    session["warnings"] = list(log.warnings)
    turns = [_with_session(row, header.id, log.display) for row in fold.turn_rows] if by == "turn" else None
    steps = [_with_session(row, header.id, log.display) for row in fold.step_rows] if by == "step" else None
    return LogStats(session=session, turns=turns, steps=steps, samples=fold.samples(), skipped=False)


def _start_ms(created: Any) -> int | None:
    return created if isinstance(created, int) and created > 0 else None


def _with_session(row: dict, session_id: Any, path: str) -> dict:
    out = {"kind": row.pop("kind"), "session": session_id, "path": path}
    out.update(row)
    return out


def _stats_of_log(ref, by: str, since_ms: int | None, until_ms: int | None, strict: bool, spark: bool) -> LogStats:
    """:func:`log_stats` as ``run_stats`` maps it over the logs (in worker processes when there are many)."""
    result = log_stats(ref, by=by, since_ms=since_ms, until_ms=until_ms, strict=strict)
    if not spark and result.samples is not None:
        result.samples.spark = None  # only a single log's table draws it: not sent back from a worker
    return result


MTIME_SLACK_MS = 2 * 86_400_000
"""A log last written more than this before ``--since`` is skipped unopened. A session is created before
its log's last write, so ``mtime < since`` alone would do; the slack covers clocks and archive formats
that store local time without a zone (ZIP), and file systems that round times down."""


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def _written_before(ref, since_ms: int) -> bool:
    """True when the log's last write is well before ``since_ms``: it cannot hold a later session.
    Never for a ``--since`` still to come: only future-dated (synthetic) logs can match it, and their
    modification times say nothing about their ``createdAt``."""
    if ref.path is None or ref.problem is not None or since_ms > _now_ms():
        return False
    try:
        return os.stat(ref.path).st_mtime_ns // 1_000_000 < since_ms - MTIME_SLACK_MS
    except OSError:
        return False


class _Options(msgspec.Struct, frozen=True):
    """What ``dshctl stats`` was asked for, checked."""

    by: str
    since_ms: int | None
    until_ms: int | None
    jobs: int | None
    strict: bool


def _checked_options(
    *, by: str, output: str, since: str | None, until: str | None, jobs: int | None, strict: bool
) -> _Options:
    if by not in BY_CHOICES:
        raise UsageError(f"--by must be one of {', '.join(BY_CHOICES)}")
    check_output(output)
    if jobs is not None and jobs < 1:
        raise UsageError("-j/--jobs must be at least 1")
    return _Options(
        by=by,
        since_ms=parse_time_ms(since, option="--since") if since is not None else None,
        until_ms=parse_time_ms(until, option="--until") if until is not None else None,
        jobs=jobs,
        strict=strict,
    )


class _StatsRun:
    """The logs of one ``dshctl stats`` run read in turn: each result folded into the aggregate, each
    unreadable log warned about and listed, each log outside ``--since`` / ``--until`` counted."""

    def __init__(self, paths: list[str], options: _Options, *, color: bool):
        from ..many import resolve_many

        self.options = options
        self.color = color
        self.aggregate = Aggregate()
        self.errors: list[dict] = []
        refs = resolve_many(paths)
        self.single = len(refs) == 1
        if options.since_ms is not None:
            opened = [ref for ref in refs if not _written_before(ref, options.since_ms)]
            self.aggregate.skipped += len(refs) - len(opened)
            refs = opened
        self.refs = refs

    def results(self) -> Iterator[LogStats]:
        """The statistics of every log read, in the order of the logs."""
        from ..many import map_logs
        from ..output import warn

        options = self.options
        stats_of_log = partial(
            _stats_of_log,
            by=options.by,
            since_ms=options.since_ms,
            until_ms=options.until_ms,
            strict=options.strict,
            spark=self.single and options.by == "session",
        )
        aggregate = self.aggregate
        for ref, result in map_logs(stats_of_log, self.refs, jobs=options.jobs, label="stats", color=self.color):
            if isinstance(result, DshctlError):
                if self.single:
                    raise result
                warn(str(result))
                aggregate.failed += 1
                self.errors.append({"path": ref.display, "error": result.message})
                continue
            if result.skipped:
                aggregate.skipped += 1
                continue
            for text in result.session["warnings"]:
                warn(f"{ref.display}: {text}")
            aggregate.add(result.session, result.samples)
            yield result

    def records(self) -> Iterator[dict]:
        """NDJSON: each log's session record, or its turn or step records, as the log is read."""
        by = self.options.by
        for result in self.results():
            if by == "session":
                yield result.session
            else:
                yield from result.turns if by == "turn" else result.steps

    def collected(self) -> "_Collected":
        """Every log read, for the JSON document and the tables."""
        by = self.options.by
        collected = _Collected()
        for result in self.results():
            collected.sessions.append(result.session)
            if by != "session":
                collected.rows.extend(result.turns if by == "turn" else result.steps)
            elif self.single:
                collected.spark = result.samples.spark
        return collected

    def document(self) -> dict:
        by = self.options.by
        collected = self.collected()
        document: dict = {"schema": SCHEMA, "by": by, "sessions": collected.sessions}
        if by == "turn":
            document["turns"] = collected.rows
        elif by == "step":
            document["steps"] = collected.rows
        document["aggregate"] = self.aggregate.record()
        document["errors"] = self.errors
        return document

    def tables(self) -> None:
        from .render import render, stats_tables

        collected = self.collected()
        render(
            stats_tables(self.color),
            by=self.options.by,
            sessions=collected.sessions,
            rows=collected.rows,
            aggregate=self.aggregate.record(),
            errors=self.errors,
            multi=not self.single,
            spark=collected.spark,
        )


class _Collected:
    """The records of every log read: session records, turn or step rows, a single log's spark."""

    __slots__ = ("sessions", "rows", "spark")

    def __init__(self) -> None:
        self.sessions: list[dict] = []
        self.rows: list[dict] = []
        self.spark: Any = None


def run_stats(
    paths: list[str],
    *,
    by: str,
    output: str,
    since: str | None,
    until: str | None,
    jobs: int | None,
    strict: bool,
    color: bool = True,
) -> int:
    """The ``dshctl stats`` command. Returns the exit status (0, or 1 when a log among many was unreadable)."""
    from ..present import emit

    options = _checked_options(by=by, output=output, since=since, until=until, jobs=jobs, strict=strict)
    run = _StatsRun(paths, options, color=color)
    emit(output, document=run.document, records=run.records, table=run.tables)
    return EXIT_FINDINGS if run.errors else EXIT_OK
