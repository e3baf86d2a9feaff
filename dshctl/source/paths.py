"""Where dsh session logs live: from what the user typed to the log files to read.

:func:`resolve` turns a command-line argument (``-``, a log file, a session directory, a project
directory, a sessions root, or an unzipped web export) into :class:`LogRef` objects, choosing the
generation file the way dsh does (FORMAT.md §1.2–§1.4, §1.10, Appendix A). :func:`as_ref` is the
library's door: a path (``str`` or ``os.PathLike``) naming one log, or a ``LogRef`` already chosen.

Nothing here opens a log; :mod:`dshctl.source.lines` reads the one a ``LogRef`` names.
"""

from __future__ import annotations

import bisect
import os
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from dshctl.errors import DshctlError, SourceError, UnsupportedVersion, UsageError, os_error_reason
from dshctl.jsvalues import MAX_SAFE_INTEGER
from dshctl.settings import home_directory
from dshctl.textsafe import quoted
from dshctl.source.ref import LogRef
from dshctl.source.zipped import Archive, HeldArchive, NotAnExport, export_members, is_zip

__all__ = [
    "MAX_SUPPORTED_GENERATION",
    "NO_CWD_DIR",
    "LogRef",
    "as_ref",
    "SessionDir",
    "decode_session_dir_name",
    "find_session",
    "id_matches",
    "in_sessions_root",
    "latest_session",
    "no_logs_found",
    "parse_generation_name",
    "project_key",
    "resolve",
    "resolve_named",
    "resolve_one",
    "session_log",
    "session_dirs",
    "session_ids",
    "sessions_root",
    "short_ids",
    "shown_ids",
    "written_key",
]

MAX_SUPPORTED_GENERATION = 4

_GENERATION_NAME = re.compile(r"session(?:\.v([1-9][0-9]*))?\.jsonl(\.zstd)?")
_PROJECT_DIR_NAME = re.compile(r"--.+--")
NO_CWD_DIR = "_no-cwd"


# --------------------------------------------------------------------------- paths


def sessions_root() -> Path:
    """dsh's default JSONL root: ``$DSH_HOME/sessions``, else ``~/.dsh/sessions`` (§1.1).

    As in dsh's ``resolveDshHome``: a blank or whitespace-only ``DSH_HOME`` is
    unset, a leading ``~``/``~/`` is expanded, and the result is made absolute. Where it needs a home
    directory and none can be found: :class:`UsageError` (:func:`dshctl.settings.home_directory`).
    """
    home = os.environ.get("DSH_HOME")
    if home is None or not home.strip():
        return home_directory("DSH_HOME") / ".dsh" / "sessions"
    if home == "~":
        home = str(home_directory("DSH_HOME"))
    elif home.startswith("~/") or home.startswith("~\\"):
        home = str(home_directory("DSH_HOME") / home[2:])
    return Path(os.path.abspath(home)) / "sessions"


def _default_root() -> Path | None:
    """:func:`sessions_root`, or None where there is none (no home directory): for where the root is only
    consulted (the ids a short id is shown among, whether a PATH is the root), so that a log named by its
    path reads without a home."""
    try:
        return sessions_root()
    except UsageError:
        return None


def parse_generation_name(name: str) -> tuple[int, bool] | None:
    """``(generation, zstd)`` for a canonical generation file name, else ``None``.

    Canonical: ``session.jsonl`` (0) or ``session.vN.jsonl`` (N >= 1, no leading
    zero, lowercase), optionally followed by ``.zstd``. ``session.v0.jsonl``,
    ``session.v01.jsonl``, temp files and generations beyond a safe integer are
    not canonical (dsh ``parseGenerationLogFilename``).
    """
    match = _GENERATION_NAME.fullmatch(name)
    if match is None:
        return None
    generation = 0 if match.group(1) is None else int(match.group(1))
    if generation > MAX_SAFE_INTEGER:
        return None
    return generation, match.group(2) is not None


def project_key(cwd: str) -> str:
    """dsh ``projectKey``: the lossy ``--<slug>--`` directory name of a project cwd (§1.2).

    Works on UTF-16 code units like dsh: ``/``, ``\\`` and ``:`` become ``-`` (a
    run of them one ``-``), ``[A-Za-z0-9._-]`` stay, anything else (``~``
    included) becomes ``~XXXX``; leading ``-`` are stripped (empty → ``root``);
    the slug is cut to 251 characters.
    """
    if not cwd:
        raise ValueError("cannot encode an empty project path")
    slug_parts: list[str] = []
    separator_run = False
    for unit in _utf16_units(cwd):
        if unit in (0x2F, 0x5C, 0x3A):  # / \ :
            if not separator_run:
                slug_parts.append("-")
            separator_run = True
            continue
        separator_run = False
        slug_parts.append(chr(unit) if _is_safe_unit(unit) else f"~{unit:04X}")
    slug = "".join(slug_parts).lstrip("-") or "root"
    return f"--{slug[:251]}--"


def project_dir_name(project: str) -> str:
    """The name of the project directory that ``--project DIR`` means: dsh's ``projectKey`` of DIR made
    absolute (§1.2).

    The one rule of ``--project``: a session belongs to the project directory it is stored under, as dsh
    groups and finds it (§1.4: dsh stores a session under ``projectKey`` of its header cwd). The name is
    lossy, so every cwd with the same name is the same project (``/a/b-c`` and ``/a/b/c``); a cwd that
    is escaped (``/a/my proj`` → ``--a-my~0020proj--``) matches exactly."""
    return project_key(os.path.abspath(project))


