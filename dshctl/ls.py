"""``dshctl ls``: one row per session under a sessions root.

Reads the header of each session's highest generation and, for the title and the turn count, scans
the lines for ``session/title`` and ``turn/start`` without decoding any other record; the duration
runs from ``createdAt`` to the time of the last record.
"""

from __future__ import annotations

from contextlib import closing
from typing import Any, Iterator

from .errors import EXIT_FINDINGS, EXIT_OK, EXIT_UNREADABLE, DshctlError, UnsupportedVersion
from .humanize import format_bytes, format_duration, utc_moment
from .jsvalues import NOT_JSON
from .options import LsOptions

_TITLE_MARK = b'"session/title"'
_TURN_MARK = b'"turn/start"'


def session_row(ref) -> dict[str, Any]:
    """The listing row of one log: id, cwd, createdAt, turns, duration, generation, compression, bytes,
    modified time, title."""
    from .reader import open_log

    try:
        status = ref.path.stat() if ref.path is not None else None
    except OSError:  # gone since it was found (or unreadable): opening it below tells why, in the row
        status = None
    row: dict[str, Any] = {
        "id": None,
        "cwd": None,
        "createdAt": None,
        "created": None,
        "turns": None,
        "durationMs": None,
        "generation": None,  # the header's; a name that says v0 proves nothing about unreadable bytes
        "compression": None,
        "bytes": ref.member.size if ref.member is not None else status.st_size if status is not None else None,
        "modifiedAt": int(status.st_mtime * 1000) if status is not None else None,
        "title": None,
        "path": ref.display,
        "error": None,
    }
    try:
        log = open_log(ref)
    except DshctlError as exc:
        row["error"] = exc.detail()
        if isinstance(exc, UnsupportedVersion):
            row["generation"] = exc.version
        return row
    try:
        header = log.header
        row.update(
            id=header.id,
            cwd=header.cwd,
            createdAt=header.createdAt,
            created=utc_moment(header.createdAt),
            generation=header.version,
            compression="zstd" if log.compressed else "none",
        )
        _scan_body(log.body_lines(), row)
    except DshctlError as exc:
        row["error"] = exc.detail()
    finally:
        log.close()
    return row


def _error_of(ref) -> str | None:
    """The one log's error as every other command words it (``x.jsonl:1: …``), read again: a row keeps
    only its text, and this is the failure path of one log."""
    from .reader import open_log

    try:
        open_log(ref).close()
    except DshctlError as exc:
        return str(exc)
    return None


def _scan_body(lines, row: dict[str, Any]) -> None:
    """Title, turn count and duration from the body lines, decoding only the lines that may hold them."""
    import msgspec

    decode = msgspec.json.decode
    turns, last = 0, None
    for _, line in lines:
        last = line
        if _TITLE_MARK in line or _TURN_MARK in line:
            kind, data = _record(decode, line)
            if kind == "session/title" and isinstance(data, dict) and isinstance(data.get("title"), str):
                row["title"] = data["title"]
            elif kind == "turn/start":
                turns += 1
    row["turns"] = turns
    end = _record_time(decode, last) if last is not None else None
    created = row["createdAt"]
    if isinstance(end, int) and isinstance(created, int) and created > 0 and end >= created:
        row["durationMs"] = end - created


def _record(decode, line: bytes) -> tuple[Any, Any]:
    try:
        obj = decode(line)
    except NOT_JSON:
        return None, None
    return (obj.get("type"), obj.get("data")) if isinstance(obj, dict) else (None, None)


def _record_time(decode, line: bytes) -> Any:
    try:
        obj = decode(line)
    except NOT_JSON:
        return None
    return obj.get("time") if isinstance(obj, dict) else None


def session_refs(root: str | None) -> list:
    """The logs of a named ROOT, which must hold a session; without ROOT, of the default sessions root,
    where none (the root empty or missing) is an answer: no sessions yet. In path order."""
    from .many import resolve_many, unique_refs

    return resolve_many([root]) if root is not None else unique_refs(_default_root_logs())


