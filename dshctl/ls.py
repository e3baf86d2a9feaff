"""``dshctl ls``: one row per session under a sessions root.

Reads the header of each session's highest generation and, for the title, scans
the lines for ``session/title`` without decoding any other record.
"""

from __future__ import annotations

from typing import Any, Iterator

from .errors import EXIT_FINDINGS, EXIT_OK, EXIT_UNREADABLE, DshctlError
from .humanize import format_bytes, utc_moment

_TITLE_MARK = b'"session/title"'


def session_row(ref) -> dict[str, Any]:
    """The listing row of one log: id, cwd, createdAt, generation, compression, bytes, title."""
    import msgspec

    from .reader import open_log

    row: dict[str, Any] = {
        "id": None,
        "cwd": None,
        "createdAt": None,
        "created": None,
        "generation": ref.generation_from_name,
        "compression": None,
        "bytes": ref.path.stat().st_size if ref.path is not None else None,
        "title": None,
        "path": ref.display,
        "error": None,
    }
    try:
        log = open_log(ref)
    except DshctlError as exc:
        row["error"] = exc.message
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
        decode = msgspec.json.decode
        for _, line in log.body_lines():
            if _TITLE_MARK in line:
                try:
                    obj = decode(line)
                except msgspec.DecodeError:
                    continue
                if isinstance(obj, dict) and obj.get("type") == "session/title":
                    data = obj.get("data")
                    if isinstance(data, dict) and isinstance(data.get("title"), str):
                        row["title"] = data["title"]
    except DshctlError as exc:
        row["error"] = exc.message
    finally:
        log.close()
    return row


def iter_session_rows(root: str | None, *, color: bool = True) -> Iterator[dict[str, Any]]:
    """The rows of a named ROOT, which must hold a session; without ROOT, of the default sessions root,
    where none (the root empty or missing) is an answer: no sessions yet. One row per session, in path
    order; many sessions are read in worker processes (``color``: of their progress bar)."""
    from .many import map_logs
    from .source import resolve_named

    refs = resolve_named(root) if root is not None else _default_root_logs()
    for _, row in map_logs(session_row, refs, label="listing", color=color):
        yield row


def _default_root_logs() -> list:
    import os

    from .output import warn
    from .source import resolve, sessions_root

    root = sessions_root()
    if not os.path.lexists(root):
        warn(f"{root}: no sessions root (dsh has not written a session here yet)")
        return []
    return resolve(str(root))


_TABLE_COLUMNS = [("id", "left"), ("cwd", "left"), ("created", "left"), ("gen", "right"), ("zstd", "left"), ("size", "right"), ("title", "left")]


def _table_cells(row: dict[str, Any]) -> list[Any]:
    """A listing row as the table shows it."""
    return [
        row["id"] or row["path"],
        row["cwd"],
        row["created"],
        f"v{row['generation']}" if row["generation"] is not None else "",
        "yes" if row["compression"] == "zstd" else "no" if row["compression"] else "",
        format_bytes(row["bytes"]),
        row["title"] if not row["error"] else f"(unreadable: {row['error']})",
    ]


def run_ls(root: str | None, *, output: str, color: bool = True) -> int:
    from .output import print_table, warn
    from .present import check_output, emit

    check_output(output)
    rows = list(iter_session_rows(root, color=color))
    failed = [row for row in rows if row["error"]]
    for row in failed:
        warn(f"{row['path']}: {row['error']}")
    emit(
        output,
        document=lambda: {"sessions": rows},
        records=lambda: rows,
        table=lambda: print_table(
            None, _TABLE_COLUMNS, (_table_cells(row) for row in rows), caption=f"{len(rows)} session(s)", color=color
        ),
    )
    if failed and len(failed) == len(rows) == 1:
        return EXIT_UNREADABLE  # the one log asked for cannot be read, as for the other commands
    return EXIT_FINDINGS if failed else EXIT_OK
