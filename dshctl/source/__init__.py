"""Where dsh session logs live and how their bytes become physical lines.

* :mod:`.paths` — what the user typed (``-``, a log file, a session, project or sessions-root directory,
  an unzipped web export) → :class:`LogRef` objects, choosing the generation file as dsh does
  (FORMAT.md §1.2–§1.4, §1.10, Appendix A); :func:`as_ref` for library callers.
* :mod:`.lines` — :class:`LineReader`: one log → ``(physical line number, bytes)`` with bounded memory,
  split on LF only, the torn tail reported in :class:`TornTail` (FORMAT.md §1.6–§1.8, §8.5).
* :mod:`.zipped` — a dsh Web UI export ZIP read in place; :mod:`.stdin` — standard input as a PATH (a log
  streamed, or an export ZIP held whole).
* :mod:`.zstd` — the zstd half of the reader: frames decoded by a fast path and a structural walk
  that agree to the byte.

Nothing here parses JSON; the header and record layers (:mod:`dshctl.reader`) sit on top. The public
names are re-exported here: ``from dshctl.source import resolve, LineReader``.
"""

from __future__ import annotations

from dshctl.source.lines import (
    DEFAULT_MAX_LINE_BYTES,
    MAX_LINE_BYTES_ENV,
    LineReader,
    TornTail,
    max_line_bytes_from_env,
)
from dshctl.source.paths import (
    MAX_SUPPORTED_GENERATION,
    NO_CWD_DIR,
    LogRef,
    as_ref,
    SessionDir,
    decode_session_dir_name,
    find_session,
    id_matches,
    in_project,
    latest_session,
    no_logs_found,
    parse_generation_name,
    project_dir_name,
    project_key,
    resolve,
    resolve_named,
    resolve_one,
    session_log,
    session_dirs,
    session_ids,
    sessions_root,
    short_ids,
    shown_ids,
)

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "MAX_LINE_BYTES_ENV",
    "MAX_SUPPORTED_GENERATION",
    "NO_CWD_DIR",
    "LineReader",
    "LogRef",
    "TornTail",
    "as_ref",
    "SessionDir",
    "decode_session_dir_name",
    "find_session",
    "id_matches",
    "in_project",
    "latest_session",
    "max_line_bytes_from_env",
    "no_logs_found",
    "parse_generation_name",
    "project_dir_name",
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
]
