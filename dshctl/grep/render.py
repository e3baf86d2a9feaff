"""``dshctl grep``'s lines, laid out as ripgrep lays them out.

A hit is ``ID:TURN:STEP:KIND:LINE`` — the session's short id, the turn and step (``-`` when the event
has none), the kind of text, then the line of the block that holds the match. A match spanning lines
prints each of them so. ``-C N`` adds the lines around it inside its block with ``-`` after the kind
instead of ``:``, and ``--`` between hits. ``-l`` prints each log's path, ``-c`` ``PATH:COUNT``.

Every log string goes through :func:`dshctl.textsafe.visible_line` (control characters as pictures, one
character each, so match offsets still hold); rich markup in a log means nothing here, nothing is
parsed. Colour (ripgrep's: id magenta, turn and step green, the match bold red) only when asked for.
"""

from __future__ import annotations

import sys
from typing import Iterable

from ..textsafe import visible_line
from .search import Hit, LogGrep

_MAGENTA, _GREEN, _CYAN, _MATCH, _RESET = "\x1b[35m", "\x1b[32m", "\x1b[36m", "\x1b[1;31m", "\x1b[0m"


def write_lines(results: Iterable[LogGrep], *, mode: str, context: int, color: bool) -> None:
    """Write each result as it comes: its hits, its path (``files``) or its count (``counts``)."""
    out = sys.stdout
    first = True
    for result in results:
        if mode == "files":
            if result.count:
                out.write(visible_line(result.path) + "\n")
        elif mode == "counts":
            if result.count:
                out.write(f"{visible_line(result.path)}:{result.count}\n")
        else:
            for hit in result.hits:
                if context and not first:
                    out.write("--\n")
                first = False
                out.write(hit_lines(hit, color))


def hit_lines(hit: Hit, color: bool) -> str:
    """One hit as lines: its context before, the line(s) holding the match, its context after."""
    lines = [_line(hit, text, "-", color) for text in hit.before or ()]
    start, end = hit.match
    offset = 0
    for text in hit.text.split("\n"):
        lo, hi = max(start - offset, 0), min(end - offset, len(text))
        lines.append(_line(hit, text, ":", color, (lo, hi) if lo <= hi else None))
        offset += len(text) + 1
    lines.extend(_line(hit, text, "-", color) for text in hit.after or ())
    return "".join(line + "\n" for line in lines)


def _line(hit: Hit, text: str, separator: str, color: bool, match: tuple[int, int] | None = None) -> str:
    fields = [short_id(hit.id, hit.path), _place(hit.turn), _place(hit.step), hit.kind]
    if color:
        fields = [_paint(fields[0], _MAGENTA), _paint(fields[1], _GREEN), _paint(fields[2], _GREEN), _paint(fields[3], _CYAN)]
    return ":".join(fields) + separator + _body(text, match, color)


def _body(text: str, match: tuple[int, int] | None, color: bool) -> str:
    if not color or match is None or match[0] == match[1]:
        return visible_line(text)
    start, end = match
    return visible_line(text[:start]) + _paint(visible_line(text[start:end]), _MATCH) + visible_line(text[end:])


def _paint(text: str, style: str) -> str:
    return f"{style}{text}{_RESET}"


def _place(number: int | None) -> str:
    return "-" if number is None else str(number)


def short_id(session_id: str | None, path: str) -> str:
    """A session's id cut to 8 characters after any ``…session-`` prefix (the start of its UUID), or the
    log's path when the header has no id."""
    if not session_id:
        return visible_line(path)
    bare = session_id.rpartition("session-")[2] or session_id
    return visible_line(bare if len(bare) <= 12 else bare[:8])
