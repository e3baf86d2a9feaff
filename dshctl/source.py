"""Where dsh session logs live and how their bytes become physical lines.

Two halves:

* :func:`resolve` turns what the user typed (``-``, a log file, a session
  directory, a project directory, a sessions root, or an unzipped web export)
  into :class:`LogRef` objects, choosing the generation file the way dsh does
  (FORMAT.md §1.2–§1.4, §1.10, Appendix A).
* :class:`LineReader` streams one log as ``(physical line number, bytes)``
  pairs with bounded memory: raw JSONL or a concatenation of zstd frames,
  split on LF only, with the torn tail reported instead of yielded
  (FORMAT.md §1.6–§1.8, §8.5).

Nothing here parses JSON; the header and record layers sit on top.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from itertools import count
from pathlib import Path
from typing import BinaryIO, Iterator

import zstandard

from dshctl.errors import DshctlError, SourceError, UnsupportedVersion, UsageError

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "MAX_SUPPORTED_GENERATION",
    "LineReader",
    "LogRef",
    "TornTail",
    "decode_session_dir_name",
    "max_line_bytes_from_env",
    "parse_generation_name",
    "project_key",
    "resolve",
    "resolve_named",
    "sessions_root",
]

DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024
MAX_LINE_BYTES_ENV = "DSHCTL_MAX_LINE_BYTES"
MAX_SUPPORTED_GENERATION = 4

READ_CHUNK = 1024 * 1024
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
# RFC 8878: a block never regenerates more than Block_Maximum_Size = min(window, 128 KiB).
ZSTD_BLOCK_MAX = 128 * 1024
# One decompression call is fed at most this many blocks, so its output is bounded
# by BLOCKS_PER_CALL * 128 KiB whatever the compression ratio (decompression bombs).
MAX_BLOCKS_PER_CALL = 64
# Magic, descriptor, window byte, dictionary id and content size: enough to read a frame's declared size.
_FRAME_HEADER_MAX = 18

_MAX_SAFE_INT = 2**53 - 1
_GENERATION_NAME = re.compile(r"session(?:\.v([1-9][0-9]*))?\.jsonl(\.zstd)?")
_PROJECT_DIR_NAME = re.compile(r"--.+--")
NO_CWD_DIR = "_no-cwd"


# --------------------------------------------------------------------------- paths


def sessions_root() -> Path:
    """dsh's default JSONL root: ``$DSH_HOME/sessions``, else ``~/.dsh/sessions`` (§1.1).

    As in dsh's ``resolveDshHome``: a blank or whitespace-only ``DSH_HOME`` is
    unset, a leading ``~``/``~/`` is expanded, and the result is made absolute.
    """
    home = os.environ.get("DSH_HOME")
    if home is None or not home.strip():
        return Path.home() / ".dsh" / "sessions"
    if home == "~":
        home = str(Path.home())
    elif home.startswith("~/") or home.startswith("~\\"):
        home = str(Path.home() / home[2:])
    return Path(os.path.abspath(home)) / "sessions"


def parse_generation_name(name: str) -> tuple[int, bool] | None:
    """``(generation, zstd)`` for a canonical generation file name, else ``None``.

    Canonical: ``session.jsonl`` (0) or ``session.vN.jsonl`` (N >= 1, no leading
    zero, lowercase), optionally followed by ``.zstd``. ``session.v0.jsonl``,
    ``session.v01.jsonl``, temp files and generations beyond a safe integer are
    not canonical (dsh ``parseGenerationLogFilename``).
    """
    m = _GENERATION_NAME.fullmatch(name)
    if m is None:
        return None
    gen = 0 if m.group(1) is None else int(m.group(1))
    if gen > _MAX_SAFE_INT:
        return None
    return gen, m.group(2) is not None


def project_key(cwd: str) -> str:
    """dsh ``projectKey``: the lossy ``--<slug>--`` directory name of a project cwd (§1.2).

    Works on UTF-16 code units like dsh: ``/``, ``\\`` and ``:`` become ``-`` (a
    run of them one ``-``), ``[A-Za-z0-9._-]`` stay, anything else (``~``
    included) becomes ``~XXXX``; leading ``-`` are stripped (empty → ``root``);
    the slug is cut to 251 characters.
    """
    if not cwd:
        raise ValueError("cannot encode an empty project path")
    out: list[str] = []
    separator_run = False
    for unit in _utf16_units(cwd):
        if unit in (0x2F, 0x5C, 0x3A):  # / \ :
            if not separator_run:
                out.append("-")
            separator_run = True
            continue
        separator_run = False
        out.append(chr(unit) if _is_safe_unit(unit) else f"~{unit:04X}")
    slug = "".join(out).lstrip("-") or "root"
    return f"--{slug[:251]}--"


def decode_session_dir_name(name: str) -> str:
    """Inverse of dsh ``encodeSegment``: ``~XXXX`` → one UTF-16 code unit.

    Surrogate pairs written as two escapes are combined; a lone surrogate stays
    a lone surrogate (Python ``str`` can hold it). A ``~`` not followed by four
    hex digits cannot come from dsh and is kept literally.
    """
    if "~" not in name:
        return name
    units: list[int] = []
    i, n = 0, len(name)
    while i < n:
        ch = name[i]
        if ch == "~" and i + 5 <= n and _is_hex4(name[i + 1 : i + 5]):
            units.append(int(name[i + 1 : i + 5], 16))
            i += 5
            continue
        units.extend(_utf16_units(ch))
        i += 1
    raw = b"".join(u.to_bytes(2, "little") for u in units)
    return raw.decode("utf-16-le", "surrogatepass")


def _utf16_units(text: str) -> list[int]:
    raw = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(raw[i : i + 2], "little") for i in range(0, len(raw), 2)]


def _is_safe_unit(unit: int) -> bool:
    return (
        0x30 <= unit <= 0x39
        or 0x41 <= unit <= 0x5A
        or 0x61 <= unit <= 0x7A
        or unit in (0x2E, 0x5F, 0x2D)  # . _ -
    )


def _is_hex4(text: str) -> bool:
    return len(text) == 4 and all(c in "0123456789abcdefABCDEF" for c in text)


# --------------------------------------------------------------------------- resolve


@dataclass(frozen=True)
class LogRef:
    """One log file chosen to read.

    ``generation_from_name`` is what the *file name* says (0 for
    ``session.jsonl[.zstd]``, N for ``session.vN.jsonl[.zstd]``, ``None`` when
    the name is not canonical). The header's ``version`` is authoritative.
    Logs found inside an unzipped web export are ``None`` too: dsh exports
    every generation under the logical name ``session.jsonl`` (§1.10).

    ``problem`` is set only for entries found while walking a root, project
    dir or export whose directory could not be resolved (newer generation,
    mixed encodings, obsolete flat layout). Walking continues so one odd
    session does not hide the others; :class:`LineReader` raises ``problem``
    when iterated. An explicitly named session directory raises at once.
    """

    path: Path | None
    display: str
    generation_from_name: int | None
    session_dir: Path | None
    problem: DshctlError | None = field(default=None, compare=False)


def resolve(spec: str) -> list[LogRef]:
    """Turn a command-line argument into the logs it names.

    * ``-`` → stdin.
    * a file (any name) → that file.
    * a session directory (holds canonical generation files) → its highest
      generation; mixed raw/zstd encodings → :class:`SourceError`; highest
      generation above 4 → :class:`UnsupportedVersion` (never a fallback).
      A session directory with a ``subagents/`` (or ``media/``) subdirectory is
      an unzipped dsh web export (§1.10): its ``subagents/<id>/`` logs are
      returned as separate logs after the root log.
    * a project directory (``--<slug>--`` or ``_no-cwd``) or a sessions root
      (holds project directories) → the chosen log of every session directory
      in it, sorted by path; session directories without any log are skipped.

    Results other than stdin are sorted by path.
    """
    if spec == "-":
        if sys.stdin is None:  # the process started with standard input closed
            raise SourceError("standard input is closed", file="<stdin>")
        return [LogRef(path=None, display="<stdin>", generation_from_name=None, session_dir=None)]
    if spec == "":
        raise SourceError("no such file or directory", file=spec)
    path = Path(spec)
    try:
        is_dir = path.is_dir()
        exists = is_dir or path.exists()
    except OSError as exc:  # e.g. permission denied on a parent, name too long
        raise SourceError(_os_message(exc), file=spec) from None
    if not exists:
        raise SourceError("no such file or directory", file=spec)
    if not is_dir:
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


def resolve_named(spec: str) -> list[LogRef]:
    """:func:`resolve` for a path the user named: one that holds no log is an error, so a mistyped
    path cannot read as an empty, clean result (a CI job would pass on nothing)."""
    refs = resolve(spec)
    if not refs:
        raise no_logs_found(spec)
    return refs


def no_logs_found(spec: str) -> SourceError:
    return SourceError("no dsh session logs found", file=spec)


def _resolve_dir(path: Path, display: str) -> list[LogRef]:
    entries = _scan(path, display)
    if any(parse_generation_name(name) is not None for name, is_dir in entries if not is_dir):
        refs = _session_logs(path, display, entries, explicit=True)
        return sorted(refs, key=_sort_key)
    if _is_project_dir_name(_real_name(path)):
        return sorted(_project_logs(path, display, entries), key=_sort_key)
    project_dirs = [name for name, is_dir in entries if is_dir and _is_project_dir_name(name)]
    if project_dirs:
        refs: list[LogRef] = []
        for name in project_dirs:
            sub = path / name
            sub_display = os.path.join(display, name)
            refs.extend(_project_logs(sub, sub_display, _scan(sub, sub_display)))
        return sorted(refs, key=_sort_key)
    if any(is_dir and name == "subagents" for name, is_dir in entries):
        raise SourceError(
            "looks like an unzipped dsh session export but has no session.jsonl next to subagents/",
            file=display,
        )
    if not _meaningful(entries) and _may_be_root(path):
        return []
    raise SourceError(
        "not a dsh log location: expected a session directory (session[.vN].jsonl[.zstd]), "
        "a project directory (--<slug>--/<session>/) or a sessions root (--<slug>--/ subdirectories)",
        file=display,
    )


def _scan(path: Path, display: str) -> list[tuple[str, bool]]:
    """``(name, is_dir)`` of every entry, symlinks followed; sorted by name."""
    try:
        out = []
        with os.scandir(path) as it:
            for entry in it:
                try:
                    is_dir = entry.is_dir()
                    if not is_dir and not entry.is_file():
                        continue  # fifo, socket, dangling link: never a log location
                except OSError:
                    continue
                out.append((entry.name, is_dir))
    except OSError as exc:
        raise SourceError(_os_message(exc), file=display) from None
    out.sort()
    return out


def _session_logs(
    path: Path, display: str, entries: list[tuple[str, bool]], *, explicit: bool, exported: bool = False
) -> list[LogRef]:
    """The chosen log of one session directory, plus its export subagents.

    ``explicit``: errors choosing this directory's own log are raised;
    otherwise they become a ``problem`` ref. A directory without any log
    returns ``[]`` (only called for explicit dirs when logs exist).
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
    if is_export and any(is_dir and name == "subagents" for name, is_dir in entries):
        sub_root = path / "subagents"
        sub_root_display = os.path.join(display, "subagents")
        for name, is_dir in _scan(sub_root, sub_root_display):
            if not is_dir:
                continue
            child = sub_root / name
            child_display = os.path.join(sub_root_display, name)
            refs.extend(
                _session_logs(child, child_display, _scan(child, child_display), explicit=False, exported=True)
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
    raw = [name for _, zstd, name in found if not zstd]
    packed = [name for _, zstd, name in found if zstd]
    if raw and packed:
        raise SourceError(
            f"session directory holds both raw and zstd generation files ({raw[0]}, {packed[0]}); "
            "dsh refuses a directory that mixes encodings",
            file=display,
        )
    gen, _, name = max(found)
    if gen > MAX_SUPPORTED_GENERATION:
        raise UnsupportedVersion(
            f"written by a newer dsh than this tool supports ({name}); "
            f"dshctl reads generations 0-{MAX_SUPPORTED_GENERATION}",
            file=os.path.join(display, name),
        )
    return LogRef(
        path=path / name,
        display=os.path.join(display, name),
        generation_from_name=gen,
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


def _meaningful(entries: list[tuple[str, bool]]) -> bool:
    return any(
        not (name.startswith(".dsh-mkdir-") or name.endswith(".tmp") or name == "session.lock")
        for name, _ in entries
    )


def _may_be_root(path: Path) -> bool:
    """An empty directory is an (empty) root only if it looks like one."""
    if _real_name(path) == "sessions":
        return True
    try:
        return os.path.samefile(path, sessions_root())
    except OSError:
        return False


def _sort_key(ref: LogRef) -> str:
    return str(ref.path) if ref.path is not None else ""


def _os_message(exc: OSError) -> str:
    return exc.strerror or str(exc)


# --------------------------------------------------------------------------- lines


@dataclass(frozen=True)
class TornTail:
    """The end of the input that was not a complete line (not corruption, §8.5)."""

    line: int  # physical line number the torn fragment would have had
    bytes: int  # size of the discarded fragment (decoded bytes)
    reason: str  # "no final LF" | "torn zstd frame"
    compressed_bytes: int | None = None  # bytes of the torn zstd frame in the file (zstd only)


def max_line_bytes_from_env() -> int:
    """``DSHCTL_MAX_LINE_BYTES`` (plain bytes, or with K/M/G[iB] suffix), else 64 MiB."""
    value = os.environ.get(MAX_LINE_BYTES_ENV)
    if value is None or not value.strip():
        return DEFAULT_MAX_LINE_BYTES
    m = re.fullmatch(r"\s*([0-9]+)\s*([kKmMgG]?)(?:i?[bB])?\s*", value)
    if m is None or int(m.group(1)) <= 0:
        raise UsageError(f"{MAX_LINE_BYTES_ENV} must be a positive byte count such as 134217728 or 128M, got {value!r}")
    scale = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}[m.group(2).lower()]
    return int(m.group(1)) * scale


def _human(n: int) -> str:
    for unit, size in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} bytes"


