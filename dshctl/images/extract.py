"""Extracting images: output names from a template, verification against the reference, and a writer
that creates files only inside the output directory.

Nothing read from a log is executed, fetched, or used as a path: an id must match
``sha256:[0-9a-f]{64}`` before it touches the filesystem, display names are reduced to a safe base name,
and output files are created relative to the output directory with ``O_CREAT|O_EXCL|O_NOFOLLOW``, as a
temporary file linked to its name once whole (``--force``: renamed over the target, which replaces a
symlink instead of following it).
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import stat
import string
from pathlib import Path
from typing import Any

from ..errors import SourceError, UsageError
from .scan import ImageRef
from .store import _O_CLOEXEC, _O_DIRECTORY, _O_NOFOLLOW, MEDIA_EXTENSIONS, Store, probe_image

__all__ = [
    "STATUSES",
    "FAILED",
    "NAME_LIMIT",
    "DEFAULT_TEMPLATE",
    "safe_base_name",
    "NameTemplate",
    "extension_for",
    "object_problem",
    "reference_problem",
    "verify",
    "Writer",
    "extract",
]

STATUSES = ("written", "present", "exists", "duplicate", "missing", "mismatch", "invalid-id", "unsafe")
"""What became of each reference, in the order summaries list them."""
FAILED = frozenset({"exists", "missing", "mismatch", "invalid-id", "unsafe"})
"""The statuses that make ``dshctl images --out`` exit 1."""

NAME_LIMIT = 100
"""Longest ``{name}`` in bytes (UTF-8) after sanitizing."""


# --------------------------------------------------------------------------------------------------
# Output names

_TEMPLATE_FIELDS = {"seq": int, "n": int, "turn": int, "step": int, "ext": str, "hash": str, "name": str}
_INT_SPEC = re.compile(r"0?[1-9]?[0-9]?d?")
_UNSAFE_NAME_CHARS = re.compile(r"[^\w .+()-]")
DEFAULT_TEMPLATE = "{seq}-{n}.{ext}"
"""The names of images whose reference has no file name (and of every image, with ``--name-template``
given so): by default an image is named after its original file name (:func:`original_name`)."""
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")
FREE_NAME_TRIES = 1000
"""How many ``name-2.ext`` … a name taken by other bytes tries before the image is refused."""


def original_name(ref: ImageRef, ext: str) -> str | None:
    """The file name an image had (``ci-failure.png``), made safe (:func:`safe_base_name`), with the
    image's extension when it has none of an image's; None when the reference names no file."""
    name = safe_base_name(ref.declared("name"))
    if name is None or name in (".", ".."):
        return None
    if not name.lower().endswith(IMAGE_SUFFIXES):
        name = f"{name}.{ext}"
    return name if len(name.encode("utf-8")) <= 255 else None


def numbered(name: str, number: int) -> str:
    """``ci-failure.png`` → ``ci-failure-2.png``: the name tried when ``name`` holds other bytes."""
    stem, dot, suffix = name.rpartition(".")
    return f"{stem}-{number}.{suffix}" if dot and stem else f"{name}-{number}"


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
            "name": safe_base_name(ref.declared("name")) or f"{digest[:12]}.{ext}",
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
    size = ref.declared("bytes")
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        return f"reference bytes {size!r} is not a byte count (the object has {len(data)})"
    if len(data) != size:
        return f"object has {len(data)} bytes, the reference says {size}"
    probed = probe_image(data)
    media_type = ref.declared("mediaType")
    known = isinstance(media_type, str) and media_type in MEDIA_EXTENSIONS  # a list or an object is no key
    if probed is not None:
        kind, width, height = probed
        if known and kind != media_type:
            return f"object is {kind}, the reference says {media_type}"
        if width is not None and (ref.declared("width"), ref.declared("height")) != (width, height):
            return f"object is {width}x{height}, the reference says {ref.declared('width')}x{ref.declared('height')}"
    elif known:
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
        self._fd: int | None = None
        if out.exists() or out.is_symlink():
            self._open()  # refused now (not a directory, no access) before anything is read
        elif not out.parent.is_dir():
            raise UsageError(f"--out {out}: parent directory does not exist")

    @property
    def fd(self) -> int:
        """The directory's descriptor, the directory made at the first file (none made for nothing)."""
        if self._fd is None:
            self._open()
        return self._fd

    def _open(self) -> None:
        out = self.out
        try:
            if not out.exists() and not out.is_symlink():
                os.mkdir(out, 0o777)  # as mkdir makes it: the umask decides
            fd = os.open(out, os.O_RDONLY | _O_DIRECTORY | _O_CLOEXEC)
        except OSError as exc:
            raise UsageError(f"--out {out}: {exc.strerror or exc}") from None
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            os.close(fd)
            raise UsageError(f"--out {out}: not a directory")
        self._fd = fd

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def write_free(self, name: str, data: bytes, taken: set[str]) -> tuple[str, str, str | None]:
        """Write ``data`` under ``name``, or the first free ``name-2.ext`` …, never over other bytes (nor a
        name in ``taken``, used in this run): ``(status, name, why)``, status ``written``, ``present`` (the
        same bytes are already there under that name) or ``exists`` (no free name)."""
        for number in range(1, FREE_NAME_TRIES + 1):
            candidate = name if number == 1 else numbered(name, number)
            if candidate in taken:
                continue
            if self.force:
                status, why = self.write(candidate, data)
                return status, candidate, why
            if self.holds(candidate, data):
                return "present", candidate, None
            status, why = self.write(candidate, data)
            if status == "written":
                return status, candidate, None
        return "exists", name, f"{name} and {FREE_NAME_TRIES - 1} numbered names are taken in {self.out}"

    def holds(self, name: str, data: bytes) -> bool:
        """Whether ``name`` in the output directory is a regular file holding exactly ``data``."""
        try:
            fd = os.open(name, os.O_RDONLY | _O_NOFOLLOW | _O_CLOEXEC, dir_fd=self.fd)
        except OSError:
            return False
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode) or info.st_size != len(data):
                return False
            with os.fdopen(os.dup(fd), "rb") as file:
                return file.read(len(data) + 1) == data
        finally:
            os.close(fd)

    def write(self, name: str, data: bytes) -> tuple[str, str | None]:
        """``("written", None)`` or ``("exists", why)``. Other OS errors raise.

        The bytes go to a temporary file first, created as every tool creates a file (mode 0666 less the
        umask), and appear under ``name`` whole or not at all: linked there, which fails on a name taken
        (never an overwrite); with ``--force`` renamed over it. A file system without hard links gets
        the file created under ``name`` itself, exclusively."""
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _O_NOFOLLOW | _O_CLOEXEC
        temporary = f".dshctl-{secrets.token_hex(8)}.tmp"
        fd = self._open_new(temporary, flags)
        self._fill(fd, temporary, data)
        if self.force:
            try:
                os.replace(temporary, name, src_dir_fd=self.fd, dst_dir_fd=self.fd)
            except OSError as exc:
                _unlink(temporary, self.fd)
                return "exists", f"{name} cannot be replaced: {exc.strerror or exc}"
            return "written", None
        try:
            os.link(temporary, name, src_dir_fd=self.fd, dst_dir_fd=self.fd, follow_symlinks=False)
        except FileExistsError:
            return "exists", f"{name} already exists in {self.out} (--force overwrites)"
        except (OSError, NotImplementedError):
            return self._write_in_place(name, data, flags)
        finally:
            _unlink(temporary, self.fd)
        return "written", None

    def _write_in_place(self, name: str, data: bytes, flags: int) -> tuple[str, str | None]:
        try:
            fd = os.open(name, flags, 0o666, dir_fd=self.fd)
        except FileExistsError:
            return "exists", f"{name} already exists in {self.out} (--force overwrites)"
        except OSError as exc:
            raise SourceError(f"cannot write in {self.out}: {exc.strerror or exc}") from None
        self._fill(fd, name, data)
        return "written", None

    def _open_new(self, name: str, flags: int) -> int:
        try:
            return os.open(name, flags, 0o666, dir_fd=self.fd)
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


