"""``dshctl stats``: dsh's own statistics — per session, turn and step — for one log or thousands.

Library use::

    from dshctl.stats import log_stats
    result = log_stats("session.v4.jsonl.zstd", by="step")
    result.session.mean_ttft_ms, result.steps[0].tokens_per_second

:func:`log_stats` returns a :class:`LogStats`; its records are the Structs of :mod:`dshctl.stats.records`,
which ``dshctl stats --json`` prints (camelCase keys: ``meanTtftMs``). The figures and their null rules
are documented in the man page (``dshctl(1)``, STATS RECORDS) and in :mod:`dshctl.stats.fold`.
"""

from __future__ import annotations

import os
import time
from functools import partial
from typing import Any, Iterator

import msgspec

from ..errors import EXIT_FINDINGS, EXIT_OK, DshctlError, UsageError
from ..present import check_output
from .aggregate import Aggregate
from .fold import StatsFold
from .prices import PriceTable, cost_basis, session_pricer
from .records import LogError, Record
from .results import InheritedPrefix, LogStats, StatsSamples, folded_stats, session_identity, with_session
from .rollup import ROLLUPS, SESSION_KEYED, Rollup
from .timespec import parse_window

SCHEMA = "dshctl-stats/1"
RECORD_CHOICES = ("session", "turn", "step")
BY_CHOICES = RECORD_CHOICES + ROLLUPS

__all__ = ["SCHEMA", "InheritedPrefix", "LogStats", "StatsFold", "StatsSamples", "log_stats", "run_stats"]


def log_stats(
    source: Any,
    *,
    by: str = "session",
    since_ms: int | None = None,
    until_ms: int | None = None,
    strict: bool = False,
    salvage: bool = False,
    prices: PriceTable | None = None,
) -> LogStats:
    """Statistics of one log (a path or a :class:`~dshctl.source.LogRef`).

    ``salvage`` reads past damage; the session record then holds ``gaps``, the damage read past.

    ``turns`` / ``steps`` are filled in for ``by="turn"`` / ``by="step"``. ``skipped`` is True (and
    nothing past the header is read) when the header's ``createdAt`` falls outside ``[since_ms, until_ms)``.
    With ``prices`` (:func:`dshctl.stats.prices.load_prices`) every record gets ``costs``: each model call
    priced at the rates in force when it was made (its step's start; a retry's ``llm/retry-started``; else
    its settlement; a log without times: the session's ``createdAt``).
    """
    from ..reader import open_log

    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    log = open_log(source, strict=strict, salvage=salvage)
    header = log.header
    if since_ms is not None or until_ms is not None:
        created = header.createdAt
        if (
            not isinstance(created, int)
            or created <= 0
            or (since_ms is not None and created < since_ms)
            or (until_ms is not None and created >= until_ms)
        ):
            log.close()
            return LogStats(session=session_identity(log), turns=None, steps=None, samples=None, skipped=True)
    seed_length = log.cut if log.generation <= 1 else None
    pricing = session_pricer(prices, header.createdAt)
    fold = StatsFold(keep_turns=by == "turn", keep_steps=by == "step", seed_length=seed_length, pricing=pricing)
    fold.run(log.events())
    return folded_stats(log, fold, by=by, salvage=salvage)





def _stats_of_log(
    ref, by: str, since_ms: int | None, until_ms: int | None, strict: bool, spark: bool, prices: PriceTable | None,
    salvage: bool = False,
) -> LogStats:
    """:func:`log_stats` as ``run_stats`` maps it over the logs (in worker processes when there are many)."""
    result = log_stats(ref, by=by, since_ms=since_ms, until_ms=until_ms, strict=strict, prices=prices, salvage=salvage)
    if not spark and result.samples is not None:
        result.samples.spark = None  # only a single log's table draws it: not sent back from a worker
    return result


MTIME_SLACK_MS = 2 * 86_400_000
"""A log last written more than this before ``--since`` is skipped unopened. A session is created before
its log's last write, so ``mtime < since`` alone would do; the slack covers clocks and archive formats
that store local time without a zone (ZIP), and file systems that round times down."""


def _now_ms() -> int:
    return time.time_ns() // 1_000_000


def written_before(ref, since_ms: int) -> bool:
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
    zone: Any
    prices: PriceTable | None
    sort: str | None
    top: int | None
    reverse: bool
    salvage: bool = False

    @property
    def rollup(self) -> bool:
        return self.by in ROLLUPS

    @property
    def reordered(self) -> bool:
        return self.sort is not None or self.top is not None or self.reverse