def iter_session_rows(refs: list, *, color: bool | str = "auto", progress: bool = True, cache: bool = True) -> Iterator[dict[str, Any]]:
    """One row per log, in order; many logs are read in worker processes (``progress``: with a progress
    bar on a terminal, coloured as ``color`` says). With ``cache``, a listing of more than one log takes
    the rows of the logs that did not change since a listing read them from the stats cache
    (:mod:`dshctl.stats.cache`)."""
    from .many import map_logs

    settings = dict(progress=progress, label="listing", color=color)
    listing = None
    if cache and len(refs) > 1:
        from .stats.cache import open_listing_cache

        listing = open_listing_cache(no_cache=False)
    if listing is None:
        with closing(map_logs(session_row, refs, **settings)) as mapped:
            for _, row in mapped:
                yield row
        return
    from .stats.cache import cached_rows

    try:
        yield from cached_rows(listing, session_row, refs, map_logs, **settings)
    finally:
        listing.close()


def _in_project(refs: list, project: str | None) -> list:
    """The logs of project ``project`` by the rule of ``--latest --project`` (where they are stored), so
    a listing of another project's logs does not read them."""
    from .source import in_project

    if project is None:
        return refs
    return [ref for ref in refs if ref.path is not None and in_project(ref.path, project)]


def _default_root_missing() -> bool:
    import os

    from .source import sessions_root

    return not os.path.lexists(sessions_root())


def _default_root_logs() -> list:
    import os

    from .stdio import warn
    from .source import resolve, sessions_root

    root = sessions_root()
    if not os.path.lexists(root):
        warn(f"{root}: no sessions root (dsh has not written a session here yet)")
        return []
    return resolve(str(root))


def _table_columns(full_ids: bool, id_width: int, copies: int | None):
    """The listing's columns: on a terminal the id stays whole (the short one, or with ``--long`` the whole
    one, other columns hidden first) and the cwd and title are cut with "…" on one line (the start of a
    cwd, the end of a title). Rows of one session (copies of a log) each name their log, cut around what
    tells them apart (``copies``: the least width of that column, :func:`dshctl.tables.distinct_least`;
    ``None``: no copies). TSV gives machine values: the whole id, ISO times, milliseconds, bytes."""
    from .tables import number, text

    if full_ids:
        key = text("id", fold=True, least=id_width)
    else:  # a short id longer than ID_LEAST stays whole too: cut, it would open nothing
        key = text("id", cut="start", least=max(ID_LEAST, id_width))
    log = [text("log", cut="distinct", least=copies, forms=("box",))] if copies is not None else []
    log.append(text("log", forms=("plain", "tsv") if copies is not None else ("tsv",)))  # the path, as given
    return [key, *log, text("cwd", cut="start", least=12, drop=2), text("created", drop=6, key=True), number("turns", drop=5),
            number("duration", drop=4, tsv="duration ms"), number("gen", drop=1), text("zstd", drop=0),
            number("size", drop=3, tsv="bytes"), text("title", cut="end", least=20, drop=7, key=True)]


ID_LEAST = 24
"""The id column's least width (wider when a short id is longer: a short id stays whole while another
column can be hidden); a path in its place is cut at its start."""


def _table_cells(row: dict[str, Any], name, log: str | None = None) -> list[Any]:
    """A listing row as the table shows it (and, in TSV, its machine values); ``name`` names its session
    (a short or whole id); ``log`` is its log's distinct path when the listing holds copies of a
    session."""
    from .tables import NULL_CELL, Cell, iso_moment

    return [
        # no id (a header that cannot be read): "—", empty in TSV; the log column names the log
        Cell(name(row["id"], row["path"]) if row["id"] else NULL_CELL, row["id"] or None),
        *([log] if log is not None else []),
        row["path"],
        row["cwd"],
        Cell(utc_moment(row["createdAt"], "%Y-%m-%d %H:%M") or "", iso_moment(row["createdAt"])),
        Cell("" if row["turns"] is None else f"{row['turns']:,}", row["turns"]),
        Cell("" if row["durationMs"] is None else format_duration(row["durationMs"]), row["durationMs"]),
        Cell(f"v{row['generation']}" if row["generation"] is not None else "", row["generation"]),
        Cell("yes" if row["compression"] == "zstd" else "no" if row["compression"] else "",
             None if not row["compression"] else row["compression"] == "zstd"),
        Cell(format_bytes(row["bytes"]), row["bytes"]),
        row["title"] if not row["error"] else f"(unreadable: {row['error']})",
    ]


