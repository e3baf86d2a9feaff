"""The stats cache: one log's statistics kept between runs, so that a root read again reads only the
logs that changed (``$XDG_CACHE_HOME/dshctl/stats.sqlite3``, SQLite from the standard library).

An entry is one log's :class:`~dshctl.stats.results.LogStats` as a run over many logs computed it, found
by the file's device and inode and the *context* of the run, and valid while the file's size and
modification time (ns) are those it had when it was read. The context is everything else a result
depends on: dshctl's fold version and the installed package's modules (a changed module is a new
context, so an edited or upgraded dshctl never serves an old result), which records are kept
(``--by``), ``--strict``, ``--salvage``, the line limit and the price table. The header is part of the
entry (its ``createdAt`` decides ``--since`` / ``--until`` for a log that is not opened); a log whose
header changed has changed size or time.

Trust: an entry is a pickle checked against its BLAKE2 digest and unpickled by an unpickler that knows
only the stats records' classes, so a damaged or foreign entry is a miss, never code; a damaged or
foreign database file is moved aside and rebuilt; any failure of the cache (a read-only or full
disk, a lock held too long) makes it a no-op for the run: never fatal, never a different figure.

Concurrency: WAL journal (readers never block the writer), one writer at a time (``BEGIN IMMEDIATE``,
a busy timeout); this process writes the entries it read in one transaction at the end of the run, and
only those whose file did not change while it was read (the same size and time before and after).
Entries unused for :data:`PRUNE_AFTER_S` are dropped.

Failed logs are not cached (they are re-read, and report their error as before); neither is a run over
one log (``stats FILE`` always reads it) or standard input.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import sqlite3
import time
from contextlib import closing
from pathlib import Path
from typing import Any, Callable, Iterator

import msgspec

from .records import SessionRecord, StepRecord, TurnRecord
from .results import LogStats, StatsSamples

__all__ = ["CACHE_FILE", "FOLD_VERSION", "StatsCache", "cache_path", "open_stats_cache"]

CACHE_FILE = "stats.sqlite3"
FOLD_VERSION = "stats-fold/2"
"""Bumped by hand when the fold's results change meaning; the modules' own signature (:func:`_code_signature`)
already covers any change of an installed file."""
SCHEMA = 1
BUSY_TIMEOUT_MS = 2000
PRUNE_AFTER_S = 30 * 86400

_ALLOWED = {
    "dshctl.stats.records": None,  # any class of these modules (checked to be a class below)
    "dshctl.stats.results": None,
    "dshctl.stats.costs": None,
    "dshctl.stats.billing": None,  # the samples' billing per minute and model
    "array": {"array", "_array_reconstructor"},
    "collections": {"Counter", "OrderedDict"},
    "msgspec._core": {"UNSET"},
    "msgspec._utils": {"rebuild"},
    "copyreg": {"_reconstructor"},
    "builtins": {"object", "set", "frozenset", "list", "dict", "tuple"},
}


class _RecordsUnpickler(pickle.Unpickler):
    """Unpickles the stats records and nothing else: an entry that names any other global is refused."""

    _found: dict[tuple[str, str], Any] = {}

    def find_class(self, module: str, name: str) -> Any:
        found = self._found.get((module, name))
        if found is None:
            found = self._found[module, name] = self._allowed_class(module, name)
        return found

    def _allowed_class(self, module: str, name: str) -> Any:
        if module not in _ALLOWED:
            raise pickle.UnpicklingError(f"{module}.{name} is not a stats record")
        names = _ALLOWED[module]
        if names is not None and name not in names:
            raise pickle.UnpicklingError(f"{module}.{name} is not a stats record")
        found = super().find_class(module, name)
        if names is None and not isinstance(found, type):
            raise pickle.UnpicklingError(f"{module}.{name} is not a stats record")
        return found


_TYPED = b"T"
"""The first byte of a typed entry (a pickle starts with its protocol opcode, 0x80)."""


class _Entry(msgspec.Struct, array_like=True):
    """A typed entry: the records, and the samples pickled (arrays and a Counter msgspec does not type)."""

    session: SessionRecord
    turns: list[TurnRecord] | None
    steps: list[StepRecord] | None
    samples: bytes


_entry_decoder = msgspec.msgpack.Decoder(_Entry).decode


def cache_path() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or ""
    from ..settings import home_directory

    root = Path(base) if os.path.isabs(base) else home_directory("XDG_CACHE_HOME") / ".cache"
    return root / "dshctl" / CACHE_FILE


def _code_signature() -> str:
    """The installed package's module files (name, size, modification time): a changed module (an edit,
    an upgrade, the compiled build or the pure one) is a new context."""
    import dshctl

    root = os.path.dirname(dshctl.__file__)
    parts = [dshctl.__version__, FOLD_VERSION]
    stack = [root]
    while stack:
        directory = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda entry: entry.name)
        except OSError:
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    stack.append(entry.path)
            elif entry.name.endswith((".py", ".so", ".pyd")):
                try:
                    status = entry.stat()
                except OSError:
                    continue
                parts.append(f"{os.path.relpath(entry.path, root)}:{status.st_size}:{status.st_mtime_ns}")
    return hashlib.blake2b("\n".join(parts).encode(), digest_size=16).hexdigest()


def _prices_signature(prices: Any) -> str:
    if prices is None:
        return "no-cost"
    import msgspec

    content = (
        sorted((name, [msgspec.structs.asdict(entry) for entry in entries]) for name, entries in prices.models.items()),
        sorted(prices.providers.items()),
        sorted(prices.aliases.items()),
    )
    return hashlib.blake2b(repr(content).encode(), digest_size=16).hexdigest()


def run_context(options: Any, prices: Any) -> str:
    """What a log's cached result depends on besides the file itself."""
    from ..source import max_line_bytes_from_env

    parts = (
        f"schema={SCHEMA}",
        f"code={_code_signature()}",
        f"by={options.record_by}",
        f"strict={options.strict}",
        f"salvage={options.salvage}",
        f"max_line_bytes={max_line_bytes_from_env()}",
        f"prices={_prices_signature(prices)}",
    )
    return hashlib.blake2b("\n".join(parts).encode(), digest_size=16).hexdigest()


