"""``dshctl ls`` options."""

from __future__ import annotations

from .base import COLOR, JSON, NDJSON, NO_CACHE, NO_COLOR, PLAIN, QUIET, SINCE, TSV, UNTIL, VERBOSE, Options, option

SORTS = ("time", "created", "size", "title")


class LsOptions(Options):
    """``dshctl ls``: which sessions, in which order, in which form."""

    json: bool = JSON
    ndjson: bool = NDJSON.with_help("One JSON object per session.")
    plain: bool = PLAIN
    tsv: bool = TSV
    sort: str = option(
        "time", "--sort", choices=SORTS, help="Order: time (last written, newest last, like ls -tr), created, size or title."
    )
    since: str | int | None = SINCE
    until: str | int | None = UNTIL
    project: str | None = option(
        None,
        "--project",
        metavar="DIR",
        help="Only the sessions of project DIR ('.' is the current directory), as dsh groups them: stored under "
        "DIR's project directory; default: all.",
    )
    full_ids: bool = option(
        False, "-l", "--long", "--full-ids", help="Whole session ids, titles and cwds (the table shows the shortest unique id prefix)."
    )
    verbose: bool = VERBOSE
    no_cache: bool = NO_CACHE.with_help("Read every log: neither use nor update the cache of listing rows.")
    color: str = COLOR
    no_color: bool = NO_COLOR
    quiet: bool = QUIET