def in_project(log: str | os.PathLike, project: str) -> bool:
    """Whether ``log`` is stored under the project directory of ``--project`` ``project``
    (``<root>/<project dir>/<session dir>/<log>``), from its path alone."""
    return Path(os.path.abspath(log)).parent.parent.name == project_dir_name(project)


def decode_session_dir_name(name: str) -> str:
    """Inverse of dsh ``encodeSegment``: ``~XXXX`` → one UTF-16 code unit.

    Surrogate pairs written as two escapes are combined; a lone surrogate stays
    a lone surrogate (Python ``str`` can hold it). A ``~`` not followed by four
    hex digits cannot come from dsh and is kept literally.
    """
    if "~" not in name:
        return name
    units: list[int] = []
    position, length = 0, len(name)
    while position < length:
        char = name[position]
        escape = name[position + 1 : position + 5]
        if char == "~" and position + 5 <= length and _is_hex4(escape):
            units.append(int(escape, 16))
            position += 5
            continue
        units.extend(_utf16_units(char))
        position += 1
    encoded = b"".join(unit.to_bytes(2, "little") for unit in units)
    return encoded.decode("utf-16-le", "surrogatepass")


def _utf16_units(text: str) -> list[int]:
    encoded = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(encoded[offset : offset + 2], "little") for offset in range(0, len(encoded), 2)]


def _is_safe_unit(unit: int) -> bool:
    return (
        0x30 <= unit <= 0x39
        or 0x41 <= unit <= 0x5A
        or 0x61 <= unit <= 0x7A
        or unit in (0x2E, 0x5F, 0x2D)  # . _ -
    )


def _is_hex4(text: str) -> bool:
    return len(text) == 4 and all(char in "0123456789abcdefABCDEF" for char in text)


# --------------------------------------------------------------------------- resolve


def resolve(spec: str) -> list[LogRef]:
    """Turn a command-line argument into the logs it names.

    * ``-`` → stdin: streamed as it arrives, or, when it starts as a ZIP does, read whole and taken as an
      export ZIP (:mod:`dshctl.source.stdin`).
    * ``ZIP!member`` (no such file, and ``ZIP`` an export ZIP or ``-``) → that one log of the export, as
      commands name its members (:func:`_zip_member`).
    * no such path, but a session id or a unique prefix of one under the sessions root
      (:func:`find_session`) → that session directory.
    * a file (any name) → that file; a ZIP (by its bytes) → the logs of a dsh Web UI export, read in
      place (:func:`~dshctl.source.paths.zip_refs`: ``session.jsonl``, then its subagents).
    * a session directory (holds canonical generation files) → its highest
      generation; mixed raw/zstd encodings → :class:`SourceError`; highest
      generation above 4 → :class:`UnsupportedVersion` (never a fallback).
      A session directory with a ``subagents/`` (or ``media/``) subdirectory is
      an unzipped dsh web export (§1.10): its ``subagents/<id>/`` logs are
      returned as separate logs after the root log.
    * a project directory (``--<slug>--`` or ``_no-cwd``) or a sessions root
      (holds project directories) → the chosen log of every session directory
      in it, sorted by path; session directories without any log are skipped.
    * any other directory: a plain folder of logs, its ``*.jsonl[.zstd]`` files and the logs of the
      directories below it (:class:`_FolderWalk`).

    Results other than stdin are sorted by path.
    """
    if spec == "-":
        return _stdin_refs()
    if spec == "":
        raise SourceError("no such file or directory", file=spec)
    path = Path(spec)
    try:
        is_dir = path.is_dir()
        exists = is_dir or path.exists()
    except OSError as exc:  # e.g. permission denied on a parent, name too long
        raise SourceError(os_error_reason(exc), file=spec) from None
    if not exists:
        if "!" in spec:
            member = _zip_member(spec)
            if member is not None:
                return member
        if not _may_be_session_id(spec):
            raise SourceError("no such file or directory", file=spec)
        path = find_session(spec)
        return _resolve_dir(path, str(path))
    if not is_dir:
        if is_zip(path):
            return zip_refs(path, spec)
        parsed = parse_generation_name(path.name)
        return [
            LogRef(
                path=path,
                display=spec,
                generation_from_name=None if parsed is None else parsed[0],
                session_dir=None,
            )
        ]
    return _resolve_dir(path, spec)


def _stdin_refs() -> list[LogRef]:
    """``-``: the log on standard input, or the logs of the export ZIP on it (``<stdin>!session.jsonl``…)."""
    if sys.stdin is None:  # the process started with standard input closed
        raise SourceError("standard input is closed", file="<stdin>")
    from dshctl.source.stdin import STDIN, stdin_archive

    archive = stdin_archive()
    if archive is not None:
        return zip_refs(archive, STDIN)
    return [LogRef(path=None, display=STDIN, generation_from_name=None, session_dir=None)]


PATH_MAX = 4096
"""The longest path, in bytes, Linux opens (``PATH_MAX``); a ``ZIP`` of ``ZIP!member`` longer than this
many characters (at least as many bytes) is never a file."""


