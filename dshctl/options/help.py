"""``dshctl help`` options: none (it names a command, as ``git help`` does)."""

from __future__ import annotations

from .base import Options


class HelpOptions(Options):
    """``dshctl help [COMMAND]``: what the command's ``--help`` says."""