def extract(refs: list[ImageRef], *, store: Store, out: Path, template: NameTemplate, force: bool, all_refs: bool,
            original: bool = False) -> None:
    """Fill ``status``/``path``/``error`` of every ref, writing verified objects into ``out``.

    ``original`` (no ``--name-template``): an image is named after its original file name when the log
    has one (``template`` otherwise), and never written over other bytes: a taken name becomes
    ``name-2.ext`` …; the same bytes already there under the name are ``present``."""
    # Names first, so a template that cannot name every image fails before anything is written.
    names: dict[int, str] = {}
    for i, ref in enumerate(refs):
        digest = ref.hex_digest
        if digest is not None:
            ext = extension_for(ref.declared("mediaType"))
            names[i] = (original and original_name(ref, ext)) or template.render(ref, ext, digest)
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
            claim = (digest, *(repr(ref.declared(k)) for k in ("bytes", "mediaType", "width", "height")))
            earlier = None if all_refs else settled.get(digest) or refused.get(claim)
            if earlier is not None:
                ref.status, ref.path = "duplicate", earlier.path
                if earlier.status not in ("written", "present"):
                    ref.error = f"same image as seq {earlier.seq} #{earlier.n} ({earlier.status})"
                continue
            name = names[i]
            holder = used.get(name)
            if original and holder is not None and holder.hex_digest != digest:
                holder = None  # another image had the name first: write_free takes the next free one
            if holder is not None:
                if holder.hex_digest == digest:
                    ref.status, ref.path = "duplicate", holder.path
                else:
                    ref.status = "exists"
                    ref.error = f"{name} is already used in this run by seq {holder.seq} #{holder.n}"
                    settled[digest] = ref
                continue
            status, data, error = store.read(digest, ref.declared("mediaType"))
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
            if original:
                ref.status, name, ref.error = writer.write_free(name, data, set(used))
            else:
                ref.status, ref.error = writer.write(name, data)
            used[name] = ref
            ref.path = str(out / name)
            settled[digest] = ref
    finally:
        writer.close()
        store.close()


def _invalid_id_reason(value: Any) -> str:
    if not isinstance(value, str):
        return f"attachmentId is {type(value).__name__}, not a string"
    return "attachmentId does not match sha256:<64 lowercase hex>"

