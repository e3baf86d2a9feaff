"""A dataset's own record of what it holds: ``DIR/_dshctl_dataset.json``.

The manifest names every log exported into the dataset (by its absolute path, with the size and
modification time it had when read), the part it went into, and every part's files. It is what makes
a directory a dshctl dataset: ``dshctl export`` refuses to write into an existing directory that has
other files and no manifest, and re-reads only the logs whose size or modification time changed.

Files under the table directories that the manifest does not name are leftovers of an interrupted
export (parts written before the manifest was replaced, or parts the new manifest no longer names) and
are removed at the start of the next export. The manifest is replaced atomically (written beside, then
renamed); readers that glob ``*.parquet`` see either the old parts or the new ones, plus, for the
moment between the rename and the removal, old parts a rewrite replaced.
"""

from __future__ import annotations

import os
from pathlib import Path

import msgspec

from ..errors import OutputError, UsageError

MANIFEST = "_dshctl_dataset.json"
"""Hidden from Spark, Hive and Trino (a leading underscore), never matched by ``*.parquet``."""
LOCK = "_dshctl_dataset.lock"
FORMAT = "dshctl-dataset/1"


class LogEntry(msgspec.Struct, kw_only=True, rename="camel"):
    """One exported log: what it was when read, and where its rows are."""

    size: int
    mtime_ns: int
    session_id: str | None
    session_dir: str | None
    partition: str | None
    part: str
    rows: dict[str, int]


class PartEntry(msgspec.Struct, kw_only=True, rename="camel"):
    """One part: a set of logs of one partition written together, one Parquet file per table that has rows."""

    partition: str | None
    files: dict[str, str]
    """Table → the file, relative to the dataset directory."""


class Manifest(msgspec.Struct, kw_only=True, rename="camel"):
    format: str = FORMAT
    schema: str
    fingerprint: str
    partition_by: str | None
    prices: str
    """A digest of the price table the costs were computed at (a different one re-exports every log)."""
    dshctl: str
    logs: dict[str, LogEntry] = {}
    parts: dict[str, PartEntry] = {}


_decode = msgspec.json.Decoder(Manifest).decode


def read_manifest(directory: Path) -> Manifest | None:
    """The dataset's manifest; None for a new dataset (DIR missing, or an empty directory).
    Anything else that is not a dshctl dataset is refused (status 2): it is never written into."""
    if not directory.exists():
        return None
    if not directory.is_dir():
        raise UsageError(f"{directory}: exists and is not a directory (--out names the dataset directory)")
    path = directory / MANIFEST
    if not path.exists():
        entries = [name for name in os.listdir(directory) if name != LOCK]
        if entries:
            raise UsageError(
                f"{directory}: exists and is not a dshctl dataset (no {MANIFEST}); refusing to write into it "
                "(give a new or empty directory)"
            )
        return None
    try:
        manifest = _decode(path.read_bytes())
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the dataset manifest: {exc.strerror or exc}") from None
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise UsageError(f"{path}: not a dshctl dataset manifest ({exc}); refusing to write into {directory}") from None
    if manifest.format != FORMAT:
        raise UsageError(f"{path}: dataset format {manifest.format!r}, this dshctl writes {FORMAT!r}")
    return manifest


def write_manifest(directory: Path, manifest: Manifest) -> None:
    """Replace the manifest atomically."""
    path = directory / MANIFEST
    temporary = directory / f".{MANIFEST}.{os.getpid()}.tmp"
    try:
        temporary.write_bytes(msgspec.json.format(msgspec.json.encode(manifest), indent=1))
        os.replace(temporary, path)
    except OSError as exc:
        try:
            temporary.unlink()
        except OSError:
            pass
        raise OutputError(f"{path}: cannot write the dataset manifest: {exc.strerror or exc}") from None


class DatasetLock:
    """An exclusive lock on the dataset for one export (a second export into it waits for the first)."""

    def __init__(self, directory: Path):
        self.path = directory / LOCK
        self.handle = None

    def __enter__(self) -> "DatasetLock":
        import fcntl

        try:
            self.handle = open(self.path, "a+b")
        except OSError as exc:
            raise OutputError(f"{self.path}: cannot lock the dataset: {exc.strerror or exc}") from None
        fcntl.flock(self.handle.fileno(), fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc) -> None:
        if self.handle is not None:
            self.handle.close()


def is_dataset(path: Path) -> bool:
    """Whether a directory is a dshctl dataset (``dshctl sql`` reads it as tables instead of as logs)."""
    return (path / MANIFEST).is_file()
