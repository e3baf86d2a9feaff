"""The attachment store: where image objects are read from, and what their headers say.

The bytes of an image live in dsh's attachment store, ``<DSH_HOME>/attachments/v1/objects/<first 2
hex>/<64 hex>`` (FORMAT §5.3), or in a web export as ``media/<attachmentId>.<ext>`` (§1.10). Objects are
opened relative to the store directory, one path component at a time, never following a symlink, and
only by names built from an id that matched :data:`~dshctl.images.scan.ID_PATTERN`.
"""

from __future__ import annotations

import os
import re
import stat
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import UsageError

__all__ = ["MEDIA_EXTENSIONS", "MAX_OBJECT_BYTES", "probe_image", "Store", "detect_store", "default_store"]

MEDIA_EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "image/gif": "gif"}
"""Extension per media type, as dsh's session export names ``media/`` entries."""

MAX_OBJECT_BYTES = 64 * 1024 * 1024
"""Objects larger than this are not read (dsh normalizes images to at most 4 MiB)."""


# --------------------------------------------------------------------------------------------------
# Image headers (dsh's read path re-derives media type and dimensions from the bytes)


def probe_image(data: bytes) -> tuple[str, int, int] | tuple[str, None, None] | None:
    """``(mediaType, width, height)`` from the header of PNG, JPEG, GIF or WebP bytes; dimensions
    ``None`` when the type is recognized but its header is too short; ``None`` for anything else."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        if len(data) >= 24 and data[12:16] == b"IHDR":
            width, height = struct.unpack(">II", data[16:24])
            return "image/png", width, height
        return "image/png", None, None
    if data.startswith(b"GIF87a") or data.startswith(b"GIF89a"):
        if len(data) >= 10:
            width, height = struct.unpack("<HH", data[6:10])
            return "image/gif", width, height
        return "image/gif", None, None
    if len(data) >= 12 and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ("image/webp", *_webp_dimensions(data))
    if data.startswith(b"\xff\xd8\xff"):
        return ("image/jpeg", *_jpeg_dimensions(data))
    return None


def _webp_dimensions(data: bytes) -> tuple[int | None, int | None]:
    chunk = data[12:16]
    if chunk == b"VP8X" and len(data) >= 30:
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    if chunk == b"VP8L" and len(data) >= 25 and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 " and len(data) >= 30 and data[23:26] == b"\x9d\x01\x2a":
        width = int.from_bytes(data[26:28], "little") & 0x3FFF
        height = int.from_bytes(data[28:30], "little") & 0x3FFF
        return width, height
    return None, None


def _jpeg_dimensions(data: bytes) -> tuple[int | None, int | None]:
    i = 2
    size = len(data)
    while i + 4 <= size:
        if data[i] != 0xFF:
            return None, None
        marker = data[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker in (0x01,) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        if marker in (0xD9, 0xDA):  # EOI, SOS: no frame header before the scan
            return None, None
        length = int.from_bytes(data[i + 2 : i + 4], "big")
        if length < 2:
            return None, None
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            if i + 9 > size:
                return None, None
            height = int.from_bytes(data[i + 5 : i + 7], "big")
            width = int.from_bytes(data[i + 7 : i + 9], "big")
            return width, height
        i += 2 + length
    return None, None


# --------------------------------------------------------------------------------------------------
# The store


@dataclass
class Store:
    """Where objects are read from: ``kind`` ``objects`` (``…/attachments/v1/objects``, files
    ``<2 hex>/<64 hex>``), ``media`` (an export's ``media/``, files ``<attachmentId>.<ext>``) or ``zip``
    (an export ZIP's ``media/`` members, read in place)."""

    kind: str
    path: Path
    how: str
    """How the store was chosen: ``--store``, ``export`` (a ``media/`` beside the log), ``DSH_HOME`` or ``default``."""
    _fd: int | None = None
    _opened: bool = False
    missing: str | None = None
    _media: Any = None
    archive: Any = None
    """A ``zip`` store held open rather than named by ``path``: the export ZIP read from standard input."""

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "path": str(self.path), "from": self.how}

    def _root_fd(self) -> int | None:
        if not self._opened:
            self._opened = True
            try:
                self._fd = os.open(self.path, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
            except OSError as exc:
                self.missing = f"attachment store {self.path} cannot be opened: {exc.strerror or exc}"
                self._fd = None
        return self._fd

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def read(self, digest: str, media_type: Any) -> tuple[str, bytes | None, str | None]:
        """``(status, bytes, error)`` with status ``ok``, ``missing``, ``unsafe`` or ``mismatch``.

        ``digest`` has been checked against :data:`~dshctl.images.scan.ID_PATTERN`; every name opened is
        built from it."""
        if self.kind == "zip":
            return self._read_member(digest, media_type)
        root = self._root_fd()
        if root is None:
            return "missing", None, "attachment store not found"
        if self.kind == "objects":
            return _read_object(root, self.path, [digest[:2], digest], f"{digest[:2]}/{digest}")
        ext = MEDIA_EXTENSIONS.get(media_type) if isinstance(media_type, str) else None
        exts = [ext] if ext is not None else sorted(set(MEDIA_EXTENSIONS.values()))
        names = [f"{prefix}{digest}.{e}" for e in exts for prefix in ("sha256:", "sha256_")]
        for name in names:
            status, data, error = _read_object(root, self.path, [name], name)
            if status != "missing":
                return status, data, error
        return "missing", None, f"{names[0]} not in store"


    def _read_member(self, digest: str, media_type: Any) -> tuple[str, bytes | None, str | None]:
        from ..source.zipped import ZipMedia

        if self._media is None:
            self._media = ZipMedia(self.archive or self.path)  # a hostile archive is refused here, status 2
        ext = MEDIA_EXTENSIONS.get(media_type) if isinstance(media_type, str) else None
        exts = [ext] if ext is not None else sorted(set(MEDIA_EXTENSIONS.values()))
        names = [f"media/{prefix}{digest}.{e}" for e in exts for prefix in ("sha256:", "sha256_")]
        for name in names:
            status, data = self._media.read(name, MAX_OBJECT_BYTES)
            if status == "ok":
                return "ok", data, None
            if status == "large":
                return "mismatch", None, f"{name}: object larger than dshctl reads ({MAX_OBJECT_BYTES} bytes)"
        return "missing", None, f"{names[0]} not in the ZIP"


    def objects(self) -> list[tuple[str, str | None, str]]:
        """Every entry of the store named as an object is: ``(hex digest, media type its name says or
        None, the name shown)``, sorted by digest; other entries are passed over."""
        found: list[tuple[str, str | None, str]] = []
        by_ext = {ext: kind for kind, ext in MEDIA_EXTENSIONS.items()}
        if self.kind == "zip":
            from ..source.zipped import ZipMedia

            if self._media is None:
                self._media = ZipMedia(self.archive or self.path)
            names = [name.removeprefix("media/") for name in self._media.names()]
        elif self.kind == "media":
            names = _entry_names(self.path, dirs=False)
        else:
            names = [f"{sub}/{name}" for sub in _entry_names(self.path, dirs=True) if _TWO_HEX.fullmatch(sub)
                     for name in _entry_names(self.path / sub, dirs=False)]
        for name in names:
            if self.kind == "objects":
                sub, _, digest = name.partition("/")
                if re.fullmatch(r"[0-9a-f]{64}", digest) and digest.startswith(sub):
                    found.append((digest, None, name))
            elif _MEDIA_NAME.fullmatch(name):
                stem, _, ext = name.rpartition(".")
                found.append((stem[7:], by_ext.get(ext.lower(), "image/jpeg" if ext.lower() == "jpeg" else None), name))
        return sorted(found)


def _entry_names(path: Path, *, dirs: bool) -> list[str]:
    """The names of the directories (or the other entries) of ``path``, symlinks not followed."""
    names = []
    try:
        with os.scandir(path) as entries:
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False) == dirs:
                        names.append(entry.name)
                except OSError:
                    continue
    except OSError:
        return []
    return sorted(names)


_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIR_FD = os.open in os.supports_dir_fd and bool(_O_NOFOLLOW)


def _is_symlink(name: str, dir_fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.lstat(name, dir_fd=dir_fd).st_mode)
    except OSError:
        return False


def _read_object(root_fd: int, root: Path, parts: list[str], shown: str) -> tuple[str, bytes | None, str | None]:
    """Open ``parts`` below the store directory component by component, never following a symlink."""
    if not _DIR_FD:  # platforms without openat/O_NOFOLLOW
        return _read_object_by_path(root, parts, shown)
    opened: list[int] = []
    try:
        current = root_fd
        for depth, part in enumerate(parts):
            last = depth == len(parts) - 1
            flags = os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC | (_O_NONBLOCK if last else _O_DIRECTORY)
            try:
                fd = os.open(part, flags, dir_fd=current)
            except FileNotFoundError:
                return "missing", None, f"{shown} not in store"
            except OSError as exc:
                if _is_symlink(part, current):
                    return "unsafe", None, f"{shown}: a symlink in the store; not followed"
                if not last and isinstance(exc, NotADirectoryError):
                    return "missing", None, f"{shown} not in store ({part} is not a directory)"
                return "missing", None, f"{shown}: cannot open: {exc.strerror or exc}"
            opened.append(fd)
            current = fd
        info = os.fstat(current)
        if not stat.S_ISREG(info.st_mode):
            return "unsafe", None, f"{shown}: not a regular file"
        if info.st_size > MAX_OBJECT_BYTES:
            return "mismatch", None, f"{shown}: object has {info.st_size} bytes, more than dshctl reads"
        data = _read_all(current)
        if data is None:
            return "mismatch", None, f"{shown}: object grew past {MAX_OBJECT_BYTES} bytes while read"
        return "ok", data, None
    finally:
        for fd in opened:
            os.close(fd)


def _read_all(fd: int) -> bytes | None:
    chunks: list[bytes] = []
    total = 0
    while True:
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > MAX_OBJECT_BYTES:
            return None
        chunks.append(chunk)


def _read_object_by_path(store: Path, parts: list[str], shown: str) -> tuple[str, bytes | None, str | None]:
    """Fallback where ``openat``/``O_NOFOLLOW`` are missing: refuse any symlink, check the real path."""
    root = os.path.realpath(store)
    path = os.path.join(root, *parts)
    for i in range(1, len(parts) + 1):
        if os.path.islink(os.path.join(root, *parts[:i])):
            return "unsafe", None, f"{shown}: a symlink in the store; not followed"
    if os.path.commonpath([root, os.path.realpath(path)]) != root:
        return "unsafe", None, f"{shown}: resolves outside the store"
    if os.path.lexists(path) and not os.path.isfile(path):
        return "unsafe", None, f"{shown}: not a regular file"
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_OBJECT_BYTES + 1)
    except (FileNotFoundError, NotADirectoryError):
        return "missing", None, f"{shown} not in store"
    if len(data) > MAX_OBJECT_BYTES:
        return "mismatch", None, f"{shown}: object larger than dshctl reads"
    return "ok", data, None


