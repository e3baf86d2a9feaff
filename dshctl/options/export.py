"""``dshctl export``, ``dshctl sql`` and ``dshctl prices`` options."""

from __future__ import annotations

from ..errors import UsageError
from .base import COLOR, JOBS, JSON, NDJSON, NO_COLOR, NO_COST, PLAIN, PRICES, QUIET, SINCE, TSV, TZ, UNTIL, VERBOSE, Options, option

FORMATS = ("parquet", "otlp")
PARTITIONS = ("day", "month", "project")
"""``--partition-by`` values: Hive-style directories by the session's start day or month (UTC), or its
project (:mod:`dshctl.export.schema`)."""


class ExportOptions(Options):
    """``dshctl export``: which format, where to, how the dataset is laid out and kept."""

    format: str = option(
        "parquet",
        "--format",
        choices=FORMATS,
        help="parquet: a dataset directory of tables (needs dshctl[export]); otlp: OTLP/JSON traces, one TracesData per line.",
    )
    out: str | None = option(
        None,
        "--out",
        metavar="DIR|FILE",
        help="The dataset directory (parquet; new, empty or a dshctl dataset) or FILE.jsonl (otlp; - for stdout). Required.",
    )
    partition_by: str | None = option(
        None,
        "--partition-by",
        choices=PARTITIONS,
        help="Hive-style directories by the session's start day or month (UTC), or its project.",
    )
    prune: bool = option(False, "--prune", help="Remove the rows of logs that no longer exist.")
    include_content: bool = option(
        False, "--include-content", help="otlp: put messages, tool arguments and results into the spans (opt-in attributes)."
    )
    force: bool = option(False, "--force", help="otlp: overwrite an existing FILE.")
    since: str | int | None = SINCE.with_help(
        SINCE.help.replace("Only sessions", "Only the sessions") + " A dataset keeps the rows an earlier run wrote of the others."
    )
    until: str | int | None = UNTIL.with_help(UNTIL.help.replace("Only sessions", "Only the sessions"))
    jobs: int | None = JOBS
    prices: str | None = PRICES
    no_cost: bool = NO_COST.with_help("No costs: cost columns and attributes left empty.")
    verbose: bool = VERBOSE
    color: str = COLOR
    no_color: bool = NO_COLOR
    quiet: bool = QUIET

    @property
    def out_directory(self) -> str | None:
        """What ``--out`` holds when it is a directory (parquet: never ``-``); None for otlp's FILE."""
        return "a Parquet dataset (a directory)" if self.format == "parquet" else None

    def __post_init__(self) -> None:
        super().__post_init__()
        if not self.out:
            raise UsageError("--out is required: the dataset directory (parquet) or FILE.jsonl (otlp)")
        parquet = self.format == "parquet"
        for name, wanted in (("partition_by", True), ("prune", True), ("include_content", False), ("force", False)):
            declared = self.fields[name]
            if getattr(self, name) != declared.default and parquet is not wanted:
                raise UsageError(f"{declared.long} applies to --format {'parquet' if wanted else 'otlp'} only")


class SqlOptions(Options):
    """``dshctl sql``: the form of the rows, the query's time zone, and how logs are read into tables.

    The time zone defaults to the local one, as ``stats --tz`` does and as DuckDB's own ``TimeZone``
    setting does: ``date_trunc('day', created_at)`` then puts a session on the day ``stats --by day``
    shows, and the same query over the exported Parquet in DuckDB gives the same rows."""

    json: bool = JSON.with_help("One JSON array of row objects.")
    ndjson: bool = NDJSON.with_help("One JSON object per row.")
    csv: bool = option(False, "--csv", help="CSV with a header row.")
    plain: bool = PLAIN
    tsv: bool = TSV
    tz: str | None = TZ.with_help(
        "Time zone of the query (date_trunc, strftime, casts of the TIMESTAMPTZ columns; IANA name; default: local, "
        "as stats --by day and DuckDB itself)."
    )
    since: str | int | None = SINCE.with_help(
        SINCE.help.replace("Only sessions", "Only the rows of sessions") + " Every table is filtered, the datasets' too."
    )
    until: str | int | None = UNTIL.with_help(UNTIL.help.replace("Only sessions", "Only the rows of sessions"))
    jobs: int | None = JOBS
    prices: str | None = PRICES
    no_cost: bool = NO_COST.with_help("No costs: cost columns left empty.")
    verbose: bool = VERBOSE
    color: str = COLOR
    no_color: bool = NO_COLOR
    quiet: bool = QUIET

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.csv and (self.json or self.ndjson):
            raise UsageError("--json, --ndjson and --csv are mutually exclusive")

    @property
    def output(self) -> str:
        return "csv" if self.csv else super().output


class PricesOptions(Options):
    """``dshctl prices``: which tables are in force, and the prices of the models PATHs name."""

    prices: str | None = PRICES.with_help("Price table (TOML) over the built-in and user ones, as in stats.")
    files: bool = option(
        False, "--files", help="Only the price tables in force: each one's name, file and the source its prices come from (no PATH)."
    )
    routes: bool = option(
        False,
        "--routes",
        help="Only the routes: without PATH, each dsh provider and model alias and the price key it bills as; with PATHs, "
        "the routes their sessions used, the sessions of each and its price key.",
    )
    json: bool = JSON
    plain: bool = PLAIN
    tsv: bool = TSV
    color: str = COLOR
    no_color: bool = NO_COLOR
    quiet: bool = QUIET

    def __post_init__(self) -> None:
        super().__post_init__()
        chosen = [self.fields[name].long for name in ("files", "routes") if getattr(self, name)]
        if len(chosen) == 2:
            raise UsageError(f"{chosen[0]} and {chosen[1]} each choose one table: give one")
        if chosen and self.json:
            raise UsageError(f"{chosen[0]} chooses a table; {self.fields['json'].long} prints the whole document: choose one")

    @property
    def view(self) -> str:
        """The one table asked for (``files``, ``routes``), else ``prices`` (the price rows)."""
        return "files" if self.files else "routes" if self.routes else "prices"

    @property
    def output(self) -> str:
        return "json" if self.json else "table"
