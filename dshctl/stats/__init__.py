"""``dshctl stats``: dsh's own statistics — per session, turn and step — for one log or thousands.

Library use: :func:`dshctl.stats` (one log or many, a :class:`~dshctl.api.StatsResult`); inside,
:func:`log_stats` reads one log into a :class:`LogStats`::

    from dshctl.stats import log_stats
    result = log_stats("session.v4.jsonl.zstd", StatsOptions(by="step"))
    result.session.mean_ttft_ms, result.steps[0].tokens_per_second

Its records are the Structs of :mod:`dshctl.stats.records`, which ``dshctl stats --json`` prints
(camelCase keys: ``meanTtftMs``). The figures and their null rules are documented in the man page
(``dshctl(1)``, STATS RECORDS) and in :mod:`dshctl.stats.fold`.
"""

from __future__ import annotations

import os
from contextlib import closing
from functools import partial
from typing import Any, Iterator

import msgspec

from ..errors import EXIT_FINDINGS, EXIT_OK, DshctlError, LogFailure
from ..options import StatsOptions, chosen_logs
from .aggregate import Aggregate
from .fold import StatsFold
from .prices import PriceTable, cost_basis, session_pricer
from .records import LogError, Record
from .results import InheritedPrefix, LogStats, StatsSamples, folded_stats, session_identity, with_session
from .rollup import SESSION_KEYED, Rollup

SCHEMA = "dshctl-stats/1"

__all__ = ["SCHEMA", "InheritedPrefix", "LogStats", "StatsFold", "StatsRun", "StatsSamples", "log_stats", "price_table", "run_stats"]


def log_stats(source: Any, options: StatsOptions | None = None, *, prices: PriceTable | None = None) -> LogStats:
    """Statistics of one log (a path or a :class:`~dshctl.source.LogRef`), as ``options`` ask.

    ``salvage`` reads past damage; the session record then holds ``gaps``, the damage read past.

    ``turns`` / ``steps`` are filled in for ``by="turn"`` / ``by="step"``. ``skipped`` is True (and
    nothing past the header is read) when the header's ``createdAt`` is outside ``--since`` /
    ``--until`` (:meth:`~dshctl.options.window.Window.holds`). With ``prices`` (:func:`price_table`)
    every record gets ``costs``: each model call priced at the rates in force when it was made (its
    step's start; a retry's ``llm/retry-started``; else its settlement; a log without times: the
    session's ``createdAt``).
    """
    from ..reader import open_log

    options = options or StatsOptions()
    if isinstance(source, os.PathLike):
        source = os.fspath(source)
    log = open_log(source, strict=options.strict, salvage=options.salvage)
    header = log.header
    if not options.window.holds(header.createdAt):
        log.close()
        return LogStats(session=session_identity(log), turns=None, steps=None, samples=None, skipped=True)
    by = options.record_by
    fold = stats_fold(log, prices=prices, keep_turns=by == "turn", keep_steps=by == "step")
    fold.run(log.events())
    return folded_stats(log, fold, by=by, salvage=options.salvage)


def stats_fold(log, *, prices: PriceTable | None = None, **keep: bool) -> StatsFold:
    """The fold of one opened log: its fork/seed cut, costs at the prices in force at its start, and the
    rows ``keep`` asks for (``keep_turns``, ``keep_steps``, ``keep_settlements``)."""
    seed_length = log.cut if log.generation <= 1 else None
    return StatsFold(seed_length=seed_length, pricing=session_pricer(prices, log.header.createdAt), **keep)





def _stats_of_log(ref, options: StatsOptions, spark: bool, prices: PriceTable | None, split: bool = False) -> LogStats:
    """:func:`log_stats` as ``run_stats`` maps it over the logs (in worker processes when there are many);
    ``split``: a big zstd log may be read in parts on several cores (:mod:`dshctl.stats.split`)."""
    result = None
    if split:
        from .split import split_log_stats

        result = split_log_stats(ref, options, prices, stats_fold)
    if result is None:
        result = log_stats(ref, options, prices=prices)
    if not spark and result.samples is not None:
        result.samples.spark = None  # only a single log's table draws it: not sent back from a worker
    return result


def price_table(options: StatsOptions) -> PriceTable | None:
    """The prices to cost with: the built-in table, the user's and ``--prices``; None (no costs at
    all) with ``--no-cost``, for ``--by tool`` (a tool's time has no price), or when no table names a
    model."""
    from .prices import load_prices

    if options.no_cost or options.by == "tool":
        return None
    table = load_prices(options.prices)
    return table if table.models else None