class LineReader:
    """Iterate complete LF-terminated lines of one log with bounded memory.

    Yields ``(physical line number, line bytes without the LF)``; a CR stays
    part of the line. zstd is recognised by its magic, never by the suffix.
    Every concatenated frame is decoded: frames are located structurally
    (magic, frame header, block headers, checksum) the way dsh's scanner does,
    so a complete frame must decode and end on a line boundary, while an
    incomplete final frame is torn: the complete lines of its available prefix
    are yielded and the rest is reported in :attr:`torn_tail`.

    Memory stays near ``max_line_bytes``: each decompression call is fed at
    most ``max_line_bytes // 128 KiB`` (1..64) zstd blocks, so its output is
    bounded whatever the compression ratio, and a line is refused as soon as
    its buffered prefix exceeds the limit.

    Attributes (valid during and after iteration): ``compressed``, ``frames``
    (complete zstd frames decoded), ``first_frame_lines`` (lines that ended in
    frame 1, set once frame 1 is complete; ``None`` for raw input),
    ``torn_tail``, ``bytes_read`` (file bytes), ``bytes_decoded`` (plain bytes),
    ``torn_frame_start_line`` (first physical line number that came from a torn
    final zstd frame; lines from there on are not in a complete frame, so damage
    there is a torn tail, not corruption). It is set when the tear is detected:
    before any line of the torn frame is yielded when that frame is at most one
    decompression call (``max_line_bytes // 128 KiB`` blocks, 8 MiB by default)
    and declares its size, as dsh's writer does; for larger or size-less frames
    earlier lines of the torn frame may already have been yielded, so decide
    after iteration in that case. A reader iterates once.
    """

    def __init__(self, ref: LogRef, *, max_line_bytes: int | None = None):
        self.ref = ref
        self.max_line_bytes = max_line_bytes_from_env() if max_line_bytes is None else max_line_bytes
        if self.max_line_bytes <= 0:
            raise UsageError("max_line_bytes must be positive")
        self.compressed = False
        self.frames = 0
        self.first_frame_lines: int | None = None
        self.torn_frame_start_line: int | None = None
        self.torn_tail: TornTail | None = None
        self.bytes_read = 0
        self.bytes_decoded = 0
        self._file: BinaryIO | None = None
        self._owns_file = False
        self._started = False
        # pending fragment of the current line, kept as pieces to avoid quadratic joins
        self._pending: list[bytes] = []
        self._pending_len = 0
        self._line = 0  # last physical line number yielded

    # -- lifecycle ------------------------------------------------------------

    def close(self) -> None:
        f, self._file = self._file, None
        if f is not None and self._owns_file:
            try:
                f.close()
            except OSError:
                pass

    def __enter__(self) -> "LineReader":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __iter__(self) -> Iterator[tuple[int, bytes]]:
        if self._started:
            raise RuntimeError("a LineReader can be iterated only once")
        self._started = True
        return self._iterate()

    iter_lines = __iter__

    # -- reading --------------------------------------------------------------

    def _error(self, message: str, line: int | None = None) -> SourceError:
        return SourceError(message, file=self.ref.display, line=line)

    def _open(self) -> BinaryIO:
        if self.ref.problem is not None:
            raise self.ref.problem
        if self.ref.path is None:
            self._owns_file = False
            return sys.stdin.buffer
        try:
            f = open(self.ref.path, "rb")
        except OSError as exc:
            raise self._error(_os_message(exc)) from None
        self._owns_file = True
        return f

    def _read(self, n: int) -> bytes:
        try:
            data = self._file.read(n)  # type: ignore[union-attr]
        except OSError as exc:
            raise self._error(f"read failed: {_os_message(exc)}") from None
        if data:
            self.bytes_read += len(data)
        return data or b""

    def _iterate(self) -> Iterator[tuple[int, bytes]]:
        self._file = self._open()
        try:
            first = self._read(READ_CHUNK)
            while 0 < len(first) < 4:  # a pipe may hand out fewer bytes than asked
                more = self._read(READ_CHUNK)
                if not more:
                    break
                first += more
            if not first:
                raise self._error("empty file: not a dsh log")
            if first[:4] == ZSTD_MAGIC or (len(first) < 4 and ZSTD_MAGIC.startswith(first)):
                self.compressed = True
                yield from self._zstd_lines(first)
            else:
                yield from self._raw_lines(first)
        finally:
            self.close()

    # -- line splitting ---------------------------------------------------------

    def _split(self, data: bytes) -> list[bytes]:
        """Complete lines ending in ``data``; the unterminated rest joins the pending fragment."""
        if not data:
            return []
        self.bytes_decoded += len(data)
        parts = data.split(b"\n")
        tail = parts.pop()
        if not parts:
            self._pending.append(tail)
            self._pending_len += len(tail)
            if self._pending_len > self.max_line_bytes:
                raise self._too_long(self._line + 1)
            return parts
        if self._pending:
            self._pending.append(parts[0])
            parts[0] = b"".join(self._pending)
            if len(parts[0]) > self.max_line_bytes:
                raise self._too_long(self._line + 1)
        if len(data) > self.max_line_bytes:
            for i, line in enumerate(parts):
                if len(line) > self.max_line_bytes:
                    raise self._too_long(self._line + 1 + i)
        if tail:
            self._pending = [tail]
            self._pending_len = len(tail)
            if self._pending_len > self.max_line_bytes:
                raise self._too_long(self._line + len(parts) + 1)
        else:
            self._pending = []
            self._pending_len = 0
        return parts

    def _too_long(self, line: int) -> SourceError:
        return self._error(
            f"line {line} is longer than {_human(self.max_line_bytes)} "
            f"(the limit is {self.max_line_bytes} bytes); "
            f"set {MAX_LINE_BYTES_ENV} to raise the limit",
            line=line,
        )

    def _raw_lines(self, first: bytes) -> Iterator[tuple[int, bytes]]:
        data = first
        while data:
            lines = self._split(data)
            if lines:
                start = self._line + 1
                self._line += len(lines)
                yield from zip(count(start), lines)
            data = self._read(READ_CHUNK)
        if self._pending_len:
            self.torn_tail = TornTail(line=self._line + 1, bytes=self._pending_len, reason="no final LF")
            self._pending = []
            self._pending_len = 0

    # -- zstd -----------------------------------------------------------------

    def _zstd_lines(self, first: bytes) -> Iterator[tuple[int, bytes]]:
        if self.ref.path is not None and self._file.seekable():  # type: ignore[union-attr]
            return self._zstd_fast(first)
        return self._zstd_walk(first)

    def _blocks_per_call(self) -> int:
        return max(1, min(MAX_BLOCKS_PER_CALL, self.max_line_bytes // ZSTD_BLOCK_MAX))

    def _zstd_fast(self, first: bytes) -> Iterator[tuple[int, bytes]]:
        """The happy path for frames that declare a bounded size, as dsh's writer's do:
        python-zstandard finds each frame's end itself (a decompressobj stops there), so no block
        header is read in Python and no line is yielded before its frame is complete. Anything else
        -- bad magic, a reserved header bit, no or a large declared size, a decoder error, EOF inside
        a frame -- hands the rest of the file to :meth:`_zstd_walk`, which reports it exactly."""
        out_bound = self._blocks_per_call() * ZSTD_BLOCK_MAX
        limit = self.max_line_bytes
        new_frame = zstandard.ZstdDecompressor().decompressobj
        content_size = zstandard.frame_content_size
        data = first
        view = memoryview(data)
        base = 0  # file offset of data[0]
        pos = 0
        frame_no = 0
        while True:
            if len(data) - pos < _FRAME_HEADER_MAX:
                data, base, pos = self._refill(data, base, pos)
                view = memoryview(data)
                if pos == len(data):
                    return  # clean end between frames
            frame_no += 1
            size = -1
            if len(data) - pos > 4 and data.startswith(ZSTD_MAGIC, pos) and not data[pos + 4] & 0x18:
                try:
                    size = content_size(view[pos : pos + _FRAME_HEADER_MAX])
                except zstandard.ZstdError:
                    pass
            if not 0 <= size <= out_bound:
                yield from self._walk_from(base + pos, frame_no)
                return
            fstart = base + pos
            piece = 1024 if size < 4096 else min(size >> 2, 1 << 16)  # few calls, little left over to copy
            dobj = new_frame()
            outs: list[bytes] = []
            try:
                while True:
                    if pos == len(data):
                        data, base, pos = self._refill(data, base, pos)
                        view = memoryview(data)
                        if pos == len(data):
                            break  # EOF inside the frame
                    chunk = view[pos : pos + piece]
                    out = dobj.decompress(chunk)
                    if out:
                        outs.append(out)
                    if dobj.eof:
                        pos += len(chunk) - len(dobj.unused_data)
                        break
                    pos += len(chunk)
            except zstandard.ZstdError:
                pass
            if not dobj.eof:
                yield from self._walk_from(fstart, frame_no)
                return
            out = outs[0] if len(outs) == 1 else b"".join(outs)
            if out.endswith(b"\n") and not self._pending and len(out) <= limit:
                # the common case: a whole batch of records
                self.bytes_decoded += len(out)
                if out.find(b"\n") == len(out) - 1:  # stops at the first LF: cheap either way
                    self._line += 1
                    yield self._line, out[:-1]
                else:
                    lines = out.split(b"\n")
                    lines.pop()
                    start = self._line + 1
                    self._line += len(lines)
                    yield from zip(count(start), lines)
                self.frames += 1
                if self.frames == 1:
                    self.first_frame_lines = self._line
            else:
                yield from self._frame_lines(out)
                self._end_frame(frame_no)

    def _refill(self, data: bytes, base: int, pos: int) -> tuple[bytes, int, int]:
        """The unread rest of ``data`` followed by the next read; ``(data, base, pos)`` afterwards."""
        more = self._read(READ_CHUNK)
        if not more:
            return data, base, pos
        return (data[pos:] + more if pos < len(data) else more), base + pos, 0

    def _walk_from(self, fstart: int, frame_no: int) -> Iterator[tuple[int, bytes]]:
        """The rest of the file, from frame ``frame_no`` at file offset ``fstart``, by the walk."""
        try:
            self._file.seek(fstart)  # type: ignore[union-attr]
        except OSError as exc:
            raise self._error(f"read failed: {_os_message(exc)}") from None
        self.bytes_read = fstart
        return self._zstd_walk(self._read(READ_CHUNK), start=fstart, frame_no=frame_no - 1)

    def _frame_lines(self, out: bytes) -> Iterator[tuple[int, bytes]]:
        """The lines of a complete frame's (last) output."""
        if not self._pending and len(out) <= self.max_line_bytes and out.endswith(b"\n"):
            # the common case: a whole batch of records, nothing carried over
            self.bytes_decoded += len(out)
            lines = out.split(b"\n")
            lines.pop()
        else:
            lines = self._split(out)
        if len(lines) == 1:
            self._line += 1
            yield self._line, lines[0]
        elif lines:
            start = self._line + 1
            self._line += len(lines)
            yield from zip(count(start), lines)

    def _end_frame(self, frame_no: int) -> None:
        """Close complete frame ``frame_no``: it must end on a record boundary."""
        if self._pending_len:
            raise self._error(
                f"complete zstd frame {frame_no} ends inside a record "
                f"({self._pending_len} bytes after the last LF)",
                line=self._line + 1,
            )
        self.frames += 1
        if self.frames == 1:
            self.first_frame_lines = self._line

    def _zstd_walk(self, first: bytes, start: int = 0, frame_no: int = 0) -> Iterator[tuple[int, bytes]]:
        # Frames are located structurally, like dsh's scanZstdFrames (RFC 8878 §3.1.1):
        # magic, frame header descriptor, optional window/dictionary/content-size
        # fields, 3-byte block headers, optional 4-byte checksum. `src` holds the
        # input from `feed_from` on; offsets are absolute, `base` maps them into buf.
        blocks_per_call = self._blocks_per_call()
        out_bound = blocks_per_call * ZSTD_BLOCK_MAX
        dctx = zstandard.ZstdDecompressor()
        src = _Buffer(first, self._read, start)
        buf = src.buf  # the same bytearray for the whole run (compaction is in place)
        fstart = start  # absolute offset of the frame being decoded
        while True:
            base = src.start
            if base + len(buf) <= fstart:
                if not src.ensure(fstart + 1):
                    return  # clean end between frames
                base = src.start
            frame_no += 1
            frame_first_line = self._line + 1
            dobj = None
            feed_from = fstart
            one_shot = False
            torn = False
            try:
                # --- frame header ---
                if base + len(buf) < fstart + 5:
                    ok = src.ensure(fstart + 5)
                    base = src.start
                    if not ok:
                        have = base + len(buf) - fstart
                        if have >= 4 and not buf.startswith(ZSTD_MAGIC, fstart - base):
                            raise self._bad_magic(frame_no, bytes(buf[fstart - base : fstart - base + 4]))
                        if have < 4:
                            feed_from = base + len(buf)  # nothing worth decoding
                        raise _Torn
                r = fstart - base
                if not buf.startswith(ZSTD_MAGIC, r):
                    raise self._bad_magic(frame_no, bytes(buf[r : r + 4]))
                fhd = buf[r + 4]
                if fhd & 0x18:
                    raise self._error(f"corrupt zstd frame {frame_no}: reserved frame-header bit set")
                single_segment = fhd & 0x20
                fcs_flag = fhd >> 6
                fcs_bytes = (1 if single_segment else 0) if fcs_flag == 0 else (1 << fcs_flag)
                p = fstart + 5 + (0 if single_segment else 1) + (0, 1, 2, 4)[fhd & 3] + fcs_bytes
                if base + len(buf) < p:
                    ok = src.ensure(p)
                    base = src.start
                    if not ok:
                        raise _Torn
                if fcs_bytes:
                    fcs = int.from_bytes(buf[p - fcs_bytes - base : p - base], "little")
                    if fcs_bytes == 2:
                        fcs += 256
                    # A small frame that declares its size is decoded and verified in
                    # one call; a declared size is only trusted up to the call bound.
                    one_shot = 0 < fcs <= out_bound
                pending_blocks = 0
                # --- blocks ---
                while True:
                    if base + len(buf) < p + 3:
                        ok = src.ensure(p + 3)
                        base = src.start
                        if not ok:
                            raise _Torn
                    r = p - base
                    bh = buf[r] | buf[r + 1] << 8 | buf[r + 2] << 16
                    btype = (bh >> 1) & 3
                    bsize = bh >> 3
                    if btype == 3:
                        raise self._error(f"corrupt zstd frame {frame_no}: reserved block type")
                    if bsize > ZSTD_BLOCK_MAX:
                        raise self._error(f"corrupt zstd frame {frame_no}: block larger than 128 KiB")
                    p += 4 if btype == 1 else 3 + bsize
                    if base + len(buf) < p:
                        ok = src.ensure(p)
                        base = src.start
                        if not ok:
                            raise _Torn
                    pending_blocks += 1
                    if bh & 1:  # last block
                        break
                    if pending_blocks >= blocks_per_call:
                        # Feed what we have: bounded output whatever the ratio.
                        one_shot = False
                        if dobj is None:
                            dobj = dctx.decompressobj()
                        lines = self._split(self._feed(dobj, buf[feed_from - base : p - base], frame_no))
                        feed_from = p
                        src.release(p)
                        pending_blocks = 0
                        if lines:
                            start = self._line + 1
                            self._line += len(lines)
                            yield from zip(count(start), lines)
                if fhd & 0x04:  # content checksum
                    p += 4
                    if base + len(buf) < p:
                        ok = src.ensure(p)
                        base = src.start
                        if not ok:
                            raise _Torn
            except _Torn:
                torn = True
            if torn:
                self.torn_frame_start_line = frame_first_line
                yield from self._torn_frame(dctx, dobj, src, fstart, feed_from, frame_no)
                return
            # --- complete frame [fstart, p) ---
            try:
                if one_shot:
                    out = dctx.decompress(buf[fstart - base : p - base])
                else:
                    if dobj is None:
                        dobj = dctx.decompressobj()
                    out = dobj.decompress(buf[feed_from - base : p - base])
                    if not dobj.eof or dobj.unused_data:
                        raise self._error(
                            f"corrupt zstd frame {frame_no}: the decoder did not end the frame where its blocks end"
                        )
            except zstandard.ZstdError as exc:
                raise self._error(f"corrupt zstd frame {frame_no}: {_zstd_message(exc)}") from None
            yield from self._frame_lines(out)
            self._end_frame(frame_no)
            fstart = p
            src.release(p)

    def _feed(self, dobj, data: bytes, frame_no: int) -> bytes:
        try:
            return dobj.decompress(data)
        except zstandard.ZstdError as exc:
            raise self._error(f"corrupt zstd frame {frame_no}: {_zstd_message(exc)}") from None

    def _torn_frame(self, dctx, dobj, src: "_Buffer", fstart: int, feed_from: int, frame_no: int):
        """EOF inside frame ``frame_no``: keep the complete lines of its decodable prefix."""
        if src.end > feed_from and src.end - fstart > 4:
            if dobj is None:
                dobj = dctx.decompressobj()
            lines = self._split(self._feed(dobj, src.get(feed_from, src.end), frame_no))
            if lines:
                start = self._line + 1
                self._line += len(lines)
                yield from zip(count(start), lines)
        self.torn_tail = TornTail(
            line=self._line + 1,
            bytes=self._pending_len,
            reason="torn zstd frame",
            compressed_bytes=src.end - fstart,
        )
        self._pending = []
        self._pending_len = 0

    def _bad_magic(self, frame_no: int, magic: bytes) -> SourceError:
        what = "a skippable frame" if (magic[0] & 0xF0) == 0x50 and magic[1:] == b"\x2a\x4d\x18" else magic.hex(" ")
        return self._error(f"corrupt zstd frame {frame_no}: bad frame magic ({what}); dsh logs hold only zstd frames")


class _Torn(Exception):
    """Internal: EOF fell inside the current zstd frame."""


class _Buffer:
    """A sliding window over the input, addressed by absolute byte offsets."""

    __slots__ = ("buf", "start", "keep", "eof", "_read")

    def __init__(self, first: bytes, read, start: int = 0):
        self.buf = bytearray(first)
        self.start = start  # absolute offset of buf[0]
        self.keep = start  # bytes before this absolute offset are no longer needed
        self.eof = False
        self._read = read

    @property
    def end(self) -> int:
        return self.start + len(self.buf)

    def ensure(self, upto: int) -> bool:
        """Make bytes up to absolute offset ``upto`` available; False at EOF."""
        buf = self.buf
        while self.start + len(buf) < upto:
            if self.eof:
                return False
            drop = self.keep - self.start
            if drop > 0:
                del buf[:drop]
                self.start = self.keep
            chunk = self._read(max(READ_CHUNK, upto - self.start - len(buf)))
            if not chunk:
                self.eof = True
                return False
            buf += chunk
        return True

    def get(self, a: int, b: int) -> bytearray:
        return self.buf[a - self.start : b - self.start]

    def release(self, upto: int) -> None:
        self.keep = upto


def _zstd_message(exc: Exception) -> str:
    msg = str(exc)
    for prefix in ("decompression error: ", "zstd decompressor error: "):
        if msg.startswith(prefix):
            msg = msg[len(prefix) :]
    return msg or type(exc).__name__