def _zip_member(spec: str) -> list[LogRef] | None:
    """``ZIP!member``, as commands name an export's logs, given back: the one log ``member`` of the export
    ZIP ``ZIP`` (a file, or standard input's: ``-`` or ``<stdin>``); None when no ``!`` of ``spec`` follows
    an export ZIP's name (a real file whose name holds ``!`` was found before this is asked). An unknown
    member is an error listing the export's logs.

    Only the marks within :data:`PATH_MAX` characters are tried: a longer prefix names no file (the system
    refuses it), and trying each of a hostile argument's ``!`` would stat every prefix, quadratic in its
    length. At most :data:`PATH_MAX` prefixes are looked at, whatever the argument."""
    mark = 0
    while (mark := spec.find("!", mark + 1, PATH_MAX + 1)) > 0:
        archive_spec = spec[:mark]
        if archive_spec in ("-", "<stdin>"):  # standard input's ZIP, named as commands name its members
            refs, archive_spec = _stdin_refs(), "<stdin>"
            if refs[0].member is None:
                raise SourceError("standard input holds no ZIP, so it has no member " + quoted(spec[mark + 1:]), file=spec)
        elif os.path.isfile(archive_spec) and is_zip(Path(archive_spec)):
            refs = zip_refs(Path(archive_spec), archive_spec)
        else:
            continue
        name = spec[mark + 1:]
        chosen = [ref for ref in refs if ref.member is not None and ref.member.name == name]
        if chosen:
            return chosen
        raise SourceError(f"the export holds no log {quoted(name)}; its logs: {_member_list(refs)}", file=archive_spec)
    return None


def _member_list(refs: list[LogRef], shown: int = 10) -> str:
    names = [ref.member.name for ref in refs if ref.member is not None]
    listed = ", ".join(names[:shown])
    return listed + (f" and {len(names) - shown} more ({len(names)} in all)" if len(names) > shown else "")


def _may_be_session_id(spec: str) -> bool:
    """A missing path without a directory part may be a session id (``7c1e5a2d``, ``session-…``)."""
    return os.sep not in spec and "/" not in spec and not spec.startswith(".")


def resolve_named(spec: str) -> list[LogRef]:
    """:func:`resolve` for a path the user named: one that holds no log is an error, so a mistyped
    path cannot read as an empty, clean result (a CI job would pass on nothing)."""
    refs = resolve(spec)
    if not refs:
        raise no_logs_found(spec)
    return refs


def no_logs_found(spec: str) -> SourceError:
    return SourceError("no dsh session logs found", file=spec)


def resolve_one(spec: str) -> LogRef:
    """The one log a path names (file, session directory or ``-``): of a web export (a ZIP, or the
    directory it unzips to), its root session. A path naming several is an error."""
    refs = resolve_named(spec)
    if len(refs) > 1 and _one_export(refs):
        return refs[0]
    if len(refs) != 1:
        shown = ", ".join(ref.display for ref in refs[:3]) + (f" and {len(refs) - 3} more" if len(refs) > 3 else "")
        raise SourceError(f"expected one log, found {len(refs)} ({shown}): name one, or use a command that reads many",
                          file=spec)
    return refs[0]


def _one_export(refs: list[LogRef]) -> bool:
    """Whether ``refs`` are one web export's root and subagents: the members of one ZIP, or the logs of
    one unzipped export directory."""
    root = refs[0]
    if root.member is not None:
        return all(ref.member is not None and ref.path == root.path for ref in refs)
    if root.session_dir is None:
        return False
    below = root.session_dir / "subagents"
    return all(ref.session_dir is not None and ref.session_dir.parent == below for ref in refs[1:])


def session_log(session_dir: Path, display: str) -> LogRef | None:
    """The log dsh would open in ``session_dir`` right now (its highest generation), or ``None`` when it
    holds none; ``display`` names the directory in messages. Raises as :func:`resolve` does."""
    return _choose_generation(session_dir, display, _scan(session_dir, display))


def as_ref(source: str | os.PathLike | LogRef) -> LogRef:
    """The log ``source`` names: a :class:`LogRef` as given; a path string as :func:`resolve_one` reads it
    (``-`` is standard input); an ``os.PathLike`` (a :class:`~pathlib.Path`) always as a path, so
    ``Path("-")`` is the file named ``-``, shown as ``./-``."""
    if isinstance(source, LogRef):
        return source
    if isinstance(source, str):
        return resolve_one(source)
    if isinstance(source, os.PathLike):
        spec = os.fsdecode(source)
        return resolve_one(os.path.join(".", spec) if spec == "-" else spec)
    raise TypeError(f"a log source is a path (str or os.PathLike) or a LogRef, not {type(source).__name__}")


def _resolve_dir(path: Path, display: str) -> list[LogRef]:
    """The logs of the directory ``path``, named by the user (a session directory whose log cannot be
    chosen is an error here; found in a plain folder below it, an unreadable log of the folder)."""
    return _FolderWalk(path, display).logs()


MAX_WALKED_DIRS = 100_000
"""The most directories one walk of a named directory visits: past it, an error (name a smaller folder)
rather than minutes of walking."""


