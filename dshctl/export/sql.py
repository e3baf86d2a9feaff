"""``dshctl sql QUERY [PATH...]``: SQL over the sessions, with DuckDB in process.

The tables are ``dshctl export``'s (``sessions``, ``turns``, ``steps``, ``tool_calls``, ``images``;
``docs/schema.md``), as views. A PATH that is a dataset written by ``dshctl export --format parquet`` is
read as it is; logs, session directories and sessions roots (the default: the sessions root) are exported
first into a dataset in the cache (``$XDG_CACHE_HOME/dshctl/sql/``, one per set of PATHs, the
:data:`CACHE_KEEP` most recently queried kept), incrementally, so a second query over the same logs reads
only what changed. Each dataset is read with its own partitioning; the datasets are combined by column
name (:func:`connect`).

The query's time zone is the local one unless ``--tz`` names another (``date_trunc``, ``strftime`` and
casts of the ``TIMESTAMPTZ`` columns follow it): as ``stats --by day`` and DuckDB itself default to, so
that a query puts a session on the day stats shows, and runs unchanged in DuckDB over the exported Parquet.

Output: a table (literal text, in the form of every dshctl table: boxed and fitted on a terminal, plain
in a pipe or with ``--plain``, ``--tsv``), ``--json`` (one array of
row objects), ``--ndjson`` (one object per row) or ``--csv`` (a header row, then the rows; to a terminal
with control characters as pictures). Times are ISO 8601 with their offset, decimals keep every digit,
lists and structs are JSON.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import hashlib
import os
from pathlib import Path
from typing import Any, Iterator

import msgspec

from ..errors import EXIT_FINDINGS, EXIT_OK, LogFailure, UsageError
from ..options.export import SqlOptions
from ..textsafe import escape_json_bytes, visible

TABLES = ("sessions", "turns", "steps", "tool_calls", "images")

__all__ = ["SqlOptions", "SqlResult", "query_rows", "run_sql"]


class SqlResult(msgspec.Struct, kw_only=True):
    """A query's columns and rows (Python values as DuckDB returns them); the logs of PATHs that could not
    be read (:class:`~dshctl.errors.LogFailure`, left out of the tables) and the warnings of those read
    (``(path, text)``)."""

    columns: list[str]
    rows: list[tuple]
    failures: list[LogFailure] = []
    warnings: list[tuple[str, str]] = []


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class _Tables:
    """What the views read: the datasets (PATHs that are datasets, and the cached export of the other
    PATHs), and what reading the logs into the cache found."""

    def __init__(self) -> None:
        self.datasets: list[Path] = []
        self.cached: Path | None = None
        self.failures: list[LogFailure] = []
        self.warnings: list[tuple[str, str]] = []


def _tables(paths: list[str], options: SqlOptions, progress: bool) -> _Tables:
    from .manifest import is_dataset

    tables = _Tables()
    logs: list[str] = []
    if "-" in paths:  # else export's refusal would name the wrong command
        raise UsageError("sql cannot read standard input: its tables name each log by its path (name the log's file)")
    for path in paths:
        expanded = Path(os.path.expanduser(path)).absolute()
        if expanded.is_dir() and is_dataset(expanded):
            tables.datasets.append(expanded)
        else:
            logs.append(path)
    if logs or not paths:
        tables.cached = _cached_export(logs, options, tables, progress)
        tables.datasets.append(tables.cached)
    return tables


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or ""
    from ..settings import home_directory

    root = Path(base) if os.path.isabs(base) else home_directory("XDG_CACHE_HOME") / ".cache"
    return root / "dshctl" / "sql"


CACHE_KEEP = 8
"""The cache keeps the datasets of this many sets of PATHs, the most recently queried (each is a whole
export of its logs: it is worth keeping for the next query, not forever)."""


def _cached_export(paths: list[str], options: SqlOptions, tables: _Tables, progress: bool) -> Path:
    """The logs of ``paths`` exported (incrementally, pruned) into their dataset in the cache."""
    from . import ExportOptions, _absolute, export_logs
    from ..source import sessions_root

    named = sorted(_absolute(paths)) if paths else [str(sessions_root())]
    key = hashlib.sha256("\0".join(named).encode()).hexdigest()[:20]
    directory = cache_root() / key
    export_options = ExportOptions(format="parquet", out=str(directory), prune=True, jobs=options.jobs, prices=options.prices,
                                   no_cost=options.no_cost, verbose=options.verbose, color=options.color_when,
                                   quiet=options.quiet)
    result = export_logs(named, export_options, progress="sql" if progress else False)
    tables.failures.extend(result.failures)
    tables.warnings.extend(result.warnings)
    try:
        os.utime(directory)  # the cache's clock: the most recently queried are kept
    except OSError:
        pass
    _evict(directory)
    return directory


def _evict(kept: Path) -> None:
    """Remove the cached datasets beyond the :data:`CACHE_KEEP` most recently queried; one another
    process is exporting into or querying (its lock held) stays."""
    import fcntl
    import shutil

    from .manifest import LOCK

    try:
        entries = [entry for entry in cache_root().iterdir() if entry.is_dir() and entry != kept]
        entries.sort(key=lambda entry: entry.stat().st_mtime_ns, reverse=True)
    except OSError:
        return
    for entry in entries[CACHE_KEEP - 1:]:
        try:
            with open(entry / LOCK, "a+b") as lock:
                fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                shutil.rmtree(entry, ignore_errors=True)
        except OSError:
            continue


class _Dataset:
    """One dataset as the views read it: its Parquet files per table, and its partition column."""

    def __init__(self, directory: Path):
        from .manifest import MANIFEST, read_manifest

        manifest = read_manifest(directory)
        if manifest is None:
            raise UsageError(f"{directory}: no {MANIFEST}")
        self.directory = directory
        self.partition_by = manifest.partition_by
        self.files: dict[str, list[str]] = {}
        for part in manifest.parts.values():
            for table, relative in part.files.items():
                if not (directory / relative).is_file():
                    raise UsageError(f"{directory}: {relative}, a part file its manifest names, is missing "
                                     "(dshctl export into the dataset again rewrites it)")
                self.files.setdefault(table, []).append(relative)
        for names in self.files.values():
            names.sort()

    def scan(self, table: str, root: str) -> str | None:
        """The table's rows in this dataset (files under ``root``, this directory or an alias of it), or None.
        Hive partitioning is read from the directories under the dataset only: the alias holds no ``=``."""
        files = self.files.get(table)
        if not files:
            return None
        listed = "[" + ", ".join(_quote(f"{root}/{relative}") for relative in files) + "]"
        hive = "true" if self.partition_by is not None else "false"
        # one schema per dataset (a new one rewrites every part): only the first file is read to bind,
        # and a query on the partition column opens only its partition's files
        return f"SELECT * FROM read_parquet({listed}, hive_partitioning={hive})"


PARTITION_TYPES = {"day": "DATE", "month": "VARCHAR", "project": "VARCHAR"}
"""The type DuckDB (and Spark) give a partition column read from ``day=2026-11-30`` … directories."""


def _empty_select(table: str, partitions: set[str]) -> str:
    from .schema import TABLES as SCHEMA

    columns = [f"CAST(NULL AS {column.type}) AS \"{column.name}\"" for column in SCHEMA[table].columns]
    names = {column.name for column in SCHEMA[table].columns}
    columns += [f"CAST(NULL AS {PARTITION_TYPES[by]}) AS \"{by}\"" for by in sorted(partitions) if by not in names]
    return f"SELECT {', '.join(columns)} WHERE false"


class _Aliases:
    """Paths to the datasets without a ``key=value`` directory above them. DuckDB's Hive partitioning
    reads every such directory of a file's path as a column (``/data/run=1/ds/steps/day=…`` gains ``run``,
    and a ``model=x`` above would hide the file's own ``model``): a dataset whose path has one is read
    through a symbolic link in a private temporary directory instead, removed with the connection."""

    def __init__(self) -> None:
        self.links: Path | None = None

    def root(self, directory: Path, index: int) -> str:
        if "=" not in str(directory):
            return str(directory)
        import tempfile

        if self.links is None:
            self.links = Path(tempfile.mkdtemp(prefix="dshctl-sql-"))
            if "=" in str(self.links):
                raise UsageError(f"{directory}: a dataset under a key=value directory needs a temporary directory "
                                 f"without '=' (TMPDIR is {self.links.parent})")
        link = self.links / f"d{index}"
        os.symlink(directory, link, target_is_directory=True)
        return str(link)

    def close(self) -> None:
        if self.links is not None:
            import shutil

            shutil.rmtree(self.links, ignore_errors=True)
            self.links = None


def duckdb_zone(zone) -> str:
    """A zone as DuckDB names it: its IANA name, else its offset now (``GMT+05:30``)."""
    import datetime as dt

    key = getattr(zone, "key", None)
    if key:
        return key
    offset = dt.datetime.now(zone).utcoffset() or dt.timedelta(0)
    minutes = int(offset.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    return f"GMT{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def connect(datasets: list[Path], zone, aliases: _Aliases, window=None):
    """DuckDB with the five tables as views over the datasets' Parquet files: per dataset one scan with
    its own partitioning, the datasets combined by column name. DuckDB's refusals (a file that is not
    Parquet, a zone it does not know) are usage errors, one line. ``window`` (``--since`` / ``--until``):
    only the sessions it holds, by their ``created_at`` (the header's ``createdAt``; none: outside, as
    stats has it), and in the other tables the rows of their logs (``path``)."""
    import duckdb

    read = [_Dataset(directory) for directory in datasets]
    con = duckdb.connect(config={"threads": 2})
    try:
        name = duckdb_zone(zone)
        try:
            con.execute(f"SET TimeZone = {_quote(name)}")
        except duckdb.Error:
            raise UsageError(f"--tz: DuckDB does not know the time zone {name!r}") from None
        roots = [aliases.root(dataset.directory, index) for index, dataset in enumerate(read)]
        partitions = {dataset.partition_by for dataset in read if dataset.partition_by is not None}
        bodies = {}
        for table in TABLES:
            scans = [scan for dataset, root in zip(read, roots) if (scan := dataset.scan(table, root)) is not None]
            bodies[table] = " UNION ALL BY NAME ".join(f"({scan})" for scan in scans) if scans else _empty_select(table, partitions)
        for table, body in bodies.items():
            body = _windowed(table, body, bodies["sessions"], window)
            try:
                con.execute(f"CREATE VIEW {table} AS {body}")
            except duckdb.Error as exc:
                raise UsageError(f"sql: table {table}: {_first_line(exc)}") from None
    except BaseException:
        con.close()
        raise
    return con


def _windowed(table: str, body: str, sessions: str, window) -> str:
    """A table's rows inside ``window``: the sessions whose ``created_at`` it holds, and the other tables'
    rows of those sessions' logs."""
    if window is None or not window.bounded:
        return body
    bounds = ["created_at IS NOT NULL"]
    if window.since_ms is not None:
        bounds.append(f"epoch_ms(created_at) >= {int(window.since_ms)}")
    if window.until_ms is not None:
        bounds.append(f"epoch_ms(created_at) < {int(window.until_ms)}")
    inside = " AND ".join(bounds)
    if table == "sessions":
        return f"SELECT * FROM ({body}) WHERE {inside}"
    return f"SELECT * FROM ({body}) WHERE path IN (SELECT path FROM ({sessions}) WHERE {inside})"


