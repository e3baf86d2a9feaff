"""One decoder per log generation, selected by the header's ``version``.

* :mod:`.v0` — v0 and v1: packed rows, legacy shapes, chunk folding (FORMAT §2.4–§2.6).
* :mod:`.current` — v2, v3, v4: embedded streams (FORMAT §2.2, §2.7, §2.10).

:func:`parse_header` validates line 1 leniently (dsh's hard requirements are
errors, the rest warnings that ``dshctl validate`` turns into findings).
"""

from __future__ import annotations

from typing import Any, Callable

from ..errors import FormatError, UnsupportedVersion
from ..model import SUPPORTED_GENERATIONS, Header

# What line 1 can be instead of a session header, in the one wording every command uses: the reader's
# errors (cat, stats, replay, grep, images) and validate's findings alike. Each is located at line 1
# (``x.jsonl:1: …``), so none names the line again.
NO_HEADER_LINE = "no header line: not a dsh session log"
TORN_HEADER_LINE = "the header line is not terminated by LF (torn before the first record): not a dsh session log"
HEADER_NOT_JSON = "not JSON: not a dsh session log"
ZSTD_NOT_JSON = "zstd data that is not JSON once decompressed: not a dsh session log"
NOT_A_SESSION_HEADER = 'not a dsh session header (expected {"type":"session", ...})'
NO_NUMERIC_VERSION = "not a dsh session header: it has no numeric version"

ZSTD_SUFFIXES = (".zst", ".zstd")


def unreadable_header(reason: str, *, compressed: bool, name: str) -> tuple[str, int | None]:
    """What a log whose line 1 is not JSON (``reason``: :data:`HEADER_NOT_JSON`, or
    :data:`TORN_HEADER_LINE` when it has no LF either) really is, and the line to locate that at (None:
    the file's first bytes). A file named as zstd whose first bytes are no zstd frame's magic number was
    read as text (dshctl tells zstd by its magic, never by the name), so it is neither; zstd data that
    decompresses to something else is said to be zstd. ``name`` is the log as shown."""
    suffix = next((suffix for suffix in ZSTD_SUFFIXES if name.lower().endswith(suffix)), None)
    if not compressed and suffix is not None:
        return f"named {suffix} but not a zstd frame (bad magic number), nor JSON: not a dsh session log", None
    return (ZSTD_NOT_JSON if compressed and reason == HEADER_NOT_JSON else reason), 1


def invalid_version(shown: str) -> str:
    """A numeric version that is no generation: ``shown`` is the value as written (``1.5``, ``-1``)."""
    return f"header version {shown} is not a non-negative integer"


def newer_version(version: int) -> str:
    return (f"written by a newer dsh than this tool supports (log format v{version}); "
            f"dshctl reads v0-v{max(SUPPORTED_GENERATIONS)}")


_HEADER_FIELDS = {
    "type",
    "version",
    "id",
    "createdAt",
    "cwd",
    "parentSession",
    "seedLength",
    "isSeeded",
    "origin",
    "delegationDepth",
    "agentPreset",
}


def parse_header(header_json: Any, warn: Callable[[str], None]) -> Header:
    """Line 1 → :class:`Header`. Refuses what dsh refuses before anything else (FORMAT §1.9)."""
    if not isinstance(header_json, dict) or header_json.get("type") != "session":
        raise FormatError(NOT_A_SESSION_HEADER, line=1)
    version = header_json.get("version")
    if isinstance(version, bool) or not isinstance(version, (int, float)):
        raise FormatError(NO_NUMERIC_VERSION, line=1)
    if version != int(version) or version < 0:
        raise FormatError(invalid_version(repr(version)), line=1)
    version = int(version)
    if version > max(SUPPORTED_GENERATIONS):
        raise UnsupportedVersion(newer_version(version), version=version, line=1)
    extra = {key: value for key, value in header_json.items() if key not in _HEADER_FIELDS}
    if extra:
        warn(f"header has keys dsh's released codecs refuse: {', '.join(sorted(extra))}")

    def optional(name: str, kind: type | tuple) -> Any:
        """The header member ``name`` if it has the type ``kind``; a wrong type is warned about and dropped."""
        value = header_json.get(name)
        if value is None:
            return None
        if isinstance(value, bool) and kind is not bool:
            warn(f"header {name} has the wrong type ({type(value).__name__})")
            return None
        if not isinstance(value, kind):
            warn(f"header {name} has the wrong type ({type(value).__name__})")
            return None
        return value

    header = Header(
        version=version,
        id=optional("id", str),
        createdAt=optional("createdAt", int),
        cwd=optional("cwd", str),
        parentSession=optional("parentSession", str),
        seedLength=optional("seedLength", int),
        isSeeded=optional("isSeeded", bool),
        origin=optional("origin", str),
        delegationDepth=optional("delegationDepth", int),
        agentPreset=optional("agentPreset", str),
        extra=extra or None,
    )
    if header.delegationDepth is None:
        warn("header lacks delegationDepth, which dsh's reader requires; reading leniently")
    if version >= 2 and header.isSeeded is None:
        warn("header lacks isSeeded, which v2+ requires; reading leniently")
    if header.id is None:
        warn("header lacks a session id")
    return header