def _whole_id(session_id: Any, path: str) -> str:
    return session_id or path


def _sort_key(sort: str):
    """Rows in ``sort`` order, oldest, smallest or A first; rows without the value last, by path."""
    field = {"time": "modifiedAt", "created": "createdAt", "size": "bytes", "title": "title"}[sort]

    def key(row: dict[str, Any]):
        value = row[field]
        return (value is None, value if value is not None else 0, row["path"])

    return key


def run_ls(root: str | None, options: LsOptions) -> int:
    """The ``dshctl ls`` command; 1 when a log among many cannot be read, 2 when the only one cannot."""
    from .many import Warnings
    from .output import emit
    from .tables import SessionNames, distinct_least, distinct_paths, print_table, table_form

    refs = session_refs(root)
    rows = session_rows(refs, options)
    failed = [row for row in rows if row["error"]]
    warnings = Warnings(verbose=options.verbose)
    for row in failed:
        warnings.add(row["path"], row["error"])
    caption = f"{len(rows)} session(s)" + (f" of {len(refs)}" if len(rows) != len(refs) else "")

    def table() -> None:
        if not rows and _no_sessions(len(refs), options, root):
            return
        name = _whole_id if options.full_ids else SessionNames([row["id"] for row in rows])
        form = table_form(options.table_form)
        ids = [row["id"] for row in rows if row["id"]]
        # copies of a session, or a log without an id (its header cannot be read): a column names each log
        named = len(ids) != len(set(ids)) or len(ids) != len(rows)
        logs = distinct_paths([row["path"] for row in rows]) if named else None
        id_width = max((len(name(row["id"], row["path"])) for row in rows if row["id"]), default=16)
        cells = (_table_cells(row, name, logs[i] if logs else None) for i, row in enumerate(rows))
        print_table(None, _table_columns(options.full_ids, id_width, distinct_least(logs) if logs else None), cells,
                    caption=caption, color=options.colored, form=form, listing=True)

    emit(options.output, document=lambda: {"sessions": rows}, records=lambda: rows, table=table)
    if failed and len(failed) == len(refs) == 1:  # the one log asked for cannot be read, as for the other commands
        from .stdio import error

        error(_error_of(refs[0]) or f"{failed[0]['path']}: {failed[0]['error']}")
        return EXIT_UNREADABLE
    warnings.report()
    return EXIT_FINDINGS if failed else EXIT_OK


def _no_sessions(count: int, options: LsOptions, root: str | None) -> bool:
    """A listing of no session, said as ``stats`` says it: a note on standard error (``--quiet`` hides
    it; no session is an answer, status 0), and on standard output the header line alone in plain and
    TSV, nothing on a terminal (True: the table is not drawn)."""
    from .tables import table_form

    if not options.quiet and not (root is None and not count and _default_root_missing()):  # warned already
        from .stdio import note

        filters = "--since/--until" if options.project is None else "--project, --since and --until"
        note(f"no sessions ({count} outside {filters})" if count else "no sessions")
    return table_form(options.table_form) == "box"


def session_rows(refs: list, options: LsOptions, *, progress: bool = True) -> list[dict[str, Any]]:
    """The listing rows of ``refs`` that ``--project``, ``--since`` and ``--until`` keep, in ``--sort``
    order (``ls --json``'s ``sessions``)."""
    read = iter_session_rows(_in_project(refs, options.project), color=options.color_when, progress=progress and options.progress,
                             cache=not options.no_cache)
    with closing(read):  # its reading ends with this call, also when an error or Ctrl-C ends the call
        return sorted((row for row in read if options.window.holds(row["createdAt"])), key=_sort_key(options.sort))
