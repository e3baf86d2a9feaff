"""``dshctl export --format parquet``: the tables as Parquet datasets, written by DuckDB, kept current
incrementally.

Layout of ``--out DIR``::

    DIR/_dshctl_dataset.json                     the manifest (dshctl.export.manifest)
    DIR/sessions/part-<id>.parquet               unpartitioned
    DIR/steps/day=2026-11-30/part-<id>.parquet   --partition-by day (Hive-style, values escaped)

How a run goes: the logs named are compared with the manifest (path, size, modification time); only new
and changed ones are read — in worker processes when there are many, each streaming its rows to
newline-delimited JSON spool files as they become final (:class:`Spool`), so no process holds a long
log's rows. The main process then has DuckDB turn the spools into Parquet parts, one file per table per
part, typed as :mod:`dshctl.export.schema` says. A part that held a changed or deleted (``--prune``) log
is rewritten without that log's rows. The manifest is replaced last; superseded parts are removed after.
"""

from __future__ import annotations

import datetime as _dt
import os
import shutil
import time
from functools import partial
from pathlib import Path
from typing import Any, Iterable

import msgspec

from ..errors import DshctlError, OutputError
from .manifest import LogEntry, Manifest, PartEntry
from .schema import SCHEMA, TABLES, Column, Table, fingerprint, quote, select_expression

DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
"""Hive's (and Spark's, Trino's, DuckDB's) name for a null partition value."""
PART_LOGS = 512
"""At most this many logs in one part (one file per table)."""
PART_BYTES = 256 << 20
"""…and about this many bytes of spooled rows."""
MAX_ROW_BYTES = 32 << 20
"""The longest spooled row DuckDB reads (it buffers twice this): a row that long is a log's hostile text."""


# -- partitions ------------------------------------------------------------------------------------------

_HIVE_ESCAPED = set('"#%\'*/:=?\\{[]^\x7f') | {chr(c) for c in range(0x20)}


def hive_escape(value: str) -> str:
    """A partition value as Hive escapes it in a directory name (``/`` → ``%2F``); Spark, Trino and
    DuckDB unescape it."""
    return "".join(f"%{ord(c):02X}" if c in _HIVE_ESCAPED else c for c in value)


def partition_value(by: str | None, session) -> str | None:
    """The session's partition: its start's UTC day (``2026-11-30``) or month (``2026-11``), or its
    project (the header's cwd); None when unknown."""
    if by is None:
        return None
    if by == "project":
        cwd = session.cwd
        return cwd if isinstance(cwd, str) and cwd else None
    from ..stats.rollup import UNKNOWN, period_key

    key = period_key(by, session.created_at, _dt.timezone.utc)
    return None if key == UNKNOWN else key


def partition_dir(by: str | None, value: str | None) -> str:
    if by is None:
        return ""
    return f"{by}={DEFAULT_PARTITION if value is None else hive_escape(value)}"


def table_columns(table: Table, by: str | None) -> list[Column]:
    """The columns written into the files: a partition column lives in the directory names only."""
    return [column for column in table.columns if column.name != by]


# -- one log, in a worker ---------------------------------------------------------------------------------


class LogResult(msgspec.Struct, kw_only=True):
    """What exporting one log left behind: its spool files and what the manifest records of it."""

    path: str
    size: int
    mtime_ns: int
    session_id: str | None
    session_dir: str | None
    partition: str | None
    rows: dict[str, int]
    spools: dict[str, str]
    spool_bytes: int
    warnings: list[str]


class Spool:
    """A sink (:class:`dshctl.export.rows.Sink`) writing each table's rows of one log to its own
    newline-delimited JSON file."""

    def __init__(self, directory: Path, name: str):
        self.directory = directory
        self.name = name
        self.files: dict[str, Any] = {}
        self.paths: dict[str, str] = {}
        self.counts = {table: 0 for table in TABLES}
        self.encode = msgspec.json.Encoder().encode

    def _file(self, table: str):
        handle = self.files.get(table)
        if handle is None:
            path = self.directory / f"{self.name}.{table}.ndjson"
            handle = self.files[table] = open(path, "wb", buffering=1 << 20)
            self.paths[table] = str(path)
        return handle

    def rows(self, table: str, records: list, keys: dict) -> None:
        spec = TABLES[table]
        encode = self.encode
        lines = [encode(spec.row(record, keys)) for record in records]
        handle = self._file(table)
        handle.write(b"\n".join(lines))
        handle.write(b"\n")
        self.counts[table] += len(records)

    def session(self, record, keys: dict) -> None:
        self.rows("sessions", [record], keys)

    def inherited_before(self, counts: dict[str, int]) -> None:
        """Rows handed over before the log's last cut were inherited: say so in the spool."""
        decode = msgspec.json.decode
        for table, count in counts.items():
            if not count or table not in self.files:
                continue
            self.files[table].close()
            path = Path(self.paths[table])
            marked = path.with_suffix(".marked")
            with open(path, "rb") as source, open(marked, "wb", buffering=1 << 20) as target:
                for number, line in enumerate(source):
                    if number < count:
                        row = decode(line)
                        if "inherited" in row:
                            row["inherited"] = True
                        line = self.encode(row) + b"\n"
                    target.write(line)
            os.replace(marked, path)
            self.files[table] = open(path, "ab", buffering=1 << 20)

    def close(self) -> int:
        for handle in self.files.values():
            handle.close()
        return sum(os.path.getsize(path) for path in self.paths.values())

    def discard(self) -> None:
        self.close()
        for path in self.paths.values():
            try:
                os.unlink(path)
            except OSError:
                pass