FileKey = tuple  # (device, inode, size, mtime_ns)


def file_status(ref: Any) -> os.stat_result | None:
    """The log file's status; None for standard input, a member of a web export ZIP (the members of one
    archive share its status: they are read every time) or a file that cannot be stat'ed (it is read, and
    fails as it would)."""
    if ref.path is None or ref.problem is not None or ref.member is not None:
        return None
    try:
        return os.stat(ref.path)
    except OSError:
        return None


def file_key(ref: Any, status: os.stat_result | None = None) -> FileKey | None:
    """What identifies a log file's content for the cache (None: it cannot be cached)."""
    status = status or file_status(ref)
    if status is None:
        return None
    return status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns


class StatsCache:
    """The cache of one run: entries looked up as the logs are planned, new ones written at :meth:`close`."""

    def __init__(self, path: Path, context: str):
        self.path = path
        self.context = context
        self.hits = 0
        self._pending: list[tuple] = []
        self._db: sqlite3.Connection | None = None
        try:
            self._db = self._connect()
        except (sqlite3.Error, OSError):
            self._db = None
            if self._set_aside():
                try:
                    self._db = self._connect()
                except (sqlite3.Error, OSError):
                    self._db = None

    @property
    def enabled(self) -> bool:
        return self._db is not None

    def _connect(self) -> sqlite3.Connection:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None, check_same_thread=False)
        try:
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            if db.execute("PRAGMA journal_mode = WAL").fetchone()[0].lower() != "wal":
                raise sqlite3.DatabaseError("no WAL journal")
            db.execute("PRAGMA synchronous = NORMAL")
            version = db.execute("PRAGMA user_version").fetchone()[0]
            if version != SCHEMA:
                self._create(db, version)
            # a cheap read of the table proves it is ours and readable
            db.execute("SELECT dev, ino, context, size, mtime_ns, used, digest, entry FROM stats LIMIT 0").fetchall()
        except BaseException:
            db.close()
            raise
        return db

    @staticmethod
    def _create(db: sqlite3.Connection, version: int) -> None:
        db.execute("BEGIN IMMEDIATE")
        try:
            if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA:  # another run may have just made it
                db.execute("DROP TABLE IF EXISTS stats")
                db.execute(
                    "CREATE TABLE stats (dev INTEGER NOT NULL, ino INTEGER NOT NULL, context TEXT NOT NULL,"
                    " size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, used INTEGER NOT NULL,"
                    " digest BLOB NOT NULL, entry BLOB NOT NULL, PRIMARY KEY (dev, ino, context)) WITHOUT ROWID"
                )
                db.execute(f"PRAGMA user_version = {SCHEMA}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _set_aside(self) -> bool:
        """A cache file that is not a readable cache of ours (damaged, foreign): moved out of the way,
        with its journal, so that a new one is built. False when it cannot be moved."""
        if not self.path.exists():
            return False
        try:
            aside = self.path.with_name(f"{self.path.name}.damaged")
            os.replace(self.path, aside)
            for suffix in ("-wal", "-shm"):
                try:
                    os.unlink(f"{self.path}{suffix}")
                except FileNotFoundError:
                    pass
            return True
        except OSError:
            return False

    def get(self, key: FileKey) -> Any:
        """The cached result for the file as ``key`` says it is now, or None."""
        db = self._db
        if db is None:
            return None
        dev, ino, size, mtime_ns = key
        try:
            row = db.execute(
                "SELECT size, mtime_ns, digest, entry FROM stats WHERE dev = ? AND ino = ? AND context = ?",
                (dev, ino, self.context),
            ).fetchone()
        except sqlite3.Error:
            return None
        if row is None or row[0] != size or row[1] != mtime_ns:
            return None
        entry = row[3]
        if not isinstance(entry, bytes) or hashlib.blake2b(entry, digest_size=16).digest() != row[2]:
            return None
        try:
            result = self._load(entry)
        except Exception:
            return None
        if result is not None:
            self.hits += 1
        return result

    def put(self, key: FileKey, result: Any) -> None:
        """Keep ``result`` for the file as ``key`` said it was before it was read (written at :meth:`close`)."""
        if self._db is None:
            return
        try:
            self._pending.append((key, self._dump(result)))
        except Exception:  # a result the cache cannot keep is read again next time
            pass

    @staticmethod
    def _load(entry: bytes) -> LogStats | None:
        if entry[:1] == _TYPED:
            typed = _entry_decoder(memoryview(entry)[1:])
            samples = _RecordsUnpickler(io.BytesIO(typed.samples)).load()
            if type(samples) is not StatsSamples:
                return None
            return LogStats(session=typed.session, turns=typed.turns, steps=typed.steps, samples=samples, skipped=False)
        result = _RecordsUnpickler(io.BytesIO(entry)).load()
        if type(result) is not LogStats or result.skipped or result.samples is None:
            return None
        return result

    @staticmethod
    def _dump(result: LogStats) -> bytes:
        """The records as typed MessagePack (decoded many times faster than their pickle), the samples
        pickled; the whole result pickled instead when the typed form would not give back the same
        records to the byte (a number msgspec would read back as another type)."""
        samples = pickle.dumps(result.samples, protocol=pickle.HIGHEST_PROTOCOL)
        entry = _TYPED + msgspec.msgpack.encode(_Entry(result.session, result.turns, result.steps, samples))
        try:
            back = _entry_decoder(memoryview(entry)[1:])
        except msgspec.ValidationError:
            back = None
        encode = msgspec.json.encode
        if back is None or encode([back.session, back.turns, back.steps]) != encode([result.session, result.turns, result.steps]):
            return pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL)
        return entry

    def close(self) -> None:
        db, self._db = self._db, None
        if db is None:
            return
        try:
            now = int(time.time())
            if self._pending:
                db.execute("BEGIN IMMEDIATE")
                db.executemany(
                    "INSERT OR REPLACE INTO stats (dev, ino, context, size, mtime_ns, used, digest, entry)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    [
                        (dev, ino, self.context, size, mtime_ns, now, hashlib.blake2b(entry, digest_size=16).digest(), entry)
                        for (dev, ino, size, mtime_ns), entry in self._pending
                    ],
                )
                db.execute("DELETE FROM stats WHERE used < ?", (now - PRUNE_AFTER_S,))
                db.execute("COMMIT")
        except sqlite3.Error:
            try:
                db.execute("ROLLBACK")
            except sqlite3.Error:
                pass
        finally:
            self._pending = []
            db.close()