_MEDIA_NAME = re.compile(r"sha256[:_][0-9a-f]{64}\.[A-Za-z0-9]+")
_TWO_HEX = re.compile(r"[0-9a-f]{2}")


def _looks_like(path: Path, pattern: re.Pattern, *, dirs: bool) -> bool:
    try:
        with os.scandir(path) as entries:
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False) == dirs and pattern.fullmatch(entry.name):
                        return True
                except OSError:
                    continue
    except OSError:
        return False
    return False


def detect_store(path: Path, *, how: str) -> Store:
    """The store a ``--store DIR`` names: a DSH home, its ``attachments`` or ``attachments/v1`` or
    ``…/v1/objects`` directory, an unzipped export, or an export's ``media`` directory. A directory laid
    out as a store but holding other things and no object (a git ``objects`` directory) holds none: a
    usage error, as is anything else; an empty store is a store (of 0 objects)."""
    store = _detected(path, how)
    foreign = _holds_no_store(store)
    if foreign is not None:
        raise UsageError(f"--store {path}: holds no attachment store: {foreign}")
    return store


def _detected(path: Path, how: str) -> Store:
    from ..source.zipped import is_zip

    if path.is_file() and is_zip(path):
        return Store("zip", path, how)
    if not path.is_dir():
        raise UsageError(f"--store {path}: not a directory or an export ZIP")
    for sub in ("v1/objects", "objects", "attachments/v1/objects"):
        if (path / sub).is_dir():
            return Store("objects", path / sub, how)
    if (path / "media").is_dir():
        return Store("media", path / "media", how)
    if path.name == "media" or _looks_like(path, _MEDIA_NAME, dirs=False):
        return Store("media", path, how)
    if path.name == "objects" or _looks_like(path, _TWO_HEX, dirs=True):
        return Store("objects", path, how)
    raise UsageError(
        f"--store {path}: not an attachment store (expected a DSH home, its attachments/ dir, "
        "attachments/v1, attachments/v1/objects, an unzipped session export or its media/ dir)"
    )


