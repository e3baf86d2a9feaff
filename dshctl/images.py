"""``dshctl images``: list the image references of a session; extract and verify them from the store.

dsh never writes image bytes into a log. An ``image`` content block carries an ``ImageAttachmentRef``
(FORMAT §5.2: ``attachmentId`` = ``sha256:`` + hex digest of the normalized bytes, ``mediaType``,
``bytes``, ``width``, ``height``, ``name?``, ``originalDimensions?``); the bytes live in the attachment
store, ``<DSH_HOME>/attachments/v1/objects/<first 2 hex>/<64 hex>`` (§5.3), or in a web export as
``media/<attachmentId>.<ext>`` (§1.10).

Where references are looked for (every event, in log order):

* ``data.content``, ``data.message.content`` and ``data.inserted[].content`` — dsh's own reachability
  rule (§5.4), which covers ``user/message``, ``system/message``, ``developer/message``,
  ``assistant/message`` content, ``tool/result`` in both shapes (v0–v3 wrapper, v4 direct content,
  §2.10.2), ``agent/inbox/spliced`` and ``tool/code-dispatch`` / ``tool/ptc-dispatch``;
* ``compaction/summary.summary`` and ``session/title-llm-request.messages[].content`` (beyond dsh's rule);
* the ``block-end`` chunks of every ``assistant/message`` / ``assistant/attempt`` stream, read with
  :func:`dshctl.stream.raw_chunks` — runs are never expanded (block-end chunks are never packed, §4.3).

Inside a content array the walk is depth-first, pre-order, and descends into any block that has a
``content`` array (``tool-result`` and unknown/``plugin:`` kinds). ``n`` is the 0-based occurrence index
of an image block within its event, in that order, so for a user message or tool result it equals the
depth-first image index that ``image/offload`` targets use (§2.10.8).

Nothing read from a log is executed, fetched, or used as a path: an id must match
``sha256:[0-9a-f]{64}`` before it touches the filesystem, display names are reduced to a safe base name,
store objects are opened relative to the store directory without following symlinks, and output files
are created relative to the output directory with ``O_CREAT|O_EXCL|O_NOFOLLOW`` (``--force``: a private
temporary file renamed over the target, which replaces a symlink instead of following it).
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import stat
import string
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from .errors import EXIT_FINDINGS, EXIT_OK, SourceError, UsageError
from .textsafe import visible_line

ID_PATTERN = re.compile(r"sha256:([0-9a-f]{64})")
"""dsh's local-store id pattern (``packages/attachment/attachment-local/src/store.ts``); use fullmatch."""

MEDIA_EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/webp": "webp", "image/gif": "gif"}
"""Extension per media type, as dsh's session export names ``media/`` entries."""

MAX_OBJECT_BYTES = 64 * 1024 * 1024
"""Objects larger than this are not read (dsh normalizes images to at most 4 MiB)."""

MAX_NESTING = 64
"""Deepest nested ``content`` array followed inside one carrier."""

NAME_LIMIT = 100
"""Longest ``{name}`` in bytes (UTF-8) after sanitizing."""

STATUSES = ("written", "exists", "duplicate", "missing", "mismatch", "invalid-id", "unsafe")
FAILED = frozenset({"exists", "missing", "mismatch", "invalid-id", "unsafe"})

_SETTLEMENT_WHERE = {"assistant/message": "assistant-stream", "assistant/attempt": "attempt-stream"}
_CONTENT_WHERE = {
    "user/message": "user",
    "tool/result": "tool-result",
    "system/message": "system",
    "developer/message": "developer",
    "assistant/message": "assistant-content",
    "assistant/attempt": "attempt-content",
    "tool/code-dispatch": "code-dispatch",
    "tool/ptc-dispatch": "code-dispatch",
}
_OFFLOAD_TARGETS = frozenset({"user/message", "tool/result"})


# --------------------------------------------------------------------------------------------------
# Finding references