class _FolderWalk:
    """One walk of a named directory and the plain folders below it, with an explicit stack (a folder
    nested thousands deep costs no Python recursion). Each directory is visited once by device and
    inode, however many links lead to it (symlinks that loop end); a directory symlink is followed only
    when its real path stays inside the named directory's real path (the named path may itself be a
    link), so that a link to ``/`` or ``/proc`` is passed over, as ``fd`` and ``rg`` pass over links by
    default; at most :data:`MAX_WALKED_DIRS` directories are visited."""

    def __init__(self, path: Path, display: str):
        self.path, self.display = path, display
        try:
            self.inside = os.path.realpath(path)
        except (OSError, ValueError):
            self.inside = os.path.abspath(path)
        self.walked: set[tuple[int, int]] = set()
        self.refs: list[LogRef] = []
        # ("dir", path, display): a folder below to visit; ("decide", path, display, entries, mark, named):
        # a directory holding generation files and other entries, decided once those others are walked
        self.stack: list[tuple[Any, ...]] = []
        self.visited = 0

    def logs(self) -> list[LogRef]:
        self._admit(self.path)
        plain = self._visit(self.path, self.display, named=True)
        while self.stack:
            frame = self.stack.pop()
            if frame[0] == "decide":
                self._decide(*frame[1:])
                continue
            _, sub, sub_display = frame
            if not self._admit(sub):
                continue
            try:
                self._visit(sub, sub_display, named=False)
            except SourceError:
                continue  # an unreadable folder below is passed over
        if plain and not self.refs:
            raise SourceError(
                "not a dsh log location: expected a session directory (session[.vN].jsonl[.zstd]), "
                "a project directory (--<slug>--/<session>/), a sessions root (--<slug>--/ subdirectories) "
                "or a folder of *.jsonl[.zstd] logs",
                file=self.display,
            )
        return sorted(self.refs, key=_sort_key)

    def _admit(self, path: Path) -> bool:
        """Whether to visit the directory ``path``: inside the named directory, not yet visited."""
        if path is not self.path and os.path.islink(path):
            try:
                real = os.path.realpath(path)
                if os.path.commonpath([real, self.inside]) != self.inside:
                    return False
            except (OSError, ValueError):
                return False
        if not _first_walk(path, self.walked):
            return False
        self.visited += 1
        if self.visited > MAX_WALKED_DIRS:
            raise SourceError(f"more than {MAX_WALKED_DIRS:,} directories to walk: name a smaller folder", file=self.display)
        return True

    def _visit(self, path: Path, display: str, *, named: bool) -> bool:
        """Take the directory ``path``'s own logs and push the folders below it to walk; whether it is
        a plain folder of logs."""
        entries = _scan(path, display)
        if any(parse_generation_name(name) is not None for name, is_dir in entries if not is_dir):
            if in_sessions_root(path):
                self.refs.extend(_session_logs(path, display, entries, explicit=named))
                return False
            own = [entry for entry in entries if _dsh_writes(*entry)]
            others = [entry for entry in entries if not _dsh_writes(*entry)]
            self.stack.append(("decide", path, display, entries, own, len(self.refs), named))
            self._plain(path, display, others)
            return False
        if _is_project_dir_name(_real_name(path)):
            self.refs.extend(_project_logs(path, display, entries))
            return False
        project_dirs = [name for name, is_dir in entries if is_dir and _is_project_dir_name(name)]
        if project_dirs and _is_sessions_root(path):  # as dsh reads it: every sub-directory (a renamed one too)
            project_dirs = [name for name, is_dir in entries if _is_root_project_dir(name, is_dir)]
        if project_dirs:
            refs: list[LogRef] = []
            for name in project_dirs:
                sub = path / name
                sub_display = os.path.join(display, name)
                refs.extend(_project_logs(sub, sub_display, _scan(sub, sub_display)))
            self.refs.extend(refs)
            return False
        if any(is_dir and name == "subagents" for name, is_dir in entries):
            raise SourceError(
                "looks like an unzipped dsh session export but has no session.jsonl next to subagents/",
                file=display,
            )
        if not _has_non_scratch_entries(entries):
            return False  # nothing there (a root or a project not yet written to, a new folder): no logs found
        self._plain(path, display, entries)
        return named

    def _decide(self, path: Path, display: str, entries: list[tuple[str, bool]], own: list[tuple[str, bool]],
                mark: int, named: bool) -> None:
        """A directory holding generation files, once its other entries are walked: a plain folder of
        logs when they held any (none passed over), else a session directory."""
        if len(self.refs) > mark:
            self._plain(path, display, own)
            return
        try:
            self.refs.extend(_session_logs(path, display, entries, explicit=named))
        except SourceError:
            if named:
                raise

    def _plain(self, path: Path, display: str, entries: list[tuple[str, bool]]) -> None:
        """A plain folder of logs (a fixture corpus, downloaded logs): its ``*.jsonl`` / ``*.jsonl.zstd``
        / ``*.jsonl.zst`` files by name, whatever they are called (the header tells the generation), and
        the folders below it to walk; hidden folders are passed over."""
        below = []
        for name, is_dir in entries:
            sub, sub_display = path / name, os.path.join(display, name)
            if not is_dir and name.endswith(LOG_SUFFIXES):
                parsed = parse_generation_name(name)
                self.refs.append(LogRef(path=sub, display=sub_display,
                                        generation_from_name=None if parsed is None else parsed[0], session_dir=None))
            elif not is_dir and name.lower().endswith(".zip") and is_zip(sub):
                self.refs.extend(_folder_zip(sub, sub_display))
            elif is_dir and not name.startswith("."):
                below.append(("dir", sub, sub_display))
        self.stack.extend(reversed(below))