LISTED = ("id", "cwd", "createdAt", "created", "turns", "durationMs", "generation", "compression", "title")
"""What ``dshctl ls`` reads from a log (its size, time and path come from the file and the run)."""


class ListingCache(StatsCache):
    """``dshctl ls`` rows in the same file: what the listing read from each log, as JSON."""

    @staticmethod
    def _load(entry: bytes) -> dict | None:
        row = msgspec.json.decode(entry)
        if not isinstance(row, dict) or tuple(row) != LISTED:
            return None
        return row

    @staticmethod
    def _dump(row: dict) -> bytes:
        return msgspec.json.encode({name: row[name] for name in LISTED})


def open_listing_cache(no_cache: bool) -> ListingCache | None:
    """The cache of ``dshctl ls`` rows, or None (``--no-cache``, or it cannot be opened)."""
    if no_cache:
        return None
    from ..source import max_line_bytes_from_env

    try:
        context = hashlib.blake2b(
            f"listing\nschema={SCHEMA}\ncode={_code_signature()}\nmax_line_bytes={max_line_bytes_from_env()}".encode(),
            digest_size=16,
        ).hexdigest()
        cache = ListingCache(cache_path(), context)
    except Exception:
        return None
    return cache if cache.enabled else None


def open_stats_cache(options: Any, prices: Any) -> StatsCache | None:
    """The cache for this run, or None when it is off (``--no-cache``) or cannot be opened."""
    if options.no_cache:
        return None
    try:
        cache = StatsCache(cache_path(), run_context(options, prices))
    except Exception:  # the cache is an optimisation: never a reason to fail
        return None
    return cache if cache.enabled else None