class StatsRun:
    """The logs of one ``dshctl stats`` run read in turn: each result folded into the aggregate, each
    unreadable log warned about and listed, each log outside ``--since`` / ``--until`` counted."""

    def __init__(self, paths: list[str], options: StatsOptions, prices: PriceTable | None, *, quiet: bool = False):
        from ..many import Warnings, project_refs, resolve_many

        self.options = options
        self.prices = prices
        self.color = options.colored
        self.quiet = quiet  # a program's call: no progress bar, no notes on standard error
        self.warnings = Warnings(verbose=options.verbose)
        self.salvaged = 0  # logs read past damage
        priced = prices is not None
        self.aggregate = Aggregate(priced)
        self.rollup = Rollup(options.by, options.zone, priced) if options.by in SESSION_KEYED else None
        self._out = None  # the table printer, made on first use
        self.errors: list[LogError] = []
        self.failures: list[LogFailure] = []
        refs = project_refs(resolve_many(paths), options.project, paths)
        self.single = len(refs) == 1
        opened = [ref for ref in refs if not options.window.written_before(ref)]
        self.aggregate.skipped += len(refs) - len(opened)
        self.refs = opened

    def results(self) -> Iterator[LogStats]:
        """The statistics of every log read, in the order of the logs."""
        from ..many import map_logs

        options = self.options
        stats_of_log = partial(_stats_of_log, options=options, spark=self.single and options.by == "session", prices=self.prices,
                               split=self.single)
        aggregate = self.aggregate
        with closing(self._mapped(map_logs, stats_of_log)) as mapped:  # closed also when this run stops early
            for ref, result in mapped:
                if isinstance(result, DshctlError):
                    if self.single:
                        raise result
                    self.warnings.add_unreadable(ref.display, result)
                    aggregate.failed += 1
                    self.errors.append(LogError(path=ref.display, error=result.detail()))
                    self.failures.append(LogFailure(ref.display, result))
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

    def _mapped(self, map_logs, stats_of_log) -> Iterator[tuple]:
        """``(ref, result or error)`` of every log in order: read (in workers when there are many), or
        from the stats cache for a log over many that did not change since a run read it."""
        options = self.options
        settings = dict(jobs=options.jobs, progress=options.progress and not self.quiet, label="stats", color=options.color_when,
                        streams=options.output == "ndjson" and not options.reordered)
        cache = None
        if not self.single and not options.follow:
            from .cache import open_stats_cache

            cache = open_stats_cache(options, self.prices)
        if cache is None:
            yield from map_logs(stats_of_log, self.refs, **settings)
            return
        from .cache import cached_map

        try:
            yield from cached_map(cache, stats_of_log, self.refs, map_logs, options.window.holds, **settings)
        finally:
            cache.close()

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
        if options.sort == COST_SORT and not self.quiet:
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
        from ..stdio import note

        pool = self.aggregate.settled()[0]
        tallies = pool.model_costs
        if tallies is None or self.prices is None or self.quiet:
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
        prices = self.prices
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
        from .render import render, render_rollup

        if self.options.rollup:
            table = self.rollup_table()
            render_rollup(
                self._tables(),
                by=self.options.by,
                rows=table.rows,
                total=table.total,
                count=table.count,
                aggregate=self.aggregate.record(),
                errors=self.errors,
                zone=self.options.zone,
                cost=self.prices is not None,
                quiet=self.quiet,
            )
            if self.aggregate.record().sessions:  # no session: no table, no cost under it
                self._cost_line()
            return
        collected = self.collected()
        render(
            self._tables(),
            by=self.options.by,
            sessions=collected.sessions,
            rows=collected.rows,
            aggregate=self.aggregate.record(),
            errors=self.errors,
            multi=not self.single,
            spark=collected.spark,
            reordered=self.options.reordered,
            quiet=self.quiet,
        )
        if collected.sessions:  # no session: no table, no cost under it
            self._cost_line()

    def _tables(self):
        from .render import stats_tables

        if self._out is None:
            self._out = stats_tables(self.color, self.options.table_form)
        return self._out

    def _cost_line(self) -> None:
        """Under the tables: what the costs are (with costs only)."""
        prices = self.prices
        if prices is not None:
            from .render import cost_basis_line

            self._tables().line(cost_basis_line(cost_basis(prices)))


def _note_cost_order(currencies: list[str]) -> None:
    from ..stdio import note

    if len(currencies) > 1:
        note(f"--sort cost ranks the rows costed in {currencies[0]}; those in {', '.join(currencies[1:])} follow, "
             "each currency ranked on its own (amounts are never converted), then rows without one cost")


def _prices_hint() -> str:
    from .prices import user_prices_path

    user = user_prices_path()
    return f"{user} or pass --prices FILE" if user is not None else "pass --prices FILE"


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


def run_stats(paths: list[str], options: StatsOptions) -> int:
    """The ``dshctl stats`` command. Returns the exit status (0, or 1 when a log among many was
    unreadable or, with ``--salvage``, read past damage). Warnings are told after the output."""
    from ..output import emit

    paths = chosen_logs(paths, options)
    prices = price_table(options)
    if options.follow:
        from .follow import run_stats_follow

        return run_stats_follow(paths, options, prices)
    run = StatsRun(paths, options, prices, quiet=options.quiet)
    try:
        emit(options.output, document=run.document, records=run.records, table=run.tables)
    finally:
        run.warnings.report()
    return EXIT_FINDINGS if run.errors or run.salvaged else EXIT_OK
