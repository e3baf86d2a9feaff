"""``dshctl stats`` options."""

from __future__ import annotations

from ..errors import UsageError
from .base import (
    COLOR,
    FOLLOW,
    JOBS,
    JSON,
    LATEST,
    NDJSON,
    NO_CACHE,
    NO_COLOR,
    NO_COST,
    PLAIN,
    PRICES,
    PROJECT_FILTER,
    QUIET,
    SALVAGE,
    SINCE,
    STRICT,
    TSV,
    TZ,
    UNTIL,
    VERBOSE,
    Options,
    option,
)

RECORDS = ("session", "turn", "step")
"""``--by`` values that print records; the others are rollups (:data:`dshctl.stats.rollup.ROLLUPS`)."""
BY = RECORDS + ("day", "week", "month", "project", "model", "tool")


class StatsOptions(Options):
    """``dshctl stats``: which table, which sessions, how many workers, and costs."""

    project_filters = True

    by: str = option(
        "session",
        "--by",
        choices=BY,
        help="Which table: per session, turn or step; or a rollup per day, ISO week, month, project (cwd), model or tool.",
    )
    json: bool = JSON
    ndjson: bool = NDJSON.with_help("One record per session, turn or step, with a kind field.")
    plain: bool = PLAIN
    tsv: bool = TSV
    since: str | int | None = SINCE
    until: str | int | None = UNTIL
    jobs: int | None = JOBS
    strict: bool = STRICT
    salvage: bool = SALVAGE
    follow: bool = FOLLOW.with_help(
        "Watch one log as dsh writes it: a live summary on a terminal, a record per completed turn to a pipe."
    )
    latest: bool = LATEST
    project: str | None = PROJECT_FILTER
    verbose: bool = VERBOSE
    color: str = COLOR
    no_color: bool = NO_COLOR
    quiet: bool = QUIET
    tz: str | None = TZ.with_help("Time zone of day/week/month rollups (IANA name; default: local).")
    prices: str | None = PRICES
    no_cost: bool = NO_COST
    no_cache: bool = NO_CACHE
    sort: str | None = option(None, "--sort", metavar="KEY", follows=False, help="Sort rows by this key, largest first (cost = costs.total).")
    top: int | None = option(None, "--top", metavar="N", follows=False, help="Only the first N rows (totals still count all).")
    reverse: bool = option(False, "--reverse", follows=False, help="Smallest first (or the default order reversed).")

    def __post_init__(self) -> None:
        super().__post_init__()
        from ..stats.rollup import COST_SORT, check_sort_key

        if self.top is not None and self.top < 1:
            raise UsageError("--top must be at least 1")
        check_sort_key(self.by, self.sort)
        if self.sort == COST_SORT and self.no_cost:
            raise UsageError("--sort cost needs the costs that --no-cost drops: choose one")
        if self.follow:
            if self.json:
                raise UsageError("--follow writes records as turns complete: use --ndjson (or a terminal for the live table), not --json")
            if self.by not in RECORDS:
                raise UsageError(f"--by {self.by} sums many sessions; --follow watches one (--by turn or step)")

    @property
    def rollup(self) -> bool:
        """A rollup table (``--by day`` … ``tool``), not records."""
        return self.by not in RECORDS

    @property
    def reordered(self) -> bool:
        return self.sort is not None or self.top is not None or self.reverse

    @property
    def record_by(self) -> str:
        """What each log's statistics keep: its turns or steps for ``--by turn`` / ``step``; a rollup
        reads the session record."""
        return self.by if self.by in RECORDS else "session"