def _looked_up(cache: Any, keys: list, refs: list) -> tuple[dict[int, Any], list]:
    """The cache's entries for ``refs`` (by index; ``keys`` their file keys, None where uncachable), and
    the refs it holds none for, which are to be read."""
    cached = {}
    for index, key in enumerate(keys):
        if key is not None:
            found = cache.get(key)
            if found is not None:
                cached[index] = found
    return cached, [ref for index, ref in enumerate(refs) if index not in cached]


def cached_map(
    cache: StatsCache,
    func: Callable[[Any], Any],
    refs: list,
    mapper: Callable[..., Iterator[tuple[Any, Any]]],
    holds: Callable[[int | None], bool],
    **settings: Any,
) -> Iterator[tuple[Any, Any]]:
    """``mapper(func, refs, **settings)`` (:func:`dshctl.many.map_logs`) over the logs the cache does not
    hold, the cached results for the others, all in the order of ``refs``; each log read is kept for the
    next run when its file did not change while it was read. ``holds(createdAt)``: whether the run's
    ``--since`` / ``--until`` window holds a session (a cached one outside it is skipped, as
    :func:`~dshctl.stats.log_stats` skips it after reading its header)."""
    keys = [file_key(ref) for ref in refs]
    cached, to_read = _looked_up(cache, keys, refs)
    with closing(mapper(func, to_read, **settings)) as read:  # reads nothing until asked for a first result
        for index, ref in enumerate(refs):
            found = cached.get(index)
            if found is not None:
                yield ref, _as_named(found, ref.display) if holds(found.session.created_at) else _skipped(found, ref.display)
                continue
            ref_read, result = next(read)
            key = keys[index]
            if key is not None and type(result) is LogStats and not result.skipped and result.samples is not None:
                if file_key(ref) == key:
                    cache.put(key, result)
            yield ref_read, result


def _skipped(result: LogStats, display: str) -> LogStats:
    """What :func:`~dshctl.stats.log_stats` returns for a log outside the window: its identity only."""
    from .records import SessionIdentity

    session = result.session
    identity = SessionIdentity(**{name: getattr(session, name) for name in SessionIdentity.__struct_fields__})
    identity.path = display
    return LogStats(session=identity, turns=None, steps=None, samples=None, skipped=True)


def _as_named(result: LogStats, display: str) -> LogStats:
    """A cached result with the log named as this run names it (a root given as a relative path, say)."""
    session = result.session
    if session.path != display:
        session.path = display
        for rows in (result.turns, result.steps):
            for row in rows or ():
                row.path = display
    return result


def cached_rows(
    cache: ListingCache, row_of: Callable[[Any], dict], refs: list, mapper: Callable[..., Iterator[tuple[Any, Any]]], **settings: Any
) -> Iterator[dict]:
    """``dshctl ls`` rows: ``mapper(row_of, refs, **settings)`` over the logs the cache does not hold, the
    cached reading of the others completed with the file's size and time and the run's path, in order."""
    statuses = [file_status(ref) for ref in refs]
    keys = [file_key(ref, status) for ref, status in zip(refs, statuses)]
    cached, to_read = _looked_up(cache, keys, refs)
    with closing(mapper(row_of, to_read, **settings)) as read:  # reads nothing until asked for a first row
        for index, ref in enumerate(refs):
            found = cached.get(index)
            if found is not None:
                status = statuses[index]
                assert status is not None
                row = {name: found[name] for name in LISTED[:8]}
                row["bytes"] = status.st_size
                row["modifiedAt"] = int(status.st_mtime * 1000)
                row["title"] = found["title"]
                row["path"] = ref.display
                row["error"] = None
                yield row
                continue
            _, row = next(read)
            key = keys[index]
            if key is not None and isinstance(row, dict) and row.get("error") is None and file_key(ref) == key:
                cache.put(key, row)
            yield row
