"""``dshctl help`` options: the global ones only (it names a command, as ``git help`` does)."""

from __future__ import annotations

from .base import COLOR, NO_COLOR, Options


class HelpOptions(Options):
    """``dshctl help [COMMAND]``: what the command's ``--help`` says. It takes ``--color`` and
    ``--no-color`` as every command does (the man page promises them everywhere); help text, like
    ``COMMAND --help``'s, is plain whatever they say."""

    color: str = COLOR
    no_color: bool = NO_COLOR