_EXPORT_DIRS = ("subagents", "media")
"""The directories of an unzipped dsh Web UI export beside its ``session.jsonl`` (§1.10)."""


def in_sessions_root(path: Path) -> bool:
    """Whether the directory ``path`` is a session directory by its place: inside a project directory (of
    a sessions root), where dsh reads only its generation files whatever else the directory holds (§1.4;
    dsh keeps the directory for future per-session artifacts, §1.2), and its name is its session's id."""
    parent = path.parent
    if path.name in ("", ".", "..") or parent.name in ("", ".", ".."):
        try:
            parent = path.resolve().parent
        except OSError:
            pass
    return _is_project_dir_name(parent.name)


def _dsh_writes(name: str, is_dir: bool) -> bool:
    """Whether dsh writes an entry of this name in a session directory and a plain-folder reading would
    read it: a generation file (§1.3), an export's ``subagents/`` or ``media/`` (§1.10). A directory
    that holds generation files and another log (a log not named as dsh names a generation, an export
    ZIP, a folder with logs) is a plain folder of logs, so that no log in it is passed over unread;
    ``session.lock``, staging ``*.tmp`` files (§1.3, §1.5) and files that are no log change nothing."""
    return name in _EXPORT_DIRS if is_dir else parse_generation_name(name) is not None


LOG_SUFFIXES = (".jsonl", ".jsonl.zstd", ".jsonl.zst")
"""The names a plain folder's logs end with: dsh's two (§1.3) and the ``zstd`` tool's (a log compressed
by hand: the bytes tell zstd, never the name)."""


def _first_walk(path: Path, walked: set[tuple[int, int]]) -> bool:
    """Whether the directory ``path`` is not yet among ``walked``, which it then joins."""
    identity = _identity(path)
    if identity in walked:
        return False
    walked.add(identity)
    return True


def _identity(path: Path) -> tuple[int, int]:
    """A directory's device and inode (its path's own, when it cannot be looked at: it is walked once)."""
    try:
        status = os.stat(path)
    except OSError:
        return (-1, hash(os.path.abspath(path)))
    return (status.st_dev, status.st_ino)


def zip_refs(archive: Archive, display: str) -> list[LogRef]:
    """The logs of a dsh Web UI export ZIP, read in place: ``ZIP!session.jsonl``, then
    ``ZIP!subagents/<id>/session.jsonl`` (:func:`~dshctl.source.zipped.export_members`). ``archive`` is the
    ZIP's path, or the archive held from standard input (the refs' ``path`` is then None)."""
    held = archive if isinstance(archive, HeldArchive) else None
    path = None if held is not None else archive
    return [LogRef(path=path, display=f"{display}!{member.name}", generation_from_name=None, session_dir=None, member=member,
                   archive=held)
            for member in export_members(archive, display)]


def _folder_zip(path: Path, display: str) -> list[LogRef]:
    """A ZIP in a plain folder: its logs when it is a dsh export; a hostile or damaged one is an unreadable
    log of the folder; any other ZIP is passed over."""
    try:
        return zip_refs(path, display)
    except NotAnExport:
        return []
    except SourceError as exc:
        return [LogRef(path=path, display=display, generation_from_name=None, session_dir=None, problem=exc)]


def _scan(path: Path, display: str) -> list[tuple[str, bool]]:
    """``(name, is_dir)`` of every entry, symlinks followed; sorted by name."""
    try:
        found = []
        with os.scandir(path) as entries:
            for entry in entries:
                try:
                    is_dir = entry.is_dir()
                    if not is_dir and not entry.is_file():
                        continue  # fifo, socket, dangling link: never a log location
                except OSError:
                    continue
                found.append((entry.name, is_dir))
    except OSError as exc:
        raise SourceError(os_error_reason(exc), file=display) from None
    found.sort()
    return found


def _session_logs(
    path: Path, display: str, entries: list[tuple[str, bool]], *, explicit: bool, exported: bool = False,
    walked: set[tuple[int, int]] | None = None,
) -> list[LogRef]:
    """The chosen log of one session directory, plus its export subagents.

    ``explicit``: errors choosing this directory's own log are raised;
    otherwise they become a ``problem`` ref. A directory without any log
    returns ``[]`` (only called for explicit dirs when logs exist). A ``subagents/`` reached again
    through a symlink (``walked``: those read) is read once.
    """
    is_export = exported or any(is_dir and name in ("subagents", "media") for name, is_dir in entries)
    refs: list[LogRef] = []
    try:
        own = _choose_generation(path, display, entries)
    except DshctlError as exc:
        if explicit:
            raise
        own = LogRef(path=path, display=display, generation_from_name=None, session_dir=path, problem=exc)
    if own is not None:
        if is_export and own.problem is None and own.path is not None and own.path.name == "session.jsonl":
            own = LogRef(path=own.path, display=own.display, generation_from_name=None, session_dir=path)
        refs.append(own)
    walked = set() if walked is None else walked
    if is_export and any(is_dir and name == "subagents" for name, is_dir in entries) and _first_walk(path / "subagents", walked):
        sub_root = path / "subagents"
        sub_root_display = os.path.join(display, "subagents")
        for name, is_dir in _scan(sub_root, sub_root_display):
            if not is_dir:
                continue
            child = sub_root / name
            child_display = os.path.join(sub_root_display, name)
            refs.extend(
                _session_logs(child, child_display, _scan(child, child_display), explicit=False, exported=True, walked=walked)
            )
    return refs


