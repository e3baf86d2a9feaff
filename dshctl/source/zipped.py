"""A dsh Web UI session export read in place: ``dsh-session-<id>.zip`` (FORMAT.md §1.10).

The ZIP holds ``session.jsonl`` (the root session, whatever its generation: the header tells), one
``subagents/<id>/session.jsonl`` per descendant and each referenced image as ``media/<attachmentId>.<ext>``;
no manifest. :func:`export_members` lists its logs (:class:`ZipMember`), which
:func:`~dshctl.source.paths.resolve` turns into :class:`~dshctl.source.paths.LogRef` objects naming a
member, the root first, as the unzipped export directory lists them; the line reader
reads a member through :func:`open_member`, a stream inflated as it is read (standard library
``zipfile``), never unpacked to disk. A member is shown as ``ZIP!session.jsonl``,
``ZIP!subagents/<id>/session.jsonl``.

Hostile archives are bad input (:class:`~dshctl.errors.SourceError`, status 2), refused before any member
is read: a member name that is absolute or holds ``..``, two members of one name (spelled alike, or told
apart only by ``.`` or empty segments or backslashes: :func:`_one_spelling`), members whose stored
bytes overlap (one compressed run inflated as many files), an encrypted member, and a member declaring
more than :data:`MAX_RATIO` times its compressed size (beyond :data:`RATIO_FLOOR`): a zip bomb. What is
inflated is bounded too: never more than a member declares (:class:`_Member`), each a bounded read.

An archive is a path, or a :class:`HeldArchive`: an export read whole from standard input
(:mod:`dshctl.source.stdin`), whose members every reader opens from one shared ``ZipFile``. ``zipfile`` is
imported where an archive is first opened, not when a command starts (a log that is no ZIP never needs it).
"""

from __future__ import annotations

import re
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Iterator, Union

if TYPE_CHECKING:
    import zipfile

from dshctl.errors import SourceError, os_error_reason
from dshctl.textsafe import quoted

__all__ = ["MAX_RATIO", "RATIO_FLOOR", "ROOT_MEMBER", "ZIP_MAGIC", "Archive", "HeldArchive", "NotAnExport", "ZipMedia",
           "ZipMember", "export_members", "is_zip", "open_member"]

ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")
"""A ZIP starts with a local file header, or (empty) with the end of its central directory."""
ROOT_MEMBER = "session.jsonl"
_SUBAGENT = re.compile(r"subagents/([^/]+)/session\.jsonl")
MAX_RATIO = 200
"""The most a member may inflate per compressed byte. dsh logs deflate 3 to 13 times (the samples and
the shared corpus; JSON keys repeat), dsh's benchmark shape 48 times; deflate itself cannot pass about
1,032; archives built to exhaust a reader do."""
RATIO_FLOOR = 16 << 20
"""A member declaring at most this many bytes is read whatever its ratio (a small, very regular log)."""


class NotAnExport(SourceError):
    """A ZIP without ``session.jsonl``: not a dsh session export (a folder walk passes it over)."""


@dataclass(frozen=True)
class ZipMember:
    """The member a :class:`~dshctl.source.paths.LogRef` names in the archive at its ``path``: its name,
    the bytes it declares inflated (``size``) and stored (``compressed``)."""

    name: str
    size: int
    compressed: int


_UNREADABLE = (EOFError, ValueError)  # with zipfile.BadZipFile and zipfile.LargeZipFile, once imported


def _zipfile():
    import zipfile

    return zipfile


def _unreadable_zip() -> tuple[type[BaseException], ...]:
    zipfile = _zipfile()
    return (zipfile.BadZipFile, zipfile.LargeZipFile, *_UNREADABLE)


class HeldArchive:
    """An export ZIP held open, not named by a path: the bytes of standard input, in memory or in an
    unlinked temporary file (:mod:`dshctl.source.stdin`). One ``ZipFile`` over it serves every member
    read, so concurrent readers share its lock; it is never closed, only freed once nothing refers to it
    (standard input's slot and the refs to its members)."""

    def __init__(self, file: BinaryIO, display: str) -> None:
        self.file, self.display = file, display
        try:
            self.zip = _zipfile().ZipFile(file)
        except _unreadable_zip() as exc:
            raise SourceError(f"not a readable ZIP: {exc}", file=display) from None
        except OSError as exc:
            raise SourceError(os_error_reason(exc), file=display) from None