def query_rows(query: str, paths: list[str], options: SqlOptions) -> SqlResult:
    """Run ``query`` over the tables of ``paths`` (default: the sessions root) and return every row."""
    with _cursor(query, _paths(paths), options) as run:
        return SqlResult(columns=run.columns, rows=run.rows.fetchall(), failures=run.tables.failures, warnings=run.tables.warnings)


def _paths(paths) -> list[str]:
    if paths is None:
        return []
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    return list(paths)


class _cursor:
    """The query running over the views: its ``columns``, its ``rows`` (fetched in batches), and the
    ``tables`` read. DuckDB's errors, when the views are made, the query planned or its rows fetched,
    are usage errors (one line, status 2). The cached dataset is held (a shared lock) while it is read,
    so that another ``dshctl sql`` does not evict it meanwhile."""

    def __init__(self, query: str, paths: list[str], options: SqlOptions, *, progress: bool = False):
        from . import require_duckdb

        require_duckdb("sql")
        self.progress = progress  # the command's progress bar while logs are exported into the cache
        self.query = query
        self.paths = paths
        self.options = options
        self.con = None
        self.lock = None
        self.aliases = _Aliases()

    def __enter__(self) -> "_cursor":
        import duckdb

        try:
            self.tables = _tables(self.paths, self.options, self.progress)
            if self.tables.cached is not None:
                self._hold(self.tables.cached)
            self.con = connect(self.tables.datasets, self.options.zone, self.aliases, self.options.window)
            try:
                cursor = self.con.execute(self.query)
            except duckdb.Error as exc:
                raise UsageError(f"sql: {_first_line(exc)}") from None
        except BaseException:
            self.__exit__()
            raise
        self.columns = [column[0] for column in cursor.description] if cursor.description is not None else []
        self.rows = _Rows(cursor if cursor.description is not None else None)
        return self

    def _hold(self, directory: Path) -> None:
        import fcntl

        from .manifest import LOCK

        try:
            self.lock = open(directory / LOCK, "a+b")
            fcntl.flock(self.lock.fileno(), fcntl.LOCK_SH)
        except OSError:
            pass

    def __exit__(self, *exc) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None
        if self.lock is not None:
            self.lock.close()
            self.lock = None
        self.aliases.close()