def _choose_generation(path: Path, display: str, entries: list[tuple[str, bool]]) -> LogRef | None:
    """dsh ``resolveGenerationInDirectory`` for either encoding (§1.3, §1.4)."""
    found: list[tuple[int, bool, str]] = []
    for name, is_dir in entries:
        if is_dir:
            continue
        parsed = parse_generation_name(name)
        if parsed is not None:
            found.append((parsed[0], parsed[1], name))
    if not found:
        return None
    plain_names = [name for _, zstd, name in found if not zstd]
    zstd_names = [name for _, zstd, name in found if zstd]
    if plain_names and zstd_names:
        raise SourceError(
            f"session directory holds both raw and zstd generation files ({plain_names[0]}, {zstd_names[0]}); "
            "dsh refuses a directory that mixes encodings",
            file=display,
        )
    generation, _, name = max(found)
    if generation > MAX_SUPPORTED_GENERATION:
        raise UnsupportedVersion(
            f"written by a newer dsh than this tool supports ({name}); "
            f"dshctl reads generations 0-{MAX_SUPPORTED_GENERATION}",
            file=os.path.join(display, name),
        )
    return LogRef(
        path=path / name,
        display=os.path.join(display, name),
        generation_from_name=generation,
        session_dir=path,
    )


def _project_logs(path: Path, display: str, entries: list[tuple[str, bool]]) -> list[LogRef]:
    refs: list[LogRef] = []
    for name, is_dir in entries:
        sub_display = os.path.join(display, name)
        if not is_dir:
            if name.endswith(".jsonl") or name.endswith(".jsonl.zstd"):
                problem = SourceError(
                    "log file directly inside a project directory: the obsolete flat layout, "
                    "which dsh refuses; pass the file itself to read it",
                    file=sub_display,
                )
                refs.append(
                    LogRef(path=path / name, display=sub_display, generation_from_name=None,
                           session_dir=None, problem=problem)
                )
            continue
        if name.startswith(".dsh-mkdir-"):
            continue
        sub = path / name
        refs.extend(_session_logs(sub, sub_display, _scan(sub, sub_display), explicit=False))
    return refs


def _is_project_dir_name(name: str) -> bool:
    return name == NO_CWD_DIR or _PROJECT_DIR_NAME.fullmatch(name) is not None


def _real_name(path: Path) -> str:
    name = path.name
    if name in ("", ".", ".."):
        try:
            name = path.resolve().name
        except OSError:
            pass
    return name


def _has_non_scratch_entries(entries: list[tuple[str, bool]]) -> bool:
    return any(
        not (name.startswith(".dsh-mkdir-") or name.endswith(".tmp") or name == "session.lock")
        for name, _ in entries
    )


def _sort_key(ref: LogRef) -> tuple[str, int, str]:
    """By path; an export ZIP's logs together, its root first (as :func:`zip_refs` lists them)."""
    if ref.member is None:
        return ("" if ref.path is None else str(ref.path), 0, "")
    return ("" if ref.path is None else str(ref.path), 0 if ref.member.name == "session.jsonl" else 1, ref.member.name)


# --------------------------------------------------------------------------- session ids

SHORT_ID_LENGTH = 8
"""The fewest characters of an id's distinctive part (after ``session-``) a short id shows, as git
shows at least seven of a hash."""

_ID_TAIL_MARK = "session-"


@dataclass(frozen=True)
class SessionDir:
    """A session directory under a sessions root: its id (the directory name decoded), its project
    directory's name, and its chosen log (``None`` when it holds none)."""

    id: str
    project: str
    path: Path
    log: Path | None


def _id_tail_start(session_id: str) -> int:
    """Where the distinctive part of an id starts: after its last ``session-`` (ids are
    ``session-<uuid>`` or ``<agent>-session-<uuid>``), else at the start."""
    mark = session_id.rfind(_ID_TAIL_MARK)
    return 0 if mark < 0 else mark + len(_ID_TAIL_MARK)


def id_matches(session_id: str, query: str) -> bool:
    """Whether ``query`` names ``session_id``: a prefix of the whole id, or of its part after ``session-``."""
    return session_id.startswith(query) or session_id[_id_tail_start(session_id):].startswith(query)


def short_ids(ids: list[str], among: Iterable[str] = ()) -> dict[str, str]:
    """The shortest prefix of each id of ``ids`` that names no other id of ``ids`` or ``among`` (read
    as :func:`id_matches` reads it: of the whole id or of its part after ``session-``), showing at least
    :data:`SHORT_ID_LENGTH` characters of its distinctive part (the whole id when that is shorter)."""
    everyone = set(ids) | set(among)
    names = sorted({(i, i) for i in everyone} | {(i[_id_tail_start(i):], i) for i in everyone})
    shown: dict[str, str] = {}
    for session_id in set(ids):
        shared = max((_common_prefix(session_id, other) for other in _neighbours(names, session_id)), default=0)
        length = max(_id_tail_start(session_id) + SHORT_ID_LENGTH, shared + 1)
        shown[session_id] = session_id[:length]
    return shown