def export_log(ref, *, spool_dir: str, prices, partition_by: str | None, names: dict) -> LogResult:
    """Read one log into its spool files (a worker's task: module level, picklable arguments)."""
    from ..reader import open_log
    from .rows import LogPass

    path = ref.location
    status = os.stat(ref.path)  # before reading: a log that grows while read is read again next time
    spool = Spool(Path(spool_dir), names[path])
    try:
        log = open_log(ref)
        try:
            session = LogPass(log, spool, prices=prices, path=str(path)).run()
        finally:
            log.close()
    except BaseException:
        spool.discard()
        raise
    size = spool.close()
    return LogResult(
        path=str(path),
        size=status.st_size,
        mtime_ns=status.st_mtime_ns,
        session_id=session.id,
        session_dir=str(ref.session_dir) if ref.session_dir is not None else None,
        partition=partition_value(partition_by, session),
        rows={table: count for table, count in spool.counts.items() if count},
        spools=dict(spool.paths),
        spool_bytes=size,
        warnings=list(session.warnings),
    )


# -- DuckDB ------------------------------------------------------------------------------------------------


def sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def connect(temp_dir: Path):
    """An in-process DuckDB for writing: UTC, two threads, bounded memory (it spills to ``temp_dir``)."""
    import duckdb

    con = duckdb.connect(config={"threads": 2, "memory_limit": "160MB", "temp_directory": str(temp_dir)})
    con.execute("SET TimeZone = 'UTC'")
    return con


def kv_metadata(table: str) -> str:
    from .. import __version__

    pairs = {
        "dshctl.schema": SCHEMA,
        "dshctl.schema_fingerprint": fingerprint(),
        "dshctl.table": table,
        "dshctl.version": __version__,
    }
    return "{" + ", ".join(f"{sql_string(k)}: {sql_string(v)}" for k, v in pairs.items()) + "}"


def execute(con, statement: str) -> None:
    """A statement of the writer; DuckDB's failure as dshctl's error (one line, status 2)."""
    import duckdb

    try:
        con.execute(statement)
    except duckdb.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise OutputError(f"writing Parquet with DuckDB: {first}") from None


def copy_spools(con, table: Table, spools: list[str], target: Path, partition_by: str | None) -> None:
    """One Parquet file of ``table`` from spool files (read without Hive partitioning: a key=value directory
    above the dataset would otherwise become a column, and hide a column of the same name)."""
    columns = table_columns(table, partition_by)
    types = "{" + ", ".join(f"{sql_string(c.name)}: {sql_string(c.spool_type)}" for c in columns) + "}"
    select = ", ".join(select_expression(c) for c in columns)
    files = "[" + ", ".join(sql_string(f) for f in spools) + "]"
    execute(
        con,
        f"COPY (SELECT {select} FROM read_json({files}, format='newline_delimited', columns={types}, hive_partitioning=false, "
        f"maximum_object_size={MAX_ROW_BYTES})) TO {sql_string(str(target))} "
        f"(FORMAT parquet, COMPRESSION zstd, KV_METADATA {kv_metadata(table.name)})"
    )


def copy_without(con, table: Table, source: Path, target: Path, paths: Iterable[str]) -> None:
    """A part's file again, without the rows of ``paths`` (logs that changed or went)."""
    listed = ", ".join(sql_string(p) for p in paths)
    execute(
        con,
        f"COPY (SELECT * FROM read_parquet({sql_string(str(source))}, hive_partitioning=false) "
        f"WHERE {quote('path')} NOT IN ({listed})) TO {sql_string(str(target))} "
        f"(FORMAT parquet, COMPRESSION zstd, KV_METADATA {kv_metadata(table.name)})"
    )


# -- the dataset --------------------------------------------------------------------------------------------