Archive = Union[Path, HeldArchive]
"""Where an export's bytes are: a ZIP file's path, or an archive held open (standard input)."""


@contextmanager
def _opened(archive: Archive, display: str) -> Iterator["zipfile.ZipFile"]:
    """The archive's ``ZipFile``: opened from its path for the block (unreadable: :class:`SourceError`),
    or the held one, left open."""
    if isinstance(archive, HeldArchive):
        yield archive.zip
        return
    try:
        opened = _zipfile().ZipFile(archive)
    except _unreadable_zip() as exc:
        raise SourceError(f"not a readable ZIP: {exc}", file=display) from None
    except OSError as exc:
        raise SourceError(os_error_reason(exc), file=display) from None
    with opened:
        yield opened


def is_zip(path: Path) -> bool:
    """Whether the file at ``path`` starts as a ZIP does (by its bytes, never its name)."""
    try:
        with open(path, "rb") as file:
            return file.read(4) in ZIP_MAGIC
    except OSError:
        return False


def export_members(archive: Archive, display: str) -> list[ZipMember]:
    """The logs of the export ``archive``: the root's ``session.jsonl``, then each
    ``subagents/<id>/session.jsonl`` by name."""
    infos = _checked_members(archive, display)
    names = {info.filename: info for info in infos}
    if ROOT_MEMBER not in names:
        raise NotAnExport(
            "a ZIP without session.jsonl: not a dsh session export (dsh-session-<id>.zip holds session.jsonl, "
            "subagents/<id>/session.jsonl and media/)",
            file=display,
        )
    chosen = [ROOT_MEMBER] + sorted(name for name in names if _SUBAGENT.fullmatch(name))
    return [ZipMember(name, names[name].file_size, names[name].compress_size) for name in chosen]


def _checked_members(archive: Archive, display: str) -> list["zipfile.ZipInfo"]:
    """The archive's members, once every rule of a sound archive holds (see the module docstring)."""
    with _opened(archive, display) as opened:
        infos = opened.infolist()
    seen: dict[str, str] = {}
    for info in infos:
        name = info.filename
        _check_name(name, display)
        spelled = _one_spelling(name, info.is_dir())
        if spelled in seen:
            other = seen[spelled]
            named = quoted(name) if other == name else f"{quoted(other)} and {quoted(name)} (one name spelled twice)"
            raise SourceError(f"the ZIP holds two members named {named}: which one is the log is not known", file=display)
        seen[spelled] = name
        if info.flag_bits & 0x1:
            raise SourceError(f"ZIP member {quoted(name)} is encrypted", file=display)
        if info.file_size > max(MAX_RATIO * info.compress_size, RATIO_FLOOR):
            raise SourceError(
                f"ZIP member {quoted(name)} declares {info.file_size:,} bytes from {info.compress_size:,} compressed "
                f"(more than {MAX_RATIO}:1): a zip bomb, not read",
                file=display,
            )
    _check_no_overlap(infos, display)
    return infos


def _one_spelling(name: str, directory: bool) -> str:
    """The name as a file system would take it apart: backslashes as slashes (as the ``..`` check takes
    them), without ``.`` and empty segments (``./session.jsonl``, ``subagents/a//session.jsonl``); a
    directory's with its slash. Case is kept: ZIP names are case-sensitive, and dsh writes lowercase
    names, so ``Session.jsonl`` is another member (not the log), not a second spelling of it."""
    parts = [part for part in name.replace("\\", "/").split("/") if part not in ("", ".")]
    return "/".join(parts) + ("/" if directory else "")


def _check_name(name: str, display: str) -> None:
    parts = name.replace("\\", "/").split("/")
    if name.startswith(("/", "\\")) or re.match(r"[A-Za-z]:", name):
        raise SourceError(f"ZIP member name {quoted(name)} is absolute: a hostile archive, not read", file=display)
    if ".." in parts:
        raise SourceError(f"ZIP member name {quoted(name)} climbs out with '..': a hostile archive, not read", file=display)
    if "\x00" in name:
        raise SourceError(f"ZIP member name {quoted(name)} holds a NUL: a hostile archive, not read", file=display)