def shown_ids(ids: Iterable[Any], root: str | os.PathLike | None = None) -> dict[str, str]:
    """The one rule by which dshctl shows sessions (``ls``'s and ``stats``' tables, ``grep``'s lines):
    each id of ``ids`` — every session of the run, the rows of a table or the logs grep reads — as its
    :func:`short_ids` among ``ids`` and the sessions of ``root`` (default: :func:`sessions_root`, where a
    short id is looked up: :func:`find_session`). So no two sessions of one output share a shown id, and
    one of the sessions root opens when it is given back as a PATH. Values that are not ids (None, "",
    a header's non-string) are passed over: their rows show the log's path."""
    named = [i for i in ids if isinstance(i, str) and i]
    return short_ids(named, among=session_ids(root)) if named else {}


def _neighbours(names: list[tuple[str, str]], session_id: str) -> list[str]:
    """The names next to ``session_id`` in sorted ``(name, owner)`` pairs, other ids' own: the
    longest prefix ``session_id`` shares with any of them, it shares with one of these."""
    position = bisect.bisect_left(names, (session_id,))
    before = next((name for name, owner in reversed(names[max(0, position - 2) : position]) if owner != session_id), None)
    after = next((name for name, owner in names[position : position + 3] if owner != session_id), None)
    return [name for name in (before, after) if name is not None]


def session_ids(root: str | os.PathLike | None = None) -> list[str]:
    """The id of every session directory under ``root`` (default: :func:`sessions_root`) — the ids a
    prefix is resolved against (:func:`find_session`) — from directory names only; an unreadable
    root or project directory has none."""
    root_path = Path(root) if root is not None else _default_root()
    if root_path is None:
        return []
    try:
        projects = _scan(root_path, str(root_path)) if root_path.is_dir() else []
    except SourceError:
        return []
    ids = []
    for name, is_dir in projects:
        if _is_root_project_dir(name, is_dir):
            try:
                sessions = _scan(root_path / name, name)
            except SourceError:
                continue
            ids += [decode_session_dir_name(session) for session, session_is_dir in sessions
                    if session_is_dir and not session.startswith(".dsh-mkdir-")]
    return ids


def _is_sessions_root(path: Path) -> bool:
    """Whether ``path`` is the sessions root (:func:`sessions_root`), where ids are looked up
    (:func:`find_session`): read as :func:`session_dirs` reads it, so that each session an id opens is listed."""
    root = _default_root()
    try:
        return root is not None and os.path.realpath(path) == os.path.realpath(root)
    except (OSError, ValueError):
        return False


def _is_root_project_dir(name: str, is_dir: bool) -> bool:
    """Whether an entry of a sessions root is a project directory, as dsh reads a root: every
    sub-directory, whatever its name (§1.4), but dsh's ``.dsh-mkdir-*`` staging. Not only the
    ``--<slug>--`` names dsh writes: a folder renamed or copied in (``proj/<id>/``) is listed by a
    reading of the root, so the ids it shows open (:func:`find_session`)."""
    return is_dir and not name.startswith(".dsh-mkdir-")


def _common_prefix(a: str, b: str) -> int:
    length = 0
    for x, y in zip(a, b):
        if x != y:
            break
        length += 1
    return length


def session_dirs(root: str | os.PathLike | None = None, project: str | None = None) -> list[SessionDir]:
    """Every session directory under ``root`` (default: :func:`sessions_root`), from directory names
    only (no log is opened); ``project`` keeps only its project directory (:func:`project_dir_name`)."""
    root_path = Path(root) if root is not None else sessions_root()
    display = str(root_path)
    projects = [project_dir_name(project)] if project is not None else None
    found: list[SessionDir] = []
    if not root_path.is_dir():
        return found
    for name, is_dir in _scan(root_path, display):
        if not _is_root_project_dir(name, is_dir) or (projects is not None and name not in projects):
            continue
        project_path = root_path / name
        for session_name, session_is_dir in _scan(project_path, os.path.join(display, name)):
            if session_is_dir and not session_name.startswith(".dsh-mkdir-"):
                session_path = project_path / session_name
                found.append(SessionDir(decode_session_dir_name(session_name), name, session_path, _newest_log(session_path)))
    return found


def _newest_log(session_path: Path) -> Path | None:
    """The highest canonical generation file of a session directory (unchecked: :func:`resolve` checks)."""
    try:
        names = [(parse_generation_name(name), name) for name in os.listdir(session_path)]
    except OSError:
        return None
    chosen = max(((parsed[0], name) for parsed, name in names if parsed is not None), default=None)
    return None if chosen is None else session_path / chosen[1]