def _checked_options(
    *,
    by: str,
    output: str,
    since: str | None,
    until: str | None,
    jobs: int | None,
    strict: bool,
    salvage: bool = False,
    tz: str | None = None,
    prices: str | None = None,
    cost: bool = True,
    sort: str | None = None,
    top: int | None = None,
    reverse: bool = False,
) -> _Options:
    from .rollup import COST_SORT, check_sort_key, time_zone

    if by not in BY_CHOICES:
        raise UsageError(f"--by must be one of {', '.join(BY_CHOICES)}")
    check_output(output)
    if jobs is not None and jobs < 1:
        raise UsageError("-j/--jobs must be at least 1")
    if strict and salvage:
        raise UsageError("--strict refuses damage that --salvage reads past: choose one")
    if top is not None and top < 1:
        raise UsageError("--top must be at least 1")
    check_sort_key(by, sort)
    if sort == COST_SORT and not cost:
        raise UsageError("--sort cost needs the costs that --no-cost drops: choose one")
    since_ms, until_ms = parse_window(since, until)
    return _Options(
        by=by,
        since_ms=since_ms,
        until_ms=until_ms,
        jobs=jobs,
        strict=strict,
        salvage=salvage,
        zone=time_zone(tz),
        prices=_price_table(prices) if cost and by != "tool" else None,  # a tool's time has no price
        sort=sort,
        top=top,
        reverse=reverse,
    )


class _StatsRun:
    """The logs of one ``dshctl stats`` run read in turn: each result folded into the aggregate, each
    unreadable log warned about and listed, each log outside ``--since`` / ``--until`` counted."""

    def __init__(self, paths: list[str], options: _Options, *, color: bool, verbose: bool = False):
        from ..many import Warnings, resolve_many

        self.options = options
        self.color = color
        self.warnings = Warnings(verbose=verbose)
        self.salvaged = 0  # logs read past damage
        priced = options.prices is not None
        self.aggregate = Aggregate(priced)
        self.rollup = Rollup(options.by, options.zone, priced) if options.by in SESSION_KEYED else None
        self.errors: list[LogError] = []
        refs = resolve_many(paths)
        self.single = len(refs) == 1
        if options.since_ms is not None:
            opened = [ref for ref in refs if not written_before(ref, options.since_ms)]
            self.aggregate.skipped += len(refs) - len(opened)
            refs = opened
        self.refs = refs

    def results(self) -> Iterator[LogStats]:
        """The statistics of every log read, in the order of the logs."""
        from ..many import map_logs

        options = self.options
        stats_of_log = partial(
            _stats_of_log,
            by=options.by if options.by in RECORD_CHOICES else "session",
            since_ms=options.since_ms,
            until_ms=options.until_ms,
            strict=options.strict,
            spark=self.single and options.by == "session",
            salvage=options.salvage,
            prices=options.prices,
        )
        aggregate = self.aggregate
        for ref, result in map_logs(stats_of_log, self.refs, jobs=options.jobs, label="stats", color=self.color):
            if isinstance(result, DshctlError):
                if self.single:
                    raise result
                self.warnings.add(ref.display, _located_message(result))
                aggregate.failed += 1
                self.errors.append(LogError(path=ref.display, error=result.message))
                continue
            if result.skipped:
                aggregate.skipped += 1
                continue
            session = result.session
            for text in session.warnings:
                self.warnings.add(ref.display, text)
            self.salvaged += bool(session.gaps)
            aggregate.add(result.session, result.samples)
            if self.rollup is not None:
                self.rollup.add(result.session, result.samples)
            yield result

    def records(self) -> Iterator[Record]:
        """NDJSON: each log's session record, or its turn or step records, as the log is read (all logs
        first when they are sorted or cut); a rollup's rows and its total."""
        by = self.options.by
        if self.options.rollup:
            table = self.rollup_table()
            yield from table.rows
            yield table.total
            return
        if self.options.reordered:
            collected = self.collected()
            yield from collected.sessions if by == "session" else collected.rows
            return
        for result in self.results():
            if by == "session":
                yield result.session
            else:
                yield from result.turns if by == "turn" else result.steps
        self._note_costs()

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
        self._note_costs()
        if by == "session":
            collected.sessions = self._ordered(collected.sessions)
        else:
            collected.rows = self._ordered(collected.rows)
        return collected

    def _ordered(self, rows: list) -> list:
        from .rollup import COST_SORT, cost_currencies, ordered

        options = self.options
        if options.sort == COST_SORT:
            _note_cost_order(cost_currencies(rows))
        return ordered(rows, sort=options.sort, top=options.top, reverse=options.reverse)

    def rollup_table(self) -> "RollupTable":
        """Every log read, grouped: the rows (sorted and cut as asked) and the total of all of them."""
        from .rollup import model_rows, period_row, tool_rows

        for _ in self.results():
            pass
        self._note_costs()
        by = self.options.by
        ids = self.aggregate.ids
        if by == "tool":
            rows, total = tool_rows(self.aggregate, ids)
        else:
            rows = self.rollup.rows(ids) if self.rollup is not None else model_rows(self.aggregate, ids)
            total = period_row("total", "total", self.aggregate.record())
        return RollupTable(rows=self._ordered(rows), total=total, count=len(rows))

    def _note_costs(self) -> None:
        """One note per model without a price, and one when costs are in more than one currency."""
        from ..output import note

        pool = self.aggregate.settled()[0]
        tallies = pool.model_costs
        if tallies is None or self.options.prices is None:
            return
        currencies: set[str] = set()
        for model in sorted(tallies, key=lambda m: (m is None, m or "")):
            tally = tallies[model]
            currencies.update(tally.by_currency)
            if tally.unpriced:
                note(f"{tally.reason} for model {model or '(unknown)'}: its costs are null (add it to {_prices_hint()})")
        if len(currencies) > 1:
            note(f"costs in {', '.join(sorted(currencies))}: totals are given per currency (costsByCurrency), never converted")

    def document(self) -> dict:
        by = self.options.by
        if self.options.rollup:
            return self._rollup_document()
        collected = self.collected()
        document: dict = {"schema": SCHEMA, "by": by, "sessions": collected.sessions}
        if by == "turn":
            document["turns"] = collected.rows
        elif by == "step":
            document["steps"] = collected.rows
        document["aggregate"] = self.aggregate.record()
        document["errors"] = self.errors
        self._add_cost_basis(document)
        return document

    def _add_cost_basis(self, document: dict) -> None:
        """``costBasis``: the costs are estimates, and from which tables (with costs only)."""
        prices = self.options.prices
        if prices is not None:
            document["costBasis"] = cost_basis(prices)

    def _rollup_document(self) -> dict:
        table = self.rollup_table()
        document: dict = {"schema": SCHEMA, "by": self.options.by}
        if self.options.by in SESSION_KEYED:
            from .rollup import zone_name

            document["tz"] = zone_name(self.options.zone)
        document["rows"] = table.rows
        document["total"] = table.total
        document["aggregate"] = self.aggregate.record()
        document["errors"] = self.errors
        self._add_cost_basis(document)
        return document

    def tables(self) -> None:
        from .render import render, render_rollup, stats_tables

        if self.options.rollup:
            table = self.rollup_table()
            render_rollup(
                stats_tables(self.color),
                by=self.options.by,
                rows=table.rows,
                total=table.total,
                count=table.count,
                aggregate=self.aggregate.record(),
                errors=self.errors,
                zone=self.options.zone,
                cost=self.options.prices is not None,
            )
            self._cost_line()
            return
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
        self._cost_line()

    def _cost_line(self) -> None:
        """Under the tables: what the costs are (with costs only)."""
        prices = self.options.prices
        if prices is not None:
            from .render import cost_basis_line, stats_tables

            stats_tables(self.color).line(cost_basis_line(cost_basis(prices)))