def _holds_no_store(store: Store) -> str | None:
    """Why ``store`` is no store (None when it is one): it holds no object, and holds other things
    besides (hidden entries and empty ``<2 hex>`` directories are passed over). Stops at the first object."""
    if store.kind == "zip":
        from ..source.zipped import ZipMedia

        store._media = media = ZipMedia(store.path)  # a hostile archive is refused here, status 2
        if media.is_export() or any(_MEDIA_NAME.fullmatch(name.removeprefix("media/")) for name in media.names()):
            return None
        return "a ZIP with neither session.jsonl nor images under media/, so not a dsh session export"
    others = 0
    if store.kind == "media":
        for name in _entry_names(store.path, dirs=False) + _entry_names(store.path, dirs=True):
            if _MEDIA_NAME.fullmatch(name):
                return None
            others += not name.startswith(".")
        what = "an export image (sha256:<64 hex>.<ext>)"
    else:
        for name in _entry_names(store.path, dirs=True):
            if not _TWO_HEX.fullmatch(name):
                others += not name.startswith(".")
                continue
            for entry in _entry_names(store.path / name, dirs=False) + _entry_names(store.path / name, dirs=True):
                if entry.startswith(name) and re.fullmatch(r"[0-9a-f]{64}", entry):
                    return None
                others += not entry.startswith(".")
        others += sum(not name.startswith(".") for name in _entry_names(store.path, dirs=False))
        what = "an object (<2 hex>/<64 hex>)"
    if not others:
        return None  # an empty store
    return f"{others} entr{'y' if others == 1 else 'ies'} in {store.path}, none of them {what}"


def default_store(log_path: Path | None, archive: Any = None) -> Store:
    """The export's ``media/`` when the log sits in an export (unzipped, a ZIP, or ``archive``: the export ZIP
    read from standard input), else ``$DSH_HOME/attachments`` (a blank ``DSH_HOME`` is unset), else
    ``~/.dsh/attachments``."""
    if archive is not None:
        return Store("zip", Path(archive.display), "export", archive=archive)
    if log_path is not None:
        from ..source.zipped import is_zip

        if log_path.is_file() and is_zip(log_path):
            return Store("zip", log_path, "export")
        folder = log_path.parent if not log_path.is_dir() else log_path
        for candidate in (folder, folder.parent.parent if folder.parent.name == "subagents" else None):
            if candidate is not None and (candidate / "media").is_dir():
                return Store("media", candidate / "media", "export")
    from ..source import sessions_root

    home = sessions_root().parent
    env = os.environ.get("DSH_HOME")
    how = "DSH_HOME" if env is not None and env.strip() else "default"
    return Store("objects", home / "attachments" / "v1" / "objects", how)


