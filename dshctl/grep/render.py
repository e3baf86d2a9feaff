"""``dshctl grep``'s lines, laid out as ripgrep lays them out.

One output line per matching line (a line of a block that a match touches), every match on it
highlighted: ``ID:TURN:STEP:KIND:LINE`` (``-n``: ``ID:TURN:STEP:KIND:N:LINE``) — the session's short id, the turn and step (``-`` when the event
has none), the kind of text, then the line; with more than one log, the log's path first (copies of a
session across generations share its id) — or, on a terminal (``--heading``), once as a heading above
the log's lines, as ripgrep lays them out there. ``-C N`` adds the lines around inside the block, with ``-``
after the kind instead of ``:``; runs that touch are joined, ``--`` separates the others (the runs are
:class:`~.search.Group` records, made in the worker). ``-l`` prints each log's path, ``-c``
``PATH:COUNT``.

Every log string goes through :func:`dshctl.textsafe.visible_line` (control characters as pictures, one
character each, so match offsets still hold); rich markup in a log means nothing here, nothing is
parsed. Colour (ripgrep's: id magenta, turn and step green, the matches bold red) only when asked for.
"""

from __future__ import annotations

import sys
from typing import Iterable

from ..textsafe import visible_line
from .search import Group, LogGrep

_MAGENTA, _GREEN, _CYAN, _MATCH, _RESET = "\x1b[35m", "\x1b[32m", "\x1b[36m", "\x1b[1;31m", "\x1b[0m"


def write_lines(results: Iterable[LogGrep], *, mode: str, context: int, color: bool, with_path: bool, only: bool = False,
                names: "SessionIds | None" = None, numbers: bool = False, heading: bool = False) -> None:
    """Write each result as it comes: its lines, its path (``files``) or its count (``counts``); ``names``
    shows the sessions' ids (by default, each among the sessions root alone). ``heading`` (several logs,
    on a terminal): each log's path once above its lines, the path ``-l``, ``-c`` and ``--no-heading`` print
    (as ripgrep, which shows one path form everywhere), an empty line between logs, the lines as for that
    log alone — ripgrep's ``--heading``."""
    from ..progress import output_begins

    out = sys.stdout
    names = names or SessionIds()
    first = True
    headed: str | None = None  # the log whose heading was written last (a log comes in parts)
    for result in results:
        if result.count or result.groups:
            output_begins()  # a bar shown while no hit had come is erased before the first
        if mode == "files":  # ripgrep's colours: the path magenta
            if result.count:
                out.write(_path(result.path, color) + "\n")
        elif mode == "counts":
            if result.count:
                out.write(f"{_path(result.path, color)}:{result.count}\n")
        elif heading:
            for group in result.groups:
                if result.path != headed:
                    out.write(("" if headed is None else "\n") + _path(result.path, color) + "\n")
                    headed = result.path
                elif context:
                    out.write("--\n")
                out.write(group_lines(result, group, color=color, only=only, names=names, numbers=numbers))
        else:
            for group in result.groups:
                if context and not first:
                    out.write("--\n")
                first = False
                out.write(group_lines(result, group, color=color, with_path=with_path, only=only, names=names, numbers=numbers))


def group_lines(result: LogGrep, group: Group, *, color: bool, with_path: bool = False, only: bool = False,
                names: "SessionIds | None" = None, numbers: bool = False) -> str:
    """A run of lines of one block: ``:`` after the kind on a line holding matches, ``-`` on context;
    ``only`` (``-o``): each match of a line on a line of its own, the context lines as they are;
    ``numbers`` (``-n``): the line's number in the block after the kind, followed by the same mark
    (``KIND:3:LINE``, context ``KIND-4-LINE``, as ripgrep numbers lines)."""
    prefix = _prefix(result, group, color, with_path, names or SessionIds())

    def lead(line, mark: str) -> str:
        if not numbers:
            return prefix + mark
        number = _paint(str(line.number), _GREEN) if color else str(line.number)
        return f"{prefix}{mark}{number}{mark}"

    out = []
    for line in group.lines:
        if line.spans is None:
            out.append(lead(line, "-") + _body(line.text, (), color) + "\n")
        elif only:
            out += [lead(line, ":") + _body(line.text[start:end], ((0, end - start),), color) + "\n"
                    for start, end in line.spans if end > start]
        else:
            out.append(lead(line, ":") + _body(line.text, line.spans, color) + "\n")
    return "".join(out)


def _prefix(result: LogGrep, group: Group, color: bool, with_path: bool, names: SessionIds) -> str:
    fields = [names(result.id) if result.id else visible_line(result.path), _place(group.turn), _place(group.step), group.kind]
    if color:
        fields = [_paint(fields[0], _MAGENTA), _paint(fields[1], _GREEN), _paint(fields[2], _GREEN), _paint(fields[3], _CYAN)]
    if with_path:
        fields.insert(0, _paint(visible_line(result.path), _MAGENTA) if color else visible_line(result.path))
    return ":".join(fields)


def _path(path: str, color: bool) -> str:
    shown = visible_line(path)
    return _paint(shown, _MAGENTA) if color else shown


def _body(text: str, spans: Iterable[tuple[int, int]], color: bool) -> str:
    if not color:
        return visible_line(text)
    parts, done = [], 0
    for start, end in spans:
        if start == end:
            continue
        parts += [visible_line(text[done:start]), _paint(visible_line(text[start:end]), _MATCH)]
        done = end
    return "".join(parts) + visible_line(text[done:])


def _paint(text: str, style: str) -> str:
    return f"{style}{text}{_RESET}"


def _place(number: int | None) -> str:
    return "-" if number is None else str(number)


class SessionIds:
    """The ids grep's lines show: each session's short id among ``ids`` (the sessions the run reads) and
    the sessions root, by the tables' rule (:func:`dshctl.source.shown_ids`), so that two sessions of one
    output never share one and a session of the sessions root opens when it is given back as a PATH. An id
    not among ``ids`` (a log on standard input, a header whose id its directory does not name) joins them
    when it is first shown."""

    def __init__(self, ids: Iterable[str | None] = ()):
        self._ids = list(dict.fromkeys(i for i in ids if isinstance(i, str) and i))
        self._shown: dict[str, str] | None = None

    def __call__(self, session_id: str) -> str:
        shown = self._shown
        if shown is None or session_id not in shown:
            if session_id not in self._ids:
                self._ids.append(session_id)
            from ..source import shown_ids

            self._shown = shown = shown_ids(self._ids)
        return visible_line(shown[session_id])
