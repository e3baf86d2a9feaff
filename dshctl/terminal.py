"""What the process's streams and environment say: whether to colour (``--color auto|always|never``
against ``NO_COLOR``, ``FORCE_COLOR``, ``CLICOLOR_FORCE`` and the stream: one rule for every command, its
answer handed down as a parameter, never as state), whether a stream is a terminal or standard output a
pipe, and the width tables fit. A module of its own, below the stdio and error path, so that the options
and the progress bar can ask without importing it."""

from __future__ import annotations

import os
import sys
from typing import Any


def color_wanted(when: str | bool = "auto", stream: Any = None) -> bool:
    """Whether to write ``stream`` (default: standard output) in colour, for ``--color`` ``when``:

    * ``always`` / ``never`` — as said (a flag beats every environment variable);
    * ``auto`` — never when ``NO_COLOR`` is set (to anything but the empty string); else always when
      ``FORCE_COLOR`` or ``CLICOLOR_FORCE`` is set (to anything but the empty string or ``0``); else
      when ``stream`` is a terminal that can draw colour: not ``TERM=dumb`` (nor ``unknown``), as git
      and ripgrep decide.

    A bool is the older form: True for ``auto``, False for ``never``."""
    if isinstance(when, bool):
        when = "auto" if when else "never"
    if when == "never":
        return False
    if when == "always":
        return True
    if os.environ.get("NO_COLOR"):
        return False
    if any(os.environ.get(name, "") not in ("", "0") for name in ("FORCE_COLOR", "CLICOLOR_FORCE")):
        return True
    return is_terminal(stream) and not dumb_terminal()


def dumb_terminal() -> bool:
    """Whether ``TERM`` names a terminal without colour (``dumb``, or ``unknown``)."""
    return os.environ.get("TERM", "").lower() in ("dumb", "unknown")


def color_in_file(when: str = "auto") -> bool:
    """Whether a file made for a terminal (a cast) is coloured: unless ``--color never``, or ``auto``
    with ``NO_COLOR`` set — whatever standard output is."""
    return when == "always" or (when == "auto" and not os.environ.get("NO_COLOR"))


def is_terminal(stream: Any = None) -> bool:
    """Whether ``stream`` (default: standard output) is a terminal; a closed or missing one is not."""
    stream = sys.stdout if stream is None else stream
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):  # AttributeError: None, when started without the stream
        return False


def stdout_is_pipe() -> bool:
    """Whether standard output is a pipe or a socket (another program reads it), not a file or a terminal."""
    import stat

    try:
        mode = os.fstat(sys.stdout.fileno()).st_mode
    except (AttributeError, OSError, ValueError):
        return True  # no descriptor of its own (a test runner's capture): a reader like a pipe's
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


DEFAULT_SIZE = (80, 25)
"""The columns and lines of a terminal that reports none (``script``'s pseudo-terminal says 0 × 0), as
``COLUMNS=0`` gets: what rich and ``stty`` assume."""


def terminal_width(stream=None) -> int | None:
    """The width tables fit, the one home of it (tables, the player, the transcript ask here, and rich
    draws at what it says): ``COLUMNS`` when set (and not 0), else the terminal's (80 when it reports 0
    columns); ``None`` for a pipe or file, where a table never wraps a row (one row per line, whatever
    its length). ``TERM`` plays no part: a dumb terminal is as wide as it says."""
    stream = sys.stdout if stream is None else stream
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        if not stream.isatty():
            return None
        return os.get_terminal_size(stream.fileno()).columns or DEFAULT_SIZE[0]
    except (AttributeError, OSError, ValueError):
        return None


def terminal_lines(stream=None) -> int:
    """The terminal's height: ``LINES`` when set (and not 0), else the terminal's, else 25."""
    stream = sys.stdout if stream is None else stream
    lines = os.environ.get("LINES", "")
    if lines.isdigit() and int(lines) > 0:
        return int(lines)
    try:
        return os.get_terminal_size(stream.fileno()).lines or DEFAULT_SIZE[1]
    except (AttributeError, OSError, ValueError):
        return DEFAULT_SIZE[1]


def terminal_size(stream=None) -> tuple[int, int]:
    """The columns and lines a full-screen view (the player) draws: as :func:`terminal_width` says,
    80 × 25 for what reports nothing."""
    return terminal_width(stream) or DEFAULT_SIZE[0], terminal_lines(stream)