def _check_no_overlap(infos: list["zipfile.ZipInfo"], display: str) -> None:
    """Each member's stored bytes end before the next member's header starts: overlapping members make
    one compressed run inflate as many files."""
    ordered = sorted((info for info in infos if not info.is_dir()), key=lambda info: info.header_offset)
    for this, following in zip(ordered, ordered[1:]):
        if following.header_offset < this.header_offset + 30 + len(this.orig_filename.encode("utf-8", "replace")) + this.compress_size:
            raise SourceError(
                f"ZIP members {quoted(this.filename)} and {quoted(following.filename)} share stored bytes: a zip bomb, not read",
                file=display,
            )


def open_member(ref) -> BinaryIO:
    """A stream of the member ``ref`` names, inflated as it is read: from the archive it holds
    (``ref.archive``, standard input's), else from the ZIP file at ``ref.path``."""
    member = ref.member
    held = ref.archive
    zipfile = _zipfile()
    if held is not None:
        archive = held.zip
    else:
        try:
            archive = zipfile.ZipFile(ref.path)
        except _unreadable_zip() as exc:
            raise SourceError(f"not a readable ZIP: {exc}", file=ref.display) from None
        except OSError as exc:
            raise SourceError(os_error_reason(exc), file=ref.display) from None
    try:
        info = archive.getinfo(member.name)
        if (info.file_size, info.compress_size) != (member.size, member.compressed):
            raise SourceError("the ZIP changed since it was listed", file=ref.display)
        stream = archive.open(info)
    except SourceError:
        if held is None:
            archive.close()
        raise
    except (KeyError, zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError, ValueError) as exc:
        if held is None:
            archive.close()
        raise SourceError(f"cannot read the ZIP member: {exc}", file=ref.display) from None
    return _Member(None if held is not None else archive, stream, member.size, ref.display)


class _Member:
    """A member's stream as the line reader reads a file: ``read(n)`` of at most ``n`` inflated bytes,
    never more in all than the member declares; zipfile's and zlib's errors (a bad CRC, damaged deflate
    data) raised as :class:`~dshctl.errors.SourceError`. It does not seek: a zstd member is walked."""

    def __init__(self, archive: "zipfile.ZipFile | None", stream, declared: int, display: str) -> None:
        """``archive``: the ``ZipFile`` this stream owns and closes with it (None: a held archive's)."""
        self._archive, self._stream, self._left, self._display = archive, stream, declared, display

    def read(self, size: int = -1) -> bytes:
        want = self._left + 1 if size is None or size < 0 else min(size, self._left + 1)
        try:
            data = self._stream.read(want)
        except (_zipfile().BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, ValueError) as exc:
            raise SourceError(f"damaged ZIP member: {exc}", file=self._display) from None
        except OSError as exc:
            raise SourceError(f"read failed: {os_error_reason(exc)}", file=self._display) from None
        self._left -= len(data)
        if self._left < 0:
            raise SourceError("the ZIP member inflates past the size it declares: a zip bomb, not read", file=self._display)
        return data

    def seekable(self) -> bool:
        return False

    def close(self) -> None:
        try:
            self._stream.close()
        finally:
            if self._archive is not None:
                self._archive.close()


class ZipMedia:
    """The ``media/`` members of an export ZIP (its images), read by name, each at most ``limit`` bytes;
    the archive's rules are checked once, as for its logs."""

    def __init__(self, archive: Archive) -> None:
        self.archive = archive
        self.display = archive.display if isinstance(archive, HeldArchive) else str(archive)
        self._infos = {info.filename: info for info in _checked_members(archive, self.display)}

    def names(self) -> list[str]:
        return sorted(name for name, info in self._infos.items() if name.startswith("media/") and not info.is_dir())

    def is_export(self) -> bool:
        """Whether the archive holds a session (``session.jsonl``), as a dsh export does."""
        return ROOT_MEMBER in self._infos

    def read(self, name: str, limit: int) -> tuple[str, bytes | None]:
        """``("ok", bytes)``, ``("missing", None)`` or ``("large", None)`` (more than ``limit`` bytes)."""
        info = self._infos.get(name)
        if info is None or info.is_dir():
            return "missing", None
        if info.file_size > limit:
            return "large", None
        zipfile = _zipfile()
        try:
            with _opened(self.archive, self.display) as archive, archive.open(info) as stream:
                data = stream.read(limit + 1)
        except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError, OSError, ValueError) as exc:
            raise SourceError(f"damaged ZIP member {quoted(name)}: {exc}", file=self.display) from None
        return ("ok", data) if len(data) <= limit else ("large", None)