class Plan(msgspec.Struct):
    """What one run does: the logs to read, the logs whose rows go, and the logs left as they are."""

    read: list
    drop: set
    kept: int
    missing: list
    rebuild: bool
    outside: list = []
    """A rebuild's logs of the dataset left out by ``--since`` / ``--until``: their rows go, unread."""


def broken_logs(directory: Path, manifest: Manifest | None) -> set[str]:
    """The logs of parts with a file missing (deleted by hand, a damaged copy): they are read again."""
    broken: set[str] = set()
    if manifest is None:
        return broken
    parts = {name for name, part in manifest.parts.items() if any(not (directory / f).is_file() for f in part.files.values())}
    if parts:
        broken = {path for path, entry in manifest.logs.items() if entry.part in parts}
        for name in parts:
            del manifest.parts[name]  # nothing of them is copied: their logs' rows are all written again
    return broken


def plan(refs: list, manifest: Manifest | None, *, prune: bool, rebuild: bool, broken: set[str] = frozenset(),
         window=None) -> Plan:
    """What to read and drop: new and changed logs (all of them with ``rebuild``, and those of
    ``broken`` parts, named or not), and the rows of logs that changed, went (``prune``) or moved.

    A rebuild rewrites every row, so it cannot keep a log's rows unread: with a bounded ``window`` the
    dataset's logs whose sessions are outside it are dropped and not read (``outside``); the rebuilt
    dataset holds the window alone. Without a rebuild a broken part's logs are read whatever the window:
    the rows an earlier run wrote are kept, as the window promises."""
    from ..source import resolve_named

    logs = manifest.logs if manifest is not None else {}
    read, drop, kept = [], set(), 0
    named = set()
    by_dir: dict[str, str] = {}
    for path, entry in logs.items():
        if entry.session_dir is not None:
            by_dir[entry.session_dir] = path
    for ref in refs:
        key = ref.location
        named.add(key)
        entry = logs.get(key)
        if entry is None and ref.session_dir is not None:
            replaced = by_dir.get(str(ref.session_dir))
            if replaced is not None and replaced != key:
                drop.add(replaced)  # the session moved to another generation's file
        try:
            status = os.stat(ref.path)
        except OSError:
            read.append(ref)  # reading reports why
            continue
        if entry is not None and not rebuild and key not in broken and entry.size == status.st_size and entry.mtime_ns == status.st_mtime_ns:
            kept += 1
            continue
        if entry is not None:
            drop.add(key)
        read.append(ref)
    missing, outside = [], []
    for path in logs:
        if path in named or path in drop:
            continue
        if not os.path.exists(path):
            missing.append(path)
            if prune or path in broken:  # a broken part's rows are gone: nothing keeps them
                drop.add(path)
        elif rebuild or path in broken:
            drop.add(path)
            for ref in resolve_named(path):
                if rebuild and window is not None and window.excludes(ref):
                    outside.append(path)
                else:
                    read.append(ref)
    return Plan(read=read, drop=drop, kept=kept, missing=missing, rebuild=rebuild, outside=outside)