@dataclass
class ImageRef:
    """One occurrence of an image reference in a log."""

    seq: int
    line: int
    type: str
    turn: int | None
    step: int | None
    where: str
    at: str
    """Location inside the event's ``data``: ``content[1]``, ``message.content[0].content[2]``,
    ``inserted[0].content[1]``, ``stream.block-end[3].block`` (the 4th block-end chunk) …"""
    n: int
    attachment: dict
    offload_index: int | None = None
    offloaded: bool = False
    offloaded_by: int | None = None
    status: str | None = None
    path: str | None = None
    error: str | None = None

    def field(self, key: str) -> Any:
        return self.attachment.get(key)

    @property
    def attachment_id(self) -> Any:
        return self.attachment.get("attachmentId")

    @property
    def hex_digest(self) -> str | None:
        value = self.attachment.get("attachmentId")
        if isinstance(value, str):
            match = ID_PATTERN.fullmatch(value)
            if match is not None:
                return match.group(1)
        return None

    def to_json(self, *, extraction: bool) -> dict[str, Any]:
        a = self.attachment
        name = a.get("name")
        row: dict[str, Any] = {
            "seq": self.seq,
            "line": self.line,
            "type": self.type,
            "turn": self.turn,
            "step": self.step,
            "where": self.where,
            "at": self.at,
            "n": self.n,
            "attachmentId": a.get("attachmentId"),
            "mediaType": a.get("mediaType"),
            "bytes": a.get("bytes"),
            "width": a.get("width"),
            "height": a.get("height"),
            "name": name,
            "originalDimensions": a.get("originalDimensions"),
            "offloaded": self.offloaded,
            "offloadedBy": self.offloaded_by,
        }
        if extraction:
            row["status"] = self.status
            row["path"] = self.path
            row["error"] = self.error
        return row


@dataclass
class Offload:
    seq: int
    targets: list[dict[str, Any]]


@dataclass
class Scan:
    refs: list[ImageRef] = field(default_factory=list)
    offloads: list[Offload] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _walk(content: Any, at: str, *, countable: bool) -> Iterator[tuple[str, dict, bool]]:
    """Image blocks of a content array, depth-first pre-order: ``(at, block, dsh-countable)``.

    ``dsh-countable`` is true while the path descends only through ``tool-result`` blocks — the images
    dsh's ``image/offload`` indexes count (``project-message.ts`` visits image and tool-result blocks).
    """
    if not isinstance(content, list):
        return
    stack: list[tuple[Iterator[tuple[int, Any]], str, bool]] = [(iter(enumerate(content)), at, countable)]
    while stack:
        items, base, counted = stack[-1]
        for i, block in items:
            if not isinstance(block, dict):
                continue
            here = f"{base}[{i}]"
            kind = block.get("type")
            if kind == "image":
                yield here, block, counted
                continue
            inner = block.get("content")
            if isinstance(inner, list) and len(stack) < MAX_NESTING:
                stack.append((iter(enumerate(inner)), here + ".content", counted and kind == "tool-result"))
                break
        else:
            stack.pop()


def _carriers(event) -> Iterator[tuple[str, str, Any, bool]]:
    """``(where, at, content array, offload-indexed)`` for every content position of one event."""
    data = event.data
    if not isinstance(data, dict):
        return
    kind = event.type
    where = _CONTENT_WHERE.get(kind, "other")
    targetable = kind in _OFFLOAD_TARGETS
    if "content" in data:
        yield where, "content", data["content"], targetable and kind == "user/message"
    message = data.get("message")
    if isinstance(message, dict) and "content" in message:
        yield where, "message.content", message["content"], targetable and kind == "tool/result"
    inserted = data.get("inserted")
    if isinstance(inserted, list):
        for i, item in enumerate(inserted):
            if isinstance(item, dict):
                yield "inbox", f"inserted[{i}].content", item.get("content"), False
    if kind == "compaction/summary":
        yield "compaction-summary", "summary", data.get("summary"), False
    elif kind == "session/title-llm-request":
        messages = data.get("messages")
        if isinstance(messages, list):
            for i, item in enumerate(messages):
                if isinstance(item, dict):
                    yield "title-request", f"messages[{i}].content", item.get("content"), False


def _block_ends(event) -> Iterator[dict]:
    """The ``block-end`` chunks of a settlement's stream, never expanding a run."""
    from .stream import raw_chunks

    if event.stream is not None:
        yield from raw_chunks(event.stream, "block-end")
        return
    # A stream that did not decode into typed records stays as written in data["stream"] (the reader
    # notes it); its raw records can still be read one by one, runs untouched.
    data = event.data
    raw = data.get("stream") if isinstance(data, dict) else None
    if isinstance(raw, list):
        for record in raw:
            if isinstance(record, dict) and record.get("type") == "chunk":
                chunk = record.get("chunk")
                if isinstance(chunk, dict) and chunk.get("type") == "block-end":
                    yield chunk