def find_session(query: str, root: str | os.PathLike | None = None, project: str | None = None) -> Path:
    """The session directory whose id ``query`` names (the id, or a prefix of it or of its part after
    ``session-``, as git takes a short hash). None → :class:`SourceError`; several →
    :class:`UsageError` listing them.

    A session is named by its directory's name first, as dsh names it (§1.2). Only when no directory's
    name matches are the headers read (the header line of each session's chosen log, nothing more:
    :func:`dshctl.source.headers.header_id`), so that the id ``ls``, ``stats`` and ``grep`` show — the
    header's — opens a session whose folder was renamed away from it (dsh refuses such a session, §1.4;
    dshctl reads it). Where several directories' names match, the one whose header matches too is
    chosen: a folder renamed onto another session's id shows its header's id, and opens by it. A prefix
    that names a folder is looked up in the headers of folders named as no id is (``mywork``) too, so
    that a prefix two shown ids share is refused as ambiguous, never opens one of them unsaid."""
    from dshctl.errors import UsageError

    dirs = [found for found in session_dirs(root, project) if found.log is not None]
    matches = _distinct(_matching(dirs, query))
    if len(matches) > 1:  # a folder named as another session (renamed onto its id): its header tells
        matches = _held(matches, query) or matches
    if not matches:
        matches = _distinct(_matching(_by_header_id(dirs), query))
    elif matches[0].id != query:  # a prefix: a folder renamed to a name no id has may hold a match too
        named = {found.path for found in matches}
        renamed = [found for found in dirs if found.path not in named and not _looks_like_id(found.path.name)]
        held = [found for found in _by_header_id(renamed) if id_matches(found.id, query)]
        matches = _distinct(_matching(matches + held, query))  # a whole id a header holds is that session
    if not matches:
        where = root if root is not None else sessions_root()
        raise SourceError(f"no such file, directory or session id (looked under {where})", file=query)
    if len(matches) > 1:
        listed = "; ".join(_listed(found) for found in matches[:10])
        more = f"; and {len(matches) - 10} more" if len(matches) > 10 else ""
        raise UsageError(f"session id prefix {query!r} is ambiguous: {listed}{more}")
    return matches[0].path


def _distinct(dirs: list[SessionDir]) -> list[SessionDir]:
    """Each session directory once however many links lead to it (``alias -> --p--``), as ``ls`` lists it:
    by its real path, the one reached through no link kept (only candidates are looked at: few)."""
    if len(dirs) < 2:
        return dirs
    kept: dict[str, SessionDir] = {}
    for found in dirs:
        try:
            real = os.path.realpath(found.path)
        except (OSError, ValueError):
            real = str(found.path)
        held = kept.get(real)
        if held is None or (_linked(held) and not _linked(found)):
            kept[real] = found
    chosen = {id(found) for found in kept.values()}
    return [found for found in dirs if id(found) in chosen]


def _linked(found: SessionDir) -> bool:
    """Whether a session directory was reached through a link (its folder's or its project's)."""
    return os.path.islink(found.path) or os.path.islink(found.path.parent)


def _matching(dirs: list[SessionDir], query: str) -> list[SessionDir]:
    """The sessions ``query`` names: the one whose id it is, else every one whose id it begins."""
    return [found for found in dirs if found.id == query] or [found for found in dirs if id_matches(found.id, query)]


_ID_LIKE_NAME = re.compile(r".*session-.+|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
"""A folder name as dsh writes session ids (FORMAT.md §1.2: ``[<agent>-]session-<…>`` or a bare UUID)."""


def _looks_like_id(folder: str) -> bool:
    """Whether a session folder's name looks like a session id: one that does not was renamed, and its
    header alone says which id it holds (read only for a prefix, which its header may match too)."""
    return _ID_LIKE_NAME.fullmatch(decode_session_dir_name(folder)) is not None


def _held(dirs: list[SessionDir], query: str) -> list[SessionDir]:
    """Of sessions whose directories ``query`` names, those whose header names it too."""
    from dshctl.source.headers import header_id

    held = [(found, header_id(found.log) if found.log is not None else None) for found in dirs]
    return [found for found, session_id in held if session_id is not None and id_matches(session_id, query)]


def _by_header_id(dirs: list[SessionDir]) -> list[SessionDir]:
    """The sessions whose header holds another id than their directory's name, each under its header's
    id (a session whose header says its name was not matched by it either)."""
    from dshctl.source.headers import header_id

    renamed = []
    for found in dirs:
        held = header_id(found.log) if found.log is not None else None
        if held is not None and held != found.id:
            renamed.append(SessionDir(held, found.project, found.path, found.log))
    return renamed


def _listed(found: SessionDir) -> str:
    """A session as an ambiguity lists it: its id and its project, and its folder where that is not its id."""
    folder = found.path.name
    return f"{found.id} ({found.project})" if decode_session_dir_name(folder) == found.id else f"{found.id} ({found.project}/{folder})"


def written_key(log: str | os.PathLike) -> tuple[int, str] | None:
    """How recently ``log`` was written, as ``--latest`` and ``--follow ROOT`` compare logs: its
    modification time in ns, ties going to the later path; None when it cannot be read."""
    try:
        return os.stat(log).st_mtime_ns, str(log)
    except OSError:
        return None


def latest_session(root: str | os.PathLike | None = None, project: str | None = None) -> Path:
    """The session directory whose log was written last under ``root`` (default: :func:`sessions_root`);
    ``project`` keeps only that project's sessions (:func:`project_dir_name`)."""
    newest: tuple[tuple[int, str], Path] | None = None
    for found in session_dirs(root, project):
        written = written_key(found.log) if found.log is not None else None
        if written is not None and (newest is None or written > newest[0]):
            newest = (written, found.path)
    if newest is None:
        where = root if root is not None else sessions_root()
        scope = f" for project {project}" if project is not None else ""
        raise SourceError(f"no session{scope} to take as --latest", file=str(where))
    return newest[1]