class _Rows:
    """A query's rows, fetched as asked; a failure while they are computed is a usage error too."""

    def __init__(self, cursor) -> None:
        self.cursor = cursor

    def fetchall(self) -> list:
        return self._fetch(lambda cursor: cursor.fetchall())

    def fetchmany(self, size: int) -> list:
        return self._fetch(lambda cursor: cursor.fetchmany(size))

    def _fetch(self, how) -> list:
        import duckdb

        if self.cursor is None:
            return []
        try:
            return how(self.cursor)
        except duckdb.Error as exc:
            raise UsageError(f"sql: {_first_line(exc)}") from None


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# -- output ----------------------------------------------------------------------------------------------


def plain(value: Any) -> Any:
    """A DuckDB value as JSON would hold it: times ISO 8601, decimals exact, nested values recursively."""
    if isinstance(value, decimal.Decimal):
        # every digit of its scale, never an exponent (str gives 0E-9 for DECIMAL(38,9)'s zero)
        return msgspec.Raw(format(value, "f").encode())
    if isinstance(value, _dt.datetime):
        return value.isoformat()
    if isinstance(value, (_dt.date, _dt.time)):
        return value.isoformat()
    if isinstance(value, _dt.timedelta):
        return value.total_seconds()
    if isinstance(value, dict):
        return {str(key): plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return None
    return value


def cell(value: Any) -> str:
    """A value as a table or CSV cell (a table shows NULL, a CSV an empty field; NaN is JSON's null)."""
    if value is None:
        return ""
    value = plain(value)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return msgspec.json.encode(value, enc_hook=str).decode()
    if isinstance(value, msgspec.Raw):
        return bytes(value).decode()
    return str(value)


def tsv_value(value: Any) -> Any:
    """A value as ``--tsv`` gives it, by the rules every TSV form shares (:func:`dshctl.tables.raw_text`):
    NULL and NaN empty, numbers as JavaScript prints them (``2``, not ``2.0``), booleans ``true``/``false``,
    a time with a zone in ISO 8601 UTC with milliseconds (``2026-09-21T14:13:59.500Z``, microseconds only
    when it has them), one without (TIMESTAMP) as written, no ``Z``; decimals exact, lists and structs JSON."""
    if value is None or isinstance(value, (bool, int, float)):
        return value
    if isinstance(value, _dt.datetime):
        return _tsv_time(value)
    return cell(value)


def _tsv_time(value: _dt.datetime) -> str:
    if value.tzinfo is not None:
        value = value.astimezone(_dt.timezone.utc)
    fraction = f"{value.microsecond:06d}" if value.microsecond % 1000 else f"{value.microsecond // 1000:03d}"
    return f"{value:%Y-%m-%dT%H:%M:%S}.{fraction}" + ("Z" if value.tzinfo is not None else "")


_encoder = msgspec.json.Encoder(decimal_format="number", enc_hook=str)


def _batches(cursor, size: int = 2048) -> Iterator[list]:
    while True:
        rows = cursor.fetchmany(size)
        if not rows:
            return
        yield rows


def run_sql(query: str, paths: list[str], options: SqlOptions) -> int:
    """The ``dshctl sql`` command: the result on stdout in the chosen form, then the warnings of the logs
    read (status 1 when some could not be read: the tables leave them out, as stats does)."""
    import sys

    from ..output import write_bytes
    from ..stdio import is_terminal
    from . import report_logs

    with _cursor(query, paths, options, progress=True) as run:
        columns, rows = run.columns, run.rows
        output = options.output
        if output == "table":
            _table(columns, rows.fetchall(), options.colored, options.table_form)
        elif output == "json":
            write_bytes(b"[")
            first = True
            for batch in _batches(rows):
                for row in batch:
                    write_bytes((b"" if first else b",\n") + _json_row(columns, row))
                    first = False
            write_bytes(b"]\n")
        elif output == "ndjson":
            for batch in _batches(rows):
                write_bytes(b"".join(_json_row(columns, row) + b"\n" for row in batch))
        else:
            _csv(columns, rows, shown=visible if is_terminal(sys.stdout) else _as_is)
        sys.stdout.flush()
        report_logs(run.tables.failures, run.tables.warnings, verbose=options.verbose)
    return EXIT_FINDINGS if run.tables.failures else EXIT_OK


def _json_row(columns: list[str], row: tuple) -> bytes:
    return escape_json_bytes(_encoder.encode(dict(zip(columns, map(plain, row)))))


def _as_is(text: str) -> str:
    return text


def _csv(columns: list[str], rows: "_Rows", *, shown) -> None:
    """CSV: a header row, then the rows. On a terminal every field is shown as text from a log is (its
    control characters as pictures, :func:`dshctl.textsafe.visible`), as ``cat --raw`` shows lines; to a
    pipe or file the values are as they are."""
    import csv
    import io

    from ..output import write_bytes

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([shown(name) for name in columns])
    for batch in _batches(rows):
        for row in batch:
            writer.writerow([shown(cell(value)) for value in row])
        write_bytes(buffer.getvalue().encode())
        buffer.seek(0)
        buffer.truncate()
    write_bytes(buffer.getvalue().encode())


def _table(columns: list[str], rows: list[tuple], color: bool, form: str) -> None:
    from ..tables import Cell, Column, print_table

    numeric = [bool(rows) and all(isinstance(row[i], (int, float, decimal.Decimal)) and not isinstance(row[i], bool)
                                  for row in rows if row[i] is not None) and any(row[i] is not None for row in rows)
               for i in range(len(columns))]
    # too wide for the terminal: text is cut with "…" on one line first, then the last columns are hidden
    # (the footer names them), as every table's
    last = len(columns)
    specs = [Column(name, "right", number=True, drop=None if i == 0 else last - i) if numeric[i]
             else Column(name, "left", cut="end", drop=None if i == 0 else last - i, least=max(8, min(len(name), 20)))
             for i, name in enumerate(columns)]
    caption = f"{len(rows):,} row{'s' if len(rows) != 1 else ''}"
    print_table(None, specs, ([_table_cell(value) for value in row] for row in rows), caption, color=color, form=form, listing=True)


def _table_cell(value: Any):
    """A table shows NULL (NaN and infinities too: null in JSON) as every table shows no value (``—`` on a
    terminal, ``-`` in plain: one placeholder); TSV gives an empty field for it, and the
    other values by the shared TSV rules (:func:`tsv_value`: a float in positional notation, ``0.0000001``,
    not ``1e-07``; a time in UTC with milliseconds)."""
    from ..tables import NULL_CELL, Cell

    if value is None or (isinstance(value, float) and plain(value) is None):  # NaN and infinities are JSON's null too
        return Cell(NULL_CELL, None)
    return Cell(cell(value), tsv_value(value))