class Writer:
    """Turns the spools of one run into parts and replaces the manifest."""

    def __init__(self, directory: Path, manifest: Manifest, spool_dir: Path, partition_by: str | None):
        self.directory = directory
        self.manifest = manifest
        self.spool_dir = spool_dir
        self.partition_by = partition_by
        self.stamp = f"{time.time_ns():x}{os.getpid():x}"
        self.count = 0
        self.con = None
        self.superseded: list[Path] = []

    def _con(self):
        if self.con is None:
            self.con = connect(self.spool_dir)
        return self.con

    def _part_id(self) -> str:
        self.count += 1
        return f"{self.stamp}-{self.count:04d}"

    def _target(self, table: str, partition: str | None, part: str) -> tuple[Path, str]:
        relative = Path(table) / partition_dir(self.partition_by, partition) / f"part-{part}.parquet"
        target = self.directory / relative
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"{target.parent}: cannot create the partition directory: {exc.strerror or exc}") from None
        return target, str(relative)

    def drop(self, paths: set) -> None:
        """Remove the rows of these logs: each part that held one is rewritten without them."""
        logs = self.manifest.logs
        touched: dict[str, list[str]] = {}
        for path in paths:
            entry = logs.pop(path, None)
            if entry is not None:
                touched.setdefault(entry.part, []).append(path)
        for part, gone in touched.items():
            entry = self.manifest.parts.pop(part, None)
            if entry is None:
                continue
            remaining = [path for path, log in logs.items() if log.part == part]
            old_files = {table: self.directory / relative for table, relative in entry.files.items()}
            self.superseded.extend(old_files.values())
            if not remaining:
                continue
            new_part = self._part_id()
            files = {}
            for table, source in old_files.items():
                if not any(logs[path].rows.get(table) for path in remaining):
                    continue
                target, relative = self._target(table, entry.partition, new_part)
                copy_without(self._con(), TABLES[table], source, target, gone)
                files[table] = relative
            self.manifest.parts[new_part] = PartEntry(partition=entry.partition, files=files)
            for path in remaining:
                logs[path].part = new_part

    def add(self, results: list[LogResult]) -> None:
        """New parts from the spools of the logs just read, grouped by partition."""
        by_partition: dict[Any, list[LogResult]] = {}
        for result in results:
            by_partition.setdefault(result.partition, []).append(result)
        for partition in sorted(by_partition, key=lambda value: (value is None, value or "")):
            group = sorted(by_partition[partition], key=lambda result: result.path)
            for chunk in _chunks(group):
                self._write_part(partition, chunk)

    def _write_part(self, partition: str | None, chunk: list[LogResult]) -> None:
        part = self._part_id()
        files = {}
        for name, table in TABLES.items():
            spools = [result.spools[name] for result in chunk if name in result.spools]
            if not spools:
                continue
            target, relative = self._target(name, partition, part)
            joined = self._joined(spools, f"{part}.{name}")
            copy_spools(self._con(), table, [joined], target, self.partition_by)
            os.unlink(joined)
            files[name] = relative
        self.manifest.parts[part] = PartEntry(partition=partition, files=files)
        for result in chunk:
            self.manifest.logs[result.path] = LogEntry(
                size=result.size, mtime_ns=result.mtime_ns, session_id=result.session_id,
                session_dir=result.session_dir, partition=partition, part=part, rows=result.rows,
            )

    def _joined(self, spools: list[str], name: str) -> str:
        """The part's spools of one table as one file: DuckDB pays per file opened, not per row."""
        path = self.spool_dir / f"{name}.ndjson"
        with open(path, "wb") as target:
            for spool in spools:
                with open(spool, "rb") as source:
                    shutil.copyfileobj(source, target, 1 << 20)
                os.unlink(spool)
        return str(path)

    def close(self) -> None:
        if self.con is not None:
            self.con.close()
            self.con = None

    def remove_superseded(self) -> None:
        for path in self.superseded:
            _unlink(path)
        _remove_empty_dirs(self.directory)


def _chunks(results: list[LogResult]) -> Iterable[list[LogResult]]:
    chunk: list[LogResult] = []
    size = 0
    for result in results:
        if chunk and (len(chunk) >= PART_LOGS or size + result.spool_bytes > PART_BYTES):
            yield chunk
            chunk, size = [], 0
        chunk.append(result)
        size += result.spool_bytes
    if chunk:
        yield chunk


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass
    except OSError as exc:
        raise OutputError(f"{path}: cannot remove a superseded part: {exc.strerror or exc}") from None


def _remove_empty_dirs(directory: Path) -> None:
    for table in TABLES:
        root = directory / table
        if not root.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(root, topdown=False):
            if not dirnames and not filenames:
                try:
                    os.rmdir(dirpath)
                except OSError:
                    pass


def remove_strays(directory: Path, manifest: Manifest | None) -> int:
    """Remove part files the manifest does not name (an interrupted export's); returns how many."""
    named = {str(directory / relative) for part in (manifest.parts.values() if manifest else ()) for relative in part.files.values()}
    removed = 0
    for table in TABLES:
        root = directory / table
        if not root.is_dir():
            continue
        for dirpath, _, filenames in os.walk(root):
            for filename in filenames:
                path = os.path.join(dirpath, filename)
                if filename.startswith("part-") and filename.endswith(".parquet") and path not in named:
                    os.unlink(path)
                    removed += 1
    return removed


def new_manifest(partition_by: str | None, prices_digest: str) -> Manifest:
    from .. import __version__

    return Manifest(schema=SCHEMA, fingerprint=fingerprint(), partition_by=partition_by, prices=prices_digest, dshctl=__version__)


def spool_directory(directory: Path) -> Path:
    spool = directory / f".dshctl-spool-{os.getpid()}"
    shutil.rmtree(spool, ignore_errors=True)
    spool.mkdir(parents=True)
    return spool


def remove_stale_spools(directory: Path) -> None:
    for entry in directory.glob(".dshctl-spool-*"):
        shutil.rmtree(entry, ignore_errors=True)


def reader_for(spool_dir: Path, prices, partition_by: str | None, refs: list):
    """The worker function over ``refs``: each log spools under a name of its own."""
    names = {ref.location: f"log{index:06d}" for index, ref in enumerate(refs)}
    return partial(export_log, spool_dir=str(spool_dir), prices=prices, partition_by=partition_by, names=names)


def located_message(error: DshctlError) -> str:
    return error.detail()
