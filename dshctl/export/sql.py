"""``dshctl sql QUERY [PATH...]``: SQL over the sessions, with DuckDB in process.

The tables are ``dshctl export``'s (``sessions``, ``turns``, ``steps``, ``tool_calls``, ``images``;
``docs/schema.md``), as views. A PATH that is a dataset written by ``dshctl export --format parquet`` is
read as it is; logs, session directories and sessions roots (the default: the sessions root) are exported
first into a dataset in the cache (``$XDG_CACHE_HOME/dshctl/sql/``, one per set of PATHs), incrementally,
so a second query over the same logs reads only what changed. The session's time zone is UTC unless
``--tz`` names another (``date_trunc``, ``strftime`` and casts of the ``TIMESTAMPTZ`` columns follow it).

Output: a table (literal text, fitted to the terminal like every dshctl table), ``--json`` (one array of
row objects), ``--ndjson`` (one object per row) or ``--csv`` (a header row, then the rows). Times are ISO
8601 with their offset, decimals keep every digit, lists and structs are JSON.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import hashlib
import os
from pathlib import Path
from typing import Any, Iterator

import msgspec

from ..errors import EXIT_OK, UsageError
from ..options.export import SqlOptions

TABLES = ("sessions", "turns", "steps", "tool_calls", "images")

__all__ = ["SqlOptions", "SqlResult", "query_rows", "run_sql"]


class SqlResult(msgspec.Struct):
    """A query's columns and rows (Python values as DuckDB returns them)."""

    columns: list[str]
    rows: list[tuple]


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _datasets(paths: list[str], options: SqlOptions) -> list[Path]:
    """The datasets to read: PATHs that are datasets, and one cached export of the other PATHs."""
    from .manifest import is_dataset

    datasets: list[Path] = []
    logs: list[str] = []
    for path in paths:
        expanded = Path(os.path.expanduser(path)).absolute()
        if expanded.is_dir() and is_dataset(expanded):
            datasets.append(expanded)
        else:
            logs.append(path)
    if logs or not paths:
        datasets.append(_cached_export(logs, options))
    return datasets


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    return root / "dshctl" / "sql"


def _cached_export(paths: list[str], options: SqlOptions) -> Path:
    """The logs of ``paths`` exported (incrementally, pruned) into their dataset in the cache."""
    from . import ExportOptions, _absolute, export_logs
    from ..source import sessions_root

    named = sorted(_absolute(paths)) if paths else [str(sessions_root())]
    key = hashlib.sha256("\0".join(named).encode()).hexdigest()[:20]
    directory = cache_root() / key
    export_options = ExportOptions(format="parquet", out=str(directory), prune=True, jobs=options.jobs, prices=options.prices,
                                   no_cost=options.no_cost, verbose=options.verbose, color=options.color_when,
                                   quiet=options.quiet)
    result = export_logs(named, export_options)
    if result.errors:
        from ..output import warn

        warn(f"{len(result.errors):,} log(s) could not be read; the tables leave them out")
    return directory


def _files(directory: Path) -> dict[str, list[str]]:
    """Table → the dataset's Parquet files of it, as its manifest names them."""
    from .manifest import MANIFEST, read_manifest

    manifest = read_manifest(directory)
    if manifest is None:
        raise UsageError(f"{directory}: no {MANIFEST}")
    files: dict[str, list[str]] = {}
    for part in manifest.parts.values():
        for table, relative in part.files.items():
            files.setdefault(table, []).append(str(directory / relative))
    return {table: sorted(names) for table, names in files.items()}


def _empty_select(table: str) -> str:
    from .schema import TABLES as SCHEMA

    columns = ", ".join(f"CAST(NULL AS {column.type}) AS \"{column.name}\"" for column in SCHEMA[table].columns)
    return f"SELECT {columns} WHERE false"


def connect(datasets: list[Path], tz: str | None):
    """DuckDB with the five tables as views over the datasets' Parquet files."""
    import duckdb

    con = duckdb.connect(config={"threads": 2})
    try:
        con.execute(f"SET TimeZone = {_quote(tz or 'UTC')}")
    except duckdb.Error:
        raise UsageError(f"--tz: unknown time zone {tz!r} (an IANA name such as Europe/Berlin, or UTC)") from None
    listed_files = [_files(directory) for directory in datasets]
    for table in TABLES:
        files = [file for found in listed_files for file in found.get(table, ())]
        if files:
            listed = "[" + ", ".join(_quote(f) for f in files) + "]"
            hive = "true" if any("=" in Path(f).parent.name for f in files) else "false"
            body = f"SELECT * FROM read_parquet({listed}, hive_partitioning={hive}, union_by_name=true)"
        else:
            body = _empty_select(table)
        con.execute(f"CREATE VIEW {table} AS {body}")
    return con