def scan_log(log) -> Scan:
    """Every image reference of one opened log, in log order, with ``image/offload`` marks applied."""
    scan = Scan()
    turn: int | None = None
    step: int | None = None
    by_target: dict[int, tuple[str, list[ImageRef], int]] = {}
    for event in log.events():
        kind = event.type
        if kind == "turn/start":
            turn, step = event.turn, None
        elif kind == "step/start":
            turn, step = event.turn if event.turn is not None else turn, event.step
        ev_turn = event.turn if event.turn is not None else turn
        ev_step = event.step if event.step is not None else step
        n = 0
        offload_count = 0
        refs_here: list[ImageRef] = []

        def add(where: str, at: str, block: dict, offload_index: int | None) -> None:
            nonlocal n
            attachment = block.get("attachment")
            if not isinstance(attachment, dict):
                scan.problems.append(f"seq {event.seq}: image block without an attachment object at {at}")
            else:
                ref = ImageRef(
                    seq=event.seq,
                    line=event.line,
                    type=kind,
                    turn=ev_turn,
                    step=ev_step,
                    where=where,
                    at=at,
                    n=n,
                    attachment=attachment,
                    offload_index=offload_index,
                    offloaded=block.get("offloaded") is True,
                )
                refs_here.append(ref)
            n += 1

        for where, base, content, indexed in _carriers(event):
            for at, block, countable in _walk(content, base, countable=indexed):
                index = None
                if indexed and countable:
                    index = offload_count
                    offload_count += 1
                add(where, at, block, index)
        if kind in _SETTLEMENT_WHERE:
            where = _SETTLEMENT_WHERE[kind]
            for k, chunk in enumerate(_block_ends(event)):
                for at, block, _ in _walk([chunk.get("block")], f"stream.block-end[{k}].block", countable=False):
                    add(where, at.replace(".block[0]", ".block", 1), block, None)
        if kind in _OFFLOAD_TARGETS:
            by_target[event.seq] = (kind, refs_here, offload_count)
        elif kind == "image/offload":
            _apply_offload(event, by_target, scan)
        scan.refs.extend(refs_here)
        if kind == "turn/end":
            turn = step = None
    return scan


def _apply_offload(event, by_target: dict, scan: Scan) -> None:
    data = event.data if isinstance(event.data, dict) else {}
    targets = data.get("targets")
    if not isinstance(targets, list):
        scan.problems.append(f"seq {event.seq}: image/offload without a targets list")
        return
    scan.offloads.append(Offload(seq=event.seq, targets=targets))
    for target in targets:
        seq = target.get("seq") if isinstance(target, dict) else None
        indexes = target.get("imageIndexes") if isinstance(target, dict) else None
        if not isinstance(seq, int) or not isinstance(indexes, list):
            scan.problems.append(f"seq {event.seq}: image/offload target is not {{seq, imageIndexes}}")
            continue
        entry = by_target.get(seq)
        if entry is None:
            scan.problems.append(f"seq {event.seq}: image/offload names seq {seq}, not an earlier user message or tool result")
            continue
        _, refs, count = entry
        by_index = {ref.offload_index: ref for ref in refs if ref.offload_index is not None}
        for index in indexes:
            if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < count:
                scan.problems.append(f"seq {event.seq}: image/offload names image {index!r} of seq {seq}, which has {count}")
                continue
            ref = by_index.get(index)
            if ref is not None:  # None: an image block without an attachment object
                ref.offloaded = True
                ref.offloaded_by = event.seq


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
        return ("image/webp", *_webp_size(data))
    if data.startswith(b"\xff\xd8\xff"):
        return ("image/jpeg", *_jpeg_size(data))
    return None


def _webp_size(data: bytes) -> tuple[int | None, int | None]:
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