def _located_message(error: DshctlError) -> str:
    """An error's message with its line and seq, without its file (the warning names it)."""
    where = [f"line {error.line}"] if error.line is not None else []
    where += [f"(seq {error.seq})"] if error.seq is not None else []
    return f"{' '.join(where)}: {error.message}" if where else error.message


def _price_table(extra: str | None) -> PriceTable | None:
    """The prices to cost with; None (no costs at all) when no table names a model."""
    from .prices import load_prices

    table = load_prices(extra)
    return table if table.models else None


def _note_cost_order(currencies: list[str]) -> None:
    from ..output import note

    if len(currencies) > 1:
        note(f"--sort cost ranks the rows costed in {currencies[0]}; those in {', '.join(currencies[1:])} follow, "
             "each currency ranked on its own (amounts are never converted), then rows without one cost")


def _prices_hint() -> str:
    from .prices import user_prices_path

    return f"{user_prices_path()} or pass --prices FILE"


class RollupTable(msgspec.Struct):
    """A rollup's rows as shown (sorted, cut to ``--top``), its total over all rows, and how many there were."""

    rows: list
    total: Record
    count: int


class _Collected:
    """The records of every log read: session records, turn or step rows, a single log's spark."""

    __slots__ = ("sessions", "rows", "spark")

    def __init__(self) -> None:
        self.sessions: list = []
        self.rows: list = []
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
    salvage: bool = False,
    verbose: bool = False,
    color: bool = True,
    tz: str | None = None,
    prices: str | None = None,
    cost: bool = True,
    sort: str | None = None,
    top: int | None = None,
    reverse: bool = False,
    follow: bool = False,
) -> int:
    """The ``dshctl stats`` command. Returns the exit status (0, or 1 when a log among many was
    unreadable or, with ``salvage``, read past damage). Warnings are told after the output."""
    from ..present import emit

    if follow:
        from .follow import run_stats_follow

        options = _checked_options(
            by=by, output=output, since=None, until=None, jobs=None, strict=strict, salvage=salvage, tz=tz,
            prices=prices, cost=cost,
        )
        unused = {"--since": since, "--until": until, "--jobs": jobs, "--sort": sort, "--top": top, "--reverse": reverse or None}
        return run_stats_follow(paths, options, output=output, unused=unused, color=color)
    options = _checked_options(
        by=by, output=output, since=since, until=until, jobs=jobs, strict=strict, salvage=salvage, tz=tz,
        prices=prices, cost=cost, sort=sort, top=top, reverse=reverse,
    )
    run = _StatsRun(paths, options, color=color, verbose=verbose)
    try:
        emit(output, document=run.document, records=run.records, table=run.tables)
    finally:
        run.warnings.report()
    return EXIT_FINDINGS if run.errors or run.salvaged else EXIT_OK