def query_rows(query: str, paths: list[str], options: SqlOptions) -> SqlResult:
    """Run ``query`` over the tables of ``paths`` (default: the sessions root) and return every row."""
    with _cursor(query, _paths(paths), options) as (columns, cursor):
        return SqlResult(columns=columns, rows=cursor.fetchall())


def _paths(paths) -> list[str]:
    if paths is None:
        return []
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    return list(paths)


class _cursor:
    """The query running over the views: ``(column names, cursor)``; DuckDB's errors as usage errors."""

    def __init__(self, query: str, paths: list[str], options: SqlOptions):
        from . import require_duckdb

        require_duckdb("sql")
        self.query = query
        self.paths = paths
        self.options = options
        self.con = None

    def __enter__(self):
        import duckdb

        datasets = _datasets(self.paths, self.options)
        self.con = connect(datasets, self.options.tz)
        try:
            cursor = self.con.execute(self.query)
        except duckdb.Error as exc:
            raise UsageError(f"sql: {_first_line(exc)}") from None
        if cursor.description is None:
            return [], _NoRows()
        return [column[0] for column in cursor.description], cursor

    def __exit__(self, *exc) -> None:
        if self.con is not None:
            self.con.close()


class _NoRows:
    def fetchall(self) -> list:
        return []

    def fetchmany(self, size: int) -> list:
        return []


def _first_line(exc: Exception) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# -- output ----------------------------------------------------------------------------------------------


def plain(value: Any) -> Any:
    """A DuckDB value as JSON would hold it: times ISO 8601, decimals exact, nested values recursively."""
    if isinstance(value, decimal.Decimal):
        return value
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
    """A value as a table or CSV cell (a table shows NULL, a CSV an empty field)."""
    if value is None:
        return ""
    value = plain(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, dict)):
        return msgspec.json.encode(value, enc_hook=str).decode()
    return str(value)


_encoder = msgspec.json.Encoder(decimal_format="number", enc_hook=str)


def _batches(cursor, size: int = 2048) -> Iterator[list]:
    while True:
        rows = cursor.fetchmany(size)
        if not rows:
            return
        yield rows


def run_sql(query: str, paths: list[str], options: SqlOptions) -> int:
    """The ``dshctl sql`` command: the result on stdout in the chosen form."""
    import sys

    from ..output import write_bytes

    with _cursor(query, paths, options) as (columns, cursor):
        output = options.output
        if output == "table":
            _table(columns, cursor.fetchall(), options.colored, options.table_form)
        elif output == "json":
            write_bytes(b"[")
            first = True
            for rows in _batches(cursor):
                for row in rows:
                    write_bytes((b"" if first else b",\n") + _encoder.encode(dict(zip(columns, map(plain, row)))))
                    first = False
            write_bytes(b"]\n")
        elif output == "ndjson":
            for rows in _batches(cursor):
                write_bytes(b"".join(_encoder.encode(dict(zip(columns, map(plain, row)))) + b"\n" for row in rows))
        else:
            import csv
            import io

            buffer = io.StringIO()
            writer = csv.writer(buffer, lineterminator="\n")
            writer.writerow(columns)
            for rows in _batches(cursor):
                for row in rows:
                    writer.writerow([cell(value) for value in row])
                write_bytes(buffer.getvalue().encode())
                buffer.seek(0)
                buffer.truncate()
            write_bytes(buffer.getvalue().encode())
        sys.stdout.flush()
    return EXIT_OK


def _table(columns: list[str], rows: list[tuple], color: bool, form: str) -> None:
    from ..output import Column, print_table

    numeric = [bool(rows) and all(isinstance(row[i], (int, float, decimal.Decimal)) and not isinstance(row[i], bool)
                                  for row in rows if row[i] is not None) and any(row[i] is not None for row in rows)
               for i in range(len(columns))]
    # too wide for the terminal: text folds first, then the last columns are hidden (the footer names them)
    last = len(columns)
    specs = [Column(name, "right", number=True, drop=None if i == 0 else last - i) if numeric[i]
             else Column(name, "left", fold=True, drop=None if i == 0 else last - i, least=max(8, min(len(name), 20)))
             for i, name in enumerate(columns)]
    caption = f"{len(rows):,} row{'s' if len(rows) != 1 else ''}"
    print_table(None, specs, (["NULL" if value is None else cell(value) for value in row] for row in rows), caption, color=color, form=form,
                listing=True)