def _jpeg_size(data: bytes) -> tuple[int | None, int | None]:
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
    ``<2 hex>/<64 hex>``) or ``media`` (an export's ``media/``, files ``<attachmentId>.<ext>``)."""

    kind: str
    path: Path
    how: str
    """How the store was chosen: ``--store``, ``export`` (a ``media/`` beside the log), ``DSH_HOME`` or ``default``."""
    _fd: int | None = None
    _opened: bool = False
    missing: str | None = None

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

        ``digest`` has been checked against :data:`ID_PATTERN`; every name opened is built from it."""
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
    ``…/v1/objects`` directory, an unzipped export, or an export's ``media`` directory."""
    if not path.is_dir():
        raise UsageError(f"--store {path}: not a directory")
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


def default_store(log_path: Path | None) -> Store:
    """The export's ``media/`` when the log sits in an unzipped export, else ``$DSH_HOME/attachments``
    (a blank ``DSH_HOME`` is unset), else ``~/.dsh/attachments``."""
    if log_path is not None:
        folder = log_path.parent if not log_path.is_dir() else log_path
        for candidate in (folder, folder.parent.parent if folder.parent.name == "subagents" else None):
            if candidate is not None and (candidate / "media").is_dir():
                return Store("media", candidate / "media", "export")
    from .source import sessions_root

    home = sessions_root().parent
    env = os.environ.get("DSH_HOME")
    how = "DSH_HOME" if env is not None and env.strip() else "default"
    return Store("objects", home / "attachments" / "v1" / "objects", how)


# --------------------------------------------------------------------------------------------------
# Output names

_TEMPLATE_FIELDS = {"seq": int, "n": int, "turn": int, "step": int, "ext": str, "hash": str, "name": str}
_INT_SPEC = re.compile(r"0?[1-9]?[0-9]?d?")
_UNSAFE_NAME_CHARS = re.compile(r"[^\w .+()-]")
DEFAULT_TEMPLATE = "{seq}-{n}.{ext}"


def safe_base_name(value: Any, limit: int = NAME_LIMIT) -> str | None:
    """A display name reduced to a harmless file name component, or ``None`` if nothing is left.

    Directories (``/`` and ``\\``) are stripped as dsh does, control and format characters dropped,
    anything but letters, digits, space and ``._-+()`` replaced by ``_``, leading dots and dashes
    removed (no ``..``, no hidden files, no option-like names), and the result cut to ``limit`` bytes."""
    if not isinstance(value, str):
        return None
    leaf = value[max(value.rfind("/"), value.rfind("\\")) + 1 :]
    leaf = "".join(ch for ch in leaf if ch.isprintable() or ch == " ")
    leaf = _UNSAFE_NAME_CHARS.sub("_", leaf).strip().lstrip(".-").strip()
    encoded = leaf.encode("utf-8")
    if len(encoded) > limit:
        leaf = encoded[:limit].decode("utf-8", "ignore").rstrip()
    return leaf or None


class NameTemplate:
    """A validated ``--name-template``: only the known fields, no conversions, small int widths, and
    no path separator or NUL in its literal text."""

    def __init__(self, template: str) -> None:
        if not template or len(template) > 200:
            raise UsageError("--name-template must be 1 to 200 characters")
        try:
            parsed = list(string.Formatter().parse(template))
        except ValueError as exc:
            raise UsageError(f"--name-template: {exc}") from None
        fields = []
        for literal, name, spec, conversion in parsed:
            if any(ch in literal for ch in "/\\\0"):
                raise UsageError("--name-template must not contain a path separator or NUL")
            if name is None:
                continue
            if name not in _TEMPLATE_FIELDS:
                raise UsageError(
                    f"--name-template: unknown field {{{name}}} (use {', '.join('{' + f + '}' for f in _TEMPLATE_FIELDS)})"
                )
            if conversion:
                raise UsageError("--name-template: conversions (!r, !s, !a) are not allowed")
            if spec and (_TEMPLATE_FIELDS[name] is not int or not _INT_SPEC.fullmatch(spec)):
                raise UsageError(f"--name-template: format {spec!r} not allowed for {{{name}}} (integers take e.g. {{seq:06}})")
            fields.append(name)
        self.template = template
        self.fields = fields

    def render(self, ref: ImageRef, ext: str, digest: str) -> str:
        values: dict[str, Any] = {
            "seq": ref.seq,
            "n": ref.n,
            "turn": ref.turn,
            "step": ref.step,
            "ext": ext,
            "hash": digest,
            "name": safe_base_name(ref.field("name")) or f"{digest[:12]}.{ext}",
        }
        for key in ("turn", "step"):
            if values[key] is None:
                values[key] = "none"
        out = []
        for literal, name, spec, _ in string.Formatter().parse(self.template):
            out.append(literal)
            if name is not None:
                value = values[name]
                out.append(format(value, spec) if isinstance(value, int) and spec else str(value))
        rendered = "".join(out)
        if rendered in ("", ".", "..") or any(ch in rendered for ch in "/\\\0"):
            raise UsageError(f"--name-template gives the unusable file name {rendered!r} for seq {ref.seq}")
        if len(rendered.encode("utf-8")) > 255:
            raise UsageError(f"--name-template gives a file name longer than 255 bytes for seq {ref.seq}")
        return rendered


def extension_for(media_type: Any, data: bytes | None = None) -> str:
    ext = MEDIA_EXTENSIONS.get(media_type) if isinstance(media_type, str) else None
    if ext is None and data is not None:
        probed = probe_image(data)
        if probed is not None:
            ext = MEDIA_EXTENSIONS[probed[0]]
    return ext or "bin"


# --------------------------------------------------------------------------------------------------
# Extraction


def object_problem(digest: str, data: bytes) -> str | None:
    """Why ``data`` is not the object named ``sha256:<digest>``, or ``None``."""
    actual = hashlib.sha256(data).hexdigest()
    if actual != digest:
        return f"SHA-256 of the object is {actual}, not the id's"
    return None


def reference_problem(ref: ImageRef, data: bytes) -> str | None:
    """Why the (hash-verified) ``data`` does not match what ``ref`` says of it, or ``None``: size =
    ``bytes``, and — as dsh's read path checks — media type and dimensions from the image header."""
    declared = ref.field("bytes")
    if not isinstance(declared, int) or isinstance(declared, bool) or declared < 0:
        return f"reference bytes {declared!r} is not a byte count (the object has {len(data)})"
    if len(data) != declared:
        return f"object has {len(data)} bytes, the reference says {declared}"
    probed = probe_image(data)
    media_type = ref.field("mediaType")
    if probed is not None:
        kind, width, height = probed
        if media_type in MEDIA_EXTENSIONS and kind != media_type:
            return f"object is {kind}, the reference says {media_type}"
        if width is not None and (ref.field("width"), ref.field("height")) != (width, height):
            return f"object is {width}x{height}, the reference says {ref.field('width')}x{ref.field('height')}"
    elif media_type in MEDIA_EXTENSIONS:
        return f"object is not a {media_type} image"
    return None


def verify(ref: ImageRef, digest: str, data: bytes) -> str | None:
    """Why ``data`` cannot be extracted for ``ref``: :func:`object_problem`, then :func:`reference_problem`."""
    return object_problem(digest, data) or reference_problem(ref, data)


class Writer:
    """Creates files inside one output directory, by name relative to a directory descriptor."""

    def __init__(self, out: Path, *, force: bool) -> None:
        self.out = out
        self.force = force
        try:
            if not out.exists() and not out.is_symlink():
                if not out.parent.is_dir():
                    raise UsageError(f"--out {out}: parent directory does not exist")
                os.mkdir(out, 0o700)
            self.fd = os.open(out, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
        except UsageError:
            raise
        except OSError as exc:
            raise UsageError(f"--out {out}: {exc.strerror or exc}") from None
        if not stat.S_ISDIR(os.fstat(self.fd).st_mode):
            os.close(self.fd)
            raise UsageError(f"--out {out}: not a directory")

    def close(self) -> None:
        os.close(self.fd)

    def write(self, name: str, data: bytes) -> tuple[str, str | None]:
        """``("written", None)`` or ``("exists", why)``. Other OS errors raise."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC
        if not self.force:
            try:
                fd = os.open(name, flags, 0o600, dir_fd=self.fd)
            except FileExistsError:
                return "exists", f"{name} already exists in {self.out} (--force overwrites)"
            self._fill(fd, name, data)
            return "written", None
        temporary = f".dshctl-{secrets.token_hex(8)}.tmp"
        fd = self._open_new(temporary, flags)
        self._fill(fd, temporary, data)
        try:
            os.replace(temporary, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
        except OSError as exc:
            _unlink(temporary, self.fd)
            return "exists", f"{name} cannot be replaced: {exc.strerror or exc}"
        return "written", None

    def _open_new(self, name: str, flags: int) -> int:
        try:
            return os.open(name, flags, 0o600, dir_fd=self.fd)
        except OSError as exc:
            raise SourceError(f"cannot write in {self.out}: {exc.strerror or exc}") from None

    def _fill(self, fd: int, name: str, data: bytes) -> None:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
        except OSError as exc:
            os.close(fd)
            _unlink(name, self.fd)
            raise SourceError(f"cannot write {self.out / name}: {exc.strerror or exc}") from None
        os.close(fd)


def _unlink(name: str, dir_fd: int) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except OSError:
        pass


def extract(refs: list[ImageRef], *, store: Store, out: Path, template: NameTemplate, force: bool, all_refs: bool) -> None:
    """Fill ``status``/``path``/``error`` of every ref, writing verified objects into ``out``."""
    # Names first, so a template that cannot name every image fails before anything is written.
    names: dict[int, str] = {}
    for i, ref in enumerate(refs):
        digest = ref.hex_digest
        if digest is not None:
            names[i] = template.render(ref, extension_for(ref.field("mediaType")), digest)
    writer = Writer(out, force=force)
    try:
        # digest → the occurrence that settled the object: written (or found existing), or refused for
        # the object itself (missing, unsafe, hash mismatch). A reference refused for what it *says*
        # (size, type, dimensions) settles only references that say the same.
        settled: dict[str, ImageRef] = {}
        refused: dict[tuple, ImageRef] = {}
        used: dict[str, ImageRef] = {}
        for i, ref in enumerate(refs):
            digest = ref.hex_digest
            if digest is None:
                ref.status, ref.error = "invalid-id", _invalid_id_reason(ref.attachment_id)
                continue
            claim = (digest, *(repr(ref.field(k)) for k in ("bytes", "mediaType", "width", "height")))
            earlier = None if all_refs else settled.get(digest) or refused.get(claim)
            if earlier is not None:
                ref.status, ref.path = "duplicate", earlier.path
                if earlier.status != "written":
                    ref.error = f"same image as seq {earlier.seq} #{earlier.n} ({earlier.status})"
                continue
            name = names[i]
            holder = used.get(name)
            if holder is not None:
                if holder.hex_digest == digest:
                    ref.status, ref.path = "duplicate", holder.path
                else:
                    ref.status = "exists"
                    ref.error = f"{name} is already used in this run by seq {holder.seq} #{holder.n}"
                    settled[digest] = ref
                continue
            status, data, error = store.read(digest, ref.field("mediaType"))
            if status != "ok" or data is None:
                ref.status, ref.error = status, error
                settled[digest] = ref
                continue
            problem = object_problem(digest, data)
            if problem is not None:
                ref.status, ref.error = "mismatch", problem
                settled[digest] = ref
                continue
            problem = reference_problem(ref, data)
            if problem is not None:
                ref.status, ref.error = "mismatch", problem
                refused[claim] = ref
                continue
            used[name] = ref
            ref.status, ref.error = writer.write(name, data)
            ref.path = str(out / name)
            settled[digest] = ref
    finally:
        writer.close()
        store.close()


def _invalid_id_reason(value: Any) -> str:
    if not isinstance(value, str):
        return f"attachmentId is {type(value).__name__}, not a string"
    return "attachmentId does not match sha256:<64 lowercase hex>"


# --------------------------------------------------------------------------------------------------
# The command


def _cell(value: Any, limit: int = 48) -> str:
    """A log value for a table cell: one line, control characters as pictures, cut short. The table
    shows it literally (cells are never markup)."""
    return visible_line(value, limit)


def _short_id(ref: ImageRef) -> str:
    digest = ref.hex_digest
    if digest is not None:
        return f"{digest[:10]}…"
    return _cell(ref.attachment_id, 24)


def _turn_step(ref: ImageRef) -> str:
    if ref.turn is None and ref.step is None:
        return ""
    return f"{'' if ref.turn is None else ref.turn}/{'' if ref.step is None else ref.step}"


def _size(ref: ImageRef) -> str:
    w, h = ref.field("width"), ref.field("height")
    if w is None and h is None:
        return ""
    return f"{_cell(w, 8)}×{_cell(h, 8)}"


def _summary(refs: list[ImageRef], scan: Scan) -> dict[str, Any]:
    distinct = {ref.attachment_id for ref in refs if isinstance(ref.attachment_id, str)}
    return {
        "references": len(refs),
        "distinct": len(distinct),
        "offloaded": sum(1 for ref in refs if ref.offloaded),
        "offloadEvents": len(scan.offloads),
    }


def run_images(
    path: str,
    *,
    output: str,
    out: Path | None,
    store: Path | None,
    name_template: str | None,
    force: bool,
    all_refs: bool,
    color: bool = True,
) -> int:
    from .output import emit_json, emit_ndjson, print_table, warn
    from .reader import open_log

    if out is None:
        used = [flag for flag, on in (("--store", store is not None), ("--name-template", name_template is not None),
                                      ("--force", force), ("--all", all_refs)) if on]
        if used:
            raise UsageError(f"{', '.join(used)} only apply with --out DIR")
    template = NameTemplate(name_template if name_template is not None else DEFAULT_TEMPLATE)
    chosen = detect_store(store, how="--store") if store is not None else None

    log = open_log(path, on_warning=warn)
    scan = scan_log(log)
    refs = scan.refs
    for problem in scan.problems:
        warn(f"{log.display}: {visible_line(problem, 300)}")
    offloads = [{"seq": o.seq, "targets": o.targets} for o in scan.offloads]

    if out is None:
        summary = _summary(refs, scan)
        if output == "json":
            emit_json({"path": log.display, "images": [r.to_json(extraction=False) for r in refs],
                       "offloads": offloads, "summary": summary})
        elif output == "ndjson":
            emit_ndjson(r.to_json(extraction=False) for r in refs)
        else:
            columns = [("seq", "right"), ("n", "right"), ("turn/step", "right"), ("where", "left"), ("attachmentId", "left"),
                       ("mediaType", "left"), ("bytes", "right"), ("size", "right"), ("name", "left")]
            marked = any(r.offloaded for r in refs)
            if marked:
                columns.append(("offloaded", "left"))
            rows = []
            for r in refs:
                row = [r.seq, r.n, _turn_step(r), r.where, _short_id(r),
                       _cell(r.field("mediaType"), 24), _cell(r.field("bytes"), 12), _size(r), _cell(r.field("name"))]
                if marked:
                    row.append(("by seq " + str(r.offloaded_by)) if r.offloaded_by is not None else "yes" if r.offloaded else "")
                rows.append(row)
            caption = f"{summary['references']} reference(s) to {summary['distinct']} image(s)"
            if summary["offloaded"] or offloads:
                caption += f"; {summary['offloaded']} offloaded ({len(offloads)} image/offload event(s))"
            print_table(None, columns, rows, caption=caption, color=color)
        return EXIT_OK

    if chosen is None:
        chosen = default_store(log.ref.path)
    extract(refs, store=chosen, out=out, template=template, force=force, all_refs=all_refs)
    if chosen.missing:
        warn(chosen.missing)
    counts = {status: 0 for status in STATUSES}
    for ref in refs:
        counts[ref.status] = counts.get(ref.status, 0) + 1
    failed = sum(counts[s] for s in FAILED)
    if output == "json":
        emit_json({"path": log.display, "out": str(out), "store": chosen.to_json(),
                   "images": [r.to_json(extraction=True) for r in refs], "offloads": offloads,
                   "summary": {**_summary(refs, scan), **counts}})
    elif output == "ndjson":
        emit_ndjson(r.to_json(extraction=True) for r in refs)
    else:
        rows = [
            [r.seq, r.n, r.where, _short_id(r), r.status,
             _cell(os.path.basename(r.path), 60) if r.path and r.status in ("written", "duplicate") and not r.error
             else _cell(r.error or "", 80)]
            for r in refs
        ]
        parts = ", ".join(f"{counts[s]} {s}" for s in STATUSES if counts[s])
        print_table(
            None,
            [("seq", "right"), ("n", "right"), ("where", "left"), ("attachmentId", "left"), ("status", "left"), ("file / problem", "left")],
            rows,
            caption=f"{len(refs)} reference(s): {parts or 'nothing to extract'} → {_cell(str(out), 200)} (store: {_cell(str(chosen.path), 200)})",
            color=color,
        )
    if failed:
        warn(f"{log.display}: {failed} image(s) not extracted: "
             + ", ".join(f"{counts[s]} {s}" for s in STATUSES if s in FAILED and counts[s]))
        return EXIT_FINDINGS
    return EXIT_OK
